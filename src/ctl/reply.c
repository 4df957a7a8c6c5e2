/* reply.c — podctl's replies: what the server reads from the daemon's parts and how it
 * writes it (pods, one pod described, containers, events, status). Read-only. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "core/config.h"
#include "core/heap.h"
#include "cri/cri.h"
#include "ctl/ctl.h"
#include "ctl/reply.h"
#include "node/events.h"
#include "node/logrotate.h"
#include "node/eviction.h"
#include "node/imagegc.h"
#include "core/json.h"
#include "kuberuntime/kuberuntime.h"
#include "core/log.h"
#include "core/loop.h"
#include "node/pleg.h"
#include "pod/pod.h"
#include "node/podcache.h"
#include "logic/podstatus.h"
#include "node/podworkers.h"
#include "prober/prober.h"
#include "store/store.h"
#include "core/util.h"

#define CTL_MAX_START_ERRORS 64

/* ---- the STATUS column ---- */

static const char *
ctl_terminated_reason(const struct container_state *st, const char *prefix, char *buf, size_t len)
{
	if (st->reason != NULL && *st->reason != '\0')
		snprintf(buf, len, "%s%s", prefix, st->reason);
	else if (st->signal != 0)
		snprintf(buf, len, "%sSignal:%d", prefix, st->signal);
	else
		snprintf(buf, len, "%sExitCode:%d", prefix, st->exit_code);
	return buf;
}

const char *
ctl_pod_status_reason(
    const struct pod *pod, const struct pod_status *st, int terminating, char *buf, size_t len)
{
	const char *reason = pod_phase_name(st->phase);
	size_t      i;
	int         initializing = 0;

	if (st->reason != NULL && *st->reason != '\0')
		reason = st->reason;
	for (i = 0; i < st->ninit_statuses; i++) {
		const struct container_status *cs = &st->init_statuses[i];

		if (cs->state.kind == CSTATE_TERMINATED && cs->state.exit_code == 0)
			continue;
		if (cs->state.kind == CSTATE_RUNNING && cs->started.set && cs->started.v)
			continue; /* a started sidecar does not hold initialization */
		initializing = 1;
		if (cs->state.kind == CSTATE_TERMINATED)
			reason = ctl_terminated_reason(&cs->state, "Init:", buf, len);
		else if (cs->state.kind == CSTATE_WAITING && cs->state.reason != NULL &&
		    *cs->state.reason != '\0' && strcmp(cs->state.reason, "PodInitializing") != 0) {
			snprintf(buf, len, "Init:%s", cs->state.reason);
			reason = buf;
		} else {
			snprintf(buf, len, "Init:%zu/%zu", i, st->ninit_statuses);
			reason = buf;
		}
		break;
	}
	if (!initializing) {
		int running = 0;

		for (i = st->nstatuses; i-- > 0;) {
			const struct container_status *cs = &st->statuses[i];

			if (cs->state.kind == CSTATE_WAITING && cs->state.reason != NULL &&
			    *cs->state.reason != '\0')
				reason = cs->state.reason;
			else if (cs->state.kind == CSTATE_TERMINATED)
				reason = ctl_terminated_reason(&cs->state, "", buf, len);
			else if (cs->state.kind == CSTATE_RUNNING)
				running = 1;
		}
		if (running && strcmp(reason, "Completed") == 0)
			reason = "Running";
	}
	if (terminating || (pod != NULL && pod->deletion_ts != 0))
		reason = "Terminating";
	return reason;
}

/* ---- gathering ---- */

struct ctl_errs {
	struct start_error v[CTL_MAX_START_ERRORS];
	size_t             n;
};

static void
ctl_collect_error(const struct kr_start_error *e, void *arg)
{
	struct ctl_errs *errs = arg;

	if (errs->n < CTL_MAX_START_ERRORS) {
		errs->v[errs->n].name = e->container;
		errs->v[errs->n].reason = e->reason;
		errs->v[errs->n].message = e->message;
		errs->n++;
	}
}

/* Generates the API status of a worker's pod as the status manager would. */
static void
ctl_pod_status(const struct ctl_deps *d, const struct pw_view *v, struct pod_status *out,
    struct probe_set *probes)
{
	struct podstatus_input in;
	struct ctl_errs        errs;
	struct start_errors    se;
	struct cri_info        ci;
	struct pod_status      last;
	int                    have_last = 0;

	memset(&in, 0, sizeof(in));
	memset(&last, 0, sizeof(last));
	errs.n = 0;
	if (d->kr != NULL)
		kuberuntime_foreach_start_error(d->kr, v->uid, ctl_collect_error, &errs);
	se.v = errs.v;
	se.n = errs.n;
	if (d->prober != NULL && prober_probe_states(d->prober, v->uid, probes) == 0)
		in.probes = probes;
	in.pod = v->pod;
	in.rt = d->cache != NULL ? podcache_get(d->cache, v->uid, NULL) : NULL;
	in.errors = &se;
	if (d->cri != NULL) {
		cri_info(d->cri, &ci);
		in.runtime_name = ci.runtime_name;
	}
	in.now = time(NULL);
	in.pod_is_terminal = v->state == PW_TERMINATED || v->state == PW_FINISHED;
	/* What the status manager last generated knows what the runtime forgot (an exit code
	 * of a collected container); without it, the status the API last sent us. */
	if (d->last_status != NULL && d->last_status(v->uid, &last, d->api_arg) == 0) {
		in.old = &last;
		have_last = 1;
	}
	podstatus_generate(&in, out);
	if (have_last)
		pod_status_clear(&last);
}

static int
ctl_ns_match(const struct ctl_request *rq, const struct pod *pod)
{
	if (rq->all_ns || rq->ns[0] == '\0')
		return 1;
	return pod != NULL && pod->ns != NULL && strcmp(pod->ns, rq->ns) == 0;
}

static void
ctl_gen_time(yajl_gen g, const char *key, int64_t unix_s)
{
	if (unix_s > 0)
		json_gen_kv_int(g, key, unix_s);
	else {
		json_gen_key(g, key);
		yajl_gen_null(g);
	}
}

