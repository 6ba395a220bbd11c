/* names: each thread's Python name (threading.current_thread().name),
 * read from outside as CPython keeps it.  threading._active is a dict from
 * a thread's ident (its pthread_t: the thread state's thread_id) to its
 * Thread object, whose _name attribute is the name.  The dict is found
 * once: the interpreter's sys.modules -> "threading" -> the module's dict
 * -> "_active" (the module never rebinds it; a fork's child keeps it);
 * sys.modules is looked at again only in the entries added since, until
 * threading is imported.  Then each read takes the whole of _active and
 * each Thread's _name: a few small reads a thread, made while the threads
 * run (a name changes seldom: at worst a name read as it changes is
 * unreadable, never another's).
 *
 * Dicts as each version lays them out (python/layout.h): a keys object of
 * dk_nentries entries after its index table (dk_size of 1, 2, 4 or 8-byte
 * indices before 3.11; 1 << dk_log2_index_bytes bytes from 3.11), each
 * entry { hash, key, value } (from 3.11, { key, value } when every key is
 * a str); a split dict keeps its values apart, in entry order.  An
 * instance's attributes are a dict at the type's tp_dictoffset (3.8-3.10),
 * or values kept beside the object and keyed by its type's cached keys
 * (3.11: 32 bytes before it; 3.12: 24 before, as their address - 1; 3.13:
 * after the object, while they are valid), or a dict 24 bytes before it.
 *
 * Every count is bounded before it is trusted (entries, index sizes,
 * offsets), every str and dict checked by its type where the symbols say
 * where the types are, and a name that cannot be read is no name. */
#include "python/internal.h"
#include "python/names.h"

#include <stdlib.h>
#include <string.h>

#include "python/lines.h"
#include "util/text.h"
#include "util/xalloc.h"

#define DICT_MAX 4096           /* entries of a dict read, at most */
#define NAME_MAX_BYTES 128      /* a name is cut to this */
#define TPFLAGS_INLINE_VALUES (1ul << 2)
#define TPFLAGS_MANAGED_DICT (1ul << 4)
#define TPFLAGS_HEAPTYPE (1ul << 9)
#define MD_DICT 16              /* PyModuleObject.md_dict */
#define MANAGED_DICT 24         /* 3.11+: the dict (or 3.12's tagged values) before an object */
#define MANAGED_VALUES 32       /* 3.11: the values before an object */

struct py_dict_entry {
	uint64_t hash, key, value;
};

static bool old_dicts(const struct py_interp *p)
{
	return p->l.attrs == PY_ATTRS_DICTOFFSET;
}

/* The entries of keys object KEYS (the first DICT_MAX) into
 * p->names.entries: how many, or -1.  Values are the entries' own (a
 * split table's are elsewhere). */
static long keys_read(struct py_interp *p, uint64_t keys)
{
	unsigned char h[64];
	if (py_rd(p, keys, h, p->l.dk_indices) < 0)
		return -1;
	int64_t n = (int64_t)py_word(h, p->l.dk_nentries);
	uint64_t index_bytes;
	size_t esize;
	bool general = true;
	if (old_dicts(p)) {
		/* dk_size (8): a power of two; indices of 1, 2, 4 or 8 bytes */
		int64_t size = (int64_t)py_word(h, 8);
		if (size <= 0 || size > (1ll << 26) || (size & (size - 1)) || n > size)
			return -1;
		index_bytes = (uint64_t)size * (size <= 0xff ? 1 : size <= 0xffff ? 2 : 4);
		esize = 24;
	} else {
		/* dk_log2_size (8), dk_log2_index_bytes (9), dk_kind (10):
		 * 0 general, 1 str keys, 2 split (str keys too) */
		unsigned log2 = h[8], log2_index = h[9], kind = h[10];
		if (log2 > 26 || log2_index > 29 || kind > 2 || n > (1ll << log2))
			return -1;
		index_bytes = 1ull << log2_index;
		general = kind == 0;
		esize = general ? 24 : 16;
	}
	if (n < 0)
		return -1;
	if (n > DICT_MAX)
		n = DICT_MAX;
	if (n && py_rd(p, keys + p->l.dk_indices + index_bytes, p->names.raw, (size_t)n * esize) < 0)
		return -1;
	for (long i = 0; i < n; i++) {
		const unsigned char *e = p->names.raw + (size_t)i * esize;
		struct py_dict_entry *d = &p->names.entries[i];
		if (general)
			*d = (struct py_dict_entry){ py_word(e, 0), py_word(e, 8), py_word(e, 16) };
		else
			*d = (struct py_dict_entry){ 0, py_word(e, 0), py_word(e, 8) };
	}
	return n;
}

