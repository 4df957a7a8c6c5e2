/* cmd_node.c — podctl status, version, get nodes, describe node and top: the daemon and
 * the node. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "core/json.h"
#include "core/util.h"
#include "podctl/common.h"

static void
cmd_status_tasks(const struct json *tasks)
{
	struct out_table t;
	const char      *hdr[] = { "  TASK", "EVERY", "RUNS", "LAST", "MAX", "LAG", "MAX LAG" };
	size_t           i;

	memset(&t, 0, sizeof(t));
	t.ncols = 7;
	out_table_row(&t, hdr);
	for (i = 0; i < json_len(tasks); i++) {
		const struct json *k = json_index(tasks, i);
		char               name[64], every[32], runs[32], l[32], m[32], lag[32], ml[32];
		const char        *row[7];

		snprintf(name, sizeof(name), "  %s", jv_strd(k, "name", "?"));
		out_dur(jv_int(k, "intervalMs", 0), every, sizeof(every));
		snprintf(runs, sizeof(runs), "%lld", (long long)jv_int(k, "runs", 0));
		snprintf(l, sizeof(l), "%lldus", (long long)jv_int(k, "lastDurationUs", 0));
		snprintf(m, sizeof(m), "%lldus", (long long)jv_int(k, "maxDurationUs", 0));
		snprintf(lag, sizeof(lag), "%lldus", (long long)jv_int(k, "lastLagUs", 0));
		snprintf(ml, sizeof(ml), "%lldus", (long long)jv_int(k, "maxLagUs", 0));
		row[0] = name;
		row[1] = every;
		row[2] = runs;
		row[3] = l;
		row[4] = m;
		row[5] = lag;
		row[6] = ml;
		out_table_row(&t, row);
	}
	out_table_print(&t);
}

/* The eviction manager: conditions, each threshold against its signal, the last eviction. */
static void
cmd_status_eviction(const struct json *e)
{
	const struct json *c = json_get(e, "conditions"), *t = json_get(e, "thresholds");
	size_t             i;

	if (t == NULL)
		return;
	printf("%-16s", "Eviction:");
	for (i = 0; c != NULL && i < json_len(c); i++)
		printf("%s%s", i ? ", " : "", json_str(json_index(c, i)));
	printf("%s; %lld passes, %lld notifications%s, %lld evictions\n",
	    c == NULL || json_len(c) == 0 ? "no pressure" : "", (long long)jv_int(e, "passes", 0),
	    (long long)jv_int(e, "notifications", 0), jv_bool(e, "notifyArmed") ? " (armed)" : "",
	    (long long)jv_int(e, "evictions", 0));
	for (i = 0; i < json_len(t); i++) {
		const struct json *x = json_index(t, i);

		printf("  %-28s%s %s<%s (%lld): available %lld of %lld%s\n",
		    jv_strd(x, "signal", "?"), jv_bool(x, "hard") ? "hard" : "soft",
		    jv_strd(x, "signal", "?"), jv_strd(x, "threshold", "?"),
		    (long long)jv_int(x, "value", 0), (long long)jv_int(x, "available", 0),
		    (long long)jv_int(x, "capacity", 0),
		    !jv_bool(x, "observed") ? " (not observed)"
		        : jv_bool(x, "met") ? "  MET"
		                            : "");
	}
	if (jv_str(e, "lastPod") != NULL)
		printf("  %-28s%s: %s\n", "Last eviction:", jv_str(e, "lastPod"),
		    jv_strd(e, "lastMessage", ""));
	if (jv_int(e, "reclaims", 0) > 0)
		printf("  %-28s%lld (dead containers, unused images)\n",
		    "Node-level reclaims:", (long long)jv_int(e, "reclaims", 0));
}

