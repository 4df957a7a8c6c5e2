/* h2.c — an HTTP/2 client session (nghttp2) over libevent bufferevents: unix socket or TCP
 * with h2c prior knowledge, or TCP+TLS with ALPN h2. See h2.h for the contract.
 *
 * Shape: a session holds a queue of requests, a list of connections (the current one and
 * draining ones) and a "work" event. Every completion (on_close) and every session event is
 * delivered from the work event, so user code never runs inside h2_request or inside a
 * half-updated connection; only response headers and data are delivered inline from
 * nghttp2's receive callbacks. Dead connections are torn down by the work event too, never
 * inside nghttp2 or bufferevent callbacks.
 */
#include <sys/queue.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <sys/un.h>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>

#include <errno.h>
#include <fcntl.h>
#include <netdb.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <event2/buffer.h>
#include <event2/bufferevent.h>
#include <event2/event.h>
#include <nghttp2/nghttp2.h>

#include "net/h2.h"
#include "core/log.h"
#include "core/ossl.h"
#include "core/util.h"

#ifndef TAILQ_FOREACH_SAFE
#define TAILQ_FOREACH_SAFE(var, head, field, tvar)                                                 \
	for ((var) = TAILQ_FIRST(head); (var) != NULL && ((tvar) = TAILQ_NEXT(var, field), 1);     \
	     (var) = (tvar))
#endif

#define H2_OUT_HIGH        (256 * 1024) /* stop producing frames above this much unsent output */
#define H2_OUT_LOW         (64 * 1024)  /* resume below this */
#define H2_MAX_HEADERS     128
/* A header block's fields, and their names and values, are held in the stream itself up to
 * these sizes (a gRPC answer's headers and trailers, an API server's headers): none of them
 * is allocated on its own. */
#define H2_HB_INLINE_N     12
#define H2_HB_INLINE_BYTES 512
#define H2_READ_MAX        (256 * 1024) /* bytes read per read event of a plain socket */
#define H2_READ_CHUNK      (32 * 1024)  /* bytes per read of h2_conn_rawreadcb */

enum st_state { ST_QUEUED, ST_OPEN, ST_DONE };
enum c_state { C_CONNECTING, C_OPEN, C_DRAINING, C_DEAD };

struct h2_conn;

struct h2_stream {
	struct h2_session   *st_s;
	struct h2_conn      *st_conn; /* while ST_OPEN */
	int32_t              st_id;
	enum st_state        st_state;
	int                  st_cancelled;
	struct h2_stream_cbs st_cbs;
	void                *st_arg;
	nghttp2_nv          *st_nv; /* the request's fields, their names and values after them */
	size_t               st_nnv;
	uint8_t             *st_body;
	size_t               st_body_len;
	size_t               st_body_off;
	unsigned             st_retries;
	int                  st_got_response;
	int                  st_remote_end;
	/* the header block being received: its fields (st_hb_in, or the heap past
	 * H2_HB_INLINE_N), their names and values, each NUL-ended, packed one after the
	 * other (st_hbs_in, or the heap past H2_HB_INLINE_BYTES); st_hb NULL: none yet */
	struct h2_header *st_hb;
	size_t            st_hbn, st_hbcap;
	char             *st_hbs;
	size_t            st_hbslen, st_hbscap;
	size_t            st_hbbytes;
	struct h2_header  st_hb_in[H2_HB_INLINE_N];
	char              st_hbs_in[H2_HB_INLINE_BYTES];
	/* a local reason to end the stream (abort, bad headers) */
	enum h2_error st_local_err;
	char         *st_local_detail;
	/* the outcome, for on_close */
	enum h2_error st_err;
	uint32_t      st_rst;
	char         *st_detail;
	TAILQ_ENTRY(h2_stream) st_entry;
};
TAILQ_HEAD(h2_streamq, h2_stream);

struct h2_conn {
	struct h2_session  *c_s;
	unsigned            c_serial;
	enum c_state        c_state;
	struct bufferevent *c_bev;
	struct event       *c_rev; /* a plain socket's reads (its bufferevent only writes) */
	nghttp2_session    *c_ng;
	int                 c_sock_up; /* socket (and TLS) connected */
	struct event       *c_timer;   /* connect timeout, then keepalive */
	int                 c_ping_out;
	int64_t             c_last_read_ms;
	struct h2_streamq   c_streams;
	unsigned            c_nactive;
	int                 c_got_goaway;
	TAILQ_ENTRY(h2_conn) c_entry;
};
TAILQ_HEAD(h2_connq, h2_conn);

struct h2_sev {
	enum h2_event e_ev;
	char         *e_reason;
	TAILQ_ENTRY(h2_sev) e_entry;
};
TAILQ_HEAD(h2_sevq, h2_sev);

struct h2_session {
	struct event_base         *s_base;
	struct h2_options          s_opts;
	char                      *s_target; /* for messages */
	h2_event_cb                s_cb;
	void                      *s_arg;
	nghttp2_session_callbacks *s_ngcbs;
	nghttp2_option            *s_ngopt;
	struct h2_conn            *s_cur;
	struct h2_connq            s_conns;
	struct h2_streamq          s_queue;
	unsigned                   s_nqueued;
	struct h2_streamq          s_done;
	struct h2_sevq             s_events;
	struct event              *s_work;
	struct event              *s_free;
	int                        s_depth;
	int                        s_dead;
	unsigned                   s_serial;
	struct h2_session_stats    s_stats;
};

