/* Threads blocked in a system call, sampled without a stop: a stop would
 * make calls such as epoll_wait return EINTR to the target.  Their SP and
 * PC come from /proc, their stack is copied while they stay blocked, and
 * the copy is kept only if /proc says they did not move meanwhile.
 *
 * Most threads of a server wait, tick after tick, where they waited at
 * the tick before.  Such a thread costs two small reads here and nothing
 * else: see target_idle_check(). */
#include <stdlib.h>
#include <string.h>
#include <sys/uio.h>

#include "attach/internal.h"
#include "attach/proc.h"
#include "util/intern.h"
#include "util/xalloc.h"

/* What a blocked thread looks like from /proc, before and after its stack
 * is copied: if nothing changed, the copy is of the stack it is blocked on. */
struct snapshot {
	char line[256];                 /* the syscall file */
	uint64_t runs;                  /* schedstat: times it was scheduled in */
	uint64_t cpu_ns;                /* schedstat: CPU time */
	uint64_t sp, pc;
};

/* ---- blocked threads: sampled without a stop ---------------------------- */

/* Fills S if TH is blocked (in a system call, or stopped); returns 1 then,
 * 0 if it is running, -1 if /proc could not be read, -2 if its line made
 * no sense.  The syscall line is read first: schedstat's count, read
 * after, then covers the moment the line was read. */
static int blocked_snapshot(struct target *t, struct thread *th, struct snapshot *s)
{
	char sched[128];
	ssize_t n = target_read(t, th, TF_SYSCALL, s->line, sizeof(s->line));
	if (n <= 0)
		return -1;
	int r = proc__parse_syscall(s->line, &s->sp, &s->pc);
	if (r <= 0)
		return r == 0 ? 0 : -2;
	if (target_read(t, th, TF_SCHEDSTAT, sched, sizeof(sched)) <= 0)
		return -1;
	return proc__parse_schedstat(sched, &s->cpu_ns, &s->runs) < 0 ? -2 : 1;
}

static int same_snapshot(const struct snapshot *a, const struct snapshot *b)
{
	return a->runs == b->runs && strcmp(a->line, b->line) == 0;
}

static uint64_t line_hash(const struct snapshot *s)
{
	return hash_bytes(s->line, strlen(s->line));
}

/* ---- idle threads: counted again ------------------------------------------
 * Why counting the last stack again is exact.  schedstat's third field is
 * the kernel's sched_info.pcount: it grows by one each time the scheduler
 * switches to the thread (sched_info_arrive(), on every context switch in).
 * The thread's last counted capture was taken while it was off every CPU
 * (the syscall file shows a line only for a thread that is not running:
 * the kernel's task_current_syscall() waits until it is inactive, and
 * reports "running" otherwise) and while pcount kept one value, read
 * before and after the copy.  If pcount still has that value, the thread
 * has not been on a CPU since: it has executed no instruction, so its
 * registers, its user stack (its own writes; another thread writing into
 * this stack's live frames would be a bug of the target), its system call
 * and its arguments are those of that capture.  Its state letter can only
 * have changed by a wake-up, which makes it runnable, and the syscall
 * file, read before pcount, then says "running": so that line must still
 * show it blocked, and show the same call.  The same registers and stack
 * give the same unwind, and the same labels the same key: the stack the
 * sampler counted then is counted again, without copying or unwinding.
 * (A thread woken but still waiting for a CPU has not run either, but is
 * runnable now: it takes the full path, like any running thread.)
 *
 * Backoff.  A thread found unchanged N ticks in a row is next checked
 * after 1 + N / IDLE_BACKOFF_DIV ticks (at most IDLE_BACKOFF_MAX).  A check
 * that finds pcount unchanged proves the ticks since the last check
 * unchanged too (pcount never decreases), so they are counted exactly.
 * One that finds it moved cannot tell at which of those ticks it moved:
 * they are counted at its last stack, where it was at the first of them,
 * and reported as uncertain (target_stats.backoff_uncertain). */

static int is_unchanged(const struct thread *th, const struct snapshot *s)
{
	/* pcount 0: schedstat without scheduler statistics ("0 0 0"). */
	return th->cookie && s->runs != 0 && s->runs == th->runs && line_hash(s) == th->line_hash;
}

/* TH was found unchanged: it counts for the ticks skipped since its last
 * check and this one. */
