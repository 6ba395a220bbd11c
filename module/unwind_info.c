/* unwind_info: the unwind information of a module beyond what libunwind
 * reads, made on the unwinder's first question about the module and kept
 * with it: which kinds of rules the module has, each read by a file of its
 * own (module/internal.h), its code ranges, and its rows by PC, cached.
 * The questions are module/modules.h's: module__cfi_row(),
 * module__is_code(), module__stack_root(), module__no_frame_pointers(),
 * module__go_systemstack(). */
#include "module/modules.h"

#include <errno.h>
#include <gelf.h>
#include <libelf.h>
#include <stdlib.h>
#include <string.h>

#include "module/gopclntab.h"
#include "module/internal.h"
#include "util/xalloc.h"

#define ROW_SLOTS 1024                  /* rows cached per module, by PC */

struct row_slot {
	uint64_t key;                   /* PC + 1; 0: empty */
	int found;
	struct cfi_row row;
};

/* Called by modules.c for each module it makes and frees. */
struct unwind_info *unwind_info_new(void)
{
	return xcalloc(1, sizeof(struct unwind_info));
}

void unwind_info_free(struct unwind_info *u)
{
	if (!u)
		return;
	cfi_rows_end(&u->cfi);
	if (u->elf)
		elf_end(u->elf);
	free(u->code);
	roots_end(&u->roots);
	gopclntab__free(u->go);
	free(u->rows);
	free(u);
}

/* The executable PT_LOAD segments, in runtime addresses. */
static void load_code_ranges(const struct module *m, struct unwind_info *u)
{
	size_t phnum;
	if (elf_getphdrnum(u->elf, &phnum) != 0 || phnum == 0)
		return;
	u->code = xcalloc(phnum, sizeof(*u->code));
	for (size_t i = 0; i < phnum; i++) {
		GElf_Phdr ph;
		if (gelf_getphdr(u->elf, (int)i, &ph) && ph.p_type == PT_LOAD && (ph.p_flags & PF_X) &&
		    ph.p_memsz && ph.p_vaddr + ph.p_memsz > ph.p_vaddr)
			u->code[u->ncode++] = (struct range){ ph.p_vaddr + m->bias,
							      ph.p_vaddr + ph.p_memsz + m->bias, 0 };
	}
}

/* M's unwind information, made on first use: code ranges, .eh_frame where
 * libunwind cannot read it, .debug_frame if there is one, .gopclntab's
 * rows if it is a Go program without .debug_frame, the known roots. */
static struct unwind_info *info_of(const struct module *m)
{
	struct unwind_info *u = m->unwind;
	size_t shstrndx;
	GElf_Ehdr eh;
	if (!u || u->tried)
		return u;
	u->tried = 1;
	/* .eh_frame is read here only where libunwind cannot (no
	 * .eh_frame_hdr): scanning a large one costs milliseconds. */
	if (!m->eh_frame_hdr)
		cfi_rows_eh_frame(m);
	if (!module_elf(m) || !gelf_getehdr(u->elf, &eh))
		return u;
	load_code_ranges(m, u);
	if (elf_getshdrstrndx(u->elf, &shstrndx) != 0)
		return u;
	bool go = false, dframe = false;
	Elf_Scn *scn = NULL, *symtab = NULL;
	while ((scn = elf_nextscn(u->elf, scn))) {
		GElf_Shdr sh;
		if (!gelf_getshdr(scn, &sh))
			continue;
		const char *n = module_scn_name(u->elf, shstrndx, &sh);
		go |= strcmp(n, ".gopclntab") == 0 || strcmp(n, ".note.go.buildid") == 0;
		dframe |= strcmp(n, ".debug_frame") == 0;
		if (sh.sh_type == SHT_SYMTAB)
			symtab = scn;
	}
	if (dframe)
		cfi_rows_debug_frame(m, &eh);
	/* A Go program built -ldflags=-w has no .debug_frame: the frame
	 * sizes Go's own tracebacks use are in .gopclntab. */
	if (go && !u->cfi.dframe_cfi)
		u->go = gopclntab__from_elf(m->image, m->image_len);
	roots_load(&u->roots, m, u->elf, symtab, go, u->go);
	return u;
}

/* Rows come from .eh_frame where libunwind cannot read it, else from
 * .debug_frame, else from .gopclntab. */
const struct cfi_row *module__cfi_row(const struct module *m, uint64_t pc)
{
	struct unwind_info *u = info_of(m);
	if (!u || (!u->cfi.dframe_cfi && !u->go && (m->eh_frame_hdr || !u->cfi.eh_cfi)))
		return NULL;
	if (!u->rows)
		u->rows = xcalloc(ROW_SLOTS, sizeof(*u->rows));
	struct row_slot *s = &u->rows[(pc * 0x9e3779b97f4a7c15ull) >> 54];
	if (s->key != pc + 1) {
		uint64_t v = pc - m->bias;
		s->key = pc + 1;
		s->found = (!m->eh_frame_hdr && u->cfi.eh_cfi &&
			    cfi_rows_compute(u->cfi.eh_cfi, v, &s->row) == 0) ||
			   (u->cfi.dframe_cfi && cfi_rows_compute(u->cfi.dframe_cfi, v, &s->row) == 0) ||
			   (u->go && gopclntab_row(u->go, v, &s->row) == 0);
	}
	return s->found ? &s->row : NULL;
}

bool module__is_code(const struct module *m, uint64_t addr)
{
	struct unwind_info *u = info_of(m);
	for (size_t i = 0; u && i < u->ncode; i++)
		if (addr >= u->code[i].lo && addr < u->code[i].hi)
			return true;
	return false;
}

bool module__no_frame_pointers(const struct module *m)
{
	struct unwind_info *u = info_of(m);
	return u && u->roots.musl;
}

int module__go_systemstack(const struct module *m, uint64_t *lo, uint64_t *hi)
{
	struct unwind_info *u = info_of(m);
	if (!u || u->roots.systemstack.hi <= u->roots.systemstack.lo)
		return -ENOENT;
	*lo = u->roots.systemstack.lo;
	*hi = u->roots.systemstack.hi;
	return 0;
}

int module__stack_root(const struct module *m, uint64_t pc)
{
	struct unwind_info *u = info_of(m);
	return u ? roots_kind(&u->roots, pc) : 0;
}
