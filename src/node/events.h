/* events.h — the node's event recorder (the kubelet's EventRecorder), on the loop.
 *
 * An event names an involved object (a pod, optionally one of its containers through a
 * field path such as "spec.containers{web}", or the node), a type (Normal / Warning), a
 * reason (Pulling, Started, BackOff, ...) and a message. Events with the same object,
 * reason, type and message are aggregated: count goes up and last_ts moves. The recorder
 * keeps the newest EVENTS_DEFAULT_CAPACITY distinct events in a ring; the oldest is dropped.
 * Listeners (the API poster, podctl's events -w) are told of every record, new or
 * aggregated, synchronously.
 */
#ifndef KLET_EVENTS_H
#define KLET_EVENTS_H

#include <stddef.h>
#include <stdint.h>

struct events;
struct pod;

#define EVENTS_DEFAULT_CAPACITY 1000
#define EVENTS_MAX_MESSAGE      1024 /* longer messages are cut */

enum ev_type { EV_NORMAL = 0, EV_WARNING = 1 };

/* The involved object. kind is "Pod" or "Node"; field_path NULL for the whole object. */
struct ev_object {
	const char *kind;
	const char *ns;
	const char *name;
	const char *uid;
	const char *field_path;
};

/* One stored event. Strings are owned by the recorder; a pointer handed to a listener or
 * to events_foreach is valid only during that call. */
struct ev_record {
	uint64_t     seq; /* unique, grows with every new or aggregated record */
	uint64_t     id;  /* stable for the life of this aggregated event */
	char        *kind;
	char        *ns;
	char        *name;
	char        *uid;
	char        *field_path;
	enum ev_type type;
	char        *reason;
	char        *message;
	int32_t      count;
	int64_t      first_ts; /* Unix milliseconds */
	int64_t      last_ts;
	uint32_t     key; /* a hash of what aggregates (ev_matches' fields) */
};

typedef void (*events_listener_fn)(const struct ev_record *, int is_new, void *arg);

/* Returns a new recorder keeping up to capacity events (0: EVENTS_DEFAULT_CAPACITY).
 * Never NULL. */
struct events *events_new(size_t capacity);
/* Frees the recorder and its events; listeners are dropped. NULL is a no-op. */
void events_free(struct events *);

/* Records (or aggregates) an event about obj. NULL ev is a no-op (tests, tools).
 * The message is formatted and cut at EVENTS_MAX_MESSAGE bytes. */
void events_record(struct events *, const struct ev_object *obj, enum ev_type, const char *reason,
    const char *fmt, ...) __attribute__((format(printf, 5, 6)));
/* Convenience: the object is pod (kind "Pod"); container NULL for the pod itself, else
 * the field path is made from the container's kind: spec.containers{NAME},
 * spec.initContainers{NAME} or spec.ephemeralContainers{NAME}. */
void events_pod(struct events *, const struct pod *, const char *container, enum ev_type,
    const char *reason, const char *fmt, ...) __attribute__((format(printf, 6, 7)));

/* Adds a listener; returns its id (> 0) for events_unlisten. */
int  events_listen(struct events *, events_listener_fn, void *arg);
void events_unlisten(struct events *, int id);

/* Calls cb for every stored event, oldest first (by last_ts / seq). */
void events_foreach(struct events *, void (*cb)(const struct ev_record *, void *), void *arg);
/* Number of stored (aggregated) events. */
size_t events_count(struct events *);
/* The field path of container name in pod into buf ("" when the pod has no such container).
 * Returns buf. */
const char *events_field_path(const struct pod *, const char *container, char *buf, size_t len);
const char *ev_type_name(enum ev_type);

#endif
