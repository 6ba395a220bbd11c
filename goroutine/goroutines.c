#include "goroutine/goroutines.h"

#include <dwarf.h>
#include <elfutils/libdw.h>
#include <errno.h>
#include <gelf.h>
#include <libelf.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/uio.h>

#include "goroutine/golayout.h"
#include "module/gopclntab.h"
#include "module/modules.h"
#include "util/remote.h"
#include "util/xalloc.h"

#define MAX_GOROUTINES GOROUTINES_MAX  /* a bound on allglen: against a torn read, a
					   runtime that lies; past it the view gives up */
#define MAX_REASONS 256
#define VERSION_READ 64                 /* bytes of a Go version string */
#define LABEL_SLOTS 256                 /* label sets kept, direct-mapped */
#define LABEL_LEN 64                    /* bytes of a label's key or value */
#define CODE_READ 2048                  /* bytes of a runtime function read (1.19: allgadd
					   0x16f, newproc1 0x3b9) */
#define MAX_SPAN 512                    /* bytes of a g read: goroutines__read()'s buffer */
#define MAX_G_OFFSET (64u << 10)        /* of a field in runtime.g (Go 1.19's g: 416 bytes) */
#define REASON_MAX_LEN 48
#define IOV_BATCH 1024                  /* UIO_MAXIOV */
#define READ_BUDGET 4096                /* records read per scan, in turn (those last
					   seen waiting or dead); the others every scan */
#define RUN_GAP 512                     /* records this close are read in one range */
#define RUN_MAX (64u << 10)             /* ... of at most this many bytes */
#define RAW_BATCH (128u << 10)          /* bytes read per system call, at most: compared
					   while still in the cache */
#define SYS_SLOTS 1024                  /* startpc -> system?, direct-mapped */
#define MAX_FAULTS 64                   /* reads cut short that a scan resumes past the
					   byte that stopped them: a system call each */
/* offs[] of a record not in its batch's read. */
#define OFF_NONE SIZE_MAX               /* no g: 0 or misaligned */
#define OFF_REPEAT (SIZE_MAX - 1)       /* a g listed before */
#define OFF_CARRIED (SIZE_MAX - 2)      /* not its turn: as last read */

/* Offsets in runtime.g of what a record holds, and the span read.  The
 * fields from F_KEY_N on are not compared from one scan to the next: they
 * are set when a g gets its goroutine, and so change only with its goid. */
enum { F_STACK_LO, F_STACK_HI, F_M, F_SCHED_SP, F_SCHED_PC, F_SCHED_BP, F_STATUS, F_GOID,
       F_REASON, F_KEY_N, F_STARTPC = F_KEY_N, F_GOPC, F_N };
_Static_assert(F_N == GO_G_FIELDS, "struct go_layout's g_off[] is in F_ order");

struct goroutines {
	pid_t pid;
	uint64_t allgs, allglen;        /* runtime addresses of the variables */
	uint64_t off[F_N];
	size_t rel[F_N];                /* off - span_lo */
	uint64_t span_lo, span_len;     /* the part of a g read: [span_lo, +len) */
	uint64_t m_procid;              /* offset of procid in runtime.m */
	uint64_t labels_off;            /* offset of g.labels, or 0: not read */
	size_t labels_rel;              /* labels_off - span_lo */
	char *reasons[MAX_REASONS];
	struct gopclntab *pcln;         /* to name a goroutine's function */
	const struct module *main;
	struct go_rec *recs;
	uint64_t *gptrs;
	uint64_t *prev_g;               /* by index: the g read last time, or 0 */
	struct key *prev;               /* by index: what was read of it */
	uint32_t *order;                /* gptrs' indices by address */
	size_t sorted_len;
	size_t *offs;                   /* each record's place in raw, in its batch */
	unsigned char *raw;             /* one batch: RAW_BATCH bytes */
	size_t cap;
	uint64_t dups;                  /* entries of allgs at the last scan that repeat a g */
	uint64_t carried;               /* records not read at the last scan (the budget) */
	size_t cursor;                  /* where in address order the next scan's turn is */
	uint64_t last_len;              /* allglen as read at the last scan */
	struct {
		uint64_t key;           /* startpc + 1 */
		int system;
	} sys[SYS_SLOTS];
	struct {
		uint64_t m;
		pid_t tid;
	} mtid[64];                     /* M -> TID: an M keeps its thread */
	struct {
		uint64_t set, hash0;    /* the set's address and its map's seed */
		char *text;             /* its labels, or NULL */
	} labels[LABEL_SLOTS];          /* label sets read: a set does not change
					   (pprof.Do makes a new one) */
};

/* ---- the layout, from DWARF ---------------------------------------------- */

struct want {
	Dwarf_Die g, m, var_allgs, var_allglen, var_reasons;
	bool have_g, have_m, have_allgs, have_allglen, have_reasons;
};

/* DIE's type, typedefs looked through. */
static bool type_of(Dwarf_Die *die, Dwarf_Die *type)
{
	Dwarf_Attribute a;
	if (!dwarf_attr_integrate(die, DW_AT_type, &a) || !dwarf_formref_die(&a, type))
		return false;
	for (int i = 0; i < 8 && dwarf_tag(type) == DW_TAG_typedef; i++)
		if (!dwarf_attr_integrate(type, DW_AT_type, &a) || !dwarf_formref_die(&a, type))
			return false;
	return true;
}

/* The offset of member NAME of struct S, and its type if TYPE. */
static bool member(Dwarf_Die *s, const char *name, uint64_t *off, Dwarf_Die *type)
{
	Dwarf_Die c;
	if (dwarf_child(s, &c) != 0)
		return false;
	do {
		const char *n = dwarf_diename(&c);
		Dwarf_Attribute a;
		Dwarf_Word w;
		if (dwarf_tag(&c) != DW_TAG_member || !n || strcmp(n, name) != 0)
			continue;
		if (!dwarf_attr(&c, DW_AT_data_member_location, &a) || dwarf_formudata(&a, &w) != 0)
			return false;
		*off = w;
		return !type || type_of(&c, type);
	} while (dwarf_siblingof(&c, &c) == 0);
	return false;
}

