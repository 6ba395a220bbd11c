#include "output/readers.h"

#include <ctype.h>
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include "build/output/profile.pb-c.h"
#include "util/intern.h"
#include "util/text.h"
#include "util/xalloc.h"

#define READ_MAX (1ull << 32)          /* 4 GiB: more is not a profile */
/* A folded line holds a stack: 10,000 frames of 2 KiB names are 20 MiB.
 * A longer line, or a longer name (C++ template names reach some tens of
 * KiB), is not a stack: refused before it is held whole (/dev/zero is one
 * endless line). */
#define LINE_MAX_BYTES (64u << 20)
#define FRAME_MAX_BYTES (1u << 20)

/* ---- folded ------------------------------------------------------------- */

struct folded {
	struct frames *fr;
	struct intern *names;           /* frame name -> loc id (index) */
	uint32_t *loc_of;               /* names' id -> loc id */
	size_t nloc_of;
	uint32_t *locs;                 /* the stack being added, leaf first */
	/* The previous line's frames (cleaned, NUL-terminated), where each
	 * ends, and their loc ids root first: a line that starts as the one
	 * before it (folded files are usually sorted) reuses those frames'
	 * ids, without looking their names up again. */
	char *prev;
	size_t prev_len, prev_cap;
	size_t *ends;
	uint32_t *ids;
	size_t nprev, cap;
};

static uint32_t name_loc(struct folded *f, const char *name, size_t len)
{
	int added;
	if (!len)
		name = "[unknown]", len = strlen(name);
	int64_t id = intern__add(f->names, name, len, &added);
	if (id < 0) {
		xalloc_oom();
	}
	if (added) {
		if ((size_t)id >= f->nloc_of) {
			f->nloc_of = f->nloc_of ? f->nloc_of * 2 : 256;
			f->loc_of = xrealloc(f->loc_of, f->nloc_of * sizeof(*f->loc_of));
		}
		struct frame_line l = { name, NULL, 0 };     /* NUL-terminated by the caller */
		f->loc_of[id] = frames__add_loc(f->fr, 0, FRAMES_NO_MODULE, &l, 1);
	}
	return f->loc_of[id];
}

/* How many of the previous line's frames the LEN bytes of frames at LINE
 * start with: frame j is the same when its bytes and what ends it (';' or
 * the end of the frames) are. */
static size_t same_frames(const struct folded *f, const char *line, size_t len)
{
	size_t n = len < f->prev_len ? len : f->prev_len, common = 0, k = 0;
	while (common < n && line[common] == f->prev[common])
		common++;
	while (k < f->nprev && f->ends[k] < common)
		k++;
	/* The frame that ends where the match stops: the previous line's last
	 * one, the same when this line's frame ends there too. */
	if (k < f->nprev && f->ends[k] == common && common == f->prev_len &&
	    (common == len || line[common] == ';'))
		k++;
	return k;
}

/* Gives the LEN bytes of frames at LINE ("root;...;leaf") their loc ids,
 * in f->locs leaf first; returns how many.  LINE's ';' become NULs. */
static size_t line_locs(struct folded *f, char *line, size_t len)
{
	size_t k = same_frames(f, line, len), n = k;
	if (f->prev_cap < len + 1) {
		f->prev_cap = 2 * (len + 1);
		f->prev = xrealloc(f->prev, f->prev_cap);
	}
	memcpy(f->prev, line, len + 1);
	f->prev_len = len;
	char *frame = k ? line + f->ends[k - 1] + 1 : line, *end = line + len;
	if (k == 0 || f->ends[k - 1] < len) {  /* else the line is the one before */
		for (;;) {
			char *next = memchr(frame, ';', (size_t)(end - frame));
			size_t flen = next ? (size_t)(next - frame) : (size_t)(end - frame);
			if (n == f->cap) {
				f->cap = f->cap ? 2 * f->cap : 256;
				f->ids = xrealloc(f->ids, f->cap * sizeof(*f->ids));
				f->ends = xrealloc(f->ends, f->cap * sizeof(*f->ends));
				f->locs = xrealloc(f->locs, f->cap * sizeof(*f->locs));
			}
			frame[flen] = '\0';
			f->ids[n] = name_loc(f, frame, flen);
			f->ends[n++] = (size_t)(frame + flen - line);
			if (!next)
				break;
			frame = next + 1;
		}
	}
	f->nprev = n;
	for (size_t i = 0; i < n; i++)
		f->locs[n - 1 - i] = f->ids[i];         /* leaf first */
	return n;
}

