/* mirror.c — mirror pods of the static pods (see mirror.h). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "client/api.h"
#include "api/mirror.h"
#include "api/node.h"
#include "api/watch.h"
#include "core/json.h"
#include "core/log.h"
#include "core/util.h"
#include "node/podconfig.h"
#include "pod/pod.h"
#include "pod/rfc3339.h"

struct mirror {
	struct api       *mi_api;
	struct watch     *mi_watch;
	struct podconfig *mi_pc;
	struct node      *mi_node;
	char             *mi_node_name;
	struct api_call  *mi_call; /* one lookup, create or delete at a time */
	char             *mi_key;  /* ns/name looked up or created last */
	/* Names not looked up again before their time (a pod that is not a mirror holds the
	 * name, or the server failed): ns/name and monotonic ms. */
	char   **mi_holds;
	int64_t *mi_hold_until;
	size_t   mi_nholds;
	char    *mi_pending; /* the static pod (UID) whose mirror is looked up */
};

/* The mirror of a static pod: its labels, annotations (plus config.mirror = its hash) and
 * spec, on this node, owned by the Node. Returns the body (caller frees) or NULL. */
static char *
mirror_body(struct mirror *mi, const struct pod *pod)
{
	const char        *doc, *fmt = NULL, *nuid = node_uid(mi->mi_node);
	const struct json *root, *md, *spec, *v;
	struct json_doc   *jd;
	char               err[128], *out;
	size_t             len = 0, i;
	yajl_gen           g;

	doc = podconfig_doc(mi->mi_pc, pod->uid, &len, &fmt, NULL);
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
	json_gen_kv_str(g, "name", mi->mi_node_name);
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
	json_gen_kv_str(g, "nodeName", mi->mi_node_name);
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
	struct mirror *mi = arg;

	mi->mi_call = NULL;
	if (r->status >= 300 && r->status != 404)
		log_warnx("mirror pod: %d %s", r->status, r->message);
}

/* Waits 30 s before looking up ns/name again (a pod that is not a mirror holds the name, or
 * the server failed). */
static void
mirror_hold(struct mirror *mi)
{
	mi->mi_holds = xreallocarray(mi->mi_holds, mi->mi_nholds + 1, sizeof(*mi->mi_holds));
	mi->mi_hold_until =
	    xreallocarray(mi->mi_hold_until, mi->mi_nholds + 1, sizeof(*mi->mi_hold_until));
	mi->mi_holds[mi->mi_nholds] = xstrdup(mi->mi_key);
	mi->mi_hold_until[mi->mi_nholds++] = now_mono_ms() + 30000;
}

/* 1 while key is held; expired holds are dropped. */
static int
mirror_held(struct mirror *mi, const char *key)
{
	int64_t now = now_mono_ms();
	size_t  i;
	int     held = 0;

	for (i = 0; i < mi->mi_nholds;) {
		if (now >= mi->mi_hold_until[i]) {
			free(mi->mi_holds[i]);
			mi->mi_nholds--;
			mi->mi_holds[i] = mi->mi_holds[mi->mi_nholds];
			mi->mi_hold_until[i] = mi->mi_hold_until[mi->mi_nholds];
			continue;
		}
		if (strcmp(mi->mi_holds[i], key) == 0)
			held = 1;
		i++;
	}
	return held;
}

/* A mirror pod the server answered with (a GET or the POST that created it): the watch
 * keeps it until its events take over. Returns 0, or -1 when the body is not a mirror pod
 * (logged). */
static int
mirror_take(struct mirror *mi, const struct api_response *r, const char *how)
{
	char        err[256];
	struct pod *m = pod_from_json(r->body, r->len, err, sizeof(err));
	const char *hash = m != NULL ? kvlist_get(&m->annotations, MIRROR_ANNOTATION) : NULL;

	if (m == NULL || m->uid == NULL) {
		log_warnx("mirror pod %s: %s: cannot decode: %s", mi->mi_key, how,
		    m ? "no metadata.uid" : err);
		pod_unref(m);
		return -1;
	}
	if (hash == NULL) {
		log_warnx("mirror pod %s: a pod that is not a mirror pod has its name (uid %s): "
		          "not replacing it",
		    mi->mi_key, m->uid);
		pod_unref(m);
		return -1;
	}
	log_info("mirror pod %s: %s uid=%s (of static pod %s)", mi->mi_key, how, m->uid, hash);
	watch_mirror_adopt(mi->mi_watch, m);
	return 0;
}

static void
mirror_post_done(const struct api_response *r, void *arg)
{
	struct mirror *mi = arg;

	mi->mi_call = NULL;
	if (r->status == 201 || r->status == 200) {
		if (mirror_take(mi, r, "created") == -1)
			mirror_hold(mi);
		return;
	}
	if (r->status == 409 && strcmp(r->reason, "AlreadyExists") == 0) {
		/* Created meanwhile (another kletd of this node?): look it up next pass. */
		log_info("mirror pod %s already exists: looking it up", mi->mi_key);
		return;
	}
	log_warnx("mirror pod %s: create: %d %s", mi->mi_key, r->status, r->message);
	mirror_hold(mi);
}

static void
mirror_create(struct mirror *mi, const struct pod *pod)
{
	char *body = mirror_body(mi, pod), *path;

	if (body == NULL)
		return;
	path = xsprintf("/api/v1/namespaces/%s/pods", pod->ns);
	log_info("creating mirror pod %s/%s", pod->ns, pod->name);
	mi->mi_call = api_request(mi->mi_api, "POST", path, "application/json", body, strlen(body),
	    0, mirror_post_done, mi);
	free(path);
	free(body);
}

