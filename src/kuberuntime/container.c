/* container.c — startContainer and killContainer as asynchronous operations,
 * lifecycle hooks (exec through ExecSync, httpGet through http1, sleep), restart counts,
 * grace periods and the intent records around a create. Each operation gets the manager's
 * context and its inputs as arguments and reports through its callbacks only. */
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/time.h>

#include <event2/event.h>

#include "logic/backoff.h"
#include "cri/cri.h"
#include "node/events.h"
#include "net/http1.h"
#include "kuberuntime/kuberuntime.h"
#include "kuberuntime/internal.h"
#include "core/log.h"
#include "core/util.h"
#include "pod/hash.h"

#define KR_DEFAULT_GRACE       30
#define KR_POSTSTART_TIMEOUT_S 120 /* an exec hook without limit would hold the pod forever */

/* ---- pure helpers ---- */

int64_t
kr_base_grace(const struct pod *pod)
{
	if (pod == NULL)
		return KR_MIN_GRACE_SECONDS;
	if (pod->deletion_grace.set)
		return pod->deletion_grace.v;
	if (pod->termination_grace.set)
		return pod->termination_grace.v;
	return KR_DEFAULT_GRACE;
}

int64_t
kuberuntime_grace(const struct pod *pod, int64_t override)
{
	int64_t g = kr_base_grace(pod);

	if (override >= 0)
		g = override;
	return g < KR_MIN_GRACE_SECONDS ? KR_MIN_GRACE_SECONDS : g;
}

int
kuberuntime_restart_count_from_logs(const char *pod_log_dir, const char *name)
{
	char          *path = pod_log_dir != NULL ? path_join(pod_log_dir, 1, name) : NULL;
	struct dirent *de;
	DIR           *d;
	int            best = 0;

	if (path == NULL || (d = opendir(path)) == NULL) {
		free(path);
		return 0;
	}
	while ((de = readdir(d)) != NULL) {
		const char *p = de->d_name;
		long        n;
		char       *end;

		if (!isdigit((unsigned char)p[0]))
			continue;
		errno = 0;
		n = strtol(p, &end, 10);
		/* N.log, or a rotated N.log.SUFFIX */
		if (errno != 0 || n < 0 || n > INT32_MAX - 1 || strncmp(end, ".log", 4) != 0 ||
		    (end[4] != '\0' && end[4] != '.'))
			continue;
		if (n + 1 > best)
			best = (int)n + 1;
	}
	closedir(d);
	free(path);
	return best;
}

/* ---- intents, on the context that keeps them ---- */

void
kr_intent_put(
    const struct kr_ctx *x, const char *uid, const char *kind, const char *name, int64_t attempt)
{
	if (x->intents.put != NULL)
		x->intents.put(x->intents.arg, uid, kind, name, attempt);
}

void
kr_intent_del(
    const struct kr_ctx *x, const char *uid, const char *kind, const char *name, int64_t attempt)
{
	if (x->intents.del != NULL)
		x->intents.del(x->intents.arg, uid, kind, name, attempt);
}

int
kr_intent_has(
    const struct kr_ctx *x, const char *uid, const char *kind, const char *name, int64_t attempt)
{
	return x->intents.has != NULL && x->intents.has(x->intents.arg, uid, kind, name, attempt);
}

/* ---- lifecycle hooks ---- */

struct kr_hook {
	struct kr_ctx    *h_x;
	const void       *h_owner;
	struct event     *h_timer; /* sleep */
	struct http1_req *h_http;
	int               h_calling; /* an ExecSync is in flight (cancelled by owner) */
	char             *h_desc;    /* for messages */
	void (*h_done)(int, const char *, void *);
	void *h_arg;
};

static void
kr_hook_finish(struct kr_hook *h, int rc, const char *msg)
{
	void (*done)(int, const char *, void *) = h->h_done;

	h->h_calling = 0;
	h->h_done = NULL;
	if (done != NULL)
		done(rc, msg, h->h_arg);
}

static void
kr_hook_exec_cb(int code, const char *message, const Runtime__V1__ExecSyncResponse *resp, void *arg)
{
	struct kr_hook *h = arg;
	char            msg[1024];

	if (code != GRPC_OK) {
		snprintf(msg, sizeof(msg), "%s failed - error: %s", h->h_desc, message);
		kr_hook_finish(h, -1, msg);
		return;
	}
	if (resp->exit_code != 0) {
		size_t no = resp->stdout.len > 400 ? 400 : resp->stdout.len;
		size_t ne = resp->stderr.len > 400 ? 400 : resp->stderr.len;

		/* Trailing newlines make poor one-line messages. */
		while (no > 0 && isspace(resp->stdout.data[no - 1]))
			no--;
		while (ne > 0 && isspace(resp->stderr.data[ne - 1]))
			ne--;
		snprintf(msg, sizeof(msg),
		    "%s failed - error: command exited with %d, message: "
		    "\"%.*s%s%.*s\"",
		    h->h_desc, resp->exit_code, (int)no, (const char *)resp->stdout.data,
		    no > 0 && ne > 0 ? " " : "", (int)ne, (const char *)resp->stderr.data);
		kr_hook_finish(h, -1, msg);
		return;
	}
	kr_hook_finish(h, 0, "");
}

