/* recovery.c — the rows a restart resumes from, written as things change, and the restore at
 * start (see src/kubelet/recovery.h). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/log.h"
#include "core/util.h"
#include "kuberuntime/kuberuntime.h"
#include "kubelet/housekeeping.h"
#include "node/podconfig.h"
#include "node/podworkers.h"
#include "node/events.h"
#include "kubelet/recovery.h"
#include "pod/pod.h"
#include "pod/runtime.h"
#include "prober/prober.h"
#include "store/store.h"

struct recovery {
	struct recovery_deps rc_deps;
	struct podworkers   *rc_workers;
	int                  rc_recovered;    /* the first relist with all sources seen ran */
	int64_t              rc_recovered_ms; /* start to recovered, -1 before */
};

struct recovery *
recovery_new(const struct recovery_deps *deps)
{
	struct recovery *rc = xcalloc(1, sizeof(*rc));

	rc->rc_deps = *deps;
	rc->rc_recovered_ms = -1;
	return rc;
}

void
recovery_free(struct recovery *rc)
{
	free(rc);
}

const int64_t *
recovery_recovered_ms(const struct recovery *rc)
{
	return &rc->rc_recovered_ms;
}

int
recovery_relisted(struct recovery *rc, int sources_ready, struct housekeeping *hk)
{
	int64_t now = now_mono_ms();

	if (rc->rc_recovered || !sources_ready)
		return 0;
	rc->rc_recovered = 1;
	if (hk != NULL)
		housekeeping_run(hk);
	rc->rc_recovered_ms = now - rc->rc_deps.started_ms;
	log_info("recovered in %lldms: first relist done, %zu pod workers",
	    (long long)rc->rc_recovered_ms,
	    rc->rc_workers != NULL ? podworkers_count(rc->rc_workers) : 0);
	return 1;
}

/* ---- written while running ---- */

static int
recovery_state_parse(const char *s, enum pw_state *out)
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

static void recovery_history_worker(struct recovery *, const struct store_worker *);

/* Every worker state change goes to the store, with the grace deadline as a wall time. */
void
recovery_worker_state(void *arg, const char *uid, enum pw_state state, int64_t deadline_ms)
{
	struct recovery    *rc = arg;
	struct store_worker w;
	struct kr_pod_view  kv;
	struct pw_view      v;

	if (rc == NULL || rc->rc_deps.store == NULL)
		return;
	memset(&w, 0, sizeof(w));
	w.uid = uid;
	w.state = pw_state_name(state);
	if (state == PW_TERMINATING)
		w.grace_deadline_wall_ms = now_wall_ms() + (deadline_ms - now_mono_ms());
	/* The step the pod's machine is in (or stopped in, with the last error). */
	if (rc->rc_deps.kr != NULL && kuberuntime_get(rc->rc_deps.kr, uid, &kv) == 0)
		w.step = kv.step != NULL ? kv.step : kv.last_step;
	if (rc->rc_workers != NULL && podworkers_get(rc->rc_workers, uid, &v) == 0) {
		if (state == PW_TERMINATING)
			w.grace_seconds = v.grace_seconds;
		w.last_error = v.last_error;
		w.failures = v.failures;
		w.removed = v.removed;
		if (v.failures > 0 && v.next_sync_ms > 0)
			w.next_retry_wall_ms = now_wall_ms() + (v.next_sync_ms - now_mono_ms());
	}
	store_put_worker(rc->rc_deps.store, &w);
	recovery_history_worker(rc, &w);
}

