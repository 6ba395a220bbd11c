/* Fuzz target: a CPython interpreter read from a process whose memory is
 * corrupt or hostile (python/interp.c over python/layout.c), and the
 * _Py_DebugOffsets a 3.13 process publishes (py_layout__from_debug).
 *
 * The input (integers little-endian):
 *   0      what is read (its value modulo 7): 0-4 the interpreter of 3.8 to
 *          3.12 (py_layout__of), 5 that of the _Py_DebugOffsets at
 *          _PyRuntime in the fake memory (as py_interp__new reads a 3.13
 *          one), 6 py_layout__from_debug over the rest of the input alone
 *   1      bit 0: memory outside the regions reads as byte 2 repeated (every
 *          pointer leads somewhere, every length is huge); bits 4-7: at
 *          most 1 + that many threads are read
 *   2      that byte
 *   8-15   _PyRuntime's address
 *   16-23  PyCode_Type's address (0: code objects' types not checked)
 *   24-31  a thread state whose frames are read as well as those of the
 *          threads found: before 3.11 a thread is found only when its OS
 *          thread is in /proc, never a fake one's
 *   32-    the process's memory: regions, each an address (8 bytes), a
 *          length (2) and its bytes; at most MAX_REGIONS
 * Then the threads, the frames of each (all, and at most 3), and each
 * frame named with lines and without; the GIL.  Besides not crashing or
 * hanging, what must hold: a layout accepted reads every field inside what
 * it copies; counts within what was asked; the last frame ends a C call;
 * a frame that cannot be named is "[unknown python frame]", one named has
 * a function and a file of bounded length, and no line unless asked.
 *
 * FUZZ_PYINTERP_VERBOSE=1 prints what is read.  Set FUZZ_PYINTERP_SEEDS=DIR
 * to write seeds: a fake interpreter of each
 * layout with two threads, one running a chain of three frames (and, from
 * 3.11, a C call's entry between two of them), the other one frame; for
 * 3.13, FUZZ_PYINTERP_DEBUG=FILE names a real _Py_DebugOffsets block:
 *   ~/.pyenv/versions/3.13.0/bin/python3 -c 'import ctypes, sys;
 *     sys.stdout.buffer.write(ctypes.string_at(ctypes.addressof(
 *     ctypes.c_char.in_dll(ctypes.pythonapi, "_PyRuntime")), 584))' >FILE */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "python/interp.h"
#include "python/names.h"
#include "tests/fuzz/fakemem.h"
#include "util/text.h"

#define HEADER 32
#define UNKNOWN "[unknown python frame]"

static int verbose;             /* FUZZ_PYINTERP_VERBOSE: what is read, on stderr */

static void fail(const char *what)
{
	fprintf(stderr, "fuzz_pyinterp: %s\n", what);
	abort();
}

/* Whether a field of WIDTH bytes at OFF lies inside the SIZE bytes read. */
static int in(uint32_t off, uint32_t width, uint32_t size)
{
	return (uint64_t)off + width <= size;
}

/* What interp.c reads of each copy, as its offsets say. */
static void check_layout(const struct py_layout *l)
{
	int old = l->frames == PY_FRAME_OBJECTS;
	if (!py_layout__fits(l) || !in(l->ts_next, 8, l->ts_size) || !in(l->ts_frame, 8, l->ts_size) ||
	    !in(l->ts_thread_id, 8, l->ts_size) || !in(l->ts_native_id, 4, l->ts_size) ||
	    !in(l->f_previous, 8, l->f_size) || !in(l->f_code, 8, l->f_size) ||
	    !in(l->f_instr, old ? 4 : 8, l->f_size) || !in(l->f_owner, 1, l->f_size) ||
	    !in(l->f_is_entry, 1, l->f_size) ||
	    !in(16, 8, l->co_size) ||   /* ob_type, ob_size */
	    !in(l->co_filename, 8, l->co_size) || !in(l->co_name, 8, l->co_size) ||
	    !in(l->co_qualname, 8, l->co_size) || !in(l->co_linetable, 8, l->co_size) ||
	    !in(l->co_firstlineno, 4, l->co_size) || !in(l->co_code, 8, l->co_size) ||
	    !in(l->str_length, 8, l->str_compact_size) || !in(l->str_state, 4, l->str_compact_size) ||
	    l->str_ascii_size > l->str_compact_size)
		fail("a layout accepted reads a field outside what it copies");
}

