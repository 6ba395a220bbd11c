/* interp: a PHP (Zend Engine) process read from outside: where its
 * executor globals are (executor_globals, a dynamic symbol of Debian's
 * php8.2 and php-fpm8.2, non-ZTS: one PHP thread a process), the chain of
 * its calls (EG(current_execute_data) -> prev_execute_data), and each
 * call's function named (Class::method or function, its file, the line
 * of the call's opline).  Nothing here stops a thread: sample/rt_php.c
 * reads the chain while the thread cannot run (or checks two reads of a
 * running one), and names it after.
 *
 * Every read is bounded (frames, string lengths) so that a corrupt or
 * hostile process costs a bounded time and gives "[unknown php frame]",
 * never a hang, a crash or an unbounded allocation. */
#ifndef CPROF_PHP_INTERP_H
#define CPROF_PHP_INTERP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "php/layout.h"

struct modules;
struct php_interp;

/* One call as read at a capture: its function (zend_function *), where it
 * is (its opline: a zend_op * into the function's opcodes), and whether
 * the C call into execute_ex that runs it started with it (ENDS: a user
 * function's call whose info has ZEND_CALL_TOP, made from C; the next
 * call out belongs to another execute_ex).  Internal functions' calls
 * (usleep, stream_select) run in their caller's execute_ex and never end
 * one.  The last call read always ENDS: PHP_ENDS_WHOLE there says the
 * chain ended with it, PHP_ENDS_CUT that more were left (PHP_MAX_FRAMES
 * read, a call that could not be read, or a cycle): the stack is cut. */
#define PHP_ENDS_TOP 1
#define PHP_ENDS_WHOLE 2
#define PHP_ENDS_CUT 3
struct php_frame_raw {
	uint64_t func, opline;
	uint32_t ends;
	uint32_t user;          /* a user function's call (its opline has a line) */
};

#define PHP_MAX_FRAMES 1024
#define PHP_MAX_STR 256         /* a name or file is cut to this, in bytes */

/* Reads LEN bytes at ADDR of the process into BUF: 0, or < 0. */
typedef int (*php_read_fn)(void *ctx, uint64_t addr, void *buf, size_t len);

/* The PHP of process PID, whose modules are MS, or NULL: WHY empty when it
 * runs no PHP, else what is wrong in one line. */
struct php_interp *php_interp__new(pid_t pid, const struct modules *ms, char *why, size_t whylen);
void php_interp__free(struct php_interp *p);    /* accepts NULL */

/* For tests and fuzzing: LAYOUT over READ(CTX, ...), its executor globals
 * at EG. */
struct php_interp *php_interp__fake(const struct php_layout *l, php_read_fn read, void *ctx,
				    uint64_t eg);

const char *php_interp__version(const struct php_interp *p);    /* "8.2" */

/* Whether PC (as a stack holds it) is in execute_ex, the VM's loop. */
bool php_interp__in_exec(const struct php_interp *p, uint64_t pc);

/* The calls, innermost first, at most MAX, into OUT; how many (0: no PHP
 * code runs).  *CUR and *PREV: the innermost call's address and its
 * link, as read (what php_interp__current() compares). */
size_t php_interp__frames(const struct php_interp *p, struct php_frame_raw *out, size_t max,
			  uint64_t *cur, uint64_t *prev);

/* The innermost call now and its link: 0, or -1. */
int php_interp__current(const struct php_interp *p, uint64_t *cur, uint64_t *prev);

/* Call F named: FUNC ("Class::method", "function", "<main>" for a file's
 * own code), FILE (NULL: internal) and LINE (0: unknown, or LINES false).
 * The strings live until php_interp__free().  0, or -1 when the function
 * cannot be read (FUNC "[unknown php frame]"). */
struct php_named {
	const char *func, *file;
	int line;
};
int php_interp__name(struct php_interp *p, const struct php_frame_raw *f, bool lines,
		     struct php_named *out);

/* The serial number of function FUNC: another once another function is at
 * its address (php-fpm frees a request's functions at its end; checked
 * once per EPOCH: one small read). */
uint32_t php_interp__func(struct php_interp *p, uint64_t func, uint64_t epoch);

/* What the process serves now, into OUT: "METHOD URI" (the query left
 * out: it can hold secrets) from SAPI's request_info (php-fpm), or the
 * script's path (the CLI).  0, or -1: none, or not read. */
int php_interp__request(const struct php_interp *p, char *out, size_t len);

/* Functions named so far, and reads that failed. */
void php_interp__counts(const struct php_interp *p, uint64_t *funcs, uint64_t *bad);

#endif