static const struct capture *idle_sample(struct target *t, struct thread *th)
{
	struct capture *c = &t->blocked;
	uint32_t ticks = th->skipped + 1;
	target_again_capture(c, th, ticks, 0);
	t->stats.samples_unchanged += ticks;
	t->stats.backoff_ticks += th->skipped;
	th->skipped = 0;
	th->idle_ticks += ticks;
	th->every = 1 + th->idle_ticks / IDLE_BACKOFF_DIV;
	if (th->every > IDLE_BACKOFF_MAX)
		th->every = IDLE_BACKOFF_MAX;
	return c;
}

int target_idle_check(struct target *t, struct thread *th)
{
	struct snapshot s;
	if (!th->cookie)
		return 0;
	int r = blocked_snapshot(t, th, &s);
	if (r == -1)
		return -1;
	return r == 1 && is_unchanged(th, &s);
}

/* ---- frame pointers -------------------------------------------------------
 * Code built with frame pointers (and -O0 code) needs RBP to unwind, which
 * /proc does not give: such a blocked thread is stopped, which makes
 * epoll_wait and the like return EINTR.  Its stop is kept (target_keep_fp)
 * and reused while the thread blocks at the same place: the same system
 * call with the same arguments, the same SP and PC, and the same stack
 * bytes from SP up to and including the frame RBP points to (the saved RBP
 * and return address).  RBP is callee-saved: the system call and the
 * library code between it and the frame-pointer function leave it as that
 * function set it, which its prologue did from the SP of its entry; with
 * the same PCs and the same stack up to that frame, it is the same frame,
 * and a function that moved its frame (alloca) would have moved the words
 * compared at RBP.  One stop per blocking site, not per tick. */

void target_keep_fp(struct thread *th, const struct capture *c)
{
	uint64_t sp = c->regs.rsp, end = c->regs.rbp + 16;
	th->want_fp = 0;
	free(th->fp);
	th->fp = NULL;
	if (end <= sp || end - sp > FP_REGION_MAX || sp < c->stack_addr ||
	    end > c->stack_addr + c->stack_len)
		return;         /* RBP is not a frame above SP: nothing to reuse */
	th->fp = xmalloc(sizeof(*th->fp) + (end - sp));
	th->fp->regs = c->regs;
	th->fp->len = end - sp;
	memcpy(th->fp->bytes, c->stack + (sp - c->stack_addr), th->fp->len);
}

/* The line's system call number and six arguments are those of the stop. */
static int same_call(const char *line, const struct user_regs_struct *r)
{
	const uint64_t want[7] = { r->orig_rax, r->rdi, r->rsi, r->rdx, r->r10, r->r8, r->r9 };
	char *end;
	const char *p = line;
	for (int i = 0; i < 7; i++) {
		uint64_t v = strtoull(p, &end, i == 0 ? 10 : 16);
		if (end == p || v != want[i])
			return 0;
		p = end;
	}
	return 1;
}

/* C, a blocked capture of TH, gets the registers of TH's kept stop if it
 * is blocked where that stop was (see above). */
static void reuse_fp(struct target *t, const struct thread *th, const struct snapshot *s,
		     struct capture *c)
{
	const struct fp_frame *f = th->fp;
	if (!f || f->regs.rsp != s->sp || f->regs.rip != s->pc || !same_call(s->line, &f->regs))
		return;
	uint64_t off = s->sp - c->stack_addr;
	if (off + f->len > c->stack_len || memcmp(c->stack + off, f->bytes, f->len) != 0)
		return;
	c->regs.rbx = f->regs.rbx;
	c->regs.rbp = f->regs.rbp;
	c->regs.r12 = f->regs.r12;
	c->regs.r13 = f->regs.r13;
	c->regs.r14 = f->regs.r14;
	c->regs.r15 = f->regs.r15;
	c->partial_regs = 0;
	t->stats.fp_reused++;
}

/* ---- the full path ----------------------------------------------------------- */

