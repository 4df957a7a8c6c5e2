/* test_kuberuntime.c — the pure parts of the runtime manager: sandbox config (DNS per
 * dnsPolicy, hostname, labels, log dir, ports, cgroup parent, namespaces, runtime handler),
 * container config (env and downward API, $(VAR) expansion, mounts, labels and
 * annotations, resources), grace periods and restart counts from the log directory. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <cmocka.h>

#include "kuberuntime/kuberuntime.h"
#include "kuberuntime/internal.h"
#include "pod/pod.h"
#include "pod/hash.h"
#include "core/util.h"

static char tmpdir[256];

static struct pod *
yaml_pod(const char *y)
{
	char        err[256];
	struct pod *p = pod_from_yaml(y, strlen(y), err, sizeof(err));

	if (p == NULL)
		fail_msg("decode: %s", err);
	return p;
}

static const char *dns_servers[] = { "10.96.0.10" };

static void
env_init(struct kr_env *e, struct strv *dns, const char *resolv)
{
	memset(e, 0, sizeof(*e));
	dns->v = (char **)dns_servers;
	dns->n = 1;
	e->root_dir = tmpdir;
	e->logs_dir = tmpdir;
	e->resolv_conf = resolv;
	e->cluster_domain = "cluster.local";
	e->cluster_dns = dns;
	e->cgroup_root = "/kubepods";
	e->node_name = "node-1";
	e->host_ip = "192.0.2.7";
	e->node_cpu_milli = 4000;
	e->node_mem_milli = 8LL * 1024 * 1024 * 1024 * 1000;
}

static char *
join(char **v, size_t n)
{
	static char buf[1024];
	size_t      i;

	buf[0] = '\0';
	for (i = 0; i < n; i++) {
		if (i > 0)
			strcat(buf, " ");
		strcat(buf, v[i]);
	}
	return buf;
}

/* ---- DNS ---- */

struct dns_case {
	const char *name;
	const char *spec; /* appended to a pod's spec */
	int         no_cluster_dns;
	int         no_resolv;
	const char *servers;
	const char *searches;
	const char *options;
	int         fallback;
};

static const struct dns_case dns_cases[] = {
	{ "cluster-first", "", 0, 0, "10.96.0.10",
	    "ns1.svc.cluster.local svc.cluster.local cluster.local corp.example example.org",
	    "ndots:5", 0 },
	{ "cluster-first-no-dns-falls-back", "", 1, 0, "192.0.2.53 192.0.2.54",
	    "corp.example example.org", "timeout:2", 1 },
	{ "default", "  dnsPolicy: Default\n", 0, 0, "192.0.2.53 192.0.2.54",
	    "corp.example example.org", "timeout:2", 0 },
	{ "default-no-resolv-conf", "  dnsPolicy: Default\n", 0, 1, "127.0.0.1", ".", "", 0 },
	{ "host-network-cluster-first-is-default", "  hostNetwork: true\n", 0, 0,
	    "192.0.2.53 192.0.2.54", "corp.example example.org", "timeout:2", 0 },
	{ "cluster-first-with-host-net",
	    "  hostNetwork: true\n"
	    "  dnsPolicy: ClusterFirstWithHostNet\n",
	    0, 0, "10.96.0.10",
	    "ns1.svc.cluster.local svc.cluster.local cluster.local corp.example example.org",
	    "ndots:5", 0 },
	{ "none-with-dns-config",
	    "  dnsPolicy: None\n  dnsConfig:\n"
	    "    nameservers: [1.1.1.1]\n    searches: [a.example]\n"
	    "    options:\n    - name: ndots\n      value: \"2\"\n    - name: edns0\n",
	    0, 0, "1.1.1.1", "a.example", "ndots:2 edns0", 0 },
	{ "cluster-first-plus-dns-config",
	    "  dnsConfig:\n    nameservers: [10.96.0.10, 9.9.9.9]\n"
	    "    searches: [extra.example]\n    options:\n    - name: ndots\n      value: \"1\"\n",
	    0, 0, "10.96.0.10 9.9.9.9",
	    "ns1.svc.cluster.local svc.cluster.local cluster.local corp.example example.org "
	    "extra.example",
	    "ndots:1", 0 },
};

