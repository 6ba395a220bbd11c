/* watchdog: a stopped profiler must not stop its target.  A tracer that
 * is stopped (SIGSTOP, which cannot be caught) holds every traced thread
 * that reports a ptrace stop meanwhile: the target's signals, its new
 * threads, the threads caught mid-sample all wait.  A small process forked
 * before attaching watches the profiler; when it sees it stopped, it sends
 * it SIGUSR2 (the run ends: the profiler detaches and writes what it has)
 * and SIGCONT.  The target waits at most one watch period. */
#ifndef CPROF_CLI_WATCHDOG_H
#define CPROF_CLI_WATCHDOG_H

#include <sys/types.h>

#define WATCHDOG_PERIOD_MS 20

/* Forks the watchdog of the calling process (call it while it has only
 * one thread).  It ends when the caller does.  Returns its PID, or a
 * negative errno.  *LIFELINE is the read end of a pipe whose write end
 * only the watchdog holds: it reads end of file (poll: POLLHUP) the moment
 * the watchdog is gone, however it died. */
pid_t watchdog__start(int *lifeline);

#endif