static void
kr_hook_http_cb(const struct http1_result *r, void *arg)
{
	struct kr_hook *h = arg;
	char            msg[1024];

	h->h_http = NULL;
	/* As the kubelet: only a failed request fails the hook, not the status code. */
	if (r->error != NULL) {
		snprintf(msg, sizeof(msg), "%s failed - error: %s", h->h_desc, r->error);
		kr_hook_finish(h, -1, msg);
		return;
	}
	kr_hook_finish(h, 0, "");
}

static void
kr_hook_sleep_cb(evutil_socket_t fd, short what, void *arg)
{
	struct kr_hook *h = arg;

	(void)fd;
	(void)what;
	kr_hook_finish(h, 0, "");
}

static int
kr_resolve_port(const struct container *c, const struct int_or_str *p)
{
	size_t i;

	if (!p->is_str)
		return p->num;
	if (p->str == NULL)
		return -1;
	for (i = 0; c != NULL && i < c->c_nports; i++)
		if (c->c_ports[i].name != NULL && strcmp(c->c_ports[i].name, p->str) == 0)
			return c->c_ports[i].container_port;
	return (int)strtol(p->str, NULL, 10) > 0 ? (int)strtol(p->str, NULL, 10) : -1;
}

static void
kr_hook_fail_later_cb(evutil_socket_t fd, short what, void *arg)
{
	struct kr_hook *h = arg;
	char            msg[512];

	(void)fd;
	(void)what;
	snprintf(msg, sizeof(msg), "%s", h->h_desc);
	kr_hook_finish(h, -1, msg);
}

struct kr_hook *
kr_hook_run(struct kr_ctx *x, const void *owner, const struct pod *pod, const struct container *c,
    const struct handler *hd, const char *container_id, const char *pod_ip, int64_t timeout_ms,
    void (*done)(int, const char *, void *), void *arg)
{
	struct kr_hook *h = xcalloc(1, sizeof(*h));
	struct timeval  tv;
	size_t          i;

	h->h_x = x;
	h->h_owner = owner;
	h->h_done = done;
	h->h_arg = arg;
	switch (hd->h_kind) {
	case HANDLER_EXEC: {
		Runtime__V1__ExecSyncRequest req = RUNTIME__V1__EXEC_SYNC_REQUEST__INIT;
		char                        *cmd = NULL;
		size_t                       len = 0;
		FILE                        *f = open_memstream(&cmd, &len);

		for (i = 0; f != NULL && i < hd->h_exec.n; i++)
			fprintf(f, "%s%s", i ? " " : "", hd->h_exec.v[i]);
		if (f != NULL)
			fclose(f);
		h->h_desc = xsprintf("Exec lifecycle hook ([%s]) for Container \"%s\" in Pod "
		                     "\"%s_%s(%s)\"",
		    cmd ? cmd : "", c ? c->c_name : "", pod ? pod->name : "", pod ? pod->ns : "",
		    pod ? pod->uid : "");
		free(cmd);
		req.container_id = (char *)container_id;
		req.cmd = hd->h_exec.v;
		req.n_cmd = hd->h_exec.n;
		req.timeout = (timeout_ms + 999) / 1000;
		h->h_calling = 1;
		cri_exec_sync(x->cri, &req, timeout_ms + 5000, kr_hook_exec_cb, h, owner);
		break;
	}
	case HANDLER_HTTP_GET: {
		struct http1_header *hh = NULL;
		const char          *host =
                    hd->h_host != NULL && hd->h_host[0] != '\0' ? hd->h_host : pod_ip;
		int port = kr_resolve_port(c, &hd->h_port);

		h->h_desc = xsprintf("Http lifecycle hook (%s) for Container \"%s\" in Pod "
		                     "\"%s_%s(%s)\"",
		    hd->h_path ? hd->h_path : "/", c ? c->c_name : "", pod ? pod->name : "",
		    pod ? pod->ns : "", pod ? pod->uid : "");
		if (host == NULL || host[0] == '\0' || port <= 0 || port > 65535) {
			char *d =
			    xsprintf("%s failed - error: no host or port to connect to", h->h_desc);

			free(h->h_desc);
			h->h_desc = d;
			h->h_timer = evtimer_new(x->base, kr_hook_fail_later_cb, h);
			tv = ms_to_tv(0);
			evtimer_add(h->h_timer, &tv);
			break;
		}
		if (hd->h_nheaders > 0) {
			hh = xcalloc(hd->h_nheaders, sizeof(*hh));
			for (i = 0; i < hd->h_nheaders; i++) {
				hh[i].name = hd->h_headers[i].name;
				hh[i].value = hd->h_headers[i].value;
			}
		}
		h->h_http = http1_get(x->base, host, port, hd->h_path ? hd->h_path : "/", hh,
		    hd->h_nheaders, hd->h_scheme, timeout_ms, 0, kr_hook_http_cb, h);
		free(hh);
		break;
	}
	case HANDLER_SLEEP: {
		int64_t ms = hd->h_sleep_seconds * 1000;

		h->h_desc = xsprintf("Sleep lifecycle hook (%" PRId64 ") for Container \"%s\"",
		    hd->h_sleep_seconds, c ? c->c_name : "");
		if (ms > timeout_ms)
			ms = timeout_ms;
		h->h_timer = evtimer_new(x->base, kr_hook_sleep_cb, h);
		tv = ms_to_tv(ms);
		evtimer_add(h->h_timer, &tv);
		break;
	}
	default:
		h->h_desc = xsprintf("Cannot run handler: invalid handler kind %d", hd->h_kind);
		h->h_timer = evtimer_new(x->base, kr_hook_fail_later_cb, h);
		tv = ms_to_tv(0);
		evtimer_add(h->h_timer, &tv);
		break;
	}
	return h;
}

