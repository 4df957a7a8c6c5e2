/* pleg.c — relist the runtime every second, fill the pod cache, report lifecycle events. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <event2/event.h>

#include "cri/cri.h"
#include "core/heap.h"
#include "core/intern.h"
#include "core/log.h"
#include "node/pleg.h"
#include "node/podcache.h"
#include "store/store.h"
#include "core/util.h"

#define LBL_POD_UID  "io.kubernetes.pod.uid"
#define LBL_POD_NAME "io.kubernetes.pod.name"
#define LBL_POD_NS   "io.kubernetes.pod.namespace"
#define LBL_CNAME    "io.kubernetes.container.name"
#define ANN_HASH     "io.kubernetes.container.hash"
#define ANN_RESTARTS "io.kubernetes.container.restartCount"

/* One sandbox or container as the runtime reported it. Every string is interned (intern.h):
 * the IDs, UIDs, names, images and reasons that the pod cache keeps too are held once. */
struct pl_obj {
	char               *o_uid;
	char               *o_pod_name;
	char               *o_pod_ns;
	int                 o_sandbox;
	enum pleg_cstate    o_pstate;
	int                 o_have_status; /* status details fetched for this state */
	int                 o_exit_reported;
	int                 o_fetched; /* by a status call of this relist: to the store */
	struct rt_container o_c;       /* o_c.id is the key for both kinds */
	struct rt_sandbox   o_s;
};

struct pl_set {
	struct pl_obj *objs;
	size_t         n, cap;
};

struct pleg {
	struct event_base     *p_base;
	struct cri            *p_cri;
	struct podcache       *p_cache;
	pleg_event_fn          p_fn;
	void                  *p_arg;
	pleg_exit_fn           p_exit_fn;
	void                  *p_exit_arg;
	struct pl_set          p_old; /* the previous relist, sorted by id */
	struct pl_set          p_new; /* being built */
	int                    p_in_flight;
	int                    p_pending; /* calls outstanding */
	int                    p_failed;
	int                    p_statusing; /* the status calls' phase */
	int64_t                p_start_ms;
	int64_t                p_start_us;
	int64_t                p_created_ms;
	size_t                 p_status_calls;
	struct pl_status_call *p_calls; /* one slot per object of p_new */
	void (*p_done)(int, void *);
	void             *p_done_arg;
	struct pleg_stats p_stats;
	/* Recovery: the details stored by the previous daemon (sorted by id), loaded for the
	 * first relist and dropped once it succeeded. */
	struct store *p_store;
	struct pl_set p_seed;
	int           p_seed_loaded;
	size_t        p_seeded; /* objects the first relist took from the store */
};

/* One status call in flight: which object it fills. The object array may grow only
 * before the status calls start, so the index stays valid. */
struct pl_status_call {
	struct pleg *sc_p;
	size_t       sc_idx;
};

const char *
pleg_event_name(enum pleg_event_type t)
{
	static const char *names[] = { "ContainerStarted", "ContainerDied", "ContainerRemoved",
		"ContainerChanged" };

	return (unsigned)t < nitems(names) ? names[t] : "?";
}

size_t
pleg_transition(enum pleg_cstate old, enum pleg_cstate new, enum pleg_event_type out[2])
{
	if (old == new)
		return 0;
	switch (new) {
	case PLEG_RUNNING:
		out[0] = PLEG_CONTAINER_STARTED;
		return 1;
	case PLEG_EXITED:
		out[0] = PLEG_CONTAINER_DIED;
		return 1;
	case PLEG_UNKNOWN:
		out[0] = PLEG_CONTAINER_CHANGED;
		return 1;
	case PLEG_NONEXISTENT:
		if (old == PLEG_EXITED) {
			/* Its death was reported already. */
			out[0] = PLEG_CONTAINER_REMOVED;
			return 1;
		}
		out[0] = PLEG_CONTAINER_DIED;
		out[1] = PLEG_CONTAINER_REMOVED;
		return 2;
	}
	fatalx("%s: unknown container state %d", __func__, new);
}

