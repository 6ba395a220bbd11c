#include "cli/options.h"

#include "run/follow.h"

#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "util/secret.h"

const char options__usage[] =
	"usage: cprof-attach [OPTIONS] PID[,PID...]\n"
	"       cprof-attach [OPTIONS] -p PID[,PID...]\n"
	"       cprof-attach [OPTIONS] -- COMMAND [ARGS...]\n"
	"\n"
	"Samples every thread of a running process (or of COMMAND) at a fixed rate,\n"
	"running or blocked, and writes a wall-clock profile.\n"
	"\n"
	"  -p, --pid PID[,PID...]\n"
	"                    the process(es) to sample; the PID may also be given\n"
	"                    without -p\n"
	"  -o, --output FILE where to write the profile, - for standard output\n"
	"                    (default cprof-PID.pprof, or the ending of --format)\n"
	"  -f, --format F    pprof, folded, svg or speedscope (default: from FILE's\n"
	"                    ending: .pprof .pb.gz .pb .prof are pprof, .svg a flame\n"
	"                    graph, .json speedscope, .folded .collapsed .txt folded;\n"
	"                    another ending needs --format; -o - is folded)\n"
	"  -F, --hz, --rate N\n"
	"                    samples per second per thread, 1 to 10000 (default 99;\n"
	"                    always on, with --period, --history, --listen or --push:\n"
	"                    default 19 Hz)\n"
	"  -d, --duration TIME\n"
	"                    stop after TIME: seconds (2, 0.5) or 500ms, 2s, 1.5m\n"
	"                    (default: Ctrl-C, SIGTERM, or the target's exit)\n"
	"      --period TIME a profile per TIME (10s, 1m), sampling without end; FILE\n"
	"                    may hold %p (PID), %t (the period's start, UTC), %n (0, 1,\n"
	"                    ...) or %n{MAX} (a ring of MAX files); without them it is\n"
	"                    replaced at each period\n"
	"      --history TIME  keep the samples of the last TIME (10m): SIGUSR1 writes\n"
	"                    them to FILE at once, sampling going on; at most 64 MiB\n"
	"                    of counts, the oldest seconds dropped past it\n"
	"      --pid-file FILE  the PID written in FILE, and after it exits the next\n"
	"                    one written there (a service that restarts; until FILE is\n"
	"                    written, waits for it); with --period, --listen or --push\n"
	"      --cgroup PATH the main process of the cgroup at PATH (the oldest whose\n"
	"                    parent is not in it), and after it exits the next; as\n"
	"                    --pid-file\n"
	"      --unit NAME   the main process of systemd unit NAME (or NAME.service),\n"
	"                    from its cgroup (/sys/fs/cgroup/.../NAME.service), and\n"
	"                    after it restarts the next; as --pid-file\n"
	"      --listen ADDR serve the profiles over HTTP while sampling without end,\n"
	"                    as a Go service does: /debug/fgprof?seconds=N,\n"
	"                    /debug/pprof/profile, ?last=N (the last N seconds), /metrics;\n"
	"                    ADDR is [HOST]:PORT (no HOST: 127.0.0.1) or unix:PATH;\n"
	"                    keeps --history 10m unless --history says\n"
	"      --listen-token-file FILE\n"
	"                    ask HTTP clients for Authorization: Bearer (the token in FILE)\n"
	"      --push URL    send each period to a Pyroscope server's /ingest (URL is\n"
	"                    its base, http:// or https://); --period 10s unless given;\n"
	"                    what is shown of URL (profiles, summary) hides its secrets\n"
	"      --push-auth-file FILE\n"
	"                    the store's credentials, from FILE: USER:PASSWORD (basic)\n"
	"                    or one token (Authorization: Bearer)\n"
	"      --push-header-file FILE\n"
	"                    headers to send, from FILE: a \"Name: value\" a line\n"
	"      --app-name NAME  the pushed profiles' name (default: the command name)\n"
	"      --tag KEY=VALUE  a label of the pushed profiles (repeatable)\n"
	"  -t, --threads     folded and svg: the thread, \"NAME (TID)\", as the root frame\n"
	"      --processes   folded and svg: the process, \"NAME (PID)\", as the root\n"
	"                    frame (with --threads: above the thread)\n"
	"      --syscalls    folded, svg, speedscope: a blocked thread's system call as\n"
	"                    its leaf frame, \"[syscall epoll_wait]\" (pprof: a label)\n"
	"      --kernel-stacks  as root: where in the kernel a blocked thread waits,\n"
	"                    frames \"NAME [k]\" under its stack (one more read each);\n"
	"                    with perf capture a running thread's too, when its\n"
	"                    sample fell in the kernel\n"
	"      --capture perf|ptrace\n"
	"                    how a running thread is sampled: perf, from the registers\n"
	"                    and stack the kernel copies at a perf clock's interrupt (no\n"
	"                    stop: no EINTR in the target); ptrace, by a stop (a call\n"
	"                    with a timeout can return EINTR) (default: perf where\n"
	"                    permitted)\n"
	"      --os-threads  a Go program: sample its threads, not its goroutines\n"
	"      --go-system   a Go program: the runtime's own goroutines too\n"
	"      --no-python   a Python program: its native frames only (default: its\n"
	"                    Python functions in place of the interpreter's loop)\n"
	"      --no-php      a PHP program (php, php-fpm): its native frames only\n"
	"                    (default: its PHP functions in place of execute_ex)\n"
	"      --no-ruby     a Ruby program: its native frames only (default: its\n"
	"                    methods and blocks in place of rb_vm_exec)\n"
	"      --no-java     a Java program (HotSpot): its native frames only (default:\n"
	"                    its Java methods in place of the interpreter's and the\n"
	"                    compiled code's frames)\n"
	"      --no-lines    Python, PHP, Ruby and Java frames by function, without\n"
	"                    line numbers\n"
	"      --subprocesses, --no-subprocesses\n"
	"                    also sample the processes PID starts, or not (default:\n"
	"                    not with PID, yes with -- COMMAND)\n"
	"      --cpu         folded, svg and speedscope: weigh stacks by the CPU time\n"
	"                    their threads used (microseconds), not by wall time\n"
	"      --idle, --no-idle\n"
	"                    keep (default) or drop samples of threads that were\n"
	"                    sleeping or stopped\n"
	"      --tid TID     sample only thread TID, of any PID (repeatable)\n"
	"      --threads-matching REGEX\n"
	"                    sample only threads whose name matches REGEX (POSIX ERE)\n"
	"      --max-depth N cut stacks deeper than N frames (default 1024)\n"
	"      --debuginfod-deadline TIME\n"
	"                    with DEBUGINFOD_URLS: how long all lookups of the run may\n"
	"                    take in all (default 10s); past it, the rest is named\n"
	"                    without the server\n"
	"      --debug-dir DIR\n"
	"                    look for separate debug files in DIR too, by build ID\n"
	"                    (DIR/.build-id/xx/rest.debug) and .gnu_debuglink\n"
	"                    (repeatable)\n"
	"      --dump        print every thread's current stack once, then detach\n"
	"      --convert FILE\n"
	"                    no target: read folded stacks from FILE and write them\n"
	"                    as -o says (svg or speedscope)\n"
	"      --stats       also print what sampling cost: pause per thread (median,\n"
	"                    p99), profiler CPU time and peak memory\n"
	"  -q, --quiet       no live status line (it is shown only on a terminal)\n"
	"  -h, --help        this help\n"
	"  -V, --version     the version\n"
	"\n"
	"examples:\n"
	"  cprof-attach 4242 -o out.pprof               # until Ctrl-C\n"
	"  cprof-attach -p 4242 -d 30s -o out.svg       # an interactive flame graph\n"
	"  cprof-attach -o ls.pprof -- ls -R /usr\n"
	"  go tool pprof -http :8080 out.pprof\n"
	"  go tool pprof -top -sample_index=cpu out.pprof\n";

