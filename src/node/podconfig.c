/* podconfig.c — per-source pod sets merged into ADD/UPDATE/REMOVE/DELETE/RECONCILE, and
 * admission of new pods. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "core/json.h"
#include "core/log.h"
#include "logic/admit.h"
#include "core/strindex.h"
#include "node/podconfig.h"
#include "core/util.h"

struct pc_pod {
	const struct pod *p_pod; /* a reference; replaced (never written) on update */
	char             *p_source;
	char             *p_doc;
	size_t            p_doc_len;
	char             *p_format;
	uint64_t          p_spec_hash;
	uint64_t          p_status_hash;
	uint64_t          p_active_v; /* the c_active_version p_active was learnt at; 0: never */
	char             *p_reason;   /* rejection */
	char             *p_message;
	int               p_admitted;
	int               p_active; /* c_is_active's last answer */
	int               p_mark;   /* set_source: seen in the new set */
};

struct pc_source {
	char *s_name;
	int   s_ready;
};

struct podconfig {
	podconfig_fn  c_fn;
	void         *c_arg;
	char         *c_node;
	int           c_max_pods;
	struct kvlist c_labels;
	int (*c_is_active)(const char *, void *);
	void *c_is_active_arg;
	uint64_t (*c_active_version)(void *);
	void (*c_node_info)(struct admit_node *, void *);
	void             *c_node_info_arg;
	struct pc_pod   **c_pods;
	size_t            c_n;
	size_t            c_cap;
	struct strindex  *c_index; /* c_pods by UID */
	struct pc_source *c_sources;
	size_t            c_nsources;
	uint64_t          c_version; /* grows when a pod comes, goes or is replaced */
};

const char *
pod_op_name(enum pod_op op)
{
	static const char *names[] = { "ADD", "UPDATE", "REMOVE", "DELETE", "RECONCILE", "REJECT" };

	return (unsigned)op < nitems(names) ? names[op] : "?";
}

static uint64_t
pc_hash_value(uint64_t h, const char *tag, const struct json *v)
{
	char *s;

	h = fnv64(h, tag, strlen(tag) + 1);
	if (v == NULL)
		return fnv64(h, "", 1);
	s = json_to_string(v);
	h = fnv64(h, s, strlen(s) + 1);
	free(s);
	return h;
}

void
podconfig_json_hashes(const struct json *root, uint64_t *spec_hash, uint64_t *status_hash)
{
	const struct json *md, *ann;
	uint64_t           h = FNV64_INIT;
	size_t             i;

	md = json_get(root, "metadata");
	h = pc_hash_value(h, "labels", json_get(md, "labels"));
	ann = json_get(md, "annotations");
	h = fnv64(h, "annotations", 12);
	for (i = 0; i < json_len(ann); i++) {
		const char *k = json_key(ann, i);

		if (k == NULL || strcmp(k, "kubernetes.io/config.seen") == 0)
			continue;
		h = pc_hash_value(h, k, json_index(ann, i));
	}
	h = pc_hash_value(h, "deletionTimestamp", json_get(md, "deletionTimestamp"));
	h = pc_hash_value(
	    h, "deletionGracePeriodSeconds", json_get(md, "deletionGracePeriodSeconds"));
	h = pc_hash_value(h, "spec", json_get(root, "spec"));
	*spec_hash = h;
	*status_hash = pc_hash_value(FNV64_INIT, "status", json_get(root, "status"));
}

int
podconfig_doc_hashes(
    const char *doc, size_t len, const char *format, uint64_t *spec_hash, uint64_t *status_hash)
{
	struct json_doc *d;
	char             err[256];
	/* Every document that decoded into a pod parses again (an API pod can be 4 MiB). */
	const struct json_limits lim = { POD_MAX_DOC_BYTES, POD_MAX_DEPTH, POD_MAX_DOC_BYTES };

	if (format != NULL && strcmp(format, "yaml") == 0)
		d = json_parse_yaml(doc, len, &lim, err, sizeof(err));
	else
		d = json_parse(doc, len, &lim, err, sizeof(err));
	if (d == NULL)
		return -1;
	podconfig_json_hashes(json_root(d), spec_hash, status_hash);
	json_free(d);
	return 0;
}

