#include "module/modules.h"

#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <inttypes.h>
#include <stdbool.h>
#include <libelf.h>
#include <elfutils/libdwelf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "module/internal.h"
#include "util/remote.h"
#include "util/strbuf.h"
#include "util/text.h"
#include "util/xalloc.h"

struct modules {
	pid_t pid;
	uint64_t exe_inode;             /* of /proc/PID/exe, 0 if unknown */
	struct module **mods;           /* sorted by start */
	size_t n, cap;
	uint64_t version;               /* changes made to the table */
	/* modules__scan_replaced(): where the scan found a file mapped over
	 * modules of the table (their ranges), or more than it could hold. */
	uint64_t (*replaced)[2];
	size_t nreplaced, replaced_max;
};

int maps__parse_line(const char *line, struct map_entry *e)
{
	char perms[8];
	int pathpos = -1;
	memset(e, 0, sizeof(*e) - sizeof(e->path));
	e->path[0] = '\0';
	if (sscanf(line, "%" SCNx64 "-%" SCNx64 " %7s %" SCNx64 " %x:%x %" SCNu64 " %n",
		   &e->start, &e->end, perms, &e->offset, &e->major, &e->minor,
		   &e->inode, &pathpos) < 7)
		return -EINVAL;
	if (e->end <= e->start || strlen(perms) != 4)
		return -EINVAL;
	e->exec = perms[2] == 'x';
	if (pathpos > 0) {
		const char *p = line + pathpos;
		size_t len = strcspn(p, "\n");
		if (len >= sizeof(e->path))
			return -EINVAL;
		memcpy(e->path, p, len);
		e->path[len] = '\0';
	}
	return 0;
}

struct modules *modules__new(pid_t pid)
{
	struct modules *ms = xcalloc(1, sizeof(*ms));
	elf_version(EV_CURRENT);
	ms->pid = pid;
	return ms;
}

static void module_free(struct module *m)
{
	if (!m || __atomic_sub_fetch(&m->refs, 1, __ATOMIC_ACQ_REL) > 0)
		return;         /* another table (generation, snapshot) still has it */
	if (m->image && m->fd >= 0)
		munmap((void *)m->image, m->image_len);
	else
		free((void *)m->image);
	if (m->fd >= 0)
		close(m->fd);
	unwind_info_free(m->unwind);
	free(m->segs);
	free(m->path);
	free(m->shown);
	free(m);
}

struct modules *modules__copy(const struct modules *from, pid_t pid)
{
	struct modules *ms = modules__new(pid);
	ms->exe_inode = from->exe_inode;
	ms->cap = from->n ? from->n : 1;
	ms->mods = xcalloc(ms->cap, sizeof(*ms->mods));
	for (size_t i = 0; i < from->n; i++) {
		ms->mods[i] = from->mods[i];
		__atomic_add_fetch(&ms->mods[i]->refs, 1, __ATOMIC_RELAXED);
	}
	ms->n = from->n;
	return ms;
}

struct modules *modules__snapshot(const struct modules *from)
{
	static uint64_t snapshots;
	struct modules *ms = modules__copy(from, from->pid);
	ms->version = (1ull << 63) | ++snapshots;
	return ms;
}

void modules__free(struct modules *ms)
{
	if (!ms)
		return;
	for (size_t i = 0; i < ms->n; i++)
		module_free(ms->mods[i]);
	free(ms->mods);
	free(ms);
}

const struct module *modules__main(const struct modules *ms)
{
	for (size_t i = 0; i < ms->n; i++)
		if (ms->exe_inode && ms->mods[i]->inode == ms->exe_inode)
			return ms->mods[i];
	return NULL;
}

size_t modules__count(const struct modules *ms)
{
	return ms->n;
}

pid_t modules__pid(const struct modules *ms)
{
	return ms->pid;
}

const struct module *modules__at(const struct modules *ms, size_t i)
{
	return ms->mods[i];
}

const struct module *modules__find(const struct modules *ms, uint64_t addr)
{
	size_t lo = 0, hi = ms->n;
	while (lo < hi) {
		size_t mid = (lo + hi) / 2;
		const struct module *m = ms->mods[mid];
		if (addr < m->start)
			hi = mid;
		else if (addr >= m->end)
			lo = mid + 1;
		else
			return m;
	}
	return NULL;
}

/* Opens the file behind a mapping the way the target sees it: map_files
 * reaches deleted and replaced files, /proc/PID/root the target's mount
 * namespace.  The inode must match what maps says, or we would read some
 * other file's unwind tables. */
