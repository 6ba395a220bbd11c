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

/* A copy of a space's table, held by the loop while it is the latest and
 * by each naming set that has it (REFS, atomic: sets are let go on the
 * namer's thread). */
struct copy {
	struct modules *ms;
	unsigned refs;
};

static void copy_put(struct copy *c)
{
	if (c && __atomic_sub_fetch(&c->refs, 1, __ATOMIC_ACQ_REL) == 0) {
		modules__free(c->ms);
		free(c);
	}
}

struct naming_spaces {
	struct snap {
		const struct modules *live;     /* the sampler's table copied */
		uint64_t version;               /* ... as it was then */
		struct copy *copy;
	} *snaps;
	size_t n;
};

struct naming_set {
	struct copy **copies;
	const struct modules **tables;  /* copies[i]->ms, for frames__name */
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
		copy_put(ns->snaps[i].copy);
	free(ns->snaps);
	free(ns);
}

struct naming_set *naming__spaces_take(struct naming_spaces *ns, const struct sampler *s)
{
	size_t n = sampler__nspaces(s);
	if (n > ns->n) {
		ns->snaps = xrealloc(ns->snaps, n * sizeof(*ns->snaps));
		memset(ns->snaps + ns->n, 0, (n - ns->n) * sizeof(*ns->snaps));
		ns->n = n;
	}
	struct naming_set *set = xcalloc(1, sizeof(*set));
	set->n = ns->n;
	set->copies = xcalloc(ns->n + 1, sizeof(*set->copies));
	set->tables = xcalloc(ns->n + 1, sizeof(*set->tables));
	for (size_t i = 0; i < ns->n; i++) {
		struct snap *sn = &ns->snaps[i];
		const struct modules *live = sampler__space(s, i);
		if (live != sn->live || (live && modules__version(live) != sn->version)) {
			copy_put(sn->copy);
			sn->copy = NULL;
			if (live) {
				sn->copy = xmalloc(sizeof(*sn->copy));
				*sn->copy = (struct copy){ modules__snapshot(live), 1 };
			}
			sn->live = live;
			sn->version = live ? modules__version(live) : 0;
		}
		if (sn->copy) {
			__atomic_add_fetch(&sn->copy->refs, 1, __ATOMIC_RELAXED);
			set->copies[i] = sn->copy;
			set->tables[i] = sn->copy->ms;
		}
	}
	return set;
}

void naming__spaces_forget(struct naming_spaces *ns, uint32_t space)
{
	if (space < ns->n) {
		copy_put(ns->snaps[space].copy);
		ns->snaps[space] = (struct snap){ NULL, 0, NULL };
	}
}

const struct modules *const *naming__set_spaces(const struct naming_set *set, size_t *n)
{
	*n = set->n;
	return set->tables;
}

void naming__set_put(struct naming_set *set)
{
	if (!set)
		return;
	for (size_t i = 0; i < set->n; i++)
		copy_put(set->copies[i]);
	free(set->copies);
	free(set->tables);
	free(set);
}