struct podconfig *
podconfig_new(const struct podconfig_options *o, podconfig_fn fn, void *arg)
{
	struct podconfig *c = xcalloc(1, sizeof(*c));
	size_t            i;

	c->c_fn = fn;
	c->c_index = strindex_new();
	c->c_arg = arg;
	c->c_node = xstrdup(o->node_name);
	c->c_max_pods = o->max_pods;
	c->c_is_active = o->is_active;
	c->c_is_active_arg = o->is_active_arg;
	c->c_active_version = o->active_version;
	c->c_node_info = o->node_info;
	c->c_node_info_arg = o->node_info_arg;
	if (o->node_labels != NULL)
		for (i = 0; i < o->node_labels->n; i++)
			kvlist_set(
			    &c->c_labels, o->node_labels->items[i].k, o->node_labels->items[i].v);
	if (c->c_node != NULL && kvlist_get(&c->c_labels, "kubernetes.io/hostname") == NULL)
		kvlist_set(&c->c_labels, "kubernetes.io/hostname", c->c_node);
	if (kvlist_get(&c->c_labels, "kubernetes.io/os") == NULL)
		kvlist_set(&c->c_labels, "kubernetes.io/os", "linux");
	return c;
}

static void
pc_pod_free(struct pc_pod *p)
{
	if (p == NULL)
		return;
	pod_unref(p->p_pod);
	free(p->p_source);
	free(p->p_doc);
	free(p->p_format);
	free(p->p_reason);
	free(p->p_message);
	free(p);
}

void
podconfig_free(struct podconfig *c)
{
	size_t i;

	if (c == NULL)
		return;
	for (i = 0; i < c->c_n; i++)
		pc_pod_free(c->c_pods[i]);
	free(c->c_pods);
	strindex_free(c->c_index);
	for (i = 0; i < c->c_nsources; i++)
		free(c->c_sources[i].s_name);
	free(c->c_sources);
	kvlist_clear(&c->c_labels);
	free(c->c_node);
	free(c);
}

static struct pc_source *
pc_source(struct podconfig *c, const char *name)
{
	size_t i;

	for (i = 0; i < c->c_nsources; i++)
		if (strcmp(c->c_sources[i].s_name, name) == 0)
			return &c->c_sources[i];
	c->c_sources = xreallocarray(c->c_sources, c->c_nsources + 1, sizeof(*c->c_sources));
	c->c_sources[c->c_nsources].s_name = xstrdup(name);
	c->c_sources[c->c_nsources].s_ready = 0;
	return &c->c_sources[c->c_nsources++];
}

static const char *
pc_key(const void *arg, size_t i)
{
	const struct podconfig *c = arg;

	return c->c_pods[i]->p_pod->uid;
}

static struct pc_pod *
pc_find(const struct podconfig *c, const char *uid, size_t *idx)
{
	size_t i;

	if ((i = strindex_find(c->c_index, uid, pc_key, c)) == STRINDEX_NONE)
		return NULL;
	if (idx != NULL)
		*idx = i;
	return c->c_pods[i];
}

/* The kubelet's canAdmitPod (logic/admit.c) against the node as node_info describes it and
 * the pods already admitted that are still active. */
static int
pc_admit(
    struct podconfig *c, const struct pod *pod, const char *source, char **reason, char **message)
{
	struct admit_node  node;
	const struct pod **others;
	size_t             i, n = 0;
	uint64_t           v = 0;
	int                rc;
	char               err[256];

	/* Names that reach paths (the UID above all) must be in their API formats before
	 * anything is created for the pod. */
	if (pod_validate_names(pod, err, sizeof(err)) == -1) {
		*reason = xstrdup("FailedValidation");
		xasprintf(message, "Pod failed validation: %s", err);
		return -1;
	}
	others = xcalloc(c->c_n + 1, sizeof(*others));
	memset(&node, 0, sizeof(node));
	node.cpu_milli = node.memory = node.ephemeral = -1;
	node.pods = c->c_max_pods > 0 ? c->c_max_pods : -1;
	if (c->c_node_info != NULL)
		c->c_node_info(&node, c->c_node_info_arg);
	node.name = c->c_node;
	node.labels = &c->c_labels;
	if (c->c_is_active != NULL && c->c_active_version != NULL)
		v = c->c_active_version(c->c_is_active_arg);
	for (i = 0; i < c->c_n; i++) {
		struct pc_pod *p = c->c_pods[i];

		if (!p->p_admitted || p->p_pod == pod)
			continue;
		if (c->c_is_active != NULL) {
			if (v == 0 || p->p_active_v != v) {
				p->p_active = c->c_is_active(p->p_pod->uid, c->c_is_active_arg);
				p->p_active_v = v;
			}
			if (!p->p_active)
				continue;
		}
		others[n++] = p->p_pod;
	}
	rc = admit_pod(
	    &node, pod, source != NULL && strcmp(source, "api") != 0, others, n, reason, message);
	free(others);
	return rc;
}