static void
ctl_gen_strv(yajl_gen g, const char *key, const struct strv *sv)
{
	size_t i;

	json_gen_key(g, key);
	yajl_gen_array_open(g);
	for (i = 0; i < sv->n; i++)
		json_gen_str(g, sv->v[i]);
	yajl_gen_array_close(g);
}

static const char *
ctl_cstate_kind(enum cstate_kind k)
{
	switch (k) {
	case CSTATE_WAITING:
		return "waiting";
	case CSTATE_RUNNING:
		return "running";
	case CSTATE_TERMINATED:
		return "terminated";
	default:
		return "none";
	}
}

static void
ctl_gen_cstate(yajl_gen g, const char *key, const struct container_state *st)
{
	json_gen_key(g, key);
	yajl_gen_map_open(g);
	json_gen_kv_str(g, "state", ctl_cstate_kind(st->kind));
	json_gen_kv_str(g, "reason", st->reason);
	json_gen_kv_str(g, "message", st->message);
	if (st->kind == CSTATE_TERMINATED) {
		json_gen_kv_int(g, "exitCode", st->exit_code);
		if (st->signal != 0)
			json_gen_kv_int(g, "signal", st->signal);
	}
	ctl_gen_time(g, "startedAt", st->started_at);
	ctl_gen_time(g, "finishedAt", st->finished_at);
	json_gen_kv_str(g, "containerID", st->container_id);
	yajl_gen_map_close(g);
}

static const char *
ctl_update_name(enum pw_update_type t)
{
	switch (t) {
	case PW_UPDATE_CREATE:
		return "create";
	case PW_UPDATE_UPDATE:
		return "update";
	case PW_UPDATE_SYNC:
		return "sync";
	case PW_UPDATE_KILL:
		return "kill";
	default:
		return "unknown";
	}
}

struct ctl_walk {
	const struct ctl_view    *view;
	const struct ctl_request *rq;
	yajl_gen                  g;
	const struct pw_view     *found;
	struct pw_view            copy;
	int64_t                   now_mono;
	int64_t                   now;
	size_t                    n;
};

/* The pod's creation (Unix s): metadata, else its oldest sandbox (a static pod from a file
 * has no creationTimestamp), else the status's start time. */
static int64_t
ctl_pod_created(const struct ctl_deps *d, const struct pw_view *v, const struct pod_status *st)
{
	const struct rt_pod_status *rt;
	int64_t                     t = 0;
	size_t                      i;

	if (v->pod->creation_ts > 0)
		return v->pod->creation_ts;
	rt = d->cache != NULL ? podcache_get(d->cache, v->uid, NULL) : NULL;
	for (i = 0; rt != NULL && i < rt->nsandboxes; i++)
		if (rt->sandboxes[i].created_at > 0 &&
		    (t == 0 || rt->sandboxes[i].created_at / 1000000000 < t))
			t = rt->sandboxes[i].created_at / 1000000000;
	return t > 0 ? t : st->start_time;
}

static void
ctl_gen_pod_row(struct ctl_walk *w, const struct pw_view *v)
{
	const struct ctl_deps *d = w->view->deps;
	struct pod_status      st;
	struct kr_pod_view     kv;
	const struct pod      *pod = v->pod;
	char                   buf[128], ready[32];
	size_t                 i, nready = 0;
	int64_t                restarts = 0, created;

	struct probe_set ps = { NULL, 0 };

	ctl_pod_status(d, v, &st, &ps);
	for (i = 0; i < st.nstatuses; i++) {
		nready += st.statuses[i].ready != 0;
		restarts += st.statuses[i].restart_count;
	}
	for (i = 0; i < st.ninit_statuses; i++)
		restarts += st.init_statuses[i].restart_count;
	snprintf(ready, sizeof(ready), "%zu/%zu", nready, pod->ncontainers);
	created = ctl_pod_created(d, v, &st);
	yajl_gen_map_open(w->g);
	json_gen_kv_str(w->g, "namespace", pod->ns);
	json_gen_kv_str(w->g, "name", pod->name);
	json_gen_kv_str(w->g, "uid", v->uid);
	json_gen_kv_str(w->g, "ready", ready);
	json_gen_kv_str(w->g, "status",
	    ctl_pod_status_reason(pod, &st, v->state == PW_TERMINATING, buf, sizeof(buf)));
	json_gen_kv_str(w->g, "phase", pod_phase_name(st.phase));
	json_gen_kv_int(w->g, "restarts", restarts);
	ctl_gen_time(w->g, "created", created);
	json_gen_kv_int(w->g, "ageSeconds", created > 0 ? w->now - created : -1);
	json_gen_kv_str(w->g, "state", pw_state_name(v->state));
	json_gen_kv_str(w->g, "ip", st.pod_ip);
	json_gen_kv_str(w->g, "node",
	    pod->node_name != NULL ? pod->node_name : (d->cfg != NULL ? d->cfg->node_name : NULL));
	if (d->kr != NULL && kuberuntime_get(d->kr, v->uid, &kv) == 0 && kv.call != NULL) {
		json_gen_kv_str(w->g, "criCall", kv.call);
		json_gen_kv_int(w->g, "criCallAgeMs", w->now_mono - kv.call_started_ms);
	} else {
		json_gen_kv_str(w->g, "criCall", NULL);
	}
	yajl_gen_map_close(w->g);
	pod_status_clear(&st);
}

static void
ctl_pods_cb(const struct pw_view *v, void *arg)
{
	struct ctl_walk *w = arg;

	if (v->pod == NULL || !ctl_ns_match(w->rq, v->pod))
		return;
	ctl_gen_pod_row(w, v);
	w->n++;
}

static void
ctl_find_cb(const struct pw_view *v, void *arg)
{
	struct ctl_walk *w = arg;
	const char      *ns = w->rq->ns[0] != '\0' ? w->rq->ns : "default";

	if (v->pod == NULL || v->pod->name == NULL || strcmp(v->pod->name, w->rq->name) != 0)
		return;
	if (v->pod->ns == NULL || strcmp(v->pod->ns, ns) != 0)
		return;
	/* Several UIDs (a static pod being replaced): the one still syncing wins. */
	if (w->found == NULL || v->state < w->copy.state) {
		w->copy = *v;
		w->found = &w->copy;
	}
}

