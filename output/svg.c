/* svg: an interactive flame graph in one self-contained SVG file.
 *
 * The stacks are merged into a tree (a frame's width is the samples under
 * it: wall time; with --cpu, the CPU time), laid out root at the bottom and
 * children sorted by name, as flamegraph.pl does.  A title says what was
 * profiled (program and PID, or how many processes), for how long, how many
 * samples and which view; a legend under the frames names the colours.
 *
 * Width: the root is width="100%" over a 1200-unit viewBox, and every frame
 * carries its place as fractions of the whole (data-x, data-w).  The
 * embedded script lays the graph out at the window's width when it loads
 * and again on each resize; a viewer without script (an image viewer, an
 * <img> tag) shows the static 1200-unit layout, scaled down to fit.
 *
 * Colour: the hue is the package or namespace within the module, or the
 * module (colour_key(), colours()), the lightness the time off
 * CPU (frame_fill()).  A small embedded script gives hover details, click to
 * zoom, and search (click "Search" or Ctrl-F).  Every string goes through
 * add_escaped(); none goes into the script or the style (the script reads
 * names from the DOM, as text). */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "output/output.h"
#include "util/intern.h"
#include "util/strbuf.h"
#include "util/text.h"
#include "util/xalloc.h"

#define WIDTH 1200.0            /* the static layout's width */
#define PAD_X 10.0              /* left and right margin */
#define FRAME_W (WIDTH - 2 * PAD_X)
#define FRAME_H 16
#define PAD_TOP 40
#define LEGEND_ROW 18
#define MIN_WIDTH 0.1           /* px: narrower frames are left out */
#define CHAR_W 7.0              /* px per character at 12px Verdana, roughly */
#define MAX_NAME 4096           /* characters of a name kept */
#define BG_R 250
#define BG_G 250
#define BG_B 245

enum kind { KIND_ROOT, KIND_FRAME, KIND_CONTEXT /* process or thread */, KIND_SYSCALL };

struct node {
	const char *name;
	const char *module;             /* KIND_FRAME: its module's name, "" if none */
	uint64_t count, off;            /* weight, and the part of it off CPU */
	uint32_t first_child, next_sibling;     /* 0: none (node 0 is the root) */
	uint32_t depth;
	enum kind kind;
	double x;                       /* where it starts, as a fraction of the width */
};

/* The flame graph's tree, made one depth at a time: the frames at depth
 * D + 1 are the children of those at D, merged by (parent, name, module
 * or kind), each stack walked one frame further per depth (a cursor per
 * stack, struct walker).  Only the frames that will be drawn (MIN_WIDTH or
 * wider: the widest are "thick") are kept, and only the stacks under them
 * walked on, so the tree has at most WIDTH / MIN_WIDTH frames per depth
 * however many stacks there are, and the work is bounded by the frames
 * of the stacks that reach thick frames. */
struct tree {
	struct node *nodes;             /* kept: wide enough to draw */
	size_t n, cap;
	struct intern *names;           /* root and leaf names made here */
	struct intern *tokens;          /* (name, module or kind) -> token */
	struct token *tok;
	size_t ntok, tok_cap;
	uint32_t max_depth;             /* of every frame, drawn or not */
	uint64_t *label_weight;         /* per label: the program named in the title */
	int has_off;                    /* some weight was off CPU */
	int failed;                     /* out of memory */
};

/* What a frame is, apart from where: its name, and its module or a marker
 * of its kind, so that a thread named like a function is another node.
 * Markers are never shown (the node's kind says what to print). */
struct token {
	const char *name, *module;
	enum kind kind;
};

static const char context_key[] = "process or thread", syscall_key[] = "system call",
	no_module[] = "";

#define NO_TOKEN UINT32_MAX

static uint32_t token(struct tree *t, const char *name, const char *module, enum kind kind)
{
	const char *by = kind == KIND_CONTEXT ? context_key : kind == KIND_SYSCALL ? syscall_key : module;
	const void *key[2] = { name, by };
	int added;
	int64_t id = intern__add(t->tokens, key, sizeof(key), &added);
	if (id < 0) {
		t->failed = 1;
		return 0;
	}
	if (added) {
		if (t->ntok == t->tok_cap) {
			t->tok_cap = t->tok_cap ? 2 * t->tok_cap : 256;
			t->tok = xrealloc(t->tok, t->tok_cap * sizeof(*t->tok));
		}
		t->tok[t->ntok++] = (struct token){ name, kind == KIND_FRAME ? module : "", kind };
	}
	return (uint32_t)id;
}

/* A name made here (a root or leaf frame), stored once. */
static const char *made_name(struct tree *t, const char *s)
{
	int64_t id = intern__add(t->names, s, strlen(s), NULL);
	if (id < 0)
		t->failed = 1;
	return id < 0 ? "" : intern__key(t->names, (size_t)id, NULL);
}

/* Per module name: its weight summed over every frame of it, drawn or
 * not (the colours' order), and which kinds of frame the graph has. */
struct colours {
	struct intern *modules;         /* module name -> id */
	uint64_t *weight;               /* id -> weight */
	size_t *rank;                   /* id -> rank (0: first hue) */
	size_t *order;                  /* rank -> id */
	size_t n;
	int has_none, has_context, has_syscall;
};

/* A stack being walked root first: its roots (process, thread), the
 * lines of its locations from the last, its leaf (system call). */
struct walker {
	uint32_t stack;
	uint32_t node;                  /* where it is: a kept node, then a new one's index */
	uint32_t loc, line;             /* locations left; lines left in locs[loc] */
	uint32_t leaf;                  /* its leaf's token, NO_TOKEN when none or walked */
	uint8_t root, nroots;
};

