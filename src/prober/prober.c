/* prober.c — the probe manager: workers per container and probe kind, on loop timers.
 * The checks themselves (exec, httpGet, tcpSocket, grpc) are in checks.c. */
#include <sys/queue.h>

#include <event2/event.h>
#include <stdlib.h>
#include <string.h>

#include "node/events.h"
#include "core/log.h"
#include "core/strindex.h"
#include "prober/prober.h"
#include "prober/internal.h"
#include "core/util.h"

static const char *const pr_kind_names[PROBE_NKINDS] = { "liveness", "readiness", "startup" };
static const char *const pr_kind_titles[PROBE_NKINDS] = { "Liveness", "Readiness", "Startup" };

const char *
probe_kind_name(enum probe_kind k)
{
	return k < PROBE_NKINDS ? pr_kind_names[k] : "?";
}

static const char *
pr_res_name(enum probe_res r)
{
	switch (r) {
	case PROBE_NONE:
		return "none";
	case PROBE_SUCCESS:
		return "success";
	case PROBE_FAILURE:
		return "failure";
	}
	return "?";
}

/* ---- spec copies ---- */

static void
pr_spec_clear(struct pr_spec *s)
{
	size_t i;

	for (i = 0; i < s->ps_argc; i++)
		free(s->ps_argv[i]);
	free(s->ps_argv);
	free(s->ps_host);
	free(s->ps_path);
	free(s->ps_scheme);
	for (i = 0; i < s->ps_nheaders; i++) {
		free((char *)s->ps_headers[i].name);
		free((char *)s->ps_headers[i].value);
	}
	free(s->ps_headers);
	free(s->ps_grpc_service);
	memset(s, 0, sizeof(*s));
}

/* The port of a probe: a number, or a named container port (0 when not found). */
static int
pr_spec_port(const struct container *c, const struct int_or_str *p)
{
	size_t i;

	if (!p->is_str)
		return p->num;
	for (i = 0; i < c->c_nports; i++)
		if (c->c_ports[i].name != NULL && p->str != NULL &&
		    strcmp(c->c_ports[i].name, p->str) == 0)
			return c->c_ports[i].container_port;
	return 0;
}

static void
pr_spec_copy(struct pr_spec *s, const struct container *c, const struct probe *p)
{
	const struct handler *h = &p->pr_handler;
	size_t                i;

	memset(s, 0, sizeof(*s));
	s->ps_kind = h->h_kind;
	if (h->h_exec.n > 0) {
		s->ps_argv = xcalloc(h->h_exec.n, sizeof(*s->ps_argv));
		for (i = 0; i < h->h_exec.n; i++)
			s->ps_argv[i] = xstrdup(h->h_exec.v[i] != NULL ? h->h_exec.v[i] : "");
		s->ps_argc = h->h_exec.n;
	}
	s->ps_host = xstrdup(h->h_host != NULL && *h->h_host != '\0' ? h->h_host : NULL);
	s->ps_path = xstrdup(h->h_path != NULL && *h->h_path != '\0' ? h->h_path : "/");
	s->ps_scheme = xstrdup(h->h_scheme != NULL ? h->h_scheme : "HTTP");
	s->ps_port = h->h_kind == HANDLER_GRPC ? h->h_grpc_port : pr_spec_port(c, &h->h_port);
	if (h->h_nheaders > 0) {
		s->ps_headers = xcalloc(h->h_nheaders, sizeof(*s->ps_headers));
		for (i = 0; i < h->h_nheaders; i++) {
			s->ps_headers[i].name =
			    xstrdup(h->h_headers[i].name != NULL ? h->h_headers[i].name : "");
			s->ps_headers[i].value =
			    xstrdup(h->h_headers[i].value != NULL ? h->h_headers[i].value : "");
		}
		s->ps_nheaders = h->h_nheaders;
	}
	s->ps_grpc_service = xstrdup(h->h_grpc_service != NULL ? h->h_grpc_service : "");
	s->ps_initial_delay = p->pr_initial_delay > 0 ? p->pr_initial_delay : 0;
	s->ps_timeout = p->pr_timeout > 0 ? p->pr_timeout : 1;
	s->ps_period = p->pr_period > 0 ? p->pr_period : 10;
	s->ps_success_threshold = p->pr_success_threshold > 0 ? p->pr_success_threshold : 1;
	s->ps_failure_threshold = p->pr_failure_threshold > 0 ? p->pr_failure_threshold : 3;
}

