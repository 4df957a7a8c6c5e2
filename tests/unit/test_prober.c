/* test_prober.c — the prober's workers on a real event loop with a fake handler: initial
 * results, threshold runs (table cases), the startup gate, hold after a liveness failure,
 * reset on a new container ID, results per container ID, change notifications; and the
 * grpc health message helpers. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include <event2/event.h>

#include "pod/pod.h"
#include "prober/prober.h"
#include "prober/grpc_check.h"
#include "prober/internal.h"
#include "core/util.h"

static struct event_base *base;
static struct prober     *P;
static void              *pending[16];
static char               pending_what[16][64];
static int                npending;
static int                ncancelled;
static char               notified[8][64];
static int                nnotified;

static void
fake(void *token, const char *uid, const char *container, enum probe_kind k, void *arg)
{
	(void)uid;
	(void)arg;
	assert_true(npending < 16);
	snprintf(pending_what[npending], sizeof(pending_what[0]), "%s/%s", container,
	    probe_kind_name(k));
	pending[npending++] = token;
}

static void
fake_cancel(void *token, void *arg)
{
	int i;

	(void)arg;
	for (i = 0; i < npending; i++) {
		if (pending[i] == token) {
			memmove(&pending[i], &pending[i + 1], (npending - i - 1) * sizeof(void *));
			memmove(pending_what[i], pending_what[i + 1],
			    (npending - i - 1) * sizeof(pending_what[0]));
			npending--;
			ncancelled++;
			return;
		}
	}
	fail_msg("cancel of an unknown check");
}

static void
notify(const char *uid, void *arg)
{
	(void)arg;
	if (nnotified < 8)
		snprintf(notified[nnotified], sizeof(notified[0]), "%s", uid);
	nnotified++;
}

static void
spin(void)
{
	int i;

	for (i = 0; i < 5; i++)
		event_base_loop(base, EVLOOP_NONBLOCK);
}

/* Finishes the one pending check of container/kind with ok. */
static void
finish(const char *what, int ok)
{
	int i;

	for (i = 0; i < npending; i++) {
		if (strcmp(pending_what[i], what) == 0) {
			void *t = pending[i];

			memmove(&pending[i], &pending[i + 1], (npending - i - 1) * sizeof(void *));
			memmove(pending_what[i], pending_what[i + 1],
			    (npending - i - 1) * sizeof(pending_what[0]));
			npending--;
			prober_check_done(t, ok, ok ? NULL : "boom");
			spin();
			return;
		}
	}
	fail_msg("no pending check %s", what);
}

static int
has_pending(const char *what)
{
	int i;

	for (i = 0; i < npending; i++)
		if (strcmp(pending_what[i], what) == 0)
			return 1;
	return 0;
}

/* Fires the worker's period timer now. */
static void
tick(const char *uid, const char *cname, enum probe_kind k)
{
	struct pr_pod    *pp;
	struct pr_worker *w;

	LIST_FOREACH(pp, &P->p_pods, pp_entry)
	{
		if (strcmp(pp->pp_uid, uid) != 0)
			continue;
		LIST_FOREACH(w, &pp->pp_workers, w_entry)
		if (w->w_kind == k && strcmp(w->w_cname, cname) == 0) {
			event_active(w->w_timer, EV_TIMEOUT, 0);
			spin();
			return;
		}
	}
	fail_msg("no worker %s/%s", cname, probe_kind_name(k));
}

static struct pod *
mkpod(const char *probes)
{
	char        doc[4096], err[256];
	struct pod *p;

	snprintf(doc, sizeof(doc),
	    "apiVersion: v1\nkind: Pod\nmetadata:\n  name: p\n  namespace: default\n"
	    "  uid: u1\nspec:\n  containers:\n  - name: c\n    image: busybox\n%s",
	    probes);
	p = pod_from_yaml(doc, strlen(doc), err, sizeof(err));
	if (p == NULL)
		fail_msg("pod: %s", err);
	return p;
}

