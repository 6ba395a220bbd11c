/* Unit tests of the pure parts: interning, maps parsing, options, the
 * stack table, and the pprof encoding read back through protobuf-c.
 * Output is TAP ("ok N - name" / "not ok N - name"). */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#include "attach/maps.h"
#include "build/output/profile.pb-c.h"
#include "cli/options.h"
#include "cli/outfile.h"
#include "dwarf/symbolizer.h"
#include "output/output.h"
#include "output/stacks.h"
#include "util/intern.h"

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

/* Adds COUNT samples of thread SLOT in STATE with PCS[0..N), CPU ns. */
static void add(struct stacks *st, uint32_t slot, char state, const uint64_t *pcs, size_t n,
		uint64_t count, uint64_t cpu)
{
	struct stack s = { .slot = slot, .state = state, .pcs = pcs, .n = n, .count = count,
			   .cpu_ns = cpu };
	stacks__add(st, &s);
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
	check(strcmp(stacks__state_name('D'), "disk wait") == 0 &&
	      strcmp(stacks__state_name('t'), "stopped") == 0, "stacks: state names");
	stacks__free(st);
}

/* Writes a pprof of fake stacks (no modules: every address is unknown)
 * and reads it back with protobuf-c: the invariants pprof relies on. */
static void test_pprof(void)
{
	struct modules *ms = modules__new(getpid());
	char err[256];
	struct symbolizer *sym = symbolizer__new(ms, err, sizeof(err));
	struct stacks *st = stacks__new();
	uint64_t a[] = { 0x1000, 0x2000 }, b[] = { 0x1000, 0x3000, 0x2000 };
	add(st, 0, 'S', a, 2, 1, 0);
	add(st, 1, 'R', b, 3, 1, 7000000);
	add(st, 1, 'R', b, 3, 1, 3000000);
	struct thread_label threads[] = { { 10, "main" }, { 11, "worker" } };
	struct profile_info info = { .period_ns = 10101010, .start_ns = 1, .duration_ns = 2,
				     .comment = "cmd", .threads = threads, .nthreads = 2 };
	char path[] = "/tmp/cprof-unit-XXXXXX";
	int fd = mkstemp(path);
	int r = pprof__write(fd, st, sym, &info, err, sizeof(err));
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
	stacks__free(st);
	symbolizer__free(sym);
	modules__free(ms);
}

/* cli/outfile.c on a scratch directory: a new name, a replaced file's
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

int main(void)
{
	test_intern();
	test_maps();
	test_options();
	test_stacks();
	test_pprof();
	test_outfile();
	printf("1..%d\n", n_tests);
	return n_failed != 0;
}
