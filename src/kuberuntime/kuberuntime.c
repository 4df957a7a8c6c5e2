/* kuberuntime.c — the runtime manager: SyncPod (the 8 steps), SyncTerminatingPod,
 * SyncTerminatedPod and housekeeping kills as asynchronous step machines, the pod status
 * read from the runtime, the start-error cache and the podworkers syncer. */
#include <sys/queue.h>
#include <sys/types.h>

#include <arpa/inet.h>
#include <errno.h>
#include <stdarg.h>
#include <ifaddrs.h>
#include <inttypes.h>
#include <net/if.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <unistd.h>

#include <event2/event.h>

#include "logic/actions.h"
#include "logic/backoff.h"
#include "core/config.h"
#include "cri/cri.h"
#include "node/events.h"
#include "kuberuntime/kuberuntime.h"
#include "kuberuntime/internal.h"
#include "core/log.h"
#include "core/loop.h"
#include "core/strindex.h"
#include "node/podcache.h"
#include "node/podworkers.h"
#include "core/util.h"
#include "volumes/volumes.h" /* volumes */

#define KR_DEFAULT_PULL_TIMEOUT_MS (5 * 60 * 1000)

struct kr_err {
	char   *container;
	char   *reason;
	char   *message;
	int64_t at_ms;
};

struct kr_pull {
	char   *image;
	int64_t at_ms;
};

struct kr_pod {
	TAILQ_ENTRY(kr_pod) kp_entry;
	struct kuberuntime *kp_kr;
	char               *kp_uid;
	size_t              kp_pos; /* in kr_podv */
	struct kr_err      *kp_errs;
	size_t              kp_nerrs;
	uint64_t            kp_errs_version; /* kr_errs_version when kp_errs last changed */
	struct kr_pull     *kp_pulls;
	size_t              kp_npulls;
	struct kr_sync     *kp_m;      /* the machine running for this pod, or NULL */
	int64_t             kp_min_ts; /* decisions need a status at least this new */
	char               *kp_last_error;
	const char         *kp_last_step; /* where the last transaction ended (static) */
	char               *kp_sandbox_error;
	int64_t             kp_last_sync_ms;
	struct event       *kp_resync;
	int64_t             kp_resync_at;
	int                 kp_forgotten;
};

enum kr_kind { KR_SYNC = 0, KR_TERMINATING, KR_TERMINATED, KR_ORPHAN };

enum kr_step {
	KS_READ = 0,
	KS_DECIDE,
	KS_KILL_POD,
	KS_KILL_CONTAINERS,
	KS_CREATE_SANDBOX,
	KS_EPHEMERAL,
	KS_INIT,
	KS_APP,
	KS_VERIFY,
	KS_VERIFY_CHECK, /* after the second read (kr_read_status moves to the next step) */
	KS_FINISH,
};

static const char *const kr_step_names[] = {
	"read-status",
	"decide",
	"kill-pod",
	"kill-containers",
	"create-sandbox",
	"ephemeral",
	"init",
	"app",
	"verify",
	"verify",
	"done",
};

static const char *const kr_kind_names[] = { "sync", "terminating", "terminated", "orphan" };

struct kr_rd;

struct kr_sync {
	TAILQ_ENTRY(kr_sync) entry;
	struct kuberuntime            *kr;
	struct kr_pod                 *kp; /* NULL for orphans */
	struct pw_txn                 *txn;
	enum kr_kind                   kind;
	enum kr_step                   step;
	const struct pod              *pod;   /* a reference; NULL for orphans */
	int64_t                        grace; /* override, -1 none */
	struct rt_pod_status           rt;
	struct pod_actions             acts;
	int                            have_acts;
	int                            acted; /* recovery: a call that changes the runtime */
	Runtime__V1__PodSandboxConfig *sbcfg;
	char                          *sandbox_id;
	char                          *pod_ip;
	struct strv                    pod_ips;
	size_t                         idx;
	int                            pending;
	int                            killpod_phase; /* 0 apps, 1 sidecars, 2 sandboxes */
	int64_t                        kill_started_ms;
	char                          *err;
	int                            classic_init_failed;
	const char                    *call;
	char                          *call_target;
	int64_t                        call_started_ms;
	struct kr_rd                  *rd;
	struct kr_start               *st;
	struct kr_kop                **kops;
	size_t                         nkops;
	struct event                  *kick;
	char                          *prep_err; /* kr_prep's failure */
	struct podcache_wait          *cwait;    /* recovery: waiting for the first relist */
	int                            dead;
	int                            terminal;
	void (*orphan_done)(int, void *);
	void *orphan_arg;
};

struct kr_kill {
	struct kr_sync *m;
};

TAILQ_HEAD(kr_pod_list, kr_pod);
TAILQ_HEAD(kr_sync_list, kr_sync);

struct kuberuntime {
	struct kr_ctx             kr_x;
	int                       kr_wait_relist; /* recovery: syncs wait for the first relist */
	struct kr_env             kr_env;
	struct event_base        *kr_base;
	struct cri               *kr_cri;
	struct podcache          *kr_cache;
	const struct klet_config *kr_cfg;
	char                     *kr_cgroup_root;
	char                     *kr_host_ip;
	struct kr_pod_list        kr_pods;
	struct kr_pod           **kr_podv; /* the same pods, in no order, for kr_index */
	size_t                    kr_npodv;
	size_t                    kr_podv_cap;
	struct strindex          *kr_index;        /* kr_podv by UID */
	uint64_t                  kr_errs_version; /* grows with every start error change */
	struct kr_sync_list       kr_orphans;      /* housekeeping kills in flight */
	struct kr_sync_list       kr_dead;         /* finished machines, freed on a later turn */
	struct event             *kr_reaper;
	void (*kr_resync_fn)(const char *, void *);
	void *kr_resync_arg;
	int (*kr_probe_fn)(const char *, struct probe_set *, void *);
	void *kr_probe_arg;
};

static void kr_next(struct kr_sync *);

static const char *
kr_sync_uid(const struct kr_sync *m)
{
	if (m->kp != NULL)
		return m->kp->kp_uid;
	if (m->pod != NULL)
		return m->pod->uid;
	return m->rt.uid != NULL ? m->rt.uid : "-";
}

/* The one place a machine changes step; logs the transition. */
static void
kr_sync_set_step(struct kr_sync *m, enum kr_step to)
{
	if (to < KS_READ || to > KS_FINISH)
		fatalx("%s: pod %s: bad step %d", __func__, kr_sync_uid(m), (int)to);
	if (to != m->step)
		log_v(4, "pod %s: %s step %s -> %s", kr_sync_uid(m), kr_kind_names[m->kind],
		    kr_step_names[m->step], kr_step_names[to]);
	m->step = to;
}
static void kr_sync_free(struct kr_sync *);
static void kr_cleanup_pod_dirs(struct kuberuntime *, const struct pod *);

/* Marks an in-flight call for podctl; a call that changes the runtime marks the
 * transaction as one that acted (recovery). */
static void
kr_sync_call(struct kr_sync *m, const char *call, const char *target)
{
	m->call = call;
	if (call != NULL && strcmp(call, "ListPodSandbox+ListContainers") != 0 &&
	    strcmp(call, "PodSandboxStatus") != 0)
		m->acted = 1;
	free(m->call_target);
	m->call_target = xstrdup(target);
	m->call_started_ms = call != NULL ? now_mono_ms() : 0;
}

/* ---- per-pod memory ---- */

static const char *
kr_pod_key(const void *arg, size_t i)
{
	const struct kuberuntime *kr = arg;

	return kr->kr_podv[i]->kp_uid;
}

static struct kr_pod *
kr_pod_find(struct kuberuntime *kr, const char *uid)
{
	size_t i = strindex_find(kr->kr_index, uid, kr_pod_key, kr);

	return i != STRINDEX_NONE ? kr->kr_podv[i] : NULL;
}

