/* cfi_rows: what a module's DWARF call frame information (.eh_frame,
 * .debug_frame) says, read by libdw: where its .eh_frame_hdr search table
 * is (for libunwind's remote lookup, unwind/unwinder.c), where the
 * function holding an address starts (for naming stripped code,
 * dwarf/symbolizer.c), and the rows libunwind cannot find (.eh_frame
 * without .eh_frame_hdr, .debug_frame) for module__cfi_row()
 * (module/unwind_info.c).  Every CFI section is checked before libdw
 * reads it (the target's files are not ours to trust). */
#include "module/modules.h"

#include <dwarf.h>
#include <elfutils/libdw.h>
#include <gelf.h>
#include <libelf.h>
#include <stdlib.h>
#include <string.h>

#include "module/internal.h"
#include "util/xalloc.h"

#define DW_EH_PE_udata4 0x03
#define DW_EH_PE_sdata4 0x0b
#define DW_EH_PE_pcrel 0x10
#define DW_EH_PE_datarel 0x30

#define DEBUG_FRAME_MAX (256u << 20)    /* a larger .debug_frame is not read */

const uint8_t cfi_dwarf_reg[CFI_NREGS] = { 3, 6, 7, 12, 13, 14, 15, 16 };

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

/* ---- registers the CFI names --------------------------------------------
 * libdw makes room in each frame it computes for as many registers as the
 * largest number an FDE's rules name: one rule for register 2^27 costs
 * 2 GB (a fuzzed .eh_frame did, 500 MB in 11 s).  The target's files are
 * not ours to trust, so before libdw reads a CFI section every entry is
 * scanned here, and a section naming a register above CFI_MAX_REG is not
 * read at all (x86-64 numbers its registers below 70). */
#define CFI_MAX_REG 127

static bool get_uleb(const uint8_t **p, const uint8_t *end, uint64_t *v)
{
	*v = 0;
	for (unsigned shift = 0; *p < end; shift += 7) {
		uint8_t b = *(*p)++;
		if (shift < 64)
			*v |= (uint64_t)(b & 0x7f) << shift;
		if (!(b & 0x80))
			return true;
	}
	return false;
}

static bool skip(const uint8_t **p, const uint8_t *end, uint64_t n)
{
	if (n > (uint64_t)(end - *p))
		return false;
	*p += n;
	return true;
}

/* Skips a value of pointer encoding ENC (DW_EH_PE_*). */
static bool skip_encoded(const uint8_t **p, const uint8_t *end, uint8_t enc)
{
	uint64_t v;
	if (enc == 0xff)                        /* DW_EH_PE_omit */
		return true;
	switch (enc & 0x0f) {
	case 0x00: case 0x04: case 0x0c: return skip(p, end, 8);
	case 0x02: case 0x0a: return skip(p, end, 2);
	case 0x03: case 0x0b: return skip(p, end, 4);
	case 0x01: case 0x09: return get_uleb(p, end, &v);
	}
	return false;
}

/* Whether an instruction stream names no register above CFI_MAX_REG.  At
 * an operation it cannot size (DW_CFA_set_loc, unknown ones, which libdw
 * refuses anyway) the rest of the stream is not looked at. */
static bool insns_sane(const uint8_t *p, const uint8_t *end)
{
	while (p < end) {
		uint8_t op = *p++;
		uint64_t reg = 0, v = 0;
		bool ok = true;
		if (op >> 6) {                  /* advance_loc, offset, restore */
			if (op >> 6 == 2)
				ok = get_uleb(&p, end, &v);
			if (!ok)
				return true;
			continue;
		}
		switch (op) {
		case DW_CFA_nop: case DW_CFA_remember_state: case DW_CFA_restore_state:
		case DW_CFA_GNU_window_save:
			break;
		case DW_CFA_advance_loc1: ok = skip(&p, end, 1); break;
		case DW_CFA_advance_loc2: ok = skip(&p, end, 2); break;
		case DW_CFA_advance_loc4: ok = skip(&p, end, 4); break;
		case DW_CFA_def_cfa_offset: case DW_CFA_def_cfa_offset_sf: case DW_CFA_GNU_args_size:
			ok = get_uleb(&p, end, &v);
			break;
		case DW_CFA_def_cfa_expression:
			ok = get_uleb(&p, end, &v) && skip(&p, end, v);
			break;
		case DW_CFA_restore_extended: case DW_CFA_undefined: case DW_CFA_same_value:
		case DW_CFA_def_cfa_register:
			ok = get_uleb(&p, end, &reg);
			break;
		case DW_CFA_register:
			ok = get_uleb(&p, end, &reg) && get_uleb(&p, end, &v);
			reg = v > reg ? v : reg;
			break;
		case DW_CFA_offset_extended: case DW_CFA_offset_extended_sf: case DW_CFA_def_cfa:
		case DW_CFA_def_cfa_sf: case DW_CFA_val_offset: case DW_CFA_val_offset_sf:
		case DW_CFA_GNU_negative_offset_extended:
			ok = get_uleb(&p, end, &reg) && get_uleb(&p, end, &v);
			break;
		case DW_CFA_expression: case DW_CFA_val_expression:
			ok = get_uleb(&p, end, &reg) && get_uleb(&p, end, &v) && skip(&p, end, v);
			break;
		default:
			return true;
		}
		if (!ok)
			return true;            /* truncated: libdw refuses it */
		if (reg > CFI_MAX_REG)
			return false;
	}
	return true;
}