void
kr_hook_free(struct kr_hook *h)
{
	if (h == NULL)
		return;
	if (h->h_timer != NULL)
		event_free(h->h_timer);
	http1_cancel(h->h_http);
	free(h->h_desc);
	free(h);
}

/* ---- killContainer ---- */

struct kr_kop {
	struct kr_ctx          *k_x;
	const void             *k_owner;
	const struct pod       *k_pod; /* borrowed from the machine, may be NULL */
	const struct container *k_spec;
	char                   *k_id;
	char                   *k_name;
	char                   *k_pod_ip;
	int64_t                 k_grace;
	int64_t                 k_override;
	int64_t                 k_hook_started_ms;
	struct kr_hook         *k_hook;
	struct event           *k_hook_timer; /* the grace period bounds the preStop hook */
	struct event           *k_later;
	int                     k_stopping;
	int                     k_finished;
	void (*k_done)(int, const char *, void *);
	void *k_arg;
};

static void
kr_kop_finish(struct kr_kop *k, int rc, const char *err)
{
	if (k->k_finished)
		return;
	k->k_finished = 1;
	k->k_done(rc, err, k->k_arg);
}

static void
kr_kop_stop_cb(
    int code, const char *message, const Runtime__V1__StopContainerResponse *resp, void *arg)
{
	struct kr_kop *k = arg;
	char           err[512];

	(void)resp;
	k->k_stopping = 0;
	/* A container the runtime no longer knows is stopped as far as we care. */
	if (code != GRPC_OK && code != GRPC_NOT_FOUND) {
		snprintf(
		    err, sizeof(err), "StopContainer %s (%s): %s", k->k_name, k->k_id, message);
		log_warnx("%s: pod=%s/%s: %s", __func__, k->k_pod ? k->k_pod->ns : "",
		    k->k_pod ? k->k_pod->name : "", err);
		kr_kop_finish(k, -1, err);
		return;
	}
	log_v(2, "container %s (%s) of pod %s stopped", k->k_name, k->k_id,
	    k->k_pod ? k->k_pod->name : "?");
	kr_kop_finish(k, 0, NULL);
}

static void
kr_kop_stop(struct kr_kop *k)
{
	struct kr_ctx                    *x = k->k_x;
	Runtime__V1__StopContainerRequest req = RUNTIME__V1__STOP_CONTAINER_REQUEST__INIT;
	int64_t                           g = k->k_grace;

	/* recovery: an override below the pod's own grace is what is left of a grace period
	 * already running (the pod worker resumed or retried the kill; 0 once its deadline
	 * passed): honoured exactly, a minimum would extend it past its deadline. */
	if (g < KR_MIN_GRACE_SECONDS &&
	    (k->k_override < 0 || k->k_pod == NULL || k->k_override >= kr_base_grace(k->k_pod)))
		g = KR_MIN_GRACE_SECONDS;
	if (g < 0)
		g = 0;
	req.container_id = k->k_id;
	req.timeout = g;
	k->k_stopping = 1;
	log_v(2, "killing container %s (%s) with %" PRId64 " s grace", k->k_name, k->k_id, g);
	cri_stop_container(x->cri, &req, g * 1000 + x->timeout_ms, kr_kop_stop_cb, k, k->k_owner);
}

