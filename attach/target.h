/* target: the traced process and its threads.
 *
 * Every thread is seized with PTRACE_SEIZE (no SIGSTOP the target could
 * see) and PTRACE_O_TRACECLONE, so threads created later arrive seized.
 * A tick samples every thread.  A thread blocked in a system call is
 * sampled from /proc without a stop.  A running thread is interrupted, and
 * when it reports its stop its registers and a copy of its stack are taken
 * and it is resumed at once: no thread waits for the others, and the tick
 * does not wait for any thread.  Everything else (unwinding, symbolizing)
 * happens on the copies, after the threads run again.
 *
 * A thread that waits for a CPU (more runnable threads than CPUs) stops
 * only when the scheduler next runs it, which can be several ticks later.
 * It runs no code of its own between the interrupt and the stop, so the
 * capture taken then is where it was at each of those ticks: the capture
 * stands for all of them (capture.ticks) and the thread is not interrupted
 * again meanwhile.  Wall-clock time is accounted for, with fewer stops.
 *
 * The caller must block SIGCHLD (ptrace stops are reported by it) and
 * call target__poll() whenever SIGCHLD arrives: stops are handled there,
 * and signals sent to the target are passed on without waiting for the
 * next tick.
 *
 * Detaching: every call on a target must come from one thread, the tracer,
 * and the tracees are detached when that thread exits.  The kernel then
 * detaches them without stopping them (PTRACE_DETACH needs a ptrace-stop,
 * and stopping a thread blocked in epoll_wait makes it return EINTR);
 * a signal caught in flight is delivered, a group-stop stays a stop.  It
 * is also exactly what happens if the profiler is killed. */
#ifndef CPROF_ATTACH_TARGET_H
#define CPROF_ATTACH_TARGET_H

#include <signal.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include <sys/user.h>

struct target;

/* One thread's sample: taken while it was stopped, or, for a thread
 * blocked in a system call, while it stayed blocked (then only SP and PC
 * are known: partial_regs). */
struct capture {
	pid_t tid;
	uint32_t slot;                  /* index for target__thread_*() */
	int partial_regs;               /* only rsp and rip are valid */
	struct user_regs_struct regs;
	uint64_t stack_addr;            /* remote address of stack[0] (SP - 128) */
	size_t stack_len;               /* bytes copied */
	size_t stack_want;              /* bytes asked for; len < want: end of mapping */
	unsigned char *stack;
	uint64_t pause_ns;              /* stop requested -> thread resumed; 0 if not stopped */
	uint32_t ticks;                 /* ticks this capture stands for (see above) */
	char state;                     /* /proc state: R running, S sleeping, D disk wait, T stopped */
	uint64_t cpu_ns;                /* CPU time the thread used since its previous capture */
};

/* Takes a capture: returns 0 when done with it, -EAGAIN when it needs the
 * registers a stop gives (the thread is then stopped and captured again). */
typedef int (*capture_fn)(void *arg, const struct capture *c);

/* Pauses are counted in a log-linear histogram: 1 us buckets below
 * 1024 us, then 64 buckets per power of two (at most 1.6% wide) up to
 * 2^32 us. */
#define PAUSE_HIST_EXACT 1024
#define PAUSE_HIST_SUB 64
#define PAUSE_HIST_BUCKETS (PAUSE_HIST_EXACT + (32 - 10) * PAUSE_HIST_SUB)

struct target_stats {
	uint64_t ticks;
	uint64_t samples;               /* captures taken while stopped */
	uint64_t samples_blocked;       /* captures of blocked threads, not stopped */
	uint64_t blocked_retries;       /* blocked captures torn by a wake-up, retried */
	uint64_t carried;               /* thread-ticks covered by a later capture */
	uint64_t lost;                  /* thread-ticks without a capture: the thread
					   exited, or the run ended, before it stopped */
	uint64_t threads_seen;
	uint64_t pause_hist[PAUSE_HIST_BUCKETS];
};

/* The pause (stop requested -> resumed) below which a fraction Q of all
 * pauses fell, in microseconds; 0 when nothing was sampled. */
double target__pause_quantile(const struct target *t, double q);

enum target_end {
	TARGET_RUNNING = 0,
	TARGET_EXITED,                  /* the whole process is gone */
	TARGET_EXECED,                  /* exec() replaced the program */
};

/* Checks PID and seizes all its threads.  On failure returns a negative
 * errno with a one-line reason in ERR, and the target is left untouched. */
int target__attach(struct target **out, pid_t pid, char *err, size_t errlen);

/* Starts ARGV[0] with ARGV as a seized child; CHILD_MASK is the signal
 * mask the child should run with.  The first exec is expected and not
 * reported as TARGET_EXECED. */
int target__launch(struct target **out, char *const argv[], const sigset_t *child_mask,
		   char *err, size_t errlen);

void target__free(struct target *t);             /* accepts NULL */

pid_t target__pid(const struct target *t);

/* The sampling period: a capture's CPU time (capture.cpu_ns) is what the
 * thread used since its previous sample if it was found running, at most
 * ticks x period; 0 for a thread found blocked. */
void target__set_period(struct target *t, uint64_t period_ns);

/* Where captures go: FN(ARG, capture), always after the thread runs again. */
void target__set_capture_fn(struct target *t, capture_fn fn, void *arg);

/* Which threads are sampled: FN(ARG, TID, NAME) returns non-zero for those
 * that are.  Asked again whenever a thread's name is re-read (about once a
 * second: threads name themselves after they start).  Without a filter,
 * every thread is sampled. */
typedef int (*thread_filter_fn)(void *arg, pid_t tid, const char *name);
void target__set_filter(struct target *t, thread_filter_fn fn, void *arg);

/* Handles every pending ptrace event without blocking, then hands the
 * captures of the threads that stopped to the capture function. */
void target__poll(struct target *t);

/* Starts one tick: samples every thread.
 *
 * A thread blocked in a system call is sampled without being stopped (a
 * stop can make calls like epoll_wait return EINTR to the target): its SP
 * and PC come from /proc/PID/task/TID/syscall, its stack is copied while
 * it stays blocked, and the copy is kept only if the thread did not move
 * meanwhile.  The capture function sees such a capture at once; if it
 * returns -EAGAIN (SP and PC were not enough to unwind) the thread is
 * stopped instead.  Running threads are interrupted; their captures come
 * through target__poll() as they stop.  A thread still stopping from an
 * earlier tick is not interrupted again: its capture will count this tick
 * too. */
void target__sample(struct target *t);

/* The unwinder ran out of the stack copy for TID: copy more next time. */
void target__stack_too_small(struct target *t, pid_t tid);

/* Takes the captures of threads still stopping (waiting at most a short
 * while) and reads what is still needed from the threads (their names)
 * before the tracer thread exits and so detaches them. */
void target__release(struct target *t);

enum target_end target__end(const struct target *t);
int target__exit_status(const struct target *t);  /* waitpid status of the leader */
int target__ready(const struct target *t);        /* launch mode: exec done */

/* Thread labels of the captures (capture.slot).  A slot is one thread, or
 * once there have been very many threads, all later threads of one name:
 * then its TID is 0. */
size_t target__nslots(const struct target *t);
pid_t target__slot_tid(const struct target *t, uint32_t slot);
const char *target__slot_name(const struct target *t, uint32_t slot);

const struct target_stats *target__stats(const struct target *t);

#endif
