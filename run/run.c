#include "run/naming.h"
#include "run/run.h"

#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/signalfd.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "run/outfile.h"
#include "run/pattern.h"
#include "run/periods.h"
#include "run/follow.h"
#include "run/push.h"
#include "run/serve.h"
#include "run/watchdog.h"
#include "attach/proc.h"
#include "dwarf/debuginfod.h"
#include "dwarf/symbolizer.h"
#include "output/output.h"
#include "output/readers.h"
#include "sample/sampler.h"
#include "util/secret.h"
#include "util/strbuf.h"
#include "util/timeutil.h"
#include "util/xalloc.h"

struct run {
	const struct options *o;
	struct outfile *out;            /* see run/outfile.h */
	sigset_t old_mask;
	int sig_fd;
	struct sampler *sampler;
	uint64_t status_ns;             /* when the live status line was last drawn */
	int status_shown;
	const char *stop_reason;
	pid_t watchdog;                 /* see run/watchdog.h */
	int watchdog_gone;              /* it died during the run */
	int lifeline;                   /* hangs up when the watchdog is gone */
	struct periods *periods;        /* --period, --history (run/periods.h) */
	char default_name[64];          /* launch mode without -o: cprof-PID.EXT */
	struct follow *follow;          /* --pid-file, --cgroup, --unit (run/follow.h) */
	pid_t pid;                      /* ... the process sampled now */
	uint64_t started_real;          /* CLOCK_REALTIME ns: the profiler's start */
	uint64_t started_ns;            /* ... now_ns()'s clock */
	int attached_once;              /* a process was sampled (one followed may exit first) */
	uint64_t seq;                   /* --pid-file: the next file's %n, carried over */
	uint64_t dump_seq;              /* ... and the next dump's */
	unsigned restarts;              /* --pid-file: processes that followed the first */
	struct periods_stats before;    /* ... the periods' figures of those before this one
					   (under live_mu) */
	struct serve *serve;            /* --listen (run/serve.h) */
	struct push *push;              /* --push (run/push.h) */
	char *push_shown;               /* --push's URL as shown: its secrets hidden */
	struct push_auth push_auth;     /* --push-auth-file, --push-header-file */
	struct push_stats pushed;       /* its figures once it has ended */
	/* What the server's threads see of the run: the periods and the
	 * sampler while they sample (NULL between two processes), and how
	 * many of those threads hold them. */
	pthread_mutex_t live_mu;
	pthread_cond_t live_cv;
	struct periods *live;
	struct sampler *live_sampler;
	unsigned live_users;
	int serving;
	int code;                       /* exit code */
	char err[512];
};

static void errorf(const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	fputs("cprof-attach: error: ", stderr);
	vfprintf(stderr, fmt, ap);
	fputc('\n', stderr);
	va_end(ap);
}

/* SIGINT, SIGTERM and SIGHUP end the run; SIGCHLD carries ptrace stops
 * (the sampler's thread reads it).  All are blocked in every thread and
 * read from signalfds, so nothing interrupts the profiler in the middle of
 * a tick. */
static int setup_signals(struct run *r)
{
	sigset_t set;
	sigemptyset(&set);
	sigaddset(&set, SIGCHLD);
	sigaddset(&set, SIGINT);
	sigaddset(&set, SIGTERM);
	sigaddset(&set, SIGHUP);
	sigaddset(&set, SIGTSTP);
	sigaddset(&set, SIGUSR2);       /* the watchdog: we were stopped */
	sigaddset(&set, SIGUSR1);       /* --history: write it now */
	/* pthread_sigmask, never sigprocmask: the unwinder's (unwind/libunwind.c). */
	int e = pthread_sigmask(SIG_BLOCK, &set, &r->old_mask);
	if (e) {
		errno = e;
		return -e;
	}
	/* A stopped tracer stops its target's signal delivery: no job
	 * control while attached (SIGTSTP is read below and only noted). */
	signal(SIGPIPE, SIG_IGN);
	signal(SIGTTIN, SIG_IGN);
	signal(SIGTTOU, SIG_IGN);
	sigdelset(&set, SIGCHLD);
	r->sig_fd = signalfd(-1, &set, SFD_CLOEXEC | SFD_NONBLOCK);
	return r->sig_fd < 0 ? -errno : 0;
}

/* --tid names threads that must exist, checked before anything attaches:
 * a thread of one of the PIDs. */
static int check_tids(const struct options *o)
{
	for (size_t i = 0; i < o->ntids; i++) {
		size_t j = 0;
		for (; j < o->npids; j++) {
			char fn[64];
			struct stat st;
			snprintf(fn, sizeof(fn), "/proc/%d/task/%d", o->pids[j], o->tids[i]);
			if (stat(fn, &st) == 0)
				break;
		}
		if (j == o->npids) {
			if (o->npids == 1)
				errorf("--tid %d: no such thread in process %d", o->tids[i], o->pid);
			else
				errorf("--tid %d: no such thread in any of the processes", o->tids[i]);
			return -ESRCH;
		}
	}
	return 0;
}

/* A profiler run as root serving another user's process: whoever reaches
 * the address reads what root sees of it. */
static void note_root_serving(const struct run *r)
{
	char fn[64];
	struct stat st;
	snprintf(fn, sizeof(fn), "/proc/%d", (int)sampler__first_pid(r->sampler));
	if (geteuid() == 0 && stat(fn, &st) == 0 && st.st_uid != 0)
		fprintf(stderr, "cprof-attach: note: serving the profile of PID %d (uid %u) from a "
			"profiler run as root: whoever reaches %s reads its function, file and "
			"thread names\n", (int)sampler__first_pid(r->sampler), (unsigned)st.st_uid,
			serve__address(r->serve));
}

/* The profiler's resident memory, bytes (0 if unknown). */
static uint64_t rss_of(const char *statm)
{
	long pages = 0, rss = 0;
	FILE *f = fopen(statm, "re");
	if (f) {
		if (fscanf(f, "%ld %ld", &pages, &rss) != 2)
			rss = 0;
		fclose(f);
	}
	return (uint64_t)rss * (uint64_t)sysconf(_SC_PAGESIZE);
}

/* The profiler's resident memory: this process's and its watchdog's (a
 * process of its own, run/watchdog.h: 3 MB left out before). */
