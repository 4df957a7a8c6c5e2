/* logrotate.c — rotate the logs of running containers above a size (see logrotate.h). */
#include <sys/inotify.h>
#include <sys/stat.h>

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "cri/cri.h"
#include "core/log.h"
#include "core/strindex.h"
#include "node/logrotate.h"
#include "node/podcache.h"
#include "pod/pod.h"
#include "pod/runtime.h"
#include "core/util.h"

#define LR_TMP_SUFFIX ".tmp"

/* A rotation waiting for ReopenContainerLog. */
struct lr_op {
	struct logrotate *lr;
	char             *id;
	char             *log;
	char             *rotated;
	struct lr_op     *next;
};

/* A running container's log path, built once: a pass then costs a lookup and a stat per
 * container (the path's three allocations and checks were most of an idle pass). */
struct lr_path {
	char    *p_id;   /* container ID */
	char    *p_path; /* NULL: its names give no valid path */
	uint64_t p_pass; /* the last pass that looked at it */
	int      p_wd;   /* its one-shot watch, armed before its last stat found it under the
	                  * size; -1: none (stat it in the next pass) */
};

struct logrotate {
	struct cri            *cri;
	struct lr_path        *paths;
	size_t                 npaths;
	size_t                 cappaths;
	struct strindex       *index;   /* paths by container ID */
	int                    logs_fd; /* logs_dir, for stats relative to it; -1: not open */
	int                    ino_fd;  /* inotify, read only by a pass; -1: none (stat all) */
	int                   *fired;   /* the pass' watches that fired, sorted */
	size_t                 nfired;
	size_t                 capfired;
	int                    all; /* the queue overflowed or could not be read: stat all */
	struct podcache       *cache;
	char                  *logs_dir;
	int64_t                max_size;
	int                    max_files;
	int64_t                timeout_ms;
	struct lr_op          *ops;
	struct logrotate_stats stats;
};

char *
logrotate_path(const char *logs_dir, const char *ns, const char *name, const char *uid,
    const char *container, int restart_count)
{
	char *pod = xsprintf("%s_%s_%s", ns != NULL ? ns : "default", name != NULL ? name : "",
	         uid != NULL ? uid : ""),
	     *file = xsprintf("%d.log", restart_count), *path;

	/* The names come from the runtime: none of them may lead out of logs_dir. */
	path = path_join(logs_dir, 3, pod, container, file);
	free(pod);
	free(file);
	return path;
}

int
logrotate_container_log(const char *logs_dir, const struct pod *pod, const struct rt_pod_status *st,
    const char *ctr, int previous, char **path, const struct rt_container **ct, char *err,
    size_t errlen)
{
	const struct rt_container *inst[2] = { NULL, NULL };
	size_t                     i;

	*path = NULL;
	*ct = NULL;
	if (pod_find_container(pod, ctr) == NULL) {
		snprintf(err, errlen, "container %s is not valid for pod %s", ctr, pod->name);
		return -1;
	}
	for (i = 0; st != NULL && i < st->ncontainers; i++) { /* newest first */
		if (!streq_null(st->containers[i].name, ctr))
			continue;
		if (inst[0] == NULL)
			inst[0] = &st->containers[i];
		else if (inst[1] == NULL)
			inst[1] = &st->containers[i];
	}
	if (previous && inst[1] == NULL) {
		snprintf(err, errlen,
		    "previous terminated container \"%s\" in pod \"%s\" not found", ctr, pod->name);
		return -1;
	}
	if (!previous && inst[0] == NULL) {
		snprintf(err, errlen,
		    "container \"%s\" in pod \"%s\" is waiting to start: ContainerCreating", ctr,
		    pod->name);
		return -1;
	}
	*ct = inst[previous ? 1 : 0];
	*path = logrotate_path(logs_dir, pod->ns, pod->name, pod->uid, ctr, (*ct)->restart_count);
	if (*path == NULL) {
		snprintf(err, errlen, "container %s of pod %s: no valid log path", ctr, pod->name);
		return -1;
	}
	return 0;
}

char *
logrotate_rotated_name(const char *log, int64_t t)
{
	time_t    tt = (time_t)t;
	struct tm tm;
	char      ts[32];

	gmtime_r(&tt, &tm);
	strftime(ts, sizeof(ts), "%Y%m%d-%H%M%S", &tm);
	return xsprintf("%s.%s", log, ts);
}

size_t
logrotate_excess(size_t nrotated, int max_files)
{
	/* The live file and the one about to be rotated take two of max_files. */
	size_t keep = max_files > 2 ? (size_t)(max_files - 2) : 0;

	return nrotated > keep ? nrotated - keep : 0;
}

