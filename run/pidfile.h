/* pidfile: the PID a service writes for itself, for --pid-file.
 *
 * The file's first line is the PID (spaces around it allowed).  A PID is
 * only taken if that process started no later than the file was last
 * written (within BOOT_SLACK: /proc's start time counts from the boot,
 * known to the second): a PID reused by another process after the service
 * exited is never taken for the service.  Nor is a process that exited
 * (a zombie not yet reaped), PID 1, the profiler or its watchdog, or,
 * from a file not owned by root, another user's process (systemd's rule);
 * the file is never waited on (a FIFO there is refused). */
#ifndef CPROF_RUN_PIDFILE_H
#define CPROF_RUN_PIDFILE_H

#include <stddef.h>
#include <sys/types.h>

/* Returns 0 and the PID, or -ENOENT (no file), -EACCES (a file that cannot
 * be opened: unreadable, a path through a file), -EINVAL (not a PID, or
 * not a regular file), -ESRCH (no such process, one that exited, or one
 * that started after the file was written: not the one it names), -EPERM
 * (a process never followed, above); ERR says which in one line. */
int pidfile__read(const char *path, pid_t *pid, char *err, size_t errlen);

#endif
