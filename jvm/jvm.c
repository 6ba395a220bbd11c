/* Reading a HotSpot JVM from outside (see jvm.h).  Every field offset
 * comes from the JVM's own tables (jvm/vmstructs.c); what they do not
 * give is x86-64's frame layout, the same in JDK 11 to 25 (frame_x86.hpp:
 * an interpreted frame keeps its Method* 3 words below its fp and its bcp
 * 8 below; every frame's return address is the word above its saved fp),
 * as the Serviceability Agent's X86Frame keeps it. */
#include "jvm/jvm.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "module/modules.h"
#include "util/remote.h"
#include "util/xalloc.h"

/* frame_x86.hpp, in words from fp */
#define FR_LINK 0
#define FR_RETURN 1
#define FR_SENDER_SP 2
#define FR_INTERP_METHOD (-3)
#define FR_INTERP_BCP (-8)
#define FR_INTERP_SENDER_SP (-1)

#define ANCHOR_READ 64
#define MAX_FRAME_WORDS (1u << 20)      /* a compiled frame of 8 MiB is not one */
#define MAX_SYMBOL 1024                 /* a class or method name cut there */

struct jvm {
	struct jvm_structs *js;
	jvm_read_fn read;
	void *ctx;
	/* offsets */
	uint64_t tl_length, tl_threads, jt_osthread, os_tid, jt_anchor, jt_state;
	uint64_t an_sp, an_pc, an_fp;
	uint64_t cb_name, cb_size, cb_header, cb_frame_size, cb_code_begin, cb_code_end;
	/* JDK 23 on: the code's bounds are offsets from the blob (an int each,
	 * _code_offset and _data_offset), not addresses; an nmethod's debug
	 * information is in data of its own (_immutable_data: its PcDescs and
	 * scopes at offsets; _mutable_data: its metadata after the
	 * relocations), and the deopt handlers are offsets from the blob */
	bool blob_offsets;
	uint32_t u5_excess;             /* read_u5()'s: 1 from JDK 20 */
	uint64_t nm_immutable, nm_immutable_size, nm_scopes_data, cb_mutable, cb_reloc_size;
	uint64_t cm_method;
	uint64_t m_const, cm_constants, cm_name_index, cm_code_size, cm_flags, cm_size;
	uint64_t cp_holder, cp_size, cp_length, cp_source, k_name, sym_length, sym_body;
	uint64_t heapblock_size;
	/* compiled frames' scopes (inlining); 0: not in the tables */
	uint64_t nm_pcs, nm_deps, nm_metadata, cm_scopes_data, pd_pc, pd_scope, pd_size;
	/* a frame being deoptimized: its return address is its nmethod's
	 * deopt handler, its pc saved in the frame; 0: not in the tables */
	uint64_t cm_deopt, cm_deopt_mh, nm_orig_pc;
	/* the call stub's frame: its JavaCallWrapper (words from its fp) and
	 * the wrapper's saved anchor, the Java frames that called into the
	 * VM; 0: not in the tables */
	int64_t entry_wrapper;
	uint64_t jcw_anchor;
	/* a thread's java.lang.Thread and its name: the oops' layout, the
	 * fields found in their classes (0: not yet, UINT64_MAX: not found) */
	uint64_t jt_threadobj, ik_fields, ik_nfields, ik_constants, arr_data;
	uint64_t narrow_oop_base_addr, narrow_oop_shift_addr, narrow_klass_base_addr,
		 narrow_klass_shift_addr, oop_klass;
	int64_t fi_slots, fi_name, fi_low, fi_high, fi_flags, fi_tag;
	/* JDK 21 on: an InstanceKlass's fields are a stream of UNSIGNED5
	 * numbers (_fieldinfo_stream), each field's optional numbers told by
	 * its flags' bits (FieldInfo::FieldFlags::_ff_*) */
	uint64_t ik_stream;
	uint32_t ff_optional;
	uint64_t thread_name_off, string_value_off, string_coder_off;
	uint64_t thread_klass, string_klass;
	int64_t has_lines, st_native, st_vm, st_java, st_blocked;
	/* where */
	uint64_t thread_list;           /* &ThreadsSMRSupport::_java_thread_list */
	uint64_t interp_lo, interp_hi;
	uint64_t call_stub_ret;
	struct { uint64_t lo, hi, segmap; uint32_t log2; } heaps[JVM_MAX_HEAPS];
	size_t nheaps;
	uint64_t heaps_addr;            /* &CodeCache::_heaps */
	/* jvm__set_stack(): reads within it come from this copy */
	uint64_t ov_addr;
	const unsigned char *ov;
	size_t ov_len;
};

static int rd(const struct jvm *j, uint64_t addr, void *buf, size_t len)
{
	if (!addr || addr + len < addr)
		return -1;
	if (j->ov && addr >= j->ov_addr && addr + len <= j->ov_addr + j->ov_len) {
		memcpy(buf, j->ov + (addr - j->ov_addr), len);
		return 0;
	}
	return j->read(j->ctx, addr, buf, len);
}

void jvm__set_stack(struct jvm *j, uint64_t addr, const unsigned char *copy, size_t len)
{
	j->ov_addr = addr;
	j->ov = copy;
	j->ov_len = copy ? len : 0;
}

static int rd64(const struct jvm *j, uint64_t addr, uint64_t *out)
{
	return rd(j, addr, out, 8);
}

static int rd32(const struct jvm *j, uint64_t addr, uint32_t *out)
{
	return rd(j, addr, out, 4);
}

static int rd16(const struct jvm *j, uint64_t addr, uint16_t *out)
{
	return rd(j, addr, out, 2);
}

static int remote_read(void *ctx, uint64_t addr, void *buf, size_t len)
{
	return remote__read((pid_t)(intptr_t)ctx, addr, buf, len);
}

/* ---- opening -------------------------------------------------------------------- */

/* The offset of TYPE::FIELD, or of TYPE2::FIELD2 where the first is not in
 * the tables (a field renamed or moved between JDKs); UINT64_MAX if
 * neither is. */
static uint64_t offset_either(const struct jvm_structs *js, const char *type, const char *field,
			      const char *type2, const char *field2)
{
	uint64_t off = jvm_structs__offset(js, type, field);
	return off != UINT64_MAX ? off : jvm_structs__offset(js, type2, field2);
}

/* The same for a static's address (0: neither). */
static uint64_t static_either(const struct jvm_structs *js, const char *type, const char *field,
			      const char *field2)
{
	uint64_t a = jvm_structs__static(js, type, field);
	return a ? a : jvm_structs__static(js, type, field2);
}

/* The fields' layout up to JDK 20: each field FieldInfo::field_slots u2s
 * of InstanceKlass::_fields.  True if the tables give all of it. */
