/* test_volumes.c — the pure parts of configMap / secret support: object parsing (base64 of
 * secrets and binaryData), volume payloads (all keys, items key->path, modes, optional), the
 * atomic writer layout and updates, and the container config built from cached objects (env
 * valueFrom, envFrom with prefix, optional / missing, read-only mounts, static pods). */
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
#include "core/util.h"
#include "volumes/volumes.h"

static char tmpdir[256];

static const char cm_json[] =
    "{\"apiVersion\":\"v1\",\"kind\":\"ConfigMap\",\"metadata\":{\"name\":\"cm\","
    "\"namespace\":\"default\",\"resourceVersion\":\"7\"},"
    "\"data\":{\"a\":\"alpha\",\"b\":\"beta\\n\",\"bad=key\":\"x\"},"
    "\"binaryData\":{\"bin\":\"AAEC/w==\"}}";
static const char sec_json[] =
    "{\"apiVersion\":\"v1\",\"kind\":\"Secret\",\"metadata\":{\"name\":\"s\","
    "\"namespace\":\"default\"},\"data\":{\"user\":\"YWRtaW4=\",\"pass\":\"czNjcjN0\"}}";

static void
rm_rf(const char *p)
{
	char *cmd = xsprintf("rm -rf '%s'", p);

	if (system(cmd) != 0)
		fail_msg("%s", cmd);
	free(cmd);
}

static int
setup(void **state)
{
	(void)state;
	snprintf(tmpdir, sizeof(tmpdir), "/tmp/klet-test-volumes.XXXXXX");
	if (mkdtemp(tmpdir) == NULL)
		return -1;
	return 0;
}

static int
teardown(void **state)
{
	(void)state;
	assert_true(vol_unmount_under(tmpdir) >= 0); /* the secret volumes' tmpfs */
	rm_rf(tmpdir);
	return 0;
}

static struct pod *
yaml_pod(const char *y)
{
	char        err[256];
	struct pod *p = pod_from_yaml(y, strlen(y), err, sizeof(err));

	if (p == NULL)
		fail_msg("decode: %s", err);
	return p;
}

static void
test_parse(void **state)
{
	struct vobj             o;
	const struct vobj_item *it;
	char                    err[256];

	(void)state;
	memset(&o, 0, sizeof(o));
	assert_int_equal(
	    vobj_parse(VOBJ_CONFIG_MAP, cm_json, strlen(cm_json), &o, err, sizeof(err)), 0);
	assert_string_equal(o.rv, "7");
	assert_false(o.immutable);
	assert_int_equal(o.nitems, 4);
	assert_non_null(it = vobj_find(&o, "b"));
	assert_string_equal(it->val, "beta\n");
	assert_false(it->binary);
	assert_non_null(it = vobj_find(&o, "bin"));
	assert_int_equal(it->len, 4);
	assert_true(it->binary);
	assert_memory_equal(it->val, "\x00\x01\x02\xff", 4);
	assert_int_equal(
	    vobj_parse(VOBJ_SECRET, sec_json, strlen(sec_json), &o, err, sizeof(err)), 0);
	assert_string_equal(vobj_find(&o, "user")->val, "admin");
	assert_string_equal(vobj_find(&o, "pass")->val, "s3cr3t");
	assert_int_equal(
	    vobj_parse(VOBJ_SECRET, "{\"immutable\":true}", 18, &o, err, sizeof(err)), 0);
	assert_true(o.immutable);
	assert_int_equal(o.nitems, 0);
	assert_null(vobj_find(&o, "a"));
	/* Bad documents. */
	assert_int_equal(
	    vobj_parse(VOBJ_SECRET, "{\"data\":{\"k\":\"!!\"}}", 19, &o, err, sizeof(err)), -1);
	assert_non_null(strstr(err, "invalid base64"));
	assert_int_equal(
	    vobj_parse(VOBJ_CONFIG_MAP, "{\"data\":{\"k\":1}}", 16, &o, err, sizeof(err)), -1);
	assert_non_null(strstr(err, "not a string"));
	assert_int_equal(vobj_parse(VOBJ_CONFIG_MAP, "[", 1, &o, err, sizeof(err)), -1);
	vobj_clear(&o);
}

struct payload_case {
	const char *name;
	const char *vol; /* the volume's YAML (under volumes:) */
	int         rc;
	const char *want; /* "path:mode:data;..." in order, or the error's text */
};