static uint64_t self_rss_of(pid_t watchdog)
{
	uint64_t rss = rss_of("/proc/self/statm");
	if (watchdog > 0) {
		char fn[64];
		snprintf(fn, sizeof(fn), "/proc/%d/statm", (int)watchdog);
		rss += rss_of(fn);
	}
	return rss;
}

/* The watchdog's CPU time (user and system), seconds. */
static double cpu_of(pid_t pid)
{
	unsigned long long ticks;
	if (pid <= 0 || proc__cpu_ticks(pid, &ticks) < 0)
		return 0;
	return (double)ticks / (double)sysconf(_SC_CLK_TCK);
}

/* ACC += PS: the periods' counts of one process added to those before
 * (--pid-file: the summary and /metrics count every process's files). */
static void periods_add(struct periods_stats *acc, const struct periods_stats *ps)
{
	acc->periods += ps->periods;
	acc->dumps += ps->dumps;
	acc->asks += ps->asks;
	acc->written += ps->written;
	acc->failed += ps->failed;
	acc->dropped += ps->dropped;
	acc->slices += ps->slices;
	acc->stacks_freed += ps->stacks_freed;
	acc->history_slices = ps->history_slices;
	acc->history_bytes = ps->history_bytes;
	acc->history_capped += ps->history_capped;
	acc->name_ms_max = ps->name_ms_max > acc->name_ms_max ? ps->name_ms_max : acc->name_ms_max;
	acc->named_ms_max = ps->named_ms_max > acc->named_ms_max ? ps->named_ms_max : acc->named_ms_max;
	acc->age_ms_max = ps->age_ms_max > acc->age_ms_max ? ps->age_ms_max : acc->age_ms_max;
	acc->trim_ms_max = ps->trim_ms_max > acc->trim_ms_max ? ps->trim_ms_max : acc->trim_ms_max;
	if (ps->written)
		memcpy(acc->last, ps->last, sizeof(acc->last));
}

/* The periods' figures of the whole run: those of the processes before
 * (--pid-file) and of P, the current one's (may be NULL: between two). */
static void run_periods_stats(const struct periods_stats *before, struct periods *p,
			      struct periods_stats *out)
{
	*out = *before;
	out->history_slices = out->history_bytes = 0;
	if (p) {
		struct periods_stats cur;
		periods__stats(p, &cur);
		periods_add(out, &cur);
	}
}

static const char *plural(uint64_t n, const char *one, const char *many)
{
	return n == 1 ? one : many;
}

/* Columns of the terminal on stderr (80 if it does not say). */
static size_t term_columns(void)
{
	struct winsize ws;
	if (ioctl(STDERR_FILENO, TIOCGWINSZ, &ws) == 0 && ws.ws_col > 0)
		return ws.ws_col;
	return 80;
}

/* Terminal columns S takes, at most: UTF-8 continuation bytes take none,
 * a character from U+1000 up is counted as two (it may be wide: CJK,
 * emoji); and in *BYTES the length of its longest prefix of at most MAX
 * columns. */
static size_t columns_of(const char *s, size_t max, size_t *bytes)
{
	size_t n = 0, i = 0;
	for (; s[i]; i++) {
		unsigned char c = (unsigned char)s[i];
		if ((c & 0xc0) == 0x80)
			continue;
		size_t w = c >= 0xe1 ? 2 : 1;
		if (n + w > max)
			break;
		n += w;
	}
	if (bytes)
		*bytes = i;
	return n;
}

/* The live status line: on a terminal, unless --quiet; redrawn once a
 * second in place, erased at the end.  It must never be wider than the
 * terminal: a line that wraps leaves its first part behind at every
 * redraw ("\r" returns to the start of the last row only).  So the hint
 * shrinks to fit, then the line is cut, one column short of the width
 * (a full last column wraps on some terminals). */
static void show_status(struct run *r, int final)
{
	if (r->o->quiet || !isatty(STDERR_FILENO))
		return;
	if (final) {
		if (r->status_shown)
			fputs("\r\033[K", stderr);
		return;
	}
	struct sampler_progress p;
	uint64_t now = now_ns();
	sampler__progress(r->sampler, &p);
	if (now - (r->status_ns ? r->status_ns : p.start_ns) < 1000000000ull)
		return;
	r->status_ns = now;
	r->status_shown = 1;
	double secs = (double)(now - p.start_ns) / 1e9;
	char line[4400], hint[4200];
	int n = snprintf(line, sizeof(line), "cprof-attach: %.0f s, %llu %s, %llu %s, %.1f Hz",
			 secs, (unsigned long long)p.samples, plural(p.samples, "sample", "samples"),
			 (unsigned long long)p.threads, plural(p.threads, "thread", "threads"),
			 secs > 0 ? (double)p.ticks / secs : 0.0);
	if (r->periods && n > 0 && (size_t)n < sizeof(line)) {
		/* A run without end: what it has made so far, and its memory. */
		struct periods_stats ps;
		struct push_stats pu = { 0 };
		run_periods_stats(&r->before, r->periods, &ps);
		if (r->push)
			push__stats(r->push, &pu);
		n += snprintf(line + n, sizeof(line) - (size_t)n, ", %llu %s", (unsigned long long)ps.written,
			      plural(ps.written, "file", "files"));
		if (r->serving && (size_t)n < sizeof(line))
			n += snprintf(line + n, sizeof(line) - (size_t)n, ", %llu served",
				      (unsigned long long)ps.asks);
		if (r->push && (size_t)n < sizeof(line))
			n += snprintf(line + n, sizeof(line) - (size_t)n, ", %llu pushed (%llu waiting)",
				      (unsigned long long)pu.sent, (unsigned long long)pu.queued);
		if ((size_t)n < sizeof(line))
			n += snprintf(line + n, sizeof(line) - (size_t)n, ", %.1f MiB",
				      (double)self_rss_of(r->watchdog_gone ? 0 : r->watchdog) / 1048576.0);
	}
	size_t width = term_columns() - 1, used = columns_of(line, SIZE_MAX, NULL), bytes;
	if (r->periods && !options__whole_run(r->o))
		snprintf(hint, sizeof(hint), " (Ctrl-C to stop)");
	else
		snprintf(hint, sizeof(hint), " (Ctrl-C to stop and write %s)", outfile__path(r->out));
	if (used + columns_of(hint, SIZE_MAX, NULL) > width)
		snprintf(hint, sizeof(hint), " (Ctrl-C to stop)");
	if (used + columns_of(hint, SIZE_MAX, NULL) <= width && n > 0 && (size_t)n < sizeof(line))
		snprintf(line + n, sizeof(line) - (size_t)n, "%s", hint);
	columns_of(line, width, &bytes);
	fprintf(stderr, "\r\033[K%.*s", (int)bytes, line);
	fflush(stderr);
}

