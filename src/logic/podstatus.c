/* podstatus.c — the API pod status from the pod, the runtime's view and probe results
 * (the kubelet's generateAPIPodStatus, getPhase, convertToAPIContainerStatuses, the prober's
 * ready/started, the status manager's mergePodStatus), and its JSON. Pure functions.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "logic/actions.h"
#include "logic/podstatus.h"
#include "core/util.h"
#include "pod/rfc3339.h"

#define REASON_CONTAINER_CREATING "ContainerCreating"
#define REASON_POD_INITIALIZING   "PodInitializing"

/* The condition types the kubelet owns (the resize ones only appear with in-place resize,
 * which klet does not do, but they stay the kubelet's to drop). */
static const char *const kubelet_conditions[] = {
	"PodScheduled",
	"Ready",
	"Initialized",
	"ContainersReady",
	"PodReadyToStartContainers",
	"PodResizeInProgress",
	"PodResizePending",
};

int
podstatus_condition_is_kubelet_owned(const char *type)
{
	size_t i;

	for (i = 0; type != NULL && i < nitems(kubelet_conditions); i++)
		if (strcmp(type, kubelet_conditions[i]) == 0)
			return 1;
	return 0;
}

/* ---- copies ---- */

static void
podstatus_state_copy(struct container_state *d, const struct container_state *s)
{
	*d = *s;
	d->reason = xstrdup(s->reason);
	d->message = xstrdup(s->message);
	d->container_id = xstrdup(s->container_id);
}

static void
podstatus_cstatus_copy(struct container_status *d, const struct container_status *s)
{
	*d = *s;
	d->name = xstrdup(s->name);
	podstatus_state_copy(&d->state, &s->state);
	podstatus_state_copy(&d->last_state, &s->last_state);
	d->image = xstrdup(s->image);
	d->image_id = xstrdup(s->image_id);
	d->container_id = xstrdup(s->container_id);
}

static struct container_status *
podstatus_cstatuses_dup(const struct container_status *v, size_t n)
{
	struct container_status *d;
	size_t                   i;

	if (n == 0)
		return NULL;
	d = xcalloc(n, sizeof(*d));
	for (i = 0; i < n; i++)
		podstatus_cstatus_copy(&d[i], &v[i]);
	return d;
}

static void
podstatus_condition_copy(struct pod_condition *d, const struct pod_condition *s)
{
	*d = *s;
	d->type = xstrdup(s->type);
	d->reason = xstrdup(s->reason);
	d->message = xstrdup(s->message);
}

static void
podstatus_condition_clear(struct pod_condition *c)
{
	free(c->type);
	free(c->reason);
	free(c->message);
	memset(c, 0, sizeof(*c));
}

void
podstatus_copy(struct pod_status *d, const struct pod_status *s)
{
	size_t i;

	*d = *s;
	d->conditions = s->nconditions ? xcalloc(s->nconditions, sizeof(*d->conditions)) : NULL;
	for (i = 0; i < s->nconditions; i++)
		podstatus_condition_copy(&d->conditions[i], &s->conditions[i]);
	d->message = xstrdup(s->message);
	d->reason = xstrdup(s->reason);
	d->host_ip = xstrdup(s->host_ip);
	d->pod_ip = xstrdup(s->pod_ip);
	d->pod_ips.v = s->pod_ips.n ? xcalloc(s->pod_ips.n, sizeof(char *)) : NULL;
	for (i = 0; i < s->pod_ips.n; i++)
		d->pod_ips.v[i] = xstrdup(s->pod_ips.v[i]);
	d->init_statuses = podstatus_cstatuses_dup(s->init_statuses, s->ninit_statuses);
	d->statuses = podstatus_cstatuses_dup(s->statuses, s->nstatuses);
	d->ephemeral_statuses =
	    podstatus_cstatuses_dup(s->ephemeral_statuses, s->nephemeral_statuses);
}

const struct pod_condition *
podstatus_find_condition(const struct pod_status *s, const char *type)
{
	size_t i;

	for (i = 0; s != NULL && i < s->nconditions; i++)
		if (streq_null(s->conditions[i].type, type))
			return &s->conditions[i];
	return NULL;
}

static struct pod_condition *
podstatus_find_condition_mut(struct pod_status *s, const char *type)
{
	return (struct pod_condition *)podstatus_find_condition(s, type);
}

static const struct container_status *
podstatus_find_cstatus(const struct container_status *v, size_t n, const char *name)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (streq_null(v[i].name, name))
			return &v[i];
	return NULL;
}

/* ---- QoS ---- */

struct qos_sum {
	int64_t cpu, mem;
	int     has_cpu, has_mem;
};

static void
qos_add(struct qos_sum *q, const char *name, int64_t v)
{
	if (v <= 0)
		return;
	if (strcmp(name, "cpu") == 0) {
		q->cpu += v;
		q->has_cpu = 1;
	} else if (strcmp(name, "memory") == 0) {
		q->mem += v;
		q->has_mem = 1;
	}
}

static void
qos_container(const struct container *c, struct qos_sum *req, struct qos_sum *lim, int *guaranteed)
{
	const struct resource_list *rq = &c->c_resources.requests, *lm = &c->c_resources.limits;
	size_t                      i;
	int                         lcpu = 0, lmem = 0;

	for (i = 0; i < rq->n; i++)
		qos_add(req, rq->items[i].name, rq->items[i].milli);
	/* The API defaults a missing request to its limit. */
	for (i = 0; i < lm->n; i++)
		if (resource_list_get(rq, lm->items[i].name) == NULL)
			qos_add(req, lm->items[i].name, lm->items[i].milli);
	for (i = 0; i < lm->n; i++) {
		if (lm->items[i].milli <= 0)
			continue;
		if (strcmp(lm->items[i].name, "cpu") == 0)
			lcpu = 1;
		else if (strcmp(lm->items[i].name, "memory") == 0)
			lmem = 1;
		qos_add(lim, lm->items[i].name, lm->items[i].milli);
	}
	if (!lcpu || !lmem)
		*guaranteed = 0;
}

