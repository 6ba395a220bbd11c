/* renamer READY: one thread that renames itself mid-run.
 *   fa / phase-b - computes in phase_a() under the name "fa" until main
 *                  gets SIGUSR1, then names itself "phase-b" and computes
 *                  in phase_b() for good
 *   main         - sigwaitinfo() for SIGUSR1 (blocked in every thread)
 * READY is written once the worker is named and computing.  A profile that
 * labels samples with thread names must show phase_a under "fa" and
 * phase_b under "phase-b": the name the thread had when it was sampled. */
#define _GNU_SOURCE
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <sys/prctl.h>
#include "ready.h"

static atomic_int named, switched;
static volatile unsigned long sink;

__attribute__((noinline)) static void phase_a(void)
{
	unsigned long x = 1;

	while (!atomic_load(&switched)) {
		for (int i = 0; i < 1000; i++)
			x = x * 6364136223846793005UL + 1442695040888963407UL;
		sink = x;
	}
}

__attribute__((noinline)) static void phase_b(void)
{
	unsigned long x = 2;

	for (;;) {
		x = x * 6364136223846793005UL + 1442695040888963407UL;
		sink = x;
	}
}

static void *worker(void *arg)
{
	prctl(PR_SET_NAME, "fa");
	atomic_store(&named, 1);
	phase_a();
	prctl(PR_SET_NAME, "phase-b");
	phase_b();
	return arg;
}

int main(int argc, char **argv)
{
	const char *ready = ready_path(argc, argv);
	struct timespec ms = { 0, 1000 * 1000 };
	sigset_t set;
	pthread_t t;

	sigemptyset(&set);
	sigaddset(&set, SIGUSR1);
	pthread_sigmask(SIG_BLOCK, &set, NULL);
	if (pthread_create(&t, NULL, worker, NULL))
		return 98;
	while (!atomic_load(&named))
		nanosleep(&ms, NULL);
	ready_announce(ready);
	while (sigwaitinfo(&set, NULL) != SIGUSR1)
		;
	atomic_store(&switched, 1);
	for (;;)
		pause();
}
