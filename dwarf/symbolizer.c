#include "dwarf/symbolizer.h"

#include <dwarf.h>
#include <elfutils/libdwelf.h>
#include <elfutils/libdwfl.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include <zlib.h>

#include "dwarf/debuginfod.h"
#include "dwarf/symcache.h"
#include "module/gopclntab.h"
#include "module/perfmap.h"
#include "util/intern.h"
#include "util/strbuf.h"
#include "util/text.h"
#include "util/xalloc.h"

/* libiberty's demangler (binutils', the one perf uses): C++ (Itanium
 * ABI) and both Rust manglings, legacy "_ZN...17h<hash>E" (printed
 * without the hash) and v0 "_R...". */
#include <libiberty/demangle.h>

#define MAX_INLINE 64

struct entry {
	size_t first, n;                /* range in frames[] */
	bool jit;                       /* named (or not) by the perf map ... */
	uint64_t jit_gen;               /* ... as it was then (perfmap__generation) */
};

struct symbolizer {
	Dwfl *dwfl;
	const struct modules *ms;
	struct intern *strings;         /* every name and file, stored once */
	struct intern *addrs;           /* address -> index in entries[] */
	struct entry *entries;
	size_t nentries, entries_cap;
	struct sym_frame *frames;
	size_t nframes, frames_cap;
	struct perfmap *jit;            /* /tmp/perf-PID.map, made at first use */
	bool jit_check;                 /* look at the map again at its next use */
	bool used_jit;                  /* the address being resolved asked the map */
	char *debuginfo_path;           /* where libdwfl looks for debug files */
	struct go_module *go;           /* one per module of MS, in its order */
	size_t ngo;
	Dwfl_Callbacks callbacks;
	/* Each module's symcache, made at its first lookup (NULL: none);
	 * CPROF_SYMCACHE=0 (the tests' comparison) asks libdwfl always. */
	struct { Dwfl_Module *mod; struct symcache *c; } *symcaches;
	size_t nsymcaches;
	int no_symcache;
	/* Each module's .eh_frame, found sane (1) or not (-1) at its first
	 * question (func_start). */
	struct { Dwfl_Module *mod; int sane; } *cfis;
	size_t ncfis;
};

/* A module's Go table, read at its first lookup (NULL: not Go). */
struct go_module {
	const struct module *m;
	struct gopclntab *tab;
	bool tried;
};


/* Every name and file the symbolizer hands out is stored here, once, and
 * cleaned on the way in (util/text.h): symbols, DWARF names and files,
 * /tmp/perf-PID.map lines and --convert's frames are whatever bytes their
 * authors wrote. */
static const char *str(struct symbolizer *s, const char *v)
{
	size_t len = strlen(v);
	char small[256], *clean = NULL;
	if (!text__valid(v, len)) {
		clean = len < sizeof(small) ? small : xmalloc(len + 1);
		len = text__clean(clean, len + 1, v, len);
		v = clean;
	}
	int64_t id = intern__add(s->strings, v, len, NULL);
	if (clean != small)
		free(clean);
	return id < 0 ? "?" : intern__key(s->strings, (size_t)id, NULL);
}

/* The vDSO exists only in memory: hand libdwfl a memfd holding its copy. */
static int vdso_fd(const struct module *m)
{
	int fd = memfd_create("vdso", MFD_CLOEXEC);
	if (fd < 0)
		return -1;
	if (write(fd, m->image, m->image_len) != (ssize_t)m->image_len) {
		close(fd);
		return -1;
	}
	return fd;
}

/* True if module I is a file already reported at the same load bias: a
 * file whose segments leave a hole between them (node's do) is several
 * runs of mappings, so several modules, but one ELF to libdwfl.
 * Reporting it again would fail with "address range overlaps an existing
 * module", and libdwfl then drops the first report too: every frame of
 * the file lost its name. */