static int open_mapped_file(pid_t pid, const struct map_entry *e)
{
	char p[4200];
	struct stat st;
	const char *tries[3];
	char mf[128], rootp[4200];
	snprintf(mf, sizeof(mf), "/proc/%d/map_files/%" PRIx64 "-%" PRIx64, pid, e->start, e->end);
	snprintf(rootp, sizeof(rootp), "/proc/%d/root%s", pid, e->path);
	tries[0] = mf;
	tries[1] = rootp;
	tries[2] = e->path;
	for (int i = 0; i < 3; i++) {
		snprintf(p, sizeof(p), "%s", tries[i]);
		int fd = open(p, O_RDONLY | O_CLOEXEC);
		if (fd < 0)
			continue;
		if (fstat(fd, &st) == 0 && st.st_ino == e->inode && S_ISREG(st.st_mode))
			return fd;
		close(fd);
	}
	return -1;
}

static bool plain_word(const char *s, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (!isalnum((unsigned char)s[i]) && (!s[i] || !strchr("/_-=+.", s[i])))
			return false;
	return true;
}

/* A Go program's build ID: the "Go" note of type 4 (Go's linker writes it
 * in .note.go.buildid, inside a PT_NOTE segment), a string such as
 * "actionID/contentID".  Go binaries have no GNU build ID unless linked
 * externally; this one is what `go tool buildid` prints and what Go's own
 * pprof puts in its mappings.  Kept only if it is a plain ASCII word. */
static void go_build_id(struct module *m, Elf *elf, size_t phnum)
{
	for (size_t i = 0; i < phnum; i++) {
		GElf_Phdr ph;
		if (!gelf_getphdr(elf, (int)i, &ph) || ph.p_type != PT_NOTE)
			continue;
		Elf_Data *d = elf_getdata_rawchunk(elf, (int64_t)ph.p_offset, ph.p_filesz, ELF_T_NHDR);
		GElf_Nhdr nh;
		size_t off = 0, name_off, desc_off, next;
		while (d && (next = gelf_getnote(d, off, &nh, &name_off, &desc_off)) > 0) {
			const char *desc = (const char *)d->d_buf + desc_off;
			if (nh.n_type == 4 && (nh.n_namesz == 3 || nh.n_namesz == 4) &&
			    memcmp((const char *)d->d_buf + name_off, "Go", 3) == 0 &&
			    nh.n_descsz > 0 && nh.n_descsz < sizeof(m->build_id) &&
			    plain_word(desc, nh.n_descsz)) {
				memcpy(m->build_id, desc, nh.n_descsz);
				m->build_id[nh.n_descsz] = '\0';
				return;
			}
			off = next;
		}
	}
}

static void load_elf_info(struct module *m, Elf *elf, const struct map_entry *first)
{
	size_t phnum;
	long pagesz = sysconf(_SC_PAGESIZE);
	int have_bias = 0;
	if (elf_kind(elf) != ELF_K_ELF || elf_getphdrnum(elf, &phnum) != 0)
		return;
	m->segs = xcalloc(phnum, sizeof(*m->segs));
	uint64_t eh_vaddr = 0;
	for (size_t i = 0; i < phnum; i++) {
		GElf_Phdr ph;
		if (!gelf_getphdr(elf, (int)i, &ph))
			continue;
		if (ph.p_type == PT_GNU_EH_FRAME)
			eh_vaddr = ph.p_vaddr;
		if (ph.p_type != PT_LOAD)
			continue;
		m->segs[m->nsegs++] = (struct segment){ ph.p_vaddr, ph.p_filesz, ph.p_offset };
		uint64_t off_al = ph.p_offset & ~(uint64_t)(pagesz - 1);
		if (!have_bias && first && off_al == first->offset) {
			m->bias = first->start - (ph.p_vaddr & ~(uint64_t)(pagesz - 1));
			have_bias = 1;
		}
	}
	if (!first && m->nsegs) {          /* vDSO: mapped from its first segment */
		m->bias = m->start - (m->segs[0].vaddr & ~(uint64_t)(pagesz - 1));
		have_bias = 1;
	}
	if (eh_vaddr)
		m->eh_frame_hdr = eh_vaddr + m->bias;
	const void *id;
	ssize_t idlen = dwelf_elf_gnu_build_id(elf, &id);
	for (ssize_t i = 0; i < idlen && i < 20; i++)
		sprintf(m->build_id + 2 * i, "%02x", ((const unsigned char *)id)[i]);
	if (idlen <= 0)
		go_build_id(m, elf, phnum);
	m->usable = have_bias;
}

