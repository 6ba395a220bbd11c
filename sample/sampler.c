#include "sample/sampler.h"
#include "sample/internal.h"
#include "sample/runtime.h"

#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <sys/prctl.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/signalfd.h>
#include <sys/stat.h>
#include <sys/timerfd.h>
#include <unistd.h>

#include "util/timeutil.h"
#include "util/xalloc.h"


/* ---- the ticks' schedule ----------------------------------------------------
 * A fixed-period sampler locks step with periodic work in the target (a
 * loop that switches every 10 ms, sampled every 10 ms, is always caught in
 * the same phase).  So tick K fires at a random moment of its own slot:
 * start + (K + u) x period, u uniform in [0, 1).  Slots never drift, the
 * average rate is exactly the rate asked for, and no phase is favoured.
 * The gap between two ticks is between 0 and two periods. */

static uint64_t next_random(struct sampler *s)
{
	s->loop.rng ^= s->loop.rng << 13;         /* xorshift64 */
	s->loop.rng ^= s->loop.rng >> 7;
	s->loop.rng ^= s->loop.rng << 17;
	return s->loop.rng;
}

static int arm_next_tick(struct sampler *s)
{
	uint64_t u = s->loop.fixed_ticks ? 0 : next_random(s) % s->loop.period_ns;
	uint64_t at = s->rep.stats.start_ns + s->loop.next_slot * s->loop.period_ns + u;
	s->loop.armed_ns = at;
	struct itimerspec its = {
		.it_value = { (time_t)(at / 1000000000ull), (long)(at % 1000000000ull) },
	};
	return timerfd_settime(s->loop.timer_fd, TFD_TIMER_ABSTIME, &its, NULL) < 0 ? -errno : 0;
}

/* Starts the ticks, once attached and ready: attaching is not sampling
 * time. */
static int start_ticks(struct sampler *s)
{
	s->rep.stats.start_ns = now_ns();
	s->rep.stats.start_real_ns = realtime_ns();
	s->loop.period_ns = s->cfg.period_ns;
	s->loop.rng = s->rep.stats.start_ns ^ ((uint64_t)getpid() << 32) ^ 0x9e3779b97f4a7c15ull;
	/* For the tests only: they show the aliasing a fixed period causes. */
	const char *j = getenv("CPROF_TICK_JITTER");
	s->loop.fixed_ticks = j && strcmp(j, "0") == 0;
	s->loop.next_slot = 0;
	return arm_next_tick(s);
}

/* Whether the watchdog is gone (its lifeline hung up): then no thread is
 * stopped again. */
static bool unguarded(struct sampler *s)
{
	if (!s->cfg.lifeline)
		return false;
	if (s->loop.watchdog_gone)
		return true;
	struct pollfd p = { *s->cfg.lifeline, POLLIN, 0 };
	if (poll(&p, 1, 0) > 0)
		s->loop.watchdog_gone = 1;
	return s->loop.watchdog_gone;
}

/* One tick: blocked threads first (no stop), then the rest are
 * interrupted; their captures come in as they stop.  The watchdog is
 * looked at right before (one poll): a target is held only by stops asked
 * for while it was alive, until the tick's captures end (a SIGSTOP of the
 * profiler in that window, after the watchdog's death, holds them until
 * SIGCONT: nothing else could release them). */
static void sample_all(struct sampler *s)
{
	const struct capture *c;
	sampler_views_tick(s);
	target__tick_begin(s->t, s->loop.due_ns);
	while ((c = target__next_blocked(s->t)))
		if (sampler_capture(s, c) == -EAGAIN)
			target__need_stop(s->t, c);
	if (!unguarded(s))
		target__interrupt(s->t);
	sampler_take_stopped(s);
}

/* A tick is due.  If we are so late that later slots have ended too, those
 * ticks are missed (counted, not stretched into a lower rate). */
static void tick(struct sampler *s)
{
	uint64_t expirations;
	if (read(s->loop.timer_fd, &expirations, sizeof(expirations)) != sizeof(expirations))
		return;
	uint64_t now = now_ns();
	sampler_watch_lateness(s, now > s->loop.armed_ns ? now - s->loop.armed_ns : 0);
	s->loop.due_ns = s->loop.armed_ns;        /* the instant this tick stands for */
	s->loop.next_slot++;
	while (s->rep.stats.start_ns + (s->loop.next_slot + 1) * s->loop.period_ns <= now) {
		s->loop.next_slot++;
		s->rep.stats.missed++;
	}
	arm_next_tick(s);
	if (target__ready(s->t))
		sample_all(s);
}