void
ctl_gen_event(yajl_gen g, const struct ev_record *e)
{
	yajl_gen_map_open(g);
	json_gen_kv_int(g, "seq", (int64_t)e->seq);
	json_gen_kv_int(g, "id", (int64_t)e->id);
	json_gen_kv_str(g, "kind", e->kind);
	json_gen_kv_str(g, "namespace", e->ns);
	json_gen_kv_str(g, "name", e->name);
	json_gen_kv_str(g, "uid", e->uid);
	json_gen_kv_str(g, "fieldPath", e->field_path);
	json_gen_kv_str(g, "type", ev_type_name(e->type));
	json_gen_kv_str(g, "reason", e->reason);
	json_gen_kv_str(g, "message", e->message);
	json_gen_kv_int(g, "count", e->count);
	json_gen_kv_int(g, "firstTimestampMs", e->first_ts);
	json_gen_kv_int(g, "lastTimestampMs", e->last_ts);
	yajl_gen_map_close(g);
}

static void
ctl_events_cb(const struct ev_record *e, void *arg)
{
	struct ctl_walk *w = arg;

	if (w->found != NULL) {
		if (e->uid == NULL || strcmp(e->uid, w->found->uid) != 0)
			return;
	} else if (w->rq->ns[0] != '\0' && !w->rq->all_ns &&
	    (e->ns == NULL || strcmp(e->ns, w->rq->ns) != 0))
		return;
	ctl_gen_event(w->g, e);
}

static void
ctl_gen_env(yajl_gen g, const struct container *ct)
{
	size_t i;
	char  *s;

	json_gen_key(g, "env");
	yajl_gen_array_open(g);
	for (i = 0; i < ct->c_nenv; i++) {
		const struct env_var *e = &ct->c_env[i];

		yajl_gen_map_open(g);
		json_gen_kv_str(g, "name", e->name);
		switch (e->src) {
		case ENV_VALUE:
			json_gen_kv_str(g, "value", e->value != NULL ? e->value : "");
			break;
		case ENV_SECRET_KEY_REF: /* the reference only, never the value */
			s = xsprintf("<secret %s/%s>", e->ref_name ? e->ref_name : "",
			    e->ref_key ? e->ref_key : "");
			json_gen_kv_str(g, "ref", s);
			free(s);
			break;
		case ENV_CONFIG_MAP_KEY_REF:
			s = xsprintf("<configmap %s/%s>", e->ref_name ? e->ref_name : "",
			    e->ref_key ? e->ref_key : "");
			json_gen_kv_str(g, "ref", s);
			free(s);
			break;
		case ENV_FIELD_REF:
			s = xsprintf("<field %s>", e->ref_key ? e->ref_key : "");
			json_gen_kv_str(g, "ref", s);
			free(s);
			break;
		case ENV_RESOURCE_FIELD_REF:
			s = xsprintf("<resource %s>", e->ref_key ? e->ref_key : "");
			json_gen_kv_str(g, "ref", s);
			free(s);
			break;
		}
		yajl_gen_map_close(g);
	}
	for (i = 0; i < ct->c_nenv_from; i++) {
		const struct env_from *f = &ct->c_env_from[i];

		yajl_gen_map_open(g);
		json_gen_kv_str(g, "name", f->prefix != NULL ? f->prefix : "");
		s = xsprintf("<all keys of %s %s>", f->is_secret ? "secret" : "configmap",
		    f->name ? f->name : "");
		json_gen_kv_str(g, "ref", s);
		free(s);
		yajl_gen_map_close(g);
	}
	yajl_gen_array_close(g);
}

static const char *
ctl_pull_name(enum pull_policy p)
{
	switch (p) {
	case PULL_ALWAYS:
		return "Always";
	case PULL_IF_NOT_PRESENT:
		return "IfNotPresent";
	case PULL_NEVER:
		return "Never";
	default:
		return "?";
	}
}

/* status: the eviction manager's signals (available / capacity, with the thresholds), the
 * node conditions and the last eviction. */
static void
ctl_gen_eviction(yajl_gen g, struct eviction *e)
{
	struct eviction_view v;
	size_t               i;

	json_gen_key(g, "eviction");
	yajl_gen_map_open(g);
	if (e != NULL) {
		eviction_view(e, &v);
		json_gen_key(g, "conditions");
		yajl_gen_array_open(g);
		if (v.conditions & EV_COND_MEMORY)
			yajl_gen_string(g, (const unsigned char *)"MemoryPressure", 14);
		if (v.conditions & EV_COND_DISK)
			yajl_gen_string(g, (const unsigned char *)"DiskPressure", 12);
		if (v.conditions & EV_COND_PID)
			yajl_gen_string(g, (const unsigned char *)"PIDPressure", 11);
		yajl_gen_array_close(g);
		json_gen_key(g, "thresholds");
		yajl_gen_array_open(g);
		for (i = 0; i < v.cfg->n; i++) {
			const struct ev_threshold *t = &v.cfg->t[i];
			const struct ev_obs       *o = &v.obs[t->sig];

			yajl_gen_map_open(g);
			json_gen_kv_str(g, "signal", ev_signal_name(t->sig));
			json_gen_kv_str(g, "threshold", t->text);
			json_gen_kv_bool(g, "hard", t->hard);
			json_gen_kv_bool(g, "observed", o->valid);
			json_gen_kv_int(g, "available", o->available);
			json_gen_kv_int(g, "capacity", o->capacity);
			json_gen_kv_int(g, "value", ev_threshold_value(t, o->capacity));
			json_gen_kv_bool(g, "met", (v.met & (1u << i)) != 0);
			yajl_gen_map_close(g);
		}
		yajl_gen_array_close(g);
		json_gen_kv_int(g, "passes", (int64_t)v.passes);
		json_gen_kv_int(g, "notifications", (int64_t)v.notifications);
		json_gen_kv_bool(g, "notifyArmed", v.notify_armed);
		json_gen_kv_int(g, "evictions", (int64_t)v.evictions);
		json_gen_kv_str(g, "lastPod", v.last_ms != 0 ? v.last_pod : NULL);
		json_gen_kv_str(g, "lastMessage", v.last_ms != 0 ? v.last_message : NULL);
		json_gen_kv_int(g, "lastEvictionMs", v.last_ms);
		json_gen_kv_int(g, "reclaims", (int64_t)v.reclaims);
	}
	yajl_gen_map_close(g);
}

