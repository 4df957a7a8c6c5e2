/* join.h — joining a cluster: the API client, the pods reflector, the status manager and
 * the node, started together when kletd has a --kubeconfig, and the few hooks kletd calls.
 */
#ifndef KLET_API_JOIN_H
#define KLET_API_JOIN_H

#include <stddef.h>
#include <stdint.h>

struct event_base;
struct klet_config;
struct store;
struct podconfig;
struct podcache;
struct podworkers;
struct kuberuntime;
struct events;
struct api;
struct api_join;

struct probe_set;

struct api_join_deps {
	struct event_base        *base;
	const struct klet_config *cfg;     /* kubeconfig, node name, labels, max pods, root */
	struct store             *store;   /* may be NULL */
	struct podconfig         *pc;      /* gets the "api" source (added by the caller) */
	struct podcache          *cache;   /* runtime status for the status manager */
	struct podworkers        *workers; /* which pods are terminal */
	struct events            *events;  /* may be NULL: events are posted to the API */
	struct kuberuntime       *kr;      /* may be NULL: start errors (waiting reasons) */
	/* May be NULL: fills the probe results (ready / started) of a pod by its runtime UID,
	 * returning 0, or -1 when it has none. The set is borrowed for the call. */
	int (*probes)(const char *uid, struct probe_set *out, void *arg);
	void *probes_arg;
	/* With probes: a number that changes whenever what probes gives for uid may have
	 * changed, or with uid NULL for any pod (prober_version). NULL: every relist
	 * regenerates every status. */
	uint64_t (*probes_version)(const char *uid, void *arg);
};

/* Loads cfg->kubeconfig and starts everything (connecting in the background). Returns NULL
 * with a one-line reason in err when the kubeconfig or its TLS material is unusable. */
struct api_join *api_join_new(const struct api_join_deps *, char *err, size_t errlen);
/* Stops everything (pending calls cancelled). Call before freeing the deps. NULL no-op. */
void api_join_free(struct api_join *);
/* After each PLEG relist: regenerates the status of each API pod (and static pod with a
 * mirror) whose inputs changed since its last generation (its pod, runtime status, probe
 * results, start errors, terminal state; the host IP, an eviction), sent at the end of the
 * turn when the status changed. When no input of any pod changed and the last pass left
 * every status current, it looks at no pod at all. */
void api_join_relisted(struct api_join *);
/* The 10 s status batch. */
void api_join_status_batch(struct api_join *);
/* The runtime's state (CRI Version answered or not); name/version may be NULL. */
void api_join_runtime(
    struct api_join *, int ready, const char *reason, const char *name, const char *version);
/* PLEG health (housekeeping). */
void api_join_pleg(struct api_join *, int healthy, const char *why);
/* Calls cb for each status the status manager resumed from the store at start (before
 * any pod claimed it). */
struct pod_status;
void api_join_foreach_restored(
    struct api_join *, void (*cb)(const struct pod_status *, void *), void *arg);
/* A pod left every source (REMOVE): its status entry is forgotten. */
void api_join_pod_removed(struct api_join *, const char *uid);
struct pod;
/* The eviction manager evicted the pod, or the node shutdown manager terminated it: its
 * status becomes Failed, reason and message, with the DisruptionTarget condition. */
void api_join_pod_evicted(
    struct api_join *, const struct pod *, const char *reason, const char *message);
/* The node is shutting down (1) or no longer (0): Ready False, KubeletNotReady, "node is
 * shutting down" (the node shutdown manager's ShutdownStatus), sent at once. */
void api_join_shutting_down(struct api_join *, int on);
/* 1 when the pod's status says it was evicted (Failed / Evicted). */
int api_join_pod_is_evicted(struct api_join *, const char *uid);
/* The eviction manager's node conditions (EV_COND_* bits) for the node status. */
void api_join_pressure(struct api_join *, unsigned conditions);
/* The image GC manager's list for the node status' images (copied). */
struct node_image;
void api_join_images(struct api_join *, const struct node_image *, size_t n);
/* The API client, for the node server's webhooks; owned by j. NULL j: NULL. */
struct api *api_join_api(struct api_join *);
/* The client certificate was renewed (--rotate-certificates): the API client uses pem_path
 * (certificate and key) from its next connection on. 0 or -1. */
int api_join_reload_client_cert(struct api_join *, const char *pem_path);

/* For podctl status: API connection state, watch state and position, age of the last watch
 * event (-1: none yet). Strings borrowed until the next loop turn. NULL j: not configured. */
struct ctl_api_info;
void api_join_ctl_info(struct ctl_api_info *out, void *j);
/* For podctl: the status manager's last status of uid (copied). 0, or -1 when unknown. */
struct pod_status;
int api_join_ctl_status(const char *uid, struct pod_status *out, void *j);

#endif
