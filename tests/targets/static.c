/* static READY: built with -static, linked with glibc (tests/bin/static:
 * .eh_frame without .eh_frame_hdr) and, when musl-gcc is installed, with
 * musl (tests/bin/static-musl: musl's own code has no unwind info and no
 * frame pointers).  A thread "st-spin" spins under st_outer -> st_middle ->
 * st_inner; the main thread spins under main -> st_main_loop (with musl a
 * blocked thread could not be unwound past libc: every thread computes). */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdatomic.h>
#include "ready.h"

static volatile unsigned long sink;
static atomic_int started;

__attribute__((noinline)) void st_inner(unsigned long x)
{
	for (;;) {
		x = x * 6364136223846793005UL + 1442695040888963407UL;
		sink = x;
	}
}

__attribute__((noinline)) void st_middle(unsigned long x)
{
	st_inner(x + 1);
	sink = x;
}

__attribute__((noinline)) void st_outer(unsigned long x)
{
	st_middle(x * 3);
	sink = x;
}

static void *st_thread(void *arg)
{
	atomic_store(&started, 1);
	st_outer((unsigned long)arg);
	return NULL;
}

__attribute__((noinline)) void st_main_loop(const char *ready)
{
	unsigned long x = (unsigned long)ready;
	int n = 0;

	for (;;) {
		x = x * 2862933555777941757UL + 3037000493UL;
		sink = x;
		if (n < 1000000 && atomic_load(&started) && ++n == 1000000)
			ready_announce(ready);      /* once, both threads spinning */
	}
}

int main(int argc, char **argv)
{
	const char *ready = ready_path(argc, argv);
	pthread_t th;

	if (pthread_create(&th, NULL, st_thread, (void *)ready))
		return 98;
	st_main_loop(ready);
	return 0;
}