/* The image GC manager: thresholds, the image file system, what it removed. */
static void
cmd_status_imagegc(const struct json *g)
{
	if (g == NULL || json_get(g, "high") == NULL)
		return;
	printf("%-16sthresholds %lld%%/%lld%%, minimum age %llds",
	    "Image GC:", (long long)jv_int(g, "high", 0), (long long)jv_int(g, "low", 0),
	    (long long)jv_int(g, "minAgeMs", 0) / 1000);
	if (jv_int(g, "maxAgeMs", 0) > 0)
		printf(", maximum age %llds", (long long)jv_int(g, "maxAgeMs", 0) / 1000);
	printf("; %lld images (%lld in use, %lld pinned)\n", (long long)jv_int(g, "images", 0),
	    (long long)jv_int(g, "inUse", 0), (long long)jv_int(g, "pinned", 0));
	if (jv_str(g, "mountpoint") != NULL)
		printf("  %-28s%s: %lld%% used, %lld of %lld bytes available\n",
		    "Image fs:", jv_str(g, "mountpoint"), (long long)jv_int(g, "usagePercent", 0),
		    (long long)jv_int(g, "available", 0), (long long)jv_int(g, "capacity", 0));
	printf("  %-28s%lld runs, %lld images removed (%lld for their age), %lld bytes freed%s%s\n",
	    "Collected:", (long long)jv_int(g, "runs", 0), (long long)jv_int(g, "removed", 0),
	    (long long)jv_int(g, "removedAge", 0), (long long)jv_int(g, "freedBytes", 0),
	    jv_str(g, "lastResult") != NULL ? "; last: " : "", jv_strd(g, "lastResult", ""));
}

