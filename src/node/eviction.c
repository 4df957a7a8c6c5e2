/* eviction.c — see eviction.h. */
#include <sys/eventfd.h>
#include <sys/stat.h>
#include <sys/statvfs.h>

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <event2/event.h>

#include "core/config.h"
#include "core/log.h"
#include "core/loop.h"
#include "core/util.h"
#include "logic/admit.h"
#include "logic/qos.h"
#include "node/cgroups.h"
#include "node/eviction.h"
#include "node/imagegc.h"
#include "node/nodeinfo.h"
#include "node/podcache.h"
#include "node/podworkers.h"
#include "pod/runtime.h"

#define EVICTION_WAIT_MS 30000       /* podCleanupTimeout */
#define EVICTION_POLL_MS 500         /* cgroup v2: memory read this often near a threshold */
#define EV_SLACK_MIN     (1LL << 20) /* a notifier this close to its new threshold is kept */
#define EV_SLACK_MAX     (16LL << 20)

enum ev_reclaim { EV_RECLAIM_IDLE = 0, EV_RECLAIM_RUNNING, EV_RECLAIM_DONE };

/* A memory threshold notification: eventfd registered on a memory cgroup. */
struct ev_notifier {
	int           efd, ufd;
	struct event *ev;
	int64_t       threshold; /* usage_in_bytes as registered, 0: none */
};

struct eviction {
	struct eviction_deps d;
	struct ev_config     cfg;
	struct ev_state      st;
	struct ev_obs        obs[EV_NSIGNALS];
	unsigned             reported; /* conditions as last reported */
	int                  reported_once;
	struct event        *timer;
	struct ev_notifier   nt[2]; /* root, kubepods */
	char                *mnt;
	char                *evicting; /* UID of the pod evicted last, until it terminated */
	int64_t              evicting_ms;
	int                  running;
	int                  by_notify; /* this pass follows a threshold notification */
	struct eviction_view v;
	int64_t              inactive[2]; /* total_inactive_file of root / kubepods */
	enum ev_reclaim      reclaim;
	enum ev_signal       reclaim_sig; /* the signal of the last reclaim */
	/* cgroup v2: the poll of memory.current standing in for the v1 eventfd */
	struct event *poll;
	int64_t       poll_usage[2]; /* usage (working set + inactive) that crosses, 0: none */
	int           poll_over[2];  /* it was over at the last poll */
};

static int64_t
ev_read_i64(const char *path)
{
	char    buf[64];
	int     fd = open(path, O_RDONLY | O_CLOEXEC);
	ssize_t n;

	if (fd < 0)
		return -1;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return -1;
	buf[n] = '\0';
	if (strncmp(buf, "max", 3) == 0)
		return -1;
	return strtoll(buf, NULL, 10);
}

/* A key's value from a "key value" file (memory.stat), -1 when absent. */
static int64_t
ev_stat_key(const char *path, const char *key)
{
	FILE   *f = fopen(path, "re");
	char    line[256];
	size_t  kl = strlen(key);
	int64_t v = -1;

	if (f == NULL)
		return -1;
	while (fgets(line, sizeof(line), f) != NULL)
		if (strncmp(line, key, kl) == 0 && line[kl] == ' ') {
			v = strtoll(line + kl + 1, NULL, 10);
			break;
		}
	fclose(f);
	return v;
}

/* The working set of a memory cgroup (rel below the memory hierarchy): usage minus
 * inactive file, as cAdvisor computes it. -1 when unreadable. */
static int64_t
ev_working_set(struct eviction *e, const char *rel, int64_t *inactive)
{
	int     v2 = e->d.cgroups != NULL && cgroups_is_v2(e->d.cgroups);
	char   *u = xsprintf("%s%s%s/%s", e->mnt, v2 ? "" : "/memory", rel,
            v2 ? "memory.current" : "memory.usage_in_bytes");
	char   *s = xsprintf("%s%s%s/memory.stat", e->mnt, v2 ? "" : "/memory", rel);
	int64_t usage = ev_read_i64(u),
	        in = ev_stat_key(s, v2 ? "inactive_file" : "total_inactive_file");

	free(u);
	free(s);
	if (usage < 0)
		return -1;
	if (in < 0)
		in = 0;
	if (inactive != NULL)
		*inactive = in;
	return in < usage ? usage - in : 0;
}

