#include "run/periods.h"

#include <errno.h>
#include <math.h>
#include <poll.h>
#include <pthread.h>
#include <sys/eventfd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "run/namer.h"
#include "run/naming.h"
#include "run/pattern.h"
#include "run/writer.h"
#include "util/timeutil.h"
#include "util/xalloc.h"

#define HISTORY_SLICE_NS 1000000000ull  /* the history's grain: a second */
/* With --period, a stack in no slice kept and not counted for this long is
 * freed (sampler__age), and so are the address-space generations only
 * such stacks named.  A stack that comes back after is counted anew, its
 * names still cached (output/frames.h).  CPROF_STACK_AGE (seconds) sets
 * it, for the tests: they cannot wait minutes. */
#define STACK_AGE_NS (60 * 1000000000ull)
/* The most the history's counts may hold (run/periods.h HISTORY_MAX_BYTES);
 * CPROF_HISTORY_BYTES sets it, for the tests. */

/* A naming prepared with the sampler paused and made by the namer's
 * thread (run/namer.h) while the loop and the sampler go on: the stacks of
 * its window copied (stacks__view), the spaces' tables copied
 * (run/naming.h), neither changed by anyone after.  Naming a window of
 * minutes took seconds, every one of them with sampling paused (and the
 * loop, the asks' windows with it); the copies take milliseconds. */
enum { JOB_PERIOD, JOB_DUMP, JOB_TICK, JOB_ASK, JOB_FORGET };

struct job {
	int kind;
	struct stacks *view;            /* NULL: out of memory */
	struct naming_set *set;         /* the spaces' tables as of its pause */
	uint64_t start, end;            /* JOB_PERIOD, JOB_DUMP: the window */
	struct ask *ask;                /* JOB_TICK, JOB_ASK */
	struct profile_info info;       /* JOB_TICK, JOB_ASK */
	uint64_t copy_ns;               /* JOB_TICK, JOB_ASK: its copy's share of the pause */
	double pause_ms;                /* JOB_DUMP: its pause */
	uint32_t space;                 /* JOB_FORGET: a space aged out */
};

/* An ask (periods__ask) between the thread that asked and the loop. */
enum { ASK_QUEUED, ASK_RUNNING, ASK_NAMING, ASK_JOB, ASK_DONE };   /* ASK_JOB: the namer's */

struct ask {
	struct periods_ask a;
	int state;
	int gone;                       /* the asker left: the loop frees it */
	uint64_t from;                  /* ASK_RUNNING, ASK_NAMING: its first slice's number */
	uint64_t due;                   /* ASK_RUNNING: CLOCK_MONOTONIC: when it ends */
	uint64_t to;                    /* ASK_NAMING: the slice after its last */
	struct profile_info pinfo;      /* ... its window's times */
	double pause_ms;                /* its window's copy paused sampling this long */
	double name_cpu_ms;             /* its naming's CPU, after */
	int waited;                     /* it waited for the budget */
	int err;
	struct frames *fr;
	struct profile_info info;
	struct ask *next;
};

struct periods {
	const struct options *o;
	const char *pattern;            /* -o, or the default name */
	struct sampler *s;
	pid_t pid;
	char *comment;
	struct namer *namer;            /* names the jobs, on its thread */
	struct naming_spaces *spaces;   /* the spaces' latest tables copied */
	uint32_t *forgotten;            /* spaces aged out, forgotten at the next pause */
	size_t nforgotten, forgotten_cap;
	struct job *jobs;               /* prepared in this pause */
	size_t njobs, jobs_cap;
	uint64_t slice_ns, period_ns, history_ns;
	uint64_t age_ns;                /* STACK_AGE_NS */
	uint64_t history_cap;           /* HISTORY_MAX_BYTES */
	int said_cap;                   /* the cap was said once */
	int whole_run;                  /* the end writes the whole run: no aging */
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
	/* With --period, dumps (SIGUSR1) go to names of their own, where the
	 * periods' files never reach: the pattern with "dump-" before its
	 * file name, numbered on their own. */
	char *dump_pattern;             /* NULL: the pattern's next name, as the end's */
	int ticked_now;                 /* paused after a tick made for an ask (ASK_TICK) */
	uint64_t dump_seq;
	struct writer *writer;          /* writes the files, and to the sink */
	pthread_mutex_t mu;
	struct periods_stats st;        /* under mu */
	struct sampler_stats sst;       /* under mu: as of the last slice */
	/* Asks, under mu: a list, newest first; the loop is woken by wake. */
	struct ask *asks;
	size_t nasks;
	int closed;
	int wake;
	pthread_cond_t asked;           /* an ask is done */
	uint64_t kept_from, kept_to;    /* under mu: what the slices cover */
	/* The asks' budget of pauses (PERIODS_ASK_PAUSE_SHARE): their naming
	 * put DEBT ns of pause to be repaid, as of DEBT_AT (CLOCK_MONOTONIC). */
	double pause_share;
	double pause_burst;             /* ns: PERIODS_ASK_PAUSE_BURST_MS */
	double debt;
	uint64_t debt_at;
	int over_budget;                /* a tick ask (ASK_TICK) waits for it */
	int files;                      /* the periods go to files (not to --push alone) */
};

