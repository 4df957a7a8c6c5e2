/* watch.c — list+watch of this node's pods into podconfig's "api" source (see watch.h). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <event2/event.h>

#include "client/api.h"
#include "core/json.h"
#include "core/log.h"
#include "pod/pod.h"
#include "pod/rfc3339.h"
#include "node/podconfig.h"
#include "store/store.h"
#include "core/util.h"
#include "api/watch.h"
#include "node/events.h"

#define WATCH_SOURCE           "api"
/* Watches in a row that fail (refused, ended at once, connection lost) before a LIST
 * replaces the position, as client-go's reflector relists after a watch error. */
#define WATCH_MAX_FAILURES     3
/* A bookmark's position is saved at most this often (an event's at once): a restart that
 * resumes from an older position replays nothing of this node's pods (bookmarks carry no
 * change). It is saved as a hint beside the store (store_put_hint), not in it: an idle node
 * runs none of SQLite's write path (0.7 MiB of its code mapped again for half a minute)
 * and no fsync when only the cluster's resourceVersion moved. */
#define WATCH_BOOKMARK_SAVE_MS 60000

struct uids {
	char **v;
	size_t n;
};

struct watch {
	struct event_base *w_base;
	struct api        *w_api;
	struct podconfig  *w_pc;
	struct store      *w_store;
	struct events     *w_events;
	char              *w_node;
	char              *w_node_q; /* escaped fieldSelector value */
	int                w_limit;
	int                w_min_to;
	int                w_max_to;
	enum watch_state   w_state;
	struct api_call   *w_call;
	struct event      *w_timer;
	char               w_rv[64];        /* current position */
	char               w_rv_stored[64]; /* the position last written to the store */
	int64_t            w_backoff_ms;
	int                w_fails; /* watches in a row that failed before any event */
	int                w_synced;
	int                w_listed_once;
	int64_t            w_watch_started_ms;
	/* A list in progress: the pages so far. */
	struct podconfig_item *w_items;
	size_t                 w_nitems;
	size_t                 w_capitems;
	char                   w_list_rv[64];
	struct watch_stats     w_stats;
	/* Mirror pods, kept apart from podconfig. */
	const struct pod **w_mirrors;
	size_t             w_nmirrors;
	const struct pod **w_list_mirrors; /* a list in progress */
	size_t             w_nlist_mirrors;
	uint64_t           w_mirrors_version; /* grows whenever w_mirrors changes */
	int                w_rv_unsaved;      /* w_rv (from a bookmark) is not saved yet */
	int                w_hint_failed;     /* the last hint could not be written (logged) */
	int64_t            w_rv_saved_ms;     /* when w_rv was last saved */
	int64_t            w_save_every_ms;   /* a bookmark's position at most this often */
	uint64_t           w_bookmark_hash;   /* the last bookmark line, to skip it again */
	size_t             w_bookmark_len;
	struct uids        w_bad; /* pods reported unusable (watch_bad_pod) */
};

static int
watch_is_mirror(const struct pod *p)
{
	return kvlist_get(&p->annotations, MIRROR_ANNOTATION) != NULL;
}

static void
watch_mirrors_clear(const struct pod ***v, size_t *n)
{
	size_t i;

	for (i = 0; i < *n; i++)
		pod_unref((*v)[i]);
	free(*v);
	*v = NULL;
	*n = 0;
}

static void
watch_mirror_remove(struct watch *w, const char *uid)
{
	size_t i;

	for (i = 0; i < w->w_nmirrors; i++) {
		if (strcmp(w->w_mirrors[i]->uid, uid) != 0)
			continue;
		pod_unref(w->w_mirrors[i]);
		w->w_mirrors[i] = w->w_mirrors[--w->w_nmirrors];
		w->w_mirrors_version++;
		return;
	}
}

/* Takes over the reference p. */
static void
watch_mirror_upsert(struct watch *w, const struct pod *p)
{
	watch_mirror_remove(w, p->uid);
	w->w_mirrors = xreallocarray(w->w_mirrors, w->w_nmirrors + 1, sizeof(*w->w_mirrors));
	w->w_mirrors[w->w_nmirrors++] = p;
	w->w_mirrors_version++;
}

static void watch_list_page(struct watch *, const char *cont);
static void watch_start_stream(struct watch *);

const char *
watch_state_name(enum watch_state s)
{
	switch (s) {
	case WATCH_IDLE:
		return "idle";
	case WATCH_LISTING:
		return "listing";
	case WATCH_WATCHING:
		return "watching";
	}
	return "?";
}

static void
watch_set_state(struct watch *w, enum watch_state s)
{
	if (w->w_state != s)
		log_v(3, "watch: %s -> %s rv=%s", watch_state_name(w->w_state), watch_state_name(s),
		    w->w_rv);
	w->w_state = s;
}

/* Saves the position: an event's or a list's (hint 0) in the store, with the pods it brought
 * (the same turn's transaction); a bookmark's (hint 1) beside it, on the stored one. */
