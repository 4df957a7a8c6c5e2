/* kletd.c — the node agent: flags, wiring, the loop's periodic tasks, signals, shutdown. */
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/types.h>

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "api/join.h" /* api */
#include "core/config.h"
#include "cri/cri.h"
#include "ctl/ctl.h" /* podctl */
#include "node/events.h"
#include "node/housekeeping.h"
#include "kuberuntime/kuberuntime.h"
#include "core/log.h"
#include "node/logrotate.h"
#include "core/loop.h"
#include "node/pleg.h"
#include "pod/pod.h"
#include "node/podcache.h"
#include "node/podconfig.h"
#include "node/podworkers.h"
#include "prober/prober.h" /* prober */
#include "server/server.h" /* server: the node's HTTPS server */
#include "node/source_file.h"
#include "store/store.h" /* store */
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
	struct api_join     *k_join;      /* api: --kubeconfig: watch, status, node */
	struct prober       *k_prober;    /* prober: liveness, readiness, startup probes */
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
	int                  k_recovered;    /* recovery: first relist with all sources seen */
	int64_t              k_recovered_ms; /* start to recovered, -1 before */
	int                  k_root_ro;      /* --root-dir was read-only at start */
	char                *k_kubepods;     /* CGROUP-ROOT/kubepods: the pods' cgroup parent */
};

/* Creates dir and its parents with mode; 0 or -1 (errno set). */
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

/* The pod workers' state_changed hook gets the syncer's argument, not ours. */
static struct kletd *kletd_self;

/* prober: one worker per running container and probe; pods not in SYNC stop probing. */
static void
kletd_prober_pod(const struct pw_view *v, void *arg)
{
	struct kletd *k = arg;

	prober_sync_pod(
	    k->k_prober, v->pod, podcache_get(k->k_cache, v->uid, NULL), v->state == PW_SYNC);
}

static void
kletd_prober_sync(struct kletd *k)
{
	if (k->k_prober == NULL || k->k_workers == NULL)
		return;
	podworkers_foreach(k->k_workers, kletd_prober_pod, k);
	prober_sweep(k->k_prober);
}

/* prober: kuberuntime reads the results of a pod's probes when it decides. */
static int
kletd_probes(const char *uid, struct probe_set *out, void *arg)
{
	struct kletd *k = arg;

	return prober_probe_states(k->k_prober, uid, out);
}

