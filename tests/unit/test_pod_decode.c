/* test_pod_decode.c — v1.Pod from JSON and YAML: every field family, every API default,
 * errors naming the field path, document size and depth limits. */
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

static char *
slurp(const char *name, size_t *len)
{
	const char *top = getenv("top_srcdir");
	char        path[1024];
	FILE       *f;
	char       *buf;
	long        n;

	snprintf(path, sizeof(path), "%s/tests/data/pods/%s", top != NULL ? top : ".", name);
	f = fopen(path, "rb");
	if (f == NULL)
		fail_msg("cannot open %s", path);
	fseek(f, 0, SEEK_END);
	n = ftell(f);
	fseek(f, 0, SEEK_SET);
	buf = malloc((size_t)n + 1);
	assert_int_equal(fread(buf, 1, (size_t)n, f), (size_t)n);
	buf[n] = '\0';
	fclose(f);
	*len = (size_t)n;
	return buf;
}

static struct pod *
load(const char *name)
{
	char        err[256] = "";
	size_t      len;
	char       *buf = slurp(name, &len);
	struct pod *p;

	p = strstr(name, ".json") != NULL ? pod_from_json(buf, len, err, sizeof(err))
	                                  : pod_from_yaml(buf, len, err, sizeof(err));
	free(buf);
	if (p == NULL)
		fail_msg("%s: %s", name, err);
	return p;
}

static struct pod *
decode(int yaml, const char *doc, char *err, size_t errlen)
{
	return yaml ? pod_from_yaml(doc, strlen(doc), err, errlen)
	            : pod_from_json(doc, strlen(doc), err, errlen);
}

static int64_t
rl(const struct resource_list *l, const char *name)
{
	const struct quantity *q = resource_list_get(l, name);

	assert_non_null(q);
	return q->milli;
}

