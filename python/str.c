/* str: a Python str object read from the target as UTF-8 (the names of
 * code objects, files and threads: python/interp.c, python/names.c). */
#include "python/internal.h"

#include <string.h>

#include "python/lines.h"
#include "util/text.h"
#include "util/xalloc.h"

char *py_read_str(const struct py_interp *p, uint64_t addr)
{
	unsigned char hdr[PY_STR_HEAD_MAX];
	if (py_rd(p, addr, hdr, p->l.str_compact_size) < 0 || (p->str_type && py_word(hdr, 8) != p->str_type))
		return NULL;
	uint32_t state;
	memcpy(&state, hdr + p->l.str_state, 4);
	int64_t len = (int64_t)py_word(hdr, p->l.str_length);
	int ascii, kind = py_lines__str_kind(state, &ascii);
	if (kind < 0 || len < 0)
		return NULL;
	size_t n = (size_t)len < PY_MAX_STR ? (size_t)len : PY_MAX_STR;
	unsigned char data[PY_MAX_STR * 4];
	uint64_t at = addr + (ascii ? p->l.str_ascii_size : p->l.str_compact_size);
	if (n && py_rd(p, at, data, n * (size_t)kind) < 0)
		return NULL;
	char out[PY_MAX_STR * 4 + 1];
	if (py_lines__utf8(state, data, n, out, sizeof(out)) < 0)
		return NULL;
	/* made safe to show: a name or file with control characters (an
	 * escape sequence, set through code.replace()) is shown with '?'
	 * for each, in --dump and goroutine?debug=2 as in the profiles */
	text__clean(out, sizeof(out), out, strlen(out));
	return xstrdup(out);
}