/* ---- slices ------------------------------------------------------------- */

/* What starts a line of ours on stderr: on a terminal, the live status
 * line is erased first. */
static const char *line_start(void)
{
	return isatty(STDERR_FILENO) ? "\r\033[K" : "";
}

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
static uint64_t asks_oldest(struct periods *p);

/* What slice SL holds, in bytes. */
static uint64_t slice_bytes(const struct stacks_slice *sl)
{
	return sl->n * (sizeof(int64_t) + 2 * sizeof(uint64_t));
}

static void trim(struct periods *p)
{
	uint64_t now = p->last_take, keep = asks_oldest(p);
	size_t drop = 0;
	while (drop < p->n && p->first + drop < p->period_first && p->first + drop < keep &&
	       (!p->history_ns || p->slices[drop].end_ns + p->history_ns <= now))
		stacks__slice_free(&p->slices[drop++]);
	if (drop) {
		memmove(p->slices, p->slices + drop, (p->n - drop) * sizeof(*p->slices));
		p->n -= drop;
		p->first += drop;
	}
	uint64_t bytes = 0;
	for (size_t i = 0; i < p->n; i++)
		bytes += slice_bytes(&p->slices[i]);
	/* Past the cap in bytes, the oldest seconds go (not those a period
	 * or an ask still needs) */
	size_t capped = 0;
	while (bytes > p->history_cap && capped < p->n && p->first + capped < p->period_first &&
	       p->first + capped < keep) {
		bytes -= slice_bytes(&p->slices[capped]);
		stacks__slice_free(&p->slices[capped++]);
	}
	if (capped) {
		memmove(p->slices, p->slices + capped, (p->n - capped) * sizeof(*p->slices));
		p->n -= capped;
		p->first += capped;
		if (!p->said_cap) {
			p->said_cap = 1;
			fprintf(stderr, "%scprof-attach: note: the history reached its cap of %.1f MiB: its "
				"oldest seconds are dropped (it holds %.0f s of the %.0f s asked)\n", line_start(),
				(double)p->history_cap / (1 << 20),
				p->n ? (double)(p->slices[p->n - 1].end_ns - p->slices[0].start_ns) / 1e9 : 0,
				(double)p->history_ns / 1e9);
		}
	}
	pthread_mutex_lock(&p->mu);
	p->st.history_capped += capped;
	p->st.history_slices = p->n;
	p->st.history_bytes = bytes;
	p->kept_from = p->n ? p->slices[0].start_ns : 0;
	p->kept_to = p->n ? p->slices[p->n - 1].end_ns : 0;
	pthread_mutex_unlock(&p->mu);
}

/* A space aged out is forgotten at the next pause: this pause's jobs may
 * still name stacks of it, from the copy of its table they hold. */
static void forget_space(void *arg, uint32_t space)
{
	struct periods *p = arg;
	if (p->nforgotten == p->forgotten_cap) {
		p->forgotten_cap = p->forgotten_cap ? 2 * p->forgotten_cap : 8;
		p->forgotten = xrealloc(p->forgotten, p->forgotten_cap * sizeof(*p->forgotten));
	}
	p->forgotten[p->nforgotten++] = space;
}

static struct job *new_job(struct periods *p, int kind);

/* With the sampler paused or stopped, before any job of this pause: the
 * spaces aged out at the last are let go, by the namer after the jobs
 * before (they may name stacks of them). */
static void forget_spaces(struct periods *p)
{
	for (size_t i = 0; i < p->nforgotten; i++) {
		naming__spaces_forget(p->spaces, p->forgotten[i]);
		new_job(p, JOB_FORGET)->space = p->forgotten[i];
	}
	p->nforgotten = 0;
}

