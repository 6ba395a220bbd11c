#include "run/dump.h"

#include <errno.h>
#include <inttypes.h>
#include <jansson.h>
#include <poll.h>
#include <dirent.h>
#include <seccomp.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "attach/proc.h"
#include "run/outfile.h"
#include "run/naming.h"
#include "output/frames.h"
#include "sample/sampler.h"
#include "util/remote.h"
#include "util/xalloc.h"

#define DUMP_TIMEOUT_MS 10000

/* What --dump says of one thread. */
struct tinfo {
	const struct stack_label *label;
	int have_stack;
	struct frame_stack stack;
	int blocked;                    /* in a system call (syscall file) */
	long nr;                        /* its number */
	uint64_t args[6];
	double off_cpu_ms;              /* since it last ran; < 0 unknown */
	uint64_t mutex;                 /* futex-blocked in pthread_mutex_lock: the mutex */
	pid_t owner;                    /* ... and the thread that holds it, or 0 */
	int in_cycle;                   /* printed in a deadlock already */
};

/* When a thread last ran, read before anything attaches: a thread the
 * sampler stops to take its registers runs for that stop, which would make
 * its time off the CPU look like nothing. */
struct last_ran {
	pid_t tid;
	double at_ms;                   /* se.exec_start, the scheduler's clock */
};

struct dump {
	const struct options *o;
	const pid_t *pids;              /* whose threads' last runs are read */
	size_t npids;
	struct last_ran *ran;
	size_t nran;
	double now_ms;                  /* the same clock, when RAN was read */
	struct sampler *sampler;
	const struct frames *fr;
	struct frames *named;           /* fr, when ours to free */
	struct tinfo *t;
	size_t n;
	FILE *out;
};

static void errorf(const char *msg, const char *detail)
{
	fprintf(stderr, "cprof-attach: error: %s%s%s\n", msg, detail ? ": " : "", detail ? detail : "");
}

/* ---- what /proc and the target's memory say ------------------------------ */

static int has_func(const struct frames *fr, const struct frame_stack *s, const char *const *names)
{
	for (size_t i = 0; i < s->n; i++) {
		const struct frame_loc *l = frames__loc(fr, s->locs[i]);
		for (uint32_t j = 0; j < l->n; j++)
			for (const char *const *n = names; *n; n++)
				if (strstr(frames__line(fr, l->first + j)->func, *n))
					return 1;
	}
	return 0;
}

/* A thread in futex() under pthread_mutex_lock waits for the mutex whose
 * first word is the futex: glibc keeps the owner's TID in __data.__owner,
 * 8 bytes in (for a priority-inheritance mutex the futex word itself holds
 * it).  Only an owner that is a thread of the same process is believed. */
static void find_owner(struct dump *d, struct tinfo *ti)
{
	static const char *const lock_funcs[] = { "pthread_mutex_lock", "pthread_mutex_timedlock",
						  "pthread_mutex_clocklock", "__lll_lock_wait", NULL };
	int op = (int)(ti->args[1] & 0x7f);
	int32_t word[3];
	if (!ti->blocked || ti->nr != SYS_futex || !ti->have_stack ||
	    (op != 0 /* WAIT */ && op != 9 /* WAIT_BITSET */ && op != 6 /* LOCK_PI */) ||
	    !has_func(d->fr, &ti->stack, lock_funcs) ||
	    remote__read(ti->label->pid, ti->args[0], word, sizeof(word)) < 0)
		return;
	pid_t owner = op == 6 ? (pid_t)(word[0] & 0x3fffffff) : (pid_t)word[2];
	ti->mutex = ti->args[0];
	for (size_t i = 0; i < d->n; i++)
		if (d->t[i].label->tid == owner && d->t[i].label->pid == ti->label->pid)
			ti->owner = owner;
}

static double last_ran_ms(const struct dump *d, pid_t tid)
{
	for (size_t i = 0; i < d->nran; i++)
		if (d->ran[i].tid == tid)
			return d->ran[i].at_ms;
	return -1;
}

