#include "util/text.h"

#include <stdint.h>
#include <string.h>

/* The next unit of S (LEN > 0 bytes): one well-formed character, or the
 * maximal ill-formed subpart to replace.  Returns its length in bytes and
 * sets *SHOW when it is a character we keep.  The second byte's range
 * depends on the first (Unicode Table 3-7): that is what excludes overlong
 * forms (C0, C1, E0 80-9F, F0 80-8F), surrogates (ED A0-BF) and code
 * points above U+10FFFF (F4 90-BF, F5-FF). */
static size_t next_unit(const unsigned char *s, size_t len, bool *show)
{
	unsigned c = s[0], lo = 0x80, hi = 0xbf;
	size_t need;
	*show = false;
	if (c < 0x80) {
		*show = c >= 0x20 && c != 0x7f;
		return 1;
	}
	if (c < 0xc2 || c > 0xf4)
		return 1;
	if (c < 0xe0) {
		need = 2;
	} else if (c < 0xf0) {
		need = 3;
		lo = c == 0xe0 ? 0xa0 : 0x80;
		hi = c == 0xed ? 0x9f : 0xbf;
	} else {
		need = 4;
		lo = c == 0xf0 ? 0x90 : 0x80;
		hi = c == 0xf4 ? 0x8f : 0xbf;
	}
	uint32_t cp = c & (0xff >> (need + 1));
	for (size_t i = 1; i < need; i++) {
		if (i >= len || s[i] < lo || s[i] > hi)
			return i;       /* the maximal subpart: all before this byte */
		cp = cp << 6 | (s[i] & 0x3f);
		lo = 0x80;
		hi = 0xbf;
	}
	*show = !(cp >= 0x80 && cp <= 0x9f) && cp != 0xfffe && cp != 0xffff;
	return need;
}

/* True if the 8 bytes at P are all printable ASCII (0x20-0x7e), a word
 * at a time; may say false of some that are (the caller then looks byte by
 * byte), never true of one that is not.  (Bit tricks: a byte below 0x20
 * borrows from its top bit; one of 0x7f or above sets it when 1 is added,
 * or has it.) */
static bool plain8(const unsigned char *p)
{
	const uint64_t ones = 0x0101010101010101ull, top = 0x8080808080808080ull;
	uint64_t x;
	memcpy(&x, p, 8);
	uint64_t below = (x - 0x20 * ones) & ~x & top;
	uint64_t above = ((x + ones) | x) & top;
	return !(below | above);
}

size_t text__clean(char *dst, size_t size, const char *src, size_t len)
{
	const unsigned char *s = (const unsigned char *)src;
	size_t in = 0, out = 0;
	if (size == 0)
		return 0;
	while (in < len) {
		/* A run of printable ASCII, the common case, in one move. */
		size_t run = 0;
		while (in + run + 8 <= len && plain8(s + in + run))
			run += 8;
		while (in + run < len && s[in + run] >= 0x20 && s[in + run] < 0x7f)
			run++;
		if (run) {
			if (out + run > size - 1)
				run = size - 1 - out;
			if (dst + out != src + in)
				memmove(dst + out, s + in, run);
			out += run;
			in += run;
			if (out == size - 1)
				break;
			continue;
		}
		bool show;
		size_t n = next_unit(s + in, len - in, &show);
		size_t put = show ? n : 1;
		if (out + put > size - 1)
			break;
		/* Forward copy: OUT never passes IN, so DST == SRC is safe. */
		if (show)
			memmove(dst + out, s + in, n);
		else
			dst[out] = TEXT_REPLACEMENT;
		out += put;
		in += n;
	}
	dst[out] = '\0';
	return out;
}

bool text__valid(const char *s, size_t len)
{
	const unsigned char *u = (const unsigned char *)s;
	for (size_t i = 0; i < len;) {
		bool show;
		if (i + 8 <= len && plain8(u + i)) {
			i += 8;
			continue;
		}
		if (u[i] >= 0x20 && u[i] < 0x7f) {      /* the common case */
			i++;
			continue;
		}
		i += next_unit(u + i, len - i, &show);
		if (!show)
			return false;
	}
	return true;
}

/* In a clean string every byte that is not a continuation byte
 * (10xxxxxx) starts a character. */
size_t text__chars(const char *s, size_t len)
{
	size_t n = 0;
	for (size_t i = 0; i < len; i++)
		n += ((unsigned char)s[i] & 0xc0) != 0x80;
	return n;
}

size_t text__prefix(const char *s, size_t len, size_t max)
{
	size_t n = 0;
	for (size_t i = 0; i < len; i++) {
		if (((unsigned char)s[i] & 0xc0) != 0x80 && n++ == max)
			return i;
	}
	return len;
}
