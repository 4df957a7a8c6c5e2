/* cri.c — the asynchronous CRI client: typed runtime.v1 calls over grpc.c and h2.c on a unix
 * socket, owner-based cancellation, Version at connect, fail-fast and reconnect with backoff.
 */
#include <sys/queue.h>
#include <sys/un.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <event2/event.h>

#include "cri/cri.h"
#include "core/log.h"
#include "core/loop.h"
#include "core/util.h"

#ifndef TAILQ_FOREACH_SAFE
#define TAILQ_FOREACH_SAFE(var, head, field, tvar)                                                 \
	for ((var) = TAILQ_FIRST(head); (var) != NULL && ((tvar) = TAILQ_NEXT(var, field), 1);     \
	     (var) = (tvar))
#endif

#define CRI_BACKOFF_MIN_MS     500
#define CRI_BACKOFF_MAX_MS     10000
#define CRI_VERSION_TIMEOUT_MS 30000
#define CRI_API_VERSION        "0.1.0" /* what the kubelet sends in VersionRequest */
#define CRI_MAX_ACTIVE         256     /* calls handed to gRPC at once; far below h2's queue */
#define CRI_OWNER_BUCKETS      64

struct cri_call;
typedef void (*cri_tramp_fn)(
    struct cri_call *, int code, const char *msg, const ProtobufCMessage *resp);

struct cri_rpc {
	const char                       *path;
	const char                       *name;
	const ProtobufCMessageDescriptor *resp;
	cri_tramp_fn                      tramp;  /* NULL: a raw call (cri_raw_cb) */
	int                               urgent; /* stops and removals: first when waiting */
};

struct cri_call {
	struct cri           *cc_cri;
	const struct cri_rpc *cc_rpc;
	struct grpc_call     *cc_g;
	struct event         *cc_fail; /* fail-fast delivery */
	char                 *cc_fail_msg;
	void (*cc_cb)(void);
	void       *cc_arg;
	const void *cc_owner;
	int64_t     cc_start_us;
	int         cc_active; /* handed to gRPC (counts against CRI_MAX_ACTIVE) */
	/* Waiting for room: the packed request and when it is due. */
	const ProtobufCMessageDescriptor *cc_req_desc;
	uint8_t                          *cc_req;
	size_t                            cc_req_len;
	int64_t                           cc_timeout_ms;
	TAILQ_ENTRY(cri_call) cc_entry;
	TAILQ_ENTRY(cri_call) cc_wait;
};
TAILQ_HEAD(cri_callq, cri_call);

enum cri_state {
	CRI_CONNECTING = 0, /* waiting for the HTTP/2 connection */
	CRI_VERSION,        /* connected; Version asked */
	CRI_UP,             /* Version answered */
	CRI_DOWN,           /* lost or refused; a reconnect is scheduled */
};

static const char *const cri_state_names[] = { "connecting", "version", "up", "down" };

struct cri {
	struct event_base *c_base;
	char              *c_endpoint;
	char              *c_path;
	struct cri_options c_opts;
	cri_state_cb       c_state_cb;
	void              *c_arg;
	struct h2_session *c_h2;
	enum cri_state     c_state;
	int                c_ready;
	int                c_ever_up;
	struct grpc_call  *c_version_call;
	struct event      *c_retry;
	int64_t            c_backoff_ms;
	char              *c_last_error;
	char              *c_runtime_name;
	char              *c_runtime_version;
	char              *c_runtime_api_version;
	/* Every call, in a list by its owner's hash: cancelling an owner's calls looks at few. */
	struct cri_callq c_calls[CRI_OWNER_BUCKETS];
	struct cri_stats c_stats;
	/* Back-pressure: past CRI_MAX_ACTIVE calls, new ones wait (urgent ones first) and are
	 * started as calls finish; a call is never failed for want of room. */
	unsigned         c_active;
	unsigned         c_max_active;
	struct cri_callq c_wait_urgent;
	struct cri_callq c_wait;
	size_t           c_nwaiting;
	int              c_freeing;
};

static void cri_connect(struct cri *);

static struct cri_callq *
cri_owner_calls(struct cri *c, const void *owner)
{
	uintptr_t h = (uintptr_t)owner;

	h ^= h >> 17;
	h *= 0x9e3779b97f4a7c15ULL;
	return &c->c_calls[(h >> 40) % CRI_OWNER_BUCKETS];
}

