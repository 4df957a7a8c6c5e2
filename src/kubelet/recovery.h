/* recovery.h — what a restart resumes from (issue 6). While the daemon runs it writes to the
 * store the pods as their sources give them, every pod worker's state change (with its
 * grace deadline as a wall time), every container exit the PLEG reports, and an intent
 * record before each CRI create call. At start it restores the workers from the stored
 * pods and worker rows, keeps the readiness of containers that were ready in the resumed
 * statuses, and tells when the recovery ends (the first relist with every source seen).
 *
 * The store, kuberuntime, prober and workers may be NULL (the calls then do nothing). */
#ifndef KLET_RECOVERY_H
#define KLET_RECOVERY_H

#include <stdint.h>

#include "node/podworkers.h"

struct store;
struct kuberuntime;
struct prober;
struct podconfig;
struct pod;
struct pod_status;
struct rt_container;
struct kr_intents;
struct housekeeping;
struct recovery;
struct ev_record;

struct recovery_deps {
	struct store       *store;
	struct kuberuntime *kr;         /* the step a worker's machine is in */
	struct prober      *prober;     /* readiness kept from the resumed statuses */
	int64_t             started_ms; /* monotonic start of the daemon */
};

/* Returns the recovery (never NULL); deps are copied. Free it after the workers. */
struct recovery *recovery_new(const struct recovery_deps *);
void             recovery_free(struct recovery *);

/* The pod workers' state_changed observer (its state_arg is the recovery): writes the
 * worker's row. */
void recovery_worker_state(void *rec, const char *uid, enum pw_state, int64_t deadline_ms);
/* An events listener (arg: the recovery): a new event about a pod goes to the pod's
 * history in the store (podctl history), beside its worker's state changes. */
void recovery_event(const struct ev_record *, int is_new, void *rec);
/* Fills out with kuberuntime's intent callbacks (put commits at once; has looks up). */
void recovery_intents(struct recovery *, struct kr_intents *out);
/* The PLEG's exit callback (arg: the recovery): keeps the exit until its pod is gone. */
void recovery_pleg_exit(const char *uid, const struct rt_container *, void *rec);
/* Writes the pod's document as its source gave it (podconfig_doc); nothing when config
 * has none. */
void recovery_put_pod(struct recovery *, struct podconfig *, const struct pod *);

/* Resumes the stored workers into workers (a terminating pod keeps its deadline) and
 * remembers workers for the rows written later. Call once, before the sources start. */
void recovery_restore(struct recovery *, struct podworkers *);
/* For api_join_foreach_restored: containers ready in a resumed status stay ready. */
void recovery_restore_status(const struct pod_status *, void *rec);
/* After each successful relist. The first one with every source's initial set seen
 * (sources_ready) ends the recovery: hk (may be NULL) runs at once, so that the restored
 * workers of pods removed while the daemon was down are killed now (their grace runs from
 * the original removal, not 2 s later), and the duration is logged. Returns 1 then, else 0. */
int recovery_relisted(struct recovery *, int sources_ready, struct housekeeping *hk);
/* Milliseconds from start to the end of the recovery, -1 before; the pointer stays valid
 * for the recovery's life (podctl status reads it). */
const int64_t *recovery_recovered_ms(const struct recovery *);

#endif
