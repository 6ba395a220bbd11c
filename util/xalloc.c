#include "util/xalloc.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void oom(void)
{
	fputs("cprof-attach: error: out of memory\n", stderr);
	abort();
}

void *xmalloc(size_t n)
{
	void *p = malloc(n ? n : 1);
	if (!p)
		oom();
	return p;
}

void *xcalloc(size_t n, size_t size)
{
	void *p = calloc(n ? n : 1, size ? size : 1);
	if (!p)
		oom();
	return p;
}

void *xrealloc(void *p, size_t n)
{
	p = realloc(p, n ? n : 1);
	if (!p)
		oom();
	return p;
}

char *xstrdup(const char *s)
{
	char *d = strdup(s);
	if (!d)
		oom();
	return d;
}
