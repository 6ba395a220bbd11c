/* run: one profiling run, from the checked options to the written file
 * and the summary line.  The sampler (sample/sampler.h) owns the loop;
 * this is its front end: the output file, when to stop (signals,
 * --duration, the targets exiting), the live status line, naming and
 * writing the profile, the summary. */
#ifndef CPROF_RUN_RUN_H
#define CPROF_RUN_RUN_H

#include "run/options.h"

/* Returns the process exit code: 0, 1 on error (after printing one line
 * on stderr), or in launch mode the command's own exit status. */
int run__profile(const struct options *o, int argc, char **argv);

/* --convert: a profile file (folded or pprof, or - for stdin) to the
 * format -o asks for.  Returns the exit code. */
int run__convert(const struct options *o);

#endif
