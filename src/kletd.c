/* kletd.c — the node agent: flags, wiring, the loop's periodic tasks, signals, shutdown. */
#include <sys/file.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/types.h>

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <event2/event.h>

#include "api/bootstrap.h"
#include "api/join.h" /* api */
#include "api/node.h" /* api: status.images */
#include "core/config.h"
#include "core/heap.h"
#include "cri/cri.h"
#include "ctl/ctl.h" /* podctl */
#include "node/events.h"
#include "kubelet/housekeeping.h"
#include "logic/containergc.h"
#include "kuberuntime/kuberuntime.h"
#include "core/log.h"
#include "node/cgroups.h"
#include "node/eviction.h"
#include "node/imagegc.h"
#include "node/logrotate.h"
#include "node/nodeshutdown.h"
#include "core/loop.h"
#include "node/pleg.h"
#include "pod/pod.h"
#include "node/podcache.h"
#include "logic/admit.h"
#include "node/nodeinfo.h"
#include "node/podconfig.h"
#include "node/podworkers.h"
#include "kubelet/recovery.h" /* recovery */
#include "prober/prober.h"    /* prober */
#include "server/server.h"    /* server: the node's HTTPS server */
#include "node/source_file.h"
#include "store/store.h" /* store */
#include "core/sdnotify.h"
#include "core/util.h"

struct kletd {
	struct klet_config   k_cfg;
	struct loop         *k_loop;
	struct store        *k_store; /* store: <root-dir>/klet.db */
	struct events       *k_events;
	struct cri          *k_cri;
	struct podcache     *k_cache;
	struct pleg         *k_pleg;
	struct kuberuntime  *k_kr;
	struct podworkers   *k_workers;
	struct podconfig    *k_config;
	struct source_file  *k_file;
	struct housekeeping *k_hk;
	struct api_join     *k_join;          /* api: --kubeconfig: watch, status, node */
	struct prober       *k_prober;        /* prober: liveness, readiness, startup probes */
	int                  k_prober_synced; /* prober: its pods follow these versions */
	uint64_t             k_prober_cache;
	uint64_t             k_prober_workers;
	struct logrotate    *k_logrotate; /* container log rotation */
	struct ctl          *k_ctl;       /* podctl: the read-only inspection socket */
	struct server       *k_server;    /* server: :10250, healthz, logs, metrics */
	struct loop_task    *k_relist_task;
	size_t               k_logged_pods;
	int64_t              k_relist_logged_ms;
	int                  k_pleg_unhealthy;
	int                  k_lock_fd;
	int                  k_stopping;
	int64_t              k_started_ms;
	struct recovery     *k_recovery; /* recovery: the store rows a restart resumes from */
	unsigned             k_hk_runs;
	uint64_t             k_hk_commits;  /* the store's commits at the last housekeeping */
	uint64_t             k_dr_commits;  /* ... and at the last drop (heap_drop) */
	int                  k_root_ro;     /* --root-dir was read-only at start */
	char                *k_kubepods;    /* CGROUP-ROOT/kubepods: the pods' cgroup parent */
	struct nodeinfo      k_nodeinfo;    /* capacity, allocatable, pressure (admission) */
	int64_t              k_nodeinfo_ms; /* when it was sampled */
	int                  k_admitted;    /* a pod was admitted since */
	struct admit_taint  *k_taints;      /* --register-with-taints, for admission */
	struct cgroups      *k_cgroups;     /* --cgroups-per-qos: QoS and pod cgroups */
	struct pw_syncer     k_inner;       /* kuberuntime's syncer, wrapped by k_cgroups */
	int64_t              k_pods_memory; /* capacity - reserved: kubepods' memory limit */
	struct eviction     *k_eviction;    /* the eviction manager */
	struct imagegc      *k_imagegc;     /* image GC: images, image file system */
	struct nodeshutdown *k_shutdown;    /* graceful node shutdown; NULL: off */
	struct bootstrap    *k_certreq;     /* --rotate-certificates: a renewal in flight */
	struct event        *k_cert_timer;  /* fires at k_cert_due_s */
	int64_t              k_cert_due_s;  /* when the client certificate is renewed (Unix s) */
	int                  k_certreq_done;
	int                  k_boot_state; /* bootstrap at start: 0 running, 1 done, -1 failed */
};

/* Prepares the root dir and takes its lock so that two daemons never share one state. */
static int
kletd_prepare_root(struct kletd *k)
{
	const char *root = k->k_cfg.root_dir;
	struct stat st;
	char       *lock;

	if (mkdirs(root, 0700) == -1) {
		log_error("--root-dir %s: cannot create: %s", root, strerror(errno));
		return -1;
	}
	if (stat(root, &st) == -1 || !S_ISDIR(st.st_mode)) {
		log_error("--root-dir %s: not a directory", root);
		return -1;
	}
	if (access(root, W_OK) == -1) {
		if (errno != EROFS) {
			log_error("--root-dir %s: not writable: %s", root, strerror(errno));
			return -1;
		}
		/* A file system remounted read-only after errors: the pods keep running, the
		 * store runs from memory (degraded) until it can write again. */
		log_error("--root-dir %s: read-only file system: running degraded, new pods "
		          "cannot get their directories until it is writable",
		    root);
		k->k_root_ro = 1;
	}
	lock = xsprintf("%s/kletd.lock", root);
	k->k_lock_fd = open(lock, O_RDWR | O_CREAT | O_CLOEXEC, 0600);
	if (k->k_lock_fd == -1 && errno == EROFS)
		k->k_lock_fd = open(lock, O_RDONLY | O_CLOEXEC); /* flock works on it */
	if (k->k_lock_fd == -1 && k->k_root_ro && errno == ENOENT) {
		log_warnx(
		    "%s: cannot be created on a read-only file system; running unlocked", lock);
		free(lock);
		return 0;
	}
	if (k->k_lock_fd == -1) {
		log_error("%s: %s", lock, strerror(errno));
		free(lock);
		return -1;
	}
	if (flock(k->k_lock_fd, LOCK_EX | LOCK_NB) == -1) {
		log_error(
		    "--root-dir %s: another kletd is running with this root dir (%s is locked)",
		    root, lock);
		free(lock);
		return -1;
	}
	free(lock);
	return 0;
}

/* prober: one worker per running container and probe; pods not in SYNC stop probing. */
/* systemd: one notification (READY, STATUS, WATCHDOG, STOPPING); an error is logged once. */
#define kletd_notify(...)                                                                          \
	do {                                                                                       \
		static int kn_logged;                                                              \
		if (sdnotify(__VA_ARGS__) == -1 && !kn_logged++)                                   \
			log_warn("systemd notify socket %s", getenv("NOTIFY_SOCKET"));             \
	} while (0)

