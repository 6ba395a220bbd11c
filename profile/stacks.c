#include "profile/stacks.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util/intern.h"
#include "util/sparse.h"
#include "util/strbuf.h"
#include "util/xalloc.h"

/* Key layout: [slot | state << 32 | space << 40][syscall + 1 | rt_state << 32][pc0]...;
 * u64 heads keep the PCs aligned. */
#define HEAD 2
struct stacks {
	struct intern *in;
	uint64_t *counts;
	uint64_t *cpu;
	size_t cap;
	uint64_t total;
	uint64_t *key;
	size_t key_cap;
	struct intern *symbolic;        /* frames that are not addresses (STACKS_PC_SYMBOLIC),
					   removable: they age with the stacks that name them */
	uint32_t *sym_gen;              /* by symbolic id: how many times it was freed (in
					   the PC, so that a PC of a frame freed since names
					   nothing rather than the next frame given its id) */
	uint64_t *sym_mark;             /* by symbolic id: the last aging a live stack named it */
	size_t sym_cap;
	uint64_t marks;                 /* agings so far */
	uint64_t sym_freed;             /* symbolic frames freed so far (stacks__symbolic_gen) */
	struct intern *rt_states;       /* goroutine states (stacks__rt_state) */
	struct sparse labels;           /* struct label_slot by slot: thread slots count
					   from 0, goroutine slots from far above */
	uint64_t *slice, *slice_cpu;    /* by id: since the last take (stacks__take) */
	uint64_t *last;                 /* by id: the epoch it was last counted (or kept) in */
	uint64_t epoch;                 /* takes so far: what counting goes into now */
	int64_t *touched;               /* ids whose slice count is not 0 */
	size_t ntouched, touched_cap;
};

struct label_slot {
	struct stack_label l;
	unsigned char set;
};

struct stacks *stacks__new(void)
{
	struct stacks *st = xcalloc(1, sizeof(*st));
	st->in = intern__new_removable();
	sparse__init(&st->labels, sizeof(struct label_slot));
	if (!st->in) {
		free(st);
		return NULL;
	}
	return st;
}

void stacks__free(struct stacks *st)
{
	if (!st)
		return;
	for (uint32_t i = sparse__next(&st->labels, 0); i != UINT32_MAX; i = sparse__next(&st->labels, i + 1)) {
		struct label_slot *d = sparse__get(&st->labels, i);
		free((char *)d->l.process);
		free((char *)d->l.thread);
		free((char *)d->l.origin);
		free((char *)d->l.unit);
		free((char *)d->l.comm);
		free((char *)d->l.rt_thread);
	}
	sparse__free(&st->labels);
	intern__free(st->symbolic);
	free(st->sym_gen);
	free(st->sym_mark);
	intern__free(st->rt_states);
	intern__free(st->in);
	free(st->counts);
	free(st->cpu);
	free(st->slice);
	free(st->slice_cpu);
	free(st->last);
	free(st->touched);
	free(st->key);
	free(st);
}

int64_t stacks__add(struct stacks *st, const struct stack *s)
{
	if (s->n + HEAD > st->key_cap) {
		st->key_cap = s->n + 64;
		st->key = xrealloc(st->key, st->key_cap * sizeof(*st->key));
	}
	st->key[0] = s->slot | (uint64_t)(unsigned char)s->state << 32 |
		     (uint64_t)(s->space & (STACKS_MAX_SPACES - 1)) << 40;
	st->key[1] = (uint32_t)(s->syscall + 1) | (uint64_t)s->rt_state << 32;
	memcpy(st->key + HEAD, s->pcs, s->n * sizeof(*s->pcs));
	int added;
	int64_t id = intern__add(st->in, st->key, (s->n + HEAD) * sizeof(*st->key), &added);
	if (id < 0)
		return id;
	if ((size_t)id >= st->cap) {
		size_t cap = st->cap ? st->cap * 2 : 256;
		st->counts = xrealloc(st->counts, cap * sizeof(*st->counts));
		st->cpu = xrealloc(st->cpu, cap * sizeof(*st->cpu));
		st->slice = xrealloc(st->slice, cap * sizeof(*st->slice));
		st->slice_cpu = xrealloc(st->slice_cpu, cap * sizeof(*st->slice_cpu));
		st->last = xrealloc(st->last, cap * sizeof(*st->last));
		st->cap = cap;
	}
	if (added) {            /* a new id, or one freed by stacks__age() */
		st->counts[id] = st->cpu[id] = st->slice[id] = st->slice_cpu[id] = 0;
		st->last[id] = st->epoch;
	}
	stacks__add_again(st, id, s->count, s->cpu_ns);
	return id;
}

