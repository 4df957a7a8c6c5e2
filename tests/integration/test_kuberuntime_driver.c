/* test_kuberuntime_driver.c — drives the runtime manager's machines through real pod
 * workers on a real event loop against the fake CRI (tests/fakecri): init containers in
 * order, kill with a preStop hook and grace, postStart failure, ErrImageNeverPull and
 * image pull backoff, crash-loop backoff intervals, cancellation in the middle of a call.
 * Usage: test_kuberuntime_driver CRI_SOCKET CONTROL_SOCKET WORKDIR
 * Prints TAP-like lines and "N passed, N failed"; exits 1 on failure. */
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>

#include <event2/buffer.h>
#include <event2/bufferevent.h>
#include <event2/event.h>
#include <event2/listener.h>

#include "core/config.h"
#include "cri/cri.h"
#include "node/events.h"
#include "kuberuntime/kuberuntime.h"
#include "core/log.h"
#include "pod/pod.h"
#include "node/podcache.h"
#include "node/podworkers.h"
#include "core/util.h"

static struct event_base  *base;
static struct cri         *cri;
static struct podcache    *cache;
static struct events      *evs;
static struct kuberuntime *kr;
static struct podworkers  *pws;
static struct klet_config  cfg;
static const char         *ctl_sock;
static const char         *workdir;
static int                 npass, nfail;
static int real; /* KR_REAL=1: a real containerd (busybox commands, no control socket) */

static void
check(int ok, const char *fmt, ...)
{
	va_list ap;

	printf("%s - ", ok ? "ok" : "not ok");
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	printf("\n");
	fflush(stdout);
	if (ok)
		npass++;
	else
		nfail++;
}

/* ---- running the loop until a condition holds ---- */

static int (*wait_pred)(void *);
static void *wait_arg;
static int   wait_ok;

static void
tick(evutil_socket_t fd, short what, void *arg)
{
	(void)fd;
	(void)what;
	(void)arg;
	if (pws != NULL)
		podworkers_sync_due(pws, now_mono_ms());
	if (wait_pred != NULL && wait_pred(wait_arg)) {
		wait_ok = 1;
		event_base_loopbreak(base);
	}
}

static void
limit_cb(evutil_socket_t fd, short what, void *arg)
{
	(void)fd;
	(void)what;
	(void)arg;
	event_base_loopbreak(base);
}

/* Runs the loop until pred(arg) or limit_ms (a hang guard, not a performance check). */
static int
run_until(int (*pred)(void *), void *arg, int64_t limit_ms)
{
	struct event  *t = event_new(base, -1, EV_PERSIST, tick, NULL);
	struct event  *lim = evtimer_new(base, limit_cb, NULL);
	struct timeval tv = { 0, 50 * 1000 };
	struct timeval ltv;

	wait_pred = pred;
	wait_arg = arg;
	wait_ok = 0;
	evtimer_add(t, &tv);
	ltv.tv_sec = limit_ms / 1000;
	ltv.tv_usec = (limit_ms % 1000) * 1000;
	evtimer_add(lim, &ltv);
	event_base_dispatch(base);
	event_free(t);
	event_free(lim);
	wait_pred = NULL;
	return wait_ok;
}

static int
never(void *arg)
{
	(void)arg;
	return 0;
}

static int
cri_is_ready(void *arg)
{
	(void)arg;
	return cri_ready(cri);
}

/* ---- the fake's control socket ---- */

static char *
ctl(const char *json)
{
	char  *cmd = xsprintf("/usr/bin/python3 %s/tests/fakecri/ctl.py '%s' '%s' 2>&1",
            getenv("top_srcdir") ? getenv("top_srcdir") : ".", ctl_sock, json);
	FILE  *f = popen(cmd, "r");
	char  *out = xcalloc(1, 1 << 20);
	size_t n = 0, r;

	free(cmd);
	if (f == NULL)
		return out;
	while (n < (1 << 20) - 1 && (r = fread(out + n, 1, (1 << 20) - 1 - n, f)) > 0)
		n += r;
	pclose(f);
	return out;
}

/* ---- reading containers from the runtime ---- */

struct cinfo {
	char    name[64];
	int     state;
	int     exit_code;
	int     restart;
	int64_t created;
	int64_t started;
	int64_t finished;
};

struct clist {
	struct cinfo v[64];
	size_t       n;
	int          pending;
	int          done;
};

