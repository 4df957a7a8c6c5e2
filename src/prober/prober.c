/* prober.c — the probe manager: workers per container and probe kind, on loop timers.
 * The checks themselves (exec, httpGet, tcpSocket, grpc) are in checks.c. */
#include <sys/queue.h>

#include <event2/event.h>
#include <stdlib.h>
#include <string.h>

#include "node/events.h"
#include "core/log.h"
#include "prober/prober.h"
#include "prober/internal.h"
#include "core/util.h"

static const char *const kind_names[PROBE_NKINDS] = { "liveness", "readiness", "startup" };
static const char *const kind_titles[PROBE_NKINDS] = { "Liveness", "Readiness", "Startup" };

const char *
probe_kind_name(enum probe_kind k)
{
	return k < PROBE_NKINDS ? kind_names[k] : "?";
}

static const char *
res_name(enum probe_res r)
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
spec_clear(struct pr_spec *s)
{
	size_t i;

	for (i = 0; i < s->argc; i++)
		free(s->argv[i]);
	free(s->argv);
	free(s->host);
	free(s->path);
	free(s->scheme);
	for (i = 0; i < s->nheaders; i++) {
		free((char *)s->headers[i].name);
		free((char *)s->headers[i].value);
	}
	free(s->headers);
	free(s->grpc_service);
	memset(s, 0, sizeof(*s));
}

/* The port of a probe: a number, or a named container port (0 when not found). */
static int
spec_port(const struct container *c, const struct int_or_str *p)
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
spec_copy(struct pr_spec *s, const struct container *c, const struct probe *p)
{
	const struct handler *h = &p->pr_handler;
	size_t                i;

	memset(s, 0, sizeof(*s));
	s->kind = h->h_kind;
	if (h->h_exec.n > 0) {
		s->argv = xcalloc(h->h_exec.n, sizeof(*s->argv));
		for (i = 0; i < h->h_exec.n; i++)
			s->argv[i] = xstrdup(h->h_exec.v[i] != NULL ? h->h_exec.v[i] : "");
		s->argc = h->h_exec.n;
	}
	s->host = xstrdup(h->h_host != NULL && *h->h_host != '\0' ? h->h_host : NULL);
	s->path = xstrdup(h->h_path != NULL && *h->h_path != '\0' ? h->h_path : "/");
	s->scheme = xstrdup(h->h_scheme != NULL ? h->h_scheme : "HTTP");
	s->port = h->h_kind == HANDLER_GRPC ? h->h_grpc_port : spec_port(c, &h->h_port);
	if (h->h_nheaders > 0) {
		s->headers = xcalloc(h->h_nheaders, sizeof(*s->headers));
		for (i = 0; i < h->h_nheaders; i++) {
			s->headers[i].name =
			    xstrdup(h->h_headers[i].name != NULL ? h->h_headers[i].name : "");
			s->headers[i].value =
			    xstrdup(h->h_headers[i].value != NULL ? h->h_headers[i].value : "");
		}
		s->nheaders = h->h_nheaders;
	}
	s->grpc_service = xstrdup(h->h_grpc_service != NULL ? h->h_grpc_service : "");
	s->initial_delay = p->pr_initial_delay > 0 ? p->pr_initial_delay : 0;
	s->timeout = p->pr_timeout > 0 ? p->pr_timeout : 1;
	s->period = p->pr_period > 0 ? p->pr_period : 10;
	s->success_threshold = p->pr_success_threshold > 0 ? p->pr_success_threshold : 1;
	s->failure_threshold = p->pr_failure_threshold > 0 ? p->pr_failure_threshold : 3;
}

static const struct probe *
container_probe(const struct container *c, enum probe_kind k)
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

static struct pr_pod *
pod_lookup(struct prober *p, const char *uid)
{
	struct pr_pod *pp;

	LIST_FOREACH(pp, &p->pods, pp_entry)
	if (strcmp(pp->pp_uid, uid) == 0)
		return pp;
	return NULL;
}

static void
worker_free(struct pr_worker *w)
{
	if (w == NULL)
		return;
	if (w->w_check != NULL)
		pr_check_cancel(w->w_check);
	if (w->w_timer != NULL)
		event_free(w->w_timer);
	if (w->w_first != NULL)
		event_free(w->w_first);
	w->w_pod->pp_prober->nworkers--;
	spec_clear(&w->w_spec);
	free(w->w_cname);
	free(w->w_cid);
	free(w->w_pod_ip);
	free(w);
}

