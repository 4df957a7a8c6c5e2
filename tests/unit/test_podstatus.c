/* test_podstatus.c — generateAPIPodStatus table (phase, conditions, container statuses,
 * start errors, probes, continuity with the old status), QoS, merge rules and JSON. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "logic_fixture.h"
#include "logic/podstatus.h"

#define ALWAYS RESTART_ALWAYS
#define ONFAIL RESTART_ON_FAILURE
#define NEVER  RESTART_NEVER
#define NOW    1700000000

/* ---- describing a status in one line ---- */

static void cat(char *buf, size_t len, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

static void
cat(char *buf, size_t len, const char *fmt, ...)
{
	size_t  off = strlen(buf);
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(buf + off, len - off, fmt, ap);
	va_end(ap);
}

static void
desc_state(char *buf, size_t len, const struct container_state *s)
{
	switch (s->kind) {
	case CSTATE_WAITING:
		cat(buf, len, "W(%s)", s->reason ? s->reason : "");
		break;
	case CSTATE_RUNNING:
		cat(buf, len, "R");
		break;
	case CSTATE_TERMINATED:
		cat(buf, len, "T(%s,%d)", s->reason ? s->reason : "", s->exit_code);
		break;
	default:
		cat(buf, len, "-");
	}
}

static void
desc_list(char *buf, size_t len, const struct container_status *v, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++) {
		cat(buf, len, "%s%s=", i ? " " : "", v[i].name);
		desc_state(buf, len, &v[i].state);
		if (v[i].ready)
			cat(buf, len, "+ready");
		if (v[i].started.set && v[i].started.v)
			cat(buf, len, "+started");
		if (v[i].restart_count)
			cat(buf, len, "#%d", v[i].restart_count);
		if (v[i].last_state.kind != CSTATE_NONE) {
			cat(buf, len, "/last=");
			desc_state(buf, len, &v[i].last_state);
		}
	}
}

static void
desc_conds(char *buf, size_t len, const struct pod_status *s)
{
	size_t i;

	for (i = 0; i < s->nconditions; i++) {
		const struct pod_condition *c = &s->conditions[i];

		cat(buf, len, "%s%s=%s", i ? " " : "", c->type,
		    c->status == COND_TRUE        ? "True"
		        : c->status == COND_FALSE ? "False"
		                                  : "Unknown");
		if (c->reason)
			cat(buf, len, "/%s", c->reason);
	}
}

/* ---- building old/API statuses ---- */

