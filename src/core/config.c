/* config.c — defaults, the KubeletConfiguration-style file, and kubelet-compatible flags. */
#include <arpa/inet.h>
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/config.h"
#include "core/config_int.h"
#include "core/json.h"
#include "core/log.h"
#include "core/quantity.h"
#include "core/util.h"

static const struct option longopts[] = {
	{ "config", required_argument, NULL, O_CONFIG },
	{ "kubeconfig", required_argument, NULL, O_KUBECONFIG },
	{ "bootstrap-kubeconfig", required_argument, NULL, O_BOOTSTRAP_KUBECONFIG },
	{ "rotate-certificates", optional_argument, NULL, O_ROTATE_CERTIFICATES },
	{ "hostname-override", required_argument, NULL, O_HOSTNAME_OVERRIDE },
	{ "pod-manifest-path", required_argument, NULL, O_MANIFEST_PATH },
	{ "container-runtime-endpoint", required_argument, NULL, O_RUNTIME_ENDPOINT },
	{ "root-dir", required_argument, NULL, O_ROOT_DIR },
	{ "max-pods", required_argument, NULL, O_MAX_PODS },
	{ "node-labels", required_argument, NULL, O_NODE_LABELS },
	{ "register-node", optional_argument, NULL, O_REGISTER_NODE },
	{ "cluster-dns", required_argument, NULL, O_CLUSTER_DNS },
	{ "cluster-domain", required_argument, NULL, O_CLUSTER_DOMAIN },
	{ "pod-logs-dir", required_argument, NULL, O_POD_LOGS_DIR },
	{ "resolv-conf", required_argument, NULL, O_RESOLV_CONF },
	{ "file-check-frequency", required_argument, NULL, O_FILE_CHECK },
	{ "sync-frequency", required_argument, NULL, O_SYNC_FREQ },
	{ "runtime-request-timeout", required_argument, NULL, O_RUNTIME_TIMEOUT },
	{ "runtime-request-window", required_argument, NULL, O_RUNTIME_WINDOW },
	{ "logging-format", required_argument, NULL, O_LOGGING_FORMAT },
	{ "log-file", required_argument, NULL, O_LOG_FILE },
	{ "log-file-max-size", required_argument, NULL, O_LOG_FILE_MAX_SIZE },
	{ "shutdown-grace-period", required_argument, NULL, O_SHUTDOWN_GRACE },
	{ "shutdown-grace-period-critical-pods", required_argument, NULL,
	    O_SHUTDOWN_GRACE_CRITICAL },
	{ "podctl-socket", required_argument, NULL, O_CTL_SOCKET },
	{ "podctl-group", required_argument, NULL, O_CTL_GROUP },
	{ "runtime-handler", required_argument, NULL, O_RUNTIME_HANDLER },
	{ "kube-reserved", required_argument, NULL, O_KUBE_RESERVED },
	{ "system-reserved", required_argument, NULL, O_SYSTEM_RESERVED },
	{ "eviction-hard", required_argument, NULL, O_EVICTION_HARD },
	{ "register-with-taints", required_argument, NULL, O_REGISTER_TAINTS },
	{ "v", required_argument, NULL, O_V },
	{ "help", no_argument, NULL, O_HELP },
	{ "version", no_argument, NULL, O_VERSION },
	{ "container-log-max-size", required_argument, NULL, O_LOG_MAX_SIZE },
	{ "container-log-max-files", required_argument, NULL, O_LOG_MAX_FILES },
	{ "cgroup-root", required_argument, NULL, O_CGROUP_ROOT },
	{ "cgroup-driver", required_argument, NULL, O_CGROUP_DRIVER },
	{ "cgroups-per-qos", optional_argument, NULL, O_CGROUPS_PER_QOS },
	{ "eviction-soft", required_argument, NULL, O_EVICTION_SOFT },
	{ "eviction-soft-grace-period", required_argument, NULL, O_EVICTION_SOFT_GRACE },
	{ "eviction-minimum-reclaim", required_argument, NULL, O_EVICTION_MIN_RECLAIM },
	{ "eviction-pressure-transition-period", required_argument, NULL, O_EVICTION_TRANSITION },
	{ "eviction-max-pod-grace-period", required_argument, NULL, O_EVICTION_MAX_GRACE },
	{ "eviction-monitoring-period", required_argument, NULL, O_EVICTION_MONITOR },
	{ "address", required_argument, NULL, O_ADDRESS },
	{ "port", required_argument, NULL, O_PORT },
	{ "healthz-bind-address", required_argument, NULL, O_HEALTHZ_ADDRESS },
	{ "healthz-port", required_argument, NULL, O_HEALTHZ_PORT },
	{ "read-only-port", required_argument, NULL, O_READ_ONLY_PORT },
	{ "tls-cert-file", required_argument, NULL, O_TLS_CERT },
	{ "tls-private-key-file", required_argument, NULL, O_TLS_KEY },
	{ "client-ca-file", required_argument, NULL, O_CLIENT_CA },
	{ "anonymous-auth", optional_argument, NULL, O_ANONYMOUS_AUTH },
	{ "authentication-token-webhook", optional_argument, NULL, O_AUTHN_WEBHOOK },
	{ "authorization-mode", required_argument, NULL, O_AUTHZ_MODE },
	{ "server-max-streams", required_argument, NULL, O_MAX_STREAMS },
	{ "streaming-connection-idle-timeout", required_argument, NULL, O_STREAMING_IDLE },
	{ "image-gc-high-threshold", required_argument, NULL, O_IMAGE_GC_HIGH },
	{ "image-gc-low-threshold", required_argument, NULL, O_IMAGE_GC_LOW },
	{ "image-minimum-gc-age", required_argument, NULL, O_IMAGE_GC_AGE },
	{ "pod-infra-container-image", required_argument, NULL, O_POD_INFRA_IMAGE },
	{ "image-maximum-gc-age", required_argument, NULL, O_IMAGE_GC_MAX_AGE },
	{ "minimum-container-ttl-duration", required_argument, NULL, O_CONTAINER_GC_AGE },
	{ "maximum-dead-containers-per-container", required_argument, NULL, O_CONTAINER_GC_PER },
	{ "maximum-dead-containers", required_argument, NULL, O_CONTAINER_GC_MAX },
	{ NULL, 0, NULL, 0 },
};

static const char *
config_opt_name(int id)
{
	const struct option *o;

	for (o = longopts; o->name != NULL; o++)
		if (o->val == id)
			return o->name;
	return "?";
}

