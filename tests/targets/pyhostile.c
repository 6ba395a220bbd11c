/* A hostile CPython (issue 40, item 3): a process that exports
 * _PyRuntime, _PyEval_EvalFrameDefault, PyCode_Type and Py_Version as
 * CPython 3.11 does, and lays out in its own memory, with python/layout.c's
 * offsets, an interpreter made to cost its reader as much as it can:
 * THREADS real threads (blocked in read()), each a thread state whose
 * chain is FRAMES frames long, every frame a code object of its own (a
 * name of its own), every code object's line table the largest the reader
 * takes (PY_MAX_TABLE) and each code object claiming more code than its
 * table covers.  Built as tests/bin/python3.11-hostile (the reader finds
 * CPython by a module named python3.N).
 *     python3.11-hostile READY [THREADS [FRAMES]]      (default 4, 1024)
 * Writes READY once every thread state is laid out, then runs until killed. */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "python/interp.h"
#include "python/layout.h"
#include "tests/targets/ready.h"

__attribute__((aligned(64), used)) unsigned char _PyRuntime[1 << 16];
__attribute__((aligned(64), used)) unsigned char PyCode_Type[1024];
__attribute__((used)) const uint32_t Py_Version = 0x030b07f0;

__attribute__((noinline, used)) int _PyEval_EvalFrameDefault(volatile int *x)
{
	int s = 0;
	for (int i = 0; i < *x; i++)
		s += i * *x;
	return s;
}

static const struct py_layout *L;
static int pipes[2];
static atomic_int started;

static void put(void *b, uint64_t off, uint64_t v, size_t width)
{
	memcpy((unsigned char *)b + off, &v, width);
}

static uint64_t addr(const void *p)
{
	return (uint64_t)(uintptr_t)p;
}

static uint64_t ascii(const char *s)
{
	size_t n = strlen(s);
	unsigned char *a = calloc(1, L->str_ascii_size + n + 1);
	put(a, L->str_length, n, 8);
	put(a, L->str_state, 1 << 2 | 1 << 5 | 1 << 6, 4);
	memcpy(a + L->str_ascii_size, s, n);
	return addr(a);
}

struct thr {
	pid_t tid;
	pthread_t self;
};

static void *blocked(void *arg)
{
	struct thr *t = arg;
	t->tid = (pid_t)syscall(SYS_gettid);
	t->self = pthread_self();
	atomic_fetch_add(&started, 1);
	char c;
	for (;;)
		if (read(pipes[0], &c, 1) <= 0)
			pause();
	return NULL;
}

int main(int argc, char **argv)
{
	const char *ready = ready_path(argc, argv);
	int nthreads = argc > 2 ? atoi(argv[2]) : 4, nframes = argc > 3 ? atoi(argv[3]) : 1024;
	L = py_layout__of(11);
	if (!L || pipe(pipes) < 0)
		return 1;
	/* one line table for all: the largest the reader takes, valid
	 * (3.11's location entries, 4 code units, no line change) */
	size_t tlen = PY_MAX_TABLE;
	unsigned char *table = calloc(1, L->bytes_sval + tlen + 1);
	put(table, L->bytes_size, tlen, 8);
	for (size_t i = 0; i < tlen; i += 2)
		table[L->bytes_sval + i] = 0xeb;
	uint64_t file = ascii("<hostile>");
	struct thr *th = calloc((size_t)nthreads, sizeof(*th));
	for (int i = 0; i < nthreads; i++) {
		pthread_t p;
		pthread_create(&p, NULL, blocked, &th[i]);
	}
	ready_wait_started(&started, nthreads);
	unsigned char *interp = calloc(1, 1 << 16);
	put(_PyRuntime, L->rt_interp_head, addr(interp), 8);
	uint64_t next = 0;
	int k = 0;
	for (int t = nthreads - 1; t >= 0; t--) {
		uint64_t prev = 0;
		for (int f = 0; f < nframes; f++, k++) {
			uint64_t units = 1u << 20;      /* more code than its table says */
			unsigned char *co = calloc(1, L->co_code_adaptive + 64);
			char name[32];
			snprintf(name, sizeof(name), "hostile_%d", k);
			put(co, 8, addr(PyCode_Type), 8);
			put(co, 16, units, 8);
			put(co, L->co_filename, file, 8);
			uint64_t nm = ascii(name);
			put(co, L->co_name, nm, 8);
			put(co, L->co_qualname, nm, 8);
			put(co, L->co_firstlineno, 1, 4);
			put(co, L->co_linetable, addr(table), 8);
			unsigned char *fr = calloc(1, L->f_size);
			put(fr, L->f_previous, prev, 8);
			put(fr, L->f_code, addr(co), 8);
			/* far into its code: the table is read to its end */
			put(fr, L->f_instr, addr(co) + L->co_code_adaptive + 2 * (units - 2), 8);
			fr[L->f_is_entry] = f == 0;
			prev = addr(fr);
		}
		unsigned char *ts = calloc(1, L->ts_size + 64);
		unsigned char *cf = calloc(1, L->cf_current + 8);
		put(cf, L->cf_current, prev, 8);
		put(ts, L->ts_next, next, 8);
		put(ts, L->ts_interp, addr(interp), 8);
		put(ts, L->ts_frame, addr(cf), 8);
		put(ts, L->ts_thread_id, (uint64_t)th[t].self, 8);
		put(ts, L->ts_native_id, (uint64_t)th[t].tid, 4);
		next = addr(ts);
	}
	put(interp, L->is_threads_head, next, 8);
	ready_announce(ready);
	volatile int x = 100000;       /* about a tenth of a core: it runs */
	for (;;) {
		_PyEval_EvalFrameDefault(&x);
		usleep(1000);
	}
}