/* Reads when each thread of the PIDs given last ran, and "now" on the same
 * clock: our own thread's last start on a CPU once it has just been
 * scheduled in (the scheduler's clock is not CLOCK_MONOTONIC), so after
 * sleeping a microsecond.  Threads not seen here (started since, or in
 * child processes) get no off-CPU time. */
static void read_last_ran(struct dump *d)
{
	size_t cap = 0;
	for (size_t i = 0; i < d->npids; i++) {
		char dn[64];
		snprintf(dn, sizeof(dn), "/proc/%d/task", (int)d->pids[i]);
		DIR *dir = opendir(dn);
		struct dirent *de;
		while (dir && (de = readdir(dir))) {
			pid_t tid = (pid_t)atoi(de->d_name);
			double at = tid > 0 ? proc__exec_start_ms(d->pids[i], tid) : -1;
			if (at < 0)
				continue;
			if (d->nran == cap) {
				cap = cap ? 2 * cap : 64;
				d->ran = xrealloc(d->ran, cap * sizeof(*d->ran));
			}
			d->ran[d->nran++] = (struct last_ran){ tid, at };
		}
		if (dir)
			closedir(dir);
	}
	struct timespec us = { 0, 1000 };
	nanosleep(&us, NULL);
	d->now_ms = proc__exec_start_ms(getpid(), gettid());
}

static void read_proc(struct dump *d)
{
	for (size_t i = 0; i < d->n; i++) {
		struct tinfo *ti = &d->t[i];
		char line[256];
		int fd = -1;
		ti->off_cpu_ms = -1;
		if (proc__task_file(ti->label->pid, ti->label->tid, "syscall", &fd, 0, line,
				    sizeof(line)) > 0)
			ti->blocked = proc__parse_syscall_args(line, &ti->nr, ti->args) == 0;
		if (fd >= 0)
			close(fd);
		double at = last_ran_ms(d, ti->label->tid);
		/* Each CPU's scheduler clock is its own: a thread that ran just
		 * before our own last start, on another CPU, may show a start a
		 * hair after it.  That is no time off the CPU, not an unknown. */
		if (ti->blocked && at >= 0)
			ti->off_cpu_ms = d->now_ms > at ? d->now_ms - at : 0;
	}
	for (size_t i = 0; i < d->n; i++)
		find_owner(d, &d->t[i]);
}

/* ---- sampling --------------------------------------------------------------- */

static int by_pid_tid(const void *a, const void *b)
{
	const struct tinfo *x = a, *y = b;
	if (x->label->pid != y->label->pid)
		return x->label->pid < y->label->pid ? -1 : 1;
	return (x->label->tid > y->label->tid) - (x->label->tid < y->label->tid);
}

static void collect(struct dump *d)
{
	size_t nl = frames__nlabels(d->fr);
	d->t = xcalloc(nl + 1, sizeof(*d->t));
	for (uint32_t i = 0; i < nl; i++)
		d->t[d->n++].label = frames__label(d->fr, i);
	for (size_t i = 0; i < frames__nstacks(d->fr); i++) {
		struct frame_stack s;
		frames__stack(d->fr, i, &s);
		/* Over more than one tick: the stack seen most. */
		if (s.label < nl && (!d->t[s.label].have_stack || s.count > d->t[s.label].stack.count)) {
			d->t[s.label].stack = s;
			d->t[s.label].have_stack = 1;
		}
	}
	qsort(d->t, d->n, sizeof(*d->t), by_pid_tid);
}

