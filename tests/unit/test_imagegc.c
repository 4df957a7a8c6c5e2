/* test_imagegc.c — table tests of the image GC decisions (logic/imagegc.c): detection
 * (first detected, last used, gone images forgotten), the thresholds, the least recently
 * used order with in-use, pinned and too young images kept, the removal for age
 * (imageMaximumGCAge), and the node status list. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "logic/imagegc.h"

#define MIN 60000LL

static void
test_amount(void **state)
{
	struct igc_policy p = { 85, 80, 2 * MIN, 0 };
	static const struct {
		int64_t cap, avail, want;
		int     usage;
	} t[] = {
		{ 1000, 200, 0, 80 },  /* under the high threshold */
		{ 1000, 151, 0, 85 },  /* 100 - 15 (integer division): at the threshold */
		{ 1000, 150, 50, 85 }, /* at 85 %: down to 80 % */
		{ 1000, 10, 190, 99 }, /* nearly full */
		{ 1000, 2000, 0, 0 },  /* available above capacity is capped */
		{ 100 << 20, 0, 20 << 20, 100 },
	};
	size_t i;
	int    u;

	(void)state;
	for (i = 0; i < sizeof(t) / sizeof(t[0]); i++) {
		int64_t a = igc_amount_to_free(&p, t[i].cap, t[i].avail, &u);

		if (t[i].cap == 1000 && t[i].avail == 151) {
			assert_int_equal(u, 85);
			assert_int_equal(a, 1000 * 20 / 100 - 151);
			continue;
		}
		assert_int_equal(u, t[i].usage);
		assert_int_equal(a, t[i].want);
	}
	assert_int_equal(igc_amount_to_free(&p, 0, 0, NULL), -1);
	p.high = 100; /* disabled */
	assert_int_equal(igc_amount_to_free(&p, 1000, 0, NULL), 0);
}

static void
test_detect_plan(void **state)
{
	struct igc_policy  p = { 85, 80, 2 * MIN, 0 };
	struct igc_record *r = NULL;
	size_t             n = 0, out[8], k;
	int64_t            freed, t0 = 1000 * MIN;
	struct igc_image   first[] = {
		  { "sha256:old", 100, 0, 0 },
		  { "sha256:used", 200, 0, 1 },
		  { "sha256:pause", 50, 1, 0 },
		  { "sha256:mid", 300, 0, 1 },
	};
	struct igc_image second[] = {
		{ "sha256:old", 100, 0, 0 }, { "sha256:used", 200, 0, 1 },
		{ "sha256:pause", 50, 1, 0 },
		{ "sha256:mid", 300, 0, 0 }, /* its container was removed */
		{ "sha256:new", 400, 0, 0 }, /* pulled after the start */
		{ "sha256:new", 400, 0, 0 }, /* listed twice: one record */
	};
	struct igc_image third[] = {
		{ "sha256:used", 200, 0, 1 },
		{ "sha256:new", 400, 0, 0 },
	};

	(void)state;
	igc_detect(&r, &n, first, 4, t0, 1);
	assert_int_equal(n, 4);
	assert_string_equal(r[0].id, "sha256:mid");  /* sorted by id */
	assert_int_equal(r[0].first_detected_ms, 0); /* initial: as old as can be */
	assert_int_equal(r[0].last_used_ms, t0);
	igc_detect(&r, &n, second, 6, t0 + MIN, 0);
	assert_int_equal(n, 5);
	/* At t0 + 1 min: old (never used) first, then mid (used at t0); used is in use, pause
	 * pinned, new too young. */
	k = igc_plan(&p, r, n, t0 + MIN, INT64_MAX, out, &freed);
	assert_int_equal(k, 2);
	assert_string_equal(r[out[0]].id, "sha256:old");
	assert_string_equal(r[out[1]].id, "sha256:mid");
	assert_int_equal(freed, 400);
	/* Only what is wanted: the least recently used one covers 50 bytes. */
	k = igc_plan(&p, r, n, t0 + MIN, 50, out, &freed);
	assert_int_equal(k, 1);
	assert_string_equal(r[out[0]].id, "sha256:old");
	assert_int_equal(freed, 100);
	/* Two minutes after it was first seen, new is old enough (after mid: never used but
	 * detected later than old... and mid was used). */
	k = igc_plan(&p, r, n, t0 + 3 * MIN, INT64_MAX, out, &freed);
	assert_int_equal(k, 3);
	assert_string_equal(r[out[0]].id, "sha256:old");
	assert_string_equal(r[out[1]].id, "sha256:new");
	assert_string_equal(r[out[2]].id, "sha256:mid");
	/* Images gone from the runtime are forgotten. */
	igc_detect(&r, &n, third, 2, t0 + 4 * MIN, 0);
	assert_int_equal(n, 2);
	assert_string_equal(r[0].id, "sha256:new");
	assert_int_equal(r[0].first_detected_ms, t0 + MIN);
	igc_detect(&r, &n, NULL, 0, t0 + 5 * MIN, 0);
	assert_int_equal(n, 0);
	assert_null(r);
	igc_records_free(r, n);
}