static void
pl_obj_clear(struct pl_obj *o)
{
	size_t i;

	intern_drop(o->o_uid);
	intern_drop(o->o_pod_name);
	intern_drop(o->o_pod_ns);
	intern_drop(o->o_c.id);
	intern_drop(o->o_c.name);
	intern_drop(o->o_c.sandbox_id);
	intern_drop(o->o_c.reason);
	intern_drop(o->o_c.message);
	intern_drop(o->o_c.image);
	intern_drop(o->o_c.image_ref);
	intern_drop(o->o_s.id);
	intern_drop(o->o_s.ip);
	for (i = 0; i < o->o_s.nextra_ips; i++)
		intern_drop(o->o_s.extra_ips[i]);
	free(o->o_s.extra_ips);
	memset(o, 0, sizeof(*o));
}

static void
pl_set_clear(struct pl_set *s)
{
	size_t i;

	for (i = 0; i < s->n; i++)
		pl_obj_clear(&s->objs[i]);
	free(s->objs);
	s->objs = NULL;
	s->n = s->cap = 0;
}

static struct pl_obj *
pl_set_add(struct pl_set *s)
{
	/* Doubling: growing by one moved the array at almost every object, a relist of a
	 * thousand objects left holes of every size in the heap each second. A large array
	 * (one per relist) is mapped on its own and given back with it (heap_transient). */
	if (s->n == s->cap) {
		s->cap = s->cap == 0 ? 16 : s->cap * 2;
		if (s->cap > SIZE_MAX / sizeof(*s->objs))
			fatalx("%s: too many objects", __func__);
		s->cap = heap_transient(s->cap * sizeof(*s->objs)) / sizeof(*s->objs);
		s->objs = xreallocarray(s->objs, s->cap, sizeof(*s->objs));
	}
	memset(&s->objs[s->n], 0, sizeof(s->objs[0]));
	return &s->objs[s->n++];
}

static int
pl_cmp_id(const void *a, const void *b)
{
	return strcmp(((const struct pl_obj *)a)->o_c.id, ((const struct pl_obj *)b)->o_c.id);
}

static struct pl_obj *
pl_set_find(const struct pl_set *s, const char *id)
{
	struct pl_obj key;

	memset(&key, 0, sizeof(key));
	key.o_c.id = (char *)(uintptr_t)id;
	if (s->n == 0)
		return NULL;
	return bsearch(&key, s->objs, s->n, sizeof(*s->objs), pl_cmp_id);
}

#define PL_LOOKUP(items, n, key) pl_lookup_kv((void *const *)(items), (n), (key))

/* protobuf-c map entries all start with base, key, value. */
struct pl_kv {
	ProtobufCMessage base;
	char            *key;
	char            *value;
};

static const char *
pl_lookup_kv(void *const *items, size_t n, const char *key)
{
	size_t i;

	for (i = 0; i < n; i++) {
		const struct pl_kv *kv = items[i];

		if (kv->key != NULL && strcmp(kv->key, key) == 0)
			return kv->value;
	}
	return NULL;
}

static enum pleg_cstate
pl_cstate(int cri_state)
{
	switch (cri_state) {
	case RUNTIME__V1__CONTAINER_STATE__CONTAINER_RUNNING:
		return PLEG_RUNNING;
	case RUNTIME__V1__CONTAINER_STATE__CONTAINER_EXITED:
		return PLEG_EXITED;
	default:
		return PLEG_UNKNOWN;
	}
}

static void pl_lists_done(struct pleg *);
static void pl_commit(struct pleg *);

static void
pl_finish(struct pleg *p, int rc)
{
	void (*done)(int, void *) = p->p_done;
	void *arg = p->p_done_arg;

	p->p_in_flight = 0;
	p->p_done = NULL;
	if (done != NULL)
		done(rc, arg);
}

static void
pl_fail(struct pleg *p, const char *what, int code, const char *msg)
{
	p->p_failed = 1;
	log_v(2, "relist: %s failed: code=%d %s", what, code, msg);
}

static void
pl_step_done(struct pleg *p)
{
	if (--p->p_pending > 0)
		return;
	if (p->p_statusing) {
		p->p_statusing = 0;
		pl_commit(p);
		return;
	}
	if (p->p_failed) {
		pl_set_clear(&p->p_new);
		p->p_stats.failures++;
		pl_finish(p, -1);
		return;
	}
	pl_lists_done(p);
}

