#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "output/output.h"
#include "util/intern.h"
#include "util/strbuf.h"
#include "util/text.h"
#include "util/xalloc.h"

/* flamegraph.pl splits frames on ';' and the count off at the last space:
 * a ';' or newline inside a name would break the line apart, so they
 * become '_'.  Names come cleaned (util/text.h); anything else is cleaned
 * here all the same (other control characters and invalid UTF-8 to '?'). */
static void add_frame(struct strbuf *sb, const char *name)
{
	size_t at = sb->len;
	for (const char *p = name; *p; p++) {
		char c = (*p == ';' || *p == '\n') ? '_' : *p;
		strbuf__add(sb, &c, 1);
	}
	if (sb->len > at && !text__valid(sb->s + at, sb->len - at))
		sb->len = at + text__clean(sb->s + at, sb->len - at + 1, sb->s + at, sb->len - at);
}

/* Lines are made of tokens: each distinct frame text, as add_frame()
 * writes it, has an id.  A stack's line is its tokens joined by ';', so
 * stacks are sorted and merged by their token sequences, never building
 * the text of a line but to write it. */
struct tokens {
	const struct frames *fr;
	const struct profile_info *info;
	struct intern *text;            /* frame text -> token */
	uint32_t *of_line;              /* frame line -> token; NO_TOKEN: not yet */
	uint32_t (*of_label)[3];        /* label -> how many roots, their tokens */
	uint32_t *leaf;                 /* stack -> its leaf token, or NO_TOKEN */
	struct strbuf tmp;
	int failed;
};

#define NO_TOKEN UINT32_MAX

static uint32_t token(struct tokens *t, const char *name)
{
	strbuf__reset(&t->tmp);
	add_frame(&t->tmp, name);
	int64_t id = intern__add(t->text, t->tmp.s ? t->tmp.s : "", t->tmp.len, NULL);
	if (id < 0) {
		t->failed = 1;
		return 0;
	}
	return (uint32_t)id;
}

/* Gives every frame of stack I its token, before the sort reads them. */
static void tokenize(struct tokens *t, size_t i, const struct frame_stack *s)
{
	const struct frames *fr = t->fr;
	for (size_t k = 0; k < s->n; k++) {
		const struct frame_loc *l = frames__loc(fr, s->locs[k]);
		for (uint32_t j = 0; j < l->n; j++)
			if (t->of_line[l->first + j] == NO_TOKEN) {
				char buf[1200];
				t->of_line[l->first + j] = token(t, frames__shown(l, frames__line(fr,
								 l->first + j), buf, sizeof(buf)));
			}
	}
	if (s->label < frames__nlabels(fr) && t->of_label[s->label][0] == NO_TOKEN) {
		char roots[2][160];
		size_t nr = output__roots(fr, t->info, s, roots);
		t->of_label[s->label][0] = (uint32_t)nr;
		for (size_t k = 0; k < nr; k++)
			t->of_label[s->label][1 + k] = token(t, roots[k]);
	}
	char leaf[64];
	t->leaf[i] = output__leaf(t->info, s, leaf) ? token(t, leaf) : NO_TOKEN;
}

/* A stack's tokens root first: its roots, its frames (locations from the
 * last, each one's lines from the last), its leaf. */
struct cursor {
	const struct tokens *t;
	const uint32_t *roots;
	size_t nroots, r;
	const struct frame_stack *s;
	size_t loc;                     /* locations left */
	uint32_t line;                  /* lines left in s->locs[loc] */
	uint32_t leaf;                  /* NO_TOKEN: none, or given */
};

static void cursor_start(struct cursor *c, const struct tokens *t, const struct frame_stack *s,
			 size_t i)
{
	int labelled = s->label < frames__nlabels(t->fr);
	*c = (struct cursor){ t, labelled ? &t->of_label[s->label][1] : NULL,
			      labelled ? t->of_label[s->label][0] : 0, 0, s, s->n, 0, t->leaf[i] };
}

static uint32_t cursor_next(struct cursor *c)
{
	if (c->r < c->nroots)
		return c->roots[c->r++];
	while (!c->line && c->loc)
		c->line = frames__loc(c->t->fr, c->s->locs[--c->loc])->n;
	if (c->line) {
		const struct frame_loc *l = frames__loc(c->t->fr, c->s->locs[c->loc]);
		return c->t->of_line[l->first + --c->line];
	}
	uint32_t leaf = c->leaf;
	c->leaf = NO_TOKEN;
	return leaf;
}

/* Lines are sorted as strcmp() sorts them, without their text: at the
 * first token where two lines differ, what decides is that token's text
 * followed by ';' when its line goes on, or by the end of the string (a
 * NUL, below every byte): a "position" (token, goes on).  Tokens hold no
 * ';' and no NUL, so two positions' strings never have one as the prefix of
 * the other, and ranking the positions once turns each line into a
 * sequence of ranks, compared as numbers. */
static int cmp_positions(const void *pa, const void *pb, void *arg)
{
	const struct tokens *t = arg;
	uint32_t a = *(const uint32_t *)pa, b = *(const uint32_t *)pb;
	size_t la, lb;
	const unsigned char *sa = intern__key(t->text, a >> 1, &la);
	const unsigned char *sb = intern__key(t->text, b >> 1, &lb);
	int ea = a & 1 ? ';' : 0, eb = b & 1 ? ';' : 0;
	int d = memcmp(sa, sb, la < lb ? la : lb);
	if (d)
		return d;
	if (la == lb)
		return ea - eb;
	return la < lb ? ea - sb[la] : sa[lb] - eb;
}

