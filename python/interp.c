/* Reading a CPython interpreter from outside (see interp.h).  The order of
 * pointers followed, per version, is CPython's own: _PyRuntime ->
 * interpreters.head -> threads (tstate_head before 3.11) -> each thread's
 * current frame (tstate->frame; tstate->cframe->current_frame in 3.11 and
 * 3.12; tstate->current_frame from 3.13) -> previous frames. */
#include "python/interp.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/uio.h>
#include <unistd.h>

#include "module/modules.h"
#include "python/internal.h"
#include "python/lines.h"
#include "util/remote.h"
#include "util/text.h"
#include "util/xalloc.h"

static int read_remote(void *ctx, uint64_t addr, void *buf, size_t len)
{
	return remote__read((pid_t)(intptr_t)ctx, addr, buf, len);
}

/* ---- finding it ----------------------------------------------------------------- */

/* 3.MINOR from a file name: "libpython3.11.so.1.0", "python3.9". */
static int minor_from_name(const char *name)
{
	const char *s = strstr(name, "python3.");
	if (!s)
		return -1;
	char *end;
	long m = strtol(s + 8, &end, 10);
	return end == s + 8 || m < 0 || m > 99 ? -1 : (int)m;
}

/* The module holding _PyRuntime: the executable (Debian's python3.11
 * links libpython in) or libpython (pyenv's, embedders such as uwsgi). */
static const struct module *runtime_module(const struct modules *ms, uint64_t *runtime)
{
	for (size_t i = 0; i < modules__count(ms); i++) {
		const struct module *m = modules__at(ms, i);
		if (m->name && strstr(m->name, "python") && module__symbol(m, "_PyRuntime", runtime,
									    NULL) == 0)
			return m;
	}
	return NULL;
}

static struct py_interp *alloc(const struct py_layout *l, py_read_fn read, void *ctx)
{
	if (!py_layout__fits(l))
		return NULL;
	struct py_interp *p = xcalloc(1, sizeof(*p));
	p->l = *l;
	p->read = read;
	p->ctx = ctx;
	p->tid_off = 0x2d0;             /* glibc 2.2x-2.3x on x86-64; checked, else looked for */
	p->codes = xcalloc(CODE_CACHE, sizeof(*p->codes));
	snprintf(p->version, sizeof(p->version), "3.%d", l->minor);
	return p;
}

/* A CPython older than 3.7 (no _PyRuntime): its version from the module
 * that has the interpreter (python2.7, libpython3.6m.so.1.0), into WHY as
 * a note; nothing if no module is CPython's. */
static void older_python(const struct modules *ms, char *why, size_t whylen)
{
	for (size_t i = 0; i < modules__count(ms); i++) {
		const struct module *m = modules__at(ms, i);
		const char *s = m->name ? strstr(m->name, "python") : NULL;
		uint64_t a;
		if (!s || module__symbol(m, "Py_Initialize", &a, NULL) < 0)
			continue;
		char *end;
		long major = strtol(s + 6, &end, 10), minor = -1;
		if (end != s + 6 && *end == '.')
			minor = strtol(end + 1, &end, 10);
		if (major >= 2 && major <= 3 && minor >= 0 && minor < 100)
			snprintf(why, whylen, "Python %ld.%ld is not supported (3.8 to 3.13 are): no "
				 "Python frames", major, minor);
		else
			snprintf(why, whylen, "its Python (%s) is older than 3.7, not supported "
				 "(3.8 to 3.13 are): no Python frames", m->name);
		return;
	}
}

