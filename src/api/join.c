/* join.c — wiring of api, watch, status and node for kletd (see join.h). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <event2/event.h>

#include "client/api.h"
#include "api/apievents.h"
#include "api/mirror.h"
#include "logic/actions.h"
#include "api/join.h"
#include "core/config.h"
#include "ctl/ctl.h"
#include "node/events.h"
#include "node/nodeinfo.h"
#include "client/kubeconfig.h"
#include "kuberuntime/kuberuntime.h"
#include "core/log.h"
#include "api/node.h"
#include "api/runtimeclass.h"
#include "pod/pod.h"
#include "pod/rfc3339.h"
#include "node/podcache.h"
#include "logic/podstatus.h"
#include "node/podconfig.h"
#include "node/podworkers.h"
#include "api/status.h"
#include "core/util.h"
#include "volumes/volumes.h"
#include "api/watch.h"

/* The versions of everything the pods' statuses are generated from (see api_join_relisted). */
struct join_inputs {
	uint64_t ji_cache;   /* podcache_generation */
	uint64_t ji_probes;  /* probes_version(NULL) */
	uint64_t ji_errors;  /* kuberuntime_start_errors_version(NULL) */
	uint64_t ji_workers; /* podworkers_version */
	uint64_t ji_pods;    /* podconfig_version */
	uint64_t ji_mirrors; /* watch_mirrors_version */
	uint64_t ji_status;  /* status_version: entries gone, host IP, evictions */
};

struct api_join {
	struct api_join_deps j_deps;
	int                  j_stamps;  /* the inputs have versions: unchanged pods are skipped */
	struct join_inputs   j_last;    /* as the last pass began */
	int                  j_current; /* ... and every status was current at its end */
	struct kubeconfig   *j_kc;
	struct api          *j_api;
	struct watch        *j_watch;
	struct status_mgr   *j_status;
	struct node         *j_node;
	struct api_events   *j_events;
	struct volumes      *j_volumes;   /* configMap / secret objects of the pods */
	struct mirror       *j_mirror;    /* mirror pods of the static pods */
	struct runtimeclass *j_rc;        /* RuntimeClass objects: the sandbox's handler */
	struct nodeinfo_opts j_resources; /* the node status's allocatable, as admission's */
};

/* kuberuntime's RuntimeClass lookup. */
static int
join_rc_lookup(const char *name, const char **handler, void *arg)
{
	return runtimeclass_lookup(arg, name, handler);
}

static void join_volumes_kick(const char *, void *);

/* Test knobs (milliseconds), e.g. a short PING interval for outage tests. */
static int64_t
join_env_ms(const char *name)
{
	const char *v = getenv(name);

	return v != NULL ? strtoll(v, NULL, 10) : 0;
}

