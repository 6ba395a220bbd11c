/* py_trampoline: CPython's perf trampolines.  python3.12 and 3.13 -X perf
 * call each Python function through its own copy (in anonymous memory,
 * named py::NAME in the perf map) of
 *     sub $8,%rsp; call *%rcx; add $8,%rsp; ret
 * which keeps no frame pointer and has no unwind info, but whose frame is
 * fixed: known from the code itself, not guessed.  At the instruction at
 * offset 0 or 10 the return address is at [SP], at 4 or 6 (after the call:
 * a caller's PC) at [SP + 8]; every other register is the caller's.  The
 * code is read from the target once per address (trampolines are never
 * freed while the interpreter runs). */
#include "unwind/py_trampoline.h"

#include <stdlib.h>
#include <string.h>

#include "util/remote.h"
#include "util/xalloc.h"

#define TRAMP_SLOTS 4096                /* JIT code has many return addresses */

struct py_trampolines {
	struct tramp_slot {
		uint64_t key;   /* PC + 1; 0: empty */
		int8_t off;     /* its offset in a CPython trampoline, or -1 */
	} slot[TRAMP_SLOTS];    /* direct-mapped */
};

static const unsigned char py_tramp[11] = { 0x48, 0x83, 0xec, 0x08, 0xff, 0xd1,
					    0x48, 0x83, 0xc4, 0x08, 0xc3 };
static const int8_t py_tramp_at[] = { 0, 4, 6, 10 };

/* PC's offset in a trampoline, or -1.  A return address can only be the
 * instruction after the call. */
static int py_trampoline(struct py_trampolines **t, pid_t pid, uint64_t pc, bool ret_addr)
{
	unsigned slot = (unsigned)((pc * 0x9e3779b97f4a7c15ull) >> 52) % TRAMP_SLOTS;
	if (!*t)
		*t = xcalloc(1, sizeof(**t));
	struct tramp_slot *s = &(*t)->slot[slot];
	if (s->key != pc + 1) {
		unsigned char code[sizeof(py_tramp) + 10];
		int off = -1;
		if (pc >= 10 && remote__read(pid, pc - 10, code, sizeof(code)) == 0)
			for (size_t i = 0; i < sizeof(py_tramp_at) && off < 0; i++)
				if (memcmp(code + 10 - py_tramp_at[i], py_tramp, sizeof(py_tramp)) == 0)
					off = py_tramp_at[i];
		s->key = pc + 1;
		s->off = (int8_t)off;
	}
	int off = s->off;
	return ret_addr && off != 6 ? -1 : off;
}

bool py_trampoline_frame(struct py_trampolines **t, pid_t pid, uint64_t pc, bool ret_addr,
			 uint64_t sp, uint64_t *ra_at)
{
	int off = py_trampoline(t, pid, pc, ret_addr);
	if (off < 0)
		return false;
	*ra_at = sp + (off == 4 || off == 6 ? 8 : 0);
	return true;
}

void py_trampolines_free(struct py_trampolines *t)
{
	free(t);
}
