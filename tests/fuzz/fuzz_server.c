/* fuzz_server.c — libFuzzer target: the node server's request parsing. Either the input is
 * the raw byte stream of a client's connection to a real evhttp server, set up as
 * server.c sets up its listeners (header and body limits, methods), whose handler does what
 * server.c's does before it looks anything up: request_clean_path, auth_attributes, the
 * Authorization header, request_route, and request_parse_logs or request_parse_stream; or
 * (the fast path, most inputs) each line of the input is a request target parsed as evhttp
 * parses the request line's, then handled the same way.
 *
 * Input: byte 0: bits 0-1 the path taken (0: the connection, else the fast path); bit 2 the
 * listener is the TLS one (logs, exec, attach, portForward served), bit 3 the healthz one;
 * bits 4-7: the method of the fast path's lines; on the connection, a header line of that
 * many times 2 KiB put after the first line (the header limit is 16 KiB). Then the bytes.
 *
 * The connection: a unix socket (abstract, per process) accepted by an evhttp made for each
 * input and freed after it (so that no connection outlives its input: LeakSanitizer sees
 * what evhttp or the handler leaks); the bytes are written, the writing side shut, the
 * loop turned until the server closes or nothing moves for a while; every answer must start
 * with an HTTP status line. Checked of every parse: a cleaned path starts with '/', has
 * no "." or ".." segment and no slash that was encoded; the parsed names are non-empty and
 * have no '/'; options in their ranges; a refusal has a text. */
#include <sys/socket.h>
#include <sys/un.h>

#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <event2/buffer.h>
#include <event2/event.h>
#include <event2/http.h>
#include <event2/keyvalq_struct.h>
#include <event2/listener.h>

#include "core/util.h"
#include "fuzz_common.h"
#include "server/auth.h"
#include "server/request.h"

static int tls, healthz_only, served;

static void
check_name(const char *what, const char *s)
{
	if (s == NULL || *s == '\0' || strchr(s, '/') != NULL) {
		fprintf(stderr, "%s: \"%s\"\n", what, s != NULL ? s : "(null)");
		abort();
	}
}

/* p cleaned from raw. */
static void
check_path(const char *raw, const char *p)
{
	const char *seg;
	size_t      n = 0;

	if (p[0] != '/')
		abort();
	for (seg = raw; *seg != '\0'; seg++)
		n += *seg == '/';
	for (seg = p; *seg != '\0'; seg++)
		n -= *seg == '/';
	if (n != 0) {
		fprintf(stderr, "a slash decoded in %s\n", raw);
		abort();
	}
	for (seg = p; seg != NULL; seg = strchr(seg + 1, '/'))
		if (strcmp(seg, "/.") == 0 || strncmp(seg, "/./", 3) == 0 ||
		    strcmp(seg, "/..") == 0 || strncmp(seg, "/../", 4) == 0) {
			fprintf(stderr, "a dot segment in %s\n", p);
			abort();
		}
}

/* What server.c does with a request before it looks a pod up: the status it answers with
 * (200 for what it would go on to serve) and its text. */
