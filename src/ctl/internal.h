/* internal.h — shared between ctl.c (connections) and reply.c (replies). Not public. */
#ifndef KLET_CTL_INT_H
#define KLET_CTL_INT_H

#include <sys/queue.h>
#include <sys/types.h>

#include <yajl/yajl_gen.h>

#include "ctl/ctl.h"

struct bufferevent;
struct evconnlistener;
struct event;
struct ev_record;

#define CTL_MAX_START_ERRORS 64

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

/* The reply to a parsed request, written into g. */
void ctl_reply_build(struct ctl *, const struct ctl_request *, yajl_gen g);
/* One event as a JSON object. */
void ctl_gen_event(yajl_gen, const struct ev_record *);

#endif
