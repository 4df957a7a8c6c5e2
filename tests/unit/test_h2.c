/* test_h2.c — gRPC framing and status helpers (table cases), and h2.c + grpc.c against a
 * tiny in-process nghttp2 server on a unix socket: round trip, trailers-only errors, HTTP
 * status mapping, truncated message, peer closing mid-stream, MAX_CONCURRENT_STREAMS
 * queueing, REFUSED_STREAM retry, GOAWAY retry, big responses (flow control), a dead peer
 * (PING timeout) and a silent peer (connect timeout). */
#include <sys/queue.h>
#include <sys/socket.h>
#include <sys/un.h>

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>
#include <arpa/inet.h>
#include <netinet/in.h>

#include <event2/buffer.h>
#include <event2/bufferevent.h>
#include <event2/bufferevent_ssl.h>
#include <event2/event.h>
#include <event2/listener.h>
#include <nghttp2/nghttp2.h>
#include <openssl/evp.h>
#include <openssl/ssl.h>
#include <openssl/x509v3.h>

#include "api.pb-c.h"
#include "net/grpc.h"
#include "net/h2.h"
#include "core/log.h"
#include "core/util.h"

/* ---- pure helpers ---- */

static void
test_timeout_format(void **state)
{
	static const struct {
		int64_t     ms;
		const char *want;
	} t[] = {
		{ 0, "0n" },
		{ -5, "0n" },
		{ 1, "1m" },
		{ 250, "250m" },
		{ 120000, "120000m" },
		{ 99999999, "99999999m" },
		{ 100000000, "100000S" },
		{ 100000001, "100001S" },
		{ 99999999000LL, "99999999S" },
		{ 99999999001LL, "1666667M" },
		{ INT64_MAX, "99999999H" },
	};
	char   buf[16];
	size_t i;

	(void)state;
	for (i = 0; i < nitems(t); i++)
		assert_string_equal(grpc_timeout_format(t[i].ms, buf, sizeof(buf)), t[i].want);
}

static void
test_percent_decode(void **state)
{
	static const struct {
		const char *in, *want;
	} t[] = {
		{ "", "" },
		{ "plain", "plain" },
		{ "a%20b", "a b" },
		{ "100%25", "100%" },
		{ "caf%C3%A9", "caf\xc3\xa9" },
		{ "%0A", "\n" },
		{ "bad%zz", "bad%zz" },
		{ "end%", "end%" },
		{ "end%4", "end%4" },
		{ "%41%42", "AB" },
	};
	size_t i;

	(void)state;
	for (i = 0; i < nitems(t); i++) {
		char *s = grpc_percent_decode(t[i].in);

		assert_string_equal(s, t[i].want);
		free(s);
	}
}

static void
test_status_mapping(void **state)
{
	static const struct {
		int http, code;
	} h[] = {
		{ 400, GRPC_INTERNAL },
		{ 401, GRPC_UNAUTHENTICATED },
		{ 403, GRPC_PERMISSION_DENIED },
		{ 404, GRPC_UNIMPLEMENTED },
		{ 429, GRPC_UNAVAILABLE },
		{ 502, GRPC_UNAVAILABLE },
		{ 503, GRPC_UNAVAILABLE },
		{ 504, GRPC_UNAVAILABLE },
		{ 500, GRPC_UNKNOWN },
		{ 301, GRPC_UNKNOWN },
	};
	static const struct {
		int      err;
		uint32_t rst;
		int      code;
	} e[] = {
		{ H2_OK, 0, GRPC_OK },
		{ H2_ERR_CONNECT, 0, GRPC_UNAVAILABLE },
		{ H2_ERR_CLOSED, 0, GRPC_UNAVAILABLE },
		{ H2_ERR_GOAWAY, 0, GRPC_UNAVAILABLE },
		{ H2_ERR_REFUSED, 7, GRPC_UNAVAILABLE },
		{ H2_ERR_TIMEOUT, 0, GRPC_UNAVAILABLE },
		{ H2_ERR_PROTOCOL, 0, GRPC_INTERNAL },
		{ H2_ERR_OVERLOAD, 0, GRPC_RESOURCE_EXHAUSTED },
		{ H2_ERR_RESET, 0, GRPC_INTERNAL },
		{ H2_ERR_RESET, 2, GRPC_INTERNAL },
		{ H2_ERR_RESET, 7, GRPC_UNAVAILABLE },
		{ H2_ERR_RESET, 8, GRPC_CANCELLED },
		{ H2_ERR_RESET, 0xb, GRPC_RESOURCE_EXHAUSTED },
		{ H2_ERR_RESET, 0xc, GRPC_PERMISSION_DENIED },
	};
	size_t i;

	(void)state;
	for (i = 0; i < nitems(h); i++)
		assert_int_equal(grpc_http_to_code(h[i].http), h[i].code);
	for (i = 0; i < nitems(e); i++)
		assert_int_equal(grpc_h2_error_to_code(e[i].err, e[i].rst), e[i].code);
	assert_int_equal(grpc_parse_status("0"), 0);
	assert_int_equal(grpc_parse_status("14"), 14);
	assert_int_equal(grpc_parse_status(""), -1);
	assert_int_equal(grpc_parse_status("1x"), -1);
	assert_int_equal(grpc_parse_status("-1"), -1);
	assert_int_equal(grpc_parse_status("99999999999"), -1);
	assert_string_equal(grpc_code_name(GRPC_UNAVAILABLE), "UNAVAILABLE");
	assert_string_equal(grpc_code_name(16), "UNAUTHENTICATED");
	assert_string_equal(grpc_code_name(17), "UNKNOWN");
	assert_string_equal(grpc_code_name(-1), "UNKNOWN");
}

