/* join.c — wiring of api, watch, status and node for kletd (see join.h). */
#include <sys/queue.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <event2/event.h>

#include "api/api.h"
#include "logic/actions.h"
#include "api/join.h"
#include "core/config.h"
#include "ctl/ctl.h"
#include "node/events.h"
#include "core/json.h"
#include "api/kubeconfig.h"
#include "kuberuntime/kuberuntime.h"
#include "core/log.h"
#include "api/node.h"
#include "pod/pod.h"
#include "node/podcache.h"
#include "logic/podstatus.h"
#include "node/podconfig.h"
#include "node/podworkers.h"
#include "api/status.h"
#include "core/util.h"
#include "volumes/volumes.h"
#include "api/watch.h"

struct api_join {
	struct api_join_deps j_deps;
	struct kubeconfig   *j_kc;
	struct api          *j_api;
	struct watch        *j_watch;
	struct status_mgr   *j_status;
	struct node         *j_node;
	struct api_events   *j_events;
	struct volumes      *j_volumes; /* configMap / secret objects of the pods */
	/* Mirror pods: one create or delete at a time. */
	struct api_call *j_mirror_call;
	char            *j_mirror_conflict; /* ns/name that exists but is not seen yet */
	int64_t          j_mirror_conflict_ms;
};

static void mirror_pass(struct api_join *);
static void volumes_kick(const char *, void *);

/* Test knobs (milliseconds), e.g. a short PING interval for outage tests. */
static int64_t
env_ms(const char *name)
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
	char                   e[512];

	j->j_deps = *d;
	j->j_kc = kubeconfig_load(d->cfg->kubeconfig, e, sizeof(e));
	if (j->j_kc == NULL) {
		snprintf(err, errlen, "--kubeconfig %s", e);
		free(j);
		return NULL;
	}
	memset(&ao, 0, sizeof(ao));
	ao.ping_interval_ms = env_ms("KLET_API_PING_INTERVAL_MS");
	ao.ping_timeout_ms = env_ms("KLET_API_PING_TIMEOUT_MS");
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
	no.register_node = d->cfg->register_node;
	no.status_check_ms = d->cfg->node_status_ms > 0 ? d->cfg->node_status_ms : 0;
	no.lease_duration_s = d->cfg->lease_duration_s;
	no.lease_renew_ms = env_ms("KLET_LEASE_RENEW_MS");
	j->j_node = node_new(d->base, j->j_api, &no);
	/* NotReady until the runtime has answered. */
	node_set_runtime_health(j->j_node, 0,
	    "container runtime status check may not have "
	    "completed yet");
	memset(&so, 0, sizeof(so));
	so.store = d->store;
	j->j_status = status_new(d->base, j->j_api, &so);
	memset(&wo, 0, sizeof(wo));
	wo.node = d->cfg->node_name;
	wo.pc = d->pc;
	wo.store = d->store;
	wo.resume = 1;
	j->j_watch = watch_new(d->base, j->j_api, &wo);
	if (d->events != NULL)
		j->j_events = api_events_new(d->base, j->j_api, d->events, d->cfg->node_name, 0, 0);
	memset(&vo, 0, sizeof(vo));
	vo.root_dir = d->cfg->root_dir;
	vo.ttl_ms = env_ms("KLET_OBJECT_TTL_MS");
	j->j_volumes = volumes_new(d->base, j->j_api, &vo);
	if (d->workers != NULL)
		volumes_set_kick(j->j_volumes, volumes_kick, d->workers);
	if (d->kr != NULL)
		kuberuntime_set_volumes(d->kr, j->j_volumes);
	return j;
}

/* An object a pod waited for arrived: sync the pod again now. */
static void
volumes_kick(const char *uid, void *arg)
{
	podworkers_kick(arg, uid);
}

