/* test_api_client.c — the API client and the reflector against the API server stand-in.
 * Run by test_api.sh, which starts the stand-in and sets KLET_TEST_KUBECONFIG,
 * KLET_TEST_AS_CTL (control port) and optionally KLET_TEST_MODE:
 *   (unset)   requests, errors, faults, list+watch, bookmarks, 410, GOAWAY, outage
 *   no-h2     the server does not offer h2: a clear error
 *   wrong-ca  the server's certificate does not verify: the call fails
 * Prints TAP-style lines and "N passed, N failed"; exits 1 on a failure. */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <event2/event.h>

#include "client/api.h"
#include "core/json.h"
#include "client/kubeconfig.h"
#include "core/log.h"
#include "node/podconfig.h"
#include "core/util.h"
#include "api/watch.h"
#include "store/store.h"

static struct event_base *base;
static const char        *ctl_port;
static int                npass, nfail;

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

static void
tick(evutil_socket_t fd, short ev, void *arg)
{
	(void)fd;
	(void)ev;
	(void)arg;
}

/* Runs the loop until cond(arg) holds or ms pass. Returns cond's last value. */
static int
run_until(int (*cond)(void *), void *arg, int64_t ms)
{
	struct event  *t = event_new(base, -1, EV_PERSIST, tick, NULL);
	struct timeval tv = { 0, 20000 };
	int64_t        end = now_mono_ms() + ms;
	int            r;

	event_add(t, &tv);
	while (!(r = cond(arg)) && now_mono_ms() < end)
		event_base_loop(base, EVLOOP_ONCE);
	event_free(t);
	return r;
}

static int
never(void *arg)
{
	(void)arg;
	return 0;
}

/* A control command; returns its output (caller frees). */
static char *
ctl(const char *fmt, ...)
{
	char    path[512], *cmd, *out = xcalloc(1, 1 << 20);
	va_list ap;
	FILE   *f;
	size_t  n;

	va_start(ap, fmt);
	vsnprintf(path, sizeof(path), fmt, ap);
	va_end(ap);
	cmd = xsprintf("curl -s --max-time 20 'http://127.0.0.1:%s%s'", ctl_port, path);
	f = popen(cmd, "r");
	n = f ? fread(out, 1, (1 << 20) - 1, f) : 0;
	out[n] = '\0';
	if (f)
		pclose(f);
	free(cmd);
	return out;
}

static void
ctl_create_pod_on(const char *name, const char *node)
{
	char *cmd = xsprintf(
	    "curl -s --max-time 20 -X POST 'http://127.0.0.1:%s/pods' -d "
	    "'{\"metadata\":{\"name\":\"%s\",\"namespace\":\"default\"},\"spec\":{\"nodeName\":"
	    "\"%s\",\"containers\":[{\"name\":\"c\",\"image\":\"busybox:1\"}]}}' >/dev/null",
	    ctl_port, name, node);

	if (system(cmd) != 0)
		fprintf(stderr, "ctl create failed\n");
	free(cmd);
}

static void
ctl_create_pod(const char *name)
{
	ctl_create_pod_on(name, "node1");
}

/* Sets the status of pod name to bytes of conditions (through a file: curl --data-binary). */
static void
ctl_big_status(const char *name, size_t bytes)
{
	char   path[] = "/tmp/klet-api-big.XXXXXX", *cmd;
	int    fd = mkstemp(path);
	FILE  *f = fd >= 0 ? fdopen(fd, "w") : NULL;
	size_t n = 0, i = 0;

	if (f == NULL) {
		fprintf(stderr, "mkstemp failed\n");
		return;
	}
	fputs("{\"conditions\":[", f);
	while (n < bytes) {
		n += (size_t)fprintf(f,
		    "%s{\"type\":\"example.com/c%zu\",\"status\":\"True\","
		    "\"message\":\"%0200d\"}",
		    i ? "," : "", i, 0);
		i++;
	}
	fputs("]}", f);
	fclose(f);
	cmd = xsprintf("curl -s --max-time 30 -X POST 'http://127.0.0.1:%s/pods/default/%s/status' "
	               "--data-binary @%s >/dev/null",
	    ctl_port, name, path);
	if (system(cmd) != 0)
		fprintf(stderr, "ctl status failed\n");
	free(cmd);
	unlink(path);
}

