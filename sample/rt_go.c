#include "sample/internal.h"
#include "sample/runtime.h"

#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "goroutine/curg.h"
#include "goroutine/goroutines.h"
#include "module/modules.h"
#include "profile/stacks.h"
#include "profile/timeline.h"
#include "unwind/unwinder.h"
#include "util/remote.h"
#include "util/xalloc.h"

/* The Go runtime's view (sample/runtime.h): a Go program's goroutines.
 * A Go program runs thousands of goroutines on a handful of threads, most
 * of them parked in runtime.futex or runtime.epollwait: the threads say
 * nothing of the goroutines waiting on a lock or a channel.  With
 * cfg.runtime_views the sampling unit is the goroutine, as in fgprof and
 * runtime.GoroutineProfile: at every tick every user goroutine is counted
 * once.  A running one is its thread's sample (taken as today: the stack
 * ends at runtime.goexit); the others are unwound from the context they
 * will resume from (g.sched: PC, SP, BP) over a copy of their stack, read
 * while the program runs (goroutine/goroutines.h): no thread stops for
 * them.  The record is read again after the copy; a goroutine that moved
 * in between is read once more, then counted lost.  One that is still
 * waiting where it waited at its last sample (same status, reason, SP,
 * PC and stack) has the same stack: it is counted again without a copy. */

#define GO_MAX_SLOTS 4096               /* then one slot per goroutine function */
_Static_assert(GO_MAX_SLOTS + 256 <= RT_SLOTS, "a view's slots");
#define GO_STACK_MAX (256u << 10)
#define GO_SWEEP_TICKS 64
#define GO_PROBE_STACK (16u << 10)  /* of a goroutine behind a system stack, copied in the stop */

struct go_entry {
	int64_t goid;                   /* 0: empty */
	uint64_t g, sp, pc, lo, hi;
	uint32_t status;
	uint8_t reason;
	int64_t id;                     /* the stack counted last (reusable), or -1 */
	int rooted;
	uint32_t slot;
	uint64_t labels;                /* the pprof label set its slot was made for */
	uint64_t seen;                  /* the scan that last saw it */
};

/* What the last scan decided for the g at an index of allgs: its record
 * unchanged, the same holds (goroutines__scan's .unchanged). */
enum { GX_NONE, GX_SKIP, GX_REUSE, GX_RUNNING };
struct go_idx {
	uint8_t kind;
	uint8_t rooted;                 /* GX_REUSE: the stack reached its root */
	int64_t goid;
	uint32_t slot;
	int64_t id;                     /* GX_REUSE: the stack id */
	pid_t tid;                      /* GX_RUNNING: its thread */
	uint64_t g;                     /* GX_RUNNING: its g */
};

struct goview {
	struct goroutines *gs;
	struct go_idx *idx;             /* by allgs index */
	size_t nidx;
	pid_t pid;
	uint32_t space;                 /* the target's id of its address space */
	struct go_entry *tab;           /* open addressing by goid */
	size_t cap, n;
	uint64_t scan;
	struct { pid_t tid; uint32_t slot; uint64_t g; } *running;      /* this tick's */
	size_t nrunning, running_cap;
	uint32_t nslots;
	struct { const char *fn, *creator; char *labels; uint32_t slot; } pooled[256];
	size_t npooled;
	uint32_t go_running;            /* stacks__rt_state("running") */
	int64_t again_id;               /* this tick's run of reused stacks of one id */
	uint64_t again_n;
	unsigned char *stack;
	char comm[64];
	uint32_t counted;               /* goroutines counted at this tick */
	uint32_t bad_ticks;             /* ticks in a row that counted none */
	int scan_err;                   /* the last scan's error, or 0 */
	int dups_noted;                 /* the note on repeated allgs entries was made */
	uint32_t slot_base;             /* its first label slot */
	uint32_t again_slot;            /* again_id's slot and how its unwind ended */
	bool again_rooted;
	/* Its figures: goroutines seen, samples of waiting ones (from
	 * g.sched), of those counted again unchanged, of those from a record
	 * not read at that tick (the budget), of those lost (changed while
	 * read, twice). */
	uint64_t seen, waiting, reused, carried, lost;
};