struct py_interp *py_interp__new(pid_t pid, const struct modules *ms, char *why, size_t whylen)
{
	*why = 0;
	uint64_t runtime, eval, eval_size = 0, code_type = 0, vaddr;
	const struct module *m = runtime_module(ms, &runtime);
	if (!m) {
		older_python(ms, why, whylen);
		return NULL;
	}
	int minor = minor_from_name(m->name);
	uint32_t hex;
	if (module__symbol(m, "Py_Version", &vaddr, NULL) == 0 &&
	    module__read(m, vaddr, &hex, sizeof(hex)) == 0 && (hex >> 24) == 3)
		minor = (int)(hex >> 16 & 0xff);
	struct py_layout l;
	const struct py_layout *table = py_layout__of(minor);
	unsigned char dbg[PY_DEBUG_OFFSETS_SIZE];
	if (minor >= 13) {
		if (remote__read(pid, runtime, dbg, sizeof(dbg)) < 0 ||
		    !py_layout__from_debug(dbg, sizeof(dbg), &l)) {
			snprintf(why, whylen, "its Python 3.%d's _Py_DebugOffsets are not those of 3.13 "
				 "(a later layout, or a free-threaded build): no Python frames", minor);
			return NULL;
		}
	} else if (table) {
		l = *table;
	} else {
		snprintf(why, whylen, "Python 3.%d is not supported (3.8 to 3.13 are): no Python "
			 "frames", minor < 0 ? 0 : minor);
		return NULL;
	}
	if (module__symbol(m, "_PyEval_EvalFrameDefault", &eval, &eval_size) < 0 || !eval_size) {
		snprintf(why, whylen, "its %s has no _PyEval_EvalFrameDefault symbol: no Python "
			 "frames", m->name);
		return NULL;
	}
	module__symbol(m, "PyCode_Type", &code_type, NULL);
	uint64_t str_type = 0, dict_type = 0;
	module__symbol(m, "PyUnicode_Type", &str_type, NULL);
	module__symbol(m, "PyDict_Type", &dict_type, NULL);
	struct py_interp *p = alloc(&l, read_remote, (void *)(intptr_t)pid);
	if (!p) {
		snprintf(why, whylen, "its Python 3.%d's layout is larger than this reader reads: no "
			 "Python frames", minor);
		return NULL;
	}
	p->pid = pid;
	p->runtime = runtime;
	p->code_type = code_type;
	p->str_type = str_type;
	p->dict_type = dict_type;
	p->eval_lo = eval;
	p->eval_hi = eval + eval_size;
	return p;
}

struct py_interp *py_interp__fake(const struct py_layout *l, py_read_fn read, void *ctx,
				  uint64_t runtime, uint64_t code_type)
{
	struct py_interp *p = alloc(l, read, ctx);
	if (!p)
		return NULL;
	p->runtime = runtime;
	p->code_type = code_type;
	return p;
}

/* What code object C holds in the cache. */
static size_t code_size(const struct py_code *c)
{
	return sizeof(*c) + (c->func ? strlen(c->func) + 1 : 0) + (c->file ? strlen(c->file) + 1 : 0) +
	       (c->table ? c->table_len + 1 : 0);
}

static void free_code(struct py_code *c)
{
	free(c->func);
	free(c->file);
	free(c->table);
	memset(c, 0, sizeof(*c));
}

void py_interp__free(struct py_interp *p)
{
	if (!p)
		return;
	for (size_t i = 0; i < CODE_CACHE; i++)
		if (p->codes[i].addr)
			free_code(&p->codes[i]);
	free(p->codes);
	free(p->known);
	py_names_free(p);
	free(p);
}

const char *py_interp__version(const struct py_interp *p)
{
	return p->version;
}

bool py_interp__in_eval(const struct py_interp *p, uint64_t pc)
{
	return pc >= p->eval_lo && pc < p->eval_hi;
}

/* ---- threads ---------------------------------------------------------------------- */

static bool is_task(pid_t pid, pid_t tid)
{
	char path[64];
	if (tid <= 0)
		return false;
	snprintf(path, sizeof(path), "/proc/%d/task/%d", (int)pid, (int)tid);
	return access(path, F_OK) == 0;
}