static bool fields_array_layout(struct jvm *j)
{
	const struct jvm_structs *js = j->js;
	j->ik_fields = jvm_structs__offset(js, "InstanceKlass", "_fields");
	j->ik_nfields = jvm_structs__offset(js, "InstanceKlass", "_java_fields_count");
	j->arr_data = jvm_structs__offset(js, "Array<u2>", "_data");
	return j->ik_fields < 4096 && j->ik_nfields < 4096 && j->arr_data < 64 &&
	       jvm_structs__constant(js, "FieldInfo::field_slots", &j->fi_slots) == 0 &&
	       jvm_structs__constant(js, "FieldInfo::name_index_offset", &j->fi_name) == 0 &&
	       jvm_structs__constant(js, "FieldInfo::low_packed_offset", &j->fi_low) == 0 &&
	       jvm_structs__constant(js, "FieldInfo::high_packed_offset", &j->fi_high) == 0 &&
	       jvm_structs__constant(js, "FieldInfo::access_flags_offset", &j->fi_flags) == 0 &&
	       jvm_structs__constant(js, "FIELDINFO_TAG_SIZE", &j->fi_tag) == 0 &&
	       j->fi_slots > 0 && j->fi_slots <= 16 && j->fi_name >= 0 && j->fi_name < j->fi_slots &&
	       j->fi_low >= 0 && j->fi_low < j->fi_slots && j->fi_high >= 0 &&
	       j->fi_high < j->fi_slots && j->fi_flags >= 0 && j->fi_flags < j->fi_slots &&
	       j->fi_tag >= 0 && j->fi_tag < 16;
}

/* From JDK 21: InstanceKlass::_fieldinfo_stream, an Array<u1>; the flag
 * bits that add a number to a field (its initial value's index, its
 * generic signature's, its @Contended group; later JDKs' flat layout and
 * null marker where their tables name them).  True if the tables give
 * the stream and the three bits every such JDK has. */
static bool fields_stream_layout(struct jvm *j)
{
	const struct jvm_structs *js = j->js;
	static const char *const optional[] = {
		"FieldInfo::FieldFlags::_ff_initialized", "FieldInfo::FieldFlags::_ff_generic",
		"FieldInfo::FieldFlags::_ff_contended", "FieldInfo::FieldFlags::_ff_flat",
		"FieldInfo::FieldFlags::_ff_null_marker",
	};
	j->ik_stream = jvm_structs__offset(js, "InstanceKlass", "_fieldinfo_stream");
	j->arr_data = jvm_structs__offset(js, "Array<u1>", "_data");
	j->ff_optional = 0;
	bool ok = j->ik_stream < 4096 && j->arr_data < 64;
	for (size_t i = 0; ok && i < sizeof(optional) / sizeof(optional[0]); i++) {
		int64_t bit;
		if (jvm_structs__constant(js, optional[i], &bit) < 0)
			ok = i >= 3;            /* the later JDKs' own */
		else if (bit < 0 || bit > 31)
			ok = false;
		else
			j->ff_optional |= 1u << bit;
	}
	if (!ok)
		j->ik_stream = UINT64_MAX;
	return ok;
}

/* What reading a thread's name takes (jvm__thread_name); any of it
 * missing leaves jt_threadobj 0: no names. */
static void names_layout(struct jvm *j)
{
	const struct jvm_structs *js = j->js;
	j->jt_threadobj = jvm_structs__offset(js, "JavaThread", "_threadObj");
	j->ik_constants = jvm_structs__offset(js, "InstanceKlass", "_constants");
	j->oop_klass = jvm_structs__offset(js, "oopDesc", "_metadata._compressed_klass");
	j->narrow_oop_base_addr = static_either(js, "CompressedOops", "_narrow_oop._base", "_base");
	j->narrow_oop_shift_addr =
		static_either(js, "CompressedOops", "_narrow_oop._shift", "_shift");
	j->narrow_klass_base_addr =
		static_either(js, "CompressedKlassPointers", "_narrow_klass._base", "_base");
	j->narrow_klass_shift_addr =
		static_either(js, "CompressedKlassPointers", "_narrow_klass._shift", "_shift");
	j->ik_stream = UINT64_MAX;
	bool ok = j->jt_threadobj < 4096 && j->ik_constants < 4096 && j->oop_klass < 64 &&
		  j->narrow_oop_base_addr && j->narrow_oop_shift_addr && j->narrow_klass_base_addr &&
		  j->narrow_klass_shift_addr && (fields_array_layout(j) || fields_stream_layout(j));
	if (!ok)
		j->jt_threadobj = 0;
}

