/* periods: always on.  A profile per period (--period), the recent past
 * on demand (--history, SIGUSR1), while sampling goes on.
 *
 * Every SLICE (the period, or a second with --history) the counts since
 * the last slice are taken from the sampler and zeroed (sampler__take(),
 * profile/stacks.h): each sample is in exactly one slice, so the periods'
 * files add up to the run.  A period is the slices of its time; the
 * history is the slices of the last DURATION, kept in a ring that drops
 * the oldest.  Naming happens while the sampler is paused (between two
 * ticks, no thread of the target held), with names kept for the run
 * (output/frames.h: names__new), so a period costs the addresses it is the
 * first to hold.  Encoding and writing happen on the writer's thread
 * (run/writer.h), the files named by -o's pattern (run/pattern.h). */
#ifndef CPROF_RUN_PERIODS_H
#define CPROF_RUN_PERIODS_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "run/options.h"
#include "output/frames.h"
#include "output/output.h"
#include "sample/sampler.h"

#include "run/writer.h"

typedef writer_fn periods_writer;

struct periods_stats {
	uint64_t periods;               /* profiles made for periods */
	uint64_t dumps;                 /* ... for SIGUSR1 (the history) */
	uint64_t asks;                  /* ... for periods__ask (the HTTP server) */
	uint64_t written, failed, dropped;      /* files: written, not written, dropped unwritten */
	uint64_t slices;
	uint64_t history_slices, history_bytes; /* kept now */
	uint64_t history_capped;        /* seconds (slices) dropped for HISTORY_MAX_BYTES */
	double name_ms_max;             /* the longest pause for naming (the copies: run/periods.c) */
	double named_ms_max;            /* the longest naming, made with sampling going on */
	uint64_t stacks_freed;          /* stacks aged out (sampler__age) */
	double age_ms_max;              /* the longest of those walks */
	double trim_ms_max;             /* the longest malloc_trim() after a file */
	char last[4096];                /* the last file written */
};

struct periods;

/* The most the history (--history) holds of its counts, whatever its
 * TIME: past it its oldest seconds are dropped, said once, counted in
 * /metrics (cprof_history_capped_seconds_total).  10 minutes of a pool
 * of 100 threads at 99 Hz take about 1.4 MiB; a window of unique stacks
 * on every thread at every tick, far more. */
#define HISTORY_MAX_BYTES (64ull << 20)

/* A profile asked for by another thread (the HTTP server, run/serve.h):
 * the next SECONDS from now, or the recent past from the slices kept
 * (--history), or one tick: every thread's stack now. */
enum periods_ask_kind { ASK_NEXT, ASK_PAST, ASK_TICK };

struct periods_ask {
	enum periods_ask_kind kind;
	double seconds;                 /* ASK_NEXT: how long; ASK_PAST: the last SECONDS
					   (0: FROM_REAL and TO_REAL say) */
	uint64_t from_real, to_real;    /* ASK_PAST: CLOCK_REALTIME ns, when seconds is 0 */
};

/* Whether the client that asked has gone (checked every 100 ms while it
 * waits); ARG is the caller's. */
typedef int (*periods_gone_fn)(void *arg);

/* Checks PATTERN (-o; a bad one: -EINVAL and a one-line ERR; it must
 * outlive P) and starts the writer thread.  PID fills %p; COMMENT goes
 * into each profile. */
int periods__new(struct periods **out, const struct options *o, const char *pattern,
		 struct sampler *s, pid_t pid, periods_writer write, const char *comment, char *err,
		 size_t errlen);

/* Takes a slice and writes a period when due.  Returns the milliseconds
 * until the next is due. */
int periods__poll(struct periods *p);

/* SIGUSR1: the history (the last --history) to a file, at once. */
void periods__dump(struct periods *p);

/* After sampler__stop(): the last slice and the last, partial, period;
 * waits for the writer to finish every file. */
void periods__finish(struct periods *p);