static const struct probe *
pr_container_probe(const struct container *c, enum probe_kind k)
{
	switch (k) {
	case PROBE_LIVENESS:
		return c->c_liveness;
	case PROBE_READINESS:
		return c->c_readiness;
	case PROBE_STARTUP:
		return c->c_startup;
	default:
		fatalx("%s: bad probe kind %d", __func__, k);
	}
}

/* ---- pods and workers ---- */

static const char *
pr_pod_key(const void *arg, size_t i)
{
	const struct prober *p = arg;

	return p->p_podv[i]->pp_uid;
}

static struct pr_pod *
pr_pod_lookup(struct prober *p, const char *uid)
{
	size_t i = strindex_find(p->p_index, uid, pr_pod_key, p);

	return i != STRINDEX_NONE ? p->p_podv[i] : NULL;
}

static void
pr_pod_index(struct prober *p, struct pr_pod *pp)
{
	if (p->p_npodv == p->p_podv_cap) {
		p->p_podv_cap = p->p_podv_cap == 0 ? 16 : 2 * p->p_podv_cap;
		p->p_podv = xreallocarray(p->p_podv, p->p_podv_cap, sizeof(*p->p_podv));
	}
	pp->pp_pos = p->p_npodv;
	p->p_podv[p->p_npodv++] = pp;
	strindex_add(p->p_index, pp->pp_uid, pp->pp_pos);
}

/* The last of p_podv takes pp's place. */
static void
pr_pod_unindex(struct prober *p, struct pr_pod *pp)
{
	struct pr_pod *last = p->p_podv[--p->p_npodv];

	strindex_remove(p->p_index, pp->pp_uid, pp->pp_pos);
	if (last == pp)
		return;
	strindex_move(p->p_index, last->pp_uid, last->pp_pos, pp->pp_pos);
	last->pp_pos = pp->pp_pos;
	p->p_podv[pp->pp_pos] = last;
}

/* What prober_probe_states gives for pp changed (a worker came or went, a result or a
 * container ID changed). */
static void
pr_pod_changed(struct pr_pod *pp)
{
	pp->pp_version = ++pp->pp_prober->p_version;
}

static void
pr_worker_free(struct pr_worker *w)
{
	if (w == NULL)
		return;
	if (w->w_check != NULL)
		pr_check_cancel(w->w_check);
	if (w->w_timer != NULL)
		event_free(w->w_timer);
	if (w->w_first != NULL)
		event_free(w->w_first);
	w->w_pod->pp_prober->p_nworkers--;
	pr_spec_clear(&w->w_spec);
	free(w->w_cname);
	free(w->w_cid);
	free(w->w_pod_ip);
	free(w);
}

static void
pr_pod_free(struct pr_pod *pp)
{
	struct pr_worker *w;

	while ((w = LIST_FIRST(&pp->pp_workers)) != NULL) {
		LIST_REMOVE(w, w_entry);
		pr_worker_free(w);
	}
	LIST_REMOVE(pp, pp_entry);
	pr_pod_unindex(pp->pp_prober, pp);
	pp->pp_prober->p_version++; /* its results are gone */
	pod_unref(pp->pp_pod);
	free(pp->pp_states);
	free(pp->pp_uid);
	free(pp);
}

static void
pr_kick_cb(evutil_socket_t fd, short what, void *arg)
{
	struct prober *p = arg;
	struct pr_pod *pp;
	char         **uids = NULL;
	size_t         n = 0, i;

	(void)fd;
	(void)what;
	/* Copy first: the hook may call back into the prober. */
	LIST_FOREACH(pp, &p->p_pods, pp_entry)
	{
		if (!pp->pp_dirty)
			continue;
		pp->pp_dirty = 0;
		uids = xreallocarray(uids, n + 1, sizeof(*uids));
		uids[n++] = xstrdup(pp->pp_uid);
	}
	for (i = 0; i < n; i++) {
		if (p->p_notify != NULL)
			p->p_notify(uids[i], p->p_notify_arg);
		free(uids[i]);
	}
	free(uids);
}

/* A liveness or startup failure holds the worker until its container is replaced (a new
 * container ID resets it): the one place the hold changes. */