static void
pl_sandboxes_cb(int code, const char *msg, const Runtime__V1__ListPodSandboxResponse *r, void *arg)
{
	struct pleg *p = arg;
	size_t       i;

	if (code != GRPC_OK) {
		pl_fail(p, "ListPodSandbox", code, msg);
		pl_step_done(p);
		return;
	}
	for (i = 0; i < r->n_items; i++) {
		const Runtime__V1__PodSandbox *sb = r->items[i];
		const char                    *uid = NULL, *name = NULL, *ns = NULL;
		struct pl_obj                 *o;

		if (sb->id == NULL || *sb->id == '\0')
			continue;
		if (sb->metadata != NULL) {
			uid = sb->metadata->uid;
			name = sb->metadata->name;
			ns = sb->metadata->namespace_;
		}
		if (uid == NULL || *uid == '\0')
			uid = PL_LOOKUP(sb->labels, sb->n_labels, LBL_POD_UID);
		if (uid == NULL || *uid == '\0')
			continue; /* not a pod sandbox of a kubelet */
		o = pl_set_add(&p->p_new);
		o->o_sandbox = 1;
		o->o_uid = intern(uid);
		o->o_pod_name = intern(name);
		o->o_pod_ns = intern(ns);
		o->o_c.id = intern(sb->id);
		o->o_s.id = intern_ref(o->o_c.id);
		o->o_s.attempt = sb->metadata != NULL ? sb->metadata->attempt : 0;
		o->o_s.state = sb->state == RUNTIME__V1__POD_SANDBOX_STATE__SANDBOX_READY
		    ? RT_SB_READY
		    : RT_SB_NOTREADY;
		o->o_s.created_at = sb->created_at;
		o->o_pstate = o->o_s.state == RT_SB_READY ? PLEG_RUNNING : PLEG_EXITED;
	}
	pl_step_done(p);
}

static void
pl_containers_cb(int code, const char *msg, const Runtime__V1__ListContainersResponse *r, void *arg)
{
	struct pleg *p = arg;
	size_t       i;

	if (code != GRPC_OK) {
		pl_fail(p, "ListContainers", code, msg);
		pl_step_done(p);
		return;
	}
	for (i = 0; i < r->n_containers; i++) {
		const Runtime__V1__Container *c = r->containers[i];
		const char                   *uid, *name, *v;
		struct pl_obj                *o;

		if (c->id == NULL || *c->id == '\0')
			continue;
		uid = PL_LOOKUP(c->labels, c->n_labels, LBL_POD_UID);
		if (uid == NULL || *uid == '\0')
			continue;
		name = PL_LOOKUP(c->labels, c->n_labels, LBL_CNAME);
		if (name == NULL && c->metadata != NULL)
			name = c->metadata->name;
		o = pl_set_add(&p->p_new);
		o->o_uid = intern(uid);
		o->o_pod_name = intern(PL_LOOKUP(c->labels, c->n_labels, LBL_POD_NAME));
		o->o_pod_ns = intern(PL_LOOKUP(c->labels, c->n_labels, LBL_POD_NS));
		o->o_c.id = intern(c->id);
		o->o_c.name = intern(name);
		o->o_c.sandbox_id = intern(c->pod_sandbox_id);
		o->o_c.state = (enum rt_cstate)c->state;
		o->o_c.created_at = c->created_at;
		o->o_c.image = intern(c->image != NULL ? c->image->image : NULL);
		o->o_c.image_ref = intern(c->image_ref);
		v = PL_LOOKUP(c->annotations, c->n_annotations, ANN_HASH);
		if (v == NULL)
			v = PL_LOOKUP(c->labels, c->n_labels, ANN_HASH);
		if (v != NULL)
			o->o_c.hash = strtoull(v, NULL, 16);
		v = PL_LOOKUP(c->annotations, c->n_annotations, ANN_RESTARTS);
		if (v == NULL)
			v = PL_LOOKUP(c->labels, c->n_labels, ANN_RESTARTS);
		if (v != NULL)
			o->o_c.restart_count = (int32_t)strtol(v, NULL, 10);
		else if (c->metadata != NULL)
			o->o_c.restart_count = (int32_t)c->metadata->attempt;
		o->o_pstate = pl_cstate(c->state);
	}
	pl_step_done(p);
}

