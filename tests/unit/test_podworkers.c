/* test_podworkers.c — pod workers on a real event loop with a fake syncer: coalescing,
 * sticky termination, one transaction per pod, backoff queue, phases, static pods. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include <event2/event.h>

#include "core/loop.h"
#include "node/podworkers.h"
#include "core/util.h"

#define MAXCALLS 64

struct call {
	char               *kind; /* sync, terminating, terminated, cancel */
	char               *uid;
	char               *rv; /* the pod's resource_version */
	enum pw_update_type type;
	int64_t             grace;
	struct pw_txn      *txn;
};

struct fake {
	struct call calls[MAXCALLS];
	int         n;
	int         auto_done; /* complete every transaction at once with auto_rc */
	int         auto_rc;
	unsigned    auto_flags;
	int         states[8];
	int         nstates;
};

static struct event_base *base;
static struct fake        F;
static struct podworkers *P;

static void
fake_record(const char *kind, struct pw_txn *t, const struct pod *pod, enum pw_update_type type,
    int64_t grace)
{
	struct call *c;

	assert_true(F.n < MAXCALLS);
	c = &F.calls[F.n++];
	c->kind = xstrdup(kind);
	c->uid = xstrdup(t != NULL ? pw_txn_uid(t) : "");
	c->rv = xstrdup(pod != NULL ? pod->resource_version : NULL);
	c->type = type;
	c->grace = grace;
	c->txn = t;
	if (t != NULL && F.auto_done && strcmp(kind, "cancel") != 0)
		pw_txn_done(t, F.auto_rc, F.auto_flags, F.auto_rc ? "boom" : NULL);
}

static void
fake_sync(void *arg, struct pw_txn *t, const struct pod *pod, enum pw_update_type type)
{
	(void)arg;
	fake_record("sync", t, pod, type, 0);
}

static void
fake_terminating(void *arg, struct pw_txn *t, const struct pod *pod, int64_t grace)
{
	(void)arg;
	fake_record("terminating", t, pod, PW_UPDATE_KILL, grace);
}

static void
fake_terminated(void *arg, struct pw_txn *t, const struct pod *pod)
{
	(void)arg;
	fake_record("terminated", t, pod, PW_UPDATE_KILL, 0);
}

static void
fake_cancel(void *arg, struct pw_txn *t)
{
	(void)arg;
	fake_record("cancel", t, NULL, PW_UPDATE_SYNC, 0);
}

static void
fake_state(void *arg, const char *uid, enum pw_state s, int64_t deadline)
{
	assert_ptr_equal(arg, &F); /* its own argument, not the syncer's */
	(void)uid;
	(void)deadline;
	if (F.nstates < (int)nitems(F.states))
		F.states[F.nstates++] = (int)s;
}

static void
fake_reset(void)
{
	int i;

	for (i = 0; i < F.n; i++) {
		free(F.calls[i].kind);
		free(F.calls[i].uid);
		free(F.calls[i].rv);
	}
	memset(&F, 0, sizeof(F));
}

static int
setup(void **state)
{
	struct pw_syncer  s = { 0 };
	struct pw_options o = { .backoff_ms = 10000, .resync_ms = 60000 };

	(void)state;
	base = event_base_new();
	event_base_priority_init(base, LOOP_NPRI);
	s.sync_pod = fake_sync;
	s.sync_terminating = fake_terminating;
	s.sync_terminated = fake_terminated;
	s.cancel = fake_cancel;
	s.state_changed = fake_state;
	s.state_arg = &F;
	memset(&F, 0, sizeof(F));
	P = podworkers_new(base, &s, &o);
	return 0;
}

static int
teardown(void **state)
{
	(void)state;
	podworkers_free(P);
	fake_reset();
	event_base_free(base);
	return 0;
}

/* Runs the loop until nothing is active. */
static void
spin(void)
{
	int i;

	for (i = 0; i < 10; i++)
		event_base_loop(base, EVLOOP_NONBLOCK);
}

