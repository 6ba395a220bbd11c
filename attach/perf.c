/* perf: per-thread software-clock samples of registers and user stack (see
 * attach/perf.h).  perf_event_open(2) is the reference for the record
 * layout read here. */
#include "attach/perf.h"

#include <asm/perf_regs.h>
#include <errno.h>
#include <linux/perf_event.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "util/xalloc.h"

/* The registers the unwinder can use, in the kernel's order (ascending
 * bit).  DS, ES, FS and GS (bits 12-15) are refused for 64-bit tasks. */
#define REG_BIT(r) (1ull << PERF_REG_X86_##r)
#define REGS_MASK (REG_BIT(AX) | REG_BIT(BX) | REG_BIT(CX) | REG_BIT(DX) | REG_BIT(SI) |        \
		   REG_BIT(DI) | REG_BIT(BP) | REG_BIT(SP) | REG_BIT(IP) | REG_BIT(FLAGS) |     \
		   REG_BIT(CS) | REG_BIT(SS) | REG_BIT(R8) | REG_BIT(R9) | REG_BIT(R10) |        \
		   REG_BIT(R11) | REG_BIT(R12) | REG_BIT(R13) | REG_BIT(R14) | REG_BIT(R15))
#define NREGS 20
#define STACK_LIMIT (60 * 1024)   /* a record's size is a u16: 64 KiB in all */

struct perf_stream {
	int fd;
	unsigned char *map;             /* the control page, then the data */
	size_t map_len;
	size_t data_len;                /* a power of two */
	size_t stack_asked;
	struct perf_sample s[2];        /* before, after (perf__read) */
	int kchain;                     /* PERF_SAMPLE_CALLCHAIN is in the records */
	unsigned char *stack[2];
	uint64_t nostack;               /* samples left out with no stack (perf__nostack) */
	uint64_t nostack_ns;            /* the newest of them counted */
	uint64_t dropped;               /* samples the kernel could not write (perf__dropped) */
	uint64_t seen_head;             /* data_head at the last read: records from
					   there on were looked at for PERF_RECORD_LOST */
	int seen_any;
};

static size_t page_size(void)
{
	static size_t ps;
	if (!ps)
		ps = (size_t)sysconf(_SC_PAGESIZE);
	return ps;
}

/* The ring overwrites, written backward (write_backward, mapped read-only):
 * the kernel keeps the newest samples and drops the oldest, so a late
 * tracer still finds the latest sample.  Room for about six: the latest,
 * and back to the tick before, mostly (see perf__read()). */
static size_t ring_len(size_t stack)
{
	size_t want = 6 * (stack + 512), len = page_size();
	while (len < want)
		len <<= 1;
	return len;
}

int perf__open(pid_t tid, uint64_t every_ns, size_t stack, int kernel, int kchain,
	       struct perf_stream **out)
{
	struct perf_event_attr a;
	memset(&a, 0, sizeof(a));
	a.size = sizeof(a);
	a.type = PERF_TYPE_SOFTWARE;
	a.config = PERF_COUNT_SW_TASK_CLOCK;
	a.sample_period = every_ns;
	a.sample_type = PERF_SAMPLE_TID | PERF_SAMPLE_TIME | PERF_SAMPLE_READ |
			PERF_SAMPLE_REGS_USER | PERF_SAMPLE_STACK_USER;
	a.read_format = 0;      /* PERF_SAMPLE_READ: the clock's count, CPU ns */
	if (kernel && kchain) {
		a.sample_type |= PERF_SAMPLE_CALLCHAIN;
		a.exclude_callchain_user = 1;   /* the user stack is ours to unwind */
		a.sample_max_stack = PERF_KSTACK_MAX;
	}
	a.sample_regs_user = REGS_MASK;
	stack = stack > STACK_LIMIT ? STACK_LIMIT : stack & ~(size_t)7;
	a.sample_stack_user = (uint32_t)stack;
	a.exclude_kernel = !kernel;
	a.exclude_hv = 1;
	a.use_clockid = 1;
	a.clockid = CLOCK_MONOTONIC;
	a.write_backward = 1;
	int fd = (int)syscall(SYS_perf_event_open, &a, tid, -1, -1, PERF_FLAG_FD_CLOEXEC);
	if (fd < 0)
		return -errno;
	size_t data = ring_len(stack), len = page_size() + data;
	void *m = mmap(NULL, len, PROT_READ, MAP_SHARED, fd, 0);
	if (m == MAP_FAILED) {
		int e = errno;
		close(fd);
		return -e;
	}
	/* One block with its two sample buffers: a thread's stream comes and
	 * goes with it, and same-sized blocks are reused whole (separate 8 KiB
	 * buffers left the heap 2 MiB larger after 1,000 threads of churn). */
	struct perf_stream *p = xcalloc(1, sizeof(*p) + 2 * (stack ? stack : 8));
	p->stack[0] = (unsigned char *)(p + 1);
	p->stack[1] = p->stack[0] + (stack ? stack : 8);
	p->fd = fd;
	p->map = m;
	p->map_len = len;
	p->data_len = data;
	p->stack_asked = stack;
	p->kchain = kernel && kchain;
	*out = p;
	return 0;
}