/* Looks up every offset; the name of the first missing, or NULL. */
static const char *offsets(struct jvm *j)
{
	/* Each field by its name in JDK 11-21, or where a later JDK moved or
	 * renamed it (TYPE2::FIELD2, if not NULL). */
	static const struct { const char *type, *field, *type2, *field2; size_t at; } f[] = {
#define F(t, n, m) { t, n, NULL, NULL, offsetof(struct jvm, m) }
#define F2(t, n, t2, n2, m) { t, n, t2, n2, offsetof(struct jvm, m) }
		F("ThreadsList", "_length", tl_length), F("ThreadsList", "_threads", tl_threads),
		F2("JavaThread", "_osthread", "Thread", "_osthread", jt_osthread),
		F("OSThread", "_thread_id", os_tid),
		F("JavaThread", "_anchor", jt_anchor), F("JavaThread", "_thread_state", jt_state),
		F("JavaFrameAnchor", "_last_Java_sp", an_sp),
		F("JavaFrameAnchor", "_last_Java_pc", an_pc),
		F("JavaFrameAnchor", "_last_Java_fp", an_fp),
		F("CodeBlob", "_name", cb_name), F("CodeBlob", "_size", cb_size),
		F("CodeBlob", "_header_size", cb_header), F("CodeBlob", "_frame_size", cb_frame_size),
		F2("CodeBlob", "_code_begin", "CodeBlob", "_code_offset", cb_code_begin),
		F2("CodeBlob", "_code_end", "CodeBlob", "_data_offset", cb_code_end),
		F2("CompiledMethod", "_method", "nmethod", "_method", cm_method),
		F("Method", "_constMethod", m_const), F("ConstMethod", "_constants", cm_constants),
		F("ConstMethod", "_name_index", cm_name_index),
		F("ConstMethod", "_code_size", cm_code_size),
		F2("ConstMethod", "_flags", "ConstMethod", "_flags._flags", cm_flags),
		F("ConstantPool", "_pool_holder", cp_holder), F("ConstantPool", "_length", cp_length),
		F("ConstantPool", "_source_file_name_index", cp_source),
		F("Klass", "_name", k_name), F("Symbol", "_length", sym_length),
		F("Symbol", "_body", sym_body),
#undef F
#undef F2
	};
	for (size_t i = 0; i < sizeof(f) / sizeof(f[0]); i++) {
		uint64_t off = jvm_structs__offset(j->js, f[i].type, f[i].field);
		if (off == UINT64_MAX && f[i].type2)
			off = jvm_structs__offset(j->js, f[i].type2, f[i].field2);
		if (off == UINT64_MAX || off > 4096)
			return f[i].field;
		memcpy((char *)j + f[i].at, &off, sizeof(off));
	}
	j->blob_offsets = jvm_structs__offset(j->js, "CodeBlob", "_code_begin") == UINT64_MAX;
	/* the JDK's release, where the tables say; else what its layout
	 * tells: JDK 21's fields (ConstMethod's flags word, the fields'
	 * stream) or later */
	uint64_t major_at = jvm_structs__static(j->js, "Abstract_VM_Version", "_vm_major_version");
	int32_t major = 0;
	if (!major_at || rd(j, major_at, &major, 4) < 0 || major < 1 || major > 1000) {
		bool jdk21 = j->blob_offsets ||
			     jvm_structs__offset(j->js, "ConstMethod", "_flags._flags") != UINT64_MAX ||
			     jvm_structs__offset(j->js, "InstanceKlass", "_fieldinfo_stream") != UINT64_MAX;
		major = jdk21 ? 21 : 0;
	}
	j->u5_excess = major >= 20;
	static const struct { const char *name, *name2; size_t at; } c[] = {
		{ "_thread_in_native", NULL, offsetof(struct jvm, st_native) },
		{ "_thread_in_vm", NULL, offsetof(struct jvm, st_vm) },
		{ "_thread_in_Java", NULL, offsetof(struct jvm, st_java) },
		{ "_thread_blocked", NULL, offsetof(struct jvm, st_blocked) },
		{ "ConstMethod::_has_linenumber_table", "ConstMethodFlags::_misc_has_linenumber_table",
		  offsetof(struct jvm, has_lines) },
	};
	for (size_t i = 0; i < sizeof(c) / sizeof(c[0]); i++) {
		int64_t v;
		if (jvm_structs__constant(j->js, c[i].name, &v) < 0 &&
		    (!c[i].name2 || jvm_structs__constant(j->js, c[i].name2, &v) < 0))
			return c[i].name;
		memcpy((char *)j + c[i].at, &v, sizeof(v));
	}
	/* the anchor is read in one piece of ANCHOR_READ bytes */
	if (j->an_sp > ANCHOR_READ - 8 || j->an_pc > ANCHOR_READ - 8 || j->an_fp > ANCHOR_READ - 8)
		return "JavaFrameAnchor field within its first 64 bytes";
	j->cm_size = jvm_structs__size(j->js, "ConstMethod");
	j->cp_size = jvm_structs__size(j->js, "ConstantPool");
	j->heapblock_size = jvm_structs__size(j->js, "HeapBlock");
	if (!j->cm_size || !j->cp_size || !j->heapblock_size)
		return "ConstMethod, ConstantPool or HeapBlock's size";
	j->thread_list = jvm_structs__static(j->js, "ThreadsSMRSupport", "_java_thread_list");
	j->call_stub_ret = 0;
	uint64_t a = jvm_structs__static(j->js, "StubRoutines", "_call_stub_return_address");
	if (!j->thread_list || !a)
		return "_java_thread_list or _call_stub_return_address";
	if (rd64(j, a, &j->call_stub_ret) < 0)
		return "_call_stub_return_address";
	/* JDK 11-22: the PcDescs from _scopes_pcs_offset to
	 * _dependencies_offset and the metadata at _metadata_offset, in the
	 * nmethod; the scopes at _scopes_data_begin.  JDK 23 on: PcDescs from
	 * _scopes_pcs_offset to _scopes_data_offset, then the scopes to the
	 * immutable data's end, in it; the metadata after the relocations in
	 * the mutable data. */
	static const struct { const char *type, *field; size_t at; } sc[] = {
		{ "nmethod", "_scopes_pcs_offset", offsetof(struct jvm, nm_pcs) },
		{ "nmethod", "_dependencies_offset", offsetof(struct jvm, nm_deps) },
		{ "nmethod", "_metadata_offset", offsetof(struct jvm, nm_metadata) },
		{ "CompiledMethod", "_scopes_data_begin", offsetof(struct jvm, cm_scopes_data) },
		{ "PcDesc", "_pc_offset", offsetof(struct jvm, pd_pc) },
		{ "PcDesc", "_scope_decode_offset", offsetof(struct jvm, pd_scope) },
	}, sc_own[] = {
		{ "nmethod", "_scopes_pcs_offset", offsetof(struct jvm, nm_pcs) },
		{ "nmethod", "_scopes_data_offset", offsetof(struct jvm, nm_scopes_data) },
		{ "nmethod", "_immutable_data", offsetof(struct jvm, nm_immutable) },
		{ "nmethod", "_immutable_data_size", offsetof(struct jvm, nm_immutable_size) },
		{ "CodeBlob", "_mutable_data", offsetof(struct jvm, cb_mutable) },
		{ "CodeBlob", "_relocation_size", offsetof(struct jvm, cb_reloc_size) },
		{ "PcDesc", "_pc_offset", offsetof(struct jvm, pd_pc) },
		{ "PcDesc", "_scope_decode_offset", offsetof(struct jvm, pd_scope) },
	};
	bool own = jvm_structs__offset(j->js, "nmethod", "_immutable_data") != UINT64_MAX;
	j->pd_size = jvm_structs__size(j->js, "PcDesc");
	for (size_t i = 0, n = own ? sizeof(sc_own) / sizeof(sc_own[0]) : sizeof(sc) / sizeof(sc[0]);
	     i < n; i++) {
		const char *type = own ? sc_own[i].type : sc[i].type;
		uint64_t off = jvm_structs__offset(j->js, type, own ? sc_own[i].field : sc[i].field);
		if (off == UINT64_MAX || off > 4096)
			j->pd_size = 0;         /* no inlined frames: each nmethod one frame */
		else
			memcpy((char *)j + (own ? sc_own[i].at : sc[i].at), &off, sizeof(off));
	}
	if (own != j->blob_offsets)
		j->pd_size = 0;                 /* a layout of neither kind */
	j->cm_deopt = offset_either(j->js, "CompiledMethod", "_deopt_handler_begin", "nmethod",
				    "_deopt_handler_offset");
	j->cm_deopt_mh = offset_either(j->js, "CompiledMethod", "_deopt_mh_handler_begin",
				       "nmethod", "_deopt_mh_handler_offset");
	j->nm_orig_pc = jvm_structs__offset(j->js, "nmethod", "_orig_pc_offset");
	if (j->cm_deopt > 4096 || j->cm_deopt_mh > 4096 || j->nm_orig_pc > 4096)
		j->cm_deopt = j->cm_deopt_mh = j->nm_orig_pc = 0;
	j->jcw_anchor = jvm_structs__offset(j->js, "JavaCallWrapper", "_anchor");
	if (jvm_structs__constant(j->js, "frame::entry_frame_call_wrapper_offset",
				  &j->entry_wrapper) < 0 || j->entry_wrapper < -64 ||
	    j->entry_wrapper > 64 || j->jcw_anchor > 4096)
		j->entry_wrapper = 0;
	names_layout(j);
	j->heaps_addr = jvm_structs__static(j->js, "CodeCache", "_heaps");
	if (!j->heaps_addr)
		return "CodeCache::_heaps";
	return NULL;
}

/* Where the interpreter's code and the code cache's heaps are: read at
 * open and again when a pc is in neither (the JVM sets them up as it
 * starts).  0, or -1. */
