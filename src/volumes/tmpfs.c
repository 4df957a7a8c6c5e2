/* tmpfs.c — secret and projected volumes in memory (the kubelet mounts their directories
 * on a tmpfs so that secret data never reaches a disk), and the unmounting of whatever is
 * mounted below a pod's directory before it is removed. */
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/types.h>

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/log.h"
#include "core/util.h"
#include "pod/pod.h"
#include "volumes/volumes.h"

#ifndef TMPFS_MAGIC
#define TMPFS_MAGIC 0x01021994
#endif

int
vol_is_tmpfs_mount(const char *dir)
{
	struct stat   st, pst;
	struct statfs sf;
	char         *parent;
	int           rc;

	if (lstat(dir, &st) == -1 || !S_ISDIR(st.st_mode) || statfs(dir, &sf) == -1 ||
	    sf.f_type != TMPFS_MAGIC)
		return 0;
	parent = xsprintf("%s/..", dir);
	rc = stat(parent, &pst) == 0 && pst.st_dev != st.st_dev;
	free(parent);
	return rc;
}

int
vol_tmpfs_ensure(const char *dir, uint64_t size, char *err, size_t errlen)
{
	char opts[64];

	if (mkdirs(dir, 0755) == -1) {
		snprintf(err, errlen, "mkdir %s: %s", dir, strerror(errno));
		return -1;
	}
	if (vol_is_tmpfs_mount(dir))
		return 0; /* mounted before (a restart keeps what running containers see) */
	/* Not noexec: a projected configMap may hold scripts (defaultMode 0755). */
	snprintf(opts, sizeof(opts), "mode=0755,size=%llu", (unsigned long long)size);
	if (mount("tmpfs", dir, "tmpfs", MS_NOSUID | MS_NODEV, opts) == -1) {
		snprintf(err, errlen, "mount tmpfs on %s: %s", dir, strerror(errno));
		return -1;
	}
	log_v(2, "volumes: tmpfs (%s) mounted on %s", opts, dir);
	return 0;
}

/* A mountinfo path with its octal escapes (\040 space, \011, \012, \134) decoded in place. */
static void
tmpfs_unescape(char *s)
{
	char *o = s;

	while (*s != '\0') {
		if (s[0] == '\\' && s[1] >= '0' && s[1] <= '3' && s[2] >= '0' && s[2] <= '7' &&
		    s[3] >= '0' && s[3] <= '7') {
			*o++ = (char)((s[1] - '0') * 64 + (s[2] - '0') * 8 + (s[3] - '0'));
			s += 4;
		} else {
			*o++ = *s++;
		}
	}
	*o = '\0';
}

static int
tmpfs_cmp_len_desc(const void *a, const void *b)
{
	size_t x = strlen(*(char *const *)a), y = strlen(*(char *const *)b);

	return x < y ? 1 : x > y ? -1 : 0;
}

int
vol_unmount_under(const char *dir)
{
	char   real[PATH_MAX], *line = NULL, **v = NULL, *f, *save;
	size_t cap = 0, n = 0, len, i;
	FILE  *fp;
	int    k, done = 0;

	if (realpath(dir, real) == NULL)
		return errno == ENOENT ? 0 : -1;
	if ((fp = fopen("/proc/self/mountinfo", "re")) == NULL)
		return -1;
	len = strlen(real);
	while (getline(&line, &cap, fp) != -1) {
		/* ID PARENT MAJ:MIN ROOT MOUNTPOINT ... */
		f = strtok_r(line, " ", &save);
		for (k = 0; f != NULL && k < 4; k++)
			f = strtok_r(NULL, " ", &save);
		if (f == NULL)
			continue;
		tmpfs_unescape(f);
		if (strncmp(f, real, len) != 0 || (f[len] != '\0' && f[len] != '/'))
			continue;
		v = xreallocarray(v, n + 1, sizeof(*v));
		v[n++] = xstrdup(f);
	}
	free(line);
	fclose(fp);
	/* Deepest first; a path mounted twice is unmounted as often. */
	if (n > 1)
		qsort(v, n, sizeof(*v), tmpfs_cmp_len_desc);
	for (i = 0; i < n; i++) {
		if (umount2(v[i], MNT_DETACH) == 0) {
			log_v(2, "volumes: unmounted %s", v[i]);
			done++;
		} else if (errno != EINVAL && errno != ENOENT) {
			log_warn("volumes: umount %s", v[i]);
		}
		free(v[i]);
	}
	free(v);
	return done;
}

/* A container's memory limit in bytes, or -1 when it has none. */
static int64_t
tmpfs_mem_limit(const struct container *c)
{
	const struct quantity *q = resource_list_get(&c->c_resources.limits, "memory");

	return q != NULL && q->milli > 0 ? q->milli / 1000 : -1;
}

uint64_t
vol_tmpfs_size(const struct pod *pod)
{
	long    pages = sysconf(_SC_PHYS_PAGES), psize = sysconf(_SC_PAGESIZE);
	int64_t node = pages > 0 && psize > 0 ? (int64_t)pages * psize : INT64_MAX, sum = 0, l;
	size_t  i;

	/* The pod's limit as the API computes it: the sum over the app containers (sidecars
	 * included), at least any one init container's. */
	for (i = 0; i < pod->ncontainers && sum >= 0; i++)
		sum = (l = tmpfs_mem_limit(&pod->containers[i])) < 0 ? -1 : sum + l;
	for (i = 0; i < pod->ninit_containers && sum >= 0; i++) {
		const struct container *c = &pod->init_containers[i];

		if ((l = tmpfs_mem_limit(c)) < 0)
			sum = -1;
		else if (c->c_has_restart_policy && c->c_restart_policy == RESTART_ALWAYS)
			sum += l; /* a sidecar runs beside the app containers */
		else if (l > sum)
			sum = l;
	}
	if (sum <= 0 || sum > node)
		sum = node;
	return (uint64_t)sum;
}
