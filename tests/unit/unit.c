/* Unit tests of the pure parts: interning, maps parsing, options, the
 * stack table, and the pprof encoding read back through protobuf-c.
 * Output is TAP ("ok N - name" / "not ok N - name"). */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include <zlib.h>

#include "module/modules.h"
#include "module/perfmap.h"
#include "build/output/profile.pb-c.h"
#include "cli/options.h"
#include "run/outfile.h"
#include "run/pattern.h"
#include "run/periods.h"
#include "goroutine/curg.h"
#include "goroutine/golayout.h"
#include "module/gopclntab.h"
#include "dwarf/symbolizer.h"
#include "dwarf/symcache.h"
#include "output/output.h"
#include "profile/stacks.h"
#include "profile/timeline.h"
#include "util/xalloc.h"
#include "python/interp.h"
#include "python/lines.h"
#include "util/intern.h"
#include "util/secret.h"
#include "util/sparse.h"
#include "util/text.h"
#include "unwind/cfi.h"
#include <dwarf.h>
#include <elfutils/libdw.h>

static int n_tests, n_failed;

static void check(int ok, const char *name)
{
	n_tests++;
	if (!ok)
		n_failed++;
	printf("%sok %d - %s\n", ok ? "" : "not ", n_tests, name);
}

static void test_intern(void)
{
	struct intern *in = intern__new();
	int added;
	check(intern__add(in, "a", 1, &added) == 0 && added, "intern: first key gets id 0");
	check(intern__add(in, "b", 1, &added) == 1 && added, "intern: second key gets id 1");
	check(intern__add(in, "a", 1, &added) == 0 && !added, "intern: same key, same id");
	const char *a = intern__key(in, 0, NULL);
	char key[32];
	for (int i = 0; i < 100000; i++) {
		int n = snprintf(key, sizeof(key), "k%d", i);
		intern__add(in, key, (size_t)n, NULL);
	}
	check(intern__count(in) == 100002, "intern: 100000 more keys, all distinct");
	check(a == intern__key(in, 0, NULL) && strcmp(a, "a") == 0,
	      "intern: key pointers do not move as the table grows");
	check(intern__find(in, "k99999", 6) == 100001 && intern__find(in, "zz", 2) == -1,
	      "intern: find");
	check(intern__add(in, "", 0, NULL) == 100002, "intern: empty key");
	intern__free(in);
	intern__free(NULL);
}

static void test_maps(void)
{
	struct map_entry e;
	int r = maps__parse_line("5581d2a5e000-5581d2a5f000 r-xp 00001000 fe:00 1234"
				 "                       /usr/bin/demo prog\n", &e);
	check(r == 0 && e.start == 0x5581d2a5e000 && e.end == 0x5581d2a5f000 &&
	      e.offset == 0x1000 && e.exec && e.inode == 1234 && e.major == 0xfe &&
	      strcmp(e.path, "/usr/bin/demo prog") == 0, "maps: file mapping with a space in the path");
	r = maps__parse_line("7ffd7fd48000-7ffd7fd69000 rw-p 00000000 00:00 0", &e);
	check(r == 0 && !e.exec && e.path[0] == '\0', "maps: anonymous mapping, no path");
	r = maps__parse_line("7f0000000000-7f0000001000 r-xp 00000000 08:01 77 /tmp/x (deleted)", &e);
	check(r == 0 && strcmp(e.path, "/tmp/x (deleted)") == 0, "maps: deleted file");
	check(maps__parse_line("garbage", &e) == -EINVAL, "maps: garbage refused");
	check(maps__parse_line("2000-1000 r-xp 0 0:0 0", &e) == -EINVAL, "maps: end before start refused");
	check(maps__parse_line("", &e) == -EINVAL, "maps: empty line refused");
}

static int parse(const char *line, struct options *o, char *err)
{
	/* Static: the options keep pointers into argv (output, command). */
	static char buf[512], *argv[32];
	int argc = 0;
	snprintf(buf, sizeof(buf), "%s", line);
	for (char *t = strtok(buf, " "); t && argc < 31; t = strtok(NULL, " "))
		argv[argc++] = t;
	argv[argc] = NULL;
	return options__parse(o, argc, argv, err, 512);
}

static void test_options(void)
{
	struct options o;
	char err[512];
	check(parse("cprof-attach 4242", &o, err) == 0 && o.pid == 4242 && o.hz == 99 &&
	      o.format == FORMAT_PPROF && o.max_depth == 1024 && !o.command, "options: defaults");
	check(parse("cprof-attach 4242 --hz 999 -o out.folded", &o, err) == 0 && o.pid == 4242 &&
	      o.hz == 999 && o.format == FORMAT_FOLDED, "options: options after the PID");
	check(parse("cprof-attach -o x.pb.gz 1", &o, err) == 0 && o.format == FORMAT_PPROF,
	      "options: .pb.gz is pprof");
	check(parse("cprof-attach -o x.svg 1", &o, err) == 0 && o.format == FORMAT_SVG,
	      "options: .svg is a flame graph");
	check(parse("cprof-attach --format pprof -o x.txt 1", &o, err) == 0 && o.format == FORMAT_PPROF,
	      "options: --format wins over the ending");
	check(parse("cprof-attach --duration 1.5 1", &o, err) == 0 && o.duration == 1.5,
	      "options: decimal duration");
	check(parse("cprof-attach --history 2h --period 1m 1", &o, err) == 0 && o.history == 7200 &&
	      o.period == 60, "options: hours (--history 2h), as 120m was");
	const char *bad[] = { "--hz 0", "--hz abc", "--hz 20000", "--hz -5", "--hz 1e9", "--hz 10.5",
			      "--duration -1", "--duration 0", "--duration abc", "--duration nan",
			      "--format xml", "--max-depth 1", "--bogus", "--hz" };
	for (size_t i = 0; i < sizeof(bad) / sizeof(*bad); i++) {
		char line[128], name[160];
		snprintf(line, sizeof(line), "cprof-attach %s 1", bad[i]);
		int r = parse(line, &o, err);
		snprintf(name, sizeof(name), "options: '%s' refused with a message", bad[i]);
		check(r == -EINVAL && err[0] && !strchr(err, '\n'), name);
	}
	check(parse("cprof-attach --hz 10000 1", &o, err) == 0 && o.hz == 10000, "options: --hz 10000");
	check(parse("cprof-attach --hz 1 -- ls -l", &o, err) == 0 && o.command &&
	      strcmp(o.command[0], "ls") == 0 && strcmp(o.command[1], "-l") == 0 && o.pid == 0,
	      "options: launch mode keeps the command's own options");
	check(parse("cprof-attach --", &o, err) == -EINVAL, "options: '--' without a command");
	check(parse("cprof-attach", &o, err) == -EINVAL, "options: no PID");
	check(parse("cprof-attach 12 13", &o, err) == -EINVAL, "options: two PIDs");
	check(parse("cprof-attach 12x", &o, err) == -EINVAL, "options: bad PID");
	check(parse("cprof-attach 12 -- ls", &o, err) == -EINVAL, "options: PID and command");
	check(parse("cprof-attach --help", &o, err) == 0 && o.help, "options: --help");
}

/* perf's, py-spy's and strace's spellings, PID lists, the many-process
 * options, and what each refuses (issue 15 item 2, issue 12). */
static void test_options_habits(void)
{
	struct options o;
	char err[512];
	check(parse("cprof-attach -p 4242", &o, err) == 0 && o.pid == 4242 && o.npids == 1 &&
	      o.pids[0] == 4242, "options: -p PID");
	check(parse("cprof-attach --pid 7", &o, err) == 0 && o.pid == 7, "options: --pid PID");
	check(parse("cprof-attach --pid=8", &o, err) == 0 && o.pid == 8, "options: --pid=PID");
	check(parse("cprof-attach -p9", &o, err) == 0 && o.pid == 9, "options: -pPID");
	check(parse("cprof-attach -p 101,102,103", &o, err) == 0 && o.npids == 3 && o.pid == 101 &&
	      o.pids[1] == 102 && o.pids[2] == 103, "options: -p 101,102,103");
	check(parse("cprof-attach 101,102", &o, err) == 0 && o.npids == 2 && o.pids[1] == 102,
	      "options: positional PID list");
	check(parse("cprof-attach -p 5,6,5 -p 7", &o, err) == 0 && o.npids == 3 && o.pids[2] == 7,
	      "options: -p repeated adds, a PID given twice counts once");
	char *pidof[] = { "cprof-attach", "-p", "11 12\n", NULL };
	check(options__parse(&o, 3, pidof, err, sizeof(err)) == 0 && o.npids == 2 && o.pids[1] == 12,
	      "options: -p \"$(pidof x)\" (spaces) is a list");
	check(parse("cprof-attach -F 999 1", &o, err) == 0 && o.hz == 999, "options: -F N");
	check(parse("cprof-attach --rate 49 1", &o, err) == 0 && o.hz == 49, "options: --rate N");
	check(parse("cprof-attach -f folded -o x.pprof 1", &o, err) == 0 && o.format == FORMAT_FOLDED,
	      "options: -f F");
	check(parse("cprof-attach -t -o x.folded 1", &o, err) == 0 && o.thread_root, "options: -t");
	check(parse("cprof-attach -V", &o, err) == 0 && o.version, "options: -V");
	static const struct { const char *arg; double secs; } times[] = {
		{ "2", 2 }, { "0.5", 0.5 }, { ".5", 0.5 }, { "2s", 2 }, { "500ms", 0.5 },
		{ "1.5m", 90 }, { "1m", 60 }, { "0.25s", 0.25 },
	};
	for (size_t i = 0; i < sizeof(times) / sizeof(*times); i++) {
		char line[128], name[160];
		snprintf(line, sizeof(line), "cprof-attach -d %s 1", times[i].arg);
		snprintf(name, sizeof(name), "options: -d %s is %g s", times[i].arg, times[i].secs);
		check(parse(line, &o, err) == 0 && o.duration > times[i].secs - 1e-9 &&
		      o.duration < times[i].secs + 1e-9, name);
	}
	check(parse("cprof-attach --duration 2s 1", &o, err) == 0 && o.duration == 2,
	      "options: --duration 2s");
	check(parse("cprof-attach 1", &o, err) == 0 && !o.subprocesses && !o.subprocesses_given &&
	      !o.processes && !o.dump, "options: attaching: no subprocesses by default");
	check(parse("cprof-attach -o x.pprof -- ls", &o, err) == 0 && o.subprocesses &&
	      !o.subprocesses_given && o.npids == 0 && o.pid == 0,
	      "options: launch mode follows subprocesses by default");
	check(parse("cprof-attach --no-subprocesses -o x.pprof -- ls", &o, err) == 0 &&
	      !o.subprocesses && o.subprocesses_given, "options: --no-subprocesses in launch mode");
	check(parse("cprof-attach --subprocesses 1", &o, err) == 0 && o.subprocesses &&
	      o.subprocesses_given, "options: --subprocesses with a PID");
	check(parse("cprof-attach --processes -o x.svg 1,2", &o, err) == 0 && o.processes &&
	      o.nwarnings == 0, "options: --processes with svg, no warning");
	check(parse("cprof-attach --dump 1", &o, err) == 0 && o.dump && !o.output &&
	      o.format == FORMAT_AUTO, "options: --dump: no file, no format unless asked");
	check(parse("cprof-attach --tid 5 --tid 6 -p 1,2", &o, err) == 0 && o.ntids == 2,
	      "options: --tid with several PIDs");
	static const struct { const char *line, *says; } refused[] = {
		{ "-p", "positionally|PID" }, { "--pid", "PID" }, { "-x 1", "-p" },
		{ "-v", "-V" }, { "-p 1 2", "not both" }, { "-p 1 -- ls", "not both" },
		{ "-p 0", "-p" }, { "-p 1,,2", "list" }, { "-p 1,", "list" }, { "-p ,1", "list" },
		{ "-p abc", "pidof" }, { "1,x", "list" }, { "-d 2x 1", "duration" },
		{ "-d -1 1", "duration" }, { "-d 0 1", "duration" }, { "-d 0s 1", "duration" },
		{ "-d 1e3 1", "duration" }, { "-d ms 1", "duration" }, { "-d 1d 1", "duration" },
		{ "-d inf 1", "duration" }, { "-F 0 1", "hz" }, { "--rate 20000 1", "hz" },
		{ "-f xml 1", "format" }, { "--dump -- ls", "dump" },
		{ "1 2", "101,102" }, { "nginx", "pidof" },
	};
	for (size_t i = 0; i < sizeof(refused) / sizeof(*refused); i++) {
		char line[128], name[160];
		snprintf(line, sizeof(line), "cprof-attach %s", refused[i].line);
		int r = parse(line, &o, err);
		snprintf(name, sizeof(name), "options: '%s' refused, saying '%s'", refused[i].line,
			 refused[i].says);
		int says = 0;
		for (const char *w = refused[i].says, *bar; *w; w = *bar ? bar + 1 : bar) {
			bar = strchr(w, '|');
			if (!bar)
				bar = w + strlen(w);
			says = says || memmem(err, strlen(err), w, (size_t)(bar - w)) != NULL;
		}
		check(r == -EINVAL && says && !strchr(err, '\n'), name);
	}
	char many[512] = "cprof-attach -p 1";
	for (int i = 2; i <= MAX_PIDS + 1; i++)
		snprintf(many + strlen(many), sizeof(many) - strlen(many), ",%d", i);
	check(parse(many, &o, err) == -EINVAL && strstr(err, "at most"), "options: at most 64 PIDs");
	static const char *const words[] = { "record", "attach", "dump", "top", "report", "stat" };
	for (size_t i = 0; i < sizeof(words) / sizeof(*words); i++) {
		char line[64], want[64], name[96];
		snprintf(line, sizeof(line), "cprof-attach %s 4242", words[i]);
		snprintf(want, sizeof(want), "'%s' is not a subcommand: ", words[i]);
		snprintf(name, sizeof(name), "options: '%s PID' gets a pointer", words[i]);
		check(parse(line, &o, err) == -EINVAL && strncmp(err, want, strlen(want)) == 0, name);
	}
	check(parse("cprof-attach dump 1", &o, err) == -EINVAL && strstr(err, "--dump"),
	      "options: 'dump' points to --dump");
	check(parse("cprof-attach top", &o, err) == -EINVAL && strstr(err, "go tool pprof -top"),
	      "options: 'top' points to go tool pprof -top");
	check(parse("cprof-attach record -p 1", &o, err) == -EINVAL && strstr(err, "-o out.pprof"),
	      "options: 'record -p PID' points to the command line that records");
}

