/* inspect.h — podctl inspect: the runtime's ContainerStatus (verbose) of one container,
 * asked on behalf of a podctl client. The reply line is built when the runtime answered
 * and handed to the caller through its callback. */
#ifndef KLET_CTL_INSPECT_H
#define KLET_CTL_INSPECT_H

#include <yajl/yajl_gen.h>

struct ctl_deps;
struct ctl_inspect;

/* reply holds one complete reply (ok with {"status", "info"}, or an error); it is freed
 * after the call. The inspection is over (and freed) when this runs. */
typedef void (*ctl_inspect_cb)(yajl_gen reply, void *arg);

/* Resolves id (a full container ID, or a prefix unique among the containers kletd knows;
 * anything else goes to the runtime as given) and asks the runtime. Returns NULL after
 * writing an error reply into errg when it cannot ask (runtime not ready, ambiguous
 * prefix). */
struct ctl_inspect *ctl_inspect_start(
    const struct ctl_deps *, const char *id, ctl_inspect_cb, void *arg, yajl_gen errg);
/* Cancels a pending inspection: its callback never runs. NULL is a no-op. */
void ctl_inspect_cancel(struct ctl_inspect *);

#endif