/* Before 3.11 a thread state knows its pthread_t only: the OS thread is
 * glibc's struct pthread's tid field, at TID_OFF (looked for once, if the
 * usual offset does not hold a thread of the process).  A search costs up
 * to 448 lookups in /proc: a few a call, not one per thread state of a
 * list that has no OS thread in it. */
static pid_t tid_of_pthread(struct py_interp *p, uint64_t thread_id)
{
	int32_t tid = 0;
	if (py_rd(p, thread_id + p->tid_off, &tid, 4) < 0 || !is_task(p->pid, tid)) {
		unsigned char blk[0x800];
		tid = 0;
		if (p->scans <= 0 || py_rd(p, thread_id, blk, sizeof(blk)) < 0)
			return 0;
		p->scans--;
		for (uint32_t off = 0x100; off + 4 <= sizeof(blk); off += 4) {
			int32_t v = py_word32(blk, off);
			if (v > 0 && is_task(p->pid, v)) {
				p->tid_off = off;
				tid = v;
				break;
			}
		}
		if (!tid)
			return 0;
	}
	return tid;
}

/* The OS thread of thread state TS, the I-th listed: from 3.11 its
 * native_thread_id NATIVE where that is a thread of this process; else
 * (and before 3.11) the tid in its pthread_t's block.  An interpreter that
 * forked keeps the parent's native ids in the child's thread states
 * (uwsgi's workers, forked once the master loaded the app): their
 * pthread_t is the child's own.  Kept by position in the list (a tick
 * lists the same threads in the same order as the last), so /proc is
 * asked again only where the list changed. */
static pid_t tid_at(struct py_interp *p, size_t i, uint64_t ts, uint64_t thread_id, pid_t native)
{
	if (i < p->nknown && p->known[i].tstate == ts && p->known[i].thread_id == thread_id &&
	    p->known[i].native == native && p->known[i].tid > 0)
		return p->known[i].tid;
	pid_t tid = native > 0 && is_task(p->pid, native) ? native : tid_of_pthread(p, thread_id);
	if (i >= p->known_cap) {
		size_t cap = p->known_cap ? 2 * p->known_cap : 16;
		while (cap <= i)
			cap *= 2;
		p->known = xrealloc(p->known, cap * sizeof(*p->known));
		memset(p->known + p->known_cap, 0, (cap - p->known_cap) * sizeof(*p->known));
		p->known_cap = cap;
	}
	p->known[i].tstate = ts;
	p->known[i].thread_id = thread_id;
	p->known[i].native = native;
	p->known[i].tid = tid;
	if (i >= p->nknown)
		p->nknown = i + 1;
	return tid;
}

/* Where the GIL's state is (3.12+: the interpreter points to it). */
static uint64_t gil_state(const struct py_interp *p, uint64_t interp)
{
	uint64_t gil = p->runtime + p->l.rt_gil;
	if (p->l.is_gil_ptr && py_rd_ptr(p, interp + p->l.is_gil_ptr, &gil) < 0)
		return 0;
	return gil;
}

/* Two ranges in one system call where the process is real (a stop's
 * reads are its cost: each process_vm_readv is a few microseconds);
 * returns a mask of those read (1: the first, 2: the second). */
static int rd2(const struct py_interp *p, uint64_t a1, void *b1, size_t l1, uint64_t a2, void *b2,
	       size_t l2)
{
	if (p->pid > 0 && a1 && a2 && a1 + l1 > a1 && a2 + l2 > a2) {
		struct iovec local[2] = { { b1, l1 }, { b2, l2 } };
		struct iovec remote[2] = { { (void *)(uintptr_t)a1, l1 }, { (void *)(uintptr_t)a2, l2 } };
		if (process_vm_readv(p->pid, local, 2, remote, 2, 0) == (ssize_t)(l1 + l2))
			return 3;
	}
	return (py_rd(p, a1, b1, l1) == 0 ? 1 : 0) | (py_rd(p, a2, b2, l2) == 0 ? 2 : 0);
}

