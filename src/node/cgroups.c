/* cgroups.c — see cgroups.h. The values and names are logic/qos.c's; this file only makes,
 * writes and removes directories under the cgroup mount. */
#include <sys/stat.h>
#include <sys/statfs.h>

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/log.h"
#include "core/strindex.h"
#include "core/util.h"
#include "node/cgroups.h"

#ifndef CGROUP2_SUPER_MAGIC
#define CGROUP2_SUPER_MAGIC 0x63677270
#endif

/* The v1 hierarchies a pod cgroup is made in (runc makes the others under it). */
static const char *const cg_v1_made[] = { "cpu", "cpuacct", "memory", "pids" };

struct cg_pod {
	char          *uid;
	enum qos_class qos;
	int64_t        cpu_request; /* milli */
	int            made;        /* there: made by us, or found */
	int            configured;  /* its limits written by this process */
};

struct cgroups {
	struct cgroups_options o;
	char                  *mnt, *root;
	int                    v2;
	char                   kubepods[QOS_CGROUP_NAME_MAX];
	char                   tiers[3][QOS_CGROUP_NAME_MAX]; /* kubepods, burstable, besteffort */
	struct cg_pod         *pods;
	size_t                 npods;
	struct strindex       *index;            /* pods by UID */
	int                    tier_fd[3];       /* O_PATH, the tiers in the memory hierarchy; -1 */
	char                  *tier_dir[3];      /* their paths (held_dir_stat) */
	int64_t                burstable_shares; /* as last written; 0 before */
};

/* Writes value to DIR/file (ctrl is the v1 hierarchy, "" on v2). 0 or -1 (errno). */
static int
cg_write(struct cgroups *cg, const char *ctrl, const char *rel, const char *file, const char *v)
{
	char   *path = xsprintf("%s%s%s%s/%s", cg->mnt, *ctrl ? "/" : "", ctrl, rel, file);
	int     fd, rc = -1, e;
	ssize_t n;

	if ((fd = open(path, O_WRONLY | O_CLOEXEC | O_TRUNC)) >= 0) {
		n = write(fd, v, strlen(v));
		rc = n == (ssize_t)strlen(v) ? 0 : -1;
		e = errno;
		close(fd);
		errno = e;
	}
	if (rc < 0)
		log_warn("cgroups: cannot write %s to %s", v, path);
	free(path);
	return rc;
}

static void
cg_apply(struct cgroups *cg, const char *rel, const struct qos_config *c)
{
	struct qos_file f[4];
	size_t          n = qos_files(c, cg->v2, f), i;

	for (i = 0; i < n; i++)
		cg_write(cg, f[i].ctrl, rel, f[i].file, f[i].value);
}

/* Makes rel in every hierarchy a pod cgroup lives in; on v2 the parents delegate the cpu,
 * memory and pids controllers. 0, or -1 when the memory (v2: unified) one failed. */
static int
cg_make(struct cgroups *cg, const char *rel)
{
	size_t i;
	int    rc = 0;

	if (cg->v2) {
		char *path = xsprintf("%s%s", cg->mnt, rel), *slash;

		/* Each ancestor from the mount down enables the controllers for its children. */
		for (slash = path + strlen(cg->mnt) + 1; (slash = strchr(slash, '/')) != NULL;
		     slash++) {
			char *sc;
			int   fd;

			*slash = '\0';
			mkdir(path, 0755);
			sc = xsprintf("%s/cgroup.subtree_control", path);
			if ((fd = open(sc, O_WRONLY | O_CLOEXEC)) >= 0) {
				if (write(fd, "+cpu +memory +pids", 18) < 0)
					log_v(3, "cgroups: %s: %s", sc, strerror(errno));
				close(fd);
			}
			free(sc);
			*slash = '/';
		}
		{
			char *top = xsprintf("%s/cgroup.subtree_control", cg->mnt);
			int   fd;

			if ((fd = open(top, O_WRONLY | O_CLOEXEC)) >= 0) {
				if (write(fd, "+cpu +memory +pids", 18) < 0)
					log_v(3, "cgroups: %s: %s", top, strerror(errno));
				close(fd);
			}
			free(top);
		}
		if (mkdirs(path, 0755) < 0 && errno != EEXIST) {
			log_warn("cgroups: cannot make %s", path);
			rc = -1;
		}
		free(path);
		return rc;
	}
	for (i = 0; i < nitems(cg_v1_made); i++) {
		char *path = xsprintf("%s/%s%s", cg->mnt, cg_v1_made[i], rel);

		if (mkdirs(path, 0755) < 0 && errno != EEXIST) {
			if (strcmp(cg_v1_made[i], "memory") == 0) {
				log_warn("cgroups: cannot make %s", path);
				rc = -1;
			}
		}
		free(path);
	}
	return rc;
}

