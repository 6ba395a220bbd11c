/* target: the ptrace event machine and the ticks: running threads are
 * interrupted, captured and resumed as they stop (blocked ones are
 * sampled by attach/blocked.c, the tables are attach/tables.c's). */
#include "attach/target.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ptrace.h>
#include <sys/resource.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "attach/internal.h"
#include "attach/proc.h"
#include "util/hist.h"
#include "util/intern.h"
#include "util/timeutil.h"
#include "util/xalloc.h"

#define RELEASE_TIMEOUT_NS (200 * 1000000ull)

/* ---- events ------------------------------------------------------------ */

/* The probe of the thread's process (see target__set_probe), while it is
 * stopped; a pointer that cannot be read leaves probe_len 0. */
static void read_probe(struct thread *th, struct capture *c, const struct target_probe *p)
{
	uint64_t ptr = c->regs.fs_base + (uint64_t)p->tls;
	for (int i = 0; i < 3; i++) {
		struct iovec local = { &ptr, sizeof(ptr) }, remote = { (void *)ptr, sizeof(ptr) };
		if (ptr == 0 || ptr % 8 || process_vm_readv(th->tid, &local, 1, &remote, 1, 0) != 8)
			return;
		c->probe_ptr[i] = ptr;
		c->probe_ptrs = i + 1;
		if (i < 2)
			ptr += p->hop[i];
	}
	struct iovec local = { c->probe, p->len }, remote = { (void *)ptr, p->len };
	if (!ptr || process_vm_readv(th->tid, &local, 1, &remote, 1, 0) != (ssize_t)p->len)
		return;
	c->probe_len = p->len;
	uint64_t sp, hi;
	if (!p->stack_max || c->probe_ptr[2] == c->probe_ptr[0] || p->sp_off + 8 > p->len ||
	    p->hi_off + 8 > p->len)
		return;
	memcpy(&sp, c->probe + p->sp_off, 8);
	memcpy(&hi, c->probe + p->hi_off, 8);
	if (sp == 0 || sp >= hi)
		return;
	size_t n = hi - sp < p->stack_max ? (size_t)(hi - sp) : p->stack_max;
	if (!c->probe_stack)
		c->probe_stack = xmalloc(TARGET_PROBE_STACK_MAX);
	struct iovec l2 = { c->probe_stack, n }, r2 = { (void *)sp, n };
	ssize_t got = process_vm_readv(th->tid, &l2, 1, &r2, 1, 0);
	c->probe_stack_len = got > 0 ? (size_t)got : 0;
}

/* The hot path: the thread is stopped while this runs.  Registers, one
 * process_vm_readv of the stack from SP - 128 (the red zone a leaf may
 * use), nothing else.  Returns 0 if a capture was recorded. */
static int capture(struct target *t, struct thread *th)
{
	struct capture *c = target_next_capture(t);
	if (ptrace(PTRACE_GETREGS, th->tid, 0, &c->regs) < 0)
		return -errno;
	c->partial_regs = 0;
	c->no_stop = 0;
	c->nkernel = 0;
	c->unchanged = c->uncertain = 0;
	c->cookie = 0;
	if (c->stack_want < th->stack_size || !c->stack) {
		free(c->stack);
		c->stack = xmalloc(th->stack_size);
	}
	c->stack_want = th->stack_size;
	c->stack_addr = c->regs.rsp - TARGET_RED_ZONE;
	struct iovec local = { c->stack, th->stack_size };
	struct iovec remote = { (void *)c->stack_addr, th->stack_size };
	ssize_t n = process_vm_readv(th->tid, &local, 1, &remote, 1, 0);
	c->stack_len = n > 0 ? (size_t)n : 0;
	c->pid = th->proc->pid;
	c->tid = th->tid;
	c->slot = th->slot;
	c->space = th->proc->space;
	c->pause_ns = th->interrupt_ns;  /* turned into the pause once resumed */
	c->probe_len = c->probe_stack_len = 0;
	c->probe_ptrs = 0;
	target_read_far(t, th, c, 0);
	if (th->proc->probe.len && th->proc->probe_space == th->proc->space)
		read_probe(th, c, &th->proc->probe);
	target_read_runtime(th, c, 0);
	return 0;
}

/* The target, its tables made (attach/tables.c), its capture chosen
 * (perf events or stops: attach/nostop.c). */
struct target *target__new(const struct target_config *cfg)
{
	struct target *t = target_tables_new(cfg);
	target_nostop_init(t);
	return t;
}