/* The count after the last space: digits only (no sign, no junk), and no
 * more than fits.  Returns 0, or -1. */
static int parse_count(const char *s, uint64_t *out)
{
	char *end;
	if (!isdigit((unsigned char)*s))
		return -1;
	errno = 0;
	unsigned long long v = strtoull(s, &end, 10);
	if (errno || *end)
		return -1;
	*out = v;
	return 0;
}

/* Adds one folded line ("root;...;leaf COUNT", LEN bytes without its
 * newline); returns 0, or -1 with the reason in WHY. */
static int add_folded_line(struct folded *f, char *line, size_t len, const char **why)
{
	char *cr = memchr(line, '\r', len);
	if (cr) {
		*cr = '\0';
		len = (size_t)(cr - line);
	}
	len = text__clean(line, len + 1, line, len);    /* frames are any bytes */
	char *sp = memrchr(line, ' ', len);
	uint64_t count;
	if (!sp || sp == line) {
		*why = "not a folded stack (\"frame;frame;... COUNT\")";
		return -1;
	}
	if (parse_count(sp + 1, &count) < 0) {
		*why = "the count is not a whole number of samples";
		return -1;
	}
	*sp = '\0';
	for (const char *fr = line, *next; fr < sp; fr = next + 1) {
		next = memchr(fr, ';', (size_t)(sp - fr));
		if (!next)
			next = sp;
		if ((size_t)(next - fr) > FRAME_MAX_BYTES) {
			*why = "a frame name longer than 1 MiB";
			return -1;
		}
	}
	size_t n = line_locs(f, line, (size_t)(sp - line));
	struct frame_stack s = { FRAMES_NO_LABEL, 'R', -1, NULL, f->locs, n, count, 0 };
	if (frames__total(f->fr) + count < count) {
		*why = "the counts add up to more than 2^64 samples";
		return -1;
	}
	frames__add_stack(f->fr, &s);
	return 0;
}

/* Lines read from a FILE in large chunks, the first of them maybe read
 * already (readers__any looks at the first bytes to pick the reader): the
 * input is never held whole, only the line being read. */
struct lines {
	FILE *in;                       /* NULL: all of it is in buf */
	char *buf;                      /* holds [start, end), and room for a NUL */
	size_t cap, start, end;
	uint64_t total;                 /* bytes read, bounded by READ_MAX */
	int eof, error;                 /* error: an errno */
	int too_long;                   /* a line longer than LINE_MAX_BYTES */
};

#define LINES_CHUNK (1u << 20)

/* Reads more after what BUF holds; returns the bytes read (0: end or error). */
static size_t lines_fill(struct lines *ls)
{
	if (ls->start) {
		memmove(ls->buf, ls->buf + ls->start, ls->end - ls->start);
		ls->end -= ls->start;
		ls->start = 0;
	}
	if (ls->cap - ls->end < LINES_CHUNK / 2) {
		ls->cap = ls->cap < LINES_CHUNK ? LINES_CHUNK : ls->cap * 2;
		ls->buf = xrealloc(ls->buf, ls->cap);
	}
	errno = 0;
	size_t got = ls->in ? fread(ls->buf + ls->end, 1, ls->cap - 1 - ls->end, ls->in) : 0;
	ls->end += got;
	ls->total += got;
	if (ls->total >= READ_MAX)
		ls->error = EFBIG;
	else if (ls->in && ferror(ls->in))
		ls->error = errno ? errno : EIO;
	if (!got)
		ls->eof = 1;
	return ls->error ? 0 : got;
}

/* The next line, without its newline, NUL-terminated in place; its length
 * is *LEN and *NEWLINE says whether it had one.  NULL at the end or on a
 * read error (ls->error). */
static char *lines_next(struct lines *ls, size_t *len, int *newline)
{
	for (;;) {
		char *line = ls->buf + ls->start;
		char *nl = ls->start < ls->end ? memchr(line, '\n', ls->end - ls->start) : NULL;
		if (nl || (ls->eof && ls->start < ls->end)) {
			*len = nl ? (size_t)(nl - line) : ls->end - ls->start;
			*newline = nl != NULL;
			line[*len] = '\0';
			ls->start += *len + (nl != NULL);
			return line;
		}
		if (ls->eof || ls->error)
			return NULL;
		if (ls->end - ls->start > LINE_MAX_BYTES) {
			ls->too_long = 1;
			return NULL;
		}
		lines_fill(ls);
	}
}

