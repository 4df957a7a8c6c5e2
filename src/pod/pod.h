/* pod.h — the v1.Pod model: compact C structs, decode (JSON, YAML), validate, and one
 * immutable, reference-counted pod shared by every module that keeps it.
 *
 * Every string is owned by the struct that holds it (NULL when absent). Lists are a pointer
 * plus a count. Times are Unix seconds (0 = unset), as metav1.Time has second precision.
 * Quantities are int64 milli-units ("100m" cpu = 100, "1Gi" = 1073741824000).
 * The model is plain data on purpose: pure functions (actions, podstatus) read it directly.
 *
 * Sharing: a pod is decoded once (refs 1, held by the decoder's caller) and then handed on by
 * reference: whoever keeps it takes pod_ref() and drops it with pod_unref(); the last
 * pod_unref() frees it. A shared pod is never written (const struct pod * everywhere it is
 * kept): an update is a new pod that replaces the old one. Only the sole holder may still
 * change a pod it decoded (pod_exclusive), before handing it on. Related: quantity.h,
 * rfc3339.h, hash.h.
 */
#ifndef KLET_POD_H
#define KLET_POD_H

#include <stddef.h>
#include <stdint.h>

#include "core/lists.h"
#include "core/quantity.h"

/* Limits on outside documents. */
/* 4 MiB: what the API server can store and send (its 3 MiB request limit plus metadata). */
#define POD_MAX_DOC_BYTES (4 * 1024 * 1024)
#define POD_MAX_DEPTH     64

/* An optional integer: set is 0 when the field was absent. */
struct opt_i64 {
	int     set;
	int64_t v;
};

/* An optional boolean. */
struct opt_bool {
	int set;
	int v;
};

/* IntOrString (probe and hook ports). */
struct int_or_str {
	int     is_str;
	int32_t num;
	char   *str;
};

struct resources {
	struct resource_list requests;
	struct resource_list limits;
};

/* ---- handlers (probes and lifecycle hooks) ---- */

enum handler_kind {
	HANDLER_NONE = 0,
	HANDLER_EXEC,
	HANDLER_HTTP_GET,
	HANDLER_TCP_SOCKET,
	HANDLER_GRPC,
	HANDLER_SLEEP,
};

struct http_header {
	char *name;
	char *value;
};

struct handler {
	enum handler_kind   h_kind;
	struct strv         h_exec;   /* exec.command */
	char               *h_host;   /* httpGet.host, tcpSocket.host */
	char               *h_path;   /* httpGet.path */
	char               *h_scheme; /* "HTTP" (default) or "HTTPS" */
	struct int_or_str   h_port;   /* httpGet.port, tcpSocket.port */
	struct http_header *h_headers;
	size_t              h_nheaders;
	int32_t             h_grpc_port;
	char               *h_grpc_service; /* NULL: "" */
	int64_t             h_sleep_seconds;
	int                 h_nkinds; /* handler kinds the document gave (valid: 1) */
};

/* API defaults applied at decode: timeout 1, period 10, success 1, failure 3. */
struct probe {
	struct handler pr_handler;
	int32_t        pr_initial_delay;
	int32_t        pr_timeout;
	int32_t        pr_period;
	int32_t        pr_success_threshold;
	int32_t        pr_failure_threshold;
	struct opt_i64 pr_termination_grace; /* probe-level terminationGracePeriodSeconds */
};

/* ---- env ---- */

enum env_source {
	ENV_VALUE = 0,          /* value (may be NULL/"" ) */
	ENV_FIELD_REF,          /* ref_key = fieldPath, ref_api_version */
	ENV_RESOURCE_FIELD_REF, /* ref_key = resource, ref_container, ref_divisor_milli */
	ENV_CONFIG_MAP_KEY_REF, /* ref_name, ref_key, optional */
	ENV_SECRET_KEY_REF,     /* ref_name, ref_key, optional; never printed */
};

