/* housekeeping.h — the 2 s cleanup pass (the kubelet's HandlePodCleanups and container GC).
 *
 * Each pass, once the pod sources are ready and the runtime was listed at least once:
 *  - pod workers whose pod no longer is wanted are killed, and removed once FINISHED (their
 *    kuberuntime records and store rows go with them);
 *  - runtime pods (sandboxes, containers) of no wanted pod and no worker, with something
 *    still running, are killed (kuberuntime_kill_running), e.g. a manifest removed while
 *    kletd was down;
 *  - dead containers are garbage-collected as the kubelet's container GC does
 *    (logic/containergc.c): those created at least MinAge ago, by (pod, container name),
 *    keeping the newest MaxPerPodContainer dead instances of each container of a wanted pod
 *    (none of an unwanted one, nor of an evicted one once its worker is done), then at most
 *    MaxContainers on the node, oldest first; an exited container goes only once its exit
 *    is stored (until then it counts, but stays);
 *  - not-ready sandboxes without containers are removed: all of them for unwanted or
 *    finished pods, all but the newest for running pods;
 *  - pod directories (ROOT/pods/UID) and the pod cgroup directories the runtime leaves
 *    (cgroupfs, every hierarchy under the cgroup mount) are removed once their pod is fully
 *    terminated and has nothing left in the runtime;
 *  - pod log directories (LOGS/NS_NAME_UID) likewise, once the pod is gone and its dead
 *    containers were collected (the kubelet's evictPodLogsDirectories). Whether a pod is
 *    gone is read from the sources, the workers and the runtime at every pass, so a
 *    directory left by a pod deleted while kletd was down goes after the restart.
 * Removals are CRI calls on the loop; a pass never waits for them, and an object with a
 * removal in flight is not asked for twice.
 */
#ifndef KLET_HOUSEKEEPING_H
#define KLET_HOUSEKEEPING_H

#include <stddef.h>
#include <stdint.h>

struct cgc_policy;
struct cri;
struct housekeeping;
struct kuberuntime;
struct podcache;
struct podconfig;
struct podworkers;
struct store;

struct hk_deps {
	struct cri         *cri;
	struct podcache    *cache;
	struct podworkers  *workers;
	struct podconfig   *config;
	struct kuberuntime *kr;          /* may be NULL (tests): orphans are then not killed */
	struct store       *store;       /* may be NULL */
	const char         *root_dir;    /* ROOT/pods/UID directories */
	const char         *logs_dir;    /* NS_NAME_UID pod log directories; NULL: none */
	const char         *cgroup_mnt;  /* NULL: /sys/fs/cgroup; "" disables cgroup cleanup */
	const char         *cgroup_root; /* NULL: /kubepods */
	struct cgroups     *cgroups;     /* the pod cgroup manager; NULL: cgroup_mnt/root */
	/* May be NULL: 1 when the exit of an exited container was reported (kletd: the PLEG
	 * stored it); an exited container is removed only then, so no exit code is lost to a
	 * removal that came before the relist that would have read it. */
	int (*exit_known)(const char *container_id, void *arg);
	void *exit_known_arg;
	/* May be NULL: 1 when a wanted pod's content may go all the same (it was evicted). */
	int (*content_removable)(const char *uid, void *arg);
	void *content_removable_arg;
	/* May be NULL: the kubelet's defaults (MinAge 0, 1 per container, no global limit).
	 * Copied. */
	const struct cgc_policy *gc_policy;
};

struct hk_stats {
	uint64_t passes;
	uint64_t workers_removed;
	uint64_t orphans_killed;
	uint64_t containers_removed;
	uint64_t sandboxes_removed;
	uint64_t dirs_removed;
	uint64_t log_dirs_removed;
	uint64_t cgroups_removed;
	int64_t  last_duration_us;
};

/* Returns a new housekeeper; deps are copied (the objects must outlive it). Never NULL. */
struct housekeeping *housekeeping_new(const struct hk_deps *);
/* Cancels its CRI calls and kills in flight, frees. NULL is a no-op. */
void housekeeping_free(struct housekeeping *);
/* One pass. Does nothing before the sources are ready and the runtime was listed. */
void housekeeping_run(struct housekeeping *);
/* The eviction manager's reclaim of dead containers (DeleteAllUnusedContainers): a pass that
 * keeps no dead instance of a pod no worker acts on. Returns 0 when it started no removal,
 * else 1 and done(arg) runs from the loop once no removal is in flight. */
int  housekeeping_reclaim(struct housekeeping *, void (*done)(void *arg), void *arg);
void housekeeping_stats(const struct housekeeping *, struct hk_stats *);

#endif