static bool reported_before(const struct modules *ms, size_t i)
{
	const struct module *m = modules__at(ms, i);
	for (size_t j = 0; j < i; j++) {
		const struct module *o = modules__at(ms, j);
		if (o->usable && o->fd >= 0 && m->fd >= 0 && o->inode == m->inode &&
		    o->bias == m->bias && strcmp(o->path, m->path) == 0)
			return true;
	}
	return false;
}

static void report_modules(struct symbolizer *s)
{
	for (size_t i = 0; i < modules__count(s->ms); i++) {
		const struct module *m = modules__at(s->ms, i);
		if (!m->usable || reported_before(s->ms, i))
			continue;
		int fd = m->fd >= 0 ? dup(m->fd) : vdso_fd(m);
		if (fd < 0)
			continue;
		/* BASE for ET_DYN with add_p_vaddr false is where vaddr 0 lands:
		 * the load bias.  ET_EXEC ignores it.  FD is consumed on success. */
		if (!dwfl_report_elf(s->dwfl, m->name, m->path, fd, m->bias, false))
			close(fd);
	}
}

/* libdwfl's default path (":.debug:/usr/lib/debug") and DIRS after it. */
static char *debuginfo_path(const char *const *dirs, size_t n)
{
	struct strbuf sb = { 0 };
	strbuf__addf(&sb, ":.debug:/usr/lib/debug");
	for (size_t i = 0; i < n; i++)
		strbuf__addf(&sb, ":%s", dirs[i]);
	return sb.s;
}

/* libdwfl's standard search (local paths, .gnu_debuglink, then debuginfod
 * servers), with what it found checked: a debug file that has a build ID
 * other than its module's is someone else's (a debuginfod server that
 * answers with the wrong file named tgt+0x1152 frame_dummy), and is not
 * used: one note names it.  A debug file without a build ID (found by
 * .gnu_debuglink, whose CRC libdwfl checked) is taken as it is. */
#define REFUSED_MAX 1024
static struct { unsigned char id[64]; int len; } refused[REFUSED_MAX];
static size_t nrefused;

/* The modules being named and their process (set by symbolizer__new and
 * symbolizer__lookup: libdwfl's callbacks carry no pointer of ours;
 * naming happens on one thread at a time). */
static const struct modules *naming_ms;
static pid_t naming_pid;

/* The path MOD has in its own process (libdwfl knows the file by the
 * host's name of the descriptor), or NULL. */
static const char *own_path(Dwfl_Module *mod)
{
	Dwarf_Addr lo = 0;
	dwfl_module_info(mod, NULL, &lo, NULL, NULL, NULL, NULL, NULL);
	for (size_t i = 0; naming_ms && i < modules__count(naming_ms); i++) {
		const struct module *m = modules__at(naming_ms, i);
		if (m->start <= lo && lo < m->end)
			return m->path;
	}
	return NULL;
}

/* Whether process PID sees another root than ours (a container). */
static bool other_root(pid_t pid)
{
	char fn[64];
	struct stat theirs, ours;
	snprintf(fn, sizeof(fn), "/proc/%d/root", (int)pid);
	return pid > 0 && stat(fn, &theirs) == 0 && stat("/", &ours) == 0 &&
	       (theirs.st_dev != ours.st_dev || theirs.st_ino != ours.st_ino);
}

/* FD's file's CRC-32 (.gnu_debuglink's, zlib's polynomial). */
static uint32_t file_crc(int fd)
{
	unsigned char buf[65536];
	uLong crc = crc32(0L, Z_NULL, 0);
	ssize_t n;
	off_t at = 0;
	while ((n = pread(fd, buf, sizeof(buf), at)) > 0) {
		crc = crc32(crc, buf, (uInt)n);
		at += n;
	}
	return (uint32_t)crc;
}

/* A container's own debug files: inside the target's root (/proc/PID/root)
 * by build ID (usr/lib/debug/.build-id/xx/rest.debug), then by
 * .gnu_debuglink next to the file, in its .debug/ and under usr/lib/debug,
 * as the container's own tools would look.  Checked as the host's: the
 * build ID when the module has one, else the link's CRC.  -1 if none. */
