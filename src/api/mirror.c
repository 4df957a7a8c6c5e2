/* mirror.c — mirror pods of the static pods (see mirror.h). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api/api.h"
#include "api/mirror.h"
#include "api/node.h"
#include "api/watch.h"
#include "core/json.h"
#include "core/log.h"
#include "core/util.h"
#include "node/podconfig.h"
#include "pod/pod.h"

struct mirror {
	struct api       *mi_api;
	struct watch     *mi_watch;
	struct podconfig *mi_pc;
	struct node      *mi_node;
	char             *mi_node_name;
	struct api_call  *mi_call;     /* one create or delete at a time */
	char             *mi_conflict; /* ns/name that exists but is not seen yet */
	int64_t           mi_conflict_ms;
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
	if (r->status == 409 && strcmp(r->reason, "AlreadyExists") == 0) {
		/* There, but the watch has not shown it yet (e.g. resumed without a list). */
		mi->mi_conflict_ms = now_mono_ms();
		return;
	}
	if (r->status >= 300 && r->status != 404)
		log_warnx("mirror pod: %d %s", r->status, r->message);
}

struct mirror_scan {
	struct mirror *mi;
	int            acted;
};

static void
mirror_static(const struct pod *pod, const char *source, int admitted, void *arg)
{
	struct mirror_scan *ms = arg;
	struct mirror      *mi = ms->mi;
	const struct pod   *m;
	const char         *hash;
	char               *body, *path, *key;

	if (ms->acted || source == NULL || strcmp(source, "file") != 0 || !admitted ||
	    pod->deletion_ts != 0)
		return;
	m = watch_mirror(mi->mi_watch, pod->ns, pod->name);
	hash = m ? kvlist_get(&m->annotations, MIRROR_ANNOTATION) : NULL;
	if (m != NULL && hash != NULL && strcmp(hash, pod->uid) == 0)
		return;
	ms->acted = 1;
	if (m != NULL) {
		/* An outdated mirror (the static pod changed): delete it; recreated next pass. */
		path = xsprintf("/api/v1/namespaces/%s/pods/%s", m->ns, m->name);
		body = api_delete_options(0, m->uid);
		log_info("mirror pod %s/%s is outdated: deleting it", m->ns, m->name);
		mi->mi_call = api_request(mi->mi_api, "DELETE", path, "application/json", body,
		    strlen(body), 0, mirror_done, mi);
		free(path);
		free(body);
		return;
	}
	key = xsprintf("%s/%s", pod->ns, pod->name);
	if (streq_null(key, mi->mi_conflict) && now_mono_ms() - mi->mi_conflict_ms < 30000) {
		free(key);
		ms->acted = 0;
		return;
	}
	free(mi->mi_conflict);
	mi->mi_conflict = key;
	mi->mi_conflict_ms = 0;
	body = mirror_body(mi, pod);
	if (body == NULL) {
		ms->acted = 0;
		return;
	}
	path = xsprintf("/api/v1/namespaces/%s/pods", pod->ns);
	log_info("creating mirror pod %s/%s", pod->ns, pod->name);
	mi->mi_call = api_request(
	    mi->mi_api, "POST", path, "application/json", body, strlen(body), 0, mirror_done, mi);
	free(path);
	free(body);
}

static void
mirror_orphan(const struct pod *m, void *arg)
{
	struct mirror_scan *ms = arg;
	struct mirror      *mi = ms->mi;
	const char         *hash = kvlist_get(&m->annotations, MIRROR_ANNOTATION);
	const struct pod   *sp;
	char               *path, *body;

	if (ms->acted || m->deletion_ts != 0)
		return;
	sp = hash != NULL ? podconfig_get(mi->mi_pc, hash) : NULL;
	if (sp != NULL && podconfig_wanted(mi->mi_pc, hash))
		return;
	ms->acted = 1;
	path = xsprintf("/api/v1/namespaces/%s/pods/%s", m->ns, m->name);
	body = api_delete_options(0, m->uid);
	log_info("mirror pod %s/%s has no static pod: deleting it", m->ns, m->name);
	mi->mi_call = api_request(
	    mi->mi_api, "DELETE", path, "application/json", body, strlen(body), 0, mirror_done, mi);
	free(path);
	free(body);
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
	free(mi->mi_conflict);
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
