/* volumes.c — API objects and tokens for pods' volumes and env (see volumes.h): the
 * asynchronous TTL cache over the API client, service account tokens, the remembered mounts
 * and their updates. The pure parts are in files.c. */
#include <sys/prctl.h>
#include <sys/queue.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/types.h>

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <event2/event.h>
#include <yajl/yajl_gen.h>

#include "client/api.h"
#include "core/json.h"
#include "core/log.h"
#include "pod/pod.h"
#include "core/util.h"
#include "volumes/volumes.h"

#define VOL_DEFAULT_TTL_MS 60000
#define VOL_RETRY_MS       1000 /* a missing or failed object is asked again after */
#define VOL_DEFAULT_MAX    1000

enum ve_state { VE_PENDING = 0, VE_OK, VE_NOT_FOUND, VE_ERROR };

struct ventry {
	TAILQ_ENTRY(ventry) e_lru; /* least recently used first */
	struct volumes  *e_v;
	struct vobj      e_obj; /* kind, ns, name always set */
	enum ve_state    e_state;
	char            *e_msg;        /* NOT_FOUND / ERROR message */
	int64_t          e_fetched_ms; /* monotonic time of the last answer, 0: none */
	struct api_call *e_call;
	char           **e_waiters; /* pod UIDs to kick on an answer */
	size_t           e_nwaiters;
	int              e_fails; /* answers in a row that were not the object */
};
TAILQ_HEAD(ventries, ventry);

struct vmount {
	TAILQ_ENTRY(vmount) m_entry;
	const struct pod *m_pod; /* a reference (replaced when labels or annotations change) */
	char             *m_vol; /* volume name */
	char             *m_dir;
	vol_resource_fn   m_res_fn; /* downwardAPI resourceFieldRef items */
	void             *m_res_arg;
};

/* A service account token for one pod (TokenRequest bound to the pod). */
struct vtoken {
	TAILQ_ENTRY(vtoken) t_entry;
	struct volumes  *t_v;
	char            *t_uid; /* the pod */
	char            *t_ns;
	char            *t_pod; /* pod name */
	char            *t_sa;
	char            *t_audience;   /* "" : the API server's audiences */
	int64_t          t_expiration; /* seconds asked */
	char            *t_token;      /* NULL until the first answer */
	char            *t_msg;        /* last failure */
	int64_t          t_refresh_ms; /* monotonic: ask again from then on */
	int              t_fails;
	struct api_call *t_call;
};
TAILQ_HEAD(vtokens, vtoken);
TAILQ_HEAD(vmounts, vmount);

struct volumes {
	struct event_base *v_base;
	struct api        *v_api;
	char              *v_root;
	int64_t            v_ttl_ms;
	size_t             v_max;
	struct ventries    v_entries;
	size_t             v_nentries;
	struct vmounts     v_mounts;
	size_t             v_nmounts;
	struct vtokens     v_tokens;
	struct event      *v_timer;
	void (*v_kick)(const char *, void *);
	void                *v_kick_arg;
	struct volumes_stats v_stats;
};

static const char *
vol_kind_word(enum vobj_kind k)
{
	return k == VOBJ_SECRET ? "secret" : "configmap";
}

static const char *
vol_kind_plural(enum vobj_kind k)
{
	return k == VOBJ_SECRET ? "secrets" : "configmaps";
}

/* ---- the cache ---- */

static void vol_fetch(struct ventry *);

/* How long an answer is good for: the TTL for an object; for a missing or failed one 1 s,
 * doubling with each answer in a row, up to the TTL. */
static int64_t
vol_entry_ttl(const struct volumes *v, const struct ventry *e)
{
	int64_t d;

	if (e->e_state == VE_OK) /* an immutable object is never read again */
		return e->e_obj.immutable ? INT64_MAX / 2 : v->v_ttl_ms;
	d = (int64_t)VOL_RETRY_MS << (e->e_fails > 6 ? 6 : (e->e_fails > 0 ? e->e_fails - 1 : 0));
	return d < v->v_ttl_ms ? d : v->v_ttl_ms;
}
static void vol_rewrite_mounts(struct volumes *, const struct ventry *);

static struct ventry *
vol_entry_find(struct volumes *v, enum vobj_kind kind, const char *ns, const char *name)
{
	struct ventry *e;

	TAILQ_FOREACH(e, &v->v_entries, e_lru)
	if (e->e_obj.kind == kind && strcmp(e->e_obj.ns, ns) == 0 &&
	    strcmp(e->e_obj.name, name) == 0)
		return e;
	return NULL;
}

static const struct volume *vol_pod_volume(const struct pod *, const char *);

/* 1 when mount m's volume reads object kind ns/name. */
static int
vol_mount_uses(const struct vmount *m, enum vobj_kind kind, const char *ns, const char *name)
{
	const struct volume *vol = vol_pod_volume(m->m_pod, m->m_vol);
	size_t               i;

	if (vol == NULL || strcmp(m->m_pod->ns != NULL ? m->m_pod->ns : "default", ns) != 0)
		return 0;
	switch (vol->v_kind) {
	case VOL_CONFIG_MAP:
	case VOL_SECRET:
		return (vol->v_kind == VOL_SECRET) == (kind == VOBJ_SECRET) &&
		    vol->v_source != NULL && strcmp(vol->v_source, name) == 0;
	case VOL_PROJECTED:
		for (i = 0; i < vol->v_nprojections; i++) {
			const struct volume_projection *p = &vol->v_projections[i];

			if ((p->p_kind == PROJ_CONFIG_MAP && kind == VOBJ_CONFIG_MAP) ||
			    (p->p_kind == PROJ_SECRET && kind == VOBJ_SECRET))
				if (p->p_name != NULL && strcmp(p->p_name, name) == 0)
					return 1;
		}
		return 0;
	default:
		return 0;
	}
}

static int
vol_entry_mounted(struct volumes *v, const struct ventry *e)
{
	struct vmount *m;

	TAILQ_FOREACH(m, &v->v_mounts, m_entry)
	if (vol_mount_uses(m, e->e_obj.kind, e->e_obj.ns, e->e_obj.name))
		return 1;
	return 0;
}

static void
vol_entry_free(struct ventry *e)
{
	size_t i;

	api_call_cancel(e->e_call);
	vobj_clear(&e->e_obj);
	free(e->e_obj.ns);
	free(e->e_obj.name);
	free(e->e_msg);
	for (i = 0; i < e->e_nwaiters; i++)
		free(e->e_waiters[i]);
	free(e->e_waiters);
	free(e);
}

