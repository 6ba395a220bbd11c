/* Private to unwind/: what the unwinder's files share.  unwind/unwinder.c
 * walks a capture frame by frame, choosing for each the rule that knows
 * it: libunwind (unwind/libunwind.c, its remote address space and
 * accessors), a CFI row (unwind/cfi.c), a CPython trampoline
 * (unwind/py_trampoline.c) or a frame-pointer step; all of them read the
 * capture through unwind/capture.c.  Nothing outside unwind/ includes
 * this. */
#ifndef CPROF_UNWIND_INTERNAL_H
#define CPROF_UNWIND_INTERNAL_H

#include <libunwind.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "module/modules.h"
#include "unwind/unwinder.h"

struct py_trampolines;

struct unwinder {
	unw_addr_space_t as;
	const struct modules *ms;
	size_t stack_used;      /* bytes of the last unwind's stack copy it read */
	size_t stack_need;      /* ... and how many it wanted, if more (0: no more) */
	uint64_t far_need;      /* the word it wanted far past the copy (0: none) */
	bool far_used;          /* it read a far part of the stack */
	bool rbp_found;         /* it found a blocked frame's RBP on the stack */
	bool jumped;            /* it ended at a MODULE_ROOT_JUMP function */
	uint64_t jump_sp;       /* ... whose SP this was (0: unknown) */
	struct py_trampolines *tramp;   /* made on first use (unwind/py_trampoline.c) */
	struct perfmap *jit;            /* the target's perf map, made on first use */
	uint64_t jit_looked;            /* when it was last refreshed (CLOCK_MONOTONIC ns) */
};

/* One unwind's view of the target as captured: handed to libunwind's
 * accessors as their ARG, and read by the unwinder's own steps. */
struct unwind_ctx {
	struct unwinder *u;
	const struct unwind_input *c;
	const struct user_regs_struct *regs;    /* of the frame the cursor started from */
	uint32_t known;         /* which of them are valid (UREG_BIT(DWARF number)) */
	int no_fde;             /* find_proc_info found nothing for the last step */
	int stack_short;        /* a read fell past the end of the stack copy */
	int need_regs;          /* asked for a register a partial capture lacks */
	int no_module;          /* an address was in no known module */
	const struct module *last;      /* the module find_module() found last */
};

/* ---- the capture as memory (unwind/capture.c) ---- */

/* The module holding ADDR, or NULL (and X's no_module is set). */
const struct module *find_module(struct unwind_ctx *x, uint64_t addr);

/* A word of the stack copy: 0, or -1.  With FLAG, flags a copy too short
 * if ADDR is past its end and the copy was cut by our size, not by the
 * end of the mapping: a larger one would do. */
int read_stack(struct unwind_ctx *x, uint64_t addr, uint64_t *val, bool flag);

/* A word of the target's memory as we have it (ARG is the unwind_ctx):
 * the stack copy, then the module images.  0, or -1.  A cfi_read_fn. */
int read_word(void *arg, uint64_t addr, uint64_t *val);

/* ---- libunwind's remote address space (unwind/libunwind.c) ---- */

/* A libunwind address space whose accessors read an unwind_ctx, its
 * global cache on; NULL if libunwind cannot make one. */
unw_addr_space_t libunwind_space_new(void);

/* Whether this thread is unwinding now: libunwind's signal masking is
 * skipped meanwhile.  unwind/libunwind.c defines sigprocmask() for that,
 * in libc's place for the whole process (libunwind's calls reach it only
 * so): the rest of the program changes its masks with pthread_sigmask(). */
void libunwind_quiet(bool on);

#endif