static void load_file_image(struct module *m, pid_t pid, const struct map_entry *first)
{
	struct stat st;
	m->fd = open_mapped_file(pid, first);
	/* What only a JIT maps: an anonymous file (memfd), shared anonymous
	 * memory ("/dev/zero (deleted)"), System V shared memory. */
	m->no_elf = strncmp(first->path, "/memfd:", 7) == 0 ||
		    strncmp(first->path, "/dev/zero", 9) == 0 || strncmp(first->path, "/SYSV", 5) == 0;
	if (m->fd < 0 || fstat(m->fd, &st) != 0 || st.st_size == 0)
		return;
	char head[4] = { 0 };
	if (pread(m->fd, head, sizeof(head), 0) != (ssize_t)sizeof(head) ||
	    memcmp(head, "\177ELF", 4) != 0) {
		m->no_elf = 1;          /* not mapped as an image: not read whole */
		return;
	}
	void *img = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE, m->fd, 0);
	if (img == MAP_FAILED)
		return;
	m->image = img;
	m->image_len = (size_t)st.st_size;
	Elf *elf = elf_memory((char *)img, m->image_len);
	if (elf) {
		load_elf_info(m, elf, first);
		elf_end(elf);
	}
}

static void load_vdso_image(struct module *m, pid_t pid)
{
	size_t len = m->end - m->start;
	unsigned char *buf = xmalloc(len);
	if (remote__read(pid, m->start, buf, len) < 0) {
		free(buf);
		return;
	}
	m->image = buf;
	m->image_len = len;
	Elf *elf = elf_memory((char *)buf, len);
	if (elf) {
		load_elf_info(m, elf, NULL);
		elf_end(elf);
	}
}

static struct module *module_new(pid_t pid, const struct map_entry *first, uint64_t end)
{
	struct module *m = xcalloc(1, sizeof(*m));
	m->refs = 1;
	m->path = xstrdup(first->path);
	/* A file name is any bytes but '/' and NUL, chosen by whoever named
	 * the library: shown only once cleaned. */
	size_t len = strlen(m->path);
	m->shown = xmalloc(len + 1);
	text__clean(m->shown, len + 1, m->path, len);
	const char *slash = strrchr(m->shown, '/');
	m->name = slash ? slash + 1 : m->shown;
	m->start = first->start;
	m->end = end;
	m->inode = first->inode;
	m->fd = -1;
	m->unwind = unwind_info_new();
	if (strcmp(first->path, "[vdso]") == 0)
		load_vdso_image(m, pid);
	else
		load_file_image(m, pid, first);
	return m;
}

static int same_module(const struct module *m, const struct map_entry *e)
{
	return m->start == e->start && m->inode == e->inode && strcmp(m->path, e->path) == 0;
}

/* Inserts M in start order, first dropping any module it overlaps
 * (the address range now belongs to another file: dlclose + dlopen). */
static void insert_module(struct modules *ms, struct module *m)
{
	size_t w = 0;
	ms->version++;
	for (size_t i = 0; i < ms->n; i++) {
		struct module *o = ms->mods[i];
		if (o->start < m->end && m->start < o->end)
			module_free(o);
		else
			ms->mods[w++] = o;
	}
	ms->n = w;
	if (ms->n == ms->cap) {
		ms->cap = ms->cap ? ms->cap * 2 : 32;
		ms->mods = xrealloc(ms->mods, ms->cap * sizeof(*ms->mods));
	}
	size_t pos = ms->n;
	while (pos > 0 && ms->mods[pos - 1]->start > m->start) {
		ms->mods[pos] = ms->mods[pos - 1];
		pos--;
	}
	ms->mods[pos] = m;
	ms->n++;
}

static int is_module_path(const char *path)
{
	return path[0] == '/' || strcmp(path, "[vdso]") == 0;
}

/* Mappings of one file are consecutive in /proc/PID/maps; a run of them
 * with at least one executable mapping is one module. */
/* How a run of mappings of one file compares with the table. */
enum run_kind { RUN_SAME, RUN_NEW, RUN_REPLACES };

static enum run_kind classify(const struct modules *ms, const struct map_entry *run, uint64_t end)
{
	const struct module *old = modules__find(ms, run->start);
	if (old)
		return same_module(old, run) ? RUN_SAME : RUN_REPLACES;
	for (size_t i = 0; i < ms->n; i++)
		if (ms->mods[i]->start < end && run->start < ms->mods[i]->end)
			return RUN_REPLACES;
	return RUN_NEW;
}

