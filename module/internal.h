/* Private to module/: the unwind information a module keeps, made on the
 * unwinder's first question about it (module/ehframe.c) and freed with the
 * module (module/modules.c), and the files that read each kind of it:
 *   module/gopclntab_rows.c  rows from Go's frame sizes (.gopclntab)
 *   module/roots.c           the functions where stacks end by design (Go's, musl's)
 * Nothing outside module/ includes this. */
#ifndef CPROF_MODULE_INTERNAL_H
#define CPROF_MODULE_INTERNAL_H

#include <elfutils/libdw.h>
#include <libelf.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "module/modules.h"

struct gopclntab;

struct range {
	uint64_t lo, hi;                /* runtime addresses, [lo, hi) */
	int kind;                       /* roots: MODULE_ROOT_* */
};

/* ---- rows from .gopclntab (module/gopclntab_rows.c) ---- */

/* The row at link-time address VADDR of the Go program whose table G
 * reads, as Go's linker would write it in .debug_frame: 0, or -1 when no
 * function covers VADDR. */
int gopclntab_row(const struct gopclntab *g, uint64_t vaddr, struct cfi_row *row);

/* ---- the known roots (module/roots.c) ---- */

struct roots {
	struct range *r;
	size_t n;
	struct range systemstack;       /* Go's runtime.systemstack, or 0s */
	bool musl;                      /* a static musl program */
};

/* Finds M's roots (see module__stack_root()): Go's, by name in SYMTAB
 * (M's .symtab in ELF, NULL if it has none) when GO (M is a Go program),
 * else in PCLNTAB (.gopclntab's reader, NULL if none); musl's in SYMTAB
 * when M is a static program (no .eh_frame_hdr) that has
 * libc_start_main_stage2.  Called once per module. */
void roots_load(struct roots *r, const struct module *m, Elf *elf, Elf_Scn *symtab, bool go,
		 const struct gopclntab *pclntab);
void roots_end(struct roots *r);               /* frees what load made */

/* The MODULE_ROOT_* kind of the root holding PC, or 0. */
int roots_kind(const struct roots *r, uint64_t pc);

/* ---- the state ---- */

struct module_cfi;
struct module_cfi *module_cfi__new(void);
void module_cfi__free(struct module_cfi *c);     /* accepts NULL */

#endif