/* With the sampler paused, after a take and trim(): with --period, the
 * stacks in no slice kept and not counted for STACK_AGE_NS are freed.
 * Without it (--history alone, or --listen with -o) the profile of the
 * whole run is written at the end, from every stack's whole-run count:
 * nothing is freed. */
static void age(struct periods *p)
{
	if (p->whole_run)
		return;
	uint64_t now = stacks__epoch(sampler__stacks(p->s));
	uint64_t keep = (p->age_ns + p->slice_ns - 1) / p->slice_ns;
	uint64_t before = now > keep ? now - keep : 0;
	if (p->n && p->slices[0].epoch < before)
		before = p->slices[0].epoch;
	uint64_t t0 = now_ns();
	size_t freed = sampler__age(p->s, before, forget_space, p);
	pthread_mutex_lock(&p->mu);
	p->st.stacks_freed += freed;
	p->st.age_ms_max = fmax(p->st.age_ms_max, (double)(now_ns() - t0) / 1e6);
	pthread_mutex_unlock(&p->mu);
}

/* A job of this pause, handed over to the namer once sampling resumes. */
static struct job *new_job(struct periods *p, int kind)
{
	if (p->njobs == p->jobs_cap) {
		p->jobs_cap = p->jobs_cap ? 2 * p->jobs_cap : 4;
		p->jobs = xrealloc(p->jobs, p->jobs_cap * sizeof(*p->jobs));
	}
	struct job *j = &p->jobs[p->njobs++];
	*j = (struct job){ .kind = kind };
	return j;
}

/* With the sampler paused: a job naming the K slices V, copied now with
 * the spaces' tables. */
static struct job *add_job(struct periods *p, int kind, const struct stacks_slice *const *v,
			   size_t k)
{
	uint64_t t0 = now_ns();
	struct job *j = new_job(p, kind);
	j->set = naming__spaces_take(p->spaces, p->s);
	j->view = stacks__view(sampler__stacks(p->s), v, k);
	j->copy_ns = now_ns() - t0;
	return j;
}

/* With the sampler paused: a job naming slices [FROM, TO) (numbers), or
 * NULL when they hold no sample (unless EMPTY_OK). */
static struct job *add_slices_job(struct periods *p, int kind, uint64_t from, uint64_t to,
				  int empty_ok)
{
	size_t a = (size_t)(from - p->first), b = (size_t)(to - p->first), k = 0;
	const struct stacks_slice **v = xcalloc(b - a + 1, sizeof(*v));
	uint64_t total = 0;
	for (size_t i = a; i < b; i++) {
		v[k++] = &p->slices[i];
		total += p->slices[i].total;
	}
	struct job *j = total || empty_ok ? add_job(p, kind, v, k) : NULL;
	free(v);
	return j;
}

/* With the sampler paused right after a tick of every thread
 * (sampler__pause_now): a job naming each thread's stack at that tick. */
static struct job *add_now_job(struct periods *p)
{
	struct stacks_slice sl;
	sampler__now_slice(p->s, &sl);
	const struct stacks_slice *v[1] = { &sl };
	struct job *j = add_job(p, JOB_TICK, v, 1);
	stacks__slice_free(&sl);
	return j;
}

static void info_for(const struct periods *p, uint64_t start, uint64_t end, struct profile_info *info)
{
	*info = (struct profile_info){
		.period_ns = options__sample_period_ns(p->o), .start_ns = start,
		.duration_ns = end > start ? end - start : 0, .comment = p->comment,
		.thread_root = p->o->thread_root, .process_root = p->o->processes,
		.weight_cpu = p->o->cpu, .syscall_leaf = p->o->syscall_leaf,
	};
}

/* On the namer's thread: FR (the slices from START to END, named) to the
 * next file of the pattern; a PERIOD's to the sink too, and to a file
 * only with files; a dump (not a PERIOD, whose copy paused sampling
 * PAUSE_MS) to the dumps' own names with --period. */
static void emit(struct periods *p, struct frames *fr, uint64_t start, uint64_t end, int period,
		 double pause_ms)
{
	char path[4096], err[256];
	struct profile_info info;
	if (!fr)
		return;
	if (period && !p->files) {
		info_for(p, start, end, &info);
		path[0] = '\0';
		writer__enqueue(p->writer, fr, &info, path, 1, 0, 0, 0);
		return;
	}
	int own = !period && p->dump_pattern;
	if (pattern__expand(own ? p->dump_pattern : p->pattern, p->pid,
			    own ? p->dump_seq++ : p->seq++, start, path, sizeof(path), err,
			    sizeof(err)) < 0) {
		fprintf(stderr, "%scprof-attach: error: %s\n", line_start(), err);
		frames__free(fr);
		return;
	}
	info_for(p, start, end, &info);
	writer__enqueue(p->writer, fr, &info, path, period, !period, pause_ms,
			(double)p->history_ns / 1e9);
}

