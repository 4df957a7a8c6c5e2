/* test_pod_hash.c — container_hash: pinned value (stable across builds), insensitive to field
 * order and JSON vs YAML, changes exactly for the fields whose change needs a restart. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "pod/pod.h"
#include "pod/hash.h"

static const char base[] =
    "metadata: {name: p}\n"
    "spec:\n"
    "  volumes: [{name: v}, {name: w}]\n"
    "  containers:\n"
    "  - name: c\n"
    "    image: busybox:1.36\n"
    "    command: [sh]\n"
    "    args: [-c, sleep 1]\n"
    "    workingDir: /w\n"
    "    env:\n"
    "    - {name: A, value: \"1\"}\n"
    "    - name: B\n"
    "      valueFrom: {secretKeyRef: {name: s, key: k}}\n"
    "    envFrom: [{configMapRef: {name: cm}}]\n"
    "    ports: [{containerPort: 80, name: http}]\n"
    "    resources: {requests: {cpu: 100m, memory: 1Mi}, limits: {memory: 2Mi}}\n"
    "    volumeMounts: [{name: v, mountPath: /v}]\n"
    "    livenessProbe: {httpGet: {port: 80}, periodSeconds: 10}\n"
    "    readinessProbe: {exec: {command: [true]}}\n"
    "    lifecycle: {preStop: {exec: {command: [x]}}}\n"
    "    securityContext: {runAsUser: 1}\n"
    "    terminationMessagePath: /dev/termination-log\n"
    "status:\n"
    "  phase: Running\n";

/* The hash of base, pinned: if this changes, every running container would be restarted
 * after an upgrade. Change it only on purpose. */
#define BASE_HASH 0x66834abb5e435989ULL

struct hcase {
	const char *name;
	const char *from; /* replaced once in base */
	const char *to;
	int         changes;
};

