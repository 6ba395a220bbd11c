/* output: writing a named profile (output/frames.h) as folded text, pprof,
 * a flame graph or speedscope JSON.
 *
 * Writers take names only, never addresses to symbolize, and write to a
 * file descriptor they do not close. */
#ifndef CPROF_OUTPUT_OUTPUT_H
#define CPROF_OUTPUT_OUTPUT_H

#include <stddef.h>
#include <stdint.h>

#include "output/frames.h"
#include "profile/timeline.h"
#include "util/strbuf.h"

struct profile_info {
	uint64_t period_ns;             /* 1e9 / hz: wall time one sample stands for */
	uint64_t start_ns;              /* CLOCK_REALTIME at the start */
	uint64_t duration_ns;
	const char *comment;            /* the command line */
	int thread_root;                /* folded, svg: the thread as a root frame */
	int process_root;               /* folded, svg: the process as the root frame */
	int weight_cpu;                 /* folded, svg: weigh by CPU time (us), not samples */
	int syscall_leaf;               /* folded, svg, speedscope: "[syscall NAME]" leaf frames */
	int default_cpu;                /* pprof: cpu, not wall, as the default sample type
					   (what Go's /debug/pprof/profile gives) */
	const struct timeline *timeline;        /* speedscope: samples in time order (or NULL);
						   its stack ids are the frames' stack indices */
};

/* What a stack weighs in folded output and flame graphs: its samples, or
 * with --cpu the CPU time its thread used, in microseconds. */
static inline uint64_t stack_weight(const struct profile_info *info, const struct frame_stack *s)
{
	return info->weight_cpu ? s->cpu_ns / 1000 : s->count;
}

/* The frames a root-first writer puts above S's own (at most 2): the
 * process "NAME (PID)" with process_root, or with thread_root when the
 * profile holds several processes; then the thread "NAME (TID)" with
 * thread_root.  Returns how many were written to ROOTS. */
size_t output__roots(const struct frames *fr, const struct profile_info *info,
		     const struct frame_stack *s, char roots[2][160]);

/* The frame a root-first writer puts below S's own: "[syscall NAME]" for
 * a blocked sample with syscall_leaf; NULL when none. */
const char *output__leaf(const struct profile_info *info, const struct frame_stack *s,
			 char buf[64]);

/* Each returns 0, or a negative errno with a reason in ERR. */
int folded__write(int fd, const struct frames *fr, const struct profile_info *info,
		  char *err, size_t errlen);
int pprof__write(int fd, const struct frames *fr, const struct profile_info *info,
		 char *err, size_t errlen);
/* An interactive flame graph: one self-contained SVG. */
int svg__write(int fd, const struct frames *fr, const struct profile_info *info,
	       char *err, size_t errlen);
/* speedscope's JSON format, one profile per thread. */
int speedscope__write(int fd, const struct frames *fr, const struct profile_info *info,
		      char *err, size_t errlen);

/* Writes all of BUF to FD (retrying short writes and EINTR): 0 or -errno. */
int output__write_all(int fd, const char *buf, size_t len);

/* A writer's output, built in SB and written to FD a megabyte at a time,
 * so that its memory does not grow with the file it writes. */
struct output_stream {
	int fd;
	int error;                      /* the first write's -errno, or 0 */
	struct strbuf sb;
};

/* Writes what SB holds once it is over a megabyte, or with FORCE whatever
 * it holds; after an error, writes nothing more.  Returns ->error. */
int output__flush(struct output_stream *o, int force);

#endif