/* Every field of tests/data/pods/full.{yaml,json}. */
static void
check_full(const struct pod *p)
{
	const struct container        *c, *w;
	const struct env_var          *e;
	const struct volume           *v;
	const struct container_status *cs;

	/* metadata */
	assert_string_equal(p->name, "web-0");
	assert_string_equal(p->ns, "shop");
	assert_string_equal(p->uid, "5f0c1e7a-1b2c-4d3e-8f90-123456789abc");
	assert_string_equal(p->resource_version, "48213");
	assert_int_equal(p->generation, 3);
	assert_int_equal(p->labels.n, 2);
	assert_string_equal(kvlist_get(&p->labels, "app"), "web");
	assert_string_equal(kvlist_get(&p->labels, "tier"), "frontend");
	assert_null(kvlist_get(&p->labels, "nope"));
	assert_string_equal(kvlist_get(&p->annotations, "kubernetes.io/config.source"), "file");
	assert_string_equal(kvlist_get(&p->annotations, "note"), "multi word value");
	assert_int_equal(p->creation_ts, 1704164645);
	assert_int_equal(p->deletion_ts, 1704164400);
	assert_true(p->deletion_grace.set);
	assert_int_equal(p->deletion_grace.v, 45);
	assert_int_equal(p->nowners, 1);
	assert_string_equal(p->owners[0].api_version, "apps/v1");
	assert_string_equal(p->owners[0].kind, "StatefulSet");
	assert_string_equal(p->owners[0].name, "web");
	assert_string_equal(p->owners[0].uid, "0a1b2c3d-0000-1111-2222-333344445555");
	assert_int_equal(p->owners[0].controller, 1);

	/* spec scalars */
	assert_int_equal(p->restart_policy, RESTART_ON_FAILURE);
	assert_true(p->termination_grace.set);
	assert_int_equal(p->termination_grace.v, 60);
	assert_true(p->active_deadline.set);
	assert_int_equal(p->active_deadline.v, 3600);
	assert_int_equal(p->host_network, 0);
	assert_int_equal(p->host_pid, 1);
	assert_int_equal(p->host_ipc, 1);
	assert_int_equal(p->share_process_ns, 1);
	assert_string_equal(p->hostname, "web-0");
	assert_string_equal(p->subdomain, "web");
	assert_int_equal(p->dns_policy, DNS_NONE);
	assert_non_null(p->dns_config);
	assert_int_equal(p->dns_config->nameservers.n, 2);
	assert_string_equal(p->dns_config->nameservers.v[0], "10.96.0.10");
	assert_string_equal(p->dns_config->searches.v[1], "svc.cluster.local");
	assert_int_equal(p->dns_config->options.n, 2);
	assert_string_equal(p->dns_config->options.items[0].k, "ndots");
	assert_string_equal(p->dns_config->options.items[0].v, "5");
	assert_string_equal(p->dns_config->options.items[1].k, "edns0");
	assert_null(p->dns_config->options.items[1].v);
	assert_string_equal(p->node_name, "node-1");
	assert_string_equal(kvlist_get(&p->node_selector, "kubernetes.io/os"), "linux");
	assert_int_equal(p->ntolerations, 2);
	assert_string_equal(p->tolerations[0].key, "node.kubernetes.io/not-ready");
	assert_string_equal(p->tolerations[0].op, "Exists");
	assert_string_equal(p->tolerations[0].effect, "NoExecute");
	assert_true(p->tolerations[0].toleration_seconds.set);
	assert_int_equal(p->tolerations[0].toleration_seconds.v, 300);
	assert_string_equal(p->tolerations[1].value, "web");
	assert_false(p->tolerations[1].toleration_seconds.set);
	assert_string_equal(p->runtime_class, "runc");
	assert_string_equal(p->service_account, "web-sa");
	assert_string_equal(p->scheduler_name, "my-scheduler");
	assert_string_equal(p->priority_class, "high");
	assert_int_equal(p->priority, 1000);
	assert_non_null(p->security);
	assert_int_equal(p->security->run_as_user.v, 1000);
	assert_int_equal(p->security->run_as_group.v, 3000);
	assert_true(p->security->run_as_non_root.set && p->security->run_as_non_root.v);
	assert_int_equal(p->security->fs_group.v, 2000);
	assert_int_equal(p->security->nsupplemental_groups, 2);
	assert_int_equal(p->security->supplemental_groups[1], 5000);
	assert_string_equal(p->security->sysctls.items[0].k, "net.ipv4.ip_local_port_range");
	assert_string_equal(p->security->sysctls.items[0].v, "1024 65535");
	assert_string_equal(p->security->seccomp.type, "RuntimeDefault");
	assert_int_equal(p->image_pull_secrets.n, 1);
	assert_string_equal(p->image_pull_secrets.v[0], "regcred");
	assert_string_equal(kvlist_get(&p->host_aliases, "127.0.0.2"), "foo.local,bar.local");

	/* volumes */
	assert_int_equal(p->nvolumes, 13);
	v = &p->volumes[0];
	assert_string_equal(v->v_name, "data");
	assert_int_equal(v->v_kind, VOL_EMPTY_DIR);
	assert_string_equal(v->v_medium, "Memory");
	assert_int_equal(v->v_size_limit_milli, 64LL * 1024 * 1024 * 1000);
	v = &p->volumes[1];
	assert_int_equal(v->v_kind, VOL_HOST_PATH);
	assert_string_equal(v->v_path, "/var/log");
	assert_string_equal(v->v_host_path_type, "Directory");
	v = &p->volumes[2];
	assert_int_equal(v->v_kind, VOL_CONFIG_MAP);
	assert_string_equal(v->v_source, "web-config");
	assert_int_equal(v->v_default_mode, 0440);
	assert_int_equal(v->v_optional, 1);
	assert_int_equal(v->v_nitems, 1);
	assert_string_equal(v->v_items[0].key, "nginx.conf");
	assert_string_equal(v->v_items[0].path, "nginx.conf");
	assert_int_equal(v->v_items[0].mode, 0400);
	v = &p->volumes[3];
	assert_int_equal(v->v_kind, VOL_SECRET);
	assert_string_equal(v->v_source, "web-secret");
	assert_int_equal(v->v_default_mode, 0644); /* default */
	v = &p->volumes[4];
	assert_int_equal(v->v_kind, VOL_DOWNWARD_API);
	assert_string_equal(v->v_items[0].key, "metadata.labels");
	assert_string_equal(v->v_items[0].path, "labels");
	assert_int_equal(v->v_items[0].mode, -1);
	assert_int_equal(p->volumes[5].v_kind, VOL_PROJECTED);
	assert_int_equal(p->volumes[5].v_default_mode, 0644);
	v = &p->volumes[6];
	assert_int_equal(v->v_kind, VOL_PVC);
	assert_string_equal(v->v_source, "web-data");
	assert_int_equal(v->v_read_only, 1);
	assert_int_equal(v->v_default_mode, -1);
	assert_int_equal(p->volumes[7].v_kind, VOL_CSI);
	assert_string_equal(p->volumes[7].v_source, "secrets-store.csi.k8s.io");
	v = &p->volumes[8];
	assert_int_equal(v->v_kind, VOL_NFS);
	assert_string_equal(v->v_source, "nfs.example.com");
	assert_string_equal(v->v_path, "/exports/web");
	assert_int_equal(p->volumes[9].v_kind, VOL_EPHEMERAL);
	assert_int_equal(p->volumes[10].v_kind, VOL_OTHER);
	assert_string_equal(p->volumes[10].v_kind_name, "gitRepo");
	assert_int_equal(p->volumes[11].v_kind, VOL_EMPTY_DIR); /* no source: emptyDir */
	assert_int_equal(p->volumes[11].v_nsources, 0);
	assert_string_equal(p->volumes[12].v_name, "config-extra");
	assert_int_equal(p->volumes[12].v_nsources, 1);

	/* init containers, sidecar */
	assert_int_equal(p->ninit_containers, 2);
	c = &p->init_containers[0];
	assert_int_equal(c->c_kind, CK_INIT);
	assert_string_equal(c->c_name, "init-db");
	assert_int_equal(c->c_command.n, 3);
	assert_string_equal(c->c_command.v[2], "until nslookup db; do sleep 1; done");
	assert_int_equal(c->c_pull_policy, PULL_IF_NOT_PRESENT);
	assert_false(container_is_sidecar(c));
	c = &p->init_containers[1];
	assert_true(container_is_sidecar(c));
	assert_int_equal(c->c_pull_policy, PULL_IF_NOT_PRESENT); /* digest */
	assert_non_null(c->c_startup);
	assert_int_equal(c->c_startup->pr_handler.h_kind, HANDLER_EXEC);

	/* the main container: every field family */
	assert_int_equal(p->ncontainers, 2);
	w = &p->containers[0];
	assert_ptr_equal(pod_find_container(p, "web"), w);
	assert_ptr_equal(pod_find_container(p, "log-shipper"), &p->init_containers[1]);
	assert_ptr_equal(pod_find_container(p, "debugger"), &p->ephemeral_containers[0]);
	assert_null(pod_find_container(p, "none"));
	assert_int_equal(w->c_kind, CK_APP);
	assert_string_equal(w->c_image, "registry.example.com:5000/shop/web");
	assert_string_equal(w->c_command.v[0], "/usr/sbin/nginx");
	assert_int_equal(w->c_args.n, 2);
	assert_string_equal(w->c_args.v[1], "daemon off;");
	assert_string_equal(w->c_working_dir, "/srv");
	assert_int_equal(w->c_nenv, 6);
	e = &w->c_env[0];
	assert_string_equal(e->name, "PLAIN");
	assert_int_equal(e->src, ENV_VALUE);
	assert_string_equal(e->value, "hello");
	assert_null(w->c_env[1].value);
	e = &w->c_env[2];
	assert_int_equal(e->src, ENV_FIELD_REF);
	assert_string_equal(e->ref_key, "spec.nodeName");
	assert_string_equal(e->ref_api_version, "v1");
	e = &w->c_env[3];
	assert_int_equal(e->src, ENV_RESOURCE_FIELD_REF);
	assert_string_equal(e->ref_key, "limits.memory");
	assert_string_equal(e->ref_container, "web");
	assert_int_equal(e->ref_divisor_milli, 1048576000LL);
	e = &w->c_env[4];
	assert_int_equal(e->src, ENV_CONFIG_MAP_KEY_REF);
	assert_string_equal(e->ref_name, "web-config");
	assert_string_equal(e->ref_key, "mode");
	assert_int_equal(e->optional, 1);
	e = &w->c_env[5];
	assert_int_equal(e->src, ENV_SECRET_KEY_REF);
	assert_string_equal(e->ref_name, "web-secret");
	assert_string_equal(e->ref_key, "password");
	assert_int_equal(e->optional, 0);
	assert_int_equal(w->c_nenv_from, 2);
	assert_string_equal(w->c_env_from[0].prefix, "CFG_");
	assert_int_equal(w->c_env_from[0].is_secret, 0);
	assert_string_equal(w->c_env_from[0].name, "web-env");
	assert_int_equal(w->c_env_from[1].is_secret, 1);
	assert_int_equal(w->c_env_from[1].optional, 1);
	assert_int_equal(w->c_nports, 2);
	assert_string_equal(w->c_ports[0].name, "http");
	assert_int_equal(w->c_ports[0].container_port, 8080);
	assert_int_equal(w->c_ports[0].protocol, PROTO_TCP);
	assert_int_equal(w->c_ports[1].host_port, 5353);
	assert_int_equal(w->c_ports[1].protocol, PROTO_UDP);
	assert_string_equal(w->c_ports[1].host_ip, "0.0.0.0");
	assert_int_equal(rl(&w->c_resources.requests, "cpu"), 100);
	assert_int_equal(rl(&w->c_resources.requests, "memory"), 134217728000LL);
	assert_int_equal(rl(&w->c_resources.requests, "ephemeral-storage"), 1073741824000LL);
	assert_int_equal(rl(&w->c_resources.limits, "cpu"), 500);
	assert_int_equal(rl(&w->c_resources.limits, "memory"), 1610612736000LL);
	assert_int_equal(rl(&w->c_resources.limits, "hugepages-2Mi"), 4194304000LL);
	assert_null(resource_list_get(&w->c_resources.limits, "gpu"));
	assert_int_equal(w->c_nmounts, 3);
	assert_string_equal(w->c_mounts[1].mount_path, "/etc/nginx/nginx.conf");
	assert_string_equal(w->c_mounts[1].sub_path, "nginx.conf");
	assert_int_equal(w->c_mounts[1].read_only, 1);
	assert_int_equal(w->c_mounts[0].propagation, PROP_NONE);
	assert_int_equal(w->c_mounts[2].propagation, PROP_HOST_TO_CONTAINER);
	/* probes */
	assert_non_null(w->c_liveness);
	assert_int_equal(w->c_liveness->pr_handler.h_kind, HANDLER_HTTP_GET);
	assert_int_equal(w->c_liveness->pr_handler.h_nkinds, 1);
	assert_string_equal(w->c_liveness->pr_handler.h_path, "/healthz");
	assert_string_equal(w->c_liveness->pr_handler.h_scheme, "HTTPS");
	assert_string_equal(w->c_liveness->pr_handler.h_host, "127.0.0.1");
	assert_int_equal(w->c_liveness->pr_handler.h_port.is_str, 0);
	assert_int_equal(w->c_liveness->pr_handler.h_port.num, 8080);
	assert_int_equal(w->c_liveness->pr_handler.h_nheaders, 1);
	assert_string_equal(w->c_liveness->pr_handler.h_headers[0].name, "X-Probe");
	assert_string_equal(w->c_liveness->pr_handler.h_headers[0].value, "liveness");
	assert_int_equal(w->c_liveness->pr_initial_delay, 5);
	assert_int_equal(w->c_liveness->pr_timeout, 2);
	assert_int_equal(w->c_liveness->pr_period, 15);
	assert_int_equal(w->c_liveness->pr_success_threshold, 1);
	assert_int_equal(w->c_liveness->pr_failure_threshold, 4);
	assert_int_equal(w->c_liveness->pr_termination_grace.v, 10);
	assert_int_equal(w->c_readiness->pr_handler.h_kind, HANDLER_TCP_SOCKET);
	assert_int_equal(w->c_readiness->pr_handler.h_port.is_str, 1);
	assert_string_equal(w->c_readiness->pr_handler.h_port.str, "http");
	assert_int_equal(w->c_readiness->pr_timeout, 1); /* defaults */
	assert_int_equal(w->c_readiness->pr_period, 10);
	assert_int_equal(w->c_readiness->pr_success_threshold, 1);
	assert_int_equal(w->c_readiness->pr_failure_threshold, 3);
	assert_false(w->c_readiness->pr_termination_grace.set);
	assert_int_equal(w->c_startup->pr_handler.h_kind, HANDLER_GRPC);
	assert_int_equal(w->c_startup->pr_handler.h_grpc_port, 9090);
	assert_string_equal(w->c_startup->pr_handler.h_grpc_service, "health");
	/* lifecycle */
	assert_int_equal(w->c_post_start->h_kind, HANDLER_EXEC);
	assert_string_equal(w->c_post_start->h_exec.v[2], "echo started > /tmp/started");
	assert_int_equal(w->c_pre_stop->h_kind, HANDLER_SLEEP);
	assert_int_equal(w->c_pre_stop->h_sleep_seconds, 5);
	assert_string_equal(w->c_term_msg_path, "/tmp/term");
	assert_int_equal(w->c_term_msg_policy, TERM_MSG_FALLBACK_TO_LOGS);
	assert_int_equal(w->c_pull_policy, PULL_NEVER);
	/* security context */
	assert_non_null(w->c_security);
	assert_true(w->c_security->privileged.set);
	assert_false(w->c_security->privileged.v);
	assert_int_equal(w->c_security->run_as_user.v, 101);
	assert_int_equal(w->c_security->run_as_group.v, 101);
	assert_true(w->c_security->run_as_non_root.v);
	assert_true(w->c_security->read_only_root_fs.v);
	assert_true(w->c_security->allow_privilege_escalation.set);
	assert_false(w->c_security->allow_privilege_escalation.v);
	assert_string_equal(w->c_security->cap_add.v[0], "NET_BIND_SERVICE");
	assert_string_equal(w->c_security->cap_drop.v[0], "ALL");
	assert_string_equal(w->c_security->seccomp.type, "Localhost");
	assert_string_equal(w->c_security->seccomp.localhost, "profiles/web.json");
	assert_string_equal(w->c_security->proc_mount, "Default");
	assert_int_equal(w->c_stdin, 1);
	assert_int_equal(w->c_stdin_once, 1);
	assert_int_equal(w->c_tty, 1);
	assert_false(w->c_has_restart_policy);
	/* the second container: defaults */
	c = &p->containers[1];
	assert_int_equal(c->c_pull_policy, PULL_ALWAYS);
	assert_string_equal(c->c_term_msg_path, "/dev/termination-log");
	assert_int_equal(c->c_term_msg_policy, TERM_MSG_FILE);
	assert_null(c->c_security);
	assert_null(c->c_liveness);
	assert_null(c->c_post_start);
	assert_int_equal(c->c_pre_stop->h_kind, HANDLER_HTTP_GET);
	assert_string_equal(c->c_pre_stop->h_scheme, "HTTP");
	assert_string_equal(c->c_pre_stop->h_path, "/");
	assert_int_equal(c->c_pre_stop->h_port.num, 8081);
	/* ephemeral */
	assert_int_equal(p->nephemeral_containers, 1);
	c = &p->ephemeral_containers[0];
	assert_int_equal(c->c_kind, CK_EPHEMERAL);
	assert_string_equal(c->c_target_container, "web");
	assert_int_equal(c->c_pull_policy, PULL_ALWAYS);

	/* status */
	assert_int_equal(p->status.phase, PHASE_RUNNING);
	assert_string_equal(p->status.message, "all good");
	assert_string_equal(p->status.reason, "Started");
	assert_string_equal(p->status.host_ip, "192.168.1.10");
	assert_string_equal(p->status.pod_ip, "10.244.1.7");
	assert_int_equal(p->status.pod_ips.n, 2);
	assert_string_equal(p->status.pod_ips.v[1], "fd00::7");
	assert_int_equal(p->status.start_time, 1704164650);
	assert_true(p->status.has_qos_class);
	assert_int_equal(p->status.qos_class, QOS_BURSTABLE);
	assert_int_equal(p->status.nconditions, 2);
	assert_string_equal(p->status.conditions[0].type, "Ready");
	assert_int_equal(p->status.conditions[0].status, COND_TRUE);
	assert_int_equal(p->status.conditions[0].last_probe_time, 0);
	assert_int_equal(p->status.conditions[0].last_transition_time, 1704164700);
	assert_int_equal(p->status.conditions[1].status, COND_FALSE);
	assert_string_equal(p->status.conditions[1].reason, "Unschedulable");
	assert_string_equal(p->status.conditions[1].message, "no nodes");
	assert_int_equal(p->status.ninit_statuses, 1);
	cs = &p->status.init_statuses[0];
	assert_int_equal(cs->state.kind, CSTATE_TERMINATED);
	assert_int_equal(cs->state.exit_code, 0);
	assert_string_equal(cs->state.reason, "Completed");
	assert_int_equal(cs->state.started_at, 1704164651);
	assert_int_equal(cs->state.finished_at, 1704164652);
	assert_string_equal(cs->state.container_id, "containerd://aaaa");
	assert_string_equal(cs->image_id, "docker.io/library/busybox@sha256:abcd");
	assert_int_equal(p->status.nstatuses, 2);
	cs = &p->status.statuses[0];
	assert_string_equal(cs->name, "web");
	assert_int_equal(cs->state.kind, CSTATE_RUNNING);
	assert_int_equal(cs->state.started_at, 1704164660);
	assert_int_equal(cs->last_state.kind, CSTATE_TERMINATED);
	assert_int_equal(cs->last_state.exit_code, 137);
	assert_int_equal(cs->last_state.signal, 9);
	assert_string_equal(cs->last_state.reason, "OOMKilled");
	assert_string_equal(cs->last_state.message, "out of memory");
	assert_int_equal(cs->ready, 1);
	assert_true(cs->started.set && cs->started.v);
	assert_int_equal(cs->restart_count, 1);
	assert_string_equal(cs->image, "registry.example.com:5000/shop/web:latest");
	assert_string_equal(cs->container_id, "containerd://cccc");
	cs = &p->status.statuses[1];
	assert_int_equal(cs->state.kind, CSTATE_WAITING);
	assert_string_equal(cs->state.reason, "CrashLoopBackOff");
	assert_true(cs->started.set);
	assert_false(cs->started.v);
	assert_int_equal(cs->restart_count, 3);
	assert_int_equal(p->status.nephemeral_statuses, 0);
}