static void name(struct py_interp *p, const struct py_frame_raw *f, bool lines)
{
	struct py_named nm;
	int r = py_interp__name(p, f, lines, &nm);
	if (r < 0 && (!nm.func || strcmp(nm.func, UNKNOWN) != 0))
		fail("a frame not named is not " UNKNOWN);
	if (r == 0 && (!nm.func || !nm.file || strlen(nm.func) > 4 * PY_MAX_STR ||
		       strlen(nm.file) > 4 * PY_MAX_STR))
		fail("a frame named without a function or file, or with one too long");
	if (!lines && nm.line != 0)
		fail("a line given without lines");
	if (verbose && lines)
		fprintf(stderr, "  %s (%s:%d)%s\n", nm.func, nm.file ? nm.file : "?", nm.line,
			f->ends ? " | ends a C call" : "");
}

static void frames(struct py_interp *p, uint64_t tstate)
{
	struct py_frame_raw f[PY_MAX_FRAMES];
	uint64_t fgil;
	size_t n = py_interp__frames(p, tstate, f, PY_MAX_FRAMES, &fgil);
	if (fgil != py_interp__gil(p))
		fail("py_interp__frames: its GIL holder is not py_interp__gil()'s");
	if (n > PY_MAX_FRAMES || (n && !f[n - 1].ends))
		fail("py_interp__frames: too many frames, or the last does not end a C call");
	/* With the last capture's addresses as a hint: the same frames,
	 * whether the hint is right (the second read) or not (the first) */
	struct py_frame_hint hint = { .n = 0 };
	struct py_frame_raw h1[PY_MAX_FRAMES], h2[PY_MAX_FRAMES];
	size_t n1 = py_interp__frames_hinted(p, tstate, h1, PY_MAX_FRAMES, NULL, &hint);
	if (hint.n > PY_HINT_FRAMES)
		fail("py_interp__frames_hinted: a hint longer than it keeps");
	size_t n2 = py_interp__frames_hinted(p, tstate, h2, PY_MAX_FRAMES, NULL, &hint);
	if (n1 != n || n2 != n || memcmp(h1, f, n * sizeof(*f)) != 0 || memcmp(h2, f, n * sizeof(*f)) != 0)
		fail("py_interp__frames_hinted: other frames than without the hint");
	for (uint32_t i = 0; i < hint.n; i++)
		hint.addr[i] ^= (i & 1) ? 0x40 : 0;     /* a hint gone wrong half-way */
	if (py_interp__frames_hinted(p, tstate, h2, PY_MAX_FRAMES, NULL, &hint) != n ||
	    memcmp(h2, f, n * sizeof(*f)) != 0)
		fail("py_interp__frames_hinted: a wrong hint changed the frames");
	for (size_t i = 0; i < n; i++) {
		name(p, &f[i], true);
		name(p, &f[i], false);
	}
	if (py_interp__frames(p, tstate, f, 3, NULL) > 3)
		fail("py_interp__frames: more frames than asked for");
}