void
api_join_free(struct api_join *j)
{
	if (j == NULL)
		return;
	api_events_free(j->j_events);
	if (j->j_deps.kr != NULL)
		kuberuntime_set_volumes(j->j_deps.kr, NULL);
	volumes_free(j->j_volumes);
	api_call_cancel(j->j_mirror_call);
	free(j->j_mirror_conflict);
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
errs_add(const struct kr_start_error *e, void *arg)
{
	struct errs *x = arg;

	x->v = xreallocarray(x->v, x->n + 1, sizeof(*x->v));
	x->v[x->n].name = xstrdup(e->container);
	x->v[x->n].reason = xstrdup(e->reason);
	x->v[x->n].message = xstrdup(e->message);
	x->n++;
}

static void
errs_clear(struct errs *x)
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
update_status(struct api_join *j, const struct pod *view, const char *runtime_uid,
    const struct rt_pod_status *rt, int terminal)
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
		kuberuntime_foreach_start_error(j->j_deps.kr, runtime_uid, errs_add, &x);
	se.v = x.v;
	se.n = x.n;
	status_update(j->j_status, view, rt, probes, x.n > 0 ? &se : NULL, terminal);
	errs_clear(&x);
}

/* A static pod's status goes to its mirror pod (same spec, the mirror's uid). */
static void
relisted_static(struct api_join *j, const struct pod *pod)
{
	const struct pod *m = watch_mirror(j->j_watch, pod->ns, pod->name);
	const char       *hash = m ? kvlist_get(&m->annotations, MIRROR_ANNOTATION) : NULL;
	const struct rt_pod_status *rt;
	struct pod                 *view;
	struct pw_view              v;
	int                         terminal = 0;

	if (m == NULL || hash == NULL || strcmp(hash, pod->uid) != 0)
		return;
	rt = podcache_get(j->j_deps.cache, pod->uid, NULL);
	if (podworkers_get(j->j_deps.workers, pod->uid, &v) == 0)
		terminal = v.state == PW_TERMINATED || v.state == PW_FINISHED;
	view = pod_dup(pod);
	free(view->uid);
	view->uid = xstrdup(m->uid);
	pod_status_clear(&view->status);
	podstatus_copy(&view->status, &m->status);
	view->deletion_ts = 0; /* the mirror is never deleted for the static pod */
	update_status(j, view, pod->uid, rt, terminal);
	pod_free(view);
}

static void
relisted_pod(const struct pod *pod, const char *source, int admitted, void *arg)
{
	struct api_join            *j = arg;
	const struct rt_pod_status *rt;
	struct pw_view              v;
	int                         terminal = 0;

	if (source == NULL || pod->uid == NULL)
		return;
	if (!admitted) {
		const char *reason = NULL, *message = NULL;

		/* Rejected at admission: the API pod is Failed and says why. */
		if (strcmp(source, "api") == 0 &&
		    podconfig_rejection(j->j_deps.pc, pod->uid, &reason, &message) == 0)
			status_reject(j->j_status, pod, reason, message);
		return;
	}
	if (strcmp(source, "api") != 0) {
		relisted_static(j, pod);
		return;
	}
	rt = podcache_get(j->j_deps.cache, pod->uid, NULL);
	if (podworkers_get(j->j_deps.workers, pod->uid, &v) == 0)
		terminal = v.state == PW_TERMINATED || v.state == PW_FINISHED;
	else if (pod->deletion_ts != 0 && (rt == NULL || rt->ncontainers == 0))
		terminal = 1; /* never started here and being deleted */
	if (!terminal)        /* volumes: updates, tokens, labels (also after a restart) */
		volumes_track_pod(j->j_volumes, pod);
	else
		volumes_forget_pod(j->j_volumes, pod->uid);
	update_status(j, pod, pod->uid, rt, terminal);
}

void
api_join_relisted(struct api_join *j)
{
	if (j == NULL)
		return;
	podconfig_foreach(j->j_deps.pc, relisted_pod, j);
	mirror_pass(j);
}

/* ---- mirror pods ---- */

/* The mirror of a static pod: its labels, annotations (plus config.mirror = its hash) and
 * spec, on this node, owned by the Node. Returns the body (caller frees) or NULL. */
