/* A capture taken: unwound, given to its runtime's view, counted.  One
 * capture's path, in order (sampler_capture()):
 *   1. its runtime's view says under which label it counts, or not at all;
 *   2. an unchanged capture counts its last stack again (take_again());
 *   3. --no-idle leaves out a thread that sleeps;
 *   4. the unwind, over the space's current module table (re-read once if
 *      a PC falls outside every module: a library loaded since);
 *   5. a stack that jumped to another (a Go system stack) is made whole by
 *      its runtime;
 *   6. its runtime's frames are merged in (CPython's);
 *   7. its kernel frames are put under it (--kernel-stacks: a blocked
 *      thread's from /proc, a running one's from its perf sample);
 *   8. it is counted, and the target told what to count again. */
#include "sample/internal.h"
#include "sample/runtime.h"

#include <errno.h>
#include <string.h>

#include "attach/proc.h"
#include "unwind/unwinder.h"

static enum unwind_status unwind(struct sampler *s, const struct capture *c, size_t *depth,
				 uint32_t *space)
{
	struct space *sp = sampler_due_scan(s, sampler_space_for(s, c->space, c->pid), c->space, c->pid);
	if (!sp->uw)
		s->loop.failure = "cannot make libunwind's address space (out of memory?)";
	struct unwind_far far[TARGET_FAR_MAX];
	for (int i = 0; i < c->nfar; i++)
		far[i] = (struct unwind_far){ c->far_addr[i], c->far + (size_t)i * TARGET_FAR_LEN,
					      c->far_len[i] };
	struct unwind_input in = { &c->regs, c->partial_regs, c->stack_addr, c->stack,
				   c->stack_len, c->stack_want, far, (size_t)c->nfar };
	size_t max = (size_t)s->cfg.max_depth;
	*space = sp->index;
	if (!sp->uw)
		return UNWIND_PARTIAL;
	enum unwind_status r = unwinder__unwind(sp->uw, &in, s->pcs, max, depth);
	/* A capture no stop will follow that needs more registers than it
	 * has may also stand on a table read while the loader was still
	 * mapping (a space just made by an exec): read it again too. */
	int stale = r == UNWIND_NO_MODULE || (r == UNWIND_NEED_REGS && c->no_stop);
	struct space *again = stale ? sampler_refresh_space(s, sp, c->space, c->pid) : NULL;
	if (again) {
		*space = again->index;
		r = unwinder__unwind(again->uw, &in, s->pcs, max, depth);
	}
	return r == UNWIND_NO_MODULE ? UNWIND_PARTIAL : r;
}

/* Where in the kernel a blocked thread waits: its kernel stack, read right
 * after its capture (it is still blocked: the capture was checked), put
 * under the user stack, innermost first. */
static size_t add_kernel_frames(struct sampler *s, const struct capture *c, size_t depth)
{
	char names[32][64];
	int k = proc__kernel_stack(c->pid, c->tid, names, 32);
	if (k <= 0 || depth + (size_t)k > (size_t)s->cfg.max_depth + 1)
		return depth;
	memmove(s->pcs + k, s->pcs, depth * sizeof(*s->pcs));
	for (int i = 0; i < k; i++)
		s->pcs[i] = stacks__kernel_pc(s->st, names[i]);
	return depth + (size_t)k;
}

/* The same for a running thread, from its perf sample's kernel call chain
 * (a sample taken in a system call or an interrupt; one in user mode has
 * none). */
static size_t add_sampled_kernel_frames(struct sampler *s, const struct capture *c, size_t depth)
{
	uint64_t pcs[TARGET_KSTACK_MAX];
	char name[64];
	size_t k = 0;
	for (int i = 0; i < c->nkernel && k < TARGET_KSTACK_MAX; i++)
		if (proc__kernel_symbol(c->kernel_ips[i], name, sizeof(name)) == 0)
			pcs[k++] = stacks__kernel_pc(s->st, name);
	if (!k || depth + k > (size_t)s->cfg.max_depth + 1)
		return depth;
	memmove(s->pcs + k, s->pcs, depth * sizeof(*s->pcs));
	memcpy(s->pcs, pcs, k * sizeof(*pcs));
	return depth + k;
}

/* What the target keeps for a thread whose capture we counted (see
 * target__counted): the stack's id and how its unwind ended, so that an
 * unchanged capture is counted as the same stack, in the same figures. */
enum { COOKIE_ROOTED, COOKIE_TRUNCATED, COOKIE_DROPPED };
static uint64_t cookie(int64_t id, int kind)
{
	return (uint64_t)(id + 1) << 2 | (uint64_t)kind;
}

/* An unchanged capture: the thread has not run since the capture that was
 * counted as C->cookie, which is counted again (attach/blocked.c says why
 * that is exact). */
static void take_again(struct sampler *s, const struct capture *c)
{
	int kind = (int)(c->cookie & 3);
	if (kind == COOKIE_DROPPED) {
		if (sampler_view_of(s, c->pid))
			s->rep.stats.threads_left_out += c->ticks;
		else
			s->rep.stats.idle_dropped += c->ticks;
		return;
	}
	sampler_count_again(s, (int64_t)(c->cookie >> 2) - 1, c->slot, c->ticks,
			    kind == COOKIE_ROOTED);
}

