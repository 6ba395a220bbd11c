#include "cli/pidfile.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define BOOT_SLACK 1.5          /* seconds: btime is whole seconds, ticks 10 ms */

/* When process PID started, in seconds since the epoch, or -1. */
static double started_at(pid_t pid)
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
	/* after ") ": state is field 3; starttime is field 22 */
	if (!p || sscanf(p + 2, "%*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %*u %*u %*d %*d %*d %*d "
			 "%*d %*d %llu", &ticks) != 1)
		return -1;
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
	return btime && hz > 0 ? (double)btime + (double)ticks / (double)hz : -1;
}

int pidfile__read(const char *path, pid_t *pid, char *err, size_t errlen)
{
	struct stat st;
	char buf[64];
	FILE *f = fopen(path, "re");
	if (!f || fstat(fileno(f), &st) < 0) {
		int e = errno;
		if (f)
			fclose(f);
		snprintf(err, errlen, "--pid-file %s: %s", path, strerror(e));
		return -ENOENT;
	}
	size_t n = fread(buf, 1, sizeof(buf) - 1, f);
	fclose(f);
	buf[n] = '\0';
	char *end;
	errno = 0;
	long v = strtol(buf, &end, 10);
	while (*end == ' ' || *end == '\t' || *end == '\n' || *end == '\r')
		end++;
	if (end == buf || *end || errno || v <= 0 || v > 0x3fffffff) {
		snprintf(err, errlen, "--pid-file %s: its first line is not a PID", path);
		return -EINVAL;
	}
	double born = started_at((pid_t)v);
	double written = (double)st.st_mtim.tv_sec + (double)st.st_mtim.tv_nsec / 1e9;
	if (born < 0) {
		snprintf(err, errlen, "--pid-file %s: no process %ld", path, v);
		return -ESRCH;
	}
	if (born > written + BOOT_SLACK) {
		snprintf(err, errlen, "--pid-file %s: process %ld started after the file was written "
			 "(a PID reused by another process)", path, v);
		return -ESRCH;
	}
	*pid = (pid_t)v;
	return 0;
}
