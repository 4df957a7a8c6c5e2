/* checks.c — the probes' checks, each an asynchronous operation on the loop:
 * exec through CRI ExecSync, httpGet through http1, tcpSocket as a non-blocking connect. */
#include <sys/socket.h>
#include <sys/types.h>

#include <arpa/inet.h>
#include <errno.h>
#include <event2/event.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cri/cri.h"
#include "net/http1.h"
#include "core/log.h"
#include "prober/grpc_check.h"
#include "prober/internal.h"
#include "core/util.h"

#define PR_MAX_OUTPUT    (10 * 1024) /* the kubelet keeps at most 10 KiB of output */
#define PR_MAX_REDIRECTS 10

struct pr_check {
	struct event_base    *c_base;
	struct cri           *c_cri;
	const struct pr_spec *c_spec; /* borrowed from the caller */
	char                 *c_cid;  /* the container instance probed */
	pr_check_done_fn      c_done;
	void                 *c_arg;
	void (*c_fake_cancel)(void *, void *);
	void             *c_fake_arg;
	enum handler_kind c_kind;
	struct cri_call  *c_call; /* exec */
	struct http1_req *c_req;  /* httpGet */
	struct pr_grpc   *c_grpc; /* grpc */
	int               c_fd;   /* tcpSocket */
	struct event     *c_ev;   /* tcp connect / deferred end */
	char             *c_host;
	int               c_port;
	char             *c_scheme;
	int               c_redirects;
	int               c_fake;
	enum pr_outcome   c_outcome; /* deferred end */
	char             *c_output;
};

static void
pr_check_free(struct pr_check *c)
{
	if (c->c_ev != NULL)
		event_free(c->c_ev);
	if (c->c_fd != -1)
		close(c->c_fd);
	free(c->c_cid);
	free(c->c_host);
	free(c->c_scheme);
	free(c->c_output);
	free(c);
}

/* Ends the check: frees it first, then hands the outcome to the caller. */
static void
pr_check_finish(struct pr_check *c, enum pr_outcome o, const char *output)
{
	pr_check_done_fn done = c->c_done;
	void            *arg = c->c_arg;
	char             buf[PR_MAX_OUTPUT + 1];

	snprintf(buf, sizeof(buf), "%s", output != NULL ? output : "");
	pr_check_free(c);
	done(o, buf, arg);
}

static void
pr_check_deferred_cb(evutil_socket_t fd, short what, void *arg)
{
	struct pr_check *c = arg;
	char            *out = c->c_output;

	(void)fd;
	(void)what;
	c->c_output = NULL;
	pr_check_finish(c, c->c_outcome, out);
	free(out);
}

/* Ends the check on a later loop turn (never inside pr_check_start). */
static void
pr_check_defer(struct pr_check *c, enum pr_outcome o, const char *output)
{
	c->c_outcome = o;
	free(c->c_output);
	c->c_output = xstrdup(output);
	if (c->c_ev != NULL)
		event_free(c->c_ev);
	c->c_ev = event_new(c->c_base, -1, 0, pr_check_deferred_cb, c);
	event_active(c->c_ev, EV_TIMEOUT, 0);
}

void
prober_check_done(void *token, int success, const char *output)
{
	pr_check_finish(token, success ? PR_SUCCESS : PR_FAILURE, output);
}

/* ---- exec ---- */

