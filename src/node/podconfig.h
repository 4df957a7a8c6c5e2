/* podconfig.h — pod sources merged into one update stream, and pod admission (the kubelet's
 * config.PodConfig plus HandlePodAdditions' canAdmitPod).
 *
 * Each source ("file", "api", ...) owns a set of pods keyed by UID. A source either hands
 * over its whole set (podconfig_set_source: the file source after a scan, the API source
 * after a LIST) or changes it one pod at a time (podconfig_upsert / podconfig_remove: watch
 * events). podconfig compares each pod with what that source gave before and emits:
 *
 *   ADD        a new UID, admitted (passes the admission checks)
 *   REJECT     a new UID that failed admission (podconfig_rejection says why); it never
 *              runs; the status code reports it Failed with that reason
 *   UPDATE     metadata (labels, annotations), spec, or deletion fields changed
 *   DELETE     deletionTimestamp newly set (graceful deletion: terminate with its grace)
 *   RECONCILE  only the status changed
 *   REMOVE     the source no longer has the UID (terminate)
 *
 * A pod given again unchanged produces nothing. The comparison is made on the raw
 * documents (spec, labels, annotations, deletion fields vs status), so every pod comes with
 * the document it was decoded from; the document is kept (podconfig_doc) so that the store
 * can save it and a restart can decode the same pod again.
 * Updates are delivered synchronously, from inside the call that caused them; the callback
 * must not call podconfig's mutators (podconfig_set_source/upsert/remove).
 */
#ifndef KLET_PODCONFIG_H
#define KLET_PODCONFIG_H

#include <stddef.h>
#include <stdint.h>

#include "pod/pod.h"

struct podconfig;
struct admit_node;

enum pod_op {
	POD_OP_ADD = 0,
	POD_OP_UPDATE,
	POD_OP_REMOVE,
	POD_OP_DELETE,
	POD_OP_RECONCILE,
	POD_OP_REJECT,
};

/* One pod as a source gives it. */
struct podconfig_item {
	const struct pod *pod; /* decoded (and validated) pod; podconfig takes over this
	                        * reference (the source may keep one of its own) */
	const char *doc;       /* the document it was decoded from (copied) */
	size_t      doc_len;
	const char *format; /* "json" or "yaml" */
	/* 1 when the source already has the document's hashes (podconfig_json_hashes of the
	 * tree it decoded the pod from): podconfig does not parse the document again. */
	int      hashed;
	uint64_t spec_hash;
	uint64_t status_hash;
};

/* pod is podconfig's and valid during the call only (pod_ref to keep it). */
typedef void (*podconfig_fn)(enum pod_op op, const struct pod *pod, const char *source, void *arg);

struct podconfig_options {
	const char          *node_name;   /* pods with another spec.nodeName are rejected */
	int                  max_pods;    /* 0: no limit */
	const struct kvlist *node_labels; /* for nodeSelector; kubernetes.io/hostname,
	                                   * kubernetes.io/os=linux are implied. May be NULL. */
	/* Whether an admitted pod still counts against max_pods (the kubelet counts only pods
	 * not yet terminated); NULL: every admitted pod counts. */
	int (*is_active)(const char *uid, void *arg);
	void *is_active_arg;
	/* With is_active: a number that changes whenever is_active's answer may have changed
	 * for some UID. A pod's answer is then asked again only after it changed, not at every
	 * admission. 0, or NULL: is_active is asked for each admitted pod at each admission. */
	uint64_t (*active_version)(void *is_active_arg);
	/* Fills what podconfig does not know of the node for admission (allocatable, taints,
	 * pressure; logic/admit.h) before each admission; name and labels are podconfig's own.
	 * NULL: only the pod count (max_pods) is checked among the resources. */
	void (*node_info)(struct admit_node *, void *arg);
	void *node_info_arg;
};

/* Returns a new, empty config. opts strings are copied. Never NULL. */
struct podconfig *podconfig_new(const struct podconfig_options *, podconfig_fn, void *arg);
/* Frees every pod and document. No update is emitted. NULL is a no-op. */
void podconfig_free(struct podconfig *);

/* Replaces source's whole set with items[0..n) (each item's pod reference passes to
 * podconfig; items with no UID or a UID given twice are dropped and logged). Emits the
 * differences. Marks the source ready. */
void podconfig_set_source(
    struct podconfig *, const char *source, struct podconfig_item *items, size_t n);
/* The first half of podconfig_set_source, for a set too large to take in one go: of UIDs
 * given twice the first wins (the others' pods are dropped: their item->pod becomes NULL),
 * and the source's pods absent from items[0..n) are REMOVEd now. The caller then hands each
 * item to podconfig_upsert (a few a loop turn if it likes; items with a NULL pod skipped) and
 * finally marks the source ready (podconfig_source_ready). */
void podconfig_set_source_begin(
    struct podconfig *, const char *source, struct podconfig_item *items, size_t n);
/* Adds or updates one pod of source (the reference item->pod passes). Emits ADD / REJECT /
 * UPDATE / DELETE / RECONCILE or nothing. */
void podconfig_upsert(struct podconfig *, const char *source, struct podconfig_item *item);
/* Removes uid from source; emits REMOVE if it was there. */
void podconfig_remove(struct podconfig *, const char *source, const char *uid);
/* Names a source that will deliver pods: until it is ready, podconfig_sources_ready() is 0
 * (housekeeping then removes nothing). Call at start for each configured source. */
void podconfig_add_source(struct podconfig *, const char *source);
/* Marks source as having delivered its initial set (set_source does it too). */
void podconfig_source_ready(struct podconfig *, const char *source);
/* 1 when every source named so far is ready (the kubelet's sourcesReady). */
int podconfig_sources_ready(const struct podconfig *);

/* The pod with uid (any source), or NULL. Owned by podconfig; valid until the next mutator. */
const struct pod *podconfig_get(const struct podconfig *, const char *uid);
/* 1 if uid is present in a source and admitted (a worker should run it), else 0. */
int podconfig_wanted(const struct podconfig *, const char *uid);
/* The stored document of uid (NULL if unknown); *len, *format, *source set when not NULL.
 * Valid until the next mutator. */
const char *podconfig_doc(const struct podconfig *, const char *uid, size_t *len,
    const char **format, const char **source);
/* 0 and *reason / *message (owned, may be NULL) when uid was rejected; -1 otherwise. */
int podconfig_rejection(
    const struct podconfig *, const char *uid, const char **reason, const char **message);
/* Calls cb for every pod of every source (admitted or not). */
void   podconfig_foreach(const struct podconfig *,
      void (*cb)(const struct pod *, const char *source, int admitted, void *), void *arg);
size_t podconfig_count(const struct podconfig *);
/* A number that changes whenever a pod comes, goes or is replaced by a changed one (what
 * podconfig_foreach gives may have changed only when it differs). */
uint64_t    podconfig_version(const struct podconfig *);
const char *pod_op_name(enum pod_op);

/* Hashes of a document's parts, as podconfig compares them: *spec_hash covers
 * metadata.labels, metadata.annotations (but kubernetes.io/config.seen),
 * metadata.deletionTimestamp, metadata.deletionGracePeriodSeconds and spec; *status_hash
 * covers status. Returns 0, or -1 when the document does not parse. */
int podconfig_doc_hashes(
    const char *doc, size_t len, const char *format, uint64_t *spec_hash, uint64_t *status_hash);
/* The same hashes of a document already parsed (its root object). */
struct json;
void podconfig_json_hashes(const struct json *root, uint64_t *spec_hash, uint64_t *status_hash);

#endif
