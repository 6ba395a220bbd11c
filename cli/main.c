/* cprof-attach: a wall-clock sampling profiler for running Linux processes. */
#include <error.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "cli/options.h"
#include "dwarf/debuginfod.h"
#include "run/dump.h"
#include "run/run.h"

/* A set-uid or set-gid copy would let anyone run commands (-- COMMAND)
 * and read any process's memory with its owner's rights.  Tracing rights
 * are granted otherwise (see README, Permissions). */
static int refuse_setuid(void)
{
	uid_t ruid, euid, suid;
	gid_t rgid, egid, sgid;
	if (getresuid(&ruid, &euid, &suid) == 0 && getresgid(&rgid, &egid, &sgid) == 0 &&
	    ruid == euid && euid == suid && rgid == egid && egid == sgid)
		return 0;
	fprintf(stderr, "cprof-attach: error: refusing to run set-uid or set-gid (uid %d, effective "
		"%d): grant CAP_SYS_PTRACE or set kernel.yama.ptrace_scope instead (see the README)\n",
		(int)getuid(), (int)geteuid());
	return -1;
}

/* A library that crashes where it ran out of memory (libdw does, naming
 * under `ulimit -v`; glibc aborts with "Unexpected error.") would leave a
 * bare "Segmentation fault": our line instead (after the library's own, if
 * it printed one), and an exit below 128.  Whatever was being sampled is detached
 * by the kernel as the process ends (no thread is left stopped: see
 * docs/safety.md, "Detached at the end"), and an output file is replaced only once complete,
 * so it is as it was.  Not under the sanitizers, whose own reports are
 * the point. */
/* Libraries that give up with error(3) (libdw on ENOMEM: "libdw: Cannot
 * allocate memory") speak as we do: "cprof-attach: error: ...". */
static void progname(void)
{
	fflush(stdout);
	fputs("cprof-attach: error: ", stderr);
}

#if !defined(__SANITIZE_ADDRESS__) && !defined(__SANITIZE_UNDEFINED__)
static void on_crash(int sig)
{
	static const char msg[] = "cprof-attach: error: crashed (a fault in the profiler or a "
				  "library: out of memory? ulimit -v?); the target is left running and "
				  "untraced, the output file as it was\n";
	ssize_t w = write(STDERR_FILENO, msg, sizeof(msg) - 1);
	(void)w;
	_exit(sig == SIGSEGV ? 70 : sig == SIGBUS ? 71 : 72);
}

static void catch_crashes(void)
{
	static char alt[16384];
	stack_t ss = { .ss_sp = alt, .ss_size = sizeof(alt) };
	sigaltstack(&ss, NULL);
	struct sigaction sa;
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_crash;
	sa.sa_flags = SA_ONSTACK | SA_RESETHAND;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGSEGV, &sa, NULL);
	sigaction(SIGBUS, &sa, NULL);
	sigaction(SIGABRT, &sa, NULL);  /* glibc's own "Unexpected error." */
}
#else
static void catch_crashes(void)
{
}
#endif

int main(int argc, char **argv)
{
	struct options o;
	char err[512];
	if (refuse_setuid() < 0)
		return 1;
	catch_crashes();
	error_print_progname = progname;
	if (options__parse(&o, argc, argv, err, sizeof(err)) < 0) {
		fprintf(stderr, "cprof-attach: error: %s\n", err);
		return 2;
	}
	if (o.help) {
		fputs(options__usage, stdout);
		return 0;
	}
	if (o.version) {
		printf("cprof-attach %s\n", CPROF_VERSION);
		return 0;
	}
	for (size_t i = 0; i < o.nwarnings; i++)
		fprintf(stderr, "cprof-attach: warning: %s\n", o.warnings[i]);
	if (o.kernel_stacks && geteuid() != 0)
		fprintf(stderr, "cprof-attach: warning: --kernel-stacks needs root "
			"(/proc/PID/task/TID/stack): the profile will have no kernel frames\n");
	if (o.debuginfod_deadline > 0)
		debuginfod__set_deadline(o.debuginfod_deadline);
	int code = o.convert ? run__convert(&o) : o.dump ? dump__run(&o) :
		   run__profile(&o, argc, argv);
	options__free(&o);
	return code;
}