/* OFF of S.A.B (B NULL: S.A). */
static bool member2(Dwarf_Die *s, const char *a, const char *b, uint64_t *off)
{
	Dwarf_Die t;
	uint64_t o1, o2;
	if (!member(s, a, &o1, b ? &t : NULL))
		return false;
	if (!b) {
		*off = o1;
		return true;
	}
	if (!member(&t, b, &o2, NULL))
		return false;
	*off = o1 + o2;
	return true;
}

/* A global's address: its location is DW_OP_addr ADDR.  Go writes it as a
 * DW_FORM_block1, which dwarf_getlocation() does not take in a DWARF 4
 * unit, so the block is read as it is. */
static bool var_addr(Dwarf_Die *v, uint64_t *addr)
{
	Dwarf_Attribute a;
	Dwarf_Block b;
	if (!dwarf_attr(v, DW_AT_location, &a) || dwarf_formblock(&a, &b) != 0 || b.length != 9 ||
	    b.data[0] != DW_OP_addr)
		return false;
	memcpy(addr, b.data + 1, 8);
	return true;
}

static void find_dies(Dwarf *dw, struct want *w)
{
	Dwarf_Off off = 0, next;
	size_t hsize;
	while (dwarf_nextcu(dw, off, &next, &hsize, NULL, NULL, NULL) == 0) {
		Dwarf_Die cu, c;
		if (dwarf_offdie(dw, off + hsize, &cu) && dwarf_child(&cu, &c) == 0) {
			do {
				const char *n = dwarf_diename(&c);
				int tag = dwarf_tag(&c);
				if (!n || strncmp(n, "runtime.", 8) != 0)
					continue;
				n += 8;
				if (tag == DW_TAG_structure_type && !w->have_g && strcmp(n, "g") == 0)
					w->g = c, w->have_g = true;
				else if (tag == DW_TAG_structure_type && !w->have_m && strcmp(n, "m") == 0)
					w->m = c, w->have_m = true;
				else if (tag == DW_TAG_variable && strcmp(n, "allgs") == 0)
					w->var_allgs = c, w->have_allgs = true;
				else if (tag == DW_TAG_variable && strcmp(n, "allglen") == 0)
					w->var_allglen = c, w->have_allglen = true;
				else if (tag == DW_TAG_variable && strcmp(n, "waitReasonStrings") == 0)
					w->var_reasons = c, w->have_reasons = true;
			} while (dwarf_siblingof(&c, &c) == 0);
		}
		off = next;
	}
}

/* The fields of runtime.g read, by F_: NAME.SUB (SUB NULL: NAME). */
static const struct {
	const char *a, *b;
} names[F_N] = {
	[F_STACK_LO] = { "stack", "lo" },   [F_STACK_HI] = { "stack", "hi" },
	[F_M] = { "m", NULL },              [F_SCHED_SP] = { "sched", "sp" },
	[F_SCHED_PC] = { "sched", "pc" },   [F_SCHED_BP] = { "sched", "bp" },
	[F_STATUS] = { "atomicstatus", NULL }, [F_GOID] = { "goid", NULL },
	[F_REASON] = { "waitreason", NULL }, [F_STARTPC] = { "startpc", NULL },
	[F_GOPC] = { "gopc", NULL },
};

/* The layout from the program's DWARF, as link-time addresses;
 * no check of the values: goroutines__from_layout() does that. */
static int layout(Dwarf *dw, struct go_layout *l, char *note, size_t notelen)
{
	struct want w = { 0 };
	find_dies(dw, &w);
	if (!w.have_g || !w.have_m || !w.have_allgs || !w.have_allglen ||
	    !var_addr(&w.var_allgs, &l->allgs) || !var_addr(&w.var_allglen, &l->allglen) ||
	    !member(&w.m, "procid", &l->m_procid, NULL)) {
		snprintf(note, notelen, "its DWARF has no runtime.g, runtime.m, runtime.allgs or runtime.allglen");
		return -ENOENT;
	}
	if (!member(&w.g, "labels", &l->g_labels, NULL))
		l->g_labels = 0;        /* read only for a known version: goroutines__new() */
	for (int i = 0; i < F_N; i++) {
		if (!member2(&w.g, names[i].a, names[i].b, &l->g_off[i])) {
			snprintf(note, notelen, "runtime.g has no field %s%s%s", names[i].a,
				 names[i].b ? "." : "", names[i].b ? names[i].b : "");
			return -ENOENT;
		}
	}
	l->nreasons = 0;
	Dwarf_Die at, sub;
	Dwarf_Attribute a;
	Dwarf_Word count;
	if (w.have_reasons && var_addr(&w.var_reasons, &l->reasons) && type_of(&w.var_reasons, &at) &&
	    dwarf_child(&at, &sub) == 0) {
		if (dwarf_attr(&sub, DW_AT_count, &a) && dwarf_formudata(&a, &count) == 0)
			l->nreasons = count;
		else if (dwarf_attr(&sub, DW_AT_upper_bound, &a) && dwarf_formudata(&a, &count) == 0)
			l->nreasons = count + 1;
	}
	return 0;
}

/* The part of a g read: from the lowest field to 8 bytes past the highest.
 * NOTE (if not NULL) says why not. */
