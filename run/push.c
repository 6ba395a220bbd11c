#include "run/push.h"

#include <curl/curl.h>
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include "util/secret.h"
#include "util/timeutil.h"
#include "util/xalloc.h"

#define BACKOFF_MIN_S 1
#define BACKOFF_MAX_S 60

struct item {
	char *body;                     /* gzipped pprof */
	size_t len;
	uint64_t from_s, until_s;       /* unix seconds */
	pid_t pid;
	uint64_t seq;
};

struct push {
	char *url;                      /* .../ingest */
	char *app;                      /* --app-name or the command's name */
	char *labels;                   /* ",k=v,..." after the name's own */
	char host[256];
	int hz;
	pid_t pid;
	pthread_t thread;
	int started;
	pthread_mutex_t mu;
	pthread_cond_t cv;
	struct item *q;                 /* a ring of PUSH_QUEUE */
	size_t head, n;
	int quit;
	uint64_t next_seq;
	uint64_t deadline_ns;           /* quitting: give up sending then */
	struct push_stats st;           /* under mu */
	char *shown;                    /* url as shown: its secrets hidden (util/secret.h) */
	int failing;                    /* the last send failed (retried): said as it began */
	uint64_t failed_run;            /* ... and the sends failed since */
	int said_refused;               /* a refusal (4xx) was said, once */
	char *userpwd;                  /* --push-auth-file's USER:PASSWORD, or NULL */
	struct curl_slist *headers;     /* --push-auth-file's token, --push-header-file's */
};

/* ---- credentials ------------------------------------------------------------- */

#define AUTH_FILE_MAX 16384
#define HEADER_MAX 1024

/* The file at PATH, whole, into BUF (at most AUTH_FILE_MAX - 1 bytes). */
static int read_small(const char *opt, const char *path, char *buf, char *err, size_t errlen)
{
	FILE *f = fopen(path, "re");
	size_t n = f ? fread(buf, 1, AUTH_FILE_MAX, f) : 0;
	int e = f ? (ferror(f) ? EIO : 0) : errno;
	if (f)
		fclose(f);
	if (!e && n == AUTH_FILE_MAX)
		e = EFBIG;
	if (e) {
		snprintf(err, errlen, "--%s %s: %s", opt, path,
			 e == EFBIG ? "larger than 16 KiB: not credentials" : strerror(e));
		return -e;
	}
	buf[n] = '\0';
	return 0;
}

/* A header line a server takes: "Name: value", NAME an HTTP token, VALUE
 * printable. */
static int header_ok(const char *h)
{
	size_t name = strspn(h, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789"
				"!#$%&'*+-.^_`|~");
	if (!name || h[name] != ':' || strlen(h) > HEADER_MAX)
		return 0;
	for (const char *c = h + name + 1; *c; c++)
		if ((unsigned char)*c < 0x20 && *c != '\t')
			return 0;
	return 1;
}

int push__read_auth(const struct options *o, struct push_auth *a, char *err, size_t errlen)
{
	char *buf = xmalloc(AUTH_FILE_MAX + 1);
	int e = 0;
	memset(a, 0, sizeof(*a));
	if (o->push_auth_file &&
	    (e = read_small("push-auth-file", o->push_auth_file, buf, err, errlen)) == 0) {
		size_t n = strlen(buf);
		while (n && strchr("\r\n \t", buf[n - 1]))
			buf[--n] = '\0';
		if (!n || strcspn(buf, " \t\r\n") != n) {
			snprintf(err, errlen, "--push-auth-file %s: needs USER:PASSWORD or one token "
				 "(a line without spaces), %s", o->push_auth_file,
				 n ? "not several words" : "and it is empty");
			e = -EINVAL;
		} else if (strchr(buf, ':')) {
			a->userpwd = xstrdup(buf);
		} else {
			size_t l = strlen("Authorization: Bearer ") + n + 1;
			a->headers[a->nheaders] = xmalloc(l);
			snprintf(a->headers[a->nheaders++], l, "Authorization: Bearer %s", buf);
		}
	}
	if (!e && o->push_header_file &&
	    (e = read_small("push-header-file", o->push_header_file, buf, err, errlen)) == 0) {
		size_t line = 0;
		for (char *s = buf, *nl; *s && !e; s = nl ? nl + 1 : s + strlen(s)) {
			nl = strchr(s, '\n');
			if (nl)
				*nl = '\0';
			line++;
			size_t n = strlen(s);
			while (n && (s[n - 1] == '\r' || s[n - 1] == ' '))
				s[--n] = '\0';
			if (!n || *s == '#')
				continue;
			if (!header_ok(s)) {
				snprintf(err, errlen, "--push-header-file %s: line %zu is not a header "
					 "(\"Name: value\", at most %d bytes)", o->push_header_file, line,
					 HEADER_MAX);
				e = -EINVAL;
			} else if (a->nheaders == PUSH_HEADERS) {
				snprintf(err, errlen, "--push-header-file %s: more than %d headers",
					 o->push_header_file, PUSH_HEADERS);
				e = -EINVAL;
			} else {
				a->headers[a->nheaders++] = xstrdup(s);
			}
		}
	}
	memset(buf, 0, AUTH_FILE_MAX + 1);
	free(buf);
	if (e)
		push__auth_free(a);
	return e;
}

