/* api.h — the Kubernetes API client: REST calls and streaming watches over ONE HTTP/2+TLS
 * connection (h2.h), with the credentials of a kubeconfig.
 *
 * Every call is asynchronous; its callback runs on the loop, never from inside the call that
 * started it. A request that could not reach the server (connecting failed, refused, the
 * client backing off) is held and sent when a connection is up again, until its timeout;
 * a request that reached the server and lost its connection fails with status 0. After a
 * lost connection the client waits before reconnecting: 0.8 s doubling to 30 s, with
 * jitter, reset once a connection is up. A PING after ping_interval_ms without traffic,
 * unanswered for ping_timeout_ms, declares the connection dead. On GOAWAY the old connection
 * drains (its streams finish) while new requests go to a new one.
 */
#ifndef KLET_API_H
#define KLET_API_H

#include <stddef.h>
#include <stdint.h>

struct event_base;
struct kubeconfig;
struct api;
struct api_call;

/* One object as the server sends it: its request limit (3 MiB) plus what it adds (metadata,
 * managedFields). A watch event is one object in an envelope of less than 4 KiB. */
#define API_MAX_OBJECT (4 * 1024 * 1024)
#define API_MAX_EVENT  (API_MAX_OBJECT + 4096)
#define API_MAX_LIST   (64 * 1024 * 1024) /* one page of a list */

struct api_options {
	const char *user_agent;         /* NULL: "klet/VERSION" */
	int64_t     ping_interval_ms;   /* 0: 15 s */
	int64_t     ping_timeout_ms;    /* 0: 15 s */
	int64_t     backoff_min_ms;     /* 0: 800 ms */
	int64_t     backoff_max_ms;     /* 0: 30 s */
	int64_t     request_timeout_ms; /* 0: 60 s (held + in flight) */
	int64_t     connect_timeout_ms; /* 0: 10 s */
};

/* What a call got. Valid only during the callback. */
struct api_response {
	int         status; /* HTTP status; 0 when no response arrived (see error) */
	const char *body;   /* NUL-terminated; "" when none */
	size_t      len;
	int64_t     retry_after_s; /* Retry-After in seconds, -1 when absent */
	const char *reason;        /* a Status object's reason ("NotFound", "Conflict"...); "" */
	const char *message;       /* the Status message, or the transport error; "" when ok */
};

typedef void (*api_done_cb)(const struct api_response *, void *arg);

/* Watch streams: on_line gets each newline-delimited JSON object (not NUL-terminated, len
 * bytes, at most API_MAX_EVENT); return 0, or -1 to stop the stream (on_end is not called
 * then). A longer line is skipped without ending the stream: on_skip (may be NULL) gets its
 * first head_len bytes (up to API_WATCH_SKIP_HEAD) and its whole length. on_end runs once
 * when the stream ends: r->status is 200 for a stream that ended normally (server timeout,
 * drain), another status for a refused watch (with its body), 0 for a transport failure. */
#define API_WATCH_SKIP_HEAD (64 * 1024)
struct api_watch_cbs {
	int (*on_line)(const char *line, size_t len, void *arg);
	void (*on_end)(const struct api_response *r, void *arg);
	void (*on_skip)(const char *head, size_t head_len, size_t len, void *arg);
};

/* Returns a client (connects on the first call), or NULL with the reason in err (a TLS
 * context that cannot be built). kc is copied where needed; opts may be NULL. */
struct api *api_new(struct event_base *, const struct kubeconfig *kc,
    const struct api_options *opts, char *err, size_t errlen);
/* Cancels every call (no callback runs) and closes the connection. NULL is a no-op. Must not
 * be called from inside one of this client's callbacks. */
void api_free(struct api *);

/* Starts a request. method: "GET", "POST", "PUT", "PATCH", "DELETE". path includes the query
 * ("/api/v1/pods?limit=100"). content_type may be NULL (no body: body NULL). Responses
 * larger than max_body (0: API_MAX_OBJECT) fail with status 0. The call is owned by the
 * client until its callback returns; api_call_cancel before that stops it. Never NULL. */
struct api_call *api_request(struct api *, const char *method, const char *path,
    const char *content_type, const char *body, size_t body_len, size_t max_body, api_done_cb cb,
    void *arg);
/* Starts a watch (GET path, which must carry watch=true). Never NULL. */
struct api_call *api_watch(
    struct api *, const char *path, const struct api_watch_cbs *cbs, void *arg);
/* Cancels a call; its callbacks never run afterwards. Safe from any callback. NULL no-op. */
void api_call_cancel(struct api_call *);

/* 1 while a connection to the server is up. */
int api_connected(const struct api *);
/* Loads a new client certificate and key (one PEM file holding both) for the connections
 * made from now on, then drops the current one so that the next request uses it. 0, or -1
 * (logged) with the old certificate kept. */
int api_reload_client_cert(struct api *, const char *pem_path);
/* Drops the current connection (tests, or after a fatal stream error). */
void api_drop(struct api *, const char *reason);

struct api_stats {
	uint64_t requests;        /* calls started */
	uint64_t responses;       /* calls that got a response */
	uint64_t failures;        /* calls that ended with status 0 */
	uint64_t bytes_sent;      /* request bodies + approximate header bytes */
	uint64_t bytes_received;  /* response bodies */
	uint64_t connects;        /* connections that came up */
	uint64_t reconnect_waits; /* times the client backed off before reconnecting */
	unsigned in_flight;       /* calls started and not yet ended (watches included) */
	unsigned held;            /* waiting for a connection */
};
void api_get_stats(const struct api *, struct api_stats *);

/* URL helpers. api_escape returns s percent-encoded for a query value (caller frees). */
char *api_escape(const char *s);
/* A DeleteOptions body: {"apiVersion":"v1","kind":"DeleteOptions","gracePeriodSeconds":G,
 * "preconditions":{"uid":UID}} (uid may be NULL; grace < 0: omitted). Caller frees. */
char *api_delete_options(int64_t grace, const char *uid);

#endif
