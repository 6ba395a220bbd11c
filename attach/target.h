/* target: the traced processes and their threads, one ptrace event
 * machine for all of them.
 *
 * Every thread is seized with PTRACE_SEIZE (no SIGSTOP the target could
 * see) and PTRACE_O_TRACECLONE, so threads created later arrive seized;
 * with subprocesses on, PTRACE_O_TRACEFORK/VFORK too, so children arrive
 * seized, and the descendants that exist at attach are seized as well.
 * exec() is followed: the process gets a new address space id (see
 * capture.space), the old one's samples stay as they were.
 *
 * A tick samples every thread.  A thread blocked in a system call is
 * sampled from /proc without a stop (target__next_blocked).  A running
 * thread is interrupted, and when it reports its stop its registers and a
 * copy of its stack are taken and it is resumed at once: no thread waits
 * for the others, and the tick does not wait for any thread
 * (target__next_stopped).  Everything else (unwinding, symbolizing)
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
 * call target__poll() whenever SIGCHLD arrives, then take the captures
 * with target__next_stopped(): signals sent to the target are passed on
 * there without waiting for the next tick.
 *
 * Detaching: every call on a target must come from one thread, the tracer,
 * and the tracees are detached when that thread exits.  The kernel then
 * detaches them without stopping them (PTRACE_DETACH needs a ptrace-stop,
 * and stopping a thread blocked in epoll_wait makes it return EINTR);
 * a signal caught in flight is delivered, a group-stop stays a stop.  It
 * is also exactly what happens if the profiler is killed. */
#ifndef CPROF_ATTACH_TARGET_H
#define CPROF_ATTACH_TARGET_H

#include <regex.h>
#include <signal.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include <sys/user.h>

struct target;

/* One thread's sample: taken while it was stopped, or, for a thread
 * blocked in a system call, while it stayed blocked (then only SP and PC
 * are known: partial_regs). */
#define TARGET_PROBE_MAX 192
#define TARGET_PROBE_STACK_MAX (64 * 1024)

/* Far parts of a stack: a frame of megabytes (Ruby up to 3.2 puts each
 * thread's VM stack, 1 MiB, on its native stack; alloca; big locals) puts
 * its callers' frames further above SP than a copy should reach.  Those
 * frames are copied as a few segments, where the thread's unwinds asked
 * for them (target__stack_too_small), each TARGET_FAR_LEN bytes, at most
 * TARGET_FAR_SPAN above SP (the stated cap: beyond, a stack is cut and
 * counted as short). */
#define TARGET_FAR_MAX 4
#define TARGET_FAR_LEN (8 * 1024)
#define TARGET_FAR_SPAN (64ull << 20)

/* A read made while a stopped thread is captured, for state of a runtime
 * that changes as soon as the thread runs again (a Go thread on its system
 * stack: the goroutine it works for, sample/goroutines.c): the word at the
 * thread's FS base + TLS, then the word at that pointer + HOP[0], then at
 * that + HOP[1], then LEN bytes (at most TARGET_PROBE_MAX) at the pointer
 * reached.  When that pointer is not the first one (the thread is not
 * running what it points to) and the block's words at SP_OFF and HI_OFF
 * are an SP and the top of its stack, up to STACK_MAX bytes of that stack
 * from SP are copied too: a second stack, frozen as the first.  A few
 * small reads (and that copy): the price is paid in the pause, so a
 * process gets a probe only once it is known to need one. */
struct target_probe {
	int64_t tls;
	uint32_t hop[2];
	uint32_t len;
	uint32_t sp_off, hi_off;
	uint32_t stack_max;             /* 0: no second stack */
	/* With perf capture, running threads are not stopped for the probe,
	 * but where their sample says the first pointer's block is not the
	 * one they work for: %r14 at the sample is a pointer (Go's g, since
	 * Go 1.17's register ABI) whose word at HOP[0] points to a block
	 * whose first word is %r14 again (the M of its system stack, g0) and
	 * whose word at HOP[1] is neither 0 nor %r14 (a goroutine it works
	 * for).  Such a thread is stopped at the tick, and the probe read
	 * then; a blocked one that needs registers too.  0: every running
	 * thread is stopped (ptrace capture's rule). */
	uint32_t r14_hops;
};

/* A runtime's own read of a thread's state at its capture (CPython: the
 * interpreter frames it runs), which changes as soon as the thread runs
 * again: FN(ARG, PID, TID, RUNNING, OUT, CAP) copies what it needs (at
 * most CAP = TARGET_RT_MAX bytes) into OUT and returns how many.  It runs
 * while the thread is stopped, or, for a blocked thread, between the two
 * looks that find it blocked at the same place (a thread that moved is
 * read again with its stack): its cost is paid in the pause, so it must
 * be a few small reads.  RUNNING (perf capture: the thread runs on, its
 * sample just taken): what is read must be checked to hold together. */