/* Ticks in a row whose scan counted no goroutine before the view gives
 * up on the program (a Go program always has its main goroutine). */
#define GO_BAD_TICKS 3

static size_t go_hash(int64_t goid, size_t cap)
{
	return (size_t)(((uint64_t)goid * 0x9e3779b97f4a7c15ull) >> 20) & (cap - 1);
}

/* Moves the entries into a table of CAP slots, leaving out those no scan
 * has seen since scan SINCE (ended goroutines). */
static void go_rebuild(struct goview *v, size_t cap, uint64_t since)
{
	struct go_entry *old = v->tab;
	size_t oldcap = v->cap;
	v->tab = xcalloc(cap, sizeof(*v->tab));
	v->cap = cap;
	v->n = 0;
	for (size_t i = 0; i < oldcap; i++) {
		if (!old[i].goid || old[i].seen < since)
			continue;
		size_t j = go_hash(old[i].goid, cap);
		while (v->tab[j].goid)
			j = (j + 1) & (cap - 1);
		v->tab[j] = old[i];
		v->n++;
	}
	free(old);
}

/* Goroutine GOID's entry, made if it has none. */
static struct go_entry *go_find(struct goview *v, int64_t goid)
{
	if ((v->n + 1) * 2 > v->cap)
		go_rebuild(v, v->cap ? v->cap * 2 : 1024, 0);
	size_t j = go_hash(goid, v->cap);
	while (v->tab[j].goid && v->tab[j].goid != goid)
		j = (j + 1) & (v->cap - 1);
	if (v->tab[j].goid != goid) {
		v->n++;
		v->tab[j] = (struct go_entry){ .goid = goid, .id = -1, .slot = UINT32_MAX };
	}
	return &v->tab[j];
}

/* The function holding the go statement that made goroutine R (Go's
 * "created by"), or NULL: none for the main goroutine, which the runtime's
 * assembly starts, as in Go's own tracebacks. */
static const char *go_creator(struct goview *v, const struct go_rec *r)
{
	if (r->gopc == 0 || r->goid == 1)
		return NULL;
	return goroutines__func_name(v->gs, r->gopc - 1);      /* a return address */
}

static bool same_name(const char *a, const char *b)
{
	return a == b || (a && b && strcmp(a, b) == 0);
}

/* The label slot of goroutine E: its own (label: its function, creator,
 * id and pprof labels) for the first GO_MAX_SLOTS, then one per goroutine
 * function, creator and pprof labels.  Names are looked up once per slot,
 * not per sample; a goroutine whose pprof labels change (pprof.Do) gets a
 * slot for each set. */
static uint32_t go_slot(struct sampler *s, struct goview *v, struct go_entry *e,
			const struct go_rec *r)
{
	if (e->slot != UINT32_MAX)
		return e->slot;
	const char *fn = goroutines__func_name(v->gs, r->startpc);
	const char *creator = go_creator(v, r);
	const char *labels = goroutines__labels(v->gs, r->labels);
	fn = fn ? fn : "?";
	struct stack_label l = { v->pid, 0, e->goid, v->comm, fn, creator, NULL, "goroutine", labels };
	e->labels = r->labels;
	if (v->nslots < GO_MAX_SLOTS) {
		e->slot = v->slot_base + v->nslots++;
		stacks__set_label(s->st, e->slot, &l);
		return e->slot;
	}
	size_t i = 0;
	while (i < v->npooled && (strcmp(v->pooled[i].fn, fn) != 0 ||
				  !same_name(v->pooled[i].creator, creator) ||
				  !same_name(v->pooled[i].labels, labels)))
		i++;
	if (i == v->npooled && v->npooled < 256) {
		/* Both names point into the program's .gopclntab, kept
		 * mapped; the labels are the view's copy. */
		v->pooled[i].fn = fn;
		v->pooled[i].creator = creator;
		v->pooled[i].labels = labels ? xstrdup(labels) : NULL;
		v->pooled[i].slot = v->slot_base + GO_MAX_SLOTS + (uint32_t)i;
		l.unit_id = -1; /* "other goroutines" */
		stacks__set_label(s->st, v->pooled[i].slot, &l);
		v->npooled++;
	}
	e->slot = i < v->npooled ? v->pooled[i].slot : v->pooled[255].slot;
	return e->slot;
}

