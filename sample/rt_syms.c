/* rt_syms: a runtime view's cache of symbolic frames (sample/rt_syms.h). */
#include "sample/rt_syms.h"

#include <stdlib.h>
#include <string.h>

#include "profile/stacks.h"
#include "util/xalloc.h"

void rt_syms__init(struct rt_syms *c)
{
	memset(c, 0, sizeof(*c));
	c->slot = xcalloc(RT_SYMS_SLOTS, sizeof(*c->slot));
}

void rt_syms__free(struct rt_syms *c)
{
	free(c->slot);
	c->slot = NULL;
}

void rt_syms__clear(struct rt_syms *c)
{
	memset(c->slot, 0, RT_SYMS_SLOTS * sizeof(*c->slot));
	memset(c->fixed, 0, sizeof(c->fixed));
}

/* Everything dropped if aging freed symbolic frames since it was filled. */
static void fresh(struct rt_syms *c, struct stacks *st)
{
	uint64_t gen = stacks__symbolic_gen(st);
	if (gen == c->gen)
		return;
	c->gen = gen;
	rt_syms__clear(c);
}

uint64_t rt_syms__get(struct rt_syms *c, struct stacks *st, uint64_t a, uint64_t b, uint32_t serial,
		      struct rt_sym **slot)
{
	fresh(c, st);
	size_t h = (size_t)(((a >> 3) ^ b * 0x9e3779b97f4a7c15ull) * 0xff51afd7ed558ccdull >> 50) &
		   (RT_SYMS_SLOTS - 1);
	struct rt_sym *e = &c->slot[h];
	*slot = e;
	return e->pc && e->a == a && e->b == b && e->serial == serial ? e->pc : 0;
}

uint64_t rt_syms__fixed(struct rt_syms *c, struct stacks *st, unsigned i, const char *name)
{
	fresh(c, st);
	if (i >= RT_SYMS_FIXED)
		return 0;
	if (!c->fixed[i]) {
		struct stacks_frame sf = { name, NULL, NULL, 0 };
		c->fixed[i] = stacks__symbolic_pc(st, &sf);
	}
	return c->fixed[i];
}