void
config_usage(FILE *fp)
{
	fputs(
	    "usage: kletd [flags]\n"
	    "\n"
	    "klet node agent: runs the pods bound to this node on a CRI runtime.\n"
	    "\n"
	    "  --config FILE                    KubeletConfiguration YAML (flags override it)\n"
	    "  --kubeconfig FILE                API server credentials; none: standalone mode\n"
	    "  --bootstrap-kubeconfig FILE      credentials to request a client certificate with\n"
	    "                                   (CSR) when --kubeconfig has none\n"
	    "  --rotate-certificates[=BOOL]     renew the client certificate before it expires\n"
	    "  --hostname-override NAME         node name (default: the host name)\n"
	    "  --pod-manifest-path DIR          static pod manifests (YAML or JSON)\n"
	    "  --container-runtime-endpoint EP  CRI socket (default unix:///run/containerd/containerd.sock)\n"
	    "  --root-dir DIR                   state directory (default /var/lib/klet)\n"
	    "  --pod-logs-dir DIR               container logs (default /var/log/pods)\n"
	    "  --cgroup-root PATH               cgroup under which kubepods is made (default /)\n"
	    "  --cgroup-driver cgroupfs|systemd pod cgroup names (default cgroupfs)\n"
	    "  --cgroups-per-qos[=BOOL]         QoS and pod cgroups (default true)\n"
	    "  --max-pods N                     pods this node runs at most (default 110)\n"
	    "  --kube-reserved RES=Q,...        reserved for Kubernetes daemons (cpu, memory,\n"
	    "                                   ephemeral-storage, pid); not allocatable to pods\n"
	    "  --system-reserved RES=Q,...      reserved for the OS, as --kube-reserved\n"
	    "  --eviction-hard SIG<Q,...        hard eviction thresholds (default\n"
	    "                                   memory.available<100Mi,nodefs.available<10%,\n"
	    "                                   nodefs.inodesFree<5%,imagefs.available<15%)\n"
	    "  --eviction-soft SIG<Q,...        soft eviction thresholds (default none)\n"
	    "  --eviction-soft-grace-period SIG=DUR,...  how long a soft threshold must hold\n"
	    "  --eviction-minimum-reclaim SIG=Q,...  reclaimed beyond a threshold (default 0)\n"
	    "  --eviction-pressure-transition-period DUR  a condition holds this long (default 5m)\n"
	    "  --eviction-max-pod-grace-period S  grace of a soft eviction at most (default 0:\n"
	    "                                   the pod's own)\n"
	    "  --eviction-monitoring-period DUR signals read this often (default 10s)\n"
	    "  --image-gc-high-threshold PCT    image disk use that starts image GC (default 85)\n"
	    "  --image-gc-low-threshold PCT     image GC frees down to this (default 80)\n"
	    "  --image-minimum-gc-age DUR       unused images younger are kept (default 2m)\n"
	    "  --image-maximum-gc-age DUR       unused images not used for longer are removed\n"
	    "                                   whatever the disk use (default 0: never)\n"
	    "  --pod-infra-container-image IMG  the runtime's sandbox image: never removed by\n"
	    "                                   image GC (default registry.k8s.io/pause:3.9)\n"
	    "  --minimum-container-ttl-duration DUR  dead containers younger are kept (default 0)\n"
	    "  --maximum-dead-containers-per-container N  dead instances kept per container\n"
	    "                                   (default 1; negative: no limit)\n"
	    "  --maximum-dead-containers N      dead containers kept on the node (default -1:\n"
	    "                                   no limit)\n"
	    "  --register-with-taints K=V:E,... taints the node registers with\n"
	    "  --node-labels k=v,...            labels added at registration\n"
	    "  --register-node[=BOOL]           register the node with the API server (default true)\n"
	    "  --cluster-dns IP,...             DNS servers for ClusterFirst pods\n"
	    "  --cluster-domain DOMAIN          cluster DNS domain (e.g. cluster.local)\n"
	    "  --resolv-conf FILE               resolver config for Default DNS (default /etc/resolv.conf)\n"
	    "  --file-check-frequency DUR       manifest rescan period (default 20s)\n"
	    "  --sync-frequency DUR             resync period of running pods (default 1m)\n"
	    "  --runtime-request-timeout DUR    CRI call deadline (default 2m)\n"
	    "  --runtime-request-window N       CRI calls in flight at most; later ones wait\n"
	    "                                   (default 32)\n"
	    "  --runtime-handler NAME=HANDLER   map a RuntimeClass name to a CRI runtime handler\n"
	    "  --container-log-max-size SIZE    rotate a container log above SIZE (default 10Mi;\n"
	    "                                   -1: never)\n"
	    "  --container-log-max-files N      log files kept per container (default 5)\n"
	    "  --address IP                     HTTPS server address (default 0.0.0.0)\n"
	    "  --port N                         HTTPS server port (default 10250; 0: any free port)\n"
	    "  --healthz-bind-address IP        healthz address (default 127.0.0.1)\n"
	    "  --healthz-port N                 plain HTTP healthz port (default 10248; 0: off)\n"
	    "  --read-only-port N               unauthenticated HTTP port (default 0: off)\n"
	    "  --tls-cert-file FILE             serving certificate (default: self-signed,\n"
	    "                                   ROOT-DIR/pki/kubelet.crt)\n"
	    "  --tls-private-key-file FILE      its key\n"
	    "  --client-ca-file FILE            CA bundle verifying client certificates\n"
	    "  --anonymous-auth[=BOOL]          serve requests without credentials (default false)\n"
	    "  --authentication-token-webhook[=BOOL]  bearer tokens by TokenReview\n"
	    "  --authorization-mode MODE        AlwaysAllow (default) or Webhook\n"
	    "  --streaming-connection-idle-timeout DUR  exec/attach/port-forward idle limit (4h)\n"
	    "  --server-max-streams N           concurrent requests served (default 64; 429 beyond)\n"
	    "  --podctl-socket PATH             inspection socket (default ROOT-DIR/podctl.sock)\n"
	    "  --podctl-group GROUP             group allowed to use the inspection socket\n"
	    "  --logging-format text|json       log line format (default text)\n"
	    "  --log-file FILE                  log to FILE (reopened on SIGHUP)\n"
	    "  --log-file-max-size MB           FILE is renamed FILE.1 at this size (default\n"
	    "                                   1800; 0: no limit)\n"
	    "  --shutdown-grace-period DUR      delay the node's shutdown (systemd-logind inhibitor\n"
	    "                                   lock) this long to terminate the pods (default 0:\n"
	    "                                   off)\n"
	    "  --shutdown-grace-period-critical-pods DUR  the part of it kept for critical pods,\n"
	    "                                   terminated after the others (default 0)\n"
	    "  -v N                             log verbosity (0-10)\n"
	    "  --help, --version\n",
	    fp);
}

