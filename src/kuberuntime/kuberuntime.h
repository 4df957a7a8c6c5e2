/* kuberuntime.h — the kubelet's kubeGenericRuntimeManager as asynchronous step machines.
 *
 * SyncPod (kill pod / kill unwanted containers / create sandbox / ephemeral / init / app
 * containers), startContainer (image by pull policy, create, start, postStart hook),
 * killContainer / killPod (preStop hook, grace periods, concurrent stops, sandbox stop),
 * crash-loop and image-pull backoff, and the events they record. Every CRI call is
 * asynchronous on the loop; a machine continues from the call's callback. The work is
 * handed to podworkers through a struct pw_syncer (kuberuntime_syncer): each transaction
 * ends with exactly one pw_txn_done(), never after the worker cancelled it.
 *
 * Decisions read the pod cache and never act on a status older than the machine's own
 * last action (podcache "newer than" read; the machine re-reads the runtime itself when the
 * cache is stale).
 */
#ifndef KLET_KUBERUNTIME_H
#define KLET_KUBERUNTIME_H

#include <stddef.h>
#include <stdint.h>

#include "node/podworkers.h"

struct event_base;
struct cri;
struct podcache;
struct events;
struct klet_config;
struct pod;
struct rt_pod_status;
struct kuberuntime;

/* Tunables; kuberuntime_new accepts NULL for all defaults. */
struct kr_options {
	/* The cgroupfs parent of pod cgroups: pods go to ROOT/besteffort/podUID,
	 * ROOT/burstable/podUID or ROOT/podUID (guaranteed), as the kubelet's cgroupfs driver.
	 * NULL: "/kubepods"; "": no cgroup parent is set. */
	const char *cgroup_root;
	/* The pod cgroup manager's name of the pod's cgroup (the sandbox's CgroupParent),
	 * replacing cgroup_root's when set (node/cgroups.c). */
	const char *(*pod_cgroup)(void *arg, const struct pod *, char *buf, size_t len);
	/* Makes and configures the pod's cgroup if it is not there (node/cgroups.c), or NULL:
	 * before the pod's containers are created, and for a new sandbox once its answer has
	 * come (runc makes a missing parent; the sandbox's pause process is not the pod's
	 * code, and the limits are written before the first container is created). */
	int (*pod_cgroup_make)(void *arg, const struct pod *);
	void *pod_cgroup_arg;
	/* Timeout of PullImage (default 5 min); other calls use cfg->runtime_timeout_ms. */
	int64_t pull_timeout_ms;
	/* The node's IP for status.hostIP (downward API). NULL: the first non-loopback IPv4
	 * address of the host, looked up once. */
	const char *host_ip;
	/* Crash-loop backoff: initial and maximum delay (kubelet: 10 s, 300 s). 0: defaults. */
	int64_t crash_backoff_initial_ms;
	int64_t crash_backoff_max_ms;
	/* Image pull backoff: initial and maximum delay (kubelet: 10 s, 300 s). 0: defaults. */
	int64_t pull_backoff_initial_ms;
	int64_t pull_backoff_max_ms;
};

/* Returns a new runtime manager. cri, cache and cfg must outlive it; events may be NULL.
 * cfg supplies root_dir, pod_logs_dir, resolv_conf, cluster_dns/domain, node_name,
 * runtime_handlers and runtime_timeout_ms. Never NULL. */
struct kuberuntime *kuberuntime_new(struct event_base *, struct cri *, struct podcache *,
    const struct klet_config *cfg, struct events *, const struct kr_options *);
/* Cancels every machine (their CRI calls are cancelled by owner, timers deleted, no
 * callback runs afterwards, no pw_txn_done is called) and frees everything. NULL: no-op. */
void kuberuntime_free(struct kuberuntime *);

/* Fills out with sync_pod, sync_terminating, sync_terminated and cancel (arg = kr);
 * state_changed is set to NULL (the caller may set its own). */
void kuberuntime_syncer(struct kuberuntime *, struct pw_syncer *out);

/* Called with a pod UID when that pod should be synced again soon: a crash-loop or
 * image-pull backoff expired, or a machine saw a change the cache has not caught up with.
 * Wire it to podworkers_kick. */
void kuberuntime_set_resync(
    struct kuberuntime *, void (*fn)(const char *uid, void *arg), void *arg);
/* recovery: on (kletd, whose PLEG relists into the cache), a pod sync before the first
 * relist waits for it instead of reading the runtime pod by pod; off by default (a cache
 * nobody fills would hold every sync). */
void kuberuntime_wait_first_relist(struct kuberuntime *, int on);

/* Recovery: intent records. Before a CRI call that creates something (RunPodSandbox for a
 * sandbox attempt, CreateContainer for a container's restart count) put() records it and
 * must make the record durable before returning (kletd: a store write and commit); del()
 * drops it once the runtime answered (and, for a container, once StartContainer answered).
 * A container the runtime lists as created but never started, whose intent is still
 * recorded (the daemon stopped between CreateContainer and StartContainer), is adopted: it
 * is started, not replaced by a new one with the next restart count. kind is "sandbox" or
 * "container"; name is the container name, "" for a sandbox. has() returns 1 when that
 * exact intent is recorded. NULL ops (the default): none kept. The struct is copied. */
struct kr_intents {
	void (*put)(
	    void *arg, const char *uid, const char *kind, const char *name, int64_t attempt);
	void (*del)(
	    void *arg, const char *uid, const char *kind, const char *name, int64_t attempt);
	int (*has)(void *arg, const char *uid, const char *kind, const char *name, int64_t attempt);
	void *arg;
};
void kuberuntime_set_intents(struct kuberuntime *, const struct kr_intents *);