static const char *go_state_name(const struct goview *v, const struct go_rec *r)
{
	const char *reason;
	switch (r->status) {
	case GO_RUNNABLE: return "runnable";
	case GO_PREEMPTED: return "runnable";
	case GO_SYSCALL: return "syscall";
	case GO_COPYSTACK: return "copystack";
	case GO_WAITING:
		reason = goroutines__reason(v->gs, r->reason);
		return reason ? reason : "waiting";
	default: return "unknown";
	}
}

static bool go_same(const struct go_rec *a, const struct go_rec *b)
{
	return a->goid == b->goid && a->status == b->status && a->reason == b->reason &&
	       a->sp == b->sp && a->pc == b->pc && a->lo == b->lo && a->hi == b->hi;
}

/* Copies the stack of the goroutine R describes and checks, by reading its
 * record again, that it did not move meanwhile.  Returns the bytes copied,
 * or 0 (then *R holds the record read again). */
static size_t go_copy(struct goview *v, struct go_rec *r)
{
	if (r->sp < r->lo || r->sp >= r->hi || r->pc == 0)
		return 0;
	size_t len = r->hi - r->sp < GO_STACK_MAX ? (size_t)(r->hi - r->sp) : GO_STACK_MAX;
	struct go_rec again;
	if (remote__read(v->pid, r->sp, v->stack, len) < 0 ||
	    goroutines__read(v->gs, r->g, &again) < 0)
		return 0;
	bool same = go_same(r, &again);
	*r = again;
	return same ? len : 0;
}

/* Counts one waiting (runnable, in a system call...) goroutine. */
static void go_take(struct sampler *s, struct goview *v, const struct go_rec *rec,
		    struct go_entry *e)
{
	struct go_rec r = *rec;
	uint32_t slot = go_slot(s, v, e, &r);
	if (e->id >= 0 && go_same(&r, &(struct go_rec){ .goid = e->goid, .status = e->status,
				       .reason = e->reason, .sp = e->sp, .pc = e->pc, .lo = e->lo,
				       .hi = e->hi })) {
		sampler_count_again(s, e->id, slot, 1, e->rooted);
		v->reused++;
		v->waiting++;
		v->counted++;
		return;
	}
	size_t len = go_copy(v, &r);
	if (!len && r.status != GO_DEAD && r.status != GO_RUNNING)
		len = go_copy(v, &r);   /* it moved: once more */
	if (!len) {
		v->lost++;
		e->id = -1;
		return;
	}
	struct user_regs_struct regs = { 0 };
	regs.rip = r.pc;
	regs.rsp = r.sp;
	regs.rbp = r.bp;
	/* The whole stack up to g.stack.hi was copied unless GO_STACK_MAX cut
	 * it: only then is a read past the copy a stack too short (marked
	 * [truncated]). */
	uint64_t *pcs;
	size_t depth;
	uint32_t space;
	enum unwind_status st = sampler_unwind_saved(s, v->pid, v->space, &regs, v->stack, len,
						     len == GO_STACK_MAX ? len : len + 1, &pcs,
						     &depth, &space);
	struct stack k = { .slot = slot, .space = space, .state = r.status == GO_RUNNABLE ||
				   r.status == GO_PREEMPTED ? 'R' : 'S', .syscall = -1,
			   .rt_state = stacks__rt_state(s->st, go_state_name(v, &r)),
			   .pcs = pcs, .n = depth, .count = 1 };
	int64_t id = sampler_count(s, &k, st);
	v->waiting++;
	v->counted++;
	bool reuse = id >= 0 && (st == UNWIND_COMPLETE || st == UNWIND_TRUNCATED);
	e->id = reuse ? id : -1;
	e->rooted = st == UNWIND_COMPLETE;
	e->g = r.g, e->sp = r.sp, e->pc = r.pc, e->lo = r.lo, e->hi = r.hi;
	e->status = r.status, e->reason = r.reason;
}

