#include "sample/internal.h"
#include "sample/rt_chain.h"
#include "sample/rt_syms.h"
#include "sample/runtime.h"

#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "module/modules.h"
#include "profile/stacks.h"
#include "python/interp.h"
#include "python/names.h"
#include "util/timeutil.h"
#include "util/xalloc.h"

/* CPython's view (sample/runtime.h): a Python program's own frames, read
 * from its memory and merged into the native stack, py-spy --native's way,
 * for every thread, running or blocked, with no restart and no flag.
 *
 * At a tick's start the view lists the interpreter's thread states (and
 * their OS threads).  At each capture of a thread, while the thread cannot
 * run (stopped, or blocked between the two looks at it), the target calls
 * py_read(): it copies the thread's frame chain (code object and
 * instruction of each frame, a few small reads) and who holds the GIL.
 * After the capture, py_merge() names those frames (code objects are read
 * once and kept) and puts them in place of the native
 * _PyEval_EvalFrameDefault frames that run them.
 *
 * The threads are not the view's units: a Python program's samples are its
 * threads', as without the view.  Each thread's Python name
 * (threading.current_thread().name) is read at a tick's start, once a
 * second and soon after a thread state appears, while the threads run
 * (python/names.c), and given to the sampler for the thread's label:
 * "python_thread" beside its OS name. */

struct pyview {
	struct py_interp *py;
	pid_t pid;
	uint32_t space;
	struct py_thread *threads;      /* this tick's, by tid */
	size_t nthreads;
	int lines;                      /* name frames with their lines */
	uint32_t gil_held, gil_free;    /* stacks__rt_state("gil=held"), "gil=not held" */
	struct py_frame_raw frames[PY_MAX_FRAMES];
	uint64_t *native;               /* a copy of the native frames while merging */
	size_t native_cap;
	struct rt_syms syms;            /* (code object, instruction, its serial) -> its frame */
	uint64_t epoch;                 /* ticks: code objects are checked once per tick */
	uint64_t seen, merged, unmatched, partial_frames, entering, deep, after, moved, gone;
	uint64_t torn;                  /* running threads' chains that would not hold still */
	struct py_frame_raw *again, *best;      /* py_read()'s second read, and what it keeps */
	struct sampler *s;
	/* each thread's frame addresses at its last capture, by thread state,
	 * direct-mapped (a thread that loses its place reads its frames one
	 * by one, once) */
	struct { uint64_t tstate; struct py_frame_hint h; } *hints;
	uint64_t names_due_ns, names_read_ns;   /* when names are read again; were read */
	uint64_t tstates;               /* the thread states of the last tick, summed */
	uint64_t named;                 /* threads named at the last read */
	unsigned unmatched_ticks;       /* ticks in a row with thread states but no thread */
	bool said_unmatched;
	/* The time a tick may spend on it (listing, reading, naming): past
	 * it, the view gives up for the rest of the tick (a hostile or huge
	 * interpreter cannot take the sampler's rate). */
	uint64_t budget_ns, spent_ns, mark_ns;  /* the profiler's CPU time (cpu_ns());
						   mark: where the time not yet spent starts */
	bool over, said_over;
	unsigned reads, merges, names;  /* this tick's (the first of each is spared) */
	uint64_t over_ticks, over_samples;
	uint64_t sweep_ns, sweep_epoch; /* code objects not met since SWEEP_EPOCH are dropped
					   at SWEEP_NS */
	uint64_t codes_aged;
};

/* Code objects not met for this long (to twice it) are dropped. */
#define CODE_AGE_NS (5 * 1000000000ull)

/* A tick's time for the view: a quarter of the tick's interval, at least 2 ms,
 * of the profiler's CPU.  The tick's first read is whole whatever the
 * time (a chain of 1,024 frames takes a few ms) and its first capture
 * names up to FREE_NAMES code objects (a deep recursion's few); past the
 * budget no other thread's chain is read in the tick and no other code
 * object named. */
#define FREE_NAMES 8
#define BUDGET_SHARE 4
#define BUDGET_MIN_NS 2000000ull

/* The profiler's thread's CPU time: the budget counts what the view
 * spends, not the time another process on a loaded machine takes. */
static uint64_t cpu_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* Adds the CPU time since T0 (cpu_ns()) to the tick's; true once it is
 * over budget. */
