/* volumes.h — API objects pods consume: configMap and secret volumes, env valueFrom
 * configMapKeyRef / secretKeyRef and envFrom (the kubelet's cache-based configmap and secret
 * managers plus its configmap / secret volume plugins and atomic writer).
 *
 * Objects are read with GET /api/v1/namespaces/NS/{configmaps,secrets}/NAME, asynchronously,
 * and kept in a small cache: an object is re-read when it is older than the TTL (default 60 s,
 * the kubelet's syncFrequency) and still used (never when it is immutable); a missing or failed one
 * is retried after at most 1 s when asked again. The cache holds at most max_objects (LRU; objects
 * a mounted volume uses are kept). A pod that asked for an object not read yet is kicked (kick
 * callback) once the answer arrives, so its sync retries at once.
 *
 * Volume files are written the kubelet's way (atomic writer): VOLDIR/..TIMESTAMP.RANDOM/
 * holds the files, VOLDIR/..data is a symlink to it (swapped by rename), and every top-level
 * name is a symlink VOLDIR/NAME -> ..data/NAME. Mounted volumes are remembered per pod and
 * rewritten when an object they use changes, until volumes_forget_pod.
 */
#ifndef KLET_VOLUMES_H
#define KLET_VOLUMES_H

#include <stddef.h>
#include <stdint.h>

struct event_base;
struct api;
struct pod;
struct volume;
struct volumes;

enum vobj_kind { VOBJ_CONFIG_MAP = 0, VOBJ_SECRET };

/* One key of an object: bytes (NUL-terminated for convenience; may contain NULs). */
struct vobj_item {
	char  *key;
	char  *val;
	size_t len;
	int    binary; /* from a configMap's binaryData (not used for env) */
};

/* A cached object. Borrowed: valid until the next loop turn. */
struct vobj {
	enum vobj_kind    kind;
	char             *ns;
	char             *name;
	char             *rv; /* resourceVersion, "" when unknown */
	struct vobj_item *items;
	size_t            nitems;
	int               immutable; /* "immutable": true: never read again once cached */
};

struct volumes_options {
	const char *root_dir;    /* ROOT/pods/UID/volumes/... (required) */
	int64_t     ttl_ms;      /* 0: 60 s */
	size_t      max_objects; /* 0: 1000 */
};

/* Returns a manager. api may be NULL (no API server: every look-up fails with "no API
 * server"); it must outlive the manager. opts is copied (root_dir too). Never NULL. */
struct volumes *volumes_new(struct event_base *, struct api *, const struct volumes_options *);
/* Cancels pending reads (no kick afterwards) and frees everything. NULL is a no-op. */
void volumes_free(struct volumes *);
/* fn(uid) is called (on the loop, from an API callback) when an object a pod waited for
 * arrived or changed; wire it to podworkers_kick. */
void volumes_set_kick(struct volumes *, void (*fn)(const char *uid, void *arg), void *arg);

/* Return codes of volumes_get. */
#define VOLUMES_OK        0
#define VOLUMES_ERROR     (-1) /* pending, or the server failed: err says which */
#define VOLUMES_NOT_FOUND (-2) /* the server said 404: err is its message */

/* Looks an object up for pod uid (who is kicked when a pending answer arrives). Returns
 * VOLUMES_OK with *out (borrowed, see struct vobj), VOLUMES_NOT_FOUND, or VOLUMES_ERROR; err
 * is filled unless VOLUMES_OK. Starts a read when the object is unknown or stale (a stale
 * object is still returned). v NULL: VOLUMES_ERROR "no API server"; a manager without an
 * API client knows only what volumes_put gave it (others: VOLUMES_NOT_FOUND). */
int volumes_get(struct volumes *, enum vobj_kind, const char *ns, const char *name, const char *uid,
    const struct vobj **out, char *err, size_t errlen);

/* Puts an object into the cache as if read from the server (tests, and a server's watch
 * later). json is a v1 ConfigMap or Secret. Returns 0, or -1 (err) when it does not parse. */
int volumes_put(
    struct volumes *, enum vobj_kind, const char *json, size_t len, char *err, size_t errlen);

/* Resolves a downwardAPI resourceFieldRef item (kp->resource, kp->res_container,
 * kp->res_divisor_milli) of pod: 0 with *out (malloc'd), or -1 with err. */
struct key_to_path;
typedef int (*vol_resource_fn)(const struct pod *, const struct key_to_path *kp, char **out,
    char *err, size_t errlen, void *arg);

/* Sets up one configMap, secret, downwardAPI or projected volume of pod (static pods may not
 * use API objects: configMap, secret, serviceAccountToken): reads the objects (and the
 * service account token: a TokenRequest bound to the pod, refreshed after 80% of its
 * lifetime or 24 h), writes ROOT/pods/UID/volumes/kubernetes.io~{configmap,secret,
 * downward-api,projected}/NAME and remembers it for updates (res_fn and arg must stay valid
 * until volumes_forget_pod or volumes_free). Returns 0 with *host_dir (caller frees), or -1
 * with err (a CreateContainerConfig message: an object or token not read yet, not found and
 * not optional, a missing key). */
int volumes_setup(struct volumes *, const struct pod *, const struct volume *,
    vol_resource_fn res_fn, void *arg, char **host_dir, char *err, size_t errlen);
/* Without a manager (no API server): writes a volume that needs no API object (downwardAPI,
 * projected from downwardAPI only) under root_dir once; others fail "no API server". */
int volumes_setup_once(const char *root_dir, const struct pod *, const struct volume *,
    vol_resource_fn res_fn, void *arg, char **host_dir, char *err, size_t errlen);
