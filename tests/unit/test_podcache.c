/* test_podcache.c — the pod cache: set/get, newer-than reads, waiters; rt_* helpers. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include <event2/event.h>

#include "core/loop.h"
#include "node/podcache.h"
#include "core/util.h"

static void
mk_status(struct rt_pod_status *st, const char *uid, int ncont)
{
	int i;

	memset(st, 0, sizeof(*st));
	st->uid = xstrdup(uid);
	st->name = xstrdup("p");
	st->ns = xstrdup("default");
	st->nsandboxes = 1;
	st->sandboxes = xcalloc(1, sizeof(*st->sandboxes));
	st->sandboxes[0].id = xstrdup("sb1");
	st->sandboxes[0].ip = xstrdup("10.0.0.2");
	st->sandboxes[0].nextra_ips = 1;
	st->sandboxes[0].extra_ips = xcalloc(1, sizeof(char *));
	st->sandboxes[0].extra_ips[0] = xstrdup("fd00::2");
	st->ncontainers = (size_t)ncont;
	st->containers = xcalloc((size_t)ncont + 1, sizeof(*st->containers));
	for (i = 0; i < ncont; i++) {
		st->containers[i].id = xsprintf("c%d", i);
		st->containers[i].name = xstrdup(i % 2 ? "b" : "a");
		st->containers[i].created_at = 100 + i;
		st->containers[i].restart_count = i;
	}
}

static void
test_rt_helpers(void **state)
{
	struct rt_pod_status       st, cp;
	const struct rt_container *c;

	(void)state;
	mk_status(&st, "u1", 4);
	c = rt_find_container(&st, "a");
	assert_non_null(c);
	assert_string_equal(c->id, "c2");
	assert_null(rt_find_container(&st, "zz"));
	rt_pod_status_sort(&st);
	assert_string_equal(st.containers[0].id, "c3");
	assert_string_equal(st.containers[3].id, "c0");
	rt_pod_status_copy(&cp, &st);
	assert_string_equal(cp.sandboxes[0].extra_ips[0], "fd00::2");
	assert_string_equal(rt_find_container(&cp, "b")->id, "c3");
	rt_pod_status_clear(&cp);
	rt_pod_status_clear(&st);
	rt_pod_status_clear(NULL);
}

static void
test_set_get_newer(void **state)
{
	struct event_base          *base = event_base_new();
	struct podcache            *pc;
	struct rt_pod_status        st;
	const struct rt_pod_status *out = NULL;
	int64_t                     asof;

	(void)state;
	event_base_priority_init(base, LOOP_NPRI);
	pc = podcache_new(base);
	assert_null(podcache_get(pc, "u1", &asof));
	assert_int_equal(asof, 0);
	assert_int_equal(podcache_get_newer_than(pc, "u1", 0, &out), 0);
	mk_status(&st, "u1", 2);
	assert_int_equal(podcache_set(pc, &st, 1000), 1);
	rt_pod_status_clear(&st);
	assert_non_null(podcache_get(pc, "u1", &asof));
	assert_int_equal(asof, 1000);
	assert_int_equal(podcache_get(pc, "u1", NULL)->timestamp, 1000);
	assert_int_equal(podcache_get_newer_than(pc, "u1", 1000, &out), 1);
	assert_non_null(out);
	assert_int_equal(podcache_get_newer_than(pc, "u1", 1001, &out), 0);
	/* An older read never replaces a newer one. */
	mk_status(&st, "u1", 1);
	assert_int_equal(podcache_set(pc, &st, 900), 0);
	rt_pod_status_clear(&st);
	assert_int_equal(podcache_get(pc, "u1", NULL)->ncontainers, 2);
	/* The global time makes every pod (also absent ones) known as of it. */
	podcache_update_time(pc, 2000);
	assert_int_equal(podcache_get_newer_than(pc, "u1", 1500, &out), 1);
	out = (const void *)1;
	assert_int_equal(podcache_get_newer_than(pc, "nope", 1500, &out), 1);
	assert_null(out);
	assert_int_equal(podcache_count(pc), 1);
	podcache_delete(pc, "u1", 2500);
	assert_null(podcache_get(pc, "u1", &asof));
	assert_int_equal(asof, 2500);
	assert_int_equal(podcache_count(pc), 0);
	podcache_update_time(pc, 3000);
	assert_null(podcache_get(pc, "u1", &asof));
	assert_int_equal(asof, 3000);
	podcache_free(pc);
	event_base_free(base);
}

struct waited {
	int                fired;
	struct event_base *base;
};

static void
on_ready(void *arg)
{
	struct waited *w = arg;

	w->fired++;
}