static const struct hcase hcases[] = {
	/* restart-relevant */
	{ "image", "busybox:1.36", "busybox:1.37", 1 },
	{ "command", "command: [sh]", "command: [bash]", 1 },
	{ "command moved into args", "command: [sh]\n    args: [-c, sleep 1]",
	    "command: [sh, -c]\n    args: [sleep 1]", 1 },
	{ "args", "sleep 1", "sleep 2", 1 },
	{ "workingDir", "workingDir: /w", "workingDir: /x", 1 },
	{ "env value", "value: \"1\"", "value: \"2\"", 1 },
	{ "env name", "{name: A,", "{name: Z,", 1 },
	{ "env order",
	    "    - {name: A, value: \"1\"}\n    - name: B\n"
	    "      valueFrom: {secretKeyRef: {name: s, key: k}}\n",
	    "    - name: B\n      valueFrom: {secretKeyRef: {name: s, key: k}}\n"
	    "    - {name: A, value: \"1\"}\n",
	    1 },
	{ "env valueFrom key", "key: k}", "key: j}", 1 },
	{ "env valueFrom kind", "secretKeyRef: {name: s, key: k}",
	    "configMapKeyRef: {name: s, key: k}", 1 },
	{ "env valueFrom optional", "key: k}", "key: k, optional: true}", 1 },
	{ "envFrom", "configMapRef: {name: cm}", "secretRef: {name: cm}", 1 },
	{ "envFrom prefix", "envFrom: [{", "envFrom: [{prefix: X_, ", 1 },
	{ "port number", "containerPort: 80,", "containerPort: 81,", 1 },
	{ "port protocol", "containerPort: 80,", "containerPort: 80, protocol: UDP,", 1 },
	{ "port hostPort", "containerPort: 80,", "containerPort: 80, hostPort: 8080,", 1 },
	{ "cpu request", "cpu: 100m", "cpu: 200m", 1 },
	{ "memory limit", "limits: {memory: 2Mi}", "limits: {memory: 3Mi}", 1 },
	{ "new limit", "limits: {memory: 2Mi}", "limits: {memory: 2Mi, cpu: 1}", 1 },
	{ "mount path", "mountPath: /v}", "mountPath: /u}", 1 },
	{ "mount volume", "[{name: v, mountPath", "[{name: w, mountPath", 1 },
	{ "mount readOnly", "mountPath: /v}", "mountPath: /v, readOnly: true}", 1 },
	{ "security runAsUser", "runAsUser: 1}", "runAsUser: 2}", 1 },
	{ "security privileged", "runAsUser: 1}", "runAsUser: 1, privileged: true}", 1 },
	{ "security capabilities", "runAsUser: 1}",
	    "runAsUser: 1, capabilities: {add: [NET_ADMIN]}}", 1 },
	{ "preStop command", "preStop: {exec: {command: [x]}}", "preStop: {exec: {command: [y]}}",
	    1 },
	{ "preStop kind", "preStop: {exec: {command: [x]}}", "preStop: {sleep: {seconds: 3}}", 1 },
	{ "postStart added", "lifecycle: {", "lifecycle: {postStart: {exec: {command: [x]}}, ", 1 },
	{ "stdin", "workingDir: /w\n", "workingDir: /w\n    stdin: true\n", 1 },
	{ "stdinOnce", "workingDir: /w\n", "workingDir: /w\n    stdin: true\n    stdinOnce: true\n",
	    1 },
	{ "tty", "workingDir: /w\n", "workingDir: /w\n    tty: true\n", 1 },
	{ "termination message path", "/dev/termination-log", "/tmp/t", 1 },
	{ "termination message policy", "workingDir: /w\n",
	    "workingDir: /w\n    terminationMessagePolicy: FallbackToLogsOnError\n", 1 },
	{ "pull policy", "workingDir: /w\n", "workingDir: /w\n    imagePullPolicy: Always\n", 1 },
	{ "name", "  - name: c\n", "  - name: d\n", 1 },
	/* not restart-relevant */
	{ "liveness period", "periodSeconds: 10}", "periodSeconds: 30}", 0 },
	{ "liveness timing", "periodSeconds: 10}",
	    "periodSeconds: 10, timeoutSeconds: 5, failureThreshold: 9, initialDelaySeconds: 3}",
	    0 },
	{ "liveness handler", "livenessProbe: {httpGet: {port: 80}",
	    "livenessProbe: {tcpSocket: {port: 80}", 0 },
	{ "readiness removed", "    readinessProbe: {exec: {command: [true]}}\n", "", 0 },
	{ "startup added", "    readinessProbe:",
	    "    startupProbe: {exec: {command: [x]}}\n    readinessProbe:", 0 },
	{ "status phase", "phase: Running", "phase: Failed", 0 },
	{ "status added", "  phase: Running\n",
	    "  phase: Running\n  containerStatuses: [{name: c, "
	    "restartCount: 5, ready: true}]\n",
	    0 },
	{ "pod labels", "metadata: {name: p}", "metadata: {name: p, labels: {a: b}}", 0 },
	{ "pod grace", "spec:\n", "spec:\n  terminationGracePeriodSeconds: 5\n", 0 },
	{ "default pull policy written out", "workingDir: /w\n",
	    "workingDir: /w\n    imagePullPolicy: IfNotPresent\n", 0 },
	{ "default message path written out", "    terminationMessagePath: /dev/termination-log\n",
	    "", 0 },
	{ "resource order", "requests: {cpu: 100m, memory: 1Mi}",
	    "requests: {memory: 1Mi, cpu: 100m}", 0 },
	{ "same quantity spelled otherwise", "cpu: 100m", "cpu: 0.1", 0 },
	{ "same memory spelled otherwise", "limits: {memory: 2Mi}", "limits: {memory: 2097152}",
	    0 },
	{ "key order", "{name: A, value: \"1\"}", "{value: \"1\", name: A}", 0 },
};

static char *
replace(const char *s, const char *from, const char *to)
{
	const char *at = strstr(s, from);
	size_t      n;
	char       *out;

	if (at == NULL)
		fail_msg("\"%s\" not in base", from);
	n = strlen(s) - strlen(from) + strlen(to);
	out = malloc(n + 1);
	memcpy(out, s, (size_t)(at - s));
	strcpy(out + (at - s), to);
	strcat(out, at + strlen(from));
	return out;
}

