/* strbuf: a growable NUL-terminated string (allocation as util/xalloc.h). */
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
/* Room for LEN more bytes at the end: the caller writes them there, then
 * adds LEN to sb->len (binary data: no NUL is kept after them). */
char *strbuf__room(struct strbuf *sb, size_t len);
void strbuf__reset(struct strbuf *sb);
void strbuf__free(struct strbuf *sb);

#endif