static void interp(const struct py_layout *l, struct mem *m, const uint8_t *h)
{
	check_layout(l);
	struct py_interp *p = py_interp__fake(l, fake_read, m, le(h + 8, 8), le(h + 16, 8));
	if (!p)
		fail("py_interp__fake refused a layout that fits");
	struct py_thread t[16];
	size_t max = 1 + (h[1] >> 4);
	uint64_t gil;
	int n = py_interp__threads(p, t, max, &gil);
	if (n < -1 || n > (int)max)
		fail("py_interp__threads: more threads than asked for");
	if (verbose)
		fprintf(stderr, "3.%d: %d thread(s), GIL held by %#llx\n", l->minor, n,
			(unsigned long long)gil);
	for (int i = 0; i < n; i++) {
		if (t[i].tid <= 0 || !t[i].tstate)
			fail("py_interp__threads: a thread without a thread state or OS thread");
		if (verbose)
			fprintf(stderr, " thread %d, state %#llx:\n", (int)t[i].tid,
				(unsigned long long)t[i].tstate);
		frames(p, t[i].tstate);
	}
	if (verbose)
		fprintf(stderr, " thread state %#llx:\n", (unsigned long long)le(h + 24, 8));
	frames(p, le(h + 24, 8));
	if (py_interp__gil(p) != gil)
		fail("py_interp__gil: not what py_interp__threads said");
	/* threads' names: twice (the second from what the first found) */
	for (int k = 0; k < 2; k++) {
		size_t named = py_interp__read_names(p);
		if (named > PY_MAX_NAMES)
			fail("py_interp__read_names: more names than it keeps");
		for (int i = 0; i < n; i++) {
			const char *tn = py_interp__thread_name(p, t[i].ident);
			if (tn && (strlen(tn) > 128 || !text__valid(tn, strlen(tn))))
				fail("a thread's name too long, or not clean text");
			if (verbose && k == 0)
				fprintf(stderr, " thread %d named %s\n", (int)t[i].tid, tn ? tn : "(none)");
		}
		if (verbose && k == 0)
			fprintf(stderr, " %zu thread(s) named\n", named);
	}
	uint64_t codes, bad;
	py_interp__counts(p, &codes, &bad);
	py_interp__free(p);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct py_layout dl;
	int mode = size ? data[0] % 7 : 0;
	if (mode == 6) {
		if (py_layout__from_debug(data + 1, size - 1, &dl))
			check_layout(&dl);
		return 0;
	}
	if (size < HEADER)
		return 0;
	struct mem m;
	mem_load(&m, data, size, 1, HEADER);
	const struct py_layout *l = py_layout__of(8 + mode);
	if (mode == 5) {
		unsigned char block[PY_DEBUG_OFFSETS_SIZE];
		if (fake_read(&m, le(data + 8, 8), block, sizeof(block)) < 0 ||
		    !py_layout__from_debug(block, sizeof(block), &dl))
			return 0;
		l = &dl;
	}
	interp(l, &m, data);
	return 0;
}

/* ---- seeds --------------------------------------------------------------------- */

#define RUNTIME 0x7f1000001000ull
#define INTERP 0x7f1000010000ull
#define HEAP 0x7f1000100000ull
#define HEAP_SIZE 0x6000
#define CODE_TYPE 0x7f10000c0de0ull

struct seed {
	const struct py_layout *l;
	uint8_t rt[0x1000], is[0x2000], heap[HEAP_SIZE];
	size_t is_len, used;
};

static void put(uint8_t *b, uint64_t off, uint64_t v, size_t width)
{
	memcpy(b + off, &v, width);
}

/* Room for LEN bytes in the heap: its address. */
static uint64_t alloc(struct seed *s, size_t len)
{
	uint64_t at = HEAP + s->used;
	s->used += (len + 15) & ~(size_t)15;
	if (s->used > HEAP_SIZE)
		abort();
	return at;
}

static uint8_t *at(struct seed *s, uint64_t addr)
{
	return s->heap + (addr - HEAP);
}

/* A compact str of characters KIND bytes wide. */
static uint64_t str(struct seed *s, const void *chars, size_t n, int kind)
{
	const struct py_layout *l = s->l;
	int ascii = kind == 1;
	size_t head = ascii ? l->str_ascii_size : l->str_compact_size;
	uint64_t a = alloc(s, head + (n + 1) * (size_t)kind);
	put(at(s, a), l->str_length, n, 8);
	put(at(s, a), l->str_state, (uint64_t)(kind << 2 | 1 << 5 | ascii << 6), 4);
	memcpy(at(s, a) + head, chars, n * (size_t)kind);
	return a;
}

static uint64_t bytes(struct seed *s, const void *b, size_t n)
{
	uint64_t a = alloc(s, s->l->bytes_sval + n + 1);
	put(at(s, a), s->l->bytes_size, n, 8);
	memcpy(at(s, a) + s->l->bytes_sval, b, n);
	return a;
}