void perf__free(struct perf_stream *p)
{
	if (!p)
		return;
	munmap(p->map, p->map_len);
	close(p->fd);
	free(p);
}

int perf__cpu_ns(struct perf_stream *p, uint64_t *cpu_ns)
{
	return read(p->fd, cpu_ns, sizeof(*cpu_ns)) == sizeof(*cpu_ns) ? 0 : -errno;
}

int perf__every(struct perf_stream *p, uint64_t every_ns)
{
	return ioctl(p->fd, PERF_EVENT_IOC_PERIOD, &every_ns) < 0 ? -errno : 0;
}

int perf__permitted(uint64_t every_ns, size_t stack)
{
	struct perf_stream *p;
	int r = perf__open(gettid(), every_ns, stack, 0, 0, &p);
	if (r == 0)
		perf__free(p);
	return r;
}

/* LEN bytes of the ring at stream position POS (which may wrap). */
static void ring_copy(const struct perf_stream *p, uint64_t pos, void *out, size_t len)
{
	const unsigned char *data = p->map + page_size();
	size_t off = (size_t)(pos & (p->data_len - 1)), first = p->data_len - off;
	if (first > len)
		first = len;
	memcpy(out, data + off, first);
	memcpy((unsigned char *)out + first, data, len - first);
}

static uint64_t ring_u64(const struct perf_stream *p, uint64_t pos)
{
	uint64_t v;
	ring_copy(p, pos, &v, sizeof(v));
	return v;
}

/* The sample record at POS (SIZE bytes) into slot I.  Returns 0, or -1
 * if it has no user registers (the kernel's ABI_NONE) or makes no sense,
 * -2 if the kernel could copy none of the stack asked for.  That is a
 * sample taken inside execve() after the old memory was replaced: the
 * registers are still the old image's at its entry into the call, but
 * its stack is gone (the copy faults), and unwound they gave a lone
 * innermost frame (libc's execve).  Measured with a 20 us task clock on
 * a program that execs itself 300 times: 5,392 of 28,109 samples. */
static int parse_sample(struct perf_stream *p, uint64_t pos, size_t size, int i)
{
	struct perf_sample *s = &p->s[i];
	/* Positions are free-running u64s: written backward they start near
	 * 2^64 and wrap, so bounds are checked as offsets from POS. */
	uint64_t at = pos + sizeof(struct perf_event_header) + 8;  /* pid, tid */
	uint64_t regs[NREGS];
	s->time_ns = ring_u64(p, at);
	at += 8;
	s->cpu_ns = ring_u64(p, at);
	at += 8;
	s->nkips = 0;
	if (p->kchain) {
		uint64_t nr = ring_u64(p, at);
		at += 8;
		if (nr > 512 || at - pos + nr * 8 > size)
			return -1;
		for (uint64_t k = 0; k < nr; k++) {
			uint64_t ip = ring_u64(p, at + k * 8);
			/* PERF_CONTEXT_KERNEL and the like mark the parts */
			if (ip < (uint64_t)PERF_CONTEXT_MAX && s->nkips < PERF_KSTACK_MAX)
				s->kips[s->nkips++] = ip;
		}
		at += nr * 8;
	}
	if (ring_u64(p, at) == PERF_SAMPLE_REGS_ABI_NONE)
		return -1;
	at += 8;
	if (at - pos + sizeof(regs) + 8 > size)
		return -1;
	ring_copy(p, at, regs, sizeof(regs));
	at += sizeof(regs);
	memset(&s->regs, 0, sizeof(s->regs));
	s->regs.rax = regs[0], s->regs.rbx = regs[1], s->regs.rcx = regs[2];
	s->regs.rdx = regs[3], s->regs.rsi = regs[4], s->regs.rdi = regs[5];
	s->regs.rbp = regs[6], s->regs.rsp = regs[7], s->regs.rip = regs[8];
	s->regs.eflags = regs[9], s->regs.cs = regs[10], s->regs.ss = regs[11];
	s->regs.r8 = regs[12], s->regs.r9 = regs[13], s->regs.r10 = regs[14];
	s->regs.r11 = regs[15], s->regs.r12 = regs[16], s->regs.r13 = regs[17];
	s->regs.r14 = regs[18], s->regs.r15 = regs[19];
	s->regs.orig_rax = (unsigned long long)-1;
	uint64_t asked = ring_u64(p, at), dyn = 0;
	at += 8;
	if (asked > p->stack_asked || at - pos + asked + (asked ? 8 : 0) > size)
		return -1;
	if (asked)
		dyn = ring_u64(p, at + asked);
	if (dyn > asked)
		dyn = asked;
	if (asked && !dyn)
		return -2;
	ring_copy(p, at, p->stack[i], (size_t)dyn);
	s->stack = p->stack[i];
	s->stack_len = (size_t)dyn;
	s->stack_asked = (size_t)asked;
	return 0;
}

