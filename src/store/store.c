/* store.c — klet's state in SQLite: migrations, per-turn transactions, a journal that survives
 * failed commits, typed reads and writes (see src/store/store.h). */
#include <sys/stat.h>
#include <sys/types.h>

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <event2/event.h>
#include <sqlite3.h>

#include "core/log.h"
#include "core/loop.h"
#include "store/store.h"
#include "core/util.h"

/* The embedded migrations, in order: { "NNN-name", "sql" }. */
static const struct migration {
	const char *name;
	const char *sql;
} migrations[] = {
#include "store-schema.h"
};

#define STORE_BUSY_TIMEOUT_MS 100
#define STORE_RETRY_MIN_MS    250
#define STORE_RETRY_MAX_MS    5000
#define STORE_COMPACT_MIN     256     /* journal length that triggers a compaction */
#define STORE_VACUUM_PAGES    64      /* free pages that make a checkpoint vacuum */
#define STORE_WAL_AUTOCKPT    "10000" /* pages; a safety net: housekeeping checkpoints */

/* Cached write statements; an op names one of them. */
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
	S_NSTMT
};

static const struct stmt_def {
	const char *name; /* for messages */
	const char *sql;
	char        cls;  /* ops of one class on one key replace each other; 0: never */
	int         nkey; /* leading parameters that form the key */
} stmt_defs[S_NSTMT] = {
	[S_PUT_POD] = { "put pod",
	    "INSERT OR REPLACE INTO pods (uid, source, ns, name, doc, format,"
	    " updated_wall_ms) VALUES (?, ?, ?, ?, ?, ?, ?)",
	    'p', 1 },
	[S_DEL_POD] = { "del pod", "DELETE FROM pods WHERE uid = ?", 'p', 1 },
	[S_PUT_WORKER] = { "put worker",
	    "INSERT OR REPLACE INTO workers (uid, state, grace_seconds,"
	    " grace_deadline_wall_ms, step, last_error, failures,"
	    " next_retry_wall_ms, removed) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
	    'w', 1 },
	[S_DEL_WORKER] = { "del worker", "DELETE FROM workers WHERE uid = ?", 'w', 1 },
	[S_PUT_STATUS] = { "put status",
	    "INSERT INTO statuses (uid, version, json) VALUES (?, ?, ?)"
	    " ON CONFLICT (uid) DO UPDATE SET version = excluded.version,"
	    " json = excluded.json",
	    's', 1 },
	[S_ACK_STATUS] = { "ack status",
	    "INSERT INTO statuses (uid, acked_version) VALUES (?, ?)"
	    " ON CONFLICT (uid) DO UPDATE SET"
	    " acked_version = max(acked_version, excluded.acked_version)",
	    'a', 1 },
	[S_DEL_STATUS] = { "del status", "DELETE FROM statuses WHERE uid = ?", 's', 1 },
	[S_PUT_EXIT] = { "put exit",
	    "INSERT OR REPLACE INTO container_exits (container_id, uid, name,"
	    " restart_count, exit_code, reason, message, started_ns, finished_ns)"
	    " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
	    'x', 1 },
	[S_DEL_EXITS_FOR] = { "del exits for", "DELETE FROM container_exits WHERE uid = ?", 0, 0 },
	[S_PUT_INTENT] = { "put intent",
	    "INSERT OR REPLACE INTO intents (uid, kind, name, attempt,"
	    " created_wall_ms) VALUES (?, ?, ?, ?, ?)",
	    'i', 4 },
	[S_DEL_INTENT] = { "del intent",
	    "DELETE FROM intents WHERE uid = ? AND kind = ? AND name = ?"
	    " AND attempt = ?",
	    'i', 4 },
	[S_DEL_INTENTS_FOR] = { "del intents for", "DELETE FROM intents WHERE uid = ?", 0, 0 },
	[S_SET_META] = { "set meta", "INSERT OR REPLACE INTO meta (key, value) VALUES (?, ?)", 'm',
	    1 },
	[S_DEL_META] = { "del meta", "DELETE FROM meta WHERE key = ?", 'm', 1 },
	[S_PUT_EVENT] = { "put event",
	    "INSERT INTO events (uid, reason, message, wall_ms)"
	    " VALUES (?, ?, ?, ?)",
	    'e', 0 },
	[S_DEL_EVENTS_FOR] = { "del events for", "DELETE FROM events WHERE uid = ?", 0, 0 },
	[S_TRIM_EVENTS] = { "trim events",
	    "DELETE FROM events WHERE id <= (SELECT max(id) FROM events) - ?", 0, 0 },
	[S_PUT_RTOBJ] = { "put runtime object",
	    "INSERT OR REPLACE INTO runtime_objects (id, uid, sandbox, state, started_ns,"
	    " finished_ns, exit_code, reason, message, image_ref, ip, extra_ips, network_mode)"
	    " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
	    'o', 1 },
	[S_DEL_RTOBJ] = { "del runtime object", "DELETE FROM runtime_objects WHERE id = ?", 'o',
	    1 },
	[S_DEL_RTOBJS_FOR] = { "del runtime objects for",
	    "DELETE FROM runtime_objects WHERE uid = ?", 0, 0 },
	[S_BEGIN] = { "begin", "BEGIN IMMEDIATE", 0, 0 },
	[S_COMMIT] = { "commit", "COMMIT", 0, 0 },
};

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

static int  store_commit(struct store *);
static int  store_reopen_file(struct store *);
static int  store_replay(struct store *);
static void store_run_callbacks(struct store *);

int
store_schema_version(void)
{
	return (int)nitems(migrations);
}

/* ---- small helpers ---- */

