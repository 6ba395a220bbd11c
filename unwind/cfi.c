#include "unwind/cfi.h"

#include <dwarf.h>
#include <elfutils/libdw.h>
#include <string.h>

#define EVAL_STACK 64
#define EVAL_STEPS 256
#define RULE_LOST (-1)          /* the caller's value cannot be had */

static int reg_value(const struct uregs *r, uint64_t reg, uint64_t *v)
{
	if (reg >= UREG_N || !(r->known & UREG_BIT(reg)))
		return CFI_STEP_NEED_REG;
	*v = r->v[reg];
	return CFI_STEP_OK;
}

/* The index of the operation at byte offset TARGET of the expression
 * (libdw keeps each one's offset), N when TARGET is its end, -1 if no
 * operation starts there.  A synthesized DW_OP_call_frame_cfa shares
 * offset 0 with the first real operation: the last one at an offset is
 * the one a branch means. */
static long branch_index(const Dwarf_Op *ops, size_t n, uint64_t target)
{
	long found = -1;
	for (size_t j = 0; j < n; j++)
		if (ops[j].offset == target)
			found = (long)j;
	if (found < 0 && n > 0 && target > ops[n - 1].offset)
		return (long)n;
	return found;
}

static int binary_op(uint8_t atom, uint64_t a, uint64_t b, uint64_t *r)
{
	switch (atom) {
	case DW_OP_and: *r = a & b; return 0;
	case DW_OP_or: *r = a | b; return 0;
	case DW_OP_xor: *r = a ^ b; return 0;
	case DW_OP_plus: *r = a + b; return 0;
	case DW_OP_minus: *r = a - b; return 0;
	case DW_OP_mul: *r = a * b; return 0;
	case DW_OP_shl: *r = b >= 64 ? 0 : a << b; return 0;
	case DW_OP_shr: *r = b >= 64 ? 0 : a >> b; return 0;
	case DW_OP_shra: *r = (uint64_t)((int64_t)a >> (b >= 63 ? 63 : b)); return 0;
	case DW_OP_div:
		if (b == 0 || ((int64_t)a == INT64_MIN && (int64_t)b == -1))
			return -1;
		*r = (uint64_t)((int64_t)a / (int64_t)b);
		return 0;
	case DW_OP_mod:
		if (b == 0)
			return -1;
		*r = a % b;
		return 0;
	case DW_OP_eq: *r = a == b; return 0;
	case DW_OP_ne: *r = a != b; return 0;
	case DW_OP_lt: *r = (int64_t)a < (int64_t)b; return 0;
	case DW_OP_le: *r = (int64_t)a <= (int64_t)b; return 0;
	case DW_OP_gt: *r = (int64_t)a > (int64_t)b; return 0;
	case DW_OP_ge: *r = (int64_t)a >= (int64_t)b; return 0;
	}
	return -1;
}

/* An operation that only moves the stack around; -1 if ATOM is not one,
 * -2 if it is but the stack is too short. */
static int stack_op(const Dwarf_Op *o, uint64_t *st, size_t *sp)
{
	uint64_t t;
	switch (o->atom) {
	case DW_OP_dup:
		if (*sp < 1 || *sp == EVAL_STACK)
			return -2;
		st[*sp] = st[*sp - 1];
		++*sp;
		return 0;
	case DW_OP_drop:
		if (*sp < 1)
			return -2;
		--*sp;
		return 0;
	case DW_OP_over:
	case DW_OP_pick: {
		uint64_t k = o->atom == DW_OP_over ? 1 : o->number;
		if (k >= *sp || *sp == EVAL_STACK)
			return -2;
		st[*sp] = st[*sp - 1 - k];
		++*sp;
		return 0;
	}
	case DW_OP_swap:
		if (*sp < 2)
			return -2;
		t = st[*sp - 1], st[*sp - 1] = st[*sp - 2], st[*sp - 2] = t;
		return 0;
	case DW_OP_rot:
		if (*sp < 3)
			return -2;
		t = st[*sp - 1];
		st[*sp - 1] = st[*sp - 2];
		st[*sp - 2] = st[*sp - 3];
		st[*sp - 3] = t;
		return 0;
	}
	return -1;
}

/* One operation that pushes a value computed from its operands, the
 * registers, the CFA or memory.  Returns a cfi_step_result, or -1 if ATOM
 * is none of those. */
