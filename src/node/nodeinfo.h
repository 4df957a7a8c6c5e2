/* nodeinfo.h — the node's capacity, allocatable and pressure, as the kubelet's container
 * manager and eviction manager compute them. Capacity comes from the host (online CPUs,
 * MemTotal, the root dir's file system, pid_max); allocatable is capacity minus
 * --kube-reserved, --system-reserved and the hard eviction threshold of the matching signal
 * (memory.available for memory, nodefs.available for ephemeral-storage); a pressure
 * condition holds while its signal is below its hard threshold. */
#ifndef KLET_NODEINFO_H
#define KLET_NODEINFO_H

#include <stdint.h>

#include "pod/pod.h"

/* What the host shows (bytes and counts); 0 where unknown. */
struct nodeinfo_host {
	int64_t ncpu;
	int64_t mem_total, mem_available;
	int64_t fs_total, fs_available;
	int64_t fs_inodes, fs_inodes_free;
	int64_t pid_max, pids;
};

struct nodeinfo_opts {
	const struct resource_list *kube_reserved;   /* may be NULL */
	const struct resource_list *system_reserved; /* may be NULL */
	const struct kvlist        *eviction_hard;   /* signal -> "100Mi" / "10%"; may be NULL */
	int                         max_pods;
};

struct nodeinfo {
	int64_t  cap_cpu_milli, cap_memory, cap_ephemeral, cap_pods;
	int64_t  alloc_cpu_milli, alloc_memory, alloc_ephemeral, alloc_pods;
	unsigned pressure; /* ADMIT_MEMORY_PRESSURE, ADMIT_DISK_PRESSURE, ADMIT_PID_PRESSURE */
	/* The hard thresholds in absolute units, -1 when not set. */
	int64_t mem_threshold, fs_threshold, inodes_threshold, pid_threshold;
};

/* A threshold ("100Mi", "10%" of capacity) in absolute units; -1 when signal has none. */
int64_t nodeinfo_threshold(const struct kvlist *eviction, const char *signal, int64_t capacity);
/* Pure: capacity, allocatable and pressure from the host figures. */
void nodeinfo_compute(
    const struct nodeinfo_opts *, const struct nodeinfo_host *, struct nodeinfo *);
/* Reads the host: /proc/meminfo, statvfs(root_dir), pid_max and the pids in use. 0, or -1 when
 * nothing could be read (the fields read are filled). */
int nodeinfo_read_host(const char *root_dir, struct nodeinfo_host *);

#endif