#define TARGET_RT_MAX (24 * 1024 + 64)       /* CPython: 1,024 frames of 24 bytes */
#define TARGET_KSTACK_MAX 32
typedef size_t (*target_reader_fn)(void *arg, pid_t pid, pid_t tid, int running, void *out,
				   size_t cap);

struct capture {
	pid_t pid, tid;
	int no_stop;                    /* no stop will follow: a frame that needs more
					   registers ends the stack (partial), never a
					   stop (perf capture) */
	uint32_t slot;                  /* the thread's label: target__slot() */
	uint32_t space;                 /* the address space: same id, same maps
					   (a forked child shares its parent's until
					   it execs; an exec makes a new one) */
	int partial_regs;               /* only rsp and rip are valid */
	struct user_regs_struct regs;
	uint64_t stack_addr;            /* remote address of stack[0] (SP - 128) */
	size_t stack_len;               /* bytes copied */
	size_t stack_want;              /* bytes asked for; len < want: end of mapping */
	unsigned char *stack;
	/* The far segments (see TARGET_FAR_MAX) copied with the stack:
	 * far_len[i] bytes at far_addr[i], held in far + i * TARGET_FAR_LEN;
	 * far_len 0: not read, or not to be trusted (a running thread's
	 * segment that changed since its last sample). */
	int nfar;
	uint64_t far_addr[TARGET_FAR_MAX];
	size_t far_len[TARGET_FAR_MAX];
	unsigned char *far;             /* made on first use */
	uint64_t pause_ns;              /* stop requested -> thread resumed; 0 if not stopped */
	uint32_t ticks;                 /* ticks this capture stands for (see above) */
	char state;                     /* /proc state: R running, S sleeping, D disk wait, T stopped */
	int syscall;                    /* the system call it is blocked in, or -1 */
	uint64_t cpu_ns;                /* CPU time the thread used since its previous capture */
	/* A thread that has not run since its last counted capture is not
	 * copied again: its capture is "unchanged" (no registers, no stack)
	 * and counts TICKS of the stack counted then, which the caller named
	 * COOKIE (see target__counted()). */
	int unchanged;
	int uncertain;                  /* unchanged, but the thread moved at one of
					   these ticks (checked less often: see
					   attach/blocked.c): counted at its last stack */
	uint64_t cookie;
	/* The process's probe (target__set_probe), read while stopped:
	 * the pointers followed and the bytes copied; probe_len 0: none. */
	uint64_t probe_ptr[3];
	int probe_ptrs;                 /* how many of them were read */
	unsigned char probe[TARGET_PROBE_MAX];
	size_t probe_len;
	unsigned char *probe_stack;     /* the second stack, from the SP at sp_off */
	size_t probe_stack_len;         /* 0: none copied */
	/* A running thread's kernel call chain at its perf sample, innermost
	 * first (--kernel-stacks, perf capture); nkernel 0: none (a sample in
	 * user mode, or not asked).  Named by proc__kernel_symbol(). */
	uint64_t kernel_ips[TARGET_KSTACK_MAX];
	int nkernel;
	/* The process's reader's bytes (target__set_reader); rt_len 0: none. */
	unsigned char *rt_data;
	size_t rt_len;
	int rt_after;                   /* read at the tick, after the thread's perf
					   sample (it ran on meanwhile), not with it */
};

