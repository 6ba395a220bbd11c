/* jit: code outside any file, named only by /tmp/perf-PID.map.
 *
 * Copies a spin loop (ending in EB FE: jmp to itself) into two anonymous
 * pages (written, then made executable, as JIT compilers do), writes
 * /tmp/perf-PID.map naming them "jit_spin_loop" and, like node's
 * --perf-basic-prof, a name with spaces "LazyCompile:*hot_loop app.js:12",
 * and runs each in a thread of its own.  The main thread sleeps.
 *   jit-plain  xor ebp,ebp; jmp $        called right from the thread's
 *                                        start function
 *   jit-deep   mov rbp,rdi; jmp $        called 64 KiB down the stack, with
 *              RBP pointing back up there, as a JIT's frame pointer into
 *              the frames of a deep script stack would
 * Neither has unwind info: the profiler must end the stack at the JIT
 * frame, whatever RBP holds.
 * Usage: jit READY_FILE.  The test removes the map file. */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdatomic.h>
#include <alloca.h>
#include <stdint.h>
#include <sys/mman.h>
#include <time.h>
#include "ready.h"

static atomic_int started;

struct region {
	void *code;
	const char *thread;
	size_t depth;                   /* bytes of stack to use up first */
};

static const unsigned char plain_spin[] = { 0x31, 0xed, 0xeb, 0xfe };
static const unsigned char deep_spin[] = { 0x48, 0x89, 0xfd, 0xeb, 0xfe };

__attribute__((noinline)) static void call_deep(void *code, size_t depth)
{
	char *frames = alloca(depth);

	memset(frames, 0, depth);
	((void (*)(void *))code)(frames + depth - 64);  /* never returns */
}

static void *run_jit(void *arg)
{
	struct region *r = arg;

	pthread_setname_np(pthread_self(), r->thread);
	atomic_fetch_add(&started, 1);
	if (r->depth)
		call_deep(r->code, r->depth);
	((void (*)(void *))r->code)(NULL);      /* never returns */
	return NULL;
}

/* A page holding the spin loop, at offset 16 so that the symbol does not
 * start at the page. */
static void *make_code(const unsigned char *spin, size_t len)
{
	long pg = sysconf(_SC_PAGESIZE);
	unsigned char *p = mmap(NULL, (size_t)pg, PROT_READ | PROT_WRITE,
				MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	if (p == MAP_FAILED)
		exit(97);
	memset(p, 0xcc, (size_t)pg);    /* int3 around it */
	memcpy(p + 16, spin, len);
	if (mprotect(p, (size_t)pg, PROT_READ | PROT_EXEC) != 0)
		exit(97);
	return p + 16;
}

int main(int argc, char **argv)
{
	const char *ready = ready_path(argc, argv);
	static struct region regions[2] = { { NULL, "jit-plain", 0 }, { NULL, "jit-deep", 64 << 10 } };
	char map[64];
	pthread_t th[2];
	FILE *f;

	regions[0].code = make_code(plain_spin, sizeof(plain_spin));
	regions[1].code = make_code(deep_spin, sizeof(deep_spin));
	snprintf(map, sizeof(map), "/tmp/perf-%d.map", (int)getpid());
	f = fopen(map, "w");
	if (!f)
		exit(96);
	fprintf(f, "%lx %x jit_spin_loop\n", (unsigned long)(uintptr_t)regions[0].code, 16);
	fprintf(f, "%lx %x LazyCompile:*hot_loop app.js:12\n",
		(unsigned long)(uintptr_t)regions[1].code, 16);
	if (fclose(f) != 0)
		exit(96);
	for (int i = 0; i < 2; i++)
		if (pthread_create(&th[i], NULL, run_jit, &regions[i]))
			return 98;
	ready_wait_started(&started, 2);
	ready_announce(ready);
	for (;;)
		pause();
}