/* Where the GIL's holder and locked words are: the range to read. */
static void gil_range(const struct py_interp *p, uint32_t *lo, uint32_t *len)
{
	*lo = p->l.gil_holder < p->l.gil_locked ? p->l.gil_holder : p->l.gil_locked;
	uint32_t hi = p->l.gil_holder < p->l.gil_locked ? p->l.gil_locked + 4 : p->l.gil_holder + 8;
	*len = hi - *lo;
}

static uint64_t gil_of(const struct py_interp *p, const unsigned char *b, uint32_t lo)
{
	return py_word32(b, p->l.gil_locked - lo) ? py_word(b, p->l.gil_holder - lo) : 0;
}

uint64_t py_interp__gil(const struct py_interp *p)
{
	/* last_holder then locked, next to each other in every version:
	 * one read. */
	unsigned char b[16];
	uint32_t lo, len;
	gil_range(p, &lo, &len);
	if (!p->gil || len > sizeof(b) || py_rd(p, p->gil + lo, b, len) < 0)
		return 0;
	return gil_of(p, b, lo);
}

int py_interp__threads(struct py_interp *p, struct py_thread *out, size_t max, uint64_t *gil)
{
	uint64_t interp;
	*gil = 0;
	if (py_rd_ptr(p, p->runtime + p->l.rt_interp_head, &interp) < 0)
		return -1;
	size_t n = 0, steps = 0;
	p->scans = 4;
	/* Every interpreter (subinterpreters too), every thread state,
	 * bounded: a cycle ends at MAX threads, or at 2 * MAX thread states
	 * read where they have no OS thread (a cycle of those too). */
	for (int k = 0; interp && k < 64 && n < max; k++) {
		uint64_t ts;
		if (py_rd_ptr(p, interp + p->l.is_threads_head, &ts) < 0)
			break;
		if (k == 0) {
			if (!p->gil)
				p->gil = gil_state(p, interp);
			*gil = py_interp__gil(p);
		}
		unsigned char buf[PY_TS_MAX];
		size_t len = p->l.ts_size;
		while (ts && n < max && steps < 2 * max && py_rd(p, ts, buf, len) == 0) {
			pid_t native = p->l.ts_native_id ? (pid_t)py_word32(buf, p->l.ts_native_id) : 0;
			pid_t tid = tid_at(p, steps++, ts, py_word(buf, p->l.ts_thread_id), native);
			if (tid > 0)
				out[n++] = (struct py_thread){ ts, py_word(buf, p->l.ts_thread_id), tid };
			ts = py_word(buf, p->l.ts_next);
		}
		if (py_rd_ptr(p, interp + p->l.is_next, &interp) < 0)
			break;
	}
	if (p->nknown > steps)
		p->nknown = steps;      /* threads gone since */
	p->listed = steps;
	return (int)n;
}

size_t py_interp__listed(const struct py_interp *p)
{
	return p->listed;
}

/* ---- frames ----------------------------------------------------------------------- */

/* 3.11+: the frames of the current data-stack chunk, below its top, in one
 * read (most of a thread's frames: those of generators and, from 3.12, the
 * entry frames live elsewhere and are read one by one). */
#define CHUNK_HEAD 24           /* _PyStackChunk: previous, size, top, then data */
#define CHUNK_READ (8u << 10)

struct chunk_copy {
	uint64_t lo, hi;
	unsigned char b[CHUNK_READ];
};

static const unsigned char *frame_at(const struct py_interp *p, const struct chunk_copy *cc,
				     uint64_t f, unsigned char *buf)
{
	if (f >= cc->lo && f < cc->hi && cc->hi - f >= p->l.f_size)
		return cc->b + (f - cc->lo);
	return py_rd(p, f, buf, p->l.f_size) == 0 ? buf : NULL;
}

/* Reads the thread state's current frame (*F), and with 3.11+ the top of
 * its data stack into CC. */