static void
pl_container_status_cb(
    int code, const char *msg, const Runtime__V1__ContainerStatusResponse *r, void *arg)
{
	struct pl_status_call *sc = arg;
	struct pleg           *p = sc->sc_p;
	struct pl_obj         *o = &p->p_new.objs[sc->sc_idx];

	if (code == GRPC_OK && r->status != NULL) {
		const Runtime__V1__ContainerStatus *s = r->status;

		o->o_c.started_at = s->started_at;
		o->o_c.finished_at = s->finished_at;
		o->o_c.exit_code = s->exit_code;
		intern_drop(o->o_c.reason);
		o->o_c.reason = intern(s->reason != NULL && *s->reason ? s->reason : NULL);
		intern_drop(o->o_c.message);
		o->o_c.message = intern(s->message != NULL && *s->message ? s->message : NULL);
		if (s->image_ref != NULL && *s->image_ref != '\0') {
			intern_drop(o->o_c.image_ref);
			o->o_c.image_ref = intern(s->image_ref);
		}
		/* The status is newer than the list: take its state. */
		o->o_c.state = (enum rt_cstate)s->state;
		o->o_pstate = pl_cstate(s->state);
		o->o_have_status = 1;
		o->o_fetched = 1;
	} else if (code != GRPC_NOT_FOUND) {
		log_v(4, "relist: ContainerStatus %s: code=%d %s", o->o_c.id, code, msg);
	}
	pl_step_done(p);
}

static void
pl_sandbox_status_cb(
    int code, const char *msg, const Runtime__V1__PodSandboxStatusResponse *r, void *arg)
{
	struct pl_status_call *sc = arg;
	struct pleg           *p = sc->sc_p;
	struct pl_obj         *o = &p->p_new.objs[sc->sc_idx];
	size_t                 i;

	if (code == GRPC_OK && r->status != NULL) {
		const Runtime__V1__PodSandboxStatus *s = r->status;

		if (s->network != NULL) {
			intern_drop(o->o_s.ip);
			o->o_s.ip = intern(
			    s->network->ip != NULL && *s->network->ip ? s->network->ip : NULL);
			if (s->network->n_additional_ips > 0) {
				o->o_s.extra_ips =
				    xcalloc(s->network->n_additional_ips, sizeof(char *));
				for (i = 0; i < s->network->n_additional_ips; i++)
					o->o_s.extra_ips[i] =
					    intern(s->network->additional_ips[i]->ip);
				o->o_s.nextra_ips = s->network->n_additional_ips;
			}
		}
		if (s->linux != NULL && s->linux->namespaces != NULL &&
		    s->linux->namespaces->options != NULL)
			o->o_s.network_mode =
			    (enum rt_nsmode)s->linux->namespaces->options->network;
		o->o_s.state = s->state == RUNTIME__V1__POD_SANDBOX_STATE__SANDBOX_READY
		    ? RT_SB_READY
		    : RT_SB_NOTREADY;
		o->o_pstate = o->o_s.state == RT_SB_READY ? PLEG_RUNNING : PLEG_EXITED;
		o->o_have_status = 1;
		o->o_fetched = 1;
	} else if (code != GRPC_NOT_FOUND) {
		log_v(4, "relist: PodSandboxStatus %s: code=%d %s", o->o_c.id, code, msg);
	}
	pl_step_done(p);
}

/* Takes the details of an unchanged object from the previous relist. */
static void
pl_carry(struct pl_obj *n, const struct pl_obj *o)
{
	size_t i;

	n->o_have_status = 1;
	n->o_exit_reported = o->o_exit_reported;
	if (n->o_sandbox) {
		n->o_s.ip = intern_ref(o->o_s.ip);
		n->o_s.network_mode = o->o_s.network_mode;
		if (o->o_s.nextra_ips > 0) {
			n->o_s.extra_ips = xcalloc(o->o_s.nextra_ips, sizeof(char *));
			for (i = 0; i < o->o_s.nextra_ips; i++)
				n->o_s.extra_ips[i] = intern_ref(o->o_s.extra_ips[i]);
			n->o_s.nextra_ips = o->o_s.nextra_ips;
		}
		return;
	}
	n->o_c.started_at = o->o_c.started_at;
	n->o_c.finished_at = o->o_c.finished_at;
	n->o_c.exit_code = o->o_c.exit_code;
	n->o_c.reason = intern_ref(o->o_c.reason);
	n->o_c.message = intern_ref(o->o_c.message);
	if (o->o_c.image_ref != NULL) {
		intern_drop(n->o_c.image_ref);
		n->o_c.image_ref = intern_ref(o->o_c.image_ref);
	}
}