/* status: the image GC manager's policy, the image file system and what it removed. */
static void
ctl_gen_imagegc(yajl_gen g, struct imagegc *ig)
{
	struct imagegc_view v;

	json_gen_key(g, "imageGC");
	yajl_gen_map_open(g);
	if (ig != NULL) {
		imagegc_view(ig, &v);
		json_gen_kv_int(g, "high", v.policy.high);
		json_gen_kv_int(g, "low", v.policy.low);
		json_gen_kv_int(g, "minAgeMs", v.policy.min_age_ms);
		json_gen_kv_int(g, "maxAgeMs", v.policy.max_age_ms);
		json_gen_kv_str(g, "mountpoint", v.fs.valid ? v.fs.mountpoint : NULL);
		json_gen_kv_int(g, "capacity", v.fs.capacity);
		json_gen_kv_int(g, "available", v.fs.available);
		json_gen_kv_int(g, "usagePercent", v.usage_pct);
		json_gen_kv_int(g, "images", (int64_t)v.images);
		json_gen_kv_int(g, "inUse", (int64_t)v.in_use);
		json_gen_kv_int(g, "pinned", (int64_t)v.pinned);
		json_gen_kv_int(g, "runs", (int64_t)v.gc_runs);
		json_gen_kv_int(
		    g, "removed", (int64_t)(v.removed_space + v.removed_reclaim + v.removed_age));
		json_gen_kv_int(g, "removedAge", (int64_t)v.removed_age);
		json_gen_kv_int(g, "freedBytes", v.freed_bytes);
		json_gen_kv_str(g, "lastResult", v.last_gc_ms != 0 ? v.last_result : NULL);
	}
	yajl_gen_map_close(g);
}

static const struct container_status *
ctl_find_cs(const struct container_status *v, size_t n, const char *name)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (v[i].name != NULL && strcmp(v[i].name, name) == 0)
			return &v[i];
	return NULL;
}

static const char *
ctl_probe_word(int configured, enum probe_res r)
{
	if (!configured)
		return NULL;
	switch (r) {
	case PROBE_SUCCESS:
		return "success";
	case PROBE_FAILURE:
		return "failure";
	default:
		return "no result yet";
	}
}

static void
ctl_gen_container(yajl_gen g, const struct container *ct, const struct container_status *cs,
    const char *kind, const struct probe_set *ps)
{
	const struct probe_state *pr = NULL;
	const char               *w;

	json_gen_key(g, NULL == ct ? "?" : ct->c_name);
	yajl_gen_map_open(g);
	json_gen_kv_str(g, "kind", kind);
	json_gen_kv_str(g, "image", ct->c_image);
	json_gen_kv_str(g, "imagePullPolicy", ctl_pull_name(ct->c_pull_policy));
	ctl_gen_strv(g, "command", &ct->c_command);
	ctl_gen_strv(g, "args", &ct->c_args);
	ctl_gen_env(g, ct);
	json_gen_key(g, "probes");
	yajl_gen_map_open(g);
	if (cs != NULL && cs->container_id != NULL && ps != NULL && ps->n > 0) {
		const char *id = strstr(cs->container_id, "://");

		pr = probe_set_find(ps, id != NULL ? id + 3 : cs->container_id);
	}
	if ((w = ctl_probe_word(ct->c_liveness != NULL, pr ? pr->liveness : PROBE_NONE)))
		json_gen_kv_str(g, "liveness", w);
	if ((w = ctl_probe_word(ct->c_readiness != NULL, pr ? pr->readiness : PROBE_NONE)))
		json_gen_kv_str(g, "readiness", w);
	if ((w = ctl_probe_word(ct->c_startup != NULL, pr ? pr->startup : PROBE_NONE)))
		json_gen_kv_str(g, "startup", w);
	yajl_gen_map_close(g);
	if (cs != NULL) {
		ctl_gen_cstate(g, "current", &cs->state);
		ctl_gen_cstate(g, "lastState", &cs->last_state);
		json_gen_kv_bool(g, "ready", cs->ready);
		json_gen_kv_int(g, "restartCount", cs->restart_count);
		json_gen_kv_str(g, "containerID", cs->container_id);
		json_gen_kv_str(g, "imageID", cs->image_id);
	}
	yajl_gen_map_close(g);
}

static void
ctl_start_error_cb(const struct kr_start_error *e, void *arg)
{
	yajl_gen g = arg;

	yajl_gen_map_open(g);
	json_gen_kv_str(g, "container", e->container);
	json_gen_kv_str(g, "reason", e->reason);
	json_gen_kv_str(g, "message", e->message);
	json_gen_kv_int(g, "atMs", e->at_ms);
	yajl_gen_map_close(g);
}