/* Reads the thread state's current frame (*F), the GIL's holder (*GIL),
 * and with 3.11+ the top of its data stack into CC: two system calls. */
static int first_frame(const struct py_interp *p, uint64_t tstate, uint64_t *f, uint64_t *gil,
		       struct chunk_copy *cc)
{
	unsigned char t[PY_TS_MAX], g[16];
	uint32_t glo, glen;
	gil_range(p, &glo, &glen);
	cc->lo = cc->hi = 0;
	*gil = 0;
	uint32_t len = p->l.ts_datastack ? p->l.ts_datastack + 16 - p->l.ts_frame : 8;
	int got = p->gil && glen <= sizeof(g) ? rd2(p, tstate + p->l.ts_frame, t, len, p->gil + glo, g, glen)
					       : (py_rd(p, tstate + p->l.ts_frame, t, len) == 0 ? 1 : 0);
	if (got & 2)
		*gil = gil_of(p, g, glo);
	if (!(got & 1))
		return -1;
	*f = py_word(t, 0);
	if (!p->l.ts_datastack)
		return 0;
	uint64_t chunk = py_word(t, p->l.ts_datastack - p->l.ts_frame);
	uint64_t top = py_word(t, p->l.ts_datastack + 8 - p->l.ts_frame);
	uint64_t lo = 0;
	if (chunk && top > chunk + CHUNK_HEAD && top - chunk <= (64u << 20))
		lo = top - chunk - CHUNK_HEAD > CHUNK_READ ? top - CHUNK_READ : chunk + CHUNK_HEAD;
	if (p->l.ts_via_cframe) {
		/* The cframe's current frame and the chunk, together. */
		uint64_t cf = *f;
		got = lo ? rd2(p, cf + p->l.cf_current, f, 8, lo, cc->b, top - lo) :
		      (py_rd_ptr(p, cf + p->l.cf_current, f) == 0 ? 1 : 0);
		if (!(got & 1))
			return -1;
	} else {
		got = lo && py_rd(p, lo, cc->b, top - lo) == 0 ? 2 : 0;
	}
	if (got & 2) {
		cc->lo = lo;
		cc->hi = top;
	}
	return 0;
}

int py_interp__current(const struct py_interp *p, uint64_t tstate, uint64_t *f, uint64_t *back)
{
	if (py_rd_ptr(p, tstate + p->l.ts_frame, f) < 0)
		return -1;
	if (p->l.ts_via_cframe && (!*f || py_rd_ptr(p, *f + p->l.cf_current, f) < 0))
		return -1;
	*back = 0;
	return !*f || py_rd(p, *f + p->l.f_previous, back, 8) == 0 ? 0 : -1;
}

/* The frames at HINT's addresses outside the chunk copy CC, read at once
 * into HB (OK[i]: HB[i] holds the frame at hint->addr[i]): one system
 * call where the process is real. */
static void read_hinted(const struct py_interp *p, const struct chunk_copy *cc,
			const struct py_frame_hint *hint, unsigned char (*hb)[PY_FRAME_MAX], bool *ok)
{
	size_t n = hint->n < PY_HINT_FRAMES ? hint->n : PY_HINT_FRAMES, len = p->l.f_size, k = 0;
	struct iovec local[PY_HINT_FRAMES], remote[PY_HINT_FRAMES];
	uint8_t at[PY_HINT_FRAMES];
	for (size_t i = 0; i < n; i++) {
		uint64_t a = hint->addr[i];
		ok[i] = false;
		if (!a || a + len < a || (a >= cc->lo && a < cc->hi))
			continue;       /* in the chunk copy: read from there */
		if (p->pid <= 0) {
			ok[i] = py_rd(p, a, hb[i], len) == 0;
			continue;
		}
		local[k] = (struct iovec){ hb[i], len };
		remote[k] = (struct iovec){ (void *)(uintptr_t)a, len };
		at[k++] = (uint8_t)i;
	}
	for (size_t i = n; i < PY_HINT_FRAMES; i++)
		ok[i] = false;
	if (!k)
		return;
	/* A range that cannot be read ends the call: those before it hold */
	ssize_t got = process_vm_readv(p->pid, local, k, remote, k, 0);
	for (size_t j = 0; got > 0 && j < (size_t)got / len; j++)
		ok[at[j]] = true;
}

