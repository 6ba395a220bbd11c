/* svg: an interactive flame graph in one self-contained SVG file.
 *
 * The stacks are merged into a tree (a frame's width is the samples under
 * it: wall time; with --cpu, the CPU time), laid out root at the bottom and children sorted by name,
 * as flamegraph.pl does, and coloured by module.  A small embedded script
 * gives hover details, click to zoom, and search (click "Search" or
 * Ctrl-F).  Every string goes through add_escaped(); none goes into the
 * script or the style (the script reads names from the DOM, as text). */
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

#define WIDTH 1200.0
#define FRAME_H 16
#define PAD_TOP 44
#define PAD_BOTTOM 28
#define MIN_WIDTH 0.1           /* px: narrower frames are left out */
#define CHAR_W 7.0              /* px per character at 12px Verdana, roughly */

struct node {
	const char *name;
	const char *module;
	uint64_t count;
	uint32_t first_child, next_sibling;     /* 0: none (node 0 is the root) */
	uint32_t depth;
};

struct tree {
	struct node *nodes;
	size_t n, cap;
	struct intern *edges;           /* (parent, name, module) -> node - 1 */
	struct intern *names;           /* thread root names */
	uint32_t max_depth;
};

static uint32_t child(struct tree *t, uint32_t parent, const char *name, const char *module)
{
	const void *key[3] = { (void *)(uintptr_t)parent, name, module };
	int added;
	int64_t id = intern__add(t->edges, key, sizeof(key), &added);
	if (id < 0)
		return parent;
	uint32_t nid = (uint32_t)id + 1;
	if (!added)
		return nid;
	if (t->n == t->cap) {
		t->cap *= 2;
		t->nodes = xrealloc(t->nodes, t->cap * sizeof(*t->nodes));
	}
	uint32_t depth = t->nodes[parent].depth + 1;
	t->nodes[nid] = (struct node){ name, module, 0, 0, t->nodes[parent].first_child, depth };
	t->nodes[parent].first_child = nid;
	if (depth > t->max_depth)
		t->max_depth = depth;
	t->n++;
	return nid;
}

/* The process and thread frames above the stack's own (output__roots). */
static uint32_t root_nodes(struct tree *t, const struct frames *fr, const struct profile_info *info,
			   const struct frame_stack *s, uint64_t count)
{
	char roots[2][160];
	uint32_t at = 0;
	size_t n = output__roots(fr, info, s, roots);
	for (size_t i = 0; i < n; i++) {
		int64_t id = intern__add(t->names, roots[i], strlen(roots[i]), NULL);
		if (id < 0)
			break;
		at = child(t, at, intern__key(t->names, (size_t)id, NULL), "[thread]");
		t->nodes[at].count += count;
	}
	return at;
}