/* ---- reading the maps -----------------------------------------------------
 * A scan (modules__scan) runs every SCAN_INTERVAL of sampling, and a
 * process with a thousand threads has over two thousand lines of maps,
 * nearly all of them thread stacks and their guard pages: formatting them
 * (the kernel) and parsing them (sscanf) was a fifth of the profiler's
 * CPU with a thousand idle threads.  So a scan asks the kernel for the
 * file-backed mappings alone, with the PROCMAP_QUERY ioctl on the maps
 * file (Linux 6.11 and later): one call per mapping of a file, none for
 * anonymous ones.  Older kernels answer ENOTTY and the text is read, with
 * the lines that name no file skipped before any parsing.  A refresh
 * (which also needs [vdso], not file-backed) always reads the text.
 * CPROF_MAPS_TEXT=1 makes scans read the text too (for the tests). */

/* include/uapi/linux/fs.h, Linux 6.11: not in older headers. */
#define MAPS_QUERY_IOCTL 0xc0686611u    /* _IOWR('f', 17, struct maps_query) */
#define MAPS_QUERY_EXECUTABLE 0x04
#define MAPS_QUERY_COVERING_OR_NEXT 0x10
#define MAPS_QUERY_FILE_BACKED 0x20
struct maps_query {
	uint64_t size, query_flags, query_addr;
	uint64_t vma_start, vma_end, vma_flags, vma_page_size, vma_offset, inode;
	uint32_t dev_major, dev_minor, vma_name_size, build_id_size;
	uint64_t vma_name_addr, build_id_addr;
};

static int query_unsupported;   /* the kernel said ENOTTY once */

struct maps_reader {
	FILE *f;                        /* text, or NULL */
	int fd;                         /* the maps file, for the ioctl */
	uint64_t next;                  /* ioctl: where the next query starts */
	char line[4400];
};

static int reader_open(struct maps_reader *r, pid_t pid, int files_only)
{
	char fn[64];
	snprintf(fn, sizeof(fn), "/proc/%d/maps", pid);
	r->f = NULL;
	r->next = 0;
	r->fd = open(fn, O_RDONLY | O_CLOEXEC);
	if (r->fd < 0)
		return -errno;
	static int text_only = -1;      /* read once: setenv() may run beside (debuginfod) */
	if (text_only < 0)
		text_only = getenv("CPROF_MAPS_TEXT") != NULL;
	if (files_only && !query_unsupported && !text_only)
		return 0;
	r->f = fdopen(r->fd, "r");
	if (!r->f) {
		int e = -errno;
		close(r->fd);
		return e;
	}
	setvbuf(r->f, NULL, _IOFBF, 64 * 1024);  /* fewer reads: each one walks to its place again */
	return 0;
}

static void reader_close(struct maps_reader *r)
{
	if (r->f)
		fclose(r->f);
	else
		close(r->fd);
}

/* The maps text writes a newline in a file name as "\\012" (seq_path):
 * names from the ioctl are made the same, to compare with the table. */
static int escape_newlines(char *path, size_t size)
{
	size_t len = strlen(path), nl = 0;
	for (size_t i = 0; i < len; i++)
		nl += path[i] == '\n';
	if (!nl)
		return 0;
	if (len + 3 * nl >= size)
		return -1;
	for (size_t i = len + 1, j = len + 1 + 3 * nl; i-- > 0;) {
		if (path[i] != '\n') {
			path[--j] = path[i];
			continue;
		}
		memcpy(&path[j -= 4], "\\012", 4);
	}
	return 0;
}

/* The next file-backed mapping through the ioctl: 1, 0 at the end, -1 to
 * fall back to the text (no ioctl here: the caller starts over). */
static int query_next(struct maps_reader *r, struct map_entry *e)
{
	struct maps_query q = { .size = sizeof(q),
				.query_flags = MAPS_QUERY_COVERING_OR_NEXT | MAPS_QUERY_FILE_BACKED,
				.query_addr = r->next,
				.vma_name_size = sizeof(e->path),
				.vma_name_addr = (uint64_t)(uintptr_t)e->path };
	if (ioctl(r->fd, MAPS_QUERY_IOCTL, &q) < 0) {
		if (errno == ENOENT)
			return 0;
		if (errno == ENOTTY || errno == EINVAL)
			query_unsupported = 1;
		return -1;
	}
	/* (field by field: the name is already in E->path) */
	e->start = q.vma_start;
	e->end = q.vma_end;
	e->offset = q.vma_offset;
	e->inode = q.inode;
	e->major = q.dev_major;
	e->minor = q.dev_minor;
	e->exec = (q.vma_flags & MAPS_QUERY_EXECUTABLE) != 0;
	if (q.vma_name_size == 0)
		e->path[0] = '\0';
	r->next = q.vma_end;
	if (q.vma_end <= q.vma_start)
		return -1;
	return escape_newlines(e->path, sizeof(e->path)) < 0 ? -1 : 1;
}

