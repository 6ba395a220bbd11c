/* Reading a CRuby VM from outside (see vm.h).  The order of pointers
 * followed is CRuby 3.1's own: ruby_current_vm_ptr -> vm->ractor.main_ractor
 * -> ractor->threads.set (a ccan list of rb_thread_t, each linked by its
 * lt_node at offset 0) -> th->ec -> ec->cfp .. ec->vm_stack +
 * vm_stack_size (control frames grow down from the stack's end) ->
 * cfp->iseq -> iseq->body. */
#include "ruby/vm.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util/remote.h"
#include "util/xalloc.h"

int rb_vm__read_remote(void *ctx, uint64_t addr, void *buf, size_t len)
{
	return remote__read((pid_t)(intptr_t)ctx, addr, buf, len);
}

static int rd(const struct rb_vm *v, uint64_t addr, void *buf, size_t len)
{
	if (!addr || addr + len < addr)
		return -1;
	return v->read(v->ctx, addr, buf, len);
}

static int rd64(const struct rb_vm *v, uint64_t addr, uint64_t *out)
{
	return rd(v, addr, out, sizeof(*out));
}

/* ---- finding it ----------------------------------------------------------------- */

struct rb_vm *rb_vm__fake(const struct ruby_layout *l, rb_read_fn read, void *ctx, uint64_t vm_ptr)
{
	struct rb_vm *v = xcalloc(1, sizeof(*v));
	v->l = *l;
	v->read = read;
	v->ctx = ctx;
	v->vm_ptr = vm_ptr;
	return v;
}

void rb_vm__free(struct rb_vm *v)
{
	free(v);
}

/* ---- threads ---------------------------------------------------------------------- */

int rb_vm__threads(const struct rb_vm *v, struct rb_thread_raw *out, size_t max, uint64_t *gvl)
{
	const struct ruby_layout *l = &v->l;
	uint64_t vm, ractor, head, th;
	if (gvl)
		*gvl = 0;
	if (rd64(v, v->vm_ptr, &vm) < 0 || !vm || rd64(v, vm + l->vm_main_ractor, &ractor) < 0 ||
	    !ractor)
		return -1;
	head = ractor + l->ractor_threads;
	if (rd64(v, head, &th) < 0)
		return -1;
	if (gvl)
		rd64(v, ractor + l->ractor_gvl_owner, gvl);
	size_t n = 0;
	/* the list ends back at its head; a cycle elsewhere or a list longer
	 * than RB_MAX_THREADS ends at the bound */
	for (size_t i = 0; th && th != head && i < RB_MAX_THREADS; i++) {
		uint64_t ec = 0, pt = 0, next = 0, name = 0;
		int32_t tid = 0;
		if (rd64(v, th + l->th_ec, &ec) < 0 || rd64(v, th + l->th_pthread, &pt) < 0 ||
		    rd(v, th + l->th_tid, &tid, sizeof(tid)) < 0 || rd64(v, th, &next) < 0)
			break;
		if (l->th_name)
			rd64(v, th + l->th_name, &name);
		if (n < max)
			out[n++] = (struct rb_thread_raw){.th = th, .ec = ec, .pthread = pt, .tid = tid,
						   .name = name};
		if (next == th)
			break;
		th = next;
	}
	return (int)n;
}

int rb_vm__ractor(const struct rb_vm *v, uint64_t *ractor)
{
	uint64_t vm;
	*ractor = 0;
	if (rd64(v, v->vm_ptr, &vm) < 0 || !vm || rd64(v, vm + v->l.vm_main_ractor, ractor) < 0 ||
	    !*ractor)
		return -1;
	return 0;
}

int rb_vm__gvl(const struct rb_vm *v, uint64_t ractor, uint64_t *owner)
{
	*owner = 0;
	return rd64(v, ractor + v->l.ractor_gvl_owner, owner);
}

int rb_vm__ec(const struct rb_vm *v, uint64_t th, uint64_t *ec)
{
	*ec = 0;
	return rd64(v, th + v->l.th_ec, ec);
}

/* ---- frames ------------------------------------------------------------------------ */

