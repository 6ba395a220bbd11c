/* Private to unwind/: CPython's perf trampolines (python3.12 and 3.13 -X
 * perf), code in anonymous memory without unwind info or a frame pointer
 * whose frame is known from the code itself (unwind/py_trampoline.c):
 * a rule of the unwinder's, for code in no module. */
#ifndef CPROF_UNWIND_PY_TRAMPOLINE_H
#define CPROF_UNWIND_PY_TRAMPOLINE_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

/* What is known of the code at each address asked about, made on first use
 * in *T (NULL before). */
struct py_trampolines;
void py_trampolines_free(struct py_trampolines *t);     /* accepts NULL */

/* Whether PC (a return address if RET_ADDR) is in a trampoline of process
 * PID, whose code is read from the process once per address; if so *RA_AT
 * is where the trampoline's return address is, given its stack pointer SP:
 * the caller's PC is the word there, its SP is RA_AT + 8, and every other
 * register is the caller's. */
bool py_trampoline_frame(struct py_trampolines **t, pid_t pid, uint64_t pc, bool ret_addr,
			 uint64_t sp, uint64_t *ra_at);

#endif
