/* status_read.c — reading one pod's status from the runtime (the kubelet's
 * GetPodStatus): ListPodSandbox and ListContainers by the pod UID label, then
 * PodSandboxStatus and ContainerStatus for each, concurrently; and the conversion of CRI
 * statuses into runtime.h data. */
#include <stdlib.h>
#include <string.h>

#include "cri/cri.h"
#include "kuberuntime/kuberuntime.h"
#include "kuberuntime/internal.h"
#include "core/log.h"
#include "pod/runtime.h"
#include "core/util.h"

struct kr_rd_slot {
	struct kr_rd *rd;
	size_t        i;
};

struct kr_rd {
	struct kr_ctx *rd_x;
	const void    *rd_owner;
	void (*rd_done)(struct rt_pod_status *, int64_t, const char *, void *);
	void                *rd_arg;
	int64_t              rd_t0;
	int                  rd_pending;
	char                *rd_err;
	struct rt_pod_status rd_st;
	struct kr_rd_slot   *rd_sb_slots;
	size_t               rd_nsb;
	struct kr_rd_slot   *rd_c_slots;
	char               **rd_c_sbids;
	size_t               rd_nc;
};

/* ---- CRI statuses into runtime.h data ---- */

void
kr_rt_from_sandbox(struct rt_sandbox *sb, const Runtime__V1__PodSandboxStatus *s)
{
	size_t i;

	memset(sb, 0, sizeof(*sb));
	sb->id = xstrdup(s->id);
	sb->attempt = s->metadata != NULL ? s->metadata->attempt : 0;
	sb->state = s->state == RUNTIME__V1__POD_SANDBOX_STATE__SANDBOX_READY ? RT_SB_READY
	                                                                      : RT_SB_NOTREADY;
	sb->created_at = s->created_at;
	sb->network_mode = RT_NS_POD;
	if (s->linux != NULL && s->linux->namespaces != NULL &&
	    s->linux->namespaces->options != NULL)
		sb->network_mode = (enum rt_nsmode)s->linux->namespaces->options->network;
	if (s->network != NULL) {
		sb->ip = xstrdup(s->network->ip);
		for (i = 0; i < s->network->n_additional_ips; i++) {
			sb->extra_ips =
			    xreallocarray(sb->extra_ips, sb->nextra_ips + 1, sizeof(char *));
			sb->extra_ips[sb->nextra_ips++] =
			    xstrdup(s->network->additional_ips[i]->ip);
		}
	}
}

void
kr_rt_from_container(
    struct rt_container *c, const Runtime__V1__ContainerStatus *s, const char *sandbox_id)
{
	const char *v;

	memset(c, 0, sizeof(*c));
	c->id = xstrdup(s->id);
	v = kr_map_get((void *const *)s->labels, s->n_labels, KR_LABEL_CONTAINER_NAME);
	if (v == NULL && s->metadata != NULL)
		v = s->metadata->name;
	c->name = xstrdup(v != NULL ? v : "");
	c->sandbox_id = xstrdup(sandbox_id);
	switch (s->state) {
	case RUNTIME__V1__CONTAINER_STATE__CONTAINER_CREATED:
		c->state = RT_CREATED;
		break;
	case RUNTIME__V1__CONTAINER_STATE__CONTAINER_RUNNING:
		c->state = RT_RUNNING;
		break;
	case RUNTIME__V1__CONTAINER_STATE__CONTAINER_EXITED:
		c->state = RT_EXITED;
		break;
	default:
		c->state = RT_UNKNOWN;
		break;
	}
	c->created_at = s->created_at;
	c->started_at = s->started_at;
	c->finished_at = s->finished_at;
	c->exit_code = s->exit_code;
	if (s->reason != NULL && s->reason[0] != '\0')
		c->reason = xstrdup(s->reason);
	if (s->message != NULL && s->message[0] != '\0')
		c->message = xstrdup(s->message);
	if (s->image != NULL)
		c->image = xstrdup(s->image->image);
	c->image_ref = xstrdup(s->image_ref);
	v = kr_map_get((void *const *)s->annotations, s->n_annotations, KR_ANN_HASH);
	if (v != NULL)
		c->hash = strtoull(v, NULL, 16);
	v = kr_map_get((void *const *)s->annotations, s->n_annotations, KR_ANN_RESTART_COUNT);
	if (v != NULL)
		c->restart_count = (int32_t)strtol(v, NULL, 10);
}