static void
cstatus_cb(int code, const char *msg, const Runtime__V1__ContainerStatusResponse *resp, void *arg)
{
	struct clist *cl = arg;
	struct cinfo *ci;
	size_t        i;

	(void)msg;
	if (code == GRPC_OK && resp->status != NULL && cl->n < 64) {
		ci = &cl->v[cl->n++];
		snprintf(ci->name, sizeof(ci->name), "%s", resp->status->metadata->name);
		ci->state = resp->status->state;
		ci->exit_code = resp->status->exit_code;
		ci->created = resp->status->created_at;
		ci->started = resp->status->started_at;
		ci->finished = resp->status->finished_at;
		for (i = 0; i < resp->status->n_annotations; i++)
			if (strcmp(resp->status->annotations[i]->key,
			        "io.kubernetes.container.restartCount") == 0)
				ci->restart = atoi(resp->status->annotations[i]->value);
	}
	if (--cl->pending == 0)
		cl->done = 1;
}

static void
clist_cb(int code, const char *msg, const Runtime__V1__ListContainersResponse *resp, void *arg)
{
	struct clist *cl = arg;
	size_t        i;

	(void)msg;
	if (code != GRPC_OK || resp->n_containers == 0) {
		cl->done = 1;
		return;
	}
	cl->pending = (int)resp->n_containers;
	for (i = 0; i < resp->n_containers; i++) {
		Runtime__V1__ContainerStatusRequest req =
		    RUNTIME__V1__CONTAINER_STATUS_REQUEST__INIT;

		req.container_id = resp->containers[i]->id;
		cri_container_status(cri, &req, 5000, cstatus_cb, cl, cl);
	}
}

static int
clist_done(void *arg)
{
	return ((struct clist *)arg)->done;
}

static void         start_list(const char *, struct clist *);
static int          poll_busy;
static struct clist poll_cur;

/* Synchronous read, only from top-level test code (never inside a loop callback). */
static void
containers(const char *uid, struct clist *cl)
{
	/* A poll still in flight writes into poll_cur: let it land first. */
	if (poll_busy) {
		run_until(clist_done, &poll_cur, 10000);
		poll_busy = 0;
	}
	start_list(uid, cl);
	run_until(clist_done, cl, 10000);
}

static const struct cinfo *
newest(const struct clist *cl, const char *name)
{
	const struct cinfo *best = NULL;
	size_t              i;

	for (i = 0; i < cl->n; i++)
		if (strcmp(cl->v[i].name, name) == 0 &&
		    (best == NULL || cl->v[i].created > best->created))
			best = &cl->v[i];
	return best;
}

static int
count_named(const struct clist *cl, const char *name)
{
	size_t i;
	int    n = 0;

	for (i = 0; i < cl->n; i++)
		n += strcmp(cl->v[i].name, name) == 0;
	return n;
}

/* ---- predicates ---- */

struct running_arg {
	const char *uid;
	const char *name;
	int         min_restart;
};

/* An asynchronous poll of the runtime (predicates run inside the loop: no nesting). */
static struct clist poll_last;
static int64_t      poll_at;

static void
start_list(const char *uid, struct clist *cl)
{
	Runtime__V1__ListContainersRequest req = RUNTIME__V1__LIST_CONTAINERS_REQUEST__INIT;
	Runtime__V1__ContainerFilter       f = RUNTIME__V1__CONTAINER_FILTER__INIT;
	Runtime__V1__ContainerFilter__LabelSelectorEntry e =
	    RUNTIME__V1__CONTAINER_FILTER__LABEL_SELECTOR_ENTRY__INIT;
	Runtime__V1__ContainerFilter__LabelSelectorEntry *ep = &e;

	memset(cl, 0, sizeof(*cl));
	e.key = "io.kubernetes.pod.uid";
	e.value = (char *)uid;
	f.label_selector = &ep;
	f.n_label_selector = 1;
	req.filter = &f;
	cri_list_containers(cri, &req, 5000, clist_cb, cl, cl);
}

static int
is_running(void *arg)
{
	struct running_arg *ra = arg;
	const struct cinfo *c;

	if (poll_busy && poll_cur.done) {
		poll_last = poll_cur;
		poll_busy = 0;
		c = newest(&poll_last, ra->name);
		if (c != NULL && c->state == RUNTIME__V1__CONTAINER_STATE__CONTAINER_RUNNING &&
		    c->restart >= ra->min_restart)
			return 1;
	}
	if (!poll_busy && now_mono_ms() - poll_at >= 200) {
		poll_at = now_mono_ms();
		poll_busy = 1;
		start_list(ra->uid, &poll_cur);
	}
	return 0;
}

struct err_arg {
	const char *uid;
	const char *name;
	const char *reason;
};

static int
has_start_error(void *arg)
{
	struct err_arg       *ea = arg;
	struct kr_start_error e;

	return kuberuntime_start_error(kr, ea->uid, ea->name, &e) == 0 &&
	    strcmp(e.reason, ea->reason) == 0;
}

static int
is_state(void *arg)
{
	const char   **a = arg; /* uid, state name */
	struct pw_view v;

	return podworkers_get(pws, a[0], &v) == 0 && strcmp(pw_state_name(v.state), a[1]) == 0 &&
	    !v.working;
}

