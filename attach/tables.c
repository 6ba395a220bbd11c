/* The tables of the traced processes and threads, and the labels
 * (slots) their samples get: who is traced, under which name. */
#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

#include "attach/internal.h"
#include "attach/proc.h"
#include "util/intern.h"
#include "util/timeutil.h"
#include "util/text.h"
#include "util/xalloc.h"

#define NAME_REFRESH_NS (1000 * 1000000ull)
#define NAME_EARLY_READS 8
/* Threads that get a label of their own in the profile.  A target that
 * keeps creating threads (one per request) would otherwise grow our memory
 * with every thread it ever had: past this many, new threads share one
 * label per process and thread name ("NAME", no TID). */
#define MAX_THREAD_SLOTS 4096

/* ---- processes ----------------------------------------------------------- */

struct process *target_process_find(struct target *t, pid_t pid)
{
	for (struct process *p = t->procs; p; p = p->next)
		if (p->pid == pid)
			return p;
	return NULL;
}

struct process *target_process_add(struct target *t, pid_t pid, uint32_t space)
{
	struct process *p = xcalloc(1, sizeof(*p));
	p->pid = pid;
	p->space = space;
	snprintf(p->comm, sizeof(p->comm), "%d", pid);
	proc__comm(pid, pid, p->comm);
	target_read_title(p);
	p->next = t->procs;
	t->procs = p;
	t->nprocs++;
	t->stats.processes_seen++;
	t->stats.processes_now = t->nprocs;
	return p;
}

/* P's title (nginx's "nginx: worker process"), or its command name. */
void target_read_title(struct process *p)
{
	proc__title(p->pid, p->title, sizeof(p->title));
	if (!p->title[0])
		snprintf(p->title, sizeof(p->title), "%s", p->comm);
	p->title_read_ns = now_ns();
}

/* What a slot says of its thread's process: title and command name. */
void target_slot_process(struct target *t, uint32_t slot, const struct process *p)
{
	memcpy(t->slots[slot].process, p->title, sizeof(p->title));
	memcpy(t->slots[slot].comm, p->comm, sizeof(p->comm));
}

void target_process_remove(struct target *t, struct process *gone)
{
	for (struct process **pp = &t->procs; *pp; pp = &(*pp)->next) {
		if (*pp == gone) {
			*pp = gone->next;
			free(gone);
			t->nprocs--;
			t->stats.processes_now = t->nprocs;
			return;
		}
	}
}

void target_note(struct target *t, const char *fmt, ...)
{
	va_list ap;
	char buf[512];
	va_start(ap, fmt);
	vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	t->notes = xrealloc(t->notes, (t->nnotes + 1) * sizeof(*t->notes));
	t->notes[t->nnotes++] = xstrdup(buf);
}

/* ---- thread table -------------------------------------------------------- */

static struct thread **bucket(struct target *t, pid_t tid)
{
	return &t->buckets[(size_t)tid & (t->nbuckets - 1)];
}

struct thread *target_thread_find(struct target *t, pid_t tid)
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

static uint32_t new_slot(struct target *t, pid_t pid, pid_t tid, const char *name)
{
	if (t->nslots == t->slots_cap) {
		t->slots_cap = t->slots_cap ? t->slots_cap * 2 : 64;
		t->slots = xrealloc(t->slots, t->slots_cap * sizeof(*t->slots));
	}
	uint32_t slot = (uint32_t)t->nslots++;
	t->slots[slot] = (struct slot_info){ .pid = pid, .tid = tid };
	snprintf(t->slots[slot].thread, sizeof(t->slots[slot].thread), "%s", name);
	return slot;
}

/* The slot threads of process PID named NAME share once MAX_THREAD_SLOTS
 * are used. */
static uint32_t pool_slot(struct target *t, pid_t pid, const char *name)
{
	char key[40];
	int len = snprintf(key, sizeof(key), "%d/%s", (int)pid, name);
	if (!t->pool_names)
		t->pool_names = intern__new();
	int added;
	int64_t id = intern__add(t->pool_names, key, (size_t)len, &added);
	if (id < 0)
		return 0;
	if (added) {
		t->pool_slots = xrealloc(t->pool_slots, ((size_t)id + 1) * sizeof(*t->pool_slots));
		t->pool_slots[id] = new_slot(t, pid, 0, name);
	}
	return t->pool_slots[id];
}

