/* bench/work.c: the benchmark's target, a fixed amount of CPU work.
 *
 *   work --calibrate SECS          prints work units per second, one thread
 *   work T UNITS READY_FILE        T threads share UNITS units of work
 *                                  (UNITS = 0: run until killed)
 *
 * The T worker threads are created first and park on a barrier; the main
 * thread then writes its PID to READY_FILE (written as READY_FILE.tmp and
 * renamed, so a poller never sees half a file) and waits in sigwaitinfo()
 * for SIGUSR1, which is blocked in every thread.  The harness attaches its
 * profiler, then sends SIGUSR1.  The timed region runs from the signal to
 * the last worker's join; at exit the program prints one line:
 *
 *   wall_s 3.512345 start_real 1700000000.123456 end_real 1700000003.635801 cpu_s 3.498765
 *
 * (CLOCK_MONOTONIC for the wall time; the CLOCK_REALTIME bounds let the
 * harness count what a peer did inside the timed region; cpu_s is the CPU
 * time of all threads over it, CLOCK_PROCESS_CPUTIME_ID: on a shared
 * machine the wall time depends on how the scheduler shares the cores, the
 * CPU time much less.)
 *
 * Built -O2 -fomit-frame-pointer: the stacks are a few frames of recursion
 * over a hashing leaf, like optimized code met in the wild. */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define LEAF_ITERS 1000
#define DEPTH 5

static volatile uint64_t sink;
static pthread_barrier_t start_barrier;
static uint64_t units_per_thread, units_extra;
static int endless;

static double now(clockid_t c)
{
	struct timespec ts;
	clock_gettime(c, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static __attribute__((noinline, noclone)) uint64_t leaf(uint64_t x)
{
	for (int i = 0; i < LEAF_ITERS; i++) {
		x = x * 6364136223846793005ull + 1442695040888963407ull;
		x ^= x >> 29;
	}
	return x;
}

/* Not a tail call, and not an accumulator gcc could turn into a loop. */
static __attribute__((noinline, noclone)) uint64_t mid(uint64_t x, int depth)
{
	uint64_t r = depth == 0 ? leaf(x) : mid(x ^ (uint64_t)depth, depth - 1);
	__asm__ volatile("" : "+r"(r) : : "memory");
	return (r << 7 | r >> 57) ^ (uint64_t)depth;
}

static __attribute__((noinline, noclone)) uint64_t do_units(uint64_t seed, uint64_t n)
{
	uint64_t x = seed;
	for (uint64_t i = 0; i < n; i++)
		x = mid(x, DEPTH);
	return x;
}

static void *worker(void *arg)
{
	uintptr_t id = (uintptr_t)arg;
	pthread_barrier_wait(&start_barrier);
	uint64_t n = units_per_thread + (id < units_extra ? 1 : 0);
	uint64_t x = id + 1;
	if (endless)
		for (;;)
			x = do_units(x, 1000);
	sink += do_units(x, n);
	return NULL;
}

static void write_ready(const char *path)
{
	char tmp[4200];
	snprintf(tmp, sizeof(tmp), "%s.tmp", path);
	FILE *f = fopen(tmp, "w");
	if (!f) {
		perror(tmp);
		exit(99);
	}
	fprintf(f, "%ld\n", (long)getpid());
	if (fclose(f) != 0 || rename(tmp, path) != 0) {
		perror(path);
		exit(99);
	}
}

static int calibrate(double secs)
{
	uint64_t done = 0, chunk = 64;
	double t0 = now(CLOCK_MONOTONIC), t;
	sink += do_units(1, chunk);     /* warm up */
	t0 = now(CLOCK_MONOTONIC);
	do {
		sink += do_units(done + 1, chunk);
		done += chunk;
		t = now(CLOCK_MONOTONIC);
	} while (t - t0 < secs);
	printf("%.0f\n", (double)done / (t - t0));
	return 0;
}

int main(int argc, char **argv)
{
	if (argc == 3 && strcmp(argv[1], "--calibrate") == 0)
		return calibrate(atof(argv[2]));
	if (argc != 4) {
		fprintf(stderr, "usage: %s T UNITS READY_FILE | --calibrate SECS\n", argv[0]);
		return 2;
	}
	int nthreads = atoi(argv[1]);
	uint64_t units = strtoull(argv[2], NULL, 10);
	if (nthreads < 1 || nthreads > 4096) {
		fprintf(stderr, "work: bad thread count %s\n", argv[1]);
		return 2;
	}
	endless = units == 0;
	units_per_thread = units / (uint64_t)nthreads;
	units_extra = units % (uint64_t)nthreads;

	sigset_t set;
	sigemptyset(&set);
	sigaddset(&set, SIGUSR1);
	pthread_sigmask(SIG_BLOCK, &set, NULL);    /* inherited by the workers */

	pthread_barrier_init(&start_barrier, NULL, (unsigned)nthreads + 1);
	pthread_t *th = calloc((size_t)nthreads, sizeof(*th));
	for (int i = 0; i < nthreads; i++) {
		int e = pthread_create(&th[i], NULL, worker, (void *)(uintptr_t)i);
		if (e) {
			fprintf(stderr, "work: pthread_create: %s\n", strerror(e));
			return 1;
		}
	}
	write_ready(argv[3]);
	int sig;
	do
		sig = sigwaitinfo(&set, NULL);
	while (sig < 0 && errno == EINTR);
	if (sig != SIGUSR1) {
		perror("work: sigwaitinfo");
		return 1;
	}
	double r0 = now(CLOCK_REALTIME), t0 = now(CLOCK_MONOTONIC);
	double c0 = now(CLOCK_PROCESS_CPUTIME_ID);
	pthread_barrier_wait(&start_barrier);
	for (int i = 0; i < nthreads; i++)
		pthread_join(th[i], NULL);
	double t1 = now(CLOCK_MONOTONIC), r1 = now(CLOCK_REALTIME);
	double c1 = now(CLOCK_PROCESS_CPUTIME_ID);
	printf("wall_s %.6f start_real %.6f end_real %.6f cpu_s %.6f\n", t1 - t0, r0, r1, c1 - c0);
	fflush(stdout);
	return 0;
}