static void
mkrt(struct rt_pod_status *rt, const char *cid, enum rt_cstate st)
{
	memset(rt, 0, sizeof(*rt));
	rt->uid = xstrdup("u1");
	rt->nsandboxes = 1;
	rt->sandboxes = xcalloc(1, sizeof(*rt->sandboxes));
	rt->sandboxes[0].id = xstrdup("sb");
	rt->sandboxes[0].ip = xstrdup("10.0.0.5");
	rt->ncontainers = 1;
	rt->containers = xcalloc(1, sizeof(*rt->containers));
	rt->containers[0].id = xstrdup(cid);
	rt->containers[0].name = xstrdup("c");
	rt->containers[0].state = st;
	rt->containers[0].started_at = now_wall_ns();
}

static enum probe_res
result(const char *cid, enum probe_kind k)
{
	struct probe_set          ps;
	const struct probe_state *s;

	if (prober_probe_states(P, "u1", &ps) == -1)
		return PROBE_NONE;
	s = probe_set_find(&ps, cid);
	if (s == NULL)
		return PROBE_NONE;
	return k == PROBE_LIVENESS ? s->liveness : k == PROBE_READINESS ? s->readiness : s->startup;
}

static int
setup(void **state)
{
	(void)state;
	base = event_base_new();
	P = prober_new(base, NULL, NULL);
	prober_set_fake(P, fake, fake_cancel, NULL);
	prober_set_notify(P, notify, NULL);
	npending = ncancelled = nnotified = 0;
	return 0;
}

static int
teardown(void **state)
{
	(void)state;
	prober_free(P);
	assert_int_equal(npending, 0);
	event_base_free(base);
	return 0;
}

static void
test_initial_results(void **state)
{
	struct pod          *pod = mkpod("    livenessProbe:\n      exec: {command: [true]}\n"
	                                          "    readinessProbe:\n      tcpSocket: {port: 80}\n");
	struct rt_pod_status rt;

	(void)state;
	mkrt(&rt, "c1", RT_RUNNING);
	prober_sync_pod(P, pod, &rt, 1);
	assert_int_equal(result("c1", PROBE_LIVENESS), PROBE_SUCCESS);
	assert_int_equal(result("c1", PROBE_READINESS), PROBE_FAILURE);
	assert_int_equal(result("c1", PROBE_STARTUP), PROBE_NONE);
	spin();
	assert_int_equal(nnotified, 1);
	assert_string_equal(notified[0], "u1");
	/* Both ran at once. */
	assert_true(has_pending("c/liveness"));
	assert_true(has_pending("c/readiness"));
	finish("c/readiness", 1);
	assert_int_equal(result("c1", PROBE_READINESS), PROBE_SUCCESS);
	assert_int_equal(nnotified, 2);
	finish("c/liveness", 1);
	assert_int_equal(nnotified, 2); /* unchanged: no notification */
	/* Not running any more: workers stop, the in-flight check is cancelled. */
	tick("u1", "c", PROBE_LIVENESS);
	rt.containers[0].state = RT_EXITED;
	prober_sync_pod(P, pod, &rt, 1);
	assert_int_equal(ncancelled, 1);
	assert_int_equal(result("c1", PROBE_LIVENESS), PROBE_NONE);
	rt_pod_status_clear(&rt);
	pod_unref(pod);
}

struct thr_case {
	const char     *name;
	enum probe_kind kind;
	int             success, failure;
	const char     *outcomes; /* s / f per check */
	const char     *expect;   /* S / F / N (none) result after each check */
};

static const struct thr_case thr_cases[] = {
	{ "readiness 1/3", PROBE_READINESS, 1, 3, "sffsfff", "SSSSSSF" },
	{ "readiness 2/1", PROBE_READINESS, 2, 1, "ssfss", "FSFFS" },
	{ "readiness 3/2", PROBE_READINESS, 3, 2, "sssff", "FFSSF" },
	{ "liveness 1/3", PROBE_LIVENESS, 1, 3, "ffsfff", "SSSSSF" },
	{ "liveness 1/1", PROBE_LIVENESS, 1, 1, "sf", "SF" },
	{ "startup 1/2", PROBE_STARTUP, 1, 2, "fs", "NS" },
	{ "startup 1/2 fails", PROBE_STARTUP, 1, 2, "ff", "NF" },
};

