/* stall READY: a service that had a stall and got over it, for the flight
 * recorder (tests/t_always.sh).
 *   worker - stall_compute(): computes until the file READY.over exists
 *            (the test makes it), then after_stall(): sleeps, for ever;
 *   main   - pthread_join().
 * Once the worker has seen READY.over it writes READY.quiet: from then on
 * stall_compute() is in the past. */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <time.h>
#include <unistd.h>
#include "ready.h"

static atomic_int started;
static volatile unsigned long sink;
static char over[4096];
static const char *ready;

__attribute__((noinline)) static void stall_compute(void)
{
	unsigned long x = 1;
	for (;;) {
		for (int i = 0; i < 200000; i++) {
			x = x * 6364136223846793005UL + 1442695040888963407UL;
			sink = x;
		}
		if (access(over, F_OK) == 0)
			return;
	}
}

__attribute__((noinline)) static void after_stall(void)
{
	struct timespec ts = { 0, 20 * 1000 * 1000 };
	for (;;)
		nanosleep(&ts, NULL);
}

static void *worker_main(void *arg)
{
	pthread_setname_np(pthread_self(), "worker");
	atomic_store(&started, 1);
	stall_compute();
	ready_write(ready, ".quiet");
	after_stall();
	return arg;
}

int main(int argc, char **argv)
{
	pthread_t worker;
	ready = ready_path(argc, argv);
	snprintf(over, sizeof(over), "%s.over", ready);
	if (pthread_create(&worker, NULL, worker_main, NULL))
		return 98;
	ready_wait_started(&started, 1);
	ready_announce(ready);
	pthread_join(worker, NULL);
	return 0;
}
