#include "attach/proc.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "util/text.h"

#define PROC_PID_INIT_INO "4026531836"  /* the initial PID namespace (linux/proc_ns.h) */

/* The comm field may hold spaces and parentheses: parse from the last ')'. */
int proc__parse_stat(const char *buf, struct proc_stat *st)
{
	const char *p = strrchr(buf, ')');
	int ppid;
	if (!p || sscanf(p + 2, "%c %d %*d %*d %*d %*d %lu", &st->state, &ppid, &st->flags) != 3)
		return -EIO;
	st->ppid = (pid_t)ppid;
	return 0;
}

/* /proc/ID/stat into BUF (a string); 0, or a negative errno. */
static int read_stat(pid_t id, char *buf, size_t len)
{
	char fn[64];
	snprintf(fn, sizeof(fn), "/proc/%d/stat", (int)id);
	int fd = open(fn, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	ssize_t n = read(fd, buf, len - 1);
	close(fd);
	if (n <= 0)
		return n < 0 && errno == ESRCH ? -ENOENT : -EIO;
	buf[n] = '\0';
	return 0;
}

int proc__stat(pid_t id, struct proc_stat *st)
{
	char buf[1024];
	int e = read_stat(id, buf, sizeof(buf));
	return e < 0 ? e : proc__parse_stat(buf, st);
}

int proc__cpu_ticks(pid_t id, unsigned long long *ticks)
{
	char buf[1024];
	int e = read_stat(id, buf, sizeof(buf));
	if (e < 0)
		return e;
	const char *p = strrchr(buf, ')');
	unsigned long long ut, st;
	if (!p || sscanf(p + 2, "%*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %llu %llu", &ut, &st) != 2)
		return -EIO;
	*ticks = ut + st;
	return 0;
}

long proc__status_field(pid_t id, const char *key)
{
	char fn[64], line[256];
	long v = -1;
	size_t klen = strlen(key);
	snprintf(fn, sizeof(fn), "/proc/%d/status", (int)id);
	FILE *f = fopen(fn, "re");
	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f)) {
		if (strncmp(line, key, klen) == 0 && line[klen] == ':') {
			v = strtol(line + klen + 1, NULL, 10);
			break;
		}
	}
	fclose(f);
	return v;
}

