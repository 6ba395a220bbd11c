/* options: the command line, parsed and checked before anything is
 * attached.  Pure: no I/O besides what the caller prints. */
#ifndef CPROF_CLI_OPTIONS_H
#define CPROF_CLI_OPTIONS_H

#include <stddef.h>
#include <sys/types.h>

enum out_format { FORMAT_AUTO, FORMAT_PPROF, FORMAT_FOLDED, FORMAT_SVG };

struct options {
	pid_t pid;                      /* 0 in launch mode */
	char **command;                 /* launch mode: argv after "--", else NULL */
	int hz;
	const char *output;             /* NULL: cprof-PID.pprof */
	enum out_format format;
	double duration;                /* seconds; 0: until stopped */
	int thread_root;
	int max_depth;
	int stats;                      /* a second summary line with costs */
	int help, version;
};

#define HZ_MAX 10000
#define MAX_DEPTH_MAX 65536

/* Fills O from ARGV.  Returns 0, or -EINVAL with a one-line reason in ERR. */
int options__parse(struct options *o, int argc, char **argv, char *err, size_t errlen);

/* The format for PATH when none was asked for: .pprof and .pb.gz are
 * pprof, .svg a flame graph, anything else folded. */
enum out_format options__format_for(const char *path);

extern const char options__usage[];

#endif
