/* eviction.h — the kubelet's eviction manager decisions as pure functions: thresholds from
 * --eviction-hard / --eviction-soft (with grace periods and minimum reclaim), which are met
 * by a set of signal observations, the node conditions they give (held for the pressure
 * transition period), which threshold to act on once its grace period passed, the ranking
 * of the pods for that signal (usage above requests, priority, usage) and the eviction
 * message of the evicted pod. */
#ifndef KLET_EVICTION_LOGIC_H
#define KLET_EVICTION_LOGIC_H

#include <stddef.h>
#include <stdint.h>

#include "pod/pod.h"

enum ev_signal {
	EV_MEMORY = 0,    /* memory.available */
	EV_ALLOC_MEMORY,  /* allocatableMemory.available (the kubepods cgroup) */
	EV_NODEFS,        /* nodefs.available */
	EV_NODEFS_INODES, /* nodefs.inodesFree */
	EV_IMAGEFS,       /* imagefs.available */
	EV_IMAGEFS_INODES,
	EV_PID, /* pid.available */
	EV_NSIGNALS
};

#define EV_MAX_THRESHOLDS 16

/* Node conditions (the ADMIT_*_PRESSURE bits of logic/admit.h). */
#define EV_COND_MEMORY 0x1
#define EV_COND_DISK   0x2
#define EV_COND_PID    0x4

struct ev_threshold {
	enum ev_signal sig;
	int            hard;
	int64_t        quantity; /* absolute, or -1 when percent is used */
	double         percent;  /* of capacity, 0..100 */
	char           text[32]; /* as configured ("100Mi", "10%") */
	int64_t        grace_ms; /* soft only */
	int64_t        min_reclaim;
	double         min_reclaim_pct;
};

struct ev_config {
	struct ev_threshold t[EV_MAX_THRESHOLDS];
	size_t              n;
	int64_t             transition_ms;
	int64_t             max_grace_s;
};

struct ev_obs {
	int     valid;
	int64_t available, capacity;
};

/* What synchronize remembers between passes. */
struct ev_state {
	int64_t  first_met_ms[EV_MAX_THRESHOLDS]; /* 0: not met */
	int64_t  cond_last_ms[3];                 /* when each condition was last observed */
	unsigned met_last;                        /* bit per threshold */
	unsigned conditions;                      /* EV_COND_*, as reported */
};

struct ev_decision {
	unsigned met;        /* thresholds met now (min reclaim included), a bit each */
	unsigned conditions; /* EV_COND_*, held for the transition period */
	int      act;        /* index of the threshold to reclaim for, -1: none */
};

const char *ev_signal_name(enum ev_signal);
int         ev_signal_parse(const char *); /* -1 when unknown */
/* "memory", "ephemeral-storage", "inodes", "pids". */
const char *ev_signal_resource(enum ev_signal);
unsigned    ev_signal_condition(enum ev_signal);

/* The thresholds of the flags (signal -> "100Mi" / "10%"; grace signal -> duration;
 * minimum reclaim signal -> quantity or percent); a memory.available hard threshold also
 * applies to allocatableMemory.available, as the kubelet's. A soft threshold without a
 * grace period is an error, as the kubelet's. 0, or -1 with err set. */
int ev_config_build(const struct kvlist *hard, const struct kvlist *soft,
    const struct kvlist *grace, const struct kvlist *min_reclaim, struct ev_config *out, char *err,
    size_t errlen);
/* A threshold's value in the signal's units against capacity. */
int64_t ev_threshold_value(const struct ev_threshold *, int64_t capacity);

/* One pass of the manager's synchronize at now (ms): updates state, fills out. */
void ev_synchronize(const struct ev_config *, const struct ev_obs obs[EV_NSIGNALS], int64_t now,
    struct ev_state *, struct ev_decision *out);

/* A pod as the ranking sees it. */
struct ev_pod {
	const struct pod *pod;
	int               critical; /* never evicted */
	int32_t           priority;
	int64_t           mem_usage, mem_request;   /* bytes */
	int64_t           disk_usage, disk_request; /* bytes */
	int64_t           procs;
	size_t            index; /* the caller's */
};
/* Sorts pods, first evicted first, as the kubelet ranks them for sig. */
void ev_rank(enum ev_signal, struct ev_pod *, size_t n);

/* A container's usage for the message (NULL names end the list). */
struct ev_container_usage {
	const char *name;
	int64_t     usage, request;
};
/* The kubelet's message: "The node was low on resource: memory. Threshold quantity: 100Mi,
 * available: 91244Ki. Container c was using 1843Mi, request is 0, has larger consumption of
 * memory. " (containers only for memory and ephemeral-storage). Caller frees. */
char *ev_message(const struct ev_threshold *, const struct ev_obs *,
    const struct ev_container_usage *, size_t n);
/* The grace period of an eviction: 1 s for a hard threshold (immediate), else
 * min(max_grace_s, the pod's terminationGracePeriodSeconds). */
int64_t ev_grace(const struct ev_config *, const struct ev_threshold *, const struct pod *);
/* Local storage limits (evicted whatever the node's pressure): an emptyDir above its
 * sizeLimit, a pod above the sum of its containers' ephemeral-storage limits. The kubelet's
 * messages; caller frees. */
char *ev_emptydir_message(const char *volume, int64_t limit);
char *ev_pod_storage_message(int64_t limit);
/* A quantity as the API prints it (BinarySI: "91244Ki", "150Mi", "1000"). */
void ev_quantity(int64_t v, char *buf, size_t len);

#endif
