/* server.c — podctl's server: a read-only JSON-lines protocol on a local unix socket. */
#include <sys/queue.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/un.h>

#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <event2/buffer.h>
#include <event2/bufferevent.h>
#include <event2/event.h>
#include <event2/listener.h>

#include "core/config.h"
#include "cri/cri.h"
#include "ctl/ctl.h"
#include "ctl/inspect.h"
#include "ctl/internal.h"
#include "ctl/reply.h"
#include "node/events.h"
#include "core/json.h"
#include "kuberuntime/kuberuntime.h"
#include "core/log.h"
#include "core/loop.h"
#include "node/pleg.h"
#include "pod/pod.h"
#include "node/podcache.h"
#include "logic/podstatus.h"
#include "node/podworkers.h"
#include "prober/prober.h"
#include "store/store.h"
#include "core/util.h"

/* ---- connections ---- */

static void ctl_client_drop(struct ctl_client *, const char *why);
static void ctl_listener_update(struct ctl *);

static void
ctl_reap(evutil_socket_t fd, short what, void *arg)
{
	struct ctl        *c = arg;
	struct ctl_client *cc;

	(void)fd;
	(void)what;
	while ((cc = TAILQ_FIRST(&c->c_dead)) != NULL) {
		TAILQ_REMOVE(&c->c_dead, cc, cc_entry);
		bufferevent_free(cc->cc_bev);
		free(cc);
	}
	ctl_listener_update(c);
}

/* Takes the client out of service; it is freed on a later loop turn. */
static void
ctl_client_drop(struct ctl_client *cc, const char *why)
{
	struct ctl *c = cc->cc_ctl;

	if (cc->cc_dead)
		return;
	cc->cc_dead = 1;
	ctl_inspect_cancel(cc->cc_inspect); /* its answer has nobody to go to */
	cc->cc_inspect = NULL;
	log_v(2, "podctl: client pid=%ld uid=%ld closed: %s", (long)cc->cc_pid, (long)cc->cc_uid,
	    why);
	bufferevent_disable(cc->cc_bev, EV_READ | EV_WRITE);
	bufferevent_setcb(cc->cc_bev, NULL, NULL, NULL, NULL);
	TAILQ_REMOVE(&c->c_clients, cc, cc_entry);
	c->c_nclients--;
	TAILQ_INSERT_TAIL(&c->c_dead, cc, cc_entry);
	event_active(c->c_reaper, EV_TIMEOUT, 0);
}

/* Queues one generated line; drops the client when its unsent output is over the bound.
 * Returns 0, or -1 when the client was dropped. */
static int
ctl_client_send(struct ctl_client *cc, yajl_gen g)
{
	struct ctl          *c = cc->cc_ctl;
	struct evbuffer     *out = bufferevent_get_output(cc->cc_bev);
	const unsigned char *buf;
	size_t               len;

	if (yajl_gen_get_buf(g, &buf, &len) != yajl_gen_status_ok)
		return 0;
	evbuffer_add(out, buf, len);
	evbuffer_add(out, "\n", 1);
	if (evbuffer_get_length(out) > c->c_deps.max_output) {
		c->c_dropped++;
		log_warnx("podctl: client pid=%ld dropped: %zu bytes unread (limit %zu)",
		    (long)cc->cc_pid, evbuffer_get_length(out), c->c_deps.max_output);
		ctl_client_drop(cc, "output over the limit");
		return -1;
	}
	return 0;
}

/* Sends an error line, then closes once it is written. */
static void
ctl_client_fail(struct ctl_client *cc, const char *msg)
{
	yajl_gen g = json_gen_new(0);

	ctl_gen_error(g, msg);
	if (ctl_client_send(cc, g) == 0) {
		struct timeval rto = { 2, 0 }, wto = { 10, 0 };

		/* Input still arriving is read and discarded until the error is out: closing
		 * with unread input would reset the connection before the peer reads it. */
		cc->cc_closing = 1;
		bufferevent_set_timeouts(cc->cc_bev, &rto, &wto);
		bufferevent_enable(cc->cc_bev, EV_READ | EV_WRITE);
	}
	yajl_gen_free(g);
}

static void ctl_read_cb(struct bufferevent *, void *);

/* The runtime answered an inspect: the reply goes out and the client's next requests are
 * read again. */
