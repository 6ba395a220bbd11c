#include "output/frames.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util/intern.h"
#include "util/sparse.h"
#include "util/xalloc.h"

struct frames {
	struct intern *strings;         /* every name, file and path, stored once */
	struct frame_line *lines;
	size_t nlines, lines_cap;
	struct frame_loc *locs;
	size_t nlocs, locs_cap;
	struct frame_module *modules;
	size_t nmodules, modules_cap;
	struct stack_label *labels;
	size_t nlabels, labels_cap;
	struct frame_stack *stacks;     /* their locs are in locs_pool */
	size_t nstacks, stacks_cap;
	struct loc_block *locs_pool;
	int32_t main_module;
	uint64_t total;
	int several_pids;               /* labels of more than one process */
};

/* Stacks' location ids, packed in blocks that never move (a million
 * stacks would otherwise be a million small allocations).  A stack never
 * spans two blocks. */
#define LOC_BLOCK (1u << 20)

struct loc_block {
	struct loc_block *prev;
	size_t used, cap;
	uint32_t ids[];
};

static uint32_t *pool_copy(struct frames *fr, const uint32_t *ids, size_t n)
{
	struct loc_block *b = fr->locs_pool;
	if (!b || b->cap - b->used < n) {
		size_t cap = n > LOC_BLOCK ? n : LOC_BLOCK;
		b = xmalloc(sizeof(*b) + cap * sizeof(b->ids[0]));
		b->prev = fr->locs_pool;
		b->used = 0;
		b->cap = cap;
		fr->locs_pool = b;
	}
	uint32_t *dst = b->ids + b->used;
	memcpy(dst, ids, n * sizeof(*ids));
	b->used += n;
	return dst;
}

/* Grows array *P of *CAP elements of SIZE bytes to hold N + 1. */
static void grow(void *p, size_t *cap, size_t n, size_t size)
{
	void **a = p;
	if (n < *cap)
		return;
	*cap = *cap ? *cap * 2 : 64;
	*a = xrealloc(*a, *cap * size);
}

static const char *str(struct frames *fr, const char *s)
{
	if (!s)
		return NULL;
	int64_t id = intern__add(fr->strings, s, strlen(s), NULL);
	if (id < 0) {
		xalloc_oom();
	}
	return intern__key(fr->strings, (size_t)id, NULL);
}

struct frames *frames__new(void)
{
	struct frames *fr = xcalloc(1, sizeof(*fr));
	fr->strings = intern__new();
	fr->main_module = FRAMES_NO_MODULE;
	if (!fr->strings) {
		free(fr);
		return NULL;
	}
	return fr;
}

void frames__free(struct frames *fr)
{
	if (!fr)
		return;
	for (struct loc_block *b = fr->locs_pool, *prev; b; b = prev) {
		prev = b->prev;
		free(b);
	}
	free(fr->stacks);
	free(fr->labels);
	free(fr->modules);
	free(fr->locs);
	free(fr->lines);
	intern__free(fr->strings);
	free(fr);
}

int32_t frames__add_module(struct frames *fr, const struct frame_module *m)
{
	grow(&fr->modules, &fr->modules_cap, fr->nmodules, sizeof(*fr->modules));
	const char *path = str(fr, m->path ? m->path : "");
	const char *slash = strrchr(path, '/');
	fr->modules[fr->nmodules] = (struct frame_module){
		path, slash ? slash + 1 : path, str(fr, m->build_id ? m->build_id : ""),
		m->start, m->end };
	return (int32_t)fr->nmodules++;
}

uint32_t frames__add_loc(struct frames *fr, uint64_t addr, int32_t module,
			 const struct frame_line *lines, size_t n)
{
	grow(&fr->locs, &fr->locs_cap, fr->nlocs, sizeof(*fr->locs));
	struct frame_loc *l = &fr->locs[fr->nlocs];
	*l = (struct frame_loc){ addr, module, (uint32_t)fr->nlines, (uint32_t)n };
	for (size_t i = 0; i < n; i++) {
		grow(&fr->lines, &fr->lines_cap, fr->nlines, sizeof(*fr->lines));
		const char *func = lines[i].func && *lines[i].func ? lines[i].func : "[unknown]";
		fr->lines[fr->nlines++] = (struct frame_line){ str(fr, func), str(fr, lines[i].file),
							       lines[i].line };
	}
	return (uint32_t)fr->nlocs++;
}

