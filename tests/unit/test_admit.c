/* test_admit.c — table tests of the kubelet's admission predicates (logic/admit.c): one table
 * per predicate, each case a pod (JSON, with ' for "), the pods already admitted, the node
 * and the expected reason and message. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "core/util.h"
#include "logic/admit.h"
#include "node/nodeinfo.h"

#define MAX_OTHERS 4

struct tcase {
	const char *name;
	const char *pod;                /* the spec's members, JSON with ' for " */
	const char *others[MAX_OTHERS]; /* specs of admitted pods */
	int         is_static;
	const char *labels; /* the pod's metadata.labels members, or NULL */
	int64_t     priority;
	const char *reason;  /* NULL: admitted */
	const char *message; /* expected message (exact), or NULL */
};

static struct kv            node_label_items[] = { { "kubernetes.io/os", "linux" }, { "zone", "a" },
	           { "tier", "5" }, { "disk", "ssd" } };
static struct kvlist        node_labels = { node_label_items, 4 };
static struct quantity      node_ext_items[] = { { "example.com/gpu", 1000 } };
static struct resource_list node_ext = { node_ext_items, 1 };
static struct admit_taint   node_taints[] = {
	  { "dedicated", "infra", "NoExecute" },
	  { "soft", NULL, "NoSchedule" },
};

/* The default node: 2 cpu, 2 GiB, 10 GiB of ephemeral storage, 4 pods, one GPU. */
static struct admit_node
test_node(void)
{
	struct admit_node n = { .name = "node-a",
		.labels = &node_labels,
		.cpu_milli = 2000,
		.memory = 2LL << 30,
		.ephemeral = 10LL << 30,
		.pods = 4,
		.extended = &node_ext };

	return n;
}

static struct pod *
mkpod(const char *name, const char *spec, const char *labels, int64_t priority)
{
	char       *json, *q, err[256];
	struct pod *p;

	xasprintf(&json,
	    "{'metadata': {'name': '%s', 'namespace': 'default', 'uid': 'u-%s'%s%s%s},"
	    " 'spec': {%s%s'priority': %lld}}",
	    name, name, labels != NULL ? ", 'labels': {" : "", labels != NULL ? labels : "",
	    labels != NULL ? "}" : "", spec, *spec != '\0' ? ", " : "", (long long)priority);
	for (q = json; *q != '\0'; q++)
		if (*q == '\'')
			*q = '"';
	p = pod_from_json(json, strlen(json), err, sizeof(err));
	if (p == NULL)
		fail_msg("pod %s: %s in %s", name, err, json);
	free(json);
	return p;
}

static void
run_table(const struct tcase *t, size_t n, const struct admit_node *node)
{
	size_t i, j;

	for (i = 0; i < n; i++) {
		struct pod       *p = mkpod("new", t[i].pod, t[i].labels, t[i].priority);
		const struct pod *others[MAX_OTHERS];
		size_t            nothers = 0;
		char             *reason = NULL, *message = NULL, err[256];
		int               rc;

		if (pod_validate(p, err, sizeof(err)) != 0)
			fail_msg("%s: invalid pod: %s", t[i].name, err);
		for (j = 0; j < MAX_OTHERS && t[i].others[j] != NULL; j++) {
			char nm[16];

			snprintf(nm, sizeof(nm), "o%zu", j);
			others[nothers++] = mkpod(nm, t[i].others[j], NULL, 0);
		}
		rc = admit_pod(node, p, t[i].is_static, others, nothers, &reason, &message);
		print_message("case %s: rc=%d reason=%s message=%s\n", t[i].name, rc,
		    reason ? reason : "-", message ? message : "-");
		if (t[i].reason == NULL) {
			if (rc != 0)
				fail_msg("%s: refused (%s: %s), expected admitted", t[i].name,
				    reason, message);
		} else {
			if (rc == 0)
				fail_msg("%s: admitted, expected %s", t[i].name, t[i].reason);
			if (strcmp(reason, t[i].reason) != 0)
				fail_msg(
				    "%s: reason %s, expected %s", t[i].name, reason, t[i].reason);
			if (t[i].message != NULL && strcmp(message, t[i].message) != 0)
				fail_msg("%s: message\n  %s\nexpected\n  %s", t[i].name, message,
				    t[i].message);
		}
		free(reason);
		free(message);
		for (j = 0; j < nothers; j++)
			pod_unref(others[j]);
		pod_unref(p);
	}
}