/* One base-128 varint at p (at most len bytes): returns the bytes it took, 0 when it is
 * truncated or longer than 10 bytes. */
static int
cri_wire_varint(const uint8_t *p, size_t len, uint64_t *out)
{
	uint64_t v = 0;
	size_t   i;

	for (i = 0; i < len && i < 10; i++) {
		v |= (uint64_t)(p[i] & 0x7f) << (7 * i);
		if ((p[i] & 0x80) == 0) {
			*out = v;
			return (int)i + 1;
		}
	}
	return 0;
}

char *
cri_parse_endpoint(const char *ep, char *err, size_t errlen)
{
	const char *p;

	if (ep == NULL || ep[0] == '\0') {
		snprintf(err, errlen, "empty CRI endpoint");
		return NULL;
	}
	if (strncmp(ep, "unix://", 7) != 0) {
		snprintf(err, errlen,
		    "CRI endpoint \"%s\": only unix:///path endpoints are supported", ep);
		return NULL;
	}
	p = ep + 7;
	if (p[0] != '/') {
		snprintf(err, errlen,
		    "CRI endpoint \"%s\": the socket path must be absolute "
		    "(unix:///path)",
		    ep);
		return NULL;
	}
	if (strlen(p) >= sizeof(((struct sockaddr_un *)0)->sun_path)) {
		snprintf(err, errlen, "CRI endpoint \"%s\": socket path too long", ep);
		return NULL;
	}
	return xstrdup(p);
}

static void
cri_set_state(struct cri *c, enum cri_state st, const char *why)
{
	if (c->c_state == st)
		return;
	log_v(2, "cri %s: %s -> %s%s%s", c->c_endpoint, cri_state_names[c->c_state],
	    cri_state_names[st], why ? ": " : "", why ? why : "");
	c->c_state = st;
}

static void
cri_set_error(struct cri *c, const char *why)
{
	free(c->c_last_error);
	c->c_last_error = xstrdup(why);
}

static void
cri_set_ready(struct cri *c, int ready, const char *reason)
{
	if (c->c_ready == ready)
		return;
	c->c_ready = ready;
	if (ready) {
		log_info("cri %s: runtime ready: %s %s (CRI %s)", c->c_endpoint, c->c_runtime_name,
		    c->c_runtime_version, c->c_runtime_api_version);
		if (c->c_ever_up)
			c->c_stats.reconnects++;
		c->c_ever_up = 1;
	} else
		log_warnx("cri %s: runtime not ready: %s", c->c_endpoint, reason);
	if (c->c_state_cb != NULL)
		c->c_state_cb(c, ready, reason, c->c_arg);
}

/* The connection failed, was lost or refused: retry later. */
static void
cri_down(struct cri *c, const char *why)
{
	struct timeval tv;

	cri_set_error(c, why);
	if (c->c_version_call != NULL) {
		grpc_call_cancel(c->c_version_call);
		c->c_version_call = NULL;
	}
	cri_set_state(c, CRI_DOWN, why);
	tv = ms_to_tv(c->c_backoff_ms);
	evtimer_add(c->c_retry, &tv);
	log_v(1, "cri %s: reconnecting in %lld ms", c->c_endpoint, (long long)c->c_backoff_ms);
	c->c_backoff_ms *= 2;
	if (c->c_backoff_ms > CRI_BACKOFF_MAX_MS)
		c->c_backoff_ms = CRI_BACKOFF_MAX_MS;
	cri_set_ready(c, 0, why);
}

static void
cri_version_done(void *arg, int code, const char *msg, ProtobufCMessage *m)
{
	struct cri                         *c = arg;
	const Runtime__V1__VersionResponse *r = (const Runtime__V1__VersionResponse *)m;
	char                                why[512];

	c->c_version_call = NULL;
	if (code == GRPC_UNIMPLEMENTED) {
		snprintf(why, sizeof(why),
		    "the runtime at %s does not serve the CRI v1 API "
		    "(runtime.v1.RuntimeService/Version: UNIMPLEMENTED: %s)",
		    c->c_endpoint, msg);
		log_error("%s", why);
		h2_session_drop(c->c_h2, "CRI v1 not served");
		c->c_backoff_ms = CRI_BACKOFF_MAX_MS;
		cri_down(c, why);
		return;
	}
	if (code != GRPC_OK) {
		snprintf(why, sizeof(why), "%s: Version: %s: %s", c->c_endpoint,
		    grpc_code_name(code), msg);
		h2_session_drop(c->c_h2, "Version failed");
		cri_down(c, why);
		return;
	}
	free(c->c_runtime_name);
	free(c->c_runtime_version);
	free(c->c_runtime_api_version);
	c->c_runtime_name = xstrdup(r->runtime_name ? r->runtime_name : "");
	c->c_runtime_version = xstrdup(r->runtime_version ? r->runtime_version : "");
	c->c_runtime_api_version = xstrdup(r->runtime_api_version ? r->runtime_api_version : "");
	xfree_str(&c->c_last_error);
	c->c_backoff_ms = CRI_BACKOFF_MIN_MS;
	cri_set_state(c, CRI_UP, NULL);
	cri_set_ready(c, 1, NULL);
}

