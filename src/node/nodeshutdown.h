/* nodeshutdown.h — graceful node shutdown, the kubelet's node shutdown manager
 * (pkg/kubelet/nodeshutdown), with shutdownGracePeriod and shutdownGracePeriodCriticalPods.
 *
 * It holds a systemd-logind "delay" inhibitor lock for shutdown (node/logind.c). When logind
 * announces the shutdown (PrepareForShutdown true) the node is shutting down: the caller is
 * told (node NotReady, new pods rejected), then the pods active at that moment are
 * terminated group by group in the kubelet's order (logic/shutdown_plan.c): the pods below
 * the critical priority first with the period minus the critical part, then the critical
 * ones; a group ends when its pods are terminated or its time is up. Then the lock is
 * released and the machine goes down. A cancelled shutdown (PrepareForShutdown false) makes
 * the node Ready again and takes a new lock, once the pods being terminated are done.
 * Without libsystemd, a system bus or logind on it, the feature is off: said once in the
 * log. A bus connection lost after it worked is tried again every second, the lock kept.
 */
#ifndef KLET_NODE_NODESHUTDOWN_H
#define KLET_NODE_NODESHUTDOWN_H

#include <stdint.h>

struct event_base;
struct events;
struct pod;
struct podworkers;
struct nodeshutdown;

#define NODESHUTDOWN_REASON         "Terminated"
#define NODESHUTDOWN_MESSAGE        "Pod was terminated in response to imminent node shutdown."
/* Admission while shutting down (the manager's admit handler). */
#define NODESHUTDOWN_REJECT_REASON  "NodeShutdown"
#define NODESHUTDOWN_REJECT_MESSAGE "Pod was rejected as the node is shutting down."

struct nodeshutdown_deps {
	struct event_base *base;
	int64_t            period_s;   /* shutdownGracePeriod */
	int64_t            critical_s; /* shutdownGracePeriodCriticalPods */
	struct podworkers *workers;    /* the active pods and whether they are terminated */
	struct events     *events;     /* the node's NodeShutdown events; may be NULL */
	const char        *node_name;
	/* Terminate pod (borrowed for the call) with grace_s: report it Failed with
	 * NODESHUTDOWN_REASON and _MESSAGE and kill it. Called once per pod. */
	void (*kill)(void *arg, const struct pod *, int64_t grace_s);
	/* The node is shutting down (1), or the shutdown was cancelled (0). */
	void (*shutting_down)(void *arg, int on);
	void *arg;
};

/* NULL when period_s is 0 (the feature is off: nothing is loaded). Otherwise starts
 * connecting to logind; the deps must outlive the manager. */
struct nodeshutdown *nodeshutdown_new(const struct nodeshutdown_deps *);
/* Stops; a lock still held is released. NULL is a no-op. */
void nodeshutdown_free(struct nodeshutdown *);
/* 1 while the node is shutting down (from PrepareForShutdown true until a cancel). */
int nodeshutdown_active(const struct nodeshutdown *);
/* The manager's state for podctl: "off", "connecting", "watching" (lock held),
 * "shutting down", "done" (lock released) or "reconnecting"; "disabled" for NULL. */
const char *nodeshutdown_state_name(const struct nodeshutdown *);

#endif
