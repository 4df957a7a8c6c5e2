/* store.c — the store's engine: open (the file checked, migrated, or a copy in memory), one
 * transaction per loop turn committed at its end, after_commit callbacks, reads, the WAL
 * checkpoint and health (see src/store/store.h), and the degraded mode: a failed write or
 * commit keeps the journal (journal.c) and a retry timer replays it; a file that cannot be
 * written at start runs from a copy in memory. The schema is in migrate.c, the typed rows
 * in rows.c. */
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
#include "core/util.h"
#include "store/internal.h"
#include "store/store.h"

static int              store_reopen_file(struct store *);
static int              store_step_simple(struct store *st, enum stmt_id id, int64_t arg);
static enum exec_result store_exec_op(struct store *st, const struct op *op);
static int              store_commit(struct store *st);
static void             store_run_callbacks(struct store *st);
static void             store_arm_retry(struct store *st);
static void             store_fail(struct store *st, const char *what);
static int              store_replay(struct store *st);
static void             store_retry_cb(evutil_socket_t fd, short what, void *arg);
static int              store_transient(int code);
static int              store_to_memory(struct store *st, const char *why, char **errp);

#define STORE_VACUUM_PAGES 64 /* free pages that make a checkpoint vacuum */

/* ---- small helpers ---- */

static sqlite3_stmt *
store_stmt(struct store *st, enum stmt_id id)
{
	if (st->st_stmt[id] == NULL &&
	    sqlite3_prepare_v3(st->st_db, store_stmt_defs[id].sql, -1, SQLITE_PREPARE_PERSISTENT,
	        &st->st_stmt[id], NULL) != SQLITE_OK) {
		/* Our SQL against our schema: only out of memory or a broken file gets here. */
		log_error("%s: prepare %s: %s", __func__, store_stmt_defs[id].name,
		    sqlite3_errmsg(st->st_db));
		return NULL;
	}
	return st->st_stmt[id];
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
	if (store_op_bind(s, op) != SQLITE_OK) {
		log_error("%s: bind: %s", __func__, sqlite3_errmsg(st->st_db));
		return NULL;
	}
	return s;
}

/* Steps a cached statement once, its parameter 1 bound to arg (unless arg < 0), and gives
 * the first column of the row it returned in *col (col NULL: not read). Returns sqlite3_step's
 * result. */
static int
store_step_col(struct store *st, enum stmt_id id, int64_t arg, int64_t *col)
{
	sqlite3_stmt *s = store_stmt(st, id);
	int           rc;

	if (s == NULL)
		return SQLITE_ERROR;
	sqlite3_reset(s);
	if (arg >= 0)
		sqlite3_bind_int64(s, 1, arg);
	rc = sqlite3_step(s);
	if (rc == SQLITE_ROW && col != NULL)
		*col = sqlite3_column_int64(s, 0);
	sqlite3_reset(s);
	return rc;
}

/* Runs one statement without parameters (or with one integer when arg >= 0).
 * Returns the SQLite result code (SQLITE_DONE on success). */
static int
store_step_simple(struct store *st, enum stmt_id id, int64_t arg)
{
	return store_step_col(st, id, arg, NULL);
}

/* The file's free pages (PRAGMA freelist_count), -1 on an error. A cached statement, as the
 * checkpoint's other ones: SQL parsed at each checkpoint would fault SQLite's parser and code
 * generator in again (about 0.9 MiB of its text) after the idle loop's unmapping of clean
 * pages (core/heap.h). */
static int64_t
store_free_pages(struct store *st)
{
	int64_t n = -1;

	return store_step_col(st, S_FREELIST, -1, &n) == SQLITE_ROW ? n : -1;
}

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
		log_error("store: write dropped: %s: %s", store_stmt_defs[op->stmt].name,
		    sqlite3_errmsg(st->st_db));
		return EXEC_BAD_OP;
	default:
		return EXEC_FAILED;
	}
}

/* ---- the per-turn transaction ---- */

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
void
store_write(struct store *st, struct op *op)
{
	struct op *j;

	if (st == NULL) {
		store_op_clear(op);
		return;
	}
	if (st->st_nops == st->st_ops_cap) {
		st->st_ops_cap = st->st_ops_cap ? st->st_ops_cap * 2 : 8;
		st->st_ops = xreallocarray(st->st_ops, st->st_ops_cap, sizeof(*st->st_ops));
	}
	j = &st->st_ops[st->st_nops++];
	*j = *op;
	memset(op, 0, sizeof(*op));
	if (st->st_degraded) {
		/* From memory: the copy takes the write too, so that reads see it. */
		if (st->st_mem && store_exec_op(st, j) == EXEC_BAD_OP) {
			store_op_clear(j);
			st->st_nops--;
		}
		if (st->st_nops >= st->st_compact_at)
			store_journal_compact(st);
		return;
	}
	if (store_begin(st) == -1)
		return;
	switch (store_exec_op(st, j)) {
	case EXEC_OK:
		break;
	case EXEC_BAD_OP:
		store_op_clear(j);
		st->st_nops--;
		break;
	case EXEC_FAILED:
		store_fail(st, store_stmt_defs[j->stmt].name);
		return;
	}
	if (st->st_nops >= st->st_compact_at)
		store_journal_compact(st);
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
	store_journal_clear(st);
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
	loop_note("store commit");
	st->st_turn_active = 0;
	if (!st->st_degraded)
		store_commit(st);
	store_run_callbacks(st);
	loop_note(NULL);
	/* Callbacks that wrote opened a new transaction and scheduled another turn end. */
}

