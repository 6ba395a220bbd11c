/* pylayout: python/layout.c's table for one CPython version, printed in
 * pyoffsets.c's words ("NAME VALUE", NAME a struct py_layout field), for
 * tests/t_python.sh to compare line by line with the version's headers.
 *
 *     pylayout MINOR          the table of 3.MINOR (exit 2: none)
 *     pylayout --debug FILE   3.13+: FILE holds the first bytes of a live
 *                             _PyRuntime; prints what
 *                             py_layout__from_debug() makes of its
 *                             _Py_DebugOffsets (exit 1: refused)
 * Every line also passes py_layout__fits() or the program says so (exit 1). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "python/layout.h"

static const char *lines_word(enum py_lines k)
{
	switch (k) {
	case PY_LNOTAB: return "LNOTAB";
	case PY_LINETABLE_310: return "LINETABLE_310";
	case PY_LOCATIONS: return "LOCATIONS";
	}
	return "?";
}

static const char *frames_word(enum py_frames k)
{
	switch (k) {
	case PY_FRAME_OBJECTS: return "OBJECTS";
	case PY_FRAMES_IS_ENTRY: return "IS_ENTRY";
	case PY_FRAMES_CSTACK: return "CSTACK";
	}
	return "?";
}

static const char *attrs_word(enum py_attrs k)
{
	switch (k) {
	case PY_ATTRS_DICTOFFSET: return "DICTOFFSET";
	case PY_ATTRS_VALUES_311: return "VALUES_311";
	case PY_ATTRS_TAGGED_312: return "TAGGED_312";
	case PY_ATTRS_INLINE_313: return "INLINE_313";
	}
	return "?";
}

static void print(const struct py_layout *l)
{
#define F(f) printf("%s %u\n", #f, (unsigned)l->f)
	F(minor);
	printf("lines %s\nframes %s\n", lines_word(l->lines), frames_word(l->frames));
	if (l->frames == PY_FRAMES_CSTACK)
		printf("owned_by_cstack %d\n", PY_OWNED_BY_CSTACK);
	F(rt_interp_head); F(is_next); F(is_threads_head);
	F(rt_gil); F(is_gil_ptr); F(gil_locked); F(gil_holder);
	F(ts_next); F(ts_interp); F(ts_thread_id); F(ts_frame); F(cf_current); F(ts_via_cframe);
	F(ts_native_id); F(ts_size);
	F(f_previous); F(f_owner); F(f_code); F(f_instr); F(f_is_entry); F(f_size);
	F(co_filename); F(co_name); F(co_firstlineno); F(co_linetable); F(co_qualname);
	F(co_code); F(co_code_adaptive); F(co_size);
	F(bytes_size); F(bytes_sval);
	F(str_length); F(str_state); F(str_ascii_size); F(str_compact_size);
	F(is_modules); F(tp_flags); F(tp_basicsize); F(tp_dictoffset); F(ht_cached_keys);
	F(dict_keys); F(dict_values);
	printf("attrs %s\n", attrs_word(l->attrs));
	if (l->minor >= 11) {           /* not in the headers before */
		F(dk_nentries); F(dk_indices); F(dv_values);
	}
#undef F
}

int main(int argc, char **argv)
{
	struct py_layout l;
	if (argc == 3 && strcmp(argv[1], "--debug") == 0) {
		unsigned char b[PY_DEBUG_OFFSETS_SIZE];
		FILE *f = fopen(argv[2], "rb");
		size_t n = f ? fread(b, 1, sizeof(b), f) : 0;
		if (f)
			fclose(f);
		unsigned long long v = py_layout__from_debug(b, n, &l);
		if (!v) {
			fprintf(stderr, "pylayout: %s (%zu bytes): refused by py_layout__from_debug\n",
				argv[2], n);
			return 1;
		}
		fprintf(stderr, "pylayout: _Py_DebugOffsets of 0x%llx\n", v);
	} else if (argc == 2) {
		const struct py_layout *t = py_layout__of(atoi(argv[1]));
		if (!t) {
			fprintf(stderr, "pylayout: no table for 3.%s\n", argv[1]);
			return 2;
		}
		l = *t;
	} else {
		fprintf(stderr, "usage: pylayout MINOR | pylayout --debug FILE\n");
		return 2;
	}
	print(&l);
	if (!py_layout__fits(&l)) {
		fprintf(stderr, "pylayout: the layout does not fit what is read (py_layout__fits)\n");
		return 1;
	}
	return 0;
}
