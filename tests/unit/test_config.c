/* test_config.c — flags, values, errors and precedence of kletd's settings. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>

#include "core/config.h"
#include "core/log.h"

struct flag_case {
	const char *name;
	const char *args[8];
	int         result;  /* CONFIG_OK / CONFIG_ERROR */
	const char *err_has; /* substring of the error line */
	void (*check)(const struct klet_config *);
};

static void
check_defaults(const struct klet_config *c)
{
	assert_string_equal(c->root_dir, "/var/lib/klet");
	assert_string_equal(c->runtime_endpoint, "unix:///run/containerd/containerd.sock");
	assert_string_equal(c->pod_logs_dir, "/var/log/pods");
	assert_string_equal(c->ctl_socket, "/var/lib/klet/podctl.sock");
	assert_int_equal(c->max_pods, 110);
	assert_int_equal(c->register_node, 1);
	assert_int_equal(c->file_check_ms, 20000);
	assert_int_equal(c->sync_ms, 60000);
	assert_int_equal(c->runtime_timeout_ms, 120000);
	assert_int_equal(c->verbosity, 0);
	assert_int_equal(c->log_max_size, 10 * 1024 * 1024);
	assert_int_equal(c->log_max_files, 5);
	assert_int_equal(c->log_monitor_ms, 10000);
	assert_int_equal(c->cgroups_per_qos, 1);
	assert_int_equal(c->image_gc_max_age_ms, 0);
	assert_int_equal(c->container_gc_min_age_ms, 0);
	assert_int_equal(c->container_gc_max_per, 1);
	assert_int_equal(c->container_gc_max_total, -1);
	assert_int_equal(c->cgroup_systemd, 0);
	assert_int_equal(c->eviction_transition_ms, 300000);
	assert_int_equal(c->eviction_monitor_ms, 10000);
	assert_int_equal(c->eviction_soft.n, 0);
	assert_null(c->pod_manifest_path);
	assert_non_null(c->node_name);
	assert_string_equal(c->address, "0.0.0.0");
	assert_int_equal(c->port, 10250);
	assert_string_equal(c->healthz_bind_address, "127.0.0.1");
	assert_int_equal(c->healthz_port, 10248);
	assert_int_equal(c->read_only_port, 0);
	assert_int_equal(c->anonymous_auth, 0);
	assert_int_equal(c->authn_webhook, 0);
	assert_int_equal(c->authz_webhook, 0);
	assert_null(c->tls_cert_file);
	assert_int_equal(c->log_file_max_mb, 1800);
	assert_int_equal(c->shutdown_grace_ms, 0);
	assert_int_equal(c->shutdown_grace_critical_ms, 0);
}

static void
check_shutdown_flags(const struct klet_config *c)
{
	assert_int_equal(c->shutdown_grace_ms, 90000);
	assert_int_equal(c->shutdown_grace_critical_ms, 30000);
	assert_int_equal(c->log_file_max_mb, 0);
}

static void
check_server_flags(const struct klet_config *c)
{
	assert_string_equal(c->address, "127.0.0.1");
	assert_int_equal(c->port, 0);
	assert_int_equal(c->healthz_port, 18080);
	assert_int_equal(c->anonymous_auth, 1);
	assert_int_equal(c->authz_webhook, 1);
	assert_string_equal(c->client_ca_file, "/ca.crt");
	assert_int_equal(c->authn_webhook, 1);
}

static void
check_common(const struct klet_config *c)
{
	assert_string_equal(c->root_dir, "/tmp/k");
	assert_string_equal(c->ctl_socket, "/tmp/k/podctl.sock");
	assert_string_equal(c->pod_manifest_path, "/etc/m");
	assert_string_equal(c->node_name, "node-1");
	assert_int_equal(c->max_pods, 20);
	assert_int_equal(c->verbosity, 4);
}

static void
check_labels(const struct klet_config *c)
{
	assert_int_equal(c->node_labels.n, 2);
	assert_string_equal(c->node_labels.items[0].k, "zone");
	assert_string_equal(c->node_labels.items[0].v, "a");
	assert_string_equal(c->node_labels.items[1].k, "example.com/tier");
	assert_string_equal(c->node_labels.items[1].v, "");
}

