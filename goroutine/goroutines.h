/* goroutines: a Go program's goroutines, read from outside while it runs.
 *
 * The runtime keeps every goroutine it ever made in runtime.allgs (a slice
 * of *runtime.g, runtime.allglen long); each g holds its status, its id,
 * why it waits, its stack bounds and, when it is not running, the context
 * it will resume from (g.sched: PC, SP, BP).  Where these are in memory is
 * read from the program's own DWARF (types runtime.g, runtime.gobuf,
 * runtime.stack, runtime.m; variables runtime.allgs, runtime.allglen,
 * runtime.waitReasonStrings); a program without DWARF (built with
 * -ldflags=-w, as distributions and release builds are) gets the table of
 * its Go version and the addresses its runtime's code says
 * (goroutine/golayout.h), and is refused with a note only when its
 * version has no table.  Memory is read with process_vm_readv while the program runs:
 * no thread is stopped.  What is read may change while it is read (the
 * runtime does not stop for us): callers re-read a record after copying a
 * stack and keep the sample only when it did not change. */
#ifndef CPROF_GOROUTINE_GOROUTINES_H
#define CPROF_GOROUTINE_GOROUTINES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

struct module;
struct goroutines;

/* Go's goroutine status values (runtime2.go; stable since Go 1.2), without
 * the _Gscan bit (0x1000), which is dropped when a record is read. */
enum {
	GO_IDLE = 0, GO_RUNNABLE = 1, GO_RUNNING = 2, GO_SYSCALL = 3, GO_WAITING = 4,
	GO_DEAD = 6, GO_COPYSTACK = 8, GO_PREEMPTED = 9,
};

/* One goroutine's record, as read. */
struct go_rec {
	uint64_t g;                     /* its address */
	int64_t goid;
	uint32_t status;                /* GO_*, _Gscan dropped */
	uint8_t reason;                 /* waitReason, when GO_WAITING */
	uint64_t pc, sp, bp;            /* g.sched: where it resumes */
	uint64_t lo, hi;                /* g.stack */
	uint64_t m;                     /* the M running it, or 0 */
	uint64_t startpc;               /* its function */
	uint64_t gopc;                  /* after the go statement that made it (a return
					   address: look up gopc - 1), or 0 */
	uint64_t labels;                /* g.labels: its pprof label set (pprof.Do,
					   SetGoroutineLabels), or 0 (none, or not read) */
	bool read;                      /* goroutines__scan(): read at this scan */
	bool unchanged;                 /* ... and every byte read is as at the last */
};

/* The reader for process PID whose program is MAIN (its module in the
 * target's table: file and load bias).  NULL when it is not a Go program
 * or its DWARF lacks what is needed; then NOTE (if not NULL) says why in
 * one line. */
struct goroutines *goroutines__new(pid_t pid, const struct module *main, char *note,
				   size_t notelen);
void goroutines__free(struct goroutines *gs);    /* accepts NULL */

/* Where the records are, as goroutines__new() reads it from the program's
 * DWARF: the offsets in runtime.g of stack.lo, stack.hi, m, sched.sp,
 * sched.pc, sched.bp, atomicstatus, goid, waitreason, startpc and gopc (in
 * this order), of procid in runtime.m, and the runtime addresses of
 * runtime.allgs, runtime.allglen and runtime.waitReasonStrings (NREASONS
 * entries; 0 for none). */
#define GO_G_FIELDS 11
struct go_layout {
	uint64_t g_off[GO_G_FIELDS];
	uint64_t m_procid;
	uint64_t allgs, allglen, reasons;
	uint64_t nreasons;
	uint64_t g_labels;              /* offset of g.labels, whose set is a
					   map[string]string as Go 1.17 to 1.23 keep it;
					   0: labels not read */
};

/* The layouts goroutines__new() chooses between, for tests and
 * tests/bin/golayout: the one the DWARF of the file FD says, and the one
 * without DWARF for program MAIN (its version's table, the addresses from
 * .symtab or the runtime's code; its Go version in VER).  Addresses are
 * link-time (no load bias).  Returns 0, or a negative errno with NOTE. */
int goroutines__dwarf_layout(int fd, struct go_layout *l, char *note, size_t notelen);
int goroutines__nodwarf_layout(const struct module *main, struct go_layout *l, char *ver,
			       size_t verlen, char *note, size_t notelen);

/* The reader of process PID with layout L, which may be anything the
 * program says (the DWARF is the program's): NULL when it cannot be right,
 * and NOTE (if not NULL) says why.  Without goroutines__new()'s program,
 * goroutines__func_name() and goroutines__is_system() know no function:
 * for tests and the fuzzer. */
struct goroutines *goroutines__from_layout(pid_t pid, const struct go_layout *l, char *note,
					   size_t notelen);

/* Reads the goroutines' records into an array owned by GS, indexed as
 * runtime.allgs is (a g keeps its index: allgs only grows), its length in
 * *N; records not read this time have .read false.  A record whose fields
 * are all as at the previous scan (those set with its goid, startpc and
 * gopc, are not compared) has .unchanged (its fields are then as they
 * were).  Returns 0, or a negative errno (the process is gone, or
 * allgs could not be read). */
int goroutines__scan(struct goroutines *gs, const struct go_rec **recs, size_t *n);

/* At the last scan: the entries of runtime.allgs that named a goroutine
 * listed before (read and counted once), and allglen as read (refused when
 * above GOROUTINES_MAX: the scan's -EINVAL). */
#define GOROUTINES_MAX (1u << 20)
uint64_t goroutines__duplicates(const struct goroutines *gs);
uint64_t goroutines__listed(const struct goroutines *gs);
/* At the last scan: the records not read, their turn not come (with more
 * than 16,384 goroutines, those last seen waiting are read 16,384 a scan,
 * in turn): they count as unchanged. */
uint64_t goroutines__carried(const struct goroutines *gs);

/* Reads the record of the goroutine at address G again, into R. */
int goroutines__read(struct goroutines *gs, uint64_t g, struct go_rec *r);

/* The TID of the thread behind M (m.procid), or 0 if unknown. */
pid_t goroutines__m_tid(struct goroutines *gs, uint64_t m);

/* The pprof labels of set LABELS (a record's .labels): "KEY=VALUE" lines
 * joined by '\n', sorted by key, at most GOROUTINE_LABELS_MAX of them,
 * each key and value at most 64 bytes, made printable ('=' and '\n' in
 * a key become '_'), owned by GS (kept while the set is, by address);
 * NULL for none, or a set that cannot be read. */
#define GOROUTINE_LABELS_MAX 8
const char *goroutines__labels(struct goroutines *gs, uint64_t labels);

/* Why a goroutine waits (Go's own words: "chan receive", "sleep",
 * "sync.Mutex.Lock", ...), or NULL for an unknown reason. */
const char *goroutines__reason(const struct goroutines *gs, uint8_t reason);

/* Whether R is a system goroutine, which runtime.GoroutineProfile leaves
 * out: its function is the runtime's own (runtime.*, but runtime.main). */
int goroutines__is_system(struct goroutines *gs, const struct go_rec *r);

/* The name of the Go function holding runtime address PC, or NULL. */
const char *goroutines__func_name(struct goroutines *gs, uint64_t pc);

#endif
