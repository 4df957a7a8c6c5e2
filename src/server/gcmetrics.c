/* gcmetrics.c — see gcmetrics.h. */
#include <stdio.h>

#include "node/eviction.h"
#include "node/imagegc.h"
#include "server/gcmetrics.h"
#include "server/metrics.h"

static void
gcm_evictions(struct evbuffer *b, const struct eviction_view *v)
{
	char   lab[96];
	size_t i;

	prom_family(b, "kubelet_evictions",
	    "[ALPHA] Cumulative number of pod evictions by eviction signal", "counter");
	for (i = 0; i < EV_NSIGNALS; i++) {
		if (v->by_signal[i] == 0)
			continue;
		lab[0] = '\0';
		prom_label(lab, sizeof(lab), "eviction_signal", ev_signal_name((enum ev_signal)i));
		prom_sample(b, "kubelet_evictions", lab, (double)v->by_signal[i]);
	}
	/* The kubelet's names of the local storage limits. */
	if (v->emptydir_limit > 0)
		prom_sample(b, "kubelet_evictions", "eviction_signal=\"emptydirfs.limit\"",
		    (double)v->emptydir_limit);
	if (v->pod_storage_limit > 0)
		prom_sample(b, "kubelet_evictions", "eviction_signal=\"ephemeralpodfs.limit\"",
		    (double)v->pod_storage_limit);
	prom_family(b, "klet_eviction_signal_available",
	    "What each eviction signal observes as available (bytes, inodes or pids).", "gauge");
	for (i = 0; i < EV_NSIGNALS; i++) {
		if (!v->obs[i].valid)
			continue;
		lab[0] = '\0';
		prom_label(lab, sizeof(lab), "eviction_signal", ev_signal_name((enum ev_signal)i));
		prom_sample(b, "klet_eviction_signal_available", lab, (double)v->obs[i].available);
	}
	prom_family(b, "klet_eviction_node_conditions",
	    "Node pressure conditions reported by the eviction manager (1: true).", "gauge");
	prom_sample(b, "klet_eviction_node_conditions", "condition=\"MemoryPressure\"",
	    (v->conditions & EV_COND_MEMORY) != 0);
	prom_sample(b, "klet_eviction_node_conditions", "condition=\"DiskPressure\"",
	    (v->conditions & EV_COND_DISK) != 0);
	prom_sample(b, "klet_eviction_node_conditions", "condition=\"PIDPressure\"",
	    (v->conditions & EV_COND_PID) != 0);
	prom_family(b, "klet_eviction_threshold_notifications_total",
	    "Memory threshold notifications (cgroup v1 eventfd or v2 poll) that ran a pass.",
	    "counter");
	prom_sample(
	    b, "klet_eviction_threshold_notifications_total", NULL, (double)v->notifications);
	prom_family(b, "klet_eviction_reclaims_total",
	    "Node-level reclaims (dead containers, unused images) before a disk eviction.",
	    "counter");
	prom_sample(b, "klet_eviction_reclaims_total", NULL, (double)v->reclaims);
}

static void
gcm_images(struct evbuffer *b, const struct imagegc_view *v)
{
	prom_family(b, "kubelet_image_garbage_collected_total",
	    "[ALPHA] Total number of images garbage collected by the kubelet, whether through "
	    "disk usage or image age.",
	    "counter");
	/* The kubelet's reasons: space (over the high threshold, or the eviction manager's
	 * reclaim: both are its freeSpace) and age (freeOldImages). */
	prom_sample(
	    b, "kubelet_image_garbage_collected_total", "reason=\"age\"", (double)v->removed_age);
	prom_sample(b, "kubelet_image_garbage_collected_total", "reason=\"space\"",
	    (double)(v->removed_space + v->removed_reclaim));
	prom_family(b, "klet_image_gc_freed_bytes_total",
	    "Bytes of images removed by image garbage collection.", "counter");
	prom_sample(b, "klet_image_gc_freed_bytes_total", NULL, (double)v->freed_bytes);
	prom_family(b, "klet_image_gc_runs_total", "Image garbage collection runs.", "counter");
	prom_sample(b, "klet_image_gc_runs_total", NULL, (double)v->gc_runs);
	prom_family(b, "klet_image_gc_images", "Images on the node, in use and pinned.", "gauge");
	prom_sample(b, "klet_image_gc_images", "state=\"all\"", (double)v->images);
	prom_sample(b, "klet_image_gc_images", "state=\"in_use\"", (double)v->in_use);
	prom_sample(b, "klet_image_gc_images", "state=\"pinned\"", (double)v->pinned);
	if (v->fs.valid) {
		prom_family(b, "klet_imagefs_capacity_bytes",
		    "Capacity of the image file system (ImageFsInfo's mount point).", "gauge");
		prom_sample(b, "klet_imagefs_capacity_bytes", NULL, (double)v->fs.capacity);
		prom_family(b, "klet_imagefs_available_bytes",
		    "Available bytes of the image file system.", "gauge");
		prom_sample(b, "klet_imagefs_available_bytes", NULL, (double)v->fs.available);
		prom_family(b, "klet_imagefs_usage_percent",
		    "Usage of the image file system as image GC compares it with its thresholds.",
		    "gauge");
		prom_sample(b, "klet_imagefs_usage_percent", NULL, (double)v->usage_pct);
	}
}

void
gcmetrics_write(struct evbuffer *b, const struct eviction_view *ev, const struct imagegc_view *ig)
{
	if (ev != NULL)
		gcm_evictions(b, ev);
	if (ig != NULL)
		gcm_images(b, ig);
}