struct env_var {
	char           *name;
	enum env_source src;
	char           *value;
	char           *ref_name;
	char           *ref_key;
	char           *ref_container;
	char           *ref_api_version;
	int64_t         ref_divisor_milli; /* 0: unset (means 1) */
	int             optional;
};

struct env_from {
	char *prefix;
	int   is_secret; /* 0: configMapRef, 1: secretRef */
	char *name;
	int   optional;
};

/* ---- ports, mounts, security ---- */

enum protocol { PROTO_TCP = 0, PROTO_UDP, PROTO_SCTP };

struct container_port {
	char         *name;
	int32_t       container_port;
	int32_t       host_port;
	enum protocol protocol;
	char         *host_ip;
};

enum mount_propagation { PROP_NONE = 0, PROP_HOST_TO_CONTAINER, PROP_BIDIRECTIONAL };

struct volume_mount {
	char                  *name;
	char                  *mount_path;
	char                  *sub_path;
	int                    read_only;
	enum mount_propagation propagation;
};

struct seccomp_profile {
	char *type; /* RuntimeDefault, Unconfined, Localhost; NULL: unset */
	char *localhost;
};

struct security_context { /* container-level */
	struct opt_bool        privileged;
	struct opt_i64         run_as_user;
	struct opt_i64         run_as_group;
	struct opt_bool        run_as_non_root;
	struct opt_bool        read_only_root_fs;
	struct opt_bool        allow_privilege_escalation;
	struct strv            cap_add;
	struct strv            cap_drop;
	struct seccomp_profile seccomp;
	char                  *proc_mount;
};

struct pod_security_context {
	struct opt_i64         run_as_user;
	struct opt_i64         run_as_group;
	struct opt_bool        run_as_non_root;
	struct opt_i64         fs_group;
	int64_t               *supplemental_groups;
	size_t                 nsupplemental_groups;
	struct kvlist          sysctls;
	struct seccomp_profile seccomp;
};

/* ---- containers ---- */

enum pull_policy { PULL_ALWAYS = 0, PULL_IF_NOT_PRESENT, PULL_NEVER };
enum restart_policy { RESTART_ALWAYS = 0, RESTART_ON_FAILURE, RESTART_NEVER };
enum term_msg_policy { TERM_MSG_FILE = 0, TERM_MSG_FALLBACK_TO_LOGS };
enum container_kind { CK_APP = 0, CK_INIT, CK_EPHEMERAL };

struct container {
	enum container_kind      c_kind;
	char                    *c_name;
	char                    *c_image;
	struct strv              c_command;
	struct strv              c_args;
	char                    *c_working_dir;
	struct env_var          *c_env;
	size_t                   c_nenv;
	struct env_from         *c_env_from;
	size_t                   c_nenv_from;
	struct container_port   *c_ports;
	size_t                   c_nports;
	struct resources         c_resources;
	struct volume_mount     *c_mounts;
	size_t                   c_nmounts;
	struct probe            *c_liveness; /* NULL: none */
	struct probe            *c_readiness;
	struct probe            *c_startup;
	struct handler          *c_post_start; /* NULL: none */
	struct handler          *c_pre_stop;
	char                    *c_term_msg_path; /* default /dev/termination-log */
	enum term_msg_policy     c_term_msg_policy;
	enum pull_policy         c_pull_policy; /* API default rule applied at decode */
	struct security_context *c_security;    /* NULL: none */
	int                      c_stdin;
	int                      c_stdin_once;
	int                      c_tty;
	/* Init containers only: restartPolicy Always makes a sidecar. */
	int                 c_has_restart_policy;
	enum restart_policy c_restart_policy;
	char               *c_target_container; /* ephemeral only */
};

/* ---- volumes ---- */

enum volume_kind {
	VOL_OTHER = 0,
	VOL_EMPTY_DIR,
	VOL_HOST_PATH,
	VOL_CONFIG_MAP,
	VOL_SECRET,
	VOL_PROJECTED,
	VOL_DOWNWARD_API,
	VOL_PVC,
	VOL_CSI,
	VOL_NFS,
	VOL_EPHEMERAL,
};

