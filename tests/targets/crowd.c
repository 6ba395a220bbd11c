/* crowd: more CPU-bound threads than CPUs (4 per CPU, at least 8), all in
 * burn_crowd(), and the main thread in pthread_join.
 *
 * Most of the burners wait for a CPU at any moment, and a thread waiting
 * for a CPU can only be stopped when the scheduler runs it again, ticks
 * later.  A wall-clock profile must still count every burner at every
 * tick: each thread gets rate x time samples, and the burners together
 * get all but the main thread's share. */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdatomic.h>
#include <time.h>
#include <unistd.h>
#include "ready.h"

#define MAX_BURNERS 256

static atomic_int started;
static volatile unsigned long sink;

__attribute__((noinline)) static void burn_crowd(void)
{
	unsigned long x = 1;

	atomic_fetch_add(&started, 1);
	for (;;) {
		x = x * 6364136223846793005UL + 1442695040888963407UL;
		sink = x;
	}
}

static void *burner_main(void *arg)
{
	burn_crowd();
	return arg;
}

int main(int argc, char **argv)
{
	const char *ready = ready_path(argc, argv);
	pthread_t burners[MAX_BURNERS];
	long n = 4 * sysconf(_SC_NPROCESSORS_ONLN);

	if (n < 8)
		n = 8;
	if (n > MAX_BURNERS)
		n = MAX_BURNERS;
	for (long i = 0; i < n; i++)
		if (pthread_create(&burners[i], NULL, burner_main, NULL))
			return 98;
	ready_wait_started(&started, n);
	ready_announce(ready);
	pthread_join(burners[0], NULL);
	return 0;
}
