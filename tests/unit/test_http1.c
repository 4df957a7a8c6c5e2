/* test_http1.c — the asynchronous HTTP/1.1 client against a local listener on the loop:
 * status and body, Content-Length and close-delimited bodies, truncation, headers sent,
 * connection refused, timeout, malformed answers, bad hosts, cancellation. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <signal.h>
#include <unistd.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <cmocka.h>

#include <event2/buffer.h>
#include <event2/bufferevent.h>
#include <event2/event.h>
#include <event2/listener.h>

#include "net/http1.h"
#include "core/util.h"

/* ---- a scripted server ---- */

struct server {
	struct event_base     *base;
	struct evconnlistener *lis;
	int                    port;
	const char            *reply; /* NULL: never answer */
	int                    close_after;
	int                    replied;
	char                   request[4096];
	struct bufferevent    *conns[8];
	int                    nconns;
};

static void
srv_read(struct bufferevent *bev, void *arg)
{
	struct server   *s = arg;
	struct evbuffer *in = bufferevent_get_input(bev);
	size_t           have = strlen(s->request), n = evbuffer_get_length(in);

	if (have + n >= sizeof(s->request))
		n = sizeof(s->request) - 1 - have;
	evbuffer_remove(in, s->request + have, n);
	s->request[have + n] = '\0';
	evbuffer_drain(in, evbuffer_get_length(in));
	if (strstr(s->request, "\r\n\r\n") == NULL || s->reply == NULL || s->replied)
		return;
	s->replied = 1;
	/* With close_after, srv_write half-closes once the reply is out. */
	bufferevent_write(bev, s->reply, strlen(s->reply));
}

static void
srv_write(struct bufferevent *bev, void *arg)
{
	struct server *s = arg;

	if (s->close_after && s->replied && evbuffer_get_length(bufferevent_get_output(bev)) == 0)
		shutdown(bufferevent_getfd(bev), SHUT_WR);
}

static void
srv_event(struct bufferevent *bev, short what, void *arg)
{
	struct server *s = arg;
	int            i;

	(void)what;
	for (i = 0; i < s->nconns; i++)
		if (s->conns[i] == bev)
			s->conns[i] = NULL;
	bufferevent_free(bev);
}

static void
srv_accept(struct evconnlistener *l, evutil_socket_t fd, struct sockaddr *sa, int len, void *arg)
{
	struct server      *s = arg;
	struct bufferevent *bev = bufferevent_socket_new(s->base, fd, BEV_OPT_CLOSE_ON_FREE);

	(void)l;
	(void)sa;
	(void)len;
	s->replied = 0;
	s->request[0] = '\0';
	bufferevent_setcb(bev, srv_read, srv_write, srv_event, s);
	bufferevent_enable(bev, EV_READ | EV_WRITE);
	if (s->nconns < 8)
		s->conns[s->nconns++] = bev;
}

static void
srv_start(struct server *s, struct event_base *base, const char *reply, int close_after)
{
	struct sockaddr_in sin;
	socklen_t          len = sizeof(sin);

	memset(s, 0, sizeof(*s));
	s->base = base;
	s->reply = reply;
	s->close_after = close_after;
	memset(&sin, 0, sizeof(sin));
	sin.sin_family = AF_INET;
	sin.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	s->lis = evconnlistener_new_bind(base, srv_accept, s,
	    LEV_OPT_CLOSE_ON_FREE | LEV_OPT_REUSEABLE, 16, (struct sockaddr *)&sin, sizeof(sin));
	assert_non_null(s->lis);
	getsockname(evconnlistener_get_fd(s->lis), (struct sockaddr *)&sin, &len);
	s->port = ntohs(sin.sin_port);
}

static void
srv_stop(struct server *s)
{
	int i;

	for (i = 0; i < s->nconns; i++)
		if (s->conns[i] != NULL)
			bufferevent_free(s->conns[i]);
	evconnlistener_free(s->lis);
}

/* ---- results ---- */

struct got {
	int    calls;
	int    status;
	char   error[256];
	char   body[256];
	size_t body_len;
	int    truncated;
	int    in_call; /* set while http1_get runs: the callback must not see it */
	int    during;
};

static void
got_cb(const struct http1_result *r, void *arg)
{
	struct got *g = arg;

	g->calls++;
	g->during |= g->in_call;
	g->status = r->status;
	snprintf(g->error, sizeof(g->error), "%s", r->error ? r->error : "");
	g->body_len = r->body_len;
	snprintf(g->body, sizeof(g->body), "%.*s", (int)r->body_len, r->body ? r->body : "");
	g->truncated = r->truncated;
}

static void
run(struct event_base *base, struct got *g)
{
	int i;

	for (i = 0; i < 200 && g->calls == 0; i++) {
		struct timeval tv = { 0, 10000 };

		event_base_loopexit(base, &tv);
		event_base_dispatch(base);
	}
}

static struct http1_req *
get(struct event_base *base, const char *host, int port, const char *path,
    const struct http1_header *h, size_t nh, int64_t timeout_ms, size_t max, struct got *g)
{
	struct http1_req *r;

	memset(g, 0, sizeof(*g));
	g->in_call = 1;
	r = http1_get(base, host, port, path, h, nh, NULL, timeout_ms, max, got_cb, g);
	g->in_call = 0;
	return r;
}

