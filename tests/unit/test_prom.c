/* test_prom.c — the Prometheus text format: numbers as Go prints them, label escaping,
 * histograms with cumulative buckets; the eviction and image GC families as the kubelet
 * names them. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include <event2/buffer.h>

#include "core/util.h"
#include "node/eviction.h"
#include "node/imagegc.h"
#include "server/gcmetrics.h"
#include "server/metrics.h"

static char *
take(struct evbuffer *b)
{
	size_t n = evbuffer_get_length(b);
	char  *s = xmalloc(n + 1);

	evbuffer_remove(b, s, n);
	s[n] = '\0';
	return s;
}

static void
test_numbers(void **state)
{
	char buf[64];

	(void)state;
	prom_number(buf, sizeof(buf), 3);
	assert_string_equal(buf, "3");
	prom_number(buf, sizeof(buf), 0.1);
	assert_string_equal(buf, "0.1");
	prom_number(buf, sizeof(buf), 0.005);
	assert_string_equal(buf, "0.005");
	prom_number(buf, sizeof(buf), 1.5e-7);
	assert_string_equal(buf, "1.5e-07");
	prom_number(buf, sizeof(buf), INFINITY);
	assert_string_equal(buf, "+Inf");
	prom_number(buf, sizeof(buf), NAN);
	assert_string_equal(buf, "NaN");
	prom_number(buf, sizeof(buf), 123456789);
	assert_string_equal(buf, "123456789");
}

static void
test_samples(void **state)
{
	struct evbuffer *b = evbuffer_new();
	char             lab[128] = "", *s;

	(void)state;
	prom_label(lab, sizeof(lab), "node", "a\"b\\c\nd");
	prom_label(lab, sizeof(lab), "x", "y");
	assert_string_equal(lab, "node=\"a\\\"b\\\\c\\nd\",x=\"y\"");
	prom_family(b, "kubelet_running_pods", "[ALPHA] Number of pods", "gauge");
	prom_sample(b, "kubelet_running_pods", NULL, 2);
	prom_sample(b, "kubelet_running_containers", "container_state=\"running\"", 3);
	s = take(b);
	assert_string_equal(s,
	    "# HELP kubelet_running_pods [ALPHA] Number of pods\n"
	    "# TYPE kubelet_running_pods gauge\n"
	    "kubelet_running_pods 2\n"
	    "kubelet_running_containers{container_state=\"running\"} 3\n");
	free(s);
	evbuffer_free(b);
}

static void
test_histogram(void **state)
{
	static const double bounds[] = { 0.01, 0.1, 1 };
	struct prom_hist    h = { .bounds = bounds, .nbounds = 3 };
	struct evbuffer    *b = evbuffer_new();
	char               *s;

	(void)state;
	prom_hist_observe(&h, 0.005);
	prom_hist_observe(&h, 0.05);
	prom_hist_observe(&h, 0.05);
	prom_hist_observe(&h, 5);
	prom_hist_write(b, "x_seconds", "X.", &h);
	s = take(b);
	assert_string_equal(s,
	    "# HELP x_seconds X.\n"
	    "# TYPE x_seconds histogram\n"
	    "x_seconds_bucket{le=\"0.01\"} 1\n"
	    "x_seconds_bucket{le=\"0.1\"} 3\n"
	    "x_seconds_bucket{le=\"1\"} 3\n"
	    "x_seconds_bucket{le=\"+Inf\"} 4\n"
	    "x_seconds_sum 5.105\n"
	    "x_seconds_count 4\n");
	free(s);
	evbuffer_free(b);
}

/* kubelet_evictions by eviction_signal (the node's memory, the image fs, the local storage
 * limits), kubelet_image_garbage_collected_total by reason (the reclaim counts as space). */
static void
test_gc_families(void **state)
{
	struct evbuffer     *b = evbuffer_new();
	struct eviction_view ev;
	struct imagegc_view  ig;
	char                *s;

	(void)state;
	memset(&ev, 0, sizeof(ev));
	memset(&ig, 0, sizeof(ig));
	ev.by_signal[EV_MEMORY] = 2;
	ev.by_signal[EV_IMAGEFS] = 1;
	ev.emptydir_limit = 1;
	ig.removed_space = 1;
	ig.removed_reclaim = 2;
	ig.removed_age = 4;
	gcmetrics_write(b, &ev, &ig);
	s = take(b);
	assert_non_null(strstr(s,
	    "# HELP kubelet_evictions [ALPHA] Cumulative number of pod "
	    "evictions by eviction signal\n"
	    "# TYPE kubelet_evictions counter\n"
	    "kubelet_evictions{eviction_signal=\"memory.available\"} 2\n"
	    "kubelet_evictions{eviction_signal=\"imagefs.available\"} 1\n"
	    "kubelet_evictions{eviction_signal=\"emptydirfs.limit\"} 1\n"));
	assert_null(strstr(s, "eviction_signal=\"nodefs.available\"")); /* none: no sample */
	assert_non_null(strstr(s,
	    "# TYPE kubelet_image_garbage_collected_total counter\n"
	    "kubelet_image_garbage_collected_total{reason=\"age\"} 4\n"
	    "kubelet_image_garbage_collected_total{reason=\"space\"} 3\n"));
	free(s);
	evbuffer_free(b);
}

int
main(void)
{
	const struct CMUnitTest t[] = {
		cmocka_unit_test(test_numbers),
		cmocka_unit_test(test_samples),
		cmocka_unit_test(test_histogram),
		cmocka_unit_test(test_gc_families),
	};

	return cmocka_run_group_tests_name("prom", t, NULL, NULL);
}
