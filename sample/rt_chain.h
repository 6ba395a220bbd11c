/* rt_chain: a running thread's chain of interpreter calls, read until it
 * holds still (the Python and PHP views: sample/rt_python.c, rt_php.c).
 *
 * Read right after a perf sample, the thread runs on: a call made or
 * returned from while its chain is read tears the read.  So the chain is
 * read until two reads in a row are whole (read to their outermost call)
 * and alike (the same calls, each at the same instruction but the
 * innermost, which ran on), and then the thread's current call and its
 * link, read again, are still those (STILL).  After RT_CHAIN_TRIES reads,
 * only the outer calls two whole reads in a row agreed on are kept (the
 * same calls, the same instructions but in the innermost of them: its
 * callers had to wait for it), and the read is torn.  A thread that
 * cannot run is read once. */
#ifndef CPROF_SAMPLE_RT_CHAIN_H
#define CPROF_SAMPLE_RT_CHAIN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define RT_CHAIN_TRIES 5

/* A call as python/ and php/ read it (struct py_frame_raw, struct
 * php_frame_raw: the same layout, checked where they are read): what it
 * runs (a code object, a function), where (an instruction, an opline),
 * how the read of it ended (ENDS, RT_CHAIN_WHOLE on the last call of a
 * chain read whole) and a word of the reader's own. */
struct rt_chain_frame {
	uint64_t what, at;
	uint32_t ends, own;
};
#define RT_CHAIN_WHOLE 2

struct rt_chain_ops {
	/* One read of the chain into INTO (at most LIM calls), innermost
	 * first: how many; *CUR and *LINK the innermost call's address and
	 * its link, as this read found them. */
	size_t (*read)(void *ctx, struct rt_chain_frame *into, size_t lim, uint64_t *cur,
		       uint64_t *link);
	/* After a second read alike the one before: whether the thread
	 * still runs the call CUR (linked to LINK), the last read's, where
	 * the one before had PREV_CUR and PREV_LINK. */
	bool (*still)(void *ctx, uint64_t prev_cur, uint64_t prev_link, uint64_t cur,
		      uint64_t link);
};

/* Reads the chain into OUT (at most LIM calls) by OPS: once when not
 * RUNNING, else as above, with AGAIN and BEST (LIM calls each) to work
 * in.  Returns how many calls OUT holds; *TORN says whether it is only
 * the outer part two reads agreed on; *CUR, *LINK those of the read
 * kept (0 when torn). */
size_t rt_chain__read(const struct rt_chain_ops *ops, void *ctx, int running,
		      struct rt_chain_frame *out, size_t lim, struct rt_chain_frame *again,
		      struct rt_chain_frame *best, bool *torn, uint64_t *cur, uint64_t *link);

#endif
