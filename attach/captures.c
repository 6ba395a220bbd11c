/* captures: the buffers a tick's captures are made in, and what fills
 * them whatever took them (a stop, a perf sample, a blocked thread's
 * /proc files): the runtime's read, the far parts of a deep stack, a
 * thread's last stack counted again.  attach/target.c, blocked.c and
 * nostop.c take their captures here; it calls none of them. */
#include <stdlib.h>
#include <string.h>
#include <sys/uio.h>

#include "attach/internal.h"
#include "util/intern.h"
#include "util/xalloc.h"

struct capture *target_next_capture(struct target *t)
{
	if (t->ncaps == t->caps_cap) {
		size_t cap = t->caps_cap ? t->caps_cap * 2 : 16;
		t->caps = xrealloc(t->caps, cap * sizeof(*t->caps));
		memset(t->caps + t->caps_cap, 0, (cap - t->caps_cap) * sizeof(*t->caps));
		t->caps_cap = cap;
	}
	return &t->caps[t->ncaps];
}

void target_read_runtime(const struct thread *th, struct capture *c, int running)
{
	const struct process *p = th->proc;
	c->rt_len = 0;
	c->rt_after = 0;
	if (!p->reader || p->reader_space != p->space)
		return;
	if (!c->rt_data)
		c->rt_data = xmalloc(TARGET_RT_MAX);
	c->rt_len = p->reader(p->reader_arg, p->pid, th->tid, running, c->rt_data, TARGET_RT_MAX);
	c->rt_after = running && c->rt_len > 0;
}

void target_read_far(struct target *t, struct thread *th, struct capture *c, int check)
{
	c->nfar = 0;
	if (!th->nfar)
		return;
	if (!c->far)
		c->far = xmalloc((size_t)TARGET_FAR_MAX * TARGET_FAR_LEN);
	uint64_t end = c->stack_addr + c->stack_len;
	for (int i = 0; i < th->nfar; i++) {
		uint64_t a = th->far[i];
		if (a + TARGET_FAR_LEN <= end || a < c->stack_addr ||
		    a - c->stack_addr > TARGET_FAR_SPAN)
			continue;       /* in the copy, below SP, or beyond the cap */
		unsigned char *buf = c->far + (size_t)c->nfar * TARGET_FAR_LEN;
		struct iovec local = { buf, TARGET_FAR_LEN }, remote = { (void *)a, TARGET_FAR_LEN };
		ssize_t n = process_vm_readv(th->tid, &local, 1, &remote, 1, 0);
		size_t len = n > 0 ? (size_t)n : 0;
		/* A read cut short ended at the end of the stack's mapping: at
		 * the top of a thread's stack glibc keeps its struct pthread,
		 * whose rseq area (its last 32 bytes) the kernel rewrites as the
		 * thread moves between CPUs.  Not a frame: not compared. */
		size_t cmp = len < TARGET_FAR_LEN && len > 64 ? len - 64 : len;
		uint64_t sum = cmp ? hash_bytes(buf, cmp) : 0;
		if (check && sum != th->far_sum[i]) {
			t->stats.far_changed++;
			len = 0;
		}
		th->far_sum[i] = sum;
		c->far_addr[c->nfar] = a;
		c->far_len[c->nfar] = len;
		c->nfar++;
	}
	if (c->nfar)
		t->stats.far_read++;
}

void target_again_capture(struct capture *c, const struct thread *th, uint32_t ticks, int uncertain)
{
	c->pid = th->proc->pid;
	c->tid = th->tid;
	c->slot = th->slot;
	c->space = th->proc->space;
	c->partial_regs = 1;
	c->no_stop = 0;
	c->nkernel = 0;
	c->stack_len = c->rt_len = 0;
	c->rt_after = 0;
	c->nfar = 0;
	c->pause_ns = 0;
	c->ticks = ticks;
	c->state = th->last_state;
	c->cpu_ns = 0;
	c->unchanged = 1;
	c->uncertain = uncertain;
	c->cookie = th->cookie;
}

void target_push_again(struct target *t, struct thread *th, uint32_t ticks, int uncertain)
{
	if (!th->cookie || !ticks || !th->proc)
		return;
	target_again_capture(target_next_capture(t), th, ticks, uncertain);
	t->ncaps++;
	t->stats.samples_unchanged += ticks;
	if (uncertain)
		t->stats.backoff_uncertain += ticks;
	else
		t->stats.backoff_ticks += ticks;
}

int target_push_last(struct target *t, struct thread *th, uint32_t ticks)
{
	if (!th->last_cookie || !ticks || !th->proc)
		return -1;
	struct capture *c = target_next_capture(t);
	target_again_capture(c, th, ticks, 1);
	c->cookie = th->last_cookie;
	t->ncaps++;
	t->stats.samples_unchanged += ticks;
	t->stats.backoff_uncertain += ticks;
	return 0;
}
