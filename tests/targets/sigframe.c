/* sigframe READY: a thread stopped inside a signal handler, for the
 * return-address rule around signal frames (issue 13, item 5).
 *
 * Thread "sigframe" runs sf_loop(), which calls sf_spin() and then, right
 * after the call, the inlined sf_after(): the call's return address is
 * exactly the first instruction of sf_after's code.  sf_spin() jumps to
 * itself at SF_SPIN_AT, also the first instruction of an inlined function
 * (sf_spin_inline).  The main thread sends SIGALRM until the signal finds
 * the thread at SF_SPIN_AT; the handler then blocks for good in read() on a
 * pipe nobody writes to.  Every sample of that thread is then, root first:
 *     ...;sf_thread;sf_loop;sf_spin;sf_spin_inline;__restore_rt;sf_handler;read...
 * sf_loop's PC is a return address: looked up at PC - 1 it is the call in
 * sf_loop (looked up as it is, a wrong sf_after frame appears under
 * sf_loop).  sf_spin's PC is the exact PC the signal interrupted: looked up
 * as it is it is sf_spin_inline's first instruction (at PC - 1, the
 * sf_spin_inline frame is lost).  Built -O2 -g like the other targets. */
#define _GNU_SOURCE
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <ucontext.h>
#include "ready.h"

extern const char *const sf_spin_at;      /* where sf_spin jumps to itself */
static volatile unsigned long counter;
static int pipefd[2];
static atomic_int in_handler, spinning;

static void sf_handler(int sig, siginfo_t *si, void *ctx)
{
	ucontext_t *uc = ctx;
	char c;

	if ((const char *)uc->uc_mcontext.gregs[REG_RIP] != sf_spin_at)
		return;                 /* not there yet: the main thread tries again */
	atomic_store(&in_handler, 1);
	while (read(pipefd[0], &c, 1) != 1)
		;
}

static inline __attribute__((always_inline)) void sf_spin_inline(void)
{
	/* the address goes in a data word: a code label would be a symbol, and
	 * name this place instead of sf_spin */
	__asm__ volatile(".pushsection .data\n.globl sf_spin_at\n.balign 8\nsf_spin_at: .quad 1f\n"
			 ".popsection\n1: jmp 1b");
}

__attribute__((noinline)) void sf_spin(void)
{
	atomic_store(&spinning, 1);
	sf_spin_inline();
}

static inline __attribute__((always_inline)) void sf_after(void)
{
	counter += 3;
}

__attribute__((noinline)) void sf_loop(void)
{
	for (;;) {
		sf_spin();
		sf_after();
	}
}

static void *sf_thread(void *arg)
{
	pthread_setname_np(pthread_self(), "sigframe");
	sf_loop();
	return NULL;
}

int main(int argc, char **argv)
{
	const char *ready = ready_path(argc, argv);
	struct sigaction sa = { .sa_sigaction = sf_handler, .sa_flags = SA_SIGINFO };
	struct timespec ts = { 0, 1000 * 1000 };
	pthread_t th;

	if (pipe(pipefd) || sigaction(SIGALRM, &sa, NULL) || pthread_create(&th, NULL, sf_thread, NULL))
		return 98;
	while (!atomic_load(&spinning))
		nanosleep(&ts, NULL);
	while (!atomic_load(&in_handler)) {
		pthread_kill(th, SIGALRM);
		nanosleep(&ts, NULL);
	}
	ready_announce(ready);
	for (;;)
		pause();
}