static struct pod *
mkpod(const char *uid, const char *name, const char *rv, const char *source)
{
	struct pod *p = xcalloc(1, sizeof(*p));

	p->refs = 1; /* as decoded: one reference */
	p->uid = xstrdup(uid);
	p->name = xstrdup(name);
	p->ns = xstrdup("default");
	p->resource_version = xstrdup(rv);
	p->termination_grace.set = 1;
	p->termination_grace.v = 30;
	if (source != NULL) {
		p->annotations.n = 1;
		p->annotations.items = xcalloc(1, sizeof(struct kv));
		p->annotations.items[0].k = xstrdup("kubernetes.io/config.source");
		p->annotations.items[0].v = xstrdup(source);
	}
	return p;
}

static void
update(const char *uid, const char *name, const char *rv, enum pw_update_type t, int64_t g)
{
	struct pod *p = mkpod(uid, name, rv, "api");

	podworkers_update(P, p, t, g);
	pod_unref(p);
}

static int
count_kind(const char *kind, const char *uid)
{
	int i, n = 0;

	for (i = 0; i < F.n; i++)
		if (strcmp(F.calls[i].kind, kind) == 0 &&
		    (uid == NULL || strcmp(F.calls[i].uid, uid) == 0))
			n++;
	return n;
}

static struct call *
last(void)
{
	assert_true(F.n > 0);
	return &F.calls[F.n - 1];
}

static enum pw_state
state_of(const char *uid)
{
	struct pw_view v;

	assert_int_equal(podworkers_get(P, uid, &v), 0);
	return v.state;
}

static void
test_create_then_resync_queued(void **state)
{
	struct pw_view v;
	int64_t        now;

	(void)state;
	update("u1", "a", "1", PW_UPDATE_CREATE, -1);
	assert_int_equal(F.n, 0); /* never inside the update call */
	spin();
	assert_int_equal(F.n, 1);
	assert_string_equal(last()->kind, "sync");
	assert_int_equal(last()->type, PW_UPDATE_CREATE);
	assert_int_equal(podworkers_get(P, "u1", &v), 0);
	assert_true(v.working);
	assert_string_equal(v.txn_kind, "sync");
	now = now_mono_ms();
	pw_txn_done(last()->txn, 0, 0, NULL);
	spin();
	assert_int_equal(F.n, 1);
	assert_int_equal(podworkers_get(P, "u1", &v), 0);
	assert_false(v.working);
	/* Resync queued with jitter: [resync, 1.5 resync]. */
	assert_true(v.next_sync_ms >= now + 60000);
	assert_true(v.next_sync_ms <= now_mono_ms() + 90000);
	assert_int_equal(podworkers_sync_due(P, now_mono_ms()), 0);
	assert_int_equal(podworkers_sync_due(P, v.next_sync_ms), 1);
	spin();
	assert_int_equal(F.n, 2);
	assert_int_equal(last()->type, PW_UPDATE_SYNC);
	assert_int_equal(podworkers_count(P), 1);
}

static void
test_pending_coalesce_latest_wins(void **state)
{
	(void)state;
	update("u1", "a", "1", PW_UPDATE_CREATE, -1);
	spin();
	assert_int_equal(F.n, 1);
	/* While the sync is in flight: three updates and two kicks. */
	update("u1", "a", "2", PW_UPDATE_UPDATE, -1);
	podworkers_kick(P, "u1");
	update("u1", "a", "3", PW_UPDATE_UPDATE, -1);
	update("u1", "a", "4", PW_UPDATE_UPDATE, -1);
	podworkers_kick(P, "u1");
	spin();
	assert_int_equal(F.n, 1); /* one transaction at a time */
	pw_txn_done(F.calls[0].txn, 0, 0, NULL);
	spin();
	assert_int_equal(F.n, 2); /* exactly one more, with the latest pod */
	assert_string_equal(last()->rv, "4");
	assert_int_equal(last()->type, PW_UPDATE_UPDATE);
	pw_txn_done(last()->txn, 0, 0, NULL);
	spin();
	assert_int_equal(F.n, 2);
}

