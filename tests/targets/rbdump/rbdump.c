/* rbdump PID VMPTR: what ruby/vm.c reads of the Ruby VM of process PID
 * whose ruby_current_vm_ptr is at VMPTR (hex), once, with layout 3.1: a
 * line per thread ("thread TID gvl=held|- [name=NAME]"), then a line per control
 * frame, innermost first ("  LABEL PATH:LINE flags=HEX", "  [cfunc]
 * flags=HEX", "  [truncated]").  Stops nothing: the frames of a thread
 * that runs on may be torn.  For tests/t_ruby.sh's layout check. */
#include <stdio.h>
#include <stdlib.h>

#include "ruby/vm.h"

int main(int argc, char **argv)
{
	if (argc != 3) {
		fprintf(stderr, "usage: rbdump PID VMPTR\n");
		return 2;
	}
	pid_t pid = atoi(argv[1]);
	struct rb_vm *v = rb_vm__fake(ruby_layout__find(3, 1), rb_vm__read_remote,
				      (void *)(intptr_t)pid, strtoull(argv[2], NULL, 16));
	static struct rb_thread_raw th[RB_MAX_THREADS];
	static struct rb_frame_raw fr[RB_MAX_FRAMES];
	uint64_t gvl;
	int n = rb_vm__threads(v, th, RB_MAX_THREADS, &gvl);
	if (n < 0) {
		fprintf(stderr, "rbdump: no VM read at %s\n", argv[2]);
		return 1;
	}
	for (int i = 0; i < n; i++) {
		char name[RB_MAX_STR + 1] = "";
		rb_vm__string(v, th[i].name, name, sizeof(name));
		printf("thread %d gvl=%s%s%s\n", (int)th[i].tid, th[i].th == gvl ? "held" : "-",
		       *name ? " name=" : "", name);
		bool trunc;
		size_t k = rb_vm__frames(v, th[i].ec, fr, RB_MAX_FRAMES, &trunc);
		for (size_t j = 0; j < k; j++) {
			char label[RB_MAX_STR + 1], path[RB_MAX_STR + 1];
			int first;
			if ((fr[j].flags & RUBY_FRAME_MAGIC_MASK) == RUBY_FRAME_MAGIC_DUMMY)
				continue;
			if (rb_vm__iseq_name(v, fr[j].iseq, label, sizeof(label), path, sizeof(path),
					     &first) == 0)
				printf("  %s %s:%d flags=%x\n", label, path,
				       rb_vm__line(v, fr[j].iseq, fr[j].pc), fr[j].flags);
			else
				printf("  [cfunc] flags=%x\n", fr[j].flags);
		}
		if (trunc)
			printf("  [truncated]\n");
	}
	rb_vm__free(v);
	return 0;
}
