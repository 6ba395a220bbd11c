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
 * the target are passed on without waiting for the next tick. */
#ifndef CPROF_ATTACH_TARGET_H
#define CPROF_ATTACH_TARGET_H

#include <signal.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include <sys/user.h>

struct target;

/* One thread's sample, taken while it was stopped. */
struct capture {
	pid_t tid;
	uint32_t slot;                  /* index for target__thread_*() */
	struct user_regs_struct regs;
	uint64_t stack_addr;            /* remote address of stack[0] (SP - 128) */
	size_t stack_len;               /* bytes copied */
	size_t stack_want;              /* bytes asked for; len < want: end of mapping */
	unsigned char *stack;
	uint64_t pause_ns;              /* stop requested -> thread resumed */
};

#define PAUSE_HIST_US 20000            /* pauses of 20 ms and more share the last bucket */

struct target_stats {
	uint64_t ticks;
	uint64_t samples;               /* captures taken */
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

/* Takes one sample of every thread.  *CAPS (owned by T) is valid until the
 * next call.  Returns the number of captures. */
size_t target__sample(struct target *t, struct capture **caps);

/* The unwinder ran out of the stack copy for TID: copy more next time. */
void target__stack_too_small(struct target *t, pid_t tid);

/* Detaches every thread; threads keep running (or stay group-stopped),
 * and a signal caught in flight is delivered. */
void target__detach(struct target *t);

enum target_end target__end(const struct target *t);
int target__exit_status(const struct target *t);  /* waitpid status of the leader */
int target__ready(const struct target *t);        /* launch mode: exec done */

size_t target__nslots(const struct target *t);
pid_t target__slot_tid(const struct target *t, uint32_t slot);
const char *target__slot_name(const struct target *t, uint32_t slot);

const struct target_stats *target__stats(const struct target *t);

#endif
