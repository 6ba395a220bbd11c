/* pidfile: the PID a service writes for itself, for --pid-file.
 *
 * The file's first line is the PID (spaces around it allowed).  A PID is
 * only taken if that process started no later than the file was last
 * written (within BOOT_SLACK: /proc's start time counts from the boot,
 * known to the second): a PID reused by another process after the service
 * exited is never taken for the service. */
#ifndef CPROF_CLI_PIDFILE_H
#define CPROF_CLI_PIDFILE_H

#include <stddef.h>
#include <sys/types.h>

/* Returns 0 and the PID, or -ENOENT (no file), -EINVAL (not a PID),
 * -ESRCH (no such process, or one that started after the file was
 * written: not the one it names); ERR says which in one line. */
int pidfile__read(const char *path, pid_t *pid, char *err, size_t errlen);

#endif