/* ---- asks (periods__ask) ------------------------------------------------ */

static void wake(struct periods *p)
{
	uint64_t one = 1;
	if (write(p->wake, &one, sizeof(one)) < 0) {
		/* full (never at 2^64 - 1 wake-ups) or closed: nothing to do */
	}
}

/* The number of the oldest slice a running ask still needs. */
static uint64_t asks_oldest(struct periods *p)
{
	uint64_t oldest = UINT64_MAX;
	pthread_mutex_lock(&p->mu);
	for (struct ask *a = p->asks; a; a = a->next)
		if ((a->state == ASK_RUNNING || a->state == ASK_NAMING) && a->from < oldest)
			oldest = a->from;
	pthread_mutex_unlock(&p->mu);
	return oldest;
}

static void ask_free(struct ask *a)
{
	frames__free(a->fr);
	free(a);
}

/* Under mu: takes A out of the list. */
static void unlink_ask(struct periods *p, struct ask *a)
{
	for (struct ask **pp = &p->asks; *pp; pp = &(*pp)->next)
		if (*pp == a) {
			*pp = a->next;
			p->nasks--;
			return;
		}
}

/* Under mu: when the asks' pause debt is paid (CLOCK_MONOTONIC), as of
 * NOW: NOW or before when an ask may be named now. */
static uint64_t budget_at(struct periods *p, uint64_t now)
{
	if (p->debt_at && now > p->debt_at) {
		p->debt -= (double)(now - p->debt_at) * p->pause_share;
		if (p->debt < 0)
			p->debt = 0;
	}
	p->debt_at = now;
	double over = p->debt - p->pause_burst;
	return over > 0 ? now + (uint64_t)(over / p->pause_share) : now;
}

/* Under mu: an ask's naming paused sampling NS. */
static void budget_spend(struct periods *p, uint64_t ns)
{
	budget_at(p, now_ns());
	p->debt += (double)ns;
}

/* Is there an ask for the loop now: queued, gone, running and due, or
 * waiting to be named and the budget allows? */
static int asks_ready(struct periods *p, uint64_t now, uint64_t *next_due)
{
	int ready = 0;
	pthread_mutex_lock(&p->mu);
	uint64_t budget = budget_at(p, now);
	for (struct ask *a = p->asks; a; a = a->next) {
		uint64_t at = a->state == ASK_JOB ? UINT64_MAX : a->gone ? now :
			      a->state == ASK_RUNNING ? a->due :
			      a->state == ASK_NAMING || (a->state == ASK_QUEUED && a->a.kind == ASK_TICK) ?
			      budget : a->state == ASK_QUEUED ? now : UINT64_MAX;
		if (at <= now)
			ready = 1;
		if (at < *next_due)
			*next_due = at;     /* due already: 0 ms, at once */
	}
	pthread_mutex_unlock(&p->mu);
	return ready;
}

/* The slices of the past A asks for: [*FROM, *TO) numbers; 0 if none. */
static int past_range(struct periods *p, const struct periods_ask *a, uint64_t *from, uint64_t *to)
{
	uint64_t lo = a->from_real, hi = a->to_real, now = p->last_take;
	if (a->seconds > 0) {
		uint64_t back = (uint64_t)llround(a->seconds * 1e9);
		lo = now > back ? now - back : 0;
		hi = now;
	}
	size_t i = 0, j;
	while (i < p->n && p->slices[i].end_ns <= lo)
		i++;
	for (j = i; j < p->n && p->slices[j].start_ns < hi; j++)
		;
	*from = p->first + i;
	*to = p->first + j;
	return j > i;
}

/* Under mu: A is answered (FR, INFO, ERR). */
static void ask_done(struct periods *p, struct ask *a, struct frames *fr,
		     const struct profile_info *info, int err)
{
	if (a->gone) {
		unlink_ask(p, a);
		ask_free(a);
		frames__free(fr);
		return;
	}
	a->fr = fr;
	if (info)
		a->info = *info;
	a->err = err;
	a->state = ASK_DONE;
	p->st.asks += !err;
}

