/* remote: reading another process's memory while it runs. */
#ifndef CPROF_UTIL_REMOTE_H
#define CPROF_UTIL_REMOTE_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

/* Copies LEN bytes at ADDR in process PID into BUF (process_vm_readv: no
 * stop, the same permission as ptrace).  Returns 0, -errno, or -EFAULT if
 * only part of the range could be read (a page unmapped meanwhile). */
int remote__read(pid_t pid, uint64_t addr, void *buf, size_t len);

#endif
