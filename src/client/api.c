/* api.c — Kubernetes REST calls and watches over one HTTP/2+TLS session (see api.h). */
#include <sys/queue.h>

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <event2/event.h>

#include "client/api.h"
#include "net/h2.h"
#include "core/json.h"
#include "client/kubeconfig.h"
#include "core/log.h"
#include "core/ossl.h"
#include "core/util.h"

#ifndef KLET_VERSION
#define KLET_VERSION "0"
#endif

enum call_state {
	CALL_HELD = 0, /* waiting for a connection */
	CALL_SENT,     /* an h2 stream carries it */
	CALL_DEAD,     /* ended or cancelled; freed by the reaper */
};

struct api_call {
	TAILQ_ENTRY(api_call) c_entry;
	struct api          *c_api;
	enum call_state      c_state;
	int                  c_watch;
	char                *c_method;
	char                *c_path;
	char                *c_ctype;
	char                *c_body;
	size_t               c_body_len;
	size_t               c_max;
	api_done_cb          c_cb;
	struct api_watch_cbs c_wcbs;
	void                *c_arg;
	struct h2_stream    *c_stream;
	struct event        *c_timer; /* deadline (requests only) */
	int64_t              c_deadline_ms;
	int                  c_status;
	int                  c_got_headers;
	int64_t              c_retry_after;
	char                *c_buf; /* response body, or the watch's partial line */
	size_t               c_len;
	size_t               c_cap;
	int                  c_too_big;
	int                  c_skipping; /* a watch line over c_max is being skipped */
	size_t               c_skip_len; /* its length so far */
};

TAILQ_HEAD(api_calls, api_call);

struct api {
	struct event_base *a_base;
	struct h2_session *a_h2;
	SSL_CTX           *a_ssl;
	char              *a_authority;
	char              *a_auth; /* "Bearer TOKEN" or NULL */
	char              *a_ua;
	struct api_options a_opts;
	struct api_calls   a_calls; /* live calls */
	struct api_calls   a_dead;  /* ended, freed on a later turn */
	struct event      *a_reaper;
	struct event      *a_reconnect;
	int                a_backing_off;
	int64_t            a_backoff_ms;
	char               a_last_err[256]; /* why the last connection was lost */
	struct api_stats   a_stats;
};

static void api_submit(struct api_call *);
static void api_call_finish(struct api_call *, int status, const char *message);

static void
api_call_kill(struct api_call *c)
{
	struct api *a = c->c_api;

	if (c->c_state == CALL_DEAD)
		return;
	c->c_state = CALL_DEAD;
	if (c->c_timer != NULL)
		evtimer_del(c->c_timer);
	TAILQ_REMOVE(&a->a_calls, c, c_entry);
	TAILQ_INSERT_TAIL(&a->a_dead, c, c_entry);
	if (a->a_stats.in_flight > 0)
		a->a_stats.in_flight--;
	event_active(a->a_reaper, EV_TIMEOUT, 0);
}

static void
api_call_free(struct api_call *c)
{
	if (c->c_timer != NULL)
		event_free(c->c_timer);
	free(c->c_method);
	free(c->c_path);
	free(c->c_ctype);
	free(c->c_body);
	free(c->c_buf);
	free(c);
}

static void
api_reap(evutil_socket_t fd, short ev, void *arg)
{
	struct api      *a = arg;
	struct api_call *c;

	(void)fd;
	(void)ev;
	while ((c = TAILQ_FIRST(&a->a_dead)) != NULL) {
		TAILQ_REMOVE(&a->a_dead, c, c_entry);
		api_call_free(c);
	}
}

static void
api_buf_append(struct api_call *c, const uint8_t *d, size_t n)
{
	if (c->c_len + n + 1 > c->c_cap) {
		size_t cap = c->c_cap ? c->c_cap : 4096;

		while (cap < c->c_len + n + 1)
			cap *= 2;
		c->c_buf = xreallocarray(c->c_buf, 1, cap);
		c->c_cap = cap;
	}
	memcpy(c->c_buf + c->c_len, d, n);
	c->c_len += n;
	c->c_buf[c->c_len] = '\0';
}

