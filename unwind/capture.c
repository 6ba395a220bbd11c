/* capture: the target's memory as one capture has it, for every rule of
 * the unwinder: the stack bytes copied while the thread was stopped, and
 * the module images (code, .eh_frame, whatever the files hold).  Nothing is read
 * from the target itself: a read the capture cannot answer fails, and says
 * why (a module missing, a stack copy too short). */
#include "unwind/internal.h"

#include <string.h>

#define STACK_SPAN (64ull << 20)        /* how far above SP a read counts as "stack" */
/* ... and, past a frame of megabytes, for a far part (the copy's cap is
 * the capture's: attach/target.h, TARGET_FAR_SPAN): a read up to here
 * that no part holds ends the stack as short ([truncated]), not silently. */
#define FAR_SPAN (1ull << 30)

const struct module *find_module(struct unwind_ctx *x, uint64_t addr)
{
	/* Most lookups fall in the module of the one before (the loop's,
	 * then find_proc_info's, for the same PC). */
	const struct module *m = x->last;
	if (m && addr >= m->start && addr < m->end)
		return m;
	m = modules__find(x->u->ms, addr);
	if (!m)
		x->no_module = 1;
	else
		x->last = m;
	return m;
}

/* A word of the far parts of the stack, or -1. */
static int read_far(struct unwind_ctx *x, uint64_t addr, uint64_t *val)
{
	const struct unwind_input *c = x->c;
	for (size_t i = 0; i < c->nfar; i++) {
		const struct unwind_far *f = &c->far[i];
		if (addr >= f->addr && addr - f->addr <= f->len &&
		    f->len - (addr - f->addr) >= sizeof(*val)) {
			memcpy(val, f->bytes + (addr - f->addr), sizeof(*val));
			x->u->far_used = true;
			return 0;
		}
	}
	return -1;
}

/* A word of the stack copy or its far parts, or -1.  With FLAG, flags a
 * copy too short if ADDR is past its end and the copy was cut by our
 * size, not by the end of the mapping: a larger one would do (a far part,
 * if ADDR is UNWIND_FAR_GAP beyond the copy). */
int read_stack(struct unwind_ctx *x, uint64_t addr, uint64_t *val, bool flag)
{
	const struct unwind_input *c = x->c;
	if (addr >= c->stack_addr && addr - c->stack_addr <= c->stack_len &&
	    c->stack_len - (addr - c->stack_addr) >= sizeof(*val)) {
		memcpy(val, c->stack + (addr - c->stack_addr), sizeof(*val));
		return 0;
	}
	if (read_far(x, addr, val) == 0)
		return 0;
	if (flag && addr >= c->stack_addr && addr - c->stack_addr < FAR_SPAN &&
	    c->stack_len == c->stack_want && !modules__find(x->u->ms, addr)) {
		x->stack_short = 1;
		if (addr - c->stack_addr > c->stack_len + UNWIND_FAR_GAP) {
			if (!x->u->far_need)
				x->u->far_need = addr;
		} else if (addr - c->stack_addr + sizeof(*val) > x->u->stack_need) {
			x->u->stack_need = addr - c->stack_addr + sizeof(*val);
		}
	}
	return -1;
}

/* A word of the target's memory as we have it: the stack copy, then the
 * module images.  (Modules are checked before flagging a short copy:
 * thread stacks often sit right below the libraries.) */
int read_word(void *arg, uint64_t addr, uint64_t *val)
{
	struct unwind_ctx *x = arg;
	const struct unwind_input *c = x->c;
	if (addr >= c->stack_addr && addr - c->stack_addr <= c->stack_len &&
	    c->stack_len - (addr - c->stack_addr) >= sizeof(*val)) {
		size_t end = addr - c->stack_addr + sizeof(*val);
		memcpy(val, c->stack + (addr - c->stack_addr), sizeof(*val));
		if (end > x->u->stack_used)
			x->u->stack_used = end;
		return 0;
	}
	if (read_far(x, addr, val) == 0)
		return 0;
	const struct module *m = find_module(x, addr);
	if (m && module__read(m, addr, val, sizeof(*val)) == 0)
		return 0;
	if (!m)
		read_stack(x, addr, val, true);
	return -1;
}