static void
watch_save_rv(struct watch *w, int hint)
{
	w->w_rv_unsaved = 0;
	w->w_rv_saved_ms = now_mono_ms();
	if (w->w_store == NULL || w->w_rv[0] == '\0')
		return;
	if (!hint || w->w_rv_stored[0] == '\0') {
		store_set_meta(w->w_store, WATCH_META_RV, w->w_rv);
		snprintf(w->w_rv_stored, sizeof(w->w_rv_stored), "%s", w->w_rv);
		return;
	}
	if (store_put_hint(w->w_store, WATCH_META_RV, w->w_rv_stored, w->w_rv) == -1) {
		if (!w->w_hint_failed) /* once, until one is written again */
			log_warn(
			    "watch: the bookmark's position %s cannot be saved beside the store; "
			    "a restart resumes from %s",
			    w->w_rv, w->w_rv_stored);
		w->w_hint_failed = 1;
	} else if (w->w_hint_failed) {
		log_info("watch: the bookmark's position is saved beside the store again");
		w->w_hint_failed = 0;
	}
}

/* The position moves to rv; saved at once, or for a bookmark (lazy) within w_save_every_ms
 * (WATCH_BOOKMARK_SAVE_MS). */
static void
watch_move_rv(struct watch *w, const char *rv, int lazy)
{
	if (!lazy)
		w->w_bookmark_len = 0; /* a later bookmark line is looked at again */
	if (rv == NULL || *rv == '\0' || strcmp(rv, w->w_rv) == 0) {
		if (!lazy && w->w_rv_unsaved)
			watch_save_rv(w, 0);
		return;
	}
	snprintf(w->w_rv, sizeof(w->w_rv), "%s", rv);
	if (lazy && now_mono_ms() - w->w_rv_saved_ms < w->w_save_every_ms)
		w->w_rv_unsaved = 1;
	else
		watch_save_rv(w, lazy);
}

static void
watch_set_rv(struct watch *w, const char *rv)
{
	watch_move_rv(w, rv, 0);
}

static void
watch_items_clear(struct watch *w)
{
	size_t i;

	for (i = 0; i < w->w_nitems; i++) {
		pod_unref(w->w_items[i].pod);
		free((char *)w->w_items[i].doc);
	}
	free(w->w_items);
	w->w_items = NULL;
	w->w_nitems = w->w_capitems = 0;
}

/* UID sets (a few entries): the removed pods, the pods reported unusable. */
static int
watch_uids_has(const struct uids *u, const char *uid)
{
	size_t i;

	for (i = 0; i < u->n; i++)
		if (strcmp(u->v[i], uid) == 0)
			return 1;
	return 0;
}

static void
watch_uids_add(struct uids *u, const char *uid)
{
	if (watch_uids_has(u, uid))
		return;
	u->v = xreallocarray(u->v, u->n + 1, sizeof(*u->v));
	u->v[u->n++] = xstrdup(uid);
}

static void
watch_uids_remove(struct uids *u, const char *uid)
{
	size_t i;

	for (i = 0; i < u->n; i++) {
		if (strcmp(u->v[i], uid) != 0)
			continue;
		free(u->v[i]);
		u->v[i] = u->v[--u->n];
		return;
	}
}

static void
watch_uids_clear(struct uids *u)
{
	size_t i;

	for (i = 0; i < u->n; i++)
		free(u->v[i]);
	free(u->v);
	u->v = NULL;
	u->n = 0;
}

/* Decodes one pod object. Returns 0 and a podconfig item (pod and doc owned by the caller's
 * item), or -1 with the reason in err. *size: the object's size as JSON. raw: the object's
 * text as it came (the watch event's "object" member), kept as the item's doc; NULL: the
 * tree is serialized again (a list's items). The pod is decoded from the tree at hand. */
static int
watch_decode_pod(const struct json *obj, const char *raw, size_t rawlen, struct podconfig_item *it,
    size_t *size, char *err, size_t errlen)
{
	char        e[200];
	char       *doc = raw != NULL ? xstrndup(raw, rawlen) : json_to_string(obj);
	size_t      len = raw != NULL ? rawlen : strlen(doc);
	struct pod *p;

	*size = len;
	memset(it, 0, sizeof(*it));
	p = pod_from_value(obj, e, sizeof(e));
	if (p == NULL) {
		snprintf(err, errlen, "cannot decode: %s", e);
		free(doc);
		return -1;
	}
	if (p->uid == NULL || pod_validate(p, e, sizeof(e)) == -1) {
		snprintf(err, errlen, "invalid: %s", p->uid == NULL ? "no metadata.uid" : e);
		pod_unref(p);
		free(doc);
		return -1;
	}
	it->pod = p;
	it->doc = doc;
	it->doc_len = len;
	it->format = "json";
	/* The hashes podconfig compares, from the tree at hand (not a third parse). */
	podconfig_json_hashes(obj, &it->spec_hash, &it->status_hash);
	it->hashed = 1;
	return 0;
}

/* A pod object the watch cannot use (undecodable, invalid, over the size limit) is skipped:
 * never treated as deleted, its last good copy (if any) stays. Reported once per UID, in the
 * log and as a Warning event (the kubelet's FailedValidation), until a good version comes. */
