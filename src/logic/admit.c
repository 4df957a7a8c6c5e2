/* admit.c — see admit.h. The predicates follow the kubelet's lifecycle/predicate.go and the
 * scheduler plugins it calls (noderesources fit, nodeaffinity, nodename, nodeports,
 * tainttoleration) and the eviction manager's Admit. */
#include <stdlib.h>
#include <string.h>

#include "core/util.h"
#include "logic/admit.h"
#include "logic/podstatus.h"
#include "logic/qos.h"

#define ADMIT_CRITICAL_PRIORITY 2000000000 /* scheduling.SystemCriticalPriority */

int
admit_pod_is_critical(const struct pod *p, int is_static)
{
	const char *src = kvlist_get(&p->annotations, "kubernetes.io/config.source");

	if (is_static || (src != NULL && strcmp(src, "api") != 0))
		return 1;
	if (kvlist_get(&p->annotations, "kubernetes.io/config.mirror") != NULL)
		return 1;
	return p->priority >= ADMIT_CRITICAL_PRIORITY;
}

static int
admit_strv_has(const struct strv *sv, const char *s)
{
	size_t i;

	for (i = 0; i < sv->n; i++)
		if (strcmp(sv->v[i], s) == 0)
			return 1;
	return 0;
}

static int
admit_parse_int(const char *s, long long *out)
{
	char *end;

	if (s == NULL || *s == '\0')
		return -1;
	*out = strtoll(s, &end, 10);
	return *end == '\0' ? 0 : -1;
}

/* One requirement against a value (NULL: the label is absent). */
static int
admit_requirement_matches(const struct ns_requirement *r, const char *have)
{
	long long a, b;

	switch (r->op) {
	case NS_IN:
		return have != NULL && admit_strv_has(&r->values, have);
	case NS_NOT_IN:
		return have == NULL || !admit_strv_has(&r->values, have);
	case NS_EXISTS:
		return have != NULL;
	case NS_DOES_NOT_EXIST:
		return have == NULL;
	case NS_GT:
	case NS_LT:
		if (have == NULL || r->values.n != 1 || admit_parse_int(have, &a) < 0 ||
		    admit_parse_int(r->values.v[0], &b) < 0)
			return 0;
		return r->op == NS_GT ? a > b : a < b;
	}
	return 0;
}

/* A term matches when all its requirements do; an empty term matches nothing. */
static int
admit_term_matches(const struct ns_term *t, const struct admit_node *node)
{
	size_t i;

	if (t->nexprs == 0 && t->nfields == 0)
		return 0;
	for (i = 0; i < t->nexprs; i++) {
		const char *have =
		    node->labels != NULL ? kvlist_get(node->labels, t->exprs[i].key) : NULL;

		if (!admit_requirement_matches(&t->exprs[i], have))
			return 0;
	}
	for (i = 0; i < t->nfields; i++) {
		const char *have =
		    strcmp(t->fields[i].key, "metadata.name") == 0 ? node->name : NULL;

		if (!admit_requirement_matches(&t->fields[i], have))
			return 0;
	}
	return 1;
}

int
admit_node_affinity_matches(const struct pod *p, const struct admit_node *node)
{
	size_t i;

	for (i = 0; i < p->node_selector.n; i++) {
		const struct kv *kv = &p->node_selector.items[i];
		const char *have = node->labels != NULL ? kvlist_get(node->labels, kv->k) : NULL;

		if (have == NULL || !streq_null(have, kv->v != NULL ? kv->v : ""))
			return 0;
	}
	if (p->node_affinity == NULL)
		return 1;
	for (i = 0; i < p->node_affinity->nterms; i++)
		if (admit_term_matches(&p->node_affinity->terms[i], node))
			return 1;
	return 0;
}

/* The eviction manager's Admit: under MemoryPressure alone only BestEffort pods are refused
 * (unless they tolerate the memory-pressure taint); under any other pressure, every pod;
 * critical pods always pass. */
