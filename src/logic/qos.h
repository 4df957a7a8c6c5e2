/* qos.h — the kubelet's QoS classes and pod cgroups as pure functions: the pod's QoS class,
 * the pod-level resource configuration (ResourceConfigForPod: cpu shares, CFS quota and
 * period, memory limit), the QoS tier's cpu shares, the cgroup names of the kubepods
 * hierarchy for the cgroupfs and systemd drivers, and the files and values written for
 * cgroup v1 and v2. */
#ifndef KLET_QOS_H
#define KLET_QOS_H

#include <stddef.h>
#include <stdint.h>

#include "logic/podstatus.h" /* qos_class_name */
#include "pod/pod.h"

#define QOS_MIN_SHARES      2      /* cm.MinShares */
#define QOS_MAX_SHARES      262144 /* cm.MaxShares */
#define QOS_SHARES_PER_CPU  1024
#define QOS_DEFAULT_PERIOD  100000 /* --cpu-cfs-quota-period, microseconds */
#define QOS_MIN_QUOTA       1000   /* cm.MinQuotaPeriod */
#define QOS_CGROUP_NAME_MAX 512

enum qos_driver { QOS_DRIVER_CGROUPFS = 0, QOS_DRIVER_SYSTEMD };

/* A cgroup's resource parameters; a field is written only when set (0 means unset, a quota
 * or memory limit of -1 means unlimited). */
struct qos_config {
	int64_t cpu_shares;
	int64_t cpu_quota;  /* microseconds per period; -1 unlimited */
	int64_t cpu_period; /* microseconds */
	int64_t memory;     /* bytes; -1 unlimited */
};

/* One value to write: controller ("cpu", "memory"; "" on cgroup v2), file and value. */
struct qos_file {
	const char *ctrl;
	const char *file;
	char        value[48];
};

enum qos_class qos_pod_class(const struct pod *);
/* The pod's request / limit of a resource in milli units as the kubelet's PodRequests and
 * PodLimits (requests default to limits; init containers by the max rule, sidecars summed;
 * overhead added, to limits only where the pod has one). *declared (may be NULL) is set to
 * 0 when some container has no limit of the resource. */
int64_t qos_pod_request(const struct pod *, const char *resource);
int64_t qos_pod_limit(const struct pod *, const char *resource, int *declared);
int64_t qos_milli_to_shares(int64_t milli_cpu);
int64_t qos_milli_to_quota(int64_t milli_cpu, int64_t period);
/* cgroup v2 cpu.weight of v1 cpu.shares (1..10000). */
int64_t qos_shares_to_weight(int64_t shares);
/* ResourceConfigForPod (cpu CFS quota enforced). */
void qos_pod_config(const struct pod *, struct qos_config *);
/* The burstable tier's cpu shares from the sum of its pods' cpu requests (milli). */
int64_t qos_burstable_shares(int64_t burstable_cpu_request_milli);

/* The cgroup name of the given components below cgroup_root (e.g. "/", "/klet"), as the
 * driver spells it: cgroupfs "/klet/kubepods/burstable/podUID"; systemd
 * "/kubepods.slice/kubepods-burstable.slice/kubepods-burstable-podU_I_D.slice" (a systemd
 * cgroup root is a slice such as "/klet.slice"). Returns buf, "" when it does not fit. */
const char *qos_cgroup_name(enum qos_driver, const char *cgroup_root, const char *const *parts,
    size_t nparts, char *buf, size_t len);
/* The pod cgroup's components: {"kubepods", tier, "podUID"} with the tier left out for a
 * Guaranteed pod. Returns nparts (2 or 3); pod_part receives "pod" UID. */
size_t qos_pod_parts(
    enum qos_class, const char *uid, const char *parts[3], char *pod_part, size_t len);
/* The UID of a pod cgroup directory name of the driver ("podUID",
 * "kubepods-burstable-podU_I_D.slice") into uid; 0, or -1 when name is not one. */
int qos_pod_uid_of(enum qos_driver, const char *name, char *uid, size_t len);

/* The files and values of cfg for cgroup v1 (v2 = 0) or v2; returns how many (at most 4). */
size_t qos_files(const struct qos_config *, int v2, struct qos_file out[4]);

#endif