static void
kr_kop_prestop_end(struct kr_kop *k)
{
	/* Whole seconds, as the kubelet; 50 ms of slack because the loop's timers run on a
	 * coarser clock and may fire a little before a full second by ours. */
	int64_t spent = (now_mono_ms() - k->k_hook_started_ms + 50) / 1000;

	if (k->k_hook_timer != NULL) {
		event_free(k->k_hook_timer);
		k->k_hook_timer = NULL;
	}
	k->k_grace -= spent;
	kr_kop_stop(k);
}

static void
kr_kop_hook_cb(int rc, const char *msg, void *arg)
{
	struct kr_kop *k = arg;
	struct kr_ctx *x = k->k_x;

	if (rc != 0) {
		log_warnx("%s: pod=%s/%s: preStop: %s", __func__, k->k_pod ? k->k_pod->ns : "",
		    k->k_pod ? k->k_pod->name : "", msg);
		if (k->k_pod != NULL)
			events_pod(x->events, k->k_pod, k->k_name, EV_WARNING, "FailedPreStopHook",
			    "PreStopHook failed");
	}
	kr_kop_prestop_end(k);
}

static void
kr_kop_hook_timeout(evutil_socket_t fd, short what, void *arg)
{
	struct kr_kop *k = arg;

	(void)fd;
	(void)what;
	log_v(2, "preStop hook of %s not completed in %" PRId64 " s", k->k_name, k->k_grace);
	/* Abandon the hook: its ExecSync answer (if any) is not waited for. */
	if (k->k_hook != NULL) {
		k->k_hook->h_done = NULL;
		if (k->k_hook->h_http != NULL) {
			http1_cancel(k->k_hook->h_http);
			k->k_hook->h_http = NULL;
		}
	}
	kr_kop_prestop_end(k);
}

static void
kr_kop_begin(evutil_socket_t fd, short what, void *arg)
{
	struct kr_kop *k = arg;
	struct kr_ctx *x = k->k_x;
	struct timeval tv;

	(void)fd;
	(void)what;
	if (k->k_spec != NULL && k->k_spec->c_pre_stop != NULL &&
	    k->k_spec->c_pre_stop->h_kind != HANDLER_NONE && k->k_grace > 0) {
		k->k_hook_started_ms = now_mono_ms();
		k->k_hook_timer = evtimer_new(x->base, kr_kop_hook_timeout, k);
		tv = ms_to_tv(k->k_grace * 1000);
		evtimer_add(k->k_hook_timer, &tv);
		k->k_hook =
		    kr_hook_run(k->k_x, k->k_owner, k->k_pod, k->k_spec, k->k_spec->c_pre_stop,
		        k->k_id, k->k_pod_ip, k->k_grace * 1000, kr_kop_hook_cb, k);
		return;
	}
	kr_kop_stop(k);
}

struct kr_kop *
kr_kill_start(struct kr_ctx *x, const void *owner, const struct pod *pod,
    const struct container *spec, const char *container_id, const char *name, const char *pod_ip,
    const char *message, int64_t grace_override, void (*done)(int, const char *, void *), void *arg)
{
	struct kr_kop *k = xcalloc(1, sizeof(*k));
	struct timeval tv = ms_to_tv(0);

	k->k_x = x;
	k->k_owner = owner;
	k->k_pod = pod;
	k->k_spec = spec;
	k->k_id = xstrdup(container_id);
	k->k_name = xstrdup(name != NULL ? name : container_id);
	k->k_pod_ip = xstrdup(pod_ip);
	/* An override (the pod worker's grace) replaces the spec's; the preStop hook's time
	 * is deducted from either. */
	k->k_grace =
	    grace_override >= 0 ? grace_override : kr_base_grace(spec != NULL ? pod : NULL);
	k->k_override = grace_override;
	k->k_done = done;
	k->k_arg = arg;
	if (pod != NULL) {
		if (message != NULL && message[0] != '\0')
			events_pod(x->events, pod, k->k_name, EV_NORMAL, "Killing", "%s", message);
		else
			events_pod(x->events, pod, k->k_name, EV_NORMAL, "Killing",
			    "Stopping container %s", k->k_name);
	}
	/* Start on a later turn: callers expect done never to run inside this call. */
	k->k_later = evtimer_new(x->base, kr_kop_begin, k);
	evtimer_add(k->k_later, &tv);
	return k;
}

void
kr_kill_free(struct kr_kop *k)
{
	if (k == NULL)
		return;
	if (k->k_later != NULL)
		event_free(k->k_later);
	if (k->k_hook_timer != NULL)
		event_free(k->k_hook_timer);
	kr_hook_free(k->k_hook);
	free(k->k_id);
	free(k->k_name);
	free(k->k_pod_ip);
	free(k);
}

/* ---- startContainer ---- */

enum kr_start_state {
	ST_NEW = 0,
	ST_IMAGE,
	ST_PULL,
	ST_CREATE,
	ST_START,
	ST_POSTSTART,
	ST_POSTSTART_KILL,
	ST_ENDING, /* the result is ready, s_done runs on the next turn */
	ST_DONE,
};

