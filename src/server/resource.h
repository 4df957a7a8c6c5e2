/* resource.h — CPU and memory use of cgroups, as the kubelet's resource metrics report
 * them (cadvisor's figures): CPU time in nanoseconds, the memory working set (usage minus
 * inactive file pages). cgroup v2 (unified) or v1 (cpuacct and memory hierarchies). */
#ifndef KLET_SERVER_RESOURCE_H
#define KLET_SERVER_RESOURCE_H

#include <stdint.h>

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

#endif