static void
test_dns(void **state)
{
	static const char resolv[] =
	    "# comment\nnameserver 192.0.2.53\nnameserver 192.0.2.54\n"
	    "search old.example\nsearch corp.example example.org\noptions timeout:2\n";
	struct kr_resolv host;
	struct kr_env    env;
	struct strv      dns;
	size_t           i;

	(void)state;
	kr_resolv_parse(resolv, &host);
	assert_int_equal(host.servers.n, 2);
	assert_int_equal(host.searches.n, 2);
	for (i = 0; i < nitems(dns_cases); i++) {
		const struct dns_case *c = &dns_cases[i];
		char       *y = xsprintf("metadata:\n  name: p\n  namespace: ns1\n  uid: u1\n"
		                               "spec:\n  containers:\n  - name: c\n    image: busybox\n%s",
		          c->spec);
		struct pod *p = yaml_pod(y);
		Runtime__V1__DNSConfig *d;
		int                     fb;

		env_init(&env, &dns, c->no_resolv ? NULL : "/etc/resolv.conf");
		if (c->no_cluster_dns)
			dns.n = 0;
		d = kr_dns_config(&env, p, c->no_resolv ? NULL : &host, &fb);
		printf("# %s\n", c->name);
		assert_string_equal(join(d->servers, d->n_servers), c->servers);
		assert_string_equal(join(d->searches, d->n_searches), c->searches);
		assert_string_equal(join(d->options, d->n_options), c->options);
		assert_int_equal(fb, c->fallback);
		kr_msg_free(d);
		pod_unref(p);
		free(y);
	}
	kr_resolv_clear(&host);
}

/* ---- sandbox config ---- */