void proc__comm(pid_t pid, pid_t tid, char name[16])
{
	char fn[64], raw[32];
	snprintf(fn, sizeof(fn), "/proc/%d/task/%d/comm", (int)pid, (int)tid);
	int fd = open(fn, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return;
	ssize_t n = read(fd, raw, sizeof(raw));
	close(fd);
	if (n <= 0)
		return;
	if (raw[n - 1] == '\n')
		n--;
	/* Any bytes the target chose (a newline too), cut to 15 by the
	 * kernel, maybe inside a character: made safe to show here, once, for
	 * every writer and for --threads-matching. */
	text__clean(name, 16, raw, (size_t)n);
}

void proc__title(pid_t pid, char *title, size_t size)
{
	char fn[64], raw[512];
	title[0] = '\0';
	snprintf(fn, sizeof(fn), "/proc/%d/cmdline", (int)pid);
	int fd = open(fn, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return;
	ssize_t n = read(fd, raw, sizeof(raw) - 1);
	close(fd);
	if (n <= 0)
		return;
	raw[n] = '\0';
	/* argv[0] as exec'd holds no space; a title written over the
	 * arguments does ("nginx: master process /usr/sbin/nginx", "postgres:
	 * walwriter ", "/usr/bin/redis-server 127.0.0.1:6379"). */
	size_t len = strlen(raw);
	while (len && raw[len - 1] == ' ')
		len--;
	const char *sp = memchr(raw, ' ', len);
	if (!sp || sp == raw)
		return;
	const char *start = raw;
	for (const char *c = raw; c < sp; c++)
		if (*c == '/')
			start = c + 1;
	if (start == sp)
		return;
	text__clean(title, size, start, len - (size_t)(start - raw));
}

ssize_t proc__task_file(pid_t pid, pid_t tid, const char *name, int *fd, int keep_below,
			char *buf, size_t size)
{
	int tmp = -1;
	if (*fd < 0) {
		char fn[96];
		snprintf(fn, sizeof(fn), "/proc/%d/task/%d/%s", (int)pid, (int)tid, name);
		tmp = open(fn, O_RDONLY | O_CLOEXEC);
		if (tmp < 0)
			return -1;
		if (tmp < keep_below)
			*fd = tmp, tmp = -1;
	}
	ssize_t n = pread(*fd >= 0 ? *fd : tmp, buf, size - 1, 0);
	int e = errno;
	if (tmp >= 0)
		close(tmp);
	if (n < 0) {
		errno = e;
		return -1;
	}
	buf[n] = '\0';
	return n;
}

int proc__parse_syscall(const char *line, uint64_t *sp, uint64_t *pc)
{
	if (strncmp(line, "running", 7) == 0)
		return 0;
	size_t len = strcspn(line, "\n");
	const char *last = NULL, *prev = NULL;
	for (size_t i = 0; i < len; i++) {
		if (line[i] == ' ') {
			prev = last;
			last = line + i;
		}
	}
	if (!last || !prev)
		return -1;
	*sp = strtoull(prev + 1, NULL, 16);
	*pc = strtoull(last + 1, NULL, 16);
	return *sp && *pc ? 1 : -1;
}

int proc__parse_syscall_args(const char *line, long *nr, uint64_t args[6])
{
	char *end;
	if (strncmp(line, "running", 7) == 0)
		return -1;
	errno = 0;
	*nr = strtol(line, &end, 10);
	if (errno || end == line)
		return -1;
	for (int i = 0; i < 6; i++) {
		const char *p = end;
		args[i] = strtoull(p, &end, 16);
		if (end == p)
			return -1;
	}
	return 0;
}

double proc__exec_start_ms(pid_t pid, pid_t tid)
{
	char fn[96], line[256];
	double v = -1;
	snprintf(fn, sizeof(fn), "/proc/%d/task/%d/sched", (int)pid, (int)tid);
	FILE *f = fopen(fn, "re");
	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f)) {
		if (strncmp(line, "se.exec_start", 13) == 0) {
			const char *colon = strchr(line, ':');
			v = colon ? strtod(colon + 1, NULL) : -1;
			break;
		}
	}
	fclose(f);
	return v;
}

int proc__kernel_stack(pid_t pid, pid_t tid, char names[][64], int max)
{
	char fn[96], buf[4096];
	snprintf(fn, sizeof(fn), "/proc/%d/task/%d/stack", (int)pid, (int)tid);
	int fd = open(fn, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	ssize_t n = read(fd, buf, sizeof(buf) - 1);
	int e = errno;
	close(fd);
	if (n < 0)
		return -e;
	buf[n] = '\0';
	int k = 0;
	/* "[<0>] do_epoll_wait+0x548/0x5a0" a line */
	for (char *line = buf, *next; *line && k < max; line = next) {
		next = strchr(line, '\n');
		next = next ? next + 1 : line + strlen(line);
		char *name = strchr(line, ']');
		if (!name || name[1] != ' ')
			continue;
		name += 2;
		size_t len = strcspn(name, "+\n");
		if (!len)
			continue;
		if (len > 63)
			len = 63;
		memcpy(names[k], name, len);
		names[k++][len] = '\0';
	}
	return k;
}

/* Parsed by hand: it is read for every thread at every check, and
 * sscanf's generality cost more than the read itself. */
int proc__parse_schedstat(const char *buf, uint64_t *cpu_ns, uint64_t *runs)
{
	char *end;
	*cpu_ns = strtoull(buf, &end, 10);
	if (end == buf || *end != ' ')
		return -EIO;
	const char *p = end + 1;
	strtoull(p, &end, 10);          /* time spent waiting on a runqueue */
	if (end == p || *end != ' ')
		return -EIO;
	p = end + 1;
	*runs = strtoull(p, &end, 10);
	return end == p ? -EIO : 0;
}

int proc__ptrace_scope(void)
{
	int v = 0;
	FILE *f = fopen("/proc/sys/kernel/yama/ptrace_scope", "re");
	if (f) {
		if (fscanf(f, "%d", &v) != 1)
			v = 0;
		fclose(f);
	}
	return v;
}

int proc__perf_paranoid(void)
{
	int v = 2;
	FILE *f = fopen("/proc/sys/kernel/perf_event_paranoid", "re");
	if (f) {
		if (fscanf(f, "%d", &v) != 1)
			v = 2;
		fclose(f);
	}
	return v;
}

/* Seccomp: in /proc/self/status (0 none, 1 strict, 2 filter; -1 unknown). */
static int seccomp_mode(void)
{
	int v = -1;
	char line[256];
	FILE *f = fopen("/proc/self/status", "re");
	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "Seccomp: %d", &v) == 1)
			break;
	fclose(f);
	return v;
}

