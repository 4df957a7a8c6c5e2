/* journal.c — the store's degraded mode. Every write is kept as an op in a journal until
 * its transaction commits; when a write or the COMMIT fails the transaction is rolled back
 * and the journal replayed in a new one by a retry timer (with compaction so that a long
 * outage stays bounded by the live rows). A file that cannot be written at start runs from
 * a private copy in memory until it can; reads while degraded see an overlay of the
 * committed rows with the journal applied. */
#include <sys/stat.h>

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <event2/event.h>
#include <sqlite3.h>

#include "core/log.h"
#include "core/util.h"
#include "store/internal.h"

static int store_reopen_file(struct store *);

/* ---- ops and the journal ---- */

void
store_param_text(struct param *p, const char *s)
{
	if (s == NULL) {
		p->t = P_NULL;
		return;
	}
	p->t = P_TEXT;
	p->s = xstrdup(s);
}

void
store_param_int(struct param *p, int64_t v)
{
	p->t = P_INT;
	p->i = v;
}

void
store_param_blob(struct param *p, const void *buf, size_t n)
{
	p->t = P_BLOB;
	p->s = xmalloc(n + 1);
	if (n > 0)
		memcpy(p->s, buf, n);
	p->n = n;
}

void
store_op_clear(struct op *op)
{
	int i;

	for (i = 0; i < op->np; i++)
		free(op->p[i].s);
	memset(op, 0, sizeof(*op));
}

void
store_journal_clear(struct store *st)
{
	size_t i;

	for (i = 0; i < st->st_nops; i++)
		store_op_clear(&st->st_ops[i]);
	st->st_nops = 0;
	st->st_compact_at = STORE_COMPACT_MIN;
	/* A burst (a thousand pods written in one turn) grew the array: give it back rather
	 * than keep its peak for ever (1.7 MiB with 1000 pods). */
	if (st->st_ops_cap > STORE_OPS_KEEP) {
		free(st->st_ops);
		st->st_ops = NULL;
		st->st_ops_cap = 0;
	}
}

static int
store_param_eq(const struct param *a, const struct param *b)
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
store_op_key_hash(const struct op *op)
{
	const struct stmt_def *d = &store_stmt_defs[op->stmt];
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
store_op_same_key(const struct op *a, const struct op *b)
{
	const struct stmt_def *da = &store_stmt_defs[a->stmt], *db = &store_stmt_defs[b->stmt];
	int                    i;

	if (da->cls == 0 || da->cls != db->cls || da->nkey == 0)
		return 0;
	for (i = 0; i < da->nkey; i++)
		if (!store_param_eq(&a->p[i], &b->p[i]))
			return 0;
	return 1;
}

/* Drops journaled writes that a later write to the same row replaces, and the writes of a
 * capped class (events) beyond its newest cap, so a long outage keeps the journal bounded by
 * the live rows. (One class has a cap: its count is kept in one counter.) */
void
store_journal_compact(struct store *st)
{
	size_t  cap = 1, i, j, n, kept = 0, events = 0;
	size_t *slot;

	while (cap < st->st_nops * 2)
		cap <<= 1;
	slot = xcalloc(cap, sizeof(*slot)); /* op index + 1; 0 = empty */
	for (i = st->st_nops; i-- > 0;) {
		struct op             *op = &st->st_ops[i];
		const struct stmt_def *d = &store_stmt_defs[op->stmt];

		if (d->cap > 0) {
			if (++events > (size_t)d->cap)
				op->dead = 1;
			continue;
		}
		if (d->cls == 0 || d->nkey == 0)
			continue;
		for (j = store_op_key_hash(op) & (cap - 1);; j = (j + 1) & (cap - 1)) {
			if (slot[j] == 0) {
				slot[j] = i + 1;
				break;
			}
			struct op *later = &st->st_ops[slot[j] - 1];

			if (store_op_same_key(later, op)) {
				/* E.g. acks only grow (a pod UID never comes back once
				 * forgotten). */
				if (d->grow > 0 && op->p[d->grow - 1].i > later->p[d->grow - 1].i)
					later->p[d->grow - 1].i = op->p[d->grow - 1].i;
				op->dead = 1;
				break;
			}
		}
	}
	free(slot);
	for (i = 0, n = 0; i < st->st_nops; i++) {
		if (st->st_ops[i].dead) {
			store_op_clear(&st->st_ops[i]);
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
int
store_op_bind(sqlite3_stmt *s, const struct op *op)
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

/* ---- degraded: fail, retry, replay ---- */

void
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
void
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
int
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

void
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
int
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
int
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

/* ---- reads while degraded ---- */

/* While degraded the newest rows exist only in the journal: reads then run on a private
 * in-memory database holding the committed rows with the journal applied. Returns it (the
 * caller closes it) or NULL (logged). */
sqlite3 *
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
	if (store_create_schema(m) != SQLITE_OK)
		goto fail;
	if (sqlite3_prepare_v2(m, "ATTACH ? AS disk", -1, &s, NULL) != SQLITE_OK)
		goto fail;
	sqlite3_bind_text(s, 1, st->st_path, -1, SQLITE_STATIC);
	rc = sqlite3_step(s);
	sqlite3_finalize(s);
	s = NULL;
	if (rc != SQLITE_DONE || store_exec_sql(m, "BEGIN") != SQLITE_OK)
		goto fail;
	for (i = 0; i < store_ntables; i++) {
		sql = xsprintf(
		    "INSERT INTO main.%s SELECT * FROM disk.%s", store_tables[i], store_tables[i]);
		rc = store_exec_sql(m, sql);
		free(sql);
		if (rc != SQLITE_OK)
			goto fail;
	}
	for (i = 0; i < st->st_nops; i++) {
		const struct op *op = &st->st_ops[i];

		if (sqlite3_prepare_v2(m, store_stmt_defs[op->stmt].sql, -1, &s, NULL) !=
		        SQLITE_OK ||
		    store_op_bind(s, op) != SQLITE_OK)
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
