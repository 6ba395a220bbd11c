/* nostop: running threads captured without a stop.  A ptrace stop makes a
 * call with a timeout return EINTR (SO_RCVTIMEO sockets, epoll_wait,
 * sem_timedwait...): a thread found on a CPU at a tick is instead counted
 * from the registers and stack its perf stream copied at its interrupt
 * (attach/perf.h), unwound offline like any capture.
 *
 * A capture's steps, per thread and tick (target__next_blocked):
 *   1. its ring is read (target_nostop_look): ticks it owes (below) are
 *      counted by the first sample taken after them; the samples around
 *      this tick's instant are kept for step 3;
 *   2. blocked: sampled from /proc as ever (attach/blocked.c), with any
 *      ticks still owed (no sample came: it ran less than a sample period);
 *   3. on a CPU: the nearer of the samples around the tick, if within 1.5
 *      sample periods of the thread's CPU time of it (nearest()), stands
 *      for this tick; otherwise the tick is owed to its next sample, never
 *      to a stop.
 * Wall-clock time stays exact in count (every thread, every tick); in
 * place it is "the sample nearest the tick, within an eighth of a period
 * of CPU time and a half", or the next one for an owed tick (--stats
 * counts them).
 *
 * The kernel copies PERF_STACK_BYTES of stack.  A deeper stack is read on
 * from the target's memory at once, starting OVERLAP bytes below the end
 * of the kernel's copy: if those bytes differ from the copy's, the thread
 * has since returned past that point and the frames beyond are not those
 * of the sample: the stack is cut there (a partial stack, counted), never
 * continued with frames of another moment. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/uio.h>
#include <time.h>

#include "attach/internal.h"
#include "attach/perf.h"
#include "util/timeutil.h"
#include "util/xalloc.h"

#define OVERLAP 256
/* A thread owes at most this many ticks: one found on a CPU that often
 * without a sample between (bursts shorter than a period, each caught on
 * a CPU; or, on a loaded machine, runnable but kept off every CPU, where
 * no sample comes: seen in a thread asleep in nanosleep or in
 * pthread_join) has them counted at its last counted stack, uncertain, as
 * backoff's uncertain ticks are (target_push_last), rather than held for
 * ever; lost only if it has none (a thread never captured blocked).  Wall-clock time stays whole. */
#define OWED_MAX 64

/* TH's owed ticks, no sample having come for them: at its last stack. */
static void owed_at_last(struct target *t, struct thread *th)
{
	uint32_t n = th->owed;
	th->owed = 0;
	if (!n)
		return;
	if (target_push_last(t, th, n) == 0)
		t->stats.perf_owed_last += n;
	else
		t->stats.lost += n;
}

/* A running thread's sample period, in its CPU time (attach/perf.h). */
static uint64_t every(const struct target *t)
{
	uint64_t e = t->cfg.period_ns / PERF_PER_TICK;
	return e < PERF_PERIOD_MIN_NS ? PERF_PERIOD_MIN_NS : e;
}

void target_nostop_init(struct target *t)
{
	t->capture = TARGET_CAPTURE_PTRACE;
	t->stats.capture_perf = 0;
	if (t->cfg.capture == TARGET_CAPTURE_PTRACE)
		return;
	int r = perf__permitted(every(t), PERF_STACK_BYTES);
	if (r < 0) {
		t->perf_refused = -r;
		char why[200];
		if (t->cfg.capture == TARGET_CAPTURE_AUTO)
			target_note(t, "capturing by ptrace stops: a thread in a call with a timeout "
				    "can see EINTR (perf events not permitted here: %s)",
				    proc__perf_refusal(-r, why, sizeof(why)));
		return;
	}
	t->capture = TARGET_CAPTURE_PERF;
	t->stats.capture_perf = 1;
}

/* The process's probe, if it is for its address space now. */
static const struct target_probe *probe_of(const struct thread *th)
{
	const struct process *p = th->proc;
	return p && p->probe.len && p->probe_space == p->space ? &p->probe : NULL;
}

/* Whether TH's running captures come from its perf samples.  A runtime's
 * reader (CPython's frames) is called at the tick instead of at a stop,
 * right after the thread's sample is chosen (capture.rt_after).  A
 * runtime's probe (Go's goroutine behind a system stack) is read in a
 * stop: read after a sample, the goroutine has most often moved on (a GC
 * assist, a stack growth last microseconds) and its frames are lost
 * (goalloc: 86% of samples rooted against 99.5% with stops).  So a thread
 * of a process with a probe is stopped only where its sample says it is
 * on its system stack for a goroutine (target_probe.r14_hops,
 * probe_wants_stop()); every thread, if the probe cannot tell. */