static int
cg_stat_path(struct cgroups *cg, const char *rel)
{
	char       *path = xsprintf("%s%s%s", cg->mnt, cg->v2 ? "" : "/memory", rel);
	struct stat st;
	int         rc = stat(path, &st) == 0;

	free(path);
	return rc;
}

/* 1 when the cgroup rel exists (in the memory hierarchy on v1). Asked at every pod sync: a
 * pod's is looked up from its tier's directory, held open (one name to look up, not the
 * seven or so of the whole path through the cgroup mount). Only "there" is believed from
 * the held directory: when it says "not there" (the tier itself may have been removed and
 * made again), the whole path is looked at, and a tier found again is opened again. */
static int
cg_exists(struct cgroups *cg, const char *rel)
{
	const char *leaf = strrchr(rel, '/');
	struct stat st;
	size_t      t, plen;

	plen = leaf != NULL ? (size_t)(leaf - rel) : 0;
	for (t = 0; leaf != NULL && t < 3; t++)
		if (strlen(cg->tiers[t]) == plen && strncmp(cg->tiers[t], rel, plen) == 0)
			break;
	if (leaf == NULL || t == 3)
		return cg_stat_path(cg, rel);
	/* cgroupfs: a removed cgroup's directory may still count its links. */
	return held_dir_stat(&cg->tier_fd[t], cg->tier_dir[t], leaf + 1, &st, 0) == 0;
}

static void
cg_update_burstable(struct cgroups *cg)
{
	int64_t           sum = 0;
	size_t            i;
	struct qos_config c = { 0 };

	for (i = 0; i < cg->npods; i++)
		if (cg->pods[i].qos == QOS_BURSTABLE)
			sum += cg->pods[i].cpu_request;
	c.cpu_shares = qos_burstable_shares(sum);
	if (c.cpu_shares == cg->burstable_shares)
		return;
	cg_apply(cg, cg->tiers[1], &c);
	cg->burstable_shares = c.cpu_shares;
	log_v(2, "cgroups: burstable cpu shares %lld", (long long)c.cpu_shares);
}

struct cgroups *
cgroups_new(const struct cgroups_options *o, char *err, size_t errlen)
{
	struct cgroups    *cg = xcalloc(1, sizeof(*cg));
	static const char *kp[] = { "kubepods", "burstable", "besteffort" };
	struct statfs      sfs;
	struct qos_config  c = { 0 };
	size_t             i;

	cg->o = *o;
	cg->index = strindex_new();
	cg->tier_fd[0] = cg->tier_fd[1] = cg->tier_fd[2] = -1;
	cg->mnt = xstrdup(o->mnt != NULL ? o->mnt : "/sys/fs/cgroup");
	cg->root = xstrdup(o->root != NULL ? o->root : "/");
	cg->v2 = o->v2;
	if (cg->v2 < 0)
		cg->v2 = statfs(cg->mnt, &sfs) == 0 && sfs.f_type == CGROUP2_SUPER_MAGIC;
	qos_cgroup_name(o->driver, cg->root, kp, 1, cg->kubepods, sizeof(cg->kubepods));
	snprintf(cg->tiers[0], sizeof(cg->tiers[0]), "%s", cg->kubepods);
	for (i = 1; i < 3; i++) {
		const char *parts[2] = { kp[0], kp[i] };

		qos_cgroup_name(o->driver, cg->root, parts, 2, cg->tiers[i], sizeof(cg->tiers[i]));
	}
	if (cg->kubepods[0] == '\0' || cg->tiers[1][0] == '\0' || cg->tiers[2][0] == '\0') {
		snprintf(err, errlen, "cgroup root %s: name too long", cg->root);
		cgroups_free(cg);
		return NULL;
	}
	for (i = 0; i < 3; i++)
		cg->tier_dir[i] =
		    xsprintf("%s%s%s", cg->mnt, cg->v2 ? "" : "/memory", cg->tiers[i]);
	for (i = 0; i < 3; i++)
		if (cg_make(cg, cg->tiers[i]) < 0) {
			snprintf(err, errlen, "cannot make the cgroup %s under %s", cg->tiers[i],
			    cg->mnt);
			cgroups_free(cg);
			return NULL;
		}
	c.cpu_shares = o->cpu_capacity_milli > 0 ? qos_milli_to_shares(o->cpu_capacity_milli) : 0;
	c.memory = o->pods_memory > 0 ? o->pods_memory : 0;
	cg_apply(cg, cg->kubepods, &c);
	memset(&c, 0, sizeof(c));
	c.cpu_shares = QOS_MIN_SHARES;
	cg_apply(cg, cg->tiers[2], &c);
	cg_update_burstable(cg);
	log_info("cgroups: %s driver, cgroup %s, pods under %s",
	    o->driver == QOS_DRIVER_SYSTEMD ? "systemd" : "cgroupfs", cg->v2 ? "v2" : "v1",
	    cg->kubepods);
	return cg;
}