static void
vol_evict(struct volumes *v)
{
	struct ventry *e, *next;

	for (e = TAILQ_FIRST(&v->v_entries); e != NULL && v->v_nentries > v->v_max; e = next) {
		next = TAILQ_NEXT(e, e_lru);
		if (e->e_call != NULL || e->e_nwaiters > 0 || vol_entry_mounted(v, e))
			continue;
		TAILQ_REMOVE(&v->v_entries, e, e_lru);
		v->v_nentries--;
		vol_entry_free(e);
	}
}

static struct ventry *
vol_entry_new(struct volumes *v, enum vobj_kind kind, const char *ns, const char *name)
{
	struct ventry *e = xcalloc(1, sizeof(*e));

	e->e_v = v;
	e->e_obj.kind = kind;
	e->e_obj.ns = xstrdup(ns);
	e->e_obj.name = xstrdup(name);
	e->e_state = VE_PENDING;
	TAILQ_INSERT_TAIL(&v->v_entries, e, e_lru);
	v->v_nentries++;
	vol_evict(v);
	return e;
}

static void
vol_entry_wait(struct ventry *e, const char *uid)
{
	size_t i;

	if (uid == NULL)
		return;
	for (i = 0; i < e->e_nwaiters; i++)
		if (strcmp(e->e_waiters[i], uid) == 0)
			return;
	e->e_waiters = xreallocarray(e->e_waiters, e->e_nwaiters + 1, sizeof(char *));
	e->e_waiters[e->e_nwaiters++] = xstrdup(uid);
}

static void
vol_entry_kick(struct ventry *e)
{
	struct volumes *v = e->e_v;
	char          **w = e->e_waiters;
	size_t          i, n = e->e_nwaiters;

	e->e_waiters = NULL;
	e->e_nwaiters = 0;
	for (i = 0; i < n; i++) {
		if (v->v_kick != NULL)
			v->v_kick(w[i], v->v_kick_arg);
		free(w[i]);
	}
	free(w);
}

static void
vol_fetch_done(const struct api_response *r, void *arg)
{
	struct ventry  *e = arg;
	struct volumes *v = e->e_v;
	enum ve_state   was = e->e_state;
	struct vobj     o;
	char            err[512];
	int             changed = 0;

	e->e_call = NULL;
	memset(&o, 0, sizeof(o));
	if (r->status == 200) {
		if (vobj_parse(e->e_obj.kind, r->body, r->len, &o, err, sizeof(err)) == 0) {
			changed = was != VE_OK || !vobj_same(&o, &e->e_obj);
			vobj_clear(&e->e_obj);
			e->e_obj.items = o.items;
			e->e_obj.nitems = o.nitems;
			e->e_obj.rv = o.rv;
			e->e_obj.immutable = o.immutable;
			e->e_state = VE_OK;
			xfree_str(&e->e_msg);
			e->e_fetched_ms = now_mono_ms();
		} else if (was != VE_OK) {
			e->e_state = VE_ERROR;
			free(e->e_msg);
			e->e_msg = xstrdup(err);
			e->e_fetched_ms = now_mono_ms();
			changed = 1;
		}
	} else if (r->status == 404) {
		changed = was != VE_NOT_FOUND;
		if (was == VE_OK)
			vobj_clear(&e->e_obj);
		e->e_state = VE_NOT_FOUND;
		free(e->e_msg);
		if (r->message != NULL && r->message[0] != '\0')
			e->e_msg = xstrdup(r->message);
		else
			e->e_msg = xsprintf(
			    "%s \"%s\" not found", vol_kind_plural(e->e_obj.kind), e->e_obj.name);
		e->e_fetched_ms = now_mono_ms();
	} else if (was != VE_OK) {
		/* A failed read keeps an object we had (autonomy while the server is away). */
		free(e->e_msg);
		e->e_msg = xsprintf("%s \"%s\": %s", vol_kind_word(e->e_obj.kind), e->e_obj.name,
		    r->status == 0 ? (r->message[0] != '\0' ? r->message : "no answer")
		                   : (r->message[0] != '\0' ? r->message : "server error"));
		e->e_state = VE_ERROR;
		e->e_fetched_ms = now_mono_ms();
		changed = was != VE_ERROR;
	} else {
		log_v(2, "%s: %s %s/%s: refresh failed (%d %s), keeping the cached one", __func__,
		    vol_kind_word(e->e_obj.kind), e->e_obj.ns, e->e_obj.name, r->status,
		    r->message);
	}
	e->e_fails = e->e_state == VE_OK ? 0 : e->e_fails + 1;
	if (changed) {
		log_v(2, "volumes: %s %s/%s: %s", vol_kind_word(e->e_obj.kind), e->e_obj.ns,
		    e->e_obj.name, e->e_state == VE_OK ? "read" : e->e_msg);
		vol_rewrite_mounts(v, e);
	}
	vol_entry_kick(e);
}

static void
vol_fetch(struct ventry *e)
{
	struct volumes *v = e->e_v;
	char           *path;

	if (e->e_call != NULL || v->v_api == NULL)
		return;
	path = xsprintf("/api/v1/namespaces/%s/%s/%s", e->e_obj.ns, vol_kind_plural(e->e_obj.kind),
	    e->e_obj.name);
	v->v_stats.gets++;
	e->e_call = api_request(v->v_api, "GET", path, NULL, NULL, 0, 0, vol_fetch_done, e);
	free(path);
}

static int
vol_name_ok(const char *s)
{
	return s != NULL && s[0] != '\0' && strlen(s) <= 253 && strcspn(s, "/?#%& ") == strlen(s) &&
	    strcmp(s, ".") != 0 && strcmp(s, "..") != 0;
}

