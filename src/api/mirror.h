/* mirror.h — mirror pods: the API copies of this node's static pods, as the kubelet's mirror
 * client and the mirror part of its pod manager keep them.
 *
 * A static pod (source "file", admitted, not being deleted) gets a mirror pod in the API: its
 * labels, annotations plus kubernetes.io/config.mirror = the static pod's UID (its config
 * hash), its spec with nodeName, owned by the Node. The mirrors the server has come from the
 * watch (watch_mirror), never from podconfig. A static pod whose mirror the watch has not
 * shown (a restart resumes the watch without a LIST) has it looked up by name first: found,
 * it is adopted (watch_mirror_adopt) and its status patches go on; absent (404), it is
 * created, and the created object adopted at once. A mirror whose annotation no longer
 * matches (the static pod changed) or that is being deleted is deleted (grace 0, uid
 * precondition) and created again; a mirror whose static pod is gone is deleted. A pod that
 * is not a mirror pod holding the name is left alone (looked up again after 30 s). One
 * lookup, create or delete is in flight at a time.
 */
#ifndef KLET_API_MIRROR_H
#define KLET_API_MIRROR_H

struct api;
struct watch;
struct podconfig;
struct node;
struct pod;
struct mirror;

struct mirror_deps {
	struct api       *api;
	struct watch     *watch;     /* the mirrors the server has */
	struct podconfig *pc;        /* the static pods and their documents */
	struct node      *node;      /* the Node's uid (owner reference) */
	const char       *node_name; /* copied */
};

/* Never NULL. */
struct mirror *mirror_new(const struct mirror_deps *);
/* Cancels the pending call. NULL is a no-op. */
void mirror_free(struct mirror *);
/* One step (after each relist): create a missing mirror, replace an outdated one or delete
 * an orphan. Does nothing before the watch has synced or the Node has a uid. */
void mirror_pass(struct mirror *);
/* The current mirror pod of static pod sp (its annotation names sp's UID), owned by the
 * watch and valid until control returns to the loop, or NULL. */
const struct pod *mirror_of(const struct mirror *, const struct pod *sp);

#endif
