/* Fuzz target: the goroutine reader (goroutine/goroutines.c, goroutine/
 * curg.c), which reads a running Go program's memory: runtime.allgs and
 * allglen, each runtime.g (status, waitreason, g.sched, stack bounds),
 * m.procid, the waitReason strings, and (curg) the g behind a thread's
 * system stack, found through its TLS, its M and m.curg.
 *
 * A Go program controls all of that memory, and its DWARF (where the
 * fields are).  This harness links in place of util/remote.c (fuzz.mk:
 * FUZZ_OWN_goroutines) a remote__read() and remote__readv() that read a
 * fake process memory made from the input, so that anything a lying or
 * racing runtime could show is within reach: allglen past the cap,
 * allgs pointing at itself, g records overlapping or repeated, garbage
 * status and stack bounds, memory that changes from one scan, or one
 * read, to the next.
 *
 * Input layout (little-endian):
 *   byte 0      flags: bits 0-1 scans - 1 (1 to 4 scans, one reader);
 *               bit 2 "torn": the memory's epoch is the count of reads
 *               so far, not the scan's number, so that it changes between
 *               any two reads; bit 3 "gone": from read number (byte 1)
 *               on, every read fails with ESRCH (the process has exited)
 *   byte 1      with "gone", how many reads succeed first
 *   bytes 2-3   the offset of g.labels (struct go_layout's g_labels;
 *               0: labels not read); each record's set is read as a
 *               pprof label map (goroutines__labels)
 *   bytes 4-7   ignored
 *   12 words    the layout (struct go_layout): the offsets in runtime.g
 *               of stack.lo, stack.hi, m, sched.sp, sched.pc, sched.bp,
 *               atomicstatus, goid, waitreason, startpc, gopc; of procid
 *               in runtime.m
 *   4 words     the addresses of runtime.allgs, runtime.allglen and
 *               runtime.waitReasonStrings; how many strings it holds
 *   2 words     for curg: the address of runtime.systemstack's code (its
 *               first 160 bytes go to gocurg__layout()) and a thread's FS
 *               base (gocurg__read())
 *   segments    to the end of the input, each:
 *                 word base, u32 size, u16 n, u8 when, u8 step, n bytes:
 *               memory [base, base + size) holds the n bytes over and
 *               over (zeros when n is 0); with a step and n >= 8, the
 *               first word of the K-th repetition has K * step * 8 added
 *               (distinct g pointers, many goroutines, from a few bytes);
 *               when bit E is set, or when is 0, the segment is there in
 *               epoch E (mod 8).  A later segment hides an earlier one
 *               where they overlap; where none is, memory cannot be read.
 * FUZZ_GOROUTINES_SEEDS=DIR writes seeds (see write_seeds()).
 *
 * What must hold, besides no crash, no sanitizer report, no hang and
 * bounded memory: a scan lists at most GOROUTINES_MAX goroutines, and
 * fails only when allgs, allglen or the g pointers cannot be read or the
 * list is past the cap; a record read (with at most READ_BUDGET of them,
 * none carried) is what goroutines__read() reads at its g in the same
 * epoch; in a list of at most LISTED, every distinct g whose record can
 * be read is read once, no other, and the duplicates are counted;
 * waitReason strings are printable and short; a goroutine found behind a
 * system stack has its saved SP inside its stack. */
#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/uio.h>

#include "goroutine/curg.h"
#include "goroutine/goroutines.h"
#include "util/remote.h"

#define FAKE_PID 4242                   /* reads never reach a process */
#define HEADER (8 + 18 * 8)
#define SEG_HEADER 16
#define MAX_SEGS 64
#define MAX_SCANS 4
#define FLAG_TORN 4
#define FLAG_GONE 8
#define CODE_LEN 160                    /* what sample/rt_go.c reads of systemstack */
#define READ_BUDGET 4096                /* goroutines.c's: none carried at most this many */
#define CHECKED 1024                    /* records looked at closely per scan */
#define UIO_MAX 1024                    /* the kernel's UIO_MAXIOV */
#define TILE 8192                       /* bytes of a short pattern copied at once */
#define MIN_ADDR 0x10000                /* vm.mmap_min_addr's default */
#define LISTED 64                       /* lists this short are checked g by g */

struct seg {
	uint64_t base, size;
	uint8_t when;
	uint64_t step;
	const uint8_t *pat;
	size_t n;
};

static struct go_layout lay;
static struct seg segs[MAX_SEGS];
static const struct seg *tiled;         /* whose pattern fill()'s tile holds */
static size_t nsegs;
static bool torn;
static unsigned epoch;
static unsigned long reads, gone_at;    /* gone_at: 0, or reads from then on fail */

