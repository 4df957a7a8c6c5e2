/* request.c — the node server's request parsing (see request.h). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <event2/http.h>
#include <event2/keyvalq_struct.h>
#include <sys/queue.h>

#include "core/util.h"
#include "server/auth.h"
#include "server/request.h"

const char *
request_method_name(enum evhttp_cmd_type m)
{
	switch (m) {
	case EVHTTP_REQ_GET:
		return "GET";
	case EVHTTP_REQ_POST:
		return "POST";
	case EVHTTP_REQ_HEAD:
		return "HEAD";
	case EVHTTP_REQ_PUT:
		return "PUT";
	case EVHTTP_REQ_DELETE:
		return "DELETE";
	case EVHTTP_REQ_OPTIONS:
		return "OPTIONS";
	case EVHTTP_REQ_PATCH:
		return "PATCH";
	default:
		return "OTHER";
	}
}

char *
request_clean_path(const char *raw)
{
	size_t      len = 0;
	char       *p;
	const char *seg;

	if (raw == NULL || *raw != '/' || strcasestr(raw, "%2f") != NULL)
		return NULL;
	p = evhttp_uridecode(raw, 0, &len);
	if (p == NULL || strlen(p) != len) {
		free(p);
		return NULL;
	}
	for (seg = p; seg != NULL; seg = strchr(seg + 1, '/'))
		if (strncmp(seg, "/..", 3) == 0 && (seg[3] == '/' || seg[3] == '\0'))
			break;
		else if (strncmp(seg, "/.", 2) == 0 && (seg[2] == '/' || seg[2] == '\0'))
			break;
	if (seg != NULL) {
		free(p);
		return NULL;
	}
	return p;
}

enum request_route
request_route(const char *path, enum evhttp_cmd_type m, int tls, int healthz_only)
{
	if (auth_is_subpath(path, "/healthz"))
		return REQUEST_HEALTHZ;
	if (healthz_only)
		return REQUEST_NOT_FOUND;
	if (tls && (m == EVHTTP_REQ_GET || m == EVHTTP_REQ_POST)) {
		if (strncmp(path, "/exec/", 6) == 0)
			return REQUEST_EXEC;
		if (strncmp(path, "/attach/", 8) == 0)
			return REQUEST_ATTACH;
		if (strncmp(path, "/portForward/", 13) == 0)
			return REQUEST_PORTFORWARD;
	}
	if (m != EVHTTP_REQ_GET && m != EVHTTP_REQ_HEAD)
		return REQUEST_NOT_ALLOWED;
	if (strcmp(path, "/pods") == 0 || strcmp(path, "/pods/") == 0)
		return REQUEST_PODS;
	if (strcmp(path, "/runningpods/") == 0 || strcmp(path, "/runningpods") == 0)
		return REQUEST_RUNNINGPODS;
	if (auth_is_subpath(path, "/metrics"))
		return REQUEST_METRICS;
	if (auth_is_subpath(path, "/stats"))
		return REQUEST_STATS;
	if (strncmp(path, "/containerLogs/", 15) == 0 && tls) /* not on the read-only port */
		return REQUEST_LOGS;
	return REQUEST_NOT_FOUND;
}

/* A boolean parameter: "true" or "1". */
static int
request_qbool(const struct evkeyvalq *q, const char *k)
{
	const char *v = evhttp_find_header(q, k);

	return v != NULL && (strcmp(v, "true") == 0 || strcmp(v, "1") == 0);
}

/* An integer parameter: 0 when absent, 1 with *out, -1 when not a whole decimal number. */
static int
request_qint(const struct evkeyvalq *q, const char *k, int64_t *out)
{
	const char *v = evhttp_find_header(q, k);
	char       *end;
	long long   n;

	if (v == NULL)
		return 0;
	errno = 0;
	n = strtoll(v, &end, 10);
	if (errno != 0 || *v == '\0' || *end != '\0')
		return -1;
	*out = n;
	return 1;
}

/* Parses query (NULL: none) and hands its parameters to opts; NULL, or the 400 text
 * (allocated): malformed when the query does not parse, else what opts says. */
