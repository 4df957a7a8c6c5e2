/* node.h — the Node object of this agent: registration, node status and the Lease heartbeat.
 *
 * node_new registers the node (POST /api/v1/nodes; when it exists, its labels are patched),
 * then every status_check_ms computes the node status (capacity and allocatable from the
 * host, addresses, nodeInfo, conditions Ready / MemoryPressure / DiskPressure / PIDPressure)
 * and PATCHes nodes/NAME/status when it changed or report_ms passed since the last report.
 * The Lease kube-node-lease/NAME is renewed every lease_renew_ms with optimistic
 * concurrency (PUT with the last resourceVersion; 409: re-read; 404: create). A node deleted
 * through the API is registered again. Failures retry on the next period.
 */
#ifndef KLET_NODE_H
#define KLET_NODE_H

#include <stdint.h>

#include "pod/pod.h"

struct event_base;
struct api;
struct node;
struct nodeinfo_opts;

struct node_options {
	const char          *name;     /* required */
	const struct kvlist *labels;   /* --node-labels; may be NULL */
	int                  max_pods; /* capacity "pods" (0: 110) */
	/* --kube-reserved, --system-reserved and the hard eviction thresholds, for allocatable
	 * and the pressure conditions (node/nodeinfo.h; max_pods above wins); NULL: none. The
	 * pointed lists must outlive the node. */
	const struct nodeinfo_opts *resources;
	const char                 *root_dir; /* ephemeral-storage and DiskPressure (NULL: "/") */
	int                         register_node;    /* 0: never POST the node */
	int64_t                     status_check_ms;  /* 0: 10 s */
	int64_t                     report_ms;        /* 0: 5 min */
	int64_t                     lease_renew_ms;   /* 0: 10 s */
	int32_t                     lease_duration_s; /* 0: 40 */
	const char                 *kubelet_version;  /* NULL: "v1.29.0-klet" */
	const int                  *kubelet_port; /* daemonEndpoints, read at each status (NULL or
	                                           * <= 0: 10250); server: the port it bound */
};

struct node_stats {
	int      registered;
	uint64_t registrations;  /* POSTs that created the node */
	uint64_t status_patches; /* successful status PATCHes */
	uint64_t lease_renewals; /* successful lease PUTs */
	uint64_t lease_creates;
	uint64_t lease_conflicts;
	uint64_t failures;
	int64_t  lease_renewed_ms; /* monotonic time of the last renewal or creation; 0: none */
	int32_t  lease_duration_s;
};

/* Starts registration at once. opts strings are copied. Never NULL. */
struct node *node_new(struct event_base *, struct api *, const struct node_options *);
/* Cancels pending calls. NULL is a no-op. */
void node_free(struct node *);
/* The runtime's health: ready 0 makes the node NotReady with reason and message (copied,
 * may be NULL). Triggers a status check on the next turn when it changed. */
void node_set_runtime_health(struct node *, int ready, const char *message);
/* The PLEG's health (relist not stalled). */
void node_set_pleg_health(struct node *, int healthy, const char *message);
/* The node is shutting down (graceful node shutdown): NotReady, "node is shutting down". */
void node_set_shutting_down(struct node *, int on);
/* The eviction manager's node conditions (1 MemoryPressure, 2 DiskPressure, 4 PIDPressure);
 * once called, they replace the fixed thresholds. */
void node_set_pressure(struct node *, unsigned pressure);
/* The node status' images (the image GC manager's list: the largest first, at most 50, up
 * to NODE_IMAGE_NAMES_MAX names each); copied. A changed list triggers a status check. */
#define NODE_IMAGE_NAMES_MAX 5
struct node_image {
	char   *names[NODE_IMAGE_NAMES_MAX];
	size_t  nnames;
	int64_t size;
};
void node_set_images(struct node *, const struct node_image *, size_t n);
/* The CRI Version answer: runtime name and version ("containerd", "1.6.20"). */
void node_set_runtime_version(struct node *, const char *name, const char *version);
/* Checks (and patches if needed) the status on the next turn. */
void node_kick(struct node *);
void node_get_stats(const struct node *, struct node_stats *);
/* The node's UID once registered (NULL before). Owned by node. */
const char *node_uid(const struct node *);
/* The node's InternalIP address as its status reports it (the pods' hostIP). Owned by node;
 * changes only when the status is generated. */
const char *node_ip(const struct node *);

/* Host facts (exposed for tests). Each returns 0 or -1. */
int         node_read_os_image(const char *os_release_path, char *out, size_t len);
const char *node_go_arch(const char *uname_machine);

#endif
