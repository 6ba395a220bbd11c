/* Fuzz target: a HotSpot JVM read from a process whose memory is corrupt
 * or hostile (jvm/vmstructs.c, jvm/jvm.c): the exported tables, the thread
 * list, the frames walked from each thread's last Java frame and from a
 * given sp/pc/fp, the names and lines of their methods.
 *
 * The input (integers little-endian):
 *   0      bit 0: memory outside the regions reads as byte 1 repeated
 *          (every pointer leads somewhere, every length is huge)
 *   1      that byte
 *   8-167  the 20 addresses of struct jvm_symbols, in its order
 *   168-191 a frame to walk from: sp, pc, fp
 *   192-   the process's memory: regions, each an address (8 bytes), a
 *          length (2) and its bytes; at most MAX_REGIONS
 * Each thread's name is read too (FUZZ_JVM_VERBOSE prints it).  Besides not crashing or hanging, what must hold: counts within what was
 * asked; names terminated within their buffers; lines not negative.
 * FUZZ_JVM_VERBOSE=1 prints each frame read.
 *
 * FUZZ_JVM_SEED=FILE writes a seed: a fake JVM whose tables name every
 * field the reader needs, with one thread blocked in an interpreted frame
 * of "Seed.run" (a line table: bci 0 at line 7) called from the call stub
 * (tests/fuzz/corpus/jvm/seed-thread); FUZZ_JVM_SEED_MODERN=FILE the same
 * as JDK 25 lays it out, the thread's name ("seed") read through the
 * classes' FieldInfoStreams (tests/fuzz/corpus/jvm/seed-thread-25). */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "jvm/jvm.h"
#include "tests/fuzz/fakemem.h"

#define HEADER 192

static void fail(const char *what)
{
	fprintf(stderr, "fuzz_jvm: %s\n", what);
	abort();
}

static void check_str(const char *s, size_t cap)
{
	if (strnlen(s, cap) == cap)
		fail("a name unterminated");
}

static void walk(struct jvm *j, uint64_t sp, uint64_t pc, uint64_t fp)
{
	static struct jvm_frame fr[JVM_MAX_FRAMES];
	for (size_t max = 64; max; max = max == 3 ? 0 : 3) {
		size_t n;
		uint64_t a, b, c;
		uint64_t efp, csp, cpc, cfp;
		if (jvm__walk(j, sp, pc, fp, fr, max, &n, &a, &b, &c, &efp) == JVM_END_ENTRY &&
		    jvm__caller_anchor(j, efp, &csp, &cpc, &cfp) == 0 && !csp)
			fail("a caller's anchor with no sp");
		if (n > max)
			fail("more frames than asked");
		for (size_t k = 0; k < n; k++) {
			char name[200], file[64];
			if (fr[k].kind == JVM_STUB) {
				jvm__blob_name(j, fr[k].blob, name, sizeof(name));
				check_str(name, sizeof(name));
				continue;
			}
			jvm__method_name(j, fr[k].method, name, sizeof(name), file, sizeof(file));
			check_str(name, sizeof(name));
			check_str(file, sizeof(file));
			int line = jvm__line(j, fr[k].method, fr[k].bci);
			if (line < 0)
				fail("a negative line");
			if (getenv("FUZZ_JVM_VERBOSE"))
				fprintf(stderr, "fuzz_jvm: frame %zu of %zu: %s %s:%d\n", k, n, name, file, line);
		}
	}
}

/* ---- the seed ------------------------------------------------------------------ */

#define SEED_BASE 0x100000ull

struct seed {
	uint8_t mem[0x4000];
	size_t used;
};

static uint64_t put(struct seed *s, const void *p, size_t n)
{
	uint64_t at = SEED_BASE + s->used;
	memcpy(s->mem + s->used, p, n);
	s->used += (n + 7) & ~7ul;
	return at;
}

static uint64_t put_str(struct seed *s, const char *str)
{
	return put(s, str, strlen(str) + 1);
}

static void set64(struct seed *s, uint64_t addr, uint64_t v)
{
	memcpy(s->mem + (addr - SEED_BASE), &v, 8);
}

/* A Symbol: _length (u2) at 4, _body at 6. */
static uint64_t put_sym(struct seed *s, const char *str)
{
	uint8_t b[80] = { 0 };
	size_t n = strlen(str);
	memcpy(b + 4, &(uint16_t){ (uint16_t)n }, 2);
	memcpy(b + 6, str, n);
	return put(s, b, 6 + n);
}

