/* internal.h — the server's state (server.c). Not public; reply.c does not see it. */
#ifndef KLET_CTL_INT_H
#define KLET_CTL_INT_H

#include <sys/queue.h>
#include <sys/types.h>

#include <yajl/yajl_gen.h>

#include "ctl/ctl.h"

struct bufferevent;
struct evconnlistener;
struct event;
struct ctl_inspect;

/* Connected clients served at once; more are answered "too many clients" and closed, and
 * past CTL_MAX_REFUSING of those the socket stops accepting until one leaves. */
#define CTL_MAX_CLIENTS    128
#define CTL_MAX_REFUSING   64
/* A client that sends nothing for this long is closed (an events watcher is not). */
#define CTL_IDLE_TIMEOUT_S 30

struct ctl_client {
	TAILQ_ENTRY(ctl_client) cc_entry;
	struct ctl         *cc_ctl;
	struct bufferevent *cc_bev;
	pid_t               cc_pid;
	uid_t               cc_uid;
	int                 cc_watch;   /* events -w */
	int                 cc_closing; /* flush, then close */
	int                 cc_dead;    /* freed by the reaper */
	int                 cc_got_input;
	struct ctl_inspect *cc_inspect; /* an inspect in flight: its requests wait */
};
TAILQ_HEAD(ctl_clients, ctl_client);

struct ctl {
	struct ctl_deps        c_deps;
	char                  *c_path;
	int                    c_has_group;
	gid_t                  c_gid;
	struct evconnlistener *c_listener;
	struct event          *c_reaper;
	struct ctl_clients     c_clients;
	struct ctl_clients     c_dead;
	size_t                 c_nclients;
	int                    c_listen_id;
	uint64_t               c_refused;
	uint64_t               c_dropped;
	struct event          *c_resume; /* re-enables accepting after a pause */
	int                    c_paused; /* accept() failed (EMFILE...): paused for a second */
	int                    c_full;   /* at CTL_MAX_CLIENTS + CTL_MAX_REFUSING connections */
	uint64_t               c_busy;   /* refused: too many clients */
	uint64_t               c_accept_errors;
};

#endif
