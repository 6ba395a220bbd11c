/* dutycycle: one thread alternating between computing and sleeping, in two
 * functions of its own, a few milliseconds each:
 *   worker - compute_phase(): spins 3 ms (on CPU)
 *            rest_phase():    sleeps 3 ms (off CPU)
 *   main   - pthread_join()
 * All of the worker's CPU time is spent in compute_phase (perf record
 * agrees); a CPU view must not give any of it to rest_phase, where the
 * thread is asleep whenever a sample finds it there. */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdatomic.h>
#include <time.h>
#include "ready.h"

#define PHASE_NS (3 * 1000 * 1000L)

static atomic_int started;
static volatile unsigned long sink;

__attribute__((noinline)) static void compute_phase(void)
{
	long end = now_ns() + PHASE_NS;
	unsigned long x = sink;

	while (now_ns() < end) {
		for (int i = 0; i < 1000; i++)
			x = x * 6364136223846793005UL + 1442695040888963407UL;
		sink = x;
	}
}

__attribute__((noinline)) static void rest_phase(void)
{
	struct timespec ts = { 0, PHASE_NS };

	nanosleep(&ts, NULL);
}

static void *worker_main(void *arg)
{
	pthread_setname_np(pthread_self(), "worker");
	atomic_store(&started, 1);
	for (;;) {
		compute_phase();
		rest_phase();
	}
	return arg;
}

int main(int argc, char **argv)
{
	const char *ready = ready_path(argc, argv);
	pthread_t worker;

	if (pthread_create(&worker, NULL, worker_main, NULL))
		return 98;
	ready_wait_started(&started, 1);
	ready_announce(ready);
	pthread_join(worker, NULL);
	return 0;
}
