/* test_resource.c — cgroup figures as cadvisor reads them: v1 (cpuacct.usage, memory usage
 * minus total_inactive_file) and v2 (cpu.stat usage_usec, memory.current minus
 * inactive_file), the working set floored at 0, a missing cgroup. */
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
#include "server/resource.h"

static char dir[] = "/tmp/klet-resource-XXXXXX";

static void
put(const char *rel, const char *content)
{
	char *p = xsprintf("%s/%s", dir, rel), *slash = strrchr(p, '/');
	FILE *fp;

	*slash = '\0';
	assert_int_equal(mkdirs(p, 0755), 0);
	*slash = '/';
	fp = fopen(p, "w");
	assert_non_null(fp);
	fputs(content, fp);
	fclose(fp);
	free(p);
}

static void
test_v1(void **state)
{
	struct cg_usage u;
	char           *mnt = xsprintf("%s/v1", dir);

	(void)state;
	put("v1/cpuacct/kubepods/podA/c1/cpuacct.usage", "1500000000\n");
	put("v1/memory/kubepods/podA/c1/memory.usage_in_bytes", "10485760\n");
	put("v1/memory/kubepods/podA/c1/memory.stat",
	    "cache 4096\ninactive_file 99\ntotal_inactive_file 2097152\n");
	assert_int_equal(cg_read(mnt, "kubepods/podA/c1", &u), 0);
	assert_int_equal(u.cpu_ns, 1500000000ULL);
	assert_int_equal(u.usage_bytes, 10485760ULL);
	assert_int_equal(u.working_set_bytes, 10485760ULL - 2097152ULL);
	assert_int_equal(cg_read(mnt, "kubepods/podB", &u), -1);
	free(mnt);
}

static void
test_v2(void **state)
{
	struct cg_usage u;
	char           *mnt = xsprintf("%s/v2", dir);

	(void)state;
	put("v2/cgroup.controllers", "cpu memory\n");
	put("v2/kubepods/podA/cpu.stat", "usage_usec 2500\nuser_usec 2000\nsystem_usec 500\n");
	put("v2/kubepods/podA/memory.current", "8192\n");
	put("v2/kubepods/podA/memory.stat", "anon 4096\nfile 4096\ninactive_file 16384\n");
	assert_int_equal(cg_read(mnt, "kubepods/podA", &u), 0);
	assert_int_equal(u.cpu_ns, 2500000ULL);
	assert_int_equal(u.usage_bytes, 8192);
	assert_int_equal(u.working_set_bytes, 0); /* inactive above usage: floored */
	assert_int_equal(cg_read(mnt, "kubepods/nope", &u), -1);
	free(mnt);
}

static void
test_working_set(void **state)
{
	(void)state;
	assert_int_equal(cg_working_set(100, 30), 70);
	assert_int_equal(cg_working_set(30, 100), 0);
}

static int
teardown(void **state)
{
	(void)state;
	return rmtree(dir);
}

int
main(void)
{
	const struct CMUnitTest t[] = {
		cmocka_unit_test(test_v1),
		cmocka_unit_test(test_v2),
		cmocka_unit_test(test_working_set),
	};

	if (mkdtemp(dir) == NULL)
		return 1;
	return cmocka_run_group_tests_name("resource", t, NULL, teardown);
}