static uint64_t ascii(struct seed *s, const char *chars)
{
	return str(s, chars, strlen(chars), 1);
}

/* A code object QUAL (a str; NAME its last part) starting at line FIRST:
 * three lines of 4 code units each, its table in the layout's format. */
static uint64_t code(struct seed *s, uint64_t qual, uint64_t name, uint64_t filename, int first)
{
	static const uint8_t lnotab[] = { 8, 1, 8, 1 };         /* bytes, line delta */
	static const uint8_t linetable[] = { 8, 0, 8, 1, 8, 1 };
	static const uint8_t locations[] = { 0xeb, 0, 0xeb, 2, 0xeb, 2 }; /* no columns, 4 units */
	const struct py_layout *l = s->l;
	uint64_t table = l->lines == PY_LNOTAB ? bytes(s, lnotab, sizeof(lnotab)) :
			 l->lines == PY_LINETABLE_310 ? bytes(s, linetable, sizeof(linetable)) :
			 bytes(s, locations, sizeof(locations));
	uint64_t units = 12;
	uint64_t co_code = l->co_code_adaptive ? 0 : bytes(s, (uint8_t[24]){ 0 }, 24);
	uint64_t a = alloc(s, (l->co_code_adaptive ? l->co_code_adaptive : l->co_size) + 2 * units);
	uint8_t *c = at(s, a);
	put(c, 8, CODE_TYPE, 8);
	put(c, 16, units, 8);
	put(c, l->co_filename, filename, 8);
	put(c, l->co_name, name, 8);
	if (l->co_qualname)
		put(c, l->co_qualname, qual, 8);
	put(c, l->co_firstlineno, (uint64_t)first, 4);
	put(c, l->co_linetable, table, 8);
	if (co_code)
		put(c, l->co_code, co_code, 8);
	return a;
}

/* A frame of code CO at its code unit UNIT, whose caller is PREV. */
static uint64_t frame(struct seed *s, uint64_t co, int unit, uint64_t prev, int owner, int entry)
{
	const struct py_layout *l = s->l;
	uint64_t a = alloc(s, l->f_size);
	uint8_t *f = at(s, a);
	put(f, l->f_previous, prev, 8);
	put(f, l->f_code, co, 8);
	if (l->frames == PY_FRAME_OBJECTS)
		/* f_lasti: in bytes, 3.10's in code units */
		put(f, l->f_instr, (uint64_t)unit * (l->lines == PY_LINETABLE_310 ? 1 : 2), 4);
	else
		put(f, l->f_instr, co + l->co_code_adaptive + 2 * (uint64_t)unit, 8);
	if (l->frames != PY_FRAME_OBJECTS)
		f[l->f_owner] = (uint8_t)owner;
	if (l->frames == PY_FRAMES_IS_ENTRY)
		f[l->f_is_entry] = (uint8_t)entry;
	return a;
}

/* A thread state running frame F (through a _PyCFrame in 3.11 and
 * 3.12), OS thread TID, the next NEXT. */
static uint64_t tstate(struct seed *s, uint64_t f, pid_t tid, uint64_t next)
{
	const struct py_layout *l = s->l;
	uint64_t a = alloc(s, l->ts_size);
	put(at(s, a), l->ts_next, next, 8);
	put(at(s, a), l->ts_interp, INTERP, 8);
	if (l->ts_via_cframe) {
		uint64_t cf = alloc(s, l->cf_current + 8);
		put(at(s, cf), l->cf_current, f, 8);
		f = cf;
	}
	put(at(s, a), l->ts_frame, f, 8);
	/* pthread_t: glibc's struct pthread, its tid at 0x2d0 */
	uint64_t pt = alloc(s, 0x2d8);
	put(at(s, pt), 0x2d0, (uint64_t)tid, 4);
	put(at(s, a), l->ts_thread_id, pt, 8);
	if (l->ts_native_id)
		put(at(s, a), l->ts_native_id, (uint64_t)tid, 4);
	return a;
}

