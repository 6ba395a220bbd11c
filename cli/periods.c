#include "cli/periods.h"

#include <errno.h>
#include <malloc.h>
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "cli/outfile.h"
#include "util/timeutil.h"
#include "util/xalloc.h"

#define HISTORY_SLICE_NS 1000000000ull  /* the history's grain: a second */
/* With --period, a stack in no slice kept and not counted for this long is
 * freed (sampler__age), and so are the address-space generations only
 * such stacks named.  A stack that comes back after is counted anew, its
 * names still cached (output/frames.h).  CPROF_STACK_AGE (seconds) sets
 * it, for the tests: they cannot wait minutes. */
#define STACK_AGE_NS (60 * 1000000000ull)

struct job {
	struct frames *fr;
	struct profile_info info;
	char path[4096];
};

struct periods {
	const struct options *o;
	const char *pattern;            /* -o, or the default name */
	struct sampler *s;
	pid_t pid;
	periods_writer write;
	char *comment;
	struct names *names;
	uint64_t slice_ns, period_ns, history_ns;
	uint64_t age_ns;                /* STACK_AGE_NS */
	uint64_t next_slice;            /* CLOCK_MONOTONIC: the next slice is due */
	uint64_t next_period;           /* ... the period ends (UINT64_MAX: no --period) */
	uint64_t last_take;             /* CLOCK_REALTIME: the end of the last slice */
	/* The slices kept: those of the period being made and of the last
	 * history_ns, oldest first; slices[i] is slice number first + i. */
	struct stacks_slice *slices;
	size_t n, cap;
	uint64_t first;                 /* the number of slices[0] */
	uint64_t period_first;          /* the number of the period's first slice */
	uint64_t seq;                   /* the next file's %n */
	/* The writer thread and its queue. */
	pthread_t thread;
	int thread_started;
	pthread_mutex_t mu;
	pthread_cond_t cv;
	struct job q[PERIODS_QUEUE];
	size_t qhead, qn;
	int busy, quit;
	struct periods_stats st;        /* under mu */
};

int periods__is_pattern(const char *pattern)
{
	for (const char *c = pattern; (c = strchr(c, '%')); c += 2) {
		if (c[1] == 't' || c[1] == 'n')
			return 1;
		if (!c[1])
			break;
	}
	return 0;
}

int periods__expand(const char *pattern, pid_t pid, uint64_t seq, uint64_t start_ns, char *buf,
		    size_t size, char *err, size_t errlen)
{
	size_t o = 0;
	for (const char *c = pattern; *c; c++) {
		char piece[64];
		const char *add = piece;
		if (*c != '%') {
			piece[0] = *c;
			piece[1] = '\0';
		} else if (c[1] == '%') {
			add = "%";
			c++;
		} else if (c[1] == 'p') {
			snprintf(piece, sizeof(piece), "%d", (int)pid);
			c++;
		} else if (c[1] == 't') {
			time_t t = (time_t)(start_ns / 1000000000ull);
			struct tm tm;
			gmtime_r(&t, &tm);
			strftime(piece, sizeof(piece), "%Y%m%d-%H%M%S", &tm);
			c++;
		} else if (c[1] == 'n' && c[2] == '{') {
			char *end;
			errno = 0;
			unsigned long long max = strtoull(c + 3, &end, 10);
			if (end == c + 3 || *end != '}' || max == 0 || errno || c[3] == '-' || c[3] == '+') {
				snprintf(err, errlen, "-o %s: %%n{MAX} needs a whole number above 0 "
					 "between the braces", pattern);
				return -EINVAL;
			}
			snprintf(piece, sizeof(piece), "%llu", (unsigned long long)(seq % max));
			c = end;
		} else if (c[1] == 'n') {
			snprintf(piece, sizeof(piece), "%llu", (unsigned long long)seq);
			c++;
		} else {
			snprintf(err, errlen, "-o %s: unknown pattern '%%%s' (%%p, %%t, %%n, "
				 "%%n{MAX} and %%%% are known)", pattern, c[1] ? (char[]){ c[1], 0 } : "");
			return -EINVAL;
		}
		size_t len = strlen(add);
		if (o + len + 1 > size) {
			snprintf(err, errlen, "-o %s: the file name is too long", pattern);
			return -ENAMETOOLONG;
		}
		memcpy(buf + o, add, len);
		o += len;
	}
	buf[o] = '\0';
	return 0;
}