static void
test_sandbox_config(void **state)
{
	struct kr_env                  env;
	struct strv                    dns;
	struct pod                    *p;
	Runtime__V1__PodSandboxConfig *c;
	char                           err[256], *logdir;
	const char                    *h;
	struct kvlist                  handlers;
	struct kv                      kvs[1] = { { "gvisor", "runsc" } };

	(void)state;
	env_init(&env, &dns, NULL);
	p = yaml_pod("metadata:\n  name: web\n  namespace: prod\n  uid: 1234\n"
	             "  labels: {app: web, io.kubernetes.pod.name: spoofed}\n"
	             "  annotations: {note: hi}\n"
	             "spec:\n  hostname: custom\n  runtimeClassName: gvisor\n"
	             "  securityContext:\n    runAsUser: 1000\n    fsGroup: 2000\n"
	             "    supplementalGroups: [3000]\n"
	             "    sysctls:\n    - name: net.core.somaxconn\n      value: \"1024\"\n"
	             "  containers:\n  - name: c\n    image: busybox\n"
	             "    resources: {limits: {cpu: 500m, memory: 64Mi}}\n"
	             "    ports:\n    - containerPort: 80\n      hostPort: 8080\n"
	             "    - containerPort: 53\n      protocol: UDP\n"
	             "  - name: d\n    image: busybox\n"
	             "    ports:\n    - containerPort: 80\n      hostPort: 8080\n");
	c = kr_sandbox_config(&env, p, 3, err, sizeof(err));
	assert_non_null(c);
	assert_string_equal(c->metadata->name, "web");
	assert_string_equal(c->metadata->namespace_, "prod");
	assert_string_equal(c->metadata->uid, "1234");
	assert_int_equal(c->metadata->attempt, 3);
	assert_string_equal(c->hostname, "custom");
	logdir = xsprintf("%s/prod_web_1234", tmpdir);
	assert_string_equal(c->log_directory, logdir);
	free(logdir);
	assert_int_equal(c->n_port_mappings, 2); /* the duplicate is dropped */
	assert_int_equal(c->port_mappings[0]->host_port, 8080);
	assert_int_equal(c->port_mappings[1]->protocol, RUNTIME__V1__PROTOCOL__UDP);
	assert_string_equal(kr_map_get((void *const *)c->labels, c->n_labels, "app"), "web");
	assert_string_equal(
	    kr_map_get((void *const *)c->labels, c->n_labels, "io.kubernetes.pod.name"), "web");
	assert_string_equal(
	    kr_map_get((void *const *)c->labels, c->n_labels, "io.kubernetes.pod.namespace"),
	    "prod");
	assert_string_equal(
	    kr_map_get((void *const *)c->labels, c->n_labels, "io.kubernetes.pod.uid"), "1234");
	assert_string_equal(
	    kr_map_get((void *const *)c->annotations, c->n_annotations, "note"), "hi");
	/* Burstable: limits without equal requests on every container. */
	assert_string_equal(c->linux->cgroup_parent, "/kubepods/burstable/pod1234");
	assert_int_equal(c->linux->security_context->namespace_options->network,
	    RUNTIME__V1__NAMESPACE_MODE__POD);
	assert_int_equal(c->linux->security_context->namespace_options->pid,
	    RUNTIME__V1__NAMESPACE_MODE__CONTAINER);
	assert_int_equal(c->linux->security_context->run_as_user->value, 1000);
	assert_int_equal(c->linux->security_context->n_supplemental_groups, 2);
	assert_int_equal(c->linux->security_context->seccomp->profile_type,
	    RUNTIME__V1__SECURITY_PROFILE__PROFILE_TYPE__Unconfined);
	assert_string_equal(
	    kr_map_get((void *const *)c->linux->sysctls, c->linux->n_sysctls, "net.core.somaxconn"),
	    "1024");
	kr_msg_free(c);

	/* RuntimeClass through the configured map. */
	handlers.items = kvs;
	handlers.n = 1;
	assert_int_equal(kr_runtime_handler(&env, p, &h, err, sizeof(err)), -1);
	assert_non_null(strstr(err, "gvisor"));
	env.runtime_handlers = &handlers;
	assert_int_equal(kr_runtime_handler(&env, p, &h, err, sizeof(err)), 0);
	assert_string_equal(h, "runsc");
	pod_unref(p);

	/* Host network: no hostname, NODE namespaces; besteffort cgroup. */
	p = yaml_pod("metadata: {name: hn, namespace: default, uid: u2}\n"
	             "spec:\n  hostNetwork: true\n  hostPID: true\n  containers:\n"
	             "  - {name: c, image: busybox}\n");
	c = kr_sandbox_config(&env, p, 0, err, sizeof(err));
	assert_non_null(c);
	assert_true(c->hostname == NULL || c->hostname[0] == '\0');
	assert_int_equal(c->linux->security_context->namespace_options->network,
	    RUNTIME__V1__NAMESPACE_MODE__NODE);
	assert_int_equal(
	    c->linux->security_context->namespace_options->pid, RUNTIME__V1__NAMESPACE_MODE__NODE);
	assert_string_equal(c->linux->cgroup_parent, "/kubepods/besteffort/podu2");
	assert_int_equal(kr_map_get((void *const *)c->labels, c->n_labels, "app") == NULL, 1);
	kr_msg_free(c);
	pod_unref(p);

	/* Guaranteed: no tier; cgroups disabled with "". */
	p = yaml_pod("metadata: {name: g, uid: u3}\nspec:\n  containers:\n"
	             "  - name: c\n    image: busybox\n"
	             "    resources: {limits: {cpu: '1', memory: 1Gi}}\n");
	c = kr_sandbox_config(&env, p, 0, err, sizeof(err));
	assert_string_equal(c->linux->cgroup_parent, "/kubepods/podu3");
	assert_string_equal(c->hostname, "g");
	kr_msg_free(c);
	env.cgroup_root = "";
	c = kr_sandbox_config(&env, p, 0, err, sizeof(err));
	assert_true(c->linux->cgroup_parent == NULL || c->linux->cgroup_parent[0] == '\0');
	kr_msg_free(c);
	pod_unref(p);
}

static void
test_hostname(void **state)
{
	char        buf[80], *y;
	struct pod *p;

	(void)state;
	y = xsprintf("metadata: {name: %s, uid: u}\nspec:\n  containers:\n"
	             "  - {name: c, image: busybox}\n",
	    "a23456789-123456789-123456789-123456789-123456789-123456789-12-xyz");
	p = yaml_pod(y);
	kr_pod_hostname(p, buf, sizeof(buf));
	/* Cut to 63, then the trailing '-' goes. */
	assert_string_equal(buf, "a23456789-123456789-123456789-123456789-123456789-123456789-12");
	pod_unref(p);
	free(y);
}

