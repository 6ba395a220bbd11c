/* proc: the readers of /proc this profiler uses, one parser per file.
 *
 * Every reader takes what it needs and fails with a negative errno
 * (-ENOENT when the process or thread is gone: a normal event). */
#ifndef CPROF_ATTACH_PROC_H
#define CPROF_ATTACH_PROC_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#define PROC_PF_EXITING 0x00000004
#define PROC_PF_KTHREAD 0x00200000

/* /proc/ID/stat (ID a process or a thread). */
struct proc_stat {
	char state;                     /* R, S, D, T, t, Z, X, ... */
	pid_t ppid;
	unsigned long flags;            /* PF_* */
};
int proc__stat(pid_t id, struct proc_stat *st);
/* Process ID's CPU time (user and system), in clock ticks. */
int proc__cpu_ticks(pid_t id, unsigned long long *ticks);
/* The same parse of a stat line already read (for files kept open). */
int proc__parse_stat(const char *buf, struct proc_stat *st);

/* A "Key:\tNUMBER" line of /proc/ID/status ("Tgid", "TracerPid", "Uid",
 * "Threads", ...); -1 when absent or unreadable. */
long proc__status_field(pid_t id, const char *key);

/* /proc/PID/task/TID/comm into NAME (15 characters at most); leaves NAME
 * as it was when it cannot be read.  TID may be PID (the process). */
void proc__comm(pid_t pid, pid_t tid, char name[16]);

/* The title process PID set for itself (setproctitle: "nginx: worker
 * process", "postgres: checkpointer"), as ps shows it, into TITLE (SIZE
 * bytes, cleaned to show): /proc/PID/cmdline's first string when the
 * program wrote one with spaces in place of its arguments, its first word
 * without its directory.  "" when it set none (or cannot be read). */
#define PROC_TITLE_MAX 64
void proc__title(pid_t pid, char *title, size_t size);

/* Reads a small /proc file of PID/task/TID from offset 0 into BUF
 * (NUL-terminated).  *FD is the file kept open from an earlier call, or -1:
 * then it is opened, and kept open in *FD only if its number is below
 * KEEP_BELOW (descriptors above are left for others: see attach/tables.c).
 * Returns the bytes read, or -1 with errno set (EMFILE: out of
 * descriptors; ENOENT or ESRCH: the thread is gone). */
ssize_t proc__task_file(pid_t pid, pid_t tid, const char *name, int *fd, int keep_below,
			char *buf, size_t size);

/* A /proc/PID/task/TID/syscall line: a thread blocked in a system call
 * ends it with its user SP and PC (proc(5)); "running" otherwise.
 * Returns 1 (blocked; SP and PC set), 0 (running), or -1 (malformed). */
int proc__parse_syscall(const char *line, uint64_t *sp, uint64_t *pc);

/* The whole syscall line: the call's number and its six arguments (a
 * thread blocked in one), or -1 for "running" (or a malformed line). */
int proc__parse_syscall_args(const char *line, long *nr, uint64_t args[6]);

/* /proc/ID/task/TID/sched's se.exec_start: when the thread last started
 * running, in ms of the scheduler's clock (compare two of them, never
 * with another clock); -1 when unknown. */
double proc__exec_start_ms(pid_t pid, pid_t tid);

/* The kernel's stack of thread TID blocked in a system call
 * (/proc/PID/task/TID/stack: root only), innermost first: up to MAX
 * function names into NAMES (each cut to 63 bytes).  Returns how many, or
 * -errno. */
int proc__kernel_stack(pid_t pid, pid_t tid, char names[][64], int max);


/* /proc/PID/task/TID/schedstat: CPU time (ns) and times scheduled in. */
int proc__parse_schedstat(const char *buf, uint64_t *cpu_ns, uint64_t *runs);

/* kernel.yama.ptrace_scope, 0 when absent. */
int proc__ptrace_scope(void);
/* The kernel text symbol at ADDR (a kernel call chain's address), from
 * /proc/kallsyms, read on first use.  0, or -ENOENT (not root: the
 * addresses are hidden). */
int proc__kernel_symbol(uint64_t addr, char *name, size_t size);

/* kernel.perf_event_paranoid (2 if it cannot be read). */
int proc__perf_paranoid(void);

/* Why perf_event_open(2) was refused with errno ERR, and what to do,
 * into BUF: a seccomp filter on this process (a container's: Docker's
 * default profile answers EPERM), else perf_event_paranoid and the
 * privilege it asks.  Returns BUF. */
const char *proc__perf_refusal(int err, char *buf, size_t size);

/* Is this process in the host's PID namespace (not in a container's)? */
int proc__in_initial_pid_ns(void);

#endif