enum qos_class
pod_qos_class(const struct pod *p)
{
	struct qos_sum req = { 0 }, lim = { 0 };
	int            guaranteed = 1;
	size_t         i;

	for (i = 0; i < p->ncontainers; i++)
		qos_container(&p->containers[i], &req, &lim, &guaranteed);
	for (i = 0; i < p->ninit_containers; i++)
		qos_container(&p->init_containers[i], &req, &lim, &guaranteed);
	if (!req.has_cpu && !req.has_mem && !lim.has_cpu && !lim.has_mem)
		return QOS_BEST_EFFORT;
	if (guaranteed) {
		if (req.has_cpu && (!lim.has_cpu || lim.cpu != req.cpu))
			guaranteed = 0;
		if (req.has_mem && (!lim.has_mem || lim.mem != req.mem))
			guaranteed = 0;
		if (req.has_cpu != lim.has_cpu || req.has_mem != lim.has_mem)
			guaranteed = 0;
	}
	return guaranteed ? QOS_GUARANTEED : QOS_BURSTABLE;
}

const char *
qos_class_name(enum qos_class q)
{
	switch (q) {
	case QOS_GUARANTEED:
		return "Guaranteed";
	case QOS_BURSTABLE:
		return "Burstable";
	default:
		return "BestEffort";
	}
}

/* ---- container statuses ---- */

static int64_t
podstatus_ns_to_s(int64_t ns)
{
	return ns > 0 ? ns / 1000000000LL : 0;
}

static char *
podstatus_full_cid(const char *runtime, const char *id)
{
	if (id == NULL || id[0] == '\0')
		return NULL;
	return xsprintf("%s://%s", runtime != NULL ? runtime : "containerd", id);
}

/* 1 for an image ID ("sha256:HEX", or 64 hex digits) rather than an image name. */
static int
podstatus_image_is_id(const char *s)
{
	size_t n;

	if (s == NULL)
		return 0;
	if (strncmp(s, "sha256:", 7) == 0)
		return 1;
	n = strspn(s, "0123456789abcdef");
	return n == 64 && s[n] == '\0';
}

/* One runtime instance as an API status (convertContainerStatus): image is the image's name
 * as the runtime reports it (containerd's ContainerStatus: its repo tag), imageID the digest
 * or ID it resolved to. A runtime view that has only the ID (the container was created from
 * it: ListContainers) shows the name the pod asked for (spec_image). */
static void
podstatus_convert_rt(const struct rt_container *rc, const struct container_status *old,
    const char *runtime, const char *spec_image, struct container_status *o)
{
	int is_id = podstatus_image_is_id(rc->image);

	memset(o, 0, sizeof(*o));
	o->name = xstrdup(rc->name);
	o->restart_count = rc->restart_count;
	o->image =
	    xstrdup(rc->image != NULL && (!is_id || spec_image == NULL) ? rc->image : spec_image);
	o->image_id =
	    xstrdup(rc->image_ref != NULL && rc->image_ref[0] != '\0' ? rc->image_ref
	                                                              : (is_id ? rc->image : NULL));
	o->container_id = podstatus_full_cid(runtime, rc->id);
	switch (rc->state) {
	case RT_RUNNING:
		o->state.kind = CSTATE_RUNNING;
		o->state.started_at = podstatus_ns_to_s(rc->started_at);
		break;
	case RT_CREATED:
		o->state.kind = CSTATE_WAITING;
		break;
	case RT_EXITED:
		o->state.kind = CSTATE_TERMINATED;
		o->state.exit_code = rc->exit_code;
		if (rc->reason != NULL && rc->reason[0] != '\0')
			o->state.reason = xstrdup(rc->reason);
		else
			o->state.reason = xstrdup(rc->exit_code == 0 ? "Completed" : "Error");
		if (rc->message != NULL && rc->message[0] != '\0')
			o->state.message = xstrdup(rc->message);
		o->state.started_at = podstatus_ns_to_s(rc->started_at);
		o->state.finished_at = podstatus_ns_to_s(rc->finished_at);
		o->state.container_id = xstrdup(o->container_id);
		break;
	default:
		if (old != NULL && old->state.kind == CSTATE_RUNNING) {
			/* It ran and is gone: report it stopped, not "never ran". */
			o->state.kind = CSTATE_TERMINATED;
			o->state.reason = xstrdup("ContainerStatusUnknown");
			o->state.message = xstrdup(
			    "The container could not be located when the pod was terminated");
			o->state.exit_code = 137;
			o->restart_count = old->restart_count + 1;
		} else
			o->state.kind = CSTATE_WAITING;
		break;
	}
}

static const struct start_error *
podstatus_find_start_error(const struct start_errors *e, const char *name)
{
	size_t i;

	for (i = 0; e != NULL && i < e->n; i++)
		if (streq_null(e->v[i].name, name))
			return &e->v[i];
	return NULL;
}

static int
podstatus_cmp_status_name(const void *a, const void *b)
{
	const struct container_status *x = a, *y = b;

	return strcmp(x->name ? x->name : "", y->name ? y->name : "");
}