struct build {
	struct tree *t;
	struct colours *c;
	const struct frames *fr;
	const struct profile_info *info;
	uint32_t *of_line;              /* frame line -> token, NO_TOKEN: not yet */
	int32_t *colour_of;             /* frame line -> colours id, -1: not yet */
	uint32_t (*roots)[3];           /* per label: how many roots, their tokens */
	struct walker *w;
	size_t nw;
	double total;                   /* the root's weight */
};

/* Weights of a stack: all of it, and the part off CPU (a sample of a
 * thread not running; in the CPU view every unit of weight is CPU time:
 * nothing is off). */
static uint64_t weights(const struct build *b, const struct frame_stack *s, uint64_t *off)
{
	uint64_t count = stack_weight(b->info, s);
	*off = !b->info->weight_cpu && s->state != 'R' ? count : 0;
	return count;
}

static uint32_t line_token(struct build *b, const struct frame_loc *l, uint32_t j)
{
	if (b->of_line[l->first + j] == NO_TOKEN) {
		const struct frame_module *m = frames__module(b->fr, l->module);
		char buf[1200];
		b->of_line[l->first + j] = token(b->t, frames__shown(l, frames__line(b->fr, l->first + j),
								     buf, sizeof(buf)),
						 m ? m->name : no_module, KIND_FRAME);
	}
	return b->of_line[l->first + j];
}

/* GCC's names for parts of a function ("f.cold", "f.part.0"): not a
 * package. */
static int clone_suffix(const char *dot)
{
	static const char *const sfx[] = { ".cold", ".part.", ".constprop.", ".isra.", ".lto_priv.",
					   ".localalias", ".clone.", NULL };
	for (const char *const *x = sfx; *x; x++)
		if (!strncmp(dot, *x, strlen(*x)))
			return 1;
	return 0;
}

/* The package or namespace FUNC is in, into BUF: Go's "net/http" of
 * "net/http.(*conn).serve", C++'s and Rust's first namespace ("std" of
 * "std::vector<int>::push_back", "tokio" of "tokio::runtime::..."); ""
 * for a plain C name. */
static void package_of(const char *func, char *buf, size_t size)
{
	buf[0] = '\0';
	const char *colons = strstr(func, "::");
	if (colons) {
		const char *start = colons;
		while (start > func && start[-1] != ' ' && start[-1] != '<' && start[-1] != '(' &&
		       start[-1] != '*' && start[-1] != '&')
			start--;
		if (colons > start && (size_t)(colons - start) < size && (start == func || start[-1] == ' '))
			snprintf(buf, size, "%.*s", (int)(colons - start), start);
		return;
	}
	if (strpbrk(func, " <"))
		return;
	const char *paren = strchr(func, '(');
	const char *from = func;
	for (const char *c = func; *c && (!paren || c < paren); c++)
		if (*c == '/')
			from = c + 1;
	const char *dot = strchr(from, '.');
	if (!dot || dot == from || !dot[1] || clone_suffix(dot) || (size_t)(dot - func) >= size)
		return;
	snprintf(buf, size, "%.*s", (int)(dot - func), func);
}

/* A frame's colour: its package within its module, "PACKAGE (MODULE)",
 * or its module alone; "" for no module. */
static void colour_key(const char *module, const char *func, char *buf, size_t size)
{
	char pkg[128];
	if (!*module) {
		buf[0] = '\0';
		return;
	}
	package_of(func, pkg, sizeof(pkg));
	if (*pkg)
		snprintf(buf, size, "%s (%s)", pkg, module);
	else
		snprintf(buf, size, "%s", module);
}

static void add_module_weight(struct build *b, const struct frame_loc *l, uint32_t j,
			      uint64_t count)
{
	const struct frame_module *m = frames__module(b->fr, l->module);
	if (!m || !*m->name) {
		b->c->has_none = 1;
		return;
	}
	uint32_t line = l->first + j;
	if (b->colour_of[line] < 0) {
		char key[320];
		colour_key(m->name, frames__line(b->fr, line)->func, key, sizeof(key));
		int64_t id = intern__add(b->c->modules, key, strlen(key), NULL);
		if (id < 0) {
			b->t->failed = 1;
			return;
		}
		if ((size_t)id >= b->c->n) {
			b->c->weight = xrealloc(b->c->weight, ((size_t)id + 1) * sizeof(*b->c->weight));
			b->c->weight[id] = 0;
			b->c->n = (size_t)id + 1;
		}
		b->colour_of[line] = (int32_t)id;
	}
	b->c->weight[b->colour_of[line]] += count;
}

/* A stack's walker, and what the whole graph takes from it: the root's
 * weight, the depth, the module weights, the label's weight. */
static void start_stack(struct build *b, uint32_t i, const struct frame_stack *s)
{
	struct tree *t = b->t;
	uint64_t off, count = weights(b, s, &off);
	t->has_off |= off > 0;
	if (s->label < frames__nlabels(b->fr)) {
		t->label_weight[s->label] += count;
		if (b->roots[s->label][0] == NO_TOKEN) {
			char roots[2][160];
			size_t nr = output__roots(b->fr, b->info, s, roots);
			b->roots[s->label][0] = (uint32_t)nr;
			for (size_t k = 0; k < nr; k++)
				b->roots[s->label][1 + k] = token(t, made_name(t, roots[k]), "",
								  KIND_CONTEXT);
		}
	}
	t->nodes[0].count += count;
	t->nodes[0].off += off;
	struct walker w = { i, 0, (uint32_t)s->n, 0, NO_TOKEN, 0,
			    s->label < frames__nlabels(b->fr) ? (uint8_t)b->roots[s->label][0] : 0 };
	b->c->has_context |= w.nroots > 0;
	size_t depth = w.nroots;
	for (size_t k = 0; k < s->n; k++) {
		const struct frame_loc *l = frames__loc(b->fr, s->locs[k]);
		for (uint32_t j = 0; j < l->n; j++)
			line_token(b, l, j);
		depth += l->n;
		for (uint32_t j = 0; j < l->n; j++)
			add_module_weight(b, l, j, count);
	}
	char leaf[64];
	if (output__leaf(b->info, s, leaf)) {
		w.leaf = token(t, made_name(t, leaf), "", KIND_SYSCALL);
		b->c->has_syscall = 1;
		depth++;
	}
	if (depth > t->max_depth)
		t->max_depth = (uint32_t)depth;
	b->w[b->nw++] = w;
}