void stacks__add_again(struct stacks *st, int64_t id, uint64_t count, uint64_t cpu_ns)
{
	if (id < 0 || !intern__has(st->in, (size_t)id))
		return;
	st->last[id] = st->epoch;
	st->counts[id] += count;
	st->cpu[id] += cpu_ns;
	st->total += count;
	if (!st->slice[id] && !st->slice_cpu[id] && (count || cpu_ns)) {
		if (st->ntouched == st->touched_cap) {
			st->touched_cap = st->touched_cap ? 2 * st->touched_cap : 256;
			st->touched = xrealloc(st->touched, st->touched_cap * sizeof(*st->touched));
		}
		st->touched[st->ntouched++] = id;
	}
	st->slice[id] += count;
	st->slice_cpu[id] += cpu_ns;
}

void stacks__take(struct stacks *st, struct stacks_slice *out)
{
	memset(out, 0, sizeof(*out));
	out->n = st->ntouched;
	out->ids = xmalloc((out->n + 1) * sizeof(*out->ids));
	out->counts = xmalloc((out->n + 1) * sizeof(*out->counts));
	out->cpu = xmalloc((out->n + 1) * sizeof(*out->cpu));
	for (size_t i = 0; i < out->n; i++) {
		int64_t id = st->touched[i];
		out->ids[i] = id;
		out->counts[i] = st->slice[id];
		out->cpu[i] = st->slice_cpu[id];
		out->total += st->slice[id];
		st->slice[id] = st->slice_cpu[id] = 0;
	}
	st->ntouched = 0;
	out->epoch = st->epoch++;
}

uint64_t stacks__epoch(const struct stacks *st)
{
	return st->epoch;
}

void stacks__keep(struct stacks *st, int64_t id)
{
	if (id >= 0 && intern__has(st->in, (size_t)id))
		st->last[id] = st->epoch;
}

#define SYM_ID(pc) ((size_t)((pc) & 0xffffffffu))
#define SYM_GEN(pc) ((uint32_t)((pc) >> 32) & 0x7fffffffu)

/* The symbolic frames no stack held names any more are freed (what is
 * live is kept, not what was ever seen: a program that makes a function
 * per call, a template engine's, would grow the table for ever): each
 * live stack's symbolic PCs are marked, the rest removed, and the
 * generation of their ids moves on, so that a PC kept elsewhere since
 * (a runtime's cache) names nothing rather than another frame; those
 * caches are dropped when stacks__symbolic_gen() changes. */
static void age_symbolic(struct stacks *st)
{
	if (!st->symbolic || !intern__live(st->symbolic))
		return;
	uint64_t mark = ++st->marks;
	for (size_t id = 0; id < intern__count(st->in); id++) {
		if (!intern__has(st->in, id))
			continue;
		size_t len;
		const uint64_t *k = intern__key(st->in, id, &len);
		for (size_t i = HEAD; i < len / sizeof(*k); i++) {
			uint64_t pc = k[i];
			if (pc == STACKS_PC_TRUNCATED || !(pc & STACKS_PC_SYMBOLIC) ||
			    SYM_ID(pc) >= st->sym_cap || st->sym_gen[SYM_ID(pc)] != SYM_GEN(pc))
				continue;
			st->sym_mark[SYM_ID(pc)] = mark;
		}
	}
	size_t freed = 0;
	for (size_t id = 0; id < intern__count(st->symbolic); id++) {
		if (!intern__has(st->symbolic, id) || st->sym_mark[id] == mark)
			continue;
		intern__remove(st->symbolic, id);
		st->sym_gen[id] = (st->sym_gen[id] + 1) & 0x7fffffffu;
		freed++;
	}
	st->sym_freed += freed;
}

