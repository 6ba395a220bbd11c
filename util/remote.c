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
