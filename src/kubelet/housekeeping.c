/* housekeeping.c — orphans, dead containers and sandboxes, pod directories and cgroups. */
#include <sys/stat.h>

#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cri/cri.h"
#include "node/cgroups.h"
#include "kubelet/housekeeping.h"
#include "kuberuntime/kuberuntime.h"
#include "core/log.h"
#include "core/loop.h"
#include "logic/containergc.h"
#include "node/podcache.h"
#include "node/podconfig.h"
#include "node/podworkers.h"
#include "store/store.h"
#include "core/util.h"
#include "volumes/volumes.h"

/* A removal or kill in flight, keyed by container / sandbox id or pod UID. */
struct hk_op {
	struct housekeeping *o_h;
	char                *o_key;
	struct kr_kill      *o_kill;
	struct hk_op        *o_next;
};

/* A pod UID this kletd has managed (source, worker or runtime): only those get their pod
 * cgroups removed, so that another agent's pods on the same host are left alone. */
struct hk_known {
	char *k_uid;
	int   k_gone_passes;
};

#define HK_FORGET_AFTER 30 /* passes (about a minute) after the pod is completely gone */

/* What a pass reads, by version: a pass that found nothing to do finds nothing again while
 * none of these changed (see housekeeping_run). */
struct hk_inputs {
	uint64_t i_cache;   /* podcache_generation */
	uint64_t i_workers; /* podworkers_version */
	uint64_t i_pods;    /* podconfig_version */
	int      i_cri_ready;
	int      i_store_ok;
};

/* A dead container of this pass, borrowed from the pod cache (no loop turn before the pass
 * ends, so the cache entry stays). */
struct hk_dead {
	const struct rt_pod_status *d_st;
	const struct rt_container  *d_c;
};

struct housekeeping {
	struct hk_deps    h_d;
	struct hk_known  *h_known;
	size_t            h_nknown;
	char             *h_root;
	char             *h_logs;
	char             *h_cgmnt;
	char             *h_cgroot;
	struct hk_op     *h_ops;
	struct hk_stats   h_stats;
	int               h_all; /* this pass reclaims: no dead instance kept for done pods */
	struct cgc_policy h_gc;
	/* this pass' dead containers: the container GC's input (h_gcin) and where each is */
	struct cgc_container *h_gcin;
	struct hk_dead       *h_dead;
	size_t                h_ndead, h_dead_cap;
	int                   h_store_ok; /* this pass: the store commits (not degraded) */
	unsigned              h_found;    /* this pass: things found to do (or to wait for) */
	int                   h_quiet;    /* the last full pass found nothing, inputs h_last */
	struct hk_inputs      h_last;
	void (*h_reclaim_done)(void *arg);
	void *h_reclaim_arg;
};

struct housekeeping *
housekeeping_new(const struct hk_deps *d)
{
	struct housekeeping *h = xcalloc(1, sizeof(*h));

	h->h_d = *d;
	h->h_root = xstrdup(d->root_dir);
	h->h_logs = d->logs_dir != NULL && *d->logs_dir != '\0' ? xstrdup(d->logs_dir) : NULL;
	h->h_d.logs_dir = h->h_logs;
	h->h_cgmnt = xstrdup(d->cgroup_mnt != NULL ? d->cgroup_mnt : "/sys/fs/cgroup");
	h->h_cgroot = xstrdup(d->cgroup_root != NULL ? d->cgroup_root : "/kubepods");
	h->h_d.root_dir = h->h_root;
	h->h_d.cgroup_mnt = h->h_cgmnt;
	h->h_d.cgroup_root = h->h_cgroot;
	h->h_gc = d->gc_policy != NULL ? *d->gc_policy : CGC_POLICY_DEFAULT;
	h->h_d.gc_policy = NULL;
	return h;
}

static void
hk_op_free(struct hk_op *o)
{
	free(o->o_key);
	free(o);
}