/* One stored runtime object into the seed set (details only; state as stored). */
static int
pl_seed_row(const struct store_rtobj *r, void *arg)
{
	struct pl_set *set = arg;
	struct pl_obj *o;
	const char    *sp, *e;
	size_t         n = 0;

	/* A row this binary would not have written is ignored (the runtime is asked). */
	if (r->id == NULL || r->uid == NULL || r->state < PLEG_NONEXISTENT ||
	    r->state > PLEG_UNKNOWN || r->network_mode < 0 || r->network_mode > RT_NS_TARGET)
		return 0;
	o = pl_set_add(set);

	o->o_uid = intern(r->uid);
	o->o_sandbox = r->sandbox != 0;
	o->o_pstate = (enum pleg_cstate)r->state;
	o->o_have_status = 1;
	/* An exited container's row was written in the turn that reported its exit. */
	o->o_exit_reported = !o->o_sandbox && o->o_pstate == PLEG_EXITED;
	o->o_c.id = intern(r->id);
	if (o->o_sandbox) {
		o->o_s.ip = intern(r->ip);
		o->o_s.network_mode = (enum rt_nsmode)r->network_mode;
		for (sp = r->extra_ips; sp != NULL && *sp != '\0'; sp = e) {
			while (*sp == ' ')
				sp++;
			if (*sp == '\0')
				break;
			for (e = sp; *e != '\0' && *e != ' '; e++)
				;
			o->o_s.extra_ips = xreallocarray(o->o_s.extra_ips, n + 1, sizeof(char *));
			o->o_s.extra_ips[n++] = intern_n(sp, (size_t)(e - sp));
		}
		o->o_s.nextra_ips = n;
		return 0;
	}
	o->o_c.started_at = r->started_ns;
	o->o_c.finished_at = r->finished_ns;
	o->o_c.exit_code = r->exit_code;
	o->o_c.reason = intern(r->reason);
	o->o_c.message = intern(r->message);
	o->o_c.image_ref = intern(r->image_ref);
	return 0;
}

static void
pl_seed_load(struct pleg *p)
{
	if (p->p_seed_loaded || p->p_store == NULL || p->p_stats.relists > 0)
		return;
	p->p_seed_loaded = 1;
	if (store_foreach_rtobj(p->p_store, pl_seed_row, &p->p_seed) == -1) {
		log_warnx("relist: stored runtime details unreadable; asking the runtime");
		pl_set_clear(&p->p_seed);
		return;
	}
	if (p->p_seed.n > 1)
		qsort(p->p_seed.objs, p->p_seed.n, sizeof(*p->p_seed.objs), pl_cmp_id);
	log_v(2, "relist: %zu runtime objects known from the store", p->p_seed.n);
}

/* The details the previous daemon read for n, when the runtime still lists it unchanged. */
static const struct pl_obj *
pl_seed_find(const struct pleg *p, const struct pl_obj *n)
{
	const struct pl_obj *o;

	if (p->p_seed.n == 0 || (o = pl_set_find(&p->p_seed, n->o_c.id)) == NULL)
		return NULL;
	if (o->o_sandbox != n->o_sandbox || o->o_pstate != n->o_pstate ||
	    strcmp(o->o_uid, n->o_uid) != 0)
		return NULL;
	return o;
}