static void
cri_ask_version(struct cri *c)
{
	Runtime__V1__VersionRequest req = RUNTIME__V1__VERSION_REQUEST__INIT;
	struct grpc_call_opts       o = { .authority = "localhost",
		      .max_recv = c->c_opts.max_msg,
		      .max_send = c->c_opts.max_msg };

	o.timeout_ms = c->c_opts.timeout_ms < CRI_VERSION_TIMEOUT_MS ? c->c_opts.timeout_ms
	                                                             : CRI_VERSION_TIMEOUT_MS;
	req.version = CRI_API_VERSION;
	if (c->c_version_call != NULL)
		grpc_call_cancel(c->c_version_call);
	cri_set_state(c, CRI_VERSION, NULL);
	c->c_version_call = grpc_unary(c->c_h2, "/runtime.v1.RuntimeService/Version", &req.base,
	    &runtime__v1__version_response__descriptor, &o, cri_version_done, c);
}

static void
cri_h2_event(struct h2_session *s, enum h2_event ev, const char *reason, void *arg)
{
	struct cri *c = arg;

	(void)s;
	switch (ev) {
	case H2_EV_CONNECTED:
		evtimer_del(c->c_retry);
		cri_ask_version(c);
		break;
	case H2_EV_LOST:
		if (c->c_state != CRI_DOWN)
			cri_down(c, reason);
		break;
	case H2_EV_GOAWAY:
		/* the runtime drains this connection (restart?): open the next one now */
		log_info("cri %s: %s", c->c_endpoint, reason);
		if (c->c_state != CRI_DOWN)
			h2_session_connect(c->c_h2);
		break;
	default:
		fatalx("%s: bad h2 event %d", __func__, ev);
	}
}

static void
cri_retrycb(evutil_socket_t fd, short what, void *arg)
{
	struct cri *c = arg;

	(void)fd;
	(void)what;
	if (c->c_state == CRI_DOWN)
		cri_connect(c);
}

static void
cri_connect(struct cri *c)
{
	cri_set_state(c, CRI_CONNECTING, NULL);
	h2_session_connect(c->c_h2);
}

struct cri *
cri_new(struct event_base *base, const char *endpoint, const struct cri_options *opts,
    cri_state_cb state_cb, void *arg)
{
	struct h2_options ho;
	struct cri       *c;
	char              err[256], *path;
	size_t            i;

	if ((path = cri_parse_endpoint(endpoint, err, sizeof(err))) == NULL) {
		log_error("%s", err);
		return NULL;
	}
	c = xcalloc(1, sizeof(*c));
	c->c_base = base;
	c->c_endpoint = xstrdup(endpoint);
	c->c_path = path;
	if (opts != NULL)
		c->c_opts = *opts;
	if (c->c_opts.timeout_ms <= 0)
		c->c_opts.timeout_ms = 2 * 60 * 1000;
	if (c->c_opts.max_msg == 0)
		c->c_opts.max_msg = GRPC_DEFAULT_MAX_MSG;
	if (c->c_opts.connect_timeout_ms <= 0)
		c->c_opts.connect_timeout_ms = 5000;
	c->c_state_cb = state_cb;
	c->c_arg = arg;
	c->c_backoff_ms = CRI_BACKOFF_MIN_MS;
	c->c_state = CRI_CONNECTING;
	for (i = 0; i < CRI_OWNER_BUCKETS; i++)
		TAILQ_INIT(&c->c_calls[i]);
	TAILQ_INIT(&c->c_wait_urgent);
	TAILQ_INIT(&c->c_wait);
	c->c_max_active = c->c_opts.max_active > 0 ? c->c_opts.max_active : CRI_MAX_ACTIVE;
	c->c_last_error = xstrdup("connecting");
	c->c_retry = evtimer_new(base, cri_retrycb, c);
	if (c->c_retry == NULL)
		fatalx("%s: evtimer_new failed", __func__);

	h2_options_init(&ho);
	ho.transport = H2_UNIX;
	ho.path = c->c_path;
	ho.connect_timeout_ms = c->c_opts.connect_timeout_ms;
	ho.ping_interval_ms = c->c_opts.keepalive_ms;
	c->c_h2 = h2_session_new(base, &ho, cri_h2_event, c);
	if (c->c_h2 == NULL)
		fatalx("%s: h2_session_new failed for %s", __func__, endpoint);
	cri_connect(c);
	return c;
}

