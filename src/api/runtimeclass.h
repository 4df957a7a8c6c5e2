/* runtimeclass.h — the kubelet's RuntimeClass manager: node.k8s.io/v1 RuntimeClass objects
 * listed (LIST /apis/node.k8s.io/v1/runtimeclasses) and watched from the list's
 * resourceVersion, cached by name (handler; overhead.podFixed). A stream that ends is
 * watched again from the last position; a 410 (or any failed request) relists after a
 * backoff of 1 s doubling to 30 s. The API server's RuntimeClass admission copies a class's
 * overhead into the pods it admits (spec.overhead), which is what admission and the pod
 * cgroup count; the cache answers the sandbox step's handler lookup. */
#ifndef KLET_RUNTIMECLASS_H
#define KLET_RUNTIMECLASS_H

#include <stddef.h>
#include <stdint.h>

struct event_base;
struct api;
struct runtimeclass;

/* Starts the list at once. Never NULL. */
struct runtimeclass *runtimeclass_new(struct event_base *, struct api *);
void                 runtimeclass_free(struct runtimeclass *);
/* The handler of class name (borrowed until the next loop turn): 1 found, 0 unknown. */
int runtimeclass_lookup(const struct runtimeclass *, const char *name, const char **handler);
/* 1 once a list completed. */
int    runtimeclass_synced(const struct runtimeclass *);
size_t runtimeclass_count(const struct runtimeclass *);

#endif
