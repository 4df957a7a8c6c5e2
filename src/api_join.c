/* api_join.c — wiring of api, watch, status and node for kletd (see api_join.h). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api.h"
#include "api_join.h"
#include "config.h"
#include "kubeconfig.h"
#include "log.h"
#include "node.h"
#include "podcache.h"
#include "podconfig.h"
#include "podworkers.h"
#include "status.h"
#include "util.h"
#include "watch.h"

struct api_join {
	struct api_join_deps  j_deps;
	struct kubeconfig    *j_kc;
	struct api           *j_api;
	struct watch         *j_watch;
	struct status_mgr    *j_status;
	struct node          *j_node;
};

/* Test knobs (milliseconds), e.g. a short PING interval for outage tests. */
static int64_t
env_ms(const char *name)
{
	const char *v = getenv(name);

	return v != NULL ? strtoll(v, NULL, 10) : 0;
}

struct api_join *
api_join_new(const struct api_join_deps *d, char *err, size_t errlen)
{
	struct api_join *j = xcalloc(1, sizeof(*j));
	struct api_options ao;
	struct watch_options wo;
	struct status_options so;
	struct node_options no;
	char e[512];

	j->j_deps = *d;
	j->j_kc = kubeconfig_load(d->cfg->kubeconfig, e, sizeof(e));
	if (j->j_kc == NULL) {
		snprintf(err, errlen, "--kubeconfig %s", e);
		free(j);
		return NULL;
	}
	memset(&ao, 0, sizeof(ao));
	ao.ping_interval_ms = env_ms("KLET_API_PING_INTERVAL_MS");
	ao.ping_timeout_ms = env_ms("KLET_API_PING_TIMEOUT_MS");
	j->j_api = api_new(d->base, j->j_kc, &ao, e, sizeof(e));
	if (j->j_api == NULL) {
		snprintf(err, errlen, "--kubeconfig %s: %s", d->cfg->kubeconfig, e);
		kubeconfig_free(j->j_kc);
		free(j);
		return NULL;
	}
	log_info("joining the cluster at %s as node %s (context %s)", j->j_kc->server,
	    d->cfg->node_name, j->j_kc->context);
	memset(&no, 0, sizeof(no));
	no.name = d->cfg->node_name;
	no.labels = &d->cfg->node_labels;
	no.max_pods = d->cfg->max_pods;
	no.root_dir = d->cfg->root_dir;
	no.register_node = d->cfg->register_node;
	no.status_check_ms = d->cfg->node_status_ms > 0 ? d->cfg->node_status_ms : 0;
	no.lease_duration_s = d->cfg->lease_duration_s;
	no.lease_renew_ms = env_ms("KLET_LEASE_RENEW_MS");
	j->j_node = node_new(d->base, j->j_api, &no);
	/* NotReady until the runtime has answered. */
	node_set_runtime_health(j->j_node, 0, "container runtime status check may not have "
	    "completed yet");
	memset(&so, 0, sizeof(so));
	so.store = d->store;
	j->j_status = status_new(d->base, j->j_api, &so);
	memset(&wo, 0, sizeof(wo));
	wo.node = d->cfg->node_name;
	wo.pc = d->pc;
	wo.store = d->store;
	wo.resume = 1;
	j->j_watch = watch_new(d->base, j->j_api, &wo);
	return j;
}

void
api_join_free(struct api_join *j)
{
	if (j == NULL)
		return;
	watch_free(j->j_watch);
	status_free(j->j_status);
	node_free(j->j_node);
	api_free(j->j_api);
	kubeconfig_free(j->j_kc);
	free(j);
}

static void
relisted_pod(const struct pod *pod, const char *source, int admitted, void *arg)
{
	struct api_join *j = arg;
	const struct rt_pod_status *rt;
	struct pw_view v;
	int terminal = 0;

	if (source == NULL || strcmp(source, "api") != 0 || !admitted || pod->uid == NULL)
		return;
	rt = podcache_get(j->j_deps.cache, pod->uid, NULL);
	if (podworkers_get(j->j_deps.workers, pod->uid, &v) == 0)
		terminal = v.state == PW_TERMINATED || v.state == PW_FINISHED;
	else if (pod->deletion_ts != 0 && (rt == NULL || rt->ncontainers == 0))
		terminal = 1;   /* never started here and being deleted */
	status_update(j->j_status, pod, rt, NULL, NULL, terminal);
}

void
api_join_relisted(struct api_join *j)
{
	if (j == NULL)
		return;
	podconfig_foreach(j->j_deps.pc, relisted_pod, j);
}

void
api_join_status_batch(struct api_join *j)
{
	if (j != NULL)
		status_batch(j->j_status);
}

void
api_join_runtime(struct api_join *j, int ready, const char *reason, const char *name,
    const char *version)
{
	if (j == NULL)
		return;
	node_set_runtime_health(j->j_node, ready, ready ? NULL : reason);
	if (ready && name != NULL && version != NULL)
		node_set_runtime_version(j->j_node, name, version);
}

void
api_join_pleg(struct api_join *j, int healthy, const char *why)
{
	if (j != NULL)
		node_set_pleg_health(j->j_node, healthy, healthy ? NULL : why);
}

void
api_join_pod_removed(struct api_join *j, const char *uid)
{
	if (j != NULL)
		status_forget(j->j_status, uid);
}