int target_nostop(const struct target *t, const struct thread *th)
{
	const struct target_probe *p = probe_of(th);
	return t->capture == TARGET_CAPTURE_PERF && th->proc && (!p || p->r14_hops);
}

static int word_at(pid_t tid, uint64_t addr, uint64_t *v)
{
	struct iovec l = { v, 8 }, r = { (void *)addr, 8 };
	return addr && addr % 8 == 0 && process_vm_readv(tid, &l, 1, &r, 1, 0) == 8 ? 0 : -1;
}

/* Sample S of TH is of a thread on its system stack for a goroutine (see
 * target_probe.r14_hops): a stop is wanted, for the probe. */
static int probe_wants_stop(const struct thread *th, const struct perf_sample *s)
{
	const struct target_probe *p = probe_of(th);
	uint64_t g = s->regs.r14, m, g0, curg;
	if (!p || !p->r14_hops)
		return 0;
	(void)curg;
	return word_at(th->tid, g + p->hop[0], &m) == 0 && word_at(th->tid, m, &g0) == 0 && g0 == g;
}

/* Copies the live stack on past the kernel's copy: C holds LEN bytes from
 * SP; EXT more are read if the OV bytes before LEN (OVERLAP, or all of a
 * shorter copy) still match.  Where nothing follows them (the mapping
 * ends there), that end is kept: no read on past it again. */
static void read_on(struct target *t, struct thread *th, struct capture *c, size_t len, size_t ext)
{
	unsigned char before[OVERLAP];
	size_t ov = len < OVERLAP ? len : OVERLAP;
	uint64_t from = c->stack_addr + len - ov;
	struct iovec local[2] = { { before, ov }, { c->stack + len, ext } };
	struct iovec remote = { (void *)from, ov + ext };
	ssize_t n = process_vm_readv(th->tid, local, 2, &remote, 1, 0);
	if (n < (ssize_t)ov || memcmp(before, c->stack + len - ov, ov) != 0) {
		t->stats.perf_cut++;
		c->stack_len = c->stack_want = len;     /* ends there: a short copy */
		return;
	}
	if ((size_t)n == ov) {
		th->stack_end = c->stack_addr + len;    /* the mapping's end */
		c->stack_want = len;
		return;
	}
	t->stats.perf_extended++;
	c->stack_len = len + (size_t)(n - ov);
	c->stack_want = len + ext;                      /* less: the mapping ended */
}

/* A capture of TH from sample S, counting TICKS. */
static void push_sample(struct target *t, struct thread *th, const struct perf_sample *s,
			uint32_t ticks)
{
	struct capture *c = target_next_capture(t);
	/* Read on only for a thread whose samples lately needed more than
	 * the kernel copied, or whose need is not known yet (its first
	 * sample: a ptrace capture's size then, so that a deep stack's first
	 * sample is as whole as a stop's would be).  The kernel's copy ends
	 * short of what was asked where the mapping ends, but also where a
	 * page of the stack is not present (it copies without faulting:
	 * Ruby's VM stack, alloca'd and touched only in part; a big local
	 * array never written, below main's frame: 128 bytes copied of
	 * tests/bin/swapper's stack in one layout of 15, and no caller of
	 * main): the read on tells the two apart (it ends at the mapping's
	 * end, which is kept: not read on again). */
	int at_end = th->stack_end && s->regs.rsp + s->stack_len >= th->stack_end;
	int deep = s->stack_len >= 8 && !at_end &&
		   (th->need_max == 0 || th->need_max + OVERLAP > s->stack_len);
	size_t ext = deep && th->stack_size > s->stack_len ? th->stack_size - s->stack_len : 0;
	size_t want = s->stack_len + ext > s->stack_asked ? s->stack_len + ext : s->stack_asked;
	/* The buffer holds at least stack_want bytes: target.c's capture()
	 * takes stack_want as its size. */
	if (!c->stack || c->stack_want < want) {
		free(c->stack);
		c->stack = xmalloc(want);
	}
	c->regs = s->regs;
	c->partial_regs = 0;
	c->no_stop = 1;
	c->unchanged = c->uncertain = 0;
	c->cookie = 0;
	c->stack_addr = s->regs.rsp;
	memcpy(c->stack, s->stack, s->stack_len);
	c->stack_len = s->stack_len;
	/* (a copy that ends at the mapping's end is whole: not short) */
	c->stack_want = at_end || s->stack_len < 8 ? s->stack_asked : s->stack_len;
	uint64_t cut = t->stats.perf_cut;
	if (ext)
		read_on(t, th, c, s->stack_len, ext);
	/* Far segments, but not past a seam that changed: the frames beyond
	 * it are not those of the sample. */
	c->nfar = 0;
	if (t->stats.perf_cut == cut)
		target_read_far(t, th, c, 1);
	c->pid = th->proc->pid;
	c->tid = th->tid;
	c->slot = th->slot;
	c->space = th->proc->space;
	c->pause_ns = 0;
	c->ticks = ticks;
	c->state = 'R';
	c->syscall = -1;
	c->probe_len = c->probe_stack_len = 0;
	c->probe_ptrs = 0;
	target_read_runtime(th, c, 1);  /* now, a little after the sample */
	c->nkernel = s->nkips < TARGET_KSTACK_MAX ? s->nkips : TARGET_KSTACK_MAX;
	memcpy(c->kernel_ips, s->kips, (size_t)c->nkernel * sizeof(*c->kernel_ips));
	t->ncaps++;
	t->stats.samples_perf++;
}

