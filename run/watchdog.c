#include "run/watchdog.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <time.h>
#include <unistd.h>

/* The state letter of process PID from /proc/PID/stat, or 0. */
static char state_of(int fd)
{
	char buf[512];
	ssize_t n = pread(fd, buf, sizeof(buf) - 1, 0);
	if (n <= 0)
		return 0;
	buf[n] = '\0';
	const char *p = strrchr(buf, ')');      /* the command name may hold anything */
	return p && p[1] == ' ' ? p[2] : 0;
}

static uint64_t *beat;

uint64_t *watchdog__beat(void)
{
	return beat;
}

static uint64_t mono_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

static void watch(pid_t profiler)
{
	uint64_t last = 0, since = mono_ms();
	char fn[64];
	snprintf(fn, sizeof(fn), "/proc/%d/stat", (int)profiler);
	int fd = open(fn, O_RDONLY | O_CLOEXEC);
	struct timespec period = { 0, WATCHDOG_PERIOD_MS * 1000000L };
	for (;;) {
		nanosleep(&period, NULL);
		if (getppid() != profiler)
			_exit(0);
		/* 'T': stopped by a signal ('t' would be a tracing stop). */
		char st = fd >= 0 ? state_of(fd) : 0;
		if (st == 'T') {
			kill(profiler, SIGUSR2);
			kill(profiler, SIGCONT);
		}
		/* Held without a stop of its own (a debugger, the freezer):
		 * no beat for WATCHDOG_STALL_MS */
		uint64_t b = beat ? __atomic_load_n(beat, __ATOMIC_RELAXED) : 0, now = mono_ms();
		if (b != last || b == 0 || b == WATCHDOG_UNARMED || st == 'T') {
			last = b;
			since = now;
		} else if (now - since >= WATCHDOG_STALL_MS) {
			static const char msg[] = "cprof-attach: error: the profiler made no progress for "
				"2 s (held by another tracer, or frozen): killed by its watchdog, so that "
				"the kernel releases the target; no profile\n";
			if (write(2, msg, sizeof(msg) - 1) < 0) {
				/* nothing to do: the kill matters */
			}
			kill(profiler, SIGKILL);
			_exit(0);
		}
	}
}

pid_t watchdog__start(int *lifeline)
{
	pid_t profiler = getpid();
	int p[2];
	*lifeline = -1;
	if (!beat) {
		void *m = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
		beat = m == MAP_FAILED ? NULL : m;
	}
	if (pipe2(p, O_CLOEXEC) < 0)
		return -errno;
	pid_t pid = fork();
	if (pid != 0) {
		int e = errno;
		close(p[1]);
		if (pid < 0) {
			close(p[0]);
			return -e;
		}
		*lifeline = p[0];
		return pid;
	}
	close(p[0]);    /* p[1] stays open until this process is gone */
	/* The child: gone with the profiler; deaf to the terminal's job
	 * control (Ctrl-Z reaches the whole process group); nothing else of
	 * the profiler's is touched. */
	prctl(PR_SET_PDEATHSIG, SIGKILL);
	prctl(PR_SET_NAME, (unsigned long)"cprof-watchdog", 0, 0, 0);
	signal(SIGTSTP, SIG_IGN);
	signal(SIGTTIN, SIG_IGN);
	signal(SIGTTOU, SIG_IGN);
	signal(SIGINT, SIG_IGN);
	signal(SIGHUP, SIG_IGN);
	sigset_t none;
	sigemptyset(&none);
	pthread_sigmask(SIG_SETMASK, &none, NULL);
	watch(profiler);
	_exit(0);
}
