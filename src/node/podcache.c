/* podcache.c — timestamped runtime status per pod, and "newer than" waiters. */
#include <stdlib.h>
#include <string.h>

#include <event2/event.h>

#include "core/intern.h"
#include "core/log.h"
#include "core/loop.h"
#include "core/strindex.h"
#include "node/podcache.h"
#include "core/util.h"

#define PC_FIRE_BUDGET_US 5000

struct pc_entry {
	struct rt_pod_status e_st;      /* its strings interned (rt_pod_status_intern) */
	int64_t              e_ts;      /* when e_st was read */
	int                  e_absent;  /* deleted: the runtime had nothing as of e_ts */
	int                  e_foreign; /* last written by another reader than the PLEG */
	uint64_t             e_version; /* c_version at its last write or delete */
};

struct podcache_wait {
	struct podcache *w_pc;
	char            *w_uid;
	int64_t          w_min_ts;
	void (*w_cb)(void *);
	void                 *w_arg;
	int                   w_ready;
	struct podcache_wait *w_next;
};

struct podcache {
	struct event_base    *c_base;
	struct event         *c_fire;
	struct event         *c_more; /* the rest of a cut-short pc_fire, after other events */
	int                   c_fire_armed;
	int                   c_check; /* writes since the waiters were last looked at */
	struct pc_entry     **c_entries;
	size_t                c_n;
	size_t                c_cap;
	struct strindex      *c_index; /* c_entries by UID */
	size_t                c_nforeign;
	size_t                c_nabsent; /* entries with e_absent: the relist's drop walks them */
	int64_t               c_time;
	uint64_t              c_version; /* grows with every write or delete */
	struct podcache_wait *c_waits;
};

static const char *
pc_key(const void *arg, size_t i)
{
	const struct podcache *pc = arg;

	return pc->c_entries[i]->e_st.uid;
}

static struct pc_entry *
pc_find(const struct podcache *pc, const char *uid, size_t *idx)
{
	size_t i = strindex_find(pc->c_index, uid, pc_key, pc);

	if (i == STRINDEX_NONE)
		return NULL;
	if (idx != NULL)
		*idx = i;
	return pc->c_entries[i];
}

static int64_t
pc_as_of(const struct podcache *pc, const struct pc_entry *e)
{
	if (e == NULL)
		return pc->c_time;
	return e->e_ts > pc->c_time ? e->e_ts : pc->c_time;
}

static void pc_mark_ready(struct podcache *);

/* Calls the ready waiters, PC_FIRE_BUDGET_US of them a turn, or fewer once the turn's shared
 * budget is spent (loop_yield_due; at least one): a relist may release a thousand pod syncs
 * at once, and the rest go on after the events that came meanwhile. */
static void
pc_fire(evutil_socket_t fd, short what, void *arg)
{
	struct podcache       *pc = arg;
	struct podcache_wait **pp, *w;
	int64_t                t0 = now_mono_us();
	int                    fired = 0;

	(void)fd;
	(void)what;
	pc->c_fire_armed = 0;
	loop_note("cache waiters");
	if (pc->c_check) {
		pc->c_check = 0;
		pc_mark_ready(pc);
	}
	/* Unlink the ready waiters first: a callback may add or cancel others. */
	pp = &pc->c_waits;
	while ((w = *pp) != NULL) {
		if (!w->w_ready) {
			pp = &w->w_next;
			continue;
		}
		if (fired > 0 && loop_yield_due(t0, PC_FIRE_BUDGET_US)) {
			struct timeval now = { 0, 0 };

			pc->c_fire_armed = 1;
			evtimer_add(pc->c_more, &now);
			break;
		}
		*pp = w->w_next;
		fired++;
		w->w_cb(w->w_arg);
		free(w->w_uid);
		free(w);
		pp = &pc->c_waits;
	}
	loop_note(NULL);
}

/* Marks the waiters whose condition now holds. */
static void
pc_mark_ready(struct podcache *pc)
{
	struct podcache_wait *w;

	for (w = pc->c_waits; w != NULL; w = w->w_next)
		if (!w->w_ready && pc_as_of(pc, pc_find(pc, w->w_uid, NULL)) >= w->w_min_ts)
			w->w_ready = 1;
}

/* The cache changed: the waiters are looked at once, by the firing event (not at every
 * write: a relist writes a thousand entries while a thousand syncs wait). */
static void
pc_check_waits(struct podcache *pc)
{
	if (pc->c_waits == NULL)
		return;
	pc->c_check = 1;
	if (!pc->c_fire_armed) {
		pc->c_fire_armed = 1;
		event_active(pc->c_fire, EV_TIMEOUT, 0);
	}
}