/* The two newest instances of one container name in rt, newest first. Returns 0..2. */
static size_t
podstatus_rt_instances(
    const struct rt_pod_status *rt, const char *name, const struct rt_container *out[2])
{
	size_t i, n = 0;

	for (i = 0; rt != NULL && i < rt->ncontainers; i++) {
		const struct rt_container *rc = &rt->containers[i];

		if (!streq_null(rc->name, name))
			continue;
		if (n == 0) {
			out[n++] = rc;
		} else if (rc->created_at > out[0]->created_at) {
			out[1] = out[0];
			out[0] = rc;
			n = 2;
		} else if (n == 1 || rc->created_at > out[1]->created_at) {
			out[1] = rc;
			n = 2;
		}
	}
	return n;
}

/* convertToAPIContainerStatuses for one list of containers. */
static struct container_status *
podstatus_convert_list(const struct podstatus_input *in, const struct container *cs, size_t ncs,
    const struct container_status *olds, size_t nolds, int is_init, size_t *nout)
{
	const struct pod        *p = in->pod;
	struct container_status *v;
	const char              *defreason;
	size_t                   i;

	*nout = ncs;
	if (ncs == 0)
		return NULL;
	v = xcalloc(ncs, sizeof(*v));
	defreason = p->ninit_containers > 0 ? REASON_POD_INITIALIZING : REASON_CONTAINER_CREATING;
	for (i = 0; i < ncs; i++) {
		const struct container        *c = &cs[i];
		const struct container_status *old = podstatus_find_cstatus(olds, nolds, c->c_name);
		struct container_status       *st = &v[i];
		const struct rt_container     *inst[2] = { NULL, NULL };
		size_t                         ninst;

		/* Defaults: waiting, or what the old status knew. */
		if (old != NULL && old->state.kind == CSTATE_TERMINATED) {
			podstatus_cstatus_copy(st, old);
		} else {
			st->name = xstrdup(c->c_name);
			st->image = xstrdup(c->c_image);
			st->state.kind = CSTATE_WAITING;
			st->state.reason = xstrdup(defreason);
			if (old != NULL) {
				st->restart_count = old->restart_count;
				podstatus_state_copy(&st->last_state, &old->last_state);
			}
		}

		ninst = podstatus_rt_instances(in->rt, c->c_name, inst);
		if (ninst == 0 && old != NULL && old->state.kind == CSTATE_RUNNING &&
		    st->state.kind == CSTATE_WAITING && streq_null(st->state.reason, defreason) &&
		    st->last_state.kind != CSTATE_TERMINATED) {
			/* It was running and vanished: keep it from looking like it never ran. */
			container_state_clear(&st->last_state);
			st->last_state.kind = CSTATE_TERMINATED;
			st->last_state.reason = xstrdup("ContainerStatusUnknown");
			st->last_state.message =
			    xstrdup("The container could not be located when the "
			            "pod was deleted.  The container used to be Running");
			st->last_state.exit_code = 137;
			if (p->deletion_ts == 0)
				st->restart_count++;
		}
		if (ninst > 0) {
			struct container_status cur;

			podstatus_convert_rt(inst[0], old, in->runtime_name, c->c_image, &cur);
			container_status_clear(st);
			*st = cur;
			if (ninst > 1) {
				struct container_status prev;

				/* old describes the newest instance, not this one */
				podstatus_convert_rt(
				    inst[1], NULL, in->runtime_name, c->c_image, &prev);
				container_state_clear(&st->last_state);
				st->last_state = prev.state;
				memset(&prev.state, 0, sizeof(prev.state));
				container_status_clear(&prev);
			}
		}

		/* Containers waiting for a restart show why the last start failed. */
		if (is_init && ninst > 0 && inst[0]->state == RT_EXITED && inst[0]->exit_code == 0)
			continue;
		if (container_should_restart(c, p, in->rt)) {
			const struct start_error *e =
			    podstatus_find_start_error(in->errors, c->c_name);

			if (e == NULL)
				continue;
			if (st->state.kind == CSTATE_TERMINATED) {
				container_state_clear(&st->last_state);
				st->last_state = st->state;
			} else
				container_state_clear(&st->state);
			memset(&st->state, 0, sizeof(st->state));
			st->state.kind = CSTATE_WAITING;
			st->state.reason = xstrdup(e->reason);
			if (e->message != NULL && e->message[0] != '\0')
				st->state.message = xstrdup(e->message);
		}
	}
	if (!is_init)
		qsort(v, ncs, sizeof(*v), podstatus_cmp_status_name);
	return v;
}

/* The prober's view (UpdatePodStatus): started and ready of one status. */
static void
podstatus_probe_update(const struct podstatus_input *in, const struct container *c, int is_init,
    struct container_status *st)
{
	const struct rt_container *rc = rt_find_container(in->rt, c->c_name);
	const struct probe_state  *pr = rc != NULL ? probe_set_find(in->probes, rc->id) : NULL;
	int                        running = st->state.kind == CSTATE_RUNNING;
	int                        started = 0, ready = 0;

	if (running) {
		if (c->c_startup == NULL)
			started = 1;
		else
			started = pr != NULL && pr->startup == PROBE_SUCCESS;
	}
	st->started.set = 1;
	st->started.v = started;
	if (is_init && !(c->c_has_restart_policy && c->c_restart_policy == RESTART_ALWAYS)) {
		st->ready = st->state.kind == CSTATE_TERMINATED && st->state.exit_code == 0;
		return;
	}
	if (started) {
		if (c->c_readiness == NULL)
			ready = 1;
		else
			ready = pr != NULL && pr->readiness == PROBE_SUCCESS;
	}
	st->ready = ready;
}

/* ---- phase ---- */

static const struct container_status *
podstatus_status_of(const struct pod_status *s, const char *name)
{
	const struct container_status *cs = podstatus_find_cstatus(s->statuses, s->nstatuses, name);

	return cs != NULL ? cs : podstatus_find_cstatus(s->init_statuses, s->ninit_statuses, name);
}