static void
pod_free_one(struct pr_pod *pp)
{
	struct pr_worker *w;

	while ((w = LIST_FIRST(&pp->pp_workers)) != NULL) {
		LIST_REMOVE(w, w_entry);
		worker_free(w);
	}
	LIST_REMOVE(pp, pp_entry);
	pod_unref(pp->pp_pod);
	free(pp->pp_states);
	free(pp->pp_uid);
	free(pp);
}

static void
prober_kick_cb(evutil_socket_t fd, short what, void *arg)
{
	struct prober *p = arg;
	struct pr_pod *pp;
	char         **uids = NULL;
	size_t         n = 0, i;

	(void)fd;
	(void)what;
	/* Copy first: the hook may call back into the prober. */
	LIST_FOREACH(pp, &p->pods, pp_entry)
	{
		if (!pp->pp_dirty)
			continue;
		pp->pp_dirty = 0;
		uids = xreallocarray(uids, n + 1, sizeof(*uids));
		uids[n++] = xstrdup(pp->pp_uid);
	}
	for (i = 0; i < n; i++) {
		if (p->notify != NULL)
			p->notify(uids[i], p->notify_arg);
		free(uids[i]);
	}
	free(uids);
}

static void
worker_set_result(struct pr_worker *w, enum probe_res r)
{
	struct prober *p = w->w_pod->pp_prober;

	if (w->w_result == r)
		return;
	log_v(2, "probe pod=%s/%s container=%s %s: %s -> %s", w->w_pod->pp_pod->ns,
	    w->w_pod->pp_pod->name, w->w_cname, probe_kind_name(w->w_kind), res_name(w->w_result),
	    res_name(r));
	w->w_result = r;
	p->stats.changes++;
	w->w_pod->pp_dirty = 1;
	event_active(p->kick_ev, EV_TIMEOUT, 0);
}

static struct pr_worker *
pod_worker(struct pr_pod *pp, const char *cname, enum probe_kind k)
{
	struct pr_worker *w;

	LIST_FOREACH(w, &pp->pp_workers, w_entry)
	if (w->w_kind == k && strcmp(w->w_cname, cname) == 0)
		return w;
	return NULL;
}

/* The container has started: no startup probe, or it succeeded. */
static int
worker_started(struct pr_worker *w)
{
	struct pr_worker *s = pod_worker(w->w_pod, w->w_cname, PROBE_STARTUP);

	return s == NULL || s->w_result == PROBE_SUCCESS;
}