static void h2_conn_fail(struct h2_conn *, enum h2_error, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static void h2_conn_flush(struct h2_conn *);
static void h2_session_wake(struct h2_session *);

const char *
h2_strerror(enum h2_error e)
{
	switch (e) {
	case H2_OK:
		return "ok";
	case H2_ERR_CONNECT:
		return "cannot connect";
	case H2_ERR_CLOSED:
		return "connection lost";
	case H2_ERR_RESET:
		return "stream reset by the server";
	case H2_ERR_REFUSED:
		return "stream refused by the server";
	case H2_ERR_GOAWAY:
		return "server went away";
	case H2_ERR_PROTOCOL:
		return "HTTP/2 protocol error";
	case H2_ERR_TIMEOUT:
		return "peer not answering";
	case H2_ERR_ABORTED:
		return "aborted";
	case H2_ERR_OVERLOAD:
		return "too many queued requests";
	}
	return "unknown error";
}

void
h2_options_init(struct h2_options *o)
{
	memset(o, 0, sizeof(*o));
	o->connect_timeout_ms = 10000;
	o->ping_timeout_ms = 20000;
	o->stream_window = 4u << 20;
	o->conn_window = 16u << 20;
	o->max_header_bytes = 64 * 1024;
	o->max_queued = 4096;
	o->max_retries = 3;
}

/* ---- streams ---- */

static void
h2_hb_clear(struct h2_stream *st)
{
	if (st->st_hb != st->st_hb_in)
		free(st->st_hb);
	if (st->st_hbs != st->st_hbs_in)
		free(st->st_hbs);
	st->st_hb = NULL;
	st->st_hbs = NULL;
	st->st_hbn = st->st_hbcap = st->st_hbslen = st->st_hbscap = 0;
	st->st_hbbytes = 0;
}

/* Appends one field to the header block being received. */
static void
h2_hb_add(struct h2_stream *st, const uint8_t *name, size_t namelen, const uint8_t *value,
    size_t valuelen)
{
	size_t need = namelen + valuelen + 2, i;
	char  *p;

	if (st->st_hb == NULL) {
		st->st_hb = st->st_hb_in;
		st->st_hbcap = H2_HB_INLINE_N;
		st->st_hbs = st->st_hbs_in;
		st->st_hbscap = sizeof(st->st_hbs_in);
	}
	if (st->st_hbn == st->st_hbcap) {
		struct h2_header *hb = xreallocarray(
		    st->st_hb != st->st_hb_in ? st->st_hb : NULL, st->st_hbcap * 2, sizeof(*hb));

		if (st->st_hb == st->st_hb_in)
			memcpy(hb, st->st_hb_in, sizeof(st->st_hb_in));
		st->st_hb = hb;
		st->st_hbcap *= 2;
	}
	if (st->st_hbscap - st->st_hbslen < need) {
		size_t cap = st->st_hbscap * 2 > st->st_hbslen + need ? st->st_hbscap * 2
		                                                      : st->st_hbslen + need;
		char  *b = xmalloc(cap);

		/* The fields point into the bytes: moved with them. */
		memcpy(b, st->st_hbs, st->st_hbslen);
		for (i = 0; i < st->st_hbn; i++) {
			st->st_hb[i].name = b + (st->st_hb[i].name - st->st_hbs);
			st->st_hb[i].value = b + (st->st_hb[i].value - st->st_hbs);
		}
		if (st->st_hbs != st->st_hbs_in)
			free(st->st_hbs);
		st->st_hbs = b;
		st->st_hbscap = cap;
	}
	p = st->st_hbs + st->st_hbslen;
	memcpy(p, name, namelen);
	p[namelen] = '\0';
	memcpy(p + namelen + 1, value, valuelen);
	p[namelen + 1 + valuelen] = '\0';
	st->st_hb[st->st_hbn].name = p;
	st->st_hb[st->st_hbn].value = p + namelen + 1;
	st->st_hbn++;
	st->st_hbslen += need;
}

static void
h2_stream_free(struct h2_stream *st)
{
	h2_hb_clear(st);
	free(st->st_nv); /* and the names and values after it */
	free(st->st_body);
	free(st->st_local_detail);
	free(st->st_detail);
	free(st);
}

/* Moves the stream to the done list; on_close runs from the work event. */
static void
h2_stream_finish(struct h2_stream *st, enum h2_error err, uint32_t rst, const char *detail)
{
	st->st_state = ST_DONE;
	st->st_conn = NULL;
	st->st_err = err;
	st->st_rst = rst;
	free(st->st_detail);
	/* An answer that came whole says "ok" without an allocation of its own. */
	st->st_detail = err == H2_OK ? NULL : xstrdup(detail ? detail : h2_strerror(err));
	TAILQ_INSERT_TAIL(&st->st_s->s_done, st, st_entry);
	h2_session_wake(st->st_s);
}

static void
h2_stream_requeue(struct h2_stream *st)
{
	struct h2_session *s = st->st_s;

	st->st_state = ST_QUEUED;
	st->st_conn = NULL;
	st->st_id = 0;
	st->st_body_off = 0;
	st->st_retries++;
	h2_hb_clear(st);
	s->s_stats.retries++;
	TAILQ_INSERT_HEAD(&s->s_queue, st, st_entry);
	s->s_nqueued++;
	h2_session_wake(s);
}

/* ---- session events ---- */

static void
h2_session_wake(struct h2_session *s)
{
	event_active(s->s_work, EV_TIMEOUT, 0);
}

static void
h2_session_event(struct h2_session *s, enum h2_event ev, const char *reason)
{
	struct h2_sev *e = xcalloc(1, sizeof(*e));

	e->e_ev = ev;
	e->e_reason = xstrdup(reason);
	TAILQ_INSERT_TAIL(&s->s_events, e, e_entry);
	h2_session_wake(s);
}

/* ---- nghttp2 callbacks ---- */

static struct h2_stream *
h2_conn_stream(struct h2_conn *c, int32_t id)
{
	struct h2_stream *st;

	if (c->c_state == C_DEAD)
		return NULL;
	st = nghttp2_session_get_stream_user_data(c->c_ng, id);
	if (st == NULL || st->st_conn != c || st->st_state != ST_OPEN)
		return NULL;
	return st;
}

/* Aborts a stream locally: RST_STREAM and, later, on_close with err. */
static void
h2_stream_abort(struct h2_stream *st, enum h2_error err, uint32_t code, const char *detail)
{
	if (st->st_local_err != H2_OK)
		return;
	st->st_local_err = err;
	st->st_local_detail = xstrdup(detail);
	nghttp2_submit_rst_stream(st->st_conn->c_ng, NGHTTP2_FLAG_NONE, st->st_id, code);
}

static ssize_t
h2_body_read_cb(nghttp2_session *ng, int32_t id, uint8_t *buf, size_t length, uint32_t *data_flags,
    nghttp2_data_source *source, void *ud)
{
	struct h2_stream *st = source->ptr;
	size_t            n = st->st_body_len - st->st_body_off;

	(void)ng;
	(void)id;
	(void)ud;
	if (n > length)
		n = length;
	if (n > 0)
		memcpy(buf, st->st_body + st->st_body_off, n);
	st->st_body_off += n;
	if (st->st_body_off == st->st_body_len)
		*data_flags |= NGHTTP2_DATA_FLAG_EOF;
	return (ssize_t)n;
}

static int
h2_on_begin_headers_cb(nghttp2_session *ng, const nghttp2_frame *frame, void *ud)
{
	struct h2_stream *st = h2_conn_stream(ud, frame->hd.stream_id);

	(void)ng;
	if (st != NULL)
		h2_hb_clear(st);
	return 0;
}

static int
h2_on_header_cb(nghttp2_session *ng, const nghttp2_frame *frame, const uint8_t *name,
    size_t namelen, const uint8_t *value, size_t valuelen, uint8_t flags, void *ud)
{
	struct h2_conn   *c = ud;
	struct h2_stream *st = h2_conn_stream(c, frame->hd.stream_id);
	size_t            max = c->c_s->s_opts.max_header_bytes;

	(void)ng;
	(void)flags;
	if (st == NULL || frame->hd.type != NGHTTP2_HEADERS || st->st_local_err != H2_OK)
		return 0;
	st->st_hbbytes += namelen + valuelen + 32;
	if (st->st_hbbytes > max || st->st_hbn >= H2_MAX_HEADERS) {
		char msg[128];

		snprintf(msg, sizeof(msg), "response header block over %zu bytes or %d fields", max,
		    H2_MAX_HEADERS);
		h2_stream_abort(st, H2_ERR_PROTOCOL, NGHTTP2_INTERNAL_ERROR, msg);
		h2_hb_clear(st);
		return 0;
	}
	h2_hb_add(st, name, namelen, value, valuelen);
	return 0;
}

static void
h2_headers_done(struct h2_conn *c, struct h2_stream *st, const nghttp2_frame *frame)
{
	int    end = (frame->hd.flags & NGHTTP2_FLAG_END_STREAM) != 0;
	int    trailers = st->st_got_response;
	size_t i;
	int    rc = 0;

	if (end)
		st->st_remote_end = 1;
	if (!trailers) {
		for (i = 0; i < st->st_hbn; i++)
			if (strcmp(st->st_hb[i].name, ":status") == 0 &&
			    st->st_hb[i].value[0] == '1' && !end) {
				h2_hb_clear(st); /* informational: skip */
				return;
			}
		st->st_got_response = 1;
	}
	if (st->st_local_err == H2_OK && !st->st_cancelled && st->st_cbs.on_headers != NULL &&
	    !c->c_s->s_dead)
		rc = st->st_cbs.on_headers(st->st_arg, st->st_hb, st->st_hbn, trailers, end);
	h2_hb_clear(st);
	if (rc != 0 && st->st_local_err == H2_OK && !st->st_cancelled)
		h2_stream_abort(st, H2_ERR_ABORTED, NGHTTP2_CANCEL, "aborted by the receiver");
}

static int
h2_on_frame_recv_cb(nghttp2_session *ng, const nghttp2_frame *frame, void *ud)
{
	struct h2_conn    *c = ud;
	struct h2_session *s = c->c_s;
	struct h2_stream  *st;
	char               reason[256];

	(void)ng;
	if (c->c_state == C_DEAD)
		return 0;
	switch (frame->hd.type) {
	case NGHTTP2_HEADERS:
		if ((st = h2_conn_stream(c, frame->hd.stream_id)) != NULL)
			h2_headers_done(c, st, frame);
		break;
	case NGHTTP2_DATA:
		if ((frame->hd.flags & NGHTTP2_FLAG_END_STREAM) &&
		    (st = h2_conn_stream(c, frame->hd.stream_id)) != NULL)
			st->st_remote_end = 1;
		break;
	case NGHTTP2_SETTINGS:
		if ((frame->hd.flags & NGHTTP2_FLAG_ACK) == 0 && c->c_state == C_CONNECTING) {
			c->c_state = C_OPEN;
			s->s_stats.connects++;
			event_del(c->c_timer);
			if (s->s_opts.ping_interval_ms > 0) {
				struct timeval tv = { s->s_opts.ping_interval_ms / 1000,
					(s->s_opts.ping_interval_ms % 1000) * 1000 };
				event_add(c->c_timer, &tv);
			}
			if (s->s_cur == c)
				h2_session_event(s, H2_EV_CONNECTED, s->s_target);
		}
		h2_session_wake(s); /* more stream slots, maybe */
		break;
	case NGHTTP2_PING:
		if (frame->hd.flags & NGHTTP2_FLAG_ACK)
			c->c_ping_out = 0;
		break;
	case NGHTTP2_GOAWAY: {
		const nghttp2_goaway *g = &frame->goaway;
		size_t                dl = g->opaque_data_len > 200 ? 200 : g->opaque_data_len;

		s->s_stats.goaways++;
		snprintf(reason, sizeof(reason), "%s: GOAWAY %s (last stream %d)%s%.*s",
		    s->s_target, nghttp2_http2_strerror(g->error_code), g->last_stream_id,
		    dl ? ": " : "", (int)dl, dl ? (const char *)g->opaque_data : "");
		log_v(2, "%s", reason);
		c->c_got_goaway = 1;
		if (c->c_state != C_DRAINING) {
			c->c_state = C_DRAINING;
			if (s->s_cur == c) {
				s->s_cur = NULL;
				h2_session_event(s, H2_EV_GOAWAY, reason);
			}
		}
		h2_session_wake(s);
		break;
	}
	default:
		break;
	}
	return 0;
}

static int
h2_on_data_chunk_recv_cb(
    nghttp2_session *ng, uint8_t flags, int32_t id, const uint8_t *data, size_t len, void *ud)
{
	struct h2_conn   *c = ud;
	struct h2_stream *st = h2_conn_stream(c, id);

	(void)ng;
	(void)flags;
	if (st == NULL || st->st_cancelled || st->st_local_err != H2_OK || c->c_s->s_dead)
		return 0;
	if (st->st_cbs.on_data != NULL && st->st_cbs.on_data(st->st_arg, data, len) != 0 &&
	    st->st_local_err == H2_OK && !st->st_cancelled)
		h2_stream_abort(st, H2_ERR_ABORTED, NGHTTP2_CANCEL, "aborted by the receiver");
	return 0;
}

static int
h2_on_stream_close_cb(nghttp2_session *ng, int32_t id, uint32_t code, void *ud)
{
	struct h2_conn    *c = ud;
	struct h2_session *s = c->c_s;
	struct h2_stream  *st;
	char               msg[160];

	if (c->c_state == C_DEAD)
		return 0;
	st = nghttp2_session_get_stream_user_data(ng, id);
	if (st == NULL || st->st_conn != c)
		return 0;
	TAILQ_REMOVE(&c->c_streams, st, st_entry);
	c->c_nactive--;
	h2_session_wake(s);
	if (st->st_cancelled) {
		h2_stream_finish(st, H2_ERR_ABORTED, code, "cancelled");
		return 0;
	}
	if (st->st_local_err != H2_OK) {
		h2_stream_finish(st, st->st_local_err, code, st->st_local_detail);
		return 0;
	}
	if (st->st_remote_end) {
		h2_stream_finish(st, H2_OK, 0, "ok");
		return 0;
	}
	if (code == NGHTTP2_REFUSED_STREAM && !st->st_got_response) {
		if (st->st_retries < s->s_opts.max_retries) {
			log_v(3, "%s: stream %d refused, retrying", s->s_target, id);
			h2_stream_requeue(st);
			return 0;
		}
		snprintf(msg, sizeof(msg), "%s: stream refused %u times", s->s_target,
		    st->st_retries + 1);
		h2_stream_finish(st, H2_ERR_REFUSED, code, msg);
		return 0;
	}
	snprintf(msg, sizeof(msg), "%s: stream reset by the server: %s", s->s_target,
	    nghttp2_http2_strerror(code));
	h2_stream_finish(st, H2_ERR_RESET, code, msg);
	return 0;
}

static nghttp2_session_callbacks *
h2_make_callbacks(void)
{
	nghttp2_session_callbacks *cbs;

	if (nghttp2_session_callbacks_new(&cbs) != 0)
		fatalx("%s: out of memory", __func__);
	nghttp2_session_callbacks_set_on_begin_headers_callback(cbs, h2_on_begin_headers_cb);
	nghttp2_session_callbacks_set_on_header_callback(cbs, h2_on_header_cb);
	nghttp2_session_callbacks_set_on_frame_recv_callback(cbs, h2_on_frame_recv_cb);
	nghttp2_session_callbacks_set_on_data_chunk_recv_callback(cbs, h2_on_data_chunk_recv_cb);
	nghttp2_session_callbacks_set_on_stream_close_callback(cbs, h2_on_stream_close_cb);
	return cbs;
}

/* ---- connections ---- */

static void
h2_conn_free(struct h2_conn *c)
{
	struct h2_stream *st;

	while ((st = TAILQ_FIRST(&c->c_streams)) != NULL) {
		TAILQ_REMOVE(&c->c_streams, st, st_entry);
		h2_stream_free(st);
	}
	if (c->c_timer != NULL)
		event_free(c->c_timer);
	if (c->c_rev != NULL)
		event_free(c->c_rev);
	if (c->c_bev != NULL)
		bufferevent_free(c->c_bev);
	if (c->c_ng != NULL)
		nghttp2_session_del(c->c_ng);
	free(c);
}

/* Marks the connection dead and fails (or retries) its streams. Teardown happens in the work
 * event, so this is safe from inside nghttp2 and bufferevent callbacks. */
static void
h2_conn_fail(struct h2_conn *c, enum h2_error err, const char *fmt, ...)
{
	struct h2_session *s = c->c_s;
	struct h2_stream  *st;
	enum c_state       was = c->c_state;
	char               reason[512];
	va_list            ap;
	int                current = (s->s_cur == c);

	if (was == C_DEAD)
		return;
	va_start(ap, fmt);
	vsnprintf(reason, sizeof(reason), fmt, ap);
	va_end(ap);
	c->c_state = C_DEAD;
	if (current)
		s->s_cur = NULL;
	if (c->c_timer != NULL)
		event_del(c->c_timer);
	if (c->c_rev != NULL)
		event_del(c->c_rev);
	if (c->c_bev != NULL) {
		bufferevent_disable(c->c_bev, EV_READ | EV_WRITE);
		bufferevent_setcb(c->c_bev, NULL, NULL, NULL, NULL);
	}
	while ((st = TAILQ_FIRST(&c->c_streams)) != NULL) {
		TAILQ_REMOVE(&c->c_streams, st, st_entry);
		c->c_nactive--;
		if (st->st_cancelled)
			h2_stream_finish(st, H2_ERR_ABORTED, 0, "cancelled");
		else if (st->st_local_err != H2_OK)
			h2_stream_finish(st, st->st_local_err, 0, st->st_local_detail);
		else if (st->st_remote_end)
			h2_stream_finish(st, H2_OK, 0, "ok");
		else if (c->c_got_goaway && err == H2_ERR_CLOSED)
			h2_stream_finish(st, H2_ERR_GOAWAY, 0, reason);
		else
			h2_stream_finish(
			    st, err == H2_ERR_CONNECT ? H2_ERR_CLOSED : err, 0, reason);
	}
	if (was == C_CONNECTING && current) {
		/* nothing could be sent: fail what waits, fast */
		while ((st = TAILQ_FIRST(&s->s_queue)) != NULL) {
			TAILQ_REMOVE(&s->s_queue, st, st_entry);
			s->s_nqueued--;
			h2_stream_finish(st, H2_ERR_CONNECT, 0, reason);
		}
	}
	if (current && !s->s_dead) {
		if (was == C_CONNECTING)
			log_v(1, "%s", reason);
		else
			log_info("%s", reason);
		h2_session_event(s, H2_EV_LOST, reason);
	}
	h2_session_wake(s);
}

/* 1 when frames may go to the socket straight: a plain socket, connected (its own read
 * event exists then, h2_conn_io_start). */
static int
h2_conn_direct(const struct h2_conn *c)
{
	return c->c_rev != NULL;
}

/* One flush's frames, gathered for one write (one thread; emptied before the flush returns). */
static uint8_t h2_wbuf[16 * 1024];

/* Writes data to the socket when nothing waits before it in the bufferevent (*direct: still
 * allowed); what the socket does not take, or an error, goes to the bufferevent, which
 * reports the error as it would have. Returns -1 when the bufferevent refused it. */
static int
h2_conn_write(struct h2_conn *c, const uint8_t *data, size_t n, int *direct)
{
	struct evbuffer *out = bufferevent_get_output(c->c_bev);
	ssize_t          w;

	if (*direct && evbuffer_get_length(out) == 0) {
		do
			w = send(bufferevent_getfd(c->c_bev), data, n, MSG_NOSIGNAL);
		while (w == -1 && errno == EINTR);
		if (w == -1)
			*direct = 0; /* full, or an error */
		else {
			data += w;
			n -= (size_t)w;
		}
	}
	if (n > 0 && bufferevent_write(c->c_bev, data, n) != 0) {
		h2_conn_fail(c, H2_ERR_CLOSED, "%s: write failed", c->c_s->s_target);
		return -1;
	}
	return 0;
}

/* Frames go to the socket at once, gathered in one write, when nothing waits before them (a
 * request, most of the time): through the bufferevent they would wait for the next poll to
 * say the socket is writable, a turn and three system calls more for each, and nghttp2 gives
 * a request's HEADERS and DATA one at a time. */
static void
h2_conn_flush(struct h2_conn *c)
{
	struct evbuffer *out;
	const uint8_t   *data;
	ssize_t          n;
	size_t           held = 0;
	int              direct;

	if (c->c_state == C_DEAD)
		return;
	out = bufferevent_get_output(c->c_bev);
	direct = h2_conn_direct(c);
	while (evbuffer_get_length(out) < H2_OUT_HIGH) {
		n = nghttp2_session_mem_send(c->c_ng, &data);
		if (n < 0) {
			h2_conn_fail(c, H2_ERR_PROTOCOL, "%s: HTTP/2: %s", c->c_s->s_target,
			    nghttp2_strerror((int)n));
			return;
		}
		if (n == 0)
			break;
		if (direct && evbuffer_get_length(out) == 0 &&
		    held + (size_t)n <= sizeof(h2_wbuf)) {
			memcpy(h2_wbuf + held, data, (size_t)n);
			held += (size_t)n;
			continue;
		}
		if (held > 0 && h2_conn_write(c, h2_wbuf, held, &direct) == -1)
			return;
		held = 0;
		if (h2_conn_write(c, data, (size_t)n, &direct) == -1)
			return;
	}
	if (held > 0 && h2_conn_write(c, h2_wbuf, held, &direct) == -1)
		return;
	if (c->c_sock_up && !nghttp2_session_want_read(c->c_ng) &&
	    !nghttp2_session_want_write(c->c_ng) && evbuffer_get_length(out) == 0)
		h2_conn_fail(c, H2_ERR_CLOSED, "%s: the HTTP/2 session ended", c->c_s->s_target);
}

/* A plain socket's bytes: one buffer for every connection (one thread; nghttp2 has copied
 * what it keeps when mem_recv returns). */
static uint8_t h2_rbuf[H2_READ_CHUNK];

static void h2_conn_eventcb(struct bufferevent *, short, void *);

/* Gives received bytes to nghttp2; -1 when they broke the protocol (the connection failed). */
static int
h2_conn_recv(struct h2_conn *c, const uint8_t *data, size_t len)
{
	ssize_t rv = nghttp2_session_mem_recv(c->c_ng, data, len);

	if (rv >= 0)
		return 0;
	h2_conn_fail(
	    c, H2_ERR_PROTOCOL, "%s: HTTP/2: %s", c->c_s->s_target, nghttp2_strerror((int)rv));
	return -1;
}

/* A plain socket is read here, not by its bufferevent: libevent 2.1 reads 4 KiB per read
 * event (EVBUFFER_MAX_READ) into a block of the heap, so a 100 KiB list answer cost 25 loop
 * turns, and each read a block taken and freed. Here what the socket holds is read in the
 * same turn, H2_READ_MAX at most, into h2_rbuf, and given to nghttp2 from there; a read
 * shorter than the buffer found the socket empty. The end of the stream or an error goes to
 * h2_conn_eventcb as the bufferevent would have said it. TLS reads go through OpenSSL's
 * records and are left to the bufferevent (h2_conn_readcb). */
static void
h2_conn_rawreadcb(evutil_socket_t fd, short what, void *arg)
{
	struct h2_conn    *c = arg;
	struct h2_session *s = c->c_s;
	size_t             total = 0;
	ssize_t            r;

	(void)what;
	c->c_last_read_ms = now_mono_ms();
	c->c_ping_out = 0;
	s->s_depth++;
	while (c->c_state != C_DEAD && total < H2_READ_MAX) {
		if ((r = read(fd, h2_rbuf, sizeof(h2_rbuf))) == -1 && errno == EINTR)
			continue;
		if (r == -1 && (errno == EAGAIN || errno == EWOULDBLOCK))
			break;
		if (r <= 0) {
			h2_conn_eventcb(c->c_bev,
			    BEV_EVENT_READING | (r == 0 ? BEV_EVENT_EOF : BEV_EVENT_ERROR), c);
			break;
		}
		total += (size_t)r;
		if (h2_conn_recv(c, h2_rbuf, (size_t)r) == -1)
			break;
		if ((size_t)r < sizeof(h2_rbuf))
			break;
	}
	h2_conn_flush(c);
	s->s_depth--;
}

/* TLS: what the bufferevent read and OpenSSL decrypted. */
static void
h2_conn_readcb(struct bufferevent *bev, void *arg)
{
	struct h2_conn    *c = arg;
	struct h2_session *s = c->c_s;
	struct evbuffer   *in = bufferevent_get_input(bev);
	size_t             len;

	c->c_last_read_ms = now_mono_ms();
	c->c_ping_out = 0;
	s->s_depth++;
	while (c->c_state != C_DEAD && (len = evbuffer_get_contiguous_space(in)) > 0) {
		if (h2_conn_recv(c, evbuffer_pullup(in, (ssize_t)len), len) == -1)
			break;
		evbuffer_drain(in, len);
	}
	h2_conn_flush(c);
	s->s_depth--;
}

/* Reading and writing start once the socket (and TLS) is up. */
static void
h2_conn_io_start(struct h2_conn *c)
{
	evutil_socket_t fd = bufferevent_getfd(c->c_bev);

	if (c->c_s->s_opts.transport == H2_TLS || fd < 0) {
		bufferevent_enable(c->c_bev, EV_READ | EV_WRITE);
		return;
	}
	if (c->c_rev == NULL &&
	    (c->c_rev = event_new(
	         c->c_s->s_base, fd, EV_READ | EV_PERSIST, h2_conn_rawreadcb, c)) == NULL)
		fatalx("%s: event_new failed", __func__);
	event_add(c->c_rev, NULL);
	bufferevent_enable(c->c_bev, EV_WRITE);
}

static void
h2_conn_writecb(struct bufferevent *bev, void *arg)
{
	(void)bev;
	h2_conn_flush(arg);
}

static void
h2_tls_error(struct h2_conn *c, char *buf, size_t len)
{
	SSL          *ssl = bufferevent_openssl_get_ssl(c->c_bev);
	unsigned long e;
	long          vr;

	buf[0] = '\0';
	if (ssl != NULL && (vr = SSL_get_verify_result(ssl)) != X509_V_OK) {
		snprintf(buf, len, "TLS: certificate verify failed: %s",
		    X509_verify_cert_error_string(vr));
		return;
	}
	while ((e = bufferevent_get_openssl_error(c->c_bev)) != 0) {
		/* libevent queues SSL_get_error's SSL_ERROR_SYSCALL as "error:00000005": the
		 * socket's error (or EOF) says more; the caller reports that. */
		if (e == SSL_ERROR_SYSCALL)
			continue;
		if (buf[0] == '\0') {
			snprintf(buf, len, "TLS: ");
			ERR_error_string_n(e, buf + 5, len - 5);
		}
	}
}

/* 1 for the errors of a TCP connect that failed (not a stale EAGAIN beside a TLS error). */
static int
h2_connect_errno(int e)
{
	return e == ECONNREFUSED || e == EHOSTUNREACH || e == ENETUNREACH || e == ETIMEDOUT ||
	    e == EADDRNOTAVAIL || e == ECONNRESET || e == ENOENT;
}

static void
h2_conn_eventcb(struct bufferevent *bev, short what, void *arg)
{
	struct h2_conn    *c = arg;
	struct h2_session *s = c->c_s;
	char               why[256];
	int                saved = EVUTIL_SOCKET_ERROR();

	if (what & BEV_EVENT_CONNECTED) {
		if (s->s_opts.transport == H2_TLS) {
			SSL                 *ssl = bufferevent_openssl_get_ssl(bev);
			const unsigned char *p = NULL;
			unsigned             plen = 0;

			SSL_get0_alpn_selected(ssl, &p, &plen);
			if (plen != 2 || memcmp(p, "h2", 2) != 0) {
				h2_conn_fail(c, H2_ERR_CONNECT,
				    "%s: the server did not negotiate HTTP/2 (ALPN h2)",
				    s->s_target);
				return;
			}
		}
		if (s->s_opts.transport != H2_UNIX) {
			int one = 1;

			setsockopt(
			    bufferevent_getfd(bev), IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
		}
		c->c_sock_up = 1;
		h2_conn_io_start(c);
		h2_conn_flush(c);
		return;
	}
	why[0] = '\0';
	/* The socket could not connect: say so (OpenSSL then only has "error:00000005"). */
	if (c->c_state == C_CONNECTING && h2_connect_errno(saved))
		snprintf(why, sizeof(why), "%s",
		    saved == ECONNREFUSED ? "connection refused"
		                          : evutil_socket_error_to_string(saved));
	if (why[0] == '\0' && s->s_opts.transport == H2_TLS)
		h2_tls_error(c, why, sizeof(why));
	if (why[0] == '\0') {
		if (what & BEV_EVENT_EOF)
			snprintf(why, sizeof(why), "connection closed by the server");
		else if (saved != 0)
			snprintf(why, sizeof(why), "%s", evutil_socket_error_to_string(saved));
		else
			snprintf(why, sizeof(why), "connection error");
	}
	if (c->c_state == C_CONNECTING)
		h2_conn_fail(c, H2_ERR_CONNECT, "%s: connect: %s", s->s_target, why);
	else
		h2_conn_fail(c, H2_ERR_CLOSED, "%s: %s", s->s_target, why);
}

static void
h2_conn_timercb(evutil_socket_t fd, short what, void *arg)
{
	struct h2_conn    *c = arg;
	struct h2_session *s = c->c_s;
	int64_t            now = now_mono_ms(), idle, iv = s->s_opts.ping_interval_ms;
	struct timeval     tv;

	(void)fd;
	(void)what;
	if (c->c_state == C_CONNECTING) {
		h2_conn_fail(c, H2_ERR_CONNECT, "%s: connect: no HTTP/2 answer within %lld ms",
		    s->s_target, (long long)s->s_opts.connect_timeout_ms);
		return;
	}
	if (c->c_state == C_DEAD || iv <= 0)
		return;
	if (c->c_ping_out) {
		h2_conn_fail(c, H2_ERR_TIMEOUT, "%s: no answer to PING within %lld ms", s->s_target,
		    (long long)s->s_opts.ping_timeout_ms);
		return;
	}
	idle = now - c->c_last_read_ms;
	if (idle >= iv) {
		nghttp2_submit_ping(c->c_ng, NGHTTP2_FLAG_NONE, NULL);
		c->c_ping_out = 1;
		h2_conn_flush(c);
		iv = s->s_opts.ping_timeout_ms;
	} else
		iv -= idle;
	tv = ms_to_tv(iv);
	if (c->c_state != C_DEAD)
		event_add(c->c_timer, &tv);
}

static int
h2_is_ip_literal(const char *h)
{
	struct in6_addr a6;
	struct in_addr  a4;

	return inet_pton(AF_INET, h, &a4) == 1 || inet_pton(AF_INET6, h, &a6) == 1;
}

/* Creates the bufferevent and starts connecting; returns 0, or -1 with why filled. */
static int
h2_conn_socket(struct h2_conn *c, char *why, size_t len)
{
	struct h2_session *s = c->c_s;
	struct h2_options *o = &s->s_opts;

	if (o->transport == H2_UNIX) {
		struct sockaddr_un sun;
		int                fd;

		memset(&sun, 0, sizeof(sun));
		sun.sun_family = AF_UNIX;
		snprintf(sun.sun_path, sizeof(sun.sun_path), "%s", o->path);
		fd = socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
		if (fd == -1) {
			snprintf(why, len, "socket: %s", strerror(errno));
			return -1;
		}
		if (connect(fd, (struct sockaddr *)&sun, sizeof(sun)) == -1) {
			snprintf(why, len, "connect: %s", strerror(errno));
			close(fd);
			return -1;
		}
		c->c_bev = bufferevent_socket_new(s->s_base, fd, BEV_OPT_CLOSE_ON_FREE);
		if (c->c_bev == NULL) {
			close(fd);
			snprintf(why, len, "bufferevent_socket_new failed");
			return -1;
		}
		c->c_sock_up = 1;
	} else {
		struct addrinfo hints, *res = NULL;
		int             rc;

		memset(&hints, 0, sizeof(hints));
		hints.ai_family = AF_UNSPEC;
		hints.ai_socktype = SOCK_STREAM;
		if ((rc = getaddrinfo(o->host, o->port, &hints, &res)) != 0) {
			snprintf(why, len, "resolve: %s", gai_strerror(rc));
			return -1;
		}
		if (o->transport == H2_TLS) {
			SSL        *ssl = SSL_new((SSL_CTX *)o->ssl_ctx);
			const char *name = o->tls_name ? o->tls_name : o->host;

			if (ssl == NULL) {
				freeaddrinfo(res);
				snprintf(why, len, "SSL_new failed");
				return -1;
			}
			SSL_set_alpn_protos(ssl, (const unsigned char *)"\x02h2", 3);
			if (name[0] != '\0') {
				X509_VERIFY_PARAM *vp = SSL_get0_param(ssl);

				if (h2_is_ip_literal(name))
					X509_VERIFY_PARAM_set1_ip_asc(vp, name);
				else {
					SSL_set_tlsext_host_name(ssl, name);
					X509_VERIFY_PARAM_set1_host(vp, name, 0);
				}
			}
			c->c_bev = bufferevent_openssl_socket_new(
			    s->s_base, -1, ssl, BUFFEREVENT_SSL_CONNECTING, BEV_OPT_CLOSE_ON_FREE);
			if (c->c_bev == NULL) {
				SSL_free(ssl);
				freeaddrinfo(res);
				snprintf(why, len, "bufferevent_openssl_socket_new failed");
				return -1;
			}
			bufferevent_openssl_set_allow_dirty_shutdown(c->c_bev, 1);
		} else
			c->c_bev = bufferevent_socket_new(s->s_base, -1, BEV_OPT_CLOSE_ON_FREE);
		if (c->c_bev == NULL) {
			freeaddrinfo(res);
			snprintf(why, len, "bufferevent_socket_new failed");
			return -1;
		}
		bufferevent_setcb(c->c_bev, h2_conn_readcb, h2_conn_writecb, h2_conn_eventcb, c);
		errno = 0;
		if (bufferevent_socket_connect(c->c_bev, res->ai_addr, (int)res->ai_addrlen) != 0) {
			snprintf(why, len, "connect: %s", errno ? strerror(errno) : "failed");
			freeaddrinfo(res);
			return -1;
		}
		freeaddrinfo(res);
	}
	bufferevent_setcb(c->c_bev, h2_conn_readcb, h2_conn_writecb, h2_conn_eventcb, c);
	bufferevent_setwatermark(c->c_bev, EV_WRITE, H2_OUT_LOW, 0);
	/* big list responses: fewer, larger reads than libevent's 16 KiB default */
	bufferevent_set_max_single_read(c->c_bev, H2_READ_MAX);
	if (c->c_sock_up)
		h2_conn_io_start(c);
	return 0;
}

/* Starts a new current connection. Failure is reported through h2_conn_fail. */
static void
h2_conn_start(struct h2_session *s)
{
	struct h2_conn        *c = xcalloc(1, sizeof(*c));
	nghttp2_settings_entry iv[3];
	struct timeval         tv;
	char                   why[256];

	c->c_s = s;
	c->c_serial = ++s->s_serial;
	c->c_state = C_CONNECTING;
	c->c_last_read_ms = now_mono_ms();
	TAILQ_INIT(&c->c_streams);
	TAILQ_INSERT_TAIL(&s->s_conns, c, c_entry);
	s->s_cur = c;
	c->c_timer = evtimer_new(s->s_base, h2_conn_timercb, c);
	if (c->c_timer == NULL)
		fatalx("%s: evtimer_new failed", __func__);
	if (nghttp2_session_client_new2(&c->c_ng, s->s_ngcbs, c, s->s_ngopt) != 0)
		fatalx("%s: nghttp2_session_client_new2 failed", __func__);
	iv[0].settings_id = NGHTTP2_SETTINGS_ENABLE_PUSH;
	iv[0].value = 0;
	iv[1].settings_id = NGHTTP2_SETTINGS_INITIAL_WINDOW_SIZE;
	iv[1].value = s->s_opts.stream_window;
	iv[2].settings_id = NGHTTP2_SETTINGS_MAX_HEADER_LIST_SIZE;
	iv[2].value = (uint32_t)s->s_opts.max_header_bytes;
	nghttp2_submit_settings(c->c_ng, NGHTTP2_FLAG_NONE, iv, nitems(iv));
	if (s->s_opts.conn_window > 65535)
		nghttp2_session_set_local_window_size(
		    c->c_ng, NGHTTP2_FLAG_NONE, 0, (int32_t)s->s_opts.conn_window);
	tv = ms_to_tv(s->s_opts.connect_timeout_ms);
	event_add(c->c_timer, &tv);
	if (h2_conn_socket(c, why, sizeof(why)) == -1) {
		h2_conn_fail(c, H2_ERR_CONNECT, "%s: %s", s->s_target, why);
		return;
	}
	h2_conn_flush(c); /* preface and SETTINGS at once */
}

/* ---- session ---- */

static void
h2_session_submit(struct h2_session *s, struct h2_conn *c)
{
	struct h2_stream     *st;
	nghttp2_data_provider prd;
	uint32_t              max;
	int32_t               id;

	max = nghttp2_session_get_remote_settings(c->c_ng, NGHTTP2_SETTINGS_MAX_CONCURRENT_STREAMS);
	while (
	    c->c_state == C_OPEN && c->c_nactive < max && (st = TAILQ_FIRST(&s->s_queue)) != NULL) {
		TAILQ_REMOVE(&s->s_queue, st, st_entry);
		s->s_nqueued--;
		prd.source.ptr = st;
		prd.read_callback = h2_body_read_cb;
		id = nghttp2_submit_request(
		    c->c_ng, NULL, st->st_nv, st->st_nnv, st->st_body != NULL ? &prd : NULL, st);
		if (id < 0) {
			if (id == NGHTTP2_ERR_STREAM_ID_NOT_AVAILABLE) {
				/* ids used up: drain this connection, continue on a new one */
				TAILQ_INSERT_HEAD(&s->s_queue, st, st_entry);
				s->s_nqueued++;
				c->c_state = C_DRAINING;
				s->s_cur = NULL;
				h2_session_wake(s);
				return;
			}
			h2_stream_finish(st, H2_ERR_PROTOCOL, 0, nghttp2_strerror(id));
			continue;
		}
		st->st_id = id;
		st->st_state = ST_OPEN;
		st->st_conn = c;
		TAILQ_INSERT_TAIL(&c->c_streams, st, st_entry);
		c->c_nactive++;
	}
}

static void
h2_session_free_now(struct h2_session *s)
{
	struct h2_stream *st;
	struct h2_conn   *c;
	struct h2_sev    *e;

	while ((c = TAILQ_FIRST(&s->s_conns)) != NULL) {
		TAILQ_REMOVE(&s->s_conns, c, c_entry);
		h2_conn_free(c);
	}
	while ((st = TAILQ_FIRST(&s->s_queue)) != NULL) {
		TAILQ_REMOVE(&s->s_queue, st, st_entry);
		h2_stream_free(st);
	}
	while ((st = TAILQ_FIRST(&s->s_done)) != NULL) {
		TAILQ_REMOVE(&s->s_done, st, st_entry);
		h2_stream_free(st);
	}
	while ((e = TAILQ_FIRST(&s->s_events)) != NULL) {
		TAILQ_REMOVE(&s->s_events, e, e_entry);
		free(e->e_reason);
		free(e);
	}
	event_free(s->s_work);
	event_free(s->s_free);
	nghttp2_session_callbacks_del(s->s_ngcbs);
	nghttp2_option_del(s->s_ngopt);
	free((char *)s->s_opts.path);
	free((char *)s->s_opts.host);
	free((char *)s->s_opts.port);
	free((char *)s->s_opts.tls_name);
	free(s->s_target);
	free(s);
}

static void
h2_session_freecb(evutil_socket_t fd, short what, void *arg)
{
	(void)fd;
	(void)what;
	h2_session_free_now(arg);
}

static void
h2_session_workcb(evutil_socket_t fd, short what, void *arg)
{
	struct h2_session *s = arg;
	struct h2_conn    *c, *cn;
	struct h2_stream  *st;
	struct h2_sev     *e;

	(void)fd;
	(void)what;
	if (s->s_dead)
		return;
	s->s_depth++;
	/* tear down dead connections and idle draining ones */
	TAILQ_FOREACH_SAFE(c, &s->s_conns, c_entry, cn)
	{
		if (c->c_state == C_DRAINING && c->c_nactive == 0)
			h2_conn_fail(c, H2_ERR_CLOSED, "%s: drained", s->s_target);
		if (c->c_state == C_DEAD) {
			TAILQ_REMOVE(&s->s_conns, c, c_entry);
			h2_conn_free(c);
		}
	}
	/* session events, then completions, in order */
	while (!s->s_dead && (e = TAILQ_FIRST(&s->s_events)) != NULL) {
		TAILQ_REMOVE(&s->s_events, e, e_entry);
		if (s->s_cb != NULL)
			s->s_cb(s, e->e_ev, e->e_reason, s->s_arg);
		free(e->e_reason);
		free(e);
	}
	while (!s->s_dead && (st = TAILQ_FIRST(&s->s_done)) != NULL) {
		TAILQ_REMOVE(&s->s_done, st, st_entry);
		if (!st->st_cancelled && st->st_cbs.on_close != NULL)
			st->st_cbs.on_close(st->st_arg, st->st_err, st->st_rst,
			    st->st_detail != NULL ? st->st_detail : "ok");
		h2_stream_free(st);
	}
	if (!s->s_dead) {
		if (!TAILQ_EMPTY(&s->s_queue) && s->s_cur == NULL)
			h2_conn_start(s);
		if (s->s_cur != NULL)
			h2_session_submit(s, s->s_cur);
		TAILQ_FOREACH(c, &s->s_conns, c_entry)
		if (c->c_state != C_DEAD && c->c_bev != NULL)
			h2_conn_flush(c);
	}
	s->s_depth--;
}

struct h2_session *
h2_session_new(struct event_base *base, const struct h2_options *opts, h2_event_cb cb, void *arg)
{
	struct h2_session *s;
	char               why[512];

	switch (opts->transport) {
	case H2_UNIX:
		if (opts->path == NULL || opts->path[0] == '\0' ||
		    strlen(opts->path) >= sizeof(((struct sockaddr_un *)0)->sun_path)) {
			log_error("%s: bad unix socket path", __func__);
			return NULL;
		}
		break;
	case H2_TLS:
		if (opts->ssl_ctx == NULL) {
			log_error("%s: TLS without an SSL_CTX", __func__);
			return NULL;
		}
		/* Loaded by whoever made the context, unless that was not this code (a test). */
		if (ossl_load(why, sizeof(why)) == -1) {
			log_error("%s: %s", __func__, why);
			return NULL;
		}
		/* FALLTHROUGH */
	case H2_TCP:
		if (opts->host == NULL || opts->port == NULL) {
			log_error("%s: host and port required", __func__);
			return NULL;
		}
		break;
	default:
		log_error("%s: bad transport %d", __func__, opts->transport);
		return NULL;
	}
	{
		/* a peer closing its end must not kill the daemon: writes then fail with EPIPE */
		struct sigaction sa;

		if (sigaction(SIGPIPE, NULL, &sa) == 0 && sa.sa_handler == SIG_DFL)
			signal(SIGPIPE, SIG_IGN);
	}
	s = xcalloc(1, sizeof(*s));
	s->s_base = base;
	s->s_opts = *opts;
	s->s_opts.path = xstrdup(opts->path);
	s->s_opts.host = xstrdup(opts->host);
	s->s_opts.port = xstrdup(opts->port);
	s->s_opts.tls_name = xstrdup(opts->tls_name);
	if (s->s_opts.connect_timeout_ms <= 0)
		s->s_opts.connect_timeout_ms = 10000;
	if (s->s_opts.ping_timeout_ms <= 0)
		s->s_opts.ping_timeout_ms = 20000;
	if (s->s_opts.stream_window < 65535)
		s->s_opts.stream_window = 65535;
	if (s->s_opts.stream_window > (1u << 31) - 1)
		s->s_opts.stream_window = (1u << 31) - 1;
	if (s->s_opts.conn_window > (1u << 31) - 1)
		s->s_opts.conn_window = (1u << 31) - 1;
	if (s->s_opts.max_header_bytes == 0)
		s->s_opts.max_header_bytes = 64 * 1024;
	if (s->s_opts.max_queued == 0)
		s->s_opts.max_queued = 4096;
	if (opts->transport == H2_UNIX)
		s->s_target = xsprintf("unix://%s", opts->path);
	else
		s->s_target = xsprintf("%s://%s:%s", opts->transport == H2_TLS ? "https" : "h2c",
		    opts->host, opts->port);
	s->s_cb = cb;
	s->s_arg = arg;
	s->s_ngcbs = h2_make_callbacks();
	if (nghttp2_option_new(&s->s_ngopt) != 0)
		fatalx("%s: out of memory", __func__);
	nghttp2_option_set_peer_max_concurrent_streams(s->s_ngopt, 100);
	TAILQ_INIT(&s->s_conns);
	TAILQ_INIT(&s->s_queue);
	TAILQ_INIT(&s->s_done);
	TAILQ_INIT(&s->s_events);
	s->s_work = event_new(base, -1, 0, h2_session_workcb, s);
	s->s_free = event_new(base, -1, 0, h2_session_freecb, s);
	if (s->s_work == NULL || s->s_free == NULL)
		fatalx("%s: event_new failed", __func__);
	return s;
}

void
h2_session_free(struct h2_session *s)
{
	if (s == NULL || s->s_dead)
		return;
	if (s->s_depth > 0) {
		s->s_dead = 1;
		event_active(s->s_free, EV_TIMEOUT, 0);
		return;
	}
	h2_session_free_now(s);
}

int
h2_session_connect(struct h2_session *s)
{
	if (s->s_cur == NULL && !s->s_dead)
		h2_conn_start(s);
	return 0;
}

struct event_base *
h2_session_base(const struct h2_session *s)
{
	return s->s_base;
}

int
h2_session_connected(const struct h2_session *s)
{
	return s->s_cur != NULL && s->s_cur->c_state == C_OPEN;
}

void
h2_session_drop(struct h2_session *s, const char *reason)
{
	if (s->s_cur != NULL)
		h2_conn_fail(s->s_cur, H2_ERR_CLOSED, "%s: %s", s->s_target, reason);
}

void
h2_session_stats(const struct h2_session *s, struct h2_session_stats *out)
{
	const struct h2_conn *c;

	*out = s->s_stats;
	out->active = 0;
	TAILQ_FOREACH(c, &s->s_conns, c_entry)
	out->active += c->c_nactive;
	out->queued = s->s_nqueued;
}

struct h2_stream *
h2_request(struct h2_session *s, const struct h2_header *h, size_t n, const uint8_t *body,
    size_t body_len, const struct h2_stream_cbs *cbs, void *arg)
{
	struct h2_stream *st = xcalloc(1, sizeof(*st));
	size_t            i, total = 0, off = 0;
	char             *buf;

	st->st_s = s;
	st->st_cbs = *cbs;
	st->st_arg = arg;
	for (i = 0; i < n; i++)
		total += strlen(h[i].name) + strlen(h[i].value) + 2;
	/* The fields and, after them, their names and values: one block. */
	st->st_nv = xmalloc(n * sizeof(*st->st_nv) + total + 1);
	buf = (char *)(st->st_nv + n);
	st->st_nnv = n;
	for (i = 0; i < n; i++) {
		size_t nl = strlen(h[i].name), vl = strlen(h[i].value);

		memcpy(buf + off, h[i].name, nl + 1);
		st->st_nv[i].name = (uint8_t *)buf + off;
		st->st_nv[i].namelen = nl;
		off += nl + 1;
		memcpy(buf + off, h[i].value, vl + 1);
		st->st_nv[i].value = (uint8_t *)buf + off;
		st->st_nv[i].valuelen = vl;
		off += vl + 1;
		st->st_nv[i].flags = NGHTTP2_NV_FLAG_NONE;
	}
	if (body != NULL) {
		st->st_body = xmalloc(body_len ? body_len : 1);
		if (body_len)
			memcpy(st->st_body, body, body_len);
		st->st_body_len = body_len;
	}
	if (s->s_nqueued >= s->s_opts.max_queued) {
		char msg[128];

		snprintf(msg, sizeof(msg), "%s: more than %u requests queued", s->s_target,
		    s->s_opts.max_queued);
		h2_stream_finish(st, H2_ERR_OVERLOAD, 0, msg);
		return st;
	}
	st->st_state = ST_QUEUED;
	TAILQ_INSERT_TAIL(&s->s_queue, st, st_entry);
	s->s_nqueued++;
	h2_session_wake(s);
	return st;
}

void
h2_stream_cancel(struct h2_stream *st)
{
	struct h2_session *s;

	if (st == NULL || st->st_cancelled)
		return;
	s = st->st_s;
	st->st_cancelled = 1;
	switch (st->st_state) {
	case ST_QUEUED:
		TAILQ_REMOVE(&s->s_queue, st, st_entry);
		s->s_nqueued--;
		h2_stream_free(st);
		break;
	case ST_OPEN:
		if (st->st_local_err == H2_OK)
			nghttp2_submit_rst_stream(
			    st->st_conn->c_ng, NGHTTP2_FLAG_NONE, st->st_id, NGHTTP2_CANCEL);
		h2_session_wake(s);
		break;
	case ST_DONE:
		break; /* freed by the work event, without a callback */
	}
}