static int read_code(struct jvm *j)
{
	const struct jvm_structs *js = j->js;
	uint64_t code, buf = 0;
	uint32_t limit = 0;
	uint64_t q = jvm_structs__static(js, "AbstractInterpreter", "_code");
	uint64_t sb = jvm_structs__offset(js, "StubQueue", "_stub_buffer");
	uint64_t bl = jvm_structs__offset(js, "StubQueue", "_buffer_limit");
	if (q && sb != UINT64_MAX && bl != UINT64_MAX && rd64(j, q, &code) == 0 && code &&
	    rd64(j, code + sb, &buf) == 0 && rd32(j, code + bl, &limit) == 0 && buf) {
		j->interp_lo = buf;
		j->interp_hi = buf + limit;
	}
	uint64_t arr, data;
	uint32_t len;
	uint64_t glen = jvm_structs__offset(js, "GrowableArrayBase", "_len");
	uint64_t gdata = jvm_structs__offset(js, "GrowableArray<int>", "_data");
	uint64_t mem = jvm_structs__offset(js, "CodeHeap", "_memory");
	uint64_t seg = jvm_structs__offset(js, "CodeHeap", "_segmap");
	uint64_t lg = jvm_structs__offset(js, "CodeHeap", "_log2_segment_size");
	uint64_t low = jvm_structs__offset(js, "VirtualSpace", "_low");
	uint64_t high = jvm_structs__offset(js, "VirtualSpace", "_high");
	if (glen == UINT64_MAX || gdata == UINT64_MAX || mem == UINT64_MAX || seg == UINT64_MAX ||
	    lg == UINT64_MAX || low == UINT64_MAX || high == UINT64_MAX)
		return -1;
	if (rd64(j, j->heaps_addr, &arr) < 0 || !arr || rd32(j, arr + glen, &len) < 0 ||
	    rd64(j, arr + gdata, &data) < 0)
		return -1;
	if (len > JVM_MAX_HEAPS)
		len = JVM_MAX_HEAPS;
	j->nheaps = 0;
	for (uint32_t i = 0; i < len; i++) {
		uint64_t h, lo, hi, sm;
		uint32_t l2;
		if (rd64(j, data + 8 * i, &h) < 0 || rd64(j, h + mem + low, &lo) < 0 ||
		    rd64(j, h + mem + high, &hi) < 0 || rd64(j, h + seg + low, &sm) < 0 ||
		    rd32(j, h + lg, &l2) < 0 || hi <= lo || l2 < 4 || l2 > 16 || !sm)
			continue;
		j->heaps[j->nheaps].lo = lo;
		j->heaps[j->nheaps].hi = hi;
		j->heaps[j->nheaps].segmap = sm;
		j->heaps[j->nheaps].log2 = l2;
		j->nheaps++;
	}
	return 0;
}

struct jvm *jvm__open(const struct jvm_symbols *sym, jvm_read_fn read, void *ctx, char *why,
		      size_t whylen)
{
	struct jvm_structs *js = jvm_structs__read(sym, read, ctx, why, whylen);
	if (!js)
		return NULL;
	struct jvm *j = xcalloc(1, sizeof(*j));
	j->js = js;
	j->read = read;
	j->ctx = ctx;
	const char *missing = offsets(j);
	if (missing) {
		snprintf(why, whylen, "its gHotSpotVMStructs has no %s (not a JDK this reader knows)",
			 missing);
		jvm__free(j);
		return NULL;
	}
	read_code(j);
	return j;
}

struct jvm *jvm__new(pid_t pid, const struct modules *ms, char *why, size_t whylen)
{
	*why = 0;
	for (size_t i = 0; i < modules__count(ms); i++) {
		const struct module *m = modules__at(ms, i);
		if (!m->name || !strstr(m->name, "libjvm"))
			continue;
		struct jvm_symbols s;
		static const struct { const char *name; size_t at; } names[] = {
#define S(n, f) { n, offsetof(struct jvm_symbols, f) }
			S("gHotSpotVMStructs", structs), S("gHotSpotVMTypes", types),
			S("gHotSpotVMIntConstants", ints), S("gHotSpotVMLongConstants", longs),
			S("gHotSpotVMStructEntryTypeNameOffset", s_type),
			S("gHotSpotVMStructEntryFieldNameOffset", s_field),
			S("gHotSpotVMStructEntryTypeStringOffset", s_typestr),
			S("gHotSpotVMStructEntryIsStaticOffset", s_static),
			S("gHotSpotVMStructEntryOffsetOffset", s_offset),
			S("gHotSpotVMStructEntryAddressOffset", s_address),
			S("gHotSpotVMStructEntryArrayStride", s_stride),
			S("gHotSpotVMTypeEntryTypeNameOffset", t_name),
			S("gHotSpotVMTypeEntrySizeOffset", t_size),
			S("gHotSpotVMTypeEntryArrayStride", t_stride),
			S("gHotSpotVMIntConstantEntryNameOffset", i_name),
			S("gHotSpotVMIntConstantEntryValueOffset", i_value),
			S("gHotSpotVMIntConstantEntryArrayStride", i_stride),
			S("gHotSpotVMLongConstantEntryNameOffset", l_name),
			S("gHotSpotVMLongConstantEntryValueOffset", l_value),
			S("gHotSpotVMLongConstantEntryArrayStride", l_stride),
#undef S
		};
		for (size_t k = 0; k < sizeof(names) / sizeof(names[0]); k++) {
			uint64_t a;
			if (module__symbol(m, names[k].name, &a, NULL) < 0) {
				snprintf(why, whylen, "its %s exports no %s: no Java frames", m->name,
					 names[k].name);
				return NULL;
			}
			memcpy((char *)&s + names[k].at, &a, sizeof(a));
		}
		char w[200];
		struct jvm *j = jvm__open(&s, remote_read, (void *)(intptr_t)pid, w, sizeof(w));
		if (!j)
			snprintf(why, whylen, "%s: no Java frames", w);
		return j;
	}
	return NULL;
}

void jvm__free(struct jvm *j)
{
	if (!j)
		return;
	jvm_structs__free(j->js);
	free(j);
}

/* ---- threads -------------------------------------------------------------------- */

/* JavaThread T into *O: 0, or -1. */
static int one_thread(const struct jvm *j, uint64_t t, struct jvm_thread *o)
{
	uint64_t os = 0;
	int32_t tid = 0, st = 0;
	unsigned char an[ANCHOR_READ];
	if (!t || rd64(j, t + j->jt_osthread, &os) < 0 || !os || rd(j, os + j->os_tid, &tid, 4) < 0 ||
	    rd(j, t + j->jt_state, &st, 4) < 0 || rd(j, t + j->jt_anchor, an, sizeof(an)) < 0 ||
	    tid <= 0)
		return -1;
	o->thread = t;
	o->tid = tid;
	o->state = st == j->st_java ? JVM_IN_JAVA : st == j->st_native ? JVM_IN_NATIVE :
		   st == j->st_vm ? JVM_IN_VM : st == j->st_blocked ? JVM_BLOCKED : JVM_STATE_OTHER;
	memcpy(&o->sp, an + j->an_sp, 8);
	memcpy(&o->pc, an + j->an_pc, 8);
	memcpy(&o->fp, an + j->an_fp, 8);
	return 0;
}