static void
check_dns(const struct klet_config *c)
{
	assert_int_equal(c->cluster_dns.n, 2);
	assert_string_equal(c->cluster_dns.v[0], "10.96.0.10");
	assert_string_equal(c->cluster_dns.v[1], "fd00::a");
	assert_string_equal(c->cluster_domain, "cluster.local");
}

static void
check_register_false(const struct klet_config *c)
{
	assert_int_equal(c->register_node, 0);
}

static void
check_last_flag_wins(const struct klet_config *c)
{
	assert_int_equal(c->max_pods, 7);
}

static void
check_json_and_handlers(const struct klet_config *c)
{
	assert_int_equal(c->log_json, 1);
	assert_int_equal(c->runtime_handlers.n, 1);
	assert_string_equal(c->runtime_handlers.items[0].k, "gvisor");
	assert_string_equal(c->runtime_handlers.items[0].v, "runsc");
	assert_int_equal(c->file_check_ms, 90500);
	assert_int_equal(c->sync_ms, 2000);
}

static void
check_image_gc(const struct klet_config *c)
{
	assert_int_equal(c->image_gc_high, 90);
	assert_int_equal(c->image_gc_low, 50);
	assert_int_equal(c->image_gc_min_age_ms, 30000);
	assert_string_equal(c->pod_infra_image, "k/pause:1");
}

static void
check_container_gc(const struct klet_config *c)
{
	assert_int_equal(c->container_gc_min_age_ms, 90000);
	assert_int_equal(c->container_gc_max_per, 2);
	assert_int_equal(c->container_gc_max_total, 100);
	assert_int_equal(c->image_gc_max_age_ms, 7 * 24 * 3600 * 1000LL);
}

static void
check_container_gc_unlimited(const struct klet_config *c)
{
	assert_int_equal(c->container_gc_max_per, -1);
	assert_int_equal(c->container_gc_max_total, -5);
}

static void
check_image_max_age_file(const struct klet_config *c)
{
	assert_int_equal(c->image_gc_max_age_ms, 3600 * 1000);
}

static void
check_log_rotation(const struct klet_config *c)
{
	assert_int_equal(c->log_max_size, 2 * 1024 * 1024);
	assert_int_equal(c->log_max_files, 3);
}

static void
check_log_rotation_off(const struct klet_config *c)
{
	assert_true(c->log_max_size < 0);
}

static void
check_reserved(const struct klet_config *c)
{
	assert_int_equal(c->kube_reserved.n, 2);
	assert_string_equal(c->kube_reserved.items[0].name, "cpu");
	assert_int_equal(c->kube_reserved.items[0].milli, 100);
	assert_string_equal(c->kube_reserved.items[1].name, "memory");
	assert_int_equal(c->kube_reserved.items[1].milli, 1024LL * 1024 * 1024 * 1000);
	assert_int_equal(c->system_reserved.n, 1);
	assert_string_equal(c->system_reserved.items[0].name, "ephemeral-storage");
	/* --eviction-hard replaces the defaults */
	assert_int_equal(c->eviction_hard.n, 2);
	assert_string_equal(c->eviction_hard.items[0].k, "memory.available");
	assert_string_equal(c->eviction_hard.items[0].v, "500Mi");
	assert_string_equal(c->eviction_hard.items[1].v, "7.5%");
	assert_int_equal(c->ntaints, 2);
	assert_string_equal(c->taints[0].key, "dedicated");
	assert_string_equal(c->taints[0].value, "infra");
	assert_string_equal(c->taints[0].effect, "NoExecute");
	assert_string_equal(c->taints[1].key, "example.com/gpu");
	assert_null(c->taints[1].value);
	assert_string_equal(c->taints[1].effect, "NoSchedule");
}

static void
check_eviction_defaults(const struct klet_config *c)
{
	assert_int_equal(c->eviction_hard.n, 4);
	assert_string_equal(c->eviction_hard.items[0].k, "memory.available");
	assert_string_equal(c->eviction_hard.items[0].v, "100Mi");
	assert_string_equal(c->eviction_hard.items[1].k, "nodefs.available");
	assert_string_equal(c->eviction_hard.items[1].v, "10%");
}