static void
test_full_yaml(void **state)
{
	struct pod *p = load("full.yaml");
	char        err[256];

	(void)state;
	check_full(p);
	assert_int_equal(pod_validate(p, err, sizeof(err)), 0);
	pod_unref(p);
}

static void
test_full_json(void **state)
{
	struct pod *p = load("full.json");

	(void)state;
	check_full(p);
	pod_unref(p);
}

/* The JSON twin has its keys shuffled: same model, same hashes. */
static void
test_json_yaml_same(void **state)
{
	struct pod *a = load("full.yaml"), *b = load("full.json"), *c;
	size_t      i;

	(void)state;
	assert_int_equal(a->ncontainers, b->ncontainers);
	for (i = 0; i < a->ncontainers; i++)
		assert_true(container_hash(&a->containers[i]) == container_hash(&b->containers[i]));
	for (i = 0; i < a->ninit_containers; i++)
		assert_true(container_hash(&a->init_containers[i]) ==
		    container_hash(&b->init_containers[i]));
	for (i = 0; i < a->nephemeral_containers; i++)
		assert_true(container_hash(&a->ephemeral_containers[i]) ==
		    container_hash(&b->ephemeral_containers[i]));
	/* References: the pod lives until the last one is dropped; only a sole holder may
	 * write it. */
	assert_int_equal(a->refs, 1);
	assert_ptr_equal(pod_exclusive(a), a);
	c = (struct pod *)pod_ref(a);
	assert_ptr_equal(c, a);
	assert_int_equal(a->refs, 2);
	assert_null(pod_exclusive(a));
	pod_unref(a);
	assert_ptr_equal(pod_exclusive(c), c);
	check_full(c);
	for (i = 0; i < c->ncontainers; i++)
		assert_true(container_hash(&c->containers[i]) == container_hash(&b->containers[i]));
	pod_unref(c);
	pod_unref(b);
	assert_null(pod_ref(NULL));
	assert_null(pod_exclusive(NULL));
	pod_unref(NULL);
}