struct podcache *
podcache_new(struct event_base *base)
{
	struct podcache *pc = xcalloc(1, sizeof(*pc));

	pc->c_base = base;
	if ((pc->c_fire = event_new(base, -1, 0, pc_fire, pc)) == NULL)
		fatalx("%s: event_new failed", __func__);
	event_priority_set(pc->c_fire, LOOP_PRI_NORMAL);
	if ((pc->c_more = evtimer_new(base, pc_fire, pc)) == NULL)
		fatalx("%s: evtimer_new failed", __func__);
	event_priority_set(pc->c_more, LOOP_PRI_NORMAL);
	pc->c_index = strindex_new();
	return pc;
}

static void
pc_entry_free(struct pc_entry *e)
{
	rt_pod_status_clear_interned(&e->e_st);
	free(e);
}

void
podcache_free(struct podcache *pc)
{
	struct podcache_wait *w;
	size_t                i;

	if (pc == NULL)
		return;
	while ((w = pc->c_waits) != NULL) {
		pc->c_waits = w->w_next;
		free(w->w_uid);
		free(w);
	}
	for (i = 0; i < pc->c_n; i++)
		pc_entry_free(pc->c_entries[i]);
	free(pc->c_entries);
	strindex_free(pc->c_index);
	event_free(pc->c_fire);
	event_free(pc->c_more);
	free(pc);
}

/* A flag of an entry, with the count of entries that have it. */
static void
pc_flag(int *flag, size_t *count, int v)
{
	if (*flag == v)
		return;
	*flag = v;
	if (v)
		(*count)++;
	else
		(*count)--;
}

static void
pc_set_absent(struct podcache *pc, struct pc_entry *e, int absent)
{
	pc_flag(&e->e_absent, &pc->c_nabsent, absent);
}

static struct pc_entry *
pc_get_entry(struct podcache *pc, const char *uid)
{
	struct pc_entry *e = pc_find(pc, uid, NULL);

	if (e != NULL)
		return e;
	e = xcalloc(1, sizeof(*e));
	e->e_st.uid = intern(uid);
	pc_set_absent(pc, e, 1);
	if (pc->c_n == pc->c_cap) {
		pc->c_cap = pc->c_cap == 0 ? 32 : pc->c_cap * 2;
		pc->c_entries = xreallocarray(pc->c_entries, pc->c_cap, sizeof(*pc->c_entries));
	}
	pc->c_entries[pc->c_n++] = e;
	strindex_add(pc->c_index, e->e_st.uid, pc->c_n - 1);
	return e;
}

static void
pc_set_foreign(struct podcache *pc, struct pc_entry *e, int foreign)
{
	pc_flag(&e->e_foreign, &pc->c_nforeign, foreign);
}

static int
pc_set(struct podcache *pc, const struct rt_pod_status *st, int64_t ts_ms, int foreign)
{
	struct rt_pod_status copy;
	struct pc_entry     *e;

	if (st == NULL || st->uid == NULL)
		fatalx("%s: status without a pod UID", __func__);
	e = pc_get_entry(pc, st->uid);
	if (ts_ms < e->e_ts)
		return 0;
	/* The new copy first: st may share strings with the old one. */
	rt_pod_status_intern(&copy, st);
	rt_pod_status_clear_interned(&e->e_st);
	e->e_st = copy;
	e->e_st.timestamp = ts_ms;
	e->e_ts = ts_ms;
	pc_set_absent(pc, e, 0);
	e->e_version = ++pc->c_version;
	pc_set_foreign(pc, e, foreign);
	pc_check_waits(pc);
	return 1;
}

int
podcache_set(struct podcache *pc, const struct rt_pod_status *st, int64_t ts_ms)
{
	return pc_set(pc, st, ts_ms, 1);
}

int
podcache_relist_set(struct podcache *pc, const struct rt_pod_status *st, int64_t ts_ms)
{
	return pc_set(pc, st, ts_ms, 0);
}

static void
pc_delete(struct podcache *pc, const char *uid, int64_t ts_ms, int foreign)
{
	struct pc_entry *e = pc_find(pc, uid, NULL);
	char            *keep;

	if (e == NULL || e->e_ts > ts_ms)
		return;
	/* Keep an absent marker with its time until the global time passes it. */
	keep = intern(uid); /* before the clear: uid may be the entry's own */
	rt_pod_status_clear_interned(&e->e_st);
	e->e_st.uid = keep;
	e->e_ts = ts_ms;
	pc_set_absent(pc, e, 1);
	e->e_version = ++pc->c_version;
	pc_set_foreign(pc, e, foreign);
	pc_check_waits(pc);
}

