/* cprof-attach: a wall-clock sampling profiler for running Linux processes. */
#include <stdio.h>
#include <unistd.h>

#include "cli/options.h"
#include "dwarf/debuginfod.h"
#include "cli/dump.h"
#include "cli/run.h"

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

int main(int argc, char **argv)
{
	struct options o;
	char err[512];
	if (refuse_setuid() < 0)
		return 1;
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
