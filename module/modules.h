/* modules: the target's executable modules, read from /proc/PID/maps.
 *
 * A module is one ELF file (or the vDSO) mapped into the target.  Files are
 * opened once, through /proc/PID/map_files/ (works for deleted or replaced
 * files) or /proc/PID/root/PATH (the target's mount namespace), and kept
 * open and mapped read-only for the whole run: the unwinder reads
 * .eh_frame_hdr, .eh_frame and code bytes from the image, and the
 * symbolizer reports the same file to libdwfl, so neither depends on the
 * target still being alive at the end.  The vDSO has no file: its bytes are
 * copied from the target's memory. */
#ifndef CPROF_MODULE_MODULES_H
#define CPROF_MODULE_MODULES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

struct map_entry {
	uint64_t start, end, offset, inode;
	unsigned major, minor;
	int exec;                       /* 'x' in the permissions */
	char path[4096];                /* "" for anonymous mappings */
};

/* Parses one line of /proc/PID/maps (trailing newline optional).
 * Returns 0, or -EINVAL for a malformed line. */
int maps__parse_line(const char *line, struct map_entry *e);

struct segment {
	uint64_t vaddr, filesz, offset;
};

struct module {
	char *path;                     /* as the maps file spells it: to open */
	char *shown;                    /* path made safe to show (util/text.h) */
	const char *name;               /* basename of shown, inside shown */
	uint64_t start, end;            /* lowest and highest address mapped */
	uint64_t bias;                  /* runtime address = ELF vaddr + bias */
	uint64_t inode;
	int fd;                         /* the opened file, -1 for the vDSO */
	const unsigned char *image;     /* whole file (mmap) or vDSO copy */
	size_t image_len;
	struct segment *segs;           /* PT_LOAD segments */
	size_t nsegs;
	uint64_t eh_frame_hdr;          /* runtime address, 0 if none */
	/* The GNU build ID in hex; else a Go program's Go build ID (the
	 * .note.go.buildid string `go tool buildid` prints); "" if none. */
	char build_id[128];
	int usable;                     /* image parsed, bias known */
	/* Mapped code with no ELF image: a memfd, a deleted or /dev/zero
	 * shared mapping, any file that is not ELF (a JIT's code buffer:
	 * PHP's opcache, Erlang's BeamAsm).  Named from the perf map,
	 * unwound through by frame pointer as JIT code is. */
	int no_elf;
	unsigned refs;                  /* tables holding it (modules__copy): atomic */
	struct unwind_info *unwind;     /* made on first use (module/unwind_info.c) */
};

struct modules;

/* An empty table for process PID (whose maps modules__refresh() reads). */
struct modules *modules__new(pid_t pid);
void modules__free(struct modules *ms);          /* accepts NULL */
/* A new table for PID holding the modules of FROM: the same modules, not
 * opened again (each is freed with the last table holding it).  A new
 * generation of an address space is a copy, then modules__refresh(): only
 * the files that changed are opened. */
struct modules *modules__copy(const struct modules *from, pid_t pid);
/* A copy of FROM that no one changes, for naming while the owner of FROM
 * goes on (run/naming.h): its version is its own, never a live table's
 * nor another snapshot's.  Made while FROM's owner is paused; freed by
 * any thread (the modules' counts of tables holding them are atomic: the
 * last table to go frees a module, whichever thread drops it). */
struct modules *modules__snapshot(const struct modules *from);

#define MODULES_SAME 0
#define MODULES_ADDED 1                 /* files mapped where nothing was */
#define MODULES_REPLACED 2              /* a file mapped over another's range */

/* (Re-)reads /proc/PID/maps and adds the modules not seen before; a module
 * whose range is now taken by another file is replaced (see
 * modules__scan: a caller that keeps samples of the old one makes a new
 * table instead).  PID is the table's own process or one that shares its
 * address space layout (a child forked from it).  Returns MODULES_*, or a
 * negative errno (the process is gone). */
int modules__refresh(struct modules *ms, pid_t pid);

/* Compares /proc/PID/maps with the table without changing it: MODULES_*,
 * or a negative errno. */