void
podcache_delete(struct podcache *pc, const char *uid, int64_t ts_ms)
{
	pc_delete(pc, uid, ts_ms, 1);
}

void
podcache_relist_delete(struct podcache *pc, const char *uid, int64_t ts_ms)
{
	pc_delete(pc, uid, ts_ms, 0);
}

size_t
podcache_foreign_count(const struct podcache *pc)
{
	return pc->c_nforeign;
}

void
podcache_foreach_foreign(struct podcache *pc, void (*cb)(const char *uid, void *), void *arg)
{
	size_t i;

	for (i = 0; i < pc->c_n && pc->c_nforeign > 0; i++)
		if (pc->c_entries[i]->e_foreign)
			cb(pc->c_entries[i]->e_st.uid, arg);
}

void
podcache_update_time(struct podcache *pc, int64_t ts_ms)
{
	size_t i = 0, dropped = 0;

	if (ts_ms > pc->c_time)
		pc->c_time = ts_ms;
	/* Only when some entry is an absent marker: most relists walk no entry. */
	while (pc->c_nabsent > 0 && i < pc->c_n) {
		struct pc_entry *e = pc->c_entries[i];

		if (e->e_absent && e->e_ts <= pc->c_time) {
			pc_set_foreign(pc, e, 0);
			pc_set_absent(pc, e, 0);
			pc_entry_free(e);
			pc->c_entries[i] = pc->c_entries[--pc->c_n];
			dropped++;
			continue;
		}
		i++;
	}
	if (dropped > 0) { /* positions moved */
		strindex_reset(pc->c_index);
		for (i = 0; i < pc->c_n; i++)
			strindex_add(pc->c_index, pc->c_entries[i]->e_st.uid, i);
	}
	pc_check_waits(pc);
}

int64_t
podcache_time(const struct podcache *pc)
{
	return pc->c_time;
}

const struct rt_pod_status *
podcache_get(struct podcache *pc, const char *uid, int64_t *as_of_ms)
{
	struct pc_entry *e = pc_find(pc, uid, NULL);

	if (as_of_ms != NULL)
		*as_of_ms = pc_as_of(pc, e);
	return e != NULL && !e->e_absent ? &e->e_st : NULL;
}

const struct rt_pod_status *
podcache_get_versioned(struct podcache *pc, const char *uid, uint64_t *version)
{
	struct pc_entry *e = pc_find(pc, uid, NULL);

	*version = e != NULL ? e->e_version : 0;
	return e != NULL && !e->e_absent ? &e->e_st : NULL;
}

uint64_t
podcache_generation(const struct podcache *pc)
{
	return pc->c_version;
}

int
podcache_get_newer_than(
    struct podcache *pc, const char *uid, int64_t min_ts_ms, const struct rt_pod_status **out)
{
	int64_t                     as_of;
	const struct rt_pod_status *st = podcache_get(pc, uid, &as_of);

	if (as_of < min_ts_ms || as_of == 0)
		return 0;
	*out = st;
	return 1;
}

struct podcache_wait *
podcache_wait_newer(
    struct podcache *pc, const char *uid, int64_t min_ts_ms, void (*cb)(void *), void *arg)
{
	struct podcache_wait *w = xcalloc(1, sizeof(*w));

	w->w_pc = pc;
	w->w_uid = xstrdup(uid);
	w->w_min_ts = min_ts_ms;
	w->w_cb = cb;
	w->w_arg = arg;
	w->w_next = pc->c_waits;
	pc->c_waits = w;
	pc_check_waits(pc);
	return w;
}

void
podcache_wait_cancel(struct podcache_wait *w)
{
	struct podcache_wait **pp;

	if (w == NULL)
		return;
	for (pp = &w->w_pc->c_waits; *pp != NULL; pp = &(*pp)->w_next) {
		if (*pp == w) {
			*pp = w->w_next;
			free(w->w_uid);
			free(w);
			return;
		}
	}
	fatalx("%s: unknown or finished wait", __func__);
}

void
podcache_foreach(struct podcache *pc, void (*cb)(const struct rt_pod_status *, void *), void *arg)
{
	size_t i;

	for (i = 0; i < pc->c_n; i++) {
		if (!pc->c_entries[i]->e_absent)
			cb(&pc->c_entries[i]->e_st, arg);
	}
}

size_t
podcache_count(const struct podcache *pc)
{
	size_t i, n = 0;

	for (i = 0; i < pc->c_n; i++)
		n += !pc->c_entries[i]->e_absent;
	return n;
}
