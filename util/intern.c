#include "util/intern.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

/* Keys live in a chain of arena blocks that never move (so pointers to
 * keys stay valid); the table holds (hash, id) pairs with open addressing.
 * Each key is stored as [len:u32, pad][bytes][NUL], padded to 8 bytes, so
 * string keys can be used as C strings. */
struct block {
	struct block *prev;
	size_t len, cap;
	char data[];
};

struct slot {
	uint64_t hash;
	int64_t id;                     /* -1: empty */
};

struct intern {
	struct slot *slots;
	size_t nslots;                  /* power of two */
	size_t count;
	struct block *blocks;
	char **keys;                    /* by id; NULL: a free id (removable tables) */
	size_t key_cap;
	int removable;                  /* keys malloc'ed one by one, ids reused */
	size_t *free_ids;               /* ... the ids free for reuse (a stack) */
	size_t nfree, free_cap;
};

uint64_t hash_bytes(const void *key, size_t len)
{
	/* FNV-1a over 8-byte words, then a final avalanche (splitmix64). */
	const unsigned char *p = key;
	uint64_t h = 0xcbf29ce484222325ull ^ len;
	while (len >= 8) {
		uint64_t w;
		memcpy(&w, p, 8);
		h = (h ^ w) * 0x100000001b3ull;
		p += 8;
		len -= 8;
	}
	while (len--)
		h = (h ^ *p++) * 0x100000001b3ull;
	h ^= h >> 30; h *= 0xbf58476d1ce4e5b9ull;
	h ^= h >> 27; h *= 0x94d049bb133111ebull;
	h ^= h >> 31;
	return h;
}

struct intern *intern__new(void)
{
	struct intern *in = calloc(1, sizeof(*in));
	if (!in)
		return NULL;
	in->nslots = 64;
	in->slots = malloc(in->nslots * sizeof(*in->slots));
	if (!in->slots) {
		free(in);
		return NULL;
	}
	memset(in->slots, 0xff, in->nslots * sizeof(*in->slots));
	return in;
}

struct intern *intern__new_removable(void)
{
	struct intern *in = intern__new();
	if (in)
		in->removable = 1;
	return in;
}

void intern__free(struct intern *in)
{
	if (!in)
		return;
	if (in->removable)
		for (size_t i = 0; i < in->count; i++)
			free(in->keys[i]);
	free(in->free_ids);
	free(in->slots);
	for (struct block *b = in->blocks, *prev; b; b = prev) {
		prev = b->prev;
		free(b);
	}
	free(in->keys);
	free(in);
}

size_t intern__count(const struct intern *in)
{
	return in->count;
}

size_t intern__live(const struct intern *in)
{
	return in->count - in->nfree;
}

int intern__has(const struct intern *in, size_t id)
{
	return id < in->count && in->keys[id] != NULL;
}

const void *intern__key(const struct intern *in, size_t id, size_t *len)
{
	const char *k = in->keys[id];
	uint32_t n;
	memcpy(&n, k, sizeof(n));
	if (len)
		*len = n;
	return k + 8;
}

static int key_equal(const struct intern *in, int64_t id, const void *key, size_t len)
{
	size_t n;
	const void *k = intern__key(in, (size_t)id, &n);
	return n == len && memcmp(k, key, len) == 0;
}

static struct slot *lookup(const struct intern *in, uint64_t h, const void *key, size_t len)
{
	size_t mask = in->nslots - 1;
	for (size_t i = h & mask;; i = (i + 1) & mask) {
		struct slot *s = &in->slots[i];
		if (s->id < 0)
			return s;
		if (s->hash == h && key_equal(in, s->id, key, len))
			return s;
	}
}

static int grow_slots(struct intern *in)
{
	size_t n = in->nslots * 2;
	struct slot *old = in->slots, *s = malloc(n * sizeof(*s));
	if (!s)
		return -ENOMEM;
	memset(s, 0xff, n * sizeof(*s));
	for (size_t i = 0; i < in->nslots; i++) {
		if (old[i].id < 0)
			continue;
		size_t j = old[i].hash & (n - 1);
		while (s[j].id >= 0)
			j = (j + 1) & (n - 1);
		s[j] = old[i];
	}
	free(old);
	in->slots = s;
	in->nslots = n;
	return 0;
}

