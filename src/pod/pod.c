/* pod.c — the v1.Pod model: free, deep copy, look-ups and names. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pod/pod.h"
#include "core/util.h"

/* ---- free ---- */

void
strv_clear(struct strv *sv)
{
	size_t i;

	for (i = 0; i < sv->n; i++)
		free(sv->v[i]);
	free(sv->v);
	sv->v = NULL;
	sv->n = 0;
}

void
kvlist_clear(struct kvlist *l)
{
	size_t i;

	for (i = 0; i < l->n; i++) {
		free(l->items[i].k);
		free(l->items[i].v);
	}
	free(l->items);
	l->items = NULL;
	l->n = 0;
}

static void
resource_list_clear(struct resource_list *rl)
{
	size_t i;

	for (i = 0; i < rl->n; i++)
		free(rl->items[i].name);
	free(rl->items);
	rl->items = NULL;
	rl->n = 0;
}

static void
handler_clear(struct handler *h)
{
	size_t i;

	strv_clear(&h->h_exec);
	free(h->h_host);
	free(h->h_path);
	free(h->h_scheme);
	free(h->h_port.str);
	for (i = 0; i < h->h_nheaders; i++) {
		free(h->h_headers[i].name);
		free(h->h_headers[i].value);
	}
	free(h->h_headers);
	free(h->h_grpc_service);
	memset(h, 0, sizeof(*h));
}

static void
probe_free(struct probe *p)
{
	if (p == NULL)
		return;
	handler_clear(&p->pr_handler);
	free(p);
}

static void
handler_free(struct handler *h)
{
	if (h == NULL)
		return;
	handler_clear(h);
	free(h);
}

static void
seccomp_clear(struct seccomp_profile *s)
{
	free(s->type);
	free(s->localhost);
}

static void
security_free(struct security_context *sc)
{
	if (sc == NULL)
		return;
	strv_clear(&sc->cap_add);
	strv_clear(&sc->cap_drop);
	seccomp_clear(&sc->seccomp);
	free(sc->proc_mount);
	free(sc);
}

static void
container_clear(struct container *c)
{
	size_t i;

	free(c->c_name);
	free(c->c_image);
	strv_clear(&c->c_command);
	strv_clear(&c->c_args);
	free(c->c_working_dir);
	for (i = 0; i < c->c_nenv; i++) {
		struct env_var *e = &c->c_env[i];

		free(e->name);
		free(e->value);
		free(e->ref_name);
		free(e->ref_key);
		free(e->ref_container);
		free(e->ref_api_version);
	}
	free(c->c_env);
	for (i = 0; i < c->c_nenv_from; i++) {
		free(c->c_env_from[i].prefix);
		free(c->c_env_from[i].name);
	}
	free(c->c_env_from);
	for (i = 0; i < c->c_nports; i++) {
		free(c->c_ports[i].name);
		free(c->c_ports[i].host_ip);
	}
	free(c->c_ports);
	resource_list_clear(&c->c_resources.requests);
	resource_list_clear(&c->c_resources.limits);
	for (i = 0; i < c->c_nmounts; i++) {
		free(c->c_mounts[i].name);
		free(c->c_mounts[i].mount_path);
		free(c->c_mounts[i].sub_path);
	}
	free(c->c_mounts);
	probe_free(c->c_liveness);
	probe_free(c->c_readiness);
	probe_free(c->c_startup);
	handler_free(c->c_post_start);
	handler_free(c->c_pre_stop);
	free(c->c_term_msg_path);
	security_free(c->c_security);
	free(c->c_target_container);
	memset(c, 0, sizeof(*c));
}

static void
containers_free(struct container *cs, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		container_clear(&cs[i]);
	free(cs);
}

static void
key_to_path_free(struct key_to_path *kp, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++) {
		free(kp[i].key);
		free(kp[i].path);
		free(kp[i].res_container);
		free(kp[i].resource);
	}
	free(kp);
}

static void
volume_clear(struct volume *v)
{
	size_t i;

	free(v->v_name);
	free(v->v_kind_name);
	free(v->v_medium);
	free(v->v_path);
	free(v->v_host_path_type);
	free(v->v_source);
	key_to_path_free(v->v_items, v->v_nitems);
	for (i = 0; i < v->v_nprojections; i++) {
		free(v->v_projections[i].p_name);
		key_to_path_free(v->v_projections[i].p_items, v->v_projections[i].p_nitems);
		free(v->v_projections[i].p_audience);
		free(v->v_projections[i].p_path);
	}
	free(v->v_projections);
}

