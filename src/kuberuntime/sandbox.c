/* sandbox.c — the pod sandbox config (the kubelet's generatePodSandboxConfig):
 * metadata, hostname, log directory, DNS per dnsPolicy, port mappings, labels and
 * annotations, Linux options (cgroup parent, namespaces, security context, sysctls), and
 * the runtime handler from the RuntimeClass map. Also the protobuf-c helpers. */
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "kuberuntime/kuberuntime.h"
#include "kuberuntime/internal.h"
#include "core/log.h"
#include "core/util.h"

#define KR_MAX_DNS_SERVERS      3
#define KR_MAX_DNS_SEARCHES     32
#define KR_MAX_DNS_SEARCH_CHARS 2048
#define KR_MAX_RESOLV_BYTES     (64 * 1024)
#define KR_MAX_HOSTNAME         63

/* ---- protobuf-c helpers ---- */

void *
kr_msg_new(const ProtobufCMessageDescriptor *d)
{
	void *m = xmalloc(d->sizeof_message);

	protobuf_c_message_init(d, m);
	return m;
}

void
kr_msg_free(void *msg)
{
	if (msg != NULL)
		protobuf_c_message_free_unpacked(msg, NULL);
}

void
kr_strv_add(char ***v, size_t *n, const char *s)
{
	*v = xreallocarray(*v, *n + 1, sizeof(**v));
	(*v)[(*n)++] = xstrdup(s != NULL ? s : "");
}

/* All map<string,string> entries share this layout. */
struct kr_map_entry {
	ProtobufCMessage base;
	char            *key;
	char            *value;
};

void
kr_map_set(void ***entries, size_t *n, const ProtobufCMessageDescriptor *d, const char *key,
    const char *value)
{
	struct kr_map_entry *e;
	size_t               i;

	for (i = 0; i < *n; i++) {
		e = (*entries)[i];
		if (strcmp(e->key, key) == 0) {
			if (e->value != NULL && e->value != protobuf_c_empty_string)
				free(e->value);
			e->value = xstrdup(value != NULL ? value : "");
			return;
		}
	}
	e = kr_msg_new(d);
	e->key = xstrdup(key);
	e->value = xstrdup(value != NULL ? value : "");
	*entries = xreallocarray(*entries, *n + 1, sizeof(**entries));
	(*entries)[(*n)++] = e;
}

const char *
kr_map_get(void *const *entries, size_t n, const char *key)
{
	const struct kr_map_entry *e;
	size_t                     i;

	for (i = 0; i < n; i++) {
		e = entries[i];
		if (e->key != NULL && strcmp(e->key, key) == 0)
			return e->value;
	}
	return NULL;
}

