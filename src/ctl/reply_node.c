/* reply_node.c — podctl's node summary (node) and resource use (top): the node as kletd
 * sees it (its conditions, capacity and allocatable as admission uses them, pressure, the
 * Lease, the shutdown manager) and the cgroup figures the node server's /metrics/resource
 * reads. See ctl/reply.h. */
#include <sys/utsname.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "core/config.h"
#include "core/json.h"
#include "core/util.h"
#include "cri/cri.h"
#include "ctl/ctl.h"
#include "ctl/reply.h"
#include "logic/eviction.h"
#include "node/eviction.h"
#include "node/nodeinfo.h"
#include "node/nodeshutdown.h"
#include "node/pleg.h"
#include "node/podworkers.h"
#include "pod/runtime.h"
#include "server/resource.h"

/* A quantity as the node status writes it: CPU in cores or millicores, bytes in Ki when
 * they divide evenly. */
static void
ctl_node_quantity(yajl_gen g, const char *key, int64_t v, int milli)
{
	char buf[64];

	if (milli && v % 1000 == 0)
		snprintf(buf, sizeof(buf), "%lld", (long long)(v / 1000));
	else if (milli)
		snprintf(buf, sizeof(buf), "%lldm", (long long)v);
	else if (v > 0 && v % 1024 == 0)
		snprintf(buf, sizeof(buf), "%lldKi", (long long)(v / 1024));
	else
		snprintf(buf, sizeof(buf), "%lld", (long long)v);
	json_gen_kv_str(g, key, buf);
}

static void
ctl_node_resources(
    yajl_gen g, const char *key, int64_t cpu_milli, int64_t mem, int64_t eph, int64_t pods)
{
	json_gen_key(g, key);
	yajl_gen_map_open(g);
	ctl_node_quantity(g, "cpu", cpu_milli, 1);
	ctl_node_quantity(g, "ephemeral-storage", eph, 0);
	ctl_node_quantity(g, "memory", mem, 0);
	ctl_node_quantity(g, "pods", pods * 1000, 1);
	yajl_gen_map_close(g);
}

static void
ctl_node_cond(yajl_gen g, const char *type, int status, const char *reason, const char *message)
{
	yajl_gen_map_open(g);
	json_gen_kv_str(g, "type", type);
	json_gen_kv_str(g, "status", status ? "True" : "False");
	json_gen_kv_str(g, "reason", reason);
	json_gen_kv_str(g, "message", message);
	yajl_gen_map_close(g);
}

static void
ctl_node_count(const struct pw_view *v, void *arg)
{
	size_t *n = arg;

	if (v->state == PW_SYNC)
		(*n)++;
}

void
ctl_reply_node(const struct ctl_view *view, yajl_gen g)
{
	const struct ctl_deps    *d = view->deps;
	const struct klet_config *cfg = d->cfg;
	struct nodeinfo_opts o = { &cfg->kube_reserved, &cfg->system_reserved, &cfg->eviction_hard,
		cfg->max_pods };
	struct nodeinfo_host h;
	struct nodeinfo      ni;
	struct ctl_api_info  api;
	struct cri_info      ci;
	struct utsname       u;
	unsigned             pressure;
	char                 why[512], msg[600], rt[160];
	int                  ready;
	size_t               npods = 0;

	memset(&h, 0, sizeof(h));
	nodeinfo_read_host(cfg->root_dir, &h);
	nodeinfo_compute(&o, &h, &ni);
	pressure = d->eviction != NULL ? eviction_conditions(d->eviction) : ni.pressure;
	memset(&api, 0, sizeof(api));
	api.lease_age_ms = -1;
	if (d->api_info != NULL)
		d->api_info(&api, d->api_arg);
	memset(&ci, 0, sizeof(ci));
	if (d->cri != NULL)
		cri_info(d->cri, &ci);
	if (d->workers != NULL)
		podworkers_foreach(d->workers, ctl_node_count, &npods);
	uname(&u);
	yajl_gen_map_open(g);
	json_gen_kv_str(g, "name", cfg->node_name);
	json_gen_kv_str(g, "version", KLET_VERSION);
	json_gen_kv_str(g, "kernelVersion", u.release);
	snprintf(rt, sizeof(rt), "%s://%s", ci.runtime_name != NULL ? ci.runtime_name : "unknown",
	    ci.runtime_version != NULL ? ci.runtime_version : "unknown");
	json_gen_kv_str(g, "containerRuntime", rt);
	json_gen_kv_str(g, "internalIP", api.node_ip);
	json_gen_kv_int(g, "uptimeSeconds", (now_mono_ms() - d->started_ms) / 1000);
	json_gen_kv_int(g, "pods", (int64_t)npods);

	/* The conditions as kletd would report them now (the kubelet's setters). */
	json_gen_key(g, "conditions");
	yajl_gen_array_open(g);
	ctl_node_cond(g, "MemoryPressure", (pressure & EV_COND_MEMORY) != 0,
	    pressure & EV_COND_MEMORY ? "KubeletHasInsufficientMemory"
	                              : "KubeletHasSufficientMemory",
	    pressure & EV_COND_MEMORY ? "kubelet has insufficient memory available"
	                              : "kubelet has sufficient memory available");
	ctl_node_cond(g, "DiskPressure", (pressure & EV_COND_DISK) != 0,
	    pressure & EV_COND_DISK ? "KubeletHasDiskPressure" : "KubeletHasNoDiskPressure",
	    pressure & EV_COND_DISK ? "kubelet has disk pressure" : "kubelet has no disk pressure");
	ctl_node_cond(g, "PIDPressure", (pressure & EV_COND_PID) != 0,
	    pressure & EV_COND_PID ? "KubeletHasInsufficientPID" : "KubeletHasSufficientPID",
	    pressure & EV_COND_PID ? "kubelet has insufficient PID available"
	                           : "kubelet has sufficient PID available");
	ready = 0;
	if (d->cri == NULL || !ci.ready)
		snprintf(msg, sizeof(msg), "container runtime is down: %s",
		    ci.last_error != NULL ? ci.last_error : "not answering");
	else if (d->pleg != NULL && !pleg_healthy(d->pleg, now_mono_ms(), why, sizeof(why)))
		snprintf(msg, sizeof(msg), "PLEG is not healthy: %s", why);
	else if (nodeshutdown_active(d->shutdown))
		snprintf(msg, sizeof(msg), "node is shutting down");
	else {
		ready = 1;
		snprintf(msg, sizeof(msg), "kubelet is posting ready status");
	}
	ctl_node_cond(g, "Ready", ready, ready ? "KubeletReady" : "KubeletNotReady", msg);
	yajl_gen_array_close(g);

	ctl_node_resources(
	    g, "capacity", ni.cap_cpu_milli, ni.cap_memory, ni.cap_ephemeral, ni.cap_pods);
	ctl_node_resources(g, "allocatable", ni.alloc_cpu_milli, ni.alloc_memory,
	    ni.alloc_ephemeral, ni.alloc_pods);
	json_gen_key(g, "lease");
	yajl_gen_map_open(g);
	json_gen_kv_bool(g, "configured", api.configured);
	json_gen_kv_bool(g, "registered", api.registered);
	if (api.lease_age_ms >= 0)
		json_gen_kv_int(g, "renewedAgoMs", api.lease_age_ms);
	json_gen_kv_int(g, "durationSeconds", api.lease_duration_s);
	json_gen_kv_int(g, "renewals", (int64_t)api.lease_renewals);
	json_gen_kv_int(g, "statusPatches", (int64_t)api.status_patches);
	yajl_gen_map_close(g);
	json_gen_kv_str(g, "shutdownManager", nodeshutdown_state_name(d->shutdown));
	yajl_gen_map_close(g);
}

