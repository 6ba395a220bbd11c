/* Fuzz target: the unwind info libunwind cannot read, read through libdw
 * and applied by us (module__cfi_row(): module/cfi_rows.c, unwind/cfi.c),
 * and the frame-pointer step where there is none (unwind/unwinder.c).
 *
 * The input's CFI bytes become the .eh_frame (no .eh_frame_hdr, as in a
 * static binary) or the .debug_frame (as in a Go binary, optionally
 * SHF_COMPRESSED, which libelf inflates) of a small ELF file this harness
 * writes around them: 4 KiB of code at ELF address 0x1000, the section at
 * 0x2000.  The file is mapped executable at a fixed place and read by
 * modules__refresh() like any module of a target; then a register set and
 * a stack taken from the input are unwound from 16 PCs spread over the
 * code.
 *
 * Input layout (little-endian):
 *   byte 0      flags: bit 0 .debug_frame (else .eh_frame); bit 1 compress
 *               it (with bit 0); bit 2 partial registers (SP and PC only,
 *               as for a thread sampled while blocked)
 *   bytes 1-2   N, the length of the CFI bytes
 *   bytes 3-10  RBP
 *   N bytes     the CFI section
 *   the rest    the stack copy, starting at FAKE_STACK; SP is FAKE_STACK+64
 * A word (RBP or stack) whose top byte is 0xC0 becomes the code's address
 * + its low 32 bits, one whose top byte is 0x57 FAKE_STACK + its low 32
 * bits, so that return addresses and frame pointers are within reach.
 * FUZZ_CFI_SEEDS=DIR writes seeds: CFI of the shapes compilers and Go's
 * linker write (see write_seeds()). */
#include <elf.h>
#include <libelf.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>
#include <zlib.h>

#include "module/modules.h"
#include "unwind/unwinder.h"

#define FAKE_STACK 0x7ff000000000ull
#define HEADER 11
#define CODE_VADDR 0x1000u
#define CODE_SIZE 0x1000u
#define CFI_VADDR 0x2000u
#define MAX_CFI 0xffffu
#define MAX_STACK (64u << 10)
#define REGION_SIZE (1u << 20)
#define TAG_CODE 0xC0
#define TAG_STACK 0x57
#define FLAG_DEBUG 1
#define FLAG_COMPRESS 2
#define FLAG_PARTIAL 4

static struct modules *ms;
static struct unwinder *uw;
static void *region;

/* ---- the ELF file around the CFI ------------------------------------------- */

struct buf {
	unsigned char *p;
	size_t len, cap;
};

static void put(struct buf *b, const void *d, size_t n)
{
	if (b->len + n > b->cap) {
		b->cap = (b->len + n) * 2;
		b->p = realloc(b->p, b->cap);
	}
	memcpy(b->p + b->len, d, n);
	b->len += n;
}

static void pad_to(struct buf *b, size_t off)
{
	static const unsigned char zero[64];
	while (b->len < off)
		put(b, zero, off - b->len < sizeof(zero) ? off - b->len : sizeof(zero));
}

/* Code: calls, syscalls and pushes, so that return addresses land after
 * call instructions and syscall stubs are found. */
static void put_code(struct buf *b)
{
	static const unsigned char pattern[16] = { 0x55, 0x48, 0x89, 0xe5, 0xe8, 0, 0, 0, 0,
						   0x0f, 0x05, 0x5d, 0xc3, 0x90, 0x90, 0x90 };
	for (size_t i = 0; i < CODE_SIZE; i += sizeof(pattern))
		put(b, pattern, sizeof(pattern));
}

/* SHF_COMPRESSED: an Elf64_Chdr, then the zlib stream.  NULL if zlib fails. */
static unsigned char *deflate_section(const unsigned char *d, size_t n, size_t *out)
{
	uLongf zlen = compressBound(n);
	unsigned char *z = malloc(sizeof(Elf64_Chdr) + zlen);
	Elf64_Chdr ch = { .ch_type = ELFCOMPRESS_ZLIB, .ch_size = n, .ch_addralign = 1 };
	if (compress2(z + sizeof(ch), &zlen, d, n, 6) != Z_OK) {
		free(z);
		return NULL;
	}
	memcpy(z, &ch, sizeof(ch));
	*out = sizeof(ch) + zlen;
	return z;
}