size_t rb_vm__frames(const struct rb_vm *v, uint64_t ec, struct rb_frame_raw *out, size_t max,
		     bool *truncated)
{
	const struct ruby_layout *l = &v->l;
	uint64_t stack, size, cfp;
	*truncated = false;
	if (!ec || rd64(v, ec + l->ec_vm_stack, &stack) < 0 ||
	    rd64(v, ec + l->ec_vm_stack_size, &size) < 0 || rd64(v, ec + l->ec_cfp, &cfp) < 0)
		return 0;
	/* a VM stack is 1 MiB by default (RUBY_THREAD_VM_STACK_SIZE may raise
	 * it); more than 64 MiB is not one */
	if (!stack || size == 0 || size > (64u << 20) / 8 || stack + size * 8 < stack)
		return 0;
	uint64_t end = stack + size * 8;
	if (cfp < stack || cfp >= end || (end - cfp) % l->cfp_size)
		return 0;
	size_t all = (size_t)((end - cfp) / l->cfp_size), n = all;
	if (n > max) {
		n = max;
		*truncated = true;
	}
	if (!n)
		return 0;
	/* the frames in one read, 16 of them at a time; each frame's flags
	 * are its env's first word (ep[0]), and the envs of a run of frames
	 * lie together on the VM stack: read in one piece where they fit
	 * EP_SPAN, else (an env moved to the heap, large locals) one by one */
	enum { EP_SPAN = 4096 };
	unsigned char buf[16 * 64], env[EP_SPAN + 8];
	uint64_t eps[sizeof(buf) / 8];
	size_t per = sizeof(buf) / l->cfp_size, got = 0;
	if (per > sizeof(eps) / sizeof(eps[0]))
		per = sizeof(eps) / sizeof(eps[0]);
	while (got < n) {
		size_t k = n - got < per ? n - got : per;
		if (rd(v, cfp + got * l->cfp_size, buf, k * l->cfp_size) < 0)
			break;
		uint64_t lo = UINT64_MAX, hi = 0;
		for (size_t j = 0; j < k; j++) {
			memcpy(&eps[j], buf + j * l->cfp_size + l->cfp_ep, 8);
			if (eps[j] && eps[j] < lo)
				lo = eps[j];
			if (eps[j] > hi)
				hi = eps[j];
		}
		bool whole = hi && hi - lo <= EP_SPAN && rd(v, lo, env, hi - lo + 8) == 0;
		for (size_t j = 0; j < k; j++) {
			const unsigned char *f = buf + j * l->cfp_size;
			uint64_t pc, iseq, flags = 0;
			memcpy(&pc, f + l->cfp_pc, 8);
			memcpy(&iseq, f + l->cfp_iseq, 8);
			if (eps[j] && whole)
				memcpy(&flags, env + (eps[j] - lo), 8);
			else if (eps[j])
				rd64(v, eps[j], &flags);
			out[got + j] = (struct rb_frame_raw){.iseq = iseq, .pc = pc,
							     .flags = (uint32_t)flags};
		}
		got += k;
	}
	return got;
}

/* ---- names and lines --------------------------------------------------------------- */

int rb_vm__string(const struct rb_vm *v, uint64_t value, char *out, size_t len)
{
	const struct ruby_layout *l = &v->l;
	uint64_t flags;
	out[0] = 0;
	if (!len || !value || (value & 7) || rd64(v, value, &flags) < 0 ||
	    (flags & 0x1f) != RUBY_T_STRING)
		return -1;
	uint64_t n, at;
	if (flags & (1u << 13)) {       /* RSTRING_NOEMBED */
		if (rd64(v, value + l->str_len, &n) < 0 || rd64(v, value + l->str_ptr, &at) < 0)
			return -1;
	} else {
		n = (flags >> 14) & 0x1f;       /* RSTRING_EMBED_LEN */
		at = value + l->str_embed;
	}
	if (n > len - 1)
		n = len - 1;
	if (n > RB_MAX_STR)
		n = RB_MAX_STR;
	if (n && rd(v, at, out, (size_t)n) < 0)
		return -1;
	out[n] = 0;
	for (size_t i = 0; i < n; i++)
		if ((unsigned char)out[i] < 0x20 || out[i] == 0x7f)
			out[i] = '?';
	return 0;
}

static uint64_t iseq_body(const struct rb_vm *v, uint64_t iseq)
{
	uint64_t flags, body;
	if (!iseq || (iseq & 7) || rd64(v, iseq, &flags) < 0 || (flags & 0x1f) != RUBY_T_IMEMO ||
	    ((flags >> 12) & 0xf) != RUBY_IMEMO_ISEQ || rd64(v, iseq + v->l.iseq_body, &body) < 0)
		return 0;
	return body;
}