static void go_running_add(struct goview *v, pid_t tid, uint32_t slot, uint64_t g)
{
	if (v->nrunning == v->running_cap) {
		v->running_cap = v->running_cap ? v->running_cap * 2 : 16;
		v->running = xrealloc(v->running, v->running_cap * sizeof(*v->running));
	}
	v->running[v->nrunning].tid = tid;
	v->running[v->nrunning].g = g;
	v->running[v->nrunning++].slot = slot;
}

/* Counts the run of reused stacks go_again() has gathered. */
static void go_again_flush(struct sampler *s, struct goview *v)
{
	if (v->again_n)
		sampler_count_again(s, v->again_id, v->again_slot, v->again_n, v->again_rooted);
	v->again_n = 0;
}

/* A goroutine whose record is as at the last scan: what was decided then
 * holds.  Returns false when it must be looked at again. */
static bool go_again(struct sampler *s, struct goview *v, const struct go_idx *x)
{
	switch (x->kind) {
	case GX_SKIP:
		return true;
	case GX_RUNNING:
		go_running_add(v, x->tid, x->slot, x->g);
		return true;
	case GX_REUSE:
		/* Thousands of goroutines parked alike share a stack: one
		 * count for a run of them. */
		if (v->again_n && v->again_id != x->id)
			go_again_flush(s, v);
		v->again_id = x->id;
		v->again_slot = x->slot;
		v->again_rooted = x->rooted;
		v->again_n++;
		v->reused++;
		v->waiting++;
		v->counted++;
		return true;
	default:
		return false;
	}
}

/* Looks at goroutine R (the g at index X) and decides for the next scans. */
static void go_look(struct sampler *s, struct goview *v, const struct go_rec *r, struct go_idx *x)
{
	x->kind = GX_SKIP;
	if (r->status == GO_DEAD || r->status == GO_IDLE || r->goid <= 0)
		return;
	if (!s->cfg.go_system && goroutines__is_system(v->gs, r))
		return;
	struct go_entry *e = go_find(v, r->goid);
	e->seen = v->scan;
	if (e->slot == UINT32_MAX && x->goid == r->goid && x->slot != UINT32_MAX) {
		e->slot = x->slot;      /* swept while it did not change */
		e->labels = r->labels;
	}
	if (e->slot != UINT32_MAX && e->labels != r->labels)
		e->slot = UINT32_MAX;   /* pprof labels set since: a slot of its own */
	if (x->goid != r->goid)
		v->seen++;              /* a new goroutine at this g */
	x->goid = r->goid;
	if (r->status == GO_RUNNING) {
		pid_t tid = goroutines__m_tid(v->gs, r->m);
		x->kind = GX_NONE;
		if (!tid)
			return;
		x->slot = go_slot(s, v, e, r);
		x->tid = tid;
		x->g = r->g;
		x->kind = GX_RUNNING;
		e->id = -1;
		go_running_add(v, tid, x->slot, r->g);
		return;
	}
	go_take(s, v, r, e);
	x->slot = e->slot;
	x->id = e->id;
	x->rooted = (uint8_t)e->rooted;
	x->kind = e->id >= 0 ? GX_REUSE : GX_NONE;
}

