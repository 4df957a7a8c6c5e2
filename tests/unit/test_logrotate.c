/* test_logrotate.c — container log rotation: paths, rotated names, how many old files go.
 * The rotation itself runs against containerd in tests/e2e/test_logrotate_containerd.sh. */
#include <sys/stat.h>

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>

#include "node/logrotate.h"
#include "core/util.h"
#include "pod/pod.h"
#include "pod/runtime.h"

static void
test_path_and_name(void **state)
{
	char *p, *r;

	(void)state;
	p = logrotate_path("/var/log/pods", "kube-system", "dns", "u-1", "coredns", 3);
	assert_string_equal(p, "/var/log/pods/kube-system_dns_u-1/coredns/3.log");
	r = logrotate_rotated_name(p, 1700000000); /* 2023-11-14 22:13:20 UTC */
	assert_string_equal(r, "/var/log/pods/kube-system_dns_u-1/coredns/3.log.20231114-221320");
	free(p);
	free(r);
	p = logrotate_path("/l", NULL, "n", "u", "c", 0);
	assert_string_equal(p, "/l/default_n_u/c/0.log");
	free(p);
	/* Names from the runtime never lead out of the logs dir. */
	assert_null(logrotate_path("/l", "ns", "n", "../../../etc", "c", 0));
	assert_null(logrotate_path("/l", "ns", "n", "u", "..", 0));
	assert_null(logrotate_path("/l", "ns", "n", "u", "a/b", 0));
	assert_null(logrotate_path("/l", "ns", "n", "u", NULL, 0));
}

static void
test_excess(void **state)
{
	static const struct {
		size_t nrotated;
		int    max_files;
		size_t want;
	} cases[] = {
		{ 0, 5, 0 },
		{ 3, 5, 0 },
		{ 4, 5, 1 },
		{ 9, 5, 6 },
		{ 0, 2, 0 },
		{ 1, 2, 1 },
		{ 5, 2, 5 },
		{ 1, 3, 0 },
		{ 2, 3, 1 },
	};
	size_t i;

	(void)state;
	for (i = 0; i < nitems(cases); i++)
		if (logrotate_excess(cases[i].nrotated, cases[i].max_files) != cases[i].want)
			fail_msg("excess(%zu, %d) = %zu, want %zu", cases[i].nrotated,
			    cases[i].max_files,
			    logrotate_excess(cases[i].nrotated, cases[i].max_files), cases[i].want);
}

/* The log a reader opens (node server, podctl logs): the newest instance, or the one before
 * with previous; the kubelet's messages otherwise. */
static void
test_container_log(void **state)
{
	static const char *json =
	    "{\"metadata\": {\"name\": \"web\", \"namespace\": \"ns\", \"uid\": \"u1\"}, "
	    "\"spec\": {\"containers\": [{\"name\": \"c\", \"image\": \"i\"}, "
	    "{\"name\": \"d\", \"image\": \"i\"}]}}";
	char                       err[256], *path;
	struct pod                *p = pod_from_json(json, strlen(json), err, sizeof(err));
	struct rt_container        cs[2];
	struct rt_pod_status       st;
	const struct rt_container *ct;

	(void)state;
	assert_non_null(p);
	memset(cs, 0, sizeof(cs));
	memset(&st, 0, sizeof(st));
	cs[0].id = "new";
	cs[0].name = "c";
	cs[0].restart_count = 2;
	cs[1].id = "old";
	cs[1].name = "c";
	cs[1].restart_count = 1;
	st.containers = cs;
	st.ncontainers = 2;
	assert_int_equal(
	    logrotate_container_log("/l", p, &st, "c", 0, &path, &ct, err, sizeof(err)), 0);
	assert_string_equal(path, "/l/ns_web_u1/c/2.log");
	assert_string_equal(ct->id, "new");
	free(path);
	assert_int_equal(
	    logrotate_container_log("/l", p, &st, "c", 1, &path, &ct, err, sizeof(err)), 0);
	assert_string_equal(path, "/l/ns_web_u1/c/1.log");
	assert_string_equal(ct->id, "old");
	free(path);
	assert_int_equal(
	    logrotate_container_log("/l", p, &st, "x", 0, &path, &ct, err, sizeof(err)), -1);
	assert_string_equal(err, "container x is not valid for pod web");
	assert_int_equal(
	    logrotate_container_log("/l", p, &st, "d", 0, &path, &ct, err, sizeof(err)), -1);
	assert_string_equal(err,
	    "container \"d\" in pod \"web\" is waiting to start: "
	    "ContainerCreating");
	st.ncontainers = 1;
	assert_int_equal(
	    logrotate_container_log("/l", p, &st, "c", 1, &path, &ct, err, sizeof(err)), -1);
	assert_string_equal(err, "previous terminated container \"c\" in pod \"web\" not found");
	assert_int_equal(
	    logrotate_container_log("/l", p, NULL, "c", 0, &path, &ct, err, sizeof(err)), -1);
	pod_unref(p);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_path_and_name),
		cmocka_unit_test(test_excess),
		cmocka_unit_test(test_container_log),
	};

	return cmocka_run_group_tests_name("logrotate", tests, NULL, NULL);
}