void push__auth_free(struct push_auth *a)
{
	if (a->userpwd)
		memset(a->userpwd, 0, strlen(a->userpwd));
	free(a->userpwd);
	for (size_t i = 0; i < a->nheaders; i++) {
		memset(a->headers[i], 0, strlen(a->headers[i]));
		free(a->headers[i]);
	}
	memset(a, 0, sizeof(*a));
}

/* Label values as Pyroscope's name grammar takes them: no {}=, or quotes. */
static void clean(char *s)
{
	for (; *s; s++)
		if (strchr("{}=,\"\\", *s) || (unsigned char)*s < 0x20)
			*s = '_';
}

static CURLcode init_code;

static void init_curl(void)
{
	init_code = curl_global_init(CURL_GLOBAL_DEFAULT);
}

int push__new(struct push **out, const struct options *o, const struct push_auth *auth, pid_t pid,
	      const char *comm, char *err, size_t errlen)
{
	static pthread_once_t once = PTHREAD_ONCE_INIT;
	pthread_once(&once, init_curl);
	if (init_code != CURLE_OK) {
		snprintf(err, errlen, "--push: libcurl: %s", curl_easy_strerror(init_code));
		return -EIO;
	}
	struct push *p = xcalloc(1, sizeof(*p));
	size_t ul = strlen(o->push);
	while (ul && o->push[ul - 1] == '/')
		ul--;
	const char *tail = "/ingest";
	if (ul >= 7 && !strncmp(o->push + ul - 7, "/ingest", 7))
		tail = "";
	p->url = xmalloc(ul + strlen(tail) + 1);
	memcpy(p->url, o->push, ul);
	strcpy(p->url + ul, tail);
	p->shown = secret__shown(p->url);
	p->app = xstrdup(o->app_name ? o->app_name : comm && *comm ? comm : "cprof-attach");
	/* --app-name was checked (cli/options.c); a command's name is
	 * mapped to the characters Pyroscope takes, and the mapping said. */
	int mapped = 0;
	for (char *c = p->app; *c; c++)
		if (!strchr(APP_NAME_CHARS, *c)) {
			*c = '_';
			mapped = 1;
		}
	if (mapped)
		fprintf(stderr, "cprof-attach: note: pushing as '%s': the command's name '%s' with "
			"each character Pyroscope does not take in a name (not [A-Za-z0-9_.-]) as _ "
			"(--app-name sets another)\n", p->app, comm);
	if (gethostname(p->host, sizeof(p->host) - 1) < 0)
		snprintf(p->host, sizeof(p->host), "unknown");
	clean(p->host);
	struct strbuf sb = { 0 };
	strbuf__addf(&sb, "%s", "");
	for (size_t i = 0; i < o->ntags; i++)
		strbuf__addf(&sb, ",%s", o->tags[i]);
	p->labels = sb.s;
	p->hz = o->hz;
	p->pid = pid;
	p->q = xcalloc(PUSH_QUEUE, sizeof(*p->q));
	if (auth && auth->userpwd)
		p->userpwd = xstrdup(auth->userpwd);
	for (size_t i = 0; auth && i < auth->nheaders; i++) {
		struct curl_slist *l = curl_slist_append(p->headers, auth->headers[i]);
		if (!l)
			xalloc_oom();
		p->headers = l;
	}
	pthread_mutex_init(&p->mu, NULL);
	pthread_cond_init(&p->cv, NULL);
	*out = p;
	return 0;
}