#define KR_MAP_SET(msg, field, desc, k, v)                                                         \
	kr_map_set((void ***)&(msg)->field, &(msg)->n_##field, &(desc), (k), (v))

/* ---- paths ---- */

char *
kuberuntime_pod_log_dir(const char *logs_dir, const struct pod *pod)
{
	char *name, *dir;

	if (pod->name == NULL || pod->uid == NULL)
		return NULL;
	name = xsprintf("%s_%s_%s", pod->ns ? pod->ns : "default", pod->name, pod->uid);
	dir = path_join(logs_dir, 1, name);
	free(name);
	return dir;
}

char *
kuberuntime_pod_dir(const char *root_dir, const char *uid)
{
	return path_join(root_dir, 2, "pods", uid);
}

const char *
kuberuntime_pod_cgroup(const char *cgroup_root, const struct pod *pod, char *buf, size_t len)
{
	const char *tier = NULL;

	if (cgroup_root == NULL)
		cgroup_root = "/kubepods";
	if (cgroup_root[0] == '\0') {
		if (len > 0)
			buf[0] = '\0';
		return buf;
	}
	switch (kr_pod_qos(pod)) {
	case QOS_BEST_EFFORT:
		tier = "besteffort";
		break;
	case QOS_BURSTABLE:
		tier = "burstable";
		break;
	case QOS_GUARANTEED:
		break;
	}
	if (!path_component_ok(pod->uid)) /* never a cgroup outside the root */
		snprintf(buf, len, "%s/invalid-pod-uid", cgroup_root);
	else if (tier != NULL)
		snprintf(buf, len, "%s/%s/pod%s", cgroup_root, tier, pod->uid);
	else
		snprintf(buf, len, "%s/pod%s", cgroup_root, pod->uid);
	return buf;
}

/* ---- QoS (the API's rules, requests defaulting to limits) ---- */

static int
kr_qos_container(const struct container *c, int *has_any, int *all_guaranteed)
{
	static const char *const names[] = { "cpu", "memory" };
	const struct quantity   *req, *lim;
	size_t                   i;

	for (i = 0; i < nitems(names); i++) {
		req = resource_list_get(&c->c_resources.requests, names[i]);
		lim = resource_list_get(&c->c_resources.limits, names[i]);
		if ((req != NULL && req->milli != 0) || (lim != NULL && lim->milli != 0))
			*has_any = 1;
		if (lim == NULL || lim->milli == 0)
			*all_guaranteed = 0;
		else if (req != NULL && req->milli != lim->milli)
			*all_guaranteed = 0;
	}
	return 0;
}

enum qos_class
kr_pod_qos(const struct pod *pod)
{
	int    has_any = 0, all_guaranteed = 1;
	size_t i;

	for (i = 0; i < pod->ncontainers; i++)
		kr_qos_container(&pod->containers[i], &has_any, &all_guaranteed);
	for (i = 0; i < pod->ninit_containers; i++)
		kr_qos_container(&pod->init_containers[i], &has_any, &all_guaranteed);
	if (!has_any)
		return QOS_BEST_EFFORT;
	return all_guaranteed ? QOS_GUARANTEED : QOS_BURSTABLE;
}

/* ---- DNS ---- */

static void
kr_strv_push(struct strv *v, const char *s, size_t len)
{
	v->v = xreallocarray(v->v, v->n + 1, sizeof(*v->v));
	v->v[v->n++] = xstrndup(s, len);
}

static void
kr_strv_free(struct strv *v)
{
	size_t i;

	for (i = 0; i < v->n; i++)
		free(v->v[i]);
	free(v->v);
	v->v = NULL;
	v->n = 0;
}

void
kr_resolv_clear(struct kr_resolv *r)
{
	kr_strv_free(&r->servers);
	kr_strv_free(&r->searches);
	kr_strv_free(&r->options);
}

/* Splits the rest of a line into fields appended to v. */
static void
kr_fields(const char *p, const char *end, struct strv *v)
{
	const char *s;

	while (p < end) {
		while (p < end && isspace((unsigned char)*p))
			p++;
		s = p;
		while (p < end && !isspace((unsigned char)*p))
			p++;
		if (p > s)
			kr_strv_push(v, s, p - s);
	}
}

void
kr_resolv_parse(const char *text, struct kr_resolv *out)
{
	const char *line, *end, *p, *kw;
	size_t      kwlen;

	memset(out, 0, sizeof(*out));
	for (line = text; line != NULL && *line != '\0'; line = *end ? end + 1 : end) {
		end = strchr(line, '\n');
		if (end == NULL)
			end = line + strlen(line);
		p = line;
		while (p < end && isspace((unsigned char)*p))
			p++;
		if (p == end || *p == '#' || *p == ';')
			continue;
		kw = p;
		while (p < end && !isspace((unsigned char)*p))
			p++;
		kwlen = p - kw;
		if (kwlen == 10 && strncmp(kw, "nameserver", 10) == 0) {
			struct strv tmp = { NULL, 0 };

			kr_fields(p, end, &tmp);
			if (tmp.n > 0)
				kr_strv_push(&out->servers, tmp.v[0], strlen(tmp.v[0]));
			kr_strv_free(&tmp);
		} else if (kwlen == 6 && strncmp(kw, "search", 6) == 0) {
			/* The last search line wins, as in the resolver. */
			kr_strv_free(&out->searches);
			kr_fields(p, end, &out->searches);
		} else if (kwlen == 7 && strncmp(kw, "options", 7) == 0) {
			kr_fields(p, end, &out->options);
		}
	}
}

static int
kr_has(char **v, size_t n, const char *s)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (strcmp(v[i], s) == 0)
			return 1;
	return 0;
}

static void
kr_add_unique(char ***v, size_t *n, const char *s)
{
	if (!kr_has(*v, *n, s))
		kr_strv_add(v, n, s);
}