int rb_vm__iseq_name(const struct rb_vm *v, uint64_t iseq, char *label, size_t labellen,
		     char *path, size_t pathlen, int *first)
{
	const struct ruby_layout *l = &v->l;
	uint64_t body = iseq_body(v, iseq), pathobj, lab, lineno;
	label[0] = path[0] = 0;
	*first = 0;
	if (!body || rd64(v, body + l->body_pathobj, &pathobj) < 0 ||
	    rd64(v, body + l->body_label, &lab) < 0 || rd64(v, body + l->body_first_lineno, &lineno) < 0)
		return -1;
	rb_vm__string(v, lab, label, labellen);
	/* pathobj: the path, or [path, realpath] */
	uint64_t flags;
	if (pathobj && !(pathobj & 7) && rd64(v, pathobj, &flags) == 0 &&
	    (flags & 0x1f) == RUBY_T_ARRAY) {
		uint64_t elt = 0;
		if (flags & (1u << 13))         /* RARRAY_EMBED_FLAG */
			rd64(v, pathobj + l->ary_embed, &elt);
		else {
			uint64_t ptr;
			if (rd64(v, pathobj + l->ary_ptr, &ptr) == 0)
				rd64(v, ptr, &elt);
		}
		pathobj = elt;
	}
	rb_vm__string(v, pathobj, path, pathlen);
	if (lineno & 1)                 /* a Fixnum */
		*first = (int)((int64_t)lineno >> 1);
	return 0;
}

/* The succinct bitvector of iseq.c (3.1, VM_INSN_INFO_TABLE_IMPL 2): the
 * rank of position X, that is how many entries start at or before X.  An
 * immediate part for positions below 54 (6 words of 9 ranks of 7 bits),
 * then blocks of 512 positions: a rank (4 bytes, padded), 7 small-block
 * ranks of 9 bits and 8 words of bits: 80 bytes each. */
#define SUCC_IMM 54
#define SUCC_BLOCK 80
static int succ_rank(const struct rb_vm *v, uint64_t table, uint64_t x, uint32_t *rank)
{
	if (x < SUCC_IMM) {
		uint64_t w;
		if (rd64(v, table + (x / 9) * 8, &w) < 0)
			return -1;
		*rank = (uint32_t)((w >> ((x % 9) * 7)) & 0x7f);
		return 0;
	}
	uint64_t b = (x - SUCC_IMM) / 512, bit = (x - SUCC_IMM) % 512, small = bit / 64;
	unsigned char blk[SUCC_BLOCK];
	if (rd(v, table + (SUCC_IMM / 9) * 8 + b * SUCC_BLOCK, blk, sizeof(blk)) < 0)
		return -1;
	uint32_t r;
	uint64_t ranks, bits;
	memcpy(&r, blk, 4);
	memcpy(&ranks, blk + 8, 8);
	memcpy(&bits, blk + 16 + small * 8, 8);
	uint32_t sr = small ? (uint32_t)((ranks >> ((small - 1) * 9)) & 0x1ff) : 0;
	*rank = r + sr + (uint32_t)__builtin_popcountll(bits << (63 - bit % 64));
	return 0;
}

int rb_vm__line(const struct rb_vm *v, uint64_t iseq, uint64_t pc)
{
	const struct ruby_layout *l = &v->l;
	uint64_t body = iseq_body(v, iseq), enc, entries, positions, succ;
	uint32_t size;
	if (!body || rd64(v, body + l->body_encoded, &enc) < 0 ||
	    rd64(v, body + l->body_insns, &entries) < 0 ||
	    rd64(v, body + l->body_positions, &positions) < 0 ||
	    rd(v, body + l->body_insns_size, &size, 4) < 0 || rd64(v, body + l->body_succ, &succ) < 0)
		return 0;
	if (!entries || size == 0 || size > (1u << 24) || pc < enc || (pc - enc) % 8)
		return 0;
	uint64_t pos = (pc - enc) / 8;
	if (pos)                        /* the pc is past the instruction running */
		pos--;
	uint32_t idx = 0;
	if (size > 1) {
		if (positions) {        /* the plain table: the last entry at or before pos */
			uint32_t lo = 0, hi = size;
			while (hi - lo > 1) {
				uint32_t mid = lo + (hi - lo) / 2, p;
				if (rd(v, positions + (uint64_t)mid * 4, &p, 4) < 0)
					return 0;
				if (p <= pos)
					lo = mid;
				else
					hi = mid;
			}
			idx = lo;
		} else if (succ) {
			uint32_t rank;
			if (pos > (uint64_t)1 << 24 || succ_rank(v, succ, pos, &rank) < 0 || !rank)
				return 0;
			idx = rank - 1;
		} else {
			return 0;
		}
		if (idx >= size)
			return 0;
	}
	int32_t line;
	if (rd(v, entries + (uint64_t)idx * l->insn_entry_size, &line, 4) < 0 || line < 0)
		return 0;
	return line;
}
