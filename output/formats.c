/* formats: the table of output formats (output/formats.h). */
#include "output/formats.h"

#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "output/output.h"

const struct output_format output_formats[FORMAT_COUNT] = {
	[FORMAT_PPROF] = { "pprof", { ".pprof", ".pb.gz", ".pb", ".prof" },
			   "application/octet-stream", pprof__write, 1 },
	[FORMAT_FOLDED] = { "folded", { ".folded", ".collapsed", ".txt" },
			    "text/plain; charset=utf-8", folded__write, 1 },
	[FORMAT_SVG] = { "svg", { ".svg" }, "image/svg+xml", svg__write, 1 },
	[FORMAT_SPEEDSCOPE] = { "speedscope", { ".json" }, "application/json",
				speedscope__write, 0 },
	[FORMAT_JSON] = { "json", { NULL }, "application/json", NULL, 0 },
};

/* The rows' endings, grouped as --help gives them. */
const char output__formats_and_endings[] =
	"use --format pprof|folded|svg|speedscope, or a name ending in .pprof .pb.gz .pb "
	".prof (pprof), .svg (svg), .json (speedscope), .folded .collapsed .txt (folded)";

enum out_format output__format_named(const char *name)
{
	for (int i = 0; i < FORMAT_COUNT; i++)
		if (output_formats[i].name && strcasecmp(name, output_formats[i].name) == 0)
			return (enum out_format)i;
	return FORMAT_AUTO;
}

enum out_format output__format_of_path(const char *path)
{
	size_t n = strlen(path);
	for (int i = 0; i < FORMAT_COUNT; i++) {
		for (const char *const *e = output_formats[i].endings; *e; e++) {
			size_t k = strlen(*e);
			if (n > k && strcasecmp(path + n - k, *e) == 0)
				return (enum out_format)i;
		}
	}
	return FORMAT_AUTO;
}

enum out_format output__format_served(const char *name)
{
	for (int i = 0; i < FORMAT_COUNT; i++)
		if (output_formats[i].served && strcmp(name, output_formats[i].name) == 0)
			return (enum out_format)i;
	return FORMAT_AUTO;
}

void output__format_names(int served, char *buf, size_t len)
{
	int last = -1;
	for (int i = 0; i < FORMAT_COUNT; i++)
		if (output_formats[i].write && (!served || output_formats[i].served))
			last = i;
	size_t at = 0;
	buf[0] = '\0';
	for (int i = 0, k = 0; i < FORMAT_COUNT && at < len; i++) {
		if (!output_formats[i].write || (served && !output_formats[i].served))
			continue;
		at += (size_t)snprintf(buf + at, len - at, "%s%s",
				       k++ == 0 ? "" : i == last ? " or " : ", ", output_formats[i].name);
	}
}

void output__default_name(enum out_format format, int pid, char *buf, size_t len)
{
	const char *ext = format > FORMAT_AUTO && format < FORMAT_COUNT &&
			  output_formats[format].write ? output_formats[format].endings[0] :
			  output_formats[FORMAT_PPROF].endings[0];
	snprintf(buf, len, "cprof-%d%s", pid, ext);
}