/* Copies a blocked thread's stack into t->blocked.  Returns 0 if the thread
 * stayed blocked at the same place throughout, so the copy is consistent;
 * -1 if it moved, -2 if /proc could not be read after. */
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
	c->no_stop = 0;
	c->nkernel = 0;
	c->unchanged = c->uncertain = 0;
	c->cookie = 0;
	c->stack_want = th->stack_size;
	c->nfar = 0;
	c->stack_addr = before->sp - TARGET_RED_ZONE;
	struct iovec local = { c->stack, th->stack_size };
	struct iovec remote = { (void *)c->stack_addr, th->stack_size };
	ssize_t n = process_vm_readv(th->tid, &local, 1, &remote, 1, 0);
	c->stack_len = n > 0 ? (size_t)n : 0;
	c->pid = th->proc->pid;
	c->tid = th->tid;
	c->slot = th->slot;
	c->space = th->proc->space;
	c->pause_ns = 0;
	if (n <= 0)
		return -1;
	target_read_far(t, th, c, 0);
	target_read_runtime(th, c, 0);
	int r = blocked_snapshot(t, th, &after);
	if (r == -1)
		return -2;
	return r == 1 && same_snapshot(before, &after) ? 0 : -1;
}

/* TH's state letter from its stat file, or '?'. */
static char read_state(struct target *t, struct thread *th)
{
	char buf[512];
	struct proc_stat st;
	if (target_read(t, th, TF_STAT, buf, sizeof(buf)) <= 0 || proc__parse_stat(buf, &st) < 0)
		return '?';
	return st.state;
}

/* TH's counted stack is no longer known to be its stack.  Ticks skipped
 * since its last check are handed out first (uncertain: it moved in
 * them); returns that capture, or NULL if there were none. */
static const struct capture *forget(struct target *t, struct thread *th)
{
	uint32_t skipped = th->skipped;
	const struct capture *c = NULL;
	if (th->cookie && skipped) {
		target_again_capture(&t->blocked, th, skipped, 1);
		t->stats.samples_unchanged += skipped;
		t->stats.backoff_uncertain += skipped;
		c = &t->blocked;
	}
	th->cookie = 0;
	th->skipped = th->idle_ticks = 0;
	th->every = 1;
	return c;
}

/* Samples TH without stopping it.  Returns the capture, or NULL with *WHAT
 * saying why: BLOCKED_STOP (it runs: stop it), BLOCKED_LOST (/proc could
 * not be read: never a stop for that, a blocked thread would see EINTR),
 * BLOCKED_SKIP (renamed to a name not wanted).  With a capture, *WHAT is
 * BLOCKED_AGAIN when it only hands out TH's skipped ticks: TH itself is
 * still to be sampled. */
const struct capture *target_sample_blocked(struct target *t, struct thread *th, int *what)
{
	struct snapshot s;
	*what = BLOCKED_STOP;
	th->stop_state = 'R';
	int r = blocked_snapshot(t, th, &s);
	if (r == -1) {
		*what = BLOCKED_LOST;
		return NULL;
	}
	if (r == 1 && is_unchanged(th, &s))
		return idle_sample(t, th);
	const struct capture *c = forget(t, th);
	if (c) {
		*what = BLOCKED_AGAIN;
		return c;
	}
	if (r == 1 && target_check_name(t, th, s.runs) && !th->selected) {
		*what = BLOCKED_SKIP;
		return NULL;
	}
	for (int attempt = 0; r == 1 && attempt < 2; attempt++) {
		if (attempt > 0 && (r = blocked_snapshot(t, th, &s)) != 1)
			break;
		int e = capture_blocked(t, th, &s);
		if (e == 0) {
			struct capture *w = &t->blocked;
			w->ticks = 1;
			w->state = read_state(t, th);
			w->syscall = atoi(s.line);
			/* CPU time belongs where the thread ran, not where it now
			 * sleeps: it stays on the thread's account until a sample
			 * finds it running. */
			w->cpu_ns = 0;
			reuse_fp(t, th, &s, w);
			t->last_blocked = th;
			t->last_blocked_cpu = s.cpu_ns;
			t->last_blocked_runs = s.runs;
			t->last_blocked_hash = line_hash(&s);
			return w;
		}
		if (e == -2) {
			r = -1;
			break;
		}
		t->stats.blocked_retries++;
	}
	if (r == -1)
		*what = BLOCKED_LOST;
	return NULL;
}

/* The caller took the last blocked capture as it was. */
void target_blocked_taken(struct target *t)
{
	if (!t->last_blocked)
		return;
	t->last_blocked->cpu_ns = t->last_blocked_cpu;
	t->stats.samples_blocked++;
	t->last_blocked = NULL;
}
