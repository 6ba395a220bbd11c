/* The runtime views (sample/runtime.h) of the sampled processes: opened,
 * ticked and closed at a tick's start, with no thread held; and the
 * services the views use to count their own samples. */
#include "sample/internal.h"
#include "sample/runtime.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util/timeutil.h"
#include "util/xalloc.h"

const struct rt_ops *const runtimes[] = { &rt_go, &rt_python, &rt_php, &rt_ruby, &rt_java, NULL };
_Static_assert(sizeof(runtimes) / sizeof(*runtimes) - 1 <= SAMPLER_RUNTIMES_MAX,
	       "struct space keeps SAMPLER_RUNTIMES_MAX runtimes' states");

void *sampler_rt_space(const struct space *sp, const struct rt_ops *ops)
{
	for (size_t i = 0; runtimes[i]; i++)
		if (runtimes[i] == ops)
			return sp->rt_state[i];
	return NULL;
}

struct view *sampler_view_of(struct sampler *s, pid_t pid)
{
	for (size_t i = 0; i < s->vw.nviews; i++)
		if (s->vw.views[i].pid == pid)
			return &s->vw.views[i];
	return NULL;
}

static size_t ops_index(const struct rt_ops *ops)
{
	size_t i = 0;
	while (runtimes[i] && runtimes[i] != ops)
		i++;
	return i;
}

static void add_note(struct sampler *s, const char *note)
{
	for (size_t i = 0; *note && i < s->rep.nnotes; i++)
		if (!strcmp(s->rep.notes[i], note))
			return;         /* said once (a program looked at again) */
	if (*note && s->rep.nnotes < MAX_NOTES)
		s->rep.notes[s->rep.nnotes++] = xstrdup(note);
}

/* Adds view V's figures into TOTAL. */
static void add_figures(struct sampler_runtime *total, const struct view *v)
{
	struct rt_stat st[RT_MAX_STATS];
	size_t n = v->ops->stats(v->v, st);
	total->name = v->ops->name;
	total->unit = v->ops->unit;
	total->units = v->ops->units;
	total->n = n;
	for (size_t i = 0; i < n; i++) {
		total->stat[i].key = st[i].key;
		total->stat[i].words = st[i].words;
		total->stat[i].value += st[i].value;
	}
}

/* Frees view I (its process exited or exec'd, or it gave up), its
 * figures kept. */
void sampler_close_view(struct sampler *s, size_t i)
{
	struct view *v = &s->vw.views[i];
	size_t k = ops_index(v->ops);
	if (k < SAMPLER_RUNTIMES)
		add_figures(&s->vw.rt_done[k], v);
	target__set_reader(s->t, v->pid, v->space, NULL, NULL);
	v->ops->free(v->v);
	s->vw.views[i] = s->vw.views[--s->vw.nviews];
}

/* Whether process PID's program (space ID) was looked at already, and is
 * not due for another look; marks it.  A program without a view is looked
 * at again LOOK_AGAIN times, 0.25 s, 0.5 s, 1 s ... after: a process just
 * started or exec'd may not have loaded its libraries yet. */
#define LOOK_AGAIN 5
static bool looked_at(struct sampler *s, pid_t pid, uint32_t id)
{
	uint64_t now = now_ns();
	for (size_t i = 0; i < s->vw.nlooked; i++)
		if (s->vw.looked[i].pid == pid) {
			if (s->vw.looked[i].space == id) {
				if (s->vw.looked[i].tries >= LOOK_AGAIN || now < s->vw.looked[i].again_ns ||
				    sampler_view_of(s, pid))
					return true;
				s->vw.looked[i].again_ns = now + (250000000ull << s->vw.looked[i].tries++);
				return false;
			}
			s->vw.looked[i].space = id;        /* exec'd: a new program */
			s->vw.looked[i].tries = 0;
			s->vw.looked[i].again_ns = now + 250000000ull;
			return false;
		}
	if (s->vw.nlooked == s->vw.looked_cap) {
		s->vw.looked_cap = s->vw.looked_cap ? 2 * s->vw.looked_cap : 16;
		s->vw.looked = xrealloc(s->vw.looked, s->vw.looked_cap * sizeof(*s->vw.looked));
	}
	s->vw.looked[s->vw.nlooked].pid = pid;
	s->vw.looked[s->vw.nlooked].space = id;
	s->vw.looked[s->vw.nlooked].tries = 0;
	s->vw.looked[s->vw.nlooked++].again_ns = now + 250000000ull;
	return false;
}

/* Whether the frames-only view NAME was turned off (cfg.frames_off). */
static bool turned_off(const struct sampler *s, const char *name)
{
	size_t n = strlen(name);
	for (const char *p = s->cfg.frames_off; p && *p;) {
		const char *e = strchr(p, ',');
		size_t k = e ? (size_t)(e - p) : strlen(p);
		if (k == n && !strncmp(p, name, n))
			return true;
		p = e ? e + 1 : p + k;
	}
	return false;
}

/* At a tick's start, no thread held: views closed for processes gone or
 * exec'd, opened for processes (and programs) not looked at yet, then
 * each view's tick. */