enum {
	OPT_HZ = 'F', OPT_FORMAT = 'f', OPT_DURATION = 'd', OPT_THREADS = 't', OPT_PID = 'p',
	OPT_VERSION = 'V',
	OPT_MAX_DEPTH = 256, OPT_STATS, OPT_CPU, OPT_IDLE, OPT_NO_IDLE, OPT_TID,
	OPT_THREADS_MATCHING, OPT_DEBUG_DIR, OPT_CONVERT, OPT_PROCESSES, OPT_SYSCALLS, OPT_KERNEL_STACKS, OPT_CAPTURE, OPT_OS_THREADS, OPT_GO_SYSTEM, OPT_SUBPROCESSES,
	OPT_NO_SUBPROCESSES, OPT_DUMP, OPT_PERIOD, OPT_HISTORY, OPT_PID_FILE, OPT_CGROUP, OPT_UNIT, OPT_DEBUGINFOD_DEADLINE,
	OPT_LISTEN, OPT_LISTEN_TOKEN_FILE, OPT_PUSH, OPT_PUSH_AUTH_FILE, OPT_PUSH_HEADER_FILE, OPT_APP_NAME, OPT_TAG, OPT_NO_PYTHON, OPT_NO_PHP, OPT_NO_RUBY, OPT_NO_JAVA, OPT_NO_LINES,
};

const struct option *options__table(void);

static const char short_opts[] = ":o:hqp:F:d:f:tV";