static struct frames *parse_folded(struct lines *ls, const char *name, char *err, size_t errlen)
{
	struct folded f = { .fr = frames__new(), .names = intern__new() };
	size_t len, lineno = 0;
	int newline;
	char *line;
	const char *why = NULL;
	if (!f.fr || !f.names) {
		snprintf(err, errlen, "out of memory");
		goto fail;
	}
	while ((line = lines_next(ls, &len, &newline))) {
		lineno++;
		if ((len == 0 && newline) || line[0] == '#')
			continue;
		if (memchr(line, '\0', len)) {
			snprintf(err, errlen, "%s:%zu: a NUL byte in the line", name, lineno);
			goto fail;
		}
		if (add_folded_line(&f, line, len, &why) < 0) {
			snprintf(err, errlen, "%s:%zu: %s", name, lineno, why);
			goto fail;
		}
	}
	if (ls->too_long) {
		snprintf(err, errlen, "%s:%zu: a line longer than %u MiB: not a folded stack", name,
			 lineno + 1, LINE_MAX_BYTES >> 20);
		goto fail;
	}
	if (ls->error) {
		snprintf(err, errlen, "cannot read %s: %s", name, strerror(ls->error));
		goto fail;
	}
	goto out;
fail:
	frames__free(f.fr);
	f.fr = NULL;
out:
	free(f.locs);
	free(f.ids);
	free(f.ends);
	free(f.prev);
	free(f.loc_of);
	intern__free(f.names);
	return f.fr;
}

struct frames *readers__folded(FILE *in, const char *name, char *err, size_t errlen)
{
	struct lines ls = { .in = in };
	struct frames *fr = parse_folded(&ls, name, err, errlen);
	free(ls.buf);
	return fr;
}

/* ---- pprof -------------------------------------------------------------- */

typedef Perftools__Profiles__Profile Profile;

struct pp {
	const Profile *p;
	struct frames *fr;
	uint32_t *loc_index;            /* location i -> loc id */
	int32_t *map_index;             /* mapping i -> module id */
	struct intern *labels;          /* (pid, tid, process, thread) -> label id */
	char *err;
	size_t errlen;
};

static const char *pstr(const struct pp *x, int64_t i)
{
	return i >= 0 && (size_t)i < x->p->n_string_table ? x->p->string_table[i] : "";
}

/* The index of the sample type called TYPE, or -1. */
static int value_index(const Profile *p, const char *type)
{
	for (size_t i = 0; i < p->n_sample_type; i++) {
		int64_t t = p->sample_type[i]->type;
		if (t >= 0 && (size_t)t < p->n_string_table && strcmp(p->string_table[t], type) == 0)
			return (int)i;
	}
	return -1;
}

/* Objects refer to each other by id; ids are usually index + 1, but need
 * not be: look them up. */
static long find_id(void *const *objs, size_t n, size_t id_offset, uint64_t id)
{
	if (id && id <= n && *(const uint64_t *)((const char *)objs[id - 1] + id_offset) == id)
		return (long)(id - 1);
	for (size_t i = 0; i < n; i++)
		if (*(const uint64_t *)((const char *)objs[i] + id_offset) == id)
			return (long)i;
	return -1;
}

static int add_mappings(struct pp *x)
{
	const Profile *p = x->p;
	x->map_index = xcalloc(p->n_mapping + 1, sizeof(*x->map_index));
	for (size_t i = 0; i < p->n_mapping; i++) {
		const Perftools__Profiles__Mapping *m = p->mapping[i];
		struct frame_module fm = { pstr(x, m->filename), NULL, pstr(x, m->build_id),
					   m->memory_start, m->memory_limit };
		x->map_index[i] = frames__add_module(x->fr, &fm);
	}
	if (p->n_mapping)
		frames__set_main_module(x->fr, x->map_index[0]);
	return 0;
}