static char *
mirror_body(struct api_join *j, const struct pod *pod)
{
	const char        *doc, *fmt = NULL, *nuid = node_uid(j->j_node);
	const struct json *root, *md, *spec, *v;
	struct json_doc   *jd;
	char               err[128], *out;
	size_t             len = 0, i;
	yajl_gen           g;

	doc = podconfig_doc(j->j_deps.pc, pod->uid, &len, &fmt, NULL);
	if (doc == NULL || nuid == NULL)
		return NULL;
	jd = fmt != NULL && strcmp(fmt, "yaml") == 0
	    ? json_parse_yaml(doc, len, NULL, err, sizeof(err))
	    : json_parse(doc, len, NULL, err, sizeof(err));
	if (jd == NULL)
		return NULL;
	root = json_root(jd);
	md = json_get(root, "metadata");
	spec = json_get(root, "spec");
	g = json_gen_new(0);
	yajl_gen_map_open(g);
	json_gen_kv_str(g, "apiVersion", "v1");
	json_gen_kv_str(g, "kind", "Pod");
	json_gen_key(g, "metadata");
	yajl_gen_map_open(g);
	json_gen_kv_str(g, "name", pod->name);
	json_gen_kv_str(g, "namespace", pod->ns);
	if ((v = json_get(md, "labels")) != NULL) {
		json_gen_key(g, "labels");
		json_gen_value(g, v);
	}
	json_gen_key(g, "annotations");
	yajl_gen_map_open(g);
	v = json_get(md, "annotations");
	for (i = 0; i < json_len(v); i++) {
		if (strcmp(json_key(v, i), MIRROR_ANNOTATION) == 0)
			continue;
		json_gen_key(g, json_key(v, i));
		json_gen_value(g, json_index(v, i));
	}
	json_gen_kv_str(g, MIRROR_ANNOTATION, pod->uid);
	yajl_gen_map_close(g);
	json_gen_key(g, "ownerReferences");
	yajl_gen_array_open(g);
	yajl_gen_map_open(g);
	json_gen_kv_str(g, "apiVersion", "v1");
	json_gen_kv_str(g, "kind", "Node");
	json_gen_kv_str(g, "name", j->j_deps.cfg->node_name);
	json_gen_kv_str(g, "uid", nuid);
	json_gen_kv_bool(g, "controller", 1);
	yajl_gen_map_close(g);
	yajl_gen_array_close(g);
	yajl_gen_map_close(g);
	json_gen_key(g, "spec");
	yajl_gen_map_open(g);
	for (i = 0; i < json_len(spec); i++) {
		if (strcmp(json_key(spec, i), "nodeName") == 0)
			continue;
		json_gen_key(g, json_key(spec, i));
		json_gen_value(g, json_index(spec, i));
	}
	json_gen_kv_str(g, "nodeName", j->j_deps.cfg->node_name);
	yajl_gen_map_close(g);
	yajl_gen_map_close(g);
	out = json_gen_take(g, NULL);
	yajl_gen_free(g);
	json_free(jd);
	return out;
}

static void
mirror_done(const struct api_response *r, void *arg)
{
	struct api_join *j = arg;

	j->j_mirror_call = NULL;
	if (r->status == 409 && strcmp(r->reason, "AlreadyExists") == 0) {
		/* There, but the watch has not shown it yet (e.g. resumed without a list). */
		j->j_mirror_conflict_ms = now_mono_ms();
		return;
	}
	if (r->status >= 300 && r->status != 404)
		log_warnx("mirror pod: %d %s", r->status, r->message);
}

struct mirror_scan {
	struct api_join *j;
	int              acted;
};

static void
mirror_static(const struct pod *pod, const char *source, int admitted, void *arg)
{
	struct mirror_scan *ms = arg;
	struct api_join    *j = ms->j;
	const struct pod   *m;
	const char         *hash;
	char               *body, *path, *key;

	if (ms->acted || source == NULL || strcmp(source, "file") != 0 || !admitted ||
	    pod->deletion_ts != 0)
		return;
	m = watch_mirror(j->j_watch, pod->ns, pod->name);
	hash = m ? kvlist_get(&m->annotations, MIRROR_ANNOTATION) : NULL;
	if (m != NULL && hash != NULL && strcmp(hash, pod->uid) == 0)
		return;
	ms->acted = 1;
	if (m != NULL) {
		/* An outdated mirror (the static pod changed): delete it; recreated next pass. */
		path = xsprintf("/api/v1/namespaces/%s/pods/%s", m->ns, m->name);
		body = api_delete_options(0, m->uid);
		log_info("mirror pod %s/%s is outdated: deleting it", m->ns, m->name);
		j->j_mirror_call = api_request(j->j_api, "DELETE", path, "application/json", body,
		    strlen(body), 0, mirror_done, j);
		free(path);
		free(body);
		return;
	}
	key = xsprintf("%s/%s", pod->ns, pod->name);
	if (streq_null(key, j->j_mirror_conflict) &&
	    now_mono_ms() - j->j_mirror_conflict_ms < 30000) {
		free(key);
		ms->acted = 0;
		return;
	}
	free(j->j_mirror_conflict);
	j->j_mirror_conflict = key;
	j->j_mirror_conflict_ms = 0;
	body = mirror_body(j, pod);
	if (body == NULL) {
		ms->acted = 0;
		return;
	}
	path = xsprintf("/api/v1/namespaces/%s/pods", pod->ns);
	log_info("creating mirror pod %s/%s", pod->ns, pod->name);
	j->j_mirror_call = api_request(
	    j->j_api, "POST", path, "application/json", body, strlen(body), 0, mirror_done, j);
	free(path);
	free(body);
}