static int sample(struct dump *d, sigset_t *old)
{
	const struct options *o = d->o;
	char err[512];
	sigset_t set;
	sigemptyset(&set);
	sigaddset(&set, SIGCHLD);       /* the sampler's thread reads it */
	pthread_sigmask(SIG_BLOCK, &set, old);
	struct sampler_config cfg = {
		.pids = o->pids, .npids = o->npids, .hz = o->hz,
		.period_ns = options__sample_period_ns(o), .subprocesses = o->subprocesses,
		.max_depth = o->max_depth, .tids = o->ntids ? o->tids : NULL, .ntids = o->ntids,
		.threads_re = o->threads_matching ? &o->threads_re : NULL, .once = 1,
	};
	if (sampler__start(&d->sampler, &cfg, err, sizeof(err)) < 0) {
		errorf(err, NULL);
		return -1;
	}
	struct pollfd p = { sampler__done_fd(d->sampler), POLLIN, 0 };
	poll(&p, 1, DUMP_TIMEOUT_MS);
	sampler__stop(d->sampler);
	d->fr = d->named = naming__stacks(d->sampler, o);
	return d->fr ? 0 : -1;
}

/* ---- text ----------------------------------------------------------------- */

static const char *state_text(char s)
{
	return s ? stacks__state_name(s) : "not sampled";
}

static char *syscall_name(long nr)
{
	char *n = seccomp_syscall_resolve_num_arch(SCMP_ARCH_NATIVE, (int)nr);
	if (!n) {
		n = xmalloc(32);
		snprintf(n, 32, "syscall %ld", nr);
	}
	return n;
}

static const char *name_of(const struct dump *d, pid_t tid)
{
	for (size_t i = 0; i < d->n; i++)
		if (d->t[i].label->tid == tid)
			return d->t[i].label->thread;
	return "?";
}

static void text_header(struct dump *d, const struct tinfo *ti)
{
	fprintf(d->out, "Thread %d \"%s\"", (int)ti->label->tid, ti->label->thread);
	const char *eq = ti->label->rt_thread ? strchr(ti->label->rt_thread, '=') : NULL;
	if (eq)                 /* a runtime's name for it: python_thread="worker-1" */
		fprintf(d->out, " %.*s=\"%s\"", (int)(eq - ti->label->rt_thread), ti->label->rt_thread,
			eq + 1);
	fprintf(d->out, " (%s)", state_text(ti->have_stack ? ti->stack.state : 0));
	if (ti->blocked) {
		char *n = syscall_name(ti->nr);
		fprintf(d->out, " in %s()", n);
		free(n);
	}
	if (ti->off_cpu_ms >= 0)
		fprintf(d->out, ", off the CPU for %.3f s", ti->off_cpu_ms / 1000.0);
	fputc('\n', d->out);
	if (ti->mutex && ti->owner)
		fprintf(d->out, "    waits for mutex 0x%" PRIx64 ", held by thread %d \"%s\"\n",
			ti->mutex, (int)ti->owner, name_of(d, ti->owner));
	else if (ti->mutex)
		fprintf(d->out, "    waits for mutex 0x%" PRIx64 "\n", ti->mutex);
}

static void text_frames(struct dump *d, const struct tinfo *ti)
{
	unsigned k = 0;
	for (size_t i = 0; ti->have_stack && i < ti->stack.n; i++) {
		const struct frame_loc *l = frames__loc(d->fr, ti->stack.locs[i]);
		const struct frame_module *m = frames__module(d->fr, l->module);
		for (uint32_t j = 0; j < l->n; j++) {
			const struct frame_line *f = frames__line(d->fr, l->first + j);
			if (l->addr || m)
				fprintf(d->out, "    #%-3u 0x%016" PRIx64 " %s%s", k++, l->addr,
					j + 1 < l->n ? "[inlined] " : "", f->func);
			else    /* a runtime's frame (a Python function): no address */
				fprintf(d->out, "    #%-3u %18s %s", k++, "-", f->func);
			if (f->file)
				fprintf(d->out, " at %s:%d", f->file, f->line);
			if (m)
				fprintf(d->out, " [%s]", m->name);
			fputc('\n', d->out);
		}
	}
	if (!ti->have_stack)
		fprintf(d->out, "    (no sample: the thread exited or was not selected)\n");
}

/* Follows the owner chain from T; returns its length if it comes back to
 * T (a cycle), else 0.  CHAIN gets the TIDs. */
