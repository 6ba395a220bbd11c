/* Private to attach/: the tables target.c (the event machine and the
 * sampling) and seize.c (checks, attach, launch) share. */
#ifndef CPROF_ATTACH_INTERNAL_H
#define CPROF_ATTACH_INTERNAL_H

#include <sys/user.h>

#include "attach/perf.h"
#include "attach/proc.h"
#include "attach/target.h"
#include "util/hist.h"

#define TARGET_STACK_COPY_MIN (32 * 1024)    /* a new thread's first copy */
#define TARGET_STACK_COPY_FLOOR (4 * 1024)   /* never less, once sized */
#define TARGET_STACK_COPY_MAX (1024 * 1024)
/* Idle threads (blocked.c): a thread found unchanged for N ticks in a row
 * is next checked after 1 + N / IDLE_BACKOFF_DIV ticks, at most
 * IDLE_BACKOFF_MAX: the ticks a move can hide in are at most 1/DIV of
 * the idle time that came before it.  Measured (tests/bin/switcher asleep
 * 1 s in phase_a, then 50 ms in phase_b, 20 s at 99 Hz): phase_b measured
 * 4.71% of the time, profiled 4.50% with DIV 16 (1.01% with DIV 8; 4.90%
 * checking every tick); a 1,000-thread idle pool costs 3-4% of a core. */
#define IDLE_BACKOFF_DIV 16
#define IDLE_BACKOFF_MAX 32
/* The stack bytes kept from a stop for reusing its frame pointer, at most. */
#define FP_REGION_MAX (16 * 1024)
#define TARGET_RED_ZONE 128             /* below SP, a leaf's scratch space */
#define TARGET_PTRACE_OPTIONS (PTRACE_O_TRACECLONE | PTRACE_O_TRACEEXEC)
#define TARGET_PTRACE_CHILDREN (PTRACE_O_TRACEFORK | PTRACE_O_TRACEVFORK)

struct process {
	pid_t pid;
	uint32_t space;                 /* see capture.space */
	uint32_t probe_space;           /* the space the probe is for */
	struct target_probe probe;      /* len 0: none (target__set_probe) */
	target_reader_fn reader;        /* NULL: none (target__set_reader) */
	void *reader_arg;
	uint32_t reader_space;
	char comm[16];
	char title[PROC_TITLE_MAX];     /* its title, or comm when it set none */
	uint64_t title_read_ns;
	struct process *next;
};

/* The /proc files of a thread that are read while sampling. */
enum thread_file { TF_SYSCALL, TF_SCHEDSTAT, TF_STAT, TF_COMM, TF_COUNT };

/* A stop of a thread whose blocked capture needed registers /proc does not
 * give (RBP in frame-pointer code): its registers and the stack bytes from
 * SP to the saved frame above RBP (see blocked.c). */
struct fp_frame {
	struct user_regs_struct regs;
	size_t len;                     /* bytes from regs.rsp */
	unsigned char bytes[];
};

struct thread {
	pid_t tid;
	struct process *proc;           /* NULL: not ours, detach at its first stop */
	uint32_t slot;
	int pending;                    /* interrupted, not yet captured */
	uint32_t pending_ticks;         /* ticks since it was interrupted, this one included */
	int group_stopped;              /* in group-stop, restarted with LISTEN */
	size_t stack_size;              /* bytes its stack copy takes */
	size_t need_max;                /* most stack its samples needed in this window */
	uint64_t stack_end;             /* its stack mapping ends here (0: not known) */
	unsigned need_samples;          /* samples in the window */
	/* Its far stack segments (TARGET_FAR_MAX), where its unwinds asked;
	 * far_sum: a running thread's segment's bytes at its last read (a
	 * segment is used only while they do not change); far_idle: samples
	 * since one was used (they are dropped after a window of none). */
	int nfar;
	uint64_t far[TARGET_FAR_MAX];
	uint64_t far_sum[TARGET_FAR_MAX];
	unsigned far_idle;
	uint64_t interrupt_ns;
	uint64_t name_read_ns;
	unsigned name_reads;
	uint64_t name_runs;             /* schedstat's runs when its name was read */
	int fds[TF_COUNT];              /* /proc/PID/task/TID/..., kept open, or -1 */
	uint64_t cpu_ns;                /* its CPU time (schedstat) at its last capture */
	/* The idle fast path (blocked.c): set when the sampler counted a
	 * blocked capture of it (target__counted). */
	uint64_t cookie;                /* the sampler's note of that stack, 0: none */
	uint64_t last_cookie;           /* the last such note, kept when the stack moves on
					   (cookie 0): owed ticks no sample came for are
					   counted there (attach/nostop.c) */
	uint64_t runs;                  /* schedstat's runs at that capture */
	uint64_t line_hash;             /* its syscall line */
	char last_state;
	uint32_t idle_ticks;            /* ticks found unchanged in a row */
	uint32_t every;                 /* checked every EVERY-th tick */
	uint32_t skipped;               /* ticks since its last check, not yet counted */
	int want_fp;                    /* its next stop is kept in fp */
	struct fp_frame *fp;
	char stop_state;                /* the state its stop-capture reports */
	/* Capture without stops (attach/nostop.c): its perf stream, opened
	 * the first time it is found running, and this tick's look at it. */
	struct perf_stream *perf;
	int perf_failed;                /* none could be opened: stopped instead */
	int perf_newborn;               /* sampling at PERF_NEWBORN_NS until its first tick */
	const struct perf_sample *perf_before, *perf_after;     /* this tick's samples
					   around the tick (perf__read), or NULL */
	uint32_t owed;                  /* ticks it was found running with no sample
					   near: counted by its next sample (or capture) */
	uint64_t owed_since;            /* the first of them */
	int selected;                   /* sampled (see target_config) */
	int ever_selected;              /* counted in stats.threads_sampled */
	int pooled;                     /* shares its name's slot (MAX_THREAD_SLOTS) */
	char name[16];
	struct thread *next;            /* hash chain */
};

