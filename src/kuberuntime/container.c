/* container.c — startContainer and killContainer as asynchronous operations,
 * lifecycle hooks (exec through ExecSync, httpGet through http1, sleep), restart counts,
 * grace periods and the conversion of CRI statuses into runtime.h data. */
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/time.h>

#include <event2/event.h>

#include "core/backoff.h"
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

static int64_t
kr_wall_ms(void)
{
	struct timeval tv;

	gettimeofday(&tv, NULL);
	return (int64_t)tv.tv_sec * 1000 + tv.tv_usec / 1000;
}

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
	char          *path = xsprintf("%s/%s", pod_log_dir, name);
	struct dirent *de;
	DIR           *d;
	int            best = 0;

	if ((d = opendir(path)) == NULL) {
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

void
kr_rt_from_sandbox(struct rt_sandbox *sb, const Runtime__V1__PodSandboxStatus *s)
{
	size_t i;

	memset(sb, 0, sizeof(*sb));
	sb->id = xstrdup(s->id);
	sb->attempt = s->metadata != NULL ? s->metadata->attempt : 0;
	sb->state = s->state == RUNTIME__V1__POD_SANDBOX_STATE__SANDBOX_READY ? RT_SB_READY
	                                                                      : RT_SB_NOTREADY;
	sb->created_at = s->created_at;
	sb->network_mode = RT_NS_POD;
	if (s->linux != NULL && s->linux->namespaces != NULL &&
	    s->linux->namespaces->options != NULL)
		sb->network_mode = (enum rt_nsmode)s->linux->namespaces->options->network;
	if (s->network != NULL) {
		sb->ip = xstrdup(s->network->ip);
		for (i = 0; i < s->network->n_additional_ips; i++) {
			sb->extra_ips =
			    xreallocarray(sb->extra_ips, sb->nextra_ips + 1, sizeof(char *));
			sb->extra_ips[sb->nextra_ips++] =
			    xstrdup(s->network->additional_ips[i]->ip);
		}
	}
}

static const char *
kr_pb_map_get(void *const *entries, size_t n, const char *key)
{
	return kr_map_get(entries, n, key);
}

void
kr_rt_from_container(
    struct rt_container *c, const Runtime__V1__ContainerStatus *s, const char *sandbox_id)
{
	const char *v;

	memset(c, 0, sizeof(*c));
	c->id = xstrdup(s->id);
	v = kr_pb_map_get((void *const *)s->labels, s->n_labels, KR_LABEL_CONTAINER_NAME);
	if (v == NULL && s->metadata != NULL)
		v = s->metadata->name;
	c->name = xstrdup(v != NULL ? v : "");
	c->sandbox_id = xstrdup(sandbox_id);
	switch (s->state) {
	case RUNTIME__V1__CONTAINER_STATE__CONTAINER_CREATED:
		c->state = RT_CREATED;
		break;
	case RUNTIME__V1__CONTAINER_STATE__CONTAINER_RUNNING:
		c->state = RT_RUNNING;
		break;
	case RUNTIME__V1__CONTAINER_STATE__CONTAINER_EXITED:
		c->state = RT_EXITED;
		break;
	default:
		c->state = RT_UNKNOWN;
		break;
	}
	c->created_at = s->created_at;
	c->started_at = s->started_at;
	c->finished_at = s->finished_at;
	c->exit_code = s->exit_code;
	if (s->reason != NULL && s->reason[0] != '\0')
		c->reason = xstrdup(s->reason);
	if (s->message != NULL && s->message[0] != '\0')
		c->message = xstrdup(s->message);
	if (s->image != NULL)
		c->image = xstrdup(s->image->image);
	c->image_ref = xstrdup(s->image_ref);
	v = kr_pb_map_get((void *const *)s->annotations, s->n_annotations, KR_ANN_HASH);
	if (v != NULL)
		c->hash = strtoull(v, NULL, 16);
	v = kr_pb_map_get((void *const *)s->annotations, s->n_annotations, KR_ANN_RESTART_COUNT);
	if (v != NULL)
		c->restart_count = (int32_t)strtol(v, NULL, 10);
}

/* ---- lifecycle hooks ---- */

struct kr_hook {
	struct kuberuntime *kr;
	const void         *owner;
	struct event       *timer; /* sleep */
	struct http1_req   *http;
	int                 calling; /* an ExecSync is in flight (cancelled by owner) */
	char               *desc;    /* for messages */
	void (*done)(int, const char *, void *);
	void *arg;
};

static void
kr_hook_finish(struct kr_hook *h, int rc, const char *msg)
{
	void (*done)(int, const char *, void *) = h->done;

	h->calling = 0;
	h->done = NULL;
	if (done != NULL)
		done(rc, msg, h->arg);
}

static void
kr_hook_exec_cb(int code, const char *message, const Runtime__V1__ExecSyncResponse *resp, void *arg)
{
	struct kr_hook *h = arg;
	char            msg[1024];

	if (code != GRPC_OK) {
		snprintf(msg, sizeof(msg), "%s failed - error: %s", h->desc, message);
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
		    h->desc, resp->exit_code, (int)no, (const char *)resp->stdout.data,
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

	h->http = NULL;
	/* As the kubelet: only a failed request fails the hook, not the status code. */
	if (r->error != NULL) {
		snprintf(msg, sizeof(msg), "%s failed - error: %s", h->desc, r->error);
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
	snprintf(msg, sizeof(msg), "%s", h->desc);
	kr_hook_finish(h, -1, msg);
}

struct kr_hook *
kr_hook_run(struct kuberuntime *kr, const void *owner, const struct pod *pod,
    const struct container *c, const struct handler *hd, const char *container_id,
    const char *pod_ip, int64_t timeout_ms, void (*done)(int, const char *, void *), void *arg)
{
	struct kr_ctx  *x = kr_ctx(kr);
	struct kr_hook *h = xcalloc(1, sizeof(*h));
	struct timeval  tv;
	size_t          i;

	h->kr = kr;
	h->owner = owner;
	h->done = done;
	h->arg = arg;
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
		h->desc = xsprintf("Exec lifecycle hook ([%s]) for Container \"%s\" in Pod "
		                   "\"%s_%s(%s)\"",
		    cmd ? cmd : "", c ? c->c_name : "", pod ? pod->name : "", pod ? pod->ns : "",
		    pod ? pod->uid : "");
		free(cmd);
		req.container_id = (char *)container_id;
		req.cmd = hd->h_exec.v;
		req.n_cmd = hd->h_exec.n;
		req.timeout = (timeout_ms + 999) / 1000;
		h->calling = 1;
		cri_exec_sync(x->cri, &req, timeout_ms + 5000, kr_hook_exec_cb, h, owner);
		break;
	}
	case HANDLER_HTTP_GET: {
		struct http1_header *hh = NULL;
		const char          *host =
                    hd->h_host != NULL && hd->h_host[0] != '\0' ? hd->h_host : pod_ip;
		int port = kr_resolve_port(c, &hd->h_port);

		h->desc = xsprintf("Http lifecycle hook (%s) for Container \"%s\" in Pod "
		                   "\"%s_%s(%s)\"",
		    hd->h_path ? hd->h_path : "/", c ? c->c_name : "", pod ? pod->name : "",
		    pod ? pod->ns : "", pod ? pod->uid : "");
		if (host == NULL || host[0] == '\0' || port <= 0 || port > 65535) {
			char *d =
			    xsprintf("%s failed - error: no host or port to connect to", h->desc);

			free(h->desc);
			h->desc = d;
			h->timer = evtimer_new(x->base, kr_hook_fail_later_cb, h);
			tv = ms_to_tv(0);
			evtimer_add(h->timer, &tv);
			break;
		}
		if (hd->h_nheaders > 0) {
			hh = xcalloc(hd->h_nheaders, sizeof(*hh));
			for (i = 0; i < hd->h_nheaders; i++) {
				hh[i].name = hd->h_headers[i].name;
				hh[i].value = hd->h_headers[i].value;
			}
		}
		h->http = http1_get(x->base, host, port, hd->h_path ? hd->h_path : "/", hh,
		    hd->h_nheaders, hd->h_scheme, timeout_ms, 0, kr_hook_http_cb, h);
		free(hh);
		break;
	}
	case HANDLER_SLEEP: {
		int64_t ms = hd->h_sleep_seconds * 1000;

		h->desc = xsprintf("Sleep lifecycle hook (%" PRId64 ") for Container \"%s\"",
		    hd->h_sleep_seconds, c ? c->c_name : "");
		if (ms > timeout_ms)
			ms = timeout_ms;
		h->timer = evtimer_new(x->base, kr_hook_sleep_cb, h);
		tv = ms_to_tv(ms);
		evtimer_add(h->timer, &tv);
		break;
	}
	default:
		h->desc = xsprintf("Cannot run handler: invalid handler kind %d", hd->h_kind);
		h->timer = evtimer_new(x->base, kr_hook_fail_later_cb, h);
		tv = ms_to_tv(0);
		evtimer_add(h->timer, &tv);
		break;
	}
	return h;
}

void
kr_hook_free(struct kr_hook *h)
{
	if (h == NULL)
		return;
	if (h->timer != NULL)
		event_free(h->timer);
	http1_cancel(h->http);
	free(h->desc);
	free(h);
}

/* ---- killContainer ---- */

struct kr_kop {
	struct kuberuntime     *kr;
	const void             *owner;
	const struct pod       *pod; /* borrowed from the machine, may be NULL */
	const struct container *spec;
	char                   *id;
	char                   *name;
	char                   *pod_ip;
	int64_t                 grace;
	int64_t                 override;
	int64_t                 hook_started_ms;
	struct kr_hook         *hook;
	struct event           *hook_timer; /* the grace period bounds the preStop hook */
	struct event           *later;
	int                     stopping;
	int                     finished;
	void (*done)(int, const char *, void *);
	void *arg;
};

static void
kr_kop_finish(struct kr_kop *k, int rc, const char *err)
{
	if (k->finished)
		return;
	k->finished = 1;
	k->done(rc, err, k->arg);
}

static void
kr_kop_stop_cb(
    int code, const char *message, const Runtime__V1__StopContainerResponse *resp, void *arg)
{
	struct kr_kop *k = arg;
	char           err[512];

	(void)resp;
	k->stopping = 0;
	/* A container the runtime no longer knows is stopped as far as we care. */
	if (code != GRPC_OK && code != GRPC_NOT_FOUND) {
		snprintf(err, sizeof(err), "StopContainer %s (%s): %s", k->name, k->id, message);
		log_warnx("%s: pod=%s/%s: %s", __func__, k->pod ? k->pod->ns : "",
		    k->pod ? k->pod->name : "", err);
		kr_kop_finish(k, -1, err);
		return;
	}
	log_v(
	    2, "container %s (%s) of pod %s stopped", k->name, k->id, k->pod ? k->pod->name : "?");
	kr_kop_finish(k, 0, NULL);
}

static void
kr_kop_stop(struct kr_kop *k)
{
	struct kr_ctx                    *x = kr_ctx(k->kr);
	Runtime__V1__StopContainerRequest req = RUNTIME__V1__STOP_CONTAINER_REQUEST__INIT;
	int64_t                           g = k->grace;

	/* recovery: an override below the pod's own grace is what is left of a grace period
	 * already running (the pod worker resumed or retried the kill; 0 once its deadline
	 * passed): honoured exactly, a minimum would extend it past its deadline. */
	if (g < KR_MIN_GRACE_SECONDS &&
	    (k->override < 0 || k->pod == NULL || k->override >= kr_base_grace(k->pod)))
		g = KR_MIN_GRACE_SECONDS;
	if (g < 0)
		g = 0;
	req.container_id = k->id;
	req.timeout = g;
	k->stopping = 1;
	log_v(2, "killing container %s (%s) with %" PRId64 " s grace", k->name, k->id, g);
	cri_stop_container(x->cri, &req, g * 1000 + x->timeout_ms, kr_kop_stop_cb, k, k->owner);
}

static void
kr_kop_prestop_end(struct kr_kop *k)
{
	/* Whole seconds, as the kubelet; 50 ms of slack because the loop's timers run on a
	 * coarser clock and may fire a little before a full second by ours. */
	int64_t spent = (now_mono_ms() - k->hook_started_ms + 50) / 1000;

	if (k->hook_timer != NULL) {
		event_free(k->hook_timer);
		k->hook_timer = NULL;
	}
	k->grace -= spent;
	kr_kop_stop(k);
}

static void
kr_kop_hook_cb(int rc, const char *msg, void *arg)
{
	struct kr_kop *k = arg;
	struct kr_ctx *x = kr_ctx(k->kr);

	if (rc != 0) {
		log_warnx("%s: pod=%s/%s: preStop: %s", __func__, k->pod ? k->pod->ns : "",
		    k->pod ? k->pod->name : "", msg);
		if (k->pod != NULL)
			events_pod(x->events, k->pod, k->name, EV_WARNING, "FailedPreStopHook",
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
	log_v(2, "preStop hook of %s not completed in %" PRId64 " s", k->name, k->grace);
	/* Abandon the hook: its ExecSync answer (if any) is not waited for. */
	if (k->hook != NULL) {
		k->hook->done = NULL;
		if (k->hook->http != NULL) {
			http1_cancel(k->hook->http);
			k->hook->http = NULL;
		}
	}
	kr_kop_prestop_end(k);
}

static void
kr_kop_begin(evutil_socket_t fd, short what, void *arg)
{
	struct kr_kop *k = arg;
	struct kr_ctx *x = kr_ctx(k->kr);
	struct timeval tv;

	(void)fd;
	(void)what;
	if (k->spec != NULL && k->spec->c_pre_stop != NULL &&
	    k->spec->c_pre_stop->h_kind != HANDLER_NONE && k->grace > 0) {
		k->hook_started_ms = now_mono_ms();
		k->hook_timer = evtimer_new(x->base, kr_kop_hook_timeout, k);
		tv = ms_to_tv(k->grace * 1000);
		evtimer_add(k->hook_timer, &tv);
		k->hook = kr_hook_run(k->kr, k->owner, k->pod, k->spec, k->spec->c_pre_stop, k->id,
		    k->pod_ip, k->grace * 1000, kr_kop_hook_cb, k);
		return;
	}
	kr_kop_stop(k);
}

struct kr_kop *
kr_kill_start(struct kuberuntime *kr, const void *owner, const struct pod *pod,
    const struct container *spec, const char *container_id, const char *name, const char *pod_ip,
    const char *message, int64_t grace_override, void (*done)(int, const char *, void *), void *arg)
{
	struct kr_ctx *x = kr_ctx(kr);
	struct kr_kop *k = xcalloc(1, sizeof(*k));
	struct timeval tv = ms_to_tv(0);

	k->kr = kr;
	k->owner = owner;
	k->pod = pod;
	k->spec = spec;
	k->id = xstrdup(container_id);
	k->name = xstrdup(name != NULL ? name : container_id);
	k->pod_ip = xstrdup(pod_ip);
	/* An override (the pod worker's grace) replaces the spec's; the preStop hook's time
	 * is deducted from either. */
	k->grace = grace_override >= 0 ? grace_override : kr_base_grace(spec != NULL ? pod : NULL);
	k->override = grace_override;
	k->done = done;
	k->arg = arg;
	if (pod != NULL) {
		if (message != NULL && message[0] != '\0')
			events_pod(x->events, pod, k->name, EV_NORMAL, "Killing", "%s", message);
		else
			events_pod(x->events, pod, k->name, EV_NORMAL, "Killing",
			    "Stopping container %s", k->name);
	}
	/* Start on a later turn: callers expect done never to run inside this call. */
	k->later = evtimer_new(x->base, kr_kop_begin, k);
	evtimer_add(k->later, &tv);
	return k;
}

void
kr_kill_free(struct kr_kop *k)
{
	if (k == NULL)
		return;
	if (k->later != NULL)
		event_free(k->later);
	if (k->hook_timer != NULL)
		event_free(k->hook_timer);
	kr_hook_free(k->hook);
	free(k->id);
	free(k->name);
	free(k->pod_ip);
	free(k);
}

/* ---- startContainer ---- */

enum kr_start_state {
	ST_IMAGE = 0,
	ST_PULL,
	ST_CREATE,
	ST_START,
	ST_POSTSTART,
	ST_POSTSTART_KILL,
	ST_DONE,
};

struct kr_start {
	struct kr_sync      *m;
	struct kuberuntime  *kr;
	struct kr_start_args a;
	enum kr_start_state  state;
	char                *image_ref;
	char                *container_id;
	int64_t              restart_count; /* of the container made */
	int                  intent;        /* an intent is recorded */
	char                *fail_reason;
	char                *fail_msg;
	int64_t              pull_started_ms;
	struct kr_hook      *hook;
	struct kr_kop       *kop;
	struct event        *later;
	int                  later_rc;
	void (*done)(int, const char *, void *);
	void *arg;
};

static void
kr_start_later_cb(evutil_socket_t fd, short what, void *arg)
{
	struct kr_start *s = arg;

	(void)fd;
	(void)what;
	s->state = ST_DONE;
	s->done(s->later_rc, s->fail_msg, s->arg);
}

/* Ends the operation on a later turn (so done never runs inside kr_start_container). */
static void
kr_start_end(struct kr_start *s, int rc, const char *reason, const char *msg)
{
	struct kr_ctx *x = kr_ctx(s->kr);
	struct timeval tv = ms_to_tv(0);

	if (reason != NULL) {
		/* msg may be s->fail_msg itself: build the new one first. */
		char *m = xsprintf("%s: %s", reason, msg != NULL ? msg : "");

		kr_set_start_error(kr_sync_pod(s->m), s->a.c->c_name, reason, msg);
		free(s->fail_reason);
		free(s->fail_msg);
		s->fail_reason = xstrdup(reason);
		s->fail_msg = m;
	} else if (rc == 0) {
		kr_set_start_error(kr_sync_pod(s->m), s->a.c->c_name, NULL, NULL);
	}
	kr_sync_call(s->m, NULL, NULL);
	s->later_rc = rc;
	if (s->later == NULL)
		s->later = evtimer_new(x->base, kr_start_later_cb, s);
	evtimer_add(s->later, &tv);
}

static void kr_start_create(struct kr_start *);

static void
kr_start_pull_cb(
    int code, const char *message, const Runtime__V1__PullImageResponse *resp, void *arg)
{
	struct kr_start        *s = arg;
	struct kr_ctx          *x = kr_ctx(s->kr);
	const struct container *c = s->a.c;
	char                   *key = xsprintf("%s_%s", s->a.pod->uid, c->c_image);

	if (code != GRPC_OK) {
		char msg[1024];

		snprintf(msg, sizeof(msg), "Failed to pull image \"%s\": %s", c->c_image, message);
		events_pod(x->events, s->a.pod, c->c_name, EV_WARNING, "Failed", "%s", msg);
		events_pod(
		    x->events, s->a.pod, c->c_name, EV_WARNING, "Failed", "Error: ErrImagePull");
		backoff_next(x->pull_bo, key, now_mono_ms(), now_mono_ms());
		kr_pull_fail_set(kr_sync_pod(s->m), c->c_image, now_mono_ms());
		kr_resync_after(kr_sync_pod(s->m), backoff_get(x->pull_bo, key) + 50);
		free(key);
		kr_start_end(s, -1, "ErrImagePull", msg);
		return;
	}
	backoff_reset(x->pull_bo, key);
	kr_pull_fail_set(kr_sync_pod(s->m), c->c_image, 0);
	free(key);
	events_pod(x->events, s->a.pod, c->c_name, EV_NORMAL, "Pulled",
	    "Successfully pulled image \"%s\" in %" PRId64 "ms", c->c_image,
	    now_mono_ms() - s->pull_started_ms);
	free(s->image_ref);
	s->image_ref = xstrdup(
	    resp->image_ref != NULL && resp->image_ref[0] != '\0' ? resp->image_ref : c->c_image);
	kr_start_create(s);
}

static void
kr_start_image_cb(
    int code, const char *message, const Runtime__V1__ImageStatusResponse *resp, void *arg)
{
	struct kr_start        *s = arg;
	struct kr_ctx          *x = kr_ctx(s->kr);
	const struct container *c = s->a.c;
	int                     present;
	char                   *key;
	int64_t                 remaining = 0, since;

	if (code != GRPC_OK) {
		char msg[1024];

		snprintf(
		    msg, sizeof(msg), "Failed to inspect image \"%s\": %s", c->c_image, message);
		events_pod(x->events, s->a.pod, c->c_name, EV_WARNING, "InspectFailed", "%s", msg);
		kr_start_end(s, -1, "ImageInspectError", msg);
		return;
	}
	present = resp->image != NULL && resp->image->id != NULL && resp->image->id[0] != '\0';
	if (present && c->c_pull_policy != PULL_ALWAYS) {
		events_pod(x->events, s->a.pod, c->c_name, EV_NORMAL, "Pulled",
		    "Container image \"%s\" already present on machine", c->c_image);
		s->image_ref = xstrdup(resp->image->id);
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
		    x->events, s->a.pod, c->c_name, EV_WARNING, "ErrImageNeverPull", "%s", msg);
		kr_start_end(s, -1, "ErrImageNeverPull", msg);
		return;
	}
	key = xsprintf("%s_%s", s->a.pod->uid, c->c_image);
	since = kr_pull_fail_time(kr_sync_pod(s->m), c->c_image);
	if (since > 0 && backoff_in_backoff(x->pull_bo, key, since, now_mono_ms(), &remaining)) {
		char msg[512];

		snprintf(msg, sizeof(msg), "Back-off pulling image \"%s\"", c->c_image);
		events_pod(x->events, s->a.pod, c->c_name, EV_NORMAL, "BackOff", "%s", msg);
		kr_resync_after(kr_sync_pod(s->m), remaining + 50);
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
		req.sandbox_config = (Runtime__V1__PodSandboxConfig *)s->a.sandbox_config;
		events_pod(x->events, s->a.pod, c->c_name, EV_NORMAL, "Pulling",
		    "Pulling image \"%s\"", c->c_image);
		s->state = ST_PULL;
		s->pull_started_ms = now_mono_ms();
		kr_sync_call(s->m, "PullImage", c->c_name);
		cri_pull_image(x->cri, &req, x->pull_timeout_ms, kr_start_pull_cb, s, s->m);
	}
}

static void kr_start_poststart(struct kr_start *);

/* The runtime answered for the container the intent was about: drop the record. */
static void
kr_start_intent_done(struct kr_start *s)
{
	if (!s->intent)
		return;
	s->intent = 0;
	kr_intent_del(s->kr, s->a.pod->uid, "container", s->a.c->c_name, s->restart_count);
}

static void
kr_start_start_cb(
    int code, const char *message, const Runtime__V1__StartContainerResponse *r, void *arg)
{
	struct kr_start        *s = arg;
	struct kr_ctx          *x = kr_ctx(s->kr);
	const struct container *c = s->a.c;

	(void)r;
	kr_start_intent_done(s);
	if (code != GRPC_OK) {
		events_pod(
		    x->events, s->a.pod, c->c_name, EV_WARNING, "Failed", "Error: %s", message);
		kr_start_end(s, -1, "RunContainerError", message);
		return;
	}
	events_pod(x->events, s->a.pod, c->c_name, EV_NORMAL, "Started", "Started container %s",
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
	struct kr_ctx                     *x = kr_ctx(s->kr);
	const struct container            *c = s->a.c;
	Runtime__V1__StartContainerRequest req = RUNTIME__V1__START_CONTAINER_REQUEST__INIT;

	if (code != GRPC_OK) {
		kr_start_intent_done(s);
		events_pod(
		    x->events, s->a.pod, c->c_name, EV_WARNING, "Failed", "Error: %s", message);
		kr_start_end(s, -1, "CreateContainerError", message);
		return;
	}
	s->container_id = xstrdup(r->container_id);
	events_pod(x->events, s->a.pod, c->c_name, EV_NORMAL, "Created", "Created container %s",
	    c->c_name);
	req.container_id = s->container_id;
	s->state = ST_START;
	kr_sync_call(s->m, "StartContainer", c->c_name);
	cri_start_container(x->cri, &req, x->timeout_ms, kr_start_start_cb, s, s->m);
}

static void
kr_start_create(struct kr_start *s)
{
	struct kr_ctx                      *x = kr_ctx(s->kr);
	const struct container             *c = s->a.c;
	const struct rt_container          *prev = rt_find_container(s->a.rt, c->c_name);
	Runtime__V1__CreateContainerRequest req = RUNTIME__V1__CREATE_CONTAINER_REQUEST__INIT;
	Runtime__V1__ContainerConfig       *cfg;
	struct kr_cinput                    in;
	char                                err[1024];
	char                               *logdir;

	memset(&in, 0, sizeof(in));
	if (prev != NULL) {
		in.restart_count = prev->restart_count + 1;
	} else {
		logdir = kuberuntime_pod_log_dir(x->env->logs_dir, s->a.pod);
		in.restart_count = kuberuntime_restart_count_from_logs(logdir, c->c_name);
		free(logdir);
	}
	in.image_ref = s->image_ref;
	in.pod_ip = s->a.pod_ip;
	in.pod_ips = s->a.pod_ips;
	cfg = kr_container_config(x->env, s->a.pod, c, &in, err, sizeof(err));
	if (cfg != NULL && c->c_kind == CK_EPHEMERAL && c->c_target_container != NULL &&
	    c->c_target_container[0] != '\0') {
		/* An ephemeral container shares its target's process namespace. */
		const struct rt_container    *t = rt_find_container(s->a.rt, c->c_target_container);
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
		events_pod(x->events, s->a.pod, c->c_name, EV_WARNING, "Failed", "Error: %s", err);
		kr_start_end(s, -1, "CreateContainerConfigError", err);
		return;
	}
	req.pod_sandbox_id = (char *)s->a.sandbox_id;
	req.config = cfg;
	req.sandbox_config = (Runtime__V1__PodSandboxConfig *)s->a.sandbox_config;
	s->restart_count = in.restart_count;
	s->intent = 1;
	kr_intent_put(s->kr, s->a.pod->uid, "container", c->c_name, s->restart_count);
	s->state = ST_CREATE;
	kr_sync_call(s->m, "CreateContainer", c->c_name);
	cri_create_container(x->cri, &req, x->timeout_ms, kr_start_create_cb, s, s->m);
	kr_msg_free(cfg);
}

static void
kr_start_kill_cb(int rc, const char *err, void *arg)
{
	struct kr_start *s = arg;

	(void)rc;
	(void)err;
	kr_start_end(s, -1, "PostStartHookError", s->fail_msg);
}

static void
kr_start_hook_cb(int rc, const char *msg, void *arg)
{
	struct kr_start        *s = arg;
	struct kr_ctx          *x = kr_ctx(s->kr);
	const struct container *c = s->a.c;

	if (rc == 0) {
		kr_start_end(s, 0, NULL, NULL);
		return;
	}
	log_warnx("%s: pod=%s/%s container %s: postStart: %s", __func__, s->a.pod->ns,
	    s->a.pod->name, c->c_name, msg);
	events_pod(x->events, s->a.pod, c->c_name, EV_WARNING, "FailedPostStartHook", "%s", msg);
	free(s->fail_msg);
	s->fail_msg = xstrdup(msg);
	s->state = ST_POSTSTART_KILL;
	kr_sync_call(s->m, "StopContainer", c->c_name);
	s->kop = kr_kill_start(s->kr, s->m, s->a.pod, c, s->container_id, c->c_name, s->a.pod_ip,
	    "FailedPostStartHook", -1, kr_start_kill_cb, s);
}

static void
kr_start_poststart(struct kr_start *s)
{
	s->state = ST_POSTSTART;
	kr_sync_call(s->m, "postStart hook", s->a.c->c_name);
	s->hook = kr_hook_run(s->kr, s->m, s->a.pod, s->a.c, s->a.c->c_post_start, s->container_id,
	    s->a.pod_ip, KR_POSTSTART_TIMEOUT_S * 1000, kr_start_hook_cb, s);
}

struct kr_start *
kr_start_container(struct kr_sync *m, const struct kr_start_args *a,
    void (*done)(int, const char *, void *), void                *arg)
{
	struct kuberuntime             *kr = kr_sync_kr(m);
	struct kr_ctx                  *x = kr_ctx(kr);
	struct kr_start                *s = xcalloc(1, sizeof(*s));
	const struct container         *c = a->c;
	const struct rt_container      *prev = rt_find_container(a->rt, c->c_name);
	Runtime__V1__ImageStatusRequest req = RUNTIME__V1__IMAGE_STATUS_REQUEST__INIT;
	Runtime__V1__ImageSpec          spec = RUNTIME__V1__IMAGE_SPEC__INIT;
	char                           *msg = NULL;
	int64_t                         remaining = 0;

	s->m = m;
	s->kr = kr;
	s->a = *a;
	s->done = done;
	s->arg = arg;
	/* Crash-loop backoff applies to restarts of a container that exited. */
	if (prev != NULL && prev->state == RT_EXITED &&
	    backoff_check_container(x->crash_bo, a->pod, c, a->rt, kr_wall_ms(), &msg)) {
		char *key = backoff_key(a->pod, c);

		events_pod(x->events, a->pod, c->c_name, EV_WARNING, "BackOff",
		    "Back-off restarting failed container %s in pod %s_%s(%s)", c->c_name,
		    a->pod->name, a->pod->ns, a->pod->uid);
		if (backoff_in_backoff(
		        x->crash_bo, key, prev->finished_at / 1000000, kr_wall_ms(), &remaining))
			kr_resync_after(kr_sync_pod(m), remaining + 50);
		else
			kr_resync_after(kr_sync_pod(m), 1000);
		free(key);
		kr_start_end(s, 1, "CrashLoopBackOff", msg);
		free(msg);
		return s;
	}
	free(msg);
	if (prev != NULL && prev->state == RT_CREATED && prev->id != NULL &&
	    prev->hash == container_hash(c) &&
	    kr_intent_has(kr, a->pod->uid, "container", c->c_name, prev->restart_count)) {
		/* Created by a daemon that stopped before starting it: start that one. */
		Runtime__V1__StartContainerRequest sreq =
		    RUNTIME__V1__START_CONTAINER_REQUEST__INIT;

		log_info("pod %s/%s: adopting container %s (restart count %d, id %s) created "
		         "before a restart",
		    a->pod->ns, a->pod->name, c->c_name, prev->restart_count, prev->id);
		s->container_id = xstrdup(prev->id);
		s->restart_count = prev->restart_count;
		s->intent = 1;
		sreq.container_id = s->container_id;
		s->state = ST_START;
		kr_sync_call(m, "StartContainer", c->c_name);
		cri_start_container(x->cri, &sreq, x->timeout_ms, kr_start_start_cb, s, m);
		return s;
	}
	if (c->c_image == NULL || c->c_image[0] == '\0') {
		kr_start_end(s, -1, "InvalidImageName", "no image given");
		return s;
	}
	spec.image = c->c_image;
	req.image = &spec;
	s->state = ST_IMAGE;
	kr_sync_call(m, "ImageStatus", c->c_name);
	cri_image_status(x->cri, &req, x->timeout_ms, kr_start_image_cb, s, m);
	return s;
}

void
kr_start_free(struct kr_start *s)
{
	if (s == NULL)
		return;
	if (s->later != NULL)
		event_free(s->later);
	kr_hook_free(s->hook);
	kr_kill_free(s->kop);
	free(s->image_ref);
	free(s->container_id);
	free(s->fail_reason);
	free(s->fail_msg);
	free(s);
}
