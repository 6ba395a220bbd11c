#include "cli/run.h"

#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <math.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/signalfd.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "dwarf/symbolizer.h"
#include "output/output.h"
#include "output/readers.h"
#include "sample/sampler.h"
#include "util/strbuf.h"
#include "util/timeutil.h"
#include "util/xalloc.h"

struct run {
	const struct options *o;
	char output[4096];
	char tmp[4200];                 /* the output's temporary name */
	int out_fd;
	sigset_t old_mask;
	int sig_fd;
	struct sampler *sampler;
	uint64_t status_ns;             /* when the live status line was last drawn */
	int status_shown;
	const char *stop_reason;
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

/* The output is written to an unnamed file (O_TMPFILE) in its directory,
 * given a name only when complete: no half-written profile is ever left,
 * not even if we are SIGKILLed.  Where the filesystem has no O_TMPFILE, a
 * hidden temporary name is used instead.  Opened before we attach, so an
 * unwritable path is refused with the target untouched. */
static int open_output(struct run *r)
{
	char dir[4096];
	snprintf(dir, sizeof(dir), "%s", r->output);
	char *d = dirname(dir);
	struct stat st;
	if (stat(r->output, &st) == 0 && S_ISDIR(st.st_mode)) {
		errorf("cannot write the profile to %s: it is a directory", r->output);
		return -EISDIR;
	}
	r->out_fd = open(d, O_TMPFILE | O_WRONLY | O_CLOEXEC, 0644);
	if (r->out_fd >= 0 || (errno != EOPNOTSUPP && errno != EISDIR && errno != EINVAL)) {
		r->tmp[0] = '\0';
	} else {
		snprintf(r->tmp, sizeof(r->tmp), "%s/.cprof-attach.XXXXXX", d);
		r->out_fd = mkostemp(r->tmp, O_CLOEXEC);
		if (r->out_fd >= 0)
			fchmod(r->out_fd, 0644);
	}
	if (r->out_fd < 0) {
		int e = errno;
		errorf("cannot write the profile to %s: %s", r->output,
		       e == ENOENT ? "its directory does not exist" : strerror(e));
		r->tmp[0] = '\0';
		return -e;
	}
	return 0;
}

/* Gives the complete output its name.  An unnamed file is linked under a
 * temporary name first, because linkat() will not replace an existing
 * file and rename() will. */
static int name_output(struct run *r)
{
	if (!r->tmp[0]) {
		char proc[64], dir[4096];
		snprintf(proc, sizeof(proc), "/proc/self/fd/%d", r->out_fd);
		snprintf(dir, sizeof(dir), "%s", r->output);
		snprintf(r->tmp, sizeof(r->tmp), "%s/.cprof-attach.%d", dirname(dir), (int)getpid());
		unlink(r->tmp);
		if (linkat(AT_FDCWD, proc, AT_FDCWD, r->tmp, AT_SYMLINK_FOLLOW) < 0) {
			r->tmp[0] = '\0';
			return -errno;
		}
	}
	return rename(r->tmp, r->output) < 0 ? -errno : 0;
}

static void drop_output(struct run *r)
{
	if (r->out_fd >= 0)
		close(r->out_fd);
	if (r->tmp[0])
		unlink(r->tmp);
	r->out_fd = -1;
	r->tmp[0] = '\0';
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
	if (sigprocmask(SIG_BLOCK, &set, &r->old_mask) < 0)
		return -errno;
	signal(SIGPIPE, SIG_IGN);
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

static const char *plural(uint64_t n, const char *one, const char *many)
{
	return n == 1 ? one : many;
}

/* The live status line: on a terminal, unless --quiet; redrawn once a
 * second in place, erased at the end. */
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
	fprintf(stderr, "\r\033[Kcprof-attach: %.0f s, %llu samples, %llu threads, %.1f Hz "
		"(Ctrl-C to stop and write %s)", secs, (unsigned long long)p.samples,
		(unsigned long long)p.threads,
		secs > 0 ? (double)p.ticks / secs : 0.0, r->output);
	fflush(stderr);
}

static void read_signals(struct run *r)
{
	struct signalfd_siginfo si;
	while (read(r->sig_fd, &si, sizeof(si)) == sizeof(si)) {
		if (!r->stop_reason)
			r->stop_reason = si.ssi_signo == SIGINT ? "interrupted" :
					 si.ssi_signo == SIGTERM ? "terminated" : "hung up";
	}
}

/* Waits for a reason to stop: a signal, --duration, or the targets gone. */
static void wait_for_end(struct run *r)
{
	struct sampler_progress p;
	sampler__progress(r->sampler, &p);
	uint64_t deadline = r->o->duration > 0 ?
		p.start_ns + (uint64_t)llround(r->o->duration * 1e9) : UINT64_MAX;
	struct pollfd fds[2] = { { r->sig_fd, POLLIN, 0 },
				 { sampler__done_fd(r->sampler), POLLIN, 0 } };
	while (!r->stop_reason) {
		uint64_t now = now_ns();
		if (now >= deadline) {
			r->stop_reason = "duration reached";
			break;
		}
		uint64_t left_ms = (deadline - now + 999999) / 1000000;
		int timeout = deadline == UINT64_MAX ? 1000 : (int)(left_ms > 1000 ? 1000 : left_ms);
		if (poll(fds, 2, timeout) < 0 && errno != EINTR)
			break;
		if (fds[0].revents)
			read_signals(r);
		if (fds[1].revents)
			r->stop_reason = "target exited";
		show_status(r, 0);
	}
}

static char *command_line(int argc, char **argv)
{
	struct strbuf sb = { 0 };
	for (int i = 0; i < argc; i++)
		strbuf__addf(&sb, "%s%s", i ? " " : "", argv[i]);
	return sb.s ? sb.s : xstrdup("");
}

typedef int (*writer_fn)(int, const struct frames *, const struct profile_info *, char *, size_t);

static writer_fn writer_for(enum out_format f)
{
	switch (f) {
	case FORMAT_PPROF: return pprof__write;
	case FORMAT_SVG: return svg__write;
	case FORMAT_SPEEDSCOPE: return speedscope__write;
	default: return folded__write;
	}
}

/* Writes FR to the output and gives it its name. */
static int write_frames(struct run *r, const struct frames *fr, const struct profile_info *info)
{
	int e = writer_for(r->o->format)(r->out_fd, fr, info, r->err, sizeof(r->err));
	if (e == 0 && fsync(r->out_fd) < 0 && errno != EINVAL && errno != EROFS) {
		e = -errno;
		snprintf(r->err, sizeof(r->err), "%s", strerror(errno));
	}
	if (e == 0 && (e = name_output(r)) < 0)
		snprintf(r->err, sizeof(r->err), "%s", strerror(-e));
	if (e < 0)
		errorf("cannot write the profile to %s: %s", r->output, r->err);
	else
		r->tmp[0] = '\0';
	return e;
}

/* Names the sampled stacks, each address space's against its own modules. */
static struct frames *name_stacks(struct run *r)
{
	size_t n = sampler__nspaces(r->sampler);
	const struct modules **spaces = xcalloc(n + 1, sizeof(*spaces));
	struct symbolizer **syms = xcalloc(n + 1, sizeof(*syms));
	struct frames *fr = NULL;
	for (size_t i = 0; i < n; i++) {
		spaces[i] = sampler__space(r->sampler, i);
		if (spaces[i] && !(syms[i] = symbolizer__new(spaces[i], r->o->debug_dirs,
							       r->o->ndebug_dirs, r->err,
							       sizeof(r->err)))) {
			errorf("%s", r->err);
			goto out;
		}
	}
	fr = frames__from_stacks(sampler__stacks(r->sampler), spaces, syms, n);
	if (!fr)
		errorf("out of memory naming the stacks");
out:
	for (size_t i = 0; i < n; i++)
		symbolizer__free(syms[i]);
	free(syms);
	free(spaces);
	return fr;
}

static int write_profile(struct run *r, const struct sampler_stats *ss, int argc, char **argv)
{
	struct frames *fr = name_stacks(r);
	if (!fr)
		return -EIO;
	char *cmdline = command_line(argc, argv);
	struct profile_info info = {
		.period_ns = 1000000000ull / (uint64_t)r->o->hz,
		.start_ns = ss->start_real_ns,
		.duration_ns = ss->end_ns - ss->start_ns,
		.comment = cmdline,
		.thread_root = r->o->thread_root,
		.process_root = r->o->processes,
		.weight_cpu = r->o->cpu,
	};
	int e = write_frames(r, fr, &info);
	free(cmdline);
	frames__free(fr);
	return e;
}

static void print_summary(const struct run *r, const struct sampler_stats *ss)
{
	const struct target_stats *ts = &ss->target;
	uint64_t total = ss->samples;
	double secs = (double)(ss->end_ns - ss->start_ns) / 1e9;
	fprintf(stderr, "cprof-attach: %llu samples, %llu threads, ", (unsigned long long)total,
		(unsigned long long)ts->threads_seen);
	fprintf(stderr, "%.2f s, %.1f Hz achieved "
		"(%d requested), %llu missed ticks, %llu not fully unwound (%.1f%%), "
		"%.1f%% reached their root",
		secs, secs > 0 ? (double)ts->ticks / secs : 0.0, r->o->hz,
		(unsigned long long)ss->missed, (unsigned long long)ss->partial,
		total ? 100.0 * (double)ss->partial / (double)total : 0.0,
		total ? 100.0 * (double)ss->rooted / (double)total : 0.0);
	fprintf(stderr, ", %llu %s", (unsigned long long)ts->processes_seen,
		plural(ts->processes_seen, "process", "processes"));
	if (ss->truncated)
		fprintf(stderr, ", %llu cut at --max-depth", (unsigned long long)ss->truncated);
	if (ss->idle_dropped)
		fprintf(stderr, ", %llu idle dropped (--no-idle)", (unsigned long long)ss->idle_dropped);
	if (ts->execs)
		fprintf(stderr, ", %llu exec %s followed", (unsigned long long)ts->execs,
			plural(ts->execs, "call", "calls"));
	fprintf(stderr, ", %llu taken without stopping the thread, %s, wrote %s\n",
		(unsigned long long)(ts->samples_blocked + ts->samples_unchanged),
		r->stop_reason ? r->stop_reason : "stopped", r->output);
}

/* What sampling cost, for benchmarks and the curious: the pause each
 * thread saw (from PTRACE_INTERRUPT to resumed), our CPU time, our peak
 * memory. */
static void print_stats(const struct sampler_stats *ss)
{
	struct rusage ru;
	getrusage(RUSAGE_SELF, &ru);
	double cpu_ms = (double)(ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) * 1e3 +
			(double)(ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) / 1e3;
	const struct target_stats *ts = &ss->target;
	uint64_t thread_samples = ss->samples;
	fprintf(stderr, "cprof-attach: stats: pause per thread median %.1f us, p99 %.1f us; "
		"%llu thread-samples: %llu stopped, %llu blocked, %llu carried by a later stop, "
		"%llu lost; %llu counted again from an unchanged stack (%llu of them carried by "
		"backoff, %llu uncertain); %llu frame pointers reused from a stop; "
		"%llu blocked captures retried, %llu stacks deeper than their copy "
		"(copy grown); profiler CPU %.1f ms (%.2f ms per 1000 thread-samples); "
		"peak RSS %ld KiB; tracer thread %s\n",
		ss->pause_p50_us, ss->pause_p99_us,
		(unsigned long long)thread_samples, (unsigned long long)ts->samples,
		(unsigned long long)ts->samples_blocked, (unsigned long long)ts->carried,
		(unsigned long long)ts->lost, (unsigned long long)ts->samples_unchanged,
		(unsigned long long)ts->backoff_ticks, (unsigned long long)ts->backoff_uncertain,
		(unsigned long long)ts->fp_reused, (unsigned long long)ts->blocked_retries,
		(unsigned long long)ss->short_copies, cpu_ms,
		thread_samples ? cpu_ms * 1000.0 / (double)thread_samples : 0.0, ru.ru_maxrss,
		ss->tracer ? ss->tracer : "?");
}

/* Launch mode ends with the command's own exit status. */
static int child_status(struct run *r)
{
	int status = sampler__exit_status(r->sampler);
	if (status == -1) {
		/* Detached and still running: wait for it, with our signals back
		 * to normal so that Ctrl-C still works. */
		sigprocmask(SIG_SETMASK, &r->old_mask, NULL);
		while (waitpid(sampler__first_pid(r->sampler), &status, 0) < 0 && errno == EINTR)
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
	drop_output(r);
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

static int start_sampler(struct run *r)
{
	const struct options *o = r->o;
	struct sampler_config cfg = {
		.pids = o->pids, .npids = o->npids, .command = o->command,
		.child_mask = &r->old_mask, .hz = o->hz, .subprocesses = o->subprocesses,
		.max_depth = o->max_depth, .no_idle = o->no_idle,
		.tids = o->ntids ? o->tids : NULL, .ntids = o->ntids,
		.threads_re = o->threads_matching ? &o->threads_re : NULL,
	};
	int e = sampler__start(&r->sampler, &cfg, r->err, sizeof(r->err));
	print_notes(r);
	if (e < 0) {
		errorf("%s", r->err);
		r->code = o->command ? 127 : 1;
		return e;
	}
	if (!o->output)         /* launch mode: named after the command's PID */
		options__default_output(o->format, sampler__first_pid(r->sampler), r->output,
					sizeof(r->output));
	return 0;
}

int run__profile(const struct options *o, int argc, char **argv)
{
	struct run r = { .o = o, .out_fd = -1, .sig_fd = -1, .code = 1 };
	struct sampler_stats ss;
	if (o->output)
		snprintf(r.output, sizeof(r.output), "%s", o->output);
	else
		options__default_output(o->format, 0, r.output, sizeof(r.output));
	if (open_output(&r) < 0 || (o->ntids && check_tids(o) < 0))
		goto out;
	/* Signals are blocked before the sampler's thread starts, so every
	 * thread has them blocked and only the signalfds see them. */
	if (setup_signals(&r) < 0) {
		errorf("cannot set up signals: %s", strerror(errno));
		goto out;
	}
	if (start_sampler(&r) < 0)
		goto out;
	wait_for_end(&r);
	sampler__stop(r.sampler);
	if (sampler__targets_exited(r.sampler) && (!r.stop_reason || !strcmp(r.stop_reason, "duration reached")))
		r.stop_reason = "target exited";
	show_status(&r, 1);
	print_notes(&r);
	sampler__stats(r.sampler, &ss);
	if (write_profile(&r, &ss, argc, argv) < 0)
		goto out;
	print_summary(&r, &ss);
	if (o->stats)
		print_stats(&ss);
	r.code = o->command ? child_status(&r) : 0;
out:
	run_free(&r);
	return r.code;
}

int run__convert(const struct options *o)
{
	struct run r = { .o = o, .out_fd = -1, .sig_fd = -1, .code = 1 };
	snprintf(r.output, sizeof(r.output), "%s", o->output);
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
	if (open_output(&r) == 0) {
		struct profile_info info = { .period_ns = 1000000000ull / (uint64_t)o->hz,
					     .comment = o->convert, .thread_root = o->thread_root,
					     .process_root = o->processes, .weight_cpu = o->cpu };
		if (write_frames(&r, fr, &info) == 0)
			r.code = 0;
	}
	frames__free(fr);
	run_free(&r);
	return r.code;
}
