/* syscaller READY: one thread (main) that never blocks but spends most of
 * its time in the kernel: open, 50 preads and close of /proc/self/status,
 * for ever.  Its kernel frames can come only from samples taken while it
 * runs (tests/t_kstacks.sh). */
#define _GNU_SOURCE
#include <fcntl.h>
#include "ready.h"

__attribute__((noinline)) static void read_status(void)
{
	char buf[4096];
	int fd = open("/proc/self/status", O_RDONLY | O_CLOEXEC);

	for (int i = 0; i < 50; i++)
		if (pread(fd, buf, sizeof(buf), 0) < 0)
			break;
	close(fd);
}

int main(int argc, char **argv)
{
	const char *ready = ready_path(argc, argv);

	read_status();
	ready_announce(ready);
	for (;;)
		read_status();
}
