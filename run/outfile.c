#include "run/outfile.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/magic.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include "util/timeutil.h"

struct outfile {
	int fd;                 /* what the writer writes: a temporary file, or the stream */
	int stream_fd;          /* a stream's own descriptor; -1 for a file */
	int dir_fd;             /* file: its directory; stream: the spool's ($TMPDIR) */
	char *shown;            /* the destination as messages name it */
	char *base;             /* file: its name in dir_fd */
	char *ext;              /* its extension, for fallback names */
	char tmp[NAME_MAX + 1]; /* a temporary name of ours in dir_fd, or "" */
	mode_t new_mode;        /* a new file's mode: 0666 & ~umask */
	bool committed;
};

/* Where PATH really goes, once its symbolic links are followed. */
struct where {
	char dir[PATH_MAX];     /* canonical directory */
	char full[PATH_MAX];    /* dir/base */
	const char *base;       /* in full */
	int own_fd;             /* one of our descriptors (/proc/self/fd/N), or -1 */
	bool proc;              /* another /proc link: reopened, not replaced */
	bool exists;
	struct stat st;         /* lstat of full, when it exists */
};

static int fail(char *err, size_t errlen, const char *path, int e, const char *fmt, ...)
{
	char why[512];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(why, sizeof(why), fmt, ap);
	va_end(ap);
	snprintf(err, errlen, "cannot write the profile to %s: %s", path, why);
	return -e;
}

/* LEN random characters from [0-9A-Za-z] (unguessable: getrandom). */
static void random_chars(char *buf, size_t len)
{
	static const char abc[] = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz";
	unsigned char r[32];
	if (len > sizeof(r))
		len = sizeof(r);
	if (getrandom(r, len, GRND_NONBLOCK) != (ssize_t)len) {
		/* No entropy yet (early boot): unique still, as names are
		 * created with O_EXCL; only less unguessable. */
		struct timespec ts;
		clock_gettime(CLOCK_MONOTONIC, &ts);
		unsigned long long x = (unsigned long long)ts.tv_nsec * 2654435761u ^
				       (unsigned long long)getpid() << 32 ^ (uintptr_t)buf;
		for (size_t i = 0; i < len; i++, x = x * 6364136223846793005ull + 1442695040888963407ull)
			r[i] = (unsigned char)(x >> 33);
	}
	for (size_t i = 0; i < len; i++)
		buf[i] = abc[r[i] % (sizeof(abc) - 1)];
	buf[len] = '\0';
}

/* A name's extension (".pprof", ".pb.gz"), kept by fallback names so that
 * tools still recognise the file; "" if none. */
static const char *ext_of(const char *base)
{
	const char *dot = strchr(base + 1, '.');
	if (dot && strlen(dot) <= 16)
		return dot;
	dot = strrchr(base + 1, '.');
	return dot && strlen(dot) <= 16 ? dot : "";
}

/* "STEM.cprof-RANDOM.EXT": a fallback name for F's profile. */
static void fallback_name(const struct outfile *f, char *name, size_t size)
{
	char rnd[16];
	random_chars(rnd, 8);
	if (!f->base) {
		snprintf(name, size, "cprof-%s", rnd);
		return;
	}
	const char *base = f->base;
	int stem = (int)(strlen(base) - strlen(f->ext));
	if (stem > 100)
		stem = 100;
	snprintf(name, size, "%.*s%scprof-%s%s", stem, base, stem ? "." : "", rnd, f->ext);
}

static const char *tmp_dir(void)
{
	const char *t = getenv("TMPDIR");
	return t && t[0] == '/' ? t : "/tmp";
}

/* An unnamed file in DIR_FD (O_TMPFILE), or where the file system has none
 * a new random name starting with PREFIX, stored in NAME ("" if unnamed).
 * O_EXCL never follows a link, so no one can point our name elsewhere. */
static int make_temp(int dir_fd, const char *prefix, char *name, size_t size)
{
	name[0] = '\0';
	int fd = openat(dir_fd, ".", O_TMPFILE | O_RDWR | O_CLOEXEC, 0666);
	if (fd >= 0 || (errno != EOPNOTSUPP && errno != EISDIR && errno != EINVAL))
		return fd < 0 ? -errno : fd;
	for (int i = 0; i < 100; i++) {
		char rnd[16];
		random_chars(rnd, 12);
		snprintf(name, size, "%s%s", prefix, rnd);
		fd = openat(dir_fd, name, O_CREAT | O_EXCL | O_RDWR | O_CLOEXEC | O_NOFOLLOW, 0600);
		if (fd >= 0)
			return fd;
		if (errno != EEXIST)
			break;
	}
	int e = errno;
	name[0] = '\0';
	return -e;
}