/* ---- degraded: fail, retry, replay ---- */

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
			store_fail(st, store_stmt_defs[op->stmt].name);
			return -1;
		}
	}
	if (store_commit(st) == -1)
		return -1;
	store_recovered(st);
	return 0;
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

/* ---- a file that cannot be written: running from memory ---- */

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
	store_tune_conn(db);
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

/* ---- open, flush, close ---- */

void
store_config_once(void)
{
	static int done;

	if (done)
		return;
	done = 1;
	/* SQLITE_MISUSE when the library is initialized already (a test that used it first):
	 * the default stays, nothing else changes. */
	if (sqlite3_config(SQLITE_CONFIG_PAGECACHE, NULL, 0, 0) != SQLITE_OK)
		log_v(2, "store: SQLite already initialized: bulk page cache allocation kept");
}

void
store_tune_conn(sqlite3 *db)
{
	char *sql = xsprintf("PRAGMA cache_size = -%d", STORE_CACHE_KIB);

	if (sqlite3_exec(db, sql, NULL, NULL, NULL) != SQLITE_OK)
		log_v(2, "store: %s: %s", sql, sqlite3_errmsg(db));
	free(sql);
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
	store_config_once();
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
	st->st_ckpt_commits = UINT64_MAX; /* the first checkpoint copies what the open wrote */
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
	store_tune_conn(st->st_db);
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
	log_info("store %s: open, schema version %d", path, store_schema_version());
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
	store_journal_clear(st);
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

/* ---- reads ---- */

/* Prepares a read (on the overlay while degraded); binds uid when not NULL. NULL on failure
 * (logged). store_query_end finishes it. */
sqlite3_stmt *
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
int
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

/* ---- housekeeping and health ---- */

/* The WAL, copied in full, starts over at the next write, and that write syncs the WAL's
 * new header (the one sync outside the checkpoint with synchronous=NORMAL: it guards against
 * old frames read as new after a crash). Made here, by a write of its own, the sync is the
 * checkpoint's, not that of whatever commit comes next (an intent, committed before its
 * create call leaves). Not counted as a commit: it needs no checkpoint of its own (the next
 * one copies it with the rest). */
static void
store_wal_restart(struct store *st)
{
	if (st->st_degraded)
		return;
	if (store_step_simple(st, S_WAL_RESTART, -1) != SQLITE_DONE)
		log_v(2, "store %s: WAL restart: %s", st->st_path, sqlite3_errmsg(st->st_db));
}

void
store_release_memory(struct store *st)
{
	if (st == NULL)
		return;
	if (st->st_db != NULL)
		sqlite3_db_release_memory(st->st_db);
	store_journal_release(st); /* its slots, 0.4 KiB each, when nothing waits in them */
}

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
	if (!st->st_degraded && st->st_commits == st->st_ckpt_commits)
		return 0; /* nothing committed since the WAL was last copied in full */
	/* Give back the pages of forgotten pods once there are many (its own transaction;
	 * a failure only means the file stays larger for now). */
	if (!st->st_degraded && store_free_pages(st) > STORE_VACUUM_PAGES &&
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
	if (rc == SQLITE_OK && nckpt == nlog) {
		st->st_ckpt_commits = st->st_commits;
		store_wal_restart(st);
	}
	return 0;
}

int
store_degraded(const struct store *st)
{
	return st != NULL && st->st_degraded;
}

uint64_t
store_commits(const struct store *st)
{
	return st != NULL ? st->st_commits : 0;
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
	h->sqlite_bytes = sqlite3_memory_used();
	if (st->st_db != NULL) {
		int cur, hi;

		if (sqlite3_db_status(st->st_db, SQLITE_DBSTATUS_CACHE_USED, &cur, &hi, 0) ==
		    SQLITE_OK)
			h->cache_bytes = cur;
		if (sqlite3_db_status(st->st_db, SQLITE_DBSTATUS_CACHE_HIT, &cur, &hi, 0) ==
		    SQLITE_OK)
			h->cache_hits = (uint64_t)(unsigned)cur;
		if (sqlite3_db_status(st->st_db, SQLITE_DBSTATUS_CACHE_MISS, &cur, &hi, 0) ==
		    SQLITE_OK)
			h->cache_misses = (uint64_t)(unsigned)cur;
	}
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
