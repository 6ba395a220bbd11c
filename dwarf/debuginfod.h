/* debuginfod: the preparation of libdwfl's debuginfod client before
 * symbolization.
 *
 * With DEBUGINFOD_URLS set, libdwfl's standard find-debuginfo path (the
 * symbolizer's) fetches the debug files it cannot find locally by build
 * ID, through elfutils' debuginfod client (libdebuginfod.so.1, loaded by
 * libdw when there).  Nothing is fetched without the variable, and
 * nothing before symbolization (the end of a run). */
#ifndef CPROF_DWARF_DEBUGINFOD_H
#define CPROF_DWARF_DEBUGINFOD_H

/* Called before the first lookup, once per process (later calls do
 * nothing).  If DEBUGINFOD_URLS is set:
 *   - DEBUGINFOD_TIMEOUT, when the user did not set it, becomes 10 s (the
 *     client's default is 90 s per request, and a request is made per
 *     module without local debug info);
 *   - each http(s) server is tried with a TCP connection (within that
 *     timeout; not when a proxy is configured, which curl would use);
 *     when none answers, one line "cprof-attach: note: ..." goes to
 *     stderr and DEBUGINFOD_URLS is removed from this process's
 *     environment, so that the modules are not each waited for.
 * Not thread-safe (it may change the environment). */
void debuginfod__prepare(void);

/* The whole run's budget for debuginfod (default 10 s): each request is
 * bounded by it (DEBUGINFOD_TIMEOUT and DEBUGINFOD_MAXTIME, unless the user
 * set them), and once the requests have taken that long in all, one note
 * names the server and DEBUGINFOD_URLS is removed: the rest is named
 * without it.  Call before debuginfod__prepare(). */
void debuginfod__set_deadline(double seconds);

/* Whether lookups may still ask a server, and the time one just took. */
int debuginfod__active(void);
void debuginfod__spent(double seconds);

#endif