int
config_errf(char *err, size_t errlen, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(err, errlen, fmt, ap);
	va_end(ap);
	return -1;
}

int
config_parse_duration(const char *s, int64_t *ms)
{
	static const struct {
		const char *unit;
		double      ms;
	} units[] = {
		{ "ns", 1e-6 },
		{ "us", 1e-3 },
		{ "µs", 1e-3 },
		{ "ms", 1 },
		{ "s", 1000 },
		{ "m", 60000 },
		{ "h", 3600000 },
	};
	double      total = 0;
	const char *p = s;
	size_t      i, best;

	if (s == NULL || *s == '\0')
		return -1;
	if (strcmp(s, "0") == 0) {
		*ms = 0;
		return 0;
	}
	while (*p != '\0') {
		char  *end;
		double v;

		if (!isdigit((unsigned char)*p) && *p != '.')
			return -1;
		errno = 0;
		v = strtod(p, &end);
		if (errno != 0 || end == p)
			return -1;
		p = end;
		best = nitems(units);
		for (i = 0; i < nitems(units); i++) {
			size_t n = strlen(units[i].unit);

			if (strncmp(p, units[i].unit, n) == 0 &&
			    (best == nitems(units) || n > strlen(units[best].unit)))
				best = i;
		}
		if (best == nitems(units))
			return -1;
		p += strlen(units[best].unit);
		total += v * units[best].ms;
		if (total > (double)INT64_MAX / 2)
			return -1;
	}
	*ms = (int64_t)total;
	return 0;
}

/* ms as Go's time.Duration prints it ("0s", "500ms", "1.5s", "2m0s", "1h0m0s"). */
static void
config_go_duration(int64_t ms, char *b, size_t n)
{
	int64_t h = ms / 3600000, m = ms / 60000 % 60, s = ms / 1000 % 60;
	char    frac[8] = "";
	size_t  k;

	if (ms == 0) {
		snprintf(b, n, "0s");
		return;
	}
	if (ms < 1000) {
		snprintf(b, n, "%lldms", (long long)ms);
		return;
	}
	if (ms % 1000 != 0) {
		snprintf(frac, sizeof(frac), ".%03lld", (long long)(ms % 1000));
		for (k = strlen(frac); frac[k - 1] == '0'; k--)
			frac[k - 1] = '\0';
	}
	if (h > 0)
		snprintf(b, n, "%lldh%lldm%lld%ss", (long long)h, (long long)m, (long long)s, frac);
	else if (m > 0)
		snprintf(b, n, "%lldm%lld%ss", (long long)m, (long long)s, frac);
	else
		snprintf(b, n, "%lld%ss", (long long)s, frac);
}

static int
config_label_name_ok(const char *s, size_t n)
{
	size_t i;

	if (n == 0 || n > 63)
		return 0;
	if (!isalnum((unsigned char)s[0]) || !isalnum((unsigned char)s[n - 1]))
		return 0;
	for (i = 0; i < n; i++)
		if (!isalnum((unsigned char)s[i]) && s[i] != '-' && s[i] != '_' && s[i] != '.')
			return 0;
	return 1;
}

static int
config_dns_subdomain_ok(const char *s, size_t n)
{
	size_t i;

	if (n == 0 || n > 253)
		return 0;
	for (i = 0; i < n; i++) {
		char c = s[i];

		if (!(islower((unsigned char)c) || isdigit((unsigned char)c) || c == '-' ||
		        c == '.'))
			return 0;
	}
	return isalnum((unsigned char)s[0]) && isalnum((unsigned char)s[n - 1]);
}

static int
config_label_key_ok(const char *k)
{
	const char *slash = strchr(k, '/');

	if (slash == NULL)
		return config_label_name_ok(k, strlen(k));
	return config_dns_subdomain_ok(k, (size_t)(slash - k)) &&
	    config_label_name_ok(slash + 1, strlen(slash + 1));
}

static void
config_strv_push(struct strv *sv, const char *s)
{
	sv->v = xreallocarray(sv->v, sv->n + 1, sizeof(*sv->v));
	sv->v[sv->n++] = xstrdup(s);
}

int
config_parse_labels(const char *s, struct kvlist *out, char *err, size_t errlen)
{
	char *copy = xstrdup(s), *p = copy, *item, *eq;
	int   rc = 0;

	while ((item = strsep(&p, ",")) != NULL) {
		if (*item == '\0')
			continue;
		if ((eq = strchr(item, '=')) == NULL) {
			rc = config_errf(err, errlen, "label \"%s\": expected key=value", item);
			break;
		}
		*eq = '\0';
		if (!config_label_key_ok(item)) {
			rc = config_errf(
			    err, errlen, "label key \"%s\": not a valid label key", item);
			break;
		}
		if (eq[1] != '\0' && !config_label_name_ok(eq + 1, strlen(eq + 1))) {
			rc = config_errf(err, errlen,
			    "label \"%s\": value \"%s\" is not a valid label value", item, eq + 1);
			break;
		}
		kvlist_set(out, item, eq + 1);
	}
	free(copy);
	return rc;
}

/* Appends (or replaces) one quantity of a resource list. */
static void
config_cfg_rl_set(struct resource_list *rl, const char *name, int64_t milli)
{
	size_t i;

	for (i = 0; i < rl->n; i++)
		if (strcmp(rl->items[i].name, name) == 0) {
			rl->items[i].milli = milli;
			return;
		}
	rl->items = xreallocarray(rl->items, rl->n + 1, sizeof(*rl->items));
	rl->items[rl->n].name = xstrdup(name);
	rl->items[rl->n].milli = milli;
	rl->n++;
}

int
config_parse_reserved(const char *s, struct resource_list *out, char *err, size_t errlen)
{
	static const char *const names[] = { "cpu", "memory", "ephemeral-storage", "pid" };
	char                    *copy = xstrdup(s), *item, *save = NULL, *eq;
	int64_t                  milli;
	size_t                   i;
	int                      rc = 0;

	for (item = strtok_r(copy, ",", &save); item != NULL; item = strtok_r(NULL, ",", &save)) {
		eq = strchr(item, '=');
		if (eq == NULL) {
			rc = config_errf(err, errlen, "\"%s\": expected RESOURCE=QUANTITY", item);
			break;
		}
		*eq = '\0';
		for (i = 0; i < nitems(names) && strcmp(names[i], item) != 0; i++)
			;
		if (i == nitems(names)) {
			rc = config_errf(err, errlen,
			    "\"%s\": unknown resource (cpu, memory, ephemeral-storage, pid)", item);
			break;
		}
		if (quantity_parse(eq + 1, &milli) < 0 || milli < 0) {
			rc = config_errf(err, errlen, "%s: \"%s\" is not a quantity", item, eq + 1);
			break;
		}
		config_cfg_rl_set(out, item, milli);
	}
	free(copy);
	return rc;
}