#define C(cpu, mem)                                                                                \
	"{'name': 'c', 'image': 'i', 'resources': {'requests': {'cpu': '" cpu "', 'memory': '" mem \
	"'}}}"
#define CN(name, cpu, mem)                                                                         \
	"{'name': '" name "', 'image': 'i', 'resources': {'requests': {'cpu': '" cpu "'}}}"
#define APP(...) "'containers': [" __VA_ARGS__ "]"

static void
test_resources(void **state)
{
	static const struct tcase t[] = {
		{ "cpu fits", APP(C("400m", "1Mi")), { APP(C("1600m", "1Mi")) }, 0, NULL, 0, NULL,
		    NULL },
		{ "cpu over", APP(C("500m", "1Mi")), { APP(C("1600m", "1Mi")) }, 0, NULL, 0,
		    "OutOfcpu",
		    "Node didn't have enough resource: cpu, requested: 500, used: 1600, "
		    "capacity: 2000" },
		{ "memory over", APP(C("10m", "1Gi")), { APP(C("10m", "1536Mi")) }, 0, NULL, 0,
		    "OutOfmemory",
		    "Node didn't have enough resource: memory, requested: 1073741824, used: "
		    "1610612736, capacity: 2147483648" },
		{ "no requests on a full node", APP("{'name': 'c', 'image': 'i'}"),
		    { APP(C("2", "2Gi")) }, 0, NULL, 0, NULL, NULL },
		{ "limits count as requests",
		    APP("{'name': 'c', 'image': 'i', 'resources': "
		        "{'limits': {'cpu': '3'}}}"),
		    { NULL }, 0, NULL, 0, "OutOfcpu", NULL },
		{ "init containers: the larger of init and apps",
		    "'initContainers': [" CN("i", "1500m", "1Mi") "], " APP(
		        CN("a", "300m", "1Mi") ", " CN("b", "300m", "1Mi")),
		    { APP(C("600m", "1Mi")) }, 0, NULL, 0, "OutOfcpu",
		    "Node didn't have enough resource: cpu, requested: 1500, used: 600, "
		    "capacity: 2000" },
		{ "restartable init containers summed",
		    "'initContainers': [{'name': 's', 'image': 'i', 'restartPolicy': 'Always', "
		    "'resources': {'requests': {'cpu': '700m'}}}, " CN(
		        "i", "500m", "1Mi") "], " APP(C("600m", "1Mi")),
		    { APP(C("800m", "1Mi")) }, 0, NULL, 0, "OutOfcpu",
		    "Node didn't have enough resource: cpu, requested: 1300, used: 800, "
		    "capacity: 2000" },
		{ "overhead counted", APP(C("1", "1Mi")) ", 'overhead': {'cpu': '250m'}",
		    { APP(C("800m", "1Mi")) }, 0, NULL, 0, "OutOfcpu",
		    "Node didn't have enough resource: cpu, requested: 1250, used: 800, "
		    "capacity: 2000" },
		{ "pods", APP("{'name': 'c', 'image': 'i'}"),
		    { APP("{'name': 'c', 'image': 'i'}"), APP("{'name': 'c', 'image': 'i'}"),
		        APP("{'name': 'c', 'image': 'i'}"), APP("{'name': 'c', 'image': 'i'}") },
		    0, NULL, 0, "OutOfpods",
		    "Node didn't have enough resource: pods, requested: 1, used: 4, capacity: 4" },
		{ "ephemeral-storage",
		    APP("{'name': 'c', 'image': 'i', 'resources': {'requests': "
		        "{'ephemeral-storage': '11Gi'}}}"),
		    { NULL }, 0, NULL, 0, "OutOfephemeral-storage", NULL },
		{ "extended resource the node has: over",
		    APP("{'name': 'c', 'image': 'i', "
		        "'resources': {'limits': "
		        "{'example.com/gpu': '2'}}}"),
		    { NULL }, 0, NULL, 0, "OutOfexample.com/gpu",
		    "Node didn't have enough resource: example.com/gpu, requested: 2, used: 0, "
		    "capacity: 1" },
		{ "extended resource the node lacks: dropped",
		    APP("{'name': 'c', 'image': 'i', "
		        "'resources': {'limits': "
		        "{'example.com/fpga': '9'}}}"),
		    { NULL }, 0, NULL, 0, NULL, NULL },
		{ "cpu is checked before memory", APP(C("3", "3Gi")), { NULL }, 0, NULL, 0,
		    "OutOfcpu", NULL },
	};
	struct admit_node n = test_node();

	(void)state;
	run_table(t, nitems(t), &n);
}

