/* nodebug (built without -g, not stripped): names come from .symtab only. */
#define _GNU_SOURCE
#include "ready.h"

static volatile unsigned long sink;

__attribute__((noinline)) void nodebug_work(unsigned long seed)
{
	unsigned long x = seed;

	for (;;) {
		x = x * 6364136223846793005UL + 1442695040888963407UL;
		sink = x;
	}
}

__attribute__((noinline)) void nodebug_outer(const char *ready)
{
	volatile int r = 0;

	ready_announce(ready);
	nodebug_work((unsigned long)ready);
	r++;
}

int main(int argc, char **argv)
{
	nodebug_outer(ready_path(argc, argv));
	return 0;
}