void
container_state_clear(struct container_state *s)
{
	free(s->reason);
	free(s->message);
	free(s->container_id);
	memset(s, 0, sizeof(*s));
}

void
container_status_clear(struct container_status *cs)
{
	free(cs->name);
	container_state_clear(&cs->state);
	container_state_clear(&cs->last_state);
	free(cs->image);
	free(cs->image_id);
	free(cs->container_id);
	memset(cs, 0, sizeof(*cs));
}

static void
statuses_free(struct container_status *v, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		container_status_clear(&v[i]);
	free(v);
}

void
pod_status_clear(struct pod_status *st)
{
	size_t i;

	for (i = 0; i < st->nconditions; i++) {
		free(st->conditions[i].type);
		free(st->conditions[i].reason);
		free(st->conditions[i].message);
	}
	free(st->conditions);
	free(st->message);
	free(st->reason);
	free(st->host_ip);
	free(st->pod_ip);
	strv_clear(&st->pod_ips);
	statuses_free(st->init_statuses, st->ninit_statuses);
	statuses_free(st->statuses, st->nstatuses);
	statuses_free(st->ephemeral_statuses, st->nephemeral_statuses);
	memset(st, 0, sizeof(*st));
}

void
pod_free(struct pod *p)
{
	size_t i;

	if (p == NULL)
		return;
	free(p->name);
	free(p->ns);
	free(p->uid);
	free(p->resource_version);
	kvlist_clear(&p->labels);
	kvlist_clear(&p->annotations);
	for (i = 0; i < p->nowners; i++) {
		free(p->owners[i].api_version);
		free(p->owners[i].kind);
		free(p->owners[i].name);
		free(p->owners[i].uid);
	}
	free(p->owners);
	containers_free(p->containers, p->ncontainers);
	containers_free(p->init_containers, p->ninit_containers);
	containers_free(p->ephemeral_containers, p->nephemeral_containers);
	for (i = 0; i < p->nvolumes; i++)
		volume_clear(&p->volumes[i]);
	free(p->volumes);
	free(p->hostname);
	free(p->subdomain);
	if (p->dns_config != NULL) {
		strv_clear(&p->dns_config->nameservers);
		strv_clear(&p->dns_config->searches);
		kvlist_clear(&p->dns_config->options);
		free(p->dns_config);
	}
	free(p->node_name);
	kvlist_clear(&p->node_selector);
	for (i = 0; i < p->ntolerations; i++) {
		free(p->tolerations[i].key);
		free(p->tolerations[i].op);
		free(p->tolerations[i].value);
		free(p->tolerations[i].effect);
	}
	free(p->tolerations);
	free(p->runtime_class);
	free(p->service_account);
	free(p->scheduler_name);
	free(p->priority_class);
	if (p->security != NULL) {
		free(p->security->supplemental_groups);
		kvlist_clear(&p->security->sysctls);
		seccomp_clear(&p->security->seccomp);
		free(p->security);
	}
	strv_clear(&p->image_pull_secrets);
	kvlist_clear(&p->host_aliases);
	pod_status_clear(&p->status);
	free(p);
}

/* ---- deep copy ---- */

/* Copies n elements of size sz (NULL when n is 0). */
static void *
dup_array(const void *src, size_t n, size_t sz)
{
	void *d;

	if (n == 0 || src == NULL)
		return NULL;
	d = xreallocarray(NULL, n, sz);
	memcpy(d, src, n * sz);
	return d;
}

static void
strv_copy(struct strv *d, const struct strv *s)
{
	size_t i;

	d->n = s->n;
	d->v = dup_array(s->v, s->n, sizeof(char *));
	for (i = 0; i < d->n; i++)
		d->v[i] = xstrdup(s->v[i]);
}

static void
kvlist_copy(struct kvlist *d, const struct kvlist *s)
{
	size_t i;

	d->n = s->n;
	d->items = dup_array(s->items, s->n, sizeof(struct kv));
	for (i = 0; i < d->n; i++) {
		d->items[i].k = xstrdup(s->items[i].k);
		d->items[i].v = xstrdup(s->items[i].v);
	}
}

static void
resource_list_copy(struct resource_list *d, const struct resource_list *s)
{
	size_t i;

	d->n = s->n;
	d->items = dup_array(s->items, s->n, sizeof(struct quantity));
	for (i = 0; i < d->n; i++)
		d->items[i].name = xstrdup(s->items[i].name);
}