struct ev_find {
	const char *uid;
	const char *reason;
	const char *msg_has;
	int         found;
	char        order[2048];
};

static void
ev_scan(const struct ev_record *r, void *arg)
{
	struct ev_find *f = arg;

	if (r->uid == NULL || strcmp(r->uid, f->uid) != 0)
		return;
	if (strcmp(r->reason, f->reason) == 0 &&
	    (f->msg_has == NULL || strstr(r->message, f->msg_has) != NULL))
		f->found += r->count;
	if (strcmp(r->reason, "Started") == 0 &&
	    strlen(f->order) + strlen(r->message) + 2 < sizeof(f->order)) {
		strcat(f->order, r->message + strlen("Started container "));
		strcat(f->order, ",");
	}
}

static int
event_count(const char *uid, const char *reason, const char *msg_has, char *order, size_t len)
{
	struct ev_find f;

	memset(&f, 0, sizeof(f));
	f.uid = uid;
	f.reason = reason;
	f.msg_has = msg_has;
	events_foreach(evs, ev_scan, &f);
	if (order != NULL)
		snprintf(order, len, "%s", f.order);
	return f.found;
}

static int
ev_pred(void *arg)
{
	const char **a = arg; /* uid, reason */

	return event_count(a[0], a[1], NULL, NULL, 0) > 0;
}

/* ---- pods ---- */

static struct pod *
mkpod(const char *yaml)
{
	char        err[256];
	struct pod *p = pod_from_yaml(yaml, strlen(yaml), err, sizeof(err));

	if (p == NULL) {
		fprintf(stderr, "bad test pod: %s\n", err);
		exit(2);
	}
	return p;
}

static void
add(struct pod *p)
{
	podworkers_update(pws, p, PW_UPDATE_CREATE, -1);
}

static void
kill_pod(struct pod *p, int64_t grace)
{
	podworkers_update(pws, p, PW_UPDATE_KILL, grace);
}

static int
wait_finished(const char *uid)
{
	const char *a[2] = { uid, "finished" };

	return run_until(is_state, a, 30000);
}

/* ---- scenarios ---- */

static void
t_init_containers(void)
{
	struct pod *p = mkpod(
	    "metadata: {name: init, namespace: t, uid: u-init}\n"
	    "spec:\n  terminationGracePeriodSeconds: 2\n  initContainers:\n"
	    "  - {name: first, image: 'klet.local/busybox:1.35', command: [sh, -c, 'sleep 0.2; exit 0']}\n"
	    "  - {name: second, image: 'klet.local/busybox:1.35', command: ['true']}\n"
	    "  containers:\n"
	    "  - {name: app, image: 'klet.local/busybox:1.35', command: [sleep, inf]}\n");
	struct running_arg  ra = { "u-init", "app", 0 };
	struct clist        cl;
	const struct cinfo *a, *b, *c;
	char                order[2048];

	add(p);
	check(run_until(is_running, &ra, 20000), "init: app container running");
	containers("u-init", &cl);
	a = newest(&cl, "first");
	b = newest(&cl, "second");
	c = newest(&cl, "app");
	check(a && b && c && a->exit_code == 0 && b->exit_code == 0,
	    "init: both init containers exited 0");
	check(a && b && c && a->finished <= b->started && b->finished <= c->started,
	    "init: each started after the previous one finished");
	event_count("u-init", "Started", NULL, order, sizeof(order));
	check(strcmp(order, "first,second,app,") == 0, "init: Started events in order (%s)", order);
	check(event_count("u-init", "Pulled", "already present", NULL, 0) == 3,
	    "init: Pulled 'already present' for each container (IfNotPresent, ImageStatus)");
	kill_pod(p, -1);
	check(wait_finished("u-init"), "init: killed and finished");
	containers("u-init", &cl);
	c = newest(&cl, "app");
	check(c != NULL && c->state == RUNTIME__V1__CONTAINER_STATE__CONTAINER_EXITED,
	    "init: app container exited after the kill");
	pod_unref(p);
}

