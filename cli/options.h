/* options: the command line, parsed and checked before anything is
 * attached.  Pure: no I/O besides what the caller prints. */
#ifndef CPROF_CLI_OPTIONS_H
#define CPROF_CLI_OPTIONS_H

#include <regex.h>
#include <stddef.h>
#include <sys/types.h>

enum out_format { FORMAT_AUTO, FORMAT_PPROF, FORMAT_FOLDED, FORMAT_SVG, FORMAT_SPEEDSCOPE };

#define MAX_TIDS 256
#define MAX_DEBUG_DIRS 16

#define MAX_PIDS 64

struct options {
	pid_t pid;                      /* 0 in launch mode; else pids[0] */
	pid_t pids[MAX_PIDS];           /* the processes to attach to */
	size_t npids;
	int subprocesses;               /* also sample their descendants */
	int processes;                  /* folded, svg: the process as the root frame */
	char **command;                 /* launch mode: argv after "--", else NULL */
	int hz;
	const char *output;             /* NULL: cprof-PID.pprof */
	enum out_format format;
	double duration;                /* seconds; 0: until stopped */
	int thread_root;
	int max_depth;
	int stats;                      /* a second summary line with costs */
	int cpu;                        /* folded, svg, speedscope: weigh by CPU time */
	int no_idle;                    /* drop samples of sleeping or stopped threads */
	int quiet;                      /* no live status line */
	pid_t tids[MAX_TIDS];           /* --tid: sample only these threads */
	size_t ntids;
	const char *threads_matching;   /* --threads-matching: the regex as given */
	regex_t threads_re;             /* ... compiled (valid if threads_matching) */
	const char *debug_dirs[MAX_DEBUG_DIRS];   /* --debug-dir, in order */
	size_t ndebug_dirs;
	const char *convert;            /* --convert FILE: folded in, no target */
	int help, version;
};

#define HZ_MAX 10000
#define MAX_DEPTH_MAX 65536

/* Fills O from ARGV.  Returns 0, or -EINVAL with a one-line reason in ERR.
 * Call options__free() after a successful parse. */
int options__parse(struct options *o, int argc, char **argv, char *err, size_t errlen);
void options__free(struct options *o);

/* The format for PATH when none was asked for: .pprof and .pb.gz are
 * pprof, .svg a flame graph, .json speedscope, anything else folded. */
enum out_format options__format_for(const char *path);

extern const char options__usage[];

#endif
