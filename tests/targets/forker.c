/* forker READY: forks a child every cycle (the child spins ~5 ms in
 * child_work() and exits 0), reaps it in reap_child(), forever.  If a child
 * ever ends otherwise (killed, stopped, non-zero status) or waitpid fails,
 * it writes READY.anomaly with the details.  On SIGUSR1 it also forks one
 * long-lived child (linger() in pause, its PID in READY.child).  Forking while
 * profiled must not leave children traced or stopped, or disturb the parent. */
#define _GNU_SOURCE
#include <sys/wait.h>
#include <errno.h>
#include <signal.h>
#include <time.h>
#include "ready.h"

static volatile unsigned long sink;
static volatile sig_atomic_t want_linger;

static void on_usr1(int sig)
{
	want_linger = 1;
}

__attribute__((noinline)) static void linger(const char *ready)
{
	ready_write(ready, ".child");
	for (;;)
		pause();
}

__attribute__((noinline)) static void child_work(void)
{
	long t0 = now_ns();
	unsigned long x = 11;

	do {
		x = x * 6364136223846793005UL + 1442695040888963407UL;
		sink = x;
	} while (now_ns() - t0 < 5000000L);
	_exit(0);
}

static void anomaly(const char *ready, const char *what, int st)
{
	char path[4200];
	FILE *f;

	snprintf(path, sizeof(path), "%s.anomaly", ready);
	f = fopen(path, "a");
	if (f) {
		fprintf(f, "%s status=0x%x errno=%d\n", what, st, errno);
		fclose(f);
	}
}

__attribute__((noinline)) static int reap_child(pid_t pid)
{
	int st = 0;
	pid_t r;

	while ((r = waitpid(pid, &st, 0)) < 0 && errno == EINTR)
		;
	return r == pid ? st : -1;
}

int main(int argc, char **argv)
{
	const char *ready = ready_path(argc, argv);
	int announced = 0;

	signal(SIGUSR1, on_usr1);
	for (;;) {
		pid_t pid;
		int st;

		if (want_linger) {
			want_linger = 0;
			if (fork() == 0)
				linger(ready);
		}
		pid = fork();
		if (pid == 0)
			child_work();
		if (pid < 0) {
			anomaly(ready, "fork failed", 0);
			continue;
		}
		st = reap_child(pid);
		if (st == -1)
			anomaly(ready, "waitpid failed", 0);
		else if (!WIFEXITED(st) || WEXITSTATUS(st) != 0)
			anomaly(ready, "child ended badly", st);
		if (!announced) {
			ready_announce(ready);
			announced = 1;
		}
	}
}