/* The walker's next frame (token), or NO_TOKEN at the stack's end. */
static uint32_t step(struct build *b, struct walker *w, const struct frame_stack *s)
{
	if (w->root < w->nroots)
		return b->roots[s->label][1 + w->root++];
	while (!w->line && w->loc)
		w->line = frames__loc(b->fr, s->locs[--w->loc])->n;
	if (w->line)
		return line_token(b, frames__loc(b->fr, s->locs[w->loc]), --w->line);
	uint32_t leaf = w->leaf;
	w->leaf = NO_TOKEN;
	return leaf;
}
/* A frame of the depth being made, drawn or not. */
struct fresh {
	uint32_t parent, tok;
	uint64_t count, off;
	uint32_t elder;                 /* its parent's child made before it, or NONE */
	uint32_t node;                  /* its kept node, or NONE */
};

#define NONE UINT32_MAX

struct level {
	struct fresh *f;
	size_t n, cap;
	uint32_t *slots;                /* open addressing: (parent, token) -> f index */
	size_t nslots;
	uint32_t *newest;               /* per parent (node - first): its newest child */
	size_t newest_cap;
	uint32_t *kids;
	size_t kids_cap;
};

/* The child TOK of kept node PARENT at this depth, made if new. */
static uint32_t fresh(struct level *lv, uint32_t parent, uint32_t tok, uint32_t first)
{
	uint64_t h = ((uint64_t)parent << 32 | tok) * 0x9e3779b97f4a7c15ull;
	size_t mask = lv->nslots - 1, i = (size_t)(h >> 32) & mask;
	for (;; i = (i + 1) & mask) {
		uint32_t f = lv->slots[i];
		if (f == NONE)
			break;
		if (lv->f[f].parent == parent && lv->f[f].tok == tok)
			return f;
	}
	if (lv->n == lv->cap) {
		lv->cap = lv->cap ? 2 * lv->cap : 1024;
		lv->f = xrealloc(lv->f, lv->cap * sizeof(*lv->f));
	}
	uint32_t f = (uint32_t)lv->n++;
	lv->f[f] = (struct fresh){ parent, tok, 0, 0, lv->newest[parent - first], NONE };
	lv->newest[parent - first] = f;
	lv->slots[i] = f;
	return f;
}

struct kid_order {
	const struct tree *t;
	const struct fresh *f;
};

/* Children in name order; of two with one name (a function in two
 * modules), the one made later first.  (Made in the order the stacks
 * first reach them, kept newest first and sorted stably by name, as this
 * writer always has.) */
static int by_name(const void *pa, const void *pb, void *arg)
{
	const struct kid_order *k = arg;
	uint32_t a = *(const uint32_t *)pa, b = *(const uint32_t *)pb;
	int d = strcmp(k->t->tok[k->f[a].tok].name, k->t->tok[k->f[b].tok].name);
	return d ? d : (a < b) - (a > b);
}

static int wide_enough(double count, double total)
{
	return !(count / total * FRAME_W < MIN_WIDTH);
}

/* Keeps the children of kept node P that are wide enough, in name order,
 * each at the x where its elder siblings (drawn or not) end. */
static void place_kids(struct build *b, struct level *lv, uint32_t p, uint32_t first)
{
	struct tree *t = b->t;
	size_t k = 0;
	for (uint32_t f = lv->newest[p - first]; f != NONE; f = lv->f[f].elder) {
		if (k == lv->kids_cap) {
			lv->kids_cap = lv->kids_cap ? 2 * lv->kids_cap : 64;
			lv->kids = xrealloc(lv->kids, lv->kids_cap * sizeof(*lv->kids));
		}
		lv->kids[k++] = f;
	}
	struct kid_order ko = { t, lv->f };
	qsort_r(lv->kids, k, sizeof(*lv->kids), by_name, &ko);
	double x = t->nodes[p].x;
	uint32_t prev = 0;              /* the last child kept (the root is no one's) */
	for (size_t i = 0; i < k; i++) {
		struct fresh *f = &lv->f[lv->kids[i]];
		double at = x;
		x += (double)f->count / b->total;
		if (!wide_enough((double)f->count, b->total))
			continue;
		if (t->n == t->cap) {
			t->cap *= 2;
			t->nodes = xrealloc(t->nodes, t->cap * sizeof(*t->nodes));
		}
		const struct token *tk = &t->tok[f->tok];
		uint32_t id = (uint32_t)t->n++;
		f->node = id;
		t->nodes[id] = (struct node){ tk->name, tk->module, f->count, f->off, 0, 0,
					      t->nodes[p].depth + 1, tk->kind, at };
		*(prev ? &t->nodes[prev].next_sibling : &t->nodes[p].first_child) = id;
		prev = id;
	}
}

/* Makes the kept nodes one deeper than [FIRST, END), the nodes the
 * walkers are at, and moves the walkers under them (dropping the others). */
