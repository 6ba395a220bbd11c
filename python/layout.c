/* CPython's layouts, per minor version (see layout.h): every number below
 * is offsetof() or sizeof() over that version's headers on x86-64, as
 * tests/targets/pyoffsets/pyoffsets.c prints them (tests/t_python.sh
 * compares each entry, printed by tests/bin/pylayout, with the headers of
 * every version installed). */
#include "python/layout.h"

#include <string.h>

#define OLD_STRINGS .str_length = 16, .str_state = 32, .str_ascii_size = 48, .str_compact_size = 72
#define NEW_STRINGS .str_length = 16, .str_state = 32, .str_ascii_size = 40, .str_compact_size = 56
#define BYTES .bytes_size = 16, .bytes_sval = 32
/* Types and dicts: the same from 3.8 to 3.13 but for these */
#define TYPES(modules, cached) .is_modules = modules, .tp_flags = 168, .tp_basicsize = 32, \
	.tp_dictoffset = 288, .ht_cached_keys = cached, .dict_keys = 32, .dict_values = 40
#define OLD_DICTS .attrs = PY_ATTRS_DICTOFFSET, .dk_nentries = 32, .dk_indices = 40
#define NEW_DICTS .dk_nentries = 24, .dk_indices = 32

/* 3.8-3.10: PyFrameObject; tstate->frame; the GIL in _PyRuntime.ceval. */
#define FRAME_OBJECTS(gil, lasti)                                                          \
	.frames = PY_FRAME_OBJECTS, .rt_interp_head = 32, .is_next = 0, .is_threads_head = 8, \
	.rt_gil = gil, .gil_locked = 16, .gil_holder = 8, .ts_next = 8, .ts_interp = 16,      \
	.ts_frame = 24, .ts_thread_id = 176, .ts_size = 184, .f_previous = 24, .f_code = 32,  \
	.f_instr = lasti, .f_size = lasti + 8, .co_filename = 104, .co_name = 112,            \
	.co_firstlineno = 40, .co_linetable = 120, .co_code = 48, .co_size = 128,             \
	BYTES, OLD_STRINGS

static const struct py_layout tables[] = {
	{ .minor = 8, .lines = PY_LNOTAB, FRAME_OBJECTS(1152, 104), TYPES(56, 872), OLD_DICTS },
	{ .minor = 9, .lines = PY_LNOTAB, FRAME_OBJECTS(352, 104), TYPES(856, 864), OLD_DICTS },
	{ .minor = 10, .lines = PY_LINETABLE_310, FRAME_OBJECTS(352, 96), TYPES(856, 872), OLD_DICTS },
	{ .minor = 11, .lines = PY_LOCATIONS, .frames = PY_FRAMES_IS_ENTRY,
	  .rt_interp_head = 40, .is_next = 0, .is_threads_head = 16,
	  .rt_gil = 360, .gil_locked = 16, .gil_holder = 8,
	  .ts_next = 8, .ts_interp = 16, .ts_frame = 56, .cf_current = 8, .ts_via_cframe = 1,
	  .ts_thread_id = 152, .ts_native_id = 160, .ts_size = 168, .ts_datastack = 296,
	  .f_previous = 48, .f_code = 32, .f_instr = 56, .f_owner = 69, .f_is_entry = 68, .f_size = 72,
	  .co_filename = 112, .co_name = 120, .co_qualname = 128, .co_firstlineno = 72,
	  .co_linetable = 136, .co_code_adaptive = 184, .co_size = 144,
	  BYTES, OLD_STRINGS, TYPES(888, 872), .attrs = PY_ATTRS_VALUES_311, NEW_DICTS },
	{ .minor = 12, .lines = PY_LOCATIONS, .frames = PY_FRAMES_CSTACK,
	  .rt_interp_head = 40, .is_next = 0, .is_threads_head = 72,
	  .is_gil_ptr = 384, .gil_locked = 16, .gil_holder = 8,
	  .ts_next = 8, .ts_interp = 16, .ts_frame = 56, .cf_current = 0, .ts_via_cframe = 1,
	  .ts_thread_id = 136, .ts_native_id = 144, .ts_size = 152, .ts_datastack = 232,
	  .f_previous = 8, .f_code = 0, .f_instr = 56, .f_owner = 70, .f_size = 72,
	  .co_filename = 112, .co_name = 120, .co_qualname = 128, .co_firstlineno = 68,
	  .co_linetable = 136, .co_code_adaptive = 192, .co_size = 144,
	  BYTES, NEW_STRINGS, TYPES(944, 880), .attrs = PY_ATTRS_TAGGED_312, NEW_DICTS },
};

