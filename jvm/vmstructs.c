/* Reading HotSpot's exported tables (see vmstructs.h).  Each table is an
 * array of entries ended by one whose name is NULL; each entry's fields
 * are at the offsets the library exports, so that the reader needs no
 * version's layout. */
#include "jvm/vmstructs.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util/intern.h"
#include "util/xalloc.h"

struct jvm_structs {
	struct intern *fields, *types, *consts;
	struct { uint64_t offset, addr; } *fv;
	uint64_t *tsize;
	int64_t *cv;
	size_t fcap, tcap, ccap;
};

static int rd64(jvm_read_fn read, void *ctx, uint64_t addr, uint64_t *out)
{
	if (!addr || addr + 8 < addr)
		return -1;
	return read(ctx, addr, out, 8);
}

/* A NUL-terminated name at ADDR into OUT (JVM_MAX_NAME): its length, or -1
 * (unreadable, too long, or not printable). */
static int read_name(jvm_read_fn read, void *ctx, uint64_t addr, char *out)
{
	if (!addr)
		return -1;
	size_t got = 0;
	while (got < JVM_MAX_NAME) {
		/* up to the end of the page, so that a read never crosses into
		 * one not mapped */
		size_t chunk = 4096 - ((addr + got) & 4095);
		if (chunk > JVM_MAX_NAME - got)
			chunk = JVM_MAX_NAME - got;
		if (read(ctx, addr + got, out + got, chunk) < 0)
			return -1;
		void *z = memchr(out + got, 0, chunk);
		if (z) {
			size_t n = (size_t)((char *)z - out);
			for (size_t i = 0; i < n; i++)
				if ((unsigned char)out[i] < 0x20 || (unsigned char)out[i] > 0x7e)
					return -1;
			return (int)n;
		}
		got += chunk;
	}
	return -1;
}

static void grow(void **p, size_t *cap, size_t need, size_t elt)
{
	if (need <= *cap)
		return;
	size_t n = *cap ? *cap * 2 : 256;
	while (n < need)
		n *= 2;
	*p = xrealloc(*p, n * elt);
	memset((char *)*p + *cap * elt, 0, (n - *cap) * elt);
	*cap = n;
}

/* Reads the stride/offset words; 0, or -1. */
static int layout_word(jvm_read_fn read, void *ctx, uint64_t addr, uint64_t *out, uint64_t max)
{
	return rd64(read, ctx, addr, out) < 0 || *out > max ? -1 : 0;
}

