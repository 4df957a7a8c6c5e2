/* test_actions.c — computePodActions table: sandbox (re)creation, restart policies, init
 * containers, sidecars, probes, spec hashes, ephemeral containers; plus its helpers. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "logic/actions.h"
#include "logic_fixture.h"

#define ALWAYS RESTART_ALWAYS
#define ONFAIL RESTART_ON_FAILURE
#define NEVER  RESTART_NEVER

struct act_case {
	const char         *name;
	enum restart_policy pol;
	int                 hostnet;
	int                 deleting;
	const char         *apps, *inits, *ephem;
	const char         *sb;    /* fixture sandboxes (NULL: one ready) */
	const char         *conts; /* fixture runtime containers */
	const char         *probes;
	/* expected */
	int              kill_pod, create;
	unsigned         attempt;
	const char      *sbid;                      /* NULL: not checked; "-": no sandbox id */
	const char      *init, *start, *kill, *eph; /* names, "," separated; NULL: none */
	enum kill_reason reason;                    /* of the first kill entry */
	const char      *msg;                       /* substring of the first kill message */
};

static const struct act_case cases[] = {
	/* ---- sandbox (re)creation ---- */
	{ .name = "no_sandbox_starts_all_app_containers",
	    .apps = "a b",
	    .sb = "-",
	    .kill_pod = 1,
	    .create = 1,
	    .attempt = 0,
	    .sbid = "-",
	    .start = "a,b" },
	{ .name = "no_sandbox_with_init_starts_first_init_only",
	    .apps = "a",
	    .inits = "i1 i2",
	    .sb = "-",
	    .kill_pod = 1,
	    .create = 1,
	    .init = "i1" },
	{ .name = "sandbox_not_ready_recreated_attempt_plus_one",
	    .apps = "a",
	    .sb = "sb1,N,P,10.0.0.5,2",
	    .conts = "a,e,137",
	    .kill_pod = 1,
	    .create = 1,
	    .attempt = 3,
	    .sbid = "sb1",
	    .start = "a" },
	{ .name = "two_ready_sandboxes_reconciled_by_recreation",
	    .apps = "a",
	    .sb = "sb2,R,P,10.0.0.6,1;sb1,R,P,10.0.0.5,0",
	    .conts = "a,r,0",
	    .kill_pod = 1,
	    .create = 1,
	    .attempt = 2,
	    .sbid = "sb2",
	    .start = "a" },
	{ .name = "one_ready_one_old_notready_sandbox_kept",
	    .apps = "a",
	    .sb = "sb2,R,P,10.0.0.6,1;sb1,N,P,10.0.0.5,0",
	    .conts = "a,r,0",
	    .attempt = 1,
	    .sbid = "sb2" },
	{ .name = "network_namespace_changed_pod_to_host",
	    .hostnet = 1,
	    .apps = "a",
	    .sb = "sb1,R,P,10.0.0.5,0",
	    .conts = "a,r,0",
	    .kill_pod = 1,
	    .create = 1,
	    .attempt = 1,
	    .sbid = "-",
	    .start = "a" },
	{ .name = "network_namespace_changed_host_to_pod",
	    .apps = "a",
	    .sb = "sb1,R,H,10.0.0.5,4",
	    .conts = "a,r,0",
	    .kill_pod = 1,
	    .create = 1,
	    .attempt = 5,
	    .sbid = "-",
	    .start = "a" },
	{ .name = "no_ip_for_pod_network_sandbox_recreated",
	    .apps = "a",
	    .sb = "sb1,R,P,-,0",
	    .conts = "a,r,0",
	    .kill_pod = 1,
	    .create = 1,
	    .attempt = 1,
	    .sbid = "sb1",
	    .start = "a" },
	{ .name = "host_network_sandbox_without_ip_is_fine",
	    .hostnet = 1,
	    .apps = "a",
	    .sb = "sb1,R,H,-,0",
	    .conts = "a,r,0",
	    .sbid = "sb1" },
	{ .name = "never_pod_that_ran_gets_no_new_sandbox",
	    .pol = NEVER,
	    .apps = "a",
	    .sb = "sb1,N,P,10.0.0.5,0",
	    .conts = "a,e,0",
	    .kill_pod = 1,
	    .create = 0,
	    .attempt = 1 },
	{ .name = "never_pod_failed_gets_no_new_sandbox",
	    .pol = NEVER,
	    .apps = "a b",
	    .sb = "sb1,N,P,10.0.0.5,0",
	    .conts = "a,e,1;b,r,0",
	    .kill_pod = 1,
	    .create = 0 },
	{ .name = "never_pod_nothing_ran_yet_sandbox_recreated",
	    .pol = NEVER,
	    .apps = "a",
	    .sb = "sb1,N,P,10.0.0.5,0",
	    .kill_pod = 1,
	    .create = 1,
	    .attempt = 1,
	    .start = "a" },
	{ .name = "onfailure_all_succeeded_no_new_sandbox",
	    .pol = ONFAIL,
	    .apps = "a b",
	    .sb = "sb1,N,P,10.0.0.5,0",
	    .conts = "a,e,0;b,e,0",
	    .kill_pod = 1,
	    .create = 0 },
	{ .name = "onfailure_sandbox_recreated_only_failed_restarted",
	    .pol = ONFAIL,
	    .apps = "a b",
	    .sb = "sb1,N,P,10.0.0.5,0",
	    .conts = "a,e,0;b,e,1",
	    .kill_pod = 1,
	    .create = 1,
	    .attempt = 1,
	    .start = "b" },
	{ .name = "always_sandbox_recreated_all_restarted",
	    .apps = "a b",
	    .sb = "sb1,N,P,10.0.0.5,0",
	    .conts = "a,e,0;b,e,1",
	    .kill_pod = 1,
	    .create = 1,
	    .attempt = 1,
	    .start = "a,b" },
	{ .name = "sandbox_recreated_starts_over_with_first_init",
	    .apps = "a",
	    .inits = "i1 i2",
	    .sb = "sb1,N,P,10.0.0.5,0",
	    .conts = "a,e,1;i2,e,0;i1,e,0",
	    .kill_pod = 1,
	    .create = 1,
	    .attempt = 1,
	    .init = "i1" },
	{ .name = "onfailure_initialized_and_succeeded_no_new_sandbox",
	    .pol = ONFAIL,
	    .apps = "a",
	    .inits = "i1",
	    .sb = "sb1,N,P,10.0.0.5,0",
	    .conts = "a,e,0;i1,e,0",
	    .kill_pod = 1,
	    .create = 0 },
	{ .name = "onfailure_init_unfinished_sandbox_recreated",
	    .pol = ONFAIL,
	    .apps = "a",
	    .inits = "i1",
	    .sb = "sb1,N,P,10.0.0.5,0",
	    .conts = "i1,e,1",
	    .kill_pod = 1,
	    .create = 1,
	    .attempt = 1,
	    .init = "i1" },
	{ .name = "sandbox_recreation_skips_ephemeral",
	    .apps = "a",
	    .ephem = "dbg",
	    .sb = "sb1,N,P,10.0.0.5,0",
	    .conts = "a,e,1",
	    .kill_pod = 1,
	    .create = 1,
	    .attempt = 1,
	    .start = "a" },

	/* ---- app containers and restart policy ---- */
	{ .name = "all_running_nothing_to_do",
	    .apps = "a b",
	    .conts = "a,r,0;b,r,0",
	    .sbid = "sb1" },
	{ .name = "missing_container_started", .apps = "a b", .conts = "a,r,0", .start = "b" },
	{ .name = "always_succeeded_container_restarted",
	    .apps = "a",
	    .conts = "a,e,0",
	    .start = "a" },
	{ .name = "always_failed_container_restarted",
	    .apps = "a",
	    .conts = "a,e,2",
	    .start = "a" },
	{ .name = "onfailure_succeeded_not_restarted_pod_killed",
	    .pol = ONFAIL,
	    .apps = "a",
	    .conts = "a,e,0",
	    .kill_pod = 1 },
	{ .name = "onfailure_failed_restarted",
	    .pol = ONFAIL,
	    .apps = "a",
	    .conts = "a,e,1",
	    .start = "a" },
	{ .name = "onfailure_one_succeeded_one_running_kept",
	    .pol = ONFAIL,
	    .apps = "a b",
	    .conts = "a,e,0;b,r,0" },
	{ .name = "never_failed_not_restarted_pod_killed",
	    .pol = NEVER,
	    .apps = "a",
	    .conts = "a,e,1",
	    .kill_pod = 1 },
	{ .name = "never_one_running_one_exited_kept",
	    .pol = NEVER,
	    .apps = "a b",
	    .conts = "a,r,0;b,e,0" },
	{ .name = "never_all_exited_pod_killed",
	    .pol = NEVER,
	    .apps = "a b",
	    .conts = "a,e,0;b,e,1",
	    .kill_pod = 1 },
	{ .name = "created_but_not_started_is_started",
	    .pol = NEVER,
	    .apps = "a",
	    .conts = "a,c,0",
	    .start = "a" },
	{ .name = "unknown_state_killed_before_restart",
	    .apps = "a",
	    .conts = "a,u,0",
	    .start = "a",
	    .kill = "a",
	    .reason = KILL_REASON_UNKNOWN,
	    .msg = "Container is in \"unknown\" state, try killing it before restart" },
	{ .name = "unknown_state_restarted_even_under_never",
	    .pol = NEVER,
	    .apps = "a",
	    .conts = "a,u,0",
	    .start = "a",
	    .kill = "a",
	    .reason = KILL_REASON_UNKNOWN },
	{ .name = "deleted_pod_exited_container_not_restarted",
	    .deleting = 1,
	    .apps = "a",
	    .conts = "a,e,1",
	    .kill_pod = 1 },
	{ .name = "deleted_pod_running_container_kept",
	    .deleting = 1,
	    .apps = "a b",
	    .conts = "a,r,0;b,e,1" },
	{ .name = "newest_instance_decides", .apps = "a", .conts = "a,r,0;a,e,1" },
	{ .name = "spec_hash_changed_killed_and_restarted",
	    .apps = "a b",
	    .conts = "a,r,0,H;b,r,0",
	    .start = "a",
	    .kill = "a",
	    .reason = KILL_REASON_NONE,
	    .msg = "Container a definition changed, will be restarted" },
	{ .name = "spec_hash_changed_restarted_even_under_never",
	    .pol = NEVER,
	    .apps = "a",
	    .conts = "a,r,0,H",
	    .start = "a",
	    .kill = "a" },

	/* ---- probes ---- */
	{ .name = "liveness_failure_killed_and_restarted",
	    .apps = "a:L",
	    .conts = "a,r,0",
	    .probes = "a,F,-,-",
	    .start = "a",
	    .kill = "a",
	    .reason = KILL_REASON_LIVENESS,
	    .msg = "Container a failed liveness probe, will be restarted" },
	{ .name = "liveness_failure_never_killed_not_restarted",
	    .pol = NEVER,
	    .apps = "a:L",
	    .conts = "a,r,0",
	    .probes = "a,F,-,-",
	    .kill_pod = 1,
	    .kill = "a",
	    .reason = KILL_REASON_LIVENESS,
	    .msg = "Container a failed liveness probe" },
	{ .name = "liveness_failure_never_other_container_keeps_pod",
	    .pol = NEVER,
	    .apps = "a:L b",
	    .conts = "a,r,0;b,r,0",
	    .probes = "a,F,-,-",
	    .kill = "a",
	    .reason = KILL_REASON_LIVENESS },
	{ .name = "startup_failure_killed_and_restarted",
	    .apps = "a:S",
	    .conts = "a,r,0",
	    .probes = "a,-,-,F",
	    .start = "a",
	    .kill = "a",
	    .reason = KILL_REASON_STARTUP,
	    .msg = "Container a failed startup probe, will be restarted" },
	{ .name = "probes_succeeding_container_kept",
	    .apps = "a:LRS",
	    .conts = "a,r,0",
	    .probes = "a,S,S,S" },
	{ .name = "readiness_failure_never_kills",
	    .apps = "a:R",
	    .conts = "a,r,0",
	    .probes = "a,-,F,-" },
	{ .name = "hash_change_wins_over_liveness",
	    .apps = "a:L",
	    .conts = "a,r,0,H",
	    .probes = "a,F,-,-",
	    .start = "a",
	    .kill = "a",
	    .reason = KILL_REASON_NONE,
	    .msg = "definition changed" },

	/* ---- classic init containers ---- */
	{ .name = "init_first_one_started", .apps = "a", .inits = "i1 i2", .init = "i1" },
	{ .name = "init_running_waits", .apps = "a", .inits = "i1 i2", .conts = "i1,r,0" },
	{ .name = "init_done_starts_next",
	    .apps = "a",
	    .inits = "i1 i2",
	    .conts = "i1,e,0",
	    .init = "i2" },
	{ .name = "init_all_done_starts_app_containers",
	    .apps = "a b",
	    .inits = "i1 i2",
	    .conts = "i2,e,0;i1,e,0",
	    .start = "a,b" },
	{ .name = "init_failed_always_restarts_it",
	    .apps = "a",
	    .inits = "i1 i2",
	    .conts = "i2,e,1;i1,e,0",
	    .init = "i2" },
	{ .name = "init_failed_onfailure_restarts_it",
	    .pol = ONFAIL,
	    .apps = "a",
	    .inits = "i1",
	    .conts = "i1,e,3",
	    .init = "i1" },
	{ .name = "init_failed_never_kills_pod",
	    .pol = NEVER,
	    .apps = "a",
	    .inits = "i1 i2",
	    .conts = "i1,e,1",
	    .kill_pod = 1 },
	{ .name = "init_oomkilled_exit0_never_kills_pod",
	    .pol = NEVER,
	    .apps = "a",
	    .inits = "i1",
	    .conts = "i1,e,0,O",
	    .kill_pod = 1 },
	{ .name = "init_unknown_killed_before_restart",
	    .apps = "a",
	    .inits = "i1",
	    .conts = "i1,u,0",
	    .init = "i1",
	    .kill = "i1",
	    .reason = KILL_REASON_UNKNOWN,
	    .msg = "Init container is in \"unknown\" state" },
	{ .name = "init_unknown_never_kills_pod",
	    .pol = NEVER,
	    .apps = "a",
	    .inits = "i1",
	    .conts = "i1,u,0",
	    .kill_pod = 1 },
	{ .name = "init_created_not_started_restarted",
	    .apps = "a",
	    .inits = "i1",
	    .conts = "i1,c,0",
	    .init = "i1" },
	{ .name = "init_removed_after_app_running_not_rerun",
	    .apps = "a",
	    .inits = "i1 i2",
	    .conts = "a,r,0" },
	{ .name = "init_only_last_status_counts_when_earlier_gone",
	    .apps = "a",
	    .inits = "i1 i2",
	    .conts = "i2,e,0",
	    .start = "a" },
	{ .name = "init_done_app_failed_restarts_app_not_init",
	    .apps = "a",
	    .inits = "i1",
	    .conts = "a,e,1;i1,e,0",
	    .start = "a" },

	/* ---- sidecars (init containers with restartPolicy Always) ---- */
	{ .name = "sidecar_first_started", .apps = "a", .inits = "s:r", .init = "s" },
	{ .name = "sidecar_running_next_init_started",
	    .apps = "a",
	    .inits = "s:r i2",
	    .conts = "s,r,0",
	    .init = "i2" },
	{ .name = "sidecar_running_last_apps_started",
	    .apps = "a",
	    .inits = "i1 s:r",
	    .conts = "s,r,0;i1,e,0",
	    .start = "a" },
	{ .name = "sidecar_startup_not_probed_yet_waits",
	    .apps = "a",
	    .inits = "s:rS",
	    .conts = "s,r,0" },
	{ .name = "sidecar_started_apps_started",
	    .apps = "a",
	    .inits = "s:rS",
	    .conts = "s,r,0",
	    .probes = "s,-,-,S",
	    .start = "a" },
	{ .name = "sidecar_startup_failure_restarted",
	    .apps = "a",
	    .inits = "s:rS",
	    .conts = "s,r,0",
	    .probes = "s,-,-,F",
	    .init = "s",
	    .kill = "s",
	    .reason = KILL_REASON_STARTUP,
	    .msg = "Init container s failed startup probe" },
	{ .name = "sidecar_exited_restarted_while_apps_run",
	    .apps = "a",
	    .inits = "s:r",
	    .conts = "a,r,0;s,e,1",
	    .init = "s" },
	{ .name = "sidecar_liveness_failure_restarted",
	    .apps = "a",
	    .inits = "s:rL",
	    .conts = "a,r,0;s,r,0",
	    .probes = "s,F,-,-",
	    .init = "s",
	    .kill = "s",
	    .reason = KILL_REASON_LIVENESS,
	    .msg = "Init container s failed liveness probe" },
	{ .name = "sidecar_definition_changed_restarted",
	    .apps = "a",
	    .inits = "s:r",
	    .conts = "a,r,0;s,r,0,H",
	    .init = "s",
	    .kill = "s",
	    .msg = "Init container s definition changed" },
	{ .name = "sidecar_missing_after_init_restarted",
	    .apps = "a",
	    .inits = "i1 s:r",
	    .conts = "a,r,0",
	    .init = "s" },
	{ .name = "sidecar_unknown_killed_and_restarted",
	    .apps = "a",
	    .inits = "s:r",
	    .conts = "a,r,0;s,u,0",
	    .init = "s",
	    .kill = "s",
	    .reason = KILL_REASON_UNKNOWN },
	{ .name = "sidecars_both_exited_restarted_in_order",
	    .apps = "a",
	    .inits = "s1:r s2:r",
	    .conts = "a,r,0;s2,e,1;s1,e,1",
	    .init = "s1,s2" },
	{ .name = "sidecar_exited_before_next_init_restarted_too",
	    .apps = "a",
	    .inits = "s:r i2",
	    .conts = "i2,r,0;s,e,1",
	    .init = "s" },
	{ .name = "sidecar_does_not_keep_finished_pod_alive",
	    .pol = ONFAIL,
	    .apps = "a",
	    .inits = "s:r",
	    .conts = "a,e,0;s,r,0",
	    .kill_pod = 1 },
	{ .name = "sidecar_exited_never_policy_still_restarted",
	    .pol = NEVER,
	    .apps = "a",
	    .inits = "s:r",
	    .conts = "a,r,0;s,e,0",
	    .init = "s" },

	/* ---- ephemeral containers ---- */
	{ .name = "ephemeral_started_once",
	    .apps = "a",
	    .ephem = "dbg",
	    .conts = "a,r,0",
	    .eph = "dbg" },
	{ .name = "ephemeral_exited_never_restarted",
	    .apps = "a",
	    .ephem = "dbg",
	    .conts = "dbg,e,1;a,r,0" },
	{ .name = "ephemeral_started_during_initialization",
	    .apps = "a",
	    .inits = "i1",
	    .ephem = "dbg",
	    .conts = "i1,r,0",
	    .eph = "dbg" },
};