uint64_t stacks__symbolic_gen(const struct stacks *st)
{
	return st->sym_freed;
}

size_t stacks__symbolic_live(const struct stacks *st)
{
	return st->symbolic ? intern__live(st->symbolic) : 0;
}

size_t stacks__age(struct stacks *st, uint64_t before)
{
	size_t freed = 0;
	for (size_t id = 0; id < intern__count(st->in); id++) {
		if (!intern__has(st->in, id) || st->last[id] >= before)
			continue;
		/* Counted before BEFORE, not since: its slice count is 0
		 * (taken at the take that ended its epoch). */
		intern__remove(st->in, id);
		st->counts[id] = st->cpu[id] = 0;
		freed++;
	}
	age_symbolic(st);
	return freed;
}

size_t stacks__live(const struct stacks *st)
{
	return intern__live(st->in);
}

int stacks__exists(const struct stacks *st, size_t id)
{
	return intern__has(st->in, id);
}

void stacks__slice_free(struct stacks_slice *sl)
{
	if (!sl)
		return;
	free(sl->ids);
	free(sl->counts);
	free(sl->cpu);
	memset(sl, 0, sizeof(*sl));
}

struct stacks *stacks__view(const struct stacks *st, const struct stacks_slice *const *slices,
			    size_t n)
{
	struct stacks *v = stacks__new();
	if (!v)
		return NULL;
	/* The counts summed by id first, then each stack interned once: a
	 * window of 600 slices (a 10-minute dump) interned each (thread,
	 * stack) pair once per slice, its PCs hashed each time, with the
	 * sampling paused (2,000 pairs a second: 197 ms; now 12 ms). */
	size_t max = 0, nu = 0;
	for (size_t i = 0; i < n; i++)
		for (size_t j = 0; j < slices[i]->n; j++)
			if (slices[i]->ids[j] >= 0 && (size_t)slices[i]->ids[j] + 1 > max)
				max = (size_t)slices[i]->ids[j] + 1;
	uint64_t *count = calloc(max + 1, sizeof(*count)), *cpu = calloc(max + 1, sizeof(*cpu));
	size_t *order = malloc((max + 1) * sizeof(*order));
	unsigned char *seen = calloc(max + 1, 1);
	int ok = count && cpu && order && seen;
	for (size_t i = 0; ok && i < n; i++)
		for (size_t j = 0; j < slices[i]->n; j++) {
			int64_t id = slices[i]->ids[j];
			if (id < 0)
				continue;
			if (!seen[id]) {
				seen[id] = 1;
				order[nu++] = (size_t)id;
			}
			count[id] += slices[i]->counts[j];
			cpu[id] += slices[i]->cpu[j];
		}
	for (size_t k = 0; ok && k < nu; k++) {
		struct stack s;
		stacks__get(st, order[k], &s);
		s.count = count[order[k]];
		s.cpu_ns = cpu[order[k]];
		if (stacks__add(v, &s) < 0)
			ok = 0;
	}
	free(count);
	free(cpu);
	free(order);
	free(seen);
	if (!ok) {
		stacks__free(v);
		return NULL;
	}
	for (uint32_t i = sparse__next(&st->labels, 0); i != UINT32_MAX; i = sparse__next(&st->labels, i + 1)) {
		const struct label_slot *d = sparse__get(&st->labels, i);
		if (d->set)
			stacks__set_label(v, i, &d->l);
	}
	/* Symbolic frames and goroutine states keep their codes: the same
	 * order of interning gives the same ids. */
	size_t nsym = st->symbolic ? intern__count(st->symbolic) : 0;
	if (nsym && (v->symbolic = intern__new_removable())) {
		/* the ids freed by aging are held by a placeholder (no real
		 * key ends without a NUL) while the rest are added, then freed */
		for (size_t i = 0; i < nsym; i++) {
			size_t len;
			char hole[48];
			const char *key = intern__has(st->symbolic, i) ? intern__key(st->symbolic, i, &len)
								     : NULL;
			if (!key) {
				len = (size_t)snprintf(hole, sizeof(hole), "\xff\xff\xff\xffhole %zu", i);
				key = hole;
			}
			intern__add(v->symbolic, key, len, NULL);
		}
		for (size_t i = 0; i < nsym; i++)
			if (!intern__has(st->symbolic, i))
				intern__remove(v->symbolic, i);
		v->sym_cap = nsym;
		v->sym_gen = xmalloc(nsym * sizeof(*v->sym_gen));
		v->sym_mark = xcalloc(nsym, sizeof(*v->sym_mark));
		memcpy(v->sym_gen, st->sym_gen, nsym * sizeof(*v->sym_gen));
	}
	for (size_t i = 0; st->rt_states && i < intern__count(st->rt_states); i++)
		stacks__rt_state(v, intern__key(st->rt_states, i, NULL));
	return v;
}


