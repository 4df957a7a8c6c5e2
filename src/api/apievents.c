/* apievents.c — the recorder's events posted to the API server (see apievents.h). */
#include <sys/queue.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <event2/event.h>

#include "client/api.h"
#include "api/apievents.h"
#include "core/json.h"
#include "core/log.h"
#include "core/util.h"
#include "node/events.h"
#include "pod/pod.h"
#include "pod/rfc3339.h"

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
	struct pevs    a_list; /* in the order first recorded */
	size_t         a_n;
	size_t         a_ndirty; /* entries with p_dirty */
	uint64_t       a_max_id; /* the newest record's id ever listed */
	struct event  *a_timer;
	uint64_t       a_posts, a_patches, a_dropped;
};

/* What only a POST or a PATCH needs: dropped once the server has the event as it is (an
 * entry kept for aggregation holds its name and namespace only), set again from the
 * recorder's record when the event repeats. Up to 2 x EVENTS_DEFAULT_CAPACITY entries are
 * kept: about 250 bytes each instead of 700. */
static void
aev_pev_drop_body(struct pev *p)
{
	free(p->p_kind);
	free(p->p_obj);
	free(p->p_uid);
	free(p->p_path);
	free(p->p_reason);
	free(p->p_message);
	p->p_kind = p->p_obj = p->p_uid = p->p_path = p->p_reason = p->p_message = NULL;
}

static void
aev_pev_set_body(struct api_events *a, struct pev *p, const struct ev_record *r)
{
	aev_pev_drop_body(p);
	p->p_kind = xstrdup(r->kind != NULL ? r->kind : "Pod");
	p->p_obj = xstrdup(r->name != NULL ? r->name : a->a_node);
	p->p_uid = xstrdup(r->uid);
	p->p_path = xstrdup(r->field_path);
	p->p_reason = xstrdup(r->reason != NULL ? r->reason : "");
	p->p_message = xstrdup(r->message != NULL ? r->message : "");
}

/* p_dirty, counted: the flush stops looking once it has seen every dirty entry. */
static void
aev_dirty(struct pev *p, int dirty)
{
	if (p->p_dirty == dirty)
		return;
	p->p_dirty = dirty;
	if (dirty)
		p->p_owner->a_ndirty++;
	else
		p->p_owner->a_ndirty--;
}

static void
aev_pev_free(struct pev *p)
{
	aev_dirty(p, 0);
	api_call_cancel(p->p_call);
	free(p->p_name);
	free(p->p_ns);
	aev_pev_drop_body(p);
	free(p);
}

/* The flush runs 200 ms after a record while some event is newer than the server's copy;
 * with nothing to send it does not run at all (an idle node has no timer here). */
static void
aev_arm(struct api_events *a)
{
	struct timeval tv = { 0, 200000 };

	if (!evtimer_pending(a->a_timer, NULL))
		evtimer_add(a->a_timer, &tv);
}

static void
aev_ts_rfc3339(int64_t ms, char *buf, size_t len)
{
	time_format_rfc3339(ms / 1000, buf, len);
}

static void
aev_pev_done(const struct api_response *r, void *arg)
{
	struct pev *p = arg;

	p->p_call = NULL;
	if (r->status == 201 || r->status == 200) {
		p->p_posted = 1;
		if (p->p_dirty) /* recorded again while the call was in flight */
			aev_arm(p->p_owner);
		else
			aev_pev_drop_body(p);
		return;
	}
	if (r->status == 409 && !p->p_posted) {
		p->p_posted = 1; /* exists already (a restart): patch it next time */
		aev_dirty(p, 1);
		aev_arm(p->p_owner);
		return;
	}
	if (r->status == 404 && p->p_posted) {
		p->p_posted = 0; /* expired on the server: create it again */
		aev_dirty(p, 1);
		aev_arm(p->p_owner);
		return;
	}
	if (p->p_dirty)
		aev_arm(p->p_owner);
	else
		aev_pev_drop_body(p); /* given up: sent again only if it repeats */
	p->p_owner->a_dropped++;
	log_v(2, "events: %s %s: %d %s", p->p_posted ? "patch" : "post", p->p_name, r->status,
	    r->message);
}

