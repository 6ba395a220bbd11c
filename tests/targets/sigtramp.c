/* sigtramp READY: most of the time inside a SIGALRM handler, so that most
 * stacks pass through the signal trampoline (libc's __restore_rt, the
 * sa_restorer the kernel returns to).
 *   main  - loops in main_spin(); a 20 ms ITIMER_REAL delivers SIGALRM
 *           to it, whose handler on_alarm() spins in handler_spin() for
 *           about 15 ms. */
#define _GNU_SOURCE
#include <signal.h>
#include <sys/time.h>
#include "ready.h"

static volatile unsigned long sink;

__attribute__((noinline)) static void handler_spin(void)
{
	long end = now_ns() + 15000000L;
	while (now_ns() < end)
		sink++;
}

static void on_alarm(int sig)
{
	(void)sig;
	handler_spin();
	sink++;
}

__attribute__((noinline)) static void main_spin(void)
{
	for (;;)
		sink++;
}

int main(int argc, char **argv)
{
	const char *ready = ready_path(argc, argv);
	struct sigaction sa = { .sa_handler = on_alarm };
	struct itimerval it = { { 0, 20000 }, { 0, 20000 } };

	sigemptyset(&sa.sa_mask);
	sigaction(SIGALRM, &sa, NULL);
	setitimer(ITIMER_REAL, &it, NULL);
	ready_announce(ready);
	main_spin();
	return 0;
}