int jvm__thread(struct jvm *j, uint64_t thread, struct jvm_thread *out)
{
	return one_thread(j, thread, out);
}

int jvm__threads(struct jvm *j, struct jvm_thread *out, size_t max)
{
	uint64_t list, arr;
	uint32_t len;
	if (rd64(j, j->thread_list, &list) < 0 || !list || rd32(j, list + j->tl_length, &len) < 0 ||
	    rd64(j, list + j->tl_threads, &arr) < 0 || (len && !arr))
		return -1;
	if (len > JVM_MAX_THREADS)
		len = JVM_MAX_THREADS;
	size_t n = 0;
	uint64_t ptrs[64];
	for (uint32_t i = 0; i < len && n < max; i += 64) {
		uint32_t k = len - i < 64 ? len - i : 64;
		if (rd(j, arr + 8ull * i, ptrs, 8ull * k) < 0)
			return -1;
		for (uint32_t x = 0; x < k && n < max; x++)
			if (one_thread(j, ptrs[x], &out[n]) == 0)
				n++;
	}
	return (int)n;
}

/* ---- frames --------------------------------------------------------------------- */

static bool in_interp(const struct jvm *j, uint64_t pc)
{
	return pc >= j->interp_lo && pc < j->interp_hi;
}

/* The code blob holding PC, or 0: the heap's segment map walked back to the
 * blob's first segment (each entry says how many segments back to go, at
 * most 0xff a step; 0xff entries lead to the start), bounded. */
static uint64_t blob_of(const struct jvm *j, uint64_t pc)
{
	for (size_t h = 0; h < j->nheaps; h++) {
		if (pc < j->heaps[h].lo || pc >= j->heaps[h].hi)
			continue;
		uint64_t seg = (pc - j->heaps[h].lo) >> j->heaps[h].log2;
		for (int step = 0; step < 4096; step++) {
			uint8_t v;
			if (rd(j, j->heaps[h].segmap + seg, &v, 1) < 0 || v == 0xff)
				return 0;       /* 0xff: a free segment */
			if (v == 0)
				break;
			if (v > seg)
				return 0;
			seg -= v;
		}
		uint64_t block = j->heaps[h].lo + (seg << j->heaps[h].log2);
		uint32_t used = 0;
		uint64_t used_off = jvm_structs__offset(j->js, "HeapBlock::Header", "_used");
		if (used_off != UINT64_MAX && (rd32(j, block + used_off, &used) < 0 || !(used & 0xff)))
			return 0;       /* a free block */
		return block + j->heapblock_size;
	}
	return 0;
}

bool jvm__is_java(struct jvm *j, uint64_t pc)
{
	if (in_interp(j, pc))
		return true;
	for (size_t h = 0; h < j->nheaps; h++)
		if (pc >= j->heaps[h].lo && pc < j->heaps[h].hi)
			return true;
	return false;
}

/* Whether BLOB is an nmethod: compiled Java code, or the wrapper of a
 * native method ("native nmethod"). */
static bool is_nmethod(const struct jvm *j, uint64_t blob)
{
	uint64_t np;
	char name[16];
	return rd64(j, blob + j->cb_name, &np) == 0 && rd(j, np, name, 8) == 0 &&
	       (!memcmp(name, "nmethod", 8) ||
		(!memcmp(name, "native n", 8) && rd(j, np + 8, name + 8, 7) == 0 &&
		 !memcmp(name + 8, "method", 7)));
}

/* A number of HotSpot's UNSIGNED5 coding (the debug information's and
 * line tables' streams, a class's fields), at *AT of B's N bytes: a byte
 * under 192 ends it, each byte before it adds 6 bits more, five at most.
 * Up to JDK 19 a byte is its digit (EXCESS 0); from JDK 20
 * (utilities/unsigned5.hpp) one more than it (EXCESS 1), so that no byte
 * is 0, the streams' end. */
static bool read_u5(const unsigned char *b, size_t n, size_t *at, uint32_t *v, uint32_t excess)
{
	uint32_t sum = 0;
	for (int i = 0, shift = 0; i < 5; i++, shift += 6) {
		if (*at >= n)
			return false;
		uint32_t c = b[(*at)++];
		if (c < excess)
			return false;
		sum += (c - excess) << shift;
		if (c < 192)
			break;
	}
	*v = sum;
	return true;
}

/* The address in BLOB kept at field offset OFF: a pointer (JDK 11-22) or,
 * with blob_offsets, an int offset from the blob (JDK 23 on).  0, or -1. */
static int blob_addr(const struct jvm *j, uint64_t blob, uint64_t off, uint64_t *out)
{
	if (!j->blob_offsets)
		return rd64(j, blob + off, out);
	int32_t rel;
	if (rd(j, blob + off, &rel, 4) < 0 || rel < 0)
		return -1;
	*out = blob + (uint64_t)rel;
	return 0;
}

/* Where nmethod NM's debug information is: its PcDescs (*PCS, *COUNT of
 * them), its scopes (*DATA) and its metadata (*META, Method*s by index).
 * 0, or -1. */
static int debug_info(const struct jvm *j, uint64_t nm, uint64_t *pcs, uint64_t *count,
		      uint64_t *data, uint64_t *meta)
{
	int32_t pcs_off, end_off;
	if (!j->pd_size || j->pd_size > 64 || rd(j, nm + j->nm_pcs, &pcs_off, 4) < 0 || pcs_off <= 0)
		return -1;
	if (j->blob_offsets) {
		uint64_t imm, mut;
		int32_t size, reloc;
		if (rd(j, nm + j->nm_scopes_data, &end_off, 4) < 0 ||
		    rd64(j, nm + j->nm_immutable, &imm) < 0 || !imm ||
		    rd(j, nm + j->nm_immutable_size, &size, 4) < 0 || end_off < pcs_off ||
		    size < end_off || rd64(j, nm + j->cb_mutable, &mut) < 0 || !mut ||
		    rd(j, nm + j->cb_reloc_size, &reloc, 4) < 0 || reloc < 0)
			return -1;
		*pcs = imm + (uint64_t)pcs_off;
		*data = imm + (uint64_t)end_off;
		*meta = mut + (uint64_t)reloc;
	} else {
		int32_t meta_off;
		if (rd(j, nm + j->nm_deps, &end_off, 4) < 0 ||
		    rd(j, nm + j->nm_metadata, &meta_off, 4) < 0 ||
		    rd64(j, nm + j->cm_scopes_data, data) < 0 || end_off < pcs_off || meta_off <= 0 ||
		    !*data)
			return -1;
		*pcs = nm + (uint64_t)pcs_off;
		*meta = nm + (uint64_t)meta_off;
	}
	*count = (uint64_t)(end_off - pcs_off) / j->pd_size;
	return 0;
}

#define MAX_PCDESCS (1u << 20)
#define MAX_SCOPES 64                   /* inlining deeper than this is not real */