#define AFF(...)                                                                                   \
	APP("{'name': 'c', 'image': 'i'}")                                                         \
	", 'affinity': {'nodeAffinity': "                                                          \
	"{'requiredDuringSchedulingIgnoredDuringExecution': {'nodeSelectorTerms': [" __VA_ARGS__   \
	"]}}}"
#define EXPR(k, op, vals) "{'matchExpressions': [{'key': '" k "', 'operator': '" op "'" vals "}]}"
#define NOAFF             "Predicate NodeAffinity failed: node(s) didn't match Pod's node affinity/selector"

static void
test_node_affinity(void **state)
{
	static const struct tcase t[] = {
		{ "nodeSelector matches",
		    APP("{'name': 'c', 'image': 'i'}") ", 'nodeSelector': "
		                                       "{'zone': 'a'}",
		    { NULL }, 0, NULL, 0, NULL, NULL },
		{ "nodeSelector differs",
		    APP("{'name': 'c', 'image': 'i'}") ", 'nodeSelector': "
		                                       "{'zone': 'b'}",
		    { NULL }, 0, NULL, 0, "NodeAffinity", NOAFF },
		{ "In", AFF(EXPR("zone", "In", ", 'values': ['b', 'a']")), { NULL }, 0, NULL, 0,
		    NULL, NULL },
		{ "In, no value", AFF(EXPR("zone", "In", ", 'values': ['b']")), { NULL }, 0, NULL,
		    0, "NodeAffinity", NOAFF },
		{ "NotIn", AFF(EXPR("zone", "NotIn", ", 'values': ['a']")), { NULL }, 0, NULL, 0,
		    "NodeAffinity", NOAFF },
		{ "NotIn, absent label", AFF(EXPR("rack", "NotIn", ", 'values': ['a']")), { NULL },
		    0, NULL, 0, NULL, NULL },
		{ "Exists", AFF(EXPR("disk", "Exists", "")), { NULL }, 0, NULL, 0, NULL, NULL },
		{ "Exists, absent", AFF(EXPR("gpu", "Exists", "")), { NULL }, 0, NULL, 0,
		    "NodeAffinity", NOAFF },
		{ "DoesNotExist", AFF(EXPR("gpu", "DoesNotExist", "")), { NULL }, 0, NULL, 0, NULL,
		    NULL },
		{ "DoesNotExist, present", AFF(EXPR("disk", "DoesNotExist", "")), { NULL }, 0, NULL,
		    0, "NodeAffinity", NOAFF },
		{ "Gt", AFF(EXPR("tier", "Gt", ", 'values': ['3']")), { NULL }, 0, NULL, 0, NULL,
		    NULL },
		{ "Gt, equal", AFF(EXPR("tier", "Gt", ", 'values': ['5']")), { NULL }, 0, NULL, 0,
		    "NodeAffinity", NOAFF },
		{ "Lt", AFF(EXPR("tier", "Lt", ", 'values': ['6']")), { NULL }, 0, NULL, 0, NULL,
		    NULL },
		{ "Gt on a non-integer label", AFF(EXPR("disk", "Gt", ", 'values': ['1']")),
		    { NULL }, 0, NULL, 0, "NodeAffinity", NOAFF },
		{ "matchFields metadata.name",
		    AFF("{'matchFields': [{'key': 'metadata.name', 'operator': 'In', 'values': "
		        "['node-a']}]}"),
		    { NULL }, 0, NULL, 0, NULL, NULL },
		{ "matchFields another node",
		    AFF("{'matchFields': [{'key': 'metadata.name', 'operator': 'In', 'values': "
		        "['node-b']}]}"),
		    { NULL }, 0, NULL, 0, "NodeAffinity", NOAFF },
		{ "terms are ORed",
		    AFF(EXPR("zone", "In", ", 'values': ['b']") ", " EXPR("disk", "Exists", "")),
		    { NULL }, 0, NULL, 0, NULL, NULL },
		{ "requirements of a term are ANDed",
		    AFF("{'matchExpressions': [{'key': 'zone', 'operator': 'In', 'values': ['a']},"
		        " {'key': 'gpu', 'operator': 'Exists'}]}"),
		    { NULL }, 0, NULL, 0, "NodeAffinity", NOAFF },
		{ "an empty term matches nothing", AFF("{}"), { NULL }, 0, NULL, 0, "NodeAffinity",
		    NOAFF },
		{ "nodeName of another node",
		    APP("{'name': 'c', 'image': 'i'}") ", 'nodeName': 'node-b'", { NULL }, 0, NULL,
		    0, "NodeName",
		    "Predicate NodeName failed: node(s) didn't match the requested node name" },
	};
	struct admit_node n = test_node();

	(void)state;
	run_table(t, nitems(t), &n);
}