static void
test_examples(void **state)
{
	static const char *const files[] = { "nginx.yaml", "sidecar.yaml", "static.json",
		"job.yaml" };
	size_t                   i;
	char                     err[256];

	(void)state;
	for (i = 0; i < sizeof(files) / sizeof(files[0]); i++) {
		struct pod *p = load(files[i]);

		if (pod_validate(p, err, sizeof(err)) != 0)
			fail_msg("%s: %s", files[i], err);
		pod_unref(p);
	}
}

/* ---- defaults ---- */

struct default_case {
	const char *name;
	const char *yaml;
	void (*check)(const struct pod *);
};

static void
chk_minimal(const struct pod *p)
{
	const struct container *c = &p->containers[0];

	assert_int_equal(p->restart_policy, RESTART_ALWAYS);
	assert_int_equal(p->dns_policy, DNS_CLUSTER_FIRST);
	assert_true(p->termination_grace.set);
	assert_int_equal(p->termination_grace.v, 30);
	assert_false(p->active_deadline.set);
	assert_false(p->deletion_grace.set);
	assert_string_equal(p->scheduler_name, "default-scheduler");
	assert_null(p->ns);
	assert_null(p->dns_config);
	assert_null(p->security);
	assert_int_equal(p->status.phase, PHASE_PENDING);
	assert_false(p->status.has_qos_class);
	assert_int_equal(c->c_pull_policy, PULL_ALWAYS);
	assert_string_equal(c->c_term_msg_path, "/dev/termination-log");
	assert_int_equal(c->c_term_msg_policy, TERM_MSG_FILE);
	assert_false(c->c_has_restart_policy);
	assert_int_equal(c->c_nports, 0);
	assert_null(c->c_ports);
}

static void
chk_probe_defaults(const struct pod *p)
{
	const struct probe *pr = p->containers[0].c_liveness;

	assert_int_equal(pr->pr_handler.h_kind, HANDLER_HTTP_GET);
	assert_string_equal(pr->pr_handler.h_scheme, "HTTP");
	assert_string_equal(pr->pr_handler.h_path, "/");
	assert_int_equal(pr->pr_initial_delay, 0);
	assert_int_equal(pr->pr_timeout, 1);
	assert_int_equal(pr->pr_period, 10);
	assert_int_equal(pr->pr_success_threshold, 1);
	assert_int_equal(pr->pr_failure_threshold, 3);
	assert_false(pr->pr_termination_grace.set);
}