static void
ctl_quiet(const char *fmt, const char *a1)
{
	char *o = ctl(fmt, a1);

	free(o);
}

/* ---- plain requests ---- */

struct result {
	int     done;
	int     status;
	char    reason[64];
	char    message[512];
	int64_t retry_after;
	char   *body;
};

static void
got(const struct api_response *r, void *arg)
{
	struct result *res = arg;

	res->done = 1;
	res->status = r->status;
	res->retry_after = r->retry_after_s;
	snprintf(res->reason, sizeof(res->reason), "%s", r->reason);
	snprintf(res->message, sizeof(res->message), "%s", r->message);
	free(res->body);
	res->body = xstrdup(r->body);
}

static int
is_done(void *arg)
{
	return ((struct result *)arg)->done;
}

static void
call(struct api *a, struct result *res, const char *method, const char *path, const char *ctype,
    const char *body)
{
	free(res->body);
	memset(res, 0, sizeof(*res));
	api_request(a, method, path, ctype, body, body ? strlen(body) : 0, 0, got, res);
	run_until(is_done, res, 30000);
}

/* ---- the reflector's output ---- */

struct ops {
	int  add, update, remove, del, reconcile, reject;
	char last[256];
};

static void
on_op(enum pod_op op, const struct pod *p, const char *source, void *arg)
{
	struct ops *o = arg;

	(void)source;
	switch (op) {
	case POD_OP_ADD:
		o->add++;
		break;
	case POD_OP_UPDATE:
		o->update++;
		break;
	case POD_OP_REMOVE:
		o->remove++;
		break;
	case POD_OP_DELETE:
		o->del++;
		break;
	case POD_OP_RECONCILE:
		o->reconcile++;
		break;
	case POD_OP_REJECT:
		o->reject++;
		break;
	}
	snprintf(o->last, sizeof(o->last), "%s %s", pod_op_name(op), p->name);
}

struct wait_ops {
	struct ops   *o;
	struct watch *w;
	int           add, remove, del;
	uint64_t      bookmarks, expired, watches;
};

static int
ops_reached(void *arg)
{
	struct wait_ops   *wo = arg;
	struct watch_stats st;

	watch_get_stats(wo->w, &st);
	return wo->o->add >= wo->add && wo->o->remove >= wo->remove && wo->o->del >= wo->del &&
	    st.bookmarks >= wo->bookmarks && st.expired >= wo->expired && st.watches >= wo->watches;
}

static int
synced(void *arg)
{
	return watch_synced(arg);
}

static int
watching(void *arg)
{
	struct watch_stats st;

	watch_get_stats(arg, &st);
	return st.state == WATCH_WATCHING;
}

static int
server_open_watches(void)
{
	char *s = ctl("/stats"), *p = strstr(s, "\"open_watches\":");
	int   n = p ? atoi(p + 15) : -1;

	free(s);
	return n;
}

static int
one_open_watch(void *arg)
{
	(void)arg;
	return server_open_watches() == 1;
}

