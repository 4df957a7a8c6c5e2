/* store.h — the daemon's state in SQLite (<root-dir>/klet.db): pods, pod workers, statuses,
 * container exits, creation intents and a few meta values, so that a restart resumes.
 *
 * Write discipline. Writes are typed calls (no SQL for callers). The first write of a loop
 * turn opens a transaction; an event at LOOP_PRI_LOW commits it at the end of the turn, so
 * every write of one turn lands in one transaction. Each write is also kept in an in-memory
 * journal until its transaction commits: if a write or the COMMIT fails (disk full, read-only
 * file, I/O error) the transaction is rolled back, health turns degraded, and the journal is
 * replayed in a new transaction by a retry timer (or store_flush) until a commit succeeds.
 * Nothing acknowledged is lost while the process lives; a crash loses at most the
 * uncommitted turn (SQLite keeps the file consistent). Callbacks queued with
 * store_after_commit run only once everything written before them is committed.
 *
 * Reads (store_foreach_*, store_get_meta) see every write made so far: the committed rows
 * plus the current turn's. While degraded they run on a private in-memory copy of the
 * committed rows with the journal applied (slower; meant for rare reads such as recovery).
 *
 * Strings passed in are copied; strings handed to callbacks are valid during the callback
 * only. Wall times are Unix milliseconds (…_wall_ms) or nanoseconds (…_ns); monotonic times
 * never go to the store (they mean nothing after a restart).
 *
 * Write functions return nothing: a failure is handled inside (journal, degraded, retry).
 * Read functions return 0, or -1 when the database could not be read (logged).
 * A NULL store is accepted by the writes, reads, checkpoint, health and size (no-ops, no
 * rows), so that callers' unit tests may run without one; store_after_commit needs a store.
 */
#ifndef KLET_STORE_H
#define KLET_STORE_H

#include <stddef.h>
#include <stdint.h>

struct event_base;
struct store;

/* One desired pod, as its source last gave it. */
struct store_pod {
	const char *uid;
	const char *source; /* "file" or "api" */
	const char *ns;
	const char *name;
	const void *doc; /* the raw document, as received */
	size_t      doc_len;
	const char *format; /* "json" or "yaml" */
	int64_t     updated_wall_ms;
};

/* One pod worker's durable state (see podworkers.h). */
struct store_worker {
	const char *uid;
	const char *state;                  /* "sync", "terminating", "terminated" or "finished" */
	int64_t     grace_seconds;          /* while terminating, else 0 */
	int64_t     grace_deadline_wall_ms; /* absolute; 0 when not terminating */
	const char *step;                   /* the step it is in (free text), may be NULL */
	const char *last_error;             /* may be NULL */
	int         failures;               /* consecutive failed transactions */
	int64_t     next_retry_wall_ms;     /* 0: none */
	int         removed;                /* terminating because its source removed the pod */
};

/* The latest generated status of a pod and the version the API server acknowledged. */
struct store_status {
	const char *uid;
	int64_t     version;       /* increases with every generated status */
	const char *json;          /* the status document */
	int64_t     acked_version; /* 0: none acknowledged yet */
};

/* A container exit seen, kept until its pod is forgotten. */
struct store_exit {
	const char *container_id; /* key */
	const char *uid;          /* pod UID */
	const char *name;         /* container name */
	int         restart_count;
	int         exit_code;
	const char *reason;      /* may be NULL */
	const char *message;     /* may be NULL */
	int64_t     started_ns;  /* wall, 0 if unknown */
	int64_t     finished_ns; /* wall, 0 if unknown */
};

/* Written before a CRI call that creates something; looked up after a restart so that the
 * object is adopted (found by its labels) rather than created twice. */
struct store_intent {
	const char *uid;
	const char *kind;    /* "sandbox" or "container" */
	const char *name;    /* container name; "" for a sandbox (NULL means "") */
	int64_t     attempt; /* sandbox attempt or container restart count */
	int64_t     created_wall_ms;
};

/* The details of one runtime object as a status call last gave them (see the PLEG), with
 * the object's state then, so that a restart can reuse them while the state is the same. */