static const struct option long_opts[] = {
	{ "pid", required_argument, NULL, OPT_PID },
	{ "hz", required_argument, NULL, OPT_HZ },
	{ "rate", required_argument, NULL, OPT_HZ },
	{ "output", required_argument, NULL, 'o' },
	{ "format", required_argument, NULL, OPT_FORMAT },
	{ "duration", required_argument, NULL, OPT_DURATION },
	{ "period", required_argument, NULL, OPT_PERIOD },
	{ "history", required_argument, NULL, OPT_HISTORY },
	{ "pid-file", required_argument, NULL, OPT_PID_FILE },
	{ "cgroup", required_argument, NULL, OPT_CGROUP },
	{ "unit", required_argument, NULL, OPT_UNIT },
	{ "listen", required_argument, NULL, OPT_LISTEN },
	{ "listen-token-file", required_argument, NULL, OPT_LISTEN_TOKEN_FILE },
	{ "push", required_argument, NULL, OPT_PUSH },
	{ "push-auth-file", required_argument, NULL, OPT_PUSH_AUTH_FILE },
	{ "push-header-file", required_argument, NULL, OPT_PUSH_HEADER_FILE },
	{ "app-name", required_argument, NULL, OPT_APP_NAME },
	{ "tag", required_argument, NULL, OPT_TAG },
	{ "debuginfod-deadline", required_argument, NULL, OPT_DEBUGINFOD_DEADLINE },
	{ "threads", no_argument, NULL, OPT_THREADS },
	{ "processes", no_argument, NULL, OPT_PROCESSES },
	{ "syscalls", no_argument, NULL, OPT_SYSCALLS },
	{ "kernel-stacks", no_argument, NULL, OPT_KERNEL_STACKS },
	{ "capture", required_argument, NULL, OPT_CAPTURE },
	{ "os-threads", no_argument, NULL, OPT_OS_THREADS },
	{ "go-system", no_argument, NULL, OPT_GO_SYSTEM },
	{ "no-python", no_argument, NULL, OPT_NO_PYTHON },
	{ "no-php", no_argument, NULL, OPT_NO_PHP },
	{ "no-ruby", no_argument, NULL, OPT_NO_RUBY },
	{ "no-java", no_argument, NULL, OPT_NO_JAVA },
	{ "no-lines", no_argument, NULL, OPT_NO_LINES },
	{ "subprocesses", no_argument, NULL, OPT_SUBPROCESSES },
	{ "no-subprocesses", no_argument, NULL, OPT_NO_SUBPROCESSES },
	{ "max-depth", required_argument, NULL, OPT_MAX_DEPTH },
	{ "stats", no_argument, NULL, OPT_STATS },
	{ "cpu", no_argument, NULL, OPT_CPU },
	{ "idle", no_argument, NULL, OPT_IDLE },
	{ "no-idle", no_argument, NULL, OPT_NO_IDLE },
	{ "tid", required_argument, NULL, OPT_TID },
	{ "threads-matching", required_argument, NULL, OPT_THREADS_MATCHING },
	{ "debug-dir", required_argument, NULL, OPT_DEBUG_DIR },
	{ "dump", no_argument, NULL, OPT_DUMP },
	{ "convert", required_argument, NULL, OPT_CONVERT },
	{ "quiet", no_argument, NULL, 'q' },
	{ "help", no_argument, NULL, 'h' },
	{ "version", no_argument, NULL, OPT_VERSION },
	{ NULL, 0, NULL, 0 },
};

const struct option *options__table(void)
{
	return long_opts;
}

/* Words of other profilers' command lines (perf record, py-spy dump, ...)
 * typed where the PID goes: each gets the equivalent here. */
static const struct {
	const char *word, *hint;
} subcommands[] = {
	{ "record", "cprof-attach PID -o out.pprof (or -p PID) records a profile" },
	{ "attach", "cprof-attach PID -o out.pprof (or -p PID) attaches and records a profile" },
	{ "run", "cprof-attach -o out.pprof -- COMMAND runs COMMAND and records a profile" },
	{ "dump", "cprof-attach --dump PID prints every thread's stack once and detaches" },
	{ "top", "record a profile (cprof-attach PID -o out.pprof), then: go tool pprof -top out.pprof" },
	{ "report", "record a profile (cprof-attach PID -o out.pprof), then: go tool pprof -top "
		    "out.pprof (or -o out.svg for a flame graph)" },
	{ "stat", "cprof-attach PID -d 10s prints a summary line when done; --stats adds what "
		  "sampling cost" },
	{ "help", "cprof-attach --help" },
	{ "version", "cprof-attach --version" },
};

/* Is PATH by its name a stream: standard output or one of our descriptors
 * (/dev/stdout, /dev/fd/N, /proc/self/fd/N), or a device (/dev/...)?
 * Then, with no ending and no --format, the profile is folded text, as
 * for -o -. */
static int stream_name(const char *path)
{
	return strncmp(path, "/dev/", 5) == 0 || strncmp(path, "/proc/self/fd/", 14) == 0 ||
	       (strncmp(path, "/proc/", 6) == 0 && strstr(path, "/fd/"));
}

/* A whole decimal integer in [MIN, MAX], nothing else ("1e9", "12abc",
 * " 5" and "" are refused). */
static int parse_int(const char *s, long min, long max, long *out)
{
	char *end;
	if (!*s || !(*s == '-' || (*s >= '0' && *s <= '9')))
		return -EINVAL;
	errno = 0;
	long v = strtol(s, &end, 10);
	if (errno || *end || v < min || v > max)
		return -EINVAL;
	*out = v;
	return 0;
}

/* A time above 0 in seconds: a decimal number ("2", "0.5", ".5") and an
 * optional unit, s, ms, m or h ("500ms", "1.5m", "2h").  No sign, exponent, hex,
 * inf or nan: strtod alone would take all of those. */