static int
lr_cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Deletes leftover temporary files and the oldest rotated files of log. */
static void
lr_prune(struct logrotate *lr, const char *log)
{
	const char    *slash = strrchr(log, '/');
	char          *dir, **names = NULL, *full;
	size_t         nnames = 0, base_len, i, excess;
	struct dirent *de;
	DIR           *d;

	if (slash == NULL)
		return;
	dir = xstrndup(log, (size_t)(slash - log));
	base_len = strlen(slash + 1);
	if ((d = opendir(dir)) == NULL) {
		free(dir);
		return;
	}
	while ((de = readdir(d)) != NULL) {
		size_t n = strlen(de->d_name);

		if (n <= base_len + 1 || strncmp(de->d_name, slash + 1, base_len) != 0 ||
		    de->d_name[base_len] != '.')
			continue;
		full = xsprintf("%s/%s", dir, de->d_name);
		if (n > strlen(LR_TMP_SUFFIX) &&
		    strcmp(de->d_name + n - strlen(LR_TMP_SUFFIX), LR_TMP_SUFFIX) == 0) {
			if (unlink(full) == 0)
				lr->stats.removed++;
			free(full);
			continue;
		}
		names = xreallocarray(names, nnames + 1, sizeof(*names));
		names[nnames++] = full;
	}
	closedir(d);
	if (nnames > 1)
		qsort(names, nnames, sizeof(*names), lr_cmp_str);
	excess = logrotate_excess(nnames, lr->max_files);
	for (i = 0; i < nnames; i++) {
		if (i < excess) {
			if (unlink(names[i]) == 0) {
				lr->stats.removed++;
				log_v(3, "logrotate: removed %s", names[i]);
			} else if (errno != ENOENT) {
				log_warnx("logrotate: remove %s: %s", names[i], strerror(errno));
			}
		}
		free(names[i]);
	}
	free(names);
	free(dir);
}

static void
lr_op_free(struct lr_op *op)
{
	free(op->id);
	free(op->log);
	free(op->rotated);
	free(op);
}

static void
lr_op_unlink(struct logrotate *lr, struct lr_op *op)
{
	struct lr_op **pp;

	for (pp = &lr->ops; *pp != NULL; pp = &(*pp)->next) {
		if (*pp == op) {
			*pp = op->next;
			return;
		}
	}
}

static int
lr_busy(const struct logrotate *lr, const char *id)
{
	const struct lr_op *op;

	for (op = lr->ops; op != NULL; op = op->next)
		if (strcmp(op->id, id) == 0)
			return 1;
	return 0;
}

static void
lr_reopen_cb(
    int code, const char *message, const Runtime__V1__ReopenContainerLogResponse *r, void *arg)
{
	struct lr_op     *op = arg;
	struct logrotate *lr = op->lr;

	(void)r;
	lr_op_unlink(lr, op);
	if (code == GRPC_OK) {
		lr->stats.rotations++;
		log_v(2, "logrotate: rotated %s to %s", op->log, op->rotated);
	} else {
		/* The runtime still writes to the renamed file: put it back for the next pass. */
		lr->stats.failures++;
		log_warnx("logrotate: ReopenContainerLog %s: %s; %s kept", op->id,
		    message != NULL ? message : "failed", op->log);
		if (rename(op->rotated, op->log) == -1)
			log_warnx("logrotate: rename %s back to %s: %s", op->rotated, op->log,
			    strerror(errno));
	}
	lr_op_free(op);
}

/* The watch: a write, a truncation, a rename or an unlink of the file (or its end) fires it
 * once; the kernel then drops it. */
#define LR_WATCH_MASK                                                                              \
	(IN_MODIFY | IN_ATTRIB | IN_MOVE_SELF | IN_DELETE_SELF | IN_UNMOUNT | IN_ONESHOT)

static void
lr_disarm(struct logrotate *lr, struct lr_path *e)
{
	if (e->p_wd >= 0)
		(void)inotify_rm_watch(lr->ino_fd, e->p_wd); /* still armed (lr_changed) */
	e->p_wd = -1;
}

/* Arms e's watch before its stat: a write after the stat fires it, a write before it is in
 * the size the stat reads. Without a watch (no inotify, the limit of watches reached, the
 * file not there) the next pass stats it again. */
static void
lr_arm(struct logrotate *lr, struct lr_path *e)
{
	lr_disarm(lr, e);
	if (lr->ino_fd >= 0 && e->p_path != NULL)
		e->p_wd = inotify_add_watch(lr->ino_fd, e->p_path, LR_WATCH_MASK);
	if (e->p_wd < 0) {
		e->p_wd = -1;
		if (lr->ino_fd >= 0)
			lr->stats.unwatched++;
	}
}

