/* follow: where the next process to profile comes from, for a service
 * followed across its restarts: --pid-file FILE (the PID it names, see
 * run/pidfile.h), --cgroup PATH or --unit NAME (the cgroup's main
 * process, see run/cgroup.h).  The run (run/run.c) asks for a PID at the
 * start and again each time the process it samples has exited; the rules
 * of what is taken are the source's own.
 *
 * Each ask is cheap (a stat, and a read when the file changed; or one
 * cgroup.procs and a /proc/PID/stat a process): the run asks every 200 ms
 * while it waits. */
#ifndef CPROF_RUN_FOLLOW_H
#define CPROF_RUN_FOLLOW_H

#include <stddef.h>
#include <sys/types.h>

struct options;
struct follow;

/* At the start, from the options (before anything is attached): 0 and
 * *PID (0 when there is nothing to follow yet: a PID file not written yet,
 * a unit not running, an empty cgroup: the run waits for it), or -EINVAL
 * with ERR saying why it never can (a directory or a FIFO for a PID file,
 * an unreadable one, no such cgroup or unit, a process never followed).
 * *PID stays 0 without --pid-file, --cgroup or --unit. */
int follow__check(const struct options *o, pid_t *pid, char *err, size_t errlen);

/* The source the options name, or NULL without --pid-file, --cgroup and
 * --unit. */
struct follow *follow__new(const struct options *o);
void follow__free(struct follow *f);

/* A process to profile now other than OLD (a process that has exited;
 * 0 at the start): 0 and *PID, or -EAGAIN (none yet: ask again later). */
int follow__next(struct follow *f, pid_t old, pid_t *pid);

/* What is followed, for messages: "/run/redis.pid", "cgroup PATH", "unit
 * NAME.service". */
const char *follow__what(const struct follow *f);

/* The line that says the run waits at its start ("waiting for /run/x.pid
 * to be written", ...), without "cprof-attach: ". */
const char *follow__waiting(const struct follow *f);

#endif