static void
ev_observe(struct eviction *e)
{
	struct nodeinfo_host h;
	struct statvfs       sv;
	struct imagegc_fs    fs;
	int64_t              ws;

	memset(e->obs, 0, sizeof(e->obs));
	memset(&h, 0, sizeof(h));
	nodeinfo_read_host(e->d.cfg->root_dir, &h);
	/* memory.available: capacity minus the root cgroup's working set (v1); on v2 (no root
	 * memory files) MemAvailable. */
	if (h.mem_total > 0) {
		ws = ev_working_set(e, "", &e->inactive[0]);
		e->obs[EV_MEMORY].valid = 1;
		e->obs[EV_MEMORY].capacity = h.mem_total;
		e->obs[EV_MEMORY].available = ws >= 0 ? h.mem_total - ws : h.mem_available;
	}
	if (e->d.cgroups != NULL && e->d.pods_memory > 0 &&
	    (ws = ev_working_set(e, cgroups_kubepods(e->d.cgroups), &e->inactive[1])) >= 0) {
		e->obs[EV_ALLOC_MEMORY].valid = 1;
		e->obs[EV_ALLOC_MEMORY].capacity = e->d.pods_memory;
		e->obs[EV_ALLOC_MEMORY].available = e->d.pods_memory - ws;
	}
	if (statvfs(e->d.cfg->root_dir, &sv) == 0) {
		e->obs[EV_NODEFS] = (struct ev_obs){ 1, (int64_t)sv.f_bavail * (int64_t)sv.f_frsize,
			(int64_t)sv.f_blocks * (int64_t)sv.f_frsize };
		e->obs[EV_NODEFS_INODES] =
		    (struct ev_obs){ 1, (int64_t)sv.f_favail, (int64_t)sv.f_files };
		/* The image file system: the node's until the runtime's ImageFsInfo is known. */
		e->obs[EV_IMAGEFS] = e->obs[EV_NODEFS];
		e->obs[EV_IMAGEFS_INODES] = e->obs[EV_NODEFS_INODES];
		if (sv.f_files == 0) {
			e->obs[EV_NODEFS_INODES].valid = 0;
			e->obs[EV_IMAGEFS_INODES].valid = 0;
		}
	}
	if (e->d.imagegc != NULL && imagegc_fs(e->d.imagegc, &fs) == 0) {
		e->obs[EV_IMAGEFS] = (struct ev_obs){ 1, fs.available, fs.capacity };
		e->obs[EV_IMAGEFS_INODES] =
		    (struct ev_obs){ fs.inodes > 0, fs.inodes_free, fs.inodes };
	}
	if (h.pid_max > 0)
		e->obs[EV_PID] = (struct ev_obs){ 1, h.pid_max - h.pids, h.pid_max };
}

/* ---- memory threshold notifications (cgroup v1) ---- */

static void ev_notified(evutil_socket_t fd, short what, void *arg);
static void ev_polled(evutil_socket_t fd, short what, void *arg);

static void
ev_notifier_close(struct ev_notifier *n)
{
	if (n->ev != NULL)
		event_free(n->ev);
	if (n->efd >= 0)
		close(n->efd);
	if (n->ufd >= 0)
		close(n->ufd);
	n->ev = NULL;
	n->efd = n->ufd = -1;
	n->threshold = 0;
}

/* Registers rel's memory.usage_in_bytes crossing threshold. 0 or -1. A notifier armed
 * within slack bytes of threshold is kept: the crossing point moves with inactive_file at
 * every pass, and each registration takes the memory cgroup's threshold lock and an RCU
 * grace period in the kernel (many agents on one machine piled up in D state re-arming the
 * root cgroup's notifier every 10 s). Kept, it fires at most slack bytes early or late. */