int
config_parse_eviction(const char *s, struct kvlist *out, char *err, size_t errlen)
{
	static const char *const sigs[] = { "memory.available", "nodefs.available",
		"nodefs.inodesFree", "imagefs.available", "imagefs.inodesFree", "pid.available" };
	char                    *copy = xstrdup(s), *item, *save = NULL, *lt, *end;
	int64_t                  milli;
	double                   pct;
	size_t                   i;
	int                      rc = 0;

	for (item = strtok_r(copy, ",", &save); item != NULL; item = strtok_r(NULL, ",", &save)) {
		lt = strchr(item, '<');
		if (lt == NULL) {
			rc = config_errf(err, errlen,
			    "\"%s\": expected SIGNAL<QUANTITY or SIGNAL<PERCENT%%", item);
			break;
		}
		*lt++ = '\0';
		for (i = 0; i < nitems(sigs) && strcmp(sigs[i], item) != 0; i++)
			;
		if (i == nitems(sigs)) {
			rc = config_errf(err, errlen, "\"%s\": unknown eviction signal", item);
			break;
		}
		if (*lt != '\0' && lt[strlen(lt) - 1] == '%') {
			pct = strtod(lt, &end);
			if (end != lt + strlen(lt) - 1 || pct < 0 || pct > 100) {
				rc = config_errf(
				    err, errlen, "%s: \"%s\" is not a percentage", item, lt);
				break;
			}
		} else if (quantity_parse(lt, &milli) < 0 || milli < 0) {
			rc = config_errf(err, errlen, "%s: \"%s\" is not a quantity", item, lt);
			break;
		}
		kvlist_set(out, item, lt);
	}
	free(copy);
	return rc;
}

static void
config_cfg_taints_clear(struct config_taint **t, size_t *n)
{
	size_t i;

	for (i = 0; i < *n; i++) {
		free((*t)[i].key);
		free((*t)[i].value);
		free((*t)[i].effect);
	}
	free(*t);
	*t = NULL;
	*n = 0;
}

int
config_parse_taints(const char *s, struct config_taint **out, size_t *n, char *err, size_t errlen)
{
	char *copy = xstrdup(s), *item, *save = NULL, *colon, *eq;
	int   rc = 0;

	for (item = strtok_r(copy, ",", &save); item != NULL; item = strtok_r(NULL, ",", &save)) {
		colon = strrchr(item, ':');
		if (colon == NULL) {
			rc = config_errf(
			    err, errlen, "taint \"%s\": expected KEY[=VALUE]:EFFECT", item);
			break;
		}
		*colon++ = '\0';
		if (strcmp(colon, "NoSchedule") != 0 && strcmp(colon, "PreferNoSchedule") != 0 &&
		    strcmp(colon, "NoExecute") != 0) {
			rc = config_errf(err, errlen,
			    "taint \"%s\": effect \"%s\" is not NoSchedule, PreferNoSchedule or "
			    "NoExecute",
			    item, colon);
			break;
		}
		eq = strchr(item, '=');
		if (eq != NULL)
			*eq++ = '\0';
		if (!config_label_key_ok(item) ||
		    (eq != NULL && !config_label_name_ok(eq, strlen(eq)))) {
			rc = config_errf(
			    err, errlen, "taint \"%s\": not a valid key or value", item);
			break;
		}
		*out = xreallocarray(*out, *n + 1, sizeof(**out));
		(*out)[*n].key = xstrdup(item);
		(*out)[*n].value = eq != NULL ? xstrdup(eq) : NULL;
		(*out)[*n].effect = xstrdup(colon);
		(*n)++;
	}
	free(copy);
	return rc;
}

static int
config_parse_int(const char *s, long lo, long hi, long *out)
{
	char *end;
	long  v;

	if (s == NULL || *s == '\0')
		return -1;
	errno = 0;
	v = strtol(s, &end, 10);
	if (errno != 0 || *end != '\0' || v < lo || v > hi)
		return -1;
	*out = v;
	return 0;
}

static int
config_parse_bool(const char *s, int *out)
{
	if (s == NULL || strcmp(s, "true") == 0 || strcmp(s, "1") == 0 || strcmp(s, "t") == 0 ||
	    strcmp(s, "True") == 0 || strcmp(s, "TRUE") == 0) {
		*out = 1;
		return 0;
	}
	if (strcmp(s, "false") == 0 || strcmp(s, "0") == 0 || strcmp(s, "f") == 0 ||
	    strcmp(s, "False") == 0 || strcmp(s, "FALSE") == 0) {
		*out = 0;
		return 0;
	}
	return -1;
}

/* "sig=value,..." with a known eviction signal and a duration (durations) or a quantity. */
static int
config_parse_sigmap(const char *s, int durations, struct kvlist *out, char *err, size_t errlen)
{
	static const char *const sigs[] = { "memory.available", "nodefs.available",
		"nodefs.inodesFree", "imagefs.available", "imagefs.inodesFree", "pid.available" };
	char                    *copy = xstrdup(s), *item, *save = NULL, *eq;
	int64_t                  v;
	size_t                   i;
	int                      rc = 0;

	for (item = strtok_r(copy, ",", &save); item != NULL; item = strtok_r(NULL, ",", &save)) {
		if ((eq = strchr(item, '=')) == NULL) {
			rc = config_errf(err, errlen, "\"%s\": expected SIGNAL=%s", item,
			    durations ? "DURATION" : "QUANTITY");
			break;
		}
		*eq++ = '\0';
		for (i = 0; i < nitems(sigs) && strcmp(sigs[i], item) != 0; i++)
			;
		if (i == nitems(sigs)) {
			rc = config_errf(err, errlen, "\"%s\": unknown eviction signal", item);
			break;
		}
		if (durations
		        ? config_parse_duration(eq, &v) < 0 || v < 0
		        : (eq[strlen(eq) - 1] != '%' && (quantity_parse(eq, &v) < 0 || v < 0))) {
			rc = config_errf(err, errlen, "%s: \"%s\" is not a %s", item, eq,
			    durations ? "duration" : "quantity");
			break;
		}
		kvlist_set(out, item, eq);
	}
	free(copy);
	return rc;
}

static void
config_set_str(char **dst, const char *v)
{
	free(*dst);
	*dst = xstrdup(v);
}

/* Applies one setting. what names it in errors ("flag --max-pods", "field maxPods in F"). */
int
config_apply(
    struct klet_config *cfg, int id, const char *val, const char *what, char *err, size_t errlen)
{
	char    sub[256];
	long    n;
	int64_t ms;