/* Format by the output's name, the refusal of other names, the default
 * name, and the warnings for options a format does not use. */
/* One source for the options: every long option of the parser's table is
 * in --help and in the man page (which spells '-' as '\-'). */
static void test_options_documented(void)
{
	FILE *f = fopen("contrib/cprof-attach.1", "r");
	static char man[1 << 18];
	size_t n = f ? fread(man, 1, sizeof(man) - 1, f) : 0;
	if (f)
		fclose(f);
	man[n] = '\0';
	check(n > 1000, "options documented: the man page is readable (run from the repository)");
	char missing_help[1024] = "", missing_man[1024] = "";
	size_t count = 0;
	for (const struct option *o = options__table(); o->name; o++, count++) {
		char want[96], esc[192];
		snprintf(want, sizeof(want), "--%s", o->name);
		size_t k = 0;
		for (const char *c = want; *c && k + 3 < sizeof(esc); c++) {
			if (*c == '-')
				esc[k++] = '\\';
			esc[k++] = *c;
		}
		esc[k] = '\0';
		const char *at = strstr(options__usage, want);
		int in_help = at && !(at[strlen(want)] >= 'a' && at[strlen(want)] <= 'z') &&
			      at[strlen(want)] != '-';
		if (!in_help && strlen(missing_help) + strlen(want) + 2 < sizeof(missing_help))
			strcat(strcat(missing_help, " "), want);
		if (n && !strstr(man, esc) && strlen(missing_man) + strlen(want) + 2 < sizeof(missing_man))
			strcat(strcat(missing_man, " "), want);
	}
	if (*missing_help)
		printf("# not in --help:%s\n", missing_help);
	if (*missing_man)
		printf("# not in the man page:%s\n", missing_man);
	check(count > 30 && !*missing_help, "options documented: every long option of the table is in --help");
	check(count > 30 && n && !*missing_man, "options documented: every long option of the table is in the man page");
}

static void test_options_formats(void)
{
	struct options o;
	char err[512];
	static const struct { const char *name; enum out_format f; } by_name[] = {
		{ "x.pprof", FORMAT_PPROF }, { "x.pb.gz", FORMAT_PPROF }, { "x.pb", FORMAT_PPROF },
		{ "x.prof", FORMAT_PPROF }, { "X.PROF", FORMAT_PPROF }, { "x.Pb.Gz", FORMAT_PPROF },
		{ "x.svg", FORMAT_SVG }, { "x.SVG", FORMAT_SVG }, { "x.json", FORMAT_SPEEDSCOPE },
		{ "x.folded", FORMAT_FOLDED }, { "x.collapsed", FORMAT_FOLDED },
		{ "x.txt", FORMAT_FOLDED }, { "-", FORMAT_FOLDED }, { "x.html", FORMAT_AUTO },
		{ "x.gz", FORMAT_AUTO }, { "x", FORMAT_AUTO }, { "x.out", FORMAT_AUTO },
		{ ".svg", FORMAT_AUTO }, { "", FORMAT_AUTO }, { "svg", FORMAT_AUTO },
	};
	int ok = 1;
	for (size_t i = 0; i < sizeof(by_name) / sizeof(*by_name); i++) {
		if (options__format_for(by_name[i].name) != by_name[i].f) {
			printf("# format_for(\"%s\") = %d\n", by_name[i].name,
			       options__format_for(by_name[i].name));
			ok = 0;
		}
	}
	check(ok, "options: format_for: every ending, case-insensitive; others FORMAT_AUTO");
	check(parse("cprof-attach -o x.prof 1", &o, err) == 0 && o.format == FORMAT_PPROF &&
	      strcmp(o.output, "x.prof") == 0, "options: -o x.prof is pprof");
	const char *unknown[] = { "x.html", "x.gz", "x", "dir/out" };
	for (size_t i = 0; i < sizeof(unknown) / sizeof(*unknown); i++) {
		char line[128], name[160];
		snprintf(line, sizeof(line), "cprof-attach -o %s 1", unknown[i]);
		snprintf(name, sizeof(name), "options: -o %s refused, listing formats and endings",
			 unknown[i]);
		check(parse(line, &o, err) == -EINVAL && strstr(err, unknown[i]) &&
		      strstr(err, "speedscope") && strstr(err, ".pb.gz") && strstr(err, ".collapsed") &&
		      !strchr(err, '\n'), name);
	}
	check(parse("cprof-attach -o x.html --format svg 1", &o, err) == 0 && o.format == FORMAT_SVG,
	      "options: any name with --format");
	check(parse("cprof-attach --convert in.folded -o x.html", &o, err) == -EINVAL,
	      "options: --convert -o x.html refused");
	check(parse("cprof-attach -o - 1", &o, err) == 0 && strcmp(o.output, "-") == 0 &&
	      o.format == FORMAT_FOLDED, "options: -o - is folded on standard output");
	check(parse("cprof-attach -o - -f pprof 1", &o, err) == 0 && strcmp(o.output, "-") == 0 &&
	      o.format == FORMAT_PPROF, "options: -o - --format pprof");
	static const struct { const char *fmt, *name; } defaults[] = {
		{ "", "cprof-42.pprof" }, { "--format pprof", "cprof-42.pprof" },
		{ "--format svg", "cprof-42.svg" }, { "--format folded", "cprof-42.folded" },
		{ "--format speedscope", "cprof-42.json" },
	};
	for (size_t i = 0; i < sizeof(defaults) / sizeof(*defaults); i++) {
		char line[128], name[160];
		snprintf(line, sizeof(line), "cprof-attach %s 42", defaults[i].fmt);
		snprintf(name, sizeof(name), "options: no -o, '%s': %s", defaults[i].fmt,
			 defaults[i].name);
		check(parse(line, &o, err) == 0 && o.output && strcmp(o.output, defaults[i].name) == 0,
		      name);
	}
	check(parse("cprof-attach -f svg -p 42,43", &o, err) == 0 &&
	      strcmp(o.output, "cprof-42.svg") == 0, "options: several PIDs: named after the first");
	check(parse("cprof-attach --format svg -- ls", &o, err) == 0 && !o.output,
	      "options: launch mode without -o: no name yet");
	char name[64];
	output__default_name(FORMAT_SPEEDSCOPE, 77, name, sizeof(name));
	check(strcmp(name, "cprof-77.json") == 0, "options: default_output for launch mode");
	check(parse("cprof-attach -o x.folded -t --cpu --processes 1", &o, err) == 0 &&
	      o.nwarnings == 0, "options: --threads --cpu --processes with folded: no warning");
	check(parse("cprof-attach -o x.pprof --threads 1", &o, err) == 0 && o.nwarnings == 1 &&
	      strstr(o.warnings[0], "--threads") && strstr(o.warnings[0], "thread") &&
	      strstr(o.warnings[0], "label"), "options: --threads with pprof: a warning (labels)");
	check(parse("cprof-attach --cpu 1", &o, err) == 0 && o.nwarnings == 1 &&
	      strstr(o.warnings[0], "-sample_index=cpu"), "options: --cpu with pprof: a warning");
	check(parse("cprof-attach -o x.pb -t --processes --cpu 1", &o, err) == 0 && o.nwarnings == 3,
	      "options: three options pprof does not use: three warnings");
	check(parse("cprof-attach -o x.json -t 1", &o, err) == 0 && o.nwarnings == 1 &&
	      strstr(o.warnings[0], "speedscope"), "options: --threads with speedscope: a warning");
	ok = 1;
	parse("cprof-attach -o x.pb -t --processes --cpu 1", &o, err);
	for (size_t i = 0; i < o.nwarnings; i++)
		ok = ok && o.warnings[i][0] && !strchr(o.warnings[i], '\n');
	check(ok, "options: warnings are one line each");
}

/* Adds COUNT samples of thread SLOT in STATE with PCS[0..N), CPU ns. */
static void add(struct stacks *st, uint32_t slot, char state, const uint64_t *pcs, size_t n,
		uint64_t count, uint64_t cpu)
{
	struct stack s = { .slot = slot, .state = state, .syscall = -1, .pcs = pcs, .n = n, .count = count,
			   .cpu_ns = cpu };
	stacks__add(st, &s);
}


/* Always on: counts taken and zeroed while counting goes on add up to the
 * run's, a view sums its slices, and -o's patterns expand as documented. */
static void test_slices(void)
{
	struct stacks *st = stacks__new();
	uint64_t a[] = { 1, 2, 3 }, b[] = { 4 };
	struct stacks_slice s1, s2, s3;
	add(st, 0, 'R', a, 3, 2, 10);
	add(st, 1, 'S', b, 1, 1, 0);
	stacks__take(st, &s1);
	add(st, 0, 'R', a, 3, 3, 5);
	stacks__take(st, &s2);
	stacks__take(st, &s3);
	check(s1.n == 2 && s1.total == 3 && s2.n == 1 && s2.total == 3 && s2.counts[0] == 3 &&
	      s2.cpu[0] == 5 && s3.n == 0 && s3.total == 0,
	      "slices: each take has the counts since the last, zeroed after");
	check(s1.total + s2.total + s3.total == stacks__total(st), "slices: the takes add up to the run");
	stacks__set_label(st, 1, &(struct stack_label){ 7, 8, 0, "proc", "thr", NULL, NULL, NULL, NULL });
	const struct stacks_slice *both[] = { &s1, &s2 };
	struct stacks *v = stacks__view(st, both, 2);
	struct stack x;
	uint64_t ra = 0;
	for (size_t i = 0; v && i < stacks__unique(v); i++) {
		stacks__get(v, i, &x);
		if (x.n == 3)
			ra = x.count;
	}
	check(v && stacks__unique(v) == 2 && stacks__total(v) == 6 && ra == 5 &&
	      stacks__label(v, 1) && stacks__label(v, 1)->tid == 8,
	      "slices: a view of two slices sums them and keeps the labels");
	stacks__free(v);
	stacks__slice_free(&s1);
	stacks__slice_free(&s2);
	stacks__slice_free(&s3);
	stacks__free(st);

	/* A 10-minute dump: a view of 600 slices, each of the same 2,000
	 * (thread, stack) pairs, made with sampling paused.  Each pair was
	 * interned again for each slice: 197 ms here; summed by id first,
	 * 11 ms (the bound: 60 ms, but under the sanitizers). */
	{
		enum { NS = 2000, SL = 600 };
		struct stacks *big = stacks__new();
		int64_t *ids = xcalloc(NS, sizeof(*ids));
		uint64_t pcs[30];
		for (size_t i = 0; i < NS; i++) {
			for (size_t k = 0; k < 30; k++)
				pcs[k] = 0x400000 + i * 131 + k * 7;
			struct stack k = { .slot = (uint32_t)(i % 4000), .state = 'S', .syscall = -1,
					   .pcs = pcs, .n = 30, .count = 1 };
			ids[i] = stacks__add(big, &k);
		}
		struct stacks_slice *sl = xcalloc(SL + 1, sizeof(*sl));
		const struct stacks_slice **vv = xcalloc(SL, sizeof(*vv));
		stacks__take(big, &sl[SL]);
		for (size_t j = 0; j < SL; j++) {
			for (size_t i = 0; i < NS; i++)
				stacks__add_again(big, ids[i], 1, 0);
			stacks__take(big, &sl[j]);
			vv[j] = &sl[j];
		}
		struct timespec t0, t1;
		clock_gettime(CLOCK_MONOTONIC, &t0);
		struct stacks *bv = stacks__view(big, vv, SL);
		clock_gettime(CLOCK_MONOTONIC, &t1);
		double ms = (double)(t1.tv_sec - t0.tv_sec) * 1e3 + (double)(t1.tv_nsec - t0.tv_nsec) / 1e6;
		int sanitized = 0;
#if defined(__SANITIZE_ADDRESS__)
		sanitized = 1;
#endif
		printf("# a view of %d slices of %d pairs: %.1f ms\n", SL, NS, ms);
		check(bv && stacks__unique(bv) == NS && stacks__total(bv) == (uint64_t)NS * SL &&
		      (sanitized || ms < 60),
		      "slices: a view of 600 slices of 2,000 pairs (a 10-minute dump) sums them, in under 60 ms");
		stacks__free(bv);
		for (size_t j = 0; j <= SL; j++)
			stacks__slice_free(&sl[j]);
		free(sl);
		free(vv);
		free(ids);
		stacks__free(big);
	}

	char buf[256], err[256];
	uint64_t t = 1790000000ull * 1000000000ull;     /* 2026-09-21 14:13:20 UTC */
	check(pattern__expand("p-%p-%n.pprof", 42, 7, t, buf, sizeof(buf), err, sizeof(err)) == 0 &&
	      strcmp(buf, "p-42-7.pprof") == 0, "pattern: %p and %n");
	check(pattern__expand("r-%n{3}.folded", 1, 7, t, buf, sizeof(buf), err, sizeof(err)) == 0 &&
	      strcmp(buf, "r-1.folded") == 0, "pattern: %n{3} counts modulo 3");
	check(pattern__expand("t-%t-100%%.svg", 1, 0, t, buf, sizeof(buf), err, sizeof(err)) == 0 &&
	      strcmp(buf, "t-20260921-141320-100%.svg") == 0, "pattern: %t in UTC, %% a percent sign");
	check(pattern__expand("x-%q", 1, 0, t, buf, sizeof(buf), err, sizeof(err)) == -EINVAL &&
	      pattern__expand("x-%n{0}", 1, 0, t, buf, sizeof(buf), err, sizeof(err)) == -EINVAL &&
	      pattern__expand("x-%n{3", 1, 0, t, buf, sizeof(buf), err, sizeof(err)) == -EINVAL &&
	      pattern__expand("x-%", 1, 0, t, buf, sizeof(buf), err, sizeof(err)) == -EINVAL,
	      "pattern: unknown sequences and bad %n{MAX} refused");
	check(pattern__expand("%n%n%n%n", 1, 123456789, t, buf, 20, err, sizeof(err)) == -ENAMETOOLONG,
	      "pattern: a name too long for the buffer refused");
	check(pattern__is("a-%n.pprof") && pattern__is("%t") &&
	      !pattern__is("a-%p.pprof") && !pattern__is("100%%.pprof"),
	      "pattern: only %n and %t change from file to file");
}