static void
kletd_watchdog(void *arg)
{
	(void)arg;
	kletd_notify("WATCHDOG=1"); /* from the loop: a stuck loop stops these */
}

static void
kletd_prober_pod(const struct pw_view *v, void *arg)
{
	struct kletd *k = arg;

	prober_sync_pod(
	    k->k_prober, v->pod, podcache_get(k->k_cache, v->uid, NULL), v->state == PW_SYNC);
}

/* The probe workers follow the pods' workers and the runtime's view: nothing to do while
 * neither changed (the sync of every pod is the same as the last one). */
static void
kletd_prober_sync(struct kletd *k)
{
	uint64_t cache, workers;

	if (k->k_prober == NULL || k->k_workers == NULL)
		return;
	cache = podcache_generation(k->k_cache);
	workers = podworkers_version(k->k_workers);
	if (k->k_prober_synced && cache == k->k_prober_cache && workers == k->k_prober_workers)
		return;
	podworkers_foreach(k->k_workers, kletd_prober_pod, k);
	prober_sweep(k->k_prober);
	k->k_prober_synced = 1;
	k->k_prober_cache = cache;
	k->k_prober_workers = workers;
}

/* prober: kuberuntime reads the results of a pod's probes when it decides. */
static int
kletd_probes(const char *uid, struct probe_set *out, void *arg)
{
	struct kletd *k = arg;

	return prober_probe_states(k->k_prober, uid, out);
}

/* api: the probe results' version (NULL uid: any pod's), so unchanged statuses are skipped. */
static uint64_t
kletd_probes_version(const char *uid, void *arg)
{
	struct kletd *k = arg;

	return k->k_prober != NULL ? prober_version(k->k_prober, uid) : 0;
}

static void
kletd_relist_done(int rc, void *arg)
{
	struct kletd     *k = arg;
	struct pleg_stats st;
	int64_t           now = now_mono_ms();

	if (rc != 0)
		return;
	loop_note("relist done");
	/* recovery: the first relist with every source's initial set seen ends the recovery:
	 * housekeeping kills at once the restored workers of pods removed while the daemon
	 * was down (their grace runs from the original removal, not 2 s later). */
	if (recovery_relisted(k->k_recovery, podconfig_sources_ready(k->k_config), k->k_hk))
		kletd_notify("READY=1\nSTATUS=running %zu pods; recovered in %lldms",
		    podworkers_count(k->k_workers),
		    (long long)*recovery_recovered_ms(k->k_recovery));
	kletd_prober_sync(k);         /* prober: workers follow the fresh runtime view */
	server_relisted(k->k_server); /* server: PLEG metrics */
	api_join_relisted(k->k_join); /* api: statuses from the fresh runtime view */
	pleg_stats(k->k_pleg, &st);
	/* At -v=2 when the number of pods changes, else every 10 s. */
	if (st.pods != k->k_logged_pods || now - k->k_relist_logged_ms >= 10000) {
		log_v(2,
		    "relist pods=%zu containers=%zu sandboxes=%zu duration=%lldus "
		    "max=%lldus status_calls=%zu",
		    st.pods, st.containers, st.sandboxes, (long long)st.last_duration_us,
		    (long long)st.max_duration_us, st.status_calls);
		k->k_logged_pods = st.pods;
		k->k_relist_logged_ms = now;
	}
	loop_note(NULL);
}

static void
kletd_relist(void *arg)
{
	struct kletd *k = arg;

	if (k->k_pleg == NULL || !cri_ready(k->k_cri))
		return;
	pleg_relist(k->k_pleg, kletd_relist_done, k);
}

static void
kletd_sync(void *arg)
{
	struct kletd *k = arg;

	if (k->k_workers != NULL)
		podworkers_sync_due(k->k_workers, now_mono_ms());
}

static void
kletd_pleg_event(const struct pleg_event *ev, void *arg)
{
	struct kletd *k = arg;

	if (ev->type == PLEG_CONTAINER_STARTED) /* server: started counters */
		server_started(k->k_server, ev->sandbox);
	/* As the kubelet: ContainerChanged (created / unknown) is no reason to sync. */
	if (ev->type != PLEG_CONTAINER_CHANGED)
		podworkers_kick(k->k_workers, ev->uid);
}

/* housekeeping removes an exited container only once the PLEG reported its exit. */
static int
kletd_exit_known(const char *id, void *arg)
{
	struct kletd *k = arg;

	return k->k_pleg == NULL || pleg_exit_reported(k->k_pleg, id);
}

static void
kletd_cri_state(struct cri *cri, int ready, const char *reason, void *arg)
{
	struct kletd   *k = arg;
	struct cri_info info;

	if (ready) {
		cri_info(cri, &info);
		log_info("container runtime ready: %s %s (CRI %s)",
		    info.runtime_name != NULL ? info.runtime_name : "?",
		    info.runtime_version != NULL ? info.runtime_version : "?",
		    info.runtime_api_version != NULL ? info.runtime_api_version : "?");
		if (k->k_relist_task != NULL)
			loop_task_kick(k->k_relist_task);
		/* Its first pass at the start waited for the runtime: the node's images are
		 * listed now, not at the first detection period (30 s). */
		imagegc_runtime_ready(k->k_imagegc);
		if (*recovery_recovered_ms(k->k_recovery) < 0)
			kletd_notify(
			    "STATUS=container runtime ready; waiting for the first relist");
		api_join_runtime(
		    k->k_join, 1, NULL, info.runtime_name, info.runtime_version); /* api */
	} else {
		log_warnx("container runtime not ready: %s; pods wait for it",
		    reason != NULL ? reason : "unknown");
		kletd_notify(
		    "STATUS=container runtime not ready: %s", reason != NULL ? reason : "unknown");
		api_join_runtime(k->k_join, 0, reason, NULL, NULL); /* api */
	}
}

static void
kletd_resync(const char *uid, void *arg)
{
	struct kletd *k = arg;

	podworkers_kick(k->k_workers, uid);
}