static void
ctl_inspect_reply(yajl_gen g, void *arg)
{
	struct ctl_client *cc = arg;

	cc->cc_inspect = NULL;
	if (cc->cc_dead || ctl_client_send(cc, g) == -1)
		return;
	bufferevent_enable(cc->cc_bev, EV_READ);
	ctl_read_cb(cc->cc_bev, cc); /* requests that arrived meanwhile */
}

/* Handles one request; returns -1 when the client was dropped or is closing. */
static int
ctl_handle(struct ctl_client *cc, const char *line, size_t len)
{
	struct ctl        *c = cc->cc_ctl;
	struct ctl_request rq;
	struct ctl_view    view;
	char               err[640];
	yajl_gen           g;
	int                rc;

	if (ctl_parse_request(line, len, &rq, err, sizeof(err)) == -1) {
		/* A malformed request is answered; the connection stays usable. */
		g = json_gen_new(0);
		ctl_gen_error(g, err);
		rc = ctl_client_send(cc, g);
		yajl_gen_free(g);
		return rc;
	}
	view.deps = &c->c_deps;
	view.nclients = c->c_nclients;
	g = json_gen_new(0);
	if (strcmp(rq.cmd, "inspect") == 0) {
		/* Answered when the runtime is; the client's next lines wait for it. */
		cc->cc_inspect = ctl_inspect_start(&c->c_deps, rq.name, ctl_inspect_reply, cc, g);
		if (cc->cc_inspect != NULL) {
			yajl_gen_free(g);
			bufferevent_disable(cc->cc_bev, EV_READ);
			return 0;
		}
	} else
		ctl_reply_build(&view, &rq, g);
	rc = ctl_client_send(cc, g);
	yajl_gen_free(g);
	if (rc == 0 && strcmp(rq.cmd, "events") == 0 && rq.watch && !cc->cc_watch) {
		struct timeval wto = { 10, 0 };

		cc->cc_watch = 1; /* waits for events: no idle timeout, only the write one */
		bufferevent_set_timeouts(cc->cc_bev, NULL, &wto);
	}
	return rc;
}

static void
ctl_read_cb(struct bufferevent *bev, void *arg)
{
	struct ctl_client  *cc = arg;
	struct evbuffer    *in = bufferevent_get_input(bev);
	struct evbuffer_ptr eol;
	size_t              n, eol_len;
	char               *line;

	cc->cc_got_input = 1;
	if (cc->cc_closing) {
		evbuffer_drain(in, evbuffer_get_length(in));
		if (evbuffer_get_length(bufferevent_get_output(bev)) == 0)
			ctl_client_drop(cc, "closed after an error");
		return;
	}
	while (!cc->cc_dead && !cc->cc_closing && cc->cc_inspect == NULL) {
		eol = evbuffer_search_eol(in, NULL, &eol_len, EVBUFFER_EOL_LF);
		if (eol.pos < 0) {
			if (evbuffer_get_length(in) > CTL_MAX_REQUEST)
				ctl_client_fail(cc, "request line over the limit of 65536 bytes");
			return;
		}
		n = (size_t)eol.pos;
		if (n > CTL_MAX_REQUEST) {
			ctl_client_fail(cc, "request line over the limit of 65536 bytes");
			return;
		}
		line = xmalloc(n + 1);
		evbuffer_remove(in, line, n);
		evbuffer_drain(in, eol_len);
		line[n] = '\0';
		if (n > 0 && line[n - 1] == '\r')
			line[--n] = '\0';
		if (n > 0 && ctl_handle(cc, line, n) == -1) {
			free(line);
			return;
		}
		free(line);
	}
}

static void
ctl_write_cb(struct bufferevent *bev, void *arg)
{
	struct ctl_client *cc = arg;

	/* Wait for the peer's request (read above) or a short read timeout, then close. */
	if (cc->cc_closing && evbuffer_get_length(bufferevent_get_output(bev)) == 0 &&
	    cc->cc_got_input)
		ctl_client_drop(cc, "closed after an error");
}

