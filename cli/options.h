/* options: the command line, parsed and checked before anything is
 * attached, into the struct options every part of the run reads
 * (run/options.h).  Pure: no I/O besides what the caller prints. */
#ifndef CPROF_CLI_OPTIONS_H
#define CPROF_CLI_OPTIONS_H

#include "run/options.h"

/* Fills O from ARGV.  Returns 0, or -EINVAL with a one-line reason in ERR.
 * O keeps pointers into ARGV and into itself (output may point at
 * default_output): do not copy it.  Call options__free() after a
 * successful parse. */
int options__parse(struct options *o, int argc, char **argv, char *err, size_t errlen);
void options__free(struct options *o);

/* The format a file name asks for, by its ending, case-insensitive (the
 * table's endings, output/formats.c: .pprof, .pb.gz, .pb and .prof are
 * pprof; .svg a flame graph; .json speedscope; .folded, .collapsed and
 * .txt folded); "-" (standard output) folded.  FORMAT_AUTO for any other
 * name: the caller refuses it unless --format says. */
enum out_format options__format_for(const char *path);

extern const char options__usage[];

/* The parser's table of long options, ended by a NULL name: the one source
 * --help and the man page are checked against (tests/unit). */
struct option;
const struct option *options__table(void);

#endif
