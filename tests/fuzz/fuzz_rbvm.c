/* Fuzz target: a CRuby 3.1 VM read from a process whose memory is corrupt
 * or hostile (ruby/vm.c over ruby/layout.c).
 *
 * The input (integers little-endian):
 *   0      bit 0: memory outside the regions reads as byte 1 repeated
 *          (every pointer leads somewhere, every length is huge)
 *   1      that byte
 *   8-15   ruby_current_vm_ptr's address
 *   16-    the process's memory: regions, each an address (8 bytes), a
 *          length (2) and its bytes; at most MAX_REGIONS
 * Then the threads (at most 8), the frames of each (at most
 * RB_MAX_FRAMES, then 3), each frame named and lined.  Besides not
 * crashing or hanging, what must hold: counts within what was asked;
 * strings terminated and within RB_MAX_STR; lines not negative. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ruby/vm.h"
#include "tests/fuzz/fakemem.h"

#define HEADER 16

static void fail(const char *what)
{
	fprintf(stderr, "fuzz_rbvm: %s\n", what);
	abort();
}

static void check_str(const char *s, size_t cap)
{
	size_t n = strnlen(s, cap);
	if (n == cap || n > RB_MAX_STR)
		fail("a string unterminated or too long");
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size < HEADER)
		return 0;
	static struct mem m;
	mem_load(&m, data, size, 0, HEADER);
	uint64_t vm_ptr = le(data + 8, 8);
	struct rb_vm *v = rb_vm__fake(ruby_layout__find(3, 1), fake_read, &m, vm_ptr);
	struct rb_thread_raw th[8];
	static struct rb_frame_raw fr[RB_MAX_FRAMES];
	uint64_t gvl;
	int n = rb_vm__threads(v, th, 8, &gvl);
	if (n > 8)
		fail("more threads than asked");
	for (int i = 0; i < n; i++) {
		for (size_t max = RB_MAX_FRAMES; max; max = max == 3 ? 0 : 3) {
			bool trunc;
			size_t k = rb_vm__frames(v, th[i].ec, fr, max, &trunc);
			if (k > max)
				fail("more frames than asked");
			for (size_t j = 0; j < k && j < 64; j++) {
				char label[RB_MAX_STR + 8], path[RB_MAX_STR + 8];
				int first;
				rb_vm__iseq_name(v, fr[j].iseq, label, sizeof(label), path, sizeof(path), &first);
				check_str(label, sizeof(label));
				check_str(path, sizeof(path));
				if (rb_vm__line(v, fr[j].iseq, fr[j].pc) < 0)
					fail("a negative line");
			}
		}
	}
	rb_vm__free(v);
	return 0;
}
