#include "run/serve.h"

#include <arpa/inet.h>
#include <errno.h>
#include <math.h>
#include <microhttpd.h>
#include <netdb.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include "run/dump.h"
#include "output/formats.h"
#include "output/output.h"
#include "util/xalloc.h"

/* The paths, for /metrics' counts. */
enum route { R_FGPROF, R_PROFILE, R_GOROUTINE, R_INDEX, R_METRICS, R_OTHER, NROUTES,
	     R_OTHER_UNCOUNTED /* an answer counted before it was made */ };
static const char *const route_name[NROUTES] = {
	"/debug/fgprof", "/debug/pprof/profile", "/debug/pprof/goroutine", "/debug/pprof/",
	"/metrics", "other",
};
static const unsigned codes[] = { 200, 400, 401, 404, 405, 500, 503 };
#define NCODES (sizeof(codes) / sizeof(codes[0]))

struct serve {
	int fd;                         /* the bound socket, until MHD has it */
	struct MHD_Daemon *d;
	struct serve_source src;
	char addr[512];                 /* for people: http://HOST:PORT or unix:PATH */
	char unix_path[sizeof(((struct sockaddr_un *)0)->sun_path)];
	dev_t unix_dev;                 /* the socket made there: only it is removed */
	ino_t unix_ino;
	char *token;                    /* --listen-token-file's, or NULL */
	pthread_mutex_t mu;
	uint64_t count[NROUTES][NCODES];
	uint64_t gone;                  /* clients that left before their answer */
	/* The budget of the answers' CPU (SERVE_CPU_SHARE), under mu: DEBT
	 * ns of CPU to be repaid, as of DEBT_AT (CLOCK_MONOTONIC). */
	double share, debt;
	uint64_t debt_at;
	double cpu_ns;                  /* the answers' CPU, in all */
	double paused_ns;               /* sampling paused to name them */
	uint64_t waited, refused;       /* asks that waited for a budget; 503s */
};

/* ---- binding --------------------------------------------------------------- */

static int bind_unix(struct serve *s, const char *path, char *err, size_t errlen)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	if (!*path || strlen(path) >= sizeof(sa.sun_path)) {
		snprintf(err, errlen, "--listen unix:%s: a socket path needs 1 to %zu bytes", path,
			 sizeof(sa.sun_path) - 1);
		return -EINVAL;
	}
	memcpy(sa.sun_path, path, strlen(path) + 1);
	struct stat st;
	if (lstat(path, &st) == 0) {
		/* A socket no one answers on (a run that was killed) is
		 * replaced; anything else of the user's is left alone. */
		int probe = S_ISSOCK(st.st_mode) ? socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0) : -1;
		int live = probe >= 0 && connect(probe, (struct sockaddr *)&sa, sizeof(sa)) == 0;
		int refused = probe >= 0 && !live && errno == ECONNREFUSED;
		if (probe >= 0)
			close(probe);
		if (!refused) {
			snprintf(err, errlen, "--listen unix:%s: %s", path,
				 live ? "another server listens there" :
				 "the path exists and is not a socket left by a finished run");
			return -EEXIST;
		}
		unlink(path);
	}
	s->fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (s->fd < 0) {
		snprintf(err, errlen, "--listen unix:%s: %s", path, strerror(errno));
		return -errno;
	}
	/* Mode 0600 from the start: no moment where others could connect. */
	mode_t old = umask(0177);
	int r = bind(s->fd, (struct sockaddr *)&sa, sizeof(sa));
	int e = errno;
	umask(old);
	if (r < 0) {
		snprintf(err, errlen, "--listen unix:%s: %s", path, strerror(e));
		return -e;
	}
	snprintf(s->unix_path, sizeof(s->unix_path), "%s", path);
	snprintf(s->addr, sizeof(s->addr), "unix:%s", path);
	if (lstat(path, &st) == 0) {
		s->unix_dev = st.st_dev;
		s->unix_ino = st.st_ino;
	}
	return 0;
}

