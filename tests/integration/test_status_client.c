/* test_status_client.c — the status manager and the node (registration, status, Lease)
 * against the API server stand-in; assertions on the stand-in's request log and objects.
 * Run by test_status.sh (KLET_TEST_KUBECONFIG, KLET_TEST_AS_CTL). */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <event2/event.h>

#include "client/api.h"
#include "api/apievents.h"
#include "api/join.h"
#include "node/events.h"
#include "core/json.h"
#include "client/kubeconfig.h"
#include "core/log.h"
#include "api/node.h"
#include "pod/pod.h"
#include "pod/runtime.h"
#include "api/status.h"
#include "core/util.h"

static struct event_base *base;
static struct api        *api;
static const char        *ctl_port;
static int                npass, nfail;

static void
check(int ok, const char *fmt, ...)
{
	va_list ap;

	printf("%s - ", ok ? "ok" : "not ok");
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	printf("\n");
	fflush(stdout);
	if (ok)
		npass++;
	else
		nfail++;
}

static void
tick(evutil_socket_t fd, short ev, void *arg)
{
	(void)fd;
	(void)ev;
	(void)arg;
}

static int
run_until(int (*cond)(void *), void *arg, int64_t ms)
{
	struct event  *t = event_new(base, -1, EV_PERSIST, tick, NULL);
	struct timeval tv = { 0, 20000 };
	int64_t        end = now_mono_ms() + ms;
	int            r;

	event_add(t, &tv);
	while (!(r = cond(arg)) && now_mono_ms() < end)
		event_base_loop(base, EVLOOP_ONCE);
	event_free(t);
	return r;
}

static int
never(void *arg)
{
	(void)arg;
	return 0;
}

static char *
sh_out(const char *cmd)
{
	char  *out = xcalloc(1, 4 << 20);
	FILE  *f = popen(cmd, "r");
	size_t n = f ? fread(out, 1, (4 << 20) - 1, f) : 0;

	out[n] = '\0';
	if (f)
		pclose(f);
	return out;
}

static char *
ctl(const char *fmt, ...)
{
	char    path[512], *cmd, *out;
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(path, sizeof(path), fmt, ap);
	va_end(ap);
	cmd = xsprintf("curl -s --max-time 20 'http://127.0.0.1:%s%s'", ctl_port, path);
	out = sh_out(cmd);
	free(cmd);
	return out;
}

static void
ctl_create_pod(const char *name)
{
	char *cmd = xsprintf(
	    "curl -s --max-time 20 -X POST 'http://127.0.0.1:%s/pods' -d "
	    "'{\"metadata\":{\"name\":\"%s\",\"namespace\":\"default\"},\"spec\":{\"nodeName\":"
	    "\"node1\",\"containers\":[{\"name\":\"c\",\"image\":\"busybox:1\"}]}}' >/dev/null",
	    ctl_port, name);

	if (system(cmd) != 0)
		fprintf(stderr, "ctl create failed\n");
	free(cmd);
}

/* The stored pod as the API has it (caller frees), or NULL. */
static struct pod *
get_pod(const char *name)
{
	char       *s = ctl("/pods/default/%s/get", name), err[256];
	struct pod *p = pod_from_json(s, strlen(s), err, sizeof(err));

	free(s);
	if (p != NULL && p->uid == NULL) {
		pod_unref(p);
		p = NULL;
	}
	return p;
}

/* The request log entries from seq > since matching method and path substring, as JSON
 * bodies joined by newlines (caller frees); *n gets their count. */
static char *
log_bodies(int since, const char *method, const char *path_has, int *n)
{
	char            *s = ctl("/log?since=%d", since), err[128], *out = xstrdup("");
	struct json_doc *doc =
	    json_parse(s, strlen(s), &(struct json_limits){ 64 << 20, 0, 0 }, err, sizeof(err));
	size_t i;

	*n = 0;
	free(s);
	if (doc == NULL)
		return out;
	for (i = 0; i < json_len(json_root(doc)); i++) {
		const struct json *e = json_index(json_root(doc), i);
		const char *m = json_str(json_get(e, "method")), *p = json_str(json_get(e, "path"));
		char       *b, *o;

		if (m == NULL || p == NULL || strcmp(m, method) != 0 || strstr(p, path_has) == NULL)
			continue;
		b = json_to_string(json_get(e, "body"));
		o = xsprintf("%s%s\n", out, b);
		free(out);
		free(b);
		out = o;
		(*n)++;
	}
	json_free(doc);
	return out;
}

