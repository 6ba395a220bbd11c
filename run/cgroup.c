/* cgroup: the main process of a cgroup (see run/cgroup.h). */
#include "run/cgroup.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/vfs.h>
#include <unistd.h>

#ifndef CGROUP_SUPER_MAGIC
#define CGROUP_SUPER_MAGIC 0x27e0eb
#endif
#ifndef CGROUP2_SUPER_MAGIC
#define CGROUP2_SUPER_MAGIC 0x63677270
#endif

#define WALK_DEPTH 8            /* directories below a cgroup (or a hierarchy's root) */
#define WALK_DIRS 8192          /* directories looked at in one walk */
#define MAX_ROOTS 4             /* hierarchies looked in for a unit */

int cgroup__check(const char *path, char *err, size_t errlen)
{
	struct statfs sf;
	struct stat st;
	if (stat(path, &st) < 0) {
		snprintf(err, errlen, "--cgroup %s: no such cgroup (%s)", path, strerror(errno));
		return -ENOENT;
	}
	if (!S_ISDIR(st.st_mode) || statfs(path, &sf) < 0 ||
	    (sf.f_type != CGROUP_SUPER_MAGIC && sf.f_type != CGROUP2_SUPER_MAGIC)) {
		snprintf(err, errlen, "--cgroup %s: not a cgroup (a directory of a cgroup file "
			 "system, such as /sys/fs/cgroup/system.slice/NAME.service)", path);
		return -EINVAL;
	}
	return 0;
}

static int ends_with(const char *s, const char *end)
{
	size_t n = strlen(s), m = strlen(end);
	return n >= m && strcmp(s + n - m, end) == 0;
}

int cgroup__unit_name(const char *name, char *unit, size_t len, char *err, size_t errlen)
{
	/* systemd's unit name characters (unit-name.c: VALID_CHARS, "@") */
	size_t n = strlen(name);
	int ok = n > 0 && n < 240 && name[0] != '.' && name[0] != '@';
	for (size_t i = 0; ok && i < n; i++)
		ok = strchr("0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ:-_.\\@",
			    name[i]) != NULL;
	if (!ok) {
		snprintf(err, errlen, "--unit needs a systemd unit's name (NAME or NAME.service: "
			 "letters, digits, : - _ . \\ @), not '%.200s'", name);
		return -EINVAL;
	}
	int typed = ends_with(name, ".service") || ends_with(name, ".scope");
	snprintf(unit, len, "%s%s", name, typed ? "" : ".service");
	return 0;
}

/* /proc/self/mountinfo's cgroup hierarchies where units are: cgroup2,
 * then v1's name=systemd.  Returns how many (at most MAX). */
static int hierarchies(char roots[][256], int max)
{
	FILE *f = fopen("/proc/self/mountinfo", "re");
	char line[2048];
	char v1[MAX_ROOTS][256];
	int n = 0, n1 = 0;
	while (f && fgets(line, sizeof(line), f)) {
		/* ID PARENT MAJ:MIN ROOT MOUNTPOINT OPTS [TAGS] - FSTYPE SOURCE SUPEROPTS */
		char mnt[256], fstype[32], super[512] = "";
		const char *dash = strstr(line, " - ");
		if (!dash || sscanf(line, "%*s %*s %*s %*s %255s", mnt) != 1 ||
		    sscanf(dash + 3, "%31s %*s %511s", fstype, super) < 1)
			continue;
		/* a mount point's spaces and the like are octal escapes (\040) */
		char *w = mnt;
		for (const char *r = mnt; *r; ) {
			unsigned c;
			if (r[0] == '\\' && sscanf(r + 1, "%3o", &c) == 1 && strlen(r) >= 4) {
				*w++ = (char)c;
				r += 4;
			} else {
				*w++ = *r++;
			}
		}
		*w = '\0';
		if (!strcmp(fstype, "cgroup2") && n < max)
			snprintf(roots[n++], 256, "%s", mnt);
		else if (!strcmp(fstype, "cgroup") && strstr(super, "name=systemd") && n1 < MAX_ROOTS)
			snprintf(v1[n1++], 256, "%s", mnt);
	}
	if (f)
		fclose(f);
	for (int i = 0; i < n1 && n < max; i++)
		memcpy(roots[n++], v1[i], 256);
	return n;
}