/* The frames of nmethod NM at PC, innermost (the most inlined) first, into
 * OUT (at most MAX): the scope of the PcDesc at PC (the first at or after
 * it: a return address has its own), then each scope's sender.  Returns
 * how many; 0 when the scopes cannot be read (the caller then gives the
 * nmethod's own method). */
static size_t scopes(const struct jvm *j, uint64_t nm, uint64_t pc, struct jvm_frame *out,
		     size_t max)
{
	uint64_t code, base, count, data, meta;
	if (debug_info(j, nm, &base, &count, &data, &meta) < 0 ||
	    blob_addr(j, nm, j->cb_code_begin, &code) < 0 || pc < code)
		return 0;
	if (!count || count > MAX_PCDESCS)
		return 0;
	int64_t rel = (int64_t)(pc - code);
	uint64_t lo = 0, hi = count;
	/* the first PcDesc whose pc offset is at or after REL */
	while (lo < hi) {
		uint64_t mid = lo + (hi - lo) / 2;
		int32_t off;
		if (rd(j, base + mid * j->pd_size + j->pd_pc, &off, 4) < 0)
			return 0;
		if (off < rel)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo == count)
		return 0;
	int32_t decode;
	if (rd(j, base + lo * j->pd_size + j->pd_scope, &decode, 4) < 0 || decode <= 0)
		return 0;
	size_t n = 0;
	for (int depth = 0; decode > 0 && depth < MAX_SCOPES && n < max; depth++) {
		unsigned char b[16];
		size_t got = sizeof(b), at = 0;
		while (got && rd(j, data + (uint64_t)decode, b, got) < 0)
			got /= 2;
		uint32_t sender, midx, bci;
		if (!read_u5(b, got, &at, &sender, j->u5_excess) ||
		    !read_u5(b, got, &at, &midx, j->u5_excess) ||
		    !read_u5(b, got, &at, &bci, j->u5_excess) || !midx || midx > (1u << 20))
			return n;
		uint64_t method;
		if (rd64(j, meta + 8ull * (midx - 1), &method) < 0 || !method)
			return n;
		out[n++] = (struct jvm_frame){ .method = method, .pc = pc, .blob = nm,
					       .bci = (int32_t)bci - 1, .kind = JVM_COMPILED };
		if ((int32_t)sender >= decode && sender)
			break;          /* senders are written before their callees */
		decode = (int32_t)sender;
	}
	return n;
}

enum jvm_walk_end jvm__walk(struct jvm *j, uint64_t sp, uint64_t pc, uint64_t fp,
			    struct jvm_frame *out, size_t max, size_t *n, uint64_t *next_sp,
			    uint64_t *next_pc, uint64_t *next_fp, uint64_t *entry_fp)
{
	*n = 0;
	*next_sp = *next_pc = *next_fp = 0;
	if (entry_fp)
		*entry_fp = 0;
	if (max > JVM_MAX_FRAMES)
		max = JVM_MAX_FRAMES;
	if (!sp || (sp & 7))
		return JVM_END_UNREADABLE;
	if (!pc && rd64(j, sp - 8, &pc) < 0)
		return JVM_END_UNREADABLE;
	bool reread = false;
	uint64_t usp = sp;              /* the frame's unextended sp */
	while (*n < max) {
		if (pc == j->call_stub_ret) {
			/* the call stub's frame: a plain fp frame; its caller is
			 * the native code that called Java */
			uint64_t w[2];
			if (!fp || rd(j, fp, w, sizeof(w)) < 0)
				return JVM_END_UNREADABLE;
			*next_sp = fp + 8 * FR_SENDER_SP;
			*next_pc = w[FR_RETURN];
			*next_fp = w[FR_LINK];
			if (entry_fp)
				*entry_fp = fp;
			return JVM_END_ENTRY;
		}
		struct jvm_frame *f = &out[*n];
		uint64_t nsp, npc, nfp, nusp;
		if (in_interp(j, pc)) {
			uint64_t w[11];         /* fp - 8 .. fp + 2 */
			if (!fp || (fp & 7) || fp < sp || rd(j, fp - 64, w, sizeof(w)) < 0)
				return JVM_END_UNREADABLE;
			uint64_t method = w[8 + FR_INTERP_METHOD], bcp = w[8 + FR_INTERP_BCP];
			uint64_t cm = 0;
			int32_t bci = -1;
			if (rd64(j, method + j->m_const, &cm) == 0 && cm && bcp >= cm + j->cm_size) {
				uint16_t size = 0;
				rd16(j, cm + j->cm_code_size, &size);
				if (bcp - (cm + j->cm_size) <= size)
					bci = (int32_t)(bcp - (cm + j->cm_size));
			}
			*f = (struct jvm_frame){ .method = method, .pc = pc, .bci = bci,
						 .kind = JVM_INTERPRETED };
			nsp = fp + 8 * FR_SENDER_SP;
			/* the caller's sp before the callee's arguments were
			 * pushed (an adapter's): what a compiled caller's frame
			 * size counts from */
			nusp = w[8 + FR_INTERP_SENDER_SP];
			if (nusp < sp || nusp > nsp + 8 * 4096)
				nusp = nsp;
			npc = w[8 + FR_RETURN];
			nfp = w[8 + FR_LINK];
		} else {
			uint64_t blob = blob_of(j, pc);
			int32_t words = 0;
			if (!blob) {
				if (!reread && read_code(j) == 0 && (reread = true) &&
				    (in_interp(j, pc) || blob_of(j, pc)))
					continue;
				return *n ? JVM_END_UNKNOWN : JVM_END_UNKNOWN;
			}
			if (rd(j, blob + j->cb_frame_size, &words, 4) < 0 || words <= 0 ||
			    (uint32_t)words > MAX_FRAME_WORDS)
				return JVM_END_UNREADABLE;
			uint64_t method = 0;
			bool nm = is_nmethod(j, blob);
			if (nm && rd64(j, blob + j->cm_method, &method) < 0)
				return JVM_END_UNREADABLE;
			uint64_t at = pc;
			if (nm && j->nm_orig_pc) {
				/* deoptimized: the pc it had is saved in the frame */
				uint64_t dh = 0, dmh = 0, orig = 0;
				int32_t off = 0;
				blob_addr(j, blob, j->cm_deopt, &dh);
				blob_addr(j, blob, j->cm_deopt_mh, &dmh);
				if ((pc == dh || pc == dmh) && rd(j, blob + j->nm_orig_pc, &off, 4) == 0 &&
				    off > 0 && off < 8 * (int32_t)MAX_FRAME_WORDS &&
				    rd64(j, usp + (uint64_t)off, &orig) == 0 && orig)
					at = orig;
			}
			size_t k = nm ? scopes(j, blob, at, f, max - *n) : 0;
			if (k)
				*n += k - 1;    /* the last, f[k - 1], is counted below */
			else
				*f = (struct jvm_frame){ .method = method, .pc = pc, .blob = blob,
							 .bci = -1, .kind = nm ? JVM_COMPILED : JVM_STUB };
			nsp = usp + 8ull * (uint32_t)words;
			nusp = nsp;
			uint64_t w[2];
			if (rd(j, nsp - 16, w, sizeof(w)) < 0)
				return JVM_END_UNREADABLE;
			npc = w[1];
			nfp = w[0];
		}
		(*n)++;
		if (nsp <= sp)
			return JVM_END_UNREADABLE;      /* the stack grows down: callers above */
		sp = nsp;
		usp = nusp;
		pc = npc;
		fp = nfp;
	}
	return JVM_END_DEEP;
}

