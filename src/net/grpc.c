/* grpc.c — unary gRPC calls over an h2 session: request headers, length-prefixed messages,
 * grpc-status / grpc-message (also trailers-only), HTTP status mapping, size limits and a
 * local deadline. */
#include <ctype.h>
#include <stddef.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/mman.h>

#include <event2/event.h>

#include "net/grpc.h"
#include "core/heap.h"
#include "core/log.h"
#include "core/util.h"

/* ---- a bump allocator for decoded responses ----
 * protobuf-c allocates every string and repeated field separately; a list of 1000 containers
 * is tens of thousands of small allocations. They all live exactly as long as the callback,
 * so they come from a few large chunks freed at once. */

struct arena_chunk {
	struct arena_chunk *next;
	size_t              size, used;
	max_align_t         data[];
};

struct arena {
	struct arena_chunk *head;
	size_t              next_size;
};

static struct arena_chunk *grpc_arena_chunk_get(size_t);

static void *
grpc_arena_alloc(void *ud, size_t size)
{
	struct arena       *a = ud;
	struct arena_chunk *c = a->head;
	size_t              al = (size + sizeof(max_align_t) - 1) & ~(sizeof(max_align_t) - 1);

	if (al < size)
		fatalx("%s: size overflow", __func__);
	if (c == NULL || c->size - c->used < al) {
		size_t cs = a->next_size > al ? a->next_size : al;

		c = grpc_arena_chunk_get(cs);
		c->used = 0;
		c->next = a->head;
		a->head = c;
		if (a->next_size < (1u << 20))
			a->next_size *= 2;
	}
	c->used += al;
	return (char *)c->data + c->used - al;
}

static void
grpc_arena_free(void *ud, void *p)
{
	(void)ud;
	(void)p; /* released with the whole arena */
}

/* A spare chunk, so that the small answers of every second (a relist of a few pods) do
 * not allocate again each time (bounded: ARENA_SPARE chunks of at most ARENA_SPARE_MAX
 * bytes). Larger chunks are mapped for one answer and unmapped after it (core/heap.h): a
 * spare megabyte for the relist of a thousand pods would stay resident between relists. */
#define ARENA_SPARE     1
#define ARENA_SPARE_MAX (64u << 10)
static struct arena_chunk *arena_spare[ARENA_SPARE];

static struct arena_chunk *
grpc_arena_chunk_get(size_t want)
{
	struct arena_chunk *c;
	size_t              i;

	for (i = 0; i < ARENA_SPARE; i++) {
		if ((c = arena_spare[i]) != NULL && c->size >= want) {
			arena_spare[i] = NULL;
			return c;
		}
	}
	want = heap_transient(sizeof(*c) + want) - sizeof(*c);
	c = xmalloc(sizeof(*c) + want);
	c->size = want;
	return c;
}

static void
grpc_arena_release(struct arena *a)
{
	struct arena_chunk *c;
	size_t              i;

	while ((c = a->head) != NULL) {
		a->head = c->next;
		for (i = 0; c != NULL && c->size <= ARENA_SPARE_MAX && i < ARENA_SPARE; i++) {
			if (arena_spare[i] == NULL || arena_spare[i]->size < c->size) {
				struct arena_chunk *old = arena_spare[i];

				arena_spare[i] = c;
				c = old;
			}
		}
		free(c);
	}
}

/* Receive buffers. An answer's bytes from HEAP_TRANSIENT_MIN on get a mapping of their own,
 * filled at once (MAP_POPULATE: one system call instead of a fault a page, half the cost of
 * a relist answer's mapping here); up to RBUF_SPARE of them, of at most RBUF_SPARE_MAX,
 * are kept for the next answers: a relist of about 200 pods or fewer then maps and faults
 * nothing at all every second (its two answers come back in the same buffers), for
 * RBUF_SPARE_MAX bytes each at most. Larger answers (a thousand pods: a megabyte) are
 * unmapped after their callback, as the decoded messages are (the arena above). */
#define RBUF_SPARE     2
#define RBUF_SPARE_MAX (256u << 10)

struct rbuf {
	uint8_t *p;
	size_t   cap; /* 0: malloc'd, else the size of its mapping */
};