/* ---- container config ---- */

static const char *
env_get(const Runtime__V1__ContainerConfig *cc, const char *k)
{
	size_t i;

	for (i = 0; i < cc->n_envs; i++)
		if (strcmp(cc->envs[i]->key, k) == 0)
			return cc->envs[i]->value;
	return NULL;
}

static void
test_container_config(void **state)
{
	struct kr_env                 env;
	struct strv                   dns;
	struct pod                   *p;
	Runtime__V1__ContainerConfig *cc;
	struct kr_cinput              in;
	char                          err[512], *y, *path, hash[32];
	const char                   *ips[] = { "10.88.0.5", "fd00::5" };
	struct strv                   podips = { (char **)ips, 2 };
	struct stat                   st;
	size_t                        i;
	int                           found_empty = 0, found_host = 0, found_term = 0;

	(void)state;
	env_init(&env, &dns, NULL);
	y = xsprintf(
	    "metadata:\n  name: web\n  namespace: prod\n  uid: u9\n"
	    "  labels: {app: web}\n  annotations: {team: blue}\n"
	    "spec:\n  serviceAccountName: sa\n"
	    "  volumes:\n  - name: scratch\n    emptyDir: {}\n"
	    "  - name: data\n    hostPath: {path: %s/hp/data, type: DirectoryOrCreate}\n"
	    "  containers:\n  - name: c\n    image: busybox\n"
	    "    command: [sh, -c, 'echo $(GREETING) $$(HOME) $(NOPE)']\n"
	    "    args: ['$(POD_NAME)']\n    workingDir: /work\n"
	    "    resources:\n      requests: {cpu: 250m, memory: 32Mi}\n"
	    "      limits: {cpu: 500m, memory: 64Mi}\n"
	    "    env:\n"
	    "    - {name: GREETING, value: hello}\n"
	    "    - {name: BOTH, value: '$(GREETING) world $$(GREETING)'}\n"
	    "    - name: POD_NAME\n      valueFrom: {fieldRef: {fieldPath: metadata.name}}\n"
	    "    - name: NS\n      valueFrom: {fieldRef: {fieldPath: metadata.namespace}}\n"
	    "    - name: UID\n      valueFrom: {fieldRef: {fieldPath: metadata.uid}}\n"
	    "    - name: APP\n      valueFrom: {fieldRef: {fieldPath: \"metadata.labels['app']\"}}\n"
	    "    - name: TEAM\n      valueFrom: {fieldRef: {fieldPath: \"metadata.annotations['team']\"}}\n"
	    "    - name: NODE\n      valueFrom: {fieldRef: {fieldPath: spec.nodeName}}\n"
	    "    - name: SA\n      valueFrom: {fieldRef: {fieldPath: spec.serviceAccountName}}\n"
	    "    - name: IP\n      valueFrom: {fieldRef: {fieldPath: status.podIP}}\n"
	    "    - name: IPS\n      valueFrom: {fieldRef: {fieldPath: status.podIPs}}\n"
	    "    - name: HOSTIP\n      valueFrom: {fieldRef: {fieldPath: status.hostIP}}\n"
	    "    - name: CPU_LIMIT_M\n      valueFrom: {resourceFieldRef: {resource: limits.cpu, divisor: 1m}}\n"
	    "    - name: CPU_REQ\n      valueFrom: {resourceFieldRef: {resource: requests.cpu}}\n"
	    "    - name: MEM_MI\n      valueFrom: {resourceFieldRef: {resource: limits.memory, divisor: 1Mi}}\n"
	    "    - name: OPT\n      valueFrom: {configMapKeyRef: {name: cm, key: k, optional: true}}\n"
	    "    volumeMounts:\n    - {name: scratch, mountPath: /scratch}\n"
	    "    - {name: data, mountPath: /data, readOnly: true}\n"
	    "    lifecycle:\n      preStop:\n        exec: {command: [sh, -c, 'echo \"bye\"']}\n"
	    "    ports:\n    - {name: http, containerPort: 80}\n",
	    tmpdir);
	p = yaml_pod(y);
	free(y);
	memset(&in, 0, sizeof(in));
	in.restart_count = 2;
	in.image_ref = "sha256:abc";
	in.pod_ip = "10.88.0.5";
	in.pod_ips = &podips;
	cc = kr_container_config(&env, p, &p->containers[0], &in, err, sizeof(err));
	if (cc == NULL)
		fail_msg("config: %s", err);
	assert_string_equal(cc->metadata->name, "c");
	assert_int_equal(cc->metadata->attempt, 2);
	assert_string_equal(cc->image->image, "sha256:abc");
	assert_string_equal(cc->image->user_specified_image, "busybox");
	assert_string_equal(cc->log_path, "c/2.log");
	assert_string_equal(cc->working_dir, "/work");
	assert_string_equal(join(cc->command, cc->n_command), "sh -c echo hello $(HOME) $(NOPE)");
	assert_string_equal(join(cc->args, cc->n_args), "web");
	assert_string_equal(env_get(cc, "BOTH"), "hello world $(GREETING)");
	assert_string_equal(env_get(cc, "POD_NAME"), "web");
	assert_string_equal(env_get(cc, "NS"), "prod");
	assert_string_equal(env_get(cc, "UID"), "u9");
	assert_string_equal(env_get(cc, "APP"), "web");
	assert_string_equal(env_get(cc, "TEAM"), "blue");
	assert_string_equal(env_get(cc, "NODE"), "node-1");
	assert_string_equal(env_get(cc, "SA"), "sa");
	assert_string_equal(env_get(cc, "IP"), "10.88.0.5");
	assert_string_equal(env_get(cc, "IPS"), "10.88.0.5,fd00::5");
	assert_string_equal(env_get(cc, "HOSTIP"), "192.0.2.7");
	assert_string_equal(env_get(cc, "CPU_LIMIT_M"), "500");
	assert_string_equal(env_get(cc, "CPU_REQ"), "1"); /* 250m rounded up to 1 core */
	assert_string_equal(env_get(cc, "MEM_MI"), "64");
	assert_null(env_get(cc, "OPT"));
	assert_string_equal(
	    kr_map_get((void *const *)cc->labels, cc->n_labels, "io.kubernetes.container.name"),
	    "c");
	assert_string_equal(
	    kr_map_get((void *const *)cc->labels, cc->n_labels, "io.kubernetes.pod.uid"), "u9");
	snprintf(hash, sizeof(hash), "%llx", (unsigned long long)container_hash(&p->containers[0]));
	assert_string_equal(kr_map_get((void *const *)cc->annotations, cc->n_annotations,
	                        "io.kubernetes.container.hash"),
	    hash);
	assert_string_equal(kr_map_get((void *const *)cc->annotations, cc->n_annotations,
	                        "io.kubernetes.container.restartCount"),
	    "2");
	assert_string_equal(kr_map_get((void *const *)cc->annotations, cc->n_annotations,
	                        "io.kubernetes.container.terminationMessagePath"),
	    "/dev/termination-log");
	assert_string_equal(kr_map_get((void *const *)cc->annotations, cc->n_annotations,
	                        "io.kubernetes.pod.terminationGracePeriod"),
	    "30");
	assert_string_equal(kr_map_get((void *const *)cc->annotations, cc->n_annotations,
	                        "io.kubernetes.container.preStopHandler"),
	    "{\"exec\":{\"command\":[\"sh\",\"-c\",\"echo \\\"bye\\\"\"]}}");
	assert_string_equal(kr_map_get((void *const *)cc->annotations, cc->n_annotations,
	                        "io.kubernetes.container.ports"),
	    "[{\"name\":\"http\",\"containerPort\":80,\"protocol\":\"TCP\"}]");
	for (i = 0; i < cc->n_mounts; i++) {
		const Runtime__V1__Mount *m = cc->mounts[i];

		if (strcmp(m->container_path, "/scratch") == 0) {
			found_empty = 1;
			assert_non_null(strstr(
			    m->host_path, "/pods/u9/volumes/kubernetes.io~empty-dir/scratch"));
			assert_int_equal(stat(m->host_path, &st), 0);
			assert_true(S_ISDIR(st.st_mode));
		} else if (strcmp(m->container_path, "/data") == 0) {
			found_host = 1;
			assert_true(m->readonly);
			assert_int_equal(stat(m->host_path, &st), 0);
		} else if (strcmp(m->container_path, "/dev/termination-log") == 0) {
			found_term = 1;
			assert_int_equal(stat(m->host_path, &st), 0);
		}
	}
	assert_true(found_empty && found_host && found_term);
	/* cpu 250m -> 256 shares; limit 500m -> quota 50000 of 100000; 64Mi. */
	assert_int_equal(cc->linux->resources->cpu_shares, 256);
	assert_int_equal(cc->linux->resources->cpu_quota, 50000);
	assert_int_equal(cc->linux->resources->cpu_period, 100000);
	assert_int_equal(cc->linux->resources->memory_limit_in_bytes, 64 * 1024 * 1024);
	assert_true(
	    cc->linux->resources->oom_score_adj >= 2 && cc->linux->resources->oom_score_adj <= 999);
	assert_true(cc->linux->security_context->n_masked_paths > 0);
	path = xsprintf("%s/prod_web_u9/c", tmpdir);
	assert_int_equal(stat(path, &st), 0); /* the container's log dir */
	free(path);
	kr_msg_free(cc);
	pod_unref(p);
}

