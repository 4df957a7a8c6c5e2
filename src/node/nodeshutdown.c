/* nodeshutdown.c — graceful node shutdown (see nodeshutdown.h). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <event2/event.h>

#include "core/log.h"
#include "core/util.h"
#include "logic/shutdown_plan.h"
#include "node/events.h"
#include "node/logind.h"
#include "node/nodeshutdown.h"
#include "node/podworkers.h"
#include "pod/pod.h"

#define NS_RECONNECT_MS 1000 /* the kubelet's dbusReconnectPeriod */
#define NS_POLL_MS      250  /* how often a group's pods are checked */

enum ns_state {
	NS_OFF = 0,       /* logind unavailable: the feature is off */
	NS_CONNECTING,    /* asking logind for the delay and a lock */
	NS_WATCHING,      /* the lock is held; waiting for PrepareForShutdown */
	NS_SHUTTING_DOWN, /* terminating the pods, group by group */
	NS_DONE,          /* the pods are done, the lock released: the machine goes down */
	NS_RECONNECTING,  /* the bus connection was lost; tried again every second */
};

struct ns_member {
	const struct pod *m_pod; /* a reference */
	int64_t           m_grace;
};

struct ns_group {
	struct shutdown_group g_plan;
	struct ns_member     *g_pods;
	size_t                g_npods;
};

struct nodeshutdown {
	struct nodeshutdown_deps ns_d;
	enum ns_state            ns_state;
	struct logind           *ns_logind;
	int                      ns_lock_fd;     /* the delay lock; -1 when not held */
	int                      ns_ever_locked; /* a lock was obtained once */
	int                      ns_warned_delay;
	int                      ns_cancel_pending; /* cancelled while terminating */
	struct shutdown_group    ns_plan[SHUTDOWN_MAX_GROUPS];
	size_t                   ns_nplan;
	struct ns_group          ns_groups[SHUTDOWN_MAX_GROUPS];
	size_t                   ns_cur; /* the group being terminated */
	int64_t                  ns_started_ms;
	struct event            *ns_deadline; /* the current group's time */
	struct event            *ns_poll;     /* its pods checked */
	struct event            *ns_retry;    /* reconnect, and freeing a failed logind */
};

static const char *const ns_state_names[] = { "off", "connecting", "watching", "shutting down",
	"done", "reconnecting" };

static void
ns_set_state(struct nodeshutdown *ns, enum ns_state st)
{
	if (ns->ns_state == st)
		return;
	log_v(
	    2, "node shutdown manager: %s -> %s", ns_state_names[ns->ns_state], ns_state_names[st]);
	ns->ns_state = st;
}

static void
ns_node_event(struct nodeshutdown *ns, const char *message)
{
	struct ev_object obj = {
		.kind = "Node", .name = ns->ns_d.node_name, .uid = ns->ns_d.node_name
	};

	events_record(ns->ns_d.events, &obj, EV_NORMAL, "NodeShutdown", "%s", message);
}

static void
ns_release(struct nodeshutdown *ns)
{
	if (ns->ns_lock_fd != -1) {
		close(ns->ns_lock_fd);
		ns->ns_lock_fd = -1;
	}
}

static void
ns_groups_clear(struct nodeshutdown *ns)
{
	size_t i, j;

	for (i = 0; i < SHUTDOWN_MAX_GROUPS; i++) {
		for (j = 0; j < ns->ns_groups[i].g_npods; j++)
			pod_unref(ns->ns_groups[i].g_pods[j].m_pod);
		free(ns->ns_groups[i].g_pods);
		memset(&ns->ns_groups[i], 0, sizeof(ns->ns_groups[i]));
	}
}

static void ns_connect(struct nodeshutdown *);

/* A cancelled shutdown: the node is Ready again and a new lock is taken. */
static void
ns_cancelled(struct nodeshutdown *ns)
{
	log_info("node shutdown manager: the shutdown was cancelled");
	ns_node_event(ns, "Shutdown manager detected shutdown cancellation");
	ns->ns_d.shutting_down(ns->ns_d.arg, 0);
	ns_set_state(ns, NS_CONNECTING);
	if (ns->ns_logind != NULL)
		logind_inhibit(ns->ns_logind);
	else
		ns_connect(ns);
}