static int
handle(enum evhttp_cmd_type m, const struct evhttp_uri *u, const char *authz, char **text)
{
	const char           *raw = evhttp_uri_get_path(u), *query = evhttp_uri_get_query(u);
	char                 *path = request_clean_path(raw), *msg = NULL;
	struct auth_attrs     a;
	struct request_logs   rl;
	struct request_stream rs;
	enum request_route    route;
	int                   code = 200;
	size_t                i;

	served++;
	if (path == NULL) {
		*text = xstrdup("Bad Request: invalid path");
		return 400;
	}
	check_path(raw, path);
	auth_attributes(request_method_name(m), path, &a);
	if (a.verb == NULL || a.subresource == NULL)
		abort();
	if (tls && authz != NULL && strncasecmp(authz, "Bearer ", 7) == 0 && authz[7] != '\0')
		(void)strlen(authz + 7); /* the token a TokenReview would send */
	route = request_route(path, m, tls, healthz_only);
	switch (route) {
	case REQUEST_LOGS:
		if (!tls || strncmp(path, "/containerLogs/", 15) != 0)
			abort();
		if (request_parse_logs(path, query, 1700000000LL * 1000000000LL, &rl, &msg) == -1) {
			if (msg == NULL || *msg == '\0' || rl.buf != NULL)
				abort();
			code = 400;
			break;
		}
		check_name("namespace", rl.ns);
		check_name("pod", rl.pod);
		check_name("container", rl.container);
		if (rl.opts.tail_lines < -1 || rl.opts.limit_bytes == 0 ||
		    rl.opts.limit_bytes < -1 || rl.opts.streams < 0 || rl.opts.streams > 2 ||
		    msg != NULL)
			abort();
		msg = xsprintf("logs %s/%s/%s", rl.ns, rl.pod, rl.container);
		request_logs_clear(&rl);
		break;
	case REQUEST_EXEC:
	case REQUEST_ATTACH:
	case REQUEST_PORTFORWARD:
		if (!tls || (m != EVHTTP_REQ_GET && m != EVHTTP_REQ_POST))
			abort();
		if (request_parse_stream(route, path, query, &rs, &msg) == -1) {
			if (msg == NULL || *msg == '\0' || rs.buf != NULL)
				abort();
			code = 400;
			break;
		}
		check_name("namespace", rs.ns);
		check_name("pod", rs.pod);
		if (rs.uid != NULL)
			check_name("uid", rs.uid);
		if (route == REQUEST_PORTFORWARD) {
			if (rs.container != NULL || rs.ncmd != 0)
				abort();
			for (i = 0; i < rs.nports; i++)
				if (rs.ports[i] < 1 || rs.ports[i] > 65535)
					abort();
		} else {
			check_name("container", rs.container);
			if (!(rs.in || rs.out || rs.err) || (rs.tty && rs.err) ||
			    (route == REQUEST_EXEC && rs.ncmd == 0) || rs.nports != 0)
				abort();
			for (i = 0; i < rs.ncmd; i++)
				(void)strlen(rs.cmd[i]);
		}
		msg = xsprintf("stream %s/%s", rs.ns, rs.pod);
		request_stream_clear(&rs);
		break;
	case REQUEST_NOT_FOUND:
		code = 404;
		break;
	case REQUEST_NOT_ALLOWED:
		code = 405;
		break;
	default:
		if (healthz_only && route != REQUEST_HEALTHZ)
			abort();
		break;
	}
	*text = msg != NULL ? msg : xsprintf("%d", code);
	free(path);
	return code;
}

static void
on_request(struct evhttp_request *req, void *arg)
{
	struct evbuffer *b = evbuffer_new();
	const char      *authz;
	char            *text;
	int              code;

	(void)arg;
	authz = evhttp_find_header(evhttp_request_get_input_headers(req), "Authorization");
	code = handle(
	    evhttp_request_get_command(req), evhttp_request_get_evhttp_uri(req), authz, &text);
	evbuffer_add(b, text, strlen(text));
	evhttp_send_reply(req, code, NULL, b);
	evbuffer_free(b);
	free(text);
}

/* ---- the connection ---- */

static struct event_base *base;
static int                lfd = -1;
static struct sockaddr_un addr;
static socklen_t          addrlen;

static void
setup(void)
{
	if (base != NULL)
		return;
	signal(SIGPIPE, SIG_IGN); /* as kletd */
	if ((base = event_base_new()) == NULL)
		abort();
	memset(&addr, 0, sizeof(addr));
	addr.sun_family = AF_UNIX;
	/* abstract: no file to leave behind */
	addrlen = (socklen_t)(offsetof(struct sockaddr_un, sun_path) + 1 +
	    (size_t)snprintf(addr.sun_path + 1, sizeof(addr.sun_path) - 1, "klet-fuzz-server-%d",
	        (int)getpid()));
	lfd = socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (lfd == -1 || bind(lfd, (struct sockaddr *)&addr, addrlen) == -1 ||
	    listen(lfd, 16) == -1)
		abort();
}

