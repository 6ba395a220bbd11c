/* stacks: samples counted by (thread, stack) as they come.
 *
 * Each distinct PC sequence of each thread is stored once with a count,
 * so memory grows with unique stacks, not with samples. */
#ifndef CPROF_OUTPUT_STACKS_H
#define CPROF_OUTPUT_STACKS_H

#include <stddef.h>
#include <stdint.h>

struct stacks;

struct stacks *stacks__new(void);
void stacks__free(struct stacks *st);            /* accepts NULL */

/* Counts COUNT samples of thread SLOT with PCS[0..N) (innermost first).
 * Returns 0 or -ENOMEM. */
int stacks__add(struct stacks *st, uint32_t slot, const uint64_t *pcs, size_t n,
		uint64_t count);

size_t stacks__unique(const struct stacks *st);
uint64_t stacks__total(const struct stacks *st);

/* The I-th unique stack; PCS points into ST. */
void stacks__get(const struct stacks *st, size_t i, uint32_t *slot, const uint64_t **pcs,
		 size_t *n, uint64_t *count);

#endif