static int value_op(const Dwarf_Op *o, uint64_t *st, size_t *sp, const struct uregs *r,
		    uint64_t cfa, bool have_cfa, cfi_read_fn rd, void *arg)
{
	uint8_t a = o->atom;
	uint64_t v, x;
	int res;
	if (a >= DW_OP_lit0 && a <= DW_OP_lit31) {
		v = a - DW_OP_lit0;
	} else if ((a >= DW_OP_breg0 && a <= DW_OP_breg31) || a == DW_OP_bregx) {
		uint64_t reg = a == DW_OP_bregx ? o->number : (uint64_t)(a - DW_OP_breg0);
		if ((res = reg_value(r, reg, &x)) != CFI_STEP_OK)
			return res;
		v = x + (a == DW_OP_bregx ? o->number2 : o->number);
	} else {
		switch (a) {
		case DW_OP_addr: case DW_OP_const1u: case DW_OP_const1s: case DW_OP_const2u:
		case DW_OP_const2s: case DW_OP_const4u: case DW_OP_const4s: case DW_OP_const8u:
		case DW_OP_const8s: case DW_OP_constu: case DW_OP_consts:
			v = o->number;
			break;
		case DW_OP_call_frame_cfa:
			if (!have_cfa)
				return CFI_STEP_BAD;
			v = cfa;
			break;
		default:
			return -1;
		}
	}
	if (*sp == EVAL_STACK)
		return CFI_STEP_BAD;
	st[(*sp)++] = v;
	return CFI_STEP_OK;
}

/* An operation on the top of the stack (unary, binary, dereference). */
static int top_op(const Dwarf_Op *o, uint64_t *st, size_t *sp, cfi_read_fn rd, void *arg)
{
	uint64_t v;
	if (*sp < 1)
		return CFI_STEP_BAD;
	uint64_t *top = &st[*sp - 1];
	switch (o->atom) {
	case DW_OP_deref:
	case DW_OP_deref_size: {
		uint64_t size = o->atom == DW_OP_deref ? 8 : o->number;
		if (size == 0 || size > 8 || rd(arg, *top, &v) != 0)
			return CFI_STEP_BAD;
		*top = size == 8 ? v : v & ((1ull << (8 * size)) - 1);
		return CFI_STEP_OK;
	}
	case DW_OP_abs: *top = (int64_t)*top < 0 ? -*top : *top; return CFI_STEP_OK;
	case DW_OP_neg: *top = -*top; return CFI_STEP_OK;
	case DW_OP_not: *top = ~*top; return CFI_STEP_OK;
	case DW_OP_plus_uconst: *top += o->number; return CFI_STEP_OK;
	}
	if (*sp < 2 || binary_op(o->atom, st[*sp - 2], *top, &v) != 0)
		return CFI_STEP_BAD;
	st[*sp - 2] = v;
	--*sp;
	return CFI_STEP_OK;
}

int cfi_eval(const void *opsv, size_t n, const struct uregs *r, uint64_t cfa, bool have_cfa,
	     cfi_read_fn rd, void *arg, uint64_t *out, bool *is_value)
{
	const Dwarf_Op *ops = opsv;
	uint64_t st[EVAL_STACK];
	size_t sp = 0, i = 0;
	*is_value = false;
	for (int steps = 0; i < n; steps++) {
		const Dwarf_Op *o = &ops[i];
		int res;
		if (steps == EVAL_STEPS)
			return CFI_STEP_BAD;
		if (o->atom == DW_OP_skip || o->atom == DW_OP_bra) {
			uint64_t cond = 1;
			if (o->atom == DW_OP_bra) {
				if (sp < 1)
					return CFI_STEP_BAD;
				cond = st[--sp];
			}
			long j = cond ? branch_index(ops, n, o->offset + 3 + (uint64_t)(int64_t)(int16_t)o->number)
				      : (long)i + 1;
			if (j < 0)
				return CFI_STEP_BAD;
			i = (size_t)j;
			continue;
		}
		if (o->atom == DW_OP_nop) {
			i++;
			continue;
		}
		if (o->atom == DW_OP_stack_value) {
			if (i != n - 1)
				return CFI_STEP_BAD;
			*is_value = true;
			break;
		}
		if ((res = stack_op(o, st, &sp)) == -2)
			return CFI_STEP_BAD;
		if (res == -1 && (res = value_op(o, st, &sp, r, cfa, have_cfa, rd, arg)) == -1)
			res = top_op(o, st, &sp, rd, arg);
		if (res != CFI_STEP_OK)
			return res;
		i++;
	}
	if (sp == 0)
		return CFI_STEP_BAD;
	*out = st[sp - 1];
	return CFI_STEP_OK;
}