uint32_t frames__add_label(struct frames *fr, const struct stack_label *l)
{
	grow(&fr->labels, &fr->labels_cap, fr->nlabels, sizeof(*fr->labels));
	if (fr->nlabels && l->pid != fr->labels[0].pid)
		fr->several_pids = 1;
	fr->labels[fr->nlabels] = (struct stack_label){ l->pid, l->tid, l->unit_id,
		str(fr, l->process ? l->process : ""), str(fr, l->thread ? l->thread : ""),
		str(fr, l->origin), str(fr, l->comm), str(fr, l->unit), str(fr, l->rt_thread) };
	return (uint32_t)fr->nlabels++;
}

void frames__add_stack(struct frames *fr, const struct frame_stack *s)
{
	grow(&fr->stacks, &fr->stacks_cap, fr->nstacks, sizeof(*fr->stacks));
	fr->stacks[fr->nstacks] = *s;
	fr->stacks[fr->nstacks].locs = pool_copy(fr, s->locs, s->n);
	fr->nstacks++;
	fr->total += s->count;
}

void frames__set_main_module(struct frames *fr, int32_t module)
{
	fr->main_module = module;
}

/* ---- naming counted stacks ------------------------------------------- */

/* Where a file was first seen: later address spaces that map the same
 * file (every exec'd child maps libc, each at its own address) are named
 * through that space's symbolizer, their addresses moved by the
 * difference of the two load biases.  So each file's symbols and debug
 * info are read once, however many processes mapped it. */
struct home {
	uint32_t space;
	uint64_t version;               /* of its table then (modules__version) */
	const struct module *m;
};

/* What naming keeps from one call to the next (a run that writes a
 * profile per period): each space's symbolizer, which caches every
 * address it named, and where each file was first seen.  A space whose
 * table has grown since its symbolizer was made (a library loaded) gets
 * a new one. */
struct names {
	struct symbolizer **syms;       /* by space, made on first use */
	uint64_t *built;                /* ... its table's version then */
	size_t nsyms;
	const char *const *dirs;
	size_t ndirs;
	struct intern *files;           /* module file identity -> homes[] */
	struct home *homes;
	size_t nhomes;
};

struct namer {
	struct frames *fr;
	const struct stacks *st;
	const struct modules *const *spaces;
	size_t nspaces;
	struct names *nc;
	struct intern *locs;            /* (space, pc) -> loc id */
	struct intern *mods;            /* module pointer -> index in mod_of */
	int32_t *mod_of;                /* ... -> the frames' module id */
	int32_t *named;                 /* modules known by name only (symbolic frames) */
	size_t nnamed;
	struct sparse labels;           /* stack slot -> label id + 1 (0: none yet) */
	uint32_t *buf;
	size_t cap;
};

static int32_t module_id(struct namer *nm, const struct module *m)
{
	if (!m)
		return FRAMES_NO_MODULE;
	int added;
	int64_t id = intern__add(nm->mods, &m, sizeof(m), &added);
	if (id < 0)
		return FRAMES_NO_MODULE;
	if (added) {
		struct frame_module fm = { m->shown, NULL, m->build_id, m->start, m->end };
		nm->mod_of = xrealloc(nm->mod_of, ((size_t)id + 1) * sizeof(*nm->mod_of));
		nm->mod_of[id] = frames__add_module(nm->fr, &fm);
	}
	return nm->mod_of[id];
}

/* A module known by name only (a symbolic frame's: an interpreter's file),
 * added once. */
static int32_t named_module(struct namer *nm, const char *name)
{
	if (!name || !*name)
		return FRAMES_NO_MODULE;
	for (size_t i = 0; i < nm->nnamed; i++)
		if (!strcmp(frames__module(nm->fr, nm->named[i])->path, name))
			return nm->named[i];
	struct frame_module fm = { name, NULL, "", 0, 0 };
	int32_t id = frames__add_module(nm->fr, &fm);
	nm->named = xrealloc(nm->named, (nm->nnamed + 1) * sizeof(*nm->named));
	nm->named[nm->nnamed++] = id;
	return id;
}