const char *proc__perf_refusal(int err, char *buf, size_t size)
{
	if (seccomp_mode() == 2)
		snprintf(buf, size, "%s: this process runs under a seccomp filter, as in a "
			 "container", strerror(err));
	else
		snprintf(buf, size, "%s: kernel.perf_event_paranoid is %d, which needs root or "
			 "CAP_PERFMON", strerror(err), proc__perf_paranoid());
	return buf;
}

int proc__in_initial_pid_ns(void)
{
	char link[64];
	ssize_t n = readlink("/proc/self/ns/pid", link, sizeof(link) - 1);
	if (n <= 0)
		return 0;
	link[n] = '\0';
	return strcmp(link, "pid:[" PROC_PID_INIT_INO "]") == 0;
}

/* ---- kernel symbols ----------------------------------------------------------
 * /proc/kallsyms, read once (its text symbols, sorted): root sees the
 * addresses, others zeros (kptr_restrict), and then nothing is named. */
struct ksym {
	uint64_t addr;
	uint32_t name;                  /* offset in names */
};
static struct ksym *ksyms;
static size_t nksyms;
static char *knames;
static int kloaded;

static int ksym_cmp(const void *a, const void *b)
{
	const struct ksym *x = a, *y = b;
	return x->addr < y->addr ? -1 : x->addr > y->addr;
}

static void load_kallsyms(void)
{
	size_t cap = 0, ncap = 0, nlen = 0;
	char line[512];
	FILE *f = fopen("/proc/kallsyms", "re");
	kloaded = 1;
	while (f && fgets(line, sizeof(line), f)) {
		unsigned long long a;
		char type, name[256];
		if (sscanf(line, "%llx %c %255s", &a, &type, name) != 3 || a == 0 ||
		    (type != 't' && type != 'T'))
			continue;
		size_t len = strlen(name) + 1;
		if (nksyms == cap) {
			cap = cap ? cap * 2 : 65536;
			ksyms = realloc(ksyms, cap * sizeof(*ksyms));
		}
		if (nlen + len > ncap) {
			ncap = ncap ? ncap * 2 : 1 << 20;
			knames = realloc(knames, ncap);
		}
		if (!ksyms || !knames)
			abort();
		memcpy(knames + nlen, name, len);
		ksyms[nksyms].addr = a;
		ksyms[nksyms++].name = (uint32_t)nlen;
		nlen += len;
	}
	if (f)
		fclose(f);
	qsort(ksyms, nksyms, sizeof(*ksyms), ksym_cmp);
}

int proc__kernel_symbol(uint64_t addr, char *name, size_t size)
{
	if (!kloaded)
		load_kallsyms();
	size_t lo = 0, hi = nksyms;
	while (lo < hi) {               /* the last symbol at or below ADDR */
		size_t mid = lo + (hi - lo) / 2;
		if (ksyms[mid].addr <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo == 0)
		return -ENOENT;
	snprintf(name, size, "%s", knames + ksyms[lo - 1].name);
	return 0;
}