static void
pr_check_exec_done(
    int code, const char *message, const Runtime__V1__ExecSyncResponse *resp, void *arg)
{
	struct pr_check *c = arg;
	char            *out;
	size_t           n = 0;

	c->c_call = NULL;
	if (code == GRPC_DEADLINE_EXCEEDED ||
	    (code != GRPC_OK && strstr(message, "timeout") != NULL &&
	        strstr(message, "exceeded") != NULL)) {
		pr_check_finish(c, PR_FAILURE, "command timed out");
		return;
	}
	if (code != GRPC_OK) {
		char buf[512];

		snprintf(buf, sizeof(buf), "ExecSync: %s: %s", grpc_code_name(code), message);
		pr_check_finish(c, PR_ERROR, buf);
		return;
	}
	/* The combined output, capped. */
	out = xmalloc(PR_MAX_OUTPUT + 1);
	if (resp->stdout.len > 0) {
		n = resp->stdout.len < PR_MAX_OUTPUT ? resp->stdout.len : PR_MAX_OUTPUT;
		memcpy(out, resp->stdout.data, n);
	}
	if (resp->stderr.len > 0 && n < PR_MAX_OUTPUT) {
		size_t m =
		    resp->stderr.len < PR_MAX_OUTPUT - n ? resp->stderr.len : PR_MAX_OUTPUT - n;

		memcpy(out + n, resp->stderr.data, m);
		n += m;
	}
	out[n] = '\0';
	pr_check_finish(c, resp->exit_code == 0 ? PR_SUCCESS : PR_FAILURE, out);
	free(out);
}

static void
pr_check_exec_start(struct pr_check *c)
{
	const struct pr_spec        *sp = c->c_spec;
	Runtime__V1__ExecSyncRequest req = RUNTIME__V1__EXEC_SYNC_REQUEST__INIT;

	if (c->c_cri == NULL) {
		pr_check_defer(c, PR_ERROR, "no container runtime");
		return;
	}
	req.container_id = c->c_cid;
	req.n_cmd = sp->ps_argc;
	req.cmd = sp->ps_argv;
	req.timeout = sp->ps_timeout;
	/* The runtime enforces the command's timeout; ours is a backstop for a runtime that
	 * does not answer. */
	c->c_call = cri_exec_sync(
	    c->c_cri, &req, (int64_t)sp->ps_timeout * 1000 + 1000, pr_check_exec_done, c, c);
}

/* ---- tcpSocket ---- */

static void
pr_check_tcp_done(evutil_socket_t fd, short what, void *arg)
{
	struct pr_check *c = arg;
	char             buf[512];
	int              err = 0;
	socklen_t        len = sizeof(err);

	(void)fd;
	if (what & EV_TIMEOUT) {
		snprintf(buf, sizeof(buf), "dial tcp %s:%d: i/o timeout", c->c_host, c->c_port);
		pr_check_finish(c, PR_FAILURE, buf);
		return;
	}
	if (getsockopt(c->c_fd, SOL_SOCKET, SO_ERROR, &err, &len) == -1)
		err = errno;
	if (err != 0) {
		snprintf(buf, sizeof(buf), "dial tcp %s:%d: connect: %s", c->c_host, c->c_port,
		    strerror(err));
		pr_check_finish(c, PR_FAILURE, buf);
		return;
	}
	pr_check_finish(c, PR_SUCCESS, NULL);
}

