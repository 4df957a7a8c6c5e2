/* apievents.h — the API event poster: the event recorder's records (node/events.h) become v1
 * Events on the API server, as the kubelet's event broadcaster and its sink do.
 *
 * Every record of the recorder (new or aggregated) becomes a v1 Event (POST once, then PATCH
 * of count / lastTimestamp / message), coalesced per event and sent at most every
 * min_interval_ms per event (0: 10 s), with a global budget of qps events per second (0: 50,
 * the kubelet's eventRecordQPS) and a burst of 2 x qps: a crash-looping pod aggregates into
 * one Event whose count grows instead of flooding the server.
 */
#ifndef KLET_API_APIEVENTS_H
#define KLET_API_APIEVENTS_H

#include <stdint.h>

struct event_base;
struct api;
struct events;
struct api_events;

/* Listens to ev and starts posting. Strings are copied. Never NULL. */
struct api_events *api_events_new(struct event_base *, struct api *, struct events *ev,
    const char *node, int64_t min_interval_ms, int qps);
/* Unlistens and cancels pending writes. NULL is a no-op. */
void api_events_free(struct api_events *);
/* Counters: events created (POST) and updated (PATCH) on the server, writes dropped. */
void api_events_stats(
    const struct api_events *, uint64_t *posts, uint64_t *patches, uint64_t *dropped);

#endif