/* TH's names changed (or were read for the first time): its label follows.
 * A label that has samples keeps its name: a renamed thread gets a new
 * label (the same thread, its new name), so that what it did before the
 * rename stays under the name it had then.  Except in a thread's first
 * ticks: threads are named as they start (the name they inherit from
 * their creator is not theirs), and that name is the one for them all. */
void target_name_changed(struct target *t, struct thread *th)
{
	uint32_t old = th->slot;
	if (th->pooled)
		th->slot = pool_slot(t, th->proc->pid, th->name);
	else if (!t->slots[old].used || th->name_reads < NAME_EARLY_READS ||
		 strcmp(t->slots[old].thread, th->name) == 0)
		memcpy(t->slots[old].thread, th->name, sizeof(th->name));
	else if (t->nslots < MAX_THREAD_SLOTS)
		th->slot = new_slot(t, th->proc->pid, th->tid, th->name);
	else
		th->pooled = 1, th->slot = pool_slot(t, th->proc->pid, th->name);
	target_slot_process(t, th->slot, th->proc);
	if (target_filtered(t))
		th->selected = target_wanted(t, th->tid, th->name);
	if (th->selected && !th->ever_selected) {
		th->ever_selected = 1;
		t->stats.threads_sampled++;
	}
	if (th->slot != old || !th->selected) {
		/* Its counted stack has the old label (or is no longer wanted). */
		if (th->selected && th->skipped)
			target_push_again(t, th, th->skipped, 1);
		th->skipped = 0;
		th->cookie = th->last_cookie = 0;
	}
}

/* Reads TH's name (and its process's, for the leader); returns 1 if it
 * changed. */
static int read_name(struct target *t, struct thread *th)
{
	char raw[32], buf[16];
	ssize_t n = target_read(t, th, TF_COMM, raw, sizeof(raw));
	if (n <= 0)
		return 0;
	/* The kernel ends the name with a newline; any other byte is the
	 * target's choice (ESC sequences, CR, newlines of its own): made safe
	 * to show here, for every output, as proc__comm() does at attach. */
	if (raw[n - 1] == '\n')
		n--;
	text__clean(buf, sizeof(buf), raw, (size_t)n);
	if (strcmp(buf, th->name) == 0)
		return 0;
	memcpy(th->name, buf, strlen(buf) + 1);
	if (th->tid == th->proc->pid) {
		memcpy(th->proc->comm, th->name, sizeof(th->name));
		target_read_title(th->proc);
	}
	return 1;
}

/* Only the thread itself can run prctl(PR_SET_NAME) or
 * pthread_setname_np() on itself, which is how threads name themselves:
 * its name can only have changed that way if it ran.  (Another thread may
 * write its /proc comm file: the periodic re-read finds that.) */
int target_check_name(struct target *t, struct thread *th, uint64_t runs)
{
	uint32_t old = th->slot;
	if (runs == th->name_runs)
		return 0;
	th->name_runs = runs;
	if (!read_name(t, th))
		return 0;
	th->name_read_ns = now_ns();
	target_name_changed(t, th);
	return th->slot != old;
}

/* A label of its own for TH (a new thread, or one whose process exec'd). */
void target_give_slot(struct target *t, struct thread *th)
{
	th->pooled = t->nslots >= MAX_THREAD_SLOTS;
	th->slot = th->pooled ? pool_slot(t, th->proc->pid, "?") :
				new_slot(t, th->proc->pid, th->tid, th->name);
	target_slot_process(t, th->slot, th->proc);
}

int target_wanted(const struct target *t, pid_t tid, const char *name)
{
	if (t->cfg.ntids) {
		size_t i = 0;
		while (i < t->cfg.ntids && t->cfg.tids[i] != tid)
			i++;
		if (i == t->cfg.ntids)
			return 0;
	}
	return !t->cfg.threads_re || regexec(t->cfg.threads_re, name, 0, NULL, 0) == 0;
}

int target_filtered(const struct target *t)
{
	return t->cfg.ntids || t->cfg.threads_re;
}

/* P NULL: a task that is not ours (a clone() child that is a process,
 * while children are not followed), detached at its first stop. */
