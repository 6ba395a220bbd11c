/* serve: --listen, the profiler as an HTTP server while sampling runs for
 * ever, scraped like a Go service (Go's net/http/pprof and fgprof's paths):
 *
 *   /debug/fgprof?seconds=N[&format=pprof|folded|svg]   the next N seconds
 *   /debug/fgprof?last=N, ?from=T&to=T                  the recent past
 *                                                       (the flight recorder)
 *   /debug/pprof/profile?seconds=N                      the same, cpu as the
 *                                                       default sample type
 *   /debug/pprof/goroutine?debug=2                      every thread's stack
 *                                                       now, as --dump prints
 *   /debug/pprof/                                       an index page
 *   /metrics                                            the profiler's health
 *                                                       (Prometheus' text format)
 *
 * libmicrohttpd parses HTTP (one thread per connection, at most
 * SERVE_CONNECTIONS at once and SERVE_PER_IP from one client address, idle
 * ones closed after SERVE_IDLE_S: 40 slowloris clients or 1,000 idle
 * connections from one address held every connection before, and no
 * scrape was answered); the
 * profiles come from run/periods.h's asks, so a request never touches the
 * target: it waits for the sampler's loop to cut its window.  Nothing a
 * client sends reaches the target. */
#ifndef CPROF_RUN_SERVE_H
#define CPROF_RUN_SERVE_H

#include <stddef.h>
#include <sys/types.h>

#include "run/options.h"
#include "run/periods.h"
#include "util/strbuf.h"

#define SERVE_CONNECTIONS 64
#define SERVE_PER_IP 8
#define SERVE_IDLE_S 10
#define SERVE_BODY_MAX 4096             /* a longer body is never read: closed */
#define SERVE_MAX_SECONDS 600           /* the longest window asked for */
/* Sampling's rate is not negotiable; an answer's time is.  Each
 * connection's thread runs at nice SERVE_NICE (the sampler's thread runs
 * at -10 where allowed, the loop that names at the profiler's own), and
 * the CPU spent building profiles (naming, on the namer's thread, then
 * encoding and compressing on the server's threads:
 * CLOCK_THREAD_CPUTIME_ID) has a budget: SERVE_CPU_SHARE of
 * a core over time, SERVE_CPU_BURST_S seconds of it at once.  A profile asked for
 * past it waits for the budget, at most SERVE_WAIT_S, then gets 503 with
 * Retry-After.  /metrics, the index page and errors are not counted.
 * (The budget of the pauses to copy the windows: run/periods.h
 * PERIODS_ASK_PAUSE_SHARE.)  8 clients looping ?last=600 held 78-92 of
 * 99 Hz before. */
#define SERVE_NICE 10
#define SERVE_CPU_SHARE 0.10
#define SERVE_CPU_BURST_S 2.5           /* the budget of 2.5 s at once: 0.25 s of CPU */
#define SERVE_WAIT_S 10

/* What the server serves, from the run (run/run.c): the periods of the
 * process sampled now (NULL between two processes of --pid-file), held
 * until released, and the run's own lines of /metrics. */
struct serve_source {
	void *arg;
	struct periods *(*acquire)(void *arg);
	void (*release)(void *arg, struct periods *p);
	void (*metrics)(void *arg, struct strbuf *sb);
};

struct serve;

/* Parses and binds --listen (before anything is attached: a port in use or
 * a bad address is the run's one-line error).  0, or -errno with ERR. */
int serve__bind(struct serve **out, const struct options *o, char *err, size_t errlen);

/* Starts serving (threads: call it where threads may start). */
int serve__start(struct serve *s, const struct serve_source *src, char *err, size_t errlen);

/* "http://127.0.0.1:6060" or "unix:/run/x.sock": where it listens. */
const char *serve__address(const struct serve *s);

/* Its own lines of /metrics (requests by path and code). */
void serve__metrics(struct serve *s, struct strbuf *sb);

/* Stops (every request answered or closed), removes a unix socket it made;
 * accepts NULL. */
void serve__free(struct serve *s);

#endif