static void
ctl_gen_describe(struct ctl_walk *w, const struct pw_view *v)
{
	const struct ctl_deps *d = w->view->deps;
	yajl_gen               g = w->g;
	const struct pod      *pod = v->pod;
	struct pod_status      st;
	struct kr_pod_view     kv;
	char                   buf[128];
	struct probe_set       ps = { NULL, 0 };
	size_t                 i;

	ctl_pod_status(d, v, &st, &ps);
	yajl_gen_map_open(g);
	json_gen_kv_str(g, "namespace", pod->ns);
	json_gen_kv_str(g, "name", pod->name);
	json_gen_kv_str(g, "uid", v->uid);
	json_gen_kv_str(g, "node",
	    pod->node_name != NULL ? pod->node_name : (d->cfg != NULL ? d->cfg->node_name : NULL));
	ctl_gen_time(g, "created", ctl_pod_created(d, v, &st));
	json_gen_kv_str(g, "source", NULL);
	for (i = 0; i < pod->annotations.n; i++)
		if (strcmp(pod->annotations.items[i].k, "kubernetes.io/config.source") == 0) {
			json_gen_kv_str(g, "source", pod->annotations.items[i].v);
		}
	json_gen_kv_str(g, "status",
	    ctl_pod_status_reason(pod, &st, v->state == PW_TERMINATING, buf, sizeof(buf)));
	json_gen_kv_str(g, "phase", pod_phase_name(st.phase));
	json_gen_kv_str(g, "reason", st.reason);
	json_gen_kv_str(g, "message", st.message);
	json_gen_kv_str(g, "ip", st.pod_ip);
	ctl_gen_strv(g, "ips", &st.pod_ips);
	json_gen_kv_str(g, "qosClass", qos_class_name(pod_qos_class(pod)));
	json_gen_kv_str(g, "restartPolicy", restart_policy_name(pod->restart_policy));
	json_gen_kv_int(g, "terminationGracePeriodSeconds",
	    pod->termination_grace.set ? pod->termination_grace.v : 30);
	if (pod->deletion_ts != 0)
		json_gen_kv_int(g, "deletionTimestamp", pod->deletion_ts);

	json_gen_key(g, "worker");
	yajl_gen_map_open(g);
	json_gen_kv_str(g, "state", pw_state_name(v->state));
	json_gen_kv_bool(g, "working", v->working);
	json_gen_kv_str(g, "transaction", v->txn_kind);
	if (v->working)
		json_gen_kv_int(g, "transactionAgeMs", w->now_mono - v->txn_started_ms);
	json_gen_kv_str(
	    g, "pendingUpdate", v->has_pending ? ctl_update_name(v->pending_type) : NULL);
	if (v->next_sync_ms > 0)
		json_gen_kv_int(g, "nextSyncInMs", v->next_sync_ms - w->now_mono);
	if (v->state == PW_TERMINATING) {
		json_gen_kv_int(g, "graceSeconds", v->grace_seconds);
		json_gen_kv_int(g, "graceDeadlineInMs", v->grace_deadline_ms - w->now_mono);
	}
	json_gen_kv_str(g, "lastError", v->last_error);
	json_gen_kv_int(g, "failures", v->failures);
	yajl_gen_map_close(g);

	json_gen_key(g, "runtime");
	yajl_gen_map_open(g);
	if (d->kr != NULL && kuberuntime_get(d->kr, v->uid, &kv) == 0) {
		json_gen_kv_str(g, "machine", kv.machine);
		json_gen_kv_str(g, "step", kv.step);
		json_gen_kv_str(g, "call", kv.call);
		json_gen_kv_str(g, "callTarget", kv.call_target);
		if (kv.call != NULL)
			json_gen_kv_int(g, "callAgeMs", w->now_mono - kv.call_started_ms);
		if (kv.sandbox_id != NULL)
			json_gen_kv_str(g, "sandboxID", kv.sandbox_id);
		else {
			const struct rt_pod_status *rt =
			    d->cache != NULL ? podcache_get(d->cache, v->uid, NULL) : NULL;

			json_gen_kv_str(g, "sandboxID",
			    rt != NULL && rt->nsandboxes > 0 ? rt->sandboxes[0].id : NULL);
		}
		json_gen_kv_str(g, "sandboxError", kv.sandbox_error);
		json_gen_kv_str(g, "lastError", kv.last_error);
		if (kv.last_sync_ms > 0)
			json_gen_kv_int(g, "lastSyncAgoMs", w->now_mono - kv.last_sync_ms);
	}
	json_gen_key(g, "startErrors");
	yajl_gen_array_open(g);
	if (d->kr != NULL)
		kuberuntime_foreach_start_error(d->kr, v->uid, ctl_start_error_cb, g);
	yajl_gen_array_close(g);
	yajl_gen_map_close(g);

	json_gen_key(g, "conditions");
	yajl_gen_array_open(g);
	for (i = 0; i < st.nconditions; i++) {
		const struct pod_condition *pc = &st.conditions[i];

		yajl_gen_map_open(g);
		json_gen_kv_str(g, "type", pc->type);
		json_gen_kv_str(g, "status",
		    pc->status == COND_TRUE        ? "True"
		        : pc->status == COND_FALSE ? "False"
		                                   : "Unknown");
		json_gen_kv_str(g, "reason", pc->reason);
		yajl_gen_map_close(g);
	}
	yajl_gen_array_close(g);

	json_gen_key(g, "containers");
	yajl_gen_map_open(g);
	for (i = 0; i < pod->ninit_containers; i++) {
		const struct container *ct = &pod->init_containers[i];

		ctl_gen_container(g, ct,
		    ctl_find_cs(st.init_statuses, st.ninit_statuses, ct->c_name), "init", &ps);
	}
	for (i = 0; i < pod->ncontainers; i++) {
		const struct container *ct = &pod->containers[i];

		ctl_gen_container(
		    g, ct, ctl_find_cs(st.statuses, st.nstatuses, ct->c_name), "app", &ps);
	}
	yajl_gen_map_close(g);

	json_gen_key(g, "events");
	yajl_gen_array_open(g);
	if (d->events != NULL) {
		w->found = v;
		events_foreach(d->events, ctl_events_cb, w);
	}
	yajl_gen_array_close(g);
	yajl_gen_map_close(g);
	pod_status_clear(&st);
}

static const char *
ctl_rt_state(enum rt_cstate s)
{
	switch (s) {
	case RT_CREATED:
		return "Created";
	case RT_RUNNING:
		return "Running";
	case RT_EXITED:
		return "Exited";
	default:
		return "Unknown";
	}
}

static void
ctl_containers_cb(const struct rt_pod_status *rs, void *arg)
{
	struct ctl_walk *w = arg;
	yajl_gen         g = w->g;
	size_t           i;

	if (!w->rq->all_ns && w->rq->ns[0] != '\0' &&
	    (rs->ns == NULL || strcmp(rs->ns, w->rq->ns) != 0))
		return;
	for (i = 0; i < rs->ncontainers; i++) {
		const struct rt_container *ct = &rs->containers[i];

		yajl_gen_map_open(g);
		json_gen_kv_str(g, "id", ct->id);
		json_gen_kv_str(g, "namespace", rs->ns);
		json_gen_kv_str(g, "pod", rs->name);
		json_gen_kv_str(g, "podUID", rs->uid);
		json_gen_kv_str(g, "name", ct->name);
		json_gen_kv_str(g, "state", ctl_rt_state(ct->state));
		json_gen_kv_int(g, "attempt", ct->restart_count);
		if (ct->state == RT_EXITED)
			json_gen_kv_int(g, "exitCode", ct->exit_code);
		else {
			json_gen_key(g, "exitCode");
			yajl_gen_null(g);
		}
		json_gen_kv_str(g, "reason", ct->reason);
		json_gen_kv_str(g, "image", ct->image);
		ctl_gen_time(g, "created", ct->created_at / 1000000000);
		json_gen_kv_int(g, "ageSeconds",
		    ct->created_at > 0 ? w->now - ct->created_at / 1000000000 : -1);
		yajl_gen_map_close(g);
		w->n++;
	}
}