static bool spend(struct pyview *v, uint64_t t0)
{
	uint64_t now = cpu_ns();
	v->spent_ns += now > t0 ? now - t0 : 0;
	if (!v->over && v->spent_ns > v->budget_ns) {
		v->over = true;
		v->over_ticks++;
	}
	return v->over;
}

/* Ticks with thread states none of which is a thread of the process,
 * before the view says so (once). */
#define UNMATCHED_TICKS 10

/* Threads whose frames' addresses are kept (py_read()). */
#define HINTS 64

/* Names are read again after this, or sooner (NAMES_SOON) once another
 * thread state is listed. */
#define NAMES_EVERY_NS 1000000000ull
#define NAMES_SOON_NS 100000000ull


/* What the reader leaves in a capture: the GIL's holder, the thread
 * state, then its frames. */
struct py_head {
	uint64_t gil, tstate;
	uint64_t over;                  /* 1: not read, over the tick's time budget */
};

static int by_tid(const void *a, const void *b)
{
	pid_t x = ((const struct py_thread *)a)->tid, y = ((const struct py_thread *)b)->tid;
	return (x > y) - (x < y);
}

static uint64_t tstate_of(const struct pyview *v, pid_t tid)
{
	struct py_thread key = { 0, 0, tid };
	const struct py_thread *t = bsearch(&key, v->threads, v->nthreads, sizeof(key), by_tid);
	return t ? t->tstate : 0;
}

/* Python's frames are read as rt_chain reads them (sample/rt_chain.h). */
_Static_assert(sizeof(struct py_frame_raw) == sizeof(struct rt_chain_frame) &&
	       offsetof(struct py_frame_raw, code) == offsetof(struct rt_chain_frame, what) &&
	       offsetof(struct py_frame_raw, instr) == offsetof(struct rt_chain_frame, at) &&
	       offsetof(struct py_frame_raw, ends) == offsetof(struct rt_chain_frame, ends) &&
	       PY_ENDS_WHOLE == RT_CHAIN_WHOLE, "struct py_frame_raw is read as rt_chain_frame");

/* One thread's reads: its thread state, where its GIL word goes, its hint. */
struct chain_read {
	struct pyview *v;
	uint64_t tstate, *gil;
	struct py_frame_hint *hint;
};

/* One read, with the hint; the current frame and its link as the hint
 * has them after it (0, 0: none). */
static size_t chain_read(void *ctx, struct rt_chain_frame *into, size_t lim, uint64_t *cur,
			 uint64_t *link)
{
	struct chain_read *r = ctx;
	size_t m = py_interp__frames_hinted(r->v->py, r->tstate, (struct py_frame_raw *)into, lim,
					    r->gil, r->hint);
	*cur = r->hint->n ? r->hint->addr[0] : 0;
	*link = r->hint->n > 1 ? r->hint->addr[1] : 0;
	return m;
}

/* The thread's current frame and its link, read again, are those the
 * last read found. */
static bool chain_still(void *ctx, uint64_t prev_cur, uint64_t prev_link, uint64_t cur,
			uint64_t link)
{
	struct chain_read *r = ctx;
	uint64_t now, back;
	(void)prev_cur;
	(void)prev_link;
	return py_interp__current(r->v->py, r->tstate, &now, &back) == 0 && r->hint->n &&
	       now == cur && back == link;
}

static const struct rt_chain_ops chain_ops = { chain_read, chain_still };

/* The target's reader (target_reader_fn): runs while thread TID cannot,
 * or, RUNNING, right after its perf sample while it runs on, as rt_chain
 * reads a running chain: a call made or returned from while it is read
 * tears it (a frame being torn down cannot be read; CPython 3.12 entering
 * a generator shows, for a moment, the generator's frame alone).  Torn
 * reads keep the outer frames two reads agreed on, and are counted. */
