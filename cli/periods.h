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
 * first to hold.  Encoding and writing happen on a writer thread of their
 * own, from a queue of PERIODS_QUEUE profiles: a slow or full disk delays
 * the files, never a tick; when the queue is full the oldest waiting
 * profile is dropped and counted.
 *
 * File names: -o's pattern, as async-profiler's -f: %p the first target's
 * PID, %t the period's start (UTC, YYYYmmdd-HHMMSS), %n the sequence number
 * from 0, %n{MAX} that number modulo MAX (a ring of MAX files), %% a '%'.
 * A name without a pattern is replaced at each period (atomically:
 * cli/outfile.h). */
#ifndef CPROF_CLI_PERIODS_H
#define CPROF_CLI_PERIODS_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "cli/options.h"
#include "output/frames.h"
#include "output/output.h"
#include "sample/sampler.h"

#define PERIODS_QUEUE 4

typedef int (*periods_writer)(int fd, const struct frames *fr, const struct profile_info *info,
			      char *err, size_t errlen);

struct periods_stats {
	uint64_t periods;               /* profiles made for periods */
	uint64_t dumps;                 /* ... for SIGUSR1 (the history) */
	uint64_t written, failed, dropped;      /* files: written, not written, dropped unwritten */
	uint64_t slices;
	uint64_t history_slices, history_bytes; /* kept now */
	double name_ms_max;             /* the longest pause for naming */
	uint64_t stacks_freed;          /* stacks aged out (sampler__age) */
	double age_ms_max;              /* the longest of those walks */
	double trim_ms_max;             /* the longest malloc_trim() after a file */
	char last[4096];                /* the last file written */
};

struct periods;

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

/* The next file's %n, and setting it (--pid-file: the files of the next
 * process go on from there). */
uint64_t periods__seq(const struct periods *p);
void periods__set_seq(struct periods *p, uint64_t seq);

/* The pattern's next file name (and its number taken), for the profile of
 * the whole run that --history alone writes at the end. */
int periods__next_name(struct periods *p, char *buf, size_t size, char *err, size_t errlen);
void periods__free(struct periods *p);           /* accepts NULL */

/* Expands PATTERN into BUF for PID, sequence number SEQ and the time
 * START_NS (CLOCK_REALTIME).  Returns 0, or -EINVAL (with ERR) for an
 * unknown %-sequence or a bad %n{MAX}; -ENAMETOOLONG when it does not fit. */
int periods__expand(const char *pattern, pid_t pid, uint64_t seq, uint64_t start_ns, char *buf,
		    size_t size, char *err, size_t errlen);

/* Whether PATTERN has a %-sequence that changes from one file to the next. */
int periods__is_pattern(const char *pattern);

#endif
