/* bench/floor.c: the floor under cprof-attach's pause, the least a ptrace
 * sampler can do.
 *
 *   floor PID --hz N [--duration SECS] [--ready FILE] [--running-only]
 *
 * PTRACE_SEIZEs every thread of PID (PTRACE_O_TRACECLONE, so new threads
 * arrive seized), then at N Hz sends PTRACE_INTERRUPT to every thread and,
 * as each one stops (waitpid(-1, __WALL)), resumes it at once with
 * PTRACE_CONT: no registers, no stack copy.  The pause of a thread is from
 * just before its PTRACE_INTERRUPT to the return of its PTRACE_CONT, the
 * same two points cprof-attach --stats measures.
 *
 * Signals sent to the target arrive here as signal-delivery-stops and are
 * passed on (PTRACE_CONT with the signal); a group-stop stays a stop
 * (PTRACE_LISTEN).  Runs until the target exits, SECS pass, or SIGINT /
 * SIGTERM; then detaches every thread still alive and prints on stdout:
 *
 *   floor: pause per thread median 31.5 us, p99 812.0 us; 1234 thread-samples, 0 lost, 9 threads, 3.51 s, 99.0 Hz achieved
 *
 * With --ready FILE, FILE (PID of the floor) is written once every thread is
 * seized, just before the first tick.
 *
 * With --running-only, each tick first reads every thread's state from
 * /proc/PID/task/TID/stat (kept open, pread) and interrupts only those in
 * state R: the threads cprof-attach has to stop, since it samples blocked
 * threads from /proc without stopping them.  Interrupting a blocked thread
 * wakes it, and that wake-up competes for the CPU with the running threads
 * being stopped; this variant is the floor for the stopped threads alone. */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ptrace.h>
#include <sys/signalfd.h>
#include <sys/timerfd.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define MAX_THREADS 65536

struct thread {
	pid_t tid;
	int alive, pending, group_stopped;
	int stat_fd;
	uint64_t t0;
};

static struct thread *threads;
static size_t nthreads, nalive, npending, threads_seen;
static pid_t target;
static int target_gone;
static uint64_t *pauses;
static size_t npauses, pauses_cap, lost;
static int running_only;

static uint64_t now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static void die(const char *what)
{
	fprintf(stderr, "floor: %s: %s\n", what, strerror(errno));
	exit(1);
}

static struct thread *find(pid_t tid)
{
	for (size_t i = 0; i < nthreads; i++)
		if (threads[i].tid == tid && threads[i].alive)
			return &threads[i];
	return NULL;
}

static struct thread *add(pid_t tid)
{
	struct thread *th = find(tid);
	if (th)
		return th;
	if (nthreads == MAX_THREADS) {
		fprintf(stderr, "floor: too many threads\n");
		exit(1);
	}
	th = &threads[nthreads++];
	*th = (struct thread){ .tid = tid, .alive = 1, .stat_fd = -1 };
	nalive++;
	threads_seen++;
	return th;
}

static void gone(struct thread *th)
{
	if (th->pending) {
		th->pending = 0;
		npending--;
	}
	th->alive = 0;
	nalive--;
	if (th->stat_fd >= 0)
		close(th->stat_fd);
	th->stat_fd = -1;
	if (th->tid == target)
		target_gone = 1;
}

static void record_pause(uint64_t ns)
{
	if (npauses == pauses_cap) {
		pauses_cap = pauses_cap ? pauses_cap * 2 : 4096;
		pauses = realloc(pauses, pauses_cap * sizeof(*pauses));
		if (!pauses)
			die("realloc");
	}
	pauses[npauses++] = ns;
}

static int seize(pid_t tid)
{
	if (ptrace(PTRACE_SEIZE, tid, 0, (void *)(long)PTRACE_O_TRACECLONE) == 0)
		return 0;
	return -errno;
}

static void seize_all(void)
{
	char dn[64];
	snprintf(dn, sizeof(dn), "/proc/%d/task", target);
	for (int added = 1; added;) {
		added = 0;
		DIR *d = opendir(dn);
		if (!d)
			die(dn);
		struct dirent *de;
		while ((de = readdir(d))) {
			pid_t tid = atoi(de->d_name);
			if (tid <= 0 || find(tid))
				continue;
			int r = seize(tid);
			if (r == -ESRCH)
				continue;
			if (r < 0) {
				errno = -r;
				die("PTRACE_SEIZE");
			}
			add(tid);
			added = 1;
		}
		closedir(d);
	}
}

static int is_stop_signal(int sig)
{
	return sig == SIGSTOP || sig == SIGTSTP || sig == SIGTTIN || sig == SIGTTOU;
}

