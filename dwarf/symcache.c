#include "dwarf/symcache.h"

#include <gelf.h>
#include <stdbool.h>
#include <stdlib.h>

#include "util/xalloc.h"

/* Comparing ranges with those that start inside them costs at most this
 * many steps a range, in all: past it (a table of ranges nested many deep)
 * there is no cache, and every address goes to libdwfl. */
#define OVERLAP_STEPS 64

struct range {
	uint64_t start, end;
	const char *name;               /* libdwfl's answer (chosen, or kept); NULL: none */
	int idx, rank;                  /* the symbol's index; its rank (alias_rank) */
	bool clean;
};

struct symcache {
	struct range *r;                /* by start, then by end descending; distinct */
	uint64_t *maxend;               /* the greatest end of r[0 .. i] */
	size_t n;
	uint64_t *labels;               /* sizeless symbols' addresses, sorted */
	size_t nlabels;
};

static int by_start(const void *a, const void *b)
{
	const struct range *x = a, *y = b;
	if (x->start != y->start)
		return x->start < y->start ? -1 : 1;
	if (x->end != y->end)
		return (x->end < y->end) - (x->end > y->end);
	if (x->rank != y->rank)         /* aliases: libdwfl's choice first */
		return x->rank > y->rank ? -1 : 1;
	return (x->idx > y->idx) - (x->idx < y->idx);
}

/* Among aliases (one range, several names) libdwfl's lookup chooses as it
 * goes through the table (dwfl_module_addrsym.c): the global symbols
 * first (from the table's first global on), and the locals only when no
 * global symbol holds the address; within each, the symbol of the
 * strongest binding (global, weak, local, then the others), the first in
 * the table among equals.  The higher the rank, the sooner chosen. */
static int alias_rank(const GElf_Sym *sym, int i, int first_global)
{
	int bind = GELF_ST_BIND(sym->st_info);
	int b = bind == STB_GLOBAL ? 3 : bind == STB_WEAK ? 2 : bind == STB_LOCAL ? 1 : 0;
	return (i >= first_global) * 4 + b;
}

/* The symbols libdwfl's lookup considers (dwfl_module_addrsym.c): named,
 * defined, not a section, file or TLS symbol. */
static bool considered(const char *name, const GElf_Sym *sym, GElf_Word shndx)
{
	int type = GELF_ST_TYPE(sym->st_info);
	return name && *name && shndx != SHN_UNDEF && type != STT_SECTION && type != STT_FILE &&
	       type != STT_TLS;
}

static int by_value(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
	return (x > y) - (x < y);
}

/* The greatest sizeless symbol's address at or below ADDR; 0: none. */
static bool label_at(const struct symcache *c, uint64_t addr, uint64_t *at)
{
	size_t lo = 0, hi = c->nlabels;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (c->labels[mid] <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo)
		*at = c->labels[lo - 1];
	return lo != 0;
}