static void
kr_resync_fire(evutil_socket_t fd, short what, void *arg)
{
	struct kr_pod      *kp = arg;
	struct kuberuntime *kr = kp->kp_kr;

	(void)fd;
	(void)what;
	kp->kp_resync_at = 0;
	log_v(3, "pod %s: backoff expired, resync", kp->kp_uid);
	if (kr->kr_resync_fn != NULL)
		kr->kr_resync_fn(kp->kp_uid, kr->kr_resync_arg);
}

static struct kr_pod *
kr_pod_get(struct kuberuntime *kr, const char *uid)
{
	struct kr_pod *kp = kr_pod_find(kr, uid);

	if (kp != NULL) {
		kp->kp_forgotten = 0;
		return kp;
	}
	kp = xcalloc(1, sizeof(*kp));
	kp->kp_kr = kr;
	kp->kp_uid = xstrdup(uid);
	kp->kp_resync = evtimer_new(kr->kr_base, kr_resync_fire, kp);
	TAILQ_INSERT_TAIL(&kr->kr_pods, kp, kp_entry);
	if (kr->kr_npodv == kr->kr_podv_cap) {
		kr->kr_podv_cap = kr->kr_podv_cap == 0 ? 32 : 2 * kr->kr_podv_cap;
		kr->kr_podv = xreallocarray(kr->kr_podv, kr->kr_podv_cap, sizeof(*kr->kr_podv));
	}
	kp->kp_pos = kr->kr_npodv;
	kr->kr_podv[kr->kr_npodv++] = kp;
	strindex_add(kr->kr_index, kp->kp_uid, kp->kp_pos);
	return kp;
}

static void
kr_pod_free(struct kr_pod *kp)
{
	struct kuberuntime *kr = kp->kp_kr;
	struct kr_pod      *last = kr->kr_podv[--kr->kr_npodv];
	size_t              i;

	TAILQ_REMOVE(&kr->kr_pods, kp, kp_entry);
	/* The last of kr_podv takes its place. */
	strindex_remove(kr->kr_index, kp->kp_uid, kp->kp_pos);
	if (last != kp) {
		strindex_move(kr->kr_index, last->kp_uid, last->kp_pos, kp->kp_pos);
		last->kp_pos = kp->kp_pos;
		kr->kr_podv[kp->kp_pos] = last;
	}
	if (kp->kp_nerrs > 0)
		kr->kr_errs_version++; /* its start errors are gone */
	for (i = 0; i < kp->kp_nerrs; i++) {
		free(kp->kp_errs[i].container);
		free(kp->kp_errs[i].reason);
		free(kp->kp_errs[i].message);
	}
	free(kp->kp_errs);
	for (i = 0; i < kp->kp_npulls; i++)
		free(kp->kp_pulls[i].image);
	free(kp->kp_pulls);
	if (kp->kp_resync != NULL)
		event_free(kp->kp_resync);
	free(kp->kp_last_error);
	free(kp->kp_sandbox_error);
	free(kp->kp_uid);
	free(kp);
}

static void
kr_set_start_error(
    struct kr_pod *kp, const char *container, const char *reason, const char *message)
{
	size_t i;

	if (kp == NULL)
		return;
	for (i = 0; i < kp->kp_nerrs; i++) {
		if (strcmp(kp->kp_errs[i].container, container) != 0)
			continue;
		if (reason == NULL || strcmp(kp->kp_errs[i].reason, reason) != 0 ||
		    strcmp(kp->kp_errs[i].message, message != NULL ? message : "") != 0)
			kp->kp_errs_version = ++kp->kp_kr->kr_errs_version;
		free(kp->kp_errs[i].reason);
		free(kp->kp_errs[i].message);
		if (reason == NULL) {
			free(kp->kp_errs[i].container);
			kp->kp_errs[i] = kp->kp_errs[--kp->kp_nerrs];
			return;
		}
		kp->kp_errs[i].reason = xstrdup(reason);
		kp->kp_errs[i].message = xstrdup(message != NULL ? message : "");
		kp->kp_errs[i].at_ms = now_wall_ms();
		return;
	}
	if (reason == NULL)
		return;
	kp->kp_errs_version = ++kp->kp_kr->kr_errs_version;
	kp->kp_errs = xreallocarray(kp->kp_errs, kp->kp_nerrs + 1, sizeof(*kp->kp_errs));
	kp->kp_errs[kp->kp_nerrs].container = xstrdup(container);
	kp->kp_errs[kp->kp_nerrs].reason = xstrdup(reason);
	kp->kp_errs[kp->kp_nerrs].message = xstrdup(message != NULL ? message : "");
	kp->kp_errs[kp->kp_nerrs].at_ms = now_wall_ms();
	kp->kp_nerrs++;
}

static int64_t
kr_pull_fail_time(struct kr_pod *kp, const char *image)
{
	size_t i;

	for (i = 0; kp != NULL && i < kp->kp_npulls; i++)
		if (strcmp(kp->kp_pulls[i].image, image) == 0)
			return kp->kp_pulls[i].at_ms;
	return 0;
}

static void
kr_pull_fail_set(struct kr_pod *kp, const char *image, int64_t ms)
{
	size_t i;

	if (kp == NULL)
		return;
	for (i = 0; i < kp->kp_npulls; i++) {
		if (strcmp(kp->kp_pulls[i].image, image) != 0)
			continue;
		if (ms == 0) {
			free(kp->kp_pulls[i].image);
			kp->kp_pulls[i] = kp->kp_pulls[--kp->kp_npulls];
		} else {
			kp->kp_pulls[i].at_ms = ms;
		}
		return;
	}
	if (ms == 0)
		return;
	kp->kp_pulls = xreallocarray(kp->kp_pulls, kp->kp_npulls + 1, sizeof(*kp->kp_pulls));
	kp->kp_pulls[kp->kp_npulls].image = xstrdup(image);
	kp->kp_pulls[kp->kp_npulls].at_ms = ms;
	kp->kp_npulls++;
}

static void
kr_resync_after(struct kr_pod *kp, int64_t delay_ms)
{
	int64_t        at = now_mono_ms() + delay_ms;
	struct timeval tv;

	if (kp == NULL || kp->kp_resync == NULL)
		return;
	/* Keep the earliest pending resync. */
	if (kp->kp_resync_at != 0 && kp->kp_resync_at <= at)
		return;
	kp->kp_resync_at = at;
	tv = ms_to_tv(delay_ms);
	evtimer_add(kp->kp_resync, &tv);
}

/* ---- manager ---- */

static void
kr_reap(evutil_socket_t fd, short what, void *arg)
{
	struct kuberuntime *kr = arg;
	struct kr_sync     *m;

	(void)fd;
	(void)what;
	while ((m = TAILQ_FIRST(&kr->kr_dead)) != NULL) {
		TAILQ_REMOVE(&kr->kr_dead, m, entry);
		kr_sync_free(m);
	}
}

static char *
kr_guess_host_ip(void)
{
	struct ifaddrs *ifa, *i;
	char            buf[INET6_ADDRSTRLEN];
	char           *ip = NULL;

	if (getifaddrs(&ifa) == -1)
		return xstrdup("127.0.0.1");
	for (i = ifa; i != NULL && ip == NULL; i = i->ifa_next) {
		if (i->ifa_addr == NULL || i->ifa_addr->sa_family != AF_INET ||
		    (i->ifa_flags & IFF_LOOPBACK) || !(i->ifa_flags & IFF_UP))
			continue;
		if (inet_ntop(AF_INET, &((struct sockaddr_in *)(void *)i->ifa_addr)->sin_addr, buf,
		        sizeof(buf)) != NULL)
			ip = xstrdup(buf);
	}
	freeifaddrs(ifa);
	return ip != NULL ? ip : xstrdup("127.0.0.1");
}