static void
t_prestop_grace(void)
{
	char               *y = xsprintf("metadata: {name: stop, namespace: t, uid: u-stop}\n"
	                                               "spec:\n  terminationGracePeriodSeconds: 4\n  containers:\n"
	                                               "  - name: app\n    image: 'klet.local/busybox:1.35'\n    command: %s\n"
	                                               "    lifecycle:\n      preStop:\n        exec: {command: %s}\n",
            real ? "[sh, -c, \"trap '' TERM; while :; do sleep 1; done\"]" : "[fake-ignore-term]",
            real ? "[sh, -c, 'sleep 1.2']" : "[fake-exec, '0', ok, '', '1200']");
	struct pod         *p;
	struct running_arg  ra = { "u-stop", "app", 0 };
	const char         *a[2] = { "u-stop", "Killing" };
	int64_t             t0;
	char               *out;
	struct clist        cl;
	const struct cinfo *c;

	p = mkpod(y);
	free(y);
	add(p);
	check(run_until(is_running, &ra, 20000), "preStop: app running");
	if (real)
		run_until(never, NULL, 1000); /* let the shell install its trap */
	free(ctl("{\"cmd\":\"reset_calls\"}"));
	t0 = now_mono_ms();
	kill_pod(p, -1);
	check(run_until(ev_pred, a, 10000), "preStop: Killing event recorded");
	check(wait_finished("u-stop"), "preStop: pod finished");
	if (real)
		goto real_checks;
	out = ctl("{\"cmd\":\"requests\",\"method\":\"ExecSync\",\"n\":1}");
	check(strstr(out, "fake-exec") != NULL, "preStop: hook ran through ExecSync");
	free(out);
	out = ctl("{\"cmd\":\"requests\",\"method\":\"StopContainer\",\"n\":1}");
	/* 4 s grace, the hook took 1.2 s: 4 - 1 = 3 s left (whole seconds, as the kubelet). */
	check(strstr(out, "\"timeout\": \"3\"") != NULL || strstr(out, "\"timeout\": 3") != NULL,
	    "preStop: StopContainer got the remaining grace (3 s)");
	if (nfail)
		printf("# %s\n", out);
	free(out);
real_checks:
	containers("u-stop", &cl);
	c = newest(&cl, "app");
	check(c != NULL && c->exit_code == 137, "preStop: SIGTERM ignored -> killed (137)");
	check(now_mono_ms() - t0 >= 3000, "preStop: not killed before hook + grace");
	pod_unref(p);
}

static void
t_poststart_failure(void)
{
	struct pod *p = mkpod(
	    "metadata: {name: post, namespace: t, uid: u-post}\n"
	    "spec:\n  terminationGracePeriodSeconds: 2\n  containers:\n"
	    "  - name: app\n    image: 'klet.local/busybox:1.35'\n    command: [sleep, inf]\n"
	    "    lifecycle:\n      postStart:\n        exec: {command: [sh, -c, 'echo out; exit 3']}\n");
	struct err_arg        ea = { "u-post", "app", "PostStartHookError" };
	const char           *a[2] = { "u-post", "FailedPostStartHook" };
	struct kr_start_error e;
	struct clist          cl;
	const struct cinfo   *c;

	add(p);
	check(run_until(has_start_error, &ea, 20000), "postStart: PostStartHookError recorded");
	check(run_until(ev_pred, a, 5000), "postStart: FailedPostStartHook event");
	if (kuberuntime_start_error(kr, "u-post", "app", &e) == 0)
		printf("# %s: %s\n", e.reason, e.message);
	containers("u-post", &cl);
	c = newest(&cl, "app");
	check(c != NULL && c->state == RUNTIME__V1__CONTAINER_STATE__CONTAINER_EXITED,
	    "postStart: the container was killed");
	kill_pod(p, -1);
	check(wait_finished("u-post"), "postStart: pod finished");
	pod_unref(p);
}

static void
t_images(void)
{
	struct pod *p = mkpod(
	    "metadata: {name: img, namespace: t, uid: u-img}\n"
	    "spec:\n  terminationGracePeriodSeconds: 2\n  containers:\n"
	    "  - {name: never, image: 'klet.local/missing:1', imagePullPolicy: Never,"
	    " command: [sleep, inf]}\n"
	    "  - {name: pull, image: 'registry.invalid/missing:2', imagePullPolicy: IfNotPresent,"
	    " command: [sleep, inf]}\n"
	    "  - {name: ok, image: 'klet.local/busybox:1.35', command: [sleep, inf]}\n");
	struct err_arg        never = { "u-img", "never", "ErrImageNeverPull" };
	struct err_arg        pull = { "u-img", "pull", "ErrImagePull" };
	struct err_arg        pullbo = { "u-img", "pull", "ImagePullBackOff" };
	struct running_arg    ra = { "u-img", "ok", 0 };
	struct kr_start_error e;

	add(p);
	check(run_until(has_start_error, &never, 20000), "images: ErrImageNeverPull");
	if (kuberuntime_start_error(kr, "u-img", "never", &e) == 0)
		check(strstr(e.message, "is not present with pull policy of Never") != NULL,
		    "images: the kubelet's message (%s)", e.message);
	check(run_until(has_start_error, &pull, 20000), "images: ErrImagePull after a failed pull");
	check(run_until(has_start_error, &pullbo, 20000), "images: then ImagePullBackOff");
	check(run_until(is_running, &ra, 20000), "images: the other container still runs");
	check(event_count("u-img", "Pulling", NULL, NULL, 0) >= 1 &&
	        event_count("u-img", "Failed", "Failed to pull image", NULL, 0) >= 1,
	    "images: Pulling and Failed events");
	kill_pod(p, -1);
	check(wait_finished("u-img"), "images: pod finished");
	pod_unref(p);
}