static void make_elf(struct buf *b, const unsigned char *cfi, size_t n, int flags)
{
	static const char names[] = "\0.text\0.eh_frame\0.debug_frame\0.shstrtab";
	bool debug = flags & FLAG_DEBUG;
	unsigned char *z = NULL;
	size_t zlen = 0;
	if (debug && (flags & FLAG_COMPRESS) && (z = deflate_section(cfi, n, &zlen)))
		cfi = z, n = zlen;
	Elf64_Ehdr eh = {
		.e_ident = { ELFMAG0, ELFMAG1, ELFMAG2, ELFMAG3, ELFCLASS64, ELFDATA2LSB, EV_CURRENT },
		.e_type = ET_DYN, .e_machine = EM_X86_64, .e_version = EV_CURRENT,
		.e_entry = CODE_VADDR, .e_phoff = sizeof(Elf64_Ehdr), .e_ehsize = sizeof(Elf64_Ehdr),
		.e_phentsize = sizeof(Elf64_Phdr), .e_phnum = 1, .e_shentsize = sizeof(Elf64_Shdr),
		.e_shnum = 4, .e_shstrndx = 3,
	};
	size_t names_off = CFI_VADDR + n, sh_off = (names_off + sizeof(names) + 7) & ~(size_t)7;
	eh.e_shoff = sh_off;
	Elf64_Phdr ph = { .p_type = PT_LOAD, .p_flags = PF_R | PF_X, .p_offset = 0, .p_vaddr = 0,
			  .p_filesz = CFI_VADDR + (debug ? 0 : n), .p_memsz = CFI_VADDR + (debug ? 0 : n),
			  .p_align = 0x1000 };
	b->len = 0;
	put(b, &eh, sizeof(eh));
	put(b, &ph, sizeof(ph));
	pad_to(b, CODE_VADDR);
	put_code(b);
	pad_to(b, CFI_VADDR);
	put(b, cfi, n);
	put(b, names, sizeof(names));
	pad_to(b, sh_off);
	Elf64_Shdr sh[4] = {
		{ 0 },
		{ .sh_name = 1, .sh_type = SHT_PROGBITS, .sh_flags = SHF_ALLOC | SHF_EXECINSTR,
		  .sh_addr = CODE_VADDR, .sh_offset = CODE_VADDR, .sh_size = CODE_SIZE, .sh_addralign = 16 },
		{ .sh_name = debug ? 17 : 7, .sh_type = SHT_PROGBITS,
		  .sh_flags = debug ? (z ? SHF_COMPRESSED : 0) : SHF_ALLOC, .sh_addr = debug ? 0 : CFI_VADDR,
		  .sh_offset = CFI_VADDR, .sh_size = n, .sh_addralign = debug ? 1 : 8 },
		{ .sh_name = 30, .sh_type = SHT_STRTAB, .sh_offset = names_off, .sh_size = sizeof(names),
		  .sh_addralign = 1 },
	};
	put(b, sh, sizeof(sh));
	free(z);
}

/* ---- the harness --------------------------------------------------------------- */

int LLVMFuzzerInitialize(int *argc, char ***argv);

static uint64_t decode(uint64_t w, uint64_t code)
{
	unsigned tag = (unsigned)(w >> 56);
	if (tag == TAG_CODE)
		return code + (w & 0xffffffffu);
	if (tag == TAG_STACK)
		return FAKE_STACK + (w & 0xffffffffu);
	return w;
}

static void unwind_all(const struct module *m, const uint8_t *data, size_t size, size_t ncfi)
{
	uint64_t code = m->bias + CODE_VADDR, rbp, pcs[64];
	size_t len = size - HEADER - ncfi, depth;
	memcpy(&rbp, data + 3, sizeof(rbp));
	if (len > MAX_STACK)
		len = MAX_STACK;
	/* Exactly the stack bytes, decoded word by word, so that ASan sees any
	 * read past the copy. */
	unsigned char *stack = malloc(len ? len : 1);
	memcpy(stack, data + HEADER + ncfi, len);
	for (size_t off = 0; off + 8 <= len; off += 8) {
		uint64_t w;
		memcpy(&w, stack + off, 8);
		w = decode(w, code);
		memcpy(stack + off, &w, 8);
	}
	for (uint64_t k = 0; k < 16; k++) {
		struct user_regs_struct regs = { .rip = code + k * (CODE_SIZE / 16) + k,
						 .rsp = FAKE_STACK + 64, .rbp = decode(rbp, code) };
		struct unwind_input in = { &regs, data[0] & FLAG_PARTIAL, FAKE_STACK, stack, len,
					   len + 4096, NULL, 0 };
		enum unwind_status st = unwinder__unwind(uw, &in, pcs, 64, &depth);
		if (depth > 64 || (st == UNWIND_TRUNCATED && depth != 64)) {
			fprintf(stderr, "fuzz_cfi: status %d, depth %zu\n", (int)st, depth);
			abort();
		}
	}
	free(stack);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct buf elf;
	long page = sysconf(_SC_PAGESIZE);
	if (size < HEADER)
		return 0;
	size_t ncfi = (size_t)data[1] | (size_t)data[2] << 8;
	if (ncfi > size - HEADER)
		ncfi = size - HEADER;
	make_elf(&elf, data + HEADER, ncfi, data[0]);
	int fd = memfd_create("fuzz-cfi", MFD_CLOEXEC);
	if (fd < 0 || write(fd, elf.p, elf.len) != (ssize_t)elf.len) {
		perror("fuzz_cfi: memfd");
		abort();
	}
	size_t maplen = (elf.len + (size_t)page - 1) & ~((size_t)page - 1);
	if (maplen > REGION_SIZE ||
	    mmap(region, maplen, PROT_READ | PROT_EXEC, MAP_PRIVATE | MAP_FIXED, fd, 0) == MAP_FAILED) {
		perror("fuzz_cfi: mmap");
		abort();
	}
	modules__refresh(ms, getpid());
	unwinder__flush(uw);
	const struct module *m = modules__find(ms, (uint64_t)(uintptr_t)region + CODE_VADDR);
	if (m && m->usable)
		unwind_all(m, data, size, ncfi);
	mmap(region, maplen, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED | MAP_NORESERVE, -1, 0);
	close(fd);
	return 0;
}

