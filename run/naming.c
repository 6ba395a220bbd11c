/* naming: the sampler's stacks, each address space's frames named against
 * its own modules; for the profile at the end (run.c) and for --dump. */
#include "run/naming.h"

#include <stdio.h>
#include <stdlib.h>

#include "util/xalloc.h"

struct frames *naming__stacks(const struct sampler *s, const struct options *o)
{
	size_t n = sampler__nspaces(s);
	const struct modules **spaces = xcalloc(n + 1, sizeof(*spaces));
	for (size_t i = 0; i < n; i++)
		spaces[i] = sampler__space(s, i);
	struct frames *fr = frames__from_stacks(sampler__stacks(s), spaces, n, o->debug_dirs,
						o->ndebug_dirs);
	if (!fr)
		fputs("cprof-attach: error: out of memory naming the stacks\n", stderr);
	free(spaces);
	return fr;
}