static int
ev_notifier_arm(
    struct eviction *e, struct ev_notifier *n, const char *rel, int64_t threshold, int64_t slack)
{
	char *u, *c, line[96];
	int   cfd, rc = -1;

	if (threshold == n->threshold ||
	    (n->ev != NULL && threshold > 0 && llabs(threshold - n->threshold) <= slack))
		return 0;
	ev_notifier_close(n);
	if (threshold <= 0)
		return 0;
	u = xsprintf("%s/memory%s/memory.usage_in_bytes", e->mnt, rel);
	c = xsprintf("%s/memory%s/cgroup.event_control", e->mnt, rel);
	n->efd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
	n->ufd = open(u, O_RDONLY | O_CLOEXEC);
	if (n->efd >= 0 && n->ufd >= 0 && (cfd = open(c, O_WRONLY | O_CLOEXEC)) >= 0) {
		int len = snprintf(
		    line, sizeof(line), "%d %d %lld", n->efd, n->ufd, (long long)threshold);

		if (write(cfd, line, (size_t)len) == len)
			rc = 0;
		close(cfd);
	}
	if (rc < 0) {
		log_v(
		    2, "eviction: no memory threshold notification on %s: %s", u, strerror(errno));
		ev_notifier_close(n);
	} else {
		n->ev = event_new(e->d.base, n->efd, EV_READ | EV_PERSIST, ev_notified, e);
		event_add(n->ev, NULL);
		n->threshold = threshold;
		log_v(3, "eviction: notified when %s crosses %lld", u, (long long)threshold);
	}
	free(u);
	free(c);
	return rc;
}

/* ---- cgroup v2: no cgroup.event_control; memory.current is polled instead ---- */

/* The usage (memory.current, or MemTotal - MemAvailable for the node) that crosses the
 * hard memory thresholds, as on v1. */
static void
ev_poll_update(struct eviction *e)
{
	size_t i;

	e->poll_usage[0] = e->poll_usage[1] = 0;
	for (i = 0; i < e->cfg.n; i++) {
		const struct ev_threshold *t = &e->cfg.t[i];
		const struct ev_obs       *o = &e->obs[t->sig];
		int64_t                    u;

		if (!t->hard || !o->valid || (t->sig != EV_MEMORY && t->sig != EV_ALLOC_MEMORY))
			continue;
		u = o->capacity - ev_threshold_value(t, o->capacity);
		if (t->sig == EV_MEMORY)
			e->poll_usage[0] = u;
		else if (e->d.cgroups != NULL)
			e->poll_usage[1] = u + e->inactive[1];
	}
	if (e->poll_usage[0] > 0 || e->poll_usage[1] > 0) {
		struct timeval tv = ms_to_tv(EVICTION_POLL_MS);

		if (e->poll == NULL)
			e->poll = event_new(e->d.base, -1, EV_PERSIST, ev_polled, e);
		if (!event_pending(e->poll, EV_TIMEOUT, NULL))
			event_add(e->poll, &tv);
	} else if (e->poll != NULL) {
		event_del(e->poll);
	}
	e->v.notify_armed = e->poll != NULL && event_pending(e->poll, EV_TIMEOUT, NULL);
}

/* One poll: a pass at once when a usage went over its crossing point since the last poll
 * (an edge, as the eventfd: a usage that stays over waits for the periodic pass). */