static void
names_of(const size_t *v, size_t n, const struct container *cs, char *buf, size_t len)
{
	size_t i, off = 0;

	buf[0] = '\0';
	for (i = 0; i < n; i++)
		off +=
		    (size_t)snprintf(buf + off, len - off, "%s%s", i ? "," : "", cs[v[i]].c_name);
}

static void
run_case(void **state)
{
	const struct act_case *tc = *state;
	struct pod            *p = fx_pod(tc->pol, tc->apps, tc->inits, tc->ephem);
	struct rt_pod_status   rt;
	struct probe_set       ps;
	struct pod_actions     a;
	char                   buf[256];
	size_t                 i, off = 0;

	p->host_network = tc->hostnet;
	p->deletion_ts = tc->deleting ? 1700000000 : 0;
	fx_rt(p, tc->sb, tc->conts, &rt);
	fx_probes(&rt, tc->probes, &ps);
	pod_actions_compute(p, &rt, &ps, &a);

	{
		char *s = pod_actions_format(p, &a);

		print_message("%s: %s\n", tc->name, s);
		free(s);
	}
	assert_int_equal(a.kill_pod, tc->kill_pod);
	assert_int_equal(a.create_sandbox, tc->create);
	if (tc->attempt != 0 || tc->create)
		assert_int_equal(a.attempt, tc->attempt);
	if (tc->sbid != NULL && strcmp(tc->sbid, "-") == 0)
		assert_null(a.sandbox_id);
	else if (tc->sbid != NULL)
		assert_string_equal(a.sandbox_id, tc->sbid);
	names_of(a.init_start, a.ninit_start, p->init_containers, buf, sizeof(buf));
	assert_string_equal(buf, tc->init ? tc->init : "");
	if (a.ninit_start)
		assert_int_equal(a.next_init, (long)a.init_start[0]);
	else
		assert_int_equal(a.next_init, -1);
	names_of(a.start, a.nstart, p->containers, buf, sizeof(buf));
	assert_string_equal(buf, tc->start ? tc->start : "");
	names_of(a.ephemeral_start, a.nephemeral_start, p->ephemeral_containers, buf, sizeof(buf));
	assert_string_equal(buf, tc->eph ? tc->eph : "");
	buf[0] = '\0';
	for (i = 0; i < a.nkill; i++)
		off += (size_t)snprintf(
		    buf + off, sizeof(buf) - off, "%s%s", i ? "," : "", a.kill[i].name);
	assert_string_equal(buf, tc->kill ? tc->kill : "");
	if (a.nkill > 0) {
		const struct rt_container *rc = rt_find_container(&rt, a.kill[0].name);

		assert_int_equal(a.kill[0].reason, tc->reason);
		assert_non_null(rc);
		assert_string_equal(a.kill[0].container_id, rc->id);
		if (tc->msg != NULL)
			assert_non_null(strstr(a.kill[0].message, tc->msg));
	}
	pod_actions_clear(&a);
	free((void *)ps.v);
	rt_pod_status_clear(&rt);
	pod_unref(p);
}

