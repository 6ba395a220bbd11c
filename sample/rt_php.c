#include "sample/internal.h"
#include "sample/rt_chain.h"
#include "sample/rt_syms.h"
#include "sample/runtime.h"

#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "module/modules.h"
#include "php/interp.h"
#include "profile/stacks.h"
#include "util/xalloc.h"

/* PHP's view (sample/runtime.h): a PHP program's own calls, read from its
 * memory and merged into the native stack, as CPython's view does
 * (sample/rt_python.c), for php (the CLI) and every php-fpm worker.
 *
 * A non-ZTS PHP runs its code on one thread, the process's first: at each
 * capture of it, while it cannot run (stopped, or blocked between the two
 * looks at it), the target calls php_read(): it copies the chain of calls
 * (function and opline of each, one small read a call).  After the
 * capture, php_merge() names those calls (functions are read once and
 * kept) and puts them in place of the native execute_ex frames that run
 * them. */

struct phpview {
	struct php_interp *php;
	pid_t pid;
	uint32_t space;
	int lines;
	struct php_frame_raw frames[PHP_MAX_FRAMES];
	struct php_frame_raw *again, *best;     /* php_read()'s second read, what it keeps */
	uint64_t *native;
	size_t native_cap;
	struct rt_syms syms;            /* (function, opline, its serial) -> its frame */
	uint64_t epoch;
	uint64_t merged, unmatched, partial_frames, entering, deep, after, moved, gone, torn;
	uint32_t requests, max_request; /* php_request values, the newest's code */
	struct sampler *s;
};

#define PHP_MAX_REQUESTS 1024


/* What the reader leaves in a capture: the innermost call's address and
 * its link, then the calls. */
struct php_head {
	uint64_t cur, prev;
	char request[112];              /* php_interp__request(), "" when no call runs */
};

/* PHP's calls are read as rt_chain reads them (sample/rt_chain.h). */
_Static_assert(sizeof(struct php_frame_raw) == sizeof(struct rt_chain_frame) &&
	       offsetof(struct php_frame_raw, func) == offsetof(struct rt_chain_frame, what) &&
	       offsetof(struct php_frame_raw, opline) == offsetof(struct rt_chain_frame, at) &&
	       offsetof(struct php_frame_raw, ends) == offsetof(struct rt_chain_frame, ends) &&
	       PHP_ENDS_WHOLE == RT_CHAIN_WHOLE, "struct php_frame_raw is read as rt_chain_frame");

static size_t chain_read(void *ctx, struct rt_chain_frame *into, size_t lim, uint64_t *cur,
			 uint64_t *link)
{
	struct phpview *v = ctx;
	return php_interp__frames(v->php, (struct php_frame_raw *)into, lim, cur, link);
}

/* The same innermost call and link in both reads, and still those now. */
static bool chain_still(void *ctx, uint64_t prev_cur, uint64_t prev_link, uint64_t cur,
			uint64_t link)
{
	struct phpview *v = ctx;
	uint64_t now, back;
	return prev_cur == cur && prev_link == link &&
	       php_interp__current(v->php, &now, &back) == 0 && now == cur && back == link;
}

static const struct rt_chain_ops chain_ops = { chain_read, chain_still };

/* The target's reader (target_reader_fn): the first thread's calls, read
 * once while it cannot run, or RUNNING (right after its perf sample) as
 * rt_chain reads a running chain, the innermost call and its link the
 * same in both reads and read again after; torn reads are counted. */
static size_t php_read(void *arg, pid_t pid, pid_t tid, int running, void *out, size_t cap)
{
	struct phpview *v = arg;
	struct php_head h = { 0, 0, "" };
	if (tid != pid || cap < sizeof(h))
		return 0;               /* non-ZTS: PHP runs on the first thread */
	size_t max = (cap - sizeof(h)) / sizeof(struct php_frame_raw);
	struct php_frame_raw *fr = (struct php_frame_raw *)((char *)out + sizeof(h));
	size_t lim = max < PHP_MAX_FRAMES ? max : PHP_MAX_FRAMES;
	bool torn;
	size_t n = rt_chain__read(&chain_ops, v, running, (struct rt_chain_frame *)fr, lim,
				  (struct rt_chain_frame *)v->again, (struct rt_chain_frame *)v->best,
				  &torn, &h.cur, &h.prev);
	v->torn += torn;
	if (n && php_interp__request(v->php, h.request, sizeof(h.request)) < 0)
		h.request[0] = 0;
	memcpy(out, &h, sizeof(h));
	return sizeof(h) + n * sizeof(struct php_frame_raw);
}

static int php_tick(struct rt_view *rv, struct sampler *s, char *note, size_t notelen)
{
	(void)s;
	(void)note;
	(void)notelen;
	((struct phpview *)rv)->epoch++;
	return 0;
}