/* HOST:PORT, [V6]:PORT, :PORT or PORT (the last two: 127.0.0.1). */
static int bind_inet(struct serve *s, const char *spec, char *err, size_t errlen)
{
	char host[256] = "127.0.0.1", port[16];
	const char *colon = strrchr(spec, ':');
	const char *p = colon ? colon + 1 : spec;
	if (colon) {
		size_t hl = (size_t)(colon - spec);
		const char *h = spec;
		if (hl >= 2 && h[0] == '[' && h[hl - 1] == ']') {
			h++;
			hl -= 2;
		}
		if (hl >= sizeof(host)) {
			snprintf(err, errlen, "--listen %s: the host name is too long", spec);
			return -EINVAL;
		}
		if (hl) {
			memcpy(host, h, hl);
			host[hl] = '\0';
		}
	}
	char *end;
	errno = 0;
	unsigned long n = strtoul(p, &end, 10);
	if (!*p || *end || errno || n > 65535 || *p == '-' || *p == '+') {
		snprintf(err, errlen, "--listen %s: needs [HOST]:PORT (a port 0 to 65535), or "
			 "unix:PATH", spec);
		return -EINVAL;
	}
	snprintf(port, sizeof(port), "%lu", n);
	struct addrinfo hints = { .ai_socktype = SOCK_STREAM, .ai_flags = AI_NUMERICSERV }, *ai;
	int g = getaddrinfo(host, port, &hints, &ai);
	if (g != 0) {
		snprintf(err, errlen, "--listen %s: %s", spec, gai_strerror(g));
		return -EINVAL;
	}
	int e = 0;
	s->fd = socket(ai->ai_family, SOCK_STREAM | SOCK_CLOEXEC, 0);
	int one = 1;
	if (s->fd < 0 || setsockopt(s->fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one)) < 0 ||
	    bind(s->fd, ai->ai_addr, ai->ai_addrlen) < 0)
		e = errno;
	freeaddrinfo(ai);
	if (e) {
		snprintf(err, errlen, "--listen %s: %s", spec, strerror(e));
		return -e;
	}
	struct sockaddr_storage ss;
	socklen_t sl = sizeof(ss);
	char numeric[INET6_ADDRSTRLEN] = "?";
	getsockname(s->fd, (struct sockaddr *)&ss, &sl);
	int v6 = ss.ss_family == AF_INET6;
	const void *a = v6 ? (const void *)&((struct sockaddr_in6 *)&ss)->sin6_addr :
			     (const void *)&((struct sockaddr_in *)&ss)->sin_addr;
	unsigned bound = ntohs(v6 ? ((struct sockaddr_in6 *)&ss)->sin6_port :
			     ((struct sockaddr_in *)&ss)->sin_port);
	inet_ntop(ss.ss_family, a, numeric, sizeof(numeric));
	snprintf(s->addr, sizeof(s->addr), v6 ? "http://[%s]:%u" : "http://%s:%u", numeric, bound);
	int loopback = v6 ? IN6_IS_ADDR_LOOPBACK((const struct in6_addr *)a) :
			    (ntohl(((const struct in_addr *)a)->s_addr) >> 24) == 127;
	if (!loopback)
		fprintf(stderr, "cprof-attach: warning: --listen %s is reachable from other hosts: "
			"the profile shows the target's function names, file paths and thread "
			"names%s\n", spec, s->token ? "" : " (--listen-token-file asks for a token)");
	return 0;
}

static int read_token(struct serve *s, const char *path, char *err, size_t errlen)
{
	FILE *f = fopen(path, "re");
	char buf[4096];
	size_t n = f ? fread(buf, 1, sizeof(buf) - 1, f) : 0;
	int e = f ? (ferror(f) ? EIO : 0) : errno;
	if (f)
		fclose(f);
	if (e) {
		snprintf(err, errlen, "--listen-token-file %s: %s", path, strerror(e));
		return -e;
	}
	buf[n] = '\0';
	while (n && (buf[n - 1] == '\n' || buf[n - 1] == '\r' || buf[n - 1] == ' '))
		buf[--n] = '\0';
	if (!n || strcspn(buf, " \t\r\n") != n) {
		snprintf(err, errlen, "--listen-token-file %s: needs one token (a line without "
			 "spaces), %s", path, n ? "not several words" : "and it is empty");
		return -EINVAL;
	}
	s->token = xstrdup(buf);
	return 0;
}

int serve__bind(struct serve **out, const struct options *o, char *err, size_t errlen)
{
	struct serve *s = xcalloc(1, sizeof(*s));
	s->fd = -1;
	pthread_mutex_init(&s->mu, NULL);
	const char *share = getenv("CPROF_SERVE_CPU_SHARE");
	s->share = share && atof(share) > 0 && atof(share) <= 1 ? atof(share) : SERVE_CPU_SHARE;
	*out = NULL;
	int e = o->listen_token_file ? read_token(s, o->listen_token_file, err, errlen) : 0;
	if (!e)
		e = strncmp(o->listen, "unix:", 5) == 0 ? bind_unix(s, o->listen + 5, err, errlen) :
		    bind_inet(s, o->listen, err, errlen);
	if (!e && listen(s->fd, 64) < 0) {
		e = -errno;
		snprintf(err, errlen, "--listen %s: %s", o->listen, strerror(errno));
	}
	if (e) {
		serve__free(s);
		return e;
	}
	*out = s;
	return 0;
}

const char *serve__address(const struct serve *s)
{
	return s->addr;
}

/* ---- answers ----------------------------------------------------------------- */

static void counted(struct serve *s, enum route r, unsigned code)
{
	size_t c = 0;
	while (c + 1 < NCODES && codes[c] != code)
		c++;
	pthread_mutex_lock(&s->mu);
	s->count[r][c]++;
	pthread_mutex_unlock(&s->mu);
}

