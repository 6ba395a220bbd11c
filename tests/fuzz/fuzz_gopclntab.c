/* Fuzz target: a Go binary's .gopclntab (module/gopclntab.c), the table
 * stripped Go programs are named from.
 *
 * The input is the section itself, read with the text start Go's linker
 * gives amd64 programs (0x401000, as in the seeds cut from tests/bin/
 * gospin-stripped by tests/fuzz/gopclntab_seeds.py); an input that is an
 * ELF file goes through gopclntab__from_elf() as well (section headers,
 * .symtab, segments).  For each function entry in the table (the first
 * MAX_FUNCS) and at PCs spread over and around the text, a lookup; what
 * must hold when one succeeds: the name and the file are NUL-terminated
 * strings inside the input, the line is not negative. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "module/gopclntab.h"

#define TEXT_START 0x401000ull
#define MAX_FUNCS 512

static void check_str(const uint8_t *data, size_t size, const char *s, const char *what)
{
	if (!s)
		return;
	const uint8_t *p = (const uint8_t *)s;
	if (p < data || p >= data + size || !memchr(p, 0, size - (size_t)(p - data))) {
		fprintf(stderr, "gopclntab__lookup returned a %s outside the input\n", what);
		abort();
	}
}

static void lookup(const struct gopclntab *g, const uint8_t *data, size_t size, uint64_t pc)
{
	const char *func = NULL, *file = NULL;
	int line = -1;
	if (gopclntab__lookup(g, pc, &func, &file, &line) != 0)
		return;
	if (!func || line < 0) {
		fprintf(stderr, "gopclntab__lookup succeeded without a name or with line %d\n", line);
		abort();
	}
	check_str(data, size, func, "name");
	check_str(data, size, file, "file");
	/* The frame of the same function: it holds PC, its delta is aligned. */
	uint64_t start = 0, end = 0;
	uint32_t sp = 0;
	if (gopclntab__frame(g, pc, &start, &end, &sp) == 0 && (start > pc || end <= pc || sp % 4)) {
		fprintf(stderr, "gopclntab__frame: [%#llx, %#llx) delta %u for pc %#llx\n",
			(unsigned long long)start, (unsigned long long)end, sp, (unsigned long long)pc);
		abort();
	}
}

static void exercise(const struct gopclntab *g, const uint8_t *data, size_t size)
{
	size_t n = gopclntab__count(g);
	uint64_t pc;
	for (size_t i = 0; i <= n && i < MAX_FUNCS; i++) {
		if (gopclntab__entry(g, i, &pc) != 0)
			continue;
		lookup(g, data, size, pc);
		lookup(g, data, size, pc + 1);
		lookup(g, data, size, pc + 37);
		lookup(g, data, size, pc - 1);
	}
	for (uint64_t off = 0; off < (1u << 20); off += 4093)
		lookup(g, data, size, TEXT_START + off);
	lookup(g, data, size, 0);
	lookup(g, data, size, UINT64_MAX);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct gopclntab *g = gopclntab__new(data, size, TEXT_START);
	if (g)
		exercise(g, data, size);
	gopclntab__free(g);
	if (size >= 4 && memcmp(data, "\177ELF", 4) == 0) {
		g = gopclntab__from_elf(data, size);
		if (g)
			exercise(g, data, size);
		gopclntab__free(g);
	}
	return 0;
}