/* The pod's labels or annotations may have changed: downwardAPI files are rewritten. */
void volumes_update_pod(struct volumes *, const struct pod *);
/* Starts reading every object and token the pod uses (volumes, env, envFrom of all its
 * containers), so that one round trip covers them all; the pod is kicked when they arrive.
 * Static pods: nothing. */
void volumes_prefetch_pod(struct volumes *, const struct pod *);
/* The same, and returns 1 while one of them was never answered (the pod is kicked when it
 * is): a pod sync waits instead of failing (the kubelet's wait for its volumes). An
 * object the server answered NotFound or failed is not waited for. v NULL: 0. */
int volumes_pod_waiting(struct volumes *, const struct pod *);
/* A pod that is running here (after a restart too): its volumes are remembered (and written
 * when their objects are there), so updates and token refreshes go on for containers that
 * are not created again; also volumes_update_pod. Static pods' API volumes are left out. */
void volumes_track_pod(struct volumes *, const struct pod *);
/* Forgets a pod's volumes (no more updates). Files are left for housekeeping. */
void volumes_forget_pod(struct volumes *, const char *uid);

/* Counters for tests and podctl. */
struct volumes_stats {
	uint64_t gets;    /* GETs sent */
	uint64_t hits;    /* look-ups answered from the cache */
	uint64_t writes;  /* volume payloads written (changed) */
	uint64_t tokens;  /* service account tokens received */
	size_t   objects; /* objects cached */
	size_t   mounts;  /* volumes remembered */
};
void volumes_get_stats(const struct volumes *, struct volumes_stats *);

/* ---- pure helpers (files.c, tested on their own) ---- */

/* One file of a volume payload: a relative path (no "..", not absolute), bytes and mode. */
struct vol_file {
	char   *path;
	char   *data;
	size_t  len;
	int32_t mode;
};
struct vol_payload {
	struct vol_file *files;
	size_t           n;
	int              has_gid; /* the pod's fsGroup: files group gid, modes | 0440,   */
	int64_t          gid;     /* directories setgid | 0550 (SetVolumeOwnership)     */
};
void vol_payload_clear(struct vol_payload *);
/* Adds a file (copies path and data). */
void vol_payload_add(
    struct vol_payload *, const char *path, const char *data, size_t len, int32_t mode);

/* The payload of a configMap or secret volume from obj (NULL: the object is missing, allowed
 * only when optional): every key (items empty) or the items (key -> path, mode), modes from
 * the item or defaultMode. Returns 0, or -1 with err ("configmap references non-existent
 * config key: K" / "references non-existent secret key: K"). */
int vol_payload_make(const struct volume *, const struct vobj *obj, struct vol_payload *out,
    char *err, size_t errlen);

/* Writes payload into dir (created) with the atomic writer layout. Returns 1 when it wrote a
 * new version, 0 when the directory already held exactly this payload, -1 with err. Paths
 * must be relative without "..": an invalid one fails the whole write. */
int vol_write_atomic(const char *dir, const struct vol_payload *, char *err, size_t errlen);

/* ---- memory-backed volumes (tmpfs.c) ---- */

/* Secret and projected volumes (service account tokens, secrets) are written to a tmpfs
 * mounted on their directory (the kubelet's memory-medium wrapper), never to a disk. Makes dir
 * (0755) and mounts a tmpfs of size bytes on it (nosuid, nodev, mode 0755) unless a tmpfs is
 * mounted there already (a restart keeps what running containers see). 0, or -1 with err. */
int vol_tmpfs_ensure(const char *dir, uint64_t size, char *err, size_t errlen);
/* 1 when dir is the root of a tmpfs mount. */
int vol_is_tmpfs_mount(const char *dir);
/* Unmounts (lazily: MNT_DETACH) everything mounted at or below dir, deepest first, so that
 * rmtree (which never crosses mounts) can remove it. Returns how many, or -1 when dir cannot
 * be resolved or /proc/self/mountinfo not read (a missing dir: 0). */
int vol_unmount_under(const char *dir);
/* The size of the tmpfs of pod's memory-backed volumes: the kubelet's (SizeMemoryBacked-
 * Volumes): the pod's memory limit when every container has one, else the node's memory. */
uint64_t vol_tmpfs_size(const struct pod *);

/* A downwardAPI volume's fieldRef value: metadata.name, namespace, uid, labels, annotations
 * (all: "k=\"v\"" lines sorted by key, Go-quoted) or one of them (metadata.labels['k']).
 * Returns 0 with *out (malloc'd), or -1 with err. */
struct kvlist;
int   vol_field_value(const struct pod *, const char *path, char **out, char *err, size_t errlen);
char *vol_format_map(const struct kvlist *);
/* When to ask for a new token, in seconds after receiving one: 80% of its lifetime
 * (lifetime_s, or expiration_s when unknown), at most 24 h. */
int64_t vol_token_refresh_s(int64_t expiration_s, int64_t lifetime_s);

/* Parses a ConfigMap (data, binaryData base64) or Secret (data base64) into obj (cleared
 * first). Returns 0, or -1 with err. */
int vobj_parse(
    enum vobj_kind, const char *json, size_t len, struct vobj *obj, char *err, size_t errlen);
void vobj_clear(struct vobj *);
/* 1 when a and b hold the same keys and bytes. */
int vobj_same(const struct vobj *a, const struct vobj *b);
/* The item named key, or NULL. */
const struct vobj_item *vobj_find(const struct vobj *, const char *key);

#endif