/* A program whose goroutine list cannot be read (allglen past any bound,
 * g pointers that lead nowhere: a runtime that lies, or memory we misread)
 * would give an empty profile: after GO_BAD_TICKS ticks in a row that
 * counted no goroutine, the view is dropped, a note says why, and the
 * program's threads are sampled instead, from their next capture on. */
/* -1, with NOTE, when the view gives up (see above). */
static int go_check_readable(struct goview *v, char *note, size_t notelen)
{
	if (v->counted) {
		v->bad_ticks = 0;
		return 0;
	}
	if (++v->bad_ticks < GO_BAD_TICKS)
		return 0;
	char why[96];
	snprintf(why, sizeof(why), "runtime.allglen is %llu, above the %u read",
		 (unsigned long long)goroutines__listed(v->gs), GOROUTINES_MAX);
	snprintf(note, notelen, "PID %d is a Go program, but its goroutine list cannot be read "
		 "(%s): sampling its threads, not its goroutines", (int)v->pid,
		 v->scan_err == -EINVAL ? why :
		 v->scan_err < 0 ? strerror(-v->scan_err) : "no goroutine found in it");
	return -1;
}

/* A tick's goroutines: the waiting ones counted here, the running ones
 * noted (by thread) for their thread's capture. */
static int go_tick(struct rt_view *rv, struct sampler *s, char *note, size_t notelen)
{
	struct goview *v = (struct goview *)rv;
	const struct go_rec *recs;
	size_t n;
	v->nrunning = 0;
	v->counted = 0;
	if ((v->scan_err = goroutines__scan(v->gs, &recs, &n)) < 0)
		return go_check_readable(v, note, notelen);
	if (n > v->nidx) {
		v->idx = xrealloc(v->idx, n * sizeof(*v->idx));
		for (size_t i = v->nidx; i < n; i++)
			v->idx[i] = (struct go_idx){ .kind = GX_NONE, .slot = UINT32_MAX };
		v->nidx = n;
	}
	v->scan++;
	v->carried += goroutines__carried(v->gs);
	uint64_t dups = goroutines__duplicates(v->gs);
	if (dups && !v->dups_noted) {
		snprintf(note, notelen, "PID %d: runtime.allgs lists %llu of its %llu entries for a "
			 "goroutine it lists already (a runtime rewritten, or lying): each goroutine is "
			 "counted once", (int)v->pid, (unsigned long long)dups, (unsigned long long)n);
		v->dups_noted = 1;
	}
	for (size_t i = 0; i < n; i++) {
		if (!recs[i].read) {
			v->idx[i].kind = GX_NONE;
			continue;
		}
		if (recs[i].unchanged && go_again(s, v, &v->idx[i]))
			continue;
		go_look(s, v, &recs[i], &v->idx[i]);
	}
	go_again_flush(s, v);
	if (v->scan % GO_SWEEP_TICKS == 0 && v->cap && v->scan > 2)
		go_rebuild(v, v->cap, v->scan - 2);     /* drops the ended */
	v->counted += (uint32_t)v->nrunning;
	return go_check_readable(v, note, notelen);
}

/* What the Go view keeps of each address space (rt_ops.space_size), with
 * or without a view of its processes: the runtime's curg layout, and the
 * probe the target was given. */
struct go_space {
	struct gocurg curg;             /* its Go runtime's layout */
	int curg_known;                 /* 1: curg read, -1: none, 0: not looked at */
	uint32_t curg_probe;            /* the target reads it at each stop, and this
					   much of its stack (0: not yet) */
};

/* The layout of the Go runtime that PC (in runtime.systemstack) is in,
 * read from its code once per address space (goroutine/curg.h). */
