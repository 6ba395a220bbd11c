#include "module/gopclntab.h"

#include <errno.h>
#include <gelf.h>
#include <libelf.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "util/xalloc.h"

/* Longest name or file accepted: a string not ended by a NUL within this
 * many bytes is malformed, not a name to carry into a profile. */
#define MAX_STR 8192

enum { VER12 = 12, VER116 = 116, VER118 = 118, VER120 = 120 };

struct gopclntab {
	const unsigned char *d;
	size_t len;
	int ver;
	bool big;                       /* big-endian table */
	unsigned quantum;               /* instruction size unit of pc deltas */
	unsigned ptrsize;
	unsigned ftsz;                  /* size of one functab field */
	uint64_t text_start;
	uint64_t nfunc;
	/* Offsets into the section of each sub-table (0 for the Go 1.2 ones
	 * that are addressed from the section's start). */
	uint64_t functab, funcdata, funcnames, cutab, filetab, pctab;
	uint64_t nfiles;                /* Go 1.2: entries of filetab */
};

/* An unsigned integer of SIZE (4 or 8) bytes at OFF, if it is inside. */
static bool rd(const struct gopclntab *g, uint64_t off, unsigned size, uint64_t *v)
{
	if (off > g->len || size > g->len - off)
		return false;
	const unsigned char *p = g->d + off;
	uint64_t x = 0;
	for (unsigned i = 0; i < size; i++)
		x |= (uint64_t)p[g->big ? size - 1 - i : i] << (8 * i);
	*v = x;
	return true;
}

static bool rd32(const struct gopclntab *g, uint64_t off, uint32_t *v)
{
	uint64_t x;
	if (!rd(g, off, 4, &x))
		return false;
	*v = (uint32_t)x;
	return true;
}

/* BASE + OFF without wrapping, and inside the section. */
static bool at(const struct gopclntab *g, uint64_t base, uint64_t off, uint64_t *pos)
{
	if (off > UINT64_MAX - base || base + off >= g->len)
		return false;
	*pos = base + off;
	return true;
}

/* The NUL-terminated string at BASE + OFF, or NULL. */
static const char *cstr(const struct gopclntab *g, uint64_t base, uint64_t off)
{
	uint64_t pos;
	if (!at(g, base, off, &pos))
		return NULL;
	size_t room = g->len - pos;
	if (!memchr(g->d + pos, 0, room < MAX_STR ? room : MAX_STR))
		return NULL;
	return (const char *)g->d + pos;
}

static bool header_magic(struct gopclntab *g)
{
	static const struct { uint32_t magic; int ver; } known[] = {
		{ 0xfffffffb, VER12 }, { 0xfffffffa, VER116 },
		{ 0xfffffff0, VER118 }, { 0xfffffff1, VER120 },
	};
	const unsigned char *d = g->d;
	uint32_t le = d[0] | d[1] << 8 | d[2] << 16 | (uint32_t)d[3] << 24;
	uint32_t be = d[3] | d[2] << 8 | d[1] << 16 | (uint32_t)d[0] << 24;
	for (size_t i = 0; i < sizeof(known) / sizeof(known[0]); i++) {
		if (le == known[i].magic || be == known[i].magic) {
			g->ver = known[i].ver;
			g->big = le != known[i].magic;
			return true;
		}
	}
	return false;
}

/* The header's word I (pointer-sized, after the 8 fixed bytes). */
static bool word(const struct gopclntab *g, unsigned i, uint64_t *v)
{
	return rd(g, 8 + (uint64_t)i * g->ptrsize, g->ptrsize, v);
}

/* Go 1.16 and later: counts and sub-table offsets in the header. */
static bool header_116(struct gopclntab *g)
{
	/* 1.18 inserted textStart as word 2; the others moved up by one. */
	unsigned k = g->ver >= VER118 ? 1 : 0;
	uint64_t off[5];
	if (!word(g, 0, &g->nfunc) || !word(g, 1, &g->nfiles))
		return false;
	for (unsigned i = 0; i < 5; i++)
		if (!word(g, 2 + k + i, &off[i]) || off[i] > g->len)
			return false;
	g->funcnames = off[0];
	g->cutab = off[1];
	g->filetab = off[2];
	g->pctab = off[3];
	g->functab = g->funcdata = off[4];
	g->ftsz = g->ver >= VER118 ? 4 : g->ptrsize;
	return true;
}