struct jvm_structs *jvm_structs__read(const struct jvm_symbols *sym, jvm_read_fn read, void *ctx,
				      char *why, size_t whylen)
{
	uint64_t s_type, s_field, s_static, s_offset, s_address, s_stride;
	uint64_t t_name, t_size, t_stride, i_name, i_value, i_stride, l_name, l_value, l_stride;
	uint64_t structs, types, ints, longs;
	*why = 0;
	if (layout_word(read, ctx, sym->s_stride, &s_stride, 256) < 0 || s_stride < 8 ||
	    layout_word(read, ctx, sym->s_type, &s_type, s_stride - 8) < 0 ||
	    layout_word(read, ctx, sym->s_field, &s_field, s_stride - 8) < 0 ||
	    layout_word(read, ctx, sym->s_static, &s_static, s_stride - 4) < 0 ||
	    layout_word(read, ctx, sym->s_offset, &s_offset, s_stride - 8) < 0 ||
	    layout_word(read, ctx, sym->s_address, &s_address, s_stride - 8) < 0 ||
	    layout_word(read, ctx, sym->t_stride, &t_stride, 256) < 0 || t_stride < 8 ||
	    layout_word(read, ctx, sym->t_name, &t_name, t_stride - 8) < 0 ||
	    layout_word(read, ctx, sym->t_size, &t_size, t_stride - 8) < 0 ||
	    layout_word(read, ctx, sym->i_stride, &i_stride, 256) < 0 || i_stride < 8 ||
	    layout_word(read, ctx, sym->i_name, &i_name, i_stride - 8) < 0 ||
	    layout_word(read, ctx, sym->i_value, &i_value, i_stride - 4) < 0 ||
	    layout_word(read, ctx, sym->l_stride, &l_stride, 256) < 0 || l_stride < 8 ||
	    layout_word(read, ctx, sym->l_name, &l_name, l_stride - 8) < 0 ||
	    layout_word(read, ctx, sym->l_value, &l_value, l_stride - 8) < 0 ||
	    rd64(read, ctx, sym->structs, &structs) < 0 || !structs ||
	    rd64(read, ctx, sym->types, &types) < 0 || !types ||
	    rd64(read, ctx, sym->ints, &ints) < 0 || rd64(read, ctx, sym->longs, &longs) < 0) {
		snprintf(why, whylen, "its gHotSpotVM tables cannot be read");
		return NULL;
	}
	struct jvm_structs *js = xcalloc(1, sizeof(*js));
	js->fields = intern__new();
	js->types = intern__new();
	js->consts = intern__new();
	if (!js->fields || !js->types || !js->consts)
		goto bad;
	unsigned char e[256];
	char tn[JVM_MAX_NAME + 1], fn[JVM_MAX_NAME + 1], key[2 * JVM_MAX_NAME + 4];
	size_t i;
	for (i = 0; i < JVM_MAX_ENTRIES; i++) {
		uint64_t a = structs + i * s_stride, tp, fp, off, addr;
		int32_t st;
		if (read(ctx, a, e, s_stride) < 0)
			goto bad;
		memcpy(&tp, e + s_type, 8);
		memcpy(&fp, e + s_field, 8);
		if (!tp)
			break;
		memcpy(&st, e + s_static, 4);
		memcpy(&off, e + s_offset, 8);
		memcpy(&addr, e + s_address, 8);
		int tl = read_name(read, ctx, tp, tn), fl = fp ? read_name(read, ctx, fp, fn) : -1;
		if (tl < 0 || fl < 0)
			continue;
		int kl = snprintf(key, sizeof(key), "%s::%s", tn, fn);
		int64_t id = intern__add(js->fields, key, (size_t)kl, NULL);
		if (id < 0)
			goto bad;
		grow((void **)&js->fv, &js->fcap, (size_t)id + 1, sizeof(*js->fv));
		js->fv[id].offset = st ? 0 : off;
		js->fv[id].addr = st ? addr : 0;
	}
	if (i == JVM_MAX_ENTRIES)
		goto bad;
	for (i = 0; i < JVM_MAX_ENTRIES; i++) {
		uint64_t a = types + i * t_stride, np, size;
		if (read(ctx, a, e, t_stride) < 0)
			goto bad;
		memcpy(&np, e + t_name, 8);
		if (!np)
			break;
		memcpy(&size, e + t_size, 8);
		int tl = read_name(read, ctx, np, tn);
		if (tl < 0)
			continue;
		int64_t id = intern__add(js->types, tn, (size_t)tl, NULL);
		if (id < 0)
			goto bad;
		grow((void **)&js->tsize, &js->tcap, (size_t)id + 1, sizeof(*js->tsize));
		js->tsize[id] = size;
	}
	if (i == JVM_MAX_ENTRIES)
		goto bad;
	for (int t = 0; t < 2; t++) {
		uint64_t base = t ? longs : ints, stride = t ? l_stride : i_stride;
		uint64_t no = t ? l_name : i_name, vo = t ? l_value : i_value;
		for (i = 0; base && i < JVM_MAX_ENTRIES; i++) {
			uint64_t np;
			if (read(ctx, base + i * stride, e, stride) < 0)
				goto bad;
			memcpy(&np, e + no, 8);
			if (!np)
				break;
			int64_t v;
			if (t)
				memcpy(&v, e + vo, 8);
			else {
				int32_t v32;
				memcpy(&v32, e + vo, 4);
				v = v32;
			}
			int nl = read_name(read, ctx, np, tn);
			if (nl < 0)
				continue;
			int64_t id = intern__add(js->consts, tn, (size_t)nl, NULL);
			if (id < 0)
				goto bad;
			grow((void **)&js->cv, &js->ccap, (size_t)id + 1, sizeof(*js->cv));
			js->cv[id] = v;
		}
		if (i == JVM_MAX_ENTRIES)
			goto bad;
	}
	return js;
bad:
	snprintf(why, whylen, "its gHotSpotVM tables are not whole (unreadable, or longer than "
		 "%d entries)", JVM_MAX_ENTRIES);
	jvm_structs__free(js);
	return NULL;
}

void jvm_structs__free(struct jvm_structs *js)
{
	if (!js)
		return;
	intern__free(js->fields);
	intern__free(js->types);
	intern__free(js->consts);
	free(js->fv);
	free(js->tsize);
	free(js->cv);
	free(js);
}

int jvm_structs__field(const struct jvm_structs *js, const char *type, const char *field,
		       uint64_t *offset, uint64_t *static_addr)
{
	char key[2 * JVM_MAX_NAME + 4];
	int kl = snprintf(key, sizeof(key), "%s::%s", type, field);
	int64_t id = kl > 0 && (size_t)kl < sizeof(key) ? intern__find(js->fields, key, (size_t)kl) : -1;
	if (id < 0)
		return -1;
	*offset = js->fv[id].offset;
	*static_addr = js->fv[id].addr;
	return 0;
}

uint64_t jvm_structs__offset(const struct jvm_structs *js, const char *type, const char *field)
{
	uint64_t off, addr;
	return jvm_structs__field(js, type, field, &off, &addr) < 0 || addr ? UINT64_MAX : off;
}

uint64_t jvm_structs__static(const struct jvm_structs *js, const char *type, const char *field)
{
	uint64_t off, addr;
	return jvm_structs__field(js, type, field, &off, &addr) < 0 ? 0 : addr;
}

uint64_t jvm_structs__size(const struct jvm_structs *js, const char *type)
{
	int64_t id = intern__find(js->types, type, strlen(type));
	return id < 0 ? 0 : js->tsize[id];
}

int jvm_structs__constant(const struct jvm_structs *js, const char *name, int64_t *value)
{
	int64_t id = intern__find(js->consts, name, strlen(name));
	if (id < 0)
		return -1;
	*value = js->cv[id];
	return 0;
}

void jvm_structs__counts(const struct jvm_structs *js, size_t *fields, size_t *types,
			 size_t *constants)
{
	*fields = intern__count(js->fields);
	*types = intern__count(js->types);
	*constants = intern__count(js->consts);
}
