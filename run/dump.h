/* dump: --dump, every thread's current stack once, then detach.
 *
 * Leaf first, a header per thread (name, TID, state, the system call it is
 * blocked in and for how long it has been off the CPU), frames with their
 * file:line and inlined frames.  Blocked threads are read without a stop
 * (no EINTR), running ones with one stop.  A thread blocked in futex() on
 * a glibc pthread mutex is shown waiting for the thread that owns it, and
 * owners that wait for each other in a cycle are reported as a deadlock. */
#ifndef CPROF_RUN_DUMP_H
#define CPROF_RUN_DUMP_H

#include <stdio.h>

#include "run/options.h"
#include "output/frames.h"

/* Returns the exit code: 0, or 1 after printing one line on stderr. */
int dump__run(const struct options *o);

/* The text --dump prints, of the stacks FR holds (those of a tick or a
 * little more: each thread's stack seen most), to OUT: what the HTTP
 * server's /debug/pprof/goroutine?debug=2 gives.  The threads' system
 * calls are read from /proc now.  0, or -EIO. */
int dump__text(const struct frames *fr, FILE *out);

#endif
