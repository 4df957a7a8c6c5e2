/* http1.h — a small asynchronous HTTP/1.1 GET client on the loop, for lifecycle hooks and
 * probes: non-blocking connect to an IP literal, one request, a bounded response read,
 * an overall timeout; HTTPS through OpenSSL without certificate verification (as the
 * kubelet's probes and hooks do). One request per connection ("Connection: close").
 * The program must ignore SIGPIPE (kletd's loop does).
 */
#ifndef KLET_HTTP1_H
#define KLET_HTTP1_H

#include <stddef.h>
#include <stdint.h>

struct event_base;
struct http1_req;

#define HTTP1_DEFAULT_MAX_BODY (10 * 1024) /* the kubelet reads at most 10 KiB of a body */

struct http1_header {
	const char *name;
	const char *value;
};

/* The outcome. error is NULL when a complete status line and headers arrived (any status
 * code); otherwise it says why ("connect: Connection refused", "timeout after 1000 ms",
 * "malformed response"). body holds at most max_body bytes (truncated is then 1).
 * Everything is valid only during the callback. */
struct http1_result {
	const char *error;
	int         status; /* 0 when error */
	const char *reason; /* reason phrase, "" when none */
	const char *body;
	size_t      body_len;
	int         truncated;
	const char *location; /* Location header or NULL */
};

typedef void (*http1_cb)(const struct http1_result *, void *arg);

/* Starts GET scheme://host:port/path. host must be an IPv4 or IPv6 literal or "localhost"
 * (no DNS on the loop); scheme is "HTTP" or "HTTPS" (case-insensitive; NULL: HTTP). The
 * Host header is host:port unless headers give one; a User-Agent "klet/VERSION" is sent
 * unless given. timeout_ms > 0 covers everything; max_body 0 means HTTP1_DEFAULT_MAX_BODY.
 * The callback runs exactly once, on a later loop turn (never inside http1_get), unless
 * http1_cancel comes first. Returns the request handle, valid until its callback returned.
 * Never NULL: every failure (bad host, socket) is reported through the callback. */
struct http1_req *http1_get(struct event_base *, const char *host, int port, const char *path,
    const struct http1_header *headers, size_t nheaders, const char *scheme, int64_t timeout_ms,
    size_t max_body, http1_cb cb, void *arg);
/* Cancels a request before its callback ran: the callback never runs, everything is
 * freed. NULL is a no-op. */
void http1_cancel(struct http1_req *);

/* The response parser alone, for the fuzz target (tests/fuzz/fuzz_http1.c): feeds data as
 * if it arrived from the connection in pieces of cuts[0], cuts[1]... bytes (the rest last),
 * then the end of the stream. cb runs exactly once, inside this call, as for http1_get. */
void http1_parse_response(const char *data, size_t len, const size_t *cuts, size_t ncuts,
    size_t max_body, http1_cb cb, void *arg);

#endif