static int container_debuginfo(pid_t pid, const unsigned char *want, int wn, const char *own,
			       const char *debuglink_file, GElf_Word debuglink_crc, char **found)
{
	char path[PATH_MAX];
	int fd;
	if (wn > 1) {
		int o = snprintf(path, sizeof(path), "/proc/%d/root/usr/lib/debug/.build-id/%02x/",
				 (int)pid, want[0]);
		for (int i = 1; i < wn && o + 3 < (int)sizeof(path); i++)
			o += snprintf(path + o, sizeof(path) - (size_t)o, "%02x", want[i]);
		snprintf(path + o, sizeof(path) - (size_t)o, ".debug");
		if ((fd = open(path, O_RDONLY | O_CLOEXEC)) >= 0) {
			*found = xstrdup(path);
			return fd;
		}
	}
	if (!debuglink_file || !own || own[0] != '/' || strchr(debuglink_file, '/'))
		return -1;
	const char *slash = strrchr(own, '/');
	int dl = (int)(slash - own);
	const char *const forms[] = { "/proc/%d/root%.*s/%s", "/proc/%d/root%.*s/.debug/%s",
				      "/proc/%d/root/usr/lib/debug%.*s/%s" };
	for (size_t k = 0; k < sizeof(forms) / sizeof(forms[0]); k++) {
		snprintf(path, sizeof(path), forms[k], (int)pid, dl, own, debuglink_file);
		if ((fd = open(path, O_RDONLY | O_CLOEXEC)) < 0)
			continue;
		if (wn <= 0 && file_crc(fd) != debuglink_crc) {
			close(fd);
			continue;
		}
		*found = xstrdup(path);
		return fd;
	}
	return -1;
}

static int checked_find_debuginfo(Dwfl_Module *mod, void **userdata, const char *modname,
				  Dwarf_Addr base, const char *file_name, const char *debuglink_file,
				  GElf_Word debuglink_crc, char **debuginfo_file_name)
{
	const unsigned char *want;
	GElf_Addr vaddr;
	int wn = dwfl_module_build_id(mod, &want, &vaddr);
	/* In a container, its own files first: the host's /usr/lib/debug
	 * holds the host's (or nothing) for another distribution's
	 * binaries. */
	int fd = -1;
	if (other_root(naming_pid))
		fd = container_debuginfo(naming_pid, want, wn, own_path(mod), debuglink_file,
					 debuglink_crc, debuginfo_file_name);
	if (fd >= 0)
		goto check;
	/* A build ID whose file was refused or not found once is not asked
	 * for again in the run (libdwfl asks more than once per module; a
	 * debuginfod server that does not answer was waited for each time). */
	for (size_t i = 0; wn > 0 && i < nrefused; i++)
		if (refused[i].len == wn && memcmp(refused[i].id, want, (size_t)wn) == 0)
			return -1;
	int asks = debuginfod__active();
	struct timespec t0, t1;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	fd = dwfl_standard_find_debuginfo(mod, userdata, modname, base, file_name, debuglink_file,
					      debuglink_crc, debuginfo_file_name);
	if (asks) {
		clock_gettime(CLOCK_MONOTONIC, &t1);
		debuginfod__spent((double)(t1.tv_sec - t0.tv_sec) + (double)(t1.tv_nsec - t0.tv_nsec) / 1e9);
	}
	if (fd < 0 && wn > 0 && nrefused < REFUSED_MAX && (size_t)wn <= sizeof(refused[0].id)) {
		memcpy(refused[nrefused].id, want, (size_t)wn);
		refused[nrefused++].len = wn;
	}
	if (fd < 0 || wn <= 0)
		return fd;
check:;
	Elf *e = elf_begin(fd, ELF_C_READ_MMAP, NULL);
	const void *got = NULL;
	ssize_t gn = e ? dwelf_elf_gnu_build_id(e, &got) : -1;
	bool other = gn > 0 && (gn != wn || memcmp(got, want, (size_t)wn) != 0);
	if (e)
		elf_end(e);
	if (!other)
		return fd;
	if (nrefused < REFUSED_MAX && (size_t)wn <= sizeof(refused[0].id)) {
		memcpy(refused[nrefused].id, want, (size_t)wn);
		refused[nrefused++].len = wn;
	}
	char mod_name[128];
	text__clean(mod_name, sizeof(mod_name), modname, strlen(modname));
	fprintf(stderr, "cprof-attach: note: the debug file found for %s (%s) has another build ID "
		"than the module: not used\n", mod_name,
		*debuginfo_file_name ? *debuginfo_file_name : "from debuginfod");
	close(fd);
	free(*debuginfo_file_name);
	*debuginfo_file_name = NULL;
	return -1;
}

