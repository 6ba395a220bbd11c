/* static READY: built with -static, linked with glibc (tests/bin/static:
 * .eh_frame without .eh_frame_hdr) and, when musl-gcc is installed, with
 * musl (tests/bin/static-musl: musl's own code has no unwind info and no
 * frame pointers).  A thread "st-spin" spins under st_outer -> st_middle ->
 * st_inner; the main thread spins under main -> st_main_loop (with musl a
 * blocked thread could not be unwound past libc: every thread computes).
 * static READY wait: a third thread waits in epoll_wait for ever and counts
 * the EINTRs it sees; SIGUSR1 writes "EINTR=N" to READY.eintr. */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>
#include <sys/epoll.h>
#include "ready.h"

static volatile unsigned long sink;
static atomic_int started;
static atomic_long eintrs;
static atomic_int report_due;

static void *st_waiter(void *arg)
{
	struct epoll_event ev;
	int ep = epoll_create1(0);
	(void)arg;
	for (;;)
		if (epoll_wait(ep, &ev, 1, -1) < 0 && errno == EINTR)
			atomic_fetch_add(&eintrs, 1);
	return NULL;
}

static void on_usr1(int sig)
{
	(void)sig;
	atomic_store(&report_due, 1);
}

static void report(const char *ready)
{
	struct report_file r;
	FILE *f;

	report_init(&r, ready, ".eintr");
	f = report_open(&r);
	if (f) {
		fprintf(f, "EINTR=%ld\n", atomic_load(&eintrs));
		report_commit(&r, f);
	}
}

__attribute__((noinline)) void st_inner(unsigned long x)
{
	for (;;) {
		x = x * 6364136223846793005UL + 1442695040888963407UL;
		sink = x;
	}
}

__attribute__((noinline)) void st_middle(unsigned long x)
{
	st_inner(x + 1);
	sink = x;
}

__attribute__((noinline)) void st_outer(unsigned long x)
{
	st_middle(x * 3);
	sink = x;
}

static void *st_thread(void *arg)
{
	atomic_store(&started, 1);
	st_outer((unsigned long)arg);
	return NULL;
}

__attribute__((noinline)) void st_main_loop(const char *ready)
{
	unsigned long x = (unsigned long)ready;
	int n = 0;

	for (;;) {
		x = x * 2862933555777941757UL + 3037000493UL;
		sink = x;
		if (n < 1000000 && atomic_load(&started) && ++n == 1000000)
			ready_announce(ready);      /* once, both threads spinning */
		if (atomic_load(&report_due)) {
			atomic_store(&report_due, 0);
			report(ready);
		}
	}
}

int main(int argc, char **argv)
{
	const char *ready = ready_path(argc, argv);
	pthread_t th;

	if (argc > 2 && strcmp(argv[2], "wait") == 0) {
		pthread_t w;
		sigset_t usr1;
		sigemptyset(&usr1);
		sigaddset(&usr1, SIGUSR1);
		/* SIGUSR1 only for the main thread, not the waiter. */
		pthread_sigmask(SIG_BLOCK, &usr1, NULL);
		if (pthread_create(&w, NULL, st_waiter, NULL))
			return 98;
		pthread_sigmask(SIG_UNBLOCK, &usr1, NULL);
		signal(SIGUSR1, on_usr1);
	}
	if (pthread_create(&th, NULL, st_thread, (void *)ready))
		return 98;
	st_main_loop(ready);
	return 0;
}