static uint64_t word_at(const uint8_t *p)
{
	uint64_t v;
	memcpy(&v, p, 8);
	return v;
}

/* ---- the fake memory ------------------------------------------------------ */

/* The fake memory's own branches are no coverage of the reader's: left
 * out, libFuzzer keeps no input for them, and they cost nothing per byte. */
#ifdef __clang__
#define NO_COVERAGE __attribute__((no_sanitize("coverage")))
#else
#define NO_COVERAGE
#endif

NO_COVERAGE static bool present(const struct seg *s)
{
	return s->when == 0 || (s->when >> (epoch % 8) & 1);
}

/* LEN bytes of segment S from OFF on into OUT. */
NO_COVERAGE static void fill(const struct seg *s, uint64_t off, uint8_t *out, size_t len)
{
	if (s->n == 0) {
		memset(out, 0, len);
		return;
	}
	/* A short pattern is copied from a tile of it, so that filling
	 * hundreds of megabytes (a list at the cap) is not a copy a byte;
	 * not with a step, whose every repetition differs. */
	static uint8_t tile[TILE];
	bool stepped = s->step && s->n >= 8;
	size_t per = s->n < TILE / 8 && !stepped ? TILE / s->n * s->n : s->n;
	const uint8_t *src = s->pat;
	if (per != s->n) {
		if (tiled != s) {
			for (size_t i = 0; i < per; i += s->n)
				memcpy(tile + i, s->pat, s->n);
			tiled = s;
		}
		src = tile;
	}
	while (len) {
		uint64_t k = off / s->n, o = off % s->n;
		size_t take = per - o < len ? per - o : len;
		memcpy(out, src + o, take);
		if (stepped && o < 8) {
			uint64_t w = word_at(s->pat) + k * s->step;
			uint8_t wb[8];
			memcpy(wb, &w, 8);
			memcpy(out, wb + o, 8 - o < take ? 8 - o : take);
		}
		out += take;
		off += take;
		len -= take;
	}
}

/* Copies memory at [ADDR, ADDR + LEN) into BUF up to the first byte that
 * no segment holds; returns the bytes copied. */
NO_COVERAGE static size_t copy_mem(uint64_t addr, uint8_t *buf, size_t len)
{
	size_t done = 0;
	while (done < len) {
		uint64_t p = addr + done;
		if (p < addr || p < MIN_ADDR)
			break;                          /* past the top of memory, or below
						   what a process can map */
		uint64_t limit = len - done;
		const struct seg *top = NULL;
		for (size_t i = nsegs; i-- > 0;) {
			const struct seg *s = &segs[i];
			if (!present(s))
				continue;
			if (p >= s->base && p - s->base < s->size) {
				top = s;
				break;
			}
			if (s->base > p && s->base - p < limit)
				limit = s->base - p;    /* a segment above it begins there */
		}
		if (!top)
			break;
		if (top->size - (p - top->base) < limit)
			limit = top->size - (p - top->base);
		fill(top, p - top->base, buf + done, (size_t)limit);
		done += (size_t)limit;
	}
	return done;
}

/* One more read: false when the process has gone. */
static bool tick(void)
{
	reads++;
	if (torn)
		epoch = (unsigned)reads;
	return !gone_at || reads < gone_at;
}

int remote__read(pid_t pid, uint64_t addr, void *buf, size_t len)
{
	if (pid != FAKE_PID || !tick())
		return -ESRCH;
	return copy_mem(addr, buf, len) == len ? 0 : -EFAULT;
}

long remote__readv(pid_t pid, const struct iovec *local, const struct iovec *remote, size_t n)
{
	if (pid != FAKE_PID)
		return -ESRCH;
	if (n > UIO_MAX) {
		fprintf(stderr, "remote__readv: %zu ranges, more than the kernel takes\n", n);
		abort();
	}
	if (!tick())
		return -ESRCH;
	size_t total = 0;
	for (size_t i = 0; i < n; i++) {
		if (local[i].iov_len != remote[i].iov_len) {
			fprintf(stderr, "remote__readv: range %zu: %zu bytes into %zu\n", i,
				remote[i].iov_len, local[i].iov_len);
			abort();
		}
		size_t got = copy_mem((uint64_t)(uintptr_t)remote[i].iov_base, local[i].iov_base,
				      remote[i].iov_len);
		total += got;
		if (got < remote[i].iov_len)
			break;
	}
	return total == 0 && n && remote[0].iov_len ? -EFAULT : (long)total;
}

