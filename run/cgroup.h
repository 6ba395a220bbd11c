/* cgroup: the main process of a cgroup, for --cgroup and --unit.
 *
 * A service that writes no PID file (most Type=simple and Type=notify
 * units) still has a cgroup of its own, which systemd names after it
 * (system.slice/NAME.service) and removes when it stops.  Its main process
 * is read from the cgroup's files, as `systemctl show -P MainPID` would
 * say without asking systemd (which may not be running, or not be ours to
 * ask: a container, a unit with no D-Bus):
 *
 *   - the processes are those of cgroup.procs, in the directory and the
 *     directories below it (a unit with Delegate= puts them there), at most
 *     CGROUP_MAX_PIDS of them;
 *   - of those, the main process is one whose parent is not in the cgroup
 *     (the one systemd started; its children are its workers), the oldest
 *     (by /proc's start time, then the lower PID) if several;
 *   - never a zombie (exited, not yet reaped), PID 1, the profiler or its
 *     watchdog (the profiler's child): the same rules as --pid-file.
 * When the main process exits, children of it left in the cgroup (given
 * to PID 1 or a subreaper) have their parent outside it now: the oldest is
 * the next main process, as systemd guesses a Type=forking service's
 * (GuessMainPID=): the daemon a starter forked.  Workers outlive their main
 * process only with KillMode=process or none; systemd's default kills
 * them with it.
 *
 * A cgroup is a directory of a cgroup file system: cgroup2, or any v1
 * hierarchy (/sys/fs/cgroup/systemd/..., /sys/fs/cgroup/cpu/...).  A
 * unit's is found under the mounted hierarchies (/proc/self/mountinfo):
 * cgroup2 first, then v1's name=systemd; at system.slice/NAME, else by a
 * bounded walk of each (user units, Slice=).  Every read is bounded and
 * nothing here blocks: cgroupfs and /proc files are read once each. */
#ifndef CPROF_RUN_CGROUP_H
#define CPROF_RUN_CGROUP_H

#include <stddef.h>
#include <sys/types.h>

#define CGROUP_MAX_PIDS 65536   /* processes read from one cgroup */

/* PATH names a cgroup directory: 0, or -ENOENT (no such directory),
 * -EINVAL (not a directory of a cgroup file system); ERR says which. */
int cgroup__check(const char *path, char *err, size_t errlen);

/* The unit NAME as systemd spells it: NAME, or NAME.service when NAME has
 * no unit type (.service, .scope).  0, or -EINVAL (not a unit name). */
int cgroup__unit_name(const char *name, char *unit, size_t len, char *err, size_t errlen);

/* UNIT's cgroup (its directory, in PATH): 0; -EAGAIN when the unit has a
 * unit file but no cgroup (not running now); -ENOENT when it has neither
 * (no such unit).  ERR says which. */
int cgroup__unit_path(const char *unit, char *path, size_t len, char *err, size_t errlen);

/* The main process of the cgroup at PATH (above): 0 and the PID, or
 * -ESRCH (none: the cgroup is empty or gone, or holds only processes
 * never followed); ERR says which. */
int cgroup__main_pid(const char *path, pid_t *pid, char *err, size_t errlen);

#endif