struct symbolizer *symbolizer__new(const struct modules *ms, const char *const *dirs,
				   size_t ndirs, char *err, size_t errlen)
{
	struct symbolizer *s = xcalloc(1, sizeof(*s));
	const char *sc = getenv("CPROF_SYMCACHE");
	s->no_symcache = sc && strcmp(sc, "0") == 0;
	/* libdwfl's find-debuginfo (below) asks debuginfod servers when
	 * DEBUGINFOD_URLS is set: bound the wait first. */
	debuginfod__prepare();
	s->ms = ms;
	naming_ms = ms;
	naming_pid = modules__pid(ms);
	s->strings = intern__new();
	s->addrs = intern__new();
	s->debuginfo_path = debuginfo_path(dirs, ndirs);
	s->ngo = modules__count(ms);
	s->go = xcalloc(s->ngo + 1, sizeof(*s->go));
	for (size_t i = 0; i < s->ngo; i++)
		s->go[i].m = modules__at(ms, i);
	s->callbacks = (Dwfl_Callbacks){
		.find_elf = dwfl_build_id_find_elf,
		.find_debuginfo = checked_find_debuginfo,
		.debuginfo_path = &s->debuginfo_path,
	};
	s->dwfl = dwfl_begin(&s->callbacks);
	if (!s->dwfl || !s->strings || !s->addrs) {
		snprintf(err, errlen, "dwfl_begin: %s", dwfl_errmsg(-1));
		symbolizer__free(s);
		return NULL;
	}
	dwfl_report_begin(s->dwfl);
	report_modules(s);
	if (dwfl_report_end(s->dwfl, NULL, NULL) != 0) {
		snprintf(err, errlen, "dwfl_report_end: %s", dwfl_errmsg(-1));
		symbolizer__free(s);
		return NULL;
	}
	return s;
}

void symbolizer__free(struct symbolizer *s)
{
	if (!s)
		return;
	if (s->dwfl)
		dwfl_end(s->dwfl);
	free(s->debuginfo_path);
	for (size_t i = 0; i < s->ngo; i++)
		gopclntab__free(s->go[i].tab);
	free(s->go);
	for (size_t i = 0; i < s->nsymcaches; i++)
		symcache__free(s->symcaches[i].c);
	free(s->symcaches);
	free(s->cfis);
	perfmap__free(s->jit);
	intern__free(s->strings);
	intern__free(s->addrs);
	free(s->entries);
	free(s->frames);
	free(s);
}

/* ADDR's name in the target's perf map (module/perfmap.h), read at the
 * first lookup and again, for what it gained, at the first lookup of each
 * naming pass (symbolizer__new_pass). */
static const char *jit_name(struct symbolizer *s, uint64_t addr)
{
	if (!s->jit) {
		s->jit = perfmap__new(modules__pid(s->ms), true);
		s->jit_check = true;
	}
	if (s->jit_check) {
		s->jit_check = false;
		perfmap__refresh(s->jit);
	}
	s->used_jit = true;
	const char *name = perfmap__lookup(s->jit, addr);
	return name ? str(s, name) : NULL;
}

