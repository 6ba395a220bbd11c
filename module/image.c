/* image: the bytes of a module's own file, as its segments map them
 * (module__read, modules.h): what the unwinder, the runtimes' views and
 * the unwind tables (module/cfi_rows.c) read of a module without asking
 * the target. */
#include "module/modules.h"

#include <string.h>

int module__read(const struct module *m, uint64_t addr, void *buf, size_t len)
{
	uint64_t vaddr = addr - m->bias;
	for (size_t i = 0; i < m->nsegs; i++) {
		const struct segment *s = &m->segs[i];
		/* The segments are what the file says: any value, so no sum
		 * here may wrap (a p_offset of -5 once read before the image). */
		uint64_t in = vaddr - s->vaddr;
		if (vaddr < s->vaddr || in > s->filesz || len > s->filesz - in)
			continue;
		uint64_t off = s->offset + in;
		if (off < in || off > m->image_len || len > m->image_len - off)
			return -1;
		memcpy(buf, m->image + off, len);
		return 0;
	}
	return -1;
}
