/* stripped (built with -s): no .symtab, so the static functions can only
 * come out as "stripped+0xOFFSET".  Libraries (libc) keep their names. */
#define _GNU_SOURCE
#include "ready.h"

static volatile unsigned long sink;

__attribute__((noinline)) static void hidden_spin(unsigned long seed)
{
	unsigned long x = seed;

	for (;;) {
		x = x * 6364136223846793005UL + 1442695040888963407UL;
		sink = x;
	}
}

__attribute__((noinline)) static void hidden_outer(const char *ready)
{
	volatile int r = 0;

	ready_announce(ready);
	hidden_spin((unsigned long)ready);
	r++;
}

int main(int argc, char **argv)
{
	hidden_outer(ready_path(argc, argv));
	return 0;
}