static int set_span(struct goroutines *gs, const struct go_layout *l, char *note, size_t notelen)
{
	uint64_t lo = UINT64_MAX, hi = 0;
	for (int i = 0; i < F_N; i++) {
		/* Bounded first: an offset within 8 of 2^64 would wrap hi
		 * below it, and the span would not hold the field. */
		if (l->g_off[i] > MAX_G_OFFSET) {
			if (note)
				snprintf(note, notelen, "runtime.g's field %s%s%s is at offset %llu",
					 names[i].a, names[i].b ? "." : "", names[i].b ? names[i].b : "",
					 (unsigned long long)l->g_off[i]);
			return -EINVAL;
		}
		gs->off[i] = l->g_off[i];
		lo = gs->off[i] < lo ? gs->off[i] : lo;
		hi = gs->off[i] + 8 > hi ? gs->off[i] + 8 : hi;
	}
	if (l->g_labels) {
		if (l->g_labels > MAX_G_OFFSET) {
			if (note)
				snprintf(note, notelen, "runtime.g's field labels is at offset %llu",
					 (unsigned long long)l->g_labels);
			return -EINVAL;
		}
		lo = l->g_labels < lo ? l->g_labels : lo;
		hi = l->g_labels + 8 > hi ? l->g_labels + 8 : hi;
	}
	/* The DWARF comes from the program: a g is a few hundred bytes. */
	if (hi - lo > MAX_SPAN) {
		if (note)
			snprintf(note, notelen, "runtime.g's fields span %llu bytes",
				 (unsigned long long)(hi - lo));
		return -EINVAL;
	}
	gs->span_lo = lo;
	gs->span_len = hi - lo;
	for (int i = 0; i < F_N; i++)
		gs->rel[i] = gs->off[i] - lo;
	gs->labels_off = l->g_labels;
	gs->labels_rel = l->g_labels ? l->g_labels - lo : 0;
	return 0;
}

/* Go's words for each waitReason, read from the program's own table. */
static void read_reasons(struct goroutines *gs, uint64_t addr, size_t n)
{
	if (n > MAX_REASONS)
		n = MAX_REASONS;
	uint64_t *strs = xcalloc(n ? n : 1, 16);
	if (n && remote__read(gs->pid, addr, strs, n * 16) == 0) {
		for (size_t i = 0; i < n; i++) {
			uint64_t p = strs[2 * i], len = strs[2 * i + 1];
			char buf[REASON_MAX_LEN + 1] = { 0 };
			if (len == 0 || len > REASON_MAX_LEN || remote__read(gs->pid, p, buf, len) != 0)
				continue;
			for (size_t k = 0; k < len; k++)      /* Go's own text, but from the target */
				if (buf[k] < 0x20 || buf[k] > 0x7e)
					buf[k] = '?';
			gs->reasons[i] = xstrdup(buf);
		}
	}
	free(strs);
}

struct goroutines *goroutines__from_layout(pid_t pid, const struct go_layout *l, char *note,
					   size_t notelen)
{
	struct goroutines *gs = xcalloc(1, sizeof(*gs));
	gs->pid = pid;
	if (set_span(gs, l, note, notelen) < 0) {
		goroutines__free(gs);
		return NULL;
	}
	gs->allgs = l->allgs;
	gs->allglen = l->allglen;
	gs->m_procid = l->m_procid;
	read_reasons(gs, l->reasons, l->nreasons);
	return gs;
}

/* ---- the layout, without DWARF (goroutine/golayout.h) ---------------------- */

static void go_funcs(const struct gopclntab *pcln, const char *const *want, size_t n,
		     uint64_t (*ranges)[2]);
static size_t go_code(const struct module *main, const uint64_t r[2], unsigned char *code);

/* The program's Go version, from its .go.buildinfo section, else from
 * runtime.buildVersion where .symtab names it, or where
 * runtime.schedinit's code says it is (PCLN: the program's .gopclntab).
 * Returns 0, or -ENOENT. */
static int go_version(const struct module *main, const struct gopclntab *pcln, char *ver,
		      size_t verlen)
{
	size_t shstrndx;
	Elf_Scn *scn = NULL;
	int r = -ENOENT;
	elf_version(EV_CURRENT);
	Elf *elf = elf_memory((char *)main->image, main->image_len);
	if (elf && elf_kind(elf) == ELF_K_ELF && elf_getshdrstrndx(elf, &shstrndx) == 0) {
		while (r < 0 && (scn = elf_nextscn(elf, scn))) {
			GElf_Shdr sh;
			const char *n;
			if (!gelf_getshdr(scn, &sh) || sh.sh_type == SHT_NOBITS ||
			    !(n = elf_strptr(elf, shstrndx, sh.sh_name)) || strcmp(n, ".go.buildinfo") != 0 ||
			    sh.sh_offset > main->image_len || sh.sh_size > main->image_len - sh.sh_offset)
				continue;
			uint64_t str, hdr[2];
			unsigned char buf[VERSION_READ];
			r = golayout__buildinfo(main->image + sh.sh_offset, sh.sh_size, ver, verlen, &str);
			/* Before Go 1.18: the address of a string (pointer, length). */
			if (r == 1)
				r = module__read(main, str + main->bias, hdr, sizeof(hdr)) == 0 &&
				    hdr[1] <= sizeof(buf) &&
				    module__read(main, hdr[0] + main->bias, buf, hdr[1]) == 0 ?
				    golayout__string(buf, hdr[1], ver, verlen) : -ENOENT;
		}
	}
	if (elf)
		elf_end(elf);
	uint64_t at, hdr[2];
	unsigned char buf[VERSION_READ];
	bool found = r < 0 && module__symbol(main, "runtime.buildVersion", &at, NULL) == 0;
	if (r < 0 && !found && pcln) {
		/* Neither .go.buildinfo nor .symtab (esbuild 0.27 on). */
		static const char *const schedinit[] = { "runtime.schedinit" };
		uint64_t range[1][2];
		unsigned char code[CODE_READ];
		size_t len;
		go_funcs(pcln, schedinit, 1, range);
		if ((len = go_code(main, range[0], code)) &&
		    golayout__buildversion(code, len, range[0][0], &at) == 0) {
			at += main->bias;
			found = true;
		}
	}
	if (found && module__read(main, at, hdr, sizeof(hdr)) == 0 && hdr[1] <= sizeof(buf) &&
	    module__read(main, hdr[0] + main->bias, buf, hdr[1]) == 0)
		r = golayout__string(buf, hdr[1], ver, verlen);
	return r < 0 ? -ENOENT : 0;
}

