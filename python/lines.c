/* CPython's line tables (see lines.h), read from each version's own notes:
 * Objects/lnotab_notes.txt (3.8-3.10) and Objects/locations.md (3.11+). */
#include "python/lines.h"

#include <stdbool.h>

/* LINE + DELTA, wrapping: a hostile table or first line can add up past
 * an int, which must give a wrong line, not undefined behaviour. */
static int add_line(int line, int64_t delta)
{
	return (int)((uint32_t)line + (uint32_t)delta);
}

/* 3.8, 3.9: pairs (bytecode delta, line delta as a signed byte); the line
 * changes where the bytecode offset reaches the pair's start, as
 * PyCode_Addr2Line walks it. */
static int lnotab_line(const uint8_t *t, size_t len, int line, int64_t off)
{
	int64_t addr = 0;
	for (size_t i = 0; i + 1 < len; i += 2) {
		addr += t[i];
		if (addr > off)
			break;
		line = add_line(line, (int8_t)t[i + 1]);
	}
	return line;
}

/* 3.10 (PEP 626): pairs (bytes of code, line delta); a delta of -128 means
 * those bytes have no line.  Each pair covers [start, start + delta). */
static int linetable_310(const uint8_t *t, size_t len, int line, int64_t off)
{
	int64_t end = 0;
	for (size_t i = 0; i + 1 < len; i += 2) {
		int64_t start = end;
		end = start + t[i];
		int8_t ld = (int8_t)t[i + 1];
		if (ld != -128)
			line = add_line(line, ld);
		if (off >= start && off < end)
			return ld == -128 ? 0 : line;
	}
	return 0;
}

/* 3.11+: entries, each starting with a byte whose top bit is set:
 * bits 3-6 the code, bits 0-2 the length - 1 in code units.  Varints are
 * 6 bits a byte, the 0x40 bit saying more follow; a signed varint holds
 * its sign in the lowest bit. */
struct reader {
	const uint8_t *t;
	size_t len, i;
};

static bool varint(struct reader *r, uint64_t *out)
{
	uint64_t v = 0;
	for (int shift = 0; r->i < r->len && shift < 64; shift += 6) {
		uint8_t b = r->t[r->i++];
		v |= (uint64_t)(b & 63) << shift;
		if (!(b & 64)) {
			*out = v;
			return true;
		}
	}
	return false;
}

static bool svarint(struct reader *r, int64_t *out)
{
	uint64_t v;
	if (!varint(r, &v))
		return false;
	*out = v & 1 ? -(int64_t)(v >> 1) : (int64_t)(v >> 1);
	return true;
}

static int locations_line(const uint8_t *t, size_t len, int line, int64_t off)
{
	struct reader r = { t, len, 0 };
	int64_t unit = 0;
	while (r.i < r.len) {
		uint8_t b = r.t[r.i++];
		if (!(b & 0x80))
			return 0;       /* not an entry's first byte: lost */
		int code = (b >> 3) & 15;
		int64_t n = (b & 7) + 1, delta = 0;
		bool has_line = true;
		uint64_t skip;
		if (code == 15) {
			has_line = false;               /* no location */
		} else if (code == 14) {                /* long form */
			if (!svarint(&r, &delta) || !varint(&r, &skip) || !varint(&r, &skip) ||
			    !varint(&r, &skip))
				return 0;
		} else if (code == 13) {                /* no columns */
			if (!svarint(&r, &delta))
				return 0;
		} else if (code >= 10) {                /* one line: two column bytes */
			delta = code - 10;
			r.i += 2;
		} else {                                /* short form: one column byte */
			r.i += 1;
		}
		if (has_line)
			line = add_line(line, delta);
		if (off >= unit && off < unit + n)
			return has_line ? line : 0;
		unit += n;
	}
	return 0;
}

int py_lines__line(enum py_lines kind, const uint8_t *tab, size_t len, int first, int64_t off)
{
	if (off < 0)
		return first;
	switch (kind) {
	case PY_LNOTAB:
		return lnotab_line(tab, len, first, off);
	case PY_LINETABLE_310:
		return linetable_310(tab, len, first, off);
	case PY_LOCATIONS:
		return locations_line(tab, len, first, off);
	}
	return 0;
}

/* The state word: interned (2 bits), kind (3), compact (1), ascii (1). */
int py_lines__str_kind(uint32_t state, int *ascii)
{
	int kind = (state >> 2) & 7, compact = (state >> 5) & 1;
	*ascii = (state >> 6) & 1;
	if (!compact || (kind != 1 && kind != 2 && kind != 4) || (*ascii && kind != 1))
		return -1;
	return kind;
}

static size_t put_utf8(uint32_t c, char *out, size_t room)
{
	if (c > 0x10ffff || (c >= 0xd800 && c < 0xe000))
		c = '?';
	size_t n = c < 0x80 ? 1 : c < 0x800 ? 2 : c < 0x10000 ? 3 : 4;
	if (n > room)
		return 0;
	if (n == 1) {
		out[0] = (char)c;
	} else if (n == 2) {
		out[0] = (char)(0xc0 | c >> 6);
		out[1] = (char)(0x80 | (c & 63));
	} else if (n == 3) {
		out[0] = (char)(0xe0 | c >> 12);
		out[1] = (char)(0x80 | ((c >> 6) & 63));
		out[2] = (char)(0x80 | (c & 63));
	} else {
		out[0] = (char)(0xf0 | c >> 18);
		out[1] = (char)(0x80 | ((c >> 12) & 63));
		out[2] = (char)(0x80 | ((c >> 6) & 63));
		out[3] = (char)(0x80 | (c & 63));
	}
	return n;
}

int py_lines__utf8(uint32_t state, const uint8_t *data, size_t len, char *out, size_t outlen)
{
	int ascii;
	int kind = py_lines__str_kind(state, &ascii);
	if (kind < 0 || outlen == 0)
		return -1;
	size_t o = 0;
	for (size_t i = 0; i < len; i++) {
		uint32_t c = kind == 1 ? data[i] :
			     kind == 2 ? (uint32_t)(data[2 * i] | data[2 * i + 1] << 8) :
			     (uint32_t)data[4 * i] | (uint32_t)data[4 * i + 1] << 8 |
			     (uint32_t)data[4 * i + 2] << 16 | (uint32_t)data[4 * i + 3] << 24;
		if (c == 0 || (ascii && c > 127))
			c = '?';
		size_t n = put_utf8(c, out + o, outlen - 1 - o);
		if (!n)
			break;
		o += n;
	}
	out[o] = 0;
	return (int)o;
}
