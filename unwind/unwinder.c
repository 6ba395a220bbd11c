/* unwinder: one unwind, a frame at a time, each stepped by the rule that
 * knows it (see "one unwind" below and unwinder.h); libunwind's side is
 * in unwind/libunwind.c, the capture's memory in unwind/capture.c. */
#include "unwind/unwinder.h"

#include <libunwind.h>
#include <stdlib.h>
#include <string.h>

#include "module/perfmap.h"
#include "util/timeutil.h"

#include "unwind/cfi.h"
#include "unwind/internal.h"
#include "unwind/py_trampoline.h"
#include "util/xalloc.h"

struct unwinder *unwinder__new(const struct modules *ms)
{
	struct unwinder *u = xcalloc(1, sizeof(*u));
	u->ms = ms;
	u->as = libunwind_space_new();
	if (!u->as) {
		free(u);
		return NULL;
	}
	return u;
}

void unwinder__free(struct unwinder *u)
{
	if (!u)
		return;
	unw_destroy_addr_space(u->as);
	py_trampolines_free(u->tramp);
	perfmap__free(u->jit);
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

uint64_t unwinder__far_need(const struct unwinder *u)
{
	return u->far_need;
}

bool unwinder__far_used(const struct unwinder *u)
{
	return u->far_used;
}

bool unwinder__rbp_found(const struct unwinder *u)
{
	return u->rbp_found;
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
static int after_syscall(struct unwind_ctx *x, uint64_t pc)
{
	unsigned char insn[2];
	const struct module *m = find_module(x, pc - 2);
	return m && module__read(m, pc - 2, insn, 2) == 0 && insn[0] == 0x0f && insn[1] == 0x05;
}

/* A thread just born from clone/clone3: it is at its first instruction, on
 * an empty stack.  That is its root. */
static int newborn(struct unwind_ctx *x, const struct unwind_input *c)
{
	return !c->partial_regs && c->regs->rax == 0 &&
	       (c->regs->orig_rax == 56 || c->regs->orig_rax == 435) && after_syscall(x, c->regs->rip);
}

/* R (the innermost frame, C's) becomes its caller's frame. */
static int syscall_stub_caller(struct unwind_ctx *x, const struct unwind_input *c,
			       struct uregs *r)
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

/* ---- JIT code ----------------------------------------------------------------
 * Code a JIT wrote: in a mapping with no ELF image (module->no_elf: PHP's
 * opcache buffer, Erlang's memfd), or outside every module where the
 * target's perf map names it.  The map is looked at again (one stat, and
 * what it gained) when it does not name a PC, at most every JIT_LOOK_NS:
 * code compiled after the start is known within that much. */
#define JIT_LOOK_NS 200000000ull

static bool jit_code(struct unwinder *u, const struct module *m, uint64_t pc)
{
	if (m)
		return m->no_elf;
	if (!u->jit)
		u->jit = perfmap__new(modules__pid(u->ms), false);
	if (perfmap__lookup(u->jit, pc))
		return true;
	uint64_t t = now_ns();
	if (u->jit_looked && t - u->jit_looked < JIT_LOOK_NS)
		return false;
	u->jit_looked = t;
	return perfmap__refresh(u->jit) && perfmap__lookup(u->jit, pc);
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
 * (executable segment), JIT code or outside every module.  A frame
 * reached that way stands if its PC is code of a module or JIT code (see
 * jit_code(): a mapping with no ELF image, or named by the perf map), so
 * a chain goes on through a JIT's frames for as long as it keeps frame
 * pointers (Erlang +JPperf true, V8); elsewhere it stands only if a later
 * frame does: a chain that fails before is cut back to the last frame
 * that stands, never kept as a guess.  A chain that ends with a saved RBP
 * of 0 at a frame that stands (module or JIT code, reached by a
 * frame-pointer step) has reached its outermost frame, by the ABI's
 * convention: complete. */
struct walk {
	struct unwind_ctx x;
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
	size_t rbp_at;          /* frames when RBP was found on the stack (0: not) */
	bool rbp_sure;          /* ... by a direct call of the frame's function */
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
	const struct unwind_ctx *x = &w->x;
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

/* ---- RBP of a blocked thread, from its stack ------------------------------
 * A thread sampled while blocked has only SP and PC (/proc).  Code built
 * with frame pointers (and -O0 code) has CFI that finds its frame by RBP
 * (CFA = RBP + 16), and the library code between it and the system call
 * leaves RBP as it was: the register is not on the stack, so it cannot be
 * unwound, and a stop (EINTR) was the only way.  But RBP points into the
 * stack: F (the frame that needs it, at SP and IP) pushed its caller's RBP
 * at its entry and set RBP to that slot, above its own locals, so RBP is
 * the lowest slot A >= SP whose next word is a return address into F's
 * caller.  Nothing vouches for a guess, so a slot is taken only if the
 * instruction before that return address is a direct call (E8 rel32) of
 * F's own first instruction (its FDE's start): a call to F from its
 * caller, as the frame must be.  A call through a pointer or a PLT stub
 * (another module) cannot be checked: no slot, and the stack ends there
 * (partial) as before.  What could still mislead it: a stale copy of such
 * a frame in F's uninitialized locals, from an earlier call of F by
 * another function at a deeper stack (not seen in the tests). */
#define RBP_SCAN_MAX (16 * 1024)

/* Whether the L bytes B end in an indirect call, FF /2 (call *r/m64), with
 * an optional REX prefix: its length decoded from ModRM (and SIB). */
static bool indirect_call(const unsigned char *b, size_t l)
{
	size_t i = (b[0] & 0xf0) == 0x40, len;
	if (l < i + 2 || b[i] != 0xff || ((b[i + 1] >> 3) & 7) != 2)
		return false;
	unsigned mod = b[i + 1] >> 6, rm = b[i + 1] & 7;
	len = i + 2;
	if (mod != 3 && rm == 4) {
		if (l < len + 1)
			return false;
		if (mod == 0 && (b[len] & 7) == 5)
			len += 4;       /* SIB without base: disp32 */
		len++;
	}
	if (mod == 0 && rm == 5)
		len += 4;               /* RIP-relative */
	len += mod == 1 ? 1 : mod == 2 ? 4 : 0;
	return len == l;
}

/* How the instruction before return address RA called: RBP_DIRECT a call
 * of START, RBP_INDIRECT through a pointer, 0 neither (not a return
 * address into F's caller). */
enum { RBP_DIRECT = 1, RBP_INDIRECT };
static int call_before(struct unwind_ctx *x, uint64_t ra, uint64_t start)
{
	unsigned char b[8];
	const struct module *m = ra > 8 ? find_module(x, ra - 1) : NULL;
	int32_t rel;
	if (!m || !module__is_code(m, ra - 1) || module__read(m, ra - 8, b, 8) != 0)
		return 0;
	memcpy(&rel, b + 4, 4);
	if (b[3] == 0xe8)
		return ra + (uint64_t)(int64_t)rel == start ? RBP_DIRECT : 0;
	for (size_t l = 2; l <= 8; l++)
		if (indirect_call(b + 8 - l, l))
			return RBP_INDIRECT;
	return 0;
}

/* The lowest slot from SP on that the call before its return address
 * vouches for; *HOW says how (RBP_DIRECT, RBP_INDIRECT). */
static bool find_rbp(struct walk *w, uint64_t sp, uint64_t start, uint64_t *rbp, int *how)
{
	for (uint64_t a = sp; a - sp < RBP_SCAN_MAX; a += 8) {
		uint64_t ra;
		if (read_stack(&w->x, a + 8, &ra, false) < 0)
			return false;
		if (ra > 8 && (*how = call_before(&w->x, ra, start))) {
			*rbp = a;
			return true;
		}
	}
	return false;
}

/* The cursor's step from F (at IP) needed RBP, which the capture lacks:
 * the cursor starts again at F with RBP found on the stack, if it can be
 * (see above).  Returns unw_step's result, or R as it was. */
static int step_with_rbp(struct walk *w, uint64_t ip, int r)
{
	unw_word_t sp;
	unw_proc_info_t pi;
	uint64_t rbp;
	int how;
	if (!w->c->partial_regs || w->rbp_at || (w->r.known & UREG_BIT(UREG_RBP)) ||
	    unw_get_reg(&w->cur, UNW_X86_64_RSP, &sp) < 0 || unw_get_proc_info(&w->cur, &pi) < 0 ||
	    !find_rbp(w, sp, pi.start_ip, &rbp, &how))
		return r;
	/* A call through a pointer names no callee: the slot is kept only if
	 * the stack then unwinds to its root (unwind()), else cut at F. */
	w->rbp_at = w->n;
	w->rbp_sure = how == RBP_DIRECT;
	w->r.v[UREG_RIP] = ip;
	w->r.v[UREG_RSP] = sp;
	w->r.v[UREG_RBP] = rbp;
	w->r.known = UREG_BIT(UREG_RIP) | UREG_BIT(UREG_RSP) | UREG_BIT(UREG_RBP);
	w->x.need_regs = 0;
	if (cursor_start(w) < 0)
		return r;
	w->u->rbp_found = true;
	w->x.no_fde = 0;
	return unw_step(&w->cur);
}

/* Steps with libunwind.  STEP_OTHER: no FDE; the cursor's frame is in R. */
static enum step step_libunwind(struct walk *w, uint64_t ip, enum unwind_status *st)
{
	if (!w->in_cursor && cursor_start(w) < 0) {
		*st = end(w, UNWIND_PARTIAL);
		return STEP_END;
	}
	w->x.no_fde = 0;
	int r = unw_step(&w->cur);
	if (r < 0 && w->x.need_regs)
		r = step_with_rbp(w, ip, r);
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
	if (rbp == 0 && w->by_fp && w->standing == w->n) {
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
	if (rm && !rm->no_elf && !module__is_code(rm, ra - 1)) {
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
	libunwind_quiet(true);
	enum unwind_status r = unwind(u, c, pcs, max, n);
	libunwind_quiet(false);
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
	u->far_need = 0;
	u->far_used = false;
	u->rbp_found = false;
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
		if ((m && !m->no_elf) || !w.by_fp || jit_code(u, m, look))
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
	if (w.rbp_at && !w.rbp_sure && st != UNWIND_COMPLETE) {
		w.n = w.rbp_at;
		st = st == UNWIND_STACK_SHORT ? st : UNWIND_PARTIAL;
		u->rbp_found = false;
	}
	*n = w.n;
	return st;
}

bool unwinder__py_trampoline(struct unwinder *u, uint64_t pc, bool innermost)
{
	uint64_t ra_at, at = innermost ? pc : pc + 1;
	return !modules__find(u->ms, pc) &&
	       py_trampoline_frame(&u->tramp, modules__pid(u->ms), at, !innermost, 0, &ra_at);
}
