#include "util/secret.h"

#include <stdbool.h>
#include <string.h>
#include <strings.h>

#include "util/strbuf.h"
#include "util/xalloc.h"

#define HIDDEN "***"

static bool secret_name(const char *k, size_t n)
{
	static const char *const words[] = { "key", "token", "secret", "pass", "auth", "sig",
					     "credential", "session", "cookie" };
	for (size_t w = 0; w < sizeof(words) / sizeof(words[0]); w++) {
		size_t l = strlen(words[w]);
		for (size_t i = 0; i + l <= n; i++)
			if (!strncasecmp(k + i, words[w], l))
				return true;
	}
	return false;
}

/* Appends the URL part of S from just past "://" (N bytes up to the end
 * of the argument), its secrets hidden. */
static void url_rest(struct strbuf *sb, const char *s, size_t n)
{
	size_t auth = strcspn(s, "/?#");
	if (auth > n)
		auth = n;
	const char *at = NULL;
	for (size_t i = 0; i < auth; i++)
		if (s[i] == '@')
			at = s + i;
	if (at) {
		const char *colon = memchr(s, ':', (size_t)(at - s));
		if (colon)
			strbuf__addf(sb, "%.*s:" HIDDEN, (int)(colon - s), s);
		else
			strbuf__addf(sb, HIDDEN);
		strbuf__addf(sb, "%.*s", (int)(s + auth - at), at);
	} else {
		strbuf__addf(sb, "%.*s", (int)auth, s);
	}
	size_t i = auth;
	size_t path = i + strcspn(s + i, "?#");
	if (path > n)
		path = n;
	strbuf__addf(sb, "%.*s", (int)(path - i), s + i);
	i = path;
	if (i < n && s[i] == '?') {
		strbuf__addf(sb, "?");
		i++;
		while (i < n && s[i] != '#') {
			size_t end = i + strcspn(s + i, "&#");
			if (end > n)
				end = n;
			const char *eq = memchr(s + i, '=', end - i);
			if (eq && secret_name(s + i, (size_t)(eq - (s + i))))
				strbuf__addf(sb, "%.*s=" HIDDEN, (int)(eq - (s + i)), s + i);
			else
				strbuf__addf(sb, "%.*s", (int)(end - i), s + i);
			i = end;
			if (i < n && s[i] == '&') {
				strbuf__addf(sb, "&");
				i++;
			}
		}
	}
	strbuf__addf(sb, "%.*s", (int)(n - i), s + i);
}

char *secret__shown(const char *arg)
{
	struct strbuf sb = { 0 };
	strbuf__addf(&sb, "%s", "");
	const char *s = arg, *u;
	while ((u = strstr(s, "://"))) {
		strbuf__addf(&sb, "%.*s://", (int)(u - s), s);
		u += 3;
		/* the URL goes on to the next space (an argument holds one,
		 * most often) */
		size_t n = strcspn(u, " \t\n");
		url_rest(&sb, u, n);
		s = u + n;
	}
	strbuf__addf(&sb, "%s", s);
	return sb.s;
}