struct kr_start {
	struct kr_ctx         *s_x;
	const void            *s_owner; /* of every CRI call */
	struct kr_start_args   s_a;
	enum kr_start_state    s_state;
	char                  *s_image_ref;
	char                  *s_container_id;
	int64_t                s_restart_count; /* of the container made */
	int                    s_intent;        /* an intent is recorded */
	char                  *s_fail_reason;
	char                  *s_fail_msg;  /* "REASON: message" */
	char                  *s_fail_text; /* the message alone (the start error's) */
	struct kr_start_result s_res;       /* handed to s_done */
	int64_t                s_pull_started_ms;
	struct kr_hook        *s_hook;
	struct kr_kop         *s_kop;
	struct event          *s_later;
	kr_call_fn             s_call;
	kr_start_done_fn       s_done;
	void                  *s_arg;
};

static const char *const kr_start_state_names[] = {
	"new",
	"image",
	"pull",
	"create",
	"start",
	"postStart",
	"postStart-kill",
	"ending",
	"done",
};

/* The one place the operation changes state. */
static void
kr_start_set_state(struct kr_start *s, enum kr_start_state to)
{
	if (to < ST_NEW || to > ST_DONE)
		fatalx("%s: bad state %d", __func__, to);
	log_v(4, "pod %s container %s: start %s -> %s", s->s_a.pod->uid, s->s_a.c->c_name,
	    kr_start_state_names[s->s_state], kr_start_state_names[to]);
	s->s_state = to;
}

/* Tells the caller which call is in flight (NULL: none). */
static void
kr_start_call(struct kr_start *s, const char *call, const char *target)
{
	if (s->s_call != NULL)
		s->s_call(call, target, s->s_arg);
}

static void
kr_start_later_cb(evutil_socket_t fd, short what, void *arg)
{
	struct kr_start *s = arg;

	(void)fd;
	(void)what;
	kr_start_set_state(s, ST_DONE);
	s->s_res.err = s->s_fail_msg;
	s->s_done(&s->s_res, s->s_arg);
}

/* Ends the operation on a later turn (so done never runs inside kr_start_container);
 * reason (with msg) is the start error the caller records, NULL with rc 0 clears it. */
static void
kr_start_end(struct kr_start *s, int rc, const char *reason, const char *msg)
{
	struct timeval tv = ms_to_tv(0);

	if (reason != NULL) {
		/* msg may be s->s_fail_msg itself: build the new ones first. */
		char *m = xsprintf("%s: %s", reason, msg != NULL ? msg : "");
		char *t = xstrdup(msg != NULL ? msg : "");

		free(s->s_fail_reason);
		free(s->s_fail_msg);
		free(s->s_fail_text);
		s->s_fail_reason = xstrdup(reason);
		s->s_fail_msg = m;
		s->s_fail_text = t;
		s->s_res.reason = s->s_fail_reason;
		s->s_res.message = s->s_fail_text;
	} else {
		s->s_res.reason = NULL;
		s->s_res.message = NULL;
	}
	s->s_res.clear_error = reason == NULL && rc == 0;
	s->s_res.rc = rc;
	kr_start_call(s, NULL, NULL);
	kr_start_set_state(s, ST_ENDING);
	if (s->s_later == NULL)
		s->s_later = evtimer_new(s->s_x->base, kr_start_later_cb, s);
	evtimer_add(s->s_later, &tv);
}

static void kr_start_create(struct kr_start *);

static void
kr_start_pull_cb(
    int code, const char *message, const Runtime__V1__PullImageResponse *resp, void *arg)
{
	struct kr_start        *s = arg;
	struct kr_ctx          *x = s->s_x;
	const struct container *c = s->s_a.c;
	char                   *key = xsprintf("%s_%s", s->s_a.pod->uid, c->c_image);

	if (code != GRPC_OK) {
		char msg[1024];

		snprintf(msg, sizeof(msg), "Failed to pull image \"%s\": %s", c->c_image, message);
		events_pod(x->events, s->s_a.pod, c->c_name, EV_WARNING, "Failed", "%s", msg);
		events_pod(
		    x->events, s->s_a.pod, c->c_name, EV_WARNING, "Failed", "Error: ErrImagePull");
		backoff_next(x->pull_bo, key, now_mono_ms(), now_mono_ms());
		s->s_res.pull = KR_PULL_FAILED;
		s->s_res.pull_failed_ms = now_mono_ms();
		s->s_res.resync_ms = backoff_get(x->pull_bo, key) + 50;
		free(key);
		kr_start_end(s, -1, "ErrImagePull", msg);
		return;
	}
	backoff_reset(x->pull_bo, key);
	s->s_res.pull = KR_PULL_OK;
	free(key);
	events_pod(x->events, s->s_a.pod, c->c_name, EV_NORMAL, "Pulled",
	    "Successfully pulled image \"%s\" in %" PRId64 "ms", c->c_image,
	    now_mono_ms() - s->s_pull_started_ms);
	free(s->s_image_ref);
	s->s_image_ref = xstrdup(
	    resp->image_ref != NULL && resp->image_ref[0] != '\0' ? resp->image_ref : c->c_image);
	kr_start_create(s);
}