int
volumes_get(struct volumes *v, enum vobj_kind kind, const char *ns, const char *name,
    const char *uid, const struct vobj **out, char *err, size_t errlen)
{
	struct ventry *e;
	int64_t        now = now_mono_ms(), age;

	*out = NULL;
	if (!vol_name_ok(ns) || !vol_name_ok(name)) {
		snprintf(err, errlen, "invalid %s name \"%s\"", vol_kind_word(kind),
		    name != NULL ? name : "");
		return VOLUMES_ERROR;
	}
	if (v == NULL || ((e = vol_entry_find(v, kind, ns, name)) == NULL && v->v_api == NULL)) {
		/* Without a server only objects put into the cache exist. */
		snprintf(err, errlen, "couldn't get %s \"%s\" in namespace %s: no API server",
		    vol_kind_word(kind), name, ns);
		return v == NULL ? VOLUMES_ERROR : VOLUMES_NOT_FOUND;
	}
	if (e == NULL) {
		e = vol_entry_new(v, kind, ns, name);
		vol_fetch(e);
	} else {
		TAILQ_REMOVE(&v->v_entries, e, e_lru);
		TAILQ_INSERT_TAIL(&v->v_entries, e, e_lru);
		age = now - e->e_fetched_ms;
		if (e->e_state != VE_PENDING && age >= vol_entry_ttl(v, e))
			vol_fetch(e);
	}
	switch (e->e_state) {
	case VE_OK:
		v->v_stats.hits++;
		*out = &e->e_obj;
		return VOLUMES_OK;
	case VE_PENDING:
		vol_entry_wait(e, uid);
		snprintf(err, errlen, "%s \"%s\": waiting for the API server", vol_kind_word(kind),
		    name);
		return VOLUMES_ERROR;
	case VE_NOT_FOUND:
		vol_entry_wait(e, uid);
		snprintf(err, errlen, "%s", e->e_msg);
		return VOLUMES_NOT_FOUND;
	case VE_ERROR:
		vol_entry_wait(e, uid);
		snprintf(err, errlen, "%s", e->e_msg);
		return VOLUMES_ERROR;
	}
	fatalx("%s: bad state %d", __func__, e->e_state);
}

int
volumes_put(
    struct volumes *v, enum vobj_kind kind, const char *json, size_t len, char *err, size_t errlen)
{
	struct json_doc   *doc;
	const struct json *md;
	const char        *ns, *name;
	struct ventry     *e;
	char               e2[256];
	struct vobj        o;

	if ((doc = json_parse(json, len, NULL, e2, sizeof(e2))) == NULL) {
		snprintf(err, errlen, "%s", e2);
		return -1;
	}
	md = json_get(json_root(doc), "metadata");
	ns = json_str(json_get(md, "namespace"));
	name = json_str(json_get(md, "name"));
	if (!vol_name_ok(name)) {
		snprintf(err, errlen, "no metadata.name");
		json_free(doc);
		return -1;
	}
	memset(&o, 0, sizeof(o));
	if (vobj_parse(kind, json, len, &o, err, errlen) == -1) {
		json_free(doc);
		return -1;
	}
	if ((e = vol_entry_find(v, kind, ns != NULL ? ns : "default", name)) == NULL)
		e = vol_entry_new(v, kind, ns != NULL ? ns : "default", name);
	json_free(doc);
	vobj_clear(&e->e_obj);
	e->e_obj.items = o.items;
	e->e_obj.nitems = o.nitems;
	e->e_obj.rv = o.rv;
	e->e_obj.immutable = o.immutable;
	e->e_state = VE_OK;
	e->e_fetched_ms = now_mono_ms();
	vol_rewrite_mounts(v, e);
	vol_entry_kick(e);
	return 0;
}

/* ---- volumes ---- */

static const char *
vol_plugin_name(enum volume_kind k)
{
	switch (k) {
	case VOL_SECRET:
		return "secret";
	case VOL_PROJECTED:
		return "projected";
	case VOL_DOWNWARD_API:
		return "downward-api";
	default:
		return "configmap";
	}
}

/* ROOT/pods/UID/volumes/kubernetes.io~PLUGIN/NAME, or NULL (err) when the UID or the
 * volume name is no file name. */
static char *
vol_mount_dir(struct volumes *v, const char *uid, enum volume_kind kind, const char *vol, char *err,
    size_t errlen)
{
	char  plugin[64];
	char *dir;

	snprintf(plugin, sizeof(plugin), "kubernetes.io~%s", vol_plugin_name(kind));
	dir = path_join(v->v_root, 5, "pods", uid, "volumes", plugin, vol);
	if (dir == NULL)
		snprintf(err, errlen, "volume \"%s\": pod UID or volume name is not a file name",
		    vol != NULL ? vol : "");
	return dir;
}

static const struct volume *
vol_pod_volume(const struct pod *pod, const char *name)
{
	size_t i;

	for (i = 0; i < pod->nvolumes; i++)
		if (strcmp(pod->volumes[i].v_name, name) == 0)
			return &pod->volumes[i];
	return NULL;
}

/* ---- the downward API in files ---- */

/* downwardAPI items (a volume's or a projection's) into pl. */
static int
vol_downward_payload(const struct pod *pod, const struct key_to_path *items, size_t n,
    int32_t dmode, vol_resource_fn res_fn, void *res_arg, struct vol_payload *pl, char *err,
    size_t errlen)
{
	char  *val;
	size_t i;

	for (i = 0; i < n; i++) {
		const struct key_to_path *kp = &items[i];

		if (kp->resource != NULL) {
			if (res_fn == NULL) {
				snprintf(
				    err, errlen, "resourceFieldRef %s: no resolver", kp->resource);
				return -1;
			}
			if (res_fn(pod, kp, &val, err, errlen, res_arg) == -1)
				return -1;
		} else if (vol_field_value(pod, kp->key, &val, err, errlen) == -1) {
			return -1;
		}
		vol_payload_add(pl, kp->path != NULL ? kp->path : "", val, strlen(val),
		    kp->mode >= 0 ? kp->mode : dmode);
		free(val);
	}
	return 0;
}

/* ---- service account tokens ---- */

static void
vol_token_free(struct vtoken *t)
{
	api_call_cancel(t->t_call);
	free(t->t_uid);
	free(t->t_ns);
	free(t->t_pod);
	free(t->t_sa);
	free(t->t_audience);
	free(t->t_token);
	free(t->t_msg);
	free(t);
}

static void vol_rewrite_pod(struct volumes *, const char *uid);

/* Seconds since the epoch of an RFC 3339 UTC time, or -1. */
static int64_t
vol_rfc3339_s(const char *s)
{
	struct tm   tm;
	const char *end;

	memset(&tm, 0, sizeof(tm));
	if (s == NULL || (end = strptime(s, "%Y-%m-%dT%H:%M:%S", &tm)) == NULL)
		return -1;
	return (int64_t)timegm(&tm);
}

