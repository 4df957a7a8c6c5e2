/* podworkers.c — per-pod state machines: SYNC -> TERMINATING -> TERMINATED -> FINISHED. */
#include <stdlib.h>
#include <string.h>

#include <event2/event.h>

#include "core/log.h"
#include "core/loop.h"
#include "core/strindex.h"
#include "node/podworkers.h"
#include "core/util.h"

struct pw_txn {
	struct podworkers *t_p;
	struct podworker  *t_w;
	const char        *t_kind;
	int                t_done;
	int                t_cancelled; /* by the worker: ends without moving the state */
	int                t_rc;
	unsigned           t_flags;
	char              *t_err;
};

struct podworker {
	char               *w_uid;
	char               *w_fullname; /* ns/name for logs */
	uint64_t            w_namehash; /* of w_fullname: static pods of one name meet */
	const struct pod   *w_pod;      /* the pod of the latest update applied */
	enum pw_state       w_state;
	const struct pod   *w_pending; /* the latest update not yet applied */
	enum pw_update_type w_pending_type;
	int64_t             w_pending_grace; /* KILL override, -1 none */
	int                 w_has_pending;
	struct pw_txn      *w_txn; /* in flight, or NULL */
	int64_t             w_txn_started_ms;
	int                 w_run_now; /* start the phase's transaction at the next dispatch */
	size_t              w_idx;     /* its place in p_workers and p_due */
	int                 w_queued;  /* in p_ready */
	int64_t             w_grace_s; /* in force while terminating; 0 before */
	int64_t             w_grace_deadline_ms;
	char               *w_last_error;
	int                 w_failures;
	int                 w_removed;     /* killed because its source no longer has it */
	const struct pod   *w_restart_pod; /* re-added while terminating: start it afterwards */
	enum pw_update_type w_sync_type;   /* what the next sync_pod is for */
	int                 w_started;     /* a sync transaction has run */
	int                 w_static;      /* a static pod (kubernetes.io/config.source != api) */
};

struct podworkers {
	struct pw_syncer   p_syncer;
	struct pw_options  p_opts;
	struct event      *p_dispatch;
	int                p_dispatch_armed;
	int                p_kick_all; /* re-dispatch every worker (a blocker finished) */
	struct podworker **p_workers;
	int64_t           *p_due; /* each worker's queued retry/resync (0: none), side by side:
	                           * the once a second look for due syncs reads one array,
	                           * not every worker */
	size_t             p_n;
	size_t             p_cap;
	struct podworker **p_ready; /* the workers with something to do, in the order marked:
	                             * a dispatch visits them only */
	size_t           p_nready, p_cap_ready;
	struct event    *p_more;     /* the rest of a dispatch cut short, after other events */
	struct strindex *p_index;    /* p_workers by UID */
	uint64_t         p_version;  /* grows when a worker comes, goes, or its state or pod
	                              * changes */
	uint64_t p_finished_version; /* grows when a worker enters or leaves FINISHED, or a
	                              * FINISHED one comes or goes (never 0) */
};

static void pw_schedule(struct podworkers *);

/* The most one dispatch spends starting and finishing transactions before it lets the loop
 * serve other events (then it goes on where it stopped). */
#define PW_DISPATCH_BUDGET_US 5000

const char *
pw_state_name(enum pw_state s)
{
	switch (s) {
	case PW_SYNC:
		return "sync";
	case PW_TERMINATING:
		return "terminating";
	case PW_TERMINATED:
		return "terminated";
	case PW_FINISHED:
		return "finished";
	}
	return "?";
}

static const char *
pw_update_name(enum pw_update_type t)
{
	static const char *names[] = { "create", "update", "sync", "kill" };

	return (unsigned)t < nitems(names) ? names[t] : "?";
}

int64_t
pw_effective_grace(const struct pod *pod, int64_t prev, int64_t override)
{
	int64_t g = prev;

	if (pod->deletion_grace.set && (g == 0 || pod->deletion_grace.v < g))
		g = pod->deletion_grace.v;
	if (override >= 0 && (g == 0 || override < g))
		g = override;
	if (g == 0)
		g = pod->termination_grace.set ? pod->termination_grace.v : 30;
	if (g < 1)
		g = 1;
	return g;
}

