/* push: --push URL, each period sent to a Pyroscope-compatible server
 * (POST URL/ingest, format=pprof, the profile as the multipart field
 * "profile", as Pyroscope's HTTP API documents), with libcurl.
 *
 * The sampler never waits for the server: a period is encoded to pprof on
 * the periods' writer thread and queued (at most PUSH_QUEUE profiles and
 * PUSH_QUEUE_BYTES bytes; past that the oldest is dropped and counted); a
 * thread of its own sends them in order, a failed send retried with a
 * backoff from 1 s doubling to 60 s, the queue filling meanwhile.  A 4xx
 * answer (but 408 and 429) is the profile's fault: that profile is dropped
 * and counted, never sent again, and the queue moves on. */
#ifndef CPROF_RUN_PUSH_H
#define CPROF_RUN_PUSH_H

#include <stdint.h>
#include <sys/types.h>

#include "run/options.h"
#include "output/frames.h"
#include "output/output.h"
#include "util/strbuf.h"

#define PUSH_QUEUE 360                  /* an hour of 10 s periods */
#define PUSH_QUEUE_BYTES (64u << 20)

struct push_stats {
	uint64_t sent, failed, dropped; /* profiles sent; sends that failed; dropped unsent */
	uint64_t refused;               /* answered 4xx (not 408, 429): dropped, not retried */
	uint64_t queued, queued_bytes;  /* waiting now */
	uint64_t bytes_sent;
	long last_code;                 /* the last answer's HTTP code (0: none) */
	char last_error[256];           /* the last failed send's (retried) */
	char last_refusal[256];         /* the last refusal's code and the store's reason */
};

struct push;

/* What --push-auth-file and --push-header-file give, read once at the
 * start (before anything attaches) and never shown: the store's
 * credentials, USER:PASSWORD (sent as basic authentication) or one token
 * (Authorization: Bearer), and "Name: value" header lines (at most
 * PUSH_HEADERS, each at most 1 KiB; a tenant's X-Scope-OrgID). */
#define PUSH_HEADERS 32
struct push_auth {
	char *userpwd;                  /* USER:PASSWORD, or NULL */
	char *headers[PUSH_HEADERS + 1];        /* "Name: value"; Authorization for a token */
	size_t nheaders;
};

/* Reads O's --push-auth-file and --push-header-file into A.  0, or
 * -errno with a one-line ERR naming the file and what is wrong. */
int push__read_auth(const struct options *o, struct push_auth *a, char *err, size_t errlen);
void push__auth_free(struct push_auth *a);

/* PID and COMM name the profiles (labels pid and process; the name is
 * --app-name or COMM); AUTH (may be NULL) is copied.  0, or -errno with
 * ERR. */
int push__new(struct push **out, const struct options *o, const struct push_auth *auth, pid_t pid,
	      const char *comm, char *err, size_t errlen);

/* A period (a periods_sink: any thread). */
void push__period(void *push, const struct frames *fr, const struct profile_info *info);

/* The next profiles are of PID (--pid-file: a new process). */
void push__set_pid(struct push *p, pid_t pid);

void push__stats(struct push *p, struct push_stats *out);
void push__metrics(struct push *p, struct strbuf *sb);

/* Sends what is queued for up to GRACE_S seconds more, then stops; the
 * final figures to FINAL (may be NULL).  Accepts NULL. */
void push__free(struct push *p, double grace_s, struct push_stats *final);

#endif