static const struct payload_case payload_cases[] = {
	{ "all keys, default mode", "  - name: v\n    configMap: {name: cm}\n", 0,
	    "a:420:alpha;b:420:beta\n;bad=key:420:x;bin:420:\x01" },
	{ "defaultMode", "  - name: v\n    configMap: {name: cm, defaultMode: 0400}\n", 0,
	    "a:256:alpha;b:256:beta\n;bad=key:256:x;bin:256:\x01" },
	{ "items key->path, item mode",
	    "  - name: v\n    configMap:\n      name: cm\n"
	    "      items:\n      - {key: a, path: dir/a.txt, mode: 0600}\n      - {key: b, path: bb}\n",
	    0, "dir/a.txt:384:alpha;bb:420:beta\n" },
	{ "missing key",
	    "  - name: v\n    configMap:\n      name: cm\n"
	    "      items:\n      - {key: nope, path: x}\n",
	    -1, "configmap references non-existent config key: nope" },
	{ "missing key, optional",
	    "  - name: v\n    configMap:\n      name: cm\n"
	    "      optional: true\n      items:\n      - {key: nope, path: x}\n      - {key: a, path: y}\n",
	    0, "y:420:alpha" },
};

static void
payload_str(const struct vol_payload *pl, char *buf, size_t len)
{
	size_t i;

	buf[0] = '\0';
	for (i = 0; i < pl->n; i++) {
		snprintf(buf + strlen(buf), len - strlen(buf), "%s%s:%d:%s", i ? ";" : "",
		    pl->files[i].path, (int)pl->files[i].mode,
		    pl->files[i].len == 4 && pl->files[i].data[0] == 0 ? "\x01"
		                                                       : pl->files[i].data);
	}
}

static void
test_payload(void **state)
{
	struct vobj        o;
	struct vol_payload pl = { NULL, 0, 0, 0 };
	char               err[256], got[1024], *y;
	struct pod        *p;
	size_t             i;

	(void)state;
	memset(&o, 0, sizeof(o));
	assert_int_equal(
	    vobj_parse(VOBJ_CONFIG_MAP, cm_json, strlen(cm_json), &o, err, sizeof(err)), 0);
	for (i = 0; i < nitems(payload_cases); i++) {
		const struct payload_case *c = &payload_cases[i];
		int                        rc;

		y = xsprintf("metadata: {name: p, uid: u1}\nspec:\n  volumes:\n%s  containers:\n"
		             "  - {name: c, image: busybox}\n",
		    c->vol);
		p = yaml_pod(y);
		free(y);
		err[0] = '\0';
		rc = vol_payload_make(&p->volumes[0], &o, &pl, err, sizeof(err));
		payload_str(&pl, got, sizeof(got));
		printf("# %s: rc %d: %s%s\n", c->name, rc, got, err);
		assert_int_equal(rc, c->rc);
		assert_string_equal(rc == 0 ? got : err, c->want);
		vol_payload_clear(&pl);
		/* A missing object (optional): an empty payload. */
		assert_int_equal(vol_payload_make(&p->volumes[0], NULL, &pl, err, sizeof(err)), 0);
		assert_int_equal(pl.n, 0);
		pod_unref(p);
	}
	/* Secrets name their missing keys their own way. */
	o.kind = VOBJ_SECRET;
	p = yaml_pod("metadata: {name: p, uid: u1}\nspec:\n  volumes:\n  - name: v\n    secret:\n"
	             "      secretName: s\n      items:\n      - {key: nope, path: x}\n"
	             "  containers:\n  - {name: c, image: busybox}\n");
	assert_int_equal(vol_payload_make(&p->volumes[0], &o, &pl, err, sizeof(err)), -1);
	assert_string_equal(err, "references non-existent secret key: nope");
	pod_unref(p);
	vobj_clear(&o);
	/* Issue 20 case 8: a key that is no file name (a server that does not check keys)
	 * fails the volume, naming the key; nothing is written. */
	{
		static const char *bad[] = { "../../x", "..data", "a/b", "." };
		size_t             k;

		for (k = 0; k < nitems(bad); k++) {
			char *js = xsprintf("{\"metadata\":{\"name\":\"s\",\"namespace\":\"d\"},"
			                    "\"data\":{\"ok\":\"eA==\",\"%s\":\"eA==\"}}",
			    bad[k]);

			assert_int_equal(
			    vobj_parse(VOBJ_SECRET, js, strlen(js), &o, err, sizeof(err)), 0);
			free(js);
			p = yaml_pod("metadata: {name: p, uid: u1}\nspec:\n  volumes:\n"
			             "  - name: v\n    secret: {secretName: s}\n"
			             "  containers:\n  - {name: c, image: busybox}\n");
			assert_int_equal(
			    vol_payload_make(&p->volumes[0], &o, &pl, err, sizeof(err)), -1);
			assert_non_null(strstr(err, "is not a valid file name"));
			assert_int_equal(pl.n, 0);
			pod_unref(p);
			vobj_clear(&o);
		}
	}
}

static char *
slurp(const char *path)
{
	FILE *f = fopen(path, "r");
	char *buf = xcalloc(1, 4096);

	if (f == NULL) {
		free(buf);
		return NULL;
	}
	if (fread(buf, 1, 4095, f) == 0)
		buf[0] = '\0';
	fclose(f);
	return buf;
}