/* The code of the functions NAMES[] (link-time [lo, hi) in RANGES), found
 * by name in .gopclntab in one pass. */
static void go_funcs(const struct gopclntab *pcln, const char *const *want, size_t n,
		     uint64_t (*ranges)[2])
{
	memset(ranges, 0, n * sizeof(*ranges));
	for (size_t i = 0, count = gopclntab__count(pcln); i < count; i++) {
		uint64_t pc, lo, hi;
		const char *name;
		if (gopclntab__entry(pcln, i, &pc) < 0 || gopclntab__lookup(pcln, pc, &name, NULL, NULL) < 0)
			continue;
		for (size_t k = 0; k < n; k++)
			if (!ranges[k][1] && strcmp(name, want[k]) == 0 &&
			    gopclntab__frame(pcln, pc, &lo, &hi, NULL) == 0 && hi > lo)
				ranges[k][0] = lo, ranges[k][1] = hi;
	}
}

/* LEN (at most CODE_READ) bytes of code at link-time [lo, hi) of MAIN. */
static size_t go_code(const struct module *main, const uint64_t r[2], unsigned char *code)
{
	size_t len = r[1] - r[0] < CODE_READ ? (size_t)(r[1] - r[0]) : CODE_READ;
	return r[1] > r[0] && module__read(main, r[0] + main->bias, code, len) == 0 ? len : 0;
}

/* The layout of a program without DWARF: the table of its Go version, the
 * addresses from .symtab or from the runtime's code.  NOTE says why not. */
static int layout_nodwarf(const struct module *main, const struct gopclntab *pcln,
			  struct go_layout *l, char *note, size_t notelen)
{
	char ver[64], known[96];
	golayout__known(known, sizeof(known));
	if (go_version(main, pcln, ver, sizeof(ver)) < 0) {
		snprintf(note, notelen, "it has no DWARF (built with -ldflags=-w?) and no Go version in "
			 "its build info");
		return -ENOENT;
	}
	if (golayout__table(golayout__minor(ver), l) < 0) {
		snprintf(note, notelen, "it has no DWARF (built with -ldflags=-w?) and its Go version, "
			 "%s, has no known layout (known: %s)", ver, known);
		return -ENOENT;
	}
	/* gogo: Go 1.17 on name the assembly that loads a gobuf "gogo"
	 * (runtime.gogo jumps to it), 1.16 "runtime.gogo". */
	static const char *const funcs[] = { "runtime.allgadd", "runtime.waitReason.String",
					     "runtime.newproc1", "runtime.gopark", "gogo",
					     "runtime.minit", "runtime.gogo" };
	uint64_t ranges[7][2], status = UINT64_MAX, size;
	unsigned char code[CODE_READ];
	size_t len;
	go_funcs(pcln, funcs, 7, ranges);
	if (!ranges[4][1])
		memcpy(ranges[4], ranges[6], sizeof(ranges[4]));
	/* The table checked by the code that uses its fields. */
	const struct {
		int func;
		const char *field;
		uint64_t off;
	} uses[] = {
		{ 2, "g.goid", l->g_off[7] }, { 2, "g.gopc", l->g_off[10] },
		{ 2, "g.startpc", l->g_off[9] }, { 2, "g.labels", l->g_labels },
		{ 3, "g.waitreason", l->g_off[8] },
		/* gobuf.bp (g.sched.bp less g.sched), m.procid */
		{ 4, "gobuf.bp", l->g_off[5] - l->g_off[3] }, { 5, "m.procid", l->m_procid },
	};
	for (size_t i = 0; i < sizeof(uses) / sizeof(uses[0]); i++) {
		if (!uses[i].off)
			continue;
		len = go_code(main, ranges[uses[i].func], code);
		if (!len || !golayout__uses(code, len, (uint32_t)uses[i].off)) {
			snprintf(note, notelen, "it has no DWARF, and %s's code %s %s at %llu, as %s's "
				 "layout says", funcs[uses[i].func], len ? "does not use" : "(not found) cannot "
				 "say it uses", uses[i].field, (unsigned long long)uses[i].off, ver);
			return -EINVAL;
		}
	}
	len = go_code(main, ranges[0], code);
	bool decoded = len && golayout__allgadd(code, len, ranges[0][0], &l->allgs, &l->allglen,
						 &status) == 0;
	/* .symtab (kept by -w, not by -s) names them surely. */
	uint64_t a, b;
	if (module__symbol(main, "runtime.allgs", &a, NULL) == 0 &&
	    module__symbol(main, "runtime.allglen", &b, NULL) == 0) {
		l->allgs = a - main->bias;
		l->allglen = b - main->bias;
	} else if (!decoded) {
		snprintf(note, notelen, "it has no DWARF, and runtime.allgadd's code (%s) does not say where "
			 "runtime.allgs is", ver);
		return -ENOENT;
	}
	if (status != UINT64_MAX && status != l->g_off[6]) {
		snprintf(note, notelen, "it has no DWARF, and runtime.allgadd reads g.atomicstatus at %llu, "
			 "not at %llu as %s's layout says", (unsigned long long)status,
			 (unsigned long long)l->g_off[6], ver);
		return -EINVAL;
	}
	l->reasons = l->nreasons = 0;
	if (module__symbol(main, "runtime.waitReasonStrings", &a, &size) == 0 && size / 16) {
		l->reasons = a - main->bias;
		l->nreasons = size / 16;
	} else if ((len = go_code(main, ranges[1], code))) {
		golayout__reasons(code, len, ranges[1][0], &l->reasons, &l->nreasons);
	}
	return 0;
}