/* Unwinds one capture and counts it.  Returns -EAGAIN when it needs the
 * registers a stop gives. */
int sampler_capture(struct sampler *s, const struct capture *c)
{
	size_t depth;
	uint32_t slot = c->slot, rt_state = 0;
	struct view *vw = sampler_view_of(s, c->pid);
	if (vw) {
		/* A runtime's view: a thread's sample is counted as it says
		 * (a Go thread's as the goroutine it runs), or not at all. */
		slot = vw->ops->thread(vw->v, c, &rt_state);
		if (slot == UINT32_MAX) {
			if (!c->unchanged)
				target__counted(s->t, c, cookie(-1, COOKIE_DROPPED), 0, 0);
			s->rep.stats.threads_left_out += c->ticks;
			return 0;
		}
	}
	if (c->unchanged) {
		take_again(s, c);
		return 0;
	}
	if (s->cfg.no_idle && c->state != 'R' && c->state != 'D') {
		s->rep.stats.idle_dropped += c->ticks;      /* sleeping or stopped: not wanted */
		target__counted(s->t, c, cookie(-1, COOKIE_DROPPED), 0, 0);
		return 0;
	}
	uint32_t space;
	enum unwind_status r = unwind(s, c, &depth, &space);
	struct unwinder *uw = s->sp.spaces[space].uw;
	size_t used = uw ? unwinder__stack_used(uw) : 0;
	if (uw && unwinder__rbp_found(uw))
		s->rep.stats.rbp_found += c->ticks;
	size_t need = uw && r == UNWIND_STACK_SHORT ? unwinder__stack_need(uw) : 0;
	uint64_t far = uw && r == UNWIND_STACK_SHORT ? unwinder__far_need(uw) : 0;
	int far_used = uw && unwinder__far_used(uw);
	uint64_t jump_sp;
	if (r == UNWIND_COMPLETE && uw && unwinder__jumped(uw, &jump_sp)) {
		/* Its stack jumped to another (a Go thread on its system
		 * stack: the goroutine's frames go on from its saved
		 * context): the runtime that has such stacks goes on; a
		 * sample left without them is not whole, and says so. */
		for (const struct rt_ops *const *o = runtimes; *o; o++)
			if ((*o)->jumped) {
				r = (*o)->jumped(s, c, space, jump_sp, &depth);
				break;
			}
		if (r == UNWIND_PARTIAL)
			s->rep.stats.jump_lost += c->ticks;
	}
	/* A capture no stop will follow (perf capture) ends where its
	 * registers do: a partial stack, counted as such. */
	if (r == UNWIND_NEED_REGS && !c->no_stop)
		return -EAGAIN;
	if (r == UNWIND_NEED_REGS)
		r = UNWIND_PARTIAL;
	s->capture_uncached = false;
	if (vw && vw->ops->merge)
		r = vw->ops->merge(vw->v, s, c, r, &depth);
	/* Counted in samples (a capture can stand for several ticks), as the
	 * summary's total is. */
	if (r == UNWIND_PARTIAL || r == UNWIND_STACK_SHORT)
		s->rep.stats.partial += c->ticks;
	if (r == UNWIND_TRUNCATED)
		s->rep.stats.truncated += c->ticks;
	if (r == UNWIND_COMPLETE)
		s->rep.stats.rooted += c->ticks;
	if (r == UNWIND_TRUNCATED || r == UNWIND_STACK_SHORT)
		s->pcs[depth++] = STACKS_PC_TRUNCATED;
	if (r == UNWIND_STACK_SHORT) {
		s->rep.stats.short_copies++;
		target__stack_too_small(s->t, c->tid, need, far);
	}
	if (s->cfg.kernel_stacks && c->nkernel)
		depth = add_sampled_kernel_frames(s, c, depth);
	else if (s->cfg.kernel_stacks && c->syscall >= 0)
		depth = add_kernel_frames(s, c, depth);
	struct stack st = { .slot = slot, .space = space, .state = c->state,
			    .syscall = c->syscall, .rt_state = rt_state, .pcs = s->pcs, .n = depth,
			    .count = c->ticks, .cpu_ns = c->cpu_ns };
	int64_t id = sampler_add_stack(s, &st);
	/* Only a stack that ended where it ends (its root, or --max-depth) is
	 * the one the same capture would give again: a partial one may do
	 * better once the maps are re-read, a short copy once it is larger. */
	uint64_t ck = id < 0 ? 0 : r == UNWIND_COMPLETE ? cookie(id, COOKIE_ROOTED) :
		      r == UNWIND_TRUNCATED ? cookie(id, COOKIE_TRUNCATED) : 0;
	if (s->capture_uncached)
		ck = 0;
	target__counted(s->t, c, ck, used, far_used);
	return 0;
}

void sampler_take_stopped(struct sampler *s)
{
	const struct capture *c;
	while ((c = target__next_stopped(s->t)))
		sampler_capture(s, c);
}

static void keep_cookie(void *arg, uint64_t c)
{
	stacks__keep(arg, (int64_t)(c >> 2) - 1);      /* see cookie() */
}

void sampler_keep_counted(struct sampler *s)
{
	if (s->t)
		target__each_cookie(s->t, keep_cookie, s->st);
}
