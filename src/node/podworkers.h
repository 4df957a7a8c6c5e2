/* podworkers.h — one state machine per pod UID (the kubelet's podWorkers), on the loop.
 *
 * A worker moves SYNC -> TERMINATING -> TERMINATED -> FINISHED. Updates for a pod coalesce
 * (latest wins; termination is sticky); each pod runs at most one asynchronous transaction
 * at a time while other pods progress; a failed transaction is retried through a work queue
 * with backoff; a finished phase queues the next phase at once. The work itself is done by
 * a syncer (kuberuntime) that calls pw_txn_done() exactly once per transaction.
 * Static pods (annotation kubernetes.io/config.source other than "api") with the same
 * namespace/name never run at once: a new UID (an edited manifest) starts only after the
 * previous one finished terminating, as the kubelet's allowStaticPodStart. A UID re-added by
 * its source after a KILL runs again once its termination is over (restart requested).
 */
#ifndef KLET_PODWORKERS_H
#define KLET_PODWORKERS_H

#include <stdint.h>

#include "pod/pod.h"

struct event_base;
struct podworkers;
struct pw_txn;

enum pw_state {
	PW_SYNC = 0,    /* the pod should run: SyncPod */
	PW_TERMINATING, /* stop its containers within the grace period: SyncTerminatingPod */
	PW_TERMINATED,  /* containers stopped: SyncTerminatedPod cleans up */
	PW_FINISHED,    /* nothing left to do; removed once the pod is no longer wanted */
};

enum pw_update_type {
	PW_UPDATE_CREATE = 0, /* a new pod from a source */
	PW_UPDATE_UPDATE,     /* the pod's spec or metadata changed */
	PW_UPDATE_SYNC,       /* periodic or PLEG-triggered resync */
	PW_UPDATE_KILL,       /* terminate (pod removed, deleted, evicted, rejected) */
};

/* Outcome flags a syncer reports with pw_txn_done. */
#define PW_DONE_TERMINAL 0x1 /* SyncPod found the pod finished (phase Succeeded/Failed) */

/* The work, supplied by the runtime manager. Each function starts one transaction for the
 * pod (valid until pw_txn_done) and returns; the transaction ends with pw_txn_done(txn, ...).
 * cancel (may be NULL) is called when the worker is torn down with a transaction in flight;
 * pw_txn_done must not be called for it afterwards. */
struct pw_syncer {
	/* type: PW_UPDATE_CREATE for the first sync of a worker, UPDATE after a spec change,
	 * else SYNC. */
	void (*sync_pod)(void *arg, struct pw_txn *, const struct pod *, enum pw_update_type);
	void (*sync_terminating)(
	    void *arg, struct pw_txn *, const struct pod *, int64_t grace_seconds);
	void (*sync_terminated)(void *arg, struct pw_txn *, const struct pod *);
	void (*cancel)(void *arg, struct pw_txn *);
	/* cancel is also called when a pod must terminate while its sync_pod transaction is in
	 * flight (the kubelet cancels the sync's context): the terminating transaction then
	 * starts at once. */
	void *arg; /* of the four above */
	/* Told of every state change (to persist it), and of a new worker's initial SYNC;
	 * may be NULL. Its own argument: the observer is not the syncer. */
	void (*state_changed)(
	    void *state_arg, const char *uid, enum pw_state, int64_t grace_deadline_ms);
	void *state_arg;
};

struct pw_options {
	int64_t backoff_ms; /* retry delay after a failed transaction (kubelet: 10 s) */
	int64_t resync_ms;  /* resync period of a healthy pod (kubelet's syncFrequency: 1 min) */
};

/* A read-only view of one worker, for housekeeping and podctl. Valid until the next call
 * into podworkers. */