static int parse_duration(const char *s, double *out)
{
	size_t digits = strspn(s, "0123456789"), n = digits;
	if (s[n] == '.') {
		size_t frac = strspn(s + n + 1, "0123456789");
		digits += frac;
		n += 1 + frac;
	}
	if (digits == 0 || n > 32)
		return -EINVAL;
	char num[40];
	memcpy(num, s, n);
	num[n] = '\0';
	double v = strtod(num, NULL);
	const char *unit = s + n;
	if (strcmp(unit, "ms") == 0)
		v /= 1000;
	else if (strcmp(unit, "m") == 0)
		v *= 60;
	else if (strcmp(unit, "h") == 0)
		v *= 3600;
	else if (*unit && strcmp(unit, "s") != 0)
		return -EINVAL;
	if (!(v > 0) || v > DURATION_MAX)
		return -EINVAL;
	*out = v;
	return 0;
}

/* Adds the PIDs of S ("101", "101,102", or "101 102" as "$(pidof x)"
 * gives them) to O, each once. */
static int parse_pid_list(struct options *o, const char *s)
{
	const char *p = s;
	for (;;) {
		p += strspn(p, " \t\n");
		size_t n = strcspn(p, ", \t\n");
		char tok[16];
		long v;
		if (n == 0 || n >= sizeof(tok))
			return -EINVAL;
		memcpy(tok, p, n);
		tok[n] = '\0';
		if (parse_int(tok, 1, INT_MAX, &v) < 0)
			return -EINVAL;
		size_t i = 0;
		while (i < o->npids && o->pids[i] != (pid_t)v)
			i++;
		if (i == o->npids) {
			if (o->npids == MAX_PIDS)
				return -E2BIG;
			o->pids[o->npids++] = (pid_t)v;
		}
		p += n;
		p += strspn(p, " \t\n");
		if (!*p)
			return 0;
		if (*p == ',')
			p++;
	}
}

static int pid_list_error(int e, const char *what, const char *arg, char *err, size_t errlen)
{
	if (e == -E2BIG)
		snprintf(err, errlen, "at most %d PIDs", MAX_PIDS);
	else if (*arg == '-' && strcmp(what, "-p") == 0)
		snprintf(err, errlen, "-p needs a PID (cprof-attach -p PID, or cprof-attach PID), "
			 "not the option '%s'", arg);
	else if ((*arg >= 'a' && *arg <= 'z') || (*arg >= 'A' && *arg <= 'Z'))
		snprintf(err, errlen, "%s must be a positive whole number, not '%s' "
			 "(by name: -p \"$(pidof %s)\")", what, arg, arg);
	else
		snprintf(err, errlen, "%s must be a positive whole number or a list (101,102), "
			 "not '%s'", what, arg);
	return -EINVAL;
}

enum out_format options__format_for(const char *path)
{
	if (strcmp(path, "-") == 0)
		return FORMAT_FOLDED;
	return output__format_of_path(path);
}

/* Any row's name, --dump's json too (checked with the rest). */
static int parse_format(const char *arg, enum out_format *f)
{
	*f = output__format_named(arg);
	return *f == FORMAT_AUTO ? -EINVAL : 0;
}

/* Turns off the frames-only view NAME (sampler_config.frames_off: names
 * separated by commas). */
static void frames_off(struct options *o, const char *name)
{
	if (strstr(o->frames_off, name))
		return;
	size_t n = strlen(o->frames_off);
	snprintf(o->frames_off + n, sizeof(o->frames_off) - n, "%s%s", n ? "," : "", name);
}