static int
lr_cmp_int(const void *a, const void *b)
{
	int x = *(const int *)a, y = *(const int *)b;

	return x < y ? -1 : x > y;
}

/* What fired since the last pass: the queue is read here only, so a write to a log never
 * wakes kletd. */
static void
lr_drain(struct logrotate *lr)
{
	char    buf[4096] __attribute__((aligned(__alignof__(struct inotify_event))));
	ssize_t n;

	lr->nfired = 0;
	lr->all = 0;
	if (lr->ino_fd < 0) {
		lr->all = 1;
		return;
	}
	for (;;) {
		char *p = buf;

		if ((n = read(lr->ino_fd, buf, sizeof(buf))) <= 0) {
			if (n == -1 && errno == EINTR)
				continue;
			if (n == 0 || errno != EAGAIN)
				lr->all = 1; /* what fired is not known: look at every file */
			break;
		}
		while (p + sizeof(struct inotify_event) <= buf + n) {
			const struct inotify_event *ev = (const struct inotify_event *)(void *)p;

			if (ev->mask & IN_Q_OVERFLOW)
				lr->all = 1;
			else if (ev->wd >= 0) {
				if (lr->nfired == lr->capfired) {
					lr->capfired = lr->capfired > 0 ? 2 * lr->capfired : 64;
					lr->fired = xreallocarray(
					    lr->fired, lr->capfired, sizeof(*lr->fired));
				}
				lr->fired[lr->nfired++] = ev->wd;
			}
			p += sizeof(struct inotify_event) + ev->len;
		}
	}
	if (lr->nfired > 1)
		qsort(lr->fired, lr->nfired, sizeof(*lr->fired), lr_cmp_int);
}

/* Whether e may have changed since its last stat. A watch that fired is gone (one-shot):
 * it is forgotten here rather than removed again. */
static int
lr_changed(struct logrotate *lr, struct lr_path *e)
{
	if (e->p_wd >= 0 && lr->nfired > 0 &&
	    bsearch(&e->p_wd, lr->fired, lr->nfired, sizeof(*lr->fired), lr_cmp_int) != NULL) {
		e->p_wd = -1;
		return 1;
	}
	return lr->all || e->p_wd < 0;
}

static const char *
lr_path_key(const void *arg, size_t i)
{
	const struct logrotate *lr = arg;

	return lr->paths[i].p_id;
}

/* The log path entry of running container c (owned by lr, valid until the pass ends). */
static struct lr_path *
lr_log_path(struct logrotate *lr, const struct rt_pod_status *st, const struct rt_container *c)
{
	size_t          i = strindex_find(lr->index, c->id, lr_path_key, lr);
	struct lr_path *e;

	if (i == STRINDEX_NONE) {
		if (lr->npaths == lr->cappaths) {
			lr->cappaths = lr->cappaths == 0 ? 64 : 2 * lr->cappaths;
			lr->paths = xreallocarray(lr->paths, lr->cappaths, sizeof(*lr->paths));
		}
		i = lr->npaths++;
		e = &lr->paths[i];
		e->p_id = xstrdup(c->id);
		e->p_path = logrotate_path(
		    lr->logs_dir, st->ns, st->name, st->uid, c->name, c->restart_count);
		e->p_wd = -1;
		strindex_add(lr->index, e->p_id, i);
	}
	e = &lr->paths[i];
	e->p_pass = lr->stats.passes;
	return e;
}

/* Forgets the paths of containers the last pass did not see (gone or not running). */
static void
lr_paths_sweep(struct logrotate *lr)
{
	size_t i = 0;

	while (i < lr->npaths) {
		struct lr_path *e = &lr->paths[i];

		if (e->p_pass == lr->stats.passes) {
			i++;
			continue;
		}
		strindex_remove(lr->index, e->p_id, i);
		lr_disarm(lr, e);
		free(e->p_id);
		free(e->p_path);
		if (i != --lr->npaths) { /* the last one takes its place */
			*e = lr->paths[lr->npaths];
			strindex_move(lr->index, e->p_id, lr->npaths, i);
		}
	}
}

/* stat(path) for a path under logs_dir, looked up from logs_dir's descriptor (the logs
 * directory's own components are not walked again for every container). */
static int
lr_stat(struct logrotate *lr, const char *path, struct stat *sb)
{
	size_t n = strlen(lr->logs_dir);

	if (strncmp(path, lr->logs_dir, n) != 0 || path[n] != '/')
		return stat(path, sb);
	return held_dir_stat(&lr->logs_fd, lr->logs_dir, path + n + 1, sb, 1);
}

