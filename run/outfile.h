/* outfile: where the profile goes, checked before anything attaches.
 *
 * Only a regular file, or a name that does not exist yet, is replaced, and
 * atomically: the writer writes an unnamed file in the same directory
 * (O_TMPFILE, else a random name created with O_EXCL, never through a
 * link), which commit gives its name.  A replaced file keeps its mode (and,
 * as root, its owner).  A symbolic link stays a link: the file it points
 * to is the one replaced (as perf and py-spy do); in a sticky
 * world-writable directory only a link of ours or of the directory's owner
 * is followed (the kernel's protected_symlinks rule).
 *
 * Everything else is written through, never replaced: "-" (standard
 * output), our own descriptors (/dev/stdout, /dev/fd/N, /proc/self/fd/N),
 * devices, FIFOs and sockets.  A FIFO is opened at once, without blocking:
 * one with no reader is refused before the run.  A stream's bytes are
 * spooled to an unnamed file in $TMPDIR and copied to it in order at
 * commit, so that a stream that fails (a reader gone, or one that takes
 * nothing for OUTFILE_STREAM_WAIT_S: the copy never blocks longer) leaves
 * the whole profile in a file the error names.
 *
 * Everything that can be checked is checked at open: the name's length,
 * that its directory exists and is one, that we may create a file there,
 * that an existing file is not a directory and is one we may replace.  A
 * naming that still fails at commit saves the profile under a unique name
 * next to the path, else in $TMPDIR, and says where.
 *
 * Functions returning int return 0 or a negative errno; ERR then holds a
 * whole one-line message ("cannot write the profile to PATH: why"). */
#ifndef CPROF_RUN_OUTFILE_H
#define CPROF_RUN_OUTFILE_H

#define OUTFILE_STREAM_WAIT_S 10

#include <stdbool.h>
#include <stddef.h>

struct outfile;

/* Checks PATH and prepares the output.  "-" is standard output. */
int outfile__open(struct outfile **out, const char *path, char *err, size_t errlen);
/* Launch mode learns the default name (cprof-PID.pprof) only after the
 * start: the same checks, for a new PATH; on failure F is unchanged. */
int outfile__set_path(struct outfile *f, const char *path, char *err, size_t errlen);
/* Where the writer writes (a descriptor F owns: do not close it). */
int outfile__fd(const struct outfile *f);
/* The destination, as messages name it: the path given, "standard output"
 * for "-" and /dev/stdout, or after a failed commit the fallback file. */
const char *outfile__path(const struct outfile *f);
/* True when the profile is written through to a stream or device ("wrote
 * to standard output") rather than given a file name. */
bool outfile__is_stream(const struct outfile *f);
/* The profile is complete: give it its name (or copy it to its stream).
 * On failure ERR says where the profile went instead. */
int outfile__commit(struct outfile *f, char *err, size_t errlen);
/* NULL is fine; an uncommitted profile is dropped. */
void outfile__free(struct outfile *f);

#endif
