/* grpc_check.c — the grpc probe: grpc.health.v1.Health/Check over h2c (prior knowledge)
 * to the pod IP, through the project's HTTP/2 layer. The two tiny messages are encoded by
 * hand: HealthCheckRequest { string service = 1; } and HealthCheckResponse { enum status
 * = 1; } with SERVING = 1. */
#include <event2/event.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "net/grpc.h"
#include "net/h2.h"
#include "prober/grpc_check.h"
#include "core/util.h"

#define PR_GRPC_MAX_RESP 1024
#define PR_GRPC_SERVING  1

struct pr_grpc {
	struct h2_session *g_sess;
	struct h2_stream  *g_stream;
	struct event      *g_timer;
	int                g_status; /* grpc-status, -1 none */
	char              *g_message;
	uint8_t            g_buf[PR_GRPC_MAX_RESP];
	size_t             g_len;
	int                g_overflow;
	pr_grpc_done_fn    g_done;
	void              *g_arg;
	char               g_target[300];
};

/* Reads a varint at *p (< end). Returns 0, or -1 when truncated or too long. */
static int
pr_grpc_varint(const uint8_t **p, const uint8_t *end, uint64_t *v)
{
	int shift = 0;

	*v = 0;
	while (*p < end && shift < 64) {
		uint8_t b = *(*p)++;

		*v |= (uint64_t)(b & 0x7f) << shift;
		if (!(b & 0x80))
			return 0;
		shift += 7;
	}
	return -1;
}

int
pr_grpc_health_status(const uint8_t *msg, size_t len)
{
	const uint8_t *p = msg, *end = msg + len;
	uint64_t       key, v;
	int            status = 0;

	while (p < end) {
		if (pr_grpc_varint(&p, end, &key) == -1)
			return -1;
		switch (key & 7) {
		case 0:
			if (pr_grpc_varint(&p, end, &v) == -1)
				return -1;
			if ((key >> 3) == 1)
				status = (int)v;
			break;
		case 1:
			if ((size_t)(end - p) < 8)
				return -1;
			p += 8;
			break;
		case 2:
			if (pr_grpc_varint(&p, end, &v) == -1 || v > (uint64_t)(end - p))
				return -1;
			p += v;
			break;
		case 5:
			if ((size_t)(end - p) < 4)
				return -1;
			p += 4;
			break;
		default:
			return -1;
		}
	}
	return status;
}

size_t
pr_grpc_health_request(const char *service, uint8_t *buf, size_t len)
{
	size_t  n = strlen(service), i = 5, vlen;
	uint8_t tmp[10];
	size_t  t = 0, v;

	if (n > 0) {
		v = n;
		do {
			tmp[t++] = (uint8_t)((v & 0x7f) | (v > 0x7f ? 0x80 : 0));
			v >>= 7;
		} while (v > 0);
	}
	vlen = n > 0 ? 1 + t + n : 0;
	if (vlen + 5 > len)
		return 0;
	grpc_frame_header(buf, (uint32_t)vlen);
	if (n > 0) {
		buf[i++] = 0x0a;
		memcpy(buf + i, tmp, t);
		i += t;
		memcpy(buf + i, service, n);
		i += n;
	}
	return i;
}

static void
pr_grpc_finish(struct pr_grpc *g, int outcome, const char *msg)
{
	pr_grpc_done_fn done = g->g_done;
	void           *arg = g->g_arg;
	char            buf[600];

	snprintf(buf, sizeof(buf), "%s", msg);
	g->g_done = NULL;
	pr_grpc_cancel(g);
	done(outcome, buf, arg);
}

static int
pr_grpc_headers(void *arg, const struct h2_header *h, size_t n, int trailers, int end_stream)
{
	struct pr_grpc *g = arg;
	size_t          i;

	(void)trailers;
	(void)end_stream;
	for (i = 0; i < n; i++) {
		if (strcmp(h[i].name, "grpc-status") == 0)
			g->g_status = grpc_parse_status(h[i].value);
		else if (strcmp(h[i].name, "grpc-message") == 0) {
			free(g->g_message);
			g->g_message = grpc_percent_decode(h[i].value);
		}
	}
	return 0;
}

static int
pr_grpc_data(void *arg, const uint8_t *data, size_t len)
{
	struct pr_grpc *g = arg;

	if (len > sizeof(g->g_buf) - g->g_len) {
		g->g_overflow = 1;
		return -1;
	}
	memcpy(g->g_buf + g->g_len, data, len);
	g->g_len += len;
	return 0;
}