static void
test_other_pods_progress(void **state)
{
	(void)state;
	update("u1", "a", "1", PW_UPDATE_CREATE, -1);
	spin();
	update("u2", "b", "1", PW_UPDATE_CREATE, -1);
	spin();
	assert_int_equal(F.n, 2);
	assert_string_equal(F.calls[1].uid, "u2");
	pw_txn_done(F.calls[1].txn, 0, 0, NULL);
	update("u2", "b", "2", PW_UPDATE_UPDATE, -1);
	spin();
	assert_int_equal(count_kind("sync", "u2"), 2);
	assert_int_equal(count_kind("sync", "u1"), 1);
	pw_txn_done(F.calls[0].txn, 0, 0, NULL);
	pw_txn_done(last()->txn, 0, 0, NULL);
	spin();
}

static void
test_kill_sticky_and_phases(void **state)
{
	struct pw_view v;

	(void)state;
	update("u1", "a", "1", PW_UPDATE_CREATE, -1);
	spin();
	/* A kill while syncing cancels the sync and terminates at once. */
	update("u1", "a", "2", PW_UPDATE_KILL, 7);
	update("u1", "a", "3", PW_UPDATE_UPDATE, -1); /* does not undo the kill */
	spin();
	assert_int_equal(count_kind("cancel", "u1"), 1);
	assert_string_equal(last()->kind, "terminating");
	assert_int_equal(last()->grace, 7);
	assert_string_equal(last()->rv, "3"); /* latest pod, sticky kill */
	assert_int_equal(state_of("u1"), PW_TERMINATING);
	update("u1", "a", "4", PW_UPDATE_UPDATE, -1);
	update("u1", "a", "5", PW_UPDATE_SYNC, -1);
	spin();
	assert_int_equal(count_kind("terminating", "u1"), 1);
	pw_txn_done(last()->txn, 0, 0, NULL);
	spin();
	/* Finished phase queues the next one at once. */
	assert_string_equal(last()->kind, "terminated");
	assert_int_equal(state_of("u1"), PW_TERMINATED);
	pw_txn_done(last()->txn, 0, 0, NULL);
	spin();
	assert_int_equal(state_of("u1"), PW_FINISHED);
	/* Nothing brings it back: updates, kicks, the sync tick. */
	update("u1", "a", "6", PW_UPDATE_UPDATE, -1);
	podworkers_kick(P, "u1");
	podworkers_sync_due(P, now_mono_ms() + 1000000);
	spin();
	assert_int_equal(count_kind("sync", "u1"), 1);
	assert_int_equal(state_of("u1"), PW_FINISHED);
	assert_int_equal(podworkers_get(P, "u1", &v), 0);
	assert_false(v.working);
	assert_int_equal(F.nstates, 4);
	assert_int_equal(F.states[0], PW_SYNC);
	assert_int_equal(F.states[1], PW_TERMINATING);
	assert_int_equal(F.states[3], PW_FINISHED);
}

static void
test_deletion_timestamp_grace(void **state)
{
	struct pod *p = mkpod("u1", "a", "1", "api");

	(void)state;
	update("u1", "a", "0", PW_UPDATE_CREATE, -1);
	spin();
	pw_txn_done(last()->txn, 0, 0, NULL);
	spin();
	p->deletion_ts = 1700000000;
	p->deletion_grace.set = 1;
	p->deletion_grace.v = 12;
	podworkers_update(P, p, PW_UPDATE_UPDATE, -1);
	spin();
	assert_string_equal(last()->kind, "terminating");
	assert_int_equal(last()->grace, 12);
	/* A shorter deletion grace shortens it; a longer one does not extend it. */
	p->deletion_grace.v = 20;
	podworkers_update(P, p, PW_UPDATE_UPDATE, -1);
	spin();
	pw_txn_done(last()->txn, -1, 0, "stop failed");
	spin();
	{
		struct pw_view v;

		assert_int_equal(podworkers_get(P, "u1", &v), 0);
		assert_int_equal(v.grace_seconds, 12);
		assert_int_equal(v.failures, 1);
		assert_string_equal(v.last_error, "stop failed");
		assert_int_equal(podworkers_sync_due(P, v.next_sync_ms), 1);
	}
	spin();
	assert_string_equal(last()->kind, "terminating");
	assert_true(last()->grace <= 12 && last()->grace >= 11);
	pod_unref(p);
}

