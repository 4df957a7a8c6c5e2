/* cri.h — the asynchronous CRI client (runtime.v1 RuntimeService and ImageService) on the
 * daemon's one event loop: gRPC over HTTP/2 on a unix socket.
 *
 * Every call takes the request (protobuf-c message from schema/cri/api.proto, generated as
 * api.pb-c.h, C names Runtime__V1__*), a timeout, a completion callback, its argument and an
 * owner. The request is serialized before the call returns: the caller keeps ownership of it
 * and may free it at once.
 *
 * The callback runs exactly once, later, on the loop (never inside the cri_* call itself),
 * unless the call is cancelled first (cri_cancel, cri_cancel_owner, cri_free): then it never
 * runs. code is a gRPC status code (enum grpc_code in grpc.h: GRPC_OK, GRPC_UNAVAILABLE,
 * GRPC_DEADLINE_EXCEEDED, GRPC_NOT_FOUND, ...), message a human readable error ("" on
 * success), resp the decoded response: non-NULL exactly when code == GRPC_OK. message and
 * resp are owned by the client and valid only during the callback (copy what you keep).
 * The callback may start new calls, cancel other calls or cancel by owner; it must not call
 * cri_free.
 *
 * Connection: cri_new connects at once and calls Version; the client is ready once Version
 * answered. When the socket is missing or the runtime goes away, calls fail fast with
 * GRPC_UNAVAILABLE (in-flight calls too), and the client reconnects with backoff (0.5 s
 * doubling to 10 s) for as long as it lives. State changes are reported through cri_state_cb.
 */
#ifndef KLET_CRI_H
#define KLET_CRI_H

#include <stddef.h>
#include <stdint.h>

#include "api.pb-c.h"
#include "net/grpc.h"

struct event_base;
struct cri;
struct cri_call;

struct cri_options {
	int64_t timeout_ms;   /* default per-call deadline when a call passes 0 (default 2 m) */
	size_t  max_msg;      /* max message size each way (default 16 MiB) */
	int64_t keepalive_ms; /* idle PING interval (default 0: none; keep >= 5 min on CRI) */
	int64_t connect_timeout_ms; /* default 5 s */
	/* Calls handed to the runtime at once (default 256; kletd passes
	 * --runtime-request-window). Past it a call waits, packed, and
	 * starts when an earlier one finishes (stops and removals first): a pod with thousands
	 * of containers is read, started and stopped at the pace of the runtime, no call is
	 * failed for want of room. */
	unsigned max_active;
};

struct cri_info {
	int         ready;               /* connected and Version answered */
	const char *endpoint;            /* "unix:///path" as given */
	const char *runtime_name;        /* Version: "containerd"; NULL before the first answer */
	const char *runtime_version;     /* "1.6.20" */
	const char *runtime_api_version; /* "v1" */
	const char *last_error;          /* why not ready (NULL when ready) */
};

struct cri_stats {
	uint64_t calls;           /* calls started */
	uint64_t errors;          /* calls completed with code != OK (cancelled calls excluded) */
	uint64_t cancelled;       /* calls cancelled by the caller */
	uint64_t in_flight;       /* calls started, not completed nor cancelled */
	uint64_t waiting;         /* of which waiting for room (max_active) */
	uint64_t waiting_max;     /* the most that ever waited at once */
	uint64_t active_max;      /* the most ever handed to the runtime at once */
	unsigned window;          /* calls handed to the runtime at once at most */
	uint64_t reconnects;      /* successful connections after the first */
	int64_t  last_latency_us; /* latency of the last completed call */
};

/* ready: 1 when the runtime became ready (connected and Version answered), 0 when it was lost
 * or refused; reason says why (NULL when ready). Runs on the loop. May call cri_* except
 * cri_free. */
typedef void (*cri_state_cb)(struct cri *, int ready, const char *reason, void *arg);

/* Parses a kubelet-style endpoint: "unix:///path" (absolute path required). Returns a
 * malloc'd socket path, or NULL with err (one line) filled. */
char *cri_parse_endpoint(const char *endpoint, char *err, size_t errlen);

/* Creates the client and starts connecting. opts may be NULL (defaults); state_cb may be
 * NULL. Returns NULL (and logs) when the endpoint is invalid. A missing socket is not an
 * error: the client keeps retrying. */
