/* http1.c — a small asynchronous HTTP/1.1 GET client on the loop (hooks and probes). */
#include <sys/socket.h>
#include <sys/types.h>

#include <arpa/inet.h>
#include <ctype.h>
#include <errno.h>
#include <stdarg.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <event2/buffer.h>
#include <event2/bufferevent.h>
#include <event2/event.h>

#include "net/http1.h"
#include "core/log.h"
#include "core/ossl.h"
#include "core/util.h"

#ifndef KLET_VERSION
#define KLET_VERSION "0"
#endif

#define HTTP1_MAX_HEAD (16 * 1024)

struct http1_req {
	struct event_base  *base;
	struct bufferevent *bev;
	SSL_CTX            *ctx;
	struct event       *timer;
	struct event       *fail_ev; /* reports an early failure on a later turn */
	http1_cb            cb;
	void               *arg;
	size_t              max_body;
	char               *error;
	int                 headers_done;
	int                 status;
	char               *reason;
	char               *location;
	int                 chunked;
	int64_t             content_length; /* -1: unknown (read to EOF) */
	struct evbuffer    *body;
	int                 truncated;
	int64_t             timeout_ms;
	int                 finished;
};

/* One client context for every HTTPS request (probes and hooks verify nothing, so they all
 * take the same settings): made at the first one, then shared by reference. A new context
 * per request cost OpenSSL's context set-up (16 KiB and tens of microseconds) each time. */
static SSL_CTX *http1_tls_ctx;

static SSL_CTX *
http1_ctx_ref(char *err, size_t errlen)
{
	if (ossl_load(err, errlen) == -1)
		return NULL;
	if ((http1_tls_ctx == NULL && (http1_tls_ctx = SSL_CTX_new(TLS_client_method())) == NULL) ||
	    SSL_CTX_up_ref(http1_tls_ctx) != 1) {
		snprintf(err, errlen, "cannot create a context");
		return NULL;
	}
	return http1_tls_ctx;
}

static void
http1_free(struct http1_req *r)
{
	if (r->bev != NULL)
		bufferevent_free(r->bev); /* frees the SSL object too (BEV_OPT_CLOSE_ON_FREE) */
	if (r->ctx != NULL)
		SSL_CTX_free(r->ctx);
	if (r->timer != NULL)
		event_free(r->timer);
	if (r->fail_ev != NULL)
		event_free(r->fail_ev);
	if (r->body != NULL)
		evbuffer_free(r->body);
	free(r->error);
	free(r->reason);
	free(r->location);
	free(r);
}

/* Reports the result and frees the request. */
static void
http1_finish(struct http1_req *r, const char *error)
{
	struct http1_result res;
	size_t              len;

	if (r->finished)
		return;
	r->finished = 1;
	memset(&res, 0, sizeof(res));
	if (error != NULL) {
		res.error = error;
	} else {
		len = evbuffer_get_length(r->body);
		res.status = r->status;
		res.reason = r->reason != NULL ? r->reason : "";
		res.body = len > 0 ? (const char *)evbuffer_pullup(r->body, -1) : "";
		res.body_len = len;
		res.truncated = r->truncated;
		res.location = r->location;
	}
	r->cb(&res, r->arg);
	http1_free(r);
}

static void
http1_fail_cb(evutil_socket_t fd, short what, void *arg)
{
	struct http1_req *r = arg;
	char             *e = r->error;

	(void)fd;
	(void)what;
	r->error = NULL;
	http1_finish(r, e);
	free(e);
}