/* ---- the writer thread ------------------------------------------------- */

/* What starts a line of ours on stderr: on a terminal, the live status
 * line is erased first. */
static const char *line_start(void)
{
	return isatty(STDERR_FILENO) ? "\r\033[K" : "";
}

static void write_job(struct periods *p, struct job *j)
{
	struct outfile *f = NULL;
	char err[512];
	int e = outfile__open(&f, j->path, err, sizeof(err));
	if (e == 0) {
		e = p->write(outfile__fd(f), j->fr, &j->info, err, sizeof(err));
		if (e < 0) {
			char why[256];
			snprintf(why, sizeof(why), "%.250s", err);
			snprintf(err, sizeof(err), "cannot write the profile to %.200s: %.250s", j->path, why);
		} else {
			e = outfile__commit(f, err, sizeof(err));
		}
	}
	outfile__free(f);
	pthread_mutex_lock(&p->mu);
	if (e < 0) {
		p->st.failed++;
		fprintf(stderr, "%scprof-attach: error: %s (sampling goes on)\n", line_start(), err);
	} else {
		p->st.written++;
		snprintf(p->st.last, sizeof(p->st.last), "%s", j->path);
	}
	pthread_mutex_unlock(&p->mu);
}

/* A period's naming and encoding allocate megabytes for a moment (the
 * view, the named frames, the encoder's buffers), in the periods thread's
 * arena and the writer's.  Freed, that memory stays in the arenas, in
 * pieces, and RSS wanders with where the next period's pieces land:
 * malloc_trim() after each file gives the free pages back.  Measured on
 * tests/bin/churn with libraries (bench/always.sh's target), --period
 * 10s, RSS every 15 s from 2 to 4 minutes: 36.0-38.6 MB without, 35.2-35.8
 * MB with; a malloc_trim() took 0.18 ms at most. */
static void trim_heap(struct periods *p)
{
	uint64_t t0 = now_ns();
	malloc_trim(0);
	double ms = (double)(now_ns() - t0) / 1e6;
	pthread_mutex_lock(&p->mu);
	if (ms > p->st.trim_ms_max)
		p->st.trim_ms_max = ms;
	pthread_mutex_unlock(&p->mu);
}

static void *writer_main(void *arg)
{
	struct periods *p = arg;
	pthread_mutex_lock(&p->mu);
	for (;;) {
		while (!p->qn && !p->quit)
			pthread_cond_wait(&p->cv, &p->mu);
		if (!p->qn)
			break;
		struct job j = p->q[p->qhead];
		p->qhead = (p->qhead + 1) % PERIODS_QUEUE;
		p->qn--;
		p->busy = 1;
		pthread_mutex_unlock(&p->mu);
		write_job(p, &j);
		frames__free(j.fr);
		trim_heap(p);
		pthread_mutex_lock(&p->mu);
		p->busy = 0;
		pthread_cond_broadcast(&p->cv);
	}
	pthread_mutex_unlock(&p->mu);
	return NULL;
}

/* Hands FR to the writer; the oldest waiting profile makes room. */
static void enqueue(struct periods *p, struct frames *fr, const struct profile_info *info,
		    const char *path)
{
	pthread_mutex_lock(&p->mu);
	if (p->qn == PERIODS_QUEUE) {
		frames__free(p->q[p->qhead].fr);
		p->qhead = (p->qhead + 1) % PERIODS_QUEUE;
		p->qn--;
		p->st.dropped++;
	}
	struct job *j = &p->q[(p->qhead + p->qn) % PERIODS_QUEUE];
	j->fr = fr;
	j->info = *info;
	snprintf(j->path, sizeof(j->path), "%s", path);
	p->qn++;
	pthread_cond_broadcast(&p->cv);
	pthread_mutex_unlock(&p->mu);
}