static void grow(struct build *b, struct level *lv, uint32_t first, uint32_t end)
{
	size_t nslots = 1024;
	while (nslots < 2 * b->nw)
		nslots *= 2;
	if (nslots > lv->nslots) {
		free(lv->slots);
		lv->slots = xmalloc(nslots * sizeof(*lv->slots));
	}
	lv->nslots = nslots;
	memset(lv->slots, 0xff, nslots * sizeof(*lv->slots));
	if (end - first > lv->newest_cap) {
		lv->newest_cap = 2 * (end - first);
		lv->newest = xrealloc(lv->newest, lv->newest_cap * sizeof(*lv->newest));
	}
	memset(lv->newest, 0xff, (end - first) * sizeof(*lv->newest));
	lv->n = 0;
	for (size_t i = 0; i < b->nw; i++) {
		struct walker *w = &b->w[i];
		struct frame_stack s;
		uint64_t off;
		frames__stack(b->fr, w->stack, &s);
		uint32_t tok = step(b, w, &s);
		if (tok == NO_TOKEN) {
			w->node = NONE;
			continue;
		}
		uint32_t f = fresh(lv, w->node, tok, first);
		lv->f[f].count += weights(b, &s, &off);
		lv->f[f].off += off;
		w->node = f;
	}
	for (uint32_t p = first; p < end; p++)
		place_kids(b, lv, p, first);
	size_t kept = 0;
	for (size_t i = 0; i < b->nw; i++) {
		struct walker *w = &b->w[i];
		if (w->node != NONE && lv->f[w->node].node != NONE) {
			w->node = lv->f[w->node].node;
			b->w[kept++] = *w;
		}
	}
	b->nw = kept;
}

static int build_tree(struct tree *t, struct colours *c, const struct frames *fr,
		      const struct profile_info *info)
{
	size_t nstacks = frames__nstacks(fr);
	struct build b = { .t = t, .c = c, .fr = fr, .info = info };
	struct level lv = { 0 };
	b.of_line = xmalloc((frames__nlines(fr) + 1) * sizeof(*b.of_line));
	memset(b.of_line, 0xff, (frames__nlines(fr) + 1) * sizeof(*b.of_line));
	b.colour_of = xmalloc((frames__nlines(fr) + 1) * sizeof(*b.colour_of));
	memset(b.colour_of, 0xff, (frames__nlines(fr) + 1) * sizeof(*b.colour_of));
	b.roots = xmalloc((frames__nlabels(fr) + 1) * sizeof(*b.roots));
	memset(b.roots, 0xff, (frames__nlabels(fr) + 1) * sizeof(*b.roots));
	b.w = xmalloc((nstacks + 1) * sizeof(*b.w));
	for (size_t i = 0; i < nstacks; i++) {
		struct frame_stack s;
		uint64_t off;
		frames__stack(fr, i, &s);
		if (weights(&b, &s, &off))
			start_stack(&b, (uint32_t)i, &s);
	}
	b.total = (double)t->nodes[0].count;
	for (uint32_t first = 0, end = 1; b.nw && b.total > 0 && !t->failed && first < end;) {
		grow(&b, &lv, first, end);
		first = end;
		end = (uint32_t)t->n;
	}
	free(lv.f);
	free(lv.slots);
	free(lv.newest);
	free(lv.kids);
	free(b.of_line);
	free(b.colour_of);
	free(b.roots);
	free(b.w);
	return t->failed ? -ENOMEM : 0;
}

/* S, at most MAX characters of it, as XML text or attribute value (either
 * quote).  Names come cleaned from where they were read (util/text.h);
 * anything else is cleaned here all the same, so that no string can make
 * the file malformed: an XML parser refuses invalid UTF-8 and control
 * characters, and the browser then shows an error, not the graph. */
static void add_escaped(struct strbuf *sb, const char *s, size_t max)
{
	size_t len = strlen(s);
	char *clean = NULL;
	if (!text__valid(s, len)) {
		clean = xmalloc(len + 1);
		len = text__clean(clean, len + 1, s, len);
		s = clean;
	}
	len = text__prefix(s, len, max);
	for (size_t i = 0; i < len; i++) {
		switch (s[i]) {
		case '&': strbuf__addf(sb, "&amp;"); break;
		case '<': strbuf__addf(sb, "&lt;"); break;
		case '>': strbuf__addf(sb, "&gt;"); break;
		case '"': strbuf__addf(sb, "&quot;"); break;
		case '\'': strbuf__addf(sb, "&#39;"); break;
		default: strbuf__add(sb, &s[i], 1);
		}
	}
	free(clean);
}

/* Characters in S once shown (cleaned: each '?' stands for what it
 * replaces), for fitting labels by width. */
static size_t shown_chars(const char *s)
{
	size_t len = strlen(s);
	if (text__valid(s, len))
		return text__chars(s, len);
	char *clean = xmalloc(len + 1);
	size_t n = text__chars(clean, text__clean(clean, len + 1, s, len));
	free(clean);
	return n;
}

/* --- colours -------------------------------------------------------------------
 * Hue by module: the program's own module first, then the others by
 * weight, each of the first NPALETTE its own hue, the rest one grey-brown
 * ("other modules").  Ranked per graph rather than hashed, so that the
 * modules that matter never share a colour and the legend can name each
 * one; the price is that a library's colour may differ between graphs.
 * A function's shade varies a little within its module's hue (hash of its
 * name), so neighbours stay apart. */
struct rgb { int r, g, b; };

static const struct rgb palette[] = {
	{ 232, 112, 48 }, { 74, 144, 217 }, { 92, 184, 92 }, { 214, 176, 44 }, { 160, 108, 212 },
	{ 56, 178, 170 }, { 220, 96, 140 }, { 150, 150, 80 }, { 184, 124, 84 }, { 110, 124, 204 },
};
#define NPALETTE (sizeof(palette) / sizeof(palette[0]))
static const struct rgb other_colour = { 176, 160, 144 }, none_colour = { 190, 190, 190 },
	context_colour = { 196, 204, 220 }, syscall_colour = { 138, 150, 164 };

struct module_weight { size_t id; uint64_t weight; int main; const char *name; };