static size_t cycle_from(const struct dump *d, size_t t, size_t *chain, size_t max)
{
	size_t n = 0, at = t;
	while (n < max) {
		chain[n++] = at;
		pid_t owner = d->t[at].owner;
		size_t next = d->n;
		for (size_t i = 0; owner && i < d->n; i++)
			if (d->t[i].label->tid == owner)
				next = i;
		if (next == d->n)
			return 0;
		if (next == t)
			return n;
		at = next;
	}
	return 0;
}

static void text_deadlocks(struct dump *d)
{
	size_t *chain = xcalloc(d->n + 1, sizeof(*chain));
	for (size_t i = 0; i < d->n; i++) {
		size_t n = d->t[i].in_cycle ? 0 : cycle_from(d, i, chain, d->n);
		if (!n)
			continue;
		fprintf(d->out, "Deadlock: ");
		for (size_t k = 0; k < n; k++) {
			d->t[chain[k]].in_cycle = 1;
			fprintf(d->out, "thread %d \"%s\" waits for ", (int)d->t[chain[k]].label->tid,
				d->t[chain[k]].label->thread);
		}
		fprintf(d->out, "thread %d \"%s\"\n", (int)d->t[i].label->tid, d->t[i].label->thread);
	}
	free(chain);
}

static void write_text(struct dump *d)
{
	for (size_t i = 0; i < d->n; i++) {
		const struct tinfo *ti = &d->t[i];
		if (i == 0 || ti->label->pid != d->t[i - 1].label->pid) {
			size_t nt = 0;
			for (size_t k = i; k < d->n && d->t[k].label->pid == ti->label->pid; k++)
				nt++;
			fprintf(d->out, "%sProcess %d \"%s\": %zu thread%s\n", i ? "\n" : "",
				(int)ti->label->pid, ti->label->process, nt, nt == 1 ? "" : "s");
		}
		fputc('\n', d->out);
		text_header(d, ti);
		text_frames(d, ti);
	}
	fputc('\n', d->out);
	text_deadlocks(d);
}

/* ---- json ------------------------------------------------------------------- */

static json_t *json_frames(struct dump *d, const struct tinfo *ti)
{
	json_t *a = json_array();
	for (size_t i = 0; ti->have_stack && i < ti->stack.n; i++) {
		const struct frame_loc *l = frames__loc(d->fr, ti->stack.locs[i]);
		const struct frame_module *m = frames__module(d->fr, l->module);
		char addr[24];
		snprintf(addr, sizeof(addr), "0x%" PRIx64, l->addr);
		for (uint32_t j = 0; j < l->n; j++) {
			const struct frame_line *f = frames__line(d->fr, l->first + j);
			json_t *o = json_pack("{s:s, s:s, s:b}", "function", f->func, "address", addr,
					      "inlined", j + 1 < l->n);
			if (f->file) {
				json_object_set_new(o, "file", json_string(f->file));
				json_object_set_new(o, "line", json_integer(f->line));
			}
			if (m)
				json_object_set_new(o, "module", json_string(m->path));
			json_array_append_new(a, o);
		}
	}
	return a;
}

static json_t *json_thread(struct dump *d, const struct tinfo *ti)
{
	json_t *o = json_pack("{s:i, s:i, s:s, s:s, s:s}", "pid", (int)ti->label->pid,
			      "tid", (int)ti->label->tid, "name", ti->label->thread,
			      "process", ti->label->process,
			      "state", state_text(ti->have_stack ? ti->stack.state : 0));
	const char *eq = ti->label->rt_thread ? strchr(ti->label->rt_thread, '=') : NULL;
	if (o && eq) {
		char key[64];
		snprintf(key, sizeof(key), "%.*s", (int)(eq - ti->label->rt_thread), ti->label->rt_thread);
		json_object_set_new(o, key, json_string(eq + 1));
	}
	if (ti->blocked) {
		char *n = syscall_name(ti->nr);
		json_t *args = json_array();
		for (int k = 0; k < 6; k++) {
			char a[24];
			snprintf(a, sizeof(a), "0x%" PRIx64, ti->args[k]);
			json_array_append_new(args, json_string(a));
		}
		json_object_set_new(o, "syscall", json_pack("{s:s, s:i, s:o}", "name", n, "nr",
							     (int)ti->nr, "args", args));
		free(n);
	}
	if (ti->off_cpu_ms >= 0)
		json_object_set_new(o, "off_cpu_seconds", json_real(ti->off_cpu_ms / 1000.0));
	if (ti->mutex) {
		char m[24];
		snprintf(m, sizeof(m), "0x%" PRIx64, ti->mutex);
		json_t *w = json_pack("{s:s}", "mutex", m);
		if (ti->owner)
			json_object_set_new(w, "owner", json_integer(ti->owner));
		json_object_set_new(o, "waits_for", w);
	}
	json_object_set_new(o, "frames", json_frames(d, ti));
	return o;
}

