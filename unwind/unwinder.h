/* unwinder: turns a capture (registers + stack copy) into a list of PCs,
 * after the thread has been resumed.
 *
 * libunwind's remote API with our own accessors: stack memory comes from
 * the copy, code and .eh_frame bytes from the module images (attach/maps.h),
 * unwind tables are located from each module's .eh_frame_hdr, and
 * libunwind's global cache is on.  No ptrace, no per-word syscalls. */
#ifndef CPROF_UNWIND_UNWINDER_H
#define CPROF_UNWIND_UNWINDER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "attach/maps.h"
#include "attach/target.h"

/* A frame address that stands for "the stack was cut here" (max depth
 * reached, or the stack copy ran out). */
#define UNWIND_PC_TRUNCATED ((uint64_t)-1)

enum unwind_status {
	UNWIND_COMPLETE,        /* reached the thread's root */
	UNWIND_PARTIAL,         /* stopped early: no unwind info or bad memory */
	UNWIND_TRUNCATED,       /* cut at max depth, ends in UNWIND_PC_TRUNCATED */
	UNWIND_STACK_SHORT,     /* ran past the stack copy; ends in UNWIND_PC_TRUNCATED */
	UNWIND_NEED_REGS,       /* partial_regs capture, and a frame needed another
				   register (RBP in frame-pointer code): take it stopped */
};

struct unwinder;

/* MS is read (and refreshed when a PC falls outside every known module);
 * it must outlive the unwinder. */
struct unwinder *unwinder__new(struct modules *ms);
void unwinder__free(struct unwinder *u);         /* accepts NULL */

/* Unwinds C into PCS (at most MAX entries, innermost first) and sets *N.
 * Every entry but the innermost, and but those after a signal frame, is a
 * return address minus one, so that it falls inside the call instruction:
 * symbolize entries as they are. */
enum unwind_status unwinder__unwind(struct unwinder *u, const struct capture *c,
				    uint64_t *pcs, size_t max, size_t *n);

/* Where the function holding IP starts, from the FDE that covers it (every
 * compiled function has one, stripped or not): false when none does. */
bool unwinder__func_start(struct unwinder *u, uint64_t ip, uint64_t *start);

/* Forget cached unwind info (after the target's maps changed). */
void unwinder__flush(struct unwinder *u);

#endif
