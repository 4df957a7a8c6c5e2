/* test_events.c — aggregation, ring bound, ordering, listeners and field paths. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "node/events.h"
#include "pod/pod.h"
#include "core/util.h"

struct seen {
	int     news;
	int     aggs;
	char    last_reason[64];
	int32_t last_count;
};

static void
listener(const struct ev_record *r, int is_new, void *arg)
{
	struct seen *s = arg;

	if (is_new)
		s->news++;
	else
		s->aggs++;
	snprintf(s->last_reason, sizeof(s->last_reason), "%s", r->reason);
	s->last_count = r->count;
}

static void
collect(const struct ev_record *r, void *arg)
{
	char *out = arg;

	strcat(out, r->reason);
	strcat(out, ",");
}

static void
test_aggregation(void **state)
{
	struct events   *ev = events_new(0);
	struct ev_object o = { "Pod", "default", "web", "u1", "spec.containers{c}" };
	struct seen      s;
	char             order[256] = "";
	int              id;

	(void)state;
	memset(&s, 0, sizeof(s));
	id = events_listen(ev, listener, &s);
	assert_true(id > 0);
	events_record(ev, &o, EV_NORMAL, "Pulled", "image %s present", "busybox");
	events_record(ev, &o, EV_NORMAL, "Created", "Created container c");
	events_record(ev, &o, EV_NORMAL, "Pulled", "image %s present", "busybox");
	events_record(ev, &o, EV_WARNING, "Pulled", "image %s present", "busybox");
	assert_int_equal(events_count(ev), 3);
	assert_int_equal(s.news, 3);
	assert_int_equal(s.aggs, 1);
	/* The aggregated event moved to the end (newest). */
	events_foreach(ev, collect, order);
	assert_string_equal(order, "Created,Pulled,Pulled,");
	events_record(ev, &o, EV_NORMAL, "Pulled", "image busybox present");
	assert_int_equal(s.last_count, 3);
	events_unlisten(ev, id);
	events_record(ev, &o, EV_NORMAL, "Killing", "x");
	assert_int_equal(s.news, 3);
	events_free(ev);
}

static void
test_ring_bound(void **state)
{
	struct events   *ev = events_new(5);
	struct ev_object o = { NULL, "ns", "p", "u", NULL };
	char             order[256] = "";
	char             reason[16];
	int              i;

	(void)state;
	for (i = 0; i < 12; i++) {
		snprintf(reason, sizeof(reason), "R%d", i);
		events_record(ev, &o, EV_NORMAL, reason, "m");
	}
	assert_int_equal(events_count(ev), 5);
	events_foreach(ev, collect, order);
	assert_string_equal(order, "R7,R8,R9,R10,R11,");
	/* Aggregating the oldest moves it to the end. */
	events_record(ev, &o, EV_NORMAL, "R7", "m");
	order[0] = '\0';
	events_foreach(ev, collect, order);
	assert_string_equal(order, "R8,R9,R10,R11,R7,");
	events_free(ev);
	events_free(NULL);
	events_record(NULL, &o, EV_NORMAL, "X", "ignored");
}

/* The ring grows (16, 32, its capacity 40) while aggregated records move to its end, then
 * drops the oldest: the order is always that of a model list. */
static void
test_ring_grows(void **state)
{
	struct events   *ev = events_new(40);
	struct ev_object o = { NULL, "ns", "p", "u", NULL };
	char             model[128][16], want[1024], got[1024], reason[16];
	int              n = 0, i, k;

	(void)state;
	for (i = 0; i < 100; i++) {
		/* Every 7th step aggregates the record 3 places from the oldest. */
		if (i % 7 == 6 && n > 3) {
			char keep[16];

			snprintf(keep, sizeof(keep), "%s", model[3]);
			events_record(ev, &o, EV_NORMAL, keep, "m");
			memmove(model[3], model[4], (size_t)(n - 4) * sizeof(model[0]));
			snprintf(model[n - 1], sizeof(model[0]), "%s", keep);
		} else {
			snprintf(reason, sizeof(reason), "R%d", i);
			events_record(ev, &o, EV_NORMAL, reason, "m");
			if (n == 40) {
				memmove(model[0], model[1], (size_t)(n - 1) * sizeof(model[0]));
				n--;
			}
			snprintf(model[n++], sizeof(model[0]), "%s", reason);
		}
		want[0] = got[0] = '\0';
		for (k = 0; k < n; k++) {
			strcat(want, model[k]);
			strcat(want, ",");
		}
		events_foreach(ev, collect, got);
		assert_string_equal(got, want);
		assert_int_equal(events_count(ev), (size_t)n);
	}
	events_free(ev);
}

static void
path_cb(const struct ev_record *r, void *arg)
{
	snprintf(arg, 128, "%s %s %s", r->kind, r->field_path ? r->field_path : "-", r->message);
}

static void
test_field_paths(void **state)
{
	struct pod       pod;
	struct container app, init;
	struct events   *ev = events_new(10);
	char             buf[128];
	char             big[3000];

	(void)state;
	memset(&pod, 0, sizeof(pod));
	memset(&app, 0, sizeof(app));
	memset(&init, 0, sizeof(init));
	pod.name = "p";
	pod.ns = "default";
	pod.uid = "u";
	app.c_name = "web";
	app.c_kind = CK_APP;
	init.c_name = "setup";
	init.c_kind = CK_INIT;
	pod.containers = &app;
	pod.ncontainers = 1;
	pod.init_containers = &init;
	pod.ninit_containers = 1;
	assert_string_equal(
	    events_field_path(&pod, "web", buf, sizeof(buf)), "spec.containers{web}");
	assert_string_equal(
	    events_field_path(&pod, "setup", buf, sizeof(buf)), "spec.initContainers{setup}");
	assert_string_equal(events_field_path(&pod, "nope", buf, sizeof(buf)), "");
	events_pod(ev, &pod, "setup", EV_NORMAL, "Started", "Started container %s", "setup");
	events_foreach(ev, path_cb, buf);
	assert_string_equal(buf, "Pod spec.initContainers{setup} Started container setup");
	memset(big, 'x', sizeof(big) - 1);
	big[sizeof(big) - 1] = '\0';
	events_pod(ev, &pod, NULL, EV_WARNING, "Big", "%s", big);
	assert_int_equal(events_count(ev), 2);
	assert_string_equal(ev_type_name(EV_WARNING), "Warning");
	events_free(ev);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_aggregation),
		cmocka_unit_test(test_ring_bound),
		cmocka_unit_test(test_ring_grows),
		cmocka_unit_test(test_field_paths),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
