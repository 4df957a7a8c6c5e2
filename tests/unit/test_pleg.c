/* test_pleg.c — the kubelet's PLEG transition table and health threshold. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include "node/pleg.h"
#include "core/util.h"

static void
test_transition_table(void **state)
{
	static const struct {
		enum pleg_cstate     old, new;
		size_t               n;
		enum pleg_event_type ev[2];
	} cases[] = {
		{ PLEG_NONEXISTENT, PLEG_NONEXISTENT, 0, { 0, 0 } },
		{ PLEG_RUNNING, PLEG_RUNNING, 0, { 0, 0 } },
		{ PLEG_NONEXISTENT, PLEG_RUNNING, 1, { PLEG_CONTAINER_STARTED, 0 } },
		{ PLEG_UNKNOWN, PLEG_RUNNING, 1, { PLEG_CONTAINER_STARTED, 0 } },
		{ PLEG_EXITED, PLEG_RUNNING, 1, { PLEG_CONTAINER_STARTED, 0 } },
		{ PLEG_RUNNING, PLEG_EXITED, 1, { PLEG_CONTAINER_DIED, 0 } },
		{ PLEG_NONEXISTENT, PLEG_EXITED, 1, { PLEG_CONTAINER_DIED, 0 } },
		{ PLEG_NONEXISTENT, PLEG_UNKNOWN, 1, { PLEG_CONTAINER_CHANGED, 0 } },
		{ PLEG_RUNNING, PLEG_UNKNOWN, 1, { PLEG_CONTAINER_CHANGED, 0 } },
		{ PLEG_EXITED, PLEG_NONEXISTENT, 1, { PLEG_CONTAINER_REMOVED, 0 } },
		{ PLEG_RUNNING, PLEG_NONEXISTENT, 2,
		    { PLEG_CONTAINER_DIED, PLEG_CONTAINER_REMOVED } },
		{ PLEG_UNKNOWN, PLEG_NONEXISTENT, 2,
		    { PLEG_CONTAINER_DIED, PLEG_CONTAINER_REMOVED } },
	};
	enum pleg_event_type out[2];
	size_t               i, j, n;

	(void)state;
	for (i = 0; i < nitems(cases); i++) {
		n = pleg_transition(cases[i].old, cases[i].new, out);
		assert_int_equal(n, cases[i].n);
		for (j = 0; j < n; j++)
			assert_int_equal(out[j], cases[i].ev[j]);
	}
	assert_string_equal(pleg_event_name(PLEG_CONTAINER_DIED), "ContainerDied");
}

static void
test_health(void **state)
{
	struct pleg      *p = pleg_new(NULL, NULL, NULL, NULL, NULL);
	struct pleg_stats st;
	char              why[128];
	int64_t           now = now_mono_ms();

	(void)state;
	assert_int_equal(pleg_healthy(p, now, why, sizeof(why)), 1);
	assert_int_equal(
	    pleg_healthy(p, now + PLEG_RELIST_THRESHOLD_MS + 1000, why, sizeof(why)), 0);
	assert_non_null(strstr(why, "threshold is 180s"));
	pleg_stats(p, &st);
	assert_int_equal(st.relists, 0);
	assert_int_equal(st.in_flight, 0);
	pleg_free(p);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_transition_table),
		cmocka_unit_test(test_health),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