/* Go 1.2: the function table follows the function count; the file
 * table's offset follows the function table. */
static bool header_12(struct gopclntab *g)
{
	uint32_t fileoff, nfiles;
	if (!word(g, 0, &g->nfunc))
		return false;
	g->ftsz = g->ptrsize;
	g->functab = 8 + g->ptrsize;
	if (g->nfunc > (g->len - g->functab) / (2 * g->ftsz))
		return false;
	if (!rd32(g, g->functab + (2 * g->nfunc + 1) * g->ftsz, &fileoff) ||
	    !rd32(g, fileoff, &nfiles) || nfiles > (g->len - fileoff) / 4)
		return false;
	g->filetab = fileoff;
	g->nfiles = nfiles;
	return true;
}

struct gopclntab *gopclntab__new(const void *data, size_t len, uint64_t text_start)
{
	struct gopclntab t = { .d = data, .len = len, .text_start = text_start };
	if (!data || len < 16 || !header_magic(&t))
		return NULL;
	t.quantum = t.d[6];
	t.ptrsize = t.d[7];
	if (t.d[4] != 0 || t.d[5] != 0 ||
	    (t.quantum != 1 && t.quantum != 2 && t.quantum != 4) ||
	    (t.ptrsize != 4 && t.ptrsize != 8))
		return NULL;
	if (!(t.ver == VER12 ? header_12(&t) : header_116(&t)))
		return NULL;
	/* The whole function table (NFUNC pairs and the end PC) must fit. */
	if (t.functab > len || t.nfunc > (len - t.functab) / t.ftsz / 2 ||
	    (2 * t.nfunc + 1) * t.ftsz > len - t.functab)
		return NULL;
	struct gopclntab *g = xmalloc(sizeof(*g));
	*g = t;
	return g;
}

void gopclntab__free(struct gopclntab *g)
{
	free(g);
}

size_t gopclntab__count(const struct gopclntab *g)
{
	return (size_t)g->nfunc;
}

/* Field I of the function table: even ones are entry PCs, odd ones the
 * offsets of the functions' _func records. */
static bool ftab(const struct gopclntab *g, uint64_t i, uint64_t *v)
{
	if (!rd(g, g->functab + i * g->ftsz, g->ftsz, v))
		return false;
	if (g->ver >= VER118 && !(i & 1))
		*v += g->text_start;    /* 1.18+: entries are text offsets */
	return true;
}

int gopclntab__entry(const struct gopclntab *g, size_t i, uint64_t *pc)
{
	if (i > g->nfunc || !ftab(g, 2 * (uint64_t)i, pc))
		return -ENOENT;
	return 0;
}

/* An unsigned LEB128-style varint of at most 32 bits at *POS. */
static bool uvarint(const struct gopclntab *g, uint64_t *pos, uint32_t *v)
{
	uint32_t x = 0;
	for (unsigned shift = 0; shift < 35; shift += 7) {
		if (*pos >= g->len)
			return false;
		unsigned char b = g->d[(*pos)++];
		x |= (uint32_t)(b & 0x7f) << shift;
		if (!(b & 0x80)) {
			*v = x;
			return true;
		}
	}
	return false;
}

/* The value that the pc-value table at OFF (from pctab) gives TARGET in
 * the function starting at ENTRY, or -1.  The table is pairs of varints:
 * a zig-zag value delta, then a pc delta in quantum units; a zero value
 * delta after the first pair ends it.  Each step consumes at least two
 * bytes, so the loop ends within the section. */
static int32_t pcvalue(const struct gopclntab *g, uint32_t off, uint64_t entry, uint64_t target)
{
	uint64_t pos, pc = entry;
	uint32_t val = (uint32_t)-1, uv, pcd;
	if (off == 0 || !at(g, g->pctab, off, &pos))
		return -1;
	for (;;) {
		bool first = pc == entry;
		if (!uvarint(g, &pos, &uv) || (uv == 0 && !first))
			return -1;
		val += (uv & 1) ? ~(uv >> 1) : uv >> 1;
		if (!uvarint(g, &pos, &pcd))
			return -1;
		pc += (uint64_t)pcd * g->quantum;
		if (target < pc)
			return (int32_t)val;
	}
}

