#ifndef CPROF_UTIL_TIMEUTIL_H
#define CPROF_UTIL_TIMEUTIL_H

#include <stdint.h>

uint64_t now_ns(void);          /* CLOCK_MONOTONIC */
uint64_t realtime_ns(void);     /* CLOCK_REALTIME, for pprof time_nanos */

#endif