static void
ctl_event_cb(struct bufferevent *bev, short what, void *arg)
{
	struct ctl_client *cc = arg;

	(void)bev;
	if (what & BEV_EVENT_EOF)
		ctl_client_drop(cc, "end of stream");
	else if (what & BEV_EVENT_TIMEOUT)
		ctl_client_drop(
		    cc, (what & BEV_EVENT_READING) && !cc->cc_closing ? "idle" : "timeout");
	else if (what & BEV_EVENT_ERROR)
		ctl_client_drop(cc, evutil_socket_error_to_string(EVUTIL_SOCKET_ERROR()));
}

/* 1 if gid is among the supplementary groups of process pid (from /proc). */
static int
ctl_proc_in_group(pid_t pid, gid_t gid)
{
	char  path[64], line[4096], *p, *end;
	FILE *f;
	int   found = 0;

	snprintf(path, sizeof(path), "/proc/%ld/status", (long)pid);
	if ((f = fopen(path, "r")) == NULL)
		return -1;
	while (fgets(line, sizeof(line), f) != NULL) {
		if (strncmp(line, "Groups:", 7) != 0)
			continue;
		for (p = line + 7;;) {
			unsigned long v = strtoul(p, &end, 10);

			if (end == p)
				break;
			if ((gid_t)v == gid)
				found = 1;
			p = end;
		}
		fclose(f);
		return found;
	}
	fclose(f);
	return -1;
}

/* 1 if the user (by name) lists gid among its groups. */
static int
ctl_user_in_group(uid_t uid, gid_t pgid, gid_t gid)
{
	struct passwd pw, *pwp = NULL;
	char          buf[4096];
	gid_t         groups[256];
	int           i, n = 256;

	if (getpwuid_r(uid, &pw, buf, sizeof(buf), &pwp) != 0 || pwp == NULL)
		return 0;
	if (getgrouplist(pw.pw_name, pgid, groups, &n) == -1)
		return 0;
	for (i = 0; i < n; i++)
		if (groups[i] == gid)
			return 1;
	return 0;
}

static int
ctl_peer_allowed(struct ctl *c, const struct ucred *cr)
{
	int r;

	if (cr->uid == 0 || cr->uid == geteuid())
		return 1;
	if (!c->c_has_group)
		return 0;
	if (cr->gid == c->c_gid)
		return 1;
	r = ctl_proc_in_group(cr->pid, c->c_gid);
	if (r >= 0)
		return r;
	return ctl_user_in_group(cr->uid, cr->gid, c->c_gid);
}

static void
ctl_accept_cb(
    struct evconnlistener *l, evutil_socket_t fd, struct sockaddr *sa, int salen, void *arg)
{
	struct ctl        *c = arg;
	struct ctl_client *cc;
	struct ucred       cr;
	socklen_t          crlen = sizeof(cr);
	struct timeval     wto = { 10, 0 }, rto = { CTL_IDLE_TIMEOUT_S, 0 };
	int                busy = c->c_nclients >= CTL_MAX_CLIENTS;

	(void)l;
	(void)sa;
	(void)salen;
	memset(&cr, 0, sizeof(cr));
	if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cr, &crlen) == -1) {
		log_warn("podctl: SO_PEERCRED");
		evutil_closesocket(fd);
		return;
	}
	cc = xcalloc(1, sizeof(*cc));
	cc->cc_ctl = c;
	cc->cc_pid = cr.pid;
	cc->cc_uid = cr.uid;
	cc->cc_bev = bufferevent_socket_new(c->c_deps.base, fd, BEV_OPT_CLOSE_ON_FREE);
	if (cc->cc_bev == NULL) {
		evutil_closesocket(fd);
		free(cc);
		return;
	}
	TAILQ_INSERT_TAIL(&c->c_clients, cc, cc_entry);
	c->c_nclients++;
	ctl_listener_update(c);
	bufferevent_setcb(cc->cc_bev, ctl_read_cb, ctl_write_cb, ctl_event_cb, cc);
	/* A refused or closing peer that never reads goes away after the write timeout; one
	 * that sends nothing after the idle timeout. */
	bufferevent_set_timeouts(cc->cc_bev, &rto, &wto);
	if (busy) {
		char msg[128];

		c->c_busy++;
		log_warnx("podctl: refused pid=%ld uid=%ld: too many clients (limit %d)",
		    (long)cr.pid, (long)cr.uid, CTL_MAX_CLIENTS);
		snprintf(msg, sizeof(msg), "too many podctl clients (limit %d); try again later",
		    CTL_MAX_CLIENTS);
		ctl_client_fail(cc, msg);
		return;
	}
	if (!ctl_peer_allowed(c, &cr)) {
		char msg[256];

		c->c_refused++;
		log_warnx("podctl: refused pid=%ld uid=%ld gid=%ld: not root nor in the "
		          "allowed group",
		    (long)cr.pid, (long)cr.uid, (long)cr.gid);
		snprintf(msg, sizeof(msg), "permission denied: uid %ld is not root%s%s",
		    (long)cr.uid, c->c_has_group ? " nor a member of group " : "",
		    c->c_has_group ? c->c_deps.cfg->ctl_group : " (no --podctl-group set)");
		ctl_client_fail(cc, msg);
		return;
	}
	log_v(2, "podctl: client pid=%ld uid=%ld connected", (long)cr.pid, (long)cr.uid);
	bufferevent_enable(cc->cc_bev, EV_READ | EV_WRITE);
}