static void
kr_start_image_cb(
    int code, const char *message, const Runtime__V1__ImageStatusResponse *resp, void *arg)
{
	struct kr_start        *s = arg;
	struct kr_ctx          *x = s->s_x;
	const struct container *c = s->s_a.c;
	int                     present;
	char                   *key;
	int64_t                 remaining = 0, since;

	if (code != GRPC_OK) {
		char msg[1024];

		snprintf(
		    msg, sizeof(msg), "Failed to inspect image \"%s\": %s", c->c_image, message);
		events_pod(
		    x->events, s->s_a.pod, c->c_name, EV_WARNING, "InspectFailed", "%s", msg);
		kr_start_end(s, -1, "ImageInspectError", msg);
		return;
	}
	present = resp->image != NULL && resp->image->id != NULL && resp->image->id[0] != '\0';
	if (present && c->c_pull_policy != PULL_ALWAYS) {
		events_pod(x->events, s->s_a.pod, c->c_name, EV_NORMAL, "Pulled",
		    "Container image \"%s\" already present on machine", c->c_image);
		s->s_image_ref = xstrdup(resp->image->id);
		kr_start_create(s);
		return;
	}
	if (!present && c->c_pull_policy == PULL_NEVER) {
		char msg[512];

		snprintf(msg, sizeof(msg),
		    "Container image \"%s\" is not present with pull "
		    "policy of Never",
		    c->c_image);
		events_pod(
		    x->events, s->s_a.pod, c->c_name, EV_WARNING, "ErrImageNeverPull", "%s", msg);
		kr_start_end(s, -1, "ErrImageNeverPull", msg);
		return;
	}
	key = xsprintf("%s_%s", s->s_a.pod->uid, c->c_image);
	since = s->s_a.pull_failed_ms;
	if (since > 0 && backoff_in_backoff(x->pull_bo, key, since, now_mono_ms(), &remaining)) {
		char msg[512];

		snprintf(msg, sizeof(msg), "Back-off pulling image \"%s\"", c->c_image);
		events_pod(x->events, s->s_a.pod, c->c_name, EV_NORMAL, "BackOff", "%s", msg);
		s->s_res.resync_ms = remaining + 50;
		free(key);
		kr_start_end(s, 1, "ImagePullBackOff", msg);
		return;
	}
	free(key);
	{
		Runtime__V1__PullImageRequest req = RUNTIME__V1__PULL_IMAGE_REQUEST__INIT;
		Runtime__V1__ImageSpec        spec = RUNTIME__V1__IMAGE_SPEC__INIT;

		spec.image = c->c_image;
		req.image = &spec;
		req.sandbox_config = (Runtime__V1__PodSandboxConfig *)s->s_a.sandbox_config;
		events_pod(x->events, s->s_a.pod, c->c_name, EV_NORMAL, "Pulling",
		    "Pulling image \"%s\"", c->c_image);
		kr_start_set_state(s, ST_PULL);
		s->s_pull_started_ms = now_mono_ms();
		kr_start_call(s, "PullImage", c->c_name);
		cri_pull_image(x->cri, &req, x->pull_timeout_ms, kr_start_pull_cb, s, s->s_owner);
	}
}

static void kr_start_poststart(struct kr_start *);

/* The runtime answered for the container the intent was about: drop the record. */
static void
kr_start_intent_done(struct kr_start *s)
{
	if (!s->s_intent)
		return;
	s->s_intent = 0;
	kr_intent_del(s->s_x, s->s_a.pod->uid, "container", s->s_a.c->c_name, s->s_restart_count);
}

static void
kr_start_start_cb(
    int code, const char *message, const Runtime__V1__StartContainerResponse *r, void *arg)
{
	struct kr_start        *s = arg;
	struct kr_ctx          *x = s->s_x;
	const struct container *c = s->s_a.c;

	(void)r;
	kr_start_intent_done(s);
	if (code != GRPC_OK) {
		events_pod(
		    x->events, s->s_a.pod, c->c_name, EV_WARNING, "Failed", "Error: %s", message);
		kr_start_end(s, -1, "RunContainerError", message);
		return;
	}
	events_pod(x->events, s->s_a.pod, c->c_name, EV_NORMAL, "Started", "Started container %s",
	    c->c_name);
	if (c->c_post_start != NULL && c->c_post_start->h_kind != HANDLER_NONE) {
		kr_start_poststart(s);
		return;
	}
	kr_start_end(s, 0, NULL, NULL);
}