#define PORT(hp, proto, ip)                                                                        \
	APP("{'name': 'c', 'image': 'i', 'ports': [{'containerPort': 80, 'hostPort': " hp          \
	    ", 'protocol': '" proto "'" ip "}]}")
#define NOPORT                                                                                     \
	"Predicate NodePorts failed: node(s) didn't have free ports for the requested pod ports"

static void
test_host_ports(void **state)
{
	static const struct tcase t[] = {
		{ "same port and protocol", PORT("8080", "TCP", ""), { PORT("8080", "TCP", "") }, 0,
		    NULL, 0, "NodePorts", NOPORT },
		{ "other protocol", PORT("8080", "UDP", ""), { PORT("8080", "TCP", "") }, 0, NULL,
		    0, NULL, NULL },
		{ "other port", PORT("8081", "TCP", ""), { PORT("8080", "TCP", "") }, 0, NULL, 0,
		    NULL, NULL },
		{ "other host IPs", PORT("8080", "TCP", ", 'hostIP': '127.0.0.2'"),
		    { PORT("8080", "TCP", ", 'hostIP': '127.0.0.1'") }, 0, NULL, 0, NULL, NULL },
		{ "one IP and the wildcard", PORT("8080", "TCP", ", 'hostIP': '127.0.0.1'"),
		    { PORT("8080", "TCP", ", 'hostIP': '0.0.0.0'") }, 0, NULL, 0, "NodePorts",
		    NOPORT },
		{ "an init container's port",
		    "'initContainers': [{'name': 'i', 'image': 'i', 'ports': [{'containerPort': 1,"
		    " 'hostPort': 9000}]}], " APP("{'name': 'c', 'image': 'i'}"),
		    { PORT("9000", "TCP", "") }, 0, NULL, 0, "NodePorts", NOPORT },
	};
	struct admit_node n = test_node();

	(void)state;
	run_table(t, nitems(t), &n);
}

#define TOL(...) APP("{'name': 'c', 'image': 'i'}") ", 'tolerations': [" __VA_ARGS__ "]"
#define UNTOL    "Predicate TaintToleration failed: node(s) had untolerated taint"