/* Fills reason and message from a Status body. */
static void
api_status_fields(const char *body, size_t len, char *reason, size_t rlen, char *msg, size_t mlen)
{
	struct json_doc *doc;
	char             err[64];
	const char      *s;

	if (len == 0 || body[0] != '{')
		return;
	doc = json_parse(body, len, NULL, err, sizeof(err));
	if (doc == NULL)
		return;
	if ((s = json_str(json_get(json_root(doc), "reason"))) != NULL)
		snprintf(reason, rlen, "%s", s);
	if ((s = json_str(json_get(json_root(doc), "message"))) != NULL)
		snprintf(msg, mlen, "%s", s);
	json_free(doc);
}

/* Ends the call: runs its callback (once) and queues it for freeing. */
static void
api_call_finish(struct api_call *c, int status, const char *message)
{
	struct api         *a = c->c_api;
	struct api_response r;
	char                reason[64] = "", msg[512] = "";

	if (c->c_state == CALL_DEAD)
		return;
	memset(&r, 0, sizeof(r));
	r.status = status;
	r.body = c->c_buf != NULL && !c->c_watch ? c->c_buf : "";
	r.len = c->c_watch ? 0 : c->c_len;
	if (c->c_watch && status != 200 && status != 0 && c->c_buf != NULL) {
		r.body = c->c_buf; /* a refused watch: the Status body */
		r.len = c->c_len;
	}
	r.retry_after_s = c->c_retry_after;
	if (status >= 300)
		api_status_fields(r.body, r.len, reason, sizeof(reason), msg, sizeof(msg));
	if (message != NULL && *msg == '\0')
		snprintf(msg, sizeof(msg), "%s", message);
	r.reason = reason;
	r.message = msg;
	if (status == 0)
		a->a_stats.failures++;
	else
		a->a_stats.responses++;
	api_call_kill(c);
	if (c->c_watch) {
		if (c->c_wcbs.on_end != NULL)
			c->c_wcbs.on_end(&r, c->c_arg);
	} else if (c->c_cb != NULL)
		c->c_cb(&r, c->c_arg);
}

static int
api_on_headers(void *arg, const struct h2_header *h, size_t n, int trailers, int end_stream)
{
	struct api_call *c = arg;
	size_t           i;

	(void)end_stream;
	if (trailers)
		return 0;
	for (i = 0; i < n; i++) {
		if (strcmp(h[i].name, ":status") == 0)
			c->c_status = atoi(h[i].value);
		else if (strcmp(h[i].name, "retry-after") == 0 &&
		    isdigit((unsigned char)h[i].value[0]))
			c->c_retry_after = strtoll(h[i].value, NULL, 10);
	}
	c->c_got_headers = 1;
	return 0;
}

/* Delivers the complete lines of a watch buffer. Returns -1 when the stream must stop. */
static int
api_watch_lines(struct api_call *c)
{
	size_t start = 0, i;

	for (i = 0; i < c->c_len; i++) {
		if (c->c_buf[i] != '\n')
			continue;
		if (i > start && c->c_wcbs.on_line != NULL) {
			if (c->c_wcbs.on_line(c->c_buf + start, i - start, c->c_arg) == -1) {
				api_call_cancel(c);
				return -1;
			}
			if (c->c_state == CALL_DEAD)
				return -1; /* cancelled from the callback */
		}
		start = i + 1;
	}
	if (start > 0) {
		memmove(c->c_buf, c->c_buf + start, c->c_len - start);
		c->c_len -= start;
		c->c_buf[c->c_len] = '\0';
	}
	return 0;
}

/* A watch's data: complete lines go to on_line; a line longer than c_max is skipped (its
 * head kept for on_skip) and the stream goes on. Returns -1 when the stream was stopped. */