int
cmd_status(FILE *f, const struct podctl_opts *o)
{
	struct json_doc   *doc;
	const struct json *d = client_request(f, o, &doc, "status", NULL, NULL, 0), *s;
	char               ab[32], db[32];

	if (out_structured(o, d))
		goto out;
	printf("%-16s%s\n", "Node:", jv_str(d, "node"));
	printf("%-16skletd %s (pid %lld)\n", "Server:", jv_str(d, "version"),
	    (long long)jv_int(d, "pid", 0));
	printf("%-16s%s\n", "Uptime:", out_age(jv_int(d, "uptimeSeconds", 0), ab, sizeof(ab)));
	printf("%-16s%.1f MiB\n", "Memory (RSS):", (double)jv_int(d, "rssKiB", 0) / 1024);
	printf("%-16s%lld\n", "Pods:", (long long)jv_int(d, "pods", 0));
	s = json_get(d, "runtime");
	printf("%-16s%s %s (CRI %s) %s, %s\n", "Runtime:", jv_strd(s, "name", "?"),
	    jv_strd(s, "version", "?"), jv_strd(s, "apiVersion", "?"),
	    jv_bool(s, "ready") ? "ready" : "NOT READY", jv_strd(s, "endpoint", "?"));
	if (jv_str(s, "lastError") != NULL)
		printf("%-16s%s\n", "  Error:", jv_str(s, "lastError"));
	printf("%-16s%lld calls, %lld errors, %lld in flight, %lld reconnects\n",
	    "  CRI Calls:", (long long)jv_int(s, "calls", 0), (long long)jv_int(s, "errors", 0),
	    (long long)jv_int(s, "inFlight", 0), (long long)jv_int(s, "reconnects", 0));
	s = json_get(d, "api");
	if (!jv_bool(s, "configured"))
		printf("%-16snot configured (no --kubeconfig: static pods only)\n", "API Server:");
	else {
		int64_t ea = jv_int(s, "lastEventAgeMs", -1);

		printf("%-16s%s, watch %s, resourceVersion %s, last event %s%s\n", "API Server:",
		    jv_bool(s, "connected")
		        ? "connected"
		        : (jv_str(s, "watchState") ? "disconnected" : "configured"),
		    jv_strd(s, "watchState", "<unknown>"),
		    jv_strd(s, "resourceVersion", "<unknown>"),
		    ea >= 0 ? out_dur(ea, db, sizeof(db)) : "<unknown>", ea >= 0 ? " ago" : "");
		s = json_get(s, "podStatuses");
		printf("%-16s%lld generated, %lld versions, %lld patches (%lld acknowledged)\n",
		    "  Pod Statuses:", (long long)jv_int(s, "generated", 0),
		    (long long)jv_int(s, "versions", 0), (long long)jv_int(s, "patches", 0),
		    (long long)jv_int(s, "acknowledged", 0));
	}
	s = json_get(d, "pleg");
	printf("%-16s%s%s%s, last relist %s ago took %lldus (max %lldus), %lld relists, "
	       "%lld failures\n",
	    "PLEG:", jv_bool(s, "healthy") ? "healthy" : "UNHEALTHY", jv_str(s, "why") ? ": " : "",
	    jv_strd(s, "why", ""), out_dur(jv_int(s, "lastRelistAgoMs", -1), db, sizeof(db)),
	    (long long)jv_int(s, "lastDurationUs", 0), (long long)jv_int(s, "maxDurationUs", 0),
	    (long long)jv_int(s, "relists", 0), (long long)jv_int(s, "failures", 0));
	printf("%-16s%lld pods, %lld containers, %lld sandboxes; %lld relists found nothing "
	       "changed, %lld records decoded (%lld by the last)\n",
	    "  Seen:", (long long)jv_int(s, "pods", 0), (long long)jv_int(s, "containers", 0),
	    (long long)jv_int(s, "sandboxes", 0), (long long)jv_int(s, "unchanged", 0),
	    (long long)jv_int(s, "decodedTotal", 0), (long long)jv_int(s, "decoded", 0));
	s = json_get(s, "recovery");
	if (jv_int(s, "recoveredInMs", -1) >= 0)
		printf("%-16srecovered in %lldms; first relist: %lld of %lld runtime objects from "
		       "the store, %lld status calls\n",
		    "Recovery:", (long long)jv_int(s, "recoveredInMs", 0),
		    (long long)jv_int(s, "fromStore", 0), (long long)jv_int(s, "objects", 0),
		    (long long)jv_int(s, "statusCalls", 0));
	cmd_status_eviction(json_get(d, "eviction"));
	cmd_status_imagegc(json_get(d, "imageGC"));
	s = json_get(d, "store");
	if (jv_str(s, "health") != NULL)
		printf("%-16s%s, %.1f KiB, %lld commits, %lld failures, %lld journal ops%s%s\n",
		    "Store:", jv_str(s, "health"), (double)jv_int(s, "fileBytes", 0) / 1024,
		    (long long)jv_int(s, "commits", 0), (long long)jv_int(s, "failures", 0),
		    (long long)jv_int(s, "journalOps", 0),
		    jv_str(s, "lastError") ? ", last error: " : "", jv_strd(s, "lastError", ""));
	else
		printf("%-16sunavailable\n", "Store:");
	if (jv_str(s, "health") != NULL)
		printf("%-16sSQLite %.1f KiB, page cache %.1f KiB, %lld hits, %lld misses\n", "",
		    (double)jv_int(s, "sqliteBytes", 0) / 1024,
		    (double)jv_int(s, "cacheBytes", 0) / 1024, (long long)jv_int(s, "cacheHits", 0),
		    (long long)jv_int(s, "cacheMisses", 0));
	s = json_get(d, "heap");
	if (s != NULL)
		printf("%-16s%.1f KiB in use (%.1f KiB mapped), %.1f KiB free inside, %lld trims "
		       "(last gave back %.1f KiB)\n",
		    "Heap:", (double)jv_int(s, "inUseBytes", 0) / 1024,
		    (double)jv_int(s, "mappedBytes", 0) / 1024,
		    (double)jv_int(s, "freeBytes", 0) / 1024, (long long)jv_int(s, "trims", 0),
		    (double)jv_int(s, "lastTrimmedBytes", 0) / 1024);
	if (s != NULL)
		printf("%-16sclean file pages unmapped %lld times (last %.1f KiB)\n", "",
		    (long long)jv_int(s, "fileDrops", 0),
		    (double)jv_int(s, "lastFileDroppedBytes", 0) / 1024);
	printf(
	    "%-16s%lld stored\n", "Events:", (long long)jv_int(json_get(d, "events"), "stored", 0));
	s = json_get(d, "loop");
	printf("%-16slag %lldus\n", "Loop:", (long long)jv_int(s, "lagUs", 0));
	{
		const struct json *t = json_get(s, "turns");
		char               p50[32], p99[32];
		int64_t            v;

		v = jv_int(t, "p50Us", 0);
		snprintf(p50, sizeof(p50), "%lldus", (long long)v);
		if (v < 0 || v == INT64_MAX)
			snprintf(p50, sizeof(p50), "more");
		v = jv_int(t, "p99Us", 0);
		snprintf(p99, sizeof(p99), "%lldus", (long long)v);
		if (v < 0 || v == INT64_MAX)
			snprintf(p99, sizeof(p99), "more");
		printf("%-16s%lld turns, CPU time p50 <= %s, p99 <= %s, max %lldus%s%s%s; "
		       "longest in wall time %lldus\n",
		    "  Turns:", (long long)jv_int(t, "count", 0), p50, p99,
		    (long long)jv_int(t, "maxUs", 0), jv_str(t, "maxTask") ? " (" : "",
		    jv_strd(t, "maxTask", ""), jv_str(t, "maxTask") ? ")" : "",
		    (long long)jv_int(t, "maxWallUs", 0));
	}
	cmd_status_tasks(json_get(s, "tasks"));
out:
	json_free(doc);
	return 0;
}