static void
test_thresholds(void **state)
{
	size_t i, j;
	char   probes[512];

	(void)state;
	for (i = 0; i < nitems(thr_cases); i++) {
		const struct thr_case *tc = &thr_cases[i];
		const char            *key = tc->kind == PROBE_LIVENESS ? "livenessProbe"
		               : tc->kind == PROBE_READINESS            ? "readinessProbe"
		                                                        : "startupProbe";
		struct rt_pod_status   rt;
		struct pod            *pod;

		snprintf(probes, sizeof(probes),
		    "    %s:\n      exec: {command: [x]}\n"
		    "      successThreshold: %d\n      failureThreshold: %d\n",
		    key, tc->success, tc->failure);
		pod = mkpod(probes);
		mkrt(&rt, "c1", RT_RUNNING);
		prober_sync_pod(P, pod, &rt, 1);
		spin();
		for (j = 0; tc->outcomes[j] != '\0'; j++) {
			char           what[64];
			enum probe_res want = tc->expect[j] == 'S' ? PROBE_SUCCESS
			    : tc->expect[j] == 'F'                 ? PROBE_FAILURE
			                                           : PROBE_NONE;

			snprintf(what, sizeof(what), "c/%s", probe_kind_name(tc->kind));
			if (j > 0)
				tick("u1", "c", tc->kind);
			if (!has_pending(what))
				fail_msg("%s: check %zu did not run", tc->name, j);
			finish(what, tc->outcomes[j] == 's');
			if (result("c1", tc->kind) != want)
				fail_msg("%s: after check %zu: result %d, want %c", tc->name, j,
				    result("c1", tc->kind), tc->expect[j]);
		}
		prober_remove_pod(P, "u1");
		rt_pod_status_clear(&rt);
		pod_unref(pod);
	}
}

static void
test_liveness_hold_and_new_container(void **state)
{
	struct pod          *pod = mkpod("    livenessProbe:\n      exec: {command: [x]}\n"
	                                          "      failureThreshold: 1\n");
	struct rt_pod_status rt;

	(void)state;
	mkrt(&rt, "c1", RT_RUNNING);
	prober_sync_pod(P, pod, &rt, 1);
	spin();
	finish("c/liveness", 0);
	assert_int_equal(result("c1", PROBE_LIVENESS), PROBE_FAILURE);
	/* Held: no more checks for this container. */
	tick("u1", "c", PROBE_LIVENESS);
	assert_false(has_pending("c/liveness"));
	/* The restarted container (new ID) starts afresh. */
	free(rt.containers[0].id);
	rt.containers[0].id = xstrdup("c2");
	prober_sync_pod(P, pod, &rt, 1);
	spin();
	assert_int_equal(result("c1", PROBE_LIVENESS), PROBE_NONE);
	assert_int_equal(result("c2", PROBE_LIVENESS), PROBE_SUCCESS);
	assert_true(has_pending("c/liveness"));
	finish("c/liveness", 1);
	/* The pod terminates: everything stops. */
	prober_sync_pod(P, pod, &rt, 0);
	assert_int_equal(result("c2", PROBE_LIVENESS), PROBE_NONE);
	rt_pod_status_clear(&rt);
	pod_unref(pod);
}

static void
test_startup_gate(void **state)
{
	struct pod *pod =
	    mkpod("    livenessProbe:\n      exec: {command: [x]}\n"
	          "    readinessProbe:\n      exec: {command: [x]}\n"
	          "    startupProbe:\n      exec: {command: [x]}\n      failureThreshold: 5\n");
	struct rt_pod_status rt;

	(void)state;
	mkrt(&rt, "c1", RT_RUNNING);
	prober_sync_pod(P, pod, &rt, 1);
	spin();
	/* Only the startup probe runs until it succeeds. */
	assert_true(has_pending("c/startup"));
	assert_false(has_pending("c/liveness"));
	assert_false(has_pending("c/readiness"));
	finish("c/startup", 0);
	tick("u1", "c", PROBE_LIVENESS);
	tick("u1", "c", PROBE_READINESS);
	assert_int_equal(npending, 0);
	tick("u1", "c", PROBE_STARTUP);
	finish("c/startup", 1);
	assert_int_equal(result("c1", PROBE_STARTUP), PROBE_SUCCESS);
	/* Started: liveness and readiness run, startup never again. */
	tick("u1", "c", PROBE_STARTUP);
	assert_false(has_pending("c/startup"));
	tick("u1", "c", PROBE_LIVENESS);
	tick("u1", "c", PROBE_READINESS);
	assert_true(has_pending("c/liveness"));
	assert_true(has_pending("c/readiness"));
	finish("c/liveness", 1);
	finish("c/readiness", 1);
	assert_int_equal(result("c1", PROBE_READINESS), PROBE_SUCCESS);
	rt_pod_status_clear(&rt);
	pod_unref(pod);
}