/* ---- the checks --------------------------------------------------------- */

static void fail(const char *what, uint64_t a, uint64_t b)
{
	fprintf(stderr, "fuzz_goroutines: %s (%#llx, %#llx)\n", what, (unsigned long long)a,
		(unsigned long long)b);
	abort();
}

static void check_reason(const struct goroutines *gs, uint8_t reason)
{
	const char *s = goroutines__reason(gs, reason);
	if (!s)
		return;
	size_t len = strlen(s);
	if (len == 0 || len > 48)
		fail("a waitReason string of this length", reason, len);
	for (size_t i = 0; i < len; i++)
		if (s[i] < 0x20 || s[i] > 0x7e)
			fail("a control byte in a waitReason string", reason, (uint8_t)s[i]);
}

/* A label set's text: at most GOROUTINE_LABELS_MAX "KEY=VALUE" lines,
 * printable, each with its '=' and at most 64 bytes a side. */
static void check_labels(struct goroutines *gs, uint64_t set)
{
	const char *s = goroutines__labels(gs, set);
	size_t lines = 0;
	for (const char *line = s; line; lines++) {
		const char *nl = strchr(line, '\n'), *end = nl ? nl : line + strlen(line);
		const char *eq = memchr(line, '=', (size_t)(end - line));
		if (!eq || eq - line > 64 || end - eq - 1 > 64)
			fail("a label line without its '=', or too long", set, (uint64_t)(end - line));
		for (const char *c = line; c < end; c++)
			if (*c < 0x20 || *c > 0x7e)
				fail("a control byte in a label", set, (uint8_t)*c);
		line = nl ? nl + 1 : NULL;
	}
	if (lines > GOROUTINE_LABELS_MAX)
		fail("more label lines than GOROUTINE_LABELS_MAX", set, lines);
}

static bool same_key(const struct go_rec *a, const struct go_rec *b)
{
	return a->g == b->g && a->goid == b->goid && a->status == b->status &&
	       a->reason == b->reason && a->pc == b->pc && a->sp == b->sp && a->bp == b->bp &&
	       a->lo == b->lo && a->hi == b->hi && a->m == b->m && a->labels == b->labels;
}

/* One scan's records.  EXACT: memory did not change during the scan and
 * no record was carried, so each record read is as at its g now. */
static void check_recs(struct goroutines *gs, const struct go_rec *recs, size_t n, bool exact)
{
	for (size_t i = 0; i < n && i < CHECKED; i++) {
		const struct go_rec *r = &recs[i];
		if (!r->read)
			continue;
		if (r->g == 0 || r->g % 8)
			fail("a record read at a g that is no pointer", i, r->g);
		if (r->status & 0x1000)
			fail("a status with the _Gscan bit", i, r->status);
		check_reason(gs, r->reason);
		pid_t tid = goroutines__m_tid(gs, r->m);
		if (tid < 0)
			fail("a negative TID for an M", r->m, (uint64_t)tid);
		goroutines__is_system(gs, r);
		goroutines__func_name(gs, r->startpc);
		check_labels(gs, r->labels);
		struct go_rec again;
		if (!exact || goroutines__read(gs, r->g, &again) != 0)
			continue;
		if (!same_key(r, &again) || (!r->unchanged && (r->startpc != again.startpc ||
							       r->gopc != again.gopc)))
			fail("a record read in a scan is not what its g holds", i, r->g);
	}
}

static bool verbose;

/* With FUZZ_GOROUTINES_VERBOSE set: what a scan saw, on stderr. */
static void report(int s, int e, const struct go_rec *recs, size_t n, const struct goroutines *gs)
{
	size_t nread = 0, same = 0;
	for (size_t i = 0; i < n; i++) {
		nread += recs[i].read;
		same += recs[i].read && recs[i].unchanged;
	}
	fprintf(stderr, "scan %d: %d, %zu listed, %zu read (%zu unchanged), %llu duplicates, "
		"%llu carried\n", s, e, n, nread, same, (unsigned long long)goroutines__duplicates(gs),
		(unsigned long long)goroutines__carried(gs));
	for (size_t i = 0; i < n && i < 8; i++)
		if (!recs[i].read)
			fprintf(stderr, "  [%zu] not read\n", i);
		else
			fprintf(stderr, "  [%zu] g %#llx goid %lld status %u reason %u sp %#llx [%#llx, %#llx) labels %#llx\n",
				i, (unsigned long long)recs[i].g, (long long)recs[i].goid,
				recs[i].status, recs[i].reason, (unsigned long long)recs[i].sp,
				(unsigned long long)recs[i].lo, (unsigned long long)recs[i].hi,
				(unsigned long long)recs[i].labels);
}

