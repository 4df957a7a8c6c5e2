/* test_patch.c — strategic-merge patch generation: scalars, nested objects, lists merged by
 * key (conditions by type, podIPs by ip) with $setElementOrder and $patch: delete, atomic
 * lists (container statuses), the uid precondition. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "logic/patch.h"
#include "logic/podstatus.h"
#include "core/util.h"

struct patch_case {
	const char *name;
	const char *old, *nw;
	const char *want; /* NULL: no change */
};

static const struct patch_case cases[] = {
	{ "identical_documents_no_patch",
	    "{\"status\":{\"phase\":\"Running\",\"conditions\":[{\"type\":\"Ready\",\"status\":\"True\"}]}}",
	    "{\"status\":{\"conditions\":[{\"status\":\"True\",\"type\":\"Ready\"}],\"phase\":\"Running\"}}",
	    NULL },
	{ "scalar_changed", "{\"status\":{\"phase\":\"Pending\",\"hostIP\":\"1.2.3.4\"}}",
	    "{\"status\":{\"phase\":\"Running\",\"hostIP\":\"1.2.3.4\"}}",
	    "{\"status\":{\"phase\":\"Running\"}}" },
	{ "field_removed_becomes_null", "{\"status\":{\"phase\":\"Running\",\"reason\":\"X\"}}",
	    "{\"status\":{\"phase\":\"Running\"}}", "{\"status\":{\"reason\":null}}" },
	{ "field_added", "{\"status\":{\"phase\":\"Running\"}}",
	    "{\"status\":{\"phase\":\"Running\",\"podIP\":\"10.0.0.5\"}}",
	    "{\"status\":{\"podIP\":\"10.0.0.5\"}}" },
	{ "number_and_bool_changed", "{\"a\":1,\"b\":true,\"c\":null}",
	    "{\"a\":2,\"b\":false,\"c\":null}", "{\"a\":2,\"b\":false}" },
	{ "nested_object_only_changed_leaf", "{\"status\":{\"x\":{\"y\":{\"z\":1,\"w\":2}}}}",
	    "{\"status\":{\"x\":{\"y\":{\"z\":1,\"w\":3}}}}",
	    "{\"status\":{\"x\":{\"y\":{\"w\":3}}}}" },
	{ "condition_status_changed_merged_by_type",
	    "{\"status\":{\"conditions\":[{\"type\":\"Initialized\",\"status\":\"True\"},"
	    "{\"type\":\"Ready\",\"status\":\"False\",\"reason\":\"ContainersNotReady\","
	    "\"lastTransitionTime\":\"2024-01-01T00:00:00Z\"}]}}",
	    "{\"status\":{\"conditions\":[{\"type\":\"Initialized\",\"status\":\"True\"},"
	    "{\"type\":\"Ready\",\"status\":\"True\","
	    "\"lastTransitionTime\":\"2024-01-01T00:01:00Z\"}]}}",
	    "{\"status\":{\"$setElementOrder/conditions\":[{\"type\":\"Initialized\"},{\"type\":\"Ready\"}],"
	    "\"conditions\":[{\"lastTransitionTime\":\"2024-01-01T00:01:00Z\",\"reason\":null,"
	    "\"status\":\"True\",\"type\":\"Ready\"}]}}" },
	{ "condition_added",
	    "{\"status\":{\"conditions\":[{\"type\":\"PodScheduled\",\"status\":\"True\"}]}}",
	    "{\"status\":{\"conditions\":[{\"type\":\"PodScheduled\",\"status\":\"True\"},"
	    "{\"type\":\"Ready\",\"status\":\"True\"}]}}",
	    "{\"status\":{\"$setElementOrder/conditions\":[{\"type\":\"PodScheduled\"},{\"type\":\"Ready\"}],"
	    "\"conditions\":[{\"status\":\"True\",\"type\":\"Ready\"}]}}" },
	{ "condition_removed_patch_delete",
	    "{\"status\":{\"conditions\":[{\"type\":\"PodScheduled\",\"status\":\"True\"},"
	    "{\"type\":\"Old\",\"status\":\"True\"}]}}",
	    "{\"status\":{\"conditions\":[{\"type\":\"PodScheduled\",\"status\":\"True\"}]}}",
	    "{\"status\":{\"$setElementOrder/conditions\":[{\"type\":\"PodScheduled\"}],"
	    "\"conditions\":[{\"$patch\":\"delete\",\"type\":\"Old\"}]}}" },
	{ "conditions_reordered_only_order_sent",
	    "{\"status\":{\"conditions\":[{\"type\":\"A\",\"status\":\"True\"},{\"type\":\"B\",\"status\":\"True\"}]}}",
	    "{\"status\":{\"conditions\":[{\"type\":\"B\",\"status\":\"True\"},{\"type\":\"A\",\"status\":\"True\"}]}}",
	    "{\"status\":{\"$setElementOrder/conditions\":[{\"type\":\"B\"},{\"type\":\"A\"}]}}" },
	{ "pod_ips_merged_by_ip", "{\"status\":{\"podIPs\":[{\"ip\":\"10.0.0.5\"}]}}",
	    "{\"status\":{\"podIPs\":[{\"ip\":\"10.0.0.5\"},{\"ip\":\"fd00::5\"}]}}",
	    "{\"status\":{\"$setElementOrder/podIPs\":[{\"ip\":\"10.0.0.5\"},{\"ip\":\"fd00::5\"}],"
	    "\"podIPs\":[{\"ip\":\"fd00::5\"}]}}" },
	{ "container_statuses_atomic_whole_list",
	    "{\"status\":{\"containerStatuses\":[{\"name\":\"a\",\"ready\":false,\"restartCount\":0},"
	    "{\"name\":\"b\",\"ready\":true,\"restartCount\":0}]}}",
	    "{\"status\":{\"containerStatuses\":[{\"name\":\"a\",\"ready\":true,\"restartCount\":0},"
	    "{\"name\":\"b\",\"ready\":true,\"restartCount\":0}]}}",
	    "{\"status\":{\"containerStatuses\":[{\"name\":\"a\",\"ready\":true,\"restartCount\":0},"
	    "{\"name\":\"b\",\"ready\":true,\"restartCount\":0}]}}" },
	{ "init_container_statuses_atomic",
	    "{\"status\":{\"initContainerStatuses\":[{\"name\":\"i\",\"ready\":false}]}}",
	    "{\"status\":{\"initContainerStatuses\":[{\"name\":\"i\",\"ready\":true}]}}",
	    "{\"status\":{\"initContainerStatuses\":[{\"name\":\"i\",\"ready\":true}]}}" },
	{ "list_outside_known_paths_atomic",
	    "{\"spec\":{\"conditions\":[{\"type\":\"A\",\"status\":\"True\"}]}}",
	    "{\"spec\":{\"conditions\":[{\"type\":\"A\",\"status\":\"False\"}]}}",
	    "{\"spec\":{\"conditions\":[{\"status\":\"False\",\"type\":\"A\"}]}}" },
	{ "keyed_list_without_keys_atomic", "{\"status\":{\"conditions\":[{\"status\":\"True\"}]}}",
	    "{\"status\":{\"conditions\":[{\"status\":\"False\"}]}}",
	    "{\"status\":{\"conditions\":[{\"status\":\"False\"}]}}" },
	{ "list_appears_sent_whole", "{\"status\":{\"phase\":\"Pending\"}}",
	    "{\"status\":{\"phase\":\"Pending\",\"conditions\":[{\"type\":\"A\",\"status\":\"True\"}]}}",
	    "{\"status\":{\"conditions\":[{\"status\":\"True\",\"type\":\"A\"}]}}" },
	{ "list_disappears_null", "{\"status\":{\"podIPs\":[{\"ip\":\"10.0.0.5\"}]}}",
	    "{\"status\":{}}", "{\"status\":{\"podIPs\":null}}" },
	{ "metadata_uid_precondition", "{\"status\":{\"phase\":\"Pending\"}}",
	    "{\"metadata\":{\"uid\":\"u-1\"},\"status\":{\"phase\":\"Running\"}}",
	    "{\"metadata\":{\"uid\":\"u-1\"},\"status\":{\"phase\":\"Running\"}}" },
	{ "strings_with_escapes", "{\"status\":{\"message\":\"a\"}}",
	    "{\"status\":{\"message\":\"quote \\\" and \\n newline\"}}",
	    "{\"status\":{\"message\":\"quote \\\" and \\n newline\"}}" },
};