int64_t
vol_token_refresh_s(int64_t expiration_s, int64_t lifetime_s)
{
	int64_t r;

	/* The kubelet's token manager: after 80% of the lifetime, or after 24 h. */
	if (lifetime_s <= 0)
		lifetime_s = expiration_s > 0 ? expiration_s : 3600;
	r = lifetime_s * 8 / 10;
	return r < 24 * 3600 ? r : 24 * 3600;
}

static void
vol_token_done(const struct api_response *r, void *arg)
{
	struct vtoken     *t = arg;
	struct volumes    *v = t->t_v;
	struct json_doc   *doc = NULL;
	const struct json *st;
	const char        *tok;
	char               err[256];
	int64_t            exp, life, now = now_mono_ms();
	int                had = t->t_token != NULL;

	t->t_call = NULL;
	if (r->status == 200 || r->status == 201)
		doc = json_parse(r->body, r->len, NULL, err, sizeof(err));
	st = doc != NULL ? json_get(json_root(doc), "status") : NULL;
	tok = json_str(json_get(st, "token"));
	if (tok == NULL || tok[0] == '\0') {
		free(t->t_msg);
		t->t_msg = xsprintf("token for service account %s/%s: %s", t->t_ns, t->t_sa,
		    r->status == 0              ? (r->message[0] != '\0' ? r->message : "no answer")
		        : r->message[0] != '\0' ? r->message
		                                : "no token in the answer");
		t->t_fails++;
		/* Retry 1 s doubling up to 1 min; a token we have stays until it expires. */
		t->t_refresh_ms =
		    now + ((int64_t)VOL_RETRY_MS << (t->t_fails > 6 ? 6 : t->t_fails - 1));
		log_warnx("volumes: pod %s/%s: %s", t->t_ns, t->t_pod, t->t_msg);
		json_free(doc);
		if (!had)
			vol_rewrite_pod(v, t->t_uid); /* kicks the pod, which reports the error */
		return;
	}
	life = t->t_expiration;
	exp = vol_rfc3339_s(json_str(json_get(st, "expirationTimestamp")));
	if (exp > 0 && exp - (int64_t)time(NULL) > 0)
		life = exp - (int64_t)time(NULL);
	free(t->t_token);
	t->t_token = xstrdup(tok);
	xfree_str(&t->t_msg);
	t->t_fails = 0;
	t->t_refresh_ms = now + vol_token_refresh_s(t->t_expiration, life) * 1000;
	json_free(doc);
	v->v_stats.tokens++;
	log_v(2, "volumes: pod %s/%s: token for %s (audience \"%s\", %llds) refreshed in %llds",
	    t->t_ns, t->t_pod, t->t_sa, t->t_audience, (long long)t->t_expiration,
	    (long long)((t->t_refresh_ms - now) / 1000));
	vol_rewrite_pod(v, t->t_uid);
}

static void
vol_token_fetch(struct vtoken *t)
{
	struct volumes      *v = t->t_v;
	char                *path, *body;
	yajl_gen             g;
	const unsigned char *buf;
	size_t               len;

	if (t->t_call != NULL || v->v_api == NULL)
		return;
	g = json_gen_new(0);
	yajl_gen_map_open(g);
	json_gen_str(g, "apiVersion");
	json_gen_str(g, "authentication.k8s.io/v1");
	json_gen_str(g, "kind");
	json_gen_str(g, "TokenRequest");
	json_gen_str(g, "spec");
	yajl_gen_map_open(g);
	json_gen_str(g, "audiences");
	yajl_gen_array_open(g);
	if (t->t_audience[0] != '\0')
		json_gen_str(g, t->t_audience);
	yajl_gen_array_close(g);
	json_gen_str(g, "expirationSeconds");
	yajl_gen_integer(g, t->t_expiration);
	json_gen_str(g, "boundObjectRef");
	yajl_gen_map_open(g);
	json_gen_str(g, "apiVersion");
	json_gen_str(g, "v1");
	json_gen_str(g, "kind");
	json_gen_str(g, "Pod");
	json_gen_str(g, "name");
	json_gen_str(g, t->t_pod);
	json_gen_str(g, "uid");
	json_gen_str(g, t->t_uid);
	yajl_gen_map_close(g);
	yajl_gen_map_close(g);
	yajl_gen_map_close(g);
	yajl_gen_get_buf(g, &buf, &len);
	body = xstrndup((const char *)buf, len);
	yajl_gen_free(g);
	path = xsprintf("/api/v1/namespaces/%s/serviceaccounts/%s/token", t->t_ns, t->t_sa);
	t->t_call = api_request(
	    v->v_api, "POST", path, "application/json", body, strlen(body), 0, vol_token_done, t);
	free(path);
	free(body);
}

/* The token of projection p for pod: 0 with *tok (borrowed), -1 with err (it failed), -2 with
 * err while the first request is in flight. */
static int
vol_token_get(struct volumes *v, const struct pod *pod, const struct volume_projection *p,
    const char **tok, char *err, size_t errlen)
{
	const char    *ns = pod->ns != NULL ? pod->ns : "default";
	const char    *sa = pod->service_account != NULL && pod->service_account[0] != '\0'
	       ? pod->service_account
	       : "default";
	const char    *aud = p->p_audience != NULL ? p->p_audience : "";
	int64_t        exp = p->p_expiration > 0 ? p->p_expiration : 3600;
	struct vtoken *t;

	*tok = NULL;
	if (v->v_api == NULL) {
		snprintf(err, errlen,
		    "couldn't get a token for service account %s/%s: no API "
		    "server",
		    ns, sa);
		return -1;
	}
	TAILQ_FOREACH(t, &v->v_tokens, t_entry)
	if (strcmp(t->t_uid, pod->uid) == 0 && strcmp(t->t_sa, sa) == 0 &&
	    strcmp(t->t_audience, aud) == 0 && t->t_expiration == exp)
		break;
	if (t == NULL) {
		t = xcalloc(1, sizeof(*t));
		t->t_v = v;
		t->t_uid = xstrdup(pod->uid);
		t->t_ns = xstrdup(ns);
		t->t_pod = xstrdup(pod->name);
		t->t_sa = xstrdup(sa);
		t->t_audience = xstrdup(aud);
		t->t_expiration = exp;
		TAILQ_INSERT_TAIL(&v->v_tokens, t, t_entry);
		vol_token_fetch(t);
	} else if (now_mono_ms() >= t->t_refresh_ms) {
		vol_token_fetch(t);
	}
	if (t->t_token != NULL) {
		*tok = t->t_token;
		return 0;
	}
	if (t->t_msg != NULL) {
		snprintf(err, errlen, "%s", t->t_msg);
		return -1;
	}
	snprintf(err, errlen, "waiting for a token for service account %s/%s", ns, sa);
	return -2;
}