static void read_signals(struct run *r)
{
	struct signalfd_siginfo si;
	while (read(r->sig_fd, &si, sizeof(si)) == sizeof(si)) {
		if (si.ssi_signo == SIGTSTP) {
			fprintf(stderr, "\r\033[Kcprof-attach: note: Ctrl-Z ignored while attached "
				"(a stopped tracer stops the target's signals); Ctrl-C ends the run\n");
			continue;
		}
		if (si.ssi_signo == SIGUSR2 && si.ssi_pid != (uint32_t)r->watchdog)
			continue;
		if (si.ssi_signo == SIGUSR1) {
			if (r->periods && r->o->history > 0)
				periods__dump(r->periods);
			continue;       /* without --history: nothing to write, not an end */
		}
		if (!r->stop_reason)
			r->stop_reason = si.ssi_signo == SIGUSR2 ? "stopped (SIGSTOP): ended rather than "
							       "hold the target" :
					 si.ssi_signo == SIGINT ? "interrupted" :
					 si.ssi_signo == SIGTERM ? "terminated" : "hung up";
	}
}

/* ---- what the HTTP server sees (run/serve.h) ------------------------------ */

static struct periods *live_acquire(void *arg)
{
	struct run *r = arg;
	pthread_mutex_lock(&r->live_mu);
	struct periods *p = r->live;
	if (p)
		r->live_users++;
	pthread_mutex_unlock(&r->live_mu);
	return p;
}

static void live_release(void *arg, struct periods *p)
{
	struct run *r = arg;
	(void)p;
	pthread_mutex_lock(&r->live_mu);
	r->live_users--;
	pthread_cond_broadcast(&r->live_cv);
	pthread_mutex_unlock(&r->live_mu);
}

static void live_show(struct run *r)
{
	pthread_mutex_lock(&r->live_mu);
	r->live = r->periods;
	r->live_sampler = r->sampler;
	pthread_mutex_unlock(&r->live_mu);
}

/* Before the periods are finished or freed: no server thread holds them
 * (those waiting for a window are answered 503). */
static void live_hide(struct run *r)
{
	pthread_mutex_lock(&r->live_mu);
	r->live = NULL;
	r->live_sampler = NULL;
	pthread_mutex_unlock(&r->live_mu);
	if (r->periods)
		periods__close(r->periods);
	pthread_mutex_lock(&r->live_mu);
	while (r->live_users)
		pthread_cond_wait(&r->live_cv, &r->live_mu);
	pthread_mutex_unlock(&r->live_mu);
}

static void metric(struct strbuf *sb, const char *name, const char *type, const char *help,
		   double v)
{
	strbuf__addf(sb, "# HELP %s %s\n# TYPE %s %s\n%s %.17g\n", name, help, name, type, name, v);
}

/* /metrics: the profiler's health, in Prometheus' text format. */
static void live_metrics(void *arg, struct strbuf *sb)
{
	struct run *r = arg;
	struct sampler_stats ss = { 0 };
	struct sampler_progress pr = { 0 };
	struct periods_stats ps = { 0 };
	uint64_t from = 0, to = 0;
	pthread_mutex_lock(&r->live_mu);
	int live = r->live != NULL;
	run_periods_stats(&r->before, r->live, &ps);
	if (live) {
		periods__sampler_stats(r->live, &ss);
		periods__kept(r->live, &from, &to);
		sampler__progress(r->live_sampler, &pr);
	}
	unsigned restarts = r->restarts;
	pthread_mutex_unlock(&r->live_mu);
	double secs = pr.start_ns && now_ns() > pr.start_ns ? (double)(now_ns() - pr.start_ns) / 1e9 : 0;
	metric(sb, "cprof_sampling", "gauge", "1 while a process is sampled, 0 between two "
	       "(--pid-file).", live);
	metric(sb, "cprof_hz", "gauge", "The sampling rate asked for (--hz).", r->o->hz);
	metric(sb, "cprof_ticks_total", "counter", "Ticks of the sampler (this process's).",
	       (double)pr.ticks);
	metric(sb, "cprof_rate_ratio", "gauge", "Ticks made over ticks due since sampling began "
	       "(1: the rate asked for).", secs > 0 ? (double)pr.ticks / (secs * r->o->hz) : 0);
	metric(sb, "cprof_samples_total", "counter", "Thread (or goroutine) samples counted.",
	       (double)pr.samples);
	metric(sb, "cprof_missed_ticks_total", "counter", "Ticks whose whole period went by while "
	       "the sampler was late.", (double)ss.missed);
	metric(sb, "cprof_rooted_ratio", "gauge", "Share of the samples whose unwinding reached "
	       "the stack's root.", ss.samples ? (double)ss.rooted / (double)ss.samples : 0);
	metric(sb, "cprof_goroutine_samples_lost_total", "counter", "Goroutine samples lost (the "
	       "goroutine moved while read, twice).",
	       (double)sampler_stats__rt(&ss, "goroutines", "lost"));
	metric(sb, "cprof_threads", "gauge", "Threads sampled now.", (double)pr.threads);
	metric(sb, "cprof_processes", "gauge", "Processes sampled now.", (double)pr.processes);
	metric(sb, "cprof_restarts_total", "counter", "Processes followed after the first "
	       "(--pid-file).", restarts);
	metric(sb, "cprof_periods_total", "counter", "Periods made (--period, --push).",
	       (double)ps.periods);
	strbuf__addf(sb, "# HELP cprof_period_files_total Period files, by result (dropped: the "
		     "writer fell behind).\n# TYPE cprof_period_files_total counter\n"
		     "cprof_period_files_total{result=\"written\"} %llu\n"
		     "cprof_period_files_total{result=\"failed\"} %llu\n"
		     "cprof_period_files_total{result=\"dropped\"} %llu\n",
		     (unsigned long long)ps.written, (unsigned long long)ps.failed,
		     (unsigned long long)ps.dropped);
	metric(sb, "cprof_history_seconds", "gauge", "Time the flight recorder holds now.",
	       to > from ? (double)(to - from) / 1e9 : 0);
	metric(sb, "cprof_history_bytes", "gauge", "Memory of the flight recorder's counts.",
	       (double)ps.history_bytes);
	metric(sb, "cprof_history_capped_seconds_total", "counter",
	       "Seconds the flight recorder dropped for its cap in bytes (64 MiB).",
	       (double)ps.history_capped);
	pthread_mutex_lock(&r->live_mu);
	if (r->push)
		push__metrics(r->push, sb);
	pthread_mutex_unlock(&r->live_mu);
	struct rusage ru;
	getrusage(RUSAGE_SELF, &ru);
	metric(sb, "process_cpu_seconds_total", "counter", "The profiler's CPU time (user and "
	       "system, its watchdog's included), seconds.",
	       (double)(ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) +
	       (double)(ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) / 1e6 + cpu_of(r->watchdog_gone ? 0 : r->watchdog));
	metric(sb, "process_resident_memory_bytes", "gauge", "The profiler's resident memory "
	       "(its watchdog's included), bytes.", (double)self_rss_of(r->watchdog_gone ? 0 : r->watchdog));
	metric(sb, "process_start_time_seconds", "gauge", "When the profiler started, unix "
	       "seconds.", (double)r->started_real / 1e9);
}