static int
log_seq(void)
{
	char *s = ctl("/stats"), *p = strstr(s, "\"requests\":");
	int   n = p ? atoi(p + 11) : 0;

	free(s);
	return n;
}

/* ---- runtime views ---- */

static void
rt_running(struct rt_pod_status *rt, const struct pod *p, int exited, int code)
{
	static int64_t now;

	if (now == 0)
		now = (int64_t)time(NULL) * 1000000000LL;

	memset(rt, 0, sizeof(*rt));
	rt->uid = xstrdup(p->uid);
	rt->name = xstrdup(p->name);
	rt->ns = xstrdup(p->ns);
	rt->sandboxes = xcalloc(1, sizeof(*rt->sandboxes));
	rt->nsandboxes = 1;
	rt->sandboxes[0].id = xstrdup("sb1");
	rt->sandboxes[0].state = exited ? RT_SB_NOTREADY : RT_SB_READY;
	rt->sandboxes[0].ip = xstrdup("10.88.0.7");
	rt->sandboxes[0].created_at = now - 5000000000LL;
	rt->containers = xcalloc(1, sizeof(*rt->containers));
	rt->ncontainers = 1;
	rt->containers[0].id = xstrdup("c0ffee");
	rt->containers[0].name = xstrdup("c");
	rt->containers[0].sandbox_id = xstrdup("sb1");
	rt->containers[0].state = exited ? RT_EXITED : RT_RUNNING;
	rt->containers[0].created_at = now - 4000000000LL;
	rt->containers[0].started_at = now - 3000000000LL;
	if (exited) {
		rt->containers[0].finished_at = now - 1000000000LL;
		rt->containers[0].exit_code = code;
		rt->containers[0].reason = xstrdup(code ? "Error" : "Completed");
	}
	rt->containers[0].image = xstrdup("busybox:1");
	rt->containers[0].image_ref = xstrdup("sha256:abc");
}

/* ---- status ---- */

struct acked_wait {
	struct status_mgr *m;
	const char        *uid;
	int64_t            version;
};

static int
acked_reached(void *arg)
{
	struct acked_wait *w = arg;
	int64_t            v = 0, a = 0;

	if (status_get(w->m, w->uid, NULL, &v, &a) == -1)
		return 0;
	return a >= w->version && a == v;
}

struct stat_wait {
	struct status_mgr *m;
	uint64_t           dropped, deletes, retries;
};

static int
stats_reached(void *arg)
{
	struct stat_wait   *w = arg;
	struct status_stats st;

	status_get_stats(w->m, &st);
	return st.dropped >= w->dropped && st.deletes >= w->deletes && st.retries >= w->retries;
}

static int
pod_gone(void *arg)
{
	char *s = ctl("/pods/default/%s/get", (const char *)arg);
	int   gone = strstr(s, "\"NotFound\"") != NULL;

	free(s);
	return gone;
}

