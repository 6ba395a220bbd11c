/* rt_syms: a runtime view's cache of the symbolic frames it made (each a
 * symbolic PC of the stack table, profile/stacks.h), by two keys and a
 * serial (CPython: code object, instruction, the code object's serial;
 * PHP: function, opline, its serial; Ruby: iseq and pc; Java: method and
 * bci or pc), and its few fixed frames ("[python call, gone before it was
 * read]").  All of it is dropped once the stack table's aging freed
 * symbolic frames (stacks__symbolic_gen): a PC kept from before would name
 * nothing, or another frame. */
#ifndef CPROF_SAMPLE_RT_SYMS_H
#define CPROF_SAMPLE_RT_SYMS_H

#include <stdint.h>

struct stacks;

#define RT_SYMS_SLOTS (1u << 14)
#define RT_SYMS_FIXED 4

struct rt_sym {
	uint64_t a, b, pc;
	uint32_t serial;
};

struct rt_syms {
	struct rt_sym *slot;            /* RT_SYMS_SLOTS, one entry a hash */
	uint64_t fixed[RT_SYMS_FIXED];
	uint64_t gen;                   /* stacks__symbolic_gen() when filled */
};

void rt_syms__init(struct rt_syms *c);
void rt_syms__free(struct rt_syms *c);

/* The PC cached for (A, B, SERIAL), or 0 with *SLOT the entry to fill
 * (rt_syms__put) once the frame is made. */
uint64_t rt_syms__get(struct rt_syms *c, struct stacks *st, uint64_t a, uint64_t b, uint32_t serial,
		      struct rt_sym **slot);

static inline uint64_t rt_syms__put(struct rt_sym *slot, uint64_t a, uint64_t b, uint32_t serial,
				    uint64_t pc)
{
	*slot = (struct rt_sym){ a, b, pc, serial };
	return pc;
}

/* Everything dropped now (a runtime whose names can change under the same
 * keys: Java's redefined classes). */
void rt_syms__clear(struct rt_syms *c);

/* Fixed frame I (below RT_SYMS_FIXED), named NAME: made once a generation. */
uint64_t rt_syms__fixed(struct rt_syms *c, struct stacks *st, unsigned i, const char *name);

#endif