/* Most wake-ups are SIGCHLD for a stopped thread.  The signalfd is
 * drained first, then, if it held one, every event is taken
 * (target__poll); events after the drain raise SIGCHLD again, which
 * target__next_stopped() sees. */
static void on_sigchld(struct sampler *s)
{
	struct signalfd_siginfo si;
	int took = 0;
	while (read(s->loop.chld_fd, &si, sizeof(si)) == sizeof(si))
		took = 1;
	if (took)       /* (else the target's own look took it, and reaped) */
		target__poll(s->t);
	sampler_take_stopped(s);
}

static void publish(struct sampler *s)
{
	const struct target_stats *ts = target__stats(s->t);
	pthread_mutex_lock(&s->loop.lock);
	s->loop.progress = (struct sampler_progress){ s->rep.stats.start_ns, ts->ticks,
		stacks__total(s->st), ts->threads_now, ts->processes_now };
	pthread_mutex_unlock(&s->loop.lock);
}

/* The caller wants the tables (sampler__pause): parks here, between two
 * ticks and with no thread of the target held (none asked to stop and not
 * yet resumed), until it is done.  A tick due meanwhile is late (missed,
 * as on a busy machine); a thread's event or signal waits for us. */
/* The watchdog's beat (run/watchdog.h): alive. */
static void beat(struct sampler *s)
{
	if (s->cfg.beat) {
		uint64_t b = __atomic_load_n(s->cfg.beat, __ATOMIC_RELAXED) + 1;
		__atomic_store_n(s->cfg.beat, b == 0 || b == UINT64_MAX ? 1 : b, __ATOMIC_RELAXED);
	}
}

static void maybe_park(struct sampler *s)
{
	uint64_t v;
	if (read(s->loop.park_fd, &v, sizeof(v)) < 0 && errno != EAGAIN)
		return;
	pthread_mutex_lock(&s->loop.lock);
	if (s->loop.park_wanted && s->loop.tick_now) {
		/* sampler__pause_now(): a tick of every thread first, now;
		 * parked once its stops are all taken (pending 0). */
		s->loop.tick_now = 0;
		pthread_mutex_unlock(&s->loop.lock);
		target__force_tick(s->t);
		s->loop.due_ns = now_ns();
		if (target__ready(s->t)) {
			sample_all(s);
			s->loop.now_from = target__stats(s->t)->ticks;
		}
		publish(s);
		pthread_mutex_lock(&s->loop.lock);
	}
	if (s->loop.park_wanted && target__pending(s->t) == 0) {
		s->loop.parked = 1;
		pthread_cond_broadcast(&s->loop.cond);
		while (s->loop.park_wanted) {
			/* parked (the periods name a profile: seconds, at
			 * times), alive */
			struct timespec until;
			clock_gettime(CLOCK_REALTIME, &until);
			until.tv_nsec += 100000000;
			if (until.tv_nsec >= 1000000000) {
				until.tv_sec++;
				until.tv_nsec -= 1000000000;
			}
			pthread_cond_timedwait(&s->loop.cond, &s->loop.lock, &until);
			beat(s);
		}
		s->loop.parked = 0;
	}
	pthread_mutex_unlock(&s->loop.lock);
}

static void loop(struct sampler *s)
{
	struct pollfd fds[5] = { { s->loop.chld_fd, POLLIN, 0 }, { s->loop.timer_fd, POLLIN, 0 },
				 { s->loop.stop_fd, POLLIN, 0 }, { s->loop.park_fd, POLLIN, 0 },
				 { s->cfg.lifeline ? *s->cfg.lifeline : -1, POLLIN, 0 } };
	while (target__alive(s->t)) {
		beat(s);
		if (poll(fds, 5, 100) < 0 && errno != EINTR)
			break;
		if (fds[4].revents)
			s->loop.watchdog_gone = 1;   /* ends below, once this event is handled */
		if (fds[0].revents)
			on_sigchld(s);
		if (fds[1].revents) {
			tick(s);
			sampler_check_realtime(s);
		}
		publish(s);
		if (fds[2].revents || s->loop.failure || s->loop.watchdog_gone)
			return;
		if (fds[3].revents || __atomic_load_n(&s->loop.park_wanted, __ATOMIC_RELAXED))
			maybe_park(s);
	}
	s->loop.exited = 1;
}