static void
test_status(void)
{
	struct status_options so = {
		.host_ip = "192.0.2.10", .backoff_min_ms = 200, .backoff_max_ms = 2000
	};
	struct status_mgr   *m = status_new(base, api, &so);
	struct acked_wait    aw = { .m = m };
	struct stat_wait     sw = { .m = m };
	struct status_stats  st, st2;
	struct rt_pod_status rt;
	struct pod          *p, *p2;
	char                *bodies, *s, uidbuf[64];
	int                  seq, n;
	int64_t              v, a;

	ctl_create_pod("web");
	p = get_pod("web");
	check(p != NULL, "pod web created");
	if (p == NULL)
		return;
	aw.uid = uidbuf;
	snprintf(uidbuf, sizeof(uidbuf), "%s", p->uid);

	/* First status: Running with the container's state. */
	seq = log_seq();
	rt_running(&rt, p, 0, 0);
	status_update(m, p, &rt, NULL, NULL, 0, NULL);
	rt_pod_status_clear(&rt);
	status_get(m, p->uid, NULL, &v, &a);
	aw.version = v;
	check(run_until(acked_reached, &aw, 10000), "first status acknowledged (version %lld)",
	    (long long)v);
	bodies = log_bodies(seq, "PATCH", "/pods/web/status", &n);
	check(n == 1, "one PATCH for the first status (%d)", n);
	check(strstr(bodies, "\"uid\":\"") != NULL && strstr(bodies, p->uid) != NULL,
	    "the patch carries metadata.uid");
	check(strstr(bodies, "\"phase\":\"Running\"") != NULL &&
	        strstr(bodies, "\"podIP\":\"10.88.0.7\"") != NULL,
	    "the patch has phase and IP");
	free(bodies);
	s = ctl("/pods/default/web/get");
	check(strstr(s, "\"phase\":\"Running\"") != NULL &&
	        strstr(s, "\"containerStatuses\"") != NULL,
	    "the server has the status");
	free(s);

	/* The same status again: nothing sent. */
	pod_unref(p);
	p = get_pod("web");
	seq = log_seq();
	rt_running(&rt, p, 0, 0);
	status_update(m, p, &rt, NULL, NULL, 0, NULL);
	status_update(m, p, &rt, NULL, NULL, 0, NULL);
	rt_pod_status_clear(&rt);
	status_batch(m);
	run_until(never, NULL, 300);
	bodies = log_bodies(seq, "PATCH", "/status", &n);
	check(n == 0, "an unchanged status sends nothing, batch included (%d)", n);
	free(bodies);

	/* The container exits: a new version; the patch carries only what changed. */
	seq = log_seq();
	rt_running(&rt, p, 1, 3);
	status_update(m, p, &rt, NULL, NULL, 0, NULL);
	rt_pod_status_clear(&rt);
	status_get(m, p->uid, NULL, &v, &a);
	aw.version = v;
	check(run_until(acked_reached, &aw, 10000), "exit status acknowledged");
	bodies = log_bodies(seq, "PATCH", "/pods/web/status", &n);
	check(n == 1 && strstr(bodies, "\"exitCode\":3") != NULL, "the exit is patched");
	check(strstr(bodies, "\"hostIP\"") == NULL && strstr(bodies, "\"qosClass\"") == NULL &&
	        strstr(bodies, "\"startTime\"") == NULL,
	    "unchanged fields are not in the patch: %s", bodies);
	free(bodies);

	/* Several updates in one turn coalesce into one PATCH. */
	pod_unref(p);
	p = get_pod("web");
	seq = log_seq();
	rt_running(&rt, p, 1, 4);
	status_update(m, p, &rt, NULL, NULL, 0, NULL);
	rt_pod_status_clear(&rt);
	rt_running(&rt, p, 1, 5);
	status_update(m, p, &rt, NULL, NULL, 0, NULL);
	rt_pod_status_clear(&rt);
	status_get(m, p->uid, NULL, &v, &a);
	aw.version = v;
	run_until(acked_reached, &aw, 10000);
	bodies = log_bodies(seq, "PATCH", "/pods/web/status", &n);
	check(n == 1 && strstr(bodies, "\"exitCode\":5") != NULL,
	    "two updates in one turn: one PATCH with the latest (%d)", n);
	if (n != 1)
		fprintf(stderr, "PATCHES:\n%s\n", bodies);
	free(bodies);

	/* 503 twice then success: retried with backoff. */
	status_get_stats(m, &st);
	free(ctl("/fail?n=2&code=503&match=PATCH"));
	rt_running(&rt, p, 1, 6);
	status_update(m, p, &rt, NULL, NULL, 0, NULL);
	rt_pod_status_clear(&rt);
	status_get(m, p->uid, NULL, &v, &a);
	aw.version = v;
	check(run_until(acked_reached, &aw, 15000), "503 burst: retried until acknowledged");
	status_get_stats(m, &st2);
	check(st2.retries >= st.retries + 2, "two retries counted");

	/* 429 with Retry-After: 1 s: the retry waits at least that long. */
	free(ctl("/fail?n=1&code=429&retry_after=1&match=PATCH"));
	rt_running(&rt, p, 1, 7);
	status_update(m, p, &rt, NULL, NULL, 0, NULL);
	rt_pod_status_clear(&rt);
	status_get(m, p->uid, NULL, &v, &a);
	aw.version = v;
	seq = log_seq();
	run_until(acked_reached, &aw, 15000);
	{
		char            *l = ctl("/log?since=%d", seq), err[64];
		struct json_doc *doc = json_parse(l, strlen(l), NULL, err, sizeof(err));
		double           t0 = 0, t1 = 0;
		size_t           i;

		for (i = 0; doc != NULL && i < json_len(json_root(doc)); i++) {
			const struct json *e = json_index(json_root(doc), i);
			int64_t            code = 0;
			double             t = 0;

			if (!streq_null(json_str(json_get(e, "method")), "PATCH"))
				continue;
			json_int(json_get(e, "code"), &code);
			json_double(json_get(e, "t"), &t);
			if (code == 429)
				t0 = t;
			else if (code == 200 && t0 > 0 && t1 == 0)
				t1 = t;
		}
		check(t0 > 0 && t1 - t0 >= 0.95, "429 Retry-After honoured (%.2f s)", t1 - t0);
		if (!(t0 > 0 && t1 - t0 >= 0.95))
			fprintf(stderr, "LOG:\n%s\n", l);
		json_free(doc);
		free(l);
	}

	/* The pod is recreated under the same name: the old entry is dropped, never patched
	 * onto the new pod. */
	free(ctl("/pods/default/web?method=DELETE&grace=0"));
	ctl_create_pod("web");
	p2 = get_pod("web");
	sw.dropped = 1;
	rt_running(&rt, p, 1, 8);
	status_update(m, p, &rt, NULL, NULL, 0, NULL);
	rt_pod_status_clear(&rt);
	check(run_until(stats_reached, &sw, 10000),
	    "recreated pod: uid precondition fails, "
	    "entry dropped");
	s = ctl("/pods/default/web/get");
	check(strstr(s, "\"phase\":\"Pending\"") != NULL, "the new pod was not patched");
	free(s);

	/* A pod gone from the API: 404 drops the entry. */
	rt_running(&rt, p2, 0, 0);
	status_update(m, p2, &rt, NULL, NULL, 0, NULL);
	rt_pod_status_clear(&rt);
	snprintf(uidbuf, sizeof(uidbuf), "%s", p2->uid);
	status_get(m, p2->uid, NULL, &v, &a);
	aw.version = v;
	run_until(acked_reached, &aw, 10000);
	free(ctl("/pods/default/web?method=DELETE&grace=0"));
	sw.dropped = 2;
	rt_running(&rt, p2, 1, 1);
	status_update(m, p2, &rt, NULL, NULL, 0, NULL);
	rt_pod_status_clear(&rt);
	check(run_until(stats_reached, &sw, 10000), "404 drops the entry");
	pod_unref(p2);
	pod_unref(p);

	/* Graceful deletion: when every container stopped, the final status then a DELETE with
	 * grace 0 and the uid precondition. */
	ctl_create_pod("bye");
	p = get_pod("bye");
	rt_running(&rt, p, 0, 0);
	status_update(m, p, &rt, NULL, NULL, 0, NULL);
	rt_pod_status_clear(&rt);
	free(ctl("/pods/default/bye?method=DELETE")); /* deletionTimestamp set */
	pod_unref(p);
	p = get_pod("bye");
	check(p != NULL && p->deletion_ts != 0, "pod bye is terminating");
	seq = log_seq();
	rt_running(&rt, p, 1, 0);
	status_update(m, p, &rt, NULL, NULL, 1, NULL);
	rt_pod_status_clear(&rt);
	check(run_until(pod_gone, "bye", 10000), "terminated pod deleted from the API");
	bodies = log_bodies(seq, "DELETE", "/pods/bye", &n);
	check(n == 1 && strstr(bodies, "\"gracePeriodSeconds\":0") != NULL &&
	        strstr(bodies, p->uid) != NULL,
	    "DELETE with grace 0 and the uid precondition");
	free(bodies);
	bodies = log_bodies(seq, "PATCH", "/pods/bye/status", &n);
	check(n == 1, "the final status was patched before the delete (%d)", n);
	free(bodies);
	pod_unref(p);
	status_free(m);
}

