/* containergc.h — the kubelet's container garbage collection decision (kuberuntime_gc.go's
 * evictContainers) as a pure function: which dead containers go under the policy of
 * --minimum-container-ttl-duration (MinAge), --maximum-dead-containers-per-container
 * (MaxPerPodContainer) and --maximum-dead-containers (MaxContainers).
 *
 * A container created less than MinAge ago is not evictable and not counted. Evictable
 * containers are grouped by (pod UID, container name), the kubelet's evict unit. A unit
 * whose pod's content may go loses every instance; the others keep their newest
 * MaxPerPodContainer instances (by creation time); then, when more than MaxContainers are
 * left on the node, each unit is cut to MaxContainers / units (at least 1) and, if that is
 * still too many, the oldest go first across units. A container marked keep (its exit is
 * not stored yet) is counted like the others but never chosen: where it would go, it is
 * assumed gone, as the kubelet assumes a failed removal did remove, so that nothing newer is
 * taken in its place. */
#ifndef KLET_CONTAINERGC_H
#define KLET_CONTAINERGC_H

#include <stddef.h>
#include <stdint.h>

struct cgc_policy {
	int64_t min_age_ms;        /* MinAge (default 0) */
	int     max_per_container; /* MaxPerPodContainer (default 1); < 0: no limit */
	int     max_total;         /* MaxContainers (default -1); < 0: no limit */
};

/* The kubelet's defaults. */
#define CGC_POLICY_DEFAULT ((struct cgc_policy){ 0, 1, -1 })

/* One dead container. Strings are borrowed; compared, never kept. */
struct cgc_container {
	const char *uid;        /* the pod's UID */
	const char *name;       /* the container's name in the pod */
	int64_t     created_ms; /* creation time, on the clock of now_ms (wall ms) */
	int         remove_all; /* the pod's content may go: every instance of its units */
	int         keep;       /* counted, never chosen */
	int         remove;     /* out: 1 when the container is to be removed */
};

/* Sets remove on each of c[0..n) (the order of c is free) and returns how many were
 * chosen. now_ms is on the clock of created_ms. */
size_t cgc_select(const struct cgc_policy *, struct cgc_container *c, size_t n, int64_t now_ms);

#endif
