/* libunwind: the first rule of the unwinder, libunwind's remote API over
 * a capture.  Our own accessors serve registers and memory from the
 * capture (unwind/capture.c), unwind tables are located from each
 * module's .eh_frame_hdr (module__eh_table()), and libunwind's global
 * cache is on.  A PC without an FDE stops libunwind's cursor without a
 * guess (no_fde), for the unwinder's other rules to take the frame. */
#include "unwind/internal.h"

#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <string.h>

#include "unwind/cfi.h"

/* Exported by libunwind but not declared in its headers. */
extern int _Ux86_64_dwarf_search_unwind_table(unw_addr_space_t as, unw_word_t ip,
					      unw_dyn_info_t *di, unw_proc_info_t *pi,
					      int need_unwind_info, void *arg);

/* The remote-table description of a module's .eh_frame_hdr: table_len
 * counts unw_word_t units, one 8-byte entry each. */
static int eh_frame_table(const struct module *m, unw_dyn_info_t *di)
{
	struct eh_table t;
	if (module__eh_table(m, &t) < 0)
		return -UNW_ENOINFO;
	memset(di, 0, sizeof(*di));
	di->format = UNW_INFO_FORMAT_REMOTE_TABLE;
	di->start_ip = m->start;
	di->end_ip = m->end;
	di->u.rti.segbase = t.segbase;
	di->u.rti.table_data = t.table;
	di->u.rti.table_len = t.fde_count * 8 / sizeof(unw_word_t);
	return 0;
}

static int find_proc_info(unw_addr_space_t as, unw_word_t ip, unw_proc_info_t *pi,
			  int need_unwind_info, void *arg)
{
	struct unwind_ctx *x = arg;
	unw_dyn_info_t di;
	const struct module *m = find_module(x, ip);
	int r = m ? eh_frame_table(m, &di) : -UNW_ENOINFO;
	if (r == 0)
		r = _Ux86_64_dwarf_search_unwind_table(as, ip, &di, pi, need_unwind_info, arg);
	if (r < 0) {
		/* Not -UNW_ENOINFO: with that, unw_step() would guess a frame
		 * from RBP and leave the cursor on it.  With any other error it
		 * returns at once, the cursor still on this frame, whose
		 * registers the other ways of stepping start from. */
		x->no_fde = 1;
		r = -UNW_ESTOPUNWIND;
	}
	return r;
}

static void put_unwind_info(unw_addr_space_t as, unw_proc_info_t *pi, void *arg)
{
	/* Not called for tables from dwarf_search_unwind_table: libunwind
	 * frees those itself (UNW_INFO_FORMAT_TABLE, from its own pool). */
}

static int get_dyn_info_list_addr(unw_addr_space_t as, unw_word_t *dilap, void *arg)
{
	return -UNW_ENOINFO;
}

static int access_mem(unw_addr_space_t as, unw_word_t addr, unw_word_t *valp,
		      int write, void *arg)
{
	uint64_t v;
	if (write || read_word(arg, addr, &v) < 0)
		return -UNW_EINVAL;
	*valp = v;
	return 0;
}

static int access_reg(unw_addr_space_t as, unw_regnum_t reg, unw_word_t *valp,
		      int write, void *arg)
{
	struct unwind_ctx *x = arg;
	const struct user_regs_struct *r = x->regs;
	if (write)
		return -UNW_EREADONLYREG;
	if (reg < 0 || reg >= UREG_N || !(x->known & UREG_BIT(reg))) {
		/* A stop gives every register: worth it if the capture lacked it. */
		if (x->c->partial_regs)
			x->need_regs = 1;
		return -UNW_EBADREG;
	}
	switch (reg) {
	case UNW_X86_64_RAX: *valp = r->rax; break;
	case UNW_X86_64_RDX: *valp = r->rdx; break;
	case UNW_X86_64_RCX: *valp = r->rcx; break;
	case UNW_X86_64_RBX: *valp = r->rbx; break;
	case UNW_X86_64_RSI: *valp = r->rsi; break;
	case UNW_X86_64_RDI: *valp = r->rdi; break;
	case UNW_X86_64_RBP: *valp = r->rbp; break;
	case UNW_X86_64_RSP: *valp = r->rsp; break;
	case UNW_X86_64_R8: *valp = r->r8; break;
	case UNW_X86_64_R9: *valp = r->r9; break;
	case UNW_X86_64_R10: *valp = r->r10; break;
	case UNW_X86_64_R11: *valp = r->r11; break;
	case UNW_X86_64_R12: *valp = r->r12; break;
	case UNW_X86_64_R13: *valp = r->r13; break;
	case UNW_X86_64_R14: *valp = r->r14; break;
	case UNW_X86_64_R15: *valp = r->r15; break;
	case UNW_X86_64_RIP: *valp = r->rip; break;
	default: return -UNW_EBADREG;
	}
	return 0;
}