static void test_stacks(void)
{
	struct stacks *st = stacks__new();
	uint64_t a[] = { 1, 2, 3 }, b[] = { 1, 2 };
	add(st, 0, 'R', a, 3, 1, 100);
	add(st, 0, 'R', a, 3, 1, 50);
	add(st, 1, 'R', a, 3, 1, 0);
	add(st, 0, 'R', b, 2, 1, 0);
	struct stack s;
	stacks__get(st, 0, &s);
	check(stacks__unique(st) == 3 && stacks__total(st) == 4, "stacks: counted by (thread, stack)");
	check(s.slot == 0 && s.state == 'R' && s.n == 3 && s.pcs[2] == 3 && s.count == 2 &&
	      s.cpu_ns == 150, "stacks: first stack read back, counts and CPU summed");
	add(st, 0, 'S', a, 3, 5, 0);
	stacks__get(st, 3, &s);
	check(stacks__unique(st) == 4 && s.state == 'S' && s.count == 5 && stacks__total(st) == 9,
	      "stacks: the state is part of the key; a capture may count several ticks");
	for (int i = 0; i < 100000; i++)
		add(st, 0, 'R', a, 3, 1, 1);
	check(stacks__unique(st) == 4, "stacks: memory grows with unique stacks, not samples");
	struct stack k = { .slot = 0, .state = 'R', .syscall = -1, .pcs = a, .n = 3, .count = 1 };
	int64_t id = stacks__add(st, &k);
	uint64_t before = stacks__total(st);
	stacks__add_again(st, id, 7, 5);
	stacks__get(st, (size_t)id, &s);
	check(id == 0 && stacks__unique(st) == 4 && stacks__total(st) == before + 7 &&
	      s.count == 100000 + 2 + 1 + 7, "stacks: add returns the id; add_again counts it again");
	check(strcmp(stacks__state_name('D'), "disk wait") == 0 &&
	      strcmp(stacks__state_name('t'), "stopped") == 0, "stacks: state names");
	stacks__free(st);

	/* Labels of thread slots (from 0) and goroutine slots (from 1 << 20). */
	st = stacks__new();
	struct stack_label l1 = { 10, 11, 0, "p", "t", NULL, NULL, NULL, NULL }, l2 = { 10, 0, 7, "p", "g", "main.main", NULL, "goroutine", NULL };
	stacks__set_label(st, 3, &l1);
	stacks__set_label(st, (1u << 20) + 5, &l2);
	stacks__set_label(st, 3, &l1);
	const struct stack_label *r1 = stacks__label(st, 3), *r2 = stacks__label(st, (1u << 20) + 5);
	check(r1 && r1->tid == 11 && strcmp(r1->thread, "t") == 0 && r2 && r2->unit_id == 7 &&
	      strcmp(r2->origin, "main.main") == 0 && r2->unit && strcmp(r2->unit, "goroutine") == 0 && !stacks__label(st, 4) &&
	      !stacks__label(st, 1u << 19) && !stacks__label(st, UINT32_MAX),
	      "stacks: labels of slots far apart, set, replaced and read back; none elsewhere");
	stacks__free(st);
}

/* Removable keys: ids freed and handed out again, lookups of the keys
 * left still right after removals in the middle of probe chains. */
static void test_intern_remove(void)
{
	struct intern *in = intern__new_removable();
	char key[32];
	int added, bad = 0;
	for (int i = 0; i < 5000; i++) {
		int n = snprintf(key, sizeof(key), "k%d", i);
		bad |= intern__add(in, key, (size_t)n, NULL) != i;
	}
	for (int i = 0; i < 5000; i += 3)
		intern__remove(in, (size_t)i);
	intern__remove(in, 0);          /* free already: ignored */
	for (int i = 0; i < 5000; i++) {
		int n = snprintf(key, sizeof(key), "k%d", i);
		int64_t want = i % 3 ? i : -1;
		bad |= intern__find(in, key, (size_t)n) != want || intern__has(in, (size_t)i) != (i % 3 != 0);
	}
	check(!bad && intern__live(in) == 5000 - 1667 && intern__count(in) == 5000,
	      "intern: removed keys are gone, the others found where they were");
	int64_t id = intern__add(in, "new", 3, &added);
	check(added && id >= 0 && id < 5000 && id % 3 == 0 && intern__count(in) == 5000,
	      "intern: a removed id is handed out again before a new one");
	for (int i = 0; i < 20000; i++) {  /* churn: add and remove, many times over */
		int n = snprintf(key, sizeof(key), "c%d", i);
		int64_t c = intern__add(in, key, (size_t)n, NULL);
		if (i >= 10)
			intern__remove(in, (size_t)intern__find(in, key, (size_t)snprintf(key, sizeof(key), "c%d", i - 10)));
		bad |= c < 0;
	}
	check(!bad && intern__live(in) == 5000 - 1667 + 1 + 10 && intern__count(in) <= 5011 &&
	      intern__find(in, "c19999", 6) >= 0 && intern__find(in, "c19989", 6) == -1 &&
	      intern__find(in, "k4999", 5) == 4999,
	      "intern: 20000 keys added and removed in turn: ids stay within what is held");
	intern__free(in);
}

/* Aging: a stack is freed only once it is in no slice kept and not
 * counted since; one kept by its holder stays; ids come back to new
 * stacks, with counts of their own. */
static void test_stacks_age(void)
{
	struct stacks *st = stacks__new();
	uint64_t a[] = { 1, 2, 3 }, b[] = { 4, 5 }, c[] = { 6 }, d[] = { 7, 8, 9, 10 };
	struct stacks_slice s0, s1, s2, s3;
	add(st, 0, 'R', a, 3, 2, 0);                    /* epoch 0: a, b, c */
	add(st, 0, 'S', b, 2, 1, 0);
	add(st, 1, 'S', c, 1, 1, 0);
	stacks__take(st, &s0);
	add(st, 0, 'R', a, 3, 1, 0);                    /* epoch 1: a */
	stacks__take(st, &s1);
	check(s0.epoch == 0 && s1.epoch == 1 && stacks__epoch(st) == 2, "age: a take ends an epoch");
	check(stacks__age(st, 0) == 0 && stacks__live(st) == 3, "age: nothing before epoch 0");
	/* s0 dropped by its holder: the oldest slice kept is s1 (epoch 1).
	 * c is held elsewhere (a thread's cookie): kept. */
	stacks__keep(st, 2);
	size_t freed = stacks__age(st, s1.epoch);
	struct stack x;
	stacks__get(st, 0, &x);
	check(freed == 1 && stacks__live(st) == 2 && stacks__exists(st, 0) && !stacks__exists(st, 1) &&
	      stacks__exists(st, 2) && x.n == 3 && x.count == 3,
	      "age: only the stack in no slice kept and not held is freed (b)");
	const struct stacks_slice *one[] = { &s1 };
	struct stacks *v = stacks__view(st, one, 1);
	check(v && stacks__total(v) == 1, "age: the slice kept is still whole");
	stacks__free(v);
	struct stack k = { .slot = 3, .state = 'R', .syscall = -1, .pcs = d, .n = 4, .count = 4 };
	int64_t id = stacks__add(st, &k);
	stacks__get(st, (size_t)id, &x);
	check(id == 1 && x.count == 4 && x.n == 4 && x.pcs[3] == 10 && x.slot == 3 && stacks__unique(st) == 3,
	      "age: a new stack takes the freed id, with its own count");
	stacks__add_again(st, 1, 1, 0);
	stacks__take(st, &s2);                          /* epoch 2: d */
	check(s2.n == 1 && s2.ids[0] == 1 && s2.counts[0] == 5, "age: the reused id is counted as the new stack");
	/* Later: nothing kept before epoch 3, a and c not counted since. */
	stacks__take(st, &s3);
	freed = stacks__age(st, 3);
	check(freed == 3 && stacks__live(st) == 0, "age: every stack not counted since is freed");
	add(st, 0, 'S', b, 2, 1, 0);                    /* b again: a new stack */
	check(stacks__live(st) == 1 && stacks__unique(st) == 3, "age: the table holds what is live");
	/* A table that churns: 1000 new stacks a take, for 100 takes, aged
	 * to the last 2 takes: ids stay within 3000. */
	for (uint64_t t = 0; t < 100; t++) {
		for (uint64_t i = 0; i < 1000; i++) {
			uint64_t pcs[2] = { t, i };
			add(st, 0, 'R', pcs, 2, 1, 0);
		}
		struct stacks_slice sl;
		stacks__take(st, &sl);
		stacks__slice_free(&sl);
		uint64_t now = stacks__epoch(st);
		stacks__age(st, now > 2 ? now - 2 : 0);
	}
	check(stacks__live(st) == 2000 && stacks__unique(st) <= 3003,
	      "age: a churning table holds the stacks of the last takes, not of every take");
	stacks__slice_free(&s0);
	stacks__slice_free(&s1);
	stacks__slice_free(&s2);
	stacks__slice_free(&s3);
	stacks__free(st);
}

static void test_sparse(void)
{
	struct sparse a;
	sparse__init(&a, sizeof(uint64_t));
	check(!sparse__get(&a, 0) && sparse__next(&a, 0) == UINT32_MAX, "sparse: empty");
	*(uint64_t *)sparse__put(&a, 5) = 55;
	*(uint64_t *)sparse__put(&a, (1u << 20) + 1) = 77;
	uint64_t *x = sparse__get(&a, 5), *y = sparse__get(&a, (1u << 20) + 1), *z = sparse__get(&a, 6);
	check(x && *x == 55 && y && *y == 77 && z && *z == 0 && !sparse__get(&a, 1u << 19) &&
	      !sparse__get(&a, UINT32_MAX), "sparse: written, zeroed neighbour, unwritten far away");
	size_t pages = 0;
	for (size_t p = 0; p < a.npages; p++)
		pages += a.pages[p] != NULL;
	check(pages == 2, "sparse: two pages for two indices a million apart");
	check(sparse__next(&a, 0) == 0 && sparse__next(&a, 6) == 6 &&
	      sparse__next(&a, SPARSE_PAGE) == 1u << 20 &&
	      sparse__next(&a, (1u << 20) + SPARSE_PAGE) == UINT32_MAX, "sparse: next skips the gap");
	sparse__free(&a);
	sparse__free(&a);

	struct timeline *tl = timeline__new();
	timeline__add(tl, 2, 9, 1);
	timeline__add(tl, 2, 9, 3);
	timeline__add(tl, (1u << 20) + 4, 8, 1);
	size_t n, m;
	const struct timeline_run *r = timeline__runs(tl, 2, &n), *q = timeline__runs(tl, (1u << 20) + 4, &m);
	uint32_t slots = 0;
	for (uint32_t s = timeline__next_slot(tl, 0); s != UINT32_MAX; s = timeline__next_slot(tl, s + 1))
		slots += timeline__runs(tl, s, &m) != NULL;
	check(n == 1 && r[0].stack == 9 && r[0].count == 4 && q && q[0].stack == 8 && slots == 2,
	      "timeline: runs by slot, slots far apart walked");
	timeline__free(tl);
}

/* Symbolic frames age with the stacks that name them: a frame no kept
 * stack names is freed, its id given to another frame with another PC (an
 * old PC names nothing), the frames a kept stack names stay, and a view
 * of the slices kept names them with ids freed in between. */
static void test_symbolic_age(void)
{
	struct stacks *st = stacks__new();
	struct stacks_slice sl;
	uint64_t keep = stacks__symbolic_pc(st, &(struct stacks_frame){ "main", "m.py", NULL, 1 });
	uint64_t gen0 = stacks__symbolic_gen(st);
	for (int i = 0; i < 1000; i++) {
		char name[32];
		snprintf(name, sizeof(name), "f_%d", i);
		uint64_t pcs[] = { stacks__symbolic_pc(st, &(struct stacks_frame){ name, "gen.py", NULL, 2 }),
				   keep };
		add(st, 0, 'R', pcs, 2, 1, 0);
		if (i % 100 == 99) {            /* a period: take, keep the last 2 */
			stacks__take(st, &sl);
			stacks__slice_free(&sl);
			uint64_t now = stacks__epoch(st);
			stacks__age(st, now > 2 ? now - 2 : 0);
		}
	}
	check(stacks__symbolic_live(st) <= 202 && stacks__symbolic_gen(st) > gen0,
	      "symbolic age: frames no kept stack names are freed (at most 202 of 1001 held)");
	struct stacks_frame f;
	uint64_t old = STACKS_PC_SYMBOLIC | 1;  /* f_0's PC: freed */
	uint64_t fresh = stacks__symbolic_pc(st, &(struct stacks_frame){ "new", "n.py", NULL, 3 });
	check(stacks__symbolic(st, keep, &f) == 0 && !strcmp(f.func, "main") && stacks__symbolic(st, old, &f) < 0 &&
	      stacks__symbolic(st, fresh, &f) == 0 && !strcmp(f.func, "new"),
	      "symbolic age: a kept frame stays; a freed frame's PC names nothing, not the next one");
	uint64_t pcs[] = { fresh, keep };
	add(st, 0, 'R', pcs, 2, 5, 0);
	stacks__take(st, &sl);
	const struct stacks_slice *v1[] = { &sl };
	struct stacks *view = stacks__view(st, v1, 1);
	struct stack s;
	int ok = view && stacks__unique(view) == 1;
	if (ok) {
		stacks__get(view, 0, &s);
		ok = s.n == 2 && stacks__symbolic(view, s.pcs[0], &f) == 0 && !strcmp(f.func, "new") &&
		     stacks__symbolic(view, s.pcs[1], &f) == 0 && !strcmp(f.func, "main");
	}
	check(ok, "symbolic age: a view keeps each frame's PC across the ids freed");
	stacks__free(view);
	stacks__slice_free(&sl);
	stacks__free(st);
}

/* Frames that are not addresses (an interpreter's function, file and line;
 * a kernel function) travel through the table, a view of it, naming and
 * the writers: pprof's Function and Line, folded. */
