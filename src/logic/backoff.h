/* backoff.h — per-container crash-loop backoff, like the kubelet's flowcontrol.Backoff:
 * 10 s initial, doubling to 5 min; an entry not updated for 2 x max (10 min, i.e. the
 * container ran cleanly that long) starts over; stale entries are garbage-collected.
 * All times are explicit milliseconds on ONE clock chosen by the caller (the kubelet uses
 * the container's finishedAt, so use wall-clock ms for both "since" and "now").
 */
#ifndef KLET_BACKOFF_H
#define KLET_BACKOFF_H

#include <stdint.h>

#include "pod/pod.h"
#include "pod/runtime.h"

#define BACKOFF_INITIAL_MS (10 * 1000)
#define BACKOFF_MAX_MS     (300 * 1000)

struct backoff; /* opaque */

/* initial_ms and max_ms > 0 (0: the defaults above). Never NULL. */
struct backoff *backoff_new(int64_t initial_ms, int64_t max_ms);
/* NULL is a no-op. */
void backoff_free(struct backoff *);

/* Records one more failure of key at now_ms: the first (or first after 2 x max without an
 * update since since_ms) gets the initial delay, later ones double it up to max. */
void backoff_next(struct backoff *, const char *key, int64_t since_ms, int64_t now_ms);
/* 1 if key is still backing off: now_ms - since_ms < current delay (and the entry is not
 * expired relative to since_ms); sets *remaining_ms (may be NULL) to the time left, else 0. */
int backoff_in_backoff(
    struct backoff *, const char *key, int64_t since_ms, int64_t now_ms, int64_t *remaining_ms);
/* Current delay of key in ms, 0 when unknown. */
int64_t backoff_get(const struct backoff *, const char *key);
/* Forgets key. */
void backoff_reset(struct backoff *, const char *key);
/* Drops entries not updated for more than 2 x max before now_ms. Returns how many. */
int backoff_gc(struct backoff *, int64_t now_ms);
/* Number of entries. */
int backoff_count(const struct backoff *);

/* The kubelet's key: "NAME_NAMESPACE_UID_CONTAINER_HASH" (hash in hex). Caller frees. */
char *backoff_key(const struct pod *, const struct container *);

/* The kubelet's doBackOff before starting container c: looks for its newest exited
 * instance in rt; if it is in backoff since its finishedAt, returns 1 and sets *message
 * (caller frees) to "back-off 20s restarting failed container=C pod=NAME_NS(UID)" (the
 * CrashLoopBackOff message); otherwise records the failure (backoff_next) and returns 0.
 * now_ms is wall-clock ms. */
int backoff_check_container(struct backoff *, const struct pod *, const struct container *c,
    const struct rt_pod_status *rt, int64_t now_ms, char **message);

#endif