int jvm__caller_anchor(struct jvm *j, uint64_t entry_fp, uint64_t *sp, uint64_t *pc,
			uint64_t *fp)
{
	uint64_t wrapper;
	unsigned char an[ANCHOR_READ];
	*sp = *pc = *fp = 0;
	if (!j->entry_wrapper || !entry_fp ||
	    rd64(j, entry_fp + (uint64_t)(8 * j->entry_wrapper), &wrapper) < 0 || !wrapper ||
	    rd(j, wrapper + j->jcw_anchor, an, sizeof(an)) < 0)
		return -1;
	memcpy(sp, an + j->an_sp, 8);
	memcpy(pc, an + j->an_pc, 8);
	memcpy(fp, an + j->an_fp, 8);
	return *sp ? 0 : -1;
}

/* ---- a thread's name ----------------------------------------------------------- */

static int symbol(const struct jvm *j, uint64_t sym, char *out, size_t len, bool dots);
static uint64_t cp_symbol(const struct jvm *j, uint64_t cp, uint16_t index);

/* The klass of object OOP (its header's compressed class pointer), or 0. */
static uint64_t klass_of(const struct jvm *j, uint64_t oop)
{
	uint32_t nk;
	uint64_t base;
	uint32_t shift;
	if (!oop || (oop & 7) || rd32(j, oop + j->oop_klass, &nk) < 0 || !nk ||
	    rd64(j, j->narrow_klass_base_addr, &base) < 0 ||
	    rd32(j, j->narrow_klass_shift_addr, &shift) < 0 || shift > 8)
		return 0;
	return base + ((uint64_t)nk << shift);
}

/* The object a reference field at ADDR holds (a compressed oop), or 0. */
static uint64_t oop_at(const struct jvm *j, uint64_t addr)
{
	uint32_t n;
	uint64_t base;
	uint32_t shift;
	if (rd32(j, addr, &n) < 0 || !n || rd64(j, j->narrow_oop_base_addr, &base) < 0 ||
	    rd32(j, j->narrow_oop_shift_addr, &shift) < 0 || shift > 8)
		return 0;
	return base + ((uint64_t)n << shift);
}

/* Whether KLASS is named NAME ("java/lang/String"). */
static bool klass_is(const struct jvm *j, uint64_t klass, const char *name)
{
	uint64_t sym;
	char got[64];
	return klass && rd64(j, klass + j->k_name, &sym) == 0 && symbol(j, sym, got, sizeof(got), false) == 0 &&
	       !strcmp(got, name);
}

#define MAX_FIELD_STREAM 8192           /* a class's fields, read this far at most */

/* field_offset() from JDK 21's stream: the counts of Java and injected
 * fields, then per field its name's and signature's constant pool
 * indices, offset, access flags, field flags and one number for each
 * optional flag it has. */
static uint64_t stream_field_offset(const struct jvm *j, uint64_t klass, const char *name)
{
	uint64_t arr, cp;
	int32_t len;
	if (rd64(j, klass + j->ik_stream, &arr) < 0 || !arr ||
	    rd64(j, klass + j->ik_constants, &cp) < 0 || !cp || rd(j, arr, &len, 4) < 0 || len <= 0)
		return UINT64_MAX;
	unsigned char b[MAX_FIELD_STREAM];
	size_t n = (size_t)len < sizeof(b) ? (size_t)len : sizeof(b), at = 0;
	if (rd(j, arr + j->arr_data, b, n) < 0)
		return UINT64_MAX;
	uint32_t java, injected;
	if (!read_u5(b, n, &at, &java, 1) || !read_u5(b, n, &at, &injected, 1) ||
	    java > 4096)
		return UINT64_MAX;
	for (uint32_t i = 0; i < java; i++) {
		uint32_t v[5], extra = 0;
		for (int k = 0; k < 5; k++)
			if (!read_u5(b, n, &at, &v[k], 1))
				return UINT64_MAX;
		for (uint32_t bits = v[4] & j->ff_optional; bits; bits &= bits - 1)
			extra++;
		for (uint32_t k = 0; k < extra; k++) {
			uint32_t skip;
			if (!read_u5(b, n, &at, &skip, 1))
				return UINT64_MAX;
		}
		char got[64];
		if (v[0] > 0xffff || (v[3] & 0x0008 /* static */) ||
		    symbol(j, cp_symbol(j, cp, (uint16_t)v[0]), got, sizeof(got), false) < 0 ||
		    strcmp(got, name))
			continue;
		return v[2] < 4096 ? v[2] : UINT64_MAX;
	}
	return UINT64_MAX;
}

/* The offset in its objects of KLASS's instance field NAME, or UINT64_MAX. */
static uint64_t field_offset(const struct jvm *j, uint64_t klass, const char *name)
{
	uint64_t fields, cp;
	uint16_t count;
	if (j->ik_stream != UINT64_MAX)
		return stream_field_offset(j, klass, name);
	if (rd64(j, klass + j->ik_fields, &fields) < 0 || !fields ||
	    rd16(j, klass + j->ik_nfields, &count) < 0 || rd64(j, klass + j->ik_constants, &cp) < 0 ||
	    !cp || count > 4096)
		return UINT64_MAX;
	uint16_t fi[16];
	for (uint16_t i = 0; i < count; i++) {
		if (rd(j, fields + j->arr_data + 2ull * (uint64_t)j->fi_slots * i, fi,
		       2 * (size_t)j->fi_slots) < 0)
			return UINT64_MAX;
		char got[64];
		if (symbol(j, cp_symbol(j, cp, fi[j->fi_name]), got, sizeof(got), false) < 0 ||
		    strcmp(got, name) || (fi[j->fi_flags] & 0x0008 /* static */))
			continue;
		uint64_t off = ((uint64_t)fi[j->fi_high] << 16 | fi[j->fi_low]) >> j->fi_tag;
		return off < 4096 ? off : UINT64_MAX;
	}
	return UINT64_MAX;
}