struct key_to_path {
	char   *key; /* downwardAPI items: fieldRef.fieldPath (NULL for a resourceFieldRef) */
	char   *path;
	int32_t mode; /* -1: unset */
	/* downwardAPI items: resourceFieldRef (resource NULL when the item has none) */
	char   *res_container;
	char   *resource;
	int64_t res_divisor_milli; /* 0: unset (means 1) */
};

/* One source of a projected volume. */
enum projection_kind {
	PROJ_OTHER = 0, /* clusterTrustBundle and anything newer: kind name in p_name */
	PROJ_CONFIG_MAP,
	PROJ_SECRET,
	PROJ_DOWNWARD_API,
	PROJ_SA_TOKEN,
};

struct volume_projection {
	enum projection_kind p_kind;
	char                *p_name;  /* configMap / secret name */
	struct key_to_path  *p_items; /* configMap, secret, downwardAPI */
	size_t               p_nitems;
	int                  p_optional;
	char                *p_audience;   /* serviceAccountToken ("" / NULL: the API's) */
	int64_t              p_expiration; /* serviceAccountToken seconds (default 3600) */
	char                *p_path;       /* serviceAccountToken file */
};

struct volume {
	char            *v_name;
	enum volume_kind v_kind;
	char            *v_kind_name; /* the JSON key, for errors about VOL_OTHER */
	/* emptyDir */
	char   *v_medium;           /* "" or "Memory" */
	int64_t v_size_limit_milli; /* 0: unset */
	/* hostPath */
	char *v_path;
	char *v_host_path_type;
	/* configMap, secret (v_source = name / secretName), pvc (claimName), nfs (server:path) */
	char               *v_source;
	struct key_to_path *v_items;
	size_t              v_nitems;
	int32_t             v_default_mode; /* -1: unset */
	int                 v_optional;
	int                 v_read_only;
	int                 v_nsources; /* volume sources the document gave (valid: 1) */
	/* projected */
	struct volume_projection *v_projections;
	size_t                    v_nprojections;
};

struct toleration {
	char          *key;
	char          *op; /* Equal, Exists */
	char          *value;
	char          *effect;
	struct opt_i64 toleration_seconds;
};

/* Required node affinity (spec.affinity.nodeAffinity.requiredDuringSchedulingIgnored...):
 * the terms are ORed, the requirements of a term ANDed. */
enum ns_op { NS_IN = 0, NS_NOT_IN, NS_EXISTS, NS_DOES_NOT_EXIST, NS_GT, NS_LT };

struct ns_requirement {
	char       *key;
	enum ns_op  op;
	struct strv values;
};

struct ns_term {
	struct ns_requirement *exprs; /* matchExpressions: on the node's labels */
	size_t                 nexprs;
	struct ns_requirement *fields; /* matchFields: metadata.name only */
	size_t                 nfields;
};

struct node_affinity {
	struct ns_term *terms;
	size_t          nterms;
};

struct owner_ref {
	char *api_version;
	char *kind;
	char *name;
	char *uid;
	int   controller;
};

enum dns_policy { DNS_CLUSTER_FIRST = 0, DNS_CLUSTER_FIRST_WITH_HOST_NET, DNS_DEFAULT, DNS_NONE };

struct dns_config {
	struct strv   nameservers;
	struct strv   searches;
	struct kvlist options; /* name -> value (value may be NULL) */
};

/* ---- status (the API's, for merges and reporting) ---- */

enum pod_phase { PHASE_PENDING = 0, PHASE_RUNNING, PHASE_SUCCEEDED, PHASE_FAILED, PHASE_UNKNOWN };
enum cond_status { COND_TRUE = 0, COND_FALSE, COND_UNKNOWN };
enum cstate_kind { CSTATE_NONE = 0, CSTATE_WAITING, CSTATE_RUNNING, CSTATE_TERMINATED };

