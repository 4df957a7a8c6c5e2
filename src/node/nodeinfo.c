/* nodeinfo.c — see nodeinfo.h. */
#include <sys/statvfs.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/util.h"
#include "logic/admit.h"
#include "node/nodeinfo.h"
#include "core/quantity.h"

int64_t
nodeinfo_threshold(const struct kvlist *ev, const char *signal, int64_t capacity)
{
	const char *v = ev != NULL ? kvlist_get(ev, signal) : NULL;
	int64_t     milli;
	size_t      n;

	if (v == NULL || *v == '\0')
		return -1;
	n = strlen(v);
	if (v[n - 1] == '%')
		return (int64_t)((double)capacity * strtod(v, NULL) / 100.0);
	if (quantity_parse(v, &milli) < 0)
		return -1;
	return milli / 1000;
}

static int64_t
nodeinfo_reserved(const struct nodeinfo_opts *o, const char *resource)
{
	const struct quantity *q;
	int64_t                sum = 0;

	if (o->kube_reserved != NULL && (q = resource_list_get(o->kube_reserved, resource)) != NULL)
		sum += q->milli;
	if (o->system_reserved != NULL &&
	    (q = resource_list_get(o->system_reserved, resource)) != NULL)
		sum += q->milli;
	return sum;
}

static int64_t
nodeinfo_nonneg(int64_t v)
{
	return v < 0 ? 0 : v;
}

void
nodeinfo_compute(const struct nodeinfo_opts *o, const struct nodeinfo_host *h, struct nodeinfo *n)
{
	memset(n, 0, sizeof(*n));
	n->cap_cpu_milli = (h->ncpu > 0 ? h->ncpu : 1) * 1000;
	n->cap_memory = h->mem_total;
	n->cap_ephemeral = h->fs_total;
	n->cap_pods = o->max_pods > 0 ? o->max_pods : 110;
	n->mem_threshold = nodeinfo_threshold(o->eviction_hard, "memory.available", h->mem_total);
	n->fs_threshold = nodeinfo_threshold(o->eviction_hard, "nodefs.available", h->fs_total);
	n->inodes_threshold =
	    nodeinfo_threshold(o->eviction_hard, "nodefs.inodesFree", h->fs_inodes);
	n->pid_threshold = nodeinfo_threshold(o->eviction_hard, "pid.available", h->pid_max);
	n->alloc_cpu_milli = nodeinfo_nonneg(n->cap_cpu_milli - nodeinfo_reserved(o, "cpu"));
	n->alloc_memory = nodeinfo_nonneg(n->cap_memory - nodeinfo_reserved(o, "memory") / 1000 -
	    (n->mem_threshold > 0 ? n->mem_threshold : 0));
	n->alloc_ephemeral =
	    nodeinfo_nonneg(n->cap_ephemeral - nodeinfo_reserved(o, "ephemeral-storage") / 1000 -
	        (n->fs_threshold > 0 ? n->fs_threshold : 0));
	n->alloc_pods = n->cap_pods;
	if (h->mem_total > 0 && n->mem_threshold >= 0 && h->mem_available < n->mem_threshold)
		n->pressure |= ADMIT_MEMORY_PRESSURE;
	if ((h->fs_total > 0 && n->fs_threshold >= 0 && h->fs_available < n->fs_threshold) ||
	    (h->fs_inodes > 0 && n->inodes_threshold >= 0 &&
	        h->fs_inodes_free < n->inodes_threshold))
		n->pressure |= ADMIT_DISK_PRESSURE;
	if (h->pid_max > 0 && n->pid_threshold >= 0 && h->pid_max - h->pids < n->pid_threshold)
		n->pressure |= ADMIT_PID_PRESSURE;
}

static int64_t
nodeinfo_read_num(const char *path)
{
	FILE     *f = fopen(path, "re");
	long long v = 0;

	if (f == NULL)
		return 0;
	if (fscanf(f, "%lld", &v) != 1)
		v = 0;
	fclose(f);
	return v;
}

int
nodeinfo_read_host(const char *root_dir, struct nodeinfo_host *h)
{
	struct statvfs vfs;
	char           line[256];
	long long      v;
	FILE          *f;
	long           ncpu = sysconf(_SC_NPROCESSORS_ONLN);
	int            got = 0;

	memset(h, 0, sizeof(*h));
	h->ncpu = ncpu > 0 ? ncpu : 1;
	if ((f = fopen("/proc/meminfo", "re")) != NULL) {
		/* Both are among the first lines: the other fifty are not parsed (admission reads
		 * this, at most once a second, on a new pod's way to its sandbox). */
		while ((h->mem_total == 0 || h->mem_available == 0) &&
		    fgets(line, sizeof(line), f) != NULL) {
			if (strncmp(line, "MemTotal:", 9) == 0 &&
			    sscanf(line, "MemTotal: %lld kB", &v) == 1)
				h->mem_total = v * 1024, got = 1;
			else if (strncmp(line, "MemAvailable:", 13) == 0 &&
			    sscanf(line, "MemAvailable: %lld kB", &v) == 1)
				h->mem_available = v * 1024;
		}
		fclose(f);
	}
	if (statvfs(root_dir != NULL ? root_dir : "/", &vfs) == 0) {
		h->fs_total = (int64_t)vfs.f_blocks * (int64_t)vfs.f_frsize;
		h->fs_available = (int64_t)vfs.f_bavail * (int64_t)vfs.f_frsize;
		h->fs_inodes = (int64_t)vfs.f_files;
		h->fs_inodes_free = (int64_t)vfs.f_favail;
		got = 1;
	}
	h->pid_max = nodeinfo_read_num("/proc/sys/kernel/pid_max");
	if ((f = fopen("/proc/loadavg", "re")) != NULL) {
		long long running, total;

		if (fgets(line, sizeof(line), f) != NULL &&
		    sscanf(line, "%*f %*f %*f %lld/%lld", &running, &total) == 2)
			h->pids = total;
		fclose(f);
	}
	return got ? 0 : -1;
}