static void
ev_polled(evutil_socket_t fd, short what, void *arg)
{
	struct eviction     *e = arg;
	struct nodeinfo_host h;
	int64_t              u[2] = { -1, -1 };
	int                  fire = 0, k;

	(void)fd;
	(void)what;
	if (e->poll_usage[0] > 0) {
		memset(&h, 0, sizeof(h));
		nodeinfo_read_host(e->d.cfg->root_dir, &h);
		if (h.mem_total > 0)
			u[0] = h.mem_total - h.mem_available;
	}
	if (e->poll_usage[1] > 0 && e->d.cgroups != NULL) {
		char *p = xsprintf("%s%s/memory.current", e->mnt, cgroups_kubepods(e->d.cgroups));

		u[1] = ev_read_i64(p);
		free(p);
	}
	for (k = 0; k < 2; k++) {
		int over = e->poll_usage[k] > 0 && u[k] >= e->poll_usage[k];

		if (over && !e->poll_over[k])
			fire = 1;
		e->poll_over[k] = over;
	}
	if (!fire)
		return;
	e->v.notifications++;
	log_v(3, "eviction: memory usage crossed its threshold (cgroup v2 poll)");
	e->by_notify = 1;
	eviction_run(e);
	e->by_notify = 0;
}

/* The usage at which the working set reaches the hard memory threshold: capacity -
 * threshold + inactive_file, as the kubelet's memory threshold notifier sets it. */
static void
ev_notifiers_update(struct eviction *e)
{
	size_t i;

	if (e->d.cgroups != NULL && cgroups_is_v2(e->d.cgroups)) {
		ev_poll_update(e);
		return;
	}
	for (i = 0; i < e->cfg.n; i++) {
		const struct ev_threshold *t = &e->cfg.t[i];
		const struct ev_obs       *o = &e->obs[t->sig];
		int64_t                    u, q, slack;

		if (!t->hard || !o->valid)
			continue;
		q = ev_threshold_value(t, o->capacity);
		u = o->capacity - q;
		/* An eighth of the threshold, from 1 to 16 MiB (100Mi: 12.5 MiB). */
		slack = q / 8 < EV_SLACK_MIN ? EV_SLACK_MIN
		    : q / 8 > EV_SLACK_MAX   ? EV_SLACK_MAX
		                             : q / 8;
		if (t->sig == EV_MEMORY)
			ev_notifier_arm(e, &e->nt[0], "", u + e->inactive[0], slack);
		else if (t->sig == EV_ALLOC_MEMORY && e->d.cgroups != NULL)
			ev_notifier_arm(e, &e->nt[1], cgroups_kubepods(e->d.cgroups),
			    u + e->inactive[1], slack);
	}
	e->v.notify_armed = e->nt[0].ev != NULL || e->nt[1].ev != NULL;
}

/* ---- ranking and evicting ---- */

struct ev_cand {
	struct eviction *e;
	enum ev_signal   sig;
	struct ev_pod   *p;
	size_t           n;
};

static int64_t
ev_dir_size(const char *path, int depth)
{
	struct dirent *de;
	DIR           *d;
	int64_t        sum = 0;

	if (depth > 8 || (d = opendir(path)) == NULL)
		return 0;
	while ((de = readdir(d)) != NULL) {
		char       *sub;
		struct stat st;

		if (strcmp(de->d_name, ".") == 0 || strcmp(de->d_name, "..") == 0)
			continue;
		sub = xsprintf("%s/%s", path, de->d_name);
		if (lstat(sub, &st) == 0) {
			if (S_ISDIR(st.st_mode))
				sum += ev_dir_size(sub, depth + 1);
			else
				sum += (int64_t)st.st_blocks * 512;
		}
		free(sub);
	}
	closedir(d);
	return sum;
}