static int by_weight(const void *pa, const void *pb)
{
	const struct module_weight *a = pa, *b = pb;
	if (a->main != b->main)
		return b->main - a->main;
	if (a->weight != b->weight)
		return a->weight < b->weight ? 1 : -1;
	return strcmp(a->name, b->name);
}

/* Ranks the modules (build_tree weighed them). */
static void colours(struct colours *c, const struct frames *fr)
{
	const struct frame_module *m = frames__module(fr, frames__main_module(fr));
	struct module_weight *w = xcalloc(c->n + 1, sizeof(*w));
	for (size_t i = 0; i < c->n; i++) {
		const char *name = intern__key(c->modules, i, NULL);
		/* The program's own: its module, or a package "PKG (MODULE)" in it. */
		char own[300] = "";
		if (m)
			snprintf(own, sizeof(own), " (%s)", m->name);
		size_t nl = strlen(name), ol = strlen(own);
		int main = m && (!strcmp(m->name, name) ||
				 (nl > ol && !strcmp(name + nl - ol, own)));
		w[i] = (struct module_weight){ i, c->weight[i], main, name };
	}
	c->rank = xcalloc(c->n + 1, sizeof(*c->rank));
	c->order = xcalloc(c->n + 1, sizeof(*c->order));
	if (c->n)
		qsort(w, c->n, sizeof(*w), by_weight);
	for (size_t i = 0; i < c->n; i++) {
		c->rank[w[i].id] = i;
		c->order[i] = w[i].id;
	}
	free(w);
}

/* The module's colour by rank: RANK NPALETTE and above are "other". */
static struct rgb rank_colour(size_t rank)
{
	return rank < NPALETTE ? palette[rank] : other_colour;
}

static struct rgb node_colour(const struct colours *c, const struct node *nd)
{
	if (nd->kind == KIND_CONTEXT || nd->kind == KIND_ROOT)
		return context_colour;
	if (nd->kind == KIND_SYSCALL)
		return syscall_colour;
	if (!*nd->module)
		return none_colour;
	char key[320];
	colour_key(nd->module, nd->name, key, sizeof(key));
	int64_t id = intern__find(c->modules, key, strlen(key));
	return id < 0 ? none_colour : rank_colour(c->rank[id]);
}

/* Off CPU is paler: the colour mixed towards a light grey by OFF, the
 * share of the frame's time its threads were not running (sleeping,
 * blocked, stopped).  Why lightness, not a hatch or a split frame: a
 * wall-clock profile is mostly waiting, and hatching most of the graph is
 * noise, while pale-versus-vivid makes the CPU work stand out and keeps
 * each module's hue readable; a frame holding both is shaded by its share,
 * where splitting it would wrongly suggest which of its children (ordered
 * by name, not by state) ran. */
static struct rgb pale(struct rgb c, double off)
{
	const double k = 0.62 * off;
	return (struct rgb){ c.r + (int)((238 - c.r) * k), c.g + (int)((238 - c.g) * k),
			     c.b + (int)((236 - c.b) * k) };
}

static struct rgb frame_fill(const struct colours *c, const struct node *nd)
{
	struct rgb base = node_colour(c, nd);
	if (nd->kind == KIND_FRAME && *nd->module) {
		int shade = (int)(hash_bytes(nd->name, strlen(nd->name)) % 25) - 12;
		base = (struct rgb){ base.r + shade, base.g + shade, base.b + shade };
	}
	return pale(base, nd->count ? (double)nd->off / (double)nd->count : 0.0);
}

/* --- frames --------------------------------------------------------------------- */
struct emit {
	struct tree *t;
	const struct colours *c;
	struct output_stream *o;
	struct strbuf *sb;              /* o's */
	double total;
	const char *unit;               /* "samples", or "us CPU" with --cpu */
};

/* " (N samples, P%, off CPU)": what the title says after the name. */
static void add_counts(struct emit *e, const struct node *nd)
{
	strbuf__addf(e->sb, " (%" PRIu64 " %s, %.2f%%", nd->count,
		     nd->count == 1 && !strcmp(e->unit, "samples") ? "sample" : e->unit,
		     100.0 * (double)nd->count / e->total);
	if (e->t->has_off) {
		double off = (double)nd->off / (double)nd->count;
		if (nd->off == 0)
			strbuf__addf(e->sb, ", on CPU");
		else if (nd->off == nd->count)
			strbuf__addf(e->sb, ", off CPU");
		else
			strbuf__addf(e->sb, ", %.0f%% off CPU", 100.0 * off);
	}
	strbuf__addf(e->sb, ")");
}

/* A frame: <g> with its place as fractions of the width (data-x, data-w),
 * its depth, and the length of its name in characters (data-l: the
 * title's first data-l characters, for the script, so that no module or
 * count is ever taken for part of a name). */
static void emit_frame(struct emit *e, uint32_t id, double x)
{
	const struct node *nd = &e->t->nodes[id];
	double frac = (double)nd->count / e->total, px = PAD_X + x * FRAME_W, w = frac * FRAME_W;
	const char *name = id ? nd->name : "all";
	size_t chars = shown_chars(name);
	if (chars > MAX_NAME)
		chars = MAX_NAME;
	struct rgb c = frame_fill(e->c, nd);
	double y = PAD_TOP + (double)(e->t->max_depth - nd->depth) * FRAME_H;
	strbuf__addf(e->sb, "<g class=\"f\" data-x=\"%.9f\" data-w=\"%.9f\" data-d=\"%u\" "
		     "data-l=\"%zu\"><title>", x, frac, nd->depth, chars);
	add_escaped(e->sb, name, MAX_NAME);
	if (nd->kind == KIND_FRAME && *nd->module) {
		strbuf__addf(e->sb, " [");
		add_escaped(e->sb, nd->module, MAX_NAME);
		strbuf__addf(e->sb, "]");
	}
	add_counts(e, nd);
	strbuf__addf(e->sb, "</title><rect x=\"%.2f\" y=\"%.0f\" width=\"%.2f\" height=\"%d\" "
		     "fill=\"rgb(%d,%d,%d)\" rx=\"2\"/><text x=\"%.2f\" y=\"%.0f\">", px, y, w,
		     FRAME_H - 1, c.r, c.g, c.b, px + 3, y + FRAME_H - 4);
	size_t fit = w > 3 * CHAR_W ? (size_t)((w - 6) / CHAR_W) : 0;
	if (fit >= chars) {
		add_escaped(e->sb, name, fit);
	} else if (fit > 2) {
		add_escaped(e->sb, name, fit - 2);
		strbuf__addf(e->sb, "..");
	}
	strbuf__addf(e->sb, "</text></g>\n");
}