static void
watch_bad_pod(struct watch *w, const char *ns, const char *name, const char *uid, size_t size,
    const char *why)
{
	const char *src = NULL;
	int         kept;

	w->w_stats.decode_errors++;
	if (uid != NULL) {
		if (watch_uids_has(&w->w_bad, uid))
			return;
		watch_uids_add(&w->w_bad, uid);
	}
	kept = uid != NULL && podconfig_doc(w->w_pc, uid, NULL, NULL, &src) != NULL &&
	    streq_null(src, WATCH_SOURCE);
	log_warnx("watch: pod %s/%s uid=%s (%zu bytes): %s; skipped%s", ns ? ns : "?",
	    name ? name : "?", uid ? uid : "?", size, why, kept ? ", its last good copy kept" : "");
	if (w->w_events != NULL && ns != NULL && name != NULL)
		events_record(w->w_events, &(struct ev_object){ "Pod", ns, name, uid, NULL },
		    EV_WARNING, "FailedValidation",
		    "Error reading pod %s/%s from the API server (%zu bytes): %s; ignoring it%s",
		    ns, name, size, why, kept ? ", its last good version stays" : "");
}

/* uid decoded again: a later failure is reported again. */
static void
watch_good_pod(struct watch *w, const char *uid)
{
	if (watch_uids_has(&w->w_bad, uid)) {
		log_info("watch: pod uid=%s is readable again", uid);
		watch_uids_remove(&w->w_bad, uid);
	}
}

/* A list item that cannot be used: its last good copy (a pod of the api source) goes into
 * the list in its place, so that the LIST does not remove it. Returns 0 with it filled, or
 * -1 when there is none. */
static int
watch_keep_last_good(struct watch *w, const char *uid, struct podconfig_item *it)
{
	const char *src = NULL, *doc;
	char        err[256];
	size_t      len = 0, i;
	struct pod *p;

	if (uid == NULL)
		return -1;
	for (i = 0; i < w->w_nmirrors; i++) {
		if (strcmp(w->w_mirrors[i]->uid, uid) != 0)
			continue;
		/* A mirror pod: it moves to the list's mirrors. */
		w->w_list_mirrors = xreallocarray(
		    w->w_list_mirrors, w->w_nlist_mirrors + 1, sizeof(*w->w_list_mirrors));
		w->w_list_mirrors[w->w_nlist_mirrors++] = w->w_mirrors[i];
		w->w_mirrors[i] = w->w_mirrors[--w->w_nmirrors];
		w->w_mirrors_version++;
		return -1;
	}
	doc = podconfig_doc(w->w_pc, uid, &len, NULL, &src);
	if (doc == NULL || !streq_null(src, WATCH_SOURCE))
		return -1;
	if ((p = pod_from_json(doc, len, err, sizeof(err))) == NULL)
		return -1;
	memset(it, 0, sizeof(*it));
	it->pod = p;
	it->doc = xstrndup(doc, len);
	it->doc_len = len;
	it->format = "json";
	return 0;
}

/* The first string value of "key" in a JSON text that could not be parsed (the head of an
 * event over the size limit): metadata comes first in the API's objects. Caller frees. */
static char *
watch_head_str(const char *head, size_t len, const char *key)
{
	char  *pat = xsprintf("\"%s\":\"", key);
	size_t plen = strlen(pat), i, j;
	char  *out = NULL;

	for (i = 0; i + plen <= len && out == NULL; i++) {
		if (memcmp(head + i, pat, plen) != 0)
			continue;
		for (j = i + plen; j < len && j - i - plen < 256; j++) {
			if (head[j] == '"' || head[j] == '\\')
				break;
		}
		if (j < len && head[j] == '"')
			out = xstrndup(head + i + plen, j - i - plen);
		break;
	}
	free(pat);
	return out;
}

/* An event that cannot be parsed (text: its first text_len bytes of size): skipped, with
 * the pod it seems to be about reported (watch_bad_pod). The position does not move. */
static void
watch_skip_raw_sized(
    struct watch *w, const char *text, size_t text_len, size_t size, const char *why)
{
	char *ns = watch_head_str(text, text_len, "namespace");
	char *name = watch_head_str(text, text_len, "name");
	char *uid = watch_head_str(text, text_len, "uid");

	watch_bad_pod(w, ns, name, uid, size, why);
	free(ns);
	free(name);
	free(uid);
}

static void
watch_skip_raw(struct watch *w, const char *line, size_t len, const char *err)
{
	char why[300];

	snprintf(why, sizeof(why), "undecodable event: %s", err);
	watch_skip_raw_sized(
	    w, line, len < API_WATCH_SKIP_HEAD ? len : API_WATCH_SKIP_HEAD, len, why);
}

/* 1 when a Status object says the resourceVersion asked for is newer than the server's
 * store (apimachinery's NewTooLargeResourceVersionError: code 504, reason Timeout, cause
 * ResourceVersionTooLarge; servers before 1.17 said so only in the message). */