static void test_symbolic(void)
{
	struct stacks *st = stacks__new();
	uint64_t py = stacks__symbolic_pc(st, &(struct stacks_frame){ "handle_request", "app/views.py",
								      "views.py", 42 });
	uint64_t again = stacks__symbolic_pc(st, &(struct stacks_frame){ "handle_request",
									 "app/views.py", "views.py", 42 });
	uint64_t other = stacks__symbolic_pc(st, &(struct stacks_frame){ "handle_request",
									 "app/views.py", "views.py", 43 });
	uint64_t k = stacks__kernel_pc(st, "do_sys_poll");
	struct stacks_frame f;
	check(py == again && py != other && (py & STACKS_PC_SYMBOLIC) && stacks__symbolic(st, py, &f) == 0 &&
	      !strcmp(f.func, "handle_request") && !strcmp(f.file, "app/views.py") &&
	      !strcmp(f.module, "views.py") && f.line == 42 && stacks__symbolic(st, 0x401000, &f) < 0 &&
	      stacks__symbolic(st, STACKS_PC_TRUNCATED, &f) < 0,
	      "symbolic frames: one PC per frame, read back; addresses are not symbolic");
	uint64_t pcs[] = { k, py };
	add(st, 0, 'S', pcs, 2, 3, 0);
	stacks__set_label(st, 0, &(struct stack_label){ 7, 7, 0, "python3", "MainThread", NULL, NULL, NULL, NULL });
	struct stacks_slice sl;
	stacks__take(st, &sl);
	const struct stacks_slice *v1[] = { &sl };
	struct stacks *view = stacks__view(st, v1, 1);
	struct frames *fr = view ? frames__from_stacks(view, NULL, 0, NULL, 0) : NULL;
	int ok = fr && frames__nstacks(fr) == 1;
	struct frame_stack fs;
	if (ok) {
		frames__stack(fr, 0, &fs);
		const struct frame_loc *l0 = frames__loc(fr, fs.locs[0]), *l1 = frames__loc(fr, fs.locs[1]);
		const struct frame_line *a = frames__line(fr, l0->first), *b = frames__line(fr, l1->first);
		const struct frame_module *m = frames__module(fr, l1->module);
		ok = fs.n == 2 && !strcmp(a->func, "do_sys_poll [k]") && !strcmp(b->func, "handle_request") &&
		     b->file && !strcmp(b->file, "app/views.py") && b->line == 42 && m &&
		     !strcmp(m->name, "views.py");
	}
	check(ok, "symbolic frames: named through a view of slices: function, file, line, module");
	char path[] = "/tmp/cprof-unit-XXXXXX", err[256];
	struct profile_info info = { .period_ns = 10101010, .comment = "x" };
	int fd = mkstemp(path);
	int r = fr ? folded__write(fd, fr, &info, err, sizeof(err)) : -1;
	char text[256] = "";
	ssize_t n = r == 0 ? pread(fd, text, sizeof(text) - 1, 0) : -1;
	text[n > 0 ? n : 0] = '\0';
	close(fd);
	check(strstr(text, "handle_request (views.py:42);do_sys_poll [k] 3") != NULL, "symbolic frames: folded, an interpreter frame as func (file:LINE)");
	fd = open(path, O_RDWR | O_TRUNC);
	r = fr ? pprof__write(fd, fr, &info, err, sizeof(err)) : -1;
	close(fd);
	gzFile gz = gzopen(path, "rb");
	static unsigned char buf[1 << 16];
	int len = gz ? gzread(gz, buf, sizeof(buf)) : -1;
	if (gz)
		gzclose(gz);
	unlink(path);
	Perftools__Profiles__Profile *p =
		r == 0 && len > 0 ? perftools__profiles__profile__unpack(NULL, (size_t)len, buf) : NULL;
	ok = 0;
	for (size_t i = 0; p && i < p->n_location; i++)
		for (size_t j = 0; j < p->location[i]->n_line; j++) {
			Perftools__Profiles__Line *ln = p->location[i]->line[j];
			for (size_t q = 0; q < p->n_function; q++)
				if (p->function[q]->id == ln->function_id && ln->line == 42 &&
				    !strcmp(p->string_table[p->function[q]->name], "handle_request") &&
				    !strcmp(p->string_table[p->function[q]->filename], "app/views.py"))
					ok = 1;
		}
	check(ok, "symbolic frames: pprof Function (name, file) and Line 42");
	if (p)
		perftools__profiles__profile__free_unpacked(p, NULL);
	frames__free(fr);
	stacks__free(view);
	stacks__slice_free(&sl);
	stacks__free(st);
}

/* Writes a pprof of fake stacks (no modules: every address is unknown)
 * and reads it back with protobuf-c: the invariants pprof relies on. */
static void test_pprof(void)
{
	struct modules *ms = modules__new(getpid());
	char err[256];
	struct symbolizer *sym = symbolizer__new(ms, NULL, 0, err, sizeof(err));
	struct stacks *st = stacks__new();
	uint64_t a[] = { 0x1000, 0x2000 }, b[] = { 0x1000, 0x3000, 0x2000 };
	add(st, 0, 'S', a, 2, 1, 0);
	add(st, 1, 'R', b, 3, 1, 7000000);
	add(st, 1, 'R', b, 3, 1, 3000000);
	struct stack_label threads[] = { { 0, 10, 0, "", "main", NULL, NULL, NULL, NULL }, { 0, 11, 0, "", "worker", NULL, NULL, NULL, NULL } };
	stacks__set_label(st, 0, &threads[0]);
	stacks__set_label(st, 1, &threads[1]);
	const struct modules *spaces[] = { ms };
	struct frames *fr = frames__from_stacks(st, spaces, 1, NULL, 0);
	struct profile_info info = { .period_ns = 10101010, .start_ns = 1, .duration_ns = 2,
				     .comment = "cmd" };
	char path[] = "/tmp/cprof-unit-XXXXXX";
	int fd = mkstemp(path);
	int r = pprof__write(fd, fr, &info, err, sizeof(err));
	close(fd);
	check(r == 0, "pprof: written");
	gzFile gz = gzopen(path, "rb");
	static unsigned char buf[1 << 20];
	int len = gz ? gzread(gz, buf, sizeof(buf)) : -1;
	if (gz)
		gzclose(gz);
	unlink(path);
	Perftools__Profiles__Profile *p =
		len > 0 ? perftools__profiles__profile__unpack(NULL, (size_t)len, buf) : NULL;
	check(p != NULL, "pprof: gzip + protobuf read back");
	if (!p)
		goto out;
	check(p->n_string_table > 0 && p->string_table[0][0] == '\0', "pprof: string_table[0] is \"\"");
	check(p->n_sample_type == 3 && strcmp(p->string_table[p->sample_type[0]->type], "samples") == 0 &&
	      strcmp(p->string_table[p->sample_type[1]->type], "wall") == 0 &&
	      strcmp(p->string_table[p->sample_type[1]->unit], "nanoseconds") == 0 &&
	      strcmp(p->string_table[p->sample_type[2]->type], "cpu") == 0 &&
	      strcmp(p->string_table[p->sample_type[2]->unit], "nanoseconds") == 0 &&
	      strcmp(p->string_table[p->default_sample_type], "wall") == 0,
	      "pprof: sample types samples/count, wall/nanoseconds, cpu/nanoseconds; default wall");
	check(p->period == 10101010 && p->period_type &&
	      strcmp(p->string_table[p->period_type->type], "wall") == 0, "pprof: period and its type");
	int ok = p->n_sample == 2;
	uint64_t total = 0, cpu = 0;
	for (size_t i = 0; ok && i < p->n_sample; i++) {
		ok = p->sample[i]->n_value == 3 && p->sample[i]->n_label == 3 &&
		     strcmp(p->string_table[p->sample[i]->label[0]->key], "state") == 0;
		total += (uint64_t)p->sample[i]->value[0];
		cpu += (uint64_t)p->sample[i]->value[2];
		ok = ok && p->sample[i]->value[1] == p->sample[i]->value[0] * 10101010;
		for (size_t j = 0; ok && j < p->sample[i]->n_location_id; j++)
			ok = p->sample[i]->location_id[j] >= 1 &&
			     p->sample[i]->location_id[j] <= p->n_location;
	}
	check(ok && total == 3 && cpu == 10000000,
	      "pprof: samples have 3 values, state/thread/tid labels, valid location ids");
	ok = p->n_location == 3;
	for (size_t i = 0; ok && i < p->n_location; i++)
		ok = p->location[i]->id == i + 1 && p->location[i]->n_line >= 1 &&
		     p->location[i]->line[0]->function_id >= 1 &&
		     p->location[i]->line[0]->function_id <= p->n_function;
	check(ok, "pprof: one location per unique address, ids 1..n, each with a line");
	ok = 1;
	for (size_t i = 0; i < p->n_function; i++)
		ok = ok && p->function[i]->id == i + 1 && p->string_table[p->function[i]->name][0];
	check(ok, "pprof: functions have ids 1..n and non-empty names");
	perftools__profiles__profile__free_unpacked(p, NULL);
out:
	frames__free(fr);
	stacks__free(st);
	symbolizer__free(sym);
	modules__free(ms);
}

/* text__clean on LEN bytes of IN into a SIZE buffer gives WANT. */
static int cleans_to(const char *in, size_t len, size_t size, const char *want)
{
	char out[256];
	size_t n = text__clean(out, size, in, len);
	return n == strlen(want) && strcmp(out, want) == 0 && n < size;
}

static void test_text(void)
{
	check(cleans_to("plain ASCII", 11, 64, "plain ASCII") && text__valid("plain ASCII", 11),
	      "text: ASCII unchanged");
	check(cleans_to("\xc3\xa9t\xc3\xa9 \xe7\xba\xbf \xf0\x9f\x94\xa5", 14, 64,
			"\xc3\xa9t\xc3\xa9 \xe7\xba\xbf \xf0\x9f\x94\xa5") &&
	      text__valid("\xf0\x9f\x94\xa5\xf4\x8f\xbf\xbd", 8),
	      "text: 2-, 3- and 4-byte characters unchanged (up to U+10FFFD)");
	check(cleans_to("a\tb\nc\rd\x1b[31m\x7f", 13, 64, "a?b?c?d?[31m?") &&
	      !text__valid("a\tb", 3) && !text__valid("\x7f", 1),
	      "text: C0 controls (tab and newline too) and DEL become '?'");
	check(cleans_to("x\xc2\x80y\xc2\x9fz\xc2\xa0", 9, 64, "x?y?z\xc2\xa0") &&
	      !text__valid("\xc2\x85", 2), "text: C1 controls become '?', U+00A0 stays");
	check(cleans_to("a\0b", 3, 64, "a?b") && !text__valid("a\0b", 3),
	      "text: an embedded NUL is a control character, the length rules");
	check(cleans_to("\xc0\xaf|\xe0\x80\xaf|\xf0\x80\x80\xaf|\xc1\xbf", 14, 64, "??|???|????|??"),
	      "text: overlong forms, one '?' per byte (no valid prefix)");
	check(cleans_to("\xed\xa0\x80|\xed\xbf\xbf|\xed\x9f\xbf", 11, 64, "???|???|\xed\x9f\xbf"),
	      "text: UTF-16 surrogates become '?', U+D7FF stays");
	check(cleans_to("\xf4\x90\x80\x80|\xf5\x80|\xff\xfe", 10, 64, "????|??|??"),
	      "text: above U+10FFFF, F5-FF bytes become '?'");
	check(cleans_to("\xef\xbf\xbe\xef\xbf\xbf\xef\xbf\xbd", 9, 64, "??\xef\xbf\xbd"),
	      "text: U+FFFE and U+FFFF (not XML characters) become '?', U+FFFD stays");
	check(cleans_to("ab\xe7\xba", 4, 64, "ab?") && cleans_to("ab\xf0\x9f\x94", 5, 64, "ab?") &&
	      cleans_to("\xc3\xa9\xc3", 3, 64, "\xc3\xa9?"),
	      "text: a character cut at the end is one '?'");
	check(cleans_to("\xe7\xbax\xf0\x9f\x94y\x80\x80", 9, 64, "?x?y??"),
	      "text: cut sequences inside, one '?' each; lone continuation bytes one each");
	/* The kernel keeps 15 bytes of a thread's name: "éééééééé" is cut to
	 * seven and a half. */
	check(cleans_to("\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3", 15, 16,
			"\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9?"),
	      "text: a 15-byte thread name cut mid-character fits its 16-byte buffer");
	check(cleans_to("\xe7\xba\xbf\xe7\xa8\x8b", 6, 6, "\xe7\xba\xbf") &&
	      cleans_to("\xe7\xba\xbf\xe7\xa8\x8b", 6, 4, "\xe7\xba\xbf") &&
	      cleans_to("\xe7\xba\xbf\xe7\xa8\x8b", 6, 3, "") &&
	      cleans_to("ab\xf0\x9f\x94\xa5", 6, 6, "ab"),
	      "text: a byte budget cuts at a character boundary only");
	char buf[32] = "a\xff\xc3\xa9\x01z";
	size_t n = text__clean(buf, sizeof(buf), buf, strlen(buf));
	check(n == 6 && strcmp(buf, "a?\xc3\xa9?z") == 0, "text: in place");
	check(text__clean(buf, 0, "abc", 3) == 0 && text__clean(buf, 1, "abc", 3) == 0 && !buf[0],
	      "text: size 0 and 1");
	const char *cjk = "\xe7\xba\xbf\xe7\xa8\x8b-\xc3\xa9";       /* 线程-é */
	check(text__chars(cjk, strlen(cjk)) == 4 && text__prefix(cjk, strlen(cjk), 0) == 0 &&
	      text__prefix(cjk, strlen(cjk), 1) == 3 && text__prefix(cjk, strlen(cjk), 3) == 7 &&
	      text__prefix(cjk, strlen(cjk), 4) == 9 && text__prefix(cjk, strlen(cjk), 99) == 9,
	      "text: characters counted, prefixes end at character boundaries");
	/* Every 1- and 2-byte input: the result is clean, and at most as long. */
	int ok = 1;
	for (unsigned a = 0; a < 256 && ok; a++) {
		for (unsigned b = 0; b < 256 && ok; b++) {
			char in[2] = { (char)a, (char)b }, out[8];
			size_t m = text__clean(out, sizeof(out), in, 2);
			ok = m <= 2 && text__valid(out, m) && (text__valid(in, 2) == (memcmp(in, out, 2) == 0 && m == 2));
		}
	}
	check(ok, "text: all 65536 two-byte inputs clean to a clean string no longer than them");
}

/* run/outfile.c on a scratch directory: a new name, a replaced file's
 * mode, the checks made at open, and a late naming failure's fallback. */