static void
ns_finish(struct nodeshutdown *ns)
{
	event_del(ns->ns_deadline);
	event_del(ns->ns_poll);
	ns_groups_clear(ns);
	ns_release(ns);
	log_info("node shutdown manager: done in %lldms; the inhibitor lock is released, the node "
	         "shuts down",
	    (long long)(now_mono_ms() - ns->ns_started_ms));
	ns_set_state(ns, NS_DONE);
	if (ns->ns_cancel_pending) {
		ns->ns_cancel_pending = 0;
		ns_cancelled(ns);
	}
}

static int
ns_pod_done(struct nodeshutdown *ns, const struct pod *pod)
{
	struct pw_view v;

	return podworkers_get(ns->ns_d.workers, pod->uid, &v) == -1 || v.state >= PW_TERMINATED;
}

/* Starts the next group that has pods, or finishes. */
static void
ns_group_next(struct nodeshutdown *ns)
{
	struct ns_group *g;
	struct timeval   tv;
	size_t           i;

	event_del(ns->ns_deadline);
	event_del(ns->ns_poll);
	while (ns->ns_cur < ns->ns_nplan && ns->ns_groups[ns->ns_cur].g_npods == 0)
		ns->ns_cur++; /* no pods of this priority: no wait */
	if (ns->ns_cur >= ns->ns_nplan) {
		ns_finish(ns);
		return;
	}
	g = &ns->ns_groups[ns->ns_cur];
	log_info(
	    "node shutdown manager: terminating %zu pods of priority %d and above within %llds",
	    g->g_npods, (int)g->g_plan.priority, (long long)g->g_plan.grace_s);
	for (i = 0; i < g->g_npods; i++) {
		const struct pod *p = g->g_pods[i].m_pod;

		log_v(1, "node shutdown manager: killing pod %s/%s with grace %llds", p->ns,
		    p->name, (long long)g->g_pods[i].m_grace);
		ns->ns_d.kill(ns->ns_d.arg, p, g->g_pods[i].m_grace);
	}
	tv = ms_to_tv(g->g_plan.grace_s * 1000);
	evtimer_add(ns->ns_deadline, &tv);
	tv = ms_to_tv(NS_POLL_MS);
	evtimer_add(ns->ns_poll, &tv);
}

static void
ns_poll_cb(evutil_socket_t fd, short what, void *arg)
{
	struct nodeshutdown *ns = arg;
	struct ns_group     *g = &ns->ns_groups[ns->ns_cur];
	struct timeval       tv = ms_to_tv(NS_POLL_MS);
	size_t               i;

	(void)fd;
	(void)what;
	for (i = 0; i < g->g_npods; i++)
		if (!ns_pod_done(ns, g->g_pods[i].m_pod)) {
			evtimer_add(ns->ns_poll, &tv);
			return;
		}
	log_v(1, "node shutdown manager: the pods of priority %d and above are terminated",
	    (int)g->g_plan.priority);
	ns->ns_cur++;
	ns_group_next(ns);
}

static void
ns_deadline_cb(evutil_socket_t fd, short what, void *arg)
{
	struct nodeshutdown *ns = arg;
	struct ns_group     *g = &ns->ns_groups[ns->ns_cur];

	(void)fd;
	(void)what;
	log_warnx("node shutdown manager: the pods of priority %d and above are not all terminated "
	          "after %llds; going on",
	    (int)g->g_plan.priority, (long long)g->g_plan.grace_s);
	ns->ns_cur++;
	ns_group_next(ns);
}