static struct symbolizer *sym_for(struct namer *nm, uint32_t space)
{
	char err[256];
	struct names *nc = nm->nc;
	if (space >= nm->nspaces || !nm->spaces[space])
		return NULL;
	if (space >= nc->nsyms) {
		size_t n = (size_t)space + 1 > 2 * nc->nsyms ? (size_t)space + 1 : 2 * nc->nsyms;
		nc->syms = xrealloc(nc->syms, n * sizeof(*nc->syms));
		nc->built = xrealloc(nc->built, n * sizeof(*nc->built));
		memset(nc->syms + nc->nsyms, 0, (n - nc->nsyms) * sizeof(*nc->syms));
		memset(nc->built + nc->nsyms, 0, (n - nc->nsyms) * sizeof(*nc->built));
		nc->nsyms = n;
	}
	uint64_t count = modules__version(nm->spaces[space]);
	if (nc->syms[space] && nc->built[space] != count) {
		symbolizer__free(nc->syms[space]);
		nc->syms[space] = NULL;
	}
	if (!nc->syms[space]) {
		nc->syms[space] = symbolizer__new(nm->spaces[space], nc->dirs, nc->ndirs, err,
						  sizeof(err));
		nc->built[space] = count;
	}
	return nc->syms[space];
}

/* The space where M's file was first seen, and PC moved there. */
static struct symbolizer *home_of(struct namer *nm, uint32_t space, const struct module *m,
				  uint64_t *pc)
{
	char key[4200];
	int len = snprintf(key, sizeof(key), "%s%c%llu%c%s", m->path, 0,
			   (unsigned long long)m->inode, 0, m->build_id);
	int added;
	struct names *nc = nm->nc;
	int64_t id = intern__add(nc->files, key, (size_t)len < sizeof(key) ? (size_t)len :
				 sizeof(key) - 1, &added);
	if (id < 0)
		return sym_for(nm, space);
	if (added) {
		nc->homes = xrealloc(nc->homes, ((size_t)id + 1) * sizeof(*nc->homes));
		nc->nhomes = (size_t)id + 1;
	}
	/* A home that was forgotten, or whose table changed since (its
	 * module may be gone: a library replaced in place), is made anew. */
	struct home *h = &nc->homes[id];
	if (added || h->space == UINT32_MAX ||
	    (h->space < nm->nspaces && nm->spaces[h->space] &&
	     modules__version(nm->spaces[h->space]) != h->version))
		*h = (struct home){ space, modules__version(nm->spaces[space]), m };
	/* A home in a space this call was not given is not used. */
	if (h->space >= nm->nspaces || !nm->spaces[h->space])
		return sym_for(nm, space);
	*pc = *pc - m->bias + h->m->bias;
	return sym_for(nm, h->space);
}

static uint32_t loc_id(struct namer *nm, uint32_t space, uint64_t pc)
{
	uint64_t key[2] = { space, pc };
	int added;
	int64_t id = intern__add(nm->locs, key, sizeof(key), &added);
	if (!added)
		return (uint32_t)id;
	if (pc == STACKS_PC_TRUNCATED) {
		static const struct frame_line cut = { "[truncated]", NULL, 0 };
		return frames__add_loc(nm->fr, 0, FRAMES_NO_MODULE, &cut, 1);
	}
	struct stacks_frame sf;
	if (stacks__symbolic(nm->st, pc, &sf) == 0) {   /* a kernel or interpreter frame */
		struct frame_line k = { sf.func, sf.file, sf.line };
		return frames__add_loc(nm->fr, 0, named_module(nm, sf.module), &k, 1);
	}
	const struct modules *ms = space < nm->nspaces ? nm->spaces[space] : NULL;
	const struct module *m = ms ? modules__find(ms, pc) : NULL;
	int32_t mod = module_id(nm, m);
	uint64_t at = pc;
	/* Code in no module (JIT) is named from the space's own process. */
	struct symbolizer *sym = m && m->usable ? home_of(nm, space, m, &at) : sym_for(nm, space);
	if (!sym) {
		static const struct frame_line unknown = { "[unknown]", NULL, 0 };
		return frames__add_loc(nm->fr, pc, mod, &unknown, 1);
	}
	const struct sym_frame *f;
	size_t n = symbolizer__lookup(sym, at, &f);
	struct frame_line lines[n];
	for (size_t i = 0; i < n; i++)
		lines[i] = (struct frame_line){ f[i].func, f[i].file, f[i].line };
	return frames__add_loc(nm->fr, pc, mod, lines, n);
}