static void
test_requests(struct api *a)
{
	struct result    r = { 0 };
	struct api_stats st;

	call(a, &r, "GET", "/api/v1/namespaces/default/pods", NULL, NULL);
	check(r.status == 200 && strstr(r.body, "\"PodList\"") != NULL, "GET a list: 200 PodList");
	call(a, &r, "GET", "/api/v1/namespaces/default/pods/nosuch", NULL, NULL);
	check(r.status == 404 && strcmp(r.reason, "NotFound") == 0 &&
	        strstr(r.message, "not found") != NULL,
	    "404 with the Status reason and message");
	call(a, &r, "POST", "/api/v1/namespaces/default/pods", "application/json",
	    "{\"metadata\":{\"name\":\"direct\"},\"spec\":{\"nodeName\":\"elsewhere\","
	    "\"containers\":[{\"name\":\"c\",\"image\":\"i\"}]}}");
	check(r.status == 201, "POST creates (201)");
	call(a, &r, "PATCH", "/api/v1/namespaces/default/pods/direct/status",
	    "application/strategic-merge-patch+json", "{\"status\":{\"phase\":\"Running\"}}");
	check(r.status == 200 && strstr(r.body, "\"phase\":\"Running\"") != NULL,
	    "PATCH status (strategic merge)");
	free(ctl("/fail?n=1&code=429&retry_after=7"));
	call(a, &r, "GET", "/api/v1/nodes", NULL, NULL);
	check(r.status == 429 && r.retry_after == 7, "429 with Retry-After 7 (got %d, %lld)",
	    r.status, (long long)r.retry_after);
	free(ctl("/fail?n=1&code=503"));
	call(a, &r, "GET", "/api/v1/nodes", NULL, NULL);
	check(r.status == 503, "503 reported");
	api_get_stats(a, &st);
	check(st.connects == 1, "all of it on one connection (connects=%llu)",
	    (unsigned long long)st.connects);
	/* Many requests at once: multiplexed (the stand-in allows 100 streams at a time). */
	{
		struct result many[150];
		int           i, ok = 0;

		memset(many, 0, sizeof(many));
		for (i = 0; i < 150; i++)
			api_request(a, "GET", "/api/v1/namespaces/default/pods/direct", NULL, NULL,
			    0, 0, got, &many[i]);
		for (i = 0; i < 150; i++) {
			run_until(is_done, &many[i], 30000);
			ok += many[i].status == 200;
			free(many[i].body);
		}
		api_get_stats(a, &st);
		check(ok == 150 && st.connects == 1,
		    "150 concurrent requests on one connection "
		    "(ok=%d connects=%llu)",
		    ok, (unsigned long long)st.connects);
	}
	/* A response over the limit fails cleanly. */
	free(r.body);
	memset(&r, 0, sizeof(r));
	api_request(a, "GET", "/api/v1/namespaces/default/pods", NULL, NULL, 0, 16, got, &r);
	run_until(is_done, &r, 30000);
	check(r.status == 0 && strstr(r.message, "larger than") != NULL,
	    "response over max_body fails: %s", r.message);
	free(r.body);
}