/* Where an FDE's instructions start, from its CIE: past the initial
 * location, the address range and the augmentation data.  NULL if the
 * CIE's augmentation is not understood (libdw cannot read it either). */
static const uint8_t *fde_insns(const Dwarf_CIE *cie, const Dwarf_FDE *fde, bool eh)
{
	const uint8_t *p = fde->start, *end = fde->end;
	const char *aug = cie->augmentation;
	uint8_t enc = 0;                        /* DW_EH_PE_absptr */
	uint64_t n;
	if (eh && aug[0] == 'z') {
		const uint8_t *d = cie->augmentation_data, *dend = d + cie->augmentation_data_size;
		for (const char *a = aug + 1; *a; a++) {
			if (*a == 'R' && d < dend)
				enc = *d++;
			else if (*a == 'P' && d < dend) {
				uint8_t penc = *d++;
				if (!skip_encoded(&d, dend, penc))
					return NULL;
			} else if (*a == 'L' && d < dend)
				d++;
			else if (*a != 'S' && *a != 'B')
				return NULL;
		}
	} else if (aug[0] != '\0') {
		return NULL;
	}
	if (!skip_encoded(&p, end, enc) || !skip_encoded(&p, end, enc & 0x0f))
		return NULL;
	if (aug[0] == 'z' && (!get_uleb(&p, end, &n) || !skip(&p, end, n)))
		return NULL;
	return p;
}

/* Whether the CFI section D (.eh_frame if EH, else .debug_frame) names no
 * register above CFI_MAX_REG anywhere. */
static bool cfi_sane(const unsigned char *ident, Elf_Data *d, bool eh)
{
	Dwarf_Off off = 0, next;
	Dwarf_CFI_Entry e, c;
	for (;;) {
		int r = dwarf_next_cfi(ident, d, eh, off, &next, &e);
		if (r == 1 || next == (Dwarf_Off)-1 || next <= off)
			return true;
		off = next;
		if (r != 0)
			continue;
		if (dwarf_cfi_cie_p(&e)) {
			if (e.cie.return_address_register > CFI_MAX_REG ||
			    !insns_sane(e.cie.initial_instructions, e.cie.initial_instructions_end))
				return false;
			continue;
		}
		Dwarf_Off cnext;
		const uint8_t *insns;
		if (dwarf_next_cfi(ident, d, eh, e.fde.CIE_pointer, &cnext, &c) != 0 || !dwarf_cfi_cie_p(&c) ||
		    !(insns = fde_insns(&c.cie, &e.fde, eh)))
			continue;
		if (!insns_sane(insns, e.fde.end))
			return false;
	}
}

/* The section named NAME of ELF, or NULL. */
static Elf_Scn *find_scn(Elf *elf, const char *name)
{
	size_t shstrndx;
	Elf_Scn *scn = NULL;
	if (elf_getshdrstrndx(elf, &shstrndx) != 0)
		return NULL;
	while ((scn = elf_nextscn(elf, scn))) {
		GElf_Shdr sh;
		const char *n;
		if (gelf_getshdr(scn, &sh) && (n = elf_strptr(elf, shstrndx, sh.sh_name)) &&
		    strcmp(n, name) == 0)
			return scn;
	}
	return NULL;
}

/* libelf over the image we already hold, made on first use. */
Elf *module_elf(const struct module *m)
{
	struct unwind_info *u = m->unwind;
	if (u && !u->elf && m->image)
		u->elf = elf_memory((char *)m->image, m->image_len);
	return u ? u->elf : NULL;
}

