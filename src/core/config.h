/* config.h — kletd's settings: defaults, a KubeletConfiguration-style YAML file, flags.
 * Precedence: flags > file > defaults. */
#ifndef KLET_CONFIG_H
#define KLET_CONFIG_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "core/lists.h"
#include "core/quantity.h"

/* CRI calls in flight at most by default (--runtime-request-window). */
#define CONFIG_RUNTIME_WINDOW 32

struct klet_config {
	char *config_file;              /* --config */
	char *kubeconfig;               /* --kubeconfig */
	char *bootstrap_kubeconfig;     /* --bootstrap-kubeconfig: TLS bootstrap credentials */
	int   rotate_certificates;      /* --rotate-certificates, rotateCertificates */
	char *hostname_override;        /* --hostname-override */
	char *node_name;                /* derived: override, else the host name, lower case */
	char *pod_manifest_path;        /* --pod-manifest-path, staticPodPath */
	char *runtime_endpoint;         /* --container-runtime-endpoint, containerRuntimeEndpoint */
	char *root_dir;                 /* --root-dir */
	char *pod_logs_dir;             /* --pod-logs-dir, podLogsDir */
	char *cgroup_root;              /* --cgroup-root, cgroupRoot: pods' cgroups go under
	                                 * CGROUP-ROOT/kubepods (default "/") */
	char         *resolv_conf;      /* --resolv-conf, resolvConf */
	char         *cluster_domain;   /* --cluster-domain, clusterDomain */
	struct strv   cluster_dns;      /* --cluster-dns, clusterDNS */
	struct kvlist node_labels;      /* --node-labels */
	struct kvlist runtime_handlers; /* --runtime-handler NAME=HANDLER: RuntimeClass map */
	int           max_pods;         /* --max-pods, maxPods */
	int           register_node;    /* --register-node, registerNode */
	int64_t       file_check_ms;    /* --file-check-frequency, fileCheckFrequency */
	int64_t       sync_ms;          /* --sync-frequency, syncFrequency */
	int64_t       runtime_timeout_ms; /* --runtime-request-timeout, runtimeRequestTimeout */
	unsigned      runtime_window;     /* --runtime-request-window: CRI calls in flight */
	int64_t       node_status_ms;     /* nodeStatusUpdateFrequency */
	int32_t       lease_duration_s;   /* nodeLeaseDurationSeconds */
	int64_t       log_max_size;       /* --container-log-max-size, containerLogMaxSize:
	                                   * bytes; < 0: no rotation */
	int     log_max_files;            /* --container-log-max-files, containerLogMaxFiles */
	int64_t log_monitor_ms;           /* containerLogMonitorInterval */
	int     verbosity;                /* -v, logging.verbosity */
	int     log_json;                 /* --logging-format, logging.format */
	char   *log_file;                 /* --log-file */
	int64_t log_file_max_mb;          /* --log-file-max-size: MB (1800); 0: unlimited */
	/* Graceful node shutdown (the kubelet's nodeshutdown manager); 0: off (default). */
	int64_t shutdown_grace_ms;          /* --shutdown-grace-period, shutdownGracePeriod */
	int64_t shutdown_grace_critical_ms; /* --shutdown-grace-period-critical-pods,
	                                     * shutdownGracePeriodCriticalPods */
	char *ctl_socket;                   /* --podctl-socket; default <root-dir>/podctl.sock */
	char *ctl_group;                    /* --podctl-group; NULL: root only */
	/* Node allocatable: capacity minus these and the hard eviction thresholds. */
	struct resource_list kube_reserved;   /* --kube-reserved, kubeReserved */
	struct resource_list system_reserved; /* --system-reserved, systemReserved */
	struct kvlist        eviction_hard;   /* --eviction-hard, evictionHard: signal -> "100Mi"
	                                       * or "10%" */
	struct kvlist eviction_soft;          /* --eviction-soft, evictionSoft */
	struct kvlist eviction_soft_grace;    /* --eviction-soft-grace-period: signal -> duration */
	struct kvlist eviction_min_reclaim;   /* --eviction-minimum-reclaim: signal -> quantity */
	int64_t       eviction_transition_ms; /* --eviction-pressure-transition-period (5m) */
	int64_t       eviction_max_grace_s;   /* --eviction-max-pod-grace-period (0) */
	int64_t       eviction_monitor_ms;    /* --eviction-monitoring-period (10s) */
	int           image_gc_high;          /* --image-gc-high-threshold (85) */
	int           image_gc_low;           /* --image-gc-low-threshold (80) */
	int64_t       image_gc_min_age_ms;    /* --image-minimum-gc-age (2m) */
	int64_t       image_gc_max_age_ms;    /* --image-maximum-gc-age, imageMaximumGCAge (0) */
	char         *pod_infra_image;        /* --pod-infra-container-image: kept by image GC */
	int           cgroup_systemd;         /* --cgroup-driver systemd, cgroupDriver */
	int           cgroups_per_qos;        /* --cgroups-per-qos, cgroupsPerQOS (true) */
	struct config_taint *taints;          /* --register-with-taints, registerWithTaints */
	size_t               ntaints;
	/* Container GC: the kubelet's (deprecated) flags, without configuration fields. */
	int64_t container_gc_min_age_ms; /* --minimum-container-ttl-duration (0) */
	int     container_gc_max_per;    /* --maximum-dead-containers-per-container (1) */
	int     container_gc_max_total;  /* --maximum-dead-containers (-1: no limit) */
	/* server: the node's HTTPS server (src/server) */
	char   *address;              /* --address, address (default 0.0.0.0) */
	int     port;                 /* --port, port (default 10250; 0: any free port) */
	char   *healthz_bind_address; /* --healthz-bind-address, healthzBindAddress */
	int     healthz_port;         /* --healthz-port, healthzPort (default 10248; 0: off) */
	int     read_only_port;       /* --read-only-port, readOnlyPort (default 0: off) */
	char   *tls_cert_file;        /* --tls-cert-file, tlsCertFile */
	char   *tls_key_file;         /* --tls-private-key-file, tlsPrivateKeyFile */
	char   *client_ca_file;       /* --client-ca-file, authentication.x509.clientCAFile */
	int     anonymous_auth;       /* --anonymous-auth, authentication.anonymous.enabled */
	int     authn_webhook;        /* --authentication-token-webhook, authentication.webhook */
	int     authz_webhook;        /* --authorization-mode Webhook (else AlwaysAllow) */
	int     server_max_streams;   /* --server-max-streams: concurrent requests; 429 beyond */
	int64_t streaming_idle_ms;    /* --streaming-connection-idle-timeout (default 4h) */
};

