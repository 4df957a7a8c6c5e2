/* test_cgroups.c — a pod cgroup's making (node/cgroups.c) on a cgroup v1 tree that is a
 * directory of the test's (the files a kernel would show are written by the test): a pod is
 * noted at its sync and its cgroup made later; one the runtime made first (runc makes a
 * missing parent for the sandbox, whose request now leaves before the pod cgroup is made) is
 * configured all the same; one found at a restart is taken as made and configured again
 * once; one removed is made again; pods are found by UID after others left, and a pod
 * cgroup is found after its tier was made again. */
#include <sys/stat.h>

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "core/util.h"
#include "node/cgroups.h"

static const char *const hier[] = { "cpu", "cpuacct", "memory", "pids" };

static struct pod *
mkpod(const char *uid)
{
	char *json = xsprintf(
	    "{\"metadata\": {\"name\": \"g\", \"namespace\": \"default\", \"uid\": \"%s\"},"
	    " \"spec\": {\"containers\": [{\"name\": \"c\", \"image\": \"i\", \"resources\":"
	    " {\"limits\": {\"cpu\": \"250m\", \"memory\": \"64Mi\"}}}]}}",
	    uid);
	char        err[256];
	struct pod *p = pod_from_json(json, strlen(json), err, sizeof(err));

	free(json);

	if (p == NULL)
		fail_msg("%s", err);
	return p;
}

static char *
path(const char *mnt, const char *h, const char *rel, const char *file)
{
	return xsprintf("%s/%s%s%s%s", mnt, h, rel, file ? "/" : "", file ? file : "");
}

static void
put(const char *mnt, const char *h, const char *rel, const char *file, const char *v)
{
	char *p = path(mnt, h, rel, file);
	FILE *f = fopen(p, "w");

	assert_non_null(f);
	fputs(v, f);
	fclose(f);
	free(p);
}

static char *
get(const char *mnt, const char *h, const char *rel, const char *file)
{
	char  *p = path(mnt, h, rel, file), buf[64] = "";
	FILE  *f = fopen(p, "r");
	size_t n;

	assert_non_null(f);
	n = fread(buf, 1, sizeof(buf) - 1, f);
	buf[n] = '\0';
	fclose(f);
	free(p);
	return xstrdup(buf);
}

/* What the kernel shows in a new cgroup directory, as made by runc (or by cgroups.c, whose
 * mkdir here makes an empty directory). */
static void
kernel_files(const char *mnt, const char *rel, int mkdir_too)
{
	size_t i;

	for (i = 0; i < nitems(hier); i++) {
		char *d = path(mnt, hier[i], rel, NULL);

		if (mkdir_too)
			assert_int_equal(mkdirs(d, 0755), 0);
		free(d);
	}
	put(mnt, "cpu", rel, "cpu.shares", "1024\n");
	put(mnt, "cpu", rel, "cpu.cfs_quota_us", "-1\n");
	put(mnt, "cpu", rel, "cpu.cfs_period_us", "100000\n");
	put(mnt, "memory", rel, "memory.limit_in_bytes", "9223372036854771712\n");
}

static int
exists(const char *mnt, const char *h, const char *rel)
{
	char       *p = path(mnt, h, rel, NULL);
	struct stat st;
	int         rc = stat(p, &st) == 0;

	free(p);
	return rc;
}

static void
assert_configured(const char *mnt, const char *rel)
{
	char *v;

	v = get(mnt, "cpu", rel, "cpu.shares");
	assert_string_equal(v, "256");
	free(v);
	v = get(mnt, "cpu", rel, "cpu.cfs_quota_us");
	assert_string_equal(v, "25000");
	free(v);
	v = get(mnt, "memory", rel, "memory.limit_in_bytes");
	assert_string_equal(v, "67108864");
	free(v);
}

static struct cgroups *
mkcg(const char *mnt)
{
	struct cgroups_options co;
	struct cgroups        *cg;
	char                   err[256];

	memset(&co, 0, sizeof(co));
	co.mnt = mnt;
	co.root = "/t";
	co.v2 = 0;
	cg = cgroups_new(&co, err, sizeof(err));
	if (cg == NULL)
		fail_msg("%s", err);
	return cg;
}

