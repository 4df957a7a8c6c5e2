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

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_path_and_name),
		cmocka_unit_test(test_excess),
	};

	return cmocka_run_group_tests_name("logrotate", tests, NULL, NULL);
}
