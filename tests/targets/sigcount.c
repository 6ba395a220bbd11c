/* sigcount READY: counts the standard signals it is sent.
 *
 * Handlers for SIGTERM, SIGINT, SIGUSR1, SIGALRM, SIGCHLD and SIGCONT count
 * each delivery and rewrite READY.report (tmp + rename, async-signal-safe):
 *     TERM=N INT=N USR1=N ALRM=N CHLD=N CONT=N
 * Two threads take them: "sig-burn" burns CPU in burn_here() (a running
 * thread, stopped at every tick by a sampler) and "sig-sleep" sleeps in
 * nap_here() (blocked, sampled without a stop); main blocks them all and
 * waits in pthread_join.  Standard signals do not queue: the test sends
 * the next one only once the report shows the last one handled. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <time.h>
#include "ready.h"

static const int sigs[] = { SIGTERM, SIGINT, SIGUSR1, SIGALRM, SIGCHLD, SIGCONT };
static const char *const labels[] = { "TERM=", " INT=", " USR1=", " ALRM=", " CHLD=", " CONT=" };
#define NSIGS (int)(sizeof(sigs) / sizeof(sigs[0]))

static atomic_int counts[NSIGS], started;
static struct report_file report;
static volatile unsigned long sink;

/* Async-signal-safe. */
static void write_report(void)
{
	char buf[256], *p = buf;

	for (int i = 0; i < NSIGS; i++)
		p = report_put_num(p, labels[i], atomic_load(&counts[i]));
	*p++ = '\n';
	report_write_raw(&report, buf, p - buf);
}

static void on_signal(int sig)
{
	for (int i = 0; i < NSIGS; i++)
		if (sigs[i] == sig)
			atomic_fetch_add(&counts[i], 1);
	write_report();
}

__attribute__((noinline)) static void burn_here(void)
{
	unsigned long x = 21;

	atomic_fetch_add(&started, 1);
	for (;;) {
		x = x * 6364136223846793005UL + 1442695040888963407UL;
		sink = x;
	}
}

__attribute__((noinline)) static void nap_here(void)
{
	struct timespec ts = { 0, 20 * 1000 * 1000 };

	atomic_fetch_add(&started, 1);
	for (;;)
		nanosleep(&ts, NULL);
}

static void unblock_ours(void)
{
	sigset_t set;

	sigemptyset(&set);
	for (int i = 0; i < NSIGS; i++)
		sigaddset(&set, sigs[i]);
	pthread_sigmask(SIG_UNBLOCK, &set, NULL);
}

static void *burn_main(void *arg)
{
	pthread_setname_np(pthread_self(), "sig-burn");
	unblock_ours();
	burn_here();
	return arg;
}

static void *sleep_main(void *arg)
{
	pthread_setname_np(pthread_self(), "sig-sleep");
	unblock_ours();
	nap_here();
	return arg;
}

int main(int argc, char **argv)
{
	const char *ready = ready_path(argc, argv);
	struct sigaction sa;
	pthread_t burner, sleeper;
	sigset_t set;

	report_init(&report, ready, ".report");
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_signal;
	sa.sa_flags = SA_RESTART;
	sigfillset(&sa.sa_mask);        /* one handler at a time */
	sigemptyset(&set);
	for (int i = 0; i < NSIGS; i++) {
		sigaction(sigs[i], &sa, NULL);
		sigaddset(&set, sigs[i]);
	}
	pthread_sigmask(SIG_BLOCK, &set, NULL);
	if (pthread_create(&burner, NULL, burn_main, NULL) ||
	    pthread_create(&sleeper, NULL, sleep_main, NULL))
		return 98;
	ready_wait_started(&started, 2);
	write_report();
	ready_announce(ready);
	pthread_join(burner, NULL);
	return 0;
}
