/* runtime: a language runtime's own view of a process, behind one
 * interface, so that the sampler (sample/sampler.c) knows no runtime by
 * name.  Nothing outside sample/ includes this.
 *
 * A view is opened for a process when its program is first looked at
 * (attached, forked under --subprocesses, launched, exec'd), at a tick's
 * start, never while a thread of the target is stopped: each runtime's
 * open() says whether the process is one of its own (Go: a Go binary whose
 * DWARF says where its goroutines are; CPython: _PyRuntime in the
 * executable or a libpython).  From
 * then on, at every tick:
 *   - tick() runs before the threads' captures: the runtime may count
 *     samples of its own (Go: every goroutine not running on a thread,
 *     from the context it saved), and may give up (< 0: the sampler frees
 *     the view, says why in a note, and samples the threads);
 *   - thread() is told of each capture of the process's threads and says
 *     under which label (slot) and runtime state it is counted, or that it
 *     is not counted at all (Go: a thread that runs no user goroutine);
 *   - stats() reports its figures by name, for --stats and the summary;
 *   - keep() names the stack ids it holds, so that the stack table's aging
 *     keeps them;
 * and the view is freed when its process exits or execs (an exec is
 * looked at again, as a new program). */
#ifndef CPROF_SAMPLE_RUNTIME_H
#define CPROF_SAMPLE_RUNTIME_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "sample/sampler.h"
#include "unwind/unwinder.h"

struct sampler;
struct capture;
struct space;
struct stacks;
struct rt_view;

/* Each view's labels are slots of its own: RT_SLOTS of them from a base
 * the sampler gives it, above every thread's. */
#define RT_SLOT_BASE (1u << 20)
#define RT_SLOTS (1u << 13)

/* A figure a view reports: KEY (for /metrics and the summary: "seen",
 * "lost"), VALUE, and what it counts, in words, printed "VALUE WORDS". */
struct rt_stat {
	const char *key, *words;
	uint64_t value;
};
#define RT_MAX_STATS SAMPLER_RT_STATS

struct rt_ops {
	const char *name;               /* "goroutines": what --stats calls its figures */
	const char *unit, *units;       /* what one of its samples is: "goroutine(s)" */
	/* 1: it only adds frames to its threads' samples (CPython), and is
	 * opened unless cfg.no_interp_frames; 0: it changes what is sampled
	 * (Go's goroutines), opened with cfg.runtime_views. */
	int frames_only;
	/* A view of process PID (address space SPACE, its first slot
	 * SLOT_BASE), or NULL: not this runtime's, or one it cannot read
	 * (then NOTE, if not empty, says why in one line). */
	struct rt_view *(*open)(struct sampler *s, pid_t pid, uint32_t space, uint32_t slot_base,
				char *note, size_t notelen);
	/* Before the tick's captures.  Returns 0, or < 0 when the view gives
	 * up (NOTE then says why). */
	int (*tick)(struct rt_view *v, struct sampler *s, char *note, size_t notelen);
	/* A capture of one of its threads: the slot to count it under (and
	 * *STATE, a stacks__rt_state() code or 0), or UINT32_MAX: not
	 * counted. */
	uint32_t (*thread)(struct rt_view *v, const struct capture *c, uint32_t *state);
	/* Its figures, cumulative, at most RT_MAX_STATS, always the same keys
	 * in the same order; "seen" is the number of its units.  Returns
	 * how many. */
	size_t (*stats)(const struct rt_view *v, struct rt_stat *out);
	void (*keep)(struct rt_view *v, struct stacks *st);
	/* A capture of one of its threads, unwound (as ST) into
	 * s->pcs[0 .. *DEPTH): the runtime may rewrite the frames (CPython:
	 * its frames in place of the eval loop's), at most cfg.max_depth,
	 * and returns how the stack now ends.  NULL: none. */
	enum unwind_status (*merge)(struct rt_view *v, struct sampler *s, const struct capture *c,
				    enum unwind_status st, size_t *depth);
	void (*free)(struct rt_view *v);
	/* A module table of address space ID (process PID) was read, whether
	 * or not a view is opened: the runtime may ask the target for reads
	 * at each capture (Go: the goroutine behind a system stack, so that
	 * its first such sample is whole).  NULL: none. */
	void (*space)(struct sampler *s, struct space *sp, uint32_t id, pid_t pid);
	/* The size of the state it keeps per address space, for space() and
	 * jumped() (Go: its runtime's curg layout and the probe set), zeroed
	 * when the space is made and freed with it; 0: none. */
	size_t space_size;
	/* Not per view: a capture whose unwind jumped to another stack
	 * (unwinder__jumped(): a Go thread on its system stack) is made
	 * whole, its frames after s->pcs[0 .. *DEPTH); NULL if the runtime
	 * has no such stacks. */
	enum unwind_status (*jumped)(struct sampler *s, const struct capture *c, uint32_t space,
				     uint64_t jump_sp, size_t *depth);
};

/* Every runtime the sampler knows of, ended by NULL. */
extern const struct rt_ops *const runtimes[];

/* OPS's own state of address space SP (rt_ops.space_size bytes), or NULL
 * if it keeps none or the space is free. */
void *sampler_rt_space(const struct space *sp, const struct rt_ops *ops);

/* The Go runtime (sample/rt_go.c), CPython (sample/rt_python.c), PHP
 * (sample/rt_php.c), CRuby (sample/rt_ruby.c), HotSpot (sample/rt_java.c). */
extern const struct rt_ops rt_go, rt_python, rt_php, rt_ruby, rt_java;

#endif