struct pw_view {
	const char         *uid;
	const struct pod   *pod;
	enum pw_state       state;
	int                 working;  /* a transaction is in flight */
	const char         *txn_kind; /* "sync", "terminating", "terminated" or NULL */
	int64_t             txn_started_ms;
	int                 has_pending;
	enum pw_update_type pending_type;
	int64_t             next_sync_ms;      /* 0: not queued */
	int64_t             grace_seconds;     /* while terminating */
	int64_t             grace_deadline_ms; /* monotonic; 0 when not terminating */
	const char         *last_error;
	int                 failures; /* consecutive failed transactions */
	int                 removed;  /* terminating because its source removed the pod */
};

/* What a restarted daemon knows of a worker (podworkers_restore). */
struct pw_restore {
	enum pw_state state;
	int64_t       grace_deadline_ms; /* TERMINATING: monotonic, may be past */
	int           removed;           /* its source had removed the pod */
	int           failures;          /* consecutive failed transactions */
	const char   *last_error;        /* may be NULL; copied */
	int64_t       next_sync_ms;      /* monotonic retry time of a failing SYNC worker; 0 */
};

/* Returns a new set of workers on base. Never NULL. The syncer is copied. */
struct podworkers *podworkers_new(
    struct event_base *, const struct pw_syncer *, const struct pw_options *);
/* Cancels in-flight transactions (syncer->cancel) and frees everything. NULL is a no-op. */
void podworkers_free(struct podworkers *);

/* Delivers an update. pod is copied. For KILL, grace_override < 0 means none.
 * Updates for a pod that is terminating or beyond never bring it back to SYNC (sticky);
 * a pod with deletion_ts set is terminated with its deletion grace period. */
void podworkers_update(
    struct podworkers *, const struct pod *, enum pw_update_type, int64_t grace_override);

/* Resumes a worker from stored state after a restart (before any update for it): the
 * pod is copied; a TERMINATING worker keeps its grace deadline; a removed one starts over
 * when its source adds the same UID again; a failing SYNC worker keeps its backoff.
 * The syncer's state_changed is also called when only the removed flag or the failure
 * count changed, so that a store can keep them. */
void podworkers_restore(struct podworkers *, const struct pod *, const struct pw_restore *);

/* The 1 s sync tick: starts a SYNC transaction for every idle worker that is due. Returns how
 * many were started. */
int podworkers_sync_due(struct podworkers *, int64_t now_ms);

/* Asks for a sync of uid at the next dispatch (a PLEG event). No-op for unknown pods. */
void podworkers_kick(struct podworkers *, const char *uid);

/* Removes FINISHED workers whose UID is_wanted() says is no longer desired, and starts a KILL
 * for unwanted workers still in SYNC (orphans). Returns the number removed. */
int podworkers_forget(struct podworkers *, int (*is_wanted)(const char *uid, void *), void *arg);

/* Ends a transaction: rc 0 success, -1 failure (err says why; copied). flags: PW_DONE_*.
 * Safe to call from inside the syncer's start function. */
void pw_txn_done(struct pw_txn *, int rc, unsigned flags, const char *err);
/* The worker's UID (valid for the transaction's life). */
const char *pw_txn_uid(const struct pw_txn *);

/* Look-ups and iteration (views valid until the next call that changes workers). */
int  podworkers_get(struct podworkers *, const char *uid, struct pw_view *);
void podworkers_foreach(struct podworkers *, void (*cb)(const struct pw_view *, void *), void *arg);
size_t podworkers_count(struct podworkers *);
/* A number that changes whenever a worker comes or goes, or a worker's state or pod changes:
 * what podworkers_get and podworkers_foreach give of pod and state has not changed while it
 * has not. */
uint64_t podworkers_version(const struct podworkers *);
/* A number (never 0) that changes whenever the set of UIDs whose worker is FINISHED changes:
 * a worker enters or leaves FINISHED, or a FINISHED one is restored or forgotten. */
uint64_t    podworkers_finished_version(const struct podworkers *);
const char *pw_state_name(enum pw_state);

/* The grace period the kubelet applies when terminating pod: the deletion grace period,
 * else the spec's, with a smaller override winning, never below 1; prev (0 if none) is the
 * grace already in force, which can only shrink. */
int64_t pw_effective_grace(const struct pod *, int64_t prev, int64_t override);

#endif
