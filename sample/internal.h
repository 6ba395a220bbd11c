/* The sampler's state, shared by sample/sampler.c (the loop, threads,
 * address spaces) and the runtime views (sample/runtime.h: sample/rt_go.c,
 * the goroutines of a Go program).  Nothing outside sample/ includes
 * this. */
#ifndef CPROF_SAMPLE_INTERNAL_H
#define CPROF_SAMPLE_INTERNAL_H

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "attach/target.h"
#include "profile/stacks.h"
#include "sample/sampler.h"
#include "unwind/unwinder.h"

#define MAX_NOTES 64
#define SAMPLER_RUNTIMES_MAX 8          /* entries of runtimes[] (sample/views.c) */

struct rt_view;
struct rt_ops;

/* A runtime's view of one process (sample/runtime.h). */
struct view {
	const struct rt_ops *ops;
	struct rt_view *v;
	pid_t pid;
	uint32_t space;                 /* the target's id of its address space */
};

/* One address space: a program image some processes share. */
struct space {
	struct modules *ms;
	struct unwinder *uw;
	/* Each runtime's own state of this space, runtimes[i]'s at [i]:
	 * rt_ops.space_size bytes, zeroed when the space (generation) is
	 * made, freed with it; NULL for a runtime that keeps none.  The
	 * runtime reads it through sampler_rt_space(). */
	void *rt_state[SAMPLER_RUNTIMES_MAX];
	uint32_t index;                 /* in spaces[]: what stacks are counted with */
	uint64_t born_ns, last_refresh_ns, last_scan_ns;
};

/* The sampler, by job: the capture path's own state first (capture.c),
 * then the loop's, the address spaces', the runtime views' and what it
 * reports, each a struct of its own. */
struct sampler {
	struct sampler_config cfg;
	/* Set by a runtime's merge(): this capture's stack is not the one the
	 * same capture would give again (its frames left out for the tick's
	 * time budget), so an unchanged thread is unwound anew next time. */
	bool capture_uncached;
	int64_t *slot_id;               /* by slot: the stack last counted ... */
	uint64_t *slot_tick;            /* ... at this tick (target ticks) */
	size_t slot_cap;
	struct target *t;
	struct stacks *st;
	struct timeline *tl;            /* cfg.timeline: each slot's samples in order */
	uint64_t *pcs;
	unsigned char *jump_stack;      /* a jumped unwind's copy of the other stack */
	/* The loop (sampler.c, tracer.c): its thread, the caller's handshake,
	 * the ticks' clock, how the tracer is scheduled, why it ended. */
	struct sampler_loop {
		pthread_t thread;
		int thread_started;
		pid_t tracer_tid;
		pthread_mutex_t lock;           /* guards progress, started, start_err */
		pthread_cond_t cond;
		int started;                    /* 1: sampling, -1: failed to start */
		int start_err;
		struct sampler_progress progress;
		int stop_fd, done_fd;           /* eventfds: asked to stop; stopped by itself */
		int chld_fd, timer_fd;
		/* sampler__pause(): the caller wants the tables; the tracer parks
		 * between ticks, with no thread held, until sampler__resume(). */
		int park_fd;                    /* eventfd: wakes the tracer's poll */
		int park_wanted, parked, finished;      /* under lock, signalled by cond */
		int tick_now;                   /* under lock: sampler__pause_now() wants a tick first */
		uint64_t now_from;              /* the tick made for it (target ticks), 0: none yet */
		int exited;                     /* every target process exited */
		const char *failure;            /* why sampling stopped early, or NULL */
		int stopped;
		uint64_t period_ns, next_slot, rng;
		bool fixed_ticks;               /* CPROF_TICK_JITTER=0: evenly spaced ticks */
		int realtime, rt_dropped;       /* the tracer is SCHED_FIFO; it gave that up */
		int rt_refused;                 /* not allowed to be */
		uint64_t rt_since_ns, rt_cpu_ns, rt_from_tick;
		uint64_t armed_ns;              /* when the armed tick is due */
		uint64_t due_ns;                /* when the tick being taken was due (0: now) */
		uint32_t late_ticks, late_window;       /* ticks a whole period late, of how many */
		char tracer[96];                /* how it was scheduled, for sampler_stats */
		int watchdog_gone;              /* cfg.lifeline hung up: no stop asked for again */
		int finish_late;                /* ... and the tracer left the end to sampler__stop() */
	} loop;
	/* The address spaces and their generations (spaces.c). */
	struct sampler_spaces {
		struct space *spaces;           /* the generations of the spaces: those a
						   stack still names; .ms NULL: a free entry */
		size_t nspaces, spaces_cap;
		uint32_t *free_spaces;          /* entries of spaces[] free for reuse */
		size_t nfree_spaces;
		uint64_t spaces_freed;          /* generations freed so far */
		uint32_t *gen;                  /* the target's space id -> current generation */
		size_t ngen;
	} sp;
	/* The runtime views (views.c): one per process a runtime knows. */
	struct sampler_views {
		/* Runtime views: one per process a runtime knows (cfg.runtime_views:
		 * every Go program's), opened at a tick's start for each process
		 * (or exec) not looked at yet; their figures once freed. */
		struct view *views;
		size_t nviews, views_cap;
		struct { pid_t pid; uint32_t space, tries; uint64_t again_ns; } *looked;
						/* processes looked at: no view yet, looked at
						   again at AGAIN_NS (a program still loading
						   its libraries, an interpreter not yet
						   started), a few TRIES */
		size_t nlooked, looked_cap;
		uint32_t next_rt_slot;          /* the next view's first slot */
		/* A runtime's name for a thread ("python_thread=worker-1"), by the
		 * thread's slot, while the slot is that thread's (PID, TID). */
		struct { pid_t pid, tid; char *kv; } *rt_names;
		size_t nrt_names;
		struct sampler_runtime rt_done[SAMPLER_RUNTIMES];       /* views freed */
	} vw;
	/* What it reports: figures, notes, the error it failed with. */
	struct sampler_report {
		char err[512];
		struct sampler_stats stats;
		char *notes[MAX_NOTES];
		size_t nnotes, notes_taken;
	} rep;
};