struct target_stats {
	uint64_t ticks;
	int capture_perf;               /* 1: running threads captured from perf samples
					   (no stop), 0: by ptrace stops */
	uint64_t samples;               /* captures taken while stopped */
	uint64_t samples_perf;          /* captures of running threads from perf samples */
	uint64_t perf_owed;             /* thread-ticks found running with no sample within a
					   period before: counted by the next sample after */
	uint64_t perf_owed_carried;     /* of them, counted by a later capture of another
					   kind (no sample came) */
	uint64_t perf_owed_last;        /* of them, counted at the thread's last counted
					   stack (uncertain): none came in OWED_MAX ticks */
	uint64_t perf_cut;              /* stacks cut where the kernel's copy ended: the
					   memory read on did not match it any more */
	uint64_t perf_extended;         /* stacks read on past the kernel's copy */
	uint64_t far_read;              /* captures with far stack segments (TARGET_FAR_MAX) */
	uint64_t far_changed;           /* ... of running threads, a segment that changed
					   since the last sample, not used */
	uint64_t perf_dropped;          /* samples the kernel could not write (PERF_RECORD_LOST) */
	uint64_t perf_nostack;          /* samples left out: no stack copied (taken
					   inside execve(), the old memory gone) */
	uint64_t perf_unavailable;      /* running threads stopped: no perf stream */
	uint64_t probe_stops;           /* running threads stopped for the probe (a Go
					   thread on its system stack for a goroutine) */
	uint64_t need_regs_partial;     /* blocked captures that needed registers /proc
					   does not give: partial stacks, no stop */
	uint64_t samples_blocked;       /* captures of blocked threads, not stopped */
	uint64_t blocked_retries;       /* blocked captures torn by a wake-up, retried */
	uint64_t samples_unchanged;     /* thread-ticks counted from an unchanged stack */
	uint64_t backoff_ticks;         /* of those, ticks between two checks that found
					   the thread unchanged (exact) */
	uint64_t backoff_uncertain;     /* of those, ticks between two checks when the
					   second found it moved (counted at its last stack) */
	uint64_t fp_reused;             /* blocked captures given the registers of an
					   earlier stop at the same place (frame pointers) */
	uint64_t carried;               /* thread-ticks covered by a later capture */
	uint64_t lost;                  /* thread-ticks without a capture: the thread
					   exited, or the run ended, before it stopped */
	uint64_t threads_seen;
	uint64_t threads_sampled;       /* of them, those --tid or --threads-matching chose
					   (all of them without either) */
	uint64_t processes_seen;
	uint64_t threads_now;           /* threads of the target alive now (sampled or not) */
	uint64_t processes_now;         /* ... and processes */
	uint64_t execs;                 /* exec() calls followed */
	uint64_t skipped;               /* processes left alone (traced by another tracer) */
};

/* How a running thread is captured.  PERF: from the registers and stack a
 * perf software clock copies at its interrupt (attach/perf.h), no stop;
 * PTRACE: a stop (PTRACE_INTERRUPT), which makes a call with a timeout
 * return EINTR; AUTO: perf where permitted. */
enum target_capture { TARGET_CAPTURE_AUTO, TARGET_CAPTURE_PERF, TARGET_CAPTURE_PTRACE };

/* Which threads are sampled, and how. */
struct target_config {
	enum target_capture capture;
	int kernel_stacks;              /* perf capture: running threads' kernel call
					   chains too (capture.kernel_ips) */
	int subprocesses;               /* follow children: forked ones and existing ones */
	uint64_t period_ns;             /* the wall time one tick stands for */
	const pid_t *tids;              /* sample only these threads (NULL: all) */
	size_t ntids;
	const regex_t *threads_re;      /* only threads whose name matches (NULL: all) */
};

struct target *target__new(const struct target_config *cfg);
void target__free(struct target *t);             /* accepts NULL */

/* Checks PID and seizes all its threads (with subprocesses, its
 * descendants' too; one already traced by another tracer is skipped with
 * a note, see target__notes()).  On failure returns a negative errno with
 * a one-line reason in ERR, and PID is left untouched. */
int target__attach(struct target *t, pid_t pid, char *err, size_t errlen);

/* Starts ARGV[0] with ARGV as a seized child; CHILD_MASK is the signal
 * mask the child should run with (its other signal dispositions are
 * reset to the defaults).  The first exec is expected: sampling starts
 * once it has happened (target__ready). */
int target__launch(struct target *t, char *const argv[], const sigset_t *child_mask,
		   char *err, size_t errlen);

/* Handles every pending ptrace event without blocking.  Call it after
 * draining the SIGCHLD signalfd: target__next_stopped() itself waits for
 * events only while SIGCHLD is pending. */
void target__poll(struct target *t);

/* ---- one tick ----
 * target__tick_begin() with the instant the tick stands for (CLOCK_MONOTONIC,
 * util/timeutil.h now_ns(); 0: now), then target__next_blocked() until NULL (calling
 * target__need_stop() on a capture that was not enough), then
 * target__interrupt(); the captures of the interrupted threads come from
 * target__next_stopped() as they stop, during this tick and after. */
void target__tick_begin(struct target *t, uint64_t tick_ns);

/* The next blocked thread, sampled without a stop: its SP and PC come from
 * /proc/PID/task/TID/syscall, its stack is copied while it stays blocked,
 * and the copy is kept only if the thread did not move meanwhile.  Threads
 * found running are queued for target__interrupt().  NULL: every thread
 * has been visited.  The capture is valid until the next call. */
const struct capture *target__next_blocked(struct target *t);

/* C (the last blocked capture) did not do: SP and PC were not enough to
 * unwind.  The thread is stopped instead, by target__interrupt(). */
void target__need_stop(struct target *t, const struct capture *c);

