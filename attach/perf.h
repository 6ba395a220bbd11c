/* perf: a running thread's registers and user stack, copied by the kernel
 * at a software clock's interrupt (perf_event_open), with no stop of the
 * thread and no wake-up of ours: what attach/nostop.c makes captures of.
 *
 * One stream per thread: a PERF_COUNT_SW_TASK_CLOCK event on that thread
 * alone (pid = TID, any CPU), sampling every PERIOD ns of the thread's own
 * CPU time, with PERF_SAMPLE_TID | TIME | REGS_USER | STACK_USER, its
 * records in a ring buffer of its own that perf__read() drains without
 * blocking.  Timestamps are CLOCK_MONOTONIC (util/timeutil.h now_ns()).
 *
 * Nothing here knows of ticks or threads' states: the caller says which
 * samples it wants (the first at or after a time, the latest). */
#ifndef CPROF_ATTACH_PERF_H
#define CPROF_ATTACH_PERF_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include <sys/user.h>

/* The user stack the kernel copies at each sample, from SP up.  Measured
 * (bench/slowdown.sh, docs/how-it-works.md): the copy is made in the
 * thread's interrupt, so it is paid by the target; 16 KiB holds the C and
 * C++ stacks of the tests whole, deeper ones are read on from the
 * target's memory (attach/nostop.c). */
#define PERF_STACK_BYTES (16 * 1024)

struct perf_stream;

/* One sample, copied out of the ring: valid until the next perf__read()
 * of its stream. */
struct perf_sample {
	uint64_t time_ns;               /* CLOCK_MONOTONIC, at the interrupt */
	uint64_t cpu_ns;                /* the thread's clock then (see perf__cpu_ns) */
	struct user_regs_struct regs;   /* the general registers, RIP, RSP, flags, CS,
					   SS; fs_base, gs_base, orig_rax: 0 / -1 */
	const unsigned char *stack;     /* from regs.rsp */
	size_t stack_len;               /* bytes the kernel could copy */
	size_t stack_asked;             /* bytes asked for: len < asked, the copy
					   reached the end of the stack's mapping */
};

/* Opens the stream of thread TID: a sample per PERIOD_NS of its CPU time,
 * STACK bytes of stack (a multiple of 8, at most 60 KiB), kernel-mode
 * samples kept only if KERNEL (then the user registers and stack are those
 * at its entry into the kernel).  Returns 0 and *OUT, or a negative errno:
 * -EACCES/-EPERM not permitted (perf_event_paranoid, no CAP_PERFMON,
 * seccomp), -ENOENT/-ENOSYS/-EOPNOTSUPP no such event here, -ESRCH gone,
 * -EMFILE/-ENOMEM out of descriptors or locked memory. */
int perf__open(pid_t tid, uint64_t period_ns, size_t stack, int kernel, struct perf_stream **out);
void perf__free(struct perf_stream *p);          /* accepts NULL */

/* Whether this process may open such streams at all: one opened on our own
 * thread and closed.  0, or the negative errno of perf__open(). */
int perf__permitted(uint64_t period_ns, size_t stack);

/* Drains the ring: every record since the last call is consumed.  Of the
 * samples among them, *FIRST is the first whose time is >= AFTER_NS (NULL
 * if none or AFTER_NS is 0); *LATEST is the latest sample the stream ever
 * gave (kept across calls; NULL if none).  LOST adds the samples the
 * kernel dropped (ring full).  Both point into the stream's own buffers. */
void perf__read(struct perf_stream *p, uint64_t after_ns, const struct perf_sample **first,
		const struct perf_sample **latest, uint64_t *lost);

/* The thread's clock now: the CPU time it ran since the stream opened, in
 * ns, comparable with perf_sample.cpu_ns.  0, or a negative errno. */
int perf__cpu_ns(struct perf_stream *p, uint64_t *cpu_ns);

/* Drains the ring and forgets the latest sample (an exec: the samples are
 * of the old image). */
void perf__forget(struct perf_stream *p);

#endif