static void
aev_pev_send(struct api_events *a, struct pev *p)
{
	char     first[40], last[40], *body, *path;
	yajl_gen g = json_gen_new(0);

	aev_ts_rfc3339(p->p_first_ms, first, sizeof(first));
	aev_ts_rfc3339(p->p_last_ms, last, sizeof(last));
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
		p->p_call = api_request(a->a_api, "POST", path, "application/json", body,
		    strlen(body), 0, aev_pev_done, p);
	} else {
		path = xsprintf("/api/v1/namespaces/%s/events/%s", p->p_ns, p->p_name);
		a->a_patches++;
		p->p_call =
		    api_request(a->a_api, "PATCH", path, "application/strategic-merge-patch+json",
		        body, strlen(body), 0, aev_pev_done, p);
	}
	free(path);
	free(body);
	aev_dirty(p, 0);
	p->p_sent_ms = now_mono_ms();
}

static void
aev_flush(evutil_socket_t fd, short what, void *arg)
{
	struct api_events *a = arg;
	struct pev        *p, *prev;
	int64_t            now = now_mono_ms();
	int                pending = 0;
	size_t             seen;

	(void)fd;
	(void)what;
	/* Refill the global budget. */
	a->a_tokens += (double)(now - a->a_tokens_ms) * a->a_qps / 1000.0;
	if (a->a_tokens > 2 * a->a_qps)
		a->a_tokens = 2 * a->a_qps;
	a->a_tokens_ms = now;
	/* Newest first (new events are at the end), and no further than the last dirty one:
	 * a burst's flush does not walk the quiet entries kept for aggregation. */
	seen = 0;
	for (p = TAILQ_LAST(&a->a_list, pevs); p != NULL && seen < a->a_ndirty; p = prev) {
		prev = TAILQ_PREV(p, pevs, p_entry);
		if (!p->p_dirty)
			continue;
		seen++;
		if (p->p_call != NULL) /* its answer arms the flush again */
			continue;
		if (p->p_sent_ms != 0 && now - p->p_sent_ms < a->a_min_ms) {
			pending = 1; /* coalesce: the next write carries the newest count */
			continue;
		}
		if (a->a_tokens < 1.0) {
			pending = 1;
			break;
		}
		a->a_tokens -= 1.0;
		seen--; /* no longer dirty */
		aev_pev_send(a, p);
	}
	if (pending)
		aev_arm(a);
}

static void
aev_record(const struct ev_record *r, int is_new, void *arg)
{
	struct api_events *a = arg;
	struct pev        *p;

	(void)is_new;
	/* The recorder's ids grow: one newer than any listed is new; a repeat is most likely
	 * one of the newest. */
	p = NULL;
	if (r->id <= a->a_max_id) {
		TAILQ_FOREACH_REVERSE(p, &a->a_list, pevs, p_entry)
		{
			if (p->p_id == r->id)
				break;
		}
	}
	if (p == NULL) {
		p = xcalloc(1, sizeof(*p));
		p->p_owner = a;
		p->p_id = r->id;
		p->p_ns = xstrdup(r->ns != NULL && *r->ns != '\0' ? r->ns : "default");
		p->p_type = r->type;
		p->p_first_ms = r->first_ts;
		/* Unique and stable: the object, then the time of the first occurrence in hex. */
		p->p_name = xsprintf("%s.%llx%04llx", r->name != NULL ? r->name : a->a_node,
		    (unsigned long long)r->first_ts * 1000000ULL,
		    (unsigned long long)(r->id & 0xffff));
		TAILQ_INSERT_TAIL(&a->a_list, p, p_entry);
		a->a_n++;
		if (r->id > a->a_max_id)
			a->a_max_id = r->id;
		/* Bounded: forget the oldest quiet entries. */
		while (a->a_n > 2 * EVENTS_DEFAULT_CAPACITY) {
			struct pev *old = TAILQ_FIRST(&a->a_list);

			TAILQ_REMOVE(&a->a_list, old, p_entry);
			aev_pev_free(old);
			a->a_n--;
		}
	}
	aev_pev_set_body(a, p, r);
	p->p_count = r->count;
	p->p_last_ms = r->last_ts;
	aev_dirty(p, 1);
	aev_arm(a);
}

struct api_events *
api_events_new(struct event_base *base, struct api *api, struct events *ev, const char *node,
    int64_t min_interval_ms, int qps)
{
	struct api_events *a = xcalloc(1, sizeof(*a));

	a->a_api = api;
	a->a_events = ev;
	a->a_node = xstrdup(node);
	a->a_min_ms = min_interval_ms > 0 ? min_interval_ms : 10000;
	a->a_qps = qps > 0 ? qps : 50; /* the kubelet's eventRecordQPS; burst 2 x */
	a->a_tokens = 2 * a->a_qps;
	a->a_tokens_ms = now_mono_ms();
	TAILQ_INIT(&a->a_list);
	a->a_timer = evtimer_new(base, aev_flush, a);
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
		aev_pev_free(p);
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