static int
watch_status_too_large(const struct json *st)
{
	const struct json *causes = json_get(json_get(st, "details"), "causes");
	const char        *msg = json_str(json_get(st, "message"));
	int64_t            code = 0;
	size_t             i;

	if (json_int(json_get(st, "code"), &code) == -1 || code != 504)
		return 0;
	for (i = 0; i < json_len(causes); i++)
		if (streq_null(json_str(json_get(json_index(causes, i), "reason")),
		        "ResourceVersionTooLarge"))
			return 1;
	return msg != NULL && strstr(msg, "Too large resource version") != NULL;
}

/* The same for a refused watch (its Status body). */
static int
watch_response_too_large(const struct api_response *r)
{
	struct json_doc *doc;
	char             err[64];
	int              rc;

	if (r->status != 504 || r->len == 0)
		return 0;
	if ((doc = json_parse(r->body, r->len, NULL, err, sizeof(err))) == NULL)
		return strstr(r->body, "Too large resource version") != NULL;
	rc = watch_status_too_large(json_root(doc));
	json_free(doc);
	return rc;
}

static void
watch_timer_cb(evutil_socket_t fd, short ev, void *arg)
{
	struct watch *w = arg;

	(void)fd;
	(void)ev;
	if (w->w_rv[0] != '\0' && w->w_state == WATCH_WATCHING)
		watch_start_stream(w);
	else
		watch_list_page(w, NULL);
}

/* Waits (jittered backoff) and then lists (relist=1) or re-watches. */
static void
watch_retry(struct watch *w, int relist, const char *why)
{
	struct timeval tv;
	int64_t        d;

	d = w->w_backoff_ms +
	    (int64_t)((double)w->w_backoff_ms * ((double)random() / ((double)RAND_MAX + 1.0)));
	w->w_backoff_ms *= 2;
	if (w->w_backoff_ms > 30000)
		w->w_backoff_ms = 30000;
	log_warnx(
	    "watch: %s; %s in %lld ms", why, relist ? "relisting" : "re-watching", (long long)d);
	if (relist)
		w->w_rv[0] = '\0';
	watch_set_state(w, relist ? WATCH_IDLE : WATCH_WATCHING);
	tv = ms_to_tv(d);
	evtimer_add(w->w_timer, &tv);
}

static void
watch_relist_now(struct watch *w, const char *why)
{
	log_info("watch: %s; relisting", why);
	w->w_rv[0] = '\0';
	watch_list_page(w, NULL);
}

/* The store went back in time (restored from a backup, or another server on the address):
 * the position will never be served. A LIST without resourceVersion (a consistent read)
 * replaces it, and its diff applies as after a 410. */
static void
watch_too_large(struct watch *w, const char *why)
{
	log_warnx("watch: %s: the server's store is older than resourceVersion %s; listing "
	          "again without a resourceVersion",
	    why, w->w_rv);
	w->w_fails = 0;
	w->w_stats.too_large++;
	w->w_rv[0] = '\0';
	watch_list_page(w, NULL);
}

/* ---- pods the server removed (meta WATCH_META_REMOVED) ----
 * A pod DELETED from the API (or missing from a LIST) keeps its stored spec until its worker
 * is forgotten; a restart in between must not restore it as wanted: the resumed watch starts
 * after its DELETED event and would never say it is gone. The UIDs of such pods, separated by
 * spaces, are kept with the position (same turn, same transaction), pruned to the pods still
 * stored. */

/* Splits a space-separated list. */
static void
watch_uids_parse(struct uids *u, const char *s)
{
	const char *p = s, *e;
	char       *t;

	while (p != NULL && *p != '\0') {
		while (*p == ' ')
			p++;
		if (*p == '\0')
			break;
		e = strchr(p, ' ');
		t = e != NULL ? xstrndup(p, (size_t)(e - p)) : xstrdup(p);
		watch_uids_add(u, t);
		free(t);
		p = e;
	}
}

static int
watch_stored_api_uid(const struct store_pod *sp, void *arg)
{
	if (sp->source != NULL && strcmp(sp->source, WATCH_SOURCE) == 0 && sp->uid != NULL)
		watch_uids_add(arg, sp->uid);
	return 0;
}

/* Saves removed (those still stored) as WATCH_META_REMOVED. */
static void
watch_removed_save(struct watch *w, const struct uids *removed)
{
	struct uids stored = { NULL, 0 };
	char       *out = NULL, *t;
	size_t      i;

	if (store_foreach_pod(w->w_store, watch_stored_api_uid, &stored) == -1) {
		watch_uids_clear(&stored);
		return;
	}
	for (i = 0; i < removed->n; i++) {
		if (!watch_uids_has(&stored, removed->v[i]))
			continue;
		t = out != NULL ? xsprintf("%s %s", out, removed->v[i]) : xstrdup(removed->v[i]);
		free(out);
		out = t;
	}
	store_set_meta(w->w_store, WATCH_META_REMOVED, out);
	free(out);
	watch_uids_clear(&stored);
}

static void
watch_removed_load(struct watch *w, struct uids *u)
{
	char *s = store_get_meta(w->w_store, WATCH_META_REMOVED);

	watch_uids_parse(u, s);
	free(s);
}

/* The server removed uid (a DELETED event). */
static void
watch_removed_note(struct watch *w, const char *uid)
{
	struct uids u = { NULL, 0 };

	if (w->w_store == NULL)
		return;
	watch_removed_load(w, &u);
	watch_uids_add(&u, uid);
	watch_removed_save(w, &u);
	watch_uids_clear(&u);
}