/* ---- volume payloads ---- */

/* The object of a configMap / secret source: 0 with *obj (NULL: missing and optional), -1
 * with err. */
static int
vol_object_for(struct volumes *v, const struct pod *pod, enum vobj_kind kind, const char *name,
    int optional, const struct vobj **obj, char *err, size_t errlen)
{
	int rc;

	rc = volumes_get(
	    v, kind, pod->ns != NULL ? pod->ns : "default", name, pod->uid, obj, err, errlen);
	if (rc == VOLUMES_OK)
		return 0;
	if (rc == VOLUMES_NOT_FOUND && optional) {
		*obj = NULL;
		return 0;
	}
	return -1;
}

/* Everything volume vol of pod holds now. 0, or -1 with err (an object or token missing). */
static int
vol_volume_payload(struct volumes *v, const struct pod *pod, const struct volume *vol,
    vol_resource_fn res_fn, void *res_arg, struct vol_payload *pl, char *err, size_t errlen)
{
	int32_t            dmode = vol->v_default_mode >= 0 ? vol->v_default_mode : 0644;
	const struct vobj *obj;
	const char        *tok;
	struct volume      one;
	size_t             i;

	if (pod->security != NULL && pod->security->fs_group.set) {
		pl->has_gid = 1;
		pl->gid = pod->security->fs_group.v;
	}
	switch (vol->v_kind) {
	case VOL_CONFIG_MAP:
	case VOL_SECRET:
		if (vol_object_for(v, pod,
		        vol->v_kind == VOL_SECRET ? VOBJ_SECRET : VOBJ_CONFIG_MAP, vol->v_source,
		        vol->v_optional, &obj, err, errlen) == -1)
			return -1;
		return vol_payload_make(vol, obj, pl, err, errlen);
	case VOL_DOWNWARD_API:
		return vol_downward_payload(
		    pod, vol->v_items, vol->v_nitems, dmode, res_fn, res_arg, pl, err, errlen);
	case VOL_PROJECTED:
		for (i = 0; i < vol->v_nprojections; i++) {
			const struct volume_projection *p = &vol->v_projections[i];

			switch (p->p_kind) {
			case PROJ_CONFIG_MAP:
			case PROJ_SECRET:
				if (vol_object_for(v, pod,
				        p->p_kind == PROJ_SECRET ? VOBJ_SECRET : VOBJ_CONFIG_MAP,
				        p->p_name, p->p_optional, &obj, err, errlen) == -1)
					return -1;
				/* A projection reads like a volume of its own with our defaults. */
				memset(&one, 0, sizeof(one));
				one.v_items = p->p_items;
				one.v_nitems = p->p_nitems;
				one.v_optional = p->p_optional;
				one.v_default_mode = dmode;
				if (vol_payload_make(&one, obj, pl, err, errlen) == -1)
					return -1;
				break;
			case PROJ_DOWNWARD_API:
				if (vol_downward_payload(pod, p->p_items, p->p_nitems, dmode,
				        res_fn, res_arg, pl, err, errlen) == -1)
					return -1;
				break;
			case PROJ_SA_TOKEN:
				if (vol_token_get(v, pod, p, &tok, err, errlen) < 0)
					return -1;
				/* With an fsGroup the kubelet makes the token 0600 (0640 after
				 * the group is applied). */
				vol_payload_add(pl, p->p_path != NULL ? p->p_path : "token", tok,
				    strlen(tok), pl->has_gid ? 0600 : dmode);
				break;
			case PROJ_OTHER:
				snprintf(err, errlen, "projected %s sources are not supported",
				    p->p_name != NULL ? p->p_name : "");
				return -1;
			}
		}
		return 0;
	default:
		snprintf(err, errlen,
		    "volume \"%s\": not a configMap, secret, downwardAPI or "
		    "projected volume",
		    vol->v_name);
		return -1;
	}
}

/* Secrets and tokens (secret and projected volumes) live on a tmpfs, as the kubelet's
 * memory-medium wrapper volumes. */
static int
vol_in_memory(const struct volume *vol)
{
	return vol->v_kind == VOL_SECRET || vol->v_kind == VOL_PROJECTED;
}

/* Builds and writes one mount's volume. */
static int
vol_mount_write(struct volumes *v, struct vmount *m, char *err, size_t errlen)
{
	const struct volume *vol = vol_pod_volume(m->m_pod, m->m_vol);
	struct vol_payload   pl = { NULL, 0, 0, 0 };
	char                 e[512];
	int                  rc;

	if (vol == NULL) {
		snprintf(err, errlen, "no volume \"%s\"", m->m_vol);
		return -1;
	}
	if (vol_volume_payload(v, m->m_pod, vol, m->m_res_fn, m->m_res_arg, &pl, err, errlen) ==
	    -1) {
		vol_payload_clear(&pl);
		return -1;
	}
	if (vol_in_memory(vol) &&
	    vol_tmpfs_ensure(m->m_dir, vol_tmpfs_size(m->m_pod), e, sizeof(e)) == -1) {
		snprintf(err, errlen, "volume \"%s\": %s", vol->v_name, e);
		vol_payload_clear(&pl);
		return -1;
	}
	rc = vol_write_atomic(m->m_dir, &pl, e, sizeof(e));
	vol_payload_clear(&pl);
	if (rc == -1) {
		snprintf(err, errlen, "volume \"%s\": %s", vol->v_name, e);
		return -1;
	}
	if (rc == 1) {
		v->v_stats.writes++;
		log_v(2, "volumes: pod %s/%s: volume %s written", m->m_pod->ns, m->m_pod->name,
		    m->m_vol);
	}
	return 0;
}

/* Rewrites every mount that reads object e; one whose sources are not all there keeps its
 * last files (the kubelet does not empty a volume when an object goes away). */
static void
vol_rewrite_mounts(struct volumes *v, const struct ventry *e)
{
	struct vmount *m;
	char           err[512];

	TAILQ_FOREACH(m, &v->v_mounts, m_entry)
	{
		if (!vol_mount_uses(m, e->e_obj.kind, e->e_obj.ns, e->e_obj.name))
			continue;
		if (vol_mount_write(v, m, err, sizeof(err)) == -1)
			log_v(2, "volumes: pod %s/%s: volume %s not updated: %s", m->m_pod->ns,
			    m->m_pod->name, m->m_vol, err);
	}
}

