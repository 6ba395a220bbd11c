/* seize: the checks before attaching, their messages, attaching to a
 * process (its threads, and with subprocesses its descendants) and
 * launching a command. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ptrace.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include "attach/internal.h"
#include "attach/proc.h"
#include "util/xalloc.h"

int seize_thread(pid_t tid, int children)
{
	long opts = TARGET_PTRACE_OPTIONS | (children ? TARGET_PTRACE_CHILDREN : 0);
	return ptrace(PTRACE_SEIZE, tid, 0, (void *)opts) == 0 ? 0 : -errno;
}

static int check_pid(pid_t pid, char *err, size_t errlen)
{
	struct proc_stat st;
	if (pid == getpid() || pid == getppid()) {
		snprintf(err, errlen, "refusing to profile %s (PID %d)",
			 pid == getpid() ? "ourselves" : "our own parent", pid);
		return -EINVAL;
	}
	/* Every process of the machine depends on its init; a profiler bug
	 * there would hang all of them, not one service.  A container's init
	 * is PID 1 only inside the container: that one may be profiled. */
	if (pid == 1 && proc__in_initial_pid_ns()) {
		snprintf(err, errlen, "refusing to profile PID 1, the system's init: every process "
			 "depends on it (a container's PID 1 can be profiled, from inside the "
			 "container or by its PID on the host)");
		return -EINVAL;
	}
	int r = proc__stat(pid, &st);
	if (r == -ENOENT) {
		snprintf(err, errlen, "no such process: %d", pid);
		return -ESRCH;
	}
	if (r < 0) {
		snprintf(err, errlen, "cannot read /proc/%d/stat: %s", pid, strerror(-r));
		return r;
	}
	if (st.flags & PROC_PF_KTHREAD) {
		snprintf(err, errlen, "PID %d is a kernel thread: it has no user stack to sample", pid);
		return -EINVAL;
	}
	if (st.state == 'Z' || st.state == 'X') {
		/* The leader of a thread group shows as a zombie from its exit
		 * (pthread_exit in main) until its last thread ends, and ptrace
		 * cannot seize an exited thread. */
		long threads = proc__status_field(pid, "Threads");
		if (threads > 1) {
			snprintf(err, errlen, "PID %d's main thread has exited and its other %ld "
				 "threads run on: such a process cannot be profiled (ptrace cannot "
				 "seize its exited main thread)", pid, threads - 1);
			return -EINVAL;
		}
		snprintf(err, errlen, "PID %d is a zombie: it has exited and has nothing left to sample", pid);
		return -ESRCH;
	}
	return 0;
}

/* "traced by PID N (COMM)" for a process another tracer has, or "".
 * TracerPid is the tracing thread: N is its process (another cprof-attach
 * traces from a thread of its own), and when that is a cprof-attach, how
 * to see what it sees. */
static void tracer_text(pid_t pid, char *buf, size_t size)
{
	long tracer = proc__status_field(pid, "TracerPid");
	char comm[16] = "?";
	buf[0] = '\0';
	if (tracer <= 0)
		return;
	long tgid = proc__status_field((pid_t)tracer, "Tgid");
	if (tgid > 0)
		tracer = tgid;
	proc__comm((pid_t)tracer, (pid_t)tracer, comm);
	snprintf(buf, size, "already traced by PID %ld (%s)", tracer, comm);
	if (!strcmp(comm, "cprof-attach"))
		snprintf(buf + strlen(buf), size - strlen(buf), " (its profile: from its --listen "
			 "address if it has one, /debug/fgprof?last=N, /debug/pprof/goroutine?debug=2; or "
			 "kill -USR1 %ld if it keeps --history)", tracer);
}

/* Turns a failed PTRACE_SEIZE of the leader into a reason a user can act on. */
static void explain_seize_error(pid_t pid, int e, char *err, size_t errlen)
{
	char traced[320];
	if (e == ESRCH) {
		snprintf(err, errlen, "no such process: %d", pid);
		return;
	}
	if (e != EPERM) {
		snprintf(err, errlen, "cannot attach to PID %d: %s", pid, strerror(e));
		return;
	}
	tracer_text(pid, traced, sizeof(traced));
	if (traced[0]) {
		snprintf(err, errlen, "cannot attach to PID %d: it is %s; only one tracer at a time",
			 pid, traced);
		return;
	}
	long uid = proc__status_field(pid, "Uid");
	if (geteuid() != 0 && uid >= 0 && (uid_t)uid != geteuid()) {
		snprintf(err, errlen, "cannot attach to PID %d: permission denied (it runs as uid %ld, "
			 "we are uid %d; run as root or as the same user)", pid, uid, (int)geteuid());
		return;
	}
	int scope = proc__ptrace_scope();
	if (scope > 0 && geteuid() != 0) {
		snprintf(err, errlen, "cannot attach to PID %d: permission denied by "
			 "kernel.yama.ptrace_scope=%d (run as root, or set it to 0)", pid, scope);
		return;
	}
	snprintf(err, errlen, "cannot attach to PID %d: permission denied (needs CAP_SYS_PTRACE; "
		 "the process may be set-uid or non-dumpable)", pid);
}

