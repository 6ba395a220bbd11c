#include "sample/internal.h"
#include "sample/rt_syms.h"
#include "sample/runtime.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "profile/stacks.h"
#include "ruby/vm.h"
#include "util/xalloc.h"

/* Ruby's view (sample/runtime.h): a CRuby program's own methods and
 * blocks, read from its memory in every Ruby thread and merged into the
 * native stack, as CPython's (sample/rt_python.c) and PHP's views do.
 *
 * Every Ruby thread is an OS thread.  The view keeps a table of the VM's
 * threads by OS thread id (read again every second, and at the next tick
 * when a capture met a thread not in it).  At each capture of one of
 * them, while it cannot run (stopped, or blocked between the two looks at
 * it), the target calls rb_read(): the thread's execution context now (a
 * Fiber switch changes it), the GVL's holder and the control frames (the
 * iseq, pc and flags of each).  After the capture, rb_merge() names the
 * frames (the iseq's label, path, and the line at the pc; kept in a cache
 * emptied every few seconds, as iseqs die and their memory is reused) and
 * puts each C-level run of the VM's frames in place of the native
 * rb_vm_exec frame that runs it. */

struct rb_th {
	pid_t tid;
	uint64_t th;
	char name[64];                  /* Thread#name, "" when it has none */
};

struct rbview {
	struct rb_vm *vm;
	pid_t pid;
	uint32_t space;
	int lines;
	struct rb_th *threads;
	size_t nthreads;
	struct rb_thread_raw *raw;      /* rb_vm__threads()'s buffer */
	uint64_t ractor;
	int refresh;                    /* a capture met a thread not in the table */
	uint64_t ticks, read_tick;
	uint32_t gvl_held, gvl_free;    /* stacks__rt_state("gvl=held"), "gvl=not held" */
	struct rb_frame_raw frames[RB_MAX_FRAMES];
	struct rb_frame_raw *again;     /* rb_read()'s second read */
	uint64_t *native;
	size_t native_cap;
	/* (iseq, pc) -> its symbolic frame, emptied every NAMES_TICKS ticks */
	struct rt_syms syms;
	uint64_t named_tick;
	uint64_t merged, after, torn, unmatched, entering, deep, unknown, moved;
	uint64_t entering_pc;
	struct sampler *s;
};

#define READ_TRIES 5
#define THREADS_EVERY 100               /* ticks between reads of the thread table */
#define NAMES_TICKS 300                 /* ticks a name is kept before read again */

/* What the reader leaves in a capture before the frames. */
struct rb_head {
	uint64_t th, gvl;
	uint32_t truncated, torn;
};

static int by_tid(const void *a, const void *b)
{
	pid_t x = ((const struct rb_th *)a)->tid, y = ((const struct rb_th *)b)->tid;
	return (x > y) - (x < y);
}

/* Reads the VM's thread table again.  0, or -1: the VM cannot be read. */
static int read_threads(struct rbview *v)
{
	uint64_t gvl;
	int n = rb_vm__threads(v->vm, v->raw, RB_MAX_THREADS, &gvl);
	if (n < 0)
		return -1;
	if (rb_vm__ractor(v->vm, &v->ractor) < 0)
		return -1;
	v->threads = xrealloc(v->threads, ((size_t)n + 1) * sizeof(*v->threads));
	size_t k = 0;
	for (int i = 0; i < n; i++)
		if (v->raw[i].tid > 0) {
			struct rb_th *t = &v->threads[k++];
			t->tid = v->raw[i].tid;
			t->th = v->raw[i].th;
			if (rb_vm__string(v->vm, v->raw[i].name, t->name, sizeof(t->name)) < 0)
				t->name[0] = 0;
		}
	qsort(v->threads, k, sizeof(*v->threads), by_tid);
	v->nthreads = k;
	v->read_tick = v->ticks;
	v->refresh = 0;
	return 0;
}

static const struct rb_th *thread_of(const struct rbview *v, pid_t tid)
{
	struct rb_th key = { .tid = tid };
	return v->nthreads ? bsearch(&key, v->threads, v->nthreads, sizeof(key), by_tid) : NULL;
}

static bool same(const struct rb_frame_raw *a, const struct rb_frame_raw *b)
{
	return a->iseq == b->iseq && a->flags == b->flags && a->pc == b->pc;
}