void periods__stats(const struct periods *p, struct periods_stats *out);

/* From any thread: the profile ASK names, named (*OUT, never NULL on
 * success: an empty window gives an empty profile) with its INFO.  Blocks
 * until it is ready (ASK_NEXT: SECONDS and a little), or GONE says the
 * client left (-ECONNABORTED), or the sampling ends (-ECANCELED).  ASK_PAST
 * without --history or before the slices it asks for: -ENODATA.  Other
 * errors: -ENOMEM.  At most PERIODS_ASKS at once (-EBUSY). */
#define PERIODS_ASKS 8
/* What an ask cost: how long it paused the sampler (its window copied),
 * the CPU its naming took after (the namer's thread, run/namer.h: the
 * server counts it with its own, run/serve.h), and whether it waited for
 * the budget below. */
struct periods_ask_cost {
	double pause_ms;
	double name_cpu_ms;
	int waited;
};
/* An ask's window is copied with sampling paused (as a period's is), and
 * named after, with sampling on; asks have a budget of those pauses: they
 * pause the sampler at most
 * PERIODS_ASK_PAUSE_SHARE of the time, over time (an ask named puts its
 * pause in debt, repaid at that share of the time passing; the next waits
 * until the debt is down to PERIODS_ASK_PAUSE_BURST_MS).  Past it an ask waits, its window cut as asked
 * (ASK_NEXT: at its end, ASK_PAST: when it came): the answer is late,
 * never wrong.  8 clients looping ?last=600 held 78-92 of 99 Hz before.
 * The periods' and SIGUSR1's naming are not counted: they are the
 * product.  CPROF_ASK_PAUSE_SHARE sets it (for the tests). */
#define PERIODS_ASK_PAUSE_SHARE 0.01
/* ... and an ask is named while the debt is at most this: an ask after
 * another is answered at once unless asks have kept the sampler paused
 * of late (a first naming, which names every address, can take 100-300
 * ms: at 10 ms, the ask after it waited 15 s or more; now that naming is
 * done with sampling on, a copy takes milliseconds).
 * CPROF_ASK_PAUSE_BURST_MS sets it (for the tests). */
#define PERIODS_ASK_PAUSE_BURST_MS 200
int periods__ask(struct periods *p, const struct periods_ask *ask, periods_gone_fn gone,
		 void *arg, struct frames **out, struct profile_info *info,
		 struct periods_ask_cost *cost);

/* The CLOCK_REALTIME range the kept slices cover now (0, 0 when none). */
void periods__kept(struct periods *p, uint64_t *from_real, uint64_t *to_real);

/* The sampler's figures as of the last slice (any thread). */
void periods__sampler_stats(struct periods *p, struct sampler_stats *out);

/* A descriptor the loop that calls periods__poll() waits on: readable when
 * an ask needs it (call periods__poll() then). */
int periods__wake_fd(const struct periods *p);

/* Ends every ask waiting (-ECANCELED) and refuses the next ones: before
 * periods__finish() when the sampling ends. */
void periods__close(struct periods *p);

/* The next file's %n (and the next dump's, to DUMP_SEQ if not NULL), and
 * setting them (--pid-file: the files of the next process go on from
 * there). */
uint64_t periods__seq(const struct periods *p, uint64_t *dump_seq);
void periods__set_seq(struct periods *p, uint64_t seq, uint64_t dump_seq);


/* Each period's profile also goes to SINK (on the writer thread, after
 * its file); with FILES 0 it goes there only (--push without -o). */
typedef writer_sink periods_sink;
void periods__set_sink(struct periods *p, periods_sink sink, void *arg, int files);

/* The pattern's next file name (and its number taken), for the profile of
 * the whole run that --history alone writes at the end. */
int periods__next_name(struct periods *p, char *buf, size_t size, char *err, size_t errlen);
void periods__free(struct periods *p);           /* accepts NULL */



#endif
