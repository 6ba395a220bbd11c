#include "sample/sampler.h"
#include "sample/internal.h"
#include "sample/runtime.h"

#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <sched.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/resource.h>
#include <sys/signalfd.h>
#include <sys/stat.h>
#include <sys/timerfd.h>
#include <unistd.h>

#include "attach/proc.h"
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
	const struct modules *prev = id < s->ngen && s->gen[id] != UINT32_MAX ?
				     s->spaces[s->gen[id]].ms : NULL;
	if (id >= s->ngen) {
		size_t n = (size_t)id + 1 > s->ngen * 2 ? (size_t)id + 1 : s->ngen * 2;
		s->gen = xrealloc(s->gen, n * sizeof(*s->gen));
		for (size_t i = s->ngen; i < n; i++)
			s->gen[i] = UINT32_MAX;
		s->ngen = n;
	}
	uint32_t index;
	if (s->nfree_spaces) {
		index = s->free_spaces[--s->nfree_spaces];      /* one sampler__age() freed */
	} else {
		if (s->nspaces == s->spaces_cap) {
			s->spaces_cap = s->spaces_cap ? s->spaces_cap * 2 : 16;
			s->spaces = xrealloc(s->spaces, s->spaces_cap * sizeof(*s->spaces));
		}
		index = (uint32_t)s->nspaces++;
	}
	struct space *sp = &s->spaces[index];
	*sp = (struct space){ .ms = prev ? modules__copy(prev, pid) : modules__new(pid), .index = index };
	modules__refresh(sp->ms, pid);
	sp->uw = unwinder__new(sp->ms);
	sp->born_ns = sp->last_refresh_ns = sp->last_scan_ns = now_ns();
	s->gen[id] = index;
	return sp;
}

/* The current generation of space ID, its module table read from PID's
 * maps on first use. */
struct space *sampler_space_for(struct sampler *s, uint32_t id, pid_t pid)
{
	if (id < s->ngen && s->gen[id] != UINT32_MAX)
		return &s->spaces[s->gen[id]];
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
	s->stats.refreshes++;
	switch (modules__scan_replaced(sp->ms, pid, ranges, 16, &n)) {
	case MODULES_ADDED:
		modules__refresh(sp->ms, pid);
		unwinder__flush(sp->uw);
		return sp;
	case MODULES_REPLACED:
		if (n <= 16 && !space_sampled_in(s, sp, ranges, n)) {
			modules__refresh(sp->ms, pid);
			unwinder__flush(sp->uw);
			s->stats.replaced_in_place++;
			return sp;
		}
		s->stats.generations++;
		return new_space(s, id, pid);
	default:
		return NULL;
	}
}

/* A PC fell outside every known module: a library dlopen()ed since the
 * last read of the maps.  Re-read them, but not on every miss (JIT code
 * is outside every module for good). */
static struct space *refresh_space(struct sampler *s, struct space *sp, uint32_t id, pid_t pid)
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

/* ---- taking a capture ------------------------------------------------------ */

static struct view *view_of(struct sampler *s, pid_t pid);

static enum unwind_status unwind(struct sampler *s, const struct capture *c, size_t *depth,
				 uint32_t *space)
{
	struct space *sp = sampler_due_scan(s, sampler_space_for(s, c->space, c->pid), c->space, c->pid);
	if (!sp->uw)
		s->failure = "cannot make libunwind's address space (out of memory?)";
	struct unwind_input in = { &c->regs, c->partial_regs, c->stack_addr, c->stack,
				   c->stack_len, c->stack_want };
	size_t max = (size_t)s->cfg.max_depth;
	*space = sp->index;
	if (!sp->uw)
		return UNWIND_PARTIAL;
	enum unwind_status r = unwinder__unwind(sp->uw, &in, s->pcs, max, depth);
	struct space *again = r == UNWIND_NO_MODULE ? refresh_space(s, sp, c->space, c->pid) : NULL;
	if (again) {
		*space = again->index;
		r = unwinder__unwind(again->uw, &in, s->pcs, max, depth);
	}
	return r == UNWIND_NO_MODULE ? UNWIND_PARTIAL : r;
}

/* Where in the kernel a blocked thread waits: its kernel stack, read right
 * after its capture (it is still blocked: the capture was checked), put
 * under the user stack, innermost first. */
static size_t add_kernel_frames(struct sampler *s, const struct capture *c, size_t depth)
{
	char names[32][64];
	int k = proc__kernel_stack(c->pid, c->tid, names, 32);
	if (k <= 0 || depth + (size_t)k > (size_t)s->cfg.max_depth + 1)
		return depth;
	memmove(s->pcs + k, s->pcs, depth * sizeof(*s->pcs));
	for (int i = 0; i < k; i++)
		s->pcs[i] = stacks__kernel_pc(s->st, names[i]);
	return depth + (size_t)k;
}

/* What the target keeps for a thread whose capture we counted (see
 * target__counted): the stack's id and how its unwind ended, so that an
 * unchanged capture is counted as the same stack, in the same figures. */
