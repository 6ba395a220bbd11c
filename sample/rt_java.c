#include "sample/internal.h"
#include "sample/rt_syms.h"
#include "sample/runtime.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "jvm/jvm.h"
#include "profile/stacks.h"
#include "util/remote.h"
#include "util/xalloc.h"

/* The JVM's view (sample/runtime.h): a HotSpot JVM's Java methods in every
 * Java thread, read from its memory through the tables libjvm.so exports
 * (jvm/), merged into the native stack in place of the interpreter's and
 * the code cache's frames, which the native unwinder cannot name.
 *
 * The view keeps a table of the Java threads by OS thread id (read again
 * every 100 ticks, and at the next tick after a capture met a thread not
 * in it).  At each capture of one, while it cannot run, the target calls
 * java_read(): a thread outside Java code (in native code, in the VM,
 * blocked) has a last Java frame, from which its Java frames are walked
 * then.  A thread in Java code has none: java_merge() walks from the
 * registers the capture holds, over its copy of the stack.  After the
 * capture the frames are named (class.method, file, line: kept for 300
 * ticks, as classes are unloaded and their memory reused) and put in place
 * of the native frames that are Java code; the native frames that called
 * into Java (JavaCalls::call_helper, the thread's start) follow. */

#define OUTER_FRAMES 48
#define OUTERS 256

struct jv_th {
	pid_t tid;
	uint64_t thread;
	char name[64];                  /* its java.lang.Thread's name, "" if not read */
};

struct jvview {
	struct jvm *jvm;
	pid_t pid;
	uint32_t space;
	int lines;
	struct jv_th *threads;
	size_t nthreads;
	struct jvm_thread *raw;
	int refresh;
	uint64_t ticks, read_tick, named_tick, reads;
	uint32_t states[5];             /* stacks__rt_state("java_state=...") */
	struct jvm_frame frames[JVM_MAX_FRAMES];
	uint64_t *native, *javapcs;
	size_t native_cap;
	unsigned char *outer;           /* a copy of the stack above the Java frames */
	struct rt_syms syms;            /* (method, bci or pc) -> its symbolic frame */
	/* the native frames that called Java, by the call stub's caller's sp
	 * and return address: the thread's first frames, the same for its
	 * life (direct-mapped) */
	struct outer {
		uint64_t sp, pc;
		uint32_t n, status;
		uint64_t pcs[OUTER_FRAMES];
	} *outers;
	uint64_t outer_cached, torn;
	uint64_t merged, walked_regs, walked_anchor, unended, refound, reunwound, stubs, unknown;
	struct sampler *s;
};

#define THREADS_EVERY 100
#define NAMES_EVERY 10                  /* reads of the thread table */
#define NAMES_TICKS 300
#define OUTER_COPY (64u << 10)

/* A run of Java frames between two native ones: how many frames, how the
 * walk ended, and the native frame that called it (JVM_END_ENTRY). */
struct jv_seg {
	uint32_t n, end;
	uint64_t next_sp, next_pc, next_fp;
};

#define JV_MAX_SEGS 8           /* Java in native in Java...: deeper stays [unknown] */

struct jv_head {
	uint32_t state, nseg, anchored, pad;
	struct jv_seg seg[JV_MAX_SEGS];
};

/* Walks the runs of Java frames from SP, PC, FP into FR (at most MAX in
 * all), each run's caller's from the anchor its call stub's JavaCallWrapper
 * saved; the runs into SEG.  Returns how many frames. */
static size_t walk_all(struct jvm *j, uint64_t sp, uint64_t pc, uint64_t fp, struct jvm_frame *fr,
		       size_t max, struct jv_seg *seg, uint32_t *nseg)
{
	size_t all = 0;
	*nseg = 0;
	while (*nseg < JV_MAX_SEGS && all < max) {
		struct jv_seg *g = &seg[(*nseg)++];
		size_t n;
		uint64_t efp;
		g->end = jvm__walk(j, sp, pc, fp, fr + all, max - all, &n, &g->next_sp, &g->next_pc,
				   &g->next_fp, &efp);
		g->n = (uint32_t)n;
		all += n;
		if (g->end != JVM_END_ENTRY || jvm__caller_anchor(j, efp, &sp, &pc, &fp) < 0)
			break;
	}
	return all;
}

