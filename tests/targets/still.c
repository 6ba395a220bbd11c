/* still: threads that sit still in known places, each blocked in a system
 * call of its own under a call chain of its own, for tests/t_reference.sh
 * to compare our stacks with eu-stack's frame for frame.  [x] is inlined.
 *
 *   still    main -> m_wait -> sigsuspend            rt_sigsuspend
 *   reader   a_outer -> a_middle -> a_inner -> read  read (a pipe nobody writes)
 *   sleeper  b_outer -> b_middle -> b_inner
 *                -> clock_nanosleep (1 hour)         clock_nanosleep
 *   futex    c_outer -> [c_wrap] -> [c_mid] -> c_block
 *                -> syscall(SYS_futex)               futex (a word nobody wakes)
 *   poller   d_outer -> [d_inline] -> epoll_wait     epoll_wait (an empty set)
 *                (called from the inlined body: its return address is
 *                in d_outer, its frame is d_inline's)
 *   deep     e_outer -> (e_recurse -> [e_step]) x 100 -> e_bottom
 *                -> pause                            pause
 *
 * Every function of a chain is noinline and noclone (no "name.constprop.0"
 * or "name.part.0" clones), does work after its call (no tail call), and
 * every inlined one does work of its own on a volatile, so it keeps its
 * DW_TAG_inlined_subroutine.
 *
 * READY is written once every thread is in its call: it sets its TID just
 * before, then main waits until /proc/self/task/TID/stat says S and
 * /proc/self/task/TID/syscall names that call (setting a flag is "about to
 * call", not "in the call").  READY.tids then lists "NAME TID NR", main's
 * line first; main itself blocks only after writing READY, so the test
 * waits for NR in main's /proc/PID/syscall. */
#define _GNU_SOURCE
#include <linux/futex.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <sys/epoll.h>
#include <sys/syscall.h>
#include <time.h>
#include "ready.h"

#define DEPTH 100
#define NTHREADS 5
#define CHAIN __attribute__((noinline, noclone))
#define INLINE static inline __attribute__((always_inline))

static int pipefd[2];
static int epfd;
static atomic_int futex_word;
static atomic_int tids[NTHREADS];
static const char *names[NTHREADS] = { "reader", "sleeper", "futex", "poller", "deep" };
static const long nrs[NTHREADS] = { SYS_read, SYS_clock_nanosleep, SYS_futex, SYS_epoll_wait, SYS_pause };
static volatile int sink;

static void about_to_block(int i)
{
	atomic_store(&tids[i], (int)gettid());
}

/* --- reader --- */
CHAIN int a_inner(void)
{
	char c;

	about_to_block(0);
	return (int)read(pipefd[0], &c, 1) + sink;
}

CHAIN int a_middle(void)
{
	return a_inner() + sink;
}

CHAIN int a_outer(void)
{
	return a_middle() + sink;
}

/* --- sleeper --- */
CHAIN int b_inner(void)
{
	struct timespec ts = { 3600, 0 };

	about_to_block(1);
	/* Restarted after a ptrace stop; the loop only keeps the place if
	 * something ever returns early. */
	while (clock_nanosleep(CLOCK_MONOTONIC, 0, &ts, NULL) != 0)
		sink++;
	return sink;
}

CHAIN int b_middle(void)
{
	return b_inner() * 3 + sink;
}

CHAIN int b_outer(void)
{
	return b_middle() + sink;
}

/* --- futex: two inlined functions between c_outer and c_block --- */
CHAIN int c_block(int k)
{
	about_to_block(2);
	for (;;)        /* FUTEX_WAIT returns EINTR after a ptrace stop */
		sink += (int)syscall(SYS_futex, &futex_word, FUTEX_WAIT_PRIVATE, 0, NULL, NULL, 0);
	return k;
}

INLINE int c_mid(int k)
{
	int r = c_block(k * 3 + sink);

	sink = r;
	return r + 1;
}