static const char *demangled(struct symbolizer *s, const char *name)
{
	char plain[512];
	if (!name || !*name)
		return NULL;
	/* Symbol versions ("__libc_start_main@@GLIBC_2.34") are not part of
	 * the name users search for, and split one function in two. */
	const char *at = strchr(name, '@');
	if (at && at > name && (size_t)(at - name) < sizeof(plain)) {
		memcpy(plain, name, (size_t)(at - name));
		plain[at - name] = '\0';
		name = plain;
	}
	/* Only names in a mangling we know: DMGL_AUTO would also try
	 * GNAT's and D's on a plain C name. */
	if (strncmp(name, "_Z", 2) != 0 && strncmp(name, "_R", 2) != 0)
		return str(s, name);
	char *d = cplus_demangle(name, DMGL_PARAMS | DMGL_ANSI | DMGL_AUTO);
	const char *r = str(s, d ? d : name);
	free(d);
	return r;
}

static void push(struct symbolizer *s, const char *func, const char *file, int line)
{
	if (s->nframes == s->frames_cap) {
		s->frames_cap = s->frames_cap ? s->frames_cap * 2 : 256;
		s->frames = xrealloc(s->frames, s->frames_cap * sizeof(*s->frames));
	}
	s->frames[s->nframes++] = (struct sym_frame){ func, file ? str(s, file) : NULL, line };
}

/* A DIE's name as users know it: the demangled linkage name for C++,
 * else DW_AT_name (both followed through DW_AT_abstract_origin). */
static const char *die_name(struct symbolizer *s, Dwarf_Die *die)
{
	Dwarf_Attribute a;
	const char *n = dwarf_formstring(dwarf_attr_integrate(die, DW_AT_linkage_name, &a));
	if (!n)
		n = dwarf_formstring(dwarf_attr_integrate(die, DW_AT_MIPS_linkage_name, &a));
	if (!n)
		n = dwarf_diename(die);
	return demangled(s, n);
}

static const char *call_file(Dwarf_Die *cu, Dwarf_Die *inl)
{
	Dwarf_Attribute a;
	Dwarf_Word idx;
	Dwarf_Files *files;
	size_t nfiles;
	if (dwarf_formudata(dwarf_attr(inl, DW_AT_call_file, &a), &idx) != 0 ||
	    dwarf_getsrcfiles(cu, &files, &nfiles) != 0 || idx >= nfiles)
		return NULL;
	return dwarf_filesrc(files, idx, NULL, NULL);
}

static int call_line(Dwarf_Die *inl)
{
	Dwarf_Attribute a;
	Dwarf_Word v;
	return dwarf_formudata(dwarf_attr(inl, DW_AT_call_line, &a), &v) == 0 ? (int)v : 0;
}

/* The DW_TAG_subprogram under PARENT whose code holds PC, searched
 * through namespaces and types (DEPTH levels of them at most). */
static bool subprogram_at(Dwarf_Die *parent, Dwarf_Addr pc, Dwarf_Die *out, int depth)
{
	Dwarf_Die d;
	if (depth > 16 || dwarf_child(parent, &d) != 0)
		return false;
	do {
		switch (dwarf_tag(&d)) {
		case DW_TAG_subprogram:
			if (dwarf_haspc(&d, pc) > 0) {
				*out = d;
				return true;
			}
			break;
		case DW_TAG_namespace:
		case DW_TAG_module:
		case DW_TAG_structure_type:
		case DW_TAG_class_type:
		case DW_TAG_union_type:
			if (subprogram_at(&d, pc, out, depth + 1))
				return true;
			break;
		}
	} while (dwarf_siblingof(&d, &d) == 0);
	return false;
}

/* dwarf_getscopes() for a function that is not at the top of its CU.
 * elfutils (0.188) does not look inside a DW_TAG_namespace for the
 * scopes at a PC (a namespace has no PC of its own, so it is pruned),
 * and Rust puts every function in one (C++ puts only declarations
 * there): for Rust code it finds nothing, and no inlined frame would be
 * shown where perf and addr2line -i show them.  Here: the subprogram
 * holding PC, then the blocks and inlined instances inside it that hold
 * PC, all concrete.  Same contract as dwarf_getscopes (innermost first,
 * *SCOPES malloc'd, the count returned, the subprogram last). */
