/* frames: a profile whose frames have names, what every writer takes.
 *
 * Made from the counted stacks and the symbolizer of each address space
 * (frames__from_stacks), or from a profile file (--convert:
 * output/readers.h).  A location is one address with its function levels,
 * innermost first (inlined functions, then the function that holds the
 * code), as pprof has them; a stack is a list of locations, leaf first.
 * Writers that print frames root first (folded, svg, speedscope) walk a
 * stack with frames__root_first(). */
#ifndef CPROF_OUTPUT_FRAMES_H
#define CPROF_OUTPUT_FRAMES_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>

#include "dwarf/symbolizer.h"
#include "module/modules.h"
#include "profile/stacks.h"

#define FRAMES_NO_LABEL UINT32_MAX
#define FRAMES_NO_MODULE (-1)

struct frame_line {
	const char *func;               /* never NULL or "" */
	const char *file;               /* or NULL */
	int line;                       /* 0: unknown */
};

struct frame_module {
	const char *path;               /* as the target's maps spell it */
	const char *name;               /* its last component */
	const char *build_id;           /* hex, "" if none */
	uint64_t start, end;
};

struct frame_loc {
	uint64_t addr;                  /* 0: none (a frame read from a file) */
	int32_t module;                 /* FRAMES_NO_MODULE or an index */
	uint32_t first, n;              /* its lines, innermost first */
};

struct frame_stack {
	uint32_t label;                 /* FRAMES_NO_LABEL or a label index */
	char state;                     /* /proc state letter */
	int syscall;                    /* the system call it was blocked in, or -1 */
	const char *rt_state;           /* a runtime's word (stacks__rt_state()), or NULL */
	const uint32_t *locs;           /* leaf first */
	size_t n;
	uint64_t count, cpu_ns;
};

/* One level of a stack as the root-first walk gives it. */
struct frame_ref {
	const struct frame_line *line;
	const struct frame_module *module;      /* NULL: none */
};

struct frames;

struct frames *frames__new(void);
void frames__free(struct frames *fr);           /* accepts NULL */

/* Names every stack of ST.  A stack's PCs belong to address space
 * stack.space, whose modules are SPACES[space] (NULL: names are
 * "[unknown]"); debug files are also looked for in the NDIRS directories
 * DIRS (see dwarf/symbolizer.h).  Each address is symbolized once, however
 * many stacks hold it, and each file once, however many spaces map it. */
struct frames *frames__from_stacks(const struct stacks *st, const struct modules *const *spaces,
				   size_t nspaces, const char *const *dirs, size_t ndirs);

/* The same, for a run that names many profiles (one per period): what
 * naming learns, each space's symbolizer and its cache of every address it
 * named, is kept in NC from one call to the next, so a profile costs the
 * addresses it is the first to hold.  SPACES must be the same tables
 * (grown, not replaced) at each call with NC, or tables of another
 * version (modules__version: a snapshot's is its own), but for those
 * given to names__forget(); NC is one thread's at a time. */
struct names;
struct names *names__new(const char *const *dirs, size_t ndirs);       /* DIRS must outlive it */
void names__free(struct names *nc);             /* accepts NULL */
/* Space SPACE's table is gone (its index may come back with another):
 * its symbolizer and what it named are dropped, and a file first seen
 * there is homed anew where it is next seen. */
void names__forget(struct names *nc, uint32_t space);
struct frames *frames__name(struct names *nc, const struct stacks *st,
			    const struct modules *const *spaces, size_t nspaces);

/* Building (strings are copied).  Returns the new index. */
int32_t frames__add_module(struct frames *fr, const struct frame_module *m);
uint32_t frames__add_loc(struct frames *fr, uint64_t addr, int32_t module,
			 const struct frame_line *lines, size_t n);
uint32_t frames__add_label(struct frames *fr, const struct stack_label *l);
void frames__add_stack(struct frames *fr, const struct frame_stack *s);  /* locs copied */
void frames__set_main_module(struct frames *fr, int32_t module);

/* Reading. */
size_t frames__nstacks(const struct frames *fr);
void frames__stack(const struct frames *fr, size_t i, struct frame_stack *out);
size_t frames__nlocs(const struct frames *fr);
const struct frame_loc *frames__loc(const struct frames *fr, uint32_t id);
const struct frame_line *frames__line(const struct frames *fr, uint32_t i);
/* How folded and svg show line LN of location L: its function, and for an
 * interpreter's frame (no address, a file) "func (file:LINE)" as py-spy
 * prints them, the file shortened to what follows the interpreter's
 * library directory or site-packages (else its base name), ":LINE" left
 * out when unknown.  Into BUF (LEN bytes) when it is not FUNC itself. */
const char *frames__shown(const struct frame_loc *l, const struct frame_line *ln, char *buf,
			  size_t len);
size_t frames__nlines(const struct frames *fr);
size_t frames__nmodules(const struct frames *fr);
const struct frame_module *frames__module(const struct frames *fr, int32_t id);  /* NULL: none */
int32_t frames__main_module(const struct frames *fr);   /* FRAMES_NO_MODULE if unknown */
size_t frames__nlabels(const struct frames *fr);
const struct stack_label *frames__label(const struct frames *fr, uint32_t label);  /* or NULL */
uint64_t frames__total(const struct frames *fr);         /* samples */
int frames__several_processes(const struct frames *fr);  /* labels of more than one PID */

/* The walk every root-first writer shares: the levels of S from the root
 * down, each location's inlined levels expanded (outermost first).  The
 * array is BUF, grown as needed (free it when done); returns its length. */
size_t frames__root_first(const struct frames *fr, const struct frame_stack *s,
			  struct frame_ref **buf, size_t *cap);

/* "NAME (TID)", a thread's root frame; "NAME (other threads)" for a label
 * shared by many threads (TID 0). */
void frames__thread_text(const struct stack_label *l, char *buf, size_t size);
/* "NAME (PID)", a process's root frame. */
void frames__process_text(const struct stack_label *l, char *buf, size_t size);

#endif
