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
	if (sb->len)
		strbuf__add(sb, ";", 1);
	size_t at = sb->len;
	for (const char *p = name; *p; p++) {
		char c = (*p == ';' || *p == '\n') ? '_' : *p;
		strbuf__add(sb, &c, 1);
	}
	if (sb->len > at && !text__valid(sb->s + at, sb->len - at))
		sb->len = at + text__clean(sb->s + at, sb->len - at + 1, sb->s + at, sb->len - at);
}

static void build_line(struct strbuf *sb, const struct frames *fr, const struct profile_info *info,
		       const struct frame_stack *s, struct frame_ref **buf, size_t *cap)
{
	char roots[2][160];
	strbuf__reset(sb);
	size_t nr = output__roots(fr, info, s, roots);
	for (size_t i = 0; i < nr; i++)
		add_frame(sb, roots[i]);
	size_t n = frames__root_first(fr, s, buf, cap);
	for (size_t i = 0; i < n; i++)
		add_frame(sb, (*buf)[i].line->func);
	char leaf[64];
	if (output__leaf(info, s, leaf))
		add_frame(sb, leaf);
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(const char *const *)a, *(const char *const *)b);
}

int folded__write(int fd, const struct frames *fr, const struct profile_info *info,
		  char *err, size_t errlen)
{
	struct intern *lines = intern__new();
	struct strbuf sb = { 0 }, out = { 0 };
	struct frame_ref *walk = NULL;
	size_t walk_cap = 0;
	size_t nu = frames__nstacks(fr);
	uint64_t *counts = xcalloc(nu ? nu : 1, sizeof(*counts));
	int r = lines ? 0 : -ENOMEM;
	/* Different PC sequences can read the same once symbolized (two PCs in
	 * one function): merge them, so each line is unique. */
	for (size_t i = 0; i < nu && r == 0; i++) {
		struct frame_stack s;
		frames__stack(fr, i, &s);
		uint64_t w = stack_weight(info, &s);
		if (!w)
			continue;
		build_line(&sb, fr, info, &s, &walk, &walk_cap);
		int64_t id = intern__add(lines, sb.s ? sb.s : "", sb.len, NULL);
		if (id < 0)
			r = (int)id;
		else
			counts[id] += w;
	}
	size_t nl = r == 0 ? intern__count(lines) : 0;
	const char **sorted = xcalloc(nl ? nl : 1, sizeof(*sorted));
	for (size_t i = 0; i < nl; i++)
		sorted[i] = intern__key(lines, i, NULL);
	qsort(sorted, nl, sizeof(*sorted), cmp_str);
	for (size_t i = 0; i < nl; i++) {
		int64_t id = intern__find(lines, sorted[i], strlen(sorted[i]));
		strbuf__addf(&out, "%s %llu\n", sorted[i], (unsigned long long)counts[id]);
	}
	if (r == 0 && out.len)
		r = output__write_all(fd, out.s, out.len);
	if (r < 0)
		snprintf(err, errlen, "writing folded stacks: %s", strerror(-r));
	free(walk);
	free(sorted);
	free(counts);
	strbuf__free(&sb);
	strbuf__free(&out);
	intern__free(lines);
	return r;
}