static enum MHD_Result answer(struct serve *s, struct MHD_Connection *c, enum route r,
			      unsigned code, struct MHD_Response *resp)
{
	if (!resp)
		return MHD_NO;
	counted(s, r, code);
	MHD_add_response_header(resp, "X-Content-Type-Options", "nosniff");
	enum MHD_Result q = MHD_queue_response(c, code, resp);
	MHD_destroy_response(resp);
	return q;
}

/* SB's bytes (taken) as the answer, of type TYPE. */
static enum MHD_Result answer_buffer(struct serve *s, struct MHD_Connection *c, enum route r,
				     unsigned code, struct strbuf *sb, const char *type)
{
	struct MHD_Response *resp = MHD_create_response_from_buffer(sb->len, sb->s,
								     MHD_RESPMEM_MUST_FREE);
	if (!resp) {
		strbuf__free(sb);
		return MHD_NO;
	}
	MHD_add_response_header(resp, "Content-Type", type);
	if (code == MHD_HTTP_UNAUTHORIZED)
		MHD_add_response_header(resp, "WWW-Authenticate", "Bearer");
	if (r == R_OTHER_UNCOUNTED) {   /* counted already (/metrics) */
		MHD_add_response_header(resp, "X-Content-Type-Options", "nosniff");
		enum MHD_Result q = MHD_queue_response(c, code, resp);
		MHD_destroy_response(resp);
		return q;
	}
	return answer(s, c, r, code, resp);
}

static enum MHD_Result text(struct serve *s, struct MHD_Connection *c, enum route r,
			    unsigned code, const char *fmt, ...) __attribute__((format(printf, 5, 6)));

static enum MHD_Result text(struct serve *s, struct MHD_Connection *c, enum route r,
			    unsigned code, const char *fmt, ...)
{
	struct strbuf sb = { 0 };
	va_list ap;
	va_start(ap, fmt);
	char line[1024];
	vsnprintf(line, sizeof(line), fmt, ap);
	va_end(ap);
	strbuf__addf(&sb, "%s\n", line);
	return answer_buffer(s, c, r, code, &sb, "text/plain; charset=utf-8");
}

/* A body made by WRITE (an output/ writer) into memory. */
static struct MHD_Response *written(int (*write)(int, const struct frames *,
						 const struct profile_info *, char *, size_t),
				    const struct frames *fr, const struct profile_info *info,
				    char *err, size_t errlen)
{
	int fd = memfd_create("cprof-answer", MFD_CLOEXEC);
	if (fd < 0) {
		snprintf(err, errlen, "memfd_create: %s", strerror(errno));
		return NULL;
	}
	if (write(fd, fr, info, err, errlen) < 0) {
		close(fd);
		return NULL;
	}
	off_t size = lseek(fd, 0, SEEK_END);
	struct MHD_Response *resp = size >= 0 ? MHD_create_response_from_fd((size_t)size, fd) : NULL;
	if (!resp) {
		snprintf(err, errlen, "out of memory");
		close(fd);
	}
	return resp;
}

/* ---- requests ---------------------------------------------------------------- */

static const char *arg(struct MHD_Connection *c, const char *key)
{
	return MHD_lookup_connection_value(c, MHD_GET_ARGUMENT_KIND, key);
}

/* A number of seconds, above 0 and at most MAX: 0 or -1 (ERR says). */
static int seconds_arg(const char *key, const char *v, double max, double *out, char *err,
		       size_t errlen)
{
	char *end;
	errno = 0;
	double d = strtod(v, &end);
	if (end == v || *end || errno || !(d > 0) || d > max || !isfinite(d)) {
		snprintf(err, errlen, "%s must be a number of seconds above 0 and at most %g, "
			 "not '%.40s'", key, max, v);
		return -1;
	}
	*out = d;
	return 0;
}

/* A time: unix seconds, or YYYY-MM-DDTHH:MM[:SS][Z] in UTC (what an HTML
 * datetime-local field sends, read as UTC). */
static int time_arg(const char *key, const char *v, uint64_t *out, char *err, size_t errlen)
{
	struct tm tm = { 0 };
	char *end;
	errno = 0;
	double d = strtod(v, &end);
	if (end != v && !*end && !errno && d > 0 && d < 1e11) {
		*out = (uint64_t)llround(d * 1e9);
		return 0;
	}
	const char *rest = strptime(v, "%Y-%m-%dT%H:%M", &tm);
	if (rest && *rest == ':')
		rest = strptime(rest, ":%S", &tm);
	if (rest && *rest == 'Z')
		rest++;
	if (!rest || *rest) {
		snprintf(err, errlen, "%s must be unix seconds or YYYY-MM-DDTHH:MM[:SS] (UTC), not "
			 "'%.40s'", key, v);
		return -1;
	}
	time_t t = timegm(&tm);
	*out = (uint64_t)t * 1000000000ull;
	return 0;
}

struct client {
	int fd;
};