static void
test_taints(void **state)
{
	static const struct tcase t[] = {
		{ "NoExecute taint not tolerated", APP("{'name': 'c', 'image': 'i'}"), { NULL }, 0,
		    NULL, 0, "TaintToleration", UNTOL },
		{ "a static pod is not checked", APP("{'name': 'c', 'image': 'i'}"), { NULL }, 1,
		    NULL, 0, NULL, NULL },
		{ "Equal with the value", TOL("{'key': 'dedicated', 'value': 'infra'}"), { NULL },
		    0, NULL, 0, NULL, NULL },
		{ "Equal with another value", TOL("{'key': 'dedicated', 'value': 'web'}"), { NULL },
		    0, NULL, 0, "TaintToleration", UNTOL },
		{ "Exists on the key", TOL("{'key': 'dedicated', 'operator': 'Exists'}"), { NULL },
		    0, NULL, 0, NULL, NULL },
		{ "Exists with no key tolerates all", TOL("{'operator': 'Exists'}"), { NULL }, 0,
		    NULL, 0, NULL, NULL },
		{ "another effect does not tolerate",
		    TOL("{'key': 'dedicated', 'operator': 'Exists', 'effect': 'NoSchedule'}"),
		    { NULL }, 0, NULL, 0, "TaintToleration", UNTOL },
		{ "the NoExecute effect tolerates",
		    TOL("{'key': 'dedicated', 'operator': 'Exists', 'effect': 'NoExecute'}"),
		    { NULL }, 0, NULL, 0, NULL, NULL },
	};
	static const struct tcase noschedule[] = {
		{ "a NoSchedule taint is not checked", APP("{'name': 'c', 'image': 'i'}"), { NULL },
		    0, NULL, 0, NULL, NULL },
	};
	struct admit_node n = test_node();

	(void)state;
	n.taints = node_taints;
	n.ntaints = nitems(node_taints);
	run_table(t, nitems(t), &n);
	/* The NoSchedule taint alone is the scheduler's business, not the kubelet's. */
	n.taints = &node_taints[1];
	n.ntaints = 1;
	run_table(noschedule, 1, &n);
}

static void
test_os(void **state)
{
	static const struct tcase t[] = {
		{ "linux label", APP("{'name': 'c', 'image': 'i'}"), { NULL }, 0,
		    "'kubernetes.io/os': 'linux'", 0, NULL, NULL },
		{ "windows label", APP("{'name': 'c', 'image': 'i'}"), { NULL }, 0,
		    "'kubernetes.io/os': 'windows'", 0, "PodOSSelectorNodeLabelDoesNotMatch",
		    "Failed to admit pod as the `kubernetes.io/os` label doesn't match node label" },
		{ "os.name windows",
		    APP("{'name': 'c', 'image': 'i'}") ", 'os': {'name': 'windows'}", { NULL }, 0,
		    NULL, 0, "PodOSNotSupported",
		    "Failed to admit pod as the OS field doesn't match node OS" },
		{ "os.name linux", APP("{'name': 'c', 'image': 'i'}") ", 'os': {'name': 'linux'}",
		    { NULL }, 0, NULL, 0, NULL, NULL },
	};
	struct admit_node n = test_node();

	(void)state;
	run_table(t, nitems(t), &n);
}

static void
test_pressure(void **state)
{
	static const struct tcase mem[] = {
		{ "BestEffort under memory pressure", APP("{'name': 'c', 'image': 'i'}"), { NULL },
		    0, NULL, 0, "Evicted", "The node had condition: [MemoryPressure]. " },
		{ "Burstable under memory pressure", APP(C("10m", "1Mi")), { NULL }, 0, NULL, 0,
		    NULL, NULL },
		{ "BestEffort tolerating memory-pressure",
		    TOL("{'key': 'node.kubernetes.io/memory-pressure', 'operator': 'Exists', "
		        "'effect': 'NoSchedule'}"),
		    { NULL }, 0, NULL, 0, NULL, NULL },
		{ "static BestEffort (critical)", APP("{'name': 'c', 'image': 'i'}"), { NULL }, 1,
		    NULL, 0, NULL, NULL },
		{ "system-critical priority", APP("{'name': 'c', 'image': 'i'}"), { NULL }, 0, NULL,
		    2000000000, NULL, NULL },
	};
	static const struct tcase disk[] = {
		{ "Burstable under disk pressure", APP(C("10m", "1Mi")), { NULL }, 0, NULL, 0,
		    "Evicted", "The node had condition: [DiskPressure]. " },
		{ "static pod under disk pressure", APP(C("10m", "1Mi")), { NULL }, 1, NULL, 0,
		    NULL, NULL },
	};
	static const struct tcase both[] = {
		{ "Burstable under memory and PID pressure", APP(C("10m", "1Mi")), { NULL }, 0,
		    NULL, 0, "Evicted", "The node had condition: [MemoryPressure PIDPressure]. " },
	};
	struct admit_node n = test_node();

	(void)state;
	n.pressure = ADMIT_MEMORY_PRESSURE;
	run_table(mem, nitems(mem), &n);
	n.pressure = ADMIT_DISK_PRESSURE;
	run_table(disk, nitems(disk), &n);
	n.pressure = ADMIT_MEMORY_PRESSURE | ADMIT_PID_PRESSURE;
	run_table(both, nitems(both), &n);
}

