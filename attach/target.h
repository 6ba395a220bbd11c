/* target: the traced process and its threads.
 *
 * Every thread is seized with PTRACE_SEIZE (no SIGSTOP the target could
 * see) and PTRACE_O_TRACECLONE, so threads created later arrive seized.
 * One tick interrupts every thread, and as each one reports its stop its
 * registers and a copy of its stack are taken and it is resumed at once:
 * no thread waits for the others.  Everything else (unwinding,
 * symbolizing) happens on the copies, after the threads run again.
 *
 * The caller must block SIGCHLD (ptrace stops are reported by it) and
 * call target__poll() whenever SIGCHLD arrives, so that signals sent to
 * the target are passed on without waiting for the next tick.
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
};

/* Takes a capture: returns 0 when done with it, -EAGAIN when it needs the
 * registers a stop gives (the thread is then stopped and captured again). */
typedef int (*capture_fn)(void *arg, const struct capture *c);

#define PAUSE_HIST_US 20000            /* pauses of 20 ms and more share the last bucket */

struct target_stats {
	uint64_t ticks;
	uint64_t samples;               /* captures taken while stopped */
	uint64_t samples_blocked;       /* captures of blocked threads, not stopped */
	uint64_t blocked_retries;       /* blocked captures torn by a wake-up, retried */
	uint64_t lost;                  /* threads that did not stop within a tick */
	uint64_t threads_seen;
	uint64_t pause_hist[PAUSE_HIST_US + 1];  /* pauses, by whole microseconds */
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

/* Handles every pending ptrace event without blocking. */
void target__poll(struct target *t);

/* Takes one sample of every thread and hands each capture to FN.
 *
 * A thread blocked in a system call is sampled without being stopped (a
 * stop can make calls like epoll_wait return EINTR to the target): its SP
 * and PC come from /proc/PID/task/TID/syscall, its stack is copied while
 * it stays blocked, and the copy is kept only if the thread did not move
 * meanwhile.  FN sees such a capture at once; if it returns -EAGAIN (SP
 * and PC were not enough to unwind) the thread is stopped instead.
 * Running threads are interrupted, captured and resumed one by one; FN
 * sees their captures after all of them run again.  Returns the number of
 * captures FN accepted. */
size_t target__sample(struct target *t, capture_fn fn, void *arg);

/* The unwinder ran out of the stack copy for TID: copy more next time. */
void target__stack_too_small(struct target *t, pid_t tid);

/* Reads what is still needed from the threads (their names) before the
 * tracer thread exits and so detaches them. */
void target__release(struct target *t);

enum target_end target__end(const struct target *t);
int target__exit_status(const struct target *t);  /* waitpid status of the leader */
int target__ready(const struct target *t);        /* launch mode: exec done */

size_t target__nslots(const struct target *t);
pid_t target__slot_tid(const struct target *t, uint32_t slot);
const char *target__slot_name(const struct target *t, uint32_t slot);

const struct target_stats *target__stats(const struct target *t);

#endif
