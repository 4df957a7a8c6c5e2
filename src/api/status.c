/* status.c — the status manager: versioned statuses, incremental and batch sync, final
 * deletion (see status.h). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <event2/event.h>

#include "client/api.h"
#include "core/log.h"
#include "core/loop.h"
#include "core/strindex.h"
#include "logic/patch.h"
#include "logic/podstatus.h"
#include "api/status.h"
#include "store/store.h"
#include "core/util.h"

struct sentry {
	size_t             e_pos; /* in m_entries */
	struct status_mgr *e_mgr;
	char              *e_uid;
	char              *e_ns;
	char              *e_name;
	struct pod_status  e_status; /* latest generated */
	int64_t            e_version;
	struct pod_status  e_api; /* the server's status as the watch gave it */
	int                e_has_acked;
	struct pod_status  e_acked; /* last acknowledged */
	int64_t            e_acked_version;
	int64_t            e_sending; /* version in flight */
	struct pod_status  e_sent;    /* what is in flight */
	struct api_call   *e_call;
	int                e_dirty;
	int                e_want_delete; /* deletionTimestamp and every container stopped */
	int                e_deleted;     /* the final DELETE succeeded */
	int64_t            e_backoff_ms;
	int64_t            e_not_before_ms;
	int                e_restored;     /* from the store, not yet claimed by its pod */
	char              *e_evict_reason; /* evicted (status_evict): Failed with these */
	char              *e_evict_message;
	int                e_evict_disruption; /* ... with DisruptionTarget */
	/* The inputs of the last update (status_update_stamped; its pods referenced), and
	 * whether that update changed nothing: the same inputs again would change nothing. */
	struct status_stamp e_stamp;
	int                 e_stamp_current;
};

struct status_mgr {
	struct event_base *m_base;
	struct api        *m_api;
	struct store      *m_store;
	char              *m_runtime;
	char              *m_host_ip;
	int64_t            m_bo_min;
	int64_t            m_bo_max;
	struct sentry    **m_entries; /* in no particular order */
	size_t             m_n;
	size_t             m_cap;
	struct strindex   *m_index;     /* m_entries by UID */
	uint64_t           m_version;   /* grows when an entry goes or an input outside the stamp
	                                 * (the host IP, an eviction) changes */
	struct event       *m_turn_ev;  /* end-of-turn incremental sync */
	struct event       *m_retry_ev; /* earliest backoff expiry */
	struct status_stats m_stats;
};

static void status_entry_sync(struct sentry *);

static const char *
status_entry_key(const void *arg, size_t i)
{
	const struct status_mgr *m = arg;

	return m->m_entries[i]->e_uid;
}

static struct sentry *
status_entry_find(struct status_mgr *m, const char *uid)
{
	size_t i = strindex_find(m->m_index, uid, status_entry_key, m);

	return i != STRINDEX_NONE ? m->m_entries[i] : NULL;
}

static void
status_entry_insert(struct status_mgr *m, struct sentry *e)
{
	if (m->m_n == m->m_cap) {
		m->m_cap = m->m_cap == 0 ? 32 : 2 * m->m_cap;
		m->m_entries = xreallocarray(m->m_entries, m->m_cap, sizeof(*m->m_entries));
	}
	e->e_pos = m->m_n;
	m->m_entries[m->m_n++] = e;
	strindex_add(m->m_index, e->e_uid, e->e_pos);
}

/* Takes e out of the entries (the last one takes its place); e is not freed. */
static void
status_entry_unlink(struct status_mgr *m, struct sentry *e)
{
	struct sentry *last = m->m_entries[--m->m_n];

	strindex_remove(m->m_index, e->e_uid, e->e_pos);
	if (last != e) {
		strindex_move(m->m_index, last->e_uid, last->e_pos, e->e_pos);
		last->e_pos = e->e_pos;
		m->m_entries[e->e_pos] = last;
	}
	m->m_version++;
}

static void
status_stamp_clear(struct status_stamp *s)
{
	pod_unref(s->pod);
	pod_unref(s->mirror);
	memset(s, 0, sizeof(*s));
}