static int start_targets(struct sampler *s)
{
	const struct sampler_config *c = &s->cfg;
	struct target_config tc = { .capture = c->capture,
				    .kernel_stacks = c->kernel_stacks,
				    .subprocesses = c->subprocesses,
				    .period_ns = c->period_ns, .tids = c->tids,
				    .ntids = c->ntids, .threads_re = c->threads_re };
	s->t = target__new(&tc);
	if (c->command)
		return target__launch(s->t, c->command, c->child_mask, s->rep.err, sizeof(s->rep.err));
	for (size_t i = 0; i < c->npids; i++) {
		int r = target__attach(s->t, c->pids[i], s->rep.err, sizeof(s->rep.err));
		if (r < 0)
			return r;
	}
	return 0;
}


static void take_notes(struct sampler *s)
{
	const char *n;
	while ((n = target__next_note(s->t)) && s->rep.nnotes < MAX_NOTES)
		s->rep.notes[s->rep.nnotes++] = xstrdup(n);
}

static void report_start(struct sampler *s, int r)
{
	pthread_mutex_lock(&s->loop.lock);
	s->loop.started = r < 0 ? -1 : 1;
	s->loop.start_err = r;
	pthread_cond_signal(&s->loop.cond);
	pthread_mutex_unlock(&s->loop.lock);
}

/* Labels of every slot, read from the target while it still exists. */
static void copy_labels(struct sampler *s)
{
	for (size_t i = 0; i < target__nslots(s->t); i++) {
		struct target_slot ts;
		target__slot(s->t, (uint32_t)i, &ts);
		struct stack_label l = { ts.pid, ts.tid, 0, ts.process, ts.thread, NULL, ts.comm, NULL,
					 NULL };
		if (i < s->vw.nrt_names && s->vw.rt_names[i].kv && s->vw.rt_names[i].pid == ts.pid &&
		    s->vw.rt_names[i].tid == ts.tid)
			l.rt_thread = s->vw.rt_names[i].kv;
		stacks__set_label(s->st, (uint32_t)i, &l);
	}
}

/* What ends a run once sampling stopped: the threads' last captures,
 * their names and labels, the notes. */
static void finish(struct sampler *s)
{
	sampler_describe_tracer(s);
	target__release(s->t);
	sampler_take_stopped(s);
	copy_labels(s);
	take_notes(s);
	if (s->loop.failure)
		s->loop.exited = 0;
}

/* Attaches, samples, and by returning detaches (see attach/target.h). */
static void *tracer_main(void *arg)
{
	struct sampler *s = arg;
	s->loop.tracer_tid = gettid();
	int r = start_targets(s);
	take_notes(s);
	if (r < 0) {
		report_start(s, r);
		return NULL;
	}
	sampler_raise_priority();               /* after a launch: the command keeps its own */
	prctl(PR_SET_NAME, (unsigned long)"cprof-sampler", 0, 0, 0);    /* for top -H */
	if (!s->cfg.command)
		sampler_read_spaces(s);
	if ((r = start_ticks(s)) < 0) {
		snprintf(s->rep.err, sizeof(s->rep.err), "cannot start the timer: %s", strerror(-r));
		report_start(s, r);
		return NULL;
	}
	publish(s);
	report_start(s, 0);
	if (s->cfg.once)
		sample_all(s);          /* the stopped threads' captures come at release */
	else
		loop(s);
	if (s->cfg.beat)
		__atomic_store_n(s->cfg.beat, UINT64_MAX, __ATOMIC_RELAXED);   /* unarmed */
	s->rep.stats.end_ns = now_ns();
	if (s->loop.watchdog_gone) {
		/* Unguarded: this thread's exit detaches every thread of the
		 * target at once (the kernel's, without a stop); the rest is
		 * done by sampler__stop()'s caller, after.  Stops asked for
		 * and not yet seen are lost. */
		target__drop_pending(s->t);
		s->loop.finish_late = 1;
	} else {
		finish(s);
	}
	pthread_mutex_lock(&s->loop.lock);
	s->loop.finished = 1;                /* the tables are the caller's from here */
	pthread_cond_broadcast(&s->loop.cond);
	pthread_mutex_unlock(&s->loop.lock);
	uint64_t one = 1;
	if (write(s->loop.done_fd, &one, sizeof(one)) < 0)
		abort();                /* an eventfd write cannot fail here */
	return NULL;
}

/* ---- the caller's side ---------------------------------------------------- */

