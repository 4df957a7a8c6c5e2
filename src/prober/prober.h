/* prober.h — the kubelet's probe manager: startup, liveness and readiness probes on the loop.
 *
 * One worker per running container per probe kind, each a periodic timer on the loop (no
 * threads, nothing blocks): exec through CRI ExecSync, httpGet through http1, tcpSocket as a
 * non-blocking connect, grpc as grpc.health.v1.Health/Check over h2c. Semantics follow the
 * kubelet's prober worker: initialDelaySeconds counted from the container's start,
 * periodSeconds, timeoutSeconds, success/failure thresholds; initial results readiness
 * Failure, liveness Success, startup none; liveness and readiness do not run until the
 * startup probe succeeded, and the startup probe is not run again afterwards; a liveness or
 * startup failure holds the worker until the container ID changes; a new container ID
 * starts from a fresh state. Results are kept per container ID (the results managers) and
 * every change calls the change hook (wire it to podworkers_kick).
 */
#ifndef KLET_PROBER_H
#define KLET_PROBER_H

#include <stddef.h>
#include <stdint.h>

#include "logic/actions.h"
#include "pod/pod.h"
#include "pod/runtime.h"

struct event_base;
struct cri;
struct events;
struct prober;

enum probe_kind { PROBE_LIVENESS = 0, PROBE_READINESS, PROBE_STARTUP, PROBE_NKINDS };

/* "liveness", "readiness", "startup". */
const char *probe_kind_name(enum probe_kind);

/* cri and events may be NULL (exec probes then fail; no events). They must outlive it. */
struct prober *prober_new(struct event_base *, struct cri *, struct events *);
/* Stops every worker (in-flight checks cancelled) and frees everything. NULL is a no-op. */
void prober_free(struct prober *);

/* Called (on the loop, never inside a prober_* call) with a pod UID whenever one of its
 * probe results changed. Wire it to podworkers_kick. */
void prober_set_notify(struct prober *, void (*fn)(const char *uid, void *arg), void *arg);

/* Reconciles the workers of one pod with its spec and the runtime's view: a worker for each
 * probe of each running app container (rt may be NULL); workers of containers that are gone
 * or not running stop, a new container ID resets them. active 0 (the pod is terminating or
 * finished) stops every worker of the pod. pod and rt are read, not kept. */
void prober_sync_pod(
    struct prober *, const struct pod *, const struct rt_pod_status *rt, int active);
/* Recovery: the container was ready when the previous daemon stopped (its stored status
 * says so). A readiness or startup worker started for it in the next minute begins at
 * Success instead of the kubelet's initial Failure / none, so a daemon restart does not
 * flip the pod to NotReady; the next check result applies as usual. */
void prober_assume_ready(struct prober *, const char *container_id);
/* Drops the pods not given to prober_sync_pod since the previous sweep (call after a
 * pass over every pod). */
void prober_sweep(struct prober *);
/* Drops every worker and result of uid. */
void prober_remove_pod(struct prober *, const char *uid);

/* Fills out with the latest results of uid's containers (one entry per container ID with
 * a worker). The entries are owned by the prober and valid until the next prober_* call
 * or loop turn. Returns 0, or -1 when the pod has no probe worker. */
int prober_probe_states(struct prober *, const char *uid, struct probe_set *out);

/* A number that changes whenever what prober_probe_states gives for uid may have changed
 * (0: the pod has no probe worker); with uid NULL, one that changes with any pod's. */
uint64_t prober_version(struct prober *, const char *uid);

struct prober_stats {
	size_t   workers;
	uint64_t runs;     /* checks completed */
	uint64_t failures; /* checks that failed */
	uint64_t changes;  /* result changes */
};
void prober_get_stats(const struct prober *, struct prober_stats *);

/* ---- for tests ---- */

/* Replaces every handler by fn: called when a check starts; it must later call
 * prober_check_done(token, ...) exactly once (never inside fn) unless the check is
 * cancelled, in which case cancel(token, arg) is called. */
typedef void (*prober_fake_fn)(
    void *token, const char *uid, const char *container, enum probe_kind, void *arg);
void prober_set_fake(
    struct prober *, prober_fake_fn fn, void (*cancel)(void *token, void *arg), void *arg);
/* Reports a fake check's outcome: success 1/0 and its output (may be NULL). */
void prober_check_done(void *token, int success, const char *output);

#endif
