/* admit.h — the kubelet's pod admission (canAdmitPod) as pure functions: the eviction
 * manager's pressure check, the OS checks, GeneralPredicates (resources fit, node affinity
 * and nodeSelector, node name, host ports) and the node's NoExecute taints, over a node
 * description and the pods already admitted. The first failure is reported with the
 * kubelet's reason and message, as lifecycle.predicateAdmitHandler does. */
#ifndef KLET_ADMIT_H
#define KLET_ADMIT_H

#include <stddef.h>
#include <stdint.h>

#include "pod/pod.h"

/* Node conditions that refuse pods (the eviction manager's admit handler). */
#define ADMIT_MEMORY_PRESSURE 0x1 /* BestEffort pods refused, unless critical */
#define ADMIT_DISK_PRESSURE   0x2 /* every pod refused, unless critical */
#define ADMIT_PID_PRESSURE    0x4 /* every pod refused, unless critical */

struct admit_taint {
	const char *key;
	const char *value;  /* may be NULL */
	const char *effect; /* NoSchedule, PreferNoSchedule, NoExecute */
};

struct admit_node {
	const char               *name;
	const struct kvlist      *labels; /* may be NULL */
	const struct admit_taint *taints;
	size_t                    ntaints;
	/* Allocatable, as the node status reports it; a negative value is not checked. */
	int64_t                     cpu_milli;
	int64_t                     memory;    /* bytes */
	int64_t                     ephemeral; /* bytes */
	int64_t                     pods;
	const struct resource_list *extended; /* extended resources the node has; may be NULL */
	unsigned                    pressure; /* ADMIT_*_PRESSURE */
	int shutting_down; /* graceful node shutdown under way: every pod refused */
};

/* A critical pod (static, mirror, or priority at least 2000000000) passes the pressure check. */
int admit_pod_is_critical(const struct pod *, int is_static);

/* Does the pod's nodeSelector and required node affinity match the node? 1 or 0. */
int admit_node_affinity_matches(const struct pod *, const struct admit_node *);

/* Admits pod (is_static: from a manifest; static pods skip the taint check, as the kubelet's)
 * onto node (the node shutdown manager's handler last: "NodeShutdown"), given the pods already
 * admitted there (others, n of them; pod itself not among them). Returns 0, or -1 with *reason and
 * *message set (the caller frees them). */
int admit_pod(const struct admit_node *, const struct pod *pod, int is_static,
    const struct pod *const *others, size_t n, char **reason, char **message);

#endif
