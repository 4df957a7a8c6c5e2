/* imagegc.h — the kubelet's image garbage collection decisions as pure functions: the image
 * records it keeps (first detected, last used, size, pinned), when the image file system is
 * over the high threshold and how much to free down to the low one, which unused images go
 * first (least recently used, then first detected; never one in use, pinned, or younger
 * than the minimum age), which go for their age (unused for longer than the maximum age,
 * the kubelet's freeOldImages), and the node status' "images" list (the 50 largest, up to 5
 * names each: digests, then tags). */
#ifndef KLET_IMAGEGC_LOGIC_H
#define KLET_IMAGEGC_LOGIC_H

#include <stddef.h>
#include <stdint.h>

#define IGC_NODE_IMAGES_MAX     50 /* nodeStatusMaxImages */
#define IGC_NAMES_PER_IMAGE_MAX 5  /* MaxNamesPerImageInNodeStatus */

struct igc_policy {
	int     high; /* percent; 100 disables image GC for disk usage */
	int     low;  /* percent */
	int64_t min_age_ms;
	int64_t max_age_ms; /* imageMaximumGCAge; 0: no removal for age */
};

/* What is known of one image between passes. Times are monotonic ms; first_detected 0
 * means "present before the first detection" (as old as can be). */
struct igc_record {
	char   *id; /* owned */
	int64_t first_detected_ms;
	int64_t last_used_ms; /* 0: never seen in use */
	int64_t size;
	int     pinned; /* the runtime pins it, or it is the sandbox image */
	int     in_use; /* used by a container (any state) at the last detection */
	int     seen;   /* scratch for igc_detect */
};

/* One image of a ListImages answer as igc_detect reads it. */
struct igc_image {
	const char *id;
	int64_t     size;
	int         pinned;
	int         in_use;
};

/* The kubelet's detectImages at now: records for new images (first_detected now, or 0 when
 * initial), last_used = now for those in use, size / pinned / in_use refreshed, records of
 * images gone removed. *recs is a sorted-by-id array of *n records. */
void igc_detect(struct igc_record **recs, size_t *n, const struct igc_image *imgs, size_t nimgs,
    int64_t now, int initial);
void igc_records_free(struct igc_record *, size_t n);

/* Bytes to free to reach the low threshold when usage is at or over the high one, else 0;
 * -1 when capacity is not positive. *usage_pct (may be NULL) gets the usage. */
int64_t igc_amount_to_free(
    const struct igc_policy *, int64_t capacity, int64_t available, int *usage_pct);

/* The images to remove, in order, to free `want` bytes (INT64_MAX: every eligible one):
 * indices into recs written to out (room for n). Returns how many; *freed (may be NULL)
 * gets the sum of their sizes. */
size_t igc_plan(const struct igc_policy *, const struct igc_record *recs, size_t n, int64_t now,
    int64_t want, size_t *out, int64_t *freed);

/* The images to remove for their age (the kubelet's freeOldImages), in eviction order:
 * unused (not in use at this detection, not pinned) and last used more than max_age_ms
 * before now (never used: first detected more than max_age_ms before now; present at the
 * first detection: as old as can be), once the manager has run longer than max_age_ms
 * (began: its start). Indices into recs written to out (room for n). Returns how many; 0
 * when max_age_ms is 0. The minimum age does not apply, as in the kubelet (the maximum is
 * above it). */
size_t igc_plan_age(const struct igc_policy *, const struct igc_record *recs, size_t n, int64_t now,
    int64_t began, size_t *out);

/* The node status' images: the 50 largest, each with up to 5 names (digests, then tags). */
struct igc_node_image {
	const char *names[IGC_NAMES_PER_IMAGE_MAX];
	size_t      nnames;
	int64_t     size;
};
struct igc_listed {
	const char *const *tags;
	size_t             ntags;
	const char *const *digests;
	size_t             ndigests;
	int64_t            size;
};
/* Fills out (room for IGC_NODE_IMAGES_MAX) from imgs; returns how many. Names are borrowed
 * from imgs. */
size_t igc_node_images(const struct igc_listed *imgs, size_t n, struct igc_node_image *out);

#endif