static void
test_made_after_runtime(void **state)
{
	char            tmpl[] = "/tmp/klet-cgt.XXXXXX", name[QOS_CGROUP_NAME_MAX];
	struct pod     *pod = mkpod("u-1");
	struct cgroups *cg;
	size_t          i;

	(void)state;
	assert_non_null(mkdtemp(tmpl));
	for (i = 0; i < nitems(hier); i++) {
		char *d = xsprintf("%s/%s", tmpl, hier[i]);

		assert_int_equal(mkdir(d, 0755), 0);
		free(d);
	}
	cg = mkcg(tmpl);
	assert_string_equal(cgroups_pod_name(cg, pod, name, sizeof(name)), "/t/kubepods/podu-1");

	/* The sync notes the pod: nothing is made yet. */
	assert_int_equal(cgroups_pod_note(cg, pod), 0);
	assert_false(exists(tmpl, "memory", name));
	/* The runtime makes the directory (runc, for the sandbox) before the pod's own making;
	 * a second note meanwhile does not take it for made. */
	kernel_files(tmpl, name, 1);
	assert_int_equal(cgroups_pod_note(cg, pod), 0);
	assert_int_equal(cgroups_pod_ensure(cg, pod), 0);
	assert_configured(tmpl, name);
	assert_int_equal(cgroups_pod_note(cg, pod), 1);

	/* Made: a later ensure writes nothing again. */
	put(tmpl, "cpu", name, "cpu.shares", "7\n");
	assert_int_equal(cgroups_pod_ensure(cg, pod), 0);
	{
		char *v = get(tmpl, "cpu", name, "cpu.shares");

		assert_string_equal(v, "7\n");
		free(v);
	}
	cgroups_free(cg);

	/* A restart finds it made; its first ensure writes its limits again (a kill -9 between
	 * the sandbox's request and its answer leaves a cgroup runc made, unconfigured). */
	put(tmpl, "cpu", name, "cpu.shares", "1024\n");
	cg = mkcg(tmpl);
	assert_int_equal(cgroups_pod_note(cg, pod), 1);
	assert_int_equal(cgroups_pod_ensure(cg, pod), 0);
	assert_configured(tmpl, name);
	/* Removed by someone: noted as not made, and made again in every hierarchy. */
	for (i = 0; i < nitems(hier); i++) {
		char *d = path(tmpl, hier[i], name, NULL);

		assert_int_equal(rmtree(d), 0);
		free(d);
	}
	assert_int_equal(cgroups_pod_note(cg, pod), 0);
	assert_int_equal(cgroups_pod_ensure(cg, pod), 0);
	for (i = 0; i < nitems(hier); i++)
		assert_true(exists(tmpl, hier[i], name));
	assert_int_equal(cgroups_pod_note(cg, pod), 1);
	cgroups_pod_forget(cg, pod->uid);
	cgroups_free(cg);
	pod_unref(pod);
	rmtree(tmpl);
}

/* A tree with the four hierarchies under a new temporary directory. */
static void
mktree(char *tmpl)
{
	size_t i;

	assert_non_null(mkdtemp(tmpl));
	for (i = 0; i < nitems(hier); i++) {
		char *d = xsprintf("%s/%s", tmpl, hier[i]);

		assert_int_equal(mkdir(d, 0755), 0);
		free(d);
	}
}

/* Pods found by UID after another left (the last takes its place), and a pod cgroup found
 * when its tier was removed and made again after kletd first looked into it. */
static void
test_forget_and_tier_again(void **state)
{
	char            tmpl[] = "/tmp/klet-cgt.XXXXXX", name[3][QOS_CGROUP_NAME_MAX];
	const char     *uids[3] = { "u-1", "u-2", "u-3" };
	struct pod     *pods[3], *pod4;
	struct cgroups *cg;
	char           *v, *tier;
	size_t          i;

	(void)state;
	mktree(tmpl);
	cg = mkcg(tmpl);
	for (i = 0; i < 3; i++) {
		pods[i] = mkpod(uids[i]);
		cgroups_pod_name(cg, pods[i], name[i], sizeof(name[i]));
		assert_int_equal(cgroups_pod_note(cg, pods[i]), 0);
		kernel_files(tmpl, name[i], 1);
		assert_int_equal(cgroups_pod_ensure(cg, pods[i]), 0);
		assert_configured(tmpl, name[i]);
	}
	/* u-1 leaves; u-3 moves into its place, and u-4 comes after it: both others are still
	 * known as configured (a record lost would be configured again). */
	cgroups_pod_forget(cg, "u-1");
	pod4 = mkpod("u-4");
	assert_int_equal(cgroups_pod_note(cg, pod4), 0);
	for (i = 1; i < 3; i++) {
		put(tmpl, "cpu", name[i], "cpu.shares", "7\n");
		assert_int_equal(cgroups_pod_note(cg, pods[i]), 1);
		assert_int_equal(cgroups_pod_ensure(cg, pods[i]), 0);
		v = get(tmpl, "cpu", name[i], "cpu.shares");
		assert_string_equal(v, "7\n");
		free(v);
	}
	/* The memory tier is removed and made again with only u-3's cgroup: u-3 is there,
	 * u-2 is not (and is made again by its ensure). */
	tier = xsprintf("%s/memory/t/kubepods", tmpl);
	assert_int_equal(rmtree(tier), 0);
	free(tier);
	kernel_files(tmpl, name[2], 1);
	assert_int_equal(cgroups_pod_note(cg, pods[2]), 1);
	assert_int_equal(cgroups_pod_note(cg, pods[1]), 0);
	assert_int_equal(cgroups_pod_ensure(cg, pods[1]), 0);
	assert_true(exists(tmpl, "memory", name[1]));
	assert_int_equal(cgroups_pod_note(cg, pods[1]), 1);
	cgroups_free(cg);
	for (i = 0; i < 3; i++)
		pod_unref(pods[i]);
	pod_unref(pod4);
	rmtree(tmpl);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_made_after_runtime),
		cmocka_unit_test(test_forget_and_tier_again),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