/* The worker's logic after one check (the kubelet's doProbe tail): thresholds, hold. */
void
pr_worker_done(struct pr_worker *w, enum pr_outcome o, const char *output)
{
	struct prober *p = w->w_pod->pp_prober;
	enum probe_res r;
	char           msg[EVENTS_MAX_MESSAGE];

	w->w_check = NULL;
	if (o == PR_ERROR) {
		/* A prober error (runtime unavailable): the result is thrown away. */
		log_v(3, "probe pod=%s container=%s %s errored: %s", w->w_pod->pp_uid, w->w_cname,
		    probe_kind_name(w->w_kind), output != NULL ? output : "");
		return;
	}
	p->stats.runs++;
	r = o == PR_SUCCESS ? PROBE_SUCCESS : PROBE_FAILURE;
	if (r == PROBE_FAILURE) {
		p->stats.failures++;
		snprintf(msg, sizeof(msg), "%s", output != NULL ? output : "");
		log_v(2, "probe failed pod=%s/%s container=%s %s: %s", w->w_pod->pp_pod->ns,
		    w->w_pod->pp_pod->name, w->w_cname, probe_kind_name(w->w_kind), msg);
		events_pod(p->events, w->w_pod->pp_pod, w->w_cname, EV_WARNING, "Unhealthy",
		    "%s probe failed: %s", kind_titles[w->w_kind], msg);
	}
	w->w_run = pr_threshold_step(&w->w_last, w->w_run, r);
	if ((r == PROBE_FAILURE && w->w_run < w->w_spec.failure_threshold) ||
	    (r == PROBE_SUCCESS && w->w_run < w->w_spec.success_threshold))
		return;
	worker_set_result(w, r);
	if (r == PROBE_FAILURE && (w->w_kind == PROBE_LIVENESS || w->w_kind == PROBE_STARTUP)) {
		/* Held until the container is replaced (a new ID resets the worker). */
		w->w_on_hold = 1;
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
worker_tick(evutil_socket_t fd, short what, void *arg)
{
	struct pr_worker *w = arg;
	struct prober    *p = w->w_pod->pp_prober;
	int64_t           now_s;

	(void)fd;
	(void)what;
	if (w->w_check != NULL || w->w_on_hold)
		return;
	if (w->w_kind == PROBE_STARTUP) {
		if (w->w_result == PROBE_SUCCESS)
			return; /* not run again once the container has started */
	} else if (!worker_started(w)) {
		return;
	}
	now_s = now_wall_ns() / 1000000000;
	if (w->w_started_s > 0 && now_s - w->w_started_s < w->w_spec.initial_delay)
		return;
	w->w_check = pr_check_start(p, w);
}

#define PROBER_READY_IDS_MS 60000

static int
ready_id_known(const struct prober *p, const char *cid)
{
	size_t i;

	for (i = 0; cid != NULL && i < p->ready_ids.n; i++)
		if (strcmp(p->ready_ids.v[i], cid) == 0)
			return 1;
	return 0;
}

void
prober_assume_ready(struct prober *p, const char *container_id)
{
	if (container_id == NULL || *container_id == '\0' || ready_id_known(p, container_id))
		return;
	p->ready_ids.v = xreallocarray(p->ready_ids.v, p->ready_ids.n + 1, sizeof(char *));
	p->ready_ids.v[p->ready_ids.n++] = xstrdup(container_id);
	p->ready_ids_ms = now_mono_ms();
}

static void
worker_reset(struct pr_worker *w, const struct container *c, const struct rt_container *rc,
    const char *pod_ip)
{
	struct prober *p = w->w_pod->pp_prober;
	struct timeval tv = { 0, 0 };

	if (w->w_check != NULL) {
		pr_check_cancel(w->w_check);
		w->w_check = NULL;
	}
	spec_clear(&w->w_spec);
	spec_copy(&w->w_spec, c, container_probe(c, w->w_kind));
	free(w->w_cid);
	w->w_cid = xstrdup(rc->id);
	free(w->w_pod_ip);
	w->w_pod_ip = xstrdup(pod_ip);
	w->w_started_s = rc->started_at / 1000000000;
	w->w_on_hold = 0;
	w->w_run = 0;
	w->w_last = PROBE_NONE;
	/* The kubelet's initial values: not ready until proven, alive until proven dead. */
	w->w_result = w->w_kind == PROBE_READINESS ? PROBE_FAILURE
	    : w->w_kind == PROBE_LIVENESS          ? PROBE_SUCCESS
	                                           : PROBE_NONE;
	if (w->w_kind != PROBE_LIVENESS && ready_id_known(p, w->w_cid)) {
		/* Ready when the previous daemon stopped: its startup probe had succeeded and
		 * readiness holds until a check says otherwise (no NotReady blip on restart). */
		w->w_result = PROBE_SUCCESS;
		if (w->w_kind == PROBE_STARTUP)
			w->w_last = PROBE_SUCCESS;
	}
	w->w_pod->pp_dirty = 1;
	w->w_pod->pp_respec = 1;
	event_active(p->kick_ev, EV_TIMEOUT, 0);
	if (w->w_timer != NULL)
		event_free(w->w_timer);
	w->w_timer = event_new(p->base, -1, EV_PERSIST, worker_tick, w);
	tv.tv_sec = w->w_spec.period;
	event_add(w->w_timer, &tv);
	/* The first check runs at once (the kubelet probes when the worker starts); a separate
	 * event, since activating the periodic one by hand would shift its schedule. */
	if (w->w_first == NULL)
		w->w_first = event_new(p->base, -1, 0, worker_tick, w);
	event_active(w->w_first, EV_TIMEOUT, 0);
	log_v(3, "probe worker pod=%s container=%s id=%s %s period=%ds", w->w_pod->pp_uid,
	    w->w_cname, w->w_cid, probe_kind_name(w->w_kind), w->w_spec.period);
}

static void
sync_container(struct pr_pod *pp, const struct container *c, const struct rt_pod_status *rt,
    const char *pod_ip)
{
	const struct rt_container *rc = rt != NULL ? rt_find_container(rt, c->c_name) : NULL;
	int               running = rc != NULL && rc->state == RT_RUNNING && rc->id != NULL;
	struct pr_worker *w;
	enum probe_kind   k;

	for (k = 0; k < PROBE_NKINDS; k++) {
		const struct probe *pr = container_probe(c, k);

		w = pod_worker(pp, c->c_name, k);
		if (pr == NULL || !running) {
			if (w != NULL) {
				LIST_REMOVE(w, w_entry);
				worker_free(w);
			}
			continue;
		}
		if (w == NULL) {
			w = xcalloc(1, sizeof(*w));
			w->w_pod = pp;
			w->w_kind = k;
			w->w_cname = xstrdup(c->c_name);
			LIST_INSERT_HEAD(&pp->pp_workers, w, w_entry);
			pp->pp_prober->nworkers++;
		}
		if (w->w_cid == NULL || strcmp(w->w_cid, rc->id) != 0)
			worker_reset(w, c, rc, pod_ip);
	}
}

/* A worker whose container left the spec. */
static int
pod_has_container(const struct pod *pod, const char *name)
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
	pp = pod_lookup(p, pod->uid);
	if (pp != NULL)
		pp->pp_seen = p->generation;
	if (!active) {
		if (pp != NULL)
			pod_free_one(pp);
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
			pod_free_one(pp);
		return;
	}
	if (pp == NULL) {
		pp = xcalloc(1, sizeof(*pp));
		pp->pp_prober = p;
		pp->pp_uid = xstrdup(pod->uid);
		pp->pp_pod = pod_ref(pod);
		pp->pp_seen = p->generation;
		LIST_INIT(&pp->pp_workers);
		LIST_INSERT_HEAD(&p->pods, pp, pp_entry);
	}
	if (rt != NULL && rt->nsandboxes > 0 && rt->sandboxes[0].ip != NULL &&
	    rt->sandboxes[0].ip[0] != '\0')
		ip = rt->sandboxes[0].ip;
	else if (pod->host_network)
		ip = "127.0.0.1";
	for (i = 0; i < pod->ncontainers; i++)
		sync_container(pp, &pod->containers[i], rt, ip);
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
			sync_container(pp, c, rt, ip);
	}
	for (w = LIST_FIRST(&pp->pp_workers); w != NULL; w = next) {
		next = LIST_NEXT(w, w_entry);
		if (!pod_has_container(pod, w->w_cname)) {
			LIST_REMOVE(w, w_entry);
			worker_free(w);
		}
	}
}

