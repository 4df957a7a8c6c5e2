/* logrotate.h — container log rotation (the kubelet's container log manager).
 *
 * Every monitor interval, for each running container the pod cache knows, the log file
 * kletd gave it (POD-LOGS-DIR/NS_NAME_UID/CONTAINER/RESTARTCOUNT.log) is checked with
 * stat(); above max_size it is renamed to LOG.YYYYMMDD-HHMMSS (UTC) and the runtime is asked
 * to open a new one (CRI ReopenContainerLog); if that fails the file is renamed back and the
 * next pass tries again. Before a rotation, leftover LOG.*.tmp files are removed and the
 * oldest rotated files are deleted so that, with the new rotated file and the live one, at
 * most max_files files remain. No status calls: the path is known without asking the
 * runtime. Rotated files are not compressed (the kubelet gzips them).
 *
 * A file found under max_size is not looked at again until it changes: before its stat, a
 * one-shot inotify watch is put on it (a write, truncation, rename or unlink fires it), and
 * a pass stats only the files whose watch fired, had none, or all of them when the event
 * queue overflowed. The queue is read by the passes only, never by the loop, so a log being
 * written wakes nothing. On an idle node a pass is then one read() that finds nothing, not
 * a stat per container. Without inotify, or past the limit of watches, a file is looked at
 * in every pass. The outcome is the kubelet's: each pass rotates every log above the size.
 */
#ifndef KLET_LOGROTATE_H
#define KLET_LOGROTATE_H

#include <stddef.h>
#include <stdint.h>

struct cri;
struct podcache;
struct logrotate;

struct logrotate_options {
	const char *logs_dir;   /* --pod-logs-dir */
	int64_t     max_size;   /* bytes; < 0: never rotate */
	int         max_files;  /* >= 2, the live file included */
	int64_t     timeout_ms; /* of ReopenContainerLog */
	int         no_watch;   /* tests: no inotify, every file stat'ed in every pass */
};

struct logrotate_stats {
	uint64_t passes;
	uint64_t rotations; /* files rotated and reopened */
	uint64_t failures;  /* rename or ReopenContainerLog failed */
	uint64_t removed;   /* old rotated files deleted */
	uint64_t checked;   /* live files stat'ed */
	uint64_t unchanged; /* live files not stat'ed: not written since they were under the size */
	uint64_t unwatched; /* watches that could not be put (no file, the limit of watches) */
};

/* cri and cache must outlive it. Never NULL. */
struct logrotate *logrotate_new(struct cri *, struct podcache *, const struct logrotate_options *);
/* Cancels the reopen calls in flight (their files stay rotated) and frees. NULL: no-op. */
void logrotate_free(struct logrotate *);
/* One pass; returns the number of rotations started. */
int  logrotate_run(struct logrotate *);
void logrotate_stats(const struct logrotate *, struct logrotate_stats *);

/* ---- pure helpers (tests) ---- */

/* The log file of a container (caller frees), or NULL when a name (from the runtime) would
 * lead out of logs_dir. */
char *logrotate_path(const char *logs_dir, const char *ns, const char *name, const char *uid,
    const char *container, int restart_count);
struct pod;
struct rt_container;
struct rt_pod_status;
/* The log to read for container ctr of pod, as the kubelet's GetContainerLogs picks it: the
 * newest instance in st (the runtime's view; may be NULL), or with previous the one before
 * it. Returns 0 with *path (caller frees) and *ct (borrowed from st), or -1 with the
 * kubelet's message in err: "container X is not valid for pod P", "previous terminated
 * container \"X\" in pod \"P\" not found", "container \"X\" in pod \"P\" is waiting
 * to start: ContainerCreating". */
int logrotate_container_log(const char *logs_dir, const struct pod *pod,
    const struct rt_pod_status *st, const char *ctr, int previous, char **path,
    const struct rt_container **ct, char *err, size_t errlen);
/* The rotated name of log at wall time t (Unix seconds; caller frees). */
char *logrotate_rotated_name(const char *log, int64_t t);
/* Given the rotated files of one log sorted oldest first, how many of the oldest to delete
 * before rotating once more so that at most max_files files remain. */
size_t logrotate_excess(size_t nrotated, int max_files);

#endif
