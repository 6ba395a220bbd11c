#include "attach/target.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ptrace.h>
#include <sys/resource.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "util/intern.h"
#include "util/strbuf.h"
#include "util/text.h"
#include "util/timeutil.h"

#define OPTIONS (PTRACE_O_TRACECLONE | PTRACE_O_TRACEEXEC)
#define STACK_COPY_MIN (32 * 1024)
#define STACK_COPY_MAX (1024 * 1024)
#define RED_ZONE 128
#define RELEASE_TIMEOUT_NS (200 * 1000000ull)
#define DETACH_TIMEOUT_NS (2000 * 1000000ull)
#define NAME_REFRESH_NS (1000 * 1000000ull)
#define NAME_EARLY_READS 8
/* Threads that get a label of their own in the profile.  A target that
 * keeps creating threads (one per request) would otherwise grow our memory
 * with every thread it ever had: past this many, new threads share one
 * label per thread name ("NAME", no TID). */
#define MAX_THREAD_SLOTS 4096

struct thread {
	pid_t tid;
	uint32_t slot;
	int pending;                    /* interrupted, not yet captured */
	uint32_t pending_ticks;         /* ticks since it was interrupted, this one included */
	int group_stopped;              /* in group-stop, restarted with LISTEN */
	size_t stack_size;
	uint64_t interrupt_ns;
	uint64_t name_read_ns;
	unsigned name_reads;
	int sys_fd, sched_fd, stat_fd;  /* /proc/PID/task/TID/{syscall,schedstat,stat}, or -1 */
	uint64_t cpu_ns;                /* its CPU time (schedstat) at its last capture */
	char stop_state;                /* the state its stop-capture reports */
	int selected;                   /* sampled (see target__set_filter) */
	int pooled;                     /* shares its name's slot (MAX_THREAD_SLOTS) */
	char name[16];
	struct thread *next;            /* hash chain */
};

/* What a blocked thread looks like from /proc, before and after its stack
 * is copied: if nothing changed, the copy is of the stack it is blocked on. */
struct snapshot {
	char line[256];                 /* the syscall file */
	uint64_t runs;                  /* schedstat: times it was scheduled in */
	uint64_t cpu_ns;                /* schedstat: CPU time */
	uint64_t sp, pc;
};

struct slot_info {
	pid_t tid;
	char name[16];
};

struct target {
	pid_t pid;
	int launched, ready;
	enum target_end end;
	int exit_status;
	struct thread **buckets;
	size_t nbuckets, nthreads;
	size_t npending;
	capture_fn fn;
	void *fn_arg;
	uint64_t period_ns;             /* the wall time one tick stands for */
	thread_filter_fn filter;
	void *filter_arg;
	struct slot_info *slots;
	size_t nslots, slots_cap;
	struct intern *pool_names;      /* name -> index in pool_slots */
	uint32_t *pool_slots;
	struct capture *caps;
	size_t ncaps, caps_cap;
	struct capture blocked;         /* scratch for a blocked thread's capture */
	size_t blocked_cap;
	struct thread **stoplist;       /* threads to interrupt this tick */
	size_t stoplist_cap;
	struct target_stats stats;
};

/* ---- thread table ---------------------------------------------------- */

static struct thread **bucket(struct target *t, pid_t tid)
{
	return &t->buckets[(size_t)tid & (t->nbuckets - 1)];
}

static struct thread *thread_find(struct target *t, pid_t tid)
{
	for (struct thread *th = *bucket(t, tid); th; th = th->next)
		if (th->tid == tid)
			return th;
	return NULL;
}

static void rehash(struct target *t)
{
	size_t old_n = t->nbuckets;
	struct thread **old = t->buckets;
	t->nbuckets *= 2;
	t->buckets = xcalloc(t->nbuckets, sizeof(*t->buckets));
	for (size_t i = 0; i < old_n; i++) {
		for (struct thread *th = old[i], *next; th; th = next) {
			next = th->next;
			th->next = *bucket(t, th->tid);
			*bucket(t, th->tid) = th;
		}
	}
	free(old);
}