static int
mode_of(const char *path)
{
	struct stat st;

	if (stat(path, &st) == -1)
		return -1;
	return st.st_mode & 07777;
}

static void
check_file(const char *dir, const char *name, const char *want, int mode)
{
	char *p = xsprintf("%s/%s", dir, name), *s = slurp(p);

	if (s == NULL)
		fail_msg("%s: missing", p);
	assert_string_equal(s, want);
	assert_int_equal(mode_of(p), mode);
	free(s);
	free(p);
}

static int
is_link_to(const char *dir, const char *name, const char *target)
{
	char   *p = xsprintf("%s/%s", dir, name), buf[256];
	ssize_t n = readlink(p, buf, sizeof(buf) - 1);

	free(p);
	if (n < 0)
		return 0;
	buf[n] = '\0';
	return strcmp(buf, target) == 0;
}

static size_t
count_ts_dirs(const char *dir)
{
	char *cmd = xsprintf("ls -a '%s' | grep -c '^\\.\\.[0-9]'", dir), buf[32] = "";
	FILE *f = popen(cmd, "r");

	free(cmd);
	assert_non_null(f);
	if (fgets(buf, sizeof(buf), f) == NULL)
		buf[0] = '\0';
	pclose(f);
	return (size_t)atoi(buf);
}

static void
test_atomic_writer(void **state)
{
	struct vol_payload pl = { NULL, 0, 0, 0 };
	char              *dir = xsprintf("%s/aw/vol", tmpdir), err[256], old[256], now[256], *l;
	ssize_t            n;

	(void)state;
	vol_payload_add(&pl, "a", "one", 3, 0644);
	vol_payload_add(&pl, "sub/b", "two", 3, 0400);
	assert_int_equal(vol_write_atomic(dir, &pl, err, sizeof(err)), 1);
	check_file(dir, "a", "one", 0644);
	check_file(dir, "sub/b", "two", 0400);
	assert_true(is_link_to(dir, "a", "..data/a"));
	assert_true(is_link_to(dir, "sub", "..data/sub"));
	l = xsprintf("%s/..data", dir);
	assert_true((n = readlink(l, old, sizeof(old) - 1)) > 0);
	old[n] = '\0';
	assert_int_equal(strncmp(old, "..", 2), 0);
	assert_int_equal(count_ts_dirs(dir), 1);
	/* The same payload again: nothing written. */
	assert_int_equal(vol_write_atomic(dir, &pl, err, sizeof(err)), 0);
	/* A mode change alone is a change. */
	pl.files[0].mode = 0600;
	assert_int_equal(vol_write_atomic(dir, &pl, err, sizeof(err)), 1);
	check_file(dir, "a", "one", 0600);
	/* An update: new bytes, a key gone, a key added; the old version is removed. */
	vol_payload_clear(&pl);
	vol_payload_add(&pl, "a", "uno", 3, 0644);
	vol_payload_add(&pl, "c", "", 0, 0644);
	assert_int_equal(vol_write_atomic(dir, &pl, err, sizeof(err)), 1);
	check_file(dir, "a", "uno", 0644);
	check_file(dir, "c", "", 0644);
	assert_false(is_link_to(dir, "sub", "..data/sub"));
	assert_true((n = readlink(l, now, sizeof(now) - 1)) > 0);
	now[n] = '\0';
	assert_string_not_equal(now, old);
	assert_int_equal(count_ts_dirs(dir), 1);
	/* Empty payload: an empty volume. */
	vol_payload_clear(&pl);
	assert_int_equal(vol_write_atomic(dir, &pl, err, sizeof(err)), 1);
	assert_false(is_link_to(dir, "a", "..data/a"));
	assert_int_equal(count_ts_dirs(dir), 1);
	free(l);
	/* Bad paths fail the whole write and leave the volume alone. */
	{
		static const char *const bad[] = { "../x", "/abs", "..x", "a/../b", "a//b", "",
			"./a" };
		size_t                   i;

		for (i = 0; i < nitems(bad); i++) {
			vol_payload_add(&pl, "ok", "1", 1, 0644);
			vol_payload_add(&pl, bad[i], "x", 1, 0644);
			assert_int_equal(vol_write_atomic(dir, &pl, err, sizeof(err)), -1);
			assert_non_null(strstr(err, "invalid path"));
			vol_payload_clear(&pl);
		}
		vol_payload_add(&pl, "d", "1", 1, 0644);
		vol_payload_add(&pl, "d", "2", 1, 0644);
		assert_int_equal(vol_write_atomic(dir, &pl, err, sizeof(err)), -1);
		assert_non_null(strstr(err, "duplicate"));
		vol_payload_clear(&pl);
	}
	free(dir);
}