int
cmd_version(const struct podctl_opts *o)
{
	struct json_doc   *doc;
	const struct json *d;
	FILE              *f;

	if (o->fmt == FMT_TABLE || o->fmt == FMT_WIDE)
		printf("Client Version: %s\n", KLET_VERSION);
	fflush(stdout);
	f = client_connect(o->socket);
	d = client_request(f, o, &doc, "version", NULL, NULL, 0);
	if (o->fmt == FMT_JSON || o->fmt == FMT_YAML) {
		yajl_gen g = json_gen_new(0);

		yajl_gen_map_open(g);
		json_gen_kv_str(g, "client", KLET_VERSION);
		json_gen_key(g, "server");
		json_gen_value(g, d);
		yajl_gen_map_close(g);
		out_structured_gen(o, g);
	} else {
		printf("Server Version: %s (protocol %lld)\n", jv_str(d, "server"),
		    (long long)jv_int(d, "protocol", 0));
	}
	json_free(doc);
	fclose(f);
	return 0;
}

/* ---- the node ---- */

static const char *
cmd_node_status(const struct json *d, char *buf, size_t len)
{
	const struct json *c = json_get(d, "conditions");
	size_t             i;

	snprintf(buf, len, "Unknown");
	for (i = 0; i < json_len(c); i++) {
		const struct json *x = json_index(c, i);

		if (strcmp(jv_strd(x, "type", ""), "Ready") == 0)
			snprintf(buf, len, "%s",
			    strcmp(jv_strd(x, "status", ""), "True") == 0 ? "Ready" : "NotReady");
	}
	return buf;
}

static const char *
cmd_node_pressure(const struct json *d, char *buf, size_t len)
{
	const struct json *c = json_get(d, "conditions");
	size_t             i, n = 0;

	buf[0] = '\0';
	for (i = 0; i < json_len(c); i++) {
		const struct json *x = json_index(c, i);

		if (strstr(jv_strd(x, "type", ""), "Pressure") != NULL &&
		    strcmp(jv_strd(x, "status", ""), "True") == 0)
			n += (size_t)snprintf(buf + n, n < len ? len - n : 0, "%s%s", n ? "," : "",
			    jv_str(x, "type"));
	}
	if (n == 0)
		snprintf(buf, len, "<none>");
	return buf;
}