/* ---- seeds --------------------------------------------------------------------- */

static void u8(struct buf *b, unsigned v) { unsigned char c = (unsigned char)v; put(b, &c, 1); }
static void u32(struct buf *b, uint32_t v) { put(b, &v, 4); }
static void u64(struct buf *b, uint64_t v) { put(b, &v, 8); }
static void uleb(struct buf *b, uint64_t v)
{
	do {
		u8(b, (v & 0x7f) | (v > 0x7f ? 0x80 : 0));
		v >>= 7;
	} while (v);
}
static void sleb(struct buf *b, int64_t v)
{
	for (;;) {
		unsigned c = v & 0x7f;
		v >>= 7;
		if ((v == 0 && !(c & 0x40)) || (v == -1 && (c & 0x40))) {
			u8(b, c);
			return;
		}
		u8(b, c | 0x80);
	}
}

/* A rule with a DWARF expression: DW_CFA_def_cfa_expression (REG < 0),
 * DW_CFA_expression or DW_CFA_val_expression of REG. */
static void expr_rule(struct buf *b, unsigned op, int reg, const struct buf *e)
{
	u8(b, op);
	if (reg >= 0)
		uleb(b, (uint64_t)reg);
	uleb(b, e->len);
	put(b, e->p, e->len);
}

/* Pads the entry that starts at START (its length word) to 8 bytes with
 * DW_CFA_nop and sets its length. */
static void end_entry(struct buf *b, size_t start)
{
	while ((b->len - start) % 8)
		u8(b, 0);
	uint32_t n = (uint32_t)(b->len - start - 4);
	memcpy(b->p + start, &n, 4);
}

/* A CIE as gcc writes it ("zR", pcrel sdata4; "zRS" for a signal frame),
 * or Go's linker (.debug_frame: no augmentation). */
static void cie(struct buf *b, bool debug, bool signal)
{
	size_t start = b->len;
	u32(b, 0);
	u32(b, debug ? 0xffffffffu : 0);
	u8(b, debug ? 3 : 1);
	if (debug)
		u8(b, 0);
	else
		put(b, signal ? "zRS" : "zR", signal ? 4 : 3);
	uleb(b, 1);
	sleb(b, -8);
	uleb(b, 16);
	if (!debug) {
		uleb(b, 1);
		u8(b, 0x1b);
	}
	u8(b, 0x0c), uleb(b, 7), uleb(b, 8);    /* DW_CFA_def_cfa rsp+8 */
	u8(b, 0x90), uleb(b, 1);                /* DW_CFA_offset rip, cfa-8 */
	end_entry(b, start);
}

/* An FDE for [LO, LO + LEN) of the code (ELF addresses), CIE at offset 0. */
static size_t fde_begin(struct buf *b, bool debug, uint64_t lo, uint64_t len)
{
	size_t start = b->len;
	u32(b, 0);
	if (debug) {
		u32(b, 0);
		u64(b, lo);
		u64(b, len);
	} else {
		u32(b, (uint32_t)(b->len));                             /* back to the CIE */
		u32(b, (uint32_t)(lo - (CFI_VADDR + b->len)));          /* pcrel */
		u32(b, (uint32_t)len);
		uleb(b, 0);
	}
	return start;
}

