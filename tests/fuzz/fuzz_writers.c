/* Fuzz target: folded input through --convert (run__convert in
 * run/run.c: the folded reader, output/readers.c) and every writer.
 *
 * The input is a --convert file: any bytes, so frames are names no one
 * chose (invalid UTF-8, control characters, markup, quotes).  Written as
 * folded, svg, speedscope and pprof, what must hold for every input the
 * parser accepts:
 *   folded      each line "frame;...;frame COUNT\n", clean text (util/text.h)
 *   svg         well-formed XML (a checker for what an XML parser refuses:
 *               characters, tags, nesting, attributes, references), made of
 *               our own elements only (no <image>, no second <script>)
 *   speedscope  JSON jansson reads back, every frame index in range, and
 *               each sample's frames, joined by ';', one of the folded
 *               output's stacks (an index shifted by a refused string
 *               would name some other frame)
 *   pprof       gzip + protobuf read back, every string clean
 * A violation aborts with the reason on stderr. */
#include <ctype.h>
#include <jansson.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <zlib.h>

#include "build/output/profile.pb-c.h"
#include "cli/options.h"
#include "run/run.h"
#include "util/intern.h"
#include "util/strbuf.h"
#include "util/text.h"
#include "util/xalloc.h"

static char dir[64];
static char in_path[128], out_path[128];

static void fail(const char *what, const char *detail)
{
	fprintf(stderr, "fuzz_writers: %s%s%.300s\n", what, detail ? ": " : "", detail ? detail : "");
	abort();
}

static void cleanup(void)
{
	unlink(in_path);
	unlink(out_path);
	rmdir(dir);
}

static void setup(void)
{
	snprintf(dir, sizeof(dir), "/tmp/cprof-fuzz-writers.XXXXXX");
	if (!mkdtemp(dir))
		fail("mkdtemp", dir);
	snprintf(in_path, sizeof(in_path), "%s/in.folded", dir);
	snprintf(out_path, sizeof(out_path), "%s/out", dir);
	atexit(cleanup);
}

static char *read_file(const char *path, size_t *len)
{
	FILE *f = fopen(path, "rb");
	struct strbuf sb = { 0 };
	char buf[65536];
	size_t n;
	if (!f)
		fail("cannot read the output", path);
	while ((n = fread(buf, 1, sizeof(buf), f)) > 0)
		strbuf__add(&sb, buf, n);
	fclose(f);
	*len = sb.len;
	return sb.s ? sb.s : xstrdup("");
}

/* Clean text, where tab, newline and carriage return are allowed too (the
 * XML Char production minus what util/text.h also refuses). */
static bool clean_with_space(const char *s, size_t len)
{
	char *copy = xmalloc(len + 1);
	for (size_t i = 0; i < len; i++)
		copy[i] = (s[i] == '\n' || s[i] == '\t' || s[i] == '\r') ? ' ' : s[i];
	bool ok = text__valid(copy, len);
	free(copy);
	return ok;
}

/* --- svg: an XML well-formedness check ------------------------------------ */

struct xml {
	const char *s;
	size_t len, i;
	const char *why;
};

static bool xml_at(struct xml *x, const char *lit)
{
	size_t n = strlen(lit);
	return x->len - x->i >= n && memcmp(x->s + x->i, lit, n) == 0;
}

static bool xml_name_char(char c)
{
	return isalnum((unsigned char)c) || c == '-' || c == '_' || c == ':' || c == '.';
}

static size_t xml_name(struct xml *x)
{
	size_t start = x->i;
	if (x->i < x->len && (isalpha((unsigned char)x->s[x->i]) || x->s[x->i] == '_'))
		while (x->i < x->len && xml_name_char(x->s[x->i]))
			x->i++;
	return x->i - start;
}

static void xml_space(struct xml *x)
{
	while (x->i < x->len && strchr(" \t\r\n", x->s[x->i]))
		x->i++;
}

/* A reference at x->i ('&'): a predefined entity or a character that XML
 * allows. */
