/* speedscope: the JSON file format of https://www.speedscope.app, as
 * jansson writes it (JSON_COMPACT); jansson builds and escapes the frames
 * and names, and the samples are written as they are walked.
 *
 * One "sampled" profile per thread, so speedscope's thread picker shows
 * each; frames are shared, one per function (and source file), so all
 * views merge by function as a flame graph does.  A sample lists frame
 * indices root first; its weight is wall time (samples x period) or, with
 * --cpu, the CPU time its thread used, in nanoseconds. */
#include <errno.h>
#include <jansson.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "output/output.h"
#include "util/intern.h"
#include "util/strbuf.h"
#include "util/text.h"
#include "util/xalloc.h"

/* What is gathered before a byte is written: the frames (in the order a
 * walk of the samples first meets them, as speedscope indexes them), each
 * profile's name and total weight, and the samples as (stack, weight)
 * records; the samples' JSON is then written a profile at a time. */
struct sample {
	uint32_t stack, slot;
	uint32_t leaf;                  /* its leaf frame's index, or NO_LEAF */
	uint64_t weight;
};

#define NO_LEAF UINT32_MAX
#define NO_FRAME UINT32_MAX

struct builder {
	const struct frames *fr;
	struct frame_ref *walk;
	size_t walk_cap;
	struct intern *frame_keys;      /* "func\0file" -> frame index */
	uint32_t *of_line;              /* frame line -> frame index, NO_FRAME: not yet */
	json_t *frames;
	char **names;                   /* by thread slot: the profile's name as JSON, or NULL */
	uint64_t *ends;                 /* each profile's total weight */
	size_t nslots;
	struct sample *samples;
	size_t nsamples, samples_cap;
	bool failed;                    /* a frame or profile could not be built */
};

/* A JSON string of S.  jansson refuses invalid UTF-8 (NULL), and a frame
 * lost that way would shift every later frame index: names come cleaned
 * (util/text.h), anything else is cleaned here. */
static json_t *jstring(const char *s)
{
	size_t len = strlen(s);
	if (text__valid(s, len))
		return json_stringn(s, len);
	char *clean = xmalloc(len + 1);
	len = text__clean(clean, len + 1, s, len);
	json_t *j = json_stringn(clean, len);
	free(clean);
	return j;
}

/* S as JSON text, escaped by jansson (free it); NULL when out of memory. */
static char *jtext(const char *s)
{
	json_t *j = jstring(s);
	char *text = j ? json_dumps(j, JSON_ENCODE_ANY | JSON_COMPACT) : NULL;
	json_decref(j);
	return text;
}

static bool add_frame(struct builder *b, const struct frame_line *f)
{
	json_t *fr = json_object();
	if (!fr || json_object_set_new(fr, "name", jstring(f->func)) != 0 ||
	    (f->file && json_object_set_new(fr, "file", jstring(f->file)) != 0)) {
		json_decref(fr);
		return false;
	}
	return json_array_append_new(b->frames, fr) == 0;
}

static uint32_t frame_index(struct builder *b, const struct frame_line *f)
{
	struct strbuf key = { 0 };
	strbuf__addf(&key, "%s%c%s", f->func, 0, f->file ? f->file : "");
	int added;
	int64_t id = intern__add(b->frame_keys, key.s, key.len, &added);
	strbuf__free(&key);
	/* A frame's id must be its index in the array: when it cannot be, the
	 * whole file fails rather than name every later frame wrong. */
	if (id < 0 || (added && !add_frame(b, f)) || json_array_size(b->frames) <= (size_t)id) {
		b->failed = true;
		return 0;
	}
	return (uint32_t)id;
}

/* The frame index of a line of the profile (F is one of its lines, as the
 * root-first walk gives them), found once. */
static uint32_t line_index(struct builder *b, const struct frame_line *f)
{
	uint32_t i = (uint32_t)(f - frames__line(b->fr, 0));
	if (b->of_line[i] == NO_FRAME)
		b->of_line[i] = frame_index(b, f);
	return b->of_line[i];
}