/* The pod's history: this state change, with what explains it. */
static void
recovery_history_worker(struct recovery *rc, const struct store_worker *w)
{
	char msg[512];
	int  n;

	n = snprintf(msg, sizeof(msg), "%s", w->state);
	if (w->grace_seconds > 0 || strcmp(w->state, "TERMINATING") == 0)
		n += snprintf(
		    msg + n, sizeof(msg) - (size_t)n, ", grace %llds", (long long)w->grace_seconds);
	if (w->removed && (size_t)n < sizeof(msg))
		n += snprintf(msg + n, sizeof(msg) - (size_t)n, ", removed from its source");
	if (w->step != NULL && *w->step != '\0' && (size_t)n < sizeof(msg))
		n += snprintf(msg + n, sizeof(msg) - (size_t)n, ", step %s", w->step);
	if (w->failures > 0 && (size_t)n < sizeof(msg))
		n += snprintf(msg + n, sizeof(msg) - (size_t)n, ", %d failures", w->failures);
	if (w->last_error != NULL && *w->last_error != '\0' && (size_t)n < sizeof(msg))
		snprintf(msg + n, sizeof(msg) - (size_t)n, ": %s", w->last_error);
	store_put_event(rc->rc_deps.store, w->uid, "Worker", msg, now_wall_ms());
}

void
recovery_event(const struct ev_record *e, int is_new, void *arg)
{
	struct recovery *rc = arg;
	char             msg[EVENTS_MAX_MESSAGE + 128];
	const char      *c;

	if (rc == NULL || rc->rc_deps.store == NULL || !is_new || e->uid == NULL ||
	    *e->uid == '\0' || e->kind == NULL || strcmp(e->kind, "Pod") != 0)
		return;
	/* "spec.containers{web}" -> "web: message" */
	c = e->field_path != NULL ? strchr(e->field_path, '{') : NULL;
	if (c != NULL)
		snprintf(msg, sizeof(msg), "%.*s: %s", (int)strcspn(c + 1, "}"), c + 1,
		    e->message != NULL ? e->message : "");
	else
		snprintf(msg, sizeof(msg), "%s", e->message != NULL ? e->message : "");
	store_put_event(rc->rc_deps.store, e->uid, e->reason, msg, e->first_ts);
}

void
recovery_pleg_exit(const char *uid, const struct rt_container *c, void *arg)
{
	struct recovery  *rc = arg;
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
	store_put_exit(rc->rc_deps.store, &x);
}

void
recovery_put_pod(struct recovery *rc, struct podconfig *config, const struct pod *pod)
{
	struct store_pod sp;
	const char      *fmt = NULL, *src = NULL, *doc;
	size_t           len = 0;

	doc = podconfig_doc(config, pod->uid, &len, &fmt, &src);
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
	store_put_pod(rc->rc_deps.store, &sp);
}

/* ---- intents: durable before the create call leaves, so that a daemon killed in between
 * adopts what the runtime made instead of making it again ---- */

static void
recovery_intent_put(void *arg, const char *uid, const char *kind, const char *name, int64_t attempt)
{
	struct recovery    *rc = arg;
	struct store_intent in = { .uid = uid,
		.kind = kind,
		.name = name,
		.attempt = attempt,
		.created_wall_ms = now_wall_ms() };

	store_put_intent(rc->rc_deps.store, &in);
	/* Commit now (no fsync in WAL mode; a crash of the process keeps it). While the store
	 * is degraded the record stays in the journal: adoption then relies on the labels. */
	store_commit_now(rc->rc_deps.store);
}

static void
recovery_intent_del(void *arg, const char *uid, const char *kind, const char *name, int64_t attempt)
{
	struct recovery *rc = arg;

	store_del_intent(rc->rc_deps.store, uid, kind, name, attempt);
}

struct recovery_intent_q {
	const char *kind, *name;
	int64_t     attempt;
	int         found;
};

static int
recovery_intent_match(const struct store_intent *in, void *arg)
{
	struct recovery_intent_q *q = arg;

	if (strcmp(in->kind, q->kind) == 0 && strcmp(in->name, q->name) == 0 &&
	    in->attempt == q->attempt) {
		q->found = 1;
		return 1;
	}
	return 0;
}