struct cri *cri_new(struct event_base *, const char *endpoint, const struct cri_options *opts,
    cri_state_cb state_cb, void *arg);
/* Cancels every call (no callback runs) and frees the client. NULL is a no-op. Never call it
 * from a cri callback. */
void cri_free(struct cri *);

/* Returns 1 when connected and Version has answered, else 0. */
int cri_ready(const struct cri *);
/* Fills info; its strings are owned by the client, valid until the next loop turn. */
void cri_info(const struct cri *, struct cri_info *info);
void cri_stats(const struct cri *, struct cri_stats *stats);

/* Cancels one call: its callback never runs. The handle is invalid afterwards. NULL is a
 * no-op. A handle must not be used after its callback ran. */
void cri_cancel(struct cri_call *);
/* Cancels every pending call started with this owner; their callbacks never run. Returns the
 * number of calls cancelled. owner NULL cancels nothing. */
int cri_cancel_owner(struct cri *, const void *owner);

/* Typed calls. Each returns a call handle owned by the client (never NULL), valid until its
 * callback has run or it was cancelled. timeout_ms 0 means the client default. */

/* RuntimeService */
typedef void (*cri_version_cb)(
    int code, const char *message, const Runtime__V1__VersionResponse *resp, void *arg);
struct cri_call *cri_version(struct cri *, const Runtime__V1__VersionRequest *, int64_t timeout_ms,
    cri_version_cb, void *arg, const void *owner);

typedef void (*cri_status_cb)(
    int code, const char *message, const Runtime__V1__StatusResponse *resp, void *arg);
struct cri_call *cri_status(struct cri *, const Runtime__V1__StatusRequest *, int64_t timeout_ms,
    cri_status_cb, void *arg, const void *owner);

typedef void (*cri_run_pod_sandbox_cb)(
    int code, const char *message, const Runtime__V1__RunPodSandboxResponse *resp, void *arg);
struct cri_call *cri_run_pod_sandbox(struct cri *, const Runtime__V1__RunPodSandboxRequest *,
    int64_t timeout_ms, cri_run_pod_sandbox_cb, void *arg, const void *owner);

typedef void (*cri_stop_pod_sandbox_cb)(
    int code, const char *message, const Runtime__V1__StopPodSandboxResponse *resp, void *arg);
struct cri_call *cri_stop_pod_sandbox(struct cri *, const Runtime__V1__StopPodSandboxRequest *,
    int64_t timeout_ms, cri_stop_pod_sandbox_cb, void *arg, const void *owner);

typedef void (*cri_remove_pod_sandbox_cb)(
    int code, const char *message, const Runtime__V1__RemovePodSandboxResponse *resp, void *arg);
struct cri_call *cri_remove_pod_sandbox(struct cri *, const Runtime__V1__RemovePodSandboxRequest *,
    int64_t timeout_ms, cri_remove_pod_sandbox_cb, void *arg, const void *owner);

typedef void (*cri_pod_sandbox_status_cb)(
    int code, const char *message, const Runtime__V1__PodSandboxStatusResponse *resp, void *arg);
struct cri_call *cri_pod_sandbox_status(struct cri *, const Runtime__V1__PodSandboxStatusRequest *,
    int64_t timeout_ms, cri_pod_sandbox_status_cb, void *arg, const void *owner);

typedef void (*cri_list_pod_sandbox_cb)(
    int code, const char *message, const Runtime__V1__ListPodSandboxResponse *resp, void *arg);
struct cri_call *cri_list_pod_sandbox(struct cri *, const Runtime__V1__ListPodSandboxRequest *,
    int64_t timeout_ms, cri_list_pod_sandbox_cb, void *arg, const void *owner);

typedef void (*cri_create_container_cb)(
    int code, const char *message, const Runtime__V1__CreateContainerResponse *resp, void *arg);
struct cri_call *cri_create_container(struct cri *, const Runtime__V1__CreateContainerRequest *,
    int64_t timeout_ms, cri_create_container_cb, void *arg, const void *owner);

typedef void (*cri_start_container_cb)(
    int code, const char *message, const Runtime__V1__StartContainerResponse *resp, void *arg);