static void
test_failure_backoff_queue(void **state)
{
	struct pw_view v;
	int64_t        t0;

	(void)state;
	F.auto_done = 1;
	F.auto_rc = -1;
	t0 = now_mono_ms();
	update("u1", "a", "1", PW_UPDATE_CREATE, -1);
	spin();
	assert_int_equal(F.n, 1);
	assert_int_equal(podworkers_get(P, "u1", &v), 0);
	assert_int_equal(v.failures, 1);
	assert_true(v.next_sync_ms >= t0 + 10000 && v.next_sync_ms <= now_mono_ms() + 15000);
	assert_int_equal(podworkers_sync_due(P, v.next_sync_ms - 1), 0);
	assert_int_equal(podworkers_sync_due(P, v.next_sync_ms), 1);
	spin();
	assert_int_equal(F.n, 2);
	assert_int_equal(podworkers_get(P, "u1", &v), 0);
	assert_int_equal(v.failures, 2);
	F.auto_rc = 0;
	podworkers_kick(P, "u1"); /* an event still syncs at once */
	spin();
	assert_int_equal(F.n, 3);
	assert_int_equal(podworkers_get(P, "u1", &v), 0);
	assert_int_equal(v.failures, 0);
	assert_null(v.last_error);
}

static void
test_terminal_sync_terminates(void **state)
{
	(void)state;
	F.auto_done = 1;
	F.auto_flags = PW_DONE_TERMINAL;
	update("u1", "a", "1", PW_UPDATE_CREATE, -1);
	spin();
	assert_int_equal(count_kind("sync", "u1"), 1);
	assert_int_equal(count_kind("terminating", "u1"), 1);
	assert_int_equal(count_kind("terminated", "u1"), 1);
	assert_int_equal(F.calls[1].grace, 30);
	assert_int_equal(state_of("u1"), PW_FINISHED);
}

static int
wanted_u2(const char *uid, void *arg)
{
	(void)arg;
	return strcmp(uid, "u2") == 0;
}

static void
test_forget(void **state)
{
	(void)state;
	F.auto_done = 1;
	update("u1", "a", "1", PW_UPDATE_CREATE, -1);
	update("u2", "b", "1", PW_UPDATE_CREATE, -1);
	spin();
	/* u1 unwanted and still running: killed, not removed yet. */
	assert_int_equal(podworkers_forget(P, wanted_u2, NULL), 0);
	spin();
	assert_int_equal(count_kind("terminating", "u1"), 1);
	assert_int_equal(state_of("u1"), PW_FINISHED);
	assert_int_equal(podworkers_forget(P, wanted_u2, NULL), 1);
	assert_int_equal(podworkers_count(P), 1);
	assert_int_equal(state_of("u2"), PW_SYNC);
}

/* podworkers_finished_version moves only when the set of FINISHED workers changes: not on a
 * create, a sync or an update, but when a worker finishes, starts again, is restored as
 * FINISHED or is forgotten. */