static void
t_crashloop(void)
{
	struct pod *p = mkpod(
	    "metadata: {name: crash, namespace: t, uid: u-crash}\n"
	    "spec:\n  terminationGracePeriodSeconds: 2\n  containers:\n"
	    "  - {name: app, image: 'klet.local/busybox:1.35', command: [sh, -c, 'exit 2']}\n");
	struct err_arg        ea = { "u-crash", "app", "CrashLoopBackOff" };
	struct clist          cl;
	int64_t               made[16];
	size_t                i, n = 0;
	int                   ok = 1;
	struct kr_start_error e;

	add(p);
	check(run_until(has_start_error, &ea, 20000), "crashloop: CrashLoopBackOff recorded");
	if (kuberuntime_start_error(kr, "u-crash", "app", &e) == 0)
		check(strstr(e.message, "back-off") != NULL &&
		        strstr(e.message, "restarting failed container=app") != NULL,
		    "crashloop: message (%s)", e.message);
	/* initial 400 ms, doubling: let it restart a few times */
	run_until(never, NULL, 6000);
	containers("u-crash", &cl);
	/* Creation times: the backoff holds back the creation of the next instance, and the
	 * newest may be listed between CreateContainer and StartContainer (started 0). */
	for (i = 0; i < cl.n && n < 16; i++)
		if (strcmp(cl.v[i].name, "app") == 0)
			made[n++] = cl.v[i].created;
	/* sort */
	for (i = 1; i < n; i++) {
		int64_t t = made[i];
		size_t  j = i;

		for (; j > 0 && made[j - 1] > t; j--)
			made[j] = made[j - 1];
		made[j] = t;
	}
	check(n >= 3, "crashloop: restarted (%zu instances)", n);
	for (i = 2; i < n && i < 5; i++) {
		int64_t gap = (made[i] - made[i - 1]) / 1000000;
		int64_t want = 400LL << (i - 2);

		printf("# gap %zu: %" PRId64 " ms (backoff %" PRId64 " ms)\n", i, gap, want);
		if (gap < want * 9 / 10)
			ok = 0;
	}
	check(ok, "crashloop: restarts held back by a growing backoff");
	check(newest(&cl, "app") && newest(&cl, "app")->restart == count_named(&cl, "app") - 1,
	    "crashloop: restart count grows with each instance");
	check(
	    event_count("u-crash", "BackOff", "Back-off restarting failed container", NULL, 0) >= 1,
	    "crashloop: BackOff event");
	kill_pod(p, -1);
	check(wait_finished("u-crash"), "crashloop: pod finished");
	pod_unref(p);
}

/* A local HTTP endpoint for httpGet hooks. */
static char hook_req[2048];
static int  hook_port;

static void
hook_read(struct bufferevent *bev, void *arg)
{
	struct evbuffer  *in = bufferevent_get_input(bev);
	size_t            n = evbuffer_get_length(in), have = strlen(hook_req);
	static const char reply[] = "HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok";

	(void)arg;
	if (have + n >= sizeof(hook_req))
		n = sizeof(hook_req) - 1 - have;
	evbuffer_remove(in, hook_req + have, n);
	hook_req[have + n] = '\0';
	evbuffer_drain(in, evbuffer_get_length(in));
	if (strstr(hook_req, "\r\n\r\n") != NULL)
		bufferevent_write(bev, reply, sizeof(reply) - 1);
}

static void
hook_event(struct bufferevent *bev, short what, void *arg)
{
	(void)what;
	(void)arg;
	bufferevent_free(bev);
}

static void
hook_accept(struct evconnlistener *l, evutil_socket_t fd, struct sockaddr *sa, int len, void *arg)
{
	struct bufferevent *bev = bufferevent_socket_new(base, fd, BEV_OPT_CLOSE_ON_FREE);

	(void)l;
	(void)sa;
	(void)len;
	(void)arg;
	bufferevent_setcb(bev, hook_read, NULL, hook_event, NULL);
	bufferevent_enable(bev, EV_READ | EV_WRITE);
}