struct container_state {
	enum cstate_kind kind;
	char            *reason; /* waiting, terminated */
	char            *message;
	int32_t          exit_code; /* terminated */
	int32_t          signal;
	int64_t          started_at; /* running, terminated */
	int64_t          finished_at;
	char            *container_id; /* terminated: RUNTIME://ID */
};

struct container_status {
	char                  *name;
	struct container_state state;
	struct container_state last_state;
	int                    ready;
	struct opt_bool        started;
	int32_t                restart_count;
	char                  *image;
	char                  *image_id;
	char                  *container_id; /* RUNTIME://ID */
};

struct pod_condition {
	char            *type;
	enum cond_status status;
	int64_t          last_probe_time;
	int64_t          last_transition_time;
	char            *reason;
	char            *message;
};

enum qos_class { QOS_BEST_EFFORT = 0, QOS_BURSTABLE, QOS_GUARANTEED };

struct pod_status {
	enum pod_phase           phase;
	struct pod_condition    *conditions;
	size_t                   nconditions;
	char                    *message;
	char                    *reason;
	char                    *host_ip;
	char                    *pod_ip;
	struct strv              pod_ips;
	int64_t                  start_time;
	struct container_status *init_statuses;
	size_t                   ninit_statuses;
	struct container_status *statuses;
	size_t                   nstatuses;
	struct container_status *ephemeral_statuses;
	size_t                   nephemeral_statuses;
	enum qos_class           qos_class;
	int                      has_qos_class;
};

/* ---- the pod ---- */

struct pod {
	int refs; /* references (pod_ref / pod_unref); 1 after decode */

	/* metadata */
	char             *name;
	char             *ns;
	char             *uid;
	char             *resource_version;
	int64_t           generation;
	struct kvlist     labels;
	struct kvlist     annotations;
	int64_t           creation_ts;
	int64_t           deletion_ts;    /* 0: not being deleted */
	struct opt_i64    deletion_grace; /* deletionGracePeriodSeconds */
	struct owner_ref *owners;
	size_t            nowners;

	/* spec */
	struct container   *containers;
	size_t              ncontainers;
	struct container   *init_containers;
	size_t              ninit_containers;
	struct container   *ephemeral_containers;
	size_t              nephemeral_containers;
	struct volume      *volumes;
	size_t              nvolumes;
	enum restart_policy restart_policy;    /* default Always */
	struct opt_i64      termination_grace; /* terminationGracePeriodSeconds (API default 30) */
	struct opt_i64      active_deadline;
	int                 host_network;
	int                 host_pid;
	int                 host_ipc;
	int                 share_process_ns;
	char               *hostname;
	char               *subdomain;
	enum dns_policy     dns_policy;
	struct dns_config  *dns_config; /* NULL: none */
	char               *node_name;
	struct kvlist       node_selector;
	struct toleration  *tolerations;
	size_t              ntolerations;
	struct node_affinity        *node_affinity; /* NULL: no required node affinity */
	struct resource_list         overhead;      /* spec.overhead (RuntimeClass podFixed) */
	char                        *os_name;       /* spec.os.name; NULL: unset */
	char                        *runtime_class;
	char                        *service_account;
	char                        *scheduler_name;
	char                        *priority_class;
	int32_t                      priority;
	struct pod_security_context *security; /* NULL: none */
	struct strv                  image_pull_secrets;
	struct kvlist                host_aliases; /* ip -> comma-separated hostnames */

	/* status (as read from the API, for merges) */
	struct pod_status status;
};

