/* golayout: where a Go program's goroutines are when it has no DWARF.
 *
 * Go binaries as distributions ship them (Debian's, release builds with
 * -ldflags='-s -w') have no DWARF, so nothing in them names the fields of
 * runtime.g.  They all keep three things: their Go version (the
 * .go.buildinfo section; runtime.buildVersion), .gopclntab (every
 * function, by name) and the runtime's own code.  So:
 *   - the offsets in runtime.g and runtime.m are a table per Go version,
 *     read from that version's src/runtime/runtime2.go (golayout__table());
 *   - the addresses of runtime.allgs and runtime.allglen are read from the
 *     code of runtime.allgadd, which appends to one and stores the other
 *     (golayout__allgadd()), unless .symtab names them; that code also
 *     says where g.atomicstatus is, which checks the table;
 *   - the waitReason strings and their count from runtime.waitReason.String
 *     (golayout__reasons()), unless .symtab names them.
 * Every parser here reads bytes of the program's file: bounded by the
 * length given, and fuzzed (tests/fuzz/fuzz_golayout.c). */
#ifndef CPROF_GOROUTINE_GOLAYOUT_H
#define CPROF_GOROUTINE_GOLAYOUT_H

#include <stddef.h>
#include <stdint.h>

#include "goroutine/goroutines.h"

/* The version in the LEN bytes of a .go.buildinfo section at SEC:
 *   "\xff Go buildinf:", pointer size, flags; since Go 1.18 (flags bit 2)
 *   the version inline at offset 32 (a uvarint length, the bytes); before,
 *   at offset 16 the address of a Go string (pointer, length) that holds it.
 * Returns 0 with the version in VER (NUL-terminated, at most VERLEN - 1
 * bytes, printable), 1 with the link-time address of the string header in
 * *STRADDR (the caller reads it: golayout__string()), or -EINVAL. */
int golayout__buildinfo(const unsigned char *sec, size_t len, char *ver, size_t verlen,
			uint64_t *straddr);

/* Copies the Go string of LEN bytes at DATA (its bytes, read by the
 * caller) into VER as golayout__buildinfo() would: -EINVAL when it is not
 * a version ("go1.", printable, fits). */
int golayout__string(const unsigned char *data, size_t len, char *ver, size_t verlen);

/* Go 1.MINOR from a version string ("go1.19.8", "go1.21rc2"), or -1. */
int golayout__minor(const char *ver);

/* The offsets of Go 1.MINOR's runtime.g and runtime.m (amd64) in L's
 * g_off[] and m_procid; the addresses are left as they are.  Returns 0, or
 * -ENOENT for a version with no table. */
int golayout__table(int minor, struct go_layout *l);
/* Whether Go 1.MINOR's pprof label sets are read: g.labels points to a
 * runtime/pprof labelMap, a map[string]string in the runtime's hash map
 * (runtime/map.go's hmap and buckets).  Go 1.19's (runtime/pprof/label.go,
 * runtime/map.go) only: the others were not at hand to read. */
int golayout__label_sets(int minor);

/* The versions with a table, for a note: "go1.17, go1.18, ..." in BUF
 * (LEN bytes, cut short if need be). */
void golayout__known(char *buf, size_t len);

/* From the LEN bytes of runtime.allgadd's code at link-time address ADDR:
 * the addresses of runtime.allgs (the slice the code appends to: three
 * words it loads and stores) and runtime.allglen (where it then stores the
 * slice's length; allgs + 8, the slice's own length, when that store is
 * not found), and in *STATUS the offset of g.atomicstatus (its first
 * 32-bit load from the g it is given: readgstatus(), UINT64_MAX when not
 * found).  Returns 0, or -ENOENT when the code is not as expected. */
int golayout__allgadd(const unsigned char *code, size_t len, uint64_t addr, uint64_t *allgs,
		      uint64_t *allglen, uint64_t *status);

/* From the LEN bytes of runtime.waitReason.String's code at ADDR: the
 * address of runtime.waitReasonStrings (the last RIP-relative lea) and
 * the number of strings (the bound it compares the reason with).
 * Returns 0, or -ENOENT. */
int golayout__reasons(const unsigned char *code, size_t len, uint64_t addr, uint64_t *table,
		      uint64_t *n);

/* Whether the LEN bytes of code at CODE read or write a field at offset
 * DISP of a pointer (mov, lea: a ModRM with a 32-bit displacement, or an
 * 8-bit one for DISP < 128; 8- to 64-bit): runtime.newproc1 sets g.goid,
 * g.gopc, g.startpc and copies g.labels, runtime.gopark sets g.waitreason,
 * runtime.gogo loads gobuf.bp, runtime.minit stores m.procid, so a table
 * whose offsets their code does not use is not this runtime's. */
int golayout__uses(const unsigned char *code, size_t len, uint32_t disp);

/* From the LEN bytes of runtime.schedinit's code at ADDR: the address of
 * runtime.buildVersion's string header (pointer, length), for a program
 * with neither .go.buildinfo nor .symtab (esbuild's releases since 0.27).
 * schedinit keeps the variable in the binary with
 *     if buildVersion == "" { buildVersion = "unknown" }
 * a cmpq $0 of its length and a movq $7 to the same word.  Returns 0 with
 * the address in *STR, or -ENOENT. */
int golayout__buildversion(const unsigned char *code, size_t len, uint64_t addr, uint64_t *str);

#endif
