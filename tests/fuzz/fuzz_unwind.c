/* Fuzz target: the registers and stack bytes we unwind (unwind/unwinder.c).
 *
 * A target controls its registers and its stack completely.  The input is
 * a capture: registers and stack bytes, unwound against the real modules
 * of this process (modules__new(getpid())), with libunwind reading the
 * stack copy and the modules' .eh_frame through our accessors.
 *
 * Input layout (little-endian):
 *   byte 0      flags: bit 0 partial_regs (only RSP and RIP known, as for
 *               a thread sampled while blocked); bit 1 the copy was cut by
 *               our size rather than by the end of the stack; bits 2-7
 *               max depth, (flags >> 2) * 4 + 2, or 1025 when 0
 *   bytes 1-7   ignored
 *   17 words    rax rbx rcx rdx rsi rdi rbp rsp r8-r15 rip
 *   the rest    the stack copy, which starts at FAKE_STACK
 * So that code and stack addresses are within the fuzzer's reach, a word
 * (register or stack) whose top byte is 0xC0 + K becomes an address in
 * module K of this process (see anchors below) at the low 32 bits as
 * offset, and one whose top byte is 0x57 becomes FAKE_STACK + the low 32
 * bits.  Set FUZZ_UNWIND_SEEDS=DIR to write seeds: real captures of this
 * process's own stack, encoded that way. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/uio.h>
#include <ucontext.h>
#include <unistd.h>

#include "module/modules.h"
#include "unwind/unwinder.h"

#define FAKE_STACK 0x7ff000000000ull
#define NREGS 17
#define HEADER (8 + NREGS * 8)
#define MAX_STACK (256u << 10)
#define NANCHORS 8
#define TAG_CODE 0xC0
#define TAG_STACK 0x57

static struct modules *ms;
static struct unwinder *uw;
/* Modules whose addresses the input can name: the program, then
 * libraries found by name, in this order. */
static const struct module *anchors[NANCHORS];
static const char *const anchor_names[NANCHORS] = {
	NULL, "libc.so", "ld-linux", "libunwind", "libdw", "[vdso]", "libstdc++", "libelf",
};

static void find_anchors(void)
{
	anchors[0] = modules__main(ms);
	for (size_t i = 0; i < modules__count(ms); i++) {
		const struct module *m = modules__at(ms, i);
		for (int k = 1; k < NANCHORS; k++)
			if (!anchors[k] && strstr(m->name, anchor_names[k]))
				anchors[k] = m;
	}
}

static uint64_t decode(uint64_t w)
{
	unsigned tag = (unsigned)(w >> 56);
	if (tag >= TAG_CODE && tag < TAG_CODE + NANCHORS && anchors[tag - TAG_CODE])
		return anchors[tag - TAG_CODE]->start + (w & 0xffffffffu);
	if (tag == TAG_STACK)
		return FAKE_STACK + (w & 0xffffffffu);
	return w;
}

static uint64_t encode(uint64_t v, uint64_t stack_addr, size_t stack_len)
{
	if (v >= stack_addr && v - stack_addr < stack_len)
		return (uint64_t)TAG_STACK << 56 | (v - stack_addr);
	for (int k = 0; k < NANCHORS; k++)
		if (anchors[k] && v >= anchors[k]->start && v < anchors[k]->end &&
		    v - anchors[k]->start <= 0xffffffffu)
			return (uint64_t)(TAG_CODE + k) << 56 | (v - anchors[k]->start);
	return v;
}

static void set_regs(struct user_regs_struct *r, const uint64_t *v)
{
	r->rax = v[0]; r->rbx = v[1]; r->rcx = v[2]; r->rdx = v[3];
	r->rsi = v[4]; r->rdi = v[5]; r->rbp = v[6]; r->rsp = v[7];
	r->r8 = v[8]; r->r9 = v[9]; r->r10 = v[10]; r->r11 = v[11];
	r->r12 = v[12]; r->r13 = v[13]; r->r14 = v[14]; r->r15 = v[15];
	r->rip = v[16];
}

