#include "sample/internal.h"
#include "sample/runtime.h"

#include <stdbool.h>
#include <stdlib.h>

#include "module/modules.h"
#include "unwind/unwinder.h"
#include "util/timeutil.h"
#include "util/xalloc.h"

#define REFRESH_INTERVAL_NS (100 * 1000000ull)
/* A program that has just started (or exec'd) is still being loaded: its
 * maps change many times in its first moments, and a table read then
 * lacks the libraries mapped after.  Until it is a second old, every miss
 * re-reads them: the capture was taken after the library it points into
 * was mapped, so the re-read finds it. */
#define YOUNG_NS (1000 * 1000000ull)
#define YOUNG_REFRESH_INTERVAL_NS 0
#define SCAN_INTERVAL_NS (250 * 1000000ull)


/* ---- address spaces ------------------------------------------------------
 * The target numbers address spaces (capture.space); each may go through
 * generations here: when a library is unmapped and another file mapped
 * over its range (dlclose + dlopen), the samples taken before must still
 * be named from the old file, so the space gets a new module table and
 * the old one stays.  Stacks are counted with the generation's index.  An
 * old generation stays as long as a stack of the table names it; once the
 * last is aged out (sampler__age()) it is freed and its index reused. */

static struct space *new_space(struct sampler *s, uint32_t id, pid_t pid)
{
	/* The generation before, if any: its modules are shared. */
	const struct modules *prev = id < s->sp.ngen && s->sp.gen[id] != UINT32_MAX ?
				     s->sp.spaces[s->sp.gen[id]].ms : NULL;
	if (id >= s->sp.ngen) {
		size_t n = (size_t)id + 1 > s->sp.ngen * 2 ? (size_t)id + 1 : s->sp.ngen * 2;
		s->sp.gen = xrealloc(s->sp.gen, n * sizeof(*s->sp.gen));
		for (size_t i = s->sp.ngen; i < n; i++)
			s->sp.gen[i] = UINT32_MAX;
		s->sp.ngen = n;
	}
	uint32_t index;
	if (s->sp.nfree_spaces) {
		index = s->sp.free_spaces[--s->sp.nfree_spaces];      /* one sampler__age() freed */
	} else {
		if (s->sp.nspaces == s->sp.spaces_cap) {
			s->sp.spaces_cap = s->sp.spaces_cap ? s->sp.spaces_cap * 2 : 16;
			s->sp.spaces = xrealloc(s->sp.spaces, s->sp.spaces_cap * sizeof(*s->sp.spaces));
		}
		index = (uint32_t)s->sp.nspaces++;
	}
	struct space *sp = &s->sp.spaces[index];
	*sp = (struct space){ .ms = prev ? modules__copy(prev, pid) : modules__new(pid), .index = index };
	modules__refresh(sp->ms, pid);
	sp->uw = unwinder__new(sp->ms);
	sp->born_ns = sp->last_refresh_ns = sp->last_scan_ns = now_ns();
	for (size_t i = 0; runtimes[i]; i++)
		if (runtimes[i]->space_size)
			sp->rt_state[i] = xcalloc(1, runtimes[i]->space_size);
	s->sp.gen[id] = index;
	for (const struct rt_ops *const *o = runtimes; *o; o++)
		if ((*o)->space)
			(*o)->space(s, sp, id, pid);
	return sp;
}

/* The current generation of space ID, its module table read from PID's
 * maps on first use. */
struct space *sampler_space_for(struct sampler *s, uint32_t id, pid_t pid)
{
	if (id < s->sp.ngen && s->sp.gen[id] != UINT32_MAX)
		return &s->sp.spaces[s->sp.gen[id]];
	return new_space(s, id, pid);
}

/* Whether a stack of the table counted in generation SP names an address
 * in one of the N ranges R. */
static bool space_sampled_in(const struct sampler *s, const struct space *sp, uint64_t (*r)[2],
			     size_t n)
{
	for (size_t id = 0; id < stacks__unique(s->st); id++) {
		struct stack k;
		if (!stacks__exists(s->st, id))
			continue;
		stacks__get(s->st, id, &k);
		if (k.space != sp->index)
			continue;
		for (size_t i = 0; i < k.n; i++)
			for (size_t j = 0; j < n; j++)
				if (k.pcs[i] >= r[j][0] && k.pcs[i] < r[j][1])
					return true;
	}
	return false;
}

/* Re-reads the maps of space ID (current generation SP): files added are
 * added; a file mapped over another's range starts a new generation, if a
 * stack counted in this one has an address in the file replaced (to be
 * named from it): else the table is changed in place (a library reloaded
 * 10 times a second would otherwise make a generation at every scan).
 * Returns the space to use from now on, or NULL if nothing changed. */