static int
api_watch_data(struct api_call *c, const uint8_t *d, size_t n)
{
	const uint8_t *nl;
	size_t         take, part, room, len;

	while (n > 0) {
		nl = memchr(d, '\n', n);
		take = nl != NULL ? (size_t)(nl - d) + 1 : n;
		part = nl != NULL ? take - 1 : take; /* bytes of the line in this chunk */
		if (!c->c_skipping && c->c_len + part > c->c_max) {
			c->c_skipping = 1;
			c->c_skip_len = c->c_len;
			if (c->c_len > API_WATCH_SKIP_HEAD)
				c->c_len = API_WATCH_SKIP_HEAD; /* the head stays in c_buf */
		}
		if (!c->c_skipping) {
			api_buf_append(c, d, take);
			if (nl != NULL && api_watch_lines(c) == -1)
				return -1;
			d += take;
			n -= take;
			continue;
		}
		room = API_WATCH_SKIP_HEAD - c->c_len;
		if (room > 0)
			api_buf_append(c, d, part < room ? part : room);
		c->c_skip_len += part;
		d += take;
		n -= take;
		if (nl == NULL)
			continue;
		len = c->c_skip_len;
		c->c_skipping = 0;
		c->c_skip_len = 0;
		if (c->c_wcbs.on_skip != NULL)
			c->c_wcbs.on_skip(c->c_buf, c->c_len, len, c->c_arg);
		else
			log_warnx("%s: %s: a watch event of %zu bytes, over the limit of %zu: "
			          "skipped",
			    __func__, c->c_path, len, c->c_max);
		if (c->c_state == CALL_DEAD)
			return -1; /* cancelled from the callback */
		c->c_len = 0;
	}
	return 0;
}

static int
api_on_data(void *arg, const uint8_t *d, size_t n)
{
	struct api_call *c = arg;
	struct api      *a = c->c_api;

	a->a_stats.bytes_received += n;
	if (c->c_state == CALL_DEAD || c->c_too_big)
		return -1;
	if (c->c_watch && c->c_status == 200) {
		(void)api_watch_data(c, d, n); /* a stop cancels the stream itself */
		return 0;
	}
	if (c->c_len + n > c->c_max) {
		c->c_too_big = 1;
		log_warnx("%s: %s %s: response over %zu bytes: aborted", __func__, c->c_method,
		    c->c_path, c->c_max);
		return -1;
	}
	api_buf_append(c, d, n);
	return 0;
}

static void
api_on_close(void *arg, enum h2_error err, uint32_t rst, const char *detail)
{
	struct api_call *c = arg;
	struct api      *a = c->c_api;
	char             msg[300];

	c->c_stream = NULL;
	if (c->c_state == CALL_DEAD)
		return;
	if (c->c_too_big) {
		snprintf(msg, sizeof(msg), "response larger than %zu bytes", c->c_max);
		api_call_finish(c, 0, msg);
		return;
	}
	if (err == H2_OK) {
		if (c->c_watch && c->c_status == 200 && c->c_len > 0 && !c->c_skipping) {
			api_buf_append(c, (const uint8_t *)"\n", 1);
			if (api_watch_lines(c) == -1)
				return;
		}
		api_call_finish(c, c->c_status, NULL);
		return;
	}
	/* Never reached the server: hold it for the next connection, within its deadline. */
	if ((err == H2_ERR_CONNECT || err == H2_ERR_REFUSED) && !c->c_got_headers &&
	    (c->c_watch || now_mono_ms() < c->c_deadline_ms)) {
		log_v(2, "%s: %s %s: %s; held for the next connection", __func__, c->c_method,
		    c->c_path, detail);
		c->c_state = CALL_HELD;
		a->a_stats.held++;
		if (!a->a_backing_off)
			api_submit(c);
		return;
	}
	snprintf(msg, sizeof(msg), "%s: %s (rst %u)", h2_strerror(err), detail, rst);
	api_call_finish(c, 0, msg);
}

static void
api_call_timeout(evutil_socket_t fd, short ev, void *arg)
{
	struct api_call  *c = arg;
	struct h2_stream *st = c->c_stream;
	int               held = c->c_state == CALL_HELD;

	(void)fd;
	(void)ev;
	c->c_stream = NULL;
	if (held && c->c_api->a_stats.held > 0)
		c->c_api->a_stats.held--;
	char msg[400];

	h2_stream_cancel(st);
	if (held && c->c_api->a_last_err[0] != '\0')
		snprintf(msg, sizeof(msg), "request timed out waiting for a connection (%s)",
		    c->c_api->a_last_err);
	else
		snprintf(msg, sizeof(msg), "request timed out");
	api_call_finish(c, 0, msg);
}

