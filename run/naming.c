/* naming: the sampler's stacks, each address space's frames named against
 * its own modules; for the profile at the end (run.c) and for --dump. */
#include "run/naming.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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

struct naming_spaces {
	struct snap {
		const struct modules *live;     /* the sampler's table copied */
		uint64_t version;               /* ... as it was then */
		struct modules *copy;
	} *snaps;
	const struct modules **copies;  /* snaps[i].copy, for frames__name */
	size_t n;
};

struct naming_spaces *naming__spaces_new(void)
{
	return xcalloc(1, sizeof(struct naming_spaces));
}

void naming__spaces_free(struct naming_spaces *ns)
{
	if (!ns)
		return;
	for (size_t i = 0; i < ns->n; i++)
		modules__free(ns->snaps[i].copy);
	free(ns->snaps);
	free(ns->copies);
	free(ns);
}

void naming__spaces_take(struct naming_spaces *ns, const struct sampler *s)
{
	size_t n = sampler__nspaces(s);
	if (n > ns->n) {
		ns->snaps = xrealloc(ns->snaps, n * sizeof(*ns->snaps));
		ns->copies = xrealloc(ns->copies, (n + 1) * sizeof(*ns->copies));
		memset(ns->snaps + ns->n, 0, (n - ns->n) * sizeof(*ns->snaps));
		ns->n = n;
	}
	for (size_t i = 0; i < ns->n; i++) {
		struct snap *sn = &ns->snaps[i];
		const struct modules *live = sampler__space(s, i);
		if (live != sn->live || (live && modules__version(live) != sn->version)) {
			modules__free(sn->copy);
			sn->copy = live ? modules__snapshot(live) : NULL;
			sn->live = live;
			sn->version = live ? modules__version(live) : 0;
		}
		ns->copies[i] = sn->copy;
	}
}

void naming__spaces_forget(struct naming_spaces *ns, uint32_t space)
{
	if (space < ns->n) {
		modules__free(ns->snaps[space].copy);
		ns->snaps[space] = (struct snap){ NULL, 0, NULL };
		ns->copies[space] = NULL;
	}
}

const struct modules *const *naming__spaces(const struct naming_spaces *ns, size_t *n)
{
	*n = ns->n;
	return ns->copies;
}
