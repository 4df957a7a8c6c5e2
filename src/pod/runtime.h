/* runtime.h — what the container runtime says about one pod (the kubelet's
 * kubecontainer.PodStatus): its sandboxes and containers, as compact plain data.
 * Filled by PLEG / the pod cache from CRI list and status calls; read by the pure
 * decision functions (actions, podstatus). Strings are owned; times are Unix nanoseconds
 * (0 = unset), as the CRI reports them.
 */
#ifndef KLET_RUNTIME_H
#define KLET_RUNTIME_H

#include <stddef.h>
#include <stdint.h>

/* The same numbering as the CRI's ContainerState and PodSandboxState. */
enum rt_cstate { RT_CREATED = 0, RT_RUNNING = 1, RT_EXITED = 2, RT_UNKNOWN = 3 };
enum rt_sbstate { RT_SB_READY = 0, RT_SB_NOTREADY = 1 };
/* The CRI's NamespaceMode. */
enum rt_nsmode { RT_NS_POD = 0, RT_NS_CONTAINER = 1, RT_NS_NODE = 2, RT_NS_TARGET = 3 };

struct rt_container {
	char          *id;
	char          *name; /* io.kubernetes.container.name */
	char          *sandbox_id;
	enum rt_cstate state;
	int64_t        created_at;
	int64_t        started_at;
	int64_t        finished_at;
	int32_t        exit_code;
	char          *reason; /* runtime's reason: Completed, Error, OOMKilled */
	char          *message;
	char          *image;         /* spec image */
	char          *image_ref;     /* resolved image id */
	uint64_t       hash;          /* io.kubernetes.container.hash, parsed (hex) */
	int32_t        restart_count; /* io.kubernetes.container.restartCount */
};

struct rt_sandbox {
	char           *id;
	uint32_t        attempt;
	enum rt_sbstate state;
	enum rt_nsmode  network_mode;
	char           *ip; /* NULL or "" when none */
	char          **extra_ips;
	size_t          nextra_ips;
	int64_t         created_at;
};

struct rt_pod_status {
	char *uid;
	char *name;
	char *ns;
	/* Newest first (by created_at). */
	struct rt_sandbox *sandboxes;
	size_t             nsandboxes;
	/* Newest first (by created_at); several entries may share a name (restarts). */
	struct rt_container *containers;
	size_t               ncontainers;
	int64_t              timestamp; /* monotonic ms when this status was read */
};

/* Returns the newest container of that name, or NULL. */
const struct rt_container *rt_find_container(const struct rt_pod_status *, const char *name);

/* Frees members; the struct itself is the caller's. NULL is a no-op. */
void rt_pod_status_clear(struct rt_pod_status *);
void rt_container_clear(struct rt_container *);
void rt_sandbox_clear(struct rt_sandbox *);
/* Deep copy into dst (which is overwritten, not freed). */
void rt_pod_status_copy(struct rt_pod_status *dst, const struct rt_pod_status *src);
/* Deep copy into dst whose strings are interned (core/intern.h): strings already held
 * elsewhere (PLEG's records) cost a reference, not a copy. Free it only with
 * rt_pod_status_clear_interned. */
void rt_pod_status_intern(struct rt_pod_status *dst, const struct rt_pod_status *src);
void rt_pod_status_clear_interned(struct rt_pod_status *);
/* Sorts sandboxes and containers newest first. */
void rt_pod_status_sort(struct rt_pod_status *);

#endif