static void
pc_emit(struct podconfig *c, enum pod_op op, const struct pc_pod *p)
{
	log_v(2, "pod update %s pod=%s/%s uid=%s source=%s", pod_op_name(op), p->p_pod->ns,
	    p->p_pod->name, p->p_pod->uid, p->p_source);
	if (c->c_fn != NULL)
		c->c_fn(op, p->p_pod, p->p_source, c->c_arg);
}

static void
pc_item_clear(struct podconfig_item *it)
{
	pod_unref(it->pod);
	it->pod = NULL;
}

/* Takes over it->pod and returns the pod podconfig keeps: it, with the local annotations
 * seen (kubernetes.io/config.seen) and source (kubernetes.io/config.source) set where they
 * are not NULL and differ. They are written before the pod is shared: in place while the
 * item's reference is the only one, else (the file source keeps a reference to its pods)
 * into a pod decoded again from the item's document, so a shared pod is never written. */
static const struct pod *
pc_annotate(struct podconfig_item *it, const char *seen, const char *source)
{
	const struct pod *pod = it->pod;
	struct pod       *w;
	char              err[256];

	it->pod = NULL;
	if ((seen == NULL ||
	        streq_null(kvlist_get(&pod->annotations, "kubernetes.io/config.seen"), seen)) &&
	    (source == NULL ||
	        streq_null(kvlist_get(&pod->annotations, "kubernetes.io/config.source"), source)))
		return pod;
	if ((w = pod_exclusive(pod)) == NULL) {
		if (it->doc != NULL && it->format != NULL && strcmp(it->format, "yaml") == 0)
			w = pod_from_yaml(it->doc, it->doc_len, err, sizeof(err));
		else if (it->doc != NULL)
			w = pod_from_json(it->doc, it->doc_len, err, sizeof(err));
		else
			snprintf(err, sizeof(err), "no document");
		if (w == NULL || !streq_null(w->uid, pod->uid)) {
			log_warnx("pod %s/%s uid=%s: cannot annotate: %s", pod->ns, pod->name,
			    pod->uid, w == NULL ? err : "document of another pod");
			pod_unref(w);
			return pod;
		}
		pod_unref(pod);
	}
	if (seen != NULL)
		kvlist_set(&w->annotations, "kubernetes.io/config.seen", seen);
	if (source != NULL)
		kvlist_set(&w->annotations, "kubernetes.io/config.source", source);
	return w;
}