/* ---- the sender -------------------------------------------------------------- */

/* An answer's body is not needed: at most ANSWER_MAX bytes of it are
 * read (a store that answers endlessly costs nothing more), then the
 * transfer ends, its status line already known. */
#define ANSWER_MAX (16 * 1024)
struct answer {
	size_t got;
	int cut;                        /* ended here, past ANSWER_MAX */
	char head[512];                 /* its first bytes: a refusal's reason */
};

static size_t discard(char *ptr, size_t size, size_t n, void *arg)
{
	struct answer *a = arg;
	if (a->got < sizeof(a->head) - 1) {
		size_t k = size * n < sizeof(a->head) - 1 - a->got ? size * n : sizeof(a->head) - 1 - a->got;
		memcpy(a->head + a->got, ptr, k);
		a->head[a->got + k] = '\0';
	}
	a->got += size * n;
	if (a->got > ANSWER_MAX) {
		a->cut = 1;
		return 0;               /* CURLE_WRITE_ERROR: ours */
	}
	return size * n;
}

/* libcurl asks, about once a second and as data moves: a request in flight
 * when the run ends is given up at the end of the grace, not at its own
 * timeout (30 s: `-d 8` ended after 31 s with a store that never
 * answered). */
static int keep_going(void *arg, curl_off_t dt, curl_off_t dn, curl_off_t ut, curl_off_t un)
{
	struct push *p = arg;
	(void)dt, (void)dn, (void)ut, (void)un;
	pthread_mutex_lock(&p->mu);
	int stop = p->quit && now_ns() >= p->deadline_ns;
	pthread_mutex_unlock(&p->mu);
	return stop;
}

/* A store's answer as one line of ours: its first line, printable, at
 * most 200 bytes ("" for none). */
static void reason_of(const char *body, char *out, size_t size)
{
	size_t o = 0;
	while (*body == ' ' || *body == '\t' || *body == '\r' || *body == '\n')
		body++;
	for (; *body && *body != '\n' && *body != '\r' && o + 1 < size && o < 200; body++)
		out[o++] = (unsigned char)*body < 0x20 || (unsigned char)*body == 0x7f ? '?' : *body;
	while (o && out[o - 1] == ' ')
		o--;
	out[o] = '\0';
}

/* Is CODE the profile's fault (a 4xx: sent again, it is refused again)?
 * 408 (the request timed out) and 429 (too many requests) are the store's
 * state, not the profile's: those are retried, as a 5xx is. */
static int refused_code(long code)
{
	return code >= 400 && code < 500 && code != 408 && code != 429;
}

/* One POST; 0 (sent), 1 (refused: a 4xx, not to be sent again, with
 * p->st.last_refusal set), or -1 (failed: to retry, with p->st.last_error
 * set). */