static int by_value(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
	return (x > y) - (x < y);
}

/* Whether the memory holds N bytes at ADDR (in this epoch), into BUF. */
static bool readable(uint64_t addr, void *buf, size_t n)
{
	return copy_mem(addr, buf, n) == n;
}

/* What a scan that returned E should have found, from the memory as it
 * is (the scan's epoch, not torn): whether the list could be read at all,
 * and, for a short list, each g: every distinct pointer (not 0, aligned)
 * whose record can be read is read once, the others not, and the
 * duplicates are counted. */
static void check_list(const struct goroutines *gs, int e, const struct go_rec *recs, size_t n)
{
	uint64_t slice[2], len;
	if (!readable(lay.allgs, slice, sizeof(slice)) || !readable(lay.allglen, &len, 8)) {
		if (e >= 0)
			fail("a scan read a list it could not read", lay.allgs, lay.allglen);
		return;
	}
	len = len < slice[1] ? len : slice[1];
	if (len > GOROUTINES_MAX) {
		if (e != -EINVAL)
			fail("a list past the cap not refused", len, (uint64_t)e);
		return;
	}
	if (len > READ_BUDGET)
		return;
	static uint64_t gptrs[READ_BUDGET], sorted[READ_BUDGET];
	if (len && !readable(slice[0], gptrs, len * 8)) {
		if (e >= 0)
			fail("a scan read g pointers it could not read", slice[0], len);
		return;
	}
	if (e < 0 || n != len)
		fail("a list that could be read was not", (uint64_t)-e, n);
	for (size_t i = 0; i < n; i++)
		if (recs[i].read && !recs[i].unchanged && recs[i].g != gptrs[i])
			fail("a record read for another g than its entry's", recs[i].g, gptrs[i]);
	if (len > LISTED)
		return;
	uint64_t lo = UINT64_MAX, hi = 0;
	for (int f = 0; f < GO_G_FIELDS; f++) {
		lo = lay.g_off[f] < lo ? lay.g_off[f] : lo;
		hi = lay.g_off[f] + 8 > hi ? lay.g_off[f] + 8 : hi;
	}
	memcpy(sorted, gptrs, len * 8);
	qsort(sorted, len, 8, by_value);
	uint64_t dups = 0;
	for (size_t i = 0; i < len; i++) {
		uint64_t g = sorted[i];
		if (g == 0 || g % 8 || (i && sorted[i - 1] == g))
			continue;
		size_t times = 0, nread = 0;
		for (size_t k = 0; k < len; k++) {
			times += gptrs[k] == g;
			nread += gptrs[k] == g && recs[k].read;
		}
		dups += times - 1;
		uint8_t rec[512];
		bool can = hi - lo <= sizeof(rec) && readable(g + lo, rec, hi - lo);
		if (nread != (can ? 1u : 0u))
			fail(can ? "a g that could be read was not read once" :
				   "a g that could not be read was read", g, nread);
	}
	if (goroutines__duplicates(gs) != dups)
		fail("duplicates miscounted", goroutines__duplicates(gs), dups);
}

static void scans(struct goroutines *gs, int nscans)
{
	for (int s = 0; s < nscans; s++) {
		if (!torn)
			epoch = (unsigned)s;
		const struct go_rec *recs = NULL;
		size_t n = 0;
		int e = goroutines__scan(gs, &recs, &n);
		if (verbose)
			report(s, e, recs, n, gs);
		if (e == -ESRCH && (!gone_at || reads < gone_at))
			fail("ESRCH from a process still there", reads, gone_at);
		if (!torn && !gone_at)
			check_list(gs, e, recs, n);
		if (e < 0) {
			if (n != 0)
				fail("a failed scan with records", (uint64_t)-e, n);
			continue;
		}
		if (e != 0 || n > GOROUTINES_MAX || n != goroutines__listed(gs))
			fail("a scan's length", n, goroutines__listed(gs));
		if (goroutines__duplicates(gs) > n || goroutines__carried(gs) > n)
			fail("more duplicates or carried records than records",
			     goroutines__duplicates(gs), goroutines__carried(gs));
		check_recs(gs, recs, n, !torn && n <= READ_BUDGET);
	}
}

/* The thread whose FS base is FS_BASE, on its system stack: the goroutine
 * it works for, with the layout read from the code at CODE. */
