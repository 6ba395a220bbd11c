/* untraced DOG TARGET [PROF]: SIGKILLs DOG (a profiler's cprof-watchdog),
 * SIGSTOPs PROF right after if given, then polls every thread of TARGET
 * until none is traced: prints the microseconds that took, or "held" after
 * 2 s (bench/watchdog.sh). */
#include <dirent.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static double now_us(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return t.tv_sec * 1e6 + t.tv_nsec / 1e3;
}

/* Whether a thread of PID has a tracer. */
static int traced(int pid)
{
	char path[64];
	snprintf(path, sizeof(path), "/proc/%d/task", pid);
	DIR *d = opendir(path);
	if (!d)
		return 0;
	struct dirent *e;
	int any = 0;
	while (!any && (e = readdir(d))) {
		if (e->d_name[0] == '.')
			continue;
		char f[300], line[256];
		snprintf(f, sizeof(f), "/proc/%d/task/%s/status", pid, e->d_name);
		FILE *fp = fopen(f, "r");
		if (!fp)
			continue;
		while (fgets(line, sizeof(line), fp))
			if (!strncmp(line, "TracerPid:", 10)) {
				any = atoi(line + 10) != 0;
				break;
			}
		fclose(fp);
	}
	closedir(d);
	return any;
}

int main(int argc, char **argv)
{
	if (argc < 3) {
		fprintf(stderr, "usage: untraced DOG TARGET [PROF]\n");
		return 2;
	}
	int dog = atoi(argv[1]), target = atoi(argv[2]), prof = argc > 3 ? atoi(argv[3]) : 0;
	double t0 = now_us();
	kill(dog, SIGKILL);
	if (prof)
		kill(prof, SIGSTOP);
	while (traced(target))
		if (now_us() - t0 > 2e6) {
			printf("held\n");
			return 1;
		}
	printf("%.0f\n", now_us() - t0);
	return 0;
}