/* The index of the function holding PC: the last entry at or below it. */
static int find(const struct gopclntab *g, uint64_t pc, uint64_t *idx)
{
	uint64_t first, end, lo = 0, hi = g->nfunc;
	if (g->nfunc == 0 || !ftab(g, 0, &first) || !ftab(g, 2 * g->nfunc, &end))
		return -EINVAL;
	if (pc < first || pc >= end)
		return -ENOENT;
	while (hi - lo > 1) {           /* entry(lo) <= pc, pc < entry(hi) */
		uint64_t mid = lo + (hi - lo) / 2, e;
		if (!ftab(g, 2 * mid, &e))
			return -EINVAL;
		if (e <= pc)
			lo = mid;
		else
			hi = mid;
	}
	*idx = lo;
	return 0;
}

static const char *file_of(const struct gopclntab *g, int32_t fno, uint32_t cuoff)
{
	uint32_t off;
	if (g->ver == VER12) {          /* a global index, 1-based */
		if (fno <= 0 || (uint64_t)fno >= g->nfiles ||
		    !rd32(g, g->filetab + 4 * (uint64_t)fno, &off))
			return NULL;
		return cstr(g, 0, off);
	}
	/* 1.16+: an index into the function's compilation unit's files. */
	if (fno < 0 || cuoff == UINT32_MAX ||
	    !rd32(g, g->cutab + 4 * ((uint64_t)cuoff + (uint64_t)fno), &off) || off == UINT32_MAX)
		return NULL;
	return cstr(g, g->filetab, off);
}

/* The _func record of the function holding PC: its entry, and its 4-byte
 * fields F[1..]: name, args, deferreturn (frame before 1.16), pcsp, pcfile,
 * pcln, npcdata, and since 1.16 the CU offset.  IDX is its index. */
static int func_record(const struct gopclntab *g, uint64_t pc, uint64_t *idx, uint64_t *entry,
		       uint32_t f[9])
{
	uint64_t funcoff, rec;
	int r = find(g, pc, idx);
	if (r < 0)
		return r;
	if (!ftab(g, 2 * *idx + 1, &funcoff) || !at(g, g->funcdata, funcoff, &rec))
		return -EINVAL;
	/* The entry is a uintptr; a 4-byte text offset since 1.18. */
	unsigned sz0 = g->ver >= VER118 ? 4 : g->ptrsize;
	unsigned nf = g->ver == VER12 ? 7 : 9;
	memset(f, 0, 9 * sizeof(f[0]));
	if (!rd(g, rec, sz0, entry))
		return -EINVAL;
	if (g->ver >= VER118)
		*entry += g->text_start;
	for (unsigned i = 1; i < nf; i++)
		if (!rd32(g, rec + sz0 + 4 * (i - 1), &f[i]))
			return -EINVAL;
	return *entry > pc ? -EINVAL : 0;
}

int gopclntab__frame(const struct gopclntab *g, uint64_t pc, uint64_t *start, uint64_t *end,
		     uint32_t *spdelta)
{
	uint64_t idx, entry, next;
	uint32_t f[9];
	int r = func_record(g, pc, &idx, &entry, f);
	if (r < 0)
		return r;
	/* find() checked the table's end entry, so IDX + 1 is in it. */
	if (!ftab(g, 2 * (idx + 1), &next))
		return -EINVAL;
	int32_t sp = pcvalue(g, f[4], entry, pc);
	if (next <= pc || sp < 0 || sp % (int32_t)g->ptrsize != 0)
		return -EINVAL;
	if (start)
		*start = entry;
	if (end)
		*end = next;
	if (spdelta)
		*spdelta = (uint32_t)sp;
	return 0;
}

int gopclntab__lookup(const struct gopclntab *g, uint64_t pc, const char **func,
		      const char **file, int *line)
{
	uint64_t idx, entry;
	uint32_t f[9];
	int r = func_record(g, pc, &idx, &entry, f);
	if (r < 0)
		return r;
	const char *name = cstr(g, g->funcnames, f[1]);
	if (!name)
		return -EINVAL;
	if (func)
		*func = name;
	if (line) {
		int32_t l = pcvalue(g, f[6], entry, pc);
		*line = l > 0 ? l : 0;
	}
	if (file)
		*file = file_of(g, pcvalue(g, f[5], entry, pc), g->ver == VER12 ? UINT32_MAX : f[8]);
	return 0;
}