static const char *
cmd_node_lease(const struct json *d, char *buf, size_t len)
{
	const struct json *l = json_get(d, "lease");
	char               a[32];

	if (!jv_bool(l, "configured"))
		snprintf(buf, len, "<none>");
	else if (json_get(l, "renewedAgoMs") == NULL)
		snprintf(buf, len, "<not renewed>");
	else
		snprintf(buf, len, "%s ago", out_dur(jv_int(l, "renewedAgoMs", 0), a, sizeof(a)));
	return buf;
}

int
cmd_get_nodes(FILE *f, const struct podctl_opts *o)
{
	struct json_doc   *doc;
	const struct json *d = client_request(f, o, &doc, "node", NULL, NULL, 0), *al;
	const char        *hdr[] = { "NAME", "STATUS", "PRESSURE", "PODS", "CPU", "MEMORY", "LEASE",
		       "UPTIME", "VERSION", "INTERNAL-IP", "KERNEL-VERSION", "CONTAINER-RUNTIME",
		       "SHUTDOWN" };
	const char        *row[13];
	char               st[32], pr[128], pods[32], up[32], lease[64];
	struct out_table   t;

	if (out_structured(o, d))
		goto out;
	al = json_get(d, "allocatable");
	snprintf(pods, sizeof(pods), "%lld/%s", (long long)jv_int(d, "pods", 0),
	    jv_strd(al, "pods", "?"));
	row[0] = jv_str(d, "name");
	row[1] = cmd_node_status(d, st, sizeof(st));
	row[2] = cmd_node_pressure(d, pr, sizeof(pr));
	row[3] = pods;
	row[4] = jv_strd(al, "cpu", "?");
	row[5] = jv_strd(al, "memory", "?");
	row[6] = cmd_node_lease(d, lease, sizeof(lease));
	row[7] = out_age(jv_int(d, "uptimeSeconds", -1), up, sizeof(up));
	row[8] = jv_str(d, "version");
	row[9] = jv_strd(d, "internalIP", "<none>");
	row[10] = jv_str(d, "kernelVersion");
	row[11] = jv_str(d, "containerRuntime");
	row[12] = jv_str(d, "shutdownManager");
	memset(&t, 0, sizeof(t));
	t.ncols = o->fmt == FMT_WIDE ? 13 : 9;
	out_table_row(&t, hdr);
	out_table_row(&t, row);
	out_table_print(&t);
out:
	json_free(doc);
	return 0;
}

static void
cmd_node_resources(const char *label, const struct json *r)
{
	size_t i;

	printf("%s\n", label);
	for (i = 0; i < json_len(r); i++)
		printf("  %-20s%s\n", json_key(r, i), json_str(json_index(r, i)));
}