/* Has thread TID exited, or begun to (PF_EXITING)? */
static int thread_exiting(pid_t tid)
{
	struct proc_stat st;
	return proc__stat(tid, &st) < 0 || st.state == 'Z' || st.state == 'X' ||
	       (st.flags & PROC_PF_EXITING);
}

/* Seizes every thread in /proc/PID/task, re-reading the list until a pass
 * finds no new thread (threads started by not-yet-seized threads during
 * the walk).  A thread started by a seized one is seized by the kernel
 * (TRACECLONE), so our own SEIZE of it fails with EPERM: that is fine (its
 * TracerPid is then this thread, the tracer).  A thread that is exiting
 * also gives EPERM, and is skipped. */
int seize_threads(struct target *t, struct process *p)
{
	char dn[64];
	snprintf(dn, sizeof(dn), "/proc/%d/task", p->pid);
	for (int added = 1; added;) {
		added = 0;
		DIR *d = opendir(dn);
		if (!d)
			return -errno;
		struct dirent *de;
		while ((de = readdir(d))) {
			pid_t tid = (pid_t)atoi(de->d_name);
			struct proc_stat st;
			if (tid <= 0 || target_thread_find(t, tid))
				continue;
			if (proc__stat(tid, &st) == 0 && (st.state == 'Z' || st.state == 'X'))
				continue;       /* an exited thread (e.g. after pthread_exit in main) */
			int r = seize_thread(tid, t->cfg.subprocesses);
			if (r == -ESRCH || (r < 0 && thread_exiting(tid)))
				continue;       /* gone, or going: SEIZE refuses those with EPERM */
			if (r < 0 && proc__status_field(tid, "TracerPid") != gettid()) {
				closedir(d);
				return r;
			}
			target_thread_add(t, p, tid);
			added = 1;
		}
		closedir(d);
	}
	return 0;
}

/* Adds PID (leader already seized) with all its threads. */
static int attach_process(struct target *t, pid_t pid, char *err, size_t errlen)
{
	struct process *p = target_process_add(t, pid, t->next_space++);
	target_thread_add(t, p, pid);
	int r = seize_threads(t, p);
	if (r < 0)
		snprintf(err, errlen, "cannot attach to every thread of PID %d: %s", pid, strerror(-r));
	return r;
}

/* The children of PID, from every /proc/N/stat's parent field (the
 * kernel's /proc/PID/task/TID/children is not always built in). */
static size_t children_of(pid_t pid, pid_t **out)
{
	size_t n = 0, cap = 0;
	*out = NULL;
	DIR *d = opendir("/proc");
	struct dirent *de;
	while (d && (de = readdir(d))) {
		pid_t c = (pid_t)atoi(de->d_name);
		struct proc_stat st;
		if (c <= 0 || proc__stat(c, &st) < 0 || st.ppid != pid)
			continue;
		if (n == cap) {
			cap = cap ? cap * 2 : 16;
			*out = xrealloc(*out, cap * sizeof(**out));
		}
		(*out)[n++] = c;
	}
	if (d)
		closedir(d);
	return n;
}

/* Seizes the process tree below P as it is now: each child, then its
 * children.  A child another tracer holds is left alone, with a note; one
 * that exits meanwhile is simply gone.  Existing children get address
 * spaces of their own: they may have exec'd since they were forked. */
void seize_descendants(struct target *t, struct process *p)
{
	pid_t *kids;
	size_t n = children_of(p->pid, &kids);
	for (size_t i = 0; i < n; i++) {
		char err[256], traced[320];
		if (target_process_find(t, kids[i]))
			continue;
		int r = seize_thread(kids[i], 1);
		if (r < 0) {
			tracer_text(kids[i], traced, sizeof(traced));
			if (traced[0]) {
				t->stats.skipped++;
				target_note(t, "PID %d (a child of %d) is %s: left alone", kids[i],
					    p->pid, traced);
			}
			continue;
		}
		if (attach_process(t, kids[i], err, sizeof(err)) == 0)
			seize_descendants(t, target_process_find(t, kids[i]));
	}
	free(kids);
}