/* Both lists are in: fetch the status of what changed. */
static void
pl_lists_done(struct pleg *p)
{
	size_t i;

	if (p->p_new.n > 1)
		qsort(p->p_new.objs, p->p_new.n, sizeof(*p->p_new.objs), pl_cmp_id);
	p->p_status_calls = 0;
	free(p->p_calls);
	p->p_calls = xcalloc(p->p_new.n + 1, sizeof(*p->p_calls));
	p->p_pending = 1; /* held until every call is started */
	p->p_statusing = 1;
	pl_seed_load(p);
	p->p_seeded = 0;
	for (i = 0; i < p->p_new.n; i++) {
		struct pl_obj         *n = &p->p_new.objs[i];
		const struct pl_obj   *o = pl_set_find(&p->p_old, n->o_c.id);
		struct pl_status_call *sc;

		if (o != NULL && o->o_have_status && o->o_pstate == n->o_pstate) {
			pl_carry(n, o);
			continue;
		}
		if (o == NULL && (o = pl_seed_find(p, n)) != NULL) {
			pl_carry(n, o);
			p->p_seeded++;
			continue;
		}
		sc = &p->p_calls[i];
		sc->sc_p = p;
		sc->sc_idx = i;
		p->p_pending++;
		p->p_status_calls++;
		if (n->o_sandbox) {
			Runtime__V1__PodSandboxStatusRequest rq =
			    RUNTIME__V1__POD_SANDBOX_STATUS_REQUEST__INIT;

			rq.pod_sandbox_id = n->o_c.id;
			cri_pod_sandbox_status(p->p_cri, &rq, 0, pl_sandbox_status_cb, sc, p);
		} else {
			Runtime__V1__ContainerStatusRequest rq =
			    RUNTIME__V1__CONTAINER_STATUS_REQUEST__INIT;

			rq.container_id = n->o_c.id;
			cri_container_status(p->p_cri, &rq, 0, pl_container_status_cb, sc, p);
		}
	}
	pl_step_done(p);
}

/* Groups the objects of one pod (a run of equal UIDs after sorting by UID) into a status. */
static int
pl_cmp_uid(const void *a, const void *b)
{
	const struct pl_obj *x = *(struct pl_obj *const *)a, *y = *(struct pl_obj *const *)b;

	return strcmp(x->o_uid, y->o_uid);
}

static void
pl_emit(struct pleg *p, const struct pl_obj *o, enum pleg_cstate old, enum pleg_cstate new)
{
	enum pleg_event_type ev[2];
	size_t               i, n = pleg_transition(old, new, ev);

	for (i = 0; i < n; i++) {
		struct pleg_event e = {
			.uid = o->o_uid, .type = ev[i], .id = o->o_c.id, .sandbox = o->o_sandbox
		};

		p->p_stats.events++;
		log_v(4, "pleg: %s pod uid=%s %s=%s", pleg_event_name(ev[i]), o->o_uid,
		    o->o_sandbox ? "sandbox" : "container", o->o_c.id);
		if (p->p_fn != NULL)
			p->p_fn(&e, p->p_arg);
	}
}

/* A status of the pod's objects that borrows their strings: only its two arrays are its
 * own (pl_status_free); the pod cache takes references to the strings it keeps. */
static void
pl_build_status(struct rt_pod_status *st, struct pl_obj **objs, size_t n)
{
	size_t i, ns = 0, nc = 0;

	memset(st, 0, sizeof(*st));
	st->uid = objs[0]->o_uid;
	for (i = 0; i < n; i++) {
		if (st->name == NULL && objs[i]->o_pod_name != NULL) {
			st->name = objs[i]->o_pod_name;
			st->ns = objs[i]->o_pod_ns;
		}
		if (objs[i]->o_sandbox)
			ns++;
		else
			nc++;
	}
	st->sandboxes = ns > 0 ? xcalloc(ns, sizeof(*st->sandboxes)) : NULL;
	st->containers = nc > 0 ? xcalloc(nc, sizeof(*st->containers)) : NULL;
	for (i = 0; i < n; i++) {
		if (objs[i]->o_sandbox)
			st->sandboxes[st->nsandboxes++] = objs[i]->o_s;
		else
			st->containers[st->ncontainers++] = objs[i]->o_c;
	}
	rt_pod_status_sort(st);
}

static void
pl_status_free(struct rt_pod_status *st)
{
	free(st->sandboxes);
	free(st->containers);
	memset(st, 0, sizeof(*st));
}

/* Keeps the store's runtime details in step: what a status call read, and nothing of
 * objects gone. Only changes are written (status calls are made only for them). */