static void
test_finished_version(void **state)
{
	uint64_t    v0 = podworkers_finished_version(P), v;
	struct pod *p;

	(void)state;
	assert_true(v0 != 0);
	update("u1", "a", "1", PW_UPDATE_CREATE, -1);
	update("u2", "b", "1", PW_UPDATE_CREATE, -1);
	spin();
	pw_txn_done(F.calls[0].txn, 0, 0, NULL);
	pw_txn_done(F.calls[1].txn, 0, 0, NULL);
	spin();
	update("u2", "b", "2", PW_UPDATE_UPDATE, -1);
	spin();
	pw_txn_done(last()->txn, 0, 0, NULL);
	spin();
	assert_true(podworkers_finished_version(P) == v0);
	F.auto_done = 1;
	update("u1", "a", "2", PW_UPDATE_KILL, -1);
	spin();
	assert_int_equal(state_of("u1"), PW_FINISHED);
	v = podworkers_finished_version(P);
	assert_true(v != v0);
	update("u1", "a", "3", PW_UPDATE_CREATE, -1); /* put back: starts again */
	spin();
	assert_int_equal(state_of("u1"), PW_SYNC);
	assert_true(podworkers_finished_version(P) != v);
	update("u1", "a", "4", PW_UPDATE_KILL, -1);
	spin();
	v = podworkers_finished_version(P);
	assert_int_equal(podworkers_forget(P, wanted_u2, NULL), 1);
	assert_true(podworkers_finished_version(P) != v);
	v = podworkers_finished_version(P);
	p = mkpod("u3", "c", "1", "api");
	podworkers_restore(P, p, &(struct pw_restore){ .state = PW_SYNC });
	assert_true(podworkers_finished_version(P) == v);
	pod_unref(p);
	p = mkpod("u4", "d", "1", "api");
	podworkers_restore(P, p, &(struct pw_restore){ .state = PW_FINISHED });
	assert_true(podworkers_finished_version(P) != v);
	pod_unref(p);
	spin();
}

/* A worker removed from the middle moves the last one into its place: the due syncs and the
 * dispatch still find both others. */
static int
wanted_not_u1(const char *uid, void *arg)
{
	(void)arg;
	return strcmp(uid, "u1") != 0;
}

static void
test_due_after_forget(void **state)
{
	struct pw_view v2, v3;
	const char    *first, *second;
	int64_t        t1, t2;

	(void)state;
	F.auto_done = 1;
	update("u1", "a", "1", PW_UPDATE_CREATE, -1);
	update("u2", "b", "1", PW_UPDATE_CREATE, -1);
	update("u3", "c", "1", PW_UPDATE_CREATE, -1);
	spin();
	assert_int_equal(podworkers_forget(P, wanted_not_u1, NULL), 0);
	spin();
	assert_int_equal(state_of("u1"), PW_FINISHED);
	assert_int_equal(podworkers_forget(P, wanted_not_u1, NULL), 1);
	assert_int_equal(podworkers_count(P), 2);
	assert_int_equal(podworkers_get(P, "u2", &v2), 0);
	assert_int_equal(podworkers_get(P, "u3", &v3), 0);
	assert_true(v2.next_sync_ms > 0 && v3.next_sync_ms > 0);
	if (v2.next_sync_ms == v3.next_sync_ms) {
		assert_int_equal(podworkers_sync_due(P, v2.next_sync_ms), 2);
		spin();
		assert_int_equal(count_kind("sync", "u2"), 2);
		assert_int_equal(count_kind("sync", "u3"), 2);
		return;
	}
	first = v2.next_sync_ms < v3.next_sync_ms ? "u2" : "u3";
	second = v2.next_sync_ms < v3.next_sync_ms ? "u3" : "u2";
	t1 = v2.next_sync_ms < v3.next_sync_ms ? v2.next_sync_ms : v3.next_sync_ms;
	t2 = v2.next_sync_ms < v3.next_sync_ms ? v3.next_sync_ms : v2.next_sync_ms;
	assert_int_equal(podworkers_sync_due(P, t1 - 1), 0);
	assert_int_equal(podworkers_sync_due(P, t1), 1);
	spin();
	assert_int_equal(count_kind("sync", first), 2);
	assert_int_equal(count_kind("sync", second), 1);
	assert_true(podworkers_sync_due(P, t2) >= 1); /* the first's next resync may be due */
	spin();
	assert_int_equal(count_kind("sync", second), 2);
	/* Both resynced: queued again from now, nothing due yet. */
	assert_int_equal(podworkers_sync_due(P, now_mono_ms()), 0);
}

