#include "unwind/unwinder.h"

#include <errno.h>
#include <libunwind.h>
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>

#include "util/strbuf.h"
#include "util/xalloc.h"

/* Exported by libunwind but not declared in its headers. */
extern int _Ux86_64_dwarf_search_unwind_table(unw_addr_space_t as, unw_word_t ip,
					      unw_dyn_info_t *di, unw_proc_info_t *pi,
					      int need_unwind_info, void *arg);

#define STACK_SPAN (64ull << 20)        /* how far above SP a read counts as "stack" */

struct unwinder {
	unw_addr_space_t as;
	const struct modules *ms;
	size_t stack_used;      /* bytes of the last unwind's stack copy it read */
};

/* Per-unwind state handed to the accessors as their ARG. */
struct ctx {
	struct unwinder *u;
	const struct unwind_input *c;
	int no_fde;             /* find_proc_info found nothing for the last step */
	int stack_short;        /* a read fell past the end of the stack copy */
	int need_regs;          /* asked for a register a partial capture lacks */
	int no_module;          /* an address was in no known module */
};

static const struct module *find_module(struct ctx *x, uint64_t addr)
{
	const struct module *m = modules__find(x->u->ms, addr);
	if (!m)
		x->no_module = 1;
	return m;
}

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
	struct ctx *x = arg;
	unw_dyn_info_t di;
	const struct module *m = find_module(x, ip);
	int r = m ? eh_frame_table(m, &di) : -UNW_ENOINFO;
	if (r == 0)
		r = _Ux86_64_dwarf_search_unwind_table(as, ip, &di, pi, need_unwind_info, arg);
	if (r < 0)
		x->no_fde = 1;
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
	struct ctx *x = arg;
	const struct unwind_input *c = x->c;
	if (write)
		return -UNW_EINVAL;
	if (addr >= c->stack_addr && addr - c->stack_addr + sizeof(*valp) <= c->stack_len) {
		size_t end = addr - c->stack_addr + sizeof(*valp);
		memcpy(valp, c->stack + (addr - c->stack_addr), sizeof(*valp));
		if (end > x->u->stack_used)
			x->u->stack_used = end;
		return 0;
	}
	const struct module *m = find_module(x, addr);
	if (m && module__read(m, addr, valp, sizeof(*valp)) == 0)
		return 0;
	if (!m && addr >= c->stack_addr && addr - c->stack_addr < STACK_SPAN) {
		/* Past our copy but near the stack: if the copy was cut by our
		 * size (not by the end of the mapping), a larger one would do.
		 * Modules are checked first: thread stacks often sit right
		 * below the libraries. */
		if (c->stack_len == c->stack_want)
			x->stack_short = 1;
	}
	return -UNW_EINVAL;
}

