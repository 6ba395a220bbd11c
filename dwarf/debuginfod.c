#include "dwarf/debuginfod.h"

#include <errno.h>
#include <fcntl.h>
#include <netdb.h>
#include <poll.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>


#define DEFAULT_TIMEOUT_S 10

static double deadline_s = DEFAULT_TIMEOUT_S;  /* the run's budget */
static double spent_s;
static unsigned requests;
static char server[160];                /* the first URL, for the note */

void debuginfod__set_deadline(double seconds)
{
	if (seconds > 0)
		deadline_s = seconds;
}

int debuginfod__active(void)
{
	const char *urls = getenv("DEBUGINFOD_URLS");
	return urls && urls[strspn(urls, " \t")];
}

void debuginfod__spent(double seconds)
{
	if (!debuginfod__active())
		return;
	spent_s += seconds;
	requests++;
	if (spent_s < deadline_s)
		return;
	fprintf(stderr, "cprof-attach: note: debuginfod (%s): %u %s took %.1f s in all, the run's "
		"budget (--debuginfod-deadline %g): the other modules are named without it\n",
		server[0] ? server : "?", requests, requests == 1 ? "lookup" : "lookups", spent_s,
		deadline_s);
	/* Emptied, not unset: this runs on the namer's thread, beside others
	 * that read the environment (curl's proxies, the time zone).  glibc's
	 * unsetenv() moves the later entries down one, under a getenv() that
	 * may then miss one of them; a variable set anew has its one entry
	 * replaced, the old string kept.  libdebuginfod asks no server for
	 * an empty list, as for none. */
	setenv("DEBUGINFOD_URLS", "", 1);
}

/* Connects to one address within TIMEOUT_MS; 0 or a negative errno. */
static int try_connect(const struct addrinfo *ai, int timeout_ms)
{
	int fd = socket(ai->ai_family, ai->ai_socktype | SOCK_NONBLOCK | SOCK_CLOEXEC,
			ai->ai_protocol);
	int e = 0;
	if (fd < 0)
		return -errno;
	if (connect(fd, ai->ai_addr, ai->ai_addrlen) < 0) {
		e = -errno;
		if (e == -EINPROGRESS) {
			struct pollfd p = { .fd = fd, .events = POLLOUT };
			int r = poll(&p, 1, timeout_ms);
			socklen_t len = sizeof(e);
			if (r == 0)
				e = -ETIMEDOUT;
			else if (r < 0)
				e = -errno;
			else if (getsockopt(fd, SOL_SOCKET, SO_ERROR, &e, &len) == 0)
				e = -e;
		}
	}
	close(fd);
	return e;
}

/* Splits "http://HOST[:PORT]/..." (HOST may be "[v6]").  False for other
 * schemes, which are not probed. */
static bool host_port(const char *url, size_t len, char *host, size_t hostlen,
		      char *port, size_t portlen)
{
	const char *def;
	size_t skip;
	if (len > 7 && strncmp(url, "http://", 7) == 0)
		def = "80", skip = 7;
	else if (len > 8 && strncmp(url, "https://", 8) == 0)
		def = "443", skip = 8;
	else
		return false;
	const char *h = url + skip, *end = url + len;
	const char *stop = h;
	while (stop < end && *stop != '/')
		stop++;
	const char *colon = NULL, *hend = stop;
	if (*h == '[') {
		const char *rb = memchr(h, ']', (size_t)(stop - h));
		if (!rb)
			return false;
		h++;
		hend = rb;
		if (rb + 1 < stop && rb[1] == ':')
			colon = rb + 1;
	} else {
		colon = memchr(h, ':', (size_t)(stop - h));
		if (colon)
			hend = colon;
	}
	size_t hl = (size_t)(hend - h), pl = colon ? (size_t)(stop - colon - 1) : strlen(def);
	if (hl == 0 || hl >= hostlen || pl == 0 || pl >= portlen)
		return false;
	memcpy(host, h, hl);
	host[hl] = '\0';
	memcpy(port, colon ? colon + 1 : def, pl);
	port[pl] = '\0';
	return true;
}

/* 0 if the server of URL accepts a connection, else a negative errno
 * (or EAI_* as -EHOSTUNREACH).  1 when URL is not one we probe. */
static int probe(const char *url, size_t len, int timeout_ms)
{
	char host[256], port[16];
	struct addrinfo hints = { .ai_socktype = SOCK_STREAM }, *res = NULL;
	if (!host_port(url, len, host, sizeof(host), port, sizeof(port)))
		return 1;
	if (getaddrinfo(host, port, &hints, &res) != 0)
		return -EHOSTUNREACH;
	int e = -EHOSTUNREACH;
	for (struct addrinfo *ai = res; ai && e != 0; ai = ai->ai_next)
		e = try_connect(ai, timeout_ms);
	freeaddrinfo(res);
	return e;
}

static bool proxy_configured(void)
{
	static const char *const vars[] = { "http_proxy", "https_proxy", "all_proxy",
					    "HTTPS_PROXY", "ALL_PROXY" };
	for (size_t i = 0; i < sizeof(vars) / sizeof(vars[0]); i++) {
		const char *v = getenv(vars[i]);
		if (v && *v)
			return true;
	}
	return false;
}

void debuginfod__prepare(void)
{
	static bool done;
	const char *urls = getenv("DEBUGINFOD_URLS");
	if (done)
		return;
	done = true;
	if (!urls || !urls[strspn(urls, " \t")])
		return;
	{
		size_t n = strcspn(urls + strspn(urls, " \t"), " \t");
		snprintf(server, sizeof(server), "%.*s", (int)(n < 120 ? n : 120), urls + strspn(urls, " \t"));
	}
	const char *t = getenv("DEBUGINFOD_TIMEOUT");
	int budget = deadline_s < 1 ? 1 : (int)deadline_s;
	int timeout_s = t && atoi(t) > 0 ? atoi(t) : (budget < DEFAULT_TIMEOUT_S ? budget : DEFAULT_TIMEOUT_S);
	char num[32];
	snprintf(num, sizeof(num), "%d", timeout_s);
	if (!t || !*t)
		setenv("DEBUGINFOD_TIMEOUT", num, 0);
	snprintf(num, sizeof(num), "%d", budget);
	setenv("DEBUGINFOD_MAXTIME", num, 0);  /* a request that trickles stops too */
	if (proxy_configured())
		return;
	/* DEBUGINFOD_URLS is a space-separated list. */
	char first[160] = "";
	int err = 0;
	for (const char *p = urls; *p;) {
		p += strspn(p, " \t");
		size_t n = strcspn(p, " \t");
		if (n == 0)
			break;
		int e = probe(p, n, timeout_s * 1000);
		if (e >= 0)
			return;         /* one answers (or cannot be probed) */
		if (!first[0]) {
			snprintf(first, sizeof(first), "%.*s", (int)(n < 120 ? n : 120), p);
			err = -e;
		}
		p += n;
	}
	fprintf(stderr, "cprof-attach: note: no debuginfod server answers (%s: %s); "
		"names without the debug files it would have sent\n", first, strerror(err));
	unsetenv("DEBUGINFOD_URLS");
}