static void
run_case(void **state)
{
	const struct patch_case *tc = *state;
	const char              *err = NULL;
	char                    *p = patch_two_way_json(tc->old, tc->nw, &err);

	assert_null(err);
	if (tc->want == NULL) {
		assert_null(p);
		return;
	}
	assert_non_null(p);
	assert_string_equal(p, tc->want);
	free(p);
}

static void
test_bad_json(void **state)
{
	const char *err = NULL;

	(void)state;
	assert_null(patch_two_way_json("{", "{}", &err));
	assert_non_null(err);
	assert_null(patch_two_way_json("{}", "[1]", &err));
	assert_non_null(err);
	assert_null(patch_two_way_json("{}", "{}", &err));
	assert_null(err);
}

static void
add_cond(struct pod_status *s, const char *type, enum cond_status st, int64_t t)
{
	s->conditions = xreallocarray(s->conditions, s->nconditions + 1, sizeof(*s->conditions));
	memset(&s->conditions[s->nconditions], 0, sizeof(*s->conditions));
	s->conditions[s->nconditions].type = xstrdup(type);
	s->conditions[s->nconditions].status = st;
	s->conditions[s->nconditions].last_transition_time = t;
	s->nconditions++;
}

static void
test_pod_status_patch(void **state)
{
	struct pod_status a, b;
	char             *p;

	(void)state;
	memset(&a, 0, sizeof(a));
	a.phase = PHASE_RUNNING;
	add_cond(&a, "Ready", COND_TRUE, 1700000000);
	a.statuses = xcalloc(1, sizeof(*a.statuses));
	a.nstatuses = 1;
	a.statuses[0].name = xstrdup("web");
	a.statuses[0].state.kind = CSTATE_RUNNING;
	a.statuses[0].ready = 1;
	podstatus_copy(&b, &a);

	/* unchanged: nothing to send */
	assert_null(patch_pod_status("uid-1", &a, &b));

	/* nothing acknowledged yet: everything, with the uid */
	p = patch_pod_status("uid-1", NULL, &b);
	assert_non_null(p);
	assert_non_null(strstr(p, "{\"metadata\":{\"uid\":\"uid-1\"},\"status\":{"));
	assert_non_null(strstr(p, "\"phase\":\"Running\""));
	free(p);

	/* the container exits and the pod completes */
	b.phase = PHASE_SUCCEEDED;
	b.conditions[0].status = COND_FALSE;
	b.conditions[0].last_transition_time = 1700000060;
	b.conditions[0].reason = xstrdup("PodCompleted");
	b.statuses[0].state.kind = CSTATE_TERMINATED;
	b.statuses[0].state.reason = xstrdup("Completed");
	b.statuses[0].ready = 0;
	p = patch_pod_status("uid-\"1", &a, &b);
	assert_non_null(p);
	assert_string_equal(p,
	    "{\"metadata\":{\"uid\":\"uid-\\\"1\"},\"status\":{"
	    "\"$setElementOrder/conditions\":[{\"type\":\"Ready\"}],"
	    "\"conditions\":[{\"lastTransitionTime\":\"2023-11-14T22:14:20Z\","
	    "\"reason\":\"PodCompleted\",\"status\":\"False\",\"type\":\"Ready\"}],"
	    "\"containerStatuses\":[{\"image\":\"\",\"imageID\":\"\",\"lastState\":{},"
	    "\"name\":\"web\",\"ready\":false,\"restartCount\":0,\"state\":{\"terminated\":"
	    "{\"exitCode\":0,\"finishedAt\":null,\"reason\":\"Completed\",\"startedAt\":null}}}],"
	    "\"phase\":\"Succeeded\"}}");
	free(p);
	pod_status_clear(&a);
	pod_status_clear(&b);
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
	t[i++] = (struct CMUnitTest)cmocka_unit_test(test_bad_json);
	t[i++] = (struct CMUnitTest)cmocka_unit_test(test_pod_status_patch);
	return _cmocka_run_group_tests("patch", t, i, NULL, NULL);
}