struct api_join *
api_join_new(const struct api_join_deps *d, char *err, size_t errlen)
{
	struct api_join       *j = xcalloc(1, sizeof(*j));
	struct api_options     ao;
	struct watch_options   wo;
	struct status_options  so;
	struct node_options    no;
	struct volumes_options vo;
	struct mirror_deps     md;
	char                   e[512];

	j->j_deps = *d;
	j->j_stamps = d->probes == NULL || d->probes_version != NULL;
	j->j_kc = kubeconfig_load(d->cfg->kubeconfig, e, sizeof(e));
	if (j->j_kc == NULL) {
		snprintf(err, errlen, "--kubeconfig %s", e);
		free(j);
		return NULL;
	}
	memset(&ao, 0, sizeof(ao));
	ao.ping_interval_ms = join_env_ms("KLET_API_PING_INTERVAL_MS");
	ao.ping_timeout_ms = join_env_ms("KLET_API_PING_TIMEOUT_MS");
	j->j_api = api_new(d->base, j->j_kc, &ao, e, sizeof(e));
	if (j->j_api == NULL) {
		snprintf(err, errlen, "--kubeconfig %s: %s", d->cfg->kubeconfig, e);
		kubeconfig_free(j->j_kc);
		free(j);
		return NULL;
	}
	log_info("joining the cluster at %s as node %s (context %s)", j->j_kc->server,
	    d->cfg->node_name, j->j_kc->context);
	memset(&no, 0, sizeof(no));
	no.name = d->cfg->node_name;
	no.labels = &d->cfg->node_labels;
	no.max_pods = d->cfg->max_pods;
	no.kubelet_port = &d->cfg->port; /* server: kletd sets the port it bound */
	no.root_dir = d->cfg->root_dir;
	j->j_resources.kube_reserved = &d->cfg->kube_reserved;
	j->j_resources.system_reserved = &d->cfg->system_reserved;
	j->j_resources.eviction_hard = &d->cfg->eviction_hard;
	no.resources = &j->j_resources;
	no.register_node = d->cfg->register_node;
	no.status_check_ms = d->cfg->node_status_ms > 0 ? d->cfg->node_status_ms : 0;
	no.lease_duration_s = d->cfg->lease_duration_s;
	no.lease_renew_ms = join_env_ms("KLET_LEASE_RENEW_MS");
	j->j_node = node_new(d->base, j->j_api, &no);
	/* NotReady until the runtime has answered. */
	node_set_runtime_health(j->j_node, 0,
	    "container runtime status check may not have "
	    "completed yet");
	memset(&so, 0, sizeof(so));
	so.store = d->store;
	so.host_ip = node_ip(j->j_node);
	j->j_status = status_new(d->base, j->j_api, &so);
	memset(&wo, 0, sizeof(wo));
	wo.node = d->cfg->node_name;
	wo.pc = d->pc;
	wo.store = d->store;
	wo.events = d->events;
	wo.resume = 1;
	j->j_watch = watch_new(d->base, j->j_api, &wo);
	memset(&md, 0, sizeof(md));
	md.api = j->j_api;
	md.watch = j->j_watch;
	md.pc = d->pc;
	md.node = j->j_node;
	md.node_name = d->cfg->node_name;
	j->j_mirror = mirror_new(&md);
	if (d->events != NULL)
		j->j_events = api_events_new(d->base, j->j_api, d->events, d->cfg->node_name, 0, 0);
	memset(&vo, 0, sizeof(vo));
	vo.root_dir = d->cfg->root_dir;
	vo.ttl_ms = join_env_ms("KLET_OBJECT_TTL_MS");
	j->j_volumes = volumes_new(d->base, j->j_api, &vo);
	if (d->workers != NULL)
		volumes_set_kick(j->j_volumes, join_volumes_kick, d->workers);
	if (d->kr != NULL)
		kuberuntime_set_volumes(d->kr, j->j_volumes);
	j->j_rc = runtimeclass_new(d->base, j->j_api);
	if (d->kr != NULL)
		kuberuntime_set_runtime_classes(d->kr, join_rc_lookup, j->j_rc);
	return j;
}

/* An object a pod waited for arrived: sync the pod again now. */
static void
join_volumes_kick(const char *uid, void *arg)
{
	podworkers_kick(arg, uid);
}

void
api_join_free(struct api_join *j)
{
	if (j == NULL)
		return;
	api_events_free(j->j_events);
	if (j->j_deps.kr != NULL) {
		kuberuntime_set_volumes(j->j_deps.kr, NULL);
		kuberuntime_set_runtime_classes(j->j_deps.kr, NULL, NULL);
	}
	runtimeclass_free(j->j_rc);
	volumes_free(j->j_volumes);
	mirror_free(j->j_mirror);
	watch_free(j->j_watch);
	status_free(j->j_status);
	node_free(j->j_node);
	api_free(j->j_api);
	kubeconfig_free(j->j_kc);
	free(j);
}

/* The pod's recorded start failures (ErrImagePull, CrashLoopBackOff...), copied. */
struct errs {
	struct start_error *v;
	size_t              n;
};