	switch (id) {
	case O_CONFIG:
		config_set_str(&cfg->config_file, val);
		break;
	case O_NODE_STATUS_FREQ:
		if (config_parse_duration(val, &ms) == -1 || ms <= 0)
			return config_errf(
			    err, errlen, "%s: expected a positive duration such as 10s", what);
		cfg->node_status_ms = ms;
		break;
	case O_LEASE_DURATION:
		if (config_parse_int(val, 1, 3600, &n) == -1)
			return config_errf(
			    err, errlen, "%s: expected an integer from 1 to 3600", what);
		cfg->lease_duration_s = (int32_t)n;
		break;
	case O_KUBECONFIG:
		config_set_str(&cfg->kubeconfig, val);
		break;
	case O_BOOTSTRAP_KUBECONFIG:
		config_set_str(&cfg->bootstrap_kubeconfig, val);
		break;
	case O_ROTATE_CERTIFICATES:
		if (config_parse_bool(val, &cfg->rotate_certificates) == -1)
			return config_errf(err, errlen,
			    "invalid value \"%s\" for %s: expected true or false", val, what);
		break;
	case O_HOSTNAME_OVERRIDE:
		if (!config_dns_subdomain_ok(val, strlen(val)))
			return config_errf(err, errlen,
			    "invalid value \"%s\" for %s: not a DNS subdomain "
			    "(lower case letters, digits, '-' and '.')",
			    val, what);
		config_set_str(&cfg->hostname_override, val);
		break;
	case O_MANIFEST_PATH:
		config_set_str(&cfg->pod_manifest_path, val);
		break;
	case O_RUNTIME_ENDPOINT:
		if (strncmp(val, "unix://", 7) != 0 && val[0] != '/')
			return config_errf(err, errlen,
			    "invalid value \"%s\" for %s: expected unix:///path", val, what);
		if (strncmp(val, "unix://", 7) == 0 && val[7] != '/')
			return config_errf(err, errlen,
			    "invalid value \"%s\" for %s: the socket path must "
			    "be absolute (unix:///path)",
			    val, what);
		config_set_str(&cfg->runtime_endpoint, val);
		break;
	case O_ROOT_DIR:
		if (*val == '\0')
			return config_errf(
			    err, errlen, "invalid value \"\" for %s: empty path", what);
		config_set_str(&cfg->root_dir, val);
		break;
	case O_POD_LOGS_DIR:
		if (val[0] != '/')
			return config_errf(err, errlen,
			    "invalid value \"%s\" for %s: must be an absolute path", val, what);
		config_set_str(&cfg->pod_logs_dir, val);
		break;
	case O_CGROUP_ROOT:
		if (val[0] != '/' || strstr(val, "/..") != NULL || strstr(val, "//") != NULL)
			return config_errf(err, errlen,
			    "invalid value \"%s\" for %s: must be an absolute "
			    "cgroup path without '..' or '//'",
			    val, what);
		config_set_str(&cfg->cgroup_root, val);
		break;
	case O_POD_INFRA_IMAGE:
		config_set_str(&cfg->pod_infra_image, val);
		break;
	case O_RESOLV_CONF:
		config_set_str(&cfg->resolv_conf, val);
		break;
	case O_ADDRESS:
	case O_HEALTHZ_ADDRESS: {
		unsigned char buf[16];

		if (inet_pton(AF_INET, val, buf) != 1 && inet_pton(AF_INET6, val, buf) != 1)
			return config_errf(err, errlen,
			    "invalid value \"%s\" for %s: not an IP address", val, what);
		config_set_str(id == O_ADDRESS ? &cfg->address : &cfg->healthz_bind_address, val);
		break;
	}
	case O_PORT:
	case O_HEALTHZ_PORT:
	case O_READ_ONLY_PORT:
		if (config_parse_int(val, 0, 65535, &n) == -1)
			return config_errf(err, errlen,
			    "invalid value \"%s\" for %s: expected a port from 0 to 65535", val,
			    what);
		if (id == O_PORT)
			cfg->port = (int)n;
		else if (id == O_HEALTHZ_PORT)
			cfg->healthz_port = (int)n;
		else
			cfg->read_only_port = (int)n;
		break;
	case O_TLS_CERT:
		config_set_str(&cfg->tls_cert_file, val);
		break;
	case O_TLS_KEY:
		config_set_str(&cfg->tls_key_file, val);
		break;
	case O_CLIENT_CA:
		config_set_str(&cfg->client_ca_file, val);
		break;
	case O_ANONYMOUS_AUTH:
	case O_AUTHN_WEBHOOK:
		if (config_parse_bool(val,
		        id == O_ANONYMOUS_AUTH ? &cfg->anonymous_auth : &cfg->authn_webhook) == -1)
			return config_errf(err, errlen,
			    "invalid value \"%s\" for %s: expected true or false", val, what);
		break;
	case O_AUTHZ_MODE:
		if (strcmp(val, "AlwaysAllow") == 0)
			cfg->authz_webhook = 0;
		else if (strcmp(val, "Webhook") == 0)
			cfg->authz_webhook = 1;
		else
			return config_errf(err, errlen,
			    "invalid value \"%s\" for %s: expected AlwaysAllow or Webhook", val,
			    what);
		break;
	case O_MAX_STREAMS:
		if (config_parse_int(val, 1, 100000, &n) == -1)
			return config_errf(err, errlen,
			    "invalid value \"%s\" for %s: expected an integer from 1 to 100000",
			    val, what);
		cfg->server_max_streams = (int)n;
		break;
	case O_STREAMING_IDLE:
		if (config_parse_duration(val, &ms) == -1 || ms <= 0)
			return config_errf(err, errlen,
			    "invalid value \"%s\" for %s: expected a positive duration such as 4h",
			    val, what);
		cfg->streaming_idle_ms = ms;
		break;
	case O_RUNTIME_WINDOW:
		if (config_parse_int(val, 1, 4096, &n) == -1)
			return config_errf(err, errlen,
			    "invalid value \"%s\" for %s: expected an integer "
			    "from 1 to 4096",
			    val, what);
		cfg->runtime_window = (unsigned)n;
		break;
	case O_MAX_PODS:
		if (config_parse_int(val, 1, 10000, &n) == -1)
			return config_errf(err, errlen,
			    "invalid value \"%s\" for %s: expected an integer "
			    "from 1 to 10000",
			    val, what);
		cfg->max_pods = (int)n;
		break;
	case O_NODE_LABELS:
		if (config_parse_labels(val, &cfg->node_labels, sub, sizeof(sub)) == -1)
			return config_errf(err, errlen, "invalid value for %s: %s", what, sub);
		break;
	case O_REGISTER_NODE:
		if (config_parse_bool(val, &cfg->register_node) == -1)
			return config_errf(err, errlen,
			    "invalid value \"%s\" for %s: expected true or false", val, what);
		break;
	case O_CLUSTER_DNS: {
		char         *copy = xstrdup(val), *p = copy, *ip;
		unsigned char buf[16];
		int           rc = 0;

		strv_clear(&cfg->cluster_dns);
		while ((ip = strsep(&p, ",")) != NULL) {
			if (*ip == '\0')
				continue;
			if (inet_pton(AF_INET, ip, buf) != 1 && inet_pton(AF_INET6, ip, buf) != 1) {
				rc = config_errf(err, errlen,
				    "invalid value \"%s\" for %s: \"%s\" is not an "
				    "IP address",
				    val, what, ip);
				break;
			}
			config_strv_push(&cfg->cluster_dns, ip);
		}
		free(copy);
		if (rc == -1)
			return -1;
		break;
	}
	case O_CLUSTER_DOMAIN:
		if (*val != '\0' && !config_dns_subdomain_ok(val, strlen(val)))
			return config_errf(err, errlen,
			    "invalid value \"%s\" for %s: not a DNS domain", val, what);
		config_set_str(&cfg->cluster_domain, val);
		break;
	case O_FILE_CHECK:
	case O_SYNC_FREQ:
	case O_RUNTIME_TIMEOUT:
		if (config_parse_duration(val, &ms) == -1 || ms <= 0)
			return config_errf(err, errlen,
			    "invalid value \"%s\" for %s: expected a positive "
			    "duration such as 20s, 1m30s or 500ms",
			    val, what);
		if (id == O_FILE_CHECK)
			cfg->file_check_ms = ms;
		else if (id == O_SYNC_FREQ)
			cfg->sync_ms = ms;
		else
			cfg->runtime_timeout_ms = ms;
		break;
	case O_LOGGING_FORMAT:
		if (strcmp(val, "text") == 0)
			cfg->log_json = 0;
		else if (strcmp(val, "json") == 0)
			cfg->log_json = 1;
		else
			return config_errf(err, errlen,
			    "invalid value \"%s\" for %s: expected text or json", val, what);
		break;
	case O_LOG_FILE:
		config_set_str(&cfg->log_file, val);
		break;
	case O_LOG_FILE_MAX_SIZE:
		if (config_parse_int(val, 0, 1024 * 1024, &n) == -1)
			return config_errf(err, errlen,
			    "invalid value \"%s\" for %s: expected a number of megabytes from 0 "
			    "(no limit) to 1048576",
			    val, what);
		cfg->log_file_max_mb = n;
		break;
	case O_SHUTDOWN_GRACE:
	case O_SHUTDOWN_GRACE_CRITICAL:
		/* The kubelet counts whole seconds (an inhibitor delay, pods' grace). */
		if (config_parse_duration(val, &ms) == -1 || ms < 0 || ms % 1000 != 0 ||
		    ms > 24 * 3600 * 1000LL)
			return config_errf(err, errlen,
			    "invalid value \"%s\" for %s: expected a duration in whole seconds "
			    "such as 30s or 2m, at most 24h",
			    val, what);
		if (id == O_SHUTDOWN_GRACE)
			cfg->shutdown_grace_ms = ms;
		else
			cfg->shutdown_grace_critical_ms = ms;
		break;
	case O_CTL_SOCKET:
		config_set_str(&cfg->ctl_socket, val);
		break;
	case O_CTL_GROUP:
		config_set_str(&cfg->ctl_group, val);
		break;
	case O_KUBE_RESERVED:
	case O_SYSTEM_RESERVED: {
		struct resource_list *rl =
		    id == O_KUBE_RESERVED ? &cfg->kube_reserved : &cfg->system_reserved;

		resource_list_clear(rl);
		if (config_parse_reserved(val, rl, sub, sizeof(sub)) == -1)
			return config_errf(err, errlen, "invalid value for %s: %s", what, sub);
		break;
	}
	case O_EVICTION_HARD:
		kvlist_clear(&cfg->eviction_hard);
		if (config_parse_eviction(val, &cfg->eviction_hard, sub, sizeof(sub)) == -1)
			return config_errf(err, errlen, "invalid value for %s: %s", what, sub);
		break;
	case O_EVICTION_SOFT:
		kvlist_clear(&cfg->eviction_soft);
		if (config_parse_eviction(val, &cfg->eviction_soft, sub, sizeof(sub)) == -1)
			return config_errf(err, errlen, "invalid value for %s: %s", what, sub);
		break;
	case O_EVICTION_SOFT_GRACE:
	case O_EVICTION_MIN_RECLAIM: {
		struct kvlist *kl = id == O_EVICTION_SOFT_GRACE ? &cfg->eviction_soft_grace
		                                                : &cfg->eviction_min_reclaim;

		kvlist_clear(kl);
		if (config_parse_sigmap(val, id == O_EVICTION_SOFT_GRACE, kl, sub, sizeof(sub)) ==
		    -1)
			return config_errf(err, errlen, "invalid value for %s: %s", what, sub);
		break;
	}
	case O_EVICTION_TRANSITION:
	case O_IMAGE_GC_AGE:
	case O_IMAGE_GC_MAX_AGE:
	case O_CONTAINER_GC_AGE:
	case O_EVICTION_MONITOR:
		if (config_parse_duration(val, &ms) == -1 || ms < 0 ||
		    (id == O_EVICTION_MONITOR && ms < 100))
			return config_errf(err, errlen,
			    "invalid value \"%s\" for %s: expected a duration such as 5m or 30s%s",
			    val, what, id == O_EVICTION_MONITOR ? " (at least 100ms)" : "");
		if (id == O_EVICTION_TRANSITION)
			cfg->eviction_transition_ms = ms;
		else if (id == O_IMAGE_GC_AGE)
			cfg->image_gc_min_age_ms = ms;
		else if (id == O_IMAGE_GC_MAX_AGE)
			cfg->image_gc_max_age_ms = ms;
		else if (id == O_CONTAINER_GC_AGE)
			cfg->container_gc_min_age_ms = ms;
		else
			cfg->eviction_monitor_ms = ms;
		break;
	case O_CONTAINER_GC_PER:
	case O_CONTAINER_GC_MAX:
		/* The kubelet's int32 flags; a negative value lifts the limit. */
		if (config_parse_int(val, INT32_MIN, INT32_MAX, &n) == -1)
			return config_errf(err, errlen,
			    "invalid value \"%s\" for %s: expected an integer", val, what);
		if (id == O_CONTAINER_GC_PER)
			cfg->container_gc_max_per = (int)n;
		else
			cfg->container_gc_max_total = (int)n;
		break;
	case O_EVICTION_MAX_GRACE:
		if (config_parse_int(val, -1, 1000000000, &n) == -1)
			return config_errf(err, errlen,
			    "invalid value \"%s\" for %s: expected a number of seconds", val, what);
		cfg->eviction_max_grace_s = n;
		break;
	case O_IMAGE_GC_HIGH:
	case O_IMAGE_GC_LOW:
		if (config_parse_int(val, 0, 100, &n) == -1)
			return config_errf(err, errlen,
			    "invalid value \"%s\" for %s: expected a percentage from 0 to 100", val,
			    what);
		if (id == O_IMAGE_GC_HIGH)
			cfg->image_gc_high = (int)n;
		else
			cfg->image_gc_low = (int)n;
		break;
	case O_CGROUP_DRIVER:
		if (strcmp(val, "cgroupfs") == 0)
			cfg->cgroup_systemd = 0;
		else if (strcmp(val, "systemd") == 0)
			cfg->cgroup_systemd = 1;
		else
			return config_errf(err, errlen,
			    "invalid value \"%s\" for %s: expected cgroupfs or systemd", val, what);
		break;
	case O_CGROUPS_PER_QOS:
		if (config_parse_bool(val, &cfg->cgroups_per_qos) == -1)
			return config_errf(err, errlen,
			    "invalid value \"%s\" for %s: expected true or false", val, what);
		break;
	case O_REGISTER_TAINTS:
		config_cfg_taints_clear(&cfg->taints, &cfg->ntaints);
		if (config_parse_taints(val, &cfg->taints, &cfg->ntaints, sub, sizeof(sub)) == -1)
			return config_errf(err, errlen, "invalid value for %s: %s", what, sub);
		break;
	case O_RUNTIME_HANDLER: {
		const char *eq = strchr(val, '=');
		char       *name;

		if (eq == NULL || eq == val || eq[1] == '\0')
			return config_errf(err, errlen,
			    "invalid value \"%s\" for %s: expected "
			    "RUNTIMECLASS=HANDLER",
			    val, what);
		name = xstrndup(val, (size_t)(eq - val));
		kvlist_set(&cfg->runtime_handlers, name, eq + 1);
		free(name);
		break;
	}
	case O_LOG_MAX_SIZE: {
		int64_t milli;

		if (quantity_parse(val, &milli) == -1 || (milli >= 0 && milli < 1000 * 1024))
			return config_errf(err, errlen,
			    "invalid value \"%s\" for %s: expected a size such "
			    "as 10Mi (at least 1Ki), or -1",
			    val, what);
		cfg->log_max_size = milli < 0 ? -1 : milli / 1000;
		break;
	}
	case O_LOG_MAX_FILES:
		if (config_parse_int(val, 2, 1000, &n) == -1)
			return config_errf(err, errlen,
			    "invalid value \"%s\" for %s: expected an integer "
			    "from 2 to 1000",
			    val, what);
		cfg->log_max_files = (int)n;
		break;
	case O_LOG_MONITOR:
		if (config_parse_duration(val, &ms) == -1 || ms < 100)
			return config_errf(err, errlen,
			    "invalid value \"%s\" for %s: expected a duration "
			    "of at least 100ms",
			    val, what);
		cfg->log_monitor_ms = ms;
		break;
	case O_V:
		if (*val == '=')
			val++;
		if (config_parse_int(val, 0, 10, &n) == -1)
			return config_errf(err, errlen,
			    "invalid value \"%s\" for %s: expected an integer "
			    "from 0 to 10",
			    val, what);
		cfg->verbosity = (int)n;
		break;
	default:
		fatalx("%s: unknown option id %d", __func__, id);
	}
	return 0;
}

