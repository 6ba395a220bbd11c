/* noperf: runs a command where perf_event_open(2) is refused, as a
 * container's seccomp profile refuses it (Docker's default answers EPERM).
 *     noperf READY ERRNO COMMAND [ARGS...]
 * ERRNO is EPERM or EACCES.  Installs a seccomp filter (no new
 * privileges first, so no capability is needed) that makes every
 * perf_event_open of this process and its children fail with ERRNO, then
 * execs COMMAND.  READY is not written (the argument keeps the targets'
 * calling convention); nothing else is changed. */
#define _GNU_SOURCE
#include <errno.h>
#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

int main(int argc, char **argv)
{
	if (argc < 4) {
		fprintf(stderr, "usage: noperf READY EPERM|EACCES COMMAND [ARGS...]\n");
		return 2;
	}
	int e = strcmp(argv[2], "EPERM") == 0 ? EPERM : strcmp(argv[2], "EACCES") == 0 ? EACCES : 0;
	if (!e) {
		fprintf(stderr, "noperf: ERRNO must be EPERM or EACCES, not '%s'\n", argv[2]);
		return 2;
	}
	struct sock_filter f[] = {
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, arch)),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, AUDIT_ARCH_X86_64, 1, 0),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_perf_event_open, 0, 1),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | (unsigned)e),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
	};
	struct sock_fprog prog = { sizeof(f) / sizeof(f[0]), f };
	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0 ||
	    syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, 0, &prog) < 0) {
		fprintf(stderr, "noperf: cannot install the seccomp filter: %s\n", strerror(errno));
		return 2;
	}
	execvp(argv[3], argv + 3);
	fprintf(stderr, "noperf: cannot run %s: %s\n", argv[3], strerror(errno));
	return 127;
}
