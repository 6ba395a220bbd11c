/* vm: a CRuby VM read from outside (ruby 3.1 for now; see layout.h):
 * ruby_current_vm_ptr -> the main ractor -> its threads (each one's OS
 * thread id, execution context) -> each thread's control frames, from
 * ec->cfp up to the end of its VM stack -> each frame's iseq, named and
 * lined.  Every count, size and pointer read is bounded. */
#ifndef CPROF_RUBY_VM_H
#define CPROF_RUBY_VM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "ruby/layout.h"

struct modules;

typedef int (*rb_read_fn)(void *ctx, uint64_t addr, void *buf, size_t len);

#define RB_MAX_THREADS 4096     /* a thread list walk stops there */
#define RB_MAX_FRAMES 1024      /* then "[truncated]" */
#define RB_MAX_STR 256          /* a label or path longer is cut */

struct rb_vm {
	struct ruby_layout l;
	rb_read_fn read;
	void *ctx;
	uint64_t vm_ptr;        /* &ruby_current_vm_ptr */
	uint64_t exec_lo, exec_hi;      /* rb_vm_exec, when its size is known */
	char version[16];
};

struct rb_thread_raw {
	uint64_t th, ec, pthread;
	uint64_t name;          /* Thread#name: a String VALUE, or nil */
	pid_t tid;
};

/* One control frame: its iseq (0: none, a C function's), pc and flags
 * (ep[0]). */
struct rb_frame_raw {
	uint64_t iseq, pc;
	uint32_t flags;
};

/* The VM of process PID whose modules are MS, or NULL (then WHY, if not
 * empty, says why in one line: a version not known, say). */
struct rb_vm *rb_vm__new(pid_t pid, const struct modules *ms, char *why, size_t whylen);  /* find.c */
/* One read by READ (tests, fuzzing) with layout L. */
struct rb_vm *rb_vm__fake(const struct ruby_layout *l, rb_read_fn read, void *ctx, uint64_t vm_ptr);
void rb_vm__free(struct rb_vm *v);
/* The reader of rb_vm__new: CTX is the pid. */
int rb_vm__read_remote(void *ctx, uint64_t addr, void *buf, size_t len);

/* The threads of its main ractor, at most MAX, in list order; *GVL (if
 * not NULL): the rb_thread_t that holds the GVL, or 0.  Returns how many,
 * or -1 when the VM cannot be read (not started, gone). */
int rb_vm__threads(const struct rb_vm *v, struct rb_thread_raw *out, size_t max, uint64_t *gvl);

/* The main ractor's address into *RACTOR (what rb_vm__gvl() reads from).
 * 0 or -1. */
int rb_vm__ractor(const struct rb_vm *v, uint64_t *ractor);
/* The rb_thread_t that holds RACTOR's GVL (0: none) into *OWNER.  0 or -1. */
int rb_vm__gvl(const struct rb_vm *v, uint64_t ractor, uint64_t *owner);
/* Thread TH's execution context now (a Fiber switch changes it).  0 or
 * -1. */
int rb_vm__ec(const struct rb_vm *v, uint64_t th, uint64_t *ec);

/* Whether frame F is a Ruby method or block of its own (an iseq's), not a
 * C function's, a C block's or the thread's first (dummy) frame. */
static inline bool rb_frame__ruby(const struct rb_frame_raw *f)
{
	uint32_t magic = f->flags & RUBY_FRAME_MAGIC_MASK;
	return f->iseq && !(f->flags & RUBY_FRAME_FLAG_CFRAME) && magic != RUBY_FRAME_MAGIC_CFUNC &&
	       magic != RUBY_FRAME_MAGIC_IFUNC && magic != RUBY_FRAME_MAGIC_DUMMY;
}

/* The control frames of execution context EC, innermost first, at most
 * MAX (*TRUNCATED set when there were more).  Returns how many. */
size_t rb_vm__frames(const struct rb_vm *v, uint64_t ec, struct rb_frame_raw *out, size_t max,
		     bool *truncated);

/* ISEQ's label, path and first line (strings cut at RB_MAX_STR).  Returns
 * 0, or -1: not an iseq. */
int rb_vm__iseq_name(const struct rb_vm *v, uint64_t iseq, char *label, size_t labellen,
		     char *path, size_t pathlen, int *first);
/* The line of ISEQ at PC (the frame's pc: the next instruction), or 0. */
int rb_vm__line(const struct rb_vm *v, uint64_t iseq, uint64_t pc);

/* A Ruby string VALUE's bytes into OUT (cut at LEN - 1).  0 or -1. */
int rb_vm__string(const struct rb_vm *v, uint64_t value, char *out, size_t len);

#endif