static size_t py_read(void *arg, pid_t pid, pid_t tid, int running, void *out, size_t cap)
{
	struct pyview *v = arg;
	(void)pid;
	struct py_head h = { 0, tstate_of(v, tid), 0 };
	if (!h.tstate || cap < sizeof(h))
		return 0;
	if (v->over && v->reads) {
		v->over_samples++;      /* its native frames only, this tick */
		h.over = 1;
		memcpy(out, &h, sizeof(h));
		return sizeof(h);
	}
	uint64_t t0 = cpu_ns();
	v->reads++;
	size_t max = (cap - sizeof(h)) / sizeof(struct py_frame_raw);
	size_t k = (size_t)((h.tstate >> 4) * 0x9e3779b97f4a7c15ull >> 58) & (HINTS - 1);
	if (v->hints[k].tstate != h.tstate) {
		v->hints[k].tstate = h.tstate;
		v->hints[k].h.n = 0;
	}
	struct py_frame_raw *fr = (struct py_frame_raw *)((char *)out + sizeof(h));
	size_t lim = max < PY_MAX_FRAMES ? max : PY_MAX_FRAMES;
	struct chain_read r = { v, h.tstate, &h.gil, &v->hints[k].h };
	bool torn;
	uint64_t cur, link;
	size_t n = rt_chain__read(&chain_ops, &r, running, (struct rt_chain_frame *)fr, lim,
				  (struct rt_chain_frame *)v->again, (struct rt_chain_frame *)v->best,
				  &torn, &cur, &link);
	v->torn += torn;
	memcpy(out, &h, sizeof(h));
	spend(v, t0);
	return sizeof(h) + n * sizeof(struct py_frame_raw);
}

static int py_tick(struct rt_view *rv, struct sampler *s, char *note, size_t notelen)
{
	struct pyview *v = (struct pyview *)rv;
	(void)s;
	v->epoch++;
	if (v->over_ticks && !v->said_over) {
		v->said_over = true;
		snprintf(note, notelen, "PID %d's Python took more than %.1f ms of a tick to read: "
			 "its frames are left out of the rest of such ticks (--stats: python over budget)",
			 (int)v->pid, (double)v->budget_ns / 1e6);
	}
	v->spent_ns = 0;
	v->over = false;
	v->reads = v->merges = v->names = 0;
	uint64_t gil, t0 = cpu_ns();
	int n = py_interp__threads(v->py, v->threads, PY_MAX_THREADS, &gil);
	if (n < 0) {
		v->nthreads = 0;        /* not started, or finalizing: try again */
		return 0;
	}
	v->nthreads = (size_t)n;
	spend(v, t0);
	size_t listed = py_interp__listed(v->py);
	v->unmatched_ticks = n == 0 && listed ? v->unmatched_ticks + 1 : 0;
	if (v->unmatched_ticks == UNMATCHED_TICKS && !v->said_unmatched) {
		v->said_unmatched = true;
		snprintf(note, notelen, "PID %d runs Python %s, but none of its %zu thread states "
			 "is a thread of it: its native frames only", (int)v->pid,
			 py_interp__version(v->py), listed);
	}
	qsort(v->threads, v->nthreads, sizeof(*v->threads), by_tid);
	if (v->nthreads > v->seen)
		v->seen = v->nthreads;
	uint64_t sum = 0, now = now_ns();
	for (size_t i = 0; i < v->nthreads; i++)
		sum += v->threads[i].tstate ^ v->threads[i].ident;
	if (sum != v->tstates && v->names_due_ns > v->names_read_ns + NAMES_SOON_NS)
		v->names_due_ns = v->names_read_ns + NAMES_SOON_NS;     /* a thread came or went */
	v->tstates = sum;
	if (now >= v->sweep_ns) {
		v->codes_aged += py_interp__age_codes(v->py, v->sweep_epoch);
		v->sweep_epoch = v->epoch;
		v->sweep_ns = now + CODE_AGE_NS;
	}
	if (now >= v->names_due_ns && !v->over) {
		uint64_t c0 = cpu_ns();
		v->named = py_interp__read_names(v->py);
		v->names_read_ns = now;
		v->names_due_ns = now + NAMES_EVERY_NS;
		spend(v, c0);
	}
	return 0;
}

static uint32_t py_thread_of(struct rt_view *rv, const struct capture *c, uint32_t *state)
{
	const struct pyview *v = (const struct pyview *)rv;
	struct py_head h;
	*state = 0;
	if (v->named) {
		struct py_thread key = { 0, 0, c->tid };
		const struct py_thread *t = bsearch(&key, v->threads, v->nthreads, sizeof(key), by_tid);
		const char *name = t ? py_interp__thread_name(v->py, t->ident) : NULL;
		if (name)
			sampler_name_thread(v->s, c->slot, c->pid, c->tid, "python_thread", name);
	}
	if (c->rt_len >= sizeof(h)) {
		memcpy(&h, c->rt_data, sizeof(h));
		*state = h.gil && h.gil == h.tstate ? v->gil_held : v->gil_free;
	}
	return c->slot;
}