/* ---- slices ------------------------------------------------------------- */

static uint64_t real_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_REALTIME, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* With the sampler paused: the counts since the last slice. */
static void take_slice(struct periods *p)
{
	if (p->n == p->cap) {
		p->cap = p->cap ? 2 * p->cap : 16;
		p->slices = xrealloc(p->slices, p->cap * sizeof(*p->slices));
	}
	struct stacks_slice *sl = &p->slices[p->n++];
	sampler__take(p->s, sl);
	uint64_t now = real_ns();
	sl->start_ns = p->last_take;
	sl->end_ns = now > p->last_take ? now : p->last_take;
	p->last_take = sl->end_ns;
	p->st.slices++;
}

/* Drops the slices no longer needed: written with their period (or there
 * is no --period) and older than the history. */
static void trim(struct periods *p)
{
	uint64_t now = p->last_take;
	size_t drop = 0;
	while (drop < p->n && p->first + drop < p->period_first &&
	       (!p->history_ns || p->slices[drop].end_ns + p->history_ns <= now))
		stacks__slice_free(&p->slices[drop++]);
	if (drop) {
		memmove(p->slices, p->slices + drop, (p->n - drop) * sizeof(*p->slices));
		p->n -= drop;
		p->first += drop;
	}
	uint64_t bytes = 0;
	for (size_t i = 0; i < p->n; i++)
		bytes += p->slices[i].n * (sizeof(int64_t) + 2 * sizeof(uint64_t));
	pthread_mutex_lock(&p->mu);
	p->st.history_slices = p->n;
	p->st.history_bytes = bytes;
	pthread_mutex_unlock(&p->mu);
}

static void forget_space(void *arg, uint32_t space)
{
	names__forget(arg, space);
}

/* With the sampler paused, after a take and trim(): with --period, the
 * stacks in no slice kept and not counted for STACK_AGE_NS are freed.
 * Without it (--history alone) the profile of the whole run is written at
 * the end, from every stack's whole-run count: nothing is freed. */
static void age(struct periods *p)
{
	if (!p->period_ns)
		return;
	uint64_t now = stacks__epoch(sampler__stacks(p->s));
	uint64_t keep = (p->age_ns + p->slice_ns - 1) / p->slice_ns;
	uint64_t before = now > keep ? now - keep : 0;
	if (p->n && p->slices[0].epoch < before)
		before = p->slices[0].epoch;
	uint64_t t0 = now_ns();
	size_t freed = sampler__age(p->s, before, forget_space, p->names);
	pthread_mutex_lock(&p->mu);
	p->st.stacks_freed += freed;
	p->st.age_ms_max = fmax(p->st.age_ms_max, (double)(now_ns() - t0) / 1e6);
	pthread_mutex_unlock(&p->mu);
}

/* With the sampler paused: slices [FROM, TO) (numbers) named, for the
 * writer.  NULL when they hold no sample (or out of memory). */
static struct frames *name_slices(struct periods *p, uint64_t from, uint64_t to)
{
	size_t a = (size_t)(from - p->first), b = (size_t)(to - p->first), k = 0;
	const struct stacks_slice **v = xcalloc(b - a + 1, sizeof(*v));
	uint64_t total = 0;
	for (size_t i = a; i < b; i++) {
		v[k++] = &p->slices[i];
		total += p->slices[i].total;
	}
	struct frames *fr = NULL;
	if (total) {
		struct stacks *view = stacks__view(sampler__stacks(p->s), v, k);
		size_t ns = sampler__nspaces(p->s);
		const struct modules **spaces = xcalloc(ns + 1, sizeof(*spaces));
		for (size_t i = 0; i < ns; i++)
			spaces[i] = sampler__space(p->s, i);
		if (view)
			fr = frames__name(p->names, view, spaces, ns);
		free(spaces);
		stacks__free(view);
	}
	free(v);
	return fr;
}