/* With the sampler paused, after a slice was taken: starts the asks
 * queued, cuts the windows of those due (their slices are kept until
 * named), names those waiting while the budget allows, frees those whose
 * asker left. */
static void serve_asks(struct periods *p)
{
	struct ask *work[PERIODS_ASKS + 1];
	size_t nw = 0;
	uint64_t now = now_ns(), to = p->first + p->n;
	pthread_mutex_lock(&p->mu);
	for (struct ask *a = p->asks, *next; a; a = next) {
		next = a->next;
		if (a->state == ASK_JOB) {
			continue;               /* the namer's, gone or not (ask_done) */
		} else if (a->gone) {
			unlink_ask(p, a);
			ask_free(a);
		} else if (a->state == ASK_QUEUED && a->a.kind == ASK_TICK) {
			if (p->ticked_now && nw < PERIODS_ASKS)
				work[nw++] = a;         /* every thread's stack at the tick just made */
			else if (!p->over_budget) {
				/* A Go program's goroutines: ticks gathered, long
				 * enough that every one is in them (an idle thread
				 * is looked at every 32 ticks at least). */
				a->from = to;
				a->due = now + (uint64_t)llround(fmin(5.0, fmax(0.5, 64.0 / p->o->hz)) * 1e9);
				a->state = ASK_RUNNING;
			}
		} else if (a->state == ASK_QUEUED && a->a.kind == ASK_NEXT) {
			a->from = to;
			a->due = now + (uint64_t)llround(a->a.seconds * 1e9);
			a->state = ASK_RUNNING;
		} else if (a->state == ASK_QUEUED || (a->state == ASK_RUNNING && a->due <= now)) {
			/* The window is cut now; named when the budget allows. */
			uint64_t from = a->from, end = to;
			if (a->state == ASK_QUEUED && !past_range(p, &a->a, &from, &end)) {
				ask_done(p, a, NULL, NULL, -ENODATA);
				continue;
			}
			a->from = from;
			a->to = end;
			uint64_t start = from < end ? p->slices[from - p->first].start_ns : p->last_take;
			uint64_t stop = from < end ? p->slices[end - 1 - p->first].end_ns : p->last_take;
			info_for(p, start, stop, &a->pinfo);
			a->state = ASK_NAMING;
		}
	}
	/* The oldest first (the list is newest first). */
	struct ask *naming[PERIODS_ASKS + 1];
	size_t nn = 0;
	for (struct ask *a = p->asks; a && nn < PERIODS_ASKS; a = a->next)
		if (a->state == ASK_NAMING)
			naming[nn++] = a;
	pthread_mutex_unlock(&p->mu);
	for (size_t i = 0; i < nw; i++) {
		struct job *j = add_now_job(p);
		uint64_t tick = options__sample_period_ns(p->o);
		j->ask = work[i];
		info_for(p, p->last_take - tick, p->last_take, &j->info);
		pthread_mutex_lock(&p->mu);
		work[i]->state = ASK_JOB;       /* answered by the namer */
		budget_spend(p, j->copy_ns);
		pthread_mutex_unlock(&p->mu);
	}
	for (size_t i = nn; i-- > 0;) {
		struct ask *a = naming[i];
		pthread_mutex_lock(&p->mu);
		int now_ok = budget_at(p, now_ns()) <= now_ns();
		if (!now_ok) {
			for (size_t k = 0; k <= i; k++)
				naming[k]->waited = 1;
			pthread_mutex_unlock(&p->mu);
			break;
		}
		pthread_mutex_unlock(&p->mu);
		struct job *j = add_slices_job(p, JOB_ASK, a->from, a->to, 1);
		j->ask = a;
		j->info = a->pinfo;
		pthread_mutex_lock(&p->mu);
		a->state = ASK_JOB;             /* answered by the namer */
		budget_spend(p, j->copy_ns);
		pthread_mutex_unlock(&p->mu);
	}
}

