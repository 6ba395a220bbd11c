/* cloner READY: children made with clone() and no CLONE_THREAD are
 * processes, not threads, whatever their exit signal.
 *
 * The parent computes in parent_work and, every 20 ms, clone()s a child
 * with exit signal 0 (ptrace reports such a child as PTRACE_EVENT_CLONE,
 * like a thread) that computes in child_burn for 5 ms and exits.  One more
 * such child, started first, writes its PID to READY.long and execs
 * /bin/sleep 1000 once the parent has written READY (a clone child that
 * execs must not end the parent's profile).  The parent reaps the children
 * (__WALL: they send no SIGCHLD). */
#define _GNU_SOURCE
#include <sched.h>
#include <signal.h>
#include <stdatomic.h>
#include <sys/wait.h>
#include "ready.h"

#define STACK (256 * 1024)

static volatile unsigned long sink;
static const char *ready;

__attribute__((noinline)) static void child_burn(long ns)
{
	long end = now_ns() + ns;
	while (now_ns() < end)
		sink++;
}

static int short_child(void *arg)
{
	child_burn(5000000);
	return 0;
}

static int long_child(void *arg)
{
	char path[4096];
	snprintf(path, sizeof(path), "%s", ready);
	ready_write(path, ".long");
	struct timespec ms = { 0, 1000000 };
	while (access(path, F_OK) != 0)         /* the parent's READY */
		nanosleep(&ms, NULL);
	execl("/bin/sleep", "sleep", "1000", (char *)NULL);
	return 99;
}

/* Not the same code as child_burn, or the compiler would fold the two. */
__attribute__((noinline)) static void parent_work(long ns)
{
	long end = now_ns() + ns;
	while (now_ns() < end)
		sink += 3;
}

static pid_t spawn(int (*fn)(void *))
{
	char *stack = malloc(STACK);
	if (!stack)
		exit(99);
	return clone(fn, stack + STACK, 0 /* exit signal 0, no CLONE_THREAD */, NULL);
}

int main(int argc, char **argv)
{
	ready = ready_path(argc, argv);
	if (spawn(long_child) < 0)
		return 99;
	char longfile[4200];
	snprintf(longfile, sizeof(longfile), "%s.long", ready);
	struct timespec ms = { 0, 1000000 };
	while (access(longfile, F_OK) != 0)
		nanosleep(&ms, NULL);
	ready_announce(ready);
	for (;;) {
		if (spawn(short_child) < 0)
			return 99;
		parent_work(20000000);
		while (waitpid(-1, NULL, __WALL | WNOHANG) > 0)
			;
	}
}
