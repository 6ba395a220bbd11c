/* Finding a CRuby VM in a process's modules (see vm.h): the module
 * (libruby, or a ruby linked statically) that defines ruby_current_vm_ptr,
 * its ruby_version, its layout. */
#include "ruby/vm.h"

#include <stdio.h>
#include <string.h>

#include "module/modules.h"

struct rb_vm *rb_vm__new(pid_t pid, const struct modules *ms, char *why, size_t whylen)
{
	*why = 0;
	for (size_t i = 0; i < modules__count(ms); i++) {
		const struct module *m = modules__at(ms, i);
		uint64_t vm_ptr, ver;
		if (!m->name || !strstr(m->name, "ruby") ||
		    module__symbol(m, "ruby_current_vm_ptr", &vm_ptr, NULL) < 0)
			continue;
		char version[16] = "";
		if (module__symbol(m, "ruby_version", &ver, NULL) < 0 ||
		    module__read(m, ver, version, sizeof(version) - 1) < 0) {
			snprintf(why, whylen, "its %s has no readable ruby_version: no Ruby frames",
				 m->name);
			return NULL;
		}
		version[sizeof(version) - 1] = 0;
		int major = 0, minor = 0;
		if (sscanf(version, "%d.%d", &major, &minor) != 2) {
			snprintf(why, whylen, "its ruby_version is not a version: no Ruby frames");
			return NULL;
		}
		const struct ruby_layout *l = ruby_layout__find(major, minor);
		if (!l) {
			snprintf(why, whylen, "Ruby %d.%d is not supported (3.1 is): no Ruby frames",
				 major, minor);
			return NULL;
		}
		struct rb_vm *v = rb_vm__fake(l, rb_vm__read_remote, (void *)(intptr_t)pid, vm_ptr);
		snprintf(v->version, sizeof(v->version), "%s", version);
		uint64_t lo, size = 0;
		if (module__symbol(m, "rb_vm_exec", &lo, &size) == 0 && size) {
			v->exec_lo = lo;
			v->exec_hi = lo + size;
		}
		return v;
	}
	return NULL;
}