/* Links the unnamed file FD into DIR_FD as NAME. */
static int link_unnamed(int fd, int dir_fd, const char *name)
{
	if (linkat(fd, "", dir_fd, name, AT_EMPTY_PATH) == 0)
		return 0;
	/* AT_EMPTY_PATH wants CAP_DAC_READ_SEARCH; /proc does the same
	 * for the file's owner. */
	char proc[64];
	snprintf(proc, sizeof(proc), "/proc/self/fd/%d", fd);
	return linkat(AT_FDCWD, proc, dir_fd, name, AT_SYMLINK_FOLLOW) == 0 ? 0 : -errno;
}

/* --- where a path goes ------------------------------------------------------ */

/* "/proc/PID/fd" or "/proc/PID/task/TID/fd" of this process. */
static bool our_fd_dir(const char *dir)
{
	int pid, tid, n = 0;
	if (sscanf(dir, "/proc/%d/fd%n", &pid, &n) == 1 && n && !dir[n])
		return pid == getpid();
	n = 0;
	if (sscanf(dir, "/proc/%d/task/%d/fd%n", &pid, &tid, &n) == 2 && n && !dir[n])
		return pid == getpid();
	return false;
}

/* The kernel's protected_symlinks rule, which it applies to open() but
 * not to what we do with a link's text: in a sticky world-writable
 * directory follow only our links and those of the directory's owner.
 * Else root's profile could be pointed at any file of the system. */
static bool may_follow(const char *dir, const struct stat *link)
{
	struct stat d;
	if (stat(dir, &d) < 0)
		return false;
	if (!(d.st_mode & S_ISVTX) || !(d.st_mode & S_IWOTH))
		return true;
	return link->st_uid == geteuid() || link->st_uid == d.st_uid;
}

static int resolve(const char *path, struct where *w, char *err, size_t errlen)
{
	char cur[PATH_MAX], dir[PATH_MAX];
	if (strlen(path) >= sizeof(cur))
		return fail(err, errlen, "a path", ENAMETOOLONG, "the path is longer than %d bytes",
			    PATH_MAX - 1);
	strcpy(cur, path);
	w->own_fd = -1;
	for (int hop = 0; hop < 40; hop++) {
		char *slash = strrchr(cur, '/');
		const char *base = slash ? slash + 1 : cur;
		if (!slash)
			strcpy(dir, ".");
		else if (slash == cur)
			strcpy(dir, "/");
		else
			snprintf(dir, sizeof(dir), "%.*s", (int)(slash - cur), cur);
		if (!*base)
			return fail(err, errlen, path, EISDIR, "%s%s names a directory",
				    hop ? "its link's target " : "", hop ? cur : "it");
		if (strlen(base) > NAME_MAX)
			return fail(err, errlen, path, ENAMETOOLONG,
				    "the file name is %zu bytes long, longer than the %d allowed",
				    strlen(base), NAME_MAX);
		if (!realpath(dir, w->dir)) {
			int e = errno;
			if (e == ENOENT)
				return fail(err, errlen, path, e, "its directory does not exist");
			if (e == ENOTDIR)
				return fail(err, errlen, path, e, "%s is not a directory", dir);
			return fail(err, errlen, path, e, "%s: %s", dir, strerror(e));
		}
		int n = snprintf(w->full, sizeof(w->full), "%s/%s",
				 strcmp(w->dir, "/") ? w->dir : "", base);
		if (n >= (int)sizeof(w->full))
			return fail(err, errlen, path, ENAMETOOLONG, "the path is longer than %d bytes",
				    PATH_MAX - 1);
		w->base = w->full + n - strlen(base);
		struct statfs sfs;
		if (statfs(w->dir, &sfs) == 0 && sfs.f_type == PROC_SUPER_MAGIC) {
			/* /proc's links are no links to follow by their text:
			 * opening one reopens what it stands for. */
			char *end;
			long fd = strtol(base, &end, 10);
			if (our_fd_dir(w->dir) && !*end && fd >= 0 && fd < INT_MAX)
				w->own_fd = (int)fd;
			w->proc = true;
		}
		if (lstat(w->full, &w->st) < 0) {
			if (errno != ENOENT)
				return fail(err, errlen, path, errno, "%s", strerror(errno));
			w->exists = false;
			return w->proc && w->own_fd < 0 ? fail(err, errlen, path, ENOENT, "no such file") : 0;
		}
		w->exists = true;
		if (!S_ISLNK(w->st.st_mode) || w->proc)
			return 0;
		if (!may_follow(w->dir, &w->st))
			return fail(err, errlen, path, EACCES,
				    "%s is another user's link in a sticky directory: not followed",
				    w->full);
		char target[PATH_MAX];
		ssize_t len = readlink(w->full, target, sizeof(target) - 1);
		if (len < 0)
			return fail(err, errlen, path, errno, "%s", strerror(errno));
		target[len] = '\0';
		if (target[0] == '/')
			n = snprintf(cur, sizeof(cur), "%s", target);
		else
			n = snprintf(cur, sizeof(cur), "%s/%s", w->dir, target);
		if (n >= (int)sizeof(cur))
			return fail(err, errlen, path, ENAMETOOLONG, "its link's target is too long");
	}
	return fail(err, errlen, path, ELOOP, "%s", strerror(ELOOP));
}