static void
pr_grpc_close(void *arg, enum h2_error err, uint32_t rst, const char *detail)
{
	struct pr_grpc *g = arg;
	const uint8_t  *msg;
	size_t          mlen;
	const char     *ferr;
	char            buf[512];
	int             st;

	(void)rst;
	g->g_stream = NULL;
	if (g->g_overflow) {
		pr_grpc_finish(g, 0, "health response too large");
		return;
	}
	if (err != H2_OK) {
		snprintf(buf, sizeof(buf), "failed to connect service \"%s\" within %s: %s",
		    g->g_target, "timeout", detail);
		pr_grpc_finish(g, 0, buf);
		return;
	}
	if (g->g_status != GRPC_OK) {
		snprintf(buf, sizeof(buf), "health rpc failed: %s: %s",
		    grpc_code_name(g->g_status < 0 ? GRPC_UNKNOWN : g->g_status),
		    g->g_message != NULL ? g->g_message : "");
		pr_grpc_finish(g, 0, buf);
		return;
	}
	if (grpc_frame_parse(g->g_buf, g->g_len, PR_GRPC_MAX_RESP, &msg, &mlen, &ferr) != GRPC_OK) {
		snprintf(buf, sizeof(buf), "health rpc: %s", ferr);
		pr_grpc_finish(g, 0, buf);
		return;
	}
	st = pr_grpc_health_status(msg, mlen);
	if (st == PR_GRPC_SERVING) {
		pr_grpc_finish(g, 1, "");
		return;
	}
	snprintf(buf, sizeof(buf), "service unhealthy (responded with \"%s\")",
	    st == 0       ? "UNKNOWN"
	        : st == 2 ? "NOT_SERVING"
	        : st == 3 ? "SERVICE_UNKNOWN"
	                  : "malformed");
	pr_grpc_finish(g, 0, buf);
}

static void
pr_grpc_timeout(evutil_socket_t fd, short what, void *arg)
{
	struct pr_grpc *g = arg;
	char            buf[400];

	(void)fd;
	(void)what;
	snprintf(buf, sizeof(buf),
	    "timeout: health rpc did not complete within the probe "
	    "timeout (%s)",
	    g->g_target);
	pr_grpc_finish(g, 0, buf);
}

struct pr_grpc *
pr_grpc_check(struct event_base *base, const char *host, int port, const char *service,
    int64_t timeout_ms, pr_grpc_done_fn done, void *arg)
{
	struct pr_grpc      *g = xcalloc(1, sizeof(*g));
	struct h2_options    o;
	struct h2_stream_cbs cbs = { pr_grpc_headers, pr_grpc_data, pr_grpc_close };
	char                 portstr[16], authority[300];
	uint8_t              body[600];
	size_t               blen;
	struct timeval       tv;
	int                  v6 = strchr(host, ':') != NULL;

	g->g_status = -1;
	g->g_done = done;
	g->g_arg = arg;
	snprintf(g->g_target, sizeof(g->g_target), v6 ? "[%s]:%d" : "%s:%d", host, port);
	snprintf(portstr, sizeof(portstr), "%d", port);
	snprintf(authority, sizeof(authority), "%s", g->g_target);
	h2_options_init(&o);
	o.transport = H2_TCP;
	o.host = host;
	o.port = portstr;
	o.connect_timeout_ms = timeout_ms;
	o.max_retries = 0;
	g->g_sess = h2_session_new(base, &o, NULL, NULL);
	g->g_timer = event_new(base, -1, 0, pr_grpc_timeout, g);
	tv = ms_to_tv(timeout_ms);
	event_add(g->g_timer, &tv);
	blen = pr_grpc_health_request(service, body, sizeof(body));
	if (g->g_sess == NULL || blen == 0) {
		/* Reported by the timer path at once, on a later turn. */
		tv.tv_sec = 0;
		tv.tv_usec = 0;
		event_add(g->g_timer, &tv);
		return g;
	}
	{
		char             tmo[16];
		struct h2_header h[] = {
			{ ":method", "POST" },
			{ ":scheme", "http" },
			{ ":path", "/grpc.health.v1.Health/Check" },
			{ ":authority", authority },
			{ "content-type", "application/grpc" },
			{ "te", "trailers" },
			{ "grpc-timeout", grpc_timeout_format(timeout_ms, tmo, sizeof(tmo)) },
			{ "user-agent", "klet-prober" },
		};

		g->g_stream = h2_request(g->g_sess, h, nitems(h), body, blen, &cbs, g);
	}
	return g;
}

void
pr_grpc_cancel(struct pr_grpc *g)
{
	if (g == NULL)
		return;
	if (g->g_stream != NULL)
		h2_stream_cancel(g->g_stream);
	h2_session_free(g->g_sess);
	if (g->g_timer != NULL)
		event_free(g->g_timer);
	free(g->g_message);
	free(g);
}
