#include "run/pidfile.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define BOOT_SLACK 1.5          /* seconds: btime is whole seconds, ticks 10 ms */

/* Process PID as /proc/PID/stat has it: when it started (seconds since
 * the epoch), its state letter and its parent.  0, or -1 (no process). */
static int proc_info(pid_t pid, double *born, char *state, pid_t *ppid)
{
	char fn[64], buf[1024];
	snprintf(fn, sizeof(fn), "/proc/%d/stat", (int)pid);
	FILE *f = fopen(fn, "re");
	if (!f)
		return -1;
	size_t n = fread(buf, 1, sizeof(buf) - 1, f);
	fclose(f);
	buf[n] = '\0';
	char *p = strrchr(buf, ')');    /* the name may hold spaces and ')' */
	unsigned long long ticks = 0;
	int parent = 0;
	/* after ") ": state is field 3, ppid 4; starttime is field 22 */
	if (!p || sscanf(p + 2, "%c %d %*d %*d %*d %*d %*u %*u %*u %*u %*u %*u %*u %*d %*d %*d %*d "
			 "%*d %*d %llu", state, &parent, &ticks) != 3)
		return -1;
	*ppid = (pid_t)parent;
	f = fopen("/proc/stat", "re");
	if (!f)
		return -1;
	unsigned long long btime = 0;
	char line[256];
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "btime %llu", &btime) == 1)
			break;
	fclose(f);
	long hz = sysconf(_SC_CLK_TCK);
	if (!btime || hz <= 0)
		return -1;
	*born = (double)btime + (double)ticks / (double)hz;
	return 0;
}

/* The real user of process PID, or -1. */
static long proc_uid(pid_t pid)
{
	char fn[64], line[256];
	snprintf(fn, sizeof(fn), "/proc/%d/status", (int)pid);
	FILE *f = fopen(fn, "re");
	long uid = -1;
	while (f && fgets(line, sizeof(line), f))
		if (sscanf(line, "Uid: %ld", &uid) == 1)
			break;
	if (f)
		fclose(f);
	return uid;
}

int pidfile__read(const char *path, pid_t *pid, char *err, size_t errlen)
{
	struct stat st;
	char buf[64];
	/* Never blocks: a FIFO put at the path is refused, not waited on. */
	int fd = open(path, O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
	if (fd < 0 || fstat(fd, &st) < 0) {
		int e = errno;
		if (fd >= 0)
			close(fd);
		snprintf(err, errlen, "--pid-file %s: %s", path, strerror(e));
		return e == ENOENT ? -ENOENT : -EACCES;
	}
	if (!S_ISREG(st.st_mode)) {
		close(fd);
		snprintf(err, errlen, "--pid-file %s: not a regular file (a directory, a FIFO or "
			 "a device is never read)", path);
		return -EINVAL;
	}
	ssize_t n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	buf[n > 0 ? n : 0] = '\0';
	char *end;
	errno = 0;
	long v = strtol(buf, &end, 10);
	while (*end == ' ' || *end == '\t' || *end == '\n' || *end == '\r')
		end++;
	if (end == buf || *end || errno || v <= 0 || v > 0x3fffffff) {
		snprintf(err, errlen, "--pid-file %s: its first line is not a PID", path);
		return -EINVAL;
	}
	if (v == 1) {
		snprintf(err, errlen, "--pid-file %s: names PID 1, the system's init, which is "
			 "never followed", path);
		return -EPERM;
	}
	double born = 0;
	char state = 0;
	pid_t ppid = 0;
	double written = (double)st.st_mtim.tv_sec + (double)st.st_mtim.tv_nsec / 1e9;
	if (proc_info((pid_t)v, &born, &state, &ppid) < 0) {
		snprintf(err, errlen, "--pid-file %s: no process %ld", path, v);
		return -ESRCH;
	}
	if (state == 'Z' || state == 'X') {
		snprintf(err, errlen, "--pid-file %s: process %ld has exited (its parent has not "
			 "reaped it yet)", path, v);
		return -ESRCH;
	}
	if (born > written + BOOT_SLACK) {
		snprintf(err, errlen, "--pid-file %s: process %ld started after the file was written "
			 "(a PID reused by another process)", path, v);
		return -ESRCH;
	}
	/* The profiler itself or its watchdog (its child) is never traced. */
	if (v == getpid() || ppid == getpid()) {
		snprintf(err, errlen, "--pid-file %s: names the profiler itself (%ld)", path, v);
		return -EPERM;
	}
	/* systemd's rule for PID files: one not written by root (or by the
	 * process's own user) does not name another user's process. */
	long uid = proc_uid((pid_t)v);
	if (st.st_uid != 0 && uid >= 0 && (long)st.st_uid != uid) {
		snprintf(err, errlen, "--pid-file %s: owned by uid %ld but names process %ld of uid "
			 "%ld: not trusted", path, (long)st.st_uid, v, uid);
		return -EPERM;
	}
	*pid = (pid_t)v;
	return 0;
}
