#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <zlib.h>

#include "build/output/profile.pb-c.h"
#include "output/output.h"
#include "util/intern.h"
#include "util/syscalls.h"
#include "util/strbuf.h"
#include "util/text.h"
#include "util/xalloc.h"

typedef Perftools__Profiles__Profile Profile;
typedef Perftools__Profiles__ValueType ValueType;
typedef Perftools__Profiles__Sample Sample;
typedef Perftools__Profiles__Label Label;
typedef Perftools__Profiles__Mapping Mapping;
typedef Perftools__Profiles__Location Location;
typedef Perftools__Profiles__Line Line;
typedef Perftools__Profiles__Function Function;

/* A growable array of message pointers. */
struct vec {
	void **v;
	size_t n, cap;
};

static void vec_push(struct vec *a, void *p)
{
	if (a->n == a->cap) {
		a->cap = a->cap ? a->cap * 2 : 64;
		a->v = xrealloc(a->v, a->cap * sizeof(*a->v));
	}
	a->v[a->n++] = p;
}

struct builder {
	const struct frames *fr;
	struct intern *strings, *funcs;
	uint64_t *map_ids;              /* frames' module index -> mapping id, 0: not yet */
	uint64_t *loc_ids;              /* frames' location index -> location id, 0: not yet */
	struct vec functions, locations, mappings;
	uint64_t *ids;                  /* a sample's location ids */
	size_t ids_cap;
};

/* pprof ids are 1-based indices (0 means "none"); string ids 0-based with
 * string_table[0] = "".  Protobuf strings must be UTF-8: names come
 * cleaned (util/text.h), anything else is cleaned here. */
static int64_t string_id(struct builder *b, const char *s)
{
	size_t len = s ? strlen(s) : 0;
	if (!len || text__valid(s, len))
		return intern__add(b->strings, len ? s : "", len, NULL);
	char *clean = xmalloc(len + 1);
	len = text__clean(clean, len + 1, s, len);
	int64_t id = intern__add(b->strings, clean, len, NULL);
	free(clean);
	return id;
}

static uint64_t function_id(struct builder *b, const char *name, const char *file)
{
	int64_t key[2] = { string_id(b, name), string_id(b, file) };
	int added;
	int64_t id = intern__add(b->funcs, key, sizeof(key), &added);
	if (added) {
		Function *f = xmalloc(sizeof(*f));
		perftools__profiles__function__init(f);
		f->id = (uint64_t)id + 1;
		f->name = key[0];
		f->system_name = key[0];
		f->filename = key[1];
		vec_push(&b->functions, f);
	}
	return (uint64_t)id + 1;
}

static uint64_t mapping_id(struct builder *b, int32_t module)
{
	const struct frame_module *m = frames__module(b->fr, module);
	if (!m)
		return 0;
	if (!b->map_ids[module]) {
		Mapping *mp = xmalloc(sizeof(*mp));
		perftools__profiles__mapping__init(mp);
		mp->id = b->mappings.n + 1;
		b->map_ids[module] = mp->id;
		mp->memory_start = m->start;
		mp->memory_limit = m->end;
		mp->file_offset = 0;    /* a module starts at its first mapping, offset 0 */
		mp->filename = string_id(b, m->path);
		mp->build_id = string_id(b, m->build_id);
		/* Symbolized already: tells pprof not to try again. */
		mp->has_functions = mp->has_filenames = mp->has_line_numbers = true;
		mp->has_inline_frames = true;
		vec_push(&b->mappings, mp);
	}
	return b->map_ids[module];
}

/* Lines are innermost first, as pprof wants them. */
static uint64_t location_id(struct builder *b, uint32_t loc)
{
	if (b->loc_ids[loc])
		return b->loc_ids[loc];
	const struct frame_loc *fl = frames__loc(b->fr, loc);
	Location *l = xmalloc(sizeof(*l));
	perftools__profiles__location__init(l);
	l->id = b->locations.n + 1;
	l->address = fl->addr;
	l->mapping_id = mapping_id(b, fl->module);
	l->n_line = fl->n;
	l->line = xcalloc(fl->n ? fl->n : 1, sizeof(*l->line));
	for (size_t i = 0; i < fl->n; i++) {
		const struct frame_line *f = frames__line(b->fr, fl->first + (uint32_t)i);
		Line *ln = xmalloc(sizeof(*ln));
		perftools__profiles__line__init(ln);
		ln->function_id = function_id(b, f->func, f->file);
		ln->line = f->line;
		l->line[i] = ln;
	}
	vec_push(&b->locations, l);
	b->loc_ids[loc] = l->id;
	return l->id;
}

