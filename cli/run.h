/* run: one profiling run, from the checked options to the written file
 * and the summary line.  The sampler (sample/sampler.h) owns the loop;
 * this is its front end: the output file, when to stop (signals,
 * --duration, the targets exiting), the live status line, naming and
 * writing the profile, the summary. */
#ifndef CPROF_CLI_RUN_H
#define CPROF_CLI_RUN_H

#include "cli/options.h"
#include "output/frames.h"
#include "sample/sampler.h"

/* Returns the process exit code: 0, 1 on error (after printing one line
 * on stderr), or in launch mode the command's own exit status. */
int run__profile(const struct options *o, int argc, char **argv);

/* --convert: a profile file (folded or pprof, or - for stdin) to the
 * format -o asks for.  Returns the exit code. */
int run__convert(const struct options *o);

/* Names the stacks S sampled, each address space's against its own
 * modules (and O's --debug-dir); NULL after printing an error. */
struct frames *run__name_stacks(const struct sampler *s, const struct options *o);

#endif
