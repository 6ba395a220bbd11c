/* internal: what python/interp.c and python/names.c share of a CPython
 * interpreter read from outside.  Nothing outside python/ includes this. */
#ifndef CPROF_PYTHON_INTERNAL_H
#define CPROF_PYTHON_INTERNAL_H

#include <errno.h>
#include <stdint.h>
#include <string.h>

#include "python/interp.h"

/* A code object named once: its strings, first line and line table. */
struct py_code {
	uint64_t addr;                  /* 0: empty */
	char *func, *file;
	int first;
	uint8_t *table;
	uint32_t table_len;
	uint64_t start, units;          /* its first instruction; how many bytes (< 3.11)
					   or code units it has */
	int bad;                        /* not a code object */
	uint32_t serial;                /* a number of its own: another code object at
					   the same address has another */
	uint64_t stamp[4];              /* its name, file and line table's addresses, first
					   line and size: another code object there differs */
	uint64_t checked;               /* the epoch it was last checked in */
};

#define CODE_CACHE (1u << 14)   /* code objects named, at most; then named anew */
/* The bytes the code objects named may hold (their names, files and line
 * tables, each table at most PY_MAX_TABLE): past it the cache is emptied
 * and named anew.  A hostile interpreter (every code object's table the
 * largest taken) held 16,384 x 64 KiB = 1 GiB before. */
#define CODE_BYTES (16u << 20)

/* A thread's Python name: the ident (pthread_t) it is kept under. */
struct py_tname {
	uint64_t ident;
	char *name;
};

struct py_dict_entry;

/* What python/names.c finds and keeps (see there). */
struct py_names {
	uint64_t active;                /* threading._active, 0: not found yet */
	uint64_t key_name;              /* the interned str "_name", 0: not met yet */
	uint64_t mod_keys;              /* sys.modules' keys object when last looked at */
	size_t mod_looked;              /* and how many of its entries were looked at */
	struct py_tname *t;             /* by ident */
	size_t n;
	struct py_dict_entry *entries;  /* scratch */
	unsigned char *raw;             /* scratch */
	uint64_t reads, unnamed;
};

struct py_interp {
	struct py_layout l;
	pid_t pid;
	py_read_fn read;
	void *ctx;
	uint64_t runtime, code_type;
	uint64_t str_type, dict_type;   /* PyUnicode_Type, PyDict_Type (0: not known) */
	uint64_t eval_lo, eval_hi;
	char version[16];
	uint64_t gil;                   /* the main interpreter's GIL state (0: not known) */
	uint32_t tid_off;               /* < 3.11: glibc's struct pthread tid, from thread_id */
	int scans;                      /* searches for TID_OFF left in this py_interp__threads() */
	struct py_code *codes;          /* open addressing over CODE_CACHE */
	size_t ncodes;
	size_t code_bytes;              /* what the cache holds (CODE_BYTES at most) */
	uint64_t named, bad, renamed, emptied;
	uint32_t serials;
	/* < 3.11: thread states whose OS thread was found (tstate, thread_id, tid) */
	struct { uint64_t tstate, thread_id; pid_t native, tid; } *known;   /* by position */
	size_t listed;                  /* thread states the last py_interp__threads read */
	size_t nknown, known_cap;
	struct py_names names;
};

static inline uint64_t py_word(const unsigned char *b, uint32_t off)
{
	uint64_t v;
	memcpy(&v, b + off, 8);
	return v;
}

static inline int32_t py_word32(const unsigned char *b, uint32_t off)
{
	int32_t v;
	memcpy(&v, b + off, 4);
	return v;
}

static inline int py_rd(const struct py_interp *p, uint64_t addr, void *buf, size_t len)
{
	if (addr == 0 || addr + len < addr)
		return -EFAULT;
	return p->read(p->ctx, addr, buf, len);
}

static inline int py_rd_ptr(const struct py_interp *p, uint64_t addr, uint64_t *out)
{
	return py_rd(p, addr, out, 8);
}

/* The str at ADDR as UTF-8 (malloc'd, cut to PY_MAX_STR characters), or
 * NULL. */
char *py_read_str(const struct py_interp *p, uint64_t addr);

/* Frees what python/names.c keeps. */
void py_names_free(struct py_interp *p);

#endif
