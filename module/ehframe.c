/* ehframe: what a module's unwind information says without unwinding:
 * where its .eh_frame_hdr search table is (for libunwind's remote lookup,
 * unwind/unwinder.c) and where the function holding an address starts
 * (for naming stripped code, dwarf/symbolizer.c). */
#include "module/modules.h"

#include <elfutils/libdw.h>
#include <libelf.h>
#include <stdlib.h>
#include <string.h>

#include "module/cfi.h"
#include "util/xalloc.h"

#define DW_EH_PE_udata4 0x03
#define DW_EH_PE_sdata4 0x0b
#define DW_EH_PE_pcrel 0x10
#define DW_EH_PE_datarel 0x30

struct module_cfi {
	Elf *elf;
	Dwarf_CFI *cfi;
	int tried;
};

int module__eh_table(const struct module *m, struct eh_table *t)
{
	unsigned char hdr[12];
	if (!m->usable || !m->eh_frame_hdr || module__read(m, m->eh_frame_hdr, hdr, sizeof(hdr)) < 0)
		return -1;
	/* version 1, eh_frame_ptr pcrel|sdata4, fde_count udata4, table
	 * datarel|sdata4: then the table starts 12 bytes in. */
	if (hdr[0] != 1 || hdr[1] != (DW_EH_PE_pcrel | DW_EH_PE_sdata4) ||
	    hdr[2] != DW_EH_PE_udata4 || hdr[3] != (DW_EH_PE_datarel | DW_EH_PE_sdata4))
		return -1;
	memcpy(&t->fde_count, hdr + 8, sizeof(t->fde_count));
	t->segbase = m->eh_frame_hdr;
	t->table = m->eh_frame_hdr + 12;
	return 0;
}

/* libdw's CFI reader over the image we already hold (.eh_frame, using
 * .eh_frame_hdr's table when there is one), made on first use. */
static Dwarf_CFI *module_cfi(const struct module *m)
{
	struct module_cfi *c = m->cfi;
	if (!c || c->tried)
		return c ? c->cfi : NULL;
	c->tried = 1;
	c->elf = elf_memory((char *)m->image, m->image_len);
	c->cfi = c->elf ? dwarf_getcfi_elf(c->elf) : NULL;
	return c->cfi;
}

/* The start of the last FDE of M's search table that starts at or below
 * ADDR: entries are (initial location, FDE address), 4-byte signed values
 * relative to the table's header, sorted by location. */
static bool table_floor(const struct module *m, const struct eh_table *t, uint64_t addr,
			uint64_t *start)
{
	uint32_t lo = 0, hi = t->fde_count;
	bool found = false;
	while (lo < hi) {
		uint32_t mid = lo + (hi - lo) / 2;
		int32_t loc;
		if (module__read(m, t->table + (uint64_t)mid * 8, &loc, sizeof(loc)) < 0)
			return false;
		uint64_t at = t->segbase + (uint64_t)(int64_t)loc;
		if (at <= addr) {
			*start = at;
			found = true;
			lo = mid + 1;
		} else {
			hi = mid;
		}
	}
	return found;
}

bool module__func_start(const struct module *m, uint64_t addr, uint64_t *start)
{
	struct eh_table t;
	Dwarf_CFI *cfi;
	Dwarf_Frame *frame = NULL;
	if (module__eh_table(m, &t) < 0 || !table_floor(m, &t, addr, start) ||
	    !(cfi = module_cfi(m)))
		return false;
	/* FDEs do not overlap: if one covers ADDR at all, it is the last one
	 * starting below it.  (libdw's frame is a row of the CFI table, whose
	 * range is not the function's: only whether there is one counts.) */
	int ok = dwarf_cfi_addrframe(cfi, addr - m->bias, &frame) == 0;
	free(frame);
	return ok;
}

/* Called by modules.c for each module it makes and frees. */
struct module_cfi *module_cfi__new(void)
{
	return xcalloc(1, sizeof(struct module_cfi));
}

void module_cfi__free(struct module_cfi *c)
{
	if (!c)
		return;
	if (c->cfi)
		dwarf_cfi_end(c->cfi);
	if (c->elf)
		elf_end(c->elf);
	free(c);
}