static void
pr_worker_set_hold(struct pr_worker *w, int on)
{
	if (w->w_on_hold != on)
		log_v(3, "probe pod=%s container=%s %s: %s", w->w_pod->pp_uid, w->w_cname,
		    probe_kind_name(w->w_kind),
		    on ? "held until the container is replaced" : "released");
	w->w_on_hold = on;
}

/* The one place a worker's result changes after its reset; logs the transition. */
static void
pr_worker_set_result(struct pr_worker *w, enum probe_res r)
{
	struct prober *p = w->w_pod->pp_prober;

	if (w->w_result == r)
		return;
	log_v(2, "probe pod=%s/%s container=%s %s: %s -> %s", w->w_pod->pp_pod->ns,
	    w->w_pod->pp_pod->name, w->w_cname, probe_kind_name(w->w_kind),
	    pr_res_name(w->w_result), pr_res_name(r));
	w->w_result = r;
	pr_pod_changed(w->w_pod);
	p->p_stats.changes++;
	w->w_pod->pp_dirty = 1;
	event_active(p->p_kick_ev, EV_TIMEOUT, 0);
}

static struct pr_worker *
pr_pod_worker(struct pr_pod *pp, const char *cname, enum probe_kind k)
{
	struct pr_worker *w;

	LIST_FOREACH(w, &pp->pp_workers, w_entry)
	if (w->w_kind == k && strcmp(w->w_cname, cname) == 0)
		return w;
	return NULL;
}

/* The container has started: no startup probe, or it succeeded. */
static int
pr_worker_started(struct pr_worker *w)
{
	struct pr_worker *s = pr_pod_worker(w->w_pod, w->w_cname, PROBE_STARTUP);

	return s == NULL || s->w_result == PROBE_SUCCESS;
}

/* The worker's logic after one check (the kubelet's doProbe tail): thresholds, hold. */
static void
pr_worker_done(enum pr_outcome o, const char *output, void *arg)
{
	struct pr_worker *w = arg;
	struct prober    *p = w->w_pod->pp_prober;
	enum probe_res    r;
	char              msg[EVENTS_MAX_MESSAGE];

	w->w_check = NULL;
	if (o == PR_ERROR) {
		/* A prober error (runtime unavailable): the result is thrown away. */
		log_v(3, "probe pod=%s container=%s %s errored: %s", w->w_pod->pp_uid, w->w_cname,
		    probe_kind_name(w->w_kind), output != NULL ? output : "");
		return;
	}
	p->p_stats.runs++;
	r = o == PR_SUCCESS ? PROBE_SUCCESS : PROBE_FAILURE;
	if (r == PROBE_FAILURE) {
		p->p_stats.failures++;
		snprintf(msg, sizeof(msg), "%s", output != NULL ? output : "");
		log_v(2, "probe failed pod=%s/%s container=%s %s: %s", w->w_pod->pp_pod->ns,
		    w->w_pod->pp_pod->name, w->w_cname, probe_kind_name(w->w_kind), msg);
		events_pod(p->p_events, w->w_pod->pp_pod, w->w_cname, EV_WARNING, "Unhealthy",
		    "%s probe failed: %s", pr_kind_titles[w->w_kind], msg);
	}
	w->w_run = pr_threshold_step(&w->w_last, w->w_run, r);
	if ((r == PROBE_FAILURE && w->w_run < w->w_spec.ps_failure_threshold) ||
	    (r == PROBE_SUCCESS && w->w_run < w->w_spec.ps_success_threshold))
		return;
	pr_worker_set_result(w, r);
	if (r == PROBE_FAILURE && (w->w_kind == PROBE_LIVENESS || w->w_kind == PROBE_STARTUP)) {
		pr_worker_set_hold(w, 1);
		w->w_run = 0;
	}
}

int
pr_threshold_step(enum probe_res *last, int run, enum probe_res r)
{
	if (*last == r)
		return run + 1;
	*last = r;
	return 1;
}

