/* internal.h — what prober.c and checks.c share (not a public API). */
#ifndef KLET_PROBER_INT_H
#define KLET_PROBER_INT_H

#include <sys/queue.h>

#include <stdint.h>

#include "net/http1.h"
#include "prober/prober.h"

struct event;
struct pr_check;

/* A worker's own copy of its probe (the pod spec may change under it). */
struct pr_spec {
	enum handler_kind    kind;
	char               **argv;
	size_t               argc;
	char                *host; /* NULL: the pod IP */
	char                *path;
	char                *scheme;
	int                  port;    /* resolved (named ports looked up); 0: not found */
	struct http1_header *headers; /* owned strings */
	size_t               nheaders;
	char                *grpc_service;
	int32_t              initial_delay;
	int32_t              timeout;
	int32_t              period;
	int32_t              success_threshold;
	int32_t              failure_threshold;
};

struct pr_pod;

struct pr_worker {
	LIST_ENTRY(pr_worker) w_entry;
	struct pr_pod   *w_pod;
	enum probe_kind  w_kind;
	char            *w_cname;
	char            *w_cid;       /* the container instance probed */
	char            *w_pod_ip;    /* NULL: none known */
	int64_t          w_started_s; /* the container's start, Unix seconds */
	struct pr_spec   w_spec;
	struct event    *w_timer;
	struct event    *w_first;  /* the first check, at once */
	struct pr_check *w_check;  /* in flight, or NULL */
	enum probe_res   w_result; /* the cached result (results manager) */
	enum probe_res   w_last;   /* last check's outcome (threshold run) */
	int              w_run;
	int              w_on_hold;
};

struct pr_pod {
	LIST_ENTRY(pr_pod) pp_entry;
	struct prober    *pp_prober;
	char             *pp_uid;
	const struct pod *pp_pod; /* a reference, for events */
	LIST_HEAD(, pr_worker) pp_workers;
	struct probe_state *pp_states; /* prober_probe_states scratch */
	uint64_t            pp_seen;
	int                 pp_dirty;
	int                 pp_respec;
};

struct prober {
	struct event_base *base;
	struct cri        *cri;
	struct events     *events;
	LIST_HEAD(, pr_pod) pods;
	struct event       *kick_ev;
	uint64_t            generation;
	size_t              nworkers;
	struct prober_stats stats;
	void (*notify)(const char *, void *);
	void          *notify_arg;
	prober_fake_fn fake;
	void (*fake_cancel)(void *, void *);
	void *fake_arg;
	/* Recovery: containers that were ready when the previous daemon stopped. */
	struct strv ready_ids;
	int64_t     ready_ids_ms; /* monotonic time they were given */
};

enum pr_outcome { PR_SUCCESS = 0, PR_FAILURE, PR_ERROR };

/* Starts the worker's check (checks.c); its end calls pr_worker_done from a later
 * loop event. Never NULL. */
struct pr_check *pr_check_start(struct prober *, struct pr_worker *);
/* Cancels a check in flight: pr_worker_done is not called. */
void pr_check_cancel(struct pr_check *);
/* The end of a check: output (may be NULL) says why it failed. */
void pr_worker_done(struct pr_worker *, enum pr_outcome, const char *output);
/* One step of the threshold run: returns the new run length for outcome r after *last. */
int pr_threshold_step(enum probe_res *last, int run, enum probe_res r);

#endif
