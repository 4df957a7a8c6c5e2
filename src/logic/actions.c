/* actions.c — computePodActions and the restart-policy helpers around it. Pure functions. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "logic/actions.h"
#include "core/util.h"
#include "pod/hash.h"

const struct probe_state *
probe_set_find(const struct probe_set *ps, const char *container_id)
{
	size_t i;

	if (ps == NULL || container_id == NULL)
		return NULL;
	for (i = 0; i < ps->n; i++)
		if (ps->v[i].container_id != NULL &&
		    strcmp(ps->v[i].container_id, container_id) == 0)
			return &ps->v[i];
	return NULL;
}

const struct rt_container *
actions_find_rt(const struct rt_pod_status *rt, const char *name)
{
	return rt_find_container(rt, name);
}

/* An init container with restartPolicy Always (the caller knows it is an init container). */
static int
actions_ic_is_sidecar(const struct container *c)
{
	return c->c_has_restart_policy && c->c_restart_policy == RESTART_ALWAYS;
}

static int
actions_restart_on_failure(const struct pod *p)
{
	return p->restart_policy != RESTART_NEVER;
}

int
init_container_failed(const struct rt_container *rc)
{
	if (rc == NULL)
		return 0;
	if (rc->reason != NULL && strstr(rc->reason, "OOMKilled") != NULL)
		return 1;
	if (rc->state == RT_EXITED && rc->exit_code != 0)
		return 1;
	return rc->state == RT_UNKNOWN;
}

/* The kubelet's containerSucceeded: any non-running instance with exit code 0. */
static int
container_succeeded(const struct rt_container *rc)
{
	return rc != NULL && rc->state != RT_RUNNING && rc->exit_code == 0;
}

/* The spec hash differs from the hash the runtime recorded when the container was made. */
static int
container_changed(const struct container *c, const struct rt_container *rc)
{
	return container_hash(c) != rc->hash;
}

static const char *
actions_rt_state_name(enum rt_cstate s)
{
	switch (s) {
	case RT_CREATED:
		return "created";
	case RT_RUNNING:
		return "running";
	case RT_EXITED:
		return "exited";
	default:
		return "unknown";
	}
}

int
pod_sandbox_changed(
    const struct pod *p, const struct rt_pod_status *rt, uint32_t *attempt, const char **sandbox_id)
{
	const struct rt_sandbox *sb;
	size_t                   i, ready = 0;
	enum rt_nsmode           want;

	*attempt = 0;
	*sandbox_id = NULL;
	if (rt == NULL || rt->nsandboxes == 0)
		return 1;
	/* Newest first; pick the newest anyway in case the list is not sorted. */
	sb = &rt->sandboxes[0];
	for (i = 0; i < rt->nsandboxes; i++) {
		if (rt->sandboxes[i].state == RT_SB_READY)
			ready++;
		if (rt->sandboxes[i].created_at > sb->created_at)
			sb = &rt->sandboxes[i];
	}
	*attempt = sb->attempt + 1;
	*sandbox_id = sb->id;
	if (ready > 1)
		return 1; /* several ready: reconcile by starting over */
	if (sb->state != RT_SB_READY)
		return 1;
	want = p->host_network ? RT_NS_NODE : RT_NS_POD;
	if (sb->network_mode != want) {
		*sandbox_id = NULL; /* the kubelet forgets the old sandbox here */
		return 1;
	}
	if (!p->host_network && (sb->ip == NULL || sb->ip[0] == '\0'))
		return 1;
	*attempt = sb->attempt;
	return 0;
}

int
container_should_restart(
    const struct container *c, const struct pod *p, const struct rt_pod_status *rt)
{
	const struct rt_container *rc;

	if (p->deletion_ts != 0)
		return 0;
	rc = rt_find_container(rt, c->c_name);
	if (rc == NULL)
		return 1;
	switch (rc->state) {
	case RT_RUNNING:
		return 0;
	case RT_UNKNOWN:
	case RT_CREATED:
		return 1;
	default:
		break;
	}
	if (p->restart_policy == RESTART_NEVER)
		return 0;
	if (p->restart_policy == RESTART_ON_FAILURE && rc->exit_code == 0)
		return 0;
	return 1;
}

int
pod_has_running_containers(const struct rt_pod_status *rt)
{
	size_t i;

	for (i = 0; rt != NULL && i < rt->ncontainers; i++)
		if (rt->containers[i].state != RT_EXITED)
			return 1;
	return 0;
}