static int send_one(struct push *p, CURL *c, const struct item *it, long timeout_s)
{
	char proc[64];
	snprintf(proc, sizeof(proc), "%d", (int)it->pid);
	struct strbuf name = { 0 };
	strbuf__addf(&name, "%s{host=%s,pid=%s,process=%s%s}", p->app, p->host, proc, p->app,
		     p->labels);
	char *ename = curl_easy_escape(c, name.s, (int)name.len);
	struct strbuf url = { 0 };
	strbuf__addf(&url, "%s?name=%s&from=%llu&until=%llu&format=pprof&sampleRate=%d"
		     "&spyName=cprof-attach&units=samples&aggregationType=sum", p->url,
		     ename ? ename : "", (unsigned long long)it->from_s,
		     (unsigned long long)it->until_s, p->hz);
	curl_free(ename);
	strbuf__free(&name);
	/* The three sample types named for the store: wall time is the
	 * profile's point (what fgprof gives), cpu time beside it. */
	static const char types[] =
		"{\"wall\":{\"units\":\"nanoseconds\",\"aggregation\":\"sum\",\"display-name\":\"wall\","
		"\"sampled\":true},"
		"\"cpu\":{\"units\":\"nanoseconds\",\"aggregation\":\"sum\",\"display-name\":\"cpu\","
		"\"sampled\":true},"
		"\"samples\":{\"units\":\"samples\",\"aggregation\":\"sum\",\"display-name\":\"samples\","
		"\"sampled\":true}}";
	curl_mime *mime = curl_mime_init(c);
	curl_mimepart *part = curl_mime_addpart(mime);
	curl_mime_name(part, "profile");
	curl_mime_filename(part, "profile.pprof");
	curl_mime_type(part, output_formats[FORMAT_PPROF].content_type);
	curl_mime_data(part, it->body, it->len);
	part = curl_mime_addpart(mime);
	curl_mime_name(part, "sample_type_config");
	curl_mime_filename(part, "sample_type_config.json");
	curl_mime_type(part, "application/json");
	curl_mime_data(part, types, CURL_ZERO_TERMINATED);
	curl_easy_reset(c);
	curl_easy_setopt(c, CURLOPT_URL, url.s);
	curl_easy_setopt(c, CURLOPT_MIMEPOST, mime);
	curl_easy_setopt(c, CURLOPT_NOSIGNAL, 1L);
	curl_easy_setopt(c, CURLOPT_CONNECTTIMEOUT, 5L);
	curl_easy_setopt(c, CURLOPT_TIMEOUT, timeout_s);
	struct answer ans = { 0 };
	curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, discard);
	curl_easy_setopt(c, CURLOPT_WRITEDATA, &ans);
	curl_easy_setopt(c, CURLOPT_XFERINFOFUNCTION, keep_going);
	curl_easy_setopt(c, CURLOPT_XFERINFODATA, p);
	curl_easy_setopt(c, CURLOPT_NOPROGRESS, 0L);
	curl_easy_setopt(c, CURLOPT_USERAGENT, "cprof-attach/" CPROF_VERSION);
	curl_easy_setopt(c, CURLOPT_PROTOCOLS_STR, "http,https");
	if (p->userpwd) {
		curl_easy_setopt(c, CURLOPT_USERPWD, p->userpwd);
		curl_easy_setopt(c, CURLOPT_HTTPAUTH, (long)CURLAUTH_BASIC);
	}
	if (p->headers)
		curl_easy_setopt(c, CURLOPT_HTTPHEADER, p->headers);
	char cerr[CURL_ERROR_SIZE] = "";
	curl_easy_setopt(c, CURLOPT_ERRORBUFFER, cerr);
	CURLcode rc = curl_easy_perform(c);
	long code = 0;
	curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, &code);
	curl_mime_free(mime);
	strbuf__free(&url);
	pthread_mutex_lock(&p->mu);
	p->st.last_code = code;
	if (rc == CURLE_WRITE_ERROR && ans.cut)
		rc = CURLE_OK;          /* the body cut by us: the status is what counts */
	int ok = rc == CURLE_OK && code >= 200 && code < 300;
	int refused = rc == CURLE_OK && refused_code(code);
	char reason[208];
	reason_of(ans.head, reason, sizeof(reason));
	/* Said as it happens: the first refusal (with the store's reason),
	 * the start of a run of failures and its end (a run whose every push
	 * failed said nothing until its end); then counted: the summary,
	 * /metrics. */
	char said[1024] = "", again[600] = "";
	if (refused) {
		snprintf(p->st.last_refusal, sizeof(p->st.last_refusal), "HTTP %ld%s%.200s", code,
			 reason[0] ? ": " : "", reason);
		if (!p->said_refused) {
			p->said_refused = 1;
			snprintf(said, sizeof(said), "cprof-attach: note: %.400s refused a profile (%.255s): "
				 "dropped, not sent again (a 4xx is the profile's fault, not the store's); "
				 "the next ones go on, refusals are counted in the summary and /metrics "
				 "(cprof_pushes_total{result=\"refused\"}); said once",
				 p->shown, p->st.last_refusal);
		}
	} else if (!ok) {
		snprintf(p->st.last_error, sizeof(p->st.last_error), "%s",
			 rc != CURLE_OK ? (cerr[0] ? cerr : curl_easy_strerror(rc)) :
			 code ? "the server answered with an error" : "no answer");
		if (rc == CURLE_OK)
			snprintf(p->st.last_error, sizeof(p->st.last_error), "HTTP %ld%s%.200s", code,
				 reason[0] ? ": " : "", reason);
		if (!p->failing && !p->quit)
			snprintf(said, sizeof(said), "cprof-attach: note: a push to %.400s failed (%.255s): "
				 "retried, and counted in the summary and /metrics (cprof_pushes_total); "
				 "said again when pushes get through", p->shown, p->st.last_error);
		p->failing = 1;
		p->failed_run++;
	}
	if ((ok || refused) && p->failing) {
		snprintf(again, sizeof(again), "cprof-attach: note: pushes to %.400s get through again, "
			 "after %llu failed %s", p->shown, (unsigned long long)p->failed_run,
			 p->failed_run == 1 ? "send" : "sends");
		p->failing = 0;
		p->failed_run = 0;
	}
	pthread_mutex_unlock(&p->mu);
	if (again[0])
		fprintf(stderr, "%s\n", again);
	if (said[0])
		fprintf(stderr, "%s\n", said);
	return ok ? 0 : refused ? 1 : -1;
}