static void
pl_store_one(struct pleg *p, const struct pl_obj *o)
{
	struct store_rtobj r;
	char              *ips = NULL, *t;
	size_t             i;

	memset(&r, 0, sizeof(r));
	r.id = o->o_c.id;
	r.uid = o->o_uid;
	r.sandbox = o->o_sandbox;
	r.state = (int)o->o_pstate;
	if (o->o_sandbox) {
		r.ip = o->o_s.ip;
		for (i = 0; i < o->o_s.nextra_ips; i++) {
			t = xsprintf("%s%s%s", ips != NULL ? ips : "", ips != NULL ? " " : "",
			    o->o_s.extra_ips[i]);
			free(ips);
			ips = t;
		}
		r.extra_ips = ips;
		r.network_mode = (int)o->o_s.network_mode;
	} else {
		r.started_ns = o->o_c.started_at;
		r.finished_ns = o->o_c.finished_at;
		r.exit_code = o->o_c.exit_code;
		r.reason = o->o_c.reason;
		r.message = o->o_c.message;
		r.image_ref = o->o_c.image_ref;
	}
	store_put_rtobj(p->p_store, &r);
	free(ips);
}

static void
pl_store(struct pleg *p)
{
	size_t i;

	if (p->p_store == NULL)
		return;
	for (i = 0; i < p->p_new.n; i++)
		if (p->p_new.objs[i].o_fetched)
			pl_store_one(p, &p->p_new.objs[i]);
	/* Objects that left the runtime since the last relist: pl_commit's removal pass. */
	/* The first relist: rows of objects that left the runtime while no daemon ran. */
	for (i = 0; i < p->p_seed.n; i++)
		if (pl_set_find(&p->p_new, p->p_seed.objs[i].o_c.id) == NULL)
			store_del_rtobj(p->p_store, p->p_seed.objs[i].o_c.id);
	if (p->p_seed.n > 0) {
		log_v(2, "relist: %zu of %zu runtime objects resumed from the store", p->p_seeded,
		    p->p_new.n);
		pl_set_clear(&p->p_seed);
	}
}

static void
pl_commit(struct pleg *p)
{
	struct pl_obj **byuid = NULL;
	struct pl_set  *nw = &p->p_new, *old = &p->p_old;
	size_t          i, j, npods = 0, nsb = 0;
	int64_t         dur;

	/* Events: every new object against its previous state, then the vanished ones. */
	for (i = 0; i < nw->n; i++) {
		struct pl_obj *o = pl_set_find(old, nw->objs[i].o_c.id);

		pl_emit(p, &nw->objs[i], o != NULL ? o->o_pstate : PLEG_NONEXISTENT,
		    nw->objs[i].o_pstate);
	}
	for (i = 0; i < old->n; i++) {
		if (pl_set_find(nw, old->objs[i].o_c.id) != NULL)
			continue;
		pl_emit(p, &old->objs[i], old->objs[i].o_pstate, PLEG_NONEXISTENT);
		if (p->p_store != NULL)
			store_del_rtobj(p->p_store, old->objs[i].o_c.id);
	}
	pl_store(p);
	/* Exits, once each. */
	for (i = 0; i < nw->n; i++) {
		struct pl_obj *o = &nw->objs[i];

		if (o->o_sandbox || o->o_pstate != PLEG_EXITED || !o->o_have_status ||
		    o->o_exit_reported)
			continue;
		o->o_exit_reported = 1;
		if (p->p_exit_fn != NULL)
			p->p_exit_fn(o->o_uid, &o->o_c, p->p_exit_arg);
	}
	/* The cache: one status per pod seen, absence for pods gone. */
	if (nw->n > 0) {
		byuid = xcalloc(nw->n, sizeof(*byuid));
		for (i = 0; i < nw->n; i++) {
			byuid[i] = &nw->objs[i];
			nsb += nw->objs[i].o_sandbox;
		}
		qsort(byuid, nw->n, sizeof(*byuid), pl_cmp_uid);
	}
	for (i = 0; i < nw->n; i = j) {
		struct rt_pod_status st;

		for (j = i + 1; j < nw->n && strcmp(byuid[j]->o_uid, byuid[i]->o_uid) == 0; j++)
			;
		pl_build_status(&st, &byuid[i], j - i);
		podcache_set(p->p_cache, &st, p->p_start_ms);
		pl_status_free(&st);
		npods++;
	}
	for (i = 0; i < old->n; i++) {
		const char   *uid = old->objs[i].o_uid;
		struct pl_obj key, *kp = &key;

		/* byuid is sorted by UID: a lookup, not a scan of every new object. */
		memset(&key, 0, sizeof(key));
		key.o_uid = (char *)(uintptr_t)uid;
		if (nw->n == 0 || bsearch(&kp, byuid, nw->n, sizeof(*byuid), pl_cmp_uid) == NULL)
			podcache_delete(p->p_cache, uid, p->p_start_ms);
	}
	free(byuid);
	free(p->p_calls);
	p->p_calls = NULL;
	podcache_update_time(p->p_cache, p->p_start_ms);
	pl_set_clear(old);
	*old = *nw;
	memset(nw, 0, sizeof(*nw));
	dur = now_mono_us() - p->p_start_us;
	p->p_stats.relists++;
	p->p_stats.last_duration_us = dur;
	if (dur > p->p_stats.max_duration_us)
		p->p_stats.max_duration_us = dur;
	p->p_stats.last_success_ms = now_mono_ms();
	p->p_stats.pods = npods;
	p->p_stats.sandboxes = nsb;
	p->p_stats.containers = old->n - nsb;
	p->p_stats.status_calls = p->p_status_calls;
	if (p->p_stats.relists == 1) {
		p->p_stats.first_objects = old->n;
		p->p_stats.first_from_store = p->p_seeded;
		p->p_stats.first_status_calls = p->p_status_calls;
	}
	log_v(5, "relist done in %lldus pods=%zu containers=%zu sandboxes=%zu status_calls=%zu",
	    (long long)dur, npods, old->n - nsb, nsb, p->p_status_calls);
	pl_finish(p, 0);
}

