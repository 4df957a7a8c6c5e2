/* eviction.c — see eviction.h. Follows the kubelet's eviction manager (synchronize,
 * thresholdsMet, thresholdsFirstObservedAt, nodeConditions, thresholdsUpdatedStats) and its
 * helpers (rankMemoryPressure, rankDiskPressureFunc, rankPIDPressure, evictionMessage). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/config.h"
#include "core/util.h"
#include "logic/eviction.h"
#include "core/quantity.h"

static const char *const ev_names[EV_NSIGNALS] = { "memory.available",
	"allocatableMemory.available", "nodefs.available", "nodefs.inodesFree", "imagefs.available",
	"imagefs.inodesFree", "pid.available" };

const char *
ev_signal_name(enum ev_signal s)
{
	return (unsigned)s < EV_NSIGNALS ? ev_names[s] : "?";
}

int
ev_signal_parse(const char *s)
{
	size_t i;

	for (i = 0; i < EV_NSIGNALS; i++)
		if (strcmp(ev_names[i], s) == 0)
			return (int)i;
	return -1;
}

const char *
ev_signal_resource(enum ev_signal s)
{
	switch (s) {
	case EV_MEMORY:
	case EV_ALLOC_MEMORY:
		return "memory";
	case EV_NODEFS:
	case EV_IMAGEFS:
		return "ephemeral-storage";
	case EV_NODEFS_INODES:
	case EV_IMAGEFS_INODES:
		return "inodes";
	case EV_PID:
	case EV_NSIGNALS:
		break;
	}
	return "pids";
}

unsigned
ev_signal_condition(enum ev_signal s)
{
	switch (s) {
	case EV_MEMORY:
	case EV_ALLOC_MEMORY:
		return EV_COND_MEMORY;
	case EV_PID:
		return EV_COND_PID;
	default:
		return EV_COND_DISK;
	}
}

/* "100Mi" or "10%" into q / pct. 0 or -1. */
static int
ev_parse_value(const char *v, int64_t *q, double *pct)
{
	char   *end;
	int64_t milli;

	if (v == NULL || *v == '\0')
		return -1;
	if (v[strlen(v) - 1] == '%') {
		*pct = strtod(v, &end);
		*q = -1;
		return end == v + strlen(v) - 1 && *pct >= 0 && *pct <= 100 ? 0 : -1;
	}
	if (quantity_parse(v, &milli) < 0 || milli < 0)
		return -1;
	*q = milli / 1000;
	*pct = 0;
	return 0;
}

static int
ev_add(struct ev_config *c, int sig, int hard, const char *v, char *err, size_t errlen)
{
	struct ev_threshold *t;

	if (c->n == EV_MAX_THRESHOLDS) {
		snprintf(err, errlen, "too many eviction thresholds");
		return -1;
	}
	t = &c->t[c->n];
	memset(t, 0, sizeof(*t));
	t->sig = (enum ev_signal)sig;
	t->hard = hard;
	if (ev_parse_value(v, &t->quantity, &t->percent) < 0) {
		snprintf(err, errlen, "%s: \"%s\" is not a quantity or a percentage",
		    ev_signal_name(t->sig), v);
		return -1;
	}
	snprintf(t->text, sizeof(t->text), "%s", v);
	c->n++;
	return 0;
}

int
ev_config_build(const struct kvlist *hard, const struct kvlist *soft, const struct kvlist *grace,
    const struct kvlist *min_reclaim, struct ev_config *out, char *err, size_t errlen)
{
	size_t i, j;
	int    sig;

	memset(out, 0, sizeof(*out));
	for (i = 0; hard != NULL && i < hard->n; i++) {
		if ((sig = ev_signal_parse(hard->items[i].k)) < 0) {
			snprintf(err, errlen, "unknown eviction signal %s", hard->items[i].k);
			return -1;
		}
		if (ev_add(out, sig, 1, hard->items[i].v, err, errlen) < 0)
			return -1;
		if (sig == EV_MEMORY &&
		    ev_add(out, EV_ALLOC_MEMORY, 1, hard->items[i].v, err, errlen) < 0)
			return -1;
	}
	for (i = 0; soft != NULL && i < soft->n; i++) {
		const char *g;

		if ((sig = ev_signal_parse(soft->items[i].k)) < 0) {
			snprintf(err, errlen, "unknown eviction signal %s", soft->items[i].k);
			return -1;
		}
		g = grace != NULL ? kvlist_get(grace, soft->items[i].k) : NULL;
		if (g == NULL) {
			snprintf(err, errlen,
			    "grace period must be specified for the soft eviction "
			    "threshold %s",
			    soft->items[i].k);
			return -1;
		}
		if (ev_add(out, sig, 0, soft->items[i].v, err, errlen) < 0)
			return -1;
		if (config_parse_duration(g, &out->t[out->n - 1].grace_ms) < 0) {
			snprintf(err, errlen, "%s: \"%s\" is not a duration", soft->items[i].k, g);
			return -1;
		}
	}
	for (i = 0; min_reclaim != NULL && i < min_reclaim->n; i++) {
		int64_t q;
		double  pct;

		if ((sig = ev_signal_parse(min_reclaim->items[i].k)) < 0 ||
		    ev_parse_value(min_reclaim->items[i].v, &q, &pct) < 0) {
			snprintf(err, errlen, "bad minimum reclaim %s=%s", min_reclaim->items[i].k,
			    min_reclaim->items[i].v ? min_reclaim->items[i].v : "");
			return -1;
		}
		for (j = 0; j < out->n; j++)
			if ((int)out->t[j].sig == sig ||
			    (sig == EV_MEMORY && out->t[j].sig == EV_ALLOC_MEMORY)) {
				out->t[j].min_reclaim = q < 0 ? 0 : q;
				out->t[j].min_reclaim_pct = q < 0 ? pct : 0;
			}
	}
	return 0;
}