static uint64_t budget_pc(struct pyview *v, struct sampler *s);

/* The symbolic frame of raw frame F. */
static uint64_t frame_pc(struct pyview *v, struct sampler *s, const struct py_frame_raw *f)
{
	uint64_t instr = v->lines ? f->instr : 0;
	/* over budget, only what needs no read: a code object already named
	 * (not checked again this tick) */
	uint32_t serial = 0;
	bool spared = v->merges == 1 && v->names < FREE_NAMES;
	if (v->over && !spared && f->code && !py_interp__code_cached(v->py, f->code, &serial))
		return budget_pc(v, s);
	if ((!v->over || spared) && f->code)
		serial = py_interp__code(v->py, f->code, v->epoch);
	struct rt_sym *slot;
	uint64_t cached = rt_syms__get(&v->syms, s->st, f->code, instr, serial, &slot);
	if (cached)
		return cached;
	/* naming (a code object's reads) is what can take long: the time
	 * so far is counted before each */
	uint64_t now = cpu_ns();
	if (spend(v, v->mark_ns) && !spared)
		return budget_pc(v, s);
	v->mark_ns = now;
	v->names++;
	struct py_named nm;
	if (py_interp__name(v->py, f, v->lines, &nm) < 0)
		v->partial_frames++;
	struct stacks_frame sf = { nm.func, nm.file, NULL, nm.line };
	return rt_syms__put(slot, f->code, instr, serial, stacks__symbolic_pc(s->st, &sf));
}

/* The frame of Python frames not named: the tick's time for the view
 * was spent. */
static uint64_t budget_pc(struct pyview *v, struct sampler *s)
{
	s->capture_uncached = true;
	return rt_syms__fixed(&v->syms, s->st, 0, "[python frames, not named: over the time budget]");
}

/* The frame of a call the sample was in and the read was not. */
static uint64_t gone_pc(struct pyview *v, struct sampler *s)
{
	return rt_syms__fixed(&v->syms, s->st, 1, "[python call, gone before it was read]");
}

/* Merges the capture's Python frames into s->pcs[0 .. *DEPTH): each native
 * _PyEval_EvalFrameDefault frame, innermost first, stands for the Python
 * frames of one C call into the eval loop, innermost first up to the one
 * that call started with (CPython's own rule: before 3.11 one frame a
 * call; 3.11 marks the first is_entry; from 3.12 an entry frame owned by
 * the C stack sits between two calls' frames).  Native frames between
 * them (C extensions, locks, take_gil) stay where they are.  Python frames
 * left when the native stack has no eval frame for them (it ended early)
 * go on at its outer end, the callers they are.  A thread caught as a
 * call starts or ends (in _PyEval_EvalFrameDefault before its frame is
 * linked, or after it is unlinked) has one eval frame more than its
 * whole chain has calls: the innermost, which stands for no Python frame
 * yet, is left out (kept, it would take the frames of the call outside
 * it, each call's frames then one eval frame too far in). */