/* A LIST gave the whole set (listed: its UIDs): every stored api pod not in it is removed. */
static void
watch_removed_after_list(struct watch *w, const struct uids *listed)
{
	struct uids stored = { NULL, 0 }, u = { NULL, 0 };
	size_t      i;

	if (w->w_store == NULL)
		return;
	if (store_foreach_pod(w->w_store, watch_stored_api_uid, &stored) == -1) {
		watch_uids_clear(&stored);
		return;
	}
	for (i = 0; i < stored.n; i++)
		if (!watch_uids_has(listed, stored.v[i]))
			watch_uids_add(&u, stored.v[i]);
	watch_removed_save(w, &u);
	watch_uids_clear(&stored);
	watch_uids_clear(&u);
}

static void
watch_list_done(const struct api_response *r, void *arg)
{
	struct watch      *w = arg;
	const struct json *root, *items, *md;
	struct uids        listed = { NULL, 0 };
	struct json_doc   *doc;
	const char        *cont, *rv;
	char               err[256], why[600];
	size_t             i;

	w->w_call = NULL;
	if (r->status != 200) {
		w->w_stats.failures++;
		watch_items_clear(w);
		if (r->status == 410)
			w->w_stats.expired++;
		snprintf(why, sizeof(why), "list: %d %s", r->status, r->message);
		watch_retry(w, 1, why);
		return;
	}
	doc = json_parse(r->body, r->len, &(struct json_limits){ API_MAX_LIST, 0, API_MAX_OBJECT },
	    err, sizeof(err));
	if (doc == NULL) {
		w->w_stats.decode_errors++;
		watch_items_clear(w);
		snprintf(why, sizeof(why), "list: undecodable answer: %s", err);
		watch_retry(w, 1, why);
		return;
	}
	root = json_root(doc);
	md = json_get(root, "metadata");
	items = json_get(root, "items");
	for (i = 0; i < json_len(items); i++) {
		const struct json    *imd = json_get(json_index(items, i), "metadata");
		struct podconfig_item it;
		size_t                size;

		if (watch_decode_pod(json_index(items, i), NULL, 0, &it, &size, err, sizeof(err)) ==
		    -1) {
			const char *uid = json_str(json_get(imd, "uid"));

			watch_bad_pod(w, json_str(json_get(imd, "namespace")),
			    json_str(json_get(imd, "name")), uid, size, err);
			if (watch_keep_last_good(w, uid, &it) == -1)
				continue;
		} else
			watch_good_pod(w, it.pod->uid);
		if (watch_is_mirror(it.pod)) {
			w->w_list_mirrors = xreallocarray(
			    w->w_list_mirrors, w->w_nlist_mirrors + 1, sizeof(*w->w_list_mirrors));
			w->w_list_mirrors[w->w_nlist_mirrors++] = it.pod;
			free((char *)it.doc);
			continue;
		}
		if (w->w_nitems == w->w_capitems) {
			w->w_capitems = w->w_capitems ? w->w_capitems * 2 : 16;
			w->w_items = xreallocarray(w->w_items, w->w_capitems, sizeof(*w->w_items));
		}
		w->w_items[w->w_nitems++] = it;
	}
	rv = json_str(json_get(md, "resourceVersion"));
	if (w->w_list_rv[0] == '\0' && rv != NULL)
		snprintf(w->w_list_rv, sizeof(w->w_list_rv), "%s", rv);
	cont = json_str(json_get(md, "continue"));
	if (cont != NULL && *cont != '\0') {
		char *c = xstrdup(cont);

		json_free(doc);
		watch_list_page(w, c);
		free(c);
		return;
	}
	json_free(doc);
	/* The whole set: podconfig emits the differences (gone -> REMOVE). */
	for (i = 0; i < w->w_nitems; i++)
		log_v(4, "watch: listed pod %s/%s uid=%s", w->w_items[i].pod->ns,
		    w->w_items[i].pod->name, w->w_items[i].pod->uid);
	for (i = 0; i < w->w_nitems; i++)
		watch_uids_add(&listed, w->w_items[i].pod->uid);
	podconfig_set_source(w->w_pc, WATCH_SOURCE, w->w_items, w->w_nitems);
	watch_removed_after_list(w, &listed);
	watch_uids_clear(&listed);
	watch_mirrors_clear(&w->w_mirrors, &w->w_nmirrors);
	w->w_mirrors = w->w_list_mirrors;
	w->w_nmirrors = w->w_nlist_mirrors;
	w->w_mirrors_version++;
	w->w_list_mirrors = NULL;
	w->w_nlist_mirrors = 0;
	for (i = 0; i < w->w_nitems; i++)
		free((char *)w->w_items[i].doc); /* podconfig copied the docs, took the pods */
	free(w->w_items);
	w->w_items = NULL;
	log_info("watch: listed %zu pods of node %s at resourceVersion %s", w->w_nitems, w->w_node,
	    w->w_list_rv);
	w->w_nitems = w->w_capitems = 0;
	w->w_synced = 1;
	w->w_listed_once = 1;
	w->w_backoff_ms = 800;
	w->w_fails = 0;
	watch_set_rv(w, w->w_list_rv);
	watch_start_stream(w);
}