static void
cri_call_free(struct cri_call *cc)
{
	if (cc->cc_fail != NULL)
		event_free(cc->cc_fail);
	free(cc->cc_fail_msg);
	free(cc->cc_req);
	free(cc);
}

void
cri_free(struct cri *c)
{
	struct cri_call *cc;
	size_t           i;

	if (c == NULL)
		return;
	c->c_freeing = 1;
	for (i = 0; i < CRI_OWNER_BUCKETS; i++)
		while ((cc = TAILQ_FIRST(&c->c_calls[i])) != NULL)
			cri_cancel(cc);
	if (c->c_version_call != NULL)
		grpc_call_cancel(c->c_version_call);
	h2_session_free(c->c_h2);
	event_free(c->c_retry);
	free(c->c_endpoint);
	free(c->c_path);
	free(c->c_last_error);
	free(c->c_runtime_name);
	free(c->c_runtime_version);
	free(c->c_runtime_api_version);
	free(c);
}

int
cri_ready(const struct cri *c)
{
	return c != NULL && c->c_ready;
}

void
cri_info(const struct cri *c, struct cri_info *info)
{
	memset(info, 0, sizeof(*info));
	info->ready = c->c_ready;
	info->endpoint = c->c_endpoint;
	info->runtime_name = c->c_runtime_name;
	info->runtime_version = c->c_runtime_version;
	info->runtime_api_version = c->c_runtime_api_version;
	info->last_error = c->c_ready ? NULL : c->c_last_error;
}

void
cri_stats(const struct cri *c, struct cri_stats *st)
{
	*st = c->c_stats;
	st->waiting = c->c_nwaiting;
	st->window = c->c_max_active;
}

/* Completion: account, run the typed callback, free. */
static void cri_pump(struct cri *);

static void
cri_call_done(struct cri_call *cc, int code, const char *msg, const ProtobufCMessage *resp,
    const uint8_t *raw, size_t rawlen)
{
	struct cri *c = cc->cc_cri;
	int64_t     lat = now_mono_us() - cc->cc_start_us;

	TAILQ_REMOVE(cri_owner_calls(c, cc->cc_owner), cc, cc_entry);
	cc->cc_g = NULL;
	if (cc->cc_active) {
		cc->cc_active = 0;
		c->c_active--;
		cri_pump(c);
	}
	c->c_stats.in_flight--;
	c->c_stats.last_latency_us = lat;
	if (code != GRPC_OK) {
		c->c_stats.errors++;
		log_v(3, "cri %s: %s", cc->cc_rpc->name, msg);
	}
	log_v(5, "cri %s: %s in %lld us", cc->cc_rpc->name, grpc_code_name(code), (long long)lat);
	loop_note(cc->cc_rpc->name); /* the caller's work on the answer */
	if (cc->cc_rpc->tramp != NULL)
		cc->cc_rpc->tramp(cc, code, msg, resp);
	else
		((cri_raw_cb)cc->cc_cb)(code, msg, code == GRPC_OK ? raw : NULL,
		    code == GRPC_OK ? rawlen : 0, cc->cc_arg);
	loop_note(NULL);
	cri_call_free(cc);
}

static void
cri_grpc_done(void *arg, int code, const char *msg, ProtobufCMessage *resp)
{
	cri_call_done(arg, code, msg, resp, NULL, 0);
}

static void
cri_grpc_raw_done(void *arg, int code, const char *msg, const uint8_t *raw, size_t len)
{
	cri_call_done(arg, code, msg, NULL, raw, len);
}

