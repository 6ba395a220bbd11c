/* pyoffsets: what one CPython version's own headers say about the fields
 * cprof-attach reads from outside (python/layout.h), one "NAME VALUE" line
 * each, NAME a struct py_layout field; tests/bin/pylayout prints our table
 * in the same words and tests/t_python.sh compares every line.
 *
 * Built by the test against each installed version's headers, not by
 * tests.mk (no Python headers, no build):
 *     cc -I INCLUDE/python3.X -o pyoffsets-3.X pyoffsets.c
 * Py_BUILD_CORE opens the internal structs (_PyRuntimeState,
 * PyInterpreterState, _PyInterpreterFrame, the GIL's state).
 *
 * Besides offsets: "NAME LO..HI" for a struct read whole (LO: the end of
 * the last field read from the copy, HI: the struct's size), and the
 * words of the two enums (lines, frames) that follow from the version. */
#define Py_BUILD_CORE 1
#include <Python.h>
#include <stddef.h>
#include <stdio.h>
#if PY_VERSION_HEX >= 0x030b0000
#include "internal/pycore_dict.h"
#include "internal/pycore_frame.h"
#include "internal/pycore_interp.h"
#include "internal/pycore_moduleobject.h"
#include "internal/pycore_object.h"
#include "internal/pycore_runtime.h"
#else
#include <frameobject.h>
#include "internal/pycore_pystate.h"
#if PY_VERSION_HEX >= 0x030a0000
#include "internal/pycore_moduleobject.h"
#endif
#if PY_VERSION_HEX >= 0x03090000
#include "internal/pycore_interp.h"
#include "internal/pycore_runtime.h"
#endif
#endif

#define P(name, v) printf("%s %zu\n", name, (size_t)(v))
#define OFF(type, field) offsetof(type, field)
#define END(type, field) (offsetof(type, field) + sizeof(((type *)0)->field))
#define MAX(a, b) ((a) > (b) ? (a) : (b))

#if PY_VERSION_HEX >= 0x030b0000
typedef _PyInterpreterFrame frame_t;
#else
typedef PyFrameObject frame_t;
#endif

static void range(const char *name, size_t lo, size_t hi)
{
	printf("%s %zu..%zu\n", name, lo, hi);
}