/* A runtime's names for a unit, "KEY=VALUE" lines (a goroutine's pprof
 * labels; a Python thread's name): at most this many. */
#define RT_PAIRS_MAX 8
#define LABELS_MAX (10 + RT_PAIRS_MAX)

/* The sample's labels, in LB (LABELS_MAX at most); returns how many. */
static size_t labels(struct builder *b, const struct frame_stack *st, Label *lb)
{
	struct label_text { const char *key, *s; int64_t num; } l[LABELS_MAX];
	size_t n = 0;
	/* A runtime's word: a state of its own (a goroutine's) or a label
	 * "KEY=VALUE" besides the thread's state. */
	const char *rt = st->rt_state, *eq = rt ? strchr(rt, '=') : NULL;
	char key[64], fn_key[64];               /* alive until the labels are interned below */
	char rt_key[RT_PAIRS_MAX][64], rt_val[RT_PAIRS_MAX][72];
	l[n++] = (struct label_text){ "state", rt && !eq ? rt : stacks__state_name(st->state), 0 };
	if (eq && (size_t)(eq - rt) < sizeof(key)) {
		memcpy(key, rt, (size_t)(eq - rt));
		key[eq - rt] = 0;
		l[n++] = (struct label_text){ key, eq + 1, 0 };
	}
	if (st->syscall >= 0)
		l[n++] = (struct label_text){ "syscall", syscalls__name(st->syscall), 0 };
	const struct stack_label *sl = frames__label(b->fr, st->label);
	if (sl) {
		/* A runtime's unit: "goroutine_function", "goroutine" (Go's
		 * own labels), and who made it. */
		const char *unit = sl->unit ? sl->unit : "goroutine";
		snprintf(fn_key, sizeof(fn_key), "%s_function", unit);
		l[n++] = (struct label_text){ sl->unit_id ? fn_key : "thread", sl->thread, 0 };
		/* A runtime's names for the unit: "python_thread", a
		 * goroutine's pprof labels, a line each. */
		const char *line = sl->rt_thread;
		for (int k = 0; line && *line && k < RT_PAIRS_MAX; k++) {
			const char *nl = strchr(line, '\n'), *end = nl ? nl : line + strlen(line);
			const char *rq = memchr(line, '=', (size_t)(end - line));
			if (rq && (size_t)(rq - line) < sizeof(rt_key[k]) &&
			    (size_t)(end - rq - 1) < sizeof(rt_val[k])) {
				memcpy(rt_key[k], line, (size_t)(rq - line));
				rt_key[k][rq - line] = 0;
				memcpy(rt_val[k], rq + 1, (size_t)(end - rq - 1));
				rt_val[k][end - rq - 1] = 0;
				l[n++] = (struct label_text){ rt_key[k], rt_val[k], 0 };
			}
			line = nl ? nl + 1 : NULL;
		}
		if (sl->unit_id > 0)
			l[n++] = (struct label_text){ unit, NULL, sl->unit_id };
		if (sl->origin)
			l[n++] = (struct label_text){ "created_by", sl->origin, 0 };
		else if (sl->tid)       /* 0: many threads of that name */
			l[n++] = (struct label_text){ "tid", NULL, sl->tid };
		if (sl->pid) {
			l[n++] = (struct label_text){ "process", sl->process, 0 };
			if (sl->comm && *sl->comm)
				l[n++] = (struct label_text){ "comm", sl->comm, 0 };
			l[n++] = (struct label_text){ "pid", NULL, sl->pid };
		}
	}
	for (size_t i = 0; i < n; i++) {
		perftools__profiles__label__init(&lb[i]);
		lb[i].key = string_id(b, l[i].key);
		if (l[i].s)
			lb[i].str = string_id(b, l[i].s);
		else
			lb[i].num = l[i].num;
	}
	return n;
}