/* A detection that saw the image in use, then the reclaim's own detection in the same
 * millisecond that does not (its container was just removed): the image may go. */
static void
test_same_ms(void **state)
{
	struct igc_policy  p = { 85, 80, 2 * MIN, 0 };
	struct igc_record *r = NULL;
	size_t             n = 0, out[2];
	int64_t            t0 = 1000 * MIN;
	struct igc_image   used = { "sha256:a", 100, 0, 1 }, unused = { "sha256:a", 100, 0, 0 };

	(void)state;
	igc_detect(&r, &n, &used, 1, t0, 1);
	igc_detect(&r, &n, &unused, 1, t0, 0);
	assert_int_equal(igc_plan(&p, r, n, t0, INT64_MAX, out, NULL), 1);
	igc_records_free(r, n);
}

/* freeOldImages: unused for longer than the maximum age, once the manager ran that long. */
static void
test_plan_age(void **state)
{
	struct igc_policy p = { 85, 80, 2 * MIN, 60 * MIN };
	int64_t           t0 = 1000 * MIN, now = t0 + 120 * MIN;
	struct igc_record r[] = {
		{ "present-at-start", 0, 0, 10, 0, 0, 0 },           /* never used since: goes */
		{ "used-61m-ago", t0, now - 61 * MIN, 10, 0, 0, 0 }, /* goes */
		{ "used-59m-ago", t0, now - 59 * MIN, 10, 0, 0, 0 },
		{ "used-60m-ago", t0, now - 60 * MIN, 10, 0, 0, 0 }, /* not more than the age */
		{ "in-use", 0, now, 10, 0, 1, 0 }, { "pinned", 0, 0, 10, 1, 0, 0 },
		{ "pulled-10m-ago", now - 10 * MIN, 0, 10, 0, 0, 0 }, /* never used, young */
		{ "pulled-70m-ago", now - 70 * MIN, 0, 10, 0, 0, 0 }, /* never used, old: goes */
	};
	size_t out[8], k;

	(void)state;
	k = igc_plan_age(&p, r, 8, now, t0, out);
	assert_int_equal(k, 3);
	assert_string_equal(r[out[0]].id, "present-at-start"); /* the eviction order */
	assert_string_equal(r[out[1]].id, "pulled-70m-ago");
	assert_string_equal(r[out[2]].id, "used-61m-ago");
	/* Not before the manager has run longer than the maximum age. */
	assert_int_equal(igc_plan_age(&p, r, 8, t0 + 60 * MIN, t0, out), 0);
	assert_int_equal(igc_plan_age(&p, r, 8, t0 + 60 * MIN + 1, t0, out), 1);
	assert_string_equal(r[out[0]].id, "present-at-start");
	p.max_age_ms = 0; /* off */
	assert_int_equal(igc_plan_age(&p, r, 8, now, t0, out), 0);
	assert_int_equal(igc_plan_age(&p, NULL, 0, now, t0, out), 0);
}

static void
test_node_images(void **state)
{
	const char           *tags1[] = { "a:1", "a:latest" }, *dig1[] = { "a@sha256:1" };
	const char           *tags2[] = { "b:1", "b:2", "b:3", "b:4", "b:5", "b:6" };
	struct igc_listed     l[60];
	struct igc_node_image out[IGC_NODE_IMAGES_MAX];
	size_t                i, k;

	(void)state;
	memset(l, 0, sizeof(l));
	l[0] = (struct igc_listed){ tags1, 2, dig1, 1, 10 };
	l[1] = (struct igc_listed){ tags2, 6, NULL, 0, 30 };
	k = igc_node_images(l, 2, out);
	assert_int_equal(k, 2);
	assert_int_equal(out[0].size, 30);  /* largest first */
	assert_int_equal(out[0].nnames, 5); /* at most 5 names */
	assert_string_equal(out[0].names[4], "b:5");
	assert_int_equal(out[1].nnames, 3);
	assert_string_equal(out[1].names[0], "a@sha256:1"); /* digests, then tags */
	assert_string_equal(out[1].names[2], "a:latest");
	for (i = 0; i < 60; i++)
		l[i].size = (int64_t)i;
	k = igc_node_images(l, 60, out);
	assert_int_equal(k, 50); /* the 50 largest */
	assert_int_equal(out[0].size, 59);
	assert_int_equal(out[49].size, 10);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_amount),
		cmocka_unit_test(test_detect_plan),
		cmocka_unit_test(test_plan_age),
		cmocka_unit_test(test_same_ms),
		cmocka_unit_test(test_node_images),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