static void
test_frame_parse(void **state)
{
	static const struct {
		const char *bytes;
		size_t      len;
		size_t      max;
		int         code;
		size_t      msglen;
	} t[] = {
		{ "", 0, 100, GRPC_INTERNAL, 0 },       /* no message */
		{ "\0\0\0", 3, 100, GRPC_INTERNAL, 0 }, /* short prefix */
		{ "\0\0\0\0\0", 5, 100, GRPC_OK, 0 },   /* empty message */
		{ "\0\0\0\0\3abc", 8, 100, GRPC_OK, 3 },
		{ "\0\0\0\0\4abc", 8, 100, GRPC_INTERNAL, 0 },         /* truncated */
		{ "\0\0\0\0\2abc", 8, 100, GRPC_INTERNAL, 0 },         /* trailing bytes */
		{ "\1\0\0\0\3abc", 8, 100, GRPC_INTERNAL, 0 },         /* compressed */
		{ "\2\0\0\0\3abc", 8, 100, GRPC_INTERNAL, 0 },         /* bad flags */
		{ "\0\0\0\0\3abc", 8, 2, GRPC_RESOURCE_EXHAUSTED, 0 }, /* over max */
		{ "\0\xff\xff\xff\xff", 5, 1u << 24, GRPC_RESOURCE_EXHAUSTED, 0 },
	};
	const uint8_t *msg;
	const char    *err;
	size_t         i, mlen;
	uint8_t        hdr[5];

	(void)state;
	for (i = 0; i < nitems(t); i++) {
		int code = grpc_frame_parse(
		    (const uint8_t *)t[i].bytes, t[i].len, t[i].max, &msg, &mlen, &err);

		assert_int_equal(code, t[i].code);
		assert_non_null(err);
		if (code == GRPC_OK)
			assert_int_equal(mlen, t[i].msglen);
	}
	grpc_frame_header(hdr, 0x01020304);
	assert_memory_equal(hdr, "\0\1\2\3\4", 5);
}

/* ---- an in-process HTTP/2 server ---- */

struct srv {
	struct event_base     *base;
	struct evconnlistener *lis;
	char                   path[108];
	uint32_t               max_streams;
	SSL_CTX               *ssl_ctx; /* TLS server when set */
	int                    port;
	int                    open, max_open;
	int                    refused_once;
	int                    requests;
	int                    strays;
	LIST_HEAD(, sconn) conns;
};

struct sconn {
	struct srv         *sv;
	struct bufferevent *bev;
	nghttp2_session    *ng;
	int                 close_after_flush;
	int32_t             goaway_last;
	int32_t             stray_id; /* write a DATA frame for this closed stream */
	int                 stray_closed;
	LIST_ENTRY(sconn) entry;
	LIST_HEAD(, sreq) reqs;
};

struct sreq {
	struct sconn *sc;
	int32_t       id;
	char          path[64];
	uint8_t      *body;
	size_t        len, off;
	int           trailer_status;
	struct event *timer;
	LIST_ENTRY(sreq) entry;
};

static struct event_base *base;
static struct srv        *srv;

static void sconn_flush(struct sconn *);

static void
sreq_free(struct sreq *rq)
{
	LIST_REMOVE(rq, entry);
	if (rq->timer != NULL)
		event_free(rq->timer);
	free(rq->body);
	free(rq);
}

static void
sconn_free(struct sconn *sc)
{
	while (!LIST_EMPTY(&sc->reqs))
		sreq_free(LIST_FIRST(&sc->reqs));
	LIST_REMOVE(sc, entry);
	bufferevent_free(sc->bev);
	nghttp2_session_del(sc->ng);
	free(sc);
}

static ssize_t
s_body_read(nghttp2_session *ng, int32_t id, uint8_t *buf, size_t length, uint32_t *flags,
    nghttp2_data_source *src, void *ud)
{
	struct sreq *rq = src->ptr;
	size_t       n = rq->len - rq->off;

	(void)ud;
	if (n > length)
		n = length;
	memcpy(buf, rq->body + rq->off, n);
	rq->off += n;
	if (rq->off == rq->len) {
		char       st[8];
		nghttp2_nv tr[1] = { { (uint8_t *)"grpc-status", (uint8_t *)st, 11, 0,
		    NGHTTP2_NV_FLAG_NONE } };

		snprintf(st, sizeof(st), "%d", rq->trailer_status);
		tr[0].valuelen = strlen(st);
		*flags |= NGHTTP2_DATA_FLAG_EOF | NGHTTP2_DATA_FLAG_NO_END_STREAM;
		nghttp2_submit_trailer(ng, id, tr, 1);
	}
	return (ssize_t)n;
}

#define NV(n, v)                                                                                   \
	{                                                                                          \
		(uint8_t *)(n), (uint8_t *)(v), sizeof(n) - 1, sizeof(v) - 1, 0                    \
	}

/* Answers with a VersionResponse whose runtime_name has name_len bytes. */
static void
respond_ok(struct sreq *rq, size_t name_len, int trailer_status)
{
	Runtime__V1__VersionResponse r = RUNTIME__V1__VERSION_RESPONSE__INIT;
	nghttp2_nv h[] = { NV(":status", "200"), NV("content-type", "application/grpc") };
	nghttp2_data_provider prd;
	char                 *name = xmalloc(name_len + 1);
	size_t                len;

	memset(name, 'n', name_len);
	name[name_len] = '\0';
	r.runtime_name = name;
	r.version = "unit";
	len = protobuf_c_message_get_packed_size(&r.base);
	rq->body = xmalloc(len + 5);
	grpc_frame_header(rq->body, (uint32_t)len);
	protobuf_c_message_pack(&r.base, rq->body + 5);
	rq->len = len + 5;
	rq->trailer_status = trailer_status;
	free(name);
	prd.source.ptr = rq;
	prd.read_callback = s_body_read;
	nghttp2_submit_response(rq->sc->ng, rq->id, h, nitems(h), &prd);
}