void target_nostop_look(struct target *t, struct thread *th)
{
	const struct perf_sample *before, *after;
	th->perf_before = th->perf_after = NULL;
	if (!th->perf)
		return;
	if (th->owed) {
		perf__read(th->perf, th->owed_since, &before, &after);
		if (after) {
			push_sample(t, th, after, th->owed);
			th->owed = 0;
		}
	}
	perf__read(th->perf, t->tick_ns, &th->perf_before, &th->perf_after);
	t->stats.perf_nostack += perf__nostack(th->perf);
	t->stats.perf_dropped += perf__dropped(th->perf);
	/* A newborn at its first tick: from now on, the usual period. */
	if (th->perf_newborn && perf__every(th->perf, every(t)) == 0)
		th->perf_newborn = 0;
}

static int open_stream(struct target *t, struct thread *th, uint64_t every_ns)
{
	if (th->perf_failed)
		return -1;
	/* Samples due while the thread is in the kernel carry its user
	 * registers and stack at its entry there: where it waits or works in
	 * a call, what a wall-clock profile shows.  Excluding them (all an
	 * unprivileged user may ask with perf_event_paranoid 2) leaves a
	 * thread busy in system calls with older samples (owed ticks). */
	int r = perf__open(th->tid, every_ns, PERF_STACK_BYTES, !t->user_only,
			   t->cfg.kernel_stacks, &th->perf);
	if ((r == -EACCES || r == -EPERM) && !t->user_only) {
		t->user_only = 1;
		r = perf__open(th->tid, every_ns, PERF_STACK_BYTES, 0, 0, &th->perf);
	}
	if (r == 0)
		return 0;
	th->perf = NULL;
	if (r != -ESRCH) {
		th->perf_failed = 1;
		if (!t->perf_refused) {
			t->perf_refused = -r;
			target_note(t, "a perf stream could not be opened for thread %d (%s): such "
				    "threads are captured by ptrace stops", th->tid, strerror(-r));
		}
	}
	return -1;
}

/* The sample that stands for TH at this tick, or NULL: of the samples
 * around the tick, the nearer, if it is within 1.5 sample periods of the
 * thread's CPU time of the tick.  One taken after the tick is that close
 * if it is in wall time (CPU time runs no faster); one taken before is if
 * the thread ran that little from it to the next sample, or to now.  The
 * clock samples every period of CPU time, so a thread that runs has one
 * that close, unless it is new or its last one was due in the kernel where
 * those are not kept. */
static const struct perf_sample *nearest(struct target *t, struct thread *th)
{
	const struct perf_sample *b = th->perf_before, *a = th->perf_after;
	uint64_t e = every(t), at = t->tick_ns, cpu = 0;
	uint64_t window = e + e / 2;
	int a_near = a && a->time_ns - at <= window;
	if (a_near && (!b || a->time_ns - at < at - b->time_ns))
		return a;
	if (b && !a && perf__cpu_ns(th->perf, &cpu) < 0)
		return a_near ? a : NULL;
	if (b && ((a ? a->cpu_ns : cpu) < b->cpu_ns || (a ? a->cpu_ns : cpu) - b->cpu_ns <= window))
		return b;
	return a_near ? a : NULL;
}

void target_nostop_born(struct target *t, struct thread *th)
{
	if (target_nostop(t, th) && !th->perf && open_stream(t, th, PERF_NEWBORN_NS) == 0)
		th->perf_newborn = PERF_NEWBORN_NS < every(t);
}

