/* internal.h — shared by the files of src/store/ (not public; callers use store.h):
 *   store.c    the engine: open, the per-turn transaction, commit, after_commit callbacks,
 *              reads, checkpoint and health; the degraded mode (fail, retry, replay of the
 *              journal, running from a copy in memory)
 *   journal.c  the journal of uncommitted writes: its ops, their compaction, and the
 *              overlay that reads see while degraded
 *   migrate.c  the embedded migrations (schema/NNN-name.sql) and the checks of a file
 *   rows.c     the typed rows: the statements, the typed writes and reads (one cursor)
 * Calls go one way: rows.c -> store.c -> journal.c -> migrate.c.
 */
#ifndef KLET_STORE_INT_H
#define KLET_STORE_INT_H

#include <stddef.h>
#include <stdint.h>

#include <event2/event.h>
#include <sqlite3.h>

#include "store/store.h"

#define STORE_BUSY_TIMEOUT_MS 100
#define STORE_RETRY_MIN_MS    250
#define STORE_RETRY_MAX_MS    5000
#define STORE_COMPACT_MIN     256 /* journal length that triggers a compaction */
#define STORE_OPS_KEEP        64  /* journal slots kept after a commit (op: 0.4 KiB each) */
/* The page cache of the file's connection (PRAGMA cache_size), in KiB: what one turn's
 * writes touch (the b-tree paths of a few rows per pod) with room to spare; a miss is a read
 * from the kernel's page cache. SQLite's default is 2000 KiB, all of it resident with 1000
 * pods (issue 19). */
#define STORE_CACHE_KIB       256

/* Cached write statements (rows.c); an op names one of them. */
enum stmt_id {
	S_PUT_POD = 0,
	S_DEL_POD,
	S_PUT_WORKER,
	S_DEL_WORKER,
	S_PUT_STATUS,
	S_ACK_STATUS,
	S_DEL_STATUS,
	S_PUT_EXIT,
	S_DEL_EXITS_FOR,
	S_DEL_EXITS_ORPHANED,
	S_PUT_INTENT,
	S_DEL_INTENT,
	S_DEL_INTENTS_FOR,
	S_SET_META,
	S_DEL_META,
	S_PUT_EVENT,
	S_DEL_EVENTS_FOR,
	S_TRIM_EVENTS,
	S_PUT_RTOBJ,
	S_DEL_RTOBJ,
	S_DEL_RTOBJS_FOR,
	S_BEGIN,
	S_COMMIT,
	S_FREELIST, /* the checkpoint's: how many pages are free */
	S_WAL_RESTART,
	S_NSTMT
};

/* Before the first connection: no bulk page cache allocation per connection (20 pages at
 * once, in Debian's build), pages come one by one as they are used. Called by store_open. */
void store_config_once(void);
/* A new connection to the file: its page cache size (STORE_CACHE_KIB). */
void store_tune_conn(sqlite3 *);

struct stmt_def {
	const char *name; /* for messages */
	const char *sql;
	char        cls;  /* ops of one class on one key replace each other; 0: never */
	int         nkey; /* leading parameters that form the key */
	int         grow; /* 1-based parameter that only grows when two ops merge; 0: none */
	int         cap;  /* keep only the newest cap ops of this class in the journal; 0: all */
};

extern const struct stmt_def store_stmt_defs[S_NSTMT];
/* Every table, for the copy that reads see while degraded. */
extern const char *const store_tables[];
extern const size_t      store_ntables;

enum param_type { P_NULL = 0, P_INT, P_TEXT, P_BLOB };

struct param {
	enum param_type t;
	int64_t         i;
	char           *s; /* owned (text or blob) */
	size_t          n; /* blob length */
};

#define OP_MAXP 13

/* One journaled write: a statement and its (owned) parameters. */
struct op {
	enum stmt_id stmt;
	int          np;
	int          dead; /* replaced by a later op (compaction) */
	struct param p[OP_MAXP];
};

struct after_cb {
	store_done_fn fn;
	void         *arg;
};

struct store {
	sqlite3           *st_db;
	char              *st_path;
	struct event_base *st_base;
	struct event      *st_turn_ev;  /* LOOP_PRI_LOW: commit at the end of the turn */
	struct event      *st_retry_ev; /* retries the journal while degraded */
	sqlite3_stmt      *st_stmt[S_NSTMT];
	int                st_in_txn;
	int                st_turn_active;
	int                st_degraded;
	int                st_events_added; /* trim events before the next commit */
	int64_t            st_retry_ms;
	int64_t            st_failed_since;
	char              *st_last_error;
	uint64_t           st_commits;
	uint64_t           st_ckpt_commits; /* st_commits at the last full checkpoint */
	uint64_t           st_failures;
	/* Writes not yet committed, in order. */
	struct op *st_ops;
	size_t     st_nops;
	size_t     st_ops_cap;
	size_t     st_compact_at;
	/* after_commit callbacks waiting for the journal to be committed. */
	struct after_cb *st_cbs;
	size_t           st_ncbs;
	size_t           st_cbs_cap;
	int              st_running_cbs;
	/* The file could not be written at start (read-only file system or mode, disk full
	 * for a new file): st_db is a private in-memory copy of it, writes go to the copy and
	 * the journal, and the retry timer reopens the file and replays the journal. */
	int st_mem;
};

/* The result of running one journaled op. */
enum exec_result { EXEC_OK, EXEC_BAD_OP, EXEC_FAILED };

/* ---- store.c: the engine ---- */
/* Takes ownership of op: journals it and, unless degraded, runs it in this turn's
 * transaction. A NULL store frees it. */
void store_write(struct store *, struct op *);
/* Prepares a read (on the journal's overlay while degraded); binds uid when not NULL.
 * NULL on failure (logged) or for a NULL store. store_query_end finishes it: 0 when the
 * loop ran to the end or was stopped, -1 (logged) on a read error rc. */
sqlite3_stmt *store_query(struct store *, const char *sql, const char *uid);
int           store_query_end(struct store *, sqlite3_stmt *, int rc);

/* ---- journal.c: the ops of the journal ---- */
void store_param_text(struct param *, const char *s); /* NULL: SQL NULL */
void store_param_int(struct param *, int64_t v);
void store_param_blob(struct param *, const void *buf, size_t n);
void store_op_clear(struct op *);
void store_journal_clear(struct store *);
/* Frees the journal's slots when none is in use (the next write makes them again). */
void store_journal_release(struct store *);
void store_journal_compact(struct store *);
/* Binds op's parameters to s. Returns an SQLite code. */
int store_op_bind(sqlite3_stmt *, const struct op *);
/* The committed rows with the journal applied, in a private in-memory database (the
 * caller closes it), or NULL (logged). */
sqlite3 *store_overlay(struct store *);

/* ---- migrate.c: the schema and the checks of a file ---- */
void    store_set_error(char **errp, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
int     store_exec_sql(sqlite3 *, const char *sql);
int64_t store_pragma_int(sqlite3 *, const char *sql, int *rcp);
int     store_check_migrations(char **errp);
int     store_migrate(sqlite3 *, const char *path, int64_t from, char **errp);
/* Creates every table in an empty database (the overlay). SQLite code. */
int store_create_schema(sqlite3 *);
int store_check_file(sqlite3 *, const char *path, char **errp);
int store_setup_file(sqlite3 *, const char *path, char **why);

#endif