enum { COOKIE_ROOTED, COOKIE_TRUNCATED, COOKIE_DROPPED };
static uint64_t cookie(int64_t id, int kind)
{
	return (uint64_t)(id + 1) << 2 | (uint64_t)kind;
}

/* An unchanged capture: the thread has not run since the capture that was
 * counted as C->cookie, which is counted again (attach/blocked.c says why
 * that is exact). */
static void take_again(struct sampler *s, const struct capture *c)
{
	int kind = (int)(c->cookie & 3);
	if (kind == COOKIE_DROPPED) {
		if (view_of(s, c->pid))
			s->stats.threads_left_out += c->ticks;
		else
			s->stats.idle_dropped += c->ticks;
		return;
	}
	int64_t id = (int64_t)(c->cookie >> 2) - 1;
	stacks__add_again(s->st, id, c->ticks, 0);
	if (s->tl)
		timeline__add(s->tl, c->slot, (uint32_t)id, c->ticks);
	if (kind == COOKIE_ROOTED)
		s->stats.rooted += c->ticks;
	else
		s->stats.truncated += c->ticks;
}

/* Adds K to the table (and the timeline): its id, or -1. */
static int64_t add_stack(struct sampler *s, const struct stack *k)
{
	int64_t id = stacks__add(s->st, k);
	if (id < 0)
		s->failure = "out of memory counting stacks (ulimit -v?)";
	else if (s->tl)
		timeline__add(s->tl, k->slot, (uint32_t)id, (uint32_t)k->count);
	return id;
}

/* ---- runtime views (sample/runtime.h) ----------------------------------------- */

const struct rt_ops *const runtimes[] = { &rt_go, &rt_python, NULL };

