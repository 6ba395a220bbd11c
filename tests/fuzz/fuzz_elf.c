/* Fuzz target: an ELF file the target has mapped, read the way the
 * profiler reads a module.
 *
 * The input is written to a memfd and mapped executable into this process
 * at a fixed place, and modules__refresh() finds it in /proc/self/maps like
 * any module of a target: opened through /proc/self/map_files/, its
 * segments, .eh_frame_hdr and build ID read (attach/maps.c).  Then, at
 * addresses taken from its symbol table, its entry point and spread over
 * its mapping:
 *   - module__read() of the bytes the unwinder asks for;
 *   - an unwind from each address (unwind/unwinder.c: the .eh_frame_hdr
 *     table and .eh_frame, parsed by libunwind through our accessors);
 *   - the symbolizer (dwarf/symbolizer.c): libdwfl reports the file, then
 *     names, source lines, inlined scopes (dwarf_getscopes) and C++
 *     demangling, as at the end of a run.
 * No entry point was added for this: the harness uses the real paths. */
#include <gelf.h>
#include <libelf.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "module/modules.h"
#include "dwarf/symbolizer.h"
#include "unwind/unwinder.h"

#define REGION_SIZE (16u << 20)         /* the largest input mapped */
#define MAX_ADDRS 48
#define FAKE_STACK 0x7ff000000000ull
#define STACK_BYTES 4096

static struct modules *ms;
static struct unwinder *uw;
static void *region;                    /* where each input is mapped */
static unsigned char *stack;            /* a zeroed stack copy to unwind with */

/* libdw (0.188 here, and upstream as of 2025) leaks the scope array of
 * dwarf_getscopes() when an inlined instance's DW_AT_abstract_origin
 * cannot be resolved (pc_record returns -1) or is not found (the second
 * walk returns 0): the array is never handed back to the caller, so it is
 * not ours to free.  LeakSanitizer's fast unwinder cannot walk through
 * libdw (no frame pointers), so the suppression names the library: it
 * covers only allocations made inside libdw.  Leaks of our own still show,
 * and valgrind's run (tests/t_valgrind.sh) sees through libdw. */
const char *__lsan_default_suppressions(void)
{
	return "leak:libdw.so\n";
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	unsetenv("DEBUGINFOD_URLS");    /* no network lookups of build IDs */
	elf_version(EV_CURRENT);
	region = mmap(NULL, REGION_SIZE, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE,
		      -1, 0);
	ms = modules__new(getpid());
	if (region == MAP_FAILED || modules__refresh(ms, getpid()) < 0 || !(uw = unwinder__new(ms))) {
		fprintf(stderr, "fuzz_elf: set-up failed\n");
		exit(1);
	}
	stack = calloc(1, STACK_BYTES);
	return 0;
}

/* Symbol addresses (start and middle of functions) from the input's
 * symbol tables, as the file says: libelf parses a copy. */
static size_t symbol_addrs(const uint8_t *data, size_t size, uint64_t bias, uint64_t *out,
			   size_t max)
{
	size_t n = 0;
	char *copy = malloc(size);
	memcpy(copy, data, size);
	Elf *elf = elf_memory(copy, size);
	GElf_Ehdr eh;
	if (elf && gelf_getehdr(elf, &eh) && n < max)
		out[n++] = eh.e_entry + bias;
	for (Elf_Scn *scn = NULL; elf && n < max && (scn = elf_nextscn(elf, scn));) {
		GElf_Shdr sh;
		if (!gelf_getshdr(scn, &sh) || (sh.sh_type != SHT_SYMTAB && sh.sh_type != SHT_DYNSYM))
			continue;
		Elf_Data *d = elf_getdata(scn, NULL);
		GElf_Sym sym;
		for (int i = 0; d && n + 2 <= max && gelf_getsym(d, i, &sym); i++) {
			if (GELF_ST_TYPE(sym.st_info) != STT_FUNC || !sym.st_value)
				continue;
			out[n++] = sym.st_value + bias;
			out[n++] = sym.st_value + sym.st_size / 2 + bias;
		}
	}
	if (elf)
		elf_end(elf);
	free(copy);
	return n;
}