/* ---- the read ---- */

void
kr_rd_free(struct kr_rd *rd)
{
	size_t i;

	if (rd == NULL)
		return;
	rt_pod_status_clear(&rd->rd_st);
	free(rd->rd_sb_slots);
	free(rd->rd_c_slots);
	for (i = 0; i < rd->rd_nc; i++)
		free(rd->rd_c_sbids[i]);
	free(rd->rd_c_sbids);
	free(rd->rd_err);
	free(rd);
}

static void
kr_rd_compact(struct rt_pod_status *st)
{
	size_t i, j;

	for (i = j = 0; i < st->nsandboxes; i++) {
		if (st->sandboxes[i].id == NULL)
			continue;
		st->sandboxes[j++] = st->sandboxes[i];
	}
	st->nsandboxes = j;
	for (i = j = 0; i < st->ncontainers; i++) {
		if (st->containers[i].id == NULL)
			continue;
		st->containers[j++] = st->containers[i];
	}
	st->ncontainers = j;
}

/* One call answered; the last one reports and frees the read. */
static void
kr_rd_step(struct kr_rd *rd)
{
	if (--rd->rd_pending > 0)
		return;
	if (rd->rd_err == NULL) {
		kr_rd_compact(&rd->rd_st);
		rt_pod_status_sort(&rd->rd_st);
		rd->rd_st.timestamp = rd->rd_t0;
	}
	rd->rd_done(&rd->rd_st, rd->rd_t0, rd->rd_err, rd->rd_arg);
	kr_rd_free(rd);
}

static void
kr_rd_sb_status_cb(
    int code, const char *message, const Runtime__V1__PodSandboxStatusResponse *resp, void *arg)
{
	struct kr_rd_slot *sl = arg;
	struct kr_rd      *rd = sl->rd;

	if (code == GRPC_OK && resp->status != NULL)
		kr_rt_from_sandbox(&rd->rd_st.sandboxes[sl->i], resp->status);
	else if (code != GRPC_NOT_FOUND && rd->rd_err == NULL)
		rd->rd_err = xsprintf("PodSandboxStatus: %s", message);
	kr_rd_step(rd);
}

static void
kr_rd_c_status_cb(
    int code, const char *message, const Runtime__V1__ContainerStatusResponse *resp, void *arg)
{
	struct kr_rd_slot *sl = arg;
	struct kr_rd      *rd = sl->rd;

	if (code == GRPC_OK && resp->status != NULL)
		kr_rt_from_container(
		    &rd->rd_st.containers[sl->i], resp->status, rd->rd_c_sbids[sl->i]);
	else if (code != GRPC_NOT_FOUND && rd->rd_err == NULL)
		rd->rd_err = xsprintf("ContainerStatus: %s", message);
	kr_rd_step(rd);
}

static void
kr_rd_sb_list_cb(
    int code, const char *message, const Runtime__V1__ListPodSandboxResponse *resp, void *arg)
{
	struct kr_rd *rd = arg;
	size_t        i;

	if (code != GRPC_OK) {
		if (rd->rd_err == NULL)
			rd->rd_err = xsprintf("ListPodSandbox: %s", message);
		kr_rd_step(rd);
		return;
	}
	rd->rd_nsb = resp->n_items;
	rd->rd_st.nsandboxes = resp->n_items;
	rd->rd_st.sandboxes = xcalloc(resp->n_items + 1, sizeof(*rd->rd_st.sandboxes));
	rd->rd_sb_slots = xcalloc(resp->n_items + 1, sizeof(*rd->rd_sb_slots));
	for (i = 0; i < resp->n_items; i++) {
		Runtime__V1__PodSandboxStatusRequest req =
		    RUNTIME__V1__POD_SANDBOX_STATUS_REQUEST__INIT;

		rd->rd_sb_slots[i].rd = rd;
		rd->rd_sb_slots[i].i = i;
		req.pod_sandbox_id = resp->items[i]->id;
		rd->rd_pending++;
		cri_pod_sandbox_status(rd->rd_x->cri, &req, rd->rd_x->timeout_ms,
		    kr_rd_sb_status_cb, &rd->rd_sb_slots[i], rd->rd_owner);
	}
	kr_rd_step(rd);
}