/* A keys object of N entries (KEYS, VALUES; HASHES NULL: every key a str,
 * 3.11+'s str-keyed kind; SPLIT: 3.11+'s split kind, the values kept
 * apart), as layout L lays it out: 8 slots, one-byte indices. */
static uint64_t keys(struct seed *s, size_t n, const uint64_t *k, const uint64_t *v, const uint64_t *hashes,
		     int split)
{
	const struct py_layout *l = s->l;
	int old = l->attrs == PY_ATTRS_DICTOFFSET, general = old || hashes;
	size_t esize = general ? 24 : 16;
	uint64_t a = alloc(s, l->dk_indices + 8 + n * esize);
	uint8_t *b = at(s, a);
	put(b, 0, 1, 8);                        /* dk_refcnt */
	if (old) {
		put(b, 8, 8, 8);                /* dk_size */
	} else {
		b[8] = 3;                       /* dk_log2_size */
		b[9] = 3;                       /* dk_log2_index_bytes */
		b[10] = general ? 0 : split ? 2 : 1;
	}
	put(b, l->dk_nentries, n, 8);
	for (size_t i = 0; i < 8; i++)
		b[l->dk_indices + i] = i < n ? (uint8_t)i : 0xff;
	uint8_t *e = b + l->dk_indices + 8;
	for (size_t i = 0; i < n; i++, e += esize) {
		if (general)
			put(e, 0, hashes ? hashes[i] : 0x5eed + i, 8);
		put(e, general ? 8 : 0, k[i], 8);
		put(e, general ? 16 : 8, v ? v[i] : 0, 8);
	}
	return a;
}

/* A dict over keys KS, its values apart at VALS (0: in the entries). */
static uint64_t dict(struct seed *s, uint64_t ks, uint64_t vals)
{
	uint64_t a = alloc(s, 64);
	put(at(s, a), 0, 1, 8);
	put(at(s, a), s->l->dict_keys, ks, 8);
	put(at(s, a), s->l->dict_values, vals, 8);
	return a;
}

/* Values for a split table: N of them, as the layout lays them out. */
static uint64_t values(struct seed *s, size_t n, const uint64_t *v)
{
	uint64_t a = alloc(s, s->l->dv_values + 8 * n);
	if (s->l->dv_values)
		at(s, a)[3] = 1;                /* 3.13: valid */
	for (size_t i = 0; i < n; i++)
		put(at(s, a), s->l->dv_values + 8 * i, v[i], 8);
	return a;
}

/* A Thread object whose _name is NAME (keyed by the str KNAME, its other
 * attribute _ident by KIDENT), its attributes in values (VALS) or in a
 * dict, as layout L keeps them; its type TYPE (made once). */
static uint64_t thread_obj(struct seed *s, uint64_t *type, uint64_t kname, uint64_t kident,
			   uint64_t name, int vals)
{
	const struct py_layout *l = s->l;
	uint64_t k[2] = { kident, kname }, v[2] = { 0x1234, name };
	uint64_t cached = keys(s, 2, k, NULL, NULL, 1);
	if (!*type) {
		*type = alloc(s, l->ht_cached_keys + 8);
		uint64_t flags = 1ul << 9;      /* a heap type */
		if (l->attrs != PY_ATTRS_DICTOFFSET)
			flags |= 1ul << 4;      /* its dict managed */
		if (l->attrs == PY_ATTRS_INLINE_313)
			flags |= 1ul << 2;      /* values inline */
		put(at(s, *type), l->tp_flags, flags, 8);
		put(at(s, *type), l->tp_basicsize, 16, 8);
		put(at(s, *type), l->tp_dictoffset, l->attrs == PY_ATTRS_DICTOFFSET ? 16 : 0, 8);
		put(at(s, *type), l->ht_cached_keys, cached, 8);
	}
	uint64_t ks = keys(s, 2, k, NULL, NULL, 1);
	/* 32 bytes before the object (3.11+), the object, 24 after (3.13's values) */
	uint64_t base = alloc(s, 32 + 16 + l->dv_values + 16), obj = base + 32;
	put(at(s, obj), 8, *type, 8);
	if (l->attrs == PY_ATTRS_DICTOFFSET) {
		put(at(s, obj), 16, vals ? dict(s, ks, values(s, 2, v)) : dict(s, keys(s, 2, k, v, NULL, 0), 0), 8);
		return obj;
	}
	uint64_t d = dict(s, keys(s, 2, k, v, NULL, 0), 0);
	if (l->attrs == PY_ATTRS_VALUES_311) {
		if (vals)
			put(at(s, base), 0, values(s, 2, v), 8);
		else
			put(at(s, base), 8, d, 8);
	} else if (l->attrs == PY_ATTRS_TAGGED_312) {
		put(at(s, base), 8, vals ? values(s, 2, v) - 1 : d, 8);
	} else {
		if (vals) {
			at(s, obj + 16)[3] = 1;         /* valid */
			for (size_t i = 0; i < 2; i++)
				put(at(s, obj + 16), l->dv_values + 8 * i, v[i], 8);
		} else {
			put(at(s, base), 8, d, 8);
		}
	}
	return obj;
}