struct thread *target_thread_add(struct target *t, struct process *p, pid_t tid)
{
	struct thread *th = xcalloc(1, sizeof(*th));
	th->tid = tid;
	th->proc = p;
	th->stack_size = TARGET_STACK_COPY_MIN;
	th->every = 1;
	for (int i = 0; i < TF_COUNT; i++)
		th->fds[i] = -1;
	th->stop_state = 'R';
	th->selected = !target_filtered(t);    /* else decided once its name is read */
	t->names_due_ns = 0;                    /* its first names are read at once */
	snprintf(th->name, sizeof(th->name), "%d", tid);
	if (++t->nthreads > t->nbuckets * 2)
		rehash(t);
	th->next = *bucket(t, tid);
	*bucket(t, tid) = th;
	if (!p)
		return th;
	target_give_slot(t, th);
	t->stats.threads_seen++;
	t->stats.threads_now++;
	if (th->selected) {
		th->ever_selected = 1;
		t->stats.threads_sampled++;
	}
	th->cpu_ns = target_read_cpu_ns(t, th);        /* CPU time counts from here */
	return th;
}

static void close_files(struct thread *th, int from)
{
	for (int i = 0; i < TF_COUNT; i++) {
		if (th->fds[i] >= from) {
			close(th->fds[i]);
			th->fds[i] = -1;
		}
	}
}

static void thread_free(struct thread *th)
{
	close_files(th, 0);
	perf__free(th->perf);
	free(th->fp);
	free(th);
}

void target_close_files(struct target *t)
{
	FOR_EACH_THREAD(t, th, tmp)
		close_files(th, 0);
	t->keep_below = 0;
	t->fd_noted = 1;        /* reads from now on are few, and ours to choose */
}

/* ---- /proc files of the threads ------------------------------------------
 * Reading a file kept open costs a fraction of opening it each time, so
 * they stay open, but never at the expense of the descriptors the module
 * table and the symbolizer need (one per module file): only descriptors
 * numbered below keep_below are kept, and descriptors are always handed
 * out lowest first, so the numbers above stay free for them.  Out of
 * descriptors all the same, the kept ones go first.  A thread whose files
 * cannot be read at all is not sampled at that tick (counted lost): never
 * stopped instead, which would make its blocking call return EINTR. */

static const char *const file_names[TF_COUNT] = { "syscall", "schedstat", "stat", "comm" };

/* Descriptors left for others: module files, output, libraries' own. */
static int fd_reserve(int limit)
{
	return limit / 8 > 128 ? limit / 8 : 128;
}

static void init_keep_below(struct target *t)
{
	struct rlimit rl;
	long limit = 1024;
	if (getrlimit(RLIMIT_NOFILE, &rl) == 0)
		limit = rl.rlim_cur == RLIM_INFINITY || rl.rlim_cur > INT_MAX ? INT_MAX : (long)rl.rlim_cur;
	t->keep_below = limit > fd_reserve((int)limit) ? (int)(limit - fd_reserve((int)limit)) : 0;
}

static void note_slow_files(struct target *t)
{
	struct rlimit rl;
	if (t->fd_noted)
		return;
	t->fd_noted = 1;
	getrlimit(RLIMIT_NOFILE, &rl);
	target_note(t, "the descriptor limit (ulimit -n %llu) is too low to keep every thread's /proc "
		    "files open: some are reopened at each read (slower; raise the limit to avoid it)",
		    (unsigned long long)rl.rlim_cur);
}

/* Out of descriptors: keep fewer, close those above the new bound. */
static void out_of_files(struct target *t)
{
	t->keep_below /= 2;
	FOR_EACH_THREAD(t, th, tmp)
		close_files(th, t->keep_below);
	note_slow_files(t);
}

ssize_t target_read(struct target *t, struct thread *th, enum thread_file f, char *buf, size_t size)
{
	int was_open = th->fds[f] >= 0;
	ssize_t n = proc__task_file(th->proc->pid, th->tid, file_names[f], &th->fds[f],
				    t->keep_below, buf, size);
	if (n < 0 && (errno == EMFILE || errno == ENFILE)) {
		out_of_files(t);
		n = proc__task_file(th->proc->pid, th->tid, file_names[f], &th->fds[f],
				    t->keep_below, buf, size);
	}
	if (n >= 0 && !was_open && th->fds[f] < 0)
		note_slow_files(t);
	return n;
}