static void test_outfile(void)
{
	char dir[] = "/tmp/cprof-unit.XXXXXX", path[256], err[512], buf[64];
	struct outfile *f = NULL;
	struct stat st;
	if (!mkdtemp(dir)) {
		check(0, "outfile: scratch directory");
		return;
	}
	snprintf(path, sizeof(path), "%s/a.folded", dir);
	int e = outfile__open(&f, path, err, sizeof(err));
	check(e == 0 && !outfile__is_stream(f) && write(outfile__fd(f), "x 1\n", 4) == 4 &&
	      stat(path, &st) < 0, "outfile: nothing named before commit");
	check(e == 0 && outfile__commit(f, err, sizeof(err)) == 0 && stat(path, &st) == 0 &&
	      st.st_size == 4, "outfile: commit names the file");
	outfile__free(f);
	chmod(path, 0640);
	e = outfile__open(&f, path, err, sizeof(err));
	check(e == 0 && write(outfile__fd(f), "y 2\n", 4) == 4 &&
	      outfile__commit(f, err, sizeof(err)) == 0 && stat(path, &st) == 0 &&
	      (st.st_mode & 0777) == 0640, "outfile: a replaced file keeps its mode");
	outfile__free(f);
	snprintf(path, sizeof(path), "%s/", dir);
	check(outfile__open(&f, path, err, sizeof(err)) == -EISDIR && strstr(err, "directory"),
	      "outfile: a directory is refused at open");
	snprintf(path, sizeof(path), "%s/no/such.folded", dir);
	check(outfile__open(&f, path, err, sizeof(err)) == -ENOENT &&
	      strstr(err, "does not exist"), "outfile: a missing directory is refused at open");
	check(outfile__open(&f, "-", err, sizeof(err)) == 0 && outfile__is_stream(f) &&
	      strcmp(outfile__path(f), "standard output") == 0, "outfile: - is standard output");
	outfile__free(f);
	snprintf(path, sizeof(path), "%s/late.folded", dir);
	e = outfile__open(&f, path, err, sizeof(err));
	int w = e == 0 ? (int)write(outfile__fd(f), "z 3\n", 4) : -1;
	mkdir(path, 0755);      /* the name became a directory meanwhile */
	e = e == 0 && w == 4 ? outfile__commit(f, err, sizeof(err)) : 0;
	const char *saved = f ? outfile__path(f) : "";
	int fd = open(saved, O_RDONLY);
	check(e < 0 && strstr(err, saved) && fd >= 0 && read(fd, buf, sizeof(buf)) == 4 &&
	      strncmp(saved, dir, strlen(dir)) == 0, "outfile: a late failure saves the profile and says where");
	if (fd >= 0)
		close(fd);
	if (f)
		unlink(saved);
	outfile__free(f);
	rmdir(path);
	snprintf(path, sizeof(path), "%s/a.folded", dir);
	unlink(path);
	rmdir(dir);
}

/* The .gopclntab reader on the fuzz seeds: the same functions of
 * tests/bin/gospin-stripped written in each table layout by
 * tests/fuzz/gopclntab_seeds.py (which printed these answers; `go tool
 * addr2line` gives the same on the binary).  Run from the repository's
 * root, as tests/run.sh does. */
static int ends_with(const char *s, const char *end)
{
	size_t a = s ? strlen(s) : 0, b = strlen(end);
	return s && a >= b && strcmp(s + a - b, end) == 0;
}


/* goroutine/curg.c: the layout read from runtime.systemstack's code (the
 * first 0x2a bytes as Go 1.19's linker writes them, amd64), and the
 * checks on what a probe read. */
static void test_gocurg(void)
{
	static const unsigned char code[] = {
		0x48, 0x8b, 0x7c, 0x24, 0x08,                           /* mov 0x8(%rsp),%rdi */
		0x64, 0x48, 0x8b, 0x04, 0x25, 0xf8, 0xff, 0xff, 0xff,   /* mov %fs:-8,%rax */
		0x48, 0x8b, 0x58, 0x30,                                 /* mov 0x30(%rax),%rbx */
		0x48, 0x3b, 0x43, 0x50,                                 /* cmp 0x50(%rbx),%rax */
		0x74, 0x5b, 0x48, 0x8b, 0x13, 0x48, 0x39, 0xd0, 0x74, 0x53,
		0x48, 0x3b, 0x83, 0xc0, 0x00, 0x00, 0x00,               /* cmp 0xc0(%rbx),%rax */
		0x75, 0x52, 0xe8, 0xd2, 0xf1, 0xff, 0xff,               /* call gosave_systemstack_switch */
		0x64, 0x48, 0x89, 0x14, 0x25, 0xf8, 0xff, 0xff, 0xff,
		0x49, 0x89, 0xd6, 0x48, 0x8b, 0x5a, 0x38,               /* mov 0x38(%rdx),%rbx */
	};
	struct gocurg l;
	check(gocurg__layout(code, sizeof(code), &l) == 0 && l.tls_g == -8 && l.g_m == 0x30 &&
	      l.m_curg == 0xc0 && l.g_sched == 0x38, "gocurg: systemstack's code gives tls -8, g.m 0x30, m.curg 0xc0, g.sched 0x38");
	check(gocurg__layout(code, sizeof(code) - 4, &l) == -ENOENT, "gocurg: code cut short has no layout");
	check(gocurg__layout(code + 20, sizeof(code) - 20, &l) == -ENOENT, "gocurg: code without the TLS load has no layout");
	/* Go 1.22.5 (esbuild 0.23.1): g0.sched.sp loaded into %rsp itself */
	static const unsigned char code22[] = {
		0x55, 0x48, 0x89, 0xe5, 0x48, 0x8b, 0x7c, 0x24, 0x10, 0x64, 0x48, 0x8b, 0x04, 0x25, 0xf8, 0xff,
		0xff, 0xff, 0x48, 0x8b, 0x58, 0x30, 0x48, 0x3b, 0x43, 0x50, 0x74, 0x65, 0x48, 0x8b, 0x13, 0x48,
		0x39, 0xd0, 0x74, 0x5d, 0x48, 0x3b, 0x83, 0xc0, 0x00, 0x00, 0x00, 0x75, 0x5d, 0xe8, 0x8e, 0xf1,
		0xff, 0xff, 0x64, 0x48, 0x89, 0x14, 0x25, 0xf8, 0xff, 0xff, 0xff, 0x49, 0x89, 0xd6, 0x48, 0x8b,
		0x62, 0x38,
	};
	check(gocurg__layout(code22, sizeof(code22), &l) == 0 && l.tls_g == -8 && l.g_m == 0x30 &&
	      l.m_curg == 0xc0 && l.g_sched == 0x38 && l.save_at == 0x32 - 0xe72,
	      "gocurg: Go 1.22's systemstack (mov 0x38(%rdx),%rsp) gives the same layout");
	gocurg__layout(code, sizeof(code), &l);
	/* gosave_systemstack_switch, Go 1.19 (mov %rbp,0x68(%r14)) and 1.25
	 * (gobuf without ret: mov %rbp,0x60(%r14)) */
	static const unsigned char save19[] = {
		0x4c, 0x8d, 0x0d, 0xd9, 0x0d, 0x00, 0x00, 0x4d, 0x89, 0x4e, 0x40, 0x4c, 0x8d, 0x4c, 0x24, 0x08,
		0x4d, 0x89, 0x4e, 0x38, 0x49, 0xc7, 0x46, 0x58, 0x00, 0x00, 0x00, 0x00, 0x49, 0x89, 0x6e, 0x68,
	}, save25[] = {
		0x4c, 0x8d, 0x0d, 0x01, 0x0d, 0x00, 0x00, 0x4d, 0x89, 0x4e, 0x40, 0x4c, 0x8d, 0x4c, 0x24, 0x08,
		0x4d, 0x89, 0x4e, 0x38, 0x49, 0x89, 0x6e, 0x60, 0x4d, 0x8b, 0x4e, 0x50,
	};
	check(l.save_at == 0x2e - 0xe2e && gocurg__save(save25, sizeof(save25), &l) == 0 && l.gobuf_bp == 40 &&
	      gocurg__save(save19, sizeof(save19) - 1, &l) == -ENOENT && gocurg__save(save19, sizeof(save19), &l) == 0 &&
	      l.gobuf_bp == 48, "gocurg: systemstack's call goes to gosave_systemstack_switch, whose code gives gobuf.bp 48 (1.19), 40 (1.25)");
	unsigned char g[192] = { 0 };
	uint64_t lo = 0xc000100000, hi = 0xc000108000, m = 0xc000050000, sp = 0xc000107f00, pc = 0x45ad8e, bp = 0xc000107f40;
	memcpy(g + 0, &lo, 8);
	memcpy(g + 8, &hi, 8);
	memcpy(g + 0x30, &m, 8);
	memcpy(g + 0x38, &sp, 8);
	memcpy(g + 0x40, &pc, 8);
	memcpy(g + 0x38 + 48, &bp, 8);
	struct go_rec r;
	size_t len = gocurg__g_len(&l);
	check(len == 0x38 + 56, "gocurg: a g is read up to the end of g.sched");
	check(gocurg__parse(&l, 0x52b760, m, 0xc000007040, g, len, &r) == 0 && r.sp == sp && r.pc == pc &&
	      r.bp == bp && r.lo == lo && r.hi == hi && r.g == 0xc000007040, "gocurg: a goroutine behind the system stack is read");
	check(gocurg__parse(&l, 0x52b760, m, 0, g, len, &r) == -ESRCH, "gocurg: an M with no goroutine has none");
	check(gocurg__parse(&l, 0xc000007040, m, 0xc000007040, g, len, &r) == -ESRCH,
	      "gocurg: a thread running its goroutine is not behind a system stack");
	check(gocurg__parse(&l, 0x52b760, m + 8, 0xc000007040, g, len, &r) == -EINVAL, "gocurg: a goroutine of another M is refused");
	uint64_t out = hi + 8;
	memcpy(g + 0x38, &out, 8);
	check(gocurg__parse(&l, 0x52b760, m, 0xc000007040, g, len, &r) == -EINVAL, "gocurg: a saved SP outside the goroutine's stack is refused");
	check(gocurg__parse(&l, 0x52b760, m, 0xc000007040, g, len - 1, &r) == -EINVAL, "gocurg: a short read is refused");
}

static void test_gopclntab(void)
{
	static const char *const seeds[] = { "go12", "go116", "go118", "go120", "go118-be" };
	for (size_t i = 0; i < sizeof(seeds) / sizeof(seeds[0]); i++) {
		char path[128], name[160], buf[8192];
		snprintf(path, sizeof(path), "tests/fuzz/corpus/gopclntab/seed-%s", seeds[i]);
		int fd = open(path, O_RDONLY);
		ssize_t n = fd < 0 ? -1 : read(fd, buf, sizeof(buf));
		if (fd >= 0)
			close(fd);
		struct gopclntab *g = n > 0 ? gopclntab__new(buf, (size_t)n, 0x401000) : NULL;
		snprintf(name, sizeof(name), "gopclntab %s: table read", path);
		check(g != NULL, name);
		if (!g)
			continue;
		const char *fn = NULL, *file = NULL;
		int line = -1;
		int r = gopclntab__lookup(g, 0x493e40, &fn, &file, &line);
		snprintf(name, sizeof(name), "gopclntab %s: main.mixBytes gospin.go:27", seeds[i]);
		check(r == 0 && fn && strcmp(fn, "main.mixBytes") == 0 &&
		      ends_with(file, "/tests/targets/gospin.go") && line == 27, name);
		r = gopclntab__lookup(g, 0x476ff0, &fn, &file, &line);
		snprintf(name, sizeof(name), "gopclntab %s: crypto/sha256.block :628", seeds[i]);
		check(r == 0 && strcmp(fn, "crypto/sha256.block") == 0 &&
		      ends_with(file, "/crypto/sha256/sha256block_amd64.s") && line == 628, name);
		r = gopclntab__lookup(g, 0x45da10, &fn, &file, &line);
		snprintf(name, sizeof(name), "gopclntab %s: runtime.goexit, no line past its table", seeds[i]);
		check(r == 0 && strcmp(fn, "runtime.goexit") == 0 && !file && line == 0, name);
		snprintf(name, sizeof(name), "gopclntab %s: no function outside the table", seeds[i]);
		check(gopclntab__lookup(g, 0x401000, &fn, NULL, NULL) == -ENOENT &&
		      gopclntab__lookup(g, UINT64_MAX, &fn, NULL, NULL) == -ENOENT, name);
		/* Cut short, the same bytes are no table: every offset is checked. */
		struct gopclntab *cut = gopclntab__new(buf, (size_t)n / 2, 0x401000);
		snprintf(name, sizeof(name), "gopclntab %s: a table cut in half is refused or finds nothing", seeds[i]);
		check(!cut || gopclntab__lookup(cut, 0x493e40, &fn, &file, &line) != 0 ||
		      (fn >= buf && fn < buf + n / 2), name);
		gopclntab__free(cut);
		gopclntab__free(g);
	}
	check(gopclntab__new("\xf0\xff\xff\xff\0\0\1\x08", 8, 0) == NULL,
	      "gopclntab: a header alone is refused");
}

/* svg__write of FR with INFO, read back as a string (caller frees). */
static char *svg_text(const struct frames *fr, const struct profile_info *info)
{
	char path[] = "/tmp/cprof-unit-XXXXXX", err[256];
	int fd = mkstemp(path);
	static char buf[1 << 16];
	ssize_t n = -1;
	if (fd >= 0 && svg__write(fd, fr, info, err, sizeof(err)) == 0)
		n = pread(fd, buf, sizeof(buf) - 1, 0);
	if (fd >= 0)
		close(fd);
	unlink(path);
	buf[n > 0 ? n : 0] = '\0';
	return strdup(buf);
}

/* The flame graph's title (program, PID or "N processes", duration,
 * samples, view), its legend, and on/off CPU in frame titles. */
static void test_svg(void)
{
	struct frames *fr = frames__new();
	struct frame_module m = { "/usr/bin/prog", "prog", "", 0x1000, 0x9000 };
	int32_t mod = frames__add_module(fr, &m);
	struct frame_line work = { "work", NULL, 0 }, nap = { "nap", NULL, 0 };
	uint32_t locs[2] = { frames__add_loc(fr, 0x1100, mod, &work, 1),
			     frames__add_loc(fr, 0x1200, mod, &nap, 1) };
	struct stack_label l = { 42, 42, 0, "prog", "prog", NULL, NULL, NULL, NULL };
	uint32_t label = frames__add_label(fr, &l);
	frames__add_stack(fr, &(struct frame_stack){ label, 'R', -1, NULL, &locs[0], 1, 1, 10000000 });
	frames__add_stack(fr, &(struct frame_stack){ label, 'S', -1, NULL, &locs[1], 1, 2, 0 });
	struct profile_info info = { .period_ns = 10101010, .duration_ns = 2000000000 };
	char *t = svg_text(fr, &info);
	check(strstr(t, ">Wall-clock flame graph of prog (PID 42): 2.0 s, 3 samples</text>") != NULL,
	      "svg: title names the view, program, PID, duration and samples");
	check(strstr(t, "width=\"100%\"") && strstr(t, "id=\"legend\"") && strstr(t, ">prog</text>") &&
	      strstr(t, ">on CPU</text>") && strstr(t, ">off CPU"),
	      "svg: the width follows the window; a legend names the module and on/off CPU");
	check(strstr(t, "<title>work [prog] (1 sample, 33.33%, on CPU)</title>") &&
	      strstr(t, "<title>nap [prog] (2 samples, 66.67%, off CPU)</title>"),
	      "svg: frame titles say on or off CPU");
	free(t);
	info.weight_cpu = 1;
	t = svg_text(fr, &info);
	check(strstr(t, ">CPU-time flame graph of prog (PID 42): 2.0 s, 3 samples, 0.01 s of CPU</text>") &&
	      !strstr(t, "off CPU"), "svg: --cpu: the title says CPU time; nothing is off CPU");
	free(t);
	info.weight_cpu = 0;
	struct stack_label l2 = { 43, 43, 0, "other", "other", NULL, NULL, NULL, NULL };
	frames__add_stack(fr, &(struct frame_stack){ frames__add_label(fr, &l2), 'R', -1, NULL, &locs[0], 1,
						     1, 0 });
	t = svg_text(fr, &info);
	check(strstr(t, ">Wall-clock flame graph of 2 processes: 2.0 s, 4 samples</text>") != NULL,
	      "svg: several processes: the title counts them");
	free(t);
	frames__free(fr);
}

