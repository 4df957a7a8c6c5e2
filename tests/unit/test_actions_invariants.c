/* test_actions_invariants.c — many generated pods and runtime states (fixed seed): the
 * decisions and statuses must keep their invariants, and never crash or leak. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>
#include <yajl/yajl_tree.h>

#include "logic_fixture.h"
#include "logic/patch.h"
#include "logic/podstatus.h"

/* KLET_INVARIANT_ROUNDS=N runs more. */
#define ROUNDS 300

static uint32_t seed = 12345;

static uint32_t
rnd(uint32_t n)
{
	seed = seed * 1103515245u + 12345u;
	return (seed >> 16) % n;
}

static void
gen_case(char *apps, char *inits, char *sb, char *conts, char *probes, size_t len,
    enum restart_policy *pol)
{
	static const char *const app_names[] = { "a", "b", "c" };
	static const char *const init_names[] = { "i", "j" };
	static const char *const flags[] = { "", ":L", ":S", ":R", ":LRS" };
	static const char        states[] = "rceu";
	size_t                   i, na = 1 + rnd(3), ni = rnd(3), nc;

	*pol = (enum restart_policy)rnd(3);
	apps[0] = inits[0] = conts[0] = probes[0] = '\0';
	for (i = 0; i < na; i++)
		snprintf(apps + strlen(apps), len - strlen(apps), "%s%s%s", i ? " " : "",
		    app_names[i], flags[rnd(5)]);
	for (i = 0; i < ni; i++)
		snprintf(inits + strlen(inits), len - strlen(inits), "%s%s%s", i ? " " : "",
		    init_names[i], rnd(2) ? ":r" : (rnd(2) ? ":rS" : ""));
	switch (rnd(6)) {
	case 0:
		strcpy(sb, "-");
		break;
	case 1:
		strcpy(sb, "sb1,N,P,10.0.0.5,1");
		break;
	case 2:
		strcpy(sb, "sb2,R,P,10.0.0.6,2;sb1,R,P,10.0.0.5,1");
		break;
	case 3:
		strcpy(sb, "sb1,R,P,-,0");
		break;
	default:
		strcpy(sb, "sb1,R,P,10.0.0.5,0");
		break;
	}
	nc = rnd(6);
	for (i = 0; i < nc; i++) {
		const char *name = rnd(3) ? app_names[rnd((uint32_t)na)]
		                          : (ni ? init_names[rnd((uint32_t)ni)] : "a");
		char        st = states[rnd(4)];

		snprintf(conts + strlen(conts), len - strlen(conts), "%s%s,%c,%d%s", i ? ";" : "",
		    name, st, rnd(2) ? 0 : 1, rnd(5) == 0 ? ",H" : (rnd(7) == 0 ? ",O" : ""));
		if (rnd(2))
			snprintf(probes + strlen(probes), len - strlen(probes), "%s%s,%c,%c,%c",
			    probes[0] ? ";" : "", name, "-SF"[rnd(3)], "-SF"[rnd(3)],
			    "-SF"[rnd(3)]);
	}
}

static int
has_dup(const size_t *v, size_t n)
{
	size_t i, j;

	for (i = 0; i < n; i++)
		for (j = i + 1; j < n; j++)
			if (v[i] == v[j])
				return 1;
	return 0;
}

static void
check_actions(const struct pod *p, const struct pod_actions *a, const char *what)
{
	size_t i;

	for (i = 0; i < a->nstart; i++)
		if (a->start[i] >= p->ncontainers)
			fail_msg("%s: start index out of range", what);
	for (i = 0; i < a->ninit_start; i++)
		if (a->init_start[i] >= p->ninit_containers)
			fail_msg("%s: init index out of range", what);
	for (i = 1; i < a->ninit_start; i++)
		if (a->init_start[i] <= a->init_start[i - 1])
			fail_msg("%s: init containers not in spec order", what);
	if (has_dup(a->start, a->nstart))
		fail_msg("%s: duplicate start", what);
	if (a->create_sandbox && !a->kill_pod)
		fail_msg("%s: new sandbox without killing the pod", what);
	if (a->kill_pod && !a->create_sandbox && (a->nstart || a->ninit_start))
		fail_msg("%s: killing the pod for good yet starting containers", what);
	if (a->create_sandbox && a->nstart && a->ninit_start)
		fail_msg("%s: new sandbox starts both init and app containers", what);
	if (a->create_sandbox && a->nephemeral_start)
		fail_msg("%s: ephemeral containers in a new sandbox", what);
	for (i = 0; i < a->nkill; i++)
		if (a->kill[i].message == NULL || a->kill[i].container_id[0] == '\0')
			fail_msg("%s: kill entry without message or id", what);
	if (a->next_init != (a->ninit_start ? (long)a->init_start[0] : -1))
		fail_msg("%s: next_init", what);
}