/* sys.modules -> threading -> _active: IDENT1 -> a Thread named NAME1 (its
 * attributes in values), IDENT2 -> one named NAME2 (in a dict). */
static uint64_t modules(struct seed *s, uint64_t ident1, uint64_t name1, uint64_t ident2, uint64_t name2)
{
	uint64_t type = 0, kname = ascii(s, "_name"), kident = ascii(s, "_ident");
	uint64_t t[2] = { thread_obj(s, &type, kname, kident, name1, 1),
			  thread_obj(s, &type, kname, kident, name2, 0) };
	uint64_t idents[2] = { ident1, ident2 };
	uint64_t longs[2] = { alloc(s, 32), alloc(s, 32) };
	uint64_t active = dict(s, keys(s, 2, longs, t, idents, 0), 0);
	uint64_t mk[2] = { ascii(s, "_limbo"), ascii(s, "_active") }, mv[2] = { dict(s, keys(s, 0, NULL, NULL, NULL, 0), 0), active };
	uint64_t module = alloc(s, 32);
	put(at(s, module), 16, dict(s, keys(s, 2, mk, mv, NULL, 0), 0), 8);
	uint64_t sk[3] = { ascii(s, "sys"), ascii(s, "threadingx"), ascii(s, "threading") };
	uint64_t sv[3] = { alloc(s, 32), alloc(s, 32), module };
	return dict(s, keys(s, 3, sk, sv, NULL, 0), 0);
}

static void put_region(FILE *f, uint64_t addr, const uint8_t *b, size_t len)
{
	uint16_t n = (uint16_t)len;
	fwrite(&addr, 8, 1, f);
	fwrite(&n, 2, 1, f);
	fwrite(b, 1, len, f);
}

/* Writes DIR/NAME: the interpreter of layout L (MODE as the input's byte
 * 0), its runtime starting with DEBUG (NULL: none). */
