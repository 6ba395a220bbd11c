/* golayout: what the goroutine view reads in a Go binary, with DWARF and
 * without (goroutine/goroutines.h), side by side, for tests/t_goroutines.sh.
 *
 *     golayout DWARF_BINARY [OTHER_BINARY]
 *
 * prints the Go version of OTHER_BINARY (default: DWARF_BINARY), then one
 * line per thing the view reads: its name, where DWARF_BINARY's DWARF puts
 * it, where the layout without DWARF puts it in OTHER_BINARY (its
 * version's table; runtime.allgs, allglen and the waitReason strings from
 * .symtab, or from the runtime's code when OTHER_BINARY is built -s).  The
 * same program built with and without -s -w links at the same addresses,
 * so the two columns must agree.  Exit 0, or 1 with a message. */
#include <fcntl.h>
#include <gelf.h>
#include <libelf.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "goroutine/goroutines.h"
#include "module/modules.h"

static const char *const names[GO_G_FIELDS] = {
	"g.stack.lo", "g.stack.hi", "g.m", "g.sched.sp", "g.sched.pc", "g.sched.bp",
	"g.atomicstatus", "g.goid", "g.waitreason", "g.startpc", "g.gopc",
};

/* FILE as the profiler holds a module: mapped whole, its PT_LOAD segments,
 * no load bias (link-time addresses). */
static int open_module(const char *file, struct module *m)
{
	struct stat st;
	size_t n;
	m->fd = open(file, O_RDONLY);
	if (m->fd < 0 || fstat(m->fd, &st) < 0)
		return -1;
	m->image_len = (size_t)st.st_size;
	m->image = mmap(NULL, m->image_len, PROT_READ, MAP_PRIVATE, m->fd, 0);
	if (m->image == MAP_FAILED)
		return -1;
	elf_version(EV_CURRENT);
	Elf *elf = elf_memory((char *)m->image, m->image_len);
	if (!elf || elf_getphdrnum(elf, &n) != 0)
		return -1;
	m->segs = calloc(n ? n : 1, sizeof(*m->segs));
	for (size_t i = 0; i < n; i++) {
		GElf_Phdr ph;
		if (gelf_getphdr(elf, (int)i, &ph) && ph.p_type == PT_LOAD)
			m->segs[m->nsegs++] = (struct segment){ ph.p_vaddr, ph.p_filesz, ph.p_offset };
	}
	elf_end(elf);
	m->usable = 1;
	m->path = (char *)file;
	return 0;
}

int main(int argc, char **argv)
{
	struct module dm = { 0 }, om = { 0 };
	struct go_layout d = { 0 }, o = { 0 };
	char note[256], ver[64];
	if (argc < 2 || argc > 3) {
		fprintf(stderr, "usage: golayout DWARF_BINARY [OTHER_BINARY]\n");
		return 1;
	}
	if (open_module(argv[1], &dm) < 0 || open_module(argv[argc - 1], &om) < 0) {
		perror("golayout: open");
		return 1;
	}
	if (goroutines__dwarf_layout(dm.fd, &d, note, sizeof(note)) < 0) {
		fprintf(stderr, "golayout: %s: %s\n", argv[1], note);
		return 1;
	}
	if (goroutines__nodwarf_layout(&om, &o, ver, sizeof(ver), note, sizeof(note)) < 0) {
		fprintf(stderr, "golayout: %s: %s\n", argv[argc - 1], note);
		return 1;
	}
	printf("version %s\n", ver);
	for (int i = 0; i < GO_G_FIELDS; i++)
		printf("%s %llu %llu\n", names[i], (unsigned long long)d.g_off[i],
		       (unsigned long long)o.g_off[i]);
	printf("g.labels %llu %llu\n", (unsigned long long)d.g_labels, (unsigned long long)o.g_labels);
	printf("m.procid %llu %llu\n", (unsigned long long)d.m_procid, (unsigned long long)o.m_procid);
	printf("runtime.allgs 0x%llx 0x%llx\n", (unsigned long long)d.allgs, (unsigned long long)o.allgs);
	printf("runtime.allglen 0x%llx 0x%llx\n", (unsigned long long)d.allglen,
	       (unsigned long long)o.allglen);
	printf("runtime.waitReasonStrings 0x%llx 0x%llx\n", (unsigned long long)d.reasons,
	       (unsigned long long)o.reasons);
	printf("waitReasons %llu %llu\n", (unsigned long long)d.nreasons, (unsigned long long)o.nreasons);
	return 0;
}