static void
check_eviction_flags(const struct klet_config *c)
{
	assert_string_equal(kvlist_get(&c->eviction_soft, "memory.available"), "300Mi");
	assert_int_equal(c->eviction_hard.n, 1);
	assert_string_equal(kvlist_get(&c->eviction_soft_grace, "memory.available"), "1m30s");
	assert_string_equal(kvlist_get(&c->eviction_min_reclaim, "nodefs.available"), "5%");
	assert_int_equal(c->eviction_transition_ms, 30000);
	assert_int_equal(c->eviction_max_grace_s, 10);
	assert_int_equal(c->eviction_monitor_ms, 10000);
	assert_int_equal(c->cgroup_systemd, 1);
	assert_int_equal(c->cgroups_per_qos, 0);
}

static const struct flag_case flag_cases[] = {
	{ "no_flags_gives_defaults", { NULL }, CONFIG_OK, NULL, check_defaults },
	{ "common_flags_space_and_equals",
	    { "--root-dir", "/tmp/k", "--pod-manifest-path=/etc/m", "--hostname-override", "node-1",
	        "--max-pods=20", "-v=4", NULL },
	    CONFIG_OK, NULL, check_common },
	{ "single_dash_long_flags_like_pflag",
	    { "-root-dir=/tmp/k", "-pod-manifest-path", "/etc/m", "-hostname-override=node-1",
	        "-max-pods", "20", "-v", "4" },
	    CONFIG_OK, NULL, check_common },
	{ "node_labels_parsed", { "--node-labels=zone=a,example.com/tier=", NULL }, CONFIG_OK, NULL,
	    check_labels },
	{ "cluster_dns_v4_and_v6",
	    { "--cluster-dns=10.96.0.10,fd00::a", "--cluster-domain", "cluster.local", NULL },
	    CONFIG_OK, NULL, check_dns },
	{ "register_node_false", { "--register-node=false", NULL }, CONFIG_OK, NULL,
	    check_register_false },
	{ "last_flag_wins", { "--max-pods=3", "--max-pods=7", NULL }, CONFIG_OK, NULL,
	    check_last_flag_wins },
	{ "json_logging_handlers_durations",
	    { "--logging-format=json", "--runtime-handler", "gvisor=runsc",
	        "--file-check-frequency=1m30s500ms", "--sync-frequency=2s", NULL },
	    CONFIG_OK, NULL, check_json_and_handlers },
	{ "eviction_and_cgroup_flags",
	    { "--eviction-soft=memory.available<300Mi",
	        "--eviction-soft-grace-period=memory.available=1m30s",
	        "--eviction-minimum-reclaim=nodefs.available=5%",
	        "--eviction-pressure-transition-period=30s", "--eviction-max-pod-grace-period=10",
	        "--cgroup-driver=systemd", "--cgroups-per-qos=false",
	        "--eviction-hard=memory.available<1Gi" }, /* after --eviction-soft: keeps it */
	    CONFIG_OK, NULL, check_eviction_flags },
	{ "soft_without_grace", { "--eviction-soft=memory.available<300Mi", NULL }, CONFIG_ERROR,
	    "grace period must be specified for the soft eviction threshold memory.available",
	    NULL },
	{ "soft_grace_not_a_duration",
	    { "--eviction-soft-grace-period=memory.available=soon", NULL }, CONFIG_ERROR,
	    "memory.available: \"soon\" is not a duration", NULL },
	{ "soft_grace_unknown_signal", { "--eviction-soft-grace-period=cpu.available=1m", NULL },
	    CONFIG_ERROR, "\"cpu.available\": unknown eviction signal", NULL },
	{ "cgroup_driver_unknown", { "--cgroup-driver=cgroupv3", NULL }, CONFIG_ERROR,
	    "expected cgroupfs or systemd", NULL },
	{ "monitoring_period_too_short", { "--eviction-monitoring-period=1ms", NULL }, CONFIG_ERROR,
	    "(at least 100ms)", NULL },
	{ "unknown_flag", { "--no-such-flag", NULL }, CONFIG_ERROR, "unknown flag: --no-such-flag",
	    NULL },
	{ "max_pods_not_a_number", { "--max-pods=lots", NULL }, CONFIG_ERROR,
	    "invalid value \"lots\" for flag --max-pods", NULL },
	{ "max_pods_zero", { "--max-pods=0", NULL }, CONFIG_ERROR, "for flag --max-pods", NULL },
	{ "verbosity_out_of_range", { "-v=99", NULL }, CONFIG_ERROR, "for flag -v", NULL },
	{ "endpoint_not_unix", { "--container-runtime-endpoint=tcp://1.2.3.4:5", NULL },
	    CONFIG_ERROR, "expected unix:///path", NULL },
	{ "endpoint_relative", { "--container-runtime-endpoint=unix://run/x.sock", NULL },
	    CONFIG_ERROR, "must be absolute", NULL },
	{ "label_without_value", { "--node-labels=zone", NULL }, CONFIG_ERROR,
	    "label \"zone\": expected key=value", NULL },
	{ "label_bad_key", { "--node-labels=-bad=x", NULL }, CONFIG_ERROR, "not a valid label key",
	    NULL },
	{ "label_bad_value", { "--node-labels=k=not ok", NULL }, CONFIG_ERROR,
	    "is not a valid label value", NULL },
	{ "cluster_dns_not_ip", { "--cluster-dns=dns.example", NULL }, CONFIG_ERROR,
	    "\"dns.example\" is not an IP address", NULL },
	{ "register_node_not_bool", { "--register-node=maybe", NULL }, CONFIG_ERROR,
	    "expected true or false", NULL },
	{ "hostname_override_upper_case", { "--hostname-override=Node_1", NULL }, CONFIG_ERROR,
	    "not a DNS subdomain", NULL },
	{ "logging_format_unknown", { "--logging-format=xml", NULL }, CONFIG_ERROR,
	    "expected text or json", NULL },
	{ "duration_without_unit", { "--file-check-frequency=20", NULL }, CONFIG_ERROR,
	    "positive duration", NULL },
	{ "sync_frequency_zero", { "--sync-frequency=0s", NULL }, CONFIG_ERROR, "positive duration",
	    NULL },
	{ "pod_logs_dir_relative", { "--pod-logs-dir=logs", NULL }, CONFIG_ERROR,
	    "must be an absolute path", NULL },
	{ "runtime_handler_without_equals", { "--runtime-handler=gvisor", NULL }, CONFIG_ERROR,
	    "RUNTIMECLASS=HANDLER", NULL },
	{ "missing_value", { "--root-dir", NULL }, CONFIG_ERROR, "requires a value", NULL },
	{ "image_gc_low_not_below_high",
	    { "--image-gc-high-threshold=70", "--image-gc-low-threshold=70", NULL }, CONFIG_ERROR,
	    "imageGCLowThresholdPercent (--image-gc-low-threshold) 70 must be less than "
	    "imageGCHighThresholdPercent (--image-gc-high-threshold) 70",
	    NULL },
	{ "image_gc_high_over_100", { "--image-gc-high-threshold=101", NULL }, CONFIG_ERROR,
	    "percentage from 0 to 100", NULL },
	{ "image_gc_flags",
	    { "--image-gc-high-threshold=90", "--image-gc-low-threshold=50",
	        "--image-minimum-gc-age=30s", "--pod-infra-container-image=k/pause:1", NULL },
	    CONFIG_OK, NULL, check_image_gc },
	{ "container_gc_flags",
	    { "--minimum-container-ttl-duration=1m30s", "--maximum-dead-containers-per-container",
	        "2", "--maximum-dead-containers=100", "--image-maximum-gc-age=168h", NULL },
	    CONFIG_OK, NULL, check_container_gc },
	{ "container_gc_negative_lifts_the_limits",
	    { "--maximum-dead-containers-per-container=-1", "--maximum-dead-containers=-5", NULL },
	    CONFIG_OK, NULL, check_container_gc_unlimited },
	{ "container_gc_count_not_a_number", { "--maximum-dead-containers=many", NULL },
	    CONFIG_ERROR,
	    "invalid value \"many\" for flag --maximum-dead-containers: expected an integer",
	    NULL },
	{ "container_gc_count_over_int32",
	    { "--maximum-dead-containers-per-container=2147483648", NULL }, CONFIG_ERROR,
	    "for flag --maximum-dead-containers-per-container", NULL },
	{ "container_ttl_not_a_duration", { "--minimum-container-ttl-duration=10", NULL },
	    CONFIG_ERROR, "for flag --minimum-container-ttl-duration: expected a duration", NULL },
	{ "image_max_age_not_above_min_age",
	    { "--image-minimum-gc-age=2m", "--image-maximum-gc-age=90s", NULL }, CONFIG_ERROR,
	    "invalid configuration: imageMaximumGCAge 1m30s must be greater than "
	    "imageMinimumGCAge 2m0s",
	    NULL },
	{ "image_max_age_equal_to_min_age",
	    { "--image-minimum-gc-age=1h", "--image-maximum-gc-age=60m", NULL }, CONFIG_ERROR,
	    "imageMaximumGCAge 1h0m0s must be greater than imageMinimumGCAge 1h0m0s", NULL },
	{ "image_max_age_sub_second",
	    { "--image-minimum-gc-age=1500ms", "--image-maximum-gc-age=500ms", NULL }, CONFIG_ERROR,
	    "imageMaximumGCAge 500ms must be greater than imageMinimumGCAge 1.5s", NULL },
	{ "image_max_age_zero_is_off", { "--image-maximum-gc-age=0", NULL }, CONFIG_OK, NULL,
	    NULL },
	{ "log_rotation",
	    { "--container-log-max-size=2Mi", "--container-log-max-files", "3", NULL }, CONFIG_OK,
	    NULL, check_log_rotation },
	{ "log_rotation_off", { "--container-log-max-size=-1", NULL }, CONFIG_OK, NULL,
	    check_log_rotation_off },
	{ "log_max_size_tiny", { "--container-log-max-size=100", NULL }, CONFIG_ERROR,
	    "at least 1Ki", NULL },
	{ "log_max_files_one", { "--container-log-max-files=1", NULL }, CONFIG_ERROR,
	    "from 2 to 1000", NULL },
	{ "server_flags",
	    { "--address=127.0.0.1", "--port=0", "--healthz-port", "18080", "--anonymous-auth",
	        "--authorization-mode=Webhook", "--client-ca-file=/ca.crt",
	        "--authentication-token-webhook=true" },
	    CONFIG_OK, NULL, check_server_flags },
	{ "port_range", { "--port=65536", NULL }, CONFIG_ERROR, "expected a port from 0 to 65535",
	    NULL },
	{ "address_not_ip", { "--address=example.com", NULL }, CONFIG_ERROR, "not an IP address",
	    NULL },
	{ "authorization_mode_unknown", { "--authorization-mode=RBAC", NULL }, CONFIG_ERROR,
	    "expected AlwaysAllow or Webhook", NULL },
	{ "shutdown_and_log_file_size",
	    { "--shutdown-grace-period=1m30s", "--shutdown-grace-period-critical-pods", "30s",
	        "--log-file-max-size=0", NULL },
	    CONFIG_OK, NULL, check_shutdown_flags },
	{ "shutdown_critical_over_period",
	    { "--shutdown-grace-period=10s", "--shutdown-grace-period-critical-pods=20s", NULL },
	    CONFIG_ERROR,
	    "shutdownGracePeriodCriticalPods (20s) must be <= shutdownGracePeriod (10s)", NULL },
	{ "shutdown_not_whole_seconds", { "--shutdown-grace-period=1500ms", NULL }, CONFIG_ERROR,
	    "expected a duration in whole seconds", NULL },
	{ "log_file_max_size_negative", { "--log-file-max-size=-1", NULL }, CONFIG_ERROR,
	    "expected a number of megabytes", NULL },
	{ "stray_argument", { "extra", NULL }, CONFIG_ERROR, "unexpected argument: extra", NULL },
	{ "eviction_defaults", { NULL }, CONFIG_OK, NULL, check_eviction_defaults },
	{ "reserved_eviction_taints",
	    { "--kube-reserved=cpu=100m,memory=1Gi", "--system-reserved", "ephemeral-storage=2Gi",
	        "--eviction-hard=memory.available<500Mi,nodefs.available<7.5%",
	        "--register-with-taints=dedicated=infra:NoExecute,example.com/gpu:NoSchedule",
	        NULL },
	    CONFIG_OK, NULL, check_reserved },
	{ "reserved_unknown_resource", { "--kube-reserved=gpu=1", NULL }, CONFIG_ERROR,
	    "unknown resource", NULL },
	{ "reserved_bad_quantity", { "--system-reserved=memory=lots", NULL }, CONFIG_ERROR,
	    "is not a quantity", NULL },
	{ "reserved_no_equals", { "--kube-reserved=cpu", NULL }, CONFIG_ERROR,
	    "expected RESOURCE=QUANTITY", NULL },
	{ "eviction_unknown_signal", { "--eviction-hard=memory.free<1Gi", NULL }, CONFIG_ERROR,
	    "unknown eviction signal", NULL },
	{ "eviction_no_operator", { "--eviction-hard=memory.available=1Gi", NULL }, CONFIG_ERROR,
	    "expected SIGNAL<QUANTITY", NULL },
	{ "eviction_bad_percent", { "--eviction-hard=nodefs.available<110%", NULL }, CONFIG_ERROR,
	    "is not a percentage", NULL },
	{ "taint_bad_effect", { "--register-with-taints=a=b:Never", NULL }, CONFIG_ERROR,
	    "is not NoSchedule, PreferNoSchedule or NoExecute", NULL },
	{ "taint_no_effect", { "--register-with-taints=a=b", NULL }, CONFIG_ERROR,
	    "expected KEY[=VALUE]:EFFECT", NULL },
	{ "config_file_missing", { "--config=/nonexistent/klet.yaml", NULL }, CONFIG_ERROR,
	    "/nonexistent/klet.yaml", NULL },
};