static void
slow_cb(evutil_socket_t fd, short what, void *arg)
{
	struct sreq *rq = arg;

	(void)fd;
	(void)what;
	respond_ok(rq, 4, 0);
	sconn_flush(rq->sc);
}

static void
handle(struct sreq *rq)
{
	struct sconn *sc = rq->sc;
	struct srv   *sv = sc->sv;
	const char   *m = strrchr(rq->path, '/') ? strrchr(rq->path, '/') + 1 : rq->path;

	sv->requests++;
	if (sc->goaway_last > 0 && rq->id > sc->goaway_last)
		return; /* refused by the GOAWAY: never answered on this connection */
	if (strcmp(m, "Ok") == 0)
		respond_ok(rq, 4, 0);
	else if (strcmp(m, "Stray") == 0) {
		respond_ok(rq, 4, 0);
		sc->stray_id = rq->id; /* then a DATA frame on the closed stream */
	} else if (strcmp(m, "Big") == 0)
		respond_ok(rq, 3u << 20, 0);
	else if (strncmp(m, "Size", 4) == 0) /* SizeN: a name of N bytes */
		respond_ok(rq, (size_t)strtoul(m + 4, NULL, 10), 0);
	else if (strcmp(m, "Err") == 0) {
		nghttp2_nv h[] = { NV(":status", "200"), NV("content-type", "application/grpc"),
			NV("grpc-status", "9"), NV("grpc-message", "bad%20thing%25") };

		nghttp2_submit_response(sc->ng, rq->id, h, nitems(h), NULL);
	} else if (strcmp(m, "ManyHeaders") == 0) {
		/* A trailers-only answer of more fields and bytes than a stream holds in itself
		 * (H2_HB_INLINE_N, H2_HB_INLINE_BYTES): the block grows on the heap twice over;
		 * its status, among the first fields, and its long message, the last one, arrive
		 * as sent. */
		static char names[40][16], vals[40][48], msg[1500];
		nghttp2_nv  h[44];
		size_t      i, n = 0;

		h[n++] = (nghttp2_nv)NV(":status", "200");
		h[n++] = (nghttp2_nv)NV("content-type", "application/grpc");
		h[n++] = (nghttp2_nv)NV("grpc-status", "9");
		for (i = 0; i < 40; i++) {
			snprintf(names[i], sizeof(names[i]), "x-field-%02zu", i);
			snprintf(vals[i], sizeof(vals[i]), "value-%02zu-%s", i,
			    "abcdefghijklmnopqrstuvwxyz0123456789");
			h[n++] = (nghttp2_nv){ (uint8_t *)names[i], (uint8_t *)vals[i],
				strlen(names[i]), strlen(vals[i]), 0 };
		}
		memset(msg, 'm', sizeof(msg));
		memcpy(msg, "start-", 6);
		msg[sizeof(msg) - 1] = '\0';
		h[n++] =
		    (nghttp2_nv){ (uint8_t *)"grpc-message", (uint8_t *)msg, 12, strlen(msg), 0 };
		nghttp2_submit_response(sc->ng, rq->id, h, n, NULL);
	} else if (strcmp(m, "Http503") == 0) {
		nghttp2_nv h[] = { NV(":status", "503"), NV("content-type", "text/plain") };

		nghttp2_submit_response(sc->ng, rq->id, h, nitems(h), NULL);
	} else if (strcmp(m, "Http404") == 0) {
		nghttp2_nv h[] = { NV(":status", "404") };

		nghttp2_submit_response(sc->ng, rq->id, h, nitems(h), NULL);
	} else if (strcmp(m, "NoTrailers") == 0) {
		nghttp2_nv h[] = { NV(":status", "200"), NV("content-type", "application/grpc") };

		nghttp2_submit_response(sc->ng, rq->id, h, nitems(h), NULL);
	} else if (strcmp(m, "Truncated") == 0) {
		nghttp2_nv h[] = { NV(":status", "200"), NV("content-type", "application/grpc") };
		nghttp2_data_provider prd;

		rq->body = xcalloc(1, 15);
		grpc_frame_header(rq->body, 100); /* says 100, sends 10 */
		rq->len = 15;
		prd.source.ptr = rq;
		prd.read_callback = s_body_read;
		nghttp2_submit_response(sc->ng, rq->id, h, nitems(h), &prd);
	} else if (strcmp(m, "Garbage") == 0) {
		nghttp2_nv h[] = { NV(":status", "200"), NV("content-type", "application/grpc") };
		nghttp2_data_provider prd;

		rq->body = xmalloc(12);
		grpc_frame_header(rq->body, 7);
		memcpy(rq->body + 5, "\x0a\xff\xff\xff\xff\x0f\x01", 7);
		rq->len = 12;
		prd.source.ptr = rq;
		prd.read_callback = s_body_read;
		nghttp2_submit_response(sc->ng, rq->id, h, nitems(h), &prd);
	} else if (strcmp(m, "CloseMid") == 0) {
		nghttp2_nv h[] = { NV(":status", "200"), NV("content-type", "application/grpc") };

		nghttp2_submit_headers(sc->ng, NGHTTP2_FLAG_NONE, rq->id, NULL, h, nitems(h), NULL);
		sc->close_after_flush = 1;
	} else if (strcmp(m, "Refuse") == 0) {
		if (sv->refused_once++ == 0)
			nghttp2_submit_rst_stream(
			    sc->ng, NGHTTP2_FLAG_NONE, rq->id, NGHTTP2_REFUSED_STREAM);
		else
			respond_ok(rq, 4, 0);
	} else if (strcmp(m, "Reset") == 0) {
		nghttp2_submit_rst_stream(
		    sc->ng, NGHTTP2_FLAG_NONE, rq->id, NGHTTP2_ENHANCE_YOUR_CALM);
	} else if (strcmp(m, "GoawayAfter") == 0) {
		respond_ok(rq, 4, 0);
		sc->goaway_last = rq->id;
		nghttp2_submit_goaway(
		    sc->ng, NGHTTP2_FLAG_NONE, rq->id, NGHTTP2_NO_ERROR, (const uint8_t *)"bye", 3);
	} else if (strcmp(m, "Slow") == 0) {
		struct timeval tv = { 0, 30000 };

		rq->timer = evtimer_new(sv->base, slow_cb, rq);
		evtimer_add(rq->timer, &tv);
	} else if (strcmp(m, "Hang") == 0) {
		/* never answered */
	} else {
		nghttp2_nv h[] = { NV(":status", "200"), NV("content-type", "application/grpc"),
			NV("grpc-status", "12") };

		nghttp2_submit_response(sc->ng, rq->id, h, nitems(h), NULL);
	}
}