static void http1_fail_later(struct http1_req *r, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

static void
http1_fail_later(struct http1_req *r, const char *fmt, ...)
{
	struct timeval tv = { 0, 0 };
	va_list        ap;

	va_start(ap, fmt);
	free(r->error);
	if (vasprintf(&r->error, fmt, ap) == -1)
		fatalx("%s: out of memory", __func__);
	va_end(ap);
	if (r->fail_ev == NULL)
		r->fail_ev = evtimer_new(r->base, http1_fail_cb, r);
	evtimer_add(r->fail_ev, &tv);
}

static void
http1_timeout_cb(evutil_socket_t fd, short what, void *arg)
{
	struct http1_req *r = arg;
	char              msg[64];

	(void)fd;
	(void)what;
	snprintf(msg, sizeof(msg), "timeout after %lld ms", (long long)r->timeout_ms);
	http1_finish(r, msg);
}

/* Parses the status line and headers once they are complete. 0 done, 1 need more, -1 bad. */
static int
http1_parse_head(struct http1_req *r, struct evbuffer *in)
{
	struct evbuffer_ptr end;
	char               *head, *line, *save, *p;
	size_t              len;

	end = evbuffer_search(in, "\r\n\r\n", 4, NULL);
	if (end.pos == -1)
		return evbuffer_get_length(in) > HTTP1_MAX_HEAD ? -1 : 1;
	len = (size_t)end.pos;
	if (len > HTTP1_MAX_HEAD)
		return -1;
	head = xmalloc(len + 1);
	evbuffer_remove(in, head, len);
	head[len] = '\0';
	evbuffer_drain(in, 4);
	line = strtok_r(head, "\r\n", &save);
	if (line == NULL || strncmp(line, "HTTP/1.", 7) != 0 || strlen(line) < 12 ||
	    !isdigit((unsigned char)line[9])) {
		free(head);
		return -1;
	}
	r->status = (int)strtol(line + 9, &p, 10);
	if (r->status < 100 || r->status > 999) {
		free(head);
		return -1;
	}
	while (*p == ' ')
		p++;
	r->reason = xstrdup(p);
	while ((line = strtok_r(NULL, "\r\n", &save)) != NULL) {
		char *colon = strchr(line, ':'), *v;

		if (colon == NULL)
			continue;
		*colon = '\0';
		for (v = colon + 1; *v == ' ' || *v == '\t'; v++)
			;
		if (strcasecmp(line, "Content-Length") == 0)
			r->content_length = strtoll(v, NULL, 10);
		else if (strcasecmp(line, "Transfer-Encoding") == 0 && strcasestr(v, "chunked"))
			r->chunked = 1;
		else if (strcasecmp(line, "Location") == 0 && r->location == NULL)
			r->location = xstrdup(v);
	}
	free(head);
	r->headers_done = 1;
	return 0;
}

/* Moves body bytes, keeping at most max_body. */
static void
http1_take_body(struct http1_req *r, struct evbuffer *in)
{
	size_t have = evbuffer_get_length(r->body), n = evbuffer_get_length(in);

	if (have + n > r->max_body) {
		r->truncated = 1;
		if (have < r->max_body)
			evbuffer_remove_buffer(in, r->body, r->max_body - have);
		evbuffer_drain(in, evbuffer_get_length(in));
		return;
	}
	evbuffer_add_buffer(r->body, in);
}

/* Consumes what arrived in `in`. Returns 1 when that finished (and freed) r, else 0. */
static int
http1_consume(struct http1_req *r, struct evbuffer *in)
{
	int rc;

	if (!r->headers_done) {
		rc = http1_parse_head(r, in);
		if (rc == 1)
			return 0;
		if (rc == -1) {
			http1_finish(r, "malformed response");
			return 1;
		}
		/* No body for these. */
		if (r->status == 204 || r->status == 304 || (r->status >= 100 && r->status < 200)) {
			http1_finish(r, NULL);
			return 1;
		}
	}
	http1_take_body(r, in);
	/* The body is not de-chunked: hooks and probes only look at the status; a bounded
	 * raw read is enough. Done when the length is known and reached, or at the cap. */
	if (r->truncated ||
	    (!r->chunked && r->content_length >= 0 &&
	        (int64_t)evbuffer_get_length(r->body) >= r->content_length)) {
		http1_finish(r, NULL);
		return 1;
	}
	if (r->chunked) {
		struct evbuffer_ptr e = evbuffer_search(r->body, "0\r\n\r\n", 5, NULL);

		if (e.pos != -1) {
			http1_finish(r, NULL);
			return 1;
		}
	}
	return 0;
}

static void
http1_read_cb(struct bufferevent *bev, void *arg)
{
	(void)http1_consume(arg, bufferevent_get_input(bev));
}

/* End of stream after what arrived: the response as far as it got. */
static void
http1_eof(struct http1_req *r)
{
	if (r->headers_done) {
		http1_finish(r, NULL);
		return;
	}
	http1_finish(r, "connection closed before a response");
}

static void
http1_event_cb(struct bufferevent *bev, short what, void *arg)
{
	struct http1_req *r = arg;
	char              msg[256];
	unsigned long     e;

	(void)bev;
	if (what & BEV_EVENT_CONNECTED)
		return;
	if (what & BEV_EVENT_EOF) {
		/* Take what arrived with the close first. */
		if (evbuffer_get_length(bufferevent_get_input(r->bev)) > 0 &&
		    http1_consume(r, bufferevent_get_input(r->bev)) == 1)
			return; /* finished: r is freed */
		http1_eof(r);
		return;
	}
	if (what & BEV_EVENT_ERROR) {
		if (r->ctx != NULL && (e = bufferevent_get_openssl_error(r->bev)) != 0) {
			char ebuf[200];

			ERR_error_string_n(e, ebuf, sizeof(ebuf));
			snprintf(msg, sizeof(msg), "tls: %s", ebuf);
		} else {
			int err = EVUTIL_SOCKET_ERROR();

			snprintf(msg, sizeof(msg), "%s: %s", r->headers_done ? "read" : "connect",
			    err != 0 ? evutil_socket_error_to_string(err) : "connection failed");
		}
		if (r->headers_done) {
			/* An error after the head: keep what arrived. */
			http1_finish(r, NULL);
			return;
		}
		http1_finish(r, msg);
	}
}

static void
http1_add_header_line(struct evbuffer *out, const char *name, const char *value)
{
	/* Header injection guard: CR and LF never go out. */
	if (strpbrk(name, "\r\n:") != NULL || (value != NULL && strpbrk(value, "\r\n") != NULL))
		return;
	evbuffer_add_printf(out, "%s: %s\r\n", name, value != NULL ? value : "");
}

struct http1_req *
http1_get(struct event_base *base, const char *host, int port, const char *path,
    const struct http1_header *headers, size_t nheaders, const char *scheme, int64_t timeout_ms,
    size_t max_body, http1_cb cb, void *arg)
{
	struct http1_req       *r = xcalloc(1, sizeof(*r));
	struct sockaddr_storage ss;
	struct sockaddr_in     *sin = (struct sockaddr_in *)&ss;
	struct sockaddr_in6    *sin6 = (struct sockaddr_in6 *)&ss;
	socklen_t               sslen;
	struct evbuffer        *out;
	struct timeval          tv;
	const char             *h = host;
	int                     tls = scheme != NULL && strcasecmp(scheme, "HTTPS") == 0;
	int                     have_host = 0, have_ua = 0;
	size_t                  i;
	SSL                    *ssl;

	r->base = base;
	r->cb = cb;
	r->arg = arg;
	r->max_body = max_body > 0 ? max_body : HTTP1_DEFAULT_MAX_BODY;
	r->content_length = -1;
	r->body = evbuffer_new();
	r->timeout_ms = timeout_ms;
	if (timeout_ms > 0) {
		r->timer = evtimer_new(base, http1_timeout_cb, r);
		tv = ms_to_tv(timeout_ms);
		evtimer_add(r->timer, &tv);
	}
	if (scheme != NULL && !tls && strcasecmp(scheme, "HTTP") != 0) {
		http1_fail_later(r, "unsupported scheme \"%s\"", scheme);
		return r;
	}
	if (port <= 0 || port > 65535) {
		http1_fail_later(r, "invalid port %d", port);
		return r;
	}
	if (h == NULL || h[0] == '\0') {
		http1_fail_later(r, "no host");
		return r;
	}
	if (strcmp(h, "localhost") == 0)
		h = "127.0.0.1";
	memset(&ss, 0, sizeof(ss));
	if (inet_pton(AF_INET, h, &sin->sin_addr) == 1) {
		sin->sin_family = AF_INET;
		sin->sin_port = htons((uint16_t)port);
		sslen = sizeof(*sin);
	} else if (inet_pton(AF_INET6, h, &sin6->sin6_addr) == 1) {
		sin6->sin6_family = AF_INET6;
		sin6->sin6_port = htons((uint16_t)port);
		sslen = sizeof(*sin6);
	} else {
		http1_fail_later(r, "host \"%s\" is not an IP address", host);
		return r;
	}
	if (tls) {
		char why[512];

		if ((r->ctx = http1_ctx_ref(why, sizeof(why))) == NULL) {
			http1_fail_later(r, "tls: %s", why);
			return r;
		}
		if ((ssl = SSL_new(r->ctx)) == NULL) {
			http1_fail_later(r, "tls: cannot create a connection");
			return r;
		}
		/* As the kubelet's hooks and probes: no certificate verification. */
		SSL_set_verify(ssl, SSL_VERIFY_NONE, NULL);
		r->bev = bufferevent_openssl_socket_new(base, -1, ssl, BUFFEREVENT_SSL_CONNECTING,
		    BEV_OPT_CLOSE_ON_FREE | BEV_OPT_DEFER_CALLBACKS);
	} else {
		r->bev = bufferevent_socket_new(
		    base, -1, BEV_OPT_CLOSE_ON_FREE | BEV_OPT_DEFER_CALLBACKS);
	}
	if (r->bev == NULL) {
		http1_fail_later(r, "cannot create a socket");
		return r;
	}
	bufferevent_setcb(r->bev, http1_read_cb, NULL, http1_event_cb, r);
	bufferevent_enable(r->bev, EV_READ | EV_WRITE);
	out = bufferevent_get_output(r->bev);
	evbuffer_add_printf(
	    out, "GET %s HTTP/1.1\r\n", path != NULL && path[0] == '/' ? path : "/");
	for (i = 0; i < nheaders; i++) {
		if (headers[i].name == NULL)
			continue;
		if (strcasecmp(headers[i].name, "Host") == 0)
			have_host = 1;
		if (strcasecmp(headers[i].name, "User-Agent") == 0)
			have_ua = 1;
		http1_add_header_line(out, headers[i].name, headers[i].value);
	}
	if (!have_host) {
		if (strchr(h, ':') != NULL)
			evbuffer_add_printf(out, "Host: [%s]:%d\r\n", h, port);
		else
			evbuffer_add_printf(out, "Host: %s:%d\r\n", h, port);
	}
	if (!have_ua)
		evbuffer_add_printf(out, "User-Agent: klet/%s\r\n", KLET_VERSION);
	evbuffer_add_printf(out, "Accept: */*\r\nConnection: close\r\n\r\n");
	if (bufferevent_socket_connect(r->bev, (struct sockaddr *)&ss, (int)sslen) == -1) {
		int err = EVUTIL_SOCKET_ERROR();

		bufferevent_free(r->bev);
		r->bev = NULL;
		http1_fail_later(r, "connect: %s", evutil_socket_error_to_string(err));
	}
	return r;
}

void
http1_cancel(struct http1_req *r)
{
	if (r == NULL || r->finished)
		return;
	r->finished = 1;
	http1_free(r);
}

void
http1_parse_response(const char *data, size_t len, const size_t *cuts, size_t ncuts,
    size_t max_body, http1_cb cb, void *arg)
{
	struct http1_req *r = xcalloc(1, sizeof(*r));
	struct evbuffer  *in = evbuffer_new();
	size_t            off = 0, i, n;

	r->cb = cb;
	r->arg = arg;
	r->max_body = max_body > 0 ? max_body : HTTP1_DEFAULT_MAX_BODY;
	r->content_length = -1;
	r->body = evbuffer_new();
	if (in == NULL || r->body == NULL)
		fatalx("%s: out of memory", __func__);
	for (i = 0; i <= ncuts; i++) {
		n = i < ncuts ? cuts[i] : len - off;
		if (n > len - off)
			n = len - off;
		evbuffer_add(in, data + off, n);
		off += n;
		if (evbuffer_get_length(in) > 0 && http1_consume(r, in) == 1) {
			evbuffer_free(in);
			return;
		}
	}
	http1_eof(r);
	evbuffer_free(in);
}