size_t py_interp__frames_hinted(const struct py_interp *p, uint64_t tstate, struct py_frame_raw *out,
				size_t max, uint64_t *gil, struct py_frame_hint *hint)
{
	uint64_t f, g;
	static __thread struct chunk_copy cc;
	static __thread unsigned char hb[PY_HINT_FRAMES][PY_FRAME_MAX];
	int got = first_frame(p, tstate, &f, &g, &cc);
	if (gil)
		*gil = g;
	if (got < 0) {
		if (hint)
			hint->n = 0;
		return 0;
	}
	/* The frames this thread had at its last capture, where it most
	 * often still is: read in one call, each used only where the chain
	 * leads to it (a frame since returned from is read anew). */
	bool ok[PY_HINT_FRAMES] = { false };
	if (hint && hint->n && hint->addr[0] == f)
		read_hinted(p, &cc, hint, hb, ok);
	unsigned char one[PY_FRAME_MAX];
	size_t n = 0, steps = 0;
	bool entry = false;             /* the last frame visited was an entry frame */
	/* A cycle (links read from a frame being torn down, or made up by
	 * the target) is found by Brent's method: the chain is cut where a
	 * frame comes round again, rather than read to MAX. */
	uint64_t seen_f = f, lap = 0, power = 1;
	/* At most MAX frames and as many entry frames: a cycle ends. */
	for (; f && n < max && steps < 2 * max; steps++) {
		const unsigned char *buf;
		if (steps < PY_HINT_FRAMES && ok[steps] && hint->addr[steps] == f)
			buf = hb[steps];
		else
			buf = frame_at(p, &cc, f, one);
		if (!buf)
			break;
		if (hint && steps < PY_HINT_FRAMES)
			hint->addr[steps] = f;
		uint64_t prev = py_word(buf, p->l.f_previous);
		entry = p->l.frames == PY_FRAMES_CSTACK && buf[p->l.f_owner] == PY_OWNED_BY_CSTACK;
		if (entry) {
			/* The C call's entry frame: what follows is another
			 * _PyEval_EvalFrameDefault's. */
			if (n)
				out[n - 1].ends = 1;
		} else {
			struct py_frame_raw *r = &out[n++];
			r->code = py_word(buf, p->l.f_code);
			r->instr = p->l.frames == PY_FRAME_OBJECTS ? (uint64_t)(int64_t)py_word32(buf, p->l.f_instr)
								   : py_word(buf, p->l.f_instr);
			r->ends = p->l.frames == PY_FRAME_OBJECTS ? 1 :
				  p->l.frames == PY_FRAMES_IS_ENTRY ? buf[p->l.f_is_entry] != 0 : 0;
			r->unused = 0;
		}
		f = prev;
		if (f == seen_f)
			break;          /* a cycle: f != 0 marks the chain cut */
		if (++lap == power) {
			seen_f = f;
			power *= 2;
			lap = 0;
		}
	}
	if (hint)
		hint->n = (uint32_t)(steps < PY_HINT_FRAMES ? steps : PY_HINT_FRAMES);
	/* From 3.12 every chain starts (outermost) with the entry frame of
	 * the C call that ran it: one that ends on another frame is a frame
	 * not linked (yet, or any more: a generator's, between two calls, as
	 * a thread that runs meanwhile can be read), not a whole chain. */
	if (n)
		out[n - 1].ends = f || (p->l.frames == PY_FRAMES_CSTACK && !entry) ? PY_ENDS_CUT
										       : PY_ENDS_WHOLE;
	return n;
}