void
prober_sweep(struct prober *p)
{
	struct pr_pod *pp, *next;

	if (p->ready_ids.n > 0 && now_mono_ms() - p->ready_ids_ms > PROBER_READY_IDS_MS)
		strv_clear(&p->ready_ids); /* every restored pod has synced by now */
	for (pp = LIST_FIRST(&p->pods); pp != NULL; pp = next) {
		next = LIST_NEXT(pp, pp_entry);
		if (pp->pp_seen != p->generation)
			pod_free_one(pp);
	}
	p->generation++;
}

void
prober_remove_pod(struct prober *p, const char *uid)
{
	struct pr_pod *pp = pod_lookup(p, uid);

	if (pp != NULL)
		pod_free_one(pp);
}

int
prober_probe_states(struct prober *p, const char *uid, struct probe_set *out)
{
	struct pr_pod    *pp = pod_lookup(p, uid);
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

	p->base = base;
	p->cri = cri;
	p->events = ev;
	LIST_INIT(&p->pods);
	p->kick_ev = event_new(base, -1, 0, prober_kick_cb, p);
	return p;
}

void
prober_free(struct prober *p)
{
	struct pr_pod *pp;

	if (p == NULL)
		return;
	while ((pp = LIST_FIRST(&p->pods)) != NULL)
		pod_free_one(pp);
	event_free(p->kick_ev);
	strv_clear(&p->ready_ids);
	free(p);
}

void
prober_set_notify(struct prober *p, void (*fn)(const char *uid, void *arg), void *arg)
{
	p->notify = fn;
	p->notify_arg = arg;
}

void
prober_get_stats(const struct prober *p, struct prober_stats *st)
{
	st->workers = p->nworkers;
	st->runs = p->stats.runs;
	st->failures = p->stats.failures;
	st->changes = p->stats.changes;
}

void
prober_set_fake(struct prober *p, prober_fake_fn fn, void (*cancel)(void *, void *), void *arg)
{
	p->fake = fn;
	p->fake_cancel = cancel;
	p->fake_arg = arg;
}