struct goroutines *goroutines__new(pid_t pid, const struct module *main, char *note,
				   size_t notelen)
{
	char scratch[8];
	if (!note) {
		note = scratch;
		notelen = sizeof(scratch);
	}
	snprintf(note, notelen, "not a Go program");
	if (!main || main->fd < 0)
		return NULL;
	struct gopclntab *pcln = gopclntab__from_elf(main->image, main->image_len);
	if (!pcln)
		return NULL;
	struct go_layout l = { 0 };
	struct goroutines *gs = NULL;
	Dwarf *dw = dwarf_begin(main->fd, DWARF_C_READ);
	int r = -ENOENT;
	if (dw) {
		r = layout(dw, &l, note, notelen);
		dwarf_end(dw);
	}
	/* Without DWARF (-w, or a distribution's build), or with DWARF that
	 * lacks the runtime's types: the version's table. */
	if (!dw) {
		r = layout_nodwarf(main, pcln, &l, note, notelen);
	} else if (r < 0) {
		char other[200];
		struct go_layout t = { 0 };
		if (layout_nodwarf(main, pcln, &t, other, sizeof(other)) == 0) {
			l = t;
			r = 0;
		}
	}
	/* The label sets' shape is known for some versions only. */
	char ver[64];
	if (r == 0 && l.g_labels &&
	    (go_version(main, pcln, ver, sizeof(ver)) < 0 ||
	     !golayout__label_sets(golayout__minor(ver))))
		l.g_labels = 0;
	if (r == 0) {
		l.allgs += main->bias;
		l.allglen += main->bias;
		if (l.nreasons)
			l.reasons += main->bias;
		gs = goroutines__from_layout(pid, &l, note, notelen);
	}
	if (!gs) {
		gopclntab__free(pcln);
		return NULL;
	}
	gs->pcln = pcln;
	gs->main = main;
	return gs;
}

int goroutines__dwarf_layout(int fd, struct go_layout *l, char *note, size_t notelen)
{
	Dwarf *dw = dwarf_begin(fd, DWARF_C_READ);
	if (!dw) {
		snprintf(note, notelen, "no DWARF");
		return -ENOENT;
	}
	int r = layout(dw, l, note, notelen);
	dwarf_end(dw);
	return r;
}

int goroutines__nodwarf_layout(const struct module *main, struct go_layout *l, char *ver,
			       size_t verlen, char *note, size_t notelen)
{
	struct gopclntab *pcln = gopclntab__from_elf(main->image, main->image_len);
	int r = -ENOENT;
	snprintf(ver, verlen, "?");
	if (pcln) {
		go_version(main, pcln, ver, verlen);
		r = layout_nodwarf(main, pcln, l, note, notelen);
	}
	gopclntab__free(pcln);
	return r;
}

void goroutines__free(struct goroutines *gs)
{
	if (!gs)
		return;
	for (int i = 0; i < MAX_REASONS; i++)
		free(gs->reasons[i]);
	for (int i = 0; i < LABEL_SLOTS; i++)
		free(gs->labels[i].text);
	gopclntab__free(gs->pcln);
	free(gs->recs);
	free(gs->gptrs);
	free(gs->prev_g);
	free(gs->prev);
	free(gs->order);
	free(gs->offs);
	free(gs->raw);
	free(gs);
}

/* ---- records --------------------------------------------------------------- */

static uint64_t field(const struct goroutines *gs, const unsigned char *raw, int f, unsigned size)
{
	uint64_t v = 0;
	memcpy(&v, raw + (gs->off[f] - gs->span_lo), size);     /* little-endian x86-64 */
	return v;
}

/* Every field a record holds that can change while its goroutine lives,
 * as read: equal keys, equal records. */
struct key {
	uint64_t w[F_KEY_N + 1];        /* the last: g.labels, or 0 */
};

static uint64_t labels_word(const struct goroutines *gs, const unsigned char *raw)
{
	uint64_t w = 0;
	if (gs->labels_off)
		memcpy(&w, raw + gs->labels_rel, 8);
	return w;
}

/* Fixed-size loads (one move each): this runs for every goroutine at every
 * tick.  A field narrower than 8 bytes is masked; the span was checked to
 * hold 8 bytes at every field's offset (layout()). */
static uint64_t key_word(const struct goroutines *gs, const unsigned char *raw, int f)
{
	static const uint64_t mask[F_KEY_N] = {
		[F_STACK_LO] = ~0ull, [F_STACK_HI] = ~0ull, [F_M] = ~0ull, [F_SCHED_SP] = ~0ull,
		[F_SCHED_PC] = ~0ull, [F_SCHED_BP] = ~0ull, [F_STATUS] = 0xffffffffu,
		[F_GOID] = ~0ull, [F_REASON] = 0xffu,
	};
	uint64_t w;
	memcpy(&w, raw + gs->rel[f], 8);
	return w & mask[f];
}

static void key_of(const struct goroutines *gs, const unsigned char *raw, struct key *k)
{
	for (int f = 0; f < F_KEY_N; f++)
		k->w[f] = key_word(gs, raw, f);
	k->w[F_KEY_N] = labels_word(gs, raw);
}

/* Whether RAW holds the key K: the common case (a goroutine still waiting
 * where it waited), so no key is made, and the first difference ends it. */
static bool key_same(const struct goroutines *gs, const unsigned char *raw, const struct key *k)
{
	for (int f = 0; f < F_KEY_N; f++)
		if (key_word(gs, raw, f) != k->w[f])
			return false;
	return labels_word(gs, raw) == k->w[F_KEY_N];
}