/* The values of a split table: N of them at VALUES, put in the entries. */
static int values_read(struct py_interp *p, uint64_t values, long n)
{
	if (n && py_rd(p, values + p->l.dv_values, p->names.raw, (size_t)n * 8) < 0)
		return -1;
	for (long i = 0; i < n; i++)
		p->names.entries[i].value = py_word(p->names.raw, (uint32_t)i * 8);
	return 0;
}

/* The entries of the dict at DICT into p->names.entries: how many, or -1
 * (not a dict, or unreadable). */
static long dict_read(struct py_interp *p, uint64_t dict, uint64_t *keys_out)
{
	unsigned char h[64];
	uint32_t len = (p->l.dict_keys > p->l.dict_values ? p->l.dict_keys : p->l.dict_values) + 8;
	if (py_rd(p, dict, h, len) < 0 || (p->dict_type && py_word(h, 8) != p->dict_type))
		return -1;
	uint64_t keys = py_word(h, p->l.dict_keys), values = py_word(h, p->l.dict_values);
	long n = keys_read(p, keys);
	if (n > 0 && values && values_read(p, values, n) < 0)
		return -1;
	if (keys_out)
		*keys_out = keys;
	return n;
}

/* Whether the str at ADDR is WANT (ASCII), in one read. */
static bool str_is(const struct py_interp *p, uint64_t addr, const char *want)
{
	unsigned char b[PY_STR_HEAD_MAX + 32];
	size_t wl = strlen(want);
	if (p->l.str_ascii_size + wl > sizeof(b) || py_rd(p, addr, b, p->l.str_ascii_size + wl) < 0)
		return false;
	uint32_t state;
	memcpy(&state, b + p->l.str_state, 4);
	int ascii;
	return (!p->str_type || py_word(b, 8) == p->str_type) && py_lines__str_kind(state, &ascii) == 1 &&
	       ascii && py_word(b, p->l.str_length) == wl && memcmp(b + p->l.str_ascii_size, want, wl) == 0;
}

/* The index of the entry (of N) whose key is the str WANT, or -1.  *SEEN
 * (if not NULL) keeps the key's address once met: an attribute's name is
 * interned, the same str in every dict of the interpreter. */
static long find_key(struct py_interp *p, long n, const char *want, uint64_t *seen)
{
	if (seen && *seen)
		for (long i = 0; i < n; i++)
			if (p->names.entries[i].key == *seen)
				return i;
	for (long i = 0; i < n; i++) {
		uint64_t k = p->names.entries[i].key;
		if (k && str_is(p, k, want)) {
			if (seen)
				*seen = k;
			return i;
		}
	}
	return -1;
}

/* Attribute WANT (a str) of the object at OBJ, or 0. */
static uint64_t attr(struct py_interp *p, uint64_t obj, const char *want, uint64_t *seen)
{
	/* 32 bytes before it (3.11+'s values and dict) to its type */
	unsigned char o[48];
	if (obj < MANAGED_VALUES || py_rd(p, obj - MANAGED_VALUES, o, sizeof(o)) < 0)
		return 0;
	uint64_t type = py_word(o, MANAGED_VALUES + 8);
	unsigned char t[PY_TYPE_MAX];
	uint32_t tlen = p->l.ht_cached_keys + 8;
	if (py_rd(p, type, t, tlen) < 0)
		return 0;
	uint64_t flags = py_word(t, p->l.tp_flags);
	int64_t basicsize = (int64_t)py_word(t, p->l.tp_basicsize);
	int64_t dictoffset = (int64_t)py_word(t, p->l.tp_dictoffset);
	uint64_t cached = flags & TPFLAGS_HEAPTYPE ? py_word(t, p->l.ht_cached_keys) : 0;
	uint64_t dict = 0, values = 0;
	bool managed = !old_dicts(p) && (flags & TPFLAGS_MANAGED_DICT);
	if (!managed) {
		if (dictoffset <= 0 || dictoffset > 4096 || py_rd_ptr(p, obj + (uint64_t)dictoffset, &dict) < 0)
			return 0;
	} else if (p->l.attrs == PY_ATTRS_VALUES_311) {
		values = py_word(o, 0);
		dict = values ? 0 : py_word(o, MANAGED_VALUES - MANAGED_DICT);
	} else if (p->l.attrs == PY_ATTRS_TAGGED_312) {
		uint64_t dorv = py_word(o, MANAGED_VALUES - MANAGED_DICT);
		if (dorv & 1)
			values = dorv + 1;      /* kept as (values - 1): bit 0 set */
		else
			dict = dorv;
	} else {
		/* 3.13: the values after the object while valid (their
		 * fourth byte), else the dict materialized from them */
		unsigned char valid[4];
		if ((flags & TPFLAGS_INLINE_VALUES) && basicsize > 0 && basicsize <= 4096 &&
		    py_rd(p, obj + (uint64_t)basicsize, valid, 4) == 0 && valid[3])
			values = obj + (uint64_t)basicsize;
		else
			dict = py_word(o, MANAGED_VALUES - MANAGED_DICT);
	}
	long n, i;
	if (values) {
		if (!cached || (n = keys_read(p, cached)) <= 0 || (i = find_key(p, n, want, seen)) < 0)
			return 0;
		uint64_t v;
		return py_rd_ptr(p, values + p->l.dv_values + (uint64_t)i * 8, &v) == 0 ? v : 0;
	}
	if (!dict || (n = dict_read(p, dict, NULL)) <= 0 || (i = find_key(p, n, want, seen)) < 0)
		return 0;
	return p->names.entries[i].value;
}

