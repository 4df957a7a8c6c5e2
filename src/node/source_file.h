/* source_file.h — static pods from --pod-manifest-path (the kubelet's file source).
 *
 * Every regular file of the directory whose name does not start with a dot holds one pod,
 * YAML or JSON. Each pod is defaulted as the kubelet does for static pods: the UID is a
 * hash of the manifest's content, its path and the node name (deterministic: the same
 * manifest on the same node always gives the same UID; a UID in the manifest is kept),
 * the name gets the suffix "-NODENAME", the namespace defaults to "default", spec.nodeName
 * is the node, and the annotations kubernetes.io/config.source=file and
 * kubernetes.io/config.hash=UID are added (podconfig adds kubernetes.io/config.seen).
 * The directory is watched with inotify (changes are seen within ~100 ms) and rescanned
 * every check period; each scan hands the whole set to podconfig (source "file"). A file that
 * cannot be read, decoded or validated is reported once per content (log line and a
 * Warning event "FailedToLoadManifest" on the node) and leaves the other pods alone.
 * Two files giving the same namespace/name: the one seen first keeps the pod (in one scan,
 * the first by file name), the other is refused and reported once the same way, naming
 * both; it takes over when the first goes. Entries that are not regular files (directories,
 * FIFOs, sockets, devices, dangling or looping symbolic links) are skipped with one log
 * line while they stay; nothing is ever opened that could block.
 */
#ifndef KLET_SOURCE_FILE_H
#define KLET_SOURCE_FILE_H

#include <stddef.h>
#include <stdint.h>

struct event_base;
struct events;
struct pod;
struct podconfig;
struct source_file;

/* Starts watching dir and scans it on the next loop turn. pc and ev (may be NULL) must
 * outlive the source. check_ms is the rescan period (0: 20 s). A missing directory is
 * logged and looked for again at every rescan. Never NULL. */
struct source_file *source_file_new(struct event_base *, struct podconfig *, struct events *,
    const char *dir, const char *node_name, int64_t check_ms);
/* Stops watching and frees. NULL is a no-op. */
void source_file_free(struct source_file *);
/* Scans now (synchronously). Returns the number of pods handed to podconfig, or -1 when the
 * directory could not be read for want of descriptors or memory (the pods stay as they are). */
int source_file_scan(struct source_file *);
/* Scans done so far, for tests and podctl. */
uint64_t source_file_scans(const struct source_file *);
/* Of those, the scans that handed their set to podconfig: the first, and each that found a
 * file new, gone, read again or skipped anew (for tests). */
uint64_t source_file_sets(const struct source_file *);

/* The pure part: turns a manifest (buf, len) read from path into the defaulted pod and its
 * final JSON document (what podconfig and the store keep). Returns 0 with *pod (the
 * caller's reference: pod_unref) and *doc (NUL-terminated, caller frees; *doc_len set); -1 with a
 * one-line reason in err. */
int source_file_decode(const char *buf, size_t len, const char *path, const char *node_name,
    struct pod **pod, char **doc, size_t *doc_len, char *err, size_t errlen);

#endif
