/* ehframe: what a module's unwind information says without unwinding:
 * where its .eh_frame_hdr search table is (for libunwind's remote lookup,
 * unwind/unwinder.c), where the function holding an address starts (for
 * naming stripped code, dwarf/symbolizer.c), and the CFI rows libunwind
 * cannot find (.eh_frame without .eh_frame_hdr, .debug_frame), with the
 * facts the unwinder checks its other steps against (code ranges, Go's
 * stack roots). */
#include "module/modules.h"

#include <dwarf.h>
#include <elfutils/libdw.h>
#include <gelf.h>
#include <libelf.h>
#include <stdlib.h>
#include <string.h>

#include "module/cfi.h"
#include "util/xalloc.h"

#define DW_EH_PE_udata4 0x03
#define DW_EH_PE_sdata4 0x0b
#define DW_EH_PE_pcrel 0x10
#define DW_EH_PE_datarel 0x30

#define ROW_SLOTS 1024                  /* rows cached per module, by PC */
#define DEBUG_FRAME_MAX (256u << 20)    /* a larger .debug_frame is not read */

struct range {
	uint64_t lo, hi;                /* runtime addresses, [lo, hi) */
	int kind;                       /* roots: MODULE_ROOT_TOP or _SWITCH */
};

struct row_slot {
	uint64_t key;                   /* PC + 1; 0: empty */
	int found;
	struct cfi_row row;
};

struct module_cfi {
	Elf *elf;                       /* elf_memory over the module's image */
	Dwarf_CFI *cfi;                 /* its .eh_frame */
	int tried;
	/* The rest is made on the unwinder's first question (own_cfi()). */
	int own_tried;
	unsigned char *dframe_image;    /* a small ELF holding .debug_frame only */
	Elf *dframe_elf;
	Dwarf *dframe;
	Dwarf_CFI *dframe_cfi;
	struct range *code, *roots;
	size_t ncode, nroots;
	struct row_slot *rows;          /* ROW_SLOTS, direct-mapped */
};

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
	if (c->dframe)
		dwarf_end(c->dframe);   /* ends dframe_cfi too */
	if (c->dframe_elf)
		elf_end(c->dframe_elf);
	free(c->dframe_image);
	free(c->code);
	free(c->roots);
	free(c->rows);
	free(c);
}

/* ---- what libunwind cannot read ------------------------------------------ */

/* A section's name, or "". */
static const char *scn_name(Elf *elf, size_t shstrndx, const GElf_Shdr *sh)
{
	const char *n = elf_strptr(elf, shstrndx, sh->sh_name);
	return n ? n : "";
}

/* .debug_frame, decompressed if it is (SHF_COMPRESSED: libelf does it), in
 * an ELF image of its own: libdw's CFI reader takes a whole Dwarf, and
 * opening the module's would decompress every debug section (tens of MB
 * in a large Go binary) where this one is all we need.  M's file is read
 * through a libelf handle of its own (libelf writes to the sections it
 * decompresses: the module's image is a read-only mapping). */