static int add_locations(struct pp *x)
{
	const Profile *p = x->p;
	x->loc_index = xcalloc(p->n_location + 1, sizeof(*x->loc_index));
	for (size_t i = 0; i < p->n_location; i++) {
		const Perftools__Profiles__Location *l = p->location[i];
		struct frame_line *lines = xcalloc(l->n_line + 1, sizeof(*lines));
		for (size_t j = 0; j < l->n_line; j++) {
			long f = find_id((void *const *)p->function, p->n_function,
					 offsetof(Perftools__Profiles__Function, id), l->line[j]->function_id);
			if (f < 0) {
				snprintf(x->err, x->errlen, "location %zu names function %llu, which "
					 "the profile does not have", i + 1,
					 (unsigned long long)l->line[j]->function_id);
				free(lines);
				return -1;
			}
			lines[j] = (struct frame_line){ pstr(x, p->function[f]->name),
							pstr(x, p->function[f]->filename),
							(int)l->line[j]->line };
			if (!lines[j].file[0])
				lines[j].file = NULL;
		}
		long m = l->mapping_id ? find_id((void *const *)p->mapping, p->n_mapping,
				offsetof(Perftools__Profiles__Mapping, id), l->mapping_id) : -1;
		size_t n = l->n_line;
		if (!n) {       /* not symbolized: the address is all there is */
			static char hex[32];
			snprintf(hex, sizeof(hex), "0x%llx", (unsigned long long)l->address);
			lines[0] = (struct frame_line){ hex, NULL, 0 };
			n = 1;
		}
		x->loc_index[i] = frames__add_loc(x->fr, l->address,
						  m >= 0 ? x->map_index[m] : FRAMES_NO_MODULE, lines, n);
		free(lines);
	}
	return 0;
}

/* The sample's label, made from its thread/tid/process/pid labels. */
static uint32_t sample_label(struct pp *x, const Perftools__Profiles__Sample *s, char *state)
{
	struct stack_label l = { 0, 0, 0, "", "", NULL, NULL, NULL, NULL };
	char rt[300];
	int any = 0;
	for (size_t i = 0; i < s->n_label; i++) {
		const char *key = pstr(x, s->label[i]->key);
		const char *v = pstr(x, s->label[i]->str);
		if (strcmp(key, "thread") == 0)
			l.thread = v, any = 1;
		else if (strcmp(key, "process") == 0)
			l.process = v, any = 1;
		else if (strcmp(key, "comm") == 0)
			l.comm = v;
		else if (strcmp(key, "python_thread") == 0 && v) {
			snprintf(rt, sizeof(rt), "%s=%s", key, v);     /* a runtime's name for it */
			l.rt_thread = rt;
		}
		else if (strcmp(key, "tid") == 0)
			l.tid = (pid_t)s->label[i]->num, any = 1;
		else if (strcmp(key, "pid") == 0)
			l.pid = (pid_t)s->label[i]->num, any = 1;
		else if (strcmp(key, "state") == 0)
			*state = strcmp(v, "running") == 0 ? 'R' : strcmp(v, "sleeping") == 0 ? 'S' :
				 strcmp(v, "disk wait") == 0 ? 'D' : strcmp(v, "stopped") == 0 ? 'T' : '?';
	}
	if (!any)
		return FRAMES_NO_LABEL;
	char key[600];
	int len = snprintf(key, sizeof(key), "%d\037%d\037%s\037%s\037%s", (int)l.pid, (int)l.tid,
			   l.process, l.thread, l.rt_thread ? l.rt_thread : "");
	int added;
	int64_t id = intern__add(x->labels, key, (size_t)len < sizeof(key) ? (size_t)len :
				 sizeof(key) - 1, &added);
	if (id < 0)
		return FRAMES_NO_LABEL;
	if (added)
		frames__add_label(x->fr, &l);
	return (uint32_t)id;
}

static int add_samples(struct pp *x)
{
	const Profile *p = x->p;
	int vi = value_index(p, "samples");
	if (vi < 0 && p->default_sample_type)
		vi = value_index(p, pstr(x, p->default_sample_type));
	if (vi < 0)
		vi = 0;
	int ci = value_index(p, "cpu");
	uint32_t *locs = NULL;
	size_t cap = 0;
	int r = 0;
	for (size_t i = 0; i < p->n_sample && r == 0; i++) {
		const Perftools__Profiles__Sample *s = p->sample[i];
		if ((size_t)vi >= s->n_value || s->value[vi] < 0) {
			snprintf(x->err, x->errlen, "sample %zu has no valid value %d", i + 1, vi);
			r = -1;
			break;
		}
		if (s->n_location_id > cap) {
			cap = s->n_location_id * 2;
			locs = xrealloc(locs, cap * sizeof(*locs));
		}
		for (size_t j = 0; j < s->n_location_id && r == 0; j++) {
			long l = find_id((void *const *)p->location, p->n_location,
					 offsetof(Perftools__Profiles__Location, id), s->location_id[j]);
			if (l < 0) {
				snprintf(x->err, x->errlen, "sample %zu names location %llu, which the "
					 "profile does not have", i + 1,
					 (unsigned long long)s->location_id[j]);
				r = -1;
			} else {
				locs[j] = x->loc_index[l];
			}
		}
		char state = 'R';
		uint32_t label = r == 0 ? sample_label(x, s, &state) : FRAMES_NO_LABEL;
		int64_t cpu = ci >= 0 && (size_t)ci < s->n_value && s->value[ci] > 0 ? s->value[ci] : 0;
		struct frame_stack fs = { label, state, -1, NULL, locs, s->n_location_id,
					  (uint64_t)s->value[vi], (uint64_t)cpu };
		if (r == 0)
			frames__add_stack(x->fr, &fs);
	}
	free(locs);
	return r;
}

