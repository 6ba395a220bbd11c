/* resting: threads that sit still in known places, for comparing our
 * stacks with a reference unwinder's (eu-stack), frame for frame.  Each
 * thread blocks in a system call of its own under a call chain of its own:
 *
 *   main     "resting"  pthread_join             (futex)
 *   reader   r_outer -> r_middle -> r_inner -> read() on a pipe nobody writes
 *   sleeper  s_outer -> s_inner -> nanosleep(1 hour)
 *   waiter   w_outer -> [w_wrap -> w_mid, inlined] -> w_block
 *                    -> pthread_cond_wait        (futex)
 *   poller   p_outer -> [p_inline, inlined] -> p_inner -> poll(nothing, forever)
 *   deep     d_outer -> descend x 100 -> d_bottom -> pause()
 *
 * READY is written once every thread is asleep in its call (flag set
 * just before the call, then its /proc/self/task/TID/stat says S), with
 * the TIDs: "PID\n" as always, then READY.tids: "NAME TID" lines. */
#define _GNU_SOURCE
#include <poll.h>
#include <pthread.h>
#include <stdatomic.h>
#include <time.h>
#include "ready.h"

#define DEPTH 100
#define NTHREADS 5

static int pipefd[2];
static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t cv = PTHREAD_COND_INITIALIZER;
static atomic_int tids[NTHREADS];
static const char *names[NTHREADS] = { "reader", "sleeper", "waiter", "poller", "deep" };
static volatile int sink;

static void about_to_block(int i)
{
	atomic_store(&tids[i], gettid());
}

/* --- reader --- */
__attribute__((noinline)) static int r_inner(void)
{
	char c;

	about_to_block(0);
	return (int)read(pipefd[0], &c, 1) + sink;
}

__attribute__((noinline)) static int r_middle(void)
{
	return r_inner() + sink;
}

__attribute__((noinline)) static int r_outer(void)
{
	return r_middle() + sink;
}

/* --- sleeper --- */
__attribute__((noinline)) static int s_inner(void)
{
	struct timespec ts = { 3600, 0 };

	about_to_block(1);
	return nanosleep(&ts, NULL) + sink;
}

__attribute__((noinline)) static int s_outer(void)
{
	return s_inner() + sink;
}

/* --- waiter: two inlined functions between w_outer and w_block --- */
__attribute__((noinline)) static int w_block(int k)
{
	pthread_mutex_lock(&mu);
	about_to_block(2);
	for (;;)
		pthread_cond_wait(&cv, &mu);
	return k + sink;
}

static inline __attribute__((always_inline)) int w_mid(int k)
{
	int r = w_block(k * 3 + sink);

	sink = r;
	return r + 1;
}

static inline __attribute__((always_inline)) int w_wrap(int k)
{
	int r = w_mid(k + sink);

	sink = r;
	return r + 2;
}

__attribute__((noinline)) static int w_outer(void)
{
	return w_wrap(sink + 7) + sink;
}

/* --- poller: one inlined function between p_outer and p_inner --- */
__attribute__((noinline)) static int p_inner(int k)
{
	about_to_block(3);
	return poll(NULL, 0, -1) + k + sink;
}

static inline __attribute__((always_inline)) int p_inline(int k)
{
	int r = p_inner(k + sink);

	sink = r;
	return r * 2;
}

__attribute__((noinline)) static int p_outer(void)
{
	return p_inline(sink + 3) + sink;
}

/* --- deep: 100 frames of descend --- */
__attribute__((noinline)) static int d_bottom(void)
{
	about_to_block(4);
	return pause() + sink;
}

__attribute__((noinline)) static int descend(int n)
{
	int r = n > 0 ? descend(n - 1) : d_bottom();

	return r + sink;        /* work after the call: no tail call */
}

__attribute__((noinline)) static int d_outer(void)
{
	return descend(DEPTH - 1) + sink;
}

static void *thread_main(void *arg)
{
	long i = (long)arg;

	pthread_setname_np(pthread_self(), names[i]);
	switch (i) {
	case 0: sink = r_outer(); break;
	case 1: sink = s_outer(); break;
	case 2: sink = w_outer(); break;
	case 3: sink = p_outer(); break;
	case 4: sink = d_outer(); break;
	}
	return NULL;
}

static int asleep(int tid)
{
	char path[64], buf[512], *p;
	FILE *f;
	int ok = 0;

	snprintf(path, sizeof(path), "/proc/self/task/%d/stat", tid);
	f = fopen(path, "r");
	if (!f)
		return 0;
	if (fgets(buf, sizeof(buf), f) && (p = strrchr(buf, ')')) && p[1] == ' ')
		ok = p[2] == 'S';
	fclose(f);
	return ok;
}

int main(int argc, char **argv)
{
	const char *ready = ready_path(argc, argv);
	pthread_t t[NTHREADS];
	char path[4200];
	FILE *f;

	if (pipe(pipefd) != 0)
		return 1;
	for (long i = 0; i < NTHREADS; i++)
		if (pthread_create(&t[i], NULL, thread_main, (void *)i) != 0)
			return 1;
	for (int i = 0; i < NTHREADS; i++) {
		struct timespec ts = { 0, 1000000 };

		while (!atomic_load(&tids[i]) || !asleep(atomic_load(&tids[i])))
			nanosleep(&ts, NULL);
	}
	snprintf(path, sizeof(path), "%s.tids", ready);
	f = fopen(path, "w");
	if (!f)
		return 1;
	fprintf(f, "resting %d\n", (int)getpid());
	for (int i = 0; i < NTHREADS; i++)
		fprintf(f, "%s %d\n", names[i], atomic_load(&tids[i]));
	fclose(f);
	ready_announce(ready);
	pthread_join(t[0], NULL);
	return 0;
}