static void write_seed(const char *dir, const char *name, int mode, const struct py_layout *l,
		       const uint8_t *debug)
{
	struct seed *s = calloc(1, sizeof(*s));
	s->l = l;
	if (debug)
		memcpy(s->rt, debug, PY_DEBUG_OFFSETS_SIZE);
	uint64_t file = ascii(s, "/srv/app/compute.py");
	uint16_t uname[] = { 'S', 'p', 0xe4, 't', '.', 0x3bb };  /* "Spät.λ", UCS-2 */
	uint64_t co_main = code(s, ascii(s, "main"), ascii(s, "main"), file, 1);
	uint64_t co_work = code(s, ascii(s, "Worker.run"), ascii(s, "run"), file, 40);
	uint64_t co_calc = code(s, ascii(s, "calc"), ascii(s, "calc"), file, 80);
	uint64_t co_late = code(s, str(s, uname, 6, 2), str(s, uname + 5, 1, 2), file, 120);
	/* Thread 1: calc <- Worker.run <- main (3.11+: a C call into the eval
	 * loop between calc and Worker.run, as a C extension calling back). */
	uint64_t f = frame(s, co_main, 1, 0, 0, 1);
	f = frame(s, co_work, 5, f, 0, 0);
	if (l->frames == PY_FRAMES_CSTACK)
		f = frame(s, co_work, 0, f, PY_OWNED_BY_CSTACK, 0);
	f = frame(s, co_calc, 9, f, 0, l->frames == PY_FRAMES_IS_ENTRY);
	uint64_t ts2 = tstate(s, frame(s, co_late, 2, 0, 0, 1), 1002, 0);
	uint64_t ts1 = tstate(s, f, 1001, ts2);
	/* their names: threading._active[ident]._name, ident their pthread_t */
	uint64_t id1, id2;
	memcpy(&id1, at(s, ts1) + l->ts_thread_id, 8);
	memcpy(&id2, at(s, ts2) + l->ts_thread_id, 8);
	uint64_t mods = modules(s, id1, ascii(s, "Worker-1"), id2, str(s, uname, 4, 2));
	/* The interpreter, and the GIL held by thread 1. */
	put(s->rt, l->rt_interp_head, INTERP, 8);
	uint64_t gil = RUNTIME + l->rt_gil;
	s->is_len = l->is_threads_head + 8;
	if (l->is_gil_ptr) {
		gil = alloc(s, 32);
		put(s->is, l->is_gil_ptr, gil, 8);
		if (l->is_gil_ptr + 8 > s->is_len)
			s->is_len = l->is_gil_ptr + 8;
	}
	put(s->is, l->is_threads_head, ts1, 8);
	put(s->is, l->is_modules, mods, 8);
	if (l->is_modules + 8 > s->is_len)
		s->is_len = l->is_modules + 8;
	uint8_t *g = gil >= HEAP ? at(s, gil) : s->rt + l->rt_gil;
	put(g, l->gil_locked, 1, 4);
	put(g, l->gil_holder, ts1, 8);

	char path[4096];
	snprintf(path, sizeof(path), "%s/%s", dir, name);
	FILE *out = fopen(path, "wb");
	if (!out) {
		perror(path);
		exit(1);
	}
	uint8_t h[HEADER] = { (uint8_t)mode, 1 << 4 };
	put(h, 8, RUNTIME, 8);
	put(h, 16, CODE_TYPE, 8);
	put(h, 24, ts1, 8);
	fwrite(h, 1, sizeof(h), out);
	put_region(out, RUNTIME, s->rt, sizeof(s->rt));
	put_region(out, INTERP, s->is, s->is_len);
	put_region(out, HEAP, s->heap, s->used);
	fclose(out);
	free(s);
}

static void write_seeds(const char *dir, const char *debug_file)
{
	char name[64];
	for (int minor = 8; minor <= 12; minor++) {
		snprintf(name, sizeof(name), "seed-3.%d", minor);
		write_seed(dir, name, minor - 8, py_layout__of(minor), NULL);
	}
	uint8_t block[1 + PY_DEBUG_OFFSETS_SIZE] = { 6 };
	FILE *f = debug_file ? fopen(debug_file, "rb") : NULL;
	if (!f || fread(block + 1, 1, PY_DEBUG_OFFSETS_SIZE, f) != PY_DEBUG_OFFSETS_SIZE) {
		fprintf(stderr, "fuzz_pyinterp: no 3.13 seeds (FUZZ_PYINTERP_DEBUG)\n");
		exit(1);
	}
	fclose(f);
	struct py_layout l;
	if (!py_layout__from_debug(block + 1, PY_DEBUG_OFFSETS_SIZE, &l))
		fail("FUZZ_PYINTERP_DEBUG is no 3.13 _Py_DebugOffsets");
	write_seed(dir, "seed-3.13", 5, &l, block + 1);
	snprintf(name, sizeof(name), "%s/seed-debug-3.13", dir);
	f = fopen(name, "wb");
	fwrite(block, 1, sizeof(block), f);
	fclose(f);
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	const char *dir = getenv("FUZZ_PYINTERP_SEEDS");
	verbose = getenv("FUZZ_PYINTERP_VERBOSE") != NULL;
	if (dir)
		write_seeds(dir, getenv("FUZZ_PYINTERP_DEBUG"));
	return 0;
}
