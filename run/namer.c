/* namer: windows named on a thread of their own (see run/namer.h). */
#include "run/namer.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "util/timeutil.h"
#include "util/xalloc.h"

struct item {
	struct stacks *view;
	struct naming_set *set;
	int forget;                     /* a space gone, not a window */
	uint32_t space;
	void *job;                      /* the caller's, copied */
};

struct namer {
	struct names *names;
	namer_done done;
	void *arg;
	uint64_t delay_ns;              /* CPROF_NAMING_DELAY_MS */
	pthread_t thread;
	int started, stop;
	pthread_mutex_t mu;
	pthread_cond_t cv;              /* an item came, or one was taken */
	struct item *q;                 /* under mu, oldest first */
	size_t n, cap;
	double longest_ms;              /* under mu */
};

static uint64_t thread_cpu_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static void name_item(struct namer *n, struct item *it)
{
	if (it->forget) {
		names__forget(n->names, it->space);
		return;
	}
	uint64_t t0 = now_ns(), cpu0 = thread_cpu_ns();
	if (n->delay_ns) {
		struct timespec d = { (time_t)(n->delay_ns / 1000000000ull),
				      (long)(n->delay_ns % 1000000000ull) };
		nanosleep(&d, NULL);
	}
	size_t nspaces;
	const struct modules *const *spaces = naming__set_spaces(it->set, &nspaces);
	struct frames *fr = it->view ? frames__name(n->names, it->view, spaces, nspaces) : NULL;
	stacks__free(it->view);
	naming__set_put(it->set);
	double ms = (double)(now_ns() - t0) / 1e6;
	pthread_mutex_lock(&n->mu);
	if (ms > n->longest_ms)
		n->longest_ms = ms;
	pthread_mutex_unlock(&n->mu);
	n->done(n->arg, it->job, fr, (double)(thread_cpu_ns() - cpu0) / 1e6);
	free(it->job);
}

static void *namer_main(void *arg)
{
	struct namer *n = arg;
	pthread_mutex_lock(&n->mu);
	for (;;) {
		while (!n->n && !n->stop)
			pthread_cond_wait(&n->cv, &n->mu);
		if (!n->n)
			break;
		struct item it = n->q[0];
		memmove(n->q, n->q + 1, --n->n * sizeof(*n->q));
		pthread_cond_broadcast(&n->cv);
		pthread_mutex_unlock(&n->mu);
		name_item(n, &it);
		pthread_mutex_lock(&n->mu);
	}
	pthread_mutex_unlock(&n->mu);
	return NULL;
}

static void put(struct namer *n, const struct item *it)
{
	pthread_mutex_lock(&n->mu);
	while (n->n >= NAMER_QUEUE_MAX && n->started)
		pthread_cond_wait(&n->cv, &n->mu);
	if (n->n == n->cap) {
		n->cap = n->cap ? 2 * n->cap : NAMER_QUEUE_MAX;
		n->q = xrealloc(n->q, n->cap * sizeof(*n->q));
	}
	n->q[n->n++] = *it;
	pthread_cond_broadcast(&n->cv);
	pthread_mutex_unlock(&n->mu);
}

void namer__add(struct namer *n, struct stacks *view, struct naming_set *set, const void *job,
		size_t size)
{
	struct item it = { view, set, 0, 0, xmalloc(size) };
	memcpy(it.job, job, size);
	put(n, &it);
}

void namer__forget(struct namer *n, uint32_t space)
{
	struct item it = { NULL, NULL, 1, space, NULL };
	put(n, &it);
}

double namer__longest_ms(struct namer *n)
{
	pthread_mutex_lock(&n->mu);
	double ms = n->longest_ms;
	pthread_mutex_unlock(&n->mu);
	return ms;
}

struct namer *namer__new(const char *const *dirs, size_t ndirs, namer_done done, void *arg)
{
	struct namer *n = xcalloc(1, sizeof(*n));
	n->done = done;
	n->arg = arg;
	const char *delay = getenv("CPROF_NAMING_DELAY_MS");
	n->delay_ns = delay && atof(delay) > 0 ? (uint64_t)(atof(delay) * 1e6) : 0;
	pthread_mutex_init(&n->mu, NULL);
	pthread_cond_init(&n->cv, NULL);
	n->names = names__new(dirs, ndirs);
	if (n->names && pthread_create(&n->thread, NULL, namer_main, n) == 0) {
		n->started = 1;
		pthread_setname_np(n->thread, "cprof-namer");   /* for top -H */
		return n;
	}
	namer__free(n);
	return NULL;
}

void namer__end(struct namer *n)
{
	if (!n->started)
		return;
	pthread_mutex_lock(&n->mu);
	n->stop = 1;
	pthread_cond_broadcast(&n->cv);
	pthread_mutex_unlock(&n->mu);
	pthread_join(n->thread, NULL);
	n->started = 0;
}

void namer__free(struct namer *n)
{
	if (!n)
		return;
	namer__end(n);
	for (size_t i = 0; i < n->n; i++) {     /* none once it ran: never started */
		stacks__free(n->q[i].view);
		naming__set_put(n->q[i].set);
		free(n->q[i].job);
	}
	free(n->q);
	names__free(n->names);
	pthread_mutex_destroy(&n->mu);
	pthread_cond_destroy(&n->cv);
	free(n);
}
