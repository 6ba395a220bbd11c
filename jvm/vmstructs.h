/* vmstructs: the tables HotSpot exports for readers outside the JVM (the
 * Serviceability Agent's way in): gHotSpotVMStructs (every field the SA
 * reads: its type, name, offset, or the address of a static),
 * gHotSpotVMTypes (each type's size), gHotSpotVMIntConstants and
 * gHotSpotVMLongConstants, each an array whose entries' layout the library
 * exports too (gHotSpotVMStructEntryTypeNameOffset, ...ArrayStride).  Read
 * once from the target, bounded: no offset is written in our code for
 * what the tables give. */
#ifndef CPROF_JVM_VMSTRUCTS_H
#define CPROF_JVM_VMSTRUCTS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Reads LEN bytes at ADDR of the target into BUF: 0, or < 0. */
typedef int (*jvm_read_fn)(void *ctx, uint64_t addr, void *buf, size_t len);

#define JVM_MAX_ENTRIES 16384   /* a table longer than this is not one */
#define JVM_MAX_NAME 128        /* a type or field name longer is not one */

/* Where the tables are: the addresses of the exported variables (each
 * holds a pointer to its array, or a layout number), as libjvm.so's
 * dynamic symbols give them in the target. */
struct jvm_symbols {
	uint64_t structs, types, ints, longs;
	/* gHotSpotVMStructEntry{TypeName,FieldName,TypeString,IsStatic,
	 * Offset,Address}Offset, ...ArrayStride */
	uint64_t s_type, s_field, s_typestr, s_static, s_offset, s_address, s_stride;
	/* gHotSpotVMTypeEntry{TypeName,Size}Offset, ...ArrayStride */
	uint64_t t_name, t_size, t_stride;
	/* gHotSpotVMIntConstantEntry{Name,Value}Offset, ...ArrayStride; Long */
	uint64_t i_name, i_value, i_stride, l_name, l_value, l_stride;
};

struct jvm_structs;

/* The tables of the target read by READ(CTX), or NULL (WHY says why in one
 * line). */
struct jvm_structs *jvm_structs__read(const struct jvm_symbols *sym, jvm_read_fn read, void *ctx,
				      char *why, size_t whylen);
void jvm_structs__free(struct jvm_structs *js);

/* Field TYPE::FIELD: its offset (*STATIC_ADDR 0), or, a static, its
 * address (*OFFSET 0).  0, or -1: not in the table. */
int jvm_structs__field(const struct jvm_structs *js, const char *type, const char *field,
		       uint64_t *offset, uint64_t *static_addr);
/* The offset of TYPE::FIELD, or UINT64_MAX when not in the table. */
uint64_t jvm_structs__offset(const struct jvm_structs *js, const char *type, const char *field);
/* The address of static TYPE::FIELD, or 0. */
uint64_t jvm_structs__static(const struct jvm_structs *js, const char *type, const char *field);
/* The size of TYPE, or 0 when not in the table. */
uint64_t jvm_structs__size(const struct jvm_structs *js, const char *type);
/* Constant NAME (int or long table): 0, or -1 when not there. */
int jvm_structs__constant(const struct jvm_structs *js, const char *name, int64_t *value);
/* Counts: fields, types, constants. */
void jvm_structs__counts(const struct jvm_structs *js, size_t *fields, size_t *types,
			 size_t *constants);

#endif
