/* test_ctl.c — podctl's protocol parser, the STATUS column rules and age formatting. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "ctl/proto.h"
#include "ctl/reply.h"
#include "core/json.h"
#include "pod/pod.h"
#include "core/util.h"

struct req_case {
	const char *line;
	int         rc;
	const char *cmd; /* rc 0 */
	const char *ns, *name;
	int         all, watch;
	const char *err_part; /* rc -1: substring of the reason */
};

static const struct req_case req_cases[] = {
	{ "{\"v\":1,\"cmd\":\"version\"}", 0, "version", "", "", 0, 0, NULL },
	{ "{\"v\":1,\"cmd\":\"get_pods\",\"ns\":\"kube-system\"}", 0, "get_pods", "kube-system", "",
	    0, 0, NULL },
	{ "{\"v\":1,\"cmd\":\"get_pods\",\"all\":true}", 0, "get_pods", "", "", 1, 0, NULL },
	{ "{\"v\":1,\"cmd\":\"describe_pod\",\"ns\":\"a\",\"name\":\"b\"}", 0, "describe_pod", "a",
	    "b", 0, 0, NULL },
	{ "{\"v\":1,\"cmd\":\"events\",\"watch\":true}", 0, "events", "", "", 0, 1, NULL },
	{ "{\"cmd\":\"status\",\"v\":1,\"extra\":[1,2]}", 0, "status", "", "", 0, 0, NULL },
	{ "{\"v\":1,\"cmd\":\"get_containers\",\"ns\":null}", 0, "get_containers", "", "", 0, 0,
	    NULL },
	{ "not json", -1, NULL, NULL, NULL, 0, 0, "invalid JSON" },
	{ "{\"v\":1,\"cmd\":\"get_pods\"", -1, NULL, NULL, NULL, 0, 0, "invalid JSON" },
	{ "[1,2]", -1, NULL, NULL, NULL, 0, 0, "JSON object" },
	{ "{\"cmd\":\"version\"}", -1, NULL, NULL, NULL, 0, 0, "protocol version" },
	{ "{\"v\":\"1\",\"cmd\":\"version\"}", -1, NULL, NULL, NULL, 0, 0, "protocol version" },
	{ "{\"v\":2,\"cmd\":\"version\"}", -1, NULL, NULL, NULL, 0, 0, "unsupported" },
	{ "{\"v\":1}", -1, NULL, NULL, NULL, 0, 0, "cmd" },
	{ "{\"v\":1,\"cmd\":\"delete_pod\"}", -1, NULL, NULL, NULL, 0, 0, "unknown cmd" },
	{ "{\"v\":1,\"cmd\":\"get_pods\",\"ns\":5}", -1, NULL, NULL, NULL, 0, 0,
	    "ns: expected a string" },
	{ "{\"v\":1,\"cmd\":\"events\",\"watch\":\"yes\"}", -1, NULL, NULL, NULL, 0, 0,
	    "watch: expected a boolean" },
	{ "{\"v\":1,\"cmd\":\"describe_pod\"}", -1, NULL, NULL, NULL, 0, 0, "needs \"name\"" },
	{ "{\"v\":1,\"cmd\":\"logs\",\"ns\":\"a\",\"name\":\"b\"}", 0, "logs", "a", "b", 0, 0,
	    NULL },
	{ "{\"v\":1,\"cmd\":\"logs\"}", -1, NULL, NULL, NULL, 0, 0, "logs needs \"name\"" },
	{ "{\"v\":1,\"cmd\":\"logs\",\"name\":\"b\",\"previous\":1}", -1, NULL, NULL, NULL, 0, 0,
	    "previous: expected a boolean" },
	{ "{\"v\":1,\"cmd\":\"logs\",\"name\":\"b\",\"container\":[]}", -1, NULL, NULL, NULL, 0, 0,
	    "container: expected a string" },
	{ "{\"v\":1,\"cmd\":\"inspect\"}", -1, NULL, NULL, NULL, 0, 0, "inspect needs \"name\"" },
	{ "{\"v\":1,\"cmd\":\"top\",\"all\":true}", 0, "top", "", "", 1, 0, NULL },
	{ "{\"v\":1,\"cmd\":\"node\"}", 0, "node", "", "", 0, 0, NULL },
	{ NULL, 0, NULL, NULL, NULL, 0, 0, NULL },
};

