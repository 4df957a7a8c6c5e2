/* status.h — the status manager (the kubelet's statusManager): a versioned status per pod,
 * sent to the API server as strategic-merge patches of only what changed.
 *
 * status_update generates the pod's API status (podstatus_generate, then the merge rules of
 * podstatus_merge against the last status) and, when it differs from the last one, stores a
 * new version (store_put_status) and syncs it at the end of the loop turn (all updates of a
 * turn coalesce). status_batch (every 10 s) re-sends what the server has not acknowledged.
 * A patch is the diff against the last ACKNOWLEDGED status (or, before any, the status the
 * API object has), carrying metadata.uid so that a recreated pod of the same name is never
 * patched. 404 drops the entry; a uid precondition failure (the pod was recreated) drops it;
 * other 409 / 5xx / 429 / transport failures retry with backoff (1 s doubling to 60 s),
 * never sooner than Retry-After. A pod with a deletionTimestamp whose containers have all
 * stopped is deleted (gracePeriodSeconds 0, uid precondition) once its final status is
 * acknowledged.
 */
#ifndef KLET_STATUS_H
#define KLET_STATUS_H

#include <stdint.h>

#include "pod/pod.h"
#include "pod/runtime.h"

struct event_base;
struct api;
struct store;
struct status_mgr;
struct probe_set;
struct start_errors;

struct status_options {
	struct store *store;          /* may be NULL: versions are not persisted */
	const char   *runtime_name;   /* "containerd" (containerID prefix); NULL: "containerd" */
	const char   *host_ip;        /* status.hostIP; NULL: unset */
	int64_t       backoff_min_ms; /* 0: 1 s */
	int64_t       backoff_max_ms; /* 0: 60 s */
};

struct status_stats {
	uint64_t generated; /* statuses generated (updates not skipped by their stamp) */
	uint64_t versions;  /* statuses generated that differed from the previous one */
	uint64_t patches;   /* PATCH requests sent */
	uint64_t acked;     /* PATCHes acknowledged */
	uint64_t skipped;   /* syncs where the diff was empty */
	uint64_t deletes;   /* final DELETEs sent */
	uint64_t dropped;   /* entries dropped (404, recreated pod) */
	uint64_t retries;   /* failed requests scheduled again */
	uint64_t restored;  /* statuses resumed from the store at start */
	unsigned entries;
};

/* Never NULL. opts strings are copied; api must outlive the manager. */
struct status_mgr *status_new(struct event_base *, struct api *, const struct status_options *);
/* Cancels pending requests. NULL is a no-op. */
void status_free(struct status_mgr *);

/* What a status is generated from, as the caller identifies it: the pods by identity (pods
 * are immutable; the manager holds a reference to each while it keeps the stamp, so that a
 * new pod never has an old one's address) and the other inputs by their versions
 * (podcache_get_versioned, prober_version, kuberuntime_start_errors_version). */
struct status_stamp {
	const struct pod *pod;    /* the pod the status is generated from (never NULL) */
	const struct pod *mirror; /* a static pod's mirror pod (the status goes to it), or NULL */
	uint64_t          rt;     /* the runtime status' version */
	uint64_t          probes; /* the probe results' version */
	uint64_t          errors; /* the start errors' version */
	int               terminal;
};

/* Regenerates the status of pod (the API's object, as the watch last gave it: its status is
 * the server's) from the runtime's view rt (NULL: nothing in the runtime), probe results
 * and start errors (both may be NULL). terminal: the pod worker says no container runs or
 * will run again (TERMINATED / FINISHED). Copies what it needs. stamp (may be NULL) names
 * these inputs: see status_current. */
void status_update(struct status_mgr *, const struct pod *pod, const struct rt_pod_status *rt,
    const struct probe_set *probes, const struct start_errors *errors, int terminal,
    const struct status_stamp *stamp);
/* The pod failed admission (the kubelet's rejectPod): its status becomes phase Failed with
 * reason (e.g. "OutOfpods", "NodeAffinity") and message "Pod was rejected: MESSAGE". stamp
 * as for status_update (may be NULL). */
void status_reject(struct status_mgr *, const struct pod *pod, const char *reason,
    const char *message, const struct status_stamp *stamp);
/* 1 when an update of uid with these inputs would change nothing, so the caller need not
 * gather them: its last update had an equal stamp and changed nothing (no new version, no
 * deletion wanted), and nothing outside the stamp (the host IP, an eviction) changed since.
 * Else 0 (also for an unknown uid, a restored entry not claimed yet, a dropped entry). */
int status_current(struct status_mgr *, const char *uid, const struct status_stamp *stamp);
/* A number that changes whenever status_current may turn 0 for a pod whose stamp did not
 * change: an entry went (forgotten, dropped, expired), the host IP changed, a pod was
 * evicted. */
uint64_t status_version(const struct status_mgr *);
/* The pod is gone from every source: forget it. */
void status_forget(struct status_mgr *, const char *uid);
/* The eviction manager evicted the pod, or the node shutdown manager terminated it: from now
 * on its status is phase Failed with reason and message (the kubelet's killPod status
 * function), once its containers stopped; with disruption also the DisruptionTarget
 * condition (TerminationByKubelet, message). 0, or -1 when the pod has no UID. */
int status_evict(struct status_mgr *, const struct pod *, const char *reason, const char *message,
    int disruption);
/* Calls cb for each status resumed from the store and not yet claimed by its pod. */
void status_foreach_restored(
    struct status_mgr *, void (*cb)(const struct pod_status *, void *), void *arg);
/* The node's address for the statuses generated from now on (hostIP, hostIPs); NULL unsets. */
void status_set_host_ip(struct status_mgr *, const char *ip);
/* The 10 s pass: re-sends every status the server lacks and retries due deletions (with
 * everything acknowledged: a look at each entry's versions, nothing else). */
void status_batch(struct status_mgr *);

/* The last generated status of uid (copied into out; free with pod_status_clear) and its
 * version and acknowledged version. Returns 0, or -1 when unknown. */
int status_get(
    struct status_mgr *, const char *uid, struct pod_status *out, int64_t *version, int64_t *acked);
void status_get_stats(const struct status_mgr *, struct status_stats *);

#endif
