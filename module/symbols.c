/* A module's named addresses: the ELF symbol tables (.dynsym, kept by
 * every shared object and by executables that export symbols, stripped or
 * not; .symtab where it was not stripped), read with libelf over the
 * image the module already holds.  For runtimes that find their state by
 * a symbol's name (CPython's _PyRuntime), at a view's start, never while
 * sampling. */
#include "module/modules.h"

#include <gelf.h>
#include <libelf.h>
#include <string.h>

static bool find_in(Elf *elf, Elf_Scn *scn, const char *name, GElf_Sym *out)
{
	GElf_Shdr sh;
	Elf_Data *d = elf_getdata(scn, NULL);
	if (!d || !gelf_getshdr(scn, &sh) || sh.sh_entsize == 0)
		return false;
	size_t n = sh.sh_size / sh.sh_entsize;
	for (size_t i = 1; i < n; i++) {
		GElf_Sym sym;
		if (!gelf_getsym(d, (int)i, &sym) || sym.st_shndx == SHN_UNDEF || sym.st_value == 0)
			continue;
		const char *s = elf_strptr(elf, sh.sh_link, sym.st_name);
		if (s && strcmp(s, name) == 0) {
			*out = sym;
			return true;
		}
	}
	return false;
}

int module__symbol(const struct module *m, const char *name, uint64_t *addr, uint64_t *size)
{
	if (!m->image || !m->usable || m->fd < 0)
		return -1;
	elf_version(EV_CURRENT);
	Elf *elf = elf_memory((char *)m->image, m->image_len);
	if (!elf)
		return -1;
	int r = -1;
	GElf_Sym sym;
	for (int pass = 0; pass < 2 && r < 0; pass++) {
		Elf_Scn *scn = NULL;
		while ((scn = elf_nextscn(elf, scn))) {
			GElf_Shdr sh;
			if (!gelf_getshdr(scn, &sh) ||
			    sh.sh_type != (pass == 0 ? SHT_DYNSYM : SHT_SYMTAB))
				continue;
			if (find_in(elf, scn, name, &sym)) {
				*addr = sym.st_value + m->bias;
				if (size)
					*size = sym.st_size;
				r = 0;
				break;
			}
		}
	}
	elf_end(elf);
	return r;
}