/* The merged update stream (the kubelet's syncLoopIteration configCh branch). */
static void
kletd_pod_update(enum pod_op op, const struct pod *pod, const char *source, void *arg)
{
	struct kletd  *k = arg;
	struct pw_view v;

	(void)source;
	switch (op) {
	case POD_OP_ADD:
		recovery_put_pod(k->k_recovery, k->k_config, pod);
		podworkers_update(k->k_workers, pod, PW_UPDATE_CREATE, -1);
		break;
	case POD_OP_UPDATE:
	case POD_OP_DELETE:
		/* A deletion is an update: the worker terminates with the deletion grace. */
		recovery_put_pod(k->k_recovery, k->k_config, pod);
		podworkers_update(k->k_workers, pod, PW_UPDATE_UPDATE, -1);
		break;
	case POD_OP_RECONCILE:
		recovery_put_pod(k->k_recovery, k->k_config, pod);
		break;
	case POD_OP_REMOVE:
		/* The stored spec stays until the worker is forgotten: a restart in between
		 * resumes the termination. A pod that never had a worker (rejected) just goes;
		 * housekeeping still kills anything of it found in the runtime. */
		if (podworkers_get(k->k_workers, pod->uid, &v) == -1)
			store_forget_pod(k->k_store, pod->uid);
		else
			podworkers_update(k->k_workers, pod, PW_UPDATE_KILL, -1);
		api_join_pod_removed(k->k_join, pod->uid); /* api */
		break;
	case POD_OP_REJECT:
		recovery_put_pod(k->k_recovery, k->k_config, pod);
		break;
	}
}

static int
kletd_pod_active(const char *uid, void *arg)
{
	struct kletd  *k = arg;
	struct pw_view v;

	if (k->k_workers == NULL || podworkers_get(k->k_workers, uid, &v) == -1)
		return 1;
	return v.state != PW_FINISHED;
}

/* kletd_pod_active's answers change only when a worker enters or leaves FINISHED (a pod
 * without a worker is active, as one in any other state). */
static uint64_t
kletd_pod_active_version(void *arg)
{
	struct kletd *k = arg;

	return k->k_workers == NULL ? 0 : podworkers_finished_version(k->k_workers);
}

/* cgroups: a pod counts in its QoS tier from its first sync; its cgroup is made and
 * configured by kuberuntime (kletd_cg_make) before the pod's containers (the kubelet's
 * SyncPod: pcm.EnsureExists), once a new sandbox's answer has come; a terminated pod leaves
 * its QoS tier. */
static void
kletd_cg_sync_pod(void *arg, struct pw_txn *txn, const struct pod *pod, enum pw_update_type t)
{
	struct kletd *k = arg;

	cgroups_pod_note(k->k_cgroups, pod);
	k->k_inner.sync_pod(k->k_inner.arg, txn, pod, t);
}

static void
kletd_cg_sync_terminated(void *arg, struct pw_txn *txn, const struct pod *pod)
{
	struct kletd *k = arg;

	cgroups_pod_forget(k->k_cgroups, pod->uid);
	k->k_inner.sync_terminated(k->k_inner.arg, txn, pod);
}

static void
kletd_cg_sync_terminating(void *arg, struct pw_txn *txn, const struct pod *pod, int64_t grace)
{
	struct kletd *k = arg;

	k->k_inner.sync_terminating(k->k_inner.arg, txn, pod, grace);
}

static void
kletd_cg_cancel(void *arg, struct pw_txn *txn)
{
	struct kletd *k = arg;

	k->k_inner.cancel(k->k_inner.arg, txn);
}

static const char *
kletd_cg_name(void *arg, const struct pod *pod, char *buf, size_t len)
{
	return cgroups_pod_name(arg, pod, buf, len);
}

static int
kletd_cg_make(void *arg, const struct pod *pod)
{
	return cgroups_pod_ensure(arg, pod);
}

/* eviction: the pod is killed (1 s for a hard threshold) and reported Failed / Evicted. */
static void
kletd_evict(void *arg, const struct pod *pod, int64_t grace_s, const char *message)
{
	struct kletd     *k = arg;
	const struct pod *ref = pod_ref(pod); /* the worker's pod may be replaced meanwhile */

	events_pod(k->k_events, ref, NULL, EV_WARNING, "Evicted", "%s", message);
	api_join_pod_evicted(k->k_join, ref, "Evicted", message);
	podworkers_update(k->k_workers, ref, PW_UPDATE_KILL, grace_s);
	pod_unref(ref);
}

/* nodeshutdown: the pod is reported Failed / Terminated and killed with the group's grace. */
static void
kletd_shutdown_kill(void *arg, const struct pod *pod, int64_t grace_s)
{
	struct kletd     *k = arg;
	const struct pod *ref = pod_ref(pod);

	api_join_pod_evicted(k->k_join, ref, NODESHUTDOWN_REASON, NODESHUTDOWN_MESSAGE);
	podworkers_update(k->k_workers, ref, PW_UPDATE_KILL, grace_s);
	pod_unref(ref);
}

/* nodeshutdown: NotReady and no new pods while the node shuts down. */
static void
kletd_shutting_down(void *arg, int on)
{
	struct kletd *k = arg;

	api_join_shutting_down(k->k_join, on);
	kletd_notify("STATUS=%s",
	    on ? "the node is shutting down: terminating the pods"
	       : "the node shutdown was cancelled; running");
}

/* eviction: reclaimNodeLevelResources for a disk signal: dead containers (housekeeping),
 * then unused images (image GC), then a fresh eviction pass. */
static void
kletd_reclaim_images_done(int64_t freed, void *arg)
{
	struct kletd *k = arg;

	if (k->k_eviction != NULL)
		eviction_reclaimed(k->k_eviction, freed);
}

static void
kletd_reclaim_containers_done(void *arg)
{
	struct kletd *k = arg;

	log_v(3, "eviction: reclaim: dead containers collected, unused images next");
	if (k->k_imagegc != NULL)
		imagegc_free_unused(k->k_imagegc, kletd_reclaim_images_done, k);
	else if (k->k_eviction != NULL)
		eviction_reclaimed(k->k_eviction, 0);
}

static void
kletd_reclaim(void *arg, enum ev_signal sig)
{
	struct kletd *k = arg;

	(void)sig;
	if (k->k_hk == NULL || housekeeping_reclaim(k->k_hk, kletd_reclaim_containers_done, k) == 0)
		kletd_reclaim_containers_done(k); /* no removal started: the images now (async) */
}