const char *module_scn_name(Elf *elf, size_t shstrndx, const GElf_Shdr *sh)
{
	const char *n = elf_strptr(elf, shstrndx, sh->sh_name);
	return n ? n : "";
}

/* libdw's CFI reader over the image we already hold (.eh_frame, using
 * .eh_frame_hdr's table when there is one), made on first use. */
Dwarf_CFI *cfi_rows_eh_frame(const struct module *m)
{
	struct unwind_info *u = m->unwind;
	if (!u || u->cfi.eh_tried)
		return u ? u->cfi.eh_cfi : NULL;
	u->cfi.eh_tried = 1;
	Elf *elf = module_elf(m);
	Elf_Scn *scn = elf ? find_scn(elf, ".eh_frame") : NULL;
	Elf_Data *d = scn ? elf_rawdata(scn, NULL) : NULL;
	const char *ident = elf ? elf_getident(elf, NULL) : NULL;
	if (d && ident && d->d_buf && cfi_sane((const unsigned char *)ident, d, true))
		u->cfi.eh_cfi = dwarf_getcfi_elf(elf);
	return u->cfi.eh_cfi;
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

bool module__fde_floor(const struct module *m, uint64_t addr, uint64_t *start)
{
	struct eh_table t;
	return module__eh_table(m, &t) == 0 && table_floor(m, &t, addr, start);
}

bool module__eh_frame_sane(struct Elf *elf)
{
	Elf_Scn *scn = elf ? find_scn(elf, ".eh_frame") : NULL;
	Elf_Data *d = scn ? elf_rawdata(scn, NULL) : NULL;
	const char *ident = elf ? elf_getident(elf, NULL) : NULL;
	/* No section: libdw would read the CFI from PT_GNU_EH_FRAME to the
	 * file's end, unchecked (a file with no section headers): not read. */
	return d && d->d_buf && ident && cfi_sane((const unsigned char *)ident, d, true);
}

/* ---- what libunwind cannot read ------------------------------------------ */

/* .debug_frame, decompressed if it is (SHF_COMPRESSED: libelf does it), in
 * an ELF image of its own: libdw's CFI reader takes a whole Dwarf, and
 * opening the module's would decompress every debug section (tens of MB
 * in a large Go binary) where this one is all we need.  M's file is read
 * through a libelf handle of its own (libelf writes to the sections it
 * decompresses: the module's image is a read-only mapping). */
void cfi_rows_debug_frame(const struct module *m, const GElf_Ehdr *eh)
{
	struct cfi_rows *c = &m->unwind->cfi;
	Elf *elf = m->fd >= 0 ? elf_begin(m->fd, ELF_C_READ_MMAP, NULL) : NULL;
	size_t shstrndx;
	Elf_Scn *scn = NULL;
	Elf_Data *d = NULL;
	if (!elf || elf_getshdrstrndx(elf, &shstrndx) != 0)
		goto out;
	while ((scn = elf_nextscn(elf, scn))) {
		GElf_Shdr sh;
		if (gelf_getshdr(scn, &sh) && sh.sh_type == SHT_PROGBITS &&
		    strcmp(module_scn_name(elf, shstrndx, &sh), ".debug_frame") == 0)
			break;
	}
	if (!scn)
		goto out;
	GElf_Shdr sh;
	if (gelf_getshdr(scn, &sh) && (sh.sh_flags & SHF_COMPRESSED) && elf_compress(scn, 0, 0) < 0)
		goto out;
	d = elf_getdata(scn, NULL);
	if (!d || !d->d_buf || d->d_size == 0 || d->d_size > DEBUG_FRAME_MAX ||
	    !cfi_sane(eh->e_ident, d, false))
		goto out;
	/* ELF header, the section's bytes, the names, three section headers. */
	static const char names[] = "\0.debug_frame\0.shstrtab";
	size_t data_off = sizeof(Elf64_Ehdr), names_off = data_off + d->d_size;
	size_t sh_off = (names_off + sizeof(names) + 7) & ~(size_t)7;
	size_t len = sh_off + 3 * sizeof(Elf64_Shdr);
	unsigned char *img = xcalloc(1, len);
	Elf64_Ehdr *e = (Elf64_Ehdr *)img;
	memcpy(e->e_ident, eh->e_ident, EI_NIDENT);
	e->e_type = eh->e_type;
	e->e_machine = eh->e_machine;   /* libdw's default rules come from it */
	e->e_version = EV_CURRENT;
	e->e_shoff = sh_off;
	e->e_ehsize = sizeof(Elf64_Ehdr);
	e->e_shentsize = sizeof(Elf64_Shdr);
	e->e_shnum = 3;
	e->e_shstrndx = 2;
	memcpy(img + data_off, d->d_buf, d->d_size);
	memcpy(img + names_off, names, sizeof(names));
	Elf64_Shdr *shdr = (Elf64_Shdr *)(img + sh_off);
	shdr[1] = (Elf64_Shdr){ .sh_name = 1, .sh_type = SHT_PROGBITS, .sh_offset = data_off,
				.sh_size = d->d_size, .sh_addralign = 1 };
	shdr[2] = (Elf64_Shdr){ .sh_name = 14, .sh_type = SHT_STRTAB, .sh_offset = names_off,
				.sh_size = sizeof(names), .sh_addralign = 1 };
	c->dframe_image = img;
	c->dframe_elf = elf_memory((char *)img, len);
	c->dframe = c->dframe_elf ? dwarf_begin_elf(c->dframe_elf, DWARF_C_READ, NULL) : NULL;
	c->dframe_cfi = c->dframe ? dwarf_getcfi(c->dframe) : NULL;
out:
	if (elf)
		elf_end(elf);
}

/* One register's rule, from libdw's location description for it: the
 * simple rules come back in OPS_MEM in a fixed form; anything else is an
 * expression of the CFI's own, kept by pointer. */
static void convert_rule(Dwarf_Frame *f, int regno, struct cfi_rule *r)
{
	Dwarf_Op mem[3], *ops;
	size_t n;
	memset(r, 0, sizeof(*r));
	r->kind = CFI_UNDEFINED;
	if (dwarf_frame_register(f, regno, mem, &ops, &n) != 0)
		return;
	if (n == 0) {
		r->kind = ops ? CFI_UNDEFINED : CFI_SAME;
		return;
	}
	if (ops != mem) {
		r->kind = ops[n - 1].atom == DW_OP_stack_value ? CFI_VAL_EXPR : CFI_EXPR;
		r->expr = ops;
		r->nexpr = n;
		return;
	}
	if (ops[0].atom == DW_OP_call_frame_cfa) {
		size_t i = 1;
		if (i < n && ops[i].atom == DW_OP_plus_uconst)
			r->off = (int64_t)ops[i++].number;
		bool value = i < n && ops[i].atom == DW_OP_stack_value;
		if (i + value == n)
			r->kind = value ? CFI_VAL_OFFSET : CFI_OFFSET;
	} else if (n == 1 && ops[0].atom == DW_OP_regx && ops[0].number <= 16) {
		r->kind = CFI_REGISTER;
		r->reg = (uint8_t)ops[0].number;
	}
}

int cfi_rows_compute(Dwarf_CFI *cfi, uint64_t vaddr, struct cfi_row *row)
{
	Dwarf_Frame *f = NULL;
	Dwarf_Op *ops;
	size_t n;
	bool sig = false;
	if (dwarf_cfi_addrframe(cfi, vaddr, &f) != 0)
		return -1;
	memset(row, 0, sizeof(*row));
	int ra = dwarf_frame_info(f, NULL, NULL, &sig);
	row->signal = sig;
	row->cfa.kind = CFI_UNDEFINED;
	if (dwarf_frame_cfa(f, &ops, &n) == 0 && n > 0) {
		if (n == 1 && ops[0].atom == DW_OP_bregx && ops[0].number <= 16) {
			row->cfa.kind = CFI_VAL_OFFSET;     /* the frame's copy: converted */
			row->cfa.reg = (uint8_t)ops[0].number;
			row->cfa.off = (int64_t)ops[0].number2;
		} else if (n > 1 || ops[0].atom != DW_OP_bregx) {
			row->cfa.kind = CFI_VAL_EXPR;       /* the CFI's own: kept */
			row->cfa.expr = ops;
			row->cfa.nexpr = n;
		}
	}
	for (int i = 0; i < CFI_NREGS; i++)
		convert_rule(f, i == CFI_RA ? ra : cfi_dwarf_reg[i], &row->regs[i]);
	if (ra < 0)
		row->regs[CFI_RA].kind = CFI_UNDEFINED;
	free(f);
	return 0;
}

void cfi_rows_end(struct cfi_rows *c)
{
	if (c->eh_cfi)
		dwarf_cfi_end(c->eh_cfi);
	if (c->dframe)
		dwarf_end(c->dframe);   /* ends dframe_cfi too */
	if (c->dframe_elf)
		elf_end(c->dframe_elf);
	free(c->dframe_image);
}