static void
mirror_orphan(const struct pod *m, void *arg)
{
	struct mirror_scan *ms = arg;
	struct api_join    *j = ms->j;
	const char         *hash = kvlist_get(&m->annotations, MIRROR_ANNOTATION);
	const struct pod   *sp;
	char               *path, *body;

	if (ms->acted || m->deletion_ts != 0)
		return;
	sp = hash != NULL ? podconfig_get(j->j_deps.pc, hash) : NULL;
	if (sp != NULL && podconfig_wanted(j->j_deps.pc, hash))
		return;
	ms->acted = 1;
	path = xsprintf("/api/v1/namespaces/%s/pods/%s", m->ns, m->name);
	body = api_delete_options(0, m->uid);
	log_info("mirror pod %s/%s has no static pod: deleting it", m->ns, m->name);
	j->j_mirror_call = api_request(
	    j->j_api, "DELETE", path, "application/json", body, strlen(body), 0, mirror_done, j);
	free(path);
	free(body);
}

/* One step per relist: create missing mirrors, replace outdated ones, delete orphans. */
static void
mirror_pass(struct api_join *j)
{
	struct mirror_scan ms = { j, 0 };

	if (j->j_mirror_call != NULL || !watch_synced(j->j_watch) || node_uid(j->j_node) == NULL)
		return;
	podconfig_foreach(j->j_deps.pc, mirror_static, &ms);
	if (!ms.acted)
		watch_foreach_mirror(j->j_watch, mirror_orphan, &ms);
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
api_join_foreach_restored(
    struct api_join *j, void (*cb)(const struct pod_status *, void *), void *arg)
{
	if (j != NULL)
		status_foreach_restored(j->j_status, cb, arg);
}

void
api_join_pod_removed(struct api_join *j, const char *uid)
{
	if (j != NULL) {
		status_forget(j->j_status, uid);
		volumes_forget_pod(j->j_volumes, uid);
	}
}

/* ---- events to the API ---- */

struct pev {
	TAILQ_ENTRY(pev) p_entry;
	uint64_t           p_id;   /* the recorder's aggregated event id */
	char              *p_name; /* the Event object's name */
	char              *p_ns;
	char              *p_kind, *p_obj, *p_uid, *p_path, *p_reason, *p_message;
	enum ev_type       p_type;
	int32_t            p_count;
	int64_t            p_first_ms, p_last_ms;
	int                p_posted;  /* the server has it */
	int                p_dirty;   /* newer than what the server has */
	int64_t            p_sent_ms; /* monotonic, last write */
	struct api_call   *p_call;
	struct api_events *p_owner;
};

TAILQ_HEAD(pevs, pev);

struct api_events {
	struct api    *a_api;
	struct events *a_events;
	int            a_listen_id;
	char          *a_node;
	int64_t        a_min_ms;
	double         a_qps;
	double         a_tokens;
	int64_t        a_tokens_ms;
	struct pevs    a_list;
	size_t         a_n;
	struct event  *a_timer;
	uint64_t       a_posts, a_patches, a_dropped;
};

static void
pev_free(struct pev *p)
{
	api_call_cancel(p->p_call);
	free(p->p_name);
	free(p->p_ns);
	free(p->p_kind);
	free(p->p_obj);
	free(p->p_uid);
	free(p->p_path);
	free(p->p_reason);
	free(p->p_message);
	free(p);
}

static void
ts_rfc3339(int64_t ms, char *buf, size_t len)
{
	time_format_rfc3339(ms / 1000, buf, len);
}

static void
pev_done(const struct api_response *r, void *arg)
{
	struct pev *p = arg;

	p->p_call = NULL;
	if (r->status == 201 || r->status == 200) {
		p->p_posted = 1;
		return;
	}
	if (r->status == 409 && !p->p_posted) {
		p->p_posted = 1; /* exists already (a restart): patch it next time */
		p->p_dirty = 1;
		return;
	}
	if (r->status == 404 && p->p_posted) {
		p->p_posted = 0; /* expired on the server: create it again */
		p->p_dirty = 1;
		return;
	}
	p->p_owner->a_dropped++;
	log_v(2, "events: %s %s: %d %s", p->p_posted ? "patch" : "post", p->p_name, r->status,
	    r->message);
}

static void
pev_send(struct api_events *a, struct pev *p)
{
	char     first[40], last[40], *body, *path;
	yajl_gen g = json_gen_new(0);

	ts_rfc3339(p->p_first_ms, first, sizeof(first));
	ts_rfc3339(p->p_last_ms, last, sizeof(last));
	yajl_gen_map_open(g);
	if (!p->p_posted) {
		json_gen_kv_str(g, "apiVersion", "v1");
		json_gen_kv_str(g, "kind", "Event");
		json_gen_key(g, "metadata");
		yajl_gen_map_open(g);
		json_gen_kv_str(g, "name", p->p_name);
		json_gen_kv_str(g, "namespace", p->p_ns);
		yajl_gen_map_close(g);
		json_gen_key(g, "involvedObject");
		yajl_gen_map_open(g);
		json_gen_kv_str(g, "apiVersion", "v1");
		json_gen_kv_str(g, "kind", p->p_kind);
		if (strcmp(p->p_kind, "Node") != 0)
			json_gen_kv_str(g, "namespace", p->p_ns);
		json_gen_kv_str(g, "name", p->p_obj);
		if (p->p_uid != NULL)
			json_gen_kv_str(g, "uid", p->p_uid);
		if (p->p_path != NULL)
			json_gen_kv_str(g, "fieldPath", p->p_path);
		yajl_gen_map_close(g);
		json_gen_kv_str(g, "reason", p->p_reason);
		json_gen_kv_str(g, "type", ev_type_name(p->p_type));
		json_gen_key(g, "source");
		yajl_gen_map_open(g);
		json_gen_kv_str(g, "component", "kubelet");
		json_gen_kv_str(g, "host", a->a_node);
		yajl_gen_map_close(g);
		json_gen_kv_str(g, "reportingComponent", "kubelet");
		json_gen_kv_str(g, "reportingInstance", a->a_node);
		json_gen_kv_str(g, "firstTimestamp", first);
	}
	json_gen_kv_int(g, "count", p->p_count);
	json_gen_kv_str(g, "lastTimestamp", last);
	json_gen_kv_str(g, "message", p->p_message);
	yajl_gen_map_close(g);
	body = json_gen_take(g, NULL);
	yajl_gen_free(g);
	if (!p->p_posted) {
		path = xsprintf("/api/v1/namespaces/%s/events", p->p_ns);
		a->a_posts++;
		p->p_call = api_request(
		    a->a_api, "POST", path, "application/json", body, strlen(body), 0, pev_done, p);
	} else {
		path = xsprintf("/api/v1/namespaces/%s/events/%s", p->p_ns, p->p_name);
		a->a_patches++;
		p->p_call = api_request(a->a_api, "PATCH", path,
		    "application/strategic-merge-patch+json", body, strlen(body), 0, pev_done, p);
	}
	free(path);
	free(body);
	p->p_dirty = 0;
	p->p_sent_ms = now_mono_ms();
}

static void
aev_flush(evutil_socket_t fd, short what, void *arg)
{
	struct api_events *a = arg;
	struct pev        *p;
	int64_t            now = now_mono_ms();

	(void)fd;
	(void)what;
	/* Refill the global budget. */
	a->a_tokens += (double)(now - a->a_tokens_ms) * a->a_qps / 1000.0;
	if (a->a_tokens > 2 * a->a_qps)
		a->a_tokens = 2 * a->a_qps;
	a->a_tokens_ms = now;
	TAILQ_FOREACH(p, &a->a_list, p_entry)
	{
		if (!p->p_dirty || p->p_call != NULL)
			continue;
		if (p->p_sent_ms != 0 && now - p->p_sent_ms < a->a_min_ms)
			continue; /* coalesce: the next write carries the newest count */
		if (a->a_tokens < 1.0)
			break;
		a->a_tokens -= 1.0;
		pev_send(a, p);
	}
}

static void
aev_record(const struct ev_record *r, int is_new, void *arg)
{
	struct api_events *a = arg;
	struct pev        *p;

	(void)is_new;
	TAILQ_FOREACH(p, &a->a_list, p_entry)
	if (p->p_id == r->id)
		break;
	if (p == NULL) {
		p = xcalloc(1, sizeof(*p));
		p->p_owner = a;
		p->p_id = r->id;
		p->p_ns = xstrdup(r->ns != NULL && *r->ns != '\0' ? r->ns : "default");
		p->p_kind = xstrdup(r->kind != NULL ? r->kind : "Pod");
		p->p_obj = xstrdup(r->name != NULL ? r->name : a->a_node);
		p->p_uid = xstrdup(r->uid);
		p->p_path = xstrdup(r->field_path);
		p->p_reason = xstrdup(r->reason != NULL ? r->reason : "");
		p->p_type = r->type;
		p->p_first_ms = r->first_ts;
		/* Unique and stable: the object, then the time of the first occurrence in hex. */
		p->p_name = xsprintf("%s.%llx%04llx", p->p_obj,
		    (unsigned long long)r->first_ts * 1000000ULL,
		    (unsigned long long)(r->id & 0xffff));
		TAILQ_INSERT_TAIL(&a->a_list, p, p_entry);
		a->a_n++;
		/* Bounded: forget the oldest quiet entries. */
		while (a->a_n > 2 * EVENTS_DEFAULT_CAPACITY) {
			struct pev *old = TAILQ_FIRST(&a->a_list);

			TAILQ_REMOVE(&a->a_list, old, p_entry);
			pev_free(old);
			a->a_n--;
		}
	}
	free(p->p_message);
	p->p_message = xstrdup(r->message != NULL ? r->message : "");
	p->p_count = r->count;
	p->p_last_ms = r->last_ts;
	p->p_dirty = 1;
}

struct api_events *
api_events_new(struct event_base *base, struct api *api, struct events *ev, const char *node,
    int64_t min_interval_ms, int qps)
{
	struct api_events *a = xcalloc(1, sizeof(*a));
	struct timeval     tv = { 0, 200000 };

	a->a_api = api;
	a->a_events = ev;
	a->a_node = xstrdup(node);
	a->a_min_ms = min_interval_ms > 0 ? min_interval_ms : 10000;
	a->a_qps = qps > 0 ? qps : 50; /* the kubelet's eventRecordQPS; burst 2 x */
	a->a_tokens = 2 * a->a_qps;
	a->a_tokens_ms = now_mono_ms();
	TAILQ_INIT(&a->a_list);
	a->a_timer = event_new(base, -1, EV_PERSIST, aev_flush, a);
	event_add(a->a_timer, &tv);
	a->a_listen_id = events_listen(ev, aev_record, a);
	return a;
}

void
api_events_free(struct api_events *a)
{
	struct pev *p;

	if (a == NULL)
		return;
	events_unlisten(a->a_events, a->a_listen_id);
	event_free(a->a_timer);
	while ((p = TAILQ_FIRST(&a->a_list)) != NULL) {
		TAILQ_REMOVE(&a->a_list, p, p_entry);
		pev_free(p);
	}
	free(a->a_node);
	free(a);
}

void
api_events_stats(const struct api_events *a, uint64_t *posts, uint64_t *patches, uint64_t *dropped)
{
	*posts = a->a_posts;
	*patches = a->a_patches;
	*dropped = a->a_dropped;
}

void
api_join_ctl_info(struct ctl_api_info *out, void *arg)
{
	struct api_join          *j = arg;
	static struct watch_stats st; /* the strings handed out must outlive this call */

	memset(out, 0, sizeof(*out));
	out->last_event_age_ms = -1;
	if (j == NULL)
		return;
	out->configured = 1;
	out->connected = api_connected(j->j_api);
	if (j->j_watch == NULL)
		return;
	watch_get_stats(j->j_watch, &st);
	out->watch_state = watch_state_name(st.state);
	out->resource_version = st.rv[0] != '\0' ? st.rv : NULL;
	if (st.last_event_ms != 0)
		out->last_event_age_ms = now_mono_ms() - st.last_event_ms;
}