/* A pod's token arrived or failed: rewrite its projected volumes, kick it. */
static void
vol_rewrite_pod(struct volumes *v, const char *uid)
{
	struct vmount *m;
	char           err[512], *u = xstrdup(uid);

	TAILQ_FOREACH(m, &v->v_mounts, m_entry)
	{
		const struct volume *vol;

		if (strcmp(m->m_pod->uid, u) != 0 ||
		    (vol = vol_pod_volume(m->m_pod, m->m_vol)) == NULL ||
		    vol->v_kind != VOL_PROJECTED)
			continue;
		if (vol_mount_write(v, m, err, sizeof(err)) == -1)
			log_v(2, "volumes: pod %s/%s: volume %s not updated: %s", m->m_pod->ns,
			    m->m_pod->name, m->m_vol, err);
	}
	if (v->v_kick != NULL)
		v->v_kick(u, v->v_kick_arg);
	free(u);
}

static int
vol_is_static(const struct pod *pod)
{
	const char *src = kvlist_get(&pod->annotations, "kubernetes.io/config.source");

	return src != NULL && strcmp(src, "api") != 0;
}

/* 1 when the volume reads API objects (a static pod may not have it). */
static const char *
vol_volume_api_use(const struct volume *vol)
{
	size_t i;

	if (vol->v_kind == VOL_CONFIG_MAP)
		return "configmap";
	if (vol->v_kind == VOL_SECRET)
		return "secret";
	for (i = 0; vol->v_kind == VOL_PROJECTED && i < vol->v_nprojections; i++) {
		switch (vol->v_projections[i].p_kind) {
		case PROJ_CONFIG_MAP:
			return "configmap";
		case PROJ_SECRET:
			return "secret";
		case PROJ_SA_TOKEN:
			return "service account token";
		default:
			break;
		}
	}
	return NULL;
}

int
volumes_setup(struct volumes *v, const struct pod *pod, const struct volume *vol,
    vol_resource_fn res_fn, void *res_arg, char **host_dir, char *err, size_t errlen)
{
	const char    *use;
	struct vmount *m;
	char          *dir, *parent;

	*host_dir = NULL;
	if (vol->v_kind != VOL_CONFIG_MAP && vol->v_kind != VOL_SECRET &&
	    vol->v_kind != VOL_PROJECTED && vol->v_kind != VOL_DOWNWARD_API) {
		snprintf(err, errlen,
		    "volume \"%s\": not a configMap, secret, downwardAPI or "
		    "projected volume",
		    vol->v_name);
		return -1;
	}
	if (vol_is_static(pod) && (use = vol_volume_api_use(vol)) != NULL) {
		snprintf(err, errlen, "volume \"%s\": a static pod may not use %s \"%s\"",
		    vol->v_name, use, vol->v_source != NULL ? vol->v_source : vol->v_name);
		return -1;
	}
	TAILQ_FOREACH(m, &v->v_mounts, m_entry)
	if (strcmp(m->m_pod->uid, pod->uid) == 0 && strcmp(m->m_vol, vol->v_name) == 0)
		break;
	if (m == NULL) {
		if ((dir = vol_mount_dir(v, pod->uid, vol->v_kind, vol->v_name, err, errlen)) ==
		    NULL)
			return -1;
		if (vol->v_kind == VOL_SECRET || vol->v_kind == VOL_PROJECTED) {
			/* Secrets and tokens: the plugin directory is root-only; the volume
			 * directory (a tmpfs, vol_mount_write) is 0755 for the container's user. */
			parent = xstrdup(dir);
			*strrchr(parent, '/') = '\0';
			if (mkdirs(parent, 0700) == 0)
				chmod(parent, 0700);
			free(parent);
		}
		m = xcalloc(1, sizeof(*m));
		m->m_pod = pod_ref(pod);
		m->m_vol = xstrdup(vol->v_name);
		m->m_dir = dir;
		TAILQ_INSERT_TAIL(&v->v_mounts, m, m_entry);
		v->v_nmounts++;
	}
	m->m_res_fn = res_fn;
	m->m_res_arg = res_arg;
	if (vol_mount_write(v, m, err, errlen) == -1)
		return -1;
	*host_dir = xstrdup(m->m_dir);
	return 0;
}

/* Asks for one object; 1 while it has never been answered. */
static int
vol_pget(struct volumes *v, const struct pod *pod, enum vobj_kind kind, const char *name)
{
	const char        *ns = pod->ns != NULL ? pod->ns : "default";
	const struct vobj *obj;
	struct ventry     *e;
	char               err[256];

	if (volumes_get(v, kind, ns, name, pod->uid, &obj, err, sizeof(err)) == VOLUMES_OK)
		return 0;
	e = vol_name_ok(name) ? vol_entry_find(v, kind, ns, name) : NULL;
	return e != NULL && e->e_state == VE_PENDING;
}

static int
vol_prefetch_containers(
    struct volumes *v, const struct pod *pod, const struct container *cs, size_t n)
{
	size_t i, k;
	int    pending = 0;

	for (i = 0; i < n; i++) {
		for (k = 0; k < cs[i].c_nenv_from; k++)
			pending += vol_pget(v, pod,
			    cs[i].c_env_from[k].is_secret ? VOBJ_SECRET : VOBJ_CONFIG_MAP,
			    cs[i].c_env_from[k].name);
		for (k = 0; k < cs[i].c_nenv; k++) {
			const struct env_var *e = &cs[i].c_env[k];

			if (e->src == ENV_CONFIG_MAP_KEY_REF || e->src == ENV_SECRET_KEY_REF)
				pending += vol_pget(v, pod,
				    e->src == ENV_SECRET_KEY_REF ? VOBJ_SECRET : VOBJ_CONFIG_MAP,
				    e->ref_name);
		}
	}
	return pending;
}

