#include "util/sparse.h"

#include <stdlib.h>
#include <string.h>

#include "util/xalloc.h"

void sparse__init(struct sparse *a, size_t elem)
{
	*a = (struct sparse){ .elem = elem };
}

void sparse__free(struct sparse *a)
{
	for (size_t p = 0; p < a->npages; p++)
		free(a->pages[p]);
	free(a->pages);
	a->pages = NULL;
	a->npages = 0;
}

void *sparse__get(const struct sparse *a, uint32_t i)
{
	size_t p = i / SPARSE_PAGE;
	if (p >= a->npages || !a->pages[p])
		return NULL;
	return a->pages[p] + (size_t)(i % SPARSE_PAGE) * a->elem;
}

void *sparse__put(struct sparse *a, uint32_t i)
{
	size_t p = i / SPARSE_PAGE;
	if (p >= a->npages) {
		size_t n = p + 1 > a->npages * 2 ? p + 1 : a->npages * 2;
		a->pages = xrealloc(a->pages, n * sizeof(*a->pages));
		memset(a->pages + a->npages, 0, (n - a->npages) * sizeof(*a->pages));
		a->npages = n;
	}
	if (!a->pages[p])
		a->pages[p] = xcalloc(SPARSE_PAGE, a->elem);
	return a->pages[p] + (size_t)(i % SPARSE_PAGE) * a->elem;
}

uint32_t sparse__next(const struct sparse *a, uint32_t i)
{
	for (size_t p = i / SPARSE_PAGE; p < a->npages; p++) {
		if (a->pages[p])
			return p == i / SPARSE_PAGE ? i : (uint32_t)(p * SPARSE_PAGE);
	}
	return UINT32_MAX;
}
