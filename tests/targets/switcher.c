/* switcher: one thread that alternates between two functions on a fixed
 * schedule, and measures how long it really spent in each.
 *
 *   switcher READY A_US B_US [spin|sleep]
 *
 *   worker ("switcher") phase_a() until the next deadline (A_US later),
 *            then phase_b() until the one after (B_US later), forever.
 *            Deadlines are absolute (CLOCK_MONOTONIC, each the previous
 *            one plus a phase): the schedule never drifts, whatever delays
 *            a phase.  spin (default): a phase computes until its
 *            deadline; sleep: it sleeps until it (clock_nanosleep).
 *   main     sigwaitinfo() for SIGUSR1, the report request
 *
 * On each SIGUSR1, main rewrites READY.report (tmp + rename):
 *   serial N
 *   a_ns   time spent in phase_a so far (the current phase counted up to now)
 *   b_ns   same for phase_b
 *   switches
 *   worker TID
 * READY itself is written (serial 0 report first) once the worker runs. */
#define _GNU_SOURCE
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdint.h>
#include <time.h>
#include "ready.h"

static long a_ns, b_ns;
static int spin = 1;

static atomic_long done_ns[2];          /* closed phases, per phase */
static atomic_long phase_start;         /* when the current phase began */
static atomic_int phase;                /* 0: phase_a, 1: phase_b */
static atomic_long switches;
static atomic_int worker_tid;
static volatile unsigned long sink;

static void until(long deadline)
{
	if (spin) {
		unsigned long x = sink;

		while (now_ns() < deadline) {
			for (int i = 0; i < 200; i++)
				x = x * 6364136223846793005UL + 1442695040888963407UL;
			sink = x;
		}
	} else {
		struct timespec ts = { deadline / 1000000000L, deadline % 1000000000L };

		while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL) != 0)
			;
	}
}

/* Ends the current phase at NOW and starts phase NEXT. */
static void switch_to(int next, long now)
{
	int cur = atomic_load(&phase);

	atomic_fetch_add(&done_ns[cur], now - atomic_load(&phase_start));
	atomic_store(&phase_start, now);
	atomic_store(&phase, next);
	atomic_fetch_add(&switches, 1);
}

__attribute__((noinline)) static void phase_a(long deadline)
{
	until(deadline);
	switch_to(1, now_ns());
}

__attribute__((noinline)) static void phase_b(long deadline)
{
	until(deadline);
	switch_to(0, now_ns());
}

static void *worker_main(void *arg)
{
	long deadline;

	pthread_setname_np(pthread_self(), "switcher");
	atomic_store(&worker_tid, gettid());
	deadline = now_ns();
	atomic_store(&phase_start, deadline);
	for (;;) {
		deadline += a_ns;
		phase_a(deadline);
		deadline += b_ns;
		phase_b(deadline);
	}
	return arg;
}

static void write_report(const char *ready, int serial)
{
	struct report_file r;
	long done[2], now, start;
	int cur;
	FILE *f;

	/* A consistent snapshot: retry if the worker switched meanwhile. */
	do {
		start = atomic_load(&phase_start);
		cur = atomic_load(&phase);
		done[0] = atomic_load(&done_ns[0]);
		done[1] = atomic_load(&done_ns[1]);
		now = now_ns();
	} while (start != atomic_load(&phase_start));
	done[cur] += now - start;

	report_init(&r, ready, ".report");
	f = report_open(&r);
	if (!f) {
		perror(r.tmp);
		exit(99);
	}
	fprintf(f, "serial %d\na_ns %ld\nb_ns %ld\nswitches %ld\nworker %d\n", serial,
		done[0], done[1], atomic_load(&switches), atomic_load(&worker_tid));
	if (report_commit(&r, f) != 0) {
		perror(r.path);
		exit(99);
	}
}

int main(int argc, char **argv)
{
	const char *ready = ready_path(argc, argv);
	pthread_t t;
	sigset_t set;
	int serial = 0;

	if (argc < 4) {
		fprintf(stderr, "usage: %s READY A_US B_US [spin|sleep]\n", argv[0]);
		return 2;
	}
	a_ns = atol(argv[2]) * 1000L;
	b_ns = atol(argv[3]) * 1000L;
	spin = argc < 5 || strcmp(argv[4], "sleep") != 0;
	if (a_ns <= 0 || b_ns <= 0) {
		fprintf(stderr, "%s: phases must be > 0 us\n", argv[0]);
		return 2;
	}
	sigemptyset(&set);
	sigaddset(&set, SIGUSR1);
	pthread_sigmask(SIG_BLOCK, &set, NULL);
	if (pthread_create(&t, NULL, worker_main, NULL) != 0)
		return 1;
	while (atomic_load(&switches) < 2)
		sched_yield();
	write_report(ready, serial);
	ready_announce(ready);
	for (;;) {
		if (sigwaitinfo(&set, NULL) == SIGUSR1)
			write_report(ready, ++serial);
	}
}
