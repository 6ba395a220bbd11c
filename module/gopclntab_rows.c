/* gopclntab_rows: the CFI rows of a Go program that has no .debug_frame
 * (built -ldflags=-w), from the frame sizes in .gopclntab that Go's own
 * tracebacks use (module/gopclntab.c reads the table); asked by
 * module__cfi_row() (module/unwind_info.c) when the module has no other
 * rows. */
#include "module/internal.h"

#include <string.h>

#include "module/gopclntab.h"

/* The row Go's linker writes in .debug_frame, from the same numbers: the
 * CFA is SP + the frame size + the return address, which is just below
 * it; no other register is described (Go saves RBP, but its CFI does not
 * say so, and Go's code does not need it to unwind). */
int gopclntab_row(const struct gopclntab *g, uint64_t vaddr, struct cfi_row *row)
{
	uint32_t sp;
	if (gopclntab__frame(g, vaddr, NULL, NULL, &sp) != 0)
		return -1;
	memset(row, 0, sizeof(*row));
	row->cfa = (struct cfi_rule){ .kind = CFI_VAL_OFFSET, .reg = 7, .off = (int64_t)sp + 8 };
	for (int i = 0; i < CFI_NREGS; i++)
		row->regs[i].kind = CFI_SAME;
	row->regs[CFI_RA] = (struct cfi_rule){ .kind = CFI_OFFSET, .off = -8 };
	return 0;
}