static void
ev_collect(const struct pw_view *v, void *arg)
{
	struct ev_cand   *c = arg;
	struct eviction  *e = c->e;
	const struct pod *pod = v->pod;
	struct ev_pod    *p;
	char              name[QOS_CGROUP_NAME_MAX];

	if (pod == NULL || v->state != PW_SYNC ||
	    (v->has_pending && v->pending_type == PW_UPDATE_KILL) || pod->deletion_ts != 0)
		return;
	c->p = xreallocarray(c->p, c->n + 1, sizeof(*c->p));
	p = &c->p[c->n];
	memset(p, 0, sizeof(*p));
	p->pod = pod;
	p->index = c->n++;
	p->critical = admit_pod_is_critical(pod, 0);
	p->priority = pod->priority;
	p->mem_request = qos_pod_request(pod, "memory") / 1000;
	p->disk_request = qos_pod_request(pod, "ephemeral-storage") / 1000;
	if (e->d.cgroups != NULL) {
		cgroups_pod_name(e->d.cgroups, pod, name, sizeof(name));
		p->mem_usage = ev_working_set(e, name, NULL);
		if (p->mem_usage < 0)
			p->mem_usage = 0;
		if (!cgroups_is_v2(e->d.cgroups)) {
			char *pp = xsprintf("%s/pids%s/pids.current", e->mnt, name);

			p->procs = ev_read_i64(pp);
			free(pp);
		}
	}
	if (ev_signal_condition(c->sig) == EV_COND_DISK) {
		char *logs = xsprintf("%s/%s_%s_%s", e->d.cfg->pod_logs_dir, pod->ns ? pod->ns : "",
		    pod->name ? pod->name : "", pod->uid ? pod->uid : "");
		char *dir = xsprintf("%s/pods/%s", e->d.cfg->root_dir, pod->uid ? pod->uid : "");

		p->disk_usage = ev_dir_size(logs, 0) + ev_dir_size(dir, 0);
		free(logs);
		free(dir);
	}
}

/* The containers' usage of the evicted pod for the message. */
static size_t
ev_containers(
    struct eviction *e, const struct pod *pod, enum ev_signal sig, struct ev_container_usage **out)
{
	const struct rt_pod_status *rt =
	    e->d.cache ? podcache_get(e->d.cache, pod->uid, NULL) : NULL;
	struct ev_container_usage *cu = xcalloc(pod->ncontainers + 1, sizeof(*cu));
	char                       name[QOS_CGROUP_NAME_MAX];
	size_t                     i, j, n = 0;
	int                        mem = ev_signal_condition(sig) == EV_COND_MEMORY;

	if (e->d.cgroups != NULL)
		cgroups_pod_name(e->d.cgroups, pod, name, sizeof(name));
	for (i = 0; i < pod->ncontainers; i++) {
		const struct container *c = &pod->containers[i];
		const struct quantity  *q = resource_list_get(
		     &c->c_resources.requests, mem ? "memory" : "ephemeral-storage");

		cu[n].name = c->c_name;
		cu[n].request = q != NULL ? q->milli / 1000 : 0;
		for (j = 0; rt != NULL && j < rt->ncontainers && mem && e->d.cgroups != NULL; j++) {
			if (rt->containers[j].name == NULL ||
			    strcmp(rt->containers[j].name, c->c_name) != 0 ||
			    rt->containers[j].state == RT_EXITED)
				continue;
			{
				char   *rel = xsprintf("%s/%s", name, rt->containers[j].id);
				int64_t ws = ev_working_set(e, rel, NULL);

				free(rel);
				if (ws > 0)
					cu[n].usage = ws;
			}
			break;
		}
		/* Not relisted yet: a single container is most of its pod's usage. */
		if (cu[n].usage == 0 && mem && pod->ncontainers == 1 && e->d.cgroups != NULL)
			cu[n].usage = ev_working_set(e, name, NULL);
		n++;
	}
	*out = cu;
	return n;
}

