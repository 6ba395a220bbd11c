/* bench/bigfolded: a large folded profile for timing --convert.
 *
 *   cc -O2 -o bigfolded bench/bigfolded.c && ./bigfolded 1000000 > big.folded
 *   /usr/bin/time -v ./cprof-attach --convert big.folded -o big.svg
 *
 * Prints N unique folded stacks ("root;...;leaf COUNT"), the same for the
 * same N and SEED: 8 thread roots, 3000 function names (C++-like, some
 * with ".part.0", ".cold" or "(int)" suffixes, so that names are prefixes
 * of others), depths 10 to 40.  Stacks share prefixes as real ones do:
 * each new stack keeps a random part of a recent one and grows from there,
 * with callees chosen mostly among a few per caller.  Counts are 1 to 50,
 * most of them small. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define NFUNCS 3000
#define NROOTS 8
#define RECENT 4096
#define MIN_DEPTH 10
#define MAX_DEPTH 40

static uint64_t state = 0x9e3779b97f4a7c15ull;

static uint64_t rnd(void)               /* xorshift64* */
{
	state ^= state >> 12;
	state ^= state << 25;
	state ^= state >> 27;
	return state * 0x2545f4914f6cdd1dull;
}

static unsigned below(unsigned n)
{
	return (unsigned)(rnd() % n);
}

static char funcs[NFUNCS][96];
static const char *const roots[NROOTS] = {
	"server (4101)", "server-io (4102)", "worker-1 (4103)", "worker-2 (4104)",
	"worker-3 (4105)", "worker-4 (4106)", "flusher (4107)", "timer (4108)",
};

static void make_names(void)
{
	static const char *const parts[] = {
		"read", "write", "parse", "buffer", "cache", "index", "query", "plan", "exec",
		"hash", "table", "lock", "wait", "alloc", "free", "node", "tree", "page",
		"stream", "codec", "frame", "send", "recv", "event", "loop", "task",
	};
	static const char *const suffix[] = { "", "", "", "", "", ".part.0", ".cold", "(int)",
					      "(char const*)", ".isra.0" };
	size_t np = sizeof(parts) / sizeof(parts[0]), ns = sizeof(suffix) / sizeof(suffix[0]);
	for (unsigned i = 0; i < NFUNCS; i++) {
		if (i % 7 == 0)         /* C functions */
			snprintf(funcs[i], sizeof(funcs[i]), "%s_%s_%u", parts[below(np)],
				 parts[below(np)], i);
		else
			snprintf(funcs[i], sizeof(funcs[i]), "ns%u::%s%s::%s_%s%s", i % 13,
				 parts[below(np)], parts[below(np)], parts[below(np)],
				 parts[below(np)], suffix[below(ns)]);
	}
}

/* A callee of CALLER: mostly one of its 6 usual callees, sometimes any. */
static unsigned callee(unsigned caller)
{
	if (below(8) == 0)
		return below(NFUNCS);
	return (unsigned)((caller * 2654435761u + below(6) * 40503u) % NFUNCS);
}

/* A set of 64-bit line hashes, to keep every line unique. */
static uint64_t *seen;
static size_t seen_mask;

static int add_seen(uint64_t h)
{
	h |= 1;
	for (size_t i = h & seen_mask;; i = (i + 1) & seen_mask) {
		if (seen[i] == h)
			return 0;
		if (!seen[i]) {
			seen[i] = h;
			return 1;
		}
	}
}

static uint64_t hash_stack(const unsigned *s, unsigned n)
{
	uint64_t h = 0xcbf29ce484222325ull;
	for (unsigned i = 0; i < n; i++)
		h = (h ^ s[i]) * 0x100000001b3ull;
	return h ^ (h >> 29);
}

int main(int argc, char **argv)
{
	if (argc < 2) {
		fprintf(stderr, "usage: bigfolded N [SEED] > FILE\n");
		return 2;
	}
	unsigned long n = strtoul(argv[1], NULL, 10);
	if (argc > 2)
		state ^= strtoull(argv[2], NULL, 10) * 0x9e3779b97f4a7c15ull;
	make_names();
	size_t slots = 1;
	while (slots < n * 2 + 16)
		slots *= 2;
	seen = calloc(slots, sizeof(*seen));
	static unsigned recent[RECENT][MAX_DEPTH], recent_n[RECENT];
	unsigned nrecent = 0, s[MAX_DEPTH];
	if (!seen)
		return 1;
	seen_mask = slots - 1;
	for (unsigned long made = 0; made < n;) {
		unsigned depth = MIN_DEPTH + below(MAX_DEPTH - MIN_DEPTH + 1), keep = 1;
		if (nrecent && below(16) != 0) {        /* grow from a recent stack */
			unsigned r = below(nrecent < RECENT ? nrecent : RECENT);
			keep = 1 + below(recent_n[r] - 1);
			memcpy(s, recent[r], keep * sizeof(*s));
			if (depth <= keep)
				depth = keep + 1;
		} else {                                /* a new root: thread, main */
			s[0] = NFUNCS + below(NROOTS);
		}
		for (unsigned i = keep; i < depth; i++)
			s[i] = callee(s[i - 1] >= NFUNCS ? s[i - 1] - NFUNCS : s[i - 1]);
		if (!add_seen(hash_stack(s, depth)))
			continue;
		memcpy(recent[nrecent % RECENT], s, depth * sizeof(*s));
		recent_n[nrecent++ % RECENT] = depth;
		for (unsigned i = 0; i < depth; i++)
			fputs(s[i] >= NFUNCS ? roots[s[i] - NFUNCS] : funcs[s[i]], stdout),
				putchar(i + 1 < depth ? ';' : ' ');
		uint64_t u = rnd() >> 11;
		double x = (double)u / 9007199254740992.0;
		printf("%u\n", 1 + (unsigned)(x * x * x * 50));
		made++;
	}
	free(seen);
	return 0;
}