static struct container_status *
add_cs(struct container_status **v, size_t *n, const char *name, enum cstate_kind k, int code)
{
	struct container_status *cs;

	*v = xreallocarray(*v, *n + 1, sizeof(**v));
	cs = &(*v)[(*n)++];
	memset(cs, 0, sizeof(*cs));
	cs->name = xstrdup(name);
	cs->image = xsprintf("img-%s:1", name);
	cs->state.kind = k;
	cs->state.exit_code = code;
	if (k == CSTATE_TERMINATED)
		cs->state.reason = xstrdup(code ? "Error" : "Completed");
	if (k == CSTATE_RUNNING)
		cs->state.started_at = NOW - 500;
	return cs;
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

/* prep callbacks: fill the pod (its API status) and/or the status manager's old status */
static void
old_a_running(struct pod *p, struct pod_status *old)
{
	(void)p;
	add_cs(&old->statuses, &old->nstatuses, "a", CSTATE_RUNNING, 0)->restart_count = 2;
	old->phase = PHASE_RUNNING;
}

static void
old_a_completed(struct pod *p, struct pod_status *old)
{
	(void)p;
	add_cs(&old->statuses, &old->nstatuses, "a", CSTATE_TERMINATED, 0);
	old->phase = PHASE_RUNNING;
}

static void
old_succeeded(struct pod *p, struct pod_status *old)
{
	(void)p;
	old->phase = PHASE_SUCCEEDED;
	old->reason = xstrdup("Done");
}

static void
api_failed(struct pod *p, struct pod_status *old)
{
	(void)old;
	p->status.phase = PHASE_FAILED;
}

static void
old_running_with_reason(struct pod *p, struct pod_status *old)
{
	(void)p;
	old->phase = PHASE_RUNNING;
	old->reason = xstrdup("Special");
	old->message = xstrdup("kept while Running");
}

static void
static_pod(struct pod *p, struct pod_status *old)
{
	(void)old;
	p->annotations.items = xcalloc(1, sizeof(struct kv));
	p->annotations.items[0].k = xstrdup("kubernetes.io/config.source");
	p->annotations.items[0].v = xstrdup("file");
	p->annotations.n = 1;
}

static void
api_foreign_conditions(struct pod *p, struct pod_status *old)
{
	(void)old;
	add_cond(&p->status, "example.com/gate", COND_TRUE, 50);
	add_cond(&p->status, "Ready", COND_TRUE, 50); /* kubelet-owned: regenerated */
	add_cond(&p->status, "DisruptionTarget", COND_TRUE, 60);
}

static void
old_ready_since_100(struct pod *p, struct pod_status *old)
{
	(void)p;
	add_cond(old, "Ready", COND_TRUE, 100);
	add_cond(old, "ContainersReady", COND_FALSE, 100);
	add_cond(old, "PodScheduled", COND_TRUE, 90);
	old->start_time = 80;
	old->phase = PHASE_RUNNING;
}

static void
old_pod_ip(struct pod *p, struct pod_status *old)
{
	(void)p;
	old->pod_ips.v = xcalloc(1, sizeof(char *));
	old->pod_ips.v[0] = xstrdup("10.9.9.9");
	old->pod_ips.n = 1;
	old->pod_ip = xstrdup("10.9.9.9");
}

/* check callbacks */
static void
chk_times(const struct pod_status *s)
{
	assert_int_equal(podstatus_find_condition(s, "Ready")->last_transition_time, 100);
	assert_int_equal(podstatus_find_condition(s, "ContainersReady")->last_transition_time, NOW);
	assert_int_equal(podstatus_find_condition(s, "PodScheduled")->last_transition_time, 90);
	assert_int_equal(podstatus_find_condition(s, "Initialized")->last_transition_time, NOW);
	assert_int_equal(s->start_time, 80);
}

static void
chk_foreign(const struct pod_status *s)
{
	assert_int_equal(podstatus_find_condition(s, "example.com/gate")->last_transition_time, 50);
	assert_string_equal(s->conditions[0].type, "example.com/gate");
	assert_string_equal(s->conditions[1].type, "DisruptionTarget");
}

static void
chk_ids(const struct pod_status *s)
{
	assert_string_equal(s->statuses[0].container_id, "containerd://a-0");
	assert_string_equal(s->statuses[0].image, "img-a:1");
	assert_string_equal(s->statuses[0].image_id, "sha256:a");
	assert_string_equal(s->statuses[0].last_state.container_id, "containerd://a-1");
	assert_int_equal(s->statuses[0].state.started_at, 201);
	assert_int_equal(s->statuses[0].last_state.started_at, 101);
	assert_int_equal(s->statuses[0].last_state.finished_at, 150);
	assert_string_equal(s->pod_ip, "10.0.0.5");
	assert_string_equal(s->host_ip, "192.168.1.10");
	assert_int_equal(s->start_time, NOW);
	assert_int_equal(s->qos_class, QOS_BEST_EFFORT);
}

static void
chk_hostnet_ip(const struct pod_status *s)
{
	assert_string_equal(s->pod_ip, "192.168.1.10");
	assert_int_equal(s->pod_ips.n, 1);
}

static void
chk_dual_stack(const struct pod_status *s)
{
	assert_int_equal(s->pod_ips.n, 2);
	assert_string_equal(s->pod_ips.v[0], "10.0.0.7");
	assert_string_equal(s->pod_ips.v[1], "fd00::7");
	assert_string_equal(s->pod_ip, "10.0.0.7");
}

static void
chk_old_ip(const struct pod_status *s)
{
	assert_string_equal(s->pod_ip, "10.9.9.9");
}

static void
chk_reason_kept(const struct pod_status *s)
{
	assert_string_equal(s->reason, "Special");
	assert_string_equal(s->message, "kept while Running");
}

static void
chk_evicted(const struct pod_status *s)
{
	assert_string_equal(s->reason, "DeadlineExceeded");
	assert_string_equal(
	    s->message, "Pod was active on the node longer than the specified deadline");
}

static void
chk_error_message(const struct pod_status *s)
{
	assert_string_equal(s->statuses[0].state.message,
	    "back-off 10s restarting failed container=a pod=web_default(uid-1)");
}

static void
chk_unready_message(const struct pod_status *s)
{
	/* every spec container has a status (waiting by default): unready, not unknown */
	assert_string_equal(podstatus_find_condition(s, "Ready")->message,
	    "containers with unready status: [s a b]");
	assert_string_equal(podstatus_find_condition(s, "ContainersReady")->message,
	    "containers with unready status: [s a b]");
	/* a regular container has started: initialized */
	assert_null(podstatus_find_condition(s, "Initialized")->message);
}

static void
chk_guaranteed(const struct pod_status *s)
{
	assert_int_equal(s->qos_class, QOS_GUARANTEED);
	assert_int_equal(s->has_qos_class, 1);
}

struct ps_case {
	const char         *name;
	enum restart_policy pol;
	int                 hostnet, deleting, terminal;
	const char         *apps, *inits, *ephem, *sb, *conts, *probes;
	const char         *errors; /* "name,reason,message;..." */
	void (*prep)(struct pod *, struct pod_status *old);
	const char *evict;
	/* expected */
	enum pod_phase phase;
	const char    *conds;            /* NULL: not checked */
	const char    *init, *app, *eph; /* descriptions; NULL: not checked */
	void (*check)(const struct pod_status *);
};

#define C_READY                                                                                    \
	"PodReadyToStartContainers=True Initialized=True Ready=True ContainersReady=True PodScheduled=True"

static const struct ps_case cases[] = {
	/* ---- phase and waiting reasons ---- */
	{ .name = "pending_no_sandbox_container_creating",
	    .apps = "a",
	    .sb = "-",
	    .phase = PHASE_PENDING,
	    .conds =
	        "PodReadyToStartContainers=False Initialized=True Ready=False/ContainersNotReady "
	        "ContainersReady=False/ContainersNotReady PodScheduled=True",
	    .app = "a=W(ContainerCreating)" },
	{ .name = "running_all_ready",
	    .apps = "a b",
	    .conts = "a,r,0;b,r,0",
	    .phase = PHASE_RUNNING,
	    .conds = C_READY,
	    .app = "a=R+ready+started b=R+ready+started" },
	{ .name = "one_running_one_creating_is_pending",
	    .apps = "a b",
	    .conts = "a,r,0",
	    .phase = PHASE_PENDING,
	    .app = "a=R+ready+started b=W(ContainerCreating)" },
	{ .name = "readiness_probe_not_run_not_ready",
	    .apps = "a:R",
	    .conts = "a,r,0",
	    .phase = PHASE_RUNNING,
	    .conds =
	        "PodReadyToStartContainers=True Initialized=True Ready=False/ContainersNotReady "
	        "ContainersReady=False/ContainersNotReady PodScheduled=True",
	    .app = "a=R+started" },
	{ .name = "readiness_probe_success_ready",
	    .apps = "a:R",
	    .conts = "a,r,0",
	    .probes = "a,-,S,-",
	    .phase = PHASE_RUNNING,
	    .conds = C_READY,
	    .app = "a=R+ready+started" },
	{ .name = "readiness_probe_failure_not_ready",
	    .apps = "a:R",
	    .conts = "a,r,0",
	    .probes = "a,-,F,-",
	    .phase = PHASE_RUNNING,
	    .app = "a=R+started" },
	{ .name = "startup_probe_pending_neither_started_nor_ready",
	    .apps = "a:S",
	    .conts = "a,r,0",
	    .phase = PHASE_RUNNING,
	    .app = "a=R" },
	{ .name = "startup_probe_success_started_and_ready",
	    .apps = "a:S",
	    .conts = "a,r,0",
	    .probes = "a,-,-,S",
	    .phase = PHASE_RUNNING,
	    .app = "a=R+ready+started" },
	{ .name = "created_not_started_waiting_without_reason",
	    .apps = "a",
	    .conts = "a,c,0",
	    .phase = PHASE_PENDING,
	    .app = "a=W()" },

	/* ---- init containers ---- */
	{ .name = "init_pending_pod_initializing",
	    .apps = "a",
	    .inits = "i1",
	    .phase = PHASE_PENDING,
	    .conds = "PodReadyToStartContainers=True Initialized=False/ContainersNotInitialized "
	             "Ready=False/ContainersNotReady ContainersReady=False/ContainersNotReady "
	             "PodScheduled=True",
	    .init = "i1=W(PodInitializing)",
	    .app = "a=W(PodInitializing)" },
	{ .name = "init_running_pending",
	    .apps = "a",
	    .inits = "i1 i2",
	    .conts = "i1,r,0",
	    .phase = PHASE_PENDING,
	    .init = "i1=R+started i2=W(PodInitializing)" },
	{ .name = "init_done_apps_starting",
	    .apps = "a",
	    .inits = "i1",
	    .conts = "i1,e,0",
	    .phase = PHASE_PENDING,
	    .conds =
	        "PodReadyToStartContainers=True Initialized=True Ready=False/ContainersNotReady "
	        "ContainersReady=False/ContainersNotReady PodScheduled=True",
	    .init = "i1=T(Completed,0)+ready",
	    .app = "a=W(PodInitializing)" },
	{ .name = "init_failed_never_pod_failed",
	    .pol = NEVER,
	    .apps = "a",
	    .inits = "i1",
	    .conts = "i1,e,1",
	    .phase = PHASE_FAILED,
	    .init = "i1=T(Error,1)" },
	{ .name = "init_failed_always_crashloop_pending",
	    .apps = "a",
	    .inits = "i1",
	    .conts = "i1,e,1",
	    .errors = "i1,CrashLoopBackOff,back-off 10s",
	    .phase = PHASE_PENDING,
	    .init = "i1=W(CrashLoopBackOff)/last=T(Error,1)" },
	{ .name = "init_statuses_in_spec_order",
	    .apps = "a",
	    .inits = "zz aa",
	    .conts = "aa,e,0;zz,e,0",
	    .init = "zz=T(Completed,0)+ready aa=T(Completed,0)+ready",
	    .phase = PHASE_PENDING },
	{ .name = "init_succeeded_ignores_start_error",
	    .apps = "a",
	    .inits = "i1",
	    .conts = "a,r,0;i1,e,0",
	    .errors = "i1,CrashLoopBackOff,x",
	    .phase = PHASE_RUNNING,
	    .init = "i1=T(Completed,0)+ready" },

	/* ---- restart policies and terminal phases ---- */
	{ .name = "never_all_succeeded_pod_succeeded",
	    .pol = NEVER,
	    .apps = "a b",
	    .conts = "a,e,0;b,e,0",
	    .phase = PHASE_SUCCEEDED,
	    .conds =
	        "PodReadyToStartContainers=True Initialized=True/PodCompleted "
	        "Ready=False/PodCompleted ContainersReady=False/PodCompleted PodScheduled=True" },
	{ .name = "never_one_failed_pod_failed",
	    .pol = NEVER,
	    .apps = "a b",
	    .conts = "a,e,0;b,e,1",
	    .phase = PHASE_FAILED,
	    .conds = "PodReadyToStartContainers=True Initialized=True Ready=False/PodFailed "
	             "ContainersReady=False/PodFailed PodScheduled=True" },
	{ .name = "never_one_still_running",
	    .pol = NEVER,
	    .apps = "a b",
	    .conts = "a,e,1;b,r,0",
	    .phase = PHASE_RUNNING },
	{ .name = "onfailure_failed_restarting_running",
	    .pol = ONFAIL,
	    .apps = "a",
	    .conts = "a,e,1",
	    .phase = PHASE_RUNNING },
	{ .name = "onfailure_all_succeeded",
	    .pol = ONFAIL,
	    .apps = "a",
	    .conts = "a,e,0",
	    .phase = PHASE_SUCCEEDED },
	{ .name = "always_all_exited_running",
	    .apps = "a",
	    .conts = "a,e,0",
	    .phase = PHASE_RUNNING },
	{ .name = "always_terminal_worker_succeeded",
	    .terminal = 1,
	    .apps = "a b",
	    .conts = "a,e,0;b,e,0",
	    .phase = PHASE_SUCCEEDED },
	{ .name = "always_terminal_worker_failed",
	    .terminal = 1,
	    .apps = "a b",
	    .conts = "a,e,0;b,e,137",
	    .phase = PHASE_FAILED },
	{ .name = "static_pod_never_terminal_by_worker",
	    .terminal = 1,
	    .apps = "a",
	    .conts = "a,e,0",
	    .prep = static_pod,
	    .phase = PHASE_RUNNING },
	{ .name = "oom_killed_reason_reported",
	    .pol = NEVER,
	    .apps = "a",
	    .conts = "a,e,137,O",
	    .phase = PHASE_FAILED,
	    .app = "a=T(OOMKilled,137)" },
	{ .name = "terminal_phase_of_status_manager_kept",
	    .apps = "a",
	    .conts = "a,r,0",
	    .prep = old_succeeded,
	    .phase = PHASE_SUCCEEDED },
	{ .name = "api_terminal_phase_is_final",
	    .apps = "a",
	    .conts = "a,r,0",
	    .prep = api_failed,
	    .phase = PHASE_FAILED },
	{ .name = "deadline_exceeded_eviction_fails_pod",
	    .apps = "a",
	    .conts = "a,r,0",
	    .evict = "DeadlineExceeded",
	    .phase = PHASE_FAILED,
	    .check = chk_evicted },
	{ .name = "reason_and_message_kept_in_same_phase",
	    .apps = "a",
	    .conts = "a,r,0",
	    .prep = old_running_with_reason,
	    .phase = PHASE_RUNNING,
	    .check = chk_reason_kept },

	/* ---- start errors (reason cache) ---- */
	{ .name = "crash_loop_back_off_shows_last_termination",
	    .apps = "a",
	    .conts = "a,e,1",
	    .errors =
	        "a,CrashLoopBackOff,back-off 10s restarting failed container=a pod=web_default(uid-1)",
	    .phase = PHASE_RUNNING,
	    .app = "a=W(CrashLoopBackOff)/last=T(Error,1)",
	    .check = chk_error_message },
	{ .name = "err_image_pull_first_start",
	    .apps = "a",
	    .errors = "a,ErrImagePull,pull access denied",
	    .phase = PHASE_PENDING,
	    .app = "a=W(ErrImagePull)" },
	{ .name = "image_pull_back_off",
	    .apps = "a b",
	    .conts = "b,r,0",
	    .errors = "a,ImagePullBackOff,Back-off pulling image",
	    .phase = PHASE_PENDING,
	    .app = "a=W(ImagePullBackOff) b=R+ready+started" },
	{ .name = "err_image_never_pull",
	    .apps = "a",
	    .errors = "a,ErrImageNeverPull,x",
	    .phase = PHASE_PENDING,
	    .app = "a=W(ErrImageNeverPull)" },
	{ .name = "create_container_config_error",
	    .apps = "a",
	    .errors = "a,CreateContainerConfigError,secret \"s\" not found",
	    .phase = PHASE_PENDING,
	    .app = "a=W(CreateContainerConfigError)" },
	{ .name = "run_container_error_after_exit",
	    .apps = "a",
	    .conts = "a,e,128",
	    .errors = "a,RunContainerError,exec: not found",
	    .phase = PHASE_RUNNING,
	    .app = "a=W(RunContainerError)/last=T(Error,128)" },
	{ .name = "never_policy_exited_ignores_start_error",
	    .pol = NEVER,
	    .apps = "a",
	    .conts = "a,e,1",
	    .errors = "a,CrashLoopBackOff,x",
	    .phase = PHASE_FAILED,
	    .app = "a=T(Error,1)" },
	{ .name = "running_container_ignores_start_error",
	    .apps = "a",
	    .conts = "a,r,0",
	    .errors = "a,CrashLoopBackOff,x",
	    .phase = PHASE_RUNNING,
	    .app = "a=R+ready+started" },
	{ .name = "deleting_pod_ignores_start_error",
	    .deleting = 1,
	    .apps = "a",
	    .conts = "a,e,1",
	    .errors = "a,CrashLoopBackOff,x",
	    .app = "a=T(Error,1)",
	    .phase = PHASE_RUNNING },

	/* ---- continuity with the runtime's history and the old status ---- */
	{ .name = "restart_count_and_last_state_from_previous_instance",
	    .apps = "a",
	    .conts = "a,r,0;a,e,137",
	    .phase = PHASE_RUNNING,
	    .app = "a=R+ready+started#1/last=T(Error,137)",
	    .check = chk_ids },
	{ .name = "unknown_state_after_running_is_terminated",
	    .apps = "a",
	    .conts = "a,u,0",
	    .prep = old_a_running,
	    .app = "a=T(ContainerStatusUnknown,137)#3",
	    .phase = PHASE_RUNNING },
	{ .name = "unknown_state_never_ran_is_waiting",
	    .apps = "a",
	    .conts = "a,u,0",
	    .app = "a=W()",
	    .phase = PHASE_PENDING },
	{ .name = "vanished_running_container_gets_last_state",
	    .apps = "a",
	    .prep = old_a_running,
	    .app = "a=W(ContainerCreating)#3/last=T(ContainerStatusUnknown,137)",
	    .phase = PHASE_RUNNING },
	{ .name = "old_terminated_status_kept_when_runtime_forgot",
	    .pol = NEVER,
	    .apps = "a",
	    .prep = old_a_completed,
	    .app = "a=T(Completed,0)",
	    .phase = PHASE_SUCCEEDED },

	{ .name = "init_restart_count_and_last_state",
	    .apps = "a",
	    .inits = "i1",
	    .conts = "i1,r,0;i1,e,1",
	    .phase = PHASE_PENDING,
	    .init = "i1=R+started#1/last=T(Error,1)" },
	{ .name = "init_oom_killed_always_restarting_pending",
	    .apps = "a",
	    .inits = "i1",
	    .conts = "i1,e,137,O",
	    .phase = PHASE_PENDING,
	    .init = "i1=T(OOMKilled,137)" },

	/* ---- sidecars ---- */
	{ .name = "sidecar_running_apps_running",
	    .apps = "a",
	    .inits = "s:r",
	    .conts = "a,r,0;s,r,0",
	    .phase = PHASE_RUNNING,
	    .conds = C_READY,
	    .init = "s=R+ready+started" },
	{ .name = "sidecar_readiness_probe_gates_pod_ready",
	    .apps = "a",
	    .inits = "s:rR",
	    .conts = "a,r,0;s,r,0",
	    .phase = PHASE_RUNNING,
	    .init = "s=R+started",
	    .conds =
	        "PodReadyToStartContainers=True Initialized=True Ready=False/ContainersNotReady "
	        "ContainersReady=False/ContainersNotReady PodScheduled=True" },
	{ .name = "sidecar_startup_pending_pod_pending",
	    .apps = "a",
	    .inits = "s:rS",
	    .conts = "s,r,0",
	    .phase = PHASE_PENDING,
	    .conds = "PodReadyToStartContainers=True Initialized=False/ContainersNotInitialized "
	             "Ready=False/ContainersNotReady ContainersReady=False/ContainersNotReady "
	             "PodScheduled=True",
	    .init = "s=R" },
	{ .name = "sidecar_restarting_after_apps_started_stays_running",
	    .apps = "a",
	    .inits = "s:r",
	    .conts = "a,r,0;s,e,1",
	    .phase = PHASE_RUNNING,
	    .conds =
	        "PodReadyToStartContainers=True Initialized=True Ready=False/ContainersNotReady "
	        "ContainersReady=False/ContainersNotReady PodScheduled=True" },
	{ .name = "sidecar_stopped_app_succeeded_onfailure_succeeded",
	    .pol = ONFAIL,
	    .apps = "a",
	    .inits = "s:r",
	    .conts = "a,e,0;s,e,0",
	    .phase = PHASE_SUCCEEDED },

	/* ---- ordering, conditions, addresses ---- */
	{ .name = "app_statuses_sorted_by_name",
	    .apps = "zeta alpha",
	    .conts = "zeta,r,0;alpha,r,0",
	    .app = "alpha=R+ready+started zeta=R+ready+started",
	    .phase = PHASE_RUNNING },
	{ .name = "ephemeral_container_status",
	    .apps = "a",
	    .ephem = "dbg",
	    .conts = "dbg,r,0;a,r,0",
	    .eph = "dbg=R",
	    .phase = PHASE_RUNNING,
	    .conds = C_READY },
	{ .name = "transition_times_kept_when_unchanged",
	    .apps = "a",
	    .conts = "a,r,0",
	    .prep = old_ready_since_100,
	    .phase = PHASE_RUNNING,
	    .check = chk_times },
	{ .name = "foreign_conditions_kept_kubelet_ones_regenerated",
	    .apps = "a",
	    .conts = "a,r,0",
	    .prep = api_foreign_conditions,
	    .phase = PHASE_RUNNING,
	    .conds = "example.com/gate=True DisruptionTarget=True " C_READY,
	    .check = chk_foreign },
	{ .name = "sandbox_not_ready_condition_false",
	    .apps = "a",
	    .sb = "sb1,N,P,10.0.0.5,0",
	    .conts = "a,e,137",
	    .phase = PHASE_RUNNING,
	    .conds =
	        "PodReadyToStartContainers=False Initialized=True Ready=False/ContainersNotReady "
	        "ContainersReady=False/ContainersNotReady PodScheduled=True" },
	{ .name = "host_network_pod_ip_is_host_ip",
	    .hostnet = 1,
	    .apps = "a",
	    .sb = "sb1,R,H,-,0",
	    .conts = "a,r,0",
	    .phase = PHASE_RUNNING,
	    .check = chk_hostnet_ip },
	{ .name = "pod_ip_kept_when_sandbox_gone",
	    .apps = "a",
	    .sb = "-",
	    .prep = old_pod_ip,
	    .phase = PHASE_PENDING,
	    .check = chk_old_ip },
	{ .name = "condition_messages_list_unknown_and_unready",
	    .apps = "a:R b:R",
	    .inits = "s:r",
	    .conts = "a,r,0;b,r,0",
	    .phase = PHASE_PENDING,
	    .check = chk_unready_message },
	{ .name = "guaranteed_qos_class",
	    .apps = "a:c b:c",
	    .conts = "a,r,0;b,r,0",
	    .phase = PHASE_RUNNING,
	    .check = chk_guaranteed },
};

static void
fx_errors(const char *spec, struct start_errors *e, char **keep)
{
	char               *ent, *save = NULL;
	struct start_error *v = NULL;
	size_t              n = 0;

	e->v = NULL;
	e->n = 0;
	*keep = NULL;
	if (spec == NULL)
		return;
	*keep = xstrdup(spec);
	for (ent = strtok_r(*keep, ";", &save); ent; ent = strtok_r(NULL, ";", &save)) {
		char *r = strchr(ent, ','), *m;

		*r++ = '\0';
		m = strchr(r, ',');
		*m++ = '\0';
		v = xreallocarray(v, n + 1, sizeof(*v));
		v[n].name = ent;
		v[n].reason = r;
		v[n].message = m;
		n++;
	}
	e->v = v;
	e->n = n;
}

static void
run_case(void **state)
{
	const struct ps_case  *tc = *state;
	struct pod            *p = fx_pod(tc->pol, tc->apps, tc->inits, tc->ephem);
	struct rt_pod_status   rt;
	struct probe_set       ps;
	struct start_errors    errs;
	struct pod_status      old, out;
	struct podstatus_input in;
	char                   buf[1024], *keep;

	memset(&old, 0, sizeof(old));
	p->host_network = tc->hostnet;
	p->deletion_ts = tc->deleting ? NOW - 10 : 0;
	if (tc->prep != NULL)
		tc->prep(p, &old);
	fx_rt(p, tc->sb, tc->conts, &rt);
	if (strcmp(tc->name, "pod_ip_dual_stack") == 0 && rt.nsandboxes > 0) {
		rt.sandboxes[0].extra_ips = xcalloc(1, sizeof(char *));
		rt.sandboxes[0].extra_ips[0] = xstrdup("fd00::7");
		rt.sandboxes[0].nextra_ips = 1;
	}
	if (strcmp(tc->name, "image_reported_as_id") == 0 && rt.ncontainers > 0) {
		/* containerd's ListContainers: the image the container was created from (its
		 * ID), no name. */
		free(rt.containers[0].image);
		rt.containers[0].image =
		    xstrdup("sha256:"
		            "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef");
		free(rt.containers[0].image_ref);
		rt.containers[0].image_ref = NULL;
	}
	fx_probes(&rt, tc->probes, &ps);
	fx_errors(tc->errors, &errs, &keep);
	memset(&in, 0, sizeof(in));
	in.pod = p;
	in.rt = &rt;
	in.probes = &ps;
	in.errors = &errs;
	in.old = &old;
	in.host_ip = "192.168.1.10";
	in.runtime_name = "containerd";
	in.now = NOW;
	in.pod_is_terminal = tc->terminal;
	if (tc->evict != NULL) {
		in.evict_reason = tc->evict;
		in.evict_message = "Pod was active on the node longer than the specified deadline";
	}
	podstatus_generate(&in, &out);

	buf[0] = '\0';
	desc_conds(buf, sizeof(buf), &out);
	print_message("%s: phase=%s conds=[%s]\n", tc->name, pod_phase_name(out.phase), buf);
	if (tc->conds != NULL)
		assert_string_equal(buf, tc->conds);
	assert_string_equal(pod_phase_name(out.phase), pod_phase_name(tc->phase));
	buf[0] = '\0';
	desc_list(buf, sizeof(buf), out.init_statuses, out.ninit_statuses);
	print_message("  init=[%s]\n", buf);
	if (tc->init != NULL)
		assert_string_equal(buf, tc->init);
	buf[0] = '\0';
	desc_list(buf, sizeof(buf), out.statuses, out.nstatuses);
	print_message("  app=[%s]\n", buf);
	if (tc->app != NULL)
		assert_string_equal(buf, tc->app);
	buf[0] = '\0';
	desc_list(buf, sizeof(buf), out.ephemeral_statuses, out.nephemeral_statuses);
	if (tc->eph != NULL)
		assert_string_equal(buf, tc->eph);
	assert_int_equal(out.nstatuses, p->ncontainers);
	assert_int_equal(out.ninit_statuses, p->ninit_containers);
	if (tc->check != NULL)
		tc->check(&out);

	pod_status_clear(&out);
	pod_status_clear(&old);
	free((void *)errs.v);
	free(keep);
	free((void *)ps.v);
	rt_pod_status_clear(&rt);
	pod_unref(p);
}

static void
test_dual_stack(void **state)
{
	static const struct ps_case tc = { .name = "pod_ip_dual_stack",
		.apps = "a",
		.sb = "sb1,R,P,10.0.0.7,0",
		.conts = "a,r,0",
		.phase = PHASE_RUNNING,
		.check = chk_dual_stack };

	(void)state;
	*state = (void *)&tc;
	run_case(state);
}

static void
chk_image_name(const struct pod_status *s)
{
	assert_string_equal(s->statuses[0].image, "img-a:1");
	assert_string_equal(s->statuses[0].image_id,
	    "sha256:0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef");
}

/* containerStatuses[].image is the image's name, never its ID; imageID the ID. */
static void
test_image_name(void **state)
{
	static const struct ps_case tc = { .name = "image_reported_as_id",
		.apps = "a",
		.sb = "sb1,R,P,10.0.0.7,0",
		.conts = "a,r,0",
		.phase = PHASE_RUNNING,
		.check = chk_image_name };

	(void)state;
	*state = (void *)&tc;
	run_case(state);
}

/* ---- QoS ---- */

struct qos_case {
	const char    *name;
	const char    *apps;
	const char    *inits;
	enum qos_class want;
};

static const struct qos_case qos_cases[] = {
	{ "no_resources_best_effort", "a b", NULL, QOS_BEST_EFFORT },
	{ "all_requests_equal_limits_guaranteed", "a:c b:c", NULL, QOS_GUARANTEED },
	{ "one_container_without_limits_burstable", "a:c b", NULL, QOS_BURSTABLE },
	{ "cpu_request_only_burstable", "a:q", NULL, QOS_BURSTABLE },
	{ "init_container_counts", "a:c", "i1:q", QOS_BURSTABLE },
	{ "init_guaranteed_too", "a:c", "i1:c", QOS_GUARANTEED },
};

static void
test_qos(void **state)
{
	size_t i;

	(void)state;
	for (i = 0; i < nitems(qos_cases); i++) {
		struct pod *p = fx_pod(ALWAYS, qos_cases[i].apps, qos_cases[i].inits, NULL);

		if (pod_qos_class(p) != qos_cases[i].want)
			fail_msg("qos case %s", qos_cases[i].name);
		pod_unref(p);
	}
	{
		/* limits only: the request defaults to the limit, so Guaranteed */
		struct pod *p = fx_pod(ALWAYS, "a", NULL, NULL);

		fx_add_quantity(&p->containers[0].c_resources.limits, "cpu", 500);
		fx_add_quantity(&p->containers[0].c_resources.limits, "memory", 1000);
		assert_int_equal(pod_qos_class(p), QOS_GUARANTEED);
		/* a request different from the limit: Burstable */
		fx_add_quantity(&p->containers[0].c_resources.requests, "cpu", 100);
		assert_int_equal(pod_qos_class(p), QOS_BURSTABLE);
		pod_unref(p);
	}
	assert_string_equal(qos_class_name(QOS_BURSTABLE), "Burstable");
}

/* ---- merge ---- */

struct merge_case {
	const char    *name;
	enum pod_phase old_phase, new_phase;
	int            running;
	int            new_ready; /* Ready/ContainersReady True in new */
	enum pod_phase want_phase;
	const char    *want_conds;
};

static const struct merge_case merge_cases[] = {
	{ "kubelet_conditions_from_new_others_from_old", PHASE_RUNNING, PHASE_RUNNING, 0, 1,
	    PHASE_RUNNING, "example.com/x=True Ready=True ContainersReady=True PodScheduled=True" },
	{ "terminal_delayed_while_containers_may_run", PHASE_RUNNING, PHASE_SUCCEEDED, 1, 0,
	    PHASE_RUNNING,
	    "example.com/x=True Ready=False ContainersReady=False PodScheduled=True" },
	{ "terminal_allowed_once_containers_stopped", PHASE_RUNNING, PHASE_FAILED, 0, 0,
	    PHASE_FAILED,
	    "example.com/x=True Ready=False ContainersReady=False PodScheduled=True" },
	{ "terminal_phase_never_left", PHASE_SUCCEEDED, PHASE_RUNNING, 0, 0, PHASE_SUCCEEDED,
	    "example.com/x=True Ready=False ContainersReady=False PodScheduled=True" },
	{ "ready_forced_false_in_terminal_phase", PHASE_RUNNING, PHASE_SUCCEEDED, 0, 1,
	    PHASE_SUCCEEDED,
	    "example.com/x=True Ready=False/PodCompleted ContainersReady=False/PodCompleted "
	    "PodScheduled=True" },
	{ "ready_forced_false_failed", PHASE_RUNNING, PHASE_FAILED, 0, 1, PHASE_FAILED,
	    "example.com/x=True Ready=False/PodFailed ContainersReady=False/PodFailed "
	    "PodScheduled=True" },
	{ "pending_to_running", PHASE_PENDING, PHASE_RUNNING, 1, 1, PHASE_RUNNING,
	    "example.com/x=True Ready=True ContainersReady=True PodScheduled=True" },
};

static void
test_merge(void **state)
{
	size_t i;

	(void)state;
	for (i = 0; i < nitems(merge_cases); i++) {
		const struct merge_case *tc = &merge_cases[i];
		struct pod_status        old, nw, out;
		char                     buf[512] = "";

		memset(&old, 0, sizeof(old));
		memset(&nw, 0, sizeof(nw));
		old.phase = tc->old_phase;
		old.reason = xstrdup("OldReason");
		add_cond(&old, "Ready", COND_FALSE, 10);
		add_cond(&old, "example.com/x", COND_TRUE, 11);
		nw.phase = tc->new_phase;
		add_cond(&nw, "example.com/x", COND_FALSE, 12); /* not ours: ignored */
		add_cond(&nw, "Ready", tc->new_ready ? COND_TRUE : COND_FALSE, 20);
		add_cond(&nw, "ContainersReady", tc->new_ready ? COND_TRUE : COND_FALSE, 20);
		add_cond(&nw, "PodScheduled", COND_TRUE, 5);
		podstatus_merge(&old, &nw, tc->running, NOW, &out);
		desc_conds(buf, sizeof(buf), &out);
		if (out.phase != tc->want_phase || strcmp(buf, tc->want_conds) != 0)
			fail_msg("merge case %s: phase %s conds [%s]", tc->name,
			    pod_phase_name(out.phase), buf);
		if (out.phase == tc->old_phase && tc->old_phase != tc->new_phase)
			assert_string_equal(out.reason, "OldReason");
		if (tc->new_ready && out.phase == PHASE_SUCCEEDED)
			assert_int_equal(
			    podstatus_find_condition(&out, "Ready")->last_transition_time, NOW);
		pod_status_clear(&old);
		pod_status_clear(&nw);
		pod_status_clear(&out);
	}
}

/* ---- JSON ---- */

static void
test_json(void **state)
{
	struct pod_status        s, c;
	struct container_status *cs;
	char                    *j;
	static const char       *want =
	    "{\"phase\":\"Running\",\"conditions\":[{\"type\":\"Ready\",\"status\":\"False\","
	    "\"lastProbeTime\":null,\"lastTransitionTime\":\"2023-11-14T22:13:20Z\","
	    "\"reason\":\"ContainersNotReady\",\"message\":\"containers with unready status: [b]\"}],"
	    "\"hostIP\":\"192.168.1.10\",\"hostIPs\":[{\"ip\":\"192.168.1.10\"}],"
	    "\"podIP\":\"10.0.0.5\",\"podIPs\":[{\"ip\":\"10.0.0.5\"},{\"ip\":\"fd00::5\"}],"
	    "\"startTime\":\"2023-11-14T22:13:20Z\","
	    "\"initContainerStatuses\":[{\"name\":\"i\",\"state\":{\"terminated\":{\"exitCode\":0,"
	    "\"reason\":\"Completed\",\"startedAt\":null,\"finishedAt\":null,"
	    "\"containerID\":\"containerd://i1\"}},\"lastState\":{},\"ready\":true,"
	    "\"restartCount\":0,\"image\":\"img-i:1\",\"imageID\":\"\","
	    "\"containerID\":\"containerd://i1\",\"started\":false}],"
	    "\"containerStatuses\":[{\"name\":\"a\",\"state\":{\"running\":{\"startedAt\":"
	    "\"2023-11-14T22:05:00Z\"}},\"lastState\":{\"terminated\":{\"exitCode\":1,"
	    "\"reason\":\"Error\",\"startedAt\":null,\"finishedAt\":null}},\"ready\":true,"
	    "\"restartCount\":1,\"image\":\"img-a:1\",\"imageID\":\"\",\"started\":true},"
	    "{\"name\":\"b\",\"state\":{\"waiting\":{\"reason\":\"CrashLoopBackOff\","
	    "\"message\":\"back-off\"}},\"lastState\":{},\"ready\":false,\"restartCount\":0,"
	    "\"image\":\"img-b:1\",\"imageID\":\"\"}],\"qosClass\":\"Burstable\"}";

	(void)state;
	memset(&s, 0, sizeof(s));
	s.phase = PHASE_RUNNING;
	add_cond(&s, "Ready", COND_FALSE, NOW);
	s.conditions[0].reason = xstrdup("ContainersNotReady");
	s.conditions[0].message = xstrdup("containers with unready status: [b]");
	s.host_ip = xstrdup("192.168.1.10");
	s.pod_ip = xstrdup("10.0.0.5");
	s.pod_ips.v = xcalloc(2, sizeof(char *));
	s.pod_ips.v[0] = xstrdup("10.0.0.5");
	s.pod_ips.v[1] = xstrdup("fd00::5");
	s.pod_ips.n = 2;
	s.start_time = NOW;
	cs = add_cs(&s.init_statuses, &s.ninit_statuses, "i", CSTATE_TERMINATED, 0);
	cs->state.container_id = xstrdup("containerd://i1");
	cs->container_id = xstrdup("containerd://i1");
	cs->ready = 1;
	cs->started.set = 1;
	cs = add_cs(&s.statuses, &s.nstatuses, "a", CSTATE_RUNNING, 0);
	cs->ready = 1;
	cs->started.set = 1;
	cs->started.v = 1;
	cs->restart_count = 1;
	cs->last_state.kind = CSTATE_TERMINATED;
	cs->last_state.exit_code = 1;
	cs->last_state.reason = xstrdup("Error");
	cs = add_cs(&s.statuses, &s.nstatuses, "b", CSTATE_WAITING, 0);
	cs->state.reason = xstrdup("CrashLoopBackOff");
	cs->state.message = xstrdup("back-off");
	s.qos_class = QOS_BURSTABLE;
	s.has_qos_class = 1;
	j = podstatus_to_json_string(&s);
	assert_non_null(j);
	assert_string_equal(j, want);
	free(j);

	podstatus_copy(&c, &s);
	assert_true(podstatus_equal(&c, &s));
	c.statuses[1].ready = 1;
	assert_false(podstatus_equal(&c, &s));
	pod_status_clear(&c);
	pod_status_clear(&s);
}

static void
test_owned_conditions(void **state)
{
	(void)state;
	assert_true(podstatus_condition_is_kubelet_owned("Ready"));
	assert_true(podstatus_condition_is_kubelet_owned("PodReadyToStartContainers"));
	assert_true(podstatus_condition_is_kubelet_owned("PodScheduled"));
	assert_true(podstatus_condition_is_kubelet_owned("PodResizePending"));
	assert_false(podstatus_condition_is_kubelet_owned("DisruptionTarget"));
	assert_false(podstatus_condition_is_kubelet_owned(NULL));
}

static void
test_no_runtime(void **state)
{
	struct pod            *p = fx_pod(ALWAYS, "a", "i1", NULL);
	struct podstatus_input in;
	struct pod_status      out;

	(void)state;
	memset(&in, 0, sizeof(in));
	in.pod = p;
	in.now = NOW;
	podstatus_generate(&in, &out);
	assert_int_equal(out.phase, PHASE_PENDING);
	assert_null(out.pod_ip);
	assert_null(out.host_ip);
	assert_int_equal(out.start_time, NOW);
	pod_status_clear(&out);
	pod_unref(p);
}

/* A node shutdown (or pressure eviction) terminates the pod: Failed with the reason, and
 * the shared DisruptionTarget condition, which the merge sends only once nothing runs. */
static void
test_disruption_target(void **state)
{
	struct pod                 *p = fx_pod(ALWAYS, "a", NULL, NULL);
	struct podstatus_input      in;
	struct pod_status           gen, out, api;
	const struct pod_condition *c;
	char                        buf[512] = "";

	(void)state;
	memset(&in, 0, sizeof(in));
	in.pod = p;
	in.now = NOW;
	in.pod_is_terminal = 1;
	in.evict_reason = "Terminated";
	in.evict_message = "Pod was terminated in response to imminent node shutdown.";
	in.evict_disruption = 1;
	podstatus_generate(&in, &gen);
	assert_int_equal(gen.phase, PHASE_FAILED);
	assert_string_equal(gen.reason, "Terminated");
	c = podstatus_find_condition(&gen, "DisruptionTarget");
	assert_non_null(c);
	assert_int_equal(c->status, COND_TRUE);
	assert_string_equal(c->reason, "TerminationByKubelet");
	assert_string_equal(c->message, in.evict_message);
	assert_int_equal(c->last_transition_time, NOW);
	/* Containers may still run: neither the phase nor the condition go out yet. */
	memset(&api, 0, sizeof(api));
	api.phase = PHASE_RUNNING;
	podstatus_merge(&api, &gen, 1, NOW + 5, &out);
	assert_int_equal(out.phase, PHASE_RUNNING);
	assert_null(podstatus_find_condition(&out, "DisruptionTarget"));
	pod_status_clear(&out);
	/* Nothing runs: both, the condition's time when it is sent. */
	podstatus_merge(&api, &gen, 0, NOW + 9, &out);
	assert_int_equal(out.phase, PHASE_FAILED);
	desc_conds(buf, sizeof(buf), &out);
	assert_non_null(strstr(buf, "DisruptionTarget=True/TerminationByKubelet"));
	assert_int_equal(
	    podstatus_find_condition(&out, "DisruptionTarget")->last_transition_time, NOW + 9);
	pod_status_clear(&out);
	pod_status_clear(&gen);
	/* The API has it now: generated again, it replaces it (no second one). */
	add_cond(&p->status, "DisruptionTarget", COND_TRUE, NOW + 9);
	podstatus_generate(&in, &gen);
	buf[0] = '\0';
	desc_conds(buf, sizeof(buf), &gen);
	assert_null(strstr(strstr(buf, "DisruptionTarget") + 1, "DisruptionTarget"));
	/* Without evict_disruption (an active deadline): no condition. */
	pod_status_clear(&gen);
	in.evict_disruption = 0;
	pod_status_clear(&p->status);
	podstatus_generate(&in, &gen);
	assert_null(podstatus_find_condition(&gen, "DisruptionTarget"));
	pod_status_clear(&gen);
	pod_status_clear(&api);
	pod_unref(p);
}

int
main(void)
{
	struct CMUnitTest t[nitems(cases) + 9];
	size_t            i;

	for (i = 0; i < nitems(cases); i++) {
		memset(&t[i], 0, sizeof(t[i]));
		t[i].name = cases[i].name;
		t[i].test_func = run_case;
		t[i].initial_state = (void *)&cases[i];
	}
	t[i++] = (struct CMUnitTest)cmocka_unit_test(test_dual_stack);
	t[i++] = (struct CMUnitTest)cmocka_unit_test(test_image_name);
	t[i++] = (struct CMUnitTest)cmocka_unit_test(test_qos);
	t[i++] = (struct CMUnitTest)cmocka_unit_test(test_merge);
	t[i++] = (struct CMUnitTest)cmocka_unit_test(test_json);
	t[i++] = (struct CMUnitTest)cmocka_unit_test(test_owned_conditions);
	t[i++] = (struct CMUnitTest)cmocka_unit_test(test_no_runtime);
	t[i++] = (struct CMUnitTest)cmocka_unit_test(test_disruption_target);
	return _cmocka_run_group_tests("podstatus", t, i, NULL, NULL);
}