/* A directory named NAME under DIR, at most DEPTH levels down (a bounded
 * walk: *BUDGET directories in all).  1 and its path in OUT, or 0. */
static int find_dir(const char *dir, const char *name, int depth, int *budget, char *out,
		    size_t len)
{
	if (depth < 0 || --*budget < 0)
		return 0;
	DIR *d = opendir(dir);
	if (!d)
		return 0;
	struct dirent *e;
	char sub[4096];
	int found = 0;
	/* this level first: system.slice/NAME before a deeper one of the name */
	while (!found && (e = readdir(d))) {
		if (e->d_type == DT_DIR && !strcmp(e->d_name, name) &&
		    snprintf(out, len, "%s/%s", dir, name) < (int)len)
			found = 1;
	}
	rewinddir(d);
	while (!found && (e = readdir(d))) {
		if (e->d_type != DT_DIR || e->d_name[0] == '.' ||
		    snprintf(sub, sizeof(sub), "%s/%s", dir, e->d_name) >= (int)sizeof(sub))
			continue;
		found = find_dir(sub, name, depth - 1, budget, out, len);
	}
	closedir(d);
	return found;
}

/* UNIT (or its template, foo@.service for foo@bar.service) has a unit
 * file where systemd looks for them. */
static int unit_file_exists(const char *unit)
{
	static const char *const dirs[] = {
		"/etc/systemd/system", "/run/systemd/system", "/run/systemd/transient",
		"/run/systemd/generator", "/run/systemd/generator.early",
		"/run/systemd/generator.late", "/usr/local/lib/systemd/system",
		"/lib/systemd/system", "/usr/lib/systemd/system",
	};
	char tmpl[256] = "";
	const char *at = strchr(unit, '@'), *dot = strrchr(unit, '.');
	if (at && dot && dot > at)
		snprintf(tmpl, sizeof(tmpl), "%.*s%s", (int)(at - unit + 1), unit, dot);
	for (size_t i = 0; i < sizeof(dirs) / sizeof(dirs[0]); i++) {
		char fn[512];
		snprintf(fn, sizeof(fn), "%s/%s", dirs[i], unit);
		if (access(fn, F_OK) == 0)
			return 1;
		snprintf(fn, sizeof(fn), "%s/%s", dirs[i], tmpl);
		if (tmpl[0] && access(fn, F_OK) == 0)
			return 1;
	}
	return 0;
}

int cgroup__unit_path(const char *unit, char *path, size_t len, char *err, size_t errlen)
{
	char roots[MAX_ROOTS][256];
	int n = hierarchies(roots, MAX_ROOTS);
	struct stat st;
	for (int i = 0; i < n; i++) {
		/* where systemd puts a system service, then anywhere (Slice=, user units) */
		if (snprintf(path, len, "%s/system.slice/%s", roots[i], unit) < (int)len &&
		    stat(path, &st) == 0 && S_ISDIR(st.st_mode))
			return 0;
	}
	for (int i = 0; i < n; i++) {
		int budget = WALK_DIRS;
		if (find_dir(roots[i], unit, WALK_DEPTH, &budget, path, len))
			return 0;
	}
	if (!n) {
		snprintf(err, errlen, "--unit %s: no cgroup hierarchy of systemd is mounted (cgroup2 "
			 "or name=systemd in /proc/self/mountinfo): give its cgroup with --cgroup", unit);
		return -ENOENT;
	}
	if (unit_file_exists(unit)) {
		snprintf(err, errlen, "--unit %s: not running (no cgroup under %s)", unit, roots[0]);
		return -EAGAIN;
	}
	snprintf(err, errlen, "--unit %s: no such unit (no unit file, no cgroup under %s%s%s)",
		 unit, roots[0], n > 1 ? " or " : "", n > 1 ? roots[1] : "");
	return -ENOENT;
}