size_t py_interp__frames(const struct py_interp *p, uint64_t tstate, struct py_frame_raw *out,
			 size_t max, uint64_t *gil)
{
	return py_interp__frames_hinted(p, tstate, out, max, gil, NULL);
}

/* ---- names ------------------------------------------------------------------------ */

/* The bytes object at ADDR: its contents (malloc'd, *LEN) and where they
 * are (*AT). */
static uint8_t *read_bytes(const struct py_interp *p, uint64_t addr, uint32_t *len, uint64_t *at)
{
	int64_t size;
	if (py_rd(p, addr + p->l.bytes_size, &size, 8) < 0 || size < 0 || size > PY_MAX_TABLE)
		return NULL;
	uint8_t *b = xmalloc((size_t)size + 1);
	*at = addr + p->l.bytes_sval;
	if (size && py_rd(p, *at, b, (size_t)size) < 0) {
		free(b);
		return NULL;
	}
	*len = (uint32_t)size;
	return b;
}

/* Frees code object C of P's cache. */
static void drop_code(struct py_interp *p, struct py_code *c)
{
	size_t sz = code_size(c);
	p->code_bytes = p->code_bytes > sz ? p->code_bytes - sz : 0;
	free_code(c);
	p->ncodes--;
}

static struct py_code *code_slot(struct py_interp *p, uint64_t addr)
{
	size_t h = (size_t)((addr >> 4) * 0x9e3779b97f4a7c15ull >> 50) & (CODE_CACHE - 1);
	for (size_t i = 0; i < 64; i++) {
		struct py_code *c = &p->codes[(h + i) & (CODE_CACHE - 1)];
		if (c->addr == addr || c->addr == 0)
			return c;
	}
	/* A full neighbourhood: the first is named anew. */
	drop_code(p, &p->codes[h]);
	return &p->codes[h];
}

/* What tells code object BUF from another at its address. */
static void code_stamp(const struct py_interp *p, const unsigned char *buf, uint64_t out[4])
{
	out[0] = p->l.co_qualname ? py_word(buf, p->l.co_qualname) : py_word(buf, p->l.co_name);
	out[1] = py_word(buf, p->l.co_filename);
	out[2] = py_word(buf, p->l.co_linetable);
	out[3] = (uint64_t)(uint32_t)py_word32(buf, p->l.co_firstlineno) << 32 ^
		 (p->l.co_code_adaptive ? py_word(buf, 16) : py_word(buf, p->l.co_code));
}

/* Reads code object ADDR into C.  Past CODE_BYTES held, every other code
 * object is named anew (C's slot stays: it is the caller's). */
static void read_code(struct py_interp *p, uint64_t addr, struct py_code *c)
{
	unsigned char buf[PY_CODE_MAX];
	if (p->code_bytes > CODE_BYTES) {
		for (size_t i = 0; i < CODE_CACHE; i++)
			if (p->codes[i].addr && &p->codes[i] != c)
				drop_code(p, &p->codes[i]);
		p->emptied++;
	}
	c->addr = addr;
	c->bad = 1;
	c->serial = ++p->serials;
	p->ncodes++;
	if (py_rd(p, addr, buf, p->l.co_size) < 0)
		return;
	code_stamp(p, buf, c->stamp);
	if (p->code_type && py_word(buf, 8) != p->code_type)
		return;                 /* ob_type: not a code object */
	uint64_t qual = p->l.co_qualname ? py_word(buf, p->l.co_qualname) : py_word(buf, p->l.co_name);
	c->func = py_read_str(p, qual);
	c->file = py_read_str(p, py_word(buf, p->l.co_filename));
	c->first = py_word32(buf, p->l.co_firstlineno);
	uint64_t at;
	c->table = read_bytes(p, py_word(buf, p->l.co_linetable), &c->table_len, &at);
	if (p->l.co_code_adaptive) {
		c->start = addr + p->l.co_code_adaptive;
		c->units = py_word(buf, 16);       /* ob_size: its code units */
	} else {
		uint32_t len = 0;
		int64_t size;
		if (py_rd(p, py_word(buf, p->l.co_code) + p->l.bytes_size, &size, 8) == 0 && size > 0)
			len = (uint32_t)size;
		c->units = len;
		(void)at;
	}
	c->bad = !c->func || !c->file;
	p->code_bytes += code_size(c);
	if (c->bad)
		p->bad++;
	else
		p->named++;
}