void sampler_views_tick(struct sampler *s)
{
	struct target_process procs[256];
	size_t n = target__processes(s->t, procs, 256);
	for (size_t i = 0; i < s->vw.nviews;) {
		size_t k = 0;
		while (k < n && (procs[k].pid != s->vw.views[i].pid || procs[k].space != s->vw.views[i].space))
			k++;
		if (k == n)
			sampler_close_view(s, i);       /* its process exited or exec'd */
		else
			i++;
	}
	for (size_t k = 0; (s->cfg.runtime_views || !s->cfg.no_interp_frames) && k < n; k++) {
		if (looked_at(s, procs[k].pid, procs[k].space))
			continue;
		char note[320] = "";
		for (const struct rt_ops *const *o = runtimes; *o; o++) {
			if ((*o)->frames_only ? s->cfg.no_interp_frames || turned_off(s, (*o)->name) :
			    !s->cfg.runtime_views)
				continue;
			if (s->vw.next_rt_slot + RT_SLOTS < s->vw.next_rt_slot)
				break;          /* no slot left (never: 2^32 / 8192 views) */
			struct rt_view *rv = (*o)->open(s, procs[k].pid, procs[k].space,
							RT_SLOT_BASE + s->vw.next_rt_slot, note, sizeof(note));
			add_note(s, note);
			if (!rv)
				continue;
			s->vw.next_rt_slot += RT_SLOTS;
			if (s->vw.nviews == s->vw.views_cap) {
				s->vw.views_cap = s->vw.views_cap ? 2 * s->vw.views_cap : 4;
				s->vw.views = xrealloc(s->vw.views, s->vw.views_cap * sizeof(*s->vw.views));
			}
			s->vw.views[s->vw.nviews++] = (struct view){ *o, rv, procs[k].pid, procs[k].space };
			/* A view opened after the process's first ticks (launch
			 * mode: libpython loads later): a thread blocked since
			 * then would be counted again at the stack it was
			 * counted at without the view, for as long as it stays
			 * blocked.  Its next capture is taken anew. */
			target__forget(s->t, procs[k].pid);
			break;
		}
	}
	for (size_t i = 0; i < s->vw.nviews;) {
		char note[320] = "";
		struct view *v = &s->vw.views[i];
		if (v->ops->tick(v->v, s, note, sizeof(note)) < 0) {
			/* It gave up: its threads are sampled from their next
			 * capture, counted as any thread's. */
			add_note(s, note);
			target__forget(s->t, v->pid);
			sampler_close_view(s, i);
			continue;
		}
		add_note(s, note);
		i++;
	}
}

/* ---- services to the runtime views ------------------------------------------ */

void sampler_name_thread(struct sampler *s, uint32_t slot, pid_t pid, pid_t tid, const char *key,
			 const char *value)
{
	if (slot >= RT_SLOT_BASE)
		return;                 /* a unit's, not a thread's */
	if (slot >= s->vw.nrt_names) {
		if (!value)
			return;
		size_t n = s->vw.nrt_names ? s->vw.nrt_names : 64;
		while (n <= slot)
			n *= 2;
		s->vw.rt_names = xrealloc(s->vw.rt_names, n * sizeof(*s->vw.rt_names));
		memset(s->vw.rt_names + s->vw.nrt_names, 0, (n - s->vw.nrt_names) * sizeof(*s->vw.rt_names));
		s->vw.nrt_names = n;
	}
	/* As it was (the usual case): "KEY=VALUE" compared in place. */
	const char *old = s->vw.rt_names[slot].kv;
	size_t klen = strlen(key);
	if (s->vw.rt_names[slot].pid == pid && s->vw.rt_names[slot].tid == tid &&
	    (value ? old && !strncmp(old, key, klen) && old[klen] == '=' &&
		     !strncmp(old + klen + 1, value, 255 - klen - 1) : !old))
		return;
	char kv[256];
	if (value)
		snprintf(kv, sizeof(kv), "%s=%s", key, value);
	free(s->vw.rt_names[slot].kv);
	s->vw.rt_names[slot].pid = pid;
	s->vw.rt_names[slot].tid = tid;
	s->vw.rt_names[slot].kv = value ? xstrdup(kv) : NULL;
}

enum unwind_status sampler_unwind_saved(struct sampler *s, pid_t pid, uint32_t id,
					const struct user_regs_struct *regs, const unsigned char *stack,
					size_t len, size_t want, uint64_t **pcs, size_t *depth,
					uint32_t *space)
{
	struct space *sp = sampler_due_scan(s, sampler_space_for(s, id, pid), id, pid);
	struct unwind_input in = { regs, false, regs->rsp, stack, len, want, NULL, 0 };
	*pcs = s->pcs;
	*depth = 0;
	*space = sp->index;
	if (!sp->uw)
		return UNWIND_PARTIAL;
	/* Room for the truncated mark sampler_count() may add. */
	return unwinder__unwind(sp->uw, &in, s->pcs, (size_t)s->cfg.max_depth, depth);
}

void sampler_views_keep(struct sampler *s)
{
	for (size_t i = 0; i < s->vw.nviews; i++)
		s->vw.views[i].ops->keep(s->vw.views[i].v, s->st);
}

void sampler_views_stats(const struct sampler *s, struct sampler_stats *out)
{
	/* Each runtime's figures: its views freed, and those open. */
	out->nrt = 0;
	for (size_t k = 0; runtimes[k] && k < SAMPLER_RUNTIMES; k++) {
		struct sampler_runtime total = s->vw.rt_done[k];
		for (size_t i = 0; i < s->vw.nviews; i++)
			if (s->vw.views[i].ops == runtimes[k])
				add_figures(&total, &s->vw.views[i]);
		if (total.name)
			out->rt[out->nrt++] = total;
	}
}
