/* test_cgroups.c — a pod cgroup's making (node/cgroups.c) on a cgroup v1 tree that is a
 * directory of the test's (the files a kernel would show are written by the test): a pod is
 * noted at its sync and its cgroup made later; one the runtime made first (runc makes a
 * missing parent for the sandbox, whose request now leaves before the pod cgroup is made) is
 * configured all the same; one found at a restart is taken as made and configured again
 * once; one removed is made again. */
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
mkpod(void)
{
	const char *json =
	    "{\"metadata\": {\"name\": \"g\", \"namespace\": \"default\", \"uid\": \"u-1\"},"
	    " \"spec\": {\"containers\": [{\"name\": \"c\", \"image\": \"i\", \"resources\":"
	    " {\"limits\": {\"cpu\": \"250m\", \"memory\": \"64Mi\"}}}]}}";
	char        err[256];
	struct pod *p = pod_from_json(json, strlen(json), err, sizeof(err));

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
	struct pod     *pod = mkpod();
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

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_made_after_runtime),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