static void
pr_worker_tick(evutil_socket_t fd, short what, void *arg)
{
	struct pr_worker    *w = arg;
	struct prober       *p = w->w_pod->pp_prober;
	struct pr_check_args a;
	int64_t              now_s;

	(void)fd;
	(void)what;
	if (w->w_check != NULL || w->w_on_hold)
		return;
	if (w->w_kind == PROBE_STARTUP) {
		if (w->w_result == PROBE_SUCCESS)
			return; /* not run again once the container has started */
	} else if (!pr_worker_started(w)) {
		return;
	}
	now_s = now_wall_ns() / 1000000000;
	if (w->w_started_s > 0 && now_s - w->w_started_s < w->w_spec.ps_initial_delay)
		return;
	memset(&a, 0, sizeof(a));
	a.base = p->p_base;
	a.cri = p->p_cri;
	a.spec = &w->w_spec;
	a.container_id = w->w_cid;
	a.pod_ip = w->w_pod_ip;
	a.fake = p->p_fake;
	a.fake_cancel = p->p_fake_cancel;
	a.fake_arg = p->p_fake_arg;
	a.uid = w->w_pod->pp_uid;
	a.container = w->w_cname;
	a.kind = w->w_kind;
	w->w_check = pr_check_start(&a, pr_worker_done, w);
}

#define PROBER_READY_IDS_MS 60000

static int
pr_ready_id_known(const struct prober *p, const char *cid)
{
	size_t i;

	if (p->p_ready_ids.n > 0 && now_mono_ms() - p->p_ready_ids_ms > PROBER_READY_IDS_MS)
		return 0; /* a minute has passed (prober_sweep forgets them) */
	for (i = 0; cid != NULL && i < p->p_ready_ids.n; i++)
		if (strcmp(p->p_ready_ids.v[i], cid) == 0)
			return 1;
	return 0;
}

void
prober_assume_ready(struct prober *p, const char *container_id)
{
	if (container_id == NULL || *container_id == '\0' || pr_ready_id_known(p, container_id))
		return;
	p->p_ready_ids.v = xreallocarray(p->p_ready_ids.v, p->p_ready_ids.n + 1, sizeof(char *));
	p->p_ready_ids.v[p->p_ready_ids.n++] = xstrdup(container_id);
	p->p_ready_ids_ms = now_mono_ms();
}

static void
pr_worker_reset(struct pr_worker *w, const struct container *c, const struct rt_container *rc,
    const char *pod_ip)
{
	struct prober *p = w->w_pod->pp_prober;
	struct timeval tv = { 0, 0 };

	if (w->w_check != NULL) {
		pr_check_cancel(w->w_check);
		w->w_check = NULL;
	}
	pr_spec_clear(&w->w_spec);
	pr_spec_copy(&w->w_spec, c, pr_container_probe(c, w->w_kind));
	free(w->w_cid);
	w->w_cid = xstrdup(rc->id);
	free(w->w_pod_ip);
	w->w_pod_ip = xstrdup(pod_ip);
	w->w_started_s = rc->started_at / 1000000000;
	pr_worker_set_hold(w, 0);
	w->w_run = 0;
	w->w_last = PROBE_NONE;
	/* The kubelet's initial values: not ready until proven, alive until proven dead. */
	w->w_result = w->w_kind == PROBE_READINESS ? PROBE_FAILURE
	    : w->w_kind == PROBE_LIVENESS          ? PROBE_SUCCESS
	                                           : PROBE_NONE;
	if (w->w_kind != PROBE_LIVENESS && pr_ready_id_known(p, w->w_cid)) {
		/* Ready when the previous daemon stopped: its startup probe had succeeded and
		 * readiness holds until a check says otherwise (no NotReady blip on restart). */
		w->w_result = PROBE_SUCCESS;
		if (w->w_kind == PROBE_STARTUP)
			w->w_last = PROBE_SUCCESS;
	}
	pr_pod_changed(w->w_pod);
	w->w_pod->pp_dirty = 1;
	w->w_pod->pp_respec = 1;
	event_active(p->p_kick_ev, EV_TIMEOUT, 0);
	if (w->w_timer != NULL)
		event_free(w->w_timer);
	w->w_timer = event_new(p->p_base, -1, EV_PERSIST, pr_worker_tick, w);
	tv.tv_sec = w->w_spec.ps_period;
	event_add(w->w_timer, &tv);
	/* The first check runs at once (the kubelet probes when the worker starts); a separate
	 * event, since activating the periodic one by hand would shift its schedule. */
	if (w->w_first == NULL)
		w->w_first = event_new(p->p_base, -1, 0, pr_worker_tick, w);
	event_active(w->w_first, EV_TIMEOUT, 0);
	log_v(3, "probe worker pod=%s container=%s id=%s %s period=%ds result=%s", w->w_pod->pp_uid,
	    w->w_cname, w->w_cid, probe_kind_name(w->w_kind), w->w_spec.ps_period,
	    pr_res_name(w->w_result));
}