static void decode(const struct goroutines *gs, uint64_t g, const unsigned char *raw,
		   struct go_rec *r)
{
	r->g = g;
	r->lo = field(gs, raw, F_STACK_LO, 8);
	r->hi = field(gs, raw, F_STACK_HI, 8);
	r->m = field(gs, raw, F_M, 8);
	r->sp = field(gs, raw, F_SCHED_SP, 8);
	r->pc = field(gs, raw, F_SCHED_PC, 8);
	r->bp = field(gs, raw, F_SCHED_BP, 8);
	r->status = (uint32_t)field(gs, raw, F_STATUS, 4) & ~0x1000u;
	r->goid = (int64_t)field(gs, raw, F_GOID, 8);
	r->reason = (uint8_t)field(gs, raw, F_REASON, 1);
	r->startpc = field(gs, raw, F_STARTPC, 8);
	r->gopc = field(gs, raw, F_GOPC, 8);
	r->labels = labels_word(gs, raw);
}

uint64_t goroutines__duplicates(const struct goroutines *gs)
{
	return gs->dups;
}

uint64_t goroutines__carried(const struct goroutines *gs)
{
	return gs->carried;
}

uint64_t goroutines__listed(const struct goroutines *gs)
{
	return gs->last_len;
}

int goroutines__read(struct goroutines *gs, uint64_t g, struct go_rec *r)
{
	unsigned char raw[MAX_SPAN];
	if (gs->span_len > sizeof(raw))
		return -EINVAL;
	int e = remote__read(gs->pid, g + gs->span_lo, raw, gs->span_len);
	if (e == 0)
		decode(gs, g, raw, r);
	return e;
}

/* Orders the goroutines by address: again only when the pointers read are
 * out of the last order (allgs longer, or rewritten by a runtime that lies:
 * a g is never freed, so elsewhere the pointers already read stay where
 * they are).  Checked at every scan, a pass over the pointers: sorted a
 * scan late, a list rewritten at every scan would never have its repeats
 * side by side. */
static int by_addr(const void *a, const void *b, void *arg)
{
	const uint64_t *g = arg;
	uint64_t x = g[*(const uint32_t *)a], y = g[*(const uint32_t *)b];
	return (x > y) - (x < y);
}

static bool in_order(const struct goroutines *gs, size_t len)
{
	for (size_t i = 1; i < len; i++)
		if (gs->gptrs[gs->order[i - 1]] > gs->gptrs[gs->order[i]])
			return false;
	return true;
}

static void sort_order(struct goroutines *gs, size_t len)
{
	if (gs->sorted_len == len && in_order(gs, len))
		return;
	for (size_t i = 0; i < len; i++)
		gs->order[i] = (uint32_t)i;
	qsort_r(gs->order, len, sizeof(*gs->order), by_addr, gs->gptrs);
	gs->sorted_len = len;
}

/* The records order[FIRST, END) of a batch of which RD bytes were read:
 * each read (decoded, or unchanged), carried or not read.  A read cut
 * short stops at the first byte it could not read; with CUT the records
 * from there on are left to the next batch, but for the one that holds
 * that byte (it cannot be read), and where to go on from is returned
 * (else END).  *PREV_AT: the last g's address + span_lo, before FIRST,
 * then before what is returned. */
static size_t take(struct goroutines *gs, size_t first, size_t end, size_t rd, bool cut,
		   uint64_t *prev_at)
{
	for (size_t j = first; j < end; j++) {
		uint32_t idx = gs->order[j];
		struct go_rec *rec = &gs->recs[idx];
		size_t off = gs->offs[idx];
		uint64_t at = gs->gptrs[idx] + gs->span_lo;
		if (off == OFF_NONE || off == OFF_REPEAT) {
			gs->dups += off == OFF_REPEAT;
			rec->read = rec->unchanged = false;
			gs->prev_g[idx] = 0;
			continue;
		}
		if (off == OFF_CARRIED) {
			gs->carried++;
			rec->read = rec->unchanged = true;
			*prev_at = at;
			continue;
		}
		const unsigned char *raw = gs->raw + off;
		rec->read = off + gs->span_len <= rd;
		rec->unchanged = false;
		if (!rec->read) {
			gs->prev_g[idx] = 0;
			if (cut && off > rd)
				return j;
			*prev_at = at;
			if (cut)
				return j + 1;
			continue;
		}
		*prev_at = at;
		/* Most goroutines wait where they waited: same bytes,
		 * nothing to decode. */
		if (gs->prev_g[idx] == gs->gptrs[idx] && key_same(gs, raw, &gs->prev[idx])) {
			rec->unchanged = true;
			continue;
		}
		decode(gs, gs->gptrs[idx], raw, rec);
		key_of(gs, raw, &gs->prev[idx]);
		gs->prev_g[idx] = gs->gptrs[idx];
	}
	return end;
}