struct config_taint {
	char *key;
	char *value; /* NULL: none */
	char *effect;
};

enum config_result {
	CONFIG_OK = 0,
	CONFIG_EXIT = 1,  /* --help or --version was printed: exit 0 */
	CONFIG_ERROR = -1 /* err holds one line naming the flag, field or file: exit 2 */
};

/* Fills cfg from defaults, the --config file and argv. cfg is zeroed first; free it with
 * config_clear() whatever the result. Nothing is created on disk. */
enum config_result config_load(
    struct klet_config *cfg, int argc, char **argv, char *err, size_t errlen);
/* Parses a Go duration ("1m30s", "500ms", "2h") into milliseconds. 0 or -1. */
int config_parse_duration(const char *s, int64_t *ms);
/* Parses "k=v,k2=v2" labels with the API's key and value rules. 0 or -1 (err filled). */
int config_parse_labels(const char *s, struct kvlist *out, char *err, size_t errlen);
/* Parses "cpu=100m,memory=1Gi,ephemeral-storage=1Gi,pid=1000" (--kube-reserved). 0 or -1. */
int config_parse_reserved(const char *s, struct resource_list *out, char *err, size_t errlen);
/* Parses "memory.available<100Mi,nodefs.available<10%" (--eviction-hard). 0 or -1. */
int config_parse_eviction(const char *s, struct kvlist *out, char *err, size_t errlen);
/* Parses "key=value:NoExecute,key2:NoSchedule" (--register-with-taints). 0 or -1. */
int config_parse_taints(
    const char *s, struct config_taint **out, size_t *n, char *err, size_t errlen);
void config_clear(struct klet_config *cfg);
/* Prints the flag summary. */
void config_usage(FILE *);

#endif