static enum unwind_status py_merge(struct rt_view *rv, struct sampler *s, const struct capture *c,
				   enum unwind_status st, size_t *depth)
{
	struct pyview *v = (struct pyview *)rv;
	if (c->rt_len < sizeof(struct py_head))
		return st;
	struct py_head hd;
	memcpy(&hd, c->rt_data, sizeof(hd));
	if (hd.over) {
		s->capture_uncached = true;     /* read again at its next sample */
		return st;
	}
	size_t nf = (c->rt_len - sizeof(struct py_head)) / sizeof(struct py_frame_raw);
	if (!nf && c->rt_after) {
		/* No frame when read, after the sample: every call the sample
		 * was in had returned (a request handled in microseconds). */
		bool any = false;
		for (size_t i = 0; i < *depth; i++)
			if (py_interp__in_eval(v->py, s->pcs[i])) {
				s->pcs[i] = gone_pc(v, s);
				any = true;
			}
		if (any)
			v->gone += c->ticks;
		return st;
	}
	if (!nf)
		return st;
	v->mark_ns = cpu_ns();
	v->merges++;
	memcpy(v->frames, c->rt_data + sizeof(struct py_head), nf * sizeof(struct py_frame_raw));
	size_t n = *depth, max = (size_t)s->cfg.max_depth;
	if (v->native_cap < n) {
		v->native_cap = n;
		v->native = xrealloc(v->native, n * sizeof(*v->native));
	}
	memcpy(v->native, s->pcs, n * sizeof(*v->native));
	size_t out = 0, f = 0, extra = 0;
	bool cut = false;
	if (v->frames[nf - 1].ends == PY_ENDS_WHOLE) {
		size_t calls = 0, evals = 0;
		for (size_t k = 0; k < nf; k++)
			calls += v->frames[k].ends != 0;
		for (size_t i = 0; i < n; i++)
			evals += py_interp__in_eval(v->py, v->native[i]);
		extra = evals > calls ? evals - calls : 0;
		if (extra && !c->rt_after)
			v->entering += c->ticks;
		/* Read after the sample (perf capture), deeper than the native
		 * stack, whole to its root, can be: the thread went on into
		 * calls the sample has no eval frame for.  Its callers' frames
		 * are the sample's (they wait for their callees); the
		 * innermost calls' are not, and are left out. */
		if (c->rt_after && calls > evals && st == UNWIND_COMPLETE) {
			for (size_t k = calls - evals; k && f < nf; f++)
				k -= v->frames[f].ends != 0;
			v->moved += c->ticks;
		}
	}
	struct unwinder *uw = sampler_space_for(s, c->space, c->pid)->uw;
	/* A chain read in part (deeper than PY_MAX_FRAMES, or a frame that
	 * could not be read): its frames go to the innermost eval loops, and
	 * the stack ends, [truncated], after the last one read, rather than
	 * go on with native frames whose Python calls were not read. */
	for (size_t i = 0; i < n && !cut; i++) {
		if (extra && py_interp__in_eval(v->py, v->native[i])) {
			extra--;
			/* Read after the sample: most often a call the thread
			 * returned from meanwhile, whose frame is not known;
			 * said so, not left out (its callers' own time would
			 * take its share). */
			if (c->rt_after && out < max) {
				s->pcs[out++] = gone_pc(v, s);
				v->gone += c->ticks;
			}
			continue;
		}
		if (f < nf && py_interp__in_eval(v->py, v->native[i])) {
			do {
				if (out == max) {
					cut = true;
					break;
				}
				s->pcs[out++] = frame_pc(v, s, &v->frames[f]);
				if (v->frames[f].ends == PY_ENDS_CUT) {
					cut = true;
					break;
				}
			} while (!v->frames[f++].ends && f < nf);
			continue;
		}
		if (uw && unwinder__py_trampoline(uw, v->native[i], i == 0))
			continue;       /* -X perf's: the Python frame stands for it */
		if (out == max)
			cut = true;
		else
			s->pcs[out++] = v->native[i];
	}
	bool matched = f == nf;
	for (; f < nf && !cut; f++) {
		if (out == max)
			cut = true;
		else
			s->pcs[out++] = frame_pc(v, s, &v->frames[f]);
		if (v->frames[f].ends == PY_ENDS_CUT)
			cut = true;
	}
	if (v->frames[nf - 1].ends == PY_ENDS_CUT)
		v->deep += c->ticks;
	v->merged += c->ticks;
	if (c->rt_after)
		v->after += c->ticks;
	if (!matched)
		v->unmatched += c->ticks;
	*depth = out;
	spend(v, v->mark_ns);
	return cut ? UNWIND_TRUNCATED : st;
}