static void
pr_check_tcp_start(struct pr_check *c)
{
	struct sockaddr_storage ss;
	struct sockaddr_in     *sin = (struct sockaddr_in *)&ss;
	struct sockaddr_in6    *sin6 = (struct sockaddr_in6 *)&ss;
	socklen_t               slen;
	struct timeval          tv;
	char                    buf[512];

	memset(&ss, 0, sizeof(ss));
	if (c->c_host == NULL) {
		pr_check_defer(c, PR_FAILURE, "no pod IP to probe");
		return;
	}
	if (inet_pton(AF_INET, c->c_host, &sin->sin_addr) == 1) {
		sin->sin_family = AF_INET;
		sin->sin_port = htons((uint16_t)c->c_port);
		slen = sizeof(*sin);
	} else if (inet_pton(AF_INET6, c->c_host, &sin6->sin6_addr) == 1) {
		sin6->sin6_family = AF_INET6;
		sin6->sin6_port = htons((uint16_t)c->c_port);
		slen = sizeof(*sin6);
	} else {
		snprintf(buf, sizeof(buf), "dial tcp %s:%d: host is not an IP address", c->c_host,
		    c->c_port);
		pr_check_defer(c, PR_FAILURE, buf);
		return;
	}
	if (c->c_port <= 0 || c->c_port > 65535) {
		snprintf(buf, sizeof(buf), "dial tcp %s:%d: invalid port", c->c_host, c->c_port);
		pr_check_defer(c, PR_FAILURE, buf);
		return;
	}
	c->c_fd = socket(ss.ss_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (c->c_fd == -1) {
		snprintf(buf, sizeof(buf), "socket: %s", strerror(errno));
		pr_check_defer(c, PR_ERROR, buf);
		return;
	}
	if (connect(c->c_fd, (struct sockaddr *)&ss, slen) == -1 && errno != EINPROGRESS) {
		snprintf(buf, sizeof(buf), "dial tcp %s:%d: connect: %s", c->c_host, c->c_port,
		    strerror(errno));
		pr_check_defer(c, PR_FAILURE, buf);
		return;
	}
	/* Connected or in progress: writable (or an error) ends it. */
	c->c_ev = event_new(c->c_base, c->c_fd, EV_WRITE, pr_check_tcp_done, c);
	tv.tv_sec = c->c_spec->ps_timeout;
	tv.tv_usec = 0;
	event_add(c->c_ev, &tv);
}

/* ---- httpGet ---- */

static void pr_check_http_get(struct pr_check *, const char *path);

/* Splits a Location into a same-host path: returns 1 and sets *path (malloc'd) when it is
 * relative or names the probed host; 0 otherwise. */
static int
pr_check_http_same_host(struct pr_check *c, const char *loc, char **path)
{
	const char *p, *slash;
	size_t      hlen;

	if (loc[0] == '/') {
		*path = xstrdup(loc);
		return 1;
	}
	if (strncasecmp(loc, "http://", 7) == 0)
		p = loc + 7;
	else if (strncasecmp(loc, "https://", 8) == 0)
		p = loc + 8;
	else
		return 0;
	slash = strchr(p, '/');
	hlen = slash != NULL ? (size_t)(slash - p) : strlen(p);
	/* host or host:port; the kubelet compares the host name only. */
	{
		char *hp = xstrndup(p, hlen), *colon;
		int   same;

		if (hp[0] == '[') {
			colon = strchr(hp, ']');
			if (colon != NULL)
				*colon = '\0';
			same = strcmp(hp + 1, c->c_host) == 0;
		} else {
			colon = strrchr(hp, ':');
			if (colon != NULL) {
				c->c_port = atoi(colon + 1);
				*colon = '\0';
			}
			same = strcmp(hp, c->c_host) == 0;
		}
		free(hp);
		if (!same)
			return 0;
	}
	if (strncasecmp(loc, "https://", 8) == 0) {
		free(c->c_scheme);
		c->c_scheme = xstrdup("HTTPS");
	} else {
		free(c->c_scheme);
		c->c_scheme = xstrdup("HTTP");
	}
	*path = xstrdup(slash != NULL ? slash : "/");
	return 1;
}

static void
pr_check_http_done(const struct http1_result *r, void *arg)
{
	struct pr_check *c = arg;
	char             buf[1024];
	char            *path = NULL;

	c->c_req = NULL;
	if (r->error != NULL) {
		snprintf(buf, sizeof(buf), "Get \"%s://%s:%d\": %s",
		    strcasecmp(c->c_scheme, "HTTPS") == 0 ? "https" : "http", c->c_host, c->c_port,
		    r->error);
		pr_check_finish(c, PR_FAILURE, buf);
		return;
	}
	if (r->status >= 300 && r->status < 400 && r->location != NULL && *r->location != '\0') {
		if (c->c_redirects >= PR_MAX_REDIRECTS) {
			pr_check_finish(c, PR_FAILURE, "stopped after 10 redirects");
			return;
		}
		if (pr_check_http_same_host(c, r->location, &path)) {
			c->c_redirects++;
			pr_check_http_get(c, path);
			free(path);
			return;
		}
		/* Another host: not followed, and not a failure (the kubelet warns). */
		pr_check_finish(c, PR_SUCCESS, "Probe terminated redirects");
		return;
	}
	if (r->status >= 200 && r->status < 400) {
		pr_check_finish(c, PR_SUCCESS, NULL);
		return;
	}
	snprintf(buf, sizeof(buf), "HTTP probe failed with statuscode: %d", r->status);
	pr_check_finish(c, PR_FAILURE, buf);
}

static void
pr_check_http_get(struct pr_check *c, const char *path)
{
	const struct pr_spec *sp = c->c_spec;

	c->c_req = http1_get(c->c_base, c->c_host, c->c_port, path, sp->ps_headers, sp->ps_nheaders,
	    c->c_scheme, (int64_t)sp->ps_timeout * 1000, PR_MAX_OUTPUT, pr_check_http_done, c);
}

static void
pr_check_http_start(struct pr_check *c)
{
	if (c->c_host == NULL) {
		pr_check_defer(c, PR_FAILURE, "no pod IP to probe");
		return;
	}
	c->c_scheme = xstrdup(c->c_spec->ps_scheme);
	pr_check_http_get(c, c->c_spec->ps_path);
}

/* ---- grpc ---- */

static void
pr_check_grpc_done(int ok, const char *msg, void *arg)
{
	struct pr_check *c = arg;

	c->c_grpc = NULL;
	pr_check_finish(c, ok ? PR_SUCCESS : PR_FAILURE, msg);
}

/* ---- dispatch ---- */

struct pr_check *
pr_check_start(const struct pr_check_args *a, pr_check_done_fn done, void *arg)
{
	struct pr_check      *c = xcalloc(1, sizeof(*c));
	const struct pr_spec *sp = a->spec;

	c->c_base = a->base;
	c->c_cri = a->cri;
	c->c_spec = sp;
	c->c_cid = xstrdup(a->container_id);
	c->c_done = done;
	c->c_arg = arg;
	c->c_kind = sp->ps_kind;
	c->c_fd = -1;
	c->c_host = xstrdup(sp->ps_host != NULL ? sp->ps_host : a->pod_ip);
	c->c_port = sp->ps_port;
	if (a->fake != NULL) {
		c->c_fake = 1;
		c->c_fake_cancel = a->fake_cancel;
		c->c_fake_arg = a->fake_arg;
		a->fake(c, a->uid, a->container, a->kind, a->fake_arg);
		return c;
	}
	switch (c->c_kind) {
	case HANDLER_EXEC:
		pr_check_exec_start(c);
		break;
	case HANDLER_HTTP_GET:
		pr_check_http_start(c);
		break;
	case HANDLER_TCP_SOCKET:
		pr_check_tcp_start(c);
		break;
	case HANDLER_GRPC:
		if (c->c_host == NULL) {
			pr_check_defer(c, PR_FAILURE, "no pod IP to probe");
			break;
		}
		c->c_grpc = pr_grpc_check(c->c_base, c->c_host, c->c_port, sp->ps_grpc_service,
		    (int64_t)sp->ps_timeout * 1000, pr_check_grpc_done, c);
		break;
	default:
		pr_check_defer(c, PR_ERROR, "unsupported probe handler");
		break;
	}
	return c;
}

void
pr_check_cancel(struct pr_check *c)
{
	if (c == NULL)
		return;
	if (c->c_fake && c->c_fake_cancel != NULL)
		c->c_fake_cancel(c, c->c_fake_arg);
	if (c->c_call != NULL)
		cri_cancel(c->c_call);
	if (c->c_req != NULL)
		http1_cancel(c->c_req);
	pr_grpc_cancel(c->c_grpc);
	pr_check_free(c);
}