static void
ev_evict(struct eviction *e, const struct ev_threshold *t)
{
	struct ev_cand c = { e, t->sig, NULL, 0 };
	size_t         i;

	podworkers_foreach(e->d.workers, ev_collect, &c);
	ev_rank(t->sig, c.p, c.n);
	for (i = 0; i < c.n; i++) {
		const struct pod          *pod = c.p[i].pod;
		struct ev_container_usage *cu;
		size_t                     ncu;
		char                      *msg;
		int64_t                    grace;

		if (c.p[i].critical)
			continue;
		ncu = ev_containers(e, pod, t->sig, &cu);
		msg = ev_message(t, &e->obs[t->sig], cu, ncu);
		free(cu);
		grace = ev_grace(&e->cfg, t, pod);
		log_info("eviction: evicting pod %s/%s (%s threshold %s<%s, grace %llds, %s): %s",
		    pod->ns, pod->name, t->hard ? "hard" : "soft", ev_signal_name(t->sig), t->text,
		    (long long)grace,
		    e->by_notify ? "on a memory threshold notification" : "periodic pass", msg);
		free(e->evicting);
		e->evicting = xstrdup(pod->uid);
		e->evicting_ms = now_mono_ms();
		e->v.evictions++;
		e->v.by_signal[t->sig]++;
		snprintf(e->v.last_pod, sizeof(e->v.last_pod), "%s/%s", pod->ns, pod->name);
		snprintf(e->v.last_message, sizeof(e->v.last_message), "%s", msg);
		e->v.last_ms = now_wall_ms();
		e->d.evict(e->d.arg, pod, grace, msg); /* may change the workers: last */
		free(msg);
		break;
	}
	if (i == c.n)
		log_warnx(
		    "eviction: %s below its threshold and no pod to evict", ev_signal_name(t->sig));
	free(c.p);
}

/* localStorageEviction: pods above an emptyDir sizeLimit or their ephemeral-storage limit
 * are evicted (1 s grace), every such pod in one pass. Returns how many. */
struct ev_ls {
	struct eviction   *e;
	const struct pod **victims;
	char             **msgs;
	int               *kinds;
	size_t             n;
};

static void
ev_ls_pod(const struct pw_view *v, void *arg)
{
	struct ev_ls     *ls = arg;
	struct eviction  *e = ls->e;
	const struct pod *pod = v->pod;
	char             *msg = NULL, *dir, *logs;
	int64_t           total = 0, limit = 0;
	int               declared = 0, kind = 0; /* 1 emptyDir, 2 the pod's limit */
	size_t            i;

	if (pod == NULL || pod->uid == NULL || v->state != PW_SYNC ||
	    (v->has_pending && v->pending_type == PW_UPDATE_KILL) || pod->deletion_ts != 0)
		return;
	for (i = 0; i < pod->ncontainers; i++)
		if (resource_list_get(&pod->containers[i].c_resources.limits, "ephemeral-storage"))
			declared = 1;
	for (i = 0; i < pod->nvolumes; i++) {
		const struct volume *vol = &pod->volumes[i];
		int64_t              used;

		if (vol->v_kind != VOL_EMPTY_DIR || streq_null(vol->v_medium, "Memory") ||
		    (!declared && vol->v_size_limit_milli <= 0))
			continue;
		dir = xsprintf("%s/pods/%s/volumes/kubernetes.io~empty-dir/%s", e->d.cfg->root_dir,
		    pod->uid, vol->v_name);
		used = ev_dir_size(dir, 0);
		free(dir);
		total += used;
		if (msg == NULL && vol->v_size_limit_milli > 0 &&
		    used > vol->v_size_limit_milli / 1000)
			msg = ev_emptydir_message(vol->v_name, vol->v_size_limit_milli / 1000);
		if (msg != NULL && kind == 0)
			kind = 1;
	}
	if (msg == NULL && declared) {
		logs = xsprintf("%s/%s_%s_%s", e->d.cfg->pod_logs_dir, pod->ns ? pod->ns : "",
		    pod->name ? pod->name : "", pod->uid);
		total += ev_dir_size(logs, 0);
		free(logs);
		limit = qos_pod_limit(pod, "ephemeral-storage", NULL) / 1000;
		if (limit > 0 && total > limit) {
			msg = ev_pod_storage_message(limit);
			kind = 2;
		}
	}
	if (msg == NULL)
		return;
	ls->victims = xreallocarray(ls->victims, ls->n + 1, sizeof(*ls->victims));
	ls->msgs = xreallocarray(ls->msgs, ls->n + 1, sizeof(*ls->msgs));
	ls->kinds = xreallocarray(ls->kinds, ls->n + 1, sizeof(*ls->kinds));
	ls->kinds[ls->n] = kind;
	ls->victims[ls->n] = pod_ref(pod);
	ls->msgs[ls->n++] = msg;
}