static int
podstatus_any_regular_started(const struct pod *p, const struct pod_status *s)
{
	size_t i;

	for (i = 0; i < p->ncontainers; i++) {
		const struct container_status *cs =
		    podstatus_find_cstatus(s->statuses, s->nstatuses, p->containers[i].c_name);

		if (cs != NULL &&
		    (cs->state.kind == CSTATE_RUNNING || cs->state.kind == CSTATE_TERMINATED))
			return 1;
	}
	return 0;
}

static int
podstatus_is_static_pod(const struct pod *p)
{
	const char *src = kvlist_get(&p->annotations, "kubernetes.io/config.source");

	return src != NULL && strcmp(src, "api") != 0;
}

/* The kubelet's getPhase. */
static enum pod_phase
podstatus_get_phase(const struct pod *p, const struct pod_status *s, int pod_is_terminal)
{
	int    pending_init = 0, failed_init = 0;
	int    unknown = 0, running = 0, waiting = 0, stopped = 0, succeeded = 0;
	size_t i;

	for (i = 0; i < p->ninit_containers; i++) {
		const struct container        *c = &p->init_containers[i];
		const struct container_status *cs = podstatus_status_of(s, c->c_name);
		int sidecar = c->c_has_restart_policy && c->c_restart_policy == RESTART_ALWAYS;

		if (sidecar) {
			if (cs == NULL) {
				unknown++;
				continue;
			}
			switch (cs->state.kind) {
			case CSTATE_RUNNING:
				if (!cs->started.set || !cs->started.v)
					pending_init++;
				running++;
				break;
			case CSTATE_TERMINATED:
				break;
			case CSTATE_WAITING:
				if (cs->last_state.kind != CSTATE_TERMINATED) {
					pending_init++;
					waiting++;
				}
				break;
			default:
				pending_init++;
				unknown++;
				break;
			}
			continue;
		}
		if (cs == NULL) {
			pending_init++;
			continue;
		}
		switch (cs->state.kind) {
		case CSTATE_RUNNING:
			pending_init++;
			break;
		case CSTATE_TERMINATED:
			if (cs->state.exit_code != 0)
				failed_init++;
			break;
		case CSTATE_WAITING:
			if (cs->last_state.kind == CSTATE_TERMINATED) {
				if (cs->last_state.exit_code != 0)
					failed_init++;
			} else
				pending_init++;
			break;
		default:
			pending_init++;
			break;
		}
	}
	for (i = 0; i < p->ncontainers; i++) {
		const struct container_status *cs = podstatus_status_of(s, p->containers[i].c_name);

		if (cs == NULL) {
			unknown++;
			continue;
		}
		switch (cs->state.kind) {
		case CSTATE_RUNNING:
			running++;
			break;
		case CSTATE_TERMINATED:
			stopped++;
			if (cs->state.exit_code == 0)
				succeeded++;
			break;
		case CSTATE_WAITING:
			if (cs->last_state.kind == CSTATE_TERMINATED)
				stopped++;
			else
				waiting++;
			break;
		default:
			unknown++;
			break;
		}
	}
	if (failed_init > 0 && p->restart_policy == RESTART_NEVER)
		return PHASE_FAILED;
	if ((pending_init > 0 && !podstatus_any_regular_started(p, s)) || waiting > 0)
		return PHASE_PENDING;
	if (running > 0 && unknown == 0)
		return PHASE_RUNNING;
	if (running == 0 && stopped > 0 && unknown == 0) {
		if (pod_is_terminal && !podstatus_is_static_pod(p))
			return stopped == succeeded ? PHASE_SUCCEEDED : PHASE_FAILED;
		if (p->restart_policy == RESTART_ALWAYS)
			return PHASE_RUNNING;
		if (stopped == succeeded)
			return PHASE_SUCCEEDED;
		if (p->restart_policy == RESTART_NEVER)
			return PHASE_FAILED;
		return PHASE_RUNNING;
	}
	return PHASE_PENDING;
}

static int
podstatus_phase_terminal(enum pod_phase ph)
{
	return ph == PHASE_SUCCEEDED || ph == PHASE_FAILED;
}

/* ---- conditions ---- */

static void
podstatus_cond_add(struct pod_status *s, const char *type, enum cond_status st, const char *reason,
    char *message /* owned */)
{
	struct pod_condition *c;

	s->conditions = xreallocarray(s->conditions, s->nconditions + 1, sizeof(*s->conditions));
	c = &s->conditions[s->nconditions++];
	memset(c, 0, sizeof(*c));
	c->type = xstrdup(type);
	c->status = st;
	c->reason = xstrdup(reason);
	c->message = message;
}

/* Appends name to a Go-style "[a b]" list held in *l. */
static void
podstatus_name_list_add(char **l, const char *name)
{
	char *t = *l == NULL ? xstrdup(name) : xsprintf("%s %s", *l, name);

	free(*l);
	*l = t;
}

static char *
podstatus_unready_message(
    char *unknown, const char *unknown_label, char *bad, const char *bad_label)
{
	char *m = NULL;

	if (unknown != NULL)
		m = xsprintf("containers with %s status: [%s]", unknown_label, unknown);
	if (bad != NULL) {
		char *t = m == NULL
		    ? xsprintf("containers with %s status: [%s]", bad_label, bad)
		    : xsprintf("%s, containers with %s status: [%s]", m, bad_label, bad);

		free(m);
		m = t;
	}
	free(unknown);
	free(bad);
	return m;
}

/* ContainersReady; Ready copies it (no readiness gates in our model). */
static void
podstatus_cond_containers_ready(const struct pod *p, const struct pod_status *s, enum pod_phase ph,
    enum cond_status *st, const char **reason, char **msg)
{
	char  *unknown = NULL, *unready = NULL;
	size_t i;