/* unwind/cfi.c: DWARF expressions and rows applied to registers and a
 * small memory of 16 words at 0x1000. */
static uint64_t cfi_mem[16];
static int cfi_read(void *arg, uint64_t addr, uint64_t *val)
{
	if (addr < 0x1000 || addr > 0x1000 + 15 * 8 || addr % 8)
		return -1;
	*val = cfi_mem[(addr - 0x1000) / 8];
	return 0;
}

static int eval(const Dwarf_Op *ops, size_t n, const struct uregs *r, uint64_t *out, bool *val)
{
	return cfi_eval(ops, n, r, 0x1040, true, cfi_read, NULL, out, val);
}

static void test_cfi(void)
{
	struct uregs r = { .known = UREG_BIT(UREG_RSP) | UREG_BIT(UREG_RIP) };
	uint64_t v;
	bool val;
	r.v[UREG_RSP] = 0x1000;
	r.v[UREG_RIP] = 0x40100c;
	cfi_mem[1] = 0xabc;
	const Dwarf_Op deref[] = { { DW_OP_breg7, 8, 0, 0 }, { DW_OP_deref, 0, 0, 2 } };
	check(eval(deref, 2, &r, &v, &val) == CFI_STEP_OK && v == 0xabc && !val,
	      "cfi: breg7 8; deref reads the word at rsp + 8");
	/* The PLT's CFA: rsp + 8, + 8 more past the push of the 11th byte. */
	const Dwarf_Op plt[] = { { DW_OP_breg7, 8, 0, 0 }, { DW_OP_breg16, 0, 0, 2 },
				 { DW_OP_lit15, 0, 0, 4 }, { DW_OP_and, 0, 0, 5 },
				 { DW_OP_lit11, 0, 0, 6 }, { DW_OP_ge, 0, 0, 7 },
				 { DW_OP_lit3, 0, 0, 8 }, { DW_OP_shl, 0, 0, 9 }, { DW_OP_plus, 0, 0, 10 } };
	check(eval(plt, 9, &r, &v, &val) == CFI_STEP_OK && v == 0x1010,
	      "cfi: the PLT's CFA expression at byte 12 of an entry");
	const Dwarf_Op branch[] = { { DW_OP_lit1, 0, 0, 0 }, { DW_OP_bra, 1, 0, 1 },
				    { DW_OP_lit5, 0, 0, 4 }, { DW_OP_lit7, 0, 0, 5 },
				    { DW_OP_stack_value, 0, 0, 6 } };
	check(eval(branch, 5, &r, &v, &val) == CFI_STEP_OK && v == 7 && val,
	      "cfi: bra taken skips an operation; stack_value makes a value");
	const Dwarf_Op loop[] = { { DW_OP_skip, (Dwarf_Word)-3, 0, 0 } };
	check(eval(loop, 1, &r, &v, &val) == CFI_STEP_BAD, "cfi: an endless loop is cut");
	const Dwarf_Op under[] = { { DW_OP_plus, 0, 0, 0 } };
	check(eval(under, 1, &r, &v, &val) == CFI_STEP_BAD, "cfi: stack underflow refused");
	const Dwarf_Op early[] = { { DW_OP_lit1, 0, 0, 0 }, { DW_OP_stack_value, 0, 0, 1 },
				   { DW_OP_lit2, 0, 0, 2 } };
	check(eval(early, 3, &r, &v, &val) == CFI_STEP_BAD, "cfi: stack_value only last");
	const Dwarf_Op rbp[] = { { DW_OP_breg6, 0, 0, 0 } };
	check(eval(rbp, 1, &r, &v, &val) == CFI_STEP_NEED_REG, "cfi: a register we lack is asked for");
	const Dwarf_Op unmapped[] = { { DW_OP_lit0, 0, 0, 0 }, { DW_OP_deref, 0, 0, 1 } };
	check(eval(unmapped, 2, &r, &v, &val) == CFI_STEP_BAD, "cfi: memory not captured refused");

	/* A frame of push rbp; mov rsp, rbp: CFA = rbp + 16. */
	struct cfi_row row = { .cfa = { CFI_VAL_OFFSET, UREG_RBP, 16, NULL, 0 } };
	for (int i = 0; i < CFI_NREGS; i++)
		row.regs[i].kind = CFI_SAME;
	row.regs[CFI_RBP] = (struct cfi_rule){ CFI_OFFSET, 0, -16, NULL, 0 };
	row.regs[CFI_RA] = (struct cfi_rule){ CFI_OFFSET, 0, -8, NULL, 0 };
	cfi_mem[2] = 0x1070;            /* saved rbp at 0x1010 */
	cfi_mem[3] = 0x401234;          /* return address at 0x1018 */
	struct uregs caller;
	check(cfi_step(&row, &r, &caller, cfi_read, NULL) == CFI_STEP_NEED_REG,
	      "cfi: a CFA on rbp needs rbp");
	r.v[UREG_RBP] = 0x1010;
	r.known |= UREG_BIT(UREG_RBP);
	check(cfi_step(&row, &r, &caller, cfi_read, NULL) == CFI_STEP_OK &&
	      caller.v[UREG_RIP] == 0x401234 && caller.v[UREG_RBP] == 0x1070 &&
	      caller.v[UREG_RSP] == 0x1020 && !(caller.known & UREG_BIT(3)),
	      "cfi: a step: rip and rbp from the frame, rsp = CFA, rbx (same, unknown) unknown");
	row.regs[CFI_RA].kind = CFI_UNDEFINED;
	check(cfi_step(&row, &r, &caller, cfi_read, NULL) == CFI_STEP_END,
	      "cfi: an undefined return address is the outermost frame");
	row.regs[CFI_RA].kind = CFI_SAME;
	check(cfi_step(&row, &r, &caller, cfi_read, NULL) == CFI_STEP_BAD,
	      "cfi: a return address that is the callee's own PC is refused");
}

/* A seed of tests/fuzz/corpus/NAME/: its bytes, *N of them, or NULL. */
static unsigned char *read_seed(const char *name, size_t *n)
{
	static unsigned char buf[8192];
	char path[128];
	snprintf(path, sizeof(path), "tests/fuzz/corpus/%s", name);
	int fd = open(path, O_RDONLY);
	ssize_t r = fd < 0 ? -1 : read(fd, buf, sizeof(buf));
	if (fd >= 0)
		close(fd);
	*n = r > 0 ? (size_t)r : 0;
	return r > 0 ? buf : NULL;
}

static int hostile_read(void *ctx, uint64_t addr, void *buf, size_t len)
{
	memset(buf, 0x80, len);         /* every pointer to itself, every tid < 0 */
	return 0;
}

/* CPython's line tables as each version writes them (the seeds of
 * tests/fuzz/pylines_seeds.py: the line of "total += i * i", 4 after the
 * function's first), its 3.13 _Py_DebugOffsets, and what a hostile
 * interpreter state must not do. */
static void test_python(void)
{
	static const char *const seeds[] = { "lnotab-3.8", "lnotab-3.9", "linetable-3.10",
					     "locations-3.11", "locations-3.12", "locations-3.13" };
	for (size_t i = 0; i < sizeof(seeds) / sizeof(seeds[0]); i++) {
		char name[128];
		snprintf(name, sizeof(name), "pylines/seed-%s", seeds[i]);
		size_t n;
		const unsigned char *b = read_seed(name, &n);
		int32_t first = 0;
		int64_t off = 0;
		if (b && n > 13) {
			memcpy(&first, b + 1, 4);
			memcpy(&off, b + 5, 8);
		}
		snprintf(name, sizeof(name), "python lines %s: the loop's line, the first before the start",
			 seeds[i]);
		check(b && n > 13 && py_lines__line(b[0] & 3, b + 13, n - 13, first, off) == first + 4 &&
		      py_lines__line(b[0] & 3, b + 13, n - 13, first, -1) == first, name);
	}
	static const uint8_t up[] = { 0, 127 };
	check(py_lines__line(PY_LNOTAB, up, 2, INT32_MAX, 0) == (int)((uint32_t)INT32_MAX + 127),
	      "python lines: a table adding past INT_MAX wraps, never overflows");

	size_t n;
	const unsigned char *b = read_seed("pyinterp/seed-debug-3.13", &n);
	struct py_layout l;
	uint64_t v = b && n == 1 + PY_DEBUG_OFFSETS_SIZE ? py_layout__from_debug(b + 1, n - 1, &l) : 0;
	check(v >> 16 == 0x030d && l.gil_holder == 8 && l.gil_locked == 16 && l.ts_frame == 72,
	      "python 3.13 _Py_DebugOffsets: the GIL's last_holder and locked in its own struct");
	unsigned char bad[PY_DEBUG_OFFSETS_SIZE];
	if (v) {
		memcpy(bad, b + 1, sizeof(bad));
		memset(bad + 544, 0xff, 8);     /* str_state: 2^64 - 1 */
	}
	check(v && !py_layout__from_debug(bad, sizeof(bad), &l) &&
	      py_layout__from_debug(b + 1, n - 1, &l) && l.co_size >= 24,
	      "python 3.13 _Py_DebugOffsets: an offset of 2^64 - 1 refused; a code copy holds ob_size");

	struct py_interp *p = py_interp__fake(py_layout__of(9), hostile_read, NULL, 0x1000, 0);
	struct py_thread t[PY_MAX_THREADS];
	uint64_t gil;
	check(p && py_interp__threads(p, t, PY_MAX_THREADS, &gil) == 0,
	      "python: a cycle of thread states without an OS thread ends");
	py_interp__free(p);
}

/* dwarf/symcache.c against libdwfl itself: every module of this process
 * and, where installed, Debian's stripped mariadbd and python3.11 (large
 * dynamic symbol tables), at 500 places a step apart over each module,
 * four addresses near each (as samples fall): each asked of libdwfl
 * (dwfl_module_addrinfo) and of the cache (libdwfl's answers kept as the
 * profiler keeps them); every answer the cache gives must be libdwfl's,
 * name and offset, or none where libdwfl has none; and most must come
 * from it, the first address of a function too (its name chosen among
 * aliases as libdwfl chooses). */
struct symcache_counts {
	size_t asked, sized, hits, none_known, none_asked, wrong, overlaps;
};

/* A global function holding a local one (as hand-written assembly may
 * have): libdwfl names the inner addresses after the outer, global
 * symbol (it looks at the locals only when no global holds the address):
 * the inner range, though clean, is not the cache's to name. */
__asm__(".text\n"
	".globl symcache_outer\n.type symcache_outer, @function\nsymcache_outer:\n"
	".fill 16, 1, 0x90\n"
	".type symcache_inner, @function\nsymcache_inner:\n.fill 16, 1, 0x90\n"
	".size symcache_inner, 16\n.fill 32, 1, 0x90\nret\n"
	".size symcache_outer, 65\n"
	".type symcache_lonely, @function\nsymcache_lonely:\n.fill 8, 1, 0x90\n"
	".globl symcache_mark\nsymcache_mark:\n.fill 23, 1, 0x90\nret\n"
	".size symcache_lonely, 32\n");
extern char symcache_lonely[], symcache_mark[];

/* A local function with a global assembly label inside: libdwfl names
 * the label's address after the label, the others after the function. */
static void symcache_label_inside(Dwfl *d, struct symcache_counts *n)
{
	uint64_t at[] = { (uintptr_t)symcache_lonely, (uintptr_t)symcache_lonely + 3,
			  (uintptr_t)symcache_mark, (uintptr_t)symcache_mark + 1 };
	Dwfl_Module *mod = dwfl_addrmodule(d, at[0]);
	struct symcache *c = mod ? symcache__new(mod) : NULL;
	check(c != NULL, "symcache: the unit test's own module has a cache");
	for (size_t i = 0; c && i < sizeof(at) / sizeof(at[0]); i++) {
		GElf_Off off;
		GElf_Sym sym;
		const char *want = dwfl_module_addrinfo(mod, at[i], &off, &sym, NULL, NULL, NULL);
		const char *got = NULL;
		uint64_t o = 0;
		int known = symcache__find(c, at[i], &got, &o);
		if (known < 0 && want)
			symcache__keep(c, at[i] - off, sym.st_size, want);
		else if (known && (!want || strcmp(got, want) != 0 || o != off))
		{
			n->wrong++;
			fprintf(stderr, "symcache: label inside: %s+%llu, libdwfl %s+%llu\n", got,
				(unsigned long long)o, want ? want : "(none)", (unsigned long long)off);
		}
		if (i == 2)
			check(want && strcmp(want, "symcache_mark") == 0,
			      "symcache: libdwfl names a global label inside a local function after it");
	}
	symcache__free(c);
}


static int symcache_by_start(const void *a, const void *b)
{
	const uint64_t *x = a, *y = b;
	return (x[0] > y[0]) - (x[0] < y[0]);
}

/* Addresses where symbols of the module's range [LO, HI) lie over one
 * another (one inside another, or in part): the start of the outer, then
 * of the inner, the inner's last byte, the outer's last; at most MAX of
 * them into OUT. */