static void
ctl_listener_event(const struct ev_record *e, int is_new, void *arg)
{
	struct ctl        *c = arg;
	struct ctl_client *cc, *next;
	yajl_gen           g;

	(void)is_new;
	/* Built only when some client watches (podctl get events -w): none, most of the time. */
	TAILQ_FOREACH(cc, &c->c_clients, cc_entry)
	if (cc->cc_watch && !cc->cc_dead && !cc->cc_closing)
		break;
	if (cc == NULL)
		return;
	g = json_gen_new(0);
	yajl_gen_map_open(g);
	json_gen_kv_int(g, "v", CTL_PROTO_VERSION);
	json_gen_key(g, "event");
	ctl_gen_event(g, e);
	yajl_gen_map_close(g);
	for (cc = TAILQ_FIRST(&c->c_clients); cc != NULL; cc = next) {
		next = TAILQ_NEXT(cc, cc_entry);
		if (cc->cc_watch && !cc->cc_dead && !cc->cc_closing)
			ctl_client_send(cc, g);
	}
	yajl_gen_free(g);
}

/* Accepts while neither paused nor full. */
static void
ctl_listener_update(struct ctl *c)
{
	int full = c->c_nclients >= CTL_MAX_CLIENTS + CTL_MAX_REFUSING;

	if (c->c_listener == NULL)
		return;
	if (full && !c->c_full)
		log_warnx("podctl: %zu connections; not accepting until one closes", c->c_nclients);
	c->c_full = full;
	if (c->c_paused || c->c_full)
		evconnlistener_disable(c->c_listener);
	else
		evconnlistener_enable(c->c_listener);
}

static void
ctl_resume_cb(evutil_socket_t fd, short what, void *arg)
{
	struct ctl *c = arg;

	(void)fd;
	(void)what;
	c->c_paused = 0;
	ctl_listener_update(c);
}

/* accept() failed with more than a retry-at-once error (EMFILE, ENFILE, ENOBUFS...): the
 * pending connection stays, so accepting again at once would spin. Pause for a second, as
 * tmux's server_accept does. */
static void
ctl_accept_error_cb(struct evconnlistener *l, void *arg)
{
	struct ctl    *c = arg;
	struct timeval tv = { 1, 0 };
	int            e = EVUTIL_SOCKET_ERROR();

	(void)l;
	c->c_accept_errors++;
	log_warnx("podctl: accept: %s; not accepting for 1s (%zu clients)",
	    evutil_socket_error_to_string(e), c->c_nclients);
	c->c_paused = 1;
	ctl_listener_update(c);
	evtimer_add(c->c_resume, &tv);
}

