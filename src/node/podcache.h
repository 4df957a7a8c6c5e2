/* podcache.h — the runtime status of every pod, with timestamps (the kubelet's pod cache).
 *
 * PLEG fills it after each relist; pod workers and kuberuntime read it. Each entry is a
 * struct rt_pod_status (runtime.h) read at a monotonic time. After a successful relist the
 * cache's global time moves forward: every pod is then known as of that time, including
 * pods the runtime has nothing for (they read as NULL, "no sandbox, no container").
 * A reader that must not decide on stale data uses the "newer than" read: the answer is
 * given only when the cache's knowledge of that pod is at least as new as a given time;
 * otherwise it can wait (asynchronously) for the next relist.
 * All times are monotonic milliseconds (now_mono_ms()).
 */
#ifndef KLET_PODCACHE_H
#define KLET_PODCACHE_H

#include <stddef.h>
#include <stdint.h>

#include "pod/runtime.h"

struct event_base;
struct podcache;
struct podcache_wait;

/* Returns a new, empty cache whose waiters are called on base. Never NULL. */
struct podcache *podcache_new(struct event_base *);
/* Frees the entries and pending waiters (their callbacks never run). NULL is a no-op. */
void podcache_free(struct podcache *);

/* Stores a deep copy of st (st->uid must be set) as read at ts_ms; st->timestamp is
 * ignored and the copy's timestamp is ts_ms. An older ts_ms than the entry's is ignored
 * (returns 0). Returns 1 when stored. Waiters satisfied by it are called on a later turn. */
int podcache_set(struct podcache *, const struct rt_pod_status *st, int64_t ts_ms);
/* Drops uid's entry (the runtime has nothing left for it) as of ts_ms. */
void podcache_delete(struct podcache *, const char *uid, int64_t ts_ms);
/* The same for the PLEG's own writes. An entry last written by podcache_set /
 * podcache_delete (another reader: kuberuntime's status reads) is "foreign" until the PLEG
 * writes it again: the PLEG, which writes only the pods whose runtime objects changed,
 * rewrites those too, so that every entry is as new as the last relist. */
int  podcache_relist_set(struct podcache *, const struct rt_pod_status *st, int64_t ts_ms);
void podcache_relist_delete(struct podcache *, const char *uid, int64_t ts_ms);
/* The number of foreign entries, and a walk over their UIDs (cb must not change the cache;
 * uid is valid during the call only). */
size_t podcache_foreign_count(const struct podcache *);
void   podcache_foreach_foreign(struct podcache *, void (*cb)(const char *uid, void *), void *arg);
/* A relist that started at ts_ms succeeded: everything not set since is unchanged as of
 * ts_ms. Calls satisfied waiters on a later turn. */
void podcache_update_time(struct podcache *, int64_t ts_ms);
/* The global time (start of the last successful relist), 0 before the first. */
int64_t podcache_time(const struct podcache *);

/* The status of uid, owned by the cache: valid until the next podcache_set / delete /
 * free (so do not keep it across loop turns: copy it with rt_pod_status_copy). NULL when
 * the runtime has nothing for uid. *as_of_ms (may be NULL) gets the time the answer is
 * known to hold: the newer of the entry's time and the global time (0: never listed). */
const struct rt_pod_status *podcache_get(struct podcache *, const char *uid, int64_t *as_of_ms);
/* The kubelet's GetNewerThan without blocking: returns 1 and sets *out (NULL when the
 * runtime has nothing for uid) when the cache knows uid as of min_ts_ms or later; returns
 * 0 (and leaves *out alone) when its data is older. */
int podcache_get_newer_than(
    struct podcache *, const char *uid, int64_t min_ts_ms, const struct rt_pod_status **out);
/* Calls cb(arg) once, on a later loop turn, when podcache_get_newer_than(uid, min_ts_ms)
 * would return 1 (at once if it already does). Returns a handle valid until cb runs or
 * podcache_wait_cancel is called; cancelling after cb ran is not allowed. */
struct podcache_wait *podcache_wait_newer(
    struct podcache *, const char *uid, int64_t min_ts_ms, void (*cb)(void *arg), void *arg);
/* Cancels a pending wait: cb will not run. NULL is a no-op. */
void podcache_wait_cancel(struct podcache_wait *);

/* Calls cb for each entry (in no particular order). cb must not change the cache. */
void podcache_foreach(
    struct podcache *, void (*cb)(const struct rt_pod_status *, void *), void *arg);
size_t podcache_count(const struct podcache *);

#endif