static size_t symcache_overlaps(Dwfl_Module *mod, uint64_t lo, uint64_t hi, uint64_t *out, size_t max)
{
	int n = dwfl_module_getsymtab(mod);
	if (n <= 1)
		return 0;
	uint64_t (*r)[2] = malloc((size_t)n * sizeof(*r));
	size_t k = 0, m = 0;
	for (int i = 1; i < n; i++) {
		GElf_Sym sym;
		GElf_Addr v;
		GElf_Word shndx;
		const char *name = dwfl_module_getsym_info(mod, i, &sym, &v, &shndx, NULL, NULL);
		if (name && *name && shndx != SHN_UNDEF && sym.st_size && v >= lo && v + sym.st_size <= hi)
			r[k][0] = v, r[k++][1] = v + sym.st_size;
	}
	qsort(r, k, sizeof(*r), symcache_by_start);
	for (size_t i = 0; i + 1 < k && m + 4 <= max; i++)
		if (r[i + 1][0] < r[i][1] && (r[i + 1][0] != r[i][0] || r[i + 1][1] != r[i][1])) {
			out[m++] = r[i][0];
			out[m++] = r[i + 1][0];
			out[m++] = r[i + 1][1] - 1;
			out[m++] = r[i][1] - 1;
		}
	free(r);
	return m;
}

static void symcache_module(Dwfl_Module *mod, const char *what, struct symcache_counts *n)
{
	Dwarf_Addr lo, hi;
	dwfl_module_info(mod, NULL, &lo, &hi, NULL, NULL, NULL, NULL);
	struct symcache *c = symcache__new(mod);
	uint64_t step = (hi - lo) / 500 | 1;
	while (step % 3 == 0 || step % 5 == 0 || step % 7 == 0)
		step += 2;
	uint64_t over[400];
	size_t nover = symcache_overlaps(mod, lo, hi, over, 400);
	n->overlaps += nover / 4;
	for (uint64_t i = 0; i < nover || lo + (i - nover) / 4 * step < hi; i++) {
		uint64_t a = i < nover ? over[i] :
			     lo + (i - nover) / 4 * step + (uint64_t[]){ 0, 5, 11, 23 }[(i - nover) % 4];
		GElf_Off off;
		GElf_Sym sym;
		const char *want = dwfl_module_addrinfo(mod, a, &off, &sym, NULL, NULL, NULL);
		uint64_t o = 0;
		const char *got = NULL;
		int known = symcache__find(c, a, &got, &o);
		n->asked++;
		n->sized += want && sym.st_size && off < sym.st_size;
		if (known < 0) {
			if (want)
				symcache__keep(c, a - off, sym.st_size, want);
			else
				n->none_asked++;
			continue;
		}
		if (known == 0)
			n->none_known++;
		else
			n->hits++;
		if (known ? !want || strcmp(got, want) != 0 || o != off : want != NULL) {
			if (n->wrong++ < 3)
				fprintf(stderr, "symcache: %s %#llx: %s+%llu, libdwfl %s+%llu\n", what,
					(unsigned long long)a, got ? got : "(none)", (unsigned long long)o,
					want ? want : "(none)", (unsigned long long)off);
		}
	}
	symcache__free(c);
}

static int symcache_each(Dwfl_Module *mod, void **ud, const char *name, Dwarf_Addr start, void *arg)
{
	(void)ud;
	(void)start;
	symcache_module(mod, name, arg);
	return DWARF_CB_OK;
}

static void test_symcache(void)
{
	static char *debuginfo_path;
	Dwfl_Callbacks cb = { .find_elf = dwfl_linux_proc_find_elf,
			      .find_debuginfo = dwfl_standard_find_debuginfo,
			      .debuginfo_path = &debuginfo_path };
	Dwfl *d = dwfl_begin(&cb);
	struct symcache_counts n = { 0 };
	dwfl_report_begin(d);
	int r = dwfl_linux_proc_report(d, getpid());
	const char *big[] = { "/usr/sbin/mariadbd", "/usr/bin/python3.11" };
	for (size_t i = 0; i < sizeof(big) / sizeof(big[0]); i++)
		if (access(big[i], R_OK) == 0)
			dwfl_report_offline(d, big[i], big[i], -1);
	dwfl_report_end(d, NULL, NULL);
	check(r == 0, "symcache: this process's modules reported");
	dwfl_getmodules(d, symcache_each, &n, 0);
	symcache_label_inside(d, &n);
	fprintf(stderr, "symcache: %zu addresses (%zu pairs of symbols over one another), %zu in a "
		"sized symbol, %zu named by the cache; in none: %zu known so, %zu asked of libdwfl; "
		"%zu wrong\n", n.asked, n.overlaps, n.sized, n.hits, n.none_known, n.none_asked,
		n.wrong);
	check(n.asked > 20000 && n.hits > n.sized / 10 * 9,
	      "symcache: names nine in ten of the addresses in a sized symbol or more, "
	      "on first sight (libdwfl's choice among aliases known)");
	check(n.none_known > 1000, "symcache: knows addresses in no symbol as such");
	check(n.wrong == 0, "symcache: every answer it gives is libdwfl's (name and offset, or none)");
	dwfl_end(d);
}

/* goroutine/golayout.c: the Go version from .go.buildinfo, the tables, and
 * the addresses read from the runtime's code (Go 1.19's linker's bytes,
 * amd64, from tests/bin/goroutines: runtime.allgadd's first 0x12e bytes,
 * runtime.waitReason.String whole). */
static void test_golayout(void)
{
	static const unsigned char allgadd[] =
		"\x49\x3b\x66\x10\x0f\x86\x4f\x01\x00\x00\x48\x83\xec\x50\x48\x89\x6c\x24\x48\x48\x8d\x6c\x24\x48"
		"\x8b\x88\x90\x00\x00\x00\x66\x90\x85\xc9\x0f\x84\x1f\x01\x00\x00\x48\x89\x44\x24\x58\x90\x90\x48"
		"\x8d\x05\xea\xd7\x14\x00\xe8\x85\x4c\xfd\xff\x48\x8b\x35\xa6\xe8\x11\x00\x48\x8d\x4e\x01\x48\x8b"
		"\x1d\x93\xe8\x11\x00\x48\x8b\x3d\x9c\xe8\x11\x00\x48\x39\xcf\x73\x40\x48\x8d\x05\x40\xa2\x06\x00"
		"\x48\x89\xca\x48\x89\xf1\x48\x89\xd6\xe8\x32\x3b\x01\x00\x48\x89\x0d\x7b\xe8\x11\x00\x83\x3d\xb4"
		"\xd9\x14\x00\x00\x75\x09\x48\x89\x05\x5b\xe8\x11\x00\xeb\x0c\x48\x8d\x3d\x52\xe8\x11\x00\xe8\x2d"
		"\xad\x02\x00\x48\x89\xde\x48\x89\xc3\x48\x8d\x56\x01\x48\x89\x15\x44\xe8\x11\x00\x48\x8d\x3c\xf3"
		"\x83\x3d\x81\xd9\x14\x00\x00\x75\x0b\x48\x8b\x54\x24\x58\x48\x89\x14\xf3\xeb\x0a\x48\x8b\x54\x24"
		"\x58\xe8\x1a\xae\x02\x00\x48\x8b\x1d\x13\xe8\x11\x00\x48\x83\x3d\x13\xe8\x11\x00\x00\x76\x66\x66"
		"\x0f\x1f\x84\x00\x00\x00\x00\x00\x48\x39\x1d\x21\xe3\x11\x00\x74\x2b\x90\x80\x3d\x3f\xd9\x14\x00"
		"\x00\x74\x17\x48\x89\x5c\x24\x40\x48\x8d\x05\x09\xe3\x11\x00\x90\xe8\xdb\xdf\xfc\xff\x48\x8b\x5c"
		"\x24\x40\x48\x8d\x0d\xf7\xe2\x11\x00\x48\x87\x19\x48\x8b\x0d\xcd\xe7\x11\x00\x48\x8d\x15\xf6\xd6"
		"\x14\x00\x48\x87\x0a\x90\x90\x48\x8d\x05\xf2\xd6\x14\x00";
	static const unsigned char reason[] =
		"\x3c\x1b\x72\x0d\x48\x8d\x05\xfa\x32\x07\x00\xbb\x13\x00\x00\x00\xc3\x0f\xb6\xc8\x48\xc1\xe1\x04"
		"\x48\x8d\x15\x41\xd7\x10\x00\x48\x8b\x04\x0a\x48\x8b\x5c\x0a\x08\xc3";
	uint64_t allgs = 0, allglen = 0, status = 0, table = 0, n = 0, at = 0;
	check(golayout__allgadd(allgadd, sizeof(allgadd) - 1, 0x435360, &allgs, &allglen, &status) == 0 &&
	      allgs == 0x553c40 && allglen == 0x582b78 && status == 0x90,
	      "golayout: runtime.allgadd's code says allgs 0x553c40, allglen 0x582b78, g.atomicstatus 0x90");
	check(golayout__allgadd(allgadd, 0x50, 0x435360, &allgs, &allglen, &status) == -ENOENT,
	      "golayout: allgadd cut before the slice's capacity is loaded: no allgs");
	check(golayout__allgadd(allgadd, 0x108, 0x435360, &allgs, &allglen, &status) == 0 &&
	      allgs == 0x553c40 && allglen == 0x553c48,
	      "golayout: allgadd cut before allglen is stored: allglen is the slice's own length");
	check(golayout__reasons(reason, sizeof(reason) - 1, 0x443200, &table, &n) == 0 && table == 0x550960 &&
	      n == 27, "golayout: waitReason.String's code says 27 strings at 0x550960");
	check(golayout__reasons(reason, 4, 0x443200, &table, &n) == -ENOENT, "golayout: no table in 4 bytes");
	/* newproc1 (1.19): mov %rcx,0x98(%rax); gopark: mov %cl,0xb0(%r8) */
	static const unsigned char goid[] = { 0x48, 0x89, 0x88, 0x98, 0x00, 0x00, 0x00 },
				   reason_st[] = { 0x41, 0x88, 0x88, 0xb0, 0x00, 0x00, 0x00 };
	check(golayout__uses(goid, sizeof(goid), 0x98) && !golayout__uses(goid, sizeof(goid), 0x90) &&
	      !golayout__uses(goid, sizeof(goid) - 1, 0x98) && golayout__uses(reason_st, sizeof(reason_st), 0xb0),
	      "golayout: the code that sets g.goid at 0x98 and g.waitreason at 0xb0 uses them, not 0x90");

	/* .go.buildinfo: Go 1.18+ (flags 2: inline), before (a pointer). */
	unsigned char bi[64] = "\xff Go buildinf:\x08\x02";
	char ver[32];
	memcpy(bi + 32, "\x08go1.19.8", 9);
	check(golayout__buildinfo(bi, sizeof(bi), ver, sizeof(ver), &at) == 0 && strcmp(ver, "go1.19.8") == 0,
	      "golayout: a 1.18+ build info gives its version inline");
	check(golayout__buildinfo(bi, 36, ver, sizeof(ver), &at) < 0, "golayout: a version past the section is refused");
	bi[32] = 0x88;  /* a length that goes on and on */
	memset(bi + 33, 0xff, 31);
	check(golayout__buildinfo(bi, sizeof(bi), ver, sizeof(ver), &at) < 0, "golayout: an endless uvarint is refused");
	memcpy(bi + 32, "\x05go1.\x01", 6);
	check(golayout__buildinfo(bi, sizeof(bi), ver, sizeof(ver), &at) < 0, "golayout: an unprintable version is refused");
	bi[15] = 0;
	memcpy(bi + 16, "\x60\xc2\x54\x00\x00\x00\x00\x00", 8);
	check(golayout__buildinfo(bi, sizeof(bi), ver, sizeof(ver), &at) == 1 && at == 0x54c260,
	      "golayout: a build info before 1.18 gives the address of its version");
	bi[0] = 0;
	check(golayout__buildinfo(bi, sizeof(bi), ver, sizeof(ver), &at) < 0, "golayout: no magic, no version");
	check(golayout__minor("go1.19.8") == 19 && golayout__minor("go1.21rc2") == 21 &&
	      golayout__minor("devel go1.22") == -1 && golayout__minor("go1.") == -1,
	      "golayout: go1.19.8 is 19, go1.21rc2 21, a devel build none");

	/* The tables, against the numbers counted in each release's
	 * runtime2.go and read in its code (see golayout.c; 1.19's also
	 * against its DWARF, in tests/t_goroutines.sh; each against a real
	 * binary in tests/t_goversions.sh): atomicstatus, goid, waitreason,
	 * gopc, startpc, g.sched.bp, m.procid. */
	static const struct {
		int minor;
		uint64_t status, goid, reason, gopc, startpc, bp, procid;
	} want[] = {
		{ 16, 144, 152, 176, 280, 296, 104, 72 }, { 17, 144, 152, 176, 296, 312, 104, 72 },
		{ 18, 144, 152, 176, 296, 312, 104, 72 }, { 19, 144, 152, 176, 296, 312, 104, 72 },
		{ 20, 144, 152, 176, 296, 312, 104, 72 }, { 21, 144, 152, 176, 280, 296, 104, 72 },
		{ 22, 144, 152, 176, 280, 296, 104, 72 }, { 23, 152, 160, 184, 288, 304, 104, 72 },
		{ 24, 152, 160, 184, 288, 304, 104, 72 }, { 25, 144, 152, 176, 280, 296, 96, 64 },
		{ 26, 144, 152, 176, 288, 304, 96, 64 },
	};
	for (size_t i = 0; i < sizeof(want) / sizeof(want[0]); i++) {
		struct go_layout l = { 0 };
		char what[96];
		snprintf(what, sizeof(what), "golayout: go1.%d's table", want[i].minor);
		check(golayout__table(want[i].minor, &l) == 0 && l.g_off[0] == 0 && l.g_off[1] == 8 &&
		      l.g_off[2] == 48 && l.g_off[3] == 56 && l.g_off[4] == 64 && l.g_off[5] == want[i].bp &&
		      l.g_off[6] == want[i].status && l.g_off[7] == want[i].goid &&
		      l.g_off[8] == want[i].reason && l.g_off[9] == want[i].startpc &&
		      l.g_off[10] == want[i].gopc && l.m_procid == want[i].procid &&
		      l.g_labels == (want[i].minor == 19 ? 360u : 0u), what);
	}
	struct go_layout none;
	check(golayout__table(99, &none) == -ENOENT && golayout__table(12, &none) == -ENOENT &&
	      golayout__table(15, &none) == -ENOENT && golayout__table(27, &none) == -ENOENT,
	      "golayout: no table for go1.12, go1.15, go1.27 or go1.99");

	/* gogo (1.25): mov 0x28(%rbx),%rbp; minit (1.25): mov %rcx,0x40(%rax) */
	static const unsigned char gogo[] = { 0x48, 0x8b, 0x6b, 0x28 }, minit[] = { 0x48, 0x89, 0x48, 0x40 };
	check(golayout__uses(gogo, sizeof(gogo), 0x28) && !golayout__uses(gogo, sizeof(gogo), 0x30) &&
	      !golayout__uses(gogo, sizeof(gogo) - 1, 0x28) && golayout__uses(minit, sizeof(minit), 0x40) &&
	      !golayout__uses(minit, sizeof(minit), 0x48),
	      "golayout: 8-bit displacements: gogo loads gobuf.bp at 0x28, minit stores m.procid at 0x40");
	/* schedinit (1.25, esbuild 0.27.7 at 0x4451eb): cmpq $0,0xa3dbf5(%rip);
	 * jne; movq $7,0xa3dbe8(%rip): buildVersion's length at 0xe82de8 */
	static const unsigned char sched[] = {
		0x48, 0x83, 0x3d, 0xf5, 0xdb, 0xa3, 0x00, 0x00, 0x75, 0x31,
		0x48, 0xc7, 0x05, 0xe8, 0xdb, 0xa3, 0x00, 0x07, 0x00, 0x00, 0x00,
	};
	check(golayout__buildversion(sched, sizeof(sched), 0x4451eb, &at) == 0 && at == 0xe82de0,
	      "golayout: schedinit's code says runtime.buildVersion is at 0xe82de0");
	check(golayout__buildversion(sched, sizeof(sched) - 1, 0x4451eb, &at) == -ENOENT,
	      "golayout: schedinit cut before its store: no buildVersion");
	unsigned char other[sizeof(sched)];
	memcpy(other, sched, sizeof(sched));
	other[17] = 8;
	check(golayout__buildversion(other, sizeof(other), 0x4451eb, &at) == -ENOENT,
	      "golayout: a store of 8, not len(\"unknown\"), is not buildVersion's");
}