int64_t
ev_threshold_value(const struct ev_threshold *t, int64_t capacity)
{
	if (t->quantity >= 0)
		return t->quantity;
	return (int64_t)((double)capacity * t->percent / 100.0);
}

static int64_t
ev_min_reclaim(const struct ev_threshold *t, int64_t capacity)
{
	if (t->min_reclaim > 0)
		return t->min_reclaim;
	return (int64_t)((double)capacity * t->min_reclaim_pct / 100.0);
}

/* thresholdsMet: available below the threshold (plus the minimum reclaim when enforced). */
static int
ev_met(const struct ev_threshold *t, const struct ev_obs *o, int enforce_min_reclaim)
{
	int64_t v;

	if (!o->valid)
		return 0;
	v = ev_threshold_value(t, o->capacity);
	if (enforce_min_reclaim)
		v += ev_min_reclaim(t, o->capacity);
	return o->available < v;
}

static int
ev_cond_index(unsigned c)
{
	return c == EV_COND_MEMORY ? 0 : c == EV_COND_DISK ? 1 : 2;
}

void
ev_synchronize(const struct ev_config *c, const struct ev_obs obs[EV_NSIGNALS], int64_t now,
    struct ev_state *st, struct ev_decision *out)
{
	unsigned met = 0, conds = 0;
	size_t   i;
	int      best = -1;

	memset(out, 0, sizeof(*out));
	out->act = -1;
	for (i = 0; i < c->n; i++) {
		const struct ev_obs *o = &obs[c->t[i].sig];

		/* Met now, or met last time and not yet reclaimed past the minimum reclaim. */
		if (ev_met(&c->t[i], o, 0) ||
		    ((st->met_last & (1u << i)) && ev_met(&c->t[i], o, 1)))
			met |= 1u << i;
	}
	for (i = 0; i < c->n; i++) {
		if (!(met & (1u << i))) {
			st->first_met_ms[i] = 0;
			continue;
		}
		if (st->first_met_ms[i] == 0)
			st->first_met_ms[i] = now;
		conds |= ev_signal_condition(c->t[i].sig);
	}
	for (i = 0; i < 3; i++)
		if (conds & (1u << i))
			st->cond_last_ms[ev_cond_index(1u << i)] = now;
	st->conditions = 0;
	for (i = 0; i < 3; i++)
		if (st->cond_last_ms[i] != 0 && now - st->cond_last_ms[i] < c->transition_ms)
			st->conditions |= 1u << i;
	st->conditions |= conds;
	st->met_last = met;
	/* Past its grace period (0 for a hard one); memory signals are reclaimed first. */
	for (i = 0; i < c->n; i++) {
		const struct ev_threshold *t = &c->t[i];

		if (!(met & (1u << i)) || (!t->hard && now - st->first_met_ms[i] < t->grace_ms))
			continue;
		if (best < 0 ||
		    (ev_signal_condition(t->sig) == EV_COND_MEMORY &&
		        ev_signal_condition(c->t[best].sig) != EV_COND_MEMORY))
			best = (int)i;
	}
	out->met = met;
	out->conditions = st->conditions;
	out->act = best;
}

/* ---- ranking ---- */

static int
ev_cmp_i64_desc(int64_t a, int64_t b)
{
	return a > b ? -1 : a < b ? 1 : 0;
}

