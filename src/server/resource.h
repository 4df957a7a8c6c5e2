/* resource.h — CPU and memory use of cgroups, as the kubelet's resource metrics report
 * them (cadvisor's figures): CPU time in nanoseconds, the memory working set (usage minus
 * inactive file pages). cgroup v2 (unified) or v1 (cpuacct and memory hierarchies). The
 * node server's /metrics/resource and /stats/summary and podctl top read them here. */
#ifndef KLET_SERVER_RESOURCE_H
#define KLET_SERVER_RESOURCE_H

#include <stdint.h>

#include <stddef.h>

struct podcache;
struct rt_pod_status;
struct rt_container;

#define CG_MOUNT "/sys/fs/cgroup"

struct cg_usage {
	uint64_t cpu_ns;
	uint64_t usage_bytes;
	uint64_t working_set_bytes;
};

/* The use of the cgroup at rel (relative to the hierarchies' root, "" for the root, no
 * leading '/'), under the mount mnt ("/sys/fs/cgroup"). 0, or -1 when it does not exist. */
int cg_read(const char *mnt, const char *rel, struct cg_usage *out);
/* working set = usage - inactive file, floored at 0 (cadvisor's). */
uint64_t cg_working_set(uint64_t usage, uint64_t inactive_file);

/* CGROUP-ROOT/kubepods relative to the hierarchies' root ("kubepods", "klet-t1/kubepods");
 * caller frees. */
char *cg_kubepods_rel(const char *cgroup_root);
/* 1 when the pod has a ready sandbox. */
int cg_pod_running(const struct rt_pod_status *);
/* The pod's cgroup (cgroupfs layout: KUBEPODS/[burstable/|besteffort/]podUID) into rel and
 * its use into u; 0, or -1 when there is none. */
int cg_pod_read(const char *mnt, const char *kubepods, const char *uid, char *rel, size_t len,
    struct cg_usage *u);

/* One row per running pod (ct NULL) and per running container of it (its cgroup
 * POD-CGROUP/ID, as containerd names it), read once. st and ct are borrowed from the
 * cache: valid until it changes (this loop turn). */
struct cg_row {
	const struct rt_pod_status *st;
	const struct rt_container  *ct;
	struct cg_usage             u;
};
struct cg_rows {
	struct cg_row *v;
	size_t         n;
};
/* Fills rows (zeroed first) from cache (NULL: none). */
void cg_rows_collect(
    struct podcache *, const char *mnt, const char *kubepods, struct cg_rows *rows);
void cg_rows_clear(struct cg_rows *);

#endif