static int scopes_in_namespaces(Dwarf_Die *cu, Dwarf_Addr pc, Dwarf_Die **scopes)
{
	Dwarf_Die chain[2 * MAX_INLINE], d;
	int n = 0;
	if (!subprogram_at(cu, pc, &chain[n++], 0))
		return 0;
	for (bool deeper = true; deeper && n < (int)(sizeof(chain) / sizeof(chain[0]));) {
		deeper = false;
		if (dwarf_child(&chain[n - 1], &d) != 0)
			break;
		do {
			int tag = dwarf_tag(&d);
			if ((tag == DW_TAG_inlined_subroutine || tag == DW_TAG_lexical_block) &&
			    dwarf_haspc(&d, pc) > 0) {
				chain[n++] = d;
				deeper = true;
				break;
			}
		} while (dwarf_siblingof(&d, &d) == 0);
	}
	*scopes = xcalloc((size_t)n, sizeof(**scopes));
	for (int i = 0; i < n; i++)
		(*scopes)[i] = chain[n - 1 - i];
	return n;
}

/* Inlined frames at ADDR, innermost first, as eu-stack -i and addr2line
 * -i show them: the innermost gets the line table's file:line; each outer
 * one gets the DW_AT_call_file/call_line of the inlined instance inside
 * it.  Pushes all but the outermost (the real function, whose name comes
 * from the symbol table) and returns its file:line through FILE/LINE. */
static void push_inlined(struct symbolizer *s, Dwfl_Module *mod, uint64_t addr,
			 const char **file, int *line)
{
	Dwarf_Addr bias;
	Dwarf_Die *cu = dwfl_module_addrdie(mod, addr, &bias);
	Dwarf_Die *scopes = NULL;
	if (!cu)
		return;
	int n = dwarf_getscopes(cu, addr - bias, &scopes);
	bool concrete = false;
	if (n <= 0) {
		free(scopes);
		scopes = NULL;
		n = scopes_in_namespaces(cu, addr - bias, &scopes);
		concrete = true;
	}
	for (int i = 0, depth = 0; i < n && depth < MAX_INLINE; i++) {
		int tag = dwarf_tag(&scopes[i]);
		if (tag == DW_TAG_subprogram)
			break;
		if (tag != DW_TAG_inlined_subroutine)
			continue;
		push(s, die_name(s, &scopes[i]) ?: "[inlined]", *file, *line);
		*file = call_file(cu, &scopes[i]);
		*line = call_line(&scopes[i]);
		depth++;
		if (concrete)
			continue;
		/* dwarf_getscopes continues past the innermost inlined instance
		 * with the scopes of its abstract definition (where its variables
		 * are declared), not with the code it was inlined into: a nested
		 * inline would be lost.  The concrete chain, every DIE from this
		 * instance up to the CU, is dwarf_getscopes_die's. */
		Dwarf_Die inl = scopes[i], *chain = NULL;
		free(scopes);
		n = dwarf_getscopes_die(&inl, &chain);
		scopes = chain;
		i = 0;
		concrete = true;
	}
	free(scopes);
}

/* True if the function starting at START is the entry point of an
 * executable (ET_EXEC, or ET_DYN with an interpreter).  A stripped program
 * keeps no symbol for it, yet every stack of its main thread ends there:
 * it is "_start" as the linker names it.  A shared library's entry point
 * is not where any thread starts. */
static bool is_entry(Dwfl_Module *mod, uint64_t start)
{
	Dwarf_Addr bias;
	Elf *elf = dwfl_module_getelf(mod, &bias);
	GElf_Ehdr ehdr;
	size_t nph;
	if (!elf || !gelf_getehdr(elf, &ehdr) || ehdr.e_entry == 0 ||
	    ehdr.e_entry + bias != start || elf_getphdrnum(elf, &nph) != 0)
		return false;
	if (ehdr.e_type == ET_EXEC)
		return true;
	for (size_t i = 0; i < nph; i++) {
		GElf_Phdr ph;
		if (gelf_getphdr(elf, (int)i, &ph) && ph.p_type == PT_INTERP)
			return true;
	}
	return false;
}

/* ADDR's function, file and line from M's .gopclntab, if M is a Go
 * binary that has one (stripped or not). */
