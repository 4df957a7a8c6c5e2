/* test_server_request.c — the node server's request parsing (src/server/request.c): cleaned
 * paths, routes per listener, the /containerLogs parameters and the /exec, /attach and
 * /portForward paths and options, with the kubelet's 400 texts. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "core/util.h"
#include "server/request.h"

static void
test_clean_path(void **state)
{
	static const struct {
		const char *raw, *want; /* want NULL: refused */
	} cases[] = {
		{ "/pods", "/pods" },
		{ "/containerLogs/ns/p/c", "/containerLogs/ns/p/c" },
		{ "/a%20b", "/a b" },
		{ "/a+b", "/a+b" }, /* a path's + stays */
		{ "/a%2fb", NULL },
		{ "/a%2Fb", NULL },
		{ "/a/../b", NULL },
		{ "/a/%2e%2e/b", NULL },
		{ "/..", NULL },
		{ "/a/.", NULL },
		{ "/./a", NULL },
		{ "/a/.b", "/a/.b" },
		{ "/a/..b", "/a/..b" },
		{ "/a%00b", NULL },
		{ "relative", NULL },
		{ "", NULL },
		{ "/", "/" },
	};
	size_t i;
	char  *p;

	(void)state;
	assert_null(request_clean_path(NULL));
	for (i = 0; i < nitems(cases); i++) {
		p = request_clean_path(cases[i].raw);
		if (cases[i].want == NULL ? p != NULL : p == NULL || strcmp(p, cases[i].want) != 0)
			fail_msg("%s: got %s, want %s", cases[i].raw, p ? p : "NULL",
			    cases[i].want ? cases[i].want : "NULL");
		free(p);
	}
	assert_string_equal(request_method_name(EVHTTP_REQ_PATCH), "PATCH");
	assert_string_equal(request_method_name(EVHTTP_REQ_TRACE), "OTHER");
}

static void
test_route(void **state)
{
	static const struct {
		const char        *path;
		int                m, tls, healthz_only;
		enum request_route want;
	} cases[] = {
		{ "/healthz", EVHTTP_REQ_GET, 0, 1, REQUEST_HEALTHZ },
		{ "/healthz/ping", EVHTTP_REQ_POST, 1, 0, REQUEST_HEALTHZ },
		{ "/pods", EVHTTP_REQ_GET, 1, 1, REQUEST_NOT_FOUND },
		{ "/pods", EVHTTP_REQ_GET, 0, 0, REQUEST_PODS },
		{ "/pods/", EVHTTP_REQ_HEAD, 1, 0, REQUEST_PODS },
		{ "/pods", EVHTTP_REQ_POST, 1, 0, REQUEST_NOT_ALLOWED },
		{ "/runningpods/", EVHTTP_REQ_GET, 1, 0, REQUEST_RUNNINGPODS },
		{ "/metrics/resource", EVHTTP_REQ_GET, 0, 0, REQUEST_METRICS },
		{ "/metricsx", EVHTTP_REQ_GET, 0, 0, REQUEST_NOT_FOUND },
		{ "/stats/summary", EVHTTP_REQ_GET, 1, 0, REQUEST_STATS },
		{ "/containerLogs/a/b/c", EVHTTP_REQ_GET, 1, 0, REQUEST_LOGS },
		{ "/containerLogs/a/b/c", EVHTTP_REQ_GET, 0, 0, REQUEST_NOT_FOUND },
		{ "/containerLogs/a/b/c", EVHTTP_REQ_POST, 1, 0, REQUEST_NOT_ALLOWED },
		{ "/exec/a/b/c", EVHTTP_REQ_POST, 1, 0, REQUEST_EXEC },
		{ "/exec/a/b/c", EVHTTP_REQ_GET, 1, 0, REQUEST_EXEC },
		{ "/exec/a/b/c", EVHTTP_REQ_PUT, 1, 0, REQUEST_NOT_ALLOWED },
		{ "/exec/a/b/c", EVHTTP_REQ_POST, 0, 0, REQUEST_NOT_ALLOWED },
		{ "/exec/a/b/c", EVHTTP_REQ_GET, 0, 0, REQUEST_NOT_FOUND },
		{ "/attach/a/b/c", EVHTTP_REQ_POST, 1, 0, REQUEST_ATTACH },
		{ "/portForward/a/b", EVHTTP_REQ_POST, 1, 0, REQUEST_PORTFORWARD },
		{ "/", EVHTTP_REQ_GET, 1, 0, REQUEST_NOT_FOUND },
	};
	size_t i;

	(void)state;
	for (i = 0; i < nitems(cases); i++)
		if (request_route(cases[i].path, cases[i].m, cases[i].tls, cases[i].healthz_only) !=
		    cases[i].want)
			fail_msg("%s (%d, tls %d, healthz %d): route %d, want %d", cases[i].path,
			    cases[i].m, cases[i].tls, cases[i].healthz_only,
			    request_route(
			        cases[i].path, cases[i].m, cases[i].tls, cases[i].healthz_only),
			    cases[i].want);
}

