/* server.h — the node's HTTP server (the kubelet's pkg/kubelet/server): HTTPS on
 * --address:--port with x509 / bearer-token (TokenReview) / anonymous authentication and
 * AlwaysAllow or Webhook (SubjectAccessReview) authorization; plain HTTP healthz on
 * --healthz-bind-address:--healthz-port; the unauthenticated --read-only-port when set.
 * Endpoints: /healthz[/ping|/log|/syncloop], /pods, /runningpods/, /metrics,
 * /containerLogs/NS/POD/CONTAINER. All on the loop; see server.c for the limits.
 */
#ifndef KLET_SERVER_H
#define KLET_SERVER_H

#include <stddef.h>
#include <stdint.h>

struct event_base;
struct klet_config;
struct podcache;
struct podconfig;
struct pleg;
struct cri;
struct server;

struct eviction;
struct imagegc;
struct api;

struct server_deps {
	struct event_base        *base;
	const struct klet_config *cfg;
	struct podcache          *cache;
	struct podconfig         *config;
	struct pleg              *pleg;
	struct cri               *cri;
	int64_t                   started_ms; /* monotonic */
	const struct eviction    *eviction;   /* may be NULL: no eviction families */
	const struct imagegc     *imagegc;    /* may be NULL: no image GC families */
	/* May be NULL. The cluster's client (the join's), borrowed; it must outlive the
	 * server. The webhooks (TokenReview, SubjectAccessReview) go on it, as the kubelet's
	 * go on its one client: no second connection, TLS context and HTTP/2 session, and a
	 * rotated client certificate serves them too. Without it, with webhooks, the server
	 * makes a client of its own from --kubeconfig. */
	struct api *api;
};

/* Starts the listeners; NULL with err set when the serving certificate cannot be loaded or
 * made. A listener whose address is taken is retried every 10 s (logged once). */
struct server *server_new(const struct server_deps *, char *err, size_t errlen);
void           server_free(struct server *);
/* The port the HTTPS listener bound (with --port 0: the one the system chose), or the
 * configured one while it is not bound. */
int server_port(const struct server *);
/* kletd: a relist completed (for the PLEG histograms). */
void server_relisted(struct server *);
/* kletd: a container (sandbox 0) or pod sandbox (1) was seen started. */
void server_started(struct server *, int sandbox);

#endif
