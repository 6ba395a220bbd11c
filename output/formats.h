/* formats: the output formats, one row each.  What --format NAME and an
 * -o name's ending ask for, the default file name's ending, what the
 * server sends as ?format=NAME and with which Content-Type, and the
 * writer: options, period files, the server and push all read it here.
 * A new format is one row of output/formats.c (and its writer). */
#ifndef CPROF_OUTPUT_FORMATS_H
#define CPROF_OUTPUT_FORMATS_H

#include <stddef.h>

struct frames;
struct profile_info;

enum out_format { FORMAT_AUTO, FORMAT_PPROF, FORMAT_FOLDED, FORMAT_SVG, FORMAT_SPEEDSCOPE,
		  FORMAT_JSON /* --dump only */, FORMAT_COUNT };

/* A profile writer (output/output.h): 0, or a negative errno with a
 * reason in ERR. */
typedef int (*output_writer)(int fd, const struct frames *fr, const struct profile_info *info,
			     char *err, size_t errlen);

struct output_format {
	const char *name;               /* --format NAME (any case); ?format=NAME */
	const char *endings[5];         /* -o endings that ask for it, any case, NULL-ended;
					   the first is the default file name's */
	const char *content_type;       /* served over HTTP, pushed */
	output_writer write;            /* NULL: not a profile (--dump's json) */
	int served;                     /* ?format=NAME on --listen (needs no time order) */
};

/* Indexed by enum out_format; FORMAT_AUTO's row is empty. */
extern const struct output_format output_formats[FORMAT_COUNT];

/* The format named NAME, any case; FORMAT_AUTO if none. */
enum out_format output__format_named(const char *name);

/* The format the ending of PATH asks for, any case; FORMAT_AUTO if none. */
enum out_format output__format_of_path(const char *path);

/* The format the server sends for ?format=NAME (exact case); FORMAT_AUTO
 * if none. */
enum out_format output__format_served(const char *name);

/* The names of the profile formats (SERVED: those served), in the table's
 * order, as a sentence into BUF: "pprof, folded, svg or speedscope". */
void output__format_names(int served, char *buf, size_t len);

/* For an error about a name whose format cannot be told: the formats and
 * their endings, in one line. */
extern const char output__formats_and_endings[];

/* The output file name when -o is not given: "cprof-PID" and the first
 * ending of FORMAT's row (.pprof, .folded, .svg, .json) into BUF. */
void output__default_name(enum out_format format, int pid, char *buf, size_t len);

#endif