/* The 400 text of a refused /containerLogs request, or "" when it parses. */
static char *
logs_msg(const char *path, const char *query, struct request_logs *l)
{
	static char buf[256];
	char       *msg;

	if (request_parse_logs(path, query, 1000LL * 1000000000LL, l, &msg) == 0) {
		assert_null(msg);
		return "";
	}
	assert_non_null(msg);
	assert_null(l->buf);
	snprintf(buf, sizeof(buf), "%s", msg);
	free(msg);
	return buf;
}

static void
test_logs(void **state)
{
	static const struct {
		const char *path, *query, *msg;
	} bad[] = {
		{ "/containerLogs/ns/pod", NULL,
		    "Bad Request: expected /containerLogs/NAMESPACE/POD/CONTAINER" },
		{ "/containerLogs/ns//c", NULL,
		    "Bad Request: expected /containerLogs/NAMESPACE/POD/CONTAINER" },
		{ "/containerLogs/ns/pod/c/d", NULL,
		    "Bad Request: expected /containerLogs/NAMESPACE/POD/CONTAINER" },
		{ "/containerLogs/ns/pod/", NULL,
		    "Bad Request: expected /containerLogs/NAMESPACE/POD/CONTAINER" },
		{ "/pods", NULL, "Bad Request: expected /containerLogs/NAMESPACE/POD/CONTAINER" },
		{ "/containerLogs/n/p/c", "follow", "malformed query" },
		{ "/containerLogs/n/p/c", "=1", "malformed query" },
		{ "/containerLogs/n/p/c", "tailLines=-1",
		    "tailLines: must be a non-negative integer" },
		{ "/containerLogs/n/p/c", "tailLines=1x",
		    "tailLines: must be a non-negative integer" },
		{ "/containerLogs/n/p/c",
		    "tailLines=", "tailLines: must be a non-negative integer" },
		{ "/containerLogs/n/p/c", "tailLines=99999999999999999999",
		    "tailLines: must be a non-negative integer" },
		{ "/containerLogs/n/p/c", "limitBytes=0", "limitBytes: must be greater than 0" },
		{ "/containerLogs/n/p/c", "sinceSeconds=0",
		    "sinceSeconds: must be greater than 0" },
		{ "/containerLogs/n/p/c", "sinceSeconds=1&sinceTime=2020-01-01T00:00:00Z",
		    "at most one of `sinceTime` or `sinceSeconds` may be specified" },
		{ "/containerLogs/n/p/c", "sinceTime=yesterday",
		    "sinceTime: yesterday is not an RFC 3339 time" },
		{ "/containerLogs/n/p/c", "stream=stdout",
		    "stream: stdout is not All, Stdout or Stderr" },
	};
	struct request_logs l;
	size_t              i;

	(void)state;
	for (i = 0; i < nitems(bad); i++)
		if (strcmp(logs_msg(bad[i].path, bad[i].query, &l), bad[i].msg) != 0)
			fail_msg("%s?%s: got \"%s\", want \"%s\"", bad[i].path,
			    bad[i].query ? bad[i].query : "",
			    logs_msg(bad[i].path, bad[i].query, &l), bad[i].msg);

	assert_string_equal(logs_msg("/containerLogs/ns/pod/c", NULL, &l), "");
	assert_string_equal(l.ns, "ns");
	assert_string_equal(l.pod, "pod");
	assert_string_equal(l.container, "c");
	assert_int_equal(l.opts.tail_lines, -1);
	assert_int_equal(l.opts.limit_bytes, -1);
	assert_int_equal(l.opts.since_ns, 0);
	assert_int_equal(l.opts.streams, 0);
	assert_false(l.opts.follow || l.opts.timestamps || l.previous);
	request_logs_clear(&l);

	assert_string_equal(logs_msg("/containerLogs/ns/pod/c",
	                        "tailLines=10&limitBytes=500&sinceSeconds=60&stream=Stderr&"
	                        "follow=true&timestamps=1&previous=true",
	                        &l),
	    "");
	assert_int_equal(l.opts.tail_lines, 10);
	assert_int_equal(l.opts.limit_bytes, 500);
	assert_int_equal(l.opts.since_ns, 940LL * 1000000000LL);
	assert_int_equal(l.opts.streams, LOGREADER_STDERR);
	assert_true(l.opts.follow && l.opts.timestamps && l.previous);
	request_logs_clear(&l);

	/* since before 1970: everything (it overflowed) */
	assert_string_equal(
	    logs_msg("/containerLogs/ns/pod/c", "sinceSeconds=9223372036854775807", &l), "");
	assert_int_equal(l.opts.since_ns, 0);
	request_logs_clear(&l);
	assert_string_equal(logs_msg("/containerLogs/ns/pod/c", "sinceSeconds=1000", &l), "");
	assert_int_equal(l.opts.since_ns, 0);
	request_logs_clear(&l);

	assert_string_equal(logs_msg("/containerLogs/ns/pod/c",
	                        "sinceTime=1970-01-01T00:01:00.5Z&stream=Stdout&follow=yes", &l),
	    "");
	assert_int_equal(l.opts.since_ns, 60500000000LL);
	assert_int_equal(l.opts.streams, LOGREADER_STDOUT);
	assert_false(l.opts.follow); /* only "true" or "1" */
	request_logs_clear(&l);
}