/* image GC: the node status' images. */
static void
kletd_images_changed(void *arg)
{
	struct kletd         *k = arg;
	struct igc_node_image im[IGC_NODE_IMAGES_MAX];
	struct node_image     ni[IGC_NODE_IMAGES_MAX];
	size_t                i, j, n;

	if (k->k_join == NULL)
		return;
	n = imagegc_node_images(k->k_imagegc, im);
	for (i = 0; i < n; i++) {
		ni[i].nnames = im[i].nnames;
		ni[i].size = im[i].size;
		for (j = 0; j < im[i].nnames; j++)
			ni[i].names[j] = (char *)im[i].names[j];
	}
	api_join_images(k->k_join, ni, n);
}

static int
kletd_content_removable(const char *uid, void *arg)
{
	struct kletd *k = arg;

	return api_join_pod_is_evicted(k->k_join, uid);
}

static void
kletd_pressure(void *arg, unsigned conditions)
{
	struct kletd *k = arg;

	api_join_pressure(k->k_join, conditions);
}

static int
kletd_eviction_new(struct kletd *k)
{
	struct eviction_deps d;
	char                 err[256];

	memset(&d, 0, sizeof(d));
	d.base = loop_base(k->k_loop);
	d.cfg = &k->k_cfg;
	d.cgroups = k->k_cgroups;
	d.workers = k->k_workers;
	d.cache = k->k_cache;
	d.pods_memory = k->k_pods_memory;
	d.imagegc = k->k_imagegc;
	d.reclaim = kletd_reclaim;
	d.evict = kletd_evict;
	d.conditions = kletd_pressure;
	d.arg = k;
	if ((k->k_eviction = eviction_new(&d, err, sizeof(err))) == NULL) {
		log_error("eviction: %s", err);
		return -1;
	}
	return 0;
}

/* --cgroups-per-qos: the QoS hierarchy; without the right to make it, pods go without
 * (as before: the runtime makes the cgroupfs parent). */
static void
kletd_cgroups_new(struct kletd *k, struct kr_options *kopts)
{
	struct nodeinfo_opts   o = { &k->k_cfg.kube_reserved, &k->k_cfg.system_reserved, NULL,
		  k->k_cfg.max_pods };
	struct nodeinfo_host   h;
	struct nodeinfo        ni;
	struct cgroups_options co;
	char                   err[256];

	if (!k->k_cfg.cgroups_per_qos)
		return;
	memset(&h, 0, sizeof(h));
	nodeinfo_read_host(k->k_cfg.root_dir, &h);
	nodeinfo_compute(&o, &h, &ni); /* no eviction thresholds: the pods' cgroup limit */
	memset(&co, 0, sizeof(co));
	co.driver = k->k_cfg.cgroup_systemd ? QOS_DRIVER_SYSTEMD : QOS_DRIVER_CGROUPFS;
	co.root = k->k_cfg.cgroup_root;
	co.v2 = -1;
	co.cpu_capacity_milli = ni.cap_cpu_milli;
	co.pods_memory = ni.alloc_memory > 0 ? ni.alloc_memory : 0;
	k->k_pods_memory = co.pods_memory;
	if ((k->k_cgroups = cgroups_new(&co, err, sizeof(err))) == NULL) {
		log_warn("cgroups: %s: pods run without QoS cgroups", err);
		return;
	}
	kopts->pod_cgroup = kletd_cg_name;
	kopts->pod_cgroup_make = kletd_cg_make;
	kopts->pod_cgroup_arg = k->k_cgroups;
}

static void
kletd_cgroups_wrap(struct kletd *k, struct pw_syncer *s)
{
	if (k->k_cgroups == NULL)
		return;
	k->k_inner = *s;
	s->sync_pod = kletd_cg_sync_pod;
	s->sync_terminating = kletd_cg_sync_terminating;
	s->sync_terminated = kletd_cg_sync_terminated;
	s->cancel = kletd_cg_cancel;
	s->arg = k;
}

/* The longest an idle node's sample for admission gets (CPUs online, memory, pids, the
 * root's file system: they change with the machine, not with the pods). */
#define KLETD_NODEINFO_IDLE_MS (30 * 1000)

/* The node as admission sees it: the host is read here, on the housekeeping timer (every
 * 2 s after pods were admitted, else every 30 s) and once before the first admission, not
 * while a pod is being admitted (five reads of /proc and /sys, a statfs: 0.1-0.5 ms on the
 * path from a watch event to RunPodSandbox). The capacity it gives changes with the
 * machine; pressure comes from the eviction manager. */
static void
kletd_node_sample(struct kletd *k)
{
	struct nodeinfo_opts o = { &k->k_cfg.kube_reserved, &k->k_cfg.system_reserved,
		&k->k_cfg.eviction_hard, k->k_cfg.max_pods };
	struct nodeinfo_host h;

	nodeinfo_read_host(k->k_cfg.root_dir, &h);
	nodeinfo_compute(&o, &h, &k->k_nodeinfo);
	k->k_nodeinfo_ms = now_mono_ms();
}

/* admission: the node as podconfig admits pods onto it (kletd_node_sample). */
static void
kletd_node_info(struct admit_node *an, void *arg)
{
	struct kletd *k = arg;
	size_t        i;

	if (k->k_nodeinfo_ms == 0)
		kletd_node_sample(k);
	k->k_admitted = 1;
	if (k->k_taints == NULL && k->k_cfg.ntaints > 0) {
		k->k_taints = xcalloc(k->k_cfg.ntaints, sizeof(*k->k_taints));
		for (i = 0; i < k->k_cfg.ntaints; i++) {
			k->k_taints[i].key = k->k_cfg.taints[i].key;
			k->k_taints[i].value = k->k_cfg.taints[i].value;
			k->k_taints[i].effect = k->k_cfg.taints[i].effect;
		}
	}
	an->cpu_milli = k->k_nodeinfo.alloc_cpu_milli;
	an->memory = k->k_nodeinfo.alloc_memory;
	an->ephemeral = k->k_nodeinfo.alloc_ephemeral;
	an->pods = k->k_nodeinfo.alloc_pods;
	an->pressure =
	    k->k_eviction != NULL ? eviction_conditions(k->k_eviction) : k->k_nodeinfo.pressure;
	an->taints = k->k_taints;
	an->ntaints = k->k_cfg.ntaints;
	an->shutting_down = nodeshutdown_active(k->k_shutdown);
}

/* TLS bootstrap and rotation (--bootstrap-kubeconfig, --rotate-certificates). */
static void
kletd_boot_done(int ok, const char *why, void *arg)
{
	struct kletd *k = arg;

	if (!ok)
		log_error("bootstrap: %s", why);
	k->k_boot_state = ok ? 1 : -1;
	loop_stop(k->k_loop);
}

