#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "output/output.h"
#include "util/intern.h"
#include "util/strbuf.h"
#include "util/text.h"

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

static void build_line(struct strbuf *sb, struct symbolizer *sym, const struct profile_info *info,
		       uint32_t slot, const uint64_t *pcs, size_t n)
{
	strbuf__reset(sb);
	if (info->thread_root && slot < info->nthreads) {
		char root[64];
		thread_label_text(&info->threads[slot], root, sizeof(root));
		add_frame(sb, root);
	}
	/* PCs are innermost first, and so are each PC's inlined frames: walk
	 * both backwards to print root first. */
	for (size_t i = n; i-- > 0;) {
		const struct sym_frame *f;
		size_t nf = symbolizer__lookup(sym, pcs[i], &f);
		for (size_t j = nf; j-- > 0;)
			add_frame(sb, f[j].func);
	}
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(const char *const *)a, *(const char *const *)b);
}

static int write_all(int fd, const char *s, size_t len)
{
	while (len) {
		ssize_t w = write(fd, s, len);
		if (w < 0 && errno == EINTR)
			continue;
		if (w < 0)
			return -errno;
		s += w;
		len -= (size_t)w;
	}
	return 0;
}

int folded__write(int fd, const struct stacks *st, struct symbolizer *sym,
		  const struct profile_info *info, char *err, size_t errlen)
{
	struct intern *lines = intern__new();
	struct strbuf sb = { 0 }, out = { 0 };
	size_t nu = stacks__unique(st);
	uint64_t *counts = xcalloc(nu ? nu : 1, sizeof(*counts));
	int r = lines ? 0 : -ENOMEM;
	/* Different PC sequences can read the same once symbolized (two PCs in
	 * one function): merge them, so each line is unique. */
	for (size_t i = 0; i < nu && r == 0; i++) {
		struct stack s;
		stacks__get(st, i, &s);
		uint64_t w = stack_weight(info, &s);
		if (!w)
			continue;
		build_line(&sb, sym, info, s.slot, s.pcs, s.n);
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
		r = write_all(fd, out.s, out.len);
	if (r < 0)
		snprintf(err, errlen, "writing folded stacks: %s", strerror(-r));
	free(sorted);
	free(counts);
	strbuf__free(&sb);
	strbuf__free(&out);
	intern__free(lines);
	return r;
}