static bool profile_for(struct builder *b, uint32_t slot)
{
	if (slot >= b->nslots) {
		size_t n = slot + 1;
		b->names = xrealloc(b->names, n * sizeof(*b->names));
		b->ends = xrealloc(b->ends, n * sizeof(*b->ends));
		memset(b->names + b->nslots, 0, (n - b->nslots) * sizeof(*b->names));
		memset(b->ends + b->nslots, 0, (n - b->nslots) * sizeof(*b->ends));
		b->nslots = n;
	}
	if (!b->names[slot]) {
		char name[330], thread[160];
		const struct stack_label *l = frames__label(b->fr, slot);
		if (l && frames__several_processes(b->fr)) {
			frames__process_text(l, name, sizeof(name));
			frames__thread_text(l, thread, sizeof(thread));
			size_t len = strlen(name);
			snprintf(name + len, sizeof(name) - len, " %s", thread);
		} else if (l) {
			frames__thread_text(l, name, sizeof(name));
		} else {
			snprintf(name, sizeof(name), "all");
		}
		b->names[slot] = jtext(name);
		b->failed |= !b->names[slot];
	}
	return b->names[slot] != NULL;
}

/* One sample of S weighing W (0: S's own weight). */
static void add_stack(struct builder *b, const struct profile_info *info, uint32_t stack,
		      const struct frame_stack *s, uint64_t w)
{
	if (!w)
		w = info->weight_cpu ? s->cpu_ns : s->count * info->period_ns;
	if (!w)
		return;
	/* Stacks without a label (converted from folded text) share one
	 * profile, after the labelled ones. */
	uint32_t slot = s->label == FRAMES_NO_LABEL ? (uint32_t)frames__nlabels(b->fr) : s->label;
	if (!profile_for(b, slot))
		return;
	size_t n = frames__root_first(b->fr, s, &b->walk, &b->walk_cap);
	for (size_t k = 0; k < n; k++)
		line_index(b, b->walk[k].line);
	char leaf[64];
	uint32_t leaf_index = NO_LEAF;
	if (output__leaf(info, s, leaf)) {
		struct frame_line l = { leaf, NULL, 0 };
		leaf_index = frame_index(b, &l);
	}
	if (b->nsamples == b->samples_cap) {
		b->samples_cap = b->samples_cap ? 2 * b->samples_cap : 1024;
		b->samples = xrealloc(b->samples, b->samples_cap * sizeof(*b->samples));
	}
	b->samples[b->nsamples++] = (struct sample){ stack, slot, leaf_index, w };
	b->ends[slot] += w;
}

static void add_in_order(struct builder *b, const struct profile_info *info,
			 const struct timeline *tl)
{
	for (uint32_t slot = timeline__next_slot(tl, 0); slot != UINT32_MAX;
	     slot = timeline__next_slot(tl, slot + 1)) {
		size_t n;
		const struct timeline_run *r = timeline__runs(tl, slot, &n);
		for (size_t i = 0; i < n; i++) {
			struct frame_stack s;
			if (r[i].stack >= frames__nstacks(b->fr))
				continue;
			frames__stack(b->fr, r[i].stack, &s);
			add_stack(b, info, r[i].stack, &s, (uint64_t)r[i].count * info->period_ns);
		}
	}
}

/* The samples of each profile, in the order they were added: indices
 * into b->samples grouped by slot (a counting sort). */
static uint32_t *by_slot(const struct builder *b, size_t *first)
{
	uint32_t *order = xmalloc((b->nsamples + 1) * sizeof(*order));
	memset(first, 0, (b->nslots + 1) * sizeof(*first));
	for (size_t i = 0; i < b->nsamples; i++)
		first[b->samples[i].slot + 1]++;
	for (size_t i = 0; i < b->nslots; i++)
		first[i + 1] += first[i];
	size_t *at = xmalloc((b->nslots + 1) * sizeof(*at));
	memcpy(at, first, (b->nslots + 1) * sizeof(*at));
	for (size_t i = 0; i < b->nsamples; i++)
		order[at[b->samples[i].slot]++] = (uint32_t)i;
	free(at);
	return order;
}

/* ",N" (or "N" first): what strbuf__addf("%u") would add, for the
 * millions of numbers a large profile has. */
static void add_number(struct strbuf *sb, uint64_t v, bool comma)
{
	char buf[24], *p = buf + sizeof(buf);
	do
		*--p = (char)('0' + v % 10);
	while (v /= 10);
	if (comma)
		*--p = ',';
	strbuf__add(sb, p, (size_t)(buf + sizeof(buf) - p));
}

/* "[i,j,...]": a sample's frame indices, root first. */
static void write_stack(struct output_stream *o, struct builder *b, const struct sample *sm)
{
	struct frame_stack s;
	frames__stack(b->fr, sm->stack, &s);
	size_t n = frames__root_first(b->fr, &s, &b->walk, &b->walk_cap);
	strbuf__add(&o->sb, "[", 1);
	for (size_t k = 0; k < n; k++)
		add_number(&o->sb, line_index(b, b->walk[k].line), k > 0);
	if (sm->leaf != NO_LEAF)
		add_number(&o->sb, sm->leaf, n > 0);
	strbuf__add(&o->sb, "]", 1);
}