static void load_debug_frame(const struct module *m, struct module_cfi *c, const GElf_Ehdr *eh)
{
	Elf *elf = m->fd >= 0 ? elf_begin(m->fd, ELF_C_READ_MMAP, NULL) : NULL;
	size_t shstrndx;
	Elf_Scn *scn = NULL;
	Elf_Data *d = NULL;
	if (!elf || elf_getshdrstrndx(elf, &shstrndx) != 0)
		goto out;
	while ((scn = elf_nextscn(elf, scn))) {
		GElf_Shdr sh;
		if (gelf_getshdr(scn, &sh) && sh.sh_type == SHT_PROGBITS &&
		    strcmp(scn_name(elf, shstrndx, &sh), ".debug_frame") == 0)
			break;
	}
	if (!scn)
		goto out;
	GElf_Shdr sh;
	if (gelf_getshdr(scn, &sh) && (sh.sh_flags & SHF_COMPRESSED) && elf_compress(scn, 0, 0) < 0)
		goto out;
	d = elf_getdata(scn, NULL);
	if (!d || !d->d_buf || d->d_size == 0 || d->d_size > DEBUG_FRAME_MAX)
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

/* The executable PT_LOAD segments, in runtime addresses. */
static void load_code_ranges(const struct module *m, struct module_cfi *c)
{
	size_t phnum;
	if (elf_getphdrnum(c->elf, &phnum) != 0 || phnum == 0)
		return;
	c->code = xcalloc(phnum, sizeof(*c->code));
	for (size_t i = 0; i < phnum; i++) {
		GElf_Phdr ph;
		if (gelf_getphdr(c->elf, (int)i, &ph) && ph.p_type == PT_LOAD && (ph.p_flags & PF_X) &&
		    ph.p_memsz && ph.p_vaddr + ph.p_memsz > ph.p_vaddr)
			c->code[c->ncode++] = (struct range){ ph.p_vaddr + m->bias,
							      ph.p_vaddr + ph.p_memsz + m->bias, 0 };
	}
}

/* Go's functions where a stack ends (see module__stack_root()), by the
 * names .symtab gives them (assembly ones carry the suffix ".abi0"). */
static const struct {
	const char *name;
	int kind;
} go_roots[] = {
	{ "runtime.goexit", MODULE_ROOT_TOP },       { "runtime.mstart", MODULE_ROOT_TOP },
	{ "runtime.rt0_go", MODULE_ROOT_TOP },       { "runtime.sigtramp", MODULE_ROOT_TOP },
	{ "runtime.mcall", MODULE_ROOT_SWITCH },     { "runtime.systemstack", MODULE_ROOT_SWITCH },
	{ "runtime.morestack", MODULE_ROOT_SWITCH }, { "runtime.asmcgocall", MODULE_ROOT_SWITCH },
};

static int go_root_kind(const char *name)
{
	for (size_t i = 0; i < sizeof(go_roots) / sizeof(go_roots[0]); i++) {
		size_t n = strlen(go_roots[i].name);
		if (strncmp(name, go_roots[i].name, n) == 0 &&
		    (name[n] == '\0' || strcmp(name + n, ".abi0") == 0))
			return go_roots[i].kind;
	}
	return 0;
}

static void load_go_roots(const struct module *m, struct module_cfi *c, Elf_Scn *symtab)
{
	GElf_Shdr sh;
	Elf_Data *d = elf_getdata(symtab, NULL);
	size_t cap = 0;
	if (!d || !gelf_getshdr(symtab, &sh) || sh.sh_entsize == 0)
		return;
	for (size_t i = 0, n = sh.sh_size / sh.sh_entsize; i < n; i++) {
		GElf_Sym sym;
		const char *name;
		int kind;
		if (!gelf_getsym(d, (int)i, &sym) || GELF_ST_TYPE(sym.st_info) != STT_FUNC ||
		    !(name = elf_strptr(c->elf, sh.sh_link, sym.st_name)) || !(kind = go_root_kind(name)))
			continue;
		if (c->nroots == cap) {
			cap = cap ? 2 * cap : 8;
			c->roots = xrealloc(c->roots, cap * sizeof(*c->roots));
		}
		uint64_t lo = sym.st_value + m->bias;
		c->roots[c->nroots++] = (struct range){ lo, lo + (sym.st_size ? sym.st_size : 1), kind };
	}
}

/* The module's state for the unwinder, made on first use: code ranges,
 * .debug_frame if there is one, Go's roots if it is a Go program. */
static struct module_cfi *own_cfi(const struct module *m)
{
	struct module_cfi *c = m->cfi;
	size_t shstrndx;
	GElf_Ehdr eh;
	if (!c || c->own_tried)
		return c;
	c->own_tried = 1;
	module_cfi(m);
	if (!c->elf || !gelf_getehdr(c->elf, &eh))
		return c;
	load_code_ranges(m, c);
	if (elf_getshdrstrndx(c->elf, &shstrndx) != 0)
		return c;
	bool go = false, dframe = false;
	Elf_Scn *scn = NULL, *symtab = NULL;
	while ((scn = elf_nextscn(c->elf, scn))) {
		GElf_Shdr sh;
		if (!gelf_getshdr(scn, &sh))
			continue;
		const char *n = scn_name(c->elf, shstrndx, &sh);
		go |= strcmp(n, ".gopclntab") == 0 || strcmp(n, ".note.go.buildid") == 0;
		dframe |= strcmp(n, ".debug_frame") == 0;
		if (sh.sh_type == SHT_SYMTAB)
			symtab = scn;
	}
	if (dframe)
		load_debug_frame(m, c, &eh);
	if (go && symtab)
		load_go_roots(m, c, symtab);
	return c;
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

static int compute_row(Dwarf_CFI *cfi, uint64_t vaddr, struct cfi_row *row)
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

const struct cfi_row *module__cfi_row(const struct module *m, uint64_t pc)
{
	struct module_cfi *c = own_cfi(m);
	if (!c || (!c->dframe_cfi && (m->eh_frame_hdr || !c->cfi)))
		return NULL;
	if (!c->rows)
		c->rows = xcalloc(ROW_SLOTS, sizeof(*c->rows));
	struct row_slot *s = &c->rows[(pc * 0x9e3779b97f4a7c15ull) >> 54];
	if (s->key != pc + 1) {
		uint64_t v = pc - m->bias;
		s->key = pc + 1;
		s->found = (!m->eh_frame_hdr && c->cfi && compute_row(c->cfi, v, &s->row) == 0) ||
			   (c->dframe_cfi && compute_row(c->dframe_cfi, v, &s->row) == 0);
	}
	return s->found ? &s->row : NULL;
}

bool module__is_code(const struct module *m, uint64_t addr)
{
	struct module_cfi *c = own_cfi(m);
	for (size_t i = 0; c && i < c->ncode; i++)
		if (addr >= c->code[i].lo && addr < c->code[i].hi)
			return true;
	return false;
}

int module__stack_root(const struct module *m, uint64_t pc)
{
	struct module_cfi *c = own_cfi(m);
	for (size_t i = 0; c && i < c->nroots; i++)
		if (pc >= c->roots[i].lo && pc < c->roots[i].hi)
			return c->roots[i].kind;
	return 0;
}
