/* reply.h — podctl's replies: what the server reads from the daemon's parts and how it
 * writes it (pods, one pod described, containers, events, status). Read-only; everything a
 * reply reads comes in the view, so reply.c knows nothing of the server's connections. */
#ifndef KLET_CTL_REPLY_H
#define KLET_CTL_REPLY_H

#include <stddef.h>

#include <yajl/yajl_gen.h>

#include "ctl/ctl.h"

struct ev_record;
struct pod;
struct pod_status;

/* What a reply reads: the daemon's parts as kletd handed them to the server (each object
 * may be NULL: its section then says "unavailable") and the server's own figures. */
struct ctl_view {
	const struct ctl_deps *deps;
	size_t                 nclients; /* connected podctl clients */
};

/* The reply to a parsed request, written into g (an error reply when the pod is unknown).
 * Not for inspect, which the server answers when the runtime did (server.c). */
void ctl_reply_build(const struct ctl_view *, const struct ctl_request *, yajl_gen g);
/* reply_node.c: the data of node (the node summary) and top (cgroup figures). */
void ctl_reply_node(const struct ctl_view *, yajl_gen g);
void ctl_reply_top(const struct ctl_view *, const struct ctl_request *, yajl_gen g);
/* One event as a JSON object (also the body of the lines of events --watch). */
void ctl_gen_event(yajl_gen, const struct ev_record *);
/* The kubectl-style STATUS column of a pod from its generated status: "Terminating" when
 * deleting or terminating, a container's waiting reason (CrashLoopBackOff, ErrImagePull,
 * ContainerCreating, ...), terminated reason, "Init:..." for init containers, else phase.
 * Returns buf, a static string or a status-owned string. */
const char *ctl_pod_status_reason(
    const struct pod *, const struct pod_status *, int terminating, char *buf, size_t len);

#endif
