/* timeline: the order of each thread's samples, for writers that show
 * time (speedscope's time-order view).  Per thread slot, a run-length list
 * of (stack id, samples): a thread that stays in one stack costs one entry
 * however long it stays.  Bounded: past TIMELINE_MAX_RUNS entries in all,
 * nothing more is recorded (timeline__full says so) and the writers fall
 * back to the counted stacks. */
#ifndef CPROF_PROFILE_TIMELINE_H
#define CPROF_PROFILE_TIMELINE_H

#include <stddef.h>
#include <stdint.h>

#define TIMELINE_MAX_RUNS (16u << 20)   /* 16 Mi runs, 256 MiB at most */

struct timeline_run {
	uint32_t stack;                 /* index in the counted stacks */
	uint32_t count;                 /* consecutive samples in it */
};

struct timeline;

struct timeline *timeline__new(void);
void timeline__free(struct timeline *tl);        /* accepts NULL */

/* Slot SLOT's next COUNT samples are in stack STACK. */
void timeline__add(struct timeline *tl, uint32_t slot, uint32_t stack, uint32_t count);

/* Slot SLOT's runs, in time order; *N gets how many (0: none). */
const struct timeline_run *timeline__runs(const struct timeline *tl, uint32_t slot, size_t *n);
/* The first slot at or after SLOT that may have runs, or UINT32_MAX. */
uint32_t timeline__next_slot(const struct timeline *tl, uint32_t slot);
int timeline__full(const struct timeline *tl);   /* the bound was reached */

#endif
