/* prefork READY [N [MODE]]: a pre-forking server, for --subprocesses.
 *
 * At start the parent forks N workers (default 2); each writes its PID to
 * READY.worker.K (K = 1..N) and then works: MODE "burn" (default) spins in
 * worker_burn() for ever, MODE "serve" serves a request every 20 ms
 * (worker_serve(): 0.5 ms in worker_burn(), then asleep), so that 20 of
 * them cost half a core.  The parent writes READY once every worker has
 * written its file (each tells it through a pipe), then waits in
 * parent_wait() (sigsuspend), reaping children.  During the run:
 *   SIGUSR1  forks a late child: READY.child.K, then it spins in late_burn()
 *   SIGUSR2  forks a short child: READY.short.K, then it spins in
 *            short_burn() for 0.8 s and exits 0 (the parent reaps it)
 * K counts from 1 for each kind.  Every child dies with the parent
 * (PR_SET_PDEATHSIG), so killing the parent cleans up the whole tree.
 * Every PID file holds one PID and a newline (ready.h's ready_write). */
#define _GNU_SOURCE
#include <sys/prctl.h>
#include <sys/wait.h>
#include <errno.h>
#include <signal.h>
#include "ready.h"

#define CHAIN __attribute__((noinline, noclone))

static const char *ready;
static volatile sig_atomic_t want_late, want_short;
static volatile unsigned long sink;
static int nlate, nshort;

static void on_signal(int sig)
{
	if (sig == SIGUSR1)
		want_late++;
	else if (sig == SIGUSR2)
		want_short++;
}

/* Spin for NS nanoseconds (for ever if NS < 0); inlined into each named
 * function below, so each kind of process burns in a frame of its own. */
static inline __attribute__((always_inline)) void spin(long ns)
{
	long end = now_ns() + ns;
	unsigned long x = 5;
	int i;

	do {
		for (i = 0; i < 10000; i++)
			x = x * 6364136223846793005UL + 1442695040888963407UL;
		sink = x;
	} while (ns < 0 || now_ns() < end);
}

CHAIN static void worker_burn(long ns)
{
	spin(ns);
	sink++;
}

CHAIN static void worker_main(void)
{
	worker_burn(-1);
	sink++;
}

CHAIN static void worker_serve(void)
{
	struct timespec gap = { 0, 19500 * 1000 };

	for (;;) {
		worker_burn(500 * 1000);
		nanosleep(&gap, NULL);
	}
}

CHAIN static void late_burn(void)
{
	spin(-1);
	sink++;
}

CHAIN static void short_burn(void)
{
	spin(800 * 1000 * 1000L);
	sink++;
}

/* In the child: die with the parent, take the default signal dispositions
 * and mask back, and write the PID file READY.KIND.K. */
static void child_setup(pid_t parent, const sigset_t *mask, const char *kind, int k)
{
	char suffix[64];

	prctl(PR_SET_PDEATHSIG, SIGKILL);
	if (getppid() != parent)
		_exit(0);
	signal(SIGUSR1, SIG_DFL);
	signal(SIGUSR2, SIG_DFL);
	signal(SIGCHLD, SIG_DFL);
	sigprocmask(SIG_SETMASK, mask, NULL);
	snprintf(suffix, sizeof(suffix), ".%s.%d", kind, k);
	ready_write(ready, suffix);
}

static pid_t spawn(const sigset_t *mask, const char *kind, int k, void (*work)(void), int tell)
{
	pid_t parent = getpid(), pid = fork();

	if (pid == 0) {
		child_setup(parent, mask, kind, k);
		if (tell >= 0) {
			(void)!write(tell, "w", 1);
			close(tell);
		}
		work();
		_exit(0);
	}
	if (pid < 0) {
		perror("fork");
		exit(97);
	}
	return pid;
}

CHAIN static void parent_wait(const sigset_t *open)
{
	sigsuspend(open);
	sink++;
}

int main(int argc, char **argv)
{
	int n = argc > 2 ? atoi(argv[2]) : 2;
	const char *mode = argc > 3 ? argv[3] : "burn";
	void (*work)(void) = strcmp(mode, "serve") == 0 ? worker_serve : worker_main;
	struct sigaction sa;
	sigset_t block, open;
	int fds[2], k;
	char c;

	ready = ready_path(argc, argv);
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_signal;
	sa.sa_flags = SA_RESTART;
	sigaction(SIGUSR1, &sa, NULL);
	sigaction(SIGUSR2, &sa, NULL);
	sigaction(SIGCHLD, &sa, NULL);   /* a handler, so sigsuspend returns */
	sigemptyset(&block);
	sigaddset(&block, SIGUSR1);
	sigaddset(&block, SIGUSR2);
	sigaddset(&block, SIGCHLD);
	sigprocmask(SIG_BLOCK, &block, &open);
	if (pipe(fds) != 0)
		return 98;
	for (k = 1; k <= n; k++)
		spawn(&open, "worker", k, work, fds[1]);
	close(fds[1]);
	for (k = 0; k < n; k++)
		if (read(fds[0], &c, 1) != 1)
			return 96;
	close(fds[0]);
	ready_announce(ready);
	for (;;) {
		while (want_late > 0) {
			want_late--;
			spawn(&open, "child", ++nlate, late_burn, -1);
		}
		while (want_short > 0) {
			want_short--;
			spawn(&open, "short", ++nshort, short_burn, -1);
		}
		while (waitpid(-1, NULL, WNOHANG) > 0)
			;
		if (want_late == 0 && want_short == 0)
			parent_wait(&open);
	}
}