static const char *
pw_key(const void *arg, size_t i)
{
	const struct podworkers *p = arg;

	return p->p_workers[i]->w_uid;
}

static struct podworker *
pw_find(struct podworkers *p, const char *uid, size_t *idx)
{
	size_t i = strindex_find(p->p_index, uid, pw_key, p);

	if (i == STRINDEX_NONE)
		return NULL;
	if (idx != NULL)
		*idx = i;
	return p->p_workers[i];
}

/* After workers left (positions moved). */
static void
pw_reindex(struct podworkers *p)
{
	size_t i;

	strindex_reset(p->p_index);
	for (i = 0; i < p->p_n; i++)
		strindex_add(p->p_index, p->p_workers[i]->w_uid, i);
}

/* Static pods (file or http sources) with the same full name never run at the same time. */
static int
pw_is_static(const struct pod *pod)
{
	const char *src = kvlist_get(&pod->annotations, "kubernetes.io/config.source");

	return src != NULL && strcmp(src, "api") != 0;
}

static struct podworker *
pw_add(struct podworkers *p, const struct pod *pod)
{
	struct podworker *w = xcalloc(1, sizeof(*w));

	w->w_uid = xstrdup(pod->uid);
	xasprintf(&w->w_fullname, "%s/%s", pod->ns != NULL ? pod->ns : "",
	    pod->name != NULL ? pod->name : "");
	w->w_namehash = hash_bytes(w->w_fullname, strlen(w->w_fullname), 0);
	w->w_pod = pod_ref(pod);
	w->w_state = PW_SYNC;
	w->w_pending_grace = -1;
	w->w_sync_type = PW_UPDATE_CREATE;
	w->w_static = pw_is_static(pod);
	if (p->p_n == p->p_cap) {
		p->p_cap = p->p_cap == 0 ? 16 : p->p_cap * 2;
		p->p_workers = xreallocarray(p->p_workers, p->p_cap, sizeof(*p->p_workers));
		p->p_due = xreallocarray(p->p_due, p->p_cap, sizeof(*p->p_due));
	}
	w->w_idx = p->p_n;
	p->p_due[p->p_n] = 0;
	p->p_workers[p->p_n++] = w;
	strindex_add(p->p_index, w->w_uid, p->p_n - 1);
	p->p_version++;
	return w;
}

static void
pw_free_worker(struct podworker *w)
{
	pod_unref(w->w_pod);
	pod_unref(w->w_pending);
	pod_unref(w->w_restart_pod);
	free(w->w_uid);
	free(w->w_fullname);
	free(w->w_last_error);
	free(w);
}

static void
pw_set_due(struct podworkers *p, struct podworker *w, int64_t ms)
{
	p->p_due[w->w_idx] = ms;
}

/* The worker has something to do (an update, a finished transaction, a sync due): the next
 * dispatch visits it. */
static void
pw_mark(struct podworkers *p, struct podworker *w)
{
	if (!w->w_queued) {
		if (p->p_nready == p->p_cap_ready) {
			p->p_cap_ready = p->p_cap_ready == 0 ? 16 : p->p_cap_ready * 2;
			p->p_ready = xreallocarray(p->p_ready, p->p_cap_ready, sizeof(*p->p_ready));
		}
		p->p_ready[p->p_nready++] = w;
		w->w_queued = 1;
	}
	pw_schedule(p);
}

static void
pw_set_state(struct podworkers *p, struct podworker *w, enum pw_state s)
{
	if (w->w_state == s)
		return;
	log_v(2, "pod worker state %s -> %s pod=%s uid=%s", pw_state_name(w->w_state),
	    pw_state_name(s), w->w_fullname, w->w_uid);
	if (w->w_state == PW_FINISHED || s == PW_FINISHED)
		p->p_finished_version++;
	w->w_state = s;
	p->p_version++;
	if (p->p_syncer.state_changed != NULL)
		p->p_syncer.state_changed(
		    p->p_syncer.state_arg, w->w_uid, s, w->w_grace_deadline_ms);
}

/* The durable part of the worker changed without a state change (removed flag, a failure):
 * tell the syncer so that it is stored. */
static void
pw_persist(struct podworkers *p, struct podworker *w)
{
	if (p->p_syncer.state_changed != NULL)
		p->p_syncer.state_changed(
		    p->p_syncer.state_arg, w->w_uid, w->w_state, w->w_grace_deadline_ms);
}