int modules__scan(const struct modules *ms, pid_t pid);

/* The same, and the ranges [start, end) of the modules of the table that a
 * file now covers (MODULES_REPLACED) in RANGES (MAX of them; *N is how many
 * there are, more than MAX when they did not all fit).  A caller that holds
 * no sample with an address in them may replace them in place
 * (modules__refresh) instead of making a new table. */
int modules__scan_replaced(const struct modules *ms, pid_t pid, uint64_t (*ranges)[2], size_t max,
			   size_t *n);

/* Changes made to the table so far (modules added, replaced): a cache
 * built from the table is stale once it differs. */
uint64_t modules__version(const struct modules *ms);

const struct module *modules__find(const struct modules *ms, uint64_t addr);

/* The module of the program itself (/proc/PID/exe), or NULL. */
const struct module *modules__main(const struct modules *ms);
size_t modules__count(const struct modules *ms);
pid_t modules__pid(const struct modules *ms);
const struct module *modules__at(const struct modules *ms, size_t i);

/* Copies LEN bytes at runtime address ADDR of module M from its image.
 * Returns 0, or -1 if the range is not backed by the file. */
int module__read(const struct module *m, uint64_t addr, void *buf, size_t len);

/* ---- symbols (module/symbols.c) ---- */

/* The runtime address (and, if SIZE, the size) of the symbol NAME defined
 * in M, from .dynsym, else .symtab.  Returns 0, or -1 when M has none of
 * that name.  A linear search: for a runtime's view at its start, not for
 * naming. */
int module__symbol(const struct module *m, const char *name, uint64_t *addr, uint64_t *size);

/* ---- unwind tables (module/cfi_rows.c) ---- */

/* The binary-search table of M's .eh_frame_hdr, in runtime addresses:
 * FDE_COUNT pairs of (initial location, FDE address), both 4-byte signed
 * and relative to SEGBASE (the header's address), starting at TABLE.
 * Only the encodings every linker writes are accepted. */
struct eh_table {
	uint64_t segbase, table;
	uint32_t fde_count;
};
int module__eh_table(const struct module *m, struct eh_table *t);   /* 0 or -1 */

/* The start of the last FDE of M's .eh_frame_hdr table that starts at or
 * below runtime address ADDR: where ADDR's function starts if that FDE
 * covers ADDR (every compiled function has one, stripped or not), which
 * the caller asks of a CFI reader of its own (the symbolizer's libdwfl:
 * the module's own reader is the unwinder's, in the sampler's thread).
 * Reads only the module's image: safe from any thread. */
bool module__fde_floor(const struct module *m, uint64_t addr, uint64_t *start);

/* Whether ELF's .eh_frame (ELF: any handle on a module's file) can be
 * read: it exists as a section and names no register a CFI reader would
 * make room for at great cost.  Asked before libdw reads a target's CFI
 * (without the section, libdw would read from the program headers on,
 * unchecked). */
struct Elf;
bool module__eh_frame_sane(struct Elf *elf);

/* ---- unwind info libunwind does not read (module/unwind_info.c) ----
 * libunwind finds FDEs through .eh_frame_hdr only.  Static binaries have
 * .eh_frame without it; Go binaries have .debug_frame only (often
 * compressed), or not even that (-ldflags=-w).  libdw reads both
 * (module/cfi_rows.c), and Go's .gopclntab gives the same rows from its
 * frame sizes (module/gopclntab_rows.c): these are rule sets, per address,
 * for the unwinder to apply itself (unwind/cfi.c). */

/* How the caller's value of a register is found, given the CFA:
 *   CFI_UNDEFINED   lost (a call-clobbered register)
 *   CFI_SAME        unchanged: the callee's value
 *   CFI_OFFSET      saved at [CFA + off]
 *   CFI_VAL_OFFSET  is CFA + off (the CFA itself: reg + off)
 *   CFI_REGISTER    in register reg
 *   CFI_EXPR        saved at the address EXPR computes (CFA pushed first)
 *   CFI_VAL_EXPR    is the value EXPR computes (the CFA: no push)
 * EXPR is libdw's Dwarf_Op array, NEXPR long, alive as long as the module. */
