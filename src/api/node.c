/* node.c — node registration, node status and the Lease heartbeat (see node.h). */
#include <sys/socket.h>
#include <sys/time.h>
#include <sys/utsname.h>

#include <arpa/inet.h>
#include <ifaddrs.h>
#include <net/if.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <event2/event.h>

#include "client/api.h"
#include "core/json.h"
#include "core/log.h"
#include "core/loop.h"
#include "api/node.h"
#include "core/util.h"
#include "logic/admit.h"
#include "node/nodeinfo.h"
#include "pod/rfc3339.h"

#define LEASE_NS "kube-node-lease"

struct cond {
	const char *type;
	int         status; /* 1 True, 0 False */
	const char *reason;
	char        message[256];
	int64_t     transition;
};

struct node {
	struct event_base          *n_base;
	char                        n_ip[INET6_ADDRSTRLEN]; /* the InternalIP address */
	struct api                 *n_api;
	char                       *n_name;
	struct kvlist               n_labels;
	int                         n_max_pods;
	const struct nodeinfo_opts *n_resources; /* reservations and hard thresholds (options') */
	const int                  *n_kubelet_port;
	char                       *n_root;
	int                         n_register;
	int64_t                     n_check_ms;
	int64_t                     n_report_ms;
	int64_t                     n_lease_ms;
	int32_t                     n_lease_s;
	char                       *n_kver;
	char                       *n_uid;
	int                         n_registered;
	struct api_call            *n_reg_call;
	struct api_call            *n_status_call;
	struct api_call            *n_lease_call;
	struct event               *n_status_ev;
	struct event               *n_lease_ev;
	struct event               *n_kick_ev;
	char                       *n_lease_rv;
	int                n_lease_known; /* the lease exists (n_lease_rv is its version) */
	char              *n_last_status; /* last status sent, without heartbeat times */
	int64_t            n_last_report_ms;
	int                n_runtime_ready;
	char              *n_runtime_msg;
	int                n_pleg_ok;
	char              *n_pleg_msg;
	char              *n_rt_version; /* "containerd://1.6.20" */
	struct cond        n_conds[4];
	struct node_stats  n_stats;
	int                n_pressure_set; /* the eviction manager reports (node_set_pressure) */
	unsigned           n_pressure;     /* 1 memory, 2 disk, 4 pid */
	struct node_image *n_images;       /* status.images (node_set_images) */
	size_t             n_nimages;
	int                n_shutting_down; /* node_set_shutting_down */
};

static void node_register(struct node *);
static void node_images_clear(struct node_image *, size_t);
static void node_status_check(struct node *);
static void node_lease_renew(struct node *);

const char *
node_go_arch(const char *m)
{
	static const struct {
		const char *u, *g;
	} map[] = {
		{ "x86_64", "amd64" },
		{ "aarch64", "arm64" },
		{ "armv7l", "arm" },
		{ "armv6l", "arm" },
		{ "i686", "386" },
		{ "i386", "386" },
		{ "ppc64le", "ppc64le" },
		{ "s390x", "s390x" },
		{ "riscv64", "riscv64" },
	};
	size_t i;

	for (i = 0; i < nitems(map); i++)
		if (strcmp(m, map[i].u) == 0)
			return map[i].g;
	return m;
}

int
node_read_os_image(const char *path, char *out, size_t len)
{
	char  line[512];
	FILE *f = fopen(path, "r");
	int   rc = -1;

	if (f == NULL)
		return -1;
	while (fgets(line, sizeof(line), f) != NULL) {
		char  *v;
		size_t n;

		if (strncmp(line, "PRETTY_NAME=", 12) != 0)
			continue;
		v = line + 12;
		n = strcspn(v, "\n");
		v[n] = '\0';
		if (n >= 2 && (v[0] == '"' || v[0] == '\'') && v[n - 1] == v[0]) {
			v[n - 1] = '\0';
			v++;
		}
		snprintf(out, len, "%s", v);
		rc = 0;
		break;
	}
	fclose(f);
	return rc;
}

static char *
node_read_line_file(const char *path)
{
	char  buf[256];
	FILE *f = fopen(path, "r");

	if (f == NULL)
		return NULL;
	if (fgets(buf, sizeof(buf), f) == NULL) {
		fclose(f);
		return NULL;
	}
	fclose(f);
	buf[strcspn(buf, "\n")] = '\0';
	return xstrdup(buf);
}

