/* swapper READY LIBA LIBB: a library unloaded and another loaded at the
 * same address (issue 17, item 10).
 *
 * dlopen()s LIBA and calls its inner_A in a loop; on SIGUSR1 dlclose()s it,
 * dlopen()s LIBB (the same size, so the loader puts it where LIBA was) and
 * calls inner_B from then on.  READY is written once LIBA runs; READY.B
 * once LIBB runs, with both load addresses: "A 0x... B 0x...". */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <link.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdint.h>
#include "ready.h"

static atomic_int swap_asked;

static void on_usr1(int sig)
{
	swap_asked = 1;
}

static uintptr_t base_of(void *h)
{
	struct link_map *lm;
	return dlinfo(h, RTLD_DI_LINKMAP, &lm) == 0 ? (uintptr_t)lm->l_addr : 0;
}

int main(int argc, char **argv)
{
	const char *ready = ready_path(argc, argv);
	if (argc < 4)
		return 2;
	signal(SIGUSR1, on_usr1);
	void *h = dlopen(argv[2], RTLD_NOW | RTLD_LOCAL);
	void (*fn)(uint64_t) = h ? (void (*)(uint64_t))dlsym(h, "inner_A") : NULL;
	if (!fn)
		return 99;
	uintptr_t a = base_of(h);
	fn(1000);
	ready_announce(ready);
	while (!swap_asked)
		fn(100000);
	dlclose(h);
	h = dlopen(argv[3], RTLD_NOW | RTLD_LOCAL);
	fn = h ? (void (*)(uint64_t))dlsym(h, "inner_B") : NULL;
	if (!fn)
		return 99;
	char path[4200], tmp[4300];
	snprintf(path, sizeof(path), "%s.B", ready);
	snprintf(tmp, sizeof(tmp), "%s.tmp", path);
	FILE *f = fopen(tmp, "w");
	if (!f)
		return 99;
	fprintf(f, "A 0x%lx B 0x%lx\n", (unsigned long)a, (unsigned long)base_of(h));
	if (fclose(f) != 0 || rename(tmp, path) != 0)
		return 99;
	for (;;)
		fn(100000);
}
