/* symcache: libdwfl's symbol answers, kept per function.
 *
 * dwfl_module_addrinfo() finds an address's symbol by going through every
 * symbol of the module, twice (globals, then locals): on a large binary
 * (Debian's mariadbd) that was half of the profiler's CPU.  Its answer for
 * one address holds for every address of the answering symbol's range
 * when that range is "clean": no other symbol starts inside it or overlaps
 * it in part (symbols that contain it whole, and aliases, are candidates
 * for every address of it alike, so libdwfl chooses among them alike).
 * The module's sized symbols are listed once (dwfl_module_getsym_info),
 * sorted, each range marked clean or not.  A clean range that no other
 * holds is named without asking, by libdwfl's own choice among its
 * aliases (globals before locals, then the strongest binding, then the
 * first in the table); a clean range inside another is asked once and
 * libdwfl's answer kept when it is the range's own; all are found by
 * binary search.  An address in no symbol (most of a stripped program's)
 * is known to be in none without asking: no sized range holds it and no
 * sizeless one (an assembly label) names it.  Other addresses, and every
 * address of a range with a label inside, go to libdwfl, as before. */
#ifndef CPROF_DWARF_SYMCACHE_H
#define CPROF_DWARF_SYMCACHE_H

#include <elfutils/libdwfl.h>
#include <stdint.h>

struct symcache;

/* The ranges of MOD's sized symbols, or NULL (no symbol table). */
struct symcache *symcache__new(Dwfl_Module *mod);
void symcache__free(struct symcache *c);        /* accepts NULL */

/* ADDR's symbol as libdwfl would give it: 1, *NAME and *OFF (its offset
 * into the symbol); 0: none (ADDR is in no symbol: no sized one holds it,
 * no assembly label names it); -1: not known, ask libdwfl (then
 * symcache__keep() its answer). */
int symcache__find(const struct symcache *c, uint64_t addr, const char **name, uint64_t *off);

/* libdwfl named an address NAME, in the symbol [START, START + SIZE):
 * kept for every address of that range if it is clean.  NAME must live as
 * long as the module (libdwfl's strings do). */
void symcache__keep(struct symcache *c, uint64_t start, uint64_t size, const char *name);

#endif
