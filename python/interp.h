/* interp: a CPython interpreter read from outside its process: where it
 * is (_PyRuntime, a dynamic symbol of the executable or libpython, kept by
 * stripped builds too), its thread states, each thread's frames, and each
 * frame's code object's name, file and line.  Nothing here stops a thread:
 * the caller says when a read is consistent (sample/rt_python.c reads a
 * thread's frames while it is stopped or blocked, names them after).
 *
 * Every read is bounded (threads, frames, string and table lengths) and
 * checked (a code object's type is PyCode_Type), so a corrupt or hostile
 * interpreter state costs a bounded time and gives "[unknown python
 * frame]", never a hang or a crash. */
#ifndef CPROF_PYTHON_INTERP_H
#define CPROF_PYTHON_INTERP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "python/layout.h"

struct modules;
struct py_interp;

/* One frame as read at a capture: its code object, where it is in it
 * (f_lasti before 3.11, else the instruction pointer), and whether the
 * C call into the eval loop that runs it started with it (ENDS: the next
 * frame out belongs to another _PyEval_EvalFrameDefault).  The last frame
 * read always ENDS its call; PY_ENDS_WHOLE there says that the chain
 * ended with it (it is the thread's outermost frame: none was left
 * unread), PY_ENDS_CUT that more were left (PY_MAX_FRAMES read, or a
 * frame that could not be read): the stack is cut there. */
#define PY_ENDS_WHOLE 2
#define PY_ENDS_CUT 3
struct py_frame_raw {
	uint64_t code, instr;
	uint32_t ends;
	uint32_t unused;
};

/* A Python thread: its thread state, its ident (pthread_t: what
 * threading.get_ident() gives) and its OS thread. */
struct py_thread {
	uint64_t tstate, ident;
	pid_t tid;
};

/* How many threads and frames are read at most. */
#define PY_MAX_THREADS 4096
#define PY_MAX_FRAMES 1024
/* What a name or file is cut to, in bytes; a line table read, at most. */
#define PY_MAX_STR 512
#define PY_MAX_TABLE (64u << 10)

/* Reads LEN bytes at ADDR of the process into BUF: 0, or < 0. */
typedef int (*py_read_fn)(void *ctx, uint64_t addr, void *buf, size_t len);

/* The interpreter of process PID, whose modules are MS, or NULL: WHY
 * empty when it runs no CPython, else what is wrong in one line ("Python
 * 3.7 is not supported"). */
struct py_interp *py_interp__new(pid_t pid, const struct modules *ms, char *why, size_t whylen);
void py_interp__free(struct py_interp *p);      /* accepts NULL */

/* For tests and fuzzing: an interpreter of LAYOUT over READ(CTX, ...),
 * its PyCode_Type at CODE_TYPE, its _PyRuntime at RUNTIME. */
struct py_interp *py_interp__fake(const struct py_layout *l, py_read_fn read, void *ctx,
				  uint64_t runtime, uint64_t code_type);

/* "3.11" */
const char *py_interp__version(const struct py_interp *p);

/* How many thread states the last py_interp__threads() read, those with
 * no thread of the process too. */
size_t py_interp__listed(const struct py_interp *p);

/* Whether PC (as a stack holds it: a caller's is its return address - 1)
 * is in the eval loop's C function, _PyEval_EvalFrameDefault. */
bool py_interp__in_eval(const struct py_interp *p, uint64_t pc);

/* Its thread states, at most MAX, into OUT; *GIL the thread state holding
 * the GIL (0: none, or not known).  Returns how many, or -1 when the
 * interpreter state cannot be read (the process is finalizing or gone). */
int py_interp__threads(struct py_interp *p, struct py_thread *out, size_t max, uint64_t *gil);

/* The thread state holding the GIL now (0: none, or not known), as of the
 * last py_interp__threads(): one small read. */
uint64_t py_interp__gil(const struct py_interp *p);

/* The frames of thread state TSTATE, innermost first, at most MAX; how
 * many; and *GIL (if not NULL) as py_interp__gil() gives it, read with
 * them.  Two system calls (3.11+), then one a frame outside the thread's
 * current data-stack chunk (every frame before 3.11): made while the
 * thread cannot run. */
size_t py_interp__frames(const struct py_interp *p, uint64_t tstate, struct py_frame_raw *out,
			 size_t max, uint64_t *gil);

/* The addresses of a thread's frames at its last capture (entry frames
 * too), the first PY_HINT_FRAMES: py_interp__frames_hinted() reads them
 * in one system call, where the thread is most often still, and keeps
 * this capture's.  N 0: none yet. */
#define PY_HINT_FRAMES 64
struct py_frame_hint {
	uint64_t addr[PY_HINT_FRAMES];
	uint32_t n;
};

/* py_interp__frames() with HINT (NULL: none): a thread's frames in two
 * system calls, or three, while its chain is the one of its last capture
 * (before 3.11 a frame object each otherwise). */
size_t py_interp__frames_hinted(const struct py_interp *p, uint64_t tstate, struct py_frame_raw *out,
				size_t max, uint64_t *gil, struct py_frame_hint *hint);

/* The thread's current (innermost) frame now, in *F, the first one
 * py_interp__frames_hinted() reads (hint->addr[0]), and its link to its
 * caller's, in *BACK (hint->addr[1], or 0 for a chain of one).  Read
 * again after the chain of a thread that runs meanwhile, they tell
 * whether the chain was read while the thread stayed in that frame (the
 * link too: a frame freed and made again at the same address, a
 * generator's, is linked anew).  0, or -1. */
int py_interp__current(const struct py_interp *p, uint64_t tstate, uint64_t *f, uint64_t *back);

/* Frame F named: its function (qualified name from 3.11, else the
 * function's name), file and line (0: unknown, or LINES false).  The
 * strings live until py_interp__free().  Returns 0, or -1 when its code
 * object cannot be read (then FUNC is "[unknown python frame]"). */
struct py_named {
	const char *func, *file;
	int line;
};
int py_interp__name(struct py_interp *p, const struct py_frame_raw *f, bool lines,
		    struct py_named *out);

/* Whether code object CODE is named (cached), and its serial (*SERIAL),
 * with no read and no check that it is still the same. */
bool py_interp__code_cached(const struct py_interp *p, uint64_t code, uint32_t *serial);
/* The serial number of code object CODE: the same for the same object,
 * another once another code object is at its address (checked once per
 * EPOCH, the caller's tick: one small read; read and named if new). */
uint32_t py_interp__code(struct py_interp *p, uint64_t code, uint64_t epoch);

/* Drops the code objects named and not met (py_interp__code()) since
 * epoch BEFORE: what is live is kept, not what was ever seen (a program
 * that makes functions as it goes).  Returns how many. */
size_t py_interp__age_codes(struct py_interp *p, uint64_t before);
/* The bytes its cache of code objects holds now (at most about 16 MiB:
 * python/internal.h CODE_BYTES), and how many times it was emptied for
 * it (*EMPTIED). */
size_t py_interp__code_bytes(const struct py_interp *p, uint64_t *emptied);
/* Code objects named so far (cached), and reads that failed. */
void py_interp__counts(const struct py_interp *p, uint64_t *codes, uint64_t *bad);

#endif
