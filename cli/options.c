#include "cli/options.h"

#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

const char options__usage[] =
	"usage: cprof-attach [OPTIONS] PID\n"
	"       cprof-attach [OPTIONS] -- COMMAND [ARGS...]\n"
	"\n"
	"Samples every thread of a running process (or of COMMAND) at a fixed rate,\n"
	"running or blocked, and writes a wall-clock profile.\n"
	"\n"
	"  --hz N            samples per second per thread, 1 to 10000 (default 99)\n"
	"  -o, --output FILE where to write the profile (default cprof-PID.pprof)\n"
	"  --format F        pprof, folded, svg or speedscope (default: from FILE's\n"
	"                    ending: .pprof and .pb.gz are pprof, .svg a flame graph,\n"
	"                    .json speedscope, else folded)\n"
	"  --duration SECS   stop after SECS seconds (default: Ctrl-C, SIGTERM, or\n"
	"                    the target's exit)\n"
	"  --threads         folded and svg: the thread, \"NAME (TID)\", as the root frame\n"
	"  --cpu             folded, svg and speedscope: weigh stacks by the CPU time\n"
	"                    their threads used (microseconds), not by wall time\n"
	"  --idle, --no-idle keep (default) or drop samples of threads that were\n"
	"                    sleeping or stopped\n"
	"  --tid TID         sample only thread TID (repeatable)\n"
	"  --threads-matching REGEX\n"
	"                    sample only threads whose name matches REGEX (POSIX ERE)\n"
	"  --max-depth N     cut stacks deeper than N frames (default 1024)\n"
	"  --debug-dir DIR   look for separate debug files in DIR too, by build ID\n"
	"                    (DIR/.build-id/xx/rest.debug) and .gnu_debuglink (repeatable)\n"
	"  --convert FILE    no target: read folded stacks from FILE and write them\n"
	"                    as -o says (svg or speedscope)\n"
	"  --stats           also print what sampling cost: pause per thread (median,\n"
	"                    p99), profiler CPU time and peak memory\n"
	"      --subprocesses    also sample the processes PID starts (and those it\n"
	"                    has started), and follow exec; default with -- COMMAND\n"
	"      --no-subprocesses only the process launched with -- COMMAND\n"
	"      --processes   folded and svg: the process, NAME (PID), as the root frame\n"
	"  -q, --quiet       no live status line (it is shown only on a terminal)\n"
	"  -h, --help        this help\n"
	"      --version     the version\n"
	"\n"
	"examples:\n"
	"  cprof-attach 4242 -o out.pprof               # until Ctrl-C\n"
	"  cprof-attach 4242 --duration 30 -o out.svg   # an interactive flame graph\n"
	"  cprof-attach -o ls.pprof -- ls -R /usr\n"
	"  go tool pprof -http :8080 out.pprof\n"
	"  go tool pprof -top -sample_index=cpu out.pprof\n";

enum {
	OPT_HZ = 256, OPT_FORMAT, OPT_DURATION, OPT_THREADS, OPT_MAX_DEPTH, OPT_STATS,
	OPT_VERSION, OPT_CPU, OPT_IDLE, OPT_NO_IDLE, OPT_TID, OPT_THREADS_MATCHING,
	OPT_DEBUG_DIR, OPT_CONVERT, OPT_SUBPROCESSES, OPT_NO_SUBPROCESSES, OPT_PROCESSES,
};

static const struct option long_opts[] = {
	{ "hz", required_argument, NULL, OPT_HZ },
	{ "output", required_argument, NULL, 'o' },
	{ "format", required_argument, NULL, OPT_FORMAT },
	{ "duration", required_argument, NULL, OPT_DURATION },
	{ "threads", no_argument, NULL, OPT_THREADS },
	{ "max-depth", required_argument, NULL, OPT_MAX_DEPTH },
	{ "stats", no_argument, NULL, OPT_STATS },
	{ "cpu", no_argument, NULL, OPT_CPU },
	{ "idle", no_argument, NULL, OPT_IDLE },
	{ "no-idle", no_argument, NULL, OPT_NO_IDLE },
	{ "tid", required_argument, NULL, OPT_TID },
	{ "threads-matching", required_argument, NULL, OPT_THREADS_MATCHING },
	{ "debug-dir", required_argument, NULL, OPT_DEBUG_DIR },
	{ "convert", required_argument, NULL, OPT_CONVERT },
	{ "subprocesses", no_argument, NULL, OPT_SUBPROCESSES },
	{ "no-subprocesses", no_argument, NULL, OPT_NO_SUBPROCESSES },
	{ "processes", no_argument, NULL, OPT_PROCESSES },
	{ "quiet", no_argument, NULL, 'q' },
	{ "help", no_argument, NULL, 'h' },
	{ "version", no_argument, NULL, OPT_VERSION },
	{ NULL, 0, NULL, 0 },
};

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

enum out_format options__format_for(const char *path)
{
	size_t n = strlen(path);
	if ((n >= 6 && strcmp(path + n - 6, ".pprof") == 0) ||
	    (n >= 6 && strcmp(path + n - 6, ".pb.gz") == 0))
		return FORMAT_PPROF;
	if (n >= 4 && strcmp(path + n - 4, ".svg") == 0)
		return FORMAT_SVG;
	if (n >= 5 && strcmp(path + n - 5, ".json") == 0)
		return FORMAT_SPEEDSCOPE;
	return FORMAT_FOLDED;
}

