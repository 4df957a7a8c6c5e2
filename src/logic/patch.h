/* patch.h — strategic-merge patches of a pod status, as the kubelet's status manager sends
 * them (PATCH pods/NAME/status, application/strategic-merge-patch+json).
 *
 * Only changed fields are sent. Lists with a patch merge key are merged by it: conditions
 * by "type", podIPs and hostIPs by "ip", with "$setElementOrder/<list>" giving the new
 * order and {"$patch":"delete", key} for removed elements. Container status lists have no
 * merge key in the API (they are atomic), so when any element changes the whole list is
 * sent. The patch carries metadata.uid as a precondition. Keys are written sorted, like
 * the apiserver's own CreateTwoWayMergePatch.
 */
#ifndef KLET_PATCH_H
#define KLET_PATCH_H

#include "pod/pod.h"

/* Returns {"metadata":{"uid":UID},"status":{...}} (caller frees), or NULL when the two
 * statuses do not differ. old may be NULL (nothing acknowledged yet: every field is sent). */
char *patch_pod_status(const char *uid, const struct pod_status *old, const struct pod_status *new);

/* The same diff on two JSON documents (objects) with the pod merge keys. Returns the patch
 * (caller frees), NULL when equal, or NULL with *err set (static string) when a document
 * does not parse. err may be NULL. */
char *patch_two_way_json(const char *old_json, const char *new_json, const char **err);

#endif