int goroutines__scan(struct goroutines *gs, const struct go_rec **recs, size_t *n)
{
	uint64_t slice[2], len;
	int e;
	*n = 0;
	if ((e = remote__read(gs->pid, gs->allgs, slice, sizeof(slice))) < 0 ||
	    (e = remote__read(gs->pid, gs->allglen, &len, sizeof(len))) < 0)
		return e;
	/* allglen is what the runtime publishes first; the slice may be longer. */
	if (len > slice[1])
		len = slice[1];
	gs->last_len = len;
	gs->dups = 0;
	if (len > MAX_GOROUTINES)
		return -EINVAL;
	if (len > gs->cap) {
		size_t old = gs->cap;
		gs->cap = len + len / 2 + 16;
		gs->recs = xrealloc(gs->recs, gs->cap * sizeof(*gs->recs));
		gs->gptrs = xrealloc(gs->gptrs, gs->cap * sizeof(*gs->gptrs));
		gs->prev_g = xrealloc(gs->prev_g, gs->cap * sizeof(*gs->prev_g));
		gs->prev = xrealloc(gs->prev, gs->cap * sizeof(*gs->prev));
		memset(gs->prev_g + old, 0, (gs->cap - old) * sizeof(*gs->prev_g));
		gs->order = xrealloc(gs->order, gs->cap * sizeof(*gs->order));
		gs->offs = xrealloc(gs->offs, gs->cap * sizeof(*gs->offs));
		if (!gs->raw)
			gs->raw = xmalloc(RAW_BATCH);
		gs->sorted_len = 0;
	}
	if (len && (e = remote__read(gs->pid, slice[0], gs->gptrs, len * 8)) < 0)
		return e;
	sort_order(gs, len);
	/* Runs: records close to each other (g's are allocated together) are
	 * read as one range, so the kernel pins their pages once, not once
	 * per record; IOV_BATCH runs, RAW_BATCH bytes per system call, each
	 * batch compared while the copy is still in the cache (all read,
	 * then all compared, missed it for every record). */
	struct iovec l[IOV_BATCH], r[IOV_BATCH];
	size_t i = 0;
	/* In address order a g listed twice (a runtime that lies, or allgs
	 * being rewritten) comes next to itself: it is read and counted
	 * once. */
	uint64_t prev_at = 0;
	/* The budget: with more than READ_BUDGET goroutines, those last seen
	 * waiting (or dead) are read in turn, READ_BUDGET a scan from
	 * CURSOR on in address order; until its turn such a record counts as
	 * unchanged.  The rest (running, runnable, in a system call, never
	 * read) are read at every scan. */
	size_t turn_end = gs->cursor + READ_BUDGET;
	gs->carried = 0;
	/* A g that cannot be read (a pointer that lies) cuts a batch's read
	 * short: the rest of the batch is read again in the next, up to
	 * MAX_FAULTS times a scan, so that one such g, first in address
	 * order, does not hide the others (nor fail the scan: it did). */
	unsigned faults = 0;
	while (i < len) {
		size_t k = 0, first = i, pos = 0;
		uint64_t start = 0, end = 0, first_prev = prev_at;
		for (; i < len; i++) {
			uint32_t idx = gs->order[i];
			uint64_t at = gs->gptrs[idx] + gs->span_lo;
			if (!gs->gptrs[idx] || (gs->gptrs[idx] & 7) || at == prev_at) {
				gs->offs[idx] = gs->gptrs[idx] && at == prev_at ? OFF_REPEAT : OFF_NONE;
				continue;
			}
			if (len > READ_BUDGET && !(i >= gs->cursor && i < turn_end) &&
			    !(turn_end > len && i < turn_end - len) && gs->prev_g[idx] == gs->gptrs[idx] &&
			    gs->recs[idx].read && (gs->recs[idx].status == GO_WAITING ||
						   gs->recs[idx].status == GO_DEAD)) {
				gs->offs[idx] = OFF_CARRIED;
				prev_at = at;
				continue;
			}
			if (k && at >= end && at - end <= RUN_GAP && at + gs->span_len - start <= RUN_MAX) {
				end = at + gs->span_len;
			} else {
				/* The run begun here may grow to RUN_MAX bytes. */
				if (k == IOV_BATCH || (k && pos + (end - start) + RUN_MAX > RAW_BATCH))
					break;
				if (k) {
					l[k - 1] = (struct iovec){ gs->raw + pos, end - start };
					r[k - 1] = (struct iovec){ (void *)(uintptr_t)start, end - start };
					pos += end - start;
				}
				k++;
				start = at;
				end = at + gs->span_len;
			}
			prev_at = at;
			gs->offs[idx] = pos + (at - start);
		}
		long rd = 0;
		if (k) {                /* none when the rest were all repeats */
			l[k - 1] = (struct iovec){ gs->raw + pos, end - start };
			r[k - 1] = (struct iovec){ (void *)(uintptr_t)start, end - start };
			pos += end - start;
			rd = remote__readv(gs->pid, l, r, k);
			if (rd == -EFAULT)
				rd = 0;         /* not even the first byte: cut short at 0 */
			else if (rd < 0)
				return (int)rd;
		}
		bool cut = (size_t)rd < pos && faults < MAX_FAULTS;
		faults += (size_t)rd < pos;
		prev_at = first_prev;
		i = take(gs, first, i, (size_t)rd, cut, &prev_at);
	}
	gs->cursor = len > READ_BUDGET ? turn_end % len : 0;
	*recs = gs->recs;
	*n = len;
	return 0;
}

pid_t goroutines__m_tid(struct goroutines *gs, uint64_t m)
{
	unsigned slot = (unsigned)((m >> 4) % 64);
	if (m == 0)
		return 0;
	if (gs->mtid[slot].m != m) {
		uint64_t procid = 0;
		if (remote__read(gs->pid, m + gs->m_procid, &procid, sizeof(procid)) < 0 ||
		    procid == 0 || procid > INT32_MAX)
			return 0;
		gs->mtid[slot].m = m;
		gs->mtid[slot].tid = (pid_t)procid;
	}
	return gs->mtid[slot].tid;
}

/* ---- pprof labels ------------------------------------------------------------
 * g.labels points to a runtime/pprof labelMap: a map[string]string, i.e. a
 * pointer to the runtime's hmap (Go 1.19, runtime/map.go): count int at 0,
 * B uint8 at 9, hash0 uint32 at 12, buckets at 16, oldbuckets at 24.  A
 * bucket of a map[string]string: tophash [8]uint8, 8 keys and 8 values
 * (strings: pointer, length), then the overflow bucket: 272 bytes.  A
 * cell whose tophash is below 5 is empty or was moved to the new buckets. */
#define HMAP_LEN 48
#define BUCKET_LEN 272
#define BUCKETS_MAX 16                  /* buckets read, overflow included */
#define MIN_TOPHASH 5

