/* watch.h — the reflector for this node's pods: LIST (paged) then WATCH, feeding podconfig's
 * "api" source.
 *
 * LIST /api/v1/pods?fieldSelector=spec.nodeName=NODE&limit=N (continue until done) hands
 * the whole set to podconfig (podconfig_set_source: pods gone since are REMOVEd); then
 * WATCH from the list's resourceVersion with allowWatchBookmarks=true and a random
 * timeoutSeconds. ADDED / MODIFIED -> podconfig_upsert, DELETED -> podconfig_remove;
 * BOOKMARKs and events advance the position. An event's (or a list's) is saved in the store
 * at once (meta key WATCH_META_RV, in the transaction of the pods it changed); a bookmark's
 * within a minute (and when the watch is freed) as a hint beside the store, on the stored
 * one (store_put_hint: no SQLite write, no fsync), which a resume takes while the stored one
 * is still its base. A bookmark line identical to the last one is not decoded again. A stream that
 * ends is re-watched from the position; ERROR 410 (or a 410 answer) relists; so does 504 Too large
 * resource version (answer or ERROR event: the server's store went back in time), at once, and
 * WATCH_MAX_FAILURES watches in a row that fail before any event (but 429s), as client-go's
 * reflector does. The LIST never carries a resourceVersion (a consistent read). Failures back off
 * 0.8 s doubling to 30 s with jitter.
 *
 * A pod object that cannot be used (undecodable, invalid, an event over API_MAX_EVENT) is
 * never taken for a deletion: it is skipped (the stream goes on, the position moves past
 * it), its last good copy stays in podconfig (a LIST keeps it too), and it is reported once
 * per UID (log and a FailedValidation Warning event) until a good version arrives.
 *
 * With a stored position (resume), the stored "api" pods are loaded into podconfig and the
 * watch starts from that position without a LIST; if the server says 410, it relists. Pods
 * the server removed before the restart (WATCH_META_REMOVED) are not restored.
 */
#ifndef KLET_WATCH_H
#define KLET_WATCH_H

#include <stdint.h>

struct event_base;
struct api;
struct podconfig;
struct store;
struct events;
struct watch;

#define WATCH_META_RV      "pods.resourceVersion"
/* Stored api pods the server removed (DELETED, or missing from a LIST) whose spec stays until
 * their worker is forgotten: space-separated UIDs; a resume does not restore them. */
#define WATCH_META_REMOVED "pods.removed"
/* Mirror pods (of static pods) carry this annotation; they are never given to podconfig. */
#define MIRROR_ANNOTATION  "kubernetes.io/config.mirror"

struct watch_options {
	const char       *node;          /* required */
	struct podconfig *pc;            /* required: receives the "api" source */
	struct store     *store;         /* may be NULL: no persistence, no resume */
	struct events    *events;        /* may be NULL: unusable pods are reported there */
	int               resume;        /* 1: resume from the stored position when there is one */
	int               page_limit;    /* 0: 500 */
	int               min_timeout_s; /* 0: 300 */
	int               max_timeout_s; /* 0: 600 */
	int               bookmark_save_ms; /* a bookmark's position at most this often; 0: 60 s */
};

enum watch_state {
	WATCH_IDLE = 0, /* waiting (backoff) before a list or a watch */
	WATCH_LISTING,
	WATCH_WATCHING,
};

struct watch_stats {
	enum watch_state state;
	uint64_t         lists;   /* LIST requests (pages) */
	uint64_t         relists; /* full relists after the first */
	uint64_t         watches; /* WATCH requests */
	uint64_t         events;  /* ADDED / MODIFIED / DELETED */
	uint64_t         bookmarks;
	uint64_t         expired;   /* 410s */
	uint64_t         too_large; /* 504 Too large resource version: the store went back */
	uint64_t         decode_errors;
	uint64_t         failures; /* failed requests */
	char             rv[64];   /* current position ("" before the first list) */
	int64_t last_event_ms;     /* monotonic time of the last watch event or bookmark; 0 none */
};

/* Starts at once (list, or watch when resuming). opts strings are copied. Never NULL. */
struct watch *watch_new(struct event_base *, struct api *, const struct watch_options *opts);
/* Cancels the pending request; no further podconfig calls. NULL is a no-op. */
void watch_free(struct watch *);
void watch_get_stats(const struct watch *, struct watch_stats *);
/* 1 once the first list (or resume) has delivered the api source's pods. */
int         watch_synced(const struct watch *);
const char *watch_state_name(enum watch_state);
/* The mirror pod ns/name as the server last showed it (owned by the watch, valid until
 * control returns to the loop), or NULL. */
const struct pod *watch_mirror(const struct watch *, const char *ns, const char *name);
/* A mirror pod the server answered with (a lookup by name, or its creation): kept as the
 * watch's until an event or a LIST replaces it. Takes ownership of m. */
void watch_mirror_adopt(struct watch *, struct pod *m);
/* A number that changes whenever a mirror pod comes, goes or is replaced. */
uint64_t watch_mirrors_version(const struct watch *);
/* Calls cb for every mirror pod the server has for this node. */
void watch_foreach_mirror(const struct watch *, void (*cb)(const struct pod *, void *), void *arg);

#endif