struct cfg_err_case {
	const char *name;
	const char *spec;
	const char *err_has;
};

static const struct cfg_err_case cfg_err_cases[] = {
	{ "configmap-ref",
	    "    env:\n    - name: X\n      valueFrom: {configMapKeyRef: {name: cm, key: k}}\n",
	    "configmap \"cm\" in namespace default: no API server" },
	{ "secret-ref",
	    "    env:\n    - name: X\n      valueFrom: {secretKeyRef: {name: s, key: k}}\n",
	    "secret \"s\"" },
	{ "env-from", "    envFrom:\n    - configMapRef: {name: cm}\n", "configmap \"cm\"" },
	{ "configmap-volume", "    volumeMounts:\n    - {name: cmv, mountPath: /c}\n",
	    "no API server" },
	{ "missing-volume", "    volumeMounts:\n    - {name: nope, mountPath: /c}\n", "no volume" },
	{ "hostpath-directory-missing", "    volumeMounts:\n    - {name: hpd, mountPath: /c}\n",
	    "does not exist" },
	{ "bad-field-ref",
	    "    env:\n    - name: X\n      valueFrom: {fieldRef: {fieldPath: spec.bogus}}\n",
	    "fieldPath" },
};

static void
test_container_config_errors(void **state)
{
	struct kr_env    env;
	struct strv      dns;
	struct kr_cinput in;
	char             err[512];
	size_t           i;

	(void)state;
	env_init(&env, &dns, NULL);
	memset(&in, 0, sizeof(in));
	for (i = 0; i < nitems(cfg_err_cases); i++) {
		char *y = xsprintf(
		    "metadata: {name: p, uid: ue}\nspec:\n  volumes:\n"
		    "  - name: cmv\n    configMap: {name: x}\n"
		    "  - name: hpd\n    hostPath: {path: /nonexistent/klet/x, type: Directory}\n"
		    "  containers:\n  - name: c\n    image: busybox\n%s",
		    cfg_err_cases[i].spec);
		struct pod                   *p = yaml_pod(y);
		Runtime__V1__ContainerConfig *cc;

		err[0] = '\0';
		cc = kr_container_config(&env, p, &p->containers[0], &in, err, sizeof(err));
		printf("# %s: %s\n", cfg_err_cases[i].name, err);
		assert_null(cc);
		assert_non_null(strstr(err, cfg_err_cases[i].err_has));
		pod_unref(p);
		free(y);
	}
}