/* The node shutdown manager's admit handler: while shutting down every pod is refused,
 * critical and static ones too; its check comes after the predicates. */
static void
test_shutting_down(void **state)
{
	static const struct tcase t[] = {
		{ "a pod while the node shuts down", APP(C("10m", "1Mi")), { NULL }, 0, NULL, 0,
		    "NodeShutdown", "Pod was rejected as the node is shutting down." },
		{ "a static pod too", APP(C("10m", "1Mi")), { NULL }, 1, NULL, 0, "NodeShutdown",
		    NULL },
		{ "a critical pod too", APP(C("10m", "1Mi")), { NULL }, 0, NULL, 2000001000,
		    "NodeShutdown", NULL },
		{ "the predicates first", APP(C("10m", "64Gi")), { NULL }, 0, NULL, 0,
		    "OutOfmemory", NULL },
	};
	struct admit_node n = test_node();

	(void)state;
	n.shutting_down = 1;
	run_table(t, nitems(t), &n);
}

/* The API server's validation of the affinity and os fields. */
static void
test_validation(void **state)
{
	static const struct {
		const char *spec, *err;
	} t[] = {
		{ AFF(EXPR("zone", "In", "")), "values: must be specified when" },
		{ AFF(EXPR("zone", "Exists", ", 'values': ['x']")),
		    "values: may not be specified" },
		{ AFF(EXPR("zone", "Gt", ", 'values': ['x']")), "must be an integer" },
		{ AFF(EXPR("zone", "Lt", ", 'values': ['1', '2']")), "single value" },
		{ AFF("{'matchFields': [{'key': 'metadata.uid', 'operator': 'In', 'values': "
		      "['x']}]}"),
		    "not a valid field selector key" },
		{ AFF(), "must have at least one node selector term" },
		{ APP("{'name': 'c', 'image': 'i'}") ", 'os': {'name': 'plan9'}",
		    "spec.os.name: Unsupported value" },
	};
	size_t i;

	(void)state;
	for (i = 0; i < nitems(t); i++) {
		struct pod *p = mkpod("v", t[i].spec, NULL, 0);
		char        err[512] = "";

		if (pod_validate(p, err, sizeof(err)) == 0)
			fail_msg("case %zu: valid, expected \"%s\"", i, t[i].err);
		if (strstr(err, t[i].err) == NULL)
			fail_msg("case %zu: error \"%s\", expected \"%s\"", i, err, t[i].err);
		pod_unref(p);
	}
	{
		char        json[] = "{\"metadata\": {\"name\": \"x\"}, \"spec\": {\"containers\": "
		                     "[{\"name\": \"c\", \"image\": \"i\"}], \"affinity\": "
		                     "{\"nodeAffinity\": {\"requiredDuringSchedulingIgnoredDuring"
		                     "Execution\": {\"nodeSelectorTerms\": [{\"matchExpressions\": "
		                     "[{\"key\": \"a\", \"operator\": \"Near\"}]}]}}}}}";
		char        err[256];
		struct pod *p = pod_from_json(json, strlen(json), err, sizeof(err));

		assert_null(p);
		assert_non_null(strstr(err, "operator"));
	}
}

/* Allocatable = capacity - kube-reserved - system-reserved - the hard threshold; pressure
 * while a signal is below its threshold. */
