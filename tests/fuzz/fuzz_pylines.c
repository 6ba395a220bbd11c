/* Fuzz target: CPython's line tables and str objects as python/lines.c
 * decodes them, from bytes copied out of a process that may be corrupt or
 * hostile.
 *
 * The input: byte 0 says what the rest is (its value modulo 4: 0 a 3.8-3.9
 * co_lnotab, 1 a 3.10 co_linetable, 2 a 3.11+ location table, 3 a str);
 * bytes 1-4 the code object's first line (or the str's state word), bytes
 * 5-12 an instruction offset (or, for a str, the output buffer's size in
 * its low 12 bits), both little-endian; the table (or the str's
 * characters) after.  A table is asked for the line of the input's offset,
 * of offsets spread over and past the code it describes, and of extreme
 * ones; a str is turned to UTF-8 into buffers of two sizes.  What must
 * hold: an offset before the start gives the first line; a 3.8-3.10 line
 * stays within what the table's deltas can add; the UTF-8 is valid,
 * terminated within the buffer, has no NUL inside, is ASCII for an ASCII
 * str, has every character when the buffer is large enough, and a smaller
 * buffer gets a prefix of it. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "python/lines.h"

#define HEADER 13

static void fail(const char *what)
{
	fprintf(stderr, "fuzz_pylines: %s\n", what);
	abort();
}

static void line_at(enum py_lines kind, const uint8_t *t, size_t len, int first, int64_t off)
{
	int line = py_lines__line(kind, t, len, first, off);
	if (off < 0 && line != first)
		fail("an offset before the start does not give the first line");
	/* 3.8-3.10: at most one signed byte of delta per pair (where that
	 * cannot pass the ends of an int). */
	int64_t reach = 128 * (int64_t)(len / 2);
	if (kind != PY_LOCATIONS && first - reach > INT32_MIN && first + reach < INT32_MAX &&
	    line != 0 && (line < first - reach || line > first + reach))
		fail("a line beyond what the table's deltas reach");
}

static void lines(enum py_lines kind, int first, int64_t off, const uint8_t *t, size_t len)
{
	line_at(kind, t, len, first, off);
	line_at(kind, t, len, first, (int64_t)((uint64_t)off + 1));
	line_at(kind, t, len, first, -1);
	line_at(kind, t, len, first, INT64_MIN);
	line_at(kind, t, len, first, INT64_MAX);
	/* Offsets over the code the table covers (at most 255 bytes or 8
	 * code units an entry) and past it, 256 of them at most. */
	int64_t span = 256 * (int64_t)len + 16, step = span / 256 + 1;
	for (int64_t o = 0; o <= span; o += step)
		line_at(kind, t, len, first, o);
}

/* The code point at S (of the N bytes left), strictly decoded, or -1 for
 * bytes that are not UTF-8 (overlong, surrogates, past U+10FFFF, cut). */
static int32_t utf8_next(const unsigned char *s, size_t n, size_t *used)
{
	static const uint32_t least[] = { 0, 0, 0x80, 0x800, 0x10000 };
	size_t k = s[0] < 0x80 ? 1 : (s[0] & 0xe0) == 0xc0 ? 2 : (s[0] & 0xf0) == 0xe0 ? 3 :
		   (s[0] & 0xf8) == 0xf0 ? 4 : 0;
	if (!k || k > n)
		return -1;
	uint32_t c = k == 1 ? s[0] : s[0] & (0x7f >> k);
	for (size_t i = 1; i < k; i++) {
		if ((s[i] & 0xc0) != 0x80)
			return -1;
		c = c << 6 | (s[i] & 0x3f);
	}
	if (c < least[k] || c > 0x10ffff || (c >= 0xd800 && c < 0xe000))
		return -1;
	*used = k;
	return (int32_t)c;
}

/* Checks OUT (N bytes written, of OUTLEN) and returns its characters. */
static size_t check_utf8(const char *out, int n, size_t outlen, int ascii)
{
	if (n < 0 || (size_t)n >= outlen || out[n] != 0 || strlen(out) != (size_t)n)
		fail("py_lines__utf8: not terminated where it says, or a NUL inside");
	size_t chars = 0, used = 0;
	for (size_t i = 0; i < (size_t)n; i += used, chars++) {
		int32_t c = utf8_next((const unsigned char *)out + i, (size_t)n - i, &used);
		if (c < 0)
			fail("py_lines__utf8: not UTF-8");
		if (ascii && c > 127)
			fail("py_lines__utf8: an ASCII str gave a character past 127");
	}
	return chars;
}

static void str(uint32_t state, size_t outlen, const uint8_t *data, size_t size)
{
	int ascii, kind = py_lines__str_kind(state, &ascii);
	size_t len = size / (size_t)(kind > 0 ? kind : 1);
	char *out = malloc(outlen), *small = malloc(outlen);
	int n = py_lines__utf8(state, data, len, out, outlen);
	if ((n < 0) != (kind < 0))
		fail("py_lines__utf8 and py_lines__str_kind disagree");
	if (n >= 0) {
		size_t chars = check_utf8(out, n, outlen, ascii);
		if (chars > len || (outlen > 4 * len && chars != len))
			fail("py_lines__utf8: characters lost with room for them");
		size_t half = outlen / 2 + 1;
		int m = py_lines__utf8(state, data, len, small, half);
		check_utf8(small, m, half, ascii);
		if (m > n || memcmp(small, out, (size_t)m) != 0)
			fail("py_lines__utf8: a smaller buffer is not given a prefix");
	}
	free(out);
	free(small);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size < HEADER)
		return 0;
	uint32_t word;
	uint64_t off;
	memcpy(&word, data + 1, 4);
	memcpy(&off, data + 5, 8);
	const uint8_t *rest = data + HEADER;
	size_t len = size - HEADER;
	switch (data[0] & 3) {
	case 0:
		lines(PY_LNOTAB, (int)word, (int64_t)off, rest, len);
		break;
	case 1:
		lines(PY_LINETABLE_310, (int)word, (int64_t)off, rest, len);
		break;
	case 2:
		lines(PY_LOCATIONS, (int)word, (int64_t)off, rest, len);
		break;
	default:
		str(word, 1 + (off & 0xfff), rest, len);
		break;
	}
	return 0;
}
