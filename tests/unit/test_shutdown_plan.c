/* test_shutdown_plan.c — table tests of the kubelet's graceful node shutdown order
 * (logic/shutdown_plan.c): the two groups of shutdownGracePeriod and
 * shutdownGracePeriodCriticalPods, the group of each priority (groupByPriority, boundaries
 * included), each pod's grace, and the cut to logind's InhibitDelayMaxSec. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "core/util.h"
#include "logic/shutdown_plan.h"
#include "pod/pod.h"

static struct pod *
mkpod(const char *spec)
{
	char       *json, *q, err[256];
	struct pod *p;

	xasprintf(&json,
	    "{'metadata': {'name': 'p', 'namespace': 'default', 'uid': 'u1'}, 'spec': "
	    "{'containers': [{'name': 'c', 'image': 'i'}]%s%s}}",
	    *spec != '\0' ? ", " : "", spec);
	for (q = json; *q != '\0'; q++)
		if (*q == '\'')
			*q = '"';
	p = pod_from_json(json, strlen(json), err, sizeof(err));
	if (p == NULL)
		fail_msg("%s in %s", err, json);
	free(json);
	return p;
}

static void
test_groups(void **state)
{
	static const struct {
		int64_t period, critical;
		size_t  n;
		int64_t g0, g1;
	} cases[] = {
		{ 0, 0, 0, 0, 0 },     /* off: the kubelet's default */
		{ 30, 10, 2, 20, 10 }, /* the documented example */
		{ 30, 0, 2, 30, 0 },   /* critical pods get no time */
		{ 30, 30, 2, 0, 30 },  /* only critical pods get time */
		{ 10, 20, 0, 0, 0 },   /* inconsistent: off */
	};
	struct shutdown_group g[SHUTDOWN_MAX_GROUPS];
	size_t                i;

	(void)state;
	for (i = 0; i < nitems(cases); i++) {
		size_t n = shutdown_plan_groups(cases[i].period, cases[i].critical, g);

		assert_int_equal(n, cases[i].n);
		if (n == 0)
			continue;
		assert_int_equal(g[0].priority, 0);
		assert_int_equal(g[1].priority, 2000000000);
		assert_int_equal(g[0].grace_s, cases[i].g0);
		assert_int_equal(g[1].grace_s, cases[i].g1);
		assert_int_equal(shutdown_plan_total(g, n), cases[i].period);
	}
}

static void
test_group_of(void **state)
{
	static const struct {
		int32_t priority;
		size_t  group;
	} cases[] = {
		{ -100, 0 },       /* below the lowest: the lowest */
		{ 0, 0 },          /* on the boundary: its own */
		{ 1000, 0 },       /* a user priority class */
		{ 1999999999, 0 }, /* just below critical */
		{ 2000000000, 1 }, /* system-cluster-critical */
		{ 2000001000, 1 }, /* system-node-critical, above every group */
	};
	struct shutdown_group g[SHUTDOWN_MAX_GROUPS];
	/* The kubelet's own table (groupByPriority) with three groups, a boundary in the middle. */
	struct shutdown_group g3[3] = { { 1, 10 }, { 2, 20 }, { 3, 30 } };
	size_t                i, n = shutdown_plan_groups(30, 10, g);

	(void)state;
	for (i = 0; i < nitems(cases); i++)
		assert_int_equal(shutdown_plan_group_of(g, n, cases[i].priority), cases[i].group);
	assert_int_equal(shutdown_plan_group_of(g3, 3, 0), 0);
	assert_int_equal(shutdown_plan_group_of(g3, 3, 2), 1);
	assert_int_equal(shutdown_plan_group_of(g3, 3, 3), 2);
	assert_int_equal(shutdown_plan_group_of(g3, 3, 4), 2);
}

static void
test_priority_and_grace(void **state)
{
	static const struct {
		const char *spec;
		int32_t     priority;
		size_t      group;
		int64_t     grace; /* with groups {20, 10} */
	} cases[] = {
		{ "", 0, 0, 20 }, /* API default grace 30: the group's 20 wins */
		{ "'terminationGracePeriodSeconds': 5", 0, 0, 5 },
		{ "'terminationGracePeriodSeconds': 0", 0, 0, 0 },
		{ "'priority': 2000000000", 2000000000, 1, 10 },
		{ "'priority': 2000001000, 'terminationGracePeriodSeconds': 3", 2000001000, 1, 3 },
		{ "'priorityClassName': 'system-node-critical'", 2000001000, 1, 10 },
		{ "'priorityClassName': 'system-cluster-critical'", 2000000000, 1, 10 },
		{ "'priorityClassName': 'high', 'priority': 1000000", 1000000, 0, 20 },
		{ "'priorityClassName': 'system-node-critical', 'priority': 5", 5, 0, 20 },
	};
	struct shutdown_group g[SHUTDOWN_MAX_GROUPS];
	size_t                i, n = shutdown_plan_groups(30, 10, g);

	(void)state;
	for (i = 0; i < nitems(cases); i++) {
		struct pod *p = mkpod(cases[i].spec);
		int32_t     prio = shutdown_plan_priority(p);
		size_t      gi = shutdown_plan_group_of(g, n, prio);

		assert_int_equal(prio, cases[i].priority);
		assert_int_equal(gi, cases[i].group);
		assert_int_equal(shutdown_plan_grace(&g[gi], p), cases[i].grace);
		pod_unref(p);
	}
}

static void
test_fit(void **state)
{
	static const struct {
		int64_t period, critical, max;
		int     cut;
		int64_t g0, g1;
	} cases[] = {
		{ 30, 10, 30, 0, 20, 10 }, /* fits exactly */
		{ 30, 10, 60, 0, 20, 10 },
		{ 30, 10, 5, 1, 0, 5 },   /* logind's default 5s: the critical pods keep 5 */
		{ 30, 10, 15, 1, 5, 10 }, /* the others lose first */
		{ 30, 10, 0, 1, 0, 0 },
	};
	struct shutdown_group g[SHUTDOWN_MAX_GROUPS];
	size_t                i, n;

	(void)state;
	for (i = 0; i < nitems(cases); i++) {
		n = shutdown_plan_groups(cases[i].period, cases[i].critical, g);
		assert_int_equal(shutdown_plan_fit(g, n, cases[i].max), cases[i].cut);
		assert_int_equal(g[0].grace_s, cases[i].g0);
		assert_int_equal(g[1].grace_s, cases[i].g1);
	}
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_groups),
		cmocka_unit_test(test_group_of),
		cmocka_unit_test(test_priority_and_grace),
		cmocka_unit_test(test_fit),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