/* Before anything talks to the API server: when --kubeconfig has no usable client
 * certificate, obtain one with the bootstrap credentials (the loop runs only for that). */
static int
kletd_bootstrap(struct kletd *k)
{
	struct bootstrap_opts o;
	struct bootstrap     *b;
	char                  why[512], err[512], *pki;

	if (!bootstrap_needed(
	        k->k_cfg.kubeconfig, (int64_t)time(NULL), 0, NULL, NULL, why, sizeof(why))) {
		log_info("bootstrap: %s has a valid client certificate", k->k_cfg.kubeconfig);
		return 0;
	}
	log_info("bootstrap: %s; requesting a client certificate with %s", why,
	    k->k_cfg.bootstrap_kubeconfig);
	kletd_notify("STATUS=waiting for a client certificate (TLS bootstrap)");
	pki = xsprintf("%s/pki", k->k_cfg.root_dir);
	memset(&o, 0, sizeof(o));
	o.credentials = k->k_cfg.bootstrap_kubeconfig;
	o.kubeconfig = k->k_cfg.kubeconfig;
	o.pki_dir = pki;
	o.node_name = k->k_cfg.node_name;
	b = bootstrap_start(loop_base(k->k_loop), &o, kletd_boot_done, k, err, sizeof(err));
	free(pki);
	if (b == NULL) {
		log_error("bootstrap: %s", err);
		return -1;
	}
	k->k_boot_state = 0;
	if (loop_run(k->k_loop) == -1)
		k->k_boot_state = -1;
	bootstrap_free(b);
	return k->k_boot_state == 1 || k->k_stopping ? 0 : -1;
}

static void kletd_cert_check(evutil_socket_t, short, void *);

/* The renewal timer fires in secs (at least at once). */
static void
kletd_cert_arm(struct kletd *k, int64_t secs)
{
	struct timeval tv = ms_to_tv(secs > 0 ? secs * 1000 : 0);

	if (k->k_cert_timer == NULL)
		k->k_cert_timer = evtimer_new(loop_base(k->k_loop), kletd_cert_check, k);
	evtimer_add(k->k_cert_timer, &tv);
}

/* The renewal deadline, as the kubelet's certificate manager picks it: a random point
 * between 70 % and 90 % of the certificate's lifetime. */
static void
kletd_cert_schedule(struct kletd *k)
{
	int64_t nb, na;
	char    why[512];

	k->k_cert_due_s = 0;
	bootstrap_needed(k->k_cfg.kubeconfig, (int64_t)time(NULL), 0, &nb, &na, why, sizeof(why));
	if (na <= nb)
		return;
	k->k_cert_due_s = nb + (na - nb) * (700 + (int64_t)arc4random_uniform(201)) / 1000;
	log_info("certificate rotation: the client certificate (valid until %lld) is renewed at "
	         "%lld",
	    (long long)na, (long long)k->k_cert_due_s);
	kletd_cert_arm(k, k->k_cert_due_s - (int64_t)time(NULL));
}

static void
kletd_cert_done(int ok, const char *why, void *arg)
{
	struct kletd *k = arg;
	char         *cur;

	k->k_certreq_done = 1; /* freed on the next check, not inside its own callback */
	if (!ok) {
		log_warnx("certificate rotation: %s; trying again in 30s", why);
		kletd_cert_arm(k, 30);
		return;
	}
	cur = xsprintf("%s/pki/kubelet-client-current.pem", k->k_cfg.root_dir);
	if (api_join_reload_client_cert(k->k_join, cur) == -1)
		log_warnx("certificate rotation: the API client could not load %s", cur);
	free(cur);
	kletd_cert_schedule(k);
}

static void
kletd_cert_check(evutil_socket_t fd, short what, void *arg)
{
	struct kletd         *k = arg;
	struct bootstrap_opts o;
	char                  err[512], *pki;

	(void)fd;
	(void)what;
	if (k->k_certreq != NULL && k->k_certreq_done) {
		bootstrap_free(k->k_certreq);
		k->k_certreq = NULL;
		k->k_certreq_done = 0;
	}
	if (k->k_certreq != NULL)
		return;
	log_info("certificate rotation: requesting a new client certificate");
	pki = xsprintf("%s/pki", k->k_cfg.root_dir);
	memset(&o, 0, sizeof(o));
	o.credentials = k->k_cfg.kubeconfig;
	o.kubeconfig = k->k_cfg.kubeconfig;
	o.pki_dir = pki;
	o.node_name = k->k_cfg.node_name;
	k->k_certreq =
	    bootstrap_start(loop_base(k->k_loop), &o, kletd_cert_done, k, err, sizeof(err));
	free(pki);
	if (k->k_certreq == NULL) {
		log_warnx("certificate rotation: %s; trying again in 30s", err);
		kletd_cert_arm(k, 30);
	}
}

