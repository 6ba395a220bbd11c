/* pattern: the file names of a run's profiles (run/pattern.h). */
#include "run/pattern.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "util/xalloc.h"

int pattern__is(const char *pattern)
{
	for (const char *c = pattern; (c = strchr(c, '%')); c += 2) {
		if (c[1] == 't' || c[1] == 'n')
			return 1;
		if (!c[1])
			break;
	}
	return 0;
}

int pattern__expand(const char *pattern, pid_t pid, uint64_t seq, uint64_t start_ns, char *buf,
		    size_t size, char *err, size_t errlen)
{
	size_t o = 0;
	for (const char *c = pattern; *c; c++) {
		char piece[64];
		const char *add = piece;
		if (*c != '%') {
			piece[0] = *c;
			piece[1] = '\0';
		} else if (c[1] == '%') {
			add = "%";
			c++;
		} else if (c[1] == 'p') {
			snprintf(piece, sizeof(piece), "%d", (int)pid);
			c++;
		} else if (c[1] == 't') {
			time_t t = (time_t)(start_ns / 1000000000ull);
			struct tm tm;
			gmtime_r(&t, &tm);
			strftime(piece, sizeof(piece), "%Y%m%d-%H%M%S", &tm);
			c++;
		} else if (c[1] == 'n' && c[2] == '{') {
			char *end;
			errno = 0;
			unsigned long long max = strtoull(c + 3, &end, 10);
			if (end == c + 3 || *end != '}' || max == 0 || errno || c[3] == '-' || c[3] == '+') {
				snprintf(err, errlen, "-o %s: %%n{MAX} needs a whole number above 0 "
					 "between the braces", pattern);
				return -EINVAL;
			}
			snprintf(piece, sizeof(piece), "%llu", (unsigned long long)(seq % max));
			c = end;
		} else if (c[1] == 'n') {
			snprintf(piece, sizeof(piece), "%llu", (unsigned long long)seq);
			c++;
		} else {
			snprintf(err, errlen, "-o %s: unknown pattern '%%%s' (%%p, %%t, %%n, "
				 "%%n{MAX} and %%%% are known)", pattern, c[1] ? (char[]){ c[1], 0 } : "");
			return -EINVAL;
		}
		size_t len = strlen(add);
		if (o + len + 1 > size) {
			snprintf(err, errlen, "-o %s: the file name is too long", pattern);
			return -ENAMETOOLONG;
		}
		memcpy(buf + o, add, len);
		o += len;
	}
	buf[o] = '\0';
	return 0;
}

char *pattern__dump(const char *pattern)
{
	const char *base = strrchr(pattern, '/');
	size_t at = base ? (size_t)(base - pattern) + 1 : 0;
	size_t n = strlen(pattern);
	char *d = xmalloc(n + 6);
	memcpy(d, pattern, at);
	memcpy(d + at, "dump-", 5);
	memcpy(d + at + 5, pattern + at, n - at + 1);
	return d;
}