/* ---- finding the table in an ELF file ---- */

struct go_elf {
	uint64_t tab_off, tab_size;     /* the section, as file offsets */
	uint64_t tab_addr;              /* ... and its link-time address */
	bool have_tab;
	uint64_t text;                  /* .text's address */
	uint64_t sym_text, sym_tab, sym_etab;   /* from .symtab, 0 if absent */
	bool go;                        /* a section only Go's linker makes */
	Elf_Scn *symtab;
};

static void scan_symtab(Elf_Scn *scn, const GElf_Shdr *sh, struct go_elf *ge, Elf *elf)
{
	Elf_Data *d = elf_getdata(scn, NULL);
	if (!d || sh->sh_entsize == 0)
		return;
	size_t n = d->d_size / sh->sh_entsize;
	for (size_t i = 0; i < n; i++) {
		GElf_Sym sym;
		if (!gelf_getsym(d, (int)i, &sym))
			break;
		const char *name = elf_strptr(elf, sh->sh_link, sym.st_name);
		if (!name || strncmp(name, "runtime.", 8) != 0)
			continue;
		if (strcmp(name + 8, "text") == 0)
			ge->sym_text = sym.st_value;
		else if (strcmp(name + 8, "pclntab") == 0)
			ge->sym_tab = sym.st_value;
		else if (strcmp(name + 8, "epclntab") == 0)
			ge->sym_etab = sym.st_value;
	}
}

static void scan_sections(Elf *elf, size_t shstrndx, struct go_elf *ge)
{
	Elf_Scn *scn = NULL;
	while ((scn = elf_nextscn(elf, scn))) {
		GElf_Shdr sh;
		const char *name;
		if (!gelf_getshdr(scn, &sh) || !(name = elf_strptr(elf, shstrndx, sh.sh_name)))
			continue;
		if (strcmp(name, ".go.buildinfo") == 0 || strcmp(name, ".note.go.buildid") == 0)
			ge->go = true;
		if (sh.sh_type == SHT_SYMTAB)
			ge->symtab = scn;
		else if (strcmp(name, ".text") == 0)
			ge->text = sh.sh_addr;
		else if ((strcmp(name, ".gopclntab") == 0 ||
			  strcmp(name, ".data.rel.ro.gopclntab") == 0) &&
			 sh.sh_type == SHT_PROGBITS && !(sh.sh_flags & SHF_COMPRESSED)) {
			ge->tab_off = sh.sh_offset;
			ge->tab_size = sh.sh_size;
			ge->tab_addr = sh.sh_addr;
			ge->have_tab = ge->go = true;
		}
	}
	/* Only a Go binary's symbols are worth a look (a C++ program's
	 * .symtab can be large). */
	GElf_Shdr sh;
	if (ge->go && ge->symtab && gelf_getshdr(ge->symtab, &sh))
		scan_symtab(ge->symtab, &sh, ge, elf);
}

/* The file offset of link-time address [VADDR, VADDR + SIZE), if one
 * PT_LOAD segment holds it in the file. */
static bool vaddr_to_off(Elf *elf, uint64_t vaddr, uint64_t size, uint64_t *off)
{
	size_t nph;
	if (elf_getphdrnum(elf, &nph) != 0)
		return false;
	for (size_t i = 0; i < nph; i++) {
		GElf_Phdr ph;
		if (!gelf_getphdr(elf, (int)i, &ph) || ph.p_type != PT_LOAD ||
		    vaddr < ph.p_vaddr || vaddr - ph.p_vaddr > ph.p_filesz ||
		    size > ph.p_filesz - (vaddr - ph.p_vaddr))
			continue;
		*off = ph.p_offset + (vaddr - ph.p_vaddr);
		return *off >= ph.p_offset;
	}
	return false;
}

