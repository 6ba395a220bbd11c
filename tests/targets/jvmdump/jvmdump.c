/* jvmdump PID: what jvm/ reads of the HotSpot JVM of process PID, once,
 * stopping nothing: a line per Java thread ("thread TID state=S
 * name=NAME", its java.lang.Thread's name), then,
 * for a thread with a last Java frame (one in native code, in the VM or
 * blocked), a line per Java frame, innermost first ("  CLASS.METHOD
 * FILE:LINE interpreted|compiled", "  [STUB NAME] stub") and how the walk
 * ended ("  end entry|unknown|unreadable|deep").  For tests/t_jvm.sh,
 * against the JDK's own `jcmd PID Thread.print`. */
#include <stdio.h>
#include <stdlib.h>

#include "jvm/jvm.h"
#include "module/modules.h"

int main(int argc, char **argv)
{
	if (argc != 2) {
		fprintf(stderr, "usage: jvmdump PID\n");
		return 2;
	}
	pid_t pid = atoi(argv[1]);
	struct modules *ms = modules__new(pid);
	if (ms && modules__refresh(ms, pid) < 0) {
		modules__free(ms);
		ms = NULL;
	}
	char why[256];
	struct jvm *j = ms ? jvm__new(pid, ms, why, sizeof(why)) : NULL;
	if (!j) {
		fprintf(stderr, "jvmdump: no JVM read in %d: %s\n", (int)pid, ms ? why : "no modules");
		return 1;
	}
	static struct jvm_thread th[JVM_MAX_THREADS];
	static struct jvm_frame fr[JVM_MAX_FRAMES];
	static const char *const states[] = { "other", "native", "vm", "java", "blocked" };
	static const char *const ends[] = { "entry", "unknown", "unreadable", "deep" };
	int n = jvm__threads(j, th, JVM_MAX_THREADS);
	if (n < 0) {
		fprintf(stderr, "jvmdump: the thread list of %d cannot be read\n", (int)pid);
		return 1;
	}
	for (int i = 0; i < n; i++) {
		char tname[128];
		if (jvm__thread_name(j, th[i].thread, tname, sizeof(tname)) < 0)
			tname[0] = 0;
		printf("thread %d state=%s%s%s\n", (int)th[i].tid, states[th[i].state],
		       tname[0] ? " name=" : "", tname);
		if (!th[i].sp)
			continue;
		size_t k;
		uint64_t nsp, npc, nfp;
		enum jvm_walk_end e = jvm__walk(j, th[i].sp, th[i].pc, th[i].fp, fr, JVM_MAX_FRAMES, &k,
						&nsp, &npc, &nfp, NULL);
		for (size_t x = 0; x < k; x++) {
			char name[600], file[256];
			if (fr[x].kind == JVM_STUB) {
				jvm__blob_name(j, fr[x].blob, name, sizeof(name));
				printf("  [%s] stub\n", name);
				continue;
			}
			if (jvm__method_name(j, fr[x].method, name, sizeof(name), file, sizeof(file)) < 0)
				printf("  [unknown method] %s\n",
				       fr[x].kind == JVM_INTERPRETED ? "interpreted" : "compiled");
			else
				printf("  %s %s:%d %s\n", name, file[0] ? file : "?",
				       jvm__line(j, fr[x].method, fr[x].bci),
				       fr[x].kind == JVM_INTERPRETED ? "interpreted" : "compiled");
		}
		printf("  end %s\n", ends[e]);
	}
	jvm__free(j);
	modules__free(ms);
	return 0;
}