/* The target's reader (target_reader_fn), py_read()'s rules: while the
 * thread cannot run, one read; RUNNING (right after its perf sample), the
 * frames are read until two reads in a row agree (the same frames, each
 * at the same pc but the innermost); after READ_TRIES only the outer
 * frames the last two reads agreed on are kept (counted: torn). */
static size_t rb_read(void *arg, pid_t pid, pid_t tid, int running, void *out, size_t cap)
{
	struct rbview *v = arg;
	(void)pid;
	const struct rb_th *t = thread_of(v, tid);
	struct rb_head h = { 0, 0, 0, 0 };
	uint64_t ec;
	if (!t) {
		v->refresh = 1;
		return 0;
	}
	if (cap < sizeof(h) || rb_vm__ec(v->vm, t->th, &ec) < 0 || !ec)
		return 0;
	h.th = t->th;
	rb_vm__gvl(v->vm, v->ractor, &h.gvl);
	size_t max = (cap - sizeof(h)) / sizeof(struct rb_frame_raw);
	if (max > RB_MAX_FRAMES)
		max = RB_MAX_FRAMES;
	struct rb_frame_raw *fr = (struct rb_frame_raw *)((char *)out + sizeof(h));
	bool trunc = false, trunc2;
	size_t n = rb_vm__frames(v->vm, ec, fr, max, &trunc);
	for (int try = 1; running && n && try < READ_TRIES; try++) {
		size_t m = rb_vm__frames(v->vm, ec, v->again, max, &trunc2);
		bool agree = m == n && trunc == trunc2 && v->again[0].iseq == fr[0].iseq &&
			     v->again[0].flags == fr[0].flags;
		for (size_t i = 1; agree && i < n; i++)
			agree = same(&fr[i], &v->again[i]);
		if (agree)
			goto done;
		/* the outer frames both reads have */
		size_t c = 0;
		while (c < n && c < m && same(&fr[n - 1 - c], &v->again[m - 1 - c]))
			c++;
		if (try == READ_TRIES - 1) {
			memmove(fr, fr + (n - c), c * sizeof(*fr));
			n = c;
			h.torn = 1;
			v->torn++;
			break;
		}
		memcpy(fr, v->again, m * sizeof(*fr));
		n = m;
		trunc = trunc2;
	}
done:
	h.truncated = trunc;
	memcpy(out, &h, sizeof(h));
	return sizeof(h) + n * sizeof(struct rb_frame_raw);
}

static int rb_tick(struct rt_view *rv, struct sampler *s, char *note, size_t notelen)
{
	struct rbview *v = (struct rbview *)rv;
	(void)s;
	v->ticks++;
	if ((v->refresh && v->ticks > v->read_tick) || v->ticks - v->read_tick >= THREADS_EVERY)
		if (read_threads(v) < 0 && !v->nthreads) {
			snprintf(note, notelen, "PID %d: its Ruby VM can no longer be read: no Ruby "
				 "frames from now on", (int)v->pid);
			return -1;
		}
	if (v->ticks - v->named_tick >= NAMES_TICKS) {
		rt_syms__clear(&v->syms);
		v->named_tick = v->ticks;
	}
	return 0;
}

static uint32_t rb_thread_of(struct rt_view *rv, const struct capture *c, uint32_t *state)
{
	struct rbview *v = (struct rbview *)rv;
	*state = 0;
	if (c->rt_len < sizeof(struct rb_head))
		return c->slot;
	struct rb_head h;
	memcpy(&h, c->rt_data, sizeof(h));
	*state = h.gvl && h.gvl == h.th ? v->gvl_held : v->gvl_free;
	const struct rb_th *t = thread_of(v, c->tid);
	if (t && t->name[0])
		sampler_name_thread(v->s, c->slot, c->pid, c->tid, "ruby_thread", t->name);
	return c->slot;
}

/* The symbolic frame of Ruby frame F. */
static uint64_t frame_pc(struct rbview *v, struct sampler *s, const struct rb_frame_raw *f)
{
	uint64_t pc = v->lines ? f->pc : 0;
	struct rt_sym *slot;
	uint64_t sym = rt_syms__get(&v->syms, s->st, f->iseq, pc, 0, &slot);
	if (sym)
		return sym;
	char label[RB_MAX_STR + 1], path[RB_MAX_STR + 1];
	int first;
	struct stacks_frame sf = { "[unknown ruby frame]", NULL, NULL, 0 };
	if (rb_vm__iseq_name(v->vm, f->iseq, label, sizeof(label), path, sizeof(path), &first) == 0 &&
	    label[0]) {
		sf.func = label;
		sf.file = path[0] ? path : NULL;
		sf.line = v->lines ? rb_vm__line(v->vm, f->iseq, f->pc) : first;
		if (v->lines && sf.line <= 0)
			sf.line = first;
	} else {
		v->unknown++;
	}
	return rt_syms__put(slot, f->iseq, pc, 0, stacks__symbolic_pc(s->st, &sf));
}