static void
t_hooks(void)
{
	struct sockaddr_in     sin;
	socklen_t              sl = sizeof(sin);
	struct evconnlistener *lis;
	struct running_arg     ra = { "u-hooks", "app", 0 };
	struct pod            *p;
	char                  *y, *out;

	memset(&sin, 0, sizeof(sin));
	sin.sin_family = AF_INET;
	sin.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	lis = evconnlistener_new_bind(base, hook_accept, NULL,
	    LEV_OPT_CLOSE_ON_FREE | LEV_OPT_REUSEABLE, 8, (struct sockaddr *)&sin, sizeof(sin));
	getsockname(evconnlistener_get_fd(lis), (struct sockaddr *)&sin, &sl);
	hook_port = ntohs(sin.sin_port);
	y = xsprintf(
	    "metadata: {name: hooks, namespace: t, uid: u-hooks}\n"
	    "spec:\n  terminationGracePeriodSeconds: 3\n  containers:\n"
	    "  - name: app\n    image: 'klet.local/busybox:1.35'\n    command: [sleep, inf]\n"
	    "    lifecycle:\n"
	    "      postStart:\n        httpGet: {host: 127.0.0.1, port: %d, path: /started,"
	    " httpHeaders: [{name: X-Hook, value: post}]}\n"
	    "      preStop:\n        sleep: {seconds: 1}\n",
	    hook_port);
	p = mkpod(y);
	free(y);
	add(p);
	check(run_until(is_running, &ra, 20000), "hooks: app running after an httpGet postStart");
	check(strstr(hook_req, "GET /started HTTP/1.1") != NULL &&
	        strstr(hook_req, "X-Hook: post") != NULL,
	    "hooks: postStart httpGet reached the "
	    "endpoint with its header");
	free(ctl("{\"cmd\":\"reset_calls\"}"));
	kill_pod(p, -1);
	check(wait_finished("u-hooks"), "hooks: pod finished");
	out = ctl("{\"cmd\":\"requests\",\"method\":\"StopContainer\",\"n\":1}");
	check(strstr(out, "\"timeout\": \"2\"") != NULL || strstr(out, "\"timeout\": 2") != NULL,
	    "hooks: a 1 s preStop sleep is deducted from the 3 s grace");
	free(out);
	evconnlistener_free(lis);
	pod_unref(p);
}

static void
t_sidecar_and_update(void)
{
	static const char *fmt =
	    "metadata: {name: side, namespace: t, uid: u-side}\n"
	    "spec:\n  terminationGracePeriodSeconds: 2\n  initContainers:\n"
	    "  - {name: proxy, image: 'klet.local/busybox:1.35', restartPolicy: Always,"
	    " command: [sleep, inf]}\n"
	    "  containers:\n"
	    "  - {name: app, image: 'klet.local/busybox:1.35', command: [sleep, '%s']}\n";
	char              *y = xsprintf(fmt, "inf");
	struct pod        *p = mkpod(y), *p2;
	struct running_arg ra = { "u-side", "app", 0 };
	struct running_arg rs = { "u-side", "proxy", 0 };
	struct running_arg ra1 = { "u-side", "app", 1 };
	char               order[2048];

	free(y);
	add(p);
	check(run_until(is_running, &ra, 20000), "sidecar: app running");
	check(run_until(is_running, &rs, 5000), "sidecar: the sidecar keeps running");
	event_count("u-side", "Started", NULL, order, sizeof(order));
	check(strcmp(order, "proxy,app,") == 0, "sidecar: started before the app (%s)", order);
	/* A changed command changes the hash: the app is killed and started again. */
	y = xsprintf(fmt, "99999");
	p2 = mkpod(y);
	free(y);
	podworkers_update(pws, p2, PW_UPDATE_UPDATE, -1);
	check(run_until(is_running, &ra1, 20000), "update: app replaced (restart count 1)");
	check(event_count("u-side", "Killing", NULL, NULL, 0) >= 1, "update: Killing event");
	kill_pod(p2, -1);
	check(wait_finished("u-side"), "sidecar: pod finished");
	{
		struct clist        cl;
		const struct cinfo *a, *sc;

		containers("u-side", &cl);
		a = newest(&cl, "app");
		sc = newest(&cl, "proxy");
		check(a != NULL && sc != NULL && a->finished > 0 && a->finished <= sc->finished,
		    "sidecar: stopped after the app container");
	}
	pod_unref(p);
	pod_unref(p2);
}

static int orphan_rc = -99;

static void
orphan_done(int rc, void *arg)
{
	(void)arg;
	orphan_rc = rc;
}

static int
orphan_finished(void *arg)
{
	(void)arg;
	return orphan_rc != -99;
}

