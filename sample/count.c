/* Counting: a stack into the table and the timeline, its thread's last
 * stack noted, and the sampler's figures of how its unwind ended.  What
 * sample/capture.c counts for a capture, and the runtime views
 * (sample/runtime.h) for their own units, goes through here. */
#include "sample/internal.h"
#include "sample/runtime.h"

#include <string.h>

#include "profile/timeline.h"
#include "util/xalloc.h"

/* The last stack counted for thread slot SLOT and the tick it was counted
 * at (sampler__now_slice: each thread's stack at a tick made for it). */
static void note_slot(struct sampler *s, uint32_t slot, int64_t id)
{
	if (slot >= RT_SLOT_BASE)
		return;         /* a runtime's unit (a goroutine): not a thread */
	if (slot >= s->slot_cap) {
		size_t cap = s->slot_cap ? s->slot_cap : 64;
		while (cap <= slot)
			cap *= 2;
		s->slot_id = xrealloc(s->slot_id, cap * sizeof(*s->slot_id));
		s->slot_tick = xrealloc(s->slot_tick, cap * sizeof(*s->slot_tick));
		memset(s->slot_tick + s->slot_cap, 0, (cap - s->slot_cap) * sizeof(*s->slot_tick));
		s->slot_cap = cap;
	}
	s->slot_id[slot] = id;
	s->slot_tick[slot] = target__stats(s->t)->ticks;
}

void sampler_now_ids(struct sampler *s, struct stacks_slice *out)
{
	size_t n = 0;
	for (size_t i = 0; i < s->slot_cap; i++)
		n += s->loop.now_from && s->slot_tick[i] >= s->loop.now_from;
	out->ids = xcalloc(n + 1, sizeof(*out->ids));
	out->counts = xcalloc(n + 1, sizeof(*out->counts));
	out->cpu = xcalloc(n + 1, sizeof(*out->cpu));
	for (size_t i = 0; i < s->slot_cap; i++)
		if (s->loop.now_from && s->slot_tick[i] >= s->loop.now_from) {
			out->ids[out->n] = s->slot_id[i];
			out->counts[out->n++] = 1;
			out->total++;
		}
}

/* Adds K to the table (and the timeline): its id, or -1. */
int64_t sampler_add_stack(struct sampler *s, const struct stack *k)
{
	int64_t id = stacks__add(s->st, k);
	if (id < 0) {
		s->loop.failure = "out of memory counting stacks (ulimit -v?)";
		return id;
	}
	if (s->tl)
		timeline__add(s->tl, k->slot, (uint32_t)id, (uint32_t)k->count);
	note_slot(s, k->slot, id);
	return id;
}

int64_t sampler_count(struct sampler *s, struct stack *k, enum unwind_status st)
{
	/* K's pcs are the sampler's buffer (sampler_unwind_saved()), which
	 * has room for the mark. */
	if ((st == UNWIND_TRUNCATED || st == UNWIND_STACK_SHORT) && k->pcs == s->pcs)
		s->pcs[k->n++] = STACKS_PC_TRUNCATED;
	if (st == UNWIND_COMPLETE)
		s->rep.stats.rooted += k->count;
	else if (st == UNWIND_TRUNCATED)
		s->rep.stats.truncated += k->count;
	else
		s->rep.stats.partial += k->count;
	return sampler_add_stack(s, k);
}

void sampler_count_again(struct sampler *s, int64_t id, uint32_t slot, uint64_t n, bool rooted)
{
	stacks__add_again(s->st, id, n, 0);
	note_slot(s, slot, id);
	if (s->tl)
		timeline__add(s->tl, slot, (uint32_t)id, (uint32_t)n);
	if (rooted)
		s->rep.stats.rooted += n;
	else
		s->rep.stats.truncated += n;
}
