/* pod.c — the v1.Pod model: references, free, look-ups and names. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/log.h"
#include "pod/pod.h"
#include "core/util.h"

/* ---- free ---- */

static void
pod_handler_clear(struct handler *h)
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
pod_probe_free(struct probe *p)
{
	if (p == NULL)
		return;
	pod_handler_clear(&p->pr_handler);
	free(p);
}

static void
pod_handler_free(struct handler *h)
{
	if (h == NULL)
		return;
	pod_handler_clear(h);
	free(h);
}

static void
pod_seccomp_clear(struct seccomp_profile *s)
{
	free(s->type);
	free(s->localhost);
}

static void
pod_security_free(struct security_context *sc)
{
	if (sc == NULL)
		return;
	strv_clear(&sc->cap_add);
	strv_clear(&sc->cap_drop);
	pod_seccomp_clear(&sc->seccomp);
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
	pod_probe_free(c->c_liveness);
	pod_probe_free(c->c_readiness);
	pod_probe_free(c->c_startup);
	pod_handler_free(c->c_post_start);
	pod_handler_free(c->c_pre_stop);
	free(c->c_term_msg_path);
	pod_security_free(c->c_security);
	free(c->c_target_container);
	memset(c, 0, sizeof(*c));
}

static void
pod_containers_free(struct container *cs, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		container_clear(&cs[i]);
	free(cs);
}

static void
pod_key_to_path_free(struct key_to_path *kp, size_t n)
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
pod_volume_clear(struct volume *v)
{
	size_t i;

	free(v->v_name);
	free(v->v_kind_name);
	free(v->v_medium);
	free(v->v_path);
	free(v->v_host_path_type);
	free(v->v_source);
	pod_key_to_path_free(v->v_items, v->v_nitems);
	for (i = 0; i < v->v_nprojections; i++) {
		free(v->v_projections[i].p_name);
		pod_key_to_path_free(v->v_projections[i].p_items, v->v_projections[i].p_nitems);
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
pod_statuses_free(struct container_status *v, size_t n)
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
	pod_statuses_free(st->init_statuses, st->ninit_statuses);
	pod_statuses_free(st->statuses, st->nstatuses);
	pod_statuses_free(st->ephemeral_statuses, st->nephemeral_statuses);
	memset(st, 0, sizeof(*st));
}

static void
pod_ns_requirements_free(struct ns_requirement *r, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++) {
		free(r[i].key);
		strv_clear(&r[i].values);
	}
	free(r);
}

void
node_affinity_free(struct node_affinity *a)
{
	size_t i;

	if (a == NULL)
		return;
	for (i = 0; i < a->nterms; i++) {
		pod_ns_requirements_free(a->terms[i].exprs, a->terms[i].nexprs);
		pod_ns_requirements_free(a->terms[i].fields, a->terms[i].nfields);
	}
	free(a->terms);
	free(a);
}

/* Frees everything (the last reference is gone). */
static void
pod_free(struct pod *p)
{
	size_t i;

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
	pod_containers_free(p->containers, p->ncontainers);
	pod_containers_free(p->init_containers, p->ninit_containers);
	pod_containers_free(p->ephemeral_containers, p->nephemeral_containers);
	for (i = 0; i < p->nvolumes; i++)
		pod_volume_clear(&p->volumes[i]);
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
	node_affinity_free(p->node_affinity);
	resource_list_clear(&p->overhead);
	free(p->os_name);
	free(p->runtime_class);
	free(p->service_account);
	free(p->scheduler_name);
	free(p->priority_class);
	if (p->security != NULL) {
		free(p->security->supplemental_groups);
		kvlist_clear(&p->security->sysctls);
		pod_seccomp_clear(&p->security->seccomp);
		free(p->security);
	}
	strv_clear(&p->image_pull_secrets);
	kvlist_clear(&p->host_aliases);
	pod_status_clear(&p->status);
	free(p);
}

/* ---- references ---- */

const struct pod *
pod_ref(const struct pod *p)
{
	struct pod *w = (struct pod *)p; /* the count is the one field a shared pod changes */

	if (w == NULL)
		return NULL;
	if (w->refs <= 0)
		fatalx("%s: pod %s has no reference (refs %d)", __func__, w->uid ? w->uid : "?",
		    w->refs);
	w->refs++;
	return p;
}

void
pod_unref(const struct pod *p)
{
	struct pod *w = (struct pod *)p;

	if (w == NULL)
		return;
	if (w->refs <= 0)
		fatalx("%s: pod %s has no reference (refs %d)", __func__, w->uid ? w->uid : "?",
		    w->refs);
	if (--w->refs == 0)
		pod_free(w);
}

struct pod *
pod_exclusive(const struct pod *p)
{
	return p != NULL && p->refs == 1 ? (struct pod *)p : NULL;
}

/* ---- look-ups and names ---- */

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
