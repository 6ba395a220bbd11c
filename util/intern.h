/* intern: maps byte strings to dense ids 0, 1, 2, ... in insertion order.
 *
 * One table serves every "seen this before?" question in the profiler:
 * stacks (key = thread slot + PCs), unique addresses, pprof strings and
 * functions.  Memory grows with unique keys, never with lookups.
 * Keys are copied into the table and never move: the pointer returned by
 * intern__key() stays valid until intern__free(), and is NUL-terminated
 * (so a string key is a C string). */
#ifndef CPROF_UTIL_INTERN_H
#define CPROF_UTIL_INTERN_H

#include <stddef.h>
#include <stdint.h>

struct intern;

struct intern *intern__new(void);
void intern__free(struct intern *in);            /* accepts NULL */

/* Returns the id of KEY, adding it if new (*added set to 1 then; ADDED
 * may be NULL).  Returns -ENOMEM on allocation failure. */
int64_t intern__add(struct intern *in, const void *key, size_t len, int *added);

/* Returns the id of KEY or -1 when absent. */
int64_t intern__find(const struct intern *in, const void *key, size_t len);

size_t intern__count(const struct intern *in);
const void *intern__key(const struct intern *in, size_t id, size_t *len);

uint64_t hash_bytes(const void *key, size_t len);

#endif