static void restart(struct thread *th, int sig)
{
	if (th->group_stopped)
		ptrace(PTRACE_LISTEN, th->tid, 0, 0);
	else
		ptrace(PTRACE_CONT, th->tid, 0, (void *)(long)sig);
}

/* One waitpid() result.  When DETACHING, every stop detaches the thread. */
static void handle(pid_t tid, int st, int detaching)
{
	struct thread *th = find(tid);
	if (WIFEXITED(st) || WIFSIGNALED(st)) {
		if (th)
			gone(th);
		else if (tid == target)
			target_gone = 1;
		return;
	}
	if (!WIFSTOPPED(st))
		return;
	if (!th)
		th = add(tid);      /* a new thread's first stop, before its clone event */
	int sig = WSTOPSIG(st), event = st >> 16;
	if (event == PTRACE_EVENT_CLONE) {
		unsigned long child;
		if (ptrace(PTRACE_GETEVENTMSG, tid, 0, &child) == 0)
			add((pid_t)child);
		sig = 0;
	} else if (event == PTRACE_EVENT_STOP) {
		/* Our interrupt or a new thread's first stop (SIGTRAP), or a
		 * group-stop (the stopping signal). */
		th->group_stopped = is_stop_signal(sig);
		sig = 0;
	} else if (event != 0) {
		sig = 0;            /* no other event is enabled */
	}
	/* event == 0: a signal-delivery-stop, pass the signal on. */
	if (detaching) {
		ptrace(PTRACE_DETACH, tid, 0, (void *)(long)sig);
		th->group_stopped = 0;
		gone(th);
		if (tid == target)
			target_gone = 0;    /* detached, not gone */
		return;
	}
	if (event == PTRACE_EVENT_STOP && th->pending) {
		restart(th, 0);
		record_pause(now_ns() - th->t0);
		th->pending = 0;
		npending--;
		return;
	}
	restart(th, sig);
}

static void drain(int detaching, int block)
{
	for (;;) {
		int st;
		pid_t tid = waitpid(-1, &st, __WALL | (block ? 0 : WNOHANG));
		if (tid < 0) {
			if (errno == EINTR)
				continue;
			if (errno == ECHILD) {      /* nothing traced is left */
				for (size_t i = 0; i < nthreads; i++)
					if (threads[i].alive)
						gone(&threads[i]);
				target_gone = 1;
				return;
			}
			die("waitpid");
		}
		if (tid == 0)
			return;
		handle(tid, st, detaching);
		if (block)
			return;
	}
}

/* --running-only: is the thread running or runnable (state R)? */
static int running(struct thread *th)
{
	char buf[512];
	if (th->stat_fd < 0) {
		char fn[96];
		snprintf(fn, sizeof(fn), "/proc/%d/task/%d/stat", target, th->tid);
		th->stat_fd = open(fn, O_RDONLY | O_CLOEXEC);
		if (th->stat_fd < 0)
			return 1;
	}
	ssize_t n = pread(th->stat_fd, buf, sizeof(buf) - 1, 0);
	if (n <= 0)
		return 1;
	buf[n] = '\0';
	char *p = strrchr(buf, ')');
	return !p || p[1] != ' ' || p[2] == 'R';
}

static void sample(void)
{
	for (size_t i = 0; i < nthreads; i++) {
		struct thread *th = &threads[i];
		if (!th->alive || (running_only && !running(th)))
			continue;
		th->t0 = now_ns();
		if (ptrace(PTRACE_INTERRUPT, th->tid, 0, 0) < 0)
			continue;           /* ESRCH: exiting, its exit event will come */
		th->pending = 1;
		npending++;
	}
	while (npending > 0 && !target_gone)
		drain(0, 1);
}

static void detach_all(void)
{
	for (size_t i = 0; i < nthreads; i++) {
		struct thread *th = &threads[i];
		if (!th->alive)
			continue;
		if (ptrace(PTRACE_INTERRUPT, th->tid, 0, 0) < 0 && errno == ESRCH) {
			/* Exiting: its exit event will come; or it is already a
			 * zombie and waitpid will say so. */
		}
	}
	while (nalive > 0 && !target_gone)
		drain(1, 1);
	/* Threads that died meanwhile: collect what is left without blocking. */
	drain(1, 0);
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
	return x < y ? -1 : x > y;
}

static double quantile_us(double q)
{
	if (!npauses)
		return 0;
	return (double)pauses[(size_t)(q * (double)(npauses - 1))] / 1000.0;
}

