#include "cli/profile.h"

#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <math.h>
#include <poll.h>
#include <pthread.h>
#include <regex.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/signalfd.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/timerfd.h>
#include <sys/wait.h>
#include <unistd.h>

#include "attach/maps.h"
#include "attach/target.h"
#include "cli/outfile.h"
#include "dwarf/symbolizer.h"
#include "output/output.h"
#include "output/stacks.h"
#include "unwind/unwinder.h"
#include "util/strbuf.h"
#include "util/timeutil.h"

struct run {
	const struct options *o;
	struct outfile *out;            /* see cli/outfile.h */
	sigset_t old_mask;
	int sig_fd, timer_fd;
	struct target *t;
	struct modules *ms;
	struct unwinder *uw;
	struct stacks *st;
	uint64_t *pcs;
	uint64_t start_ns, start_real_ns, end_ns;
	uint64_t missed, partial, truncated, rooted, short_copies, idle_dropped;
	uint64_t status_ns;             /* when the live status line was last drawn */
	uint64_t period_ns, next_slot, next_tick_ns;  /* the ticks' schedule, see arm_next_tick */
	uint64_t rng;
	bool fixed_ticks;       /* CPROF_TICK_JITTER=0: evenly spaced ticks */
	int status_shown;
	const char *stop_reason;
	pid_t tracer_tid;
	int sampled;                    /* the tracer thread got to the end */
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

/* SIGCHLD carries ptrace stops; SIGINT, SIGTERM and SIGHUP end the run.
 * All are blocked and read from a signalfd, so nothing interrupts the
 * profiler in the middle of a tick. */
static int setup_signals(struct run *r)
{
	sigset_t set;
	sigemptyset(&set);
	sigaddset(&set, SIGCHLD);
	sigaddset(&set, SIGINT);
	sigaddset(&set, SIGTERM);
	sigaddset(&set, SIGHUP);
	if (sigprocmask(SIG_BLOCK, &set, &r->old_mask) < 0)
		return -errno;
	signal(SIGPIPE, SIG_IGN);
	r->sig_fd = signalfd(-1, &set, SFD_CLOEXEC | SFD_NONBLOCK);
	return r->sig_fd < 0 ? -errno : 0;
}

static int setup_timer(struct run *r)
{
	r->timer_fd = timerfd_create(CLOCK_MONOTONIC, TFD_CLOEXEC | TFD_NONBLOCK);
	return r->timer_fd < 0 ? -errno : 0;
}

/* A fixed-period sampler locks step with periodic work in the target (a
 * loop that switches every 10 ms, sampled every 10 ms, is always caught in
 * the same phase).  So tick K fires at a random moment of its own slot:
 * start + (K + u) x period, u uniform in [0, 1).  Slots never drift, the
 * average rate is exactly the rate asked for, and no phase is favoured.
 * The gap between two ticks is between 0 and two periods. */
static uint64_t next_random(struct run *r)
{
	r->rng ^= r->rng << 13;         /* xorshift64 */
	r->rng ^= r->rng >> 7;
	r->rng ^= r->rng << 17;
	return r->rng;
}

static int arm_next_tick(struct run *r)
{
	uint64_t u = r->fixed_ticks ? 0 : next_random(r) % r->period_ns;
	r->next_tick_ns = r->start_ns + r->next_slot * r->period_ns + u;
	struct itimerspec its = {
		.it_value = { (time_t)(r->next_tick_ns / 1000000000ull),
			      (long)(r->next_tick_ns % 1000000000ull) },
	};
	return timerfd_settime(r->timer_fd, TFD_TIMER_ABSTIME, &its, NULL) < 0 ? -errno : 0;
}

/* Starts the ticks, once attached and ready: attaching is not sampling
 * time.  Call with r->start_ns set. */
static int start_timer(struct run *r)
{
	r->period_ns = 1000000000ull / (uint64_t)r->o->hz;
	r->rng = r->start_ns ^ ((uint64_t)getpid() << 32) ^ 0x9e3779b97f4a7c15ull;
	/* For the tests only: they show the aliasing a fixed period causes. */
	const char *j = getenv("CPROF_TICK_JITTER");
	r->fixed_ticks = j && strcmp(j, "0") == 0;
	r->next_slot = 0;
	return arm_next_tick(r);
}

static int start_target(struct run *r)
{
	int e;
	if (r->o->command)
		e = target__launch(&r->t, r->o->command, &r->old_mask, r->err, sizeof(r->err));
	else
		e = target__attach(&r->t, r->o->pid, r->err, sizeof(r->err));
	if (e < 0)
		errorf("%s", r->err);
	return e;
}

/* Unwinds one capture and counts it (a capture_fn, see attach/target.h). */
static int take_capture(void *arg, const struct capture *c)
{
	struct run *r = arg;
	size_t depth;
	if (r->o->no_idle && c->state != 'R' && c->state != 'D') {
		r->idle_dropped += c->ticks;    /* sleeping or stopped: not wanted */
		return 0;
	}
	enum unwind_status s = unwinder__unwind(r->uw, c, r->pcs, (size_t)r->o->max_depth + 1, &depth);
	if (s == UNWIND_NEED_REGS)
		return -EAGAIN;
	/* Counted in samples (a capture can stand for several ticks), as the
	 * summary's total is. */
	if (s == UNWIND_PARTIAL || s == UNWIND_STACK_SHORT)
		r->partial += c->ticks;
	if (s == UNWIND_TRUNCATED)
		r->truncated += c->ticks;
	if (s == UNWIND_COMPLETE)
		r->rooted += c->ticks;
	if (s == UNWIND_STACK_SHORT) {
		r->short_copies++;
		target__stack_too_small(r->t, c->tid);
	}
	struct stack st = { .slot = c->slot, .state = c->state, .pcs = r->pcs, .n = depth,
			    .count = c->ticks, .cpu_ns = c->cpu_ns };
	stacks__add(r->st, &st);
	return 0;
}

/* --tid and --threads-matching (a thread_filter_fn, see attach/target.h). */
static int wanted_thread(void *arg, pid_t tid, const char *name)
{
	const struct options *o = arg;
	if (o->ntids) {
		size_t i = 0;
		while (i < o->ntids && o->tids[i] != tid)
			i++;
		if (i == o->ntids)
			return 0;
	}
	return !o->threads_matching || regexec(&o->threads_re, name, 0, NULL, 0) == 0;
}

/* --tid names threads that must exist, checked before anything attaches. */
static int check_tids(const struct options *o)
{
	for (size_t i = 0; i < o->ntids; i++) {
		char fn[64];
		struct stat st;
		snprintf(fn, sizeof(fn), "/proc/%d/task/%d", o->pid, o->tids[i]);
		if (stat(fn, &st) < 0) {
			errorf("--tid %d: no such thread in process %d", o->tids[i], o->pid);
			return -ESRCH;
		}
	}
	return 0;
}

/* The live status line: on a terminal, unless --quiet; redrawn once a
 * second in place, erased at the end. */
static void show_status(struct run *r, int final)
{
	if (r->o->quiet || !isatty(STDERR_FILENO))
		return;
	uint64_t now = now_ns();
	if (final) {
		if (r->status_shown)
			fputs("\r\033[K", stderr);
		return;
	}
	if (now - (r->status_ns ? r->status_ns : r->start_ns) < 1000000000ull)
		return;
	r->status_ns = now;
	r->status_shown = 1;
	const struct target_stats *ts = target__stats(r->t);
	double secs = (double)(now - r->start_ns) / 1e9;
	fprintf(stderr, "\r\033[Kcprof-attach: %.0f s, %llu samples, %llu threads, %.1f Hz "
		"(Ctrl-C to stop and write %s)", secs, (unsigned long long)stacks__total(r->st),
		(unsigned long long)ts->threads_seen, secs > 0 ? (double)ts->ticks / secs : 0.0,
		outfile__path(r->out));
	fflush(stderr);
}

/* A tick is due.  If we are so late that later slots have ended too, those
 * ticks are missed (counted, not stretched into a lower rate). */
static void tick(struct run *r)
{
	uint64_t expirations;
	if (read(r->timer_fd, &expirations, sizeof(expirations)) != sizeof(expirations))
		return;
	uint64_t now = now_ns();
	r->next_slot++;
	while (r->start_ns + (r->next_slot + 1) * r->period_ns <= now) {
		r->next_slot++;
		r->missed++;
	}
	arm_next_tick(r);
	if (!target__ready(r->t))
		return;
	if (modules__count(r->ms) == 0)
		modules__refresh(r->ms);        /* launch mode: the program is there now */
	target__sample(r->t);
}

static void read_signals(struct run *r)
{
	struct signalfd_siginfo si;
	/* Most wake-ups are SIGCHLD for a stopped thread: take it (and resume
	 * the thread) before reading the signalfd, which can wait. */
	target__poll(r->t);
	while (read(r->sig_fd, &si, sizeof(si)) == sizeof(si)) {
		if (si.ssi_signo == SIGCHLD)
			continue;
		if (!r->stop_reason)
			r->stop_reason = si.ssi_signo == SIGINT ? "interrupted" :
					 si.ssi_signo == SIGTERM ? "terminated" : "hung up";
	}
	target__poll(r->t);
}

static void sample_loop(struct run *r)
{
	uint64_t deadline = r->o->duration > 0 ?
		r->start_ns + (uint64_t)llround(r->o->duration * 1e9) : UINT64_MAX;
	struct pollfd fds[2] = { { r->sig_fd, POLLIN, 0 }, { r->timer_fd, POLLIN, 0 } };
	while (!r->stop_reason) {
		uint64_t now = now_ns();
		if (now >= deadline) {
			r->stop_reason = "duration reached";
			break;
		}
		uint64_t left_ms = (deadline - now + 999999) / 1000000;
		int timeout = deadline == UINT64_MAX ? -1 : (int)(left_ms > 1000 ? 1000 : left_ms);
		if (poll(fds, 2, timeout) < 0 && errno != EINTR)
			break;
		if (fds[0].revents)
			read_signals(r);
		if (fds[1].revents)
			tick(r);
		show_status(r, 0);
		/* Events seen inside a tick are handled there; check the end
		 * after both. */
		if (target__end(r->t) == TARGET_EXITED)
			r->stop_reason = "target exited";
		else if (target__end(r->t) == TARGET_EXECED)
			r->stop_reason = "target called exec(): the program changed, stopped there";
	}
}

static struct thread_label *thread_labels(const struct target *t)
{
	size_t n = target__nslots(t);
	struct thread_label *l = xcalloc(n ? n : 1, sizeof(*l));
	for (size_t i = 0; i < n; i++)
		l[i] = (struct thread_label){ target__slot_tid(t, (uint32_t)i),
					      target__slot_name(t, (uint32_t)i) };
	return l;
}

static char *command_line(int argc, char **argv)
{
	struct strbuf sb = { 0 };
	for (int i = 0; i < argc; i++)
		strbuf__addf(&sb, "%s%s", i ? " " : "", argv[i]);
	return sb.s ? sb.s : xstrdup("");
}

typedef int (*writer_fn)(int, const struct stacks *, struct symbolizer *,
			 const struct profile_info *, char *, size_t);

static writer_fn writer_for(enum out_format f)
{
	switch (f) {
	case FORMAT_PPROF: return pprof__write;
	case FORMAT_SVG: return svg__write;
	case FORMAT_SPEEDSCOPE: return speedscope__write;
	default: return folded__write;
	}
}

static bool func_start(void *uw, uint64_t addr, uint64_t *start)
{
	return uw && unwinder__func_start(uw, addr, start);
}

static int write_profile(struct run *r, int argc, char **argv)
{
	symbolizer__set_debug_dirs(r->o->debug_dirs, r->o->ndebug_dirs);
	struct symbolizer *sym = symbolizer__new(r->ms, r->err, sizeof(r->err));
	if (!sym) {
		errorf("%s", r->err);
		return -EIO;
	}
	symbolizer__set_func_start(sym, func_start, r->uw);
	char *cmdline = command_line(argc, argv);
	struct thread_label *labels = thread_labels(r->t);
	struct profile_info info = {
		.period_ns = 1000000000ull / (uint64_t)r->o->hz,
		.start_ns = r->start_real_ns,
		.duration_ns = r->end_ns - r->start_ns,
		.comment = cmdline,
		.threads = labels,
		.nthreads = target__nslots(r->t),
		.thread_root = r->o->thread_root,
		.weight_cpu = r->o->cpu,
	};
	int e = writer_for(r->o->format)(outfile__fd(r->out), r->st, sym, &info, r->err,
					 sizeof(r->err));
	if (e < 0)
		errorf("cannot write the profile to %s: %s", outfile__path(r->out), r->err);
	else if ((e = outfile__commit(r->out, r->err, sizeof(r->err))) < 0)
		errorf("%s", r->err);
	free(labels);
	free(cmdline);
	symbolizer__free(sym);
	return e;
}

static void print_summary(const struct run *r)
{
	const struct target_stats *ts = target__stats(r->t);
	uint64_t total = stacks__total(r->st);
	double secs = (double)(r->end_ns - r->start_ns) / 1e9;
	fprintf(stderr, "cprof-attach: %llu samples, %llu threads, %.2f s, %.1f Hz achieved "
		"(%d requested), %llu missed ticks, %llu not fully unwound (%.1f%%), "
		"%.1f%% reached their root",
		(unsigned long long)total, (unsigned long long)ts->threads_seen, secs,
		secs > 0 ? (double)ts->ticks / secs : 0.0, r->o->hz,
		(unsigned long long)r->missed, (unsigned long long)r->partial,
		total ? 100.0 * (double)r->partial / (double)total : 0.0,
		total ? 100.0 * (double)r->rooted / (double)total : 0.0);
	if (r->truncated)
		fprintf(stderr, ", %llu cut at --max-depth", (unsigned long long)r->truncated);
	if (r->idle_dropped)
		fprintf(stderr, ", %llu idle dropped (--no-idle)", (unsigned long long)r->idle_dropped);
	fprintf(stderr, ", %llu taken without stopping the thread, %s, wrote %s%s\n",
		(unsigned long long)ts->samples_blocked,
		r->stop_reason ? r->stop_reason : "stopped",
		outfile__is_stream(r->out) ? "to " : "", outfile__path(r->out));
}

/* What sampling cost, for benchmarks and the curious: the pause each
 * thread saw (from PTRACE_INTERRUPT to resumed), our CPU time, our peak
 * memory. */
static void print_stats(const struct run *r)
{
	struct rusage ru;
	getrusage(RUSAGE_SELF, &ru);
	double cpu_ms = (double)(ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) * 1e3 +
			(double)(ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) / 1e3;
	const struct target_stats *ts = target__stats(r->t);
	uint64_t thread_samples = stacks__total(r->st);
	fprintf(stderr, "cprof-attach: stats: pause per thread median %.1f us, p99 %.1f us; "
		"%llu thread-samples: %llu stopped, %llu blocked, %llu carried by a later stop, "
		"%llu lost; %llu blocked captures retried, %llu stacks deeper than their copy "
		"(copy grown); profiler CPU %.1f ms (%.2f ms per 1000 thread-samples); "
		"peak RSS %ld KiB\n",
		target__pause_quantile(r->t, 0.5), target__pause_quantile(r->t, 0.99),
		(unsigned long long)thread_samples, (unsigned long long)ts->samples,
		(unsigned long long)ts->samples_blocked, (unsigned long long)ts->carried,
		(unsigned long long)ts->lost, (unsigned long long)ts->blocked_retries,
		(unsigned long long)r->short_copies, cpu_ms,
		thread_samples ? cpu_ms * 1000.0 / (double)thread_samples : 0.0, ru.ru_maxrss);
}

/* Launch mode ends with the command's own exit status. */
static int child_status(struct run *r)
{
	int status = target__exit_status(r->t);
	if (target__end(r->t) != TARGET_EXITED) {
		/* Detached and still running: wait for it, with our signals back
		 * to normal so that Ctrl-C still works. */
		sigprocmask(SIG_SETMASK, &r->old_mask, NULL);
		while (waitpid(target__pid(r->t), &status, 0) < 0 && errno == EINTR)
			;
	}
	if (WIFEXITED(status))
		return WEXITSTATUS(status);
	if (WIFSIGNALED(status))
		return 128 + WTERMSIG(status);
	return 1;
}

static void run_free(struct run *r)
{
	outfile__free(r->out);
	stacks__free(r->st);
	unwinder__free(r->uw);
	modules__free(r->ms);
	target__free(r->t);
	free(r->pcs);
	if (r->sig_fd >= 0)
		close(r->sig_fd);
	if (r->timer_fd >= 0)
		close(r->timer_fd);
}

/* Waits (at most a second) until thread TID of ours is gone for good:
 * pthread_join returns before the kernel's exit of the thread has run its
 * ptrace part (the detach), and we promise an untraced target once we
 * report. */
static void wait_thread_gone(pid_t tid)
{
	char fn[64];
	struct stat st;
	snprintf(fn, sizeof(fn), "/proc/self/task/%d", tid);
	for (int i = 0; i < 1000 && stat(fn, &st) == 0; i++)
		usleep(1000);
}

/* The tracer thread needs the CPU briefly and on time: a late tick is a
 * missed tick, and every thread we stop waits for us.  On a machine the
 * target keeps busy (more runnable threads than CPUs) the scheduler would
 * let it wait its turn behind them, so where we may (root, CAP_SYS_NICE)
 * it runs at nice -10: a larger share when it is runnable, which it seldom
 * is, and no change to the target's own priorities. */
static void raise_priority(void)
{
	int old = getpriority(PRIO_PROCESS, 0);   /* this thread, on Linux */
	if (old > -10)
		setpriority(PRIO_PROCESS, 0, -10);
}

/* The tracer thread: attaches, samples, and by returning detaches (see
 * attach/target.h). */
static void *tracer_main(void *arg)
{
	struct run *r = arg;
	r->tracer_tid = gettid();
	raise_priority();
	if (start_target(r) < 0) {
		r->code = r->o->command ? 127 : 1;
		return NULL;
	}
	if (!r->o->output) {
		char name[64];
		snprintf(name, sizeof(name), "cprof-%d.pprof", target__pid(r->t));
		if (outfile__set_path(r->out, name, r->err, sizeof(r->err)) < 0) {
			errorf("%s", r->err);
			return NULL;
		}
	}
	r->ms = modules__new(target__pid(r->t));
	if (!r->o->command)
		modules__refresh(r->ms);
	r->uw = unwinder__new(r->ms);
	r->st = stacks__new();
	r->pcs = xcalloc((size_t)r->o->max_depth + 2, sizeof(*r->pcs));
	if (!r->uw || !r->st) {
		errorf("cannot set up the unwinder");
		return NULL;
	}
	target__set_capture_fn(r->t, take_capture, r);
	target__set_period(r->t, 1000000000ull / (uint64_t)r->o->hz);
	if (r->o->ntids || r->o->threads_matching)
		target__set_filter(r->t, wanted_thread, (void *)r->o);
	r->start_ns = now_ns();
	if (start_timer(r) < 0) {
		errorf("cannot start the timer: %s", strerror(errno));
		return NULL;
	}
	r->start_real_ns = realtime_ns();
	sample_loop(r);
	r->end_ns = now_ns();
	show_status(r, 1);
	target__release(r->t);
	r->sampled = 1;
	return NULL;
}

int profile__run(const struct options *o, int argc, char **argv)
{
	struct run r = { .o = o, .sig_fd = -1, .timer_fd = -1, .code = 1 };
	pthread_t tracer;
	char name[64];
	snprintf(name, sizeof(name), "cprof-%d.pprof", o->pid);
	if (outfile__open(&r.out, o->output ? o->output : name, r.err, sizeof(r.err)) < 0) {
		errorf("%s", r.err);
		goto out;
	}
	if (o->ntids && check_tids(o) < 0)
		goto out;
	/* Signals are blocked before the tracer thread starts, so both threads
	 * have them blocked and only the signalfd sees them. */
	if (setup_signals(&r) < 0 || setup_timer(&r) < 0) {
		errorf("cannot set up signals and timer: %s", strerror(errno));
		goto out;
	}
	if (pthread_create(&tracer, NULL, tracer_main, &r) != 0) {
		errorf("cannot start the tracer thread");
		goto out;
	}
	pthread_join(tracer, NULL);
	wait_thread_gone(r.tracer_tid);
	if (!r.sampled)
		goto out;
	if (write_profile(&r, argc, argv) < 0) {
		r.code = 1;
		goto out;
	}
	print_summary(&r);
	if (o->stats)
		print_stats(&r);
	r.code = o->command ? child_status(&r) : 0;
out:
	run_free(&r);
	return r.code;
}

/* Adds one folded line ("root;...;leaf COUNT") to ST; returns 0, or -1 if
 * it is not one. */
static int add_folded_line(struct stacks *st, struct symbolizer *names, char *line,
			   uint64_t **pcs, size_t *cap)
{
	line[strcspn(line, "\r\n")] = '\0';
	char *sp = strrchr(line, ' '), *end;
	if (!sp || sp == line)
		return -1;
	errno = 0;
	unsigned long long count = strtoull(sp + 1, &end, 10);
	if (errno || end == sp + 1 || *end)
		return -1;
	*sp = '\0';
	size_t n = 1;
	for (char *p = line; *p; p++)
		n += *p == ';';
	if (n > *cap) {
		*cap = n * 2;
		*pcs = xrealloc(*pcs, *cap * sizeof(**pcs));
	}
	size_t i = n;
	for (char *frame = line, *next; frame; frame = next) {
		next = strchr(frame, ';');
		if (next)
			*next++ = '\0';
		(*pcs)[--i] = symbolizer__name_addr(names, frame);  /* leaf first */
	}
	struct stack s = { .state = 'R', .pcs = *pcs, .n = n, .count = count };
	return stacks__add(st, &s) < 0 ? -1 : 0;
}

int profile__convert(const struct options *o)
{
	struct run r = { .o = o, .sig_fd = -1, .timer_fd = -1, .code = 1 };
	FILE *in = strcmp(o->convert, "-") == 0 ? stdin : fopen(o->convert, "re");
	if (!in) {
		errorf("cannot read %s: %s", o->convert, strerror(errno));
		return 1;
	}
	struct symbolizer *names = symbolizer__new_names();
	r.st = stacks__new();
	char *line = NULL;
	size_t len = 0, cap = 0, lineno = 0;
	uint64_t *pcs = NULL;
	int bad = 0;
	while (!bad && getline(&line, &len, in) > 0) {
		lineno++;
		if (line[0] == '\n' || line[0] == '#')
			continue;
		if (add_folded_line(r.st, names, line, &pcs, &cap) < 0) {
			errorf("%s:%zu: not a folded stack (\"frame;frame;... COUNT\")", o->convert, lineno);
			bad = 1;
		}
	}
	if (in != stdin)
		fclose(in);
	if (!bad && outfile__open(&r.out, o->output, r.err, sizeof(r.err)) < 0) {
		errorf("%s", r.err);
	} else if (!bad) {
		struct profile_info info = { .period_ns = 1000000000ull / (uint64_t)o->hz,
					     .comment = o->convert };
		int e = writer_for(o->format)(outfile__fd(r.out), r.st, names, &info, r.err,
					      sizeof(r.err));
		if (e < 0)
			errorf("cannot write %s: %s", outfile__path(r.out), r.err);
		else if ((e = outfile__commit(r.out, r.err, sizeof(r.err))) < 0)
			errorf("%s", r.err);
		else
			r.code = 0;
	}
	free(line);
	free(pcs);
	symbolizer__free(names);
	run_free(&r);
	return r.code;
}