static int by_tid(const void *a, const void *b)
{
	pid_t x = ((const struct jv_th *)a)->tid, y = ((const struct jv_th *)b)->tid;
	return (x > y) - (x < y);
}

/* Reads the Java threads again; their names: a new thread's, and every
 * thread's at every NAMES_EVERY-th read (Thread.setName). */
static int read_threads(struct jvview *v)
{
	int n = jvm__threads(v->jvm, v->raw, JVM_MAX_THREADS);
	if (n < 0)
		return -1;
	bool all = v->reads++ % NAMES_EVERY == 0;
	struct jv_th *old = v->threads;
	size_t nold = v->nthreads;
	struct jv_th *t = xcalloc((size_t)n + 1, sizeof(*t));
	for (int i = 0; i < n; i++) {
		t[i].tid = v->raw[i].tid;
		t[i].thread = v->raw[i].thread;
		struct jv_th key = { .tid = t[i].tid };
		const struct jv_th *was = nold ? bsearch(&key, old, nold, sizeof(key), by_tid) : NULL;
		if (was && was->thread == t[i].thread && !all)
			memcpy(t[i].name, was->name, sizeof(t[i].name));
		else if (jvm__thread_name(v->jvm, t[i].thread, t[i].name, sizeof(t[i].name)) < 0)
			t[i].name[0] = 0;
	}
	free(old);
	v->threads = t;
	qsort(v->threads, (size_t)n, sizeof(*v->threads), by_tid);
	v->nthreads = (size_t)n;
	v->read_tick = v->ticks;
	v->refresh = 0;
	return 0;
}

static const struct jv_th *thread_of(const struct jvview *v, pid_t tid)
{
	struct jv_th key = { .tid = tid };
	return v->nthreads ? bsearch(&key, v->threads, v->nthreads, sizeof(key), by_tid) : NULL;
}

/* The target's reader (target_reader_fn): the thread's state, and, when
 * it has a last Java frame, its Java frames walked from there. */
static size_t java_read(void *arg, pid_t pid, pid_t tid, int running, void *out, size_t cap)
{
	struct jvview *v = arg;
	(void)pid;
	const struct jv_th *t = thread_of(v, tid);
	if (!t) {
		v->refresh = 1;
		return 0;
	}
	struct jv_head h = { 0 };
	struct jvm_thread jt;
	if (cap < sizeof(h) || jvm__thread(v->jvm, t->thread, &jt) < 0)
		return 0;
	h.state = (uint32_t)jt.state;
	size_t n = 0;
	if (jt.sp) {
		size_t max = (cap - sizeof(h)) / sizeof(struct jvm_frame);
		struct jvm_frame *fr = (struct jvm_frame *)((char *)out + sizeof(h));
		n = walk_all(v->jvm, jt.sp, jt.pc, jt.fp, fr, max, h.seg, &h.nseg);
		h.anchored = 1;
		/* running (read after its perf sample): the walk holds only if
		 * the thread stayed outside Java code all along */
		struct jvm_thread again;
		if (running && (jvm__thread(v->jvm, t->thread, &again) < 0 || again.sp != jt.sp ||
				again.pc != jt.pc || again.fp != jt.fp)) {
			n = 0;
			h.nseg = 0;
			h.anchored = 0;
			v->torn++;
		}
	}
	memcpy(out, &h, sizeof(h));
	return sizeof(h) + n * sizeof(struct jvm_frame);
}

static int java_tick(struct rt_view *rv, struct sampler *s, char *note, size_t notelen)
{
	struct jvview *v = (struct jvview *)rv;
	(void)s;
	v->ticks++;
	if ((v->refresh && v->ticks > v->read_tick) || v->ticks - v->read_tick >= THREADS_EVERY)
		if (read_threads(v) < 0 && !v->nthreads) {
			snprintf(note, notelen, "PID %d: its JVM's threads can no longer be read: no Java "
				 "frames from now on", (int)v->pid);
			return -1;
		}
	if (v->ticks - v->named_tick >= NAMES_TICKS) {
		rt_syms__clear(&v->syms);
		v->named_tick = v->ticks;
	}
	return 0;
}

