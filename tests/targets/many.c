/* many READY [N]: N threads (default 1000) plus the main thread, all
 * blocked: the even ones in read() on a pipe nobody writes to
 * (wait_in_read), the odd ones in pthread_cond_wait (wait_on_cond), the
 * main thread in pthread_join.  READY is written once every thread has
 * started.  For a profiler facing a target with very many threads. */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdatomic.h>
#include <time.h>
#include "ready.h"

#define MAX_THREADS 4096

static atomic_int started;
static int pipefd[2];
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t never = PTHREAD_COND_INITIALIZER;

__attribute__((noinline)) static int wait_in_read(void)
{
	char c;

	atomic_fetch_add(&started, 1);
	for (;;)
		if (read(pipefd[0], &c, 1) == 1)
			return c;
}

__attribute__((noinline)) static int wait_on_cond(void)
{
	pthread_mutex_lock(&lock);
	atomic_fetch_add(&started, 1);
	for (;;)
		pthread_cond_wait(&never, &lock);
	return 0;
}

static void *waiter_main(void *arg)
{
	return (long)arg % 2 ? (void *)(long)wait_on_cond() : (void *)(long)wait_in_read();
}

int main(int argc, char **argv)
{
	const char *ready = ready_path(argc, argv);
	long n = argc > 2 ? atol(argv[2]) : 1000;
	static pthread_t threads[MAX_THREADS];
	pthread_attr_t attr;

	if (n < 1 || n > MAX_THREADS || pipe(pipefd))
		return 98;
	/* Small stacks: 1000 default 8 MiB stacks are 8 GiB of address space. */
	pthread_attr_init(&attr);
	pthread_attr_setstacksize(&attr, 128 * 1024);
	for (long i = 0; i < n; i++)
		if (pthread_create(&threads[i], &attr, waiter_main, (void *)i))
			return 98;
	ready_wait_started(&started, n);
	ready_announce(ready);
	pthread_join(threads[0], NULL);
	return 0;
}