static void write_seed(const char *dir, const char *name, int flags, const struct buf *cfi,
		       const uint64_t *stack, size_t nwords, uint64_t rbp)
{
	char path[4096];
	snprintf(path, sizeof(path), "%s/seed-%s", dir, name);
	FILE *f = fopen(path, "wb");
	if (!f)
		return;
	unsigned char h[HEADER] = { (unsigned char)flags, (unsigned char)cfi->len,
				    (unsigned char)(cfi->len >> 8) };
	memcpy(h + 3, &rbp, 8);
	fwrite(h, 1, HEADER, f);
	fwrite(cfi->p, 1, cfi->len, f);
	fwrite(stack, 8, nwords, f);
	fclose(f);
}

#define CODE(off) ((uint64_t)TAG_CODE << 56 | (off))
#define STK(off) ((uint64_t)TAG_STACK << 56 | (off))

static void write_seeds(const char *dir)
{
	/* A stack of frames: [rbp] = next rbp, [rbp + 8] = return address
	 * after the call at offset 4 of a 16-byte block of the code. */
	uint64_t stack[64] = { 0 };
	for (int i = 8; i < 56; i += 4) {
		stack[i] = STK((uint64_t)(i + 4) * 8);
		stack[i + 1] = CODE((uint64_t)i * 16 + 9);
	}
	for (int debug = 0; debug < 2; debug++) {
		struct buf b = { 0 };
		cie(&b, debug, false);
		/* a gcc-like prologue: push rbp; mov rsp, rbp */
		size_t f = fde_begin(&b, debug, CODE_VADDR, CODE_SIZE / 2);
		u8(&b, 0x41), u8(&b, 0x0e), uleb(&b, 16);       /* advance 1; def_cfa_offset 16 */
		u8(&b, 0x86), uleb(&b, 2);                      /* offset rbp, cfa-16 */
		u8(&b, 0x43), u8(&b, 0x0d), uleb(&b, 6);        /* advance 3; def_cfa_register rbp */
		end_entry(&b, f);
		/* expressions: the CFA through a deref, rip by an expression */
		f = fde_begin(&b, debug, CODE_VADDR + CODE_SIZE / 2, CODE_SIZE / 2);
		struct buf e = { 0 };
		u8(&e, 0x77), sleb(&e, 8), u8(&e, 0x06), u8(&e, 0x23), uleb(&e, 16);
		expr_rule(&b, 0x0f, -1, &e);                    /* def_cfa_expression */
		e.len = 0;
		u8(&e, 0x77), sleb(&e, 8), u8(&e, 0x06);
		expr_rule(&b, 0x10, 16, &e);                    /* expression rip */
		e.len = 0;
		u8(&e, 0x9c), u8(&e, 0x40), u8(&e, 0x1c);       /* cfa, lit16, minus */
		expr_rule(&b, 0x16, 6, &e);                     /* val_expression rbp */
		free(e.p);
		end_entry(&b, f);
		if (!debug)
			u32(&b, 0);                             /* terminator */
		write_seed(dir, debug ? "debug" : "eh", debug, &b, stack, 64, STK(64));
		if (debug)
			write_seed(dir, "debug-z", FLAG_DEBUG | FLAG_COMPRESS, &b, stack, 64, STK(64));
		write_seed(dir, debug ? "debug-partial" : "eh-partial", debug | FLAG_PARTIAL, &b,
			   stack, 64, STK(64));
		free(b.p);
	}
	struct buf b = { 0 };
	cie(&b, false, true);                                   /* a signal trampoline */
	size_t f = fde_begin(&b, false, CODE_VADDR, CODE_SIZE);
	struct buf e = { 0 };
	u8(&e, 0x77), sleb(&e, 160), u8(&e, 0x06);
	expr_rule(&b, 0x0f, -1, &e);                            /* the CFA: the saved rsp */
	e.len = 0;
	u8(&e, 0x77), sleb(&e, 168);
	expr_rule(&b, 0x10, 16, &e);                            /* rip, saved */
	e.len = 0;
	u8(&e, 0x77), sleb(&e, 120);
	expr_rule(&b, 0x10, 6, &e);                             /* rbp, saved */
	free(e.p);
	end_entry(&b, f);
	u32(&b, 0);
	write_seed(dir, "signal", 0, &b, stack, 64, STK(64));
	b.len = 0;
	write_seed(dir, "none", 0, &b, stack, 64, STK(64));     /* frame pointers only */
	free(b.p);
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	unsetenv("DEBUGINFOD_URLS");
	elf_version(EV_CURRENT);
	region = mmap(NULL, REGION_SIZE, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	ms = modules__new(getpid());
	if (region == MAP_FAILED || modules__refresh(ms, getpid()) < 0 || !(uw = unwinder__new(ms))) {
		fprintf(stderr, "fuzz_cfi: set-up failed\n");
		exit(1);
	}
	const char *dir = getenv("FUZZ_CFI_SEEDS");
	if (dir)
		write_seeds(dir);
	return 0;
}