/* --- streams ---------------------------------------------------------------- */

/* The bytes go to a spool in $TMPDIR first; without one (no writable
 * $TMPDIR), straight to the stream. */
static void spool(struct outfile *f)
{
	f->fd = f->stream_fd;
	f->dir_fd = open(tmp_dir(), O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (f->dir_fd < 0)
		return;
	int fd = make_temp(f->dir_fd, "cprof-spool-", f->tmp, sizeof(f->tmp));
	if (fd >= 0)
		f->fd = fd;
}

static int open_stream_fd(struct outfile *f, int n, const char *path, char *err, size_t errlen)
{
	int fl = fcntl(n, F_GETFL);
	if (fl < 0)
		return fail(err, errlen, path, EBADF, "file descriptor %d is not open", n);
	if ((fl & O_ACCMODE) == O_RDONLY)
		return fail(err, errlen, path, EBADF, "file descriptor %d is not open for writing", n);
	f->stream_fd = fcntl(n, F_DUPFD_CLOEXEC, 3);
	if (f->stream_fd < 0)
		return fail(err, errlen, path, errno, "%s", strerror(errno));
	if (n == 1 || n == 2)
		f->shown = strdup(n == 1 ? "standard output" : "standard error");
	else
		f->shown = strdup(path);
	spool(f);
	return 0;
}

static int connect_socket(const char *full)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	if (strlen(full) >= sizeof(sa.sun_path))
		return -ENAMETOOLONG;
	strcpy(sa.sun_path, full);
	int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -errno;
	if (connect(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0) {
		int e = errno;
		close(fd);
		return -e;
	}
	return fd;
}

/* A device, FIFO or socket, or a /proc link to anything: written through.
 * Never O_TRUNC on a device; O_NONBLOCK so that a FIFO with no reader is an
 * error now (ENXIO), not a hang. */
static int open_stream_path(struct outfile *f, const struct where *w, const char *path,
			    char *err, size_t errlen)
{
	struct stat st;
	if (stat(w->full, &st) < 0)
		return fail(err, errlen, path, errno, "%s", strerror(errno));
	if (S_ISDIR(st.st_mode))
		return fail(err, errlen, path, EISDIR, "it is a directory");
	int fd;
	if (S_ISSOCK(st.st_mode)) {
		fd = connect_socket(w->full);
	} else {
		fd = open(w->full, O_WRONLY | O_NOCTTY | O_NONBLOCK | O_CLOEXEC |
			  (S_ISREG(st.st_mode) ? O_TRUNC : 0));
		if (fd < 0)
			fd = -errno;
	}
	if (fd == -ENXIO && S_ISFIFO(st.st_mode))
		return fail(err, errlen, path, ENXIO,
			    "it is a FIFO with no reader (start the reader first)");
	if (fd < 0)
		return fail(err, errlen, path, -fd, "%s", strerror(-fd));
	fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) & ~O_NONBLOCK);
	f->stream_fd = fd;
	f->shown = strdup(path);
	spool(f);
	return 0;
}

/* --- files ------------------------------------------------------------------ */

/* An existing file we could not replace at the end: rename() in a sticky
 * directory needs the file's or the directory's owner (or CAP_FOWNER). */