/* Housekeeping's kill of a pod known only from the runtime (no spec, no worker). */
static void
t_orphan(struct pw_syncer *syncer, struct pw_options *po)
{
	struct pod *p =
	    mkpod("metadata: {name: orphan, namespace: t, uid: u-orphan}\n"
	          "spec:\n  containers:\n"
	          "  - {name: a, image: 'klet.local/busybox:1.35', command: [sleep, inf]}\n"
	          "  - {name: b, image: 'klet.local/busybox:1.35', command: [sleep, inf]}\n");
	struct running_arg          ra = { "u-orphan", "b", 0 };
	const struct rt_pod_status *st;
	struct rt_pod_status        copy;
	struct clist                cl;
	size_t                      i;
	int                         all_exited = 1;

	add(p);
	check(run_until(is_running, &ra, 20000), "orphan: pod running");
	/* A resync (every 300 ms here) reads the runtime and fills the cache. */
	run_until(never, NULL, 1000);
	/* The worker goes away without a kill (as after a restart with the manifest gone). */
	podworkers_free(pws);
	pws = podworkers_new(base, syncer, po);
	/* The machines' own reads keep the cache. */
	st = podcache_get(cache, "u-orphan", NULL);
	check(st != NULL && st->nsandboxes == 1 && st->ncontainers == 2,
	    "orphan: the pod cache knows the pod");
	if (st == NULL) {
		pod_unref(p);
		return;
	}
	rt_pod_status_copy(&copy, st);
	kuberuntime_kill_running(kr, &copy, 2, orphan_done, NULL);
	run_until(orphan_finished, NULL, 20000);
	check(orphan_rc == 0, "orphan: kill_running done (rc %d)", orphan_rc);
	containers("u-orphan", &cl);
	for (i = 0; i < cl.n; i++)
		if (cl.v[i].state != RUNTIME__V1__CONTAINER_STATE__CONTAINER_EXITED)
			all_exited = 0;
	check(cl.n == 2 && all_exited, "orphan: its containers stopped");
	rt_pod_status_clear(&copy);
	pod_unref(p);
}

static int
in_call(void *arg)
{
	struct kr_pod_view v;

	return kuberuntime_get(kr, arg, &v) == 0 && v.call != NULL &&
	    strcmp(v.call, "RunPodSandbox") == 0;
}

static void
t_cancel(void)
{
	struct pod *p =
	    mkpod("metadata: {name: cancel, namespace: t, uid: u-cancel}\n"
	          "spec:\n  containers:\n"
	          "  - {name: app, image: 'klet.local/busybox:1.35', command: [sleep, inf]}\n");
	struct kr_pod_view v;
	char              *out;

	free(ctl(
	    "{\"cmd\":\"fault\",\"method\":\"RunPodSandbox\",\"latency_ms\":1500,\"count\":1}"));
	free(ctl("{\"cmd\":\"reset_calls\"}"));
	add(p);
	check(
	    run_until(in_call, "u-cancel", 10000), "cancel: RunPodSandbox in flight (podctl view)");
	if (kuberuntime_get(kr, "u-cancel", &v) == 0)
		printf("# machine=%s step=%s call=%s\n", v.machine, v.step, v.call);
	/* The worker goes away with the call in flight: nothing may run afterwards. */
	podworkers_free(pws);
	pws = NULL;
	run_until(never, NULL, 2500);
	check(kuberuntime_get(kr, "u-cancel", &v) == 0 && v.machine == NULL,
	    "cancel: no machine left for the pod");
	out = ctl("{\"cmd\":\"calls\"}");
	printf("# calls: %s", out);
	check(strstr(out, "RunPodSandbox") != NULL && strstr(out, "PodSandboxStatus") == NULL &&
	        strstr(out, "CreateContainer") == NULL,
	    "cancel: the machine stopped at the cancelled call (no PodSandboxStatus, no "
	    "CreateContainer)");
	free(out);
	free(ctl("{\"cmd\":\"clear_faults\"}"));
	pod_unref(p);
}

/* ---- real runtime: remove what an earlier run of this driver left (namespace "t") ---- */

static int cleanup_pending;

static void
rm_sb_cb(int code, const char *msg, const Runtime__V1__RemovePodSandboxResponse *r, void *arg)
{
	(void)code;
	(void)msg;
	(void)r;
	(void)arg;
	cleanup_pending--;
}

static void
stop_sb_cb(int code, const char *msg, const Runtime__V1__StopPodSandboxResponse *r, void *arg)
{
	Runtime__V1__RemovePodSandboxRequest req = RUNTIME__V1__REMOVE_POD_SANDBOX_REQUEST__INIT;

	(void)code;
	(void)msg;
	(void)r;
	req.pod_sandbox_id = arg;
	cri_remove_pod_sandbox(cri, &req, 30000, rm_sb_cb, NULL, NULL);
	free(arg);
}

static void
list_sb_cb(int code, const char *msg, const Runtime__V1__ListPodSandboxResponse *resp, void *arg)
{
	size_t i;

	(void)msg;
	(void)arg;
	cleanup_pending--;
	if (code != GRPC_OK)
		return;
	for (i = 0; i < resp->n_items; i++) {
		Runtime__V1__StopPodSandboxRequest req =
		    RUNTIME__V1__STOP_POD_SANDBOX_REQUEST__INIT;
		char *id = xstrdup(resp->items[i]->id);

		req.pod_sandbox_id = id;
		cleanup_pending++;
		cri_stop_pod_sandbox(cri, &req, 30000, stop_sb_cb, id, NULL);
	}
}