static void read_comm(pid_t pid, pid_t tid, char name[16])
{
	char fn[64];
	snprintf(fn, sizeof(fn), "/proc/%d/task/%d/comm", pid, tid);
	int fd = open(fn, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return;
	char raw[32];
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

static uint64_t read_cpu_ns(struct target *t, struct thread *th);

static uint32_t new_slot(struct target *t, pid_t tid, const char *name)
{
	if (t->nslots == t->slots_cap) {
		t->slots_cap = t->slots_cap ? t->slots_cap * 2 : 64;
		t->slots = xrealloc(t->slots, t->slots_cap * sizeof(*t->slots));
	}
	uint32_t slot = (uint32_t)t->nslots++;
	t->slots[slot] = (struct slot_info){ .tid = tid };
	snprintf(t->slots[slot].name, sizeof(t->slots[slot].name), "%s", name);
	return slot;
}

/* The slot threads named NAME share once MAX_THREAD_SLOTS are used. */
static uint32_t pool_slot(struct target *t, const char *name)
{
	if (!t->pool_names)
		t->pool_names = intern__new();
	int added;
	int64_t id = intern__add(t->pool_names, name, strlen(name), &added);
	if (id < 0)
		return 0;
	if (added) {
		t->pool_slots = xrealloc(t->pool_slots, ((size_t)id + 1) * sizeof(*t->pool_slots));
		t->pool_slots[id] = new_slot(t, 0, name);
	}
	return t->pool_slots[id];
}

/* TH's name changed (or was read for the first time): its label follows. */
static void name_changed(struct target *t, struct thread *th)
{
	if (th->pooled)
		th->slot = pool_slot(t, th->name);
	else
		memcpy(t->slots[th->slot].name, th->name, sizeof(th->name));
}

static struct thread *thread_add(struct target *t, pid_t tid)
{
	struct thread *th = xcalloc(1, sizeof(*th));
	th->tid = tid;
	th->stack_size = STACK_COPY_MIN;
	th->sys_fd = th->sched_fd = th->stat_fd = -1;
	th->stop_state = 'R';
	th->selected = !t->filter;      /* else decided once its name is read */
	snprintf(th->name, sizeof(th->name), "%d", tid);
	th->pooled = t->nslots >= MAX_THREAD_SLOTS;
	th->slot = th->pooled ? pool_slot(t, "?") : new_slot(t, tid, th->name);
	if (++t->nthreads > t->nbuckets * 2)
		rehash(t);
	th->next = *bucket(t, tid);
	*bucket(t, tid) = th;
	t->stats.threads_seen++;
	th->cpu_ns = read_cpu_ns(t, th);   /* CPU time counts from here */
	return th;
}

static void thread_free(struct thread *th)
{
	if (th->sys_fd >= 0)
		close(th->sys_fd);
	if (th->sched_fd >= 0)
		close(th->sched_fd);
	if (th->stat_fd >= 0)
		close(th->stat_fd);
	free(th);
}

static void thread_remove(struct target *t, pid_t tid)
{
	for (struct thread **pp = bucket(t, tid); *pp; pp = &(*pp)->next) {
		struct thread *th = *pp;
		if (th->tid != tid)
			continue;
		if (th->pending) {
			t->npending--;
			t->stats.lost += th->pending_ticks;
		}
		*pp = th->next;
		thread_free(th);
		t->nthreads--;
		return;
	}
}

#define FOR_EACH_THREAD(t, th, tmp)                                      \
	for (size_t bi_ = 0; bi_ < (t)->nbuckets; bi_++)                 \
		for (struct thread *th = (t)->buckets[bi_], *tmp;        \
		     th && ((tmp = th->next), 1); th = tmp)

/* ---- construction ---------------------------------------------------- */

static struct target *target_new(pid_t pid)
{
	/* Two /proc files stay open per thread: allow as many as we may. */
	struct rlimit rl;
	if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur < rl.rlim_max) {
		rl.rlim_cur = rl.rlim_max;
		setrlimit(RLIMIT_NOFILE, &rl);
	}
	struct target *t = xcalloc(1, sizeof(*t));
	t->pid = pid;
	t->nbuckets = 64;
	t->buckets = xcalloc(t->nbuckets, sizeof(*t->buckets));
	return t;
}

void target__free(struct target *t)
{
	if (!t)
		return;
	FOR_EACH_THREAD(t, th, tmp)
		thread_free(th);
	for (size_t i = 0; i < t->caps_cap; i++)
		free(t->caps[i].stack);
	free(t->caps);
	free(t->blocked.stack);
	free(t->stoplist);
	free(t->buckets);
	free(t->slots);
	intern__free(t->pool_names);
	free(t->pool_slots);
	free(t);
}

/* Reads a "Key:\tvalue" line of /proc/PID/status; returns -1 if absent. */
static long status_field(pid_t pid, const char *key)
{
	char fn[64], line[256];
	long v = -1;
	size_t klen = strlen(key);
	snprintf(fn, sizeof(fn), "/proc/%d/status", pid);
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

/* State letter and flags from /proc/PID/stat; the comm field may hold
 * spaces and parentheses, so parse from the last ')'. */
static int read_stat(pid_t pid, char *state, unsigned long *flags)
{
	char fn[64], buf[1024];
	snprintf(fn, sizeof(fn), "/proc/%d/stat", pid);
	int fd = open(fn, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	ssize_t n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return -EIO;
	buf[n] = '\0';
	char *p = strrchr(buf, ')');
	if (!p || sscanf(p + 2, "%c %*d %*d %*d %*d %*d %lu", state, flags) != 2)
		return -EIO;
	return 0;
}

#define PF_KTHREAD 0x00200000
#define PROC_PID_INIT_INO "4026531836"  /* the initial PID namespace (linux/proc_ns.h) */

/* Are we in the host's PID namespace (not in a container's)? */
static int in_initial_pid_ns(void)
{
	char link[64];
	ssize_t n = readlink("/proc/self/ns/pid", link, sizeof(link) - 1);
	if (n <= 0)
		return 0;
	link[n] = '\0';
	return strcmp(link, "pid:[" PROC_PID_INIT_INO "]") == 0;
}

static int check_pid(pid_t pid, char *err, size_t errlen)
{
	char state;
	unsigned long flags;
	if (pid == getpid() || pid == getppid()) {
		snprintf(err, errlen, "refusing to profile %s (PID %d)",
			 pid == getpid() ? "ourselves" : "our own parent", pid);
		return -EINVAL;
	}
	/* Every process of the machine depends on its init; a profiler bug
	 * there would hang all of them, not one service.  A container's init
	 * is PID 1 only inside the container: that one may be profiled. */
	if (pid == 1 && in_initial_pid_ns()) {
		snprintf(err, errlen, "refusing to profile PID 1, the system's init: every process "
			 "depends on it (a container's PID 1 can be profiled, from inside the "
			 "container or by its PID on the host)");
		return -EINVAL;
	}
	int r = read_stat(pid, &state, &flags);
	if (r == -ENOENT) {
		snprintf(err, errlen, "no such process: %d", pid);
		return -ESRCH;
	}
	if (r < 0) {
		snprintf(err, errlen, "cannot read /proc/%d/stat: %s", pid, strerror(-r));
		return r;
	}
	if (flags & PF_KTHREAD) {
		snprintf(err, errlen, "PID %d is a kernel thread: it has no user stack to sample", pid);
		return -EINVAL;
	}
	if (state == 'Z' || state == 'X') {
		/* The leader of a thread group shows as a zombie from its exit
		 * (pthread_exit in main) until its last thread ends, and ptrace
		 * cannot seize an exited thread. */
		long threads = status_field(pid, "Threads");
		if (threads > 1) {
			snprintf(err, errlen, "PID %d's main thread has exited and its other %ld "
				 "threads run on: such a process cannot be profiled (ptrace cannot "
				 "seize its exited main thread)", pid, threads - 1);
			return -EINVAL;
		}
		snprintf(err, errlen, "PID %d is a zombie: it has exited and has nothing left to sample", pid);
		return -ESRCH;
	}
	return 0;
}

static int ptrace_scope(void)
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

/* Turns a failed PTRACE_SEIZE of the leader into a reason a user can act on. */
static void explain_seize_error(pid_t pid, int e, char *err, size_t errlen)
{
	if (e == ESRCH) {
		snprintf(err, errlen, "no such process: %d", pid);
		return;
	}
	if (e != EPERM) {
		snprintf(err, errlen, "cannot attach to PID %d: %s", pid, strerror(e));
		return;
	}
	long tracer = status_field(pid, "TracerPid");
	if (tracer > 0) {
		char comm[16] = "?";
		read_comm((pid_t)tracer, (pid_t)tracer, comm);
		snprintf(err, errlen, "cannot attach to PID %d: it is already traced by PID %ld (%s); "
			 "only one tracer at a time", pid, tracer, comm);
		return;
	}
	long uid = status_field(pid, "Uid");
	if (geteuid() != 0 && uid >= 0 && (uid_t)uid != geteuid()) {
		snprintf(err, errlen, "cannot attach to PID %d: permission denied (it runs as uid %ld, "
			 "we are uid %d; run as root or as the same user)", pid, uid, (int)geteuid());
		return;
	}
	int scope = ptrace_scope();
	if (scope > 0 && geteuid() != 0) {
		snprintf(err, errlen, "cannot attach to PID %d: permission denied by "
			 "kernel.yama.ptrace_scope=%d (run as root, or set it to 0)", pid, scope);
		return;
	}
	snprintf(err, errlen, "cannot attach to PID %d: permission denied (needs CAP_SYS_PTRACE; "
		 "the process may be set-uid or non-dumpable)", pid);
}

/* Has thread TID exited, or begun to (PF_EXITING)? */
static int thread_exiting(pid_t tid)
{
	char state;
	unsigned long flags;
	return read_stat(tid, &state, &flags) < 0 || state == 'Z' || state == 'X' ||
	       (flags & 0x4);
}

static int seize(pid_t tid)
{
	return ptrace(PTRACE_SEIZE, tid, 0, (void *)(long)OPTIONS) == 0 ? 0 : -errno;
}

/* Seizes every thread in /proc/PID/task, re-reading the list until a pass
 * finds no new thread (threads started by not-yet-seized threads during
 * the walk).  A thread started by a seized one is seized by the kernel
 * (TRACECLONE), so our own SEIZE of it fails with EPERM: that is fine (its
 * TracerPid is then this thread, the tracer).  A thread that is exiting
 * also gives EPERM, and is skipped. */
static int seize_all(struct target *t)
{
	char dn[64];
	snprintf(dn, sizeof(dn), "/proc/%d/task", t->pid);
	for (int added = 1; added;) {
		added = 0;
		DIR *d = opendir(dn);
		if (!d)
			return -errno;
		struct dirent *de;
		while ((de = readdir(d))) {
			pid_t tid = (pid_t)atoi(de->d_name);
			if (tid <= 0 || thread_find(t, tid))
				continue;
			char state;
			unsigned long flags;
			if (read_stat(tid, &state, &flags) == 0 && (state == 'Z' || state == 'X'))
				continue;       /* an exited thread (e.g. after pthread_exit in main) */
			int r = seize(tid);
			if (r == -ESRCH || (r < 0 && thread_exiting(tid)))
				continue;       /* gone, or going: SEIZE refuses those with EPERM */
			if (r < 0 && status_field(tid, "TracerPid") != gettid()) {
				closedir(d);
				return r;
			}
			thread_add(t, tid);
			added = 1;
		}
		closedir(d);
	}
	return 0;
}

int target__attach(struct target **out, pid_t pid, char *err, size_t errlen)
{
	int r = check_pid(pid, err, errlen);
	if (r < 0)
		return r;
	r = seize(pid);
	if (r < 0) {
		explain_seize_error(pid, -r, err, errlen);
		return r;
	}
	struct target *t = target_new(pid);
	thread_add(t, pid);
	t->ready = 1;
	r = seize_all(t);
	if (r < 0) {
		snprintf(err, errlen, "cannot attach to every thread of PID %d: %s", pid, strerror(-r));
		target__free(t);        /* the threads seized so far go when we exit */
		return r;
	}
	*out = t;
	return 0;
}

int target__launch(struct target **out, char *const argv[], const sigset_t *child_mask,
		   char *err, size_t errlen)
{
	int go[2], report[2];
	if (pipe2(go, O_CLOEXEC) < 0 || pipe2(report, O_CLOEXEC) < 0) {
		snprintf(err, errlen, "pipe: %s", strerror(errno));
		return -errno;
	}
	pid_t pid = fork();
	if (pid < 0) {
		snprintf(err, errlen, "fork: %s", strerror(errno));
		return -errno;
	}
	if (pid == 0) {
		char c;
		close(go[1]);
		close(report[0]);
		while (read(go[0], &c, 1) < 0 && errno == EINTR)
			;
		sigprocmask(SIG_SETMASK, child_mask, NULL);
		execvp(argv[0], argv);
		int e = errno;
		if (write(report[1], &e, sizeof(e)) < 0)
			_exit(127);
		_exit(127);
	}
	close(go[0]);
	close(report[1]);
	int r = seize(pid);
	close(go[1]);                   /* the child may exec now */
	int child_errno = 0;
	ssize_t n;
	while ((n = read(report[0], &child_errno, sizeof(child_errno))) < 0 && errno == EINTR)
		;
	close(report[0]);
	if (r < 0 || n > 0) {
		/* The child ends with 127; reap it (and any ptrace stop it makes). */
		int st;
		while (waitpid(pid, &st, __WALL) == pid && !WIFEXITED(st) && !WIFSIGNALED(st))
			ptrace(PTRACE_CONT, pid, 0, 0);
		if (n > 0)
			snprintf(err, errlen, "cannot run '%s': %s", argv[0], strerror(child_errno));
		else
			snprintf(err, errlen, "cannot trace the child: %s", strerror(-r));
		return n > 0 ? -child_errno : r;
	}
	struct target *t = target_new(pid);
	t->launched = 1;
	thread_add(t, pid);
	*out = t;
	return 0;
}

/* ---- events ------------------------------------------------------------ */

static struct capture *next_capture(struct target *t)
{
	if (t->ncaps == t->caps_cap) {
		size_t cap = t->caps_cap ? t->caps_cap * 2 : 16;
		t->caps = xrealloc(t->caps, cap * sizeof(*t->caps));
		memset(t->caps + t->caps_cap, 0, (cap - t->caps_cap) * sizeof(*t->caps));
		t->caps_cap = cap;
	}
	return &t->caps[t->ncaps];
}

/* The hot path: the thread is stopped while this runs.  Registers, one
 * process_vm_readv of the stack from SP - 128 (the red zone a leaf may
 * use), nothing else.  Returns 0 if a capture was recorded. */
static int capture(struct target *t, struct thread *th)
{
	struct capture *c = next_capture(t);
	if (ptrace(PTRACE_GETREGS, th->tid, 0, &c->regs) < 0)
		return -errno;
	c->partial_regs = 0;
	if (c->stack_want < th->stack_size || !c->stack) {
		free(c->stack);
		c->stack = xmalloc(th->stack_size);
	}
	c->stack_want = th->stack_size;
	c->stack_addr = c->regs.rsp - RED_ZONE;
	struct iovec local = { c->stack, th->stack_size };
	struct iovec remote = { (void *)c->stack_addr, th->stack_size };
	ssize_t n = process_vm_readv(th->tid, &local, 1, &remote, 1, 0);
	c->stack_len = n > 0 ? (size_t)n : 0;
	c->tid = th->tid;
	c->slot = th->slot;
	c->pause_ns = th->interrupt_ns;  /* turned into the pause once resumed */
	return 0;
}

static void resume(struct thread *th, int sig)
{
	int req = th->group_stopped ? PTRACE_LISTEN : PTRACE_CONT;
	ptrace(req, th->tid, 0, (void *)(long)(req == PTRACE_LISTEN ? 0 : sig));
}

/* The pause histogram's bucket for US microseconds (see target.h). */
static size_t hist_index(uint64_t us)
{
	if (us < PAUSE_HIST_EXACT)
		return (size_t)us;
	int e = 63 - __builtin_clzll(us);       /* 2^e <= us < 2^(e+1), e >= 10 */
	if (e >= 32)
		return PAUSE_HIST_BUCKETS - 1;
	size_t sub = (size_t)(us >> (e - 6)) & (PAUSE_HIST_SUB - 1);
	return PAUSE_HIST_EXACT + (size_t)(e - 10) * PAUSE_HIST_SUB + sub;
}

/* The middle of bucket I, in microseconds. */
static double hist_value(size_t i)
{
	if (i < PAUSE_HIST_EXACT)
		return (double)i + 0.5;
	size_t e = 10 + (i - PAUSE_HIST_EXACT) / PAUSE_HIST_SUB;
	size_t sub = (i - PAUSE_HIST_EXACT) % PAUSE_HIST_SUB;
	double width = (double)(1ull << (e - 6));
	return (double)(1ull << e) + ((double)sub + 0.5) * width;
}

/* Samples a pending thread that has just stopped and resumes it at once
 * (with SIG, a signal of its own being delivered); the capture waits in
 * t->caps for deliver(). */
static void sample_stopped(struct target *t, struct thread *th, int sig)
{
	th->pending = 0;
	t->npending--;
	if (capture(t, th) == 0) {
		struct capture *c = &t->caps[t->ncaps++];
		c->ticks = th->pending_ticks;
		c->state = th->stop_state;
		resume(th, sig);
		c->pause_ns = now_ns() - c->pause_ns;
		t->stats.pause_hist[hist_index(c->pause_ns / 1000)]++;
		t->stats.samples++;
		return;
	}
	t->stats.lost += th->pending_ticks;
	resume(th, sig);
}

/* A pending thread reported some other stop first (a clone event, a signal
 * of its own): any ptrace stop consumes a pending PTRACE_INTERRUPT, so no
 * interrupt stop will follow.  It is stopped now, so this is its sample. */
static int took_other_stop(struct target *t, struct thread *th, int sig)
{
	if (!th->pending)
		return 0;
	sample_stopped(t, th, sig);
	return 1;
}

static int is_stop_signal(int sig)
{
	return sig == SIGSTOP || sig == SIGTSTP || sig == SIGTTIN || sig == SIGTTOU;
}

static void on_event_stop(struct target *t, struct thread *th, int sig)
{
	/* PTRACE_EVENT_STOP: our interrupt, a new thread's first stop, or a
	 * group-stop (WSTOPSIG is then the stopping signal).  A group-stop must
	 * stay a stop: we restart it with PTRACE_LISTEN, never CONT. */
	th->group_stopped = is_stop_signal(sig);
	if (th->pending)
		sample_stopped(t, th, 0);
	else
		resume(th, 0);
}

static void on_stopped(struct target *t, pid_t tid, int status)
{
	int sig = WSTOPSIG(status), event = status >> 16;
	struct thread *th = thread_find(t, tid);
	if (!th) {
		/* A new thread's first stop can come before its parent's clone event. */
		th = thread_add(t, tid);
	}
	unsigned long msg;
	switch (event) {
	case PTRACE_EVENT_STOP:
		on_event_stop(t, th, sig);
		return;
	case PTRACE_EVENT_CLONE:
		if (ptrace(PTRACE_GETEVENTMSG, tid, 0, &msg) == 0 && !thread_find(t, (pid_t)msg))
			thread_add(t, (pid_t)msg);
		if (!took_other_stop(t, th, 0))
			resume(th, 0);
		return;
	case PTRACE_EVENT_EXEC:
		/* exec() replaced the program: every other thread is gone and the
		 * maps are new.  Launch mode expects one (our own execvp).  Never
		 * sample the new image with the old maps: a pending sample is
		 * dropped. */
		if (t->launched && !t->ready)
			t->ready = 1;
		else if (t->end == TARGET_RUNNING)
			t->end = TARGET_EXECED;
		if (th->pending) {
			th->pending = 0;
			t->npending--;
			t->stats.lost += th->pending_ticks;
		}
		resume(th, 0);
		return;
	case 0:
		/* signal-delivery-stop: the signal is the target's */
		if (!took_other_stop(t, th, sig))
			resume(th, sig);
		return;
	default:
		if (!took_other_stop(t, th, 0))
			resume(th, 0);
	}
}

static void on_status(struct target *t, pid_t tid, int status)
{
	if (WIFSTOPPED(status)) {
		on_stopped(t, tid, status);
		return;
	}
	if (!WIFEXITED(status) && !WIFSIGNALED(status))
		return;
	thread_remove(t, tid);
	if (tid == t->pid) {
		/* The leader is reported last: the whole process is gone. */
		t->end = TARGET_EXITED;
		t->exit_status = status;
	}
}

/* Handles the ptrace events that are waiting, without blocking. */
static void reap(struct target *t)
{
	int status;
	pid_t tid;
	while ((tid = waitpid(-1, &status, __WALL | WNOHANG)) > 0)
		on_status(t, tid, status);
}

/* Hands the captures taken so far to the capture function; their threads
 * already run again.  Stops reported meanwhile are taken between two
 * captures, so a thread that stops now waits for one unwind at most. */
static void deliver(struct target *t)
{
	for (size_t i = 0; i < t->ncaps; i++) {
		reap(t);
		struct capture *c = &t->caps[i];
		struct thread *th = thread_find(t, c->tid);
		c->cpu_ns = 0;
		if (th) {
			/* The CPU time since the thread's previous sample, on a
			 * sample that finds it running, and never more than the
			 * wall time the sample stands for: what it used elsewhere
			 * before is not put here. */
			uint64_t cpu = read_cpu_ns(t, th);
			uint64_t wall = c->ticks * t->period_ns;
			uint64_t used = cpu > th->cpu_ns ? cpu - th->cpu_ns : 0;
			c->cpu_ns = c->state == 'R' ? (used < wall ? used : wall) : 0;
			th->cpu_ns = cpu;
		}
		if (t->fn)
			t->fn(t->fn_arg, c);
	}
	t->ncaps = 0;
}

void target__set_period(struct target *t, uint64_t period_ns)
{
	t->period_ns = period_ns;
}

void target__set_capture_fn(struct target *t, capture_fn fn, void *arg)
{
	t->fn = fn;
	t->fn_arg = arg;
}

void target__set_filter(struct target *t, thread_filter_fn fn, void *arg)
{
	t->filter = fn;
	t->filter_arg = arg;
	FOR_EACH_THREAD(t, th, tmp) {
		th->selected = !fn;
		th->name_reads = 0;     /* decide at the next tick */
	}
}

void target__poll(struct target *t)
{
	reap(t);
	deliver(t);
}

/* Waits until no thread is pending or DEADLINE passes.  SIGCHLD is
 * blocked by the caller; sigtimedwait takes it without disturbing the
 * other signals the main loop waits for. */
static void wait_pending(struct target *t, uint64_t deadline)
{
	sigset_t chld;
	sigemptyset(&chld);
	sigaddset(&chld, SIGCHLD);
	for (;;) {
		target__poll(t);
		if (t->npending == 0 || t->end == TARGET_EXITED)
			return;
		uint64_t now = now_ns();
		if (now >= deadline)
			return;
		uint64_t left = deadline - now;
		struct timespec ts = { (time_t)(left / 1000000000ull), (long)(left % 1000000000ull) };
		sigtimedwait(&chld, NULL, &ts);
	}
}

/* Thread names change (pthread_setname_np usually runs just after the
 * thread starts): re-read at each of a thread's first NAME_EARLY_READS
 * ticks, then about once a second; outside any pause. */
static void refresh_names(struct target *t)
{
	uint64_t now = now_ns();
	FOR_EACH_THREAD(t, th, tmp) {
		if (th->name_reads >= NAME_EARLY_READS &&
		    now - th->name_read_ns < NAME_REFRESH_NS)
			continue;
		th->name_reads++;
		th->name_read_ns = now;
		read_comm(t->pid, th->tid, th->name);
		name_changed(t, th);
		if (t->filter)
			th->selected = t->filter(t->filter_arg, th->tid, th->name) != 0;
	}
}

/* ---- blocked threads: sampled without a stop ---------------------------- */

/* Reads a small /proc file of TID from offset 0, keeping it open in *FD
 * (or, when out of descriptors, opening it each time). */
static ssize_t read_task_file(struct target *t, pid_t tid, const char *name, int *fd,
			      char *buf, size_t size)
{
	int tmp = -1;
	if (*fd < 0) {
		char fn[96];
		snprintf(fn, sizeof(fn), "/proc/%d/task/%d/%s", t->pid, tid, name);
		tmp = open(fn, O_RDONLY | O_CLOEXEC);
		if (tmp < 0)
			return -1;
		if (tmp < 1000000)
			*fd = tmp, tmp = -1;
	}
	ssize_t n = pread(*fd >= 0 ? *fd : tmp, buf, size - 1, 0);
	if (tmp >= 0)
		close(tmp);
	if (n >= 0)
		buf[n] = '\0';
	return n;
}

/* Fills S if TH is blocked (in a system call, or stopped); returns 1 then,
 * 0 if it is running, -1 if /proc could not tell.  The syscall file ends
 * with the user SP and PC for a blocked thread ("running" otherwise; see
 * proc(5)); schedstat's third field counts its runs on a CPU. */
static int blocked_snapshot(struct target *t, struct thread *th, struct snapshot *s)
{
	char sched[128];
	ssize_t n = read_task_file(t, th->tid, "syscall", &th->sys_fd, s->line, sizeof(s->line));
	if (n <= 0 || strncmp(s->line, "running", 7) == 0)
		return n <= 0 ? -1 : 0;
	if (read_task_file(t, th->tid, "schedstat", &th->sched_fd, sched, sizeof(sched)) <= 0 ||
	    sscanf(sched, "%" SCNu64 " %*u %" SCNu64, &s->cpu_ns, &s->runs) != 2)
		return -1;
	char *last = strrchr(s->line, ' '), *end;
	if (!last || last == s->line)
		return -1;
	*last = '\0';
	char *prev = strrchr(s->line, ' ');
	*last = ' ';
	if (!prev)
		return -1;
	s->sp = strtoull(prev + 1, &end, 16);
	s->pc = strtoull(last + 1, &end, 16);
	return s->sp && s->pc ? 1 : -1;
}

static int same_snapshot(const struct snapshot *a, const struct snapshot *b)
{
	return a->runs == b->runs && strcmp(a->line, b->line) == 0;
}

/* Copies a blocked thread's stack into t->blocked.  Returns 0 if the thread
 * stayed blocked at the same place throughout, so the copy is consistent. */
static int capture_blocked(struct target *t, struct thread *th, const struct snapshot *before)
{
	struct capture *c = &t->blocked;
	struct snapshot after;
	if (t->blocked_cap < th->stack_size) {
		free(c->stack);
		c->stack = xmalloc(th->stack_size);
		t->blocked_cap = th->stack_size;
	}
	memset(&c->regs, 0, sizeof(c->regs));
	c->regs.rsp = before->sp;
	c->regs.rip = before->pc;
	c->partial_regs = 1;
	c->stack_want = th->stack_size;
	c->stack_addr = before->sp - RED_ZONE;
	struct iovec local = { c->stack, th->stack_size };
	struct iovec remote = { (void *)c->stack_addr, th->stack_size };
	ssize_t n = process_vm_readv(th->tid, &local, 1, &remote, 1, 0);
	c->stack_len = n > 0 ? (size_t)n : 0;
	c->tid = th->tid;
	c->slot = th->slot;
	c->pause_ns = 0;
	return n > 0 && blocked_snapshot(t, th, &after) == 1 && same_snapshot(before, &after) ? 0 : -1;
}

/* The CPU time TH has used (schedstat's first field), or its last value. */
static uint64_t read_cpu_ns(struct target *t, struct thread *th)
{
	char buf[128];
	uint64_t ns;
	if (read_task_file(t, th->tid, "schedstat", &th->sched_fd, buf, sizeof(buf)) <= 0 ||
	    sscanf(buf, "%" SCNu64, &ns) != 1)
		return th->cpu_ns;
	return ns;
}

/* TH's state letter from its stat file ("TID (COMM) S ..."), or '?'. */
static char read_state(struct target *t, struct thread *th)
{
	char buf[512];
	if (read_task_file(t, th->tid, "stat", &th->stat_fd, buf, sizeof(buf)) <= 0)
		return '?';
	char *p = strrchr(buf, ')');
	return p && p[1] == ' ' && p[2] ? p[2] : '?';
}

/* Tries to sample TH without stopping it; returns 0 if FN took the sample. */
static int sample_blocked(struct target *t, struct thread *th)
{
	struct snapshot s;
	th->stop_state = 'R';
	for (int attempt = 0; attempt < 2; attempt++) {
		if (blocked_snapshot(t, th, &s) != 1)
			return -1;
		if (capture_blocked(t, th, &s) == 0) {
			struct capture *c = &t->blocked;
			c->ticks = 1;
			c->state = read_state(t, th);
			/* CPU time belongs where the thread ran, not where it now
			 * sleeps: it stays on the thread's account until a sample
			 * finds it running. */
			c->cpu_ns = 0;
			if (!t->fn || t->fn(t->fn_arg, c) != 0) {
				th->stop_state = c->state;
				return -1;      /* needs registers: stop it */
			}
			th->cpu_ns = s.cpu_ns;
			t->stats.samples_blocked++;
			return 0;
		}
		t->stats.blocked_retries++;
	}
	return -1;
}

static void stoplist_add(struct target *t, size_t n, struct thread *th)
{
	if (n == t->stoplist_cap) {
		t->stoplist_cap = t->stoplist_cap ? t->stoplist_cap * 2 : 64;
		t->stoplist = xrealloc(t->stoplist, t->stoplist_cap * sizeof(*t->stoplist));
	}
	t->stoplist[n] = th;
}

/* Interrupts the threads on the stop list.  Each is captured and resumed
 * as it reports its stop (reap -> on_event_stop -> sample_stopped). */
static void interrupt_all(struct target *t, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		struct thread *th = t->stoplist[i];
		th->interrupt_ns = now_ns();
		if (ptrace(PTRACE_INTERRUPT, th->tid, 0, 0) < 0)
			continue;       /* ESRCH: exiting; its exit event will come */
		th->pending = 1;
		th->pending_ticks = 1;
		t->npending++;
	}
}

void target__sample(struct target *t)
{
	size_t nstop = 0;
	if (!t->ready || t->end != TARGET_RUNNING)
		return;
	t->stats.ticks++;
	refresh_names(t);
	/* Blocked threads first, while nobody is stopped, so that the stopped
	 * ones do not wait for this work. */
	FOR_EACH_THREAD(t, th, tmp) {
		if (!th->selected)
			continue;
		if (th->pending) {
			th->pending_ticks++;
			t->stats.carried++;
		} else if (sample_blocked(t, th) != 0) {
			stoplist_add(t, nstop++, th);
		}
	}
	/* Nothing polled ptrace events since the list was made, so every
	 * thread on it is still in the table. */
	interrupt_all(t, nstop);
	target__poll(t);
}

void target__stack_too_small(struct target *t, pid_t tid)
{
	struct thread *th = thread_find(t, tid);
	if (th && th->stack_size < STACK_COPY_MAX)
		th->stack_size *= 2;
}

void target__release(struct target *t)
{
	wait_pending(t, now_ns() + RELEASE_TIMEOUT_NS);
	FOR_EACH_THREAD(t, th, tmp) {
		if (th->pending) {
			th->pending = 0;
			t->stats.lost += th->pending_ticks;
		}
	}
	t->npending = 0;
	/* Names while the threads still exist. */
	FOR_EACH_THREAD(t, th, tmp) {
		read_comm(t->pid, th->tid, th->name);
		if (!th->pooled)
			name_changed(t, th);
	}
}

double target__pause_quantile(const struct target *t, double q)
{
	uint64_t total = t->stats.samples, seen = 0;
	if (!total)
		return 0;
	uint64_t rank = (uint64_t)(q * (double)(total - 1));
	for (size_t i = 0; i < PAUSE_HIST_BUCKETS; i++) {
		seen += t->stats.pause_hist[i];
		if (seen > rank)
			return hist_value(i);
	}
	return hist_value(PAUSE_HIST_BUCKETS - 1);
}

pid_t target__pid(const struct target *t) { return t->pid; }
enum target_end target__end(const struct target *t) { return t->end; }
int target__exit_status(const struct target *t) { return t->exit_status; }
int target__ready(const struct target *t) { return t->ready; }
size_t target__nslots(const struct target *t) { return t->nslots; }
pid_t target__slot_tid(const struct target *t, uint32_t slot) { return t->slots[slot].tid; }
const char *target__slot_name(const struct target *t, uint32_t slot) { return t->slots[slot].name; }
const struct target_stats *target__stats(const struct target *t) { return &t->stats; }
