/* Fuzz target: what the goroutine view reads of a Go binary without DWARF
 * (goroutine/golayout.c): its .go.buildinfo section, the version string,
 * and the code of runtime.allgadd and runtime.waitReason.String, from
 * which the addresses of runtime.allgs, allglen and the waitReason strings
 * and the offset of g.atomicstatus are read.  All of it is the file's.
 *
 * Input: byte 0 chooses the parser (mod 4): 0 .go.buildinfo, 1 allgadd
 * (and schedinit's golayout__buildversion),
 * 2 waitReason.String (and golayout__uses), 3 a version string (golayout__string, then
 * golayout__minor and golayout__table); the rest is its bytes.  The code's
 * address is fixed (0x435360), so that the same bytes give the same
 * answers.
 *
 * What must hold, besides no crash, no sanitizer report: a version is
 * NUL-terminated, printable, starts "go1." and fits its buffer; a pointer
 * form names no version; an atomicstatus offset is in [0x80, 0x400) and a
 * multiple of 4, or none; a count of waitReasons is 1 to 255; a table,
 * when there is one, has g's head where every version has it.
 * Seeds: tests/fuzz/corpus/golayout/seed-* (Go 1.19's build info and
 * code, from tests/bin/goroutines-sw). */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "goroutine/golayout.h"

#define ADDR 0x435360

static void check_version(const char *ver, size_t cap)
{
	size_t n = strnlen(ver, cap);
	if (n == cap || n < 5 || strncmp(ver, "go1.", 4) != 0)
		abort();
	for (size_t i = 0; i < n; i++)
		if (ver[i] < 0x21 || ver[i] > 0x7e)
			abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size < 1)
		return 0;
	const unsigned char *in = data + 1;
	size_t len = size - 1;
	char ver[32];
	uint64_t a = 0, b = 0, c = 0;
	struct go_layout l;
	switch (data[0] % 4) {
	case 0: {
		int r = golayout__buildinfo(in, len, ver, sizeof(ver), &a);
		if (r == 0)
			check_version(ver, sizeof(ver));
		else if (r != 1 && r != -EINVAL)
			abort();
		break;
	}
	case 1:
		golayout__buildversion(in, len, ADDR, &a);
		golayout__allgadd(in, len, ADDR, &a, &b, &c);
		if (c != UINT64_MAX && (c < 0x80 || c >= 0x400 || c % 4))
			abort();
		break;
	case 2:
		if (golayout__reasons(in, len, ADDR, &a, &b) == 0 && (b == 0 || b > 255))
			abort();
		golayout__uses(in, len, 0x98);
		break;
	case 3:
		if (golayout__string(in, len, ver, sizeof(ver)) == 0) {
			check_version(ver, sizeof(ver));
			int minor = golayout__minor(ver);
			if (minor >= 0 && golayout__table(minor, &l) == 0 &&
			    (l.g_off[0] != 0 || l.g_off[2] != 48 || l.g_off[3] != 56))
				abort();
		}
		break;
	}
	return 0;
}
