/* deadlock READY: a stall to be answered by --dump.
 *
 *   lock-a   holds mutex A, then waits for B
 *   lock-b   holds mutex B, then waits for A      (a deadlock: A <-> B)
 *   reader   blocked in read() on a pipe nobody writes to
 *   poller   blocked in epoll_wait() on an empty set, counting EINTRs
 *   main     sigwaitinfo() for SIGUSR1, the report request
 *
 * READY is written once lock-a and lock-b are both blocked in futex()
 * (read from /proc/self/task/TID/syscall).  On each SIGUSR1 main writes
 * READY.report: "eintr N" (the poller's early returns) and the TIDs as
 * "lock-a TID", "lock-b TID", "reader TID", "poller TID". */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <sys/epoll.h>
#include <sys/syscall.h>
#include "ready.h"

static pthread_mutex_t a = PTHREAD_MUTEX_INITIALIZER, b = PTHREAD_MUTEX_INITIALIZER;
static pthread_barrier_t both_hold;
static atomic_int eintr_n, tids[4];
static int pipe_fd[2], ep_fd;

static void *lock_a(void *arg)
{
	tids[0] = gettid();
	pthread_setname_np(pthread_self(), "lock-a");
	pthread_mutex_lock(&a);
	pthread_barrier_wait(&both_hold);
	pthread_mutex_lock(&b);
	return NULL;
}

static void *lock_b(void *arg)
{
	tids[1] = gettid();
	pthread_setname_np(pthread_self(), "lock-b");
	pthread_mutex_lock(&b);
	pthread_barrier_wait(&both_hold);
	pthread_mutex_lock(&a);
	return NULL;
}

static void *reader(void *arg)
{
	char c;
	tids[2] = gettid();
	pthread_setname_np(pthread_self(), "reader");
	while (read(pipe_fd[0], &c, 1) != 0)
		;
	return NULL;
}

static void *poller(void *arg)
{
	struct epoll_event ev;
	tids[3] = gettid();
	pthread_setname_np(pthread_self(), "poller");
	for (;;)
		if (epoll_wait(ep_fd, &ev, 1, -1) < 0 && errno == EINTR)
			eintr_n++;
	return NULL;
}

/* Is thread TID of ours blocked in futex()? */
static int in_futex(int tid)
{
	char fn[64], line[64] = "";
	snprintf(fn, sizeof(fn), "/proc/self/task/%d/syscall", tid);
	FILE *f = fopen(fn, "r");
	if (f) {
		if (!fgets(line, sizeof(line), f))
			line[0] = '\0';
		fclose(f);
	}
	return atoi(line) == SYS_futex && strncmp(line, "running", 7) != 0;
}

static void report(const char *ready)
{
	char path[4096], tmp[4200];
	snprintf(path, sizeof(path), "%s.report", ready);
	snprintf(tmp, sizeof(tmp), "%s.tmp", path);
	FILE *f = fopen(tmp, "w");
	if (!f)
		exit(99);
	fprintf(f, "eintr %d\nlock-a %d\nlock-b %d\nreader %d\npoller %d\n", (int)eintr_n,
		(int)tids[0], (int)tids[1], (int)tids[2], (int)tids[3]);
	if (fclose(f) != 0 || rename(tmp, path) != 0)
		exit(99);
}

int main(int argc, char **argv)
{
	const char *ready = ready_path(argc, argv);
	pthread_t t[4];
	sigset_t usr1;
	sigemptyset(&usr1);
	sigaddset(&usr1, SIGUSR1);
	pthread_sigmask(SIG_BLOCK, &usr1, NULL);
	if (pipe(pipe_fd) < 0 || (ep_fd = epoll_create1(0)) < 0)
		return 99;
	pthread_barrier_init(&both_hold, NULL, 2);
	pthread_create(&t[0], NULL, lock_a, NULL);
	pthread_create(&t[1], NULL, lock_b, NULL);
	pthread_create(&t[2], NULL, reader, NULL);
	pthread_create(&t[3], NULL, poller, NULL);
	struct timespec ms = { 0, 1000000 };
	while (!tids[0] || !tids[1] || !tids[2] || !tids[3] || !in_futex(tids[0]) ||
	       !in_futex(tids[1]))
		nanosleep(&ms, NULL);
	ready_announce(ready);
	for (;;) {
		int sig;
		if (sigwait(&usr1, &sig) == 0)
			report(ready);
	}
}