static void
cri_failcb(evutil_socket_t fd, short what, void *arg)
{
	struct cri_call *cc = arg;

	(void)fd;
	(void)what;
	cri_call_done(cc, GRPC_UNAVAILABLE, cc->cc_fail_msg, NULL, NULL, 0);
}

/* Fails the call from a later loop turn (never inside the cri_* call). */
static void
cri_fail_later(struct cri_call *cc, char *msg)
{
	struct timeval tv = { 0, 0 };

	cc->cc_fail_msg = msg;
	cc->cc_fail = evtimer_new(cc->cc_cri->c_base, cri_failcb, cc);
	if (cc->cc_fail == NULL)
		fatalx("%s: evtimer_new failed", __func__);
	evtimer_add(cc->cc_fail, &tv);
}

/* Hands the call to gRPC, or fails it fast when the runtime is down. */
static void
cri_launch(struct cri_call *cc, const ProtobufCMessage *req, int64_t timeout_ms)
{
	struct cri           *c = cc->cc_cri;
	struct grpc_call_opts o = { .authority = "localhost",
		.max_recv = c->c_opts.max_msg,
		.max_send = c->c_opts.max_msg };

	if (c->c_state == CRI_DOWN) {
		cri_fail_later(cc,
		    xsprintf("runtime %s not connected: %s", c->c_endpoint,
		        c->c_last_error ? c->c_last_error : "down"));
		return;
	}
	o.timeout_ms = timeout_ms > 0 ? timeout_ms : c->c_opts.timeout_ms;
	cc->cc_active = 1;
	c->c_active++;
	if (c->c_active > c->c_stats.active_max)
		c->c_stats.active_max = c->c_active;
	if (cc->cc_rpc->tramp == NULL)
		cc->cc_g =
		    grpc_unary_raw(c->c_h2, cc->cc_rpc->path, req, &o, cri_grpc_raw_done, cc);
	else
		cc->cc_g = grpc_unary(
		    c->c_h2, cc->cc_rpc->path, req, cc->cc_rpc->resp, &o, cri_grpc_done, cc);
}

/* Starts waiting calls while there is room: the urgent ones (stops, removals) first. */
static void
cri_pump(struct cri *c)
{
	struct cri_call  *cc;
	ProtobufCMessage *req;

	while (!c->c_freeing && c->c_active < c->c_max_active && c->c_nwaiting > 0) {
		struct cri_callq *q =
		    !TAILQ_EMPTY(&c->c_wait_urgent) ? &c->c_wait_urgent : &c->c_wait;

		cc = TAILQ_FIRST(q);
		TAILQ_REMOVE(q, cc, cc_wait);
		c->c_nwaiting--;
		cc->cc_start_us = now_mono_us();
		req = protobuf_c_message_unpack(cc->cc_req_desc, NULL, cc->cc_req_len, cc->cc_req);
		free(cc->cc_req);
		cc->cc_req = NULL;
		if (req == NULL) { /* cannot happen: we packed it */
			cri_fail_later(
			    cc, xsprintf("%s: request lost while waiting", cc->cc_rpc->name));
			continue;
		}
		cri_launch(cc, req, cc->cc_timeout_ms);
		protobuf_c_message_free_unpacked(req, NULL);
	}
}

static struct cri_call *
cri_start(struct cri *c, const struct cri_rpc *rpc, const ProtobufCMessage *req, int64_t timeout_ms,
    void (*cb)(void), void *arg, const void *owner)
{
	struct cri_call *cc = xcalloc(1, sizeof(*cc));

	cc->cc_cri = c;
	cc->cc_rpc = rpc;
	cc->cc_cb = cb;
	cc->cc_arg = arg;
	cc->cc_owner = owner;
	cc->cc_start_us = now_mono_us();
	TAILQ_INSERT_TAIL(cri_owner_calls(c, owner), cc, cc_entry);
	c->c_stats.calls++;
	c->c_stats.in_flight++;
	if (c->c_state == CRI_DOWN || (c->c_active < c->c_max_active && c->c_nwaiting == 0)) {
		cri_launch(cc, req, timeout_ms);
		return cc;
	}
	/* No room: the call waits, packed, and starts when an earlier one finishes. */
	cc->cc_req_desc = req->descriptor;
	cc->cc_req_len = protobuf_c_message_get_packed_size(req);
	cc->cc_req = xmalloc(cc->cc_req_len ? cc->cc_req_len : 1);
	protobuf_c_message_pack(req, cc->cc_req);
	cc->cc_timeout_ms = timeout_ms;
	TAILQ_INSERT_TAIL(rpc->urgent ? &c->c_wait_urgent : &c->c_wait, cc, cc_wait);
	if (c->c_nwaiting++ == 0)
		log_v(2, "cri %s: %u calls in flight; %s and later calls wait for room",
		    c->c_endpoint, c->c_active, rpc->name);
	c->c_stats.waiting_max =
	    c->c_nwaiting > c->c_stats.waiting_max ? c->c_nwaiting : c->c_stats.waiting_max;
	return cc;
}