void target_thread_remove(struct target *t, pid_t tid)
{
	for (struct thread **pp = bucket(t, tid); *pp; pp = &(*pp)->next) {
		struct thread *th = *pp;
		if (th->tid != tid)
			continue;
		if (th->pending) {
			t->npending--;
			t->stats.lost += th->pending_ticks;
		}
		if (t->last_blocked == th)
			t->last_blocked = NULL;
		if (t->revisit == th)
			t->revisit = NULL;
		/* Gone since its last check: it moved at one of those ticks. */
		if (th->proc && th->selected && th->skipped)
			target_push_again(t, th, th->skipped, 1);
		*pp = th->next;
		if (th->proc && t->stats.threads_now)
			t->stats.threads_now--;
		thread_free(th);
		t->nthreads--;
		return;
	}
}


/* ---- construction ---------------------------------------------------- */

struct target *target_tables_new(const struct target_config *cfg)
{
	/* Up to four /proc files stay open per thread: allow as many as we may. */
	struct rlimit rl;
	if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur < rl.rlim_max) {
		rl.rlim_cur = rl.rlim_max;
		setrlimit(RLIMIT_NOFILE, &rl);
	}
	struct target *t = xcalloc(1, sizeof(*t));
	init_keep_below(t);
	t->cfg = *cfg;
	t->first_status = -1;
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
	while (t->procs)
		target_process_remove(t, t->procs);
	for (size_t i = 0; i < t->caps_cap; i++) {
		free(t->caps[i].stack);
		free(t->caps[i].probe_stack);
		free(t->caps[i].far);
		free(t->caps[i].rt_data);
	}
	for (size_t i = 0; i < t->nnotes; i++)
		free(t->notes[i]);
	free(t->notes);
	free(t->caps);
	free(t->blocked.stack);
	free(t->blocked.far);
	free(t->blocked.rt_data);
	free(t->visit);
	free(t->stoplist);
	free(t->buckets);
	free(t->slots);
	intern__free(t->pool_names);
	free(t->pool_slots);
	free(t);
}

int target_read_schedstat(struct target *t, struct thread *th, uint64_t *cpu_ns, uint64_t *runs)
{
	char buf[128];
	if (target_read(t, th, TF_SCHEDSTAT, buf, sizeof(buf)) <= 0 ||
	    proc__parse_schedstat(buf, cpu_ns, runs) < 0)
		return -1;
	return 0;
}

/* The CPU time TH has used (schedstat's first field), or its last value. */
uint64_t target_read_cpu_ns(struct target *t, struct thread *th)
{
	uint64_t ns, runs;
	return target_read_schedstat(t, th, &ns, &runs) == 0 ? ns : th->cpu_ns;
}

/* Thread names change (pthread_setname_np usually runs just after the
 * thread starts): re-read at each of a thread's first NAME_EARLY_READS
 * ticks, then about once a second; outside any pause. */
void target_refresh_names(struct target *t)
{
	uint64_t now = now_ns();
	/* Walking a thousand threads at every tick to find none due cost
	 * more than the reads: unless a thread is in its first reads, the
	 * walk is made every NAME_REFRESH_NS / 8 (each name still read about
	 * once a second). */
	if (now < t->names_due_ns)
		return;
	int early = 0;
	FOR_EACH_THREAD(t, th, tmp) {
		if (th->proc && th->name_reads + 1 < NAME_EARLY_READS)
			early = 1;
		if (!th->proc || (th->name_reads >= NAME_EARLY_READS &&
				  now - th->name_read_ns < NAME_REFRESH_NS))
			continue;
		th->name_reads++;
		th->name_read_ns = now;
		read_name(t, th);
		/* A title changes with what the process does ("postgres: app
		 * db idle", then "... SELECT"): the leader's, about once a
		 * second, with its name. */
		if (th->tid == th->proc->pid && now - th->proc->title_read_ns >= NAME_REFRESH_NS)
			target_read_title(th->proc);
		target_name_changed(t, th);
	}
	t->names_due_ns = early ? 0 : now + NAME_REFRESH_NS / 8;
}

size_t target__processes(const struct target *t, struct target_process *out, size_t max)
{
	size_t n = 0;
	for (const struct process *p = t->procs; p && n < max; p = p->next)
		out[n++] = (struct target_process){ p->pid, p->space };
	return n;
}

const char *target__next_note(struct target *t)
{
	return t->notes_taken < t->nnotes ? t->notes[t->notes_taken++] : NULL;
}

void target__slot(const struct target *t, uint32_t slot, struct target_slot *out)
{
	const struct slot_info *s = &t->slots[slot];
	*out = (struct target_slot){ s->pid, s->tid, s->process, s->thread, s->comm };
}