static void
ns_collect(const struct pw_view *v, void *arg)
{
	struct nodeshutdown *ns = arg;
	struct ns_group     *g;
	size_t               gi;

	if (v->state >= PW_TERMINATED || v->pod == NULL)
		return; /* the kubelet's active pods: not yet terminated */
	gi = shutdown_plan_group_of(ns->ns_plan, ns->ns_nplan, shutdown_plan_priority(v->pod));
	g = &ns->ns_groups[gi];
	g->g_pods = xreallocarray(g->g_pods, g->g_npods + 1, sizeof(*g->g_pods));
	g->g_pods[g->g_npods].m_pod = pod_ref(v->pod);
	g->g_pods[g->g_npods].m_grace = shutdown_plan_grace(&g->g_plan, v->pod);
	g->g_npods++;
}

/* PrepareForShutdown(true): the pods active now, by group, then the first group. */
static void
ns_shutdown(struct nodeshutdown *ns)
{
	size_t i;

	if (ns->ns_state == NS_SHUTTING_DOWN || ns->ns_state == NS_DONE) {
		ns->ns_cancel_pending = 0; /* shutting down after all */
		return;
	}
	ns->ns_started_ms = now_mono_ms();
	ns_set_state(ns, NS_SHUTTING_DOWN);
	log_info("node shutdown manager: the node is shutting down; terminating the pods");
	ns_node_event(ns, "Shutdown manager detected shutdown event");
	ns->ns_d.shutting_down(ns->ns_d.arg, 1);
	ns_groups_clear(ns);
	for (i = 0; i < ns->ns_nplan; i++)
		ns->ns_groups[i].g_plan = ns->ns_plan[i];
	podworkers_foreach(ns->ns_d.workers, ns_collect, ns);
	ns->ns_cur = 0;
	ns_group_next(ns);
}

static void
ns_locked(struct nodeshutdown *ns, int fd, uint64_t delay_us)
{
	int64_t delay_s = (int64_t)(delay_us / 1000000);

	ns_release(ns); /* the previous lock, if any: the new one holds now */
	ns->ns_lock_fd = fd;
	ns->ns_nplan = shutdown_plan_groups(ns->ns_d.period_s, ns->ns_d.critical_s, ns->ns_plan);
	if (shutdown_plan_fit(ns->ns_plan, ns->ns_nplan, delay_s) && !ns->ns_warned_delay++)
		log_warnx(
		    "node shutdown manager: systemd-logind holds a shutdown back %llds at "
		    "most (InhibitDelayMaxSec), less than shutdownGracePeriod %llds: the pods "
		    "get %llds, the critical pods %llds. InhibitDelayMaxSec=%lld in a drop-in "
		    "of /etc/systemd/logind.conf.d/ gives them the whole period",
		    (long long)delay_s, (long long)ns->ns_d.period_s,
		    (long long)ns->ns_plan[0].grace_s, (long long)ns->ns_plan[1].grace_s,
		    (long long)ns->ns_d.period_s);
	if (!ns->ns_ever_locked || ns->ns_state != NS_RECONNECTING)
		log_info("node shutdown manager: the shutdown inhibitor lock is held (delay up to "
		         "%llds); pods get %llds, critical pods %llds",
		    (long long)delay_s, (long long)ns->ns_plan[0].grace_s,
		    (long long)ns->ns_plan[1].grace_s);
	ns->ns_ever_locked = 1;
	if (ns->ns_state == NS_CONNECTING || ns->ns_state == NS_RECONNECTING)
		ns_set_state(ns, NS_WATCHING);
}

static void
ns_retry_cb(evutil_socket_t fd, short what, void *arg)
{
	struct nodeshutdown *ns = arg;

	(void)fd;
	(void)what;
	logind_free(ns->ns_logind); /* a failed one, freed here and not in its callback */
	ns->ns_logind = NULL;
	if (ns->ns_state == NS_RECONNECTING)
		ns_connect(ns);
}