/* The kernel writes a PERF_RECORD_LOST (its count of samples it could not
 * write: output paused while we read, or no room) before the next record
 * it can write.  The records written since the last read, HEAD up to
 * seen_head (written backward: the newer, the lower), are looked at once
 * each for them. */
static void count_lost(struct perf_stream *p, uint64_t head)
{
	uint64_t end = p->seen_any ? p->seen_head : head + p->data_len, pos = head;
	p->seen_head = head;
	p->seen_any = 1;
	while (pos != end && pos - head < p->data_len) {
		struct perf_event_header h;
		ring_copy(p, pos, &h, sizeof(h));
		if (h.size < sizeof(h) || pos - head + h.size > p->data_len)
			break;
		/* struct { header; u64 id; u64 lost; } */
		if (h.type == PERF_RECORD_LOST && h.size >= sizeof(h) + 16)
			p->dropped += ring_u64(p, pos + sizeof(h) + 8);
		pos += h.size;
	}
}

void perf__read(struct perf_stream *p, uint64_t at_ns, const struct perf_sample **before,
		const struct perf_sample **after)
{
	struct perf_event_mmap_page *pg = (struct perf_event_mmap_page *)p->map;
	uint64_t bpos = 0, apos = 0;
	size_t bsize = 0, asize = 0;
	*before = *after = NULL;
	/* Written backward: the newest record starts at data_head, older ones
	 * follow, up to a ring's length (the last may be cut by the wrap).
	 * Output is paused meanwhile (a flag of the ring): samples due now
	 * are dropped, never torn. */
	if (ioctl(p->fd, PERF_EVENT_IOC_PAUSE_OUTPUT, 1) < 0)
		return;
	uint64_t head = __atomic_load_n(&pg->data_head, __ATOMIC_ACQUIRE), pos = head;
	count_lost(p, head);
	while (pos - head < p->data_len) {
		struct perf_event_header h;
		ring_copy(p, pos, &h, sizeof(h));
		if (h.size < sizeof(h) || pos - head + h.size > p->data_len)
			break;
		if (h.type == PERF_RECORD_SAMPLE && h.size >= sizeof(h) + 16) {
			uint64_t time = ring_u64(p, pos + sizeof(h) + 8);
			if (time <= at_ns) {
				bpos = pos, bsize = h.size;
				break;          /* the rest are older */
			}
			apos = pos, asize = h.size;
		}
		pos += h.size;
	}
	int rb = bsize ? parse_sample(p, bpos, bsize, 0) : -1;
	int ra = asize ? parse_sample(p, apos, asize, 1) : -1;
	if (rb == 0)
		*before = &p->s[0];
	if (ra == 0)
		*after = &p->s[1];
	/* Each sample left out counted once, though read at many ticks. */
	uint64_t tb = rb == -2 ? ring_u64(p, bpos + sizeof(struct perf_event_header) + 8) : 0;
	uint64_t ta = ra == -2 ? ring_u64(p, apos + sizeof(struct perf_event_header) + 8) : 0;
	if (tb > p->nostack_ns)
		p->nostack++, p->nostack_ns = tb;
	if (ta > p->nostack_ns)
		p->nostack++, p->nostack_ns = ta;
	ioctl(p->fd, PERF_EVENT_IOC_PAUSE_OUTPUT, 0);
}

uint64_t perf__dropped(struct perf_stream *p)
{
	uint64_t n = p->dropped;
	p->dropped = 0;
	return n;
}

uint64_t perf__nostack(struct perf_stream *p)
{
	uint64_t n = p->nostack;
	p->nostack = 0;
	return n;
}