/* Depth first, children in name order (as build_tree linked them): the
 * order a recursive walk would take, with a stack of our own, so that a
 * stack 100,000 frames deep costs memory, not our thread's stack.  The
 * file is written as it goes. */
static void emit_tree(struct emit *e)
{
	const struct node *nodes = e->t->nodes;
	uint32_t *todo = xmalloc((e->t->n + 1) * sizeof(*todo));
	size_t n = 0;
	todo[n++] = 0;
	while (n) {
		uint32_t id = todo[--n];
		emit_frame(e, id, nodes[id].x);
		output__flush(e->o, 0);
		/* Pushed last child first, so that the first pops first. */
		size_t k = 0;
		for (uint32_t c = nodes[id].first_child; c; c = nodes[c].next_sibling)
			todo[n + k++] = c;
		for (size_t i = 0; i < k / 2; i++) {
			uint32_t tmp = todo[n + i];
			todo[n + i] = todo[n + k - 1 - i];
			todo[n + k - 1 - i] = tmp;
		}
		n += k;
	}
	free(todo);
}

/* --- the title ------------------------------------------------------------------ */

/* The program of the heaviest label, or NULL when the profile has none. */
static const struct stack_label *main_label(const struct tree *t, const struct frames *fr)
{
	const struct stack_label *best = NULL;
	uint64_t most = 0;
	for (size_t i = 0; i < frames__nlabels(fr); i++) {
		const struct stack_label *l = frames__label(fr, (uint32_t)i);
		if (l && l->process && *l->process && (!best || t->label_weight[i] > most)) {
			best = l;
			most = t->label_weight[i];
		}
	}
	return best;
}

static int by_pid(const void *a, const void *b)
{
	pid_t x = *(const pid_t *)a, y = *(const pid_t *)b;
	return (x > y) - (x < y);
}

static size_t count_processes(const struct frames *fr)
{
	size_t n = frames__nlabels(fr), k = 0;
	pid_t *pids = xcalloc(n + 1, sizeof(*pids));
	for (size_t i = 0; i < n; i++) {
		const struct stack_label *l = frames__label(fr, (uint32_t)i);
		if (l)
			pids[k++] = l->pid;
	}
	qsort(pids, k, sizeof(*pids), by_pid);
	size_t distinct = 0;
	for (size_t i = 0; i < k; i++)
		distinct += i == 0 || pids[i] != pids[i - 1];
	free(pids);
	return distinct;
}

/* "Wall-clock flame graph of PROGRAM (PID N): 3.0 s, 594 samples", or
 * "of N processes"; with --cpu "CPU-time ..., 1.50 s of CPU". */
static void add_title(struct strbuf *sb, const struct tree *t, const struct frames *fr,
		      const struct profile_info *info)
{
	strbuf__addf(sb, "%s flame graph", info->weight_cpu ? "CPU-time" : "Wall-clock");
	const struct stack_label *l = main_label(t, fr);
	if (frames__several_processes(fr)) {
		strbuf__addf(sb, " of %zu processes", count_processes(fr));
	} else if (l) {
		strbuf__addf(sb, " of ");
		add_escaped(sb, l->process, 60);
		if (l->pid > 0)
			strbuf__addf(sb, " (PID %d)", (int)l->pid);
	}
	strbuf__addf(sb, ":");
	if (info->duration_ns)
		strbuf__addf(sb, " %.1f s,", (double)info->duration_ns / 1e9);
	uint64_t n = frames__total(fr);
	strbuf__addf(sb, " %" PRIu64 " %s", n, n == 1 ? "sample" : "samples");
	if (info->weight_cpu)
		strbuf__addf(sb, ", %.2f s of CPU", (double)t->nodes[0].count / 1e6);
}

/* --- the legend ------------------------------------------------------------------
 * A row (or rows) of items, each a swatch and its text, laid out here for
 * the static width and again by the script at the window's width
 * (measuring the text, which here is only estimated). */
struct legend {
	struct strbuf *sb;
	double x, y;
	int rows;
};

static void legend_item(struct legend *lg, const struct rgb *c, const char *text, size_t max)
{
	size_t chars = shown_chars(text);
	double w = (c ? 18 : 0) + (double)(chars <= max ? chars : max + 2) * CHAR_W + 16;
	if (lg->x > PAD_X && lg->x + w > WIDTH - PAD_X) {
		lg->x = PAD_X;
		lg->y += LEGEND_ROW;
		lg->rows++;
	}
	strbuf__addf(lg->sb, "<g class=\"li\">");
	if (c)
		strbuf__addf(lg->sb, "<rect x=\"%.0f\" y=\"%.0f\" width=\"14\" height=\"12\" rx=\"2\" "
			     "fill=\"rgb(%d,%d,%d)\"/>", lg->x, lg->y - 10, c->r, c->g, c->b);
	strbuf__addf(lg->sb, "<text x=\"%.0f\" y=\"%.0f\"%s>", lg->x + (c ? 18 : 0), lg->y,
		     c ? "" : " class=\"lh\"");
	add_escaped(lg->sb, text, max);
	if (chars > max)
		strbuf__addf(lg->sb, "..");
	strbuf__addf(lg->sb, "</text></g>");
	lg->x += w;
}