void
cgroups_free(struct cgroups *cg)
{
	size_t i;

	if (cg == NULL)
		return;
	for (i = 0; i < cg->npods; i++)
		free(cg->pods[i].uid);
	free(cg->pods);
	strindex_free(cg->index);
	for (i = 0; i < 3; i++) {
		if (cg->tier_fd[i] >= 0)
			close(cg->tier_fd[i]);
		free(cg->tier_dir[i]);
	}
	free(cg->mnt);
	free(cg->root);
	free(cg);
}

int
cgroups_is_v2(const struct cgroups *cg)
{
	return cg->v2;
}

const char *
cgroups_kubepods(const struct cgroups *cg)
{
	return cg->kubepods;
}

const char *
cgroups_mnt(const struct cgroups *cg)
{
	return cg->mnt;
}

int64_t
cgroups_burstable_shares(const struct cgroups *cg)
{
	return cg->burstable_shares;
}

const char *
cgroups_pod_name(const struct cgroups *cg, const struct pod *pod, char *buf, size_t len)
{
	const char *parts[3];
	char        pp[128];
	size_t      n = qos_pod_parts(qos_pod_class(pod), pod->uid, parts, pp, sizeof(pp));

	return qos_cgroup_name(cg->o.driver, cg->root, parts, n, buf, len);
}

static const char *
cg_pod_key(const void *arg, size_t pos)
{
	const struct cgroups *cg = arg;

	return cg->pods[pos].uid;
}

static struct cg_pod *
cg_find(struct cgroups *cg, const char *uid)
{
	size_t i = strindex_find(cg->index, uid, cg_pod_key, cg);

	return i == STRINDEX_NONE ? NULL : &cg->pods[i];
}

/* The pod's record; a new one (the pod's first sync, or the first after our start) is made
 * when its cgroup exists, and one thought made is looked at again (someone removed it: made
 * again). A record waiting to be made is left as it is: the runtime may make the directory
 * before we do (runc makes a missing parent), and it is configured all the same. One found
 * at our start is configured again at its first ensure: a kill -9 between a sandbox's
 * request and its answer leaves a cgroup runc made and nobody configured. */
static struct cg_pod *
cg_note(struct cgroups *cg, const struct pod *pod, const char *name, int look)
{
	struct cg_pod *p;

	if ((p = cg_find(cg, pod->uid)) == NULL) {
		cg->pods = xreallocarray(cg->pods, cg->npods + 1, sizeof(*cg->pods));
		p = &cg->pods[cg->npods++];
		p->uid = xstrdup(pod->uid);
		strindex_add(cg->index, p->uid, cg->npods - 1);
		p->made = cg_exists(cg, name);
		p->configured = 0;
	} else if (p->made && look && !(p->made = cg_exists(cg, name)))
		p->configured = 0;
	p->qos = qos_pod_class(pod);
	p->cpu_request = qos_pod_request(pod, "cpu");
	return p;
}

int
cgroups_pod_note(struct cgroups *cg, const struct pod *pod)
{
	char           name[QOS_CGROUP_NAME_MAX];
	struct cg_pod *p;

	if (pod->uid == NULL || *cgroups_pod_name(cg, pod, name, sizeof(name)) == '\0')
		return -1;
	p = cg_note(cg, pod, name, 1);
	cg_update_burstable(cg); /* as the kubelet: the QoS tiers first */
	return p->made;
}

int
cgroups_pod_ensure(struct cgroups *cg, const struct pod *pod)
{
	char              name[QOS_CGROUP_NAME_MAX];
	struct cg_pod    *p;
	struct qos_config c;

	if (pod->uid == NULL || *cgroups_pod_name(cg, pod, name, sizeof(name)) == '\0')
		return -1;
	p = cg_note(cg, pod, name, 0); /* its sync's note looked a moment ago */
	cg_update_burstable(cg);
	if (p->made && p->configured)
		return 0;
	if (!p->made && cg_make(cg, name) < 0)
		return -1;
	qos_pod_config(pod, &c);
	cg_apply(cg, name, &c);
	log_v(2, "cgroups: %s %s (%s)", p->made ? "configured" : "made", name,
	    qos_class_name(p->qos));
	p->made = p->configured = 1;
	return 0;
}