static char *
request_query(const char *query, const char               *malformed,
    char *(*opts)(const struct evkeyvalq *, void *), void *arg)
{
	struct evkeyvalq q;
	char            *msg;

	TAILQ_INIT(&q);
	if (query != NULL && evhttp_parse_query_str(query, &q) == -1)
		msg = xstrdup(malformed);
	else
		msg = opts(&q, arg);
	evhttp_clear_headers(&q);
	return msg;
}

struct request_logs_ctx {
	int64_t              now_ns;
	struct request_logs *out;
};

/* The logs' checks on parsed parameters; NULL, or the 400 text (allocated). */
static char *
request_logs_opts(const struct evkeyvalq *q, void *arg)
{
	struct request_logs_ctx *c = arg;
	struct request_logs     *out = c->out;
	struct logreader_opts   *o = &out->opts;
	int64_t                  now_ns = c->now_ns;
	int64_t                  tail = -1, limit = -1, since_s = 0;
	int                      rt, rl, rs;
	const char              *since_time, *stream;

	rt = request_qint(q, "tailLines", &tail);
	rl = request_qint(q, "limitBytes", &limit);
	rs = request_qint(q, "sinceSeconds", &since_s);
	since_time = evhttp_find_header(q, "sinceTime");
	stream = evhttp_find_header(q, "stream");
	if (rt == -1 || (rt == 1 && tail < 0))
		return xstrdup("tailLines: must be a non-negative integer");
	if (rl == -1 || (rl == 1 && limit < 1))
		return xstrdup("limitBytes: must be greater than 0");
	if (rs == -1 || (rs == 1 && since_s < 1))
		return xstrdup("sinceSeconds: must be greater than 0");
	if (rs == 1 && since_time != NULL)
		return xstrdup("at most one of `sinceTime` or `sinceSeconds` may be specified");
	if (since_time != NULL &&
	    logreader_parse_time(since_time, strlen(since_time), &o->since_ns) == -1)
		return xsprintf("sinceTime: %s is not an RFC 3339 time", since_time);
	if (rs == 1 && since_s >= now_ns / 1000000000LL)
		o->since_ns = 0; /* before 1970: everything (the product would overflow) */
	else if (rs == 1)
		o->since_ns = now_ns - since_s * 1000000000LL;
	if (stream == NULL || strcmp(stream, "All") == 0 || *stream == '\0')
		o->streams = 0;
	else if (strcmp(stream, "Stdout") == 0)
		o->streams = LOGREADER_STDOUT;
	else if (strcmp(stream, "Stderr") == 0)
		o->streams = LOGREADER_STDERR;
	else
		return xsprintf("stream: %s is not All, Stdout or Stderr", stream);
	o->follow = request_qbool(q, "follow");
	o->timestamps = request_qbool(q, "timestamps");
	o->tail_lines = rt == 1 ? tail : -1;
	o->limit_bytes = rl == 1 ? limit : -1;
	out->previous = request_qbool(q, "previous");
	return NULL;
}

int
request_parse_logs(
    const char *path, const char *query, int64_t now_ns, struct request_logs *out, char **msg)
{
	struct request_logs_ctx c;
	char                   *p, *ns, *name, *ctr;

	memset(out, 0, sizeof(*out));
	*msg = NULL;
	if (strncmp(path, "/containerLogs/", 15) != 0) {
		*msg = xstrdup("Bad Request: expected /containerLogs/NAMESPACE/POD/CONTAINER");
		return -1;
	}
	out->buf = p = xstrdup(path + 15);
	ns = strsep(&p, "/");
	name = p != NULL ? strsep(&p, "/") : NULL;
	ctr = p;
	if (ns == NULL || name == NULL || ctr == NULL || *ns == '\0' || *name == '\0' ||
	    *ctr == '\0' || strchr(ctr, '/') != NULL) {
		request_logs_clear(out);
		*msg = xstrdup("Bad Request: expected /containerLogs/NAMESPACE/POD/CONTAINER");
		return -1;
	}
	c.now_ns = now_ns;
	c.out = out;
	if ((*msg = request_query(query, "malformed query", request_logs_opts, &c)) != NULL) {
		request_logs_clear(out);
		return -1;
	}
	out->ns = ns;
	out->pod = name;
	out->container = ctr;
	return 0;
}