	*msg = NULL;
	*reason = NULL;
	for (i = 0; i < p->ninit_containers; i++) {
		const struct container        *c = &p->init_containers[i];
		const struct container_status *cs;

		if (!(c->c_has_restart_policy && c->c_restart_policy == RESTART_ALWAYS))
			continue;
		cs = podstatus_status_of(s, c->c_name);
		if (cs == NULL)
			podstatus_name_list_add(&unknown, c->c_name);
		else if (!cs->ready)
			podstatus_name_list_add(&unready, c->c_name);
	}
	for (i = 0; i < p->ncontainers; i++) {
		const struct container_status *cs = podstatus_status_of(s, p->containers[i].c_name);

		if (cs == NULL)
			podstatus_name_list_add(&unknown, p->containers[i].c_name);
		else if (!cs->ready)
			podstatus_name_list_add(&unready, p->containers[i].c_name);
	}
	if ((ph == PHASE_SUCCEEDED && unknown == NULL) || ph == PHASE_FAILED) {
		*st = COND_FALSE;
		*reason = ph == PHASE_SUCCEEDED ? "PodCompleted" : "PodFailed";
		free(unknown);
		free(unready);
		return;
	}
	*msg = podstatus_unready_message(unknown, "unknown", unready, "unready");
	if (*msg != NULL) {
		*st = COND_FALSE;
		*reason = "ContainersNotReady";
	} else
		*st = COND_TRUE;
}

static void
podstatus_cond_initialized(
    const struct pod *p, const struct pod_status *s, enum pod_phase ph, struct pod_status *out)
{
	char  *unknown = NULL, *incomplete = NULL, *msg;
	size_t i;

	for (i = 0; i < p->ninit_containers; i++) {
		const struct container        *c = &p->init_containers[i];
		const struct container_status *cs = podstatus_status_of(s, c->c_name);

		if (cs == NULL) {
			podstatus_name_list_add(&unknown, c->c_name);
			continue;
		}
		if (c->c_has_restart_policy && c->c_restart_policy == RESTART_ALWAYS) {
			if (!cs->started.set || !cs->started.v)
				podstatus_name_list_add(&incomplete, c->c_name);
			continue;
		}
		if (!cs->ready)
			podstatus_name_list_add(&incomplete, c->c_name);
	}
	if (ph == PHASE_SUCCEEDED && unknown == NULL) {
		free(incomplete);
		podstatus_cond_add(out, "Initialized", COND_TRUE, "PodCompleted", NULL);
		return;
	}
	if (podstatus_any_regular_started(p, s)) {
		free(unknown);
		free(incomplete);
		podstatus_cond_add(out, "Initialized", COND_TRUE, NULL, NULL);
		return;
	}
	msg = podstatus_unready_message(unknown, "unknown", incomplete, "incomplete");
	if (msg != NULL)
		podstatus_cond_add(out, "Initialized", COND_FALSE, "ContainersNotInitialized", msg);
	else
		podstatus_cond_add(out, "Initialized", COND_TRUE, NULL, NULL);
}

void
podstatus_set_transition_times(struct pod_status *s, const struct pod_status *old, int64_t now)
{
	size_t i;

	for (i = 0; i < s->nconditions; i++) {
		struct pod_condition       *c = &s->conditions[i];
		const struct pod_condition *oc;

		if (!podstatus_condition_is_kubelet_owned(c->type))
			continue;
		oc = podstatus_find_condition(old, c->type);
		c->last_transition_time =
		    oc != NULL && oc->status == c->status ? oc->last_transition_time : now;
	}
}

/* ---- generate ---- */

