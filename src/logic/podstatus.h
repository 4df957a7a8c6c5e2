/* podstatus.h — the API pod status the kubelet reports (generateAPIPodStatus): phase,
 * conditions, container statuses, IPs, QoS class; the status manager's merge rules
 * (mergePodStatus); and the API JSON of a status. Pure: no I/O, no clock ("now" is given).
 */
#ifndef KLET_PODSTATUS_H
#define KLET_PODSTATUS_H

#include <stddef.h>
#include <stdint.h>
#include <yajl/yajl_gen.h>

#include "logic/actions.h"
#include "pod/pod.h"
#include "pod/runtime.h"

/* Why the last start of a container failed (the kubelet's reasonCache): reason is
 * ErrImagePull, ImagePullBackOff, ErrImageNeverPull, InvalidImageName,
 * CreateContainerConfigError, CreateContainerError, CrashLoopBackOff, RunContainerError,
 * PreStartHookError, PostStartHookError, ... Borrowed strings. */
struct start_error {
	const char *name; /* container name */
	const char *reason;
	const char *message;
};

struct start_errors {
	const struct start_error *v;
	size_t                    n;
};

/* The condition type the kubelet shares with the API's disruption controller. */
#define PODSTATUS_DISRUPTION_TARGET "DisruptionTarget"

struct podstatus_input {
	const struct pod           *pod;    /* required; pod->status is the API's status */
	const struct rt_pod_status *rt;     /* NULL: the runtime knows nothing of the pod */
	const struct probe_set     *probes; /* NULL: no probe results */
	const struct start_errors  *errors; /* NULL: none */
	/* The status manager's last generated status for this pod (lastTransitionTime and
	 * restartCount/lastState continuity); NULL: use pod->status. */
	const struct pod_status *old;
	const char              *host_ip;      /* NULL: unset */
	const char              *runtime_name; /* "containerd": containerID "containerd://ID" */
	int64_t                  now;          /* Unix seconds, wall clock */
	int pod_is_terminal; /* the pod worker says: no container will run again */
	/* Set when an internal rule evicts the pod (active deadline: "DeadlineExceeded"):
	 * phase Failed with this reason and message. NULL: none. */
	const char *evict_reason;
	const char *evict_message;
	/* The kubelet's own termination (a pressure eviction, a node shutdown): with
	 * evict_reason, a condition DisruptionTarget True, reason TerminationByKubelet, with
	 * evict_message (it replaces the API's one). */
	int evict_disruption;
};

/* Fills out (overwritten, not freed first) with the status to report. Free it with
 * pod_status_clear(). All strings in out are owned by out. */
void podstatus_generate(const struct podstatus_input *, struct pod_status *out);

/* The status manager's merge (mergePodStatus) of a newly generated status into the last
 * status known to the API (old): conditions not owned by the kubelet are kept from old,
 * kubelet-owned ones come from new; new's DisruptionTarget (shared by the kubelet) replaces
 * old's once the phase turns terminal with nothing left running; a transition to a terminal phase
 * is delayed while could_have_running is set (phase, reason, message stay old's); a terminal phase
 * is never left; Ready and ContainersReady are forced False in a terminal phase. Unchanged
 * conditions keep old's lastTransitionTime, changed ones get now. out is overwritten; free
 * with pod_status_clear(). */
void podstatus_merge(const struct pod_status *old, const struct pod_status *new,
    int could_have_running, int64_t now, struct pod_status *out);

/* Sets lastTransitionTime of every condition of s: old's when the same type has the same
 * status there, else now. old may be NULL. */
void podstatus_set_transition_times(
    struct pod_status *s, const struct pod_status *old, int64_t now);

/* 1 if the condition type is owned by the kubelet (PodScheduled, Ready, Initialized,
 * ContainersReady, PodReadyToStartContainers, PodResizeInProgress, PodResizePending). */
int podstatus_condition_is_kubelet_owned(const char *type);

/* The pod's QoS class from its containers' requests and limits (v1qos.GetPodQOS). */
enum qos_class pod_qos_class(const struct pod *);
const char    *qos_class_name(enum qos_class);

/* Looks up a condition by type; NULL when absent. */
const struct pod_condition *podstatus_find_condition(const struct pod_status *, const char *type);

/* Deep copy of src into dst (overwritten, not freed first). */
void podstatus_copy(struct pod_status *dst, const struct pod_status *src);

/* 1 if the two statuses would serialize to the same API JSON. */
int podstatus_equal(const struct pod_status *, const struct pod_status *);

/* Writes the status as the API's PodStatus JSON object (field names and null/omitted rules
 * of Go's encoding of v1.PodStatus). Returns 0, or -1 on a yajl error. */
int podstatus_to_json(const struct pod_status *, yajl_gen);

/* Convenience: the JSON text of a status; the caller frees it. */
char *podstatus_to_json_string(const struct pod_status *);

#endif