static void
test_expand(void **state)
{
	char *keys[] = { "A", "B", "A" };
	char *vals[] = { "1", "two", "3" };
	static const struct {
		const char *in, *out;
	} cases[] = {
		{ "x", "x" },
		{ "$(A)", "3" },
		{ "$(B)-$(A)", "two-3" },
		{ "$$(A)", "$(A)" },
		{ "$(C)", "$(C)" },
		{ "$(A", "$(A" },
		{ "$", "$" },
		{ "a$$b", "a$b" },
		{ "", "" },
	};
	size_t i;

	(void)state;
	for (i = 0; i < nitems(cases); i++) {
		char *o = kr_expand(cases[i].in, keys, vals, 3);

		assert_string_equal(o, cases[i].out);
		free(o);
	}
}

/* ---- grace, restart counts ---- */

static void
test_grace(void **state)
{
	static const struct {
		const char *spec; /* extra metadata/spec lines */
		int64_t     override;
		int64_t     want;
	} cases[] = {
		{ "", -1, 30 }, /* API default */
		{ "spec_tgp: 60", -1, 60 },
		{ "spec_tgp: 0", -1, KR_MIN_GRACE_SECONDS }, /* never below 2 */
		{ "spec_tgp: 1", -1, KR_MIN_GRACE_SECONDS },
		{ "del: 10", -1, 10 },    /* deletion grace wins */
		{ "spec_tgp: 60", 5, 5 }, /* override wins */
		{ "spec_tgp: 60", 0, KR_MIN_GRACE_SECONDS },
	};
	size_t i;

	(void)state;
	for (i = 0; i < nitems(cases); i++) {
		struct pod *p = yaml_pod("metadata: {name: p, uid: u}\nspec:\n  containers:\n"
		                         "  - {name: c, image: busybox}\n");
		int64_t     v;

		if (strncmp(cases[i].spec, "spec_tgp: ", 10) == 0) {
			p->termination_grace.set = 1;
			p->termination_grace.v = strtoll(cases[i].spec + 10, NULL, 10);
		} else if (strncmp(cases[i].spec, "del: ", 5) == 0) {
			p->deletion_grace.set = 1;
			p->deletion_grace.v = strtoll(cases[i].spec + 5, NULL, 10);
		}
		v = kuberuntime_grace(p, cases[i].override);
		assert_int_equal(v, cases[i].want);
		pod_unref(p);
	}
	assert_int_equal(kuberuntime_grace(NULL, -1), KR_MIN_GRACE_SECONDS);
}