static void
handler_copy(struct handler *d, const struct handler *s)
{
	size_t i;

	*d = *s;
	strv_copy(&d->h_exec, &s->h_exec);
	d->h_host = xstrdup(s->h_host);
	d->h_path = xstrdup(s->h_path);
	d->h_scheme = xstrdup(s->h_scheme);
	d->h_port.str = xstrdup(s->h_port.str);
	d->h_headers = dup_array(s->h_headers, s->h_nheaders, sizeof(struct http_header));
	for (i = 0; i < d->h_nheaders; i++) {
		d->h_headers[i].name = xstrdup(s->h_headers[i].name);
		d->h_headers[i].value = xstrdup(s->h_headers[i].value);
	}
	d->h_grpc_service = xstrdup(s->h_grpc_service);
}

static struct handler *
handler_dup(const struct handler *s)
{
	struct handler *d;

	if (s == NULL)
		return NULL;
	d = xcalloc(1, sizeof(*d));
	handler_copy(d, s);
	return d;
}

static struct probe *
probe_dup(const struct probe *s)
{
	struct probe *d;

	if (s == NULL)
		return NULL;
	d = xcalloc(1, sizeof(*d));
	*d = *s;
	handler_copy(&d->pr_handler, &s->pr_handler);
	return d;
}

static void
seccomp_copy(struct seccomp_profile *d, const struct seccomp_profile *s)
{
	d->type = xstrdup(s->type);
	d->localhost = xstrdup(s->localhost);
}

static struct security_context *
security_dup(const struct security_context *s)
{
	struct security_context *d;

	if (s == NULL)
		return NULL;
	d = xcalloc(1, sizeof(*d));
	*d = *s;
	strv_copy(&d->cap_add, &s->cap_add);
	strv_copy(&d->cap_drop, &s->cap_drop);
	seccomp_copy(&d->seccomp, &s->seccomp);
	d->proc_mount = xstrdup(s->proc_mount);
	return d;
}

static void
container_copy(struct container *d, const struct container *s)
{
	size_t i;

	*d = *s;
	d->c_name = xstrdup(s->c_name);
	d->c_image = xstrdup(s->c_image);
	strv_copy(&d->c_command, &s->c_command);
	strv_copy(&d->c_args, &s->c_args);
	d->c_working_dir = xstrdup(s->c_working_dir);
	d->c_env = dup_array(s->c_env, s->c_nenv, sizeof(struct env_var));
	for (i = 0; i < d->c_nenv; i++) {
		struct env_var *e = &d->c_env[i];

		e->name = xstrdup(e->name);
		e->value = xstrdup(e->value);
		e->ref_name = xstrdup(e->ref_name);
		e->ref_key = xstrdup(e->ref_key);
		e->ref_container = xstrdup(e->ref_container);
		e->ref_api_version = xstrdup(e->ref_api_version);
	}
	d->c_env_from = dup_array(s->c_env_from, s->c_nenv_from, sizeof(struct env_from));
	for (i = 0; i < d->c_nenv_from; i++) {
		d->c_env_from[i].prefix = xstrdup(d->c_env_from[i].prefix);
		d->c_env_from[i].name = xstrdup(d->c_env_from[i].name);
	}
	d->c_ports = dup_array(s->c_ports, s->c_nports, sizeof(struct container_port));
	for (i = 0; i < d->c_nports; i++) {
		d->c_ports[i].name = xstrdup(d->c_ports[i].name);
		d->c_ports[i].host_ip = xstrdup(d->c_ports[i].host_ip);
	}
	resource_list_copy(&d->c_resources.requests, &s->c_resources.requests);
	resource_list_copy(&d->c_resources.limits, &s->c_resources.limits);
	d->c_mounts = dup_array(s->c_mounts, s->c_nmounts, sizeof(struct volume_mount));
	for (i = 0; i < d->c_nmounts; i++) {
		d->c_mounts[i].name = xstrdup(d->c_mounts[i].name);
		d->c_mounts[i].mount_path = xstrdup(d->c_mounts[i].mount_path);
		d->c_mounts[i].sub_path = xstrdup(d->c_mounts[i].sub_path);
	}
	d->c_liveness = probe_dup(s->c_liveness);
	d->c_readiness = probe_dup(s->c_readiness);
	d->c_startup = probe_dup(s->c_startup);
	d->c_post_start = handler_dup(s->c_post_start);
	d->c_pre_stop = handler_dup(s->c_pre_stop);
	d->c_term_msg_path = xstrdup(s->c_term_msg_path);
	d->c_security = security_dup(s->c_security);
	d->c_target_container = xstrdup(s->c_target_container);
}

static struct container *
containers_dup(const struct container *s, size_t n)
{
	struct container *d;
	size_t            i;

	if (n == 0 || s == NULL)
		return NULL;
	d = xcalloc(n, sizeof(*d));
	for (i = 0; i < n; i++)
		container_copy(&d[i], &s[i]);
	return d;
}