INLINE int c_wrap(int k)
{
	int r = c_mid(k + sink);

	sink = r;
	return r + 2;
}

CHAIN int c_outer(void)
{
	return c_wrap(sink + 7) + sink;
}

/* --- poller: epoll_wait called from an inlined body --- */
INLINE int d_inline(int k)
{
	struct epoll_event ev;

	about_to_block(3);
	for (;;)        /* epoll_wait returns EINTR after a ptrace stop */
		sink += epoll_wait(epfd, &ev, 1, -1) + k;
	return k;
}

CHAIN int d_outer(void)
{
	return d_inline(sink + 5) + sink;
}

/* --- deep: 100 frames of e_recurse, each through an inlined e_step --- */
CHAIN int e_bottom(void)
{
	about_to_block(4);
	for (;;)
		sink += pause();
	return sink;
}

CHAIN int e_recurse(int n);

INLINE int e_step(int n)
{
	int r = n > 0 ? e_recurse(n - 1) : e_bottom();

	sink = r;
	return r + 1;
}

CHAIN int e_recurse(int n)
{
	return e_step(n) + sink;        /* work after the call: no tail call */
}

CHAIN int e_outer(void)
{
	return e_recurse(DEPTH - 1) + sink;
}

static void *thread_main(void *arg)
{
	long i = (long)arg;

	pthread_setname_np(pthread_self(), names[i]);
	switch (i) {
	case 0: sink = a_outer(); break;
	case 1: sink = b_outer(); break;
	case 2: sink = c_outer(); break;
	case 3: sink = d_outer(); break;
	case 4: sink = e_outer(); break;
	}
	return NULL;
}

/* Reads /proc/self/task/TID/FILE into BUF; returns its length or -1. */
static int read_task(int tid, const char *file, char *buf, size_t size)
{
	char path[64];
	size_t n;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/self/task/%d/%s", tid, file);
	f = fopen(path, "r");
	if (!f)
		return -1;
	n = fread(buf, 1, size - 1, f);
	fclose(f);
	buf[n] = '\0';
	return (int)n;
}

/* TID is asleep (S) in system call NR. */
static int in_syscall(int tid, long nr)
{
	char buf[512], *p;

	if (read_task(tid, "stat", buf, sizeof(buf)) <= 0 || !(p = strrchr(buf, ')')) ||
	    p[1] != ' ' || p[2] != 'S')
		return 0;
	return read_task(tid, "syscall", buf, sizeof(buf)) > 0 && strtol(buf, NULL, 10) == nr;
}

CHAIN int m_wait(void)
{
	sigset_t none;

	sigemptyset(&none);
	for (;;)
		sink += sigsuspend(&none);
	return sink;
}

int main(int argc, char **argv)
{
	const char *ready = ready_path(argc, argv);
	struct timespec ms = { 0, 1000000 };
	pthread_t t;
	char path[4200];
	FILE *f;

	epfd = epoll_create1(0);
	if (pipe(pipefd) != 0 || epfd < 0)
		return 1;
	for (long i = 0; i < NTHREADS; i++)
		if (pthread_create(&t, NULL, thread_main, (void *)i) != 0)
			return 1;
	for (int i = 0; i < NTHREADS; i++)
		while (!atomic_load(&tids[i]) || !in_syscall(atomic_load(&tids[i]), nrs[i]))
			nanosleep(&ms, NULL);
	snprintf(path, sizeof(path), "%s.tids", ready);
	f = fopen(path, "w");
	if (!f)
		return 1;
	fprintf(f, "still %d %ld\n", (int)getpid(), (long)SYS_rt_sigsuspend);
	for (int i = 0; i < NTHREADS; i++)
		fprintf(f, "%s %d %ld\n", names[i], atomic_load(&tids[i]), nrs[i]);
	if (fclose(f) != 0)
		return 1;
	ready_announce(ready);
	return m_wait() + sink;         /* not a tail call: main stays a frame */
}
