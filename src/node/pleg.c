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
#include "core/loop.h"
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

/* Seeds of the list record hashes: a sandbox and a container record never match. */
#define PL_SEED_SANDBOX     0x736278ULL
#define PL_SEED_CONTAINER   0x637472ULL
/* The fields a record's hash is made of (api.proto): PodSandbox id 1, state 3; Container
 * id 1, state 6. Nothing else of a record changes while its ID lasts (cri_wire_hash). */
#define PL_KEYS_SANDBOX     (1u << 1 | 1u << 3)
#define PL_KEYS_CONTAINER   (1u << 1 | 1u << 6)
/* Decoding list records, per loop turn: past it the rest waits for the next turns (the
 * first relist after a start decodes every record, a few ms per thousand). */
#define PL_DECODE_BUDGET_US 5000

/* One sandbox or container as the runtime reported it. Every string is interned (intern.h):
 * the IDs, UIDs, names, images and reasons that the pod cache keeps too are held once. */
struct pl_obj {
	char               *o_uid;
	char               *o_pod_name;
	char               *o_pod_ns;
	uint64_t            o_item; /* hash of the list record it was decoded from */
	uint64_t            o_uidh; /* hash of o_uid */
	int                 o_sandbox;
	enum pleg_cstate    o_pstate;
	enum pleg_cstate    o_prev;        /* state in the previous relist (NONEXISTENT: new) */
	int                 o_have_status; /* status details fetched for this state */
	int                 o_exit_reported;
	int                 o_fetched; /* by a status call of this relist: to the store */
	int                 o_kept;    /* its list record is the previous relist's, unchanged */
	uint32_t            o_claimed; /* (previous set) relist generation its record came in */
	struct rt_container o_c;       /* o_c.id is the key for both kinds */
	struct rt_sandbox   o_s;
};

/* A slot of the index of p_old: a relist that finds every record again reads only these,
 * never the objects (each a cache line or two away from the next). */
struct pl_islot {
	uint64_t i_item;    /* the object's o_item */
	uint32_t i_obj;     /* its index in p_old + 1 (0: an empty slot), PL_ISLOT_SANDBOX */
	uint32_t i_claimed; /* the relist generation whose list had its record again */
};
#define PL_ISLOT_SANDBOX 0x80000000u

struct pl_set {
	struct pl_obj *objs;
	size_t         n;
	size_t         cap;
};

/* Hashes of list records that are not pods' (no pod UID), so that they are not decoded
 * again by every relist. */
struct pl_hashes {
	uint64_t *h;
	size_t    n;
	size_t    cap;
};

/* List records left to decode on later turns: their bytes, copied out of the answer. */
struct pl_rec {
	uint64_t r_hash;
	uint32_t r_off;
	uint32_t r_len;
	int      r_sandbox;
};

struct pl_defer {
	uint8_t       *d_buf;
	size_t         d_len, d_cap;
	struct pl_rec *d_recs;
	size_t         d_n, d_cap_recs, d_next;
	int            d_lists; /* list answers waiting on the queue: a pl_step_done each */
	int64_t        d_walk_t0;
	int64_t        d_budget_us; /* PL_DECODE_BUDGET_US; tests: KLET_PLEG_DECODE_BUDGET_US */
	unsigned       d_turns;     /* turns the queue took */
	struct event  *d_ev;
};