static int parse_one(struct options *o, int c, const char *arg, char *err, size_t errlen)
{
	long v;
	char *end;
	switch (c) {
	case OPT_HZ:
		if (parse_int(arg, 1, HZ_MAX, &v) < 0) {
			snprintf(err, errlen, "--hz must be a whole number from 1 to %d, not '%s'",
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
		return 0;
	case OPT_FORMAT:
		if (strcmp(arg, "pprof") == 0)
			o->format = FORMAT_PPROF;
		else if (strcmp(arg, "folded") == 0)
			o->format = FORMAT_FOLDED;
		else if (strcmp(arg, "svg") == 0)
			o->format = FORMAT_SVG;
		else if (strcmp(arg, "speedscope") == 0)
			o->format = FORMAT_SPEEDSCOPE;
		else {
			snprintf(err, errlen,
				 "--format must be pprof, folded, svg or speedscope, not '%s'", arg);
			return -EINVAL;
		}
		return 0;
	case OPT_DURATION:
		errno = 0;
		o->duration = strtod(arg, &end);
		if (errno || !*arg || *end || !isfinite(o->duration) || o->duration <= 0 ||
		    o->duration > 1e7) {
			snprintf(err, errlen, "--duration must be a number of seconds above 0, not '%s'",
				 arg);
			return -EINVAL;
		}
		return 0;
	case OPT_THREADS:
		o->thread_root = 1;
		return 0;
	case OPT_SUBPROCESSES:
	case OPT_NO_SUBPROCESSES:
		o->subprocesses = c == OPT_SUBPROCESSES ? 1 : 0;
		return 0;
	case OPT_PROCESSES:
		o->processes = 1;
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
		int e = regcomp(&o->threads_re, arg, REG_EXTENDED | REG_NOSUB);
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

static int parse_pid(struct options *o, int argc, char **argv, char *err, size_t errlen)
{
	long v;
	if (optind >= argc) {
		snprintf(err, errlen, "no PID given (usage: cprof-attach [OPTIONS] PID, see --help)");
		return -EINVAL;
	}
	if (optind + 1 < argc) {
		snprintf(err, errlen, "unexpected argument '%s' after the PID "
			 "(to run a command: cprof-attach [OPTIONS] -- COMMAND)", argv[optind + 1]);
		return -EINVAL;
	}
	if (parse_int(argv[optind], 1, INT_MAX, &v) < 0) {
		snprintf(err, errlen, "the PID must be a positive whole number, not '%s'", argv[optind]);
		return -EINVAL;
	}
	o->pid = (pid_t)v;
	o->pids[0] = o->pid;
	o->npids = 1;
	return 0;
}

static int check_combination(struct options *o, int first, int nopts, char **argv, char *err,
			     size_t errlen);

int options__parse(struct options *o, int argc, char **argv, char *err, size_t errlen)
{
	int c, nopts = argc;
	*o = (struct options){ .hz = 99, .max_depth = 1024, .subprocesses = -1 };
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
	while ((c = getopt_long(nopts, argv, ":o:hq", long_opts, NULL)) != -1) {
		if (c == '?' || c == ':') {
			if (c == ':')
				snprintf(err, errlen, "option '%s' needs a value", argv[optind - 1]);
			else if (optopt && optopt < 256)
				snprintf(err, errlen, "unknown option '-%c' (see --help)", optopt);
			else
				snprintf(err, errlen, "unknown option '%s' (see --help)", argv[optind - 1]);
			return -EINVAL;
		}
		if (parse_one(o, c, optarg, err, errlen) < 0) {
			options__free(o);
			return -EINVAL;
		}
	}
	if (o->help || o->version)
		return 0;
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

static int check_combination(struct options *o, int first, int nopts, char **argv, char *err,
			     size_t errlen)
{
	if (o->convert) {
		if (o->command || first < nopts) {
			snprintf(err, errlen, "--convert reads a file: give no PID or command");
			return -EINVAL;
		}
		if (!o->output) {
			snprintf(err, errlen, "--convert needs -o FILE (.svg or .json)");
			return -EINVAL;
		}
		if (o->format == FORMAT_AUTO)
			o->format = options__format_for(o->output);
		if (o->format != FORMAT_SVG && o->format != FORMAT_SPEEDSCOPE) {
			snprintf(err, errlen, "--convert writes svg or speedscope, not %s",
				 o->format == FORMAT_PPROF ? "pprof" : "folded");
			return -EINVAL;
		}
		return 0;
	}
	if (o->command && o->ntids) {
		snprintf(err, errlen, "--tid needs a PID: in launch mode the threads do not exist yet");
		return -EINVAL;
	}
	optind = first;
	if (o->command) {
		if (optind < nopts) {
			snprintf(err, errlen, "give a PID or '-- COMMAND', not both ('%s')", argv[optind]);
			return -EINVAL;
		}
		if (!o->command[0]) {
			snprintf(err, errlen, "no command after '--'");
			return -EINVAL;
		}
	} else if (parse_pid(o, nopts, argv, err, errlen) < 0) {
		return -EINVAL;
	}
	if (o->format == FORMAT_AUTO)
		o->format = o->output ? options__format_for(o->output) : FORMAT_PPROF;
	/* Children are followed by default in launch mode, as perf record
	 * does; attaching to a PID takes that process only unless asked. */
	if (o->subprocesses < 0)
		o->subprocesses = o->command != NULL;
	return 0;
}
