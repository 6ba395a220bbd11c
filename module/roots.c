/* roots: the functions of a module where stacks end by design, though its
 * unwind information does not say so (see module__stack_root()): Go's
 * TOPFRAME, stack-switching and jumping functions, as Go's own tracebacks
 * stop there, and musl's frames that call main and a thread's function in
 * a static musl program, whose code has no unwind information to go
 * further.  Found by name, in .symtab or, for a Go program without it, in
 * .gopclntab; made once per module, on the unwinder's first question
 * (module/unwind_info.c). */
#include "module/internal.h"

#include <gelf.h>
#include <stdlib.h>
#include <string.h>

#include "module/gopclntab.h"
#include "util/xalloc.h"

/* Go's functions where a stack ends (see module__stack_root()), by the
 * names .symtab gives them (assembly ones carry the suffix ".abi0"). */
static const struct {
	const char *name;
	int kind;
} go_roots[] = {
	{ "runtime.goexit", MODULE_ROOT_TOP },       { "runtime.mstart", MODULE_ROOT_TOP },
	{ "runtime.rt0_go", MODULE_ROOT_TOP },       { "runtime.sigtramp", MODULE_ROOT_TOP },
	{ "runtime.mcall", MODULE_ROOT_SWITCH },     { "runtime.systemstack", MODULE_ROOT_JUMP },
	{ "runtime.morestack", MODULE_ROOT_JUMP },   { "runtime.asmcgocall", MODULE_ROOT_SWITCH },
};

static int go_root_kind(const char *name)
{
	for (size_t i = 0; i < sizeof(go_roots) / sizeof(go_roots[0]); i++) {
		size_t n = strlen(go_roots[i].name);
		if (strncmp(name, go_roots[i].name, n) == 0 &&
		    (name[n] == '\0' || strcmp(name + n, ".abi0") == 0))
			return go_roots[i].kind;
	}
	return 0;
}

static void add_root(struct roots *r, size_t *cap, uint64_t lo, uint64_t hi, int kind,
		     const char *name)
{
	if (kind == MODULE_ROOT_JUMP && strncmp(name, "runtime.systemstack", 19) == 0)
		r->systemstack = (struct range){ lo, hi, kind };
	if (r->n == *cap) {
		*cap = *cap ? 2 * *cap : 8;
		r->r = xrealloc(r->r, *cap * sizeof(*r->r));
	}
	r->r[r->n++] = (struct range){ lo, hi, kind };
}

/* Without .symtab (-ldflags=-s): the same functions by .gopclntab's names. */
static void load_go_roots_pclntab(const struct module *m, struct roots *r,
				  const struct gopclntab *g)
{
	size_t cap = 0;
	for (size_t i = 0, n = gopclntab__count(g); i < n; i++) {
		uint64_t pc, lo, hi;
		const char *name;
		int kind;
		if (gopclntab__entry(g, i, &pc) == 0 &&
		    gopclntab__lookup(g, pc, &name, NULL, NULL) == 0 && (kind = go_root_kind(name)) &&
		    gopclntab__frame(g, pc, &lo, &hi, NULL) == 0)
			add_root(r, &cap, lo + m->bias, hi + m->bias, kind, name);
	}
}

/* musl's own code has neither unwind info nor frame pointers (Debian's
 * libc.a is built without them), so in a static musl program every stack
 * ends at musl's frame that called ours: libc_start_main_stage2, which
 * called main (above it only _start_c and _start), or start / start_c11,
 * a thread's first function (above it only __clone).  They are the roots,
 * as Go's TOPFRAME functions are, but only in a program that has
 * libc_start_main_stage2: "start" alone is any program's name. */
static int musl_root_kind(const char *name)
{
	return strcmp(name, "libc_start_main_stage2") == 0 || strcmp(name, "start") == 0 ||
	       strcmp(name, "start_c11") == 0 ? MODULE_ROOT_TOP : 0;
}

/* Adds the functions of SYMTAB that KIND_OF names as roots.  Returns
 * whether one of them is called REQUIRED (true when REQUIRED is NULL). */
static bool load_roots(const struct module *m, struct roots *r, Elf *elf, Elf_Scn *symtab,
		       int (*kind_of)(const char *name), const char *required)
{
	bool found = !required;
	GElf_Shdr sh;
	Elf_Data *d = elf_getdata(symtab, NULL);
	size_t cap = 0;
	if (!d || !gelf_getshdr(symtab, &sh) || sh.sh_entsize == 0)
		return false;
	for (size_t i = 0, n = sh.sh_size / sh.sh_entsize; i < n; i++) {
		GElf_Sym sym;
		const char *name;
		int kind;
		if (!gelf_getsym(d, (int)i, &sym) || GELF_ST_TYPE(sym.st_info) != STT_FUNC ||
		    !(name = elf_strptr(elf, sh.sh_link, sym.st_name)) || !(kind = kind_of(name)))
			continue;
		uint64_t lo = sym.st_value + m->bias;
		add_root(r, &cap, lo, lo + (sym.st_size ? sym.st_size : 1), kind, name);
		found |= required && strcmp(name, required) == 0;
	}
	return found;
}

void roots_load(struct roots *r, const struct module *m, Elf *elf, Elf_Scn *symtab, bool go,
		 const struct gopclntab *pclntab)
{
	if (go && symtab)
		load_roots(m, r, elf, symtab, go_root_kind, NULL);
	else if (pclntab)
		load_go_roots_pclntab(m, r, pclntab);
	else if (symtab && !m->eh_frame_hdr) {
		r->musl = load_roots(m, r, elf, symtab, musl_root_kind, "libc_start_main_stage2");
		if (!r->musl)
			r->n = 0;
	}
}

void roots_end(struct roots *r)
{
	free(r->r);
}

int roots_kind(const struct roots *r, uint64_t pc)
{
	for (size_t i = 0; i < r->n; i++)
		if (pc >= r->r[i].lo && pc < r->r[i].hi)
			return r->r[i].kind;
	return 0;
}