static void
status_entry_free(struct sentry *e)
{
	api_call_cancel(e->e_call);
	pod_status_clear(&e->e_status);
	pod_status_clear(&e->e_api);
	pod_status_clear(&e->e_acked);
	pod_status_clear(&e->e_sent);
	status_stamp_clear(&e->e_stamp);
	free(e->e_uid);
	free(e->e_ns);
	free(e->e_name);
	free(e->e_evict_reason);
	free(e->e_evict_message);
	free(e);
}

static void
status_entry_drop(struct sentry *e, const char *why)
{
	struct status_mgr *m = e->e_mgr;

	log_v(2, "status: pod %s/%s uid=%s: dropped (%s)", e->e_ns, e->e_name, e->e_uid, why);
	m->m_stats.dropped++;
	status_entry_unlink(m, e);
	status_entry_free(e);
}

static void
status_mgr_kick(struct status_mgr *m)
{
	event_active(m->m_turn_ev, EV_TIMEOUT, 0);
}

static void
status_mgr_arm_retry(struct status_mgr *m)
{
	struct sentry *e;
	int64_t        now = now_mono_ms(), next = INT64_MAX;
	struct timeval tv;
	size_t         i;

	for (i = 0; i < m->m_n; i++) {
		e = m->m_entries[i];
		if ((e->e_dirty || e->e_want_delete) && e->e_call == NULL &&
		    e->e_not_before_ms > now && e->e_not_before_ms < next)
			next = e->e_not_before_ms;
	}
	if (next == INT64_MAX)
		return;
	tv = ms_to_tv((next - now));
	evtimer_add(m->m_retry_ev, &tv);
}

static void
status_entry_backoff(struct sentry *e, const struct api_response *r)
{
	struct status_mgr *m = e->e_mgr;
	int64_t            d = e->e_backoff_ms ? e->e_backoff_ms : m->m_bo_min;

	if (r->retry_after_s > 0 && r->retry_after_s * 1000 > d)
		d = r->retry_after_s * 1000;
	e->e_not_before_ms = now_mono_ms() + d;
	e->e_backoff_ms = d * 2 > m->m_bo_max ? m->m_bo_max : d * 2;
	m->m_stats.retries++;
	log_warnx("status: pod %s/%s: %d %s; retrying in %lld ms", e->e_ns, e->e_name, r->status,
	    r->message, (long long)d);
	status_mgr_arm_retry(m);
}

static int
status_uid_precondition_failed(const struct api_response *r)
{
	return r->status == 409 && strstr(r->message, "Precondition failed: UID") != NULL;
}

static void
status_patch_done(const struct api_response *r, void *arg)
{
	struct sentry     *e = arg;
	struct status_mgr *m = e->e_mgr;

	e->e_call = NULL;
	if (r->status == 200) {
		m->m_stats.acked++;
		pod_status_clear(&e->e_acked);
		e->e_acked = e->e_sent;
		memset(&e->e_sent, 0, sizeof(e->e_sent));
		e->e_has_acked = 1;
		e->e_acked_version = e->e_sending;
		e->e_backoff_ms = 0;
		if (m->m_store != NULL)
			store_ack_status(m->m_store, e->e_uid, e->e_acked_version);
		log_v(3, "status: pod %s/%s: version %lld acknowledged", e->e_ns, e->e_name,
		    (long long)e->e_acked_version);
		if (e->e_version > e->e_acked_version || e->e_want_delete) {
			e->e_dirty = 1;
			status_mgr_kick(m);
		}
		return;
	}
	pod_status_clear(&e->e_sent);
	if (r->status == 404) {
		status_entry_drop(e, "the pod is gone from the API");
		return;
	}
	if (status_uid_precondition_failed(r)) {
		status_entry_drop(e, "the pod was deleted and recreated");
		return;
	}
	e->e_dirty = 1;
	status_entry_backoff(e, r);
}

static void
status_delete_done(const struct api_response *r, void *arg)
{
	struct sentry *e = arg;

	e->e_call = NULL;
	if (r->status == 200 || r->status == 202 || r->status == 404) {
		log_info(
		    "status: pod %s/%s uid=%s deleted from the API", e->e_ns, e->e_name, e->e_uid);
		e->e_deleted = 1;
		e->e_want_delete = 0;
		return;
	}
	if (status_uid_precondition_failed(r)) {
		status_entry_drop(e, "the pod was recreated before its final delete");
		return;
	}
	status_entry_backoff(e, r);
}