static void
ctl_task_cb(const struct loop_task_stats *st, void *arg)
{
	yajl_gen g = arg;

	yajl_gen_map_open(g);
	json_gen_kv_str(g, "name", st->name);
	json_gen_kv_int(g, "intervalMs", st->interval_ms);
	json_gen_kv_int(g, "runs", (int64_t)st->runs);
	json_gen_kv_int(g, "lastDurationUs", st->last_duration_us);
	json_gen_kv_int(g, "maxDurationUs", st->max_duration_us);
	json_gen_kv_int(g, "lastLagUs", st->last_lag_us);
	json_gen_kv_int(g, "maxLagUs", st->max_lag_us);
	yajl_gen_map_close(g);
}

/* VmRSS of this process in KiB, or -1. */
static int64_t
ctl_rss_kib(void)
{
	FILE     *f = fopen("/proc/self/status", "r");
	char      line[256];
	long long v = -1;

	if (f == NULL)
		return -1;
	while (fgets(line, sizeof(line), f) != NULL)
		if (sscanf(line, "VmRSS: %lld kB", &v) == 1)
			break;
	fclose(f);
	return v;
}

static void
ctl_gen_status(struct ctl_walk *w)
{
	const struct ctl_deps *d = w->view->deps;
	yajl_gen               g = w->g;
	char                   why[256];

	yajl_gen_map_open(g);
	json_gen_kv_str(g, "node", d->cfg != NULL ? d->cfg->node_name : NULL);
	json_gen_kv_str(g, "version", KLET_VERSION);
	json_gen_kv_int(g, "pid", getpid());
	json_gen_kv_int(g, "uptimeSeconds", (w->now_mono - d->started_ms) / 1000);
	json_gen_kv_int(g, "rssKiB", ctl_rss_kib());
	json_gen_kv_int(g, "pods", d->workers != NULL ? (int64_t)podworkers_count(d->workers) : 0);
	json_gen_kv_int(g, "ctlClients", (int64_t)w->view->nclients);

	json_gen_key(g, "runtime");
	yajl_gen_map_open(g);
	if (d->cri != NULL) {
		struct cri_info  ci;
		struct cri_stats cs;

		cri_info(d->cri, &ci);
		cri_stats(d->cri, &cs);
		json_gen_kv_str(g, "endpoint", ci.endpoint);
		json_gen_kv_bool(g, "ready", ci.ready);
		json_gen_kv_str(g, "name", ci.runtime_name);
		json_gen_kv_str(g, "version", ci.runtime_version);
		json_gen_kv_str(g, "apiVersion", ci.runtime_api_version);
		json_gen_kv_str(g, "lastError", ci.last_error);
		json_gen_kv_int(g, "calls", (int64_t)cs.calls);
		json_gen_kv_int(g, "errors", (int64_t)cs.errors);
		json_gen_kv_int(g, "inFlight", (int64_t)cs.in_flight);
		json_gen_kv_int(g, "inFlightMax", (int64_t)cs.active_max);
		json_gen_kv_int(g, "window", (int64_t)cs.window);
		json_gen_kv_int(g, "waiting", (int64_t)cs.waiting);
		json_gen_kv_int(g, "waitingMax", (int64_t)cs.waiting_max);
		json_gen_kv_int(g, "reconnects", (int64_t)cs.reconnects);
	}
	yajl_gen_map_close(g);

	json_gen_key(g, "api");
	yajl_gen_map_open(g);
	{
		struct ctl_api_info ai;

		memset(&ai, 0, sizeof(ai));
		ai.last_event_age_ms = -1;
		if (d->api_info != NULL)
			d->api_info(&ai, d->api_arg);
		else if (d->cfg != NULL && d->cfg->kubeconfig != NULL &&
		    *d->cfg->kubeconfig != '\0')
			ai.configured = 1; /* the API side does not report its figures yet */
		json_gen_kv_bool(g, "configured", ai.configured);
		json_gen_kv_bool(g, "connected", ai.connected);
		json_gen_kv_str(g, "watchState", ai.watch_state);
		json_gen_kv_str(g, "resourceVersion", ai.resource_version);
		json_gen_kv_int(g, "lastEventAgeMs", ai.last_event_age_ms);
		json_gen_key(g, "podStatuses");
		yajl_gen_map_open(g);
		json_gen_kv_int(g, "generated", (int64_t)ai.pod_status_generated);
		json_gen_kv_int(g, "versions", (int64_t)ai.pod_status_versions);
		json_gen_kv_int(g, "patches", (int64_t)ai.pod_status_patches);
		json_gen_kv_int(g, "acknowledged", (int64_t)ai.pod_status_acked);
		yajl_gen_map_close(g);
	}
	yajl_gen_map_close(g);

	json_gen_key(g, "pleg");
	yajl_gen_map_open(g);
	if (d->pleg != NULL) {
		struct pleg_stats ps;
		int               ok;

		pleg_stats(d->pleg, &ps);
		why[0] = '\0';
		ok = pleg_healthy(d->pleg, w->now_mono, why, sizeof(why));
		json_gen_kv_bool(g, "healthy", ok);
		json_gen_kv_str(g, "why", ok ? NULL : why);
		json_gen_kv_int(g, "relists", (int64_t)ps.relists);
		json_gen_kv_int(g, "failures", (int64_t)ps.failures);
		json_gen_kv_int(g, "lastDurationUs", ps.last_duration_us);
		json_gen_kv_int(g, "maxDurationUs", ps.max_duration_us);
		json_gen_kv_int(g, "lastRelistAgoMs",
		    ps.last_success_ms > 0 ? w->now_mono - ps.last_success_ms : -1);
		json_gen_kv_int(g, "pods", (int64_t)ps.pods);
		json_gen_kv_int(g, "containers", (int64_t)ps.containers);
		json_gen_kv_int(g, "sandboxes", (int64_t)ps.sandboxes);
		json_gen_kv_int(g, "unchanged", (int64_t)ps.unchanged);
		json_gen_kv_int(g, "decoded", (int64_t)ps.decoded);
		json_gen_kv_int(g, "decodedTotal", (int64_t)ps.decoded_total);
		json_gen_key(g, "recovery");
		yajl_gen_map_open(g);
		json_gen_kv_int(
		    g, "recoveredInMs", d->recovered_ms != NULL ? *d->recovered_ms : -1);
		json_gen_kv_int(g, "objects", (int64_t)ps.first_objects);
		json_gen_kv_int(g, "fromStore", (int64_t)ps.first_from_store);
		json_gen_kv_int(g, "statusCalls", (int64_t)ps.first_status_calls);
		yajl_gen_map_close(g);
	}
	yajl_gen_map_close(g);

	json_gen_key(g, "loop");
	yajl_gen_map_open(g);
	if (d->loop != NULL) {
		struct loop_turn_stats ts;
		size_t                 i;

		json_gen_kv_int(g, "lagUs", loop_lag_us(d->loop));
		loop_turn_stats(d->loop, &ts);
		json_gen_key(g, "turns");
		yajl_gen_map_open(g);
		json_gen_kv_int(g, "count", (int64_t)ts.turns);
		json_gen_kv_int(g, "totalUs", ts.total_us);
		json_gen_kv_int(g, "maxUs", ts.max_us);
		json_gen_kv_int(g, "maxWallUs", ts.max_wall_us);
		json_gen_kv_str(g, "maxTask", ts.max_task);
		json_gen_kv_int(g, "p50Us", loop_turn_quantile_us(&ts, 0.5));
		json_gen_kv_int(g, "p99Us", loop_turn_quantile_us(&ts, 0.99));
		json_gen_key(g, "buckets"); /* [upper bound us (-1: more), turns] */
		yajl_gen_array_open(g);
		for (i = 0; i < LOOP_TURN_NBUCKETS; i++) {
			yajl_gen_array_open(g);
			yajl_gen_integer(g,
			    loop_turn_bounds_us[i] == INT64_MAX
			        ? -1
			        : (long long)loop_turn_bounds_us[i]);
			yajl_gen_integer(g, (long long)ts.counts[i]);
			yajl_gen_array_close(g);
		}
		yajl_gen_array_close(g);
		yajl_gen_map_close(g);
		json_gen_key(g, "tasks");
		yajl_gen_array_open(g);
		loop_foreach_task(d->loop, ctl_task_cb, g);
		yajl_gen_array_close(g);
	}
	yajl_gen_map_close(g);

	ctl_gen_eviction(g, d->eviction);
	ctl_gen_imagegc(g, d->imagegc);

	json_gen_key(g, "store");
	yajl_gen_map_open(g);
	if (d->store != NULL) {
		struct store_health_info h;

		store_health(d->store, &h);
		json_gen_kv_str(g, "health", h.state == STORE_OK ? "ok" : "degraded");
		json_gen_kv_int(g, "fileBytes", store_file_size(d->store));
		json_gen_kv_str(g, "lastError", h.last_error);
		json_gen_kv_int(g, "journalOps", (int64_t)h.journal_ops);
		json_gen_kv_int(g, "commits", (int64_t)h.commits);
		json_gen_kv_int(g, "failures", (int64_t)h.failures);
		json_gen_kv_int(g, "sqliteBytes", h.sqlite_bytes);
		json_gen_kv_int(g, "cacheBytes", h.cache_bytes);
		json_gen_kv_int(g, "cacheHits", (int64_t)h.cache_hits);
		json_gen_kv_int(g, "cacheMisses", (int64_t)h.cache_misses);
	}
	yajl_gen_map_close(g);

	{
		struct heap_stats hs;

		heap_stats(&hs);
		json_gen_key(g, "heap");
		yajl_gen_map_open(g);
		json_gen_kv_int(g, "inUseBytes", hs.in_use);
		json_gen_kv_int(g, "freeBytes", hs.free_bytes);
		json_gen_kv_int(g, "mappedBytes", hs.mapped);
		json_gen_kv_int(g, "trims", (int64_t)hs.trims);
		json_gen_kv_int(g, "lastTrimmedBytes", hs.trimmed);
		json_gen_kv_int(g, "fileDrops", (int64_t)hs.drops);
		json_gen_kv_int(g, "lastFileDroppedBytes", hs.dropped);
		yajl_gen_map_close(g);
	}

	json_gen_key(g, "events");
	yajl_gen_map_open(g);
	json_gen_kv_int(g, "stored", d->events != NULL ? (int64_t)events_count(d->events) : 0);
	yajl_gen_map_close(g);
	yajl_gen_map_close(g);
}