static size_t
ev_local_storage(struct eviction *e)
{
	struct ev_ls ls = { e, NULL, NULL, NULL, 0 };
	size_t       i;

	podworkers_foreach(e->d.workers, ev_ls_pod, &ls);
	for (i = 0; i < ls.n; i++) {
		const struct pod *pod = ls.victims[i];

		if (!admit_pod_is_critical(pod, 0)) {
			log_info("eviction: evicting pod %s/%s (local storage, grace 1s): %s",
			    pod->ns, pod->name, ls.msgs[i]);
			e->v.evictions++;
			if (ls.kinds[i] == 1)
				e->v.emptydir_limit++;
			else
				e->v.pod_storage_limit++;
			snprintf(e->v.last_pod, sizeof(e->v.last_pod), "%s/%s", pod->ns, pod->name);
			snprintf(e->v.last_message, sizeof(e->v.last_message), "%s", ls.msgs[i]);
			e->v.last_ms = now_wall_ms();
			e->d.evict(e->d.arg, pod, 1, ls.msgs[i]);
		}
		pod_unref(ls.victims[i]);
		free(ls.msgs[i]);
	}
	free(ls.victims);
	free(ls.msgs);
	free(ls.kinds);
	return i;
}

/* Still waiting for the last evicted pod to terminate? */
static int
ev_waiting(struct eviction *e)
{
	struct pw_view v;

	if (e->evicting == NULL)
		return 0;
	if (now_mono_ms() - e->evicting_ms < EVICTION_WAIT_MS &&
	    podworkers_get(e->d.workers, e->evicting, &v) == 0 && v.state == PW_TERMINATING)
		return 1;
	xfree_str(&e->evicting);
	return 0;
}

/* reclaimNodeLevelResources: for a disk signal, dead containers and unused images go before
 * any pod. 1 while a reclaim runs (this pass evicts nothing), 0 when the pass may evict:
 * the reclaim finished and this pass' fresh observation still meets the threshold. */
static int
ev_reclaim_first(struct eviction *e, const struct ev_threshold *t)
{
	if (ev_signal_condition(t->sig) != EV_COND_DISK || e->d.reclaim == NULL)
		return 0;
	switch (e->reclaim) {
	case EV_RECLAIM_RUNNING:
		return 1;
	case EV_RECLAIM_DONE:
		e->reclaim = EV_RECLAIM_IDLE;
		log_info("eviction: must evict pod(s) to reclaim %s", ev_signal_resource(t->sig));
		return 0;
	default:
		break;
	}
	log_info("eviction: attempting to reclaim %s (%s<%s): dead containers and unused images "
	         "first",
	    ev_signal_resource(t->sig), ev_signal_name(t->sig), t->text);
	e->reclaim = EV_RECLAIM_RUNNING;
	e->reclaim_sig = t->sig;
	e->v.reclaims++;
	e->d.reclaim(e->d.arg, t->sig); /* answers through eviction_reclaimed, later */
	return 1;
}

void
eviction_reclaimed(struct eviction *e, int64_t freed)
{
	if (e->reclaim != EV_RECLAIM_RUNNING)
		return;
	e->reclaim = EV_RECLAIM_DONE;
	e->v.reclaimed_bytes += freed;
	log_info(
	    "eviction: node-level reclaim done (%lld bytes of images freed)", (long long)freed);
	event_active(e->timer, EV_TIMEOUT, 0); /* a fresh pass decides */
}

