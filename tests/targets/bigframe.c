/* bigframe READY [MIB]: Ruby's threads' shape (Ruby up to 3.2 puts each
 * thread's VM stack, 1 MiB, on the thread's native stack).  Two threads,
 * each in with_big_frame(), a function whose frame holds MIB (default 2)
 * MiB of alloca'd buffer, touched only near its top (as Ruby's control
 * frames are: they change all the time) and its first page; under it, one
 * thread spins in spin_under() writing the top of the buffer, one blocks
 * in a read on a pipe nobody writes to.  Their callers' frames (the
 * thread's start) sit MIB MiB above SP: a stack copy of a fixed size does
 * not reach them.  The main thread waits in pthread_join. */
#define _GNU_SOURCE
#include <alloca.h>
#include <pthread.h>
#include <stdatomic.h>
#include <string.h>
#include "ready.h"

static size_t big = 2u << 20;
static atomic_int started;
static int pipefd[2];

__attribute__((noinline)) static int block_under(volatile unsigned char *top)
{
	char c;

	top[0] = 1;
	atomic_fetch_add(&started, 1);
	for (;;)
		if (read(pipefd[0], &c, 1) == 1)
			return c;
}

__attribute__((noinline)) static int spin_under(volatile unsigned char *top)
{
	unsigned long x = 7;

	atomic_fetch_add(&started, 1);
	for (;;) {
		x = x * 2862933555777941757UL + 3037000493UL;
		top[x % 512] = (unsigned char)x;        /* live data below the frame */
	}
	return (int)x;
}

__attribute__((noinline)) static int with_big_frame(int spin)
{
	volatile unsigned char *buf = alloca(big);
	volatile unsigned char *top = buf + big - 4096;
	buf[0] = 1;
	memset((void *)top, 0, 4096);
	int r = spin ? spin_under(top) : block_under(top);
	return r + buf[0];
}

static void *blocker_main(void *arg)
{
	pthread_setname_np(pthread_self(), "blocker");
	with_big_frame(0);
	return arg;
}

static void *spinner_main(void *arg)
{
	pthread_setname_np(pthread_self(), "spinner");
	with_big_frame(1);
	return arg;
}

int main(int argc, char **argv)
{
	const char *ready = ready_path(argc, argv);
	pthread_attr_t attr;
	pthread_t a, b;

	if (argc > 2)
		big = (size_t)atoi(argv[2]) << 20;
	if (big < 4096 * 2 || pipe(pipefd) || pthread_attr_init(&attr) ||
	    pthread_attr_setstacksize(&attr, big + (1u << 20)))
		return 98;
	if (pthread_create(&a, &attr, blocker_main, NULL) ||
	    pthread_create(&b, &attr, spinner_main, NULL))
		return 98;
	ready_wait_started(&started, 2);
	ready_announce(ready);
	pthread_join(a, NULL);
	pthread_join(b, NULL);
	return 0;
}
