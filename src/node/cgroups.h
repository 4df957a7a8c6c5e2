/* cgroups.h — the kubelet's pod container manager and QoS container manager
 * (cgroupsPerQOS): the kubepods / kubepods/burstable / kubepods/besteffort hierarchy under
 * --cgroup-root, made at start; one cgroup per pod, made and configured (logic/qos.c
 * ResourceConfigForPod) before the pod's containers (its sandbox's CgroupParent); the burstable
 * tier's cpu shares following the burstable pods' cpu requests; pod cgroups removed by
 * housekeeping once their pod is gone. cgroupfs or systemd names (--cgroup-driver), cgroup
 * v1 (the cpu, cpuacct, memory and pids hierarchies) or v2 (the unified hierarchy). */
#ifndef KLET_CGROUPS_H
#define KLET_CGROUPS_H

#include <stddef.h>
#include <stdint.h>

#include "logic/qos.h"
#include "pod/pod.h"

struct cgroups_options {
	enum qos_driver driver;
	const char     *mnt;  /* NULL: /sys/fs/cgroup */
	const char     *root; /* --cgroup-root; NULL: "/" */
	int             v2;   /* -1: detect from the mount */
	/* kubepods: cpu.shares of the node's cpu capacity and, with
	 * --enforce-node-allocatable=pods, memory limit of capacity minus reservations; 0 = not
	 * written. */
	int64_t cpu_capacity_milli;
	int64_t pods_memory;
};

struct cgroups;

/* Makes the QoS hierarchy. NULL with err set when the kubepods cgroup cannot be made. */
struct cgroups *cgroups_new(const struct cgroups_options *, char *err, size_t errlen);
void            cgroups_free(struct cgroups *);
int             cgroups_is_v2(const struct cgroups *);
/* The pod cgroup's name as given to the runtime (the sandbox's CgroupParent). */
const char *cgroups_pod_name(const struct cgroups *, const struct pod *, char *buf, size_t len);
/* The pod counts in its QoS tier (the tier's cpu shares follow). 1 when its cgroup is
 * there, made and configured, 0 when it is still to be made (cgroups_pod_ensure), -1 for a
 * pod without a name for one. */
int cgroups_pod_note(struct cgroups *, const struct pod *);
/* The pod cgroup exists (made and configured if not) and the pod counts in its QoS tier.
 * 0, or -1 when it could not be made (logged). */
int cgroups_pod_ensure(struct cgroups *, const struct pod *);
/* The pod no longer counts in its QoS tier (it is terminated); its cgroup stays. */
void cgroups_pod_forget(struct cgroups *, const char *uid);
/* Calls fn for the UID of every pod cgroup of the hierarchy. */
void cgroups_foreach_pod(struct cgroups *, void (*fn)(void *arg, const char *uid), void *arg);
/* Removes the pod's cgroup in every hierarchy. 1 when one was removed, 0 none, -1 when one
 * could not be removed (still busy). */
int cgroups_pod_remove(struct cgroups *, const char *uid);
/* The burstable tier's current cpu shares (for status and tests). */
int64_t cgroups_burstable_shares(const struct cgroups *);
/* Relative path (below a hierarchy) of the kubepods cgroup, e.g. "/klet/kubepods". */
const char *cgroups_kubepods(const struct cgroups *);
const char *cgroups_mnt(const struct cgroups *);

#endif
