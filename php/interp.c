/* Reading a PHP process from outside (see interp.h).  The pointers
 * followed are the Zend Engine's own: executor_globals.current_execute_data
 * -> each call's prev_execute_data; a call's func -> its name
 * (common.function_name), class (common.scope -> name) and, for user code,
 * op_array.filename; its opline -> lineno. */
#include "php/interp.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "module/modules.h"
#include "util/remote.h"
#include "util/text.h"
#include "util/xalloc.h"

#define FN_CACHE 4096u

struct php_fn {
	uint64_t addr;                  /* 0: empty */
	uint64_t name, scope, file;     /* the pointers it was named from */
	uint8_t type;
	uint32_t serial;
	uint64_t epoch;                 /* when last checked */
	char *func, *path;
	int line_start;
	bool bad;
};

struct php_interp {
	struct php_layout l;
	php_read_fn read;
	void *ctx;
	uint64_t eg;                    /* executor_globals */
	uint64_t sg;                    /* sapi_globals, 0: none */
	uint64_t exec_lo, exec_hi;      /* execute_ex */
	struct php_fn *fns;
	uint32_t serials;
	uint64_t named, bad;
	char version[16];
};

static int read_remote(void *ctx, uint64_t addr, void *buf, size_t len)
{
	return remote__read((pid_t)(intptr_t)ctx, addr, buf, len);
}

static int rd(const struct php_interp *p, uint64_t addr, void *buf, size_t len)
{
	if (!addr || addr + len < addr)
		return -1;
	return p->read(p->ctx, addr, buf, len);
}

static uint64_t word(const unsigned char *b, uint32_t off)
{
	uint64_t v;
	memcpy(&v, b + off, 8);
	return v;
}

/* ---- finding it ----------------------------------------------------------------- */

/* MAJOR.MINOR from a file name: "php8.2", "php-fpm8.2", "libphp8.2.so". */
static bool version_from_name(const char *name, int *major, int *minor)
{
	const char *base = strrchr(name, '/');
	base = base ? base + 1 : name;
	for (const char *s = base; *s; s++) {
		if (*s < '0' || *s > '9' || s[1] != '.' || s[2] < '0' || s[2] > '9')
			continue;
		if (s == base || (s[-1] != 'p' && s[-1] != 'm'))
			continue;       /* "php8.2", "fpm8.2" */
		*major = *s - '0';
		char *end;
		long m = strtol(s + 2, &end, 10);
		if (m < 0 || m > 99)
			return false;
		*minor = (int)m;
		return true;
	}
	return false;
}

static struct php_interp *alloc(const struct php_layout *l, php_read_fn read, void *ctx)
{
	struct php_interp *p = xcalloc(1, sizeof(*p));
	p->l = *l;
	p->read = read;
	p->ctx = ctx;
	p->fns = xcalloc(FN_CACHE, sizeof(*p->fns));
	snprintf(p->version, sizeof(p->version), "%d.%d", l->major, l->minor);
	return p;
}

struct php_interp *php_interp__new(pid_t pid, const struct modules *ms, char *why, size_t whylen)
{
	*why = 0;
	for (size_t i = 0; i < modules__count(ms); i++) {
		const struct module *m = modules__at(ms, i);
		uint64_t eg, ex, ex_size = 0;
		if (!m->name || !strstr(m->name, "php") ||
		    module__symbol(m, "executor_globals", &eg, NULL) < 0)
			continue;
		int major = 0, minor = 0;
		const struct php_layout *l = NULL;
		if (version_from_name(m->name, &major, &minor))
			l = php_layout__of(major, minor);
		if (!l) {
			if (major)
				snprintf(why, whylen, "PHP %d.%d is not supported (%s is): no PHP frames",
					 major, minor, php_layout__versions());
			else
				snprintf(why, whylen, "its PHP's version is not known (%s, no version in "
					 "its name; %s is supported): no PHP frames", m->name,
					 php_layout__versions());
			return NULL;
		}
		if (module__symbol(m, "execute_ex", &ex, &ex_size) < 0 || !ex_size) {
			snprintf(why, whylen, "its %s has no execute_ex symbol: no PHP frames", m->name);
			return NULL;
		}
		struct php_interp *p = alloc(l, read_remote, (void *)(intptr_t)pid);
		p->eg = eg;
		if (module__symbol(m, "sapi_globals", &p->sg, NULL) < 0)
			p->sg = 0;
		p->exec_lo = ex;
		p->exec_hi = ex + ex_size;
		return p;
	}
	return NULL;
}

struct php_interp *php_interp__fake(const struct php_layout *l, php_read_fn read, void *ctx,
				    uint64_t eg)
{
	struct php_interp *p = alloc(l, read, ctx);
	p->eg = eg;
	return p;
}

