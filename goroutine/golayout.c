#include "goroutine/golayout.h"

#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#define VERSION_MAX 64                  /* "go1.19.8": a version is short */

static const unsigned char magic[14] = "\xff Go buildinf:";

static uint64_t le(const unsigned char *p, unsigned n)
{
	uint64_t v = 0;
	for (unsigned i = n; i-- > 0;)
		v = v << 8 | p[i];
	return v;
}

static uint64_t be(const unsigned char *p, unsigned n)
{
	uint64_t v = 0;
	for (unsigned i = 0; i < n; i++)
		v = v << 8 | p[i];
	return v;
}

int golayout__string(const unsigned char *data, size_t len, char *ver, size_t verlen)
{
	if (len < 5 || len >= verlen || len >= VERSION_MAX || memcmp(data, "go1.", 4) != 0)
		return -EINVAL;
	for (size_t i = 0; i < len; i++)
		if (data[i] < 0x21 || data[i] > 0x7e)
			return -EINVAL;
	memcpy(ver, data, len);
	ver[len] = '\0';
	return 0;
}

int golayout__buildinfo(const unsigned char *sec, size_t len, char *ver, size_t verlen,
			uint64_t *straddr)
{
	if (len < 32 || memcmp(sec, magic, sizeof(magic)) != 0)
		return -EINVAL;
	unsigned ptrsize = sec[14], flags = sec[15];
	if (flags & 2) {
		/* Go 1.18+: a uvarint length, then the bytes. */
		uint64_t n = 0;
		size_t at = 32;
		for (unsigned shift = 0; at < len && shift < 35; shift += 7) {
			n |= (uint64_t)(sec[at] & 0x7f) << shift;
			if (!(sec[at++] & 0x80))
				return n <= len - at ? golayout__string(sec + at, (size_t)n, ver, verlen) :
				       -EINVAL;
		}
		return -EINVAL;
	}
	if (ptrsize != 4 && ptrsize != 8)
		return -EINVAL;
	*straddr = flags & 1 ? be(sec + 16, ptrsize) : le(sec + 16, ptrsize);
	return 1;
}

int golayout__minor(const char *ver)
{
	int minor = 0, digits = 0;
	if (strncmp(ver, "go1.", 4) != 0)
		return -1;
	for (const char *p = ver + 4; *p >= '0' && *p <= '9' && digits < 4; p++, digits++)
		minor = minor * 10 + (*p - '0');
	return digits ? minor : -1;
}

/* ---- the tables ----------------------------------------------------------
 * Offsets on amd64, from each release's src/runtime/runtime2.go, counted
 * field by field (pointers, uintptr, int64, uint64: 8; uint32,
 * atomic.Uint32: 4; bool, uint8, int8, waitReason, atomic.Bool: 1; a
 * slice: 24; each field aligned to its size, up to 8).  The head of g is
 * the same in every version since 1.4: stack {lo, hi} at 0, stackguard0,
 * stackguard1, _panic, _defer, m at 48, sched (gobuf: sp, pc, g, ctxt,
 * ret, lr, bp) at 56.  runtime.m starts g0, morebuf (a gobuf), divmod
 * uint32, so procid (uint64) is at 72.  Go 1.19's were checked against
 * its DWARF (tests/t_goroutines.sh, tests/bin/golayout); the others could
 * not be: this machine has one Go; the code checks (golayout__allgadd()'s
 * atomicstatus, golayout__uses()) guard them.  Go 1.16 (no sched latency
 * fields yet), 1.21 (parentGoid, inMarkAssist, the old tracer's fields)
 * and 1.23 on (syscallbp, ...) have no table: their runtime2.go was not at
 * hand to count, and a guessed offset would read the wrong field; such a
 * program is refused with a note. */
struct version_offsets {
	int minor;
	uint16_t status, goid, reason, gopc, startpc;
};