static void
test_atomic_writer_fsgroup(void **state)
{
	struct vol_payload pl = { NULL, 0, 1, 4321 };
	char              *dir = xsprintf("%s/awg/vol", tmpdir), *p, err[256];
	struct stat        st;

	(void)state;
	vol_payload_add(&pl, "a", "one", 3, 0400);
	vol_payload_add(&pl, "d/b", "two", 3, 0600);
	assert_int_equal(vol_write_atomic(dir, &pl, err, sizeof(err)), 1);
	check_file(dir, "a", "one", 0440);
	check_file(dir, "d/b", "two", 0640);
	p = xsprintf("%s/a", dir);
	assert_int_equal(stat(p, &st), 0);
	assert_int_equal(st.st_gid, 4321);
	free(p);
	p = xsprintf("%s/..data/d", dir);
	assert_int_equal(stat(p, &st), 0);
	assert_int_equal(st.st_gid, 4321);
	assert_true(st.st_mode & S_ISGID);
	free(p);
	/* Unchanged: nothing written again. */
	assert_int_equal(vol_write_atomic(dir, &pl, err, sizeof(err)), 0);
	vol_payload_clear(&pl);
	free(dir);
}

/* ---- container configs from cached objects ---- */

static const char *
env_of(const Runtime__V1__ContainerConfig *cc, const char *k)
{
	size_t i;

	for (i = 0; i < cc->n_envs; i++)
		if (strcmp(cc->envs[i]->key, k) == 0)
			return cc->envs[i]->value;
	return NULL;
}

static struct volumes *
cached_volumes(void)
{
	struct volumes_options o = { tmpdir, 0, 0 };
	struct volumes        *v = volumes_new(NULL, NULL, &o);
	char                   err[256];

	assert_int_equal(
	    volumes_put(v, VOBJ_CONFIG_MAP, cm_json, strlen(cm_json), err, sizeof(err)), 0);
	assert_int_equal(
	    volumes_put(v, VOBJ_SECRET, sec_json, strlen(sec_json), err, sizeof(err)), 0);
	return v;
}

static void
env_setup(struct kr_env *e, struct volumes *v)
{
	memset(e, 0, sizeof(*e));
	e->root_dir = tmpdir;
	e->logs_dir = tmpdir;
	e->cluster_domain = "cluster.local";
	e->cgroup_root = "";
	e->node_name = "node-1";
	e->host_ip = "192.0.2.7";
	e->volumes = v;
}

static void
test_config_env(void **state)
{
	struct volumes               *v = cached_volumes();
	struct kr_env                 env;
	struct kr_cinput              in;
	Runtime__V1__ContainerConfig *cc;
	struct pod                   *p;
	char                          err[512];

	(void)state;
	env_setup(&env, v);
	memset(&in, 0, sizeof(in));
	p = yaml_pod(
	    "metadata: {name: p, namespace: default, uid: ue1}\nspec:\n  containers:\n"
	    "  - name: c\n    image: busybox\n"
	    "    envFrom:\n    - configMapRef: {name: cm}\n      prefix: CM_\n"
	    "    - secretRef: {name: s}\n"
	    "    - configMapRef: {name: gone, optional: true}\n"
	    "    env:\n"
	    "    - {name: CM_a, value: overridden}\n"
	    "    - name: A\n      valueFrom: {configMapKeyRef: {name: cm, key: a}}\n"
	    "    - name: P\n      valueFrom: {secretKeyRef: {name: s, key: pass}}\n"
	    "    - name: OPTKEY\n      valueFrom: {configMapKeyRef: {name: cm, key: nope, optional: true}}\n"
	    "    - name: BIN\n      valueFrom: {configMapKeyRef: {name: cm, key: bin, optional: true}}\n"
	    "    - {name: X, value: \"$(A)-$(user)-$(CM_b)\"}\n");
	cc = kr_container_config(&env, p, &p->containers[0], &in, err, sizeof(err));
	if (cc == NULL)
		fail_msg("%s", err);
	assert_string_equal(env_of(cc, "CM_a"), "overridden");
	assert_string_equal(env_of(cc, "CM_b"), "beta\n");
	assert_null(env_of(cc, "CM_bad=key"));
	assert_null(env_of(cc, "CM_bin"));
	assert_string_equal(env_of(cc, "user"), "admin");
	assert_string_equal(env_of(cc, "A"), "alpha");
	assert_string_equal(env_of(cc, "P"), "s3cr3t");
	assert_null(env_of(cc, "OPTKEY"));
	assert_null(env_of(cc, "BIN"));
	assert_string_equal(env_of(cc, "X"), "alpha-admin-beta\n");
	kr_msg_free(cc);
	pod_unref(p);
	volumes_free(v);
}

struct env_err_case {
	const char *name;
	const char *spec;
	const char *err;
};

