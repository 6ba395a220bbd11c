#include "output/stacks.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "util/intern.h"
#include "util/strbuf.h"

/* Key layout: [slot:u64][pc0][pc1]...; u64 for the slot keeps PCs aligned. */
struct stacks {
	struct intern *in;
	uint64_t *counts;
	size_t cap;
	uint64_t total;
	uint64_t *key;
	size_t key_cap;
};

struct stacks *stacks__new(void)
{
	struct stacks *st = xcalloc(1, sizeof(*st));
	st->in = intern__new();
	if (!st->in) {
		free(st);
		return NULL;
	}
	return st;
}

void stacks__free(struct stacks *st)
{
	if (!st)
		return;
	intern__free(st->in);
	free(st->counts);
	free(st->key);
	free(st);
}

int stacks__add(struct stacks *st, uint32_t slot, const uint64_t *pcs, size_t n,
		uint64_t count)
{
	if (n + 1 > st->key_cap) {
		st->key_cap = n + 64;
		st->key = xrealloc(st->key, st->key_cap * sizeof(*st->key));
	}
	st->key[0] = slot;
	memcpy(st->key + 1, pcs, n * sizeof(*pcs));
	int64_t id = intern__add(st->in, st->key, (n + 1) * sizeof(*st->key), NULL);
	if (id < 0)
		return (int)id;
	if ((size_t)id >= st->cap) {
		size_t cap = st->cap ? st->cap * 2 : 256;
		st->counts = xrealloc(st->counts, cap * sizeof(*st->counts));
		memset(st->counts + st->cap, 0, (cap - st->cap) * sizeof(*st->counts));
		st->cap = cap;
	}
	st->counts[id] += count;
	st->total += count;
	return 0;
}

size_t stacks__unique(const struct stacks *st)
{
	return intern__count(st->in);
}

uint64_t stacks__total(const struct stacks *st)
{
	return st->total;
}

void stacks__get(const struct stacks *st, size_t i, uint32_t *slot, const uint64_t **pcs,
		 size_t *n, uint64_t *count)
{
	size_t len;
	const uint64_t *k = intern__key(st->in, i, &len);
	*slot = (uint32_t)k[0];
	*pcs = k + 1;
	*n = len / sizeof(*k) - 1;
	*count = st->counts[i];
}
