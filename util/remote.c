#include "util/remote.h"

#include <errno.h>
#include <sys/uio.h>

int remote__read(pid_t pid, uint64_t addr, void *buf, size_t len)
{
	struct iovec local = { buf, len }, remote = { (void *)(uintptr_t)addr, len };
	ssize_t n = process_vm_readv(pid, &local, 1, &remote, 1, 0);
	if (n == (ssize_t)len)
		return 0;
	return n < 0 ? -errno : -EFAULT;
}

long remote__readv(pid_t pid, const struct iovec *local, const struct iovec *remote, size_t n)
{
	ssize_t got = process_vm_readv(pid, local, n, remote, n, 0);
	return got < 0 ? -errno : (long)got;
}