static const struct env_err_case env_err_cases[] = {
	{ "missing key",
	    "    env:\n    - name: A\n      valueFrom: {configMapKeyRef: {name: cm, key: zz}}\n",
	    "couldn't find key zz in ConfigMap default/cm" },
	{ "missing secret key",
	    "    env:\n    - name: A\n      valueFrom: {secretKeyRef: {name: s, key: zz}}\n",
	    "couldn't find key zz in Secret default/s" },
	{ "uncached, no server",
	    "    env:\n    - name: A\n      valueFrom: {configMapKeyRef: {name: other, key: a}}\n",
	    "no API server" },
	{ "envFrom uncached", "    envFrom:\n    - secretRef: {name: other}\n",
	    "secret \"other\"" },
};

static void
test_config_errors(void **state)
{
	struct volumes               *v = cached_volumes();
	struct kr_env                 env;
	struct kr_cinput              in;
	Runtime__V1__ContainerConfig *cc;
	struct pod                   *p;
	char                          err[512], *y;
	size_t                        i;

	(void)state;
	env_setup(&env, v);
	memset(&in, 0, sizeof(in));
	for (i = 0; i < nitems(env_err_cases); i++) {
		y = xsprintf("metadata: {name: p, uid: ue2}\nspec:\n  containers:\n  - name: c\n"
		             "    image: busybox\n%s",
		    env_err_cases[i].spec);
		p = yaml_pod(y);
		free(y);
		err[0] = '\0';
		cc = kr_container_config(&env, p, &p->containers[0], &in, err, sizeof(err));
		printf("# %s: %s\n", env_err_cases[i].name, err);
		assert_null(cc);
		assert_non_null(strstr(err, env_err_cases[i].err));
		pod_unref(p);
	}
	/* A static pod may not use API objects, cached or not. */
	p = yaml_pod(
	    "metadata: {name: p, uid: ue3, annotations: {kubernetes.io/config.source: file}}\n"
	    "spec:\n  volumes:\n  - name: v\n    configMap: {name: cm}\n  containers:\n"
	    "  - name: c\n    image: busybox\n    volumeMounts:\n    - {name: v, mountPath: /v}\n");
	cc = kr_container_config(&env, p, &p->containers[0], &in, err, sizeof(err));
	assert_null(cc);
	assert_non_null(strstr(err, "static pod may not use configmap \"cm\""));
	pod_unref(p);
	p = yaml_pod(
	    "metadata: {name: p, uid: ue3, annotations: {kubernetes.io/config.source: file}}\n"
	    "spec:\n  containers:\n  - name: c\n    image: busybox\n"
	    "    env:\n    - name: A\n      valueFrom: {secretKeyRef: {name: s, key: user}}\n");
	cc = kr_container_config(&env, p, &p->containers[0], &in, err, sizeof(err));
	assert_null(cc);
	assert_non_null(strstr(err, "static pod may not use secret \"s\""));
	pod_unref(p);
	volumes_free(v);
}

