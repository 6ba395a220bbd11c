/* Shared by the test targets: announce readiness to the test script.
 *
 * The script passes a path as argv[1]; the target writes it once every
 * thread is in its steady state.  We write PATH.tmp and rename it, so a
 * reader polling for PATH never sees a half-written file.  The content is
 * the PID and a newline. */
#ifndef CPROF_TEST_READY_H
#define CPROF_TEST_READY_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static inline void ready_write(const char *path, const char *suffix)
{
	char final[4096], tmp[4200];
	FILE *f;

	snprintf(final, sizeof(final), "%s%s", path, suffix);
	snprintf(tmp, sizeof(tmp), "%s.tmp", final);
	f = fopen(tmp, "w");
	if (!f) {
		perror(tmp);
		exit(99);
	}
	fprintf(f, "%ld\n", (long)getpid());
	if (fclose(f) != 0 || rename(tmp, final) != 0) {
		perror(final);
		exit(99);
	}
}

static inline void ready_announce(const char *path)
{
	ready_write(path, "");
}

/* CLOCK_MONOTONIC in nanoseconds, for targets that keep a schedule. */
static inline long now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000000000L + ts.tv_nsec;
}

static inline const char *ready_path(int argc, char **argv)
{
	if (argc < 2) {
		fprintf(stderr, "usage: %s READY_FILE [ARGS...]\n", argv[0]);
		exit(2);
	}
	return argv[1];
}

#endif