static int
s_begin_headers(nghttp2_session *ng, const nghttp2_frame *f, void *ud)
{
	struct sconn *sc = ud;
	struct sreq  *rq;

	if (f->hd.type != NGHTTP2_HEADERS || f->headers.cat != NGHTTP2_HCAT_REQUEST)
		return 0;
	rq = xcalloc(1, sizeof(*rq));
	rq->sc = sc;
	rq->id = f->hd.stream_id;
	LIST_INSERT_HEAD(&sc->reqs, rq, entry);
	nghttp2_session_set_stream_user_data(ng, rq->id, rq);
	sc->sv->open++;
	if (sc->sv->open > sc->sv->max_open)
		sc->sv->max_open = sc->sv->open;
	return 0;
}

static int
s_header(nghttp2_session *ng, const nghttp2_frame *f, const uint8_t *n, size_t nl, const uint8_t *v,
    size_t vl, uint8_t flags, void *ud)
{
	struct sreq *rq = nghttp2_session_get_stream_user_data(ng, f->hd.stream_id);

	(void)flags;
	(void)ud;
	if (rq != NULL && nl == 5 && memcmp(n, ":path", 5) == 0)
		snprintf(rq->path, sizeof(rq->path), "%.*s", (int)vl, v);
	return 0;
}

static int
s_frame_recv(nghttp2_session *ng, const nghttp2_frame *f, void *ud)
{
	struct sreq *rq;

	(void)ud;
	if ((f->hd.type == NGHTTP2_HEADERS || f->hd.type == NGHTTP2_DATA) &&
	    (f->hd.flags & NGHTTP2_FLAG_END_STREAM) &&
	    (rq = nghttp2_session_get_stream_user_data(ng, f->hd.stream_id)) != NULL)
		handle(rq);
	return 0;
}

static int
s_stream_close(nghttp2_session *ng, int32_t id, uint32_t code, void *ud)
{
	struct sconn *sc = ud;
	struct sreq  *rq = nghttp2_session_get_stream_user_data(ng, id);

	(void)code;
	if (rq == NULL)
		return 0;
	sc->sv->open--;
	if (id == sc->stray_id)
		sc->stray_closed = 1;
	sreq_free(rq);
	return 0;
}

static void
sconn_flush(struct sconn *sc)
{
	const uint8_t *data;
	ssize_t        n;

	while ((n = nghttp2_session_mem_send(sc->ng, &data)) > 0)
		bufferevent_write(sc->bev, data, (size_t)n);
	if (sc->stray_id > 0 && sc->stray_closed) {
		uint8_t f[12] = { 0, 0, 3, 0, 0, 0, 0, 0, 0, 'x', 'y', 'z' };

		f[5] = (uint8_t)(sc->stray_id >> 24);
		f[6] = (uint8_t)(sc->stray_id >> 16);
		f[7] = (uint8_t)(sc->stray_id >> 8);
		f[8] = (uint8_t)sc->stray_id;
		bufferevent_write(sc->bev, f, sizeof(f));
		sc->stray_id = 0;
		sc->stray_closed = 0;
		sc->sv->strays++;
	}
}

static void
s_read(struct bufferevent *bev, void *arg)
{
	struct sconn    *sc = arg;
	struct evbuffer *in = bufferevent_get_input(bev);
	size_t           len = evbuffer_get_length(in);
	const uint8_t   *d = evbuffer_pullup(in, (ssize_t)len);

	if (nghttp2_session_mem_recv(sc->ng, d, len) < 0) {
		sconn_free(sc);
		return;
	}
	evbuffer_drain(in, len);
	sconn_flush(sc);
}

static void
s_write(struct bufferevent *bev, void *arg)
{
	struct sconn *sc = arg;

	sconn_flush(sc);
	if (sc->close_after_flush && evbuffer_get_length(bufferevent_get_output(bev)) == 0)
		sconn_free(sc);
}

static void
s_event(struct bufferevent *bev, short what, void *arg)
{
	(void)bev;
	if (what & (BEV_EVENT_EOF | BEV_EVENT_ERROR))
		sconn_free(arg);
}