/* A pod that must terminate does not wait for a sync in flight (which may be pulling an
 * image or running a hook): the syncer cancels it, as the kubelet cancels its context. */
static void
pw_interrupt(struct podworkers *p, struct podworker *w)
{
	struct pw_txn *t = w->w_txn;

	if (t == NULL || t->t_done || strcmp(t->t_kind, "sync") != 0 || p->p_syncer.cancel == NULL)
		return;
	log_v(2, "pod %s: sync in flight cancelled for termination", w->w_fullname);
	p->p_syncer.cancel(p->p_syncer.arg, t);
	t->t_done = 1;
	t->t_rc = 0;
	t->t_flags = 0;
	t->t_cancelled = 1;
	pw_mark(p, w);
}

/* Enters TERMINATING (or shortens its grace) and makes the worker run at once. */
static void
pw_terminate(struct podworkers *p, struct podworker *w, int64_t override)
{
	int64_t now = now_mono_ms(), g;

	if (w->w_state >= PW_TERMINATED)
		return;
	g = pw_effective_grace(w->w_pod, w->w_grace_s, override);
	if (w->w_state == PW_TERMINATING && g == w->w_grace_s)
		return;
	if (w->w_state == PW_TERMINATING) {
		int64_t deadline = now + g * 1000;

		/* A shorter grace moves the deadline closer, never further. */
		if (deadline < w->w_grace_deadline_ms)
			w->w_grace_deadline_ms = deadline;
		w->w_grace_s = g;
		log_v(2, "pod %s: grace period shortened to %llds", w->w_fullname, (long long)g);
	} else {
		w->w_grace_s = g;
		w->w_grace_deadline_ms = now + g * 1000;
		log_v(2, "pod %s: terminating with grace %llds", w->w_fullname, (long long)g);
		pw_set_state(p, w, PW_TERMINATING);
	}
	w->w_run_now = 1;
	pw_interrupt(p, w);
}

/* A FINISHED worker whose pod was re-added starts over from SYNC with the new pod. */
static void
pw_restart(struct podworkers *p, struct podworker *w)
{
	log_v(2, "pod %s: starting again after termination uid=%s", w->w_fullname, w->w_uid);
	pod_unref(w->w_pod);
	w->w_pod = w->w_restart_pod;
	w->w_restart_pod = NULL;
	p->p_version++;
	w->w_removed = 0;
	w->w_grace_s = 0;
	w->w_grace_deadline_ms = 0;
	w->w_failures = 0;
	w->w_started = 0;
	pw_set_due(p, w, 0);
	w->w_sync_type = PW_UPDATE_CREATE;
	pw_set_state(p, w, PW_SYNC);
	w->w_run_now = 1;
}

/* Applies the pending update to the worker: the latest pod wins, termination is sticky. */
static void
pw_apply_pending(struct podworkers *p, struct podworker *w)
{
	const struct pod   *pod = w->w_pending;
	enum pw_update_type type = w->w_pending_type;
	int64_t             override = w->w_pending_grace;

	w->w_pending = NULL;
	w->w_has_pending = 0;
	w->w_pending_grace = -1;
	pod_unref(w->w_pod);
	w->w_pod = pod;
	p->p_version++;
	if (type == PW_UPDATE_CREATE || type == PW_UPDATE_UPDATE)
		w->w_sync_type = w->w_sync_type == PW_UPDATE_CREATE ? PW_UPDATE_CREATE : type;
	if (type == PW_UPDATE_KILL || pod->deletion_ts != 0) {
		enum pw_state before = w->w_state;

		if (type == PW_UPDATE_KILL && !w->w_removed) {
			w->w_removed = 1;
			if (before != PW_SYNC)
				pw_persist(p, w); /* no state change will store it */
		}
		pw_terminate(p, w, override);
	} else if (w->w_state == PW_SYNC) {
		w->w_run_now = 1;
	}
}

/* The kubelet's allowStaticPodStart: another worker of the same full name that has started
 * and is not finished (an edited manifest's old UID), or an earlier waiting one, goes first. */