/* The next mapping: 1 (E filled; anonymous ones have an empty path and
 * may be skipped: E->start is 0 then), 0 at the end, -1 on a malformed
 * line or a failed query. */
static int reader_next(struct maps_reader *r, struct map_entry *e)
{
	if (!r->f)
		return query_next(r, e);
	if (!fgets(r->line, sizeof(r->line), r->f))
		return 0;
	/* A line that names no file (no '/', no '[') is no module's. */
	if (!strpbrk(r->line, "/[")) {
		e->start = e->end = 0;
		e->path[0] = '\0';
		return 1;
	}
	return maps__parse_line(r->line, e) == 0 ? 1 : -1;
}

/* A scan found a file over [START, END): the ranges of the modules there. */
static void note_replaced(struct modules *ms, uint64_t start, uint64_t end)
{
	for (size_t i = 0; i < ms->n; i++) {
		const struct module *o = ms->mods[i];
		if (o->start >= end || start >= o->end)
			continue;
		if (ms->nreplaced < ms->replaced_max) {
			ms->replaced[ms->nreplaced][0] = o->start;
			ms->replaced[ms->nreplaced][1] = o->end;
		}
		ms->nreplaced++;
	}
}

/* Reads PID's maps (FILES_ONLY: the file-backed mappings, through the
 * ioctl where the kernel has it); with APPLY, adds each module not in the
 * table (and drops those it overlaps).  Returns the largest change seen
 * (0 same, 1 added, 2 replaced), or -errno. */
static int walk(struct modules *ms, pid_t pid, int apply, int files_only)
{
	if (!apply)
		ms->nreplaced = 0;
	struct maps_reader *r = xmalloc(sizeof(*r));
	int e0 = reader_open(r, pid, files_only);
	if (e0 < 0) {
		free(r);
		return e0;
	}
	struct stat st;
	char exe[64];
	snprintf(exe, sizeof(exe), "/proc/%d/exe", pid);
	if (apply && stat(exe, &st) == 0)
		ms->exe_inode = st.st_ino;
	/* E zeroed: the ioctl writes the name through a pointer, which tools
	 * such as valgrind cannot see. */
	struct map_entry *run = xmalloc(sizeof(*run)), *e = xcalloc(1, sizeof(*e));
	int have_run = 0, run_exec = 0, change = MODULES_SAME, got;
	uint64_t run_end = 0;
	for (;;) {
		got = reader_next(r, e);
		int ok = got == 1 && e->end > e->start;
		int same = ok && have_run && e->inode == run->inode &&
			   strcmp(e->path, run->path) == 0 && e->start == run_end;
		if (same) {
			run_end = e->end;
			run_exec |= e->exec;
			continue;
		}
		if (have_run && run_exec) {
			enum run_kind k = classify(ms, run, run_end);
			if (k != RUN_SAME && apply)
				insert_module(ms, module_new(pid, run, run_end));
			if (k == RUN_REPLACES && !apply)
				note_replaced(ms, run->start, run_end);
			if (k == RUN_REPLACES)
				change = MODULES_REPLACED;
			else if (k == RUN_NEW && change == MODULES_SAME)
				change = MODULES_ADDED;
		}
		have_run = 0;
		if (got <= 0 && !(got < 0 && r->f))
			break;
		if (ok && is_module_path(e->path)) {
			*run = *e;
			have_run = 1;
			run_exec = e->exec;
			run_end = e->end;
		}
	}
	reader_close(r);
	free(run);
	free(e);
	free(r);
	/* A query that failed part-way: the text says it all. */
	if (got < 0 && files_only && !apply)
		return walk(ms, pid, apply, 0);
	return change;
}

static int walk_maps(struct modules *ms, pid_t pid, int apply)
{
	return walk(ms, pid, apply, !apply);
}

int modules__refresh(struct modules *ms, pid_t pid)
{
	return walk_maps(ms, pid, 1);
}

int modules__scan(const struct modules *ms, pid_t pid)
{
	return walk_maps((struct modules *)ms, pid, 0);
}

int modules__scan_replaced(const struct modules *ms, pid_t pid, uint64_t (*ranges)[2], size_t max,
			   size_t *n)
{
	struct modules *w = (struct modules *)ms;
	w->replaced = ranges;
	w->replaced_max = max;
	w->nreplaced = 0;
	int r = walk_maps(w, pid, 0);
	*n = w->nreplaced;
	w->replaced = NULL;
	w->replaced_max = w->nreplaced = 0;
	return r;
}

uint64_t modules__version(const struct modules *ms)
{
	return ms->version;
}
