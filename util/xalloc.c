#include "util/xalloc.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* Exits at once, without a core file (a production host's disk is not
 * ours to fill); the kernel detaches the tracees as it does for any exit
 * of the tracer. */
void xalloc_oom(void)
{
	static const char msg[] = "cprof-attach: error: out of memory (ulimit -v?): stopped, "
				  "the target detached, nothing written\n";
	if (write(STDERR_FILENO, msg, sizeof(msg) - 1) < 0)
		_exit(1);
	_exit(1);
}

void *xmalloc(size_t n)
{
	void *p = malloc(n ? n : 1);
	if (!p)
		xalloc_oom();
	return p;
}

void *xcalloc(size_t n, size_t size)
{
	void *p = calloc(n ? n : 1, size ? size : 1);
	if (!p)
		xalloc_oom();
	return p;
}

void *xrealloc(void *p, size_t n)
{
	p = realloc(p, n ? n : 1);
	if (!p)
		xalloc_oom();
	return p;
}

char *xstrdup(const char *s)
{
	char *d = strdup(s);
	if (!d)
		xalloc_oom();
	return d;
}