static int
cleanup_done(void *arg)
{
	(void)arg;
	return cleanup_pending == 0;
}

static void
cleanup_runtime(void)
{
	Runtime__V1__ListPodSandboxRequest req = RUNTIME__V1__LIST_POD_SANDBOX_REQUEST__INIT;
	Runtime__V1__PodSandboxFilter      f = RUNTIME__V1__POD_SANDBOX_FILTER__INIT;
	Runtime__V1__PodSandboxFilter__LabelSelectorEntry e =
	    RUNTIME__V1__POD_SANDBOX_FILTER__LABEL_SELECTOR_ENTRY__INIT;
	Runtime__V1__PodSandboxFilter__LabelSelectorEntry *ep = &e;

	e.key = "io.kubernetes.pod.namespace";
	e.value = "t";
	f.label_selector = &ep;
	f.n_label_selector = 1;
	req.filter = &f;
	cleanup_pending = 1;
	cri_list_pod_sandbox(cri, &req, 30000, list_sb_cb, NULL, NULL);
	run_until(cleanup_done, NULL, 60000);
}

static void
resync(const char *uid, void *arg)
{
	(void)arg;
	if (pws != NULL)
		podworkers_kick(pws, uid);
}

int
main(int argc, char **argv)
{
	struct pw_syncer  syncer;
	struct pw_options po;
	struct kr_options ko;
	char             *endpoint;
	const char       *only = getenv("KR_ONLY");

	real = getenv("KR_REAL") != NULL && atoi(getenv("KR_REAL")) == 1;

	if (argc < 4) {
		fprintf(stderr, "usage: %s CRI_SOCKET CONTROL_SOCKET WORKDIR\n", argv[0]);
		return 2;
	}
	ctl_sock = argv[2];
	workdir = argv[3];
	log_init(getenv("KR_V") ? atoi(getenv("KR_V")) : 0, 0);
	base = event_base_new();
	event_base_priority_init(base, 3);
	endpoint = xsprintf("unix://%s", argv[1]);
	cri = cri_new(base, endpoint, NULL, NULL, NULL);
	free(endpoint);
	if (cri == NULL || !run_until(cri_is_ready, NULL, 10000)) {
		printf("not ok - CRI client ready\n0 passed, 1 failed\n");
		return 1;
	}
	if (real)
		cleanup_runtime();
	memset(&cfg, 0, sizeof(cfg));
	cfg.root_dir = xsprintf("%s/root", workdir);
	cfg.pod_logs_dir = xsprintf("%s/logs", workdir);
	cfg.node_name = xstrdup("node-1");
	cfg.runtime_timeout_ms = 10000;
	cache = podcache_new(base);
	evs = events_new(0);
	memset(&ko, 0, sizeof(ko));
	ko.cgroup_root = real ? NULL : "";
	ko.host_ip = "192.0.2.1";
	ko.crash_backoff_initial_ms = 400;
	/* A max well above the start latency: an entry expires after 2 x max without an
	 * update, and a loaded machine may take seconds to start a container. */
	ko.crash_backoff_max_ms = 6400;
	ko.pull_backoff_initial_ms = 400;
	ko.pull_backoff_max_ms = 1600;
	kr = kuberuntime_new(base, cri, cache, &cfg, evs, &ko);
	kuberuntime_syncer(kr, &syncer);
	kuberuntime_set_resync(kr, resync, NULL);
	memset(&po, 0, sizeof(po));
	po.backoff_ms = 300;
	po.resync_ms = 300;
	pws = podworkers_new(base, &syncer, &po);

	if (only == NULL || strstr(only, "init"))
		t_init_containers();
	if (only == NULL || strstr(only, "prestop"))
		t_prestop_grace();
	if (only == NULL || strstr(only, "poststart"))
		t_poststart_failure();
	if (only == NULL || strstr(only, "images"))
		t_images();
	if (only == NULL || strstr(only, "crash"))
		t_crashloop();
	if ((only == NULL || strstr(only, "hooks")) && !real)
		t_hooks();
	if (only == NULL || strstr(only, "sidecar"))
		t_sidecar_and_update();
	if ((only == NULL || strstr(only, "orphan")) && !real)
		t_orphan(&syncer, &po);
	if ((only == NULL || strstr(only, "cancel")) && !real)
		t_cancel();

	podworkers_free(pws);
	kuberuntime_free(kr);
	events_free(evs);
	podcache_free(cache);
	cri_free(cri);
	event_base_free(base);
	free(cfg.root_dir);
	free(cfg.pod_logs_dir);
	free(cfg.node_name);
	printf("%d passed, %d failed\n", npass, nfail);
	return nfail == 0 ? 0 : 1;
}