static void
check_status(const struct pod *p, const struct pod_status *s, const char *what)
{
	static const char *const owned[] = { "PodReadyToStartContainers", "Initialized", "Ready",
		"ContainersReady", "PodScheduled" };
	size_t                   i, j, n;
	char                    *json;
	yajl_val                 v;

	if (s->nstatuses != p->ncontainers || s->ninit_statuses != p->ninit_containers)
		fail_msg("%s: status counts", what);
	for (i = 1; i < s->nstatuses; i++)
		if (strcmp(s->statuses[i - 1].name, s->statuses[i].name) >= 0)
			fail_msg("%s: statuses not sorted", what);
	for (i = 0; i < nitems(owned); i++) {
		for (n = 0, j = 0; j < s->nconditions; j++)
			n += strcmp(s->conditions[j].type, owned[i]) == 0;
		if (n != 1)
			fail_msg("%s: condition %s appears %zu times", what, owned[i], n);
	}
	if ((s->phase == PHASE_SUCCEEDED || s->phase == PHASE_FAILED) &&
	    podstatus_find_condition(s, "Ready")->status == COND_TRUE)
		fail_msg("%s: ready in a terminal phase", what);
	for (i = 0; i < s->nstatuses; i++)
		if (s->statuses[i].ready && s->statuses[i].state.kind != CSTATE_RUNNING)
			fail_msg("%s: ready but not running", what);
	json = podstatus_to_json_string(s);
	v = yajl_tree_parse(json, NULL, 0);
	if (!YAJL_IS_OBJECT(v))
		fail_msg("%s: status JSON does not parse: %s", what, json);
	yajl_tree_free(v);
	{
		/* what the API server echoes back decodes to the same status */
		char       *doc = xsprintf("{\"metadata\":{\"name\":\"web\",\"uid\":\"uid-1\"},"
		                                 "\"status\":%s}",
		          json);
		char        err[256];
		struct pod *back = pod_from_json(doc, strlen(doc), err, sizeof(err));

		if (back == NULL)
			fail_msg("%s: status does not decode: %s", what, err);
		if (!podstatus_equal(&back->status, s)) {
			char *again = podstatus_to_json_string(&back->status);

			fail_msg("%s: status changes through the API:\n%s\n%s", what, json, again);
		}
		pod_unref(back);
		free(doc);
	}
	free(json);
}

static void
test_invariants(void **state)
{
	char        apps[128], inits[64], sb[64], conts[256], probes[256], what[900];
	size_t      round, rounds = ROUNDS;
	const char *env = getenv("KLET_INVARIANT_ROUNDS");

	(void)state;
	if (env != NULL && atoi(env) > 0)
		rounds = (size_t)atoi(env);
	for (round = 0; round < rounds; round++) {
		enum restart_policy    pol;
		struct pod            *p;
		struct rt_pod_status   rt;
		struct probe_set       ps;
		struct pod_actions     a;
		struct podstatus_input in;
		struct pod_status      s1, s2;
		char                  *patch;

		gen_case(apps, inits, sb, conts, probes, sizeof(conts), &pol);
		snprintf(what, sizeof(what),
		    "round %zu pol=%d apps=[%s] inits=[%s] sb=[%s] "
		    "conts=[%s] probes=[%s]",
		    round, pol, apps, inits, sb, conts, probes);
		p = fx_pod(pol, apps, inits[0] ? inits : NULL, rnd(4) == 0 ? "dbg" : NULL);
		p->deletion_ts = rnd(10) == 0 ? 1 : 0;
		fx_rt(p, sb, conts, &rt);
		fx_probes(&rt, probes, &ps);

		pod_actions_compute(p, &rt, &ps, &a);
		check_actions(p, &a, what);
		pod_actions_clear(&a);

		memset(&in, 0, sizeof(in));
		in.pod = p;
		in.rt = &rt;
		in.probes = &ps;
		in.host_ip = "192.168.1.10";
		in.runtime_name = "containerd";
		in.now = 1700000000;
		in.pod_is_terminal = pod_is_terminal(p, &rt);
		podstatus_generate(&in, &s1);
		check_status(p, &s1, what);

		/* a second generation over the first is stable: no patch to send */
		in.old = &s1;
		in.now = 1700000100;
		podstatus_generate(&in, &s2);
		patch = patch_pod_status(p->uid, &s1, &s2);
		if (patch != NULL)
			fail_msg("%s: unstable status, patch %s", what, patch);
		pod_status_clear(&s2);
		pod_status_clear(&s1);
		free((void *)ps.v);
		rt_pod_status_clear(&rt);
		pod_unref(p);
	}
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_invariants),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