static int client_gone(void *arg)
{
	struct client *cl = arg;
	struct pollfd p = { cl->fd, POLLRDHUP, 0 };
	return cl->fd >= 0 && poll(&p, 1, 0) > 0 && (p.revents & (POLLRDHUP | POLLHUP | POLLERR));
}

static uint64_t mono_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static uint64_t thread_cpu_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* While a profile is waited for and built, this connection's thread runs
 * at nice SERVE_NICE, below the sampler's thread and the loop that names;
 * after, at its own again where allowed (root, CAP_SYS_NICE), so that
 * closing the connection is not slowed: at nice 10 throughout, 8 clients
 * looping found their address's 8 connections still held 14 times a
 * second.  Returns the nice to go back to. */
static int nice_down(void)
{
	errno = 0;
	int old = getpriority(PRIO_PROCESS, 0);         /* this thread, on Linux */
	if (errno == 0 && old < SERVE_NICE)
		setpriority(PRIO_PROCESS, 0, SERVE_NICE);
	return errno == 0 ? old : SERVE_NICE;
}

static void nice_back(int old)
{
	if (old < SERVE_NICE)
		setpriority(PRIO_PROCESS, 0, old);      /* refused without the right: stays */
}

/* Under mu: the debt left now. */
static double debt_now(struct serve *s)
{
	uint64_t now = mono_ns();
	if (s->debt_at && now > s->debt_at)
		s->debt = fmax(0, s->debt - (double)(now - s->debt_at) * s->share);
	s->debt_at = now;
	return s->debt;
}

/* Waits until the answers' CPU budget allows one more: 0, or -EAGAIN
 * after SERVE_WAIT_S (*RETRY: the seconds it would take), or
 * -ECONNABORTED when the client left meanwhile. */
static int budget_wait(struct serve *s, struct client *cl, unsigned *retry, int *waited)
{
	uint64_t t0 = mono_ns();
	const double burst = SERVE_CPU_BURST_S * 1e9 * s->share;
	for (;;) {
		pthread_mutex_lock(&s->mu);
		double over = debt_now(s) - burst;
		pthread_mutex_unlock(&s->mu);
		if (over <= 0)
			return 0;
		double wait_ns = over / s->share;
		if ((double)(mono_ns() - t0) + wait_ns > SERVE_WAIT_S * 1e9) {
			*retry = (unsigned)ceil(wait_ns / 1e9);
			return -EAGAIN;
		}
		*waited = 1;
		struct timespec ts = { 0, (long)fmin(wait_ns, 1e8) + 1000 };
		nanosleep(&ts, NULL);
		if (client_gone(cl))
			return -ECONNABORTED;
	}
}

/* An answer built: its thread's CPU since CPU0 and its naming's (the
 * periods' loop's), counted and put in debt; its window's sampling pause
 * counted. */
static void budget_spend(struct serve *s, uint64_t cpu0, const struct periods_ask_cost *cost,
			 int waited)
{
	double cpu = (double)(thread_cpu_ns() - cpu0) + cost->name_cpu_ms * 1e6;
	pthread_mutex_lock(&s->mu);
	debt_now(s);
	s->debt += cpu;
	s->cpu_ns += cpu;
	s->paused_ns += cost->pause_ms * 1e6;
	s->waited += waited || cost->waited;
	pthread_mutex_unlock(&s->mu);
}

/* 503 with Retry-After: the budget is spent for RETRY seconds more. */
static enum MHD_Result busy(struct serve *s, struct MHD_Connection *c, enum route r, unsigned retry)
{
	pthread_mutex_lock(&s->mu);
	s->refused++;
	pthread_mutex_unlock(&s->mu);
	struct strbuf sb = { 0 };
	strbuf__addf(&sb, "the server's CPU budget for profiles (%.0f%% of a core) is spent: "
		     "sampling comes first; retry in %u s\n", 100 * s->share, retry);
	struct MHD_Response *resp = MHD_create_response_from_buffer(sb.len, sb.s,
								     MHD_RESPMEM_MUST_FREE);
	if (!resp) {
		strbuf__free(&sb);
		return MHD_NO;
	}
	char ra[16];
	snprintf(ra, sizeof(ra), "%u", retry ? retry : 1);
	MHD_add_response_header(resp, "Content-Type", "text/plain; charset=utf-8");
	MHD_add_response_header(resp, "Retry-After", ra);
	return answer(s, c, r, 503, resp);
}

/* A window asked of the periods, within the server's budgets. */
struct asked {
	struct frames *fr;
	struct profile_info info;
	struct periods_ask_cost cost;
	uint64_t cpu0;
	int waited, nice;
};

/* Asks the periods for ASK as route R: its turn waited for within the CPU
 * budget, at the server's lower priority.  Returns 1 with the answer
 * given (*RES: busy, the client gone, not sampling now); else 0 with A
 * filled, or periods__ask's error (-EBUSY, -ECANCELED, -ENODATA, -ENOMEM)
 * with the priority restored.  After a 0, asked_done(). */
