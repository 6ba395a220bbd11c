/* hostile: a target whose names are hostile (issue 17 item 2).
 *   hostile READY DIR
 * dlopen()s every file in DIR (copies of tests/bin/libhostile*.so under
 * hostile file names, made by tests/t_hostile.sh) and runs three threads
 * that call each library's hostile_entry() in a loop.  The threads name
 * themselves with prctl(PR_SET_NAME), which keeps 15 bytes:
 *   "éééééééé"            cut to "ééééééé\xc3": invalid UTF-8 at the end
 *   "a线程名字测试"        cut inside the fifth CJK character
 *   "<b>&\"'\e[1m\t"      markup, quotes and control characters
 * The main thread waits in pthread_join(). */
#define _GNU_SOURCE
#include <dirent.h>
#include <dlfcn.h>
#include <pthread.h>
#include <stdatomic.h>
#include <sys/prctl.h>
#include "ready.h"

#define MAX_LIBS 16

typedef void entry_fn(unsigned long);
static entry_fn *entries[MAX_LIBS];
static int nlibs;
static atomic_int named;
static const char *const names[] = {
	"\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9",
	"a\xe7\xba\xbf\xe7\xa8\x8b\xe5\x90\x8d\xe5\xad\x97\xe6\xb5\x8b\xe8\xaf\x95",
	"<b>&\"'\x1b[1m\t",
};

static void *worker(void *arg)
{
	prctl(PR_SET_NAME, (unsigned long)arg, 0, 0, 0);
	atomic_fetch_add(&named, 1);
	for (;;)
		for (int i = 0; i < nlibs; i++)
			entries[i](20000);
	return NULL;
}

int main(int argc, char **argv)
{
	const char *ready = ready_path(argc, argv);
	struct timespec poll = { 0, 1000 * 1000 };
	pthread_t th[3];
	char path[4096];
	struct dirent *d;
	DIR *dir = argc > 2 ? opendir(argv[2]) : NULL;

	if (!dir) {
		fprintf(stderr, "usage: hostile READY DIR\n");
		return 2;
	}
	while ((d = readdir(dir)) && nlibs < MAX_LIBS) {
		if (d->d_name[0] == '.')
			continue;
		snprintf(path, sizeof(path), "%s/%s", argv[2], d->d_name);
		void *h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
		entry_fn *e = h ? (entry_fn *)dlsym(h, "hostile_entry") : NULL;
		if (!e) {
			fprintf(stderr, "hostile: %s: %s\n", path, dlerror());
			return 97;
		}
		entries[nlibs++] = e;
	}
	closedir(dir);
	for (int i = 0; i < 3; i++)
		if (pthread_create(&th[i], NULL, worker, (void *)names[i]))
			return 98;
	while (atomic_load(&named) < 3)
		nanosleep(&poll, NULL);
	ready_announce(ready);
	pthread_join(th[0], NULL);
	return 0;
}