static void
join_errs_add(const struct kr_start_error *e, void *arg)
{
	struct errs *x = arg;

	x->v = xreallocarray(x->v, x->n + 1, sizeof(*x->v));
	x->v[x->n].name = xstrdup(e->container);
	x->v[x->n].reason = xstrdup(e->reason);
	x->v[x->n].message = xstrdup(e->message);
	x->n++;
}

static void
join_errs_clear(struct errs *x)
{
	size_t i;

	for (i = 0; i < x->n; i++) {
		free((char *)x->v[i].name);
		free((char *)x->v[i].reason);
		free((char *)x->v[i].message);
	}
	free(x->v);
}

static void
join_update_status(struct api_join *j, const struct pod *view, const char *runtime_uid,
    const struct rt_pod_status *rt, int terminal, const struct status_stamp *stamp)
{
	struct errs             x = { NULL, 0 };
	struct start_errors     se;
	struct probe_set        ps;
	const struct probe_set *probes = NULL;

	memset(&ps, 0, sizeof(ps));
	if (j->j_deps.probes != NULL &&
	    j->j_deps.probes(runtime_uid, &ps, j->j_deps.probes_arg) == 0)
		probes = &ps;
	if (j->j_deps.kr != NULL)
		kuberuntime_foreach_start_error(j->j_deps.kr, runtime_uid, join_errs_add, &x);
	se.v = x.v;
	se.n = x.n;
	status_update(j->j_status, view, rt, probes, x.n > 0 ? &se : NULL, terminal, stamp);
	join_errs_clear(&x);
}

/* One pass of api_join_relisted. */
struct join_pass {
	struct api_join *jp_join;
	int              jp_stale; /* a status is not current after the pass */
};

/* The versioned inputs of runtime_uid's status (stamp->pod and ->mirror set by the caller)
 * and its runtime status; terminal is the pod worker's (*worker: 1 when it has one). */
static const struct rt_pod_status *
join_pass_inputs(
    struct api_join *j, const char *runtime_uid, struct status_stamp *stamp, int *worker)
{
	const struct rt_pod_status *rt;
	struct pw_view              v;

	rt = podcache_get_versioned(j->j_deps.cache, runtime_uid, &stamp->rt);
	*worker = podworkers_get(j->j_deps.workers, runtime_uid, &v) == 0;
	if (*worker)
		stamp->terminal = v.state == PW_TERMINATED || v.state == PW_FINISHED;
	if (j->j_deps.kr != NULL)
		stamp->errors = kuberuntime_start_errors_version(j->j_deps.kr, runtime_uid);
	if (j->j_deps.probes_version != NULL)
		stamp->probes = j->j_deps.probes_version(runtime_uid, j->j_deps.probes_arg);
	return rt;
}

/* After an update: whether the status is now current (the same inputs change nothing). */
static void
join_pass_check(struct join_pass *jp, const char *status_uid, const struct status_stamp *stamp)
{
	struct api_join *j = jp->jp_join;

	if (!j->j_stamps || !status_current(j->j_status, status_uid, stamp))
		jp->jp_stale = 1;
}

/* A static pod's status goes to its mirror pod (same spec, the mirror's uid). */
static void
join_relisted_static(struct join_pass *jp, const struct pod *pod)
{
	struct api_join            *j = jp->jp_join;
	const struct pod           *m = mirror_of(j->j_mirror, pod);
	const struct rt_pod_status *rt;
	struct pod                  view;
	struct status_stamp         stamp;
	int                         worker;

	if (m == NULL)
		return;
	memset(&stamp, 0, sizeof(stamp));
	stamp.pod = pod;
	stamp.mirror = m;
	rt = join_pass_inputs(j, pod->uid, &stamp, &worker);
	if (j->j_stamps && status_current(j->j_status, m->uid, &stamp))
		return;
	/* A view for this call only (status_update keeps none of it): the static pod's
	 * fields, borrowed, with the mirror's uid and status. No reference: refs 0. */
	view = *pod;
	view.refs = 0;
	view.uid = m->uid;
	view.status = m->status;
	view.deletion_ts = 0; /* the mirror is never deleted for the static pod */
	join_update_status(j, &view, pod->uid, rt, stamp.terminal, j->j_stamps ? &stamp : NULL);
	join_pass_check(jp, m->uid, &stamp);
}

