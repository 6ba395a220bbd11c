/* sampler: owns the sampling loop.
 *
 * A tracer thread of its own attaches to the targets (one or many
 * processes, or a command it launches), fires the ticks on a jittered
 * schedule, takes the captures, unwinds them against the module table of
 * their address space (it is the only one that reads /proc/PID/maps) and
 * counts them.  The caller starts it, reads its progress, stops it, and
 * then takes the counted stacks and the module tables to name and write
 * them.  When the sampler's thread exits, the kernel detaches every
 * tracee (see attach/target.h): stopping detaches. */
#ifndef CPROF_SAMPLE_SAMPLER_H
#define CPROF_SAMPLE_SAMPLER_H

#include <regex.h>
#include <signal.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "attach/target.h"
#include "module/modules.h"
#include "profile/stacks.h"
#include "profile/timeline.h"

struct sampler_config {
	const pid_t *pids;              /* attach to these ... */
	size_t npids;
	char *const *command;           /* ... or launch this (argv) */
	const sigset_t *child_mask;     /* the launched command's signal mask */
	int hz;
	uint64_t period_ns;             /* 1e9 / hz: the caller's sampling period */
	enum target_capture capture;    /* how running threads are captured */
	int subprocesses;               /* follow children (see attach/target.h) */
	int max_depth;                  /* frames kept; deeper stacks end in [truncated] */
	int no_idle;                    /* drop samples of sleeping or stopped threads */
	const pid_t *tids;              /* sample only these threads (NULL: all) */
	size_t ntids;
	const regex_t *threads_re;      /* only threads whose name matches (NULL: all) */
	int once;                       /* one tick, every thread, then stop (--dump) */
	int timeline;                   /* keep each thread's samples in order */
	int kernel_stacks;              /* blocked threads' kernel stacks too (root) */
	int runtime_views;              /* a runtime's own units where it has any (a Go
					   program's goroutines), not its threads */
	int no_interp_frames;           /* no interpreter's frames (CPython's, PHP's) */
	/* frames-only views not opened, by name, comma-separated ("python,php";
	 * NULL: none) */
	const char *frames_off;
	int no_lines;                   /* interpreter frames without their lines */
	int go_system;                  /* ... the runtime's own goroutines too */
	/* The watchdog's lifeline (run/watchdog.h), or NULL: when it hangs
	 * up, no thread is stopped again and sampling ends (detached) at
	 * once, from the tracer's own loop. */
	const int *lifeline;
	/* The watchdog's beat (run/watchdog.h), or NULL: the sampling thread
	 * moves it at every wakeup of its loop (every 100 ms at most), and
	 * sets it to UINT64_MAX (unarmed) when it stops sampling. */
	uint64_t *beat;
};

#define SAMPLER_RUNTIMES 8
#define SAMPLER_RT_STATS 16

/* What the summary and --stats report. */
struct sampler_stats {
	uint64_t start_ns, end_ns;      /* CLOCK_MONOTONIC: first tick's slot, end */
	uint64_t start_real_ns;         /* CLOCK_REALTIME at the start */
	uint64_t missed;                /* ticks whose whole period went by while late */
	uint64_t partial, truncated, rooted;    /* samples, by how their unwind ended */
	uint64_t short_copies;          /* stacks deeper than their copy (copy grown) */
	uint64_t rbp_found;             /* blocked samples whose frame-pointer frame's RBP
					   was found on the stack (no stop needed) */
	uint64_t jump_lost;             /* samples whose unwind went on to another stack
					   (a Go thread on its system stack, to its
					   goroutine's) that could not be read */
	uint64_t idle_dropped;          /* samples dropped by no_idle */
	uint64_t refreshes;             /* re-reads of a process's maps */
	uint64_t generations;           /* libraries replaced at the same address */
	uint64_t replaced_in_place;     /* ... where no stack counted held an address
					   of the one replaced: the table changed */
	uint64_t samples;               /* counted */
	/* Runtime views (a Go program's goroutines): their figures by name,
	 * one entry per runtime, summed over its processes; and the thread
	 * samples a view left out (a Go thread running no user goroutine). */
	struct sampler_runtime {
		const char *name;       /* "goroutines" */
		const char *unit, *units;       /* what it samples: "goroutine(s)" */
		size_t n;
		struct { const char *key, *words; uint64_t value; } stat[SAMPLER_RT_STATS];
	} rt[SAMPLER_RUNTIMES];
	size_t nrt;
	uint64_t threads_left_out;
	struct target_stats target;
	double pause_p50_us, pause_p99_us;
	const char *tracer;             /* the tracer thread's scheduling (a static string) */
};