bool py_interp__code_cached(const struct py_interp *p, uint64_t code, uint32_t *serial)
{
	size_t h = (size_t)((code >> 4) * 0x9e3779b97f4a7c15ull >> 50) & (CODE_CACHE - 1);
	for (size_t i = 0; i < 64; i++) {
		const struct py_code *c = &p->codes[(h + i) & (CODE_CACHE - 1)];
		if (c->addr == code) {
			*serial = c->serial;
			return true;
		}
		if (!c->addr)
			break;
	}
	return false;
}

uint32_t py_interp__code(struct py_interp *p, uint64_t code, uint64_t epoch)
{
	struct py_code *c = code_slot(p, code);
	if (c->addr != code) {
		read_code(p, code, c);
	} else if (c->checked != epoch) {
		/* Freed since, and another made at its address? */
		unsigned char buf[PY_CODE_MAX];
		uint64_t st[4];
		if (py_rd(p, code, buf, p->l.co_size) == 0) {
			code_stamp(p, buf, st);
			if (memcmp(st, c->stamp, sizeof(st)) != 0) {
				drop_code(p, c);
				p->renamed++;
				read_code(p, code, c);
			}
		}
	}
	c->checked = epoch;
	return c->serial;
}

int py_interp__name(struct py_interp *p, const struct py_frame_raw *f, bool lines,
		    struct py_named *out)
{
	*out = (struct py_named){ "[unknown python frame]", NULL, 0 };
	if (!f->code)
		return -1;
	struct py_code *c = code_slot(p, f->code);
	if (c->addr != f->code)
		read_code(p, f->code, c);
	if (c->bad)
		return -1;
	out->func = c->func;
	out->file = c->file;
	if (!lines)
		return 0;
	int64_t off;
	if (p->l.frames == PY_FRAME_OBJECTS)
		off = (int64_t)f->instr * (p->l.lines == PY_LINETABLE_310 ? 2 : 1);
	else
		off = f->instr < c->start ? -1 : (int64_t)(f->instr - c->start) / 2;
	if (off >= 0 && c->units && (uint64_t)off > c->units) {
		/* Beyond its code: the address was reused by another code
		 * object since it was named.  Named again, once. */
		drop_code(p, c);
		read_code(p, f->code, c);
		if (c->bad)
			return -1;
		out->func = c->func;
		out->file = c->file;
		if (f->instr < c->start && p->l.frames != PY_FRAME_OBJECTS)
			off = -1;
		else if (p->l.frames != PY_FRAME_OBJECTS)
			off = (int64_t)(f->instr - c->start) / 2;
	}
	out->line = c->table ? py_lines__line(p->l.lines, c->table, c->table_len, c->first, off) : 0;
	return 0;
}

size_t py_interp__age_codes(struct py_interp *p, uint64_t before)
{
	size_t n = 0;
	for (size_t i = 0; i < CODE_CACHE; i++)
		if (p->codes[i].addr && p->codes[i].checked < before) {
			drop_code(p, &p->codes[i]);
			n++;
		}
	return n;
}

size_t py_interp__code_bytes(const struct py_interp *p, uint64_t *emptied)
{
	*emptied = p->emptied;
	return p->code_bytes;
}

void py_interp__counts(const struct py_interp *p, uint64_t *codes, uint64_t *bad)
{
	*codes = p->named;
	*bad = p->bad;
}