/* Option name: the part before ':'. */
static size_t
kr_opt_name_len(const char *o)
{
	const char *c = strchr(o, ':');

	return c != NULL ? (size_t)(c - o) : strlen(o);
}

/* Merges pod dnsConfig options: a pod option replaces a base option of the same name. */
static void
kr_merge_option(Runtime__V1__DNSConfig *d, const char *name, const char *value)
{
	char  *opt;
	size_t i, nl = strlen(name);

	if (value != NULL && value[0] != '\0')
		opt = xsprintf("%s:%s", name, value);
	else
		opt = xstrdup(name);
	for (i = 0; i < d->n_options; i++) {
		if (kr_opt_name_len(d->options[i]) == nl && strncmp(d->options[i], name, nl) == 0) {
			free(d->options[i]);
			d->options[i] = opt;
			return;
		}
	}
	d->options = xreallocarray(d->options, d->n_options + 1, sizeof(*d->options));
	d->options[d->n_options++] = opt;
}

Runtime__V1__DNSConfig *
kr_dns_config(
    const struct kr_env *env, const struct pod *pod, const struct kr_resolv *host, int *fallback)
{
	Runtime__V1__DNSConfig *d = kr_msg_new(&runtime__v1__dnsconfig__descriptor);
	enum { DNS_T_NONE, DNS_T_CLUSTER, DNS_T_HOST } t;
	size_t i, total;
	char  *s;

	if (fallback != NULL)
		*fallback = 0;
	switch (pod->dns_policy) {
	case DNS_NONE:
		t = DNS_T_NONE;
		break;
	case DNS_CLUSTER_FIRST_WITH_HOST_NET:
		t = DNS_T_CLUSTER;
		break;
	case DNS_CLUSTER_FIRST:
		t = pod->host_network ? DNS_T_HOST : DNS_T_CLUSTER;
		break;
	case DNS_DEFAULT:
	default:
		t = DNS_T_HOST;
		break;
	}
	if (t == DNS_T_CLUSTER && (env->cluster_dns == NULL || env->cluster_dns->n == 0)) {
		t = DNS_T_HOST;
		if (fallback != NULL)
			*fallback = 1;
	}
	if (t == DNS_T_CLUSTER) {
		for (i = 0; i < env->cluster_dns->n; i++)
			kr_add_unique(&d->servers, &d->n_servers, env->cluster_dns->v[i]);
		if (env->cluster_domain != NULL && env->cluster_domain[0] != '\0') {
			s = xsprintf(
			    "%s.svc.%s", pod->ns ? pod->ns : "default", env->cluster_domain);
			kr_add_unique(&d->searches, &d->n_searches, s);
			free(s);
			s = xsprintf("svc.%s", env->cluster_domain);
			kr_add_unique(&d->searches, &d->n_searches, s);
			free(s);
			kr_add_unique(&d->searches, &d->n_searches, env->cluster_domain);
		}
		for (i = 0; host != NULL && i < host->searches.n; i++)
			kr_add_unique(&d->searches, &d->n_searches, host->searches.v[i]);
		kr_strv_add(&d->options, &d->n_options, "ndots:5");
	} else if (t == DNS_T_HOST) {
		if (env->resolv_conf == NULL || env->resolv_conf[0] == '\0') {
			/* No resolver file: the local resolver, no search. */
			kr_strv_add(&d->servers, &d->n_servers, "127.0.0.1");
			kr_strv_add(&d->searches, &d->n_searches, ".");
		} else if (host != NULL) {
			for (i = 0; i < host->servers.n; i++)
				kr_add_unique(&d->servers, &d->n_servers, host->servers.v[i]);
			for (i = 0; i < host->searches.n; i++)
				kr_add_unique(&d->searches, &d->n_searches, host->searches.v[i]);
			for (i = 0; i < host->options.n; i++)
				kr_add_unique(&d->options, &d->n_options, host->options.v[i]);
		}
	}
	if (pod->dns_config != NULL) {
		for (i = 0; i < pod->dns_config->nameservers.n; i++)
			kr_add_unique(
			    &d->servers, &d->n_servers, pod->dns_config->nameservers.v[i]);
		for (i = 0; i < pod->dns_config->searches.n; i++)
			kr_add_unique(&d->searches, &d->n_searches, pod->dns_config->searches.v[i]);
		for (i = 0; i < pod->dns_config->options.n; i++)
			kr_merge_option(d, pod->dns_config->options.items[i].k,
			    pod->dns_config->options.items[i].v);
	}
	/* The resolver's limits: 3 servers, 32 search domains of 2048 characters in all. */
	while (d->n_servers > KR_MAX_DNS_SERVERS)
		free(d->servers[--d->n_servers]);
	while (d->n_searches > KR_MAX_DNS_SEARCHES)
		free(d->searches[--d->n_searches]);
	for (;;) {
		for (total = 0, i = 0; i < d->n_searches; i++)
			total += strlen(d->searches[i]) + (i > 0);
		if (total <= KR_MAX_DNS_SEARCH_CHARS || d->n_searches == 0)
			break;
		free(d->searches[--d->n_searches]);
	}
	return d;
}