static void *sender(void *arg)
{
	struct push *p = arg;
	CURL *c = curl_easy_init();
	unsigned backoff = 0;
	uint64_t retry_at = 0;          /* CLOCK_MONOTONIC: after a failure, not before */
	pthread_mutex_lock(&p->mu);
	for (;;) {
		while (!p->n && !p->quit)
			pthread_cond_wait(&p->cv, &p->mu);
		if (!p->n || (p->quit && now_ns() >= p->deadline_ns))
			break;
		if (!p->quit && now_ns() < retry_at) {
			uint64_t wait = retry_at - now_ns();
			struct timespec ts;
			clock_gettime(CLOCK_REALTIME, &ts);
			ts.tv_sec += (time_t)(wait / 1000000000ull);
			ts.tv_nsec += (long)(wait % 1000000000ull);
			if (ts.tv_nsec >= 1000000000) {
				ts.tv_sec++;
				ts.tv_nsec -= 1000000000;
			}
			pthread_cond_timedwait(&p->cv, &p->mu, &ts);
			continue;
		}
		struct item it = p->q[p->head];
		it.body = xmalloc(it.len);      /* a copy: the ring may drop the original */
		memcpy(it.body, p->q[p->head].body, it.len);
		long timeout = 30;
		if (p->quit) {                  /* the end: what is left of the grace */
			uint64_t left = p->deadline_ns - now_ns();
			timeout = left > 30000000000ull ? 30 : (long)(left / 1000000000ull) + 1;
		}
		pthread_mutex_unlock(&p->mu);
		int r = c ? send_one(p, c, &it, timeout) : -1;
		pthread_mutex_lock(&p->mu);
		/* Sent or not, the head may have been dropped meanwhile (the
		 * queue overflowed): only take it out if it is still this one. */
		if (r >= 0) {               /* sent, or refused: out of the queue */
			if (r == 0) {
				p->st.sent++;
				p->st.bytes_sent += it.len;
			} else {
				p->st.refused++;
			}
			if (p->n && p->q[p->head].seq == it.seq) {
				free(p->q[p->head].body);
				p->st.queued_bytes -= p->q[p->head].len;
				p->head = (p->head + 1) % PUSH_QUEUE;
				p->n--;
			}
			backoff = 0;
		} else {
			p->st.failed++;
			free(it.body);
			if (p->quit)            /* the end: one try each, no waiting */
				break;
			backoff = backoff ? (backoff * 2 > BACKOFF_MAX_S ? BACKOFF_MAX_S : backoff * 2) :
				  BACKOFF_MIN_S;
			retry_at = now_ns() + backoff * 1000000000ull;
			continue;
		}
		p->st.queued = p->n;
		free(it.body);
	}
	pthread_mutex_unlock(&p->mu);
	if (c)
		curl_easy_cleanup(c);
	return NULL;
}

/* ---- the queue --------------------------------------------------------------- */

