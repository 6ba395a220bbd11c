/* remote: reading another process's memory while it runs.  Every read of
 * the goroutine reader (goroutine/) goes through here: its fuzzer
 * (tests/fuzz/fuzz_goroutines.c) links its own fake memory in place of
 * this file. */
#ifndef CPROF_UTIL_REMOTE_H
#define CPROF_UTIL_REMOTE_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

/* Copies LEN bytes at ADDR in process PID into BUF (process_vm_readv: no
 * stop, the same permission as ptrace).  Returns 0, -errno, or -EFAULT if
 * only part of the range could be read (a page unmapped meanwhile). */
int remote__read(pid_t pid, uint64_t addr, void *buf, size_t len);

struct iovec;
/* Copies the N ranges REMOTE of process PID into the N buffers LOCAL (each
 * as long as its range), in one process_vm_readv.  Returns the bytes
 * copied, which stop at the first byte that could not be read, or -errno
 * (-EFAULT when not even the first could). */
long remote__readv(pid_t pid, const struct iovec *local, const struct iovec *remote, size_t n);

#endif