static int
kletd_wire(struct kletd *k)
{
	struct event_base       *base = loop_base(k->k_loop);
	struct cri_options       copts = { .timeout_ms = k->k_cfg.runtime_timeout_ms,
		      .max_active = k->k_cfg.runtime_window };
	struct pw_options        wopts = { .backoff_ms = 10000, .resync_ms = k->k_cfg.sync_ms };
	struct podconfig_options popts;
	struct hk_deps           hd;
	struct cgc_policy        gcp;
	struct pw_syncer         syncer;
	struct kr_options        kopts;
	struct kr_intents        intents;
	const char              *cgr = k->k_cfg.cgroup_root;

	/* The kubelet's cgroupfs layout: CGROUP-ROOT/kubepods/{besteffort,burstable}/podUID. */
	k->k_kubepods = xsprintf("%s%skubepods", cgr, cgr[strlen(cgr) - 1] == '/' ? "" : "/");
	memset(&kopts, 0, sizeof(kopts));
	kopts.cgroup_root = k->k_kubepods;
	kletd_cgroups_new(k, &kopts); /* cgroups */
	k->k_events = events_new(0);
	k->k_cri = cri_new(base, k->k_cfg.runtime_endpoint, &copts, kletd_cri_state, k);
	if (k->k_cri == NULL)
		return -1;
	k->k_cache = podcache_new(base);
	k->k_pleg = pleg_new(base, k->k_cri, k->k_cache, kletd_pleg_event, k);
	pleg_set_store(k->k_pleg, k->k_store);
	k->k_kr = kuberuntime_new(base, k->k_cri, k->k_cache, &k->k_cfg, k->k_events, &kopts);
	kuberuntime_set_resync(k->k_kr, kletd_resync, k);
	kuberuntime_wait_first_relist(k->k_kr, 1); /* recovery: list calls only at start */
	k->k_prober = prober_new(base, k->k_cri, k->k_events); /* prober */
	k->k_recovery = recovery_new(&(struct recovery_deps){ .store = k->k_store,
	    .kr = k->k_kr,
	    .prober = k->k_prober,
	    .started_ms = k->k_started_ms });
	pleg_set_exit_fn(k->k_pleg, recovery_pleg_exit, k->k_recovery);
	events_listen(k->k_events, recovery_event, k->k_recovery); /* podctl history */
	recovery_intents(k->k_recovery, &intents);
	kuberuntime_set_intents(k->k_kr, &intents);
	k->k_logrotate = logrotate_new(k->k_cri, k->k_cache,
	    &(struct logrotate_options){ .logs_dir = k->k_cfg.pod_logs_dir,
	        .max_size = k->k_cfg.log_max_size,
	        .max_files = k->k_cfg.log_max_files,
	        .timeout_ms = k->k_cfg.runtime_timeout_ms });
	prober_set_notify(k->k_prober, kletd_resync, k);  /* prober: a change syncs the pod */
	kuberuntime_set_probes(k->k_kr, kletd_probes, k); /* prober */
	memset(&syncer, 0, sizeof(syncer));
	kuberuntime_syncer(k->k_kr, &syncer);
	kletd_cgroups_wrap(k, &syncer);               /* cgroups */
	syncer.state_changed = recovery_worker_state; /* recovery: worker rows */
	syncer.state_arg = k->k_recovery;
	k->k_workers = podworkers_new(base, &syncer, &wopts);
	recovery_restore(k->k_recovery, k->k_workers);
	memset(&popts, 0, sizeof(popts));
	popts.node_name = k->k_cfg.node_name;
	popts.max_pods = k->k_cfg.max_pods;
	popts.node_labels = &k->k_cfg.node_labels;
	popts.is_active = kletd_pod_active;
	popts.active_version = kletd_pod_active_version;
	popts.is_active_arg = k;
	popts.node_info = kletd_node_info;
	popts.node_info_arg = k;
	k->k_config = podconfig_new(&popts, kletd_pod_update, k);
	if (k->k_cfg.pod_manifest_path != NULL && *k->k_cfg.pod_manifest_path != '\0') {
		podconfig_add_source(k->k_config, "file");
		k->k_file = source_file_new(base, k->k_config, k->k_events,
		    k->k_cfg.pod_manifest_path, k->k_cfg.node_name, k->k_cfg.file_check_ms);
	}
	/* api: with --kubeconfig, the pods also come from the API server, and the node, its
	 * Lease and the pod statuses go to it. */
	if (k->k_cfg.kubeconfig != NULL && *k->k_cfg.kubeconfig != '\0') {
		struct api_join_deps jd = { base, &k->k_cfg, k->k_store, k->k_config, k->k_cache,
			k->k_workers, k->k_events, k->k_kr, kletd_probes, k, kletd_probes_version };
		char                 jerr[600];

		podconfig_add_source(k->k_config, "api");
		k->k_join = api_join_new(&jd, jerr, sizeof(jerr));
		if (k->k_join == NULL) {
			log_error("%s", jerr);
			return -1;
		}
		/* Statuses exist only with an API server: ready containers stay ready. */
		api_join_foreach_restored(k->k_join, recovery_restore_status, k->k_recovery);
	}
	memset(&hd, 0, sizeof(hd));
	hd.cri = k->k_cri;
	hd.cache = k->k_cache;
	hd.exit_known = kletd_exit_known;
	hd.exit_known_arg = k;
	hd.workers = k->k_workers;
	hd.config = k->k_config;
	hd.kr = k->k_kr;
	hd.store = k->k_store;
	hd.root_dir = k->k_cfg.root_dir;
	hd.logs_dir = k->k_cfg.pod_logs_dir;
	hd.cgroup_root = k->k_kubepods;
	hd.cgroups = k->k_cgroups;
	hd.content_removable = kletd_content_removable;
	hd.content_removable_arg = k;
	gcp.min_age_ms = k->k_cfg.container_gc_min_age_ms;
	gcp.max_per_container = k->k_cfg.container_gc_max_per;
	gcp.max_total = k->k_cfg.container_gc_max_total;
	hd.gc_policy = &gcp;
	k->k_hk = housekeeping_new(&hd);
	{ /* image GC */
		struct imagegc_deps id = { base, k->k_cri, &k->k_cfg, k->k_events,
			kletd_images_changed, k };

		if ((k->k_imagegc = imagegc_new(&id)) == NULL)
			return -1;
	}
	if (kletd_eviction_new(k) < 0) /* eviction */
		return -1;
	k->k_shutdown = nodeshutdown_new(&(struct nodeshutdown_deps){ .base = base,
	    .period_s = k->k_cfg.shutdown_grace_ms / 1000,
	    .critical_s = k->k_cfg.shutdown_grace_critical_ms / 1000,
	    .workers = k->k_workers,
	    .events = k->k_events,
	    .node_name = k->k_cfg.node_name,
	    .kill = kletd_shutdown_kill,
	    .shutting_down = kletd_shutting_down,
	    .arg = k });
	return 0;
}

/* Teardown in dependency order: sources, workers (cancelling their machines), the runtime
 * manager, PLEG, then the client. Containers keep running. */
static void
kletd_unwire(struct kletd *k)
{
	nodeshutdown_free(k->k_shutdown); /* nodeshutdown: before the workers */
	k->k_shutdown = NULL;
	eviction_free(k->k_eviction); /* eviction: before the workers */
	k->k_eviction = NULL;
	imagegc_free(k->k_imagegc); /* image GC: before the CRI client and the join */
	k->k_imagegc = NULL;
	api_join_free(k->k_join); /* api: before the pods' config and the workers */
	k->k_join = NULL;
	source_file_free(k->k_file);
	k->k_file = NULL;
	housekeeping_free(k->k_hk);
	k->k_hk = NULL;
	podworkers_free(k->k_workers);
	k->k_workers = NULL;
	logrotate_free(k->k_logrotate); /* its reopen calls use the CRI client */
	k->k_logrotate = NULL;
	prober_free(k->k_prober); /* prober: its checks use the CRI client */
	k->k_prober = NULL;
	podconfig_free(k->k_config);
	k->k_config = NULL;
	kuberuntime_free(k->k_kr);
	k->k_kr = NULL;
	pleg_free(k->k_pleg);
	k->k_pleg = NULL;
	podcache_free(k->k_cache);
	k->k_cache = NULL;
	cri_free(k->k_cri);
	k->k_cri = NULL;
	events_free(k->k_events);
	k->k_events = NULL;
	cgroups_free(k->k_cgroups);
	k->k_cgroups = NULL;
	free(k->k_kubepods);
	k->k_kubepods = NULL;
	recovery_free(k->k_recovery); /* after the workers, which report to it */
	k->k_recovery = NULL;
	bootstrap_free(k->k_certreq);
	k->k_certreq = NULL;
	if (k->k_cert_timer != NULL)
		event_free(k->k_cert_timer);
	k->k_cert_timer = NULL;
	free(k->k_taints);
	k->k_taints = NULL;
}