struct slot_info {
	pid_t pid, tid;
	int used;                       /* a capture of it was handed out */
	char process[PROC_TITLE_MAX];   /* the process's title, or its command name */
	char comm[16];                  /* its command name */
	char thread[16];
};

struct target {
	struct target_config cfg;
	enum target_capture capture;    /* PERF or PTRACE: what the run uses */
	int perf_refused;               /* perf__permitted()'s errno, 0: permitted */
	int user_only;                  /* perf: samples in the kernel not permitted */
	uint64_t tick_ns;               /* the instant this tick stands for */
	uint64_t names_due_ns;          /* target_refresh_names: next look at every thread */
	int launched, ready;
	pid_t first_pid;
	int first_status;               /* waitpid status, -1 until it exits */
	struct process *procs;
	size_t nprocs;
	uint32_t next_space;
	struct thread **buckets;
	size_t nbuckets, nthreads;
	size_t npending;
	struct slot_info *slots;
	size_t nslots, slots_cap;
	struct intern *pool_names;      /* "pid/name" -> index in pool_slots */
	uint32_t *pool_slots;
	struct capture *caps;           /* captures of stopped threads, to deliver */
	size_t ncaps, caps_cap, delivered;
	struct capture blocked;         /* scratch for a blocked thread's capture */
	size_t blocked_cap;
	struct thread *last_blocked;    /* its thread, until the caller is done with it */
	uint64_t last_blocked_cpu;
	uint64_t last_blocked_runs, last_blocked_hash;
	struct thread *revisit;         /* sample this one (again) first: its skipped
					   ticks were handed out, its own sample not */
	int revisit_looked;             /* ... and its perf stream was drained */
	int force_next, force_tick;     /* target__force_tick(): the next tick checks every
					   thread, idle or not (the tick: this one does) */
	int keep_below;                 /* /proc descriptors kept open only below this */
	int fd_noted;
	struct thread **visit;          /* this tick's threads */
	size_t nvisit, visit_cap, visit_i;
	struct thread **stoplist;       /* threads to interrupt this tick */
	size_t nstop, stoplist_cap;
	char **notes;
	size_t nnotes, notes_taken;
	struct target_stats stats;
	struct hist pause;              /* stop requested -> resumed, us */
};

/* tables.c: the threads and processes, their labels and /proc files.
 * target_tables_new makes a target's tables (target__new, target.c, does
 * the rest); a thread removed has had its perf stream ended first. */
struct target *target_tables_new(const struct target_config *cfg);
struct thread *target_thread_find(struct target *t, pid_t tid);
struct thread *target_thread_add(struct target *t, struct process *p, pid_t tid);
void target_thread_remove(struct target *t, pid_t tid);
struct process *target_process_add(struct target *t, pid_t pid, uint32_t space);
struct process *target_process_find(struct target *t, pid_t pid);
void target_process_remove(struct target *t, struct process *p);
void target_read_title(struct process *p);      /* p->title: its title, or comm */
/* SLOT's process: P's title and command name. */
void target_slot_process(struct target *t, uint32_t slot, const struct process *p);
/* A label of its own for TH (a new thread, or one whose process exec'd). */
void target_give_slot(struct target *t, struct thread *th);
/* TH's names changed (or were read for the first time): its label follows. */
void target_name_changed(struct target *t, struct thread *th);
void target_refresh_names(struct target *t);
int target_filtered(const struct target *t);
int target_wanted(const struct target *t, pid_t tid, const char *name);
uint64_t target_read_cpu_ns(struct target *t, struct thread *th);
/* TH's schedstat: CPU time and times scheduled in.  0, or -1. */
int target_read_schedstat(struct target *t, struct thread *th, uint64_t *cpu_ns, uint64_t *runs);
/* Reads FILE of TH into BUF (see proc__task_file), keeping it open while
 * descriptors allow; out of descriptors, others kept open are closed
 * first.  Returns the bytes read or -1 (errno set). */