static void
run_flag_case(const struct flag_case *fc)
{
	char              *argv[10];
	struct klet_config cfg;
	char               err[512] = "";
	int                argc = 0, i, res;

	argv[argc++] = "kletd";
	for (i = 0; i < 8 && fc->args[i] != NULL; i++)
		argv[argc++] = (char *)fc->args[i];
	argv[argc] = NULL;
	res = config_load(&cfg, argc, argv, err, sizeof(err));
	if (res != fc->result)
		fail_msg("%s: result %d, want %d (err: %s)", fc->name, res, fc->result, err);
	if (fc->err_has != NULL && strstr(err, fc->err_has) == NULL)
		fail_msg("%s: error \"%s\" lacks \"%s\"", fc->name, err, fc->err_has);
	if (fc->check != NULL)
		fc->check(&cfg);
	config_clear(&cfg);
}

static void
test_flags(void **state)
{
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(flag_cases) / sizeof(flag_cases[0]); i++)
		run_flag_case(&flag_cases[i]);
}

struct dur_case {
	const char *in;
	int         rc;
	int64_t     ms;
};

static void
test_durations(void **state)
{
	static const struct dur_case cases[] = {
		{ "20s", 0, 20000 },
		{ "1m30s", 0, 90000 },
		{ "500ms", 0, 500 },
		{ "2h", 0, 7200000 },
		{ "1.5s", 0, 1500 },
		{ "0", 0, 0 },
		{ "1000us", 0, 1 },
		{ "3000000ns", 0, 3 },
		{ "", -1, 0 },
		{ "10", -1, 0 },
		{ "s", -1, 0 },
		{ "1x", -1, 0 },
		{ "-5s", -1, 0 },
		{ "1m 30s", -1, 0 },
	};
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		int64_t ms = -42;
		int     rc = config_parse_duration(cases[i].in, &ms);

		if (rc != cases[i].rc)
			fail_msg("duration \"%s\": rc %d want %d", cases[i].in, rc, cases[i].rc);
		if (rc == 0 && ms != cases[i].ms)
			fail_msg("duration \"%s\": %lld want %lld", cases[i].in, (long long)ms,
			    (long long)cases[i].ms);
	}
}