static int
recovery_intent_has(void *arg, const char *uid, const char *kind, const char *name, int64_t attempt)
{
	struct recovery         *rc = arg;
	struct recovery_intent_q q = {
		.kind = kind, .name = name != NULL ? name : "", .attempt = attempt
	};

	store_foreach_intent(rc->rc_deps.store, uid, recovery_intent_match, &q);
	return q.found;
}

void
recovery_intents(struct recovery *rc, struct kr_intents *out)
{
	memset(out, 0, sizeof(*out));
	out->put = recovery_intent_put;
	out->del = recovery_intent_del;
	out->has = recovery_intent_has;
	out->arg = rc;
}

/* ---- the restore at start ---- */

struct recovery_restore {
	struct recovery *r_rc;
	struct pod     **r_pods;
	size_t           r_npods;
	size_t           r_restored;
};

static int
recovery_restore_pod(const struct store_pod *sp, void *arg)
{
	struct recovery_restore *r = arg;
	char                     err[256];
	struct pod              *pod;

	if (sp->format != NULL && strcmp(sp->format, "yaml") == 0)
		pod = pod_from_yaml(sp->doc, sp->doc_len, err, sizeof(err));
	else
		pod = pod_from_json(sp->doc, sp->doc_len, err, sizeof(err));
	if (pod == NULL || pod->uid == NULL || strcmp(pod->uid, sp->uid) != 0) {
		log_warnx("store: pod %s/%s uid=%s: stored document unusable: %s", sp->ns, sp->name,
		    sp->uid, pod == NULL ? err : "UID differs");
		pod_unref(pod);
		return 0;
	}
	r->r_pods = xreallocarray(r->r_pods, r->r_npods + 1, sizeof(*r->r_pods));
	r->r_pods[r->r_npods++] = pod;
	return 0;
}

static int
recovery_cmp_pod_uid(const void *key, const void *elem)
{
	return strcmp(key, (*(struct pod *const *)elem)->uid);
}

static int
recovery_restore_worker(const struct store_worker *sw, void *arg)
{
	struct recovery_restore *r = arg;
	struct pw_restore        pr;
	struct pod             **pp;
	int64_t                  now_wall = now_wall_ms(), now = now_mono_ms();

	memset(&pr, 0, sizeof(pr));
	if (recovery_state_parse(sw->state, &pr.state) == -1)
		return 0;
	/* The pods came ordered by UID (store_foreach_pod). */
	pp = r->r_npods > 0
	    ? bsearch(sw->uid, r->r_pods, r->r_npods, sizeof(*r->r_pods), recovery_cmp_pod_uid)
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
	podworkers_restore(r->r_rc->rc_workers, *pp, &pr);
	r->r_restored++;
	return 0;
}

void
recovery_restore(struct recovery *rc, struct podworkers *workers)
{
	struct recovery_restore r = { .r_rc = rc };
	size_t                  i;

	rc->rc_workers = workers;
	store_foreach_pod(rc->rc_deps.store, recovery_restore_pod, &r);
	store_foreach_worker(rc->rc_deps.store, recovery_restore_worker, &r);
	if (r.r_restored > 0)
		log_info("resumed %zu pod workers from the store", r.r_restored);
	for (i = 0; i < r.r_npods; i++)
		pod_unref(r.r_pods[i]);
	free(r.r_pods);
}

/* Containers that were ready in the last generated statuses keep their readiness. */
static void
recovery_restore_ready(struct recovery *rc, const struct container_status *v, size_t n)
{
	const char *id;
	size_t      i;

	for (i = 0; i < n; i++) {
		if (!v[i].ready || v[i].state.kind != CSTATE_RUNNING || v[i].container_id == NULL)
			continue;
		id = strstr(v[i].container_id, "://");
		prober_assume_ready(rc->rc_deps.prober, id != NULL ? id + 3 : v[i].container_id);
	}
}

void
recovery_restore_status(const struct pod_status *st, void *arg)
{
	struct recovery *rc = arg;

	recovery_restore_ready(rc, st->statuses, st->nstatuses);
	recovery_restore_ready(rc, st->init_statuses, st->ninit_statuses);
}