static void
config_defaults(struct klet_config *cfg)
{
	memset(cfg, 0, sizeof(*cfg));
	cfg->runtime_endpoint = xstrdup("unix:///run/containerd/containerd.sock");
	cfg->root_dir = xstrdup("/var/lib/klet");
	cfg->pod_logs_dir = xstrdup("/var/log/pods");
	cfg->cgroup_root = xstrdup("/");
	cfg->resolv_conf = xstrdup("/etc/resolv.conf");
	cfg->pod_infra_image = xstrdup("registry.k8s.io/pause:3.9");
	cfg->cluster_domain = xstrdup("");
	cfg->max_pods = 110;
	/* The kubelet's default hard eviction thresholds (Linux). */
	kvlist_set(&cfg->eviction_hard, "memory.available", "100Mi");
	kvlist_set(&cfg->eviction_hard, "nodefs.available", "10%");
	kvlist_set(&cfg->eviction_hard, "nodefs.inodesFree", "5%");
	kvlist_set(&cfg->eviction_hard, "imagefs.available", "15%");
	cfg->register_node = 1;
	cfg->cgroups_per_qos = 1;
	cfg->eviction_transition_ms = 5 * 60000;
	cfg->eviction_monitor_ms = 10000;
	cfg->image_gc_high = 85;
	cfg->image_gc_low = 80;
	cfg->image_gc_min_age_ms = 2 * 60000;
	cfg->container_gc_max_per = 1; /* the kubelet's MaxPerPodContainerCount */
	cfg->container_gc_max_total = -1;
	cfg->file_check_ms = 20000;
	cfg->sync_ms = 60000;
	cfg->runtime_timeout_ms = 120000;
	cfg->runtime_window = CONFIG_RUNTIME_WINDOW;
	cfg->node_status_ms = 10000;
	cfg->lease_duration_s = 40;
	cfg->log_max_size = 10 * 1024 * 1024;
	cfg->log_max_files = 5;
	cfg->log_monitor_ms = 10000;
	cfg->address = xstrdup("0.0.0.0");
	cfg->port = 10250;
	cfg->healthz_bind_address = xstrdup("127.0.0.1");
	cfg->healthz_port = 10248;
	cfg->server_max_streams = 64;
	cfg->streaming_idle_ms = 4 * 3600 * 1000;
	cfg->log_file_max_mb = 1800; /* klog's */
}