static uint32_t java_thread_of(struct rt_view *rv, const struct capture *c, uint32_t *state)
{
	struct jvview *v = (struct jvview *)rv;
	*state = 0;
	const struct jv_th *t = thread_of(v, c->tid);
	if (t && t->name[0])
		sampler_name_thread(v->s, c->slot, c->pid, c->tid, "java_thread", t->name);
	if (c->rt_len >= sizeof(struct jv_head)) {
		struct jv_head h;
		memcpy(&h, c->rt_data, sizeof(h));
		if (h.state < 5)
			*state = v->states[h.state];
	}
	return c->slot;
}

/* The symbolic frame of Java frame F. */
static uint64_t frame_pc(struct jvview *v, struct sampler *s, const struct jvm_frame *f)
{
	uint64_t a = f->kind == JVM_STUB ? f->blob : f->method;
	uint64_t b = f->kind == JVM_STUB ? 0 : f->bci >= 0 ? (uint64_t)(uint32_t)f->bci : f->pc;
	if (!v->lines && f->kind != JVM_STUB)
		b = f->kind;
	struct rt_sym *slot;
	uint64_t sym = rt_syms__get(&v->syms, s->st, a, b, 0, &slot);
	if (sym)
		return sym;
	char name[600], file[256];
	struct stacks_frame sf = { name, NULL, NULL, 0 };
	if (f->kind == JVM_STUB) {
		char stub[80];
		v->stubs++;
		if (jvm__blob_name(v->jvm, f->blob, stub, sizeof(stub)) < 0)
			snprintf(stub, sizeof(stub), "unknown");
		snprintf(name, sizeof(name), "[%s]", stub);
	} else if (jvm__method_name(v->jvm, f->method, name, sizeof(name), file, sizeof(file)) == 0) {
		sf.file = file[0] ? file : NULL;
		if (v->lines)
			sf.line = jvm__line(v->jvm, f->method, f->bci);
	} else {
		v->unknown++;
		snprintf(name, sizeof(name), "[unknown java frame]");
	}
	return rt_syms__put(slot, a, b, 0, stacks__symbolic_pc(s->st, &sf));
}

static enum unwind_status unwind_outer_now(struct jvview *v, struct sampler *s,
					   const struct capture *c, const struct jv_head *h,
					   size_t *depth);

/* The native frames that called Java: unwound again from the frame the
 * walk ended at, over a copy of the stack read now (those frames, the
 * thread's first ones, do not change while it runs Java code), into
 * s->pcs[0 .. *DEPTH). */
static enum unwind_status unwind_outer(struct jvview *v, struct sampler *s,
				       const struct capture *c, const struct jv_head *h,
				       size_t *depth)
{
	struct outer *o = &v->outers[(h->seg[0].next_sp >> 4 ^ h->seg[0].next_pc) % OUTERS];
	if (o->sp == h->seg[0].next_sp && o->pc == h->seg[0].next_pc) {
		memcpy(s->pcs, o->pcs, o->n * sizeof(*s->pcs));
		*depth = o->n;
		v->outer_cached += c->ticks;
		return (enum unwind_status)o->status;
	}
	enum unwind_status st = unwind_outer_now(v, s, c, h, depth);
	if (*depth <= OUTER_FRAMES) {
		o->sp = h->seg[0].next_sp;
		o->pc = h->seg[0].next_pc;
		o->n = (uint32_t)*depth;
		o->status = (uint32_t)st;
		memcpy(o->pcs, s->pcs, *depth * sizeof(*s->pcs));
	}
	return st;
}

static enum unwind_status unwind_outer_now(struct jvview *v, struct sampler *s,
					   const struct capture *c, const struct jv_head *h,
					   size_t *depth)
{
	size_t len = OUTER_COPY;
	while (len >= 4096 && remote__read(c->pid, h->seg[0].next_sp, v->outer, len) < 0)
		len /= 2;
	*depth = 0;
	if (len < 4096)
		return UNWIND_PARTIAL;
	struct user_regs_struct regs = c->regs;
	regs.rip = h->seg[0].next_pc;
	regs.rsp = h->seg[0].next_sp;
	regs.rbp = h->seg[0].next_fp;
	uint64_t *pcs;
	uint32_t space;
	return sampler_unwind_saved(s, c->pid, c->space, &regs, v->outer, len, len, &pcs, depth,
				    &space);
}