/* Starts every read the pod needs; returns how many were never answered yet. */
static int
vol_prefetch(struct volumes *v, const struct pod *pod)
{
	const char *tok;
	char        err[256];
	size_t      i, k;
	int         pending = 0;

	if (v == NULL || pod == NULL || pod->uid == NULL || vol_is_static(pod))
		return 0;
	for (i = 0; i < pod->nvolumes; i++) {
		const struct volume *vol = &pod->volumes[i];

		if (vol->v_kind == VOL_CONFIG_MAP || vol->v_kind == VOL_SECRET)
			pending += vol_pget(v, pod,
			    vol->v_kind == VOL_SECRET ? VOBJ_SECRET : VOBJ_CONFIG_MAP,
			    vol->v_source);
		for (k = 0; vol->v_kind == VOL_PROJECTED && k < vol->v_nprojections; k++) {
			const struct volume_projection *p = &vol->v_projections[k];

			if (p->p_kind == PROJ_CONFIG_MAP || p->p_kind == PROJ_SECRET)
				pending += vol_pget(v, pod,
				    p->p_kind == PROJ_SECRET ? VOBJ_SECRET : VOBJ_CONFIG_MAP,
				    p->p_name);
			else if (p->p_kind == PROJ_SA_TOKEN &&
			    vol_token_get(v, pod, p, &tok, err, sizeof(err)) == -2)
				pending++;
		}
	}
	pending += vol_prefetch_containers(v, pod, pod->init_containers, pod->ninit_containers);
	pending += vol_prefetch_containers(v, pod, pod->containers, pod->ncontainers);
	pending +=
	    vol_prefetch_containers(v, pod, pod->ephemeral_containers, pod->nephemeral_containers);
	return pending;
}

void
volumes_prefetch_pod(struct volumes *v, const struct pod *pod)
{
	(void)vol_prefetch(v, pod);
}

int
volumes_pod_waiting(struct volumes *v, const struct pod *pod)
{
	return vol_prefetch(v, pod) > 0;
}

void
volumes_track_pod(struct volumes *v, const struct pod *pod)
{
	const struct volume *vol;
	struct vmount       *m;
	char                 err[512], *parent;
	size_t               i;

	if (v == NULL || pod == NULL || pod->uid == NULL)
		return;
	volumes_update_pod(v, pod);
	for (i = 0; i < pod->nvolumes; i++) {
		vol = &pod->volumes[i];
		if (vol->v_kind != VOL_CONFIG_MAP && vol->v_kind != VOL_SECRET &&
		    vol->v_kind != VOL_PROJECTED && vol->v_kind != VOL_DOWNWARD_API)
			continue;
		if (vol_is_static(pod) && vol_volume_api_use(vol) != NULL)
			continue;
		TAILQ_FOREACH(m, &v->v_mounts, m_entry)
		if (strcmp(m->m_pod->uid, pod->uid) == 0 && strcmp(m->m_vol, vol->v_name) == 0)
			break;
		if (m != NULL)
			continue;
		if (!path_component_ok(pod->uid) || !path_component_ok(vol->v_name))
			continue; /* no file name: nothing to track */
		m = xcalloc(1, sizeof(*m));
		m->m_pod = pod_ref(pod);
		m->m_vol = xstrdup(vol->v_name);
		m->m_dir = vol_mount_dir(v, pod->uid, vol->v_kind, vol->v_name, err, sizeof(err));
		if (vol->v_kind == VOL_SECRET || vol->v_kind == VOL_PROJECTED) {
			parent = xstrdup(m->m_dir);
			*strrchr(parent, '/') = '\0';
			if (mkdirs(parent, 0700) == 0)
				chmod(parent, 0700);
			free(parent);
		}
		TAILQ_INSERT_TAIL(&v->v_mounts, m, m_entry);
		v->v_nmounts++;
		if (vol_mount_write(v, m, err, sizeof(err)) == -1)
			log_v(2, "volumes: pod %s/%s: volume %s: %s", pod->ns, pod->name,
			    vol->v_name, err);
	}
}

int
volumes_setup_once(const char *root_dir, const struct pod *pod, const struct volume *vol,
    vol_resource_fn res_fn, void *res_arg, char **host_dir, char *err, size_t errlen)
{
	struct volumes     tmp;
	struct vol_payload pl = { NULL, 0, 0, 0 };
	char              *dir, e[512];
	int                rc;

	*host_dir = NULL;
	/* A manager with no API client: objects and tokens fail "no API server". */
	memset(&tmp, 0, sizeof(tmp));
	tmp.v_root = (char *)root_dir;
	tmp.v_ttl_ms = VOL_DEFAULT_TTL_MS;
	tmp.v_max = 1;
	TAILQ_INIT(&tmp.v_entries);
	TAILQ_INIT(&tmp.v_mounts);
	TAILQ_INIT(&tmp.v_tokens);
	if (vol_volume_payload(&tmp, pod, vol, res_fn, res_arg, &pl, err, errlen) == -1) {
		vol_payload_clear(&pl);
		return -1;
	}
	if ((dir = vol_mount_dir(&tmp, pod->uid, vol->v_kind, vol->v_name, err, errlen)) == NULL) {
		vol_payload_clear(&pl);
		return -1;
	}
	if (vol_in_memory(vol) && vol_tmpfs_ensure(dir, vol_tmpfs_size(pod), e, sizeof(e)) == -1) {
		snprintf(err, errlen, "volume \"%s\": %s", vol->v_name, e);
		vol_payload_clear(&pl);
		free(dir);
		return -1;
	}
	rc = vol_write_atomic(dir, &pl, e, sizeof(e));
	vol_payload_clear(&pl);
	if (rc == -1) {
		snprintf(err, errlen, "volume \"%s\": %s", vol->v_name, e);
		free(dir);
		return -1;
	}
	*host_dir = dir;
	return 0;
}

static void
vol_mount_free(struct vmount *m)
{
	pod_unref(m->m_pod);
	free(m->m_vol);
	free(m->m_dir);
	free(m);
}

static int
vol_kvlist_same(const struct kvlist *a, const struct kvlist *b)
{
	size_t i;

	if (a->n != b->n)
		return 0;
	for (i = 0; i < a->n; i++)
		if (!streq_null(kvlist_get(b, a->items[i].k), a->items[i].v))
			return 0;
	return 1;
}

void
volumes_update_pod(struct volumes *v, const struct pod *pod)
{
	struct vmount       *m;
	const struct volume *vol;
	char                 err[512];

	if (v == NULL || pod == NULL || pod->uid == NULL)
		return;
	TAILQ_FOREACH(m, &v->v_mounts, m_entry)
	{
		if (strcmp(m->m_pod->uid, pod->uid) != 0 ||
		    (vol_kvlist_same(&m->m_pod->labels, &pod->labels) &&
		        vol_kvlist_same(&m->m_pod->annotations, &pod->annotations)))
			continue;
		pod_ref(pod);
		pod_unref(m->m_pod);
		m->m_pod = pod;
		vol = vol_pod_volume(m->m_pod, m->m_vol);
		if (vol == NULL ||
		    (vol->v_kind != VOL_DOWNWARD_API && vol->v_kind != VOL_PROJECTED))
			continue;
		if (vol_mount_write(v, m, err, sizeof(err)) == -1)
			log_v(2, "volumes: pod %s/%s: volume %s not updated: %s", pod->ns,
			    pod->name, m->m_vol, err);
	}
}