static void
api_submit(struct api_call *c)
{
	static const struct h2_stream_cbs cbs = { api_on_headers, api_on_data, api_on_close };
	struct api                       *a = c->c_api;
	struct h2_header                  h[9];
	char                              clen[32];
	size_t                            n = 0;

	if (c->c_state == CALL_HELD && a->a_stats.held > 0)
		a->a_stats.held--;
	c->c_state = CALL_SENT;
	c->c_status = 0;
	c->c_got_headers = 0;
	c->c_len = 0;
	c->c_skipping = 0;
	c->c_skip_len = 0;
	c->c_retry_after = -1;
	h[n++] = (struct h2_header){ ":method", c->c_method };
	h[n++] = (struct h2_header){ ":scheme", "https" };
	h[n++] = (struct h2_header){ ":path", c->c_path };
	h[n++] = (struct h2_header){ ":authority", a->a_authority };
	h[n++] = (struct h2_header){ "user-agent", a->a_ua };
	h[n++] = (struct h2_header){ "accept", "application/json" };
	if (a->a_auth != NULL)
		h[n++] = (struct h2_header){ "authorization", a->a_auth };
	if (c->c_ctype != NULL) {
		h[n++] = (struct h2_header){ "content-type", c->c_ctype };
		snprintf(clen, sizeof(clen), "%zu", c->c_body_len);
		h[n++] = (struct h2_header){ "content-length", clen };
	}
	a->a_stats.bytes_sent += c->c_body_len + strlen(c->c_path) + strlen(c->c_method) + 64;
	c->c_stream = h2_request(a->a_h2, h, n, (const uint8_t *)c->c_body, c->c_body_len, &cbs, c);
}

static void
api_reconnect(evutil_socket_t fd, short ev, void *arg)
{
	struct api      *a = arg;
	struct api_call *c, *next;

	(void)fd;
	(void)ev;
	a->a_backing_off = 0;
	h2_session_connect(a->a_h2);
	for (c = TAILQ_FIRST(&a->a_calls); c != NULL; c = next) {
		next = TAILQ_NEXT(c, c_entry);
		if (c->c_state == CALL_HELD)
			api_submit(c);
	}
}

static void
api_event(struct h2_session *s, enum h2_event ev, const char *reason, void *arg)
{
	struct api    *a = arg;
	struct timeval tv;
	int64_t        d;

	(void)s;
	switch (ev) {
	case H2_EV_CONNECTED:
		if (a->a_backoff_ms != a->a_opts.backoff_min_ms || a->a_stats.connects == 0)
			log_info("api: connected to %s", a->a_authority);
		a->a_backoff_ms = a->a_opts.backoff_min_ms;
		a->a_stats.connects++;
		break;
	case H2_EV_LOST:
		snprintf(a->a_last_err, sizeof(a->a_last_err), "%s", reason ? reason : "?");
		if (a->a_backing_off)
			break;
		/* Jitter: the delay is d to 1.5 d, so that many nodes do not reconnect at once. */
		d = a->a_backoff_ms +
		    (int64_t)((double)a->a_backoff_ms * 0.5 *
		        ((double)random() / ((double)RAND_MAX + 1.0)));
		log_warnx("api: connection to %s lost (%s); reconnecting in %lld ms",
		    a->a_authority, reason, (long long)d);
		a->a_backoff_ms *= 2;
		if (a->a_backoff_ms > a->a_opts.backoff_max_ms)
			a->a_backoff_ms = a->a_opts.backoff_max_ms;
		a->a_backing_off = 1;
		a->a_stats.reconnect_waits++;
		tv = ms_to_tv(d);
		evtimer_add(a->a_reconnect, &tv);
		break;
	case H2_EV_GOAWAY:
		log_info("api: %s sent GOAWAY (%s); draining", a->a_authority, reason);
		break;
	}
}