static const struct gocurg *curg_layout(struct space *sp, struct go_space *g, uint64_t pc)
{
	if (g->curg_known == 0) {
		const struct module *m = modules__find(sp->ms, pc);
		unsigned char code[160];
		uint64_t lo, hi;
		size_t len;
		g->curg_known = -1;
		/* and gosave_systemstack_switch's, where systemstack calls it:
		 * where the goroutine's frame pointer is saved (gobuf.bp) */
		if (m && module__go_systemstack(m, &lo, &hi) == 0 &&
		    (len = hi - lo < sizeof(code) ? (size_t)(hi - lo) : sizeof(code)) &&
		    module__read(m, lo, code, len) == 0 && gocurg__layout(code, len, &g->curg) == 0 &&
		    module__read(m, lo + (uint64_t)(int64_t)g->curg.save_at, code, 32) == 0 &&
		    gocurg__save(code, 32, &g->curg) == 0)
			g->curg_known = 1;
	}
	return g->curg_known > 0 ? &g->curg : NULL;
}

/* Has the target read the goroutine a Go thread on its system stack works
 * for, and STACK bytes of its stack, while the thread is stopped.  The
 * goroutine does not run while its M is on the system stack for it, but
 * it may as soon as the M is resumed. */
static void set_probe(struct sampler *s, struct go_space *g, const struct capture *c,
		      const struct gocurg *l, uint32_t stack)
{
	/* every layout is of Go 1.17+, whose register ABI keeps g in %r14 */
	struct target_probe p = { l->tls_g, { l->g_m, l->m_curg }, (uint32_t)gocurg__g_len(l),
				  l->g_sched, 8, stack, 1 };
	if (target__set_probe(s->t, c->pid, c->space, &p) == 0)
		g->curg_probe = stack;
}

/* A Go program's space: its probe set at once, from its runtime's own
 * code, so that the first sample of a thread on its system stack (a GC
 * assist, a stack growth) goes on to its goroutine too; without it that
 * sample ended at runtime.systemstack, and with perf capture so did every
 * one until the next tick (4 of 9 GC assists on a busy machine). */
static void go_space(struct sampler *s, struct space *sp, uint32_t id, pid_t pid)
{
	const struct module *m = modules__main(sp->ms);
	struct go_space *g = sampler_rt_space(sp, &rt_go);
	const struct gocurg *l;
	uint64_t lo, hi;
	if (!s->t || !m || !g || module__go_systemstack(m, &lo, &hi) != 0 ||
	    !(l = curg_layout(sp, g, lo)))
		return;
	struct capture c = { .pid = pid, .space = id };
	if (!g->curg_probe)
		set_probe(s, g, &c, l, GO_PROBE_STACK);
}

/* The thread of capture C ended on its system stack (runtime.systemstack,
 * runtime.morestack): its stack, s->pcs[0 .. *DEPTH), is the system
 * stack's, and the frames of the goroutine it works for, the ones that
 * called it, are unwound from the context the goroutine saved when it
 * switched (g.sched: systemstack_switch for systemstack, the function that
 * needed a larger stack for morestack) and put after them, as Go's own
 * tracebacks and CPU profiler do.  That goroutine is the M's curg, found
 * through the thread's TLS (goroutine/curg.h) with or without the
 * goroutine view, and read while the thread was stopped: the process's
 * capture probe (target__set_probe), given to it at its first such
 * sample.  Until then, or for a thread sampled without a stop, it is read
 * now, after the thread was resumed, and checked against the capture: the
 * function systemstack called (newstack, for morestack) saved the RBP it
 * was called with, the goroutine's, just below JUMP_SP (the systemstack
 * frame's SP), and the switch saved the same RBP in g.sched.bp; a
 * goroutine whose saved RBP is another has moved on since the capture, and
 * the sample is not made whole with frames from another moment.  Its
 * stack is copied, then its saved context read again: it must not have
 * moved meanwhile either (a goroutine does not run while its M is on the
 * system stack for it, so a probe's context holds).  Returns how the
 * goroutine's part ended: UNWIND_PARTIAL when it could not be read,
 * UNWIND_NEED_REGS for a capture made without a stop. */