static bool go_lookup(struct symbolizer *s, const struct module *m, uint64_t addr,
		      const char **func, const char **file, int *line)
{
	struct go_module *g = NULL;
	for (size_t i = 0; i < s->ngo && !g; i++)
		if (s->go[i].m == m)
			g = &s->go[i];
	if (!g || !m->usable || !m->image)
		return false;
	if (!g->tried) {
		g->tried = true;
		g->tab = gopclntab__from_elf(m->image, m->image_len);
	}
	return g->tab && gopclntab__lookup(g->tab, addr - m->bias, func, file, line) == 0 && **func;
}

static struct symcache *symcache_of(struct symbolizer *s, Dwfl_Module *mod)
{
	if (s->no_symcache)
		return NULL;
	for (size_t i = 0; i < s->nsymcaches; i++)
		if (s->symcaches[i].mod == mod)
			return s->symcaches[i].c;
	s->symcaches = xrealloc(s->symcaches, (s->nsymcaches + 1) * sizeof(*s->symcaches));
	s->symcaches[s->nsymcaches].mod = mod;
	return s->symcaches[s->nsymcaches++].c = symcache__new(mod);
}

/* Where the function holding ADDR starts (its FDE's start, from M's
 * search table), when an FDE covers ADDR: asked of libdwfl's own reader of
 * MOD's .eh_frame, once it was found sane (module__eh_frame_sane), never
 * of the module's, which is the unwinder's (the sampler's thread may be
 * unwinding through it as this names: run/periods.c). */
static bool func_start(struct symbolizer *s, Dwfl_Module *mod, const struct module *m,
		       uint64_t addr, uint64_t *start)
{
	if (!mod || !m)
		return false;
	size_t i;
	for (i = 0; i < s->ncfis && s->cfis[i].mod != mod; i++)
		;
	if (i == s->ncfis) {
		Dwarf_Addr b;
		s->cfis = xrealloc(s->cfis, (s->ncfis + 1) * sizeof(*s->cfis));
		s->cfis[s->ncfis].mod = mod;
		s->cfis[s->ncfis++].sane = module__eh_frame_sane(dwfl_module_getelf(mod, &b)) ? 1 : -1;
	}
	Dwarf_Addr bias;
	Dwarf_CFI *cfi = s->cfis[i].sane > 0 ? dwfl_module_eh_cfi(mod, &bias) : NULL;
	Dwarf_Frame *frame = NULL;
	if (!cfi || !module__fde_floor(m, addr, start))
		return false;
	/* FDEs do not overlap: if one covers ADDR at all, it is the last one
	 * starting below it.  (libdw's frame is a row of the CFI table, whose
	 * range is not the function's: only whether there is one counts.) */
	int ok = dwarf_cfi_addrframe(cfi, addr - bias, &frame) == 0;
	free(frame);
	return ok;
}

/* ADDR's symbol in MOD (libdwfl's answer, or the symcache's copy of it),
 * *OFF the offset into it. */
static const char *addr_symbol(struct symbolizer *s, Dwfl_Module *mod, uint64_t addr, GElf_Off *off)
{
	struct symcache *c = symcache_of(s, mod);
	uint64_t o;
	const char *name;
	int known = symcache__find(c, addr, &name, &o);
	if (known >= 0) {
		*off = o;
		return name;
	}
	GElf_Sym sym;
	name = dwfl_module_addrinfo(mod, addr, off, &sym, NULL, NULL, NULL);
	if (name && c)
		symcache__keep(c, addr - *off, sym.st_size, name);
	return name;
}