static int parse_one(struct options *o, int c, const char *arg, char *err, size_t errlen)
{
	long v;
	int e;
	switch (c) {
	case OPT_PID:
		if ((e = parse_pid_list(o, arg)) < 0)
			return pid_list_error(e, "-p", arg, err, errlen);
		return 0;
	case OPT_HZ:
		if (parse_int(arg, 1, HZ_MAX, &v) < 0) {
			snprintf(err, errlen, "--hz (-F) must be a whole number from 1 to %d, not '%s'",
				 HZ_MAX, arg);
			return -EINVAL;
		}
		o->hz = (int)v;
		return 0;
	case 'o':
		if (!*arg) {
			snprintf(err, errlen, "--output needs a file name");
			return -EINVAL;
		}
		o->output = arg;
		o->output_given = 1;
		return 0;
	case OPT_FORMAT:
		if (parse_format(arg, &o->format) < 0) {
			char names[128];
			output__format_names(0, names, sizeof(names));
			snprintf(err, errlen, "--format must be %s, not '%s'", names, arg);
			return -EINVAL;
		}
		return 0;
	case OPT_DURATION:
		if (parse_duration(arg, &o->duration) < 0) {
			snprintf(err, errlen, "--duration must be a time above 0: seconds, or with "
				 "s, ms, m or h (2, 0.5, 500ms, 1.5m, 1h), not '%s'", arg);
			return -EINVAL;
		}
		return 0;
	case OPT_DEBUGINFOD_DEADLINE:
		if (parse_duration(arg, &o->debuginfod_deadline) < 0 || o->debuginfod_deadline < 0.1) {
			snprintf(err, errlen, "--debuginfod-deadline must be a time of at least 0.1 s: "
				 "seconds, or with s, ms, m or h (10s, 1m, 1h), not '%s'", arg);
			return -EINVAL;
		}
		return 0;
	case OPT_LISTEN:
		if (!*arg) {
			snprintf(err, errlen, "--listen needs [HOST]:PORT or unix:PATH");
			return -EINVAL;
		}
		o->listen = arg;
		return 0;
	case OPT_LISTEN_TOKEN_FILE:
		if (!*arg) {
			snprintf(err, errlen, "--listen-token-file needs a file name");
			return -EINVAL;
		}
		o->listen_token_file = arg;
		return 0;
	case OPT_PUSH:
		if (strncasecmp(arg, "http://", 7) && strncasecmp(arg, "https://", 8)) {
			char *shown = secret__shown(arg);
			snprintf(err, errlen, "--push needs an http:// or https:// URL (a Pyroscope "
				 "server's base), not '%s'", shown);
			free(shown);
			return -EINVAL;
		}
		o->push = arg;
		return 0;
	case OPT_PUSH_AUTH_FILE:
	case OPT_PUSH_HEADER_FILE:
		if (!*arg) {
			snprintf(err, errlen, "--push-%s-file needs a file name",
				 c == OPT_PUSH_AUTH_FILE ? "auth" : "header");
			return -EINVAL;
		}
		*(c == OPT_PUSH_AUTH_FILE ? &o->push_auth_file : &o->push_header_file) = arg;
		return 0;
	case OPT_APP_NAME:
		if (!*arg || strspn(arg, APP_NAME_CHARS) != strlen(arg)) {
			char fix[128];
			size_t k = 0;
			for (const char *ch = arg; *ch && k + 1 < sizeof(fix); ch++)
				fix[k++] = strchr(APP_NAME_CHARS, *ch) ? *ch : '_';
			fix[k] = '\0';
			snprintf(err, errlen, "--app-name needs a name of letters, digits, _ . and - "
				 "(what Pyroscope takes), not '%.200s'%s%s%s", arg, k ? " (say '" : "",
				 fix, k ? "')" : "");
			return -EINVAL;
		}
		o->app_name = arg;
		return 0;
	case OPT_TAG: {
		const char *eq = strchr(arg, '=');
		size_t kl = eq ? (size_t)(eq - arg) : 0;
		int ok = eq && kl > 0 && eq[1] && !strpbrk(eq + 1, "{}=,\"\n") &&
			 !(arg[0] >= '0' && arg[0] <= '9');
		for (size_t i = 0; ok && i < kl; i++)
			ok = (arg[i] >= 'a' && arg[i] <= 'z') || (arg[i] >= 'A' && arg[i] <= 'Z') ||
			     (arg[i] >= '0' && arg[i] <= '9') || arg[i] == '_' || arg[i] == '.';
		if (!ok) {
			snprintf(err, errlen, "--tag needs KEY=VALUE (KEY of letters, digits, _ and ., "
				 "not first a digit; VALUE without { } = , or quotes), not '%s'", arg);
			return -EINVAL;
		}
		if (o->ntags == MAX_TAGS) {
			snprintf(err, errlen, "--tag: at most %d", MAX_TAGS);
			return -EINVAL;
		}
		o->tags[o->ntags++] = arg;
		return 0;
	}
	case OPT_PID_FILE:
		if (!*arg) {
			snprintf(err, errlen, "--pid-file needs a file name");
			return -EINVAL;
		}
		o->pid_file = arg;
		return 0;
	case OPT_CGROUP:
	case OPT_UNIT:
		if (!*arg) {
			snprintf(err, errlen, "--%s needs a %s", c == OPT_CGROUP ? "cgroup" : "unit",
				 c == OPT_CGROUP ? "cgroup's directory" : "unit's name");
			return -EINVAL;
		}
		*(c == OPT_CGROUP ? &o->cgroup : &o->unit) = arg;
		return 0;
	case OPT_PERIOD:
	case OPT_HISTORY:
		if (parse_duration(arg, c == OPT_PERIOD ? &o->period : &o->history) < 0 ||
		    (c == OPT_PERIOD ? o->period : o->history) < 0.1) {
			snprintf(err, errlen, "--%s must be a time of at least 0.1 s: seconds, or "
				 "with s, ms, m or h (10s, 1m, 1h), not '%s'",
				 c == OPT_PERIOD ? "period" : "history", arg);
			return -EINVAL;
		}
		return 0;
	case OPT_THREADS:
		o->thread_root = 1;
		return 0;
	case OPT_SYSCALLS:
		o->syscall_leaf = 1;
		return 0;
	case OPT_KERNEL_STACKS:
		o->kernel_stacks = 1;
		return 0;
	case OPT_CAPTURE:
		if (strcmp(arg, "perf") && strcmp(arg, "ptrace")) {
			snprintf(err, errlen, "--capture must be perf or ptrace, not '%s'", arg);
			return -EINVAL;
		}
		o->capture = strcmp(arg, "perf") == 0 ? CAPTURE_PERF : CAPTURE_PTRACE;
		return 0;
	case OPT_OS_THREADS:
		o->os_threads = 1;
		return 0;
	case OPT_NO_PYTHON:
		o->no_python = 1;
		frames_off(o, "python");
		return 0;
	case OPT_NO_PHP:
		o->no_php = 1;
		frames_off(o, "php");
		return 0;
	case OPT_NO_RUBY:
		o->no_ruby = 1;
		frames_off(o, "ruby");
		return 0;
	case OPT_NO_JAVA:
		o->no_java = 1;
		frames_off(o, "java");
		return 0;
	case OPT_NO_LINES:
		o->no_lines = 1;
		return 0;
	case OPT_GO_SYSTEM:
		o->go_system = 1;
		return 0;
	case OPT_PROCESSES:
		o->processes = 1;
		return 0;
	case OPT_SUBPROCESSES:
	case OPT_NO_SUBPROCESSES:
		o->subprocesses = c == OPT_SUBPROCESSES;
		o->subprocesses_given = 1;
		return 0;
	case OPT_DUMP:
		o->dump = 1;
		return 0;
	case OPT_MAX_DEPTH:
		if (parse_int(arg, 2, MAX_DEPTH_MAX, &v) < 0) {
			snprintf(err, errlen, "--max-depth must be a whole number from 2 to %d, not '%s'",
				 MAX_DEPTH_MAX, arg);
			return -EINVAL;
		}
		o->max_depth = (int)v;
		return 0;
	case OPT_STATS:
		o->stats = 1;
		return 0;
	case OPT_CPU:
		o->cpu = 1;
		return 0;
	case OPT_IDLE:
	case OPT_NO_IDLE:
		o->no_idle = c == OPT_NO_IDLE;
		return 0;
	case 'q':
		o->quiet = 1;
		return 0;
	case OPT_TID:
		if (parse_int(arg, 1, INT_MAX, &v) < 0) {
			snprintf(err, errlen, "--tid must be a thread ID (a positive whole number), "
				 "not '%s'", arg);
			return -EINVAL;
		}
		if (o->ntids == MAX_TIDS) {
			snprintf(err, errlen, "at most %d --tid options", MAX_TIDS);
			return -EINVAL;
		}
		o->tids[o->ntids++] = (pid_t)v;
		return 0;
	case OPT_THREADS_MATCHING: {
		if (o->threads_matching) {
			snprintf(err, errlen, "--threads-matching given twice (use one REGEX with |)");
			return -EINVAL;
		}
		e = regcomp(&o->threads_re, arg, REG_EXTENDED | REG_NOSUB);
		if (e != 0) {
			char why[128];
			regerror(e, &o->threads_re, why, sizeof(why));
			snprintf(err, errlen, "--threads-matching: bad regular expression '%s': %s",
				 arg, why);
			return -EINVAL;
		}
		o->threads_matching = arg;
		return 0;
	}
	case OPT_DEBUG_DIR:
		if (arg[0] != '/') {
			snprintf(err, errlen, "--debug-dir needs an absolute directory, not '%s'", arg);
			return -EINVAL;
		}
		if (o->ndebug_dirs == MAX_DEBUG_DIRS) {
			snprintf(err, errlen, "at most %d --debug-dir options", MAX_DEBUG_DIRS);
			return -EINVAL;
		}
		o->debug_dirs[o->ndebug_dirs++] = arg;
		return 0;
	case OPT_CONVERT:
		o->convert = arg;
		return 0;
	case 'h':
		o->help = 1;
		return 0;
	case OPT_VERSION:
		o->version = 1;
		return 0;
	default:
		snprintf(err, errlen, "unknown option (see --help)");
		return -EINVAL;
	}
}

