/* naming: the sampler's stacks as named frames (output/frames.h). */
#ifndef CPROF_RUN_NAMING_H
#define CPROF_RUN_NAMING_H

#include "output/frames.h"
#include "run/options.h"
#include "sample/sampler.h"

/* Names the stacks S sampled, each address space's against its own
 * modules (and O's --debug-dir); NULL after printing an error. */
struct frames *naming__stacks(const struct sampler *s, const struct options *o);

#endif
