/* unitsandbox: runs a command under the seccomp side of a systemd unit's
 * sandbox, as systemd would install it, for tests/t_install.sh to run the
 * unit's profiler where PID 1 is not systemd.
 *     unitsandbox READY ALLOWED FAMILIES COMMAND [ARGS...]
 * ALLOWED: a file of system call names, one a line (SystemCallFilter=,
 * its groups expanded by `systemd-analyze syscall-filter`): any other
 * fails with EPERM (SystemCallErrorNumber=EPERM).  FAMILIES: the socket
 * families allowed, numbers separated by commas (RestrictAddressFamilies=):
 * socket() of another fails with EAFNOSUPPORT.  Always, as the unit sets
 * them: MemoryDenyWriteExecute= (mmap writable and executable, mprotect
 * or pkey_mprotect to executable: EPERM), RestrictNamespaces=yes
 * (unshare, setns and clone with a CLONE_NEW* flag: EPERM; clone3, whose
 * flags a filter cannot read: ENOSYS, as systemd does, so that glibc
 * falls back to clone), SystemCallArchitectures=native (libseccomp's
 * default: the native architecture only) and NoNewPrivileges=yes.
 * READY is not written (the targets' calling convention). */
#define _GNU_SOURCE
#include <errno.h>
#include <sched.h>
#include <seccomp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

int main(int argc, char **argv)
{
	if (argc < 5) {
		fprintf(stderr, "usage: unitsandbox READY ALLOWED FAMILIES COMMAND [ARGS...]\n");
		return 2;
	}
	scmp_filter_ctx allow = seccomp_init(SCMP_ACT_ERRNO(EPERM));
	scmp_filter_ctx deny = seccomp_init(SCMP_ACT_ALLOW);
	FILE *f = fopen(argv[2], "re");
	if (!allow || !deny || !f) {
		fprintf(stderr, "unitsandbox: cannot read %s or set up libseccomp\n", argv[2]);
		return 2;
	}
	char name[128];
	int n = 0, e = 0;
	while (fscanf(f, "%127s", name) == 1) {
		int nr = seccomp_syscall_resolve_name(name);
		if (nr != __NR_SCMP_ERROR && seccomp_rule_add(allow, SCMP_ACT_ALLOW, nr, 0) == 0)
			n++;    /* (names of other architectures are not resolved) */
	}
	fclose(f);
	/* socket(FAMILY): the families not listed, up to AF_MAX (46) and past it */
	int ok[64] = { 0 };
	for (char *p = argv[3]; *p; ) {
		long v = strtol(p, &p, 10);
		if (v >= 0 && v < 64)
			ok[v] = 1;
		if (*p == ',')
			p++;
		else if (*p)
			break;
	}
	for (int fam = 0; fam < 64; fam++)
		if (!ok[fam])
			e |= seccomp_rule_add(deny, SCMP_ACT_ERRNO(EAFNOSUPPORT), SCMP_SYS(socket), 1,
					      SCMP_A0(SCMP_CMP_EQ, (scmp_datum_t)fam));
	e |= seccomp_rule_add(deny, SCMP_ACT_ERRNO(EAFNOSUPPORT), SCMP_SYS(socket), 1,
			      SCMP_A0(SCMP_CMP_GE, 64));
	/* MemoryDenyWriteExecute= */
	e |= seccomp_rule_add(deny, SCMP_ACT_ERRNO(EPERM), SCMP_SYS(mmap), 1,
			      SCMP_A2(SCMP_CMP_MASKED_EQ, PROT_EXEC | PROT_WRITE, PROT_EXEC | PROT_WRITE));
	e |= seccomp_rule_add(deny, SCMP_ACT_ERRNO(EPERM), SCMP_SYS(mprotect), 1,
			      SCMP_A2(SCMP_CMP_MASKED_EQ, PROT_EXEC, PROT_EXEC));
	e |= seccomp_rule_add(deny, SCMP_ACT_ERRNO(EPERM), SCMP_SYS(pkey_mprotect), 1,
			      SCMP_A2(SCMP_CMP_MASKED_EQ, PROT_EXEC, PROT_EXEC));
	/* RestrictNamespaces=yes */
	e |= seccomp_rule_add(deny, SCMP_ACT_ERRNO(EPERM), SCMP_SYS(unshare), 0);
	e |= seccomp_rule_add(deny, SCMP_ACT_ERRNO(EPERM), SCMP_SYS(setns), 0);
	e |= seccomp_rule_add(deny, SCMP_ACT_ERRNO(ENOSYS), SCMP_SYS(clone3), 0);
	static const unsigned long ns[] = { CLONE_NEWNS, CLONE_NEWUTS, CLONE_NEWIPC, CLONE_NEWUSER,
					    CLONE_NEWPID, CLONE_NEWNET, CLONE_NEWCGROUP };
	for (size_t i = 0; i < sizeof(ns) / sizeof(ns[0]); i++)
		e |= seccomp_rule_add(deny, SCMP_ACT_ERRNO(EPERM), SCMP_SYS(clone), 1,
				      SCMP_A0(SCMP_CMP_MASKED_EQ, ns[i], ns[i]));
	/* the deny filter first: the allow list may refuse seccomp() itself */
	if (e || seccomp_load(deny) < 0 || seccomp_load(allow) < 0) {
		fprintf(stderr, "unitsandbox: cannot install the filters\n");
		return 2;
	}
	fprintf(stderr, "unitsandbox: %d system calls allowed\n", n);
	execvp(argv[4], argv + 4);
	fprintf(stderr, "unitsandbox: cannot run %s: %s\n", argv[4], strerror(errno));
	return 127;
}
