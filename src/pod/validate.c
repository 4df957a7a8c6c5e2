/* validate.c — the API server's checks on a decoded pod that the kubelet relies on:
 * names, images, duplicates, DNS names, ports, probes and hooks, volumes, sidecar rules,
 * negative durations. The first failure is reported as "field.path: reason".
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pod/pod.h"
#include "core/util.h"

struct val {
	char          *err;
	size_t         errlen;
	unsigned char *cdup; /* per container (init, app, ephemeral): name seen before */
	const char   **vols; /* volume names, sorted, for look-ups */
	size_t         nvols;
	unsigned char *vdup; /* per volume: name seen before */
};

struct sref {
	const char *s;
	size_t      i;
};

static int
val_sref_cmp(const void *a, const void *b)
{
	const struct sref *x = a, *y = b;
	int                c = strcmp(x->s, y->s);

	if (c != 0)
		return c;
	return x->i < y->i ? -1 : x->i > y->i;
}

/* Marks strs[i] when an earlier element holds the same string (NULLs never match).
 * Sorting keeps this O(n log n) for hostile documents with many thousands of entries.
 * Returns a zeroed array of n flags (never NULL); the caller frees it. */
static unsigned char *
val_find_dups(const char *const *strs, size_t n)
{
	unsigned char *dup = xcalloc(n > 0 ? n : 1, 1);
	struct sref   *r;
	size_t         i, m = 0;

	if (n < 2)
		return dup;
	r = xreallocarray(NULL, n, sizeof(*r));
	for (i = 0; i < n; i++)
		if (strs[i] != NULL) {
			r[m].s = strs[i];
			r[m++].i = i;
		}
	qsort(r, m, sizeof(*r), val_sref_cmp);
	for (i = 1; i < m; i++)
		if (strcmp(r[i].s, r[i - 1].s) == 0)
			dup[r[i].i] = 1;
	free(r);
	return dup;
}

static int
val_str_cmp(const void *a, const void *b)
{
	return strcmp(*(const char *const *)a, *(const char *const *)b);
}