static int cfa_of(const struct cfi_row *row, const struct uregs *cur, cfi_read_fn rd, void *arg,
		  uint64_t *cfa)
{
	const struct cfi_rule *c = &row->cfa;
	uint64_t v;
	bool is_value;
	int res;
	if (c->kind == CFI_VAL_OFFSET) {
		if ((res = reg_value(cur, c->reg, &v)) != CFI_STEP_OK)
			return res;
		*cfa = v + (uint64_t)c->off;
		return CFI_STEP_OK;
	}
	if (c->kind != CFI_VAL_EXPR)
		return CFI_STEP_BAD;
	/* DW_CFA_def_cfa_expression: the expression's value is the CFA. */
	return cfi_eval(c->expr, c->nexpr, cur, 0, false, rd, arg, cfa, &is_value);
}

/* The caller's value of one register: a cfi_step_result, or RULE_LOST. */
static int rule_value(const struct cfi_rule *rule, int dw, const struct uregs *cur, uint64_t cfa,
		      cfi_read_fn rd, void *arg, uint64_t *v)
{
	uint64_t x;
	bool is_value;
	int res;
	switch (rule->kind) {
	case CFI_SAME:
		return reg_value(cur, (uint64_t)dw, v) == CFI_STEP_OK ? CFI_STEP_OK : RULE_LOST;
	case CFI_OFFSET:
		return rd(arg, cfa + (uint64_t)rule->off, v) == 0 ? CFI_STEP_OK : CFI_STEP_BAD;
	case CFI_VAL_OFFSET:
		*v = cfa + (uint64_t)rule->off;
		return CFI_STEP_OK;
	case CFI_REGISTER:
		return reg_value(cur, rule->reg, v);
	case CFI_EXPR:
	case CFI_VAL_EXPR:
		if ((res = cfi_eval(rule->expr, rule->nexpr, cur, cfa, true, rd, arg, &x, &is_value)) !=
		    CFI_STEP_OK)
			return res;
		if (is_value) {
			*v = x;
			return CFI_STEP_OK;
		}
		return rd(arg, x, v) == 0 ? CFI_STEP_OK : CFI_STEP_BAD;
	}
	return RULE_LOST;
}

int cfi_step(const struct cfi_row *row, const struct uregs *cur, struct uregs *caller,
	     cfi_read_fn rd, void *arg)
{
	uint64_t cfa;
	int res = cfa_of(row, cur, rd, arg, &cfa);
	if (res != CFI_STEP_OK)
		return res;
	memset(caller, 0, sizeof(*caller));
	for (int i = 0; i < CFI_NREGS; i++) {
		int dw = cfi_dwarf_reg[i];
		uint64_t v;
		/* The return address must come from the frame, not be the
		 * callee's own PC: that would be the same frame again. */
		if (i == CFI_RA && row->regs[i].kind == CFI_SAME)
			return CFI_STEP_BAD;
		if (i == CFI_RA && row->regs[i].kind == CFI_UNDEFINED)
			return CFI_STEP_END;
		res = rule_value(&row->regs[i], dw, cur, cfa, rd, arg, &v);
		if (res == CFI_STEP_OK) {
			caller->v[dw] = v;
			caller->known |= UREG_BIT(dw);
		} else if (i == CFI_RA) {
			return res == CFI_STEP_NEED_REG ? res : CFI_STEP_BAD;
		}
	}
	/* On x86-64 the caller's stack pointer is the CFA (libdw's default
	 * rule says so; a row may say otherwise, as a signal frame's does). */
	uint8_t k = row->regs[CFI_RSP].kind;
	if (k == CFI_SAME || k == CFI_UNDEFINED) {
		caller->v[UREG_RSP] = cfa;
		caller->known |= UREG_BIT(UREG_RSP);
	}
	return CFI_STEP_OK;
}