static void
kr_start_create_cb(
    int code, const char *message, const Runtime__V1__CreateContainerResponse *r, void *arg)
{
	struct kr_start                   *s = arg;
	struct kr_ctx                     *x = s->s_x;
	const struct container            *c = s->s_a.c;
	Runtime__V1__StartContainerRequest req = RUNTIME__V1__START_CONTAINER_REQUEST__INIT;

	if (code != GRPC_OK) {
		kr_start_intent_done(s);
		events_pod(
		    x->events, s->s_a.pod, c->c_name, EV_WARNING, "Failed", "Error: %s", message);
		kr_start_end(s, -1, "CreateContainerError", message);
		return;
	}
	s->s_container_id = xstrdup(r->container_id);
	events_pod(x->events, s->s_a.pod, c->c_name, EV_NORMAL, "Created", "Created container %s",
	    c->c_name);
	req.container_id = s->s_container_id;
	kr_start_set_state(s, ST_START);
	kr_start_call(s, "StartContainer", c->c_name);
	cri_start_container(x->cri, &req, x->timeout_ms, kr_start_start_cb, s, s->s_owner);
}

static void
kr_start_create(struct kr_start *s)
{
	struct kr_ctx                      *x = s->s_x;
	const struct container             *c = s->s_a.c;
	const struct rt_container          *prev = rt_find_container(s->s_a.rt, c->c_name);
	Runtime__V1__CreateContainerRequest req = RUNTIME__V1__CREATE_CONTAINER_REQUEST__INIT;
	Runtime__V1__ContainerConfig       *cfg;
	struct kr_cinput                    in;
	char                                err[1024];
	char                               *logdir;

	memset(&in, 0, sizeof(in));
	if (prev != NULL) {
		in.restart_count = prev->restart_count + 1;
	} else {
		logdir = kuberuntime_pod_log_dir(x->env->logs_dir, s->s_a.pod);
		in.restart_count = kuberuntime_restart_count_from_logs(logdir, c->c_name);
		free(logdir);
	}
	in.image_ref = s->s_image_ref;
	in.pod_ip = s->s_a.pod_ip;
	in.pod_ips = s->s_a.pod_ips;
	cfg = kr_container_config(x->env, s->s_a.pod, c, &in, err, sizeof(err));
	if (cfg != NULL && c->c_kind == CK_EPHEMERAL && c->c_target_container != NULL &&
	    c->c_target_container[0] != '\0') {
		/* An ephemeral container shares its target's process namespace. */
		const struct rt_container *t = rt_find_container(s->s_a.rt, c->c_target_container);
		Runtime__V1__NamespaceOption *ns = cfg->linux->security_context->namespace_options;

		if (t == NULL || t->id == NULL) {
			snprintf(err, sizeof(err), "unable to find target container %s",
			    c->c_target_container);
			kr_msg_free(cfg);
			cfg = NULL;
		} else {
			ns->pid = RUNTIME__V1__NAMESPACE_MODE__TARGET;
			ns->target_id = xstrdup(t->id);
		}
	}
	if (cfg == NULL) {
		events_pod(
		    x->events, s->s_a.pod, c->c_name, EV_WARNING, "Failed", "Error: %s", err);
		kr_start_end(s, -1, "CreateContainerConfigError", err);
		return;
	}
	req.pod_sandbox_id = (char *)s->s_a.sandbox_id;
	req.config = cfg;
	req.sandbox_config = (Runtime__V1__PodSandboxConfig *)s->s_a.sandbox_config;
	s->s_restart_count = in.restart_count;
	s->s_intent = 1;
	kr_intent_put(x, s->s_a.pod->uid, "container", c->c_name, s->s_restart_count);
	kr_start_set_state(s, ST_CREATE);
	kr_start_call(s, "CreateContainer", c->c_name);
	cri_create_container(x->cri, &req, x->timeout_ms, kr_start_create_cb, s, s->s_owner);
	kr_msg_free(cfg);
}

static void
kr_start_kill_cb(int rc, const char *err, void *arg)
{
	struct kr_start *s = arg;

	(void)rc;
	(void)err;
	kr_start_end(s, -1, "PostStartHookError", s->s_fail_msg);
}

static void
kr_start_hook_cb(int rc, const char *msg, void *arg)
{
	struct kr_start        *s = arg;
	struct kr_ctx          *x = s->s_x;
	const struct container *c = s->s_a.c;

	if (rc == 0) {
		kr_start_end(s, 0, NULL, NULL);
		return;
	}
	log_warnx("%s: pod=%s/%s container %s: postStart: %s", __func__, s->s_a.pod->ns,
	    s->s_a.pod->name, c->c_name, msg);
	events_pod(x->events, s->s_a.pod, c->c_name, EV_WARNING, "FailedPostStartHook", "%s", msg);
	free(s->s_fail_msg);
	s->s_fail_msg = xstrdup(msg);
	kr_start_set_state(s, ST_POSTSTART_KILL);
	kr_start_call(s, "StopContainer", c->c_name);
	s->s_kop = kr_kill_start(s->s_x, s->s_owner, s->s_a.pod, c, s->s_container_id, c->c_name,
	    s->s_a.pod_ip, "FailedPostStartHook", -1, kr_start_kill_cb, s);
}