static int
ctl_history_cb(const struct store_event *e, void *arg)
{
	yajl_gen g = arg;

	yajl_gen_map_open(g);
	json_gen_kv_int(g, "id", e->id);
	json_gen_kv_int(g, "timeMs", e->wall_ms);
	json_gen_kv_str(g, "reason", e->reason != NULL ? e->reason : "");
	json_gen_kv_str(g, "message", e->message != NULL ? e->message : "");
	yajl_gen_map_close(g);
	return 0;
}

static void
ctl_reply_open(yajl_gen g, const char *cmd)
{
	yajl_gen_map_open(g);
	json_gen_kv_int(g, "v", CTL_PROTO_VERSION);
	json_gen_kv_bool(g, "ok", 1);
	json_gen_kv_str(g, "cmd", cmd);
	json_gen_key(g, "data");
}

/* The pod of the request (ns, name) into w->copy; -1 after writing "pod NS/NAME not found". */
static int
ctl_find_pod(struct ctl_walk *w)
{
	const struct ctl_deps *d = w->view->deps;
	char                   err[640];

	if (d->workers != NULL)
		podworkers_foreach(d->workers, ctl_find_cb, w);
	if (w->found != NULL)
		return 0;
	snprintf(err, sizeof(err), "pod %s/%s not found",
	    w->rq->ns[0] != '\0' ? w->rq->ns : "default", w->rq->name);
	ctl_gen_error(w->g, err);
	return -1;
}

