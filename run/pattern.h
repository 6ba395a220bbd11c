/* pattern: the file names of a run's profiles: -o's pattern, as
 * async-profiler's -f: %p the first target's PID, %t the period's start
 * (UTC, YYYYmmdd-HHMMSS), %n the sequence number from 0, %n{MAX} that
 * number modulo MAX (a ring of MAX files), %% a '%'.  A name without a
 * pattern is replaced at each period (atomically: run/outfile.h). */
#ifndef CPROF_RUN_PATTERN_H
#define CPROF_RUN_PATTERN_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

/* Whether PATTERN has a %-sequence that changes from one file to the next. */
int pattern__is(const char *pattern);
/* Expands PATTERN into BUF for PID, sequence number SEQ and the time
 * START_NS (CLOCK_REALTIME).  Returns 0, or -EINVAL (with ERR) for an
 * unknown %-sequence or a bad %n{MAX}; -ENAMETOOLONG when it does not fit. */
int pattern__expand(const char *pattern, pid_t pid, uint64_t seq, uint64_t start_ns, char *buf,
		    size_t size, char *err, size_t errlen);
/* With --period and --history, where a dump (SIGUSR1) goes: PATTERN with
 * "dump-" before its file name ("/d/app-%n{20}.pprof" ->
 * "/d/dump-app-%n{20}.pprof"), numbered on its own: no expansion of the
 * pattern is ever such a name (a %-pattern expands to digits, '-' and
 * '%'), so the ring never overwrites a dump.  Malloc'd. */
char *pattern__dump(const char *pattern);

#endif
