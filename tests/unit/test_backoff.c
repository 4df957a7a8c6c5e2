/* test_backoff.c — crash-loop backoff: 10 s doubling to 5 min, reset after 10 min clean,
 * garbage collection, the kubelet's key and doBackOff message. */
#include <inttypes.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "logic/backoff.h"
#include "logic_fixture.h"
#include "pod/hash.h"

enum op { END = 0, NEXT, IN, GET, GC, RESET, COUNT };

struct step {
	enum op     op;
	const char *key;
	int64_t     since, now; /* seconds */
	int64_t     want;       /* IN: 0/1; GET: delay s; GC: removed; COUNT: entries */
	int64_t     remaining;  /* IN: remaining s when in backoff */
};

struct backoff_case {
	const char *name;
	int64_t     initial_s, max_s; /* 0: defaults */
	struct step steps[16];
};

#define K "pod_ns_uid_c_1"

static const struct backoff_case cases[] = {
	{ "first_failure_waits_10s", 0, 0,
	    { { NEXT, K, 0, 0, 0, 0 }, { GET, K, 0, 0, 10, 0 }, { IN, K, 0, 5, 1, 5 },
	        { IN, K, 0, 9, 1, 1 }, { IN, K, 0, 10, 0, 0 } } },
	{ "doubles_each_failure", 0, 0,
	    { { NEXT, K, 0, 0, 0, 0 }, { NEXT, K, 10, 20, 0, 0 }, { GET, K, 0, 0, 20, 0 },
	        { NEXT, K, 30, 40, 0, 0 }, { GET, K, 0, 0, 40, 0 }, { NEXT, K, 80, 90, 0, 0 },
	        { GET, K, 0, 0, 80, 0 } } },
	{ "capped_at_five_minutes", 0, 0,
	    { { NEXT, K, 0, 0, 0, 0 }, { NEXT, K, 0, 1, 0, 0 }, { NEXT, K, 0, 2, 0, 0 },
	        { NEXT, K, 0, 3, 0, 0 }, { NEXT, K, 0, 4, 0, 0 }, { GET, K, 0, 0, 160, 0 },
	        { NEXT, K, 0, 5, 0, 0 }, { GET, K, 0, 0, 300, 0 }, { NEXT, K, 0, 6, 0, 0 },
	        { GET, K, 0, 0, 300, 0 } } },
	{ "reset_after_ten_minutes_clean", 0, 0,
	    { { NEXT, K, 0, 100, 0, 0 }, { NEXT, K, 0, 100, 0, 0 }, { NEXT, K, 0, 100, 0, 0 },
	        { GET, K, 0, 0, 40, 0 }, { IN, K, 701, 702, 0, 0 }, /* stale relative to its exit */
	        { NEXT, K, 701, 702, 0, 0 }, { GET, K, 0, 0, 10, 0 } } },
	{ "exactly_ten_minutes_still_doubles", 0, 0,
	    { { NEXT, K, 0, 100, 0, 0 }, { NEXT, K, 700, 710, 0, 0 }, { GET, K, 0, 0, 20, 0 } } },
	{ "unknown_key_not_in_backoff", 0, 0,
	    { { IN, "other", 0, 1, 0, 0 }, { GET, "other", 0, 0, 0, 0 },
	        { COUNT, NULL, 0, 0, 0, 0 } } },
	{ "keys_are_independent", 0, 0,
	    { { NEXT, "a", 0, 0, 0, 0 }, { NEXT, "a", 0, 1, 0, 0 }, { NEXT, "b", 0, 1, 0, 0 },
	        { GET, "a", 0, 0, 20, 0 }, { GET, "b", 0, 0, 10, 0 },
	        { COUNT, NULL, 0, 0, 2, 0 } } },
	{ "reset_forgets_key", 0, 0,
	    { { NEXT, K, 0, 0, 0, 0 }, { NEXT, K, 0, 1, 0, 0 }, { RESET, K, 0, 0, 0, 0 },
	        { GET, K, 0, 0, 0, 0 }, { IN, K, 0, 2, 0, 0 }, { NEXT, K, 0, 3, 0, 0 },
	        { GET, K, 0, 0, 10, 0 } } },
	{ "gc_drops_only_stale_entries", 0, 0,
	    { { NEXT, "old", 0, 0, 0, 0 }, { NEXT, "new", 0, 500, 0, 0 },
	        { GC, NULL, 0, 600, 0, 0 }, /* exactly 2 x max: kept */
	        { GC, NULL, 0, 601, 1, 0 }, { COUNT, NULL, 0, 0, 1, 0 },
	        { GET, "new", 0, 0, 10, 0 }, { GC, NULL, 0, 1101, 1, 0 },
	        { COUNT, NULL, 0, 0, 0, 0 } } },
	{ "custom_initial_and_max", 1, 5,
	    { { NEXT, K, 0, 0, 0, 0 }, { GET, K, 0, 0, 1, 0 }, { NEXT, K, 0, 0, 0, 0 },
	        { NEXT, K, 0, 0, 0, 0 }, { GET, K, 0, 0, 4, 0 }, { NEXT, K, 0, 0, 0, 0 },
	        { GET, K, 0, 0, 5, 0 }, { IN, K, 0, 4, 1, 1 }, { IN, K, 0, 5, 0, 0 } } },
	{ "backoff_measured_from_exit_not_from_now", 0, 0,
	    { { NEXT, K, 100, 100, 0, 0 }, { NEXT, K, 100, 105, 0, 0 }, /* 20 s */
	        { IN, K, 100, 119, 1, 1 }, { IN, K, 100, 120, 0, 0 },
	        { IN, K, 110, 120, 1, 10 } } },
};