static void free_fn(struct php_fn *f)
{
	free(f->func);
	free(f->path);
	memset(f, 0, sizeof(*f));
}

void php_interp__free(struct php_interp *p)
{
	if (!p)
		return;
	for (size_t i = 0; i < FN_CACHE; i++)
		if (p->fns[i].addr)
			free_fn(&p->fns[i]);
	free(p->fns);
	free(p);
}

const char *php_interp__version(const struct php_interp *p)
{
	return p->version;
}

bool php_interp__in_exec(const struct php_interp *p, uint64_t pc)
{
	return pc >= p->exec_lo && pc < p->exec_hi;
}

/* ---- the chain -------------------------------------------------------------------- */

int php_interp__current(const struct php_interp *p, uint64_t *cur, uint64_t *prev)
{
	*prev = 0;
	if (rd(p, p->eg + p->l.eg_current_execute_data, cur, 8) < 0)
		return -1;
	return !*cur || rd(p, *cur + p->l.ed_prev, prev, 8) == 0 ? 0 : -1;
}

size_t php_interp__frames(const struct php_interp *p, struct php_frame_raw *out, size_t max,
			  uint64_t *cur, uint64_t *prev)
{
	*cur = *prev = 0;
	uint64_t ed;
	if (!max || rd(p, p->eg + p->l.eg_current_execute_data, &ed, 8) < 0 || !ed)
		return 0;
	*cur = ed;
	if (max > PHP_MAX_FRAMES)
		max = PHP_MAX_FRAMES;
	unsigned char b[128];
	size_t n = 0;
	uint64_t first = ed;
	while (ed && n < max) {
		if (p->l.ed_size > sizeof(b) || rd(p, ed, b, p->l.ed_size) < 0)
			break;
		uint64_t func = word(b, p->l.ed_func), next = word(b, p->l.ed_prev);
		uint32_t info;
		memcpy(&info, b + p->l.ed_call_info, 4);
		if (n == 0)
			*prev = next;
		uint8_t type = 0;
		if (func && rd(p, func + p->l.fn_type, &type, 1) < 0)
			func = 0;
		bool user = func && type == p->l.user_function;
		out[n].func = func;
		out[n].opline = user ? word(b, p->l.ed_opline) : 0;
		out[n].user = user;
		/* a user function's call made from C starts an execute_ex;
		 * internal functions' calls run in their caller's */
		out[n].ends = user && (info & p->l.call_top) ? PHP_ENDS_TOP : 0;
		n++;
		/* the stack grows up from the VM stack's pages and across them:
		 * a link back to a call already read (a cycle in a corrupt
		 * chain) ends it, as does MAX */
		if (next == ed || next == first) {
			out[n - 1].ends = PHP_ENDS_CUT;
			return n;
		}
		ed = next;
	}
	if (n)
		out[n - 1].ends = ed ? PHP_ENDS_CUT : PHP_ENDS_WHOLE;
	return n;
}

/* ---- names ------------------------------------------------------------------------ */

/* The zend_string at ADDR, cleaned and cut to PHP_MAX_STR (malloc'd), or
 * NULL. */
static char *read_zstr(const struct php_interp *p, uint64_t addr)
{
	uint64_t len;
	if (rd(p, addr + p->l.str_len, &len, 8) < 0)
		return NULL;
	size_t n = len < PHP_MAX_STR ? (size_t)len : PHP_MAX_STR;
	char raw[PHP_MAX_STR], out[PHP_MAX_STR + 1];
	if (n && rd(p, addr + p->l.str_val, raw, n) < 0)
		return NULL;
	text__clean(out, sizeof(out), raw, n);
	return xstrdup(out);
}