int main(int argc, char **argv)
{
	int hz = 99;
	double duration = 0;
	const char *ready = NULL;
	for (int i = 1; i < argc; i++) {
		if (strcmp(argv[i], "--hz") == 0 && i + 1 < argc)
			hz = atoi(argv[++i]);
		else if (strcmp(argv[i], "--duration") == 0 && i + 1 < argc)
			duration = atof(argv[++i]);
		else if (strcmp(argv[i], "--ready") == 0 && i + 1 < argc)
			ready = argv[++i];
		else if (strcmp(argv[i], "--running-only") == 0)
			running_only = 1;
		else if (!target && atoi(argv[i]) > 0)
			target = atoi(argv[i]);
		else {
			fprintf(stderr, "usage: %s PID --hz N [--duration SECS] [--ready FILE] [--running-only]\n", argv[0]);
			return 2;
		}
	}
	if (!target || hz < 1 || hz > 100000) {
		fprintf(stderr, "usage: %s PID --hz N [--duration SECS] [--ready FILE] [--running-only]\n", argv[0]);
		return 2;
	}
	threads = calloc(MAX_THREADS, sizeof(*threads));
	if (!threads)
		die("calloc");

	sigset_t set;
	sigemptyset(&set);
	sigaddset(&set, SIGCHLD);
	sigaddset(&set, SIGINT);
	sigaddset(&set, SIGTERM);
	sigaddset(&set, SIGHUP);
	sigprocmask(SIG_BLOCK, &set, NULL);
	int sfd = signalfd(-1, &set, SFD_CLOEXEC | SFD_NONBLOCK);
	int tfd = timerfd_create(CLOCK_MONOTONIC, TFD_CLOEXEC | TFD_NONBLOCK);
	if (sfd < 0 || tfd < 0)
		die("signalfd/timerfd");

	seize_all();
	uint64_t period = 1000000000ull / (uint64_t)hz;
	struct itimerspec its = {
		.it_interval = { (time_t)(period / 1000000000ull), (long)(period % 1000000000ull) },
		.it_value = { (time_t)(period / 1000000000ull), (long)(period % 1000000000ull) },
	};
	if (timerfd_settime(tfd, 0, &its, NULL) < 0)
		die("timerfd_settime");
	uint64_t start = now_ns(), ticks = 0, missed = 0;
	uint64_t deadline = duration > 0 ? start + (uint64_t)(duration * 1e9) : UINT64_MAX;
	if (ready) {
		char tmp[4200];
		snprintf(tmp, sizeof(tmp), "%s.tmp", ready);
		FILE *f = fopen(tmp, "w");
		if (!f || fprintf(f, "%ld\n", (long)getpid()) < 0 || fclose(f) != 0 ||
		    rename(tmp, ready) != 0)
			die(ready);
	}

	const char *why = "target exited";
	struct pollfd fds[2] = { { sfd, POLLIN, 0 }, { tfd, POLLIN, 0 } };
	while (!target_gone) {
		uint64_t now = now_ns();
		if (now >= deadline) {
			why = "duration reached";
			break;
		}
		uint64_t left_ms = (deadline - now + 999999) / 1000000;
		int timeout = deadline == UINT64_MAX ? 1000 : (int)(left_ms > 1000 ? 1000 : left_ms);
		if (poll(fds, 2, timeout) < 0 && errno != EINTR)
			die("poll");
		if (fds[0].revents) {
			struct signalfd_siginfo si;
			int stop = 0;
			while (read(sfd, &si, sizeof(si)) == sizeof(si))
				if (si.ssi_signo != SIGCHLD)
					stop = 1;
			drain(0, 0);
			if (stop) {
				why = "interrupted";
				break;
			}
		}
		if (fds[1].revents && !target_gone) {
			uint64_t exp;
			if (read(tfd, &exp, sizeof(exp)) == sizeof(exp)) {
				missed += exp - 1;
				ticks++;
				sample();
			}
		}
	}
	uint64_t end = now_ns();
	if (!target_gone)
		detach_all();
	double secs = (double)(end - start) / 1e9;
	qsort(pauses, npauses, sizeof(*pauses), cmp_u64);
	printf("floor: pause per thread median %.1f us, p99 %.1f us; %zu thread-samples, %zu lost, "
	       "%zu threads, %.2f s, %.1f Hz achieved (%d requested), %llu missed ticks, %s\n",
	       quantile_us(0.5), quantile_us(0.99), npauses, lost, threads_seen, secs,
	       secs > 0 ? (double)ticks / secs : 0.0, hz, (unsigned long long)missed, why);
	return 0;
}