/* The message for what getopt refused: C is '?' (unknown) or ':' (no
 * value); ARG the word as typed. */
static void getopt_error(int c, const char *arg, char *err, size_t errlen)
{
	if (c == ':' && optopt == OPT_PID)
		snprintf(err, errlen, "option '%s' needs a value: the PID (cprof-attach -p PID, "
			 "or cprof-attach PID)", arg);
	else if (c == ':')
		snprintf(err, errlen, "option '%s' needs a value", arg);
	else if (optopt == 'v')
		snprintf(err, errlen, "unknown option '-v' (-V prints the version; see --help)");
	else if (optopt && optopt < 256)
		snprintf(err, errlen, "unknown option '-%c' (see --help; the PID may be given "
			 "positionally or with -p)", optopt);
	else
		snprintf(err, errlen, "unknown option '%s' (see --help)", arg);
}

static int check_combination(struct options *o, int first, int nopts, char **argv, char *err,
			     size_t errlen);

int options__parse(struct options *o, int argc, char **argv, char *err, size_t errlen)
{
	int c, nopts = argc;
	*o = (struct options){ .hz = 0, .max_depth = 1024 };
	/* Options may come before or after the PID ("cprof-attach 4242 --hz
	 * 99"); everything after a "--" is the command to launch, with its
	 * own options. */
	for (int i = 1; i < argc; i++) {
		if (strcmp(argv[i], "--") == 0) {
			nopts = i;
			o->command = argv + i + 1;
			break;
		}
	}
	optind = 1;
	opterr = 0;
	while ((c = getopt_long(nopts, argv, short_opts, long_opts, NULL)) != -1) {
		if (c == '?' || c == ':') {
			getopt_error(c, argv[optind - 1], err, errlen);
			options__free(o);
			return -EINVAL;
		}
		if (parse_one(o, c, optarg, err, errlen) < 0) {
			options__free(o);
			return -EINVAL;
		}
	}
	if (o->help || o->version)
		return 0;
	/* Always on (a run without end: --period, --history, --listen,
	 * --push), a lower rate: see OPTIONS_HZ_ALWAYS. */
	if (!o->hz)
		o->hz = options__always_on(o) ? OPTIONS_HZ_ALWAYS : OPTIONS_HZ;
	int r = check_combination(o, optind, nopts, argv, err, errlen);
	if (r < 0)
		options__free(o);
	return r;
}

