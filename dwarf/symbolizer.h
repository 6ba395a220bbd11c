/* symbolizer: addresses to function names, source files and lines, with
 * libdwfl (elfutils).
 *
 * Built once, at the end of a run, from the modules the target had mapped
 * (module/modules.h): each module's already-open file is reported to libdwfl,
 * so deleted files and other mount namespaces work, and the target need
 * not be alive.  Separate debug info is found the standard way
 * (.gnu_debuglink, /usr/lib/debug/.build-id/).  Every result is cached by
 * address: the work grows with unique addresses, not with samples. */
#ifndef CPROF_DWARF_SYMBOLIZER_H
#define CPROF_DWARF_SYMBOLIZER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "module/modules.h"

struct sym_frame {
	const char *func;       /* demangled; "module+0xOFF" when unknown; never "" */
	const char *file;       /* source file, or NULL */
	int line;               /* 0 when unknown */
};

struct symbolizer;

/* MS must outlive the symbolizer.  Code in no module (JIT compilers,
 * interpreters), or in a mapping with no ELF image (a memfd, a deleted
 * or /dev/zero shared mapping: PHP's opcache JIT, Erlang's), is named from
 * the target's /tmp/perf-PID.map when it wrote one (module/perfmap.h:
 * who may have written it, how much of it is read).  The map is read at
 * the first such lookup, and again, for what it gained, at the first of
 * each naming pass (symbolizer__new_pass): an address that the map did
 * not name, or named, is named again once the map changed.
 *
 * Separate debug files are looked for where other elfutils tools look
 * (the module's own directory, its .debug/, /usr/lib/debug), and in the
 * NDIRS absolute directories DIRS: by build ID (DIR/.build-id/xx/rest.debug)
 * and by .gnu_debuglink; with DEBUGINFOD_URLS set, from debuginfod
 * servers by build ID (libdwfl's client; see dwarf/debuginfod.h).
 *
 * Code without a symbol is named "module+0xSTART", where START is where
 * its function starts (its FDE, module__fde_floor(): one frame per function, not
 * one per instruction), and a stripped executable's entry function
 * "_start". */
struct symbolizer *symbolizer__new(const struct modules *ms, const char *const *dirs,
				   size_t ndirs, char *err, size_t errlen);

void symbolizer__free(struct symbolizer *s);     /* accepts NULL */

/* Frames for ADDR (a PC already adjusted to lie inside its instruction,
 * see unwind/unwinder.h), innermost first: inlined functions first, the
 * function that holds the code last.  Returns how many (at least 1).  The
 * strings belong to S and live as long as it; the array is valid until the
 * next lookup. */
size_t symbolizer__lookup(struct symbolizer *s, uint64_t addr, const struct sym_frame **frames);

/* A naming pass begins (a period's profile): the perf map is looked at
 * again (one stat when it did not change) at its next use. */
void symbolizer__new_pass(struct symbolizer *s);

#endif
