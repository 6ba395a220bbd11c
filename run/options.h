/* options: what one run is asked to do, as the command line gave it
 * (cli/options.c parses and checks it before anything is attached), and
 * what follows from it, said once: whether the run is always on, whether
 * its profiles are only served, the sampling period.  Read by every part
 * of the run; written only by the parser. */
#ifndef CPROF_RUN_OPTIONS_H
#define CPROF_RUN_OPTIONS_H

/* What an --app-name may hold: Pyroscope's application names
 * ([A-Za-z0-9_.-]); a command's name used instead is mapped to them. */
#define APP_NAME_CHARS "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_.-"

#include <regex.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "output/formats.h"         /* enum out_format: the table of formats */

#define MAX_TIDS 256
#define MAX_PIDS 64
#define MAX_DEBUG_DIRS 16
#define MAX_WARNINGS 8
#define MAX_TAGS 16

struct options {
	pid_t pid;                      /* pids[0]; 0 in launch mode, with --convert, and following
					   a service not started yet (run/follow.h) */
	pid_t pids[MAX_PIDS];           /* -p LIST or the positional PID(s): in order, each once */
	size_t npids;                   /* 0 in launch mode and with --convert */
	char **command;                 /* launch mode: argv after "--", else NULL */
	int hz;
	/* Never NULL after a parse with a PID: -o as given ("-": standard
	 * output), else default_output, "cprof-PID" and the format's ending.
	 * NULL in launch mode without -o (the PID is not known yet: see
	 * output__default_name), following a service not started yet
	 * without -o (the same), and with --dump without -o. */
	const char *output;
	char default_output[32];        /* storage behind output when -o is not given */
	enum out_format format;         /* never FORMAT_AUTO, except with --dump */
	double duration;                /* seconds; 0: until stopped */
	double period;                  /* --period: seconds; 0: one profile at the end */
	double history;                 /* --history: seconds kept for SIGUSR1; 0: none */
	const char *pid_file;           /* --pid-file: the PID from there, again after it exits */
	const char *cgroup;             /* --cgroup: its main process, again after it exits */
	const char *unit;               /* --unit: its cgroup's main process, the same */
	int output_given;               /* -o was given (not the default name) */
	const char *listen;             /* --listen ADDR: serve HTTP (run/serve.h) */
	const char *listen_token_file;  /* --listen-token-file: Authorization: Bearer */
	const char *push_auth_file;     /* --push-auth-file: USER:PASSWORD or a token */
	const char *push_header_file;   /* --push-header-file: "Name: value" lines */
	const char *push;               /* --push URL: each period to a Pyroscope /ingest */
	const char *app_name;           /* --app-name: the pushed profiles' name (APP_NAME_CHARS) */
	const char *tags[MAX_TAGS];     /* --tag KEY=VALUE (repeatable), as given */
	size_t ntags;
	double debuginfod_deadline;     /* --debuginfod-deadline: seconds; 0: the default */
	int thread_root;                /* --threads */
	int processes;                  /* --processes: "NAME (PID)" as the root frame */
	int syscall_leaf;               /* --syscalls: "[syscall NAME]" as the leaf frame */
	int kernel_stacks;              /* --kernel-stacks: "NAME [k]" frames of blocked threads */
	enum { CAPTURE_AUTO, CAPTURE_PERF, CAPTURE_PTRACE } capture;    /* --capture */
	int os_threads;                 /* --os-threads: a Go program's threads, not goroutines */
	int go_system;                  /* --go-system: the Go runtime's goroutines too */
	int no_python;                  /* --no-python: no Python frames */
	int no_php;                     /* --no-php: no PHP frames */
	int no_ruby;                    /* --no-ruby: no Ruby frames */
	int no_java;                    /* --no-java: no Java frames */
	char frames_off[32];            /* those of them, "python,ruby" */
	int no_lines;                   /* --no-lines: Python frames without lines */
	int subprocesses;               /* follow descendants: default 0 with PIDs, 1 with -- COMMAND */
	int subprocesses_given;         /* --subprocesses or --no-subprocesses was given */
	int dump;                       /* --dump: every thread's stack once, then detach */
	int max_depth;
	int stats;                      /* a second summary line with costs */
	int cpu;                        /* folded, svg, speedscope: weigh by CPU time */
	int no_idle;                    /* drop samples of sleeping or stopped threads */
	int quiet;                      /* no live status line */
	pid_t tids[MAX_TIDS];           /* --tid: sample only these threads (of any PID) */
	size_t ntids;
	const char *threads_matching;   /* --threads-matching: the regex as given */
	regex_t threads_re;             /* ... compiled (valid if threads_matching) */
	const char *debug_dirs[MAX_DEBUG_DIRS];   /* --debug-dir, in order */
	size_t ndebug_dirs;
	const char *convert;            /* --convert FILE: folded in, no target */
	/* Options that do not apply to the chosen format: one line each,
	 * static strings, for the caller to print as warnings. */
	const char *warnings[MAX_WARNINGS];
	size_t nwarnings;
	int help, version;
};

#define HZ_MAX 10000
/* The default rate.  A run without end (--period, --history, --listen,
 * --push) samples at OPTIONS_HZ_ALWAYS: what a running thread pays is a
 * ptrace stop per tick, so a CPU-bound target's slowdown grows with the
 * rate and its running threads, and a target profiled all day should pay
 * at most 1% (bench/slowdown.sh, side by side, 8 threads: 1.0000-1.0084x
 * at 19 Hz, 1.0146-1.0212x at 99 Hz; docs/always-on.md).  19 Hz still
 * gives 1,140 samples a thread per minute's profile; -F sets any rate. */
#define OPTIONS_HZ 99
#define OPTIONS_HZ_ALWAYS 19
#define MAX_DEPTH_MAX 65536
#define DURATION_MAX 1e7                /* seconds: 115 days */

/* Always on: a run without end (--period, --history, --listen, --push),
 * sampled at OPTIONS_HZ_ALWAYS unless -F says, its profiles written per
 * period or per SIGUSR1 (run/periods.c), served or pushed.  The one place
 * that says which options make a run always on: the same before and after
 * options__parse's defaults (--push sets --period, --listen --history). */
int options__always_on(const struct options *o);

/* --listen or --push without -o: the profiles go there, no file is
 * written (not even one at the end). */
int options__served_only(const struct options *o);

/* The run ends with one profile of its whole length, written to -o or the
 * default name: no --period (one file a period instead) and not served
 * only.  What the status line promises to write at Ctrl-C. */
int options__whole_run(const struct options *o);

/* The sampling period: the wall time one sample stands for, 1e9 / hz
 * nanoseconds (the pprof period; the sampler's ticks). */
uint64_t options__sample_period_ns(const struct options *o);

#endif