static void
test_waiters(void **state)
{
	struct event_base    *base = event_base_new();
	struct podcache      *pc;
	struct rt_pod_status  st;
	struct waited         a = { 0 }, b = { 0 }, c = { 0 };
	struct podcache_wait *wc;

	(void)state;
	event_base_priority_init(base, LOOP_NPRI);
	pc = podcache_new(base);
	podcache_wait_newer(pc, "u1", 1000, on_ready, &a);
	podcache_wait_newer(pc, "u2", 1000, on_ready, &b);
	wc = podcache_wait_newer(pc, "u1", 5000, on_ready, &c);
	event_base_loop(base, EVLOOP_NONBLOCK);
	assert_int_equal(a.fired + b.fired + c.fired, 0);
	mk_status(&st, "u1", 1);
	podcache_set(pc, &st, 1200);
	rt_pod_status_clear(&st);
	/* Never inside the call that satisfied it. */
	assert_int_equal(a.fired, 0);
	event_base_loop(base, EVLOOP_NONBLOCK);
	assert_int_equal(a.fired, 1);
	assert_int_equal(b.fired, 0);
	podcache_update_time(pc, 1100);
	event_base_loop(base, EVLOOP_NONBLOCK);
	assert_int_equal(b.fired, 1);
	assert_int_equal(c.fired, 0);
	podcache_wait_cancel(wc);
	podcache_update_time(pc, 6000);
	event_base_loop(base, EVLOOP_NONBLOCK);
	assert_int_equal(c.fired, 0);
	/* Already satisfied: fires on the next turn. Pending ones are freed with the cache. */
	podcache_wait_newer(pc, "u9", 10, on_ready, &a);
	event_base_loop(base, EVLOOP_NONBLOCK);
	assert_int_equal(a.fired, 2);
	podcache_wait_newer(pc, "u9", 99999, on_ready, &a);
	podcache_free(pc);
	event_base_free(base);
}

static void
count_uid(const char *uid, void *arg)
{
	int *n = arg;

	assert_string_equal(uid, "u2");
	(*n)++;
}

/* Entries written by another reader than the PLEG are "foreign" until the PLEG rewrites
 * them (it writes only the pods that changed, and must not leave a stale read behind). */
static void
test_foreign(void **state)
{
	struct event_base   *base = event_base_new();
	struct podcache     *pc = podcache_new(base);
	struct rt_pod_status st;
	int                  n = 0;

	(void)state;
	mk_status(&st, "u1", 1);
	assert_int_equal(podcache_relist_set(pc, &st, 10), 1);
	rt_pod_status_clear(&st);
	assert_int_equal(podcache_foreign_count(pc), 0);
	mk_status(&st, "u2", 2);
	assert_int_equal(podcache_set(pc, &st, 11), 1);
	assert_int_equal(podcache_foreign_count(pc), 1);
	podcache_foreach_foreign(pc, count_uid, &n);
	assert_int_equal(n, 1);
	/* An older relist write does not replace it: still foreign. */
	assert_int_equal(podcache_relist_set(pc, &st, 9), 0);
	assert_int_equal(podcache_foreign_count(pc), 1);
	assert_int_equal(podcache_relist_set(pc, &st, 12), 1);
	assert_int_equal(podcache_foreign_count(pc), 0);
	/* A foreign delete, then the absent marker dropped by the cache's time. */
	podcache_delete(pc, "u2", 13);
	assert_int_equal(podcache_foreign_count(pc), 1);
	assert_null(podcache_get(pc, "u2", NULL));
	podcache_update_time(pc, 14);
	assert_int_equal(podcache_foreign_count(pc), 0);
	assert_non_null(podcache_get(pc, "u1", NULL));
	assert_int_equal(podcache_count(pc), 1);
	rt_pod_status_clear(&st);
	podcache_free(pc);
	event_base_free(base);
}

/* Many pods: every one found (the index), after drops too. */
static void
test_many(void **state)
{
	struct event_base   *base = event_base_new();
	struct podcache     *pc = podcache_new(base);
	struct rt_pod_status st;
	char                 uid[32];
	int                  i;

	(void)state;
	for (i = 0; i < 1000; i++) {
		snprintf(uid, sizeof(uid), "uid-%d", i);
		mk_status(&st, uid, 1);
		podcache_relist_set(pc, &st, 10);
		rt_pod_status_clear(&st);
	}
	for (i = 0; i < 1000; i += 2) {
		snprintf(uid, sizeof(uid), "uid-%d", i);
		podcache_relist_delete(pc, uid, 11);
	}
	podcache_update_time(pc, 12);
	assert_int_equal(podcache_count(pc), 500);
	for (i = 0; i < 1000; i++) {
		snprintf(uid, sizeof(uid), "uid-%d", i);
		if (i % 2)
			assert_string_equal(podcache_get(pc, uid, NULL)->uid, uid);
		else
			assert_null(podcache_get(pc, uid, NULL));
	}
	podcache_free(pc);
	event_base_free(base);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_rt_helpers),
		cmocka_unit_test(test_set_get_newer),
		cmocka_unit_test(test_waiters),
		cmocka_unit_test(test_foreign),
		cmocka_unit_test(test_many),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