struct api *
api_new(struct event_base *base, const struct kubeconfig *kc, const struct api_options *opts,
    char *err, size_t errlen)
{
	struct api       *a = xcalloc(1, sizeof(*a));
	struct h2_options ho;
	int               v6;

	a->a_base = base;
	if (opts != NULL)
		a->a_opts = *opts;
	if (a->a_opts.ping_interval_ms <= 0)
		a->a_opts.ping_interval_ms = 15000;
	if (a->a_opts.ping_timeout_ms <= 0)
		a->a_opts.ping_timeout_ms = 15000;
	if (a->a_opts.backoff_min_ms <= 0)
		a->a_opts.backoff_min_ms = 800;
	if (a->a_opts.backoff_max_ms <= 0)
		a->a_opts.backoff_max_ms = 30000;
	if (a->a_opts.request_timeout_ms <= 0)
		a->a_opts.request_timeout_ms = 60000;
	if (a->a_opts.connect_timeout_ms <= 0)
		a->a_opts.connect_timeout_ms = 10000;
	a->a_backoff_ms = a->a_opts.backoff_min_ms;
	a->a_ua = a->a_opts.user_agent != NULL ? xstrdup(a->a_opts.user_agent)
	                                       : xstrdup("klet/" KLET_VERSION " (linux) kubelet");
	a->a_opts.user_agent = NULL;
	TAILQ_INIT(&a->a_calls);
	TAILQ_INIT(&a->a_dead);
	a->a_ssl = kubeconfig_ssl_ctx(kc, err, errlen);
	if (a->a_ssl == NULL) {
		api_free(a);
		return NULL;
	}
	v6 = strchr(kc->host, ':') != NULL;
	a->a_authority = xsprintf("%s%s%s:%s", v6 ? "[" : "", kc->host, v6 ? "]" : "", kc->port);
	if (kc->token != NULL)
		a->a_auth = xsprintf("Bearer %s", kc->token);
	h2_options_init(&ho);
	ho.transport = H2_TLS;
	ho.host = kc->host;
	ho.port = kc->port;
	ho.ssl_ctx = a->a_ssl;
	ho.tls_name = kc->insecure ? "" : kc->tls_server_name;
	ho.connect_timeout_ms = a->a_opts.connect_timeout_ms;
	ho.ping_interval_ms = a->a_opts.ping_interval_ms;
	ho.ping_timeout_ms = a->a_opts.ping_timeout_ms;
	ho.max_retries = 3;
	a->a_h2 = h2_session_new(base, &ho, api_event, a);
	if (a->a_h2 == NULL) {
		snprintf(err, errlen, "cannot create the HTTP/2 session for %s", kc->server);
		api_free(a);
		return NULL;
	}
	a->a_reaper = event_new(base, -1, 0, api_reap, a);
	a->a_reconnect = evtimer_new(base, api_reconnect, a);
	return a;
}

void
api_free(struct api *a)
{
	struct api_call *c;

	if (a == NULL)
		return;
	while ((c = TAILQ_FIRST(&a->a_calls)) != NULL) {
		h2_stream_cancel(c->c_stream);
		c->c_stream = NULL;
		api_call_kill(c);
	}
	if (a->a_reaper != NULL) {
		api_reap(-1, 0, a);
		event_free(a->a_reaper);
	}
	if (a->a_reconnect != NULL)
		event_free(a->a_reconnect);
	h2_session_free(a->a_h2);
	if (a->a_ssl != NULL)
		SSL_CTX_free(a->a_ssl);
	free(a->a_authority);
	if (a->a_auth != NULL)
		explicit_bzero(a->a_auth, strlen(a->a_auth));
	free(a->a_auth);
	free(a->a_ua);
	free(a);
}

static struct api_call *
api_call_new(struct api *a, const char *method, const char *path)
{
	struct api_call *c = xcalloc(1, sizeof(*c));

	c->c_api = a;
	c->c_method = xstrdup(method);
	c->c_path = xstrdup(path);
	c->c_retry_after = -1;
	c->c_state = CALL_HELD;
	c->c_timer = evtimer_new(a->a_base, api_call_timeout, c);
	TAILQ_INSERT_TAIL(&a->a_calls, c, c_entry);
	a->a_stats.requests++;
	a->a_stats.in_flight++;
	a->a_stats.held++;
	return c;
}

static void
api_call_start(struct api_call *c)
{
	struct api *a = c->c_api;

	if (!a->a_backing_off)
		api_submit(c);
}

