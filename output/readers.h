/* readers: profiles read back from files into named frames, for --convert
 * (any of our formats from folded text or pprof, ours or another tool's).
 * Every value in the file is checked: a bad line or field is an error
 * naming where it is, never a guess. */
#ifndef CPROF_OUTPUT_READERS_H
#define CPROF_OUTPUT_READERS_H

#include <stddef.h>
#include <stdio.h>

#include "output/frames.h"

/* Folded stacks ("root;...;leaf COUNT" lines; '#' lines and empty lines
 * skipped) from IN, named NAME in messages.  Returns NULL with a one-line
 * reason in ERR (with the line number) on a malformed line or a read
 * error. */
struct frames *readers__folded(FILE *in, const char *name, char *err, size_t errlen);

/* A pprof profile (gzipped or not) of LEN bytes at BUF.  Samples are
 * weighed by the "samples" value when the profile has one, else by the
 * default (or first) sample type; "cpu" values become CPU time.  Thread
 * and process labels are kept. */
struct frames *readers__pprof(const unsigned char *buf, size_t len, char *err, size_t errlen);

/* Reads the whole of IN (a file or a pipe) and picks the reader by its
 * first bytes: gzip or a protobuf message is pprof, anything else folded. */
struct frames *readers__any(FILE *in, const char *name, char *err, size_t errlen);

#endif