static int
pw_static_blocked(struct podworkers *p, struct podworker *w)
{
	size_t i;
	int    before = 1;

	for (i = 0; i < p->p_n; i++) {
		struct podworker *o = p->p_workers[i];

		if (o == w) {
			before = 0;
			continue;
		}
		if (!o->w_static || o->w_namehash != w->w_namehash ||
		    strcmp(o->w_fullname, w->w_fullname) != 0)
			continue;
		if (o->w_state == PW_FINISHED)
			continue;
		/* Started or terminating: it goes first; of two waiting, the older entry. */
		if (o->w_started || o->w_state != PW_SYNC || before)
			return 1;
	}
	return 0;
}

static void
pw_start(struct podworkers *p, struct podworker *w)
{
	struct pw_txn      *t;
	int64_t             now = now_mono_ms(), left;
	enum pw_update_type type;

	if (w->w_state == PW_FINISHED) {
		w->w_run_now = 0;
		return;
	}
	if (w->w_state == PW_SYNC && !w->w_started && w->w_static && pw_static_blocked(p, w)) {
		/* Stays run_now; dispatched again when the other worker finishes. */
		log_v(4, "pod %s: waiting for the previous static pod of that name to stop",
		    w->w_fullname);
		return;
	}
	t = xcalloc(1, sizeof(*t));
	t->t_p = p;
	t->t_w = w;
	w->w_txn = t;
	w->w_txn_started_ms = now;
	w->w_run_now = 0;
	pw_set_due(p, w, 0);
	switch (w->w_state) {
	case PW_SYNC:
		t->t_kind = "sync";
		type = w->w_sync_type;
		w->w_sync_type = PW_UPDATE_SYNC;
		w->w_started = 1;
		p->p_syncer.sync_pod(p->p_syncer.arg, t, w->w_pod, type);
		break;
	case PW_TERMINATING:
		t->t_kind = "terminating";
		/* What is left of the grace period (a resumed or retried kill); 0 once the
		 * deadline has passed: the runtime kills at once (recovery: a grace period
		 * never restarts, not even from the 2 s minimum). */
		left = (w->w_grace_deadline_ms - now + 999) / 1000;
		if (left < 0)
			left = 0;
		p->p_syncer.sync_terminating(p->p_syncer.arg, t, w->w_pod, left);
		break;
	case PW_TERMINATED:
		t->t_kind = "terminated";
		p->p_syncer.sync_terminated(p->p_syncer.arg, t, w->w_pod);
		break;
	default:
		fatalx("%s: pod %s: bad state %d", __func__, w->w_fullname, w->w_state);
	}
}

static int64_t
pw_jitter(int64_t ms)
{
	return ms + (int64_t)(random() % (ms / 2 + 1));
}

/* A transaction ended: move the state machine. */
static void
pw_finish(struct podworkers *p, struct podworker *w)
{
	struct pw_txn *t = w->w_txn;
	int64_t        now = now_mono_ms();

	w->w_txn = NULL;
	if (t->t_cancelled) {
		/* Interrupted for termination: the terminating phase runs next. */
	} else if (t->t_rc != 0) {
		w->w_failures++;
		free(w->w_last_error);
		w->w_last_error = xstrdup(t->t_err != NULL ? t->t_err : "unknown error");
		pw_set_due(p, w, now + pw_jitter(p->p_opts.backoff_ms));
		log_v(2, "pod %s: %s failed (%d in a row), retry in %llds: %s", w->w_fullname,
		    t->t_kind, w->w_failures, (long long)((p->p_due[w->w_idx] - now) / 1000),
		    w->w_last_error);
		pw_persist(p, w);
	} else {
		w->w_failures = 0;
		xfree_str(&w->w_last_error);
		switch (w->w_state) {
		case PW_SYNC:
			if (t->t_flags & PW_DONE_TERMINAL)
				pw_terminate(p, w, -1);
			else
				pw_set_due(p, w, now + pw_jitter(p->p_opts.resync_ms));
			break;
		case PW_TERMINATING:
			pw_set_state(p, w, PW_TERMINATED);
			w->w_run_now = 1;
			break;
		case PW_TERMINATED:
			pw_set_state(p, w, PW_FINISHED);
			/* A static pod of the same name may be waiting for this one. */
			p->p_kick_all = 1;
			if (w->w_restart_pod != NULL)
				pw_restart(p, w);
			break;
		default:
			break;
		}
	}
	free(t->t_err);
	free(t);
}