static void
node_rfc3339_now(char *buf, size_t len, int micro)
{
	struct timeval tv;
	struct tm      tm;

	gettimeofday(&tv, NULL);
	gmtime_r(&tv.tv_sec, &tm);
	if (micro) {
		char secs[24];

		/* strftime bounds the date part; the microseconds are always 6 digits. */
		strftime(secs, sizeof(secs), "%Y-%m-%dT%H:%M:%S", &tm);
		snprintf(buf, len, "%s.%06dZ", secs, (int)(tv.tv_usec % 1000000));
	} else
		strftime(buf, len, "%Y-%m-%dT%H:%M:%SZ", &tm);
}

static void
node_gen_quantity_bytes(yajl_gen g, const char *key, int64_t bytes)
{
	char v[64];

	if (bytes % 1024 == 0)
		snprintf(v, sizeof(v), "%lldKi", (long long)(bytes / 1024));
	else
		snprintf(v, sizeof(v), "%lld", (long long)bytes);
	json_gen_kv_str(g, key, v);
}

static void
node_gen_labels(struct node *n, yajl_gen g)
{
	struct utsname u;
	const char    *arch;
	size_t         i;

	uname(&u);
	arch = node_go_arch(u.machine);
	json_gen_key(g, "labels");
	yajl_gen_map_open(g);
	json_gen_kv_str(g, "beta.kubernetes.io/arch", arch);
	json_gen_kv_str(g, "beta.kubernetes.io/os", "linux");
	json_gen_kv_str(g, "kubernetes.io/arch", arch);
	json_gen_kv_str(g, "kubernetes.io/hostname", n->n_name);
	json_gen_kv_str(g, "kubernetes.io/os", "linux");
	for (i = 0; i < n->n_labels.n; i++)
		json_gen_kv_str(g, n->n_labels.items[i].k,
		    n->n_labels.items[i].v ? n->n_labels.items[i].v : "");
	yajl_gen_map_close(g);
}

/* The eviction manager's view, when it reports, replaces the fixed thresholds. */
static void
node_eviction_view(struct node *n, struct cond *nc)
{
	if (!n->n_pressure_set)
		return;
	nc[0].status = (n->n_pressure & 1) != 0;
	nc[0].reason = nc[0].status ? "KubeletHasInsufficientMemory" : "KubeletHasSufficientMemory";
	snprintf(nc[0].message, sizeof(nc[0].message), "kubelet has %s memory available",
	    nc[0].status ? "insufficient" : "sufficient");
	nc[1].status = (n->n_pressure & 2) != 0;
	nc[1].reason = nc[1].status ? "KubeletHasDiskPressure" : "KubeletHasNoDiskPressure";
	snprintf(nc[1].message, sizeof(nc[1].message),
	    nc[1].status ? "kubelet has disk pressure" : "kubelet has no disk pressure");
	nc[2].status = (n->n_pressure & 4) != 0;
	nc[2].reason = nc[2].status ? "KubeletHasInsufficientPID" : "KubeletHasSufficientPID";
	snprintf(nc[2].message, sizeof(nc[2].message), "kubelet has %s PID available",
	    nc[2].status ? "insufficient" : "sufficient");
}

/* Updates the conditions from the host's figures (ni, h) and the health inputs. Until the
 * eviction manager reports (node_set_pressure), the pressure is the hard thresholds'. */
static void
node_eval_conditions(struct node *n, const struct nodeinfo *ni, const struct nodeinfo_host *h)
{
	int64_t     now = (int64_t)time(NULL);
	struct cond nc[4];
	size_t      i;

	memset(nc, 0, sizeof(nc));
	nc[0].type = "MemoryPressure";
	nc[0].status = (ni->pressure & ADMIT_MEMORY_PRESSURE) != 0;
	nc[0].reason = nc[0].status ? "KubeletHasInsufficientMemory" : "KubeletHasSufficientMemory";
	snprintf(nc[0].message, sizeof(nc[0].message), "kubelet has %s memory available",
	    nc[0].status ? "insufficient" : "sufficient");
	nc[1].type = "DiskPressure";
	nc[1].status = (ni->pressure & ADMIT_DISK_PRESSURE) != 0;
	nc[1].reason = nc[1].status ? "KubeletHasDiskPressure" : "KubeletHasNoDiskPressure";
	snprintf(nc[1].message, sizeof(nc[1].message),
	    nc[1].status ? "kubelet has disk pressure" : "kubelet has no disk pressure");
	nc[2].type = "PIDPressure";
	nc[2].status = (ni->pressure & ADMIT_PID_PRESSURE) != 0;
	nc[2].reason = nc[2].status ? "KubeletHasInsufficientPID" : "KubeletHasSufficientPID";
	if (nc[2].status)
		snprintf(nc[2].message, sizeof(nc[2].message), "%lld of %lld process IDs in use",
		    (long long)h->pids, (long long)h->pid_max);
	else
		snprintf(
		    nc[2].message, sizeof(nc[2].message), "kubelet has sufficient PID available");
	node_eviction_view(n, nc);
	nc[3].type = "Ready";
	if (!n->n_runtime_ready) {
		nc[3].status = 0;
		nc[3].reason = "KubeletNotReady";
		snprintf(nc[3].message, sizeof(nc[3].message), "container runtime is down: %s",
		    n->n_runtime_msg ? n->n_runtime_msg : "not answering");
	} else if (!n->n_pleg_ok) {
		nc[3].status = 0;
		nc[3].reason = "KubeletNotReady";
		snprintf(nc[3].message, sizeof(nc[3].message), "PLEG is not healthy: %s",
		    n->n_pleg_msg ? n->n_pleg_msg : "relist stalled");
	} else if (n->n_shutting_down) {
		nc[3].status = 0; /* the node shutdown manager's ShutdownStatus */
		nc[3].reason = "KubeletNotReady";
		snprintf(nc[3].message, sizeof(nc[3].message), "node is shutting down");
	} else {
		nc[3].status = 1;
		nc[3].reason = "KubeletReady";
		snprintf(nc[3].message, sizeof(nc[3].message), "kubelet is posting ready status");
	}
	for (i = 0; i < 4; i++) {
		nc[i].transition =
		    n->n_conds[i].type != NULL && n->n_conds[i].status == nc[i].status
		    ? n->n_conds[i].transition
		    : now;
		if (n->n_conds[i].type != NULL && n->n_conds[i].status != nc[i].status)
			log_info("node: condition %s is now %s (%s)", nc[i].type,
			    nc[i].status ? "True" : "False", nc[i].reason);
		n->n_conds[i] = nc[i];
	}
}