static void
s_accept(struct evconnlistener *l, evutil_socket_t fd, struct sockaddr *sa, int salen, void *arg)
{
	struct srv                *sv = arg;
	struct sconn              *sc = xcalloc(1, sizeof(*sc));
	nghttp2_session_callbacks *cbs;
	nghttp2_settings_entry     iv[1] = { { NGHTTP2_SETTINGS_MAX_CONCURRENT_STREAMS, 0 } };

	(void)l;
	(void)sa;
	(void)salen;
	sc->sv = sv;
	LIST_INIT(&sc->reqs);
	LIST_INSERT_HEAD(&sv->conns, sc, entry);
	if (sv->ssl_ctx != NULL)
		sc->bev = bufferevent_openssl_socket_new(sv->base, fd, SSL_new(sv->ssl_ctx),
		    BUFFEREVENT_SSL_ACCEPTING, BEV_OPT_CLOSE_ON_FREE);
	else
		sc->bev = bufferevent_socket_new(sv->base, fd, BEV_OPT_CLOSE_ON_FREE);
	nghttp2_session_callbacks_new(&cbs);
	nghttp2_session_callbacks_set_on_begin_headers_callback(cbs, s_begin_headers);
	nghttp2_session_callbacks_set_on_header_callback(cbs, s_header);
	nghttp2_session_callbacks_set_on_frame_recv_callback(cbs, s_frame_recv);
	nghttp2_session_callbacks_set_on_stream_close_callback(cbs, s_stream_close);
	nghttp2_session_server_new(&sc->ng, cbs, sc);
	nghttp2_session_callbacks_del(cbs);
	iv[0].value = sv->max_streams;
	nghttp2_submit_settings(sc->ng, NGHTTP2_FLAG_NONE, iv, 1);
	bufferevent_setcb(sc->bev, s_read, s_write, s_event, sc);
	bufferevent_enable(sc->bev, EV_READ | EV_WRITE);
	sconn_flush(sc);
}

static struct srv *
srv_new(uint32_t max_streams)
{
	struct srv        *sv = xcalloc(1, sizeof(*sv));
	struct sockaddr_un sun;

	sv->base = base;
	sv->max_streams = max_streams;
	LIST_INIT(&sv->conns);
	snprintf(sv->path, sizeof(sv->path), "/tmp/klet-test-h2-%d.sock", (int)getpid());
	unlink(sv->path);
	memset(&sun, 0, sizeof(sun));
	sun.sun_family = AF_UNIX;
	snprintf(sun.sun_path, sizeof(sun.sun_path), "%s", sv->path);
	sv->lis = evconnlistener_new_bind(
	    base, s_accept, sv, LEV_OPT_CLOSE_ON_FREE, 16, (struct sockaddr *)&sun, sizeof(sun));
	assert_non_null(sv->lis);
	return sv;
}

static void
srv_free(struct srv *sv)
{
	while (!LIST_EMPTY(&sv->conns))
		sconn_free(LIST_FIRST(&sv->conns));
	evconnlistener_free(sv->lis);
	if (sv->path[0] != '\0')
		unlink(sv->path);
	free(sv);
}

/* ---- client side ---- */

struct res {
	int    done;
	int    code;
	char   msg[256];
	char  *name;
	size_t name_len;
};

static void
done_cb(void *arg, int code, const char *msg, ProtobufCMessage *m)
{
	struct res *r = arg;

	r->done++;
	r->code = code;
	snprintf(r->msg, sizeof(r->msg), "%s", msg);
	if (m != NULL) {
		Runtime__V1__VersionResponse *v = (Runtime__V1__VersionResponse *)m;

		r->name_len = strlen(v->runtime_name);
	}
}

static int  lost, connected, goaways;
static char lost_reason[256];

static void
ev_cb(struct h2_session *s, enum h2_event ev, const char *reason, void *arg)
{
	(void)s;
	(void)arg;
	if (ev == H2_EV_LOST) {
		lost++;
		snprintf(lost_reason, sizeof(lost_reason), "%s", reason);
	} else if (ev == H2_EV_CONNECTED)
		connected++;
	else
		goaways++;
}

static void
spin_until(const int *flag, int want)
{
	int64_t end = now_mono_ms() + 20000;

	while (*flag < want && now_mono_ms() < end)
		event_base_loop(base, EVLOOP_ONCE);
}

static struct h2_session *
client(const char *path, int64_t ping_ms, int64_t connect_ms)
{
	struct h2_options o;

	h2_options_init(&o);
	o.transport = H2_UNIX;
	o.path = path;
	o.ping_interval_ms = ping_ms;
	o.ping_timeout_ms = 200;
	if (connect_ms)
		o.connect_timeout_ms = connect_ms;
	lost = connected = goaways = 0;
	return h2_session_new(base, &o, ev_cb, NULL);
}

static struct grpc_call *
call(struct h2_session *s, const char *method, struct res *r, int64_t timeout_ms)
{
	Runtime__V1__VersionRequest req = RUNTIME__V1__VERSION_REQUEST__INIT;
	struct grpc_call_opts       o = { 0 };
	char                        path[64];

	memset(r, 0, sizeof(*r));
	snprintf(path, sizeof(path), "/t.S/%s", method);
	o.timeout_ms = timeout_ms;
	req.version = "x";
	return grpc_unary(
	    s, path, &req.base, &runtime__v1__version_response__descriptor, &o, done_cb, r);
}

static int
setup(void **state)
{
	(void)state;
	base = event_base_new();
	srv = srv_new(100);
	return 0;
}

static int
teardown(void **state)
{
	(void)state;
	srv_free(srv);
	/* let deferred frees run */
	event_base_loop(base, EVLOOP_NONBLOCK);
	event_base_free(base);
	return 0;
}