static enum unwind_status go_jumped(struct sampler *s, const struct capture *c, uint32_t space,
				    uint64_t jump_sp, size_t *depth)
{
	struct space *sp = &s->sp.spaces[space];
	struct go_space *g = sampler_rt_space(sp, &rt_go);
	const struct gocurg *l;
	size_t max = (size_t)s->cfg.max_depth, n = 0;
	struct go_rec r, again;
	if (*depth == 0 || *depth >= max || !sp->uw || !g ||
	    !(l = curg_layout(sp, g, s->pcs[*depth - 1])))
		return UNWIND_PARTIAL;
	if (!g->curg_probe)
		set_probe(s, g, c, l, GO_PROBE_STACK);
	if (c->probe_ptrs == 3 && c->probe_ptr[2] == 0)
		return UNWIND_COMPLETE;         /* no goroutine: see below */
	if (c->probe_len) {
		int e = gocurg__parse(l, c->probe_ptr[0], c->probe_ptr[1], c->probe_ptr[2], c->probe,
				      c->probe_len, &r);
		/* No goroutine: the M has dropped it (a preempted goroutine's
		 * morestack -> newstack -> gopreempt_m -> schedule leaves the
		 * M in the scheduler, as mcall does); the system stack is
		 * the whole stack, as Go's tracebacks see it. */
		if (e == -ESRCH)
			return UNWIND_COMPLETE;
		if (e < 0)
			return UNWIND_PARTIAL;
	} else {
		uint64_t saved_bp, at = jump_sp - 16;
		/* A blocked capture has no FS base (nor one whose other
		 * registers came from an earlier stop): a stop gives it. */
		if (c->partial_regs || !c->regs.fs_base)
			return UNWIND_NEED_REGS;
		if (jump_sp < 16 || at < c->stack_addr || at - c->stack_addr + 8 > c->stack_len ||
		    gocurg__read(c->pid, l, c->regs.fs_base, &r) < 0)
			return UNWIND_PARTIAL;
		memcpy(&saved_bp, c->stack + (at - c->stack_addr), 8);
		if (saved_bp != r.bp)
			return UNWIND_PARTIAL;
	}
	const unsigned char *stack = c->probe_stack;
	size_t len = c->probe_len ? c->probe_stack_len : 0, want = len;
	if (!len) {
		/* Not copied while stopped: copied now, and the context read
		 * again after. */
		if (!s->jump_stack)
			s->jump_stack = xmalloc(GO_STACK_MAX);
		stack = s->jump_stack;
		len = r.hi - r.sp < GO_STACK_MAX ? (size_t)(r.hi - r.sp) : GO_STACK_MAX;
		want = len == GO_STACK_MAX ? len : len + 1;
		unsigned char gb[TARGET_PROBE_MAX];
		if (remote__read(c->pid, r.sp, s->jump_stack, len) < 0 ||
		    remote__read(c->pid, r.g, gb, gocurg__g_len(l)) < 0 ||
		    gocurg__parse(l, 0, r.m, r.g, gb, gocurg__g_len(l), &again) < 0 ||
		    again.sp != r.sp || again.pc != r.pc)
			return UNWIND_PARTIAL;
	} else if (len < r.hi - r.sp) {
		want = len;     /* cut at GO_PROBE_STACK: a read past it is [truncated] */
	} else {
		want = len + 1;
	}
	struct user_regs_struct regs = { 0 };
	regs.rip = r.pc;
	regs.rsp = r.sp;
	regs.rbp = r.bp;
	struct unwind_input in = { &regs, false, r.sp, stack, len, want, NULL, 0 };
	enum unwind_status st = unwinder__unwind(sp->uw, &in, s->pcs + *depth, max - *depth, &n);
	*depth += n;
	if (st == UNWIND_STACK_SHORT && c->probe_stack_len && g->curg_probe < TARGET_PROBE_STACK_MAX)
		set_probe(s, g, c, l, 2 * g->curg_probe);       /* deeper: larger copies */
	return st == UNWIND_STACK_SHORT ? UNWIND_TRUNCATED : st == UNWIND_NO_MODULE ? UNWIND_PARTIAL : st;
}