struct label_pair {
	char k[LABEL_LEN + 1], v[LABEL_LEN + 1];
};

static bool read_str(struct goroutines *gs, const unsigned char *hdr, char *out, bool key)
{
	uint64_t p, len;
	memcpy(&p, hdr, 8);
	memcpy(&len, hdr + 8, 8);
	if (len > LABEL_LEN || (len && remote__read(gs->pid, p, out, len) != 0))
		return false;
	out[len] = '\0';
	for (size_t i = 0; i < len; i++)
		if ((unsigned char)out[i] < 0x20 || (unsigned char)out[i] > 0x7e || (key && out[i] == '='))
			out[i] = key && out[i] == '=' ? '_' : '?';
	return true;
}

static int by_key(const void *a, const void *b)
{
	return strcmp(((const struct label_pair *)a)->k, ((const struct label_pair *)b)->k);
}

/* The pairs of the buckets at ADDR (N of them, and their overflows), into
 * P (*NP so far): false when a read fails. */
static bool read_buckets(struct goroutines *gs, uint64_t addr, uint64_t n, struct label_pair *p,
			 size_t *np, unsigned *budget)
{
	unsigned char b[BUCKET_LEN];
	for (uint64_t i = 0; i < n; i++) {
		uint64_t at = addr + i * BUCKET_LEN;
		while (at) {
			if (!(*budget)-- || remote__read(gs->pid, at, b, sizeof(b)) != 0)
				return false;
			for (int c = 0; c < 8; c++) {
				if (b[c] < MIN_TOPHASH || *np == GOROUTINE_LABELS_MAX)
					continue;
				if (!read_str(gs, b + 8 + 16 * c, p[*np].k, true) ||
				    !read_str(gs, b + 8 + 128 + 16 * c, p[*np].v, false))
					return false;
				++*np;
			}
			memcpy(&at, b + BUCKET_LEN - 8, 8);
		}
	}
	return true;
}

/* The text of set LABELS, read now; NULL when it cannot be.  *HASH0: the
 * map's seed, which tells this set from a later one at the same address. */
static char *read_labels(struct goroutines *gs, uint64_t labels, uint64_t *hash0)
{
	uint64_t hmap, count, buckets, old;
	unsigned char h[HMAP_LEN];
	struct label_pair p[GOROUTINE_LABELS_MAX];
	size_t np = 0;
	unsigned budget = BUCKETS_MAX;
	if (remote__read(gs->pid, labels, &hmap, 8) != 0 || !hmap ||
	    remote__read(gs->pid, hmap, h, sizeof(h)) != 0)
		return NULL;
	memcpy(&count, h, 8);
	unsigned B = h[9];
	*hash0 = (uint64_t)h[12] | (uint64_t)h[13] << 8 | (uint64_t)h[14] << 16 | (uint64_t)h[15] << 24;
	memcpy(&buckets, h + 16, 8);
	memcpy(&old, h + 24, 8);
	if (count == 0 || count > 64 || B > 3 || !buckets ||
	    !read_buckets(gs, buckets, 1ull << B, p, &np, &budget) ||
	    (old && B && !read_buckets(gs, old, 1ull << (B - 1), p, &np, &budget)) || !np)
		return NULL;
	qsort(p, np, sizeof(p[0]), by_key);
	size_t len = 0;
	char *text = xmalloc(np * (2 * LABEL_LEN + 2) + 1);
	for (size_t i = 0; i < np; i++)
		len += (size_t)sprintf(text + len, "%s%s=%s", i ? "\n" : "", p[i].k, p[i].v);
	return text;
}

const char *goroutines__labels(struct goroutines *gs, uint64_t labels)
{
	if (!labels || !gs->labels_off)
		return NULL;
	unsigned slot = (unsigned)((labels * 0x9e3779b97f4a7c15ull) >> 56) % LABEL_SLOTS;
	uint64_t hmap, hash0 = 0;
	unsigned char h[16];
	/* The seed says whether the set at this address is still the one
	 * read (a set freed, and another made there, has another). */
	if (gs->labels[slot].set == labels && remote__read(gs->pid, labels, &hmap, 8) == 0 &&
	    remote__read(gs->pid, hmap, h, sizeof(h)) == 0) {
		hash0 = (uint64_t)h[12] | (uint64_t)h[13] << 8 | (uint64_t)h[14] << 16 |
			(uint64_t)h[15] << 24;
		if (hash0 == gs->labels[slot].hash0)
			return gs->labels[slot].text;
	}
	free(gs->labels[slot].text);
	gs->labels[slot].text = read_labels(gs, labels, &hash0);
	gs->labels[slot].set = labels;
	gs->labels[slot].hash0 = hash0;
	return gs->labels[slot].text;
}

const char *goroutines__reason(const struct goroutines *gs, uint8_t reason)
{
	return gs->reasons[reason];
}

const char *goroutines__func_name(struct goroutines *gs, uint64_t pc)
{
	const char *name = NULL;
	if (!gs->pcln)
		return NULL;
	return gopclntab__lookup(gs->pcln, pc - gs->main->bias, &name, NULL, NULL) == 0 ? name : NULL;
}

int goroutines__is_system(struct goroutines *gs, const struct go_rec *r)
{
	unsigned slot = (unsigned)((r->startpc * 0x9e3779b97f4a7c15ull) >> 54) % SYS_SLOTS;
	if (gs->sys[slot].key != r->startpc + 1) {
		const char *name = NULL;
		int sys = 0;
		if (gs->pcln && gopclntab__lookup(gs->pcln, r->startpc - gs->main->bias, &name, NULL, NULL) == 0)
			sys = strncmp(name, "runtime.", 8) == 0 && strcmp(name, "runtime.main") != 0;
		gs->sys[slot].key = r->startpc + 1;
		gs->sys[slot].system = sys;
	}
	return gs->sys[slot].system;
}