static int check_replace(const struct where *w, int dir_fd, const char *path,
			 char *err, size_t errlen)
{
	struct stat d;
	if (fstat(dir_fd, &d) < 0)
		return fail(err, errlen, path, errno, "%s", strerror(errno));
	uid_t me = geteuid();
	if ((d.st_mode & S_ISVTX) && me != 0 && w->st.st_uid != me && d.st_uid != me)
		return fail(err, errlen, path, EPERM,
			    "it is another user's file in a sticky directory: only they may replace it");
	return 0;
}

static int open_file(struct outfile *f, const struct where *w, const char *path,
		     char *err, size_t errlen)
{
	f->dir_fd = open(w->dir, O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (f->dir_fd < 0)
		return fail(err, errlen, path, errno, "%s: %s", w->dir, strerror(errno));
	struct statfs sfs;
	if (fstatfs(f->dir_fd, &sfs) == 0 && sfs.f_namelen > 0 &&
	    strlen(w->base) > (size_t)sfs.f_namelen)
		return fail(err, errlen, path, ENAMETOOLONG,
			    "the file name is %zu bytes long, longer than the %ld its file system allows",
			    strlen(w->base), (long)sfs.f_namelen);
	if (w->exists) {
		int e = check_replace(w, f->dir_fd, path, err, errlen);
		if (e < 0)
			return e;
	}
	/* Creating the temporary file now is the real test that we may
	 * write there (permissions, read-only or full file system). */
	int fd = make_temp(f->dir_fd, ".cprof-attach-", f->tmp, sizeof(f->tmp));
	if (fd < 0)
		return fail(err, errlen, path, -fd, "cannot create a file in %s: %s", w->dir,
			    strerror(-fd));
	f->fd = fd;
	f->base = strdup(w->base);
	f->shown = strdup(path);
	return 0;
}

int outfile__open(struct outfile **out, const char *path, char *err, size_t errlen)
{
	struct outfile *f = calloc(1, sizeof(*f));
	struct where *w = calloc(1, sizeof(*w));
	int e = 0;
	*out = NULL;
	if (!f || !w) {
		e = fail(err, errlen, path, ENOMEM, "out of memory");
		goto out;
	}
	f->fd = f->stream_fd = f->dir_fd = -1;
	mode_t mask = umask(0);
	umask(mask);
	f->new_mode = 0666 & ~mask;
	size_t len = strlen(path);
	if (strcmp(path, "-") == 0) {
		e = open_stream_fd(f, 1, path, err, errlen);
	} else if (len == 0) {
		e = fail(err, errlen, "\"\"", ENOENT, "an empty file name");
	} else if (path[len - 1] == '/') {
		struct stat st;
		if (stat(path, &st) == 0 && S_ISDIR(st.st_mode))
			e = fail(err, errlen, path, EISDIR, "it is a directory");
		else
			e = fail(err, errlen, path, EISDIR, "a file name cannot end with '/'");
	} else if ((e = resolve(path, w, err, errlen)) < 0) {
		;
	} else if (w->own_fd >= 0) {
		e = open_stream_fd(f, w->own_fd, path, err, errlen);
	} else if (w->exists && S_ISDIR(w->st.st_mode)) {
		e = fail(err, errlen, path, EISDIR, "it is a directory");
	} else if (w->proc || (w->exists && !S_ISREG(w->st.st_mode))) {
		e = open_stream_path(f, w, path, err, errlen);
	} else {
		e = open_file(f, w, path, err, errlen);
	}
	if (e == 0) {
		f->ext = strdup(f->base ? ext_of(f->base) : "");
		if (!f->shown || !f->ext)
			e = fail(err, errlen, path, ENOMEM, "out of memory");
	}
out:
	free(w);
	if (e < 0)
		outfile__free(f);
	else
		*out = f;
	return e;
}

int outfile__set_path(struct outfile *f, const char *path, char *err, size_t errlen)
{
	struct outfile *n;
	int e = outfile__open(&n, path, err, errlen);
	if (e < 0)
		return e;
	struct outfile old = *f;
	*f = *n;
	*n = old;
	outfile__free(n);
	return 0;
}

int outfile__fd(const struct outfile *f)
{
	return f->fd;
}

const char *outfile__path(const struct outfile *f)
{
	return f->shown;
}

bool outfile__is_stream(const struct outfile *f)
{
	return f->stream_fd >= 0;
}

/* --- commit ----------------------------------------------------------------- */

/* Writes all of BUF to FD, waiting for it to take more until DEADLINE
 * (CLOCK_MONOTONIC ns): a stream (a FIFO or pipe whose reader does not
 * read) is written PIPE_BUF bytes at a time once poll() says there is room
 * for them, so that no write blocks past it.  -ETIMEDOUT then. */
static int write_all(int fd, const char *buf, size_t len, uint64_t deadline)
{
	while (len) {
		struct pollfd p = { .fd = fd, .events = POLLOUT };
		uint64_t now = now_ns();
		int ms = now >= deadline ? 0 : (int)((deadline - now + 999999) / 1000000);
		int r = poll(&p, 1, ms);
		if (r < 0 && errno == EINTR)
			continue;
		if (r == 0)
			return -ETIMEDOUT;
		ssize_t w = write(fd, buf, len < PIPE_BUF ? len : PIPE_BUF);
		if (w < 0 && errno == EAGAIN)
			continue;
		if (w < 0 && errno == EINTR)
			continue;
		if (w < 0)
			return -errno;
		buf += w;
		len -= (size_t)w;
	}
	return 0;
}

/* Copies the temporary file F->fd, from its start, to TO, within
 * OUTFILE_STREAM_WAIT_S. */
static int copy_to(const struct outfile *f, int to)
{
	char buf[65536];
	off_t off = 0;
	uint64_t deadline = now_ns() + OUTFILE_STREAM_WAIT_S * 1000000000ull;
	for (;;) {
		ssize_t n = pread(f->fd, buf, sizeof(buf), off);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return -errno;
		if (n == 0)
			return 0;
		int e = write_all(to, buf, (size_t)n, deadline);
		if (e < 0)
			return e;
		off += n;
	}
}

/* Saves the profile under a new unique name: next to where it should have
 * gone when we can, else in $TMPDIR.  Sets F->shown to it; 0 or -errno. */
static int save_elsewhere(struct outfile *f)
{
	char name[NAME_MAX + 1], full[PATH_MAX + NAME_MAX + 2];
	int e = -EEXIST;
	for (int i = 0; i < 10 && e == -EEXIST; i++) {
		fallback_name(f, name, sizeof(name));
		if (f->tmp[0])
			e = renameat2(f->dir_fd, f->tmp, f->dir_fd, name, RENAME_NOREPLACE) == 0
				? 0 : -errno;
		else
			e = link_unnamed(f->fd, f->dir_fd, name);
	}
	if (e == 0) {
		char dir[PATH_MAX], proc[64];
		snprintf(proc, sizeof(proc), "/proc/self/fd/%d", f->dir_fd);
		ssize_t n = readlink(proc, dir, sizeof(dir) - 1);
		dir[n > 0 ? n : 0] = '\0';
		snprintf(full, sizeof(full), "%s/%s", n > 1 ? dir : "", name);
		f->tmp[0] = '\0';
	} else {
		/* A copy in $TMPDIR, private to us (0600). */
		int fd = -1;
		for (int i = 0; i < 10 && fd < 0; i++) {
			fallback_name(f, name, sizeof(name));
			snprintf(full, sizeof(full), "%s/%s", tmp_dir(), name);
			fd = open(full, O_CREAT | O_EXCL | O_WRONLY | O_NOFOLLOW | O_CLOEXEC, 0600);
			if (fd < 0 && errno != EEXIST)
				break;
		}
		if (fd < 0)
			return -errno;
		e = copy_to(f, fd);
		if (e == 0 && fsync(fd) < 0)
			e = -errno;
		close(fd);
		if (e < 0) {
			unlink(full);
			return e;
		}
	}
	char *s = strdup(full);
	if (s) {
		free(f->shown);
		f->shown = s;
	}
	return 0;
}

/* Commit failed with E (WHY): save the profile elsewhere and say where. */
static int failed(struct outfile *f, int e, const char *why, char *err, size_t errlen)
{
	char was[PATH_MAX];
	snprintf(was, sizeof(was), "%s", f->shown);
	int s = save_elsewhere(f);
	if (s == 0)     /* where it went first: a long message is cut at the end */
		snprintf(err, errlen, "the profile was saved as %s instead: cannot write it to %s: %s",
			 f->shown, was, why);
	else
		snprintf(err, errlen, "cannot write the profile to %s: %s; saving it elsewhere "
			 "failed too (%s): the profile is lost", was, why, strerror(-s));
	return e;
}

/* The copy to a stream must not be killed by SIGPIPE (a reader gone):
 * EPIPE instead, and the profile saved. */
static int commit_stream(struct outfile *f, char *err, size_t errlen)
{
	if (f->fd == f->stream_fd)
		return 0;
	sigset_t pipe_set, old, pending;
	sigemptyset(&pipe_set);
	sigaddset(&pipe_set, SIGPIPE);
	pthread_sigmask(SIG_BLOCK, &pipe_set, &old);
	sigpending(&pending);
	bool was_pending = sigismember(&pending, SIGPIPE);
	int e = copy_to(f, f->stream_fd);
	if (!was_pending) {
		struct timespec zero = { 0, 0 };
		while (sigtimedwait(&pipe_set, NULL, &zero) == SIGPIPE)
			;
	}
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (e < 0)
		return failed(f, e, e == -ETIMEDOUT ? "it took nothing more for 10 s (a FIFO or pipe "
			      "whose reader does not read)" : strerror(-e), err, errlen);
	if (f->tmp[0] && unlinkat(f->dir_fd, f->tmp, 0) == 0)
		f->tmp[0] = '\0';
	return 0;
}

/* Gives the temporary file the mode (and as root the owner) of the file it
 * replaces, or a new file's mode. */
static int take_over(struct outfile *f, char *why, size_t whylen)
{
	struct stat st;
	if (fstatat(f->dir_fd, f->base, &st, AT_SYMLINK_NOFOLLOW) < 0) {
		if (errno != ENOENT) {
			snprintf(why, whylen, "%s", strerror(errno));
			return -errno;
		}
		if (f->tmp[0])
			fchmod(f->fd, f->new_mode);
		return 0;
	}
	if (!S_ISREG(st.st_mode)) {
		snprintf(why, whylen, "it is no longer a regular file");
		return S_ISDIR(st.st_mode) ? -EISDIR : -EEXIST;
	}
	struct stat mine;
	if (fstat(f->fd, &mine) == 0 && (mine.st_uid != st.st_uid || mine.st_gid != st.st_gid))
		if (fchown(f->fd, st.st_uid, st.st_gid) < 0 &&      /* root only */
		    fchown(f->fd, (uid_t)-1, st.st_gid) < 0) {
			/* Not root, not in its group: the new file is ours. */
		}
	fchmod(f->fd, st.st_mode & 0777);
	return 0;
}

static int commit_file(struct outfile *f, char *err, size_t errlen)
{
	char why[256];
	int e = 0;
	if (fsync(f->fd) < 0 && errno != EINVAL) {     /* EINVAL: no fsync there */
		e = -errno;
		snprintf(why, sizeof(why), "%s", strerror(errno));
	}
	if (e == 0)
		e = take_over(f, why, sizeof(why));
	/* An unnamed file gets a temporary name first: linkat() will not
	 * replace an existing file, rename() will, atomically. */
	for (int i = 0; e == 0 && !f->tmp[0] && i < 10; i++) {
		char rnd[16];
		random_chars(rnd, 12);
		snprintf(f->tmp, sizeof(f->tmp), ".cprof-attach-%s", rnd);
		e = link_unnamed(f->fd, f->dir_fd, f->tmp);
		if (e < 0) {
			f->tmp[0] = '\0';
			snprintf(why, sizeof(why), "%s", strerror(-e));
			if (e == -EEXIST && i < 9)
				e = 0;
		}
	}
	if (e == 0 && renameat(f->dir_fd, f->tmp, f->dir_fd, f->base) < 0) {
		e = -errno;
		snprintf(why, sizeof(why), "%s", strerror(errno));
	}
	if (e < 0)
		return failed(f, e, why, err, errlen);
	f->tmp[0] = '\0';
	return 0;
}

int outfile__commit(struct outfile *f, char *err, size_t errlen)
{
	int e = f->stream_fd >= 0 ? commit_stream(f, err, errlen) : commit_file(f, err, errlen);
	f->committed = true;    /* the profile is where f->shown says, either way */
	return e;
}

void outfile__free(struct outfile *f)
{
	if (!f)
		return;
	if (f->tmp[0] && f->dir_fd >= 0)
		unlinkat(f->dir_fd, f->tmp, 0);
	if (f->fd >= 0 && f->fd != f->stream_fd)
		close(f->fd);
	if (f->stream_fd >= 0)
		close(f->stream_fd);
	if (f->dir_fd >= 0)
		close(f->dir_fd);
	free(f->shown);
	free(f->base);
	free(f->ext);
	free(f);
}
