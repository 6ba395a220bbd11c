/* curg: the goroutine a Go thread runs, found as Go's runtime finds it,
 * for a thread whose stack ends on the system stack.
 *
 * runtime.systemstack and runtime.morestack switch a thread from its
 * goroutine's stack to its system stack (g0) after saving where the
 * goroutine was in g.sched; Go's tracebacks and its CPU profiler then go on
 * from m.curg.sched.  The thread's g is in thread-local storage (at a fixed
 * offset from FS on amd64), its M at g.m, the M's goroutine at m.curg.  No
 * DWARF is needed: these offsets are read from runtime.systemstack's own
 * code, which loads each of them (Go 1.17 to 1.26 on amd64 compile it to
 * the same instructions, but that 1.21 on load g0's SP straight into
 * %rsp), and gobuf.bp from gosave_systemstack_switch's, which systemstack
 * calls; and every value read is checked against the
 * others (m.g0 is the thread's g, curg.m is the M, the saved SP inside
 * curg's stack) before it is trusted.  A program whose code does not match
 * has no layout (the sample then says its goroutine's frames are lost). */
#ifndef CPROF_GOROUTINE_CURG_H
#define CPROF_GOROUTINE_CURG_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "goroutine/goroutines.h"

struct gocurg {
	int64_t tls_g;                  /* g's offset from the FS base */
	uint32_t g_m;                   /* offset of g.m */
	uint32_t m_curg;                /* offset of m.curg */
	uint32_t g_sched;               /* offset of g.sched (gobuf: sp, pc, g, ctxt,
					   ret, lr, bp; no ret since Go 1.25) */
	uint32_t gobuf_bp;              /* offset of bp in a gobuf: 48, 40 since 1.25 */
	int32_t save_at;                /* where systemstack's call to
					   gosave_systemstack_switch goes, from the
					   start of its code (before it, as Go links) */
};

/* Reads the layout from the LEN bytes of runtime.systemstack's code at
 * CODE (all but gobuf_bp, which is 0 until gocurg__save() says it).
 * Returns 0, or -ENOENT when the code is not as expected. */
int gocurg__layout(const unsigned char *code, size_t len, struct gocurg *l);

/* Reads gobuf_bp from the LEN bytes of gosave_systemstack_switch's code
 * (l->save_at past systemstack's start), which saves the goroutine's
 * frame pointer in g.sched.bp: mov %rbp, G_SCHED_BP(%r14).  Returns 0, or
 * -ENOENT. */
int gocurg__save(const unsigned char *code, size_t len, struct gocurg *l);

/* How many bytes of a g hold what gocurg__parse() needs: its stack
 * bounds, g.m and g.sched. */
size_t gocurg__g_len(const struct gocurg *l);

/* The goroutine that a thread on its system stack works for, from what was
 * read of it: G, the thread's g (the word at FS base + tls_g), M, its M
 * (g.m), CURG (m.curg), and the first LEN bytes of CURG's g at GBYTES
 * (gocurg__g_len()).  Sets R as gocurg__read() does; the same returns. */
int gocurg__parse(const struct gocurg *l, uint64_t g, uint64_t m, uint64_t curg,
		  const unsigned char *gbytes, size_t len, struct go_rec *r);

/* The goroutine that the thread whose FS base is FS_BASE, in process PID,
 * runs while it is on its system stack: its address, stack bounds and
 * saved context (g.sched) in R (goid, status and the rest are left 0).
 * Returns 0, -ESRCH when the thread runs no goroutine there (it is on g0
 * of its own: the scheduler, GC workers between goroutines), -EINVAL when
 * what was read does not hold together, or a read's -errno. */
int gocurg__read(pid_t pid, const struct gocurg *l, uint64_t fs_base, struct go_rec *r);

#endif
