/* deep READY [DEPTH]: two threads, each DEPTH (default 200) frames deep in
 * recurse(), one blocked at the bottom (a read on a pipe nobody writes to),
 * one spinning on CPU at the bottom.  The main thread waits in
 * pthread_join.  Covers unwinding a thread stopped in a syscall and one
 * stopped while running. */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdatomic.h>
#include <time.h>
#include "ready.h"

#define DEPTH 200

static int depth = DEPTH;
static atomic_int at_bottom;
static int pipefd[2];
static volatile unsigned long sink;

__attribute__((noinline)) static int block_at_bottom(void)
{
	char c;

	atomic_fetch_add(&at_bottom, 1);
	for (;;)
		if (read(pipefd[0], &c, 1) == 1)
			return c;
}

__attribute__((noinline)) static int spin_at_bottom(void)
{
	unsigned long x = 7;

	atomic_fetch_add(&at_bottom, 1);
	for (;;) {
		x = x * 2862933555777941757UL + 3037000493UL;
		sink = x;
	}
	return (int)x;
}

/* Not a tail call: the result is used after the call returns, through a
 * volatile, so -O2 keeps one frame per level. */
__attribute__((noinline)) int recurse(int n, int spin)
{
	volatile int r;

	if (n <= 1)
		r = spin ? spin_at_bottom() : block_at_bottom();
	else
		r = recurse(n - 1, spin);
	return r + 1;
}

static void *blocker_main(void *arg)
{
	pthread_setname_np(pthread_self(), "blocker");
	recurse(depth, 0);
	return arg;
}

static void *spinner_main(void *arg)
{
	pthread_setname_np(pthread_self(), "spinner");
	recurse(depth, 1);
	return arg;
}

int main(int argc, char **argv)
{
	const char *ready = ready_path(argc, argv);
	pthread_t a, b;

	if (argc > 2)
		depth = atoi(argv[2]);
	if (depth < 1 || pipe(pipefd))
		return 98;
	if (pthread_create(&a, NULL, blocker_main, NULL) ||
	    pthread_create(&b, NULL, spinner_main, NULL))
		return 98;
	ready_wait_started(&at_bottom, 2);
	ready_announce(ready);
	pthread_join(a, NULL);
	return 0;
}