static void
test_watch(struct api *a)
{
	struct podconfig_options po = { .node_name = "node1" };
	struct ops               o = { 0 };
	struct podconfig        *pc = podconfig_new(&po, on_op, &o);
	struct watch_options     wo = { .node = "node1",
		    .pc = pc,
		    .page_limit = 2,
		    .min_timeout_s = 300,
		    .max_timeout_s = 600 };
	struct wait_ops          w8 = { .o = &o };
	struct watch_stats       st, st2;
	struct api_stats         as, as2;
	struct watch            *w;
	char                    *s;
	int                      i;

	for (i = 1; i <= 5; i++) {
		char name[16];

		snprintf(name, sizeof(name), "pre%d", i);
		ctl_create_pod(name);
	}
	w = watch_new(base, a, &wo);
	w8.w = w;
	run_until(synced, w, 20000);
	watch_get_stats(w, &st);
	check(watch_synced(w) && o.add == 5, "initial list: 5 pods ADDed (add=%d)", o.add);
	check(st.lists == 3, "paged with limit=2: 3 pages (lists=%llu)",
	    (unsigned long long)st.lists);
	run_until(watching, w, 5000);
	run_until(one_open_watch, NULL, 5000);
	s = ctl("/log");
	check(strstr(s, "\"allowWatchBookmarks\":\"true\"") != NULL &&
	        strstr(s, "\"fieldSelector\":\"spec.nodeName=node1\"") != NULL &&
	        strstr(s, "\"timeoutSeconds\":\"") != NULL,
	    "watch asks for bookmarks, the node's "
	    "pods and a timeout");
	free(s);

	ctl_create_pod("new1");
	w8.add = 6;
	check(run_until(ops_reached, &w8, 10000), "ADDED event -> ADD (add=%d)", o.add);
	ctl_quiet("/pods/default/%s?method=DELETE", "new1");
	w8.del = 1;
	check(run_until(ops_reached, &w8, 10000), "graceful delete -> DELETE (del=%d)", o.del);
	ctl_quiet("/pods/default/%s?method=DELETE&grace=0", "new1");
	w8.remove = 1;
	check(run_until(ops_reached, &w8, 10000), "DELETED event -> REMOVE (remove=%d)", o.remove);

	/* Bookmarks advance the position. */
	watch_get_stats(w, &st);
	w8.bookmarks = st.bookmarks + 2;
	check(run_until(ops_reached, &w8, 10000), "bookmarks received");
	watch_get_stats(w, &st);
	s = ctl("/stats");
	check(strstr(s, "\"rv\":") != NULL && atoi(strstr(s, "\"rv\":") + 5) == atoi(st.rv),
	    "bookmark moved the position to the server's (%s)", st.rv);
	free(s);

	/* A stream reset: re-watch from the position, nothing replayed, no relist. */
	watch_get_stats(w, &st);
	api_get_stats(a, &as);
	free(ctl("/reset-watches"));
	w8.watches = st.watches + 1;
	run_until(ops_reached, &w8, 10000);
	run_until(one_open_watch, NULL, 5000);
	watch_get_stats(w, &st2);
	check(st2.watches == st.watches + 1 && st2.lists == st.lists && o.add == 6,
	    "reset watch stream: re-watched without a list or replay");

	/* Compaction while the stream is down: 410 -> relist and diff. */
	ctl_create_pod("c1");
	w8.add = 7;
	run_until(ops_reached, &w8, 10000);
	free(ctl("/refuse?seconds=1&drop=1"));
	ctl_quiet("/pods/default/%s?method=DELETE&grace=0", "pre1"); /* gone while away */
	ctl_create_pod("c2");                                        /* new while away */
	free(ctl("/compact"));
	w8.expired = 1;
	w8.add = 8;
	w8.remove = 2;
	check(run_until(ops_reached, &w8, 30000),
	    "after an outage and compaction: 410, relist, "
	    "diff (add=%d remove=%d)",
	    o.add, o.remove);
	watch_get_stats(w, &st);
	check(st.relists >= 1 && st.expired >= 1, "relisted after 410 (relists=%llu)",
	    (unsigned long long)st.relists);
	api_get_stats(a, &as2);
	check(as2.connects > as.connects && as2.reconnect_waits > as.reconnect_waits,
	    "reconnected after the outage with a backoff");

	/* GOAWAY: the old connection drains, the watch continues on a new one. */
	run_until(watching, w, 5000);
	run_until(one_open_watch, NULL, 10000);
	api_get_stats(a, &as);
	watch_get_stats(w, &st);
	free(ctl("/goaway"));
	w8.watches = st.watches + 1;
	run_until(ops_reached, &w8, 10000);
	run_until(one_open_watch, NULL, 10000);
	ctl_create_pod("g1");
	w8.add = o.add + 1;
	check(run_until(ops_reached, &w8, 10000), "after GOAWAY: events still arrive");
	api_get_stats(a, &as2);
	watch_get_stats(w, &st2);
	check(as2.connects == as.connects + 1 && st2.lists == st.lists,
	    "GOAWAY: one new connection, no relist");

	/* 5xx burst on the watch: retried. */
	free(ctl("/fail?n=2&code=500&match=watch"));
	free(ctl("/reset-watches"));
	ctl_create_pod("f1");
	w8.add = o.add + 1;
	check(run_until(ops_reached, &w8, 20000), "500 burst on the watch: recovered");

	/* Watches that keep failing (not 410): after three in a row, a LIST (client-go's
	 * reflector relists after a watch error). */
	run_until(one_open_watch, NULL, 10000);
	run_until(never, NULL, 1100); /* a stream that lasted: its end is not a failure */
	watch_get_stats(w, &st);
	free(ctl("/fail?n=3&code=503&match=watch"));
	free(ctl("/reset-watches"));
	ctl_create_pod("f2");
	w8.add = o.add + 1;
	check(run_until(ops_reached, &w8, 30000), "503 on three watches in a row: recovered");
	watch_get_stats(w, &st2);
	check(st2.relists == st.relists + 1 && st2.failures >= st.failures + 3,
	    "three failed watches in a row: listed again (relists %llu -> %llu)",
	    (unsigned long long)st.relists, (unsigned long long)st2.relists);

	/* A stalled server: PING timeout declares the connection dead. */
	api_get_stats(a, &as);
	free(ctl("/stall?seconds=4"));
	ctl_create_pod("s1");
	w8.add = o.add + 1;
	check(run_until(ops_reached, &w8, 20000),
	    "stalled connection: PING timeout, reconnect, "
	    "event delivered");
	api_get_stats(a, &as2);
	check(as2.connects > as.connects, "a new connection after the stall");

	/* An event over the size limit (a 5 MB pod) is skipped: the pod is not removed and the
	 * same stream delivers the next event. */
	ctl_create_pod("big1");
	w8.add = o.add + 1;
	run_until(ops_reached, &w8, 10000);
	run_until(one_open_watch, NULL, 10000);
	watch_get_stats(w, &st);
	ctl_big_status("big1", 5 << 20);
	ctl_create_pod("after-big");
	w8.add = o.add + 1;
	check(run_until(ops_reached, &w8, 20000), "a 5 MB event: skipped, the next event arrives");
	watch_get_stats(w, &st2);
	check(st2.decode_errors == st.decode_errors + 1 && st2.watches == st.watches &&
	        st2.lists == st.lists,
	    "a 5 MB event: skipped on the same stream (watches %llu -> %llu, errors %llu -> %llu)",
	    (unsigned long long)st.watches, (unsigned long long)st2.watches,
	    (unsigned long long)st.decode_errors, (unsigned long long)st2.decode_errors);
	check(o.remove == 2, "a 5 MB event: the pod is not removed (remove=%d)", o.remove);
	check(o.reject == 0, "nothing rejected");

	watch_free(w);
	podconfig_free(pc);
}

