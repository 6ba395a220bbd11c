#include "profile/timeline.h"

#include <stdlib.h>
#include <string.h>

#include "util/sparse.h"
#include "util/xalloc.h"

struct slot_runs {
	struct timeline_run *runs;
	size_t n, cap;
};

struct timeline {
	struct sparse slots;            /* struct slot_runs by slot (sparse: goroutine
					   slots start far above thread slots) */
	size_t total;                   /* runs in all slots */
	int full;
};

struct timeline *timeline__new(void)
{
	struct timeline *tl = xcalloc(1, sizeof(struct timeline));
	sparse__init(&tl->slots, sizeof(struct slot_runs));
	return tl;
}

void timeline__free(struct timeline *tl)
{
	if (!tl)
		return;
	for (uint32_t i = sparse__next(&tl->slots, 0); i != UINT32_MAX; i = sparse__next(&tl->slots, i + 1))
		free(((struct slot_runs *)sparse__get(&tl->slots, i))->runs);
	sparse__free(&tl->slots);
	free(tl);
}

void timeline__add(struct timeline *tl, uint32_t slot, uint32_t stack, uint32_t count)
{
	struct slot_runs *s = sparse__put(&tl->slots, slot);
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
	const struct slot_runs *s = sparse__get(&tl->slots, slot);
	*n = s ? s->n : 0;
	return *n ? s->runs : NULL;
}

uint32_t timeline__next_slot(const struct timeline *tl, uint32_t slot)
{
	return sparse__next(&tl->slots, slot);
}

int timeline__full(const struct timeline *tl)
{
	return tl->full;
}