static void
test_parse_request(void **state)
{
	const struct req_case *tc;
	struct ctl_request     rq;
	char                   err[256];

	(void)state;
	for (tc = req_cases; tc->line != NULL; tc++) {
		int rc;

		err[0] = '\0';
		rc = ctl_parse_request(tc->line, strlen(tc->line), &rq, err, sizeof(err));
		if (rc != tc->rc)
			fail_msg("%s: rc %d, want %d (%s)", tc->line, rc, tc->rc, err);
		if (rc == 0) {
			assert_string_equal(rq.cmd, tc->cmd);
			assert_string_equal(rq.ns, tc->ns);
			assert_string_equal(rq.name, tc->name);
			assert_int_equal(rq.all_ns, tc->all);
			assert_int_equal(rq.watch, tc->watch);
		} else if (strstr(err, tc->err_part) == NULL) {
			fail_msg("%s: error \"%s\" lacks \"%s\"", tc->line, err, tc->err_part);
		}
	}
}

static void
test_parse_oversized(void **state)
{
	size_t             n = CTL_MAX_REQUEST + 100;
	char              *big = xmalloc(n + 1), err[256];
	struct ctl_request rq;

	(void)state;
	memset(big, ' ', n);
	memcpy(big, "{\"v\":1,\"cmd\":\"version\"}", 23);
	big[n] = '\0';
	assert_int_equal(ctl_parse_request(big, n, &rq, err, sizeof(err)), -1);
	{ /* logs: the container and previous */
		const char *l = "{\"v\":1,\"cmd\":\"logs\",\"name\":\"p\",\"container\":\"c\","
		                "\"previous\":true}";

		assert_int_equal(ctl_parse_request(l, strlen(l), &rq, err, sizeof(err)), 0);
		assert_string_equal(rq.container, "c");
		assert_int_equal(rq.previous, 1);
	}
	assert_non_null(strstr(err, "over the limit"));
	free(big);
}

struct cs_spec {
	enum cstate_kind kind;
	const char      *reason;
	int32_t          exit_code;
	int32_t          signal;
	int              started;
};

struct reason_case {
	const char    *name;
	enum pod_phase phase;
	const char    *pod_reason;
	struct cs_spec init[2];
	size_t         ninit;
	struct cs_spec app[2];
	size_t         napp;
	int            terminating;
	int            deleting;
	const char    *want;
};

static const struct reason_case reason_cases[] = {
	{ "running", PHASE_RUNNING, NULL, { { 0 } }, 0, { { CSTATE_RUNNING, NULL, 0, 0, 1 } }, 1, 0,
	    0, "Running" },
	{ "crash loop", PHASE_RUNNING, NULL, { { 0 } }, 0,
	    { { CSTATE_WAITING, "CrashLoopBackOff", 0, 0, 0 } }, 1, 0, 0, "CrashLoopBackOff" },
	{ "creating", PHASE_PENDING, NULL, { { 0 } }, 0,
	    { { CSTATE_WAITING, "ContainerCreating", 0, 0, 0 } }, 1, 0, 0, "ContainerCreating" },
	{ "never pull", PHASE_PENDING, NULL, { { 0 } }, 0,
	    { { CSTATE_WAITING, "ErrImageNeverPull", 0, 0, 0 } }, 1, 0, 0, "ErrImageNeverPull" },
	{ "completed", PHASE_SUCCEEDED, NULL, { { 0 } }, 0,
	    { { CSTATE_TERMINATED, "Completed", 0, 0, 0 } }, 1, 0, 0, "Completed" },
	{ "exit code", PHASE_FAILED, NULL, { { 0 } }, 0, { { CSTATE_TERMINATED, NULL, 3, 0, 0 } },
	    1, 0, 0, "ExitCode:3" },
	{ "signal", PHASE_FAILED, NULL, { { 0 } }, 0, { { CSTATE_TERMINATED, NULL, 137, 9, 0 } }, 1,
	    0, 0, "Signal:9" },
	{ "completed one still running", PHASE_RUNNING, NULL, { { 0 } }, 0,
	    { { CSTATE_RUNNING, NULL, 0, 0, 1 }, { CSTATE_TERMINATED, "Completed", 0, 0, 0 } }, 2,
	    0, 0, "Running" },
	{ "init waiting", PHASE_PENDING, NULL, { { CSTATE_WAITING, "PodInitializing", 0, 0, 0 } },
	    1, { { CSTATE_WAITING, "PodInitializing", 0, 0, 0 } }, 1, 0, 0, "Init:0/1" },
	{ "init crash", PHASE_PENDING, NULL,
	    { { CSTATE_TERMINATED, NULL, 0, 0, 0 },
	        { CSTATE_WAITING, "CrashLoopBackOff", 0, 0, 0 } },
	    2, { { CSTATE_WAITING, "PodInitializing", 0, 0, 0 } }, 1, 0, 0,
	    "Init:CrashLoopBackOff" },
	{ "init failed", PHASE_FAILED, NULL, { { CSTATE_TERMINATED, "Error", 1, 0, 0 } }, 1,
	    { { CSTATE_WAITING, "PodInitializing", 0, 0, 0 } }, 1, 0, 0, "Init:Error" },
	{ "sidecar started", PHASE_RUNNING, NULL, { { CSTATE_RUNNING, NULL, 0, 0, 1 } }, 1,
	    { { CSTATE_RUNNING, NULL, 0, 0, 1 } }, 1, 0, 0, "Running" },
	{ "evicted", PHASE_FAILED, "DeadlineExceeded", { { 0 } }, 0, { { 0 } }, 0, 0, 0,
	    "DeadlineExceeded" },
	{ "terminating worker", PHASE_RUNNING, NULL, { { 0 } }, 0,
	    { { CSTATE_RUNNING, NULL, 0, 0, 1 } }, 1, 1, 0, "Terminating" },
	{ "deleting", PHASE_RUNNING, NULL, { { 0 } }, 0, { { CSTATE_RUNNING, NULL, 0, 0, 1 } }, 1,
	    0, 1, "Terminating" },
	{ NULL, 0, NULL, { { 0 } }, 0, { { 0 } }, 0, 0, 0, NULL },
};