/* Stamps: an update whose inputs (pods by identity, the rest by version) equal the last
 * one's, when that one changed nothing, need not be made (status_current); what the stamp
 * does not hold (an eviction, the host IP, the entry's removal) makes it current no more. */
static void
test_stamps(void)
{
	struct status_options so = { .host_ip = "192.0.2.10" };
	struct status_mgr    *m = status_new(base, api, &so);
	struct status_stamp   s;
	struct status_stats   st;
	struct rt_pod_status  rt;
	struct pod           *p;
	uint64_t              v;

	ctl_create_pod("stamped");
	p = get_pod("stamped");
	check(p != NULL, "pod stamped created");
	if (p == NULL)
		return;
	memset(&s, 0, sizeof(s));
	s.pod = p;
	s.rt = 7;
	rt_running(&rt, p, 0, 0);
	check(!status_current(m, p->uid, &s), "stamps: no entry, not current");
	status_update(m, p, &rt, NULL, NULL, 0, &s);
	check(!status_current(m, p->uid, &s), "stamps: a new version is not current yet");
	status_update(m, p, &rt, NULL, NULL, 0, &s);
	check(status_current(m, p->uid, &s), "stamps: the same inputs changed nothing: current");
	status_get_stats(m, &st);
	check(st.generated == 2 && st.versions == 1, "stamps: 2 generated, 1 version (%llu, %llu)",
	    (unsigned long long)st.generated, (unsigned long long)st.versions);
	s.rt = 8;
	check(!status_current(m, p->uid, &s), "stamps: another runtime version: not current");
	s.rt = 7;
	s.terminal = 1;
	check(!status_current(m, p->uid, &s), "stamps: terminal differs: not current");
	s.terminal = 0;
	s.probes = 1;
	check(!status_current(m, p->uid, &s), "stamps: probes differ: not current");
	s.probes = 0;
	s.mirror = p;
	check(!status_current(m, p->uid, &s), "stamps: another mirror: not current");
	s.mirror = NULL;
	check(status_current(m, p->uid, &s), "stamps: back to the same inputs: current");
	v = status_version(m);
	status_set_host_ip(m, "192.0.2.11");
	check(status_version(m) != v && !status_current(m, p->uid, &s),
	    "stamps: the host IP changed: not current, version moved");
	status_update(m, p, &rt, NULL, NULL, 0, &s);
	status_update(m, p, &rt, NULL, NULL, 0, &s);
	check(status_current(m, p->uid, &s), "stamps: regenerated twice: current again");
	v = status_version(m);
	status_update(m, p, &rt, NULL, NULL, 0, NULL);
	check(!status_current(m, p->uid, &s), "stamps: an update without a stamp: not current");
	status_update(m, p, &rt, NULL, NULL, 0, &s);
	status_evict(m, p, "Evicted", "low on memory", 0);
	check(status_version(m) != v && !status_current(m, p->uid, &s),
	    "stamps: evicted: not current, version moved");
	v = status_version(m);
	status_forget(m, p->uid);
	check(status_version(m) != v && !status_current(m, p->uid, &s),
	    "stamps: forgotten: not current, version moved");
	rt_pod_status_clear(&rt);
	/* The manager holds a reference to the stamp's pod: dropping ours here is safe. */
	status_update(m, p, NULL, NULL, NULL, 0, &s);
	pod_unref(p);
	status_update(m, s.pod, NULL, NULL, NULL, 0, &s);
	check(status_current(m, s.pod->uid, &s), "stamps: the referenced pod outlives its source");
	status_free(m);
}