/* JDK 21's FieldInfoStream as an Array<u1> (_length, then _data at 4):
 * N Java fields, each (name index NAME[i], signature 0, offset OFF[i],
 * access 0, flags 0), every number under 191 (one byte, one more than it). */
static uint64_t put_fields(struct seed *s, size_t n, const uint8_t *name, const uint8_t *off)
{
	uint8_t b[64] = { 0 };
	size_t k = 4;
	b[k++] = (uint8_t)(n + 1);
	b[k++] = 1;
	for (size_t i = 0; i < n; i++) {
		uint8_t f[5] = { (uint8_t)(name[i] + 1), 1, (uint8_t)(off[i] + 1), 1, 1 };
		memcpy(b + k, f, 5);
		k += 5;
	}
	memcpy(b, &(int32_t){ (int32_t)(k - 4) }, 4);
	return put(s, b, k);
}

/* The seed as JDK 11-22 lay it out, or (MODERN) as JDK 25 does: fields
 * moved or renamed (Thread::_osthread, CodeBlob's offsets, nmethod's
 * method and debug data, ConstMethod's flags), the release in the tables
 * (UNSIGNED5 with its excess byte), and the thread's java.lang.Thread and
 * its name ("seed") found through the classes' FieldInfoStreams. */
static void write_seed(const char *path, bool modern)
{
	static struct seed s;
	memset(&s, 0, sizeof(s));
	/* the layout words: struct entries of 48 bytes (type, field, type
	 * string, is static, offset, address), types of 24 (name, size),
	 * constants of 16 (name, value) */
	uint64_t words[20] = { 0, 0, 0, 0, 0, 8, 16, 24, 32, 40, 48, 0, 8, 24, 0, 8, 16, 0, 8, 16 };
	uint64_t w = put(&s, words, sizeof(words));
	/* the objects, fields at the offsets the table gives */
	uint64_t list_var = put(&s, (uint64_t[1]){ 0 }, 8);
	uint64_t stub_var = put(&s, (uint64_t[1]){ 0x700000 }, 8);   /* call stub return */
	uint64_t heaps_var = put(&s, (uint64_t[1]){ 0 }, 8);
	uint64_t code_var = put(&s, (uint64_t[1]){ 0 }, 8);
	uint64_t major_var = 0, zero_var = 0;
	if (modern) {
		major_var = put(&s, (uint64_t[1]){ 25 }, 8);
		zero_var = put(&s, (uint64_t[1]){ 0 }, 8);    /* compressed: base 0, shift 0 */
	}
	struct { const char *t, *f; uint64_t off, addr; } f[64] = {
		{ "ThreadsSMRSupport", "_java_thread_list", 0, list_var },
		{ "ThreadsList", "_length", 4, 0 }, { "ThreadsList", "_threads", 16, 0 },
		{ "JavaThread", "_osthread", 8, 0 }, { "OSThread", "_thread_id", 0, 0 },
		{ "JavaThread", "_anchor", 16, 0 }, { "JavaThread", "_thread_state", 40, 0 },
		{ "JavaFrameAnchor", "_last_Java_sp", 0, 0 },
		{ "JavaFrameAnchor", "_last_Java_pc", 8, 0 },
		{ "JavaFrameAnchor", "_last_Java_fp", 16, 0 },
		{ "CodeBlob", "_name", 0, 0 }, { "CodeBlob", "_size", 8, 0 },
		{ "CodeBlob", "_header_size", 12, 0 }, { "CodeBlob", "_frame_size", 16, 0 },
		{ "CodeBlob", "_code_begin", 24, 0 }, { "CodeBlob", "_code_end", 32, 0 },
		{ "CompiledMethod", "_method", 40, 0 },
		{ "Method", "_constMethod", 8, 0 }, { "ConstMethod", "_constants", 8, 0 },
		{ "ConstMethod", "_name_index", 16, 0 }, { "ConstMethod", "_code_size", 18, 0 },
		{ "ConstMethod", "_flags", 20, 0 },
		{ "ConstantPool", "_pool_holder", 8, 0 }, { "ConstantPool", "_length", 16, 0 },
		{ "ConstantPool", "_source_file_name_index", 20, 0 },
		{ "Klass", "_name", 8, 0 }, { "Symbol", "_length", 4, 0 }, { "Symbol", "_body", 6, 0 },
		{ "StubRoutines", "_call_stub_return_address", 0, stub_var },
		{ "CodeCache", "_heaps", 0, heaps_var },
		{ "AbstractInterpreter", "_code", 0, code_var },
		{ "StubQueue", "_stub_buffer", 0, 0 }, { "StubQueue", "_buffer_limit", 8, 0 },
		{ "GrowableArrayBase", "_len", 0, 0 }, { "GrowableArray<int>", "_data", 8, 0 },
	};
	size_t nf = 0;
	while (f[nf].t)
		nf++;
	if (modern) {
		static const struct { const char *old_t, *old_f, *t, *f; } moved[] = {
			{ "JavaThread", "_osthread", "Thread", "_osthread" },
			{ "CodeBlob", "_code_begin", "CodeBlob", "_code_offset" },
			{ "CodeBlob", "_code_end", "CodeBlob", "_data_offset" },
			{ "CompiledMethod", "_method", "nmethod", "_method" },
			{ "ConstMethod", "_flags", "ConstMethod", "_flags._flags" },
		};
		for (size_t i = 0; i < nf; i++)
			for (size_t k = 0; k < sizeof(moved) / sizeof(moved[0]); k++)
				if (!strcmp(f[i].t, moved[k].old_t) && !strcmp(f[i].f, moved[k].old_f)) {
					f[i].t = moved[k].t;
					f[i].f = moved[k].f;
				}
		static const struct { const char *t, *f; uint64_t off; } added[] = {
			{ "JavaThread", "_threadObj", 48 }, { "InstanceKlass", "_constants", 16 },
			{ "InstanceKlass", "_fieldinfo_stream", 24 }, { "Array<u1>", "_data", 4 },
			{ "oopDesc", "_metadata._compressed_klass", 8 },
			{ "nmethod", "_scopes_pcs_offset", 48 }, { "nmethod", "_scopes_data_offset", 52 },
			{ "nmethod", "_immutable_data", 56 }, { "nmethod", "_immutable_data_size", 64 },
			{ "CodeBlob", "_mutable_data", 72 }, { "CodeBlob", "_relocation_size", 80 },
			{ "PcDesc", "_pc_offset", 0 }, { "PcDesc", "_scope_decode_offset", 4 },
			{ "CodeHeap", "_memory", 0 }, { "CodeHeap", "_segmap", 16 },
			{ "CodeHeap", "_log2_segment_size", 32 }, { "VirtualSpace", "_low", 0 },
			{ "VirtualSpace", "_high", 8 },
		};
		for (size_t k = 0; k < sizeof(added) / sizeof(added[0]); k++)
			f[nf++] = (typeof(f[0])){ added[k].t, added[k].f, added[k].off, 0 };
		static const struct { const char *t, *f; } statics[] = {
			{ "CompressedOops", "_base" }, { "CompressedOops", "_shift" },
			{ "CompressedKlassPointers", "_base" }, { "CompressedKlassPointers", "_shift" },
		};
		for (size_t k = 0; k < sizeof(statics) / sizeof(statics[0]); k++)
			f[nf++] = (typeof(f[0])){ statics[k].t, statics[k].f, 0, zero_var };
		f[nf++] = (typeof(f[0])){ "Abstract_VM_Version", "_vm_major_version", 0, major_var };
	}
	uint64_t structs = SEED_BASE + s.used;
	s.used += (nf + 1) * 48;
	for (size_t i = 0; i < nf; i++) {
		uint64_t e = structs + i * 48;
		set64(&s, e, put_str(&s, f[i].t));
		set64(&s, e + 8, put_str(&s, f[i].f));
		memcpy(s.mem + (e + 24 - SEED_BASE), &(int32_t){ f[i].addr != 0 }, 4);
		set64(&s, e + 32, f[i].off);
		set64(&s, e + 40, f[i].addr);
	}
	struct { const char *n; uint64_t size; } t[] = {
		{ "ConstMethod", 32 }, { "ConstantPool", 24 }, { "HeapBlock", 16 }, { "PcDesc", 16 },
	};
	size_t nt = modern ? 4 : 3;
	uint64_t types = SEED_BASE + s.used;
	s.used += (nt + 1) * 24;
	for (size_t i = 0; i < nt; i++) {
		set64(&s, types + i * 24, put_str(&s, t[i].n));
		set64(&s, types + i * 24 + 8, t[i].size);
	}
	struct { const char *n; int32_t v; } c[] = {
		{ "_thread_in_native", 4 }, { "_thread_in_vm", 6 }, { "_thread_in_Java", 8 },
		{ "_thread_blocked", 10 }, { "ConstMethod::_has_linenumber_table", 1 },
		{ "FieldInfo::FieldFlags::_ff_initialized", 0 },
		{ "FieldInfo::FieldFlags::_ff_generic", 2 },
		{ "FieldInfo::FieldFlags::_ff_contended", 4 },
	};
	size_t nc = modern ? 8 : 5;
	if (modern)
		c[4].n = "ConstMethodFlags::_misc_has_linenumber_table";
	uint64_t ints = SEED_BASE + s.used;
	s.used += (nc + 1) * 16;
	for (size_t i = 0; i < nc; i++) {
		set64(&s, ints + i * 16, put_str(&s, c[i].n));
		memcpy(s.mem + (ints + i * 16 + 8 - SEED_BASE), &c[i].v, 4);
	}
	uint64_t longs = put(&s, (uint64_t[2]){ 0, 0 }, 16);
	set64(&s, w, structs);
	set64(&s, w + 8, types);
	set64(&s, w + 16, ints);
	set64(&s, w + 24, longs);
	/* the interpreter's code at 0x600000 (4 KiB) */
	uint64_t queue = put(&s, (uint64_t[2]){ 0x600000, 0x1000 }, 16);
	set64(&s, code_var, queue);
	/* a method: its symbols, pool, ConstMethod (2 bytecodes, then a line
	 * table: bci 0 at line 7: (0 << 3 | 7), end) */
	uint64_t kname = put(&s, "\0\0\0\0\4\0Seed", 10);
	uint64_t mname = put(&s, "\0\0\0\0\3\0run", 9);
	uint64_t fname = put(&s, "\0\0\0\0\11\0Seed.java", 15);
	uint64_t klass = put(&s, (uint64_t[2]){ 0, kname }, 16);
	uint8_t cp[24 + 3 * 8] = { 0 };
	memcpy(cp + 8, &klass, 8);
	memcpy(cp + 16, &(int32_t){ 3 }, 4);
	memcpy(cp + 20, &(uint16_t){ 2 }, 2);
	memcpy(cp + 24 + 8, &mname, 8);
	memcpy(cp + 24 + 16, &fname, 8);
	uint64_t pool = put(&s, cp, sizeof(cp));
	uint8_t cm[32 + 2 + 2] = { 0 };
	memcpy(cm + 8, &pool, 8);
	memcpy(cm + 16, &(uint16_t){ 1 }, 2);
	memcpy(cm + 18, &(uint16_t){ 2 }, 2);
	memcpy(cm + 20, &(uint32_t){ 1 }, 4);
	cm[34] = 7;
	uint64_t cmeth = put(&s, cm, sizeof(cm));
	uint64_t method = put(&s, (uint64_t[2]){ 0, cmeth }, 16);
	/* the thread's stack: an interpreted frame at fp, its method at
	 * fp - 24, its bcp (bci 0) at fp - 64, caller's sp at fp - 8; its
	 * saved fp (that of the call stub's frame) at fp, return address (the
	 * call stub's) at fp + 8 */
	uint64_t stack[16] = { 0 };
	uint64_t st = SEED_BASE + s.used, fp = st + 8 * 8, stubfp = st + 12 * 8;
	stack[0] = cmeth + 32;                  /* fp - 64: bcp */
	stack[5] = method;                      /* fp - 24 */
	stack[7] = fp + 16;                     /* fp - 8: sender sp */
	stack[8] = stubfp;
	stack[9] = 0x700000;
	stack[12] = 0;                          /* the stub frame: caller's fp, pc */
	stack[13] = 0x401234;
	put(&s, stack, sizeof(stack));
	uint8_t os[8] = { 0 };
	memcpy(os, &(int32_t){ 4242 }, 4);
	uint64_t osthread = put(&s, os, 8);
	uint64_t thread[7] = { 0, osthread, st, 0x600010, fp, 10, 0 };
	if (modern) {
		/* a shared pool of the fields' names; java.lang.Thread with
		 * "name" at 12, String with "value" at 12 and "coder" at 16;
		 * the objects (klass at 8, fields after), the name "seed" */
		uint8_t fp_[24 + 4 * 8] = { 0 };
		memcpy(fp_ + 16, &(int32_t){ 4 }, 4);
		uint64_t syms[3] = { put_sym(&s, "name"), put_sym(&s, "value"), put_sym(&s, "coder") };
		memcpy(fp_ + 24 + 8, syms, sizeof(syms));
		uint64_t fpool = put(&s, fp_, sizeof(fp_));
		uint64_t tks[4] = { 0, put_sym(&s, "java/lang/Thread"), fpool,
				    put_fields(&s, 1, (uint8_t[]){ 1 }, (uint8_t[]){ 12 }) };
		uint64_t tk = put(&s, tks, sizeof(tks));
		uint64_t sks[4] = { 0, put_sym(&s, "java/lang/String"), fpool,
				    put_fields(&s, 2, (uint8_t[]){ 2, 3 }, (uint8_t[]){ 12, 16 }) };
		uint64_t sk = put(&s, sks, sizeof(sks));
		uint8_t bytes[24] = { 0 };
		memcpy(bytes + 8, &(uint32_t){ (uint32_t)sk }, 4);
		memcpy(bytes + 12, &(uint32_t){ 4 }, 4);
		memcpy(bytes + 16, "seed", 4);
		uint64_t value = put(&s, bytes, sizeof(bytes));
		uint8_t str[24] = { 0 };
		memcpy(str + 8, &(uint32_t){ (uint32_t)sk }, 4);
		memcpy(str + 12, &(uint32_t){ (uint32_t)value }, 4);
		uint64_t name = put(&s, str, sizeof(str));
		uint8_t obj[16] = { 0 };
		memcpy(obj + 8, &(uint32_t){ (uint32_t)tk }, 4);
		memcpy(obj + 12, &(uint32_t){ (uint32_t)name }, 4);
		uint64_t o = put(&s, obj, sizeof(obj));
		thread[6] = put(&s, &o, 8);     /* the OopHandle */
	}
	uint64_t th = put(&s, thread, sizeof(thread));
	uint64_t ths[2] = { th, 0 };
	uint32_t nth = 1;
	uint64_t heaps_arr = 0;
	if (modern) {
		/* a second thread, blocked in compiled code: a code heap of
		 * 64-byte segments holding one nmethod (its HeapBlock, 16
		 * bytes, first); the nmethod's code at 64 from it, a frame of
		 * 4 words; one PcDesc (pc offset 16, scope at 1) in its
		 * immutable data, then the scope (UNSIGNED5, each byte one
		 * more: sender 0, method 1, bci 0 written as 1); its metadata
		 * (Seed.run) after 8 bytes of relocations in its mutable data.
		 * The frame returns to the call stub. */
		s.used = (s.used + 63) & ~(size_t)63;
		uint64_t lo = SEED_BASE + s.used;
		uint8_t heap[256] = { 0 };
		uint64_t blob = lo + 16;
		s.used += sizeof(heap);
		uint64_t nm_name = put_str(&s, "nmethod");
		uint8_t imm[36] = { 0 };
		memcpy(imm + 8, &(int32_t){ 16 }, 4);           /* PcDesc: pc offset */
		memcpy(imm + 12, &(int32_t){ 1 }, 4);           /* ... scope at 1 */
		imm[24 + 1] = 1;                                /* sender 0 */
		imm[24 + 2] = 2;                                /* method 1 */
		imm[24 + 3] = 2;                                /* bci 0 (+ 1) */
		uint64_t imm_at = put(&s, imm, sizeof(imm));
		uint64_t mut[2] = { 0, method };
		uint64_t mut_at = put(&s, mut, sizeof(mut));
		uint8_t *b = heap + 16;
		memcpy(b + 0, &nm_name, 8);                     /* _name */
		memcpy(b + 8, &(int32_t){ 240 }, 4);            /* _size */
		memcpy(b + 16, &(int32_t){ 4 }, 4);             /* _frame_size, words */
		memcpy(b + 24, &(int32_t){ 64 }, 4);            /* _code_offset */
		memcpy(b + 32, &(int32_t){ 192 }, 4);           /* _data_offset */
		memcpy(b + 40, &method, 8);                     /* nmethod::_method */
		memcpy(b + 48, &(int32_t){ 8 }, 4);             /* _scopes_pcs_offset */
		memcpy(b + 52, &(int32_t){ 24 }, 4);            /* _scopes_data_offset */
		memcpy(b + 56, &imm_at, 8);                     /* _immutable_data */
		memcpy(b + 64, &(int32_t){ 32 }, 4);            /* _immutable_data_size */
		memcpy(b + 72, &mut_at, 8);                     /* _mutable_data */
		memcpy(b + 80, &(int32_t){ 8 }, 4);             /* _relocation_size */
		memcpy(s.mem + (lo - SEED_BASE), heap, sizeof(heap));
		uint8_t segmap[8] = { 0, 1, 2, 3, 0xff, 0xff, 0xff, 0xff };
		uint64_t segmap_at = put(&s, segmap, sizeof(segmap));
		uint64_t ch[5] = { lo, lo + sizeof(heap), segmap_at, 0, 6 };
		uint64_t ch_at = put(&s, ch, sizeof(ch));
		uint64_t chs = put(&s, &ch_at, 8);
		uint64_t ga[2] = { 1, chs };                    /* _len, _data */
		heaps_arr = put(&s, ga, sizeof(ga));
		/* its stack: the frame's 4 words, the last two the saved fp
		 * (the call stub's frame) and the return address (the stub) */
		uint64_t st2[4] = { 0, 0, stubfp, 0x700000 };
		uint64_t sp2 = put(&s, st2, sizeof(st2));
		uint8_t os2[8] = { 0 };
		memcpy(os2, &(int32_t){ 4243 }, 4);
		uint64_t thread2[7] = { 0, put(&s, os2, 8), sp2, blob + 64 + 8, 0, 10, 0 };
		ths[nth++] = put(&s, thread2, sizeof(thread2));
	}
	uint64_t arr = put(&s, ths, 8ul * nth);
	uint8_t tl[24] = { 0 };
	memcpy(tl + 4, &nth, 4);
	memcpy(tl + 16, &arr, 8);
	set64(&s, list_var, put(&s, tl, sizeof(tl)));
	if (heaps_arr)
		set64(&s, heaps_var, heaps_arr);
	else
		set64(&s, heaps_var, put(&s, (uint8_t[16]){ 0 }, 16));
	/* the input */
	FILE *out = fopen(path, "wb");
	if (!out)
		fail("cannot write the seed");
	uint8_t h[HEADER] = { 0 };
	for (int i = 0; i < 20; i++)
		memcpy(h + 8 + 8 * i, &(uint64_t){ w + 8 * (uint64_t)i }, 8);
	memcpy(h + 168, &(uint64_t){ st }, 8);
	memcpy(h + 176, &(uint64_t){ 0x600010 }, 8);
	memcpy(h + 184, &fp, 8);
	fwrite(h, 1, sizeof(h), out);
	uint8_t rh[10];
	memcpy(rh, &(uint64_t){ SEED_BASE }, 8);
	memcpy(rh + 8, &(uint16_t){ (uint16_t)s.used }, 2);
	fwrite(rh, 1, sizeof(rh), out);
	fwrite(s.mem, 1, s.used, out);
	fclose(out);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size < HEADER)
		return 0;
	static struct mem m;
	mem_load(&m, data, size, 0, HEADER);
	struct jvm_symbols sym;
	uint64_t *f[] = { &sym.structs, &sym.types, &sym.ints, &sym.longs, &sym.s_type, &sym.s_field,
			  &sym.s_typestr, &sym.s_static, &sym.s_offset, &sym.s_address, &sym.s_stride,
			  &sym.t_name, &sym.t_size, &sym.t_stride, &sym.i_name, &sym.i_value,
			  &sym.i_stride, &sym.l_name, &sym.l_value, &sym.l_stride };
	for (int i = 0; i < 20; i++)
		*f[i] = le(data + 8 + 8 * i, 8);
	char why[200];
	struct jvm *j = jvm__open(&sym, fake_read, &m, why, sizeof(why));
	if (!j) {
		check_str(why, sizeof(why));
		if (getenv("FUZZ_JVM_VERBOSE"))
			fprintf(stderr, "fuzz_jvm: not opened: %s\n", why);
		return 0;
	}
	static struct jvm_thread th[8];
	int n = jvm__threads(j, th, 8);
	if (n > 8)
		fail("more threads than asked");
	for (int i = 0; i < n; i++) {
		char name[64];
		jvm__thread_name(j, th[i].thread, name, sizeof(name));
		check_str(name, sizeof(name));
		if (getenv("FUZZ_JVM_VERBOSE"))
			fprintf(stderr, "fuzz_jvm: thread %d named '%s'\n", th[i].tid, name);
		if (th[i].sp)
			walk(j, th[i].sp, th[i].pc, th[i].fp);
	}
	walk(j, le(data + 168, 8), le(data + 176, 8), le(data + 184, 8));
	jvm__free(j);
	return 0;
}

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)argc;
	(void)argv;
	const char *seed = getenv("FUZZ_JVM_SEED");
	if (seed)
		write_seed(seed, false);
	seed = getenv("FUZZ_JVM_SEED_MODERN");
	if (seed)
		write_seed(seed, true);
	return 0;
}
