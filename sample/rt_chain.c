/* rt_chain: a running thread's chain read until it holds still (see
 * sample/rt_chain.h). */
#include "sample/rt_chain.h"

#include <string.h>

/* The same calls at the same instructions, but the innermost's. */
static bool alike(const struct rt_chain_frame *a, const struct rt_chain_frame *b, size_t n)
{
	return n && a[0].what == b[0].what && a[0].ends == b[0].ends &&
	       !memcmp(a + 1, b + 1, (n - 1) * sizeof(*a));
}

size_t rt_chain__read(const struct rt_chain_ops *ops, void *ctx, int running,
		      struct rt_chain_frame *out, size_t lim, struct rt_chain_frame *again,
		      struct rt_chain_frame *best, bool *torn, uint64_t *cur, uint64_t *link)
{
	/* Reads alternate between the two buffers, a whole one (read to its
	 * outermost call, or to LIM) kept as PREV, of wholen[prev] calls,
	 * until the next whole one is read; 2: none yet. */
	struct rt_chain_frame *buf[2] = { out, again };
	size_t wholen[2] = { 0, 0 }, bestn = 0;
	uint64_t curs[2] = { 0, 0 }, links[2] = { 0, 0 };
	int prev = 2;
	*torn = false;
	for (int try = 0; try < RT_CHAIN_TRIES; try++) {
		int b = prev == 0;
		struct rt_chain_frame *into = buf[b];
		size_t m = ops->read(ctx, into, lim, &curs[b], &links[b]);
		bool kept = !running || !m;
		if (!kept) {
			/* A call that could not be read (before the LIM-th) ends
			 * a chain read as it was torn down: not whole. */
			wholen[b] = 0;
			if (into[m - 1].ends != RT_CHAIN_WHOLE && m < lim)
				continue;
			wholen[b] = m;
			/* the longest run of outer calls two whole reads in a
			 * row agree on, kept for the end, from this read */
			size_t c = 0;
			while (prev < 2 && c < wholen[prev] && c < m) {
				const struct rt_chain_frame *x = &buf[prev][wholen[prev] - 1 - c],
							    *y = &into[m - 1 - c];
				if (x->what != y->what || x->ends != y->ends)
					break;
				c++;
				if (x->at != y->at)
					break;
			}
			if (c > bestn) {
				memcpy(best, into + (m - c), c * sizeof(*best));
				bestn = c;
			}
			kept = prev < 2 && wholen[prev] == m && alike(buf[prev], into, m) &&
			       ops->still(ctx, curs[prev], links[prev], curs[b], links[b]);
		}
		if (kept) {
			if (into != out)
				memcpy(out, into, m * sizeof(*out));
			*cur = curs[b];
			*link = links[b];
			return m;
		}
		prev = b;
	}
	/* No two reads alike: its calls changed meanwhile. */
	*torn = true;
	*cur = *link = 0;
	memcpy(out, best, bestn * sizeof(*out));
	return bestn;
}