/* The state letter of process PID (/proc/PID/stat), or 0. */
static char proc_state_of(pid_t pid)
{
	struct proc_stat st;
	return proc__stat(pid, &st) < 0 ? 0 : st.state;
}

/* Waits for a reason to stop: a signal, --duration, or the targets gone. */
static void wait_for_end(struct run *r)
{
	struct sampler_progress p;
	sampler__progress(r->sampler, &p);
	/* A followed service's run is bounded from its start, across restarts. */
	uint64_t deadline = r->o->duration > 0 ? (r->follow ? r->started_ns : p.start_ns) +
			    (uint64_t)llround(r->o->duration * 1e9) : UINT64_MAX;
	/* The watchdog's death is noticed at once (its lifeline hangs up):
	 * without it a SIGSTOP of the profiler would hold the target, so the
	 * run ends (detached, written) rather than go on unguarded. */
	struct pollfd fds[4] = { { r->sig_fd, POLLIN, 0 },
				 { sampler__done_fd(r->sampler), POLLIN, 0 }, { r->lifeline, POLLIN, 0 },
				 { r->periods ? periods__wake_fd(r->periods) : -1, POLLIN, 0 } };
	while (!r->stop_reason) {
		uint64_t now = now_ns();
		if (now >= deadline) {
			r->stop_reason = "duration reached";
			break;
		}
		uint64_t left_ms = (deadline - now + 999999) / 1000000;
		int timeout = deadline == UINT64_MAX ? 1000 : (int)(left_ms > 1000 ? 1000 : left_ms);
		if (r->periods) {
			int due = periods__poll(r->periods);
			if (due < timeout)
				timeout = due;
		}
		if (poll(fds, 4, timeout) < 0 && errno != EINTR)
			break;
		if (fds[0].revents)
			read_signals(r);
		if (fds[1].revents)
			r->stop_reason = "target exited";
		if (fds[2].revents) {
			r->stop_reason = "the watchdog (cprof-watchdog) was killed: ended rather than "
					 "run where a SIGSTOP would hold the target";
			r->watchdog_gone = 1;
		} else if (r->watchdog > 0 && proc_state_of(r->watchdog) == 'T') {
			r->stop_reason = "the watchdog (cprof-watchdog) was stopped: ended rather than "
					 "run where a SIGSTOP would hold the target";
		}
		show_status(r, 0);
	}
}

/* --pid-file, --cgroup, --unit: waits until the source names a new live
 * process (asked every 200 ms: run/follow.h), or for a reason to stop (a
 * signal, --duration from the run's start).  Returns 0 with r->pid set. */
static int wait_for_pid(struct run *r)
{
	uint64_t deadline = r->o->duration > 0 ?
			    r->started_ns + (uint64_t)llround(r->o->duration * 1e9) : UINT64_MAX;
	while (!r->stop_reason) {
		pid_t pid;
		if (follow__next(r->follow, r->pid, &pid) == 0) {
			r->pid = pid;
			return 0;
		}
		uint64_t now = now_ns();
		if (now >= deadline) {
			r->stop_reason = "duration reached";
			break;
		}
		uint64_t left = (deadline - now + 999999) / 1000000;
		struct pollfd fd = { r->sig_fd, POLLIN, 0 };
		if (poll(&fd, 1, left < 200 ? (int)left : 200) > 0)
			read_signals(r);
	}
	return -1;
}

/* start_sampler, and following a service whose process exited before it
 * was attached (a short-lived ExecStartPre=, a crash at once), the next
 * one.  -EINTR: stopped while waiting for it (a signal, --duration). */
static int start_sampler(struct run *r);

static int start_followed(struct run *r)
{
	int e;
	while ((e = start_sampler(r)) == 1) {
		sampler__free(r->sampler);
		r->sampler = NULL;
		fprintf(stderr, "cprof-attach: PID %d exited before it was attached; waiting for %s "
			"to name the next\n", (int)r->pid, follow__what(r->follow));
		if (wait_for_pid(r) < 0)
			return -EINTR;
		fprintf(stderr, "cprof-attach: attached to PID %d, from %s\n", (int)r->pid,
			follow__what(r->follow));
	}
	if (e == 0)
		r->attached_once = 1;
	return e;
}

/* The command line as profiles show it: its secrets hidden (util/secret.h). */
static char *command_line(int argc, char **argv)
{
	struct strbuf sb = { 0 };
	for (int i = 0; i < argc; i++) {
		char *a = secret__shown(argv[i]);
		strbuf__addf(&sb, "%s%s", i ? " " : "", a);
		free(a);
	}
	return sb.s ? sb.s : xstrdup("");
}

/* The writer of F's row (output/formats.c); folded where F has none. */
static output_writer writer_for(enum out_format f)
{
	const struct output_format *row = &output_formats[f];
	return row->write ? row->write : output_formats[FORMAT_FOLDED].write;
}

/* Writes FR to the output and gives it its name. */
static int write_frames(struct run *r, const struct frames *fr, const struct profile_info *info)
{
	int e = writer_for(r->o->format)(outfile__fd(r->out), fr, info, r->err, sizeof(r->err));
	if (e < 0)
		errorf("cannot write the profile to %s: %s", outfile__path(r->out), r->err);
	else if ((e = outfile__commit(r->out, r->err, sizeof(r->err))) < 0)
		errorf("%s", r->err);
	return e;
}

