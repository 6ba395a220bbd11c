/* strbuf: a growable NUL-terminated string.  Allocation failure aborts
 * the process with a message: the profiler cannot do anything useful
 * without memory, and every caller checking would hide the real logic. */
#ifndef CPROF_UTIL_STRBUF_H
#define CPROF_UTIL_STRBUF_H

#include <stddef.h>

struct strbuf {
	char *s;
	size_t len, cap;
};

void strbuf__addf(struct strbuf *sb, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
void strbuf__add(struct strbuf *sb, const char *s, size_t len);
void strbuf__reset(struct strbuf *sb);
void strbuf__free(struct strbuf *sb);

/* Helpers that abort on allocation failure (see above). */
void *xmalloc(size_t n);
void *xcalloc(size_t n, size_t size);
void *xrealloc(void *p, size_t n);
char *xstrdup(const char *s);

#endif