/* The node's address (its first non-loopback IPv4 address, else IPv6, else 127.0.0.1): the
 * node status's InternalIP, and the pods' hostIP. */
static void
node_find_ip(struct node *n)
{
	struct ifaddrs *ifa, *i;
	char            ip[INET6_ADDRSTRLEN] = "", ip6[INET6_ADDRSTRLEN] = "";
	void           *sa;

	if (getifaddrs(&ifa) == 0) {
		for (i = ifa; i != NULL; i = i->ifa_next) {
			if (i->ifa_addr == NULL || (i->ifa_flags & IFF_LOOPBACK) ||
			    !(i->ifa_flags & IFF_UP))
				continue;
			sa = i->ifa_addr;
			if (i->ifa_addr->sa_family == AF_INET && ip[0] == '\0')
				inet_ntop(
				    AF_INET, &((struct sockaddr_in *)sa)->sin_addr, ip, sizeof(ip));
			else if (i->ifa_addr->sa_family == AF_INET6 && ip6[0] == '\0') {
				struct in6_addr *a = &((struct sockaddr_in6 *)sa)->sin6_addr;

				if (!IN6_IS_ADDR_LINKLOCAL(a))
					inet_ntop(AF_INET6, a, ip6, sizeof(ip6));
			}
		}
		freeifaddrs(ifa);
	}
	if (ip[0] == '\0')
		snprintf(ip, sizeof(ip), "%s", ip6[0] ? ip6 : "127.0.0.1");
	snprintf(n->n_ip, sizeof(n->n_ip), "%s", ip);
}

static void
node_gen_addresses(struct node *n, yajl_gen g)
{
	const char *ip;

	node_find_ip(n);
	ip = n->n_ip;
	json_gen_key(g, "addresses");
	yajl_gen_array_open(g);
	yajl_gen_map_open(g);
	json_gen_kv_str(g, "address", ip);
	json_gen_kv_str(g, "type", "InternalIP");
	yajl_gen_map_close(g);
	yajl_gen_map_open(g);
	json_gen_kv_str(g, "address", n->n_name);
	json_gen_kv_str(g, "type", "Hostname");
	yajl_gen_map_close(g);
	yajl_gen_array_close(g);
}