static void
ns_logind_cb(enum logind_event ev, int fd, uint64_t delay_us, const char *why, void *arg)
{
	struct nodeshutdown *ns = arg;
	struct timeval       tv = ms_to_tv(NS_RECONNECT_MS);

	switch (ev) {
	case LOGIND_LOCKED:
		ns_locked(ns, fd, delay_us);
		break;
	case LOGIND_SHUTDOWN:
		ns_shutdown(ns);
		break;
	case LOGIND_CANCELLED:
		if (ns->ns_state == NS_SHUTTING_DOWN)
			ns->ns_cancel_pending = 1; /* as the kubelet: after the pods are done */
		else if (ns->ns_state == NS_DONE)
			ns_cancelled(ns);
		else
			log_v(1, "node shutdown manager: a shutdown was cancelled");
		break;
	case LOGIND_FAILED:
		if (!ns->ns_ever_locked) {
			log_warnx("graceful node shutdown is off: %s", why);
			ns_set_state(ns, NS_OFF);
			event_active(ns->ns_retry, EV_TIMEOUT, 0); /* frees it */
			break;
		}
		if (ns->ns_state == NS_SHUTTING_DOWN || ns->ns_state == NS_DONE) {
			/* the bus goes down with the machine: nothing more to hear */
			log_v(1, "node shutdown manager: %s", why);
			event_active(ns->ns_retry, EV_TIMEOUT, 0); /* frees it */
			break;
		}
		log_warnx(
		    "node shutdown manager: %s; connecting again every %dms", why, NS_RECONNECT_MS);
		if (ns->ns_state == NS_WATCHING || ns->ns_state == NS_CONNECTING)
			ns_set_state(ns, NS_RECONNECTING);
		evtimer_add(ns->ns_retry, &tv);
		break;
	default:
		fatalx("%s: bad logind event %d", __func__, ev);
	}
}

static void
ns_connect(struct nodeshutdown *ns)
{
	char           err[512];
	struct timeval tv = ms_to_tv(NS_RECONNECT_MS);

	ns->ns_logind = logind_new(ns->ns_d.base, "kletd",
	    "kletd needs time to terminate the pods before the node shuts down", ns_logind_cb, ns,
	    err, sizeof(err));
	if (ns->ns_logind != NULL)
		return;
	if (!ns->ns_ever_locked) {
		log_warnx("graceful node shutdown is off: %s", err);
		ns_set_state(ns, NS_OFF);
		return;
	}
	log_v(1, "node shutdown manager: %s; trying again in %dms", err, NS_RECONNECT_MS);
	evtimer_add(ns->ns_retry, &tv);
}

struct nodeshutdown *
nodeshutdown_new(const struct nodeshutdown_deps *d)
{
	struct nodeshutdown *ns;

	if (d->period_s <= 0)
		return NULL;
	ns = xcalloc(1, sizeof(*ns));
	ns->ns_d = *d;
	ns->ns_lock_fd = -1;
	ns->ns_state = NS_CONNECTING;
	ns->ns_nplan = shutdown_plan_groups(d->period_s, d->critical_s, ns->ns_plan);
	ns->ns_deadline = evtimer_new(d->base, ns_deadline_cb, ns);
	ns->ns_poll = evtimer_new(d->base, ns_poll_cb, ns);
	ns->ns_retry = evtimer_new(d->base, ns_retry_cb, ns);
	log_info("node shutdown manager: shutdownGracePeriod %llds, "
	         "shutdownGracePeriodCriticalPods %llds",
	    (long long)d->period_s, (long long)d->critical_s);
	ns_connect(ns);
	return ns;
}

void
nodeshutdown_free(struct nodeshutdown *ns)
{
	if (ns == NULL)
		return;
	logind_free(ns->ns_logind);
	ns_release(ns);
	ns_groups_clear(ns);
	event_free(ns->ns_deadline);
	event_free(ns->ns_poll);
	event_free(ns->ns_retry);
	free(ns);
}

int
nodeshutdown_active(const struct nodeshutdown *ns)
{
	return ns != NULL && (ns->ns_state == NS_SHUTTING_DOWN || ns->ns_state == NS_DONE);
}

const char *
nodeshutdown_state_name(const struct nodeshutdown *ns)
{
	return ns == NULL ? "disabled" : ns_state_names[ns->ns_state];
}
