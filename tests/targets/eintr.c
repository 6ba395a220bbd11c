/* eintr READY [EPOLL]: one thread blocked for good in each of the calls
 * that a ptrace stop can disturb, each counting every return it sees.
 * EPOLL (default 1) threads wait in epoll_wait, all named w-epoll and
 * counted together (many blocked threads: tests/t_limits.sh).
 *
 *   w-epoll     epoll_wait(-1) on an empty epoll set
 *   w-semop     semop() decrementing a SysV semaphore that stays at 0
 *   w-sigtimed  sigtimedwait() for SIGUSR2 (never sent), 1000 s timeout
 *   w-poll      poll(-1) on a pipe nobody writes to
 *   w-read      read() on a pipe nobody writes to
 *   w-accept    accept() on a listening TCP socket on 127.0.0.1
 *   w-recv      recv() on a UDP socket on 127.0.0.1, SO_RCVTIMEO 1000 s
 *   w-recvmsg   recvmsg() on another such socket
 *   w-nanosleep nanosleep(1000 s)
 *   w-condwait  pthread_cond_wait() on a condition nobody signals
 *   w-semwait   sem_wait() on a POSIX semaphore that stays at 0
 *   w-burn      burns CPU (a running thread: the profiler stops this one)
 *   main        sigwaitinfo() for SIGUSR1, the report request
 *
 * None of these calls may return while the process is left alone: every
 * return is counted, as EINTR or as "other" (any other early return).
 * Signal(7) lists epoll_wait, semop, sigtimedwait and SO_RCVTIMEO sockets as
 * failing with EINTR after a stop even without a handler; the others restart
 * in the kernel, and are here so that a change there is caught too.
 *
 * READY is written once every thread is about to block.  On each SIGUSR1
 * main rewrites READY.report (tmp + rename):
 *     serial N
 *     NAME eintr=N other=N       (one line per blocking thread, main last)
 * SIGUSR1 and SIGUSR2 are blocked in every thread, so only sigwaitinfo and
 * sigtimedwait take them. */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <semaphore.h>
#include <signal.h>
#include <stdatomic.h>
#include <sys/epoll.h>
#include <sys/ipc.h>
#include <sys/sem.h>
#include <sys/socket.h>
#include <time.h>
#include "ready.h"

enum { W_EPOLL, W_SEMOP, W_SIGTIMED, W_POLL, W_READ, W_ACCEPT, W_RECV, W_NANOSLEEP,
       W_CONDWAIT, W_SEMWAIT, W_RECVMSG, W_MAIN, NW };

static const char *const names[NW] = {
	"w-epoll", "w-semop", "w-sigtimed", "w-poll", "w-read", "w-accept", "w-recv",
	"w-nanosleep", "w-condwait", "w-semwait", "w-recvmsg", "main",
};

static atomic_int eintr_n[NW], other_n[NW], started;
static volatile unsigned long sink;

/* Everything a blocking thread needs, set up by main before it starts. */
static int ep_fd, sem_id, poll_pipe[2], read_pipe[2], listen_fd, udp_fd, udp2_fd;
static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t cv = PTHREAD_COND_INITIALIZER;
static sem_t psem;

static void count_return(int w, int ret)
{
	if (ret < 0 && errno == EINTR)
		atomic_fetch_add(&eintr_n[w], 1);
	else
		atomic_fetch_add(&other_n[w], 1);
}

static void about_to_block(void)
{
	atomic_fetch_add(&started, 1);
}

__attribute__((noinline)) static void block_epoll(void)
{
	struct epoll_event ev;

	about_to_block();
	for (;;)
		count_return(W_EPOLL, epoll_wait(ep_fd, &ev, 1, -1));
}

__attribute__((noinline)) static void block_semop(void)
{
	struct sembuf op = { 0, -1, 0 };

	about_to_block();
	for (;;)
		count_return(W_SEMOP, semop(sem_id, &op, 1));
}

__attribute__((noinline)) static void block_sigtimed(void)
{
	struct timespec ts = { 1000, 0 };
	sigset_t set;

	sigemptyset(&set);
	sigaddset(&set, SIGUSR2);
	about_to_block();
	for (;;)
		count_return(W_SIGTIMED, sigtimedwait(&set, NULL, &ts));
}

__attribute__((noinline)) static void block_poll(void)
{
	struct pollfd p = { poll_pipe[0], POLLIN, 0 };

	about_to_block();
	for (;;)
		count_return(W_POLL, poll(&p, 1, -1));
}

__attribute__((noinline)) static void block_read(void)
{
	char c;

	about_to_block();
	for (;;)
		count_return(W_READ, (int)read(read_pipe[0], &c, 1));
}

__attribute__((noinline)) static void block_accept(void)
{
	about_to_block();
	for (;;)
		count_return(W_ACCEPT, accept(listen_fd, NULL, NULL));
}

__attribute__((noinline)) static void block_recv(void)
{
	char buf[64];

	about_to_block();
	for (;;)
		count_return(W_RECV, (int)recv(udp_fd, buf, sizeof(buf), 0));
}

__attribute__((noinline)) static void block_recvmsg(void)
{
	char buf[64];
	struct iovec iov = { buf, sizeof(buf) };
	struct msghdr m = { .msg_iov = &iov, .msg_iovlen = 1 };

	about_to_block();
	for (;;)
		count_return(W_RECVMSG, (int)recvmsg(udp2_fd, &m, 0));
}

__attribute__((noinline)) static void block_nanosleep(void)
{
	struct timespec ts = { 1000, 0 };

	about_to_block();
	for (;;)
		count_return(W_NANOSLEEP, nanosleep(&ts, NULL));
}