/* The node status object; heartbeat 0: without lastHeartbeatTime (for comparisons). */
static void
node_gen_status(struct node *n, yajl_gen g, int heartbeat, const struct nodeinfo *ni)
{
	struct utsname u;
	char           os_image[256] = "Linux", hb[40], ts[40], v[64];
	char          *machine_id, *boot_id, *uuid;
	int64_t        cpu;
	size_t         i;
	int            pass;

	uname(&u);
	node_read_os_image("/etc/os-release", os_image, sizeof(os_image));
	node_rfc3339_now(hb, sizeof(hb), 0);

	/* Allocatable as admission uses it: capacity minus --kube-reserved, --system-reserved
	 * and the hard eviction thresholds (node/nodeinfo.c). */
	yajl_gen_map_open(g);
	for (pass = 0; pass < 2; pass++) {
		json_gen_key(g, pass == 0 ? "capacity" : "allocatable");
		yajl_gen_map_open(g);
		cpu = pass == 0 ? ni->cap_cpu_milli : ni->alloc_cpu_milli;
		if (cpu % 1000 == 0)
			snprintf(v, sizeof(v), "%lld", (long long)(cpu / 1000));
		else
			snprintf(v, sizeof(v), "%lldm", (long long)cpu);
		json_gen_kv_str(g, "cpu", v);
		node_gen_quantity_bytes(
		    g, "ephemeral-storage", pass == 0 ? ni->cap_ephemeral : ni->alloc_ephemeral);
		node_gen_quantity_bytes(g, "memory", pass == 0 ? ni->cap_memory : ni->alloc_memory);
		snprintf(
		    v, sizeof(v), "%lld", (long long)(pass == 0 ? ni->cap_pods : ni->alloc_pods));
		json_gen_kv_str(g, "pods", v);
		yajl_gen_map_close(g);
	}
	json_gen_key(g, "conditions");
	yajl_gen_array_open(g);
	for (i = 0; i < 4; i++) {
		const struct cond *c = &n->n_conds[i];

		yajl_gen_map_open(g);
		json_gen_kv_str(g, "type", c->type);
		json_gen_kv_str(g, "status", c->status ? "True" : "False");
		if (heartbeat)
			json_gen_kv_str(g, "lastHeartbeatTime", hb);
		time_format_rfc3339(c->transition, ts, sizeof(ts));
		json_gen_kv_str(g, "lastTransitionTime", ts);
		json_gen_kv_str(g, "reason", c->reason);
		json_gen_kv_str(g, "message", c->message);
		yajl_gen_map_close(g);
	}
	yajl_gen_array_close(g);
	node_gen_addresses(n, g);
	json_gen_key(g, "daemonEndpoints");
	yajl_gen_map_open(g);
	json_gen_key(g, "kubeletEndpoint");
	yajl_gen_map_open(g);
	json_gen_kv_int(g, "Port",
	    n->n_kubelet_port != NULL && *n->n_kubelet_port > 0 ? *n->n_kubelet_port : 10250);
	yajl_gen_map_close(g);
	yajl_gen_map_close(g);
	machine_id = node_read_line_file("/etc/machine-id");
	boot_id = node_read_line_file("/proc/sys/kernel/random/boot_id");
	uuid = node_read_line_file("/sys/class/dmi/id/product_uuid");
	json_gen_key(g, "nodeInfo");
	yajl_gen_map_open(g);
	json_gen_kv_str(g, "architecture", node_go_arch(u.machine));
	json_gen_kv_str(g, "bootID", boot_id ? boot_id : "");
	json_gen_kv_str(g, "containerRuntimeVersion", n->n_rt_version ? n->n_rt_version : "");
	json_gen_kv_str(g, "kernelVersion", u.release);
	json_gen_kv_str(g, "kubeProxyVersion", "");
	json_gen_kv_str(g, "kubeletVersion", n->n_kver);
	json_gen_kv_str(g, "machineID", machine_id ? machine_id : "");
	json_gen_kv_str(g, "operatingSystem", "linux");
	json_gen_kv_str(g, "osImage", os_image);
	json_gen_kv_str(g, "systemUUID", uuid ? uuid : "");
	yajl_gen_map_close(g);
	free(machine_id);
	free(boot_id);
	free(uuid);
	if (n->n_nimages > 0) {
		json_gen_key(g, "images");
		yajl_gen_array_open(g);
		for (i = 0; i < n->n_nimages; i++) {
			size_t j;

			yajl_gen_map_open(g);
			json_gen_key(g, "names");
			yajl_gen_array_open(g);
			for (j = 0; j < n->n_images[i].nnames; j++)
				json_gen_str(g, n->n_images[i].names[j]);
			yajl_gen_array_close(g);
			json_gen_kv_int(g, "sizeBytes", n->n_images[i].size);
			yajl_gen_map_close(g);
		}
		yajl_gen_array_close(g);
	}
	yajl_gen_map_close(g);
}

/* Reads the host figures into ni (capacity, allocatable) and refreshes the conditions. */
static void
node_sample(struct node *n, struct nodeinfo *ni)
{
	struct nodeinfo_opts o;
	struct nodeinfo_host h;

	memset(&o, 0, sizeof(o));
	if (n->n_resources != NULL)
		o = *n->n_resources;
	o.max_pods = n->n_max_pods;
	nodeinfo_read_host(n->n_root, &h);
	nodeinfo_compute(&o, &h, ni);
	node_eval_conditions(n, ni, &h);
}