/* Whether [ADDR, ADDR + 1) is in an executable PT_LOAD segment. */
static bool in_text(Elf *elf, uint64_t addr)
{
	size_t nph;
	if (elf_getphdrnum(elf, &nph) != 0)
		return false;
	for (size_t i = 0; i < nph; i++) {
		GElf_Phdr ph;
		if (gelf_getphdr(elf, (int)i, &ph) && ph.p_type == PT_LOAD && (ph.p_flags & PF_X) &&
		    addr >= ph.p_vaddr && addr - ph.p_vaddr < ph.p_memsz)
			return true;
	}
	return false;
}

/* The addend of the R_X86_64_RELATIVE relocation (R_AARCH64_RELATIVE)
 * that the dynamic linker applies at link-time address AT, or 0. */
static uint64_t relative_reloc(Elf *elf, uint64_t at)
{
	Elf_Scn *scn = NULL;
	while ((scn = elf_nextscn(elf, scn))) {
		GElf_Shdr sh;
		Elf_Data *d;
		if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_RELA || !(sh.sh_flags & SHF_ALLOC) ||
		    sh.sh_entsize == 0 || !(d = elf_getdata(scn, NULL)))
			continue;
		size_t n = d->d_size / sh.sh_entsize;
		for (size_t i = 0; i < n; i++) {
			GElf_Rela r;
			if (!gelf_getrela(d, (int)i, &r))
				break;
			unsigned type = GELF_R_TYPE(r.r_info);
			if (r.r_offset == at && (type == 8 /* x86-64 */ || type == 1027 /* aarch64 */))
				return (uint64_t)r.r_addend;
		}
	}
	return 0;
}

/* Go 1.18+: where the function offsets count from.  Go's runtime takes it
 * from its module data (moduledata.text), and the table's header keeps a
 * copy of the same value (pcHeader.textStart, the header's third word).
 * Go's own linker puts runtime.text at the start of .text, but with an
 * external linker (cgo, -linkmode=external: Debian's Go programs) the C
 * start-up code comes first, and .text's address is off by its size; so
 * the header's word is read: as the file holds it (a position-dependent
 * executable), or as the dynamic linker would write it (a PIE keeps 0 in
 * the file and an R_*_RELATIVE relocation whose addend is the value).
 * It must be in executable code, or it is not used. */
static uint64_t header_text(Elf *elf, const struct go_elf *ge, const unsigned char *tab)
{
	unsigned ptrsize = tab[7];
	uint64_t v = 0;
	if (ptrsize != 8 || ge->tab_size < 8 + 3 * 8)
		return 0;
	uint32_t magic = tab[0] | tab[1] << 8 | tab[2] << 16 | (uint32_t)tab[3] << 24;
	if (magic != 0xfffffff0 && magic != 0xfffffff1)
		return 0;
	memcpy(&v, tab + 8 + 2 * 8, 8);         /* little-endian hosts only read this */
	if (v == 0 && ge->tab_addr)
		v = relative_reloc(elf, ge->tab_addr + 8 + 2 * 8);
	return v && in_text(elf, v) ? v : 0;
}

struct gopclntab *gopclntab__from_elf(const void *image, size_t len)
{
	struct go_elf ge = { 0 };
	struct gopclntab *g = NULL;
	size_t shstrndx;
	elf_version(EV_CURRENT);
	Elf *elf = elf_memory((char *)image, len);
	if (!elf || elf_kind(elf) != ELF_K_ELF || elf_getshdrstrndx(elf, &shstrndx) != 0)
		goto out;
	scan_sections(elf, shstrndx, &ge);
	if (!ge.have_tab && ge.sym_tab && ge.sym_etab > ge.sym_tab) {
		ge.tab_size = ge.sym_etab - ge.sym_tab;
		ge.tab_addr = ge.sym_tab;
		ge.have_tab = vaddr_to_off(elf, ge.sym_tab, ge.tab_size, &ge.tab_off);
	}
	if (!ge.have_tab || ge.tab_off > len || ge.tab_size > len - ge.tab_off)
		goto out;
	const unsigned char *tab = (const unsigned char *)image + ge.tab_off;
	uint64_t text = ge.sym_text;
	if (!text)
		text = header_text(elf, &ge, tab);
	g = gopclntab__new(tab, (size_t)ge.tab_size, text ? text : ge.text);
out:
	if (elf)
		elf_end(elf);
	return g;
}