static void build_tree(struct tree *t, const struct frames *fr, const struct profile_info *info)
{
	struct frame_ref *walk = NULL;
	size_t cap = 0;
	for (size_t i = 0; i < frames__nstacks(fr); i++) {
		struct frame_stack s;
		frames__stack(fr, i, &s);
		uint64_t count = stack_weight(info, &s);
		if (!count)
			continue;
		t->nodes[0].count += count;
		uint32_t at = root_nodes(t, fr, info, &s, count);
		size_t n = frames__root_first(fr, &s, &walk, &cap);
		for (size_t k = 0; k < n; k++) {
			at = child(t, at, walk[k].line->func, walk[k].module ? walk[k].module->name : "");
			t->nodes[at].count += count;
		}
		char leaf[64];
		if (output__leaf(info, &s, leaf)) {
			int64_t id = intern__add(t->names, leaf, strlen(leaf), NULL);
			if (id >= 0) {
				at = child(t, at, intern__key(t->names, (size_t)id, NULL), "[kernel]");
				t->nodes[at].count += count;
			}
		}
	}
	free(walk);
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

/* A stable colour per module (hue) and function (shade), so the same
 * library looks the same in every graph. */
static void colour(const char *module, const char *name, int *r, int *g, int *b)
{
	uint64_t hm = hash_bytes(module, strlen(module)), hn = hash_bytes(name, strlen(name));
	if (!*module) {                         /* unknown, [truncated], threads */
		*r = *g = *b = 180 + (int)(hn % 30);
		return;
	}
	static const int base[][3] = {
		{ 230, 120, 60 }, { 90, 160, 220 }, { 110, 190, 110 }, { 200, 170, 60 },
		{ 170, 120, 210 }, { 80, 190, 180 }, { 220, 110, 150 }, { 150, 150, 90 },
	};
	const int *c = base[hm % 8];
	int shade = (int)(hn % 40) - 20;
	*r = c[0] + shade;
	*g = c[1] + shade;
	*b = c[2] + shade;
}

struct emit {
	struct tree *t;
	struct strbuf *sb;
	double total;
	uint32_t *kids;                 /* scratch for sorting children */
	const char *unit;               /* "samples", or "us CPU" with --cpu */
};

static int by_name(const void *a, const void *b, void *arg)
{
	const struct node *nodes = arg;
	return strcmp(nodes[*(const uint32_t *)a].name, nodes[*(const uint32_t *)b].name);
}

static void emit_frame(struct emit *e, uint32_t id, double x)
{
	const struct node *nd = &e->t->nodes[id];
	double w = (double)nd->count / e->total * WIDTH;
	int r, g, b;
	const char *name = id ? nd->name : "all";
	colour(id ? nd->module : "", name, &r, &g, &b);
	double y = PAD_TOP + (double)(e->t->max_depth - nd->depth) * FRAME_H;
	strbuf__addf(e->sb, "<g class=\"f\" data-x=\"%.9f\" data-w=\"%.9f\" data-d=\"%u\">"
		     "<title>", x / WIDTH, w / WIDTH, nd->depth);
	add_escaped(e->sb, name, 4096);
	if (id && *nd->module) {
		strbuf__addf(e->sb, " [");
		add_escaped(e->sb, nd->module, 4096);
		strbuf__addf(e->sb, "]");
	}
	strbuf__addf(e->sb, " (%" PRIu64 " %s, %.2f%%)</title>"
		     "<rect x=\"%.2f\" y=\"%.0f\" width=\"%.2f\" height=\"%d\" fill=\"rgb(%d,%d,%d)\" "
		     "rx=\"2\"/><text x=\"%.2f\" y=\"%.0f\">", nd->count, e->unit,
		     100.0 * (double)nd->count / e->total, x, y, w, FRAME_H - 1, r, g, b, x + 3,
		     y + FRAME_H - 4);
	size_t fit = w > 3 * CHAR_W ? (size_t)((w - 6) / CHAR_W) : 0;
	if (fit >= shown_chars(name)) {
		add_escaped(e->sb, name, fit);
	} else if (fit > 2) {
		add_escaped(e->sb, name, fit - 2);
		strbuf__addf(e->sb, "..");
	}
	strbuf__addf(e->sb, "</text></g>\n");
}

/* Depth first, children in name order, each at the x where its siblings
 * before it end.  KIDS is shared scratch: each level copies what it needs
 * before recursing. */
static void emit_tree(struct emit *e, uint32_t id, double x)
{
	const struct node *nd = &e->t->nodes[id];
	if ((double)nd->count / e->total * WIDTH < MIN_WIDTH)
		return;
	emit_frame(e, id, x);
	size_t n = 0;
	for (uint32_t c = nd->first_child; c; c = e->t->nodes[c].next_sibling)
		n++;
	if (!n)
		return;
	uint32_t *kids = xmalloc(n * sizeof(*kids));
	n = 0;
	for (uint32_t c = nd->first_child; c; c = e->t->nodes[c].next_sibling)
		kids[n++] = c;
	qsort_r(kids, n, sizeof(*kids), by_name, e->t->nodes);
	for (size_t i = 0; i < n; i++) {
		emit_tree(e, kids[i], x);
		x += (double)e->t->nodes[kids[i]].count / e->total * WIDTH;
	}
	free(kids);
}

static const char script[] =
	"<script type=\"text/ecmascript\"><![CDATA[\n"
	"const W = 1200, CW = 7;\n"
	"const frames = Array.from(document.querySelectorAll('g.f'));\n"
	"const details = document.getElementById('details');\n"
	"const matched = document.getElementById('matched');\n"
	"function nameOf(g) { return g.querySelector('title').textContent.replace(/ (\\[[^\\]]*\\]?\\] )?\\(\\d+ (samples|us CPU).*$/, ''); }\n"
	"function fit(g, w) {\n"
	"  const t = g.querySelector('text'), n = Array.from(nameOf(g)), c = Math.floor((w - 6) / CW);\n"
	"  t.textContent = w < 3 * CW ? '' : (n.length <= c ? n.join('') : n.slice(0, Math.max(0, c - 2)).join('') + '..');\n"
	"}\n"
	"function zoom(x0, w0, d0) {\n"
	"  for (const g of frames) {\n"
	"    const x = +g.dataset.x, w = +g.dataset.w, d = +g.dataset.d, r = g.querySelector('rect');\n"
	"    const inside = d >= d0 && x >= x0 - 1e-9 && x + w <= x0 + w0 + 1e-9;\n"
	"    const below = d < d0 && x <= x0 + 1e-9 && x + w >= x0 + w0 - 1e-9;\n"
	"    if (!inside && !below) { g.style.display = 'none'; continue; }\n"
	"    const nx = below ? 0 : (x - x0) / w0 * W, nw = below ? W : w / w0 * W;\n"
	"    g.style.display = nw < 0.1 ? 'none' : '';\n"
	"    r.setAttribute('x', nx); r.setAttribute('width', nw);\n"
	"    g.querySelector('text').setAttribute('x', nx + 3); fit(g, nw);\n"
	"  }\n"
	"}\n"
	"for (const g of frames) {\n"
	"  g.addEventListener('click', () => zoom(+g.dataset.x, +g.dataset.w, +g.dataset.d));\n"
	"  g.addEventListener('mouseover', () => { details.textContent = g.querySelector('title').textContent; });\n"
	"  g.addEventListener('mouseout', () => { details.textContent = ' '; });\n"
	"}\n"
	"document.getElementById('reset').addEventListener('click', () => zoom(0, 1, 0));\n"
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
	"document.getElementById('search').addEventListener('click', () => search(prompt('Search (regular expression):', '')));\n"
	"window.addEventListener('keydown', (e) => { if ((e.ctrlKey || e.metaKey) && e.key === 'f') { e.preventDefault(); search(prompt('Search (regular expression):', '')); } });\n"
	"]]></script>\n";

static void write_svg(struct strbuf *sb, struct tree *t, const struct profile_info *info)
{
	double height = PAD_TOP + (double)(t->max_depth + 1) * FRAME_H + PAD_BOTTOM;
	strbuf__addf(sb, "<?xml version=\"1.0\" standalone=\"no\"?>\n"
		     "<svg version=\"1.1\" width=\"%.0f\" height=\"%.0f\" viewBox=\"0 0 %.0f %.0f\" "
		     "xmlns=\"http://www.w3.org/2000/svg\">\n"
		     "<style>text { font-family: Verdana, sans-serif; font-size: 12px; fill: #000; "
		     "pointer-events: none; } g.f { cursor: pointer; } g.f:hover rect { stroke: #000; "
		     "stroke-width: 0.5; } .ui { font-size: 12px; cursor: pointer; fill: #333; "
		     "pointer-events: all; } .title { font-size: 17px; }</style>\n"
		     "<rect width=\"100%%\" height=\"100%%\" fill=\"#fafaf5\"/>\n"
		     "<text class=\"title\" x=\"%.0f\" y=\"22\" text-anchor=\"middle\">"
		     "%s flame graph</text>\n"
		     "<text class=\"ui\" id=\"reset\" x=\"10\" y=\"22\">Reset zoom</text>\n"
		     "<text class=\"ui\" id=\"search\" x=\"%.0f\" y=\"22\" text-anchor=\"end\">Search</text>\n"
		     "<text id=\"matched\" x=\"%.0f\" y=\"%.0f\" text-anchor=\"end\"> </text>\n"
		     "<text id=\"details\" x=\"10\" y=\"%.0f\"> </text>\n",
		     WIDTH, height, WIDTH, height, WIDTH / 2,
		     info->weight_cpu ? "CPU-time" : "Wall-clock", WIDTH - 10, WIDTH - 10,
		     height - 10, height - 10);
	if (info->comment) {
		strbuf__addf(sb, "<desc>");     /* not a comment: "--" is not allowed there */
		add_escaped(sb, info->comment, 1024);
		strbuf__addf(sb, "</desc>\n");
	}
}

int svg__write(int fd, const struct frames *fr, const struct profile_info *info,
	       char *err, size_t errlen)
{
	struct tree t = { .cap = 1024, .edges = intern__new(), .names = intern__new() };
	struct strbuf sb = { 0 };
	int r = 0;
	t.nodes = xcalloc(t.cap, sizeof(*t.nodes));
	t.n = 1;
	if (!t.edges || !t.names) {
		r = -ENOMEM;
		goto out;
	}
	build_tree(&t, fr, info);
	write_svg(&sb, &t, info);
	if (t.nodes[0].count) {
		struct emit e = { &t, &sb, (double)t.nodes[0].count, NULL,
				  info->weight_cpu ? "us CPU" : "samples" };
		emit_tree(&e, 0, 0);
	}
	strbuf__addf(&sb, "%s</svg>\n", script);
	r = output__write_all(fd, sb.s, sb.len);
out:
	if (r < 0)
		snprintf(err, errlen, "writing the flame graph: %s", strerror(-r));
	intern__free(t.edges);
	intern__free(t.names);
	free(t.nodes);
	strbuf__free(&sb);
	return r;
}