static int
admit_pressure(const struct admit_node *node, const struct pod *p, int is_static, char **reason,
    char **message)
{
	char conds[64] = "";

	if (node->pressure == 0 || admit_pod_is_critical(p, is_static))
		return 0;
	if (node->pressure == ADMIT_MEMORY_PRESSURE) {
		size_t i;

		if (pod_qos_class(p) != QOS_BEST_EFFORT)
			return 0;
		for (i = 0; i < p->ntolerations; i++) {
			const struct toleration *t = &p->tolerations[i];

			if (streq_null(t->key, "node.kubernetes.io/memory-pressure") &&
			    (t->effect == NULL || *t->effect == '\0' ||
			        strcmp(t->effect, "NoSchedule") == 0))
				return 0;
		}
	}
	if (node->pressure & ADMIT_MEMORY_PRESSURE)
		strcat(conds, "MemoryPressure");
	if (node->pressure & ADMIT_DISK_PRESSURE)
		strcat(conds, *conds != '\0' ? " DiskPressure" : "DiskPressure");
	if (node->pressure & ADMIT_PID_PRESSURE)
		strcat(conds, *conds != '\0' ? " PIDPressure" : "PIDPressure");
	*reason = xstrdup("Evicted");
	xasprintf(message, "The node had condition: [%s]. ", conds);
	return -1;
}

static int
admit_insufficient(const char *resource, int64_t requested, int64_t used, int64_t capacity,
    char **reason, char **message)
{
	*reason = xsprintf("OutOf%s", resource);
	xasprintf(message,
	    "Node didn't have enough resource: %s, requested: %lld, used: %lld, "
	    "capacity: %lld",
	    resource, (long long)requested, (long long)used, (long long)capacity);
	return -1;
}

/* Requested against allocatable minus what the admitted pods request. Milli units in,
 * the kubelet's units out: millicores for cpu, bytes and counts for the rest. */
static int
admit_fits_one(const char *resource, int64_t alloc, const struct pod *p,
    const struct pod *const *others, size_t n, int milli_out, char **reason, char **message)
{
	int64_t want = qos_pod_request(p, resource), used = 0;
	size_t  i;

	if (alloc < 0 || want <= 0)
		return 0;
	for (i = 0; i < n; i++)
		used += qos_pod_request(others[i], resource);
	if (!milli_out) {
		want = (want + 999) / 1000;
		used = (used + 999) / 1000;
	}
	if (want > alloc - used)
		return admit_insufficient(resource, want, used, alloc, reason, message);
	return 0;
}

/* noderesources.Fits: pods, cpu, memory, ephemeral-storage, then the extended resources the
 * node has (requests of ones it lacks are dropped, as the kubelet does for cluster-level
 * resources). */
static int
admit_resources(const struct admit_node *node, const struct pod *p, const struct pod *const *others,
    size_t n, char **reason, char **message)
{
	size_t i;

	if (node->pods >= 0 && (int64_t)n + 1 > node->pods)
		return admit_insufficient("pods", 1, (int64_t)n, node->pods, reason, message);
	if (admit_fits_one("cpu", node->cpu_milli, p, others, n, 1, reason, message) < 0 ||
	    admit_fits_one("memory", node->memory, p, others, n, 0, reason, message) < 0 ||
	    admit_fits_one("ephemeral-storage", node->ephemeral, p, others, n, 0, reason, message) <
	        0)
		return -1;
	if (node->extended == NULL)
		return 0;
	for (i = 0; i < node->extended->n; i++) {
		const struct quantity *q = &node->extended->items[i];

		if (strcmp(q->name, "cpu") == 0 || strcmp(q->name, "memory") == 0 ||
		    strcmp(q->name, "ephemeral-storage") == 0 || strcmp(q->name, "pods") == 0)
			continue;
		if (admit_fits_one(q->name, q->milli / 1000, p, others, n, 0, reason, message) < 0)
			return -1;
	}
	return 0;
}

static int
admit_ip_any(const char *ip)
{
	return ip == NULL || *ip == '\0' || strcmp(ip, "0.0.0.0") == 0 || strcmp(ip, "::") == 0;
}

static int
admit_port_clash(const struct container_port *a, const struct container_port *b)
{
	if (a->host_port <= 0 || b->host_port != a->host_port || a->protocol != b->protocol)
		return 0;
	return admit_ip_any(a->host_ip) || admit_ip_any(b->host_ip) ||
	    strcmp(a->host_ip, b->host_ip) == 0;
}

