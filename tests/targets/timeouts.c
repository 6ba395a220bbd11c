/* timeouts READY [SPIN [IDLE]]: a small server under its own client loop, every wait in
 * it a call with a timeout, the kind a ptrace stop makes return EINTR
 * (signal(7)) and a server may treat as impossible (varnishd asserts).
 *
 *   s-recv      a TCP server on 127.0.0.1: recv() with SO_RCVTIMEO (5 s),
 *               then send() with SO_SNDTIMEO the reply
 *   c-loop      the client: send() a request, recv() the reply (SO_RCVTIMEO
 *               5 s), post the semaphore, write the eventfd, count to SPIN
 *               (argv[2], default 1000), again, for ever: each thread is
 *               found now running, now blocked, as a loaded server's are
 *   w-epoll     epoll_wait() with a 1 s timeout on the eventfd
 *   w-semtimed  sem_timedwait() with a 1 s timeout on the semaphore
 *   idle        IDLE threads (default 0) in sigsuspend() for good: a pool
 *               the sampler visits too at each tick
 *   main        sigwaitinfo() for SIGUSR1, the report request
 *
 * Each thread counts its calls' returns: EINTR, and "other" early returns
 * (a timeout that cannot happen while the client loop runs, a short
 * read).  READY is written once the loop has made 100 rounds; on each
 * SIGUSR1 main rewrites READY.report (tmp + rename):
 *     serial N
 *     NAME eintr=N other=N rounds=N     (one line per thread)
 * SIGUSR1 is blocked in every thread, so only sigwaitinfo takes it.
 * tests/bin/libtimeouts.so is the same, called as timeouts_main(). */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <pthread.h>
#include <semaphore.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdint.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include "ready.h"

enum { T_SERVER, T_CLIENT, T_EPOLL, T_SEM, NT };
static const char *const names[NT] = { "s-recv", "c-loop", "w-epoll", "w-semtimed" };
static atomic_int eintr_n[NT], other_n[NT], rounds[NT];

static int srv_fd, cli_fd, ev_fd, ep_fd;
static sem_t sem;
static volatile unsigned long sink;
static int spin;                /* argv[2]: a little work per round */

/* An idle thread (argv[3] of them): blocked for good, as a server's pool. */
static void *idler(void *arg)
{
	sigset_t none;
	sigemptyset(&none);
	prctl(PR_SET_NAME, "idle");
	for (;;)
		sigsuspend(&none);
	return arg;
}

static void set_timeouts(int fd, int secs)
{
	struct timeval tv = { secs, 0 };
	int one = 1;
	setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv));
	setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
}

/* One return of a call of thread T: R < 0 with errno EINTR, or early. */
static void count(int t, int eintr)
{
	if (eintr)
		atomic_fetch_add(&eintr_n[t], 1);
	else
		atomic_fetch_add(&other_n[t], 1);
}

/* Exactly LEN bytes through FD (recv or send), every EINTR counted. */
static void xfer(int t, int fd, char *buf, size_t len, int out)
{
	size_t done = 0;
	while (done < len) {
		ssize_t n = out ? send(fd, buf + done, len - done, MSG_NOSIGNAL) :
				  recv(fd, buf + done, len - done, 0);
		if (n > 0) {
			done += (size_t)n;
			continue;
		}
		count(t, n < 0 && errno == EINTR);
		if (n == 0)
			exit(3);        /* the peer is gone: nothing left to test */
	}
}

static void *server(void *arg)
{
	char buf[64];
	prctl(PR_SET_NAME, names[T_SERVER]);
	for (;;) {
		xfer(T_SERVER, srv_fd, buf, sizeof(buf), 0);
		xfer(T_SERVER, srv_fd, buf, sizeof(buf), 1);
		atomic_fetch_add(&rounds[T_SERVER], 1);
	}
	return arg;
}

static void *client(void *arg)
{
	char buf[64] = "ping";
	uint64_t one = 1;
	prctl(PR_SET_NAME, names[T_CLIENT]);
	for (;;) {
		xfer(T_CLIENT, cli_fd, buf, sizeof(buf), 1);
		xfer(T_CLIENT, cli_fd, buf, sizeof(buf), 0);
		sem_post(&sem);
		if (write(ev_fd, &one, sizeof(one)) < 0)
			count(T_CLIENT, errno == EINTR);
		for (int i = 0; i < spin; i++)
			sink++;
		atomic_fetch_add(&rounds[T_CLIENT], 1);
	}
	return arg;
}

