/* internal.h — what prober.c and checks.c share (not a public API): a check gets what it
 * needs as arguments and knows nothing of the worker that started it. The manager's
 * structs are here for the unit test only. */
#ifndef KLET_PROBER_INT_H
#define KLET_PROBER_INT_H

#include <sys/queue.h>

#include <stdint.h>

#include "net/http1.h"
#include "prober/prober.h"

struct event;
struct event_base;
struct strindex;
struct cri;
struct pr_check;

/* A worker's own copy of its probe (the pod spec may change under it). */
struct pr_spec {
	enum handler_kind    ps_kind;
	char               **ps_argv;
	size_t               ps_argc;
	char                *ps_host; /* NULL: the pod IP */
	char                *ps_path;
	char                *ps_scheme;
	int                  ps_port;    /* resolved (named ports looked up); 0: not found */
	struct http1_header *ps_headers; /* owned strings */
	size_t               ps_nheaders;
	char                *ps_grpc_service;
	int32_t              ps_initial_delay;
	int32_t              ps_timeout;
	int32_t              ps_period;
	int32_t              ps_success_threshold;
	int32_t              ps_failure_threshold;
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
	uint64_t            pp_version; /* p_version when its results last changed */
	size_t              pp_pos;     /* in p_podv */
	int                 pp_dirty;
	int                 pp_respec;
};

struct prober {
	struct event_base *p_base;
	struct cri        *p_cri;
	struct events     *p_events;
	LIST_HEAD(, pr_pod) p_pods;
	struct pr_pod     **p_podv; /* the same pods, in no order, for p_index */
	size_t              p_npodv;
	size_t              p_podv_cap;
	struct strindex    *p_index; /* p_podv by UID */
	struct event       *p_kick_ev;
	uint64_t            p_generation;
	uint64_t            p_version; /* grows whenever any pod's results change */
	size_t              p_nworkers;
	struct prober_stats p_stats;
	void (*p_notify)(const char *, void *);
	void          *p_notify_arg;
	prober_fake_fn p_fake;
	void (*p_fake_cancel)(void *, void *);
	void *p_fake_arg;
	/* Recovery: containers that were ready when the previous daemon stopped. */
	struct strv p_ready_ids;
	int64_t     p_ready_ids_ms; /* monotonic time they were given */
};

enum pr_outcome { PR_SUCCESS = 0, PR_FAILURE, PR_ERROR };

/* The end of a check: output (may be NULL) says why it failed. */
typedef void (*pr_check_done_fn)(enum pr_outcome, const char *output, void *arg);

/* What a check needs; the strings are copied, spec is borrowed and must outlive it. */
struct pr_check_args {
	struct event_base    *base;
	struct cri           *cri; /* NULL: exec checks error */
	const struct pr_spec *spec;
	const char           *container_id;
	const char           *pod_ip; /* NULL: none known */
	/* Tests: fake replaces every handler (prober_set_fake), told uid, container, kind. */
	prober_fake_fn fake;
	void (*fake_cancel)(void *token, void *arg);
	void           *fake_arg;
	const char     *uid;
	const char     *container;
	enum probe_kind kind;
};

/* Starts a check (checks.c); done runs once, from a later loop event, unless
 * pr_check_cancel comes first. Never NULL. */
struct pr_check *pr_check_start(const struct pr_check_args *, pr_check_done_fn, void *arg);
/* Cancels a check in flight: done is not called. */
void pr_check_cancel(struct pr_check *);
/* One step of the threshold run: returns the new run length for outcome r after *last. */
int pr_threshold_step(enum probe_res *last, int run, enum probe_res r);

#endif
