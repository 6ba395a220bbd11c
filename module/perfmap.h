/* perfmap: a JIT's /tmp/perf-PID.map (perf's convention: "START SIZE NAME"
 * lines, hex numbers), read as it grows.
 *
 * A JIT appends to its map for as long as it compiles (node
 * --perf-basic-prof, Erlang +JPperf, PHP opcache.jit_debug), and some write
 * it only when asked (JVM `jcmd PID Compiler.perfmap`), after the profiler
 * started.  perfmap__refresh() looks at the file (one stat) and reads only
 * what was appended since its last read, so it can be called between ticks
 * or at each naming pass: when the file has not changed it costs one stat.
 * A file replaced (another inode) or cut (shorter, the same size with
 * another mtime, or longer with other bytes where the last read ended: a
 * JVM's Compiler.perfmap run again) is read again from its start: its old
 * entries are dropped.
 * Only complete lines are taken (a JIT caught mid-line has its line read
 * at the next refresh, once its newline is there); lines longer than 4 KiB
 * are skipped; at most PERFMAP_MAX bytes of one file are read (a note says
 * so).  Where entries overlap, the one written last wins (regenerated
 * code): each entry keeps its line's order.
 *
 * The map of process PID is read only if it is a regular file (never
 * through a symbolic link, never a FIFO, never a hard link) owned by root,
 * by the profiler's user or by the target's (perf's rule), in the target's
 * /tmp (its mount namespace, its own PID) else in ours; a map refused or
 * cut prints one note ("cprof-attach: note: ...") on stderr, once per
 * file, when NOTES. */
#ifndef CPROF_MODULE_PERFMAP_H
#define CPROF_MODULE_PERFMAP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

/* The most of one map read: about a million entries of node's. */
#define PERFMAP_MAX (64u << 20)

struct perfmap;

/* Process PID's map; nothing is read before the first refresh. */
struct perfmap *perfmap__new(pid_t pid, bool notes);
/* The map at PATH, with no ownership check, at most MAX bytes of it (for
 * the unit tests). */
struct perfmap *perfmap__at_path(const char *path, size_t max);
void perfmap__free(struct perfmap *pm);          /* accepts NULL */

/* Reads what the file gained since the last call.  Returns true when the
 * entries changed (then perfmap__generation() has moved). */
bool perfmap__refresh(struct perfmap *pm);

/* Changes to the entries so far: a name cached from the map is stale once
 * it differs. */
uint64_t perfmap__generation(const struct perfmap *pm);

/* The name of the code at ADDR (cleaned, never ""), or NULL.  Valid until
 * the next refresh. */
const char *perfmap__lookup(const struct perfmap *pm, uint64_t addr);

size_t perfmap__count(const struct perfmap *pm);
/* Bytes of the current file consumed (complete lines). */
uint64_t perfmap__offset(const struct perfmap *pm);

#endif