int periods__ask(struct periods *p, const struct periods_ask *ask, periods_gone_fn gone,
		 void *arg, struct frames **out, struct profile_info *info,
		 struct periods_ask_cost *cost)
{
	*out = NULL;
	if (cost)
		*cost = (struct periods_ask_cost){ 0 };
	pthread_mutex_lock(&p->mu);
	int e = p->closed ? -ECANCELED : p->nasks >= PERIODS_ASKS ? -EBUSY :
		ask->kind == ASK_PAST && !p->history_ns ? -ENODATA : 0;
	if (e) {
		pthread_mutex_unlock(&p->mu);
		return e;
	}
	struct ask *a = xcalloc(1, sizeof(*a));
	a->a = *ask;
	a->state = ASK_QUEUED;
	a->next = p->asks;
	p->asks = a;
	p->nasks++;
	pthread_mutex_unlock(&p->mu);
	wake(p);
	pthread_mutex_lock(&p->mu);
	while (a->state != ASK_DONE) {
		struct timespec ts;
		clock_gettime(CLOCK_REALTIME, &ts);
		ts.tv_nsec += 100000000;
		if (ts.tv_nsec >= 1000000000) {
			ts.tv_sec++;
			ts.tv_nsec -= 1000000000;
		}
		pthread_cond_timedwait(&p->asked, &p->mu, &ts);
		if (a->state == ASK_DONE)
			break;
		pthread_mutex_unlock(&p->mu);
		int left = gone && gone(arg);
		pthread_mutex_lock(&p->mu);
		if (left && a->state != ASK_DONE) {
			a->gone = 1;            /* the loop frees it */
			pthread_mutex_unlock(&p->mu);
			wake(p);
			return -ECONNABORTED;
		}
	}
	unlink_ask(p, a);
	pthread_mutex_unlock(&p->mu);
	*out = a->fr;
	*info = a->info;
	if (cost)
		*cost = (struct periods_ask_cost){ .pause_ms = a->pause_ms,
						   .name_cpu_ms = a->name_cpu_ms, .waited = a->waited };
	e = a->err;
	free(a);
	return e;
}

void periods__close(struct periods *p)
{
	pthread_mutex_lock(&p->mu);
	p->closed = 1;
	for (struct ask *a = p->asks; a; a = a->next)
		if (!a->gone && a->state != ASK_DONE && a->state != ASK_JOB) {
			a->state = ASK_DONE;    /* (the namer answers its own) */
			a->err = -ECANCELED;
		}
	pthread_cond_broadcast(&p->asked);
	pthread_mutex_unlock(&p->mu);
}

void periods__kept(struct periods *p, uint64_t *from_real, uint64_t *to_real)
{
	pthread_mutex_lock(&p->mu);
	*from_real = p->kept_from;
	*to_real = p->kept_to;
	pthread_mutex_unlock(&p->mu);
}

void periods__sampler_stats(struct periods *p, struct sampler_stats *out)
{
	pthread_mutex_lock(&p->mu);
	*out = p->sst;
	pthread_mutex_unlock(&p->mu);
}

int periods__wake_fd(const struct periods *p)
{
	return p->wake;
}

void periods__set_sink(struct periods *p, periods_sink sink, void *arg, int files)
{
	writer__set_sink(p->writer, sink, arg);
	p->files = files;
}

/* With the sampler paused: the period that ends now, if it is due. */
static void end_period(struct periods *p)
{
	uint64_t to = p->first + p->n;
	if (p->period_ns == 0 || to == p->period_first)
		return;
	size_t a = (size_t)(p->period_first - p->first);
	uint64_t start = p->slices[a].start_ns, end = p->slices[p->n - 1].end_ns;
	struct job *j = add_slices_job(p, JOB_PERIOD, p->period_first, to, 0);
	if (j) {
		j->start = start;
		j->end = end;
	}
	p->period_first = to;
	pthread_mutex_lock(&p->mu);
	p->st.periods++;
	pthread_mutex_unlock(&p->mu);
}

/* Is an ask for every thread's stack now waiting, and can it be answered
 * from a tick made for it?  A Go program's goroutines are not threads:
 * for them the ask gathers ticks (serve_asks). */
static int tick_now_wanted(struct periods *p)
{
	int want = 0;
	pthread_mutex_lock(&p->mu);
	for (struct ask *a = p->asks; a && !want; a = a->next)
		want = a->state == ASK_QUEUED && a->a.kind == ASK_TICK && !a->gone;
	uint64_t now = now_ns();
	p->over_budget = want && budget_at(p, now) > now;
	if (p->over_budget)
		for (struct ask *a = p->asks; a; a = a->next)
			a->waited |= a->state == ASK_QUEUED && a->a.kind == ASK_TICK;
	if (want && (p->over_budget || sampler_stats__rt(&p->sst, "goroutines", "seen")))
		want = 0;
	pthread_mutex_unlock(&p->mu);
	return want;
}

/* On the namer's thread: a job named (FR), with the sampler and the loop
 * going on: a period or a dump to the writer (the pattern's numbers and
 * the writer's queue are the namer's), an ask answered. */