static int
admit_pod_clashes(const struct pod *p, const struct container_port *want)
{
	size_t i, j;

	for (i = 0; i < p->ncontainers + p->ninit_containers; i++) {
		const struct container *c = i < p->ncontainers
		    ? &p->containers[i]
		    : &p->init_containers[i - p->ncontainers];

		for (j = 0; j < c->c_nports; j++)
			if (admit_port_clash(&c->c_ports[j], want))
				return 1;
	}
	return 0;
}

/* nodeports: a hostPort (protocol and hostIP aware) already used by an admitted pod. */
static int
admit_host_ports(const struct pod *p, const struct pod *const *others, size_t n)
{
	size_t i, j, k;

	for (i = 0; i < p->ncontainers + p->ninit_containers; i++) {
		const struct container *c = i < p->ncontainers
		    ? &p->containers[i]
		    : &p->init_containers[i - p->ncontainers];

		for (j = 0; j < c->c_nports; j++) {
			if (c->c_ports[j].host_port <= 0)
				continue;
			for (k = 0; k < n; k++)
				if (admit_pod_clashes(others[k], &c->c_ports[j]))
					return 0;
		}
	}
	return 1;
}

static int
admit_tolerates(const struct toleration *t, const struct admit_taint *taint)
{
	if (t->effect != NULL && *t->effect != '\0' && !streq_null(t->effect, taint->effect))
		return 0;
	if (t->key != NULL && *t->key != '\0' && !streq_null(t->key, taint->key))
		return 0;
	if (t->op != NULL && strcmp(t->op, "Exists") == 0)
		return 1;
	if (t->key == NULL || *t->key == '\0')
		return 0; /* an empty key goes only with Exists */
	return streq_null(
	    t->value != NULL ? t->value : "", taint->value != NULL ? taint->value : "");
}

/* The kubelet is only interested in NoExecute taints. */
static int
admit_untolerated(const struct admit_node *node, const struct pod *p)
{
	size_t i, j;

	for (i = 0; i < node->ntaints; i++) {
		const struct admit_taint *t = &node->taints[i];
		int                       ok = 0;

		if (!streq_null(t->effect, "NoExecute"))
			continue;
		for (j = 0; j < p->ntolerations && !ok; j++)
			ok = admit_tolerates(&p->tolerations[j], t);
		if (!ok)
			return 1;
	}
	return 0;
}

static int
admit_predicate(const char *name, const char *why, char **reason, char **message)
{
	*reason = xstrdup(name);
	xasprintf(message, "Predicate %s failed: %s", name, why);
	return -1;
}

int
admit_pod(const struct admit_node *node, const struct pod *p, int is_static,
    const struct pod *const *others, size_t n, char **reason, char **message)
{
	const char *os = kvlist_get(&p->labels, "kubernetes.io/os");

	*reason = NULL;
	*message = NULL;
	if (admit_pressure(node, p, is_static, reason, message) < 0)
		return -1;
	if (os != NULL && strcmp(os, "linux") != 0) {
		*reason = xstrdup("PodOSSelectorNodeLabelDoesNotMatch");
		*message = xstrdup(
		    "Failed to admit pod as the `kubernetes.io/os` label doesn't match node label");
		return -1;
	}
	if (p->os_name != NULL && strcmp(p->os_name, "linux") != 0) {
		*reason = xstrdup("PodOSNotSupported");
		*message = xstrdup("Failed to admit pod as the OS field doesn't match node OS");
		return -1;
	}
	if (admit_resources(node, p, others, n, reason, message) < 0)
		return -1;
	if (!admit_node_affinity_matches(p, node))
		return admit_predicate("NodeAffinity",
		    "node(s) didn't match Pod's node affinity/selector", reason, message);
	if (p->node_name != NULL && *p->node_name != '\0' && node->name != NULL &&
	    strcmp(p->node_name, node->name) != 0)
		return admit_predicate(
		    "NodeName", "node(s) didn't match the requested node name", reason, message);
	if (!admit_host_ports(p, others, n))
		return admit_predicate("NodePorts",
		    "node(s) didn't have free ports for the requested pod ports", reason, message);
	if (!is_static && admit_untolerated(node, p))
		return admit_predicate(
		    "TaintToleration", "node(s) had untolerated taint", reason, message);
	if (node->shutting_down) {
		*reason = xstrdup("NodeShutdown");
		*message = xstrdup("Pod was rejected as the node is shutting down.");
		return -1;
	}
	return 0;
}