/* The --config file: each case writes a file, loads it with extra flags, checks. */
struct file_case {
	const char *name;
	const char *text;
	const char *flag; /* one extra flag or NULL */
	int         result;
	const char *err_has;
	void (*check)(const struct klet_config *);
};

static void
check_file_full(const struct klet_config *c)
{
	assert_string_equal(c->pod_manifest_path, "/etc/klet/manifests");
	assert_string_equal(c->runtime_endpoint, "unix:///run/x.sock");
	assert_int_equal(c->max_pods, 42);
	assert_int_equal(c->cluster_dns.n, 2);
	assert_string_equal(c->cluster_dns.v[1], "10.0.0.11");
	assert_string_equal(c->cluster_domain, "cluster.local");
	assert_string_equal(c->pod_logs_dir, "/var/log/k");
	assert_int_equal(c->register_node, 0);
	assert_string_equal(c->resolv_conf, "/run/resolv.conf");
	assert_int_equal(c->file_check_ms, 5000);
	assert_int_equal(c->sync_ms, 30000);
	assert_int_equal(c->runtime_timeout_ms, 60000);
	assert_int_equal(c->node_status_ms, 20000);
	assert_int_equal(c->lease_duration_s, 30);
	assert_int_equal(c->log_json, 1);
	assert_int_equal(c->verbosity, 3);
}