static void
watch_list_page(struct watch *w, const char *cont)
{
	char *path, *c = NULL;

	if (cont == NULL) {
		watch_items_clear(w);
		watch_mirrors_clear(&w->w_list_mirrors, &w->w_nlist_mirrors);
		w->w_list_rv[0] = '\0';
		if (w->w_listed_once)
			w->w_stats.relists++;
	} else
		c = api_escape(cont);
	watch_set_state(w, WATCH_LISTING);
	path = xsprintf("/api/v1/pods?fieldSelector=spec.nodeName%%3D%s&limit=%d%s%s", w->w_node_q,
	    w->w_limit, c ? "&continue=" : "", c ? c : "");
	w->w_stats.lists++;
	w->w_call =
	    api_request(w->w_api, "GET", path, NULL, NULL, 0, API_MAX_LIST, watch_list_done, w);
	free(path);
	free(c);
}

/* Handles one watch event line. Returns 0, or -1 when the stream was given up. */
static int
watch_line(const char *line, size_t len, void *arg)
{
	struct watch      *w = arg;
	struct json_doc   *doc;
	const struct json *root, *obj, *md;
	const char        *type, *rv, *uid;
	char               err[256];
	int64_t            code;

	w->w_backoff_ms = 800; /* the stream works */
	w->w_fails = 0;
	w->w_stats.last_event_ms = now_mono_ms();
	if (w->w_bookmark_len > 0 && len == w->w_bookmark_len &&
	    hash_bytes(line, len, 0) == w->w_bookmark_hash) {
		/* The last bookmark again (nothing in the cluster moved): nothing to decode. */
		w->w_stats.bookmarks++;
		if (w->w_rv_unsaved && now_mono_ms() - w->w_rv_saved_ms >= w->w_save_every_ms)
			watch_save_rv(w, 1);
		return 0;
	}
	doc = json_parse(
	    line, len, &(struct json_limits){ API_MAX_EVENT, 0, API_MAX_OBJECT }, err, sizeof(err));
	if (doc == NULL) {
		watch_skip_raw(w, line, len, err);
		return 0;
	}
	root = json_root(doc);
	type = json_str(json_get(root, "type"));
	obj = json_get(root, "object");
	md = json_get(obj, "metadata");
	rv = json_str(json_get(md, "resourceVersion"));
	if (type == NULL || json_type(obj) != JSON_OBJECT) {
		w->w_stats.decode_errors++;
		log_warnx("watch: event without type or object (%zu bytes): skipped", len);
		json_free(doc);
		return 0;
	}
	if (strcmp(type, "BOOKMARK") == 0) {
		w->w_stats.bookmarks++;
		watch_move_rv(w, rv, 1);
		w->w_bookmark_hash = hash_bytes(line, len, 0);
		w->w_bookmark_len = len;
	} else if (strcmp(type, "ERROR") == 0) {
		if (json_int(json_get(obj, "code"), &code) == 0 && code == 410) {
			w->w_stats.expired++;
			log_info("watch: resourceVersion %s expired (410 Gone)", w->w_rv);
			json_free(doc);
			w->w_call = NULL;
			watch_relist_now(w, "watch: 410 Gone");
			return -1;
		}
		if (watch_status_too_large(obj)) {
			char why[600];

			snprintf(why, sizeof(why), "ERROR event: %s",
			    json_str(json_get(obj, "message")));
			json_free(doc);
			w->w_call = NULL;
			watch_too_large(w, why);
			return -1;
		}
		log_warnx("watch: ERROR event: %s", json_str(json_get(obj, "message")));
		json_free(doc);
		/* Returning -1 cancels the stream (on_end does not run). */
		w->w_call = NULL;
		watch_retry(w, 1, "watch stream unusable");
		return -1;
	} else if (strcmp(type, "ADDED") == 0 || strcmp(type, "MODIFIED") == 0) {
		struct podconfig_item it;
		size_t                size, off = 0, n = 0;
		int                   span = json_member_span(line, len, "object", &off, &n);

		w->w_stats.events++;
		if (watch_decode_pod(obj, span == 0 ? line + off : NULL, n, &it, &size, err,
		        sizeof(err)) == -1) {
			/* Not a deletion: the pod keeps its last good copy; the stream goes on. */
			watch_bad_pod(w, json_str(json_get(md, "namespace")),
			    json_str(json_get(md, "name")), json_str(json_get(md, "uid")), size,
			    err);
			watch_set_rv(w, rv);
			json_free(doc);
			return 0;
		}
		watch_good_pod(w, it.pod->uid);
		log_v(3, "watch: %s pod %s/%s rv=%s", type, it.pod->ns, it.pod->name, rv ? rv : "");
		if (watch_is_mirror(it.pod))
			watch_mirror_upsert(w, it.pod); /* never run: it mirrors a static pod */
		else
			podconfig_upsert(w->w_pc, WATCH_SOURCE, &it);
		free((char *)it.doc);
		watch_set_rv(w, rv);
	} else if (strcmp(type, "DELETED") == 0) {
		w->w_stats.events++;
		uid = json_str(json_get(md, "uid"));
		if (uid == NULL) {
			w->w_stats.decode_errors++;
			log_warnx("watch: DELETED event without metadata.uid: skipped");
			watch_set_rv(w, rv);
			json_free(doc);
			return 0;
		}
		log_v(3, "watch: DELETED pod %s/%s rv=%s", json_str(json_get(md, "namespace")),
		    json_str(json_get(md, "name")), rv ? rv : "");
		watch_uids_remove(&w->w_bad, uid);
		watch_mirror_remove(w, uid);
		podconfig_remove(w->w_pc, WATCH_SOURCE, uid);
		watch_removed_note(w, uid);
		watch_set_rv(w, rv);
	} else {
		w->w_stats.decode_errors++;
		log_warnx("watch: unknown event type %s: skipped", type);
		watch_set_rv(w, rv);
	}
	json_free(doc);
	return 0;
}