static void
kr_start_poststart(struct kr_start *s)
{
	kr_start_set_state(s, ST_POSTSTART);
	kr_start_call(s, "postStart hook", s->s_a.c->c_name);
	s->s_hook = kr_hook_run(s->s_x, s->s_owner, s->s_a.pod, s->s_a.c, s->s_a.c->c_post_start,
	    s->s_container_id, s->s_a.pod_ip, KR_POSTSTART_TIMEOUT_S * 1000, kr_start_hook_cb, s);
}

struct kr_start *
kr_start_container(struct kr_ctx *x, const void *owner, const struct kr_start_args *a,
    kr_call_fn call, kr_start_done_fn done, void *arg)
{
	struct kr_start                *s = xcalloc(1, sizeof(*s));
	const struct container         *c = a->c;
	const struct rt_container      *prev = rt_find_container(a->rt, c->c_name);
	Runtime__V1__ImageStatusRequest req = RUNTIME__V1__IMAGE_STATUS_REQUEST__INIT;
	Runtime__V1__ImageSpec          spec = RUNTIME__V1__IMAGE_SPEC__INIT;
	char                           *msg = NULL;
	int64_t                         remaining = 0;

	s->s_x = x;
	s->s_owner = owner;
	s->s_a = *a;
	s->s_state = ST_NEW;
	s->s_res.pull = KR_PULL_NONE;
	s->s_res.resync_ms = -1;
	s->s_call = call;
	s->s_done = done;
	s->s_arg = arg;
	/* Crash-loop backoff applies to restarts of a container that exited. */
	if (prev != NULL && prev->state == RT_EXITED &&
	    backoff_check_container(x->crash_bo, a->pod, c, a->rt, now_wall_ms(), &msg)) {
		char *key = backoff_key(a->pod, c);

		events_pod(x->events, a->pod, c->c_name, EV_WARNING, "BackOff",
		    "Back-off restarting failed container %s in pod %s_%s(%s)", c->c_name,
		    a->pod->name, a->pod->ns, a->pod->uid);
		if (backoff_in_backoff(
		        x->crash_bo, key, prev->finished_at / 1000000, now_wall_ms(), &remaining))
			s->s_res.resync_ms = remaining + 50;
		else
			s->s_res.resync_ms = 1000;
		free(key);
		kr_start_end(s, 1, "CrashLoopBackOff", msg);
		free(msg);
		return s;
	}
	free(msg);
	if (prev != NULL && prev->state == RT_CREATED && prev->id != NULL &&
	    prev->hash == container_hash(c) &&
	    kr_intent_has(x, a->pod->uid, "container", c->c_name, prev->restart_count)) {
		/* Created by a daemon that stopped before starting it: start that one. */
		Runtime__V1__StartContainerRequest sreq =
		    RUNTIME__V1__START_CONTAINER_REQUEST__INIT;

		log_info("pod %s/%s: adopting container %s (restart count %d, id %s) created "
		         "before a restart",
		    a->pod->ns, a->pod->name, c->c_name, prev->restart_count, prev->id);
		s->s_container_id = xstrdup(prev->id);
		s->s_restart_count = prev->restart_count;
		s->s_intent = 1;
		sreq.container_id = s->s_container_id;
		kr_start_set_state(s, ST_START);
		kr_start_call(s, "StartContainer", c->c_name);
		cri_start_container(x->cri, &sreq, x->timeout_ms, kr_start_start_cb, s, owner);
		return s;
	}
	if (c->c_image == NULL || c->c_image[0] == '\0') {
		kr_start_end(s, -1, "InvalidImageName", "no image given");
		return s;
	}
	spec.image = c->c_image;
	req.image = &spec;
	kr_start_set_state(s, ST_IMAGE);
	kr_start_call(s, "ImageStatus", c->c_name);
	cri_image_status(x->cri, &req, x->timeout_ms, kr_start_image_cb, s, owner);
	return s;
}

void
kr_start_free(struct kr_start *s)
{
	if (s == NULL)
		return;
	if (s->s_later != NULL)
		event_free(s->s_later);
	kr_hook_free(s->s_hook);
	kr_kill_free(s->s_kop);
	free(s->s_image_ref);
	free(s->s_container_id);
	free(s->s_fail_reason);
	free(s->s_fail_msg);
	free(s->s_fail_text);
	free(s);
}