/* Interrupts the threads queued this tick. */
void target__interrupt(struct target *t);

/* Handles pending ptrace events (if SIGCHLD is pending), then returns the
 * next capture of a thread that stopped and was resumed, or NULL.  Valid until the next
 * call. */
const struct capture *target__next_stopped(struct target *t);

/* Gives process PID the probe P for the captures of its threads made
 * while they are stopped, as long as its address space is SPACE (an exec
 * ends it).  Returns 0, or -ESRCH for a process not sampled. */
int target__set_probe(struct target *t, pid_t pid, uint32_t space, const struct target_probe *p);

/* Gives process PID the reader FN(ARG, ...) for every capture of its
 * threads (see target_reader_fn) as long as its address space is SPACE;
 * FN NULL: none.  Returns 0, or -ESRCH for a process not sampled. */
int target__set_reader(struct target *t, pid_t pid, uint32_t space, target_reader_fn fn, void *arg);

/* The stack copy of TID ran out before its root: copy more next time, at
 * once as much as NEED bytes (the unwind's furthest read) and half as much
 * again for the frames beyond, at least twice the copy; 0: twice.  FAR
 * (not 0): the unwind asked for the word at FAR, far beyond the copy (a
 * frame of megabytes between): a far segment there instead. */
void target__stack_too_small(struct target *t, pid_t tid, size_t need, uint64_t far);

/* Forgets what was counted for the threads of process PID (their cookies):
 * their next captures are taken and counted anew (the caller counts them
 * another way from now on). */
void target__forget(struct target *t, pid_t pid);

/* The caller counted capture C (the last one it was given; not an
 * unchanged one) and its unwind read STACK_USED bytes of the copy (0:
 * unknown), and its far segments if FAR_USED: the next copies of that
 * thread are sized from what its samples need.  COOKIE (not 0) names the stack it was counted as, if
 * counting it again is exact (0: it is not, e.g. the unwind stopped
 * early): a blocked thread that has not run since is handed out as an
 * unchanged capture carrying it. */
void target__counted(struct target *t, const struct capture *c, uint64_t cookie, size_t stack_used,
		     int far_used);

/* The next tick (target__tick_begin) checks every thread, those idle a
 * while too (checked every th->every ticks otherwise): after it each
 * thread's cookie is its stack at that tick (the HTTP server's "every
 * thread now"). */
void target__force_tick(struct target *t);

/* Calls FN(ARG, COOKIE) for every cookie the target holds (threads'
 * last counted stacks, and captures not yet handed out that carry one):
 * what the caller must keep valid (e.g. stack ids it ages out). */
void target__each_cookie(const struct target *t, void (*fn)(void *arg, uint64_t cookie), void *arg);

/* Takes the captures of threads still stopping (waiting at most a short
 * while; take them with target__next_stopped() after) and reads what is
 * still needed from the threads (their names) before the tracer thread
 * exits and so detaches them. */
void target__release(struct target *t);

/* ---- state ---- */
int target__ready(const struct target *t);       /* launch mode: exec done */
size_t target__alive(const struct target *t);    /* processes still running */
/* Threads asked to stop that have not yet been captured and resumed: while
 * any is, the target is held and the tracer must not wait on anything. */
size_t target__pending(const struct target *t);
pid_t target__first_pid(const struct target *t); /* the first process attached or launched */
/* waitpid status of the first process, once it has exited (else -1). */
int target__exit_status(const struct target *t);

/* The processes traced now and their address spaces, at most MAX. */
struct target_process {
	pid_t pid;
	uint32_t space;
};
size_t target__processes(const struct target *t, struct target_process *out, size_t max);

/* One-line notes on what was left alone (a process traced by someone
 * else), each once: returns the next one not yet taken, or NULL. */
const char *target__next_note(struct target *t);

/* Labels of the captures' slots.  A slot is one thread of one process
 * (one program image: an exec starts a new slot), or once there have been
 * very many threads, all later threads of one name: then its TID is 0. */
struct target_slot {
	pid_t pid, tid;
	const char *process, *thread;   /* process: its title ("nginx: worker process"),
					   or its command name when it set none */
	const char *comm;               /* its command name */
};
size_t target__nslots(const struct target *t);
void target__slot(const struct target *t, uint32_t slot, struct target_slot *out);

const struct target_stats *target__stats(const struct target *t);

/* Forgets the stops asked for and not yet seen (counted lost): the
 * tracer is about to exit, which detaches every thread without them. */
void target__drop_pending(struct target *t);

/* The pause (stop requested -> resumed) below which a fraction Q of all
 * pauses fell, in microseconds; 0 when nothing was sampled. */
double target__pause_quantile(const struct target *t, double q);

#endif