static char *
node_status_json(struct node *n, int heartbeat, const struct nodeinfo *ni)
{
	yajl_gen g = json_gen_new(0);
	char    *out;

	node_gen_status(n, g, heartbeat, ni);
	out = json_gen_take(g, NULL);
	yajl_gen_free(g);
	return out;
}

/* The next status check or lease renewal: at the loop's shared instants (core/loop.h), so
 * that both ride the wake-up of the loop's own 10 s work. */
static void
node_schedule(struct event *ev, int64_t ms)
{
	loop_grid_add(ev, (unsigned)ms);
}

/* ---- registration ---- */

static void
node_take_uid(struct node *n, const struct api_response *r)
{
	struct json_doc *doc;
	char             err[64];
	const char      *uid;

	doc = json_parse(r->body, r->len, NULL, err, sizeof(err));
	if (doc == NULL)
		return;
	uid = json_str(json_get(json_get(json_root(doc), "metadata"), "uid"));
	if (uid != NULL && !streq_null(uid, n->n_uid)) {
		free(n->n_uid);
		n->n_uid = xstrdup(uid);
	}
	json_free(doc);
}

static void
node_registered(struct node *n, const char *how)
{
	if (!n->n_registered)
		log_info("node: %s %s (uid %s)", how, n->n_name, n->n_uid ? n->n_uid : "?");
	n->n_registered = 1;
	n->n_stats.registered = 1;
	xfree_str(&n->n_last_status); /* report the full status now */
	node_kick(n);
	node_lease_renew(n);
}

static void
node_label_patch_done(const struct api_response *r, void *arg)
{
	struct node *n = arg;

	n->n_reg_call = NULL;
	if (r->status == 200) {
		node_take_uid(n, r);
		node_registered(n, "updated the existing node");
		return;
	}
	n->n_stats.failures++;
	log_warnx("node: patching the labels of %s: %d %s", n->n_name, r->status, r->message);
	node_schedule(n->n_status_ev, n->n_check_ms);
}

static void
node_register_done(const struct api_response *r, void *arg)
{
	struct node *n = arg;
	yajl_gen     g;
	char        *body, *path;

	n->n_reg_call = NULL;
	if (r->status == 201) {
		n->n_stats.registrations++;
		node_take_uid(n, r);
		node_registered(n, "registered");
		return;
	}
	if (r->status == 409) {
		/* It exists: bring our labels to it, keep the rest. */
		g = json_gen_new(0);
		yajl_gen_map_open(g);
		json_gen_key(g, "metadata");
		yajl_gen_map_open(g);
		node_gen_labels(n, g);
		yajl_gen_map_close(g);
		yajl_gen_map_close(g);
		body = json_gen_take(g, NULL);
		yajl_gen_free(g);
		path = xsprintf("/api/v1/nodes/%s", n->n_name);
		n->n_reg_call =
		    api_request(n->n_api, "PATCH", path, "application/strategic-merge-patch+json",
		        body, strlen(body), 0, node_label_patch_done, n);
		free(path);
		free(body);
		return;
	}
	n->n_stats.failures++;
	log_warnx("node: registering %s: %d %s; retrying", n->n_name, r->status, r->message);
	node_schedule(n->n_status_ev, n->n_check_ms);
}

static void
node_register(struct node *n)
{
	struct nodeinfo ni;
	yajl_gen        g;
	char           *body, *status;

	if (n->n_reg_call != NULL)
		return;
	g = json_gen_new(0);
	node_sample(n, &ni);
	status = node_status_json(n, 1, &ni);
	yajl_gen_map_open(g);
	json_gen_kv_str(g, "apiVersion", "v1");
	json_gen_kv_str(g, "kind", "Node");
	json_gen_key(g, "metadata");
	yajl_gen_map_open(g);
	json_gen_kv_str(g, "name", n->n_name);
	node_gen_labels(n, g);
	json_gen_key(g, "annotations");
	yajl_gen_map_open(g);
	json_gen_kv_str(g, "volumes.kubernetes.io/controller-managed-attach-detach", "true");
	yajl_gen_map_close(g);
	yajl_gen_map_close(g);
	json_gen_key(g, "spec");
	yajl_gen_map_open(g);
	yajl_gen_map_close(g);
	json_gen_key(g, "status");
	yajl_gen_number(g, status, strlen(status)); /* an already serialized object */
	yajl_gen_map_close(g);
	body = json_gen_take(g, NULL);
	yajl_gen_free(g);
	free(status);
	n->n_reg_call = api_request(n->n_api, "POST", "/api/v1/nodes", "application/json", body,
	    strlen(body), 0, node_register_done, n);
	free(body);
}

/* ---- status ---- */

