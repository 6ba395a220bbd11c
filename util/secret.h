/* secret: a command line as it may be shown.
 *
 * The command line goes into every profile (pprof's comment), the
 * summary, the pushed bodies; a secret given on it (--push
 * http://user:key@host, a ?token= in a URL) must not.  secret__shown()
 * returns a copy of one argument with every URL's credentials and every
 * query value whose name looks like a secret's replaced by "***": in
 * "http://user:key@host/p?app=x&token=abc", "user:key@" shows as
 * "user:***@" and "token=abc" as "token=***"; a lone "abc@" (a token
 * given as the user) as "***@".
 * A query name looks like a secret's if it holds (any case) key, token,
 * secret, pass, auth, sig, credential, session or cookie.  Credentials
 * that must not be typed at all go in files (--push-auth-file,
 * --push-header-file, --listen-token-file). */
#ifndef CPROF_UTIL_SECRET_H
#define CPROF_UTIL_SECRET_H

/* A copy (to free) of ARG with its secrets replaced, as above. */
char *secret__shown(const char *arg);

#endif