/* Returns the number of rows. */
static int add_legend(struct strbuf *sb, const struct tree *t, const struct colours *c, double y)
{
	struct legend lg = { sb, PAD_X, y, 1 };
	strbuf__addf(sb, "<g id=\"legend\" data-y=\"%.0f\">", y);
	legend_item(&lg, NULL, "Colours:", 20);
	for (size_t rank = 0; rank < c->n && rank < NPALETTE; rank++) {
		struct rgb col = rank_colour(rank);
		legend_item(&lg, &col, intern__key(c->modules, c->order[rank], NULL), 40);
	}
	if (c->n > NPALETTE)
		legend_item(&lg, &other_colour, "other modules", 20);
	if (c->has_none)
		legend_item(&lg, &none_colour, "no module", 20);
	if (c->has_syscall)
		legend_item(&lg, &syscall_colour, "system call", 20);
	legend_item(&lg, &context_colour, c->has_context ? "all, processes, threads" : "all", 30);
	if (t->has_off) {
		struct rgb on = palette[0], off = pale(palette[0], 1.0);
		legend_item(&lg, NULL, "Time:", 20);
		legend_item(&lg, &on, "on CPU", 20);
		legend_item(&lg, &off, "off CPU (paler: sleeping, blocked)", 40);
	}
	strbuf__addf(sb, "</g>\n");
	return lg.rows;
}

static const char script[] =
	"<script type=\"text/ecmascript\"><![CDATA[\n"
	"const svg = document.documentElement, PAD = 10, CW = 7, ROW = 18;\n"
	"const frames = Array.from(document.querySelectorAll('g.f'));\n"
	"const $ = (id) => document.getElementById(id);\n"
	"const details = $('details'), matched = $('matched'), legend = $('legend');\n"
	"let W = 1200, view = [0, 1, 0];\n"
	"for (const g of frames) g.n = Array.from(g.querySelector('title').textContent).slice(0, +g.dataset.l).join('');\n"
	"function nameOf(g) { return g.n; }\n"
	"function fit(g, w) {\n"
	"  const t = g.querySelector('text'), n = Array.from(g.n), c = Math.floor((w - 6) / CW);\n"
	"  t.textContent = w < 3 * CW ? '' : (n.length <= c ? g.n : n.slice(0, Math.max(0, c - 2)).join('') + '..');\n"
	"}\n"
	"function zoom(x0, w0, d0) {\n"
	"  view = [x0, w0, d0];\n"
	"  const fw = W - 2 * PAD;\n"
	"  for (const g of frames) {\n"
	"    const x = +g.dataset.x, w = +g.dataset.w, d = +g.dataset.d, r = g.querySelector('rect');\n"
	"    const inside = d >= d0 && x >= x0 - 1e-9 && x + w <= x0 + w0 + 1e-9;\n"
	"    const below = d < d0 && x <= x0 + 1e-9 && x + w >= x0 + w0 - 1e-9;\n"
	"    if (!inside && !below) { g.style.display = 'none'; continue; }\n"
	"    const nx = PAD + (below ? 0 : (x - x0) / w0 * fw), nw = below ? fw : w / w0 * fw;\n"
	"    g.style.display = nw < 0.1 ? 'none' : '';\n"
	"    r.setAttribute('x', nx.toFixed(2)); r.setAttribute('width', nw.toFixed(2));\n"
	"    g.querySelector('text').setAttribute('x', (nx + 3).toFixed(2)); fit(g, nw);\n"
	"  }\n"
	"}\n"
	"function placeLegend() {\n"
	"  let x = PAD, y = +legend.dataset.y;\n"
	"  for (const it of legend.querySelectorAll('g.li')) {\n"
	"    const r = it.querySelector('rect'), t = it.querySelector('text'), s = r ? 18 : 0;\n"
	"    const w = s + t.getComputedTextLength() + 16;\n"
	"    if (x > PAD && x + w > W - PAD) { x = PAD; y += ROW; }\n"
	"    if (r) { r.setAttribute('x', x); r.setAttribute('y', y - 10); }\n"
	"    t.setAttribute('x', x + s); t.setAttribute('y', y);\n"
	"    x += w;\n"
	"  }\n"
	"  return y + 10;\n"
	"}\n"
	"function layout() {\n"
	"  W = Math.max(320, Math.floor(svg.getBoundingClientRect().width) || 1200);\n"
	"  const title = $('title'), room = W - 2 * 95;\n"
	"  title.setAttribute('x', W / 2); title.style.fontSize = '';\n"
	"  const len = title.getComputedTextLength();\n"
	"  if (len > room) title.style.fontSize = Math.max(9, Math.floor(16 * room / len)) + 'px';\n"
	"  $('search').setAttribute('x', W - PAD); matched.setAttribute('x', W - PAD);\n"
	"  const h = placeLegend();\n"
	"  svg.setAttribute('height', h); svg.setAttribute('viewBox', '0 0 ' + W + ' ' + h);\n"
	"  zoom(view[0], view[1], view[2]);\n"
	"}\n"
	"layout();\n"
	"let pending = false;\n"
	"window.addEventListener('resize', () => { if (!pending) { pending = true; requestAnimationFrame(() => { pending = false; layout(); }); } });\n"
	"for (const g of frames) {\n"
	"  g.addEventListener('click', () => zoom(+g.dataset.x, +g.dataset.w, +g.dataset.d));\n"
	"  g.addEventListener('mouseover', () => { details.textContent = g.querySelector('title').textContent; });\n"
	"  g.addEventListener('mouseout', () => { details.textContent = ' '; });\n"
	"}\n"
	"$('reset').addEventListener('click', () => zoom(0, 1, 0));\n"
	"function search(term) {\n"
	"  let re = null;\n"
	"  if (term) { try { re = new RegExp(term); } catch (e) { re = null; } }\n"
	"  const spans = [];\n"
	"  for (const g of frames) {\n"
	"    const r = g.querySelector('rect');\n"
	"    if (!r.dataset.fill) r.dataset.fill = r.getAttribute('fill');\n"
	"    const hit = re && re.test(nameOf(g));\n"
	"    r.setAttribute('fill', hit ? 'rgb(230,0,230)' : r.dataset.fill);\n"
	"    if (hit) spans.push([+g.dataset.x, +g.dataset.x + +g.dataset.w]);\n"
	"  }\n"
	"  spans.sort((a, b) => a[0] - b[0]);\n"
	"  let total = 0, end = -1;\n"
	"  for (const [a, b] of spans) { if (a >= end) { total += b - a; end = b; } else if (b > end) { total += b - end; end = b; } }\n"
	"  matched.textContent = re ? 'Matched: ' + (100 * total).toFixed(1) + '%' : ' ';\n"
	"}\n"
	"$('search').addEventListener('click', () => search(prompt('Search (regular expression):', '')));\n"
	"window.addEventListener('keydown', (e) => { if ((e.ctrlKey || e.metaKey) && e.key === 'f') { e.preventDefault(); search(prompt('Search (regular expression):', '')); } });\n"
	"]]></script>\n";