static void
node_status_done(const struct api_response *r, void *arg)
{
	struct node *n = arg;

	n->n_status_call = NULL;
	if (r->status == 200) {
		n->n_stats.status_patches++;
		node_take_uid(n, r);
		return;
	}
	xfree_str(&n->n_last_status); /* not reported: try again next time */
	n->n_stats.failures++;
	if (r->status == 404 && n->n_register) {
		log_warnx("node: %s no longer exists in the API; registering it again", n->n_name);
		n->n_registered = 0;
		n->n_stats.registered = 0;
		xfree_str(&n->n_uid);
		node_register(n);
		return;
	}
	log_warnx("node: status update of %s: %d %s", n->n_name, r->status, r->message);
}

static void
node_status_check(struct node *n)
{
	struct nodeinfo ni;
	int64_t         now = now_mono_ms();
	char           *cmp, *full, *body, *path;

	if (!n->n_registered) {
		if (n->n_register)
			node_register(n);
		return;
	}
	if (n->n_status_call != NULL)
		return;
	node_sample(n, &ni);
	cmp = node_status_json(n, 0, &ni);
	if (n->n_last_status != NULL && strcmp(cmp, n->n_last_status) == 0 &&
	    now - n->n_last_report_ms < n->n_report_ms) {
		free(cmp);
		return;
	}
	if (log_verbosity() >= 4 && n->n_last_status != NULL) {
		size_t i = 0;

		while (cmp[i] != '\0' && cmp[i] == n->n_last_status[i])
			i++;
		log_v(4, "node status: %s at byte %zu: ...%.80s",
		    cmp[i] != n->n_last_status[i] ? "changed" : "report due", i,
		    cmp + (i > 40 ? i - 40 : 0));
	}
	full = node_status_json(n, 1, &ni);
	body = xsprintf("{\"status\":%s}", full);
	free(full);
	path = xsprintf("/api/v1/nodes/%s/status", n->n_name);
	n->n_status_call = api_request(n->n_api, "PATCH", path,
	    "application/strategic-merge-patch+json", body, strlen(body), 0, node_status_done, n);
	free(path);
	free(body);
	free(n->n_last_status);
	n->n_last_status = cmp;
	n->n_last_report_ms = now;
}

static void
node_status_timer(evutil_socket_t fd, short ev, void *arg)
{
	struct node *n = arg;

	(void)fd;
	(void)ev;
	node_status_check(n);
	node_schedule(n->n_status_ev, n->n_check_ms);
}

static void
node_kick_cb(evutil_socket_t fd, short ev, void *arg)
{
	(void)fd;
	(void)ev;
	node_status_check(arg);
}

void
node_kick(struct node *n)
{
	event_active(n->n_kick_ev, EV_TIMEOUT, 0);
}

/* ---- lease ---- */

static char *
node_lease_body(struct node *n, int with_rv)
{
	yajl_gen g = json_gen_new(0);
	char     now[40], *out;

	node_rfc3339_now(now, sizeof(now), 1);
	yajl_gen_map_open(g);
	json_gen_kv_str(g, "apiVersion", "coordination.k8s.io/v1");
	json_gen_kv_str(g, "kind", "Lease");
	json_gen_key(g, "metadata");
	yajl_gen_map_open(g);
	json_gen_kv_str(g, "name", n->n_name);
	json_gen_kv_str(g, "namespace", LEASE_NS);
	if (with_rv && n->n_lease_rv != NULL)
		json_gen_kv_str(g, "resourceVersion", n->n_lease_rv);
	if (n->n_uid != NULL) {
		json_gen_key(g, "ownerReferences");
		yajl_gen_array_open(g);
		yajl_gen_map_open(g);
		json_gen_kv_str(g, "apiVersion", "v1");
		json_gen_kv_str(g, "kind", "Node");
		json_gen_kv_str(g, "name", n->n_name);
		json_gen_kv_str(g, "uid", n->n_uid);
		yajl_gen_map_close(g);
		yajl_gen_array_close(g);
	}
	yajl_gen_map_close(g);
	json_gen_key(g, "spec");
	yajl_gen_map_open(g);
	json_gen_kv_str(g, "holderIdentity", n->n_name);
	json_gen_kv_int(g, "leaseDurationSeconds", n->n_lease_s);
	json_gen_kv_str(g, "renewTime", now);
	yajl_gen_map_close(g);
	yajl_gen_map_close(g);
	out = json_gen_take(g, NULL);
	yajl_gen_free(g);
	return out;
}

static void
node_take_lease_rv(struct node *n, const struct api_response *r)
{
	struct json_doc *doc;
	char             err[64];
	const char      *rv;

	doc = json_parse(r->body, r->len, NULL, err, sizeof(err));
	if (doc == NULL)
		return;
	rv = json_str(json_get(json_get(json_root(doc), "metadata"), "resourceVersion"));
	if (rv != NULL) {
		free(n->n_lease_rv);
		n->n_lease_rv = xstrdup(rv);
		n->n_lease_known = 1;
	}
	json_free(doc);
}