/* The prober's latest results for a pod (liveness / startup failures make SyncPod kill
 * and restart containers). fn fills out (borrowed, valid until the sync step returns) and
 * returns 0, or -1 when it has nothing. Optional. */
struct probe_set;
void kuberuntime_set_probes(
    struct kuberuntime *, int (*fn)(const char *uid, struct probe_set *out, void *arg), void *arg);
/* volumes: where configMap / secret volumes and env references are read (volumes.h); NULL
 * (the default): pods using them fail with CreateContainerConfigError. Not owned. */
struct volumes;
void kuberuntime_set_volumes(struct kuberuntime *, struct volumes *);
/* RuntimeClass objects of the cluster (api/runtimeclass.h): lookup returns 1 with the
 * class's handler (borrowed for the call), 0 when the cluster has no such class. Without it
 * (NULL, the default) only --runtime-handler NAME=HANDLER maps classes. */
void kuberuntime_set_runtime_classes(struct kuberuntime *,
    int (*lookup)(const char *name, const char **handler, void *arg), void *arg);

/* ---- what the status code and podctl read ---- */

/* The last start failure of one container (the kubelet's reasonCache): reason is one of
 * ErrImagePull, ImagePullBackOff, ErrImageNeverPull, InvalidImageName, ImageInspectError,
 * CreateContainerConfigError, CreateContainerError, RunContainerError, PostStartHookError,
 * CrashLoopBackOff; cleared when the container starts. */
struct kr_start_error {
	const char *container;
	const char *reason;
	const char *message;
	int64_t     at_ms; /* Unix milliseconds */
};

/* Returns 0 and fills out (strings valid until the next call into kr) if the container
 * has a recorded start failure; -1 if none. */
int kuberuntime_start_error(
    struct kuberuntime *, const char *uid, const char *container, struct kr_start_error *out);
/* Calls cb for every recorded start failure of the pod. */
void kuberuntime_foreach_start_error(struct kuberuntime *, const char *uid,
    void (*cb)(const struct kr_start_error *, void *), void           *arg);

/* A number that changes whenever the pod's recorded start failures (reason or message) may
 * have changed (0: it has none); with uid NULL, one that changes with any pod's. */
uint64_t kuberuntime_start_errors_version(struct kuberuntime *, const char *uid);

/* One pod's machine, for podctl. Strings valid until the next call into kr. */
struct kr_pod_view {
	const char *uid;
	const char *machine;         /* "sync", "terminating", "terminated" or NULL when idle */
	const char *step;            /* "kill-pod", "kill-containers", "create-sandbox",
	                              * "ephemeral", "init", "app", "done", ... or NULL */
	const char *call;            /* in-flight CRI call ("RunPodSandbox", "PullImage", ...)
	                              * or hook ("postStart exec"), or NULL */
	const char *call_target;     /* container name or NULL */
	int64_t     call_started_ms; /* monotonic */
	const char *sandbox_id;      /* the sandbox the machine uses, or NULL */
	const char *sandbox_error;   /* last sandbox failure (reason: message), or NULL */
	const char *last_error;      /* last failed transaction's error, or NULL */
	const char *last_step;       /* the step the last transaction ended in, or NULL */
	size_t      nstart_errors;
	int64_t     last_sync_ms; /* monotonic end of the last transaction, 0 if none */
};

/* Returns 0 and fills out if kr knows the pod, -1 otherwise. */
int  kuberuntime_get(struct kuberuntime *, const char *uid, struct kr_pod_view *out);
void kuberuntime_foreach(
    struct kuberuntime *, void (*cb)(const struct kr_pod_view *, void *), void *arg);

/* Drops what kr keeps about a pod (start errors, backoff entries); call when its worker
 * is removed. A machine still running for the pod is cancelled first. */
void kuberuntime_forget(struct kuberuntime *, const char *uid);

/* ---- for housekeeping ---- */

/* Kills a pod known only from the runtime (no spec: default grace, no hooks): stops every
 * running container concurrently, then the sandboxes. done(rc, arg) runs once on the loop
 * unless kuberuntime_kill_cancel or kuberuntime_free comes first. Returns a handle. */
struct kr_kill;
struct kr_kill *kuberuntime_kill_running(struct kuberuntime *, const struct rt_pod_status *,
    int64_t grace_seconds, void (*done)(int rc, void *arg), void *arg);
void            kuberuntime_kill_cancel(struct kr_kill *);

/* ---- pure helpers, also used by tests, housekeeping and the status code ---- */

/* The pod's cgroup parent into buf ("" when disabled). Returns buf. */
const char *kuberuntime_pod_cgroup(
    const char *cgroup_root, const struct pod *, char *buf, size_t len);
/* The pod's log directory: LOGS/NS_NAME_UID (caller frees). */
char *kuberuntime_pod_log_dir(const char *logs_dir, const struct pod *);
/* The pod's directory under the root dir: ROOT/pods/UID (caller frees). */
char *kuberuntime_pod_dir(const char *root_dir, const char *uid);

/* The grace period killContainer starts from: override (>= 0, the pod worker's grace)
 * wins; else the deletion grace period, else terminationGracePeriodSeconds, else 30 (pod
 * NULL, known only from the runtime: 2). The preStop hook runs within it and its time is
 * deducted; the rest is StopContainer's timeout, never below KR_MIN_GRACE_SECONDS (so this
 * function never returns less). */
#define KR_MIN_GRACE_SECONDS 2
int64_t kuberuntime_grace(const struct pod *, int64_t override);

/* The restart count a new instance of container name gets when the runtime lost the
 * previous ones: one more than the highest N of LOGDIR/NAME/N.log, or 0. */
int kuberuntime_restart_count_from_logs(const char *pod_log_dir, const char *name);

#endif
