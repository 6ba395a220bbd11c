#include "profile/timeline.h"

#include <stdlib.h>
#include <string.h>

#include "util/xalloc.h"

struct slot_runs {
	struct timeline_run *runs;
	size_t n, cap;
};

struct timeline {
	struct slot_runs *slots;
	size_t nslots;
	size_t total;                   /* runs in all slots */
	int full;
};

struct timeline *timeline__new(void)
{
	return xcalloc(1, sizeof(struct timeline));
}

void timeline__free(struct timeline *tl)
{
	if (!tl)
		return;
	for (size_t i = 0; i < tl->nslots; i++)
		free(tl->slots[i].runs);
	free(tl->slots);
	free(tl);
}

void timeline__add(struct timeline *tl, uint32_t slot, uint32_t stack, uint32_t count)
{
	if (slot >= tl->nslots) {
		size_t n = (size_t)slot + 1 > tl->nslots * 2 ? (size_t)slot + 1 : tl->nslots * 2;
		tl->slots = xrealloc(tl->slots, n * sizeof(*tl->slots));
		memset(tl->slots + tl->nslots, 0, (n - tl->nslots) * sizeof(*tl->slots));
		tl->nslots = n;
	}
	struct slot_runs *s = &tl->slots[slot];
	if (s->n && s->runs[s->n - 1].stack == stack && s->runs[s->n - 1].count <= UINT32_MAX - count) {
		s->runs[s->n - 1].count += count;
		return;
	}
	if (tl->total >= TIMELINE_MAX_RUNS) {
		tl->full = 1;
		return;
	}
	if (s->n == s->cap) {
		s->cap = s->cap ? s->cap * 2 : 16;
		s->runs = xrealloc(s->runs, s->cap * sizeof(*s->runs));
	}
	s->runs[s->n++] = (struct timeline_run){ stack, count };
	tl->total++;
}

const struct timeline_run *timeline__runs(const struct timeline *tl, uint32_t slot, size_t *n)
{
	*n = slot < tl->nslots ? tl->slots[slot].n : 0;
	return *n ? tl->slots[slot].runs : NULL;
}

size_t timeline__nslots(const struct timeline *tl)
{
	return tl->nslots;
}

int timeline__full(const struct timeline *tl)
{
	return tl->full;
}