struct symcache *symcache__new(Dwfl_Module *mod)
{
	int n = dwfl_module_getsymtab(mod);
	if (n <= 1)
		return NULL;
	int first_global = dwfl_module_getsymtab_first_global(mod);
	if (first_global < 0)
		return NULL;
	if (first_global == 0)          /* a dynamic symbol table only: all searched as globals */
		first_global = 1;
	struct symcache *c = xcalloc(1, sizeof(*c));
	c->r = xmalloc((size_t)n * sizeof(*c->r));
	c->labels = xmalloc((size_t)n * sizeof(*c->labels));
	for (int i = 1; i < n; i++) {
		GElf_Sym sym;
		GElf_Addr value;
		GElf_Word shndx;
		const char *name = dwfl_module_getsym_info(mod, i, &sym, &value, &shndx, NULL, NULL);
		if (!considered(name, &sym, shndx))
			continue;
		if (!sym.st_size)
			c->labels[c->nlabels++] = value;
		else
			c->r[c->n++] = (struct range){ value, value + sym.st_size > value ?
						       value + sym.st_size : UINT64_MAX, name, i,
						       alias_rank(&sym, i, first_global), true };
	}
	qsort(c->r, c->n, sizeof(*c->r), by_start);
	qsort(c->labels, c->nlabels, sizeof(*c->labels), by_value);
	/* Aliases (the same range) once: the first, libdwfl's choice. */
	size_t k = 0;
	for (size_t i = 0; i < c->n; i++)
		if (!k || c->r[i].start != c->r[k - 1].start || c->r[i].end != c->r[k - 1].end)
			c->r[k++] = c->r[i];
	c->n = k;
	/* A range is clean when every other range either holds it whole or
	 * lies apart from it.  Those that start inside range I come after
	 * it (same start: a shorter one, inside it); one inside I makes I
	 * not clean, one that goes on past its end makes both not clean.
	 * One that starts before I and ends inside it was seen from there. */
	size_t steps = 0;
	for (size_t i = 0; i < c->n; i++) {
		for (size_t j = i + 1; j < c->n && c->r[j].start < c->r[i].end; j++) {
			if (++steps > OVERLAP_STEPS * c->n) {
				symcache__free(c);
				return NULL;
			}
			if (c->r[j].end <= c->r[i].end) {
				c->r[i].clean = false;  /* J inside I */
			} else {
				c->r[i].clean = false;  /* in part over each other */
				c->r[j].clean = false;
			}
		}
	}
	c->maxend = xmalloc((c->n + 1) * sizeof(*c->maxend));
	for (size_t i = 0; i < c->n; i++)
		c->maxend[i] = i && c->maxend[i - 1] > c->r[i].end ? c->maxend[i - 1] : c->r[i].end;
	/* A clean range that no other holds: libdwfl's candidates for any
	 * address of it are its aliases alone, and its choice among them is
	 * the first (see alias_rank): known without asking.  A range held
	 * inside another is asked (a global outer symbol is chosen over a
	 * local inner one), and its answer kept when it is the range's own.
	 * An assembly label inside a range makes it answer differently at
	 * the label's address (a global label there keeps libdwfl from
	 * looking at the locals): such a range is never cached. */
	for (size_t i = 0; i < c->n; i++) {
		uint64_t at;
		if (label_at(c, c->r[i].end - 1, &at) && at >= c->r[i].start)
			c->r[i].clean = false;
		if (!c->r[i].clean || (i && c->maxend[i - 1] > c->r[i].start))
			c->r[i].name = NULL;
	}
	return c;
}

void symcache__free(struct symcache *c)
{
	if (!c)
		return;
	free(c->r);
	free(c->maxend);
	free(c->labels);
	free(c);
}

/* The last range starting at or before ADDR, or NULL.  Clean ranges never
 * hold one another, and none starts inside a clean one: if a clean range
 * holds ADDR, it is this one. */
static struct range *last_at(const struct symcache *c, uint64_t addr)
{
	size_t lo = 0, hi = c->n;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (c->r[mid].start <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo ? &c->r[lo - 1] : NULL;
}

int symcache__find(const struct symcache *c, uint64_t addr, const char **name, uint64_t *off)
{
	if (!c)
		return -1;
	const struct range *r = last_at(c, addr);
	uint64_t end = r ? c->maxend[r - c->r] : 0, label;
	if (end > addr) {
		/* in a sized symbol: the clean one answered, if it is one */
		if (!r->clean || !r->name || addr >= r->end)
			return -1;
		*name = r->name;
		*off = addr - r->start;
		return 1;
	}
	/* In no sized symbol: libdwfl's answer is a sizeless one (an
	 * assembly label) at or below it, past the end of every sized
	 * symbol below it, else none. */
	if (!label_at(c, addr, &label) || end > label) {
		*name = NULL;
		return 0;
	}
	return -1;
}

void symcache__keep(struct symcache *c, uint64_t start, uint64_t size, const char *name)
{
	struct range *r = c && size && name ? last_at(c, start) : NULL;
	if (r && r->start == start && r->end == start + size && r->clean)
		r->name = name;
}