/* Adds or updates one pod. Returns the entry (now owned by c), or NULL if dropped. */
static struct pc_pod *
pc_upsert(struct podconfig *c, const char *source, struct podconfig_item *it)
{
	const struct pod *pod = it->pod;
	struct pc_pod    *p;
	uint64_t          sh = 0, st = 0;
	char              seen[64];

	if (pod == NULL)
		return NULL;
	if (pod->uid == NULL || *pod->uid == '\0') {
		log_warnx("source %s: pod %s/%s has no UID; ignored", source,
		    pod->ns != NULL ? pod->ns : "", pod->name != NULL ? pod->name : "");
		pc_item_clear(it);
		return NULL;
	}
	if ((p = pc_find(c, pod->uid, NULL)) != NULL && it->doc != NULL && p->p_doc != NULL &&
	    it->doc_len == p->p_doc_len && streq_null(it->format, p->p_format) &&
	    strcmp(p->p_source, source) == 0 && memcmp(it->doc, p->p_doc, it->doc_len) == 0) {
		/* The very document it has (a rescan, a relist): unchanged, nothing to hash. */
		p->p_mark = 1;
		pc_item_clear(it);
		return p;
	}
	if (it->hashed) {
		sh = it->spec_hash;
		st = it->status_hash;
	} else if (it->doc != NULL &&
	    podconfig_doc_hashes(it->doc, it->doc_len, it->format, &sh, &st) == -1) {
		log_warnx(
		    "source %s: pod %s: document does not parse again; ignored", source, pod->uid);
		pc_item_clear(it);
		return NULL;
	}
	if (p != NULL) {
		const char *old_seen;
		int         spec_changed, status_changed, deleting;

		if (strcmp(p->p_source, source) != 0) {
			log_warnx("pod %s/%s uid=%s from source %s is already given by %s; ignored",
			    pod->ns, pod->name, pod->uid, source, p->p_source);
			pc_item_clear(it);
			return NULL;
		}
		spec_changed = sh != p->p_spec_hash;
		status_changed = st != p->p_status_hash;
		deleting = p->p_pod->deletion_ts == 0 && pod->deletion_ts != 0;
		p->p_mark = 1;
		if (!spec_changed && !status_changed) {
			pc_item_clear(it);
			return p;
		}
		/* Keep the local annotation of the first sighting. */
		old_seen = kvlist_get(&p->p_pod->annotations, "kubernetes.io/config.seen");
		pod = pc_annotate(it, old_seen, NULL);
		pod_unref(p->p_pod);
		p->p_pod = pod;
		free(p->p_doc);
		p->p_doc = it->doc != NULL ? xstrndup(it->doc, it->doc_len) : NULL;
		p->p_doc_len = it->doc != NULL ? it->doc_len : 0;
		free(p->p_format);
		p->p_format = xstrdup(it->format);
		p->p_spec_hash = sh;
		p->p_status_hash = st;
		c->c_version++;
		if (!p->p_admitted)
			return p; /* rejected pods stay rejected */
		if (deleting)
			pc_emit(c, POD_OP_DELETE, p);
		else if (spec_changed)
			pc_emit(c, POD_OP_UPDATE, p);
		else
			pc_emit(c, POD_OP_RECONCILE, p);
		return p;
	}
	p = xcalloc(1, sizeof(*p));
	p->p_source = xstrdup(source);
	p->p_doc = it->doc != NULL ? xstrndup(it->doc, it->doc_len) : NULL;
	p->p_doc_len = it->doc != NULL ? it->doc_len : 0;
	p->p_format = xstrdup(it->format);
	p->p_spec_hash = sh;
	p->p_status_hash = st;
	p->p_mark = 1;
	seen[0] = '\0';
	if (kvlist_get(&pod->annotations, "kubernetes.io/config.seen") == NULL) {
		struct timespec ts;
		struct tm       tm;

		clock_gettime(CLOCK_REALTIME, &ts);
		gmtime_r(&ts.tv_sec, &tm);
		snprintf(seen, sizeof(seen), "%04d-%02d-%02dT%02d:%02d:%02d.%09ldZ",
		    tm.tm_year + 1900, tm.tm_mon + 1, tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec,
		    ts.tv_nsec);
	}
	pod = p->p_pod = pc_annotate(it, seen[0] != '\0' ? seen : NULL, source);
	p->p_admitted = pc_admit(c, pod, source, &p->p_reason, &p->p_message) == 0;
	if (c->c_n == c->c_cap) {
		c->c_cap = c->c_cap == 0 ? 32 : c->c_cap * 2;
		c->c_pods = xreallocarray(c->c_pods, c->c_cap, sizeof(*c->c_pods));
	}
	c->c_pods[c->c_n++] = p;
	strindex_add(c->c_index, pod->uid, c->c_n - 1);
	c->c_version++;
	if (!p->p_admitted) {
		log_warnx("pod %s/%s uid=%s rejected: %s: %s", pod->ns, pod->name, pod->uid,
		    p->p_reason, p->p_message);
		pc_emit(c, POD_OP_REJECT, p);
	} else {
		pc_emit(c, POD_OP_ADD, p);
	}
	return p;
}

static void
pc_remove_at(struct podconfig *c, size_t i)
{
	struct pc_pod *p = c->c_pods[i];

	/* Keep the order of the rest: admission and listings follow arrival order. */
	memmove(&c->c_pods[i], &c->c_pods[i + 1], (c->c_n - i - 1) * sizeof(*c->c_pods));
	c->c_n--;
	c->c_version++;
	strindex_reset(c->c_index); /* positions moved */
	for (i = 0; i < c->c_n; i++)
		strindex_add(c->c_index, c->c_pods[i]->p_pod->uid, i);
	pc_emit(c, POD_OP_REMOVE, p);
	pc_pod_free(p);
}

static const char *
pc_item_key(const void *arg, size_t i)
{
	const struct podconfig_item *items = arg;

	return items[i].pod->uid;
}