/* ---- node ---- */

struct node_wait {
	struct node *n;
	uint64_t     registrations, renewals, creates, patches;
	int          registered;
};

static int
node_reached(void *arg)
{
	struct node_wait *w = arg;
	struct node_stats st;

	node_get_stats(w->n, &st);
	return st.registered >= w->registered && st.registrations >= w->registrations &&
	    st.lease_renewals >= w->renewals && st.lease_creates >= w->creates &&
	    st.status_patches >= w->patches;
}

static int
node_ready_false(void *arg)
{
	char *s = ctl("/objects?kind=nodes");
	int   r = strstr(s, "\"type\":\"Ready\",\"status\":\"False\"") != NULL ||
	    strstr(s, "\"status\":\"False\", \"lastHeartbeatTime\"") != NULL;

	(void)arg;
	free(s);
	return r;
}

static void
test_node(void)
{
	struct kv           lab = { "example.com/zone", "z1" };
	struct kvlist       labels = { &lab, 1 };
	struct node_options no = { .name = "node1",
		.labels = &labels,
		.max_pods = 7,
		.root_dir = "/",
		.register_node = 1,
		.status_check_ms = 200,
		.report_ms = 600000,
		.lease_renew_ms = 300 };
	struct node        *n = node_new(base, api, &no);
	struct node_wait    w = {
		   .n = n, .registered = 1, .registrations = 1, .renewals = 2, .creates = 1
	};
	struct node_stats st, st2;
	char             *s;
	int               seq, cnt;

	node_set_runtime_version(n, "containerd", "1.6.20");
	check(run_until(node_reached, &w, 15000), "registered; lease created and renewed");
	s = ctl("/objects?kind=nodes");
	check(strstr(s, "\"kubernetes.io/hostname\":\"node1\"") != NULL &&
	        strstr(s, "\"kubernetes.io/os\":\"linux\"") != NULL &&
	        strstr(s, "\"kubernetes.io/arch\"") != NULL &&
	        strstr(s, "\"beta.kubernetes.io/os\"") != NULL &&
	        strstr(s, "\"example.com/zone\":\"z1\"") != NULL,
	    "node labels");
	check(strstr(s, "\"pods\":\"7\"") != NULL && strstr(s, "\"ephemeral-storage\"") != NULL &&
	        strstr(s, "\"memory\"") != NULL && strstr(s, "\"cpu\"") != NULL,
	    "capacity: cpu, memory, pods, ephemeral-storage");
	check(strstr(s, "\"InternalIP\"") != NULL && strstr(s, "\"Hostname\"") != NULL &&
	        strstr(s, "\"osImage\"") != NULL && strstr(s, "\"kernelVersion\"") != NULL,
	    "addresses and nodeInfo");
	check(strstr(s, "\"type\":\"Ready\", \"status\":\"True\"") != NULL ||
	        strstr(s, "\"KubeletReady\"") != NULL,
	    "Ready True");
	check(strstr(s, "MemoryPressure") && strstr(s, "DiskPressure") && strstr(s, "PIDPressure"),
	    "pressure conditions");
	free(s);
	w.patches = 1;
	run_until(node_reached, &w, 10000);
	check(1, "node status patched");
	s = ctl("/objects?kind=nodes");
	check(strstr(s, "containerd://1.6.20") != NULL, "containerRuntimeVersion from CRI Version");
	free(s);
	s = ctl("/objects?kind=leases");
	check(strstr(s, "\"holderIdentity\":\"node1\"") != NULL &&
	        strstr(s, "\"leaseDurationSeconds\":40") != NULL &&
	        strstr(s, "\"kind\":\"Node\"") != NULL,
	    "lease: holder, 40 s, owned by the Node");
	free(s);

	/* No change: no status patch (report period is long), the lease keeps renewing. */
	node_get_stats(n, &st);
	seq = log_seq();
	run_until(never, NULL, 1500);
	node_get_stats(n, &st2);
	check(
	    st2.status_patches == st.status_patches && st2.lease_renewals >= st.lease_renewals + 3,
	    "idle: lease renewals only (patches %llu -> %llu, renewals %llu -> %llu)",
	    (unsigned long long)st.status_patches, (unsigned long long)st2.status_patches,
	    (unsigned long long)st.lease_renewals, (unsigned long long)st2.lease_renewals);
	s = log_bodies(seq, "PUT", "/leases/node1", &cnt);
	check(cnt >= 3 && strstr(s, "\"resourceVersion\"") != NULL,
	    "lease PUTs carry the resourceVersion (%d)", cnt);
	free(s);

	/* The runtime goes down: Ready False with a reason. */
	node_set_runtime_health(n, 0, "containerd socket refused");
	check(run_until(node_ready_false, NULL, 5000), "runtime down -> Ready False");
	s = ctl("/objects?kind=nodes");
	check(strstr(s, "container runtime is down") != NULL, "with the reason in the message");
	free(s);
	node_set_runtime_health(n, 1, NULL);

	/* The lease deleted through the API: created again. */
	free(ctl("/leases/node1/delete"));
	w.creates = 2;
	check(run_until(node_reached, &w, 10000), "deleted lease recreated");
	/* The node deleted: registered again at the next status report. */
	free(ctl("/nodes/node1/delete"));
	node_set_pleg_health(n, 0, "relist stalled");
	w.registrations = 2;
	check(run_until(node_reached, &w, 10000), "deleted node registered again");
	node_free(n);
}

