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
	struct vec functions, locations, mappings, samples;
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

static Label *label(struct builder *b, const char *key, const char *s, int64_t num)
{
	Label *lb = xmalloc(sizeof(*lb));
	perftools__profiles__label__init(lb);
	lb->key = string_id(b, key);
	if (s)
		lb->str = string_id(b, s);
	else
		lb->num = num;
	return lb;
}

static void add_sample(struct builder *b, const struct profile_info *info,
		       const struct frame_stack *st)
{
	Sample *s = xmalloc(sizeof(*s));
	perftools__profiles__sample__init(s);
	s->n_location_id = st->n;
	s->location_id = xcalloc(st->n ? st->n : 1, sizeof(*s->location_id));
	for (size_t i = 0; i < st->n; i++)
		s->location_id[i] = location_id(b, st->locs[i]);  /* leaf first, as ours */
	s->n_value = 3;
	s->value = xcalloc(3, sizeof(*s->value));
	s->value[0] = (int64_t)st->count;
	s->value[1] = (int64_t)(st->count * info->period_ns);
	s->value[2] = (int64_t)st->cpu_ns;
	s->label = xcalloc(6, sizeof(*s->label));
	s->label[s->n_label++] = label(b, "state", st->go_state ? st->go_state :
						   stacks__state_name(st->state), 0);
	if (st->syscall >= 0)
		s->label[s->n_label++] = label(b, "syscall", syscalls__name(st->syscall), 0);
	const struct stack_label *l = frames__label(b->fr, st->label);
	if (l) {
		s->label[s->n_label++] = label(b, l->goid ? "goroutine_function" : "thread", l->thread, 0);
		if (l->goid > 0)
			s->label[s->n_label++] = label(b, "goroutine", NULL, l->goid);
		else if (l->tid)        /* 0: many threads of that name */
			s->label[s->n_label++] = label(b, "tid", NULL, l->tid);
		if (l->pid) {
			s->label[s->n_label++] = label(b, "process", l->process, 0);
			s->label[s->n_label++] = label(b, "pid", NULL, l->pid);
		}
	}
	vec_push(&b->samples, s);
}

static ValueType *value_type(struct builder *b, const char *type, const char *unit)
{
	ValueType *vt = xmalloc(sizeof(*vt));
	perftools__profiles__value_type__init(vt);
	vt->type = string_id(b, type);
	vt->unit = string_id(b, unit);
	return vt;
}

static void build(struct builder *b, Profile *p, const struct profile_info *info)
{
	string_id(b, "");
	/* One profile, two views: -sample_index=wall (the default) and
	 * -sample_index=cpu. */
	p->n_sample_type = 3;
	p->sample_type = xcalloc(3, sizeof(*p->sample_type));
	p->sample_type[0] = value_type(b, "samples", "count");
	p->sample_type[1] = value_type(b, "wall", "nanoseconds");
	p->sample_type[2] = value_type(b, "cpu", "nanoseconds");
	p->period_type = value_type(b, "wall", "nanoseconds");
	p->period = (int64_t)info->period_ns;
	p->default_sample_type = string_id(b, "wall");
	p->time_nanos = (int64_t)info->start_ns;
	p->duration_nanos = (int64_t)info->duration_ns;
	if (info->comment) {
		p->n_comment = 1;
		p->comment = xcalloc(1, sizeof(*p->comment));
		p->comment[0] = string_id(b, info->comment);
	}
	/* pprof takes the first mapping for the main binary ("File: ..."). */
	mapping_id(b, frames__main_module(b->fr));
	for (size_t i = 0; i < frames__nstacks(b->fr); i++) {
		struct frame_stack s;
		frames__stack(b->fr, i, &s);
		add_sample(b, info, &s);
	}
	p->n_sample = b->samples.n;
	p->sample = (Sample **)b->samples.v;
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
	for (size_t i = 0; i < p->n_sample; i++) {
		Sample *s = p->sample[i];
		for (size_t j = 0; j < s->n_label; j++)
			free(s->label[j]);
		free(s->label);
		free(s->value);
		free(s->location_id);
		free(s);
	}
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
	free(p->sample);
	free(p->location);
	free(p->function);
	free(p->mapping);
}

/* gzip with zlib; FD stays open (gzdopen closes the dup). */
static int write_gzip(int fd, const uint8_t *buf, size_t len, char *err, size_t errlen)
{
	int dfd = dup(fd);
	gzFile gz = dfd >= 0 ? gzdopen(dfd, "wb") : NULL;
	if (!gz) {
		if (dfd >= 0)
			close(dfd);
		snprintf(err, errlen, "gzdopen: %s", strerror(errno));
		return -EIO;
	}
	int r = 0;
	while (len && r == 0) {
		unsigned chunk = len > (1u << 30) ? (1u << 30) : (unsigned)len;
		if (gzwrite(gz, buf, chunk) != (int)chunk)
			r = -EIO;
		buf += chunk;
		len -= chunk;
	}
	if (gzclose(gz) != Z_OK)
		r = -EIO;
	if (r < 0)
		snprintf(err, errlen, "writing gzip data: %s", strerror(errno ? errno : EIO));
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
	Profile p;
	perftools__profiles__profile__init(&p);
	int r = -ENOMEM;
	if (b.strings && b.funcs) {
		build(&b, &p, info);
		size_t len = perftools__profiles__profile__get_packed_size(&p);
		uint8_t *buf = xmalloc(len);
		perftools__profiles__profile__pack(&p, buf);
		r = write_gzip(fd, buf, len, err, errlen);
		free(buf);
		free_profile(&p);
	} else {
		snprintf(err, errlen, "out of memory");
	}
	intern__free(b.strings);
	intern__free(b.funcs);
	free(b.map_ids);
	free(b.loc_ids);
	return r;
}