struct store_rtobj {
	const char *id;         /* sandbox or container id: key */
	const char *uid;        /* pod UID */
	int         sandbox;    /* 1: a sandbox */
	int         state;      /* the PLEG's state of the object when read */
	int64_t     started_ns; /* containers: wall times, exit code, reason, message */
	int64_t     finished_ns;
	int         exit_code;
	const char *reason;       /* may be NULL */
	const char *message;      /* may be NULL */
	const char *image_ref;    /* may be NULL */
	const char *ip;           /* sandboxes: primary IP, may be NULL */
	const char *extra_ips;    /* sandboxes: further IPs separated by spaces, may be NULL */
	int         network_mode; /* sandboxes: enum rt_nsmode */
};

enum store_health_state { STORE_OK = 0, STORE_DEGRADED };

struct store_health_info {
	enum store_health_state state;
	const char *last_error;        /* NULL when never failed; owned by the store, valid until
	                                * the next store call */
	int64_t  failed_since_wall_ms; /* 0 when ok */
	size_t   journal_ops;          /* writes waiting for a successful commit */
	uint64_t commits;              /* transactions committed since open */
	uint64_t failures;             /* failed writes or commits since open */
	int64_t  sqlite_bytes;         /* heap SQLite holds (every connection, statements) */
	int64_t  cache_bytes;          /* of it, the page cache of the store's connection */
	uint64_t cache_hits;           /* page cache hits and misses since the connection opened */
	uint64_t cache_misses;
};

typedef void (*store_done_fn)(void *arg);

/* Opens (creating with mode 0600) the database at path, applies the embedded migrations
 * (schema/NNN-*.sql) in one transaction, WAL, synchronous=NORMAL. base runs the end-of-turn
 * commit and the retry timer; NULL means no loop: writes then commit only in store_flush.
 * A database newer than this binary, or one that is not a database or fails quick_check,
 * is refused and left untouched. A file that cannot be written now (read-only file system
 * or mode, a full disk for a new file) is not refused: the store starts degraded from a
 * private in-memory copy of it (reads see its rows and every write since), the file is not
 * touched, and the retry timer reopens it and replays the journal once it can be written. Returns
 * the store, or NULL with *errp set to a message (owned by the caller, free() it) when errp is not
 * NULL. */
struct store *store_open(struct event_base *base, const char *path, char **errp);
/* Commits what it can (store_flush) and frees everything; pending after_commit callbacks
 * whose data could not be committed are dropped (not run). NULL is a no-op. */
void store_close(struct store *);
/* Commits the current turn now (or, when degraded, retries the journal). Returns 0 when
 * nothing is left uncommitted, -1 otherwise (health says why). */
int store_flush(struct store *);
/* Commits what this turn wrote so far, now, without running after_commit callbacks (they
 * still run at the end of the turn): for a record that must be durable before a side effect
 * leaves in the same turn. While degraded it does nothing (the retry timer replays).
 * Returns 0 when nothing is left uncommitted, -1 otherwise. */
int store_commit_now(struct store *);
/* Runs fn(arg) once everything written so far is committed (at the end of this turn, or
 * after a later successful retry). With nothing pending it still runs at the end of the
 * turn, never from inside this call. Callbacks run in the order they were queued. */
void store_after_commit(struct store *, store_done_fn fn, void *arg);

/* ---- pods ---- */
void store_put_pod(struct store *, const struct store_pod *);
void store_del_pod(struct store *, const char *uid);
/* Calls cb for every stored pod, ordered by uid; cb returns 0 to go on, non-zero to stop. */
int store_foreach_pod(struct store *, int (*cb)(const struct store_pod *, void *), void *arg);

/* ---- pod workers ---- */
void store_put_worker(struct store *, const struct store_worker *);
void store_del_worker(struct store *, const char *uid);
int store_foreach_worker(struct store *, int (*cb)(const struct store_worker *, void *), void *arg);

/* ---- statuses ---- */
/* Sets the pod's status version and document; keeps its acked_version. */
void store_put_status(struct store *, const char *uid, int64_t version, const char *json);
/* Records that the API server acknowledged version (acked_version only grows). */
void store_ack_status(struct store *, const char *uid, int64_t version);
int store_foreach_status(struct store *, int (*cb)(const struct store_status *, void *), void *arg);

/* ---- container exits ---- */
void store_put_exit(struct store *, const struct store_exit *);
/* uid NULL: every exit. Ordered by uid, container name, restart_count. */
int store_foreach_exit(
    struct store *, const char *uid, int (*cb)(const struct store_exit *, void *), void *arg);
void store_del_exits_for(struct store *, const char *uid);
/* Exits of pods the store no longer has (written after the pod was forgotten: its last
 * containers' exits, seen by PLEG or stored by the container GC before removing them). */