void
volumes_forget_pod(struct volumes *v, const char *uid)
{
	struct vmount *m, *next;
	struct vtoken *t, *tnext;
	struct ventry *e;
	size_t         i;

	if (v == NULL || uid == NULL)
		return;
	TAILQ_FOREACH(e, &v->v_entries, e_lru)
	{
		for (i = 0; i < e->e_nwaiters; i++) {
			if (strcmp(e->e_waiters[i], uid) != 0)
				continue;
			free(e->e_waiters[i]);
			e->e_waiters[i] = e->e_waiters[--e->e_nwaiters];
			break;
		}
	}
	for (t = TAILQ_FIRST(&v->v_tokens); t != NULL; t = tnext) {
		tnext = TAILQ_NEXT(t, t_entry);
		if (strcmp(t->t_uid, uid) == 0) {
			TAILQ_REMOVE(&v->v_tokens, t, t_entry);
			vol_token_free(t);
		}
	}
	for (m = TAILQ_FIRST(&v->v_mounts); m != NULL; m = next) {
		next = TAILQ_NEXT(m, m_entry);
		if (strcmp(m->m_pod->uid, uid) != 0)
			continue;
		TAILQ_REMOVE(&v->v_mounts, m, m_entry);
		v->v_nmounts--;
		vol_mount_free(m);
	}
}

/* Objects that mounted volumes use are re-read once older than the TTL; missing ones pods
 * wait for are asked again (backing off), so a pod starts soon after its object appears. */
static void
vol_refresh_cb(evutil_socket_t fd, short what, void *arg)
{
	struct volumes *v = arg;
	struct ventry  *e;
	struct vtoken  *t;
	int64_t         now = now_mono_ms();

	(void)fd;
	(void)what;
	TAILQ_FOREACH(e, &v->v_entries, e_lru)
	{
		if (e->e_call != NULL || e->e_state == VE_PENDING ||
		    (e->e_nwaiters == 0 && !vol_entry_mounted(v, e)))
			continue;
		if (now - e->e_fetched_ms >= vol_entry_ttl(v, e))
			vol_fetch(e);
	}
	TAILQ_FOREACH(t, &v->v_tokens, t_entry)
	if (t->t_call == NULL && now >= t->t_refresh_ms)
		vol_token_fetch(t);
	vol_evict(v);
}

/* A process that reads secrets writes no core file: a core of kletd would put its cache,
 * the tokens and the env of containers on a disk (core_pattern, systemd-coredump). The
 * secret bytes pass through too many buffers (HTTP/2 frames, JSON, base64, payloads,
 * protobuf) for MADV_DONTDUMP on each, so the whole process is made non-dumpable (and its
 * core limit 0, for a kernel with fs.suid_dumpable=2). Not with AddressSanitizer: its leak
 * checker needs to ptrace the process, which non-dumpable forbids. */
static void
vol_no_core_dumps(void)
{
#ifndef __SANITIZE_ADDRESS__
	struct rlimit rl = { 0, 0 };

	if (setrlimit(RLIMIT_CORE, &rl) == -1)
		log_warn("volumes: setrlimit RLIMIT_CORE");
	if (prctl(PR_SET_DUMPABLE, 0, 0, 0, 0) == -1)
		log_warn("volumes: prctl PR_SET_DUMPABLE");
	else
		log_v(1, "volumes: secrets are read: no core dumps (PR_SET_DUMPABLE 0)");
#endif
}

struct volumes *
volumes_new(struct event_base *base, struct api *api, const struct volumes_options *o)
{
	struct volumes *v = xcalloc(1, sizeof(*v));
	struct timeval  tv;
	int64_t         period;

	v->v_base = base;
	v->v_api = api;
	v->v_root = xstrdup(o != NULL && o->root_dir != NULL ? o->root_dir : ".");
	v->v_ttl_ms = o != NULL && o->ttl_ms > 0 ? o->ttl_ms : VOL_DEFAULT_TTL_MS;
	v->v_max = o != NULL && o->max_objects > 0 ? o->max_objects : VOL_DEFAULT_MAX;
	TAILQ_INIT(&v->v_entries);
	TAILQ_INIT(&v->v_mounts);
	TAILQ_INIT(&v->v_tokens);
	if (api != NULL)
		vol_no_core_dumps();
	if (base != NULL) {
		period = v->v_ttl_ms / 4;
		if (period < 200)
			period = 200;
		if (period > 1000)
			period = 1000;
		tv = ms_to_tv(period);
		v->v_timer = event_new(base, -1, EV_PERSIST, vol_refresh_cb, v);
		event_add(v->v_timer, &tv);
	}
	return v;
}

void
volumes_free(struct volumes *v)
{
	struct ventry *e;
	struct vmount *m;
	struct vtoken *t;

	if (v == NULL)
		return;
	if (v->v_timer != NULL)
		event_free(v->v_timer);
	while ((t = TAILQ_FIRST(&v->v_tokens)) != NULL) {
		TAILQ_REMOVE(&v->v_tokens, t, t_entry);
		vol_token_free(t);
	}
	while ((e = TAILQ_FIRST(&v->v_entries)) != NULL) {
		TAILQ_REMOVE(&v->v_entries, e, e_lru);
		vol_entry_free(e);
	}
	while ((m = TAILQ_FIRST(&v->v_mounts)) != NULL) {
		TAILQ_REMOVE(&v->v_mounts, m, m_entry);
		vol_mount_free(m);
	}
	free(v->v_root);
	free(v);
}

void
volumes_set_kick(struct volumes *v, void (*fn)(const char *, void *), void *arg)
{
	v->v_kick = fn;
	v->v_kick_arg = arg;
}

void
volumes_get_stats(const struct volumes *v, struct volumes_stats *out)
{
	memset(out, 0, sizeof(*out));
	if (v == NULL)
		return;
	*out = v->v_stats;
	out->objects = v->v_nentries;
	out->mounts = v->v_nmounts;
}