static void curg(uint64_t code, uint64_t fs_base)
{
	uint8_t text[CODE_LEN];
	size_t len = copy_mem(code, text, sizeof(text));
	struct gocurg l;
	if (gocurg__layout(text, len, &l) != 0)
		return;
	if (gocurg__g_len(&l) > 256)
		fail("gocurg__g_len() past what gocurg__read() holds", gocurg__g_len(&l), 256);
	struct go_rec r = { 0 };
	int e = gocurg__read(FAKE_PID, &l, fs_base, &r);
	if (verbose)
		fprintf(stderr, "curg: %d, g %#llx sp %#llx\n", e, (unsigned long long)r.g,
			(unsigned long long)r.sp);
	if (e != 0)
		return;
	if (r.g == 0 || r.g % 8 || r.lo >= r.hi || r.sp < r.lo || r.sp >= r.hi || r.pc == 0)
		fail("gocurg__read() gave a goroutine that does not hold together", r.g, r.sp);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size < HEADER)
		return 0;
	struct go_layout l;
	const uint8_t *h = data + 8;
	memset(&lay, 0, sizeof(lay));
	for (int i = 0; i < GO_G_FIELDS; i++)
		l.g_off[i] = word_at(h + 8 * i);
	l.m_procid = word_at(h + 88);
	l.allgs = word_at(h + 96);
	l.allglen = word_at(h + 104);
	l.reasons = word_at(h + 112);
	l.nreasons = word_at(h + 120);
	l.g_labels = (uint64_t)data[2] | (uint64_t)data[3] << 8;
	uint64_t code = word_at(h + 128), fs_base = word_at(h + 136);
	nsegs = 0;
	tiled = NULL;
	for (size_t at = HEADER; at + SEG_HEADER <= size && nsegs < MAX_SEGS;) {
		struct seg *s = &segs[nsegs++];
		const uint8_t *p = data + at;
		s->base = word_at(p);
		s->size = (uint64_t)p[8] | (uint64_t)p[9] << 8 | (uint64_t)p[10] << 16 |
			  (uint64_t)p[11] << 24;
		s->n = (size_t)(p[12] | p[13] << 8);
		s->when = p[14];
		s->step = (uint64_t)p[15] * 8;
		at += SEG_HEADER;
		if (s->n > size - at)
			s->n = size - at;
		s->pat = data + at;
		at += s->n;
	}
	torn = data[0] & FLAG_TORN;
	gone_at = data[0] & FLAG_GONE ? (unsigned long)data[1] + 1 : 0;
	reads = 0;
	epoch = 0;

	char note[128];
	lay = l;
	struct goroutines *gs = goroutines__from_layout(FAKE_PID, &l, note, sizeof(note));
	if (verbose && !gs)
		fprintf(stderr, "no reader: %s\n", note);
	if (gs) {
		for (int i = 0; i < 256; i++)
			check_reason(gs, (uint8_t)i);
		scans(gs, (data[0] & 3) + 1);
	}
	goroutines__free(gs);
	epoch = 0;
	curg(code, fs_base);
	return 0;
}

/* ---- seeds ------------------------------------------------------------------- */

/* Go 1.19's runtime.g and runtime.m on amd64 (tests/bin/goroutines' DWARF). */
static const uint64_t go119_g[GO_G_FIELDS] = { 0, 8, 48, 56, 64, 104, 144, 152, 176, 312, 296 };
#define GO119_PROCID 72
#define G_SIZE 0x1a0                    /* past startpc */

/* runtime.systemstack's first bytes as Go 1.19 writes them (tests/unit):
 * TLS g at -8, g.m at 0x30, m.curg at 0xc0, g.sched at 0x38. */
static const uint8_t systemstack[] = {
	0x48, 0x8b, 0x7c, 0x24, 0x08, 0x64, 0x48, 0x8b, 0x04, 0x25, 0xf8, 0xff, 0xff, 0xff,
	0x48, 0x8b, 0x58, 0x30, 0x48, 0x3b, 0x43, 0x50, 0x74, 0x5b, 0x48, 0x8b, 0x13, 0x48,
	0x39, 0xd0, 0x74, 0x53, 0x48, 0x3b, 0x83, 0xc0, 0x00, 0x00, 0x00, 0x75, 0x52, 0xe8,
	0xd2, 0xf1, 0xff, 0xff, 0x64, 0x48, 0x89, 0x14, 0x25, 0xf8, 0xff, 0xff, 0xff, 0x49,
	0x89, 0xd6, 0x48, 0x8b, 0x5a, 0x38,
};

/* Where the seeds put things: Go's heap is at 0xc000000000, its data in
 * the first megabytes. */
