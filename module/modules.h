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
	struct module_cfi *cfi;         /* see module__func_start(), module/ehframe.c */
};

struct modules;

/* An empty table for process PID (whose maps modules__refresh() reads). */
struct modules *modules__new(pid_t pid);
void modules__free(struct modules *ms);          /* accepts NULL */

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

const struct module *modules__find(const struct modules *ms, uint64_t addr);

/* The module of the program itself (/proc/PID/exe), or NULL. */
const struct module *modules__main(const struct modules *ms);
size_t modules__count(const struct modules *ms);
pid_t modules__pid(const struct modules *ms);
const struct module *modules__at(const struct modules *ms, size_t i);

/* Copies LEN bytes at runtime address ADDR of module M from its image.
 * Returns 0, or -1 if the range is not backed by the file. */
int module__read(const struct module *m, uint64_t addr, void *buf, size_t len);

/* ---- unwind tables (module/ehframe.c) ---- */

/* The binary-search table of M's .eh_frame_hdr, in runtime addresses:
 * FDE_COUNT pairs of (initial location, FDE address), both 4-byte signed
 * and relative to SEGBASE (the header's address), starting at TABLE.
 * Only the encodings every linker writes are accepted. */
struct eh_table {
	uint64_t segbase, table;
	uint32_t fde_count;
};
int module__eh_table(const struct module *m, struct eh_table *t);   /* 0 or -1 */

/* Where the function holding runtime address ADDR of M starts, from the
 * FDE that covers it (every compiled function has one, stripped or not):
 * false when none does.  The FDE is found in the .eh_frame_hdr table, and
 * that it covers ADDR is asked of libdw's CFI reader over the module's
 * image; at symbolization time, not while sampling. */
bool module__func_start(const struct module *m, uint64_t addr, uint64_t *start);

#endif