/* The current generation of space ID, its module table read from PID's
 * maps on first use. */
struct space *sampler_space_for(struct sampler *s, uint32_t id, pid_t pid);
/* SP, or its next generation if its maps changed since they were last
 * compared (every SCAN_INTERVAL_NS). */
struct space *sampler_due_scan(struct sampler *s, struct space *sp, uint32_t id, pid_t pid);

/* ---- address spaces (sample/spaces.c) ---- */

/* A PC fell outside every module of SP: its maps re-read (not at every
 * miss); the space to use, or NULL if nothing changed. */
struct space *sampler_refresh_space(struct sampler *s, struct space *sp, uint32_t id, pid_t pid);
/* Module tables for the processes there are now (before the first tick). */
void sampler_read_spaces(struct sampler *s);
/* Frees the generations no stack names and no space has as its current
 * (FORGET(ARG, index) told of each). */
void sampler_free_spaces(struct sampler *s, void (*forget)(void *arg, uint32_t space), void *arg);
void sampler_spaces_free(struct sampler *s);

/* ---- one capture (sample/capture.c) ---- */

/* Unwinds capture C and counts it.  Returns -EAGAIN when it needs the
 * registers a stop gives. */
int sampler_capture(struct sampler *s, const struct capture *c);
/* Every capture of a thread that stopped. */
void sampler_take_stopped(struct sampler *s);
/* Keeps (from aging) the stacks the target will count again. */
void sampler_keep_counted(struct sampler *s);

/* ---- runtime views (sample/views.c) ---- */

struct view *sampler_view_of(struct sampler *s, pid_t pid);
/* At a tick's start: views closed, opened and ticked. */
void sampler_views_tick(struct sampler *s);
/* A view's name for thread TID of PID, counted under SLOT: KEY=VALUE in
 * its label (sample/sampler.c copy_labels()); VALUE NULL: none. */
void sampler_name_thread(struct sampler *s, uint32_t slot, pid_t pid, pid_t tid, const char *key,
			 const char *value);
void sampler_close_view(struct sampler *s, size_t i);
/* Keeps (from aging) the stacks the views hold. */
void sampler_views_keep(struct sampler *s);
/* Each runtime's figures, summed over its views, into OUT->rt. */
void sampler_views_stats(const struct sampler *s, struct sampler_stats *out);

/* ---- the tracer's scheduling (sample/tracer.c) ---- */

void sampler_raise_priority(void);
/* A tick fired LATE ns after it was due. */
void sampler_watch_lateness(struct sampler *s, uint64_t late);
void sampler_check_realtime(struct sampler *s);
/* How it was scheduled, in s->loop.tracer, for --stats. */
void sampler_describe_tracer(struct sampler *s);

/* ---- counting (sample/count.c): for a capture, and the services to the
 * runtime views (sample/runtime.h) ---- */

/* Adds K to the table (and the timeline): its id, or -1. */
int64_t sampler_add_stack(struct sampler *s, const struct stack *k);
/* Counts K (K->pcs[0 .. K->n), whose unwind ended as ST: truncated marked,
 * the sampler's figures counted) and returns its id, or -1 out of memory. */
int64_t sampler_count(struct sampler *s, struct stack *k, enum unwind_status st);
/* Counts stack ID again, N times, for SLOT; ROOTED: how its unwind ended. */
void sampler_count_again(struct sampler *s, int64_t id, uint32_t slot, uint64_t n, bool rooted);
/* Each slot's stack counted at or after the tick sampler__pause_now()
 * made, count 1, into OUT's arrays (sampler__now_slice). */
void sampler_now_ids(struct sampler *s, struct stacks_slice *out);

/* ---- a service to the runtime views (sample/views.c) ---- */

/* Unwinds a saved context of process PID (its space ID) over the copy
 * STACK (LEN bytes at its SP; WANT: what a read past the copy means, see
 * unwind/unwinder.h) into the sampler's frame buffer (*PCS); the
 * generation's index in *SPACE. */
enum unwind_status sampler_unwind_saved(struct sampler *s, pid_t pid, uint32_t id,
					const struct user_regs_struct *regs, const unsigned char *stack,
					size_t len, size_t want, uint64_t **pcs, size_t *depth,
					uint32_t *space);

#endif