#define A_ALLGS   0x5a0000ull           /* slice: ptr, len, cap */
#define A_ALLGLEN 0x5a0100ull
#define A_REASONS 0x5a0200ull
#define A_RTEXT   0x5a1000ull
#define A_CODE    0x460000ull
#define A_ARRAY   0xc800000000ull
#define A_G       0xc000020000ull
#define A_M       0xc100030000ull
#define A_FS      0x7f0000001000ull
#define A_G0      0xc100040000ull
#define A_LSET    0xc000400000ull       /* a pprof label set: a labelMap, */
#define A_HMAP    0xc000400100ull       /* its hmap, */
#define A_BKT     0xc000400200ull       /* its bucket, */
#define A_LTEXT   0xc000400400ull       /* its strings */

struct seed {
	uint8_t b[1 << 16];
	size_t len;
};

static void put(struct seed *s, const void *p, size_t n)
{
	if (s->len + n > sizeof(s->b))
		abort();
	if (n)
		memcpy(s->b + s->len, p, n);
	s->len += n;
}

static void put64(struct seed *s, uint64_t v)
{
	put(s, &v, 8);
}

static void header(struct seed *s, uint8_t flags, uint64_t nreasons)
{
	uint8_t f[8] = { flags };
	s->len = 0;
	put(s, f, 8);
	for (int i = 0; i < GO_G_FIELDS; i++)
		put64(s, go119_g[i]);
	put64(s, GO119_PROCID);
	put64(s, A_ALLGS);
	put64(s, A_ALLGLEN);
	put64(s, A_REASONS);
	put64(s, nreasons);
	put64(s, A_CODE);
	put64(s, A_FS);
}

/* STEP: in bytes, a multiple of 8. */
static void segment(struct seed *s, uint64_t base, uint32_t size, uint8_t when, unsigned step,
		    const void *pat, uint16_t n)
{
	put64(s, base);
	put(s, &size, 4);
	uint8_t b[4] = { (uint8_t)n, (uint8_t)(n >> 8), when, (uint8_t)(step / 8) };
	put(s, b, 4);
	put(s, pat, n);
}

static void seg_words(struct seed *s, uint64_t base, uint8_t when, const uint64_t *w, size_t n)
{
	segment(s, base, (uint32_t)(n * 8), when, 0, w, (uint16_t)(n * 8));
}

/* Goroutine records alike, SIZE bytes of them from AT on: one every G_SIZE
 * bytes. */
static void seg_g(struct seed *s, uint64_t at, uint32_t size, uint8_t when, uint64_t lo,
		  uint64_t hi, uint64_t m, uint64_t sp, uint64_t pc, uint32_t status, int64_t goid,
		  uint8_t reason)
{
	uint8_t g[G_SIZE] = { 0 };
	uint64_t startpc = 0x401000 + (uint64_t)goid * 0x40, gopc = 0x402000;
	memcpy(g + go119_g[0], &lo, 8);
	memcpy(g + go119_g[1], &hi, 8);
	memcpy(g + go119_g[2], &m, 8);
	memcpy(g + go119_g[3], &sp, 8);
	memcpy(g + go119_g[4], &pc, 8);
	uint64_t bp = sp + 0x40;
	memcpy(g + go119_g[5], &bp, 8);
	memcpy(g + go119_g[6], &status, 4);
	memcpy(g + go119_g[7], &goid, 8);
	g[go119_g[8]] = reason;
	memcpy(g + go119_g[9], &startpc, 8);
	memcpy(g + go119_g[10], &gopc, 8);
	segment(s, at, size, when, 0, g, G_SIZE);
}

/* The runtime's data: waitReason strings, an M with its thread's id, and
 * a thread on its system stack working for the goroutine at CURG. */
static void runtime_data(struct seed *s, uint64_t curg)
{
	static const char text[] = "chan receivesleepsync.Mutex.Lock\033]0;title\a";
	uint64_t reasons[] = { 0, 0, A_RTEXT, 12, A_RTEXT + 12, 5, A_RTEXT + 17, 15, A_RTEXT + 32, 12 };
	seg_words(s, A_REASONS, 0, reasons, 10);
	segment(s, A_RTEXT, sizeof(text) - 1, 0, 0, text, sizeof(text) - 1);
	segment(s, A_CODE, sizeof(systemstack), 0, 0, systemstack, sizeof(systemstack));
	uint64_t m[26] = { [0] = A_G0, [GO119_PROCID / 8] = 4321, [0xc0 / 8] = curg };
	seg_words(s, A_M, 0, m, 26);
	seg_words(s, A_FS - 8, 0, (uint64_t[]){ A_G0 }, 1);
	uint64_t g0[8] = { 0xc000100000, 0xc000108000, 0, 0, 0, 0, A_M };
	seg_words(s, A_G0, 0, g0, 8);
}