static void
lr_container(struct logrotate *lr, const struct rt_pod_status *st, const struct rt_container *c)
{
	Runtime__V1__ReopenContainerLogRequest req =
	    RUNTIME__V1__REOPEN_CONTAINER_LOG_REQUEST__INIT;
	struct lr_op   *op;
	struct stat     sb;
	struct lr_path *e;
	char           *log;

	if (c->state != RT_RUNNING || c->id == NULL || c->name == NULL || lr_busy(lr, c->id))
		return;
	e = lr_log_path(lr, st, c);
	if (e->p_path == NULL)
		return;
	/* Under the size at its last stat and not written since: under it still. */
	if (!lr_changed(lr, e)) {
		lr->stats.unchanged++;
		return;
	}
	lr_arm(lr, e);
	lr->stats.checked++;
	if (lr_stat(lr, e->p_path, &sb) == -1) {
		lr_disarm(lr, e); /* not known to be under the size: the next pass looks again */
		return;
	}
	if (sb.st_size < lr->max_size)
		return;
	lr_disarm(lr, e); /* rotated or not, the live file is looked at again next pass */
	log = xstrdup(e->p_path);
	lr_prune(lr, log);
	op = xcalloc(1, sizeof(*op));
	op->lr = lr;
	op->id = xstrdup(c->id);
	op->log = log;
	op->rotated = logrotate_rotated_name(log, now_wall_ns() / 1000000000);
	if (access(op->rotated, F_OK) == 0) {
		lr_op_free(op); /* rotated already this second: the next pass */
		return;
	}
	if (rename(op->log, op->rotated) == -1) {
		if (errno != ENOENT) {
			lr->stats.failures++;
			log_warnx("logrotate: rename %s: %s", op->log, strerror(errno));
		}
		lr_op_free(op);
		return;
	}
	op->next = lr->ops;
	lr->ops = op;
	req.container_id = op->id;
	cri_reopen_container_log(lr->cri, &req, lr->timeout_ms, lr_reopen_cb, op, lr);
}

struct lr_pass {
	struct logrotate *lr;
	int               started;
};

static void
lr_pod(const struct rt_pod_status *st, void *arg)
{
	struct lr_pass *p = arg;
	size_t          i;

	for (i = 0; i < st->ncontainers; i++) {
		struct lr_op *head = p->lr->ops;

		lr_container(p->lr, st, &st->containers[i]);
		if (p->lr->ops != head)
			p->started++;
	}
}

int
logrotate_run(struct logrotate *lr)
{
	struct lr_pass p = { .lr = lr };

	if (lr->max_size < 0)
		return 0;
	lr->stats.passes++;
	lr_drain(lr);
	podcache_foreach(lr->cache, lr_pod, &p);
	lr_paths_sweep(lr);
	return p.started;
}

struct logrotate *
logrotate_new(struct cri *cri, struct podcache *cache, const struct logrotate_options *o)
{
	struct logrotate *lr = xcalloc(1, sizeof(*lr));

	lr->cri = cri;
	lr->cache = cache;
	lr->logs_dir = xstrdup(o->logs_dir);
	lr->max_size = o->max_size;
	lr->max_files = o->max_files >= 2 ? o->max_files : 2;
	lr->timeout_ms = o->timeout_ms > 0 ? o->timeout_ms : 10000;
	lr->index = strindex_new();
	lr->logs_fd = -1;
	lr->ino_fd = o->no_watch ? -1 : inotify_init1(IN_NONBLOCK | IN_CLOEXEC);
	if (lr->ino_fd == -1 && !o->no_watch)
		log_warn("logrotate: inotify; every log is looked at in every pass");
	return lr;
}

void
logrotate_free(struct logrotate *lr)
{
	struct lr_op *op;

	if (lr == NULL)
		return;
	if (lr->ops != NULL)
		cri_cancel_owner(lr->cri, lr);
	while ((op = lr->ops) != NULL) {
		lr->ops = op->next;
		lr_op_free(op);
	}
	while (lr->npaths > 0) {
		lr->npaths--; /* its watch goes with ino_fd */
		free(lr->paths[lr->npaths].p_id);
		free(lr->paths[lr->npaths].p_path);
	}
	free(lr->paths);
	strindex_free(lr->index);
	if (lr->logs_fd != -1)
		close(lr->logs_fd);
	if (lr->ino_fd != -1)
		close(lr->ino_fd);
	free(lr->fired);
	free(lr->logs_dir);
	free(lr);
}

void
logrotate_stats(const struct logrotate *lr, struct logrotate_stats *out)
{
	*out = lr->stats;
}