/* Appends to OUT what packing a Profile with this one sample would: the
 * field's key (2, length-delimited), the length, the Sample. */
static void pack_sample(struct builder *b, const struct profile_info *info,
			const struct frame_stack *st, struct strbuf *out)
{
	Sample s;
	Label lb[LABELS_MAX];
	Label *lbp[LABELS_MAX];
	int64_t value[3] = { (int64_t)st->count, (int64_t)(st->count * info->period_ns),
			     (int64_t)st->cpu_ns };
	perftools__profiles__sample__init(&s);
	if (st->n > b->ids_cap) {
		b->ids_cap = st->n * 2;
		b->ids = xrealloc(b->ids, b->ids_cap * sizeof(*b->ids));
	}
	for (size_t i = 0; i < st->n; i++)
		b->ids[i] = location_id(b, st->locs[i]);  /* leaf first, as ours */
	s.n_location_id = st->n;
	s.location_id = b->ids;
	s.n_value = 3;
	s.value = value;
	s.n_label = labels(b, st, lb);
	for (size_t i = 0; i < s.n_label; i++)
		lbp[i] = &lb[i];
	s.label = lbp;
	size_t len = perftools__profiles__sample__get_packed_size(&s);
	uint8_t head[11];
	size_t h = 0;
	head[h++] = 2 << 3 | 2;
	for (size_t v = len; ; v >>= 7) {
		head[h++] = (uint8_t)((v & 0x7f) | (v >= 0x80 ? 0x80 : 0));
		if (v < 0x80)
			break;
	}
	strbuf__add(out, (const char *)head, h);
	perftools__profiles__sample__pack(&s, (uint8_t *)strbuf__room(out, len));
	out->len += len;
}

static ValueType *value_type(struct builder *b, const char *type, const char *unit)
{
	ValueType *vt = xmalloc(sizeof(*vt));
	perftools__profiles__value_type__init(vt);
	vt->type = string_id(b, type);
	vt->unit = string_id(b, unit);
	return vt;
}

/* The fields before the samples (sample_type, 1) in HEAD and those after
 * them (3 to 14) in TAIL, with every string the header needs given its
 * id first, in the order a whole-profile build gives them. */
static void build_head(struct builder *b, Profile *head, Profile *tail,
		       const struct profile_info *info)
{
	string_id(b, "");
	/* One profile, two views: -sample_index=wall (the default) and
	 * -sample_index=cpu. */
	head->n_sample_type = 3;
	head->sample_type = xcalloc(3, sizeof(*head->sample_type));
	head->sample_type[0] = value_type(b, "samples", "count");
	head->sample_type[1] = value_type(b, "wall", "nanoseconds");
	head->sample_type[2] = value_type(b, "cpu", "nanoseconds");
	tail->period_type = value_type(b, "wall", "nanoseconds");
	tail->period = (int64_t)info->period_ns;
	tail->default_sample_type = string_id(b, info->default_cpu ? "cpu" : "wall");
	tail->time_nanos = (int64_t)info->start_ns;
	tail->duration_nanos = (int64_t)info->duration_ns;
	if (info->comment) {
		tail->n_comment = 1;
		tail->comment = xcalloc(1, sizeof(*tail->comment));
		tail->comment[0] = string_id(b, info->comment);
	}
	/* pprof takes the first mapping for the main binary ("File: ..."). */
	mapping_id(b, frames__main_module(b->fr));
}

/* What the samples added: mappings, locations, functions, strings. */
static void build_tail(struct builder *b, Profile *p)
{
	p->n_location = b->locations.n;
	p->location = (Location **)b->locations.v;
	p->n_function = b->functions.n;
	p->function = (Function **)b->functions.v;
	p->n_mapping = b->mappings.n;
	p->mapping = (Mapping **)b->mappings.v;
	p->n_string_table = intern__count(b->strings);
	p->string_table = xcalloc(p->n_string_table, sizeof(char *));
	for (size_t i = 0; i < p->n_string_table; i++)
		p->string_table[i] = (char *)intern__key(b->strings, i, NULL);
}