static void node_lease_get(struct node *);

static void
node_lease_done(const struct api_response *r, void *arg)
{
	struct node *n = arg;

	n->n_lease_call = NULL;
	switch (r->status) {
	case 200:
	case 201:
		if (r->status == 201) {
			n->n_stats.lease_creates++;
			log_info("node: lease %s/%s created", LEASE_NS, n->n_name);
		} else
			n->n_stats.lease_renewals++;
		n->n_stats.lease_renewed_ms = now_mono_ms();
		node_take_lease_rv(n, r);
		break;
	case 404:
		/* Deleted through the API: create it again. */
		n->n_lease_known = 0;
		xfree_str(&n->n_lease_rv);
		node_lease_renew(n);
		break;
	case 409:
		/* Someone else updated it (or it already exists): read it, then renew. */
		n->n_stats.lease_conflicts++;
		node_lease_get(n);
		break;
	default:
		n->n_stats.failures++;
		log_warnx("node: lease renewal: %d %s", r->status, r->message);
		break;
	}
}

static void
node_lease_get_done(const struct api_response *r, void *arg)
{
	struct node *n = arg;

	n->n_lease_call = NULL;
	if (r->status == 200) {
		node_take_lease_rv(n, r);
		node_lease_renew(n);
	} else if (r->status == 404) {
		n->n_lease_known = 0;
		xfree_str(&n->n_lease_rv);
		node_lease_renew(n);
	} else {
		n->n_stats.failures++;
		log_warnx("node: reading the lease: %d %s", r->status, r->message);
	}
}

static void
node_lease_get(struct node *n)
{
	char *path =
	    xsprintf("/apis/coordination.k8s.io/v1/namespaces/%s/leases/%s", LEASE_NS, n->n_name);

	n->n_lease_call =
	    api_request(n->n_api, "GET", path, NULL, NULL, 0, 0, node_lease_get_done, n);
	free(path);
}

static void
node_lease_renew(struct node *n)
{
	char *path, *body;

	if (n->n_lease_call != NULL || !n->n_registered)
		return;
	body = node_lease_body(n, 1);
	if (n->n_lease_known) {
		path = xsprintf(
		    "/apis/coordination.k8s.io/v1/namespaces/%s/leases/%s", LEASE_NS, n->n_name);
		n->n_lease_call = api_request(n->n_api, "PUT", path, "application/json", body,
		    strlen(body), 0, node_lease_done, n);
	} else {
		path = xsprintf("/apis/coordination.k8s.io/v1/namespaces/%s/leases", LEASE_NS);
		n->n_lease_call = api_request(n->n_api, "POST", path, "application/json", body,
		    strlen(body), 0, node_lease_done, n);
	}
	free(path);
	free(body);
}

static void
node_lease_timer(evutil_socket_t fd, short ev, void *arg)
{
	struct node *n = arg;

	(void)fd;
	(void)ev;
	node_lease_renew(n);
	node_schedule(n->n_lease_ev, n->n_lease_ms);
}

/* ---- life ---- */

struct node *
node_new(struct event_base *base, struct api *api, const struct node_options *o)
{
	struct node *n = xcalloc(1, sizeof(*n));
	size_t       i;

	n->n_base = base;
	node_find_ip(n);
	n->n_api = api;
	n->n_name = xstrdup(o->name);
	if (o->labels != NULL && o->labels->n > 0) {
		n->n_labels.items = xcalloc(o->labels->n, sizeof(struct kv));
		n->n_labels.n = o->labels->n;
		for (i = 0; i < o->labels->n; i++) {
			n->n_labels.items[i].k = xstrdup(o->labels->items[i].k);
			n->n_labels.items[i].v = xstrdup(o->labels->items[i].v);
		}
	}
	n->n_max_pods = o->max_pods > 0 ? o->max_pods : 110;
	n->n_resources = o->resources;
	n->n_kubelet_port = o->kubelet_port;
	n->n_root = xstrdup(o->root_dir ? o->root_dir : "/");
	n->n_register = o->register_node;
	n->n_check_ms = o->status_check_ms > 0 ? o->status_check_ms : 10000;
	n->n_report_ms = o->report_ms > 0 ? o->report_ms : 300000;
	n->n_lease_ms = o->lease_renew_ms > 0 ? o->lease_renew_ms : 10000;
	n->n_lease_s = o->lease_duration_s > 0 ? o->lease_duration_s : 40;
	n->n_kver = xstrdup(o->kubelet_version ? o->kubelet_version : "v1.29.0-klet");
	n->n_runtime_ready = 1;
	n->n_pleg_ok = 1;
	n->n_status_ev = evtimer_new(base, node_status_timer, n);
	n->n_lease_ev = evtimer_new(base, node_lease_timer, n);
	n->n_kick_ev = event_new(base, -1, 0, node_kick_cb, n);
	node_schedule(n->n_status_ev, n->n_check_ms);
	node_schedule(n->n_lease_ev, n->n_lease_ms);
	if (n->n_register)
		node_register(n);
	else {
		/* Not registering: the node must exist; report its status and lease. */
		n->n_registered = 1;
		n->n_stats.registered = 1;
		node_kick(n);
		node_lease_renew(n);
	}
	return n;
}

