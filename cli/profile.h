/* profile: one profiling run, from the checked options to the written
 * file and the summary line.  The sampling loop lives here, as a list of
 * steps, each a call into attach/, unwind/, dwarf/ and output/. */
#ifndef CPROF_CLI_PROFILE_H
#define CPROF_CLI_PROFILE_H

#include "cli/options.h"

/* Returns the process exit code: 0, 1 on error (after printing one line
 * on stderr), or in launch mode the command's own exit status. */
int profile__run(const struct options *o, int argc, char **argv);

/* --convert: folded stacks from a file (or - for stdin) to the svg or
 * speedscope file -o names.  Returns the exit code. */
int profile__convert(const struct options *o);

#endif