struct flag_val {
	int   id;
	char *val;
};

enum config_result
config_load(struct klet_config *cfg, int argc, char **argv, char *err, size_t errlen)
{
	struct flag_val   *flags = NULL;
	size_t             nflags = 0, i;
	char               what[64], host[256];
	const char        *config_path = NULL;
	enum config_result res = CONFIG_OK;
	int                c, idx;

	config_defaults(cfg);
	opterr = 0;
	optind = 0; /* glibc: full re-initialisation */
	while ((c = getopt_long_only(argc, argv, "+hv:", longopts, &idx)) != -1) {
		if (c == '?') {
			if (optopt != 0 && optopt != '?')
				config_errf(err, errlen, "flag -%s: %s", config_opt_name(optopt),
				    "requires a value");
			else
				config_errf(err, errlen, "unknown flag: %s", argv[optind - 1]);
			res = CONFIG_ERROR;
			goto out;
		}
		if (c == ':') {
			config_errf(err, errlen, "flag %s: requires a value", argv[optind - 1]);
			res = CONFIG_ERROR;
			goto out;
		}
		if (c == O_HELP) {
			config_usage(stdout);
			res = CONFIG_EXIT;
			goto out;
		}
		if (c == O_VERSION) {
			printf("kletd %s\n", KLET_VERSION);
			res = CONFIG_EXIT;
			goto out;
		}
		flags = xreallocarray(flags, nflags + 1, sizeof(*flags));
		flags[nflags].id = c;
		flags[nflags].val = xstrdup(optarg);
		nflags++;
		if (c == O_CONFIG)
			config_path = optarg;
	}
	if (optind < argc) {
		config_errf(err, errlen, "unexpected argument: %s", argv[optind]);
		res = CONFIG_ERROR;
		goto out;
	}
	if (config_path != NULL) {
		config_set_str(&cfg->config_file, config_path);
		struct config_settings set = { NULL, 0 };

		if (config_file_read(config_path, &set, err, errlen) == -1) {
			res = CONFIG_ERROR;
			goto out;
		}
		for (i = 0; i < set.n; i++)
			if (config_apply(
			        cfg, set.v[i].id, set.v[i].val, set.v[i].what, err, errlen) == -1) {
				res = CONFIG_ERROR;
				break;
			}
		config_settings_clear(&set);
		if (res == CONFIG_ERROR)
			goto out;
	}
	for (i = 0; i < nflags; i++) {
		const char *v = flags[i].val;

		if (flags[i].id == O_V)
			snprintf(what, sizeof(what), "flag -v");
		else
			snprintf(what, sizeof(what), "flag --%s", config_opt_name(flags[i].id));
		if (config_apply(cfg, flags[i].id, v, what, err, errlen) == -1) {
			res = CONFIG_ERROR;
			goto out;
		}
	}
	for (i = 0; i < cfg->eviction_soft.n; i++)
		if (kvlist_get(&cfg->eviction_soft_grace, cfg->eviction_soft.items[i].k) == NULL) {
			/* As the kubelet: every soft threshold needs its grace period. */
			config_errf(err, errlen,
			    "flag --eviction-soft: grace period must be specified for the soft "
			    "eviction threshold %s (--eviction-soft-grace-period)",
			    cfg->eviction_soft.items[i].k);
			res = CONFIG_ERROR;
			goto out;
		}
	if (cfg->shutdown_grace_critical_ms > cfg->shutdown_grace_ms) {
		/* The kubelet's validation. */
		config_errf(err, errlen,
		    "shutdownGracePeriodCriticalPods (%llds) must be <= shutdownGracePeriod "
		    "(%llds)",
		    (long long)(cfg->shutdown_grace_critical_ms / 1000),
		    (long long)(cfg->shutdown_grace_ms / 1000));
		res = CONFIG_ERROR;
		goto out;
	}
	if (cfg->image_gc_low >= cfg->image_gc_high) {
		/* As the kubelet's configuration validation. */
		config_errf(err, errlen,
		    "invalid configuration: imageGCLowThresholdPercent (--image-gc-low-threshold) "
		    "%d must be less than imageGCHighThresholdPercent (--image-gc-high-threshold) "
		    "%d",
		    cfg->image_gc_low, cfg->image_gc_high);
		res = CONFIG_ERROR;
		goto out;
	}
	if (cfg->image_gc_max_age_ms > 0 && cfg->image_gc_max_age_ms <= cfg->image_gc_min_age_ms) {
		char a[32], b[32];

		/* As the kubelet's configuration validation. */
		config_go_duration(cfg->image_gc_max_age_ms, a, sizeof(a));
		config_go_duration(cfg->image_gc_min_age_ms, b, sizeof(b));
		config_errf(err, errlen,
		    "invalid configuration: imageMaximumGCAge %s must be greater than "
		    "imageMinimumGCAge %s",
		    a, b);
		res = CONFIG_ERROR;
		goto out;
	}
	if (cfg->hostname_override != NULL)
		cfg->node_name = xstrdup(cfg->hostname_override);
	else {
		if (gethostname(host, sizeof(host)) == -1)
			snprintf(host, sizeof(host), "localhost");
		host[sizeof(host) - 1] = '\0';
		for (i = 0; host[i] != '\0'; i++)
			host[i] = (char)tolower((unsigned char)host[i]);
		cfg->node_name = xstrdup(host);
	}
	if (cfg->ctl_socket == NULL)
		xasprintf(&cfg->ctl_socket, "%s/podctl.sock", cfg->root_dir);
	if (cfg->bootstrap_kubeconfig != NULL &&
	    (cfg->kubeconfig == NULL || *cfg->kubeconfig == '\0')) {
		config_errf(err, errlen,
		    "flag --bootstrap-kubeconfig: needs --kubeconfig, the path where the "
		    "kubeconfig it obtains is written");
		res = CONFIG_ERROR;
	}
out:
	for (i = 0; i < nflags; i++)
		free(flags[i].val);
	free(flags);
	return res;
}

