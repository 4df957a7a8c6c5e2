/* gcmetrics.h — the eviction manager's and the image GC manager's families of /metrics:
 * kubelet_evictions{eviction_signal} and kubelet_image_garbage_collected_total{reason} as
 * the kubelet names them, and klet_ gauges of their state (signals, image file system). */
#ifndef KLET_SERVER_GCMETRICS_H
#define KLET_SERVER_GCMETRICS_H

struct evbuffer;
struct eviction_view;
struct imagegc_view;

/* Either may be NULL (that manager's families are left out). */
void gcmetrics_write(struct evbuffer *, const struct eviction_view *, const struct imagegc_view *);

#endif