static void info_for(const struct periods *p, uint64_t start, uint64_t end, struct profile_info *info)
{
	*info = (struct profile_info){
		.period_ns = 1000000000ull / (uint64_t)p->o->hz, .start_ns = start,
		.duration_ns = end > start ? end - start : 0, .comment = p->comment,
		.thread_root = p->o->thread_root, .process_root = p->o->processes,
		.weight_cpu = p->o->cpu, .syscall_leaf = p->o->syscall_leaf,
	};
}

/* FR (the slices from START to END, named) to the next file of the pattern. */
static void emit(struct periods *p, struct frames *fr, uint64_t start, uint64_t end)
{
	char path[4096], err[256];
	struct profile_info info;
	if (!fr)
		return;
	if (periods__expand(p->pattern, p->pid, p->seq++, start, path, sizeof(path), err,
			    sizeof(err)) < 0) {
		fprintf(stderr, "%scprof-attach: error: %s\n", line_start(), err);
		frames__free(fr);
		return;
	}
	info_for(p, start, end, &info);
	enqueue(p, fr, &info, path);
}

/* With the sampler paused: the period that ends now, if it is due. */
static void end_period(struct periods *p)
{
	uint64_t to = p->first + p->n;
	if (p->period_ns == 0 || to == p->period_first)
		return;
	size_t a = (size_t)(p->period_first - p->first);
	uint64_t start = p->slices[a].start_ns, end = p->slices[p->n - 1].end_ns;
	struct frames *fr = name_slices(p, p->period_first, to);
	p->period_first = to;
	pthread_mutex_lock(&p->mu);
	p->st.periods++;
	pthread_mutex_unlock(&p->mu);
	emit(p, fr, start, end);
}

/* Pauses the sampler for WORK, timing the pause. */
static void paused(struct periods *p, void (*work)(struct periods *, int), int arg)
{
	uint64_t t0 = now_ns();
	sampler__pause(p->s);
	work(p, arg);
	sampler__resume(p->s);
	double ms = (double)(now_ns() - t0) / 1e6;
	pthread_mutex_lock(&p->mu);
	if (ms > p->st.name_ms_max)
		p->st.name_ms_max = ms;
	pthread_mutex_unlock(&p->mu);
}

static void slice_work(struct periods *p, int period_due)
{
	take_slice(p);
	if (!p->period_ns)
		p->period_first = p->first + p->n;     /* kept for the history only */
	if (period_due)
		end_period(p);
	trim(p);
	age(p);
}

int periods__poll(struct periods *p)
{
	uint64_t now = now_ns();
	if (now >= p->next_slice) {
		int due = now + p->slice_ns / 4 >= p->next_period;
		paused(p, slice_work, due);
		while (p->next_slice <= now)
			p->next_slice += p->slice_ns;
		while (due && p->next_period <= now + p->slice_ns / 4)
			p->next_period += p->period_ns;
		now = now_ns();
	}
	uint64_t left = p->next_slice > now ? p->next_slice - now : 0;
	return (int)((left + 999999) / 1000000);
}

static void dump_work(struct periods *p, int unused)
{
	(void)unused;
	take_slice(p);
	uint64_t now = p->last_take, from = p->first + p->n;
	while (from > p->first && p->slices[from - 1 - p->first].end_ns + p->history_ns > now)
		from--;
	if (from < p->first + p->n) {
		uint64_t start = p->slices[from - p->first].start_ns;
		struct frames *fr = name_slices(p, from, p->first + p->n);
		pthread_mutex_lock(&p->mu);
		p->st.dumps++;
		pthread_mutex_unlock(&p->mu);
		emit(p, fr, start, now);
	}
	trim(p);
}

void periods__dump(struct periods *p)
{
	if (p->history_ns)
		paused(p, dump_work, 0);
}