static void
test_grpc_calls(void **state)
{
	static const struct {
		const char *method;
		int         code;
		const char *msg; /* substring */
	} t[] = {
		{ "Ok", GRPC_OK, "" },
		{ "Err", GRPC_FAILED_PRECONDITION, "bad thing%" },
		{ "ManyHeaders", GRPC_FAILED_PRECONDITION, "start-mmmm" },
		{ "Http503", GRPC_UNAVAILABLE, "503" },
		{ "Http404", GRPC_UNIMPLEMENTED, "404" },
		{ "Nope", GRPC_UNIMPLEMENTED, "" },
		{ "NoTrailers", GRPC_INTERNAL, "trailers" },
		{ "Truncated", GRPC_INTERNAL, "truncated" },
		{ "Garbage", GRPC_INTERNAL, "unmarshal" },
		{ "Reset", GRPC_RESOURCE_EXHAUSTED, "ENHANCE_YOUR_CALM" },
		{ "Refuse", GRPC_OK, "" },
		{ "Hang", GRPC_DEADLINE_EXCEEDED, "deadline" },
		{ "Big", GRPC_OK, "" },
		{ "Stray", GRPC_OK, "" },
		{ "Ok", GRPC_OK, "" },
	};
	struct h2_session      *s;
	struct h2_session_stats st;
	struct res              r;
	size_t                  i;

	(void)state;
	s = client(srv->path, 0, 0);
	for (i = 0; i < nitems(t); i++) {
		call(s, t[i].method, &r, strcmp(t[i].method, "Hang") == 0 ? 300 : 20000);
		spin_until(&r.done, 1);
		assert_int_equal(r.done, 1);
		if (r.code != t[i].code || strstr(r.msg, t[i].msg) == NULL)
			fail_msg("%s: got %s \"%s\"", t[i].method, grpc_code_name(r.code), r.msg);
		if (strcmp(t[i].method, "Big") == 0)
			assert_int_equal(r.name_len, 3u << 20);
	}
	h2_session_stats(s, &st);
	assert_int_equal(st.connects, 1); /* one connection lived through every error */
	assert_int_equal(srv->strays, 1); /* and a DATA frame for a closed stream */
	assert_int_equal(st.retries, 1);  /* the refused stream */
	assert_int_equal(lost, 0);
	h2_session_free(s);
}

/* Answers of the sizes around the receive buffers' bounds, in an order that takes spares,
 * replaces a smaller one, skips a spare too small and maps past RBUF_SPARE_MAX: each
 * arrives whole (and ASan sees every buffer's use and release). */
static void
test_grpc_answer_sizes(void **state)
{
	static const size_t sizes[] = { 100, 40000, 200000, 40000, 200000, 60000, 300000, 33000,
		250000, 1000, 40000 };
	struct h2_session  *s;
	struct res          r;
	char                m[32];
	size_t              i;

	(void)state;
	s = client(srv->path, 0, 0);
	for (i = 0; i < nitems(sizes); i++) {
		snprintf(m, sizeof(m), "Size%zu", sizes[i]);
		call(s, m, &r, 20000);
		spin_until(&r.done, 1);
		assert_int_equal(r.code, GRPC_OK);
		assert_int_equal(r.name_len, sizes[i]);
	}
	/* Two at once: both spares in use, a third buffer mapped. */
	{
		struct res r2;

		call(s, "Size200000", &r, 20000);
		call(s, "Size45000", &r2, 20000);
		spin_until(&r.done, 1);
		spin_until(&r2.done, 1);
		assert_int_equal(r.name_len, 200000);
		assert_int_equal(r2.name_len, 45000);
	}
	h2_session_free(s);
}

static void
test_close_mid_stream(void **state)
{
	struct h2_session *s;
	struct res         r, r2;

	(void)state;
	s = client(srv->path, 0, 0);
	call(s, "CloseMid", &r, 5000);
	spin_until(&r.done, 1);
	assert_int_equal(r.code, GRPC_UNAVAILABLE);
	assert_int_equal(lost, 1);
	call(s, "Ok", &r2, 5000); /* reconnects on demand */
	spin_until(&r2.done, 1);
	assert_int_equal(r2.code, GRPC_OK);
	h2_session_free(s);
}

static void
test_max_concurrent(void **state)
{
	struct h2_session *s;
	struct res         r[10];
	int                i, all = 0;

	(void)state;
	srv->max_streams = 2;
	s = client(srv->path, 0, 0);
	for (i = 0; i < 10; i++)
		call(s, "Slow", &r[i], 10000);
	for (i = 0; i < 10; i++) {
		spin_until(&r[i].done, 1);
		all += r[i].code == GRPC_OK;
	}
	assert_int_equal(all, 10);
	assert_true(srv->max_open <= 2);
	srv->max_streams = 100;
	h2_session_free(s);
}

static void
test_goaway_retry(void **state)
{
	struct h2_session      *s;
	struct h2_session_stats st;
	struct res              r[3];
	int                     i;

	(void)state;
	s = client(srv->path, 0, 0);
	call(s, "GoawayAfter", &r[0], 10000); /* stream 1: answered, then GOAWAY last=1 */
	call(s, "Ok", &r[1], 10000);          /* streams 3, 5: refused, retried */
	call(s, "Ok", &r[2], 10000);
	for (i = 0; i < 3; i++) {
		spin_until(&r[i].done, 1);
		assert_int_equal(r[i].code, GRPC_OK);
	}
	h2_session_stats(s, &st);
	assert_int_equal(st.goaways, 1);
	assert_int_equal(st.retries, 2);
	assert_int_equal(st.connects, 2);
	assert_int_equal(goaways, 1);
	h2_session_free(s);
}