/* Is [ADDR, ADDR + LEN) inside the file, through some segment of M?
 * module__read() must never succeed otherwise: the image is a mapping of
 * the file, ASan cannot see a read just outside it. */
static int in_image(const struct module *m, uint64_t addr, size_t len)
{
	unsigned __int128 v = (unsigned __int128)(uint64_t)(addr - m->bias);
	for (size_t i = 0; i < m->nsegs; i++) {
		const struct segment *s = &m->segs[i];
		if (v < s->vaddr || v + len > (unsigned __int128)s->vaddr + s->filesz)
			continue;
		unsigned __int128 off = (unsigned __int128)s->offset + (v - s->vaddr);
		return off + len <= m->image_len;
	}
	return 0;
}

static void try_reads(const struct module *m, const uint64_t *addrs, size_t n)
{
	unsigned char buf[64];
	for (size_t i = 0; i < n; i++) {
		for (size_t len = 8; len <= sizeof(buf); len *= 8) {
			if (module__read(m, addrs[i], buf, len) == 0 && !in_image(m, addrs[i], len)) {
				fprintf(stderr, "module__read(%#llx, %zu) read outside the file\n",
					(unsigned long long)addrs[i], len);
				abort();
			}
		}
	}
	if (m->eh_frame_hdr)
		module__read(m, m->eh_frame_hdr, buf, 12);
}

static void try_unwinds(const uint64_t *addrs, size_t n)
{
	uint64_t pcs[64];
	size_t depth;
	unwinder__flush(uw);            /* the previous input was at the same addresses */
	for (size_t i = 0; i < n && i < 8; i++) {
		struct user_regs_struct regs = { .rip = addrs[i], .rsp = FAKE_STACK + 128 };
		struct unwind_input c = { &regs, false, FAKE_STACK, stack, STACK_BYTES, STACK_BYTES, NULL, 0 };
		unwinder__unwind(uw, &c, pcs, 64, &depth);
	}
}

static void try_symbols(const uint64_t *addrs, size_t n)
{
	char err[256];
	struct symbolizer *s = symbolizer__new(ms, NULL, 0, err, sizeof(err));
	if (!s)
		return;
	size_t sum = 0;
	for (size_t i = 0; i < n; i++) {
		const struct sym_frame *f;
		size_t k = symbolizer__lookup(s, addrs[i], &f);
		for (size_t j = 0; j < k; j++)
			sum += strlen(f[j].func) + (f[j].file ? strlen(f[j].file) : 0) +
			       (size_t)f[j].line;
	}
	symbolizer__free(s);
	if (sum == (size_t)-1)
		abort();                /* keeps the reads above */
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	long page = sysconf(_SC_PAGESIZE);
	if (size == 0 || size > REGION_SIZE)
		return 0;
	int fd = memfd_create("fuzz-elf", MFD_CLOEXEC);
	if (fd < 0 || write(fd, data, size) != (ssize_t)size) {
		perror("fuzz_elf: memfd");
		abort();
	}
	size_t len = (size + (size_t)page - 1) & ~((size_t)page - 1);
	if (mmap(region, len, PROT_READ | PROT_EXEC, MAP_PRIVATE | MAP_FIXED, fd, 0) == MAP_FAILED) {
		perror("fuzz_elf: mmap");
		abort();
	}
	modules__refresh(ms, getpid());
	const struct module *m = modules__find(ms, (uint64_t)(uintptr_t)region);
	if (m && m->usable) {
		uint64_t addrs[MAX_ADDRS];
		size_t n = symbol_addrs(data, size, m->bias, addrs, MAX_ADDRS - 8);
		for (uint64_t k = 0; k < 8; k++)
			addrs[n++] = m->start + (m->end - m->start) * k / 8 + k;
		try_reads(m, addrs, n);
		try_unwinds(addrs, n);
		try_symbols(addrs, n);
	}
	mmap(region, len, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED | MAP_NORESERVE, -1, 0);
	close(fd);
	return 0;
}
