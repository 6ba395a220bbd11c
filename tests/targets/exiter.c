/* exiter READY SECONDS STATUS: a main thread burning CPU in exiter_work()
 * and an idle thread ("idler"); after SECONDS (decimal) of wall time the
 * process exits with STATUS.  For "the target exits while profiled" and for
 * launch mode (cprof-attach -- tests/bin/exiter READY 1 3 exits with 3). */
#define _GNU_SOURCE
#include <pthread.h>
#include <time.h>
#include "ready.h"

static volatile unsigned long sink;

__attribute__((noinline)) static void idle_here(void)
{
	for (;;)
		pause();
}

static void *idler_main(void *arg)
{
	pthread_setname_np(pthread_self(), "idler");
	idle_here();
	return arg;
}

__attribute__((noinline)) static void exiter_work(long end_ns)
{
	unsigned long x = 3;
	unsigned i;

	while (now_ns() < end_ns) {
		for (i = 0; i < 100000; i++)
			x = x * 6364136223846793005UL + 1442695040888963407UL;
		sink = x;
	}
}

int main(int argc, char **argv)
{
	const char *ready = ready_path(argc, argv);
	double secs = argc > 2 ? atof(argv[2]) : 1.0;
	int status = argc > 3 ? atoi(argv[3]) : 0;
	long start = now_ns();
	pthread_t idler;

	if (pthread_create(&idler, NULL, idler_main, NULL))
		return 98;
	ready_announce(ready);
	exiter_work(start + (long)(secs * 1e9));
	exit(status);
}
