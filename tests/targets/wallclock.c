/* wallclock: three threads in three states, for wall-clock shares.
 *   burner  - burn_cpu(): always on CPU
 *   sleeper - sleep_here(): a nanosleep loop, always blocked
 *   main    - pthread_join() on the burner, always blocked
 * A wall-clock profiler gives each about a third of the samples. */
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

	atomic_fetch_add(&started, 1);
	for (;;) {
		x = x * 6364136223846793005UL + 1442695040888963407UL;
		sink = x;
	}
}

__attribute__((noinline)) static void sleep_here(void)
{
	struct timespec ts = { 0, 50 * 1000 * 1000 };

	atomic_fetch_add(&started, 1);
	for (;;)
		nanosleep(&ts, NULL);
}

static void *burner_main(void *arg)
{
	pthread_setname_np(pthread_self(), "burner");
	burn_cpu(); /* CALL_BURN */
	return arg;
}

static void *sleeper_main(void *arg)
{
	pthread_setname_np(pthread_self(), "sleeper");
	sleep_here(); /* CALL_SLEEP */
	return arg;
}

int main(int argc, char **argv)
{
	const char *ready = ready_path(argc, argv);
	pthread_t burner, sleeper;

	if (pthread_create(&burner, NULL, burner_main, NULL) ||
	    pthread_create(&sleeper, NULL, sleeper_main, NULL))
		return 98;
	ready_wait_started(&started, 2);
	ready_announce(ready);
	pthread_join(burner, NULL); /* CALL_JOIN */
	return 0;
}
