/* namer: windows of stacks named on a thread of their own (cprof-namer),
 * in the order they were handed over, while the sampler and the loop that
 * cuts the windows go on (run/periods.c).  A window comes as copies made
 * with the sampler paused: its stacks (stacks__view) and the spaces'
 * tables (run/naming.h); nothing else the sampler changes is read.  What
 * naming learns (output/frames.h names) is the namer's, kept for the run. */
#ifndef CPROF_RUN_NAMER_H
#define CPROF_RUN_NAMER_H

#include <stddef.h>
#include <stdint.h>

#include "output/frames.h"
#include "profile/stacks.h"
#include "run/naming.h"

/* Windows waiting at most: past it namer__add waits for the namer. */
#define NAMER_QUEUE_MAX 16

/* Called on the namer's thread with a window named: FR (NULL: out of
 * memory), the caller's JOB as handed over, the CPU the naming took. */
typedef void (*namer_done)(void *arg, void *job, struct frames *fr, double cpu_ms);

struct namer;
/* NULL if its thread cannot start.  DIRS (--debug-dir) must outlive it.
 * CPROF_NAMING_DELAY_MS (for the tests) makes each naming that much
 * slower. */
struct namer *namer__new(const char *const *dirs, size_t ndirs, namer_done done, void *arg);
/* VIEW (owned from now on; NULL: out of memory) named against SET (held
 * from now on), then DONE with a copy of JOB (SIZE bytes). */
void namer__add(struct namer *n, struct stacks *view, struct naming_set *set, const void *job,
		size_t size);
/* Space SPACE is gone: what naming learnt of it is dropped, after the
 * windows handed over before. */
void namer__forget(struct namer *n, uint32_t space);
/* The longest naming so far (ms, any thread). */
double namer__longest_ms(struct namer *n);
/* Names every window handed over, then ends the thread. */
void namer__end(struct namer *n);
void namer__free(struct namer *n);              /* ends it first; accepts NULL */

#endif