static void
status_entry_send_delete(struct sentry *e)
{
	struct status_mgr *m = e->e_mgr;
	char              *path, *body;

	path = xsprintf("/api/v1/namespaces/%s/pods/%s", e->e_ns, e->e_name);
	body = api_delete_options(0, e->e_uid);
	m->m_stats.deletes++;
	e->e_call = api_request(m->m_api, "DELETE", path, "application/json", body, strlen(body), 0,
	    status_delete_done, e);
	free(path);
	free(body);
}

/* The conditions the server has that st lacks (others' conditions, which the watch showed
 * after the last acknowledged patch) are added to st: the next patch does not send them
 * again (with thousands of them, a pod near the size limit could not be patched). */
static void
status_add_server_conditions(struct pod_status *st, const struct pod_status *api)
{
	const struct pod_condition *c;
	struct pod_condition       *d;
	size_t                      i, k, n = st->nconditions, hint = 0;

	if (api->nconditions > 0) /* room for all at once: a pod can have thousands */
		st->conditions =
		    xreallocarray(st->conditions, n + api->nconditions, sizeof(*st->conditions));
	for (i = 0; i < api->nconditions; i++) {
		c = &api->conditions[i];
		if (c->type == NULL)
			continue;
		/* Usually in the same order: the place after the last match first. */
		if (hint < n && streq_null(st->conditions[hint].type, c->type)) {
			hint++;
			continue;
		}
		for (k = 0; k < n && !streq_null(st->conditions[k].type, c->type); k++)
			;
		if (k < n) {
			hint = k + 1;
			continue;
		}
		d = &st->conditions[st->nconditions++];
		*d = *c;
		d->type = xstrdup(c->type);
		d->reason = xstrdup(c->reason);
		d->message = xstrdup(c->message);
	}
}

static void
status_entry_sync(struct sentry *e)
{
	struct status_mgr       *m = e->e_mgr;
	const struct pod_status *base;
	struct pod_status        with_api;
	char                    *patch, *path;

	memset(&with_api, 0, sizeof(with_api));
	if (e->e_call != NULL || e->e_deleted || e->e_name == NULL ||
	    now_mono_ms() < e->e_not_before_ms)
		return;
	if (e->e_version > e->e_acked_version) {
		base = e->e_has_acked ? &e->e_acked : &e->e_api;
		if (e->e_has_acked) {
			podstatus_copy(&with_api, &e->e_acked);
			status_add_server_conditions(&with_api, &e->e_api);
			base = &with_api;
		}
		patch = patch_pod_status(e->e_uid, base, &e->e_status);
		pod_status_clear(&with_api);
		if (patch == NULL) {
			/* The server already has it. */
			m->m_stats.skipped++;
			pod_status_clear(&e->e_acked);
			podstatus_copy(&e->e_acked, &e->e_status);
			e->e_has_acked = 1;
			e->e_acked_version = e->e_version;
			if (m->m_store != NULL)
				store_ack_status(m->m_store, e->e_uid, e->e_version);
		} else {
			path = xsprintf("/api/v1/namespaces/%s/pods/%s/status", e->e_ns, e->e_name);
			pod_status_clear(&e->e_sent);
			podstatus_copy(&e->e_sent, &e->e_status);
			e->e_sending = e->e_version;
			m->m_stats.patches++;
			log_v(3, "status: pod %s/%s: patch version %lld: %s", e->e_ns, e->e_name,
			    (long long)e->e_version, patch);
			e->e_call = api_request(m->m_api, "PATCH", path,
			    "application/strategic-merge-patch+json", patch, strlen(patch), 0,
			    status_patch_done, e);
			free(path);
			free(patch);
			e->e_dirty = 0;
			return;
		}
	}
	e->e_dirty = 0;
	if (e->e_want_delete)
		status_entry_send_delete(e);
}

static void
status_mgr_sync_dirty(struct status_mgr *m, int all)
{
	size_t i;

	/* status_entry_sync never removes an entry (answers come on later turns). */
	for (i = 0; i < m->m_n; i++)
		if (all || m->m_entries[i]->e_dirty)
			status_entry_sync(m->m_entries[i]);
	status_mgr_arm_retry(m);
}