static void
kletd_log_task(const struct loop_task_stats *st, void *arg)
{
	(void)arg;
	log_v(4, "timer %s every=%ums runs=%llu last=%lldus max=%lldus lag=%lldus maxlag=%lldus",
	    st->name, st->interval_ms, (unsigned long long)st->runs,
	    (long long)st->last_duration_us, (long long)st->max_duration_us,
	    (long long)st->last_lag_us, (long long)st->max_lag_us);
}

static void
kletd_logrotate(void *arg)
{
	struct kletd *k = arg;

	if (k->k_logrotate != NULL && cri_ready(k->k_cri))
		logrotate_run(k->k_logrotate);
}

static void
kletd_housekeeping(void *arg)
{
	struct kletd *k = arg;
	char          why[256];
	uint64_t      commits;
	int           looked = 1;

	if (k->k_hk != NULL)
		looked = housekeeping_run(k->k_hk);
	loop_note("housekeeping: the rest");
	log_flush_suppressed(); /* summaries of repeated lines, even when nothing else logs */
	if (k->k_pleg != NULL) {
		int ok = pleg_healthy(k->k_pleg, now_mono_ms(), why, sizeof(why));

		if (!ok && !k->k_pleg_unhealthy)
			log_warnx("PLEG is not healthy: %s", why);
		else if (ok && k->k_pleg_unhealthy)
			log_info("PLEG is healthy again");
		k->k_pleg_unhealthy = !ok;
		api_join_pleg(k->k_join, ok, why); /* api */
	}
	/* For admission: after pods were admitted (the next ones see the node as it is now),
	 * else once in KLETD_NODEINFO_IDLE_MS (an idle node reads nothing every 2 s). */
	if (k->k_nodeinfo_ms != 0 &&
	    (k->k_admitted || now_mono_ms() - k->k_nodeinfo_ms >= KLETD_NODEINFO_IDLE_MS)) {
		kletd_node_sample(k);
		k->k_admitted = 0;
	}
	/* store: the WAL checkpoint (the one fsync point); also retries a degraded store. */
	loop_note("store checkpoint");
	store_checkpoint(k->k_store);
	loop_note("heap trim and drop");
	/* Memory freed by a burst (pods created or removed, a big list decoded) goes back:
	 * looked at after every pass that had something to look at, and every 20 s (its
	 * figures are a walk of malloc's bins and a read of /proc). */
	if (looked || k->k_hk_runs % 10 == 0)
		heap_trim(now_mono_ms());
	/* After the start and every 5 minutes: SQLite's page cache (the pages are read again
	 * from the file when the next write needs them), then the heap's free pages and the
	 * code that the start or a burst mapped. Sooner when the store wrote since the last
	 * drop and has been quiet for a pass (its checkpoint done): an idle node that saves its
	 * watch position once a minute otherwise keeps SQLite's write path mapped. */
	commits = store_commits(k->k_store);
	if (heap_drop_due(now_mono_ms(), k->k_started_ms,
	        commits != k->k_dr_commits && commits == k->k_hk_commits)) {
		store_release_memory(k->k_store);
		heap_drop();
		k->k_dr_commits = commits;
	}
	k->k_hk_commits = commits;
	/* Every 30 s at -v=4: the timers' figures. */
	if (++k->k_hk_runs % 15 == 0)
		loop_foreach_task(k->k_loop, kletd_log_task, NULL);
}

static void
kletd_status_batch(void *arg)
{
	struct kletd *k = arg;

	api_join_status_batch(k->k_join); /* api: re-send what the server lacks */
}

static void
kletd_lease(void *arg)
{
	(void)arg;
}

static void
kletd_on_signal(int sig, void *arg)
{
	struct kletd *k = arg;

	switch (sig) {
	case SIGHUP:
		log_info("SIGHUP: reopening the log file");
		log_reopen();
		log_info("log file reopened");
		break;
	case SIGTERM:
	case SIGINT:
		if (k->k_stopping)
			break;
		k->k_stopping = 1;
		log_info("%s: shutting down; containers keep running", strsignal(sig));
		kletd_notify("STOPPING=1\nSTATUS=shutting down; containers keep running");
		loop_stop(k->k_loop);
		break;
	default:
		break;
	}
}

/* libevent's own messages go through our log (and its rate limit), not to stderr. */
static void
kletd_event_log(int severity, const char *msg)
{
	switch (severity) {
	case EVENT_LOG_DEBUG:
		log_v(4, "libevent: %s", msg);
		break;
	case EVENT_LOG_MSG:
		log_emit(LOG_SEV_INFO, 0, "libevent", 0, "libevent: %s", msg);
		break;
	case EVENT_LOG_WARN:
		log_emit(LOG_SEV_WARN, 0, "libevent", 0, "libevent: %s", msg);
		break;
	default:
		log_emit(LOG_SEV_ERROR, 0, "libevent", 0, "libevent: %s", msg);
		break;
	}
}

/* The soft descriptor limit up to the hard one (as containerd and the kubelet run): the
 * common soft limit of 1024 is easy to reach with pods, probes and podctl clients. */
static void
kletd_raise_nofile(void)
{
	struct rlimit rl;
	rlim_t        was;

	if (getrlimit(RLIMIT_NOFILE, &rl) == -1 || rl.rlim_cur >= rl.rlim_max)
		return;
	was = rl.rlim_cur;
	rl.rlim_cur = rl.rlim_max;
	if (setrlimit(RLIMIT_NOFILE, &rl) == -1)
		log_warn("setrlimit RLIMIT_NOFILE %llu", (unsigned long long)rl.rlim_max);
	else
		log_v(1, "open file limit raised from %llu to %llu", (unsigned long long)was,
		    (unsigned long long)rl.rlim_max);
}