/* ---- helpers ---- */

struct restart_case {
	const char         *name;
	enum restart_policy pol;
	const char         *conts;
	int                 deleting;
	int                 want;
};

static const struct restart_case restart_cases[] = {
	{ "never_started_is_started", ALWAYS, "", 0, 1 },
	{ "running_is_not_restarted", ALWAYS, "a,r,0", 0, 0 },
	{ "created_is_restarted_under_never", NEVER, "a,c,0", 0, 1 },
	{ "unknown_is_restarted_under_never", NEVER, "a,u,0", 0, 1 },
	{ "exited_never", NEVER, "a,e,1", 0, 0 },
	{ "exited_0_onfailure", ONFAIL, "a,e,0", 0, 0 },
	{ "exited_1_onfailure", ONFAIL, "a,e,1", 0, 1 },
	{ "exited_0_always", ALWAYS, "a,e,0", 0, 1 },
	{ "deleting_pod_never_restarts", ALWAYS, "a,e,1", 1, 0 },
	{ "deleting_pod_does_not_start_new", ALWAYS, "", 1, 0 },
};

static void
test_should_restart(void **state)
{
	size_t i;

	(void)state;
	for (i = 0; i < nitems(restart_cases); i++) {
		const struct restart_case *tc = &restart_cases[i];
		struct pod                *p = fx_pod(tc->pol, "a", NULL, NULL);
		struct rt_pod_status       rt;

		p->deletion_ts = tc->deleting ? 1 : 0;
		fx_rt(p, NULL, tc->conts, &rt);
		if (container_should_restart(&p->containers[0], p, &rt) != tc->want)
			fail_msg("restart case %s: want %d", tc->name, tc->want);
		rt_pod_status_clear(&rt);
		pod_unref(p);
	}
}

