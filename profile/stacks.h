/* stacks: samples counted by (thread, address space, state, stack) as they
 * come, and the labels of the threads and processes they came from.
 *
 * Each distinct PC sequence of each thread is stored once with a count,
 * so memory grows with unique stacks, not with samples.  Nothing here
 * knows ptrace or symbols: the sampler adds, the writers read (after
 * dwarf/ has named the PCs). */
#ifndef CPROF_PROFILE_STACKS_H
#define CPROF_PROFILE_STACKS_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

/* The last PC of a stack that was cut (at --max-depth, or where the stack
 * copy ran out): shown as "[truncated]". */
#define STACKS_PC_TRUNCATED ((uint64_t)-1)

/* A frame that is not a machine address: a kernel function (from
 * /proc/PID/task/TID/stack, which gives names), an interpreter's function,
 * file and line read from its memory.  This bit and the frame's id in the
 * table (stacks__symbolic()).  User addresses on x86-64 never have it;
 * STACKS_PC_TRUNCATED is checked first.  A table that ages (stacks__age())
 * frees the frames no stack it keeps names: they follow the stacks, not
 * every function (and line) ever sampled. */
#define STACKS_PC_SYMBOLIC (1ull << 63)

/* What a symbolic frame says: its function, and where it is when known
 * (FILE and LINE; MODULE, a name such as a Python file's or "[kernel]",
 * or NULL). */
struct stacks_frame {
	const char *func, *file, *module;
	int line;
};

/* Address spaces: up to 2^24 (one per program image a process ran). */
#define STACKS_MAX_SPACES (1u << 24)

struct stacks;

/* One unique stack: a thread, the address space its PCs belong to, the
 * state it was in, its PCs. */
struct stack {
	uint32_t slot;                  /* the thread: see stacks__label() */
	uint32_t space;                 /* which module table the PCs are in */
	char state;                     /* /proc state letter: R, S, D, T, ... */
	int syscall;                    /* the system call it was blocked in, or -1 */
	uint32_t rt_state;              /* a runtime's word on it: stacks__rt_state(), or 0 */
	const uint64_t *pcs;            /* innermost first */
	size_t n;
	uint64_t count;                 /* samples (ticks) */
	uint64_t cpu_ns;                /* CPU time the thread used in them */
};

/* What a slot stands for: one thread of one process, or, past the
 * sampler's limit of labels, every later thread of one name (tid 0). */
struct stack_label {
	pid_t pid, tid;
	int64_t unit_id;                /* a runtime's unit (UNIT: a goroutine): its id;
					   -1 for every later one of a function; 0 for a
					   thread */
	const char *process;            /* the process's title, or its command name */
	const char *thread;             /* the thread's name */
	const char *origin;             /* a unit's: the function that made it (Go's
					   "created by"), or NULL */
	const char *comm;               /* the process's command name, when process is
					   the title it set ("nginx: worker process"); or
					   NULL */
	const char *unit;               /* with a unit_id: what the unit is ("goroutine") */
	const char *rt_thread;          /* a runtime's own names for the thread or unit, "KEY=VALUE"
					   lines joined by a newline (a goroutine's pprof labels)
					   ("python_thread=worker-1"), or NULL */
};

struct stacks *stacks__new(void);
void stacks__free(struct stacks *st);            /* accepts NULL */

/* Counts S->count samples of S (its pcs are copied) and adds S->cpu_ns.
 * Returns the stack's id (>= 0: the same id for the same key, for
 * stacks__add_again()), or -ENOMEM. */
int64_t stacks__add(struct stacks *st, const struct stack *s);

/* Counts COUNT more samples of the stack with id ID (from stacks__add())
 * and adds CPU_NS: the same key again, without copying or hashing it. */
void stacks__add_again(struct stacks *st, int64_t id, uint64_t count, uint64_t cpu_ns);

/* Ids handed out so far: every stack's id is below it (after
 * stacks__age(), some below it are free: stacks__exists()). */
size_t stacks__unique(const struct stacks *st);
uint64_t stacks__total(const struct stacks *st);

/* The stack with id I; its pcs point into ST (valid until it is aged
 * out).  A free id gives an empty stack (n 0, count 0). */
void stacks__get(const struct stacks *st, size_t i, struct stack *out);
int stacks__exists(const struct stacks *st, size_t i);