static uint32_t label_id(struct namer *nm, const struct stacks *st, uint32_t slot)
{
	const struct stack_label *l = stacks__label(st, slot);
	if (!l)
		return FRAMES_NO_LABEL;
	uint32_t *id = sparse__put(&nm->labels, slot);
	if (!*id)
		*id = frames__add_label(nm->fr, l) + 1;
	return *id - 1;
}

static void name_stack(struct namer *nm, const struct stacks *st, const struct stack *s)
{
	if (s->n > nm->cap) {
		nm->cap = s->n * 2;
		nm->buf = xrealloc(nm->buf, nm->cap * sizeof(*nm->buf));
	}
	for (size_t i = 0; i < s->n; i++)
		nm->buf[i] = loc_id(nm, s->space, s->pcs[i]);
	const char *gs = stacks__rt_state_name(st, s->rt_state);
	struct frame_stack fs = { label_id(nm, st, s->slot), s->state, s->syscall,
				  gs ? str(nm->fr, gs) : NULL, nm->buf, s->n, s->count, s->cpu_ns };
	frames__add_stack(nm->fr, &fs);
}

struct names *names__new(const char *const *dirs, size_t ndirs)
{
	struct names *nc = xcalloc(1, sizeof(*nc));
	nc->dirs = dirs;
	nc->ndirs = ndirs;
	nc->files = intern__new();
	if (!nc->files) {
		free(nc);
		return NULL;
	}
	return nc;
}

void names__forget(struct names *nc, uint32_t space)
{
	if (space < nc->nsyms) {
		symbolizer__free(nc->syms[space]);
		nc->syms[space] = NULL;
		nc->built[space] = 0;
	}
	for (size_t i = 0; i < nc->nhomes; i++)
		if (nc->homes[i].space == space)
			nc->homes[i] = (struct home){ UINT32_MAX, 0, NULL };
}

void names__free(struct names *nc)
{
	if (!nc)
		return;
	for (size_t i = 0; i < nc->nsyms; i++)
		symbolizer__free(nc->syms[i]);
	free(nc->syms);
	free(nc->built);
	free(nc->homes);
	intern__free(nc->files);
	free(nc);
}

struct frames *frames__name(struct names *nc, const struct stacks *st,
			    const struct modules *const *spaces, size_t nspaces)
{
	struct namer nm = { .fr = frames__new(), .st = st, .spaces = spaces, .nspaces = nspaces,
			    .nc = nc, .locs = intern__new(), .mods = intern__new() };
	sparse__init(&nm.labels, sizeof(uint32_t));
	if (!nm.fr || !nm.locs || !nm.mods) {
		frames__free(nm.fr);
		nm.fr = NULL;
		goto out;
	}
	/* A new pass: JIT maps are looked at again (dwarf/symbolizer.h). */
	for (size_t i = 0; i < nc->nsyms; i++)
		if (nc->syms[i])
			symbolizer__new_pass(nc->syms[i]);
	/* pprof takes the first mapping for the main binary ("File: ..."). */
	if (nspaces && spaces[0] && modules__main(spaces[0]))
		frames__set_main_module(nm.fr, module_id(&nm, modules__main(spaces[0])));
	for (size_t i = 0; i < stacks__unique(st); i++) {
		struct stack s;
		if (!stacks__exists(st, i))
			continue;       /* aged out (profile/stacks.h) */
		stacks__get(st, i, &s);
		name_stack(&nm, st, &s);
	}
out:
	intern__free(nm.locs);
	intern__free(nm.mods);
	free(nm.mod_of);
	free(nm.named);
	sparse__free(&nm.labels);
	free(nm.buf);
	return nm.fr;
}

struct frames *frames__from_stacks(const struct stacks *st, const struct modules *const *spaces,
				   size_t nspaces, const char *const *dirs, size_t ndirs)
{
	struct names *nc = names__new(dirs, ndirs);
	struct frames *fr = nc ? frames__name(nc, st, spaces, nspaces) : NULL;
	names__free(nc);
	return fr;
}

