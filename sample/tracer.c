/* How the tracer thread is scheduled (see below). */
#include "sample/internal.h"
#include "sample/runtime.h"

#include <sched.h>
#include <stdio.h>
#include <sys/resource.h>
#include <time.h>

#include "util/timeutil.h"

/* The tracer thread needs the CPU briefly and on time: a late tick is a
 * missed tick, and every thread we stop waits for us.  It runs at nice
 * -10 where allowed (root, CAP_SYS_NICE).  On a busy machine that is not
 * enough: nice orders threads within one autogroup (each session's, where
 * kernel.sched_autogroup_enabled is on, as on most distributions) or
 * cgroup, while the groups share the CPUs equally.  Measured on a 2-core
 * machine kept busy by other sessions: a thread doing nothing but wait for
 * a 99 Hz timer woke p99 9-80 ms late and missed 1-14 ticks in 400, at
 * nice 0 or -10 alike; as SCHED_FIFO at priority 1, p99 under 0.2 ms and
 * none missed.  But a real-time tracer costs the target too: waking for a
 * tick it preempts the target's thread on its CPU, which then waits behind
 * the other processes there for its next turn before it can stop (pause
 * p99 4-8 ms where it was 50-200 us).  So the tracer becomes SCHED_FIFO,
 * at the lowest priority and not inherited by anything it forks, only
 * once ticks are being missed (LATE_TICKS of the last LATE_WINDOW ticks
 * a whole period late): on a machine busy enough to cost samples.  A real-time thread that kept a CPU busy would starve the
 * others on it: past RT_CPU_SHARE of a CPU over a second, it goes back to
 * nice -10 for good (sampler_check_realtime). */
#define RT_CPU_SHARE 0.5
#define LATE_TICKS 2
#define LATE_WINDOW 100

static uint64_t thread_cpu_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

void sampler_raise_priority(void)
{
	int old = getpriority(PRIO_PROCESS, 0);   /* this thread, on Linux */
	if (old > -10)
		setpriority(PRIO_PROCESS, 0, -10);
}

static void enter_realtime(struct sampler *s)
{
	struct sched_param sp = { .sched_priority = 1 };
	if (sched_setscheduler(0, SCHED_FIFO | SCHED_RESET_ON_FORK, &sp) < 0) {
		s->loop.rt_refused = 1;
		return;
	}
	s->loop.realtime = 1;
	s->loop.rt_since_ns = now_ns();
	s->loop.rt_cpu_ns = thread_cpu_ns();
	s->loop.rt_from_tick = s->loop.next_slot;
}

/* A tick fired LATE ns after it was due. */
void sampler_watch_lateness(struct sampler *s, uint64_t late)
{
	if (s->loop.realtime || s->loop.rt_dropped || s->loop.rt_refused)
		return;
	if (late >= s->loop.period_ns)
		s->loop.late_ticks++;
	if (s->loop.late_ticks >= LATE_TICKS)
		enter_realtime(s);
	if (++s->loop.late_window >= LATE_WINDOW)
		s->loop.late_ticks = s->loop.late_window = 0;
}

/* How the tracer thread was scheduled, for --stats. */
void sampler_describe_tracer(struct sampler *s)
{
	/* In a user's words: when, not which tick; what, not the policy. */
	double at = (double)s->loop.rt_from_tick / (s->cfg.hz > 0 ? s->cfg.hz : 1);
	if (s->loop.rt_dropped)
		snprintf(s->loop.tracer, sizeof(s->loop.tracer), "real-time priority from %.1f s on (its ticks "
			 "were late), then nice -10 (it used over half a CPU)", at);
	else if (s->loop.realtime)
		snprintf(s->loop.tracer, sizeof(s->loop.tracer), "real-time priority from %.1f s on (its ticks "
			 "were late)", at);
	else if (s->loop.rt_refused)
		snprintf(s->loop.tracer, sizeof(s->loop.tracer), "its ticks were late, and real-time priority "
			 "was not allowed");
	else
		snprintf(s->loop.tracer, sizeof(s->loop.tracer), "normal priority (its ticks were on time)");
}

void sampler_check_realtime(struct sampler *s)
{
	uint64_t now = now_ns();
	if (!s->loop.realtime || now - s->loop.rt_since_ns < 1000000000ull)
		return;
	uint64_t cpu = thread_cpu_ns();
	if ((double)(cpu - s->loop.rt_cpu_ns) > RT_CPU_SHARE * (double)(now - s->loop.rt_since_ns)) {
		struct sched_param sp = { .sched_priority = 0 };
		sched_setscheduler(0, SCHED_OTHER | SCHED_RESET_ON_FORK, &sp);
		s->loop.realtime = 0;
		s->loop.rt_dropped = 1;
	}
	s->loop.rt_since_ns = now;
	s->loop.rt_cpu_ns = cpu;
}