void
podconfig_set_source_begin(
    struct podconfig *c, const char *source, struct podconfig_item *items, size_t n)
{
	struct strindex *seen; /* UIDs of items, to find one given twice */
	size_t           i;

	pc_source(c, source);
	for (i = 0; i < c->c_n; i++)
		c->c_pods[i]->p_mark = 0;
	seen = strindex_new();
	/* Removals first, so a re-scan that swaps a manifest (new UID, same name) frees the
	 * name before the new pod is added. */
	for (i = 0; i < n; i++) {
		struct pc_pod *p;

		if (items[i].pod == NULL || items[i].pod->uid == NULL)
			continue;
		if (strindex_find(seen, items[i].pod->uid, pc_item_key, items) != STRINDEX_NONE) {
			log_warnx("source %s: pod uid=%s given twice; the first one wins", source,
			    items[i].pod->uid);
			pc_item_clear(&items[i]);
			continue;
		}
		strindex_add(seen, items[i].pod->uid, i);
		if ((p = pc_find(c, items[i].pod->uid, NULL)) != NULL &&
		    strcmp(p->p_source, source) == 0)
			p->p_mark = 1;
	}
	strindex_free(seen);
	i = 0;
	while (i < c->c_n) {
		if (strcmp(c->c_pods[i]->p_source, source) == 0 && !c->c_pods[i]->p_mark) {
			pc_remove_at(c, i);
			continue;
		}
		i++;
	}
}

void
podconfig_set_source(
    struct podconfig *c, const char *source, struct podconfig_item *items, size_t n)
{
	size_t i;

	pc_source(c, source)->s_ready = 1;
	podconfig_set_source_begin(c, source, items, n);
	for (i = 0; i < n; i++)
		pc_upsert(c, source, &items[i]);
}

void
podconfig_upsert(struct podconfig *c, const char *source, struct podconfig_item *item)
{
	pc_source(c, source);
	pc_upsert(c, source, item);
}

void
podconfig_remove(struct podconfig *c, const char *source, const char *uid)
{
	size_t         i;
	struct pc_pod *p = pc_find(c, uid, &i);

	if (p == NULL || strcmp(p->p_source, source) != 0)
		return;
	pc_remove_at(c, i);
}

void
podconfig_add_source(struct podconfig *c, const char *source)
{
	pc_source(c, source);
}

void
podconfig_source_ready(struct podconfig *c, const char *source)
{
	pc_source(c, source)->s_ready = 1;
}

int
podconfig_sources_ready(const struct podconfig *c)
{
	size_t i;

	for (i = 0; i < c->c_nsources; i++)
		if (!c->c_sources[i].s_ready)
			return 0;
	return 1;
}

const struct pod *
podconfig_get(const struct podconfig *c, const char *uid)
{
	struct pc_pod *p = pc_find(c, uid, NULL);

	return p != NULL ? p->p_pod : NULL;
}

int
podconfig_wanted(const struct podconfig *c, const char *uid)
{
	struct pc_pod *p = pc_find(c, uid, NULL);

	return p != NULL && p->p_admitted;
}

const char *
podconfig_doc(const struct podconfig *c, const char *uid, size_t *len, const char **format,
    const char **source)
{
	struct pc_pod *p = pc_find(c, uid, NULL);

	if (p == NULL)
		return NULL;
	if (len != NULL)
		*len = p->p_doc_len;
	if (format != NULL)
		*format = p->p_format;
	if (source != NULL)
		*source = p->p_source;
	return p->p_doc;
}

int
podconfig_rejection(
    const struct podconfig *c, const char *uid, const char **reason, const char **message)
{
	struct pc_pod *p = pc_find(c, uid, NULL);

	if (p == NULL || p->p_admitted)
		return -1;
	if (reason != NULL)
		*reason = p->p_reason;
	if (message != NULL)
		*message = p->p_message;
	return 0;
}

void
podconfig_foreach(
    const struct podconfig *c, void (*cb)(const struct pod *, const char *, int, void *), void *arg)
{
	size_t i;

	for (i = 0; i < c->c_n; i++)
		cb(c->c_pods[i]->p_pod, c->c_pods[i]->p_source, c->c_pods[i]->p_admitted, arg);
}

size_t
podconfig_count(const struct podconfig *c)
{
	return c->c_n;
}

uint64_t
podconfig_version(const struct podconfig *c)
{
	return c->c_version;
}