static int
ev_cmp_memory(const void *pa, const void *pb)
{
	const struct ev_pod *a = pa, *b = pb;
	int                  xa = a->mem_usage > a->mem_request, xb = b->mem_usage > b->mem_request;

	if (xa != xb)
		return xa ? -1 : 1; /* exceeding its requests first */
	if (a->priority != b->priority)
		return a->priority < b->priority ? -1 : 1; /* lower priority first */
	return ev_cmp_i64_desc(a->mem_usage - a->mem_request, b->mem_usage - b->mem_request);
}

static int
ev_cmp_disk(const void *pa, const void *pb)
{
	const struct ev_pod *a = pa, *b = pb;
	int xa = a->disk_usage > a->disk_request, xb = b->disk_usage > b->disk_request;

	if (xa != xb)
		return xa ? -1 : 1;
	if (a->priority != b->priority)
		return a->priority < b->priority ? -1 : 1;
	return ev_cmp_i64_desc(a->disk_usage - a->disk_request, b->disk_usage - b->disk_request);
}

static int
ev_cmp_pid(const void *pa, const void *pb)
{
	const struct ev_pod *a = pa, *b = pb;

	if (a->priority != b->priority)
		return a->priority < b->priority ? -1 : 1;
	return ev_cmp_i64_desc(a->procs, b->procs);
}

/* qsort is not stable: ties keep the caller's order through index. */
static int (*ev_cmp_cur)(const void *, const void *);

static int
ev_cmp_stable(const void *pa, const void *pb)
{
	const struct ev_pod *a = pa, *b = pb;
	int                  r = ev_cmp_cur(pa, pb);

	if (r != 0)
		return r;
	return a->index < b->index ? -1 : a->index > b->index ? 1 : 0;
}

void
ev_rank(enum ev_signal sig, struct ev_pod *pods, size_t n)
{
	switch (ev_signal_condition(sig)) {
	case EV_COND_MEMORY:
		ev_cmp_cur = ev_cmp_memory;
		break;
	case EV_COND_PID:
		ev_cmp_cur = ev_cmp_pid;
		break;
	default:
		ev_cmp_cur = ev_cmp_disk;
		break;
	}
	if (n > 1)
		qsort(pods, n, sizeof(*pods), ev_cmp_stable);
}

void
ev_quantity(int64_t v, char *buf, size_t len)
{
	static const char *const sfx[] = { "Ki", "Mi", "Gi", "Ti", "Pi", "Ei" };
	int                      k = -1;

	while (v != 0 && k < 5 && v % 1024 == 0) {
		v /= 1024;
		k++;
	}
	if (k < 0)
		snprintf(buf, len, "%lld", (long long)v);
	else
		snprintf(buf, len, "%lld%s", (long long)v, sfx[k]);
}

char *
ev_message(const struct ev_threshold *t, const struct ev_obs *o,
    const struct ev_container_usage *cu, size_t n)
{
	const char *res = ev_signal_resource(t->sig);
	char        thr[32], avail[32], *msg, *tmp;
	size_t      i;

	if (t->quantity >= 0)
		snprintf(thr, sizeof(thr), "%s", t->text);
	else
		ev_quantity(ev_threshold_value(t, o->capacity), thr, sizeof(thr));
	ev_quantity(o->available, avail, sizeof(avail));
	msg = xsprintf("The node was low on resource: %s. Threshold quantity: %s, available: %s. ",
	    res, thr, avail);
	if (strcmp(res, "memory") != 0 && strcmp(res, "ephemeral-storage") != 0)
		return msg;
	for (i = 0; i < n; i++) {
		char use[32], req[32];

		if (cu[i].usage <= cu[i].request)
			continue;
		ev_quantity(cu[i].usage, use, sizeof(use));
		ev_quantity(cu[i].request, req, sizeof(req));
		tmp = xsprintf("%sContainer %s was using %s, request is %s, has larger consumption "
		               "of %s. ",
		    msg, cu[i].name, use, req, res);
		free(msg);
		msg = tmp;
	}
	return msg;
}

char *
ev_emptydir_message(const char *volume, int64_t limit)
{
	char q[32];

	ev_quantity(limit, q, sizeof(q));
	return xsprintf("Usage of EmptyDir volume \"%s\" exceeds the limit \"%s\". ", volume, q);
}

char *
ev_pod_storage_message(int64_t limit)
{
	char q[32];

	ev_quantity(limit, q, sizeof(q));
	return xsprintf(
	    "Pod ephemeral local storage usage exceeds the total limit of containers %s. ", q);
}

int64_t
ev_grace(const struct ev_config *c, const struct ev_threshold *t, const struct pod *p)
{
	int64_t g;

	if (t->hard)
		return 1; /* immediateEvictionGracePeriodSeconds */
	g = c->max_grace_s;
	if (p->termination_grace.set && p->termination_grace.v < g)
		g = p->termination_grace.v;
	return g;
}