/* threading._active, found through sys.modules, or 0. */
static uint64_t find_active(struct py_interp *p)
{
	struct py_names *nm = &p->names;
	uint64_t interp, modules, keys;
	if (py_rd_ptr(p, p->runtime + p->l.rt_interp_head, &interp) < 0 ||
	    py_rd_ptr(p, interp + p->l.is_modules, &modules) < 0)
		return 0;
	long n = dict_read(p, modules, &keys);
	if (n <= 0)
		return 0;
	/* Entries are added at the end: only the new ones are looked at,
	 * while the keys object is the same. */
	long from = keys == nm->mod_keys && (long)nm->mod_looked <= n ? (long)nm->mod_looked : 0;
	nm->mod_keys = keys;
	nm->mod_looked = (size_t)n;
	long i;
	for (i = from; i < n; i++)
		if (p->names.entries[i].key && str_is(p, p->names.entries[i].key, "threading"))
			break;
	if (i == n)
		return 0;
	uint64_t module = p->names.entries[i].value, mdict;
	long at = i;
	if (!module || py_rd_ptr(p, module + MD_DICT, &mdict) < 0 || (n = dict_read(p, mdict, NULL)) <= 0 ||
	    (i = find_key(p, n, "_active", NULL)) < 0) {
		nm->mod_looked = (size_t)at;    /* threading is being imported: again */
		return 0;
	}
	return p->names.entries[i].value;
}

static int by_ident(const void *a, const void *b)
{
	uint64_t x = ((const struct py_tname *)a)->ident, y = ((const struct py_tname *)b)->ident;
	return (x > y) - (x < y);
}

static void drop_names(struct py_names *nm)
{
	for (size_t i = 0; i < nm->n; i++)
		free(nm->t[i].name);
	nm->n = 0;
}

size_t py_interp__read_names(struct py_interp *p)
{
	struct py_names *nm = &p->names;
	if (!nm->entries) {
		nm->entries = xcalloc(DICT_MAX, sizeof(*nm->entries));
		nm->raw = xmalloc(DICT_MAX * 24);
		nm->t = xcalloc(PY_MAX_NAMES, sizeof(*nm->t));
	}
	drop_names(nm);
	nm->reads++;
	if (!nm->active)
		nm->active = find_active(p);
	long n = nm->active ? dict_read(p, nm->active, NULL) : -1;
	if (n < 0) {
		nm->active = 0;         /* not a dict now: looked for again */
		return 0;
	}
	/* ident -> Thread: the key is an int, its hash the ident itself
	 * (an int's hash is its value modulo 2^61 - 1; a pthread_t is
	 * below).  The entries are copied: attr() reads dicts too. */
	size_t k = 0;
	struct { uint64_t ident, obj; } th[PY_MAX_NAMES];
	for (long i = 0; i < n && k < PY_MAX_NAMES; i++)
		if (nm->entries[i].key && nm->entries[i].value && nm->entries[i].hash)
			th[k].ident = nm->entries[i].hash, th[k++].obj = nm->entries[i].value;
	for (size_t i = 0; i < k; i++) {
		uint64_t s = attr(p, th[i].obj, "_name", &nm->key_name);
		char *name = s ? py_read_str(p, s) : NULL;
		if (!name) {
			nm->unnamed++;
			continue;
		}
		/* no control characters (a terminal shows it), cut at a
		 * character's start */
		text__clean(name, NAME_MAX_BYTES + 1, name, strlen(name));
		nm->t[nm->n].ident = th[i].ident;
		nm->t[nm->n++].name = name;
	}
	qsort(nm->t, nm->n, sizeof(*nm->t), by_ident);
	return nm->n;
}

const char *py_interp__thread_name(const struct py_interp *p, uint64_t ident)
{
	struct py_tname key = { ident, NULL };
	const struct py_tname *t = p->names.n ? bsearch(&key, p->names.t, p->names.n, sizeof(key),
							 by_ident) : NULL;
	return t ? t->name : NULL;
}

void py_names_free(struct py_interp *p)
{
	drop_names(&p->names);
	free(p->names.t);
	free(p->names.entries);
	free(p->names.raw);
	memset(&p->names, 0, sizeof(p->names));
}