static void
join_relisted_pod(const struct pod *pod, const char *source, int admitted, void *arg)
{
	struct join_pass           *jp = arg;
	struct api_join            *j = jp->jp_join;
	const struct rt_pod_status *rt;
	struct status_stamp         stamp;
	int                         worker;

	if (source == NULL || pod->uid == NULL)
		return;
	memset(&stamp, 0, sizeof(stamp));
	stamp.pod = pod;
	if (!admitted) {
		const char *reason = NULL, *message = NULL;

		/* Rejected at admission: the API pod is Failed and says why. */
		if (strcmp(source, "api") != 0 ||
		    podconfig_rejection(j->j_deps.pc, pod->uid, &reason, &message) == -1)
			return;
		stamp.terminal = 1;
		if (j->j_stamps && status_current(j->j_status, pod->uid, &stamp))
			return;
		status_reject(j->j_status, pod, reason, message, j->j_stamps ? &stamp : NULL);
		join_pass_check(jp, pod->uid, &stamp);
		return;
	}
	if (strcmp(source, "api") != 0) {
		join_relisted_static(jp, pod);
		return;
	}
	rt = join_pass_inputs(j, pod->uid, &stamp, &worker);
	if (!worker && pod->deletion_ts != 0 && (rt == NULL || rt->ncontainers == 0))
		stamp.terminal = 1; /* never started here and being deleted */
	if (j->j_stamps && status_current(j->j_status, pod->uid, &stamp))
		return;
	if (!stamp.terminal) /* volumes: updates, tokens, labels (also after a restart) */
		volumes_track_pod(j->j_volumes, pod);
	else
		volumes_forget_pod(j->j_volumes, pod->uid);
	join_update_status(j, pod, pod->uid, rt, stamp.terminal, j->j_stamps ? &stamp : NULL);
	join_pass_check(jp, pod->uid, &stamp);
}

static void
join_inputs(struct api_join *j, struct join_inputs *in)
{
	memset(in, 0, sizeof(*in));
	in->ji_cache = podcache_generation(j->j_deps.cache);
	if (j->j_deps.probes_version != NULL)
		in->ji_probes = j->j_deps.probes_version(NULL, j->j_deps.probes_arg);
	if (j->j_deps.kr != NULL)
		in->ji_errors = kuberuntime_start_errors_version(j->j_deps.kr, NULL);
	in->ji_workers = podworkers_version(j->j_deps.workers);
	in->ji_pods = podconfig_version(j->j_deps.pc);
	in->ji_mirrors = watch_mirrors_version(j->j_watch);
	in->ji_status = status_version(j->j_status);
}

void
api_join_relisted(struct api_join *j)
{
	struct join_pass   jp = { j, 0 };
	struct join_inputs in;

	if (j == NULL)
		return;
	status_set_host_ip(j->j_status, node_ip(j->j_node)); /* the address may change */
	join_inputs(j, &in);
	if (!j->j_stamps || !j->j_current || memcmp(&in, &j->j_last, sizeof(in)) != 0) {
		/* Something changed: each pod whose own inputs changed is regenerated. */
		podconfig_foreach(j->j_deps.pc, join_relisted_pod, &jp);
		j->j_last = in;
		j->j_current = !jp.jp_stale;
	}
	mirror_pass(j->j_mirror);
}

void
api_join_status_batch(struct api_join *j)
{
	if (j != NULL)
		status_batch(j->j_status);
}

void
api_join_runtime(
    struct api_join *j, int ready, const char *reason, const char *name, const char *version)
{
	if (j == NULL)
		return;
	node_set_runtime_health(j->j_node, ready, ready ? NULL : reason);
	if (ready && name != NULL && version != NULL)
		node_set_runtime_version(j->j_node, name, version);
}