static int access_fpreg(unw_addr_space_t as, unw_regnum_t reg, unw_fpreg_t *val,
			int write, void *arg)
{
	return -UNW_EBADREG;
}

static int resume(unw_addr_space_t as, unw_cursor_t *c, void *arg)
{
	return -UNW_EINVAL;
}

static int get_proc_name(unw_addr_space_t as, unw_word_t addr, char *buf, size_t len,
			 unw_word_t *offp, void *arg)
{
	return -UNW_ENOINFO;            /* symbols come from libdw, at the end */
}

static unw_accessors_t accessors = {
	.find_proc_info = find_proc_info,
	.put_unwind_info = put_unwind_info,
	.get_dyn_info_list_addr = get_dyn_info_list_addr,
	.access_mem = access_mem,
	.access_reg = access_reg,
	.access_fpreg = access_fpreg,
	.resume = resume,
	.get_proc_name = get_proc_name,
};

/* libunwind's sigprocmask: the one symbol this program defines in
 * libc's place, on purpose, and only for libunwind.
 *
 * libunwind's global cache, and its memory pools, take a lock around each
 * step with every signal blocked: two rt_sigprocmask calls for each, 8 to
 * 12 system calls per unwind, the most frequent system call of a sampling
 * run.  (UNW_CACHE_PER_THREAD, which would not lock, is turned into
 * UNW_CACHE_GLOBAL by builds without __thread support, Debian's among
 * them.)  The signals are blocked so that a signal handler unwinding its
 * own thread cannot deadlock on the lock; our unwinding is remote, on a
 * thread that never unwinds in a signal handler.
 *
 * libunwind is a shared library: its calls of sigprocmask go through the
 * dynamic linker, which finds the executable's definition first.  So the
 * definition below replaces libc's for every caller in the process, which
 * is why it must stay what libc's is: pthread_sigmask() with errno (glibc
 * 2.32 and later: sigprocmask is exactly that), except on a thread inside
 * libunwind_quiet(true), where it does nothing (the lock is still taken:
 * only the mask change is skipped).  Who reaches it, as built here
 * (nm -D --undefined-only on each library ldd lists): libunwind.so.8 and
 * libunwind-x86_64.so.8, no other.  The program's own code never calls
 * sigprocmask, so that no change of mask can be skipped by accident: it
 * calls pthread_sigmask (run/run.c, run/watchdog.c, attach/seize.c);
 * nm of every object of the build finds sigprocmask in this file only. */
static __thread int unwinding;

int sigprocmask(int how, const sigset_t *set, sigset_t *old)
{
	if (unwinding)
		return 0;
	int e = pthread_sigmask(how, set, old);
	if (e) {
		errno = e;
		return -1;
	}
	return 0;
}

void libunwind_quiet(bool on)
{
	unwinding = on;
}

unw_addr_space_t libunwind_space_new(void)
{
	unw_addr_space_t as = unw_create_addr_space(&accessors, 0);
	/* Remote address spaces start with caching off: without it every
	 * step re-parses CIEs and FDEs (about 200x slower here). */
	if (as)
		unw_set_caching_policy(as, UNW_CACHE_GLOBAL);
	return as;
}
