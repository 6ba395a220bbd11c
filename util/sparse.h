/* sparse: an array indexed by a 32-bit number whose used indices come in a
 * few dense runs far apart (thread slots from 0, goroutine slots from 1 << 20).
 * Elements live in pages allocated, zeroed, when one of theirs is first
 * written: memory follows the indices used, not the largest one. */
#ifndef CPROF_UTIL_SPARSE_H
#define CPROF_UTIL_SPARSE_H

#include <stddef.h>
#include <stdint.h>

#define SPARSE_PAGE 1024u               /* elements a page */

struct sparse {
	size_t elem;                    /* bytes an element */
	unsigned char **pages;          /* by index / SPARSE_PAGE; NULL: none written */
	size_t npages;
};

/* An empty array of ELEM-byte elements (no allocation until written). */
void sparse__init(struct sparse *a, size_t elem);
/* Frees the pages (not what elements point to: walk them first). */
void sparse__free(struct sparse *a);
/* Element I, or NULL if no element of its page was ever written. */
void *sparse__get(const struct sparse *a, uint32_t i);
/* Element I, its page allocated (zeroed) if it was not. */
void *sparse__put(struct sparse *a, uint32_t i);
/* The first index at or after I whose page exists, or UINT32_MAX: a walk
 * over the written elements skips the gaps a page at a time. */
uint32_t sparse__next(const struct sparse *a, uint32_t i);

#endif
