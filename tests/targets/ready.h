/* Shared by the test targets: announce readiness to the test script, write
 * the report files the scripts poll, wait for the threads to start.
 *
 * The script passes a path as argv[1]; the target writes it once every
 * thread is in its steady state.  We write PATH.tmp and rename it, so a
 * reader polling for PATH never sees a half-written file.  The content is
 * the PID and a newline.  Report files (READY.report, READY.count, ...)
 * are rewritten whole the same way. */
#ifndef CPROF_TEST_READY_H
#define CPROF_TEST_READY_H

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#ifndef __cplusplus
#include <stdatomic.h>
#endif

/* A file READY.SUFFIX, rewritten whole: written as READY.SUFFIX.tmp, then
 * renamed over READY.SUFFIX. */
struct report_file {
	char path[4200], tmp[4300];
};

static inline void report_init(struct report_file *r, const char *ready, const char *suffix)
{
	snprintf(r->path, sizeof(r->path), "%s%s", ready, suffix);
	snprintf(r->tmp, sizeof(r->tmp), "%s.tmp", r->path);
}

/* report_open, fprintf to the FILE, report_commit: the new content appears
 * at once.  NULL or non-zero (errno set) on failure; report_commit closes
 * the FILE either way. */
static inline FILE *report_open(const struct report_file *r)
{
	return fopen(r->tmp, "w");
}

static inline int report_commit(const struct report_file *r, FILE *f)
{
	if (fclose(f) != 0)
		return -1;
	return rename(r->tmp, r->path);
}

/* The same from a signal handler: open, write, close, rename only, errno
 * kept; a failure leaves the last report in place. */
static inline void report_write_raw(const struct report_file *r, const char *buf, size_t len)
{
	int saved = errno, fd;

	fd = open(r->tmp, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	if (fd >= 0) {
		ssize_t w = write(fd, buf, len);

		(void)w;
		close(fd);
		rename(r->tmp, r->path);
	}
	errno = saved;
}

/* Appends LABEL and N in decimal at P (no stdio: async-signal-safe); returns
 * the end.  For the buffer given to report_write_raw. */
static inline char *report_put_num(char *p, const char *label, int n)
{
	char digits[16];
	int k = 0;

	while (*label)
		*p++ = *label++;
	do {
		digits[k++] = '0' + n % 10;
		n /= 10;
	} while (n);
	while (k)
		*p++ = digits[--k];
	return p;
}

static inline void ready_write(const char *path, const char *suffix)
{
	struct report_file r;
	FILE *f;

	report_init(&r, path, suffix);
	f = report_open(&r);
	if (!f) {
		perror(r.tmp);
		exit(99);
	}
	fprintf(f, "%ld\n", (long)getpid());
	if (report_commit(&r, f) != 0) {
		perror(r.path);
		exit(99);
	}
}

static inline void ready_announce(const char *path)
{
	ready_write(path, "");
}

/* CLOCK_MONOTONIC in nanoseconds: schedules, spins of a set length. */
static inline long now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000000000L + ts.tv_nsec;
}

#ifndef __cplusplus
/* Polls (every 1 ms) until *STARTED, counted up by the threads as they
 * reach their steady state, is at least N. */
static inline void ready_wait_started(atomic_int *started, int n)
{
	struct timespec ms = { 0, 1000 * 1000 };

	while (atomic_load(started) < n)
		nanosleep(&ms, NULL);
}
#endif

static inline const char *ready_path(int argc, char **argv)
{
	if (argc < 2) {
		fprintf(stderr, "usage: %s READY_FILE [ARGS...]\n", argv[0]);
		exit(2);
	}
	return argv[1];
}

#endif