static int ask_budgeted(struct serve *s, struct MHD_Connection *c, enum route r,
			const struct periods_ask *ask, struct asked *a, enum MHD_Result *res)
{
	const union MHD_ConnectionInfo *ci = MHD_get_connection_info(c,
								      MHD_CONNECTION_INFO_CONNECTION_FD);
	struct client cl = { ci ? ci->connect_fd : -1 };
	unsigned retry = 0;
	*a = (struct asked){ .nice = nice_down() };
	int e = budget_wait(s, &cl, &retry, &a->waited);
	if (e < 0)
		nice_back(a->nice);
	if (e == -EAGAIN) {
		*res = busy(s, c, r, retry);
		return 1;
	}
	if (e == -ECONNABORTED) {
		*res = MHD_NO;
		return 1;
	}
	a->cpu0 = thread_cpu_ns();
	struct periods *p = s->src.acquire(s->src.arg);
	if (!p) {
		nice_back(a->nice);
		*res = text(s, c, r, 503, "not sampling now (waiting for the process to sample)");
		return 1;
	}
	e = periods__ask(p, ask, client_gone, &cl, &a->fr, &a->info, &a->cost);
	s->src.release(s->src.arg, p);
	if (e < 0)
		nice_back(a->nice);
	if (e == -ECONNABORTED) {
		pthread_mutex_lock(&s->mu);
		s->gone++;
		pthread_mutex_unlock(&s->mu);
		*res = MHD_NO;          /* the client left: close, nothing to say */
		return 1;
	}
	return e < 0 ? e : 0;
}

/* The asked window's frames freed, its CPU counted, the priority back. */
static void asked_done(struct serve *s, struct asked *a)
{
	frames__free(a->fr);
	a->fr = NULL;
	budget_spend(s, a->cpu0, &a->cost, a->waited);
	nice_back(a->nice);
}

static enum MHD_Result profile(struct serve *s, struct MHD_Connection *c, enum route r)
{
	char err[512];
	struct periods_ask ask = { .kind = ASK_NEXT, .seconds = 30 };
	const char *sec = arg(c, "seconds"), *last = arg(c, "last"), *from = arg(c, "from"),
		   *to = arg(c, "to"), *fmt = arg(c, "format");
	enum out_format f = fmt ? output__format_served(fmt) : FORMAT_PPROF;
	if (f == FORMAT_AUTO) {
		char names[128];
		output__format_names(1, names, sizeof(names));
		return text(s, c, r, 400, "format must be %s, not '%.40s'", names, fmt);
	}
	if ((sec != NULL) + (last != NULL) + (from != NULL || to != NULL) > 1)
		return text(s, c, r, 400, "give one of seconds=N (the next N seconds), last=N (the "
			    "last N) or from=T&to=T");
	if (sec && seconds_arg("seconds", sec, SERVE_MAX_SECONDS, &ask.seconds, err, sizeof(err)) < 0)
		return text(s, c, r, 400, "%s", err);
	if (last) {
		ask.kind = ASK_PAST;
		if (seconds_arg("last", last, 86400, &ask.seconds, err, sizeof(err)) < 0)
			return text(s, c, r, 400, "%s", err);
	}
	if (from || to) {
		ask.kind = ASK_PAST;
		ask.seconds = 0;
		struct timespec now;
		clock_gettime(CLOCK_REALTIME, &now);
		ask.to_real = (uint64_t)now.tv_sec * 1000000000ull + (uint64_t)now.tv_nsec;
		if (!from || time_arg("from", from, &ask.from_real, err, sizeof(err)) < 0 ||
		    (to && time_arg("to", to, &ask.to_real, err, sizeof(err)) < 0))
			return text(s, c, r, 400, "%s", from ? err : "to=T needs from=T");
		if (ask.to_real <= ask.from_real)
			return text(s, c, r, 400, "from must come before to");
	}
	struct asked a;
	enum MHD_Result res;
	int e = ask_budgeted(s, c, r, &ask, &a, &res);
	if (e == 1)
		return res;
	if (e == -EBUSY)
		return text(s, c, r, 503, "too many profiles asked for at once (at most %d)",
			    PERIODS_ASKS);
	if (e == -ECANCELED)
		return text(s, c, r, 503, "sampling ended before the window did");
	if (e == -ENODATA)
		return text(s, c, r, 404, "the flight recorder holds no samples of that time "
			    "(--history keeps the last minutes)");
	if (e < 0)
		return text(s, c, r, 500, "out of memory");
	a.info.default_cpu = r == R_PROFILE;
	struct MHD_Response *resp = written(output_formats[f].write, a.fr, &a.info, err, sizeof(err));
	asked_done(s, &a);
	if (!resp)
		return text(s, c, r, 500, "%s", err);
	MHD_add_response_header(resp, "Content-Type", output_formats[f].content_type);
	if (f == FORMAT_PPROF)
		MHD_add_response_header(resp, "Content-Disposition", "attachment; filename=\"profile\"");
	return answer(s, c, r, 200, resp);
}