static int
ctl_listen(struct ctl *c, char *err, size_t errlen)
{
	struct sockaddr_un sun;
	struct stat        st;
	int                fd;

	memset(&sun, 0, sizeof(sun));
	sun.sun_family = AF_UNIX;
	if (strlen(c->c_path) >= sizeof(sun.sun_path)) {
		snprintf(err, errlen, "--podctl-socket %s: path too long", c->c_path);
		return -1;
	}
	memcpy(sun.sun_path, c->c_path, strlen(c->c_path) + 1);
	if (lstat(c->c_path, &st) == 0) {
		if (!S_ISSOCK(st.st_mode)) {
			snprintf(err, errlen, "--podctl-socket %s: exists and is not a socket",
			    c->c_path);
			return -1;
		}
		unlink(c->c_path); /* stale: the root-dir lock says no other kletd runs */
	}
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	if (fd == -1) {
		snprintf(err, errlen, "podctl socket: %s", strerror(errno));
		return -1;
	}
	if (bind(fd, (struct sockaddr *)&sun, sizeof(sun)) == -1) {
		snprintf(err, errlen, "--podctl-socket %s: bind: %s", c->c_path, strerror(errno));
		close(fd);
		return -1;
	}
	if (chmod(c->c_path, 0660) == -1 ||
	    (c->c_has_group && chown(c->c_path, (uid_t)-1, c->c_gid) == -1)) {
		snprintf(
		    err, errlen, "--podctl-socket %s: chmod/chown: %s", c->c_path, strerror(errno));
		close(fd);
		unlink(c->c_path);
		return -1;
	}
	c->c_listener = evconnlistener_new(c->c_deps.base, ctl_accept_cb, c,
	    LEV_OPT_CLOSE_ON_FREE | LEV_OPT_CLOSE_ON_EXEC, 64, fd);
	if (c->c_listener == NULL) {
		snprintf(err, errlen, "--podctl-socket %s: listen failed", c->c_path);
		close(fd);
		unlink(c->c_path);
		return -1;
	}
	evconnlistener_set_error_cb(c->c_listener, ctl_accept_error_cb);
	return 0;
}

struct ctl *
ctl_new(const struct ctl_deps *deps, char *err, size_t errlen)
{
	struct ctl *c;
	const char *path = deps->cfg != NULL ? deps->cfg->ctl_socket : NULL;

	if (path == NULL || *path == '\0') {
		snprintf(err, errlen, "--podctl-socket: no path");
		return NULL;
	}
	c = xcalloc(1, sizeof(*c));
	c->c_deps = *deps;
	if (c->c_deps.max_output == 0)
		c->c_deps.max_output = CTL_MAX_OUTPUT;
	c->c_path = xstrdup(path);
	TAILQ_INIT(&c->c_clients);
	TAILQ_INIT(&c->c_dead);
	if (deps->cfg->ctl_group != NULL && *deps->cfg->ctl_group != '\0') {
		struct group gr, *grp = NULL;
		char         buf[8192];
		int          e = getgrnam_r(deps->cfg->ctl_group, &gr, buf, sizeof(buf), &grp);

		if (e != 0 || grp == NULL) {
			snprintf(err, errlen, "--podctl-group %s: %s", deps->cfg->ctl_group,
			    e != 0 ? strerror(e) : "no such group");
			free(c->c_path);
			free(c);
			return NULL;
		}
		c->c_has_group = 1;
		c->c_gid = grp->gr_gid;
	}
	c->c_reaper = event_new(deps->base, -1, 0, ctl_reap, c);
	c->c_resume = evtimer_new(deps->base, ctl_resume_cb, c);
	if (ctl_listen(c, err, errlen) == -1) {
		event_free(c->c_resume);
		event_free(c->c_reaper);
		free(c->c_path);
		free(c);
		return NULL;
	}
	if (deps->events != NULL)
		c->c_listen_id = events_listen(deps->events, ctl_listener_event, c);
	log_info("podctl socket %s (group %s)", c->c_path,
	    c->c_has_group ? deps->cfg->ctl_group : "root only");
	return c;
}

void
ctl_free(struct ctl *c)
{
	struct ctl_client *cc;

	if (c == NULL)
		return;
	if (c->c_listen_id > 0 && c->c_deps.events != NULL)
		events_unlisten(c->c_deps.events, c->c_listen_id);
	while ((cc = TAILQ_FIRST(&c->c_clients)) != NULL)
		ctl_client_drop(cc, "server stopping");
	evconnlistener_free(c->c_listener);
	c->c_listener = NULL;
	ctl_reap(-1, 0, c);
	unlink(c->c_path);
	event_free(c->c_resume);
	event_free(c->c_reaper);
	free(c->c_path);
	free(c);
}

size_t
ctl_clients(const struct ctl *c)
{
	return c != NULL ? c->c_nclients : 0;
}