static void
kr_rd_c_list_cb(
    int code, const char *message, const Runtime__V1__ListContainersResponse *resp, void *arg)
{
	struct kr_rd *rd = arg;
	size_t        i;

	if (code != GRPC_OK) {
		if (rd->rd_err == NULL)
			rd->rd_err = xsprintf("ListContainers: %s", message);
		kr_rd_step(rd);
		return;
	}
	rd->rd_nc = resp->n_containers;
	rd->rd_st.ncontainers = resp->n_containers;
	rd->rd_st.containers = xcalloc(resp->n_containers + 1, sizeof(*rd->rd_st.containers));
	rd->rd_c_slots = xcalloc(resp->n_containers + 1, sizeof(*rd->rd_c_slots));
	rd->rd_c_sbids = xcalloc(resp->n_containers + 1, sizeof(*rd->rd_c_sbids));
	for (i = 0; i < resp->n_containers; i++) {
		Runtime__V1__ContainerStatusRequest req =
		    RUNTIME__V1__CONTAINER_STATUS_REQUEST__INIT;

		rd->rd_c_slots[i].rd = rd;
		rd->rd_c_slots[i].i = i;
		rd->rd_c_sbids[i] = xstrdup(resp->containers[i]->pod_sandbox_id);
		req.container_id = resp->containers[i]->id;
		rd->rd_pending++;
		cri_container_status(rd->rd_x->cri, &req, rd->rd_x->timeout_ms, kr_rd_c_status_cb,
		    &rd->rd_c_slots[i], rd->rd_owner);
	}
	kr_rd_step(rd);
}

struct kr_rd *
kr_rd_start(struct kr_ctx *x, const char *uid, const char *name, const char *ns, const void *owner,
    void (*done)(struct rt_pod_status *, int64_t, const char *, void *), void *arg)
{
	struct kr_rd                      *rd = xcalloc(1, sizeof(*rd));
	Runtime__V1__ListPodSandboxRequest sreq = RUNTIME__V1__LIST_POD_SANDBOX_REQUEST__INIT;
	Runtime__V1__PodSandboxFilter      sf = RUNTIME__V1__POD_SANDBOX_FILTER__INIT;
	Runtime__V1__ListContainersRequest creq = RUNTIME__V1__LIST_CONTAINERS_REQUEST__INIT;
	Runtime__V1__ContainerFilter       cf = RUNTIME__V1__CONTAINER_FILTER__INIT;
	Runtime__V1__PodSandboxFilter__LabelSelectorEntry se =
	    RUNTIME__V1__POD_SANDBOX_FILTER__LABEL_SELECTOR_ENTRY__INIT;
	Runtime__V1__ContainerFilter__LabelSelectorEntry ce =
	    RUNTIME__V1__CONTAINER_FILTER__LABEL_SELECTOR_ENTRY__INIT;
	Runtime__V1__PodSandboxFilter__LabelSelectorEntry *sep = &se;
	Runtime__V1__ContainerFilter__LabelSelectorEntry  *cep = &ce;

	rd->rd_x = x;
	rd->rd_owner = owner;
	rd->rd_done = done;
	rd->rd_arg = arg;
	rd->rd_t0 = now_mono_ms();
	rd->rd_st.uid = xstrdup(uid);
	rd->rd_st.name = xstrdup(name);
	rd->rd_st.ns = xstrdup(ns);
	se.key = ce.key = (char *)KR_LABEL_POD_UID;
	se.value = ce.value = (char *)uid;
	sf.label_selector = &sep;
	sf.n_label_selector = 1;
	sreq.filter = &sf;
	cf.label_selector = &cep;
	cf.n_label_selector = 1;
	creq.filter = &cf;
	rd->rd_pending = 2;
	cri_list_pod_sandbox(
	    rd->rd_x->cri, &sreq, rd->rd_x->timeout_ms, kr_rd_sb_list_cb, rd, owner);
	cri_list_containers(rd->rd_x->cri, &creq, rd->rd_x->timeout_ms, kr_rd_c_list_cb, rd, owner);
	return rd;
}
