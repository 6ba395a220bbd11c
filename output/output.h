/* output: writing the counted stacks as folded text, pprof or a flame graph.
 *
 * Both writers symbolize each unique address once (dwarf/symbolizer.h)
 * and write to a file descriptor they do not close. */
#ifndef CPROF_OUTPUT_OUTPUT_H
#define CPROF_OUTPUT_OUTPUT_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>

#include "dwarf/symbolizer.h"
#include "output/stacks.h"

struct thread_label {
	pid_t tid;
	const char *name;
};

struct profile_info {
	uint64_t period_ns;             /* 1e9 / hz: wall time one sample stands for */
	uint64_t start_ns;              /* CLOCK_REALTIME at the start */
	uint64_t duration_ns;
	const char *comment;            /* the command line */
	const struct thread_label *threads;     /* indexed by stack slot */
	size_t nthreads;
	int thread_root;                /* folded: thread as the root frame */
	int weight_cpu;                 /* folded, svg: weigh by CPU time (us), not samples */
};

/* "NAME (TID)", the thread's label in folded output and flame graphs;
 * "NAME (other threads)" for a label shared by many threads (TID 0). */
static inline void thread_label_text(const struct thread_label *l, char *buf, size_t size)
{
	if (l->tid)
		snprintf(buf, size, "%s (%d)", l->name, (int)l->tid);
	else
		snprintf(buf, size, "%s (other threads)", l->name);
}

/* What a stack weighs in folded output and flame graphs: its samples, or
 * with --cpu the CPU time its thread used, in microseconds. */
static inline uint64_t stack_weight(const struct profile_info *info, const struct stack *s)
{
	return info->weight_cpu ? s->cpu_ns / 1000 : s->count;
}

/* Each returns 0, or a negative errno with a reason in ERR. */
int folded__write(int fd, const struct stacks *st, struct symbolizer *sym,
		  const struct profile_info *info, char *err, size_t errlen);
int pprof__write(int fd, const struct stacks *st, struct symbolizer *sym,
		 const struct profile_info *info, char *err, size_t errlen);
/* An interactive flame graph: one self-contained SVG. */
int svg__write(int fd, const struct stacks *st, struct symbolizer *sym,
	       const struct profile_info *info, char *err, size_t errlen);
/* speedscope's JSON format, one profile per thread. */
int speedscope__write(int fd, const struct stacks *st, struct symbolizer *sym,
		      const struct profile_info *info, char *err, size_t errlen);

#endif