/* The answer to the lookup of a static pod's mirror by name (mi_key, for static pod
 * mi_pending): adopted when found (the next pass keeps it, or replaces an outdated one),
 * created when absent, as the kubelet's mirror client and pod manager do. */
static void
mirror_get_done(const struct api_response *r, void *arg)
{
	struct mirror    *mi = arg;
	const struct pod *sp;

	mi->mi_call = NULL;
	if (r->status == 200) {
		if (mirror_take(mi, r, "found") == -1)
			mirror_hold(mi);
		return;
	}
	if (r->status != 404) {
		log_warnx("mirror pod %s: lookup: %d %s", mi->mi_key, r->status, r->message);
		mirror_hold(mi);
		return;
	}
	sp = mi->mi_pending != NULL ? podconfig_get(mi->mi_pc, mi->mi_pending) : NULL;
	if (sp != NULL && podconfig_wanted(mi->mi_pc, mi->mi_pending) && sp->deletion_ts == 0)
		mirror_create(mi, sp);
}

struct mirror_scan {
	struct mirror *mi;
	int            acted;
};

static void
mirror_delete(struct mirror *mi, const struct pod *m, const char *why)
{
	char *path = xsprintf("/api/v1/namespaces/%s/pods/%s", m->ns, m->name);
	char *body = api_delete_options(0, m->uid);

	log_info("mirror pod %s/%s %s: deleting it", m->ns, m->name, why);
	mi->mi_call = api_request(
	    mi->mi_api, "DELETE", path, "application/json", body, strlen(body), 0, mirror_done, mi);
	free(path);
	free(body);
}

static void
mirror_static(const struct pod *pod, const char *source, int admitted, void *arg)
{
	struct mirror_scan *ms = arg;
	struct mirror      *mi = ms->mi;
	const struct pod   *m;
	const char         *hash;
	char               *path, *key;

	if (ms->acted || source == NULL || strcmp(source, "file") != 0 || !admitted ||
	    pod->deletion_ts != 0)
		return;
	m = watch_mirror(mi->mi_watch, pod->ns, pod->name);
	hash = m ? kvlist_get(&m->annotations, MIRROR_ANNOTATION) : NULL;
	if (m != NULL && hash != NULL && strcmp(hash, pod->uid) == 0 && m->deletion_ts == 0)
		return;
	if (m != NULL) {
		/* Outdated (the static pod changed) or being deleted: deleted now, created again
		 * once the watch has shown it gone. */
		ms->acted = 1;
		mirror_delete(mi, m, m->deletion_ts != 0 ? "is being deleted" : "is outdated");
		return;
	}
	key = xsprintf("%s/%s", pod->ns, pod->name);
	if (mirror_held(mi, key)) {
		free(key);
		return;
	}
	/* Not seen (a resumed watch shows only what changed since): look it up by name. */
	ms->acted = 1;
	free(mi->mi_key);
	mi->mi_key = key;
	free(mi->mi_pending);
	mi->mi_pending = xstrdup(pod->uid);
	path = xsprintf("/api/v1/namespaces/%s/pods/%s", pod->ns, pod->name);
	mi->mi_call = api_request(mi->mi_api, "GET", path, NULL, NULL, 0, 0, mirror_get_done, mi);
	free(path);
}

static void
mirror_orphan(const struct pod *m, void *arg)
{
	struct mirror_scan *ms = arg;
	struct mirror      *mi = ms->mi;
	const char         *hash = kvlist_get(&m->annotations, MIRROR_ANNOTATION);
	const struct pod   *sp;

	if (ms->acted || m->deletion_ts != 0)
		return;
	sp = hash != NULL ? podconfig_get(mi->mi_pc, hash) : NULL;
	if (sp != NULL && podconfig_wanted(mi->mi_pc, hash))
		return;
	ms->acted = 1;
	mirror_delete(mi, m, "has no static pod");
}

void
mirror_pass(struct mirror *mi)
{
	struct mirror_scan ms = { mi, 0 };

	if (mi->mi_call != NULL || !watch_synced(mi->mi_watch) || node_uid(mi->mi_node) == NULL)
		return;
	podconfig_foreach(mi->mi_pc, mirror_static, &ms);
	if (!ms.acted)
		watch_foreach_mirror(mi->mi_watch, mirror_orphan, &ms);
}

struct mirror *
mirror_new(const struct mirror_deps *d)
{
	struct mirror *mi = xcalloc(1, sizeof(*mi));

	mi->mi_api = d->api;
	mi->mi_watch = d->watch;
	mi->mi_pc = d->pc;
	mi->mi_node = d->node;
	mi->mi_node_name = xstrdup(d->node_name);
	return mi;
}

void
mirror_free(struct mirror *mi)
{
	if (mi == NULL)
		return;
	api_call_cancel(mi->mi_call);
	free(mi->mi_key);
	while (mi->mi_nholds > 0)
		free(mi->mi_holds[--mi->mi_nholds]);
	free(mi->mi_holds);
	free(mi->mi_hold_until);
	free(mi->mi_pending);
	free(mi->mi_node_name);
	free(mi);
}

const struct pod *
mirror_of(const struct mirror *mi, const struct pod *sp)
{
	const struct pod *m = watch_mirror(mi->mi_watch, sp->ns, sp->name);
	const char       *hash = m ? kvlist_get(&m->annotations, MIRROR_ANNOTATION) : NULL;

	if (m == NULL || hash == NULL || strcmp(hash, sp->uid) != 0)
		return NULL;
	return m;
}