static void
check_file_server(const struct klet_config *c)
{
	assert_string_equal(c->address, "::1");
	assert_int_equal(c->port, 20250);
	assert_string_equal(c->healthz_bind_address, "127.0.0.2");
	assert_int_equal(c->healthz_port, 0);
	assert_int_equal(c->read_only_port, 10255);
	assert_string_equal(c->tls_cert_file, "/pki/c.crt");
	assert_string_equal(c->tls_key_file, "/pki/c.key");
	assert_string_equal(c->client_ca_file, "/pki/ca.crt");
	assert_int_equal(c->anonymous_auth, 0);
	assert_int_equal(c->authn_webhook, 1);
	assert_int_equal(c->authz_webhook, 1);
}

static void
check_flag_beats_file(const struct klet_config *c)
{
	assert_int_equal(c->max_pods, 7);                /* the flag */
	assert_string_equal(c->pod_manifest_path, "/m"); /* the file */
}

static const struct file_case file_cases[] = {
	{ "full",
	    "apiVersion: kubelet.config.k8s.io/v1beta1\nkind: KubeletConfiguration\n"
	    "staticPodPath: /etc/klet/manifests\ncontainerRuntimeEndpoint: unix:///run/x.sock\n"
	    "maxPods: 42\nclusterDNS: [10.0.0.10, 10.0.0.11]\nclusterDomain: cluster.local\n"
	    "podLogsDir: /var/log/k\nregisterNode: false\nresolvConf: /run/resolv.conf\n"
	    "fileCheckFrequency: 5s\nsyncFrequency: 30s\nruntimeRequestTimeout: 1m\n"
	    "nodeStatusUpdateFrequency: 20s\nnodeLeaseDurationSeconds: 30\n"
	    "logging: {format: json, verbosity: 3}\nevictionHard: {memory.available: 100Mi}\n",
	    NULL, CONFIG_OK, NULL, check_file_full },
	{ "server_fields",
	    "address: \"::1\"\nport: 20250\nhealthzBindAddress: 127.0.0.2\nhealthzPort: 0\n"
	    "readOnlyPort: 10255\ntlsCertFile: /pki/c.crt\ntlsPrivateKeyFile: /pki/c.key\n"
	    "authentication:\n  x509: {clientCAFile: /pki/ca.crt}\n  anonymous: {enabled: false}\n"
	    "  webhook: {enabled: true, cacheTTL: 2m}\nauthorization: {mode: Webhook}\n",
	    NULL, CONFIG_OK, NULL, check_file_server },
	{ "authorization_mode_bad", "authorization: {mode: Node}\n", NULL, CONFIG_ERROR,
	    "field authorization.mode in", NULL },
	{ "authentication_not_object", "authentication: yes\n", NULL, CONFIG_ERROR,
	    "expected an object", NULL },
	{ "flag_beats_file", "maxPods: 9\nstaticPodPath: /m\n", "--max-pods=7", CONFIG_OK, NULL,
	    check_flag_beats_file },
	{ "json_file", "{\"maxPods\": 5}", NULL, CONFIG_OK, NULL, NULL },
	{ "wrong_kind", "kind: Pod\n", NULL, CONFIG_ERROR, "field kind in", NULL },
	{ "wrong_api_version", "apiVersion: v1\n", NULL, CONFIG_ERROR,
	    "expected kubelet.config.k8s.io/v1beta1", NULL },
	{ "max_pods_string", "maxPods: lots\n", NULL, CONFIG_ERROR, "field maxPods in", NULL },
	{ "max_pods_range", "maxPods: 0\n", NULL, CONFIG_ERROR, "from 1 to 10000", NULL },
	{ "dns_not_list", "clusterDNS: 10.0.0.10\n", NULL, CONFIG_ERROR,
	    "expected a list of strings", NULL },
	{ "dns_bad_ip", "clusterDNS: [nope]\n", NULL, CONFIG_ERROR, "is not an IP address", NULL },
	{ "bad_duration", "fileCheckFrequency: soon\n", NULL, CONFIG_ERROR,
	    "field fileCheckFrequency in", NULL },
	{ "bad_yaml", "maxPods: [1,\n", NULL, CONFIG_ERROR, "config file", NULL },
	{ "not_an_object", "- a\n- b\n", NULL, CONFIG_ERROR,
	    "expected a KubeletConfiguration object", NULL },
	{ "logging_verbosity_range", "logging: {verbosity: 11}\n", NULL, CONFIG_ERROR,
	    "field logging.verbosity in", NULL },
	{ "reserved_eviction_taints_fields",
	    "kubeReserved: {cpu: 100m, memory: 1Gi}\nsystemReserved: {ephemeral-storage: 2Gi}\n"
	    "evictionHard: {memory.available: 500Mi, nodefs.available: 7.5%}\n"
	    "registerWithTaints:\n- {key: dedicated, value: infra, effect: NoExecute}\n"
	    "- {key: example.com/gpu, effect: NoSchedule}\n",
	    NULL, CONFIG_OK, NULL, check_reserved },
	{ "image_maximum_gc_age_field", "imageMaximumGCAge: 1h\n", NULL, CONFIG_OK, NULL,
	    check_image_max_age_file },
	{ "image_maximum_gc_age_field_bad", "imageMaximumGCAge: 3\n", NULL, CONFIG_ERROR,
	    "field imageMaximumGCAge in", NULL },
	{ "kube_reserved_not_a_map", "kubeReserved: [cpu]\n", NULL, CONFIG_ERROR,
	    "expected a map of strings", NULL },
	{ "taint_not_an_object", "registerWithTaints: [a]\n", NULL, CONFIG_ERROR,
	    "expected {key, value, effect} strings", NULL },
	{ "shutdown_fields", "shutdownGracePeriod: 1m30s\nshutdownGracePeriodCriticalPods: 30s\n",
	    "--log-file-max-size=0", CONFIG_OK, NULL, check_shutdown_flags },
	{ "shutdown_critical_longer",
	    "shutdownGracePeriod: 10s\nshutdownGracePeriodCriticalPods: 1m\n", NULL, CONFIG_ERROR,
	    "must be <= shutdownGracePeriod (10s)", NULL },
};