static bool xml_reference(struct xml *x)
{
	static const char *const named[] = { "&amp;", "&lt;", "&gt;", "&quot;", "&apos;" };
	for (size_t k = 0; k < sizeof(named) / sizeof(*named); k++) {
		if (xml_at(x, named[k])) {
			x->i += strlen(named[k]);
			return true;
		}
	}
	if (!xml_at(x, "&#"))
		return false;
	x->i += 2;
	bool hex = x->i < x->len && x->s[x->i] == 'x';
	x->i += hex;
	unsigned long v = 0;
	size_t digits = 0;
	for (; x->i < x->len && digits < 8 && (hex ? isxdigit((unsigned char)x->s[x->i]) :
					       isdigit((unsigned char)x->s[x->i])); x->i++, digits++)
		v = v * (hex ? 16 : 10) + (unsigned long)(isdigit((unsigned char)x->s[x->i]) ?
			x->s[x->i] - '0' : (tolower((unsigned char)x->s[x->i]) - 'a' + 10));
	if (!digits || x->i >= x->len || x->s[x->i] != ';')
		return false;
	x->i++;
	return v == 9 || v == 10 || v == 13 || (v >= 0x20 && v <= 0xd7ff) ||
	       (v >= 0xe000 && v <= 0xfffd) || (v >= 0x10000 && v <= 0x10ffff);
}

static bool our_element(const char *name, size_t len)
{
	static const char *const ours[] = { "svg", "style", "rect", "text", "desc", "g", "title", "script" };
	for (size_t k = 0; k < sizeof(ours) / sizeof(*ours); k++)
		if (strlen(ours[k]) == len && memcmp(ours[k], name, len) == 0)
			return true;
	return false;
}

/* A start tag at x->i ('<' already passed): name, attributes, '>' or
 * "/>".  Pushes the name unless empty. */
static bool xml_start_tag(struct xml *x, const char **stack, size_t *lens, size_t *depth,
			  int *scripts)
{
	const char *name = x->s + x->i;
	size_t nlen = xml_name(x);
	if (!nlen)
		return x->why = "a '<' that starts no tag", false;
	if (!our_element(name, nlen))
		return x->why = "an element that is not ours", false;
	*scripts += nlen == 6 && memcmp(name, "script", 6) == 0;
	for (;;) {
		size_t before = x->i;
		xml_space(x);
		if (xml_at(x, "/>")) {
			x->i += 2;
			return true;
		}
		if (xml_at(x, ">")) {
			x->i++;
			if (*depth == 64)
				return x->why = "nested too deep", false;
			stack[*depth] = name;
			lens[(*depth)++] = nlen;
			return true;
		}
		if (x->i == before || !xml_name(x))
			return x->why = "a malformed attribute", false;
		xml_space(x);
		if (x->i >= x->len || x->s[x->i++] != '=')
			return x->why = "an attribute without '='", false;
		xml_space(x);
		char q = x->i < x->len ? x->s[x->i++] : 0;
		if (q != '"' && q != '\'')
			return x->why = "an unquoted attribute value", false;
		while (x->i < x->len && x->s[x->i] != q) {
			if (x->s[x->i] == '<')
				return x->why = "'<' in an attribute value", false;
			if (x->s[x->i] == '&' ? !xml_reference(x) : (x->i++, false))
				return x->why = "a bad reference in an attribute value", false;
		}
		if (x->i++ >= x->len)
			return x->why = "an attribute value never closed", false;
	}
}

static const char *xml_check(const char *s, size_t len)
{
	struct xml x = { s, len, 0, NULL };
	const char *stack[64];
	size_t lens[64], depth = 0;
	int roots = 0, scripts = 0;
	if (!clean_with_space(s, len))
		return "not clean UTF-8 text";
	if (xml_at(&x, "<?xml")) {
		const char *end = strstr(s, "?>");
		if (!end)
			return "prolog never closed";
		x.i = (size_t)(end - s) + 2;
	}
	while (x.i < x.len) {
		if (xml_at(&x, "<![CDATA[")) {
			const char *end = depth ? strstr(s + x.i, "]]>") : NULL;
			if (!end)
				return "CDATA outside an element or never closed";
			x.i = (size_t)(end - s) + 3;
		} else if (xml_at(&x, "<!--")) {
			const char *end = strstr(s + x.i + 4, "-->");
			if (!end)
				return "comment never closed";
			x.i = (size_t)(end - s) + 3;
		} else if (xml_at(&x, "</")) {
			x.i += 2;
			const char *name = s + x.i;
			size_t nlen = xml_name(&x);
			xml_space(&x);
			if (!depth || nlen != lens[depth - 1] || memcmp(name, stack[depth - 1], nlen) != 0 ||
			    x.i >= x.len || s[x.i++] != '>')
				return "an end tag that does not match";
			depth--;
		} else if (s[x.i] == '<') {
			x.i++;
			if (!depth && roots++)
				return "a second root element";
			if (!xml_start_tag(&x, stack, lens, &depth, &scripts))
				return x.why;
		} else if (s[x.i] == '&') {
			if (!depth || !xml_reference(&x))
				return "a bad reference in text";
		} else {
			if (xml_at(&x, "]]>"))
				return "']]>' in text";
			if (!depth && !strchr(" \t\r\n", s[x.i]))
				return "text outside the root element";
			x.i++;
		}
	}
	if (depth || roots != 1)
		return "elements left open, or no root";
	return scripts == 1 ? NULL : "not exactly one script";
}