/* ---- the position beside the store ---- */

struct hint_wait {
	struct store *st;
	struct watch *w;
	const char   *base;
};

/* The watch has moved past base, and the hint on base is its position. */
static int
hint_is_position(void *arg)
{
	struct hint_wait  *hw = arg;
	struct watch_stats ws;
	char              *h;
	int                ok;

	watch_get_stats(hw->w, &ws);
	h = store_get_hint(hw->st, WATCH_META_RV, hw->base);
	ok = h != NULL && strcmp(ws.rv, hw->base) != 0 && strcmp(h, ws.rv) == 0;
	free(h);
	return ok;
}

/* Bookmarks that only move the cluster's resourceVersion: their position is saved beside the
 * store, not in it (no commit); a watch made again on the store (what a kill -9 and a restart
 * leave) resumes from it without a LIST; an event puts its position in the store, and the
 * hint on the old one is no longer taken. */
static void
test_watch_hint(struct api *a)
{
	struct podconfig_options po = { .node_name = "node1" };
	struct ops               o = { 0 };
	struct podconfig        *pc = podconfig_new(&po, on_op, &o);
	struct watch_options     wo = {
		    .node = "node1", .pc = pc, .resume = 1, .bookmark_save_ms = 300
	};
	char               dir[] = "/tmp/klet-api-hint.XXXXXX", *path, *rv0, *rv1, *h;
	char               moved[64], *err = NULL;
	struct wait_ops    w8 = { .o = &o };
	struct hint_wait   hw;
	struct watch_stats ws;
	struct store      *st;
	struct watch      *w;
	uint64_t           commits;

	if (mkdtemp(dir) == NULL) {
		check(0, "mkdtemp: %s", strerror(errno));
		return;
	}
	path = xsprintf("%s/klet.db", dir);
	st = store_open(base, path, &err);
	check(st != NULL, "store opened: %s", err ? err : "ok");
	if (st == NULL) {
		free(err);
		free(path);
		return;
	}
	wo.store = st;
	w = watch_new(base, a, &wo);
	run_until(synced, w, 20000);
	run_until(watching, w, 10000);
	run_until(never, NULL, 300); /* the list's turn committed */
	store_flush(st);
	rv0 = store_get_meta(st, WATCH_META_RV);
	commits = store_commits(st);
	check(rv0 != NULL && *rv0 != '\0', "the list's position is in the store (%s)",
	    rv0 ? rv0 : "none");
	/* Another node's pod moves the cluster's resourceVersion; this node's watch sees only
	 * bookmarks (every 0.5 s). */
	ctl_create_pod_on("elsewhere", "node2");
	hw = (struct hint_wait){ st, w, rv0 ? rv0 : "" };
	check(run_until(hint_is_position, &hw, 10000),
	    "a bookmark's position is saved beside the store, on the stored one");
	watch_get_stats(w, &ws);
	snprintf(moved, sizeof(moved), "%s", ws.rv);
	store_flush(st);
	rv1 = store_get_meta(st, WATCH_META_RV);
	check(rv1 != NULL && rv0 != NULL && strcmp(rv1, rv0) == 0 && store_commits(st) == commits,
	    "bookmarks: the store is not written (position %s, stored %s, commits %llu -> %llu)",
	    moved, rv1 ? rv1 : "none", (unsigned long long)commits,
	    (unsigned long long)store_commits(st));
	free(rv1);
	/* A restart: a new watch on the same store resumes from the bookmark's position. */
	watch_free(w);
	podconfig_free(pc);
	memset(&o, 0, sizeof(o));
	pc = podconfig_new(&po, on_op, &o);
	wo.pc = pc;
	h = store_get_hint(st, WATCH_META_RV, rv0 ? rv0 : "");
	w = watch_new(base, a, &wo);
	watch_get_stats(w, &ws);
	check(h != NULL && strcmp(ws.rv, h) == 0 && strcmp(ws.rv, rv0 ? rv0 : "") != 0,
	    "restart: resumed from the bookmark's position (%s; stored %s)", ws.rv,
	    rv0 ? rv0 : "none");
	free(h);
	run_until(watching, w, 10000);
	run_until(one_open_watch, NULL, 10000);
	watch_get_stats(w, &ws);
	check(ws.lists == 0 && ws.watches >= 1, "restart: watched without a LIST (lists %llu)",
	    (unsigned long long)ws.lists);
	/* An event: its position goes to the store; the hint on the old one is stale. */
	ctl_create_pod("hinted");
	w8.w = w;
	w8.add = o.add + 1;
	check(run_until(ops_reached, &w8, 10000), "restart: the next event arrives");
	run_until(never, NULL, 100);
	store_flush(st);
	rv1 = store_get_meta(st, WATCH_META_RV);
	watch_get_stats(w, &ws);
	h = rv1 != NULL ? store_get_hint(st, WATCH_META_RV, rv1) : NULL;
	check(
	    rv1 != NULL && strcmp(rv1, ws.rv) == 0 && strcmp(rv1, rv0 ? rv0 : "") != 0 && h == NULL,
	    "an event's position is in the store (%s), no hint on it", rv1 ? rv1 : "none");
	free(h);
	free(rv1);
	watch_free(w);
	podconfig_free(pc);
	store_close(st);
	free(rv0);
	free(err);
	rmtree(dir);
	free(path);
}