/* Everything but the frames and the script: the header line (reset,
 * title, search), the details and match lines under the frames, the
 * legend under them. */
static void write_svg(struct strbuf *sb, const struct tree *t, const struct colours *c,
		      const struct frames *fr, const struct profile_info *info)
{
	double frames_end = PAD_TOP + (double)(t->max_depth + 1) * FRAME_H;
	double info_y = frames_end + 18, legend_y = frames_end + 40;
	struct strbuf legend = { 0 };
	int rows = add_legend(&legend, t, c, legend_y);
	double height = legend_y + (rows - 1) * LEGEND_ROW + 10;
	strbuf__addf(sb, "<?xml version=\"1.0\" standalone=\"no\"?>\n"
		     "<svg version=\"1.1\" width=\"100%%\" height=\"%.0f\" viewBox=\"0 0 %.0f %.0f\" "
		     "preserveAspectRatio=\"xMinYMin meet\" xmlns=\"http://www.w3.org/2000/svg\">\n"
		     "<style>text { font-family: Verdana, sans-serif; font-size: 12px; fill: #000; "
		     "pointer-events: none; } g.f { cursor: pointer; } g.f:hover rect { stroke: #000; "
		     "stroke-width: 0.5; } .ui { font-size: 12px; cursor: pointer; fill: #336; "
		     "pointer-events: all; text-decoration: underline; } #title { font-size: 16px; } "
		     ".lh { font-weight: bold; fill: #444; } #details, #matched { fill: #333; }</style>\n"
		     "<rect width=\"100%%\" height=\"100%%\" fill=\"rgb(%d,%d,%d)\"/>\n"
		     "<text class=\"ui\" id=\"reset\" x=\"%.0f\" y=\"24\">Reset zoom</text>\n"
		     "<text id=\"title\" x=\"%.0f\" y=\"24\" text-anchor=\"middle\">",
		     height, WIDTH, height, BG_R, BG_G, BG_B, PAD_X, WIDTH / 2);
	add_title(sb, t, fr, info);
	strbuf__addf(sb, "</text>\n"
		     "<text class=\"ui\" id=\"search\" x=\"%.0f\" y=\"24\" text-anchor=\"end\">Search</text>\n"
		     "<text id=\"details\" x=\"%.0f\" y=\"%.0f\"> </text>\n"
		     "<text id=\"matched\" x=\"%.0f\" y=\"%.0f\" text-anchor=\"end\"> </text>\n",
		     WIDTH - PAD_X, PAD_X, info_y, WIDTH - PAD_X, info_y);
	strbuf__add(sb, legend.s ? legend.s : "", legend.len);
	strbuf__free(&legend);
	if (info->comment) {
		strbuf__addf(sb, "<desc>");     /* not a comment: "--" is not allowed there */
		add_escaped(sb, info->comment, 1024);
		strbuf__addf(sb, "</desc>\n");
	}
}

int svg__write(int fd, const struct frames *fr, const struct profile_info *info,
	       char *err, size_t errlen)
{
	struct tree t = { .cap = 1024, .names = intern__new(), .tokens = intern__new() };
	struct colours c = { .modules = intern__new() };
	struct output_stream o = { .fd = fd };
	int r = 0;
	t.nodes = xcalloc(t.cap, sizeof(*t.nodes));
	t.nodes[0].module = "";
	t.label_weight = xcalloc(frames__nlabels(fr) + 1, sizeof(*t.label_weight));
	t.n = 1;
	if (!t.names || !t.tokens || !c.modules || build_tree(&t, &c, fr, info) < 0) {
		r = -ENOMEM;
		goto out;
	}
	colours(&c, fr);
	write_svg(&o.sb, &t, &c, fr, info);
	if (t.nodes[0].count) {
		struct emit e = { &t, &c, &o, &o.sb, (double)t.nodes[0].count,
				  info->weight_cpu ? "us CPU" : "samples" };
		emit_tree(&e);
	}
	strbuf__addf(&o.sb, "%s</svg>\n", script);
	r = output__flush(&o, 1);
out:
	if (r < 0)
		snprintf(err, errlen, "writing the flame graph: %s", strerror(-r));
	intern__free(c.modules);
	free(c.weight);
	free(c.rank);
	free(c.order);
	intern__free(t.names);
	intern__free(t.tokens);
	free(t.tok);
	free(t.label_weight);
	free(t.nodes);
	strbuf__free(&o.sb);
	return r;
}
