/* actions.h — computePodActions: what one sync of a pod must do, decided from the pod spec,
 * what the runtime says about it and the probe results. Pure: no I/O, no clock, no loop.
 *
 * Mirrors the kubelet's kuberuntime computePodActions (with sidecar containers enabled):
 * sandbox (re)creation, init containers one at a time, sidecars (init containers with
 * restartPolicy Always) started in order and kept running, app containers started/killed
 * by restart policy, spec hash, liveness and startup probes, ephemeral containers once.
 */
#ifndef KLET_ACTIONS_H
#define KLET_ACTIONS_H

#include <stddef.h>
#include <stdint.h>

#include "pod/pod.h"
#include "pod/runtime.h"

/* A probe's latest result. PROBE_NONE: no result yet (probe not run, or no worker). */
enum probe_res { PROBE_NONE = 0, PROBE_SUCCESS, PROBE_FAILURE };

/* The prober's results for one running container, keyed by the runtime container ID
 * (bare ID, no "containerd://"). Borrowed: the caller owns the strings. */
struct probe_state {
	const char    *container_id;
	enum probe_res liveness;
	enum probe_res readiness;
	enum probe_res startup;
};

struct probe_set {
	const struct probe_state *v;
	size_t                    n;
};

/* Returns the entry for that container ID, or NULL (set may be NULL). */
const struct probe_state *probe_set_find(const struct probe_set *, const char *container_id);

/* Why a container is killed (the kubelet's containerKillReason). */
enum kill_reason {
	KILL_REASON_NONE = 0, /* spec changed, pod killed, ... */
	KILL_REASON_LIVENESS, /* "Unhealthy" liveness failure */
	KILL_REASON_STARTUP,  /* startup probe failure */
	KILL_REASON_UNKNOWN,  /* runtime state unknown: kill before restart */
};

struct kill_entry {
	char               *container_id; /* bare runtime ID; owned */
	char               *name;         /* container name; owned */
	enum container_kind kind;         /* CK_APP or CK_INIT */
	size_t              index;        /* index in the pod's list of that kind */
	enum kill_reason    reason;
	char *message; /* "Container web failed liveness probe, will be restarted"; owned */
};

struct pod_actions {
	int      kill_pod;       /* stop every container and the sandbox first */
	int      create_sandbox; /* (re)create the sandbox */
	char    *sandbox_id; /* current sandbox (the one to use, or to kill); owned, may be NULL */
	uint32_t attempt;    /* attempt number for a new sandbox */
	/* Init containers to start, in this order (indexes into pod->init_containers). Classic
	 * init containers: at most one. Sidecars may add more. */
	size_t *init_start;
	size_t  ninit_start;
	/* Classic view: the first entry of init_start, or -1 when none. */
	long               next_init;
	size_t            *start; /* app containers to start (pod->containers indexes) */
	size_t             nstart;
	struct kill_entry *kill; /* containers to kill (not when kill_pod covers them) */
	size_t             nkill;
	size_t            *ephemeral_start; /* pod->ephemeral_containers indexes */
	size_t             nephemeral_start;
};

/* Computes the actions for one sync. rt may be NULL (nothing known: treated as no sandbox).
 * probes may be NULL (no results). out is overwritten; free it with pod_actions_clear().
 * Container hashes are compared with container_hash() of the spec. */
void pod_actions_compute(const struct pod *, const struct rt_pod_status *rt,
    const struct probe_set *probes, struct pod_actions *out);

/* Frees the members of a; the struct itself is the caller's. NULL is a no-op. */
void pod_actions_clear(struct pod_actions *a);

/* One line for logs: "killPod=0 createSandbox=1 attempt=2 init=[0] start=[0,1] kill=[web]
 * ephemeral=[]". Returns a string the caller frees. */
char *pod_actions_format(const struct pod *, const struct pod_actions *);

/* The kubelet's PodSandboxChanged: returns 1 if a new sandbox is needed; sets *attempt
 * and *sandbox_id (borrowed from rt, may be NULL). */
int pod_sandbox_changed(
    const struct pod *, const struct rt_pod_status *rt, uint32_t *attempt, const char **sandbox_id);

/* The kubelet's ShouldContainerBeRestarted: 1 if container c (of pod) should be (re)started
 * now by the pod's restart policy given its newest runtime instance; 0 otherwise
 * (running, pod being deleted, Never, or OnFailure after exit code 0). */
int container_should_restart(
    const struct container *c, const struct pod *, const struct rt_pod_status *rt);

/* The newest runtime instance of a container name, or NULL (rt may be NULL). */
const struct rt_container *actions_find_rt(const struct rt_pod_status *rt, const char *name);

/* 1 if the pod's containers have all finished for good under its restart policy (Never:
 * every app container exited; OnFailure: every app container exited 0), or an init container
 * failed under Never, or the API status already has a terminal phase (Succeeded, Failed).
 * Such a pod's sandbox is not recreated; the worker may terminate it. */
int pod_is_terminal(const struct pod *, const struct rt_pod_status *rt);

/* 1 if any container of the pod is running or created or unknown in rt. */
int pod_has_running_containers(const struct rt_pod_status *rt);

/* 1 if the init container exited non-zero, was OOM-killed, or is in unknown state. */
int init_container_failed(const struct rt_container *);

#endif
