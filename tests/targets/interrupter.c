/* interrupter READY PID ROUNDS: the naive sampler, to show that the EINTR
 * test can fail.  Seizes every thread of PID, then ROUNDS times, 10 ms
 * apart, stops each thread with PTRACE_INTERRUPT, waits for the stop and
 * resumes it with PTRACE_CONT (a signal caught on the way is passed on):
 * what a sampler that stops every thread at every tick does.  Writes READY
 * when done and exits, which detaches.  Not a target: a tool of the tests. */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <signal.h>
#include <sys/ptrace.h>
#include <sys/wait.h>
#include <time.h>
#include "ready.h"

#define MAXT 1024

static pid_t tids[MAXT];
static int ntids;

static int known(pid_t tid)
{
	for (int i = 0; i < ntids; i++)
		if (tids[i] == tid)
			return 1;
	return 0;
}

/* Seizes every thread, re-reading the list until no new one shows up. */
static void seize_all(pid_t pid)
{
	char dir[64];
	int added = 1;

	snprintf(dir, sizeof(dir), "/proc/%d/task", pid);
	while (added) {
		DIR *d = opendir(dir);
		struct dirent *e;

		if (!d) {
			perror(dir);
			exit(1);
		}
		added = 0;
		while ((e = readdir(d)) && ntids < MAXT) {
			pid_t tid = atoi(e->d_name);

			if (tid <= 0 || known(tid))
				continue;
			if (ptrace(PTRACE_SEIZE, tid, 0, 0) < 0 && errno != ESRCH) {
				perror("PTRACE_SEIZE");
				exit(1);
			}
			tids[ntids++] = tid;
			added = 1;
		}
		closedir(d);
	}
}

/* Waits for TID's stop: our interrupt's PTRACE_EVENT_STOP; a signal on
 * the way is passed on and we wait again. */
static void stop_and_resume(pid_t tid)
{
	int st;

	for (;;) {
		if (waitpid(tid, &st, __WALL) != tid || !WIFSTOPPED(st))
			return;
		if (st >> 16 == PTRACE_EVENT_STOP) {
			ptrace(PTRACE_CONT, tid, 0, 0);
			return;
		}
		ptrace(PTRACE_CONT, tid, 0, (void *)(long)WSTOPSIG(st));
	}
}

int main(int argc, char **argv)
{
	const char *ready = ready_path(argc, argv);
	pid_t pid = argc > 2 ? atoi(argv[2]) : 0;
	int rounds = argc > 3 ? atoi(argv[3]) : 10;
	struct timespec gap = { 0, 10 * 1000 * 1000 };

	if (pid <= 0) {
		fprintf(stderr, "usage: interrupter READY PID ROUNDS\n");
		return 2;
	}
	seize_all(pid);
	for (int r = 0; r < rounds; r++) {
		for (int i = 0; i < ntids; i++)
			if (ptrace(PTRACE_INTERRUPT, tids[i], 0, 0) == 0)
				stop_and_resume(tids[i]);
		nanosleep(&gap, NULL);
	}
	ready_announce(ready);
	return 0;
}