enum cfi_rule_kind {
	CFI_UNDEFINED, CFI_SAME, CFI_OFFSET, CFI_VAL_OFFSET, CFI_REGISTER, CFI_EXPR, CFI_VAL_EXPR,
};
struct cfi_rule {
	uint8_t kind;
	uint8_t reg;
	int64_t off;
	const void *expr;
	size_t nexpr;
};

/* The registers a row describes, and their DWARF numbers (cfi_dwarf_reg):
 * the callee-saved ones, the stack pointer and the return address (the
 * caller's PC).  Any other register is undefined in the caller. */
enum { CFI_RBX, CFI_RBP, CFI_RSP, CFI_R12, CFI_R13, CFI_R14, CFI_R15, CFI_RA, CFI_NREGS };
extern const uint8_t cfi_dwarf_reg[CFI_NREGS];

struct cfi_row {
	struct cfi_rule cfa;            /* CFI_VAL_OFFSET (reg + off) or CFI_VAL_EXPR */
	struct cfi_rule regs[CFI_NREGS];
	bool signal;                    /* a signal trampoline (FDE augmentation 'S') */
};

/* The row of M's CFI that holds at runtime address PC: from .eh_frame
 * when M has no .eh_frame_hdr (else libunwind reads it), from
 * .debug_frame, or, in a Go program without .debug_frame, from
 * .gopclntab.  Rows are cached per module (libdw runs the CFA program once
 * per PC).  Returns NULL when no FDE (no Go function) covers PC; the row
 * stays valid until the next call for M. */
const struct cfi_row *module__cfi_row(const struct module *m, uint64_t pc);

/* Whether ADDR is in an executable segment of M (PT_LOAD with PF_X). */
bool module__is_code(const struct module *m, uint64_t addr);

/* ---- known roots (module/roots.c) ---- */

/* Whether PC is in a function where stacks end by design, though the
 * unwind info does not say so, as Go's own tracebacks stop there:
 *   MODULE_ROOT_TOP     Go's TOPFRAME functions: runtime.goexit (the root
 *                       of every goroutine), runtime.mstart and
 *                       runtime.rt0_go (of the system stacks),
 *                       runtime.sigtramp;
 *   MODULE_ROOT_SWITCH  those that switched to the system stack, above
 *                       which the stack is not this one: runtime.mcall,
 *                       runtime.asmcgocall.
 *   MODULE_ROOT_JUMP    the same for runtime.systemstack and
 *                       runtime.morestack, but there the goroutine the
 *                       thread runs is still its own: Go's tracebacks go
 *                       on from its saved context (g.sched), and so must
 *                       a sample to be whole (see unwinder__jumped()).
 *                       Also, in a static musl program, musl's frames
 *                       that call main and a thread's function
 *                       (libc_start_main_stage2, start, start_c11):
 *                       musl's code has no unwind info to go further.
 * Found by name in .symtab, in Go programs (.note.go.buildid or
 * .gopclntab; in .gopclntab when .symtab is stripped) and in static
 * programs that have libc_start_main_stage2.  Returns 0 elsewhere. */
enum { MODULE_ROOT_TOP = 1, MODULE_ROOT_SWITCH = 2, MODULE_ROOT_JUMP = 3 };
int module__stack_root(const struct module *m, uint64_t pc);

/* Whether M's code without unwind info keeps no frame pointers either, so
 * that RBP says nothing there: musl's code in a static musl program
 * (Debian's libc.a is built with neither), found with its roots.  A
 * frame-pointer step there would need a stop for RBP (EINTR for a blocked
 * thread) for nothing. */
bool module__no_frame_pointers(const struct module *m);

/* Where Go's runtime.systemstack is in M (runtime addresses, [*LO, *HI)),
 * found as the roots above are: its code says where the runtime keeps the
 * goroutine a thread runs (goroutine/curg.h).  -ENOENT if M has none. */
int module__go_systemstack(const struct module *m, uint64_t *lo, uint64_t *hi);

#endif
