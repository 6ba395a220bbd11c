/* stacks: samples counted by (thread, stack) as they come.
 *
 * Each distinct PC sequence of each thread is stored once with a count,
 * so memory grows with unique stacks, not with samples. */
#ifndef CPROF_OUTPUT_STACKS_H
#define CPROF_OUTPUT_STACKS_H

#include <stddef.h>
#include <stdint.h>

struct stacks;

/* One unique stack: a thread, the state it was in, its PCs. */
struct stack {
	uint32_t slot;                  /* the thread (see target__slot_*) */
	char state;                     /* /proc state letter: R, S, D, T, ... */
	const uint64_t *pcs;            /* innermost first */
	size_t n;
	uint64_t count;                 /* samples (ticks) */
	uint64_t cpu_ns;                /* CPU time the thread used in them */
};

struct stacks *stacks__new(void);
void stacks__free(struct stacks *st);            /* accepts NULL */

/* Counts S->count samples of S (its pcs are copied) and adds S->cpu_ns.
 * Returns 0 or -ENOMEM. */
int stacks__add(struct stacks *st, const struct stack *s);

size_t stacks__unique(const struct stacks *st);
uint64_t stacks__total(const struct stacks *st);

/* The I-th unique stack; its pcs point into ST. */
void stacks__get(const struct stacks *st, size_t i, struct stack *out);

/* The name of a state letter: "running", "sleeping", "disk wait", ... */
const char *stacks__state_name(char state);

#endif