void store_del_orphaned_exits(struct store *);

/* ---- intents ---- */
void store_put_intent(struct store *, const struct store_intent *);
void store_del_intent(
    struct store *, const char *uid, const char *kind, const char *name, int64_t attempt);
/* uid NULL: every intent. */
int store_foreach_intent(
    struct store *, const char *uid, int (*cb)(const struct store_intent *, void *), void *arg);

/* ---- runtime objects (what the first relist after a restart reuses) ---- */
void store_put_rtobj(struct store *, const struct store_rtobj *);
void store_del_rtobj(struct store *, const char *id);
/* Every stored runtime object, ordered by id. */
int store_foreach_rtobj(struct store *, int (*cb)(const struct store_rtobj *, void *), void *arg);

/* ---- meta (e.g. "pods.resourceVersion") ---- */
/* value NULL deletes the key. */
void store_set_meta(struct store *, const char *key, const char *value);
/* Returns the value (caller frees) or NULL when unset or unreadable. */
char *store_get_meta(struct store *, const char *key);

/* ---- hints: a value worth having beside the database, outside it ----
 * A hint lives in a small file of its own beside the database (<path>-hint-<key>), replaced
 * whole (write, rename: write_file_replace) and never synced, so that keeping it up to date
 * runs none of SQLite's write path and no fsync (an idle node's watch position, once a
 * minute). A crash of the process keeps the last one put; a power cut may lose it. It is never
 * state: it is tied to a base, the meta value of key when it was put, and store_get_hint
 * gives it only while the caller's base is still that (a later committed write of the key
 * makes it stale). key: a file name component; base and value: 1 to STORE_HINT_MAX bytes,
 * no newline. */
#define STORE_HINT_MAX 256
/* 0, or -1 (bad argument, or the file could not be written: errno). */
int store_put_hint(struct store *, const char *key, const char *base, const char *value);
/* The value (caller frees), or NULL: no hint, one put on another base, or a file that is
 * not a whole hint. */
char *store_get_hint(struct store *, const char *key, const char *base);

/* ---- a pod's history (the events table, bounded to the newest STORE_MAX_EVENTS rows):
 * its worker's state changes and its events, kept until the pod is forgotten ---- */
#define STORE_MAX_EVENTS 1000
struct store_event {
	int64_t     id; /* grows with every row */
	const char *uid;
	const char *reason;
	const char *message;
	int64_t     wall_ms;
};
void store_put_event(
    struct store *, const char *uid, const char *reason, const char *message, int64_t wall_ms);
/* Calls cb for every row of uid, oldest first; cb returns non-zero to stop. 0, or -1 when the
 * read failed (logged). */
int store_foreach_event(
    struct store *, const char *uid, int (*cb)(const struct store_event *, void *), void *arg);

/* Deletes every row of a pod that is fully gone (pod, worker, status, exits, intents,
 * events, runtime objects), so the file stays bounded. */
void store_forget_pod(struct store *, const char *uid);

/* ---- housekeeping and health ---- */
/* wal_checkpoint(PASSIVE): the one point where the data is fsynced. Call from housekeeping.
 * Also retries a degraded journal. Nothing (not even the freelist look) when nothing was
 * committed since the last checkpoint copied the whole WAL. Returns 0, or -1 (logged;
 * health degraded). */
int store_checkpoint(struct store *);
/* Frees SQLite's page cache (sqlite3_db_release_memory) and the journal's slots when it is
 * empty: for an idle daemon; the pages are read again from the file (the kernel's page
 * cache) when they are needed. */
void store_release_memory(struct store *);
/* 1 when writes wait in the journal for the store to commit again (store_health's state,
 * without the rest). */
int store_degraded(const struct store *);
/* Transactions committed since the store opened (store_health's commits, alone). */
uint64_t store_commits(const struct store *);
/* Fills *h; returns h->state. */
enum store_health_state store_health(struct store *, struct store_health_info *h);
/* Bytes of the database file plus its WAL (0 if unknown). */
int64_t store_file_size(struct store *);
/* The latest schema version this binary knows (PRAGMA user_version after open). */
int store_schema_version(void);

/* Test hook: runs sql on the store's connection (e.g. "PRAGMA query_only=1" to simulate a
 * read-only file, "PRAGMA max_page_count=N" for a full disk). Returns 0 or -1. */
int store_test_exec(struct store *, const char *sql);

#endif