/* ---- hostname, runtime handler ---- */

const char *
kr_pod_hostname(const struct pod *pod, char *buf, size_t len)
{
	const char *h =
	    pod->hostname != NULL && pod->hostname[0] != '\0' ? pod->hostname : pod->name;
	size_t n;

	snprintf(buf, len, "%s", h != NULL ? h : "");
	n = strlen(buf);
	if (n > KR_MAX_HOSTNAME) {
		buf[KR_MAX_HOSTNAME] = '\0';
		n = KR_MAX_HOSTNAME;
		/* A cut name must still end in an alphanumeric character. */
		while (n > 0 && (buf[n - 1] == '-' || buf[n - 1] == '.'))
			buf[--n] = '\0';
	}
	return buf;
}

int
kr_runtime_handler(
    const struct kr_env *env, const struct pod *pod, const char **handler, char *err, size_t errlen)
{
	const char *h;

	*handler = "";
	if (pod->runtime_class == NULL || pod->runtime_class[0] == '\0')
		return 0;
	if (env->rc_lookup != NULL && env->rc_lookup(pod->runtime_class, &h, env->rc_arg) == 1) {
		*handler = h;
		return 0;
	}
	if (env->runtime_handlers != NULL &&
	    (h = kvlist_get(env->runtime_handlers, pod->runtime_class)) != NULL) {
		*handler = h; /* the standalone mapping */
		return 0;
	}
	/* The informer's NotFound, as the kubelet's runtime class manager returns it. */
	snprintf(err, errlen, "runtimeclasses.node.k8s.io \"%s\" not found", pod->runtime_class);
	return -1;
}

/* ---- the sandbox config ---- */

static Runtime__V1__SecurityProfile *
kr_seccomp(const struct seccomp_profile *c, const struct seccomp_profile *p)
{
	Runtime__V1__SecurityProfile *sp = kr_msg_new(&runtime__v1__security_profile__descriptor);
	const struct seccomp_profile *use = NULL;

	if (c != NULL && c->type != NULL)
		use = c;
	else if (p != NULL && p->type != NULL)
		use = p;
	/* The kubelet's default (no SeccompDefault): unconfined. */
	sp->profile_type = RUNTIME__V1__SECURITY_PROFILE__PROFILE_TYPE__Unconfined;
	if (use != NULL) {
		if (strcmp(use->type, "RuntimeDefault") == 0) {
			sp->profile_type =
			    RUNTIME__V1__SECURITY_PROFILE__PROFILE_TYPE__RuntimeDefault;
		} else if (strcmp(use->type, "Localhost") == 0 && use->localhost != NULL) {
			sp->profile_type = RUNTIME__V1__SECURITY_PROFILE__PROFILE_TYPE__Localhost;
			sp->localhost_ref = xstrdup(use->localhost);
		}
	}
	return sp;
}

Runtime__V1__SecurityProfile *
kr_seccomp_profile(const struct seccomp_profile *c, const struct seccomp_profile *p)
{
	return kr_seccomp(c, p);
}

Runtime__V1__NamespaceOption *
kr_namespaces(const struct pod *pod)
{
	Runtime__V1__NamespaceOption *ns = kr_msg_new(&runtime__v1__namespace_option__descriptor);

	ns->network = pod->host_network ? RUNTIME__V1__NAMESPACE_MODE__NODE
	                                : RUNTIME__V1__NAMESPACE_MODE__POD;
	ns->ipc =
	    pod->host_ipc ? RUNTIME__V1__NAMESPACE_MODE__NODE : RUNTIME__V1__NAMESPACE_MODE__POD;
	if (pod->host_pid)
		ns->pid = RUNTIME__V1__NAMESPACE_MODE__NODE;
	else if (pod->share_process_ns)
		ns->pid = RUNTIME__V1__NAMESPACE_MODE__POD;
	else
		ns->pid = RUNTIME__V1__NAMESPACE_MODE__CONTAINER;
	return ns;
}