struct pleg {
	struct event_base *p_base;
	struct cri        *p_cri;
	struct podcache   *p_cache;
	pleg_event_fn      p_fn;
	void              *p_arg;
	pleg_exit_fn       p_exit_fn;
	void              *p_exit_arg;
	struct pl_set      p_old; /* the previous relist, sorted by id */
	struct pl_set      p_new; /* what changed, being built */
	/* p_old by list record hash: open addressing. */
	struct pl_islot       *p_index;
	size_t                 p_index_mask;
	size_t                 p_claimed;    /* records of p_old that came again */
	uint32_t               p_gen;        /* relists started */
	int                    p_incomplete; /* an object of p_old lacks its details */
	struct pl_hashes       p_ign_old;    /* sorted */
	struct pl_hashes       p_ign_new;
	size_t                 p_ign_found;
	int                    p_in_flight;
	int                    p_pending; /* calls outstanding */
	int                    p_failed;
	int                    p_statusing; /* the status calls' phase */
	int64_t                p_start_ms;
	int64_t                p_start_us;
	int64_t                p_created_ms;
	size_t                 p_status_calls;
	size_t                 p_decoded; /* records decoded by this relist */
	struct pl_status_call *p_calls;   /* one slot per object of p_new */
	void (*p_done)(int, void *);
	void             *p_done_arg;
	struct pleg_stats p_stats;
	/* Recovery: the details stored by the previous daemon (sorted by id), loaded for the
	 * first relist and dropped once it succeeded. */
	struct store   *p_store;
	struct pl_set   p_seed;
	int             p_seed_loaded;
	size_t          p_seeded; /* objects the first relist took from the store */
	struct pl_defer p_defer;
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
	memset(s, 0, sizeof(*s));
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

static void
pl_hashes_add(struct pl_hashes *hs, uint64_t h)
{
	if (hs->n == hs->cap) {
		hs->cap = hs->cap < 8 ? 8 : hs->cap * 2;
		hs->h = xreallocarray(hs->h, hs->cap, sizeof(*hs->h));
	}
	hs->h[hs->n++] = h;
}

static int
pl_cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

static void
pl_hashes_clear(struct pl_hashes *hs)
{
	free(hs->h);
	memset(hs, 0, sizeof(*hs));
}

/* ---- the index of the previous relist by list record hash ---- */

static size_t
pl_slot(uint64_t h, size_t mask)
{
	return (size_t)(h ^ (h >> 29)) & mask;
}

/* Rebuilt after each relist that changed something: O(n), no string compared. */
static void
pl_index_build(struct pleg *p)
{
	size_t i, size = 16;

	while (size < 2 * p->p_old.n)
		size *= 2;
	if (p->p_index == NULL || p->p_index_mask + 1 != size) {
		free(p->p_index);
		p->p_index = xcalloc(size, sizeof(*p->p_index));
		p->p_index_mask = size - 1;
	} else
		memset(p->p_index, 0, size * sizeof(*p->p_index));
	for (i = 0; i < p->p_old.n; i++) {
		const struct pl_obj *o = &p->p_old.objs[i];
		size_t               s = pl_slot(o->o_item, p->p_index_mask);

		while (p->p_index[s].i_obj != 0)
			s = (s + 1) & p->p_index_mask;
		p->p_index[s].i_item = o->o_item;
		p->p_index[s].i_obj = ((uint32_t)i + 1) | (o->o_sandbox ? PL_ISLOT_SANDBOX : 0);
		p->p_index[s].i_claimed = o->o_claimed;
	}
}

/* Claims the previous relist's object decoded from a record with hash h, not claimed yet:
 * 1, or 0 when there is none (the record is new or changed). */
static int
pl_claim(struct pleg *p, uint64_t h, int sandbox)
{
	uint32_t kind = sandbox ? PL_ISLOT_SANDBOX : 0;
	size_t   s;

	if (p->p_index == NULL)
		return 0;
	for (s = pl_slot(h, p->p_index_mask); p->p_index[s].i_obj != 0;
	     s = (s + 1) & p->p_index_mask) {
		struct pl_islot *sl = &p->p_index[s];

		if (sl->i_item == h && (sl->i_obj & PL_ISLOT_SANDBOX) == kind &&
		    sl->i_claimed != p->p_gen) {
			sl->i_claimed = p->p_gen;
			p->p_claimed++;
			return 1;
		}
	}
	return 0;
}

/* The claims, from the index to the objects: for the merge of a relist that changed. */
static void
pl_claims_to_objs(struct pleg *p)
{
	size_t i;

	if (p->p_index == NULL)
		return;
	for (i = 0; i <= p->p_index_mask; i++)
		if (p->p_index[i].i_obj != 0)
			p->p_old.objs[(p->p_index[i].i_obj & ~PL_ISLOT_SANDBOX) - 1].o_claimed =
			    p->p_index[i].i_claimed;
}

/* A record without a pod UID that the previous relist saw too: 1 (not decoded again). */
static int
pl_ignored_known(struct pleg *p, uint64_t h)
{
	if (p->p_ign_old.n == 0 ||
	    bsearch(&h, p->p_ign_old.h, p->p_ign_old.n, sizeof(uint64_t), pl_cmp_u64) == NULL)
		return 0;
	pl_hashes_add(&p->p_ign_new, h);
	p->p_ign_found++;
	return 1;
}

static int
pl_ignored(struct pleg *p, uint64_t h)
{
	pl_hashes_add(&p->p_ign_new, h);
	return 0;
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

/* A failed relist leaves the previous one as it was. */
static void
pl_unclaim(struct pleg *p)
{
	p->p_claimed = 0; /* the claims carry this relist's generation: stale from now */
	p->p_ign_found = 0;
	p->p_ign_new.n = 0;
	pl_set_clear(&p->p_new);
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
		pl_unclaim(p);
		p->p_stats.failures++;
		pl_finish(p, -1);
		return;
	}
	pl_lists_done(p);
}

/* One record of ListPodSandboxResponse.items that is not the previous relist's. */
static int
pl_sandbox_decode(struct pleg *p, uint64_t h, const uint8_t *b, size_t len)
{
	Runtime__V1__PodSandbox *sb;
	const char              *uid = NULL, *name = NULL, *ns = NULL;
	struct pl_obj           *o;

	if ((sb = runtime__v1__pod_sandbox__unpack(NULL, len, b)) == NULL)
		return -1;
	p->p_decoded++;
	if (sb->metadata != NULL) {
		uid = sb->metadata->uid;
		name = sb->metadata->name;
		ns = sb->metadata->namespace_;
	}
	if (uid == NULL || *uid == '\0')
		uid = PL_LOOKUP(sb->labels, sb->n_labels, LBL_POD_UID);
	if (sb->id == NULL || *sb->id == '\0' || uid == NULL || *uid == '\0') {
		/* not a pod sandbox of a kubelet */
		runtime__v1__pod_sandbox__free_unpacked(sb, NULL);
		return pl_ignored(p, h);
	}
	o = pl_set_add(&p->p_new);
	o->o_item = h;
	o->o_sandbox = 1;
	o->o_uid = intern(uid);
	o->o_uidh = hash_bytes(uid, strlen(uid), 0);
	o->o_pod_name = intern(name);
	o->o_pod_ns = intern(ns);
	o->o_c.id = intern(sb->id);
	o->o_s.id = intern_ref(o->o_c.id);
	o->o_s.attempt = sb->metadata != NULL ? sb->metadata->attempt : 0;
	o->o_s.state = sb->state == RUNTIME__V1__POD_SANDBOX_STATE__SANDBOX_READY ? RT_SB_READY
	                                                                          : RT_SB_NOTREADY;
	o->o_s.created_at = sb->created_at;
	o->o_pstate = o->o_s.state == RT_SB_READY ? PLEG_RUNNING : PLEG_EXITED;
	runtime__v1__pod_sandbox__free_unpacked(sb, NULL);
	return 0;
}

/* One record of ListContainersResponse.containers, the same way. */
static int
pl_container_decode(struct pleg *p, uint64_t h, const uint8_t *b, size_t len)
{
	Runtime__V1__Container *c;
	const char             *uid, *name, *v;
	struct pl_obj          *o;

	if ((c = runtime__v1__container__unpack(NULL, len, b)) == NULL)
		return -1;
	p->p_decoded++;
	uid = PL_LOOKUP(c->labels, c->n_labels, LBL_POD_UID);
	if (c->id == NULL || *c->id == '\0' || uid == NULL || *uid == '\0') {
		runtime__v1__container__free_unpacked(c, NULL);
		return pl_ignored(p, h);
	}
	name = PL_LOOKUP(c->labels, c->n_labels, LBL_CNAME);
	if (name == NULL && c->metadata != NULL)
		name = c->metadata->name;
	o = pl_set_add(&p->p_new);
	o->o_item = h;
	o->o_uid = intern(uid);
	o->o_uidh = hash_bytes(uid, strlen(uid), 0);
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
	runtime__v1__container__free_unpacked(c, NULL);
	return 0;
}

static int
pl_decode(struct pleg *p, int sandbox, uint64_t h, const uint8_t *b, size_t len)
{
	return sandbox ? pl_sandbox_decode(p, h, b, len) : pl_container_decode(p, h, b, len);
}

static void
pl_defer_clear(struct pl_defer *d)
{
	free(d->d_buf);
	free(d->d_recs);
	d->d_buf = NULL;
	d->d_recs = NULL;
	d->d_len = d->d_cap = d->d_n = d->d_cap_recs = d->d_next = 0;
}

/* Keeps a record for a later turn. */
static void
pl_defer_add(struct pl_defer *d, int sandbox, uint64_t h, const uint8_t *b, size_t len)
{
	struct pl_rec *r;

	if (d->d_len + len > d->d_cap) {
		d->d_cap = d->d_cap < 65536 ? 65536 : d->d_cap;
		while (d->d_len + len > d->d_cap)
			d->d_cap *= 2;
		d->d_buf = xreallocarray(d->d_buf, d->d_cap, 1);
	}
	if (d->d_n == d->d_cap_recs) {
		d->d_cap_recs = d->d_cap_recs < 256 ? 256 : d->d_cap_recs * 2;
		d->d_recs = xreallocarray(d->d_recs, d->d_cap_recs, sizeof(*d->d_recs));
	}
	r = &d->d_recs[d->d_n++];
	r->r_hash = h;
	r->r_off = (uint32_t)d->d_len;
	r->r_len = (uint32_t)len;
	r->r_sandbox = sandbox;
	memcpy(d->d_buf + d->d_len, b, len);
	d->d_len += len;
}

/* The list answers arrive serialized: each record is hashed and only the new or changed
 * ones are decoded (nothing at all when the runtime is as it was): now, or on a later turn
 * once this turn's budget is spent (from then on, the rest of the answer too). */
static int
pl_item(struct pleg *p, int sandbox, const uint8_t *b, size_t len)
{
	struct pl_defer *d = &p->p_defer;
	uint64_t         h = sandbox ? cri_wire_hash(b, len, PL_SEED_SANDBOX, PL_KEYS_SANDBOX)
	                             : cri_wire_hash(b, len, PL_SEED_CONTAINER, PL_KEYS_CONTAINER);

	if (pl_claim(p, h, sandbox) || pl_ignored_known(p, h))
		return 0;
	if (d->d_n == d->d_next && !loop_yield_due(d->d_walk_t0, d->d_budget_us))
		return pl_decode(p, sandbox, h, b, len);
	pl_defer_add(d, sandbox, h, b, len);
	return 0;
}

static int
pl_sandbox_item(const uint8_t *b, size_t len, void *arg)
{
	return pl_item(arg, 1, b, len);
}

static int
pl_container_item(const uint8_t *b, size_t len, void *arg)
{
	return pl_item(arg, 0, b, len);
}

static void pl_defer_run(evutil_socket_t, short, void *);

/* The queue goes on in the next turn: a timer of no delay fires after the next poll (an
 * event made active now would run in this turn). */
static void
pl_defer_arm(struct pleg *p)
{
	struct timeval now = { 0, 0 };

	if (p->p_defer.d_ev == NULL) {
		if ((p->p_defer.d_ev = evtimer_new(p->p_base, pl_defer_run, p)) == NULL)
			fatalx("%s: evtimer_new failed", __func__);
		event_priority_set(p->p_defer.d_ev, LOOP_PRI_NORMAL);
	}
	evtimer_add(p->p_defer.d_ev, &now);
}

/* Decodes deferred records until the turn's budget is spent; when none is left, the list
 * answers that waited on them are done. */
static void
pl_defer_run(evutil_socket_t fd, short what, void *arg)
{
	struct pleg     *p = arg;
	struct pl_defer *d = &p->p_defer;
	int64_t          t0 = now_mono_us();
	int              n;

	(void)fd;
	(void)what;
	loop_note("relist");
	d->d_turns++;
	while (d->d_next < d->d_n) {
		const struct pl_rec *r = &d->d_recs[d->d_next++];

		if (pl_decode(p, r->r_sandbox, r->r_hash, d->d_buf + r->r_off, r->r_len) == -1) {
			pl_fail(p, r->r_sandbox ? "ListPodSandbox" : "ListContainers",
			    GRPC_INTERNAL, "undecodable answer");
			d->d_next = d->d_n;
			break;
		}
		if (d->d_next < d->d_n && loop_yield_due(t0, d->d_budget_us)) {
			pl_defer_arm(p);
			loop_note(NULL);
			return;
		}
	}
	log_v(2, "relist: %zu records decoded over the %u turns after the answers", d->d_n,
	    d->d_turns);
	d->d_turns = 0;
	pl_defer_clear(d);
	n = d->d_lists;
	d->d_lists = 0;
	while (n-- > 0)
		pl_step_done(p);
	loop_note(NULL);
}

/* One list answer: walked now; what is left to decode waits for the next turns. */
static void
pl_list_done(struct pleg *p, const char *what, int code, const char *msg, const uint8_t *raw,
    size_t len, int (*item)(const uint8_t *, size_t, void *))
{
	struct pl_defer *d = &p->p_defer;
	size_t           queued = d->d_n;

	loop_note("relist");
	d->d_walk_t0 = now_mono_us();
	if (code != GRPC_OK)
		pl_fail(p, what, code, msg);
	else if (cri_wire_items(raw, len, 1, item, p) == -1)
		pl_fail(p, what, GRPC_INTERNAL, "undecodable answer");
	if (d->d_n > queued) {
		d->d_lists++;
		pl_defer_arm(p);
	} else
		pl_step_done(p);
	loop_note(NULL);
}

static void
pl_sandboxes_cb(int code, const char *msg, const uint8_t *raw, size_t len, void *arg)
{
	pl_list_done(arg, "ListPodSandbox", code, msg, raw, len, pl_sandbox_item);
}

static void
pl_containers_cb(int code, const char *msg, const uint8_t *raw, size_t len, void *arg)
{
	pl_list_done(arg, "ListContainers", code, msg, raw, len, pl_container_item);
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

/* The relist's pods whose cache entry is rewritten: by UID hash, then UID. */
struct pl_dirty {
	uint64_t    d_uidh;
	const char *d_uid;
};

struct pl_dirtyset {
	struct pl_dirty *d;
	size_t           n, cap;
	char           **owned; /* UIDs copied from the cache */
	size_t           nowned;
};

static void
pl_dirty_add(struct pl_dirtyset *ds, uint64_t uidh, const char *uid)
{
	if (ds->n == ds->cap) {
		ds->cap = ds->cap < 16 ? 16 : ds->cap * 2;
		ds->d = xreallocarray(ds->d, ds->cap, sizeof(*ds->d));
	}
	ds->d[ds->n].d_uidh = uidh;
	ds->d[ds->n].d_uid = uid;
	ds->n++;
}

static int
pl_cmp_dirty(const void *a, const void *b)
{
	const struct pl_dirty *x = a, *y = b;

	if (x->d_uidh != y->d_uidh)
		return x->d_uidh < y->d_uidh ? -1 : 1;
	return strcmp(x->d_uid, y->d_uid);
}

static void
pl_dirty_foreign(const char *uid, void *arg)
{
	struct pl_dirtyset *ds = arg;
	char               *u = xstrdup(uid);

	ds->owned = xreallocarray(ds->owned, ds->nowned + 1, sizeof(*ds->owned));
	ds->owned[ds->nowned++] = u;
	pl_dirty_add(ds, hash_bytes(u, strlen(u), 0), u);
}

static void
pl_dirty_clear(struct pl_dirtyset *ds)
{
	size_t i;

	for (i = 0; i < ds->nowned; i++)
		free(ds->owned[i]);
	free(ds->owned);
	free(ds->d);
	memset(ds, 0, sizeof(*ds));
}

/* One object of a dirty pod: which pod (index into the dirty set) and the object. */
struct pl_member {
	size_t         m_pod;
	struct pl_obj *m_obj;
};

static int
pl_cmp_member(const void *a, const void *b)
{
	const struct pl_member *x = a, *y = b;

	return x->m_pod < y->m_pod ? -1 : x->m_pod > y->m_pod;
}

/* Writes the cache entry of every dirty pod from set (the objects the runtime has now):
 * one status per pod, absence for a pod without objects. The other pods' entries hold. */
static void
pl_cache_dirty(struct pleg *p, struct pl_set *set, struct pl_dirtyset *ds)
{
	struct pl_member *m = NULL;
	struct pl_obj   **objs;
	size_t            i, j, k, nm = 0, cap = 0;

	if (ds->n == 0)
		return;
	qsort(ds->d, ds->n, sizeof(*ds->d), pl_cmp_dirty);
	for (i = j = 0; i < ds->n; i++) /* unique */
		if (j == 0 || pl_cmp_dirty(&ds->d[j - 1], &ds->d[i]) != 0)
			ds->d[j++] = ds->d[i];
	ds->n = j;
	for (i = 0; i < set->n; i++) {
		struct pl_obj  *o = &set->objs[i];
		struct pl_dirty key = { o->o_uidh, o->o_uid }, *d;

		d = bsearch(&key, ds->d, ds->n, sizeof(*ds->d), pl_cmp_dirty);
		if (d == NULL)
			continue;
		if (nm == cap) {
			cap = cap < 16 ? 16 : cap * 2;
			m = xreallocarray(m, cap, sizeof(*m));
		}
		m[nm].m_pod = (size_t)(d - ds->d);
		m[nm].m_obj = o;
		nm++;
	}
	if (nm > 1)
		qsort(m, nm, sizeof(*m), pl_cmp_member);
	objs = xcalloc(nm + 1, sizeof(*objs));
	for (i = 0, k = 0; i < ds->n; i++) {
		struct rt_pod_status st;
		size_t               n = 0;

		for (; k < nm && m[k].m_pod == i; k++)
			objs[n++] = m[k].m_obj;
		if (n == 0) {
			podcache_relist_delete(p->p_cache, ds->d[i].d_uid, p->p_start_ms);
			continue;
		}
		pl_build_status(&st, objs, n);
		podcache_relist_set(p->p_cache, &st, p->p_start_ms);
		pl_status_free(&st);
	}
	free(objs);
	free(m);
}

/* The pods of a set: distinct UIDs (by hash: O(n), no string compared). */
static size_t
pl_count_pods(const struct pl_set *set)
{
	uint64_t *t;
	size_t    i, size = 16, mask, n = 0;

	if (set->n == 0)
		return 0;
	while (size < 2 * set->n)
		size *= 2;
	mask = size - 1;
	t = xcalloc(size, sizeof(*t));
	for (i = 0; i < set->n; i++) {
		uint64_t h = set->objs[i].o_uidh | 1; /* 0 marks an empty slot */
		size_t   s = pl_slot(h, mask);

		while (t[s] != 0 && t[s] != h)
			s = (s + 1) & mask;
		if (t[s] == 0) {
			t[s] = h;
			n++;
		}
	}
	free(t);
	return n;
}

static void
pl_done_stats(struct pleg *p, int changed)
{
	int64_t dur = now_mono_us() - p->p_start_us;

	p->p_stats.relists++;
	if (!changed)
		p->p_stats.unchanged++;
	p->p_stats.last_changed = changed;
	p->p_stats.decoded = p->p_decoded;
	p->p_stats.decoded_total += p->p_decoded;
	p->p_stats.last_duration_us = dur;
	if (dur > p->p_stats.max_duration_us)
		p->p_stats.max_duration_us = dur;
	p->p_stats.last_success_ms = now_mono_ms();
	p->p_stats.status_calls = p->p_status_calls;
	log_v(5,
	    "relist done in %lldus pods=%zu containers=%zu sandboxes=%zu status_calls=%zu "
	    "decoded=%zu%s",
	    (long long)dur, p->p_stats.pods, p->p_stats.containers, p->p_stats.sandboxes,
	    p->p_status_calls, p->p_decoded, changed ? "" : " unchanged");
}

/* The runtime answered exactly as last time: nothing decoded, nothing to diff. The cache's
 * time moves on (every pod is known as of this relist); entries another reader wrote since
 * (kuberuntime's own status reads) are put back to the relist's view. */
static void
pl_unchanged(struct pleg *p)
{
	p->p_claimed = 0;
	p->p_ign_found = 0;
	p->p_ign_new.n = 0;
	p->p_status_calls = 0;
	if (podcache_foreign_count(p->p_cache) > 0) {
		struct pl_dirtyset ds;

		memset(&ds, 0, sizeof(ds));
		podcache_foreach_foreign(p->p_cache, pl_dirty_foreign, &ds);
		pl_cache_dirty(p, &p->p_old, &ds);
		pl_dirty_clear(&ds);
	}
	podcache_update_time(p->p_cache, p->p_start_ms);
	pl_done_stats(p, 0);
	pl_finish(p, 0);
}

/* Both lists are in. Nothing changed: done. Else the new set is the kept objects (moved
 * from the previous set, in id order) merged with the decoded ones; then the status of what
 * is new or changed state is fetched. */
static void
pl_lists_done(struct pleg *p)
{
	struct pl_set m;
	size_t        i, j, k, nd;

	if (p->p_stats.relists > 0 && p->p_new.n == 0 && p->p_claimed == p->p_old.n &&
	    !p->p_incomplete && p->p_ign_new.n == p->p_ign_old.n &&
	    p->p_ign_found == p->p_ign_old.n) {
		pl_unchanged(p);
		return;
	}
	pl_claims_to_objs(p);
	nd = p->p_new.n;
	if (nd > 1)
		qsort(p->p_new.objs, nd, sizeof(*p->p_new.objs), pl_cmp_id);
	memset(&m, 0, sizeof(m));
	m.cap = p->p_claimed + nd;
	m.objs = xcalloc(m.cap + 1, sizeof(*m.objs));
	/* Merge; what stays in p_old (compacted, still sorted) is gone or changed. */
	for (i = j = k = 0; i < p->p_old.n || j < nd;) {
		struct pl_obj *o = i < p->p_old.n ? &p->p_old.objs[i] : NULL;

		if (o != NULL && o->o_claimed != p->p_gen) {
			if (k != i)
				p->p_old.objs[k] = *o;
			k++;
			i++;
			continue;
		}
		if (o != NULL && (j == nd || strcmp(o->o_c.id, p->p_new.objs[j].o_c.id) <= 0)) {
			m.objs[m.n] = *o;
			m.objs[m.n].o_kept = 1;
			m.objs[m.n].o_fetched = 0;
			m.n++;
			i++;
			continue;
		}
		m.objs[m.n++] = p->p_new.objs[j++];
	}
	p->p_old.n = k;
	free(p->p_new.objs);
	p->p_new = m;

	p->p_status_calls = 0;
	free(p->p_calls);
	p->p_calls = xcalloc(p->p_new.n + 1, sizeof(*p->p_calls));
	p->p_pending = 1; /* held until every call is started */
	p->p_statusing = 1;
	p->p_seeded = 0;
	for (i = 0; i < p->p_new.n; i++) {
		struct pl_obj         *n = &p->p_new.objs[i];
		const struct pl_obj   *o = NULL;
		struct pl_status_call *sc;

		if (n->o_kept) {
			n->o_prev = n->o_pstate;
			if (n->o_have_status)
				continue;
		} else {
			o = pl_set_find(&p->p_old, n->o_c.id);
			n->o_prev = o != NULL ? o->o_pstate : PLEG_NONEXISTENT;
			if (o != NULL && o->o_have_status && o->o_pstate == n->o_pstate) {
				pl_carry(n, o);
				continue;
			}
			if (o == NULL && (o = pl_seed_find(p, n)) != NULL) {
				pl_carry(n, o);
				p->p_seeded++;
				continue;
			}
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

static void
pl_commit(struct pleg *p)
{
	struct pl_set     *nw = &p->p_new, *old = &p->p_old;
	struct pl_dirtyset ds;
	size_t             i, nsb = 0;

	loop_note("relist commit");
	memset(&ds, 0, sizeof(ds));
	/* Events: every new or changed object against its previous state, then the vanished
	 * ones (old now holds only the objects whose record did not come again). */
	for (i = 0; i < nw->n; i++) {
		struct pl_obj *o = &nw->objs[i];

		pl_emit(p, o, o->o_prev, o->o_pstate);
		if (!o->o_kept || o->o_fetched)
			pl_dirty_add(&ds, o->o_uidh, o->o_uid);
		nsb += o->o_sandbox;
	}
	for (i = 0; i < old->n; i++) {
		pl_dirty_add(&ds, old->objs[i].o_uidh, old->objs[i].o_uid);
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
	/* The cache: the pods that changed, and those another reader wrote since. */
	if (podcache_foreign_count(p->p_cache) > 0)
		podcache_foreach_foreign(p->p_cache, pl_dirty_foreign, &ds);
	pl_cache_dirty(p, nw, &ds);
	pl_dirty_clear(&ds);
	free(p->p_calls);
	p->p_calls = NULL;
	podcache_update_time(p->p_cache, p->p_start_ms);
	pl_set_clear(old);
	*old = *nw;
	memset(nw, 0, sizeof(*nw));
	pl_index_build(p);
	p->p_incomplete = 0;
	for (i = 0; i < old->n; i++)
		if (!old->objs[i].o_have_status)
			p->p_incomplete = 1;
	pl_hashes_clear(&p->p_ign_old);
	p->p_ign_old = p->p_ign_new;
	memset(&p->p_ign_new, 0, sizeof(p->p_ign_new));
	if (p->p_ign_old.n > 1)
		qsort(p->p_ign_old.h, p->p_ign_old.n, sizeof(uint64_t), pl_cmp_u64);
	p->p_claimed = 0;
	p->p_ign_found = 0;
	p->p_stats.pods = pl_count_pods(old);
	p->p_stats.sandboxes = nsb;
	p->p_stats.containers = old->n - nsb;
	if (p->p_stats.relists == 0) {
		p->p_stats.first_objects = old->n;
		p->p_stats.first_from_store = p->p_seeded;
		p->p_stats.first_status_calls = p->p_status_calls;
	}
	pl_done_stats(p, 1);
	loop_note(NULL);
	pl_finish(p, 0);
}

struct pleg *
pleg_new(
    struct event_base *base, struct cri *cri, struct podcache *cache, pleg_event_fn fn, void *arg)
{
	struct pleg *p = xcalloc(1, sizeof(*p));
	const char  *e;

	p->p_base = base;
	p->p_cri = cri;
	p->p_cache = cache;
	p->p_fn = fn;
	p->p_arg = arg;
	p->p_created_ms = now_mono_ms();
	p->p_defer.d_budget_us = PL_DECODE_BUDGET_US;
	if ((e = getenv("KLET_PLEG_DECODE_BUDGET_US")) != NULL) /* tests: 0 defers every one */
		p->p_defer.d_budget_us = strtoll(e, NULL, 10);
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
	if (p->p_defer.d_ev != NULL)
		event_free(p->p_defer.d_ev);
	pl_defer_clear(&p->p_defer);
	free(p->p_calls);
	free(p->p_index);
	pl_set_clear(&p->p_old);
	pl_set_clear(&p->p_new);
	pl_set_clear(&p->p_seed);
	pl_hashes_clear(&p->p_ign_old);
	pl_hashes_clear(&p->p_ign_new);
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
	p->p_gen++;
	if (p->p_gen == 0)
		p->p_gen = 1; /* 0 is "never claimed" */
	p->p_claimed = 0;
	p->p_decoded = 0;
	p->p_ign_found = 0;
	p->p_ign_new.n = 0;
	/* The first relist's store read in this turn, not in the one that takes the answers. */
	pl_seed_load(p);
	cri_list_pod_sandbox_raw(p->p_cri, &sr, 0, pl_sandboxes_cb, p, p);
	cri_list_containers_raw(p->p_cri, &cr, 0, pl_containers_cb, p, p);
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

	/* During the status calls of a relist, the kept objects are in the new set already. */
	if (o == NULL && p->p_statusing)
		o = pl_set_find(&p->p_new, id);

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
