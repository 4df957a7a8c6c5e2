/* imagegc.h — the kubelet's image GC manager on the loop.
 *
 * Every 30 s (the kubelet's image cache period) it lists the images (ListImages: the node
 * status' list) and the image file system (ImageFsInfo: its mount point, whose statvfs gives
 * capacity and available bytes, as cAdvisor gives the kubelet). Every detection period
 * (5 min, the kubelet's detectImages), and in every GC or reclaim pass, it also lists the
 * containers of every state (ListContainers: an image is in use while any container,
 * running or dead, uses it) and updates its image records (logic/imagegc.c): when each
 * image was first seen and last seen in use. Every GC period (5 min, the kubelet's ImageGCPeriod),
 * when the image file system's usage is at or over --image-gc-high-threshold, it removes unused
 * images (least recently used first; never one in use, pinned by the runtime or named by
 * --pod-infra-container-image, nor one younger than --image-minimum-gc-age) until usage is
 * down to --image-gc-low-threshold; when it cannot, a FreeDiskSpaceFailed Warning event
 * goes to the node with the kubelet's message. Before that, with --image-maximum-gc-age,
 * every unused image not used for longer than that goes, whatever the usage, once the
 * manager has run that long (the kubelet's freeOldImages; an image never used counts from
 * its first detection). imagegc_free_unused is the eviction
 * manager's reclaim (DeleteUnusedImages: every eligible image). A pass is one chain of CRI
 * calls; a pass never starts while another runs (a request made meanwhile is queued). The
 * environment variable KLET_IMAGE_GC_PERIOD_MS (tests) sets all three periods;
 * KLET_IMAGE_LIST_PERIOD_MS (tests), after it, the image list's alone.
 */
#ifndef KLET_IMAGEGC_H
#define KLET_IMAGEGC_H

#include <stddef.h>
#include <stdint.h>

#include "logic/imagegc.h"

struct event_base;
struct cri;
struct events;
struct klet_config;
struct imagegc;

struct imagegc_deps {
	struct event_base        *base;
	struct cri               *cri;
	const struct klet_config *cfg;    /* thresholds, minimum age, sandbox image, node name */
	struct events            *events; /* may be NULL */
	/* May be NULL: the node status' image list changed (called at the end of a pass). */
	void (*images_changed)(void *arg);
	void *arg;
};

/* The image file system as last observed. */
struct imagegc_fs {
	int     valid;
	char    mountpoint[256];
	int64_t capacity, available, used; /* bytes; used as the runtime reports it */
	int64_t inodes, inodes_free;       /* 0: unknown */
};

struct imagegc_view {
	struct igc_policy policy;
	struct imagegc_fs fs;
	int               usage_pct; /* -1: unknown */
	size_t            images, in_use, pinned;
	uint64_t          detections, gc_runs, failures;
	uint64_t          removed_space, removed_reclaim, removed_age; /* images removed */
	int64_t           freed_bytes;                                 /* by every removal */
	int64_t           last_gc_ms; /* wall ms of the last GC run, 0: none */
	char              last_result[256];
};

/* NULL (logged) when the policy is invalid. Starts its first detection at once, or when the
 * runtime is ready (imagegc_runtime_ready). */
struct imagegc *imagegc_new(const struct imagegc_deps *);
void            imagegc_free(struct imagegc *);
/* The runtime is ready (again): a pass that was due while it was not starts now. */
void imagegc_runtime_ready(struct imagegc *);
/* The image file system (0), or -1 before the first ImageFsInfo answer: the mount point
 * ImageFsInfo named, its capacity and available bytes and inodes read now (statvfs). */
int imagegc_fs(const struct imagegc *, struct imagegc_fs *out);
/* The node status' images (room for IGC_NODE_IMAGES_MAX); names borrowed until the next
 * pass ends. */
size_t imagegc_node_images(const struct imagegc *, struct igc_node_image *out);
/* Removes every unused image old enough (the eviction manager's reclaim); done (may be
 * NULL) runs later from the loop, never from inside this call, with the bytes freed. */
void imagegc_free_unused(struct imagegc *, void (*done)(int64_t freed, void *arg), void *arg);
void imagegc_view(const struct imagegc *, struct imagegc_view *);

#endif
