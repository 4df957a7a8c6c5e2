/* hash.h — the container hash (the kubelet's HashContainer). */
#ifndef KLET_HASH_H
#define KLET_HASH_H

#include <stdint.h>

#include "pod/pod.h"

/* Hash of the fields of a container whose change requires a restart (image, command, args,
 * workingDir, env, envFrom, ports, resources, volumeMounts, securityContext, lifecycle, stdin,
 * tty, ...), not probe timing or status. Stable across runs, builds and field order. */
uint64_t container_hash(const struct container *);

#endif