struct api_call *
api_request(struct api *a, const char *method, const char *path, const char *content_type,
    const char *body, size_t body_len, size_t max_body, api_done_cb cb, void *arg)
{
	struct api_call *c = api_call_new(a, method, path);
	struct timeval   tv;

	c->c_cb = cb;
	c->c_arg = arg;
	c->c_max = max_body ? max_body : API_MAX_OBJECT;
	if (content_type != NULL) {
		c->c_ctype = xstrdup(content_type);
		c->c_body = xmalloc(body_len + 1);
		if (body_len > 0)
			memcpy(c->c_body, body, body_len);
		c->c_body[body_len] = '\0';
		c->c_body_len = body_len;
	}
	c->c_deadline_ms = now_mono_ms() + a->a_opts.request_timeout_ms;
	tv = ms_to_tv(a->a_opts.request_timeout_ms);
	evtimer_add(c->c_timer, &tv);
	api_call_start(c);
	return c;
}

struct api_call *
api_watch(struct api *a, const char *path, const struct api_watch_cbs *cbs, void *arg)
{
	struct api_call *c = api_call_new(a, "GET", path);

	c->c_watch = 1;
	c->c_wcbs = *cbs;
	c->c_arg = arg;
	/* One event (an object of up to API_MAX_OBJECT, in its envelope) at a time. */
	c->c_max = API_MAX_EVENT;
	c->c_deadline_ms = INT64_MAX;
	api_call_start(c);
	return c;
}

void
api_call_cancel(struct api_call *c)
{
	struct h2_stream *st;

	if (c == NULL || c->c_state == CALL_DEAD)
		return;
	if (c->c_state == CALL_HELD && c->c_api->a_stats.held > 0)
		c->c_api->a_stats.held--;
	st = c->c_stream;
	c->c_stream = NULL;
	h2_stream_cancel(st);
	api_call_kill(c);
}

int
api_connected(const struct api *a)
{
	return h2_session_connected(a->a_h2);
}

void
api_drop(struct api *a, const char *reason)
{
	h2_session_drop(a->a_h2, reason);
}

void
api_get_stats(const struct api *a, struct api_stats *st)
{
	*st = a->a_stats;
}

char *
api_escape(const char *s)
{
	static const char hex[] = "0123456789ABCDEF";
	char             *out = xmalloc(strlen(s) * 3 + 1), *p = out;

	for (; *s != '\0'; s++) {
		unsigned char ch = (unsigned char)*s;

		if (isalnum(ch) || ch == '-' || ch == '_' || ch == '.' || ch == '~')
			*p++ = (char)ch;
		else {
			*p++ = '%';
			*p++ = hex[ch >> 4];
			*p++ = hex[ch & 15];
		}
	}
	*p = '\0';
	return out;
}

char *
api_delete_options(int64_t grace, const char *uid)
{
	yajl_gen g = json_gen_new(0);
	char    *out;

	yajl_gen_map_open(g);
	json_gen_kv_str(g, "apiVersion", "v1");
	json_gen_kv_str(g, "kind", "DeleteOptions");
	if (grace >= 0)
		json_gen_kv_int(g, "gracePeriodSeconds", grace);
	if (uid != NULL) {
		json_gen_key(g, "preconditions");
		yajl_gen_map_open(g);
		json_gen_kv_str(g, "uid", uid);
		yajl_gen_map_close(g);
	}
	yajl_gen_map_close(g);
	out = json_gen_take(g, NULL);
	yajl_gen_free(g);
	return out;
}

int
api_reload_client_cert(struct api *a, const char *pem_path)
{
	if (a == NULL || a->a_ssl == NULL)
		return -1;
	if (SSL_CTX_use_certificate_chain_file(a->a_ssl, pem_path) != 1 ||
	    SSL_CTX_use_PrivateKey_file(a->a_ssl, pem_path, SSL_FILETYPE_PEM) != 1 ||
	    SSL_CTX_check_private_key(a->a_ssl) != 1) {
		const char *why = ERR_reason_error_string(ERR_get_error());

		log_warnx(
		    "api: client certificate %s: %s", pem_path, why != NULL ? why : "unusable");
		ERR_clear_error();
		return -1;
	}
	log_info("api: client certificate reloaded from %s", pem_path);
	api_drop(a, "client certificate rotated");
	return 0;
}