static void
touch(const char *dir, const char *name)
{
	char *p = xsprintf("%s/%s", dir, name);
	FILE *f = fopen(p, "w");

	assert_non_null(f);
	fclose(f);
	free(p);
}

static void
test_restart_count_from_logs(void **state)
{
	char *pod = xsprintf("%s/ns_p_u", tmpdir), *c = xsprintf("%s/c", pod);

	(void)state;
	assert_int_equal(kuberuntime_restart_count_from_logs(pod, "c"), 0); /* no dir */
	mkdir(pod, 0755);
	mkdir(c, 0755);
	assert_int_equal(kuberuntime_restart_count_from_logs(pod, "c"), 0); /* empty */
	touch(c, "0.log");
	assert_int_equal(kuberuntime_restart_count_from_logs(pod, "c"), 1);
	touch(c, "3.log.20240101-000000");
	touch(c, "2.log");
	touch(c, "12abc.log");
	touch(c, "x.log");
	touch(c, "7.txt");
	assert_int_equal(kuberuntime_restart_count_from_logs(pod, "c"), 4);
	free(c);
	free(pod);
}

static int
setup(void **state)
{
	(void)state;
	snprintf(tmpdir, sizeof(tmpdir), "/tmp/klet-test-kr-XXXXXX");
	if (mkdtemp(tmpdir) == NULL)
		return -1;
	return 0;
}

static int
teardown(void **state)
{
	char *cmd = xsprintf("rm -rf '%s'", tmpdir);
	int   rc;

	(void)state;
	rc = system(cmd);
	free(cmd);
	return rc == 0 ? 0 : -1;
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_dns),
		cmocka_unit_test(test_sandbox_config),
		cmocka_unit_test(test_hostname),
		cmocka_unit_test(test_container_config),
		cmocka_unit_test(test_container_config_errors),
		cmocka_unit_test(test_expand),
		cmocka_unit_test(test_grace),
		cmocka_unit_test(test_restart_count_from_logs),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