struct kuberuntime *
kuberuntime_new(struct event_base *base, struct cri *cri, struct podcache *cache,
    const struct klet_config *cfg, struct events *events, const struct kr_options *opts)
{
	struct kuberuntime *kr = xcalloc(1, sizeof(*kr));
	struct kr_options   o;
	long                pages, psize, ncpu;

	memset(&o, 0, sizeof(o));
	if (opts != NULL)
		o = *opts;
	kr->kr_base = base;
	kr->kr_cri = cri;
	kr->kr_cache = cache;
	kr->kr_cfg = cfg;
	TAILQ_INIT(&kr->kr_pods);
	kr->kr_index = strindex_new();
	TAILQ_INIT(&kr->kr_orphans);
	TAILQ_INIT(&kr->kr_dead);
	kr->kr_cgroup_root = xstrdup(o.cgroup_root != NULL ? o.cgroup_root : "/kubepods");
	kr->kr_host_ip = o.host_ip != NULL ? xstrdup(o.host_ip) : kr_guess_host_ip();
	kr->kr_env.root_dir = cfg->root_dir;
	kr->kr_env.logs_dir = cfg->pod_logs_dir;
	kr->kr_env.resolv_conf = cfg->resolv_conf;
	kr->kr_env.cluster_domain = cfg->cluster_domain;
	kr->kr_env.cluster_dns = &cfg->cluster_dns;
	kr->kr_env.runtime_handlers = &cfg->runtime_handlers;
	kr->kr_env.cgroup_root = kr->kr_cgroup_root;
	kr->kr_env.pod_cgroup = o.pod_cgroup;
	kr->kr_env.pod_cgroup_make = o.pod_cgroup_make;
	kr->kr_env.pod_cgroup_arg = o.pod_cgroup_arg;
	kr->kr_env.node_name = cfg->node_name;
	kr->kr_env.host_ip = kr->kr_host_ip;
	ncpu = sysconf(_SC_NPROCESSORS_ONLN);
	pages = sysconf(_SC_PHYS_PAGES);
	psize = sysconf(_SC_PAGESIZE);
	kr->kr_env.node_cpu_milli = (ncpu > 0 ? ncpu : 1) * 1000;
	kr->kr_env.node_mem_milli = (pages > 0 && psize > 0) ? (int64_t)pages * psize * 1000 : 0;
	kr->kr_x.base = base;
	kr->kr_x.cri = cri;
	kr->kr_x.events = events;
	kr->kr_x.env = &kr->kr_env;
	kr->kr_x.crash_bo = backoff_new(o.crash_backoff_initial_ms, o.crash_backoff_max_ms);
	kr->kr_x.pull_bo = backoff_new(o.pull_backoff_initial_ms, o.pull_backoff_max_ms);
	kr->kr_x.timeout_ms = cfg->runtime_timeout_ms > 0 ? cfg->runtime_timeout_ms : 120000;
	kr->kr_x.pull_timeout_ms =
	    o.pull_timeout_ms > 0 ? o.pull_timeout_ms : KR_DEFAULT_PULL_TIMEOUT_MS;
	kr->kr_reaper = evtimer_new(base, kr_reap, kr);
	return kr;
}

void
kuberuntime_free(struct kuberuntime *kr)
{
	struct kr_pod  *kp;
	struct kr_sync *m;

	if (kr == NULL)
		return;
	while ((m = TAILQ_FIRST(&kr->kr_orphans)) != NULL) {
		TAILQ_REMOVE(&kr->kr_orphans, m, entry);
		kr_sync_free(m);
	}
	TAILQ_FOREACH(kp, &kr->kr_pods, kp_entry)
	{
		if (kp->kp_m != NULL) {
			m = kp->kp_m;
			kp->kp_m = NULL;
			m->kp = NULL;
			kr_sync_free(m);
		}
	}
	kr_reap(-1, 0, kr);
	while ((kp = TAILQ_FIRST(&kr->kr_pods)) != NULL)
		kr_pod_free(kp);
	free(kr->kr_podv);
	strindex_free(kr->kr_index);
	if (kr->kr_reaper != NULL)
		event_free(kr->kr_reaper);
	backoff_free(kr->kr_x.crash_bo);
	backoff_free(kr->kr_x.pull_bo);
	free(kr->kr_cgroup_root);
	free(kr->kr_host_ip);
	free(kr);
}

void
kuberuntime_set_intents(struct kuberuntime *kr, const struct kr_intents *ops)
{
	if (ops != NULL)
		kr->kr_x.intents = *ops;
	else
		memset(&kr->kr_x.intents, 0, sizeof(kr->kr_x.intents));
}

void
kuberuntime_wait_first_relist(struct kuberuntime *kr, int on)
{
	kr->kr_wait_relist = on;
}

void
kuberuntime_set_resync(struct kuberuntime *kr, void (*fn)(const char *, void *), void *arg)
{
	kr->kr_resync_fn = fn;
	kr->kr_resync_arg = arg;
}

void
kuberuntime_set_probes(
    struct kuberuntime *kr, int (*fn)(const char *uid, struct probe_set *out, void *arg), void *arg)
{
	kr->kr_probe_fn = fn;
	kr->kr_probe_arg = arg;
}

/* volumes: the configMap / secret source of the container configs. */
void
kuberuntime_set_volumes(struct kuberuntime *kr, struct volumes *v)
{
	kr->kr_env.volumes = v;
}

void
kuberuntime_set_runtime_classes(struct kuberuntime *kr,
    int (*lookup)(const char *name, const char **handler, void *arg), void *arg)
{
	kr->kr_env.rc_lookup = lookup;
	kr->kr_env.rc_arg = arg;
}

/* ---- the machine's life ---- */

static void
kr_sync_free(struct kr_sync *m)
{
	size_t i;

	if (m == NULL)
		return;
	/* Calls first: nothing may call back into what is freed below. */
	cri_cancel_owner(m->kr->kr_cri, m);
	podcache_wait_cancel(m->cwait); /* recovery */
	if (m->kick != NULL)
		event_free(m->kick);
	free(m->prep_err);
	kr_start_free(m->st);
	for (i = 0; i < m->nkops; i++)
		kr_kill_free(m->kops[i]);
	free(m->kops);
	kr_rd_free(m->rd);
	if (m->have_acts)
		pod_actions_clear(&m->acts);
	rt_pod_status_clear(&m->rt);
	kr_msg_free(m->sbcfg);
	free(m->sandbox_id);
	free(m->pod_ip);
	for (i = 0; i < m->pod_ips.n; i++)
		free(m->pod_ips.v[i]);
	free(m->pod_ips.v);
	free(m->err);
	free(m->call_target);
	pod_unref(m->pod);
	free(m);
}

/* Retires a machine: its calls are cancelled now, the memory goes on a later turn. */
static void
kr_retire(struct kr_sync *m)
{
	struct timeval tv = ms_to_tv(0);

	m->dead = 1;
	cri_cancel_owner(m->kr->kr_cri, m);
	podcache_wait_cancel(m->cwait); /* recovery */
	m->cwait = NULL;
	if (m->kick != NULL)
		event_del(m->kick);
	if (m->kp != NULL && m->kp->kp_m == m) {
		m->kp->kp_m = NULL;
		if (m->kp->kp_forgotten)
			kr_pod_free(m->kp);
		m->kp = NULL;
	}
	if (m->kind == KR_ORPHAN)
		TAILQ_REMOVE(&m->kr->kr_orphans, m, entry);
	TAILQ_INSERT_TAIL(&m->kr->kr_dead, m, entry);
	evtimer_add(m->kr->kr_reaper, &tv);
}