static void
test_ok_and_headers(void **state)
{
	struct event_base  *base = event_base_new();
	struct server       s;
	struct got          g;
	struct http1_header h[] = { { "X-Probe", "yes" }, { "Bad\r\nInject", "x" } };

	(void)state;
	srv_start(&s, base, "HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\nhello", 0);
	get(base, "127.0.0.1", s.port, "/healthz?x=1", h, 2, 2000, 0, &g);
	run(base, &g);
	assert_int_equal(g.calls, 1);
	assert_int_equal(g.during, 0);
	assert_string_equal(g.error, "");
	assert_int_equal(g.status, 200);
	assert_string_equal(g.body, "hello");
	assert_non_null(strstr(s.request, "GET /healthz?x=1 HTTP/1.1\r\n"));
	assert_non_null(strstr(s.request, "X-Probe: yes\r\n"));
	assert_null(strstr(s.request, "Inject"));
	assert_non_null(strstr(s.request, "Host: 127.0.0.1:"));
	assert_non_null(strstr(s.request, "User-Agent: klet/"));
	/* localhost is accepted too */
	get(base, "localhost", s.port, "/", NULL, 0, 2000, 0, &g);
	run(base, &g);
	assert_int_equal(g.status, 200);
	srv_stop(&s);
	event_base_free(base);
}

static void
test_status_codes_and_bodies(void **state)
{
	struct event_base *base = event_base_new();
	struct server      s;
	struct got         g;

	(void)state;
	/* A body delimited by the connection close, truncated at max_body. */
	srv_start(&s, base, "HTTP/1.0 503 Service Unavailable\r\n\r\n0123456789abcdef", 1);
	get(base, "127.0.0.1", s.port, "/", NULL, 0, 2000, 8, &g);
	run(base, &g);
	assert_string_equal(g.error, "");
	assert_int_equal(g.status, 503);
	assert_int_equal(g.body_len, 8);
	assert_int_equal(g.truncated, 1);
	srv_stop(&s);

	srv_start(&s, base, "HTTP/1.1 204 No Content\r\n\r\n", 0);
	get(base, "127.0.0.1", s.port, "/", NULL, 0, 2000, 0, &g);
	run(base, &g);
	assert_int_equal(g.status, 204);
	srv_stop(&s);

	srv_start(&s, base, "SSH-2.0-nope\r\n\r\n", 0);
	get(base, "127.0.0.1", s.port, "/", NULL, 0, 2000, 0, &g);
	run(base, &g);
	assert_string_equal(g.error, "malformed response");
	srv_stop(&s);
	event_base_free(base);
}

static void
test_failures(void **state)
{
	struct event_base *base = event_base_new();
	struct server      s;
	struct got         g;
	int                port;

	(void)state;
	/* Refused: a port that was just free. */
	srv_start(&s, base, NULL, 0);
	port = s.port;
	srv_stop(&s);
	get(base, "127.0.0.1", port, "/", NULL, 0, 2000, 0, &g);
	run(base, &g);
	assert_int_equal(g.calls, 1);
	assert_int_equal(g.during, 0);
	assert_non_null(strstr(g.error, "refused"));

	/* Timeout: the server accepts and never answers. */
	srv_start(&s, base, NULL, 0);
	get(base, "127.0.0.1", s.port, "/", NULL, 0, 100, 0, &g);
	run(base, &g);
	assert_non_null(strstr(g.error, "timeout"));
	srv_stop(&s);

	/* HTTPS to a plain-text server: the TLS handshake fails, reported once. */
	srv_start(&s, base, "HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n", 1);
	memset(&g, 0, sizeof(g));
	http1_get(base, "127.0.0.1", s.port, "/", NULL, 0, "https", 2000, 0, got_cb, &g);
	run(base, &g);
	assert_int_equal(g.calls, 1);
	assert_int_equal(g.status, 0);
	assert_true(g.error[0] != '\0');
	srv_stop(&s);

	/* Not an IP, bad port, bad scheme: reported through the callback, later. */
	get(base, "example.com", 80, "/", NULL, 0, 1000, 0, &g);
	run(base, &g);
	assert_int_equal(g.during, 0);
	assert_non_null(strstr(g.error, "not an IP"));
	get(base, "127.0.0.1", 0, "/", NULL, 0, 1000, 0, &g);
	run(base, &g);
	assert_non_null(strstr(g.error, "port"));
	memset(&g, 0, sizeof(g));
	http1_get(base, "127.0.0.1", 80, "/", NULL, 0, "GOPHER", 1000, 0, got_cb, &g);
	run(base, &g);
	assert_non_null(strstr(g.error, "scheme"));
	event_base_free(base);
}

static void
test_cancel(void **state)
{
	struct event_base *base = event_base_new();
	struct server      s;
	struct got         g;
	struct http1_req  *r;
	struct timeval     tv = { 0, 100000 };

	(void)state;
	srv_start(&s, base, NULL, 0);
	r = get(base, "127.0.0.1", s.port, "/", NULL, 0, 50, 0, &g);
	http1_cancel(r);
	event_base_loopexit(base, &tv);
	event_base_dispatch(base);
	assert_int_equal(g.calls, 0);
	/* Cancelling an early failure before it is reported. */
	r = get(base, "nope", 1, "/", NULL, 0, 50, 0, &g);
	http1_cancel(r);
	event_base_loopexit(base, &tv);
	event_base_dispatch(base);
	assert_int_equal(g.calls, 0);
	http1_cancel(NULL);
	srv_stop(&s);
	event_base_free(base);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_ok_and_headers),
		cmocka_unit_test(test_status_codes_and_bodies),
		cmocka_unit_test(test_failures),
		cmocka_unit_test(test_cancel),
	};

	signal(SIGPIPE, SIG_IGN); /* as kletd's loop does */

	return cmocka_run_group_tests(tests, NULL, NULL);
}
