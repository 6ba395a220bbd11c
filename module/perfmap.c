#include "module/perfmap.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "util/intern.h"
#include "util/text.h"
#include "util/xalloc.h"

#define LINE_MAX_LEN 4096               /* longer lines are skipped */
#define CHUNK (64u << 10)

struct pm_entry {
	uint64_t start, end;
	uint64_t seq;                   /* the line's order: later wins */
	uint64_t maxend;                /* the largest end of entries [0, this] */
	const char *name;
};

struct perfmap {
	pid_t pid;                      /* 0: PATH, unchecked */
	bool notes;
	char path[128];                 /* the file being read ("" none yet) */
	int fd;
	dev_t dev;
	ino_t ino;
	off_t size;                     /* the file's size at the last read */
	struct timespec mtime;
	uint64_t off;                   /* consumed: up to the last newline */
	char tail[64];                  /* the last bytes consumed, before off */
	size_t tail_len;
	bool skipping;                  /* inside a line too long to keep */
	bool capped;                    /* PERFMAP_MAX reached (noted) */
	size_t max;
	struct pm_entry *e;
	size_t n, cap;
	uint64_t seq, generation;
	struct intern *names;
	char noted[256];                /* the last note printed */
	char *buf;
};

static void note(struct perfmap *pm, const char *msg)
{
	if (!pm->notes || strcmp(pm->noted, msg) == 0)
		return;
	snprintf(pm->noted, sizeof(pm->noted), "%s", msg);
	fprintf(stderr, "cprof-attach: note: %s\n", msg);
}

/* What /proc/PID/status says of the target: its PID in its own namespace
 * (the last NSpid) and its real and effective user IDs. */
struct target_ids {
	long nspid;
	uid_t uid[2];
	bool have_uid;
};

static void target_ids(pid_t pid, struct target_ids *t)
{
	char fn[64], line[256];
	unsigned long r, e;
	t->nspid = pid;
	t->have_uid = false;
	snprintf(fn, sizeof(fn), "/proc/%d/status", (int)pid);
	FILE *f = fopen(fn, "re");
	while (f && fgets(line, sizeof(line), f)) {
		if (strncmp(line, "NSpid:", 6) == 0) {
			char *last = strrchr(line, '\t');
			if (last)
				t->nspid = strtol(last + 1, NULL, 10);
		} else if (sscanf(line, "Uid: %lu %lu", &r, &e) == 2) {
			t->uid[0] = (uid_t)r;
			t->uid[1] = (uid_t)e;
			t->have_uid = true;
		}
	}
	if (f)
		fclose(f);
}

/* perf's rule: a map is trusted if root or its own user wrote it; the
 * target's user is the JIT's.  Another user's file could rename frames,
 * and root reads whatever a link points to. */
static bool trusted_owner(const struct stat *st, const struct target_ids *t)
{
	return st->st_uid == 0 || st->st_uid == geteuid() ||
	       (t->have_uid && (st->st_uid == t->uid[0] || st->st_uid == t->uid[1]));
}

/* Opens the map at PATH if it may be read: a regular file (not a link:
 * O_NOFOLLOW; not a FIFO, which would block us: O_NONBLOCK, then
 * fstat) of one name, with a trusted owner (T NULL: any).  -ENOENT when
 * there is none, -EPERM (and a note) when there is one we refuse. */