/* A live view for a status line (any thread may ask). */
struct sampler_progress {
	uint64_t start_ns, ticks, samples;
	uint64_t threads, processes;    /* alive now, not every one seen */
};

struct sampler;

/* Figure KEY of runtime NAME in SS ("goroutines", "seen"), or 0. */
uint64_t sampler_stats__rt(const struct sampler_stats *ss, const char *name, const char *key);

/* Starts the tracer thread and returns once it has attached (or
 * launched) and sampling has begun.  On failure returns a negative errno
 * with a one-line reason in ERR (-ENOEXEC and friends from launching:
 * the command could not be run), and nothing is left traced.  SIGCHLD
 * must be blocked in every thread of the caller. */
int sampler__start(struct sampler **out, const struct sampler_config *cfg, char *err, size_t errlen);

/* A descriptor that becomes readable when the sampler has stopped by
 * itself: every target process exited. */
int sampler__done_fd(const struct sampler *s);

/* Stops sampling (if it has not stopped already), waits until the tracer
 * thread is gone, so that every tracee is detached. */
void sampler__stop(struct sampler *s);

/* Did the sampler stop because every target exited? */
int sampler__targets_exited(const struct sampler *s);

/* Why it stopped early by itself (out of memory), or NULL: what was
 * counted until then is still there. */
const char *sampler__failure(const struct sampler *s);

void sampler__progress(struct sampler *s, struct sampler_progress *p);

/* Always on: while sampling goes on, the caller may take the tables for a
 * moment.  sampler__pause() returns once the tracer thread is parked
 * between two ticks with no thread of the target held (or has ended);
 * until sampler__resume() the caller may call sampler__take() and read
 * what the functions below give, as after sampler__stop().  Ticks due
 * meanwhile are late (missed ticks, counted as such): keep it short. */
void sampler__pause(struct sampler *s);
void sampler__resume(struct sampler *s);

/* sampler__pause(), after a tick of every thread made now (the idle ones
 * too, looked at again: attach/target.h target__force_tick), its samples
 * counted as a tick's; then sampler__now_slice() gives each thread's stack
 * at that tick, a sample each (stack ids of the table, which it holds:
 * profile/stacks.h; free it with stacks__slice_free). */
void sampler__pause_now(struct sampler *s);
void sampler__now_slice(struct sampler *s, struct stacks_slice *out);

/* While paused: the counts since the last take, taken and zeroed (see
 * profile/stacks.h), and the labels of every thread seen so far. */
void sampler__take(struct sampler *s, struct stacks_slice *out);

/* While paused, right after sampler__take(): frees the stacks not counted
 * since epoch BEFORE (profile/stacks.h: stacks__age), but never one whose
 * id the sampler holds (a thread's last stack, a goroutine's), then the
 * address-space generations no stack names any more and no space uses
 * now: FORGET(ARG, I) is called for each index I freed (its module table
 * is gone; the index will be reused: a cache of names by space must drop
 * it).  Returns the stacks freed.  Nothing is freed with a timeline (it
 * holds every id).  The whole run's counts of the stacks freed are lost:
 * only for a run whose profiles are its slices (--period). */
size_t sampler__age(struct sampler *s, uint64_t before, void (*forget)(void *arg, uint32_t space),
		    void *arg);

/* After sampler__stop() (or while paused): the counted stacks (with their
 * labels), the module table of each address space (NULL for a space never
 * sampled), the figures. */
const struct stacks *sampler__stacks(const struct sampler *s);
const struct timeline *sampler__timeline(const struct sampler *s);   /* NULL unless asked */
size_t sampler__nspaces(const struct sampler *s);
const struct modules *sampler__space(const struct sampler *s, size_t i);
void sampler__stats(const struct sampler *s, struct sampler_stats *out);

/* The first process (attached or launched), and its waitpid status once
 * it has exited (-1: still running). */
pid_t sampler__first_pid(const struct sampler *s);
int sampler__exit_status(const struct sampler *s);

/* Notes on what was left alone (one line each, e.g. a child traced by
 * another tracer); NULL when there are no more.  Call from the thread
 * that started the sampler. */
const char *sampler__next_note(struct sampler *s);

void sampler__free(struct sampler *s);           /* accepts NULL; stops it first */

#endif
