/* Private to module/: the unwind information a module keeps beyond what
 * libunwind reads, made on the unwinder's first question about it
 * (module/unwind_info.c) and freed with the module (module/modules.c), and
 * the files that read each kind of it:
 *   module/cfi_rows.c        .eh_frame and .debug_frame, read by libdw
 *   module/gopclntab_rows.c  rows from Go's frame sizes (.gopclntab)
 *   module/roots.c           the functions where stacks end by design (Go's, musl's)
 * Nothing outside module/ includes this. */
#ifndef CPROF_MODULE_INTERNAL_H
#define CPROF_MODULE_INTERNAL_H

#include <elfutils/libdw.h>
#include <gelf.h>
#include <libelf.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "module/modules.h"

struct gopclntab;
struct row_slot;

struct range {
	uint64_t lo, hi;                /* runtime addresses, [lo, hi) */
	int kind;                       /* roots: MODULE_ROOT_* */
};

/* ---- .eh_frame and .debug_frame, read by libdw (module/cfi_rows.c) ---- */

struct cfi_rows {
	Dwarf_CFI *eh_cfi;              /* its .eh_frame (cfi_rows_eh_frame()) */
	int eh_tried;
	unsigned char *dframe_image;    /* a small ELF holding .debug_frame only */
	Elf *dframe_elf;
	Dwarf *dframe;
	Dwarf_CFI *dframe_cfi;          /* its .debug_frame (cfi_rows_debug_frame()) */
};

/* libelf over the module's image we already hold, made on first use (the
 * handle every file here reads the module's ELF structure through); and
 * the name of a section of it, or "". */
Elf *module_elf(const struct module *m);
const char *module_scn_name(Elf *elf, size_t shstrndx, const GElf_Shdr *sh);

/* libdw's CFI reader over M's .eh_frame (using .eh_frame_hdr's table when
 * there is one), made on first use: NULL if M has none, or one that names
 * a register libdw would make room for at great cost. */
Dwarf_CFI *cfi_rows_eh_frame(const struct module *m);

/* Reads M's .debug_frame (EH is M's ELF header) into dframe_cfi, left NULL
 * if it cannot be read.  Called once per module. */
void cfi_rows_debug_frame(const struct module *m, const GElf_Ehdr *eh);

/* The row of CFI at link-time address VADDR: 0, or -1 when no FDE covers
 * it.  The row's expressions point into CFI. */
int cfi_rows_compute(Dwarf_CFI *cfi, uint64_t vaddr, struct cfi_row *row);

void cfi_rows_end(struct cfi_rows *c);          /* frees what they made */

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
void roots_end(struct roots *r);                /* frees what load made */

/* The MODULE_ROOT_* kind of the root holding PC, or 0. */
int roots_kind(const struct roots *r, uint64_t pc);

/* ---- the whole (module/unwind_info.c) ---- */

struct unwind_info {
	Elf *elf;                       /* module_elf() */
	struct cfi_rows cfi;
	/* The rest is made on the unwinder's first question. */
	int tried;
	struct gopclntab *go;           /* a Go program without .debug_frame */
	struct range *code;             /* its executable segments */
	size_t ncode;
	struct roots roots;
	struct row_slot *rows;          /* module__cfi_row()'s cache, by PC */
};

/* Made and freed by modules.c with each module. */
struct unwind_info *unwind_info_new(void);
void unwind_info_free(struct unwind_info *u);    /* accepts NULL */

#endif