static void
run_case(void **state)
{
	const struct backoff_case *tc = *state;
	struct backoff            *b = backoff_new(tc->initial_s * 1000, tc->max_s * 1000);
	size_t                     i;

	for (i = 0; i < nitems(tc->steps) && tc->steps[i].op != END; i++) {
		const struct step *s = &tc->steps[i];
		int64_t            rem = -1;

		switch (s->op) {
		case NEXT:
			backoff_next(b, s->key, s->since * 1000, s->now * 1000);
			break;
		case IN:
			assert_int_equal(
			    backoff_in_backoff(b, s->key, s->since * 1000, s->now * 1000, &rem),
			    s->want);
			assert_int_equal(rem, s->remaining * 1000);
			break;
		case GET:
			assert_int_equal(backoff_get(b, s->key), s->want * 1000);
			break;
		case GC:
			assert_int_equal(backoff_gc(b, s->now * 1000), s->want);
			break;
		case RESET:
			backoff_reset(b, s->key);
			break;
		case COUNT:
			assert_int_equal(backoff_count(b), s->want);
			break;
		default:
			fail();
		}
	}
	backoff_free(b);
}

static void
test_key(void **state)
{
	struct pod *p = fx_pod(RESTART_ALWAYS, "app", NULL, NULL);
	char       *k = backoff_key(p, &p->containers[0]);
	char        want[128];

	(void)state;
	snprintf(want, sizeof(want), "web_default_uid-1_app_%" PRIx64,
	    container_hash(&p->containers[0]));
	assert_string_equal(k, want);
	free(k);
	/* a new spec (hash) starts a fresh backoff */
	free(p->containers[0].c_image);
	p->containers[0].c_image = xstrdup("img-app:9");
	k = backoff_key(p, &p->containers[0]);
	assert_string_not_equal(k, want);
	free(k);
	pod_unref(p);
	backoff_free(NULL);
}

struct check_case {
	const char *name;
	int64_t     now_s; /* relative to the exit (finishedAt) */
	int         want;
	const char *msg;
};

/* Successive restarts of a crashing container exiting at finishedAt = 150 s. */
static const struct check_case check_cases[] = {
	{ "first_exit_restarts_at_once", 0, 0, NULL },
	{ "second_try_within_10s_backs_off", 5, 1,
	    "back-off 10s restarting failed container=a pod=web_default(uid-1)" },
	{ "after_10s_restarts_and_doubles", 10, 0, NULL },
	{ "then_20s", 15, 1, "back-off 20s restarting failed container=a pod=web_default(uid-1)" },
	{ "after_20s_restarts", 20, 0, NULL },
	{ "then_40s", 39, 1, "back-off 40s restarting failed container=a pod=web_default(uid-1)" },
	{ "after_40s_restarts", 40, 0, NULL },
	{ "then_1m20s", 41, 1,
	    "back-off 1m20s restarting failed container=a pod=web_default(uid-1)" },
};

static void
test_check_container(void **state)
{
	struct pod          *p = fx_pod(RESTART_ALWAYS, "a", NULL, NULL);
	struct rt_pod_status rt, running;
	struct backoff      *b = backoff_new(0, 0);
	char                *msg;
	size_t               i;

	(void)state;
	fx_rt(p, NULL, "a,e,1", &rt);
	/* the fixture's single exited container finished at 150 s */
	assert_int_equal(rt.containers[0].finished_at, 150 * 1000000000LL);
	for (i = 0; i < nitems(check_cases); i++) {
		const struct check_case *tc = &check_cases[i];
		int                      r = backoff_check_container(
		                         b, p, &p->containers[0], &rt, (150 + tc->now_s) * 1000, &msg);

		if (r != tc->want)
			fail_msg("check case %s: got %d", tc->name, r);
		if (tc->msg != NULL)
			assert_string_equal(msg, tc->msg);
		else
			assert_null(msg);
		free(msg);
	}
	/* no exited instance: nothing to back off from, nothing recorded */
	fx_rt(p, NULL, "a,r,0", &running);
	backoff_reset(b, "x");
	assert_int_equal(backoff_check_container(b, p, &p->containers[0], &running, 0, &msg), 0);
	assert_null(msg);
	assert_int_equal(backoff_count(b), 1);
	rt_pod_status_clear(&running);
	rt_pod_status_clear(&rt);
	backoff_free(b);
	pod_unref(p);
}

int
main(void)
{
	struct CMUnitTest t[nitems(cases) + 2];
	size_t            i;

	for (i = 0; i < nitems(cases); i++) {
		memset(&t[i], 0, sizeof(t[i]));
		t[i].name = cases[i].name;
		t[i].test_func = run_case;
		t[i].initial_state = (void *)&cases[i];
	}
	t[i++] = (struct CMUnitTest)cmocka_unit_test(test_key);
	t[i++] = (struct CMUnitTest)cmocka_unit_test(test_check_container);
	return _cmocka_run_group_tests("backoff", t, i, NULL, NULL);
}