static void kr_fail(struct kr_sync *m, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* Keeps the first error of the transaction. */
static void
kr_fail(struct kr_sync *m, const char *fmt, ...)
{
	va_list ap;
	char   *s;

	va_start(ap, fmt);
	if (vasprintf(&s, fmt, ap) == -1)
		fatalx("%s: out of memory", __func__);
	va_end(ap);
	if (m->err == NULL)
		m->err = s;
	else
		free(s);
}

static void
kr_kick_cb(evutil_socket_t fd, short what, void *arg)
{
	(void)fd;
	(void)what;
	kr_next(arg);
}

/* Continues the machine once the running callback returns, on the loop's next round and
 * before the other events ready then (LOOP_PRI_HIGH): a new pod's sync goes on to its
 * sandbox before a relist answer, a timer or the store's end-of-turn commit that became
 * ready meanwhile (it used to wait behind them, a zero timeout among the other timers). */
static void
kr_kick(struct kr_sync *m)
{
	if (m->kick == NULL) {
		m->kick = event_new(m->kr->kr_base, -1, 0, kr_kick_cb, m);
		event_priority_set(m->kick, LOOP_PRI_HIGH);
	}
	event_active(m->kick, EV_TIMEOUT, 0);
}

static void
kr_finish(struct kr_sync *m)
{
	struct kr_pod *kp = m->kp;
	struct pw_txn *txn = m->txn;
	unsigned       flags = m->terminal ? PW_DONE_TERMINAL : 0;
	int            rc = m->err != NULL ? -1 : 0;
	char          *err = xstrdup(m->err);

	if (kp != NULL)
		kp->kp_last_step = kr_step_names[m->step];
	kr_sync_set_step(m, KS_FINISH);
	kr_sync_call(m, NULL, NULL);
	if (kp != NULL) {
		/* recovery: only what this transaction changed makes older statuses stale; a
		 * sync that changed nothing leaves the next one the cache (no per-pod reads
		 * after a restart). */
		kp->kp_last_sync_ms = now_mono_ms();
		if (m->acted || rc != 0)
			kp->kp_min_ts = kp->kp_last_sync_ms;
		free(kp->kp_last_error);
		kp->kp_last_error = xstrdup(err);
	}
	log_v(3, "pod %s: %s transaction done rc=%d%s%s", kp != NULL ? kp->kp_uid : "-",
	    kr_kind_names[m->kind], rc, err ? ": " : "", err ? err : "");
	if (m->kind == KR_ORPHAN) {
		void (*done)(int, void *) = m->orphan_done;
		void *arg = m->orphan_arg;

		kr_retire(m);
		if (done != NULL)
			done(rc, arg);
	} else {
		kr_retire(m);
		pw_txn_done(txn, rc, flags, err);
	}
	free(err);
}

/* ---- reading the pod's status from the runtime ---- */

static void
kr_read_done(struct rt_pod_status *st, int64_t t0, const char *err, void *arg)
{
	struct kr_sync *m = arg;

	m->rd = NULL;
	if (err != NULL) {
		kr_fail(m, "reading the pod's runtime status: %s", err);
		kr_finish(m);
		return;
	}
	if (m->kind != KR_ORPHAN && m->kr->kr_cache != NULL) {
		if (st->nsandboxes > 0 || st->ncontainers > 0)
			podcache_set(m->kr->kr_cache, st, t0);
		else
			podcache_delete(m->kr->kr_cache, m->pod->uid, t0);
	}
	rt_pod_status_clear(&m->rt);
	m->rt = *st;
	memset(st, 0, sizeof(*st));
	kr_sync_set_step(m, m->step + 1);
	kr_next(m);
}

/* Reads the pod's sandboxes and containers from the runtime (the kubelet's GetPodStatus),
 * then moves the machine to its next step with m->rt filled. */
static void
kr_read_status(struct kr_sync *m)
{
	const char *uid = m->pod != NULL ? m->pod->uid : m->rt.uid;

	kr_sync_call(m, "ListPodSandbox+ListContainers", NULL);
	m->rd = kr_rd_start(&m->kr->kr_x, uid, m->pod ? m->pod->name : NULL,
	    m->pod ? m->pod->ns : NULL, m, kr_read_done, m);
}

/* ---- killPod: containers concurrently, then the sandboxes ---- */

static void kr_killpod_sandboxes(struct kr_sync *);
static void kr_killpod_wave(struct kr_sync *, int);

static void
kr_kop_done(int rc, const char *err, void *arg)
{
	struct kr_sync *m = arg;

	if (rc != 0)
		kr_fail(m, "%s", err != NULL ? err : "killing a container failed");
	if (--m->pending > 0)
		return;
	if (m->step == KS_KILL_POD) {
		if (m->killpod_phase == 0)
			kr_killpod_wave(m, 1);
		else
			kr_killpod_sandboxes(m);
		return;
	}
	kr_sync_set_step(m, m->step + 1);
	kr_next(m);
}

static void
kr_add_kop(struct kr_sync *m, struct kr_kop *k)
{
	m->kops = xreallocarray(m->kops, m->nkops + 1, sizeof(*m->kops));
	m->kops[m->nkops++] = k;
}

static void
kr_stop_sb_cb(
    int code, const char *message, const Runtime__V1__StopPodSandboxResponse *resp, void *arg)
{
	struct kr_sync *m = arg;

	(void)resp;
	if (code != GRPC_OK && code != GRPC_NOT_FOUND)
		kr_fail(m, "StopPodSandbox: %s", message);
	if (--m->pending > 0)
		return;
	if (m->kind == KR_SYNC && !m->acts.create_sandbox) {
		kr_finish(m);
		return;
	}
	kr_sync_set_step(m, m->kind == KR_SYNC ? KS_CREATE_SANDBOX : KS_VERIFY);
	if (m->kind == KR_SYNC && m->err != NULL) {
		kr_finish(m);
		return;
	}
	kr_next(m);
}

static void
kr_killpod_sandboxes(struct kr_sync *m)
{
	size_t i;

	m->killpod_phase = 2;
	m->pending = 0;
	for (i = 0; i < m->rt.nsandboxes; i++) {
		Runtime__V1__StopPodSandboxRequest req =
		    RUNTIME__V1__STOP_POD_SANDBOX_REQUEST__INIT;

		req.pod_sandbox_id = m->rt.sandboxes[i].id;
		m->pending++;
		kr_sync_call(m, "StopPodSandbox", NULL);
		cri_stop_pod_sandbox(
		    m->kr->kr_cri, &req, m->kr->kr_x.timeout_ms, kr_stop_sb_cb, m, m);
	}
	if (m->pending == 0) {
		m->pending = 1;
		kr_stop_sb_cb(GRPC_OK, "", NULL, m);
	}
}

static const char *
kr_pod_ip_of(const struct rt_pod_status *rt)
{
	size_t i;

	for (i = 0; i < rt->nsandboxes; i++)
		if (rt->sandboxes[i].state == RT_SB_READY && rt->sandboxes[i].ip != NULL &&
		    rt->sandboxes[i].ip[0] != '\0')
			return rt->sandboxes[i].ip;
	return NULL;
}

/* One wave of killPod: app (and ephemeral) containers first, sidecars second (wave 1),
 * as the kubelet with sidecar containers: a proxy outlives the app it serves. */
static void
kr_killpod_wave(struct kr_sync *m, int wave)
{
	const struct rt_container *c;
	const struct container    *spec;
	int64_t                    grace = m->grace;
	size_t                     i;

	m->killpod_phase = wave;
	m->pending = 0;
	if (wave == 1 && m->pod != NULL) {
		/* Sidecars get what is left of the pod's grace period. */
		int64_t total = m->grace >= 0 ? m->grace : kr_base_grace(m->pod);
		int64_t left = total - (now_mono_ms() - m->kill_started_ms) / 1000;

		grace = left < KR_MIN_GRACE_SECONDS ? KR_MIN_GRACE_SECONDS : left;
	}
	for (i = 0; i < m->rt.ncontainers; i++) {
		c = &m->rt.containers[i];
		if (c->state == RT_EXITED)
			continue;
		spec = m->pod != NULL ? pod_find_container(m->pod, c->name) : NULL;
		if ((spec != NULL && container_is_sidecar(spec)) != (wave == 1))
			continue;
		m->pending++;
		kr_sync_call(m, "StopContainer", c->name);
		kr_add_kop(m,
		    kr_kill_start(&m->kr->kr_x, m, m->pod, spec, c->id, c->name,
		        kr_pod_ip_of(&m->rt), NULL, grace, kr_kop_done, m));
	}
	if (m->pending > 0)
		return;
	if (wave == 0)
		kr_killpod_wave(m, 1);
	else
		kr_killpod_sandboxes(m);
}

static void
kr_killpod(struct kr_sync *m)
{
	m->kill_started_ms = now_mono_ms();
	kr_killpod_wave(m, 0);
}

/* ---- SyncPod steps ---- */

static void
kr_decide(struct kr_sync *m)
{
	struct probe_set probes;
	int              have_probes = 0;
	char            *line;

	if (m->kind == KR_TERMINATING || m->kind == KR_ORPHAN) {
		kr_sync_set_step(m, KS_KILL_POD);
		return;
	}
	if (m->kind == KR_TERMINATED) {
		kr_sync_set_step(m, KS_FINISH);
		return;
	}
	if (pod_is_terminal(m->pod, &m->rt)) {
		/* Nothing will run again: the worker terminates the pod. */
		m->terminal = 1;
		kr_sync_set_step(m, KS_FINISH);
		return;
	}
	memset(&probes, 0, sizeof(probes));
	if (m->kr->kr_probe_fn != NULL)
		have_probes = m->kr->kr_probe_fn(m->pod->uid, &probes, m->kr->kr_probe_arg) == 0;
	pod_actions_compute(m->pod, &m->rt, have_probes ? &probes : NULL, &m->acts);
	m->have_acts = 1;
	if (log_verbosity() >= 3) { /* the line costs more than the decision (every sync) */
		line = pod_actions_format(m->pod, &m->acts);
		log_v(3, "pod %s/%s: %s", m->pod->ns, m->pod->name, line);
		free(line);
	}
	if (m->acts.kill_pod) {
		if (m->acts.create_sandbox && m->rt.nsandboxes > 0)
			events_pod(m->kr->kr_x.events, m->pod, NULL, EV_NORMAL, "SandboxChanged",
			    "Pod sandbox changed, it will be killed and re-created.");
		kr_sync_set_step(m, KS_KILL_POD);
	} else {
		kr_sync_set_step(m, KS_KILL_CONTAINERS);
	}
}

static void
kr_kill_containers(struct kr_sync *m)
{
	const struct kill_entry *ke;
	const struct container  *spec;
	size_t                   i;

	m->pending = 0;
	for (i = 0; i < m->acts.nkill; i++) {
		int64_t             grace = -1;
		const struct probe *pr = NULL;

		ke = &m->acts.kill[i];
		spec = pod_find_container(m->pod, ke->name);
		/* A probe's own terminationGracePeriodSeconds applies to the kills it causes,
		 * unless the pod is being deleted (the kubelet's setTerminationGracePeriod). */
		if (spec != NULL && ke->reason == KILL_REASON_LIVENESS)
			pr = spec->c_liveness;
		else if (spec != NULL && ke->reason == KILL_REASON_STARTUP)
			pr = spec->c_startup;
		if (pr != NULL && pr->pr_termination_grace.set && !m->pod->deletion_grace.set)
			grace = pr->pr_termination_grace.v;
		m->pending++;
		kr_sync_call(m, "StopContainer", ke->name);
		kr_add_kop(m,
		    kr_kill_start(&m->kr->kr_x, m, m->pod, spec, ke->container_id, ke->name,
		        kr_pod_ip_of(&m->rt), ke->message, grace, kr_kop_done, m));
	}
	if (m->pending == 0) {
		kr_sync_set_step(m, m->step + 1);
		kr_next(m);
	}
}

static void
kr_set_ips_from(struct kr_sync *m, const char *ip, char *const *extra, size_t nextra)
{
	size_t i;

	free(m->pod_ip);
	m->pod_ip = NULL;
	if (m->pod->host_network) {
		/* A host-network pod's IP is the node's. */
		m->pod_ip = xstrdup(m->kr->kr_host_ip);
	} else if (ip != NULL && ip[0] != '\0') {
		m->pod_ip = xstrdup(ip);
	}
	if (m->pod_ip == NULL)
		return;
	m->pod_ips.v = xreallocarray(m->pod_ips.v, m->pod_ips.n + 1, sizeof(char *));
	m->pod_ips.v[m->pod_ips.n++] = xstrdup(m->pod_ip);
	for (i = 0; !m->pod->host_network && i < nextra; i++) {
		m->pod_ips.v = xreallocarray(m->pod_ips.v, m->pod_ips.n + 1, sizeof(char *));
		m->pod_ips.v[m->pod_ips.n++] = xstrdup(extra[i]);
	}
}

static void
kr_sb_status_cb(
    int code, const char *message, const Runtime__V1__PodSandboxStatusResponse *resp, void *arg)
{
	struct kr_sync *m = arg;
	char          **extra = NULL;
	size_t          i, n = 0;

	if (code != GRPC_OK || resp->status == NULL) {
		kr_fail(m, "PodSandboxStatus of new sandbox: %s", message);
		kr_finish(m);
		return;
	}
	if (resp->status->network != NULL) {
		n = resp->status->network->n_additional_ips;
		extra = xcalloc(n + 1, sizeof(*extra));
		for (i = 0; i < n; i++)
			extra[i] = resp->status->network->additional_ips[i]->ip;
		kr_set_ips_from(m, resp->status->network->ip, extra, n);
		free(extra);
	} else {
		kr_set_ips_from(m, NULL, NULL, 0);
	}
	log_v(2, "pod %s/%s: sandbox %s ready, ip %s", m->pod->ns, m->pod->name, m->sandbox_id,
	    m->pod_ip ? m->pod_ip : "-");
	kr_sync_set_step(m, KS_EPHEMERAL);
	m->idx = 0;
	kr_next(m);
}

static int
kr_container_needs_ip(const struct container *c)
{
	size_t i;

	for (i = 0; i < c->c_nenv; i++)
		if (c->c_env[i].src == ENV_FIELD_REF && c->c_env[i].ref_key != NULL &&
		    (strcmp(c->c_env[i].ref_key, "status.podIP") == 0 ||
		        strcmp(c->c_env[i].ref_key, "status.podIPs") == 0))
			return 1;
	return c->c_post_start != NULL && c->c_post_start->h_kind == HANDLER_HTTP_GET &&
	    (c->c_post_start->h_host == NULL || c->c_post_start->h_host[0] == '\0');
}

/* Whether starting the pod's containers needs the new sandbox's IP: an env var from
 * status.podIP(s) or a postStart httpGet to the pod. Otherwise the sync does not wait for
 * PodSandboxStatus (the PLEG reads the IP for the pod's status on its own). */
static int
kr_pod_needs_ip(const struct pod *pod)
{
	size_t i;

	for (i = 0; i < pod->ninit_containers; i++)
		if (kr_container_needs_ip(&pod->init_containers[i]))
			return 1;
	for (i = 0; i < pod->ncontainers; i++)
		if (kr_container_needs_ip(&pod->containers[i]))
			return 1;
	for (i = 0; i < pod->nephemeral_containers; i++)
		if (kr_container_needs_ip(&pod->ephemeral_containers[i]))
			return 1;
	return 0;
}

/* What the pod's containers need on the node and its sandbox does not: the pod's cgroup
 * made and configured, and its log directory. The kubelet makes both before RunPodSandbox;
 * here a new sandbox's request leaves first and they are made once its answer has come, so
 * that neither the watch's ADDED nor a manifest waits for them before the runtime starts
 * (runc makes a missing parent cgroup for the sandbox; the pod's limits are written before
 * its first container is created). Made while runc works, they would contend with it for
 * the kernel's cgroup lock. A log directory that cannot be made fails the sync; the next
 * one makes it again. */
static int
kr_prep(struct kr_sync *m)
{
	const struct kr_env *env = &m->kr->kr_env;

	free(m->prep_err);
	m->prep_err = NULL;
	if (env->pod_cgroup_make != NULL)
		env->pod_cgroup_make(env->pod_cgroup_arg, m->pod);
	if (m->sbcfg != NULL && mkdirs(m->sbcfg->log_directory, 0755) == -1) {
		m->prep_err = xsprintf(
		    "create pod log directory %s: %s", m->sbcfg->log_directory, strerror(errno));
		return -1;
	}
	return 0;
}

static void
kr_run_sb_cb(
    int code, const char *message, const Runtime__V1__RunPodSandboxResponse *resp, void *arg)
{
	struct kr_sync                      *m = arg;
	Runtime__V1__PodSandboxStatusRequest req = RUNTIME__V1__POD_SANDBOX_STATUS_REQUEST__INIT;

	kr_intent_del(&m->kr->kr_x, m->pod->uid, "sandbox", "", m->sbcfg->metadata->attempt);
	if (code != GRPC_OK) {
		events_pod(m->kr->kr_x.events, m->pod, NULL, EV_WARNING, "FailedCreatePodSandBox",
		    "Failed to create pod sandbox: %s", message);
		free(m->kp->kp_sandbox_error);
		m->kp->kp_sandbox_error = xsprintf("FailedCreatePodSandBox: %s", message);
		kr_fail(m, "RunPodSandbox: %s", message);
		kr_finish(m);
		return;
	}
	free(m->kp->kp_sandbox_error);
	m->kp->kp_sandbox_error = NULL;
	m->sandbox_id = xstrdup(resp->pod_sandbox_id);
	if (kr_prep(m) == -1) {
		kr_fail(m, "%s", m->prep_err);
		kr_finish(m);
		return;
	}
	if (m->pod->host_network || !kr_pod_needs_ip(m->pod)) {
		kr_set_ips_from(m, NULL, NULL, 0); /* the node's for a host-network pod */
		log_v(2, "pod %s/%s: sandbox %s ready", m->pod->ns, m->pod->name, m->sandbox_id);
		kr_sync_set_step(m, KS_EPHEMERAL);
		m->idx = 0;
		kr_next(m);
		return;
	}
	req.pod_sandbox_id = m->sandbox_id;
	kr_sync_call(m, "PodSandboxStatus", NULL);
	cri_pod_sandbox_status(m->kr->kr_cri, &req, m->kr->kr_x.timeout_ms, kr_sb_status_cb, m, m);
}

static void
kr_create_sandbox(struct kr_sync *m)
{
	Runtime__V1__RunPodSandboxRequest req = RUNTIME__V1__RUN_POD_SANDBOX_REQUEST__INIT;
	const struct rt_sandbox          *sb = NULL;
	const char                       *handler;
	char                              err[1024];
	uint32_t                          attempt;
	size_t                            i;
	int                               need;

	if (!m->acts.create_sandbox) {
		for (i = 0; m->acts.sandbox_id != NULL && i < m->rt.nsandboxes; i++)
			if (strcmp(m->rt.sandboxes[i].id, m->acts.sandbox_id) == 0)
				sb = &m->rt.sandboxes[i];
		if (sb == NULL) {
			kr_fail(m, "no sandbox to start containers in");
			kr_finish(m);
			return;
		}
		attempt = sb->attempt;
	} else {
		attempt = m->acts.attempt;
	}
	/* The config goes into RunPodSandbox and every CreateContainer: a running pod's
	 * periodic sync, with nothing to start, does not build it (nor reads the host's
	 * resolv.conf for it). */
	need = m->acts.create_sandbox ||
	    m->acts.nephemeral_start + m->acts.ninit_start + m->acts.nstart > 0;
	m->sbcfg =
	    need ? kr_sandbox_config(&m->kr->kr_env, m->pod, attempt, err, sizeof(err)) : NULL;
	if (need && m->sbcfg == NULL) {
		events_pod(m->kr->kr_x.events, m->pod, NULL, EV_WARNING, "FailedCreatePodSandBox",
		    "Failed to generate sandbox config: %s", err);
		kr_fail(m, "sandbox config: %s", err);
		kr_finish(m);
		return;
	}
	if (!m->acts.create_sandbox) {
		if (kr_prep(m) == -1) {
			kr_fail(m, "%s", m->prep_err);
			kr_finish(m);
			return;
		}
		m->sandbox_id = xstrdup(sb->id);
		kr_set_ips_from(m, sb->ip, sb->extra_ips, sb->nextra_ips);
		kr_sync_set_step(m, KS_EPHEMERAL);
		m->idx = 0;
		kr_next(m);
		return;
	}
	if (kr_runtime_handler(&m->kr->kr_env, m->pod, &handler, err, sizeof(err)) == -1) {
		events_pod(m->kr->kr_x.events, m->pod, NULL, EV_WARNING, "FailedCreatePodSandBox",
		    "Failed to create pod sandbox: %s", err);
		free(m->kp->kp_sandbox_error);
		m->kp->kp_sandbox_error = xsprintf("FailedCreatePodSandBox: %s", err);
		kr_fail(m, "%s", err);
		kr_finish(m);
		return;
	}
	if (((m->pod->dns_policy == DNS_CLUSTER_FIRST && !m->pod->host_network) ||
	        m->pod->dns_policy == DNS_CLUSTER_FIRST_WITH_HOST_NET) &&
	    (m->kr->kr_env.cluster_dns == NULL || m->kr->kr_env.cluster_dns->n == 0))
		events_pod(m->kr->kr_x.events, m->pod, NULL, EV_WARNING, "MissingClusterDNS",
		    "pod: \"%s_%s(%s)\". kubelet does not have ClusterDNS IP configured and "
		    "cannot create Pod using \"ClusterFirst\" policy. Falling back to "
		    "\"Default\" policy.",
		    m->pod->name, m->pod->ns, m->pod->uid);
	req.config = m->sbcfg;
	req.runtime_handler = (char *)handler;
	kr_intent_put(&m->kr->kr_x, m->pod->uid, "sandbox", "", attempt);
	kr_sync_call(m, "RunPodSandbox", NULL);
	cri_run_pod_sandbox(m->kr->kr_cri, &req, m->kr->kr_x.timeout_ms, kr_run_sb_cb, m, m);
	log_v(2, "pod %s/%s: creating sandbox attempt %u (RunPodSandbox sent)", m->pod->ns,
	    m->pod->name, attempt);
}

/* A start's progress: the call in flight, for podctl. */
static void
kr_start_call_cb(const char *call, const char *target, void *arg)
{
	kr_sync_call(arg, call, target);
}

static void
kr_start_done(const struct kr_start_result *r, void *arg)
{
	struct kr_sync         *m = arg;
	struct kr_start        *st = m->st; /* r points into it: free it last */
	struct kr_pod          *kp = m->kp;
	const struct container *c;
	int                     rc = r->rc;
	const char             *err = r->err;

	m->st = NULL;
	switch (m->step) {
	case KS_EPHEMERAL:
		c = &m->pod->ephemeral_containers[m->acts.ephemeral_start[m->idx]];
		break;
	case KS_INIT:
		c = &m->pod->init_containers[m->acts.init_start[m->idx]];
		break;
	case KS_APP:
		c = &m->pod->containers[m->acts.start[m->idx]];
		break;
	default:
		fatalx("%s: bad step %d", __func__, m->step);
	}
	/* The pod's memory takes what the start learnt, even when the transaction was
	 * cancelled meanwhile (the pod is then found by its UID). */
	if (kp == NULL && m->pod != NULL)
		kp = kr_pod_find(m->kr, m->pod->uid);
	if (r->reason != NULL)
		kr_set_start_error(kp, c->c_name, r->reason, r->message);
	else if (r->clear_error)
		kr_set_start_error(kp, c->c_name, NULL, NULL);
	if (r->pull == KR_PULL_FAILED)
		kr_pull_fail_set(kp, c->c_image, r->pull_failed_ms);
	else if (r->pull == KR_PULL_OK)
		kr_pull_fail_set(kp, c->c_image, 0);
	if (r->resync_ms >= 0)
		kr_resync_after(kp, r->resync_ms);
	if (rc < 0) {
		kr_fail(m, "container %s: %s", c->c_name, err != NULL ? err : "start failed");
		/* A classic init container that cannot start holds back the rest. */
		if (m->step == KS_INIT && !container_is_sidecar(c))
			m->classic_init_failed = 1;
	}
	kr_start_free(st);
	m->idx++;
	kr_next(m);
}

static void
kr_start_one(struct kr_sync *m, const struct container *c)
{
	struct kr_start_args a;

	memset(&a, 0, sizeof(a));
	a.pod = m->pod;
	a.c = c;
	a.rt = &m->rt;
	a.sandbox_id = m->sandbox_id;
	a.sandbox_config = m->sbcfg;
	a.pod_ip = m->pod_ip != NULL ? m->pod_ip : "";
	a.pod_ips = &m->pod_ips;
	a.pull_failed_ms = c->c_image != NULL ? kr_pull_fail_time(m->kp, c->c_image) : 0;
	m->st = kr_start_container(&m->kr->kr_x, m, &a, kr_start_call_cb, kr_start_done, m);
}

/* recovery: 1 when a container of rt runs (or its state is unknown), else 0. */
static int
kr_has_live_containers(const struct rt_pod_status *rt)
{
	size_t i;

	for (i = 0; i < rt->ncontainers; i++)
		if (rt->containers[i].state == RT_RUNNING || rt->containers[i].state == RT_UNKNOWN)
			return 1;
	return 0;
}

/* recovery: the first relist filled the cache; KS_READ reads it now. */
static void
kr_first_relist(void *arg)
{
	struct kr_sync *m = arg;

	m->cwait = NULL;
	if (!m->dead)
		kr_next(m);
}

/* The machine: runs steps until one waits for a callback. */
static void
kr_next(struct kr_sync *m)
{
	if (m->dead)
		return;
	for (;;) {
		switch (m->step) {
		case KS_READ: {
			const struct rt_pod_status *st = NULL;
			int64_t min = m->kp != NULL && m->kp->kp_min_ts > 0 ? m->kp->kp_min_ts : 1;

			/* recovery: before the first relist (a restart), wait for it instead of
			 * reading the runtime pod by pod: resuming N pods costs list calls only. */
			if (m->kind != KR_TERMINATING && m->kr->kr_wait_relist &&
			    m->kr->kr_cache != NULL && m->pod != NULL &&
			    podcache_time(m->kr->kr_cache) == 0) {
				m->cwait = podcache_wait_newer(
				    m->kr->kr_cache, m->pod->uid, 1, kr_first_relist, m);
				return;
			}
			/* A status older than our own last action would mislead: read the
			 * runtime ourselves unless the cache is fresh enough. */
			if (m->kind != KR_TERMINATING && m->kr->kr_cache != NULL &&
			    m->pod != NULL &&
			    podcache_get_newer_than(m->kr->kr_cache, m->pod->uid, min, &st)) {
				rt_pod_status_clear(&m->rt);
				memset(&m->rt, 0, sizeof(m->rt));
				if (st != NULL)
					rt_pod_status_copy(&m->rt, st);
				kr_sync_set_step(m, KS_DECIDE);
				continue;
			}
			kr_read_status(m);
			return;
		}
		case KS_DECIDE:
			kr_decide(m);
			continue;
		case KS_KILL_POD:
			kr_killpod(m);
			return;
		case KS_KILL_CONTAINERS:
			if (m->err != NULL) {
				kr_finish(m);
				return;
			}
			kr_kill_containers(m);
			return;
		case KS_CREATE_SANDBOX:
			if (m->err != NULL) {
				kr_finish(m);
				return;
			}
			/* volumes: objects or tokens never answered yet: end here, the pod is
			 * kicked when they arrive (the kubelet waits for its volumes). */
			if (m->pod != NULL && volumes_pod_waiting(m->kr->kr_env.volumes, m->pod)) {
				kr_finish(m);
				return;
			}
			m->idx = 0;
			kr_create_sandbox(m);
			return;
		case KS_EPHEMERAL:
			if (m->idx < m->acts.nephemeral_start) {
				kr_start_one(m,
				    &m->pod->ephemeral_containers[m->acts.ephemeral_start[m->idx]]);
				return;
			}
			kr_sync_set_step(m, KS_INIT);
			m->idx = 0;
			continue;
		case KS_INIT:
			if (!m->classic_init_failed && m->idx < m->acts.ninit_start) {
				kr_start_one(
				    m, &m->pod->init_containers[m->acts.init_start[m->idx]]);
				return;
			}
			kr_sync_set_step(m, KS_APP);
			m->idx = 0;
			if (m->classic_init_failed) {
				kr_finish(m);
				return;
			}
			continue;
		case KS_APP:
			if (m->idx < m->acts.nstart) {
				kr_start_one(m, &m->pod->containers[m->acts.start[m->idx]]);
				return;
			}
			kr_finish(m);
			return;
		case KS_VERIFY:
			if (m->kind == KR_TERMINATING && m->err == NULL) {
				/* Read again: nothing may still run after a successful kill. */
				kr_read_status(m);
				return;
			}
			kr_finish(m);
			return;
		case KS_VERIFY_CHECK:
			/* recovery: a container created but never started (the daemon died
			 * between CreateContainer and StartContainer) does not run, and
			 * StopContainer leaves it CREATED: it must not fail the kill. */
			if (kr_has_live_containers(&m->rt))
				kr_fail(m, "containers still running after a successful kill");
			kr_finish(m);
			return;
		case KS_FINISH:
			if (m->kind == KR_TERMINATED)
				kr_cleanup_pod_dirs(m->kr, m->pod);
			kr_finish(m);
			return;
		default:
			fatalx("%s: pod %s: bad step %d", __func__, m->kp ? m->kp->kp_uid : "-",
			    m->step);
		}
	}
}

/* ---- directories ---- */

/* Removes ROOT/pods/UID (emptyDir volumes, termination-message files), after unmounting
 * the tmpfs of its secret and projected volumes. The log directory stays for `logs` until
 * GC. */
static void
kr_cleanup_pod_dirs(struct kuberuntime *kr, const struct pod *pod)
{
	char *dir;

	if (pod == NULL || (dir = kuberuntime_pod_dir(kr->kr_env.root_dir, pod->uid)) == NULL)
		return; /* a UID that is no file name: nothing of it can be there */
	if (access(dir, F_OK) == 0) {
		(void)vol_unmount_under(dir); /* secret volumes' tmpfs: rmtree stays on one fs */
		(void)rmtree(dir);
		log_v(2, "pod %s/%s: removed %s", pod->ns, pod->name, dir);
	}
	free(dir);
}

/* ---- the syncer ---- */

static struct kr_sync *
kr_sync_new(struct kuberuntime *kr, struct pw_txn *txn, const struct pod *pod, enum kr_kind kind)
{
	struct kr_sync *m = xcalloc(1, sizeof(*m));

	m->kr = kr;
	m->txn = txn;
	m->kind = kind;
	m->grace = -1;
	m->pod = pod_ref(pod);
	m->kp = kr_pod_get(kr, pod->uid);
	if (m->kp->kp_m != NULL) {
		/* podworkers runs one transaction per pod: a leftover is a broken invariant
		 * unless it was cancelled; be safe and retire it. */
		log_warnx("%s: pod %s: a machine was still attached", __func__, pod->uid);
		kr_retire(m->kp->kp_m);
	}
	m->kp->kp_m = m;
	return m;
}

static void
kr_syncer_pod(void *arg, struct pw_txn *txn, const struct pod *pod, enum pw_update_type t)
{
	struct kr_sync *m = kr_sync_new(arg, txn, pod, KR_SYNC);

	(void)t;
	log_v(3, "pod %s/%s: sync", pod->ns, pod->name);
	kr_kick(m);
}

static void
kr_sync_terminating(void *arg, struct pw_txn *txn, const struct pod *pod, int64_t grace)
{
	struct kr_sync *m = kr_sync_new(arg, txn, pod, KR_TERMINATING);

	m->grace = grace >= 0 ? grace : -1;
	log_v(2, "pod %s/%s: terminating with %" PRId64 " s grace", pod->ns, pod->name, grace);
	kr_kick(m);
}

static void
kr_sync_terminated(void *arg, struct pw_txn *txn, const struct pod *pod)
{
	struct kr_sync *m = kr_sync_new(arg, txn, pod, KR_TERMINATED);

	kr_sync_set_step(m, KS_FINISH);
	log_v(2, "pod %s/%s: terminated, cleaning up", pod->ns, pod->name);
	kr_kick(m);
}

static void
kr_cancel(void *arg, struct pw_txn *txn)
{
	struct kuberuntime *kr = arg;
	struct kr_pod      *kp;

	TAILQ_FOREACH(kp, &kr->kr_pods, kp_entry)
	{
		if (kp->kp_m != NULL && kp->kp_m->txn == txn) {
			log_v(2, "pod %s: transaction cancelled", kp->kp_uid);
			kr_retire(kp->kp_m);
			return;
		}
	}
}

void
kuberuntime_syncer(struct kuberuntime *kr, struct pw_syncer *out)
{
	memset(out, 0, sizeof(*out));
	out->sync_pod = kr_syncer_pod;
	out->sync_terminating = kr_sync_terminating;
	out->sync_terminated = kr_sync_terminated;
	out->cancel = kr_cancel;
	out->state_changed = NULL;
	out->arg = kr;
}

/* ---- views ---- */

int
kuberuntime_start_error(
    struct kuberuntime *kr, const char *uid, const char *container, struct kr_start_error *out)
{
	struct kr_pod *kp = kr_pod_find(kr, uid);
	size_t         i;

	for (i = 0; kp != NULL && i < kp->kp_nerrs; i++) {
		if (strcmp(kp->kp_errs[i].container, container) != 0)
			continue;
		out->container = kp->kp_errs[i].container;
		out->reason = kp->kp_errs[i].reason;
		out->message = kp->kp_errs[i].message;
		out->at_ms = kp->kp_errs[i].at_ms;
		return 0;
	}
	return -1;
}

uint64_t
kuberuntime_start_errors_version(struct kuberuntime *kr, const char *uid)
{
	struct kr_pod *kp;

	if (uid == NULL)
		return kr->kr_errs_version;
	kp = kr_pod_find(kr, uid);
	return kp != NULL && kp->kp_nerrs > 0 ? kp->kp_errs_version : 0;
}

void
kuberuntime_foreach_start_error(struct kuberuntime *kr, const char *uid,
    void (*cb)(const struct kr_start_error *, void *), void        *arg)
{
	struct kr_pod        *kp = kr_pod_find(kr, uid);
	struct kr_start_error e;
	size_t                i;

	for (i = 0; kp != NULL && i < kp->kp_nerrs; i++) {
		e.container = kp->kp_errs[i].container;
		e.reason = kp->kp_errs[i].reason;
		e.message = kp->kp_errs[i].message;
		e.at_ms = kp->kp_errs[i].at_ms;
		cb(&e, arg);
	}
}

static void
kr_view(const struct kr_pod *kp, struct kr_pod_view *v)
{
	const struct kr_sync *m = kp->kp_m;

	memset(v, 0, sizeof(*v));
	v->uid = kp->kp_uid;
	v->sandbox_error = kp->kp_sandbox_error;
	v->last_error = kp->kp_last_error;
	v->last_step = kp->kp_last_step;
	v->nstart_errors = kp->kp_nerrs;
	v->last_sync_ms = kp->kp_last_sync_ms;
	if (m == NULL)
		return;
	v->machine = kr_kind_names[m->kind];
	v->step = kr_step_names[m->step];
	v->call = m->call;
	v->call_target = m->call_target;
	v->call_started_ms = m->call_started_ms;
	v->sandbox_id = m->sandbox_id;
}

int
kuberuntime_get(struct kuberuntime *kr, const char *uid, struct kr_pod_view *out)
{
	struct kr_pod *kp = kr_pod_find(kr, uid);

	if (kp == NULL)
		return -1;
	kr_view(kp, out);
	return 0;
}

void
kuberuntime_foreach(
    struct kuberuntime *kr, void (*cb)(const struct kr_pod_view *, void *), void *arg)
{
	struct kr_pod     *kp;
	struct kr_pod_view v;

	TAILQ_FOREACH(kp, &kr->kr_pods, kp_entry)
	{
		kr_view(kp, &v);
		cb(&v, arg);
	}
}

void
kuberuntime_forget(struct kuberuntime *kr, const char *uid)
{
	struct kr_pod *kp = kr_pod_find(kr, uid);

	/* Old backoff entries go with their pods (crash-loop keys use wall time). */
	backoff_gc(kr->kr_x.crash_bo, now_wall_ms());
	backoff_gc(kr->kr_x.pull_bo, now_mono_ms());
	if (kp == NULL)
		return;
	if (kp->kp_m != NULL) {
		/* Its worker still waits for it: keep the memory until it ends. */
		kp->kp_forgotten = 1;
		return;
	}
	kr_pod_free(kp);
}

/* ---- housekeeping kills ---- */

static void
kr_orphan_done(int rc, void *arg)
{
	struct kr_kill *k = arg;

	(void)rc;
	(void)k;
}

struct kr_kill *
kuberuntime_kill_running(struct kuberuntime *kr, const struct rt_pod_status *rt, int64_t grace,
    void (*done)(int, void *), void *arg)
{
	struct kr_sync *m = xcalloc(1, sizeof(*m));

	m->kr = kr;
	m->kind = KR_ORPHAN;
	m->grace = grace;
	rt_pod_status_copy(&m->rt, rt);
	kr_sync_set_step(m, KS_KILL_POD);
	m->orphan_done = done != NULL ? done : kr_orphan_done;
	m->orphan_arg = arg;
	TAILQ_INSERT_TAIL(&kr->kr_orphans, m, entry);
	kr_kick(m);
	return (struct kr_kill *)m;
}

void
kuberuntime_kill_cancel(struct kr_kill *k)
{
	struct kr_sync *m = (struct kr_sync *)k;

	if (m == NULL || m->dead)
		return;
	m->orphan_done = NULL;
	kr_retire(m);
}