static void
chk_probe_zero_is_default(const struct pod *p)
{
	const struct probe *pr = p->containers[0].c_readiness;

	assert_int_equal(pr->pr_timeout, 1);
	assert_int_equal(pr->pr_period, 10);
	assert_int_equal(pr->pr_failure_threshold, 3);
}

static void
chk_two_handlers_counted(const struct pod *p)
{
	assert_int_equal(p->containers[0].c_liveness->pr_handler.h_nkinds, 2);
	assert_int_equal(p->containers[0].c_liveness->pr_handler.h_kind, HANDLER_EXEC);
	assert_int_equal(p->containers[0].c_readiness->pr_handler.h_nkinds, 0);
	assert_int_equal(p->containers[0].c_readiness->pr_handler.h_kind, HANDLER_NONE);
}

static void
chk_port_defaults(const struct pod *p)
{
	assert_int_equal(p->containers[0].c_ports[0].protocol, PROTO_TCP);
	assert_int_equal(p->containers[0].c_ports[0].host_port, 0);
	assert_null(p->containers[0].c_ports[0].name);
	assert_int_equal(p->containers[0].c_ports[1].protocol, PROTO_SCTP);
}

static void
chk_volume_defaults(const struct pod *p)
{
	assert_int_equal(p->volumes[0].v_kind, VOL_EMPTY_DIR);
	assert_int_equal(p->volumes[0].v_nsources, 0);
	assert_int_equal(p->volumes[1].v_kind, VOL_CONFIG_MAP);
	assert_int_equal(p->volumes[1].v_default_mode, 420);
	assert_int_equal(p->volumes[2].v_kind, VOL_SECRET);
	assert_int_equal(p->volumes[2].v_default_mode, 0400);
	assert_int_equal(p->volumes[3].v_nsources, 2);
}

static void
chk_yaml_scalars_in_string_fields(const struct pod *p)
{
	const struct container *c = &p->containers[0];

	assert_string_equal(c->c_image, "1.5");
	assert_string_equal(c->c_env[0].value, "true");
	assert_string_equal(c->c_env[1].value, "0644");
	assert_string_equal(c->c_args.v[0], "123");
	assert_string_equal(kvlist_get(&p->labels, "v"), "1");
	assert_int_equal(p->volumes[0].v_default_mode, 0644);
	assert_int_equal(rl(&c->c_resources.limits, "cpu"), 500);
	assert_int_equal(rl(&c->c_resources.limits, "memory"), 1000000000000LL);
}

static void
chk_nulls_are_absent(const struct pod *p)
{
	assert_null(p->ns);
	assert_int_equal(p->labels.n, 0);
	assert_null(p->containers[0].c_working_dir);
	assert_int_equal(p->containers[0].c_command.n, 0);
	assert_int_equal(p->restart_policy, RESTART_ALWAYS);
}

static void
chk_service_account_legacy(const struct pod *p)
{
	assert_string_equal(p->service_account, "legacy");
}

static void
chk_pull_policy_explicit(const struct pod *p)
{
	assert_int_equal(p->containers[0].c_pull_policy, PULL_IF_NOT_PRESENT);
	assert_int_equal(p->containers[1].c_pull_policy, PULL_ALWAYS);
	assert_int_equal(p->containers[2].c_pull_policy, PULL_NEVER);
}

static void
chk_env_optional_and_divisor(const struct pod *p)
{
	assert_int_equal(p->containers[0].c_env[0].ref_divisor_milli, 0);
	assert_string_equal(p->containers[0].c_env[1].ref_api_version, "v1");
}

static void
chk_unknown_fields(const struct pod *p)
{
	assert_string_equal(p->name, "x");
	assert_int_equal(p->ncontainers, 1);
}

static void
chk_requests_from_limits(const struct pod *p)
{
	const struct container *c = &p->containers[0];

	assert_int_equal(c->c_resources.requests.n, 2);
	assert_int_equal(rl(&c->c_resources.requests, "cpu"), 100); /* kept */
	assert_int_equal(rl(&c->c_resources.requests, "memory"), 2097152000LL);
	assert_int_equal(rl(&p->init_containers[0].c_resources.requests, "cpu"), 1000);
	assert_int_equal(p->ephemeral_containers[0].c_resources.requests.n, 0);
}

static void
chk_host_network_ports(const struct pod *p)
{
	assert_int_equal(p->containers[0].c_ports[0].host_port, 80);
	assert_int_equal(p->containers[0].c_ports[1].host_port, 9000);
	assert_int_equal(p->init_containers[0].c_ports[0].host_port, 53);
}

static void
chk_no_host_network_ports(const struct pod *p)
{
	assert_int_equal(p->containers[0].c_ports[0].host_port, 0);
}

static void
chk_yaml_integral_float(const struct pod *p)
{
	assert_int_equal(p->generation, 3);
	assert_int_equal(p->containers[0].c_ports[0].container_port, 80);
}

static void
chk_status_enums(const struct pod *p)
{
	assert_int_equal(p->status.phase, PHASE_SUCCEEDED);
	assert_int_equal(p->status.conditions[0].status, COND_UNKNOWN);
	assert_int_equal(p->status.qos_class, QOS_GUARANTEED);
}

#define C0 "spec:\n  containers:\n  - name: c\n    image: busybox\n"