static void
test_config_file(void **state)
{
	char               dir[] = "/tmp/test_config.XXXXXX", path[64], err[512], arg[80];
	struct klet_config cfg;
	size_t             i;
	FILE              *f;

	(void)state;
	assert_non_null(mkdtemp(dir));
	snprintf(path, sizeof(path), "%s/kubelet.yaml", dir);
	snprintf(arg, sizeof(arg), "--config=%s", path);
	for (i = 0; i < sizeof(file_cases) / sizeof(file_cases[0]); i++) {
		const struct file_case *fc = &file_cases[i];
		char                   *argv[4] = { "kletd", arg, (char *)fc->flag, NULL };
		int                     res;

		f = fopen(path, "w");
		assert_non_null(f);
		fputs(fc->text, f);
		fclose(f);
		err[0] = '\0';
		res = config_load(&cfg, fc->flag != NULL ? 3 : 2, argv, err, sizeof(err));
		if (res != fc->result)
			fail_msg(
			    "%s: result %d, want %d (err: %s)", fc->name, res, fc->result, err);
		if (fc->err_has != NULL && strstr(err, fc->err_has) == NULL)
			fail_msg("%s: error \"%s\" lacks \"%s\"", fc->name, err, fc->err_has);
		if (fc->check != NULL)
			fc->check(&cfg);
		config_clear(&cfg);
	}
	unlink(path);
	rmdir(dir);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_flags),
		cmocka_unit_test(test_durations),
		cmocka_unit_test(test_config_file),
	};

	log_init(0, 0);
	return cmocka_run_group_tests_name("config", tests, NULL, NULL);
}