static const struct version_offsets versions[] = {
	/* go1.17.13 runtime2.go: param unsafe.Pointer (136), atomicstatus
	 * uint32 (144), stackLock uint32, goid int64 (152), schedlink,
	 * waitsince int64, waitreason (176), 11 one-byte fields (preempt ..
	 * parkingOnChan uint8, raceignore int8, sysblocktraced, tracking,
	 * trackingSeq), runnableStamp, runnableTime, sysexitticks, traceseq,
	 * tracelastp, lockedm (192 .. 232), sig uint32 (240), writebuf []byte
	 * (248), sigcode0, sigcode1, sigpc, gopc (296), ancestors, startpc
	 * (312). */
	{ 17, 144, 152, 176, 296, 312 },
	/* go1.18 runtime2.go: the same fields as 1.17, of the same types. */
	{ 18, 144, 152, 176, 296, 312 },
	/* go1.19 (/usr/lib/go-1.19/src/runtime/runtime2.go; and its DWARF):
	 * as 1.17, parkingOnChan still a uint8. */
	{ 19, 144, 152, 176, 296, 312 },
	/* go1.20.6 runtime2.go: atomicstatus atomic.Uint32, goid uint64,
	 * parkingOnChan atomic.Bool, runnableStamp renamed trackingStamp:
	 * same sizes, same offsets. */
	{ 20, 144, 152, 176, 296, 312 },
	/* go1.22.2 runtime2.go (read in a godoc rendering of that release's
	 * source): after parkingOnChan atomic.Bool (185), inMarkAssist and
	 * coroexit; raceignore, nocgocallback, tracking, trackingSeq (188 ..
	 * 191); trackingStamp, runnableTime, lockedm (192 .. 208), the
	 * tracer's sysblocktraced, sysexitticks, traceseq and tracelastp gone
	 * (now gTraceState, after labels); sig (216), writebuf (224),
	 * sigcode0, sigcode1, sigpc, parentGoid (272), gopc (280), ancestors,
	 * startpc (296).  runtime.m: divmod, _ uint32, procid at 72. */
	{ 22, 144, 152, 176, 280, 296 },
};

int golayout__label_sets(int minor)
{
	return minor == 19;
}

void golayout__known(char *buf, size_t len)
{
	size_t at = 0;
	buf[0] = '\0';
	for (size_t i = 0; i < sizeof(versions) / sizeof(versions[0]) && at < len; i++)
		at += (size_t)snprintf(buf + at, len - at, "%sgo1.%d", i ? ", " : "", versions[i].minor);
}

int golayout__table(int minor, struct go_layout *l)
{
	for (size_t i = 0; i < sizeof(versions) / sizeof(versions[0]); i++) {
		const struct version_offsets *v = &versions[i];
		if (v->minor != minor)
			continue;
		/* struct go_layout's g_off[] order (goroutines.h) */
		const uint64_t g[GO_G_FIELDS] = { 0, 8, 48, 56, 64, 104, v->status, v->goid,
						  v->reason, v->startpc, v->gopc };
		memcpy(l->g_off, g, sizeof(g));
		l->m_procid = 72;
		/* startpc, racectx, waiting, cgoCtxt ([]uintptr: 24), labels:
		 * 48 bytes after startpc (360 up to 1.20, 344 in 1.22) */
		l->g_labels = golayout__label_sets(minor) ? v->startpc + 48 : 0;
		return 0;
	}
	return -ENOENT;
}

/* ---- the runtime's code ----------------------------------------------------- */

/* A RIP-relative operand at CODE[I]: REX.W (0x48-0x4f), OPCODE, a ModRM
 * with mod 00 and r/m 101, a 32-bit displacement; the instruction ends
 * 7 bytes on.  Its target (ADDR: CODE's address) in *T. */
static bool riprel(const unsigned char *code, size_t len, size_t i, unsigned char opcode,
		   uint64_t addr, uint64_t *t)
{
	if (i + 7 > len || (code[i] & 0xf8) != 0x48 || code[i + 1] != opcode ||
	    (code[i + 2] & 0xc7) != 0x05)
		return false;
	*t = addr + i + 7 + (uint64_t)(int64_t)(int32_t)le(code + i + 3, 4);
	return true;
}

