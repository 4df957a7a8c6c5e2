/* test_eviction_v2.c — the eviction manager's cgroup v2 path (this machine's cgroup is v1,
 * so the v2 tree is a directory of files the test writes): without cgroup.event_control,
 * the kubepods memory.current is polled every 500 ms once a hard memory threshold exists;
 * a usage crossing allocatableMemory.available's threshold runs a pass at once (counted as a
 * notification), the working set is read from memory.current minus inactive_file, and a
 * usage that stays over does not run a pass again (an edge, as the v1 eventfd). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>

#include <event2/event.h>

#include "core/config.h"
#include "core/util.h"
#include "node/cgroups.h"
#include "node/eviction.h"
#include "node/podworkers.h"

#define MI (1024LL * 1024)

static void
put(const char *dir, const char *file, const char *fmt, long long v)
{
	char *p = xsprintf("%s/%s", dir, file);
	FILE *f = fopen(p, "w");

	assert_non_null(f);
	fprintf(f, fmt, v);
	fclose(f);
	free(p);
}

static void
stop_cb(evutil_socket_t fd, short what, void *arg)
{
	(void)fd;
	(void)what;
	event_base_loopbreak(arg);
}

static void
run_ms(struct event_base *base, int64_t ms)
{
	struct event  *ev = evtimer_new(base, stop_cb, base);
	struct timeval tv = ms_to_tv(ms);

	evtimer_add(ev, &tv);
	event_base_dispatch(base);
	event_free(ev);
}

static void
test_v2_poll(void **state)
{
	char  tmpl[] = "/tmp/klet-evv2.XXXXXX", err[256];
	char *root, *kp;
	char *argv[] = { "kletd", "--root-dir", NULL, "--eviction-hard", "memory.available<150Mi",
		"--eviction-monitoring-period", "60s", "--hostname-override", "n", NULL };
	struct klet_config     cfg;
	struct cgroups_options co;
	struct cgroups        *cg;
	struct event_base     *base = event_base_new();
	struct pw_syncer       syncer;
	struct pw_options      wo = { 1000, 60000 };
	struct podworkers     *pw;
	struct eviction_deps   d;
	struct eviction       *e;
	struct eviction_view   v;

	(void)state;
	assert_non_null(mkdtemp(tmpl));
	root = xsprintf("%s/root", tmpl);
	argv[2] = root;
	memset(&cfg, 0, sizeof(cfg));
	assert_int_equal(config_load(&cfg, 9, argv, err, sizeof(err)), CONFIG_OK);
	memset(&co, 0, sizeof(co));
	co.mnt = tmpl;
	co.root = "/t";
	co.v2 = 1;
	cg = cgroups_new(&co, err, sizeof(err));
	assert_non_null(cg);
	assert_true(cgroups_is_v2(cg));
	kp = xsprintf("%s%s", tmpl, cgroups_kubepods(cg));
	put(kp, "memory.current", "%lld\n", 100 * MI);
	put(kp, "memory.stat", "anon 1\ninactive_file %lld\n", 10 * MI);
	memset(&syncer, 0, sizeof(syncer));
	pw = podworkers_new(base, &syncer, &wo);
	memset(&d, 0, sizeof(d));
	d.base = base;
	d.cfg = &cfg;
	d.cgroups = cg;
	d.workers = pw;
	d.cgroup_mnt = tmpl;
	d.pods_memory = 400 * MI;
	e = eviction_new(&d, err, sizeof(err));
	assert_non_null(e);
	run_ms(base, 100); /* the first pass: no pressure, the poll armed */
	eviction_view(e, &v);
	assert_int_equal(v.passes, 1);
	assert_true(v.notify_armed);
	assert_int_equal(v.conditions & EV_COND_MEMORY, 0);
	/* allocatableMemory.available = 400Mi - (100Mi - 10Mi inactive) = 310Mi */
	assert_true(v.obs[EV_ALLOC_MEMORY].valid);
	assert_int_equal(v.obs[EV_ALLOC_MEMORY].available, 310 * MI);
	/* The kubepods usage crosses 400Mi - 150Mi (+ 10Mi inactive): a pass within 500 ms,
	 * long before the 60 s period. */
	put(kp, "memory.current", "%lld\n", 300 * MI);
	run_ms(base, 700);
	eviction_view(e, &v);
	assert_int_equal(v.notifications, 1);
	assert_int_equal(v.passes, 2);
	assert_true(v.conditions & EV_COND_MEMORY);
	assert_int_equal(v.obs[EV_ALLOC_MEMORY].available, 110 * MI);
	/* Still over: no new pass from the poll (the edge was taken). */
	run_ms(base, 1100);
	eviction_view(e, &v);
	assert_int_equal(v.notifications, 1);
	assert_int_equal(v.passes, 2);
	/* Below, then over again: one more pass. */
	put(kp, "memory.current", "%lld\n", 120 * MI);
	run_ms(base, 600);
	put(kp, "memory.current", "%lld\n", 390 * MI);
	run_ms(base, 600);
	eviction_view(e, &v);
	assert_int_equal(v.notifications, 2);
	eviction_free(e);
	podworkers_free(pw);
	cgroups_free(cg);
	config_clear(&cfg);
	event_base_free(base);
	free(kp);
	free(root);
	rmtree(tmpl);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_v2_poll),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