struct pleg *
pleg_new(
    struct event_base *base, struct cri *cri, struct podcache *cache, pleg_event_fn fn, void *arg)
{
	struct pleg *p = xcalloc(1, sizeof(*p));

	p->p_base = base;
	p->p_cri = cri;
	p->p_cache = cache;
	p->p_fn = fn;
	p->p_arg = arg;
	p->p_created_ms = now_mono_ms();
	return p;
}

void
pleg_set_exit_fn(struct pleg *p, pleg_exit_fn fn, void *arg)
{
	p->p_exit_fn = fn;
	p->p_exit_arg = arg;
}

void
pleg_free(struct pleg *p)
{
	if (p == NULL)
		return;
	if (p->p_in_flight && p->p_cri != NULL)
		cri_cancel_owner(p->p_cri, p);
	free(p->p_calls);
	pl_set_clear(&p->p_old);
	pl_set_clear(&p->p_new);
	pl_set_clear(&p->p_seed);
	free(p);
}

int
pleg_relist(struct pleg *p, void (*done)(int, void *), void *arg)
{
	Runtime__V1__ListPodSandboxRequest sr = RUNTIME__V1__LIST_POD_SANDBOX_REQUEST__INIT;
	Runtime__V1__ListContainersRequest cr = RUNTIME__V1__LIST_CONTAINERS_REQUEST__INIT;

	if (p->p_in_flight)
		return -1;
	p->p_in_flight = 1;
	p->p_failed = 0;
	p->p_statusing = 0;
	p->p_done = done;
	p->p_done_arg = arg;
	p->p_start_ms = now_mono_ms();
	p->p_start_us = now_mono_us();
	p->p_pending = 2;
	cri_list_pod_sandbox(p->p_cri, &sr, 0, pl_sandboxes_cb, p, p);
	cri_list_containers(p->p_cri, &cr, 0, pl_containers_cb, p, p);
	return 0;
}

void
pleg_set_store(struct pleg *p, struct store *st)
{
	p->p_store = st;
}

int
pleg_exit_reported(const struct pleg *p, const char *id)
{
	const struct pl_obj *o = pl_set_find(&p->p_old, id);

	return o != NULL && !o->o_sandbox && o->o_pstate == PLEG_EXITED && o->o_exit_reported;
}

void
pleg_stats(const struct pleg *p, struct pleg_stats *st)
{
	*st = p->p_stats;
	st->in_flight = p->p_in_flight;
}

int
pleg_healthy(const struct pleg *p, int64_t now_ms, char *why, size_t whylen)
{
	int64_t since =
	    p->p_stats.last_success_ms != 0 ? p->p_stats.last_success_ms : p->p_created_ms;

	if (now_ms - since <= PLEG_RELIST_THRESHOLD_MS)
		return 1;
	snprintf(why, whylen, "pleg was last seen active %llds ago; threshold is %llds",
	    (long long)((now_ms - since) / 1000), (long long)(PLEG_RELIST_THRESHOLD_MS / 1000));
	return 0;
}