static int val_vfail(struct val *v, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static int
val_vfail(struct val *v, const char *fmt, ...)
{
	va_list ap;

	if (v->err != NULL && v->errlen > 0) {
		va_start(ap, fmt);
		vsnprintf(v->err, v->errlen, fmt, ap);
		va_end(ap);
	}
	return -1;
}

static int
val_is_lower_alnum(int c)
{
	return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9');
}

static int
val_is_alnum(int c)
{
	return val_is_lower_alnum(c) || (c >= 'A' && c <= 'Z');
}

/* RFC 1123 label: at most 63 of [a-z0-9-], starting and ending alphanumeric. */
static int
val_dns_label(const char *s)
{
	size_t i, n;

	if (s == NULL || (n = strlen(s)) == 0 || n > 63)
		return 0;
	for (i = 0; i < n; i++)
		if (!val_is_lower_alnum((unsigned char)s[i]) && s[i] != '-')
			return 0;
	return val_is_lower_alnum((unsigned char)s[0]) &&
	    val_is_lower_alnum((unsigned char)s[n - 1]);
}

/* RFC 1123 subdomain: at most 253, dot-separated labels. */
static int
val_dns_subdomain(const char *s)
{
	char        label[254];
	const char *p, *dot;
	size_t      n;

	if (s == NULL || (n = strlen(s)) == 0 || n > 253)
		return 0;
	for (p = s;; p = dot + 1) {
		dot = strchr(p, '.');
		n = dot != NULL ? (size_t)(dot - p) : strlen(p);
		memcpy(label, p, n);
		label[n] = '\0';
		if (!val_dns_label(label))
			return 0;
		if (dot == NULL)
			return 1;
	}
}

/* A label key's name part or a label value: at most 63 of [A-Za-z0-9-_.], alphanumeric at
 * both ends (a value may be val_empty). */
static int
val_qualified_part(const char *s, int allow_empty)
{
	size_t i, n = s != NULL ? strlen(s) : 0;

	if (n == 0)
		return allow_empty;
	if (n > 63)
		return 0;
	for (i = 0; i < n; i++)
		if (!val_is_alnum((unsigned char)s[i]) && s[i] != '-' && s[i] != '_' && s[i] != '.')
			return 0;
	return val_is_alnum((unsigned char)s[0]) && val_is_alnum((unsigned char)s[n - 1]);
}

static int
val_label_key(const char *k)
{
	const char *slash;
	char        prefix[254];
	size_t      n;

	if (k == NULL)
		return 0;
	if ((slash = strchr(k, '/')) == NULL)
		return val_qualified_part(k, 0);
	n = (size_t)(slash - k);
	if (n == 0 || n > 253)
		return 0;
	memcpy(prefix, k, n);
	prefix[n] = '\0';
	return val_dns_subdomain(prefix) && val_qualified_part(slash + 1, 0);
}

/* IANA service name (port names): at most 15 of [a-z0-9-], a letter somewhere, no "--",
 * not starting or ending with '-'. */
static int
val_port_name(const char *s)
{
	size_t i, n = s != NULL ? strlen(s) : 0;
	int    letter = 0;

	if (n == 0 || n > 15 || s[0] == '-' || s[n - 1] == '-' || strstr(s, "--") != NULL)
		return 0;
	for (i = 0; i < n; i++) {
		if (!val_is_lower_alnum((unsigned char)s[i]) && s[i] != '-')
			return 0;
		if (s[i] >= 'a' && s[i] <= 'z')
			letter = 1;
	}
	return letter;
}

static int
val_empty(const char *s)
{
	return s == NULL || *s == '\0';
}

static const char *
val_list_name(enum container_kind k)
{
	switch (k) {
	case CK_INIT:
		return "spec.initContainers";
	case CK_EPHEMERAL:
		return "spec.ephemeralContainers";
	case CK_APP:
		break;
	}
	return "spec.containers";
}

static int
val_check_port_ref(struct val *v, const char *path, const struct int_or_str *p)
{
	if (p->is_str) {
		if (!val_port_name(p->str))
			return val_vfail(
			    v, "%s.port: must be a port number or an IANA service name", path);
	} else if (p->num < 1 || p->num > 65535)
		return val_vfail(v, "%s.port: must be between 1 and 65535", path);
	return 0;
}

/* A probe's or a hook's action. */
static int
val_check_handler(struct val *v, const char *path, const struct handler *h, int is_probe)
{
	static const char *const kinds[] = { "", "exec", "httpGet", "tcpSocket", "grpc", "sleep" };
	size_t                   i;

	if (h->h_nkinds == 0 || h->h_kind == HANDLER_NONE)
		return val_vfail(v, "%s: must specify a handler type", path);
	if (h->h_nkinds > 1)
		return val_vfail(v, "%s: may not specify more than 1 handler type", path);
	if (is_probe && h->h_kind == HANDLER_SLEEP)
		return val_vfail(v, "%s.sleep: not supported in probes", path);
	if (!is_probe && h->h_kind == HANDLER_GRPC)
		return val_vfail(v, "%s.grpc: not supported in lifecycle hooks", path);
	switch (h->h_kind) {
	case HANDLER_EXEC:
		if (h->h_exec.n == 0)
			return val_vfail(v, "%s.exec.command: required", path);
		break;
	case HANDLER_HTTP_GET:
	case HANDLER_TCP_SOCKET: {
		char sub[300];

		snprintf(sub, sizeof(sub), "%s.%s", path, kinds[h->h_kind]);
		if (val_check_port_ref(v, sub, &h->h_port) < 0)
			return -1;
		if (h->h_kind == HANDLER_HTTP_GET && h->h_scheme != NULL &&
		    strcmp(h->h_scheme, "HTTP") != 0 && strcmp(h->h_scheme, "HTTPS") != 0)
			return val_vfail(
			    v, "%s.scheme: unsupported value \"%s\"", sub, h->h_scheme);
		for (i = 0; i < h->h_nheaders; i++)
			if (val_empty(h->h_headers[i].name))
				return val_vfail(v, "%s.httpHeaders[%zu].name: required", sub, i);
		break;
	}
	case HANDLER_GRPC:
		if (h->h_grpc_port < 1 || h->h_grpc_port > 65535)
			return val_vfail(v, "%s.grpc.port: must be between 1 and 65535", path);
		break;
	case HANDLER_SLEEP:
		if (h->h_sleep_seconds < 0)
			return val_vfail(
			    v, "%s.sleep.seconds: must be greater than or equal to 0", path);
		break;
	case HANDLER_NONE:
		break;
	}
	return 0;
}

static int
val_check_probe(struct val *v, const char *cpath, const char *name, const struct probe *p,
    int must_succeed_once)
{
	char path[300];

	if (p == NULL)
		return 0;
	snprintf(path, sizeof(path), "%s.%s", cpath, name);
	if (val_check_handler(v, path, &p->pr_handler, 1) < 0)
		return -1;
	if (p->pr_initial_delay < 0)
		return val_vfail(
		    v, "%s.initialDelaySeconds: must be greater than or equal to 0", path);
	if (p->pr_timeout < 1)
		return val_vfail(v, "%s.timeoutSeconds: must be greater than or equal to 1", path);
	if (p->pr_period < 1)
		return val_vfail(v, "%s.periodSeconds: must be greater than or equal to 1", path);
	if (p->pr_success_threshold < 1)
		return val_vfail(
		    v, "%s.successThreshold: must be greater than or equal to 1", path);
	if (must_succeed_once && p->pr_success_threshold != 1)
		return val_vfail(v, "%s.successThreshold: must be 1", path);
	if (p->pr_failure_threshold < 1)
		return val_vfail(
		    v, "%s.failureThreshold: must be greater than or equal to 1", path);
	if (p->pr_termination_grace.set && p->pr_termination_grace.v <= 0)
		return val_vfail(
		    v, "%s.terminationGracePeriodSeconds: must be greater than 0", path);
	return 0;
}

static int
val_check_resources(struct val *v, const char *cpath, const struct resources *r)
{
	size_t                 i;
	const struct quantity *lim;

	for (i = 0; i < r->limits.n; i++) {
		const struct quantity *q = &r->limits.items[i];

		if (val_empty(q->name))
			return val_vfail(v, "%s.resources.limits: empty resource name", cpath);
		if (q->milli < 0)
			return val_vfail(v,
			    "%s.resources.limits.%s: must be greater than or equal to 0", cpath,
			    q->name);
	}
	for (i = 0; i < r->requests.n; i++) {
		const struct quantity *q = &r->requests.items[i];

		if (val_empty(q->name))
			return val_vfail(v, "%s.resources.requests: empty resource name", cpath);
		if (q->milli < 0)
			return val_vfail(v,
			    "%s.resources.requests.%s: must be greater than or equal to 0", cpath,
			    q->name);
		lim = resource_list_get(&r->limits, q->name);
		if (lim != NULL && q->milli > lim->milli)
			return val_vfail(v,
			    "%s.resources.requests.%s: must be less than or equal to the "
			    "%s limit",
			    cpath, q->name, q->name);
	}
	return 0;
}

static int
val_check_security(struct val *v, const char *path, const struct security_context *sc)
{
	if (sc == NULL)
		return 0;
	if (sc->run_as_user.set && (sc->run_as_user.v < 0 || sc->run_as_user.v > INT32_MAX))
		return val_vfail(v, "%s.runAsUser: must be between 0 and 2147483647", path);
	if (sc->run_as_group.set && (sc->run_as_group.v < 0 || sc->run_as_group.v > INT32_MAX))
		return val_vfail(v, "%s.runAsGroup: must be between 0 and 2147483647", path);
	if (sc->privileged.set && sc->privileged.v && sc->allow_privilege_escalation.set &&
	    !sc->allow_privilege_escalation.v)
		return val_vfail(v,
		    "%s: cannot set allowPrivilegeEscalation to false and "
		    "privileged to true",
		    path);
	if (sc->seccomp.type != NULL) {
		if (strcmp(sc->seccomp.type, "Localhost") == 0) {
			if (val_empty(sc->seccomp.localhost))
				return val_vfail(v,
				    "%s.seccompProfile.localhostProfile: required when "
				    "type is Localhost",
				    path);
		} else if (strcmp(sc->seccomp.type, "RuntimeDefault") != 0 &&
		    strcmp(sc->seccomp.type, "Unconfined") != 0)
			return val_vfail(v, "%s.seccompProfile.type: unsupported value \"%s\"",
			    path, sc->seccomp.type);
	}
	return 0;
}

static int
val_volume_exists(const struct val *v, const char *name)
{
	return name != NULL && v->nvols > 0 &&
	    bsearch(&name, v->vols, v->nvols, sizeof(*v->vols), val_str_cmp) != NULL;
}

static int
val_check_container(struct val *v, const struct pod *p, const struct container *c,
    enum container_kind kind, size_t idx, size_t flat)
{
	char           path[128];
	const char   **names;
	unsigned char *dup;
	size_t         i;
	int            sidecar =
	    kind == CK_INIT && c->c_has_restart_policy && c->c_restart_policy == RESTART_ALWAYS;

	snprintf(path, sizeof(path), "%s[%zu]", val_list_name(kind), idx);
	if (val_empty(c->c_name))
		return val_vfail(v, "%s.name: required", path);
	if (!val_dns_label(c->c_name))
		return val_vfail(v, "%s.name: \"%s\" is not a DNS-1123 label", path, c->c_name);
	if (v->cdup[flat])
		return val_vfail(v, "%s.name: duplicate name \"%s\"", path, c->c_name);
	if (val_empty(c->c_image))
		return val_vfail(v, "%s.image: required", path);
	if (c->c_has_restart_policy) {
		if (kind != CK_INIT)
			return val_vfail(
			    v, "%s.restartPolicy: may only be set on init containers", path);
		if (c->c_restart_policy != RESTART_ALWAYS)
			return val_vfail(v, "%s.restartPolicy: must be Always (got %s)", path,
			    restart_policy_name(c->c_restart_policy));
	}
	for (i = 0; i < c->c_nports; i++) {
		const struct container_port *cp = &c->c_ports[i];

		if (kind == CK_EPHEMERAL)
			return val_vfail(
			    v, "%s.ports: may not be set for ephemeral containers", path);
		if (cp->container_port < 1 || cp->container_port > 65535)
			return val_vfail(
			    v, "%s.ports[%zu].containerPort: must be between 1 and 65535", path, i);
		if (cp->host_port < 0 || cp->host_port > 65535)
			return val_vfail(
			    v, "%s.ports[%zu].hostPort: must be between 0 and 65535", path, i);
		if (p->host_network && cp->host_port != 0 && cp->host_port != cp->container_port)
			return val_vfail(v,
			    "%s.ports[%zu].hostPort: must match containerPort when "
			    "hostNetwork is true",
			    path, i);
		if (cp->name != NULL && !val_port_name(cp->name))
			return val_vfail(v,
			    "%s.ports[%zu].name: \"%s\" is not an IANA service name", path, i,
			    cp->name);
	}
	names = xcalloc(c->c_nports + 1, sizeof(*names));
	for (i = 0; i < c->c_nports; i++)
		names[i] = c->c_ports[i].name;
	dup = val_find_dups(names, c->c_nports);
	free(names);
	for (i = 0; i < c->c_nports && !dup[i]; i++)
		;
	free(dup);
	if (i < c->c_nports)
		return val_vfail(
		    v, "%s.ports[%zu].name: duplicate name \"%s\"", path, i, c->c_ports[i].name);
	for (i = 0; i < c->c_nenv; i++) {
		const char *n = c->c_env[i].name;

		if (val_empty(n))
			return val_vfail(v, "%s.env[%zu].name: required", path, i);
		if (strchr(n, '=') != NULL)
			return val_vfail(v, "%s.env[%zu].name: may not contain '='", path, i);
		if ((c->c_env[i].src == ENV_CONFIG_MAP_KEY_REF ||
		        c->c_env[i].src == ENV_SECRET_KEY_REF) &&
		    (val_empty(c->c_env[i].ref_name) || val_empty(c->c_env[i].ref_key)))
			return val_vfail(
			    v, "%s.env[%zu].valueFrom: name and key are required", path, i);
		if (c->c_env[i].src == ENV_FIELD_REF && val_empty(c->c_env[i].ref_key))
			return val_vfail(
			    v, "%s.env[%zu].valueFrom.fieldRef.fieldPath: required", path, i);
		if (c->c_env[i].src == ENV_RESOURCE_FIELD_REF && val_empty(c->c_env[i].ref_key))
			return val_vfail(v,
			    "%s.env[%zu].valueFrom.resourceFieldRef.resource: required", path, i);
	}
	for (i = 0; i < c->c_nenv_from; i++)
		if (val_empty(c->c_env_from[i].name))
			return val_vfail(v, "%s.envFrom[%zu].%s.name: required", path, i,
			    c->c_env_from[i].is_secret ? "secretRef" : "configMapRef");
	if (kind == CK_EPHEMERAL && (c->c_resources.requests.n > 0 || c->c_resources.limits.n > 0))
		return val_vfail(v, "%s.resources: may not be set for ephemeral containers", path);
	if (val_check_resources(v, path, &c->c_resources) < 0)
		return -1;
	for (i = 0; i < c->c_nmounts; i++) {
		const struct volume_mount *m = &c->c_mounts[i];

		if (val_empty(m->name))
			return val_vfail(v, "%s.volumeMounts[%zu].name: required", path, i);
		if (!val_volume_exists(v, m->name))
			return val_vfail(v, "%s.volumeMounts[%zu].name: volume \"%s\" not found",
			    path, i, m->name);
		if (val_empty(m->mount_path))
			return val_vfail(v, "%s.volumeMounts[%zu].mountPath: required", path, i);
		if (m->sub_path != NULL &&
		    (m->sub_path[0] == '/' || strstr(m->sub_path, "..") != NULL))
			return val_vfail(v,
			    "%s.volumeMounts[%zu].subPath: must be a relative path "
			    "without '..'",
			    path, i);
	}
	names = xcalloc(c->c_nmounts + 1, sizeof(*names));
	for (i = 0; i < c->c_nmounts; i++)
		names[i] = c->c_mounts[i].mount_path;
	dup = val_find_dups(names, c->c_nmounts);
	free(names);
	for (i = 0; i < c->c_nmounts && !dup[i]; i++)
		;
	free(dup);
	if (i < c->c_nmounts)
		return val_vfail(v, "%s.volumeMounts[%zu].mountPath: must be unique", path, i);
	if ((kind == CK_INIT && !sidecar) || kind == CK_EPHEMERAL) {
		const char *why = kind == CK_INIT
		    ? "may not be set for init containers without restartPolicy=Always"
		    : "may not be set for ephemeral containers";

		if (c->c_liveness != NULL)
			return val_vfail(v, "%s.livenessProbe: %s", path, why);
		if (c->c_readiness != NULL)
			return val_vfail(v, "%s.readinessProbe: %s", path, why);
		if (c->c_startup != NULL)
			return val_vfail(v, "%s.startupProbe: %s", path, why);
		if (kind == CK_EPHEMERAL && (c->c_post_start != NULL || c->c_pre_stop != NULL))
			return val_vfail(v, "%s.lifecycle: %s", path, why);
	}
	if (val_check_probe(v, path, "livenessProbe", c->c_liveness, 1) < 0 ||
	    val_check_probe(v, path, "readinessProbe", c->c_readiness, 0) < 0 ||
	    val_check_probe(v, path, "startupProbe", c->c_startup, 1) < 0)
		return -1;
	if (c->c_post_start != NULL) {
		char hp[200];

		snprintf(hp, sizeof(hp), "%s.lifecycle.postStart", path);
		if (val_check_handler(v, hp, c->c_post_start, 0) < 0)
			return -1;
	}
	if (c->c_pre_stop != NULL) {
		char hp[200];

		snprintf(hp, sizeof(hp), "%s.lifecycle.preStop", path);
		if (val_check_handler(v, hp, c->c_pre_stop, 0) < 0)
			return -1;
	}
	if (val_empty(c->c_term_msg_path))
		return val_vfail(v, "%s.terminationMessagePath: required", path);
	if (c->c_stdin_once && !c->c_stdin)
		return val_vfail(v, "%s.stdinOnce: requires stdin", path);
	{
		char sp[160];

		snprintf(sp, sizeof(sp), "%s.securityContext", path);
		if (val_check_security(v, sp, c->c_security) < 0)
			return -1;
	}
	if (kind == CK_EPHEMERAL && c->c_target_container != NULL) {
		const struct container *t = pod_find_container(p, c->c_target_container);

		if (t == NULL || t->c_kind == CK_EPHEMERAL)
			return val_vfail(v, "%s.targetContainerName: container \"%s\" not found",
			    path, c->c_target_container);
	}
	return 0;
}

static int
val_check_mode(struct val *v, const char *path, int32_t mode)
{
	if (mode != -1 && (mode < 0 || mode > 0777))
		return val_vfail(v, "%s: must be a file mode between 0 and 0777", path);
	return 0;
}

/* volumes: a downwardAPI item names exactly one of fieldRef and resourceFieldRef. */
static int
val_check_downward_item(
    struct val *v, const char *path, const char *what, size_t i, const struct key_to_path *kp)
{
	if (kp->key == NULL && kp->resource == NULL)
		return val_vfail(v,
		    "%s.%s.items[%zu]: must specify one of fieldRef and "
		    "resourceFieldRef",
		    path, what, i);
	if (kp->key != NULL && kp->resource != NULL)
		return val_vfail(v,
		    "%s.%s.items[%zu]: fieldRef and resourceFieldRef can not be "
		    "specified simultaneously",
		    path, what, i);
	return 0;
}

/* The API's validateLocalNonReservedPath: relative, no ".." element, not beginning with
 * "..". */
static int
val_check_rel_path(struct val *v, const char *path, const char *p)
{
	const char *s;
	size_t      n;

	if (p == NULL || *p == '\0')
		return val_vfail(v, "%s: required", path);
	if (p[0] == '/')
		return val_vfail(v, "%s: must be a relative path", path);
	if (strncmp(p, "..", 2) == 0)
		return val_vfail(v, "%s: must not start with '..'", path);
	for (s = p; *s != '\0'; s += n + (s[n] == '/')) {
		n = strcspn(s, "/");
		if (n == 2 && strncmp(s, "..", 2) == 0)
			return val_vfail(v, "%s: must not contain '..'", path);
	}
	return 0;
}

int
pod_config_key_ok(const char *key)
{
	size_t i, n = key != NULL ? strlen(key) : 0;

	if (n == 0 || n > 253 || strcmp(key, ".") == 0 || strncmp(key, "..", 2) == 0)
		return 0;
	for (i = 0; i < n; i++)
		if (!val_is_alnum((unsigned char)key[i]) && key[i] != '-' && key[i] != '_' &&
		    key[i] != '.')
			return 0;
	return 1;
}

static int
val_check_key(struct val *v, const char *path, const char *key)
{
	if (val_empty(key))
		return val_vfail(v, "%s: required", path);
	if (!pod_config_key_ok(key))
		return val_vfail(v,
		    "%s: a valid config key must consist of alphanumeric characters, '-', '_' "
		    "or '.'",
		    path);
	return 0;
}

/* volumes: the sources of a projected volume. */
static int
val_check_projections(struct val *v, const char *path, const struct volume *vol)
{
	char   sub[300];
	size_t i, k;

	for (i = 0; i < vol->v_nprojections; i++) {
		const struct volume_projection *p = &vol->v_projections[i];

		switch (p->p_kind) {
		case PROJ_CONFIG_MAP:
		case PROJ_SECRET:
			if (val_empty(p->p_name))
				return val_vfail(v, "%s.projected.sources[%zu].%s.name: required",
				    path, i, p->p_kind == PROJ_SECRET ? "secret" : "configMap");
			for (k = 0; k < p->p_nitems; k++) {
				snprintf(sub, sizeof(sub),
				    "%s.projected.sources[%zu].items[%zu].key", path, i, k);
				if (val_check_key(v, sub, p->p_items[k].key) < 0)
					return -1;
				snprintf(sub, sizeof(sub),
				    "%s.projected.sources[%zu].items[%zu].path", path, i, k);
				if (val_check_rel_path(v, sub, p->p_items[k].path) < 0)
					return -1;
			}
			break;
		case PROJ_DOWNWARD_API:
			for (k = 0; k < p->p_nitems; k++) {
				snprintf(sub, sizeof(sub), "%s.projected.sources[%zu]", path, i);
				if (val_check_downward_item(
				        v, sub, "downwardAPI", k, &p->p_items[k]) < 0)
					return -1;
				snprintf(sub, sizeof(sub),
				    "%s.projected.sources[%zu].items[%zu].path", path, i, k);
				if (val_check_rel_path(v, sub, p->p_items[k].path) < 0)
					return -1;
			}
			break;
		case PROJ_SA_TOKEN:
			snprintf(sub, sizeof(sub),
			    "%s.projected.sources[%zu].serviceAccountToken.path", path, i);
			if (val_check_rel_path(v, sub, p->p_path) < 0)
				return -1;
			if (p->p_expiration < 600)
				return val_vfail(v,
				    "%s.projected.sources[%zu].serviceAccountToken."
				    "expirationSeconds: may not specify a duration less than 10 "
				    "minutes",
				    path, i);
			if (p->p_expiration > 4294967296LL)
				return val_vfail(v,
				    "%s.projected.sources[%zu].serviceAccountToken."
				    "expirationSeconds: may not specify a duration larger than 2^32 "
				    "seconds",
				    path, i);
			break;
		case PROJ_OTHER:
			break;
		}
	}
	return 0;
}

static int
val_check_volume(struct val *v, const struct volume *vol, size_t idx)
{
	char   path[128], sub[300];
	size_t i;

	snprintf(path, sizeof(path), "spec.volumes[%zu]", idx);
	if (val_empty(vol->v_name))
		return val_vfail(v, "%s.name: required", path);
	if (!val_dns_label(vol->v_name))
		return val_vfail(v, "%s.name: \"%s\" is not a DNS-1123 label", path, vol->v_name);
	if (v->vdup[idx])
		return val_vfail(v, "%s.name: duplicate name \"%s\"", path, vol->v_name);
	if (vol->v_nsources > 1)
		return val_vfail(v, "%s: may not specify more than 1 volume type", path);
	switch (vol->v_kind) {
	case VOL_HOST_PATH:
		if (val_empty(vol->v_path))
			return val_vfail(v, "%s.hostPath.path: required", path);
		break;
	case VOL_CONFIG_MAP:
		if (val_empty(vol->v_source))
			return val_vfail(v, "%s.configMap.name: required", path);
		break;
	case VOL_SECRET:
		if (val_empty(vol->v_source))
			return val_vfail(v, "%s.secret.secretName: required", path);
		break;
	case VOL_PVC:
		if (val_empty(vol->v_source))
			return val_vfail(v, "%s.persistentVolumeClaim.claimName: required", path);
		break;
	case VOL_NFS:
		if (val_empty(vol->v_source))
			return val_vfail(v, "%s.nfs.server: required", path);
		if (val_empty(vol->v_path))
			return val_vfail(v, "%s.nfs.path: required", path);
		break;
	case VOL_CSI:
		if (val_empty(vol->v_source))
			return val_vfail(v, "%s.csi.driver: required", path);
		break;
	case VOL_EMPTY_DIR:
		if (vol->v_medium != NULL && *vol->v_medium != '\0' &&
		    strcmp(vol->v_medium, "Memory") != 0 &&
		    strncmp(vol->v_medium, "HugePages", 9) != 0)
			return val_vfail(
			    v, "%s.emptyDir.medium: unsupported value \"%s\"", path, vol->v_medium);
		if (vol->v_size_limit_milli < 0)
			return val_vfail(
			    v, "%s.emptyDir.sizeLimit: must be greater than or equal to 0", path);
		break;
	default:
		break;
	}
	snprintf(sub, sizeof(sub), "%s.%s.defaultMode", path, vol->v_kind_name);
	if (val_check_mode(v, sub, vol->v_default_mode) < 0)
		return -1;
	for (i = 0; i < vol->v_nitems; i++) {
		const struct key_to_path *kp = &vol->v_items[i];

		snprintf(sub, sizeof(sub), "%s.%s.items[%zu].key", path, vol->v_kind_name, i);
		if (vol->v_kind != VOL_DOWNWARD_API && val_check_key(v, sub, kp->key) < 0)
			return -1;
		snprintf(sub, sizeof(sub), "%s.%s.items[%zu].path", path, vol->v_kind_name, i);
		if (val_check_rel_path(v, sub, kp->path) < 0)
			return -1;
		snprintf(sub, sizeof(sub), "%s.%s.items[%zu].mode", path, vol->v_kind_name, i);
		if (val_check_mode(v, sub, kp->mode) < 0)
			return -1;
		if (vol->v_kind == VOL_DOWNWARD_API &&
		    val_check_downward_item(v, path, "downwardAPI", i, kp) < 0)
			return -1;
	}
	if (vol->v_kind == VOL_PROJECTED)
		return val_check_projections(v, path, vol);
	return 0;
}

static int
val_check_metadata(struct val *v, const struct pod *p)
{
	size_t i;

	if (val_empty(p->name))
		return val_vfail(v, "metadata.name: required");
	if (!val_dns_subdomain(p->name))
		return val_vfail(v, "metadata.name: \"%s\" is not a DNS-1123 subdomain", p->name);
	if (p->ns != NULL && !val_dns_label(p->ns))
		return val_vfail(v, "metadata.namespace: \"%s\" is not a DNS-1123 label", p->ns);
	for (i = 0; i < p->labels.n; i++) {
		if (!val_label_key(p->labels.items[i].k))
			return val_vfail(v, "metadata.labels: \"%s\" is not a valid label key",
			    p->labels.items[i].k);
		if (!val_qualified_part(p->labels.items[i].v, 1))
			return val_vfail(v,
			    "metadata.labels[%s]: \"%s\" is not a valid label value",
			    p->labels.items[i].k, p->labels.items[i].v);
	}
	for (i = 0; i < p->annotations.n; i++)
		if (!val_label_key(p->annotations.items[i].k))
			return val_vfail(v,
			    "metadata.annotations: \"%s\" is not a valid annotation key",
			    p->annotations.items[i].k);
	if (p->deletion_grace.set && p->deletion_grace.v < 0)
		return val_vfail(v,
		    "metadata.deletionGracePeriodSeconds: must be greater than or "
		    "equal to 0");
	return 0;
}

/* One node selector requirement, as the API server's validation of nodeSelectorTerms. */
static int
val_check_ns_requirement(struct val *v, const struct ns_requirement *r, const char *path, int field)
{
	char  *end;
	size_t i;

	if (val_empty(r->key))
		return val_vfail(v, "%s.key: required", path);
	if (field && strcmp(r->key, "metadata.name") != 0)
		return val_vfail(v, "%s.key: not a valid field selector key \"%s\"", path, r->key);
	switch (r->op) {
	case NS_IN:
	case NS_NOT_IN:
		if (field && r->values.n != 1)
			return val_vfail(v, "%s.values: must have one element", path);
		if (r->values.n == 0)
			return val_vfail(v,
			    "%s.values: must be specified when `operator` is 'In' or 'NotIn'",
			    path);
		break;
	case NS_EXISTS:
	case NS_DOES_NOT_EXIST:
		if (field)
			return val_vfail(v, "%s.operator: not a valid selector operator", path);
		if (r->values.n > 0)
			return val_vfail(v,
			    "%s.values: may not be specified when `operator` is 'Exists' or "
			    "'DoesNotExist'",
			    path);
		break;
	case NS_GT:
	case NS_LT:
		if (field)
			return val_vfail(v, "%s.operator: not a valid selector operator", path);
		if (r->values.n != 1)
			return val_vfail(v,
			    "%s.values: must be specified single value when `operator` is "
			    "'Lt' or 'Gt'",
			    path);
		for (i = 0; i < r->values.n; i++) {
			(void)strtoll(r->values.v[i], &end, 10);
			if (r->values.v[i][0] == '\0' || *end != '\0')
				return val_vfail(v, "%s.values[%zu]: must be an integer", path, i);
		}
		break;
	default:
		return val_vfail(v, "%s.operator: not a valid selector operator", path);
	}
	return 0;
}

static int
val_check_affinity(struct val *v, const struct node_affinity *a)
{
	char   path[160];
	size_t i, j;

	if (a == NULL)
		return 0;
	if (a->nterms == 0)
		return val_vfail(v,
		    "spec.affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution."
		    "nodeSelectorTerms: Required value: must have at least one node selector term");
	for (i = 0; i < a->nterms; i++) {
		for (j = 0; j < a->terms[i].nexprs; j++) {
			snprintf(path, sizeof(path),
			    "spec.affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution."
			    "nodeSelectorTerms[%zu].matchExpressions[%zu]",
			    i, j);
			if (val_check_ns_requirement(v, &a->terms[i].exprs[j], path, 0) < 0)
				return -1;
		}
		for (j = 0; j < a->terms[i].nfields; j++) {
			snprintf(path, sizeof(path),
			    "spec.affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution."
			    "nodeSelectorTerms[%zu].matchFields[%zu]",
			    i, j);
			if (val_check_ns_requirement(v, &a->terms[i].fields[j], path, 1) < 0)
				return -1;
		}
	}
	return 0;
}

/* Containers per pod: each is a process, a runtime record and calls on every sync; past
 * this a pod cannot be run nor stopped in reasonable time (issue 20, case 5). */
#define POD_MAX_CONTAINERS 1000

static int
val_check_pod_spec(struct val *v, const struct pod *p)
{
	size_t i;

	if (p->ncontainers == 0)
		return val_vfail(v, "spec.containers: required");
	if (p->ncontainers + p->ninit_containers + p->nephemeral_containers > POD_MAX_CONTAINERS)
		return val_vfail(v,
		    "spec.containers: %zu containers (init, regular and ephemeral together) is over "
		    "kletd's limit of %d per pod",
		    p->ncontainers + p->ninit_containers + p->nephemeral_containers,
		    POD_MAX_CONTAINERS);
	if (p->termination_grace.set && p->termination_grace.v < 0)
		return val_vfail(v,
		    "spec.terminationGracePeriodSeconds: must be greater than or "
		    "equal to 0");
	if (p->active_deadline.set && p->active_deadline.v < 1)
		return val_vfail(v, "spec.activeDeadlineSeconds: must be greater than 0");
	if (p->hostname != NULL && !val_dns_label(p->hostname))
		return val_vfail(v, "spec.hostname: \"%s\" is not a DNS-1123 label", p->hostname);
	if (p->subdomain != NULL && !val_dns_label(p->subdomain))
		return val_vfail(v, "spec.subdomain: \"%s\" is not a DNS-1123 label", p->subdomain);
	if (p->dns_policy == DNS_NONE && p->dns_config == NULL)
		return val_vfail(v, "spec.dnsConfig: required when dnsPolicy is None");
	if (p->dns_config != NULL) {
		if (p->dns_policy == DNS_NONE && p->dns_config->nameservers.n == 0)
			return val_vfail(v,
			    "spec.dnsConfig.nameservers: at least one required when "
			    "dnsPolicy is None");
		if (p->dns_config->nameservers.n > 3)
			return val_vfail(v, "spec.dnsConfig.nameservers: at most 3 allowed");
		if (p->dns_config->searches.n > 32)
			return val_vfail(v, "spec.dnsConfig.searches: at most 32 allowed");
		for (i = 0; i < p->dns_config->options.n; i++)
			if (val_empty(p->dns_config->options.items[i].k))
				return val_vfail(
				    v, "spec.dnsConfig.options[%zu].name: required", i);
	}
	if (val_check_affinity(v, p->node_affinity) < 0)
		return -1;
	if (p->os_name != NULL && strcmp(p->os_name, "linux") != 0 &&
	    strcmp(p->os_name, "windows") != 0)
		return val_vfail(v,
		    "spec.os.name: Unsupported value: \"%s\": supported values: "
		    "\"linux\", \"windows\"",
		    p->os_name);
	for (i = 0; i < p->ntolerations; i++) {
		const struct toleration *t = &p->tolerations[i];

		if (t->op != NULL && strcmp(t->op, "Exists") != 0 && strcmp(t->op, "Equal") != 0)
			return val_vfail(v,
			    "spec.tolerations[%zu].operator: unsupported value \"%s\"", i, t->op);
		if (t->op != NULL && strcmp(t->op, "Exists") == 0 && !val_empty(t->value))
			return val_vfail(v,
			    "spec.tolerations[%zu].value: must be empty when operator "
			    "is Exists",
			    i);
		if (val_empty(t->key) && (t->op == NULL || strcmp(t->op, "Exists") != 0))
			return val_vfail(v,
			    "spec.tolerations[%zu].operator: must be Exists when key "
			    "is empty",
			    i);
		if (t->effect != NULL && *t->effect != '\0' &&
		    strcmp(t->effect, "NoSchedule") != 0 &&
		    strcmp(t->effect, "PreferNoSchedule") != 0 &&
		    strcmp(t->effect, "NoExecute") != 0)
			return val_vfail(v,
			    "spec.tolerations[%zu].effect: unsupported value \"%s\"", i, t->effect);
	}
	for (i = 0; i < p->image_pull_secrets.n; i++)
		if (val_empty(p->image_pull_secrets.v[i]))
			return val_vfail(v, "spec.imagePullSecrets[%zu].name: required", i);
	if (p->security != NULL) {
		const struct pod_security_context *sc = p->security;

		if (sc->run_as_user.set && (sc->run_as_user.v < 0 || sc->run_as_user.v > INT32_MAX))
			return val_vfail(v,
			    "spec.securityContext.runAsUser: must be between 0 and "
			    "2147483647");
		if (sc->run_as_group.set &&
		    (sc->run_as_group.v < 0 || sc->run_as_group.v > INT32_MAX))
			return val_vfail(v,
			    "spec.securityContext.runAsGroup: must be between 0 and "
			    "2147483647");
		if (sc->fs_group.set && (sc->fs_group.v < 0 || sc->fs_group.v > INT32_MAX))
			return val_vfail(v,
			    "spec.securityContext.fsGroup: must be between 0 and "
			    "2147483647");
		for (i = 0; i < sc->nsupplemental_groups; i++)
			if (sc->supplemental_groups[i] < 0 ||
			    sc->supplemental_groups[i] > INT32_MAX)
				return val_vfail(v,
				    "spec.securityContext.supplementalGroups[%zu]: must be "
				    "between 0 and 2147483647",
				    i);
		for (i = 0; i < sc->sysctls.n; i++)
			if (val_empty(sc->sysctls.items[i].k))
				return val_vfail(
				    v, "spec.securityContext.sysctls[%zu].name: required", i);
		if (sc->seccomp.type != NULL) {
			struct security_context tmp;

			memset(&tmp, 0, sizeof(tmp));
			tmp.seccomp = sc->seccomp;
			if (val_check_security(v, "spec.securityContext", &tmp) < 0)
				return -1;
		}
	}
	for (i = 0; i < p->host_aliases.n; i++)
		if (val_empty(p->host_aliases.items[i].k))
			return val_vfail(v, "spec.hostAliases[%zu].ip: required", i);
	for (i = 0; i < p->nvolumes; i++)
		if (val_check_volume(v, &p->volumes[i], i) < 0)
			return -1;
	for (i = 0; i < p->ninit_containers; i++)
		if (val_check_container(v, p, &p->init_containers[i], CK_INIT, i, i) < 0)
			return -1;
	for (i = 0; i < p->ncontainers; i++)
		if (val_check_container(
		        v, p, &p->containers[i], CK_APP, i, p->ninit_containers + i) < 0)
			return -1;
	for (i = 0; i < p->nephemeral_containers; i++)
		if (val_check_container(v, p, &p->ephemeral_containers[i], CK_EPHEMERAL, i,
		        p->ninit_containers + p->ncontainers + i) < 0)
			return -1;
	return 0;
}

int
pod_uid_ok(const char *uid)
{
	size_t i, n = uid != NULL ? strlen(uid) : 0;

	if (n == 0 || n > 128 || !val_is_alnum((unsigned char)uid[0]))
		return 0;
	for (i = 0; i < n; i++)
		if (!val_is_alnum((unsigned char)uid[i]) && uid[i] != '-' && uid[i] != '_' &&
		    uid[i] != '.')
			return 0;
	return 1;
}

/* s for an error message: at most 64 bytes, anything but printable ASCII as '?'. */
static const char *
val_shown(const char *s, char *buf, size_t len)
{
	size_t i;

	for (i = 0; s != NULL && s[i] != '\0' && i + 4 < len && i < 64; i++)
		buf[i] = s[i] >= 0x20 && s[i] < 0x7f ? s[i] : '?';
	if (s != NULL && s[i] != '\0') {
		memcpy(buf + i, "...", 3);
		i += 3;
	}
	buf[i] = '\0';
	return buf;
}

static int
val_names_in(struct val *v, const struct container *cs, size_t n, enum container_kind kind)
{
	char   b[80];
	size_t i;

	for (i = 0; i < n; i++)
		if (!val_dns_label(cs[i].c_name))
			return val_vfail(v, "%s[%zu].name: \"%s\" is not a DNS-1123 label",
			    val_list_name(kind), i, val_shown(cs[i].c_name, b, sizeof(b)));
	return 0;
}

int
pod_validate_names(const struct pod *p, char *err, size_t errlen)
{
	struct val v;
	char       b[80];
	size_t     i;

	memset(&v, 0, sizeof(v));
	v.err = err;
	v.errlen = errlen;
	if (p == NULL)
		return val_vfail(&v, "no pod");
	if (!pod_uid_ok(p->uid))
		return val_vfail(&v,
		    "metadata.uid: \"%s\" is not a valid UID (1 to 128 of [A-Za-z0-9._-], "
		    "beginning with a letter or digit)",
		    val_shown(p->uid, b, sizeof(b)));
	if (p->ns != NULL && !val_dns_label(p->ns))
		return val_vfail(&v, "metadata.namespace: \"%s\" is not a DNS-1123 label",
		    val_shown(p->ns, b, sizeof(b)));
	if (!val_dns_subdomain(p->name))
		return val_vfail(&v, "metadata.name: \"%s\" is not a DNS-1123 subdomain",
		    val_shown(p->name, b, sizeof(b)));
	if (val_names_in(&v, p->init_containers, p->ninit_containers, CK_INIT) < 0 ||
	    val_names_in(&v, p->containers, p->ncontainers, CK_APP) < 0 ||
	    val_names_in(&v, p->ephemeral_containers, p->nephemeral_containers, CK_EPHEMERAL) < 0)
		return -1;
	for (i = 0; i < p->nvolumes; i++)
		if (!val_dns_label(p->volumes[i].v_name))
			return val_vfail(&v,
			    "spec.volumes[%zu].name: \"%s\" is not a DNS-1123 label", i,
			    val_shown(p->volumes[i].v_name, b, sizeof(b)));
	return 0;
}

int
pod_validate(const struct pod *p, char *err, size_t errlen)
{
	struct val   v;
	const char **names;
	size_t       i, n;
	int          rc;

	memset(&v, 0, sizeof(v));
	v.err = err;
	v.errlen = errlen;
	if (p == NULL)
		return val_vfail(&v, "no pod");
	n = p->ninit_containers + p->ncontainers + p->nephemeral_containers;
	names = xcalloc(n + 1, sizeof(*names));
	for (i = 0; i < p->ninit_containers; i++)
		names[i] = p->init_containers[i].c_name;
	for (i = 0; i < p->ncontainers; i++)
		names[p->ninit_containers + i] = p->containers[i].c_name;
	for (i = 0; i < p->nephemeral_containers; i++)
		names[p->ninit_containers + p->ncontainers + i] = p->ephemeral_containers[i].c_name;
	v.cdup = val_find_dups(names, n);
	free(names);
	v.vols = xcalloc(p->nvolumes + 1, sizeof(*v.vols));
	for (i = 0; i < p->nvolumes; i++)
		if (p->volumes[i].v_name != NULL)
			v.vols[v.nvols++] = p->volumes[i].v_name;
	names = xcalloc(p->nvolumes + 1, sizeof(*names));
	for (i = 0; i < p->nvolumes; i++)
		names[i] = p->volumes[i].v_name;
	v.vdup = val_find_dups(names, p->nvolumes);
	free(names);
	qsort(v.vols, v.nvols, sizeof(*v.vols), val_str_cmp);
	rc = val_check_metadata(&v, p) < 0 || val_check_pod_spec(&v, p) < 0 ? -1 : 0;
	free(v.cdup);
	free(v.vols);
	free(v.vdup);
	return rc;
}