/* Thread TID gone (exited, or replaced by an exec): its perf stream and
 * owed ticks (attach/nostop.c), then its entry (attach/tables.c). */
static void thread_gone(struct target *t, pid_t tid)
{
	struct thread *th = target_thread_find(t, tid);
	if (th)
		target_nostop_gone(t, th);
	target_thread_remove(t, tid);
}

static void resume(struct thread *th, int sig)
{
	int req = th->group_stopped ? PTRACE_LISTEN : PTRACE_CONT;
	ptrace(req, th->tid, 0, (void *)(long)(req == PTRACE_LISTEN ? 0 : sig));
}

/* Samples a pending thread that has just stopped and resumes it at once
 * (with SIG, a signal of its own being delivered); the capture waits in
 * t->caps for target__next_stopped(). */
static void sample_stopped(struct target *t, struct thread *th, int sig)
{
	th->pending = 0;
	t->npending--;
	if (capture(t, th) == 0) {
		struct capture *c = &t->caps[t->ncaps++];
		c->ticks = th->pending_ticks;
		c->state = th->stop_state;
		/* A thread stopped inside a system call (blocked, but its
		 * unwinding needed registers) has the call in orig_rax. */
		c->syscall = c->state != 'R' && c->regs.orig_rax < 1024 ? (int)c->regs.orig_rax : -1;
		resume(th, sig);
		if (th->want_fp)
			target_keep_fp(th, c);  /* after the resume: not in the pause */
		c->pause_ns = now_ns() - c->pause_ns;
		hist__add(&t->pause, c->pause_ns / 1000);
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

/* A task we have not seen (a new thread, or a new process when children
 * are followed) reported a stop or was announced by its parent's event.
 * Threads and processes are told apart by the thread group, not by how
 * they were made: clone() without CLONE_THREAD makes a process. */
static struct thread *adopt_task(struct target *t, pid_t tid, struct process *parent)
{
	long tgid = proc__status_field(tid, "Tgid");
	/* Announced by its parent's event, but already gone: the new task's
	 * own first stop and its exit were handled before that event (it was
	 * counted then).  Adding it now would count it twice and keep a
	 * thread that no event will ever remove. */
	if (tgid <= 0 && parent)
		return NULL;
	struct process *p = tgid > 0 && tgid != tid ? target_process_find(t, (pid_t)tgid) : NULL;
	if (p || (tgid != tid && parent))
		return target_thread_add(t, p ? p : parent, tid);
	if (!t->cfg.subprocesses)
		return target_thread_add(t, NULL, tid);
	if (!parent) {
		struct proc_stat st;
		parent = proc__stat(tid, &st) == 0 ? target_process_find(t, st.ppid) : NULL;
	}
	/* A forked child is a copy of its parent: same maps until it execs. */
	p = target_process_add(t, tid, parent ? parent->space : t->next_space++);
	return target_thread_add(t, p, tid);
}

/* A new thread gets its perf stream at once (perf capture): one that
 * lives a few milliseconds has samples before its first tick. */
static struct thread *adopt(struct target *t, pid_t tid, struct process *parent)
{
	struct thread *th = adopt_task(t, tid, parent);
	if (th && th->proc)
		target_nostop_born(t, th);
	return th;
}

/* exec() replaced the program of TH's process: every other thread is gone
 * (the one that called exec may have had another TID: FORMER) and the
 * maps are new.  Launch mode expects one (our own execvp).  Never sample
 * the new image with the old maps: a pending sample is dropped. */
static void on_exec(struct target *t, struct thread *th, pid_t former)
{
	struct process *p = th->proc;
	FOR_EACH_THREAD(t, o, tmp)
		if (o != th && o->proc == p)
			thread_gone(t, o->tid);
	if (former != th->tid)
		thread_gone(t, former);
	if (t->launched && !t->ready)
		t->ready = 1;
	else
		t->stats.execs++;
	/* Its counted stack belongs to the old image. */
	if (th->skipped)
		target_push_again(t, th, th->skipped, 1);
	th->skipped = 0;
	th->cookie = th->last_cookie = 0;
	free(th->fp);
	th->fp = NULL;
	target_nostop_exec(t, th);
	p->space = t->next_space++;
	proc__comm(p->pid, p->pid, p->comm);
	target_read_title(p);
	memcpy(th->name, p->comm, sizeof(th->name));
	target_give_slot(t, th);
	th->name_reads = 0;
	t->names_due_ns = 0;
	if (th->pending) {
		th->pending = 0;
		t->npending--;
		t->stats.lost += th->pending_ticks;
	}
	resume(th, 0);
}

static void on_new_task(struct target *t, struct thread *th)
{
	unsigned long msg;
	if (ptrace(PTRACE_GETEVENTMSG, th->tid, 0, &msg) == 0 && !target_thread_find(t, (pid_t)msg))
		adopt(t, (pid_t)msg, th->proc);
	if (!took_other_stop(t, th, 0))
		resume(th, 0);
}

static void on_stopped(struct target *t, pid_t tid, int status)
{
	int sig = WSTOPSIG(status), event = status >> 16;
	struct thread *th = target_thread_find(t, tid);
	if (!th)        /* a new task's first stop can come before its parent's event */
		th = adopt(t, tid, NULL);
	if (!th->proc) {
		/* Not ours to follow: it is stopped now, so it can be detached. */
		ptrace(PTRACE_DETACH, tid, 0, 0);
		thread_gone(t, tid);
		return;
	}
	unsigned long msg;
	switch (event) {
	case PTRACE_EVENT_STOP:
		on_event_stop(t, th, sig);
		return;
	case PTRACE_EVENT_CLONE:
	case PTRACE_EVENT_FORK:
	case PTRACE_EVENT_VFORK:
		on_new_task(t, th);
		return;
	case PTRACE_EVENT_EXEC:
		if (ptrace(PTRACE_GETEVENTMSG, tid, 0, &msg) != 0)
			msg = (unsigned long)tid;
		on_exec(t, th, (pid_t)msg);
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
	struct thread *th = target_thread_find(t, tid);
	struct process *p = th ? th->proc : target_process_find(t, tid);
	thread_gone(t, tid);
	if (p && tid == p->pid) {
		/* The leader is reported last: the whole process is gone. */
		if (tid == t->first_pid)
			t->first_status = status;
		target_process_remove(t, p);
	}
}

/* Handles the ptrace events that are waiting, without blocking.
 * waitpid(-1) looks at every tracee, so with a thousand threads a call
 * that finds nothing costs more than sampling an idle thread.  Every
 * ptrace stop and every exit of a tracee raises SIGCHLD, which the caller
 * keeps blocked: whoever takes a SIGCHLD (this function, the caller's
 * signalfd, our sigtimedwait) reaps every event after, since the events
 * before it may raise no other.  Unless FORCE (the caller took one),
 * waitpid is called only if a SIGCHLD was pending, and that one is taken
 * first: one call that finds nothing per SIGCHLD, not one per look. */
static void reap(struct target *t, int force)
{
	int status;
	pid_t tid;
	if (!force) {
		static const struct timespec zero;
		sigset_t chld;
		sigemptyset(&chld);
		sigaddset(&chld, SIGCHLD);
		if (sigtimedwait(&chld, NULL, &zero) != SIGCHLD)
			return;
	}
	while ((tid = waitpid(-1, &status, __WALL | WNOHANG)) > 0)
		on_status(t, tid, status);
}

void target__poll(struct target *t)
{
	reap(t, 1);
}

/* The CPU time since the thread's previous sample, on a sample that finds
 * it running, and never more than the wall time the sample stands for:
 * what it used elsewhere before is not put here.  The thread ran: its
 * name may have changed (its label follows).  Returns -1 if the capture
 * is not wanted after all (renamed to a name not asked for). */
static int account_cpu(struct target *t, size_t i)
{
	struct capture *c = &t->caps[i];
	if (c->unchanged)
		return 0;
	struct thread *th = target_thread_find(t, c->tid);
	uint64_t cpu, runs;
	c->cpu_ns = 0;
	if (!th || !th->proc)
		return 0;
	if (target_read_schedstat(t, th, &cpu, &runs) < 0)
		return 0;
	uint64_t wall = c->ticks * t->cfg.period_ns;
	uint64_t used = cpu > th->cpu_ns ? cpu - th->cpu_ns : 0;
	c->cpu_ns = c->state == 'R' ? (used < wall ? used : wall) : 0;
	th->cpu_ns = cpu;
	if (target_check_name(t, th, runs)) {
		t->caps[i].slot = th->slot;     /* (a rename may have moved t->caps) */
		if (!th->selected)
			return -1;
	}
	return 0;
}

/* Stops reported meanwhile are taken between two captures, so a thread
 * that stops now waits for the caller's work on one capture at most. */
const struct capture *target__next_stopped(struct target *t)
{
	for (;;) {
		reap(t, 0);
		if (t->delivered == t->ncaps) {
			t->ncaps = t->delivered = 0;
			return NULL;
		}
		size_t i = t->delivered++;
		int r = account_cpu(t, i);
		struct capture *c = &t->caps[i];
		if (r < 0)
			continue;
		t->slots[c->slot].used = 1;
		return c;
	}
}

/* Waits until no thread is pending or DEADLINE passes.  SIGCHLD is
 * blocked by the caller; sigtimedwait takes it without disturbing the
 * other signals the caller waits for. */
static void wait_pending(struct target *t, uint64_t deadline)
{
	sigset_t chld;
	sigemptyset(&chld);
	sigaddset(&chld, SIGCHLD);
	for (;;) {
		reap(t, 1);
		if (t->npending == 0 || t->nprocs == 0)
			return;
		uint64_t now = now_ns();
		if (now >= deadline)
			return;
		uint64_t left = deadline - now;
		struct timespec ts = { (time_t)(left / 1000000000ull), (long)(left % 1000000000ull) };
		sigtimedwait(&chld, NULL, &ts);
	}
}

static void stoplist_add(struct target *t, struct thread *th)
{
	if (t->nstop == t->stoplist_cap) {
		t->stoplist_cap = t->stoplist_cap ? t->stoplist_cap * 2 : 64;
		t->stoplist = xrealloc(t->stoplist, t->stoplist_cap * sizeof(*t->stoplist));
	}
	t->stoplist[t->nstop++] = th;
}

void target__tick_begin(struct target *t, uint64_t tick_ns)
{
	t->tick_ns = tick_ns ? tick_ns : now_ns();
	t->force_tick = t->force_next;
	t->force_next = 0;
	t->nvisit = t->visit_i = 0;
	t->nstop = 0;
	t->last_blocked = NULL;
	t->revisit = NULL;
	t->revisit_looked = 0;
	if (!t->ready || t->nprocs == 0)
		return;
	t->stats.ticks++;
	target_refresh_names(t);
	if (t->visit_cap < t->nthreads) {
		t->visit_cap = t->nthreads * 2;
		t->visit = xrealloc(t->visit, t->visit_cap * sizeof(*t->visit));
	}
	/* Nothing polls ptrace events until target__interrupt(), so every
	 * thread on the list stays in the table. */
	FOR_EACH_THREAD(t, th, tmp)
		if (th->proc && th->selected)
			t->visit[t->nvisit++] = th;
}

/* Blocked threads first, while nobody is stopped, so that the stopped
 * ones do not wait for this work.  A thread that has been idle a while is
 * checked only every th->every ticks (attach/blocked.c): the ticks in
 * between wait in th->skipped for its next check. */
const struct capture *target__next_blocked(struct target *t)
{
	target_blocked_taken(t);
	for (;;) {
		struct thread *th;
		if (t->revisit)
			th = t->revisit, t->revisit = NULL;
		else if (t->visit_i < t->nvisit)
			th = t->visit[t->visit_i++];
		else
			return NULL;
		if (th->pending) {
			th->pending_ticks++;
			t->stats.carried++;
			continue;
		}
		if (th->cookie && th->skipped + 1 < th->every && !t->force_tick) {
			th->skipped++;
			continue;
		}
		if (!t->revisit_looked)
			target_nostop_look(t, th);
		int what;
		const struct capture *c = target_sample_blocked(t, th, &what);
		if (c) {
			t->revisit_looked = what == BLOCKED_AGAIN;
			if (what == BLOCKED_AGAIN)
				t->revisit = th;
			else
				target_nostop_settle(t, th, &t->blocked);
			t->slots[c->slot].used = 1;
			return c;
		}
		t->revisit_looked = 0;
		/* On a CPU (or moving too fast to read): in perf capture its
		 * sample, never a stop (attach/nostop.c). */
		if (what == BLOCKED_STOP && target_nostop(t, th) && target_nostop_running(t, th) == 0)
			continue;
		if (what == BLOCKED_STOP)
			stoplist_add(t, th);
		else if (what == BLOCKED_LOST)
			t->stats.lost++;
	}
}

void target__need_stop(struct target *t, const struct capture *c)
{
	struct thread *th = t->last_blocked;
	if (!th || th->tid != c->tid)
		return;
	if (target_nostop(t, th) && !(th->proc->probe.len && th->proc->probe_space == th->proc->space)) {
		target_nostop_need_regs(t, th, c);      /* no stop: a partial stack */
		return;
	}
	th->stop_state = c->state;
	th->want_fp = 1;        /* its stop may serve the next blocked captures */
	t->last_blocked = NULL;
	stoplist_add(t, th);
}

/* The copy a thread's stack needs: the most its samples used over a
 * window of STACK_WINDOW samples, half as much again and a page, in pages.
 * It grows at once, shrinks once a window is over; a stack deeper than
 * that still ends in a short copy (target__stack_too_small). */
#define STACK_WINDOW 32
static void size_stack(struct thread *th, size_t used)
{
	if (used > th->need_max)
		th->need_max = used;
	size_t want = (th->need_max + th->need_max / 2 + 4096 + 4095) & ~(size_t)4095;
	if (want < TARGET_STACK_COPY_FLOOR)
		want = TARGET_STACK_COPY_FLOOR;
	if (want > TARGET_STACK_COPY_MAX)
		want = TARGET_STACK_COPY_MAX;
	if (th->need_samples == 0 || ++th->need_samples > STACK_WINDOW) {
		th->stack_size = want;  /* its first need known, or a window's */
		th->need_samples = 1;
		th->need_max = used;
	} else if (want > th->stack_size) {
		th->stack_size = want;
	}
}

void target__counted(struct target *t, const struct capture *c, uint64_t cookie, size_t stack_used,
		     int far_used)
{
	if (c->unchanged)
		return;
	int blocked = c == &t->blocked && t->last_blocked && t->last_blocked->tid == c->tid;
	struct thread *th = blocked ? t->last_blocked : target_thread_find(t, c->tid);
	if (!th || !th->proc)
		return;
	if (stack_used)
		size_stack(th, stack_used);
	/* Far segments no unwind of a window used: the stack has moved on. */
	if (far_used)
		th->far_idle = 0;
	else if (th->nfar && ++th->far_idle > STACK_WINDOW)
		th->nfar = 0;
	if (cookie)
		th->last_cookie = cookie;       /* blocked or from a perf sample */
	if (!blocked || !cookie)
		return;
	th->cookie = cookie;
	th->runs = t->last_blocked_runs;
	th->line_hash = t->last_blocked_hash;
	th->last_state = c->state;
	th->idle_ticks = th->skipped = 0;
	th->every = 1;
}

/* Interrupts the threads on the stop list.  Each is captured and resumed
 * as it reports its stop (reap -> on_event_stop -> sample_stopped). */
void target__interrupt(struct target *t)
{
	target_blocked_taken(t);
	for (size_t i = 0; i < t->nstop; i++) {
		struct thread *th = t->stoplist[i];
		th->interrupt_ns = now_ns();
		th->cookie = 0;         /* it will run: its counted stack is past */
		if (ptrace(PTRACE_INTERRUPT, th->tid, 0, 0) < 0)
			continue;       /* ESRCH: exiting; its exit event will come */
		th->pending = 1;
		th->pending_ticks = 1;
		t->npending++;
	}
	t->nstop = t->nvisit = t->visit_i = 0;
}

void target__force_tick(struct target *t)
{
	t->force_next = 1;
}

void target__each_cookie(const struct target *t, void (*fn)(void *arg, uint64_t cookie), void *arg)
{
	FOR_EACH_THREAD(t, th, tmp) {
		if (th->cookie)
			fn(arg, th->cookie);
		if (th->last_cookie && th->last_cookie != th->cookie)
			fn(arg, th->last_cookie);
	}
	for (size_t i = t->delivered; i < t->ncaps; i++)
		if (t->caps[i].cookie)
			fn(arg, t->caps[i].cookie);
	if (t->blocked.cookie)
		fn(arg, t->blocked.cookie);
}

void target__forget(struct target *t, pid_t pid)
{
	FOR_EACH_THREAD(t, th, tmp) {
		if (!th->proc || th->proc->pid != pid)
			continue;
		if (th->selected && th->skipped)
			target_push_again(t, th, th->skipped, 1);
		th->skipped = 0;
		th->cookie = th->last_cookie = 0;
	}
}

int target__set_probe(struct target *t, pid_t pid, uint32_t space, const struct target_probe *p)
{
	struct process *proc = target_process_find(t, pid);
	if (!proc)
		return -ESRCH;
	proc->probe = *p;
	if (proc->probe.len > TARGET_PROBE_MAX)
		proc->probe.len = TARGET_PROBE_MAX;
	if (proc->probe.stack_max > TARGET_PROBE_STACK_MAX)
		proc->probe.stack_max = TARGET_PROBE_STACK_MAX;
	proc->probe_space = space;
	return 0;
}

int target__set_reader(struct target *t, pid_t pid, uint32_t space, target_reader_fn fn, void *arg)
{
	struct process *proc = target_process_find(t, pid);
	if (!proc)
		return -ESRCH;
	proc->reader = fn;
	proc->reader_arg = arg;
	proc->reader_space = space;
	return 0;
}

void target__stack_too_small(struct target *t, pid_t tid, size_t need, uint64_t far)
{
	struct thread *th = target_thread_find(t, tid);
	if (th && far) {
		/* A segment from a little below the word asked for (a frame's
		 * saved registers sit just below its return address; further
		 * below, the frame's own data may change all the time: Ruby's
		 * control frames), unless one holds it; the oldest goes when
		 * all are taken. */
		uint64_t a = (far & ~(uint64_t)7) - 256;
		for (int i = 0; i < th->nfar; i++)
			if (far >= th->far[i] && far - th->far[i] < TARGET_FAR_LEN)
				return;         /* it is there: read, not trusted */
		if (th->nfar == TARGET_FAR_MAX) {
			memmove(th->far, th->far + 1, (TARGET_FAR_MAX - 1) * sizeof(*th->far));
			memmove(th->far_sum, th->far_sum + 1, (TARGET_FAR_MAX - 1) * sizeof(*th->far_sum));
			th->nfar--;
		}
		th->far[th->nfar] = a;
		th->far_sum[th->nfar++] = 0;
		th->far_idle = 0;
		return;
	}
	if (!th || th->stack_size >= TARGET_STACK_COPY_MAX)
		return;
	size_t want = need > TARGET_STACK_COPY_MAX ? TARGET_STACK_COPY_MAX : need;
	want = (want + want / 2 + 4095) & ~(size_t)4095;
	if (want < 2 * th->stack_size)
		want = 2 * th->stack_size;
	th->stack_size = want < TARGET_STACK_COPY_MAX ? want : TARGET_STACK_COPY_MAX;
	/* The sizing window starts again from this need, not from the
	 * smaller ones before it (size_stack() would shrink it back). */
	if (need > th->need_max)
		th->need_max = need < TARGET_STACK_COPY_MAX ? need : TARGET_STACK_COPY_MAX;
}

void target__drop_pending(struct target *t)
{
	FOR_EACH_THREAD(t, th, tmp) {
		if (th->pending) {
			th->pending = 0;
			t->stats.lost += th->pending_ticks;
		}
	}
	t->npending = 0;
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
	target_nostop_release(t);
	/* Ticks skipped by idle threads since their last check: one more
	 * check says whether they were unchanged all along. */
	FOR_EACH_THREAD(t, th, tmp) {
		if (!th->proc || !th->cookie || !th->skipped || !th->selected)
			continue;
		target_push_again(t, th, th->skipped, target_idle_check(t, th) != 1);
		th->skipped = 0;
	}
	/* Names while the threads still exist: the processes' first.  A label
	 * with samples keeps the name it had (a rename after the last sample
	 * changes nothing). */
	for (struct process *p = t->procs; p; p = p->next) {
		proc__comm(p->pid, p->pid, p->comm);
		target_read_title(p);
	}
	FOR_EACH_THREAD(t, th, tmp) {
		if (!th->proc)
			continue;
		proc__comm(th->proc->pid, th->tid, th->name);
		if (!th->pooled && !t->slots[th->slot].used)
			target_name_changed(t, th);
		else
			target_slot_process(t, th->slot, th->proc);
	}
	/* Nothing is sampled any more: the symbolizer gets every descriptor. */
	target_close_files(t);
}

int target__ready(const struct target *t) { return t->ready; }
size_t target__alive(const struct target *t) { return t->nprocs; }
size_t target__pending(const struct target *t) { return t->npending; }
pid_t target__first_pid(const struct target *t) { return t->first_pid; }
int target__exit_status(const struct target *t) { return t->first_status; }
size_t target__nslots(const struct target *t) { return t->nslots; }
const struct target_stats *target__stats(const struct target *t) { return &t->stats; }

double target__pause_quantile(const struct target *t, double q)
{
	return hist__quantile(&t->pause, q);
}