static void store_set_error(char **errp, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

static void
store_set_error(char **errp, const char *fmt, ...)
{
	va_list ap;
	char   *msg;

	va_start(ap, fmt);
	if (vasprintf(&msg, fmt, ap) == -1)
		fatalx("%s: out of memory", __func__);
	va_end(ap);
	if (errp != NULL) {
		free(*errp);
		*errp = msg;
	} else
		free(msg);
}

static sqlite3_stmt *
store_stmt(struct store *st, enum stmt_id id)
{
	if (st->st_stmt[id] == NULL &&
	    sqlite3_prepare_v3(st->st_db, stmt_defs[id].sql, -1, SQLITE_PREPARE_PERSISTENT,
	        &st->st_stmt[id], NULL) != SQLITE_OK) {
		/* Our SQL against our schema: only out of memory or a broken file gets here. */
		log_error(
		    "%s: prepare %s: %s", __func__, stmt_defs[id].name, sqlite3_errmsg(st->st_db));
		return NULL;
	}
	return st->st_stmt[id];
}

static void
param_text(struct param *p, const char *s)
{
	if (s == NULL) {
		p->t = P_NULL;
		return;
	}
	p->t = P_TEXT;
	p->s = xstrdup(s);
}

static void
param_int(struct param *p, int64_t v)
{
	p->t = P_INT;
	p->i = v;
}

static void
param_blob(struct param *p, const void *buf, size_t n)
{
	p->t = P_BLOB;
	p->s = xmalloc(n + 1);
	if (n > 0)
		memcpy(p->s, buf, n);
	p->n = n;
}

static void
op_clear(struct op *op)
{
	int i;

	for (i = 0; i < op->np; i++)
		free(op->p[i].s);
	memset(op, 0, sizeof(*op));
}

static void
journal_clear(struct store *st)
{
	size_t i;

	for (i = 0; i < st->st_nops; i++)
		op_clear(&st->st_ops[i]);
	st->st_nops = 0;
	st->st_compact_at = STORE_COMPACT_MIN;
}

static int
param_eq(const struct param *a, const struct param *b)
{
	if (a->t != b->t)
		return 0;
	switch (a->t) {
	case P_NULL:
		return 1;
	case P_INT:
		return a->i == b->i;
	case P_TEXT:
		return strcmp(a->s, b->s) == 0;
	case P_BLOB:
		return a->n == b->n && memcmp(a->s, b->s, a->n) == 0;
	}
	return 0;
}

static uint64_t
op_key_hash(const struct op *op)
{
	const struct stmt_def *d = &stmt_defs[op->stmt];
	uint64_t               h = fnv64(FNV64_INIT, &d->cls, 1);
	int                    i;

	for (i = 0; i < d->nkey; i++) {
		const struct param *p = &op->p[i];

		if (p->t == P_INT)
			h = fnv64(h, &p->i, sizeof(p->i));
		else if (p->t == P_TEXT)
			h = fnv64(h, p->s, strlen(p->s) + 1);
	}
	return h;
}

static int
op_same_key(const struct op *a, const struct op *b)
{
	const struct stmt_def *da = &stmt_defs[a->stmt], *db = &stmt_defs[b->stmt];
	int                    i;

	if (da->cls == 0 || da->cls != db->cls || da->nkey == 0)
		return 0;
	for (i = 0; i < da->nkey; i++)
		if (!param_eq(&a->p[i], &b->p[i]))
			return 0;
	return 1;
}

/* Drops journaled writes that a later write to the same row replaces, and events beyond
 * the newest STORE_MAX_EVENTS, so a long outage keeps the journal bounded by the live rows. */
static void
journal_compact(struct store *st)
{
	size_t  cap = 1, i, j, n, kept = 0, events = 0;
	size_t *slot;

	while (cap < st->st_nops * 2)
		cap <<= 1;
	slot = xcalloc(cap, sizeof(*slot)); /* op index + 1; 0 = empty */
	for (i = st->st_nops; i-- > 0;) {
		struct op             *op = &st->st_ops[i];
		const struct stmt_def *d = &stmt_defs[op->stmt];

		if (d->cls == 'e') {
			if (++events > STORE_MAX_EVENTS)
				op->dead = 1;
			continue;
		}
		if (d->cls == 0 || d->nkey == 0)
			continue;
		for (j = op_key_hash(op) & (cap - 1);; j = (j + 1) & (cap - 1)) {
			if (slot[j] == 0) {
				slot[j] = i + 1;
				break;
			}
			struct op *later = &st->st_ops[slot[j] - 1];

			if (op_same_key(later, op)) {
				/* Acks only grow (a pod UID never comes back once forgotten). */
				if (op->stmt == S_ACK_STATUS && op->p[1].i > later->p[1].i)
					later->p[1].i = op->p[1].i;
				op->dead = 1;
				break;
			}
		}
	}
	free(slot);
	for (i = 0, n = 0; i < st->st_nops; i++) {
		if (st->st_ops[i].dead) {
			op_clear(&st->st_ops[i]);
			continue;
		}
		if (n != i)
			st->st_ops[n] = st->st_ops[i];
		n++;
		kept++;
	}
	log_v(2, "store: journal compacted from %zu to %zu writes", st->st_nops, kept);
	st->st_nops = n;
	st->st_compact_at = n * 2 > STORE_COMPACT_MIN ? n * 2 : STORE_COMPACT_MIN;
}

/* Binds op's parameters to s. Returns an SQLite code. */
static int
op_bind(sqlite3_stmt *s, const struct op *op)
{
	int i, rc = SQLITE_OK;

	for (i = 0; i < op->np && rc == SQLITE_OK; i++) {
		const struct param *p = &op->p[i];

		switch (p->t) {
		case P_NULL:
			rc = sqlite3_bind_null(s, i + 1);
			break;
		case P_INT:
			rc = sqlite3_bind_int64(s, i + 1, p->i);
			break;
		case P_TEXT:
			rc = sqlite3_bind_text(s, i + 1, p->s, -1, SQLITE_STATIC);
			break;
		case P_BLOB:
			rc = sqlite3_bind_blob64(s, i + 1, p->s, p->n, SQLITE_STATIC);
			break;
		}
	}
	return rc;
}

/* Binds op's parameters to its cached statement; returns the statement or NULL. */
static sqlite3_stmt *
store_bind(struct store *st, const struct op *op)
{
	sqlite3_stmt *s = store_stmt(st, op->stmt);

	if (s == NULL)
		return NULL;
	sqlite3_reset(s);
	sqlite3_clear_bindings(s);
	if (op_bind(s, op) != SQLITE_OK) {
		log_error("%s: bind: %s", __func__, sqlite3_errmsg(st->st_db));
		return NULL;
	}
	return s;
}

/* Runs one statement without parameters (or with one integer when arg >= 0).
 * Returns the SQLite result code (SQLITE_DONE on success). */
static int
store_step_simple(struct store *st, enum stmt_id id, int64_t arg)
{
	sqlite3_stmt *s = store_stmt(st, id);
	int           rc;

	if (s == NULL)
		return SQLITE_ERROR;
	sqlite3_reset(s);
	if (arg >= 0)
		sqlite3_bind_int64(s, 1, arg);
	rc = sqlite3_step(s);
	sqlite3_reset(s);
	return rc;
}

/* The result of running one journaled op. */
enum exec_result { EXEC_OK, EXEC_BAD_OP, EXEC_FAILED };

static enum exec_result
store_exec_op(struct store *st, const struct op *op)
{
	sqlite3_stmt *s = store_bind(st, op);
	int           rc;

	if (s == NULL)
		return EXEC_FAILED;
	rc = sqlite3_step(s);
	sqlite3_reset(s);
	sqlite3_clear_bindings(s);
	if (rc == SQLITE_DONE) {
		if (op->stmt == S_PUT_EVENT)
			st->st_events_added = 1;
		return EXEC_OK;
	}
	switch (rc & 0xff) {
	case SQLITE_CONSTRAINT:
	case SQLITE_MISMATCH:
	case SQLITE_TOOBIG:
	case SQLITE_RANGE:
		/* The write itself is wrong (a caller's bug): retrying it would wedge the store. */
		log_error("store: write dropped: %s: %s", stmt_defs[op->stmt].name,
		    sqlite3_errmsg(st->st_db));
		return EXEC_BAD_OP;
	default:
		return EXEC_FAILED;
	}
}

static void
store_arm_retry(struct store *st)
{
	struct timeval tv;

	if (st->st_retry_ev == NULL || evtimer_pending(st->st_retry_ev, NULL))
		return;
	tv = ms_to_tv(st->st_retry_ms);
	evtimer_add(st->st_retry_ev, &tv);
	st->st_retry_ms *= 2;
	if (st->st_retry_ms > STORE_RETRY_MAX_MS)
		st->st_retry_ms = STORE_RETRY_MAX_MS;
}

/* A write or commit failed: roll back, keep the journal, go degraded and retry later. */
static void
store_fail(struct store *st, const char *what)
{
	int   code = sqlite3_extended_errcode(st->st_db);
	char *msg = xsprintf("%s: %s (code %d)", what, sqlite3_errmsg(st->st_db), code);

	if (!sqlite3_get_autocommit(st->st_db))
		sqlite3_exec(st->st_db, "ROLLBACK", NULL, NULL, NULL);
	st->st_in_txn = 0;
	st->st_events_added = 0;
	st->st_failures++;
	if (!st->st_degraded) {
		log_error("store %s: %s; degraded: %zu writes kept in memory, retrying",
		    st->st_path, msg, st->st_nops);
		st->st_degraded = 1;
		st->st_failed_since = now_wall_ms();
		st->st_retry_ms = STORE_RETRY_MIN_MS;
	} else
		log_v(2, "store %s: still failing: %s; %zu writes kept", st->st_path, msg,
		    st->st_nops);
	free(st->st_last_error);
	st->st_last_error = msg;
	store_arm_retry(st);
}

static void
store_recovered(struct store *st)
{
	if (!st->st_degraded)
		return;
	log_info("store %s: commits work again after %llu failures; health ok", st->st_path,
	    (unsigned long long)st->st_failures);
	st->st_degraded = 0;
	st->st_failed_since = 0;
	st->st_retry_ms = STORE_RETRY_MIN_MS;
	if (st->st_retry_ev != NULL)
		evtimer_del(st->st_retry_ev);
}

static void
store_schedule_turn_end(struct store *st)
{
	if (st->st_turn_ev == NULL || st->st_turn_active)
		return;
	st->st_turn_active = 1;
	event_active(st->st_turn_ev, 0, 0);
}

static int
store_begin(struct store *st)
{
	if (st->st_in_txn)
		return 0;
	if (store_step_simple(st, S_BEGIN, -1) != SQLITE_DONE) {
		store_fail(st, "BEGIN");
		return -1;
	}
	st->st_in_txn = 1;
	return 0;
}

/* Takes ownership of op: journals it and, unless degraded, runs it in this turn's
 * transaction. */
static void
store_write(struct store *st, struct op *op)
{
	struct op *j;

	if (st == NULL) {
		op_clear(op);
		return;
	}
	if (st->st_nops == st->st_ops_cap) {
		st->st_ops_cap = st->st_ops_cap ? st->st_ops_cap * 2 : 64;
		st->st_ops = xreallocarray(st->st_ops, st->st_ops_cap, sizeof(*st->st_ops));
	}
	j = &st->st_ops[st->st_nops++];
	*j = *op;
	memset(op, 0, sizeof(*op));
	if (st->st_degraded) {
		/* From memory: the copy takes the write too, so that reads see it. */
		if (st->st_mem && store_exec_op(st, j) == EXEC_BAD_OP) {
			op_clear(j);
			st->st_nops--;
		}
		if (st->st_nops >= st->st_compact_at)
			journal_compact(st);
		return;
	}
	if (store_begin(st) == -1)
		return;
	switch (store_exec_op(st, j)) {
	case EXEC_OK:
		break;
	case EXEC_BAD_OP:
		op_clear(j);
		st->st_nops--;
		break;
	case EXEC_FAILED:
		store_fail(st, stmt_defs[j->stmt].name);
		return;
	}
	if (st->st_nops >= st->st_compact_at)
		journal_compact(st);
	store_schedule_turn_end(st);
}

/* Commits the open transaction. 0 on success (the journal is then empty). */
static int
store_commit(struct store *st)
{
	if (!st->st_in_txn)
		return 0;
	if (st->st_events_added &&
	    store_step_simple(st, S_TRIM_EVENTS, STORE_MAX_EVENTS) != SQLITE_DONE) {
		store_fail(st, "trim events");
		return -1;
	}
	if (store_step_simple(st, S_COMMIT, -1) != SQLITE_DONE) {
		store_fail(st, "COMMIT");
		return -1;
	}
	st->st_in_txn = 0;
	st->st_events_added = 0;
	st->st_commits++;
	journal_clear(st);
	return 0;
}

/* Replays the whole journal in one new transaction and commits it. */
static int
store_replay(struct store *st)
{
	size_t i;

	if (st->st_mem && store_reopen_file(st) == -1) {
		store_arm_retry(st);
		return -1;
	}
	if (st->st_in_txn)
		return store_commit(st);
	if (st->st_nops == 0) {
		store_recovered(st);
		return 0;
	}
	/* A ROLLBACK that failed (out of memory) may have left a transaction open. */
	if (!sqlite3_get_autocommit(st->st_db))
		sqlite3_exec(st->st_db, "ROLLBACK", NULL, NULL, NULL);
	if (store_step_simple(st, S_BEGIN, -1) != SQLITE_DONE) {
		store_fail(st, "BEGIN");
		return -1;
	}
	st->st_in_txn = 1;
	for (i = 0; i < st->st_nops; i++) {
		struct op *op = &st->st_ops[i];

		switch (store_exec_op(st, op)) {
		case EXEC_OK:
		case EXEC_BAD_OP: /* dropped (logged); the rest still commits */
			break;
		case EXEC_FAILED:
			store_fail(st, stmt_defs[op->stmt].name);
			return -1;
		}
	}
	if (store_commit(st) == -1)
		return -1;
	store_recovered(st);
	return 0;
}

static void
store_run_callbacks(struct store *st)
{
	struct after_cb *cbs;
	size_t           i, n;

	if (st->st_running_cbs)
		return;
	while (st->st_ncbs > 0 && !st->st_in_txn && !st->st_degraded && st->st_nops == 0) {
		/* Detach: callbacks may write and queue more (those wait for the next commit). */
		cbs = st->st_cbs;
		n = st->st_ncbs;
		st->st_cbs = NULL;
		st->st_ncbs = st->st_cbs_cap = 0;
		st->st_running_cbs = 1;
		for (i = 0; i < n; i++)
			cbs[i].fn(cbs[i].arg);
		st->st_running_cbs = 0;
		free(cbs);
	}
}

static void
store_turn_end_cb(evutil_socket_t fd, short what, void *arg)
{
	struct store *st = arg;

	(void)fd;
	(void)what;
	st->st_turn_active = 0;
	if (!st->st_degraded)
		store_commit(st);
	store_run_callbacks(st);
	/* Callbacks that wrote opened a new transaction and scheduled another turn end. */
}

static void
store_retry_cb(evutil_socket_t fd, short what, void *arg)
{
	struct store *st = arg;

	(void)fd;
	(void)what;
	if (store_replay(st) == 0)
		store_run_callbacks(st);
}

/* ---- open, migrate, close ---- */

static int
store_exec_sql(sqlite3 *db, const char *sql)
{
	return sqlite3_exec(db, sql, NULL, NULL, NULL);
}

/* Reads an integer pragma; -1 with the SQLite code in *rcp on failure. */
static int64_t
store_pragma_int(sqlite3 *db, const char *sql, int *rcp)
{
	sqlite3_stmt *s = NULL;
	int64_t       v = -1;
	int           rc;

	rc = sqlite3_prepare_v2(db, sql, -1, &s, NULL);
	if (rc == SQLITE_OK) {
		rc = sqlite3_step(s);
		if (rc == SQLITE_ROW) {
			v = sqlite3_column_int64(s, 0);
			rc = SQLITE_OK;
		}
	}
	sqlite3_finalize(s);
	*rcp = rc;
	return v;
}

/* Runs PRAGMA quick_check; 0 when the file is sound, else -1 with *why set. */
static int
store_quick_check(sqlite3 *db, char **why)
{
	sqlite3_stmt *s = NULL;
	const char   *res;
	int           rc;

	rc = sqlite3_prepare_v2(db, "PRAGMA quick_check(1)", -1, &s, NULL);
	if (rc == SQLITE_OK && (rc = sqlite3_step(s)) == SQLITE_ROW) {
		res = (const char *)sqlite3_column_text(s, 0);
		if (res != NULL && strcmp(res, "ok") == 0) {
			sqlite3_finalize(s);
			return 0;
		}
		*why = xstrdup(res != NULL ? res : "quick_check failed");
	} else
		*why = xstrdup(sqlite3_errmsg(db));
	sqlite3_finalize(s);
	return -1;
}

static int
store_migrate(sqlite3 *db, const char *path, int64_t from, char **errp)
{
	char  *sql;
	size_t i;

	if (from == (int64_t)nitems(migrations))
		return 0;
	if (store_exec_sql(db, "BEGIN IMMEDIATE") != SQLITE_OK) {
		store_set_error(
		    errp, "%s: cannot start the migration: %s", path, sqlite3_errmsg(db));
		return -1;
	}
	for (i = (size_t)from; i < nitems(migrations); i++) {
		if (store_exec_sql(db, migrations[i].sql) != SQLITE_OK) {
			store_set_error(errp, "%s: migration %s failed: %s", path,
			    migrations[i].name, sqlite3_errmsg(db));
			store_exec_sql(db, "ROLLBACK");
			return -1;
		}
		log_info("store %s: applied migration %s", path, migrations[i].name);
	}
	sql = xsprintf("PRAGMA user_version = %zu", nitems(migrations));
	if (store_exec_sql(db, sql) != SQLITE_OK || store_exec_sql(db, "COMMIT") != SQLITE_OK) {
		store_set_error(
		    errp, "%s: cannot commit the migrations: %s", path, sqlite3_errmsg(db));
		store_exec_sql(db, "ROLLBACK");
		free(sql);
		return -1;
	}
	free(sql);
	return 0;
}

/* The checks before anything is written: the file is ours (or empty), not from a newer
 * kletd, and sound. 0, or -1 with *errp set. */
static int
store_check_file(sqlite3 *db, const char *path, char **errp)
{
	char   *why = NULL;
	int64_t uv;
	int     rc;

	uv = store_pragma_int(db, "PRAGMA user_version", &rc);
	if (uv < 0) {
		store_set_error(errp, "%s: not a usable SQLite database (%s); refusing to touch it",
		    path, sqlite3_errstr(rc));
		return -1;
	}
	if (uv > (int64_t)nitems(migrations)) {
		store_set_error(errp,
		    "%s: database schema version %lld is newer than this "
		    "kletd's (%zu); refusing to touch it (use a newer kletd)",
		    path, (long long)uv, nitems(migrations));
		return -1;
	}
	/* Version 0 with tables: some other program's database, not an empty one. */
	if (uv == 0 && store_pragma_int(db, "SELECT count(*) FROM sqlite_master", &rc) != 0) {
		store_set_error(errp,
		    "%s: an SQLite database without a klet schema version; "
		    "refusing to touch it",
		    path);
		return -1;
	}
	if (store_quick_check(db, &why) == -1) {
		store_set_error(errp,
		    "%s: database is corrupt (quick_check: %s); refusing to "
		    "touch it",
		    path, why);
		free(why);
		return -1;
	}
	return 0;
}

/* Makes a checked, writable file ready: mode 0600, auto_vacuum for a new file, WAL, the
 * migrations. Returns 0, or the SQLite code with *why set (caller frees). */
static int
store_setup_file(sqlite3 *db, const char *path, char **why)
{
	char   *err = NULL;
	int64_t uv;
	int     rc;

	if (chmod(path, 0600) == -1)
		log_warn("%s: chmod 0600", path);
	uv = store_pragma_int(db, "PRAGMA user_version", &rc);
	/* A new file: free pages can be given back (store_checkpoint); only possible before
	 * the first table exists. */
	if (rc == SQLITE_OK && uv == 0 &&
	    store_exec_sql(db, "PRAGMA auto_vacuum = INCREMENTAL") != SQLITE_OK) {
		*why = xsprintf("cannot set auto_vacuum: %s", sqlite3_errmsg(db));
		return sqlite3_extended_errcode(db);
	}
	store_pragma_int(db, "PRAGMA journal_mode = WAL", &rc);
	if (rc != SQLITE_OK || store_exec_sql(db, "PRAGMA synchronous = NORMAL") != SQLITE_OK ||
	    store_exec_sql(db, "PRAGMA wal_autocheckpoint = " STORE_WAL_AUTOCKPT) != SQLITE_OK ||
	    store_exec_sql(db, "PRAGMA journal_size_limit = 2097152") != SQLITE_OK) {
		*why = xsprintf("cannot set up WAL: %s", sqlite3_errmsg(db));
		return sqlite3_extended_errcode(db) != SQLITE_OK ? sqlite3_extended_errcode(db)
		                                                 : SQLITE_ERROR;
	}
	uv = store_pragma_int(db, "PRAGMA user_version", &rc);
	if (rc != SQLITE_OK || store_migrate(db, path, uv, &err) == -1) {
		*why = err != NULL ? err : xsprintf("%s", sqlite3_errmsg(db));
		return sqlite3_extended_errcode(db) != SQLITE_OK ? sqlite3_extended_errcode(db)
		                                                 : SQLITE_ERROR;
	}
	return SQLITE_OK;
}

/* A failure that the file system may stop having: the store then starts from memory. */
static int
store_transient(int code)
{
	switch (code & 0xff) {
	case SQLITE_FULL:
	case SQLITE_READONLY:
	case SQLITE_IOERR:
	case SQLITE_CANTOPEN:
	case SQLITE_BUSY:
	case SQLITE_PERM:
		return 1;
	}
	return 0;
}

/* Switches to a private in-memory copy of the (checked) file, or of nothing when there is
 * no file, migrated, degraded; the retry timer reopens the file. 0, or -1 with *errp. */
static int
store_to_memory(struct store *st, const char *why, char **errp)
{
	sqlite3_backup *b;
	sqlite3        *m = NULL;
	char           *err = NULL;
	int64_t         uv;
	int             rc;

	if (sqlite3_open_v2(":memory:", &m,
	        SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_NOMUTEX,
	        NULL) != SQLITE_OK) {
		store_set_error(errp, "%s: %s, and no memory for a copy", st->st_path, why);
		sqlite3_close(m);
		return -1;
	}
	if (st->st_db != NULL) {
		b = sqlite3_backup_init(m, "main", st->st_db, "main");
		rc = b != NULL ? sqlite3_backup_step(b, -1) : SQLITE_ERROR;
		sqlite3_backup_finish(b);
		if (rc != SQLITE_DONE) {
			store_set_error(errp, "%s: %s, and it cannot be read into memory: %s",
			    st->st_path, why, sqlite3_errmsg(m));
			sqlite3_close(m);
			return -1;
		}
		sqlite3_close_v2(st->st_db);
	}
	st->st_db = m;
	sqlite3_extended_result_codes(m, 1);
	uv = store_pragma_int(m, "PRAGMA user_version", &rc);
	if (rc != SQLITE_OK || store_migrate(m, st->st_path, uv, &err) == -1) {
		store_set_error(errp, "%s: %s, and its copy cannot be migrated: %s", st->st_path,
		    why, err != NULL ? err : sqlite3_errmsg(m));
		free(err);
		return -1;
	}
	st->st_mem = 1;
	st->st_degraded = 1;
	st->st_failures++;
	st->st_failed_since = now_wall_ms();
	free(st->st_last_error);
	st->st_last_error = xsprintf("cannot write the file (%s): running from a copy in "
	                             "memory",
	    why);
	log_error("store %s: cannot write the file (%s); running from a copy in memory, "
	          "degraded, and retrying",
	    st->st_path, why);
	return 0;
}

/* The retry of a store running from memory: the file, writable now, checked and set up,
 * becomes the store again (the journal is replayed on it next). 0, or -1 (still not). */
static int
store_reopen_file(struct store *st)
{
	static const char *const sfx[] = { "-wal", "-shm" };
	sqlite3                 *db = NULL;
	char                    *why = NULL, *side;
	size_t                   i;
	int                      fd;

	/* A read-only open made the WAL files with the file's mode then: not writable now. */
	for (i = 0; i < nitems(sfx); i++) {
		side = xsprintf("%s%s", st->st_path, sfx[i]);
		if (access(side, F_OK) == 0 && access(side, W_OK) == -1 &&
		    access(st->st_path, W_OK) == 0 && chmod(side, 0600) == -1)
			log_v(2, "store %s: chmod %s: %s", st->st_path, side, strerror(errno));
		free(side);
	}
	if (access(st->st_path, F_OK) == -1) {
		fd = open(st->st_path, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
		if (fd == -1) {
			why = xsprintf("cannot create: %s", strerror(errno));
			goto fail;
		}
		close(fd);
	}
	if (sqlite3_open_v2(st->st_path, &db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_NOMUTEX, NULL) !=
	        SQLITE_OK ||
	    sqlite3_db_readonly(db, "main") == 1) {
		why = xsprintf("still read-only: %s", db != NULL ? sqlite3_errmsg(db) : "?");
		goto fail;
	}
	sqlite3_extended_result_codes(db, 1);
	sqlite3_busy_timeout(db, STORE_BUSY_TIMEOUT_MS);
	if (store_check_file(db, st->st_path, &why) == -1 ||
	    store_setup_file(db, st->st_path, &why) != SQLITE_OK)
		goto fail;
	for (i = 0; i < S_NSTMT; i++) {
		sqlite3_finalize(st->st_stmt[i]);
		st->st_stmt[i] = NULL;
	}
	sqlite3_close_v2(st->st_db);
	st->st_db = db;
	st->st_mem = 0;
	st->st_in_txn = 0;
	log_info("store %s: the file can be written again; replaying %zu writes", st->st_path,
	    st->st_nops);
	return 0;
fail:
	log_v(2, "store %s: still running from memory: %s", st->st_path, why ? why : "?");
	free(st->st_last_error);
	st->st_last_error = xsprintf("running from a copy in memory: %s", why ? why : "?");
	free(why);
	st->st_failures++;
	sqlite3_close_v2(db);
	return -1;
}

/* The embedded list must be 001, 002, ... in order: a build mistake otherwise. */
static int
store_check_migrations(char **errp)
{
	size_t i;

	for (i = 0; i < nitems(migrations); i++) {
		const char *n = migrations[i].name;
		char       *end;
		long        v = strtol(n, &end, 10);

		if (end == n || *end != '-' || v != (long)i + 1) {
			store_set_error(
			    errp, "schema: migration %s is out of order (want %03zu-*)", n, i + 1);
			return -1;
		}
	}
	return 0;
}

struct store *
store_open(struct event_base *base, const char *path, char **errp)
{
	struct store *st;
	struct stat   sb;
	char         *why = NULL;
	int           rc, fd, pri, nofile = 0;

	if (errp != NULL)
		*errp = NULL;
	if (store_check_migrations(errp) == -1)
		return NULL;
	if (stat(path, &sb) == 0) {
		if (!S_ISREG(sb.st_mode)) {
			store_set_error(errp, "%s: not a regular file", path);
			return NULL;
		}
	} else if (errno == ENOENT) {
		/* Created here so that the mode is 0600 whatever the umask. */
		fd = open(path, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
		if (fd == -1 && errno != EROFS && errno != ENOSPC && errno != EDQUOT) {
			store_set_error(errp, "%s: cannot create: %s", path, strerror(errno));
			return NULL;
		}
		if (fd == -1)
			nofile = errno; /* read-only or full file system: from memory for now */
		else
			close(fd);
	} else {
		store_set_error(errp, "%s: %s", path, strerror(errno));
		return NULL;
	}

	st = xcalloc(1, sizeof(*st));
	st->st_path = xstrdup(path);
	st->st_base = base;
	st->st_retry_ms = STORE_RETRY_MIN_MS;
	st->st_compact_at = STORE_COMPACT_MIN;
	if (nofile != 0) {
		why = xsprintf("cannot create it: %s", strerror(nofile));
		rc = store_to_memory(st, why, errp);
		free(why);
		if (rc == -1)
			goto fail;
		goto events;
	}
	rc = sqlite3_open_v2(path, &st->st_db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_NOMUTEX, NULL);
	if (rc != SQLITE_OK) {
		store_set_error(errp, "%s: cannot open: %s", path,
		    st->st_db ? sqlite3_errmsg(st->st_db) : sqlite3_errstr(rc));
		goto fail;
	}
	sqlite3_extended_result_codes(st->st_db, 1);
	sqlite3_busy_timeout(st->st_db, STORE_BUSY_TIMEOUT_MS);
	/* Checks first: nothing is written until the file is known to be ours and sound. */
	if (store_check_file(st->st_db, path, errp) == -1)
		goto fail;
	/* SQLite falls back to read-only when it cannot write the file; a full disk fails the
	 * set-up of a new one. Either way the pods must not wait for the disk: run from a
	 * copy in memory, degraded, until the file can be written. */
	why = NULL;
	if (sqlite3_db_readonly(st->st_db, "main") == 1)
		rc = SQLITE_READONLY;
	else
		rc = store_setup_file(st->st_db, path, &why);
	if (rc != SQLITE_OK) {
		if (!store_transient(rc)) {
			store_set_error(errp, "%s: %s", path, why != NULL ? why : "cannot set up");
			free(why);
			goto fail;
		}
		rc = store_to_memory(st, why != NULL ? why : "the file is read-only", errp);
		free(why);
		if (rc == -1)
			goto fail;
	}
events:
	if (base != NULL) {
		pri = event_base_get_npriorities(base) - 1;
		if (pri > LOOP_PRI_LOW)
			pri = LOOP_PRI_LOW;
		st->st_turn_ev = event_new(base, -1, 0, store_turn_end_cb, st);
		st->st_retry_ev = evtimer_new(base, store_retry_cb, st);
		if (st->st_turn_ev == NULL || st->st_retry_ev == NULL)
			fatalx("%s: event_new failed", __func__);
		event_priority_set(st->st_turn_ev, pri);
		event_priority_set(st->st_retry_ev, pri);
		if (st->st_mem)
			store_arm_retry(st);
	}
	log_info("store %s: open, schema version %zu", path, nitems(migrations));
	return st;
fail:
	if (st->st_db != NULL)
		sqlite3_close_v2(st->st_db);
	free(st->st_path);
	free(st);
	return NULL;
}

int
store_flush(struct store *st)
{
	int rc;

	if (st == NULL)
		return 0;
	if (st->st_degraded)
		rc = store_replay(st);
	else
		rc = store_commit(st);
	if (rc == 0)
		store_run_callbacks(st);
	return st->st_degraded || st->st_nops > 0 ? -1 : 0;
}

int
store_commit_now(struct store *st)
{
	if (st == NULL)
		return 0;
	if (!st->st_degraded)
		store_commit(st);
	return st->st_degraded || st->st_nops > 0 ? -1 : 0;
}

void
store_close(struct store *st)
{
	size_t i;
	int    rc, round;

	if (st == NULL)
		return;
	rc = store_flush(st);
	/* Callbacks run by the flush may have written (and queued) more. */
	for (round = 0; !st->st_degraded && (st->st_in_txn || st->st_ncbs > 0) && round < 8;
	     round++)
		rc = store_flush(st);
	if (rc == -1 || st->st_nops > 0)
		log_error("store %s: closing with %zu writes not committed: %s", st->st_path,
		    st->st_nops, st->st_last_error ? st->st_last_error : "?");
	if (st->st_in_txn)
		sqlite3_exec(st->st_db, "ROLLBACK", NULL, NULL, NULL);
	if (st->st_turn_ev != NULL)
		event_free(st->st_turn_ev);
	if (st->st_retry_ev != NULL)
		event_free(st->st_retry_ev);
	for (i = 0; i < S_NSTMT; i++)
		sqlite3_finalize(st->st_stmt[i]);
	if (sqlite3_close(st->st_db) != SQLITE_OK)
		log_error("store %s: close: %s", st->st_path, sqlite3_errmsg(st->st_db));
	journal_clear(st);
	free(st->st_ops);
	free(st->st_cbs);
	free(st->st_last_error);
	free(st->st_path);
	free(st);
}

void
store_after_commit(struct store *st, store_done_fn fn, void *arg)
{
	if (st->st_ncbs == st->st_cbs_cap) {
		st->st_cbs_cap = st->st_cbs_cap ? st->st_cbs_cap * 2 : 16;
		st->st_cbs = xreallocarray(st->st_cbs, st->st_cbs_cap, sizeof(*st->st_cbs));
	}
	st->st_cbs[st->st_ncbs].fn = fn;
	st->st_cbs[st->st_ncbs].arg = arg;
	st->st_ncbs++;
	store_schedule_turn_end(st);
}

/* ---- typed writes ---- */

static int
store_valid(const char *what, const char *v, const char *const *allowed)
{
	if (v != NULL)
		for (; *allowed != NULL; allowed++)
			if (strcmp(v, *allowed) == 0)
				return 1;
	log_error("store: %s %s%s%s is not valid; write dropped", what, v ? "\"" : "",
	    v ? v : "(null)", v ? "\"" : "");
	return 0;
}

static int
store_valid_key(const char *fn, const char *what, const char *v)
{
	if (v != NULL && *v != '\0')
		return 1;
	log_error("store: %s: empty %s; write dropped", fn, what);
	return 0;
}

void
store_put_pod(struct store *st, const struct store_pod *p)
{
	static const char *const sources[] = { "file", "api", NULL };
	static const char *const formats[] = { "json", "yaml", NULL };
	struct op                op = { .stmt = S_PUT_POD, .np = 7 };

	if (!store_valid_key(__func__, "uid", p->uid) ||
	    !store_valid("source", p->source, sources) ||
	    !store_valid("format", p->format, formats))
		return;
	param_text(&op.p[0], p->uid);
	param_text(&op.p[1], p->source);
	param_text(&op.p[2], p->ns ? p->ns : "");
	param_text(&op.p[3], p->name ? p->name : "");
	param_blob(&op.p[4], p->doc, p->doc != NULL ? p->doc_len : 0);
	param_text(&op.p[5], p->format);
	param_int(&op.p[6], p->updated_wall_ms);
	store_write(st, &op);
}

/* Writes a statement whose only parameter is a string key. */
static void
store_write_key(struct store *st, enum stmt_id id, const char *key)
{
	struct op op = { .stmt = id, .np = 1 };

	if (!store_valid_key(stmt_defs[id].name, "key", key))
		return;
	param_text(&op.p[0], key);
	store_write(st, &op);
}

void
store_del_pod(struct store *st, const char *uid)
{
	store_write_key(st, S_DEL_POD, uid);
}

void
store_put_worker(struct store *st, const struct store_worker *w)
{
	static const char *const states[] = { "sync", "terminating", "terminated", "finished",
		NULL };
	struct op                op = { .stmt = S_PUT_WORKER, .np = 9 };

	if (!store_valid_key(__func__, "uid", w->uid) ||
	    !store_valid("worker state", w->state, states))
		return;
	param_text(&op.p[0], w->uid);
	param_text(&op.p[1], w->state);
	param_int(&op.p[2], w->grace_seconds);
	param_int(&op.p[3], w->grace_deadline_wall_ms);
	param_text(&op.p[4], w->step);
	param_text(&op.p[5], w->last_error);
	param_int(&op.p[6], w->failures);
	param_int(&op.p[7], w->next_retry_wall_ms);
	param_int(&op.p[8], w->removed != 0);
	store_write(st, &op);
}

void
store_del_worker(struct store *st, const char *uid)
{
	store_write_key(st, S_DEL_WORKER, uid);
}

void
store_put_status(struct store *st, const char *uid, int64_t version, const char *json)
{
	struct op op = { .stmt = S_PUT_STATUS, .np = 3 };

	if (!store_valid_key(__func__, "uid", uid))
		return;
	param_text(&op.p[0], uid);
	param_int(&op.p[1], version);
	param_text(&op.p[2], json);
	store_write(st, &op);
}

void
store_ack_status(struct store *st, const char *uid, int64_t version)
{
	struct op op = { .stmt = S_ACK_STATUS, .np = 2 };

	if (!store_valid_key(__func__, "uid", uid))
		return;
	param_text(&op.p[0], uid);
	param_int(&op.p[1], version);
	store_write(st, &op);
}

void
store_put_exit(struct store *st, const struct store_exit *x)
{
	struct op op = { .stmt = S_PUT_EXIT, .np = 9 };

	if (!store_valid_key(__func__, "container_id", x->container_id) ||
	    !store_valid_key(__func__, "uid", x->uid))
		return;
	param_text(&op.p[0], x->container_id);
	param_text(&op.p[1], x->uid);
	param_text(&op.p[2], x->name ? x->name : "");
	param_int(&op.p[3], x->restart_count);
	param_int(&op.p[4], x->exit_code);
	param_text(&op.p[5], x->reason);
	param_text(&op.p[6], x->message);
	param_int(&op.p[7], x->started_ns);
	param_int(&op.p[8], x->finished_ns);
	store_write(st, &op);
}

void
store_del_exits_for(struct store *st, const char *uid)
{
	store_write_key(st, S_DEL_EXITS_FOR, uid);
}

static const char *const intent_kinds[] = { "sandbox", "container", NULL };

void
store_put_intent(struct store *st, const struct store_intent *in)
{
	struct op op = { .stmt = S_PUT_INTENT, .np = 5 };

	if (!store_valid_key(__func__, "uid", in->uid) ||
	    !store_valid("intent kind", in->kind, intent_kinds))
		return;
	param_text(&op.p[0], in->uid);
	param_text(&op.p[1], in->kind);
	param_text(&op.p[2], in->name ? in->name : "");
	param_int(&op.p[3], in->attempt);
	param_int(&op.p[4], in->created_wall_ms);
	store_write(st, &op);
}

void
store_del_intent(
    struct store *st, const char *uid, const char *kind, const char *name, int64_t attempt)
{
	struct op op = { .stmt = S_DEL_INTENT, .np = 4 };

	if (!store_valid_key(__func__, "uid", uid) ||
	    !store_valid("intent kind", kind, intent_kinds))
		return;
	param_text(&op.p[0], uid);
	param_text(&op.p[1], kind);
	param_text(&op.p[2], name ? name : "");
	param_int(&op.p[3], attempt);
	store_write(st, &op);
}

void
store_set_meta(struct store *st, const char *key, const char *value)
{
	struct op op = { .stmt = value ? S_SET_META : S_DEL_META, .np = value ? 2 : 1 };

	if (!store_valid_key(__func__, "key", key))
		return;
	param_text(&op.p[0], key);
	if (value != NULL)
		param_text(&op.p[1], value);
	store_write(st, &op);
}

void
store_put_rtobj(struct store *st, const struct store_rtobj *o)
{
	struct op op = { .stmt = S_PUT_RTOBJ, .np = 13 };

	if (!store_valid_key(__func__, "id", o->id) || !store_valid_key(__func__, "uid", o->uid))
		return;
	param_text(&op.p[0], o->id);
	param_text(&op.p[1], o->uid);
	param_int(&op.p[2], o->sandbox != 0);
	param_int(&op.p[3], o->state);
	param_int(&op.p[4], o->started_ns);
	param_int(&op.p[5], o->finished_ns);
	param_int(&op.p[6], o->exit_code);
	param_text(&op.p[7], o->reason);
	param_text(&op.p[8], o->message);
	param_text(&op.p[9], o->image_ref);
	param_text(&op.p[10], o->ip);
	param_text(&op.p[11], o->extra_ips);
	param_int(&op.p[12], o->network_mode);
	store_write(st, &op);
}

void
store_del_rtobj(struct store *st, const char *id)
{
	store_write_key(st, S_DEL_RTOBJ, id);
}

void
store_put_event(
    struct store *st, const char *uid, const char *reason, const char *message, int64_t wall_ms)
{
	struct op op = { .stmt = S_PUT_EVENT, .np = 4 };

	param_text(&op.p[0], uid ? uid : "");
	param_text(&op.p[1], reason ? reason : "");
	param_text(&op.p[2], message);
	param_int(&op.p[3], wall_ms);
	store_write(st, &op);
}

void
store_forget_pod(struct store *st, const char *uid)
{
	static const enum stmt_id dels[] = { S_DEL_POD, S_DEL_WORKER, S_DEL_STATUS, S_DEL_EXITS_FOR,
		S_DEL_INTENTS_FOR, S_DEL_EVENTS_FOR, S_DEL_RTOBJS_FOR };
	size_t                    i;

	if (!store_valid_key(__func__, "uid", uid))
		return;
	for (i = 0; i < nitems(dels); i++)
		store_write_key(st, dels[i], uid);
}

/* ---- typed reads ---- */

static const char *
col_text(sqlite3_stmt *s, int i)
{
	return (const char *)sqlite3_column_text(s, i);
}

static const char *const store_tables[] = { "pods", "workers", "statuses", "container_exits",
	"intents", "events", "meta", "runtime_objects" };

/* While degraded the newest rows exist only in the journal: reads then run on a private
 * in-memory database holding the committed rows with the journal applied. Returns it (the
 * caller closes it) or NULL (logged). */
static sqlite3 *
store_overlay(struct store *st)
{
	sqlite3_stmt *s = NULL;
	sqlite3      *m = NULL;
	size_t        i;
	char         *sql;
	int           rc;

	if (sqlite3_open_v2(":memory:", &m,
	        SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_NOMUTEX,
	        NULL) != SQLITE_OK)
		goto fail;
	sqlite3_busy_timeout(m, STORE_BUSY_TIMEOUT_MS);
	for (i = 0; i < nitems(migrations); i++)
		if (store_exec_sql(m, migrations[i].sql) != SQLITE_OK)
			goto fail;
	if (sqlite3_prepare_v2(m, "ATTACH ? AS disk", -1, &s, NULL) != SQLITE_OK)
		goto fail;
	sqlite3_bind_text(s, 1, st->st_path, -1, SQLITE_STATIC);
	rc = sqlite3_step(s);
	sqlite3_finalize(s);
	s = NULL;
	if (rc != SQLITE_DONE || store_exec_sql(m, "BEGIN") != SQLITE_OK)
		goto fail;
	for (i = 0; i < nitems(store_tables); i++) {
		sql = xsprintf(
		    "INSERT INTO main.%s SELECT * FROM disk.%s", store_tables[i], store_tables[i]);
		rc = store_exec_sql(m, sql);
		free(sql);
		if (rc != SQLITE_OK)
			goto fail;
	}
	for (i = 0; i < st->st_nops; i++) {
		const struct op *op = &st->st_ops[i];

		if (sqlite3_prepare_v2(m, stmt_defs[op->stmt].sql, -1, &s, NULL) != SQLITE_OK ||
		    op_bind(s, op) != SQLITE_OK)
			goto fail;
		rc = sqlite3_step(s);
		sqlite3_finalize(s);
		s = NULL;
		/* A write the database would refuse is dropped at the retry as well. */
		if (rc != SQLITE_DONE && (rc & 0xff) != SQLITE_CONSTRAINT)
			goto fail;
	}
	if (store_exec_sql(m, "COMMIT") != SQLITE_OK ||
	    store_exec_sql(m, "DETACH disk") != SQLITE_OK)
		goto fail;
	return m;
fail:
	log_error("store %s: cannot read while degraded: %s", st->st_path,
	    m != NULL ? sqlite3_errmsg(m) : "out of memory");
	sqlite3_finalize(s);
	sqlite3_close(m);
	return NULL;
}

/* Prepares a read (on the overlay while degraded); binds uid when not NULL. NULL on failure
 * (logged). store_query_end finishes it. */
static sqlite3_stmt *
store_query(struct store *st, const char *sql, const char *uid)
{
	sqlite3_stmt *s = NULL;
	sqlite3      *db;

	if (st == NULL)
		return NULL;
	db = st->st_db;
	if (st->st_degraded && !st->st_mem && st->st_nops > 0 && (db = store_overlay(st)) == NULL)
		return NULL;
	if (sqlite3_prepare_v2(db, sql, -1, &s, NULL) != SQLITE_OK) {
		log_error("store %s: read: %s", st->st_path, sqlite3_errmsg(db));
		sqlite3_finalize(s);
		if (db != st->st_db)
			sqlite3_close(db);
		return NULL;
	}
	if (uid != NULL)
		sqlite3_bind_text(s, 1, uid, -1, SQLITE_TRANSIENT);
	return s;
}

/* Ends a read loop: 0 when it ran to the end or the callback stopped it. */
static int
store_query_end(struct store *st, sqlite3_stmt *s, int rc)
{
	sqlite3 *db = sqlite3_db_handle(s);

	sqlite3_finalize(s);
	if (db != st->st_db)
		sqlite3_close(db);
	if (rc == SQLITE_DONE || rc == SQLITE_ROW)
		return 0;
	log_error("store %s: read: %s", st->st_path, sqlite3_errstr(rc));
	return -1;
}

int
store_foreach_pod(struct store *st, int (*cb)(const struct store_pod *, void *), void *arg)
{
	sqlite3_stmt    *s = store_query(st,
	       "SELECT uid, source, ns, name, doc, format,"
	          " updated_wall_ms FROM pods ORDER BY uid",
	       NULL);
	struct store_pod p;
	int              rc;

	if (s == NULL)
		return st == NULL ? 0 : -1;
	while ((rc = sqlite3_step(s)) == SQLITE_ROW) {
		p.uid = col_text(s, 0);
		p.source = col_text(s, 1);
		p.ns = col_text(s, 2);
		p.name = col_text(s, 3);
		p.doc = sqlite3_column_blob(s, 4);
		p.doc_len = (size_t)sqlite3_column_bytes(s, 4);
		if (p.doc == NULL)
			p.doc = "";
		p.format = col_text(s, 5);
		p.updated_wall_ms = sqlite3_column_int64(s, 6);
		if (cb(&p, arg) != 0)
			break;
	}
	return store_query_end(st, s, rc);
}

int
store_foreach_worker(struct store *st, int (*cb)(const struct store_worker *, void *), void *arg)
{
	sqlite3_stmt       *s = store_query(st,
	          "SELECT uid, state, grace_seconds,"
	                " grace_deadline_wall_ms, step, last_error, failures, next_retry_wall_ms,"
	                " removed FROM workers ORDER BY uid",
	          NULL);
	struct store_worker w;
	int                 rc;

	if (s == NULL)
		return st == NULL ? 0 : -1;
	while ((rc = sqlite3_step(s)) == SQLITE_ROW) {
		w.uid = col_text(s, 0);
		w.state = col_text(s, 1);
		w.grace_seconds = sqlite3_column_int64(s, 2);
		w.grace_deadline_wall_ms = sqlite3_column_int64(s, 3);
		w.step = col_text(s, 4);
		w.last_error = col_text(s, 5);
		w.failures = sqlite3_column_int(s, 6);
		w.next_retry_wall_ms = sqlite3_column_int64(s, 7);
		w.removed = sqlite3_column_int(s, 8);
		if (cb(&w, arg) != 0)
			break;
	}
	return store_query_end(st, s, rc);
}

int
store_foreach_status(struct store *st, int (*cb)(const struct store_status *, void *), void *arg)
{
	sqlite3_stmt       *s = store_query(st,
	          "SELECT uid, version, json, acked_version"
	                " FROM statuses ORDER BY uid",
	          NULL);
	struct store_status x;
	int                 rc;

	if (s == NULL)
		return st == NULL ? 0 : -1;
	while ((rc = sqlite3_step(s)) == SQLITE_ROW) {
		x.uid = col_text(s, 0);
		x.version = sqlite3_column_int64(s, 1);
		x.json = col_text(s, 2);
		x.acked_version = sqlite3_column_int64(s, 3);
		if (cb(&x, arg) != 0)
			break;
	}
	return store_query_end(st, s, rc);
}

int
store_foreach_exit(
    struct store *st, const char *uid, int (*cb)(const struct store_exit *, void *), void *arg)
{
	sqlite3_stmt     *s = store_query(st,
            uid != NULL
	            ? "SELECT container_id, uid, name, restart_count, exit_code, reason, message,"
	              " started_ns, finished_ns FROM container_exits WHERE uid = ?"
	              " ORDER BY uid, name, restart_count, container_id"
	            : "SELECT container_id, uid, name, restart_count, exit_code, reason, message,"
	              " started_ns, finished_ns FROM container_exits"
	              " ORDER BY uid, name, restart_count, container_id",
	        uid);
	struct store_exit x;
	int               rc;

	if (s == NULL)
		return st == NULL ? 0 : -1;
	while ((rc = sqlite3_step(s)) == SQLITE_ROW) {
		x.container_id = col_text(s, 0);
		x.uid = col_text(s, 1);
		x.name = col_text(s, 2);
		x.restart_count = sqlite3_column_int(s, 3);
		x.exit_code = sqlite3_column_int(s, 4);
		x.reason = col_text(s, 5);
		x.message = col_text(s, 6);
		x.started_ns = sqlite3_column_int64(s, 7);
		x.finished_ns = sqlite3_column_int64(s, 8);
		if (cb(&x, arg) != 0)
			break;
	}
	return store_query_end(st, s, rc);
}

int
store_foreach_intent(
    struct store *st, const char *uid, int (*cb)(const struct store_intent *, void *), void *arg)
{
	sqlite3_stmt       *s = store_query(st,
            uid != NULL
	              ? "SELECT uid, kind, name, attempt, created_wall_ms FROM intents WHERE uid = ?"
	                " ORDER BY uid, kind, name, attempt"
	              : "SELECT uid, kind, name, attempt, created_wall_ms FROM intents"
	                " ORDER BY uid, kind, name, attempt",
	          uid);
	struct store_intent x;
	int                 rc;

	if (s == NULL)
		return st == NULL ? 0 : -1;
	while ((rc = sqlite3_step(s)) == SQLITE_ROW) {
		x.uid = col_text(s, 0);
		x.kind = col_text(s, 1);
		x.name = col_text(s, 2);
		x.attempt = sqlite3_column_int64(s, 3);
		x.created_wall_ms = sqlite3_column_int64(s, 4);
		if (cb(&x, arg) != 0)
			break;
	}
	return store_query_end(st, s, rc);
}

int
store_foreach_rtobj(struct store *st, int (*cb)(const struct store_rtobj *, void *), void *arg)
{
	sqlite3_stmt      *s = store_query(st,
	         "SELECT id, uid, sandbox, state, started_ns,"
	              " finished_ns, exit_code, reason, message, image_ref, ip, extra_ips, network_mode"
	              " FROM runtime_objects ORDER BY id",
	         NULL);
	struct store_rtobj o;
	int                rc;

	if (s == NULL)
		return st == NULL ? 0 : -1;
	while ((rc = sqlite3_step(s)) == SQLITE_ROW) {
		o.id = col_text(s, 0);
		o.uid = col_text(s, 1);
		o.sandbox = sqlite3_column_int(s, 2);
		o.state = sqlite3_column_int(s, 3);
		o.started_ns = sqlite3_column_int64(s, 4);
		o.finished_ns = sqlite3_column_int64(s, 5);
		o.exit_code = sqlite3_column_int(s, 6);
		o.reason = col_text(s, 7);
		o.message = col_text(s, 8);
		o.image_ref = col_text(s, 9);
		o.ip = col_text(s, 10);
		o.extra_ips = col_text(s, 11);
		o.network_mode = sqlite3_column_int(s, 12);
		if (cb(&o, arg) != 0)
			break;
	}
	return store_query_end(st, s, rc);
}

char *
store_get_meta(struct store *st, const char *key)
{
	sqlite3_stmt *s;
	char         *v = NULL;
	int           rc;

	s = store_query(st, "SELECT value FROM meta WHERE key = ?", key);
	if (s == NULL)
		return NULL;
	rc = sqlite3_step(s);
	if (rc == SQLITE_ROW)
		v = xstrdup(col_text(s, 0));
	store_query_end(st, s, rc);
	return v;
}

/* ---- housekeeping and health ---- */

int
store_checkpoint(struct store *st)
{
	int rc, nlog = 0, nckpt = 0;

	if (st == NULL)
		return 0;
	if (st->st_degraded && store_replay(st) == 0)
		store_run_callbacks(st);
	if (st->st_in_txn || st->st_mem)
		return 0; /* a turn is open, or no file yet: checkpoint next time */
	/* Give back the pages of forgotten pods once there are many (its own transaction;
	 * a failure only means the file stays larger for now). */
	if (!st->st_degraded &&
	    store_pragma_int(st->st_db, "PRAGMA freelist_count", &rc) > STORE_VACUUM_PAGES &&
	    store_exec_sql(st->st_db, "PRAGMA incremental_vacuum") != SQLITE_OK)
		log_v(
		    2, "store %s: incremental_vacuum: %s", st->st_path, sqlite3_errmsg(st->st_db));
	rc = sqlite3_wal_checkpoint_v2(st->st_db, NULL, SQLITE_CHECKPOINT_PASSIVE, &nlog, &nckpt);
	if (rc != SQLITE_OK && rc != SQLITE_BUSY) {
		log_error("store %s: checkpoint: %s", st->st_path, sqlite3_errmsg(st->st_db));
		free(st->st_last_error);
		st->st_last_error = xsprintf("checkpoint: %s", sqlite3_errmsg(st->st_db));
		st->st_failures++;
		return -1;
	}
	log_v(5, "store: checkpoint wal=%d pages, %d copied", nlog, nckpt);
	return 0;
}

enum store_health_state
store_health(struct store *st, struct store_health_info *h)
{
	memset(h, 0, sizeof(*h));
	if (st == NULL)
		return STORE_OK;
	h->state = st->st_degraded ? STORE_DEGRADED : STORE_OK;
	h->last_error = st->st_last_error;
	h->failed_since_wall_ms = st->st_failed_since;
	h->journal_ops = st->st_nops;
	h->commits = st->st_commits;
	h->failures = st->st_failures;
	return h->state;
}

int64_t
store_file_size(struct store *st)
{
	struct stat sb;
	int64_t     n = 0;
	char       *wal;

	if (st == NULL)
		return 0;
	if (stat(st->st_path, &sb) == 0)
		n += sb.st_size;
	wal = xsprintf("%s-wal", st->st_path);
	if (stat(wal, &sb) == 0)
		n += sb.st_size;
	free(wal);
	return n;
}

int
store_test_exec(struct store *st, const char *sql)
{
	char *msg = NULL;

	if (sqlite3_exec(st->st_db, sql, NULL, NULL, &msg) != SQLITE_OK) {
		log_warnx("store: test sql %s: %s", sql, msg ? msg : "?");
		sqlite3_free(msg);
		return -1;
	}
	return 0;
}