static int write_profile(struct run *r, const struct sampler_stats *ss, int argc, char **argv)
{
	struct frames *fr = naming__stacks(r->sampler, r->o);
	if (!fr)
		return -EIO;
	char *cmdline = command_line(argc, argv);
	struct profile_info info = {
		.period_ns = options__sample_period_ns(r->o),
		.start_ns = ss->start_real_ns,
		.duration_ns = ss->end_ns - ss->start_ns,
		.comment = cmdline,
		.thread_root = r->o->thread_root,
		.process_root = r->o->processes,
		.weight_cpu = r->o->cpu,
		.syscall_leaf = r->o->syscall_leaf,
		.timeline = sampler__timeline(r->sampler),
	};
	int e = write_frames(r, fr, &info);
	free(cmdline);
	frames__free(fr);
	return e;
}

/* The summary: two lines, what was profiled and where it went, then how
 * well (rate, missed ticks, unwinding).  The rest is for --stats. */
static void print_summary(const struct run *r, const struct sampler_stats *ss)
{
	const struct target_stats *ts = &ss->target;
	uint64_t total = ss->samples;
	double secs = (double)(ss->end_ns - ss->start_ns) / 1e9;
	if (ss->jump_lost)
		fprintf(stderr, "cprof-attach: note: %llu %s of Go threads on their system stack "
			"(runtime.systemstack, runtime.morestack) lack the frames of the goroutine "
			"they worked for (it had moved on when read, or its context is unreadable): "
			"counted as not fully unwound\n", (unsigned long long)ss->jump_lost,
			plural(ss->jump_lost, "sample", "samples"));
	struct periods_stats ps = { 0 };
	if (r->periods) {
		run_periods_stats(&r->before, r->periods, &ps);
		fprintf(stderr, "cprof-attach: %llu %s and %llu %s of the history: %llu %s written, "
			"%llu not written, %llu dropped (the writer fell behind); naming paused "
			"sampling %.1f ms at most (naming took %.1f ms at most, sampling on)\n",
			(unsigned long long)ps.periods, plural(ps.periods, "period", "periods"),
			(unsigned long long)ps.dumps, plural(ps.dumps, "dump", "dumps"),
			(unsigned long long)ps.written, plural(ps.written, "file", "files"),
			(unsigned long long)ps.failed, (unsigned long long)ps.dropped, ps.name_ms_max,
			ps.named_ms_max);
	}
	if (r->serving)
		fprintf(stderr, "cprof-attach: served %llu %s on %s\n", (unsigned long long)ps.asks,
			plural(ps.asks, "profile", "profiles"), serve__address(r->serve));
	if (r->o->push)
		fprintf(stderr, "cprof-attach: pushed %llu %s to %s: %llu %s failed (retried), %llu "
			"dropped (the queue was full), %llu left unsent, %llu refused by the store "
			"(4xx: dropped)%s%s%s%s\n",
			(unsigned long long)r->pushed.sent, plural(r->pushed.sent, "profile", "profiles"),
			r->push_shown, (unsigned long long)r->pushed.failed,
			plural(r->pushed.failed, "send", "sends"), (unsigned long long)r->pushed.dropped,
			(unsigned long long)r->pushed.queued, (unsigned long long)r->pushed.refused,
			r->pushed.last_error[0] ? "; last error: " : "", r->pushed.last_error,
			r->pushed.last_refusal[0] ? "; last refusal: " : "", r->pushed.last_refusal);
	if (r->restarts)
		fprintf(stderr, "cprof-attach: %u processes followed through %s (the periods and "
			"files above count them all); the numbers below are the last one's\n", r->restarts + 1,
			follow__what(r->follow));
	const char *wrote = !options__whole_run(r->o) ?
			    (ps.written ? ps.last : "no file") : outfile__path(r->out);
	/* A runtime's profile counts its units (goroutines): say so, with
	 * the threads they ran on. */
	char gor[96] = "";
	for (size_t i = 0; i < ss->nrt && !gor[0]; i++) {
		uint64_t seen = sampler_stats__rt(ss, ss->rt[i].name, "seen");
		if (seen)
			snprintf(gor, sizeof(gor), "%llu %s on ", (unsigned long long)seen,
				 plural(seen, ss->rt[i].unit, ss->rt[i].units));
	}
	/* With --tid or --threads-matching: the threads sampled, not all. */
	uint64_t nthreads = r->o->ntids || r->o->threads_matching ? ts->threads_sampled :
			    ts->threads_seen;
	fprintf(stderr, "cprof-attach: %llu %s, %s%llu %s, %llu %s, %.2f s, %s, wrote %s%s\n",
		(unsigned long long)total, plural(total, "sample", "samples"), gor,
		(unsigned long long)nthreads, plural(nthreads, "thread", "threads"),
		(unsigned long long)ts->processes_seen,
		plural(ts->processes_seen, "process", "processes"), secs,
		r->stop_reason ? r->stop_reason : "stopped",
		r->o->period <= 0 && outfile__is_stream(r->out) ? "to " : "", wrote);
	fprintf(stderr, "cprof-attach: %.1f of %d Hz, %llu %s, %s, %.1f%% reached their root, "
		"%llu not fully unwound", secs > 0 ? (double)ts->ticks / secs : 0.0, r->o->hz,
		(unsigned long long)ss->missed, plural(ss->missed, "missed tick", "missed ticks"),
		ts->capture_perf ? "perf" : "ptrace",
		total ? 100.0 * (double)ss->rooted / (double)total : 0.0,
		(unsigned long long)ss->partial);
	fputc('\n', stderr);
}

/* What sampling cost, for benchmarks and the curious: the pause each
 * thread saw (from PTRACE_INTERRUPT to resumed), how samples were taken,
 * our CPU time, our peak memory; then what the summary leaves out. */