static uint64_t get_word(const uint8_t *p)
{
	uint64_t w;
	memcpy(&w, p, sizeof(w));
	return w;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	uint64_t regs[NREGS], pcs[1025];
	size_t depth;
	if (size < HEADER)
		return 0;
	for (int i = 0; i < NREGS; i++)
		regs[i] = decode(get_word(data + 8 + 8 * i));
	size_t len = size - HEADER;
	if (len > MAX_STACK)
		len = MAX_STACK;
	struct user_regs_struct uregs;
	set_regs(&uregs, regs);
	/* Exactly the stack bytes, decoded word by word, so that ASan sees
	 * any read past the copy. */
	unsigned char *bytes = malloc(len ? len : 1);
	memcpy(bytes, data + HEADER, len);
	for (size_t off = 0; off + 8 <= len; off += 8) {
		uint64_t w = decode(get_word(bytes + off));
		memcpy(bytes + off, &w, sizeof(w));
	}
	struct unwind_input c = { &uregs, data[0] & 1, FAKE_STACK, bytes, len,
				  data[0] & 2 ? len : len + 4096, NULL, 0 };
	size_t max = data[0] >> 2 ? (size_t)(data[0] >> 2) * 4 + 2 : 1025;
	enum unwind_status st = unwinder__unwind(uw, &c, pcs, max, &depth);
	if (depth > max || (st == UNWIND_TRUNCATED && depth != max)) {
		fprintf(stderr, "fuzz_unwind: status %d, depth %zu of %zu\n", (int)st, depth, max);
		abort();
	}
	free(bytes);
	return 0;
}

/* Seeds: this thread's real registers and stack, a few calls deep. */
__attribute__((noinline)) static void write_seed(const char *dir, int k)
{
	ucontext_t uc;
	static unsigned char buf[HEADER + 32768];
	getcontext(&uc);
	const greg_t *g = uc.uc_mcontext.gregs;
	uint64_t rsp = (uint64_t)g[REG_RSP], stack_addr = rsp - 128;
	struct iovec local = { buf + HEADER, sizeof(buf) - HEADER };
	struct iovec remote = { (void *)(uintptr_t)stack_addr, sizeof(buf) - HEADER };
	ssize_t n = process_vm_readv(getpid(), &local, 1, &remote, 1, 0);
	if (n <= 0)
		return;
	uint64_t v[NREGS] = {
		g[REG_RAX], g[REG_RBX], g[REG_RCX], g[REG_RDX], g[REG_RSI], g[REG_RDI],
		g[REG_RBP], g[REG_RSP], g[REG_R8], g[REG_R9], g[REG_R10], g[REG_R11],
		g[REG_R12], g[REG_R13], g[REG_R14], g[REG_R15], g[REG_RIP],
	};
	memset(buf, 0, 8);
	buf[0] = (unsigned char)(k & 1);        /* every other seed: partial regs */
	for (int i = 0; i < NREGS; i++) {
		uint64_t w = encode(v[i], stack_addr, (size_t)n);
		memcpy(buf + 8 + 8 * i, &w, 8);
	}
	for (size_t off = 0; off + 8 <= (size_t)n; off += 8) {
		uint64_t w = encode(get_word(buf + HEADER + off), stack_addr, (size_t)n);
		memcpy(buf + HEADER + off, &w, 8);
	}
	char path[4096];
	snprintf(path, sizeof(path), "%s/seed-%d", dir, k);
	FILE *f = fopen(path, "wb");
	if (f) {
		fwrite(buf, 1, HEADER + (size_t)n, f);
		fclose(f);
	}
}

__attribute__((noinline)) static int nest(const char *dir, int depth, int k)
{
	volatile int r = 0;
	if (depth > 0)
		r = nest(dir, depth - 1, k);
	else
		write_seed(dir, k);
	return r + 1;
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	ms = modules__new(getpid());
	if (modules__refresh(ms, getpid()) < 0 || !(uw = unwinder__new(ms))) {
		fprintf(stderr, "fuzz_unwind: set-up failed\n");
		exit(1);
	}
	find_anchors();
	const char *dir = getenv("FUZZ_UNWIND_SEEDS");
	for (int k = 0; dir && k < 4; k++)
		nest(dir, 1 + 3 * k, k);
	return 0;
}