static void
pr_sync_container(struct pr_pod *pp, const struct container *c, const struct rt_pod_status *rt,
    const char *pod_ip)
{
	const struct rt_container *rc = rt != NULL ? rt_find_container(rt, c->c_name) : NULL;
	int               running = rc != NULL && rc->state == RT_RUNNING && rc->id != NULL;
	struct pr_worker *w;
	enum probe_kind   k;

	for (k = 0; k < PROBE_NKINDS; k++) {
		const struct probe *pr = pr_container_probe(c, k);

		w = pr_pod_worker(pp, c->c_name, k);
		if (pr == NULL || !running) {
			if (w != NULL) {
				LIST_REMOVE(w, w_entry);
				pr_worker_free(w);
				pr_pod_changed(pp);
			}
			continue;
		}
		if (w == NULL) {
			w = xcalloc(1, sizeof(*w));
			w->w_pod = pp;
			w->w_kind = k;
			w->w_cname = xstrdup(c->c_name);
			LIST_INSERT_HEAD(&pp->pp_workers, w, w_entry);
			pp->pp_prober->p_nworkers++;
		}
		if (w->w_cid == NULL || strcmp(w->w_cid, rc->id) != 0)
			pr_worker_reset(w, c, rc, pod_ip);
	}
}

/* A worker whose container left the spec. */
static int
pr_pod_has_container(const struct pod *pod, const char *name)
{
	return pod_find_container(pod, name) != NULL;
}

void
prober_sync_pod(struct prober *p, const struct pod *pod, const struct rt_pod_status *rt, int active)
{
	struct pr_pod    *pp;
	struct pr_worker *w, *next;
	const char       *ip = NULL;
	size_t            i;
	int               any = 0;

	if (pod == NULL || pod->uid == NULL)
		return;
	pp = pr_pod_lookup(p, pod->uid);
	if (pp != NULL)
		pp->pp_seen = p->p_generation;
	if (!active) {
		if (pp != NULL)
			pr_pod_free(pp);
		return;
	}
	for (i = 0; i < pod->ncontainers; i++) {
		const struct container *c = &pod->containers[i];
		any |= c->c_liveness != NULL || c->c_readiness != NULL || c->c_startup != NULL;
	}
	for (i = 0; i < pod->ninit_containers; i++) {
		const struct container *c = &pod->init_containers[i];
		any |= c->c_liveness != NULL || c->c_readiness != NULL || c->c_startup != NULL;
	}
	if (!any) {
		if (pp != NULL)
			pr_pod_free(pp);
		return;
	}
	if (pp == NULL) {
		pp = xcalloc(1, sizeof(*pp));
		pp->pp_prober = p;
		pp->pp_uid = xstrdup(pod->uid);
		pp->pp_pod = pod_ref(pod);
		pp->pp_seen = p->p_generation;
		LIST_INIT(&pp->pp_workers);
		LIST_INSERT_HEAD(&p->p_pods, pp, pp_entry);
		pr_pod_index(p, pp);
	}
	if (rt != NULL && rt->nsandboxes > 0 && rt->sandboxes[0].ip != NULL &&
	    rt->sandboxes[0].ip[0] != '\0')
		ip = rt->sandboxes[0].ip;
	else if (pod->host_network)
		ip = "127.0.0.1";
	for (i = 0; i < pod->ncontainers; i++)
		pr_sync_container(pp, &pod->containers[i], rt, ip);
	if (pp->pp_respec) {
		/* A container was (re)started: keep the newest spec for events. */
		pp->pp_respec = 0;
		pod_ref(pod);
		pod_unref(pp->pp_pod);
		pp->pp_pod = pod;
	}
	for (i = 0; i < pod->ninit_containers; i++) {
		const struct container *c = &pod->init_containers[i];

		/* Only sidecars (restartPolicy Always) are probed among init containers. */
		if (c->c_has_restart_policy && c->c_restart_policy == RESTART_ALWAYS)
			pr_sync_container(pp, c, rt, ip);
	}
	for (w = LIST_FIRST(&pp->pp_workers); w != NULL; w = next) {
		next = LIST_NEXT(w, w_entry);
		if (!pr_pod_has_container(pod, w->w_cname)) {
			LIST_REMOVE(w, w_entry);
			pr_worker_free(w);
			pr_pod_changed(pp);
		}
	}
}

