/* pleg.h — the generic pod lifecycle event generator (the kubelet's GenericPLEG).
 *
 * pleg_relist() lists every sandbox and container of the runtime (ListPodSandbox and
 * ListContainers, all states; only the records that differ from the previous relist's are
 * decoded), groups them by pod UID (label io.kubernetes.pod.uid),
 * asks for the status only of what is new or changed state since the previous relist
 * (PodSandboxStatus / ContainerStatus), stores the struct rt_pod_status of each pod that
 * changed (or that another reader wrote since) in the pod cache with the relist's start
 * time, moves the cache's global time (the other pods are known unchanged as of it),
 * and reports lifecycle
 * events by the kubelet's transition table (pleg_transition). containerd 1.6 has no
 * GetContainerEvents, so relisting every second is the mechanism.
 * Sandboxes take part in the table like containers (ready = running, not ready = exited).
 */
#ifndef KLET_PLEG_H
#define KLET_PLEG_H

#include <stddef.h>
#include <stdint.h>

#include "pod/runtime.h"

struct event_base;
struct cri;
struct podcache;
struct pleg;

/* The kubelet's PodLifeCycleEventType. */
enum pleg_event_type {
	PLEG_CONTAINER_STARTED = 0,
	PLEG_CONTAINER_DIED,
	PLEG_CONTAINER_REMOVED,
	PLEG_CONTAINER_CHANGED, /* to or from created/unknown; not a reason to sync */
};

/* The kubelet's plegContainerState. */
enum pleg_cstate {
	PLEG_NONEXISTENT = 0,
	PLEG_RUNNING,
	PLEG_EXITED,
	PLEG_UNKNOWN, /* also CREATED, as the kubelet does */
};

struct pleg_event {
	const char          *uid; /* pod UID */
	enum pleg_event_type type;
	const char          *id; /* container or sandbox id */
	int                  sandbox;
};

/* Called for each event of a relist, after the cache holds that relist's data. */
typedef void (*pleg_event_fn)(const struct pleg_event *, void *arg);
/* Called once for each container seen exited (with its exit code, reason and times). */
typedef void (*pleg_exit_fn)(const char *uid, const struct rt_container *, void *arg);

struct pleg_stats {
	uint64_t relists;          /* completed successfully */
	uint64_t failures;         /* relists that failed (list call errors) */
	int64_t  last_duration_us; /* start of the lists to the cache update */
	int64_t  max_duration_us;
	int64_t  last_success_ms; /* monotonic; 0 before the first */
	uint64_t events;
	size_t   pods; /* pods seen by the last relist */
	size_t   containers;
	size_t   sandboxes;
	size_t   status_calls; /* status calls made by the last relist */
	/* The list answers are hashed record by record; only new or changed records are
	 * decoded. A relist whose answers hold no new, changed or missing record (in any
	 * order) changes nothing: no decode, no diff, no cache write. */
	uint64_t unchanged;     /* relists that found nothing changed */
	int      last_changed;  /* the last relist changed something */
	size_t   decoded;       /* records decoded by the last relist */
	uint64_t decoded_total; /* records decoded by every relist */
	/* The first successful relist (recovery): objects listed, how many took their details
	 * from the store, status calls made. */
	size_t first_objects;
	size_t first_from_store;
	size_t first_status_calls;
	int    in_flight;
};

/* The threshold of the kubelet's PLEG health check. */
#define PLEG_RELIST_THRESHOLD_MS (3 * 60 * 1000)

/* Returns a new PLEG over cri writing into cache. fn / exit_fn may be NULL. Never NULL. */
struct pleg *pleg_new(
    struct event_base *, struct cri *, struct podcache *, pleg_event_fn fn, void *arg);
void pleg_set_exit_fn(struct pleg *, pleg_exit_fn, void *arg);
/* Recovery: with a store (kletd's), the details each status call reads are kept there (a
 * row per sandbox and container, written only when they change, deleted when the object
 * leaves the runtime), and the first relist takes them for every object the runtime lists
 * in the state it had when stored, instead of calling PodSandboxStatus / ContainerStatus.
 * An exited container found that way counts as reported (its exit was stored in the same
 * turn). NULL (the default): no store. */
struct store;
void pleg_set_store(struct pleg *, struct store *);
/* Cancels the relist in flight (no callback afterwards) and frees. NULL is a no-op. */
void pleg_free(struct pleg *);
/* Starts a relist unless one is in flight (then returns -1). done (may be NULL) is called on
 * the loop when it ends, with 0 or -1. Returns 0 when started. */
int  pleg_relist(struct pleg *, void (*done)(int rc, void *arg), void *arg);
void pleg_stats(const struct pleg *, struct pleg_stats *);
/* 1 when the last relist saw container id exited and its exit was reported (exit_fn). */
int pleg_exit_reported(const struct pleg *, const char *id);
/* 1 when a relist succeeded within PLEG_RELIST_THRESHOLD_MS of now (or the PLEG is younger
 * than that); else 0 with a reason in why. */
int pleg_healthy(const struct pleg *, int64_t now_ms, char *why, size_t whylen);

/* The kubelet's generateEvents: the events (0, 1 or 2, written to out) for one container
 * whose state went from old to new. */
size_t pleg_transition(enum pleg_cstate old, enum pleg_cstate new, enum pleg_event_type out[2]);
const char *pleg_event_name(enum pleg_event_type);

#endif