static struct rbuf rbuf_spare[RBUF_SPARE];

static size_t
grpc_page_round(size_t n)
{
	static size_t pg;

	if (pg == 0) {
		long v = sysconf(_SC_PAGESIZE);

		pg = v > 0 ? (size_t)v : 4096;
	}
	return (n + pg - 1) / pg * pg;
}

static void
grpc_rbuf_get(struct rbuf *b, size_t need)
{
	size_t i, best = RBUF_SPARE;

	if (need < HEAP_TRANSIENT_MIN) {
		b->p = xmalloc(need);
		b->cap = 0;
		return;
	}
	for (i = 0; i < RBUF_SPARE; i++)
		if (rbuf_spare[i].p != NULL && rbuf_spare[i].cap >= need &&
		    (best == RBUF_SPARE || rbuf_spare[i].cap < rbuf_spare[best].cap))
			best = i;
	if (best < RBUF_SPARE) {
		*b = rbuf_spare[best];
		rbuf_spare[best].p = NULL;
		return;
	}
	b->cap = grpc_page_round(need);
	b->p = mmap(NULL, b->cap, PROT_READ | PROT_WRITE,
	    MAP_PRIVATE | MAP_ANONYMOUS | MAP_POPULATE, -1, 0);
	if (b->p == MAP_FAILED) { /* out of mappings: the heap's way */
		b->p = xmalloc(need);
		b->cap = 0;
	}
}

static void
grpc_rbuf_put(struct rbuf *b)
{
	size_t i, small = RBUF_SPARE;

	if (b->p == NULL)
		return;
	if (b->cap == 0) {
		free(b->p);
		b->p = NULL;
		return;
	}
	if (b->cap <= RBUF_SPARE_MAX) { /* into a free slot, or over a smaller spare */
		for (i = 0; i < RBUF_SPARE; i++)
			if (rbuf_spare[i].p == NULL) {
				small = i;
				break;
			} else if (rbuf_spare[i].cap < b->cap &&
			    (small == RBUF_SPARE || rbuf_spare[i].cap < rbuf_spare[small].cap))
				small = i;
		if (small < RBUF_SPARE) {
			struct rbuf old = rbuf_spare[small];

			rbuf_spare[small] = *b;
			*b = old;
			if (b->p == NULL)
				return;
		}
	}
	munmap(b->p, b->cap);
	b->p = NULL;
}

struct grpc_call {
	struct h2_stream                 *g_st;
	const ProtobufCMessageDescriptor *g_desc; /* NULL: a raw call */
	grpc_done_fn                      g_done;
	grpc_raw_fn                       g_raw;
	void                             *g_arg;
	struct event                     *g_timer;
	int64_t                           g_timeout_ms;
	size_t                            g_max_recv;
	struct rbuf                       g_rbuf; /* the message's bytes (g_cap of them) */
	size_t                            g_len;
	size_t                            g_cap;
	uint8_t                           g_hdr[5]; /* the message prefix */
	int                               g_http_status;
	int                               g_ctype_ok;
	int                               g_status;  /* grpc-status, -1 until seen */
	char                             *g_message; /* grpc-message, decoded */
	int                               g_local;   /* a local failure code, -1 if none */
	struct arena                      g_arena;   /* holds the decoded response */
	char                             *g_local_msg;
};

static const char *const code_names[] = {
	"OK",
	"CANCELLED",
	"UNKNOWN",
	"INVALID_ARGUMENT",
	"DEADLINE_EXCEEDED",
	"NOT_FOUND",
	"ALREADY_EXISTS",
	"PERMISSION_DENIED",
	"RESOURCE_EXHAUSTED",
	"FAILED_PRECONDITION",
	"ABORTED",
	"OUT_OF_RANGE",
	"UNIMPLEMENTED",
	"INTERNAL",
	"UNAVAILABLE",
	"DATA_LOSS",
	"UNAUTHENTICATED",
};

const char *
grpc_code_name(int code)
{
	if (code < 0 || (size_t)code >= nitems(code_names))
		return "UNKNOWN";
	return code_names[code];
}