static int open_trusted(struct perfmap *pm, const char *path, const struct target_ids *t,
			struct stat *st)
{
	int fd = open(path, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
	const char *why = NULL;
	char buf[64], msg[256];
	if (fd < 0) {
		if (errno != ELOOP)
			return -ENOENT;
		why = "a symbolic link";
	} else if (fstat(fd, st) != 0 || !S_ISREG(st->st_mode)) {
		why = "not a regular file";
	} else if (t && st->st_nlink != 1) {
		/* A second name of some other file, maybe root's (a hard
		 * link keeps the owner of the file it names). */
		why = "a hard link";
	} else if (t && !trusted_owner(st, t)) {
		snprintf(buf, sizeof(buf), "owned by uid %lu, not root nor the target's user",
			 (unsigned long)st->st_uid);
		why = buf;
	}
	if (!why)
		return fd;
	snprintf(msg, sizeof(msg), "ignoring %s: %s", path, why);
	note(pm, msg);
	if (fd >= 0)
		close(fd);
	return -EPERM;
}

/* The perf map the target wrote: /tmp/perf-PID.map, PID as the target
 * itself sees it (its last NSpid), in its own /tmp (its mount namespace);
 * else in ours.  Returns an fd (its name in PM->path), or a negative
 * errno. */
static int open_map(struct perfmap *pm, struct stat *st)
{
	if (!pm->pid)
		return open_trusted(pm, pm->path, NULL, st);
	char fn[128];
	struct target_ids t;
	target_ids(pm->pid, &t);
	snprintf(fn, sizeof(fn), "/proc/%d/root/tmp/perf-%ld.map", (int)pm->pid, t.nspid);
	int fd = open_trusted(pm, fn, &t, st);
	if (fd == -ENOENT) {
		snprintf(fn, sizeof(fn), "/tmp/perf-%d.map", (int)pm->pid);
		fd = open_trusted(pm, fn, &t, st);
	}
	if (fd >= 0)
		snprintf(pm->path, sizeof(pm->path), "%s", fn);
	return fd;
}

static struct perfmap *alloc(pid_t pid, bool notes, size_t max)
{
	struct perfmap *pm = xcalloc(1, sizeof(*pm));
	pm->pid = pid;
	pm->notes = notes;
	pm->fd = -1;
	pm->max = max;
	pm->names = intern__new();
	pm->buf = xmalloc(CHUNK + 1);
	return pm;
}

struct perfmap *perfmap__new(pid_t pid, bool notes)
{
	return alloc(pid, notes, PERFMAP_MAX);
}

struct perfmap *perfmap__at_path(const char *path, size_t max)
{
	struct perfmap *pm = alloc(0, false, max);
	snprintf(pm->path, sizeof(pm->path), "%s", path);
	return pm;
}

/* Forgets the file and its entries. */
static void reset(struct perfmap *pm)
{
	if (pm->fd >= 0)
		close(pm->fd);
	pm->fd = -1;
	if (pm->pid)
		pm->path[0] = '\0';
	pm->size = 0;
	pm->off = 0;
	pm->tail_len = 0;
	pm->skipping = pm->capped = false;
	if (pm->n)
		pm->generation++;
	pm->n = 0;
	intern__free(pm->names);
	pm->names = intern__new();
}

void perfmap__free(struct perfmap *pm)
{
	if (!pm)
		return;
	if (pm->fd >= 0)
		close(pm->fd);
	intern__free(pm->names);
	free(pm->e);
	free(pm->buf);
	free(pm);
}

static const char *keep_name(struct perfmap *pm, const char *v, size_t len)
{
	char clean[LINE_MAX_LEN + 1];
	if (!text__valid(v, len)) {
		len = text__clean(clean, sizeof(clean), v, len);
		v = clean;
	}
	int64_t id = pm->names ? intern__add(pm->names, v, len, NULL) : -1;
	return id < 0 ? NULL : intern__key(pm->names, (size_t)id, NULL);
}

/* One "START SIZE NAME" line (hex numbers, without its newline). */
static void add_line(struct perfmap *pm, char *line, size_t len)
{
	char *end;
	line[len] = '\0';
	uint64_t start = strtoull(line, &end, 16);
	if (end == line || *end != ' ')
		return;
	uint64_t size = strtoull(end + 1, &end, 16);
	if (*end != ' ' || !size || start + size < start)
		return;
	char *name = end + 1;
	size_t nlen = len - (size_t)(name - line);
	if (!nlen)
		return;
	const char *kept = keep_name(pm, name, nlen);
	if (!kept)
		return;
	if (pm->n == pm->cap) {
		pm->cap = pm->cap ? pm->cap * 2 : 256;
		pm->e = xrealloc(pm->e, pm->cap * sizeof(*pm->e));
	}
	pm->e[pm->n++] = (struct pm_entry){ start, start + size, pm->seq++, 0, kept };
}

static int by_start_seq(const void *a, const void *b)
{
	const struct pm_entry *x = a, *y = b;
	if (x->start != y->start)
		return x->start < y->start ? -1 : 1;
	return x->seq < y->seq ? -1 : x->seq > y->seq;
}

/* Entries [0, OLD) are sorted, [OLD, n) new: sorts the new ones and merges
 * (linear, not a sort of the whole table at each growth). */
static void merge(struct perfmap *pm, size_t old)
{
	size_t nn = pm->n - old;
	qsort(pm->e + old, nn, sizeof(*pm->e), by_start_seq);
	if (old && nn && by_start_seq(&pm->e[old - 1], &pm->e[old]) > 0) {
		struct pm_entry *tmp = xmalloc(nn * sizeof(*tmp));
		memcpy(tmp, pm->e + old, nn * sizeof(*tmp));
		size_t i = old, j = nn, k = pm->n;
		while (j > 0) {         /* from the top down, in place */
			if (i > 0 && by_start_seq(&pm->e[i - 1], &tmp[j - 1]) > 0)
				pm->e[--k] = pm->e[--i];
			else
				pm->e[--k] = tmp[--j];
		}
		free(tmp);
	}
	uint64_t maxend = 0;
	for (size_t i = 0; i < pm->n; i++) {
		if (pm->e[i].end > maxend)
			maxend = pm->e[i].end;
		pm->e[i].maxend = maxend;
	}
}

/* Reads complete lines from PM->off on, up to PM->max bytes of the file. */
static void read_more(struct perfmap *pm)
{
	size_t old = pm->n;
	while (pm->off < pm->max) {
		size_t want = CHUNK;
		if (pm->max - pm->off < want)
			want = pm->max - pm->off;
		ssize_t got = pread(pm->fd, pm->buf, want, (off_t)pm->off);
		if (got <= 0)
			break;
		size_t at = 0, used = 0;
		while (at < (size_t)got) {
			char *nl = memchr(pm->buf + at, '\n', (size_t)got - at);
			if (!nl)
				break;
			size_t len = (size_t)(nl - (pm->buf + at));
			if (!pm->skipping && len < LINE_MAX_LEN)
				add_line(pm, pm->buf + at, len);
			pm->skipping = false;
			at += len + 1;
			used = at;
		}
		/* A line with no newline in a whole chunk is too long: skipped
		 * up to its newline, whenever that comes. */
		if (!used && (size_t)got == CHUNK) {
			pm->skipping = true;
			used = (size_t)got;
		}
		pm->off += used;
		if ((size_t)got < want || !used)
			break;
	}
	if ((pm->off >= pm->max || (uint64_t)pm->size > pm->max) && !pm->capped) {
		char msg[256];
		pm->capped = true;
		snprintf(msg, sizeof(msg), "the target's perf map has %lld MiB: JIT names from its "
			 "first %zu MiB only", (long long)(pm->size >> 20), pm->max >> 20);
		note(pm, msg);
	}
	if (pm->n != old) {
		merge(pm, old);
		pm->generation++;
	}
	pm->tail_len = pm->off < sizeof(pm->tail) ? (size_t)pm->off : sizeof(pm->tail);
	if (pm->tail_len &&
	    pread(pm->fd, pm->tail, pm->tail_len, (off_t)(pm->off - pm->tail_len)) != (ssize_t)pm->tail_len)
		pm->tail_len = 0;
}

/* The bytes read last are still where they were: the file grew by
 * appending, not cut and written again longer in place (a JVM's
 * `jcmd PID Compiler.perfmap` run again truncates its map and writes it
 * whole). */
static bool appended(struct perfmap *pm)
{
	char now[sizeof(pm->tail)];
	if (!pm->tail_len)
		return true;
	return pread(pm->fd, now, pm->tail_len, (off_t)(pm->off - pm->tail_len)) == (ssize_t)pm->tail_len &&
	       memcmp(now, pm->tail, pm->tail_len) == 0;
}

bool perfmap__refresh(struct perfmap *pm)
{
	uint64_t gen = pm->generation;
	struct stat st;
	if (pm->fd >= 0) {
		/* The same file, by its name: grown, untouched, or replaced.
		 * Gone (the JIT removed it, the target exited: its /proc/PID/root
		 * with it), what was read still names the samples taken. */
		if (stat(pm->path, &st) != 0)
			return false;
		bool same = st.st_dev == pm->dev && st.st_ino == pm->ino;
		if (same && st.st_size == pm->size && st.st_mtim.tv_sec == pm->mtime.tv_sec &&
		    st.st_mtim.tv_nsec == pm->mtime.tv_nsec)
			return false;
		if (same && st.st_size > pm->size && appended(pm)) {
			pm->size = st.st_size;
			pm->mtime = st.st_mtim;
			if (!pm->capped)
				read_more(pm);
			return pm->generation != gen;
		}
		reset(pm);
	}
	int fd = open_map(pm, &st);
	if (fd < 0)
		return pm->generation != gen;
	pm->fd = fd;
	pm->dev = st.st_dev;
	pm->ino = st.st_ino;
	pm->size = st.st_size;
	pm->mtime = st.st_mtim;
	read_more(pm);
	return pm->generation != gen;
}

uint64_t perfmap__generation(const struct perfmap *pm)
{
	return pm->generation;
}

const char *perfmap__lookup(const struct perfmap *pm, uint64_t addr)
{
	size_t lo = 0, hi = pm->n;
	while (lo < hi) {               /* first entry starting above ADDR */
		size_t mid = lo + (hi - lo) / 2;
		if (pm->e[mid].start <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	const struct pm_entry *best = NULL;
	for (size_t i = lo; i-- > 0 && pm->e[i].maxend > addr;)
		if (addr < pm->e[i].end && (!best || pm->e[i].seq > best->seq))
			best = &pm->e[i];
	return best ? best->name : NULL;
}

size_t perfmap__count(const struct perfmap *pm)
{
	return pm->n;
}

uint64_t perfmap__offset(const struct perfmap *pm)
{
	return pm->off;
}