static void *epoller(void *arg)
{
	struct epoll_event ev;
	uint64_t v;
	prctl(PR_SET_NAME, names[T_EPOLL]);
	for (;;) {
		int n = epoll_wait(ep_fd, &ev, 1, 1000);
		if (n < 0) {
			count(T_EPOLL, errno == EINTR);
			continue;
		}
		if (n == 0 || read(ev_fd, &v, sizeof(v)) != sizeof(v))
			count(T_EPOLL, 0);      /* a timeout: the loop stalled 1 s */
		atomic_fetch_add(&rounds[T_EPOLL], 1);
	}
	return arg;
}

static void *semwaiter(void *arg)
{
	prctl(PR_SET_NAME, names[T_SEM]);
	for (;;) {
		struct timespec ts;
		clock_gettime(CLOCK_REALTIME, &ts);
		ts.tv_sec += 1;
		if (ts.tv_nsec >= 1000000000L)
			ts.tv_sec++, ts.tv_nsec -= 1000000000L;
		if (sem_timedwait(&sem, &ts) < 0) {
			count(T_SEM, errno == EINTR);
			continue;
		}
		atomic_fetch_add(&rounds[T_SEM], 1);
	}
	return arg;
}

static void connect_pair(void)
{
	struct sockaddr_in a = { .sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	socklen_t len = sizeof(a);
	int l = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (l < 0 || bind(l, (struct sockaddr *)&a, sizeof(a)) < 0 || listen(l, 1) < 0 ||
	    getsockname(l, (struct sockaddr *)&a, &len) < 0) {
		perror("listen");
		exit(99);
	}
	cli_fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (cli_fd < 0 || connect(cli_fd, (struct sockaddr *)&a, sizeof(a)) < 0 ||
	    (srv_fd = accept4(l, NULL, NULL, SOCK_CLOEXEC)) < 0) {
		perror("connect");
		exit(99);
	}
	close(l);
	set_timeouts(srv_fd, 5);
	set_timeouts(cli_fd, 5);
}

static void write_report(const char *ready, int serial)
{
	struct report_file r;
	report_init(&r, ready, ".report");
	FILE *f = report_open(&r);
	if (!f)
		return;
	fprintf(f, "serial %d\n", serial);
	for (int i = 0; i < NT; i++)
		fprintf(f, "%s eintr=%d other=%d rounds=%d\n", names[i], atomic_load(&eintr_n[i]),
			atomic_load(&other_n[i]), atomic_load(&rounds[i]));
	report_commit(&r, f);
}

/* Built with -DTIMEOUTS_LIB as tests/bin/libtimeouts.so, the same server
 * runs inside another program (tests/targets/pytimeouts.py: a CPython
 * process) from this call, which never returns. */
#ifdef TIMEOUTS_LIB
int timeouts_main(int argc, char **argv)
#else
int main(int argc, char **argv)
#endif
{
	const char *ready = ready_path(argc, argv);
	spin = argc > 2 ? atoi(argv[2]) : 1000;
	int idle = argc > 3 ? atoi(argv[3]) : 0;
	void *(*fns[NT])(void *) = { server, client, epoller, semwaiter };
	struct epoll_event ev = { .events = EPOLLIN };
	sigset_t set;
	pthread_t th;
	sigemptyset(&set);
	sigaddset(&set, SIGUSR1);
	pthread_sigmask(SIG_BLOCK, &set, NULL);
	connect_pair();
	sem_init(&sem, 0, 0);
	ev_fd = eventfd(0, EFD_CLOEXEC);
	ep_fd = epoll_create1(EPOLL_CLOEXEC);
	if (ev_fd < 0 || ep_fd < 0 || epoll_ctl(ep_fd, EPOLL_CTL_ADD, ev_fd, &ev) < 0) {
		perror("eventfd/epoll");
		return 99;
	}
	for (int i = 0; i < NT; i++)
		if (pthread_create(&th, NULL, fns[i], NULL) != 0)
			return 99;
	for (int i = 0; i < idle; i++)
		if (pthread_create(&th, NULL, idler, NULL) != 0)
			return 99;
	struct timespec ms = { 0, 1000 * 1000 };
	while (atomic_load(&rounds[T_CLIENT]) < 100)
		nanosleep(&ms, NULL);
	int serial = 0;
	write_report(ready, serial);
	ready_announce(ready);
	for (;;) {
		siginfo_t si;
		if (sigwaitinfo(&set, &si) == SIGUSR1)
			write_report(ready, ++serial);
	}
}