int
main(int argc, char **argv)
{
	struct kletd k;
	char         err[512];
	int          rc = 0;

	heap_tune();
	memset(&k, 0, sizeof(k));
	k.k_lock_fd = -1;
	switch (config_load(&k.k_cfg, argc, argv, err, sizeof(err))) {
	case CONFIG_OK:
		break;
	case CONFIG_EXIT:
		config_clear(&k.k_cfg);
		return 0;
	case CONFIG_ERROR:
		fprintf(stderr, "kletd: %s\nRun 'kletd --help' for usage.\n", err);
		config_clear(&k.k_cfg);
		return 2;
	}
	log_init(k.k_cfg.verbosity, k.k_cfg.log_json);
	if (k.k_cfg.log_file != NULL && log_open_file(k.k_cfg.log_file) == -1) {
		fprintf(stderr, "kletd: --log-file %s: %s\n", k.k_cfg.log_file, strerror(errno));
		config_clear(&k.k_cfg);
		return 2;
	}
	log_set_max_size((uint64_t)k.k_cfg.log_file_max_mb * 1024 * 1024);
	event_set_log_callback(kletd_event_log);
	log_info("kletd %s starting node=%s root-dir=%s runtime=%s", KLET_VERSION,
	    k.k_cfg.node_name, k.k_cfg.root_dir, k.k_cfg.runtime_endpoint);
	kletd_raise_nofile();
	if (kletd_prepare_root(&k) == -1) {
		rc = 1;
		goto out;
	}
	k.k_started_ms = now_mono_ms();
	k.k_loop = loop_new();
	{ /* store: open after the root-dir lock; a refused database stops the daemon. */
		char *serr = NULL, *dbpath = xsprintf("%s/klet.db", k.k_cfg.root_dir);

		k.k_store = store_open(loop_base(k.k_loop), dbpath, &serr);
		free(dbpath);
		if (k.k_store == NULL) {
			log_error("store: %s", serr);
			free(serr);
			rc = 1;
			goto out;
		}
	}
	loop_on_signal(k.k_loop, SIGTERM, kletd_on_signal, &k);
	loop_on_signal(k.k_loop, SIGINT, kletd_on_signal, &k);
	loop_on_signal(k.k_loop, SIGHUP, kletd_on_signal, &k);
	if (k.k_cfg.bootstrap_kubeconfig != NULL && kletd_bootstrap(&k) == -1) {
		rc = 1;
		goto out;
	}
	if (k.k_stopping)
		goto out;
	kletd_notify("STATUS=store open; waiting for the container runtime");
	if (kletd_wire(&k) == -1) {
		rc = 1;
		goto out;
	}
	k.k_relist_task = loop_every(k.k_loop, "relist", 1000, kletd_relist, &k);
	loop_every(k.k_loop, "sync", 1000, kletd_sync, &k);
	loop_every(k.k_loop, "housekeeping", 2000, kletd_housekeeping, &k);
	loop_every(k.k_loop, "status", 10000, kletd_status_batch, &k);
	loop_every(k.k_loop, "lease", 10000, kletd_lease, &k);
	if (k.k_cfg.log_max_size >= 0)
		loop_every(
		    k.k_loop, "logrotate", (unsigned)k.k_cfg.log_monitor_ms, kletd_logrotate, &k);
	if (sdnotify_watchdog_usec() > 0) /* systemd's WatchdogSec=: ping at half of it */
		loop_every(k.k_loop, "watchdog",
		    (unsigned)(sdnotify_watchdog_usec() / 2000 > 0 ? sdnotify_watchdog_usec() / 2000
		                                                   : 1),
		    kletd_watchdog, &k);
	if (k.k_cfg.rotate_certificates && k.k_join != NULL)
		kletd_cert_schedule(&k);
	{ /* podctl: read-only inspection socket; an unusable --podctl-group stops the start. */
		struct ctl_deps cd = { .base = loop_base(k.k_loop),
			.cfg = &k.k_cfg,
			.loop = k.k_loop,
			.cri = k.k_cri,
			.cache = k.k_cache,
			.workers = k.k_workers,
			.kr = k.k_kr,
			.events = k.k_events,
			.store = k.k_store,
			.pleg = k.k_pleg,
			.started_ms = k.k_started_ms,
			.prober = k.k_prober,
			.eviction = k.k_eviction,
			.imagegc = k.k_imagegc,
			.shutdown = k.k_shutdown,
			.recovered_ms = recovery_recovered_ms(k.k_recovery),
			.api_info = k.k_join != NULL ? api_join_ctl_info : NULL,
			.last_status = k.k_join != NULL ? api_join_ctl_status : NULL,
			.api_arg = k.k_join };

		k.k_ctl = ctl_new(&cd, err, sizeof(err));
		if (k.k_ctl == NULL && k.k_root_ro) {
			/* Its socket cannot be made on the read-only root: the pods matter more. */
			log_error("podctl: %s; running without the inspection socket", err);
		} else if (k.k_ctl == NULL) {
			log_error("podctl: %s", err);
			rc = 1;
			goto out;
		}
	}
	{ /* server: an unusable serving certificate or webhook config stops the start */
		struct server_deps sd = { .base = loop_base(k.k_loop),
			.cfg = &k.k_cfg,
			.cache = k.k_cache,
			.config = k.k_config,
			.pleg = k.k_pleg,
			.cri = k.k_cri,
			.started_ms = k.k_started_ms,
			.eviction = k.k_eviction,
			.imagegc = k.k_imagegc,
			.api = api_join_api(k.k_join) };

		k.k_server = server_new(&sd, err, sizeof(err));
		if (k.k_server == NULL) {
			log_error("server: %s", err);
			rc = 1;
			goto out;
		}
		k.k_cfg.port = server_port(k.k_server); /* the node status advertises it */
	}
	log_info("kletd ready");
	if (loop_run(k.k_loop) == -1)
		rc = 1;
	log_info("kletd stopped after %llds", (long long)((now_mono_ms() - k.k_started_ms) / 1000));
out:
	ctl_free(k.k_ctl);       /* podctl: before what it reads */
	server_free(k.k_server); /* server: before what it reads */
	kletd_unwire(&k);
	if (k.k_store != NULL) { /* store: commit the last turn, then close */
		store_flush(k.k_store);
		store_close(k.k_store);
	}
	loop_free(k.k_loop);
	if (k.k_lock_fd != -1)
		close(k.k_lock_fd);
	config_clear(&k.k_cfg);
	log_open_file(NULL);
	return rc;
}