static int access_reg(unw_addr_space_t as, unw_regnum_t reg, unw_word_t *valp,
		      int write, void *arg)
{
	struct ctx *x = arg;
	const struct user_regs_struct *r = x->c->regs;
	if (write)
		return -UNW_EREADONLYREG;
	if (x->c->partial_regs && reg != UNW_X86_64_RSP && reg != UNW_X86_64_RIP) {
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

/* libunwind's global cache, and its memory pools, take a lock around each
 * step with every signal blocked: two rt_sigprocmask calls for each, 8 to
 * 12 system calls per unwind, the most frequent system call of a sampling
 * run.  (UNW_CACHE_PER_THREAD, which would not lock, is turned into
 * UNW_CACHE_GLOBAL by builds without __thread support, Debian's among
 * them.)  The signals are blocked so that a signal handler unwinding its
 * own thread cannot deadlock on the lock; our unwinding is remote, on a
 * thread that never unwinds in a signal handler.  So this program's
 * sigprocmask, which libunwind's calls resolve to (the executable's
 * definition comes first), does nothing while unwinding on this thread
 * (the lock is still taken: only the mask change is skipped), and is
 * pthread_sigmask() otherwise, as glibc's is. */
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

struct unwinder *unwinder__new(const struct modules *ms)
{
	struct unwinder *u = xcalloc(1, sizeof(*u));
	u->ms = ms;
	u->as = unw_create_addr_space(&accessors, 0);
	if (!u->as) {
		free(u);
		return NULL;
	}
	/* Remote address spaces start with caching off: without it every
	 * step re-parses CIEs and FDEs (about 200x slower here). */
	unw_set_caching_policy(u->as, UNW_CACHE_GLOBAL);
	return u;
}

void unwinder__free(struct unwinder *u)
{
	if (!u)
		return;
	unw_destroy_addr_space(u->as);
	free(u);
}

size_t unwinder__stack_used(const struct unwinder *u)
{
	return u->stack_used;
}

void unwinder__flush(struct unwinder *u)
{
	unw_flush_cache(u->as, 0, 0);
}

/* glibc's __clone3 ends its FDE just before its syscall instruction (in the
 * child the unwind info would be wrong), so a parent stopped in clone3 has
 * a PC without one, and its stack would end there.  Such a syscall stub
 * has pushed nothing: its return address is at SP.  When the innermost PC
 * has no FDE and follows a syscall instruction, C's caller frame is made
 * into ALT (PC = the word at SP, SP + 8, the other registers as they are:
 * a syscall keeps the callee-saved ones), if that address is code in a
 * known module.  Anything else still ends the stack. */
static int after_syscall(struct ctx *x, uint64_t pc)
{
	unsigned char insn[2];
	const struct module *m = find_module(x, pc - 2);
	return m && module__read(m, pc - 2, insn, 2) == 0 && insn[0] == 0x0f && insn[1] == 0x05;
}

/* A thread just born from clone/clone3: it is at its first instruction, on
 * an empty stack.  That is its root. */
static int newborn(struct ctx *x, const struct unwind_input *c)
{
	return !c->partial_regs && c->regs->rax == 0 &&
	       (c->regs->orig_rax == 56 || c->regs->orig_rax == 435) && after_syscall(x, c->regs->rip);
}

/* ALT gets C with the caller's PC and SP; ALT_REGS holds its registers. */
static int syscall_stub_caller(struct ctx *x, const struct unwind_input *c,
			       struct unwind_input *alt, struct user_regs_struct *alt_regs)
{
	uint64_t pc = c->regs->rip, sp = c->regs->rsp, ra;
	if (!after_syscall(x, pc))
		return -1;
	if (sp < c->stack_addr || sp - c->stack_addr + 8 > c->stack_len)
		return -1;
	memcpy(&ra, c->stack + (sp - c->stack_addr), 8);
	if (!find_module(x, ra))
		return -1;
	*alt = *c;
	*alt_regs = *c->regs;
	alt_regs->rip = ra;
	alt_regs->rsp = sp + 8;
	alt->regs = alt_regs;
	return 0;
}

/* Why the unwind stopped early, once libunwind gave up. */
static enum unwind_status early_end(const struct ctx *x)
{
	if (x->need_regs)
		return UNWIND_NEED_REGS;
	/* Without unwind info libunwind reads the code at the PC (JIT code
	 * above the stack): not a copy too short. */
	if (x->stack_short && !x->no_fde)
		return UNWIND_STACK_SHORT;
	return x->no_module ? UNWIND_NO_MODULE : UNWIND_PARTIAL;
}

static enum unwind_status unwind(struct unwinder *u, const struct unwind_input *c,
				 uint64_t *pcs, size_t max, size_t *n);

enum unwind_status unwinder__unwind(struct unwinder *u, const struct unwind_input *c,
				    uint64_t *pcs, size_t max, size_t *n)
{
	unwinding = 1;
	enum unwind_status r = unwind(u, c, pcs, max, n);
	unwinding = 0;
	return r;
}

static enum unwind_status unwind(struct unwinder *u, const struct unwind_input *c,
				 uint64_t *pcs, size_t max, size_t *n)
{
	struct ctx x = { .u = u, .c = c };
	u->stack_used = 0;
	struct unwind_input alt;
	struct user_regs_struct alt_regs;
	unw_cursor_t cur;
	int ret_addr = 0;               /* is the current frame's PC a return address? */
	*n = 0;
	if (max < 1)
		return UNWIND_TRUNCATED;
	if (unw_init_remote(&cur, u->as, &x) < 0) {
		pcs[(*n)++] = c->regs->rip;
		return UNWIND_PARTIAL;
	}
	for (;;) {
		unw_word_t ip;
		if (unw_get_reg(&cur, UNW_REG_IP, &ip) < 0 || ip == 0)
			return x.need_regs ? UNWIND_NEED_REGS : UNWIND_PARTIAL;
		if (*n == max)
			return UNWIND_TRUNCATED;
		/* A caller's PC is the return address, the instruction after the
		 * call, which may belong to the next line or function: look up
		 * pc - 1.  Not for the innermost frame, nor the frame a signal
		 * interrupted (its PC is where it will resume). */
		pcs[(*n)++] = ret_addr ? ip - 1 : ip;
		ret_addr = unw_is_signal_frame(&cur) <= 0;
		x.no_fde = 0;
		int r = unw_step(&cur);
		if (r == 0 && !x.no_fde)
			return UNWIND_COMPLETE;
		/* Without an FDE libunwind falls back to guessing with RBP, which
		 * in code built without frame pointers yields plausible, wrong
		 * frames: stop there instead. */
		if (x.no_fde && *n == 1 && x.c == c && newborn(&x, c))
			return UNWIND_COMPLETE;
		if (x.no_fde && *n == 1 && x.c == c &&
		    syscall_stub_caller(&x, c, &alt, &alt_regs) == 0 &&
		    (x = (struct ctx){ .u = u, .c = &alt }, unw_init_remote(&cur, u->as, &x) == 0)) {
			ret_addr = 1;
			continue;
		}
		if (r <= 0 || x.no_fde)
			return early_end(&x);
	}
}