int main(void)
{
	size_t end;

	P("minor", PY_MINOR_VERSION);
	printf("lines %s\n", PY_VERSION_HEX >= 0x030b0000 ? "LOCATIONS" :
			     PY_VERSION_HEX >= 0x030a0000 ? "LINETABLE_310" : "LNOTAB");
	printf("frames %s\n", PY_VERSION_HEX >= 0x030c0000 ? "CSTACK" :
			      PY_VERSION_HEX >= 0x030b0000 ? "IS_ENTRY" : "OBJECTS");
#if PY_VERSION_HEX >= 0x030c0000
	P("owned_by_cstack", FRAME_OWNED_BY_CSTACK);
#endif

	/* _PyRuntimeState, PyInterpreterState, the GIL */
	P("rt_interp_head", OFF(_PyRuntimeState, interpreters.head));
	P("is_next", OFF(PyInterpreterState, next));
#if PY_VERSION_HEX >= 0x030b0000
	P("is_threads_head", OFF(PyInterpreterState, threads.head));
#else
	P("is_threads_head", OFF(PyInterpreterState, tstate_head));
#endif
#if PY_VERSION_HEX >= 0x030c0000
	P("rt_gil", 0);
	P("is_gil_ptr", OFF(PyInterpreterState, ceval.gil));
#else
	P("rt_gil", OFF(_PyRuntimeState, ceval.gil));
	P("is_gil_ptr", 0);
#endif
	P("gil_locked", OFF(struct _gil_runtime_state, locked));
	P("gil_holder", OFF(struct _gil_runtime_state, last_holder));

	/* PyThreadState */
	P("ts_next", OFF(PyThreadState, next));
	P("ts_interp", OFF(PyThreadState, interp));
	P("ts_thread_id", OFF(PyThreadState, thread_id));
	end = MAX(END(PyThreadState, next), MAX(END(PyThreadState, interp), END(PyThreadState, thread_id)));
#if PY_VERSION_HEX >= 0x030d0000
	P("ts_frame", OFF(PyThreadState, current_frame));
	P("cf_current", 0);
	P("ts_via_cframe", 0);
	end = MAX(end, END(PyThreadState, current_frame));
#elif PY_VERSION_HEX >= 0x030b0000
	P("ts_frame", OFF(PyThreadState, cframe));
	P("cf_current", OFF(_PyCFrame, current_frame));
	P("ts_via_cframe", 1);
	end = MAX(end, END(PyThreadState, cframe));
#else
	P("ts_frame", OFF(PyThreadState, frame));
	P("cf_current", 0);
	P("ts_via_cframe", 0);
	end = MAX(end, END(PyThreadState, frame));
#endif
#if PY_VERSION_HEX >= 0x030b0000
	P("ts_native_id", OFF(PyThreadState, native_thread_id));
	end = MAX(end, END(PyThreadState, native_thread_id));
#else
	P("ts_native_id", 0);
#endif
	range("ts_size", end, sizeof(PyThreadState));

	/* frames */
#if PY_VERSION_HEX >= 0x030b0000
	P("f_previous", OFF(frame_t, previous));
	P("f_owner", OFF(frame_t, owner));
	end = MAX(END(frame_t, previous), END(frame_t, owner));
#if PY_VERSION_HEX >= 0x030d0000
	P("f_code", OFF(frame_t, f_executable));
	P("f_instr", OFF(frame_t, instr_ptr));
	end = MAX(end, MAX(END(frame_t, f_executable), END(frame_t, instr_ptr)));
#else
	P("f_code", OFF(frame_t, f_code));
	P("f_instr", OFF(frame_t, prev_instr));
	end = MAX(end, MAX(END(frame_t, f_code), END(frame_t, prev_instr)));
#endif
#if PY_VERSION_HEX < 0x030c0000
	P("f_is_entry", OFF(frame_t, is_entry));
	end = MAX(end, END(frame_t, is_entry));
#else
	P("f_is_entry", 0);
#endif
#else
	P("f_previous", OFF(frame_t, f_back));
	P("f_code", OFF(frame_t, f_code));
	P("f_instr", OFF(frame_t, f_lasti));
	P("f_owner", 0);
	P("f_is_entry", 0);
	end = MAX(END(frame_t, f_back), MAX(END(frame_t, f_code), END(frame_t, f_lasti)));
#endif
	range("f_size", end, sizeof(frame_t));

	/* PyCodeObject: ob_type (the type check) is read from the copy too */
	P("co_filename", OFF(PyCodeObject, co_filename));
	P("co_name", OFF(PyCodeObject, co_name));
	P("co_firstlineno", OFF(PyCodeObject, co_firstlineno));
	end = MAX(END(PyCodeObject, co_filename), END(PyCodeObject, co_name));
	end = MAX(end, MAX(END(PyCodeObject, co_firstlineno), END(PyObject, ob_type)));
#if PY_VERSION_HEX >= 0x030a0000
	P("co_linetable", OFF(PyCodeObject, co_linetable));
	end = MAX(end, END(PyCodeObject, co_linetable));
#else
	P("co_linetable", OFF(PyCodeObject, co_lnotab));
	end = MAX(end, END(PyCodeObject, co_lnotab));
#endif
#if PY_VERSION_HEX >= 0x030b0000
	P("co_qualname", OFF(PyCodeObject, co_qualname));
	P("co_code", 0);
	P("co_code_adaptive", OFF(PyCodeObject, co_code_adaptive));
	end = MAX(end, MAX(END(PyCodeObject, co_qualname), END(PyVarObject, ob_size)));
#else
	P("co_qualname", 0);
	P("co_code", OFF(PyCodeObject, co_code));
	P("co_code_adaptive", 0);
	end = MAX(end, END(PyCodeObject, co_code));
#endif
	range("co_size", end, sizeof(PyCodeObject));

	/* bytes and str */
	P("bytes_size", OFF(PyBytesObject, ob_base.ob_size));
	P("bytes_sval", OFF(PyBytesObject, ob_sval));
	P("str_length", OFF(PyASCIIObject, length));
	P("str_state", OFF(PyASCIIObject, state));
	P("str_ascii_size", sizeof(PyASCIIObject));
	P("str_compact_size", sizeof(PyCompactUnicodeObject));


	/* thread names: threading._active[ident]._name, from sys.modules */
#if PY_VERSION_HEX >= 0x030c0000
	P("is_modules", OFF(PyInterpreterState, imports.modules));
#else
	P("is_modules", OFF(PyInterpreterState, modules));
#endif
	P("tp_flags", OFF(PyTypeObject, tp_flags));
	P("tp_basicsize", OFF(PyTypeObject, tp_basicsize));
	P("tp_dictoffset", OFF(PyTypeObject, tp_dictoffset));
	P("ht_cached_keys", OFF(PyHeapTypeObject, ht_cached_keys));
	P("dict_keys", OFF(PyDictObject, ma_keys));
	P("dict_values", OFF(PyDictObject, ma_values));
#if PY_VERSION_HEX >= 0x030d0000
	printf("attrs INLINE_313\n");
#elif PY_VERSION_HEX >= 0x030c0000
	printf("attrs TAGGED_312\n");
#elif PY_VERSION_HEX >= 0x030b0000
	printf("attrs VALUES_311\n");
#else
	printf("attrs DICTOFFSET\n");
#endif
#if PY_VERSION_HEX >= 0x030b0000
	/* A dict's keys and values are in the headers from 3.11 (before, in
	 * Objects/dict-common.h, which is not installed). */
	P("dk_nentries", OFF(PyDictKeysObject, dk_nentries));
	P("dk_indices", OFF(PyDictKeysObject, dk_indices));
	P("dv_values", OFF(PyDictValues, values));
	P("fixed.dk_log2_size", OFF(PyDictKeysObject, dk_log2_size));
	P("fixed.dk_log2_index_bytes", OFF(PyDictKeysObject, dk_log2_index_bytes));
	P("fixed.dk_kind", OFF(PyDictKeysObject, dk_kind));
	P("fixed.dk_entry", sizeof(PyDictKeyEntry));
	P("fixed.dk_unicode_entry", sizeof(PyDictUnicodeEntry));
#if PY_VERSION_HEX >= 0x030c0000 && PY_VERSION_HEX < 0x030d0000
	/* 3.12 names no offset: its accessor, over an object of a type that
	 * manages its dict */
	static PyTypeObject managed;
	static struct { PyObject *before[4]; PyObject o; } obj;
	managed.tp_flags = Py_TPFLAGS_MANAGED_DICT;
	Py_SET_TYPE(&obj.o, &managed);
	P("fixed.managed_dict", (char *)&obj.o - (char *)_PyObject_DictOrValuesPointer(&obj.o));
#else
	P("fixed.managed_dict", -MANAGED_DICT_OFFSET);
#endif
#if PY_VERSION_HEX < 0x030c0000
	{
		static PyTypeObject managed;
		static struct { PyObject *before[4]; PyObject o; } obj;
		managed.tp_flags = Py_TPFLAGS_MANAGED_DICT;
		Py_SET_TYPE(&obj.o, &managed);
		P("fixed.managed_values", (char *)&obj.o - (char *)_PyObject_ValuesPointer(&obj.o));
	}
#endif
#endif
#if PY_VERSION_HEX >= 0x030a0000
	P("fixed.md_dict", OFF(PyModuleObject, md_dict));
#endif

	/* Not in the table: python/interp.c reads a code object's ob_type
	 * (the type check) and, from 3.11, its ob_size (its code units) at
	 * these offsets of every version. */
	P("fixed.ob_type", OFF(PyObject, ob_type));
#if PY_VERSION_HEX >= 0x030b0000
	P("fixed.code_units", OFF(PyCodeObject, ob_base.ob_size));
#endif
	return 0;
}
