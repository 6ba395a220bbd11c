/* bench/pool.c: an idle pool, the shape of most servers' threads.
 *
 *   pool N BUSY READY_FILE     N threads idle in pthread_cond_wait (a
 *                              condition nobody signals) and BUSY threads
 *                              computing, until killed
 *
 * READY_FILE gets the PID (written as READY_FILE.tmp and renamed) once
 * every thread exists and every idle one has reached its wait, so the
 * profiler that attaches next finds the pool in its steady state.
 *
 * Built -O2 -fomit-frame-pointer, like bench/work.c. */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t never = PTHREAD_COND_INITIALIZER;
static atomic_int waiting;
static volatile uint64_t sink;

static __attribute__((noinline, noclone)) void idle_wait(void)
{
	pthread_mutex_lock(&lock);
	atomic_fetch_add(&waiting, 1);
	for (;;)
		pthread_cond_wait(&never, &lock);
}

static __attribute__((noinline, noclone)) void busy_loop(void)
{
	uint64_t x = 7;
	for (;;) {
		x = x * 6364136223846793005ull + 1442695040888963407ull;
		x ^= x >> 29;
		sink = x;
	}
}

static void *idle_main(void *arg)
{
	(void)arg;
	idle_wait();
	return NULL;
}

static void *busy_main(void *arg)
{
	(void)arg;
	busy_loop();
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

static void start(void *(*fn)(void *))
{
	pthread_t th;
	pthread_attr_t a;
	pthread_attr_init(&a);
	pthread_attr_setstacksize(&a, 256 * 1024);      /* 1,000 threads fit anywhere */
	int e = pthread_create(&th, &a, fn, NULL);
	if (e) {
		fprintf(stderr, "pool: pthread_create: %s\n", strerror(e));
		exit(1);
	}
	pthread_attr_destroy(&a);
}

int main(int argc, char **argv)
{
	if (argc != 4) {
		fprintf(stderr, "usage: %s N BUSY READY_FILE\n", argv[0]);
		return 2;
	}
	int n = atoi(argv[1]), busy = atoi(argv[2]);
	if (n < 0 || n > 10000 || busy < 0 || busy > 256) {
		fprintf(stderr, "pool: bad counts %s %s\n", argv[1], argv[2]);
		return 2;
	}
	for (int i = 0; i < n; i++)
		start(idle_main);
	/* Each idle thread holds the lock until its wait releases it: once
	 * all have counted themselves and we get the lock, all are waiting. */
	struct timespec ms = { 0, 1000 * 1000 };
	for (;;) {
		pthread_mutex_lock(&lock);
		int w = atomic_load(&waiting);
		pthread_mutex_unlock(&lock);
		if (w == n)
			break;
		nanosleep(&ms, NULL);
	}
	for (int i = 0; i < busy; i++)
		start(busy_main);
	write_ready(argv[3]);
	for (;;)
		pause();
}