/* Stores KEY under a new id (a free one first): the id, or -ENOMEM. */
static int64_t store_key(struct intern *in, const void *key, size_t len)
{
	size_t need = 8 + ((len + 1 + 7) & ~(size_t)7);
	uint32_t n = (uint32_t)len;
	if (in->removable) {
		char *dst = malloc(need);
		if (!dst)
			return -ENOMEM;
		if (!in->nfree && in->count == in->key_cap) {
			size_t cap = in->key_cap ? in->key_cap * 2 : 64;
			char **k = realloc(in->keys, cap * sizeof(*k));
			if (!k) {
				free(dst);
				return -ENOMEM;
			}
			in->keys = k;
			in->key_cap = cap;
		}
		memset(dst, 0, need);
		memcpy(dst, &n, sizeof(n));
		memcpy(dst + 8, key, len);
		size_t id = in->nfree ? in->free_ids[--in->nfree] : in->count++;
		in->keys[id] = dst;
		return (int64_t)id;
	}
	struct block *b = in->blocks;
	if (!b || b->len + need > b->cap) {
		size_t cap = need > 65536 ? need : 65536;
		b = malloc(sizeof(*b) + cap);
		if (!b)
			return -ENOMEM;
		b->prev = in->blocks;
		b->len = 0;
		b->cap = cap;
		in->blocks = b;
	}
	if (in->count == in->key_cap) {
		size_t cap = in->key_cap ? in->key_cap * 2 : 64;
		char **k = realloc(in->keys, cap * sizeof(*k));
		if (!k)
			return -ENOMEM;
		in->keys = k;
		in->key_cap = cap;
	}
	char *dst = b->data + b->len;
	memset(dst, 0, need);
	memcpy(dst, &n, sizeof(n));
	memcpy(dst + 8, key, len);
	in->keys[in->count] = dst;
	b->len += need;
	return (int64_t)in->count++;
}

int64_t intern__find(const struct intern *in, const void *key, size_t len)
{
	return lookup(in, hash_bytes(key, len), key, len)->id;
}

int64_t intern__add(struct intern *in, const void *key, size_t len, int *added)
{
	uint64_t h = hash_bytes(key, len);
	struct slot *s = lookup(in, h, key, len);
	if (added)
		*added = 0;
	if (s->id >= 0)
		return s->id;
	if ((intern__live(in) + 1) * 4 > in->nslots * 3) {
		if (grow_slots(in) < 0)
			return -ENOMEM;
		s = lookup(in, h, key, len);
	}
	int64_t id = store_key(in, key, len);
	if (id < 0)
		return id;
	s->hash = h;
	s->id = id;
	if (added)
		*added = 1;
	return s->id;
}

void intern__remove(struct intern *in, size_t id)
{
	if (!in->removable || !intern__has(in, id))
		return;
	size_t len;
	const void *key = intern__key(in, id, &len);
	size_t mask = in->nslots - 1;
	size_t i = hash_bytes(key, len) & mask;
	while (in->slots[i].id != (int64_t)id)
		i = (i + 1) & mask;
	/* Linear probing without tombstones: the entries after the hole that
	 * could not sit where they wanted move back into it (Knuth's
	 * algorithm R), so lookups still find them. */
	for (size_t j = i;;) {
		in->slots[i].id = -1;
		for (;;) {
			j = (j + 1) & mask;
			if (in->slots[j].id < 0)
				goto removed;
			size_t home = in->slots[j].hash & mask;
			/* Does HOME lie cyclically in (i, j]?  Then it stays. */
			if (i <= j ? (i < home && home <= j) : (i < home || home <= j))
				continue;
			break;
		}
		in->slots[i] = in->slots[j];
		i = j;
	}
removed:
	free(in->keys[id]);
	in->keys[id] = NULL;
	if (in->nfree == in->free_cap) {
		size_t cap = in->free_cap ? in->free_cap * 2 : 64;
		size_t *f = realloc(in->free_ids, cap * sizeof(*f));
		if (!f)
			return;         /* the id is lost for reuse, not the key's memory */
		in->free_ids = f;
		in->free_cap = cap;
	}
	in->free_ids[in->nfree++] = id;
}
