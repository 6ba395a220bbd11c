/* symbolizer: addresses to function names, source files and lines, with
 * libdwfl (elfutils).
 *
 * Built once, at the end of a run, from the modules the target had mapped
 * (attach/maps.h): each module's already-open file is reported to libdwfl,
 * so deleted files and other mount namespaces work, and the target need
 * not be alive.  Separate debug info is found the standard way
 * (.gnu_debuglink, /usr/lib/debug/.build-id/).  Every result is cached by
 * address: the work grows with unique addresses, not with samples. */
#ifndef CPROF_DWARF_SYMBOLIZER_H
#define CPROF_DWARF_SYMBOLIZER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "attach/maps.h"

struct sym_frame {
	const char *func;       /* demangled; "module+0xOFF" when unknown; never "" */
	const char *file;       /* source file, or NULL */
	int line;               /* 0 when unknown */
};

struct symbolizer;

/* MS must outlive the symbolizer.  Code in no module (JIT compilers,
 * interpreters) is named from the target's /tmp/perf-PID.map when it
 * wrote one (perf's convention: "START SIZE NAME" lines, hex). */
struct symbolizer *symbolizer__new(const struct modules *ms, char *err, size_t errlen);

/* Directories to search for separate debug files besides the standard ones
 * (the module's own directory, its .debug/, /usr/lib/debug): by build ID
 * (DIR/.build-id/xx/rest.debug) and by .gnu_debuglink.  For all
 * symbolizers created afterwards; DIRS must be absolute. */
void symbolizer__set_debug_dirs(const char *const *dirs, size_t n);

/* How to find where the function holding an address starts (from its
 * FDE: the unwinder knows).  Code without a symbol is then named
 * "module+0xSTART", one frame per function rather than one per
 * instruction, and a stripped executable's entry function "_start".
 * Without it, "module+0xADDRESS". */
typedef bool symbolizer_func_start_fn(void *arg, uint64_t addr, uint64_t *start);
void symbolizer__set_func_start(struct symbolizer *s, symbolizer_func_start_fn *fn, void *arg);

/* A symbolizer without modules, for stacks whose frames are names already
 * (folded input): symbolizer__name_addr() gives each name an address that
 * symbolizer__lookup() turns back into it. */
struct symbolizer *symbolizer__new_names(void);
uint64_t symbolizer__name_addr(struct symbolizer *s, const char *name);
void symbolizer__free(struct symbolizer *s);     /* accepts NULL */

/* Frames for ADDR (a PC already adjusted to lie inside its instruction,
 * see unwind/unwinder.h), innermost first: inlined functions first, the
 * function that holds the code last.  Returns how many (at least 1).  The
 * strings belong to S and live as long as it; the array is valid until the
 * next lookup. */
size_t symbolizer__lookup(struct symbolizer *s, uint64_t addr, const struct sym_frame **frames);

/* The program's own module, or NULL. */
const struct module *symbolizer__main_module(const struct symbolizer *s);

/* The module holding ADDR, or NULL. */
const struct module *symbolizer__module(const struct symbolizer *s, uint64_t addr);

#endif