/* An event line over the size limit (the transport skipped it; head: its beginning). */
static void
watch_skip(const char *head, size_t head_len, size_t len, void *arg)
{
	struct watch *w = arg;
	char          why[128];

	w->w_backoff_ms = 800;
	w->w_fails = 0;
	w->w_stats.last_event_ms = now_mono_ms();
	snprintf(why, sizeof(why), "an event over the limit of %d bytes", API_MAX_EVENT);
	watch_skip_raw_sized(w, head, head_len, len, why);
}

static void
watch_end(const struct api_response *r, void *arg)
{
	struct watch *w = arg;
	char          why[600];

	w->w_call = NULL;
	if (r->status == 200 && now_mono_ms() - w->w_watch_started_ms >= 1000) {
		/* The server ended the stream (timeout, drain): go on from the position. */
		log_v(2, "watch: stream ended; re-watching from %s", w->w_rv);
		w->w_backoff_ms = 800;
		watch_start_stream(w);
		return;
	}
	if (r->status != 200)
		w->w_stats.failures++;
	if (r->status == 410) {
		w->w_stats.expired++;
		watch_relist_now(w, "watch: 410 Gone");
		return;
	}
	if (watch_response_too_large(r)) {
		snprintf(why, sizeof(why), "%d %s", r->status, r->message);
		watch_too_large(w, why);
		return;
	}
	if (r->status == 200) /* a stream that ends at once repeatedly backs off */
		snprintf(why, sizeof(why), "watch ended at once");
	else
		snprintf(
		    why, sizeof(why), "%s%d %s", r->status ? "" : "status ", r->status, r->message);
	/* Too many requests: the server asks for patience, not for a LIST. */
	if (r->status != 429 && ++w->w_fails >= WATCH_MAX_FAILURES) {
		w->w_fails = 0;
		snprintf(why + strlen(why), sizeof(why) - strlen(why),
		    " (%d failed watches in a row)", WATCH_MAX_FAILURES);
		watch_retry(w, 1, why);
		return;
	}
	watch_retry(w, 0, why);
}

static void
watch_start_stream(struct watch *w)
{
	static const struct api_watch_cbs cbs = { watch_line, watch_end, watch_skip };
	char                             *path;
	int                               to;

	to = w->w_min_to + (int)(random() % (w->w_max_to - w->w_min_to + 1));
	watch_set_state(w, WATCH_WATCHING);
	path = xsprintf("/api/v1/pods?fieldSelector=spec.nodeName%%3D%s&resourceVersion=%s"
	                "&allowWatchBookmarks=true&timeoutSeconds=%d&watch=true",
	    w->w_node_q, w->w_rv, to);
	w->w_stats.watches++;
	w->w_watch_started_ms = now_mono_ms();
	w->w_call = api_watch(w->w_api, path, &cbs, w);
	free(path);
}

struct resume_ctx {
	struct podconfig_item *items;
	size_t                 n, cap;
	struct uids            removed; /* stored, but the server removed them */
	size_t                 skipped;
};

static int
watch_resume_pod(const struct store_pod *sp, void *arg)
{
	struct resume_ctx *rc = arg;
	char               err[256];
	struct pod        *p;

	if (sp->source == NULL || strcmp(sp->source, WATCH_SOURCE) != 0)
		return 0;
	if (sp->uid != NULL && watch_uids_has(&rc->removed, sp->uid)) {
		rc->skipped++;
		return 0;
	}
	p = pod_from_json(sp->doc, sp->doc_len, err, sizeof(err));
	if (p == NULL || p->uid == NULL) {
		log_warnx("watch: stored pod %s/%s: cannot decode: %s", sp->ns, sp->name,
		    p ? "no uid" : err);
		pod_unref(p);
		return 0;
	}
	if (rc->n == rc->cap) {
		rc->cap = rc->cap ? rc->cap * 2 : 16;
		rc->items = xreallocarray(rc->items, rc->cap, sizeof(*rc->items));
	}
	/* The document lives only during the callback: keep a copy. */
	memset(&rc->items[rc->n], 0, sizeof(rc->items[rc->n]));
	rc->items[rc->n].pod = p;
	rc->items[rc->n].doc = xstrndup(sp->doc, sp->doc_len);
	rc->items[rc->n].doc_len = sp->doc_len;
	rc->items[rc->n].format = "json";
	rc->n++;
	return 0;
}

