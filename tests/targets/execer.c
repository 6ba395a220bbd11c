/* execer READY MODE: a program that replaces itself with exec() on cue.
 *
 * Before the exec: the thread that will call exec spins in
 * before_exec_work() (a running thread, so a sampler stops it at every
 * tick, up to the exec itself), and a thread "idler" waits in idle_here().
 * READY is written once both run; SIGUSR1 is the go signal.  MODE says who
 * calls exec, and what:
 *   self    main calls execv(/proc/self/exe, READY.after, "after")
 *   thread  a second thread ("execer", main in pthread_join) does the same:
 *           the kernel gives it the leader's TID
 *   sleep   main calls execv("/bin/sleep", "1000")
 * The new image ("after" mode) writes READY.after and burns CPU in
 * after_exec_work(), with a thread "after-idle" in after_idle().  A
 * profiler that follows exec has both images in one profile, each named
 * from its own files. */
#define _GNU_SOURCE
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <time.h>
#include "ready.h"

static const char *ready;
static const char *mode;
static volatile sig_atomic_t go;
static atomic_int started;
static volatile unsigned long sink;

static void on_usr1(int sig)
{
	go = 1;
}

/* --- the new image --------------------------------------------------- */

__attribute__((noinline)) static void after_idle(void)
{
	for (;;)
		pause();
}

static void *after_idle_main(void *arg)
{
	pthread_setname_np(pthread_self(), "after-idle");
	after_idle();
	return arg;
}

__attribute__((noinline)) static void after_exec_work(void)
{
	unsigned long x = 17;

	for (;;) {
		x = x * 6364136223846793005UL + 1442695040888963407UL;
		sink = x;
	}
}

static int after_main(void)
{
	pthread_t t;

	if (pthread_create(&t, NULL, after_idle_main, NULL))
		return 98;
	ready_announce(ready);
	after_exec_work();
	return 0;
}

/* --- the old image ----------------------------------------------------- */

__attribute__((noinline)) static void idle_here(void)
{
	atomic_fetch_add(&started, 1);
	for (;;)
		pause();
}

static void *idler_main(void *arg)
{
	pthread_setname_np(pthread_self(), "idler");
	idle_here();
	return arg;
}

__attribute__((noinline)) static void before_exec_work(void)
{
	unsigned long x = 3;

	atomic_fetch_add(&started, 1);
	while (!go) {
		x = x * 6364136223846793005UL + 1442695040888963407UL;
		sink = x;
	}
}

__attribute__((noinline)) static void do_exec(void)
{
	char after[4200];

	if (strcmp(mode, "sleep") == 0) {
		char *argv[] = { "sleep", "1000", NULL };

		execv("/bin/sleep", argv);
	} else {
		char *argv[] = { "execer", after, "after", NULL };

		snprintf(after, sizeof(after), "%s.after", ready);
		execv("/proc/self/exe", argv);
	}
	perror("execv");
	exit(97);
}

static void *execer_main(void *arg)
{
	pthread_setname_np(pthread_self(), "execer");
	before_exec_work();
	do_exec();
	return arg;
}

int main(int argc, char **argv)
{
	struct sigaction sa;
	pthread_t idler, execer;

	ready = ready_path(argc, argv);
	mode = argc > 2 ? argv[2] : "self";
	if (strcmp(mode, "after") == 0)
		return after_main();
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_usr1;
	sa.sa_flags = SA_RESTART;
	sigaction(SIGUSR1, &sa, NULL);
	if (pthread_create(&idler, NULL, idler_main, NULL))
		return 98;
	if (strcmp(mode, "thread") == 0) {
		if (pthread_create(&execer, NULL, execer_main, NULL))
			return 98;
		ready_wait_started(&started, 2);
		ready_announce(ready);
		pthread_join(execer, NULL);
		return 0;
	}
	ready_wait_started(&started, 1);
	ready_announce(ready);   /* the idler runs; main spins from here */
	before_exec_work();
	do_exec();
	return 0;
}
