/* text: any byte string made safe to show.
 *
 * Names reach us from the target (thread names, file names, symbols,
 * /tmp/perf-PID.map) and from input files (--convert): any bytes at all.
 * A "clean" string is valid UTF-8 (RFC 3629: no overlong forms, no
 * surrogates, nothing above U+10FFFF) without control characters (C0
 * U+0000-U+001F, tab and newline included; DEL U+007F; C1 U+0080-U+009F)
 * and without U+FFFE and U+FFFF (not characters: XML refuses them).  Every
 * clean string can go into XML text, JSON, a protobuf string and a folded
 * line once escaped for that context.
 *
 * What is not clean is replaced by '?': one '?' per control character and
 * one per maximal ill-formed subsequence (Unicode's "U+FFFD substitution of
 * maximal subparts", as Python and browsers decode; a character cut at the
 * end of a string is one '?').  '?' rather than U+FFFD because the result
 * is then never longer than the input: cleaning works in place, in fixed
 * buffers such as the kernel's 16-byte thread name, and never pushes a
 * string over a budget it met before. */
#ifndef CPROF_UTIL_TEXT_H
#define CPROF_UTIL_TEXT_H

#include <stdbool.h>
#include <stddef.h>

#define TEXT_REPLACEMENT '?'

/* Cleans the LEN bytes at SRC (NUL bytes among them are control
 * characters: replaced) into DST, writing at most SIZE - 1 bytes and a
 * terminating NUL; when the result does not fit, it is cut before the
 * first character (or replacement) that does not, never inside one.
 * DST may be SRC (in place).  Returns the length written; SIZE 0 writes
 * nothing and returns 0. */
size_t text__clean(char *dst, size_t size, const char *src, size_t len);

/* True if the LEN bytes at S are clean (text__clean would copy them as
 * they are). */
bool text__valid(const char *s, size_t len);

/* For a clean string S of LEN bytes: its number of characters, and the
 * length in bytes of its longest prefix of at most MAX characters (a cut
 * there is at a character boundary). */
size_t text__chars(const char *s, size_t len);
size_t text__prefix(const char *s, size_t len, size_t max);

#endif
