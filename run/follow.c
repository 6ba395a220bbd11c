/* follow: the next process of a followed service (see run/follow.h). */
#include "run/follow.h"

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "run/cgroup.h"
#include "run/options.h"
#include "run/pidfile.h"
#include "util/xalloc.h"

enum follow_kind { FOLLOW_PIDFILE, FOLLOW_CGROUP, FOLLOW_UNIT };

struct follow {
	enum follow_kind kind;
	const char *arg;                /* the option's argument, as given */
	char unit[256];                 /* --unit: NAME.service */
	char path[4096];                /* --cgroup, --unit: the cgroup (the unit's last seen) */
	char what[4400];
	char waiting[4600];
	struct timespec last;           /* --pid-file: its time when last read */
};

int follow__check(const struct options *o, pid_t *pid, char *err, size_t errlen)
{
	*pid = 0;
	if (o->pid_file) {
		int e = pidfile__read(o->pid_file, pid, err, errlen);
		if (e == -ENOENT)
			*pid = 0;       /* not written yet: the run waits for it */
		return e < 0 && e != -ENOENT ? -EINVAL : 0;
	}
	char path[4096], unit[256], why[512];
	if (o->cgroup) {
		if (cgroup__check(o->cgroup, err, errlen) < 0)
			return -EINVAL;
		snprintf(path, sizeof(path), "%s", o->cgroup);
	} else if (o->unit) {
		if (cgroup__unit_name(o->unit, unit, sizeof(unit), err, errlen) < 0)
			return -EINVAL;
		int e = cgroup__unit_path(unit, path, sizeof(path), err, errlen);
		if (e == -EAGAIN)
			return 0;       /* known, not running: the run waits for it */
		if (e < 0)
			return -EINVAL;
	} else {
		return 0;
	}
	if (cgroup__main_pid(path, pid, why, sizeof(why)) < 0)
		*pid = 0;               /* empty now: the run waits for a process */
	return 0;
}

struct follow *follow__new(const struct options *o)
{
	if (!o->pid_file && !o->cgroup && !o->unit)
		return NULL;
	struct follow *f = xcalloc(1, sizeof(*f));
	char err[512];
	if (o->pid_file) {
		f->kind = FOLLOW_PIDFILE;
		f->arg = o->pid_file;
		snprintf(f->what, sizeof(f->what), "%s", o->pid_file);
		snprintf(f->waiting, sizeof(f->waiting), "waiting for %s to be written (the "
			 "service to start)", o->pid_file);
	} else if (o->cgroup) {
		f->kind = FOLLOW_CGROUP;
		f->arg = o->cgroup;
		snprintf(f->path, sizeof(f->path), "%s", o->cgroup);
		snprintf(f->what, sizeof(f->what), "cgroup %s", o->cgroup);
		snprintf(f->waiting, sizeof(f->waiting), "waiting for a process in cgroup %s",
			 o->cgroup);
	} else {
		f->kind = FOLLOW_UNIT;
		f->arg = o->unit;
		if (cgroup__unit_name(o->unit, f->unit, sizeof(f->unit), err, sizeof(err)) < 0)
			snprintf(f->unit, sizeof(f->unit), "%s", o->unit);
		snprintf(f->what, sizeof(f->what), "unit %s", f->unit);
		snprintf(f->waiting, sizeof(f->waiting), "waiting for unit %s to start (a process "
			 "in its cgroup)", f->unit);
	}
	return f;
}

void follow__free(struct follow *f)
{
	free(f);
}

/* OLD is still running (a PID named again for a process that is not gone). */
static int still_runs(pid_t old)
{
	return old > 0 && kill(old, 0) == 0;
}

int follow__next(struct follow *f, pid_t old, pid_t *pid)
{
	char err[512];
	pid_t p = 0;
	if (f->kind == FOLLOW_PIDFILE) {
		/* one stat; a read only when the file changed or OLD is gone */
		struct stat st;
		if (stat(f->arg, &st) < 0)
			return -EAGAIN;
		if (old > 0 && st.st_mtim.tv_sec == f->last.tv_sec &&
		    st.st_mtim.tv_nsec == f->last.tv_nsec && still_runs(old))
			return -EAGAIN;
		f->last = st.st_mtim;
		if (pidfile__read(f->arg, &p, err, sizeof(err)) < 0)
			return -EAGAIN;
	} else {
		if (f->kind == FOLLOW_UNIT &&
		    cgroup__unit_path(f->unit, f->path, sizeof(f->path), err, sizeof(err)) < 0)
			return -EAGAIN;         /* stopped: systemd removed its cgroup */
		if (cgroup__main_pid(f->path, &p, err, sizeof(err)) < 0)
			return -EAGAIN;
	}
	if (p == old && !still_runs(old))
		return -EAGAIN;
	*pid = p;
	return 0;
}

const char *follow__what(const struct follow *f)
{
	return f->what;
}

const char *follow__waiting(const struct follow *f)
{
	return f->waiting;
}