/* Decoding. On failure: returns NULL and writes a one-line reason to err (errlen bytes),
 * e.g. "spec.containers[0].ports[1].containerPort: expected an integer, got string". Unknown
 * fields are ignored; null means absent. Documents over POD_MAX_DOC_BYTES or POD_MAX_DEPTH
 * deep are refused. The caller holds the one reference (pod_unref drops it). Decode does not
 * validate, except that enum values (restartPolicy, protocol, dnsPolicy, imagePullPolicy, ...)
 * must be spelled as the API does, an env var has exactly one valueFrom source and an envFrom
 * exactly one of configMapRef/secretRef; kind, when present, must be "Pod".
 * API defaults applied: restartPolicy Always, dnsPolicy ClusterFirst, termination_grace 30
 * (set=1), schedulerName default-scheduler; per container terminationMessagePath
 * /dev/termination-log, policy File, imagePullPolicy Always for ":latest" or no tag without
 * a digest, else IfNotPresent; probes timeout 1, period 10, success 1, failure 3 (0 means
 * unset); httpGet scheme HTTP and path "/"; port protocol TCP; fieldRef apiVersion v1; app and
 * init containers' missing requests copied from their limits; with hostNetwork, hostPort =
 * containerPort where it is 0; imagePullPolicy Always also for "name:latest@digest"; a volume
 * with no source is an emptyDir; configMap/secret/projected/downwardAPI defaultMode 0644.
 * metadata.namespace is not defaulted (NULL when absent). YAML is read the way
 * sigs.k8s.io/yaml reads it (see json.h); only its first document. */
struct pod *pod_from_json(const char *buf, size_t len, char *err, size_t errlen);
/* The same from a parsed value (the pod object inside a larger document); the value is
 * only read. */
struct json;
struct pod *pod_from_value(const struct json *root, char *err, size_t errlen);
/* Decodes a PodStatus object (what podstatus_to_json_string writes) into out (overwritten;
 * free with pod_status_clear). Returns 0, or -1 with err set and out empty. */
int pod_status_from_json(
    const char *buf, size_t len, struct pod_status *out, char *err, size_t errlen);
struct pod *pod_from_yaml(const char *buf, size_t len, char *err, size_t errlen);

/* Validation: 0 if valid; else -1 with the first error as "field.path: reason" in err. */
int pod_validate(const struct pod *, char *err, size_t errlen);
/* The names of a pod that reach file system paths, in their API formats, so that no path
 * built from them leaves its base directory: metadata.uid (1 to 128 of [A-Za-z0-9._-],
 * beginning with a letter or digit: the API server's RFC 4122 UUIDs, the static pods'
 * hashes), metadata.namespace (DNS-1123 label), metadata.name (DNS-1123 subdomain), container
 * and volume names (DNS-1123 labels). 0, or -1 with "field: reason" in err. podconfig's
 * admission refuses a pod that fails it. */
int pod_validate_names(const struct pod *, char *err, size_t errlen);
/* 1 when uid has the format above. */
int pod_uid_ok(const char *uid);
/* 1 when key is a ConfigMap / Secret key (the API's IsConfigMapKey: at most 253 of
 * [-._a-zA-Z0-9], not "." nor "..", not beginning with ".."). */
int pod_config_key_ok(const char *key);

/* References. pod_ref takes one more reference and returns p (NULL: NULL). pod_unref drops
 * one; the last frees the pod and everything in it (NULL is a no-op). Neither may be given a
 * pod that was not decoded (refs 0, e.g. a struct on the stack). */
const struct pod *pod_ref(const struct pod *p);
void              pod_unref(const struct pod *p);
/* p, writable, when the caller holds its only reference; NULL when it is shared. */
struct pod *pod_exclusive(const struct pod *p);

/* pod_status_clear frees a status's members only. */
void pod_status_clear(struct pod_status *);
/* Frees a required node affinity (NULL: no-op). */
void node_affinity_free(struct node_affinity *);
void container_status_clear(struct container_status *);
void container_state_clear(struct container_state *);

/* Look-ups. NULL when absent. */
const struct container *pod_find_container(const struct pod *, const char *name);

const char *pod_phase_name(enum pod_phase);
const char *restart_policy_name(enum restart_policy);

/* A sidecar: an init container with restartPolicy Always. */
int container_is_sidecar(const struct container *);

#endif
