/* eviction.h — the kubelet's eviction manager on the loop: every --eviction-monitoring-period,
 * and at once when a cgroup v1 memory threshold notification fires (eventfd registered with
 * cgroup.event_control on memory.usage_in_bytes of the root and kubepods cgroups) or, on
 * cgroup v2 (no such notification), when a poll every 500 ms of the kubepods
 * memory.current (and the node's MemAvailable) sees a usage cross its threshold, it
 * observes the signals (memory.available and allocatableMemory.available as capacity minus
 * the working set, usage - total_inactive_file; nodefs / imagefs available and inodes free
 * from statvfs; pid.available), decides with logic/eviction.c, reports the node conditions
 * and evicts at most one pod per pass (ranked for the signal; critical pods never; for a
 * disk signal only after a node-level reclaim of dead containers and unused images), waiting
 * for an evicted pod to terminate (at most 30 s) before the next one. */
#ifndef KLET_EVICTION_H
#define KLET_EVICTION_H

#include <stddef.h>
#include <stdint.h>

#include "logic/eviction.h"

struct event_base;
struct klet_config;
struct cgroups;
struct podworkers;
struct podcache;
struct pod;
struct imagegc;

struct eviction_deps {
	struct event_base        *base;
	const struct klet_config *cfg;        /* thresholds, periods, root and logs dirs */
	struct cgroups           *cgroups;    /* may be NULL: no kubepods signal, no pod usage */
	struct podworkers        *workers;    /* the active pods */
	struct podcache          *cache;      /* container names for the message; may be NULL */
	const char               *cgroup_mnt; /* NULL: /sys/fs/cgroup */
	int64_t pods_memory; /* allocatable capacity of allocatableMemory.available; 0: none */
	/* May be NULL: the image file system from the runtime (ImageFsInfo); without it (or
	 * before its first answer) imagefs is the node's file system. */
	struct imagegc *imagegc;
	/* Kill pod with grace_s and report it Failed / Evicted / message. */
	void (*evict)(void *arg, const struct pod *, int64_t grace_s, const char *message);
	/* May be NULL: reclaim node-level resources for a disk signal (dead containers, then
	 * unused images); the caller answers with eviction_reclaimed, never from inside this
	 * call. No pod is evicted for a disk signal until then. */
	void (*reclaim)(void *arg, enum ev_signal);
	/* The node conditions changed (EV_COND_* bits). */
	void (*conditions)(void *arg, unsigned conditions);
	void *arg;
};

struct eviction_view {
	const struct ev_config *cfg;
	struct ev_obs           obs[EV_NSIGNALS];
	unsigned                conditions;
	unsigned                met;
	uint64_t                passes, notifications, evictions;
	uint64_t                by_signal[EV_NSIGNALS];            /* evictions per signal */
	uint64_t                emptydir_limit, pod_storage_limit; /* local storage evictions */
	uint64_t                reclaims;                          /* node-level reclaims started */
	int64_t                 reclaimed_bytes;                   /* images freed by them */
	int     notify_armed;  /* memory threshold notifications registered (v1 eventfd, v2 poll) */
	char    last_pod[256]; /* NS/NAME of the last evicted pod */
	char    last_message[512];
	int64_t last_ms; /* wall ms of the last eviction, 0: none */
};

/* NULL with err set when the thresholds are bad. */
struct eviction *eviction_new(const struct eviction_deps *, char *err, size_t errlen);
void             eviction_free(struct eviction *);
/* One synchronize pass now. */
void eviction_run(struct eviction *);
/* The reclaim asked through deps.reclaim is over (freed: image bytes); a pass follows. */
void     eviction_reclaimed(struct eviction *, int64_t freed);
unsigned eviction_conditions(const struct eviction *);
void     eviction_view(const struct eviction *, struct eviction_view *);

#endif