void
api_join_pleg(struct api_join *j, int healthy, const char *why)
{
	if (j != NULL)
		node_set_pleg_health(j->j_node, healthy, healthy ? NULL : why);
}

void
api_join_pressure(struct api_join *j, unsigned conditions)
{
	if (j != NULL && j->j_node != NULL)
		node_set_pressure(j->j_node, conditions);
}

void
api_join_images(struct api_join *j, const struct node_image *im, size_t n)
{
	if (j != NULL && j->j_node != NULL)
		node_set_images(j->j_node, im, n);
}

void
api_join_foreach_restored(
    struct api_join *j, void (*cb)(const struct pod_status *, void *), void *arg)
{
	if (j != NULL)
		status_foreach_restored(j->j_status, cb, arg);
}

void
api_join_pod_evicted(
    struct api_join *j, const struct pod *pod, const char *reason, const char *message)
{
	if (j != NULL)
		status_evict(j->j_status, pod, reason, message, 1);
}

void
api_join_shutting_down(struct api_join *j, int on)
{
	if (j != NULL && j->j_node != NULL)
		node_set_shutting_down(j->j_node, on);
}

int
api_join_pod_is_evicted(struct api_join *j, const char *uid)
{
	struct pod_status st;
	int64_t           v, a;
	int               evicted;

	if (j == NULL || status_get(j->j_status, uid, &st, &v, &a) == -1)
		return 0;
	evicted =
	    st.phase == PHASE_FAILED && st.reason != NULL && strcmp(st.reason, "Evicted") == 0;
	pod_status_clear(&st);
	return evicted;
}

void
api_join_pod_removed(struct api_join *j, const char *uid)
{
	if (j != NULL) {
		status_forget(j->j_status, uid);
		volumes_forget_pod(j->j_volumes, uid);
	}
}

int
api_join_ctl_status(const char *uid, struct pod_status *out, void *arg)
{
	struct api_join *j = arg;

	if (j == NULL || j->j_status == NULL || uid == NULL)
		return -1;
	return status_get(j->j_status, uid, out, NULL, NULL);
}

void
api_join_ctl_info(struct ctl_api_info *out, void *arg)
{
	struct api_join          *j = arg;
	static struct watch_stats st; /* the strings handed out must outlive this call */

	memset(out, 0, sizeof(*out));
	out->last_event_age_ms = -1;
	out->lease_age_ms = -1;
	if (j == NULL)
		return;
	out->configured = 1;
	out->connected = api_connected(j->j_api);
	{
		struct status_stats ss;

		status_get_stats(j->j_status, &ss);
		out->pod_status_generated = ss.generated;
		out->pod_status_versions = ss.versions;
		out->pod_status_patches = ss.patches;
		out->pod_status_acked = ss.acked;
	}
	if (j->j_node != NULL) {
		struct node_stats ns;

		node_get_stats(j->j_node, &ns);
		out->registered = ns.registered;
		out->node_ip = node_ip(j->j_node);
		out->lease_duration_s = ns.lease_duration_s;
		out->lease_renewals = ns.lease_renewals;
		out->status_patches = ns.status_patches;
		if (ns.lease_renewed_ms > 0)
			out->lease_age_ms = now_mono_ms() - ns.lease_renewed_ms;
	}
	if (j->j_watch == NULL)
		return;
	watch_get_stats(j->j_watch, &st);
	/* Without a connection, a watch (or list) request only waits for one. */
	out->watch_state = out->connected || st.state == WATCH_IDLE ? watch_state_name(st.state)
	                                                            : "stopped (no connection)";
	out->resource_version = st.rv[0] != '\0' ? st.rv : NULL;
	if (st.last_event_ms != 0)
		out->last_event_age_ms = now_mono_ms() - st.last_event_ms;
}

struct api *
api_join_api(struct api_join *j)
{
	return j != NULL ? j->j_api : NULL;
}

int
api_join_reload_client_cert(struct api_join *j, const char *pem_path)
{
	return j != NULL ? api_reload_client_cert(j->j_api, pem_path) : -1;
}