void
request_logs_clear(struct request_logs *l)
{
	free(l->buf);
	memset(l, 0, sizeof(*l));
}

struct request_stream_ctx {
	enum request_route     route;
	struct request_stream *out;
};

/* The stream's options from the parsed query; NULL, or the 400 text (allocated). */
static char *
request_stream_opts(const struct evkeyvalq *q, void *arg)
{
	struct request_stream_ctx *c = arg;
	struct request_stream     *s = c->out;
	enum request_route         route = c->route;
	struct evkeyval           *kv;

	if (route == REQUEST_PORTFORWARD) {
		TAILQ_FOREACH(kv, q, next)
		{
			char *end;
			long  v;

			if (strcmp(kv->key, "port") != 0)
				continue;
			v = strtol(kv->value, &end, 10);
			if (*kv->value == '\0' || *end != '\0' || v < 1 || v > 65535)
				return xsprintf("invalid port %s", kv->value);
			if (s->nports < REQUEST_MAX_ARGS)
				s->ports[s->nports++] = (int32_t)v;
		}
		return NULL;
	}
	s->tty = request_qbool(q, "tty");
	s->in = request_qbool(q, "input");
	s->out = request_qbool(q, "output");
	s->err = request_qbool(q, "error") && !s->tty;
	if (route == REQUEST_ATTACH) {
		if (!(s->in || s->out || s->err))
			return xstrdup("you must specify at least one of stdin, stdout, stderr");
		return NULL;
	}
	TAILQ_FOREACH(kv, q, next)
	if (strcmp(kv->key, "command") == 0 && s->ncmd < REQUEST_MAX_ARGS)
		s->cmd[s->ncmd++] = xstrdup(kv->value);
	if (s->ncmd == 0 || !(s->in || s->out || s->err))
		return xstrdup(
		    "you must specify a command and at least one of stdin, stdout, stderr");
	return NULL;
}

int
request_parse_stream(enum request_route route, const char *path, const char *query,
    struct request_stream *out, char **msg)
{
	static const char *const  prefix[] = { "/exec/", "/attach/", "/portForward/" };
	struct request_stream_ctx c;
	const char               *pre;
	char                     *p, *seg[4];
	size_t                    n = 0;
	int                       pf = route == REQUEST_PORTFORWARD;

	memset(out, 0, sizeof(*out));
	*msg = NULL;
	if (route != REQUEST_EXEC && route != REQUEST_ATTACH && !pf) {
		*msg = xstrdup("Bad Request: unexpected path");
		return -1;
	}
	pre = prefix[route == REQUEST_EXEC ? 0 : route == REQUEST_ATTACH ? 1 : 2];
	if (strncmp(path, pre, strlen(pre)) != 0) {
		*msg = xstrdup("Bad Request: unexpected path");
		return -1;
	}
	out->buf = p = xstrdup(path + strlen(pre));
	while (n < 4 && (seg[n] = strsep(&p, "/")) != NULL && *seg[n] != '\0')
		n++;
	/* NS/POD/CONTAINER or NS/POD/UID/CONTAINER; portForward: NS/POD or NS/POD/UID */
	if (p != NULL || (pf ? (n < 2 || n > 3) : (n < 3 || n > 4))) {
		request_stream_clear(out);
		*msg = xstrdup("Bad Request: unexpected path");
		return -1;
	}
	c.route = route;
	c.out = out;
	if ((*msg = request_query(
	         query, "Bad Request: malformed query", request_stream_opts, &c)) != NULL) {
		request_stream_clear(out);
		return -1;
	}
	out->ns = seg[0];
	out->pod = seg[1];
	if (n == 4 || (pf && n == 3))
		out->uid = seg[2];
	if (!pf)
		out->container = seg[n - 1];
	return 0;
}

void
request_stream_clear(struct request_stream *s)
{
	size_t i;

	for (i = 0; i < s->ncmd; i++)
		free(s->cmd[i]);
	free(s->buf);
	memset(s, 0, sizeof(*s));
}