static void
test_cancel_and_free_in_callback(void **state)
{
	struct h2_session *s;
	struct grpc_call  *c;
	struct res         r, r2;

	(void)state;
	s = client(srv->path, 0, 0);
	c = call(s, "Hang", &r, 0);
	call(s, "Ok", &r2, 5000);
	spin_until(&r2.done, 1);
	grpc_call_cancel(c); /* RST_STREAM; its callback never runs */
	call(s, "Ok", &r2, 5000);
	spin_until(&r2.done, 1);
	assert_int_equal(r.done, 0);
	assert_int_equal(r2.code, GRPC_OK);
	/* a raw stream pending when the session is freed: no callback */
	{
		static const struct h2_header h[] = { { ":method", "GET" }, { ":scheme", "http" },
			{ ":path", "/t.S/Hang" }, { ":authority", "x" } };
		static int                    closed;
		struct h2_stream_cbs          cbs = { 0 };

		h2_request(s, h, nitems(h), NULL, 0, &cbs, &closed);
		event_base_loop(base, EVLOOP_NONBLOCK);
	}
	h2_session_free(s);
	event_base_loop(base, EVLOOP_NONBLOCK);
	assert_int_equal(r.done, 0);
}

/* A peer that sends SETTINGS and then nothing, not even PING acks. */
static void
test_ping_timeout(void **state)
{
	struct sockaddr_un sun;
	struct h2_session *s;
	char               path[108];
	int                lfd, cfd = -1;

	(void)state;
	snprintf(path, sizeof(path), "/tmp/klet-test-h2-dead-%d.sock", (int)getpid());
	unlink(path);
	memset(&sun, 0, sizeof(sun));
	sun.sun_family = AF_UNIX;
	snprintf(sun.sun_path, sizeof(sun.sun_path), "%s", path);
	lfd = socket(AF_UNIX, SOCK_STREAM, 0);
	assert_int_equal(bind(lfd, (struct sockaddr *)&sun, sizeof(sun)), 0);
	assert_int_equal(listen(lfd, 4), 0);
	s = client(path, 100, 0);
	h2_session_connect(s);
	cfd = accept(lfd, NULL, NULL);
	assert_true(cfd >= 0);
	assert_int_equal(write(cfd, "\0\0\0\4\0\0\0\0\0", 9), 9); /* empty SETTINGS */
	spin_until(&connected, 1);
	assert_int_equal(connected, 1);
	spin_until(&lost, 1);
	assert_int_equal(lost, 1);
	assert_non_null(strstr(lost_reason, "PING"));
	h2_session_free(s);
	close(cfd);
	close(lfd);
	unlink(path);
}

/* A peer that accepts nothing: the connect timeout fires; queued calls fail. */
static void
test_connect_timeout(void **state)
{
	struct sockaddr_un sun;
	struct h2_session *s;
	struct res         r;
	char               path[108];
	int                lfd;

	(void)state;
	snprintf(path, sizeof(path), "/tmp/klet-test-h2-silent-%d.sock", (int)getpid());
	unlink(path);
	memset(&sun, 0, sizeof(sun));
	sun.sun_family = AF_UNIX;
	snprintf(sun.sun_path, sizeof(sun.sun_path), "%s", path);
	lfd = socket(AF_UNIX, SOCK_STREAM, 0);
	assert_int_equal(bind(lfd, (struct sockaddr *)&sun, sizeof(sun)), 0);
	assert_int_equal(listen(lfd, 4), 0);
	s = client(path, 0, 150);
	call(s, "Ok", &r, 0);
	spin_until(&r.done, 1);
	assert_int_equal(r.code, GRPC_UNAVAILABLE);
	assert_non_null(strstr(r.msg, "no HTTP/2 answer"));
	assert_int_equal(lost, 1);
	h2_session_free(s);
	close(lfd);
	unlink(path);
	/* no socket at all */
	s = client(path, 0, 0);
	call(s, "Ok", &r, 0);
	spin_until(&r.done, 1);
	assert_int_equal(r.code, GRPC_UNAVAILABLE);
	assert_non_null(strstr(r.msg, "No such file"));
	h2_session_free(s);
}

/* ---- TLS: ALPN h2 required, the host name or address verified ---- */

static int alpn_h2;

static int
alpn_select(SSL *ssl, const unsigned char **out, unsigned char *outlen, const unsigned char *in,
    unsigned inlen, void *arg)
{
	(void)ssl;
	(void)arg;
	if (alpn_h2 && nghttp2_select_next_protocol((unsigned char **)out, outlen, in, inlen) == 1)
		return SSL_TLSEXT_ERR_OK;
	return SSL_TLSEXT_ERR_NOACK;
}

/* A self-signed certificate for localhost and 127.0.0.1. */
static void
make_cert(EVP_PKEY **keyp, X509 **certp)
{
	EVP_PKEY       *key = EVP_EC_gen("P-256");
	X509           *x = X509_new();
	X509_NAME      *name;
	X509_EXTENSION *ext;
	X509V3_CTX      v3;

	assert_non_null(key);
	X509_set_version(x, 2);
	ASN1_INTEGER_set(X509_get_serialNumber(x), 1);
	X509_gmtime_adj(X509_getm_notBefore(x), -3600);
	X509_gmtime_adj(X509_getm_notAfter(x), 3600);
	X509_set_pubkey(x, key);
	name = X509_get_subject_name(x);
	X509_NAME_add_entry_by_txt(
	    name, "CN", MBSTRING_ASC, (const unsigned char *)"klet-test", -1, -1, 0);
	X509_set_issuer_name(x, name);
	X509V3_set_ctx(&v3, x, x, NULL, NULL, 0);
	ext = X509V3_EXT_conf_nid(NULL, &v3, NID_subject_alt_name, "DNS:localhost,IP:127.0.0.1");
	X509_add_ext(x, ext, -1);
	X509_EXTENSION_free(ext);
	assert_true(X509_sign(x, key, EVP_sha256()) > 0);
	*keyp = key;
	*certp = x;
}

