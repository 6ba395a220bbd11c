#include "unwind/unwinder.h"

#include <errno.h>
#include <libunwind.h>
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>

#include "unwind/cfi.h"
#include "unwind/py_trampoline.h"
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
	size_t stack_need;      /* ... and how many it wanted, if more (0: no more) */
	bool jumped;            /* it ended at a MODULE_ROOT_JUMP function */
	uint64_t jump_sp;       /* ... whose SP this was (0: unknown) */
	struct py_trampolines *tramp;   /* made on first use (unwind/py_trampoline.c) */
};

/* Per-unwind state handed to the accessors as their ARG. */
struct ctx {
	struct unwinder *u;
	const struct unwind_input *c;
	const struct user_regs_struct *regs;    /* of the frame the cursor started from */
	uint32_t known;         /* which of them are valid (UREG_BIT(DWARF number)) */
	int no_fde;             /* find_proc_info found nothing for the last step */
	int stack_short;        /* a read fell past the end of the stack copy */
	int need_regs;          /* asked for a register a partial capture lacks */
	int no_module;          /* an address was in no known module */
	const struct module *last;      /* the module find_module() found last */
};

static const struct module *find_module(struct ctx *x, uint64_t addr)
{
	/* Most lookups fall in the module of the one before (the loop's,
	 * then find_proc_info's, for the same PC). */
	const struct module *m = x->last;
	if (m && addr >= m->start && addr < m->end)
		return m;
	m = modules__find(x->u->ms, addr);
	if (!m)
		x->no_module = 1;
	else
		x->last = m;
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

/* A word of the stack copy, or -1.  With FLAG, flags a copy too short if
 * ADDR is past its end and the copy was cut by our size, not by the end of
 * the mapping: a larger one would do. */
static int read_stack(struct ctx *x, uint64_t addr, uint64_t *val, bool flag)
{
	const struct unwind_input *c = x->c;
	if (addr >= c->stack_addr && addr - c->stack_addr <= c->stack_len &&
	    c->stack_len - (addr - c->stack_addr) >= sizeof(*val)) {
		memcpy(val, c->stack + (addr - c->stack_addr), sizeof(*val));
		return 0;
	}
	if (flag && addr >= c->stack_addr && addr - c->stack_addr < STACK_SPAN &&
	    c->stack_len == c->stack_want && !modules__find(x->u->ms, addr)) {
		x->stack_short = 1;
		if (addr - c->stack_addr + sizeof(*val) > x->u->stack_need)
			x->u->stack_need = addr - c->stack_addr + sizeof(*val);
	}
	return -1;
}

/* A word of the target's memory as we have it: the stack copy, then the
 * module images.  (Modules are checked before flagging a short copy:
 * thread stacks often sit right below the libraries.) */
static int read_word(void *arg, uint64_t addr, uint64_t *val)
{
	struct ctx *x = arg;
	const struct unwind_input *c = x->c;
	if (addr >= c->stack_addr && addr - c->stack_addr <= c->stack_len &&
	    c->stack_len - (addr - c->stack_addr) >= sizeof(*val)) {
		size_t end = addr - c->stack_addr + sizeof(*val);
		memcpy(val, c->stack + (addr - c->stack_addr), sizeof(*val));
		if (end > x->u->stack_used)
			x->u->stack_used = end;
		return 0;
	}
	const struct module *m = find_module(x, addr);
	if (m && module__read(m, addr, val, sizeof(*val)) == 0)
		return 0;
	if (!m)
		read_stack(x, addr, val, true);
	return -1;
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
	struct ctx *x = arg;
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
	py_trampolines_free(u->tramp);
	free(u);
}

size_t unwinder__stack_used(const struct unwinder *u)
{
	return u->stack_used;
}

size_t unwinder__stack_need(const struct unwinder *u)
{
	return u->stack_need;
}

bool unwinder__jumped(const struct unwinder *u, uint64_t *sp)
{
	*sp = u->jump_sp;
	return u->jumped;
}

void unwinder__flush(struct unwinder *u)
{
	unw_flush_cache(u->as, 0, 0);
}

/* glibc's __clone3 ends its FDE just before its syscall instruction (in the
 * child the unwind info would be wrong), so a parent stopped in clone3 has
 * a PC without one, and its stack would end there.  Such a syscall stub
 * has pushed nothing: its return address is at SP.  When the innermost PC
 * has no FDE and follows a syscall instruction, its caller's frame is made
 * into R (PC = the word at SP, SP + 8, the other registers as they are: a
 * syscall keeps the callee-saved ones), if that address is code in a known
 * module.  Anything else still goes on to a frame-pointer step. */
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

/* R (the innermost frame, C's) becomes its caller's frame. */
static int syscall_stub_caller(struct ctx *x, const struct unwind_input *c, struct uregs *r)
{
	uint64_t pc = c->regs->rip, sp = c->regs->rsp, ra;
	if (!after_syscall(x, pc))
		return -1;
	if (sp < c->stack_addr || sp - c->stack_addr + 8 > c->stack_len)
		return -1;
	memcpy(&ra, c->stack + (sp - c->stack_addr), 8);
	if (!find_module(x, ra))
		return -1;
	r->v[UREG_RIP] = ra;
	r->v[UREG_RSP] = sp + 8;
	return 0;
}

/* ---- one unwind ----------------------------------------------------------
 * Each frame is stepped by the best source there is for its PC:
 *   1. libunwind, for modules with .eh_frame_hdr (every C/C++ library and
 *      program the toolchain links normally), from its own cursor;
 *   2. a CFI row libdw reads (module__cfi_row(): .eh_frame of a static
 *      binary, .debug_frame of a Go program), applied here (unwind/cfi.c);
 *   3. CPython's perf trampolines, whose frame is known from their code
 *      (unwind/py_trampoline.c);
 *   4. where there is no unwind info at all (JIT code, named from
 *      /tmp/perf-PID.map; code without an FDE), one frame-pointer step:
 *      caller's PC at [RBP + 8], its RBP at [RBP], its SP = RBP + 16.
 * Where an FDE covers the PC only it is used: no guessing where there is
 * CFI.  A frame-pointer step is checked: RBP known, aligned, at or above
 * SP and inside the stack copy, the return address code of a known module
 * (executable segment) or outside every module (JIT code).  Frames reached
 * that way outside every module stand only if a later frame is in a
 * module: a chain that fails before is cut back to the last frame that
 * stands, never kept as a guess. */
struct walk {
	struct ctx x;
	struct unwinder *u;
	const struct unwind_input *c;
	unw_cursor_t cur;
	bool in_cursor;         /* the current frame is the cursor's, else R's */
	bool cursor_fresh;      /* ... and the one it was started from */
	struct uregs r;         /* the current frame's registers (!in_cursor) */
	struct user_regs_struct ur;     /* what the cursor was started from */
	bool ret_addr;          /* the current frame's PC is a return address */
	bool by_fp;             /* the current frame came from a frame-pointer step */
	uint64_t *pcs;
	size_t max, n;
	size_t standing;        /* frames that stand (see above) */
};

static const int user_regs_order[UREG_N] = {
	offsetof(struct user_regs_struct, rax), offsetof(struct user_regs_struct, rdx),
	offsetof(struct user_regs_struct, rcx), offsetof(struct user_regs_struct, rbx),
	offsetof(struct user_regs_struct, rsi), offsetof(struct user_regs_struct, rdi),
	offsetof(struct user_regs_struct, rbp), offsetof(struct user_regs_struct, rsp),
	offsetof(struct user_regs_struct, r8), offsetof(struct user_regs_struct, r9),
	offsetof(struct user_regs_struct, r10), offsetof(struct user_regs_struct, r11),
	offsetof(struct user_regs_struct, r12), offsetof(struct user_regs_struct, r13),
	offsetof(struct user_regs_struct, r14), offsetof(struct user_regs_struct, r15),
	offsetof(struct user_regs_struct, rip),
};

static void uregs_from_user(struct uregs *r, const struct user_regs_struct *u, uint32_t known)
{
	for (int i = 0; i < UREG_N; i++)
		memcpy(&r->v[i], (const char *)u + user_regs_order[i], sizeof(r->v[i]));
	r->known = known;
}

static void user_from_uregs(struct user_regs_struct *u, const struct uregs *r)
{
	memset(u, 0, sizeof(*u));
	for (int i = 0; i < UREG_N; i++)
		if (r->known & UREG_BIT(i))
			memcpy((char *)u + user_regs_order[i], &r->v[i], sizeof(r->v[i]));
}

/* Ends the unwind with status S: frames that do not stand are dropped. */
static enum unwind_status end(struct walk *w, enum unwind_status s)
{
	if (s != UNWIND_COMPLETE && s != UNWIND_TRUNCATED && w->standing < w->n)
		w->n = w->standing;
	return s;
}

/* Why the unwind stopped early. */
static enum unwind_status early_end(struct walk *w)
{
	const struct ctx *x = &w->x;
	if (x->need_regs)
		return end(w, UNWIND_NEED_REGS);
	if (x->stack_short && !x->no_fde)
		return end(w, UNWIND_STACK_SHORT);
	return end(w, x->no_module ? UNWIND_NO_MODULE : UNWIND_PARTIAL);
}

/* Wanted a register we lack: a stop would give it if the capture was partial. */
static enum unwind_status lacks_reg(struct walk *w)
{
	if (w->c->partial_regs)
		w->x.need_regs = 1;
	return early_end(w);
}

static int cursor_start(struct walk *w)
{
	user_from_uregs(&w->ur, &w->r);
	w->x.regs = &w->ur;
	w->x.known = w->r.known;
	if (unw_init_remote(&w->cur, w->u->as, &w->x) < 0)
		return -1;
	w->in_cursor = w->cursor_fresh = true;
	return 0;
}

/* R from the cursor's current frame: PC, SP and the callee-saved
 * registers (the others are lost in callers). */
static void cursor_regs(struct walk *w)
{
	static const int saved[] = { UNW_X86_64_RIP, UNW_X86_64_RSP, UNW_X86_64_RBP, UNW_X86_64_RBX,
				     UNW_X86_64_R12, UNW_X86_64_R13, UNW_X86_64_R14, UNW_X86_64_R15 };
	w->in_cursor = false;
	if (w->cursor_fresh)
		return;                 /* R is what the cursor started from */
	/* Asking is not needing: the flags an access sets are put back. */
	int need = w->x.need_regs, short_ = w->x.stack_short, nomod = w->x.no_module;
	w->r.known = 0;
	for (size_t i = 0; i < sizeof(saved) / sizeof(saved[0]); i++) {
		unw_word_t v;
		if (unw_get_reg(&w->cur, saved[i], &v) == 0) {
			w->r.v[saved[i]] = v;
			w->r.known |= UREG_BIT(saved[i]);
		}
	}
	w->x.need_regs = need;
	w->x.stack_short = short_;
	w->x.no_module = nomod;
}

enum step { STEP_NEXT, STEP_OTHER, STEP_END };

/* Steps with libunwind.  STEP_OTHER: no FDE; the cursor's frame is in R. */
static enum step step_libunwind(struct walk *w, uint64_t ip, enum unwind_status *st)
{
	if (!w->in_cursor && cursor_start(w) < 0) {
		*st = end(w, UNWIND_PARTIAL);
		return STEP_END;
	}
	w->x.no_fde = 0;
	int r = unw_step(&w->cur);
	if (w->x.no_fde) {
		cursor_regs(w);
		return STEP_OTHER;
	}
	w->cursor_fresh = false;
	/* After a step, libunwind's signal-frame flag is that of the frame
	 * just left (its FDE has the 'S' augmentation): a trampoline.  Asked
	 * before the step, it would describe the frame below, one frame
	 * late: the interrupted frame got pc - 1 and its caller the raw
	 * return address. */
	int sig = unw_is_signal_frame(&w->cur) > 0;
	if (sig && w->ret_addr)
		w->pcs[w->n - 1] = ip;
	w->ret_addr = !sig;
	w->by_fp = false;
	if (r > 0)
		return STEP_NEXT;
	*st = r == 0 ? end(w, UNWIND_COMPLETE) : early_end(w);
	return STEP_END;
}

/* Steps by CFI row ROW (the current frame's registers in R). */
static enum step step_cfi(struct walk *w, const struct cfi_row *row, uint64_t ip,
			  enum unwind_status *st)
{
	struct uregs caller;
	int r = cfi_step(row, &w->r, &caller, read_word, &w->x);
	if (r == CFI_STEP_END || (r == CFI_STEP_OK && caller.v[UREG_RIP] == 0)) {
		*st = end(w, UNWIND_COMPLETE);      /* as libunwind: no caller */
		return STEP_END;
	}
	if (r == CFI_STEP_NEED_REG) {
		*st = lacks_reg(w);
		return STEP_END;
	}
	/* A frame is popped: the caller's SP is above (but where a signal
	 * frame restores the interrupted one, which may be anywhere). */
	if (r != CFI_STEP_OK || (!row->signal && caller.v[UREG_RSP] <= w->r.v[UREG_RSP])) {
		*st = early_end(w);
		return STEP_END;
	}
	/* The code these rows describe (Go's, a static program's) is called
	 * from code of a module, never from JIT code: a return address that
	 * is not in a module's executable segment is a wrong row's reading
	 * of a data word (Go's vDSO calls switch stacks under the row:
	 * [unknown]+0xc000... was a heap address), not a frame. */
	uint64_t ra = caller.v[UREG_RIP];
	const struct module *rm = row->signal || ra == 0 ? NULL : modules__find(w->u->ms, ra - 1);
	if (!row->signal && ra && (!rm || !module__is_code(rm, ra - 1))) {
		*st = early_end(w);
		return STEP_END;
	}
	if (row->signal && w->ret_addr)
		w->pcs[w->n - 1] = ip;
	w->ret_addr = !row->signal;
	w->by_fp = false;
	w->r = caller;
	return STEP_NEXT;
}

/* Steps a frame whose return address is at AT, known from its code (a
 * CPython trampoline): the caller's PC is the word there, its SP AT + 8,
 * its other registers this frame's. */
static enum step step_ra_at(struct walk *w, uint64_t at, enum unwind_status *st)
{
	uint64_t ra;
	if (read_stack(&w->x, at, &ra, true) < 0 || ra == 0) {
		*st = early_end(w);
		return STEP_END;
	}
	const struct module *rm = modules__find(w->u->ms, ra - 1);
	if (rm && !module__is_code(rm, ra - 1)) {
		*st = early_end(w);
		return STEP_END;
	}
	w->r.v[UREG_RIP] = ra;
	w->r.v[UREG_RSP] = at + 8;
	w->ret_addr = true;
	w->by_fp = false;
	return STEP_NEXT;
}

/* One frame-pointer step, checked (see struct walk). */
static enum step step_fp(struct walk *w, const struct module *m, enum unwind_status *st)
{
	uint64_t rbp = w->r.v[UREG_RBP], sp = w->r.v[UREG_RSP], ra, next_rbp;
	if (!(w->r.known & UREG_BIT(UREG_RBP))) {
		*st = lacks_reg(w);
		return STEP_END;
	}
	/* By the ABI's convention _start (and a thread's first function)
	 * clears RBP, so the frame-pointer chain ends with a saved RBP of 0:
	 * a frame of a module's code reached by a frame-pointer step with RBP
	 * 0 is the outermost one.  (Reached otherwise, its RBP may be 0 for
	 * any reason: code without frame pointers uses it freely.) */
	if (rbp == 0 && m && w->by_fp) {
		*st = end(w, UNWIND_COMPLETE);
		return STEP_END;
	}
	/* A frame past the copy ends the stack: growing the copy on the word
	 * of an RBP nothing vouches for would cost every later sample. */
	if (rbp == 0 || rbp % 8 || rbp < sp || read_stack(&w->x, rbp, &next_rbp, false) < 0 ||
	    read_stack(&w->x, rbp + 8, &ra, false) < 0 || ra == 0) {
		*st = early_end(w);
		return STEP_END;
	}
	const struct module *rm = modules__find(w->u->ms, ra - 1);
	if (rm && !module__is_code(rm, ra - 1)) {
		*st = early_end(w);
		return STEP_END;
	}
	w->r.v[UREG_RIP] = ra;
	w->r.v[UREG_RSP] = rbp + 16;
	w->r.v[UREG_RBP] = next_rbp;
	w->r.known = UREG_BIT(UREG_RIP) | UREG_BIT(UREG_RSP) | UREG_BIT(UREG_RBP);
	w->ret_addr = w->by_fp = true;
	return STEP_NEXT;
}

/* Steps a frame libunwind cannot (R holds its registers). */
static enum step step_other(struct walk *w, const struct module *m, uint64_t ip, uint64_t look,
			    enum unwind_status *st)
{
	const struct cfi_row *row;
	int root = m ? module__stack_root(m, look) : 0;
	w->x.no_fde = 0;
	if (root == MODULE_ROOT_TOP || ((root == MODULE_ROOT_SWITCH || root == MODULE_ROOT_JUMP) && w->n > 1)) {
		w->u->jumped = root == MODULE_ROOT_JUMP;
		w->u->jump_sp = w->r.known & UREG_BIT(UREG_RSP) ? w->r.v[UREG_RSP] : 0;
		*st = end(w, UNWIND_COMPLETE);
		return STEP_END;
	}
	if (m && (row = module__cfi_row(m, look)))
		return step_cfi(w, row, ip, st);
	if (w->n == 1 && newborn(&w->x, w->c)) {
		*st = end(w, UNWIND_COMPLETE);
		return STEP_END;
	}
	if (w->n == 1 && syscall_stub_caller(&w->x, w->c, &w->r) == 0) {
		w->ret_addr = true;
		w->by_fp = false;
		return STEP_NEXT;
	}
	uint64_t at;
	if (!m && py_trampoline_frame(&w->u->tramp, modules__pid(w->u->ms), ip, w->ret_addr,
				      w->r.v[UREG_RSP], &at))
		return step_ra_at(w, at, st);
	if (m && module__no_frame_pointers(m)) {
		*st = early_end(w);
		return STEP_END;
	}
	return step_fp(w, m, st);
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
	struct walk w = { .x = { .u = u, .c = c }, .u = u, .c = c, .pcs = pcs, .max = max };
	enum unwind_status st = UNWIND_PARTIAL;
	uregs_from_user(&w.r, c->regs,
			c->partial_regs ? UREG_BIT(UREG_RSP) | UREG_BIT(UREG_RIP) : UREG_ALL);
	u->stack_used = u->stack_need = 0;
	u->jumped = false;
	u->jump_sp = 0;
	*n = 0;
	if (max < 1)
		return UNWIND_TRUNCATED;
	for (;;) {
		unw_word_t ip = w.r.v[UREG_RIP];
		if (w.in_cursor && unw_get_reg(&w.cur, UNW_REG_IP, &ip) < 0)
			ip = 0;
		if (ip == 0) {
			st = end(&w, w.x.need_regs ? UNWIND_NEED_REGS : UNWIND_PARTIAL);
			break;
		}
		if (w.n == max) {
			st = end(&w, UNWIND_TRUNCATED);
			break;
		}
		/* A caller's PC is the return address, the instruction after
		 * the call, which may belong to the next line or function:
		 * look up pc - 1.  Not for the innermost frame, nor the frame a
		 * signal interrupted (its PC is where it will resume), nor the
		 * signal trampoline (__restore_rt: the kernel made the handler
		 * "return" to its first instruction; there was no call). */
		uint64_t look = w.ret_addr ? ip - 1 : ip;
		w.pcs[w.n++] = look;
		const struct module *m = find_module(&w.x, look);
		if (m || !w.by_fp)
			w.standing = w.n;
		enum step s = m && m->eh_frame_hdr ? step_libunwind(&w, ip, &st) : STEP_OTHER;
		if (s == STEP_OTHER) {
			if (w.in_cursor)
				cursor_regs(&w);
			s = step_other(&w, m, ip, look, &st);
		}
		if (s == STEP_END)
			break;
	}
	*n = w.n;
	return st;
}