static void write_profile(struct output_stream *o, struct builder *b, uint32_t slot,
			  const uint32_t *order, size_t from, size_t to)
{
	strbuf__addf(&o->sb, "{\"type\":\"sampled\",\"name\":%s,\"unit\":\"nanoseconds\","
		     "\"startValue\":0,\"samples\":[", b->names[slot]);
	for (size_t i = from; i < to; i++) {
		if (i > from)
			strbuf__add(&o->sb, ",", 1);
		write_stack(o, b, &b->samples[order[i]]);
		output__flush(o, 0);
	}
	strbuf__add(&o->sb, "],\"weights\":[", 13);
	for (size_t i = from; i < to; i++) {
		uint64_t w = b->samples[order[i]].weight;
		if (w <= INT64_MAX)
			add_number(&o->sb, w, i > from);
		else            /* as jansson prints it, a json_int_t */
			strbuf__addf(&o->sb, i > from ? ",%lld" : "%lld", (long long)(json_int_t)w);
		output__flush(o, 0);
	}
	strbuf__addf(&o->sb, "],\"endValue\":%lld}", (long long)(json_int_t)b->ends[slot]);
}

/* The file as jansson's compact dump of the whole object would be, written
 * as it goes (a million samples as jansson values would take gigabytes):
 * {"$schema", "shared": {"frames"}, "profiles", "name",
 * "activeProfileIndex", "exporter"}. */
static int write_all(int fd, struct builder *b, const char *frames, const char *name,
		     const char *exporter)
{
	struct output_stream o = { .fd = fd };
	size_t *first = xmalloc((b->nslots + 1) * sizeof(*first));
	uint32_t *order = by_slot(b, first);
	strbuf__addf(&o.sb, "{\"$schema\":\"https://www.speedscope.app/file-format-schema.json\","
		     "\"shared\":{\"frames\":%s},\"profiles\":[", frames);
	int any = 0;
	for (uint32_t slot = 0; slot < b->nslots; slot++) {
		if (!b->names[slot])
			continue;
		if (any++)
			strbuf__add(&o.sb, ",", 1);
		write_profile(&o, b, slot, order, first[slot], first[slot + 1]);
	}
	strbuf__addf(&o.sb, "],\"name\":%s,\"activeProfileIndex\":0,\"exporter\":%s}", name,
		     exporter);
	int r = output__flush(&o, 1);
	strbuf__free(&o.sb);
	free(order);
	free(first);
	return r;
}

int speedscope__write(int fd, const struct frames *fr, const struct profile_info *info,
		      char *err, size_t errlen)
{
	struct builder b = { .fr = fr, .frame_keys = intern__new(), .frames = json_array() };
	b.of_line = xmalloc((frames__nlines(fr) + 1) * sizeof(*b.of_line));
	memset(b.of_line, 0xff, (frames__nlines(fr) + 1) * sizeof(*b.of_line));
	char *frames = NULL, *name = NULL, *exporter = NULL;
	int r = 0;
	if (!b.frame_keys || !b.frames) {
		b.failed = true;
		goto built;
	}
	/* In time order when the run kept it (a thread's samples as its ticks
	 * came: speedscope's time-order view is then true); else one sample
	 * per counted stack, as with CPU weights, where order means nothing. */
	const struct timeline *tl = info->timeline;
	if (tl && !timeline__full(tl) && !info->weight_cpu)
		add_in_order(&b, info, tl);
	else
		for (size_t i = 0; i < frames__nstacks(fr); i++) {
			struct frame_stack s;
			frames__stack(fr, i, &s);
			add_stack(&b, info, (uint32_t)i, &s, 0);
		}
	frames = json_dumps(b.frames, JSON_COMPACT);
	name = jtext(info->comment ? info->comment : "cprof-attach");
	exporter = jtext("cprof-attach " CPROF_VERSION);
built:
	if (b.failed || !frames || !name || !exporter) {
		r = -ENOMEM;
		snprintf(err, errlen, "building the speedscope JSON: out of memory");
	} else if ((r = write_all(fd, &b, frames, name, exporter)) < 0) {
		snprintf(err, errlen, "writing the speedscope JSON: %s", strerror(-r));
	}
	free(frames);
	free(name);
	free(exporter);
	json_decref(b.frames);
	intern__free(b.frame_keys);
	for (size_t i = 0; i < b.nslots; i++)
		free(b.names[i]);
	free(b.names);
	free(b.of_line);
	free(b.samples);
	free(b.walk);
	free(b.ends);
	return r;
}