static const struct default_case default_cases[] = {
	{ "minimal pod", "metadata: {name: x}\n" C0, chk_minimal },
	{ "probe defaults", C0 "    livenessProbe:\n      httpGet: {port: 80}\n",
	    chk_probe_defaults },
	{ "probe zero means default",
	    C0 "    readinessProbe:\n      exec: {command: [x]}\n"
	       "      timeoutSeconds: 0\n      periodSeconds: 0\n      failureThreshold: 0\n",
	    chk_probe_zero_is_default },
	{ "handler kinds counted",
	    C0 "    livenessProbe:\n      exec: {command: [x]}\n"
	       "      tcpSocket: {port: 1}\n    readinessProbe: {periodSeconds: 3}\n",
	    chk_two_handlers_counted },
	{ "port protocol default",
	    C0 "    ports:\n    - containerPort: 80\n"
	       "    - containerPort: 81\n      protocol: SCTP\n",
	    chk_port_defaults },
	{ "volume defaults",
	    C0 "  volumes:\n  - name: a\n  - name: b\n    configMap: {name: b}\n"
	       "  - name: c\n    secret: {secretName: c, defaultMode: 0400}\n"
	       "  - name: d\n    emptyDir: {}\n    hostPath: {path: /}\n",
	    chk_volume_defaults },
	{ "yaml plain scalars in string fields",
	    "metadata:\n  labels: {v: 1}\nspec:\n  containers:\n  - name: c\n    image: 1.5\n"
	    "    args: [123]\n    env:\n    - {name: A, value: true}\n    - {name: B, value: 0644}\n"
	    "    resources:\n      limits: {cpu: 0.5, memory: 1e9}\n"
	    "  volumes:\n  - name: v\n    secret: {secretName: s, defaultMode: 0644}\n",
	    chk_yaml_scalars_in_string_fields },
	{ "nulls are absent",
	    "metadata: {name: x, namespace: null, labels: null}\n"
	    "spec:\n  restartPolicy: null\n  containers:\n  - name: c\n    image: i\n"
	    "    workingDir: ~\n    command: null\n",
	    chk_nulls_are_absent },
	{ "serviceAccount legacy", "spec:\n  serviceAccount: legacy\n  containers: []\n",
	    chk_service_account_legacy },
	{ "explicit pull policies",
	    "spec:\n  containers:\n  - {name: a, image: a, imagePullPolicy: IfNotPresent}\n"
	    "  - {name: b, image: 'b:1', imagePullPolicy: Always}\n"
	    "  - {name: c, image: c, imagePullPolicy: Never}\n",
	    chk_pull_policy_explicit },
	{ "env refs",
	    C0 "    env:\n    - name: A\n      valueFrom:\n        resourceFieldRef: "
	       "{resource: limits.cpu}\n    - name: B\n      valueFrom:\n        fieldRef: "
	       "{fieldPath: metadata.name}\n",
	    chk_env_optional_and_divisor },
	{ "unknown fields ignored",
	    "apiVersion: v1\nkind: Pod\nfoo: {bar: [1, 2]}\n"
	    "metadata: {name: x, managedFields: [{manager: m}]}\n"
	    "spec:\n  overhead: {cpu: 1}\n  containers:\n  - name: c\n    image: i\n"
	    "    resizePolicy: [{resourceName: cpu}]\n",
	    chk_unknown_fields },
	{ "requests default to limits",
	    C0 "    resources:\n      requests: {cpu: 100m}\n"
	       "      limits: {cpu: 1, memory: 2Mi}\n  initContainers:\n  - name: i\n    image: i\n"
	       "    resources: {limits: {cpu: 1}}\n  ephemeralContainers:\n  - name: e\n"
	       "    image: e\n    resources: {limits: {cpu: 1}}\n",
	    chk_requests_from_limits },
	{ "hostNetwork host ports",
	    C0
	    "    ports: [{containerPort: 80}, {containerPort: 90, "
	    "hostPort: 9000}]\n  hostNetwork: true\n  initContainers:\n  - name: i\n    image: i\n"
	    "    ports: [{containerPort: 53, protocol: UDP}]\n",
	    chk_host_network_ports },
	{ "no hostNetwork no host ports", C0 "    ports: [{containerPort: 80}]\n",
	    chk_no_host_network_ports },
	{ "yaml integral floats fit integer fields",
	    "metadata: {generation: 3.0}\n" C0 "    ports: [{containerPort: 8e1}]\n",
	    chk_yaml_integral_float },
	{ "status enums",
	    "spec: {containers: []}\nstatus:\n  phase: Succeeded\n"
	    "  qosClass: Guaranteed\n  conditions:\n  - {type: Ready, status: Unknown}\n",
	    chk_status_enums },
};

static void
test_defaults_table(void **state)
{
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(default_cases) / sizeof(default_cases[0]); i++) {
		char        err[256] = "";
		struct pod *p = decode(1, default_cases[i].yaml, err, sizeof(err));

		if (p == NULL)
			fail_msg("%s: %s", default_cases[i].name, err);
		print_message("defaults: %s\n", default_cases[i].name);
		default_cases[i].check(p);
		pod_unref(p);
	}
}

/* The API's imagePullPolicy rule. */
static const struct {
	const char      *image;
	enum pull_policy want;
} pull_cases[] = {
	{ "busybox", PULL_ALWAYS },
	{ "busybox:latest", PULL_ALWAYS },
	{ "busybox:1.36", PULL_IF_NOT_PRESENT },
	{ "docker.io/library/busybox", PULL_ALWAYS },
	{ "registry.example.com:5000/busybox", PULL_ALWAYS },
	{ "registry.example.com:5000/busybox:1", PULL_IF_NOT_PRESENT },
	{ "localhost:5000/a/b:latest", PULL_ALWAYS },
	{ "busybox@sha256:0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef",
	    PULL_IF_NOT_PRESENT },
	{ "busybox:latest@sha256:0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef",
	    PULL_ALWAYS }, /* ParseImageName keeps the tag next to a digest */
	{ "busybox:1@sha256:0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef",
	    PULL_IF_NOT_PRESENT },
	{ "registry:5000/busybox@sha256:0123456789abcdef0123456789abcdef0123456789abcdef01234567",
	    PULL_IF_NOT_PRESENT },
	{ "registry:5000/busybox:latest", PULL_ALWAYS },
	{ "busybox:latestx", PULL_IF_NOT_PRESENT },
	{ "busybox:Latest", PULL_IF_NOT_PRESENT },
};

static void
test_pull_policy_table(void **state)
{
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(pull_cases) / sizeof(pull_cases[0]); i++) {
		char        doc[512], err[256];
		struct pod *p;

		snprintf(doc, sizeof(doc),
		    "{\"spec\":{\"containers\":[{\"name\":\"c\","
		    "\"image\":\"%s\"}]}}",
		    pull_cases[i].image);
		p = decode(0, doc, err, sizeof(err));
		assert_non_null(p);
		if (p->containers[0].c_pull_policy != pull_cases[i].want)
			fail_msg("%s: pull policy %d, want %d", pull_cases[i].image,
			    p->containers[0].c_pull_policy, pull_cases[i].want);
		pod_unref(p);
	}
}

/* ---- errors ---- */

struct err_case {
	const char *name;
	int         yaml;
	const char *doc;
	const char *want; /* the exact error */
};