/* ---- events ---- */

struct ev_wait {
	const char *name;
	int         count;
};

static int
event_count_reached(void *arg)
{
	struct ev_wait  *w = arg;
	char            *s = ctl("/objects?kind=events"), err[64];
	struct json_doc *doc =
	    json_parse(s, strlen(s), &(struct json_limits){ 16 << 20, 0, 0 }, err, sizeof(err));
	size_t i;
	int    ok = 0;

	for (i = 0; doc != NULL && i < json_len(json_root(doc)); i++) {
		const struct json *e = json_index(json_root(doc), i);
		int64_t            c = 0;

		if (!streq_null(json_str(json_get(json_get(e, "involvedObject"), "name")), w->name))
			continue;
		json_int(json_get(e, "count"), &c);
		ok = c >= w->count;
	}
	json_free(doc);
	free(s);
	return ok;
}

static void
test_events(void)
{
	struct events     *ev = events_new(0);
	struct api_events *ae = api_events_new(base, api, ev, "node1", 500, 5);
	struct ev_object   obj = { "Pod", "default", "loopy", "uid-loopy", "spec.containers{c}" };
	struct ev_wait     w = { "loopy", 40 };
	uint64_t           posts, patches, dropped;
	int                i, seq = log_seq(), n;
	char              *b;

	for (i = 0; i < 40; i++) {
		events_record(
		    ev, &obj, EV_WARNING, "BackOff", "Back-off restarting failed container");
		run_until(never, NULL, 25);
	}
	check(run_until(event_count_reached, &w, 10000),
	    "crash-loop events aggregated: one Event "
	    "with count 40");
	api_events_stats(ae, &posts, &patches, &dropped);
	b = log_bodies(seq, "POST", "/events", &n);
	check(n == 1 && posts == 1, "one POST for 40 occurrences (%d)", n);
	free(b);
	b = log_bodies(seq, "PATCH", "/events/", &n);
	check(n <= 4, "few PATCHes (%d, at most one per 500 ms)", n);
	free(b);
	/* 30 distinct events at once: the global budget (5/s, burst 10) spreads them. */
	seq = log_seq();
	for (i = 0; i < 30; i++) {
		struct ev_object o = { "Pod", "default", NULL, NULL, NULL };
		char             name[32];

		snprintf(name, sizeof(name), "burst%d", i);
		o.name = name;
		events_record(ev, &o, EV_NORMAL, "Started", "Started container c");
	}
	run_until(never, NULL, 700);
	b = log_bodies(seq, "POST", "/events", &n);
	check(n <= 14, "burst of 30 events: at most ~burst+rate sent in 0.7 s (%d)", n);
	free(b);
	w.name = "burst29";
	w.count = 1;
	check(run_until(event_count_reached, &w, 15000), "all 30 eventually posted");
	api_events_free(ae);
	events_free(ev);
}

int
main(void)
{
	const char        *kcpath = getenv("KLET_TEST_KUBECONFIG");
	struct api_options ao = { .request_timeout_ms = 10000, .backoff_min_ms = 200 };
	struct kubeconfig *kc;
	char               err[512];

	ctl_port = getenv("KLET_TEST_AS_CTL");
	if (kcpath == NULL || ctl_port == NULL) {
		fprintf(stderr, "run me from test_status.sh\n");
		return 77;
	}
	log_init(getenv("KLET_TEST_V") ? atoi(getenv("KLET_TEST_V")) : 0, 0);
	base = event_base_new();
	kc = kubeconfig_load(kcpath, err, sizeof(err));
	if (kc == NULL) {
		fprintf(stderr, "%s\n", err);
		return 1;
	}
	api = api_new(base, kc, &ao, err, sizeof(err));
	if (api == NULL) {
		fprintf(stderr, "%s\n", err);
		return 1;
	}
	test_status();
	test_stamps();
	test_node();
	test_events();
	run_until(never, NULL, 50);
	api_free(api);
	kubeconfig_free(kc);
	run_until(never, NULL, 50);
	event_base_free(base);
	printf("%d passed, %d failed\n", npass, nfail);
	return nfail ? 1 : 0;
}