static void
test_config_mounts(void **state)
{
	struct volumes               *v = cached_volumes();
	struct volumes_stats          st;
	struct kr_env                 env;
	struct kr_cinput              in;
	Runtime__V1__ContainerConfig *cc;
	struct pod                   *p;
	char                          err[512], *dir, *sdir;
	size_t                        i;
	int                           seen = 0;

	(void)state;
	env_setup(&env, v);
	memset(&in, 0, sizeof(in));
	p = yaml_pod(
	    "metadata: {name: p, namespace: default, uid: um1}\nspec:\n  volumes:\n"
	    "  - name: cfg\n    configMap:\n      name: cm\n      items: [{key: a, path: conf/a.txt}]\n"
	    "  - name: sec\n    secret: {secretName: s, defaultMode: 0440}\n"
	    "  - name: opt\n    configMap: {name: absent, optional: true}\n"
	    "  containers:\n  - name: c\n    image: busybox\n    volumeMounts:\n"
	    "    - {name: cfg, mountPath: /etc/cfg}\n    - {name: sec, mountPath: /etc/sec}\n");
	cc = kr_container_config(&env, p, &p->containers[0], &in, err, sizeof(err));
	if (cc == NULL)
		fail_msg("%s", err);
	dir = xsprintf("%s/pods/um1/volumes/kubernetes.io~configmap/cfg", tmpdir);
	sdir = xsprintf("%s/pods/um1/volumes/kubernetes.io~secret/sec", tmpdir);
	for (i = 0; i < cc->n_mounts; i++) {
		if (strcmp(cc->mounts[i]->container_path, "/etc/cfg") == 0) {
			assert_string_equal(cc->mounts[i]->host_path, dir);
			assert_true(cc->mounts[i]->readonly);
			seen++;
		} else if (strcmp(cc->mounts[i]->container_path, "/etc/sec") == 0) {
			assert_string_equal(cc->mounts[i]->host_path, sdir);
			assert_true(cc->mounts[i]->readonly);
			seen++;
		}
	}
	assert_int_equal(seen, 2);
	check_file(dir, "conf/a.txt", "alpha", 0644);
	check_file(sdir, "user", "admin", 0440);
	check_file(sdir, "pass", "s3cr3t", 0440);
	{
		char *parent = xsprintf("%s/pods/um1/volumes/kubernetes.io~secret", tmpdir);
		char *pod = xsprintf("%s/pods/um1", tmpdir);

		assert_int_equal(mode_of(parent), 0700);
		/* Issue 20 case 9: the secret is on a tmpfs, the configMap is not. */
		assert_int_equal(vol_is_tmpfs_mount(sdir), 1);
		assert_int_equal(vol_is_tmpfs_mount(dir), 0);
		assert_int_equal(mode_of(sdir), 0755);
		/* Written again (an update): the same mount, no second one. */
		assert_int_equal(vol_tmpfs_ensure(sdir, 1 << 20, err, sizeof(err)), 0);
		assert_int_equal(vol_unmount_under(pod), 1);
		assert_int_equal(vol_is_tmpfs_mount(sdir), 0);
		assert_int_equal(vol_unmount_under(pod), 0);
		/* Mounted again for the next write. */
		assert_int_equal(vol_tmpfs_ensure(sdir, 1 << 20, err, sizeof(err)), 0);
		assert_int_equal(vol_is_tmpfs_mount(sdir), 1);
		free(parent);
		free(pod);
	}
	kr_msg_free(cc);
	volumes_get_stats(v, &st);
	assert_int_equal(st.mounts, 2);
	/* An updated object rewrites the mounted volume. */
	{
		static const char upd[] =
		    "{\"metadata\":{\"name\":\"cm\",\"namespace\":\"default\","
		    "\"resourceVersion\":\"8\"},\"data\":{\"a\":\"ALPHA\"}}";

		assert_int_equal(
		    volumes_put(v, VOBJ_CONFIG_MAP, upd, strlen(upd), err, sizeof(err)), 0);
		check_file(dir, "conf/a.txt", "ALPHA", 0644);
	}
	/* Forgotten: no more updates. */
	volumes_forget_pod(v, "um1");
	volumes_get_stats(v, &st);
	assert_int_equal(st.mounts, 0);
	free(dir);
	free(sdir);
	pod_unref(p);
	volumes_free(v);
}

/* The tmpfs size: the pod's memory limit when every container has one, else the node's. */
static void
test_tmpfs_size(void **state)
{
	struct pod *p;
	uint64_t    node = (uint64_t)sysconf(_SC_PHYS_PAGES) * (uint64_t)sysconf(_SC_PAGESIZE);

	(void)state;
	p = yaml_pod("metadata: {name: p, uid: us}\nspec:\n  containers:\n"
	             "  - {name: a, image: i, resources: {limits: {memory: 64Mi}}}\n"
	             "  - {name: b, image: i, resources: {limits: {memory: 32Mi}}}\n"
	             "  initContainers:\n"
	             "  - {name: i, image: i, resources: {limits: {memory: 80Mi}}}\n");
	assert_int_equal(vol_tmpfs_size(p), 96ULL << 20);
	pod_unref(p);
	p = yaml_pod("metadata: {name: p, uid: us}\nspec:\n  containers:\n"
	             "  - {name: a, image: i, resources: {limits: {memory: 64Mi}}}\n"
	             "  initContainers:\n"
	             "  - {name: i, image: i, resources: {limits: {memory: 128Mi}}}\n");
	assert_int_equal(vol_tmpfs_size(p), 128ULL << 20);
	pod_unref(p);
	p = yaml_pod("metadata: {name: p, uid: us}\nspec:\n  containers:\n"
	             "  - {name: a, image: i, resources: {limits: {memory: 64Mi}}}\n"
	             "  - {name: b, image: i}\n");
	assert_int_equal(vol_tmpfs_size(p), node);
	pod_unref(p);
}

