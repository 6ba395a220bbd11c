/* layout: where CPython keeps what a reader from outside needs, per minor
 * version (x86-64, the default build: no free threading, no debug).
 *
 * 3.13 publishes these offsets itself (_Py_DebugOffsets, at the start of
 * _PyRuntime, cookie "xdebugpy"): py_layout__from_debug() reads them from
 * the process.  For 3.8 to 3.12 one table per minor version, taken from
 * that version's headers (offsetof over Include/ and Include/internal
 * with Py_BUILD_CORE); tests/t_python.sh compiles
 * tests/targets/pyoffsets/pyoffsets.c against each installed version's
 * headers and compares every entry (3.13: with what
 * py_layout__from_debug() makes of the live interpreter's block). */
#ifndef CPROF_PYTHON_LAYOUT_H
#define CPROF_PYTHON_LAYOUT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* How a code object maps instruction offsets to lines. */
enum py_lines {
	PY_LNOTAB,              /* 3.8, 3.9: co_lnotab (byte offsets) */
	PY_LINETABLE_310,       /* 3.10: co_linetable, PEP 626 (byte offsets) */
	PY_LOCATIONS,           /* 3.11+: the location table (code units) */
};

/* How a thread's frames are linked and where a C call into the eval loop
 * starts (what lines them up with the native _PyEval_EvalFrameDefault
 * frames). */
enum py_frames {
	PY_FRAME_OBJECTS,       /* 3.8-3.10: PyFrameObject, one per eval call */
	PY_FRAMES_IS_ENTRY,     /* 3.11: _PyInterpreterFrame, is_entry marks the first */
	PY_FRAMES_CSTACK,       /* 3.12+: an entry frame owned by the C stack between */
};

/* Where an instance's attributes are (what finds a thread's name). */
enum py_attrs {
	PY_ATTRS_DICTOFFSET,    /* 3.8-3.10: a dict at the type's tp_dictoffset */
	PY_ATTRS_VALUES_311,    /* 3.11: values 32 bytes before the object, else a dict 24 before */
	PY_ATTRS_TAGGED_312,    /* 3.12: 24 before: values (their address - 1) or a dict */
	PY_ATTRS_INLINE_313,    /* 3.13: values after the object (tp_basicsize), else a
				   dict 24 before */
};

struct py_layout {
	int minor;                      /* 3.MINOR */
	enum py_lines lines;
	enum py_frames frames;
	enum py_attrs attrs;
	/* _PyRuntimeState */
	uint32_t rt_interp_head;
	/* PyInterpreterState */
	uint32_t is_next, is_threads_head;
	/* the GIL: a struct in _PyRuntime (3.8-3.11) at RT_GIL, or a pointer
	 * in the interpreter (3.12+) at IS_GIL_PTR (0: the other) */
	uint32_t rt_gil, is_gil_ptr;
	uint32_t gil_locked, gil_holder;
	/* PyThreadState */
	uint32_t ts_next, ts_interp;
	uint32_t ts_frame;              /* the current frame, or (3.11, 3.12) the cframe */
	uint32_t cf_current;            /* 3.11, 3.12: _PyCFrame.current_frame */
	int ts_via_cframe;
	uint32_t ts_thread_id;          /* pthread_t */
	uint32_t ts_native_id;          /* the OS thread id, 0 where there is none (< 3.11) */
	uint32_t ts_size;               /* bytes read of a thread state */
	uint32_t ts_datastack;          /* 3.11+: datastack_chunk, then datastack_top,
					   where the frames of the current chunk are */
	/* frames: PyFrameObject or _PyInterpreterFrame */
	uint32_t f_previous, f_code, f_instr;   /* f_instr: f_lasti (int) before 3.11 */
	uint32_t f_owner, f_is_entry;           /* 3.11+; f_is_entry 3.11 only */
	uint32_t f_size;                        /* bytes read of a frame */
	/* PyCodeObject */
	uint32_t co_filename, co_name, co_qualname;     /* co_qualname 0: none (< 3.11) */
	uint32_t co_firstlineno, co_linetable;
	uint32_t co_code;               /* < 3.11: the bytes object of its code */
	uint32_t co_code_adaptive;      /* 3.11+: its code's first unit, in the object */
	uint32_t co_size;               /* bytes read of a code object */
	/* objects */
	uint32_t bytes_size, bytes_sval;
	/* thread names (python/names.c): sys.modules in the interpreter,
	 * types, dicts (PyDictKeysObject and PyDictValues as the 3.11+
	 * headers give them: before, dk_nentries 32 and dk_indices 40, the
	 * values where ma_values points) */
	uint32_t is_modules;
	uint32_t tp_flags, tp_basicsize, tp_dictoffset, ht_cached_keys;
	uint32_t dict_keys, dict_values;
	uint32_t dk_nentries, dk_indices, dv_values;
	uint32_t str_length, str_state, str_ascii_size, str_compact_size;
};

/* What a reader copies of a thread state, a frame, a code object and a
 * str's header, at most: a layout asking for more is refused. */
#define PY_TS_MAX 512
#define PY_FRAME_MAX 256
#define PY_CODE_MAX 512
#define PY_STR_HEAD_MAX 128
#define PY_TYPE_MAX 1024

/* Whether every offset of L falls inside what is read. */
bool py_layout__fits(const struct py_layout *l);

/* The frame owner that marks a C call's entry frame (3.12+). */
#define PY_OWNED_BY_CSTACK 3

/* The table of 3.MINOR, or NULL (only 8 to 12 have one: 3.13 on has its
 * own, see py_layout__from_debug()). */
const struct py_layout *py_layout__of(int minor);

/* The size of the part of _Py_DebugOffsets read (the 3.13 layout). */
#define PY_DEBUG_OFFSETS_SIZE 584

/* Fills L from BUF, the first LEN bytes of a 3.13+ _PyRuntime.  Returns
 * the version's PY_VERSION_HEX, or 0 when BUF is not such a block (its
 * cookie, a version of 3.13 or later and offsets that fit what is read:
 * a later layout of the block itself is refused, not guessed). */
uint64_t py_layout__from_debug(const unsigned char *buf, size_t len, struct py_layout *l);

#endif