static int open_fds(struct sampler *s)
{
	sigset_t chld;
	sigemptyset(&chld);
	sigaddset(&chld, SIGCHLD);
	s->loop.chld_fd = signalfd(-1, &chld, SFD_CLOEXEC | SFD_NONBLOCK);
	s->loop.timer_fd = timerfd_create(CLOCK_MONOTONIC, TFD_CLOEXEC | TFD_NONBLOCK);
	s->loop.stop_fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	s->loop.done_fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	s->loop.park_fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	return s->loop.chld_fd < 0 || s->loop.timer_fd < 0 || s->loop.stop_fd < 0 || s->loop.done_fd < 0 ||
	       s->loop.park_fd < 0 ? -errno : 0;
}

int sampler__start(struct sampler **out, const struct sampler_config *cfg, char *err, size_t errlen)
{
	struct sampler *s = xcalloc(1, sizeof(*s));
	s->cfg = *cfg;
	s->loop.chld_fd = s->loop.timer_fd = s->loop.stop_fd = s->loop.done_fd = s->loop.park_fd = -1;
	pthread_mutex_init(&s->loop.lock, NULL);
	pthread_cond_init(&s->loop.cond, NULL);
	s->st = stacks__new();
	if (cfg->timeline)
		s->tl = timeline__new();
	s->pcs = xcalloc((size_t)cfg->max_depth + 2, sizeof(*s->pcs));
	*out = s;
	int r = open_fds(s);
	if (r < 0 || !s->st) {
		snprintf(err, errlen, "cannot set up signals and timer: %s", strerror(r < 0 ? -r : ENOMEM));
		return r < 0 ? r : -ENOMEM;
	}
	if ((r = pthread_create(&s->loop.thread, NULL, tracer_main, s)) != 0) {
		snprintf(err, errlen, "cannot start the tracer thread: %s", r == EAGAIN ?
			 "out of memory or threads (ulimit -v? ulimit -u?)" : strerror(r));
		return -EAGAIN;
	}
	s->loop.thread_started = 1;
	pthread_mutex_lock(&s->loop.lock);
	while (!s->loop.started)
		pthread_cond_wait(&s->loop.cond, &s->loop.lock);
	r = s->loop.start_err;
	pthread_mutex_unlock(&s->loop.lock);
	if (r < 0) {
		snprintf(err, errlen, "%s", s->rep.err);
		sampler__stop(s);
	}
	return r;
}

int sampler__done_fd(const struct sampler *s)
{
	return s->loop.done_fd;
}

/* Waits (at most a second) until thread TID of ours is gone for good:
 * pthread_join returns before the kernel's exit of the thread has run its
 * ptrace part (the detach), and we promise an untraced target once we
 * report. */
static void wait_thread_gone(pid_t tid)
{
	char fn[64];
	struct stat st;
	snprintf(fn, sizeof(fn), "/proc/self/task/%d", tid);
	for (int i = 0; i < 1000 && stat(fn, &st) == 0; i++)
		usleep(1000);
}

void sampler__stop(struct sampler *s)
{
	if (s->loop.stopped || !s->loop.thread_started)
		return;
	uint64_t one = 1;
	if (write(s->loop.stop_fd, &one, sizeof(one)) < 0)
		abort();                /* an eventfd write cannot fail here */
	pthread_join(s->loop.thread, NULL);
	if (s->loop.tracer_tid)
		wait_thread_gone(s->loop.tracer_tid);
	if (s->loop.finish_late) {
		s->loop.finish_late = 0;
		finish(s);      /* detached: what needs no ptrace */
	}
	s->loop.stopped = 1;
}

static void pause_with(struct sampler *s, int tick_now)
{
	if (!s->loop.thread_started)
		return;
	uint64_t one = 1;
	pthread_mutex_lock(&s->loop.lock);
	__atomic_store_n(&s->loop.park_wanted, 1, __ATOMIC_RELAXED);   /* read unlocked in loop() */
	s->loop.tick_now = tick_now;
	if (write(s->loop.park_fd, &one, sizeof(one)) < 0)
		abort();                /* an eventfd write cannot fail here */
	while (!s->loop.parked && !s->loop.finished)
		pthread_cond_wait(&s->loop.cond, &s->loop.lock);
	pthread_mutex_unlock(&s->loop.lock);
}

void sampler__pause(struct sampler *s)
{
	pause_with(s, 0);
}

void sampler__pause_now(struct sampler *s)
{
	pause_with(s, 1);
}