void
ctl_reply_top(const struct ctl_view *view, const struct ctl_request *rq, yajl_gen g)
{
	const struct ctl_deps *d = view->deps;
	const char            *ns = rq->all_ns ? NULL : (rq->ns[0] != '\0' ? rq->ns : "default");
	char                  *kubepods = cg_kubepods_rel(d->cfg->cgroup_root);
	struct cg_rows         rows;
	struct cg_usage        node;
	size_t                 i, j;

	cg_rows_collect(d->cache, CG_MOUNT, kubepods, &rows);
	yajl_gen_map_open(g);
	json_gen_kv_int(g, "sampleMs", now_mono_ms());
	json_gen_key(g, "node");
	yajl_gen_map_open(g);
	json_gen_kv_str(g, "name", d->cfg->node_name);
	if (cg_read(CG_MOUNT, "", &node) == 0) {
		json_gen_kv_int(g, "cpuNs", (int64_t)node.cpu_ns);
		json_gen_kv_int(g, "memoryWorkingSetBytes", (int64_t)node.working_set_bytes);
	}
	yajl_gen_map_close(g);
	json_gen_key(g, "pods");
	yajl_gen_array_open(g);
	for (i = 0; i < rows.n; i++) {
		const struct cg_row *r = &rows.v[i];

		if (r->ct != NULL || (ns != NULL && !streq_null(r->st->ns, ns)))
			continue;
		yajl_gen_map_open(g);
		json_gen_kv_str(g, "namespace", r->st->ns);
		json_gen_kv_str(g, "name", r->st->name);
		json_gen_kv_str(g, "uid", r->st->uid);
		json_gen_kv_int(g, "cpuNs", (int64_t)r->u.cpu_ns);
		json_gen_kv_int(g, "memoryWorkingSetBytes", (int64_t)r->u.working_set_bytes);
		json_gen_key(g, "containers");
		yajl_gen_array_open(g);
		for (j = 0; j < rows.n; j++) {
			const struct cg_row *c = &rows.v[j];

			if (c->st != r->st || c->ct == NULL)
				continue;
			yajl_gen_map_open(g);
			json_gen_kv_str(g, "name", c->ct->name);
			json_gen_kv_str(g, "id", c->ct->id);
			json_gen_kv_int(g, "cpuNs", (int64_t)c->u.cpu_ns);
			json_gen_kv_int(
			    g, "memoryWorkingSetBytes", (int64_t)c->u.working_set_bytes);
			yajl_gen_map_close(g);
		}
		yajl_gen_array_close(g);
		yajl_gen_map_close(g);
	}
	yajl_gen_array_close(g);
	yajl_gen_map_close(g);
	cg_rows_clear(&rows);
	free(kubepods);
}