int
main(void)
{
	const char        *kcpath = getenv("KLET_TEST_KUBECONFIG");
	const char        *mode = getenv("KLET_TEST_MODE");
	struct api_options ao = { .ping_interval_ms = 1000,
		.ping_timeout_ms = 1000,
		.request_timeout_ms = 20000,
		.backoff_min_ms = 200 };
	struct kubeconfig *kc;
	struct api        *a;
	char               err[512];

	ctl_port = getenv("KLET_TEST_AS_CTL");
	if (kcpath == NULL || ctl_port == NULL) {
		fprintf(stderr, "run me from test_api.sh\n");
		return 77;
	}
	srandom((unsigned)getpid());
	log_init(getenv("KLET_TEST_V") ? atoi(getenv("KLET_TEST_V")) : 0, 0);
	base = event_base_new();
	kc = kubeconfig_load(kcpath, err, sizeof(err));
	if (kc == NULL) {
		fprintf(stderr, "%s\n", err);
		return 1;
	}
	a = api_new(base, kc, &ao, err, sizeof(err));
	check(a != NULL, "api_new: %s", a ? "ok" : err);
	if (a == NULL)
		return 1;
	if (mode != NULL && (strcmp(mode, "no-h2") == 0 || strcmp(mode, "wrong-ca") == 0)) {
		struct result r = { 0 };

		ao.request_timeout_ms = 3000;
		api_free(a);
		a = api_new(base, kc, &ao, err, sizeof(err));
		call(a, &r, "GET", "/api/v1/nodes", NULL, NULL);
		check(r.status == 0, "%s: the request fails: %s", mode, r.message);
		free(r.body);
	} else {
		test_requests(a);
		test_watch(a);
		test_watch_hint(a);
	}
	run_until(never, NULL, 50);
	api_free(a);
	kubeconfig_free(kc);
	run_until(never, NULL, 50);
	event_base_free(base);
	printf("%d passed, %d failed\n", npass, nfail);
	return nfail ? 1 : 0;
}
