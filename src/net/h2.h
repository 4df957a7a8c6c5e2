/* h2.h — an HTTP/2 client (nghttp2) on the daemon's libevent loop.
 *
 * A session is one logical client of one server. It owns at most one current connection
 * (unix socket or TCP with h2c prior knowledge, or TCP+TLS with ALPN "h2") plus connections
 * that are draining after a GOAWAY. Requests are queued and started as the server's
 * SETTINGS_MAX_CONCURRENT_STREAMS allows; a request is copied (headers and body), so it can
 * be retried on a new connection when the server refused it (GOAWAY above its last stream id,
 * RST_STREAM REFUSED_STREAM). A connection is made on demand (first request) or with
 * h2_session_connect.
 *
 * Callbacks run on the loop. Response headers and data are delivered as they arrive; the
 * end of a stream (on_close) is always delivered from a later loop event, never from inside
 * h2_request. Nothing is freed inside its own callback: a session freed from a callback is
 * released on a later loop turn; a cancelled stream is released when nghttp2 is done with it.
 */
#ifndef KLET_H2_H
#define KLET_H2_H

#include <stddef.h>
#include <stdint.h>

struct event_base;
struct ssl_ctx_st;
struct h2_session;
struct h2_stream;

/* A header field; NUL-terminated strings, names lower case. */
struct h2_header {
	const char *name;
	const char *value;
};

enum h2_transport {
	H2_UNIX = 0, /* h2c prior knowledge on a unix socket: path */
	H2_TCP,      /* h2c prior knowledge on TCP: host, port */
	H2_TLS,      /* TLS with ALPN h2 on TCP: host, port, ssl_ctx */
};

/* Why a stream ended (on_close). */
enum h2_error {
	H2_OK = 0,       /* the server ended the stream normally (END_STREAM) */
	H2_ERR_CONNECT,  /* could not connect (socket missing, refused, TLS, no ALPN h2, timeout) */
	H2_ERR_CLOSED,   /* the connection was lost before the stream ended */
	H2_ERR_RESET,    /* the server reset the stream (RST_STREAM; see rst_code) */
	H2_ERR_REFUSED,  /* refused by the server (GOAWAY / REFUSED_STREAM) too many times */
	H2_ERR_GOAWAY,   /* the server went away after accepting the stream, before it ended */
	H2_ERR_PROTOCOL, /* the server broke the protocol (bad headers, too many headers) */
	H2_ERR_TIMEOUT,  /* the peer stopped answering (PING timeout) */
	H2_ERR_ABORTED,  /* a callback asked to abort the stream (returned -1) */
	H2_ERR_OVERLOAD, /* too many queued requests */
};

enum h2_event {
	H2_EV_CONNECTED = 0, /* the current connection is up (server SETTINGS received) */
	H2_EV_LOST,          /* connecting failed, or the current connection died */
	H2_EV_GOAWAY,        /* the server sent GOAWAY: it drains; new requests reconnect */
};

struct h2_options {
	enum h2_transport  transport;
	const char        *path;    /* H2_UNIX */
	const char        *host;    /* H2_TCP, H2_TLS (name or address; names resolve blocking) */
	const char        *port;    /* H2_TCP, H2_TLS */
	struct ssl_ctx_st *ssl_ctx; /* H2_TLS: the caller's; must outlive the session. Its verify
	                             * mode applies; the host is checked as well when verify_name
	                             * is set or defaulted. */
	const char *tls_name;       /* SNI and name checked (default: host); "" disables both */
	int64_t     connect_timeout_ms; /* until the server's SETTINGS (default 10 s) */
	int64_t     ping_interval_ms;   /* PING after this long without reading (0: never) */
	int64_t     ping_timeout_ms;  /* the connection is dead without an answer (default 20 s) */
	uint32_t    stream_window;    /* receive window per stream (default 4 MiB) */
	uint32_t    conn_window;      /* receive window per connection (default 16 MiB) */
	size_t      max_header_bytes; /* per response header block (default 64 KiB) */
	unsigned    max_queued;       /* requests waiting for a stream slot (default 4096) */
	unsigned    max_retries;      /* per request after refusals (default 3) */
};

/* Response callbacks, all optional. arg is the one given to h2_request. */
struct h2_stream_cbs {
	/* One header block: the response headers (:status among them), or the trailers
	 * (trailers = 1). end_stream: nothing follows. Return 0, or -1 to abort the stream. */
	int (*on_headers)(
	    void *arg, const struct h2_header *h, size_t n, int trailers, int end_stream);
	/* A chunk of the response body. Return 0, or -1 to abort the stream. */
	int (*on_data)(void *arg, const uint8_t *data, size_t len);
	/* The stream ended: err is H2_OK or why not; rst_code the HTTP/2 error code for
	 * H2_ERR_RESET / H2_ERR_GOAWAY; detail a message (never NULL, valid during the call).
	 * Runs exactly once unless the stream was cancelled or the session freed. */
	void (*on_close)(void *arg, enum h2_error err, uint32_t rst_code, const char *detail);
};

typedef void (*h2_event_cb)(struct h2_session *, enum h2_event, const char *reason, void *arg);

/* Fills opts with the defaults (zero elsewhere). */
void h2_options_init(struct h2_options *opts);
/* Creates a session (does not connect). opts is copied (strings too; not ssl_ctx). event_cb
 * may be NULL. Returns NULL (and logs) when opts are invalid. Sets SIGPIPE to SIG_IGN when it
 * still has its default action (a closed peer must give EPIPE, not kill the process). */
struct h2_session *h2_session_new(
    struct event_base *, const struct h2_options *opts, h2_event_cb event_cb, void *arg);
/* Pending streams are dropped (their callbacks never run), connections closed. Safe from a
 * callback (released later). NULL is a no-op. */
void h2_session_free(struct h2_session *);
/* Starts a connection if there is none. Returns 0. */
int h2_session_connect(struct h2_session *);
/* The event_base the session runs on. */
struct event_base *h2_session_base(const struct h2_session *);
/* 1 when the current connection is up. */
int h2_session_connected(const struct h2_session *);
/* Closes the current connection (its streams fail with H2_ERR_CLOSED, reason given), as if
 * it had been lost; the next request reconnects. */
void h2_session_drop(struct h2_session *, const char *reason);
/* Counters for inspection. */
struct h2_session_stats {
	unsigned active;   /* streams open on connections */
	unsigned queued;   /* waiting for a connection or a stream slot */
	uint64_t connects; /* connections that came up */
	uint64_t goaways;  /* GOAWAY frames received */
	uint64_t retries;  /* requests retried on another connection */
};
void h2_session_stats(const struct h2_session *, struct h2_session_stats *);

/* Queues a request: n headers (pseudo-headers first: :method, :scheme, :path, :authority)
 * and an optional body; both are copied. Returns the stream, owned by the session, valid
 * until on_close has returned or h2_stream_cancel. Never NULL: failures arrive via on_close. */
struct h2_stream *h2_request(struct h2_session *, const struct h2_header *hdrs, size_t n,
    const uint8_t *body, size_t body_len, const struct h2_stream_cbs *cbs, void *arg);
/* Cancels the stream (RST_STREAM CANCEL if it started); no callback runs for it afterwards.
 * Safe from any callback, including the stream's own. NULL is a no-op. */
void h2_stream_cancel(struct h2_stream *);

/* The name of an h2_error ("connection lost"...). */
const char *h2_strerror(enum h2_error);

#endif
