#define _GNU_SOURCE
/* demo: a small "service" to point cprof-attach at.
 *
 * Threads, each named, spend their time in different ways:
 *   hasher   burns CPU (hash_block)
 *   locker-1 and locker-2 take turns on one mutex, each holding it while it
 *            works: half of their wall time is waiting in the lock
 *   reader   blocks in read() on a pipe that a ticker feeds now and then
 *   sleeper  sleeps (nanosleep), waking for a little work
 * Usage: demo [READY_FILE]; writes its PID to READY_FILE once every thread
 * runs, then runs until killed. */
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static int pipefd[2];
static volatile uint64_t sink;

__attribute__((noinline)) static uint64_t hash_block(uint64_t seed)
{
	uint64_t h = seed;
	for (int i = 0; i < 200000; i++)
		h = (h ^ (uint64_t)i) * 0x100000001b3ull;
	return h;
}

__attribute__((noinline)) static void *hasher(void *arg)
{
	for (uint64_t i = 0;; i++)
		sink += hash_block(i);
	return arg;
}

__attribute__((noinline)) static void do_locked_work(void)
{
	pthread_mutex_lock(&lock);
	sink += hash_block(sink);
	pthread_mutex_unlock(&lock);
}

static void *locker(void *arg)
{
	for (;;)
		do_locked_work();
	return arg;
}

__attribute__((noinline)) static void wait_for_request(void)
{
	char buf[64];
	if (read(pipefd[0], buf, sizeof(buf)) <= 0)
		exit(1);
}

static void *reader(void *arg)
{
	for (;;)
		wait_for_request();
	return arg;
}

__attribute__((noinline)) static void nap(long ms)
{
	struct timespec ts = { 0, ms * 1000000L };
	nanosleep(&ts, NULL);
}

static void *sleeper(void *arg)
{
	for (;;) {
		nap(100);
		sink += hash_block(1);
		if (write(pipefd[1], "x", 1) != 1)
			exit(1);
	}
	return arg;
}

static void start(const char *name, void *(*fn)(void *))
{
	pthread_t t;
	if (pthread_create(&t, NULL, fn, NULL) != 0)
		exit(1);
	pthread_setname_np(t, name);
}

int main(int argc, char **argv)
{
	if (pipe(pipefd) < 0)
		return 1;
	start("hasher", hasher);
	start("locker-1", locker);
	start("locker-2", locker);
	start("reader", reader);
	start("sleeper", sleeper);
	if (argc > 1) {
		char tmp[4096];
		snprintf(tmp, sizeof(tmp), "%s.tmp", argv[1]);
		FILE *f = fopen(tmp, "w");
		if (!f || fprintf(f, "%d\n", (int)getpid()) < 0 || fclose(f) != 0 ||
		    rename(tmp, argv[1]) != 0)
			return 1;
	}
	for (;;)
		pause();
}
