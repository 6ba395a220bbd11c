/* A main() for the fuzz harnesses without libFuzzer: runs each input file
 * (or every file in each directory) given on the command line through
 * LLVMFuzzerTestOneInput once, and prints "replayed N inputs".  Built with
 * ASan + UBSan by `make check`, so that a corpus input that crashes, reads
 * out of bounds, leaks or hits undefined behaviour fails the test suite
 * without any fuzzing.  Exits 1 if an input cannot be read. */
#include <dirent.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerInitialize(int *argc, char ***argv) __attribute__((weak));

static int replay_file(const char *path)
{
	FILE *f = fopen(path, "rb");
	if (!f) {
		perror(path);
		return -1;
	}
	size_t cap = 4096, n = 0, got;
	uint8_t *buf = malloc(cap);
	while (buf && (got = fread(buf + n, 1, cap - n, f)) > 0) {
		n += got;
		if (n == cap)
			buf = realloc(buf, cap *= 2);
	}
	fclose(f);
	if (!buf)
		return -1;
	/* An exact-size copy, so that ASan sees a read past the input. */
	uint8_t *data = malloc(n ? n : 1);
	memcpy(data, buf, n);
	free(buf);
	LLVMFuzzerTestOneInput(data, n);
	free(data);
	return 0;
}

static int by_name(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Replays PATH, or the files in it (sorted, for a stable order). */
static int replay(const char *path, size_t *count)
{
	struct stat st;
	if (stat(path, &st) != 0) {
		perror(path);
		return -1;
	}
	if (!S_ISDIR(st.st_mode)) {
		(*count)++;
		return replay_file(path);
	}
	struct dirent **names;
	int n = scandir(path, &names, NULL, NULL);
	if (n < 0) {
		perror(path);
		return -1;
	}
	qsort(names, (size_t)n, sizeof(*names), by_name);
	int r = 0;
	for (int i = 0; i < n; i++) {
		char full[4096];
		if (names[i]->d_name[0] != '.') {
			snprintf(full, sizeof(full), "%s/%s", path, names[i]->d_name);
			if (stat(full, &st) == 0 && S_ISREG(st.st_mode)) {
				(*count)++;
				r |= replay_file(full);
			}
		}
		free(names[i]);
	}
	free(names);
	return r;
}

int main(int argc, char **argv)
{
	size_t count = 0;
	int r = 0;
	if (LLVMFuzzerInitialize)
		LLVMFuzzerInitialize(&argc, &argv);
	for (int i = 1; i < argc; i++)
		r |= replay(argv[i], &count);
	printf("replayed %zu inputs\n", count);
	return r ? 1 : 0;
}
