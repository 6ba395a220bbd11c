/* latethread READY [churn]: the main thread waits for SIGUSR1 (sigwaitinfo,
 * the signal blocked everywhere).  On SIGUSR1 it starts a thread named
 * "latecomer" that burns CPU in late_work() and writes READY.late once it
 * runs.  With "churn", it also starts "churner", which creates and joins
 * short-lived threads ("brief", running brief_work() ~2 ms) without end:
 * threads coming and going while the profiler samples.  Sent while a
 * profiler is attached, this checks that new threads are followed. */
#define _GNU_SOURCE
#include <pthread.h>
#include <signal.h>
#include <errno.h>
#include <time.h>
#include "ready.h"

static const char *ready;
static volatile unsigned long sink;

__attribute__((noinline)) static void late_work(void)
{
	unsigned long x = 5;

	ready_write(ready, ".late");
	for (;;) {
		x = x * 6364136223846793005UL + 1442695040888963407UL;
		sink = x;
	}
}

static void *late_main(void *arg)
{
	pthread_setname_np(pthread_self(), "latecomer");
	late_work();
	return arg;
}

__attribute__((noinline)) static void brief_work(void)
{
	long t0 = now_ns();
	unsigned long x = 9;

	do {
		x = x * 6364136223846793005UL + 1442695040888963407UL;
		sink = x;
	} while (now_ns() - t0 < 2000000L);
}

static void *brief_main(void *arg)
{
	pthread_setname_np(pthread_self(), "brief");
	brief_work();
	return arg;
}

static void *churn_main(void *arg)
{
	pthread_t t;

	pthread_setname_np(pthread_self(), "churner");
	for (;;) {
		if (pthread_create(&t, NULL, brief_main, NULL) == 0)
			pthread_join(t, NULL);
	}
	return arg;
}

__attribute__((noinline)) static void wait_for_usr1(sigset_t *set)
{
	siginfo_t si;

	while (sigwaitinfo(set, &si) < 0 && errno == EINTR)
		;
}

int main(int argc, char **argv)
{
	int churn = argc > 2 && strcmp(argv[2], "churn") == 0;
	pthread_t late, churner;
	sigset_t set;

	ready = ready_path(argc, argv);
	sigemptyset(&set);
	sigaddset(&set, SIGUSR1);
	pthread_sigmask(SIG_BLOCK, &set, NULL);
	ready_announce(ready);
	wait_for_usr1(&set);
	if (pthread_create(&late, NULL, late_main, NULL))
		return 98;
	if (churn && pthread_create(&churner, NULL, churn_main, NULL))
		return 98;
	for (;;)
		wait_for_usr1(&set);
}