/* The sample's label php_request (its runtime state): what the process
 * served when it was read (none between requests); at most
 * PHP_MAX_REQUESTS values a view, then one for all the others. */
static uint32_t php_thread_of(struct rt_view *rv, const struct capture *c, uint32_t *state)
{
	struct phpview *v = (struct phpview *)rv;
	*state = 0;
	if (c->rt_len >= sizeof(struct php_head)) {
		struct php_head h;
		char kv[sizeof(h.request) + 16];
		memcpy(&h, c->rt_data, sizeof(h));
		h.request[sizeof(h.request) - 1] = 0;
		if (!h.request[0])
			return c->slot;
		if (v->requests < PHP_MAX_REQUESTS)
			snprintf(kv, sizeof(kv), "php_request=%s", h.request);
		else
			snprintf(kv, sizeof(kv), "php_request=[more than %u requests]", PHP_MAX_REQUESTS);
		*state = stacks__rt_state(v->s->st, kv);
		if (*state > v->max_request) {  /* a value not seen before */
			v->max_request = *state;
			v->requests++;
		}
	}
	return c->slot;
}

static uint64_t frame_pc(struct phpview *v, struct sampler *s, const struct php_frame_raw *f)
{
	uint64_t opline = v->lines ? f->opline : 0;
	uint32_t serial = f->func ? php_interp__func(v->php, f->func, v->epoch) : 0;
	struct rt_sym *slot;
	uint64_t pc = rt_syms__get(&v->syms, s->st, f->func, opline, serial, &slot);
	if (pc)
		return pc;
	struct php_named nm;
	if (php_interp__name(v->php, f, v->lines, &nm) < 0)
		v->partial_frames++;
	struct stacks_frame sf = { nm.func, nm.file, NULL, nm.line };
	return rt_syms__put(slot, f->func, opline, serial, stacks__symbolic_pc(s->st, &sf));
}

static uint64_t gone_pc(struct phpview *v, struct sampler *s)
{
	return rt_syms__fixed(&v->syms, s->st, 0, "[php call, gone before it was read]");
}

/* Merges the capture's PHP calls into s->pcs[0 .. *DEPTH), py_merge()'s
 * way: each native execute_ex frame, innermost first, stands for the calls
 * of one C call into the VM, innermost first up to the one it started with
 * (a user function's call marked ZEND_CALL_TOP: made from C, zend_execute()
 * of a script or zend_call_function() of a callback); the internal
 * functions' calls it made go with it (their own native frames, zif_*,
 * stay where they are, inside).  Native frames between execute_ex frames
 * stay.  Calls left when the native stack has no execute_ex for them go on
 * at its outer end; an execute_ex more than the chain has (caught as a
 * call starts or ends) is left out, or, read after the sample, shown as a
 * call gone before it was read. */
static enum unwind_status php_merge(struct rt_view *rv, struct sampler *s, const struct capture *c,
				    enum unwind_status st, size_t *depth)
{
	struct phpview *v = (struct phpview *)rv;
	if (c->rt_len < sizeof(struct php_head))
		return st;
	size_t nf = (c->rt_len - sizeof(struct php_head)) / sizeof(struct php_frame_raw);
	if (nf > PHP_MAX_FRAMES)
		nf = PHP_MAX_FRAMES;
	if (!nf && c->rt_after) {
		bool any = false;
		for (size_t i = 0; i < *depth; i++)
			if (php_interp__in_exec(v->php, s->pcs[i])) {
				s->pcs[i] = gone_pc(v, s);
				any = true;
			}
		if (any)
			v->gone += c->ticks;
		return st;
	}
	if (!nf)
		return st;
	memcpy(v->frames, c->rt_data + sizeof(struct php_head), nf * sizeof(struct php_frame_raw));
	size_t n = *depth, max = (size_t)s->cfg.max_depth;
	if (v->native_cap < n) {
		v->native_cap = n;
		v->native = xrealloc(v->native, n * sizeof(*v->native));
	}
	memcpy(v->native, s->pcs, n * sizeof(*v->native));
	size_t out = 0, f = 0, extra = 0;
	bool cut = false;
	if (v->frames[nf - 1].ends == PHP_ENDS_WHOLE) {
		size_t calls = 0, execs = 0;
		for (size_t k = 0; k < nf; k++)
			calls += v->frames[k].ends != 0;
		for (size_t i = 0; i < n; i++)
			execs += php_interp__in_exec(v->php, v->native[i]);
		extra = execs > calls ? execs - calls : 0;
		if (extra && !c->rt_after)
			v->entering += c->ticks;
		if (c->rt_after && calls > execs && st == UNWIND_COMPLETE) {
			for (size_t k = calls - execs; k && f < nf; f++)
				k -= v->frames[f].ends != 0;
			v->moved += c->ticks;
		}
	}
	for (size_t i = 0; i < n && !cut; i++) {
		bool in_exec = php_interp__in_exec(v->php, v->native[i]);
		if (extra && in_exec) {
			extra--;
			if (c->rt_after && out < max) {
				s->pcs[out++] = gone_pc(v, s);
				v->gone += c->ticks;
			}
			continue;
		}
		if (f < nf && in_exec) {
			do {
				if (out == max) {
					cut = true;
					break;
				}
				s->pcs[out++] = frame_pc(v, s, &v->frames[f]);
				if (v->frames[f].ends == PHP_ENDS_CUT) {
					cut = true;
					break;
				}
			} while (!v->frames[f++].ends && f < nf);
			continue;
		}
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
		if (v->frames[f].ends == PHP_ENDS_CUT)
			cut = true;
	}
	if (v->frames[nf - 1].ends == PHP_ENDS_CUT)
		v->deep += c->ticks;
	v->merged += c->ticks;
	if (c->rt_after)
		v->after += c->ticks;
	if (!matched)
		v->unmatched += c->ticks;
	*depth = out;
	return cut ? UNWIND_TRUNCATED : st;
}