/* Inflates gzip data; returns the bytes (free them) or NULL. */
static unsigned char *gunzip(const unsigned char *buf, size_t len, size_t *out_len)
{
	z_stream z = { .next_in = (Bytef *)buf, .avail_in = (uInt)len };
	size_t cap = len * 4 + 4096, n = 0;
	unsigned char *out = xmalloc(cap);
	if (len > UINT32_MAX || inflateInit2(&z, 16 + MAX_WBITS) != Z_OK) {
		free(out);
		return NULL;
	}
	int r;
	do {
		if (n == cap) {
			if (cap >= READ_MAX)
				break;
			cap *= 2;
			out = xrealloc(out, cap);
		}
		z.next_out = out + n;
		z.avail_out = (uInt)(cap - n > UINT32_MAX ? UINT32_MAX : cap - n);
		r = inflate(&z, Z_NO_FLUSH);
		n = (size_t)((unsigned char *)z.next_out - out);
	} while (r == Z_OK);
	inflateEnd(&z);
	if (r != Z_STREAM_END) {
		free(out);
		return NULL;
	}
	*out_len = n;
	return out;
}

struct frames *readers__pprof(const unsigned char *buf, size_t len, char *err, size_t errlen)
{
	unsigned char *plain = NULL;
	if (len >= 2 && buf[0] == 0x1f && buf[1] == 0x8b) {
		plain = gunzip(buf, len, &len);
		if (!plain) {
			snprintf(err, errlen, "not valid gzip data");
			return NULL;
		}
		buf = plain;
	}
	Profile *p = perftools__profiles__profile__unpack(NULL, len, buf);
	free(plain);
	if (!p) {
		snprintf(err, errlen, "not a pprof profile (profile.proto did not decode)");
		return NULL;
	}
	struct pp x = { .p = p, .fr = frames__new(), .labels = intern__new(), .err = err,
			.errlen = errlen };
	if (!x.fr || !x.labels || add_mappings(&x) < 0 || add_locations(&x) < 0 ||
	    add_samples(&x) < 0) {
		frames__free(x.fr);
		x.fr = NULL;
	}
	free(x.loc_index);
	free(x.map_index);
	intern__free(x.labels);
	perftools__profiles__profile__free_unpacked(p, NULL);
	return x.fr;
}

/* ---- either ------------------------------------------------------------- */

/* pprof is gzipped, or a protobuf whose first field is sample_type (1,
 * length-delimited: 0x0a); folded text never starts with a byte below
 * 0x20 but for an empty line, and is not binary. */
static int looks_like_pprof(const unsigned char *buf, size_t len)
{
	if (len >= 2 && buf[0] == 0x1f && buf[1] == 0x8b)
		return 1;
	return len >= 2 && buf[0] == 0x0a && memchr(buf, 0, len) != NULL;
}

/* Folded text is read a line at a time; pprof, or a file that may be
 * (one starting with an empty line), is read whole first. */
struct frames *readers__any(FILE *in, const char *name, char *err, size_t errlen)
{
	struct lines ls = { .in = in };
	struct frames *fr = NULL;
	const unsigned char *buf;
	lines_fill(&ls);
	buf = (const unsigned char *)ls.buf;
	if (!ls.error && ls.end && (buf[0] == 0x0a || buf[0] == 0x1f)) {
		while (lines_fill(&ls))
			;
		buf = (const unsigned char *)ls.buf;
	}
	if (ls.error) {
		snprintf(err, errlen, "cannot read %s: %s", name, strerror(ls.error));
	} else if (looks_like_pprof(buf, ls.end)) {
		char why[400];
		fr = readers__pprof(buf, ls.end, why, sizeof(why));
		if (!fr)
			snprintf(err, errlen, "%s: %s", name, why);
	} else if (ls.end == 0) {
		fr = frames__new();             /* an empty profile */
	} else {
		fr = parse_folded(&ls, name, err, errlen);
	}
	free(ls.buf);
	return fr;
}
