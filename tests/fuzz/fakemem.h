/* fakemem: a process memory made of the fuzz input, for the harnesses of
 * the readers that follow pointers in a target (fuzz_pyinterp,
 * fuzz_phpinterp, fuzz_rbvm, fuzz_jvm).  The input's regions are each an
 * address (8 bytes, little-endian), a length (2) and its bytes; at most
 * MAX_REGIONS.  Outside them, memory is unreadable, or (FILL >= 0) reads
 * as that byte repeated: every pointer then leads somewhere, every length
 * is huge. */
#ifndef CPROF_TESTS_FUZZ_FAKEMEM_H
#define CPROF_TESTS_FUZZ_FAKEMEM_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#define MAX_REGIONS 16

struct region {
	uint64_t addr;
	const uint8_t *data;
	size_t len;
};

struct mem {
	struct region r[MAX_REGIONS];
	size_t n;
	int fill;               /* -1: outside the regions is unreadable */
};

/* The readers' read function over CTX, a struct mem. */
static inline int fake_read(void *ctx, uint64_t addr, void *buf, size_t len)
{
	const struct mem *m = ctx;
	for (size_t i = 0; i < m->n; i++) {
		const struct region *r = &m->r[i];
		if (addr >= r->addr && addr - r->addr <= r->len && len <= r->len - (addr - r->addr)) {
			memcpy(buf, r->data + (addr - r->addr), len);
			return 0;
		}
	}
	if (m->fill < 0)
		return -1;
	memset(buf, m->fill, len);
	return 0;
}

/* The little-endian integer of N bytes at P. */
static inline uint64_t le(const uint8_t *p, size_t n)
{
	uint64_t v = 0;
	for (size_t i = 0; i < n; i++)
		v |= (uint64_t)p[i] << (8 * i);
	return v;
}

/* The regions of the SIZE bytes at P into M (after those it has). */
static inline void mem_regions(struct mem *m, const uint8_t *p, size_t size)
{
	while (m->n < MAX_REGIONS && size >= 10) {
		size_t len = (size_t)le(p + 8, 2);
		if (len > size - 10)
			len = size - 10;
		m->r[m->n++] = (struct region){ le(p, 8), p + 10, len };
		p += 10 + len;
		size -= 10 + len;
	}
}

/* M made from a harness's input of SIZE bytes at DATA: its fill from the
 * flag byte at FLAG (odd: the next byte fills, else -1), its regions from
 * HEADER bytes on. */
static inline void mem_load(struct mem *m, const uint8_t *data, size_t size, size_t flag,
			    size_t header)
{
	memset(m, 0, sizeof(*m));
	m->fill = data[flag] & 1 ? data[flag + 1] : -1;
	mem_regions(m, data + header, size - header);
}

#endif
