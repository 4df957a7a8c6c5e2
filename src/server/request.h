/* request.h — what the node server reads from a request before serving it (the kubelet's
 * pkg/kubelet/server/server.go): the path, cleaned; the route it takes; the parameters of
 * /containerLogs (the kubelet's PodLogOptions) and of /exec, /attach and /portForward (its
 * NewOptions and port list). Pure: no server state, no pod lookup, no I/O; libevent only for
 * its URI decoder and query parser, as evhttp parsed the request line. A request that
 * cannot be served gets the text of its 400 reply from here, so the checks come before the
 * pod is looked up, as in the kubelet.
 */
#ifndef KLET_SERVER_REQUEST_H
#define KLET_SERVER_REQUEST_H

#include <stddef.h>
#include <stdint.h>

#include <event2/http.h>

#include "core/logreader.h"

/* evhttp's limits and methods for every listener. */
#define REQUEST_MAX_HEADERS (16 * 1024) /* request line and headers */
#define REQUEST_MAX_BODY    (64 * 1024)
#define REQUEST_METHODS                                                                            \
	(EVHTTP_REQ_GET | EVHTTP_REQ_POST | EVHTTP_REQ_HEAD | EVHTTP_REQ_PUT | EVHTTP_REQ_DELETE | \
	    EVHTTP_REQ_OPTIONS | EVHTTP_REQ_PATCH)

/* "GET", "POST", ... ("OTHER" for the rest). A static string. */
const char *request_method_name(enum evhttp_cmd_type);

/* The path that is served, from the request's raw (still encoded) path: decoded, no NUL,
 * no encoded slash, no "." or ".." segment. Allocated (free it), or NULL: 400. */
char *request_clean_path(const char *raw);

enum request_route {
	REQUEST_NOT_FOUND,   /* 404 */
	REQUEST_NOT_ALLOWED, /* 405 */
	REQUEST_HEALTHZ,
	REQUEST_PODS,
	REQUEST_RUNNINGPODS,
	REQUEST_METRICS, /* /metrics and below */
	REQUEST_STATS,   /* /stats and below */
	REQUEST_LOGS,    /* /containerLogs/... */
	REQUEST_EXEC,
	REQUEST_ATTACH,
	REQUEST_PORTFORWARD,
};

/* Where a cleaned path goes on a listener: tls (the authenticated port: logs and streams
 * only there), healthz_only (the healthz port). */
enum request_route request_route(const char *path, enum evhttp_cmd_type, int tls, int healthz_only);

/* GET /containerLogs/NAMESPACE/POD/CONTAINER?tailLines=&limitBytes=&sinceSeconds=&
 * sinceTime=&stream=&follow=&timestamps=&previous= */
struct request_logs {
	const char           *ns, *pod, *container; /* into buf */
	struct logreader_opts opts;                 /* since_ns absolute */
	int                   previous;
	char                 *buf;
};

/* path: the cleaned path; query: the raw query or NULL; now_ns: the wall clock in Unix
 * nanoseconds (sinceSeconds counts back from it). 0 with *out filled (clear it), or -1 with
 * *msg the 400 reply's text (allocated; *out is then clear). */
int request_parse_logs(
    const char *path, const char *query, int64_t now_ns, struct request_logs *out, char **msg);
void request_logs_clear(struct request_logs *);

/* POST|GET /exec|/attach/NS/POD[/UID]/CONTAINER?command=&tty=&input=&output=&error=,
 * /portForward/NS/POD[/UID]?port= */
#define REQUEST_MAX_ARGS 64 /* commands words and ports; more are ignored */

struct request_stream {
	const char *ns, *pod;
	const char *uid;       /* NULL when the path has none */
	const char *container; /* NULL for portForward */
	char       *cmd[REQUEST_MAX_ARGS];
	size_t      ncmd;
	int         tty, in, out, err; /* err is off with a tty, as the kubelet */
	int32_t     ports[REQUEST_MAX_ARGS];
	size_t      nports;
	char       *buf;
};

/* route: REQUEST_EXEC, REQUEST_ATTACH or REQUEST_PORTFORWARD; otherwise as
 * request_parse_logs. */
int  request_parse_stream(enum request_route route, const char *path, const char *query,
     struct request_stream *out, char **msg);
void request_stream_clear(struct request_stream *);

#endif
