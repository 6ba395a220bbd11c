/* cprof-attach: a wall-clock sampling profiler for running Linux processes. */
#include <stdio.h>

#include "cli/options.h"
#include "cli/dump.h"
#include "cli/run.h"

int main(int argc, char **argv)
{
	struct options o;
	char err[512];
	if (options__parse(&o, argc, argv, err, sizeof(err)) < 0) {
		fprintf(stderr, "cprof-attach: error: %s\n", err);
		return 2;
	}
	if (o.help) {
		fputs(options__usage, stdout);
		return 0;
	}
	if (o.version) {
		printf("cprof-attach %s\n", CPROF_VERSION);
		return 0;
	}
	for (size_t i = 0; i < o.nwarnings; i++)
		fprintf(stderr, "cprof-attach: warning: %s\n", o.warnings[i]);
	int code = o.convert ? run__convert(&o) : o.dump ? dump__run(&o) :
		   run__profile(&o, argc, argv);
	options__free(&o);
	return code;
}
