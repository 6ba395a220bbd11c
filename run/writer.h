/* writer: the thread that writes a run's profiles, in turn, from a queue
 * of WRITER_QUEUE: encoding and writing happen there, so a slow or full
 * disk delays the files, never a tick; when the queue is full the oldest
 * waiting profile is dropped and counted.  Each profile goes to its file
 * (run/outfile.h: written whole or not at all) and, a period's, to the
 * sink (--push) too. */
#ifndef CPROF_RUN_WRITER_H
#define CPROF_RUN_WRITER_H

#include <stddef.h>
#include <stdint.h>

#include "output/frames.h"
#include "output/output.h"

#define WRITER_QUEUE 4

typedef int (*writer_fn)(int fd, const struct frames *fr, const struct profile_info *info,
			 char *err, size_t errlen);
typedef void (*writer_sink)(void *arg, const struct frames *fr, const struct profile_info *info);

struct writer;

struct writer_stats {
	uint64_t written, failed, dropped;      /* files: written, not written, dropped unwritten */
	double trim_ms_max;             /* the longest malloc_trim() after a file */
	char last[4096];                /* the last file written */
};

/* A writer thread writing with WRITE; NULL if it cannot start. */
struct writer *writer__new(writer_fn write);
void writer__set_sink(struct writer *w, writer_sink sink, void *arg);
/* Hands FR (the writer frees it) to the queue: to PATH ("": no file), to
 * the sink too if SINK.  A DUMP (SIGUSR1's) is said when written, with how
 * long its naming paused sampling (PAUSE_MS) and the seconds of history it
 * covers (HISTORY_S). */
void writer__enqueue(struct writer *w, struct frames *fr, const struct profile_info *info,
		     const char *path, int sink, int dump, double pause_ms, double history_s);
/* Writes what is queued, then ends the thread. */
void writer__finish(struct writer *w);
void writer__stats(struct writer *w, struct writer_stats *out);
void writer__free(struct writer *w);

#endif