static void
pw_dispatch(evutil_socket_t fd, short what, void *arg)
{
	struct podworkers *p = arg;
	int64_t            t0 = now_mono_us();
	size_t             i, n;

	(void)fd;
	(void)what;
	p->p_dispatch_armed = 0;
	p->p_kick_all = 0;
	loop_note("pod workers");
	/* The workers marked so far, in the order marked (those marked meanwhile wait for the
	 * next dispatch, which their mark arms); a burst of pods is started over several turns
	 * (PW_DISPATCH_BUDGET_US each, less once the turn's shared budget is spent: see
	 * loop_yield_due), the rest after the events that came meanwhile. */
	for (i = 0, n = p->p_nready; i < n; i++) {
		struct podworker *w = p->p_ready[i];
		int               acted = 0;

		w->w_queued = 0;
		if (w->w_txn != NULL && w->w_txn->t_done) {
			pw_finish(p, w);
			acted = 1;
		}
		if (w->w_txn == NULL && w->w_has_pending) {
			pw_apply_pending(p, w);
			acted = 1;
		}
		if (w->w_txn == NULL && w->w_run_now) {
			pw_start(p, w);
			acted = 1;
		}
		if (acted && loop_yield_due(t0, PW_DISPATCH_BUDGET_US) && i + 1 < n) {
			struct timeval now = { 0, 0 };

			i++;
			evtimer_add(p->p_more, &now);
			break;
		}
	}
	/* What was visited leaves the list; the rest (cut short, or marked meanwhile) stays. */
	memmove(p->p_ready, p->p_ready + i, (p->p_nready - i) * sizeof(*p->p_ready));
	p->p_nready -= i;
	loop_note(NULL);
	if (p->p_kick_all)
		for (i = 0; i < p->p_n; i++)
			pw_mark(p, p->p_workers[i]);
}

static void
pw_schedule(struct podworkers *p)
{
	if (p->p_dispatch_armed)
		return;
	p->p_dispatch_armed = 1;
	event_active(p->p_dispatch, EV_TIMEOUT, 0);
}

struct podworkers *
podworkers_new(struct event_base *base, const struct pw_syncer *s, const struct pw_options *o)
{
	struct podworkers *p = xcalloc(1, sizeof(*p));

	p->p_syncer = *s;
	p->p_opts = *o;
	if (p->p_opts.backoff_ms <= 0)
		p->p_opts.backoff_ms = 10000;
	if (p->p_opts.resync_ms <= 0)
		p->p_opts.resync_ms = 60000;
	if ((p->p_dispatch = event_new(base, -1, 0, pw_dispatch, p)) == NULL)
		fatalx("%s: event_new failed", __func__);
	event_priority_set(p->p_dispatch, LOOP_PRI_NORMAL);
	if ((p->p_more = evtimer_new(base, pw_dispatch, p)) == NULL)
		fatalx("%s: evtimer_new failed", __func__);
	event_priority_set(p->p_more, LOOP_PRI_NORMAL);
	p->p_index = strindex_new();
	p->p_finished_version = 1;
	return p;
}

void
podworkers_free(struct podworkers *p)
{
	size_t i;

	if (p == NULL)
		return;
	for (i = 0; i < p->p_n; i++) {
		struct podworker *w = p->p_workers[i];

		if (w->w_txn != NULL) {
			if (!w->w_txn->t_done && p->p_syncer.cancel != NULL)
				p->p_syncer.cancel(p->p_syncer.arg, w->w_txn);
			free(w->w_txn->t_err);
			free(w->w_txn);
		}
		pw_free_worker(w);
	}
	free(p->p_workers);
	free(p->p_due);
	free(p->p_ready);
	strindex_free(p->p_index);
	event_free(p->p_dispatch);
	event_free(p->p_more);
	free(p);
}

void
podworkers_update(
    struct podworkers *p, const struct pod *pod, enum pw_update_type type, int64_t grace_override)
{
	struct podworker *w;