char *
grpc_timeout_format(int64_t ms, char *buf, size_t len)
{
	static const struct {
		char    unit;
		int64_t ms;
	} units[] = { { 'm', 1 }, { 'S', 1000 }, { 'M', 60000 }, { 'H', 3600000 } };
	size_t i;

	if (ms <= 0) {
		snprintf(buf, len, "0n");
		return buf;
	}
	for (i = 0; i < nitems(units); i++) {
		/* round up so that the server's deadline is never shorter than ours */
		int64_t v = ms / units[i].ms + (ms % units[i].ms != 0);

		if (v <= 99999999) {
			snprintf(buf, len, "%lld%c", (long long)v, units[i].unit);
			return buf;
		}
	}
	snprintf(buf, len, "99999999H");
	return buf;
}

static int
grpc_hexval(int c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

char *
grpc_percent_decode(const char *s)
{
	size_t n = strlen(s), i, o = 0;
	char  *out = xmalloc(n + 1);

	for (i = 0; i < n; i++) {
		int hi, lo;

		if (s[i] == '%' && i + 2 < n && (hi = grpc_hexval((unsigned char)s[i + 1])) >= 0 &&
		    (lo = grpc_hexval((unsigned char)s[i + 2])) >= 0) {
			out[o++] = (char)(hi << 4 | lo);
			i += 2;
		} else
			out[o++] = s[i];
	}
	out[o] = '\0';
	return out;
}

int
grpc_http_to_code(int status)
{
	switch (status) {
	case 400:
		return GRPC_INTERNAL;
	case 401:
		return GRPC_UNAUTHENTICATED;
	case 403:
		return GRPC_PERMISSION_DENIED;
	case 404:
		return GRPC_UNIMPLEMENTED;
	case 429:
	case 502:
	case 503:
	case 504:
		return GRPC_UNAVAILABLE;
	default:
		return GRPC_UNKNOWN;
	}
}

int
grpc_parse_status(const char *s)
{
	long   v = 0;
	size_t i;

	if (s[0] == '\0' || strlen(s) > 9)
		return -1;
	for (i = 0; s[i] != '\0'; i++) {
		if (!isdigit((unsigned char)s[i]))
			return -1;
		v = v * 10 + (s[i] - '0');
	}
	return (int)v;
}

int
grpc_h2_error_to_code(int err, uint32_t rst)
{
	switch (err) {
	case H2_OK:
		return GRPC_OK;
	case H2_ERR_CONNECT:
	case H2_ERR_CLOSED:
	case H2_ERR_REFUSED:
	case H2_ERR_GOAWAY:
	case H2_ERR_TIMEOUT:
		return GRPC_UNAVAILABLE;
	case H2_ERR_OVERLOAD:
		return GRPC_RESOURCE_EXHAUSTED;
	case H2_ERR_ABORTED:
		return GRPC_CANCELLED;
	case H2_ERR_PROTOCOL:
		return GRPC_INTERNAL;
	case H2_ERR_RESET:
		switch (rst) {
		case 0x7: /* REFUSED_STREAM */
			return GRPC_UNAVAILABLE;
		case 0x8: /* CANCEL */
			return GRPC_CANCELLED;
		case 0xb: /* ENHANCE_YOUR_CALM */
			return GRPC_RESOURCE_EXHAUSTED;
		case 0xc: /* INADEQUATE_SECURITY */
			return GRPC_PERMISSION_DENIED;
		default:
			return GRPC_INTERNAL;
		}
	default:
		return GRPC_UNKNOWN;
	}
}

void
grpc_frame_header(uint8_t hdr[5], uint32_t len)
{
	hdr[0] = 0;
	hdr[1] = (uint8_t)(len >> 24);
	hdr[2] = (uint8_t)(len >> 16);
	hdr[3] = (uint8_t)(len >> 8);
	hdr[4] = (uint8_t)len;
}

int
grpc_frame_parse(const uint8_t *buf, size_t len, size_t max, const uint8_t **msg, size_t *msglen,
    const char **err)
{
	uint32_t n;

	*msg = NULL;
	*msglen = 0;
	if (len == 0) {
		*err = "grpc: the server sent no response message";
		return GRPC_INTERNAL;
	}
	if (len < 5) {
		*err = "grpc: truncated message prefix";
		return GRPC_INTERNAL;
	}
	if (buf[0] != 0) {
		*err = buf[0] == 1 ? "grpc: compressed message, but no compression was negotiated"
		                   : "grpc: bad message flags";
		return GRPC_INTERNAL;
	}
	n = (uint32_t)buf[1] << 24 | (uint32_t)buf[2] << 16 | (uint32_t)buf[3] << 8 | buf[4];
	if (n > max) {
		*err = "grpc: received message larger than max";
		return GRPC_RESOURCE_EXHAUSTED;
	}
	if (len - 5 < n) {
		*err = "grpc: truncated message";
		return GRPC_INTERNAL;
	}
	if (len - 5 > n) {
		*err = "grpc: more than one response message in a unary call";
		return GRPC_INTERNAL;
	}
	*msg = buf + 5;
	*msglen = n;
	*err = "";
	return GRPC_OK;
}

/* ---- calls ---- */

static void
grpc_call_free(struct grpc_call *g)
{
	if (g->g_timer != NULL)
		event_free(g->g_timer);
	grpc_arena_release(&g->g_arena);
	grpc_rbuf_put(&g->g_rbuf);
	free(g->g_message);
	free(g->g_local_msg);
	free(g);
}

/* Runs the completion (typed, or raw with the message bytes) and frees the call. */
static void
grpc_call_finish_msg(struct grpc_call *g, int code, const char *msg, ProtobufCMessage *resp,
    const uint8_t *raw, size_t rawlen)
{
	event_del(g->g_timer);
	g->g_st = NULL;
	if (g->g_raw != NULL)
		g->g_raw(g->g_arg, code, msg != NULL ? msg : "", raw, rawlen);
	else
		g->g_done(g->g_arg, code, msg != NULL ? msg : "", resp);
	grpc_arena_release(&g->g_arena);
	grpc_call_free(g);
}

static void
grpc_call_finish(struct grpc_call *g, int code, const char *msg, ProtobufCMessage *resp)
{
	grpc_call_finish_msg(g, code, msg, resp, NULL, 0);
}

static void grpc_call_local(struct grpc_call *g, int code, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* Records a local failure (the first one wins). */
static void
grpc_call_local(struct grpc_call *g, int code, const char *fmt, ...)
{
	va_list ap;

	if (g->g_local >= 0)
		return;
	g->g_local = code;
	va_start(ap, fmt);
	if (vasprintf(&g->g_local_msg, fmt, ap) == -1)
		fatalx("%s: out of memory", __func__);
	va_end(ap);
}

static int
grpc_call_on_headers(void *arg, const struct h2_header *h, size_t n, int trailers, int end)
{
	struct grpc_call *g = arg;
	size_t            i;

	(void)end;
	for (i = 0; i < n; i++) {
		if (!trailers && strcmp(h[i].name, ":status") == 0)
			g->g_http_status = atoi(h[i].value);
		else if (!trailers && strcmp(h[i].name, "content-type") == 0)
			g->g_ctype_ok = strncmp(h[i].value, "application/grpc", 16) == 0 &&
			    (h[i].value[16] == '\0' || h[i].value[16] == '+' ||
			        h[i].value[16] == ';');
		else if (strcmp(h[i].name, "grpc-status") == 0) {
			g->g_status = grpc_parse_status(h[i].value);
			if (g->g_status < 0)
				grpc_call_local(g, GRPC_INTERNAL,
				    "grpc: malformed grpc-status \"%.32s\"", h[i].value);
		} else if (strcmp(h[i].name, "grpc-message") == 0) {
			free(g->g_message);
			g->g_message = grpc_percent_decode(h[i].value);
		}
	}
	return 0;
}

static int
grpc_call_on_data(void *arg, const uint8_t *data, size_t len)
{
	struct grpc_call *g = arg;
	size_t            n;

	if (g->g_local >= 0)
		return -1;
	while (len > 0 && g->g_len < 5) {
		uint32_t m;

		g->g_hdr[g->g_len++] = *data++;
		len--;
		if (g->g_len < 5)
			continue;
		m = (uint32_t)g->g_hdr[1] << 24 | (uint32_t)g->g_hdr[2] << 16 |
		    (uint32_t)g->g_hdr[3] << 8 | g->g_hdr[4];
		if (g->g_hdr[0] != 0) {
			grpc_call_local(g, GRPC_INTERNAL,
			    "grpc: compressed response message, but no compression was negotiated");
			return -1;
		}
		if (m > g->g_max_recv) {
			grpc_call_local(g, GRPC_RESOURCE_EXHAUSTED,
			    "grpc: received message larger than max (%u vs. %zu)", m,
			    g->g_max_recv);
			return -1;
		}
		/* the size is known and bounded: one allocation, no regrowth */
		g->g_cap = (size_t)m + 5;
		grpc_rbuf_get(&g->g_rbuf, g->g_cap);
		memcpy(g->g_rbuf.p, g->g_hdr, 5);
	}
	if (len == 0)
		return 0;
	n = g->g_cap - g->g_len;
	if (len > n) {
		grpc_call_local(
		    g, GRPC_INTERNAL, "grpc: more than one response message in a unary call");
		return -1;
	}
	memcpy(g->g_rbuf.p + g->g_len, data, len);
	g->g_len += len;
	return 0;
}

static void
grpc_call_on_close(void *arg, enum h2_error err, uint32_t rst, const char *detail)
{
	struct grpc_call *g = arg;
	const uint8_t    *msg;
	const char       *perr;
	size_t            mlen;
	ProtobufCMessage *resp;
	char              buf[160];
	int               code;

	g->g_st = NULL;
	if (g->g_local >= 0) {
		grpc_call_finish(g, g->g_local, g->g_local_msg, NULL);
		return;
	}
	if (g->g_status > 0) {
		grpc_call_finish(g, g->g_status, g->g_message ? g->g_message : "", NULL);
		return;
	}
	if (err != H2_OK) {
		grpc_call_finish(g, grpc_h2_error_to_code(err, rst), detail, NULL);
		return;
	}
	if (g->g_status < 0) {
		if (g->g_http_status != 200 && g->g_http_status != 0) {
			snprintf(buf, sizeof(buf),
			    "grpc: unexpected HTTP status %d without grpc-status",
			    g->g_http_status);
			grpc_call_finish(g, grpc_http_to_code(g->g_http_status), buf, NULL);
		} else if (!g->g_ctype_ok)
			grpc_call_finish(
			    g, GRPC_UNKNOWN, "grpc: the response is not gRPC (content-type)", NULL);
		else
			grpc_call_finish(g, GRPC_INTERNAL,
			    "grpc: the server closed the stream without sending trailers", NULL);
		return;
	}
	/* grpc-status 0 */
	code = grpc_frame_parse(
	    g->g_len < 5 ? g->g_hdr : g->g_rbuf.p, g->g_len, g->g_max_recv, &msg, &mlen, &perr);
	if (code != GRPC_OK) {
		grpc_call_finish(g, code, perr, NULL);
		return;
	}
	if (g->g_raw != NULL) {
		/* Raw: the caller decodes what it needs (an empty message is valid). */
		grpc_call_finish_msg(
		    g, GRPC_OK, "", NULL, mlen > 0 ? msg : (const uint8_t *)"", mlen);
		return;
	}
	{
		ProtobufCAllocator al = { .alloc = grpc_arena_alloc,
			.free = grpc_arena_free,
			.allocator_data = &g->g_arena };

		g->g_arena.next_size = mlen < 4096 ? 8192 : mlen * 2;
		resp = protobuf_c_message_unpack(g->g_desc, &al, mlen, msg);
	}
	if (resp == NULL) {
		grpc_arena_release(&g->g_arena);
		snprintf(buf, sizeof(buf), "grpc: failed to unmarshal the response (%s, %zu bytes)",
		    g->g_desc->name, mlen);
		grpc_call_finish(g, GRPC_INTERNAL, buf, NULL);
		return;
	}
	grpc_call_finish(g, GRPC_OK, "", resp);
}

static const struct h2_stream_cbs call_cbs = {
	.on_headers = grpc_call_on_headers,
	.on_data = grpc_call_on_data,
	.on_close = grpc_call_on_close,
};

static void
grpc_call_timercb(evutil_socket_t fd, short what, void *arg)
{
	struct grpc_call *g = arg;
	char              buf[96];

	(void)fd;
	(void)what;
	if (g->g_st != NULL) {
		h2_stream_cancel(g->g_st);
		g->g_st = NULL;
	}
	if (g->g_local >= 0) {
		grpc_call_finish(g, g->g_local, g->g_local_msg, NULL);
		return;
	}
	snprintf(
	    buf, sizeof(buf), "context deadline exceeded (%lld ms)", (long long)g->g_timeout_ms);
	grpc_call_finish(g, GRPC_DEADLINE_EXCEEDED, buf, NULL);
}

static struct grpc_call *
grpc_call_start(struct h2_session *s, const char *path, const ProtobufCMessage *req,
    const struct grpc_call_opts *opts, struct grpc_call *g)
{
	struct event_base *base;
	struct h2_header   h[8];
	size_t             n = 0, len, max_send;
	uint8_t           *body;
	char               tbuf[16];
	struct timeval     tv;

	g->g_status = -1;
	g->g_local = -1;
	g->g_timeout_ms = opts && opts->timeout_ms > 0 ? opts->timeout_ms : 0;
	g->g_max_recv = opts && opts->max_recv ? opts->max_recv : GRPC_DEFAULT_MAX_MSG;
	max_send = opts && opts->max_send ? opts->max_send : GRPC_DEFAULT_MAX_MSG;
	base = h2_session_base(s);
	g->g_timer = evtimer_new(base, grpc_call_timercb, g);
	if (g->g_timer == NULL)
		fatalx("%s: evtimer_new failed", __func__);

	len = protobuf_c_message_get_packed_size(req);
	if (len > max_send) {
		grpc_call_local(g, GRPC_RESOURCE_EXHAUSTED,
		    "grpc: trying to send message larger than max (%zu vs. %zu)", len, max_send);
		tv.tv_sec = 0;
		tv.tv_usec = 0;
		event_add(g->g_timer, &tv);
		return g;
	}
	body = xmalloc(len + 5);
	grpc_frame_header(body, (uint32_t)len);
	protobuf_c_message_pack(req, body + 5);

	h[n++] = (struct h2_header){ ":method", "POST" };
	h[n++] = (struct h2_header){ ":scheme", "http" };
	h[n++] = (struct h2_header){ ":path", path };
	h[n++] = (struct h2_header){ ":authority",
		opts && opts->authority ? opts->authority : "localhost" };
	h[n++] = (struct h2_header){ "content-type", "application/grpc" };
	h[n++] = (struct h2_header){ "te", "trailers" };
	h[n++] = (struct h2_header){ "user-agent", "klet-grpc/" KLET_VERSION };
	if (g->g_timeout_ms > 0)
		h[n++] = (struct h2_header){ "grpc-timeout",
			grpc_timeout_format(g->g_timeout_ms, tbuf, sizeof(tbuf)) };
	g->g_st = h2_request(s, h, n, body, len + 5, &call_cbs, g);
	free(body);
	if (g->g_timeout_ms > 0) {
		tv = ms_to_tv(g->g_timeout_ms);
		event_add(g->g_timer, &tv);
	}
	return g;
}

struct grpc_call *
grpc_unary(struct h2_session *s, const char *path, const ProtobufCMessage *req,
    const ProtobufCMessageDescriptor *resp_desc, const struct grpc_call_opts *opts,
    grpc_done_fn done, void *arg)
{
	struct grpc_call *g = xcalloc(1, sizeof(*g));

	g->g_desc = resp_desc;
	g->g_done = done;
	g->g_arg = arg;
	return grpc_call_start(s, path, req, opts, g);
}

struct grpc_call *
grpc_unary_raw(struct h2_session *s, const char *path, const ProtobufCMessage *req,
    const struct grpc_call_opts *opts, grpc_raw_fn done, void *arg)
{
	struct grpc_call *g = xcalloc(1, sizeof(*g));

	g->g_raw = done;
	g->g_arg = arg;
	return grpc_call_start(s, path, req, opts, g);
}

void
grpc_call_cancel(struct grpc_call *g)
{
	if (g == NULL)
		return;
	if (g->g_st != NULL)
		h2_stream_cancel(g->g_st);
	grpc_call_free(g);
}
