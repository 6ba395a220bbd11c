/* syscalls: names of this machine's system calls, from libseccomp. */
#ifndef CPROF_UTIL_SYSCALLS_H
#define CPROF_UTIL_SYSCALLS_H

/* The name of system call NR ("epoll_wait"), or "syscall NR" when the
 * library does not know it.  The string lives until the process exits. */
const char *syscalls__name(int nr);

#endif
