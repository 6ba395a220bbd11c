/* Private to unwind/: stepping one frame by a CFI row of our own reading
 * (module__cfi_row(): .debug_frame, .eh_frame without .eh_frame_hdr),
 * where libunwind, which finds FDEs through .eh_frame_hdr only, cannot.
 * Registers are numbered as DWARF numbers them on x86-64 (0 rax, 1 rdx,
 * 2 rcx, 3 rbx, 4 rsi, 5 rdi, 6 rbp, 7 rsp, 8-15 r8-r15, 16 rip), which is
 * also libunwind's UNW_X86_64_* numbering. */
#ifndef CPROF_UNWIND_CFI_H
#define CPROF_UNWIND_CFI_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "module/modules.h"

#define UREG_RBP 6
#define UREG_RSP 7
#define UREG_RIP 16
#define UREG_N 17
#define UREG_BIT(r) (1u << (r))
#define UREG_ALL ((1u << UREG_N) - 1)

/* A frame's registers; KNOWN has bit R set when V[R] is valid. */
struct uregs {
	uint64_t v[UREG_N];
	uint32_t known;
};

/* Reads the 8-byte word at ADDR of the target's memory (as captured):
 * 0, or -1 if it is not in the capture. */
typedef int (*cfi_read_fn)(void *arg, uint64_t addr, uint64_t *val);

enum cfi_step_result {
	CFI_STEP_OK,
	CFI_STEP_END,           /* the return address is undefined: the outermost frame */
	CFI_STEP_NEED_REG,      /* a rule needs a register we do not have */
	CFI_STEP_BAD,           /* memory not in the capture, or an expression we refuse */
};

/* Evaluates the DWARF expression OPS (libdw's Dwarf_Op array, N long) with
 * registers R and, if HAVE_CFA, CFA for DW_OP_call_frame_cfa.  Sets *OUT
 * and *IS_VALUE (the expression ended in DW_OP_stack_value: *OUT is the
 * value, else the address where the value is).  Bounded: 64 stack
 * entries, 256 operations executed.  Returns a cfi_step_result. */
int cfi_eval(const void *ops, size_t n, const struct uregs *r, uint64_t cfa, bool have_cfa,
	     cfi_read_fn rd, void *arg, uint64_t *out, bool *is_value);

/* The caller's registers from the callee's, CUR, by ROW.  The caller's RSP
 * is the CFA unless the row says otherwise; a register whose rule fails
 * (memory not captured) is unknown in the caller, but the return address
 * must be found.  Returns a cfi_step_result. */
int cfi_step(const struct cfi_row *row, const struct uregs *cur, struct uregs *caller,
	     cfi_read_fn rd, void *arg);

#endif
