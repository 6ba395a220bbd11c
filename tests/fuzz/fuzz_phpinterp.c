/* Fuzz target: a PHP process's chain of calls read from memory that is
 * corrupt or hostile (php/interp.c over php/layout.c's 8.2 table).
 *
 * The input (integers little-endian):
 *   0      bit 0: memory outside the regions reads as byte 1 repeated
 *          (every pointer leads somewhere, every length is huge)
 *   1      that byte
 *   8-15   executor_globals' address
 *   16-    the process's memory: regions, each an address (8 bytes), a
 *          length (2) and its bytes; at most MAX_REGIONS
 * The chain is read (all, and at most 3) and each call named with lines
 * and without, twice (the second from the cache).  Besides not crashing
 * or hanging: counts within what was asked, the last call ends the chain
 * (whole or cut), a call not named is "[unknown php frame]", one named has
 * a function of bounded length, no line unless asked.
 * tests/fuzz/corpus/phpinterp/seed-chain: a chain of three calls (<main>,
 * Cls::run in a file, usleep), the first two marked ZEND_CALL_TOP. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "php/interp.h"
#include "tests/fuzz/fakemem.h"

#define HEADER 16
#define UNKNOWN "[unknown php frame]"

static void fail(const char *what)
{
	fprintf(stderr, "fuzz_phpinterp: %s\n", what);
	abort();
}

static void name(struct php_interp *p, const struct php_frame_raw *f, bool lines)
{
	struct php_named nm;
	int r = php_interp__name(p, f, lines, &nm);
	if (r < 0 && (!nm.func || strcmp(nm.func, UNKNOWN) != 0))
		fail("a call not named is not " UNKNOWN);
	if (r == 0 && (!nm.func || strlen(nm.func) > 2 * PHP_MAX_STR + 8 ||
		       (nm.file && strlen(nm.file) > PHP_MAX_STR)))
		fail("a call named without a function, or with one too long");
	if (!lines && nm.line != 0)
		fail("a line given without lines");
	if (getenv("FUZZ_PHPINTERP_VERBOSE"))
		fprintf(stderr, "  %s (%s:%d) ends %u\n", nm.func, nm.file ? nm.file : "?", nm.line,
			f->ends);
}

static struct php_frame_raw frames[PHP_MAX_FRAMES];

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size < HEADER)
		return 0;
	struct mem m;
	mem_load(&m, data, size, 0, HEADER);
	struct php_interp *php = php_interp__fake(php_layout__of(8, 2), fake_read, &m, le(data + 8, 8));
	size_t maxes[2] = { PHP_MAX_FRAMES, 3 };
	for (int k = 0; k < 2; k++) {
		uint64_t cur, prev;
		size_t n = php_interp__frames(php, frames, maxes[k], &cur, &prev);
		if (n > maxes[k])
			fail("more calls than asked for");
		if (n && frames[n - 1].ends != PHP_ENDS_WHOLE && frames[n - 1].ends != PHP_ENDS_CUT)
			fail("the last call does not end the chain");
		for (size_t i = 0; i < n; i++) {
			php_interp__func(php, frames[i].func, (uint64_t)k + 1);
			name(php, &frames[i], true);
			name(php, &frames[i], false);
		}
		php_interp__current(php, &cur, &prev);
	}
	php_interp__free(php);
	return 0;
}
