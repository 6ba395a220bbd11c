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

/* The user stack the kernel copies at each sample, from SP up (perf
 * record's default is 8 KiB).  The copy is made in the thread's
 * interrupt, paid by the target; deeper stacks are read on from the
 * target's memory (attach/nostop.c), which a stack that changes fast cuts
 * at the seam: at 8 KiB, CPython 3.13's -X perf recursion (pyfib.py) lost
 * its outer frames in 16-18% of samples; at 16 KiB none (t_jitunwind).
 * Each stream's ring (attach/perf.c, ring_len) holds six such samples:
 * 128 KiB of locked memory a thread with a stream. */
#define PERF_STACK_BYTES (16 * 1024)
/* Samples per tick period of the thread's CPU time: the sample counted at
 * a tick is at most an eighth of a period of CPU time before it, so
 * periodic work does not lock step with the clock (the ticks are
 * jittered, its samples are not: t_shares' 20 ms cycle at 100 Hz read 62%
 * for 50% with one a period), and a thread that lives 2 ms has one at
 * 99 Hz.  Never more often than every PERF_PERIOD_MIN_NS. */
#define PERF_PER_TICK 8
#define PERF_PERIOD_MIN_NS (100 * 1000)
/* A thread born during the run samples this often until its first tick
 * (then as above): one that lives half a millisecond is still seen. */
#define PERF_NEWBORN_NS (100 * 1000)

struct perf_stream;

#define PERF_KSTACK_MAX 32

/* One sample, copied out of the ring: valid until the next perf__read()
 * of its stream. */
struct perf_sample {
	uint64_t time_ns;               /* CLOCK_MONOTONIC, at the interrupt */
	uint64_t cpu_ns;                /* the thread's clock then (see perf__cpu_ns) */
	struct user_regs_struct regs;   /* the general registers, RIP, RSP, flags, CS,
					   SS; fs_base, gs_base, orig_rax: 0 / -1 */
	uint64_t kips[PERF_KSTACK_MAX]; /* the kernel's call chain, innermost first
					   (perf__open's KCHAIN, a sample taken in the
					   kernel); nkips 0: none */
	int nkips;
	const unsigned char *stack;     /* from regs.rsp */
	size_t stack_len;               /* bytes the kernel could copy */
	size_t stack_asked;             /* bytes asked for: len < asked, the copy
					   reached the end of the stack's mapping */
};

/* Opens the stream of thread TID: a sample every EVERY_NS of its CPU time,
 * STACK bytes of stack (a multiple of 8, at most 60 KiB), kernel-mode
 * samples kept only if KERNEL (then the user registers and stack are those
 * at its entry into the kernel), with KCHAIN (and KERNEL) their kernel
 * call chain too (PERF_SAMPLE_CALLCHAIN, its kernel part).  Returns 0 and *OUT, or a negative errno:
 * -EACCES/-EPERM not permitted (perf_event_paranoid, no CAP_PERFMON,
 * seccomp), -ENOENT/-ENOSYS/-EOPNOTSUPP no such event here, -ESRCH gone,
 * -EMFILE/-ENOMEM out of descriptors or locked memory. */
int perf__open(pid_t tid, uint64_t every_ns, size_t stack, int kernel, int kchain,
	       struct perf_stream **out);

/* A sample every EVERY_NS of CPU time from now on (PERF_EVENT_IOC_PERIOD:
 * the clock is restarted on the thread's CPU, no stop).  0, or -errno. */
int perf__every(struct perf_stream *p, uint64_t every_ns);
void perf__free(struct perf_stream *p);          /* accepts NULL */

/* Whether this process may open such streams at all: one opened on our own
 * thread and closed.  0, or the negative errno of perf__open(). */
int perf__permitted(uint64_t every_ns, size_t stack);

/* Samples perf__read() left out since the last call because the kernel
 * copied none of their stack (taken inside execve(), see perf.c). */
uint64_t perf__nostack(struct perf_stream *p);

/* Samples the kernel counted as lost (PERF_RECORD_LOST: output paused while
 * perf__read() read, or the ring full) since the last call. */
uint64_t perf__dropped(struct perf_stream *p);

/* Reads the ring, which keeps the newest samples (a few periods' worth):
 * *BEFORE is the latest sample taken at or before AT_NS (CLOCK_MONOTONIC),
 * *AFTER the earliest one still there taken after it (NULL: none; it may
 * be later than the first after AT_NS if that was overwritten since).
 * Both point into the stream's own buffers, valid until the next call. */
void perf__read(struct perf_stream *p, uint64_t at_ns, const struct perf_sample **before,
		const struct perf_sample **after);

/* The thread's clock now: the CPU time it ran since the stream opened, in
 * ns, comparable with perf_sample.cpu_ns.  0, or a negative errno. */
int perf__cpu_ns(struct perf_stream *p, uint64_t *cpu_ns);

#endif