static void
test_static_same_name_waits(void **state)
{
	struct pod *old = mkpod("old", "web-node", "1", "file");
	struct pod *new = mkpod("new", "web-node", "1", "file");

	(void)state;
	podworkers_update(P, old, PW_UPDATE_CREATE, -1);
	spin();
	pw_txn_done(last()->txn, 0, 0, NULL);
	spin();
	/* The manifest was edited: the old UID is removed, the new one added. */
	podworkers_update(P, old, PW_UPDATE_KILL, -1);
	podworkers_update(P, new, PW_UPDATE_CREATE, -1);
	spin();
	assert_int_equal(count_kind("sync", "new"), 0);
	assert_string_equal(last()->kind, "terminating");
	pw_txn_done(last()->txn, 0, 0, NULL);
	spin();
	assert_int_equal(count_kind("sync", "new"), 0);
	assert_string_equal(last()->kind, "terminated");
	pw_txn_done(last()->txn, 0, 0, NULL);
	spin();
	assert_int_equal(count_kind("sync", "new"), 1);
	assert_int_equal(state_of("old"), PW_FINISHED);
	pw_txn_done(last()->txn, 0, 0, NULL);
	spin();
	pod_unref(old);
	pod_unref(new);
}

static void
test_readd_restarts_after_termination(void **state)
{
	(void)state;
	update("u1", "a", "1", PW_UPDATE_CREATE, -1);
	spin();
	pw_txn_done(last()->txn, 0, 0, NULL);
	spin();
	update("u1", "a", "1", PW_UPDATE_KILL, -1);
	spin();
	assert_string_equal(last()->kind, "terminating");
	update("u1", "a", "2", PW_UPDATE_CREATE, -1); /* manifest put back */
	spin();
	assert_string_equal(last()->kind, "terminating");
	pw_txn_done(last()->txn, 0, 0, NULL);
	spin();
	pw_txn_done(last()->txn, 0, 0, NULL);
	spin();
	assert_string_equal(last()->kind, "sync");
	assert_int_equal(last()->type, PW_UPDATE_CREATE);
	assert_string_equal(last()->rv, "2");
	assert_int_equal(state_of("u1"), PW_SYNC);
	pw_txn_done(last()->txn, 0, 0, NULL);
	spin();
	/* Once finished and removed, a create starts it again directly. */
	F.auto_done = 1;
	update("u1", "a", "3", PW_UPDATE_KILL, -1);
	spin();
	assert_int_equal(state_of("u1"), PW_FINISHED);
	update("u1", "a", "4", PW_UPDATE_CREATE, -1);
	spin();
	assert_int_equal(state_of("u1"), PW_SYNC);
	assert_string_equal(last()->rv, "4");
}

static void
test_restore_terminating_keeps_deadline(void **state)
{
	struct pod *p = mkpod("u1", "a", "1", "file");

	(void)state;
	podworkers_restore(P, p,
	    &(struct pw_restore){
	        .state = PW_TERMINATING, .grace_deadline_ms = now_mono_ms() + 4500 });
	spin();
	assert_string_equal(last()->kind, "terminating");
	assert_true(last()->grace >= 4 && last()->grace <= 5);
	/* A restore after the deadline: the grace is over, 0 (kill at once; recovery). */
	pod_unref(p);
	p = mkpod("u2", "b", "1", "file");
	podworkers_restore(P, p,
	    &(struct pw_restore){
	        .state = PW_TERMINATING, .grace_deadline_ms = now_mono_ms() - 10000 });
	spin();
	assert_string_equal(last()->kind, "terminating");
	assert_int_equal(last()->grace, 0);
	pod_unref(p);
	p = mkpod("u3", "c", "1", "file");
	podworkers_restore(P, p, &(struct pw_restore){ .state = PW_SYNC, .grace_deadline_ms = 0 });
	podworkers_restore(P, p,
	    &(struct pw_restore){
	        .state = PW_FINISHED, .grace_deadline_ms = 0 }); /* already known: ignored */
	spin();
	assert_string_equal(last()->kind, "sync");
	assert_int_equal(state_of("u3"), PW_SYNC);
	pod_unref(p);
	pw_txn_done(F.calls[0].txn, 0, 0, NULL);
	pw_txn_done(F.calls[1].txn, 0, 0, NULL);
	pw_txn_done(F.calls[2].txn, 0, 0, NULL);
	spin();
}

