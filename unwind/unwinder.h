/* unwinder: turns a thread's registers and a copy of its stack into a list
 * of PCs, after the thread has been resumed.
 *
 * libunwind's remote API with our own accessors: stack memory comes from
 * the copy, code and .eh_frame bytes from the module images
 * (module/modules.h), unwind tables are located from each module's
 * .eh_frame_hdr, and libunwind's global cache is on.  A frame libunwind
 * has no FDE for is stepped by a rule of another kind, each read or known
 * by a file named for it:
 *   - CFI rows libdw reads (.debug_frame of Go programs, .eh_frame of
 *     static binaries: module/cfi_rows.c) or Go's .gopclntab gives
 *     (module/gopclntab_rows.c), through module__cfi_row(), applied by
 *     unwind/cfi.c;
 *   - the functions where stacks end by design, Go's and musl's
 *     (module/roots.c, through module__stack_root());
 *   - CPython's perf trampolines (unwind/py_trampoline.c);
 *   - where there is no unwind info at all (JIT code, code without an
 *     FDE), one checked frame-pointer step;
 * never by a guess where an FDE covers the PC.  No ptrace, no per-word
 * syscalls, no reads of /proc: the module table is the caller's to
 * refresh (see UNWIND_NO_MODULE). */
#ifndef CPROF_UNWIND_UNWINDER_H
#define CPROF_UNWIND_UNWINDER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/user.h>

#include "module/modules.h"

/* What is unwound: a neutral sample, registers plus stack bytes. */
/* A far part of the stack, copied apart from the rest (a frame of
 * megabytes between: see attach/target.h, TARGET_FAR_MAX). */
struct unwind_far {
	uint64_t addr;
	const unsigned char *bytes;
	size_t len;                     /* 0: none */
};

struct unwind_input {
	const struct user_regs_struct *regs;
	bool partial_regs;              /* only rsp and rip are valid (a thread
					   sampled while blocked, not stopped) */
	uint64_t stack_addr;            /* remote address of stack[0] */
	const unsigned char *stack;
	size_t stack_len;               /* bytes copied */
	size_t stack_want;              /* bytes asked for; len < want: end of mapping */
	const struct unwind_far *far;   /* NFAR far parts, beyond the copy */
	size_t nfar;
};

enum unwind_status {
	UNWIND_COMPLETE,        /* reached the thread's root: the CFI says there is
				   no caller, the frame-pointer chain ends (RBP 0),
				   or a Go root (module__stack_root()) */
	UNWIND_PARTIAL,         /* stopped early: no unwind info, a frame-pointer
				   step that failed its checks, or bad memory */
	UNWIND_NO_MODULE,       /* stopped early at an address in no known module:
				   the maps may have changed (refresh, try again) */
	UNWIND_TRUNCATED,       /* MAX frames and more to come */
	UNWIND_STACK_SHORT,     /* ran past the stack copy: a larger one would do */
	UNWIND_NEED_REGS,       /* partial_regs, and a frame needed another
				   register (RBP in frame-pointer code): take it stopped */
};

struct unwinder;

/* MS is read, never refreshed here; it must outlive the unwinder.  One
 * unwinder per address space: libunwind caches by address. */
struct unwinder *unwinder__new(const struct modules *ms);
void unwinder__free(struct unwinder *u);         /* accepts NULL */

/* Unwinds IN into PCS (at most MAX entries, innermost first) and sets *N.
 * Every entry but the innermost, and but those after a signal frame, is a
 * return address minus one, so that it falls inside the call instruction:
 * symbolize entries as they are. */
enum unwind_status unwinder__unwind(struct unwinder *u, const struct unwind_input *in,
				    uint64_t *pcs, size_t max, size_t *n);

/* How many bytes of its stack copy (from stack_addr) the last unwind read. */
size_t unwinder__stack_used(const struct unwinder *u);

/* After UNWIND_STACK_SHORT: how many bytes from stack_addr the last unwind
 * asked for (the furthest word it wanted past the copy's end): the least
 * copy that would have gone one frame further.  0 otherwise. */
size_t unwinder__stack_need(const struct unwinder *u);

/* After UNWIND_STACK_SHORT: the address of the word the last unwind
 * asked for, when it lay far beyond the copy (UNWIND_FAR_GAP: a frame of
 * megabytes between, whose callers a far part would hold); 0 otherwise.
 * And whether the last unwind read a far part at all. */
#define UNWIND_FAR_GAP (64 * 1024)
uint64_t unwinder__far_need(const struct unwinder *u);
bool unwinder__far_used(const struct unwinder *u);

/* Whether the last unwind (of partial_regs) found a frame-pointer frame's
 * RBP on the stack, checked by the call that made the frame (see
 * unwinder.c), where it would otherwise have needed a stop. */
bool unwinder__rbp_found(const struct unwinder *u);

/* Whether the last unwind, complete, ended at a MODULE_ROOT_JUMP function
 * (Go's runtime.systemstack or runtime.morestack): the stack it gave is
 * the thread's system stack (g0), and the frames that called it are the
 * goroutine's, to be unwound from its saved context (g.sched).  *SP is
 * that frame's stack pointer (0 if unknown). */
bool unwinder__jumped(const struct unwinder *u, uint64_t *sp);

/* Forget cached unwind info: the module table changed. */
void unwinder__flush(struct unwinder *u);

/* Whether a stack's PC (the innermost frame's, or a caller's: its return
 * address - 1) is in one of CPython's perf trampolines (-X perf): what a
 * merge of Python frames leaves out, the Python frame standing for it. */
bool unwinder__py_trampoline(struct unwinder *u, uint64_t pc, bool innermost);

#endif