static void
test_initial_delay(void **state)
{
	struct pod          *pod = mkpod("    readinessProbe:\n      exec: {command: [x]}\n"
	                                          "      initialDelaySeconds: 100\n");
	struct rt_pod_status rt;

	(void)state;
	mkrt(&rt, "c1", RT_RUNNING);
	prober_sync_pod(P, pod, &rt, 1);
	spin();
	assert_false(has_pending("c/readiness"));
	tick("u1", "c", PROBE_READINESS);
	assert_false(has_pending("c/readiness"));
	assert_int_equal(result("c1", PROBE_READINESS), PROBE_FAILURE);
	/* A container that started long ago is past its delay. */
	free(rt.containers[0].id);
	rt.containers[0].id = xstrdup("c2");
	rt.containers[0].started_at = now_wall_ns() - 200 * 1000000000LL;
	prober_sync_pod(P, pod, &rt, 1);
	spin();
	assert_true(has_pending("c/readiness"));
	finish("c/readiness", 1);
	rt_pod_status_clear(&rt);
	pod_unref(pod);
}

static void
test_sweep(void **state)
{
	struct pod          *pod = mkpod("    readinessProbe:\n      exec: {command: [x]}\n");
	struct rt_pod_status rt;
	struct prober_stats  st;

	(void)state;
	mkrt(&rt, "c1", RT_RUNNING);
	prober_sweep(P);
	prober_sync_pod(P, pod, &rt, 1);
	prober_sweep(P);
	prober_get_stats(P, &st);
	assert_int_equal(st.workers, 1);
	spin();
	finish("c/readiness", 0);
	/* Not synced before the next sweep: dropped. */
	prober_sweep(P);
	prober_get_stats(P, &st);
	assert_int_equal(st.workers, 0);
	assert_int_equal(st.failures, 1);
	rt_pod_status_clear(&rt);
	pod_unref(pod);
}

static void
test_grpc_messages(void **state)
{
	uint8_t              buf[64];
	static const uint8_t serving[] = { 0x08, 0x01 };
	static const uint8_t notserving[] = { 0x08, 0x02 };
	static const uint8_t bad[] = { 0x08 };

	(void)state;
	assert_int_equal(pr_grpc_health_request("", buf, sizeof(buf)), 5);
	assert_memory_equal(buf, "\0\0\0\0\0", 5);
	assert_int_equal(pr_grpc_health_request("svc", buf, sizeof(buf)), 10);
	assert_memory_equal(buf, "\0\0\0\0\x05\x0a\x03svc", 10);
	assert_int_equal(pr_grpc_health_request("svc", buf, 6), 0);
	assert_int_equal(pr_grpc_health_status(serving, sizeof(serving)), 1);
	assert_int_equal(pr_grpc_health_status(notserving, sizeof(notserving)), 2);
	assert_int_equal(pr_grpc_health_status(NULL, 0), 0);
	assert_int_equal(pr_grpc_health_status(bad, sizeof(bad)), -1);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_initial_results, setup, teardown),
		cmocka_unit_test_setup_teardown(test_thresholds, setup, teardown),
		cmocka_unit_test_setup_teardown(
		    test_liveness_hold_and_new_container, setup, teardown),
		cmocka_unit_test_setup_teardown(test_startup_gate, setup, teardown),
		cmocka_unit_test_setup_teardown(test_initial_delay, setup, teardown),
		cmocka_unit_test_setup_teardown(test_sweep, setup, teardown),
		cmocka_unit_test(test_grpc_messages),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