static void
test_downward_values(void **state)
{
	struct pod *p;
	char       *out, err[256];

	(void)state;
	p = yaml_pod(
	    "metadata:\n  name: web\n  namespace: prod\n  uid: u-9\n"
	    "  labels: {tier: front, app: \"a\\\"q\"}\n  annotations: {note: \"two\\nlines\"}\n"
	    "spec:\n  containers:\n  - {name: c, image: busybox}\n");
	assert_int_equal(vol_field_value(p, "metadata.name", &out, err, sizeof(err)), 0);
	assert_string_equal(out, "web");
	free(out);
	assert_int_equal(vol_field_value(p, "metadata.namespace", &out, err, sizeof(err)), 0);
	assert_string_equal(out, "prod");
	free(out);
	assert_int_equal(vol_field_value(p, "metadata.uid", &out, err, sizeof(err)), 0);
	assert_string_equal(out, "u-9");
	free(out);
	/* All labels: sorted, Go-quoted, one per line, no final newline. */
	assert_int_equal(vol_field_value(p, "metadata.labels", &out, err, sizeof(err)), 0);
	assert_string_equal(out, "app=\"a\\\"q\"\ntier=\"front\"");
	free(out);
	assert_int_equal(vol_field_value(p, "metadata.annotations", &out, err, sizeof(err)), 0);
	assert_string_equal(out, "note=\"two\\nlines\"");
	free(out);
	assert_int_equal(vol_field_value(p, "metadata.labels['tier']", &out, err, sizeof(err)), 0);
	assert_string_equal(out, "front");
	free(out);
	assert_int_equal(vol_field_value(p, "metadata.labels['none']", &out, err, sizeof(err)), 0);
	assert_string_equal(out, "");
	free(out);
	assert_int_equal(vol_field_value(p, "spec.nodeName", &out, err, sizeof(err)), -1);
	assert_non_null(strstr(err, "unsupported fieldPath"));
	pod_unref(p);
	/* Token refresh: 80% of the lifetime, at most 24 h. */
	assert_int_equal(vol_token_refresh_s(3600, 3600), 2880);
	assert_int_equal(vol_token_refresh_s(600, 0), 480);
	assert_int_equal(vol_token_refresh_s(3600, 1800), 1440);
	assert_int_equal(vol_token_refresh_s(7 * 86400, 7 * 86400), 86400);
}

static void
test_config_downward(void **state)
{
	struct volumes               *v = cached_volumes();
	struct kr_env                 env;
	struct kr_cinput              in;
	Runtime__V1__ContainerConfig *cc;
	struct pod                   *p, *p2;
	char                          err[512], *dir, *pdir, *y, *y2;
	int                           pass;

	(void)state;
	memset(&in, 0, sizeof(in));
	y = xsprintf(
	    "metadata: {name: dp, namespace: default, uid: ud1, labels: {a: \"1\"%%s}}\n"
	    "spec:\n  volumes:\n"
	    "  - name: info\n    downwardAPI:\n      defaultMode: 0444\n      items:\n"
	    "      - {path: name, fieldRef: {fieldPath: metadata.name}}\n"
	    "      - {path: meta/labels, fieldRef: {fieldPath: metadata.labels}, mode: 0400}\n"
	    "      - path: mem\n        resourceFieldRef: {containerName: c, resource: limits.memory, divisor: 1Mi}\n"
	    "  - name: all\n    projected:\n      defaultMode: 0440\n      sources:\n"
	    "      - configMap: {name: cm, items: [{key: a, path: ca}]}\n"
	    "      - secret: {name: s, items: [{key: user, path: su, mode: 0400}]}\n"
	    "      - secret: {name: nosuch, optional: true}\n"
	    "      - downwardAPI: {items: [{path: ns, fieldRef: {fieldPath: metadata.namespace}}]}\n"
	    "  containers:\n  - name: c\n    image: busybox\n"
	    "    resources: {limits: {memory: 64Mi}}\n    volumeMounts:\n"
	    "    - {name: info, mountPath: /info}\n    - {name: all, mountPath: /all}\n");
	y2 = xsprintf(y, "");
	p = yaml_pod(y2);
	free(y2);
	dir = xsprintf("%s/pods/ud1/volumes/kubernetes.io~downward-api/info", tmpdir);
	pdir = xsprintf("%s/pods/ud1/volumes/kubernetes.io~projected/all", tmpdir);
	for (pass = 0; pass < 2; pass++) {
		/* With a manager, and without one (no API server: downwardAPI still works). */
		env_setup(&env, pass == 0 ? v : NULL);
		p->volumes[1].v_nprojections = pass == 0 ? 4 : 0;
		cc = kr_container_config(&env, p, &p->containers[0], &in, err, sizeof(err));
		if (cc == NULL)
			fail_msg("pass %d: %s", pass, err);
		check_file(dir, "name", "dp", 0444);
		check_file(dir, "meta/labels", "a=\"1\"", 0400);
		check_file(dir, "mem", "64", 0444);
		assert_true(cc->n_mounts >= 2);
		assert_true(cc->mounts[0]->readonly);
		if (pass == 0) {
			check_file(pdir, "ca", "alpha", 0440);
			check_file(pdir, "su", "admin", 0400);
			check_file(pdir, "ns", "default", 0440);
		}
		kr_msg_free(cc);
	}
	p->volumes[1].v_nprojections = 4;
	/* New labels reach the files (the manager remembers the mount). */
	env_setup(&env, v);
	cc = kr_container_config(&env, p, &p->containers[0], &in, err, sizeof(err));
	assert_non_null(cc);
	kr_msg_free(cc);
	y2 = xsprintf(y, ", b: \"2\"");
	p2 = yaml_pod(y2);
	free(y2);
	free(y);
	volumes_update_pod(v, p2);
	check_file(dir, "meta/labels", "a=\"1\"\nb=\"2\"", 0400);
	/* A projected token needs the API server. */
	env_setup(&env, NULL);
	pod_unref(p2);
	p2 = yaml_pod("metadata: {name: tp, uid: ut1}\nspec:\n  volumes:\n  - name: tok\n"
	              "    projected:\n      sources:\n      - serviceAccountToken: {path: token}\n"
	              "  containers:\n  - name: c\n    image: busybox\n    volumeMounts:\n"
	              "    - {name: tok, mountPath: /var/run/secrets/tokens}\n");
	assert_int_equal(p2->volumes[0].v_projections[0].p_kind, PROJ_SA_TOKEN);
	assert_int_equal(p2->volumes[0].v_projections[0].p_expiration, 3600);
	cc = kr_container_config(&env, p2, &p2->containers[0], &in, err, sizeof(err));
	assert_null(cc);
	assert_non_null(strstr(err, "no API server"));
	pod_unref(p2);
	free(dir);
	free(pdir);
	pod_unref(p);
	volumes_free(v);
}