static struct view *view_of(struct sampler *s, pid_t pid)
{
	for (size_t i = 0; i < s->nviews; i++)
		if (s->views[i].pid == pid)
			return &s->views[i];
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
	for (size_t i = 0; *note && i < s->nnotes; i++)
		if (!strcmp(s->notes[i], note))
			return;         /* said once (a program looked at again) */
	if (*note && s->nnotes < MAX_NOTES)
		s->notes[s->nnotes++] = xstrdup(note);
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
static void close_view(struct sampler *s, size_t i)
{
	struct view *v = &s->views[i];
	size_t k = ops_index(v->ops);
	if (k < SAMPLER_RUNTIMES)
		add_figures(&s->rt_done[k], v);
	target__set_reader(s->t, v->pid, v->space, NULL, NULL);
	v->ops->free(v->v);
	s->views[i] = s->views[--s->nviews];
}

/* Whether process PID's program (space ID) was looked at already, and is
 * not due for another look; marks it.  A program without a view is looked
 * at again LOOK_AGAIN times, 0.25 s, 0.5 s, 1 s ... after: a process just
 * started or exec'd may not have loaded its libraries yet. */
#define LOOK_AGAIN 5
static bool looked_at(struct sampler *s, pid_t pid, uint32_t id)
{
	uint64_t now = now_ns();
	for (size_t i = 0; i < s->nlooked; i++)
		if (s->looked[i].pid == pid) {
			if (s->looked[i].space == id) {
				if (s->looked[i].tries >= LOOK_AGAIN || now < s->looked[i].again_ns ||
				    view_of(s, pid))
					return true;
				s->looked[i].again_ns = now + (250000000ull << s->looked[i].tries++);
				return false;
			}
			s->looked[i].space = id;        /* exec'd: a new program */
			s->looked[i].tries = 0;
			s->looked[i].again_ns = now + 250000000ull;
			return false;
		}
	if (s->nlooked == s->looked_cap) {
		s->looked_cap = s->looked_cap ? 2 * s->looked_cap : 16;
		s->looked = xrealloc(s->looked, s->looked_cap * sizeof(*s->looked));
	}
	s->looked[s->nlooked].pid = pid;
	s->looked[s->nlooked].space = id;
	s->looked[s->nlooked].tries = 0;
	s->looked[s->nlooked++].again_ns = now + 250000000ull;
	return false;
}

/* At a tick's start, no thread held: views closed for processes gone or
 * exec'd, opened for processes (and programs) not looked at yet, then
 * each view's tick. */
static void views_tick(struct sampler *s)
{
	struct target_process procs[256];
	size_t n = target__processes(s->t, procs, 256);
	for (size_t i = 0; i < s->nviews;) {
		size_t k = 0;
		while (k < n && (procs[k].pid != s->views[i].pid || procs[k].space != s->views[i].space))
			k++;
		if (k == n)
			close_view(s, i);       /* its process exited or exec'd */
		else
			i++;
	}
	for (size_t k = 0; (s->cfg.runtime_views || !s->cfg.no_interp_frames) && k < n; k++) {
		if (looked_at(s, procs[k].pid, procs[k].space))
			continue;
		char note[320] = "";
		for (const struct rt_ops *const *o = runtimes; *o; o++) {
			if ((*o)->frames_only ? s->cfg.no_interp_frames : !s->cfg.runtime_views)
				continue;
			if (s->next_rt_slot + RT_SLOTS < s->next_rt_slot)
				break;          /* no slot left (never: 2^32 / 8192 views) */
			struct rt_view *rv = (*o)->open(s, procs[k].pid, procs[k].space,
							RT_SLOT_BASE + s->next_rt_slot, note, sizeof(note));
			add_note(s, note);
			if (!rv)
				continue;
			s->next_rt_slot += RT_SLOTS;
			if (s->nviews == s->views_cap) {
				s->views_cap = s->views_cap ? 2 * s->views_cap : 4;
				s->views = xrealloc(s->views, s->views_cap * sizeof(*s->views));
			}
			s->views[s->nviews++] = (struct view){ *o, rv, procs[k].pid, procs[k].space };
			/* A view opened after the process's first ticks (launch
			 * mode: libpython loads later): a thread blocked since
			 * then would be counted again at the stack it was
			 * counted at without the view, for as long as it stays
			 * blocked.  Its next capture is taken anew. */
			target__forget(s->t, procs[k].pid);
			break;
		}
	}
	for (size_t i = 0; i < s->nviews;) {
		char note[320] = "";
		struct view *v = &s->views[i];
		if (v->ops->tick(v->v, s, note, sizeof(note)) < 0) {
			/* It gave up: its threads are sampled from their next
			 * capture, counted as any thread's. */
			add_note(s, note);
			target__forget(s->t, v->pid);
			close_view(s, i);
			continue;
		}
		add_note(s, note);
		i++;
	}
}

/* ---- services to the runtime views ------------------------------------------ */

int64_t sampler_count(struct sampler *s, struct stack *k, enum unwind_status st)
{
	/* K's pcs are the sampler's buffer (sampler_unwind_saved()), which
	 * has room for the mark. */
	if ((st == UNWIND_TRUNCATED || st == UNWIND_STACK_SHORT) && k->pcs == s->pcs)
		s->pcs[k->n++] = STACKS_PC_TRUNCATED;
	if (st == UNWIND_COMPLETE)
		s->stats.rooted += k->count;
	else if (st == UNWIND_TRUNCATED)
		s->stats.truncated += k->count;
	else
		s->stats.partial += k->count;
	return add_stack(s, k);
}

void sampler_count_again(struct sampler *s, int64_t id, uint32_t slot, uint64_t n, bool rooted)
{
	stacks__add_again(s->st, id, n, 0);
	if (s->tl)
		timeline__add(s->tl, slot, (uint32_t)id, (uint32_t)n);
	if (rooted)
		s->stats.rooted += n;
	else
		s->stats.truncated += n;
}

enum unwind_status sampler_unwind_saved(struct sampler *s, pid_t pid, uint32_t id,
					const struct user_regs_struct *regs, const unsigned char *stack,
					size_t len, size_t want, uint64_t **pcs, size_t *depth,
					uint32_t *space)
{
	struct space *sp = sampler_due_scan(s, sampler_space_for(s, id, pid), id, pid);
	struct unwind_input in = { regs, false, regs->rsp, stack, len, want };
	*pcs = s->pcs;
	*depth = 0;
	*space = sp->index;
	if (!sp->uw)
		return UNWIND_PARTIAL;
	/* Room for the truncated mark sampler_count() may add. */
	return unwinder__unwind(sp->uw, &in, s->pcs, (size_t)s->cfg.max_depth, depth);
}

/* Unwinds one capture and counts it.  Returns -EAGAIN when it needs the
 * registers a stop gives. */
static int take(struct sampler *s, const struct capture *c)
{
	size_t depth;
	uint32_t slot = c->slot, rt_state = 0;
	struct view *vw = view_of(s, c->pid);
	if (vw) {
		/* A runtime's view: a thread's sample is counted as it says
		 * (a Go thread's as the goroutine it runs), or not at all. */
		slot = vw->ops->thread(vw->v, c, &rt_state);
		if (slot == UINT32_MAX) {
			if (!c->unchanged)
				target__counted(s->t, c, cookie(-1, COOKIE_DROPPED), 0);
			s->stats.threads_left_out += c->ticks;
			return 0;
		}
	}
	if (c->unchanged) {
		take_again(s, c);
		return 0;
	}
	if (s->cfg.no_idle && c->state != 'R' && c->state != 'D') {
		s->stats.idle_dropped += c->ticks;      /* sleeping or stopped: not wanted */
		target__counted(s->t, c, cookie(-1, COOKIE_DROPPED), 0);
		return 0;
	}
	uint32_t space;
	enum unwind_status r = unwind(s, c, &depth, &space);
	struct unwinder *uw = s->spaces[space].uw;
	size_t used = uw ? unwinder__stack_used(uw) : 0;
	size_t need = uw && r == UNWIND_STACK_SHORT ? unwinder__stack_need(uw) : 0;
	uint64_t jump_sp;
	if (r == UNWIND_COMPLETE && uw && unwinder__jumped(uw, &jump_sp)) {
		/* Its stack jumped to another (a Go thread on its system
		 * stack: the goroutine's frames go on from its saved
		 * context): the runtime that has such stacks goes on; a
		 * sample left without them is not whole, and says so. */
		for (const struct rt_ops *const *o = runtimes; *o; o++)
			if ((*o)->jumped) {
				r = (*o)->jumped(s, c, space, jump_sp, &depth);
				break;
			}
		if (r == UNWIND_PARTIAL)
			s->stats.jump_lost += c->ticks;
	}
	if (r == UNWIND_NEED_REGS)
		return -EAGAIN;
	if (vw && vw->ops->merge)
		r = vw->ops->merge(vw->v, s, c, r, &depth);
	/* Counted in samples (a capture can stand for several ticks), as the
	 * summary's total is. */
	if (r == UNWIND_PARTIAL || r == UNWIND_STACK_SHORT)
		s->stats.partial += c->ticks;
	if (r == UNWIND_TRUNCATED)
		s->stats.truncated += c->ticks;
	if (r == UNWIND_COMPLETE)
		s->stats.rooted += c->ticks;
	if (r == UNWIND_TRUNCATED || r == UNWIND_STACK_SHORT)
		s->pcs[depth++] = STACKS_PC_TRUNCATED;
	if (r == UNWIND_STACK_SHORT) {
		s->stats.short_copies++;
		target__stack_too_small(s->t, c->tid, need);
	}
	if (s->cfg.kernel_stacks && c->syscall >= 0)
		depth = add_kernel_frames(s, c, depth);
	struct stack st = { .slot = slot, .space = space, .state = c->state,
			    .syscall = c->syscall, .rt_state = rt_state, .pcs = s->pcs, .n = depth,
			    .count = c->ticks, .cpu_ns = c->cpu_ns };
	int64_t id = add_stack(s, &st);
	/* Only a stack that ended where it ends (its root, or --max-depth) is
	 * the one the same capture would give again: a partial one may do
	 * better once the maps are re-read, a short copy once it is larger. */
	uint64_t ck = id < 0 ? 0 : r == UNWIND_COMPLETE ? cookie(id, COOKIE_ROOTED) :
		      r == UNWIND_TRUNCATED ? cookie(id, COOKIE_TRUNCATED) : 0;
	target__counted(s->t, c, ck, used);
	return 0;
}

static void take_stopped(struct sampler *s)
{
	const struct capture *c;
	while ((c = target__next_stopped(s->t)))
		take(s, c);
}

/* ---- the ticks' schedule ----------------------------------------------------
 * A fixed-period sampler locks step with periodic work in the target (a
 * loop that switches every 10 ms, sampled every 10 ms, is always caught in
 * the same phase).  So tick K fires at a random moment of its own slot:
 * start + (K + u) x period, u uniform in [0, 1).  Slots never drift, the
 * average rate is exactly the rate asked for, and no phase is favoured.
 * The gap between two ticks is between 0 and two periods. */

static uint64_t next_random(struct sampler *s)
{
	s->rng ^= s->rng << 13;         /* xorshift64 */
	s->rng ^= s->rng >> 7;
	s->rng ^= s->rng << 17;
	return s->rng;
}

static int arm_next_tick(struct sampler *s)
{
	uint64_t u = s->fixed_ticks ? 0 : next_random(s) % s->period_ns;
	uint64_t at = s->stats.start_ns + s->next_slot * s->period_ns + u;
	s->armed_ns = at;
	struct itimerspec its = {
		.it_value = { (time_t)(at / 1000000000ull), (long)(at % 1000000000ull) },
	};
	return timerfd_settime(s->timer_fd, TFD_TIMER_ABSTIME, &its, NULL) < 0 ? -errno : 0;
}

/* Starts the ticks, once attached and ready: attaching is not sampling
 * time. */
static int start_ticks(struct sampler *s)
{
	s->stats.start_ns = now_ns();
	s->stats.start_real_ns = realtime_ns();
	s->period_ns = 1000000000ull / (uint64_t)s->cfg.hz;
	s->rng = s->stats.start_ns ^ ((uint64_t)getpid() << 32) ^ 0x9e3779b97f4a7c15ull;
	/* For the tests only: they show the aliasing a fixed period causes. */
	const char *j = getenv("CPROF_TICK_JITTER");
	s->fixed_ticks = j && strcmp(j, "0") == 0;
	s->next_slot = 0;
	return arm_next_tick(s);
}

/* One tick: blocked threads first (no stop), then the rest are
 * interrupted; their captures come in as they stop. */
static void sample_all(struct sampler *s)
{
	const struct capture *c;
	views_tick(s);
	target__tick_begin(s->t);
	while ((c = target__next_blocked(s->t)))
		if (take(s, c) == -EAGAIN)
			target__need_stop(s->t, c);
	target__interrupt(s->t);
	take_stopped(s);
}

static void watch_lateness(struct sampler *s, uint64_t late);

/* A tick is due.  If we are so late that later slots have ended too, those
 * ticks are missed (counted, not stretched into a lower rate). */
static void tick(struct sampler *s)
{
	uint64_t expirations;
	if (read(s->timer_fd, &expirations, sizeof(expirations)) != sizeof(expirations))
		return;
	uint64_t now = now_ns();
	watch_lateness(s, now > s->armed_ns ? now - s->armed_ns : 0);
	s->next_slot++;
	while (s->stats.start_ns + (s->next_slot + 1) * s->period_ns <= now) {
		s->next_slot++;
		s->stats.missed++;
	}
	arm_next_tick(s);
	if (target__ready(s->t))
		sample_all(s);
}

/* Most wake-ups are SIGCHLD for a stopped thread.  The signalfd is
 * drained first, then, if it held one, every event is taken
 * (target__poll); events after the drain raise SIGCHLD again, which
 * target__next_stopped() sees. */
static void on_sigchld(struct sampler *s)
{
	struct signalfd_siginfo si;
	int took = 0;
	while (read(s->chld_fd, &si, sizeof(si)) == sizeof(si))
		took = 1;
	if (took)       /* (else the target's own look took it, and reaped) */
		target__poll(s->t);
	take_stopped(s);
}

static void publish(struct sampler *s)
{
	const struct target_stats *ts = target__stats(s->t);
	pthread_mutex_lock(&s->lock);
	s->progress = (struct sampler_progress){ s->stats.start_ns, ts->ticks,
		stacks__total(s->st), ts->threads_seen, ts->processes_seen };
	pthread_mutex_unlock(&s->lock);
}

static void check_realtime(struct sampler *s);

/* The caller wants the tables (sampler__pause): parks here, between two
 * ticks and with no thread of the target held (none asked to stop and not
 * yet resumed), until it is done.  A tick due meanwhile is late (missed,
 * as on a busy machine); a thread's event or signal waits for us. */
static void maybe_park(struct sampler *s)
{
	uint64_t v;
	if (read(s->park_fd, &v, sizeof(v)) < 0 && errno != EAGAIN)
		return;
	pthread_mutex_lock(&s->lock);
	if (s->park_wanted && target__pending(s->t) == 0) {
		s->parked = 1;
		pthread_cond_broadcast(&s->cond);
		while (s->park_wanted)
			pthread_cond_wait(&s->cond, &s->lock);
		s->parked = 0;
	}
	pthread_mutex_unlock(&s->lock);
}

static void loop(struct sampler *s)
{
	struct pollfd fds[4] = { { s->chld_fd, POLLIN, 0 }, { s->timer_fd, POLLIN, 0 },
				 { s->stop_fd, POLLIN, 0 }, { s->park_fd, POLLIN, 0 } };
	while (target__alive(s->t)) {
		if (poll(fds, 4, -1) < 0 && errno != EINTR)
			break;
		if (fds[0].revents)
			on_sigchld(s);
		if (fds[1].revents) {
			tick(s);
			check_realtime(s);
		}
		publish(s);
		if (fds[2].revents || s->failure)
			return;
		if (fds[3].revents || __atomic_load_n(&s->park_wanted, __ATOMIC_RELAXED))
			maybe_park(s);
	}
	s->exited = 1;
}

/* ---- the tracer thread ------------------------------------------------------ */

/* The tracer thread needs the CPU briefly and on time: a late tick is a
 * missed tick, and every thread we stop waits for us.  It runs at nice
 * -10 where allowed (root, CAP_SYS_NICE).  On a busy machine that is not
 * enough: nice orders threads within one autogroup (each session's, where
 * kernel.sched_autogroup_enabled is on, as on most distributions) or
 * cgroup, while the groups share the CPUs equally.  Measured on a 2-core
 * machine kept busy by other sessions: a thread doing nothing but wait for
 * a 99 Hz timer woke p99 9-80 ms late and missed 1-14 ticks in 400, at
 * nice 0 or -10 alike; as SCHED_FIFO at priority 1, p99 under 0.2 ms and
 * none missed.  But a real-time tracer costs the target too: waking for a
 * tick it preempts the target's thread on its CPU, which then waits behind
 * the other processes there for its next turn before it can stop (pause
 * p99 4-8 ms where it was 50-200 us).  So the tracer becomes SCHED_FIFO,
 * at the lowest priority and not inherited by anything it forks, only
 * once ticks are being missed (LATE_TICKS of the last LATE_WINDOW ticks
 * a whole period late): on a machine busy enough to cost samples.  A real-time thread that kept a CPU busy would starve the
 * others on it: past RT_CPU_SHARE of a CPU over a second, it goes back to
 * nice -10 for good (check_realtime). */
#define RT_CPU_SHARE 0.5
#define LATE_TICKS 2
#define LATE_WINDOW 100

static uint64_t thread_cpu_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static void raise_priority(void)
{
	int old = getpriority(PRIO_PROCESS, 0);   /* this thread, on Linux */
	if (old > -10)
		setpriority(PRIO_PROCESS, 0, -10);
}

static void enter_realtime(struct sampler *s)
{
	struct sched_param sp = { .sched_priority = 1 };
	if (sched_setscheduler(0, SCHED_FIFO | SCHED_RESET_ON_FORK, &sp) < 0) {
		s->rt_refused = 1;
		return;
	}
	s->realtime = 1;
	s->rt_since_ns = now_ns();
	s->rt_cpu_ns = thread_cpu_ns();
	s->rt_from_tick = s->next_slot;
}

/* A tick fired LATE ns after it was due. */
static void watch_lateness(struct sampler *s, uint64_t late)
{
	if (s->realtime || s->rt_dropped || s->rt_refused)
		return;
	if (late >= s->period_ns)
		s->late_ticks++;
	if (s->late_ticks >= LATE_TICKS)
		enter_realtime(s);
	if (++s->late_window >= LATE_WINDOW)
		s->late_ticks = s->late_window = 0;
}

/* How the tracer thread was scheduled, for --stats. */
static void describe_tracer(struct sampler *s)
{
	/* In a user's words: when, not which tick; what, not the policy. */
	double at = (double)s->rt_from_tick / (s->cfg.hz > 0 ? s->cfg.hz : 1);
	if (s->rt_dropped)
		snprintf(s->tracer, sizeof(s->tracer), "real-time priority from %.1f s on (its ticks "
			 "were late), then nice -10 (it used over half a CPU)", at);
	else if (s->realtime)
		snprintf(s->tracer, sizeof(s->tracer), "real-time priority from %.1f s on (its ticks "
			 "were late)", at);
	else if (s->rt_refused)
		snprintf(s->tracer, sizeof(s->tracer), "its ticks were late, and real-time priority "
			 "was not allowed");
	else
		snprintf(s->tracer, sizeof(s->tracer), "normal priority (its ticks were on time)");
}

static void check_realtime(struct sampler *s)
{
	uint64_t now = now_ns();
	if (!s->realtime || now - s->rt_since_ns < 1000000000ull)
		return;
	uint64_t cpu = thread_cpu_ns();
	if ((double)(cpu - s->rt_cpu_ns) > RT_CPU_SHARE * (double)(now - s->rt_since_ns)) {
		struct sched_param sp = { .sched_priority = 0 };
		sched_setscheduler(0, SCHED_OTHER | SCHED_RESET_ON_FORK, &sp);
		s->realtime = 0;
		s->rt_dropped = 1;
	}
	s->rt_since_ns = now;
	s->rt_cpu_ns = cpu;
}

static int start_targets(struct sampler *s)
{
	const struct sampler_config *c = &s->cfg;
	struct target_config tc = { c->subprocesses, 1000000000ull / (uint64_t)c->hz,
				    c->tids, c->ntids, c->threads_re };
	s->t = target__new(&tc);
	if (c->command)
		return target__launch(s->t, c->command, c->child_mask, s->err, sizeof(s->err));
	for (size_t i = 0; i < c->npids; i++) {
		int r = target__attach(s->t, c->pids[i], s->err, sizeof(s->err));
		if (r < 0)
			return r;
	}
	return 0;
}

/* Module tables for the processes there are now, read before the first
 * tick: attaching is not sampling time. */
static void read_spaces(struct sampler *s)
{
	struct target_process procs[256];
	size_t n = target__processes(s->t, procs, 256);
	for (size_t i = 0; i < n; i++)
		sampler_space_for(s, procs[i].space, procs[i].pid);
}

static void take_notes(struct sampler *s)
{
	const char *n;
	while ((n = target__next_note(s->t)) && s->nnotes < MAX_NOTES)
		s->notes[s->nnotes++] = xstrdup(n);
}

static void report_start(struct sampler *s, int r)
{
	pthread_mutex_lock(&s->lock);
	s->started = r < 0 ? -1 : 1;
	s->start_err = r;
	pthread_cond_signal(&s->cond);
	pthread_mutex_unlock(&s->lock);
}

/* Labels of every slot, read from the target while it still exists. */
static void copy_labels(struct sampler *s)
{
	for (size_t i = 0; i < target__nslots(s->t); i++) {
		struct target_slot ts;
		target__slot(s->t, (uint32_t)i, &ts);
		struct stack_label l = { ts.pid, ts.tid, 0, ts.process, ts.thread, NULL, ts.comm };
		stacks__set_label(s->st, (uint32_t)i, &l);
	}
}

/* Attaches, samples, and by returning detaches (see attach/target.h). */
static void *tracer_main(void *arg)
{
	struct sampler *s = arg;
	s->tracer_tid = gettid();
	int r = start_targets(s);
	take_notes(s);
	if (r < 0) {
		report_start(s, r);
		return NULL;
	}
	raise_priority();               /* after a launch: the command keeps its own */
	if (!s->cfg.command)
		read_spaces(s);
	if ((r = start_ticks(s)) < 0) {
		snprintf(s->err, sizeof(s->err), "cannot start the timer: %s", strerror(-r));
		report_start(s, r);
		return NULL;
	}
	publish(s);
	report_start(s, 0);
	if (s->cfg.once)
		sample_all(s);          /* the stopped threads' captures come at release */
	else
		loop(s);
	s->stats.end_ns = now_ns();
	describe_tracer(s);
	target__release(s->t);
	take_stopped(s);
	copy_labels(s);
	take_notes(s);
	if (s->failure)
		s->exited = 0;
	pthread_mutex_lock(&s->lock);
	s->finished = 1;                /* the tables are the caller's from here */
	pthread_cond_broadcast(&s->cond);
	pthread_mutex_unlock(&s->lock);
	uint64_t one = 1;
	if (write(s->done_fd, &one, sizeof(one)) < 0)
		abort();                /* an eventfd write cannot fail here */
	return NULL;
}

/* ---- the caller's side ---------------------------------------------------- */

static int open_fds(struct sampler *s)
{
	sigset_t chld;
	sigemptyset(&chld);
	sigaddset(&chld, SIGCHLD);
	s->chld_fd = signalfd(-1, &chld, SFD_CLOEXEC | SFD_NONBLOCK);
	s->timer_fd = timerfd_create(CLOCK_MONOTONIC, TFD_CLOEXEC | TFD_NONBLOCK);
	s->stop_fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	s->done_fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	s->park_fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	return s->chld_fd < 0 || s->timer_fd < 0 || s->stop_fd < 0 || s->done_fd < 0 ||
	       s->park_fd < 0 ? -errno : 0;
}

int sampler__start(struct sampler **out, const struct sampler_config *cfg, char *err, size_t errlen)
{
	struct sampler *s = xcalloc(1, sizeof(*s));
	s->cfg = *cfg;
	s->chld_fd = s->timer_fd = s->stop_fd = s->done_fd = s->park_fd = -1;
	pthread_mutex_init(&s->lock, NULL);
	pthread_cond_init(&s->cond, NULL);
	s->st = stacks__new();
	if (cfg->timeline)
		s->tl = timeline__new();
	s->pcs = xcalloc((size_t)cfg->max_depth + 2, sizeof(*s->pcs));
	*out = s;
	int r = open_fds(s);
	if (r < 0 || !s->st) {
		snprintf(err, errlen, "cannot set up signals and timer: %s", strerror(r < 0 ? -r : ENOMEM));
		return r < 0 ? r : -ENOMEM;
	}
	if ((r = pthread_create(&s->thread, NULL, tracer_main, s)) != 0) {
		snprintf(err, errlen, "cannot start the tracer thread: %s", r == EAGAIN ?
			 "out of memory or threads (ulimit -v? ulimit -u?)" : strerror(r));
		return -EAGAIN;
	}
	s->thread_started = 1;
	pthread_mutex_lock(&s->lock);
	while (!s->started)
		pthread_cond_wait(&s->cond, &s->lock);
	r = s->start_err;
	pthread_mutex_unlock(&s->lock);
	if (r < 0) {
		snprintf(err, errlen, "%s", s->err);
		sampler__stop(s);
	}
	return r;
}

int sampler__done_fd(const struct sampler *s)
{
	return s->done_fd;
}

/* Waits (at most a second) until thread TID of ours is gone for good:
 * pthread_join returns before the kernel's exit of the thread has run its
 * ptrace part (the detach), and we promise an untraced target once we
 * report. */
static void wait_thread_gone(pid_t tid)
{
	char fn[64];
	struct stat st;
	snprintf(fn, sizeof(fn), "/proc/self/task/%d", tid);
	for (int i = 0; i < 1000 && stat(fn, &st) == 0; i++)
		usleep(1000);
}

void sampler__stop(struct sampler *s)
{
	if (s->stopped || !s->thread_started)
		return;
	uint64_t one = 1;
	if (write(s->stop_fd, &one, sizeof(one)) < 0)
		abort();                /* an eventfd write cannot fail here */
	pthread_join(s->thread, NULL);
	if (s->tracer_tid)
		wait_thread_gone(s->tracer_tid);
	s->stopped = 1;
}

void sampler__pause(struct sampler *s)
{
	if (!s->thread_started)
		return;
	uint64_t one = 1;
	pthread_mutex_lock(&s->lock);
	s->park_wanted = 1;
	if (write(s->park_fd, &one, sizeof(one)) < 0)
		abort();                /* an eventfd write cannot fail here */
	while (!s->parked && !s->finished)
		pthread_cond_wait(&s->cond, &s->lock);
	pthread_mutex_unlock(&s->lock);
}

void sampler__resume(struct sampler *s)
{
	pthread_mutex_lock(&s->lock);
	s->park_wanted = 0;
	pthread_cond_broadcast(&s->cond);
	pthread_mutex_unlock(&s->lock);
}

void sampler__take(struct sampler *s, struct stacks_slice *out)
{
	copy_labels(s);
	stacks__take(s->st, out);
}

static void keep_cookie(void *arg, uint64_t c)
{
	stacks__keep(arg, (int64_t)(c >> 2) - 1);      /* see cookie() */
}

size_t sampler__age(struct sampler *s, uint64_t before, void (*forget)(void *arg, uint32_t space),
		    void *arg)
{
	if (s->tl)
		return 0;       /* the timeline holds every stack's id */
	if (s->t)
		target__each_cookie(s->t, keep_cookie, s->st);
	for (size_t i = 0; i < s->nviews; i++)
		s->views[i].ops->keep(s->views[i].v, s->st);
	size_t freed = stacks__age(s->st, before);
	/* The generations no stack names and no space has as its current. */
	unsigned char *used = xcalloc(s->nspaces + 1, 1);
	for (size_t i = 0; i < s->ngen; i++)
		if (s->gen[i] != UINT32_MAX)
			used[s->gen[i]] = 1;
	for (size_t id = 0; id < stacks__unique(s->st); id++) {
		struct stack k;
		if (!stacks__exists(s->st, id))
			continue;
		stacks__get(s->st, id, &k);
		if (k.space < s->nspaces)
			used[k.space] = 1;
	}
	for (size_t i = 0; i < s->nspaces; i++) {
		if (used[i] || !s->spaces[i].ms)
			continue;
		unwinder__free(s->spaces[i].uw);
		modules__free(s->spaces[i].ms);
		s->spaces[i] = (struct space){ .index = (uint32_t)i };
		s->free_spaces = xrealloc(s->free_spaces, (s->nfree_spaces + 1) * sizeof(*s->free_spaces));
		s->free_spaces[s->nfree_spaces++] = (uint32_t)i;
		s->spaces_freed++;
		if (forget)
			forget(arg, (uint32_t)i);
	}
	free(used);
	return freed;
}

int sampler__targets_exited(const struct sampler *s)
{
	return s->exited;
}

const char *sampler__failure(const struct sampler *s)
{
	return s->failure;
}

void sampler__progress(struct sampler *s, struct sampler_progress *p)
{
	pthread_mutex_lock(&s->lock);
	*p = s->progress;
	pthread_mutex_unlock(&s->lock);
}

const struct stacks *sampler__stacks(const struct sampler *s)
{
	return s->st;
}

const struct timeline *sampler__timeline(const struct sampler *s)
{
	return s->tl;
}

size_t sampler__nspaces(const struct sampler *s)
{
	return s->nspaces;
}

const struct modules *sampler__space(const struct sampler *s, size_t i)
{
	return i < s->nspaces ? s->spaces[i].ms : NULL;
}

uint64_t sampler_stats__rt(const struct sampler_stats *ss, const char *name, const char *key)
{
	for (size_t i = 0; i < ss->nrt; i++)
		for (size_t k = 0; ss->rt[i].name && !strcmp(ss->rt[i].name, name) && k < ss->rt[i].n; k++)
			if (!strcmp(ss->rt[i].stat[k].key, key))
				return ss->rt[i].stat[k].value;
	return 0;
}

void sampler__stats(const struct sampler *s, struct sampler_stats *out)
{
	*out = s->stats;
	/* Each runtime's figures: its views freed, and those open. */
	out->nrt = 0;
	for (size_t k = 0; runtimes[k] && k < SAMPLER_RUNTIMES; k++) {
		struct sampler_runtime total = s->rt_done[k];
		for (size_t i = 0; i < s->nviews; i++)
			if (s->views[i].ops == runtimes[k])
				add_figures(&total, &s->views[i]);
		if (total.name)
			out->rt[out->nrt++] = total;
	}
	out->samples = stacks__total(s->st);
	out->tracer = s->tracer[0] ? s->tracer : NULL;
	if (s->t) {
		out->target = *target__stats(s->t);
		out->pause_p50_us = target__pause_quantile(s->t, 0.5);
		out->pause_p99_us = target__pause_quantile(s->t, 0.99);
	}
}

pid_t sampler__first_pid(const struct sampler *s)
{
	return s->t ? target__first_pid(s->t) : 0;
}

int sampler__exit_status(const struct sampler *s)
{
	return s->t ? target__exit_status(s->t) : -1;
}

const char *sampler__next_note(struct sampler *s)
{
	return s->notes_taken < s->nnotes ? s->notes[s->notes_taken++] : NULL;
}

void sampler__free(struct sampler *s)
{
	if (!s)
		return;
	sampler__stop(s);
	for (size_t i = 0; i < s->nspaces; i++) {
		unwinder__free(s->spaces[i].uw);
		modules__free(s->spaces[i].ms);
	}
	for (size_t i = 0; i < s->nnotes; i++)
		free(s->notes[i]);
	while (s->nviews)
		close_view(s, s->nviews - 1);
	free(s->views);
	free(s->looked);
	free(s->jump_stack);
	free(s->spaces);
	free(s->free_spaces);
	free(s->gen);
	target__free(s->t);
	stacks__free(s->st);
	timeline__free(s->tl);
	free(s->pcs);
	int fds[] = { s->chld_fd, s->timer_fd, s->stop_fd, s->done_fd, s->park_fd };
	for (size_t i = 0; i < sizeof(fds) / sizeof(*fds); i++)
		if (fds[i] >= 0)
			close(fds[i]);
	pthread_mutex_destroy(&s->lock);
	pthread_cond_destroy(&s->cond);
	free(s);
}