/* module/perfmap.c: a JIT's map read as it grows, on files written here
 * step by step as a JIT would (perfmap__at_path: no ownership check). */
static void pm_write(const char *path, const char *how, const char *text)
{
	FILE *f = fopen(path, how);
	if (f) {
		fputs(text, f);
		fclose(f);
	}
}

static int pm_is(const struct perfmap *pm, uint64_t addr, const char *want)
{
	const char *got = perfmap__lookup(pm, addr);
	return want ? got && strcmp(got, want) == 0 : got == NULL;
}

/* secret__shown(IN) is WANT. */
static void secret_is(const char *in, const char *want)
{
	char *got = secret__shown(in);
	int ok = strcmp(got, want) == 0;
	if (!ok)
		fprintf(stderr, "  secret__shown(%s) = %s, want %s\n", in, got, want);
	char what[256];
	snprintf(what, sizeof(what), "secret: %s", want);
	check(ok, what);
	free(got);
}

static void test_secret(void)
{
	secret_is("http://user:pw@host:4040", "http://user:***@host:4040");
	secret_is("--push=https://user:p:w@h/x", "--push=https://user:***@h/x");
	secret_is("https://tok@h", "https://***@h");
	secret_is("http://h/p?app=x&token=abc&API_KEY=k&n=1#f", "http://h/p?app=x&token=***&API_KEY=***&n=1#f");
	secret_is("http://h/a@b", "http://h/a@b");                  /* '@' in the path: no userinfo */
	secret_is("http://h?password=", "http://h?password=***");
	secret_is("12345", "12345");
	secret_is("--hz", "--hz");
	secret_is("", "");
	secret_is("http://", "http://");
	secret_is("a://u:p@h b://v:q@i", "a://u:***@h b://v:***@i");
	secret_is("x://@h?=&&key", "x://***@h?=&&key");
}

static void test_perfmap(void)
{
	char dir[] = "/tmp/cprof-unit.XXXXXX", path[256], tmp[256];
	if (!mkdtemp(dir)) {
		check(0, "perfmap: scratch directory");
		return;
	}
	snprintf(path, sizeof(path), "%s/perf-1.map", dir);
	snprintf(tmp, sizeof(tmp), "%s/perf-1.map.new", dir);
	struct perfmap *pm = perfmap__at_path(path, PERFMAP_MAX);

	/* No file yet, then one appears. */
	check(!perfmap__refresh(pm) && perfmap__count(pm) == 0 && pm_is(pm, 0x1000, NULL),
	      "perfmap: no file, no entries");
	pm_write(path, "w", "1000 100 first\n2000 80 LazyCompile:*hot app.js:12\n");
	uint64_t g = perfmap__generation(pm);
	check(perfmap__refresh(pm) && perfmap__count(pm) == 2 && perfmap__generation(pm) != g &&
	      pm_is(pm, 0x1000, "first") && pm_is(pm, 0x10ff, "first") && pm_is(pm, 0x1100, NULL) &&
	      pm_is(pm, 0x2040, "LazyCompile:*hot app.js:12") && pm_is(pm, 0xfff, NULL),
	      "perfmap: a map that appears is read (names with spaces whole, ends exclusive)");
	g = perfmap__generation(pm);
	check(!perfmap__refresh(pm) && perfmap__generation(pm) == g,
	      "perfmap: unchanged file, no change");

	/* Growth: only what was appended is read. */
	uint64_t off = perfmap__offset(pm);
	pm_write(path, "a", "3000 10 grown\n");
	check(perfmap__refresh(pm) && perfmap__count(pm) == 3 && pm_is(pm, 0x3005, "grown") &&
	      pm_is(pm, 0x1000, "first") && perfmap__offset(pm) == off + 14,
	      "perfmap: growth read from where the last read ended");

	/* A JIT caught mid-line: its line waits for its newline. */
	off = perfmap__offset(pm);
	pm_write(path, "a", "4000 10 par");
	perfmap__refresh(pm);
	check(perfmap__count(pm) == 3 && pm_is(pm, 0x4000, NULL) && perfmap__offset(pm) == off,
	      "perfmap: a partial last line is not taken");
	pm_write(path, "a", "tial\n");
	check(perfmap__refresh(pm) && perfmap__count(pm) == 4 && pm_is(pm, 0x4000, "partial"),
	      "perfmap: the partial line whole once its newline is there");

	/* Later lines win: code regenerated at the same or an overlapping
	 * address, whatever the sort order. */
	pm_write(path, "a", "1000 100 second\n1080 8 inner\n2000 80 a\n2000 80 b\n2000 80 c\n");
	check(perfmap__refresh(pm) && pm_is(pm, 0x1000, "second") && pm_is(pm, 0x1084, "inner") &&
	      pm_is(pm, 0x1090, "second") && pm_is(pm, 0x2000, "c"),
	      "perfmap: where entries overlap, the later line wins (across reads and within one)");
	pm_write(path, "a", "1000 3000 outer_later\n");
	check(perfmap__refresh(pm) && pm_is(pm, 0x1084, "outer_later") && pm_is(pm, 0x1800, "outer_later") &&
	      pm_is(pm, 0x3005, "outer_later") && pm_is(pm, 0x2000, "outer_later") &&
	      pm_is(pm, 0x4000, "partial"),
	      "perfmap: a later, larger entry covers the smaller earlier ones");

	/* Rewritten shorter (same file, cut): read again from the start, the
	 * old entries dropped. */
	g = perfmap__generation(pm);
	pm_write(path, "w", "5000 10 after_cut\n");
	check(perfmap__refresh(pm) && perfmap__generation(pm) != g && perfmap__count(pm) == 1 &&
	      pm_is(pm, 0x5000, "after_cut") && pm_is(pm, 0x1000, NULL) && pm_is(pm, 0x4000, NULL),
	      "perfmap: a file cut shorter is read again, its old entries gone");

	/* Replaced (another inode, by rename): read again. */
	pm_write(tmp, "w", "6000 10 replaced\n7000 10 also\n");
	rename(tmp, path);
	check(perfmap__refresh(pm) && perfmap__count(pm) == 2 && pm_is(pm, 0x6000, "replaced") &&
	      pm_is(pm, 0x5000, NULL), "perfmap: a file replaced by another is read again");

	/* Rewritten to the same size: told by its mtime. */
	struct timespec old[2] = { { 0, UTIME_OMIT }, { 1000000000, 0 } };
	pm_write(path, "r+", "6000 10 rewrote\n");
	utimensat(AT_FDCWD, path, old, 0);
	check(perfmap__refresh(pm) && pm_is(pm, 0x6000, "rewrote") && pm_is(pm, 0x7000, "also"),
	      "perfmap: rewritten in place at the same size (another mtime): read again");

	/* Cut and written again, longer, in place (a JVM's Compiler.perfmap
	 * run again): not taken for growth. */
	pm_write(path, "w", "6000 10 jvm_again\n7000 10 also_again\n8000 10 more_again\n");
	check(perfmap__refresh(pm) && perfmap__count(pm) == 3 && pm_is(pm, 0x6000, "jvm_again") &&
	      pm_is(pm, 0x7000, "also_again") && pm_is(pm, 0x8000, "more_again"),
	      "perfmap: written again longer in place: read again from its start");

	/* Removed: what was read still names the samples taken. */
	unlink(path);
	check(!perfmap__refresh(pm) && pm_is(pm, 0x6000, "jvm_again"),
	      "perfmap: a map removed keeps its names");
	perfmap__free(pm);

	/* Garbage lines are skipped, the good ones around them kept. */
	/* A line longer than a read (64 KiB), whose part past the first read
	 * looks like a line of its own: skipped whole. */
	size_t ll = (64u << 10) + 100;
	char *longline = malloc(ll + 2);
	if (longline) {
		memset(longline, 'x', ll);
		memcpy(longline, "9000 10 ", 8);
		memcpy(longline + (64u << 10), "9100 10 tail", 12);
		longline[ll] = '\n';
		longline[ll + 1] = '\0';
	}
	pm_write(path, "w", "1000 10 good1\n"
		 "\n"
		 "hello world\n"
		 "zz 10 nothex\n"
		 "1100 0 size_zero\n"
		 "1200 10\n"
		 "1300 10 \n"
		 "1400\n"
		 "ffffffffffffff00 1000 wraps\n"
		 "1500 zz notsize\n"
		 "1600 10 bad\xff\xfe" "utf8\n");
	pm_write(path, "a", longline ? longline : "");
	pm_write(path, "a", "1700 10 good2\n");
	pm = perfmap__at_path(path, PERFMAP_MAX);
	perfmap__refresh(pm);
	const char *bad = perfmap__lookup(pm, 0x1600);
	check(pm_is(pm, 0x1000, "good1") && pm_is(pm, 0x1700, "good2") && pm_is(pm, 0x1100, NULL) &&
	      pm_is(pm, 0x1200, NULL) && pm_is(pm, 0x1300, NULL) && pm_is(pm, 0x1400, NULL) &&
	      pm_is(pm, 0xffffffffffffff80ull, NULL) && pm_is(pm, 0x1500, NULL) && pm_is(pm, 0x9000, NULL) &&
	      pm_is(pm, 0x9100, NULL),
	      "perfmap: garbage lines skipped (no number, size 0, no name, wrapping, over 4 KiB), good ones kept");
	check(bad && *bad && text__valid(bad, strlen(bad)) && strncmp(bad, "bad", 3) == 0,
	      "perfmap: a name that is not UTF-8 is cleaned, not dropped");
	check(perfmap__count(pm) == 3, "perfmap: garbage: 3 entries of 13 lines");
	perfmap__free(pm);
	free(longline);

	/* The cap: at most MAX bytes read, the rest never, even as it grows. */
	pm_write(path, "w", "1000 10 in_cap\n2000 10 also_in\n3000 10 past_cap\n");
	pm = perfmap__at_path(path, 32);        /* two lines are 31 bytes */
	perfmap__refresh(pm);
	check(perfmap__count(pm) == 2 && pm_is(pm, 0x1000, "in_cap") && pm_is(pm, 0x2000, "also_in") &&
	      pm_is(pm, 0x3000, NULL) && perfmap__offset(pm) <= 32,
	      "perfmap: the cap: lines past MAX bytes not read");
	pm_write(path, "a", "4000 10 later\n");
	perfmap__refresh(pm);
	check(perfmap__count(pm) == 2 && pm_is(pm, 0x4000, NULL),
	      "perfmap: the cap: growth past it not read");
	perfmap__free(pm);
	pm = perfmap__at_path(path, 20);        /* cuts the second line */
	perfmap__refresh(pm);
	check(perfmap__count(pm) == 1 && pm_is(pm, 0x2000, NULL) && perfmap__offset(pm) == 15,
	      "perfmap: the cap inside a line: that line not taken");
	perfmap__free(pm);
	perfmap__free(NULL);

	unlink(path);
	rmdir(dir);
}

/* build/tests/unit [WORD...]: every group of tests, or those whose name
 * holds one of the WORDs (`make check T=unit:python`). */
static const struct {
	const char *name;
	void (*fn)(void);
} groups[] = {
	{ "intern", test_intern },
	{ "maps", test_maps },
	{ "options", test_options },
	{ "options_habits", test_options_habits },
	{ "options_formats", test_options_formats },
	{ "options_documented", test_options_documented },
	{ "symbolic", test_symbolic },
	{ "symbolic_age", test_symbolic_age },
	{ "stacks", test_stacks },
	{ "slices", test_slices },
	{ "intern_remove", test_intern_remove },
	{ "stacks_age", test_stacks_age },
	{ "sparse", test_sparse },
	{ "pprof", test_pprof },
	{ "text", test_text },
	{ "outfile", test_outfile },
	{ "gopclntab", test_gopclntab },
	{ "gocurg", test_gocurg },
	{ "golayout", test_golayout },
	{ "svg", test_svg },
	{ "cfi", test_cfi },
	{ "python", test_python },
	{ "symcache", test_symcache },
	{ "perfmap", test_perfmap },
	{ "secret", test_secret },
};

static int wanted(const char *name, int argc, char **argv)
{
	if (argc < 2)
		return 1;
	for (int i = 1; i < argc; i++)
		if (strstr(name, argv[i]))
			return 1;
	return 0;
}

int main(int argc, char **argv)
{
	int ran = 0;
	for (size_t i = 0; i < sizeof(groups) / sizeof(groups[0]); i++)
		if (wanted(groups[i].name, argc, argv)) {
			groups[i].fn();
			ran++;
		}
	if (!ran) {
		fprintf(stderr, "unit: no test group matches (groups:");
		for (size_t i = 0; i < sizeof(groups) / sizeof(groups[0]); i++)
			fprintf(stderr, " %s", groups[i].name);
		fprintf(stderr, ")\n");
		return 2;
	}
	printf("1..%d\n", n_tests);
	return n_failed != 0;
}