void
config_clear(struct klet_config *cfg)
{
	resource_list_clear(&cfg->kube_reserved);
	resource_list_clear(&cfg->system_reserved);
	kvlist_clear(&cfg->eviction_hard);
	kvlist_clear(&cfg->eviction_soft);
	kvlist_clear(&cfg->eviction_soft_grace);
	kvlist_clear(&cfg->eviction_min_reclaim);
	config_cfg_taints_clear(&cfg->taints, &cfg->ntaints);
	free(cfg->config_file);
	free(cfg->kubeconfig);
	free(cfg->bootstrap_kubeconfig);
	free(cfg->hostname_override);
	free(cfg->node_name);
	free(cfg->pod_manifest_path);
	free(cfg->runtime_endpoint);
	free(cfg->root_dir);
	free(cfg->pod_logs_dir);
	free(cfg->cgroup_root);
	free(cfg->resolv_conf);
	free(cfg->pod_infra_image);
	free(cfg->cluster_domain);
	strv_clear(&cfg->cluster_dns);
	kvlist_clear(&cfg->node_labels);
	kvlist_clear(&cfg->runtime_handlers);
	free(cfg->log_file);
	free(cfg->ctl_socket);
	free(cfg->ctl_group);
	free(cfg->address);
	free(cfg->healthz_bind_address);
	free(cfg->tls_cert_file);
	free(cfg->tls_key_file);
	free(cfg->client_ca_file);
	memset(cfg, 0, sizeof(*cfg));
}
