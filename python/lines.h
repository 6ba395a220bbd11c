/* lines: CPython's line tables and strings, decoded from bytes copied out
 * of the process.  Pure functions over untrusted input: every loop is
 * bounded by the input's length (fuzzed: tests/fuzz/fuzz_pylines.c). */
#ifndef CPROF_PYTHON_LINES_H
#define CPROF_PYTHON_LINES_H

#include <stddef.h>
#include <stdint.h>

#include "python/layout.h"

/* The line of instruction offset OFF in a code object whose line table
 * (of kind KIND) is TAB[0 .. LEN) and whose first line is FIRST: OFF in
 * bytes for PY_LNOTAB and PY_LINETABLE_310, in code units for
 * PY_LOCATIONS.  Returns the line, FIRST when OFF < 0 (not started), or
 * 0 when the table gives the instruction none. */
int py_lines__line(enum py_lines kind, const uint8_t *tab, size_t len, int first, int64_t off);

/* A str object's characters as UTF-8 into OUT (OUTLEN > 0, always
 * terminated, cut at a character's end): STATE is its state word, DATA
 * its LEN characters (KIND bytes each, from the state) as copied.
 * Returns the bytes written, or -1 for a state no compact str has. */
int py_lines__utf8(uint32_t state, const uint8_t *data, size_t len, char *out, size_t outlen);

/* The width in bytes of a compact str's characters (1, 2, 4) and whether
 * its data follows the ASCII header (*ASCII) or the compact one; -1 for a
 * string that is not compact (its data is elsewhere). */
int py_lines__str_kind(uint32_t state, int *ascii);

#endif