static void
kletd_relist_done(int rc, void *arg)
{
	struct kletd     *k = arg;
	struct pleg_stats st;
	int64_t           now = now_mono_ms();

	if (rc != 0)
		return;
	/* recovery: the first relist with every source's initial set seen ends the recovery:
	 * housekeeping kills at once the restored workers of pods removed while the daemon
	 * was down (their grace runs from the original removal, not 2 s later). */
	if (!k->k_recovered && podconfig_sources_ready(k->k_config)) {
		k->k_recovered = 1;
		if (k->k_hk != NULL)
			housekeeping_run(k->k_hk);
		k->k_recovered_ms = now - k->k_started_ms;
		log_info("recovered in %lldms: first relist done, %zu pod workers",
		    (long long)k->k_recovered_ms, podworkers_count(k->k_workers));
	}
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

static void
kletd_pleg_exit(const char *uid, const struct rt_container *c, void *arg)
{
	struct kletd     *k = arg;
	struct store_exit x;

	log_v(2,
	    "container exited pod uid=%s container=%s id=%s exit_code=%d reason=%s "
	    "restarts=%d",
	    uid, c->name != NULL ? c->name : "?", c->id, c->exit_code,
	    c->reason != NULL ? c->reason : "", c->restart_count);
	memset(&x, 0, sizeof(x));
	x.container_id = c->id;
	x.uid = uid;
	x.name = c->name != NULL ? c->name : "";
	x.restart_count = c->restart_count;
	x.exit_code = c->exit_code;
	x.reason = c->reason;
	x.message = c->message;
	x.started_ns = c->started_at;
	x.finished_ns = c->finished_at;
	store_put_exit(k->k_store, &x);
}

/* housekeeping removes an exited container only once the PLEG reported its exit. */
static int
kletd_exit_known(const char *id, void *arg)
{
	struct kletd *k = arg;

	return k->k_pleg == NULL || pleg_exit_reported(k->k_pleg, id);
}

/* Intent records (issue 6): durable before the create call leaves, so that a daemon killed
 * in between adopts what the runtime made instead of making it again. */
static void
kletd_intent_put(void *arg, const char *uid, const char *kind, const char *name, int64_t attempt)
{
	struct kletd       *k = arg;
	struct store_intent in = { .uid = uid,
		.kind = kind,
		.name = name,
		.attempt = attempt,
		.created_wall_ms = now_wall_ms() };

	store_put_intent(k->k_store, &in);
	/* Commit now (no fsync in WAL mode; a crash of the process keeps it). While the store
	 * is degraded the record stays in the journal: adoption then relies on the labels. */
	store_commit_now(k->k_store);
}

static void
kletd_intent_del(void *arg, const char *uid, const char *kind, const char *name, int64_t attempt)
{
	struct kletd *k = arg;

	store_del_intent(k->k_store, uid, kind, name, attempt);
}

struct kletd_intent_q {
	const char *kind, *name;
	int64_t     attempt;
	int         found;
};

static int
kletd_intent_match(const struct store_intent *in, void *arg)
{
	struct kletd_intent_q *q = arg;

	if (strcmp(in->kind, q->kind) == 0 && strcmp(in->name, q->name) == 0 &&
	    in->attempt == q->attempt) {
		q->found = 1;
		return 1;
	}
	return 0;
}

static int
kletd_intent_has(void *arg, const char *uid, const char *kind, const char *name, int64_t attempt)
{
	struct kletd         *k = arg;
	struct kletd_intent_q q = {
		.kind = kind, .name = name != NULL ? name : "", .attempt = attempt
	};

	store_foreach_intent(k->k_store, uid, kletd_intent_match, &q);
	return q.found;
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
		api_join_runtime(
		    k->k_join, 1, NULL, info.runtime_name, info.runtime_version); /* api */
	} else {
		log_warnx("container runtime not ready: %s; pods wait for it",
		    reason != NULL ? reason : "unknown");
		api_join_runtime(k->k_join, 0, reason, NULL, NULL); /* api */
	}
}

static void
kletd_resync(const char *uid, void *arg)
{
	struct kletd *k = arg;

	podworkers_kick(k->k_workers, uid);
}

static const char *
kletd_state_str(enum pw_state s)
{
	return pw_state_name(s);
}

static int
kletd_state_parse(const char *s, enum pw_state *out)
{
	static const enum pw_state all[] = { PW_SYNC, PW_TERMINATING, PW_TERMINATED, PW_FINISHED };
	size_t                     i;

	for (i = 0; i < nitems(all); i++) {
		if (s != NULL && strcmp(s, pw_state_name(all[i])) == 0) {
			*out = all[i];
			return 0;
		}
	}
	return -1;
}

/* Every worker state change goes to the store, with the grace deadline as a wall time. */
static void
kletd_worker_state(void *arg, const char *uid, enum pw_state state, int64_t deadline_ms)
{
	struct kletd       *k = kletd_self;
	struct store_worker w;
	struct kr_pod_view  kv;
	struct pw_view      v;

	(void)arg;
	if (k == NULL || k->k_store == NULL)
		return;
	memset(&w, 0, sizeof(w));
	w.uid = uid;
	w.state = kletd_state_str(state);
	if (state == PW_TERMINATING)
		w.grace_deadline_wall_ms = now_wall_ms() + (deadline_ms - now_mono_ms());
	/* The step the pod's machine is in (or stopped in, with the last error). */
	if (k->k_kr != NULL && kuberuntime_get(k->k_kr, uid, &kv) == 0)
		w.step = kv.step != NULL ? kv.step : kv.last_step;
	if (podworkers_get(k->k_workers, uid, &v) == 0) {
		if (state == PW_TERMINATING)
			w.grace_seconds = v.grace_seconds;
		w.last_error = v.last_error;
		w.failures = v.failures;
		w.removed = v.removed;
		if (v.failures > 0 && v.next_sync_ms > 0)
			w.next_retry_wall_ms = now_wall_ms() + (v.next_sync_ms - now_mono_ms());
	}
	store_put_worker(k->k_store, &w);
}