static void free_profile(Profile *p)
{
	for (size_t i = 0; i < p->n_location; i++) {
		for (size_t j = 0; j < p->location[i]->n_line; j++)
			free(p->location[i]->line[j]);
		free(p->location[i]->line);
		free(p->location[i]);
	}
	for (size_t i = 0; i < p->n_function; i++)
		free(p->function[i]);
	for (size_t i = 0; i < p->n_mapping; i++)
		free(p->mapping[i]);
	for (size_t i = 0; i < p->n_sample_type; i++)
		free(p->sample_type[i]);
	free(p->sample_type);
	free(p->period_type);
	free(p->comment);
	free(p->string_table);
	free(p->location);
	free(p->function);
	free(p->mapping);
}

/* PROFILE packed into OUT. */
static void pack_profile(const Profile *p, struct strbuf *out)
{
	size_t len = perftools__profiles__profile__get_packed_size(p);
	perftools__profiles__profile__pack(p, (uint8_t *)strbuf__room(out, len));
	out->len += len;
}

/* OUT's bytes into GZ (0, or -EIO), emptying OUT. */
static int gz_put(gzFile gz, struct strbuf *out)
{
	int r = 0;
	const char *buf = out->s;
	size_t len = out->len;
	while (len && r == 0) {
		unsigned chunk = len > (1u << 30) ? (1u << 30) : (unsigned)len;
		if (gzwrite(gz, buf, chunk) != (int)chunk)
			r = -EIO;
		buf += chunk;
		len -= chunk;
	}
	strbuf__reset(out);
	return r;
}

/* The profile, gzipped with zlib as it is packed: the bytes of one packed
 * Profile message, whose samples are packed one at a time (a million
 * samples as protobuf-c structures would take a gigabyte), the fields
 * being written in field order as protobuf-c writes them.  FD stays open
 * (gzdopen closes the dup). */
static int write_gzip(int fd, struct builder *b, const struct profile_info *info,
		      char *err, size_t errlen)
{
	int dfd = dup(fd);
	gzFile gz = dfd >= 0 ? gzdopen(dfd, "wb") : NULL;
	if (!gz) {
		if (dfd >= 0)
			close(dfd);
		snprintf(err, errlen, "gzdopen: %s", strerror(errno));
		return -EIO;
	}
	Profile head, tail;
	struct strbuf out = { 0 };
	perftools__profiles__profile__init(&head);
	perftools__profiles__profile__init(&tail);
	build_head(b, &head, &tail, info);
	pack_profile(&head, &out);
	int r = 0;
	for (size_t i = 0; i < frames__nstacks(b->fr) && r == 0; i++) {
		struct frame_stack s;
		frames__stack(b->fr, i, &s);
		pack_sample(b, info, &s, &out);
		if (out.len >= (1u << 18))
			r = gz_put(gz, &out);
	}
	build_tail(b, &tail);
	pack_profile(&tail, &out);
	if (r == 0)
		r = gz_put(gz, &out);
	if (gzclose(gz) != Z_OK)
		r = -EIO;
	if (r < 0)
		snprintf(err, errlen, "writing gzip data: %s", strerror(errno ? errno : EIO));
	free_profile(&head);
	free_profile(&tail);
	strbuf__free(&out);
	return r;
}

int pprof__write(int fd, const struct frames *fr, const struct profile_info *info,
		 char *err, size_t errlen)
{
	struct builder b = {
		.fr = fr,
		.strings = intern__new(),
		.funcs = intern__new(),
		.map_ids = xcalloc(frames__nmodules(fr) + 1, sizeof(uint64_t)),
		.loc_ids = xcalloc(frames__nlocs(fr) + 1, sizeof(uint64_t)),
	};
	int r = -ENOMEM;
	if (b.strings && b.funcs)
		r = write_gzip(fd, &b, info, err, errlen);
	else
		snprintf(err, errlen, "out of memory");
	intern__free(b.strings);
	intern__free(b.funcs);
	free(b.map_ids);
	free(b.loc_ids);
	free(b.ids);
	return r;
}