/* What /proc/PID/stat says of PID: its state, parent and start time
 * (clock ticks since boot).  0, or -1 (no such process). */
static int proc_stat(pid_t pid, char *state, pid_t *ppid, unsigned long long *start)
{
	char fn[64], buf[1024];
	snprintf(fn, sizeof(fn), "/proc/%d/stat", (int)pid);
	int fd = open(fn, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	ssize_t n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return -1;
	buf[n] = '\0';
	char *p = strrchr(buf, ')');    /* the name may hold spaces and ')' */
	int parent = 0;
	if (!p || sscanf(p + 2, "%c %d %*d %*d %*d %*d %*u %*u %*u %*u %*u %*u %*u %*d %*d %*d "
			 "%*d %*d %*d %llu", state, &parent, start) != 3)
		return -1;
	*ppid = (pid_t)parent;
	return 0;
}

struct pidset {
	pid_t *pids;
	size_t n, cap;
};

/* Adds the PIDs of DIR/cgroup.procs and of the directories below it. */
static void read_procs(const char *dir, int depth, int *budget, struct pidset *set)
{
	if (depth < 0 || --*budget < 0)
		return;
	char fn[4096];
	if (snprintf(fn, sizeof(fn), "%s/cgroup.procs", dir) >= (int)sizeof(fn))
		return;
	FILE *f = fopen(fn, "re");
	long v;
	while (f && set->n < CGROUP_MAX_PIDS && fscanf(f, "%ld", &v) == 1) {
		if (v <= 0)
			continue;       /* 0: a process of another PID namespace */
		if (set->n == set->cap) {
			size_t cap = set->cap ? set->cap * 2 : 64;
			pid_t *p = realloc(set->pids, cap * sizeof(*p));
			if (!p)
				break;
			set->pids = p;
			set->cap = cap;
		}
		set->pids[set->n++] = (pid_t)v;
	}
	if (f)
		fclose(f);
	DIR *d = opendir(dir);
	struct dirent *e;
	while (d && (e = readdir(d))) {
		if (e->d_type != DT_DIR || e->d_name[0] == '.' ||
		    snprintf(fn, sizeof(fn), "%s/%s", dir, e->d_name) >= (int)sizeof(fn))
			continue;
		read_procs(fn, depth - 1, budget, set);
	}
	if (d)
		closedir(d);
}

static int in_set(const struct pidset *set, pid_t pid)
{
	for (size_t i = 0; i < set->n; i++)
		if (set->pids[i] == pid)
			return 1;
	return 0;
}

int cgroup__main_pid(const char *path, pid_t *pid, char *err, size_t errlen)
{
	struct pidset set = { 0 };
	int budget = WALK_DIRS;
	read_procs(path, WALK_DEPTH, &budget, &set);
	pid_t best = 0, self = getpid();
	unsigned long long best_start = 0;
	size_t never = 0;
	for (size_t i = 0; i < set.n; i++) {
		char state = 0;
		pid_t ppid = 0;
		unsigned long long start = 0;
		pid_t p = set.pids[i];
		if (proc_stat(p, &state, &ppid, &start) < 0 || state == 'Z' || state == 'X')
			continue;
		if (p == 1 || p == self || ppid == self) {
			never++;
			continue;
		}
		if (in_set(&set, ppid))
			continue;       /* a worker of a process of the cgroup */
		if (!best || start < best_start || (start == best_start && p < best)) {
			best = p;
			best_start = start;
		}
	}
	size_t n = set.n;
	free(set.pids);
	if (!best) {
		snprintf(err, errlen, "cgroup %s: %s", path,
			 never ? "holds only processes never followed (PID 1, the profiler)" :
			 n ? "holds only processes that exited" : "no process in it");
		return -ESRCH;
	}
	*pid = best;
	return 0;
}
