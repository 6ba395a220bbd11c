/* Fuzz target: /proc/PID/maps lines (maps__parse_line in attach/maps.c).
 *
 * The target controls the paths in its maps (any bytes but NUL and '\n',
 * " (deleted)" suffixes, names that look like other fields).  The input is
 * read the way modules__refresh() reads the file: fgets() into a 4400-byte
 * buffer, so a long line arrives in pieces, and each piece is parsed.
 * What must hold for every accepted line: start < end, a NUL-terminated
 * path shorter than the buffer, no newline in it. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "module/modules.h"

#define LINE_MAX_READ 4400      /* modules__refresh()'s line buffer */

static void check_line(const char *line)
{
	struct map_entry e;
	if (maps__parse_line(line, &e) != 0)
		return;
	if (e.start >= e.end || memchr(e.path, '\0', sizeof(e.path)) == NULL ||
	    strchr(e.path, '\n') != NULL) {
		fprintf(stderr, "maps__parse_line accepted a bad entry from '%s'\n", line);
		abort();
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char line[LINE_MAX_READ];
	size_t i = 0;
	/* What fgets() would return, piece by piece; a NUL byte ends the
	 * string as it would for the parser. */
	while (i < size) {
		size_t n = 0;
		while (i < size && n < sizeof(line) - 1) {
			line[n++] = (char)data[i++];
			if (line[n - 1] == '\n')
				break;
		}
		line[n] = '\0';
		check_line(line);
	}
	return 0;
}
