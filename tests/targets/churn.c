/* churn READY RATE CREATORS WORK_US [DL_RATE LIB...]: threads coming and
 * going, and libraries loaded and unloaded.
 *
 * CREATORS threads ("creator"), each creating a thread ("brief") and
 * joining it, RATE times a second (paced on absolute deadlines, so the rate
 * holds even when one is late; RATE 0: as fast as it can).  Each brief
 * thread spins WORK_US microseconds in brief_work() and ends.  The main
 * thread waits in pthread_join.  READY is written once every creator runs;
 * READY.count holds the number of threads created so far, rewritten on
 * each SIGUSR1 (taken by sigwaitinfo in a thread of its own, "counter");
 * READY.creators the creators' TIDs, written before READY.
 *
 * With DL_RATE and LIBs, a thread "loader" dlopen()s the next LIB (in
 * turn), calls its inner_A or inner_B (tests/targets/swaplib.c) for about
 * a millisecond, through via_first for the first LIB and via_second for
 * the others, and dlclose()s it when the next is due, DL_RATE times a
 * second: two libraries of one size are loaded at one address in turn,
 * each replacing the other there (for the profiler, a module replaced at
 * each scan of the maps).  READY.loads holds the number of loads so far,
 * rewritten with READY.count.
 *
 *   churn READY 100 1 500   100 short-lived threads a second
 *   churn READY 0 2 0       two creators, clone() after clone()
 *   churn READY 200 1 200 10 tests/bin/libswapA.so tests/bin/libswapB.so */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdint.h>
#include <time.h>
#include "ready.h"

static const char *ready;
static long rate, work_ns;
static atomic_long created, loads;
static atomic_int started, slots;
static pid_t creator_tids[64];
static volatile unsigned long sink;

__attribute__((noinline)) static void brief_work(void)
{
	long t0 = now_ns();
	unsigned long x = 9;

	do {
		x = x * 6364136223846793005UL + 1442695040888963407UL;
		sink = x;
	} while (now_ns() - t0 < work_ns);
}

static void *brief_main(void *arg)
{
	pthread_setname_np(pthread_self(), "brief");
	brief_work();
	return arg;
}

__attribute__((noinline)) static void create_and_join(void)
{
	pthread_t t;

	if (pthread_create(&t, NULL, brief_main, NULL) == 0) {
		atomic_fetch_add(&created, 1);
		pthread_join(t, NULL);
	}
}

static void next_deadline(struct timespec *d)
{
	d->tv_nsec += 1000000000L / rate;
	while (d->tv_nsec >= 1000000000L) {
		d->tv_nsec -= 1000000000L;
		d->tv_sec++;
	}
}

__attribute__((noinline)) static void creator_loop(void)
{
	struct timespec next;

	clock_gettime(CLOCK_MONOTONIC, &next);
	creator_tids[atomic_fetch_add(&slots, 1)] = gettid();
	atomic_fetch_add(&started, 1);
	for (;;) {
		create_and_join();
		if (rate <= 0)
			continue;
		next_deadline(&next);
		while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &next, NULL) != 0)
			;
	}
}

static void *creator_main(void *arg)
{
	pthread_setname_np(pthread_self(), "creator");
	creator_loop();
	return arg;
}

static long dl_rate;
static char **libs;
static int nlibs;

/* The first library of the list is called through via_first, the second
 * through via_second: a profile that named one library's code from the
 * other's table would show via_first;inner_B (tests/t_always.sh). */
__attribute__((noinline)) static void via_first(void (*fn)(uint64_t))
{
	fn(5000000);            /* a millisecond or two: samples land in it */
	atomic_fetch_add(&loads, 1);
}

__attribute__((noinline)) static void via_second(void (*fn)(uint64_t))
{
	fn(5000000);
	atomic_fetch_add(&loads, 1);
}

/* Loads library I and calls it; the caller unloads it. */
__attribute__((noinline)) static void *load_and_call(long i)
{
	void *h = dlopen(libs[i % nlibs], RTLD_NOW | RTLD_LOCAL);
	void (*fn)(uint64_t);

	if (!h)
		return NULL;
	fn = (void (*)(uint64_t))dlsym(h, "inner_A");
	if (!fn)
		fn = (void (*)(uint64_t))dlsym(h, "inner_B");
	if (!fn) {
		dlclose(h);
		return NULL;
	}
	if (i % nlibs == 0)
		via_first(fn);
	else
		via_second(fn);
	return h;
}

/* Each library stays loaded until the next is due, as a plugin would:
 * the address-space scans of the profiler find one or the other there. */
static void *loader_main(void *arg)
{
	struct timespec next;

	pthread_setname_np(pthread_self(), "loader");
	clock_gettime(CLOCK_MONOTONIC, &next);
	atomic_fetch_add(&started, 1);
	for (long i = 0;; i++) {
		void *h = load_and_call(i);

		if (!h)
			exit(97);
		next.tv_nsec += 1000000000L / dl_rate;
		while (next.tv_nsec >= 1000000000L) {
			next.tv_nsec -= 1000000000L;
			next.tv_sec++;
		}
		while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &next, NULL) != 0)
			;
		dlclose(h);
	}
	return arg;
}

static void write_count(void)
{
	struct report_file r;
	FILE *f;

	report_init(&r, ready, ".count");
	f = report_open(&r);
	if (!f)
		return;
	fprintf(f, "%ld\n", atomic_load(&created));
	report_commit(&r, f);
	if (!nlibs)
		return;
	report_init(&r, ready, ".loads");
	f = report_open(&r);
	if (!f)
		return;
	fprintf(f, "%ld\n", atomic_load(&loads));
	report_commit(&r, f);
}

static void write_creators(int n)
{
	char path[4200];
	FILE *f;

	snprintf(path, sizeof(path), "%s.creators", ready);
	f = fopen(path, "w");
	if (!f)
		return;
	for (int i = 0; i < n; i++)
		fprintf(f, "%d\n", (int)creator_tids[i]);
	fclose(f);
}

static void *counter_main(void *arg)
{
	sigset_t *set = arg;
	siginfo_t si;

	pthread_setname_np(pthread_self(), "counter");
	for (;;)
		if (sigwaitinfo(set, &si) == SIGUSR1)
			write_count();
	return NULL;
}

int main(int argc, char **argv)
{
	int ncreators = argc > 3 ? atoi(argv[3]) : 1;
	pthread_t creators[64], counter, loader;
	sigset_t set;

	ready = ready_path(argc, argv);
	rate = argc > 2 ? atol(argv[2]) : 100;
	work_ns = (argc > 4 ? atol(argv[4]) : 500) * 1000L;
	if (ncreators < 1 || ncreators > 64)
		return 2;
	if (argc > 6) {
		dl_rate = atol(argv[5]);
		libs = argv + 6;
		nlibs = argc - 6;
		if (dl_rate <= 0)
			return 2;
	}
	sigemptyset(&set);
	sigaddset(&set, SIGUSR1);
	pthread_sigmask(SIG_BLOCK, &set, NULL);
	if (pthread_create(&counter, NULL, counter_main, &set))
		return 98;
	for (int i = 0; i < ncreators; i++)
		if (pthread_create(&creators[i], NULL, creator_main, NULL))
			return 98;
	if (nlibs && pthread_create(&loader, NULL, loader_main, NULL))
		return 98;
	ready_wait_started(&started, ncreators + (nlibs ? 1 : 0));
	write_creators(ncreators);
	write_count();
	ready_announce(ready);
	pthread_join(creators[0], NULL);
	return 0;
}