/* Puts the capture's Java frames in place of the native frames that are
 * Java code, run by run: the native frames before a run's first Java
 * frame (innermost: the VM's, a native method's), the run's Java frames,
 * then the native frames from the one that called the run (the call
 * stub's caller) found in the native stack, or unwound again from there,
 * up to the next run's first Java frame, and so on to the root. */
static enum unwind_status java_merge(struct rt_view *rv, struct sampler *s, const struct capture *c,
				     enum unwind_status st, size_t *depth)
{
	struct jvview *v = (struct jvview *)rv;
	if (c->rt_len < sizeof(struct jv_head))
		return st;
	struct jv_head h;
	memcpy(&h, c->rt_data, sizeof(h));
	size_t nf = 0, n = *depth, max = (size_t)s->cfg.max_depth;
	bool in_java = !c->partial_regs && c->stack_len && jvm__is_java(v->jvm, c->regs.rip);
	if (h.anchored && !in_java) {
		nf = (c->rt_len - sizeof(h)) / sizeof(struct jvm_frame);
		if (nf > JVM_MAX_FRAMES)
			nf = JVM_MAX_FRAMES;
		memcpy(v->frames, c->rt_data + sizeof(h), nf * sizeof(struct jvm_frame));
		if (h.nseg > JV_MAX_SEGS)
			h.nseg = JV_MAX_SEGS;
		v->walked_anchor += nf ? c->ticks : 0;
	} else if (in_java) {
		jvm__set_stack(v->jvm, c->stack_addr, c->stack, c->stack_len);
		nf = walk_all(v->jvm, c->regs.rsp, c->regs.rip, c->regs.rbp, v->frames, JVM_MAX_FRAMES,
			      h.seg, &h.nseg);
		jvm__set_stack(v->jvm, 0, NULL, 0);
		v->walked_regs += nf ? c->ticks : 0;
	}
	if (!nf || !h.nseg)
		return st;
	/* the native frames, as unwound (then, past a run whose caller is not
	 * among them, as unwound again from its caller) */
	if (v->native_cap < max + 1) {
		v->native_cap = max + 1;
		v->native = xrealloc(v->native, v->native_cap * sizeof(*v->native));
	}
	memcpy(v->native, s->pcs, n * sizeof(*v->native));
	size_t out = 0, pos = 0, f = 0;
	enum unwind_status end = st;
	bool cut = false, done = false;
	for (uint32_t g = 0; g < h.nseg && !cut && !done; g++) {
		const struct jv_seg *seg = &h.seg[g];
		size_t i0 = pos;
		while (i0 < n && !jvm__is_java(v->jvm, v->native[i0]))
			i0++;
		for (; pos < i0 && !cut; pos++)         /* the native frames before */
			if (out == max)
				cut = true;
			else
				v->javapcs[out++] = v->native[pos];
		for (uint32_t k = 0; k < seg->n && f < nf && !cut; k++, f++)
			if (out == max)
				cut = true;
			else
				v->javapcs[out++] = frame_pc(v, s, &v->frames[f]);
		if (cut)
			break;
		if (seg->end != JVM_END_ENTRY) {
			v->unended += c->ticks;
			end = UNWIND_TRUNCATED;
			done = true;
			break;
		}
		/* the native stack holds return addresses as they are, or one
		 * byte back (inside the call) */
		size_t i1 = i0;
		while (i1 < n && v->native[i1] != seg->next_pc && v->native[i1] + 1 != seg->next_pc)
			i1++;
		if (i1 < n) {
			pos = i1;
			v->refound += c->ticks;
			continue;
		}
		struct jv_head one = { .seg = { *seg } };
		size_t tail;
		end = unwind_outer(v, s, c, &one, &tail);       /* into s->pcs */
		v->reunwound += c->ticks;
		if (tail > max)
			tail = max;
		memcpy(v->native, s->pcs, tail * sizeof(*v->native));
		n = tail;
		pos = 0;
	}
	for (; !done && pos < n && !cut; pos++) {
		if (out == max)
			cut = true;
		else
			v->javapcs[out++] = v->native[pos];
	}
	memcpy(s->pcs, v->javapcs, out * sizeof(*s->pcs));
	*depth = out;
	v->merged += c->ticks;
	return cut ? UNWIND_TRUNCATED : end;
}

