/* The sampler's state, shared by sample/sampler.c (the loop, threads,
 * address spaces) and sample/goroutines.c (the goroutine view of a Go
 * program).  Nothing outside sample/ includes this. */
#ifndef CPROF_SAMPLE_INTERNAL_H
#define CPROF_SAMPLE_INTERNAL_H

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "attach/target.h"
#include "goroutine/curg.h"
#include "sample/sampler.h"
#include "unwind/unwinder.h"

#define MAX_NOTES 64

struct goview;

/* One address space: a program image some processes share. */
struct space {
	struct modules *ms;
	struct unwinder *uw;
	struct gocurg curg;             /* its Go runtime's layout (sample/goroutines.c) */
	int curg_known;                 /* 1: curg read, -1: none, 0: not looked at */
	uint32_t curg_probe;            /* the target reads it at each stop, and this
					   much of its stack (0: not yet) */
	uint32_t index;                 /* in spaces[]: what stacks are counted with */
	uint64_t born_ns, last_refresh_ns, last_scan_ns;
};

struct sampler {
	struct sampler_config cfg;
	pthread_t thread;
	int thread_started;
	pid_t tracer_tid;
	pthread_mutex_t lock;           /* guards progress, started, start_err */
	pthread_cond_t cond;
	int started;                    /* 1: sampling, -1: failed to start */
	int start_err;
	char err[512];
	struct sampler_progress progress;
	int stop_fd, done_fd;           /* eventfds: asked to stop; stopped by itself */
	int chld_fd, timer_fd;
	/* sampler__pause(): the caller wants the tables; the tracer parks
	 * between ticks, with no thread held, until sampler__resume(). */
	int park_fd;                    /* eventfd: wakes the tracer's poll */
	int park_wanted, parked, finished;      /* under lock, signalled by cond */
	int exited;                     /* every target process exited */
	const char *failure;            /* why sampling stopped early, or NULL */
	int stopped;
	struct target *t;
	struct space *spaces;           /* the generations of the spaces: those a
					   stack still names; .ms NULL: a free entry */
	size_t nspaces, spaces_cap;
	uint32_t *free_spaces;          /* entries of spaces[] free for reuse */
	size_t nfree_spaces;
	uint64_t spaces_freed;          /* generations freed so far */
	uint32_t *gen;                  /* the target's space id -> current generation */
	size_t ngen;
	struct stacks *st;
	struct timeline *tl;            /* cfg.timeline: each slot's samples in order */
	uint64_t *pcs;
	uint64_t period_ns, next_slot, rng;
	bool fixed_ticks;               /* CPROF_TICK_JITTER=0: evenly spaced ticks */
	int realtime, rt_dropped;       /* the tracer is SCHED_FIFO; it gave that up */
	int rt_refused;                 /* not allowed to be */
	uint64_t rt_since_ns, rt_cpu_ns, rt_from_tick;
	uint64_t armed_ns;              /* when the armed tick is due */
	uint32_t late_ticks, late_window;       /* ticks a whole period late, of how many */
	char tracer[96];                /* how it was scheduled, for sampler_stats */
	struct sampler_stats stats;
	char *notes[MAX_NOTES];
	size_t nnotes, notes_taken;
	struct goview *go;              /* cfg.goroutines, for a Go program */
	unsigned char *go_stack;        /* go_jumped()'s copy of a goroutine's stack */
};

/* The current generation of space ID, its module table read from PID's
 * maps on first use. */
struct space *sampler_space_for(struct sampler *s, uint32_t id, pid_t pid);
/* SP, or its next generation if its maps changed since they were last
 * compared (every SCAN_INTERVAL_NS). */
struct space *sampler_due_scan(struct sampler *s, struct space *sp, uint32_t id, pid_t pid);

/* ---- the goroutine view (sample/goroutines.c) ----
 * With cfg.goroutines and a Go program as the first target, every user
 * goroutine is counted at every tick: the waiting ones by go_tick(), the
 * running ones by their thread's capture, which take() counts under the
 * goroutine's slot (go_running_slot()) and drops for a thread that runs
 * none. */
void go_start(struct sampler *s);               /* sets s->go, or a note */
void go_tick(struct sampler *s);                /* before the threads' captures */
uint32_t go_running_slot(const struct goview *v, pid_t tid);   /* or UINT32_MAX */
enum unwind_status go_jumped(struct sampler *s, const struct capture *c, uint32_t space,
			     uint64_t jump_sp, size_t *depth);    /* see sample/goroutines.c */
pid_t go_pid(const struct goview *v);           /* the Go program's process */
uint32_t go_running_state(const struct goview *v);     /* stacks__go_state("running") */
void go_free(struct goview *v);                 /* accepts NULL */
/* stacks__keep() for every stack id the view holds (sampler__age()). */
void go_keep_ids(struct goview *v, struct stacks *st);

#endif
