/* internal.h — internals shared by the files of src/kuberuntime/ and their unit tests:
 * the pure CRI config builders (sandbox, DNS, container) and protobuf-c helpers.
 * Messages built here are plain malloc'd protobuf-c structs: free them with kr_msg_free. */
#ifndef KLET_KUBERUNTIME_INT_H
#define KLET_KUBERUNTIME_INT_H

#include <stddef.h>
#include <stdint.h>

#include "api.pb-c.h"
#include "pod/pod.h"

struct volumes;

/* What the builders need from the node's configuration. */
struct kr_env {
	const char          *root_dir;    /* pods/UID/... */
	const char          *logs_dir;    /* LOGS/NS_NAME_UID */
	const char          *resolv_conf; /* NULL or "": no host resolver file */
	const char          *cluster_domain;
	const struct strv   *cluster_dns;
	const struct kvlist *runtime_handlers; /* runtimeClassName -> handler */
	/* The cluster's RuntimeClasses (when joined): 1 and the handler, 0 unknown; or NULL. */
	int (*rc_lookup)(const char *name, const char **handler, void *arg);
	void       *rc_arg;
	const char *cgroup_root;                                               /* "" : none */
	const char *(*pod_cgroup)(void *, const struct pod *, char *, size_t); /* or NULL */
	int (*pod_cgroup_make)(void *, const struct pod *);                    /* or NULL */
	void           *pod_cgroup_arg;
	const char     *node_name;
	const char     *host_ip;
	int64_t         node_cpu_milli; /* allocatable defaults for resourceFieldRef */
	int64_t         node_mem_milli;
	struct volumes *volumes; /* volumes: configMap/secret objects; NULL: none */
};

/* protobuf-c helpers. */
void *kr_msg_new(const ProtobufCMessageDescriptor *);
void  kr_msg_free(void *msg); /* NULL is a no-op */
void  kr_strv_add(char ***v, size_t *n, const char *s);
/* Sets key in a map<string,string> field (replacing an existing key). */
void        kr_map_set(void ***entries, size_t *n, const ProtobufCMessageDescriptor *entry_desc,
           const char *key, const char *value);
const char *kr_map_get(void *const *entries, size_t n, const char *key);

/* Host resolver configuration (resolv.conf). */
struct kr_resolv {
	struct strv servers;
	struct strv searches;
	struct strv options;
};
void kr_resolv_parse(const char *text, struct kr_resolv *out);
void kr_resolv_clear(struct kr_resolv *);

/* The DNS config of the sandbox per dnsPolicy. host may be NULL (no resolver file).
 * *fallback is set to 1 when ClusterFirst had to fall back to Default (no cluster DNS). */
Runtime__V1__DNSConfig *kr_dns_config(
    const struct kr_env *, const struct pod *, const struct kr_resolv *host, int *fallback);

/* The runtime handler for pod's runtimeClassName (the kubelet's LookupRuntimeHandler): the
 * cluster's RuntimeClass when joined, else --runtime-handler's mapping: 0 and *handler (""
 * for none), or -1 with err filled with the kubelet's NotFound error when the class is
 * unknown. */
int kr_runtime_handler(
    const struct kr_env *, const struct pod *, const char **handler, char *err, size_t errlen);

/* The sandbox config (reads env->resolv_conf). NULL with err filled on failure. */
Runtime__V1__PodSandboxConfig *kr_sandbox_config(
    const struct kr_env *, const struct pod *, uint32_t attempt, char *err, size_t errlen);
/* The pod's hostname as the kubelet derives it (at most 63 characters) into buf. */
const char    *kr_pod_hostname(const struct pod *, char *buf, size_t len);
enum qos_class kr_pod_qos(const struct pod *);
/* Container seccomp (c) over the pod's (p); Unconfined when neither is set. */
Runtime__V1__SecurityProfile *kr_seccomp_profile(
    const struct seccomp_profile *c, const struct seccomp_profile *p);
/* Network / PID / IPC namespace modes of the pod's containers. */
Runtime__V1__NamespaceOption *kr_namespaces(const struct pod *);

/* Everything startContainer needs that does not come from the pod spec. */
struct kr_cinput {
	int32_t            restart_count;
	const char        *image_ref; /* resolved image (ImageStatus id) or spec image */
	const char        *pod_ip;    /* "" when none */
	const struct strv *pod_ips;   /* may be NULL */
};

