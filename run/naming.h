/* naming: the sampler's stacks as named frames (output/frames.h). */
#ifndef CPROF_RUN_NAMING_H
#define CPROF_RUN_NAMING_H

#include "output/frames.h"
#include "run/options.h"
#include "sample/sampler.h"

/* Names the stacks S sampled, each address space's against its own
 * modules (and O's --debug-dir); NULL after printing an error. */
struct frames *naming__stacks(const struct sampler *s, const struct options *o);

/* The sampler's address spaces as they are now, for naming stacks while
 * it goes on sampling (run/periods.c): each space's table copied
 * (modules__snapshot) with the sampler paused.  A copy is kept while its
 * space does not change, so names (output/frames.h) keep what they
 * learnt of it; a space that changed is copied anew, with a new version,
 * so its symbolizer is made again.  The loop that pauses the sampler
 * keeps the latest copies (naming_spaces); each naming holds the copies
 * of its pause (a naming_set) until it is done, on its own thread. */
struct naming_spaces;
struct naming_set;
struct naming_spaces *naming__spaces_new(void);
void naming__spaces_free(struct naming_spaces *ns);     /* accepts NULL */
/* With the sampler paused: the copies now, held until naming__set_put. */
struct naming_set *naming__spaces_take(struct naming_spaces *ns, const struct sampler *s);
/* Space SPACE's table is gone (names__forget): its copy is let go. */
void naming__spaces_forget(struct naming_spaces *ns, uint32_t space);
/* The copies of SET (NULL for a space that is gone), *N of them. */
const struct modules *const *naming__set_spaces(const struct naming_set *set, size_t *n);
void naming__set_put(struct naming_set *set);           /* any thread; accepts NULL */

#endif