int
pod_is_terminal(const struct pod *p, const struct rt_pod_status *rt)
{
	size_t i;

	/* A terminal phase the API already holds is final (kubelet restarts included). */
	if (p->status.phase == PHASE_SUCCEEDED || p->status.phase == PHASE_FAILED)
		return 1;
	if (p->restart_policy == RESTART_ALWAYS)
		return 0;
	if (p->restart_policy == RESTART_NEVER) {
		for (i = 0; i < p->ninit_containers; i++) {
			const struct container    *c = &p->init_containers[i];
			const struct rt_container *rc = rt_find_container(rt, c->c_name);

			if (!actions_ic_is_sidecar(c) && rc != NULL && rc->state == RT_EXITED &&
			    init_container_failed(rc))
				return 1;
		}
	}
	if (p->ncontainers == 0)
		return 0;
	for (i = 0; i < p->ncontainers; i++) {
		const struct rt_container *rc = rt_find_container(rt, p->containers[i].c_name);

		if (rc == NULL || rc->state != RT_EXITED)
			return 0;
		if (p->restart_policy == RESTART_ON_FAILURE && rc->exit_code != 0)
			return 0;
	}
	return 1;
}

/* ---- building the result ---- */

static void
actions_push_idx(size_t **v, size_t *n, size_t idx)
{
	*v = xreallocarray(*v, *n + 1, sizeof(**v));
	(*v)[(*n)++] = idx;
}

static void
actions_push_kill(struct pod_actions *a, const struct rt_container *rc, const struct container *c,
    enum container_kind kind, size_t index, enum kill_reason reason, char *message)
{
	struct kill_entry *k;
	size_t             i;

	/* One entry per container ID (the kubelet keys a map by it); the last write wins. */
	for (i = 0; i < a->nkill; i++) {
		if (strcmp(a->kill[i].container_id, rc->id ? rc->id : "") == 0) {
			free(a->kill[i].message);
			a->kill[i].message = message;
			a->kill[i].reason = reason;
			return;
		}
	}
	a->kill = xreallocarray(a->kill, a->nkill + 1, sizeof(*a->kill));
	k = &a->kill[a->nkill++];
	k->container_id = xstrdup(rc->id ? rc->id : "");
	k->name = xstrdup(c->c_name ? c->c_name : "");
	k->kind = kind;
	k->index = index;
	k->reason = reason;
	k->message = message;
}

static void
actions_clear_init_start(struct pod_actions *a)
{
	free(a->init_start);
	a->init_start = NULL;
	a->ninit_start = 0;
}

static int
actions_has_any_regular_container_created(const struct pod *p, const struct rt_pod_status *rt)
{
	size_t i;

	for (i = 0; i < p->ncontainers; i++) {
		const struct rt_container *rc = rt_find_container(rt, p->containers[i].c_name);

		if (rc != NULL && rc->state != RT_UNKNOWN)
			return 1;
	}
	return 0;
}

/*
 * Init containers (classic and sidecars), the kubelet's computeInitContainerActions.
 * Walks from the last init container back: the newest one with a runtime status decides
 * what starts next; the ones before it only matter when they are sidecars that must be kept
 * running. Returns 1 when the pod is initialized (app containers may be handled).
 */
static int
init_actions(const struct pod *p, const struct rt_pod_status *rt, const struct probe_set *ps,
    struct pod_actions *a)
{
	int    initialized = 0, prev_initialized, restart = actions_restart_on_failure(p);
	size_t i, n = p->ninit_containers;

	if (n == 0)
		return 1;
	/* A created or running app container means initialization finished at some point
	 * (its init containers may have been garbage-collected since). */
	for (i = 0; i < p->ncontainers; i++) {
		const struct rt_container *rc = rt_find_container(rt, p->containers[i].c_name);

		if (rc != NULL && (rc->state == RT_CREATED || rc->state == RT_RUNNING)) {
			initialized = 1;
			break;
		}
	}
	prev_initialized = initialized;

