/* test_containergc.c — table tests of the container GC decision (logic/containergc.c), the
 * kubelet's evictContainers: MinAge, MaxPerPodContainer per (pod, container name), the
 * global MaxContainers (an equal share per unit, then the oldest across units), pods whose
 * content may go, and containers kept because their exit is not stored yet. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "logic/containergc.h"

#define NOW 1000000

struct row {
	const char *uid, *name;
	int64_t     age; /* ms before NOW */
	int         remove_all, keep;
};

struct tcase {
	const char       *what;
	struct cgc_policy p;
	struct row        c[10];
	const char       *want; /* '1' where removed, one per row */
};

#define R(u, n, a)                                                                                 \
	{                                                                                          \
		u, n, a, 0, 0                                                                      \
	}
#define A(u, n, a)                                                                                 \
	{                                                                                          \
		u, n, a, 1, 0                                                                      \
	} /* the pod's content may go */
#define K(u, n, a)                                                                                 \
	{                                                                                          \
		u, n, a, 0, 1                                                                      \
	} /* its exit is not stored yet */
#define AK(u, n, a)                                                                                \
	{                                                                                          \
		u, n, a, 1, 1                                                                      \
	}

static const struct tcase cases[] = {
	{ "defaults: the newest dead instance per container stays", { 0, 1, -1 },
	    { R("u1", "a", 30), R("u1", "a", 10), R("u1", "a", 20), R("u1", "b", 40),
	        R("u2", "a", 50) },
	    "10100" },
	{ "MaxPerPodContainer 2: a crash loop keeps its two newest", { 0, 2, -1 },
	    { R("u1", "c", 40), R("u1", "c", 30), R("u1", "c", 20), R("u1", "c", 10) }, "1100" },
	{ "MaxPerPodContainer 0: every dead instance goes", { 0, 0, -1 },
	    { R("u1", "a", 10), R("u2", "b", 20) }, "11" },
	{ "MaxPerPodContainer -1: no per-container limit", { 0, -1, -1 },
	    { R("u1", "a", 10), R("u1", "a", 20), R("u1", "a", 30) }, "000" },
	{ "a pod whose content may go loses every instance", { 0, 1, -1 },
	    { A("u1", "a", 10), A("u1", "a", 20), A("u1", "b", 30), R("u2", "a", 5) }, "1110" },
	{ "MinAge: younger containers are neither removed nor counted", { 100, 1, -1 },
	    { R("u1", "a", 50), R("u1", "a", 150), R("u1", "a", 250), A("u2", "a", 10) }, "0010" },
	{ "MaxContainers 3: each of 3 units cut to 1 first", { 0, -1, 3 },
	    { R("u1", "a", 10), R("u1", "a", 20), R("u1", "a", 30), R("u1", "a", 40),
	        R("u2", "a", 500), R("u3", "a", 600) },
	    "011100" },
	{ "MaxContainers 2 with 3 units of 1: the oldest across units goes", { 0, 1, 2 },
	    { R("u1", "a", 30), R("u2", "a", 10), R("u3", "a", 20) }, "100" },
	{ "MaxContainers 4, 2 units: 2 each, then nothing more", { 0, -1, 4 },
	    { R("u1", "a", 1), R("u1", "a", 2), R("u1", "a", 3), R("u2", "b", 4), R("u2", "b", 5),
	        R("u2", "b", 6) },
	    "001001" },
	{ "MaxContainers 5, 2 units: a share of 2 each leaves 4, nothing more", { 0, -1, 5 },
	    { R("u1", "a", 1), R("u1", "a", 2), R("u1", "a", 3), R("u1", "a", 4), R("u2", "b", 5),
	        R("u2", "b", 6) },
	    "001100" },
	{ "MaxContainers 0: everything dead goes", { 0, -1, 0 },
	    { R("u1", "a", 1), R("u2", "a", 2), R("u2", "a", 3) }, "111" },
	{ "removed units do not count toward MaxContainers", { 0, 1, 1 },
	    { A("u1", "a", 1), A("u1", "a", 2), R("u2", "a", 3) }, "110" },
	{ "kept (exit not stored): counted, never chosen", { 0, 1, -1 },
	    { K("u1", "a", 1), R("u1", "a", 2), R("u1", "a", 3) }, "011" },
	{ "kept and older: nothing newer taken in its place", { 0, 1, -1 },
	    { R("u1", "a", 1), K("u1", "a", 2) }, "00" },
	{ "kept in a pod whose content may go", { 0, 1, -1 }, { AK("u1", "a", 1), A("u1", "a", 2) },
	    "01" },
	{ "kept across units under MaxContainers", { 0, 1, 1 },
	    { R("u1", "a", 1), K("u2", "a", 2), R("u3", "a", 3) }, "001" },
	{ "equal creation times: the input order decides, the same every pass", { 0, 1, -1 },
	    { R("u1", "a", 5), R("u1", "a", 5), R("u1", "a", 5) }, "011" },
};

static void
test_table(void **state)
{
	size_t i, j;

	(void)state;
	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		const struct tcase  *t = &cases[i];
		struct cgc_container c[10];
		char                 got[11];
		size_t               n = strlen(t->want), k, want_k = 0;

		memset(c, 0, sizeof(c));
		for (j = 0; j < n; j++) {
			c[j].uid = t->c[j].uid;
			c[j].name = t->c[j].name;
			c[j].created_ms = NOW - t->c[j].age;
			c[j].remove_all = t->c[j].remove_all;
			c[j].keep = t->c[j].keep;
			c[j].remove = 7; /* reset by cgc_select */
			want_k += t->want[j] == '1';
		}
		k = cgc_select(&t->p, c, n, NOW);
		for (j = 0; j < n; j++)
			got[j] = c[j].remove ? '1' : '0';
		got[n] = '\0';
		if (strcmp(got, t->want) != 0 || k != want_k)
			fail_msg("%s: removed %s (%zu), want %s", t->what, got, k, t->want);
	}
}

static void
test_empty(void **state)
{
	struct cgc_policy p = CGC_POLICY_DEFAULT;

	(void)state;
	assert_int_equal(cgc_select(&p, NULL, 0, NOW), 0);
	assert_int_equal(p.max_per_container, 1);
	assert_int_equal(p.max_total, -1);
	assert_int_equal(p.min_age_ms, 0);
}

/* A created time after now (clock step) is not evictable, as the kubelet's check. */
static void
test_future(void **state)
{
	struct cgc_policy    p = { 0, 0, -1 };
	struct cgc_container c[2] = { { "u", "a", NOW + 5, 0, 0, 0 }, { "u", "a", NOW, 0, 0, 0 } };

	(void)state;
	assert_int_equal(cgc_select(&p, c, 2, NOW), 1);
	assert_int_equal(c[0].remove, 0);
	assert_int_equal(c[1].remove, 1);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_table),
		cmocka_unit_test(test_empty),
		cmocka_unit_test(test_future),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