int
cmd_describe_node(FILE *f, const struct podctl_opts *o)
{
	struct json_doc   *doc;
	const struct json *d = client_request(f, o, &doc, "node", NULL, NULL, 0), *c, *l;
	const char        *hdr[] = { "  Type", "Status", "Reason", "Message" };
	char               a[32], lease[64];
	struct out_table   t;
	size_t             i;

	if (o->nwords > 2 && strcmp(o->words[2], jv_strd(d, "name", "")) != 0) {
		fprintf(stderr, "podctl: this kletd runs node \"%s\", not \"%s\"\n",
		    jv_strd(d, "name", "?"), o->words[2]);
		json_free(doc);
		return PODCTL_EXIT_ERROR;
	}
	if (out_structured(o, d))
		goto out;
	printf("%-20s%s\n", "Name:", jv_str(d, "name"));
	printf("%-20s%s\n", "Status:", cmd_node_status(d, a, sizeof(a)));
	printf("%-20s%s\n", "Internal IP:", jv_strd(d, "internalIP", "<none>"));
	printf("%-20s%s\n", "Kernel Version:", jv_str(d, "kernelVersion"));
	printf("%-20s%s\n", "Container Runtime:", jv_str(d, "containerRuntime"));
	printf("%-20skletd %s, up %s\n", "Kubelet:", jv_str(d, "version"),
	    out_age(jv_int(d, "uptimeSeconds", -1), a, sizeof(a)));
	printf("Conditions:\n");
	c = json_get(d, "conditions");
	memset(&t, 0, sizeof(t));
	t.ncols = 4;
	out_table_row(&t, hdr);
	for (i = 0; i < json_len(c); i++) {
		const struct json *x = json_index(c, i);
		char               type[64];
		const char        *row[4];

		snprintf(type, sizeof(type), "  %s", jv_strd(x, "type", "?"));
		row[0] = type;
		row[1] = jv_str(x, "status");
		row[2] = jv_str(x, "reason");
		row[3] = jv_str(x, "message");
		out_table_row(&t, row);
	}
	out_table_print(&t);
	cmd_node_resources("Capacity:", json_get(d, "capacity"));
	cmd_node_resources("Allocatable:", json_get(d, "allocatable"));
	printf("%-20s%lld running\n", "Pods:", (long long)jv_int(d, "pods", 0));
	l = json_get(d, "lease");
	printf("Lease:\n");
	if (!jv_bool(l, "configured"))
		printf("  %-18s<none> (no --kubeconfig: standalone)\n", "Renewed:");
	else {
		printf("  %-18s%s\n", "Registered:", jv_bool(l, "registered") ? "yes" : "no");
		printf("  %-18s%s, every %llds at most (%lld renewals)\n",
		    "Renewed:", cmd_node_lease(d, lease, sizeof(lease)),
		    (long long)jv_int(l, "durationSeconds", 0),
		    (long long)jv_int(l, "renewals", 0));
		printf(
		    "  %-18s%lld\n", "Status Patches:", (long long)jv_int(l, "statusPatches", 0));
	}
	printf("%-20s%s\n", "Shutdown Manager:", jv_strd(d, "shutdownManager", "?"));
out:
	json_free(doc);
	return 0;
}

/* ---- top: two readings of the cgroups, a second apart ---- */

#define TOP_INTERVAL_MS 1000

/* The CPU time of the row with this id (pod UID, or "UID/container") in a reading; -1. */
static int64_t
cmd_top_cpu_of(const struct json *pods, const char *uid, const char *ctr)
{
	size_t i, j;

	for (i = 0; i < json_len(pods); i++) {
		const struct json *p = json_index(pods, i), *cs;

		if (strcmp(jv_strd(p, "uid", ""), uid) != 0)
			continue;
		if (ctr == NULL)
			return jv_int(p, "cpuNs", -1);
		cs = json_get(p, "containers");
		for (j = 0; j < json_len(cs); j++)
			if (strcmp(jv_strd(json_index(cs, j), "id", ""), ctr) == 0)
				return jv_int(json_index(cs, j), "cpuNs", -1);
	}
	return -1;
}

/* Millicores between two cumulative CPU times over dt_ms. */
static int64_t
cmd_top_milli(int64_t cpu0, int64_t cpu1, int64_t dt_ms)
{
	if (cpu0 < 0 || cpu1 < cpu0 || dt_ms <= 0)
		return -1;
	return (cpu1 - cpu0) / dt_ms / 1000;
}

static void
cmd_top_sleep(void)
{
	struct timespec ts = { TOP_INTERVAL_MS / 1000, (TOP_INTERVAL_MS % 1000) * 1000000L };

	nanosleep(&ts, NULL);
}

/* The allocatable quantity as a number (cpu in millicores, bytes); 0 when unknown. */
static int64_t
cmd_top_quantity(const char *s, int cpu)
{
	char     *end;
	long long v;

	if (s == NULL)
		return 0;
	v = strtoll(s, &end, 10);
	if (cpu)
		return *end == 'm' ? v : v * 1000;
	if (strcmp(end, "Ki") == 0)
		return v * 1024;
	if (strcmp(end, "Mi") == 0)
		return v * 1024 * 1024;
	if (strcmp(end, "Gi") == 0)
		return v * 1024 * 1024 * 1024;
	return v;
}