size_t frames__nstacks(const struct frames *fr) { return fr->nstacks; }
size_t frames__nlocs(const struct frames *fr) { return fr->nlocs; }
size_t frames__nlines(const struct frames *fr) { return fr->nlines; }
size_t frames__nmodules(const struct frames *fr) { return fr->nmodules; }
size_t frames__nlabels(const struct frames *fr) { return fr->nlabels; }
int32_t frames__main_module(const struct frames *fr) { return fr->main_module; }
uint64_t frames__total(const struct frames *fr) { return fr->total; }
int frames__several_processes(const struct frames *fr) { return fr->several_pids; }

void frames__stack(const struct frames *fr, size_t i, struct frame_stack *out)
{
	*out = fr->stacks[i];
}

const struct frame_loc *frames__loc(const struct frames *fr, uint32_t id)
{
	return &fr->locs[id];
}

const struct frame_line *frames__line(const struct frames *fr, uint32_t i)
{
	return &fr->lines[i];
}

const struct frame_module *frames__module(const struct frames *fr, int32_t id)
{
	return id >= 0 && (size_t)id < fr->nmodules ? &fr->modules[id] : NULL;
}

const struct stack_label *frames__label(const struct frames *fr, uint32_t label)
{
	return label < fr->nlabels ? &fr->labels[label] : NULL;
}

size_t frames__root_first(const struct frames *fr, const struct frame_stack *s,
			  struct frame_ref **buf, size_t *cap)
{
	size_t n = 0;
	/* Locations are leaf first, and so are each one's lines: walk both
	 * backwards. */
	for (size_t i = s->n; i-- > 0;) {
		const struct frame_loc *l = &fr->locs[s->locs[i]];
		const struct frame_module *m = frames__module(fr, l->module);
		for (uint32_t j = l->n; j-- > 0;) {
			if (n == *cap) {
				*cap = *cap ? *cap * 2 : 256;
				*buf = xrealloc(*buf, *cap * sizeof(**buf));
			}
			(*buf)[n++] = (struct frame_ref){ &fr->lines[l->first + j], m };
		}
	}
	return n;
}

void frames__thread_text(const struct stack_label *l, char *buf, size_t size)
{
	const char *unit = l->unit ? l->unit : "goroutine";
	if (l->unit_id > 0)
		snprintf(buf, size, "%s (%s %lld)", l->thread, unit, (long long)l->unit_id);
	else if (l->unit_id < 0)
		snprintf(buf, size, "%s (other %ss)", l->thread, unit);
	else if (l->tid && l->rt_thread && strchr(l->rt_thread, '='))
		snprintf(buf, size, "%s \"%s\" (%d)", l->thread, strchr(l->rt_thread, '=') + 1,
			 (int)l->tid);         /* Python's name too: python3.11 "worker-1" (1234) */
	else if (l->tid)
		snprintf(buf, size, "%s (%d)", l->thread, (int)l->tid);
	else
		snprintf(buf, size, "%s (other threads)", l->thread);
}

void frames__process_text(const struct stack_label *l, char *buf, size_t size)
{
	snprintf(buf, size, "%s (%d)", l->process, (int)l->pid);
}

/* The part of an interpreter's file name worth showing: after
 * ".../lib/python3.X/" or ".../site-packages/" (the import path: "json/
 * __init__.py"), else the base name. */
static const char *short_file(const char *f)
{
	static const char *const dirs[] = { "/site-packages/", "/dist-packages/" };
	for (size_t i = 0; i < sizeof(dirs) / sizeof(dirs[0]); i++) {
		const char *d = strstr(f, dirs[i]);
		if (d)
			return d + strlen(dirs[i]);
	}
	const char *lib = strstr(f, "/lib/python");
	const char *slash = lib ? strchr(lib + 11, '/') : NULL;
	if (slash && slash[1])
		return slash + 1;
	const char *base = strrchr(f, '/');
	return base && base[1] ? base + 1 : f;
}

const char *frames__shown(const struct frame_loc *l, const struct frame_line *ln, char *buf,
			  size_t len)
{
	if (l->addr || !ln->file || !*ln->file)
		return ln->func;
	if (ln->line > 0)
		snprintf(buf, len, "%s (%s:%d)", ln->func, short_file(ln->file), ln->line);
	else
		snprintf(buf, len, "%s (%s)", ln->func, short_file(ln->file));
	return buf;
}