void periods__finish(struct periods *p)
{
	/* The sampler has stopped: its tables are ours. */
	if (p->period_ns) {
		take_slice(p);
		end_period(p);
	}
	pthread_mutex_lock(&p->mu);
	p->quit = 1;
	pthread_cond_broadcast(&p->cv);
	pthread_mutex_unlock(&p->mu);
	if (p->thread_started)
		pthread_join(p->thread, NULL);
	p->thread_started = 0;
}

int periods__new(struct periods **out, const struct options *o, const char *pattern,
		 struct sampler *s, pid_t pid, periods_writer write, const char *comment, char *err,
		 size_t errlen)
{
	char path[4096];
	*out = NULL;
	int e = periods__expand(pattern, pid, 0, real_ns(), path, sizeof(path), err, errlen);
	if (e < 0)
		return e;
	struct periods *p = xcalloc(1, sizeof(*p));
	p->o = o;
	p->pattern = pattern;
	p->s = s;
	p->pid = pid;
	p->write = write;
	p->comment = xstrdup(comment ? comment : "");
	p->names = names__new(o->debug_dirs, o->ndebug_dirs);
	p->period_ns = o->period > 0 ? (uint64_t)llround(o->period * 1e9) : 0;
	p->history_ns = o->history > 0 ? (uint64_t)llround(o->history * 1e9) : 0;
	p->slice_ns = p->period_ns ? p->period_ns : HISTORY_SLICE_NS;
	const char *age = getenv("CPROF_STACK_AGE");
	p->age_ns = age && atof(age) >= 0 ? (uint64_t)llround(atof(age) * 1e9) : STACK_AGE_NS;
	if (p->history_ns && p->slice_ns > HISTORY_SLICE_NS)
		p->slice_ns = HISTORY_SLICE_NS;
	struct sampler_progress pr;
	sampler__progress(s, &pr);
	uint64_t now = now_ns(), start = pr.start_ns && pr.start_ns <= now ? pr.start_ns : now;
	p->next_slice = start + p->slice_ns;
	p->next_period = p->period_ns ? start + p->period_ns : UINT64_MAX;
	p->last_take = real_ns() - (now - start);
	pthread_mutex_init(&p->mu, NULL);
	pthread_cond_init(&p->cv, NULL);
	if (!p->names || pthread_create(&p->thread, NULL, writer_main, p) != 0) {
		snprintf(err, errlen, "cannot start the writer thread");
		periods__free(p);
		return -ENOMEM;
	}
	p->thread_started = 1;
	*out = p;
	return 0;
}

int periods__next_name(struct periods *p, char *buf, size_t size, char *err, size_t errlen)
{
	return periods__expand(p->pattern, p->pid, p->seq++, real_ns(), buf, size, err, errlen);
}

uint64_t periods__seq(const struct periods *p)
{
	return p->seq;
}

void periods__set_seq(struct periods *p, uint64_t seq)
{
	p->seq = seq;
}

void periods__stats(const struct periods *p, struct periods_stats *out)
{
	pthread_mutex_lock((pthread_mutex_t *)&p->mu);
	*out = p->st;
	pthread_mutex_unlock((pthread_mutex_t *)&p->mu);
}

void periods__free(struct periods *p)
{
	if (!p)
		return;
	if (p->thread_started) {
		pthread_mutex_lock(&p->mu);
		p->quit = 1;
		pthread_cond_broadcast(&p->cv);
		pthread_mutex_unlock(&p->mu);
		pthread_join(p->thread, NULL);
	}
	for (size_t i = 0; i < p->qn; i++)
		frames__free(p->q[(p->qhead + i) % PERIODS_QUEUE].fr);
	for (size_t i = 0; i < p->n; i++)
		stacks__slice_free(&p->slices[i]);
	free(p->slices);
	names__free(p->names);
	free(p->comment);
	pthread_mutex_destroy(&p->mu);
	pthread_cond_destroy(&p->cv);
	free(p);
}
