/* Private to attach/: the tables target.c (the event machine and the
 * sampling) and seize.c (checks, attach, launch) share. */
#ifndef CPROF_ATTACH_INTERNAL_H
#define CPROF_ATTACH_INTERNAL_H

#include "attach/target.h"
#include "util/hist.h"

#define TARGET_STACK_COPY_MIN (32 * 1024)
#define TARGET_STACK_COPY_MAX (1024 * 1024)
#define TARGET_RED_ZONE 128             /* below SP, a leaf's scratch space */
#define TARGET_PTRACE_OPTIONS (PTRACE_O_TRACECLONE | PTRACE_O_TRACEEXEC)
#define TARGET_PTRACE_CHILDREN (PTRACE_O_TRACEFORK | PTRACE_O_TRACEVFORK)

struct process {
	pid_t pid;
	uint32_t space;                 /* see capture.space */
	char comm[16];
	struct process *next;
};

struct thread {
	pid_t tid;
	struct process *proc;           /* NULL: not ours, detach at its first stop */
	uint32_t slot;
	int pending;                    /* interrupted, not yet captured */
	uint32_t pending_ticks;         /* ticks since it was interrupted, this one included */
	int group_stopped;              /* in group-stop, restarted with LISTEN */
	size_t stack_size;
	uint64_t interrupt_ns;
	uint64_t name_read_ns;
	unsigned name_reads;
	int sys_fd, sched_fd, stat_fd;  /* /proc/PID/task/TID/{syscall,schedstat,stat}, or -1 */
	uint64_t cpu_ns;                /* its CPU time (schedstat) at its last capture */
	char stop_state;                /* the state its stop-capture reports */
	int selected;                   /* sampled (see target_config) */
	int pooled;                     /* shares its name's slot (MAX_THREAD_SLOTS) */
	char name[16];
	struct thread *next;            /* hash chain */
};

struct slot_info {
	pid_t pid, tid;
	char process[16];
	char thread[16];
};

struct target {
	struct target_config cfg;
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
	struct thread **visit;          /* this tick's threads */
	size_t nvisit, visit_cap, visit_i;
	struct thread **stoplist;       /* threads to interrupt this tick */
	size_t nstop, stoplist_cap;
	char **notes;
	size_t nnotes, notes_taken;
	struct target_stats stats;
	struct hist pause;              /* stop requested -> resumed, us */
};

/* tables.c */
struct thread *target_thread_find(struct target *t, pid_t tid);
struct thread *target_thread_add(struct target *t, struct process *p, pid_t tid);
void target_thread_remove(struct target *t, pid_t tid);
struct process *target_process_add(struct target *t, pid_t pid, uint32_t space);
struct process *target_process_find(struct target *t, pid_t pid);
void target_process_remove(struct target *t, struct process *p);
/* A label of its own for TH (a new thread, or one whose process exec'd). */
void target_give_slot(struct target *t, struct thread *th);
/* TH's names changed (or were read for the first time): its label follows. */
void target_name_changed(struct target *t, struct thread *th);
void target_refresh_names(struct target *t);
int target_filtered(const struct target *t);
int target_wanted(const struct target *t, pid_t tid, const char *name);
uint64_t target_read_cpu_ns(struct thread *th);
void target_note(struct target *t, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

#define FOR_EACH_THREAD(t, th, tmp)                                      \
	for (size_t bi_ = 0; bi_ < (t)->nbuckets; bi_++)                 \
		for (struct thread *th = (t)->buckets[bi_], *tmp;        \
		     th && ((tmp = th->next), 1); th = tmp)

/* blocked.c: TH sampled without a stop, or NULL (it runs, or moved). */
const struct capture *target_sample_blocked(struct target *t, struct thread *th);
/* The caller took the last blocked capture as it was. */
void target_blocked_taken(struct target *t);

/* seize.c */
int seize_thread(pid_t tid, int children);
/* Seizes every thread of P that is not in the table yet. */
int seize_threads(struct target *t, struct process *p);
/* With subprocesses: seizes P's descendants that exist now. */
void seize_descendants(struct target *t, struct process *p);

#endif