/* The container config; creates the directories and files it mounts (emptyDir, hostPath
 * of the *OrCreate types, the termination-message file, the container log dir).
 * NULL with err filled (a CreateContainerConfigError message) on failure. */
Runtime__V1__ContainerConfig *kr_container_config(const struct kr_env *, const struct pod *,
    const struct container *, const struct kr_cinput *, char *err, size_t errlen);
/* The value of one env var (downward API and $(VAR) expansion against the ones before it).
 * Returns 0 with *out (malloc'd, or NULL to skip the var), or -1 with err filled. */
int kr_env_value(const struct kr_env *, const struct pod *, const struct container *,
    const struct env_var *, const struct kr_cinput *, char **out, char *err, size_t errlen);
/* Kubernetes $(VAR) expansion: $$ -> $, $(NAME) -> value when NAME is in env (n pairs),
 * else kept literally. Returns a malloc'd string. */
char *kr_expand(const char *s, char *const *keys, char *const *vals, size_t n);

/* Labels and annotation names the kubelet puts on sandboxes and containers. */
#define KR_LABEL_POD_NAME         "io.kubernetes.pod.name"
#define KR_LABEL_POD_NAMESPACE    "io.kubernetes.pod.namespace"
#define KR_LABEL_POD_UID          "io.kubernetes.pod.uid"
#define KR_LABEL_CONTAINER_NAME   "io.kubernetes.container.name"
#define KR_ANN_HASH               "io.kubernetes.container.hash"
#define KR_ANN_RESTART_COUNT      "io.kubernetes.container.restartCount"
#define KR_ANN_TERM_MSG_PATH      "io.kubernetes.container.terminationMessagePath"
#define KR_ANN_TERM_MSG_POLICY    "io.kubernetes.container.terminationMessagePolicy"
#define KR_ANN_POD_DELETION_GRACE "io.kubernetes.pod.deletionGracePeriod"
#define KR_ANN_POD_TERM_GRACE     "io.kubernetes.pod.terminationGracePeriod"
#define KR_ANN_PRESTOP            "io.kubernetes.container.preStopHandler"
#define KR_ANN_PORTS              "io.kubernetes.container.ports"

/* ---- the machines (kuberuntime.c, container.c) ---- */

#include "kuberuntime/kuberuntime.h"
#include "logic/actions.h"
#include "pod/runtime.h"

struct event;
struct event_base;
struct cri;
struct backoff;
struct kr_kop;
struct kr_start;

/* The manager's settings the operations below read: owned by kuberuntime.c (which fills
 * it once) and handed to each operation as an argument; it must outlive them. The
 * operations know nothing of the machine that started them: what they learn comes back
 * through their callbacks. */
struct kr_ctx {
	struct event_base *base;
	struct cri        *cri;
	struct events     *events;
	struct kr_env     *env;
	struct backoff    *crash_bo;
	struct backoff    *pull_bo;
	int64_t            timeout_ms; /* runtime calls */
	int64_t            pull_timeout_ms;
	struct kr_intents  intents; /* all NULL: none kept */
};

/* Intent records around a create, kept through the context's intents (no-ops when
 * kuberuntime_set_intents gave none). has() returns 1 when that exact intent is recorded. */
void kr_intent_put(
    const struct kr_ctx *, const char *uid, const char *kind, const char *name, int64_t attempt);
void kr_intent_del(
    const struct kr_ctx *, const char *uid, const char *kind, const char *name, int64_t attempt);
int kr_intent_has(
    const struct kr_ctx *, const char *uid, const char *kind, const char *name, int64_t attempt);

/* An operation's progress for podctl (tmux's job update callback): call is the CRI call
 * or hook now in flight ("PullImage", "postStart hook", ...; NULL: none), target the
 * container name. */
typedef void (*kr_call_fn)(const char *call, const char *target, void *arg);

/* killContainer: preStop hook (when spec has one and grace > 0), then StopContainer with
 * the remaining grace (override >= 0 replaces it), never below KR_MIN_GRACE_SECONDS.
 * pod and spec may be NULL (known only from the runtime); pod and spec are borrowed and
 * must outlive the op. pod_ip is for httpGet hooks. done(rc, err, arg) runs once on a
 * later turn; every CRI call uses owner. */
