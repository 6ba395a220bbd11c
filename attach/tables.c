/* The tables of the traced processes and threads, and the labels
 * (slots) their samples get: who is traced, under which name. */
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
	p->next = t->procs;
	t->procs = p;
	t->nprocs++;
	t->stats.processes_seen++;
	return p;
}

void target_process_remove(struct target *t, struct process *gone)
{
	for (struct process **pp = &t->procs; *pp; pp = &(*pp)->next) {
		if (*pp == gone) {
			*pp = gone->next;
			free(gone);
			t->nprocs--;
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

/* TH's names changed (or were read for the first time): its label follows. */
void target_name_changed(struct target *t, struct thread *th)
{
	if (th->pooled)
		th->slot = pool_slot(t, th->proc->pid, th->name);
	else
		memcpy(t->slots[th->slot].thread, th->name, sizeof(th->name));
	memcpy(t->slots[th->slot].process, th->proc->comm, sizeof(th->proc->comm));
}

/* A label of its own for TH (a new thread, or one whose process exec'd). */
void target_give_slot(struct target *t, struct thread *th)
{
	th->pooled = t->nslots >= MAX_THREAD_SLOTS;
	th->slot = th->pooled ? pool_slot(t, th->proc->pid, "?") :
				new_slot(t, th->proc->pid, th->tid, th->name);
	memcpy(t->slots[th->slot].process, th->proc->comm, sizeof(th->proc->comm));
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
	th->sys_fd = th->sched_fd = th->stat_fd = -1;
	th->stop_state = 'R';
	th->selected = !target_filtered(t);    /* else decided once its name is read */
	snprintf(th->name, sizeof(th->name), "%d", tid);
	if (++t->nthreads > t->nbuckets * 2)
		rehash(t);
	th->next = *bucket(t, tid);
	*bucket(t, tid) = th;
	if (!p)
		return th;
	target_give_slot(t, th);
	t->stats.threads_seen++;
	th->cpu_ns = target_read_cpu_ns(th);   /* CPU time counts from here */
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
		*pp = th->next;
		thread_free(th);
		t->nthreads--;
		return;
	}
}


/* ---- construction ---------------------------------------------------- */

struct target *target__new(const struct target_config *cfg)
{
	/* Up to three /proc files stay open per thread: allow as many as we may. */
	struct rlimit rl;
	if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur < rl.rlim_max) {
		rl.rlim_cur = rl.rlim_max;
		setrlimit(RLIMIT_NOFILE, &rl);
	}
	struct target *t = xcalloc(1, sizeof(*t));
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
	for (size_t i = 0; i < t->caps_cap; i++)
		free(t->caps[i].stack);
	for (size_t i = 0; i < t->nnotes; i++)
		free(t->notes[i]);
	free(t->notes);
	free(t->caps);
	free(t->blocked.stack);
	free(t->visit);
	free(t->stoplist);
	free(t->buckets);
	free(t->slots);
	intern__free(t->pool_names);
	free(t->pool_slots);
	free(t);
}

/* The CPU time TH has used (schedstat's first field), or its last value. */
uint64_t target_read_cpu_ns(struct thread *th)
{
	char buf[128];
	uint64_t ns, runs;
	if (proc__task_file(th->proc->pid, th->tid, "schedstat", &th->sched_fd, buf, sizeof(buf)) <= 0 ||
	    proc__parse_schedstat(buf, &ns, &runs) < 0)
		return th->cpu_ns;
	return ns;
}

/* Thread names change (pthread_setname_np usually runs just after the
 * thread starts): re-read at each of a thread's first NAME_EARLY_READS
 * ticks, then about once a second; outside any pause. */
void target_refresh_names(struct target *t)
{
	uint64_t now = now_ns();
	FOR_EACH_THREAD(t, th, tmp) {
		if (!th->proc || (th->name_reads >= NAME_EARLY_READS &&
				  now - th->name_read_ns < NAME_REFRESH_NS))
			continue;
		th->name_reads++;
		th->name_read_ns = now;
		proc__comm(th->proc->pid, th->tid, th->name);
		if (th->tid == th->proc->pid)
			memcpy(th->proc->comm, th->name, sizeof(th->name));
		target_name_changed(t, th);
		if (target_filtered(t))
			th->selected = target_wanted(t, th->tid, th->name);
	}
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
	*out = (struct target_slot){ s->pid, s->tid, s->process, s->thread };
}