/* As logs_msg, for a stream. */
static char *
stream_msg(enum request_route route, const char *path, const char *query, struct request_stream *s)
{
	static char buf[256];
	char       *msg;

	if (request_parse_stream(route, path, query, s, &msg) == 0) {
		assert_null(msg);
		return "";
	}
	assert_non_null(msg);
	assert_null(s->buf);
	snprintf(buf, sizeof(buf), "%s", msg);
	free(msg);
	return buf;
}

static void
test_stream(void **state)
{
	static const struct {
		enum request_route route;
		const char        *path, *query, *msg;
	} bad[] = {
		{ REQUEST_EXEC, "/exec/ns/pod", "command=ls&output=1",
		    "Bad Request: unexpected path" },
		{ REQUEST_EXEC, "/exec/ns/pod/u/c/x", "command=ls&output=1",
		    "Bad Request: unexpected path" },
		{ REQUEST_EXEC, "/exec/ns//c", "command=ls&output=1",
		    "Bad Request: unexpected path" },
		{ REQUEST_EXEC, "/attach/ns/pod/c", "command=ls&output=1",
		    "Bad Request: unexpected path" },
		{ REQUEST_LOGS, "/exec/ns/pod/c", "command=ls&output=1",
		    "Bad Request: unexpected path" },
		{ REQUEST_PORTFORWARD, "/portForward/ns", "port=80",
		    "Bad Request: unexpected path" },
		{ REQUEST_PORTFORWARD, "/portForward/ns/pod/uid/x", "port=80",
		    "Bad Request: unexpected path" },
		{ REQUEST_EXEC, "/exec/ns/pod/c", "command=ls&output",
		    "Bad Request: malformed query" },
		{ REQUEST_EXEC, "/exec/ns/pod/c", "output=1",
		    "you must specify a command and at least one of stdin, stdout, stderr" },
		{ REQUEST_EXEC, "/exec/ns/pod/c", "command=ls",
		    "you must specify a command and at least one of stdin, stdout, stderr" },
		{ REQUEST_EXEC, "/exec/ns/pod/c", "command=ls&tty=1&error=1",
		    "you must specify a command and at least one of stdin, stdout, stderr" },
		{ REQUEST_ATTACH, "/attach/ns/pod/c", "output=0",
		    "you must specify at least one of stdin, stdout, stderr" },
		{ REQUEST_PORTFORWARD, "/portForward/ns/pod", "port=0", "invalid port 0" },
		{ REQUEST_PORTFORWARD, "/portForward/ns/pod", "port=80&port=65536",
		    "invalid port 65536" },
		{ REQUEST_PORTFORWARD, "/portForward/ns/pod", "port=", "invalid port " },
		{ REQUEST_PORTFORWARD, "/portForward/ns/pod", "port=8o", "invalid port 8o" },
	};
	struct request_stream s;
	size_t                i;

	(void)state;
	for (i = 0; i < nitems(bad); i++)
		if (strcmp(stream_msg(bad[i].route, bad[i].path, bad[i].query, &s), bad[i].msg) !=
		    0)
			fail_msg("%s?%s: got \"%s\", want \"%s\"", bad[i].path, bad[i].query,
			    stream_msg(bad[i].route, bad[i].path, bad[i].query, &s), bad[i].msg);

	assert_string_equal(stream_msg(REQUEST_EXEC, "/exec/ns/pod/c",
	                        "command=sh&command=-c&command=echo+a%20b&input=1&output=1&"
	                        "error=1&tty=true",
	                        &s),
	    "");
	assert_string_equal(s.ns, "ns");
	assert_string_equal(s.pod, "pod");
	assert_null(s.uid);
	assert_string_equal(s.container, "c");
	assert_int_equal(s.ncmd, 3);
	assert_string_equal(s.cmd[2], "echo a b");
	assert_true(s.tty && s.in && s.out);
	assert_false(s.err); /* no stderr with a tty */
	request_stream_clear(&s);

	assert_string_equal(
	    stream_msg(REQUEST_ATTACH, "/attach/ns/pod/uid-1/c", "error=1", &s), "");
	assert_string_equal(s.uid, "uid-1");
	assert_string_equal(s.container, "c");
	assert_true(s.err);
	request_stream_clear(&s);

	assert_string_equal(
	    stream_msg(REQUEST_PORTFORWARD, "/portForward/ns/pod/uid-2", "port=80&port=8080", &s),
	    "");
	assert_string_equal(s.uid, "uid-2");
	assert_null(s.container);
	assert_int_equal(s.nports, 2);
	assert_int_equal(s.ports[1], 8080);
	request_stream_clear(&s);
}

int
main(void)
{
	const struct CMUnitTest t[] = {
		cmocka_unit_test(test_clean_path),
		cmocka_unit_test(test_route),
		cmocka_unit_test(test_logs),
		cmocka_unit_test(test_stream),
	};

	return cmocka_run_group_tests_name("server_request", t, NULL, NULL);
}
