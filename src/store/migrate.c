/* migrate.c — the store's schema: the embedded migrations (schema/NNN-name.sql, applied in
 * order in one transaction) and the checks a file passes before anything is written to it. */
#include <sys/stat.h>

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <sqlite3.h>

#include "core/log.h"
#include "core/util.h"
#include "store/internal.h"

#define STORE_WAL_AUTOCKPT "10000" /* pages; a safety net: housekeeping checkpoints */

/* The embedded migrations, in order: { "NNN-name", "sql" }. */
static const struct migration {
	const char *name;
	const char *sql;
} migrations[] = {
#include "store-schema.h"
};

void
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

int
store_schema_version(void)
{
	return (int)nitems(migrations);
}

int
store_exec_sql(sqlite3 *db, const char *sql)
{
	return sqlite3_exec(db, sql, NULL, NULL, NULL);
}

/* Reads an integer pragma; -1 with the SQLite code in *rcp on failure. */
int64_t
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

/* Runs PRAGMA quick_check on the main database (not on "temp", which would then be opened
 * and keep its own page cache); 0 when the file is sound, else -1 with *why set. */
static int
store_quick_check(sqlite3 *db, char **why)
{
	sqlite3_stmt *s = NULL;
	const char   *res;
	int           rc;

	rc = sqlite3_prepare_v2(db, "PRAGMA main.quick_check(1)", -1, &s, NULL);
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

int
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

int
store_create_schema(sqlite3 *db)
{
	size_t i;
	int    rc;

	for (i = 0; i < nitems(migrations); i++)
		if ((rc = store_exec_sql(db, migrations[i].sql)) != SQLITE_OK)
			return rc;
	return SQLITE_OK;
}

/* The checks before anything is written: the file is ours (or empty), not from a newer
 * kletd, and sound. 0, or -1 with *errp set. */
int
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
int
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

/* The embedded list must be 001, 002, ... in order: a build mistake otherwise. */
int
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