static void print_stats(const struct sampler_stats *ss)
{
	struct rusage ru;
	getrusage(RUSAGE_SELF, &ru);
	double cpu_ms = (double)(ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) * 1e3 +
			(double)(ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) / 1e3;
	const struct target_stats *ts = &ss->target;
	uint64_t thread_samples = ss->samples;
	fprintf(stderr, "cprof-attach: stats: capture %s; pause per thread median %.1f us, p99 %.1f us; "
		"%llu thread-samples: %llu stopped, %llu blocked, %llu carried by a later stop, "
		"%llu lost, %llu by perf events (no stop); %llu counted again from an unchanged stack (%llu of them carried by "
		"backoff, %llu uncertain); %llu frame pointers reused from a stop, %llu found on the stack; "
		"%llu blocked captures retried, %llu stacks deeper than their copy "
		"(copy grown); profiler CPU %.1f ms (%.2f ms per 1000 thread-samples); "
		"peak RSS %ld KiB; the sampling thread ran at %s",
		ts->capture_perf ? "perf" : "ptrace", ss->pause_p50_us, ss->pause_p99_us,
		(unsigned long long)thread_samples, (unsigned long long)ts->samples,
		(unsigned long long)ts->samples_blocked, (unsigned long long)ts->carried,
		(unsigned long long)ts->lost, (unsigned long long)ts->samples_perf,
		(unsigned long long)ts->samples_unchanged,
		(unsigned long long)ts->backoff_ticks, (unsigned long long)ts->backoff_uncertain,
		(unsigned long long)ts->fp_reused, (unsigned long long)ss->rbp_found,
		(unsigned long long)ts->blocked_retries,
		(unsigned long long)ss->short_copies, cpu_ms,
		thread_samples ? cpu_ms * 1000.0 / (double)thread_samples : 0.0, ru.ru_maxrss,
		ss->tracer ? ss->tracer : "?");
	fprintf(stderr, "; %.1f%% not fully unwound",
		thread_samples ? 100.0 * (double)ss->partial / (double)thread_samples : 0.0);
	if (ss->truncated)
		fprintf(stderr, "; %llu cut at --max-depth", (unsigned long long)ss->truncated);
	if (ss->idle_dropped)
		fprintf(stderr, "; %llu idle dropped (--no-idle)", (unsigned long long)ss->idle_dropped);
	if (ts->capture_perf)
		fprintf(stderr, "; perf: %llu running ticks owed to the next sample (%llu of them "
			"counted by a later capture, %llu at the last stack: no sample came), %llu stacks read on past the kernel's copy, %llu "
			"cut there, %llu samples the kernel dropped (its ring paused while read), %llu left out with no stack "
			"(inside an exec), %llu threads stopped (no stream), %llu stopped on a Go "
			"system stack for its goroutine, "
			"%llu partial stacks where a blocked thread's unwind needed registers",
			(unsigned long long)ts->perf_owed, (unsigned long long)ts->perf_owed_carried,
			(unsigned long long)ts->perf_owed_last,
			(unsigned long long)ts->perf_extended, (unsigned long long)ts->perf_cut,
			(unsigned long long)ts->perf_dropped, (unsigned long long)ts->perf_nostack,
			(unsigned long long)ts->perf_unavailable, (unsigned long long)ts->probe_stops,
			(unsigned long long)ts->need_regs_partial);
	if (ts->far_read)
		fprintf(stderr, "; %llu captures with far parts of a stack (%llu parts that "
			"changed since a running thread's last sample, not used)",
			(unsigned long long)ts->far_read, (unsigned long long)ts->far_changed);
	if (ts->execs)
		fprintf(stderr, "; %llu exec %s followed", (unsigned long long)ts->execs,
			plural(ts->execs, "call", "calls"));
	/* Each runtime's figures, as it names them. */
	for (size_t i = 0; i < ss->nrt; i++) {
		fprintf(stderr, "; %s:", ss->rt[i].name);
		for (size_t k = 0; k < ss->rt[i].n; k++)
			fprintf(stderr, "%s %llu %s", k ? "," : "",
				(unsigned long long)ss->rt[i].stat[k].value, ss->rt[i].stat[k].words);
	}
	if (ss->threads_left_out)
		fprintf(stderr, "; %llu thread-samples left out (a thread running no goroutine)",
			(unsigned long long)ss->threads_left_out);
	fputc('\n', stderr);
}

/* Launch mode ends with the command's own exit status. */
static int child_status(struct run *r)
{
	int status = sampler__exit_status(r->sampler);
	if (status == -1) {
		/* Detached and still running: wait for it, with our signals back
		 * to normal so that Ctrl-C still works. */
		pthread_sigmask(SIG_SETMASK, &r->old_mask, NULL);
		while (waitpid(sampler__first_pid(r->sampler), &status, 0) < 0 && errno == EINTR)
			;
	}
	if (WIFEXITED(status))
		return WEXITSTATUS(status);
	if (WIFSIGNALED(status))
		return 128 + WTERMSIG(status);
	return 1;
}

/* Sends what is left (5 s at most) and keeps the figures. */
static void end_push(struct run *r)
{
	pthread_mutex_lock(&r->live_mu);        /* /metrics reads it */
	struct push *p = r->push;
	r->push = NULL;
	pthread_mutex_unlock(&r->live_mu);
	if (!p)
		return;
	push__stats(p, &r->pushed);
	if (r->pushed.queued)
		fprintf(stderr, "cprof-attach: sending the %llu %s left to %s (5 s at most)\n",
			(unsigned long long)r->pushed.queued,
			plural(r->pushed.queued, "profile", "profiles"), r->push_shown);
	push__free(p, 5.0, &r->pushed);
}

static void run_free(struct run *r)
{
	if (r->lifeline >= 0)
		close(r->lifeline);
	live_hide(r);
	serve__free(r->serve);          /* its threads gone: nothing reads the run now */
	periods__free(r->periods);      /* the last period to the sink first */
	end_push(r);
	free(r->push_shown);
	push__auth_free(&r->push_auth);
	outfile__free(r->out);
	sampler__free(r->sampler);
	if (r->sig_fd >= 0)
		close(r->sig_fd);
}

static void print_notes(struct run *r)
{
	const char *n;
	while ((n = sampler__next_note(r->sampler)))
		fprintf(stderr, "cprof-attach: note: %s\n", n);
}

/* Attaches to the targets: 0; < 0 (an error, said); or 1, following a
 * service, when its process was gone before it was attached (not said:
 * start_followed waits for the next). */
