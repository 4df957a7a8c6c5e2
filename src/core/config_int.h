/* config_int.h — what config.c (flags) and config_file.c (the --config file) share: the
 * flags' ids, the one function that applies a value with a flag's checks, and the file's
 * fields read as settings (config_file.c reads, config.c applies). Not public. */
#ifndef KLET_CORE_CONFIG_INT_H
#define KLET_CORE_CONFIG_INT_H

#include <stddef.h>

struct klet_config;

enum opt_id {
	O_HELP = 'h',
	O_V = 'v',
	O_CONFIG = 256,
	O_KUBECONFIG,
	O_HOSTNAME_OVERRIDE,
	O_MANIFEST_PATH,
	O_RUNTIME_ENDPOINT,
	O_ROOT_DIR,
	O_MAX_PODS,
	O_NODE_LABELS,
	O_REGISTER_NODE,
	O_CLUSTER_DNS,
	O_CLUSTER_DOMAIN,
	O_POD_LOGS_DIR,
	O_RESOLV_CONF,
	O_FILE_CHECK,
	O_SYNC_FREQ,
	O_RUNTIME_TIMEOUT,
	O_LOGGING_FORMAT,
	O_LOG_FILE,
	O_CTL_SOCKET,
	O_CTL_GROUP,
	O_RUNTIME_HANDLER,
	O_VERSION,
	O_LOG_MAX_SIZE,
	O_LOG_MAX_FILES,
	O_LOG_MONITOR,
	O_CGROUP_ROOT,
	O_KUBE_RESERVED,
	O_SYSTEM_RESERVED,
	O_EVICTION_HARD,
	O_REGISTER_TAINTS,
	O_CGROUP_DRIVER,
	O_CGROUPS_PER_QOS,
	O_EVICTION_SOFT,
	O_EVICTION_SOFT_GRACE,
	O_EVICTION_MIN_RECLAIM,
	O_EVICTION_TRANSITION,
	O_EVICTION_MAX_GRACE,
	O_EVICTION_MONITOR,
	O_BOOTSTRAP_KUBECONFIG,
	O_ROTATE_CERTIFICATES,
	O_ADDRESS,
	O_PORT,
	O_HEALTHZ_ADDRESS,
	O_HEALTHZ_PORT,
	O_READ_ONLY_PORT,
	O_TLS_CERT,
	O_TLS_KEY,
	O_CLIENT_CA,
	O_ANONYMOUS_AUTH,
	O_AUTHN_WEBHOOK,
	O_AUTHZ_MODE,
	O_MAX_STREAMS,
	O_STREAMING_IDLE,
	O_IMAGE_GC_HIGH,
	O_IMAGE_GC_LOW,
	O_IMAGE_GC_AGE,
	O_POD_INFRA_IMAGE,
	O_LOG_FILE_MAX_SIZE,
	O_SHUTDOWN_GRACE,
	O_SHUTDOWN_GRACE_CRITICAL,
	O_RUNTIME_WINDOW,
	O_IMAGE_GC_MAX_AGE,
	O_CONTAINER_GC_AGE,
	O_CONTAINER_GC_PER,
	O_CONTAINER_GC_MAX,
	/* Fields of the --config file only (no flag). */
	O_NODE_STATUS_FREQ,
	O_LEASE_DURATION,
};

/* Applies val to cfg as flag id would; what names the source in errors ("flag --port",
 * "field port in FILE"). 0, or -1 with a one-line reason in err. */
int config_apply(
    struct klet_config *cfg, int id, const char *val, const char *what, char *err, size_t errlen);
/* Formats a one-line reason into err; returns -1. */
int config_errf(char *err, size_t errlen, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
/* One field of the --config file as the flag it stands for: its id, its value as the flag's
 * text, and where it came from ("field port in FILE"), for config_apply. */
struct config_setting {
	int   id;
	char *val;
	char *what;
};

struct config_settings {
	struct config_setting *v;
	size_t                 n;
};

/* Reads the KubeletConfiguration file at path (YAML or JSON) into settings, in the file's
 * order, for config.c to apply. 0, or -1 with err set (out is then cleared). */
int  config_file_read(const char *path, struct config_settings *out, char *err, size_t errlen);
void config_settings_clear(struct config_settings *);

#endif
