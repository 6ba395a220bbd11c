/* inlined (built with -g): the CPU loop lives in an always_inline function,
 * so every sample's innermost frame is an inlined one.  The profiler must
 * show inlined_spin as its own frame, under its caller spin_caller. */
#define _GNU_SOURCE
#include "ready.h"

static volatile unsigned long sink;

static inline __attribute__((always_inline)) void inlined_spin(unsigned long seed)
{ /* INLINED_BEGIN */
	unsigned long x = seed;

	for (;;) {
		x = x * 6364136223846793005UL + 1442695040888963407UL; /* INLINED_LINE */
		sink = x;
	}
} /* INLINED_END */

__attribute__((noinline)) void spin_caller(const char *ready)
{
	ready_announce(ready);
	inlined_spin((unsigned long)ready); /* CALLER_LINE */
}

int main(int argc, char **argv)
{
	volatile int r = 0;

	spin_caller(ready_path(argc, argv));
	return r;
}