int target_nostop_running(struct target *t, struct thread *th)
{
	if (!th->perf && open_stream(t, th, every(t)) < 0) {
		t->stats.perf_unavailable++;
		return -1;
	}
	/* Near this tick in CPU time is near the ticks it still owes too:
	 * none has a sample after it, so it has not run a period since. */
	const struct perf_sample *s = nearest(t, th);
	if (s && probe_wants_stop(th, s)) {
		t->stats.probe_stops++;
		return -1;              /* stopped, its ticks owed settled by that capture */
	}
	if (s) {
		push_sample(t, th, s, 1 + th->owed);
		th->owed = 0;
		return 0;
	}
	if (!th->owed)
		th->owed_since = t->tick_ns;
	th->owed++;
	t->stats.perf_owed++;
	if (th->owed >= OWED_MAX)
		owed_at_last(t, th);
	return 0;
}

void target_nostop_need_regs(struct target *t, struct thread *th, const struct capture *b)
{
	const struct perf_sample *s;
	target_blocked_taken(t);
	/* Preempted where it runs (no call: -1), not blocked: its sample from
	 * its last time on a CPU is where it was, within a period. */
	if (b->syscall == -1 && th->perf && (s = nearest(t, th))) {
		push_sample(t, th, s, b->ticks);
		return;
	}
	struct capture *c = target_next_capture(t);
	unsigned char *stack = c->stack;
	size_t cap = c->stack_want;
	unsigned char *rt = c->rt_data, *ps = c->probe_stack, *far = c->far;
	*c = *b;
	c->rt_data = rt;
	c->probe_stack = ps;
	c->far = far;
	if (b->nfar) {
		if (!c->far)
			c->far = xmalloc((size_t)TARGET_FAR_MAX * TARGET_FAR_LEN);
		memcpy(c->far, b->far, (size_t)b->nfar * TARGET_FAR_LEN);
	}
	/* The runtime's read made between the two looks (the thread had
	 * not moved) holds for it. */
	c->rt_len = 0;
	if (b->rt_len && b->rt_len <= TARGET_RT_MAX) {
		if (!c->rt_data)
			c->rt_data = xmalloc(TARGET_RT_MAX);
		memcpy(c->rt_data, b->rt_data, b->rt_len);
		c->rt_len = b->rt_len;
	}
	c->probe_len = c->probe_stack_len = 0;
	if (!stack || cap < b->stack_want) {
		free(stack);
		stack = xmalloc(b->stack_want ? b->stack_want : 1);
	}
	c->stack = stack;
	memcpy(c->stack, b->stack, b->stack_len);
	c->no_stop = 1;
	c->nkernel = 0;
	t->ncaps++;
	t->stats.need_regs_partial++;
}

void target_nostop_settle(struct target *t, struct thread *th, struct capture *c)
{
	if (!th->owed)
		return;
	c->ticks += th->owed;
	t->stats.perf_owed_carried += th->owed;
	th->owed = 0;
}

void target_nostop_exec(struct target *t, struct thread *th)
{
	/* A stream anew, on the task that carries the TID now: when a thread
	 * other than the leader called exec, it took the leader's TID, and
	 * the stream opened on that TID was the old leader's, gone with it
	 * (its samples would never come: every tick owed, then lost).  The
	 * old image's samples go with the old stream. */
	perf__free(th->perf);
	th->perf = NULL;
	th->perf_failed = 0;
	th->stack_end = 0;              /* the new image's stack */
	th->perf_before = th->perf_after = NULL;
	target_nostop_born(t, th);
	t->stats.lost += th->owed;
	th->owed = 0;
}

void target_nostop_gone(struct target *t, struct thread *th)
{
	t->stats.lost += th->owed;
	th->owed = 0;
	perf__free(th->perf);
	th->perf = NULL;
	th->perf_before = th->perf_after = NULL;
}

/* At the end (and for --dump's one tick) a thread that owes ticks has its
 * next sample waited for, 250 ms at most: a --dump of a busy thread is its
 * first sample after the tick, and on a loaded machine a thread can wait
 * that long for a CPU (at 50 ms a --dump left out a computing thread's
 * stack in a busy run). */
#define RELEASE_WAIT_NS (250 * 1000000ull)

void target_nostop_release(struct target *t)
{
	uint64_t deadline = now_ns() + RELEASE_WAIT_NS;
	for (;;) {
		size_t left = 0;
		FOR_EACH_THREAD(t, th, tmp) {
			if (!th->owed || !th->proc)
				continue;
			target_nostop_look(t, th);
			left += th->owed != 0;
		}
		if (!left || now_ns() >= deadline)
			break;
		struct timespec ms = { 0, 1000000 };
		nanosleep(&ms, NULL);
	}
	FOR_EACH_THREAD(t, th, tmp)
		owed_at_last(t, th);
}