	if (pod->uid == NULL || *pod->uid == '\0')
		fatalx("%s: pod without a UID", __func__);
	if ((w = pw_find(p, pod->uid, NULL)) == NULL) {
		if (type == PW_UPDATE_KILL && pod->deletion_ts == 0) {
			/* Killing a pod we never ran still needs a terminating pass: the runtime
			 * may hold its containers (an orphan from before a restart). */
			log_v(2, "pod %s/%s: kill for an unknown pod", pod->ns, pod->name);
		}
		w = pw_add(p, pod);
		log_v(2, "pod worker created pod=%s uid=%s", w->w_fullname, w->w_uid);
		if (p->p_syncer.state_changed != NULL)
			p->p_syncer.state_changed(p->p_syncer.state_arg, w->w_uid, PW_SYNC, 0);
	}
	log_v(4, "pod %s: update %s queued", w->w_fullname, pw_update_name(type));
	if (type == PW_UPDATE_CREATE && pod->deletion_ts == 0 &&
	    (w->w_removed || (w->w_has_pending && w->w_pending_type == PW_UPDATE_KILL))) {
		/* The same UID wanted again after its source removed it (a static manifest
		 * put back): termination is sticky, so it runs again once that is over. */
		log_v(2, "pod %s: re-added while %s; restart requested", w->w_fullname,
		    pw_state_name(w->w_state));
		pod_ref(pod); /* before the unref: pod may be the one it replaces */
		pod_unref(w->w_restart_pod);
		w->w_restart_pod = pod;
		if (w->w_state == PW_FINISHED && w->w_txn == NULL && !w->w_has_pending)
			pw_restart(p, w);
		pw_mark(p, w);
		return;
	}
	/* Coalesce: the latest pod wins, but a kill (and its shortest grace) is sticky. */
	if (w->w_has_pending) {
		if (w->w_pending_type == PW_UPDATE_KILL && type != PW_UPDATE_KILL) {
			type = PW_UPDATE_KILL;
			grace_override = w->w_pending_grace;
		} else if (w->w_pending_type == PW_UPDATE_KILL && w->w_pending_grace >= 0 &&
		    (grace_override < 0 || w->w_pending_grace < grace_override)) {
			grace_override = w->w_pending_grace;
		}
	}
	pod_ref(pod); /* before the unref: pod may be the one it replaces */
	pod_unref(w->w_pending);
	w->w_pending = pod;
	w->w_pending_type = type;
	w->w_pending_grace = grace_override;
	w->w_has_pending = 1;
	if ((type == PW_UPDATE_KILL || pod->deletion_ts != 0) && w->w_state == PW_SYNC)
		pw_interrupt(p, w);
	pw_mark(p, w);
}

void
podworkers_restore(struct podworkers *p, const struct pod *pod, const struct pw_restore *r)
{
	struct podworker *w = pw_find(p, pod->uid, NULL);
	int64_t           now = now_mono_ms();

	if (w != NULL)
		return;
	w = pw_add(p, pod);
	w->w_state = r->state;
	if (r->state == PW_FINISHED)
		p->p_finished_version++;
	w->w_removed = r->removed != 0;
	w->w_failures = r->failures;
	w->w_last_error = xstrdup(r->last_error);
	if (r->state == PW_TERMINATING) {
		w->w_grace_deadline_ms = r->grace_deadline_ms;
		w->w_grace_s = pw_effective_grace(pod, 0, -1);
	}
	w->w_run_now = r->state != PW_FINISHED;
	if (r->state == PW_SYNC && r->failures > 0 && r->next_sync_ms > now) {
		/* A failing pod keeps its backoff; termination never waits for one. */
		w->w_run_now = 0;
		pw_set_due(p, w, r->next_sync_ms);
	}
	log_v(2, "pod worker restored pod=%s uid=%s state=%s%s", w->w_fullname, w->w_uid,
	    pw_state_name(r->state), w->w_removed ? " (removed)" : "");
	pw_mark(p, w);
}

int
podworkers_sync_due(struct podworkers *p, int64_t now_ms)
{
	size_t i;
	int    n = 0;

	for (i = 0; i < p->p_n; i++) {
		struct podworker *w;

		if (p->p_due[i] == 0 || p->p_due[i] > now_ms)
			continue;
		w = p->p_workers[i];
		if (w->w_txn == NULL && w->w_state != PW_FINISHED) {
			pw_set_due(p, w, 0);
			w->w_run_now = 1;
			pw_mark(p, w);
			n++;
		}
	}
	return n;
}