static struct rt_view *php_open(struct sampler *s, pid_t pid, uint32_t space, uint32_t slot_base,
				char *note, size_t notelen)
{
	(void)slot_base;
	struct space *sp = sampler_due_scan(s, sampler_space_for(s, space, pid), space, pid);
	char why[256] = "";
	struct php_interp *php = sp->ms ? php_interp__new(pid, sp->ms, why, sizeof(why)) : NULL;
	if (!php) {
		if (*why)
			snprintf(note, notelen, "PID %d runs PHP, but %s", (int)pid, why);
		return NULL;
	}
	struct phpview *v = xcalloc(1, sizeof(*v));
	v->php = php;
	v->pid = pid;
	v->space = space;
	v->lines = !s->cfg.no_lines;
	rt_syms__init(&v->syms);
	v->again = xcalloc(PHP_MAX_FRAMES, sizeof(*v->again));
	v->best = xcalloc(PHP_MAX_FRAMES, sizeof(*v->best));
	v->s = s;
	target__set_reader(s->t, pid, space, php_read, v);
	return (struct rt_view *)v;
}

static size_t php_stats(const struct rt_view *rv, struct rt_stat *out)
{
	const struct phpview *v = (const struct phpview *)rv;
	uint64_t funcs, bad;
	php_interp__counts(v->php, &funcs, &bad);
	size_t n = 0;
	out[n++] = (struct rt_stat){ "seen", "seen", 1 };
	out[n++] = (struct rt_stat){ "merged", "samples with PHP frames", v->merged };
	out[n++] = (struct rt_stat){ "after", "of them read at the tick, after the thread's perf "
				     "sample (not stopped)", v->after };
	out[n++] = (struct rt_stat){ "moved", "of those with calls the sample had not made yet "
				     "(their frames left out)", v->moved };
	out[n++] = (struct rt_stat){ "gone", "of those in calls returned from before the read "
				     "([php call, gone before it was read])", v->gone };
	out[n++] = (struct rt_stat){ "torn", "of those whose calls changed during two reads (the "
				     "inner frames left out)", v->torn };
	out[n++] = (struct rt_stat){ "unmatched", "of them with PHP frames left over (the native "
				     "stack ended first)", v->unmatched };
	out[n++] = (struct rt_stat){ "entering", "of them caught as a call started or ended (an "
				     "execute_ex frame with no PHP call yet, left out)", v->entering };
	out[n++] = (struct rt_stat){ "functions", "functions named", funcs };
	out[n++] = (struct rt_stat){ "unknown", "frames not read ([unknown php frame])",
				     v->partial_frames };
	out[n++] = (struct rt_stat){ "deep", "samples whose PHP frames were read in part (past "
				     "1024, or one unreadable: [truncated])", v->deep };
	return n;
}

static void php_keep(struct rt_view *rv, struct stacks *st)
{
	(void)rv;
	(void)st;
}

static void php_free(struct rt_view *rv)
{
	struct phpview *v = (struct phpview *)rv;
	if (!v)
		return;
	php_interp__free(v->php);
	free(v->native);
	rt_syms__free(&v->syms);
	free(v->again);
	free(v->best);
	free(v);
}

const struct rt_ops rt_php = {
	.name = "php", .unit = "PHP thread", .units = "PHP threads",
	.frames_only = 1,
	.open = php_open, .tick = php_tick, .thread = php_thread_of, .stats = php_stats,
	.keep = php_keep, .free = php_free, .merge = php_merge,
};