static void
kletd_store_pod(struct kletd *k, const struct pod *pod)
{
	struct store_pod sp;
	const char      *fmt = NULL, *src = NULL, *doc;
	size_t           len = 0;

	doc = podconfig_doc(k->k_config, pod->uid, &len, &fmt, &src);
	if (doc == NULL)
		return;
	memset(&sp, 0, sizeof(sp));
	sp.uid = pod->uid;
	sp.source = src;
	sp.ns = pod->ns != NULL ? pod->ns : "";
	sp.name = pod->name != NULL ? pod->name : "";
	sp.doc = doc;
	sp.doc_len = len;
	sp.format = fmt != NULL ? fmt : "json";
	sp.updated_wall_ms = now_wall_ms();
	store_put_pod(k->k_store, &sp);
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
		kletd_store_pod(k, pod);
		podworkers_update(k->k_workers, pod, PW_UPDATE_CREATE, -1);
		break;
	case POD_OP_UPDATE:
	case POD_OP_DELETE:
		/* A deletion is an update: the worker terminates with the deletion grace. */
		kletd_store_pod(k, pod);
		podworkers_update(k->k_workers, pod, PW_UPDATE_UPDATE, -1);
		break;
	case POD_OP_RECONCILE:
		kletd_store_pod(k, pod);
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
		kletd_store_pod(k, pod);
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

struct kletd_restore {
	struct kletd *k;
	struct pod  **pods;
	size_t        npods;
	size_t        restored;
};

static int
kletd_restore_pod(const struct store_pod *sp, void *arg)
{
	struct kletd_restore *r = arg;
	char                  err[256];
	struct pod           *pod;

	if (sp->format != NULL && strcmp(sp->format, "yaml") == 0)
		pod = pod_from_yaml(sp->doc, sp->doc_len, err, sizeof(err));
	else
		pod = pod_from_json(sp->doc, sp->doc_len, err, sizeof(err));
	if (pod == NULL || pod->uid == NULL || strcmp(pod->uid, sp->uid) != 0) {
		log_warnx("store: pod %s/%s uid=%s: stored document unusable: %s", sp->ns, sp->name,
		    sp->uid, pod == NULL ? err : "UID differs");
		pod_free(pod);
		return 0;
	}
	r->pods = xreallocarray(r->pods, r->npods + 1, sizeof(*r->pods));
	r->pods[r->npods++] = pod;
	return 0;
}

static int
kletd_cmp_pod_uid(const void *key, const void *elem)
{
	return strcmp(key, (*(struct pod *const *)elem)->uid);
}

static int
kletd_restore_worker(const struct store_worker *sw, void *arg)
{
	struct kletd_restore *r = arg;
	struct pw_restore     pr;
	struct pod          **pp;
	int64_t               now_wall = now_wall_ms(), now = now_mono_ms();

	memset(&pr, 0, sizeof(pr));
	if (kletd_state_parse(sw->state, &pr.state) == -1)
		return 0;
	/* The pods came ordered by UID (store_foreach_pod). */
	pp = r->npods > 0 ? bsearch(sw->uid, r->pods, r->npods, sizeof(*r->pods), kletd_cmp_pod_uid)
	                  : NULL;
	if (pp == NULL)
		return 0;
	if (pr.state == PW_TERMINATING)
		pr.grace_deadline_ms = now + (sw->grace_deadline_wall_ms - now_wall);
	pr.removed = sw->removed;
	pr.failures = sw->failures;
	pr.last_error = sw->last_error;
	if (sw->next_retry_wall_ms > now_wall)
		pr.next_sync_ms = now + (sw->next_retry_wall_ms - now_wall);
	podworkers_restore(r->k->k_workers, *pp, &pr);
	r->restored++;
	return 0;
}

/* Containers that were ready in the last generated statuses keep their readiness. */
static void
kletd_restore_ready(struct kletd *k, const struct container_status *v, size_t n)
{
	const char *id;
	size_t      i;

	for (i = 0; i < n; i++) {
		if (!v[i].ready || v[i].state.kind != CSTATE_RUNNING || v[i].container_id == NULL)
			continue;
		id = strstr(v[i].container_id, "://");
		prober_assume_ready(k->k_prober, id != NULL ? id + 3 : v[i].container_id);
	}
}

/* The statuses the status manager resumed (parsed once, there). */
static void
kletd_restore_status(const struct pod_status *st, void *arg)
{
	struct kletd *k = arg;

	kletd_restore_ready(k, st->statuses, st->nstatuses);
	kletd_restore_ready(k, st->init_statuses, st->ninit_statuses);
}

/* Issue 6: the workers resume where they stopped (a terminating pod keeps its deadline). */
static void
kletd_restore(struct kletd *k)
{
	struct kletd_restore r = { .k = k };
	size_t               i;

	store_foreach_pod(k->k_store, kletd_restore_pod, &r);
	store_foreach_worker(k->k_store, kletd_restore_worker, &r);
	if (r.restored > 0)
		log_info("resumed %zu pod workers from the store", r.restored);
	for (i = 0; i < r.npods; i++)
		pod_free(r.pods[i]);
	free(r.pods);
}

/* Everything between the store and the sources; 0 or -1 (logged). */
static int
kletd_wire(struct kletd *k)
{
	struct event_base       *base = loop_base(k->k_loop);
	struct cri_options       copts = { .timeout_ms = k->k_cfg.runtime_timeout_ms };
	struct pw_options        wopts = { .backoff_ms = 10000, .resync_ms = 60000 };
	struct podconfig_options popts;
	struct hk_deps           hd;
	struct pw_syncer         syncer;
	struct kr_options        kopts;
	const char              *cgr = k->k_cfg.cgroup_root;

	kletd_self = k;
	/* The kubelet's cgroupfs layout: CGROUP-ROOT/kubepods/{besteffort,burstable}/podUID. */
	k->k_kubepods = xsprintf("%s%skubepods", cgr, cgr[strlen(cgr) - 1] == '/' ? "" : "/");
	memset(&kopts, 0, sizeof(kopts));
	kopts.cgroup_root = k->k_kubepods;
	k->k_events = events_new(0);
	k->k_cri = cri_new(base, k->k_cfg.runtime_endpoint, &copts, kletd_cri_state, k);
	if (k->k_cri == NULL)
		return -1;
	k->k_cache = podcache_new(base);
	k->k_pleg = pleg_new(base, k->k_cri, k->k_cache, kletd_pleg_event, k);
	pleg_set_exit_fn(k->k_pleg, kletd_pleg_exit, k);
	pleg_set_store(k->k_pleg, k->k_store);
	k->k_kr = kuberuntime_new(base, k->k_cri, k->k_cache, &k->k_cfg, k->k_events, &kopts);
	kuberuntime_set_resync(k->k_kr, kletd_resync, k);
	kuberuntime_wait_first_relist(k->k_kr, 1); /* recovery: list calls only at start */
	kuberuntime_set_intents(k->k_kr,
	    &(struct kr_intents){ .put = kletd_intent_put,
	        .del = kletd_intent_del,
	        .has = kletd_intent_has,
	        .arg = k });
	k->k_prober = prober_new(base, k->k_cri, k->k_events); /* prober */
	k->k_logrotate = logrotate_new(k->k_cri, k->k_cache,
	    &(struct logrotate_options){ .logs_dir = k->k_cfg.pod_logs_dir,
	        .max_size = k->k_cfg.log_max_size,
	        .max_files = k->k_cfg.log_max_files,
	        .timeout_ms = k->k_cfg.runtime_timeout_ms });
	prober_set_notify(k->k_prober, kletd_resync, k);  /* prober: a change syncs the pod */
	kuberuntime_set_probes(k->k_kr, kletd_probes, k); /* prober */
	memset(&syncer, 0, sizeof(syncer));
	kuberuntime_syncer(k->k_kr, &syncer);
	syncer.state_changed = kletd_worker_state;
	k->k_workers = podworkers_new(base, &syncer, &wopts);
	kletd_restore(k);
	memset(&popts, 0, sizeof(popts));
	popts.node_name = k->k_cfg.node_name;
	popts.max_pods = k->k_cfg.max_pods;
	popts.node_labels = &k->k_cfg.node_labels;
	popts.is_active = kletd_pod_active;
	popts.is_active_arg = k;
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
			k->k_workers, k->k_events, k->k_kr, kletd_probes, k };
		char                 jerr[600];

		podconfig_add_source(k->k_config, "api");
		k->k_join = api_join_new(&jd, jerr, sizeof(jerr));
		if (k->k_join == NULL) {
			log_error("%s", jerr);
			return -1;
		}
		/* Statuses exist only with an API server: ready containers stay ready. */
		api_join_foreach_restored(k->k_join, kletd_restore_status, k);
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
	hd.cgroup_root = k->k_kubepods;
	k->k_hk = housekeeping_new(&hd);
	return 0;
}

