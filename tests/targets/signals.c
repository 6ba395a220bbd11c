/* signals READY: signal delivery and EINTR while profiled.
 *   main    - all signals blocked, pthread_join
 *   epoller - all signals blocked, epoll_wait(-1) on an empty epoll set,
 *             counting every EINTR it gets (a profiler must not cause any)
 *   catcher - burns CPU in catch_loop(); the only thread that takes SIGRTMIN
 *             and SIGUSR2
 * Each handled SIGRTMIN or SIGUSR2 rewrites READY.report (tmp + rename) as
 * "rt=N usr2=N eintr=N".  Real-time signals queue, so every one sent must be
 * counted: a tracer that drops a signal-delivery-stop shows up here.
 * Every other signal stays blocked (SIGTERM included): stop it with SIGKILL. */
#define _GNU_SOURCE
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <sys/epoll.h>
#include <errno.h>
#include <fcntl.h>
#include <time.h>
#include "ready.h"

static struct report_file report;
static atomic_int rt_count, usr2_count, eintr_count, started;
static volatile unsigned long sink;

/* Async-signal-safe. */
static void write_report(void)
{
	char buf[128], *p = buf;

	p = report_put_num(p, "rt=", atomic_load(&rt_count));
	p = report_put_num(p, " usr2=", atomic_load(&usr2_count));
	p = report_put_num(p, " eintr=", atomic_load(&eintr_count));
	*p++ = '\n';
	report_write_raw(&report, buf, p - buf);
}

static void on_signal(int sig)
{
	if (sig == SIGUSR2)
		atomic_fetch_add(&usr2_count, 1);
	else
		atomic_fetch_add(&rt_count, 1);
	write_report();
}

__attribute__((noinline)) static void epoll_here(int ep)
{
	struct epoll_event ev;

	atomic_fetch_add(&started, 1);
	for (;;) {
		if (epoll_wait(ep, &ev, 1, -1) < 0 && errno == EINTR)
			atomic_fetch_add(&eintr_count, 1);
	}
}

static void *epoller_main(void *arg)
{
	int ep = epoll_create1(0);

	pthread_setname_np(pthread_self(), "epoller");
	if (ep < 0)
		exit(98);
	epoll_here(ep);
	return arg;
}

__attribute__((noinline)) static void catch_loop(void)
{
	unsigned long x = 13;

	atomic_fetch_add(&started, 1);
	for (;;) {
		x = x * 6364136223846793005UL + 1442695040888963407UL;
		sink = x;
	}
}

static void *catcher_main(void *arg)
{
	sigset_t set;

	pthread_setname_np(pthread_self(), "catcher");
	sigemptyset(&set);
	sigaddset(&set, SIGRTMIN);
	sigaddset(&set, SIGUSR2);
	pthread_sigmask(SIG_UNBLOCK, &set, NULL);
	catch_loop();
	return arg;
}

int main(int argc, char **argv)
{
	const char *ready = ready_path(argc, argv);
	struct sigaction sa;
	pthread_t ep, catcher;
	sigset_t all;

	report_init(&report, ready, ".report");
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_signal;
	sa.sa_flags = SA_RESTART;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGRTMIN, &sa, NULL);
	sigaction(SIGUSR2, &sa, NULL);
	/* Blocked in main and inherited by epoller; catcher unblocks its own. */
	sigfillset(&all);
	pthread_sigmask(SIG_BLOCK, &all, NULL);
	if (pthread_create(&ep, NULL, epoller_main, NULL) ||
	    pthread_create(&catcher, NULL, catcher_main, NULL))
		return 98;
	ready_wait_started(&started, 2);
	ready_announce(ready);
	pthread_join(catcher, NULL);
	return 0;
}
