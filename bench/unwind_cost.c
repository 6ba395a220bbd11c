/* bench/unwind_cost.c: what unwinding costs per frame, on real captures.
 *
 *   unwind_cost PID [CAPTURES [ROUNDS]]
 *
 * Seizes every thread of PID, takes CAPTURES (default 20) captures of each
 * (PTRACE_INTERRUPT, registers, 64 KiB of stack from SP - 128, as the
 * sampler does), resumes and detaches.  Then unwinds every capture once to
 * warm libunwind's cache, and ROUNDS (default 200) times more with
 * unwinder__unwind() (unwind/unwinder.c) over the module table of PID
 * (module/modules.c), as the sampler does: no ptrace and no /proc in the
 * timed part, which is timed in this thread's CPU time (the best round and
 * the mean).  Prints on stdout:
 *
 *   unwind_cost: 60 captures, 8300 frames (138.3 per capture); CPU per frame: 0.710 us best round, 0.802 us mean of 200; complete 60 partial 0 ...
 *
 * Built by `make build/bench/unwind_cost`; the C path's cost before and
 * after a change to the unwinder is this figure on tests/bin/deep. */
#include <dirent.h>
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ptrace.h>
#include <sys/uio.h>
#include <sys/user.h>
#include <sys/wait.h>
#include <time.h>

#include "module/modules.h"
#include "unwind/unwinder.h"

#define MAX_THREADS 256
#define STACK_BYTES (64u << 10)
#define MAX_DEPTH 1024

struct cap {
	struct user_regs_struct regs;
	uint64_t stack_addr;
	unsigned char *stack;
	size_t len;
};

/* This thread's CPU time: the machine may be shared, wall time is noisy. */
static double cpu_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static int list_threads(pid_t pid, pid_t *tids)
{
	char path[64];
	snprintf(path, sizeof(path), "/proc/%d/task", pid);
	DIR *d = opendir(path);
	struct dirent *e;
	int n = 0;
	while (d && (e = readdir(d)) && n < MAX_THREADS)
		if (e->d_name[0] != '.')
			tids[n++] = atoi(e->d_name);
	if (d)
		closedir(d);
	return n;
}

static int capture(pid_t tid, pid_t pid, struct cap *c)
{
	int st;
	if (ptrace(PTRACE_INTERRUPT, tid, 0, 0) < 0 || waitpid(tid, &st, __WALL) != tid)
		return -1;
	int ok = ptrace(PTRACE_GETREGS, tid, 0, &c->regs) == 0;
	if (ok) {
		c->stack_addr = c->regs.rsp - 128;
		c->stack = malloc(STACK_BYTES);
		struct iovec local = { c->stack, STACK_BYTES };
		struct iovec remote = { (void *)(uintptr_t)c->stack_addr, STACK_BYTES };
		ssize_t n = process_vm_readv(pid, &local, 1, &remote, 1, 0);
		c->len = n > 0 ? (size_t)n : 0;
	}
	ptrace(PTRACE_CONT, tid, 0, 0);
	return ok ? 0 : -1;
}

int main(int argc, char **argv)
{
	if (argc < 2) {
		fprintf(stderr, "usage: unwind_cost PID [CAPTURES [ROUNDS]]\n");
		return 2;
	}
	pid_t pid = atoi(argv[1]), tids[MAX_THREADS];
	int ncap = argc > 2 ? atoi(argv[2]) : 20, rounds = argc > 3 ? atoi(argv[3]) : 200;
	int nt = list_threads(pid, tids);
	for (int i = 0; i < nt; i++)
		if (ptrace(PTRACE_SEIZE, tids[i], 0, 0) < 0) {
			fprintf(stderr, "unwind_cost: seize %d: %s\n", tids[i], strerror(errno));
			return 1;
		}
	struct cap *caps = calloc((size_t)(nt * ncap), sizeof(*caps));
	size_t n = 0;
	struct timespec gap = { 0, 7 * 1000 * 1000 };
	for (int k = 0; k < ncap; k++) {
		for (int i = 0; i < nt; i++)
			if (capture(tids[i], pid, &caps[n]) == 0)
				n++;
		nanosleep(&gap, NULL);          /* another moment of the target */
	}
	for (int i = 0; i < nt; i++)
		ptrace(PTRACE_DETACH, tids[i], 0, 0);

	struct modules *ms = modules__new(pid);
	modules__refresh(ms, pid);
	struct unwinder *u = unwinder__new(ms);
	uint64_t *pcs = malloc(MAX_DEPTH * sizeof(*pcs));
	size_t frames = 0, status[8] = { 0 };
	double best = 0, total = 0;
	for (int r = -1; r < rounds; r++) {
		double t0 = cpu_s();
		frames = 0;
		for (size_t i = 0; i < n; i++) {
			struct unwind_input in = { &caps[i].regs, false, caps[i].stack_addr,
						   caps[i].stack, caps[i].len, STACK_BYTES };
			size_t depth;
			enum unwind_status s = unwinder__unwind(u, &in, pcs, MAX_DEPTH, &depth);
			frames += depth;
			if (r == -1 && s < 8)
				status[s]++;
		}
		double t = cpu_s() - t0;
		if (r >= 0) {
			total += t;
			best = r == 0 || t < best ? t : best;
		}
	}
	printf("unwind_cost: %zu captures, %zu frames (%.1f per capture); CPU per frame: "
	       "%.3f us best round, %.3f us mean of %d; complete %zu partial %zu no-module %zu "
	       "truncated %zu short %zu\n",
	       n, frames, (double)frames / (double)n, best * 1e6 / (double)frames,
	       total * 1e6 / (double)frames / rounds, rounds, status[UNWIND_COMPLETE],
	       status[UNWIND_PARTIAL], status[UNWIND_NO_MODULE], status[UNWIND_TRUNCATED],
	       status[UNWIND_STACK_SHORT]);
	unwinder__free(u);
	modules__free(ms);
	return 0;
}