static int
cmd_top_node(
    FILE *f, const struct podctl_opts *o, const struct json *r0, const struct json *r1, int64_t dt)
{
	struct json_doc   *ndoc;
	const struct json *nd = client_request(f, o, &ndoc, "node", NULL, NULL, 0), *al;
	const struct json *n0 = json_get(r0, "node"), *n1 = json_get(r1, "node");
	int64_t     milli = cmd_top_milli(jv_int(n0, "cpuNs", -1), jv_int(n1, "cpuNs", -1), dt);
	int64_t     mem = jv_int(n1, "memoryWorkingSetBytes", 0), acpu, amem;
	const char *hdr[] = { "NAME", "CPU(cores)", "CPU(%)", "MEMORY(bytes)", "MEMORY(%)" };
	const char *row[5];
	char        c[32], cp[32], m[32], mp[32];
	struct out_table t;

	al = json_get(nd, "allocatable");
	acpu = cmd_top_quantity(jv_str(al, "cpu"), 1);
	amem = cmd_top_quantity(jv_str(al, "memory"), 0);
	if (o->fmt == FMT_JSON || o->fmt == FMT_YAML) {
		yajl_gen g = json_gen_new(0);

		yajl_gen_map_open(g);
		json_gen_kv_str(g, "name", jv_str(n1, "name"));
		json_gen_kv_int(g, "cpuMillicores", milli);
		json_gen_kv_int(g, "memoryWorkingSetBytes", mem);
		json_gen_kv_int(g, "allocatableCpuMillicores", acpu);
		json_gen_kv_int(g, "allocatableMemoryBytes", amem);
		yajl_gen_map_close(g);
		out_structured_gen(o, g);
		json_free(ndoc);
		return 0;
	}
	snprintf(cp, sizeof(cp), "%lld%%", acpu > 0 ? (long long)(milli * 100 / acpu) : 0LL);
	snprintf(mp, sizeof(mp), "%lld%%", amem > 0 ? (long long)(mem * 100 / amem) : 0LL);
	row[0] = jv_str(n1, "name");
	row[1] = milli >= 0 ? out_millicores(milli, c, sizeof(c)) : "<unknown>";
	row[2] = cp;
	row[3] = out_mebibytes(mem, m, sizeof(m));
	row[4] = mp;
	memset(&t, 0, sizeof(t));
	t.ncols = 5;
	out_table_row(&t, hdr);
	out_table_row(&t, row);
	out_table_print(&t);
	json_free(ndoc);
	return 0;
}

/* The pods' (or containers') rates as JSON, for -o json|yaml and the table alike. */
static void
cmd_top_pods_gen(yajl_gen g, const struct json *p0, const struct json *p1, int64_t dt)
{
	size_t i, j;

	yajl_gen_array_open(g);
	for (i = 0; i < json_len(p1); i++) {
		const struct json *p = json_index(p1, i), *cs = json_get(p, "containers");
		const char        *uid = jv_strd(p, "uid", "");
		int64_t            mc =
		    cmd_top_milli(cmd_top_cpu_of(p0, uid, NULL), jv_int(p, "cpuNs", -1), dt);

		if (mc < 0)
			continue; /* not in both readings */
		yajl_gen_map_open(g);
		json_gen_kv_str(g, "namespace", jv_str(p, "namespace"));
		json_gen_kv_str(g, "name", jv_str(p, "name"));
		json_gen_kv_int(g, "cpuMillicores", mc);
		json_gen_kv_int(g, "memoryWorkingSetBytes", jv_int(p, "memoryWorkingSetBytes", 0));
		json_gen_key(g, "containers");
		yajl_gen_array_open(g);
		for (j = 0; j < json_len(cs); j++) {
			const struct json *c = json_index(cs, j);
			int64_t cm = cmd_top_milli(cmd_top_cpu_of(p0, uid, jv_strd(c, "id", "")),
			    jv_int(c, "cpuNs", -1), dt);

			if (cm < 0)
				continue;
			yajl_gen_map_open(g);
			json_gen_kv_str(g, "name", jv_str(c, "name"));
			json_gen_kv_int(g, "cpuMillicores", cm);
			json_gen_kv_int(
			    g, "memoryWorkingSetBytes", jv_int(c, "memoryWorkingSetBytes", 0));
			yajl_gen_map_close(g);
		}
		yajl_gen_array_close(g);
		yajl_gen_map_close(g);
	}
	yajl_gen_array_close(g);
}