void
podstatus_generate(const struct podstatus_input *in, struct pod_status *o)
{
	const struct pod        *p = in->pod;
	const struct pod_status *old = in->old != NULL ? in->old : &p->status;
	const struct pod_status *api = &p->status;
	enum cond_status         cst;
	const char              *creason, *sbid;
	char                    *cmsg;
	uint32_t                 attempt;
	size_t                   i;

	memset(o, 0, sizeof(*o));
	o->init_statuses = podstatus_convert_list(in, p->init_containers, p->ninit_containers,
	    old->init_statuses, old->ninit_statuses, 1, &o->ninit_statuses);
	o->statuses = podstatus_convert_list(
	    in, p->containers, p->ncontainers, old->statuses, old->nstatuses, 0, &o->nstatuses);
	o->ephemeral_statuses =
	    podstatus_convert_list(in, p->ephemeral_containers, p->nephemeral_containers,
	        old->ephemeral_statuses, old->nephemeral_statuses, 0, &o->nephemeral_statuses);
	for (i = 0; i < o->ninit_statuses; i++)
		podstatus_probe_update(
		    in, pod_find_container(p, o->init_statuses[i].name), 1, &o->init_statuses[i]);
	for (i = 0; i < o->nstatuses; i++)
		podstatus_probe_update(
		    in, pod_find_container(p, o->statuses[i].name), 0, &o->statuses[i]);

	/* Phase, with the terminal phase of the status manager or the API kept. */
	o->phase = podstatus_get_phase(p, o, in->pod_is_terminal);
	if (!podstatus_phase_terminal(o->phase)) {
		if (podstatus_phase_terminal(old->phase))
			o->phase = old->phase;
		else if (podstatus_phase_terminal(api->phase))
			o->phase = api->phase;
	}
	if (o->phase == old->phase) {
		o->reason = xstrdup(old->reason != NULL ? old->reason : api->reason);
		o->message = xstrdup(old->message != NULL ? old->message : api->message);
	}
	if (in->evict_reason != NULL) {
		o->phase = PHASE_FAILED;
		free(o->reason);
		free(o->message);
		o->reason = xstrdup(in->evict_reason);
		o->message = xstrdup(in->evict_message);
	}
	if (podstatus_phase_terminal(api->phase) && o->phase != api->phase)
		o->phase = api->phase; /* the API server's terminal phase is final */

	/* Conditions: others' from the API, then the kubelet's own. Room for all at once: a
	 * pod can have thousands. */
	if (api->nconditions > 0)
		o->conditions = xreallocarray(
		    o->conditions, o->nconditions + api->nconditions, sizeof(*o->conditions));
	for (i = 0; i < api->nconditions; i++) {
		if (podstatus_condition_is_kubelet_owned(api->conditions[i].type))
			continue;
		if (in->evict_reason != NULL && in->evict_disruption &&
		    streq_null(api->conditions[i].type, PODSTATUS_DISRUPTION_TARGET))
			continue; /* the kubelet's own, below */
		podstatus_condition_copy(&o->conditions[o->nconditions++], &api->conditions[i]);
	}
	if (in->evict_reason != NULL && in->evict_disruption) {
		const struct pod_condition *oc =
		    podstatus_find_condition(old, PODSTATUS_DISRUPTION_TARGET);

		podstatus_cond_add(o, PODSTATUS_DISRUPTION_TARGET, COND_TRUE,
		    "TerminationByKubelet", xstrdup(in->evict_message));
		o->conditions[o->nconditions - 1].last_transition_time =
		    oc != NULL && oc->status == COND_TRUE ? oc->last_transition_time : in->now;
	}
	podstatus_cond_add(o, "PodReadyToStartContainers",
	    pod_sandbox_changed(p, in->rt, &attempt, &sbid) ? COND_FALSE : COND_TRUE, NULL, NULL);
	podstatus_cond_initialized(p, o, o->phase, o);
	podstatus_cond_containers_ready(p, o, o->phase, &cst, &creason, &cmsg);
	podstatus_cond_add(o, "Ready", cst, creason, xstrdup(cmsg));
	podstatus_cond_add(o, "ContainersReady", cst, creason, cmsg);
	podstatus_cond_add(o, "PodScheduled", COND_TRUE, NULL, NULL);
	podstatus_set_transition_times(o, old, in->now);

	/* Addresses and times. */
	o->host_ip = xstrdup(in->host_ip);
	if (in->rt != NULL && in->rt->nsandboxes > 0) {
		const struct rt_sandbox *sb = &in->rt->sandboxes[0];

		for (i = 1; i < in->rt->nsandboxes; i++)
			if (in->rt->sandboxes[i].created_at > sb->created_at)
				sb = &in->rt->sandboxes[i];
		if (!p->host_network && sb->ip != NULL && sb->ip[0] != '\0') {
			o->pod_ips.v = xcalloc(1 + sb->nextra_ips, sizeof(char *));
			o->pod_ips.v[o->pod_ips.n++] = xstrdup(sb->ip);
			for (i = 0; i < sb->nextra_ips; i++)
				if (sb->extra_ips[i] != NULL && sb->extra_ips[i][0] != '\0')
					o->pod_ips.v[o->pod_ips.n++] = xstrdup(sb->extra_ips[i]);
		}
	}
	if (o->pod_ips.n == 0 && p->host_network && in->host_ip != NULL) {
		o->pod_ips.v = xcalloc(1, sizeof(char *));
		o->pod_ips.v[o->pod_ips.n++] = xstrdup(in->host_ip);
	}
	if (o->pod_ips.n == 0) {
		/* Keep the last known IPs (the sandbox may be gone while terminating). */
		const struct pod_status *k = old->pod_ips.n ? old : api;

		if (k->pod_ips.n > 0) {
			o->pod_ips.v = xcalloc(k->pod_ips.n, sizeof(char *));
			for (i = 0; i < k->pod_ips.n; i++)
				o->pod_ips.v[o->pod_ips.n++] = xstrdup(k->pod_ips.v[i]);
		}
	}
	if (o->pod_ips.n > 0)
		o->pod_ip = xstrdup(o->pod_ips.v[0]);
	if (old->start_time != 0)
		o->start_time = old->start_time;
	else if (api->start_time != 0)
		o->start_time = api->start_time;
	else
		o->start_time = in->now;
	o->qos_class = pod_qos_class(p);
	o->has_qos_class = 1;
}

/* ---- merge ---- */