void options__free(struct options *o)
{
	if (o->threads_matching)
		regfree(&o->threads_re);
	o->threads_matching = NULL;
}

/* A word of another tool's command line where the PID goes: say what to
 * type instead. */
static int check_subcommand(const char *word, char *err, size_t errlen)
{
	for (size_t i = 0; i < sizeof(subcommands) / sizeof(*subcommands); i++) {
		if (strcmp(word, subcommands[i].word) == 0) {
			snprintf(err, errlen, "'%s' is not a subcommand: %s", word, subcommands[i].hint);
			return -EINVAL;
		}
	}
	return 0;
}

static int check_convert(struct options *o, int first, int nopts, char *err, size_t errlen)
{
	if (o->command || first < nopts || o->npids || o->dump) {
		snprintf(err, errlen, "--convert reads a file: give no PID, command or --dump");
		return -EINVAL;
	}
	if (!o->output) {
		snprintf(err, errlen, "--convert needs -o FILE (.svg, .json, .pprof or .folded)");
		return -EINVAL;
	}
	if (o->format == FORMAT_AUTO)
		o->format = options__format_for(o->output);
	if (o->format == FORMAT_AUTO) {
		snprintf(err, errlen, "cannot tell the format of '%s': %s", o->output,
			 output__formats_and_endings);
		return -EINVAL;
	}
	if (o->format == FORMAT_JSON) {
		snprintf(err, errlen, "--format json is for --dump; --convert writes pprof, folded, "
			 "svg or speedscope");
		return -EINVAL;
	}
	return 0;
}

static int check_command(struct options *o, int first, int nopts, char **argv, char *err,
			 size_t errlen)
{
	if (o->dump) {
		snprintf(err, errlen, "--dump reads a running process: give a PID, not -- COMMAND");
		return -EINVAL;
	}
	if (o->ntids) {
		snprintf(err, errlen, "--tid needs a PID: in launch mode the threads do not exist yet");
		return -EINVAL;
	}
	if (first < nopts || o->npids) {
		snprintf(err, errlen, "give a PID or '-- COMMAND', not both ('%s')",
			 first < nopts ? argv[first] : "-p");
		return -EINVAL;
	}
	if (!o->command[0]) {
		snprintf(err, errlen, "no command after '--'");
		return -EINVAL;
	}
	if (!o->subprocesses_given)
		o->subprocesses = 1;
	return 0;
}

/* The PIDs: from -p, or the one positional argument, not both. */
static int check_pids(struct options *o, int first, int nopts, char **argv, char *err,
		      size_t errlen)
{
	int e;
	if (first < nopts && o->npids) {
		snprintf(err, errlen, "give the PID with -p or without it, not both ('%s')",
			 argv[first]);
		return -EINVAL;
	}
	if (first + 1 < nopts) {
		long v;
		int numeric = parse_int(argv[first + 1], 1, INT_MAX, &v) == 0;
		snprintf(err, errlen, "unexpected argument '%s' after the PID (%s: cprof-attach "
			 "[OPTIONS] -- COMMAND)", argv[first + 1],
			 numeric ? "several PIDs are one list, 101,102; to run a command" :
				   "to run a command");
		return -EINVAL;
	}
	if (first < nopts && (e = parse_pid_list(o, argv[first])) < 0)
		return pid_list_error(e, "the PID", argv[first], err, errlen);
	if (!o->npids) {
		snprintf(err, errlen, "no PID given (usage: cprof-attach [OPTIONS] PID, or -p PID; "
			 "see --help)");
		return -EINVAL;
	}
	o->pid = o->pids[0];
	return 0;
}

static void warn(struct options *o, const char *w)
{
	if (o->nwarnings < MAX_WARNINGS)
		o->warnings[o->nwarnings++] = w;
}

/* Options that the chosen format has no use for: said, not refused. */
static void check_applies(struct options *o)
{
	if (o->format == FORMAT_PPROF) {
		if (o->thread_root)
			warn(o, "--threads does not apply to pprof: every pprof sample has thread "
				"and tid labels (go tool pprof -tags)");
		if (o->processes)
			warn(o, "--processes does not apply to pprof: every pprof sample has pid "
				"and process labels (go tool pprof -tags)");
		if (o->cpu)
			warn(o, "--cpu does not apply to pprof: it has both wall and cpu time "
				"(go tool pprof -sample_index=cpu)");
		if (o->syscall_leaf)
			warn(o, "--syscalls does not apply to pprof: a blocked sample has a syscall "
				"label (go tool pprof -tags)");
	}
	if (o->format == FORMAT_SPEEDSCOPE && o->thread_root)
		warn(o, "--threads does not apply to speedscope: it has one profile per thread "
			"already");
}

