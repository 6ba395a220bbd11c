/* watchdog: a stopped profiler must not stop its target.  A tracer that
 * is stopped (SIGSTOP, which cannot be caught) holds every traced thread
 * that reports a ptrace stop meanwhile: the target's signals, its new
 * threads, the threads caught mid-sample all wait.  A small process forked
 * before attaching watches the profiler; when it sees it stopped, it sends
 * it SIGUSR2 (the run ends: the profiler detaches and writes what it has)
 * and SIGCONT.  The target waits at most one watch period.
 *
 * A profiler can be held without a stop of its own: another tracer (a
 * debugger attached to it: state 't'), the cgroup freezer.  So the
 * sampling thread beats (watchdog__beat(), at every wakeup of its loop and
 * every 100 ms at most, parked too); when the beat has not moved for
 * WATCHDOG_STALL_MS while armed, the watchdog kills the profiler
 * (SIGKILL, which a ptrace stop does not hold): its exit detaches every
 * thread of the target (the kernel's detach), the profile of the run is
 * lost, one line on stderr says why. */
#ifndef CPROF_RUN_WATCHDOG_H
#define CPROF_RUN_WATCHDOG_H

#include <stdint.h>
#include <sys/types.h>

#define WATCHDOG_PERIOD_MS 20
#define WATCHDOG_STALL_MS 2000

/* The beat the sampling thread gives (shared with the watchdog): 0 or
 * WATCHDOG_UNARMED, not watched (not sampling, or between two runs of
 * --pid-file); anything else must change every WATCHDOG_STALL_MS. */
#define WATCHDOG_UNARMED UINT64_MAX

/* Forks the watchdog of the calling process (call it while it has only
 * one thread).  It ends when the caller does.  Returns its PID, or a
 * negative errno.  *LIFELINE is the read end of a pipe whose write end
 * only the watchdog holds: it reads end of file (poll: POLLHUP) the moment
 * the watchdog is gone, however it died. */
pid_t watchdog__start(int *lifeline);

/* The shared beat (NULL if the watchdog could not be started). */
uint64_t *watchdog__beat(void);

#endif