static int write_json(struct dump *d)
{
	json_t *threads = json_array(), *cycles = json_array();
	size_t *chain = xcalloc(d->n + 1, sizeof(*chain));
	for (size_t i = 0; i < d->n; i++)
		json_array_append_new(threads, json_thread(d, &d->t[i]));
	for (size_t i = 0; i < d->n; i++) {
		size_t n = d->t[i].in_cycle ? 0 : cycle_from(d, i, chain, d->n);
		json_t *c = n ? json_array() : NULL;
		for (size_t k = 0; k < n; k++) {
			d->t[chain[k]].in_cycle = 1;
			json_array_append_new(c, json_integer(d->t[chain[k]].label->tid));
		}
		if (c)
			json_array_append_new(cycles, c);
	}
	free(chain);
	json_t *root = json_pack("{s:o, s:o}", "threads", threads, "deadlocks", cycles);
	int r = json_dumpf(root, d->out, JSON_INDENT(1)) == 0 ? 0 : -EIO;
	fputc('\n', d->out);
	json_decref(root);
	return r;
}

int dump__text(const struct frames *fr, FILE *out)
{
	struct dump d = { .out = out, .fr = fr };
	collect(&d);
	pid_t *pids = xcalloc(d.n + 1, sizeof(*pids));
	for (size_t i = 0; i < d.n; i++)
		if (!d.npids || pids[d.npids - 1] != d.t[i].label->pid)
			pids[d.npids++] = d.t[i].label->pid;
	d.pids = pids;
	read_last_ran(&d);
	read_proc(&d);
	write_text(&d);
	free(pids);
	free(d.t);
	free(d.ran);
	return fflush(out) == 0 && !ferror(out) ? 0 : -EIO;
}

int dump__run(const struct options *o)
{
	struct dump d = { .o = o, .out = stdout, .pids = o->pids, .npids = o->npids };
	struct outfile *file = NULL;
	char err[512];
	sigset_t old;
	int code = 1;
	/* -o FILE: written like a profile (checked before attaching, named
	 * when complete); without it, standard output as it is. */
	if (o->output && (outfile__open(&file, o->output, err, sizeof(err)) < 0 ||
			  !(d.out = fdopen(dup(outfile__fd(file)), "w")))) {
		errorf(err, NULL);
		outfile__free(file);
		return 1;
	}
	pthread_sigmask(SIG_SETMASK, NULL, &old);
	read_last_ran(&d);
	if (sample(&d, &old) == 0) {
		int r = 0;
		collect(&d);
		read_proc(&d);
		if (o->format == FORMAT_JSON)
			r = write_json(&d);
		else
			write_text(&d);
		code = r == 0 && fflush(d.out) == 0 && !ferror(d.out) ? 0 : 1;
	}
	if (d.out != stdout && fclose(d.out) != 0)
		code = 1;
	if (file && code == 0 && outfile__commit(file, err, sizeof(err)) < 0) {
		errorf(err, NULL);
		code = 1;
	}
	outfile__free(file);
	frames__free(d.named);
	free(d.t);
	free(d.ran);
	sampler__free(d.sampler);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	return code;
}
