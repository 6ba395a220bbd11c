#include "util/syscalls.h"

#include <seccomp.h>
#include <stdio.h>
#include <stdlib.h>

#include "util/xalloc.h"

#define CACHED 1024

const char *syscalls__name(int nr)
{
	static char *names[CACHED];
	char *n;
	if (nr >= 0 && nr < CACHED && names[nr])
		return names[nr];
	n = seccomp_syscall_resolve_num_arch(SCMP_ARCH_NATIVE, nr);
	if (!n) {
		n = xmalloc(32);
		snprintf(n, 32, "syscall %d", nr);
	}
	if (nr >= 0 && nr < CACHED)
		names[nr] = n;
	return n;               /* beyond the cache: kept for good, rare */
}