static void
test_allocatable(void **state)
{
	static struct quantity kr_items[] = { { "cpu", 100 },
		{ "memory", 100LL * 1048576 * 1000 } };
	static struct quantity sr_items[] = { { "cpu", 400 },
		{ "ephemeral-storage", 1LL * 1073741824 * 1000 } };
	static struct kv       ev_items[] = { { "memory.available", "200Mi" },
		      { "nodefs.available", "10%" }, { "nodefs.inodesFree", "5%" },
		      { "pid.available", "1000" } };
	struct resource_list   kr = { kr_items, 2 }, sr = { sr_items, 2 };
	struct kvlist          ev = { ev_items, 4 };
	struct nodeinfo_opts   o = { &kr, &sr, &ev, 30 };
	struct nodeinfo_host   h = { .ncpu = 4,
		  .mem_total = 8LL << 30,
		  .mem_available = 4LL << 30,
		  .fs_total = 100LL << 30,
		  .fs_available = 50LL << 30,
		  .fs_inodes = 1000000,
		  .fs_inodes_free = 900000,
		  .pid_max = 32768,
		  .pids = 300 };
	struct nodeinfo        n;

	(void)state;
	nodeinfo_compute(&o, &h, &n);
	assert_int_equal(n.cap_cpu_milli, 4000);
	assert_int_equal(n.alloc_cpu_milli, 3500);
	assert_int_equal(n.cap_memory, 8LL << 30);
	assert_int_equal(n.alloc_memory, (8LL << 30) - (100LL << 20) - (200LL << 20));
	assert_int_equal(n.alloc_ephemeral, (100LL << 30) - (1LL << 30) - (10LL << 30));
	assert_int_equal(n.cap_pods, 30);
	assert_int_equal(n.pressure, 0);
	h.mem_available = 150LL << 20;
	nodeinfo_compute(&o, &h, &n);
	assert_int_equal(n.pressure, ADMIT_MEMORY_PRESSURE);
	h.mem_available = 4LL << 30;
	h.fs_available = 9LL << 30;
	nodeinfo_compute(&o, &h, &n);
	assert_int_equal(n.pressure, ADMIT_DISK_PRESSURE);
	h.fs_available = 50LL << 30;
	h.fs_inodes_free = 40000;
	nodeinfo_compute(&o, &h, &n);
	assert_int_equal(n.pressure, ADMIT_DISK_PRESSURE);
	h.fs_inodes_free = 900000;
	h.pids = 32000;
	nodeinfo_compute(&o, &h, &n);
	assert_int_equal(n.pressure, ADMIT_PID_PRESSURE);
	/* Reserved beyond capacity: allocatable is 0, never negative. */
	kr_items[0].milli = 9000;
	nodeinfo_compute(&o, &h, &n);
	assert_int_equal(n.alloc_cpu_milli, 0);
	/* No thresholds: no pressure, allocatable is capacity less what is reserved. */
	o.eviction_hard = NULL;
	h.mem_available = 1;
	nodeinfo_compute(&o, &h, &n);
	assert_int_equal(n.pressure, 0);
	assert_int_equal(n.alloc_memory, (8LL << 30) - (100LL << 20));
	assert_int_equal(nodeinfo_threshold(&ev, "memory.available", 0), 200LL << 20);
	assert_int_equal(nodeinfo_threshold(&ev, "nodefs.available", 1000), 100);
	assert_int_equal(nodeinfo_threshold(&ev, "imagefs.available", 1000), -1);
	/* The host reader fills the figures of this machine. */
	assert_int_equal(nodeinfo_read_host("/", &h), 0);
	assert_true(h.ncpu >= 1 && h.mem_total > 0 && h.fs_total > 0);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_resources),
		cmocka_unit_test(test_node_affinity),
		cmocka_unit_test(test_host_ports),
		cmocka_unit_test(test_taints),
		cmocka_unit_test(test_os),
		cmocka_unit_test(test_pressure),
		cmocka_unit_test(test_shutting_down),
		cmocka_unit_test(test_validation),
		cmocka_unit_test(test_allocatable),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