static int check_combination(struct options *o, int first, int nopts, char **argv, char *err,
			     size_t errlen)
{
	if (first < nopts && check_subcommand(argv[first], err, errlen) < 0)
		return -EINVAL;
	if (options__always_on(o) && (o->convert || o->dump)) {
		snprintf(err, errlen, "--%s is for sampling without end; not with --%s",
			 o->period > 0 ? "period" : o->history > 0 ? "history" :
			 o->listen ? "listen" : "push", o->convert ? "convert" : "dump");
		return -EINVAL;
	}
	if (o->listen_token_file && !o->listen) {
		snprintf(err, errlen, "--listen-token-file is for --listen");
		return -EINVAL;
	}
	if ((o->push_auth_file || o->push_header_file) && !o->push) {
		snprintf(err, errlen, "--push-%s-file is for --push",
			 o->push_auth_file ? "auth" : "header");
		return -EINVAL;
	}
	if ((o->app_name || o->ntags) && !o->push) {
		snprintf(err, errlen, "--%s names what --push sends: it needs --push",
			 o->app_name ? "app-name" : "tag");
		return -EINVAL;
	}
	if (o->push && o->period <= 0)
		o->period = 10;         /* Pyroscope's agents send every 10 s */
	if (o->listen && o->history <= 0)
		o->history = 600;       /* ?last=N and the index page's windows */
	if (o->convert)
		return check_convert(o, first, nopts, err, errlen);
	const char *follow = o->pid_file ? "pid-file" : o->cgroup ? "cgroup" : o->unit ? "unit" : NULL;
	if (follow) {
		if (!!o->pid_file + !!o->cgroup + !!o->unit > 1) {
			snprintf(err, errlen, "--pid-file, --cgroup and --unit each name the service "
				 "to follow: give one");
			return -EINVAL;
		}
		if (o->command || first < nopts || o->npids || o->dump ||
		    (o->period <= 0 && !o->listen)) {
			snprintf(err, errlen, "--%s follows a service across restarts: it takes "
				 "the PID's place (no PID, -p or -- COMMAND) and needs --period, "
				 "--listen or --push", follow);
			return -EINVAL;
		}
		/* No process yet (not started): the run waits for one (run/follow.h). */
		pid_t pid;
		if (follow__check(o, &pid, err, errlen) < 0)
			return -EINVAL;
		o->pids[0] = o->pid = pid;
		o->npids = pid ? 1 : 0;
	} else if (o->command) {
		if (check_command(o, first, nopts, argv, err, errlen) < 0)
			return -EINVAL;
	} else if (check_pids(o, first, nopts, argv, err, errlen) < 0) {
		return -EINVAL;
	}
	if (o->dump) {          /* a text dump unless --format says; no file unless -o */
		if (o->format != FORMAT_AUTO && o->format != FORMAT_JSON) {
			snprintf(err, errlen, "--dump prints text, or JSON with --format json");
			return -EINVAL;
		}
		return 0;
	}
	if (o->format == FORMAT_JSON) {
		snprintf(err, errlen, "--format json is for --dump; a profile is pprof, folded, "
			 "svg or speedscope");
		return -EINVAL;
	}
	if (o->format == FORMAT_AUTO && o->output) {
		o->format = options__format_for(o->output);
		if (o->format == FORMAT_AUTO && stream_name(o->output))
			o->format = FORMAT_FOLDED;      /* a text profile, as with -o - */
		if (o->format == FORMAT_AUTO && o->output[strlen(o->output) - 1] == '/') {
			snprintf(err, errlen, "cannot write the profile to %s: it names a directory, "
				 "not a file", o->output);
			return -EINVAL;
		}
		if (o->format == FORMAT_AUTO) {
			snprintf(err, errlen, "cannot tell the format from the name '%s': %s",
				 o->output, output__formats_and_endings);
			return -EINVAL;
		}
	}
	if (o->format == FORMAT_AUTO)
		o->format = FORMAT_PPROF;
	if (options__always_on(o) && o->output && (o->output_given || !o->command) &&
	    (strcmp(o->output, "-") == 0 || stream_name(o->output))) {
		snprintf(err, errlen, "--%s writes a file per %s: -o needs a file name (with %%n, "
			 "%%t or %%p for one file each), not %s", o->period > 0 ? "period" : "history",
			 o->period > 0 ? "period" : "SIGUSR1", o->output);
		return -EINVAL;
	}
	if (!o->output && !o->command && (o->pid || !follow)) {  /* else named at the attach */
		output__default_name(o->format, o->pid, o->default_output,
					sizeof(o->default_output));
		o->output = o->default_output;
	}
	check_applies(o);
	return 0;
}