void sampler__resume(struct sampler *s)
{
	pthread_mutex_lock(&s->loop.lock);
	__atomic_store_n(&s->loop.park_wanted, 0, __ATOMIC_RELAXED);
	pthread_cond_broadcast(&s->loop.cond);
	pthread_mutex_unlock(&s->loop.lock);
}

void sampler__now_slice(struct sampler *s, struct stacks_slice *out)
{
	memset(out, 0, sizeof(*out));
	copy_labels(s);
	sampler_now_ids(s, out);
	out->epoch = stacks__epoch(s->st);
}

void sampler__take(struct sampler *s, struct stacks_slice *out)
{
	copy_labels(s);
	stacks__take(s->st, out);
}



size_t sampler__age(struct sampler *s, uint64_t before, void (*forget)(void *arg, uint32_t space),
		    void *arg)
{
	if (s->tl)
		return 0;       /* the timeline holds every stack's id */
	sampler_keep_counted(s);
	sampler_views_keep(s);
	size_t freed = stacks__age(s->st, before);
	sampler_free_spaces(s, forget, arg);
	return freed;
}

int sampler__targets_exited(const struct sampler *s)
{
	return s->loop.exited;
}

const char *sampler__failure(const struct sampler *s)
{
	return s->loop.failure;
}

void sampler__progress(struct sampler *s, struct sampler_progress *p)
{
	pthread_mutex_lock(&s->loop.lock);
	*p = s->loop.progress;
	pthread_mutex_unlock(&s->loop.lock);
}

const struct stacks *sampler__stacks(const struct sampler *s)
{
	return s->st;
}

const struct timeline *sampler__timeline(const struct sampler *s)
{
	return s->tl;
}

size_t sampler__nspaces(const struct sampler *s)
{
	return s->sp.nspaces;
}

const struct modules *sampler__space(const struct sampler *s, size_t i)
{
	return i < s->sp.nspaces ? s->sp.spaces[i].ms : NULL;
}

uint64_t sampler_stats__rt(const struct sampler_stats *ss, const char *name, const char *key)
{
	for (size_t i = 0; i < ss->nrt; i++)
		for (size_t k = 0; ss->rt[i].name && !strcmp(ss->rt[i].name, name) && k < ss->rt[i].n; k++)
			if (!strcmp(ss->rt[i].stat[k].key, key))
				return ss->rt[i].stat[k].value;
	return 0;
}

void sampler__stats(const struct sampler *s, struct sampler_stats *out)
{
	*out = s->rep.stats;
	sampler_views_stats(s, out);
	out->samples = stacks__total(s->st);
	out->tracer = s->loop.tracer[0] ? s->loop.tracer : NULL;
	if (s->t) {
		out->target = *target__stats(s->t);
		out->pause_p50_us = target__pause_quantile(s->t, 0.5);
		out->pause_p99_us = target__pause_quantile(s->t, 0.99);
	}
}

pid_t sampler__first_pid(const struct sampler *s)
{
	return s->t ? target__first_pid(s->t) : 0;
}

int sampler__exit_status(const struct sampler *s)
{
	return s->t ? target__exit_status(s->t) : -1;
}

const char *sampler__next_note(struct sampler *s)
{
	return s->rep.notes_taken < s->rep.nnotes ? s->rep.notes[s->rep.notes_taken++] : NULL;
}

void sampler__free(struct sampler *s)
{
	if (!s)
		return;
	sampler__stop(s);
	for (size_t i = 0; i < s->rep.nnotes; i++)
		free(s->rep.notes[i]);
	while (s->vw.nviews)
		sampler_close_view(s, s->vw.nviews - 1);
	free(s->vw.views);
	free(s->slot_id);
	free(s->slot_tick);
	free(s->vw.looked);
	for (size_t i = 0; i < s->vw.nrt_names; i++)
		free(s->vw.rt_names[i].kv);
	free(s->vw.rt_names);
	free(s->jump_stack);
	sampler_spaces_free(s);
	target__free(s->t);
	stacks__free(s->st);
	timeline__free(s->tl);
	free(s->pcs);
	int fds[] = { s->loop.chld_fd, s->loop.timer_fd, s->loop.stop_fd, s->loop.done_fd, s->loop.park_fd };
	for (size_t i = 0; i < sizeof(fds) / sizeof(*fds); i++)
		if (fds[i] >= 0)
			close(fds[i]);
	pthread_mutex_destroy(&s->loop.lock);
	pthread_cond_destroy(&s->loop.cond);
	free(s);
}