static void resolve(struct symbolizer *s, uint64_t addr)
{
	char buf[600];
	Dwfl_Module *mod = dwfl_addrmodule(s->dwfl, addr);
	const struct module *m = modules__find(s->ms, addr);
	const char *file = NULL, *name = NULL;
	int line = 0;
	if (mod) {
		GElf_Off off;
		name = demangled(s, addr_symbol(s, mod, addr, &off));
		/* A return address at the very first byte of a function is a
		 * signal trampoline's (sa_restorer, e.g. libc's __restore_rt:
		 * the kernel "returns" there, no call precedes it); looked up
		 * at pc - 1 it falls in the padding before the function, where
		 * no symbol is.  Its FDE starts one byte early for this. */
		if (!name) {
			const char *next = addr_symbol(s, mod, addr + 1, &off);
			if (next && off == 0)
				name = demangled(s, next);
		}
		Dwfl_Line *l = dwfl_module_getsrc(mod, addr);
		if (l)
			file = dwfl_lineinfo(l, NULL, &line, NULL, NULL, NULL);
		push_inlined(s, mod, addr, &file, &line);
	}
	/* Go code is named as Go names it, from .gopclntab: the same names
	 * whether the binary is stripped or not ("runtime.usleep", where
	 * .symtab says "runtime.usleep.abi0"); DWARF's lines when present. */
	const char *gofunc, *gofile;
	int goline;
	if (m && go_lookup(s, m, addr, &gofunc, &gofile, &goline)) {
		name = str(s, gofunc);
		if (!file) {
			file = gofile;
			line = goline;
		}
	}
	if (!name) {
		/* No symbol: perf's convention, module and offset into it, so the
		 * address can be looked up later (addr2line -e MODULE OFFSET).  The
		 * offset is where the function starts, when its FDE says, so that
		 * all the samples of one stripped function make one frame, not one
		 * per instruction (pprof keeps each address in its location). */
		uint64_t fn = addr;
		if (func_start(s, mod, m, addr, &fn) && is_entry(mod, fn))
			name = str(s, "_start");
		else if (m)
			snprintf(buf, sizeof(buf), "%s+0x%" PRIx64, m->name, fn - m->bias);
		else
			snprintf(buf, sizeof(buf), "[unknown]+0x%" PRIx64, addr);
		/* JIT code: in no module, or in a mapping with no ELF image
		 * (PHP's opcache JIT in "/dev/zero (deleted)", a memfd). */
		if (!name) {
			name = !m || m->no_elf ? jit_name(s, addr) : NULL;
			name = name ? name : str(s, buf);
		}
	}
	push(s, name, file, line);
}

size_t symbolizer__lookup(struct symbolizer *s, uint64_t addr, const struct sym_frame **frames)
{
	naming_ms = s->ms;
	naming_pid = modules__pid(s->ms);
	int added;
	int64_t id = intern__add(s->addrs, &addr, sizeof(addr), &added);
	if (id < 0) {
		static const struct sym_frame oom = { "[unknown]", NULL, 0 };
		*frames = &oom;
		return 1;
	}
	if (added) {
		if (s->nentries == s->entries_cap) {
			s->entries_cap = s->entries_cap ? s->entries_cap * 2 : 256;
			s->entries = xrealloc(s->entries, s->entries_cap * sizeof(*s->entries));
		}
		size_t first = s->nframes;
		s->used_jit = false;
		resolve(s, addr);
		s->entries[s->nentries++] = (struct entry){ first, s->nframes - first, s->used_jit,
							    s->jit ? perfmap__generation(s->jit) : 0 };
	}
	struct entry *e = &s->entries[id];
	/* Named from the map as it was: once it changed (code compiled since,
	 * a map that appeared), named again.  Its one frame is replaced in
	 * place; names of other addresses stay as they are. */
	if (e->jit) {
		if (s->jit_check) {
			s->jit_check = false;
			perfmap__refresh(s->jit);
		}
		if (e->jit_gen != perfmap__generation(s->jit)) {
			size_t first = s->nframes;
			resolve(s, addr);
			if (s->nframes - first == e->n) {
				memcpy(&s->frames[e->first], &s->frames[first], e->n * sizeof(*s->frames));
				s->nframes = first;
			} else {
				e->first = first;
				e->n = s->nframes - first;
			}
			e->jit_gen = perfmap__generation(s->jit);
		}
	}
	*frames = &s->frames[e->first];
	return e->n;
}

void symbolizer__new_pass(struct symbolizer *s)
{
	s->jit_check = true;
}