struct kr_kop *kr_kill_start(struct kr_ctx *, const void *owner, const struct pod *,
    const struct container *spec, const char *container_id, const char *name, const char *pod_ip,
    const char *message, int64_t grace_override, void (*done)(int rc, const char *err, void *arg),
    void *arg);
/* Frees the op; its calls must already be cancelled (by owner) or finished. Cancels its
 * timers and HTTP requests. NULL is a no-op. */
void kr_kill_free(struct kr_kop *);

/* startContainer: crash-loop backoff, image, config, CreateContainer, StartContainer,
 * postStart. Everything it reads is in the arguments (borrowed: they must outlive the
 * op); everything the caller keeps comes back in the result. */
struct kr_start_args {
	const struct pod                    *pod;
	const struct container              *c;
	const struct rt_pod_status          *rt;
	const char                          *sandbox_id;
	const Runtime__V1__PodSandboxConfig *sandbox_config;
	const char                          *pod_ip;
	const struct strv                   *pod_ips;
	int64_t pull_failed_ms; /* the last failed pull of c's image for this pod (monotonic);
	                         * 0: none */
};

enum kr_pull_outcome { KR_PULL_NONE = 0, KR_PULL_FAILED, KR_PULL_OK };

/* What a start hands back (strings owned by the op, valid during the done callback). */
struct kr_start_result {
	int                  rc;     /* 0 started; 1 skipped (backoff: not an error); -1 failed */
	const char          *err;    /* "REASON: message" when skipped or failed, else NULL */
	const char          *reason; /* the container's start error to record (ErrImagePull, ...) */
	const char          *message;        /*   and its message; both NULL: nothing to record */
	int                  clear_error;    /* 1: the container started, drop its start error */
	enum kr_pull_outcome pull;           /* a pull of c's image failed or succeeded */
	int64_t              pull_failed_ms; /* KR_PULL_FAILED: when (monotonic) */
	int64_t              resync_ms;      /* >= 0: resync the pod after this delay (backoff) */
};
typedef void (*kr_start_done_fn)(const struct kr_start_result *, void *arg);

/* Starts the operation; call (may be NULL) reports each call it makes, done runs once, on
 * a later turn, unless kr_start_free comes first. Every CRI call uses owner. Never NULL. */
struct kr_start *kr_start_container(struct kr_ctx *, const void *owner,
    const struct kr_start_args *, kr_call_fn call, kr_start_done_fn done, void *arg);
/* Frees the op; its calls must already be cancelled (by owner) or finished. NULL: no-op. */
void kr_start_free(struct kr_start *);

/* Runs a lifecycle handler in a container: exec (ExecSync), httpGet (http1), sleep.
 * done(rc, msg) once, on a later turn. */
struct kr_hook;
struct kr_hook *kr_hook_run(struct kr_ctx *, const void *owner, const struct pod *,
    const struct container *, const struct handler *, const char *container_id, const char *pod_ip,
    int64_t timeout_ms, void (*done)(int rc, const char *msg, void *arg), void *arg);
void            kr_hook_free(struct kr_hook *);

/* Reads one pod's status from the runtime (status_read.c). done(st, t0, err, arg)
 * runs once, on a later turn: st (sorted, newest first) may be taken by moving its members
 * out; t0 is when the read started (monotonic ms); err is NULL on success. Every call uses
 * owner; kr_rd_free after cri_cancel_owner(owner) drops a read in flight. */
struct kr_rd;
struct kr_rd *kr_rd_start(struct kr_ctx *, const char *uid, const char *name, const char *ns,
    const void *owner,
    void (*done)(struct rt_pod_status *st, int64_t t0, const char *err, void *arg), void *arg);
void          kr_rd_free(struct kr_rd *);

/* Converts runtime answers into runtime.h data (status_read.c). */
void kr_rt_from_sandbox(struct rt_sandbox *, const Runtime__V1__PodSandboxStatus *);
void kr_rt_from_container(
    struct rt_container *, const Runtime__V1__ContainerStatus *, const char *sandbox_id);

/* The grace killContainer starts from before preStop (see kuberuntime_grace). */
int64_t kr_base_grace(const struct pod *);

#endif