void
podstatus_merge(const struct pod_status *old, const struct pod_status *nw, int could_have_running,
    int64_t now, struct pod_status *o)
{
	static const char *const ready_types[] = { "ContainersReady", "Ready" };
	struct pod_condition    *conds = NULL;
	size_t                   i, n = 0;
	int                      to_terminal;

	podstatus_copy(o, nw);
	conds = xcalloc(old->nconditions + nw->nconditions + 2, sizeof(*conds));
	for (i = 0; i < old->nconditions; i++)
		if (!podstatus_condition_is_kubelet_owned(old->conditions[i].type))
			podstatus_condition_copy(&conds[n++], &old->conditions[i]);
	for (i = 0; i < nw->nconditions; i++)
		if (podstatus_condition_is_kubelet_owned(nw->conditions[i].type))
			podstatus_condition_copy(&conds[n++], &nw->conditions[i]);
	to_terminal = !podstatus_phase_terminal(old->phase) && podstatus_phase_terminal(nw->phase);
	/* DisruptionTarget is shared: the kubelet sends its own once the pod is terminal and
	 * nothing of it runs, not while the phase change waits. */
	for (i = 0; i < nw->nconditions && to_terminal && !could_have_running; i++) {
		const struct pod_condition *c = &nw->conditions[i], *oc;
		size_t                      j;

		if (!streq_null(c->type, PODSTATUS_DISRUPTION_TARGET))
			continue;
		for (j = 0; j < n && !streq_null(conds[j].type, c->type); j++)
			;
		if (j < n)
			podstatus_condition_clear(&conds[j]);
		else
			n++;
		podstatus_condition_copy(&conds[j], c);
		/* Its time is when it is sent, unless the API already has it so. */
		oc = podstatus_find_condition(old, c->type);
		conds[j].last_transition_time =
		    oc != NULL && oc->status == c->status ? oc->last_transition_time : now;
	}
	for (i = 0; i < o->nconditions; i++)
		podstatus_condition_clear(&o->conditions[i]);
	free(o->conditions);
	o->conditions = conds;
	o->nconditions = n;

	if ((to_terminal && could_have_running) ||
	    (podstatus_phase_terminal(old->phase) && !podstatus_phase_terminal(nw->phase))) {
		o->phase = old->phase;
		free(o->reason);
		free(o->message);
		o->reason = xstrdup(old->reason);
		o->message = xstrdup(old->message);
	}
	if (podstatus_phase_terminal(o->phase)) {
		const struct pod_condition *r = podstatus_find_condition(o, "Ready");
		const struct pod_condition *cr = podstatus_find_condition(o, "ContainersReady");

		if ((r != NULL && r->status == COND_TRUE) ||
		    (cr != NULL && cr->status == COND_TRUE)) {
			for (i = 0; i < nitems(ready_types); i++) {
				struct pod_condition *c =
				    podstatus_find_condition_mut(o, ready_types[i]);
				const char *why =
				    o->phase == PHASE_SUCCEEDED ? "PodCompleted" : "PodFailed";

				if (c == NULL) {
					podstatus_cond_add(
					    o, ready_types[i], COND_FALSE, why, NULL);
					o->conditions[o->nconditions - 1].last_transition_time =
					    now;
					continue;
				}
				if (c->status != COND_FALSE)
					c->last_transition_time = now;
				c->status = COND_FALSE;
				free(c->reason);
				free(c->message);
				c->reason = xstrdup(why);
				c->message = NULL;
			}
		}
	}
}

/* ---- JSON ---- */

#define GS(g, s) yajl_gen_string((g), (const unsigned char *)(s), strlen(s))

static int
podstatus_j_str(yajl_gen g, const char *k, const char *v)
{
	return GS(g, k) != yajl_gen_status_ok || GS(g, v ? v : "") != yajl_gen_status_ok ? -1 : 0;
}

static int
podstatus_j_opt_str(yajl_gen g, const char *k, const char *v)
{
	return v == NULL || v[0] == '\0' ? 0 : podstatus_j_str(g, k, v);
}

static int
podstatus_j_int(yajl_gen g, const char *k, long long v)
{
	return GS(g, k) != yajl_gen_status_ok || yajl_gen_integer(g, v) != yajl_gen_status_ok ? -1
	                                                                                      : 0;
}

static int
podstatus_j_bool(yajl_gen g, const char *k, int v)
{
	return GS(g, k) != yajl_gen_status_ok || yajl_gen_bool(g, v) != yajl_gen_status_ok ? -1 : 0;
}

/* metav1.Time: RFC 3339, null when zero. */
static int
podstatus_j_time(yajl_gen g, const char *k, int64_t t)
{
	char buf[40];

	if (GS(g, k) != yajl_gen_status_ok)
		return -1;
	if (t == 0)
		return yajl_gen_null(g) == yajl_gen_status_ok ? 0 : -1;
	time_format_rfc3339(t, buf, sizeof(buf));
	return GS(g, buf) == yajl_gen_status_ok ? 0 : -1;
}

static int
podstatus_j_state(yajl_gen g, const char *k, const struct container_state *s)
{
	int rc = 0;

	if (GS(g, k) != yajl_gen_status_ok || yajl_gen_map_open(g) != yajl_gen_status_ok)
		return -1;
	switch (s->kind) {
	case CSTATE_WAITING:
		rc |= GS(g, "waiting") != yajl_gen_status_ok;
		rc |= yajl_gen_map_open(g) != yajl_gen_status_ok;
		rc |= podstatus_j_opt_str(g, "reason", s->reason);
		rc |= podstatus_j_opt_str(g, "message", s->message);
		rc |= yajl_gen_map_close(g) != yajl_gen_status_ok;
		break;
	case CSTATE_RUNNING:
		rc |= GS(g, "running") != yajl_gen_status_ok;
		rc |= yajl_gen_map_open(g) != yajl_gen_status_ok;
		rc |= podstatus_j_time(g, "startedAt", s->started_at);
		rc |= yajl_gen_map_close(g) != yajl_gen_status_ok;
		break;
	case CSTATE_TERMINATED:
		rc |= GS(g, "terminated") != yajl_gen_status_ok;
		rc |= yajl_gen_map_open(g) != yajl_gen_status_ok;
		rc |= podstatus_j_int(g, "exitCode", s->exit_code);
		if (s->signal != 0)
			rc |= podstatus_j_int(g, "signal", s->signal);
		rc |= podstatus_j_opt_str(g, "reason", s->reason);
		rc |= podstatus_j_opt_str(g, "message", s->message);
		rc |= podstatus_j_time(g, "startedAt", s->started_at);
		rc |= podstatus_j_time(g, "finishedAt", s->finished_at);
		rc |= podstatus_j_opt_str(g, "containerID", s->container_id);
		rc |= yajl_gen_map_close(g) != yajl_gen_status_ok;
		break;
	default:
		break;
	}
	rc |= yajl_gen_map_close(g) != yajl_gen_status_ok;
	return rc ? -1 : 0;
}