static void
over_socket(const uint8_t *data, size_t size)
{
	struct evhttp         *http = evhttp_new(base);
	struct evconnlistener *lev;
	char                   buf[65536], first[32];
	size_t                 off = 0, got = 0;
	ssize_t                n;
	int                    fd, idle = 0, shut = 0, turns;

	evhttp_set_max_headers_size(http, REQUEST_MAX_HEADERS);
	evhttp_set_max_body_size(http, REQUEST_MAX_BODY);
	evhttp_set_timeout(http, 60);
	evhttp_set_allowed_methods(http, REQUEST_METHODS);
	evhttp_set_default_content_type(http, "text/plain; charset=utf-8");
	evhttp_set_gencb(http, on_request, NULL);
	/* The listening socket stays: no LEV_OPT_CLOSE_ON_FREE. */
	lev = evconnlistener_new(base, NULL, NULL, LEV_OPT_CLOSE_ON_EXEC, 0, lfd);
	if (lev == NULL || evhttp_bind_listener(http, lev) == NULL)
		abort();
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (fd == -1 || connect(fd, (struct sockaddr *)&addr, addrlen) == -1)
		abort();
	for (turns = 0; turns < 10000 && idle < 20; turns++) {
		if (off < size) {
			n = send(fd, data + off, size - off, MSG_NOSIGNAL);
			if (n > 0)
				off += (size_t)n;
			else if (n == -1 && errno != EAGAIN && errno != EPIPE)
				abort();
			else if (n == -1 && errno == EPIPE)
				off = size; /* the server closed */
		} else if (!shut) {
			shutdown(fd, SHUT_WR);
			shut = 1;
		}
		event_base_loop(base, EVLOOP_NONBLOCK);
		n = read(fd, buf, sizeof(buf));
		if (n == 0)
			break; /* the server closed */
		if (n > 0) {
			if (got < sizeof(first))
				memcpy(first + got, buf,
				    (size_t)n < sizeof(first) - got ? (size_t)n
				                                    : sizeof(first) - got);
			got += (size_t)n;
			idle = 0;
		} else if (errno == EAGAIN)
			idle += off == size;
		else if (errno == ECONNRESET)
			break;
		else
			abort();
	}
	/* "HTTP/M.N CODE ...": evhttp answers with the request's version, whatever it is */
	if (got > 0) {
		const char *sp = memchr(first, ' ', got < sizeof(first) ? got : sizeof(first));

		if (memcmp(first, "HTTP/", got < 5 ? got : 5) != 0 ||
		    (got >= sizeof(first) &&
		        (sp == NULL || sp + 4 > first + sizeof(first) ||
		            !isdigit((unsigned char)sp[1]) || !isdigit((unsigned char)sp[2]) ||
		            !isdigit((unsigned char)sp[3])))) {
			fprintf(stderr, "not an HTTP answer: %.*s\n", (int)sizeof(first), first);
			abort();
		}
	}
	close(fd);
	event_base_loop(base, EVLOOP_NONBLOCK);
	evhttp_free(http); /* frees its connections and the listener (not the socket) */
	/* A connection the server had not accepted yet goes now. */
	while ((fd = accept4(lfd, NULL, NULL, SOCK_CLOEXEC)) != -1)
		close(fd);
}

/* ---- the fast path ---- */

static void
direct(enum evhttp_cmd_type m, const uint8_t *data, size_t size)
{
	const char *p = (const char *)data, *end = p + size, *nl;
	char       *line, *text;

	while (p < end) {
		struct evhttp_uri *u;

		if ((nl = memchr(p, '\n', (size_t)(end - p))) == NULL)
			nl = end;
		line = xmalloc((size_t)(nl - p) + 1);
		memcpy(line, p, (size_t)(nl - p));
		line[nl - p] = '\0';
		/* As evhttp parses the request line's target. */
		if ((u = evhttp_uri_parse_with_flags(line, EVHTTP_URI_NONCONFORMANT)) != NULL) {
			(void)handle(m, u, "Bearer x", &text);
			free(text);
			evhttp_uri_free(u);
		}
		free(line);
		p = nl + 1;
	}
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const enum evhttp_cmd_type methods[] = { EVHTTP_REQ_GET, EVHTTP_REQ_POST,
		EVHTTP_REQ_HEAD, EVHTTP_REQ_PUT, EVHTTP_REQ_DELETE, EVHTTP_REQ_OPTIONS,
		EVHTTP_REQ_PATCH, EVHTTP_REQ_TRACE, EVHTTP_REQ_CONNECT };

	fuzz_quiet();
	setup();
	if (size < 1)
		return 0;
	tls = (data[0] >> 2) & 1;
	healthz_only = (data[0] >> 3) & 1;
	served = 0;
	if ((data[0] & 3) == 0 && (data[0] >> 4) != 0) {
		/* the long header line */
		size_t         pad = (size_t)(data[0] >> 4) * 2048, at;
		const uint8_t *nl = memchr(data + 1, '\n', size - 1);
		uint8_t       *b = xmalloc(size - 1 + pad);

		at = nl != NULL ? (size_t)(nl - data) : size - 1;
		memcpy(b, data + 1, at);
		memcpy(b + at, "X-Pad: ", 7);
		memset(b + at + 7, 'a', pad - 9);
		memcpy(b + at + pad - 2, "\r\n", 2);
		memcpy(b + at + pad, data + 1 + at, size - 1 - at);
		over_socket(b, size - 1 + pad);
		free(b);
	} else if ((data[0] & 3) == 0) {
		static const char ok[] = "GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n";

		over_socket(data + 1, size - 1);
		/* (that the connection is served at all) */
		if (size - 1 >= sizeof(ok) - 1 && memcmp(data + 1, ok, sizeof(ok) - 1) == 0 &&
		    served == 0) {
			fprintf(stderr, "a plain request was not served\n");
			abort();
		}
	} else
		direct(methods[(data[0] >> 4) % nitems(methods)], data + 1, size - 1);
	return 0;
}