static struct rt_view *java_open(struct sampler *s, pid_t pid, uint32_t space, uint32_t slot_base,
				 char *note, size_t notelen)
{
	(void)slot_base;
	struct space *sp = sampler_due_scan(s, sampler_space_for(s, space, pid), space, pid);
	char why[256] = "";
	struct jvm *j = sp->ms ? jvm__new(pid, sp->ms, why, sizeof(why)) : NULL;
	if (!j) {
		if (*why)
			snprintf(note, notelen, "PID %d runs a JVM, but %s", (int)pid, why);
		return NULL;
	}
	struct jvview *v = xcalloc(1, sizeof(*v));
	v->jvm = j;
	v->pid = pid;
	v->space = space;
	v->lines = !s->cfg.no_lines;
	v->raw = xcalloc(JVM_MAX_THREADS, sizeof(*v->raw));
	rt_syms__init(&v->syms);
	v->javapcs = xcalloc((size_t)s->cfg.max_depth + 1, sizeof(*v->javapcs));
	v->outer = xmalloc(OUTER_COPY);
	v->outers = xcalloc(OUTERS, sizeof(*v->outers));
	static const char *const names[5] = { "java_state=other", "java_state=in native",
					      "java_state=in vm", "java_state=in java",
					      "java_state=blocked" };
	for (int i = 0; i < 5; i++)
		v->states[i] = stacks__rt_state(s->st, names[i]);
	v->s = s;
	read_threads(v);
	v->refresh = 1;
	target__set_reader(s->t, pid, space, java_read, v);
	return (struct rt_view *)v;
}

static size_t java_stats(const struct rt_view *rv, struct rt_stat *out)
{
	const struct jvview *v = (const struct jvview *)rv;
	size_t n = 0;
	out[n++] = (struct rt_stat){ "seen", "seen", v->nthreads };
	out[n++] = (struct rt_stat){ "merged", "samples with Java frames", v->merged };
	out[n++] = (struct rt_stat){ "anchored", "of them walked from the thread's last Java frame "
				     "(outside Java code)", v->walked_anchor };
	out[n++] = (struct rt_stat){ "registers", "of them walked from the registers (in Java "
				     "code)", v->walked_regs };
	out[n++] = (struct rt_stat){ "refound", "of them whose callers were the native stack's",
				     v->refound };
	out[n++] = (struct rt_stat){ "reunwound", "of them whose callers were unwound again from "
				     "the call stub", v->reunwound };
	out[n++] = (struct rt_stat){ "outer_cached", "of those as unwound before (the same call "
				     "stub's caller)", v->outer_cached };
	out[n++] = (struct rt_stat){ "unended", "of them whose Java frames did not end at the call "
				     "stub ([truncated])", v->unended };
	out[n++] = (struct rt_stat){ "torn", "read after a perf sample, the thread back in Java "
				     "code meanwhile (no Java frames)", v->torn };
	out[n++] = (struct rt_stat){ "stubs", "stub frames named", v->stubs };
	out[n++] = (struct rt_stat){ "unknown", "frames whose method was not read ([unknown java "
				     "frame])", v->unknown };
	return n;
}

static void java_keep(struct rt_view *rv, struct stacks *st)
{
	(void)rv;
	(void)st;
}

static void java_free(struct rt_view *rv)
{
	struct jvview *v = (struct jvview *)rv;
	if (!v)
		return;
	jvm__free(v->jvm);
	free(v->threads);
	free(v->raw);
	free(v->native);
	free(v->javapcs);
	free(v->outer);
	free(v->outers);
	rt_syms__free(&v->syms);
	free(v);
}

const struct rt_ops rt_java = {
	.name = "java", .unit = "Java thread", .units = "Java threads",
	.frames_only = 1,
	.open = java_open, .tick = java_tick, .thread = java_thread_of, .stats = java_stats,
	.keep = java_keep, .free = java_free, .merge = java_merge,
};