	for (i = n; i-- > 0;) {
		const struct container    *c = &p->init_containers[i];
		const struct rt_container *rc = rt_find_container(rt, c->c_name);
		const struct probe_state  *pr;
		int                        sidecar = actions_ic_is_sidecar(c);

		if (rc == NULL) {
			if (prev_initialized && sidecar)
				actions_push_idx(&a->init_start, &a->ninit_start, i);
			continue;
		}
		if (prev_initialized && !sidecar)
			continue;

		switch (rc->state) {
		case RT_CREATED:
			/* Created but never started: start it again rather than stay stuck. */
			actions_push_idx(&a->init_start, &a->ninit_start, i);
			break;
		case RT_RUNNING:
			if (!sidecar)
				break; /* wait for it to finish */
			pr = probe_set_find(ps, rc->id);
			if (c->c_startup != NULL) {
				if (pr == NULL || pr->startup == PROBE_NONE)
					break; /* not probed yet: wait */
				if (pr->startup == PROBE_FAILURE) {
					actions_push_kill(a, rc, c, CK_INIT, i, KILL_REASON_STARTUP,
					    xsprintf("Init container %s failed startup probe",
					        c->c_name));
					actions_push_idx(&a->init_start, &a->ninit_start, i);
					break;
				}
			}
			if (i == n - 1)
				initialized = 1;
			else if (!prev_initialized)
				actions_push_idx(&a->init_start, &a->ninit_start, i + 1);
			if (container_changed(c, rc)) {
				actions_push_kill(a, rc, c, CK_INIT, i, KILL_REASON_NONE,
				    xsprintf("Init container %s definition changed", c->c_name));
				actions_push_idx(&a->init_start, &a->ninit_start, i);
				break;
			}
			if (c->c_liveness != NULL && pr != NULL && pr->liveness == PROBE_FAILURE) {
				actions_push_kill(a, rc, c, CK_INIT, i, KILL_REASON_LIVENESS,
				    xsprintf("Init container %s failed liveness probe", c->c_name));
				actions_push_idx(&a->init_start, &a->ninit_start, i);
			}
			break;
		case RT_EXITED:
			if (sidecar) {
				actions_push_idx(&a->init_start, &a->ninit_start, i);
				break;
			}
			if (init_container_failed(rc)) {
				if (!restart) {
					a->kill_pod = 1;
					actions_clear_init_start(a);
					return 0;
				}
				actions_push_idx(&a->init_start, &a->ninit_start, i);
				break;
			}
			if (i == n - 1)
				initialized = 1;
			else
				actions_push_idx(&a->init_start, &a->ninit_start, i + 1);
			break;
		default: /* unknown: kill before restarting */
			if (!sidecar && !restart) {
				a->kill_pod = 1;
				actions_clear_init_start(a);
				return 0;
			}
			actions_push_kill(a, rc, c, CK_INIT, i, KILL_REASON_UNKNOWN,
			    xsprintf(
			        "Init container is in \"%s\" state, try killing it before restart",
			        actions_rt_state_name(rc->state)));
			actions_push_idx(&a->init_start, &a->ninit_start, i);
			break;
		}
		prev_initialized = 1;
	}
	if (!prev_initialized)
		actions_push_idx(&a->init_start, &a->ninit_start, 0);
	/* Collected last to first; start in spec order. */
	for (i = 0; i < a->ninit_start / 2; i++) {
		size_t t = a->init_start[i];

		a->init_start[i] = a->init_start[a->ninit_start - 1 - i];
		a->init_start[a->ninit_start - 1 - i] = t;
	}
	return initialized;
}

void
pod_actions_compute(const struct pod *p, const struct rt_pod_status *rt, const struct probe_set *ps,
    struct pod_actions *a)
{
	const char *sbid;
	size_t      i, keep = 0;
	int         create;

	memset(a, 0, sizeof(*a));
	a->next_init = -1;
	create = pod_sandbox_changed(p, rt, &a->attempt, &sbid);
	a->kill_pod = create;
	a->create_sandbox = create;
	a->sandbox_id = xstrdup(sbid);

	if (create) {
		size_t *start = NULL, nstart = 0;

		/* Never: a pod whose containers already ran does not get a new sandbox. */
		if (!actions_restart_on_failure(p) && a->attempt != 0 && rt != NULL &&
		    rt->ncontainers != 0) {
			a->create_sandbox = 0;
			goto out;
		}
		for (i = 0; i < p->ncontainers; i++) {
			if (p->restart_policy == RESTART_ON_FAILURE &&
			    container_succeeded(rt_find_container(rt, p->containers[i].c_name)))
				continue;
			actions_push_idx(&start, &nstart, i);
		}
		/* Nothing left to run once initialized: just kill what is left. */
		if (nstart == 0 && actions_has_any_regular_container_created(p, rt)) {
			a->create_sandbox = 0;
			goto out;
		}
		if (p->ninit_containers != 0) {
			free(start);
			actions_push_idx(&a->init_start, &a->ninit_start, 0);
			goto out;
		}
		a->start = start;
		a->nstart = nstart;
		goto out;
	}