void
node_free(struct node *n)
{
	size_t i;

	if (n == NULL)
		return;
	api_call_cancel(n->n_reg_call);
	api_call_cancel(n->n_status_call);
	api_call_cancel(n->n_lease_call);
	if (n->n_status_ev)
		event_free(n->n_status_ev);
	if (n->n_lease_ev)
		event_free(n->n_lease_ev);
	if (n->n_kick_ev)
		event_free(n->n_kick_ev);
	for (i = 0; i < n->n_labels.n; i++) {
		free(n->n_labels.items[i].k);
		free(n->n_labels.items[i].v);
	}
	free(n->n_labels.items);
	free(n->n_name);
	free(n->n_root);
	free(n->n_kver);
	free(n->n_uid);
	free(n->n_lease_rv);
	free(n->n_last_status);
	free(n->n_runtime_msg);
	free(n->n_pleg_msg);
	free(n->n_rt_version);
	node_images_clear(n->n_images, n->n_nimages);
	free(n);
}

void
node_set_runtime_health(struct node *n, int ready, const char *message)
{
	if (n->n_runtime_ready == !!ready && streq_null(n->n_runtime_msg, message))
		return;
	n->n_runtime_ready = !!ready;
	free(n->n_runtime_msg);
	n->n_runtime_msg = xstrdup(message);
	node_kick(n);
}

static void
node_images_clear(struct node_image *im, size_t n)
{
	size_t i, j;

	for (i = 0; i < n; i++)
		for (j = 0; j < im[i].nnames; j++)
			free(im[i].names[j]);
	free(im);
}

void
node_set_images(struct node *n, const struct node_image *im, size_t count)
{
	size_t i, j;
	int    same = count == n->n_nimages;

	for (i = 0; same && i < count; i++) {
		same = im[i].size == n->n_images[i].size && im[i].nnames == n->n_images[i].nnames;
		for (j = 0; same && j < im[i].nnames; j++)
			same = strcmp(im[i].names[j], n->n_images[i].names[j]) == 0;
	}
	if (same)
		return;
	node_images_clear(n->n_images, n->n_nimages);
	n->n_images = count > 0 ? xcalloc(count, sizeof(*n->n_images)) : NULL;
	n->n_nimages = count;
	for (i = 0; i < count; i++) {
		n->n_images[i].size = im[i].size;
		n->n_images[i].nnames = im[i].nnames;
		for (j = 0; j < im[i].nnames && j < NODE_IMAGE_NAMES_MAX; j++)
			n->n_images[i].names[j] = xstrdup(im[i].names[j]);
	}
	node_kick(n);
}

void
node_set_pressure(struct node *n, unsigned pressure)
{
	if (n->n_pressure_set && n->n_pressure == pressure)
		return;
	n->n_pressure_set = 1;
	n->n_pressure = pressure;
	node_kick(n);
}

void
node_set_pleg_health(struct node *n, int healthy, const char *message)
{
	if (n->n_pleg_ok == !!healthy && streq_null(n->n_pleg_msg, message))
		return;
	n->n_pleg_ok = !!healthy;
	free(n->n_pleg_msg);
	n->n_pleg_msg = xstrdup(message);
	node_kick(n);
}

void
node_set_shutting_down(struct node *n, int on)
{
	if (n->n_shutting_down == !!on)
		return;
	n->n_shutting_down = !!on;
	node_kick(n);
}

void
node_set_runtime_version(struct node *n, const char *name, const char *version)
{
	char *v = xsprintf("%s://%s", name, version);

	if (streq_null(v, n->n_rt_version)) {
		free(v);
		return;
	}
	free(n->n_rt_version);
	n->n_rt_version = v;
	node_kick(n);
}

void
node_get_stats(const struct node *n, struct node_stats *st)
{
	*st = n->n_stats;
	st->lease_duration_s = n->n_lease_s;
	st->registered = n->n_registered;
}

const char *
node_uid(const struct node *n)
{
	return n->n_uid;
}

const char *
node_ip(const struct node *n)
{
	return n->n_ip;
}
