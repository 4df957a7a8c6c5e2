/* backoff.c — crash-loop backoff entries keyed by pod and container (flowcontrol.Backoff). */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "logic/actions.h"
#include "logic/backoff.h"
#include "core/util.h"
#include "pod/hash.h"

struct backoff_entry {
	char   *be_key;
	int64_t be_delay;       /* current delay, ms */
	int64_t be_last_update; /* when the delay was last raised, ms */
};

struct backoff {
	int64_t               b_initial;
	int64_t               b_max;
	struct backoff_entry *b_entries;
	size_t                b_n;
	size_t                b_cap;
};

struct backoff *
backoff_new(int64_t initial_ms, int64_t max_ms)
{
	struct backoff *b = xcalloc(1, sizeof(*b));

	b->b_initial = initial_ms > 0 ? initial_ms : BACKOFF_INITIAL_MS;
	b->b_max = max_ms > 0 ? max_ms : BACKOFF_MAX_MS;
	if (b->b_initial > b->b_max)
		b->b_initial = b->b_max;
	return b;
}

void
backoff_free(struct backoff *b)
{
	size_t i;

	if (b == NULL)
		return;
	for (i = 0; i < b->b_n; i++)
		free(b->b_entries[i].be_key);
	free(b->b_entries);
	free(b);
}

static struct backoff_entry *
backoff_lookup(const struct backoff *b, const char *key)
{
	size_t i;

	for (i = 0; i < b->b_n; i++)
		if (strcmp(b->b_entries[i].be_key, key) == 0)
			return &b->b_entries[i];
	return NULL;
}

static void
backoff_remove_at(struct backoff *b, size_t i)
{
	free(b->b_entries[i].be_key);
	b->b_entries[i] = b->b_entries[b->b_n - 1];
	b->b_n--;
}

/* Stable for 2 x max since the last update: the container ran cleanly, start over. */
static int
backoff_expired(const struct backoff *b, const struct backoff_entry *e, int64_t since_ms)
{
	return since_ms - e->be_last_update > 2 * b->b_max;
}

void
backoff_next(struct backoff *b, const char *key, int64_t since_ms, int64_t now_ms)
{
	struct backoff_entry *e = backoff_lookup(b, key);

	if (e == NULL) {
		if (b->b_n == b->b_cap) {
			b->b_cap = b->b_cap ? b->b_cap * 2 : 16;
			b->b_entries = xreallocarray(b->b_entries, b->b_cap, sizeof(*e));
		}
		e = &b->b_entries[b->b_n++];
		e->be_key = xstrdup(key);
		e->be_delay = b->b_initial;
	} else if (backoff_expired(b, e, since_ms)) {
		e->be_delay = b->b_initial;
	} else {
		e->be_delay = e->be_delay > b->b_max / 2 ? b->b_max : e->be_delay * 2;
	}
	e->be_last_update = now_ms;
}

int
backoff_in_backoff(
    struct backoff *b, const char *key, int64_t since_ms, int64_t now_ms, int64_t *remaining_ms)
{
	struct backoff_entry *e = backoff_lookup(b, key);

	if (remaining_ms != NULL)
		*remaining_ms = 0;
	if (e == NULL || backoff_expired(b, e, since_ms))
		return 0;
	if (now_ms - since_ms >= e->be_delay)
		return 0;
	if (remaining_ms != NULL)
		*remaining_ms = e->be_delay - (now_ms - since_ms);
	return 1;
}

int64_t
backoff_get(const struct backoff *b, const char *key)
{
	const struct backoff_entry *e = backoff_lookup(b, key);

	return e != NULL ? e->be_delay : 0;
}

void
backoff_reset(struct backoff *b, const char *key)
{
	size_t i;

	for (i = 0; i < b->b_n; i++) {
		if (strcmp(b->b_entries[i].be_key, key) == 0) {
			backoff_remove_at(b, i);
			return;
		}
	}
}

int
backoff_gc(struct backoff *b, int64_t now_ms)
{
	size_t i = 0;
	int    n = 0;

	while (i < b->b_n) {
		if (now_ms - b->b_entries[i].be_last_update > 2 * b->b_max) {
			backoff_remove_at(b, i);
			n++;
		} else
			i++;
	}
	return n;
}

int
backoff_count(const struct backoff *b)
{
	return (int)b->b_n;
}

char *
backoff_key(const struct pod *p, const struct container *c)
{
	return xsprintf("%s_%s_%s_%s_%" PRIx64, p->name ? p->name : "", p->ns ? p->ns : "",
	    p->uid ? p->uid : "", c->c_name ? c->c_name : "", container_hash(c));
}

/* Go's time.Duration.String() for whole milliseconds: "10s", "1m20s", "5m0s", "1.5s". */
static void
backoff_format_duration(int64_t ms, char *buf, size_t len)
{
	int64_t s = ms / 1000, frac = ms % 1000;

	if (ms < 1000) {
		snprintf(buf, len, "%" PRId64 "ms", ms);
	} else if (s < 60) {
		if (frac == 0)
			snprintf(buf, len, "%" PRId64 "s", s);
		else {
			char f[8];
			int  k;

			snprintf(f, sizeof(f), "%03" PRId64, frac);
			for (k = 2; k > 0 && f[k] == '0'; k--)
				f[k] = '\0';
			snprintf(buf, len, "%" PRId64 ".%ss", s, f);
		}
	} else if (s < 3600) {
		snprintf(buf, len, "%" PRId64 "m%" PRId64 "s", s / 60, s % 60);
	} else {
		snprintf(buf, len, "%" PRId64 "h%" PRId64 "m%" PRId64 "s", s / 3600,
		    (s % 3600) / 60, s % 60);
	}
}

int
backoff_check_container(struct backoff *b, const struct pod *p, const struct container *c,
    const struct rt_pod_status *rt, int64_t now_ms, char **message)
{
	const struct rt_container *last = NULL;
	char                      *key, dur[32];
	int64_t                    since;
	size_t                     i;

	*message = NULL;
	for (i = 0; rt != NULL && i < rt->ncontainers; i++) {
		const struct rt_container *rc = &rt->containers[i];

		if (rc->name != NULL && c->c_name != NULL && strcmp(rc->name, c->c_name) == 0 &&
		    rc->state == RT_EXITED) {
			if (last == NULL || rc->created_at > last->created_at)
				last = rc;
		}
	}
	if (last == NULL)
		return 0;
	since = last->finished_at / 1000000;
	key = backoff_key(p, c);
	if (backoff_in_backoff(b, key, since, now_ms, NULL)) {
		backoff_format_duration(backoff_get(b, key), dur, sizeof(dur));
		*message = xsprintf("back-off %s restarting failed container=%s pod=%s_%s(%s)", dur,
		    c->c_name, p->name ? p->name : "", p->ns ? p->ns : "", p->uid ? p->uid : "");
		free(key);
		return 1;
	}
	backoff_next(b, key, since, now_ms);
	free(key);
	return 0;
}