static void slice(struct seed *s, uint8_t when, uint64_t ptr, uint64_t len, uint64_t allglen)
{
	seg_words(s, A_ALLGS, when, (uint64_t[]){ ptr, len, len }, 3);
	seg_words(s, A_ALLGLEN, when, (uint64_t[]){ allglen }, 1);
}

/* Three goroutines: main waiting on a channel, one running on M, one
 * dead; their stacks 8 KiB each. */
static void three(struct seed *s, uint8_t when)
{
	for (int i = 0; i < 3; i++) {
		uint64_t lo = 0xc000100000 + (uint64_t)i * 0x10000, hi = lo + 0x2000;
		uint32_t status = i == 0 ? 4 : i == 1 ? 2 : 6;
		seg_g(s, A_G + (uint64_t)i * G_SIZE, G_SIZE, when, lo, hi, i == 1 ? A_M : 0, hi - 0x100,
		      0x430000 + (uint64_t)i, status, i + 1, i == 0 ? 1 : 0);
	}
}

static void write_seed(const char *dir, const char *name, const struct seed *s)
{
	char path[4096];
	snprintf(path, sizeof(path), "%s/seed-%s", dir, name);
	FILE *f = fopen(path, "wb");
	if (!f) {
		perror(path);
		return;
	}
	fwrite(s->b, 1, s->len, f);
	fclose(f);
}

