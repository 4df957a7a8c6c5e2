/* ctl.h — podctl's server inside kletd: read-only inspection over a local unix socket,
 * speaking the protocol of ctl/proto.h; the replies are built by reply.c (ctl/reply.h).
 * The loop never waits for a client: one whose unsent output exceeds the output bound
 * (CTL_MAX_OUTPUT, or deps->max_output) is dropped.
 * Access: the socket is mode 0660, owner root, group --podctl-group (root only when
 * unset); each peer's credentials (SO_PEERCRED) must be root, the daemon's own uid, or a
 * member of that group (primary or supplementary), else it gets an error line and is closed.
 */
#ifndef KLET_CTL_H
#define KLET_CTL_H

#include <stddef.h>
#include <stdint.h>

#include "ctl/proto.h"

struct event_base;
struct klet_config;
struct loop;
struct cri;
struct podcache;
struct podworkers;
struct pod_status;
struct kuberuntime;
struct events;
struct store;
struct pleg;
struct prober;
struct eviction;
struct imagegc;
struct nodeshutdown;
struct ctl;

/* What the API side can tell (all optional). Strings borrowed for the call. */
struct ctl_api_info {
	int         configured; /* --kubeconfig given */
	int         connected;
	const char *watch_state;       /* "idle", "listing", "watching" or NULL */
	const char *resource_version;  /* watch position or NULL */
	int64_t     last_event_age_ms; /* -1: none yet */
	int         registered;        /* the Node object exists */
	const char *node_ip;           /* InternalIP as reported, or NULL */
	int64_t     lease_age_ms;      /* since the Lease was last renewed; -1: never */
	int32_t     lease_duration_s;
	uint64_t    lease_renewals;
	uint64_t    status_patches; /* node status PATCHes accepted */
	/* The pods' statuses: generated (not skipped by an unchanged stamp), new versions,
	 * PATCHes sent and acknowledged. */
	uint64_t pod_status_generated;
	uint64_t pod_status_versions;
	uint64_t pod_status_patches;
	uint64_t pod_status_acked;
};

/* What kletd hands the server; every object pointer may be NULL (its section then says
 * "unavailable"). The objects must outlive the server (free it first). */
struct ctl_deps {
	struct event_base        *base;
	const struct klet_config *cfg; /* ctl_socket, ctl_group, node_name, root_dir */
	struct loop              *loop;
	struct cri               *cri;
	struct podcache          *cache;
	struct podworkers        *workers;
	struct kuberuntime       *kr;
	struct events            *events;
	struct store             *store;
	struct pleg              *pleg;
	int64_t                   started_ms;                  /* monotonic start of the daemon */
	void (*api_info)(struct ctl_api_info *out, void *arg); /* NULL: not configured */
	void                *api_arg;
	size_t               max_output;   /* 0: CTL_MAX_OUTPUT */
	struct prober       *prober;       /* probe results (READY, describe); may be NULL */
	const int64_t       *recovered_ms; /* ms from start to recovered, -1 before; NULL */
	struct eviction     *eviction;     /* signals, thresholds, last eviction; may be NULL */
	struct imagegc      *imagegc;      /* image GC policy, image fs, removals; may be NULL */
	struct nodeshutdown *shutdown;     /* graceful node shutdown; NULL: off */
	/* The status manager's last status of uid (copied; free with pod_status_clear): what
	 * the API was sent, kept after the runtime collected the pod's dead containers.
	 * 0, or -1 when unknown. NULL: no status manager (standalone). Called with api_arg. */
	int (*last_status)(const char *uid, struct pod_status *out, void *arg);
};

/* Creates the socket (replacing a stale one) and starts accepting. Returns NULL with a
 * one-line reason in err (e.g. an unknown --podctl-group, a path that cannot be bound). */
struct ctl *ctl_new(const struct ctl_deps *, char *err, size_t errlen);
/* Closes every client and the socket and removes the socket file. NULL is a no-op. */
void ctl_free(struct ctl *);
/* Number of connected clients. */
size_t ctl_clients(const struct ctl *);

#endif