struct cri_call *cri_start_container(struct cri *, const Runtime__V1__StartContainerRequest *,
    int64_t timeout_ms, cri_start_container_cb, void *arg, const void *owner);

typedef void (*cri_stop_container_cb)(
    int code, const char *message, const Runtime__V1__StopContainerResponse *resp, void *arg);
struct cri_call *cri_stop_container(struct cri *, const Runtime__V1__StopContainerRequest *,
    int64_t timeout_ms, cri_stop_container_cb, void *arg, const void *owner);

typedef void (*cri_remove_container_cb)(
    int code, const char *message, const Runtime__V1__RemoveContainerResponse *resp, void *arg);
struct cri_call *cri_remove_container(struct cri *, const Runtime__V1__RemoveContainerRequest *,
    int64_t timeout_ms, cri_remove_container_cb, void *arg, const void *owner);

typedef void (*cri_list_containers_cb)(
    int code, const char *message, const Runtime__V1__ListContainersResponse *resp, void *arg);
struct cri_call *cri_list_containers(struct cri *, const Runtime__V1__ListContainersRequest *,
    int64_t timeout_ms, cri_list_containers_cb, void *arg, const void *owner);

typedef void (*cri_container_status_cb)(
    int code, const char *message, const Runtime__V1__ContainerStatusResponse *resp, void *arg);
struct cri_call *cri_container_status(struct cri *, const Runtime__V1__ContainerStatusRequest *,
    int64_t timeout_ms, cri_container_status_cb, void *arg, const void *owner);

/* ExecSync: pass a timeout_ms larger than the request's own timeout (seconds). */
typedef void (*cri_exec_sync_cb)(
    int code, const char *message, const Runtime__V1__ExecSyncResponse *resp, void *arg);
struct cri_call *cri_exec_sync(struct cri *, const Runtime__V1__ExecSyncRequest *,
    int64_t timeout_ms, cri_exec_sync_cb, void *arg, const void *owner);

/* Exec, Attach, PortForward: the URL of the runtime's streaming server for one session. */
typedef void (*cri_exec_cb)(
    int code, const char *message, const Runtime__V1__ExecResponse *resp, void *arg);
struct cri_call *cri_exec(struct cri *, const Runtime__V1__ExecRequest *, int64_t timeout_ms,
    cri_exec_cb, void *arg, const void *owner);
typedef void (*cri_attach_cb)(
    int code, const char *message, const Runtime__V1__AttachResponse *resp, void *arg);
struct cri_call *cri_attach(struct cri *, const Runtime__V1__AttachRequest *, int64_t timeout_ms,
    cri_attach_cb, void *arg, const void *owner);
typedef void (*cri_port_forward_cb)(
    int code, const char *message, const Runtime__V1__PortForwardResponse *resp, void *arg);
struct cri_call *cri_port_forward(struct cri *, const Runtime__V1__PortForwardRequest *,
    int64_t timeout_ms, cri_port_forward_cb, void *arg, const void *owner);
typedef void (*cri_update_container_resources_cb)(int code, const char *message,
    const Runtime__V1__UpdateContainerResourcesResponse *resp, void *arg);
struct cri_call *cri_update_container_resources(struct cri *,
    const Runtime__V1__UpdateContainerResourcesRequest *, int64_t timeout_ms,
    cri_update_container_resources_cb, void *arg, const void *owner);

/* After the container's log file was renamed (rotation), the runtime opens a new one at
 * its log path. Fails for a container that is not running. */
typedef void (*cri_reopen_container_log_cb)(
    int code, const char *message, const Runtime__V1__ReopenContainerLogResponse *resp, void *arg);
struct cri_call *cri_reopen_container_log(struct cri *,
    const Runtime__V1__ReopenContainerLogRequest *, int64_t timeout_ms, cri_reopen_container_log_cb,
    void *arg, const void *owner);

/* ListPodSandbox and ListContainers answered with the serialized response (msg, len; NULL
 * and 0 unless code == GRPC_OK; valid only during the callback), for a caller that decodes
 * only the items that changed since its last call (the PLEG). */
typedef void (*cri_raw_cb)(
    int code, const char *message, const uint8_t *msg, size_t len, void *arg);