static void
status_turn_cb(evutil_socket_t fd, short ev, void *arg)
{
	(void)fd;
	(void)ev;
	status_mgr_sync_dirty(arg, 0);
}

static void
status_retry_cb(evutil_socket_t fd, short ev, void *arg)
{
	(void)fd;
	(void)ev;
	status_mgr_sync_dirty(arg, 0);
}

/* Recovery: the statuses the previous daemon generated, with what the server acknowledged,
 * so that an unchanged pod is not patched again and a change the server never got is sent.
 * A restored entry has no name until its pod's first status_update. */
static int
status_restore_cb(const struct store_status *ss, void *arg)
{
	struct status_mgr *m = arg;
	struct sentry     *e;
	char               err[256];

	if (ss->json == NULL || ss->version <= 0 || status_entry_find(m, ss->uid) != NULL)
		return 0;
	e = xcalloc(1, sizeof(*e));
	if (pod_status_from_json(ss->json, strlen(ss->json), &e->e_status, err, sizeof(err)) ==
	    -1) {
		log_warnx("status: stored status of uid=%s unusable: %s", ss->uid, err);
		free(e);
		return 0;
	}
	e->e_mgr = m;
	e->e_uid = xstrdup(ss->uid);
	e->e_version = ss->version;
	e->e_acked_version = ss->acked_version;
	if (ss->acked_version >= ss->version) {
		podstatus_copy(&e->e_acked, &e->e_status);
		e->e_has_acked = 1;
	} else
		e->e_dirty = 1;
	e->e_restored = 1;
	status_entry_insert(m, e);
	m->m_stats.restored++;
	return 0;
}

struct status_mgr *
status_new(struct event_base *base, struct api *api, const struct status_options *o)
{
	struct status_mgr *m = xcalloc(1, sizeof(*m));

	m->m_base = base;
	m->m_api = api;
	m->m_store = o ? o->store : NULL;
	m->m_runtime = xstrdup(o && o->runtime_name ? o->runtime_name : "containerd");
	m->m_host_ip = o ? xstrdup(o->host_ip) : NULL;
	m->m_bo_min = o && o->backoff_min_ms > 0 ? o->backoff_min_ms : 1000;
	m->m_bo_max = o && o->backoff_max_ms > 0 ? o->backoff_max_ms : 60000;
	m->m_index = strindex_new();
	m->m_turn_ev = event_new(base, -1, 0, status_turn_cb, m);
	/* Last in the turn: every update of the turn is in before the sync. */
	event_priority_set(m->m_turn_ev, LOOP_PRI_LOW);
	m->m_retry_ev = evtimer_new(base, status_retry_cb, m);
	if (m->m_store != NULL) {
		store_foreach_status(m->m_store, status_restore_cb, m);
		if (m->m_stats.restored > 0)
			log_info("status: %llu pod statuses resumed from the store",
			    (unsigned long long)m->m_stats.restored);
	}
	return m;
}

void
status_free(struct status_mgr *m)
{
	size_t i;

	if (m == NULL)
		return;
	for (i = 0; i < m->m_n; i++)
		status_entry_free(m->m_entries[i]);
	free(m->m_entries);
	strindex_free(m->m_index);
	event_free(m->m_turn_ev);
	event_free(m->m_retry_ev);
	free(m->m_runtime);
	free(m->m_host_ip);
	free(m);
}

static void status_update_ex(struct status_mgr *, const struct pod *, const struct rt_pod_status *,
    const struct probe_set *, const struct start_errors *, int, const char *, const char *,
    const struct status_stamp *);

static int
status_stamp_equal(const struct status_stamp *a, const struct status_stamp *b)
{
	return a->pod == b->pod && a->mirror == b->mirror && a->rt == b->rt &&
	    a->probes == b->probes && a->errors == b->errors && a->terminal == b->terminal;
}

int
status_current(struct status_mgr *m, const char *uid, const struct status_stamp *stamp)
{
	struct sentry *e = status_entry_find(m, uid);

	return e != NULL && !e->e_restored && e->e_stamp_current && stamp->pod != NULL &&
	    status_stamp_equal(&e->e_stamp, stamp);
}