int jvm__thread_name(struct jvm *j, uint64_t thread, char *out, size_t len)
{
	uint64_t handle, obj, name, value;
	out[0] = 0;
	if (!j->jt_threadobj || len < 2 || rd64(j, thread + j->jt_threadobj, &handle) < 0 ||
	    !handle || rd64(j, handle, &obj) < 0 || !obj)
		return -1;
	uint64_t tk = klass_of(j, obj);
	if (!tk)
		return -1;
	if (tk != j->thread_klass) {    /* a subclass of Thread has its own klass */
		j->thread_klass = tk;
		j->thread_name_off = field_offset(j, tk, "name");
		for (uint64_t super = tk, k = 0; j->thread_name_off == UINT64_MAX && k < 8; k++) {
			uint64_t so = jvm_structs__offset(j->js, "Klass", "_super");
			if (so == UINT64_MAX || rd64(j, super + so, &super) < 0 || !super)
				break;
			j->thread_name_off = field_offset(j, super, "name");
		}
	}
	if (j->thread_name_off == UINT64_MAX || !(name = oop_at(j, obj + j->thread_name_off)))
		return -1;
	uint64_t sk = klass_of(j, name);
	if (sk != j->string_klass) {
		if (!klass_is(j, sk, "java/lang/String"))
			return -1;
		j->string_klass = sk;
		j->string_value_off = field_offset(j, sk, "value");
		j->string_coder_off = field_offset(j, sk, "coder");
	}
	uint8_t coder = 0;
	uint32_t n;
	if (j->string_value_off == UINT64_MAX || !(value = oop_at(j, name + j->string_value_off)) ||
	    (j->string_coder_off != UINT64_MAX && rd(j, name + j->string_coder_off, &coder, 1) < 0) ||
	    rd32(j, value + 12, &n) < 0)        /* a byte[]: its length after a compressed klass */
		return -1;
	size_t bytes = n < 1024 ? n : 1024;
	unsigned char buf[1024];
	if (bytes && rd(j, value + 16, buf, bytes) < 0)
		return -1;
	size_t k = 0;
	for (size_t i = 0; i < bytes && k < len - 1; i += coder ? 2 : 1) {
		unsigned c = coder && i + 1 < bytes ? (unsigned)(buf[i] | buf[i + 1] << 8) : buf[i];
		out[k++] = c >= 0x20 && c < 0x7f ? (char)c : '?';
	}
	out[k] = 0;
	return 0;
}

/* ---- names ---------------------------------------------------------------------- */

/* Symbol SYM's bytes into OUT (cut at LEN - 1, '/' made '.' when DOTS).
 * 0, or -1. */
static int symbol(const struct jvm *j, uint64_t sym, char *out, size_t len, bool dots)
{
	uint16_t n;
	out[0] = 0;
	if (!sym || len < 2 || rd16(j, sym + j->sym_length, &n) < 0)
		return -1;
	size_t k = n < len - 1 ? n : len - 1;
	if (k > MAX_SYMBOL)
		k = MAX_SYMBOL;
	if (k && rd(j, sym + j->sym_body, out, k) < 0)
		return -1;
	out[k] = 0;
	for (size_t i = 0; i < k; i++)
		if ((unsigned char)out[i] < 0x20 || out[i] == 0x7f)
			out[i] = '?';
		else if (dots && out[i] == '/')
			out[i] = '.';
	return 0;
}

/* The Symbol* at constant pool CP's entry INDEX, or 0. */
static uint64_t cp_symbol(const struct jvm *j, uint64_t cp, uint16_t index)
{
	int32_t len;
	uint64_t sym;
	if (rd(j, cp + j->cp_length, &len, 4) < 0 || index == 0 || index >= len ||
	    rd64(j, cp + j->cp_size + 8ull * index, &sym) < 0)
		return 0;
	return sym & ~1ull;
}

int jvm__method_name(struct jvm *j, uint64_t method, char *out, size_t len, char *file,
		     size_t filelen)
{
	uint64_t cm, cp, holder, kname;
	uint16_t ni, si;
	char cls[512], name[256];
	out[0] = 0;
	if (file && filelen)
		file[0] = 0;
	if (!method || rd64(j, method + j->m_const, &cm) < 0 || !cm ||
	    rd64(j, cm + j->cm_constants, &cp) < 0 || !cp || rd16(j, cm + j->cm_name_index, &ni) < 0 ||
	    rd64(j, cp + j->cp_holder, &holder) < 0 || !holder ||
	    rd64(j, holder + j->k_name, &kname) < 0 || symbol(j, kname, cls, sizeof(cls), true) < 0 ||
	    symbol(j, cp_symbol(j, cp, ni), name, sizeof(name), false) < 0)
		return -1;
	/* a hidden class (a lambda's): "Main$$Lambda$2+0x..." is written
	 * "Main$$Lambda$2/0x..." by the JVM itself */
	char *plus = strstr(cls, "+0x");
	if (plus)
		*plus = '/';
	snprintf(out, len, "%s.%s", cls, name);
	if (file && filelen && rd16(j, cp + j->cp_source, &si) == 0 && si)
		symbol(j, cp_symbol(j, cp, si), file, filelen, false);
	return 0;
}

/* A signed number of the compressed streams: read_u5()'s, zigzag coded
 * (the low bit the sign). */
static bool read_signed(const unsigned char *b, size_t n, size_t *at, int32_t *v,
			uint32_t excess)
{
	uint32_t u;
	if (!read_u5(b, n, at, &u, excess))
		return false;
	*v = (int32_t)(u >> 1) ^ -(int32_t)(u & 1);
	return true;
}

int jvm__line(struct jvm *j, uint64_t method, int bci)
{
	uint64_t cm;
	uint32_t flags = 0;
	uint16_t size;
	if (bci < 0 || !method || rd64(j, method + j->m_const, &cm) < 0 || !cm ||
	    rd32(j, cm + j->cm_flags, &flags) < 0 || !(flags & (uint32_t)j->has_lines) ||
	    rd16(j, cm + j->cm_code_size, &size) < 0)
		return 0;
	/* the compressed line number table follows the bytecodes */
	unsigned char t[2048];
	uint64_t at = cm + j->cm_size + size;
	size_t n = sizeof(t);
	while (n && rd(j, at, t, n) < 0)
		n /= 2;                 /* near the end of a mapping */
	if (!n)
		return 0;
	size_t i = 0;
	int64_t b = 0, l = 0, best_bci = -1, best = 0;
	while (i < n) {
		unsigned char c = t[i++];
		if (c == 0)
			break;
		if (c == 0xff) {
			int32_t db, dl;
			if (!read_signed(t, n, &i, &db, j->u5_excess) || !read_signed(t, n, &i, &dl, j->u5_excess))
				break;
			b += db;
			l += dl;
		} else {
			b += c >> 3;
			l += c & 7;
		}
		if (b < 0 || b > 65535 || l < 0 || l > INT32_MAX)
			break;          /* not a line table: bcis fit in 16 bits */
		if (b == bci)
			return (int)l;
		if (b < bci && b >= best_bci) {
			best_bci = b;
			best = l;
		}
	}
	return (int)best;
}

int jvm__blob_name(struct jvm *j, uint64_t blob, char *out, size_t len)
{
	uint64_t np;
	out[0] = 0;
	if (!blob || len < 2 || rd64(j, blob + j->cb_name, &np) < 0 || !np)
		return -1;
	size_t k = len - 1 < 64 ? len - 1 : 64;
	if (rd(j, np, out, k) < 0)
		return -1;
	out[k] = 0;
	for (size_t i = 0; i < k && out[i]; i++)
		if ((unsigned char)out[i] < 0x20 || out[i] == 0x7f)
			out[i] = '?';
	return 0;
}