static bool in_exec(const struct rbview *v, uint64_t pc)
{
	/* a return address: the call is the byte before it */
	return pc > v->vm->exec_lo && pc <= v->vm->exec_hi;
}

/* A Ruby frame that ends a run of the VM begun from C (VM_FRAME_FLAG_FINISH:
 * an rb_vm_exec frame returns when it does). */
static bool ends_run(const struct rb_frame_raw *f)
{
	return rb_frame__ruby(f) && (f->flags & RUBY_FRAME_FLAG_FINISH);
}

/* Puts s->pcs[OUT++] = P unless the stack is full (*CUT then). */
static void put(struct sampler *s, size_t *out, size_t max, uint64_t p, bool *cut)
{
	if (*out == max)
		*cut = true;
	else
		s->pcs[(*out)++] = p;
}

/* Merges the capture's Ruby frames into s->pcs[0 .. *DEPTH): each native
 * rb_vm_exec frame, innermost first, stands for the Ruby frames of one run
 * of the VM begun from C, innermost first up to the one flagged FINISH
 * (the thread's block, a block yielded to from C, a method called by
 * rb_funcall, the main script).  C functions' frames (Integer#times,
 * Kernel#sleep: their own native frames, rb_f_sleep, stay where they are)
 * are not repeated.  Runs the native stack has no rb_vm_exec for yet (a
 * frame pushed, its run about to start) go at the innermost end; an
 * rb_vm_exec more than the runs (caught as a run ends) is left out; Ruby
 * frames left when the native stack ends go on at its outer end. */
static enum unwind_status rb_merge(struct rt_view *rv, struct sampler *s, const struct capture *c,
				   enum unwind_status st, size_t *depth)
{
	struct rbview *v = (struct rbview *)rv;
	if (c->rt_len < sizeof(struct rb_head) || !v->vm->exec_hi)
		return st;
	struct rb_head h;
	memcpy(&h, c->rt_data, sizeof(h));
	size_t nraw = (c->rt_len - sizeof(h)) / sizeof(struct rb_frame_raw), nf = 0;
	if (nraw > RB_MAX_FRAMES)
		nraw = RB_MAX_FRAMES;
	const struct rb_frame_raw *raw = (const struct rb_frame_raw *)(c->rt_data + sizeof(h));
	for (size_t i = 0; i < nraw; i++) {
		struct rb_frame_raw f;
		memcpy(&f, raw + i, sizeof(f));
		if (rb_frame__ruby(&f))
			v->frames[nf++] = f;
	}
	if (!nf)
		return st;
	size_t n = *depth, max = (size_t)s->cfg.max_depth;
	if (v->native_cap < n) {
		v->native_cap = n;
		v->native = xrealloc(v->native, n * sizeof(*v->native));
	}
	memcpy(v->native, s->pcs, n * sizeof(*v->native));
	size_t runs = 0, execs = 0;
	for (size_t k = 0; k < nf; k++)
		runs += ends_run(&v->frames[k]);
	if (!ends_run(&v->frames[nf - 1]))
		runs++;                 /* the outermost run, not read whole (truncated) */
	for (size_t i = 0; i < n; i++)
		execs += in_exec(v, v->native[i]);
	size_t out = 0, f = 0, extra = execs > runs ? execs - runs : 0;
	bool cut = false;
	if (extra)
		v->entering += c->ticks;
	/* runs not begun yet: at the innermost end */
	for (size_t k = runs > execs ? runs - execs : 0; k && f < nf; f++) {
		put(s, &out, max, frame_pc(v, s, &v->frames[f]), &cut);
		k -= ends_run(&v->frames[f]);
	}
	if (runs > execs)
		v->moved += c->ticks;
	for (size_t i = 0; i < n && !cut; i++) {
		bool exec = in_exec(v, v->native[i]);
		if (exec && extra) {
			extra--;
			continue;
		}
		if (exec && f < nf) {
			do
				put(s, &out, max, frame_pc(v, s, &v->frames[f]), &cut);
			while (!cut && !ends_run(&v->frames[f++]) && f < nf);
			continue;
		}
		put(s, &out, max, v->native[i], &cut);
	}
	if (f < nf)
		v->unmatched += c->ticks;
	for (; f < nf && !cut; f++)
		put(s, &out, max, frame_pc(v, s, &v->frames[f]), &cut);
	if (h.truncated)
		v->deep += c->ticks;
	v->merged += c->ticks;
	if (c->rt_after)
		v->after += c->ticks;
	*depth = out;
	return cut || h.truncated ? UNWIND_TRUNCATED : st;
}