/* Teardown in dependency order: sources, workers (cancelling their machines), the runtime
 * manager, PLEG, then the client. Containers keep running. */
static void
kletd_unwire(struct kletd *k)
{
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
	free(k->k_kubepods);
	k->k_kubepods = NULL;
	kletd_self = NULL;
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
	struct kletd   *k = arg;
	static unsigned n;

	char why[256];

	if (k->k_hk != NULL)
		housekeeping_run(k->k_hk);
	if (k->k_pleg != NULL) {
		int ok = pleg_healthy(k->k_pleg, now_mono_ms(), why, sizeof(why));

		if (!ok && !k->k_pleg_unhealthy)
			log_warnx("PLEG is not healthy: %s", why);
		else if (ok && k->k_pleg_unhealthy)
			log_info("PLEG is healthy again");
		k->k_pleg_unhealthy = !ok;
		api_join_pleg(k->k_join, ok, why); /* api */
	}
	/* store: the WAL checkpoint (the one fsync point); also retries a degraded store. */
	store_checkpoint(k->k_store);
	/* Every 30 s at -v=4: the timers' figures. */
	if (++n % 15 == 0)
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
		loop_stop(k->k_loop);
		break;
	default:
		break;
	}
}

int
main(int argc, char **argv)
{
	struct kletd k;
	char         err[512];
	int          rc = 0;

	memset(&k, 0, sizeof(k));
	k.k_recovered_ms = -1;
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
	log_info("kletd %s starting node=%s root-dir=%s runtime=%s", KLET_VERSION,
	    k.k_cfg.node_name, k.k_cfg.root_dir, k.k_cfg.runtime_endpoint);
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
	loop_on_signal(k.k_loop, SIGTERM, kletd_on_signal, &k);
	loop_on_signal(k.k_loop, SIGINT, kletd_on_signal, &k);
	loop_on_signal(k.k_loop, SIGHUP, kletd_on_signal, &k);
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
			.recovered_ms = &k.k_recovered_ms,
			.api_info = k.k_join != NULL ? api_join_ctl_info : NULL,
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
			.started_ms = k.k_started_ms };

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
