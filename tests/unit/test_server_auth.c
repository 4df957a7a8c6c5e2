/* test_server_auth.c — the kubelet's request attributes (pkg/kubelet/server/auth.go):
 * verbs from methods, the subresource of each path; the webhook answer cache. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <cmocka.h>

#include "core/util.h"
#include "server/auth.h"

static const struct {
	const char *method, *path, *verb, *sub;
} cases[] = {
	{ "GET", "/stats", "get", "stats" },
	{ "GET", "/stats/summary", "get", "stats" },
	{ "GET", "/stats/", "get", "stats" },
	{ "GET", "/statsfoo", "get", "proxy" },
	{ "GET", "/metrics", "get", "metrics" },
	{ "GET", "/metrics/resource", "get", "metrics" },
	{ "GET", "/metrics/cadvisor", "get", "metrics" },
	{ "GET", "/metricsx", "get", "proxy" },
	{ "GET", "/logs/", "get", "log" },
	{ "GET", "/logs/syslog", "get", "log" },
	{ "GET", "/logs", "get", "log" },
	{ "GET", "/containerLogs/ns/pod/c", "get", "proxy" },
	{ "POST", "/exec/ns/pod/c", "create", "proxy" },
	{ "GET", "/exec/ns/pod/c", "get", "proxy" },
	{ "POST", "/attach/ns/pod/c", "create", "proxy" },
	{ "POST", "/portForward/ns/pod", "create", "proxy" },
	{ "POST", "/run/ns/pod/c", "create", "proxy" },
	{ "GET", "/pods", "get", "proxy" },
	{ "GET", "/runningpods/", "get", "proxy" },
	{ "GET", "/healthz", "get", "proxy" },
	{ "GET", "/", "get", "proxy" },
	{ "PUT", "/x", "update", "proxy" },
	{ "PATCH", "/x", "patch", "proxy" },
	{ "DELETE", "/x", "delete", "proxy" },
	{ "OPTIONS", "/x", "", "proxy" },
	{ "HEAD", "/metrics", "", "metrics" },
};

static void
test_attributes(void **state)
{
	struct auth_attrs a;
	size_t            i;

	(void)state;
	for (i = 0; i < nitems(cases); i++) {
		auth_attributes(cases[i].method, cases[i].path, &a);
		if (strcmp(a.verb, cases[i].verb) != 0 || strcmp(a.subresource, cases[i].sub) != 0)
			fail_msg("%s %s: got verb=%s subresource=%s, want %s %s", cases[i].method,
			    cases[i].path, a.verb, a.subresource, cases[i].verb, cases[i].sub);
	}
}

static void
test_cache(void **state)
{
	struct auth_cache *c = auth_cache_new(2);
	int                ok = -1;
	const char        *text = NULL;

	(void)state;
	assert_false(auth_cache_get(c, "a", 0, &ok, &text));
	auth_cache_put(c, "a", 1, "alice", 100);
	assert_true(auth_cache_get(c, "a", 99, &ok, &text));
	assert_int_equal(ok, 1);
	assert_string_equal(text, "alice");
	assert_false(auth_cache_get(c, "a", 100, &ok, &text)); /* expired */
	auth_cache_put(c, "b", 0, "denied", 1000);
	auth_cache_put(c, "a", 1, "alice2", 1000); /* refreshed in place */
	auth_cache_put(c, "c", 1, "carol", 1000);  /* full: the oldest (b) goes */
	assert_false(auth_cache_get(c, "b", 0, &ok, &text));
	assert_true(auth_cache_get(c, "a", 0, &ok, &text));
	assert_string_equal(text, "alice2");
	assert_true(auth_cache_get(c, "c", 0, &ok, &text));
	auth_cache_free(c);
}

int
main(void)
{
	const struct CMUnitTest t[] = {
		cmocka_unit_test(test_attributes),
		cmocka_unit_test(test_cache),
	};

	return cmocka_run_group_tests_name("server_auth", t, NULL, NULL);
}
