/* runtimeclass.c — see runtimeclass.h. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <event2/event.h>

#include "client/api.h"
#include "api/runtimeclass.h"
#include "core/json.h"
#include "core/log.h"
#include "core/util.h"

#define RC_PATH        "/apis/node.k8s.io/v1/runtimeclasses"
#define RC_BACKOFF_MS  1000
#define RC_MAX_MS      30000
#define RC_WATCH_FAILS 3 /* watches failed in a row before a LIST */

struct rc_class {
	char *name, *handler;
};

struct runtimeclass {
	struct event_base *base;
	struct api        *api;
	struct api_call   *call;
	struct event      *retry;
	int64_t            backoff_ms;
	char              *rv;
	int                synced;
	int                watch_fails; /* in a row: a LIST after RC_WATCH_FAILS of them */
	struct rc_class   *v;
	size_t             n;
};

static void rc_list(struct runtimeclass *);
static void rc_watch(struct runtimeclass *);

static struct rc_class *
rc_find(const struct runtimeclass *rc, const char *name)
{
	size_t i;

	for (i = 0; i < rc->n; i++)
		if (strcmp(rc->v[i].name, name) == 0)
			return &rc->v[i];
	return NULL;
}

static void
rc_clear(struct runtimeclass *rc)
{
	size_t i;

	for (i = 0; i < rc->n; i++) {
		free(rc->v[i].name);
		free(rc->v[i].handler);
	}
	free(rc->v);
	rc->v = NULL;
	rc->n = 0;
}

static void
rc_put(struct runtimeclass *rc, const struct json *obj)
{
	const char      *name = json_str(json_get(json_get(obj, "metadata"), "name"));
	const char      *h = json_str(json_get(obj, "handler"));
	struct rc_class *c;

	if (name == NULL || *name == '\0')
		return;
	if ((c = rc_find(rc, name)) == NULL) {
		rc->v = xreallocarray(rc->v, rc->n + 1, sizeof(*rc->v));
		c = &rc->v[rc->n++];
		c->name = xstrdup(name);
		c->handler = NULL;
	}
	free(c->handler);
	c->handler = xstrdup(h != NULL ? h : "");
}

static void
rc_del(struct runtimeclass *rc, const struct json *obj)
{
	const char      *name = json_str(json_get(json_get(obj, "metadata"), "name"));
	struct rc_class *c = name != NULL ? rc_find(rc, name) : NULL;

	if (c == NULL)
		return;
	free(c->name);
	free(c->handler);
	*c = rc->v[--rc->n];
}

static void
rc_set_rv(struct runtimeclass *rc, const struct json *obj)
{
	const char *rv = json_str(json_get(json_get(obj, "metadata"), "resourceVersion"));

	if (rv != NULL) {
		free(rc->rv);
		rc->rv = xstrdup(rv);
	}
}

static void
rc_retry_cb(evutil_socket_t fd, short what, void *arg)
{
	struct runtimeclass *rc = arg;

	(void)fd;
	(void)what;
	/* As client-go's reflector: a watch that failed goes on from its position (after an
	 * API server restart, no LIST); a 410 (no position) or repeated failures list again. */
	if (rc->synced && rc->rv != NULL && rc->watch_fails < RC_WATCH_FAILS)
		rc_watch(rc);
	else
		rc_list(rc);
}

static void
rc_later(struct runtimeclass *rc)
{
	struct timeval tv = ms_to_tv(rc->backoff_ms);

	rc->backoff_ms = rc->backoff_ms * 2 > RC_MAX_MS ? RC_MAX_MS : rc->backoff_ms * 2;
	evtimer_add(rc->retry, &tv);
}

