/* mainexit READY: the main thread starts a worker (spinning in
 * worker_spin) and ends with pthread_exit: the process runs on, while its
 * leader shows as a zombie in /proc/PID/stat.  READY is written by the
 * worker once the main thread is gone. */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdatomic.h>
#include <time.h>
#include "ready.h"

static const char *ready;
static pthread_t main_thread;
static volatile unsigned long sink;

__attribute__((noinline)) static void worker_spin(void)
{
	unsigned long x = 3;

	for (;;) {
		x = x * 6364136223846793005UL + 1442695040888963407UL;
		sink = x;
	}
}

static void *worker_main(void *arg)
{
	/* pthread_join returns once the main thread has exited. */
	pthread_join(main_thread, NULL);
	ready_announce(ready);
	worker_spin();
	return arg;
}

int main(int argc, char **argv)
{
	pthread_t worker;

	ready = ready_path(argc, argv);
	main_thread = pthread_self();
	if (pthread_create(&worker, NULL, worker_main, NULL))
		return 98;
	pthread_exit(NULL);
}