void
podworkers_kick(struct podworkers *p, const char *uid)
{
	struct podworker *w = pw_find(p, uid, NULL);

	if (w == NULL || w->w_state == PW_FINISHED)
		return;
	w->w_run_now = 1;
	pw_mark(p, w);
}

int
podworkers_forget(struct podworkers *p, int (*is_wanted)(const char *, void *), void *arg)
{
	size_t i = 0;
	int    removed = 0;

	/* First the finished workers go (positions move: the index is rebuilt once)... */
	while (i < p->p_n) {
		struct podworker *w = p->p_workers[i];

		if (!(w->w_state == PW_FINISHED && w->w_txn == NULL && !w->w_has_pending) ||
		    is_wanted(w->w_uid, arg)) {
			i++;
			continue;
		}
		log_v(2, "pod worker removed pod=%s uid=%s", w->w_fullname, w->w_uid);
		if (w->w_queued) {
			size_t k;

			for (k = 0; p->p_ready[k] != w; k++)
				;
			memmove(p->p_ready + k, p->p_ready + k + 1,
			    (--p->p_nready - k) * sizeof(*p->p_ready));
		}
		pw_free_worker(w);
		p->p_workers[i] = p->p_workers[--p->p_n];
		p->p_due[i] = p->p_due[p->p_n];
		if (i < p->p_n)
			p->p_workers[i]->w_idx = i; /* the last one moved here */
		removed++;
	}
	if (removed > 0) {
		pw_reindex(p);
		p->p_version++;
		p->p_finished_version++; /* only FINISHED workers were removed */
	}
	/* ...then the unwanted ones still syncing are killed. */
	for (i = 0; i < p->p_n; i++) {
		struct podworker *w = p->p_workers[i];

		if (w->w_state == PW_SYNC &&
		    !(w->w_has_pending && w->w_pending_type == PW_UPDATE_KILL) &&
		    !is_wanted(w->w_uid, arg))
			podworkers_update(p, w->w_pod, PW_UPDATE_KILL, -1);
	}
	return removed;
}

void
pw_txn_done(struct pw_txn *t, int rc, unsigned flags, const char *err)
{
	if (t->t_done)
		fatalx("%s: transaction completed twice", __func__);
	t->t_done = 1;
	t->t_rc = rc;
	t->t_flags = flags;
	t->t_err = xstrdup(err);
	/* The dispatcher finishes it on its next pass, never inside the syncer's call. */
	pw_mark(t->t_p, t->t_w);
}

const char *
pw_txn_uid(const struct pw_txn *t)
{
	return t->t_w->w_uid;
}

static void
pw_fill_view(const struct podworkers *p, const struct podworker *w, struct pw_view *v)
{
	memset(v, 0, sizeof(*v));
	v->uid = w->w_uid;
	v->pod = w->w_pod;
	v->state = w->w_state;
	v->working = w->w_txn != NULL;
	v->txn_kind = w->w_txn != NULL ? w->w_txn->t_kind : NULL;
	v->txn_started_ms = w->w_txn != NULL ? w->w_txn_started_ms : 0;
	v->has_pending = w->w_has_pending;
	v->pending_type = w->w_pending_type;
	v->next_sync_ms = p->p_due[w->w_idx];
	v->grace_seconds = w->w_grace_s;
	v->grace_deadline_ms = w->w_grace_deadline_ms;
	v->last_error = w->w_last_error;
	v->failures = w->w_failures;
	v->removed = w->w_removed;
}

int
podworkers_get(struct podworkers *p, const char *uid, struct pw_view *v)
{
	struct podworker *w = pw_find(p, uid, NULL);

	if (w == NULL)
		return -1;
	pw_fill_view(p, w, v);
	return 0;
}

void
podworkers_foreach(struct podworkers *p, void (*cb)(const struct pw_view *, void *), void *arg)
{
	struct pw_view v;
	size_t         i;

	for (i = 0; i < p->p_n; i++) {
		pw_fill_view(p, p->p_workers[i], &v);
		cb(&v, arg);
	}
}

size_t
podworkers_count(struct podworkers *p)
{
	return p->p_n;
}

uint64_t
podworkers_version(const struct podworkers *p)
{
	return p->p_version;
}

uint64_t
podworkers_finished_version(const struct podworkers *p)
{
	return p->p_finished_version;
}