static int
podstatus_j_cstatuses(yajl_gen g, const char *k, const struct container_status *v, size_t n)
{
	size_t i;
	int    rc = 0;

	if (n == 0)
		return 0;
	rc |= GS(g, k) != yajl_gen_status_ok;
	rc |= yajl_gen_array_open(g) != yajl_gen_status_ok;
	for (i = 0; i < n; i++) {
		const struct container_status *cs = &v[i];

		rc |= yajl_gen_map_open(g) != yajl_gen_status_ok;
		rc |= podstatus_j_str(g, "name", cs->name);
		rc |= podstatus_j_state(g, "state", &cs->state);
		rc |= podstatus_j_state(g, "lastState", &cs->last_state);
		rc |= podstatus_j_bool(g, "ready", cs->ready);
		rc |= podstatus_j_int(g, "restartCount", cs->restart_count);
		rc |= podstatus_j_str(g, "image", cs->image);
		rc |= podstatus_j_str(g, "imageID", cs->image_id);
		rc |= podstatus_j_opt_str(g, "containerID", cs->container_id);
		if (cs->started.set)
			rc |= podstatus_j_bool(g, "started", cs->started.v);
		rc |= yajl_gen_map_close(g) != yajl_gen_status_ok;
	}
	rc |= yajl_gen_array_close(g) != yajl_gen_status_ok;
	return rc ? -1 : 0;
}

static const char *
podstatus_cond_status_name(enum cond_status s)
{
	return s == COND_TRUE ? "True" : s == COND_FALSE ? "False" : "Unknown";
}

static int
podstatus_j_ip_list(yajl_gen g, const char *k, char *const *v, size_t n)
{
	size_t i;
	int    rc = 0;

	if (n == 0)
		return 0;
	rc |= GS(g, k) != yajl_gen_status_ok;
	rc |= yajl_gen_array_open(g) != yajl_gen_status_ok;
	for (i = 0; i < n; i++) {
		rc |= yajl_gen_map_open(g) != yajl_gen_status_ok;
		rc |= podstatus_j_str(g, "ip", v[i]);
		rc |= yajl_gen_map_close(g) != yajl_gen_status_ok;
	}
	rc |= yajl_gen_array_close(g) != yajl_gen_status_ok;
	return rc ? -1 : 0;
}

int
podstatus_to_json(const struct pod_status *s, yajl_gen g)
{
	size_t i;
	int    rc = 0;

	rc |= yajl_gen_map_open(g) != yajl_gen_status_ok;
	rc |= podstatus_j_str(g, "phase", pod_phase_name(s->phase));
	if (s->nconditions > 0) {
		rc |= GS(g, "conditions") != yajl_gen_status_ok;
		rc |= yajl_gen_array_open(g) != yajl_gen_status_ok;
		for (i = 0; i < s->nconditions; i++) {
			const struct pod_condition *c = &s->conditions[i];

			rc |= yajl_gen_map_open(g) != yajl_gen_status_ok;
			rc |= podstatus_j_str(g, "type", c->type);
			rc |= podstatus_j_str(g, "status", podstatus_cond_status_name(c->status));
			rc |= podstatus_j_time(g, "lastProbeTime", c->last_probe_time);
			rc |= podstatus_j_time(g, "lastTransitionTime", c->last_transition_time);
			rc |= podstatus_j_opt_str(g, "reason", c->reason);
			rc |= podstatus_j_opt_str(g, "message", c->message);
			rc |= yajl_gen_map_close(g) != yajl_gen_status_ok;
		}
		rc |= yajl_gen_array_close(g) != yajl_gen_status_ok;
	}
	rc |= podstatus_j_opt_str(g, "message", s->message);
	rc |= podstatus_j_opt_str(g, "reason", s->reason);
	rc |= podstatus_j_opt_str(g, "hostIP", s->host_ip);
	if (s->host_ip != NULL && s->host_ip[0] != '\0') {
		char *const one[1] = { s->host_ip };

		rc |= podstatus_j_ip_list(g, "hostIPs", one, 1);
	}
	rc |= podstatus_j_opt_str(g, "podIP", s->pod_ip);
	rc |= podstatus_j_ip_list(g, "podIPs", s->pod_ips.v, s->pod_ips.n);
	if (s->start_time != 0)
		rc |= podstatus_j_time(g, "startTime", s->start_time);
	rc |=
	    podstatus_j_cstatuses(g, "initContainerStatuses", s->init_statuses, s->ninit_statuses);
	rc |= podstatus_j_cstatuses(g, "containerStatuses", s->statuses, s->nstatuses);
	if (s->has_qos_class)
		rc |= podstatus_j_str(g, "qosClass", qos_class_name(s->qos_class));
	rc |= podstatus_j_cstatuses(
	    g, "ephemeralContainerStatuses", s->ephemeral_statuses, s->nephemeral_statuses);
	rc |= yajl_gen_map_close(g) != yajl_gen_status_ok;
	return rc ? -1 : 0;
}

char *
podstatus_to_json_string(const struct pod_status *s)
{
	yajl_gen             g = yajl_gen_alloc(NULL);
	const unsigned char *buf;
	size_t               len;
	char                *out = NULL;

	if (g == NULL)
		return NULL;
	if (podstatus_to_json(s, g) == 0 && yajl_gen_get_buf(g, &buf, &len) == yajl_gen_status_ok)
		out = xstrndup((const char *)buf, len);
	yajl_gen_free(g);
	return out;
}

int
podstatus_equal(const struct pod_status *a, const struct pod_status *b)
{
	char *x = podstatus_to_json_string(a), *y = podstatus_to_json_string(b);
	int   eq = x != NULL && y != NULL && strcmp(x, y) == 0;

	free(x);
	free(y);
	return eq;
}