uint64_t
status_version(const struct status_mgr *m)
{
	return m->m_version;
}

void
status_update(struct status_mgr *m, const struct pod *pod, const struct rt_pod_status *rt,
    const struct probe_set *probes, const struct start_errors *errors, int terminal,
    const struct status_stamp *stamp)
{
	status_update_ex(m, pod, rt, probes, errors, terminal, NULL, NULL, stamp);
}

void
status_reject(struct status_mgr *m, const struct pod *pod, const char *reason, const char *message,
    const struct status_stamp *stamp)
{
	char *msg = xsprintf("Pod was rejected: %s", message != NULL ? message : "");

	status_update_ex(
	    m, pod, NULL, NULL, NULL, 1, reason != NULL ? reason : "Rejected", msg, stamp);
	free(msg);
}

/* What differs between the entry's stamp and stamp, for the log. */
static const char *
status_stamp_why(const struct sentry *e, const struct status_stamp *stamp)
{
	const struct status_stamp *o = &e->e_stamp;

	if (stamp == NULL)
		return "no stamp";
	if (o->pod == NULL)
		return "first";
	if (o->pod != stamp->pod)
		return "pod";
	if (o->mirror != stamp->mirror)
		return "mirror";
	if (o->rt != stamp->rt)
		return "runtime";
	if (o->probes != stamp->probes)
		return "probes";
	if (o->errors != stamp->errors)
		return "start errors";
	if (o->terminal != stamp->terminal)
		return "terminal";
	return e->e_stamp_current ? "same" : "last generation changed";
}

/* The entry's stamp after an update: stamp (its pods referenced) when given, current when
 * the update changed nothing. */
static void
status_entry_set_stamp(struct sentry *e, const struct status_stamp *stamp, int changed)
{
	struct status_stamp old = e->e_stamp;

	memset(&e->e_stamp, 0, sizeof(e->e_stamp));
	e->e_stamp_current = 0;
	if (stamp != NULL && stamp->pod != NULL) {
		/* The new references first: the old stamp may hold the only one of these pods. */
		e->e_stamp = *stamp;
		pod_ref(e->e_stamp.pod);
		pod_ref(e->e_stamp.mirror);
		e->e_stamp_current = !changed;
	}
	status_stamp_clear(&old);
}

static void
status_update_ex(struct status_mgr *m, const struct pod *pod, const struct rt_pod_status *rt,
    const struct probe_set *probes, const struct start_errors *errors, int terminal,
    const char *evict_reason, const char *evict_message, const struct status_stamp *stamp)
{
	struct podstatus_input in;
	struct pod_status      gen, merged;
	struct sentry         *e;
	int64_t                now = (int64_t)time(NULL);
	char                  *json;
	int                    changed = 0;

	if (pod->uid == NULL || pod->ns == NULL || pod->name == NULL)
		return;
	e = status_entry_find(m, pod->uid);
	if (e == NULL) {
		e = xcalloc(1, sizeof(*e));
		e->e_mgr = m;
		e->e_uid = xstrdup(pod->uid);
		e->e_ns = xstrdup(pod->ns);
		e->e_name = xstrdup(pod->name);
		podstatus_copy(&e->e_status, &pod->status);
		status_entry_insert(m, e);
	} else if (e->e_restored) {
		e->e_restored = 0;
		e->e_ns = xstrdup(pod->ns);
		e->e_name = xstrdup(pod->name);
	}
	pod_status_clear(&e->e_api);
	podstatus_copy(&e->e_api, &pod->status);
	memset(&in, 0, sizeof(in));
	in.pod = pod;
	in.rt = rt;
	in.probes = probes;
	in.errors = errors;
	in.old = &e->e_status;
	in.host_ip = m->m_host_ip;
	in.runtime_name = m->m_runtime;
	in.now = now;
	in.pod_is_terminal = terminal;
	in.evict_reason = evict_reason != NULL ? evict_reason : e->e_evict_reason;
	in.evict_message = evict_reason != NULL ? evict_message : e->e_evict_message;
	in.evict_disruption = evict_reason == NULL && e->e_evict_disruption;
	m->m_stats.generated++;
	log_v(
	    4, "status: pod %s/%s: generated (%s)", pod->ns, pod->name, status_stamp_why(e, stamp));
	podstatus_generate(&in, &gen);
	/* The merge rules against the server's status: conditions it owns stay, a terminal
	 * phase waits until nothing can run. */
	podstatus_merge(&pod->status, &gen, !terminal, now, &merged);
	pod_status_clear(&gen);
	if (e->e_version == 0 || !podstatus_equal(&merged, &e->e_status)) {
		pod_status_clear(&e->e_status);
		e->e_status = merged;
		e->e_version++;
		m->m_stats.versions++;
		if (m->m_store != NULL && (json = podstatus_to_json_string(&e->e_status)) != NULL) {
			store_put_status(m->m_store, e->e_uid, e->e_version, json);
			free(json);
		}
		e->e_dirty = 1;
		changed = 1;
		status_mgr_kick(m);
	} else
		pod_status_clear(&merged);
	if (pod->deletion_ts != 0 && terminal && !e->e_deleted && !e->e_want_delete) {
		e->e_want_delete = 1;
		e->e_dirty = 1;
		changed = 1;
		status_mgr_kick(m);
	}
	status_entry_set_stamp(e, stamp, changed);
}