static void write_seeds(const char *dir)
{
	static struct seed s;
	uint64_t ptrs[3] = { A_G, A_G + G_SIZE, A_G + 2 * G_SIZE };

	/* A valid small allgs: 3 goroutines, a thread behind its system stack. */
	header(&s, 1, 5);
	slice(&s, 0, A_ARRAY, 3, 3);
	seg_words(&s, A_ARRAY, 0, ptrs, 3);
	three(&s, 0);
	runtime_data(&s, A_G + G_SIZE);
	write_seed(dir, "three", &s);

	/* The same, main's g with a pprof label set (Go 1.19: g.labels at
	 * 360, a labelMap, an hmap of 2 pairs in one bucket). */
	s.b[2] = 360 & 0xff;
	s.b[3] = 360 >> 8;
	seg_words(&s, A_G + 360, 0, (uint64_t[]){ A_LSET }, 1);
	seg_words(&s, A_LSET, 0, (uint64_t[]){ A_HMAP }, 1);
	seg_words(&s, A_HMAP, 0, (uint64_t[]){ 2, 0x1234ull << 32, A_BKT, 0, 0, 0 }, 6);
	uint64_t bucket[34] = { [0] = 0x0907, [1] = A_LTEXT, [2] = 4, [3] = A_LTEXT + 4, [4] = 4,
				[17] = A_LTEXT + 8, [18] = 7, [19] = A_LTEXT + 15, [20] = 1 };
	seg_words(&s, A_BKT, 0, bucket, 34);
	segment(&s, A_LTEXT, 16, 0, 0, "roletiersleeper2", 16);
	write_seed(dir, "labels", &s);
	s.b[2] = s.b[3] = 0;

	/* The same, but the process exits while it is read: from the 9th
	 * read on (in the first scan: the waitReason table, 4 strings, the
	 * slice, allglen, the pointers and the records) every read fails. */
	s.b[0] = 3 | FLAG_GONE;
	s.b[1] = 8;
	write_seed(dir, "gone", &s);

	/* The same 3 repeated 4,000 times (a runtime that lies), allglen
	 * shorter than the slice. */
	header(&s, 1, 5);
	slice(&s, 0, A_ARRAY, 12000, 11999);
	segment(&s, A_ARRAY, 12000 * 8, 0, 0, ptrs, 24);
	three(&s, 0);
	runtime_data(&s, A_G);
	write_seed(dir, "repeats", &s);

	/* allglen at the cap, then past it: 1,048,576 entries, each g a
	 * different one (all alike, waiting). */
	header(&s, 1, 5);
	slice(&s, 1, A_ARRAY, GOROUTINES_MAX, GOROUTINES_MAX);
	slice(&s, 2, A_ARRAY, GOROUTINES_MAX + 1, GOROUTINES_MAX + 1);
	segment(&s, A_ARRAY, (GOROUTINES_MAX + 1) * 8, 0, G_SIZE, (uint64_t[]){ A_G }, 8);
	seg_g(&s, A_G, GOROUTINES_MAX * G_SIZE, 0, 0xc000100000, 0xc000102000, 0, 0xc000101f00,
	      0x430000, 4, 7, 2);
	write_seed(dir, "cap", &s);

	/* 5,000 goroutines waiting, read in turn (more than a scan's budget),
	 * over 4 scans; one of them wakes in the third. */
	header(&s, 3, 5);
	slice(&s, 0, A_ARRAY, 5000, 5000);
	segment(&s, A_ARRAY, 5000 * 8, 0, G_SIZE, (uint64_t[]){ A_G }, 8);
	seg_g(&s, A_G, 5000 * G_SIZE, 0, 0xc000100000, 0xc000102000, 0, 0xc000101f80, 0x430000, 4,
	      9, 3);
	seg_g(&s, A_G + 100 * G_SIZE, G_SIZE, 4, 0xc000100000, 0xc000102000, A_M, 0xc000101000,
	      0x431000, 2, 101, 0);
	runtime_data(&s, A_G);
	write_seed(dir, "budget", &s);

	/* A layout whose fields are all one word (a span of 8 bytes) and 2,000
	 * g's 1 KiB apart: each its own range, more ranges than one system
	 * call takes (IOV_BATCH). */
	header(&s, 0, 0);
	memset(s.b + 8, 0, GO_G_FIELDS * 8);
	slice(&s, 0, A_ARRAY, 2000, 2000);
	segment(&s, A_ARRAY, 2000 * 8, 0, 1024, (uint64_t[]){ A_G }, 8);
	segment(&s, A_G, 2000 * 1024, 0, 0, (uint64_t[]){ 0xc000100000 }, 8);
	write_seed(dir, "runs", &s);

	/* allgs pointing at itself: the slice's own words as g pointers, and
	 * the g records overlapping allgs and each other. */
	header(&s, 1, 5);
	segment(&s, A_ALLGS, 0x1000, 0, 0, NULL, 0);
	slice(&s, 0, A_ALLGS, 41, 41);
	runtime_data(&s, A_ALLGS);
	write_seed(dir, "self", &s);

	/* allglen that flips and records that change between the 4 scans:
	 * even epochs list 3, odd ones 2; g 1 goes from running to waiting
	 * and its stack moves (epochs 2, 3, 6, 7). */
	header(&s, 3, 5);
	slice(&s, 0x55, A_ARRAY, 3, 3);
	slice(&s, 0xaa, A_ARRAY, 3, 2);
	seg_words(&s, A_ARRAY, 0, ptrs, 3);
	three(&s, 0);
	seg_g(&s, A_G + G_SIZE, G_SIZE, 0xcc, 0xc000200000, 0xc000204000, 0, 0xc000203f00, 0x431000,
	      4, 2, 2);
	runtime_data(&s, A_G + G_SIZE);
	write_seed(dir, "flips", &s);

	/* The same, torn: the memory changes between any two reads. */
	s.b[0] |= FLAG_TORN;
	write_seed(dir, "torn", &s);

	/* Garbage: a status with the scan bit and unknown ones, stacks
	 * inverted and huge, a waitreason past the table, pointers zero,
	 * misaligned, unmapped, at the top of memory, and repeated. */
	header(&s, 1, 300);
	uint64_t junk[10] = { A_G, 0, A_G + 4, 0xdead0000, ptrs[1], ptrs[2], UINT64_MAX - 7,
			      UINT64_MAX - 0x100 + 8, A_G, ptrs[1] };
	slice(&s, 0, A_ARRAY, 10, 10);
	seg_words(&s, A_ARRAY, 0, junk, 10);
	seg_g(&s, A_G, G_SIZE, 0, 0xc000102000, 0xc000100000, 0, 0xc000101000, 0, 0x1004, 1, 255);
	seg_g(&s, ptrs[1], G_SIZE, 0, 0, UINT64_MAX, A_M, UINT64_MAX - 8, 0x430000, 0xffffffff, -1, 200);
	seg_g(&s, ptrs[2], G_SIZE, 0, 0xc000100000, 0xc000100000, 0xdead, 0xc000100000, 0, 77,
	      INT64_MAX, 40);
	segment(&s, UINT64_MAX - 0x1000 + 1, 0x1000, 0, 0, junk, 80);
	runtime_data(&s, ptrs[2]);
	write_seed(dir, "garbage", &s);
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	verbose = getenv("FUZZ_GOROUTINES_VERBOSE") != NULL;
	const char *dir = getenv("FUZZ_GOROUTINES_SEEDS");
	if (dir)
		write_seeds(dir);
	return 0;
}