void
cgroups_pod_forget(struct cgroups *cg, const char *uid)
{
	struct cg_pod *p = cg_find(cg, uid);
	size_t         i;

	if (p == NULL)
		return;
	i = (size_t)(p - cg->pods);
	strindex_remove(cg->index, p->uid, i);
	free(p->uid);
	if (i != --cg->npods) {
		*p = cg->pods[cg->npods];
		strindex_move(cg->index, p->uid, cg->npods, i);
	}
	cg_update_burstable(cg);
}

/* Calls fn(arg, hierarchy dir) for every hierarchy (v1: each directory under the mount). */
static void
cg_foreach_hier(struct cgroups *cg, void (*fn)(struct cgroups *, const char *, void *), void *arg)
{
	struct dirent *de;
	DIR           *m;

	if (cg->v2) {
		fn(cg, cg->mnt, arg);
		return;
	}
	if ((m = opendir(cg->mnt)) == NULL)
		return;
	while ((de = readdir(m)) != NULL) {
		char *h;

		if (de->d_name[0] == '.' || de->d_type != DT_DIR)
			continue;
		h = xsprintf("%s/%s", cg->mnt, de->d_name);
		fn(cg, h, arg);
		free(h);
	}
	closedir(m);
}

struct cg_each {
	void (*fn)(void *, const char *);
	void *arg;
};

static void
cg_each_hier(struct cgroups *cg, const char *hier, void *arg)
{
	struct cg_each *e = arg;
	size_t          t;

	for (t = 0; t < 3; t++) {
		char          *dir = xsprintf("%s%s", hier, cg->tiers[t]), uid[128];
		struct dirent *de;
		DIR           *d;

		if ((d = opendir(dir)) != NULL) {
			while ((de = readdir(d)) != NULL)
				if (de->d_type == DT_DIR &&
				    qos_pod_uid_of(cg->o.driver, de->d_name, uid, sizeof(uid)) == 0)
					e->fn(e->arg, uid);
			closedir(d);
		}
		free(dir);
	}
}

void
cgroups_foreach_pod(struct cgroups *cg, void (*fn)(void *, const char *), void *arg)
{
	struct cg_each e = { fn, arg };

	cg_foreach_hier(cg, cg_each_hier, &e);
}

/* rmdir a cgroup directory and its (empty) children, deepest first. 0 when gone. */
static int
cg_rmdir_tree(const char *path)
{
	struct dirent *de;
	DIR           *d;

	if ((d = opendir(path)) == NULL)
		return errno == ENOENT ? 1 : -1;
	while ((de = readdir(d)) != NULL) {
		char *sub;

		if (de->d_name[0] == '.' || de->d_type != DT_DIR)
			continue;
		sub = xsprintf("%s/%s", path, de->d_name);
		cg_rmdir_tree(sub);
		free(sub);
	}
	closedir(d);
	return rmdir(path) == 0 ? 0 : -1;
}

struct cg_rm {
	const char *uid;
	int         removed, busy;
};

static void
cg_rm_hier(struct cgroups *cg, const char *hier, void *arg)
{
	static const enum qos_class classes[] = { QOS_GUARANTEED, QOS_BURSTABLE, QOS_BEST_EFFORT };
	struct cg_rm               *r = arg;
	size_t                      i;

	for (i = 0; i < nitems(classes); i++) {
		const char *parts[3];
		char        pp[128], name[QOS_CGROUP_NAME_MAX], *path;
		size_t      n = qos_pod_parts(classes[i], r->uid, parts, pp, sizeof(pp));
		int         rc;

		if (*qos_cgroup_name(cg->o.driver, cg->root, parts, n, name, sizeof(name)) == '\0')
			continue;
		path = xsprintf("%s%s", hier, name);
		rc = cg_rmdir_tree(path);
		if (rc == 0)
			r->removed = 1;
		else if (rc < 0)
			r->busy = 1;
		free(path);
	}
}

int
cgroups_pod_remove(struct cgroups *cg, const char *uid)
{
	struct cg_rm r = { uid, 0, 0 };

	cg_foreach_hier(cg, cg_rm_hier, &r);
	if (r.removed) {
		log_v(2, "cgroups: removed the cgroup of pod %s", uid);
		cgroups_pod_forget(cg, uid);
	}
	return r.busy ? -1 : r.removed;
}