static struct key_to_path *
key_to_path_dup(const struct key_to_path *s, size_t n)
{
	struct key_to_path *d = dup_array(s, n, sizeof(*s));
	size_t              i;

	for (i = 0; i < n; i++) {
		d[i].key = xstrdup(d[i].key);
		d[i].path = xstrdup(d[i].path);
		d[i].res_container = xstrdup(d[i].res_container);
		d[i].resource = xstrdup(d[i].resource);
	}
	return d;
}

static void
volume_copy(struct volume *d, const struct volume *s)
{
	size_t i;

	*d = *s;
	d->v_name = xstrdup(s->v_name);
	d->v_kind_name = xstrdup(s->v_kind_name);
	d->v_medium = xstrdup(s->v_medium);
	d->v_path = xstrdup(s->v_path);
	d->v_host_path_type = xstrdup(s->v_host_path_type);
	d->v_source = xstrdup(s->v_source);
	d->v_items = key_to_path_dup(s->v_items, s->v_nitems);
	d->v_projections =
	    dup_array(s->v_projections, s->v_nprojections, sizeof(struct volume_projection));
	for (i = 0; i < d->v_nprojections; i++) {
		struct volume_projection *p = &d->v_projections[i];

		p->p_name = xstrdup(p->p_name);
		p->p_items = key_to_path_dup(p->p_items, p->p_nitems);
		p->p_audience = xstrdup(p->p_audience);
		p->p_path = xstrdup(p->p_path);
	}
}

static void
cstate_copy(struct container_state *d, const struct container_state *s)
{
	*d = *s;
	d->reason = xstrdup(s->reason);
	d->message = xstrdup(s->message);
	d->container_id = xstrdup(s->container_id);
}

static struct container_status *
statuses_dup(const struct container_status *s, size_t n)
{
	struct container_status *d;
	size_t                   i;

	if (n == 0 || s == NULL)
		return NULL;
	d = xcalloc(n, sizeof(*d));
	for (i = 0; i < n; i++) {
		d[i] = s[i];
		d[i].name = xstrdup(s[i].name);
		cstate_copy(&d[i].state, &s[i].state);
		cstate_copy(&d[i].last_state, &s[i].last_state);
		d[i].image = xstrdup(s[i].image);
		d[i].image_id = xstrdup(s[i].image_id);
		d[i].container_id = xstrdup(s[i].container_id);
	}
	return d;
}

static void
pod_status_copy(struct pod_status *d, const struct pod_status *s)
{
	size_t i;

	*d = *s;
	d->conditions = dup_array(s->conditions, s->nconditions, sizeof(struct pod_condition));
	for (i = 0; i < d->nconditions; i++) {
		d->conditions[i].type = xstrdup(d->conditions[i].type);
		d->conditions[i].reason = xstrdup(d->conditions[i].reason);
		d->conditions[i].message = xstrdup(d->conditions[i].message);
	}
	d->message = xstrdup(s->message);
	d->reason = xstrdup(s->reason);
	d->host_ip = xstrdup(s->host_ip);
	d->pod_ip = xstrdup(s->pod_ip);
	strv_copy(&d->pod_ips, &s->pod_ips);
	d->init_statuses = statuses_dup(s->init_statuses, s->ninit_statuses);
	d->statuses = statuses_dup(s->statuses, s->nstatuses);
	d->ephemeral_statuses = statuses_dup(s->ephemeral_statuses, s->nephemeral_statuses);
}