int
status_evict(struct status_mgr *m, const struct pod *pod, const char *reason, const char *message,
    int disruption)
{
	struct sentry *e;

	if (pod->uid == NULL)
		return -1;
	if ((e = status_entry_find(m, pod->uid)) == NULL) {
		/* Evicted before its first status: the entry starts with the eviction. */
		status_update_ex(m, pod, NULL, NULL, NULL, 0, reason, message, NULL);
		if ((e = status_entry_find(m, pod->uid)) == NULL)
			return -1;
	}
	free(e->e_evict_reason);
	free(e->e_evict_message);
	e->e_evict_reason = xstrdup(reason);
	e->e_evict_message = xstrdup(message);
	e->e_evict_disruption = disruption;
	e->e_stamp_current = 0; /* an input the stamp does not hold */
	m->m_version++;
	return 0;
}

void
status_forget(struct status_mgr *m, const char *uid)
{
	struct sentry *e = status_entry_find(m, uid);

	if (e != NULL) {
		status_entry_unlink(m, e);
		status_entry_free(e);
	}
}

void
status_foreach_restored(
    struct status_mgr *m, void (*cb)(const struct pod_status *, void *), void *arg)
{
	size_t i;

	for (i = 0; i < m->m_n; i++)
		if (m->m_entries[i]->e_restored)
			cb(&m->m_entries[i]->e_status, arg);
}

void
status_batch(struct status_mgr *m)
{
	struct sentry *e;
	size_t         i = 0;
	int            any = 0;

	while (i < m->m_n) {
		e = m->m_entries[i];
		if (e->e_restored && ++e->e_restored > 7) {
			/* Restored, and no pod claimed it within a minute of batches: gone. */
			status_entry_unlink(m, e); /* the last entry takes place i */
			status_entry_free(e);
			continue;
		}
		if (e->e_version > e->e_acked_version || e->e_want_delete)
			e->e_dirty = 1;
		any |= e->e_dirty;
		i++;
	}
	if (any) /* everything acknowledged: nothing to send, no retry to arm */
		status_mgr_sync_dirty(m, 0);
}

int
status_get(
    struct status_mgr *m, const char *uid, struct pod_status *out, int64_t *version, int64_t *acked)
{
	struct sentry *e = status_entry_find(m, uid);

	if (e == NULL)
		return -1;
	if (out != NULL)
		podstatus_copy(out, &e->e_status);
	if (version != NULL)
		*version = e->e_version;
	if (acked != NULL)
		*acked = e->e_acked_version;
	return 0;
}

void
status_get_stats(const struct status_mgr *m, struct status_stats *st)
{
	*st = m->m_stats;
	st->entries = (unsigned)m->m_n;
}

void
status_set_host_ip(struct status_mgr *m, const char *ip)
{
	size_t i;

	if (streq_null(ip, m->m_host_ip))
		return;
	free(m->m_host_ip);
	m->m_host_ip = xstrdup(ip);
	for (i = 0; i < m->m_n; i++) /* an input the stamps do not hold */
		m->m_entries[i]->e_stamp_current = 0;
	m->m_version++;
}