__attribute__((noinline)) static void block_condwait(void)
{
	pthread_mutex_lock(&mu);
	about_to_block();
	for (;;)
		count_return(W_CONDWAIT, pthread_cond_wait(&cv, &mu) ? -1 : 0);
}

__attribute__((noinline)) static void block_semwait(void)
{
	about_to_block();
	for (;;)
		count_return(W_SEMWAIT, sem_wait(&psem));
}

__attribute__((noinline)) static void burn_loop(void)
{
	unsigned long x = 7;

	about_to_block();
	for (;;) {
		x = x * 6364136223846793005UL + 1442695040888963407UL;
		sink = x;
	}
}

struct worker {
	const char *name;
	void (*fn)(void);
};

static const struct worker workers[] = {
	{ "w-epoll", block_epoll },         { "w-semop", block_semop },
	{ "w-sigtimed", block_sigtimed },   { "w-poll", block_poll },
	{ "w-read", block_read },           { "w-accept", block_accept },
	{ "w-recv", block_recv },           { "w-nanosleep", block_nanosleep },
	{ "w-condwait", block_condwait },   { "w-semwait", block_semwait },
	{ "w-recvmsg", block_recvmsg },     { "w-burn", burn_loop },
};
#define NWORKERS (int)(sizeof(workers) / sizeof(workers[0]))

static void *worker_main(void *arg)
{
	const struct worker *w = arg;

	pthread_setname_np(pthread_self(), w->name);
	w->fn();
	return NULL;
}


__attribute__((noreturn)) static void die(const char *what)
{
	perror(what);
	exit(98);
}

/* A SysV semaphore outlives its process: a small child removes it when we
 * are gone, however we die (its read of the pipe then returns 0). */
static void remove_sem_at_exit(void)
{
	int p[2];
	char c;

	if (pipe(p))
		die("pipe");
	switch (fork()) {
	case -1:
		die("fork");
	case 0:
		close(p[1]);
		while (read(p[0], &c, 1) < 0 && errno == EINTR)
			;
		semctl(sem_id, 0, IPC_RMID);
		_exit(0);
	}
	close(p[0]);            /* p[1] stays open, here only, until we exit */
}

/* The epoll waiters beyond the first, on small stacks. */
static void start_more_epoll(int n)
{
	pthread_attr_t a;
	pthread_t t;

	pthread_attr_init(&a);
	pthread_attr_setstacksize(&a, 128 * 1024);
	for (int i = 0; i < n; i++)
		if (pthread_create(&t, &a, worker_main, (void *)&workers[0]))
			die("pthread_create");
	pthread_attr_destroy(&a);
}

static void setup(void)
{
	struct sockaddr_in a = { .sin_family = AF_INET };
	struct timeval tv = { 1000, 0 };

	a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	if ((ep_fd = epoll_create1(0)) < 0)
		die("epoll_create1");
	if ((sem_id = semget(IPC_PRIVATE, 1, IPC_CREAT | 0600)) < 0)
		die("semget");
	if (pipe(poll_pipe) || pipe(read_pipe))
		die("pipe");
	if ((listen_fd = socket(AF_INET, SOCK_STREAM, 0)) < 0 ||
	    bind(listen_fd, (struct sockaddr *)&a, sizeof(a)) || listen(listen_fd, 4))
		die("listen");
	if ((udp_fd = socket(AF_INET, SOCK_DGRAM, 0)) < 0 ||
	    bind(udp_fd, (struct sockaddr *)&a, sizeof(a)) ||
	    setsockopt(udp_fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv)))
		die("udp socket");
	if ((udp2_fd = socket(AF_INET, SOCK_DGRAM, 0)) < 0 ||
	    bind(udp2_fd, (struct sockaddr *)&a, sizeof(a)) ||
	    setsockopt(udp2_fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv)))
		die("udp socket");
	if (sem_init(&psem, 0, 0))
		die("sem_init");
	remove_sem_at_exit();
}

static void write_report(const char *ready, int serial)
{
	struct report_file r;
	FILE *f;

	report_init(&r, ready, ".report");
	f = report_open(&r);
	if (!f)
		return;
	fprintf(f, "serial %d\n", serial);
	for (int i = 0; i < NW; i++)
		fprintf(f, "%s eintr=%d other=%d\n", names[i], atomic_load(&eintr_n[i]),
			atomic_load(&other_n[i]));
	report_commit(&r, f);
}

int main(int argc, char **argv)
{
	const char *ready = ready_path(argc, argv);
	pthread_t th[NWORKERS];
	sigset_t set;
	int serial = 0;
	int epolls = argc > 2 ? atoi(argv[2]) : 1;

	sigemptyset(&set);
	sigaddset(&set, SIGUSR1);
	sigaddset(&set, SIGUSR2);
	pthread_sigmask(SIG_BLOCK, &set, NULL);
	setup();
	for (int i = 0; i < NWORKERS; i++)
		if (pthread_create(&th[i], NULL, worker_main, (void *)&workers[i]))
			die("pthread_create");
	if (epolls > 1)
		start_more_epoll(epolls - 1);
	ready_wait_started(&started, NWORKERS + (epolls > 1 ? epolls - 1 : 0));
	write_report(ready, serial);
	ready_announce(ready);
	sigdelset(&set, SIGUSR2);
	for (;;) {
		siginfo_t si;
		int r = sigwaitinfo(&set, &si);

		if (r == SIGUSR1)
			write_report(ready, ++serial);
		else
			count_return(W_MAIN, r);
	}
}
