#include "util/hist.h"

/* The bucket for US microseconds (see hist.h). */
static size_t hist_index(uint64_t us)
{
	if (us < HIST_EXACT)
		return (size_t)us;
	int e = 63 - __builtin_clzll(us);       /* 2^e <= us < 2^(e+1), e >= 10 */
	if (e >= 32)
		return HIST_BUCKETS - 1;
	size_t sub = (size_t)(us >> (e - 6)) & (HIST_SUB - 1);
	return HIST_EXACT + (size_t)(e - 10) * HIST_SUB + sub;
}

/* The middle of bucket I, in microseconds. */
static double hist_value(size_t i)
{
	if (i < HIST_EXACT)
		return (double)i + 0.5;
	size_t e = 10 + (i - HIST_EXACT) / HIST_SUB;
	size_t sub = (i - HIST_EXACT) % HIST_SUB;
	double width = (double)(1ull << (e - 6));
	return (double)(1ull << e) + ((double)sub + 0.5) * width;
}

void hist__add(struct hist *h, uint64_t us)
{
	h->n[hist_index(us)]++;
	h->total++;
}

double hist__quantile(const struct hist *h, double q)
{
	uint64_t seen = 0;
	if (!h->total)
		return 0;
	uint64_t rank = (uint64_t)(q * (double)(h->total - 1));
	for (size_t i = 0; i < HIST_BUCKETS; i++) {
		seen += h->n[i];
		if (seen > rank)
			return hist_value(i);
	}
	return hist_value(HIST_BUCKETS - 1);
}
