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
 * slice: 24; each field aligned to its size, up to 8), and read again in
 * the runtime's machine code of a real binary of that version (the
 * binaries named below; tests/t_goversions.sh profiles them).  The head of
 * g is the same in every version since 1.4: stack {lo, hi} at 0,
 * stackguard0, stackguard1, _panic, _defer, m at 48, sched (a gobuf: sp,
 * pc, g, ctxt, ret, lr, bp) at 56.  Go 1.25 took gobuf.ret out: g.sched.bp
 * moved from 104 to 96 (runtime.gogo loads it from 0x30 of the gobuf up to
 * 1.24, from 0x28 since), and runtime.m (g0, morebuf a gobuf, divmod
 * uint32) has procid at 64, not 72 (runtime.minit stores gettid() there).
 * Go 1.19's were checked against its DWARF too (tests/t_goroutines.sh,
 * tests/bin/golayout).  At run time the code checks each table
 * (golayout__allgadd()'s atomicstatus, golayout__uses() on newproc1,
 * gopark, gogo and minit). */
struct version_offsets {
	int minor;
	uint16_t status, goid, reason, gopc, startpc, sched_bp, m_procid;
};

static const struct version_offsets versions[] = {
	/* go1.16 (esbuild 0.11.23's go1.16.3): as 1.17 but for the sched
	 * latency fields 1.17 added (tracking, trackingSeq, runnableStamp,
	 * runnableTime): after parkingOnChan (185), raceignore int8,
	 * sysblocktraced, sysexitticks (192), traceseq, tracelastp, lockedm,
	 * sig (224), writebuf (232), sigcode0, sigcode1, sigpc, gopc (280),
	 * ancestors, startpc (296).  newproc1 stores gopc at 0x118, startpc at
	 * 0x128, goid at 0x98; allgadd reads the status at 0x90. */
	{ 16, 144, 152, 176, 280, 296, 104, 72 },
	/* go1.17.13 runtime2.go: param unsafe.Pointer (136), atomicstatus
	 * uint32 (144), stackLock uint32, goid int64 (152), schedlink,
	 * waitsince int64, waitreason (176), 11 one-byte fields (preempt ..
	 * parkingOnChan uint8, raceignore int8, sysblocktraced, tracking,
	 * trackingSeq), runnableStamp, runnableTime, sysexitticks, traceseq,
	 * tracelastp, lockedm (192 .. 232), sig uint32 (240), writebuf []byte
	 * (248), sigcode0, sigcode1, sigpc, gopc (296), ancestors, startpc
	 * (312). */
	{ 17, 144, 152, 176, 296, 312, 104, 72 },
	/* go1.18 runtime2.go: the same fields as 1.17, of the same types. */
	{ 18, 144, 152, 176, 296, 312, 104, 72 },
	/* go1.19 (/usr/lib/go-1.19/src/runtime/runtime2.go; and its DWARF):
	 * as 1.17, parkingOnChan still a uint8. */
	{ 19, 144, 152, 176, 296, 312, 104, 72 },
	/* go1.20.6 runtime2.go: atomicstatus atomic.Uint32, goid uint64,
	 * parkingOnChan atomic.Bool, runnableStamp renamed trackingStamp:
	 * same sizes, same offsets. */
	{ 20, 144, 152, 176, 296, 312, 104, 72 },
	/* go1.21 (buf 1.28.1's go1.21.4; its runtime2.go was not at hand):
	 * its newproc1 stores parentGoid at 0x110, gopc at 0x118, startpc at
	 * 0x128 and goid at 0x98, allgadd reads the status at 0x90, gopark
	 * stores the reason at 0xb0: 1.22's offsets, in 1.22's instructions. */
	{ 21, 144, 152, 176, 280, 296, 104, 72 },
	/* go1.22.2 runtime2.go (read in a godoc rendering of that release's
	 * source): after parkingOnChan atomic.Bool (185), inMarkAssist and
	 * coroexit; raceignore, nocgocallback, tracking, trackingSeq (188 ..
	 * 191); trackingStamp, runnableTime, lockedm (192 .. 208), the
	 * tracer's sysblocktraced, sysexitticks, traceseq and tracelastp gone
	 * (now gTraceState, after labels); sig (216), writebuf (224),
	 * sigcode0, sigcode1, sigpc, parentGoid (272), gopc (280), ancestors,
	 * startpc (296).  runtime.m: divmod, _ uint32, procid at 72. */
	{ 22, 144, 152, 176, 280, 296, 104, 72 },
	/* go1.23 (esbuild 0.25.12's go1.23.12): syscallbp after syscallpc, so
	 * everything from param on is 8 further: atomicstatus 152 (allgadd's
	 * load), goid 160, waitreason 184 (gopark's store), parentGoid 280,
	 * gopc 288, startpc 304 (newproc1's stores). */
	{ 23, 152, 160, 184, 288, 304, 104, 72 },
	/* go1.24 (lefthook 1.11.10's go1.24.2): the same offsets as 1.23, in
	 * the same instructions (a one-byte fipsIndicator after lockedm fits
	 * in what sig's alignment left). */
	{ 24, 152, 160, 184, 288, 304, 104, 72 },
	/* go1.25 (esbuild 0.27.7's go1.25.7): gobuf without ret (48 bytes),
	 * so the syscallbp that 1.23 added is paid for: atomicstatus 144,
	 * goid 152, waitreason 176, parentGoid 272, gopc 280, startpc 296 as
	 * in 1.22; g.sched.bp 96 and m.procid 64. */
	{ 25, 144, 152, 176, 280, 296, 96, 64 },
	/* go1.26 (esbuild 0.28.2's go1.26.5; counted from its code only):
	 * 8 bytes more before parentGoid: newproc1 stores parentGoid (the
	 * creator's goid) at 0x118, gopc at 0x120, startpc at 0x130; status
	 * 0x90, goid 0x98, waitreason 0xb0, gogo's bp 0x28, minit's procid
	 * 0x40, as 1.25. */
	{ 26, 144, 152, 176, 288, 304, 96, 64 },
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
		const uint64_t g[GO_G_FIELDS] = { 0, 8, 48, 56, 64, v->sched_bp, v->status, v->goid,
						  v->reason, v->startpc, v->gopc };
		memcpy(l->g_off, g, sizeof(g));
		l->m_procid = v->m_procid;
		/* startpc, racectx, waiting, cgoCtxt ([]uintptr: 24), labels:
		 * 48 bytes after startpc (360 in 1.19; read for 1.19 only) */
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
	for (size_t i = 0; i + 3 <= len; i++) {
		unsigned char op = code[i], modrm = code[i + 1];
		size_t at = i + 2 + ((modrm & 7) == 4);         /* past a SIB byte */
		if (op != 0x88 && op != 0x89 && op != 0x8b && op != 0x8d)
			continue;
		if ((modrm & 0xc0) == 0x80 && at + 4 <= len && le(code + at, 4) == disp)
			return 1;
		/* an 8-bit displacement: offsets up to 127 (gobuf.bp, m.procid) */
		if ((modrm & 0xc0) == 0x40 && disp < 0x80 && at + 1 <= len && code[at] == disp)
			return 1;
	}
	return 0;
}

int golayout__buildversion(const unsigned char *code, size_t len, uint64_t addr, uint64_t *str)
{
	uint64_t cmp, store;
	for (size_t i = 0; i + 8 <= len; i++) {
		/* cmpq $0, buildVersion+8(%rip): 48 83 3d REL32 00 */
		if (code[i] != 0x48 || code[i + 1] != 0x83 || code[i + 2] != 0x3d || code[i + 7] != 0)
			continue;
		cmp = addr + i + 8 + (uint64_t)(int64_t)(int32_t)le(code + i + 3, 4);
		/* movq $7, buildVersion+8(%rip): 48 c7 05 REL32 07 00 00 00,
		 * among the next instructions ("unknown" is 7 bytes long) */
		for (size_t j = i + 8; j + 11 <= len && j < i + 8 + 32; j++) {
			if (code[j] != 0x48 || code[j + 1] != 0xc7 || code[j + 2] != 0x05 ||
			    le(code + j + 7, 4) != 7)
				continue;
			store = addr + j + 11 + (uint64_t)(int64_t)(int32_t)le(code + j + 3, 4);
			if (store == cmp && cmp >= 8) {
				*str = cmp - 8;
				return 0;
			}
		}
	}
	return -ENOENT;
}