static void named(void *arg, void *job, struct frames *fr, double cpu_ms)
{
	struct periods *p = arg;
	struct job *j = job;
	if (j->kind == JOB_PERIOD || j->kind == JOB_DUMP) {
		emit(p, fr, j->start, j->end, j->kind == JOB_PERIOD, j->pause_ms);
		return;
	}
	pthread_mutex_lock(&p->mu);
	j->ask->pause_ms += (double)j->copy_ns / 1e6;
	j->ask->name_cpu_ms += cpu_ms;
	ask_done(p, j->ask, fr, &j->info, fr ? 0 : -ENOMEM);
	pthread_cond_broadcast(&p->asked);
	pthread_mutex_unlock(&p->mu);
}

/* The jobs of this pause to the namer, in order (after those before). */
static void hand_over(struct periods *p)
{
	for (size_t i = 0; i < p->njobs; i++) {
		struct job *j = &p->jobs[i];
		if (j->kind == JOB_FORGET)
			namer__forget(p->namer, j->space);
		else
			namer__add(p->namer, j->view, j->set, j, sizeof(*j));
	}
	p->njobs = 0;
}

/* Pauses the sampler for WORK, timing the pause; after a tick of every
 * thread made now when an ask wants one (sampler__pause_now).  What WORK
 * prepared is named after the pause, by the namer. */
static void paused(struct periods *p, void (*work)(struct periods *, int), int arg)
{
	uint64_t t0 = now_ns();
	p->ticked_now = tick_now_wanted(p);
	if (p->ticked_now)
		sampler__pause_now(p->s);
	else
		sampler__pause(p->s);
	forget_spaces(p);
	work(p, arg);
	p->ticked_now = 0;
	sampler__resume(p->s);
	double ms = (double)(now_ns() - t0) / 1e6;
	pthread_mutex_lock(&p->mu);
	if (ms > p->st.name_ms_max)
		p->st.name_ms_max = ms;
	pthread_mutex_unlock(&p->mu);
	for (size_t i = 0; i < p->njobs; i++)
		p->jobs[i].pause_ms = ms;
	hand_over(p);
}

static void slice_work(struct periods *p, int period_due)
{
	take_slice(p);
	struct sampler_stats sst;
	sampler__stats(p->s, &sst);
	pthread_mutex_lock(&p->mu);
	p->sst = sst;
	pthread_mutex_unlock(&p->mu);
	serve_asks(p);
	if (!p->period_ns)
		p->period_first = p->first + p->n;     /* kept for the history only */
	if (period_due)
		end_period(p);
	trim(p);
	age(p);
}

int periods__poll(struct periods *p)
{
	uint64_t now = now_ns(), next = p->next_slice, drain;
	if (read(p->wake, &drain, sizeof(drain)) < 0) {
		/* nothing asked (EAGAIN) */
	}
	int asked = asks_ready(p, now, &next);
	if (now >= p->next_slice || asked) {
		int slice_due = now >= p->next_slice;
		int due = slice_due && now + p->slice_ns / 4 >= p->next_period;
		paused(p, slice_work, due);
		while (p->next_slice <= now)
			p->next_slice += p->slice_ns;
		while (due && p->next_period <= now + p->slice_ns / 4)
			p->next_period += p->period_ns;
		now = now_ns();
		next = p->next_slice;
		asks_ready(p, now, &next);
	}
	uint64_t left = next > now ? next - now : 0;
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
		struct job *j = add_slices_job(p, JOB_DUMP, from, p->first + p->n, 0);
		if (j) {
			j->start = start;
			j->end = now;
		}
		pthread_mutex_lock(&p->mu);
		p->st.dumps++;
		pthread_mutex_unlock(&p->mu);
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
	periods__close(p);
	/* The sampler has stopped: its tables are ours. */
	forget_spaces(p);
	if (p->period_ns) {
		take_slice(p);
		end_period(p);
	}
	hand_over(p);
	namer__end(p->namer);
	writer__finish(p->writer);
}