size_t stacks__unique(const struct stacks *st)
{
	return intern__count(st->in);
}

uint64_t stacks__total(const struct stacks *st)
{
	return st->total;
}

void stacks__get(const struct stacks *st, size_t i, struct stack *out)
{
	size_t len;
	if (!intern__has(st->in, i)) {
		*out = (struct stack){ .syscall = -1 };
		return;
	}
	const uint64_t *k = intern__key(st->in, i, &len);
	out->slot = (uint32_t)k[0];
	out->state = (char)(k[0] >> 32);
	out->space = (uint32_t)(k[0] >> 40);
	out->syscall = (int)(uint32_t)k[1] - 1;
	out->rt_state = (uint32_t)(k[1] >> 32);
	out->pcs = k + HEAD;
	out->n = len / sizeof(*k) - HEAD;
	out->count = st->counts[i];
	out->cpu_ns = st->cpu[i];
}

void stacks__set_label(struct stacks *st, uint32_t slot, const struct stack_label *l)
{
	struct label_slot *d = sparse__put(&st->labels, slot);
	free((char *)d->l.process);
	free((char *)d->l.thread);
	free((char *)d->l.origin);
	free((char *)d->l.unit);
	free((char *)d->l.comm);
	free((char *)d->l.rt_thread);
	d->l = (struct stack_label){ l->pid, l->tid, l->unit_id, xstrdup(l->process ? l->process : ""),
				     xstrdup(l->thread ? l->thread : ""),
				     l->origin ? xstrdup(l->origin) : NULL,
				     l->comm && strcmp(l->comm, l->process ? l->process : "") ?
				     xstrdup(l->comm) : NULL,
				     l->unit_id && l->unit ? xstrdup(l->unit) : NULL,
				     l->rt_thread ? xstrdup(l->rt_thread) : NULL };
	d->set = 1;
}

const struct stack_label *stacks__label(const struct stacks *st, uint32_t slot)
{
	const struct label_slot *d = sparse__get(&st->labels, slot);
	return d && d->set ? &d->l : NULL;
}

/* A symbolic frame's key in the table: LINE (4 bytes), then FUNC, FILE
 * and MODULE, each ended by a NUL ("" for none). */