static int
kr_any_privileged(const struct pod *pod)
{
	size_t i;

	for (i = 0; i < pod->ncontainers; i++)
		if (pod->containers[i].c_security != NULL &&
		    pod->containers[i].c_security->privileged.v)
			return 1;
	for (i = 0; i < pod->ninit_containers; i++)
		if (pod->init_containers[i].c_security != NULL &&
		    pod->init_containers[i].c_security->privileged.v)
			return 1;
	return 0;
}

static Runtime__V1__Int64Value *
kr_i64(int64_t v)
{
	Runtime__V1__Int64Value *iv = kr_msg_new(&runtime__v1__int64_value__descriptor);

	iv->value = v;
	return iv;
}

static Runtime__V1__LinuxPodSandboxConfig *
kr_sandbox_linux(const struct kr_env *env, const struct pod *pod)
{
	Runtime__V1__LinuxPodSandboxConfig *lx =
	    kr_msg_new(&runtime__v1__linux_pod_sandbox_config__descriptor);
	Runtime__V1__LinuxSandboxSecurityContext *sc =
	    kr_msg_new(&runtime__v1__linux_sandbox_security_context__descriptor);
	const struct pod_security_context *psc = pod->security;
	char                               cg[512];
	size_t                             i;

	if (env->pod_cgroup != NULL)
		env->pod_cgroup(env->pod_cgroup_arg, pod, cg, sizeof(cg));
	else
		kuberuntime_pod_cgroup(env->cgroup_root, pod, cg, sizeof(cg));
	if (cg[0] != '\0')
		lx->cgroup_parent = xstrdup(cg);
	lx->security_context = sc;
	sc->namespace_options = kr_namespaces(pod);
	sc->privileged = kr_any_privileged(pod);
	if (psc != NULL) {
		if (psc->run_as_user.set)
			sc->run_as_user = kr_i64(psc->run_as_user.v);
		if (psc->run_as_group.set)
			sc->run_as_group = kr_i64(psc->run_as_group.v);
		for (i = 0; i < psc->nsupplemental_groups; i++) {
			sc->supplemental_groups = xreallocarray(sc->supplemental_groups,
			    sc->n_supplemental_groups + 1, sizeof(int64_t));
			sc->supplemental_groups[sc->n_supplemental_groups++] =
			    psc->supplemental_groups[i];
		}
		if (psc->fs_group.set) {
			sc->supplemental_groups = xreallocarray(sc->supplemental_groups,
			    sc->n_supplemental_groups + 1, sizeof(int64_t));
			sc->supplemental_groups[sc->n_supplemental_groups++] = psc->fs_group.v;
		}
		for (i = 0; i < psc->sysctls.n; i++)
			KR_MAP_SET(lx, sysctls,
			    runtime__v1__linux_pod_sandbox_config__sysctls_entry__descriptor,
			    psc->sysctls.items[i].k, psc->sysctls.items[i].v);
	}
	sc->seccomp = kr_seccomp(NULL, psc != NULL ? &psc->seccomp : NULL);
	return lx;
}

static Runtime__V1__Protocol
kr_protocol(enum protocol p)
{
	switch (p) {
	case PROTO_UDP:
		return RUNTIME__V1__PROTOCOL__UDP;
	case PROTO_SCTP:
		return RUNTIME__V1__PROTOCOL__SCTP;
	default:
		return RUNTIME__V1__PROTOCOL__TCP;
	}
}

static char *
kr_read_small(const char *path, size_t max)
{
	char   *buf;
	ssize_t r;
	size_t  n = 0;
	int     fd;

	if ((fd = open(path, O_RDONLY | O_CLOEXEC)) == -1)
		return NULL;
	buf = xmalloc(max + 1);
	while (n < max && (r = read(fd, buf + n, max - n)) > 0)
		n += (size_t)r;
	close(fd);
	buf[n] = '\0';
	return buf;
}