static int dump_text(int fd, const struct frames *fr, const struct profile_info *info, char *err,
		     size_t errlen)
{
	(void)info;
	FILE *f = fdopen(dup(fd), "w");
	int e = f ? dump__text(fr, f) : -errno;
	if (f && fclose(f) != 0 && !e)
		e = -EIO;
	if (e < 0)
		snprintf(err, errlen, "cannot write the dump: %s", strerror(-e));
	return e;
}

static enum MHD_Result goroutine(struct serve *s, struct MHD_Connection *c)
{
	const char *debug = arg(c, "debug");
	char err[512];
	struct periods_ask ask = { .kind = ASK_TICK };
	struct asked a;
	enum MHD_Result res;
	int e = ask_budgeted(s, c, R_GOROUTINE, &ask, &a, &res);
	if (e == 1)
		return res;
	if (e < 0)
		return text(s, c, R_GOROUTINE, 503, "%s", e == -EBUSY ? "too many asks at once" :
			    e == -ECANCELED ? "sampling ended" : "out of memory");
	int as_text = debug && strcmp(debug, "0") != 0;
	const struct output_format *pprof = &output_formats[FORMAT_PPROF];
	struct MHD_Response *resp = written(as_text ? dump_text : pprof->write, a.fr, &a.info, err,
					    sizeof(err));
	asked_done(s, &a);
	if (!resp)
		return text(s, c, R_GOROUTINE, 500, "%s", err);
	MHD_add_response_header(resp, "Content-Type", as_text ? "text/plain; charset=utf-8" :
				pprof->content_type);
	return answer(s, c, R_GOROUTINE, 200, resp);
}

static void utc(uint64_t ns, char *buf, size_t size, const char *fmt)
{
	time_t t = (time_t)(ns / 1000000000ull);
	struct tm tm;
	gmtime_r(&t, &tm);
	strftime(buf, size, fmt, &tm);
}

static enum MHD_Result index_page(struct serve *s, struct MHD_Connection *c)
{
	uint64_t from = 0, to = 0;
	struct periods *p = s->src.acquire(s->src.arg);
	if (p) {
		periods__kept(p, &from, &to);
		s->src.release(s->src.arg, p);
	}
	char a[32] = "", b[32] = "", av[32] = "", bv[32] = "";
	if (from) {
		utc(from, a, sizeof(a), "%Y-%m-%d %H:%M:%S");
		utc(to, b, sizeof(b), "%Y-%m-%d %H:%M:%S");
		utc(from + 60000000000ull > to ? from : to - 60000000000ull, av, sizeof(av),
		    "%Y-%m-%dT%H:%M");
		utc(to + 60000000000ull, bv, sizeof(bv), "%Y-%m-%dT%H:%M");
	}
	struct strbuf sb = { 0 };
	strbuf__addf(&sb,
		"<!DOCTYPE html>\n<html><head><meta charset=\"utf-8\"><title>cprof-attach: /debug/pprof/"
		"</title></head>\n<body>\n<h1>/debug/pprof/</h1>\n"
		"<p>Wall-clock profiles of the process cprof-attach samples: every thread (every "
		"goroutine of a Go program) at every tick, running or waiting.</p>\n<ul>\n"
		"<li><a href=\"/debug/fgprof?last=60&amp;format=svg\">Flame graph of the last minute</a></li>\n"
		"<li><a href=\"/debug/fgprof?seconds=10&amp;format=svg\">Flame graph of the next 10 seconds</a></li>\n"
		"<li><a href=\"/debug/fgprof?seconds=30\">/debug/fgprof?seconds=30</a>: the next 30 s, "
		"pprof (<code>go tool pprof http://HOST/debug/fgprof?seconds=30</code>); "
		"<code>format=folded</code> or <code>svg</code></li>\n"
		"<li><a href=\"/debug/pprof/profile?seconds=30\">/debug/pprof/profile?seconds=30</a>: "
		"the same, CPU time as the default sample type</li>\n"
		"<li><a href=\"/debug/fgprof?last=300\">/debug/fgprof?last=300</a>: the last 5 minutes "
		"from the flight recorder, at once</li>\n"
		"<li><a href=\"/debug/pprof/goroutine?debug=2\">/debug/pprof/goroutine?debug=2</a>: "
		"every thread's stack now, as <code>cprof-attach --dump</code> prints it (a tick of "
		"every thread made for the request)</li>\n"
		"<li><a href=\"/debug/pprof/goroutine\">/debug/pprof/goroutine</a>: the same stacks as "
		"a wall-clock pprof, one sample per thread (a Go program's: per goroutine, over the "
		"last ticks); not Go's goroutine-count profile</li>\n"
		"<li><a href=\"/metrics\">/metrics</a>: the profiler's own health (Prometheus)</li>\n"
		"</ul>\n");
	if (from)
		strbuf__addf(&sb,
			"<h2>The flight recorder</h2>\n<p id=\"kept\">It holds %s to %s UTC.</p>\n"
			"<form action=\"/debug/fgprof\" method=\"get\">\n"
			"<label>From (UTC) <input type=\"datetime-local\" step=\"1\" name=\"from\" value=\"%s\"></label>\n"
			"<label>to (UTC) <input type=\"datetime-local\" step=\"1\" name=\"to\" value=\"%s\"></label>\n"
			"<input type=\"hidden\" name=\"format\" value=\"svg\">\n"
			"<button type=\"submit\">Flame graph of that window</button>\n</form>\n",
			a, b, av, bv);
	else
		strbuf__addf(&sb, "<p id=\"kept\">The flight recorder holds nothing yet.</p>\n");
	strbuf__addf(&sb, "</body></html>\n");
	return answer_buffer(s, c, R_INDEX, 200, &sb, "text/html; charset=utf-8");
}