void push__period(void *arg, const struct frames *fr, const struct profile_info *info)
{
	struct push *p = arg;
	char err[256];
	int fd = memfd_create("cprof-push", MFD_CLOEXEC);
	if (fd < 0)
		return;
	struct item it = { 0 };
	off_t size = -1;
	if (output_formats[FORMAT_PPROF].write(fd, fr, info, err, sizeof(err)) == 0)
		size = lseek(fd, 0, SEEK_END);
	if (size > 0) {
		it.len = (size_t)size;
		it.body = xmalloc(it.len);
		if (pread(fd, it.body, it.len, 0) != (ssize_t)it.len) {
			free(it.body);
			it.body = NULL;
		}
	}
	close(fd);
	if (!it.body)
		return;
	/* The period's start and end, each to the nearest second: a period
	 * ends where the next begins (run/periods.c takes them between the
	 * same two ticks), so the windows tile, each one's from the last
	 * one's until (the start floored and the end ceiled made 11 s windows
	 * of 10 s periods, each overlapping the next by 1 s).  The pprof's
	 * own time_nanos and duration_nanos are exact. */
	it.from_s = (info->start_ns + 500000000ull) / 1000000000ull;
	it.until_s = (info->start_ns + info->duration_ns + 500000000ull) / 1000000000ull;
	pthread_mutex_lock(&p->mu);
	it.pid = p->pid;
	it.seq = p->next_seq++;
	if (!p->started) {
		sigset_t pipe, old;
		sigemptyset(&pipe);
		sigaddset(&pipe, SIGPIPE);
		pthread_sigmask(SIG_BLOCK, &pipe, &old);
		p->started = pthread_create(&p->thread, NULL, sender, p) == 0;
		pthread_sigmask(SIG_SETMASK, &old, NULL);
	}
	while (p->n && (p->n == PUSH_QUEUE || p->st.queued_bytes + it.len > PUSH_QUEUE_BYTES)) {
		free(p->q[p->head].body);
		p->st.queued_bytes -= p->q[p->head].len;
		p->head = (p->head + 1) % PUSH_QUEUE;
		p->n--;
		p->st.dropped++;
	}
	p->q[(p->head + p->n) % PUSH_QUEUE] = it;
	p->n++;
	p->st.queued = p->n;
	p->st.queued_bytes += it.len;
	pthread_cond_broadcast(&p->cv);
	pthread_mutex_unlock(&p->mu);
}

void push__set_pid(struct push *p, pid_t pid)
{
	pthread_mutex_lock(&p->mu);
	p->pid = pid;
	pthread_mutex_unlock(&p->mu);
}

void push__stats(struct push *p, struct push_stats *out)
{
	pthread_mutex_lock(&p->mu);
	*out = p->st;
	pthread_mutex_unlock(&p->mu);
}

void push__metrics(struct push *p, struct strbuf *sb)
{
	struct push_stats st;
	push__stats(p, &st);
	strbuf__addf(sb,
		"# HELP cprof_pushes_total Profiles sent to --push, by result (dropped: the "
		"queue was full; refused: the store answered 4xx, not retried).\n# TYPE cprof_pushes_total counter\n"
		"cprof_pushes_total{result=\"sent\"} %llu\n"
		"cprof_pushes_total{result=\"failed\"} %llu\n"
		"cprof_pushes_total{result=\"dropped\"} %llu\n"
		"cprof_pushes_total{result=\"refused\"} %llu\n"
		"# HELP cprof_push_queue_profiles Profiles waiting to be sent.\n"
		"# TYPE cprof_push_queue_profiles gauge\ncprof_push_queue_profiles %llu\n"
		"# HELP cprof_push_queue_bytes Bytes waiting to be sent.\n"
		"# TYPE cprof_push_queue_bytes gauge\ncprof_push_queue_bytes %llu\n",
		(unsigned long long)st.sent, (unsigned long long)st.failed,
		(unsigned long long)st.dropped, (unsigned long long)st.refused,
		(unsigned long long)st.queued,
		(unsigned long long)st.queued_bytes);
}

void push__free(struct push *p, double grace_s, struct push_stats *final)
{
	if (!p)
		return;
	pthread_mutex_lock(&p->mu);
	p->quit = 1;
	p->deadline_ns = now_ns() + (uint64_t)(grace_s * 1e9);
	pthread_cond_broadcast(&p->cv);
	pthread_mutex_unlock(&p->mu);
	if (p->started)
		pthread_join(p->thread, NULL);
	p->st.queued = p->n;
	if (final)
		*final = p->st;
	for (size_t i = 0; i < p->n; i++)
		free(p->q[(p->head + i) % PUSH_QUEUE].body);
	free(p->q);
	free(p->url);
	free(p->shown);
	free(p->app);
	free(p->labels);
	if (p->userpwd)
		memset(p->userpwd, 0, strlen(p->userpwd));
	free(p->userpwd);
	curl_slist_free_all(p->headers);
	pthread_mutex_destroy(&p->mu);
	pthread_cond_destroy(&p->cv);
	free(p);
}
