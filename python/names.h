/* names: each thread's Python name, read from outside (python/names.c). */
#ifndef CPROF_PYTHON_NAMES_H
#define CPROF_PYTHON_NAMES_H

#include <stddef.h>
#include <stdint.h>

struct py_interp;

/* Reads the Python name of every thread (threading.current_thread().name:
 * the _name of each Thread in threading._active, found once through
 * sys.modules), at most PY_MAX_NAMES, while the threads run: a few small
 * reads a thread.  Returns how many are named (0: the program has not
 * imported threading, or it cannot be read). */
#define PY_MAX_NAMES 512
size_t py_interp__read_names(struct py_interp *p);

/* The name of the thread with IDENT as last read, or NULL: valid until
 * the next py_interp__read_names(). */
const char *py_interp__thread_name(const struct py_interp *p, uint64_t ident);

#endif