static struct space *rescan(struct sampler *s, struct space *sp, uint32_t id, pid_t pid)
{
	uint64_t now = now_ns();
	uint64_t ranges[16][2];
	size_t n;
	sp->last_refresh_ns = sp->last_scan_ns = now;
	s->rep.stats.refreshes++;
	switch (modules__scan_replaced(sp->ms, pid, ranges, 16, &n)) {
	case MODULES_ADDED:
		modules__refresh(sp->ms, pid);
		unwinder__flush(sp->uw);
		return sp;
	case MODULES_REPLACED:
		if (n <= 16 && !space_sampled_in(s, sp, ranges, n)) {
			modules__refresh(sp->ms, pid);
			unwinder__flush(sp->uw);
			s->rep.stats.replaced_in_place++;
			return sp;
		}
		s->rep.stats.generations++;
		return new_space(s, id, pid);
	default:
		return NULL;
	}
}

/* A PC fell outside every known module: a library dlopen()ed since the
 * last read of the maps.  Re-read them, but not on every miss (JIT code
 * is outside every module for good). */
struct space *sampler_refresh_space(struct sampler *s, struct space *sp, uint32_t id, pid_t pid)
{
	uint64_t now = now_ns();
	uint64_t interval = now - sp->born_ns < YOUNG_NS ? YOUNG_REFRESH_INTERVAL_NS :
							   REFRESH_INTERVAL_NS;
	if (now - sp->last_refresh_ns < interval)
		return NULL;
	return rescan(s, sp, id, pid);
}

/* A library can also be swapped for another at the same address, where no
 * PC falls outside every module: the maps of a space being sampled are
 * compared with its table every SCAN_INTERVAL_NS. */
struct space *sampler_due_scan(struct sampler *s, struct space *sp, uint32_t id, pid_t pid)
{
	if (now_ns() - sp->last_scan_ns < SCAN_INTERVAL_NS)
		return sp;
	struct space *now = rescan(s, sp, id, pid);
	return now ? now : sp;
}

static void free_rt_states(struct space *sp)
{
	for (size_t i = 0; i < SAMPLER_RUNTIMES_MAX; i++)
		free(sp->rt_state[i]);
}

/* Module tables for the processes there are now, read before the first
 * tick: attaching is not sampling time. */
void sampler_read_spaces(struct sampler *s)
{
	struct target_process procs[256];
	size_t n = target__processes(s->t, procs, 256);
	for (size_t i = 0; i < n; i++)
		sampler_space_for(s, procs[i].space, procs[i].pid);
}

void sampler_free_spaces(struct sampler *s, void (*forget)(void *arg, uint32_t space), void *arg)
{
	/* The generations no stack names and no space has as its current. */
	unsigned char *used = xcalloc(s->sp.nspaces + 1, 1);
	for (size_t i = 0; i < s->sp.ngen; i++)
		if (s->sp.gen[i] != UINT32_MAX)
			used[s->sp.gen[i]] = 1;
	for (size_t id = 0; id < stacks__unique(s->st); id++) {
		struct stack k;
		if (!stacks__exists(s->st, id))
			continue;
		stacks__get(s->st, id, &k);
		if (k.space < s->sp.nspaces)
			used[k.space] = 1;
	}
	for (size_t i = 0; i < s->sp.nspaces; i++) {
		if (used[i] || !s->sp.spaces[i].ms)
			continue;
		unwinder__free(s->sp.spaces[i].uw);
		modules__free(s->sp.spaces[i].ms);
		free_rt_states(&s->sp.spaces[i]);
		s->sp.spaces[i] = (struct space){ .index = (uint32_t)i };
		s->sp.free_spaces = xrealloc(s->sp.free_spaces, (s->sp.nfree_spaces + 1) * sizeof(*s->sp.free_spaces));
		s->sp.free_spaces[s->sp.nfree_spaces++] = (uint32_t)i;
		s->sp.spaces_freed++;
		if (forget)
			forget(arg, (uint32_t)i);
	}
	free(used);
}

void sampler_spaces_free(struct sampler *s)
{
	for (size_t i = 0; i < s->sp.nspaces; i++) {
		unwinder__free(s->sp.spaces[i].uw);
		modules__free(s->sp.spaces[i].ms);
		free_rt_states(&s->sp.spaces[i]);
	}
	free(s->sp.spaces);
	free(s->sp.free_spaces);
	free(s->sp.gen);
}