/* A capture of one of its threads: counted as the goroutine it runs at
 * this tick (its slot, state "running"), or not at all. */
static uint32_t go_thread(struct rt_view *rv, const struct capture *c, uint32_t *state)
{
	const struct goview *v = (const struct goview *)rv;
	*state = v->go_running;
	for (size_t i = 0; i < v->nrunning; i++)
		if (v->running[i].tid == c->tid)
			return v->running[i].slot;
	return UINT32_MAX;
}

/* Process PID's goroutine view, if it is a Go program whose DWARF says
 * where its goroutines are; else NULL, with a note for a Go program. */
static struct rt_view *go_open(struct sampler *s, pid_t pid, uint32_t space, uint32_t slot_base,
			       char *note, size_t notelen)
{
	struct space *sp = sampler_space_for(s, space, pid);
	const struct module *main = modules__main(sp->ms);
	char why[200];
	struct goroutines *gs = main ? goroutines__new(pid, main, why, sizeof(why)) : NULL;
	if (!gs) {
		/* Only a Go program is worth a word. */
		if (main && strcmp(why, "not a Go program") != 0)
			snprintf(note, notelen, "PID %d is a Go program, but %s: sampling its threads, "
				 "not its goroutines", (int)pid, why);
		return NULL;
	}
	struct goview *v = xcalloc(1, sizeof(*v));
	v->gs = gs;
	v->pid = pid;
	v->space = space;
	v->slot_base = slot_base;
	v->stack = xmalloc(GO_STACK_MAX);
	v->go_running = stacks__rt_state(s->st, "running");
	snprintf(v->comm, sizeof(v->comm), "%s", main->name ? main->name : "?");
	return (struct rt_view *)v;
}

static size_t go_stats(const struct rt_view *rv, struct rt_stat *out)
{
	const struct goview *v = (const struct goview *)rv;
	size_t n = 0;
	out[n++] = (struct rt_stat){ "seen", "seen", v->seen };
	out[n++] = (struct rt_stat){ "waiting", "samples from their saved context", v->waiting };
	out[n++] = (struct rt_stat){ "reused", "counted again unchanged", v->reused };
	out[n++] = (struct rt_stat){ "carried", "of them not read at that tick (the per-tick "
				     "budget)", v->carried };
	out[n++] = (struct rt_stat){ "lost", "lost (moved while read)", v->lost };
	return n;
}

/* The stack ids it holds, kept by the table's aging (sampler__age()). */
static void go_keep(struct rt_view *rv, struct stacks *st)
{
	struct goview *v = (struct goview *)rv;
	for (size_t i = 0; i < v->cap; i++)
		if (v->tab[i].goid && v->tab[i].id >= 0)
			stacks__keep(st, v->tab[i].id);
	for (size_t i = 0; i < v->nidx; i++)
		if (v->idx[i].kind == GX_REUSE)
			stacks__keep(st, v->idx[i].id);
	if (v->again_n)
		stacks__keep(st, v->again_id);
}

static void go_free(struct rt_view *rv)
{
	struct goview *v = (struct goview *)rv;
	if (!v)
		return;
	free(v->idx);
	for (size_t i = 0; i < v->npooled; i++)
		free(v->pooled[i].labels);
	goroutines__free(v->gs);
	free(v->tab);
	free(v->running);
	free(v->stack);
	free(v);
}

const struct rt_ops rt_go = {
	.name = "goroutines", .unit = "goroutine", .units = "goroutines",
	.open = go_open, .tick = go_tick, .thread = go_thread, .stats = go_stats,
	.keep = go_keep, .free = go_free, .jumped = go_jumped, .space = go_space,
	.space_size = sizeof(struct go_space),
};