struct cri_call *cri_list_pod_sandbox_raw(struct cri *, const Runtime__V1__ListPodSandboxRequest *,
    int64_t timeout_ms, cri_raw_cb, void *arg, const void *owner);
struct cri_call *cri_list_containers_raw(struct cri *, const Runtime__V1__ListContainersRequest *,
    int64_t timeout_ms, cri_raw_cb, void *arg, const void *owner);
/* Walks the protobuf wire format of msg and calls cb with the bytes of each length-delimited
 * record of field number field (each item of a repeated message field, in order); other
 * fields are skipped. Returns 0, or -1 when msg is malformed (truncated, a bad wire type or
 * field number) or cb returned -1. Pure. */
int cri_wire_items(const uint8_t *msg, size_t len, uint32_t field,
    int (*cb)(const uint8_t *item, size_t len, void *arg), void *arg);
/* The value of the length-delimited field number field of msg (a string, bytes or a nested
 * message; of several, the last, as protobuf reads a singular field): 1 with *val and
 * *vlen set, 0 when msg has no such field, -1 when msg is malformed. For the few fields a
 * caller needs from a big list answer, without decoding it. Pure. */
int cri_wire_bytes(
    const uint8_t *msg, size_t len, uint32_t field, const uint8_t **val, size_t *vlen);
/* The same for n fields in one walk of msg: val[k] and vlen[k] for fields[k] (NULL and 0
 * when absent). Returns how many were found, or -1 when msg is malformed. Pure. */
int cri_wire_fields(const uint8_t *msg, size_t len, const uint32_t *fields, size_t n,
    const uint8_t **val, size_t *vlen);
/* The hash a relist keys a list record by (ListPodSandbox's items, ListContainers'
 * containers), to decode only records that are not the previous relist's. Only the fields
 * whose numbers are set in the bit mask keys are hashed (each with its key and length): the
 * record's ID and state. The CRI changes nothing else of a listed sandbox or container while
 * its ID lasts (its metadata, image, creation time, labels and annotations are those it was
 * created with), and the kubelet's relist compares states only. The rest is not read: the
 * walk stops at the first field past the last key field when the fields up to it came in
 * field order, as every runtime's protobuf writes them (a record seen out of order by then is
 * walked to its end). The maps are the bulk of a record, and Go's protobuf writes them in a
 * new order every time. A malformed msg, as far as it is walked, is hashed as its bytes. Pure. */
uint64_t cri_wire_hash(const uint8_t *msg, size_t len, uint64_t seed, uint32_t keys);

/* ImageService */
typedef void (*cri_pull_image_cb)(
    int code, const char *message, const Runtime__V1__PullImageResponse *resp, void *arg);
struct cri_call *cri_pull_image(struct cri *, const Runtime__V1__PullImageRequest *,
    int64_t timeout_ms, cri_pull_image_cb, void *arg, const void *owner);

typedef void (*cri_image_status_cb)(
    int code, const char *message, const Runtime__V1__ImageStatusResponse *resp, void *arg);
struct cri_call *cri_image_status(struct cri *, const Runtime__V1__ImageStatusRequest *,
    int64_t timeout_ms, cri_image_status_cb, void *arg, const void *owner);

typedef void (*cri_list_images_cb)(
    int code, const char *message, const Runtime__V1__ListImagesResponse *resp, void *arg);
struct cri_call *cri_list_images(struct cri *, const Runtime__V1__ListImagesRequest *,
    int64_t timeout_ms, cri_list_images_cb, void *arg, const void *owner);

typedef void (*cri_remove_image_cb)(
    int code, const char *message, const Runtime__V1__RemoveImageResponse *resp, void *arg);
struct cri_call *cri_remove_image(struct cri *, const Runtime__V1__RemoveImageRequest *,
    int64_t timeout_ms, cri_remove_image_cb, void *arg, const void *owner);

typedef void (*cri_image_fs_info_cb)(
    int code, const char *message, const Runtime__V1__ImageFsInfoResponse *resp, void *arg);
struct cri_call *cri_image_fs_info(struct cri *, const Runtime__V1__ImageFsInfoRequest *,
    int64_t timeout_ms, cri_image_fs_info_cb, void *arg, const void *owner);

#endif