ssize_t target_read(struct target *t, struct thread *th, enum thread_file f, char *buf, size_t size);
/* Closes every /proc file kept open (the symbolizer needs descriptors). */
void target_close_files(struct target *t);
/* Re-reads TH's name if it may have changed: it ran since the last read
 * (RUNS, schedstat's count) or a periodic refresh is due.  A new name gets
 * a new label once the old one has samples.  Returns 1 if TH's slot
 * changed. */
int target_check_name(struct target *t, struct thread *th, uint64_t runs);
void target_note(struct target *t, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

#define FOR_EACH_THREAD(t, th, tmp)                                      \
	for (size_t bi_ = 0; bi_ < (t)->nbuckets; bi_++)                 \
		for (struct thread *th = (t)->buckets[bi_], *tmp;        \
		     th && ((tmp = th->next), 1); th = tmp)

/* captures.c: the captures of a tick, whatever took them.  Room for one
 * more in t->caps (push it with t->ncaps++). */
struct capture *target_next_capture(struct target *t);
/* The process's runtime reader (target__set_reader) over TH, into C. */
void target_read_runtime(const struct thread *th, struct capture *c, int running);
/* Copies TH's far stack segments (TARGET_FAR_MAX) into C, those above its
 * copy.  With CHECK (a running thread, read after its sample), a segment
 * is used only if its bytes are those of its last read: a part of the
 * stack that changes between two samples holds live data, not a caller's
 * frames.  The thread must be stopped, blocked, or CHECK given. */
void target_read_far(struct target *t, struct thread *th, struct capture *c, int check);
/* Fills C as a capture that counts TICKS of TH's last counted stack. */
void target_again_capture(struct capture *c, const struct thread *th, uint32_t ticks, int uncertain);
/* Pushes a capture counting TICKS of TH's last counted stack again (for
 * target__next_stopped); UNCERTAIN: the thread moved somewhere in them. */
void target_push_again(struct target *t, struct thread *th, uint32_t ticks, int uncertain);
/* TICKS of TH counted at its last counted stack (th->last_cookie),
 * uncertain; 0, or -1 if it has none. */
int target_push_last(struct target *t, struct thread *th, uint32_t ticks);

/* blocked.c: TH sampled without a stop, or NULL (see *WHAT). */
enum { BLOCKED_STOP, BLOCKED_LOST, BLOCKED_SKIP, BLOCKED_AGAIN };
const struct capture *target_sample_blocked(struct target *t, struct thread *th, int *what);
/* Is TH unchanged since its last counted capture?  1 yes, 0 it moved (or
 * has nothing counted), -1 unreadable. */
int target_idle_check(struct target *t, struct thread *th);
/* A stopped capture C of TH: keep what a later blocked capture needs to
 * reuse its frame pointer. */
void target_keep_fp(struct thread *th, const struct capture *c);
/* The caller took the last blocked capture as it was. */
void target_blocked_taken(struct target *t);

/* nostop.c: running threads captured from perf samples, never stopped. */
/* Chooses the capture (target__new); notes a fall-back to ptrace. */
void target_nostop_init(struct target *t);
/* Whether TH's running captures come from perf samples (perf capture, and
 * its process has no runtime reader or probe that needs a stop). */
int target_nostop(const struct target *t, const struct thread *th);
/* At TH's visit in a tick: its stream drained, ticks it owes counted by
 * the first sample after them. */
void target_nostop_look(struct target *t, struct thread *th);
/* TH is new (born during the run): its stream is opened now. */
void target_nostop_born(struct target *t, struct thread *th);
/* TH was found on a CPU: a capture from its sample of this tick, or the
 * tick owed to its next one.  0, or -1 if it has no stream (stop it). */
int target_nostop_running(struct target *t, struct thread *th);
/* C, a blocked capture of TH, needs registers /proc does not give: the
 * thread's fresh sample if it is preempted (not in a call), else C again
 * marked no_stop (counted as the partial stack it unwinds to). */
void target_nostop_need_regs(struct target *t, struct thread *th, const struct capture *c);
/* TH's owed ticks: counted by capture C (not a perf one) taken of it now. */
void target_nostop_settle(struct target *t, struct thread *th, struct capture *c);
/* TH exec'd (its samples are of the old image) or is gone. */
void target_nostop_exec(struct target *t, struct thread *th);
void target_nostop_gone(struct target *t, struct thread *th);
/* The run ends: owed ticks get a last chance, else are lost. */
void target_nostop_release(struct target *t);

/* seize.c */
int seize_thread(pid_t tid, int children);
/* Seizes every thread of P that is not in the table yet. */
int seize_threads(struct target *t, struct process *p);
/* With subprocesses: seizes P's descendants that exist now. */
void seize_descendants(struct target *t, struct process *p);

#endif