/* --- the outputs ------------------------------------------------------------ */

static bool convert(enum out_format f)
{
	struct options o = { .hz = 99, .format = f, .output = out_path, .convert = in_path };
	unlink(out_path);
	return run__convert(&o) == 0;
}

/* Each stack of the folded output ("a;b;c", without the count) into STACKS. */
static void check_folded(struct intern *stacks)
{
	size_t len;
	char *s = read_file(out_path, &len);
	if (len && s[len - 1] != '\n')
		fail("folded: last line without a newline", s);
	for (char *line = s, *nl; line < s + len; line = nl + 1) {
		nl = memchr(line, '\n', (size_t)(s + len - line));
		char *sp = nl ? memrchr(line, ' ', (size_t)(nl - line)) : NULL;
		if (!sp || sp == line || sp + 1 == nl || strspn(sp + 1, "0123456789") != (size_t)(nl - sp - 1))
			fail("folded: a line is not 'frames COUNT'", line);
		if (!text__valid(line, (size_t)(sp - line)))
			fail("folded: a line is not clean text", line);
		intern__add(stacks, line, (size_t)(sp - line), NULL);
	}
	free(s);
}

static void check_svg(void)
{
	size_t len;
	char *s = read_file(out_path, &len);
	const char *why = xml_check(s, len);
	if (why)
		fail("svg: not well-formed XML of our elements", why);
	free(s);
}

static void check_speedscope(const struct intern *stacks)
{
	json_error_t err;
	json_t *root = json_load_file(out_path, JSON_REJECT_DUPLICATES, &err);
	json_t *frames = json_object_get(json_object_get(root, "shared"), "frames");
	json_t *profiles = json_object_get(root, "profiles");
	if (!root || !json_is_array(frames) || !json_is_array(profiles))
		fail("speedscope: not JSON of the expected shape", err.text);
	struct strbuf key = { 0 };
	size_t i, j, k;
	json_t *p, *sample, *idx;
	json_array_foreach(profiles, i, p) {
		json_array_foreach(json_object_get(p, "samples"), j, sample) {
			strbuf__reset(&key);
			json_array_foreach(sample, k, idx) {
				json_int_t v = json_integer_value(idx);
				if (!json_is_integer(idx) || v < 0 || (size_t)v >= json_array_size(frames))
					fail("speedscope: a frame index out of range", NULL);
				const char *name = json_string_value(json_object_get(json_array_get(frames, (size_t)v), "name"));
				if (!name)
					fail("speedscope: a frame without a name", NULL);
				strbuf__addf(&key, "%s%s", k ? ";" : "", name);
			}
			if (intern__find(stacks, key.s ? key.s : "", key.len) < 0)
				fail("speedscope: a sample's frames are no stack of the input", key.s);
		}
	}
	strbuf__free(&key);
	json_decref(root);
}

static void check_pprof(void)
{
	gzFile gz = gzopen(out_path, "rb");
	static unsigned char buf[1 << 22];
	int len = gz ? gzread(gz, buf, sizeof(buf)) : -1;
	if (gz)
		gzclose(gz);
	Perftools__Profiles__Profile *p =
		len > 0 ? perftools__profiles__profile__unpack(NULL, (size_t)len, buf) : NULL;
	if (!p)
		fail("pprof: not gzip + protobuf", NULL);
	for (size_t i = 0; i < p->n_string_table; i++)
		if (!text__valid(p->string_table[i], strlen(p->string_table[i])))
			fail("pprof: a string that is not clean text", p->string_table[i]);
	perftools__profiles__profile__free_unpacked(p, NULL);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (!dir[0])
		setup();
	FILE *f = fopen(in_path, "wb");
	if (!f || fwrite(data, 1, size, f) != size || fclose(f) != 0)
		fail("cannot write the input", in_path);
	/* Input the parser refuses is not a writer's business. */
	if (!convert(FORMAT_FOLDED))
		return 0;
	struct intern *stacks = intern__new();
	check_folded(stacks);
	if (!convert(FORMAT_SVG))
		fail("svg: --convert failed where folded did not", NULL);
	check_svg();
	if (!convert(FORMAT_SPEEDSCOPE))
		fail("speedscope: --convert failed where folded did not", NULL);
	check_speedscope(stacks);
	if (!convert(FORMAT_PPROF))
		fail("pprof: --convert failed where folded did not", NULL);
	check_pprof();
	intern__free(stacks);
	return 0;
}
