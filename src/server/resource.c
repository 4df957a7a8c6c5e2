/* resource.c — cgroup CPU and memory figures (see resource.h). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/util.h"
#include "node/podcache.h"
#include "pod/runtime.h"
#include "server/resource.h"

static int
resource_read_u64(const char *path, uint64_t *out)
{
	FILE              *fp = fopen(path, "re");
	unsigned long long v;
	int                ok;

	if (fp == NULL)
		return -1;
	ok = fscanf(fp, "%llu", &v) == 1;
	fclose(fp);
	if (!ok)
		return -1;
	*out = v;
	return 0;
}

/* The value of key in a "key value" file (memory.stat, cpu.stat). */
static int
resource_read_key(const char *path, const char *key, uint64_t *out)
{
	FILE              *fp = fopen(path, "re");
	char               k[64];
	unsigned long long v;
	int                rc = -1;

	if (fp == NULL)
		return -1;
	while (fscanf(fp, "%63s %llu", k, &v) == 2)
		if (strcmp(k, key) == 0) {
			*out = v;
			rc = 0;
			break;
		}
	fclose(fp);
	return rc;
}

uint64_t
cg_working_set(uint64_t usage, uint64_t inactive_file)
{
	return usage > inactive_file ? usage - inactive_file : 0;
}

int
cg_read(const char *mnt, const char *rel, struct cg_usage *out)
{
	char    *p;
	uint64_t inactive = 0, usec;
	int      v2;

	memset(out, 0, sizeof(out[0]));
	p = xsprintf("%s/cgroup.controllers", mnt);
	v2 = access(p, R_OK) == 0;
	free(p);
	if (v2) {
		p = xsprintf("%s/%s/cpu.stat", mnt, rel);
		if (resource_read_key(p, "usage_usec", &usec) == -1) {
			free(p);
			return -1;
		}
		free(p);
		out->cpu_ns = usec * 1000;
		p = xsprintf("%s/%s/memory.current", mnt, rel);
		if (resource_read_u64(p, &out->usage_bytes) == -1 && *rel == '\0') {
			/* the root has no memory.current: the whole machine's */
			FILE              *fp = fopen("/proc/meminfo", "re");
			char               k[64];
			unsigned long long v, total = 0, avail = 0;

			while (fp != NULL && fscanf(fp, "%63s %llu kB", k, &v) == 2) {
				if (strcmp(k, "MemTotal:") == 0)
					total = v * 1024;
				else if (strcmp(k, "MemAvailable:") == 0)
					avail = v * 1024;
			}
			if (fp != NULL)
				fclose(fp);
			out->usage_bytes = total - avail;
		}
		free(p);
		p = xsprintf("%s/%s/memory.stat", mnt, rel);
		resource_read_key(p, "inactive_file", &inactive);
		free(p);
	} else {
		p = xsprintf("%s/cpuacct/%s/cpuacct.usage", mnt, rel);
		if (resource_read_u64(p, &out->cpu_ns) == -1) {
			free(p);
			return -1;
		}
		free(p);
		p = xsprintf("%s/memory/%s/memory.usage_in_bytes", mnt, rel);
		resource_read_u64(p, &out->usage_bytes);
		free(p);
		p = xsprintf("%s/memory/%s/memory.stat", mnt, rel);
		resource_read_key(p, "total_inactive_file", &inactive);
		free(p);
	}
	out->working_set_bytes = cg_working_set(out->usage_bytes, inactive);
	return 0;
}

char *
cg_kubepods_rel(const char *cgroup_root)
{
	const char *r = cgroup_root;

	while (*r == '/')
		r++;
	return xsprintf("%s%skubepods", r, *r != '\0' && r[strlen(r) - 1] != '/' ? "/" : "");
}

int
cg_pod_running(const struct rt_pod_status *st)
{
	size_t i;

	for (i = 0; i < st->nsandboxes; i++)
		if (st->sandboxes[i].state == RT_SB_READY)
			return 1;
	return 0;
}

int
cg_pod_read(const char *mnt, const char *kubepods, const char *uid, char *rel, size_t len,
    struct cg_usage *u)
{
	static const char *const tiers[] = { "", "burstable/", "besteffort/" };
	size_t                   i;

	for (i = 0; i < nitems(tiers); i++) {
		snprintf(rel, len, "%s/%spod%s", kubepods, tiers[i], uid);
		if (cg_read(mnt, rel, u) == 0)
			return 0;
	}
	return -1;
}

struct cg_collect {
	const char     *mnt, *kubepods;
	struct cg_rows *rows;
};

static void
cg_row_add(struct cg_rows *rows, const struct rt_pod_status *st, const struct rt_container *ct,
    const struct cg_usage *u)
{
	rows->v = xreallocarray(rows->v, rows->n + 1, sizeof(*rows->v));
	rows->v[rows->n].st = st;
	rows->v[rows->n].ct = ct;
	rows->v[rows->n].u = *u;
	rows->n++;
}

static void
cg_collect_pod(const struct rt_pod_status *st, void *arg)
{
	struct cg_collect *c = arg;
	char               rel[512], crel[640];
	struct cg_usage    pu, cu;
	size_t             i;

	if (!cg_pod_running(st) ||
	    cg_pod_read(c->mnt, c->kubepods, st->uid, rel, sizeof(rel), &pu) == -1)
		return;
	cg_row_add(c->rows, st, NULL, &pu);
	for (i = 0; i < st->ncontainers; i++) {
		if (st->containers[i].state != RT_RUNNING)
			continue;
		snprintf(crel, sizeof(crel), "%s/%s", rel, st->containers[i].id);
		if (cg_read(c->mnt, crel, &cu) == 0)
			cg_row_add(c->rows, st, &st->containers[i], &cu);
	}
}

void
cg_rows_collect(struct podcache *cache, const char *mnt, const char *kubepods, struct cg_rows *rows)
{
	struct cg_collect c = { mnt, kubepods, rows };

	memset(rows, 0, sizeof(*rows));
	if (cache != NULL)
		podcache_foreach(cache, cg_collect_pod, &c);
}

void
cg_rows_clear(struct cg_rows *rows)
{
	free(rows->v);
	memset(rows, 0, sizeof(*rows));
}