/* Loads the stored api pods into podconfig. Returns 0, or -1 when the store failed. */
static int
watch_resume(struct watch *w)
{
	struct resume_ctx rc;
	size_t            i;

	memset(&rc, 0, sizeof(rc));
	watch_removed_load(w, &rc.removed);
	if (store_foreach_pod(w->w_store, watch_resume_pod, &rc) == -1) {
		for (i = 0; i < rc.n; i++) {
			pod_unref(rc.items[i].pod);
			free((char *)rc.items[i].doc);
		}
		free(rc.items);
		watch_uids_clear(&rc.removed);
		return -1;
	}
	watch_removed_save(w, &rc.removed); /* pruned to the pods still stored */
	if (rc.skipped > 0)
		log_info("watch: %zu stored api pods already removed from the server: not "
		         "restored",
		    rc.skipped);
	watch_uids_clear(&rc.removed);
	podconfig_set_source(w->w_pc, WATCH_SOURCE, rc.items, rc.n);
	for (i = 0; i < rc.n; i++)
		free((char *)rc.items[i].doc);
	free(rc.items);
	log_info("watch: %zu stored api pods restored", rc.n);
	return 0;
}

struct watch *
watch_new(struct event_base *base, struct api *api, const struct watch_options *o)
{
	struct watch *w = xcalloc(1, sizeof(*w));
	char         *rv = NULL;

	w->w_base = base;
	w->w_api = api;
	w->w_pc = o->pc;
	w->w_store = o->store;
	w->w_events = o->events;
	w->w_node = xstrdup(o->node);
	w->w_node_q = api_escape(o->node);
	w->w_limit = o->page_limit > 0 ? o->page_limit : 500;
	w->w_min_to = o->min_timeout_s > 0 ? o->min_timeout_s : 300;
	w->w_max_to = o->max_timeout_s > 0 ? o->max_timeout_s : 600;
	if (w->w_max_to < w->w_min_to)
		w->w_max_to = w->w_min_to;
	w->w_backoff_ms = 800;
	w->w_save_every_ms = o->bookmark_save_ms > 0 ? o->bookmark_save_ms : WATCH_BOOKMARK_SAVE_MS;
	w->w_timer = evtimer_new(base, watch_timer_cb, w);
	if (o->store != NULL && o->resume)
		rv = store_get_meta(o->store, WATCH_META_RV);
	if (rv != NULL && *rv != '\0' && watch_resume(w) == 0) {
		/* A bookmark's later position, if one was saved on this one. */
		char *hint = store_get_hint(o->store, WATCH_META_RV, rv);

		snprintf(w->w_rv_stored, sizeof(w->w_rv_stored), "%s", rv);
		snprintf(w->w_rv, sizeof(w->w_rv), "%s", hint != NULL ? hint : rv);
		log_info("watch: resuming the pods of node %s from resourceVersion %s%s", w->w_node,
		    w->w_rv, hint != NULL ? " (a bookmark's, saved beside the store)" : "");
		free(hint);
		w->w_synced = 1;
		w->w_listed_once = 1;
		watch_start_stream(w);
	} else
		watch_list_page(w, NULL);
	free(rv);
	return w;
}

void
watch_free(struct watch *w)
{
	if (w == NULL)
		return;
	if (w->w_rv_unsaved) /* the latest bookmark's position */
		watch_save_rv(w, 1);
	api_call_cancel(w->w_call);
	if (w->w_timer != NULL)
		event_free(w->w_timer);
	watch_items_clear(w);
	watch_mirrors_clear(&w->w_mirrors, &w->w_nmirrors);
	watch_mirrors_clear(&w->w_list_mirrors, &w->w_nlist_mirrors);
	watch_uids_clear(&w->w_bad);
	free(w->w_node);
	free(w->w_node_q);
	free(w);
}

void
watch_get_stats(const struct watch *w, struct watch_stats *st)
{
	*st = w->w_stats;
	st->state = w->w_state;
	snprintf(st->rv, sizeof(st->rv), "%s", w->w_rv);
}

int
watch_synced(const struct watch *w)
{
	return w->w_synced;
}

const struct pod *
watch_mirror(const struct watch *w, const char *ns, const char *name)
{
	size_t i;

	for (i = 0; i < w->w_nmirrors; i++)
		if (streq_null(w->w_mirrors[i]->ns, ns) && streq_null(w->w_mirrors[i]->name, name))
			return w->w_mirrors[i];
	return NULL;
}

uint64_t
watch_mirrors_version(const struct watch *w)
{
	return w->w_mirrors_version;
}

void
watch_foreach_mirror(const struct watch *w, void (*cb)(const struct pod *, void *), void *arg)
{
	size_t i;

	for (i = 0; i < w->w_nmirrors; i++)
		cb(w->w_mirrors[i], arg);
}

void
watch_mirror_adopt(struct watch *w, struct pod *m)
{
	watch_mirror_upsert(w, m);
}