/* --capture perf where perf events are not permitted: said before
 * anything is touched. */
static int check_capture(const struct target *t, char *err, size_t errlen)
{
	if (t->cfg.capture != TARGET_CAPTURE_PERF || t->capture == TARGET_CAPTURE_PERF)
		return 0;
	char why[200];
	snprintf(err, errlen, "cannot capture by perf events (%s): use --capture ptrace, or leave "
		 "--capture out to fall back to it", proc__perf_refusal(t->perf_refused, why, sizeof(why)));
	return -t->perf_refused;
}

int target__attach(struct target *t, pid_t pid, char *err, size_t errlen)
{
	int r = check_capture(t, err, errlen);
	if (r < 0)
		return r;
	r = check_pid(pid, err, errlen);
	if (r < 0)
		return r;
	r = seize_thread(pid, t->cfg.subprocesses);
	if (r < 0) {
		explain_seize_error(pid, -r, err, errlen);
		return r;
	}
	if (!t->first_pid)
		t->first_pid = pid;
	t->ready = 1;
	/* The threads seized before a failure go when the tracer exits. */
	r = attach_process(t, pid, err, errlen);
	if (r == 0 && t->cfg.subprocesses)
		seize_descendants(t, target_process_find(t, pid));
	return r;
}

/* In the child, before exec: what the command would have had without us.
 * An ignored signal stays ignored across exec, and the profiler ignores
 * SIGPIPE, SIGTTIN and SIGTTOU (cli/); the tracer thread may run at a raised priority
 * (sample/sampler.c), and it blocks the signals it reads from a signalfd. */
static void reset_child(const sigset_t *mask, int nice_value)
{
	signal(SIGPIPE, SIG_DFL);
	signal(SIGTTIN, SIG_DFL);
	signal(SIGTTOU, SIG_DFL);
	pthread_sigmask(SIG_SETMASK, mask, NULL);
	setpriority(PRIO_PROCESS, 0, nice_value);
}

int target__launch(struct target *t, char *const argv[], const sigset_t *child_mask,
		   char *err, size_t errlen)
{
	int go[2], report[2];
	int nice_value = getpriority(PRIO_PROCESS, 0);
	int r0 = check_capture(t, err, errlen);
	if (r0 < 0)
		return r0;
	if (pipe2(go, O_CLOEXEC) < 0 || pipe2(report, O_CLOEXEC) < 0) {
		snprintf(err, errlen, "pipe: %s", strerror(errno));
		return -errno;
	}
	pid_t pid = fork();
	if (pid < 0) {
		snprintf(err, errlen, "fork: %s", strerror(errno));
		return -errno;
	}
	if (pid == 0) {
		char c;
		close(go[1]);
		close(report[0]);
		while (read(go[0], &c, 1) < 0 && errno == EINTR)
			;
		reset_child(child_mask, nice_value);
		execvp(argv[0], argv);
		int e = errno;
		if (write(report[1], &e, sizeof(e)) < 0)
			_exit(127);
		_exit(127);
	}
	close(go[0]);
	close(report[1]);
	int r = seize_thread(pid, t->cfg.subprocesses);
	close(go[1]);                   /* the child may exec now */
	int child_errno = 0;
	ssize_t n;
	while ((n = read(report[0], &child_errno, sizeof(child_errno))) < 0 && errno == EINTR)
		;
	close(report[0]);
	if (r < 0 || n > 0) {
		/* The child ends with 127; reap it (and any ptrace stop it makes). */
		int st;
		while (waitpid(pid, &st, __WALL) == pid && !WIFEXITED(st) && !WIFSIGNALED(st))
			ptrace(PTRACE_CONT, pid, 0, 0);
		if (n > 0)
			snprintf(err, errlen, "cannot run '%s': %s", argv[0], strerror(child_errno));
		else
			snprintf(err, errlen, "cannot trace the child: %s", strerror(-r));
		return n > 0 ? -child_errno : r;
	}
	t->launched = 1;
	t->first_pid = pid;
	target_thread_add(t, target_process_add(t, pid, t->next_space++), pid);
	return 0;
}