void
cri_cancel(struct cri_call *cc)
{
	struct cri *c;

	if (cc == NULL)
		return;
	c = cc->cc_cri;
	TAILQ_REMOVE(cri_owner_calls(c, cc->cc_owner), cc, cc_entry);
	c->c_stats.in_flight--;
	c->c_stats.cancelled++;
	if (cc->cc_g != NULL)
		grpc_call_cancel(cc->cc_g);
	if (cc->cc_req != NULL) {
		TAILQ_REMOVE(cc->cc_rpc->urgent ? &c->c_wait_urgent : &c->c_wait, cc, cc_wait);
		c->c_nwaiting--;
	}
	if (cc->cc_active) {
		c->c_active--;
		cri_pump(c);
	}
	cri_call_free(cc);
}

int
cri_cancel_owner(struct cri *c, const void *owner)
{
	struct cri_call *cc, *next;
	int              n = 0;

	if (owner == NULL)
		return 0;
	TAILQ_FOREACH_SAFE(cc, cri_owner_calls(c, owner), cc_entry, next)
	{
		if (cc->cc_owner == owner) {
			cri_cancel(cc);
			n++;
		}
	}
	return n;
}

/* One typed call: its trampoline (calls the typed callback), its descriptor and the public
 * function. */
#define CRI_RPC(fn, svc, method, Req, Resp, desc) CRI_RPC_U(fn, svc, method, Req, Resp, desc, 0)
#define CRI_RPC_U(fn, svc, method, Req, Resp, desc, urgent)                                        \
	static void fn##_tramp(                                                                    \
	    struct cri_call *cc, int code, const char *msg, const ProtobufCMessage *resp)          \
	{                                                                                          \
		((cri_##fn##_cb)cc->cc_cb)(                                                        \
		    code, msg, (const Runtime__V1__##Resp *)resp, cc->cc_arg);                     \
	}                                                                                          \
	static const struct cri_rpc fn##_rpc = { "/runtime.v1." svc "/" method, method, &desc,     \
		fn##_tramp, urgent };                                                              \
	struct cri_call            *cri_##fn(struct cri *c, const Runtime__V1__##Req *req,         \
	               int64_t timeout_ms, cri_##fn##_cb cb, void *arg, const void *owner)         \
	{                                                                                          \
		return cri_start(                                                                  \
		    c, &fn##_rpc, &req->base, timeout_ms, (void (*)(void))cb, arg, owner);         \
	}

#define RT "RuntimeService"
#define IM "ImageService"

/* The raw list calls of the PLEG. */
static const struct cri_rpc list_pod_sandbox_raw_rpc = { "/runtime.v1." RT "/ListPodSandbox",
	"ListPodSandbox", NULL, NULL, 0 };
static const struct cri_rpc list_containers_raw_rpc = { "/runtime.v1." RT "/ListContainers",
	"ListContainers", NULL, NULL, 0 };

struct cri_call *
cri_list_pod_sandbox_raw(struct cri *c, const Runtime__V1__ListPodSandboxRequest *req,
    int64_t timeout_ms, cri_raw_cb cb, void *arg, const void *owner)
{
	return cri_start(
	    c, &list_pod_sandbox_raw_rpc, &req->base, timeout_ms, (void (*)(void))cb, arg, owner);
}

struct cri_call *
cri_list_containers_raw(struct cri *c, const Runtime__V1__ListContainersRequest *req,
    int64_t timeout_ms, cri_raw_cb cb, void *arg, const void *owner)
{
	return cri_start(
	    c, &list_containers_raw_rpc, &req->base, timeout_ms, (void (*)(void))cb, arg, owner);
}

/* The field at msg[i..len): its number (*num), where its value starts (*val) and ends (the
 * return: the next field's position), or 0 when malformed (truncated, a bad wire type or
 * field number). Length-delimited values start after their length. Inlined into each walk
 * (the relist's hash calls it for every field of every record: as a call, a relist of 110
 * pods cost 17 % more). */
static inline __attribute__((always_inline)) size_t
cri_wire_field(const uint8_t *msg, size_t len, size_t i, uint64_t *num, size_t *val)
{
	uint64_t key, v;
	int      r;

	/* A key of one byte (field numbers up to 15): every field of a CRI list record. */
	if (i < len && msg[i] < 0x80)
		key = msg[i++];
	else if ((r = cri_wire_varint(msg + i, len - i, &key)) <= 0)
		return 0;
	else
		i += (size_t)r;
	if (key >> 3 == 0 || key >> 3 > UINT32_MAX)
		return 0;
	*num = key >> 3;
	switch (key & 7) {
	case 0: /* varint */
		if ((r = cri_wire_varint(msg + i, len - i, &v)) <= 0)
			return 0;
		*val = i;
		return i + (size_t)r;
	case 1: /* 64-bit */
		if (len - i < 8)
			return 0;
		*val = i;
		return i + 8;
	case 2: /* length-delimited */
		if (i < len && msg[i] < 0x80)
			v = msg[i++];
		else if ((r = cri_wire_varint(msg + i, len - i, &v)) <= 0)
			return 0;
		else
			i += (size_t)r;
		if (v > len - i)
			return 0;
		*val = i;
		return i + (size_t)v;
	case 5: /* 32-bit */
		if (len - i < 4)
			return 0;
		*val = i;
		return i + 4;
	default: /* groups (deprecated) and invalid wire types */
		return 0;
	}
}

int
cri_wire_items(const uint8_t *msg, size_t len, uint32_t field,
    int (*cb)(const uint8_t *item, size_t len, void *arg), void *arg)
{
	size_t   i = 0, next, val;
	uint64_t num;

	while (i < len) {
		if ((next = cri_wire_field(msg, len, i, &num, &val)) == 0)
			return -1;
		if (num == field && (msg[i] & 7) == 2 && cb(msg + val, next - val, arg) == -1)
			return -1;
		i = next;
	}
	return 0;
}

int
cri_wire_fields(const uint8_t *msg, size_t len, const uint32_t *fields, size_t n,
    const uint8_t **val, size_t *vlen)
{
	size_t   i = 0, next, v, k;
	uint64_t num;

	for (k = 0; k < n; k++)
		vlen[k] = 0, val[k] = NULL;
	while (i < len) {
		if ((next = cri_wire_field(msg, len, i, &num, &v)) == 0)
			return -1;
		if ((msg[i] & 7) == 2)
			for (k = 0; k < n; k++)
				if (num == fields[k]) {
					val[k] = msg + v;
					vlen[k] = next - v;
				}
		i = next;
	}
	for (i = k = 0; k < n; k++)
		i += val[k] != NULL;
	return (int)i;
}

int
cri_wire_bytes(const uint8_t *msg, size_t len, uint32_t field, const uint8_t **val, size_t *vlen)
{
	return cri_wire_fields(msg, len, &field, 1, val, vlen);
}

/* splitmix64's finalizer: spreads a field's hash over the word before it is added. */
static uint64_t
cri_wire_mix(uint64_t x)
{
	x ^= x >> 30;
	x *= 0xbf58476d1ce4e5b9ULL;
	x ^= x >> 27;
	x *= 0x94d049bb133111ebULL;
	return x ^ (x >> 31);
}

/* One more part of the sequence: a field's hash. */
static uint64_t
cri_wire_step(uint64_t acc, uint64_t h)
{
	return cri_wire_mix(acc ^ h) + 0x9e3779b97f4a7c15ULL;
}

uint64_t
cri_wire_hash(const uint8_t *msg, size_t len, uint64_t seed, uint32_t keys)
{
	size_t   i = 0, next, val;
	uint64_t num, last = 0, acc = seed;
	uint64_t top = keys != 0 ? 31u - (unsigned)__builtin_clz(keys) : 0;

	while (i < len) {
		if ((next = cri_wire_field(msg, len, i, &num, &val)) == 0)
			return hash_bytes(msg, len, seed); /* not a message: its bytes */
		/* Past the last key field of a record in field order so far (as every
		 * runtime writes them): no key field follows. */
		if (num > top && num >= last)
			break;
		if (num < 32 && (keys >> num & 1) != 0)
			acc = cri_wire_step(acc, hash_bytes(msg + i, next - i, seed));
		if (num < last) /* out of order: the whole record is walked */
			top = UINT32_MAX;
		last = num;
		i = next;
	}
	return cri_wire_mix(acc ^ seed);
}

CRI_RPC(version, RT, "Version", VersionRequest, VersionResponse,
    runtime__v1__version_response__descriptor)
CRI_RPC(
    status, RT, "Status", StatusRequest, StatusResponse, runtime__v1__status_response__descriptor)
CRI_RPC(run_pod_sandbox, RT, "RunPodSandbox", RunPodSandboxRequest, RunPodSandboxResponse,
    runtime__v1__run_pod_sandbox_response__descriptor)
CRI_RPC_U(stop_pod_sandbox, RT, "StopPodSandbox", StopPodSandboxRequest, StopPodSandboxResponse,
    runtime__v1__stop_pod_sandbox_response__descriptor, 1)
CRI_RPC_U(remove_pod_sandbox, RT, "RemovePodSandbox", RemovePodSandboxRequest,
    RemovePodSandboxResponse, runtime__v1__remove_pod_sandbox_response__descriptor, 1)
CRI_RPC(pod_sandbox_status, RT, "PodSandboxStatus", PodSandboxStatusRequest,
    PodSandboxStatusResponse, runtime__v1__pod_sandbox_status_response__descriptor)
CRI_RPC(list_pod_sandbox, RT, "ListPodSandbox", ListPodSandboxRequest, ListPodSandboxResponse,
    runtime__v1__list_pod_sandbox_response__descriptor)
CRI_RPC(create_container, RT, "CreateContainer", CreateContainerRequest, CreateContainerResponse,
    runtime__v1__create_container_response__descriptor)
CRI_RPC(start_container, RT, "StartContainer", StartContainerRequest, StartContainerResponse,
    runtime__v1__start_container_response__descriptor)
CRI_RPC_U(stop_container, RT, "StopContainer", StopContainerRequest, StopContainerResponse,
    runtime__v1__stop_container_response__descriptor, 1)
CRI_RPC_U(remove_container, RT, "RemoveContainer", RemoveContainerRequest, RemoveContainerResponse,
    runtime__v1__remove_container_response__descriptor, 1)
CRI_RPC(list_containers, RT, "ListContainers", ListContainersRequest, ListContainersResponse,
    runtime__v1__list_containers_response__descriptor)
CRI_RPC(container_status, RT, "ContainerStatus", ContainerStatusRequest, ContainerStatusResponse,
    runtime__v1__container_status_response__descriptor)
CRI_RPC(exec_sync, RT, "ExecSync", ExecSyncRequest, ExecSyncResponse,
    runtime__v1__exec_sync_response__descriptor)
CRI_RPC(exec, RT, "Exec", ExecRequest, ExecResponse, runtime__v1__exec_response__descriptor)
CRI_RPC(
    attach, RT, "Attach", AttachRequest, AttachResponse, runtime__v1__attach_response__descriptor)
CRI_RPC(port_forward, RT, "PortForward", PortForwardRequest, PortForwardResponse,
    runtime__v1__port_forward_response__descriptor)
CRI_RPC(update_container_resources, RT, "UpdateContainerResources", UpdateContainerResourcesRequest,
    UpdateContainerResourcesResponse, runtime__v1__update_container_resources_response__descriptor)
CRI_RPC(reopen_container_log, RT, "ReopenContainerLog", ReopenContainerLogRequest,
    ReopenContainerLogResponse, runtime__v1__reopen_container_log_response__descriptor)
CRI_RPC(pull_image, IM, "PullImage", PullImageRequest, PullImageResponse,
    runtime__v1__pull_image_response__descriptor)
CRI_RPC(image_status, IM, "ImageStatus", ImageStatusRequest, ImageStatusResponse,
    runtime__v1__image_status_response__descriptor)
CRI_RPC(list_images, IM, "ListImages", ListImagesRequest, ListImagesResponse,
    runtime__v1__list_images_response__descriptor)
CRI_RPC(remove_image, IM, "RemoveImage", RemoveImageRequest, RemoveImageResponse,
    runtime__v1__remove_image_response__descriptor)
CRI_RPC(image_fs_info, IM, "ImageFsInfo", ImageFsInfoRequest, ImageFsInfoResponse,
    runtime__v1__image_fs_info_response__descriptor)
