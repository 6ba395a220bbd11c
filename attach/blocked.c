/* Threads blocked in a system call, sampled without a stop: a stop would
 * make calls such as epoll_wait return EINTR to the target.  Their SP and
 * PC come from /proc, their stack is copied while they stay blocked, and
 * the copy is kept only if /proc says they did not move meanwhile. */
#include <stdlib.h>
#include <string.h>
#include <sys/uio.h>

#include "attach/internal.h"
#include "attach/proc.h"
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
 * 0 if it is running, -1 if /proc could not tell.  schedstat's third
 * field counts its runs on a CPU. */
static int blocked_snapshot(struct thread *th, struct snapshot *s)
{
	char sched[128];
	pid_t pid = th->proc->pid;
	ssize_t n = proc__task_file(pid, th->tid, "syscall", &th->sys_fd, s->line, sizeof(s->line));
	if (n <= 0)
		return -1;
	int r = proc__parse_syscall(s->line, &s->sp, &s->pc);
	if (r <= 0)
		return r;
	if (proc__task_file(pid, th->tid, "schedstat", &th->sched_fd, sched, sizeof(sched)) <= 0 ||
	    proc__parse_schedstat(sched, &s->cpu_ns, &s->runs) < 0)
		return -1;
	return 1;
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
	return n > 0 && blocked_snapshot(th, &after) == 1 && same_snapshot(before, &after) ? 0 : -1;
}

/* TH's state letter from its stat file, or '?'. */
static char read_state(struct thread *th)
{
	char buf[512];
	struct proc_stat st;
	if (proc__task_file(th->proc->pid, th->tid, "stat", &th->stat_fd, buf, sizeof(buf)) <= 0 ||
	    proc__parse_stat(buf, &st) < 0)
		return '?';
	return st.state;
}

/* Tries to sample TH without stopping it; returns the capture, or NULL. */
const struct capture *target_sample_blocked(struct target *t, struct thread *th)
{
	struct snapshot s;
	th->stop_state = 'R';
	for (int attempt = 0; attempt < 2; attempt++) {
		if (blocked_snapshot(th, &s) != 1)
			return NULL;
		if (capture_blocked(t, th, &s) == 0) {
			struct capture *c = &t->blocked;
			c->ticks = 1;
			c->state = read_state(th);
			c->syscall = atoi(s.line);
			/* CPU time belongs where the thread ran, not where it now
			 * sleeps: it stays on the thread's account until a sample
			 * finds it running. */
			c->cpu_ns = 0;
			t->last_blocked = th;
			t->last_blocked_cpu = s.cpu_ns;
			return c;
		}
		t->stats.blocked_retries++;
	}
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

