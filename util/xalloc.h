/* xalloc: allocation that cannot fail silently.  Running out of memory
 * prints one line and exits with status 1: the profiler cannot do anything
 * useful without memory, and every caller checking would hide the real
 * logic.  (The target is not affected: the kernel detaches it when we
 * exit.) */
#ifndef CPROF_UTIL_XALLOC_H
#define CPROF_UTIL_XALLOC_H

#include <stddef.h>

void *xmalloc(size_t n);
void *xcalloc(size_t n, size_t size);
void *xrealloc(void *p, size_t n);
char *xstrdup(const char *s);

/* What the above do when memory runs out, for allocators of their own
 * (intern tables): one line on stderr, exit 1. */
void xalloc_oom(void) __attribute__((noreturn));

#endif