static void
rc_list_done(const struct api_response *r, void *arg)
{
	struct runtimeclass *rc = arg;
	struct json_doc     *doc;
	const struct json   *items;
	char                 err[128];
	size_t               i;

	rc->call = NULL;
	if (r->status != 200 ||
	    (doc = json_parse(r->body, r->len, NULL, err, sizeof(err))) == NULL) {
		log_warnx(
		    "runtimeclass: list: %d %s", r->status, r->status == 200 ? err : r->message);
		rc_later(rc);
		return;
	}
	rc_clear(rc);
	items = json_get(json_root(doc), "items");
	for (i = 0; i < json_len(items); i++)
		rc_put(rc, json_index(items, i));
	rc_set_rv(rc, json_root(doc));
	json_free(doc);
	if (!rc->synced)
		log_v(2, "runtimeclass: %zu RuntimeClasses", rc->n);
	rc->synced = 1;
	rc->backoff_ms = RC_BACKOFF_MS;
	rc->watch_fails = 0;
	rc_watch(rc);
}

static void
rc_list(struct runtimeclass *rc)
{
	rc->call =
	    api_request(rc->api, "GET", RC_PATH, NULL, NULL, 0, API_MAX_LIST, rc_list_done, rc);
}

static int
rc_line(const char *line, size_t len, void *arg)
{
	struct runtimeclass *rc = arg;
	struct json_doc     *doc;
	const struct json   *obj;
	const char          *type;
	char                 err[128];

	if ((doc = json_parse(line, len, NULL, err, sizeof(err))) == NULL)
		return 0; /* skipped */
	type = json_str(json_get(json_root(doc), "type"));
	obj = json_get(json_root(doc), "object");
	if (type == NULL) {
		json_free(doc);
		return 0;
	}
	if (strcmp(type, "ERROR") == 0) {
		/* 410 Gone and the like: relist. */
		json_free(doc);
		xfree_str(&rc->rv);
		return -1;
	}
	rc->watch_fails = 0;
	rc->backoff_ms = RC_BACKOFF_MS;
	if (strcmp(type, "ADDED") == 0 || strcmp(type, "MODIFIED") == 0)
		rc_put(rc, obj);
	else if (strcmp(type, "DELETED") == 0)
		rc_del(rc, obj);
	rc_set_rv(rc, obj);
	json_free(doc);
	return 0;
}

static void
rc_end(const struct api_response *r, void *arg)
{
	struct runtimeclass *rc = arg;

	rc->call = NULL;
	if (r->status == 200 && rc->rv != NULL) {
		rc_watch(rc); /* the server ended the stream: go on from the position */
		return;
	}
	rc->watch_fails++;
	rc_later(rc);
}

static void
rc_watch(struct runtimeclass *rc)
{
	static const struct api_watch_cbs cbs = { rc_line, rc_end, NULL };
	char *path = xsprintf("%s?watch=true&allowWatchBookmarks=true&resourceVersion=%s&"
	                      "timeoutSeconds=%d",
	    RC_PATH, rc->rv != NULL ? rc->rv : "", 300 + (int)arc4random_uniform(300));

	rc->call = api_watch(rc->api, path, &cbs, rc);
	free(path);
}

struct runtimeclass *
runtimeclass_new(struct event_base *base, struct api *api)
{
	struct runtimeclass *rc = xcalloc(1, sizeof(*rc));

	rc->base = base;
	rc->api = api;
	rc->backoff_ms = RC_BACKOFF_MS;
	rc->retry = evtimer_new(base, rc_retry_cb, rc);
	rc_list(rc);
	return rc;
}

void
runtimeclass_free(struct runtimeclass *rc)
{
	if (rc == NULL)
		return;
	api_call_cancel(rc->call);
	event_free(rc->retry);
	rc_clear(rc);
	free(rc->rv);
	free(rc);
}

int
runtimeclass_lookup(const struct runtimeclass *rc, const char *name, const char **handler)
{
	const struct rc_class *c = rc != NULL ? rc_find(rc, name) : NULL;

	if (c == NULL)
		return 0;
	*handler = c->handler;
	return 1;
}

int
runtimeclass_synced(const struct runtimeclass *rc)
{
	return rc != NULL && rc->synced;
}

size_t
runtimeclass_count(const struct runtimeclass *rc)
{
	return rc != NULL ? rc->n : 0;
}