#define MAX_REFS 64
#define STATUS_WINDOW 64              /* bytes: 1.19 loads it at 0x18 */

int golayout__allgadd(const unsigned char *code, size_t len, uint64_t addr, uint64_t *allgs,
		      uint64_t *allglen, uint64_t *status)
{
	uint64_t refs[MAX_REFS], t;
	size_t at[MAX_REFS], n = 0;
	*status = UINT64_MAX;
	/* readgstatus(gp), its first lines: a load from the g it is given
	 * with a 32-bit displacement (atomicstatus is past 127 in every
	 * version), among its first instructions.  The byte before it is not
	 * looked at: it may be a REX prefix or the end of the instruction
	 * before (1.19's frame setup ends in 0x48). */
	for (size_t i = 0; i + 6 <= len && i < STATUS_WINDOW; i++) {
		unsigned char modrm = code[i + 1];
		uint64_t d = le(code + i + 2, 4);
		if (code[i] == 0x8b &&
		    (modrm & 0xc0) == 0x80 && (modrm & 7) != 4 && d >= 0x80 && d < 0x400 && d % 4 == 0) {
			*status = d;
			break;
		}
	}
	for (size_t i = 0; i < len && n < MAX_REFS; i++) {
		if (riprel(code, len, i, 0x8b, addr, &t) || riprel(code, len, i, 0x89, addr, &t)) {
			refs[n] = t;
			at[n++] = i;
		}
	}
	/* allgs: the first word loaded or stored whose next two words are
	 * too (a slice: pointer, length, capacity). */
	bool found = false;
	for (size_t i = 0; i < n && !found; i++) {
		bool len_seen = false, cap_seen = false;
		for (size_t j = 0; j < n; j++) {
			len_seen |= refs[j] == refs[i] + 8;
			cap_seen |= refs[j] == refs[i] + 16;
		}
		if (len_seen && cap_seen) {
			*allgs = refs[i];
			found = true;
		}
	}
	if (!found)
		return -ENOENT;
	/* allglen: atomic.Storeuintptr(&allglen, len(allgs)), a load of the
	 * length, a lea of allglen, an xchg of the two. */
	*allglen = *allgs + 8;
	for (size_t k = 0; k < n; k++) {
		size_t i = at[k] + 7;
		if (refs[k] == *allgs + 8 && code[at[k] + 1] == 0x8b &&
		    riprel(code, len, i, 0x8d, addr, &t) && i + 9 <= len &&
		    (code[i + 7] & 0xf8) == 0x48 && code[i + 8] == 0x87) {
			*allglen = t;
			break;
		}
	}
	return 0;
}

int golayout__reasons(const unsigned char *code, size_t len, uint64_t addr, uint64_t *table,
		      uint64_t *n)
{
	uint64_t t;
	bool found = false;
	*n = 0;
	/* The bound: cmp $N, %al (3c N), or with a 32-bit register (83 /7
	 * ib), before the strings are read. */
	for (size_t i = 0; i + 2 <= len && !*n; i++) {
		if (code[i] == 0x3c)
			*n = code[i + 1];
		else if (code[i] == 0x83 && (code[i + 1] & 0xf8) == 0xf8 && i + 3 <= len)
			*n = code[i + 2];
	}
	for (size_t i = 0; i < len; i++) {
		if (riprel(code, len, i, 0x8d, addr, &t)) {
			*table = t;
			found = true;
		}
	}
	return found && *n ? 0 : -ENOENT;
}

int golayout__uses(const unsigned char *code, size_t len, uint32_t disp)
{
	for (size_t i = 0; i + 6 <= len; i++) {
		unsigned char op = code[i], modrm = code[i + 1];
		size_t at = i + 2 + ((modrm & 7) == 4);         /* past a SIB byte */
		if ((op == 0x88 || op == 0x89 || op == 0x8b || op == 0x8d) && (modrm & 0xc0) == 0x80 &&
		    at + 4 <= len && le(code + at, 4) == disp)
			return 1;
	}
	return 0;
}