/* rank[2 * token + goes on]. */
static uint32_t *rank_positions(const struct tokens *t)
{
	size_t n = 2 * intern__count(t->text);
	uint32_t *pos = xmalloc((n + 1) * sizeof(*pos)), *rank = xmalloc((n + 1) * sizeof(*rank));
	for (size_t i = 0; i < n; i++)
		pos[i] = (uint32_t)i;
	qsort_r(pos, n, sizeof(*pos), cmp_positions, (void *)t);
	for (size_t i = 0; i < n; i++)
		rank[pos[i]] = (uint32_t)i;
	free(pos);
	return rank;
}

/* Every line as its ranks, packed: line k is ranks[at[k], at[k + 1]). */
struct lines {
	uint32_t *ranks;
	size_t *at;
};

static int cmp_lines(const void *pa, const void *pb, void *arg)
{
	const struct lines *l = arg;
	uint32_t a = *(const uint32_t *)pa, b = *(const uint32_t *)pb;
	const uint32_t *ra = l->ranks + l->at[a], *rb = l->ranks + l->at[b];
	size_t na = l->at[a + 1] - l->at[a], nb = l->at[b + 1] - l->at[b];
	for (size_t i = 0; i < na && i < nb; i++)
		if (ra[i] != rb[i])
			return ra[i] < rb[i] ? -1 : 1;
	return (na > nb) - (na < nb);
}

static void make_lines(struct lines *l, const struct tokens *t, const uint32_t *order, size_t n)
{
	uint32_t *rank = rank_positions(t);
	size_t cap = 1024, len = 0;
	l->ranks = xmalloc(cap * sizeof(*l->ranks));
	l->at = xmalloc((n + 1) * sizeof(*l->at));
	for (size_t k = 0; k < n; k++) {
		struct frame_stack s;
		struct cursor c;
		frames__stack(t->fr, order[k], &s);
		cursor_start(&c, t, &s, order[k]);
		l->at[k] = len;
		for (uint32_t tok = cursor_next(&c), next; tok != NO_TOKEN; tok = next) {
			next = cursor_next(&c);
			if (len == cap) {
				cap *= 2;
				l->ranks = xrealloc(l->ranks, cap * sizeof(*l->ranks));
			}
			l->ranks[len++] = rank[2 * tok + (next != NO_TOKEN)];
		}
	}
	l->at[n] = len;
	free(rank);
}

static void write_line(struct output_stream *o, const struct tokens *t, size_t i, uint64_t count)
{
	struct frame_stack s;
	struct cursor c;
	frames__stack(t->fr, i, &s);
	cursor_start(&c, t, &s, i);
	const char *sep = "";
	for (uint32_t tok; (tok = cursor_next(&c)) != NO_TOKEN; sep = ";") {
		size_t len;
		const char *text = intern__key(t->text, tok, &len);
		strbuf__add(&o->sb, sep, strlen(sep));
		strbuf__add(&o->sb, text, len);
	}
	strbuf__addf(&o->sb, " %llu\n", (unsigned long long)count);
	output__flush(o, 0);
}

/* Lines sorted as strcmp() sorts them, each once: different PC sequences
 * can read the same once symbolized (two PCs in one function), and are
 * merged. */
int folded__write(int fd, const struct frames *fr, const struct profile_info *info,
		  char *err, size_t errlen)
{
	size_t nu = frames__nstacks(fr), n = 0;
	struct tokens t = { .fr = fr, .info = info, .text = intern__new() };
	struct output_stream o = { .fd = fd };
	struct lines l = { 0 };
	uint32_t *order = xmalloc((nu ? nu : 1) * sizeof(*order)), *line_of = NULL;
	int r = 0;
	t.of_line = xmalloc((frames__nlines(fr) + 1) * sizeof(*t.of_line));
	memset(t.of_line, 0xff, (frames__nlines(fr) + 1) * sizeof(*t.of_line));
	t.of_label = xmalloc((frames__nlabels(fr) + 1) * sizeof(*t.of_label));
	memset(t.of_label, 0xff, (frames__nlabels(fr) + 1) * sizeof(*t.of_label));
	t.leaf = xmalloc((nu ? nu : 1) * sizeof(*t.leaf));
	if (!t.text) {
		r = -ENOMEM;
		goto out;
	}
	for (size_t i = 0; i < nu; i++) {
		struct frame_stack s;
		frames__stack(fr, i, &s);
		if (!stack_weight(info, &s))
			continue;
		tokenize(&t, i, &s);
		order[n++] = (uint32_t)i;
	}
	if (t.failed) {
		r = -ENOMEM;
		goto out;
	}
	/* order[k] is stack order[k]'s line k; then sorted lines. */
	make_lines(&l, &t, order, n);
	line_of = xmalloc((n ? n : 1) * sizeof(*line_of));
	for (size_t k = 0; k < n; k++)
		line_of[k] = (uint32_t)k;
	qsort_r(line_of, n, sizeof(*line_of), cmp_lines, &l);
	for (size_t i = 0; i < n;) {
		struct frame_stack s;
		uint64_t count = 0;
		size_t j = i;
		for (; j < n && (j == i || cmp_lines(&line_of[i], &line_of[j], &l) == 0); j++) {
			frames__stack(fr, order[line_of[j]], &s);
			count += stack_weight(info, &s);
		}
		write_line(&o, &t, order[line_of[i]], count);
		i = j;
	}
	r = output__flush(&o, 1);
out:
	if (r < 0)
		snprintf(err, errlen, "writing folded stacks: %s", strerror(-r));
	free(order);
	free(line_of);
	free(l.ranks);
	free(l.at);
	free(t.of_line);
	free(t.of_label);
	free(t.leaf);
	strbuf__free(&t.tmp);
	strbuf__free(&o.sb);
	intern__free(t.text);
	return r;
}
