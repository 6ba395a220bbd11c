/* speedscope: the JSON file format of https://www.speedscope.app, written
 * with jansson.
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

struct builder {
	const struct frames *fr;
	struct frame_ref *walk;
	size_t walk_cap;
	struct intern *frame_keys;      /* "func\0file" -> frame index */
	json_t *frames;
	json_t **profiles;              /* by thread slot, created on first use */
	uint64_t *ends;                 /* each profile's total weight */
	size_t nslots;
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

static size_t frame_index(struct builder *b, const struct frame_line *f)
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
	return (size_t)id;
}

static json_t *profile_for(struct builder *b, uint32_t slot)
{
	if (slot >= b->nslots) {
		size_t n = slot + 1;
		b->profiles = xrealloc(b->profiles, n * sizeof(*b->profiles));
		b->ends = xrealloc(b->ends, n * sizeof(*b->ends));
		memset(b->profiles + b->nslots, 0, (n - b->nslots) * sizeof(*b->profiles));
		memset(b->ends + b->nslots, 0, (n - b->nslots) * sizeof(*b->ends));
		b->nslots = n;
	}
	if (!b->profiles[slot]) {
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
		b->profiles[slot] = json_pack("{s:s, s:o, s:s, s:i, s:[], s:[]}", "type", "sampled",
					      "name", jstring(name), "unit", "nanoseconds",
					      "startValue", 0, "samples", "weights");
		b->failed |= !b->profiles[slot];
	}
	return b->profiles[slot];
}

/* One sample of S weighing W (0: S's own weight). */
static void add_stack(struct builder *b, const struct profile_info *info,
		      const struct frame_stack *s, uint64_t w)
{
	if (!w)
		w = info->weight_cpu ? s->cpu_ns : s->count * info->period_ns;
	if (!w)
		return;
	/* Stacks without a label (converted from folded text) share one
	 * profile, after the labelled ones. */
	uint32_t slot = s->label == FRAMES_NO_LABEL ? (uint32_t)frames__nlabels(b->fr) : s->label;
	json_t *p = profile_for(b, slot);
	if (!p)
		return;
	json_t *stack = json_array();
	size_t n = frames__root_first(b->fr, s, &b->walk, &b->walk_cap);
	for (size_t k = 0; k < n; k++)
		json_array_append_new(stack, json_integer((json_int_t)frame_index(b, b->walk[k].line)));
	char leaf[64];
	if (output__leaf(info, s, leaf)) {
		struct frame_line l = { leaf, NULL, 0 };
		json_array_append_new(stack, json_integer((json_int_t)frame_index(b, &l)));
	}
	json_array_append_new(json_object_get(p, "samples"), stack);
	json_array_append_new(json_object_get(p, "weights"), json_integer((json_int_t)w));
	b->ends[slot] += w;
}

static void add_in_order(struct builder *b, const struct profile_info *info,
			 const struct timeline *tl)
{
	for (uint32_t slot = 0; slot < timeline__nslots(tl); slot++) {
		size_t n;
		const struct timeline_run *r = timeline__runs(tl, slot, &n);
		for (size_t i = 0; i < n; i++) {
			struct frame_stack s;
			if (r[i].stack >= frames__nstacks(b->fr))
				continue;
			frames__stack(b->fr, r[i].stack, &s);
			add_stack(b, info, &s, (uint64_t)r[i].count * info->period_ns);
		}
	}
}

int speedscope__write(int fd, const struct frames *fr, const struct profile_info *info,
		      char *err, size_t errlen)
{
	struct builder b = { .fr = fr, .frame_keys = intern__new(), .frames = json_array() };
	json_t *profiles = json_array();
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
			add_stack(&b, info, &s, 0);
		}
	for (size_t i = 0; i < b.nslots; i++) {
		if (!b.profiles[i])
			continue;
		json_object_set_new(b.profiles[i], "endValue", json_integer((json_int_t)b.ends[i]));
		json_array_append_new(profiles, b.profiles[i]);
	}
	json_t *root = json_pack("{s:s, s:{s:o}, s:o, s:o, s:i, s:s}",
				 "$schema", "https://www.speedscope.app/file-format-schema.json",
				 "shared", "frames", b.frames, "profiles", profiles,
				 "name", jstring(info->comment ? info->comment : "cprof-attach"),
				 "activeProfileIndex", 0, "exporter", "cprof-attach " CPROF_VERSION);
	int r = 0;
	if (!root || !b.frame_keys || b.failed) {
		r = -ENOMEM;
		snprintf(err, errlen, "building the speedscope JSON: out of memory");
	} else if (json_dumpfd(root, fd, JSON_COMPACT) != 0) {
		r = errno ? -errno : -EIO;
		snprintf(err, errlen, "writing the speedscope JSON: %s", strerror(-r));
	}
	json_decref(root);
	intern__free(b.frame_keys);
	free(b.walk);
	free(b.profiles);
	free(b.ends);
	return r;
}