static const struct err_case err_cases[] = {
	{ "port not an integer", 0,
	    "{\"spec\":{\"containers\":[{\"name\":\"c\",\"ports\":[{\"containerPort\":80},"
	    "{\"containerPort\":\"80\"}]}]}}",
	    "spec.containers[0].ports[1].containerPort: expected an integer, got string" },
	{ "port out of int32", 0,
	    "{\"spec\":{\"containers\":[{\"name\":\"c\",\"ports\":[{\"containerPort\":4294967296}]}]}}",
	    "spec.containers[0].ports[0].containerPort: 4294967296 is out of range" },
	{ "port a float", 0,
	    "{\"spec\":{\"containers\":[{\"name\":\"c\",\"ports\":[{\"containerPort\":80.5}]}]}}",
	    "spec.containers[0].ports[0].containerPort: expected an integer, got number" },
	{ "name not a string", 0, "{\"metadata\":{\"name\":5}}",
	    "metadata.name: expected a string, got integer" },
	{ "name an object (yaml)", 1, "metadata:\n  name: {a: 1}\n",
	    "metadata.name: expected a string, got object" },
	{ "root is an array", 0, "[1]", "expected an object, got array" },
	{ "root is a scalar (yaml)", 1, "hello\n", "expected an object, got string" },
	{ "kind not Pod", 1, "kind: Deployment\nspec: {}\n",
	    "kind: expected Pod, got \"Deployment\"" },
	{ "spec not an object", 0, "{\"spec\":[]}", "spec: expected an object, got array" },
	{ "containers not an array", 1, "spec:\n  containers: {a: 1}\n",
	    "spec.containers: expected an array, got object" },
	{ "container not an object", 1, "spec:\n  containers: [x]\n",
	    "spec.containers[0]: expected an object, got string" },
	{ "bad quantity", 1, C0 "    resources:\n      requests:\n        cpu: 1.5x\n",
	    "spec.containers[0].resources.requests.cpu: invalid quantity \"1.5x\"" },
	{ "quantity not scalar", 1, C0 "    resources:\n      limits:\n        memory: [1]\n",
	    "spec.containers[0].resources.limits.memory: expected a quantity, got array" },
	{ "quantity overflow", 0,
	    "{\"spec\":{\"initContainers\":[{\"resources\":{\"limits\":"
	    "{\"memory\":\"100Ei\"}}}]}}",
	    "spec.initContainers[0].resources.limits.memory: invalid quantity \"100Ei\"" },
	{ "bad restartPolicy", 1, "spec:\n  restartPolicy: Sometimes\n",
	    "spec.restartPolicy: unsupported value \"Sometimes\"" },
	{ "bad container restartPolicy", 1,
	    "spec:\n  initContainers:\n  - name: s\n"
	    "    restartPolicy: always\n",
	    "spec.initContainers[0].restartPolicy: unsupported value \"always\"" },
	{ "bad protocol", 1, C0 "    ports:\n    - containerPort: 1\n      protocol: tcp\n",
	    "spec.containers[0].ports[0].protocol: unsupported value \"tcp\"" },
	{ "bad pull policy", 1, C0 "    imagePullPolicy: Sometimes\n",
	    "spec.containers[0].imagePullPolicy: unsupported value \"Sometimes\"" },
	{ "bad dnsPolicy", 1, "spec:\n  dnsPolicy: Google\n",
	    "spec.dnsPolicy: unsupported value \"Google\"" },
	{ "bad termination message policy", 1, C0 "    terminationMessagePolicy: Logs\n",
	    "spec.containers[0].terminationMessagePolicy: unsupported value \"Logs\"" },
	{ "bad mount propagation", 1,
	    C0 "    volumeMounts:\n    - name: v\n      mountPath: /v\n"
	       "      mountPropagation: Shared\n",
	    "spec.containers[0].volumeMounts[0].mountPropagation: unsupported value \"Shared\"" },
	{ "bad time", 1, "metadata:\n  creationTimestamp: yesterday\n",
	    "metadata.creationTimestamp: invalid time \"yesterday\"" },
	{ "bad status time", 1,
	    "status:\n  containerStatuses:\n  - name: c\n    state:\n"
	    "      running: {startedAt: 2024-13-01T00:00:00Z}\n",
	    "status.containerStatuses[0].state.running.startedAt: invalid time "
	    "\"2024-13-01T00:00:00Z\"" },
	{ "bad phase", 1, "status: {phase: Done}\n", "status.phase: unsupported value \"Done\"" },
	{ "bool as string", 0, "{\"spec\":{\"hostNetwork\":\"true\"}}",
	    "spec.hostNetwork: expected a boolean, got string" },
	{ "label value not a string", 0, "{\"metadata\":{\"labels\":{\"a\":{}}}}",
	    "metadata.labels[a]: expected a string, got object" },
	{ "command element", 1, C0 "    command: [sh, [x]]\n",
	    "spec.containers[0].command[1]: expected a string, got array" },
	{ "probe not an object", 1, C0 "    livenessProbe: yes\n",
	    "spec.containers[0].livenessProbe: expected an object, got boolean" },
	{ "probe period type", 1, C0 "    readinessProbe:\n      periodSeconds: ten\n",
	    "spec.containers[0].readinessProbe.periodSeconds: expected an integer, got string" },
	{ "probe port type", 1, C0 "    startupProbe:\n      httpGet: {port: [80]}\n",
	    "spec.containers[0].startupProbe.httpGet.port: expected an integer or a string, "
	    "got array" },
	{ "hook exec type", 1, C0 "    lifecycle:\n      preStop:\n        exec: {command: x}\n",
	    "spec.containers[0].lifecycle.preStop.exec.command: expected an array, got string" },
	{ "env two sources", 1,
	    C0 "    env:\n    - name: A\n      valueFrom:\n"
	       "        fieldRef: {fieldPath: x}\n        secretKeyRef: {name: s, key: k}\n",
	    "spec.containers[0].env[0].valueFrom: must have exactly one source, got 2" },
	{ "env no source", 1, C0 "    env:\n    - name: A\n      valueFrom: {}\n",
	    "spec.containers[0].env[0].valueFrom: must have exactly one source, got 0" },
	{ "env value and valueFrom", 1,
	    C0 "    env:\n    - name: A\n      value: x\n"
	       "      valueFrom:\n        fieldRef: {fieldPath: x}\n",
	    "spec.containers[0].env[0].valueFrom: may not be specified when value is not empty" },
	{ "env divisor", 1,
	    C0 "    env:\n    - name: A\n      valueFrom:\n"
	       "        resourceFieldRef: {resource: limits.cpu, divisor: lots}\n",
	    "spec.containers[0].env[0].valueFrom.resourceFieldRef.divisor: invalid quantity "
	    "\"lots\"" },
	{ "envFrom both", 1,
	    C0 "    envFrom:\n    - configMapRef: {name: a}\n"
	       "      secretRef: {name: b}\n",
	    "spec.containers[0].envFrom[0]: must have exactly one of configMapRef and secretRef" },
	{ "volume source not an object", 1, "spec:\n  volumes:\n  - name: v\n    hostPath: /x\n",
	    "spec.volumes[0].hostPath: expected an object, got string" },
	{ "volume mode type", 1,
	    "spec:\n  volumes:\n  - name: v\n    configMap:\n"
	    "      name: c\n      defaultMode: rw\n",
	    "spec.volumes[0].configMap.defaultMode: expected an integer, got string" },
	{ "emptyDir sizeLimit", 1,
	    "spec:\n  volumes:\n  - name: v\n    emptyDir:\n"
	    "      sizeLimit: big\n",
	    "spec.volumes[0].emptyDir.sizeLimit: invalid quantity \"big\"" },
	{ "security context type", 1, C0 "    securityContext:\n      runAsUser: root\n",
	    "spec.containers[0].securityContext.runAsUser: expected an integer, got string" },
	{ "capabilities type", 1, C0 "    securityContext:\n      capabilities: {add: NET_ADMIN}\n",
	    "spec.containers[0].securityContext.capabilities.add: expected an array, got string" },
	{ "supplemental groups", 1, "spec:\n  securityContext:\n    supplementalGroups: [1, x]\n",
	    "spec.securityContext.supplementalGroups[1]: expected an integer, got string" },
	{ "tolerations", 1, "spec:\n  tolerations:\n  - {key: k, tolerationSeconds: soon}\n",
	    "spec.tolerations[0].tolerationSeconds: expected an integer, got string" },
	{ "host aliases", 1, "spec:\n  hostAliases:\n  - {ip: 1.2.3.4, hostnames: a}\n",
	    "spec.hostAliases[0].hostnames: expected an array, got string" },
	{ "dnsConfig options", 1, "spec:\n  dnsConfig:\n    options: [ndots]\n",
	    "spec.dnsConfig.options[0]: expected an object, got string" },
	{ "owner reference", 1, "metadata:\n  ownerReferences:\n  - {controller: maybe}\n",
	    "metadata.ownerReferences[0].controller: expected a boolean, got string" },
	{ "yaml huge float as an integer (fuzz)", 1,
	    "spec:\n  securityContext:\n"
	    "    supplementalGroups: [5e30]\n",
	    "spec.securityContext.supplementalGroups[0]: expected an integer, got number" },
	{ "yaml nan as an integer", 1, "metadata: {generation: .nan}\n",
	    "metadata.generation: expected an integer, got number" },
	{ "yaml fraction as an integer", 1, "metadata: {generation: 1.5}\n",
	    "metadata.generation: expected an integer, got number" },
	{ "generation", 0, "{\"metadata\":{\"generation\":1.5}}",
	    "metadata.generation: expected an integer, got number" },
	{ "status restartCount", 0,
	    "{\"status\":{\"initContainerStatuses\":[{\"restartCount\":"
	    "-3000000000}]}}",
	    "status.initContainerStatuses[0].restartCount: -3000000000 is out of range" },
	{ "NUL in a string", 0, "{\"metadata\":{\"name\":\"a\\u0000b\"}}",
	    "metadata.name: contains a NUL byte" },
	{ "json syntax", 0, "{\"metadata\":}",
	    "line 1, offset 13: parse error: unallowed token "
	    "at this point in JSON text" },
	{ "yaml syntax", 1, "metadata:\n  name: [x\n",
	    "line 3, column 1: did not find expected "
	    "',' or ']' while parsing a flow sequence" },
	{ "yaml alias", 1, "metadata:\n  name: &n x\n  namespace: *n\n",
	    "line 3, column 14: YAML aliases are not supported" },
	{ "yaml empty", 1, "", "no YAML document" },
	{ "json empty", 0, "", "line 1, offset 0: parse error: premature EOF" },
};