static struct rt_view *py_open(struct sampler *s, pid_t pid, uint32_t space, uint32_t slot_base,
			       char *note, size_t notelen)
{
	(void)slot_base;
	struct space *sp = sampler_due_scan(s, sampler_space_for(s, space, pid), space, pid);
	char why[256];
	struct py_interp *py = sp->ms ? py_interp__new(pid, sp->ms, why, sizeof(why)) : NULL;
	if (!py) {
		if (*why)
			snprintf(note, notelen, "PID %d runs Python, but %s", (int)pid, why);
		return NULL;
	}
	struct pyview *v = xcalloc(1, sizeof(*v));
	v->py = py;
	v->pid = pid;
	v->space = space;
	v->lines = !s->cfg.no_lines;
	v->budget_ns = s->cfg.hz > 0 ? 1000000000ull / (uint64_t)s->cfg.hz / BUDGET_SHARE : 0;
	if (v->budget_ns < BUDGET_MIN_NS)
		v->budget_ns = BUDGET_MIN_NS;
	v->threads = xcalloc(PY_MAX_THREADS, sizeof(*v->threads));
	rt_syms__init(&v->syms);
	v->hints = xcalloc(HINTS, sizeof(*v->hints));
	v->again = xcalloc(PY_MAX_FRAMES, sizeof(*v->again));
	v->best = xcalloc(PY_MAX_FRAMES, sizeof(*v->best));
	v->gil_held = stacks__rt_state(s->st, "gil=held");
	v->gil_free = stacks__rt_state(s->st, "gil=not held");
	v->s = s;
	/* its threads are listed by its first tick, right after */
	target__set_reader(s->t, pid, space, py_read, v);
	return (struct rt_view *)v;
}

static size_t py_stats(const struct rt_view *rv, struct rt_stat *out)
{
	const struct pyview *v = (const struct pyview *)rv;
	uint64_t codes, bad;
	py_interp__counts(v->py, &codes, &bad);
	size_t n = 0;
	out[n++] = (struct rt_stat){ "seen", "seen", v->seen };
	out[n++] = (struct rt_stat){ "merged", "samples with Python frames", v->merged };
	out[n++] = (struct rt_stat){ "after", "of them read at the tick, after the thread's perf "
				     "sample (not stopped)", v->after };
	out[n++] = (struct rt_stat){ "moved", "of those with calls the sample had not made yet "
				     "(their frames left out)", v->moved };
	out[n++] = (struct rt_stat){ "gone", "of those in calls returned from before the read "
				     "([python call, gone before it was read])", v->gone };
	out[n++] = (struct rt_stat){ "torn", "of those whose calls changed during two reads (the "
				     "inner frames left out)", v->torn };
	out[n++] = (struct rt_stat){ "unmatched", "of them with Python frames left over (the native "
				     "stack ended first)", v->unmatched };
	out[n++] = (struct rt_stat){ "entering", "of them caught as a call started or ended (an "
				     "eval frame with no Python frame yet, left out)", v->entering };
	out[n++] = (struct rt_stat){ "code", "code objects named", codes };
	out[n++] = (struct rt_stat){ "unknown", "frames not read ([unknown python frame])",
				     v->partial_frames };
	out[n++] = (struct rt_stat){ "deep", "samples whose Python frames were read in part "
				     "(past 1024, or one unreadable: [truncated])", v->deep };
	out[n++] = (struct rt_stat){ "over_budget", "ticks over the view's time budget (python over "
				     "budget: the rest of the tick's samples without Python frames)", v->over_ticks };
	out[n++] = (struct rt_stat){ "budget_samples", "samples left without Python frames for it",
				     v->over_samples };
	uint64_t emptied;
	size_t bytes = py_interp__code_bytes(v->py, &emptied);
	out[n++] = (struct rt_stat){ "code_kib", "KiB held by the code objects named (16 MiB at most)",
				     (bytes + 1023) / 1024 };
	out[n++] = (struct rt_stat){ "code_emptied", "times the code objects named were dropped for "
				     "that bound", emptied };
	out[n++] = (struct rt_stat){ "code_aged", "code objects dropped, not met for 5 s",
				     v->codes_aged };
	return n;
}

static void py_keep(struct rt_view *rv, struct stacks *st)
{
	(void)rv;
	(void)st;                       /* it holds no stack ids */
}

static void py_free(struct rt_view *rv)
{
	struct pyview *v = (struct pyview *)rv;
	if (!v)
		return;
	py_interp__free(v->py);
	free(v->threads);
	free(v->native);
	rt_syms__free(&v->syms);
	free(v->hints);
	free(v->again);
	free(v->best);
	free(v);
}

const struct rt_ops rt_python = {
	.name = "python", .unit = "Python thread", .units = "Python threads",
	.frames_only = 1,
	.open = py_open, .tick = py_tick, .thread = py_thread_of, .stats = py_stats,
	.keep = py_keep, .free = py_free, .merge = py_merge,
};
