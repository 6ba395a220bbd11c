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

/* Ids handed out so far: every id is below it.  In a table made with
 * intern__new_removable() some of them may be free (intern__has). */
size_t intern__count(const struct intern *in);
const void *intern__key(const struct intern *in, size_t id, size_t *len);

/* ---- removable keys ----
 * A table whose keys can be removed: each key is allocated on its own (not
 * in the arena), intern__remove() frees it and its id, and intern__add()
 * hands freed ids out again before new ones, so that ids stay dense and
 * memory follows the keys there are, not those there ever were.  The
 * pointer intern__key() gives stays valid until its key is removed. */
struct intern *intern__new_removable(void);
/* Removes the key of ID (a table made removable; a free ID is ignored). */
void intern__remove(struct intern *in, size_t id);
/* Whether ID holds a key; keys held now. */
int intern__has(const struct intern *in, size_t id);
size_t intern__live(const struct intern *in);

uint64_t hash_bytes(const void *key, size_t len);

#endif
