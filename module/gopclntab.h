/* gopclntab: function names, files and lines of Go code from a Go
 * binary's .gopclntab section, the table Go's own runtime uses for its
 * tracebacks.  It survives `-ldflags='-s -w'`, which strips .symtab and
 * DWARF, so it is how a stripped Go program is named.
 *
 * The layouts read are the ones the header's magic number says (Go's
 * runtime/symtab.go and debug/gosym describe them): 0xfffffffb (Go 1.2 to
 * 1.15), 0xfffffffa (1.16, 1.17), 0xfffffff0 (1.18, 1.19) and 0xfffffff1
 * (1.20 and later), either byte order, 4- or 8-byte pointers.
 *
 * The section comes from the file, so from whoever wrote it: every offset
 * and count is checked against the section's length before it is used;
 * nothing is allocated but the handle; no lookup recurses or loops more
 * than the section's length allows.  Inlined calls are not expanded (their
 * tree is outside the section, in the binary's go:func.* data). */
#ifndef CPROF_MODULE_GOPCLNTAB_H
#define CPROF_MODULE_GOPCLNTAB_H

#include <stddef.h>
#include <stdint.h>

struct gopclntab;

/* A reader of the LEN bytes at DATA, which must outlive it.  TEXT_START is
 * the link-time address of the Go text (the runtime.text symbol, which is
 * where the .text section starts): Go 1.18+ tables give function entries
 * as offsets from it, and the header's own copy may be unrelocated.
 * Addresses given to and returned by the reader are link-time addresses
 * (ELF vaddr, no load bias).  NULL when DATA does not start with a header
 * of a known layout or its tables do not fit in LEN. */
struct gopclntab *gopclntab__new(const void *data, size_t len, uint64_t text_start);

/* The reader of a Go binary's table, found in the ELF file IMAGE (LEN
 * bytes, which must outlive it): the .gopclntab section (.data.rel.ro.
 * gopclntab in some PIE builds), else the range between the symbols
 * runtime.pclntab and runtime.epclntab; the text start is the
 * runtime.text symbol when .symtab has it, else the .text section's
 * address (a stripped binary keeps its section headers).  NULL when the
 * file is not a Go binary or its table is unreadable. */
struct gopclntab *gopclntab__from_elf(const void *image, size_t len);

void gopclntab__free(struct gopclntab *g);      /* accepts NULL */

/* The function holding PC: its name (Go's spelling, "main.main",
 * "runtime.gopark", "crypto/sha256.block"), its source file and line at
 * PC.  The strings point into the section (NUL-terminated, checked).
 * FILE may come back NULL and LINE 0 when the table has none for PC; any
 * of FUNC, FILE, LINE may be NULL.  Returns 0, -ENOENT when no function
 * covers PC, -EINVAL when the function's entry is malformed. */
int gopclntab__lookup(const struct gopclntab *g, uint64_t pc, const char **func,
		      const char **file, int *line);

/* The frame of the function holding PC, as Go's own unwinder finds it:
 * where the function starts and ends, and SPDELTA, how far below the
 * stack pointer at its entry the stack pointer is at PC (the pcsp table;
 * amd64 keeps the return address just above the entry's SP, so the
 * caller's frame is SP + SPDELTA + 8).  Any of START, END, SPDELTA may be
 * NULL.  Returns 0, -ENOENT when no function covers PC, -EINVAL when its
 * record or table is malformed (a negative or misaligned delta). */
int gopclntab__frame(const struct gopclntab *g, uint64_t pc, uint64_t *start, uint64_t *end,
		     uint32_t *spdelta);

/* The number of functions, and where the I-th one starts (0, or -ENOENT
 * past the end or for a malformed entry): for tests and the fuzzer. */
size_t gopclntab__count(const struct gopclntab *g);
int gopclntab__entry(const struct gopclntab *g, size_t i, uint64_t *pc);

#endif