void serve__metrics(struct serve *s, struct strbuf *sb)
{
	strbuf__addf(sb, "# HELP cprof_http_requests_total HTTP requests answered, by path and code.\n"
		     "# TYPE cprof_http_requests_total counter\n");
	pthread_mutex_lock(&s->mu);
	for (size_t r = 0; r < NROUTES; r++)
		for (size_t c = 0; c < NCODES; c++)
			if (s->count[r][c] || (c == 0 && r != R_OTHER))
				strbuf__addf(sb, "cprof_http_requests_total{handler=\"%s\",code=\"%u\"} "
					     "%llu\n", route_name[r], codes[c],
					     (unsigned long long)s->count[r][c]);
	uint64_t gone = s->gone, waited = s->waited, refused = s->refused;
	double cpu = s->cpu_ns / 1e9, paused = s->paused_ns / 1e9;
	pthread_mutex_unlock(&s->mu);
	strbuf__addf(sb, "# HELP cprof_http_clients_gone_total Clients that left before their "
		     "profile was ready.\n# TYPE cprof_http_clients_gone_total counter\n"
		     "cprof_http_clients_gone_total %llu\n", (unsigned long long)gone);
	strbuf__addf(sb, "# HELP cprof_http_cpu_seconds_total CPU time the server's threads spent "
		     "building profiles (its budget: %g of a core).\n"
		     "# TYPE cprof_http_cpu_seconds_total counter\ncprof_http_cpu_seconds_total %.6f\n",
		     s->share, cpu);
	strbuf__addf(sb, "# HELP cprof_http_sampling_paused_seconds_total Time sampling was paused "
		     "to name the windows asked for (its budget: %g of the time).\n"
		     "# TYPE cprof_http_sampling_paused_seconds_total counter\n"
		     "cprof_http_sampling_paused_seconds_total %.6f\n", PERIODS_ASK_PAUSE_SHARE, paused);
	strbuf__addf(sb, "# HELP cprof_http_throttled_total Profiles asked for past a budget, by "
		     "result (waited: answered late; refused: 503 with Retry-After).\n"
		     "# TYPE cprof_http_throttled_total counter\n"
		     "cprof_http_throttled_total{result=\"waited\"} %llu\n"
		     "cprof_http_throttled_total{result=\"refused\"} %llu\n",
		     (unsigned long long)waited, (unsigned long long)refused);
}

static enum MHD_Result metrics(struct serve *s, struct MHD_Connection *c)
{
	struct strbuf sb = { 0 };
	s->src.metrics(s->src.arg, &sb);
	counted(s, R_METRICS, 200);     /* this one is counted in itself */
	serve__metrics(s, &sb);
	return answer_buffer(s, c, R_OTHER_UNCOUNTED, 200, &sb,
			     "text/plain; version=0.0.4; charset=utf-8");
}

/* Compares without telling by its time how much of the token matched. */
static int same_token(const char *given, const char *token)
{
	size_t a = strlen(given), b = strlen(token);
	unsigned char diff = a != b;
	for (size_t i = 0; i < b; i++)
		diff |= (unsigned char)(token[i] ^ (i < a ? given[i] : 0));
	return !diff;
}

static enum route route_of(const char *url)
{
	if (!strcmp(url, "/debug/fgprof"))
		return R_FGPROF;
	if (!strcmp(url, "/debug/pprof/profile"))
		return R_PROFILE;
	if (!strcmp(url, "/debug/pprof/goroutine"))
		return R_GOROUTINE;
	if (!strcmp(url, "/debug/pprof/") || !strcmp(url, "/debug/pprof") || !strcmp(url, "/"))
		return R_INDEX;
	if (!strcmp(url, "/metrics"))
		return R_METRICS;
	return R_OTHER;
}