static uint64_t
hash_of(const char *yaml, int json)
{
	char        err[256];
	struct pod *p;
	uint64_t    h;

	p = json ? pod_from_json(yaml, strlen(yaml), err, sizeof(err))
	         : pod_from_yaml(yaml, strlen(yaml), err, sizeof(err));
	if (p == NULL)
		fail_msg("decode: %s\n%s", err, yaml);
	if (pod_validate(p, err, sizeof(err)) != 0)
		fail_msg("validate: %s\n%s", err, yaml);
	h = container_hash(&p->containers[0]);
	pod_unref(p);
	return h;
}

static void
test_hash_table(void **state)
{
	uint64_t h0 = hash_of(base, 0), h;
	size_t   i;
	int      nfail = 0;

	(void)state;
	for (i = 0; i < sizeof(hcases) / sizeof(hcases[0]); i++) {
		char *doc = replace(base, hcases[i].from, hcases[i].to);

		h = hash_of(doc, 0);
		if (hcases[i].changes == 1 && h == h0) {
			print_error("%s: hash did not change\n", hcases[i].name);
			nfail++;
		} else if (hcases[i].changes == 0 && h != h0) {
			print_error("%s: hash changed\n", hcases[i].name);
			nfail++;
		}
		free(doc);
	}
	assert_int_equal(nfail, 0);
}

/* "workingDir: ''" and no workingDir hash alike (absent == empty). */
static void
test_hash_empty_is_absent(void **state)
{
	char *a = replace(base, "    workingDir: /w\n", "    workingDir: \"\"\n");
	char *b = replace(base, "    workingDir: /w\n", "");

	(void)state;
	assert_true(hash_of(a, 0) == hash_of(b, 0));
	free(a);
	free(b);
}

static void
test_hash_pinned(void **state)
{
	uint64_t h = hash_of(base, 0);

	(void)state;
	print_message("base hash %016llx\n", (unsigned long long)h);
	assert_true(h == BASE_HASH);
	/* Same process, same value; a dup hashes alike. */
	assert_true(hash_of(base, 0) == h);
	assert_true(container_hash(NULL) == 0);
}

/* The same container in JSON with its keys in another order. */
static void
test_hash_json_order(void **state)
{
	static const char json[] =
	    "{\"status\":{\"phase\":\"Pending\"},\"spec\":{\"containers\":[{"
	    "\"securityContext\":{\"runAsUser\":1},"
	    "\"lifecycle\":{\"preStop\":{\"exec\":{\"command\":[\"x\"]}}},"
	    "\"volumeMounts\":[{\"mountPath\":\"/v\",\"name\":\"v\"}],"
	    "\"resources\":{\"limits\":{\"memory\":\"2Mi\"},\"requests\":{\"memory\":\"1Mi\","
	    "\"cpu\":\"100m\"}},"
	    "\"ports\":[{\"name\":\"http\",\"containerPort\":80}],"
	    "\"envFrom\":[{\"configMapRef\":{\"name\":\"cm\"}}],"
	    "\"env\":[{\"value\":\"1\",\"name\":\"A\"},{\"valueFrom\":{\"secretKeyRef\":"
	    "{\"key\":\"k\",\"name\":\"s\"}},\"name\":\"B\"}],"
	    "\"workingDir\":\"/w\",\"args\":[\"-c\",\"sleep 1\"],\"command\":[\"sh\"],"
	    "\"image\":\"busybox:1.36\",\"name\":\"c\"}],"
	    "\"volumes\":[{\"name\":\"w\"},{\"name\":\"v\"}]},\"metadata\":{\"name\":\"p\"}}";

	(void)state;
	assert_true(hash_of(json, 1) == hash_of(base, 0));
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_hash_table),
		cmocka_unit_test(test_hash_empty_is_absent),
		cmocka_unit_test(test_hash_pinned),
		cmocka_unit_test(test_hash_json_order),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
