/* ctl.h — podctl's server inside kletd: read-only inspection over a local unix socket.
 *
 * Protocol (CTL_PROTO_VERSION): one JSON request per line, e.g.
 *   {"v":1,"cmd":"get_pods","ns":"default"}
 * one JSON reply per line:
 *   {"v":1,"ok":true,"cmd":"get_pods","data":...}   or   {"v":1,"ok":false,"error":"..."}
 * Commands: version, get_pods (ns optional), describe_pod (ns, name), get_containers,
 * events (watch: true keeps the connection and sends {"v":1,"event":{...}} lines as events
 * are recorded), status. No command changes daemon state.
 * Limits: a request line over CTL_MAX_REQUEST bytes gets an error and the connection is
 * closed; a client whose unsent output exceeds the output bound (CTL_MAX_OUTPUT, or
 * deps->max_output) is dropped: the loop never waits for a client.
 * Access: the socket is mode 0660, owner root, group --podctl-group (root only when
 * unset); each peer's credentials (SO_PEERCRED) must be root, the daemon's own uid, or a
 * member of that group (primary or supplementary), else it gets an error line and is closed.
 */
#ifndef KLET_CTL_H
#define KLET_CTL_H

#include <stddef.h>
#include <stdint.h>

#include <yajl/yajl_gen.h>

struct event_base;
struct klet_config;
struct loop;
struct cri;
struct podcache;
struct podworkers;
struct kuberuntime;
struct events;
struct store;
struct pleg;
struct prober;
struct ctl;

#define CTL_PROTO_VERSION  1
#define CTL_MAX_REQUEST    (64 * 1024)
#define CTL_MAX_OUTPUT     (4 * 1024 * 1024)
/* Connected clients served at once; more are answered "too many clients" and closed, and
 * past CTL_MAX_REFUSING of those the socket stops accepting until one leaves. */
#define CTL_MAX_CLIENTS    128
#define CTL_MAX_REFUSING   64
/* A client that sends nothing for this long is closed (an events watcher is not). */
#define CTL_IDLE_TIMEOUT_S 30

/* What the API side can tell (all optional). Strings borrowed for the call. */
struct ctl_api_info {
	int         configured; /* --kubeconfig given */
	int         connected;
	const char *watch_state;       /* "idle", "listing", "watching" or NULL */
	const char *resource_version;  /* watch position or NULL */
	int64_t     last_event_age_ms; /* -1: none yet */
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
	void          *api_arg;
	size_t         max_output;   /* 0: CTL_MAX_OUTPUT */
	struct prober *prober;       /* probe results (READY, describe); may be NULL */
	const int64_t *recovered_ms; /* ms from start to recovered, -1 before; NULL */
};

/* Creates the socket (replacing a stale one) and starts accepting. Returns NULL with a
 * one-line reason in err (e.g. an unknown --podctl-group, a path that cannot be bound). */
struct ctl *ctl_new(const struct ctl_deps *, char *err, size_t errlen);
/* Closes every client and the socket and removes the socket file. NULL is a no-op. */
void ctl_free(struct ctl *);
/* Number of connected clients. */
size_t ctl_clients(const struct ctl *);

/* ---- pure helpers (tests) ---- */

/* A parsed request. cmd and the strings point into storage owned by the struct. */
struct ctl_request {
	int  v;
	char cmd[32];
	char ns[254];
	char name[254];
	int  all_ns;
	int  watch;
};
/* Parses one request line (without its newline). Returns 0, or -1 with a one-line reason
 * in err: invalid JSON, not an object, missing/unknown cmd, unsupported v, wrong types. */
int ctl_parse_request(
    const char *line, size_t len, struct ctl_request *out, char *err, size_t errlen);
/* The kubectl-style STATUS column of a pod from its generated status: "Terminating" when
 * deleting or terminating, a container's waiting reason (CrashLoopBackOff, ErrImagePull,
 * ContainerCreating, ...), terminated reason, "Init:..." for init containers, else phase.
 * Returns buf, a static string or a status-owned string. */
struct pod;
struct pod_status;
const char *ctl_pod_status_reason(
    const struct pod *, const struct pod_status *, int terminating, char *buf, size_t len);
/* kubectl's short age ("45s", "3m12s", "5h", "2d3h", ...) of secs into buf; "<unknown>"
 * for a negative value. Returns buf. */
const char *ctl_format_age(int64_t secs, char *buf, size_t len);
/* Writes an error reply line (without newline) into gen. */
void ctl_gen_error(yajl_gen, const char *msg);

#endif