int periods__new(struct periods **out, const struct options *o, const char *pattern,
		 struct sampler *s, pid_t pid, periods_writer write, const char *comment, char *err,
		 size_t errlen)
{
	char path[4096];
	*out = NULL;
	int e = pattern__expand(pattern, pid, 0, real_ns(), path, sizeof(path), err, errlen);
	if (e < 0)
		return e;
	struct periods *p = xcalloc(1, sizeof(*p));
	p->wake = -1;
	p->o = o;
	p->pattern = pattern;
	p->s = s;
	p->pid = pid;
	p->comment = xstrdup(comment ? comment : "");
	p->spaces = naming__spaces_new();
	p->period_ns = o->period > 0 ? (uint64_t)llround(o->period * 1e9) : 0;
	p->history_ns = o->history > 0 ? (uint64_t)llround(o->history * 1e9) : 0;
	p->slice_ns = p->period_ns ? p->period_ns : HISTORY_SLICE_NS;
	const char *age = getenv("CPROF_STACK_AGE");
	p->age_ns = age && atof(age) >= 0 ? (uint64_t)llround(atof(age) * 1e9) : STACK_AGE_NS;
	const char *cap = getenv("CPROF_HISTORY_BYTES");
	p->history_cap = cap && atof(cap) > 0 ? (uint64_t)atof(cap) : HISTORY_MAX_BYTES;
	const char *share = getenv("CPROF_ASK_PAUSE_SHARE");
	p->pause_share = share && atof(share) > 0 && atof(share) <= 1 ? atof(share) :
			 PERIODS_ASK_PAUSE_SHARE;
	const char *burst = getenv("CPROF_ASK_PAUSE_BURST_MS");
	p->pause_burst = (burst && atof(burst) >= 0 ? atof(burst) : PERIODS_ASK_PAUSE_BURST_MS) * 1e6;
	p->whole_run = options__whole_run(o);
	if (p->history_ns && p->slice_ns > HISTORY_SLICE_NS)
		p->slice_ns = HISTORY_SLICE_NS;
	struct sampler_progress pr;
	sampler__progress(s, &pr);
	uint64_t now = now_ns(), start = pr.start_ns && pr.start_ns <= now ? pr.start_ns : now;
	p->next_slice = start + p->slice_ns;
	p->next_period = p->period_ns ? start + p->period_ns : UINT64_MAX;
	p->last_take = real_ns() - (now - start);
	pthread_mutex_init(&p->mu, NULL);
	pthread_cond_init(&p->asked, NULL);
	p->files = 1;
	if (p->period_ns && p->history_ns)
		p->dump_pattern = pattern__dump(pattern);
	p->wake = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	p->writer = writer__new(write);
	p->namer = namer__new(o->debug_dirs, o->ndebug_dirs, named, p);
	if (!p->namer || p->wake < 0 || !p->writer) {
		snprintf(err, errlen, "cannot start the writer's or the namer's thread");
		periods__free(p);
		return -ENOMEM;
	}
	*out = p;
	return 0;
}

int periods__next_name(struct periods *p, char *buf, size_t size, char *err, size_t errlen)
{
	return pattern__expand(p->pattern, p->pid, p->seq++, real_ns(), buf, size, err, errlen);
}

uint64_t periods__seq(const struct periods *p, uint64_t *dump_seq)
{
	if (dump_seq)
		*dump_seq = p->dump_seq;
	return p->seq;
}

void periods__set_seq(struct periods *p, uint64_t seq, uint64_t dump_seq)
{
	p->seq = seq;
	p->dump_seq = dump_seq;
}

void periods__stats(const struct periods *p, struct periods_stats *out)
{
	pthread_mutex_lock((pthread_mutex_t *)&p->mu);
	*out = p->st;
	pthread_mutex_unlock((pthread_mutex_t *)&p->mu);
	struct writer_stats ws;
	writer__stats(p->writer, &ws);
	out->written = ws.written;
	out->failed = ws.failed;
	out->dropped = ws.dropped;
	out->trim_ms_max = ws.trim_ms_max;
	out->named_ms_max = namer__longest_ms(p->namer);
	snprintf(out->last, sizeof(out->last), "%s", ws.last);
}

void periods__free(struct periods *p)
{
	if (!p)
		return;
	namer__free(p->namer);          /* the windows handed over to the writer first */
	writer__free(p->writer);
	for (size_t i = 0; i < p->n; i++)
		stacks__slice_free(&p->slices[i]);
	free(p->slices);
	for (struct ask *a = p->asks, *next; a; a = next) {
		next = a->next;
		ask_free(a);
	}
	if (p->wake >= 0)
		close(p->wake);
	pthread_cond_destroy(&p->asked);
	naming__spaces_free(p->spaces);
	free(p->jobs);
	free(p->forgotten);
	free(p->comment);
	free(p->dump_pattern);
	pthread_mutex_destroy(&p->mu);
	free(p);
}