bool py_layout__fits(const struct py_layout *l)
{
	return l->ts_size <= PY_TS_MAX && l->f_size <= PY_FRAME_MAX && l->co_size <= PY_CODE_MAX &&
	       l->str_compact_size <= PY_STR_HEAD_MAX && l->str_state + 4 <= l->str_ascii_size &&
	       l->str_length + 8 <= l->str_ascii_size && l->f_owner < l->f_size &&
	       l->f_is_entry < l->f_size && l->co_code_adaptive < (1u << 16) &&
	       l->tp_flags + 8 <= PY_TYPE_MAX && l->tp_basicsize + 8 <= PY_TYPE_MAX &&
	       l->tp_dictoffset + 8 <= PY_TYPE_MAX && l->ht_cached_keys + 8 <= PY_TYPE_MAX &&
	       l->dict_keys + 8 <= 64 && l->dict_values + 8 <= 64 && l->dk_nentries + 8 <= 64 &&
	       l->dk_indices <= 64 && l->dv_values <= 64 && l->is_modules < (1u << 16) &&
	       (!l->ts_datastack || (l->ts_datastack > l->ts_frame &&
				     l->ts_datastack + 16 - l->ts_frame <= PY_TS_MAX));
}

const struct py_layout *py_layout__of(int minor)
{
	for (size_t i = 0; i < sizeof(tables) / sizeof(tables[0]); i++)
		if (tables[i].minor == minor)
			return &tables[i];
	return NULL;
}

/* ---- 3.13+: _Py_DebugOffsets ----
 * Offsets into the block (3.13's Include/internal/pycore_runtime.h): every
 * field a u64.  A later version may reorder the block itself; its version
 * says so, and only 3.13's is read. */
enum {
	D_VERSION = 8, D_FREE_THREADED = 16, D_RT_INTERP_HEAD = 40,
	D_IS_NEXT = 64, D_IS_THREADS_HEAD = 72, D_IS_GIL = 112, D_IS_GIL_STATE = 120,
	D_GIL_LOCKED = 136, D_GIL_HOLDER = 144,
	D_TS_NEXT = 168, D_TS_INTERP = 176, D_TS_FRAME = 184, D_TS_THREAD_ID = 192, D_TS_NATIVE = 200,
	D_TS_DATASTACK = 208,
	D_F_PREVIOUS = 232, D_F_EXECUTABLE = 240, D_F_INSTR = 248, D_F_OWNER = 264,
	D_CO_FILENAME = 280, D_CO_NAME = 288, D_CO_QUALNAME = 296, D_CO_LINETABLE = 304,
	D_CO_FIRSTLINENO = 312, D_CO_ADAPTIVE = 344,
	D_BYTES_SIZE = 520, D_BYTES_SVAL = 528,
	D_STR_STATE = 544, D_STR_LENGTH = 552, D_STR_ASCII_SIZE = 560,
	D_IS_MODULES = 88, D_TP_FLAGS = 392, D_DICT_KEYS = 456, D_DICT_VALUES = 464,
};
_Static_assert(D_STR_ASCII_SIZE + 8 <= PY_DEBUG_OFFSETS_SIZE, "the block read");

/* The fields of a struct read whole: an offset must leave room for its
 * word in what is read (MAX bytes). */
#define FIELD_MAX 65536

static uint64_t u64(const unsigned char *b, size_t off)
{
	uint64_t v;
	memcpy(&v, b + off, 8);
	return v;
}

static int field(const unsigned char *b, size_t off, uint32_t *out)
{
	uint64_t v = u64(b, off);
	if (v > FIELD_MAX - 8)          /* not v + 8 > FIELD_MAX: it wraps for v >= 2^64 - 8 */
		return -1;
	*out = (uint32_t)v;
	return 0;
}

static uint32_t max3(uint32_t a, uint32_t b, uint32_t c)
{
	uint32_t m = a > b ? a : b;
	return m > c ? m : c;
}