static int start_sampler(struct run *r)
{
	const struct options *o = r->o;
	struct sampler_config cfg = {
		.pids = r->follow ? &r->pid : o->pids, .npids = r->follow ? 1 : o->npids, .command = o->command,
		.child_mask = &r->old_mask, .hz = o->hz,
		.period_ns = options__sample_period_ns(o), .subprocesses = o->subprocesses,
		.max_depth = o->max_depth, .no_idle = o->no_idle,
		.timeline = o->format == FORMAT_SPEEDSCOPE,
		.kernel_stacks = o->kernel_stacks, .runtime_views = !o->os_threads,
		.capture = o->capture == CAPTURE_PERF ? TARGET_CAPTURE_PERF :
			   o->capture == CAPTURE_PTRACE ? TARGET_CAPTURE_PTRACE : TARGET_CAPTURE_AUTO,
		.go_system = o->go_system, .no_interp_frames = o->no_python && o->no_php && o->no_ruby && o->no_java,
		.frames_off = o->frames_off[0] ? o->frames_off : NULL,
		.no_lines = o->no_lines,
		.tids = o->ntids ? o->tids : NULL, .ntids = o->ntids,
		.threads_re = o->threads_matching ? &o->threads_re : NULL,
		.lifeline = r->lifeline >= 0 ? &r->lifeline : NULL,
		.beat = r->watchdog > 0 ? watchdog__beat() : NULL,
	};
	int e = sampler__start(&r->sampler, &cfg, r->err, sizeof(r->err));
	print_notes(r);
	char st = e < 0 && r->follow ? proc_state_of(r->pid) : 'R';
	if (e < 0 && (!st || st == 'Z' || st == 'X'))
		return 1;       /* a followed process gone before it was attached */
	if (e < 0) {
		errorf("%s", r->err);
		r->code = o->command ? 127 : 1;
		return e;
	}
	if (!o->output && !r->default_name[0]) {  /* launch mode (or a service waited for):
						     named after the first PID */
		char *name = r->default_name;
		output__default_name(o->format, sampler__first_pid(r->sampler), name,
					sizeof(r->default_name));
		if (outfile__set_path(r->out, name, r->err, sizeof(r->err)) < 0) {
			errorf("%s", r->err);
			return -EINVAL;
		}
	}
	return 0;
}

