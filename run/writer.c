/* writer: a run's profiles written on a thread of their own (run/writer.h). */
#include "run/writer.h"

#include <malloc.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "run/outfile.h"
#include "util/timeutil.h"
#include "util/xalloc.h"

struct job {
	struct frames *fr;
	struct profile_info info;
	char path[4096];                /* "": no file, the sink only */
	int sink;                       /* a period: to the sink too */
	int dump;                       /* a dump of the history (SIGUSR1): said when written */
	double pause_ms;                /* ... how long its naming paused sampling */
	double history_s;               /* ... the history's length */
};

struct writer {
	writer_fn write;
	writer_sink sink;
	void *sink_arg;
	pthread_t thread;
	int thread_started;
	pthread_mutex_t mu;
	pthread_cond_t cv;
	struct job q[WRITER_QUEUE];
	size_t qhead, qn;
	int busy, quit;
	struct writer_stats st;         /* under mu */
};

/* What starts a line of ours on stderr: on a terminal, the live status
 * line is erased first. */
static const char *line_start(void)
{
	return isatty(STDERR_FILENO) ? "\r\033[K" : "";
}

static void write_job(struct writer *w, struct job *j)
{
	if (w->sink && j->sink)
		w->sink(w->sink_arg, j->fr, &j->info);
	if (!j->path[0])
		return;
	struct outfile *f = NULL;
	char err[512];
	uint64_t t0 = now_ns();
	int e = outfile__open(&f, j->path, err, sizeof(err));
	if (e == 0) {
		e = w->write(outfile__fd(f), j->fr, &j->info, err, sizeof(err));
		if (e < 0) {
			char why[256];
			snprintf(why, sizeof(why), "%.250s", err);
			snprintf(err, sizeof(err), "cannot write the profile to %.200s: %.250s", j->path, why);
		} else {
			e = outfile__commit(f, err, sizeof(err));
		}
	}
	outfile__free(f);
	pthread_mutex_lock(&w->mu);
	if (e < 0) {
		w->st.failed++;
		fprintf(stderr, "%scprof-attach: error: %s (sampling goes on)\n", line_start(), err);
	} else {
		w->st.written++;
		snprintf(w->st.last, sizeof(w->st.last), "%s", j->path);
	}
	pthread_mutex_unlock(&w->mu);
	/* A dump is asked for by hand (SIGUSR1, systemctl kill): where it
	 * went is said at once (journalctl shows it). */
	if (e == 0 && j->dump)
		fprintf(stderr, "%scprof-attach: SIGUSR1: wrote the history's last %.0f s (%.1f s "
			"of samples) to %s in %.0f ms (its naming paused sampling %.1f ms)\n",   /* the copy's pause */
			line_start(), j->history_s, (double)j->info.duration_ns / 1e9,
			j->path, (double)(now_ns() - t0) / 1e6, j->pause_ms);
}

/* A period's naming and encoding allocate megabytes for a moment (the
 * view, the named frames, the encoder's buffers), in the periods thread's
 * arena and the writer's.  Freed, that memory stays in the arenas, in
 * pieces, and RSS wanders with where the next period's pieces land:
 * malloc_trim() after each file gives the free pages back.  Measured on
 * tests/bin/churn with libraries (bench/always.sh's target), --period
 * 10s, RSS every 15 s from 2 to 4 minutes: 36.0-38.6 MB without, 35.2-35.8
 * MB with; a malloc_trim() took 0.18 ms at most. */
static void trim_heap(struct writer *w)
{
	uint64_t t0 = now_ns();
	malloc_trim(0);
	double ms = (double)(now_ns() - t0) / 1e6;
	pthread_mutex_lock(&w->mu);
	if (ms > w->st.trim_ms_max)
		w->st.trim_ms_max = ms;
	pthread_mutex_unlock(&w->mu);
}

static void *writer_main(void *arg)
{
	struct writer *w = arg;
	pthread_mutex_lock(&w->mu);
	for (;;) {
		while (!w->qn && !w->quit)
			pthread_cond_wait(&w->cv, &w->mu);
		if (!w->qn)
			break;
		struct job j = w->q[w->qhead];
		w->qhead = (w->qhead + 1) % WRITER_QUEUE;
		w->qn--;
		w->busy = 1;
		pthread_mutex_unlock(&w->mu);
		write_job(w, &j);
		frames__free(j.fr);
		trim_heap(w);
		pthread_mutex_lock(&w->mu);
		w->busy = 0;
		pthread_cond_broadcast(&w->cv);
	}
	pthread_mutex_unlock(&w->mu);
	return NULL;
}

struct writer *writer__new(writer_fn write)
{
	struct writer *w = xcalloc(1, sizeof(*w));
	w->write = write;
	pthread_mutex_init(&w->mu, NULL);
	pthread_cond_init(&w->cv, NULL);
	if (pthread_create(&w->thread, NULL, writer_main, w) != 0) {
		writer__free(w);
		return NULL;
	}
	w->thread_started = 1;
	return w;
}

void writer__set_sink(struct writer *w, writer_sink sink, void *arg)
{
	pthread_mutex_lock(&w->mu);
	w->sink = sink;
	w->sink_arg = arg;
	pthread_mutex_unlock(&w->mu);
}

void writer__enqueue(struct writer *w, struct frames *fr, const struct profile_info *info,
		     const char *path, int sink, int dump, double pause_ms, double history_s)
{
	pthread_mutex_lock(&w->mu);
	if (w->qn == WRITER_QUEUE) {
		frames__free(w->q[w->qhead].fr);
		w->qhead = (w->qhead + 1) % WRITER_QUEUE;
		w->qn--;
		w->st.dropped++;
	}
	struct job *j = &w->q[(w->qhead + w->qn) % WRITER_QUEUE];
	j->fr = fr;
	j->info = *info;
	snprintf(j->path, sizeof(j->path), "%s", path);
	j->sink = sink;
	j->dump = dump;
	j->pause_ms = pause_ms;
	j->history_s = history_s;
	w->qn++;
	pthread_cond_broadcast(&w->cv);
	pthread_mutex_unlock(&w->mu);
}

void writer__finish(struct writer *w)
{
	if (!w || !w->thread_started)
		return;
	pthread_mutex_lock(&w->mu);
	w->quit = 1;
	pthread_cond_broadcast(&w->cv);
	pthread_mutex_unlock(&w->mu);
	pthread_join(w->thread, NULL);
	w->thread_started = 0;
}

void writer__stats(struct writer *w, struct writer_stats *out)
{
	pthread_mutex_lock(&w->mu);
	*out = w->st;
	pthread_mutex_unlock(&w->mu);
}

void writer__free(struct writer *w)
{
	if (!w)
		return;
	writer__finish(w);
	for (size_t i = 0; i < w->qn; i++)
		frames__free(w->q[(w->qhead + i) % WRITER_QUEUE].fr);
	pthread_mutex_destroy(&w->mu);
	pthread_cond_destroy(&w->cv);
	free(w);
}