static void
fill_cs(struct container_status *cs, const struct cs_spec *sp)
{
	memset(cs, 0, sizeof(*cs));
	cs->name = (char *)"c";
	cs->state.kind = sp->kind;
	cs->state.reason = (char *)sp->reason;
	cs->state.exit_code = sp->exit_code;
	cs->state.signal = sp->signal;
	cs->started.set = 1;
	cs->started.v = sp->started;
}

static void
test_status_reason(void **state)
{
	const struct reason_case *tc;

	(void)state;
	for (tc = reason_cases; tc->name != NULL; tc++) {
		struct container_status init[2], app[2];
		struct pod_status       st;
		struct pod              pod;
		char                    buf[64];
		size_t                  i;
		const char             *got;

		memset(&st, 0, sizeof(st));
		memset(&pod, 0, sizeof(pod));
		st.phase = tc->phase;
		st.reason = (char *)tc->pod_reason;
		for (i = 0; i < tc->ninit; i++)
			fill_cs(&init[i], &tc->init[i]);
		for (i = 0; i < tc->napp; i++)
			fill_cs(&app[i], &tc->app[i]);
		st.init_statuses = init;
		st.ninit_statuses = tc->ninit;
		st.statuses = app;
		st.nstatuses = tc->napp;
		pod.deletion_ts = tc->deleting ? 1700000000 : 0;
		got = ctl_pod_status_reason(&pod, &st, tc->terminating, buf, sizeof(buf));
		if (strcmp(got, tc->want) != 0)
			fail_msg("%s: got %s, want %s", tc->name, got, tc->want);
	}
}

static void
test_age(void **state)
{
	static const struct {
		int64_t     s;
		const char *want;
	} cases[] = {
		{ -1, "<unknown>" },
		{ 0, "0s" },
		{ 59, "59s" },
		{ 119, "119s" },
		{ 192, "3m12s" },
		{ 900, "15m" },
		{ 4 * 3600 + 120, "4h2m" },
		{ 20 * 3600, "20h" },
		{ 3 * 86400 + 7200, "3d2h" },
		{ 30 * 86400, "30d" },
	};
	char   buf[32];
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
		assert_string_equal(ctl_format_age(cases[i].s, buf, sizeof(buf)), cases[i].want);
}

static void
test_error_line(void **state)
{
	yajl_gen g = json_gen_new(0);
	char    *s;

	(void)state;
	ctl_gen_error(g, "bad \"thing\"");
	s = json_gen_take(g, NULL);
	assert_string_equal(s, "{\"v\":1,\"ok\":false,\"error\":\"bad \\\"thing\\\"\"}");
	free(s);
	yajl_gen_free(g);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_parse_request),
		cmocka_unit_test(test_parse_oversized),
		cmocka_unit_test(test_status_reason),
		cmocka_unit_test(test_age),
		cmocka_unit_test(test_error_line),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
