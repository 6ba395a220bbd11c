/* cpuidle: two threads, one always on CPU and one always asleep, for the
 * wall vs CPU views of one run (issue 5).
 *   burner  - burn_cpu(): always on CPU
 *   main    - sleep_here(): a nanosleep loop, always blocked
 * In wall time each has half of the samples; in CPU time burn_cpu has
 * (nearly) all of it. */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdatomic.h>
#include <time.h>
#include "ready.h"

static atomic_int started;
static volatile unsigned long sink;

__attribute__((noinline)) static void burn_cpu(void)
{
	unsigned long x = 1;

	atomic_store(&started, 1);
	for (;;) {
		x = x * 6364136223846793005UL + 1442695040888963407UL;
		sink = x;
	}
}

__attribute__((noinline)) static void sleep_here(const char *ready)
{
	struct timespec ts = { 0, 50 * 1000 * 1000 };

	ready_announce(ready);
	for (;;)
		nanosleep(&ts, NULL);
}

static void *burner_main(void *arg)
{
	pthread_setname_np(pthread_self(), "burner");
	burn_cpu();
	return arg;
}

int main(int argc, char **argv)
{
	const char *ready = ready_path(argc, argv);
	pthread_t burner;

	if (pthread_create(&burner, NULL, burner_main, NULL))
		return 98;
	ready_wait_started(&started, 1);
	sleep_here(ready);
	return 0;
}