static void
test_errors_table(void **state)
{
	size_t i;
	int    nfail = 0;

	(void)state;
	for (i = 0; i < sizeof(err_cases) / sizeof(err_cases[0]); i++) {
		char        err[256] = "";
		struct pod *p = decode(err_cases[i].yaml, err_cases[i].doc, err, sizeof(err));

		if (p != NULL) {
			print_error("%s: decoded, want an error\n", err_cases[i].name);
			pod_unref(p);
			nfail++;
		} else if (strcmp(err, err_cases[i].want) != 0) {
			print_error("%s:\n  got  %s\n  want %s\n", err_cases[i].name, err,
			    err_cases[i].want);
			nfail++;
		}
	}
	assert_int_equal(nfail, 0);
}

/* ---- limits ---- */

static void
test_size_limit(void **state)
{
	size_t      n = POD_MAX_DOC_BYTES + 1, i;
	char       *doc = malloc(n + 1), err[256], want[128];
	const char *head = "{\"metadata\":{\"annotations\":{\"a\":\"";

	(void)state;
	snprintf(want, sizeof(want), "document is %zu bytes, over the limit of %zu", n,
	    (size_t)POD_MAX_DOC_BYTES);
	memset(doc, 'x', n);
	memcpy(doc, head, strlen(head));
	memcpy(doc + n - 4, "\"}}}", 4);
	doc[n] = '\0';
	assert_null(pod_from_json(doc, n, err, sizeof(err)));
	assert_string_equal(err, want);
	assert_null(pod_from_yaml(doc, n, err, sizeof(err)));
	assert_string_equal(err, want);
	/* One byte less is accepted. */
	memcpy(doc + n - 5, "\"}}}", 4);
	{
		struct pod *p = pod_from_json(doc, n - 1, err, sizeof(err));

		if (p == NULL)
			fail_msg("%s", err);
		assert_int_equal(
		    strlen(kvlist_get(&p->annotations, "a")), n - 1 - strlen(head) - 4);
		pod_unref(p);
	}
	(void)i;
	free(doc);
}

/* A pod document nested levels deep (the root object is one level). */
static size_t
nested(char *doc, int levels)
{
	size_t n;
	int    i;

	n = (size_t)sprintf(doc, "{\"metadata\":{\"name\":\"x\"},\"x\":");
	for (i = 1; i < levels; i++)
		doc[n++] = '[';
	for (i = 1; i < levels; i++)
		doc[n++] = ']';
	doc[n++] = '}';
	doc[n] = '\0';
	return n;
}

static void
test_depth_limit(void **state)
{
	char        doc[4096], err[256];
	size_t      n;
	struct pod *p;

	(void)state;
	n = nested(doc, POD_MAX_DEPTH);
	p = pod_from_json(doc, n, err, sizeof(err));
	if (p == NULL)
		fail_msg("%d levels: %s", POD_MAX_DEPTH, err);
	pod_unref(p);
	p = pod_from_yaml(doc, n, err, sizeof(err));
	if (p == NULL)
		fail_msg("%d levels (yaml): %s", POD_MAX_DEPTH, err);
	pod_unref(p);
	n = nested(doc, POD_MAX_DEPTH + 1);
	assert_null(pod_from_json(doc, n, err, sizeof(err)));
	assert_non_null(strstr(err, "nesting deeper than the limit of 64"));
	assert_null(pod_from_yaml(doc, n, err, sizeof(err)));
	assert_non_null(strstr(err, "nesting deeper than the limit of 64"));
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_full_yaml),
		cmocka_unit_test(test_full_json),
		cmocka_unit_test(test_json_yaml_same),
		cmocka_unit_test(test_examples),
		cmocka_unit_test(test_defaults_table),
		cmocka_unit_test(test_pull_policy_table),
		cmocka_unit_test(test_errors_table),
		cmocka_unit_test(test_size_limit),
		cmocka_unit_test(test_depth_limit),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
