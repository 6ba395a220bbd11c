#include "goroutine/curg.h"

#include <errno.h>
#include <string.h>

#include "util/remote.h"

/* Finds the instruction bytes PAT (MASK: the bits that must match) in
 * CODE and returns where it starts, or -1. */
static long find(const unsigned char *code, size_t len, const unsigned char *pat,
		 const unsigned char *mask, size_t n)
{
	for (size_t i = 0; i + n <= len; i++) {
		size_t k = 0;
		while (k < n && (code[i + k] & mask[k]) == pat[k])
			k++;
		if (k == n)
			return (long)i;
	}
	return -1;
}

static int32_t le32(const unsigned char *p)
{
	return (int32_t)((uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 |
			 (uint32_t)p[3] << 24);
}

/* runtime.systemstack starts (Go 1.17+, amd64):
 *     mov %fs:TLS_G, %rax        64 48 8b 04 25 <TLS_G>
 *     mov G_M(%rax), %rbx        48 8b 58 <G_M>
 *     ...
 *     cmp M_CURG(%rbx), %rax     48 3b 83 <M_CURG>
 *     jne ...                    75 XX
 *     call gosave_systemstack_switch   e8 <REL32>
 *     mov %rdx, %fs:TLS_G        (g = g0)
 *     mov %rdx, %r14
 *     mov G_SCHED(%rdx), %rbx    48 8b 5a <G_SCHED> (g0.sched.sp; Go 1.21 on:
 *                                %rsp, 48 8b 62 <G_SCHED>)  */
int gocurg__layout(const unsigned char *code, size_t len, struct gocurg *l)
{
	static const unsigned char tls[] = { 0x64, 0x48, 0x8b, 0x04, 0x25 }, tls_m[] = { 0xff, 0xff, 0xff, 0xff, 0xff };
	static const unsigned char gm[] = { 0x48, 0x8b, 0x58 }, curg[] = { 0x48, 0x3b, 0x83 },
				   sched[] = { 0x48, 0x8b, 0x5a }, sched_sp[] = { 0x48, 0x8b, 0x62 },
				   all[] = { 0xff, 0xff, 0xff };
	long a = find(code, len, tls, tls_m, sizeof(tls));
	if (a < 0 || (size_t)a + 5 + 4 > len)
		return -ENOENT;
	long b = find(code + a, len - (size_t)a, gm, all, 3);
	if (b < 0 || (size_t)(a + b) + 4 > len)
		return -ENOENT;
	b += a;
	long c = find(code + b, len - (size_t)b, curg, all, 3);
	if (c < 0 || (size_t)(b + c) + 7 > len)
		return -ENOENT;
	c += b;
	long d = find(code + c, len - (size_t)c, sched, all, 3),
	     d2 = find(code + c, len - (size_t)c, sched_sp, all, 3);
	if (d2 >= 0 && (d < 0 || d2 < d))
		d = d2;         /* Go 1.21 on load g0.sched.sp into %rsp itself */
	if (d < 0 || (size_t)(c + d) + 4 > len)
		return -ENOENT;
	d += c;
	int32_t m_curg = le32(code + c + 3);
	if (m_curg <= 0 || m_curg > 4096 || m_curg % 8)
		return -ENOENT;
	/* the call after the cmp and its jne */
	size_t e = (size_t)c + 7 + 2;
	if (code[c + 7] != 0x75 || e + 5 > (size_t)d || code[e] != 0xe8)
		return -ENOENT;
	int64_t save = (int64_t)e + 5 + le32(code + e + 1);
	if (save < INT32_MIN || save > INT32_MAX)
		return -ENOENT;
	l->save_at = (int32_t)save;
	l->gobuf_bp = 0;
	l->tls_g = le32(code + a + 5);
	l->g_m = code[b + 3];
	l->m_curg = (uint32_t)m_curg;
	l->g_sched = code[d + 3];
	if (l->tls_g >= 0 || l->tls_g % 8 || l->g_m % 8 || l->g_sched % 8 || l->g_m > 0x78 ||
	    l->g_sched > 0x78)
		return -ENOENT;
	return 0;
}

int gocurg__save(const unsigned char *code, size_t len, struct gocurg *l)
{
	/* mov %rbp, disp8(%r14): 49 89 6e DISP */
	static const unsigned char bp[] = { 0x49, 0x89, 0x6e }, all[] = { 0xff, 0xff, 0xff };
	long a = find(code, len, bp, all, 3);
	if (a < 0 || (size_t)a + 4 > len || code[a + 3] <= l->g_sched ||
	    code[a + 3] - l->g_sched < 40 || code[a + 3] - l->g_sched > 48 || code[a + 3] % 8)
		return -ENOENT;
	l->gobuf_bp = code[a + 3] - l->g_sched;
	return 0;
}

static int word(pid_t pid, uint64_t addr, uint64_t *v)
{
	return addr && addr % 8 == 0 ? remote__read(pid, addr, v, sizeof(*v)) : -EINVAL;
}

size_t gocurg__g_len(const struct gocurg *l)
{
	size_t need = (size_t)l->g_sched + 7 * 8;
	return need > (size_t)l->g_m + 8 ? need : (size_t)l->g_m + 8;
}

static uint64_t at(const unsigned char *b, size_t off)
{
	uint64_t v;
	memcpy(&v, b + off, sizeof(v));
	return v;
}

int gocurg__parse(const struct gocurg *l, uint64_t g, uint64_t m, uint64_t curg,
		  const unsigned char *gbytes, size_t len, struct go_rec *r)
{
	if (len < gocurg__g_len(l))
		return -EINVAL;
	if (curg == 0 || curg == g)
		return -ESRCH;  /* no goroutine, or the thread is on it */
	uint64_t lo = at(gbytes, 0), hi = at(gbytes, 8), sp = at(gbytes, l->g_sched);
	if (curg % 8 || at(gbytes, l->g_m) != m || lo >= hi || sp < lo || sp >= hi ||
	    at(gbytes, l->g_sched + 8) == 0)
		return -EINVAL;
	memset(r, 0, sizeof(*r));
	r->g = curg;
	r->lo = lo;
	r->hi = hi;
	r->sp = sp;
	r->pc = at(gbytes, l->g_sched + 8);
	r->bp = l->gobuf_bp ? at(gbytes, l->g_sched + l->gobuf_bp) : 0;
	r->m = m;
	return 0;
}

int gocurg__read(pid_t pid, const struct gocurg *l, uint64_t fs_base, struct go_rec *r)
{
	uint64_t g0, m, m_g0, curg;
	unsigned char gb[256];
	size_t len = gocurg__g_len(l);
	int e;
	if ((e = word(pid, fs_base + (uint64_t)l->tls_g, &g0)) < 0 ||
	    (e = word(pid, g0 + l->g_m, &m)) < 0 || (e = word(pid, m, &m_g0)) < 0 ||
	    (e = word(pid, m + l->m_curg, &curg)) < 0)
		return e;
	/* The thread's g is its M's g0 (it is on its system stack). */
	if (m_g0 != g0)
		return -EINVAL;
	if (curg == 0 || curg == g0)
		return -ESRCH;
	if (len > sizeof(gb) || curg % 8 || (e = remote__read(pid, curg, gb, len)) < 0)
		return e < 0 ? e : -EINVAL;
	return gocurg__parse(l, g0, m, curg, gb, len, r);
}