struct pod *
pod_dup(const struct pod *s)
{
	struct pod *d;
	size_t      i;

	d = xcalloc(1, sizeof(*d));
	if (s == NULL)
		return d;
	*d = *s;
	d->name = xstrdup(s->name);
	d->ns = xstrdup(s->ns);
	d->uid = xstrdup(s->uid);
	d->resource_version = xstrdup(s->resource_version);
	kvlist_copy(&d->labels, &s->labels);
	kvlist_copy(&d->annotations, &s->annotations);
	d->owners = dup_array(s->owners, s->nowners, sizeof(struct owner_ref));
	for (i = 0; i < d->nowners; i++) {
		d->owners[i].api_version = xstrdup(d->owners[i].api_version);
		d->owners[i].kind = xstrdup(d->owners[i].kind);
		d->owners[i].name = xstrdup(d->owners[i].name);
		d->owners[i].uid = xstrdup(d->owners[i].uid);
	}
	d->containers = containers_dup(s->containers, s->ncontainers);
	d->init_containers = containers_dup(s->init_containers, s->ninit_containers);
	d->ephemeral_containers = containers_dup(s->ephemeral_containers, s->nephemeral_containers);
	d->volumes = NULL;
	if (s->nvolumes > 0) {
		d->volumes = xcalloc(s->nvolumes, sizeof(struct volume));
		for (i = 0; i < s->nvolumes; i++)
			volume_copy(&d->volumes[i], &s->volumes[i]);
	}
	d->hostname = xstrdup(s->hostname);
	d->subdomain = xstrdup(s->subdomain);
	if (s->dns_config != NULL) {
		d->dns_config = xcalloc(1, sizeof(*d->dns_config));
		strv_copy(&d->dns_config->nameservers, &s->dns_config->nameservers);
		strv_copy(&d->dns_config->searches, &s->dns_config->searches);
		kvlist_copy(&d->dns_config->options, &s->dns_config->options);
	}
	d->node_name = xstrdup(s->node_name);
	kvlist_copy(&d->node_selector, &s->node_selector);
	d->tolerations = dup_array(s->tolerations, s->ntolerations, sizeof(struct toleration));
	for (i = 0; i < d->ntolerations; i++) {
		d->tolerations[i].key = xstrdup(d->tolerations[i].key);
		d->tolerations[i].op = xstrdup(d->tolerations[i].op);
		d->tolerations[i].value = xstrdup(d->tolerations[i].value);
		d->tolerations[i].effect = xstrdup(d->tolerations[i].effect);
	}
	d->runtime_class = xstrdup(s->runtime_class);
	d->service_account = xstrdup(s->service_account);
	d->scheduler_name = xstrdup(s->scheduler_name);
	d->priority_class = xstrdup(s->priority_class);
	if (s->security != NULL) {
		d->security = xcalloc(1, sizeof(*d->security));
		*d->security = *s->security;
		d->security->supplemental_groups = dup_array(s->security->supplemental_groups,
		    s->security->nsupplemental_groups, sizeof(int64_t));
		kvlist_copy(&d->security->sysctls, &s->security->sysctls);
		seccomp_copy(&d->security->seccomp, &s->security->seccomp);
	}
	strv_copy(&d->image_pull_secrets, &s->image_pull_secrets);
	kvlist_copy(&d->host_aliases, &s->host_aliases);
	pod_status_copy(&d->status, &s->status);
	return d;
}

/* ---- look-ups and names ---- */

const char *
kvlist_get(const struct kvlist *l, const char *key)
{
	size_t i;

	if (l == NULL || key == NULL)
		return NULL;
	for (i = 0; i < l->n; i++)
		if (l->items[i].k != NULL && strcmp(l->items[i].k, key) == 0)
			return l->items[i].v != NULL ? l->items[i].v : "";
	return NULL;
}

const struct container *
pod_find_container(const struct pod *p, const char *name)
{
	size_t i;

	if (p == NULL || name == NULL)
		return NULL;
	for (i = 0; i < p->ncontainers; i++)
		if (streq_null(p->containers[i].c_name, name))
			return &p->containers[i];
	for (i = 0; i < p->ninit_containers; i++)
		if (streq_null(p->init_containers[i].c_name, name))
			return &p->init_containers[i];
	for (i = 0; i < p->nephemeral_containers; i++)
		if (streq_null(p->ephemeral_containers[i].c_name, name))
			return &p->ephemeral_containers[i];
	return NULL;
}

const struct quantity *
resource_list_get(const struct resource_list *rl, const char *name)
{
	size_t i;

	if (rl == NULL || name == NULL)
		return NULL;
	for (i = 0; i < rl->n; i++)
		if (streq_null(rl->items[i].name, name))
			return &rl->items[i];
	return NULL;
}

const char *
pod_phase_name(enum pod_phase ph)
{
	switch (ph) {
	case PHASE_PENDING:
		return "Pending";
	case PHASE_RUNNING:
		return "Running";
	case PHASE_SUCCEEDED:
		return "Succeeded";
	case PHASE_FAILED:
		return "Failed";
	case PHASE_UNKNOWN:
		return "Unknown";
	}
	return "Unknown";
}

const char *
restart_policy_name(enum restart_policy rp)
{
	switch (rp) {
	case RESTART_ALWAYS:
		return "Always";
	case RESTART_ON_FAILURE:
		return "OnFailure";
	case RESTART_NEVER:
		return "Never";
	}
	return "Always";
}

int
container_is_sidecar(const struct container *c)
{
	return c != NULL && c->c_kind == CK_INIT && c->c_has_restart_policy &&
	    c->c_restart_policy == RESTART_ALWAYS;
}
