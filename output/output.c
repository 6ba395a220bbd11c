/* output: what the writers share besides the frame walk (output/frames.c). */
#include "output/output.h"

#include <errno.h>
#include <stdio.h>
#include <unistd.h>

#include "util/syscalls.h"

size_t output__roots(const struct frames *fr, const struct profile_info *info,
		     const struct frame_stack *s, char roots[2][160])
{
	const struct stack_label *l = frames__label(fr, s->label);
	size_t n = 0;
	if (!l)
		return 0;
	if (info->process_root || (info->thread_root && frames__several_processes(fr)))
		frames__process_text(l, roots[n++], sizeof(roots[0]));
	if (info->thread_root)
		frames__thread_text(l, roots[n++], sizeof(roots[0]));
	return n;
}

const char *output__leaf(const struct profile_info *info, const struct frame_stack *s,
			 char buf[64])
{
	if (!info->syscall_leaf || s->syscall < 0)
		return NULL;
	snprintf(buf, 64, "[syscall %s]", syscalls__name(s->syscall));
	return buf;
}

int output__write_all(int fd, const char *s, size_t len)
{
	while (len) {
		ssize_t w = write(fd, s, len);
		if (w < 0 && errno == EINTR)
			continue;
		if (w < 0)
			return -errno;
		s += w;
		len -= (size_t)w;
	}
	return 0;
}

#define OUTPUT_CHUNK (1u << 20)

int output__flush(struct output_stream *o, int force)
{
	if (o->sb.len < (force ? 1 : OUTPUT_CHUNK))
		return o->error;
	if (!o->error)
		o->error = output__write_all(o->fd, o->sb.s, o->sb.len);
	strbuf__reset(&o->sb);
	return o->error;
}