struct terminal_case {
	const char         *name;
	enum restart_policy pol;
	const char         *inits;
	const char         *conts;
	int                 want;
	enum pod_phase      api_phase;
};

static const struct terminal_case terminal_cases[] = {
	{ "always_never_terminal", ALWAYS, NULL, "a,e,0;b,e,0", 0, PHASE_PENDING },
	{ "never_all_exited", NEVER, NULL, "a,e,0;b,e,1", 1, PHASE_PENDING },
	{ "never_one_running", NEVER, NULL, "a,r,0;b,e,1", 0, PHASE_PENDING },
	{ "never_one_missing", NEVER, NULL, "a,e,0", 0, PHASE_PENDING },
	{ "onfailure_all_succeeded", ONFAIL, NULL, "a,e,0;b,e,0", 1, PHASE_PENDING },
	{ "onfailure_one_failed", ONFAIL, NULL, "a,e,0;b,e,1", 0, PHASE_PENDING },
	{ "never_init_failed", NEVER, "i1", "i1,e,1", 1, PHASE_PENDING },
	{ "never_init_running", NEVER, "i1", "i1,r,0", 0, PHASE_PENDING },
	{ "onfailure_init_failed_retries", ONFAIL, "i1", "i1,e,1", 0, PHASE_PENDING },
	{ "api_phase_failed_is_final", ALWAYS, NULL, "a,r,0;b,r,0", 1, PHASE_FAILED },
	{ "api_phase_succeeded_is_final", ONFAIL, NULL, "", 1, PHASE_SUCCEEDED },
	{ "api_phase_running_not_terminal", ALWAYS, NULL, "a,e,0;b,e,0", 0, PHASE_RUNNING },
};