uint64_t py_layout__from_debug(const unsigned char *b, size_t len, struct py_layout *l)
{
	if (len < PY_DEBUG_OFFSETS_SIZE || memcmp(b, "xdebugpy", 8) != 0)
		return 0;
	uint64_t version = u64(b, D_VERSION);
	/* 3.13.x only, and not the free-threaded build (other layouts). */
	if ((version >> 16) != 0x030d || u64(b, D_FREE_THREADED) != 0)
		return 0;
	memset(l, 0, sizeof(*l));
	l->minor = 13;
	l->lines = PY_LOCATIONS;
	l->frames = PY_FRAMES_CSTACK;
	static const struct { size_t d; size_t o; } map[] = {
		{ D_RT_INTERP_HEAD, offsetof(struct py_layout, rt_interp_head) },
		{ D_IS_NEXT, offsetof(struct py_layout, is_next) },
		{ D_IS_THREADS_HEAD, offsetof(struct py_layout, is_threads_head) },
		{ D_IS_GIL, offsetof(struct py_layout, is_gil_ptr) },
		{ D_GIL_LOCKED, offsetof(struct py_layout, gil_locked) },
		{ D_GIL_HOLDER, offsetof(struct py_layout, gil_holder) },
		{ D_TS_NEXT, offsetof(struct py_layout, ts_next) },
		{ D_TS_INTERP, offsetof(struct py_layout, ts_interp) },
		{ D_TS_FRAME, offsetof(struct py_layout, ts_frame) },
		{ D_TS_THREAD_ID, offsetof(struct py_layout, ts_thread_id) },
		{ D_TS_NATIVE, offsetof(struct py_layout, ts_native_id) },
		{ D_TS_DATASTACK, offsetof(struct py_layout, ts_datastack) },
		{ D_F_PREVIOUS, offsetof(struct py_layout, f_previous) },
		{ D_F_EXECUTABLE, offsetof(struct py_layout, f_code) },
		{ D_F_INSTR, offsetof(struct py_layout, f_instr) },
		{ D_F_OWNER, offsetof(struct py_layout, f_owner) },
		{ D_CO_FILENAME, offsetof(struct py_layout, co_filename) },
		{ D_CO_NAME, offsetof(struct py_layout, co_name) },
		{ D_CO_QUALNAME, offsetof(struct py_layout, co_qualname) },
		{ D_CO_LINETABLE, offsetof(struct py_layout, co_linetable) },
		{ D_CO_FIRSTLINENO, offsetof(struct py_layout, co_firstlineno) },
		{ D_CO_ADAPTIVE, offsetof(struct py_layout, co_code_adaptive) },
		{ D_BYTES_SIZE, offsetof(struct py_layout, bytes_size) },
		{ D_BYTES_SVAL, offsetof(struct py_layout, bytes_sval) },
		{ D_STR_STATE, offsetof(struct py_layout, str_state) },
		{ D_STR_LENGTH, offsetof(struct py_layout, str_length) },
		{ D_STR_ASCII_SIZE, offsetof(struct py_layout, str_ascii_size) },
		{ D_IS_MODULES, offsetof(struct py_layout, is_modules) },
		{ D_TP_FLAGS, offsetof(struct py_layout, tp_flags) },
		{ D_DICT_KEYS, offsetof(struct py_layout, dict_keys) },
		{ D_DICT_VALUES, offsetof(struct py_layout, dict_values) },
	};
	for (size_t i = 0; i < sizeof(map) / sizeof(map[0]); i++)
		if (field(b, map[i].d, (uint32_t *)((char *)l + map[i].o)) < 0)
			return 0;
	/* The GIL's locked and last_holder are given in the interpreter, in
	 * its own GIL (_gil, at gil_runtime_state); the reader follows
	 * ceval.gil, to the GIL in use: their offsets in that struct. */
	uint32_t gil_at;
	if (field(b, D_IS_GIL_STATE, &gil_at) < 0 || l->gil_locked < gil_at || l->gil_holder < gil_at)
		return 0;
	l->gil_locked -= gil_at;
	l->gil_holder -= gil_at;
	/* utf8_length and utf8 follow the ASCII header in a compact string. */
	l->str_compact_size = l->str_ascii_size + 16;
	/* Not in the block: 3.13's headers (pyoffsets checks them too) */
	l->attrs = PY_ATTRS_INLINE_313;
	l->tp_basicsize = 32;
	l->tp_dictoffset = 288;
	l->ht_cached_keys = 880;
	l->dk_nentries = 24;
	l->dk_indices = 32;
	l->dv_values = 8;
	l->ts_size = max3(l->ts_next, l->ts_frame, max3(l->ts_interp, l->ts_thread_id,
							 l->ts_native_id)) + 8;
	l->f_size = max3(l->f_previous, l->f_code, max3(l->f_instr, l->f_owner, 0)) + 8;
	/* A code object's copy holds its ob_type and ob_size too (8, 16). */
	l->co_size = max3(max3(l->co_filename, l->co_name, l->co_qualname),
			  max3(l->co_linetable, l->co_firstlineno, 16), 0) + 8;
	return py_layout__fits(l) ? version : 0;
}