void
prober_sweep(struct prober *p)
{
	struct pr_pod *pp, *next;

	if (p->p_ready_ids.n > 0 && now_mono_ms() - p->p_ready_ids_ms > PROBER_READY_IDS_MS)
		strv_clear(&p->p_ready_ids); /* every restored pod has synced by now */
	for (pp = LIST_FIRST(&p->p_pods); pp != NULL; pp = next) {
		next = LIST_NEXT(pp, pp_entry);
		if (pp->pp_seen != p->p_generation)
			pr_pod_free(pp);
	}
	p->p_generation++;
}

void
prober_remove_pod(struct prober *p, const char *uid)
{
	struct pr_pod *pp = pr_pod_lookup(p, uid);

	if (pp != NULL)
		pr_pod_free(pp);
}

uint64_t
prober_version(struct prober *p, const char *uid)
{
	struct pr_pod *pp;

	if (uid == NULL)
		return p->p_version;
	pp = pr_pod_lookup(p, uid);
	return pp != NULL ? pp->pp_version : 0;
}

int
prober_probe_states(struct prober *p, const char *uid, struct probe_set *out)
{
	struct pr_pod    *pp = pr_pod_lookup(p, uid);
	struct pr_worker *w;
	size_t            n = 0, i;

	memset(out, 0, sizeof(*out));
	if (pp == NULL || LIST_EMPTY(&pp->pp_workers))
		return -1;
	free(pp->pp_states);
	pp->pp_states = NULL;
	LIST_FOREACH(w, &pp->pp_workers, w_entry)
	{
		struct probe_state *st = NULL;

		for (i = 0; i < n; i++)
			if (strcmp(pp->pp_states[i].container_id, w->w_cid) == 0)
				st = &pp->pp_states[i];
		if (st == NULL) {
			pp->pp_states = xreallocarray(pp->pp_states, n + 1, sizeof(*pp->pp_states));
			st = &pp->pp_states[n++];
			memset(st, 0, sizeof(*st));
			st->container_id = w->w_cid;
		}
		switch (w->w_kind) {
		case PROBE_LIVENESS:
			st->liveness = w->w_result;
			break;
		case PROBE_READINESS:
			st->readiness = w->w_result;
			break;
		case PROBE_STARTUP:
			st->startup = w->w_result;
			break;
		default:
			fatalx("%s: bad probe kind %d", __func__, w->w_kind);
		}
	}
	out->v = pp->pp_states;
	out->n = n;
	return 0;
}

struct prober *
prober_new(struct event_base *base, struct cri *cri, struct events *ev)
{
	struct prober *p = xcalloc(1, sizeof(*p));

	p->p_base = base;
	p->p_cri = cri;
	p->p_events = ev;
	LIST_INIT(&p->p_pods);
	p->p_index = strindex_new();
	p->p_kick_ev = event_new(base, -1, 0, pr_kick_cb, p);
	return p;
}

void
prober_free(struct prober *p)
{
	struct pr_pod *pp;

	if (p == NULL)
		return;
	while ((pp = LIST_FIRST(&p->p_pods)) != NULL)
		pr_pod_free(pp);
	free(p->p_podv);
	strindex_free(p->p_index);
	event_free(p->p_kick_ev);
	strv_clear(&p->p_ready_ids);
	free(p);
}

void
prober_set_notify(struct prober *p, void (*fn)(const char *uid, void *arg), void *arg)
{
	p->p_notify = fn;
	p->p_notify_arg = arg;
}

void
prober_get_stats(const struct prober *p, struct prober_stats *st)
{
	st->workers = p->p_nworkers;
	st->runs = p->p_stats.runs;
	st->failures = p->p_stats.failures;
	st->changes = p->p_stats.changes;
}

void
prober_set_fake(struct prober *p, prober_fake_fn fn, void (*cancel)(void *, void *), void *arg)
{
	p->p_fake = fn;
	p->p_fake_cancel = cancel;
	p->p_fake_arg = arg;
}