void
housekeeping_free(struct housekeeping *h)
{
	struct hk_op *o;

	if (h == NULL)
		return;
	if (h->h_d.cri != NULL)
		cri_cancel_owner(h->h_d.cri, h);
	while ((o = h->h_ops) != NULL) {
		h->h_ops = o->o_next;
		if (o->o_kill != NULL)
			kuberuntime_kill_cancel(o->o_kill);
		hk_op_free(o);
	}
	for (size_t i = 0; i < h->h_nknown; i++)
		free(h->h_known[i].k_uid);
	free(h->h_known);
	free(h->h_gcin);
	free(h->h_dead);
	free(h->h_root);
	free(h->h_logs);
	free(h->h_cgmnt);
	free(h->h_cgroot);
	free(h);
}

void
housekeeping_stats(const struct housekeeping *h, struct hk_stats *st)
{
	*st = h->h_stats;
}

/* h_known is kept sorted by UID: looked up for every pod cgroup directory of every pass. */
static size_t
hk_known_pos(const struct housekeeping *h, const char *uid, int *found)
{
	size_t lo = 0, hi = h->h_nknown;

	*found = 0;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		int    c = strcmp(h->h_known[mid].k_uid, uid);

		if (c == 0) {
			*found = 1;
			return mid;
		}
		if (c < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

static struct hk_known *
hk_known_find(const struct housekeeping *h, const char *uid)
{
	int    found;
	size_t i = hk_known_pos(h, uid, &found);

	return found ? &h->h_known[i] : NULL;
}

static void
hk_know(struct housekeeping *h, const char *uid)
{
	int    found;
	size_t i = hk_known_pos(h, uid, &found);

	if (found) {
		h->h_known[i].k_gone_passes = 0;
		return;
	}
	h->h_known = xreallocarray(h->h_known, h->h_nknown + 1, sizeof(*h->h_known));
	memmove(&h->h_known[i + 1], &h->h_known[i], (h->h_nknown - i) * sizeof(*h->h_known));
	h->h_known[i].k_uid = xstrdup(uid);
	h->h_known[i].k_gone_passes = 0;
	h->h_nknown++;
}

static int
hk_busy(const struct housekeeping *h, const char *key)
{
	const struct hk_op *o;

	for (o = h->h_ops; o != NULL; o = o->o_next)
		if (strcmp(o->o_key, key) == 0)
			return 1;
	return 0;
}

static struct hk_op *
hk_op_new(struct housekeeping *h, const char *key)
{
	struct hk_op *o = xcalloc(1, sizeof(*o));

	o->o_h = h;
	o->o_key = xstrdup(key);
	o->o_next = h->h_ops;
	h->h_ops = o;
	return o;
}

static void
hk_op_done(struct hk_op *o)
{
	struct housekeeping *h = o->o_h;
	struct hk_op       **pp;

	for (pp = &h->h_ops; *pp != NULL; pp = &(*pp)->o_next) {
		if (*pp == o) {
			*pp = o->o_next;
			break;
		}
	}
	hk_op_free(o);
	if (h->h_ops == NULL && h->h_reclaim_done != NULL) {
		void (*done)(void *) = h->h_reclaim_done;

		h->h_reclaim_done = NULL;
		done(h->h_reclaim_arg); /* from a CRI callback: the caller's call returned long ago
		                         */
	}
}

static void
hk_rm_container_cb(
    int code, const char *msg, const Runtime__V1__RemoveContainerResponse *r, void *arg)
{
	struct hk_op *o = arg;

	(void)r;
	if (code != GRPC_OK && code != GRPC_NOT_FOUND)
		log_warnx("housekeeping: RemoveContainer %s: %s", o->o_key, msg);
	else {
		log_v(3, "housekeeping: dead container %s removed", o->o_key);
		o->o_h->h_stats.containers_removed++;
	}
	hk_op_done(o);
}

static void
hk_rm_sandbox_cb(
    int code, const char *msg, const Runtime__V1__RemovePodSandboxResponse *r, void *arg)
{
	struct hk_op *o = arg;

	(void)r;
	if (code != GRPC_OK && code != GRPC_NOT_FOUND)
		log_warnx("housekeeping: RemovePodSandbox %s: %s", o->o_key, msg);
	else
		o->o_h->h_stats.sandboxes_removed++;
	hk_op_done(o);
}

static void
hk_kill_done(int rc, void *arg)
{
	struct hk_op *o = arg;

	log_v(2, "housekeeping: orphaned pod uid=%s killed rc=%d", o->o_key, rc);
	hk_op_done(o);
}

static void
hk_remove_container(
    struct housekeeping *h, const struct rt_pod_status *st, const struct rt_container *c)
{
	Runtime__V1__RemoveContainerRequest rq = RUNTIME__V1__REMOVE_CONTAINER_REQUEST__INIT;

	h->h_found++;
	if (hk_busy(h, c->id))
		return;
	log_v(2, "housekeeping: removing dead container %s (%s) of pod %s/%s uid=%s", c->id,
	    c->name != NULL ? c->name : "?", st->ns != NULL ? st->ns : "",
	    st->name != NULL ? st->name : "", st->uid);
	rq.container_id = c->id;
	cri_remove_container(h->h_d.cri, &rq, 0, hk_rm_container_cb, hk_op_new(h, c->id), h);
}

static void
hk_remove_sandbox(
    struct housekeeping *h, const struct rt_pod_status *st, const struct rt_sandbox *s)
{
	Runtime__V1__RemovePodSandboxRequest rq = RUNTIME__V1__REMOVE_POD_SANDBOX_REQUEST__INIT;

	h->h_found++;
	if (hk_busy(h, s->id))
		return;
	log_v(2, "housekeeping: removing sandbox %s of pod %s/%s uid=%s", s->id,
	    st->ns != NULL ? st->ns : "", st->name != NULL ? st->name : "", st->uid);
	rq.pod_sandbox_id = s->id;
	cri_remove_pod_sandbox(h->h_d.cri, &rq, 0, hk_rm_sandbox_cb, hk_op_new(h, s->id), h);
}

/* What the pod's worker says: -1 no worker, else its state. */
static int
hk_worker_state(struct housekeeping *h, const char *uid)
{
	struct pw_view v;

	if (podworkers_get(h->h_d.workers, uid, &v) == -1)
		return -1;
	return (int)v.state;
}

static int
hk_sandbox_used(const struct rt_pod_status *st, const char *sbid)
{
	size_t i;

	for (i = 0; i < st->ncontainers; i++)
		if (st->containers[i].sandbox_id != NULL &&
		    strcmp(st->containers[i].sandbox_id, sbid) == 0)
			return 1;
	return 0;
}

static void
hk_dead_add(struct housekeeping *h, const struct rt_pod_status *st, const struct rt_container *c,
    int remove_all, int keep)
{
	struct cgc_container *g;

	if (h->h_ndead == h->h_dead_cap) {
		h->h_dead_cap = h->h_dead_cap > 0 ? 2 * h->h_dead_cap : 16;
		h->h_gcin = xreallocarray(h->h_gcin, h->h_dead_cap, sizeof(*h->h_gcin));
		h->h_dead = xreallocarray(h->h_dead, h->h_dead_cap, sizeof(*h->h_dead));
	}
	g = &h->h_gcin[h->h_ndead];
	g->uid = st->uid;
	g->name = c->name != NULL ? c->name : "";
	g->created_ms = c->created_at / 1000000; /* CRI: ns */
	g->remove_all = remove_all;
	g->keep = keep;
	g->remove = 0;
	h->h_dead[h->h_ndead].d_st = st;
	h->h_dead[h->h_ndead].d_c = c;
	h->h_ndead++;
}

/* The kubelet's evictContainers over every dead container of the pass: the policy of
 * --minimum-container-ttl-duration, --maximum-dead-containers-per-container and
 * --maximum-dead-containers (logic/containergc.c). */
static void
hk_containers(struct housekeeping *h)
{
	size_t i;

	int64_t now = now_wall_ms();

	if (h->h_ndead > 0 && cgc_select(&h->h_gc, h->h_gcin, h->h_ndead, now) > 0)
		for (i = 0; i < h->h_ndead; i++)
			if (h->h_gcin[i].remove)
				hk_remove_container(h, h->h_dead[i].d_st, h->h_dead[i].d_c);
	/* One kept only for its age may go in a later pass with nothing else changed. */
	for (i = 0; h->h_gc.min_age_ms > 0 && i < h->h_ndead; i++)
		if (!h->h_gcin[i].remove && now - h->h_gcin[i].created_ms < h->h_gc.min_age_ms)
			h->h_found++;
	h->h_ndead = 0;
}

static void
hk_pod(const struct rt_pod_status *st, void *arg)
{
	struct housekeeping *h = arg;
	int                  ws = hk_worker_state(h, st->uid);
	int                  wanted = podconfig_wanted(h->h_d.config, st->uid);
	int                  done = ws == -1 || ws == PW_FINISHED; /* no worker acts on it */
	int                  running = 0, remove_all, degraded = 0;
	size_t               i;

	hk_know(h, st->uid);
	for (i = 0; i < st->ncontainers; i++)
		if (st->containers[i].state == RT_RUNNING || st->containers[i].state == RT_UNKNOWN)
			running = 1;
	for (i = 0; i < st->nsandboxes; i++)
		if (st->sandboxes[i].state == RT_SB_READY)
			running = 1;
	if (!wanted && ws == -1 && running) {
		h->h_found++;
		if (h->h_d.kr != NULL && !hk_busy(h, st->uid)) {
			struct hk_op *o = hk_op_new(h, st->uid);

			log_info("housekeeping: killing orphaned pod %s/%s uid=%s (no source has "
			         "it)",
			    st->ns != NULL ? st->ns : "", st->name != NULL ? st->name : "",
			    st->uid);
			h->h_stats.orphans_killed++;
			o->o_kill = kuberuntime_kill_running(
			    h->h_d.kr, st, KR_MIN_GRACE_SECONDS, hk_kill_done, o);
		}
		return;
	}
	/* Dead containers go to this pass' container GC (hk_containers). All of a pod's go when
	 * no source wants it any more and no worker acts on it; so do those of a pod whose
	 * content may go (an evicted pod, the kubelet's ShouldPodContentBeRemoved) and, in a
	 * reclaim for the eviction manager, of any pod no worker acts on (evictNonDeletedPods). */
	remove_all = !wanted && done;
	if (done &&
	    (h->h_all ||
	        (h->h_d.content_removable != NULL &&
	            h->h_d.content_removable(st->uid, h->h_d.content_removable_arg))))
		remove_all = 1;
	/* store: while it is degraded, the exit of a dead container may live only in memory;
	 * the container is its other record, so the pod's dead containers stay until the store
	 * commits again (a kill -9 then loses nothing: the next relist reports the exit). */
	if (!remove_all && !h->h_store_ok)
		degraded = 1;
	for (i = 0; i < st->ncontainers; i++) {
		const struct rt_container *c = &st->containers[i];
		int                        keep = degraded;

		/* recovery: a container created but never started (the daemon died in between)
		 * does not run; StopContainer leaves it CREATED, removing it is what ends it. */
		if (c->state != RT_EXITED && !(c->state == RT_CREATED && remove_all))
			continue;
		/* An exit not reported yet: the next relist reports it, a later pass removes it. */
		if (c->state == RT_EXITED && h->h_d.exit_known != NULL &&
		    !h->h_d.exit_known(c->id, h->h_d.exit_known_arg)) {
			keep = 1;
			h->h_found++;
		}
		hk_dead_add(h, st, c, remove_all, keep);
	}
	/* Not-ready sandboxes without containers. */
	for (i = 0; i < st->nsandboxes; i++) {
		const struct rt_sandbox *s = &st->sandboxes[i];

		if (s->state == RT_SB_READY || hk_sandbox_used(st, s->id))
			continue;
		if (!done && i == 0)
			continue; /* the newest of an active pod: the worker decides */
		hk_remove_sandbox(h, st, s);
	}
}

struct hk_uids {
	struct housekeeping *h;
	char               **v;
	size_t               n;
};

static void
hk_collect_finished(const struct pw_view *v, void *arg)
{
	struct hk_uids *u = arg;

	hk_know(u->h, v->uid);
	if (v->state == PW_FINISHED && !v->working && !v->has_pending) {
		u->h->h_found++;
		u->v = xreallocarray(u->v, u->n + 1, sizeof(*u->v));
		u->v[u->n++] = xstrdup(v->uid);
	}
}

static int
hk_uid_ok(const char *uid)
{
	return *uid != '\0' && strchr(uid, '/') == NULL && strcmp(uid, ".") != 0 &&
	    strcmp(uid, "..") != 0;
}

/* A finished worker of a pod no source wants is removed, and the pod's rows forgotten, only
 * once the runtime has nothing of it and its cgroups are gone: the rows are what names the
 * pod after a kill -9 (its directory went at termination, its sandbox may be gone before the
 * cache knows), so forgetting them first left its cgroups to nobody (the soak found some). */
static int
hk_keep_finished(struct housekeeping *h, const char *uid)
{
	if (hk_worker_state(h, uid) != PW_FINISHED)
		return 0;
	if (podcache_get(h->h_d.cache, uid, NULL) != NULL)
		return 1; /* hk_pod removes what the runtime has; a relist tells */
	if (h->h_d.cgroups != NULL && hk_uid_ok(uid)) {
		int rc = cgroups_pod_remove(h->h_d.cgroups, uid);

		if (rc == 1)
			h->h_stats.cgroups_removed++;
		if (rc == -1)
			return 1; /* still busy: tried again next pass */
	}
	return 0;
}

static int
hk_wanted(const char *uid, void *arg)
{
	struct housekeeping *h = arg;
	int                  wanted = podconfig_wanted(h->h_d.config, uid);

	if (wanted)
		return 1;
	h->h_found++; /* its worker is killed, then removed (or kept: looked at next pass) */
	return hk_keep_finished(h, uid);
}

/* A pod whose directories may go: no worker acts on it and the runtime has nothing. */
static int
hk_pod_gone(struct housekeeping *h, const char *uid)
{
	int ws = hk_worker_state(h, uid);

	if (ws != -1 && ws != PW_FINISHED)
		return 0;
	if (ws == -1 && podconfig_wanted(h->h_d.config, uid))
		return 0; /* wanted, its worker not created yet */
	return podcache_get(h->h_d.cache, uid, NULL) == NULL;
}

static void
hk_pod_dirs(struct housekeeping *h)
{
	char          *base = xsprintf("%s/pods", h->h_root);
	struct dirent *de;
	DIR           *d;

	if ((d = opendir(base)) == NULL) {
		free(base);
		return;
	}
	while ((de = readdir(d)) != NULL) {
		char *path;

		if (de->d_name[0] == '.' || !hk_uid_ok(de->d_name))
			continue;
		if (!hk_pod_gone(h, de->d_name))
			continue;
		h->h_found++;
		/* Its directory under this kletd's root makes the pod this kletd's: its cgroups
		 * go too (hk_cgroups), also when nothing else still names it (killed after the
		 * pod's rows were forgotten, before its cgroups were removed). */
		hk_know(h, de->d_name);
		path = xsprintf("%s/%s", base, de->d_name);
		(void)vol_unmount_under(path); /* a tmpfs left by a kill -9 first */
		(void)rmtree(path);
		if (access(path, F_OK) == -1) {
			log_v(2, "housekeeping: removed pod directory %s", path);
			h->h_stats.dirs_removed++;
		}
		free(path);
	}
	closedir(d);
	free(base);
}

/* LOGS/NS_NAME_UID directories of pods that are gone (the UID follows the last '_': names
 * and namespaces are DNS labels and subdomains, without '_'). */
static void
hk_log_dirs(struct housekeeping *h)
{
	struct dirent *de;
	DIR           *d;

	if (h->h_logs == NULL || (d = opendir(h->h_logs)) == NULL)
		return;
	while ((de = readdir(d)) != NULL) {
		const char *uid = strrchr(de->d_name, '_');
		char       *path;
		struct stat st;

		if (de->d_name[0] == '.' || uid == NULL || !hk_uid_ok(++uid))
			continue;
		if (!hk_pod_gone(h, uid))
			continue;
		h->h_found++;
		path = xsprintf("%s/%s", h->h_logs, de->d_name);
		if (lstat(path, &st) == -1 || !S_ISDIR(st.st_mode)) {
			free(path);
			continue;
		}
		if (rmtree(path) == -1)
			log_warn("housekeeping: removing pod log directory %s", path);
		else {
			log_v(2, "housekeeping: removed pod log directory %s", path);
			h->h_stats.log_dirs_removed++;
		}
		free(path);
	}
	closedir(d);
}

/* rmdir a cgroup directory and its (empty) children, deepest first. 0 when gone. */
static int
hk_rmdir_tree(const char *path)
{
	struct dirent *de;
	DIR           *d;

	if ((d = opendir(path)) != NULL) {
		while ((de = readdir(d)) != NULL) {
			char *sub;

			if (de->d_name[0] == '.' || de->d_type != DT_DIR)
				continue;
			sub = xsprintf("%s/%s", path, de->d_name);
			hk_rmdir_tree(sub);
			free(sub);
		}
		closedir(d);
	}
	return rmdir(path) == 0 || errno == ENOENT ? 0 : -1;
}

/* Pod cgroups through the pod cgroup manager (node/cgroups.c): either driver's names. */
static void
hk_pod_cgroup(void *arg, const char *uid)
{
	struct housekeeping *h = arg;

	if (!hk_uid_ok(uid) || hk_known_find(h, uid) == NULL || !hk_pod_gone(h, uid))
		return;
	if (cgroups_pod_remove(h->h_d.cgroups, uid) == 1)
		h->h_stats.cgroups_removed++;
}

static void
hk_cgroups(struct housekeeping *h)
{
	static const char *tiers[] = { "", "/besteffort", "/burstable" };
	struct dirent     *hier, *de;
	DIR               *m, *d;
	size_t             t;

	if (h->h_d.cgroups != NULL) {
		cgroups_foreach_pod(h->h_d.cgroups, hk_pod_cgroup, h);
		return;
	}
	if (*h->h_cgmnt == '\0' || *h->h_cgroot == '\0')
		return;
	if ((m = opendir(h->h_cgmnt)) == NULL)
		return;
	while ((hier = readdir(m)) != NULL) {
		if (hier->d_name[0] == '.' || hier->d_type != DT_DIR)
			continue;
		for (t = 0; t < nitems(tiers); t++) {
			char *dir =
			    xsprintf("%s/%s%s%s", h->h_cgmnt, hier->d_name, h->h_cgroot, tiers[t]);

			if ((d = opendir(dir)) == NULL) {
				free(dir);
				continue;
			}
			while ((de = readdir(d)) != NULL) {
				char *path;

				if (strncmp(de->d_name, "pod", 3) != 0 || de->d_type != DT_DIR ||
				    !hk_uid_ok(de->d_name + 3) ||
				    hk_known_find(h, de->d_name + 3) == NULL)
					continue;
				if (!hk_pod_gone(h, de->d_name + 3))
					continue;
				path = xsprintf("%s/%s", dir, de->d_name);
				if (hk_rmdir_tree(path) == 0) {
					log_v(2, "housekeeping: removed cgroup %s", path);
					h->h_stats.cgroups_removed++;
				}
				free(path);
			}
			closedir(d);
			free(dir);
		}
	}
	closedir(m);
}

/* hk_cgroups removes only the cgroups of known pods that are gone: with none gone, its walk
 * of every hierarchy's pod directories (the most costly part of an idle pass, kernel time
 * in cgroupfs) would find nothing to do. */
static int
hk_any_known_gone(struct housekeeping *h)
{
	size_t i;

	for (i = 0; i < h->h_nknown; i++)
		if (hk_pod_gone(h, h->h_known[i].k_uid)) {
			h->h_found++; /* also counted towards its forgetting, pass by pass */
			return 1;
		}
	return 0;
}

int
housekeeping_reclaim(struct housekeeping *h, void (*done)(void *arg), void *arg)
{
	h->h_all = 1;
	housekeeping_run(h);
	h->h_all = 0;
	if (h->h_ops == NULL)
		return 0;
	log_v(3, "housekeeping: reclaim: waiting for its removals");
	h->h_reclaim_done = done;
	h->h_reclaim_arg = arg;
	return 1;
}

static void
hk_inputs(struct housekeeping *h, struct hk_inputs *in)
{
	memset(in, 0, sizeof(*in));
	in->i_cache = podcache_generation(h->h_d.cache);
	in->i_workers = podworkers_version(h->h_d.workers);
	in->i_pods = podconfig_version(h->h_d.config);
	in->i_cri_ready = h->h_d.cri != NULL && cri_ready(h->h_d.cri);
	in->i_store_ok = !store_degraded(h->h_d.store);
}

int
housekeeping_run(struct housekeeping *h)
{
	struct hk_uids   fin = { .h = h };
	struct hk_inputs in;
	int64_t          t0 = now_mono_us();
	size_t           i;
	int              forgot = 0;

	if (!podconfig_sources_ready(h->h_d.config) || podcache_time(h->h_d.cache) == 0)
		return 0;
	h->h_stats.passes++;
	hk_inputs(h, &in);
	if (h->h_quiet && !h->h_all && memcmp(&in, &h->h_last, sizeof(in)) == 0) {
		/* Nothing it reads changed since a pass that found nothing to do (no worker to
		 * remove, nothing to kill or collect, no directory or cgroup of a gone pod):
		 * this one would find nothing either. */
		h->h_stats.quiet_passes++;
		h->h_stats.last_duration_us = now_mono_us() - t0;
		return 0;
	}
	h->h_found = 0;
	h->h_store_ok = in.i_store_ok;
	loop_note("housekeeping: workers");
	/* Workers of pods no source wants: killed, then removed once finished. */
	podworkers_foreach(h->h_d.workers, hk_collect_finished, &fin);
	podworkers_forget(h->h_d.workers, hk_wanted, h);
	for (i = 0; i < fin.n; i++) {
		struct pw_view v;

		if (podworkers_get(h->h_d.workers, fin.v[i], &v) == -1) {
			h->h_stats.workers_removed++;
			if (h->h_d.kr != NULL)
				kuberuntime_forget(h->h_d.kr, fin.v[i]);
			if (h->h_d.store != NULL)
				store_forget_pod(h->h_d.store, fin.v[i]);
		}
		free(fin.v[i]);
	}
	free(fin.v);
	if (h->h_d.cri != NULL && cri_ready(h->h_d.cri)) {
		loop_note("housekeeping: containers");
		podcache_foreach(h->h_d.cache, hk_pod, h);
		hk_containers(h);
	}
	loop_note("housekeeping: pod directories");
	hk_pod_dirs(h);
	loop_note("housekeeping: log directories");
	hk_log_dirs(h);
	loop_note("housekeeping: cgroups");
	if (hk_any_known_gone(h))
		hk_cgroups(h);
	loop_note("housekeeping");
	/* Forget UIDs that have been completely gone for a while. */
	i = 0;
	while (i < h->h_nknown) {
		struct hk_known *k = &h->h_known[i];

		if (hk_pod_gone(h, k->k_uid) && ++k->k_gone_passes > HK_FORGET_AFTER) {
			free(k->k_uid);
			h->h_nknown--;
			memmove(&h->h_known[i], &h->h_known[i + 1],
			    (h->h_nknown - i) * sizeof(*h->h_known));
			forgot = 1;
			continue;
		}
		i++;
	}
	/* A forgotten pod's last exits may have been stored after its rows were deleted (PLEG
	 * saw them die, or the container GC stored them before removing the containers). */
	if (forgot && h->h_d.store != NULL)
		store_del_orphaned_exits(h->h_d.store);
	h->h_last = in;
	h->h_quiet = h->h_found == 0 && h->h_ops == NULL;
	h->h_stats.last_duration_us = now_mono_us() - t0;
	return 1;
}