struct valid_case {
	const char *name;
	const char *vol;
	const char *err; /* NULL: valid */
};

static const struct valid_case valid_cases[] = {
	{ "kube-api-access",
	    "    projected:\n      sources:\n"
	    "      - serviceAccountToken: {expirationSeconds: 3607, path: token}\n"
	    "      - configMap: {name: kube-root-ca.crt, items: [{key: ca.crt, path: ca.crt}]}\n"
	    "      - downwardAPI: {items: [{path: namespace, fieldRef: {fieldPath: metadata.namespace}}]}\n",
	    NULL },
	{ "token too short",
	    "    projected:\n      sources:\n"
	    "      - serviceAccountToken: {expirationSeconds: 599, path: token}\n",
	    "may not specify a duration less than 10 minutes" },
	{ "token too long",
	    "    projected:\n      sources:\n"
	    "      - serviceAccountToken: {expirationSeconds: 4294967297, path: token}\n",
	    "larger than 2^32 seconds" },
	{ "token path",
	    "    projected:\n      sources:\n"
	    "      - serviceAccountToken: {path: ../token}\n",
	    "must not start with '..'" },
	{ "token path with a .. element",
	    "    projected:\n      sources:\n"
	    "      - serviceAccountToken: {path: x/../../token}\n",
	    "must not contain '..'" },
	{ "token path absolute",
	    "    projected:\n      sources:\n"
	    "      - serviceAccountToken: {path: /token}\n",
	    "must be a relative path" },
	{ "projected configMap name", "    projected:\n      sources:\n      - configMap: {}\n",
	    "configMap.name: required" },
	{ "downward neither", "    downwardAPI:\n      items: [{path: x}]\n",
	    "must specify one of fieldRef and resourceFieldRef" },
	{ "downward both",
	    "    downwardAPI:\n      items: [{path: x, fieldRef: {fieldPath: metadata.name}, "
	    "resourceFieldRef: {containerName: c, resource: limits.cpu}}]\n",
	    "can not be specified simultaneously" },
};

static void
test_validate(void **state)
{
	char        err[512], *y;
	struct pod *p;
	size_t      i;
	int         rc;

	(void)state;
	for (i = 0; i < nitems(valid_cases); i++) {
		y = xsprintf("metadata: {name: p, uid: uv}\nspec:\n  volumes:\n  - name: v\n%s"
		             "  containers:\n  - {name: c, image: busybox}\n",
		    valid_cases[i].vol);
		p = yaml_pod(y);
		free(y);
		err[0] = '\0';
		rc = pod_validate(p, err, sizeof(err));
		printf("# %s: %d %s\n", valid_cases[i].name, rc, err);
		if (valid_cases[i].err == NULL) {
			assert_int_equal(rc, 0);
		} else {
			assert_int_not_equal(rc, 0);
			assert_non_null(strstr(err, valid_cases[i].err));
		}
		pod_unref(p);
	}
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_parse),
		cmocka_unit_test(test_payload),
		cmocka_unit_test(test_atomic_writer),
		cmocka_unit_test(test_atomic_writer_fsgroup),
		cmocka_unit_test(test_config_env),
		cmocka_unit_test(test_config_errors),
		cmocka_unit_test(test_config_mounts),
		cmocka_unit_test(test_tmpfs_size),
		cmocka_unit_test(test_downward_values),
		cmocka_unit_test(test_config_downward),
		cmocka_unit_test(test_validate),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
