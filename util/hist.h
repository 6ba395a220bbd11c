/* hist: a log-linear histogram of microseconds: 1 us buckets below
 * 1024 us, then 64 buckets per power of two (at most 1.6% wide) up to
 * 2^32 us.  Adding is one index computation; quantiles are read at the end. */
#ifndef CPROF_UTIL_HIST_H
#define CPROF_UTIL_HIST_H

#include <stddef.h>
#include <stdint.h>

#define HIST_EXACT 1024
#define HIST_SUB 64
#define HIST_BUCKETS (HIST_EXACT + (32 - 10) * HIST_SUB)

struct hist {
	uint64_t n[HIST_BUCKETS];
	uint64_t total;
};

void hist__add(struct hist *h, uint64_t us);

/* The value below which a fraction Q of all values fell (the middle of
 * its bucket), in microseconds; 0 when empty. */
double hist__quantile(const struct hist *h, double q);

#endif