static void
cmd_top_pods_table(const struct podctl_opts *o, const struct json *rows)
{
	const char      *hdr[] = { "NAMESPACE", "POD", "NAME", "CPU(cores)", "MEMORY(bytes)" };
	const char      *row[5];
	char             c[32], m[32];
	struct out_table t;
	size_t           i, j, off = o->all_ns ? 0 : 1, skip = o->containers ? 0 : 1;

	memset(&t, 0, sizeof(t));
	t.ncols = 5 - off - skip;
	/* kubectl top pod: NAME; with --containers: POD, NAME; -A adds NAMESPACE first. */
	{
		const char *h[5];
		size_t      k = 0;

		if (!off)
			h[k++] = hdr[0];
		if (o->containers)
			h[k++] = hdr[1];
		h[k++] = hdr[2];
		h[k++] = hdr[3];
		h[k++] = hdr[4];
		out_table_row(&t, h);
	}
	for (i = 0; i < json_len(rows); i++) {
		const struct json *p = json_index(rows, i), *cs = json_get(p, "containers");
		size_t             k;

		for (j = 0; j < (o->containers ? json_len(cs) : 1); j++) {
			const struct json *x = o->containers ? json_index(cs, j) : p;

			k = 0;
			if (!off)
				row[k++] = jv_str(p, "namespace");
			if (o->containers)
				row[k++] = jv_str(p, "name");
			row[k++] = jv_str(x, "name");
			row[k++] = out_millicores(jv_int(x, "cpuMillicores", 0), c, sizeof(c));
			row[k++] =
			    out_mebibytes(jv_int(x, "memoryWorkingSetBytes", 0), m, sizeof(m));
			out_table_row(&t, row);
		}
	}
	out_table_print(&t);
}

int
cmd_top(FILE *f, const struct podctl_opts *o, int nodes)
{
	struct json_doc   *d0, *d1, *od;
	const struct json *r0, *r1;
	int64_t            dt;
	yajl_gen           g;
	char              *s;
	int                rc = 0;

	r0 = client_request(f, o, &d0, "top", opts_ns(o), NULL, 0);
	cmd_top_sleep();
	r1 = client_request(f, o, &d1, "top", opts_ns(o), NULL, 0);
	dt = jv_int(r1, "sampleMs", 0) - jv_int(r0, "sampleMs", 0);
	if (nodes) {
		rc = cmd_top_node(f, o, r0, r1, dt);
		goto out;
	}
	g = json_gen_new(0);
	cmd_top_pods_gen(g, json_get(r0, "pods"), json_get(r1, "pods"), dt);
	s = json_gen_take(g, NULL);
	yajl_gen_free(g);
	od = json_parse(s, strlen(s), NULL, NULL, 0);
	free(s);
	if (od == NULL)
		goto out;
	if (!out_structured(o, json_root(od))) {
		if (json_len(json_root(od)) == 0) {
			if (o->all_ns)
				fprintf(stderr, "No resources found\n");
			else
				fprintf(
				    stderr, "No resources found in %s namespace.\n", opts_ns(o));
		} else
			cmd_top_pods_table(o, json_root(od));
	}
	json_free(od);
out:
	json_free(d0);
	json_free(d1);
	return rc;
}