/* Function F's slot, named (again if its name's pointers changed). */
static struct php_fn *fn_of(struct php_interp *p, uint64_t func, uint64_t epoch, bool check)
{
	size_t h = (size_t)((func >> 3) * 0x9e3779b97f4a7c15ull >> 52) & (FN_CACHE - 1);
	struct php_fn *e = &p->fns[h];
	if (e->addr == func && (!check || e->epoch == epoch))
		return e;
	unsigned char b[256];
	if (p->l.fn_size > sizeof(b) || rd(p, func, b, p->l.fn_size) < 0) {
		if (e->addr != func) {
			free_fn(e);
			e->addr = func;
			e->serial = ++p->serials;
		}
		e->epoch = epoch;
		e->bad = true;
		p->bad++;
		return e;
	}
	uint8_t type = b[p->l.fn_type];
	bool user = type == p->l.user_function;
	uint64_t name = word(b, p->l.fn_name), scope = word(b, p->l.fn_scope);
	uint64_t file = user ? word(b, p->l.fn_filename) : 0;
	e->epoch = epoch;
	if (e->addr == func && !e->bad && e->name == name && e->scope == scope && e->file == file &&
	    e->type == type)
		return e;
	free_fn(e);
	e->addr = func;
	e->epoch = epoch;
	e->serial = ++p->serials;
	e->name = name;
	e->scope = scope;
	e->file = file;
	e->type = type;
	uint32_t ls;
	memcpy(&ls, b + p->l.fn_line_start, 4);
	e->line_start = user && ls < (1u << 30) ? (int)ls : 0;
	char *fname = name ? read_zstr(p, name) : NULL;
	char *cname = NULL;
	uint64_t cn;
	if (scope && rd(p, scope + p->l.ce_name, &cn, 8) == 0 && cn)
		cname = read_zstr(p, cn);
	if (name && !fname) {
		e->bad = true;
		p->bad++;
		free(cname);
		return e;
	}
	char buf[2 * PHP_MAX_STR + 8];
	if (!fname)
		snprintf(buf, sizeof(buf), "<main>");   /* a file's own code */
	else if (cname)
		snprintf(buf, sizeof(buf), "%s::%s", cname, fname);
	else
		snprintf(buf, sizeof(buf), "%s", fname);
	e->func = xstrdup(buf);
	free(fname);
	free(cname);
	if (file)
		e->path = read_zstr(p, file);
	p->named++;
	return e;
}

uint32_t php_interp__func(struct php_interp *p, uint64_t func, uint64_t epoch)
{
	return func ? fn_of(p, func, epoch, true)->serial : 0;
}

int php_interp__name(struct php_interp *p, const struct php_frame_raw *f, bool lines,
		     struct php_named *out)
{
	out->func = "[unknown php frame]";
	out->file = NULL;
	out->line = 0;
	if (!f->func)
		return -1;
	struct php_fn *e = fn_of(p, f->func, 0, false);
	if (e->bad || !e->func)
		return -1;
	out->func = e->func;
	out->file = e->path;
	if (lines && f->user) {
		uint32_t ln;
		if (f->opline && rd(p, f->opline + p->l.op_lineno, &ln, 4) == 0 && ln < (1u << 30))
			out->line = (int)ln;
		else
			out->line = e->line_start;
	}
	return 0;
}

void php_interp__counts(const struct php_interp *p, uint64_t *funcs, uint64_t *bad)
{
	*funcs = p->named;
	*bad = p->bad;
}

/* A C string of the target at ADDR into OUT (at most LEN - 1 bytes, cut at
 * the first NUL, cleaned by text__clean()): its length, or -1. */
static int read_cstr(const struct php_interp *p, uint64_t addr, char *out, size_t len)
{
	if (!addr || len < 2)
		return -1;
	/* in two reads at most: to the end of ADDR's page, then the rest */
	size_t want = len - 1, first = 4096 - (addr & 4095);
	if (first > want)
		first = want;
	if (rd(p, addr, out, first) < 0)
		return -1;
	size_t n = strnlen(out, first);
	if (n == first && first < want && rd(p, addr + first, out + first, want - first) == 0)
		n = first + strnlen(out + first, want - first);
	return (int)text__clean(out, len, out, n);
}

int php_interp__request(const struct php_interp *p, char *out, size_t len)
{
	const struct php_layout *l = &p->l;
	out[0] = 0;
	/* The three pointers of SG(request_info) in one read (it is read at
	 * every capture of a PHP thread, the target stopped by ptrace). */
	uint32_t lo = l->sg_request_method, hi = l->sg_request_method;
	lo = l->sg_path_translated < lo ? l->sg_path_translated : lo;
	lo = l->sg_request_uri < lo ? l->sg_request_uri : lo;
	hi = l->sg_path_translated > hi ? l->sg_path_translated : hi;
	hi = l->sg_request_uri > hi ? l->sg_request_uri : hi;
	unsigned char b[128];
	if (!p->sg || len < 2 || hi + 8 - lo > sizeof(b) || rd(p, p->sg + lo, b, hi + 8 - lo) < 0)
		return -1;
	uint64_t uri = word(b, l->sg_request_uri - lo), script = word(b, l->sg_path_translated - lo);
	uint64_t method = word(b, l->sg_request_method - lo);
	if (uri) {
		char m[16] = "";
		if (method && read_cstr(p, method, m, sizeof(m)) > 0 && strlen(m) + 2 < len) {
			memcpy(out, m, strlen(m));
			out[strlen(m)] = ' ';
			out[strlen(m) + 1] = 0;
		}
		size_t at = strlen(out);
		if (read_cstr(p, uri, out + at, len - at) < 0)
			return -1;
		char *q = strchr(out + at, '?');        /* a query can hold secrets */
		if (q)
			*q = 0;
		return 0;
	}
	return script && read_cstr(p, script, out, len) > 0 ? 0 : -1;
}