void
eviction_run(struct eviction *e)
{
	struct ev_decision d;

	if (e->running)
		return;
	e->running = 1;
	e->v.passes++;
	ev_observe(e);
	ev_synchronize(&e->cfg, e->obs, now_mono_ms(), &e->st, &d);
	e->v.met = d.met;
	if (!e->reported_once || d.conditions != e->reported) {
		if (e->reported_once)
			log_info("eviction: node conditions now%s%s%s%s",
			    d.conditions & EV_COND_MEMORY ? " MemoryPressure" : "",
			    d.conditions & EV_COND_DISK ? " DiskPressure" : "",
			    d.conditions & EV_COND_PID ? " PIDPressure" : "",
			    d.conditions == 0 ? " without pressure" : "");
		e->reported = d.conditions;
		e->reported_once = 1;
		if (e->d.conditions != NULL)
			e->d.conditions(e->d.arg, d.conditions);
	}
	ev_notifiers_update(e);
	if (ev_local_storage(e) > 0)
		; /* as the kubelet: this pass evicted for local storage */
	else if (d.act >= 0 && !ev_waiting(e) && !ev_reclaim_first(e, &e->cfg.t[d.act]))
		ev_evict(e, &e->cfg.t[d.act]);
	if (d.act < 0 && e->reclaim == EV_RECLAIM_DONE) { /* the reclaim was enough */
		log_info("eviction: able to reduce %s pressure without evicting pods",
		    ev_signal_resource(e->reclaim_sig));
		e->reclaim = EV_RECLAIM_IDLE;
	}
	e->running = 0;
}

static void
ev_timer(evutil_socket_t fd, short what, void *arg)
{
	struct eviction *e = arg;

	(void)fd;
	(void)what;
	/* Every period, at the instants the loop's other periodic work shares (core/loop.h). */
	loop_grid_add(e->timer, (unsigned)e->d.cfg->eviction_monitor_ms);
	eviction_run(e);
}

static void
ev_notified(evutil_socket_t fd, short what, void *arg)
{
	struct eviction *e = arg;
	uint64_t         cnt;

	(void)what;
	while (read(fd, &cnt, sizeof(cnt)) == (ssize_t)sizeof(cnt))
		;
	e->v.notifications++;
	log_v(3, "eviction: memory threshold notification");
	e->by_notify = 1;
	eviction_run(e);
	e->by_notify = 0;
}

struct eviction *
eviction_new(const struct eviction_deps *d, char *err, size_t errlen)
{
	struct eviction *e = xcalloc(1, sizeof(*e));

	e->d = *d;
	if (ev_config_build(&d->cfg->eviction_hard, &d->cfg->eviction_soft,
	        &d->cfg->eviction_soft_grace, &d->cfg->eviction_min_reclaim, &e->cfg, err,
	        errlen) < 0) {
		free(e);
		return NULL;
	}
	e->cfg.transition_ms = d->cfg->eviction_transition_ms;
	e->cfg.max_grace_s = d->cfg->eviction_max_grace_s;
	e->mnt = xstrdup(d->cgroup_mnt != NULL ? d->cgroup_mnt : "/sys/fs/cgroup");
	e->nt[0].efd = e->nt[0].ufd = e->nt[1].efd = e->nt[1].ufd = -1;
	e->timer = evtimer_new(d->base, ev_timer, e);
	/* A first pass now (the notifiers get armed); it arms the timer. */
	event_active(e->timer, EV_TIMEOUT, 0);
	return e;
}

void
eviction_free(struct eviction *e)
{
	if (e == NULL)
		return;
	event_free(e->timer);
	if (e->poll != NULL)
		event_free(e->poll);
	ev_notifier_close(&e->nt[0]);
	ev_notifier_close(&e->nt[1]);
	free(e->evicting);
	free(e->mnt);
	free(e);
}

unsigned
eviction_conditions(const struct eviction *e)
{
	return e != NULL ? e->reported : 0;
}

void
eviction_view(const struct eviction *e, struct eviction_view *v)
{
	*v = e->v;
	v->cfg = &e->cfg;
	memcpy(v->obs, e->obs, sizeof(v->obs));
	v->conditions = e->reported;
}