static void
test_effective_grace_table(void **state)
{
	static const struct {
		int     has_del, del, has_spec, spec;
		int64_t prev, over, want;
	} cases[] = {
		{ 0, 0, 0, 0, 0, -1, 30 },
		{ 0, 0, 1, 10, 0, -1, 10 },
		{ 1, 5, 1, 10, 0, -1, 5 },
		{ 1, 5, 1, 10, 0, 2, 2 },
		{ 1, 5, 1, 10, 0, 8, 5 },
		{ 0, 0, 1, 10, 3, -1, 3 },  /* never extended */
		{ 0, 0, 1, 0, 0, -1, 1 },   /* at least 1 */
		{ 1, 0, 1, 10, 0, -1, 10 }, /* deletion grace 0 falls back, as the kubelet */
		{ 0, 0, 1, 10, 0, 0, 10 },
	};
	size_t i;

	(void)state;
	for (i = 0; i < nitems(cases); i++) {
		struct pod p;

		memset(&p, 0, sizeof(p));
		p.deletion_grace.set = cases[i].has_del;
		p.deletion_grace.v = cases[i].del;
		p.termination_grace.set = cases[i].has_spec;
		p.termination_grace.v = cases[i].spec;
		assert_int_equal(
		    pw_effective_grace(&p, cases[i].prev, cases[i].over), cases[i].want);
	}
}

static void
test_free_cancels_in_flight(void **state)
{
	(void)state;
	update("u1", "a", "1", PW_UPDATE_CREATE, -1);
	update("u2", "b", "1", PW_UPDATE_CREATE, -1);
	spin();
	assert_int_equal(F.n, 2);
	podworkers_free(P);
	P = NULL;
	assert_int_equal(count_kind("cancel", NULL), 2);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_create_then_resync_queued, setup, teardown),
		cmocka_unit_test_setup_teardown(test_pending_coalesce_latest_wins, setup, teardown),
		cmocka_unit_test_setup_teardown(test_other_pods_progress, setup, teardown),
		cmocka_unit_test_setup_teardown(test_kill_sticky_and_phases, setup, teardown),
		cmocka_unit_test_setup_teardown(test_deletion_timestamp_grace, setup, teardown),
		cmocka_unit_test_setup_teardown(test_failure_backoff_queue, setup, teardown),
		cmocka_unit_test_setup_teardown(test_terminal_sync_terminates, setup, teardown),
		cmocka_unit_test_setup_teardown(test_forget, setup, teardown),
		cmocka_unit_test_setup_teardown(test_finished_version, setup, teardown),
		cmocka_unit_test_setup_teardown(test_due_after_forget, setup, teardown),
		cmocka_unit_test_setup_teardown(test_static_same_name_waits, setup, teardown),
		cmocka_unit_test_setup_teardown(
		    test_readd_restarts_after_termination, setup, teardown),
		cmocka_unit_test_setup_teardown(
		    test_restore_terminating_keeps_deadline, setup, teardown),
		cmocka_unit_test(test_effective_grace_table),
		cmocka_unit_test_setup_teardown(test_free_cancels_in_flight, setup, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