	/* Ephemeral containers start even before initialization; never restarted. */
	for (i = 0; i < p->nephemeral_containers; i++)
		if (rt_find_container(rt, p->ephemeral_containers[i].c_name) == NULL)
			actions_push_idx(&a->ephemeral_start, &a->nephemeral_start, i);

	if (!init_actions(p, rt, ps, a) || a->kill_pod)
		goto out;

	for (i = 0; i < p->ncontainers; i++) {
		const struct container    *c = &p->containers[i];
		const struct rt_container *rc = rt_find_container(rt, c->c_name);
		const struct probe_state  *pr;
		const char                *why;
		enum kill_reason           reason = KILL_REASON_NONE;
		int                        restart = actions_restart_on_failure(p);

		if (rc == NULL || rc->state != RT_RUNNING) {
			if (container_should_restart(c, p, rt)) {
				actions_push_idx(&a->start, &a->nstart, i);
				if (rc != NULL && rc->state == RT_UNKNOWN)
					actions_push_kill(a, rc, c, CK_APP, i, KILL_REASON_UNKNOWN,
					    xsprintf("Container is in \"%s\" state, try killing it "
					             "before restart",
					        actions_rt_state_name(rc->state)));
			}
			continue;
		}
		pr = probe_set_find(ps, rc->id);
		if (container_changed(c, rc)) {
			why = "definition changed";
			restart = 1; /* a new spec always runs, whatever the policy */
		} else if (pr != NULL && pr->liveness == PROBE_FAILURE) {
			why = "failed liveness probe";
			reason = KILL_REASON_LIVENESS;
		} else if (pr != NULL && pr->startup == PROBE_FAILURE) {
			why = "failed startup probe";
			reason = KILL_REASON_STARTUP;
		} else {
			keep++;
			continue;
		}
		if (restart)
			actions_push_idx(&a->start, &a->nstart, i);
		actions_push_kill(a, rc, c, CK_APP, i, reason,
		    xsprintf(
		        "Container %s %s%s", c->c_name, why, restart ? ", will be restarted" : ""));
	}
	if (keep == 0 && a->nstart == 0) {
		a->kill_pod = 1;
		actions_clear_init_start(a); /* sidecars must not keep a finished pod alive */
	}
out:
	if (a->ninit_start > 0)
		a->next_init = (long)a->init_start[0];
}

void
pod_actions_clear(struct pod_actions *a)
{
	size_t i;

	if (a == NULL)
		return;
	free(a->sandbox_id);
	free(a->init_start);
	free(a->start);
	for (i = 0; i < a->nkill; i++) {
		free(a->kill[i].container_id);
		free(a->kill[i].name);
		free(a->kill[i].message);
	}
	free(a->kill);
	free(a->ephemeral_start);
	memset(a, 0, sizeof(*a));
	a->next_init = -1;
}

static void
actions_fmt_list(
    char **s, const char *label, const size_t *v, size_t n, const struct container *cs, size_t ncs)
{
	char  *t;
	size_t i;

	t = xsprintf("%s %s=[", *s, label);
	free(*s);
	*s = t;
	for (i = 0; i < n; i++) {
		const char *name = v[i] < ncs && cs[v[i]].c_name ? cs[v[i]].c_name : "?";

		t = xsprintf("%s%s%s", *s, i ? "," : "", name);
		free(*s);
		*s = t;
	}
	t = xsprintf("%s]", *s);
	free(*s);
	*s = t;
}

char *
pod_actions_format(const struct pod *p, const struct pod_actions *a)
{
	char  *s, *t;
	size_t i;

	s = xsprintf("killPod=%d createSandbox=%d sandbox=%s attempt=%u", a->kill_pod,
	    a->create_sandbox, a->sandbox_id ? a->sandbox_id : "-", (unsigned)a->attempt);
	actions_fmt_list(
	    &s, "init", a->init_start, a->ninit_start, p->init_containers, p->ninit_containers);
	actions_fmt_list(&s, "start", a->start, a->nstart, p->containers, p->ncontainers);
	t = xsprintf("%s kill=[", s);
	free(s);
	s = t;
	for (i = 0; i < a->nkill; i++) {
		t = xsprintf("%s%s%s", s, i ? "," : "", a->kill[i].name);
		free(s);
		s = t;
	}
	t = xsprintf("%s]", s);
	free(s);
	s = t;
	actions_fmt_list(&s, "ephemeral", a->ephemeral_start, a->nephemeral_start,
	    p->ephemeral_containers, p->nephemeral_containers);
	return s;
}