static struct rt_view *rb_open(struct sampler *s, pid_t pid, uint32_t space, uint32_t slot_base,
			       char *note, size_t notelen)
{
	(void)slot_base;
	struct space *sp = sampler_due_scan(s, sampler_space_for(s, space, pid), space, pid);
	char why[256] = "";
	struct rb_vm *vm = sp->ms ? rb_vm__new(pid, sp->ms, why, sizeof(why)) : NULL;
	if (!vm) {
		if (*why)
			snprintf(note, notelen, "PID %d runs Ruby, but %s", (int)pid, why);
		return NULL;
	}
	if (!vm->exec_hi) {
		snprintf(note, notelen, "PID %d runs Ruby %s, but its rb_vm_exec has no size: no Ruby "
			 "frames", (int)pid, vm->version);
		rb_vm__free(vm);
		return NULL;
	}
	struct rbview *v = xcalloc(1, sizeof(*v));
	v->vm = vm;
	v->pid = pid;
	v->space = space;
	v->lines = !s->cfg.no_lines;
	v->raw = xcalloc(RB_MAX_THREADS, sizeof(*v->raw));
	rt_syms__init(&v->syms);
	v->again = xcalloc(RB_MAX_FRAMES, sizeof(*v->again));
	v->gvl_held = stacks__rt_state(s->st, "gvl=held");
	v->gvl_free = stacks__rt_state(s->st, "gvl=not held");
	v->s = s;
	read_threads(v);                /* a VM not started yet is read at the next ticks */
	v->refresh = 1;
	target__set_reader(s->t, pid, space, rb_read, v);
	return (struct rt_view *)v;
}

static size_t rb_stats(const struct rt_view *rv, struct rt_stat *out)
{
	const struct rbview *v = (const struct rbview *)rv;
	size_t n = 0;
	out[n++] = (struct rt_stat){ "seen", "seen", v->nthreads };
	out[n++] = (struct rt_stat){ "merged", "samples with Ruby frames", v->merged };
	out[n++] = (struct rt_stat){ "after", "of them read at the tick, after the thread's perf "
				     "sample (not stopped)", v->after };
	out[n++] = (struct rt_stat){ "torn", "of those whose frames changed during two reads (the "
				     "inner frames left out)", v->torn };
	out[n++] = (struct rt_stat){ "moved", "of them with a run of the VM pushed but not begun "
				     "(its frames innermost)", v->moved };
	out[n++] = (struct rt_stat){ "unmatched", "of them with Ruby frames left over (the native "
				     "stack ended first)", v->unmatched };
	out[n++] = (struct rt_stat){ "entering", "of them caught as a run of the VM ended (an "
				     "rb_vm_exec frame with no Ruby frame, left out)", v->entering };
	out[n++] = (struct rt_stat){ "unknown", "frames not read ([unknown ruby frame])",
				     v->unknown };
	out[n++] = (struct rt_stat){ "deep", "samples whose Ruby frames were read in part (past "
				     "1024: [truncated])", v->deep };
	return n;
}

static void rb_keep(struct rt_view *rv, struct stacks *st)
{
	(void)rv;
	(void)st;
}

static void rb_free(struct rt_view *rv)
{
	struct rbview *v = (struct rbview *)rv;
	if (!v)
		return;
	rb_vm__free(v->vm);
	free(v->threads);
	free(v->raw);
	free(v->native);
	rt_syms__free(&v->syms);
	free(v->again);
	free(v);
}

const struct rt_ops rt_ruby = {
	.name = "ruby", .unit = "Ruby thread", .units = "Ruby threads",
	.frames_only = 1,
	.open = rb_open, .tick = rb_tick, .thread = rb_thread_of, .stats = rb_stats,
	.keep = rb_keep, .free = rb_free, .merge = rb_merge,
};