static enum MHD_Result on_request(void *cls, struct MHD_Connection *c, const char *url,
				  const char *method, const char *version, const char *upload,
				  size_t *upload_size, void **state)
{
	struct serve *s = cls;
	static int first;
	(void)version;
	(void)upload;
	/* A request that is not a GET's, with a body longer than
	 * SERVE_BODY_MAX (or of no stated length), is refused before any of
	 * it is read (a POST of gigabytes was read whole first: 43 GB in 20 s)
	 * by closing its connection: libmicrohttpd sends no answer before a
	 * body is in.  A shorter one gets 405 below. */
	if (!*state && strcmp(method, "GET") && strcmp(method, "HEAD")) {
		const char *len = MHD_lookup_connection_value(c, MHD_HEADER_KIND, "Content-Length");
		if (MHD_lookup_connection_value(c, MHD_HEADER_KIND, "Transfer-Encoding") ||
		    (len && (strlen(len) > 9 || strtoul(len, NULL, 10) > SERVE_BODY_MAX)))
			return MHD_NO;
	}
	if (!*state) {                  /* headers only: the answer comes on the next call */
		*state = &first;
		/* This connection's thread (one a connection), named for
		 * top -H and the tests. */
		prctl(PR_SET_NAME, (unsigned long)"cprof-http", 0, 0, 0);
		return MHD_YES;
	}
	enum route r = route_of(url);
	if (*upload_size) {
		*upload_size = 0;       /* a short body is read and ignored, then refused */
		return MHD_YES;
	}
	if (strcmp(method, "GET") && strcmp(method, "HEAD")) {
		struct MHD_Response *resp = MHD_create_response_from_buffer(
			strlen("only GET\n"), (void *)"only GET\n", MHD_RESPMEM_PERSISTENT);
		if (resp)
			MHD_add_response_header(resp, "Allow", "GET, HEAD");
		return answer(s, c, r, 405, resp);
	}
	if (s->token) {
		const char *h = MHD_lookup_connection_value(c, MHD_HEADER_KIND, "Authorization");
		if (!h || strncasecmp(h, "Bearer ", 7) || !same_token(h + 7, s->token))
			return text(s, c, r, 401, "this server asks for a token: Authorization: "
				    "Bearer TOKEN");
	}
	switch (r) {
	case R_FGPROF:
	case R_PROFILE:
		return profile(s, c, r);
	case R_GOROUTINE:
		return goroutine(s, c);
	case R_INDEX:
		return index_page(s, c);
	case R_METRICS:
		return metrics(s, c);
	default:
		return text(s, c, R_OTHER, 404, "no such page: see /debug/pprof/");
	}
}

static void mhd_log(void *cls, const char *fmt, va_list ap)
{
	(void)cls;
	(void)fmt;
	(void)ap;                       /* its messages are about clients: not ours to print */
}

int serve__start(struct serve *s, const struct serve_source *src, char *err, size_t errlen)
{
	s->src = *src;
	/* The server's threads inherit this mask: SIGPIPE blocked there (a
	 * client that hangs up mid-answer), and nothing else changes for the
	 * process or a command it launches. */
	sigset_t pipe, old;
	sigemptyset(&pipe);
	sigaddset(&pipe, SIGPIPE);
	pthread_sigmask(SIG_BLOCK, &pipe, &old);
	s->d = MHD_start_daemon(MHD_USE_THREAD_PER_CONNECTION | MHD_USE_POLL_INTERNAL_THREAD |
				MHD_USE_ERROR_LOG, 0, NULL, NULL, on_request, s,
				MHD_OPTION_LISTEN_SOCKET, s->fd,
				MHD_OPTION_CONNECTION_LIMIT, (unsigned)SERVE_CONNECTIONS,
				MHD_OPTION_PER_IP_CONNECTION_LIMIT, (unsigned)SERVE_PER_IP,
				MHD_OPTION_CONNECTION_TIMEOUT, (unsigned)SERVE_IDLE_S,
				MHD_OPTION_CONNECTION_MEMORY_LIMIT, (size_t)32768,
				MHD_OPTION_EXTERNAL_LOGGER, mhd_log, NULL,
				MHD_OPTION_END);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (!s->d) {
		snprintf(err, errlen, "cannot start the HTTP server on %s", s->addr);
		return -EIO;
	}
	s->fd = -1;                     /* MHD's now */
	return 0;
}

void serve__free(struct serve *s)
{
	if (!s)
		return;
	if (s->d)
		MHD_stop_daemon(s->d);
	if (s->fd >= 0)
		close(s->fd);
	/* Only the socket this run made: a file put there since (the path
	 * reused, replaced) is the user's. */
	struct stat st;
	if (s->unix_path[0] && lstat(s->unix_path, &st) == 0 && S_ISSOCK(st.st_mode) &&
	    st.st_dev == s->unix_dev && st.st_ino == s->unix_ino)
		unlink(s->unix_path);
	free(s->token);
	pthread_mutex_destroy(&s->mu);
	free(s);
}