uint64_t stacks__symbolic_pc(struct stacks *st, const struct stacks_frame *f)
{
	if (!st->symbolic && !(st->symbolic = intern__new_removable()))
		return STACKS_PC_TRUNCATED;
	const char *part[3] = { f->func ? f->func : "", f->file ? f->file : "",
				f->module ? f->module : "" };
	size_t len = 4;
	for (int i = 0; i < 3; i++)
		len += strlen(part[i]) + 1;
	char stackbuf[512], *key = len <= sizeof(stackbuf) ? stackbuf : xmalloc(len);
	int32_t line = f->line;
	memcpy(key, &line, 4);
	size_t at = 4;
	for (int i = 0; i < 3; i++) {
		size_t l = strlen(part[i]) + 1;
		memcpy(key + at, part[i], l);
		at += l;
	}
	int added = 0;
	int64_t id = intern__add(st->symbolic, key, len, &added);
	if (key != stackbuf)
		free(key);
	if (id < 0 || (uint64_t)id > 0xffffffffu)
		return STACKS_PC_TRUNCATED;
	if ((size_t)id >= st->sym_cap) {
		size_t cap = st->sym_cap ? 2 * st->sym_cap : 256;
		while (cap <= (size_t)id)
			cap *= 2;
		st->sym_gen = xrealloc(st->sym_gen, cap * sizeof(*st->sym_gen));
		st->sym_mark = xrealloc(st->sym_mark, cap * sizeof(*st->sym_mark));
		memset(st->sym_gen + st->sym_cap, 0, (cap - st->sym_cap) * sizeof(*st->sym_gen));
		memset(st->sym_mark + st->sym_cap, 0, (cap - st->sym_cap) * sizeof(*st->sym_mark));
		st->sym_cap = cap;
	}
	if (added)
		st->sym_mark[id] = st->marks;
	return STACKS_PC_SYMBOLIC | (uint64_t)st->sym_gen[id] << 32 | (uint64_t)id;
}

int stacks__symbolic(const struct stacks *st, uint64_t pc, struct stacks_frame *out)
{
	size_t id = SYM_ID(pc), len;
	if (pc == STACKS_PC_TRUNCATED || !(pc & STACKS_PC_SYMBOLIC) || !st->symbolic ||
	    id >= intern__count(st->symbolic) || !intern__has(st->symbolic, id) || id >= st->sym_cap ||
	    st->sym_gen[id] != SYM_GEN(pc))
		return -1;
	const char *key = intern__key(st->symbolic, (size_t)id, &len);
	int32_t line;
	memcpy(&line, key, 4);
	const char *func = key + 4, *file = func + strlen(func) + 1, *module = file + strlen(file) + 1;
	*out = (struct stacks_frame){ func, *file ? file : NULL, *module ? module : NULL, line };
	return 0;
}

/* Kernel functions: perf's mark, "NAME [k]". */
uint64_t stacks__kernel_pc(struct stacks *st, const char *name)
{
	char func[96];
	snprintf(func, sizeof(func), "%s [k]", name);
	return stacks__symbolic_pc(st, &(struct stacks_frame){ func, NULL, NULL, 0 });
}

uint32_t stacks__rt_state(struct stacks *st, const char *name)
{
	if (!st->rt_states && !(st->rt_states = intern__new()))
		return 0;
	int64_t id = intern__add(st->rt_states, name, strlen(name), NULL);
	return id < 0 || id >= UINT32_MAX ? 0 : (uint32_t)id + 1;
}

const char *stacks__rt_state_name(const struct stacks *st, uint32_t code)
{
	if (code == 0 || !st->rt_states || code - 1 >= intern__count(st->rt_states))
		return NULL;
	return intern__key(st->rt_states, code - 1, NULL);
}

const char *stacks__state_name(char state)
{
	switch (state) {
	case 'R': return "running";
	case 'S': return "sleeping";
	case 'D': return "disk wait";
	case 'T': case 't': return "stopped";
	case 'Z': return "zombie";
	case 'I': return "idle";
	default: return "unknown";
	}
}