int run__profile(const struct options *o, int argc, char **argv)
{
	struct run r = { .o = o, .sig_fd = -1, .lifeline = -1, .code = 1,
			 .live_mu = PTHREAD_MUTEX_INITIALIZER, .live_cv = PTHREAD_COND_INITIALIZER };
	struct timespec t0;
	clock_gettime(CLOCK_REALTIME, &t0);
	r.started_real = (uint64_t)t0.tv_sec * 1000000000ull + (uint64_t)t0.tv_nsec;
	struct sampler_stats ss;
	char name[64];
	int e;
	output__default_name(o->format, 0, name, sizeof(name));
	if (outfile__open(&r.out, o->output ? o->output : name, r.err, sizeof(r.err)) < 0) {
		errorf("%s", r.err);
		goto out;
	}
	if (o->ntids && check_tids(o) < 0)
		goto out;
	if (options__always_on(o) && o->output) {
		char pat[4096];       /* a bad pattern is refused before anything attaches */
		if (pattern__expand(o->output, 1, 0, 0, pat, sizeof(pat), r.err, sizeof(r.err)) < 0) {
			errorf("%s", r.err);
			goto out;
		}
	}
	if (o->listen && serve__bind(&r.serve, o, r.err, sizeof(r.err)) < 0) {
		errorf("%s", r.err);
		goto out;
	}
	if (o->push) {
		r.push_shown = secret__shown(o->push);
		if (push__read_auth(o, &r.push_auth, r.err, sizeof(r.err)) < 0) {
			errorf("%s", r.err);
			goto out;
		}
	}
	/* Signals are blocked before the sampler's thread starts, so every
	 * thread has them blocked and only the signalfds see them. */
	if (setup_signals(&r) < 0) {
		errorf("cannot set up signals: %s", strerror(errno));
		goto out;
	}
	/* Before the sampler's thread: fork() with one thread. */
	r.watchdog = watchdog__start(&r.lifeline);
	r.pid = o->pid;
	r.started_ns = now_ns();
	r.follow = follow__new(o);
	if (r.follow && !r.pid) {       /* not started yet: as after a restart */
		fprintf(stderr, "cprof-attach: %s\n", follow__waiting(r.follow));
		if (wait_for_pid(&r) < 0) {
			/* --duration: nothing came to profile, a failure; a signal
			 * (systemctl stop): what was asked */
			r.code = r.stop_reason && !strcmp(r.stop_reason, "duration reached");
			if (r.code)
				errorf("duration reached while %s: no process profiled, no file "
				       "written", follow__waiting(r.follow));
			else
				fprintf(stderr, "cprof-attach: %s while %s: no process profiled, "
					"no file written\n", r.stop_reason ? r.stop_reason : "stopped",
					follow__waiting(r.follow));
			goto out;
		}
		fprintf(stderr, "cprof-attach: attached to PID %d, from %s\n", (int)r.pid,
			follow__what(r.follow));
	}
	/* debuginfod's environment (timeouts, a server that does not answer
	 * left out) set here, before any thread of ours runs: setenv() while
	 * another thread reads the environment is a use after free.  It was
	 * set at the first naming, which now runs beside the sampler. */
	debuginfod__prepare();
again:
	if ((e = start_followed(&r)) == -EINTR) {
		r.code = !r.attached_once && !strcmp(r.stop_reason, "duration reached");
		if (r.code)
			errorf("duration reached while waiting for %s: no process profiled, no file "
			       "written", follow__what(r.follow));
		else
			fprintf(stderr, "cprof-attach: %s while waiting for %s: %u %s followed\n",
				r.stop_reason, follow__what(r.follow), r.restarts + r.attached_once,
				plural(r.restarts + r.attached_once, "process", "processes"));
		goto out;
	}
	if (e < 0)
		goto out;
	char *cmdline = command_line(argc, argv);
	if (options__always_on(o) &&
	    periods__new(&r.periods, o, o->output ? o->output : r.default_name, r.sampler,
			 sampler__first_pid(r.sampler), writer_for(o->format), cmdline, r.err,
			 sizeof(r.err)) < 0) {
		free(cmdline);
		sampler__stop(r.sampler);
		errorf("%s", r.err);
		goto out;
	}
	free(cmdline);
	if (r.periods)
		periods__set_seq(r.periods, r.seq, r.dump_seq);
	if (o->push && !r.push) {
		char comm[64] = "";
		proc__comm(sampler__first_pid(r.sampler), sampler__first_pid(r.sampler), comm);
		if (push__new(&r.push, o, &r.push_auth, sampler__first_pid(r.sampler), comm, r.err,
			      sizeof(r.err)) < 0) {
			sampler__stop(r.sampler);
			errorf("%s", r.err);
			goto out;
		}
	} else if (r.push) {
		push__set_pid(r.push, sampler__first_pid(r.sampler));
	}
	if (r.periods && r.push)
		periods__set_sink(r.periods, push__period, r.push, o->output_given);
	else if (r.periods && options__served_only(o))      /* served, not pushed */
		periods__set_sink(r.periods, NULL, NULL, 0);
	live_show(&r);
	if (r.serve && !r.serving) {
		struct serve_source src = { &r, live_acquire, live_release, live_metrics };
		if (serve__start(r.serve, &src, r.err, sizeof(r.err)) < 0) {
			live_hide(&r);
			sampler__stop(r.sampler);
			errorf("%s", r.err);
			goto out;
		}
		r.serving = 1;
		fprintf(stderr, "cprof-attach: serving %s%s\n", serve__address(r.serve),
			strncmp(serve__address(r.serve), "unix:", 5) ? "/debug/pprof/" : "");
		note_root_serving(&r);
	}
	wait_for_end(&r);
	live_hide(&r);
	sampler__stop(r.sampler);
	if (r.follow && sampler__targets_exited(r.sampler) &&
	    (!r.stop_reason || !strcmp(r.stop_reason, "target exited"))) {
		/* A service that restarts: this process's last period, then
		 * the next process the file names, its files going on. */
		sampler__stats(r.sampler, &ss);
		periods__finish(r.periods);
		r.seq = periods__seq(r.periods, &r.dump_seq);
		show_status(&r, 1);
		fprintf(stderr, "cprof-attach: PID %d exited after %llu samples; waiting for %s to "
			"name the next\n", (int)r.pid, (unsigned long long)ss.samples,
			follow__what(r.follow));
		struct periods_stats ps;
		periods__stats(r.periods, &ps);
		pthread_mutex_lock(&r.live_mu);
		periods_add(&r.before, &ps);
		pthread_mutex_unlock(&r.live_mu);
		periods__free(r.periods);
		r.periods = NULL;
		sampler__free(r.sampler);
		r.sampler = NULL;
		r.stop_reason = NULL;
		if (wait_for_pid(&r) == 0) {
			r.restarts++;
			fprintf(stderr, "cprof-attach: attached to PID %d, from %s\n", (int)r.pid,
				follow__what(r.follow));
			goto again;
		}
		fprintf(stderr, "cprof-attach: %s while waiting for %s: %u %s followed; the "
			"periods' files are written\n", r.stop_reason ? r.stop_reason : "stopped",
			follow__what(r.follow), r.restarts + 1, plural(r.restarts + 1, "process", "processes"));
		r.code = 0;
		goto out;
	}
	if (sampler__targets_exited(r.sampler) && (!r.stop_reason || !strcmp(r.stop_reason, "duration reached")))
		r.stop_reason = "target exited";
	if (sampler__failure(r.sampler))
		r.stop_reason = sampler__failure(r.sampler);
	show_status(&r, 1);
	print_notes(&r);
	sampler__stats(r.sampler, &ss);
	if (r.periods)
		periods__finish(r.periods);
	end_push(&r);
	/* With --period the periods' files are the profile; with --history
	 * alone the whole run's goes to the pattern's next name. */
	if (r.periods && o->period <= 0 && o->output && pattern__is(o->output)) {
		char final_name[4096];
		if (periods__next_name(r.periods, final_name, sizeof(final_name), r.err,
				       sizeof(r.err)) < 0 ||
		    outfile__set_path(r.out, final_name, r.err, sizeof(r.err)) < 0) {
			errorf("%s", r.err);
			goto out;
		}
	}
	if (options__whole_run(o) && write_profile(&r, &ss, argc, argv) < 0)
		goto out;
	print_summary(&r, &ss);
	if (o->stats)
		print_stats(&ss);
	r.code = o->command ? child_status(&r) : 0;
	/* A run whose options dropped every sample it took is not a result:
	 * say why, and fail.  (A run too short for a tick is not that.) */
	int filtered = (o->ntids || o->threads_matching) && ss.target.ticks > 0;
	if (ss.samples == 0 && r.code == 0 && (ss.idle_dropped || filtered)) {
		const struct target_stats *ts = &ss.target;
		if (ss.idle_dropped)
			errorf("no samples: every sample was of a sleeping or stopped thread, "
			       "dropped by --no-idle");
		else if (ts->threads_sampled)
			errorf("no samples: %llu %s matched --tid or --threads-matching, but none of "
			       "%s ticks was counted (%llu thread-ticks lost; --stats says how)",
			       (unsigned long long)ts->threads_sampled,
			       plural(ts->threads_sampled, "thread", "threads"),
			       ts->threads_sampled == 1 ? "its" : "their", (unsigned long long)ts->lost);
		else
			errorf("no samples: no thread matched --tid or --threads-matching");
		r.code = 1;
	}
	if (sampler__failure(r.sampler)) {
		errorf("sampling stopped early: %s; the profile has what was counted before",
		       sampler__failure(r.sampler));
		r.code = 1;
	}
out:
	if (r.watchdog > 0) {
		kill(r.watchdog, SIGKILL);
		waitpid(r.watchdog, NULL, 0);
	}
	follow__free(r.follow);
	run_free(&r);
	return r.code;
}

int run__convert(const struct options *o)
{
	struct run r = { .o = o, .sig_fd = -1, .code = 1 };
	FILE *in = strcmp(o->convert, "-") == 0 ? stdin : fopen(o->convert, "re");
	if (!in) {
		errorf("cannot read %s: %s", o->convert, strerror(errno));
		return 1;
	}
	struct frames *fr = readers__any(in, o->convert, r.err, sizeof(r.err));
	if (in != stdin)
		fclose(in);
	if (!fr) {
		errorf("%s", r.err);
		return 1;
	}
	if (outfile__open(&r.out, o->output, r.err, sizeof(r.err)) < 0) {
		errorf("%s", r.err);
	} else {
		struct profile_info info = { .period_ns = options__sample_period_ns(o),
					     .comment = o->convert, .thread_root = o->thread_root,
					     .process_root = o->processes, .weight_cpu = o->cpu };
		if (write_frames(&r, fr, &info) == 0)
			r.code = 0;
	}
	frames__free(fr);
	run_free(&r);
	return r.code;
}