Runtime__V1__PodSandboxConfig *
kr_sandbox_config(
    const struct kr_env *env, const struct pod *pod, uint32_t attempt, char *err, size_t errlen)
{
	Runtime__V1__PodSandboxConfig   *c;
	Runtime__V1__PodSandboxMetadata *md;
	Runtime__V1__PortMapping        *pm;
	struct kr_resolv                 host;
	const struct container          *ct;
	char                             hn[KR_MAX_HOSTNAME + 2], *text = NULL;
	size_t                           i, j, k;
	int                              have_host = 0, dup;

	if (pod->name == NULL || pod->uid == NULL) {
		snprintf(err, errlen, "pod without name or uid");
		return NULL;
	}
	if (pod_validate_names(pod, err, errlen) == -1) /* they make paths */
		return NULL;
	c = kr_msg_new(&runtime__v1__pod_sandbox_config__descriptor);
	md = kr_msg_new(&runtime__v1__pod_sandbox_metadata__descriptor);
	md->name = xstrdup(pod->name);
	md->namespace_ = xstrdup(pod->ns ? pod->ns : "default");
	md->uid = xstrdup(pod->uid);
	md->attempt = attempt;
	c->metadata = md;
	/* A host-network pod has no UTS namespace of its own: the runtime refuses a name. */
	if (!pod->host_network)
		c->hostname = xstrdup(kr_pod_hostname(pod, hn, sizeof(hn)));
	c->log_directory = kuberuntime_pod_log_dir(env->logs_dir, pod);

	memset(&host, 0, sizeof(host));
	if (env->resolv_conf != NULL && env->resolv_conf[0] != '\0') {
		if ((text = kr_read_small(env->resolv_conf, KR_MAX_RESOLV_BYTES)) != NULL) {
			kr_resolv_parse(text, &host);
			have_host = 1;
			free(text);
		} else {
			log_warn(
			    "%s: pod=%s/%s: %s", __func__, pod->ns, pod->name, env->resolv_conf);
		}
	}
	c->dns_config = kr_dns_config(env, pod, have_host ? &host : NULL, NULL);
	kr_resolv_clear(&host);

	for (i = 0; i < pod->ncontainers; i++) {
		ct = &pod->containers[i];
		for (j = 0; j < ct->c_nports; j++) {
			const struct container_port *p = &ct->c_ports[j];

			for (dup = 0, k = 0; k < c->n_port_mappings; k++)
				if (c->port_mappings[k]->container_port == p->container_port &&
				    c->port_mappings[k]->host_port == p->host_port &&
				    c->port_mappings[k]->protocol == kr_protocol(p->protocol))
					dup = 1;
			if (dup)
				continue;
			pm = kr_msg_new(&runtime__v1__port_mapping__descriptor);
			pm->protocol = kr_protocol(p->protocol);
			pm->container_port = p->container_port;
			pm->host_port = p->host_port;
			if (p->host_ip != NULL)
				pm->host_ip = xstrdup(p->host_ip);
			c->port_mappings = xreallocarray(
			    c->port_mappings, c->n_port_mappings + 1, sizeof(*c->port_mappings));
			c->port_mappings[c->n_port_mappings++] = pm;
		}
	}

	for (i = 0; i < pod->labels.n; i++)
		KR_MAP_SET(c, labels, runtime__v1__pod_sandbox_config__labels_entry__descriptor,
		    pod->labels.items[i].k, pod->labels.items[i].v);
	KR_MAP_SET(c, labels, runtime__v1__pod_sandbox_config__labels_entry__descriptor,
	    KR_LABEL_POD_NAME, pod->name);
	KR_MAP_SET(c, labels, runtime__v1__pod_sandbox_config__labels_entry__descriptor,
	    KR_LABEL_POD_NAMESPACE, pod->ns ? pod->ns : "default");
	KR_MAP_SET(c, labels, runtime__v1__pod_sandbox_config__labels_entry__descriptor,
	    KR_LABEL_POD_UID, pod->uid);
	for (i = 0; i < pod->annotations.n; i++)
		KR_MAP_SET(c, annotations,
		    runtime__v1__pod_sandbox_config__annotations_entry__descriptor,
		    pod->annotations.items[i].k, pod->annotations.items[i].v);
	c->linux = kr_sandbox_linux(env, pod);
	return c;
}