static int
tls_call(SSL_CTX *cctx, const char *tls_name, struct res *r)
{
	struct h2_options  o;
	struct h2_session *s;
	char               port[16];

	snprintf(port, sizeof(port), "%d", srv->port);
	h2_options_init(&o);
	o.transport = H2_TLS;
	o.host = "127.0.0.1";
	o.port = port;
	o.ssl_ctx = cctx;
	o.tls_name = tls_name;
	s = h2_session_new(base, &o, ev_cb, NULL);
	assert_non_null(s);
	call(s, "Ok", r, 20000);
	spin_until(&r->done, 1);
	h2_session_free(s);
	return r->code;
}

/* Replaces the unix socket server with one on 127.0.0.1 (TLS when sctx is set). */
static void
srv_tcp(SSL_CTX *sctx)
{
	struct sockaddr_in sin;
	socklen_t          slen = sizeof(sin);

	srv_free(srv);
	srv = xcalloc(1, sizeof(*srv));
	srv->base = base;
	srv->max_streams = 100;
	srv->ssl_ctx = sctx;
	LIST_INIT(&srv->conns);
	memset(&sin, 0, sizeof(sin));
	sin.sin_family = AF_INET;
	sin.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	srv->lis = evconnlistener_new_bind(base, s_accept, srv,
	    LEV_OPT_CLOSE_ON_FREE | LEV_OPT_REUSEABLE, 16, (struct sockaddr *)&sin, sizeof(sin));
	assert_non_null(srv->lis);
	getsockname(evconnlistener_get_fd(srv->lis), (struct sockaddr *)&sin, &slen);
	srv->port = ntohs(sin.sin_port);
}

/* h2c with prior knowledge on TCP (the gRPC health prober's transport). */
static void
test_tcp(void **state)
{
	struct h2_options  o;
	struct h2_session *s;
	struct res         r;
	char               port[16];

	(void)state;
	srv_tcp(NULL);
	snprintf(port, sizeof(port), "%d", srv->port);
	h2_options_init(&o);
	o.transport = H2_TCP;
	o.host = "127.0.0.1";
	o.port = port;
	s = h2_session_new(base, &o, ev_cb, NULL);
	assert_non_null(s);
	call(s, "Ok", &r, 20000);
	spin_until(&r.done, 1);
	assert_int_equal(r.code, GRPC_OK);
	call(s, "Err", &r, 20000);
	spin_until(&r.done, 1);
	assert_int_equal(r.code, GRPC_FAILED_PRECONDITION);
	h2_session_free(s);
	/* nobody listening */
	srv_free(srv);
	srv = srv_new(100);
	o.port = "1";
	s = h2_session_new(base, &o, ev_cb, NULL);
	call(s, "Ok", &r, 20000);
	spin_until(&r.done, 1);
	assert_int_equal(r.code, GRPC_UNAVAILABLE);
	assert_non_null(strstr(r.msg, "refused"));
	h2_session_free(s);
}

static void
test_tls(void **state)
{
	EVP_PKEY  *key;
	X509      *cert;
	SSL_CTX   *sctx, *cctx;
	struct res r;

	(void)state;
	make_cert(&key, &cert);
	sctx = SSL_CTX_new(TLS_server_method());
	SSL_CTX_use_certificate(sctx, cert);
	SSL_CTX_use_PrivateKey(sctx, key);
	SSL_CTX_set_alpn_select_cb(sctx, alpn_select, NULL);
	cctx = SSL_CTX_new(TLS_client_method());
	X509_STORE_add_cert(SSL_CTX_get_cert_store(cctx), cert);
	SSL_CTX_set_verify(cctx, SSL_VERIFY_PEER, NULL);

	srv_tcp(sctx);

	alpn_h2 = 1;
	assert_int_equal(tls_call(cctx, NULL, &r), GRPC_OK);        /* IP address verified */
	assert_int_equal(tls_call(cctx, "localhost", &r), GRPC_OK); /* name verified (SNI) */
	assert_int_equal(tls_call(cctx, "other.example", &r), GRPC_UNAVAILABLE);
	if (strstr(r.msg, "verify") == NULL)
		fail_msg("wrong name: %s", r.msg);
	alpn_h2 = 0;
	assert_int_equal(tls_call(cctx, NULL, &r), GRPC_UNAVAILABLE);
	if (strstr(r.msg, "ALPN h2") == NULL)
		fail_msg("no ALPN: %s", r.msg);

	while (!LIST_EMPTY(&srv->conns))
		sconn_free(LIST_FIRST(&srv->conns));
	SSL_CTX_free(sctx);
	SSL_CTX_free(cctx);
	X509_free(cert);
	EVP_PKEY_free(key);
	srv->ssl_ctx = NULL;
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_timeout_format),
		cmocka_unit_test(test_percent_decode),
		cmocka_unit_test(test_status_mapping),
		cmocka_unit_test(test_frame_parse),
		cmocka_unit_test_setup_teardown(test_grpc_calls, setup, teardown),
		cmocka_unit_test_setup_teardown(test_grpc_answer_sizes, setup, teardown),
		cmocka_unit_test_setup_teardown(test_close_mid_stream, setup, teardown),
		cmocka_unit_test_setup_teardown(test_max_concurrent, setup, teardown),
		cmocka_unit_test_setup_teardown(test_goaway_retry, setup, teardown),
		cmocka_unit_test_setup_teardown(test_cancel_and_free_in_callback, setup, teardown),
		cmocka_unit_test_setup_teardown(test_ping_timeout, setup, teardown),
		cmocka_unit_test_setup_teardown(test_connect_timeout, setup, teardown),
		cmocka_unit_test_setup_teardown(test_tcp, setup, teardown),
		cmocka_unit_test_setup_teardown(test_tls, setup, teardown),
	};

	log_init(0, 0);
	return cmocka_run_group_tests(tests, NULL, NULL);
}