/* Sets the label of SLOT (strings copied).  Slots without one have none. */
void stacks__set_label(struct stacks *st, uint32_t slot, const struct stack_label *l);
/* The label of SLOT, or NULL. */
const struct stack_label *stacks__label(const struct stacks *st, uint32_t slot);

/* The PC standing for kernel function NAME (interned: one id per name),
 * or STACKS_PC_TRUNCATED when out of memory. */
uint64_t stacks__kernel_pc(struct stacks *st, const char *name);
/* The "PC" of symbolic frame F (its strings are copied): always the same
 * for the same frame; STACKS_PC_TRUNCATED when out of memory. */
uint64_t stacks__symbolic_pc(struct stacks *st, const struct stacks_frame *f);
/* The frame a STACKS_PC_SYMBOLIC PC stands for: 0, or -1 for any other PC.
 * Its strings live as long as ST. */
int stacks__symbolic(const struct stacks *st, uint64_t pc, struct stacks_frame *out);

/* The code of a runtime's word NAME on a sample: a goroutine's state in
 * Go's words ("running", "chan receive", "sleep", ...), which stands for
 * the thread's state, or "KEY=VALUE", a label of its own ("gil=held"):
 * interned, never 0; 0 when out of memory.  stacks__rt_state_name() gives
 * the name back (NULL for 0). */
uint32_t stacks__rt_state(struct stacks *st, const char *name);
const char *stacks__rt_state_name(const struct stacks *st, uint32_t code);

/* ---- always on: counts taken and zeroed while counting goes on ----
 * Besides its count for the whole run, each stack has a count since the
 * last take.  A take moves those counts, of the stacks counted since, into
 * a slice and zeroes them: each sample is in exactly one slice.  A slice
 * is ids and counts, and a profile of any run of slices is stacks__view()
 * of them: the ids stay valid as long as a slice holding them is kept
 * (see stacks__age()). */
struct stacks_slice {
	int64_t *ids;
	uint64_t *counts, *cpu;
	size_t n;
	uint64_t total;                 /* samples */
	uint64_t start_ns, end_ns;      /* CLOCK_REALTIME: what it covers (the taker's) */
	uint64_t epoch;                 /* stacks__epoch() while it was counted */
};

/* Fills OUT (its arrays allocated) with the counts since the last take and
 * zeroes them.  Its time range is left to the caller. */
void stacks__take(struct stacks *st, struct stacks_slice *out);
void stacks__slice_free(struct stacks_slice *sl);        /* its arrays; accepts NULL */

/* A table of its own holding the stacks of the N slices SLICES (of ST),
 * with their counts summed, and the labels, kernel names and goroutine
 * states of ST: what a writer names and writes.  NULL when out of memory. */
struct stacks *stacks__view(const struct stacks *st, const struct stacks_slice *const *slices,
			    size_t n);

/* ---- aging: a table that does not grow for ever ----
 * Epochs count the takes: counting goes into epoch stacks__epoch(), and
 * a take ends it (the slice has its number).  Each stack remembers the
 * last epoch it was counted in.  Every stack of a slice of epoch E was
 * counted in E, so a stack last counted before the epoch of the oldest
 * slice kept is in no slice kept: stacks__age(BEFORE) frees those, and
 * their ids are handed out again (to new stacks) by stacks__add().  The
 * caller keeps the ids it holds elsewhere (a thread's last stack, a
 * goroutine's) with stacks__keep() first: exact, and cheap (a walk of the
 * ids, once per take).  The whole-run counts (stacks__get's count) of the
 * stacks freed are gone: a run that writes the whole run's profile at the
 * end must not age. */
uint64_t stacks__epoch(const struct stacks *st);
/* Stack ID counts as counted now (an id held by a cache). */
void stacks__keep(struct stacks *st, int64_t id);
/* Frees every stack last counted (or kept) before epoch BEFORE; returns
 * how many.  Call right after a take (no stack counted since). */
size_t stacks__age(struct stacks *st, uint64_t before);
size_t stacks__live(const struct stacks *st);   /* stacks held now */
/* Symbolic frames held now; and a number that moves on whenever aging
 * freed some: a cache of symbolic PCs (a runtime's, by code object) is
 * dropped when it changes (a PC of a frame freed names nothing). */
size_t stacks__symbolic_live(const struct stacks *st);
uint64_t stacks__symbolic_gen(const struct stacks *st);

/* The name of a state letter: "running", "sleeping", "disk wait", ... */
const char *stacks__state_name(char state);

#endif