static void
test_pod_is_terminal(void **state)
{
	size_t i;

	(void)state;
	for (i = 0; i < nitems(terminal_cases); i++) {
		const struct terminal_case *tc = &terminal_cases[i];
		struct pod                 *p = fx_pod(tc->pol, "a b", tc->inits, NULL);
		struct rt_pod_status        rt;

		p->status.phase = tc->api_phase;
		fx_rt(p, NULL, tc->conts, &rt);
		if (pod_is_terminal(p, &rt) != tc->want)
			fail_msg("terminal case %s: want %d", tc->name, tc->want);
		rt_pod_status_clear(&rt);
		pod_unref(p);
	}
}

static void
test_null_runtime_and_probes(void **state)
{
	struct pod        *p = fx_pod(ALWAYS, "a", NULL, NULL);
	struct pod_actions a;

	(void)state;
	pod_actions_compute(p, NULL, NULL, &a);
	assert_int_equal(a.create_sandbox, 1);
	assert_int_equal(a.nstart, 1);
	pod_actions_clear(&a);
	pod_actions_clear(NULL);
	assert_false(pod_has_running_containers(NULL));
	assert_null(probe_set_find(NULL, "x"));
	pod_unref(p);
}

int
main(void)
{
	struct CMUnitTest t[nitems(cases) + 3];
	size_t            i;

	for (i = 0; i < nitems(cases); i++) {
		memset(&t[i], 0, sizeof(t[i]));
		t[i].name = cases[i].name;
		t[i].test_func = run_case;
		t[i].initial_state = (void *)&cases[i];
	}
	t[i++] = (struct CMUnitTest)cmocka_unit_test(test_should_restart);
	t[i++] = (struct CMUnitTest)cmocka_unit_test(test_pod_is_terminal);
	t[i++] = (struct CMUnitTest)cmocka_unit_test(test_null_runtime_and_probes);
	return _cmocka_run_group_tests("actions", t, i, NULL, NULL);
}