/* logs: the CRI log file of the pod's container (podctl reads it itself, with the same
 * reader as the node server). Without a container, kubectl's default: the annotation
 * kubectl.kubernetes.io/default-container, else the first container. */
static void
ctl_reply_logs(struct ctl_walk *w, yajl_gen g)
{
	const struct ctl_deps      *d = w->view->deps;
	const struct pod           *p = w->copy.pod;
	const char                 *ctr = w->rq->container;
	const struct rt_pod_status *st;
	const struct rt_container  *ct;
	char                        err[640], *path;
	size_t                      i;
	int                         defaulted = 0;

	if (ctr[0] == '\0') {
		ctr = kvlist_get(&p->annotations, "kubectl.kubernetes.io/default-container");
		if (ctr == NULL || pod_find_container(p, ctr) == NULL)
			ctr = p->ncontainers > 0 ? p->containers[0].c_name : "";
		defaulted = p->ncontainers + p->ninit_containers > 1;
	}
	st = d->cache != NULL ? podcache_get(d->cache, w->copy.uid, NULL) : NULL;
	if (logrotate_container_log(d->cfg->pod_logs_dir, p, st, ctr, w->rq->previous, &path, &ct,
	        err, sizeof(err)) == -1) {
		ctl_gen_error(g, err);
		return;
	}
	ctl_reply_open(g, w->rq->cmd);
	yajl_gen_map_open(g);
	json_gen_kv_str(g, "namespace", p->ns);
	json_gen_kv_str(g, "name", p->name);
	json_gen_kv_str(g, "uid", w->copy.uid);
	json_gen_kv_str(g, "container", ctr);
	json_gen_kv_bool(g, "defaulted", defaulted);
	json_gen_key(g, "containers");
	yajl_gen_array_open(g);
	for (i = 0; i < p->ncontainers; i++)
		json_gen_str(g, p->containers[i].c_name);
	for (i = 0; i < p->ninit_containers; i++) {
		char *s = xsprintf("%s (init)", p->init_containers[i].c_name);

		json_gen_str(g, s);
		free(s);
	}
	yajl_gen_array_close(g);
	json_gen_kv_str(g, "path", path);
	json_gen_kv_str(g, "containerID", ct->id);
	json_gen_kv_bool(g, "running", ct->state == RT_RUNNING);
	json_gen_kv_int(g, "restartCount", ct->restart_count);
	yajl_gen_map_close(g);
	yajl_gen_map_close(g);
	free(path);
}

/* Builds the reply to a parsed request (an error reply when the pod is unknown). */
void
ctl_reply_build(const struct ctl_view *view, const struct ctl_request *rqp, yajl_gen g)
{
	const struct ctl_deps *d = view->deps;
	struct ctl_request     rq = *rqp;
	struct ctl_walk        w;

	memset(&w, 0, sizeof(w));
	w.view = view;
	w.rq = &rq;
	w.now = time(NULL);
	w.now_mono = now_mono_ms();
	w.g = g;
	if (strcmp(rq.cmd, "logs") == 0) {
		if (ctl_find_pod(&w) == 0)
			ctl_reply_logs(&w, g);
	} else if (strcmp(rq.cmd, "node") == 0 || strcmp(rq.cmd, "top") == 0) {
		ctl_reply_open(g, rq.cmd);
		if (rq.cmd[0] == 'n')
			ctl_reply_node(view, g);
		else
			ctl_reply_top(view, &rq, g);
		yajl_gen_map_close(g);
	} else if (strcmp(rq.cmd, "history") == 0) {
		if (ctl_find_pod(&w) == 0) {
			ctl_reply_open(g, rq.cmd);
			yajl_gen_map_open(g);
			json_gen_kv_str(g, "namespace", w.copy.pod->ns);
			json_gen_kv_str(g, "name", w.copy.pod->name);
			json_gen_kv_str(g, "uid", w.copy.uid);
			json_gen_key(g, "history");
			yajl_gen_array_open(g);
			if (d->store != NULL)
				store_foreach_event(d->store, w.copy.uid, ctl_history_cb, g);
			yajl_gen_array_close(g);
			yajl_gen_map_close(g);
			yajl_gen_map_close(g);
		}
	} else if (strcmp(rq.cmd, "describe_pod") == 0) {
		if (ctl_find_pod(&w) == 0) {
			struct pw_view v = w.copy;

			ctl_reply_open(g, rq.cmd);
			w.found = NULL;
			ctl_gen_describe(&w, &v);
			yajl_gen_map_close(g);
		}
	} else {
		ctl_reply_open(g, rq.cmd);
		if (strcmp(rq.cmd, "version") == 0) {
			yajl_gen_map_open(g);
			json_gen_kv_str(g, "server", KLET_VERSION);
			json_gen_kv_int(g, "protocol", CTL_PROTO_VERSION);
			yajl_gen_map_close(g);
		} else if (strcmp(rq.cmd, "get_pods") == 0) {
			yajl_gen_array_open(g);
			if (d->workers != NULL)
				podworkers_foreach(d->workers, ctl_pods_cb, &w);
			yajl_gen_array_close(g);
		} else if (strcmp(rq.cmd, "get_containers") == 0) {
			yajl_gen_array_open(g);
			if (d->cache != NULL)
				podcache_foreach(d->cache, ctl_containers_cb, &w);
			yajl_gen_array_close(g);
		} else if (strcmp(rq.cmd, "events") == 0) {
			yajl_gen_array_open(g);
			if (d->events != NULL)
				events_foreach(d->events, ctl_events_cb, &w);
			yajl_gen_array_close(g);
		} else if (strcmp(rq.cmd, "status") == 0) {
			ctl_gen_status(&w);
		} else {
			fatalx("%s: unhandled cmd %s", __func__, rq.cmd);
		}
		yajl_gen_map_close(g);
	}
}
