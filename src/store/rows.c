/* rows.c — the store's typed rows: the SQL of every write (one cached statement each), the
 * typed writes that check and journal them (pods, workers, statuses, exits, intents, runtime
 * objects, meta, events), and the typed reads, all through one cursor that maps a result
 * row onto its struct with a column table; and the hints, small files beside the database. */
#include <sys/stat.h>

#include <errno.h>
#include <fcntl.h>
#include <stddef.h>
#include <stdio.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <sqlite3.h>

#include "core/log.h"
#include "core/util.h"
#include "store/internal.h"
#include "store/store.h"

/* ---- the statements ---- */

const struct stmt_def store_stmt_defs[S_NSTMT] = {
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
	    'a', 1, .grow = 2 },
	[S_DEL_STATUS] = { "del status", "DELETE FROM statuses WHERE uid = ?", 's', 1 },
	[S_PUT_EXIT] = { "put exit",
	    "INSERT OR REPLACE INTO container_exits (container_id, uid, name,"
	    " restart_count, exit_code, reason, message, started_ns, finished_ns)"
	    " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
	    'x', 1 },
	[S_DEL_EXITS_FOR] = { "del exits for", "DELETE FROM container_exits WHERE uid = ?", 0, 0 },
	[S_DEL_EXITS_ORPHANED] = { "del orphaned exits",
	    "DELETE FROM container_exits WHERE uid NOT IN (SELECT uid FROM pods)", 0, 0 },
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
	    'e', 0, .cap = STORE_MAX_EVENTS },
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
	[S_FREELIST] = { "freelist count", "PRAGMA freelist_count", 0, 0 },
	[S_WAL_RESTART] = { "WAL restart",
	    "INSERT OR REPLACE INTO meta (key, value) VALUES ('store.wal', '1')", 0, 0 },
};

const char *const store_tables[] = { "pods", "workers", "statuses", "container_exits", "intents",
	"events", "meta", "runtime_objects" };
const size_t      store_ntables = nitems(store_tables);

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
	store_param_text(&op.p[0], p->uid);
	store_param_text(&op.p[1], p->source);
	store_param_text(&op.p[2], p->ns ? p->ns : "");
	store_param_text(&op.p[3], p->name ? p->name : "");
	store_param_blob(&op.p[4], p->doc, p->doc != NULL ? p->doc_len : 0);
	store_param_text(&op.p[5], p->format);
	store_param_int(&op.p[6], p->updated_wall_ms);
	store_write(st, &op);
}

/* Writes a statement whose only parameter is a string key. */
static void
store_write_key(struct store *st, enum stmt_id id, const char *key)
{
	struct op op = { .stmt = id, .np = 1 };

	if (!store_valid_key(store_stmt_defs[id].name, "key", key))
		return;
	store_param_text(&op.p[0], key);
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
	store_param_text(&op.p[0], w->uid);
	store_param_text(&op.p[1], w->state);
	store_param_int(&op.p[2], w->grace_seconds);
	store_param_int(&op.p[3], w->grace_deadline_wall_ms);
	store_param_text(&op.p[4], w->step);
	store_param_text(&op.p[5], w->last_error);
	store_param_int(&op.p[6], w->failures);
	store_param_int(&op.p[7], w->next_retry_wall_ms);
	store_param_int(&op.p[8], w->removed != 0);
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
	store_param_text(&op.p[0], uid);
	store_param_int(&op.p[1], version);
	store_param_text(&op.p[2], json);
	store_write(st, &op);
}

void
store_ack_status(struct store *st, const char *uid, int64_t version)
{
	struct op op = { .stmt = S_ACK_STATUS, .np = 2 };

	if (!store_valid_key(__func__, "uid", uid))
		return;
	store_param_text(&op.p[0], uid);
	store_param_int(&op.p[1], version);
	store_write(st, &op);
}

void
store_put_exit(struct store *st, const struct store_exit *x)
{
	struct op op = { .stmt = S_PUT_EXIT, .np = 9 };

	if (!store_valid_key(__func__, "container_id", x->container_id) ||
	    !store_valid_key(__func__, "uid", x->uid))
		return;
	store_param_text(&op.p[0], x->container_id);
	store_param_text(&op.p[1], x->uid);
	store_param_text(&op.p[2], x->name ? x->name : "");
	store_param_int(&op.p[3], x->restart_count);
	store_param_int(&op.p[4], x->exit_code);
	store_param_text(&op.p[5], x->reason);
	store_param_text(&op.p[6], x->message);
	store_param_int(&op.p[7], x->started_ns);
	store_param_int(&op.p[8], x->finished_ns);
	store_write(st, &op);
}

void
store_del_exits_for(struct store *st, const char *uid)
{
	store_write_key(st, S_DEL_EXITS_FOR, uid);
}

void
store_del_orphaned_exits(struct store *st)
{
	struct op op = { .stmt = S_DEL_EXITS_ORPHANED, .np = 0 };

	store_write(st, &op);
}

static const char *const intent_kinds[] = { "sandbox", "container", NULL };

void
store_put_intent(struct store *st, const struct store_intent *in)
{
	struct op op = { .stmt = S_PUT_INTENT, .np = 5 };

	if (!store_valid_key(__func__, "uid", in->uid) ||
	    !store_valid("intent kind", in->kind, intent_kinds))
		return;
	store_param_text(&op.p[0], in->uid);
	store_param_text(&op.p[1], in->kind);
	store_param_text(&op.p[2], in->name ? in->name : "");
	store_param_int(&op.p[3], in->attempt);
	store_param_int(&op.p[4], in->created_wall_ms);
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
	store_param_text(&op.p[0], uid);
	store_param_text(&op.p[1], kind);
	store_param_text(&op.p[2], name ? name : "");
	store_param_int(&op.p[3], attempt);
	store_write(st, &op);
}

void
store_set_meta(struct store *st, const char *key, const char *value)
{
	struct op op = { .stmt = value ? S_SET_META : S_DEL_META, .np = value ? 2 : 1 };

	if (!store_valid_key(__func__, "key", key))
		return;
	store_param_text(&op.p[0], key);
	if (value != NULL)
		store_param_text(&op.p[1], value);
	store_write(st, &op);
}

void
store_put_rtobj(struct store *st, const struct store_rtobj *o)
{
	struct op op = { .stmt = S_PUT_RTOBJ, .np = 13 };

	if (!store_valid_key(__func__, "id", o->id) || !store_valid_key(__func__, "uid", o->uid))
		return;
	store_param_text(&op.p[0], o->id);
	store_param_text(&op.p[1], o->uid);
	store_param_int(&op.p[2], o->sandbox != 0);
	store_param_int(&op.p[3], o->state);
	store_param_int(&op.p[4], o->started_ns);
	store_param_int(&op.p[5], o->finished_ns);
	store_param_int(&op.p[6], o->exit_code);
	store_param_text(&op.p[7], o->reason);
	store_param_text(&op.p[8], o->message);
	store_param_text(&op.p[9], o->image_ref);
	store_param_text(&op.p[10], o->ip);
	store_param_text(&op.p[11], o->extra_ips);
	store_param_int(&op.p[12], o->network_mode);
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

	store_param_text(&op.p[0], uid ? uid : "");
	store_param_text(&op.p[1], reason ? reason : "");
	store_param_text(&op.p[2], message);
	store_param_int(&op.p[3], wall_ms);
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

/* One column of a read: its type and where its value goes in the row's struct. */
struct store_col {
	enum { COL_TEXT, COL_BLOB, COL_INT, COL_INT64 } c_type;
	size_t c_off;     /* of the field: const char *, const void *, int or int64_t */
	size_t c_len_off; /* COL_BLOB: of its size_t length */
};

#define STORE_COL(type, t, f)                                                                      \
	{                                                                                          \
		type, offsetof(t, f), 0                                                            \
	}
#define STORE_COL_BLOB(t, f, n)                                                                    \
	{                                                                                          \
		COL_BLOB, offsetof(t, f), offsetof(t, n)                                           \
	}

/* A typed read: its query, whose result columns are cols in order. */
struct store_read {
	const char             *r_sql;     /* every row */
	const char             *r_sql_key; /* the rows of one key (bound to the ?) */
	const struct store_col *r_cols;
	size_t                  r_ncols;
};

/* The one iterator of the typed reads. */
struct store_cursor {
	struct store            *cu_st;
	const struct store_read *cu_rd;
	sqlite3_stmt            *cu_s;
	int                      cu_rc; /* the last sqlite3_step */
};

/* Starts a read of rd (its rows for key when key is not NULL). 0, or -1 when there is
 * nothing to read (a NULL store, or a failure, logged); close the cursor either way. */
static int
store_cursor_open(
    struct store_cursor *cu, struct store *st, const struct store_read *rd, const char *key)
{
	cu->cu_st = st;
	cu->cu_rd = rd;
	cu->cu_rc = SQLITE_DONE;
	cu->cu_s = store_query(st, key != NULL ? rd->r_sql_key : rd->r_sql, key);
	return cu->cu_s != NULL ? 0 : -1;
}

/* Fills row (the struct of the read) from the next result row: 1, or 0 at the end or on a
 * failure (store_cursor_close tells). Strings are valid until the next call. */
static int
store_cursor_next(struct store_cursor *cu, void *row)
{
	const struct store_read *rd = cu->cu_rd;
	sqlite3_stmt            *s = cu->cu_s;
	char                    *base = row;
	const void              *blob;
	size_t                   i;

	if (s == NULL || (cu->cu_rc = sqlite3_step(s)) != SQLITE_ROW)
		return 0;
	for (i = 0; i < rd->r_ncols; i++) {
		const struct store_col *c = &rd->r_cols[i];
		void                   *f = base + c->c_off;

		switch (c->c_type) {
		case COL_TEXT:
			*(const char **)f = (const char *)sqlite3_column_text(s, (int)i);
			break;
		case COL_BLOB:
			blob = sqlite3_column_blob(s, (int)i);
			*(size_t *)(void *)(base + c->c_len_off) =
			    (size_t)sqlite3_column_bytes(s, (int)i);
			*(const void **)f = blob != NULL ? blob : "";
			break;
		case COL_INT:
			*(int *)f = sqlite3_column_int(s, (int)i);
			break;
		case COL_INT64:
			*(int64_t *)f = sqlite3_column_int64(s, (int)i);
			break;
		}
	}
	return 1;
}

/* Ends a read: 0 when it ran to the end or was stopped, -1 on a failure (logged). */
static int
store_cursor_close(struct store_cursor *cu)
{
	if (cu->cu_s == NULL)
		return cu->cu_st == NULL ? 0 : -1;
	return store_query_end(cu->cu_st, cu->cu_s, cu->cu_rc);
}

static const struct store_col store_pod_cols[] = {
	STORE_COL(COL_TEXT, struct store_pod, uid),
	STORE_COL(COL_TEXT, struct store_pod, source),
	STORE_COL(COL_TEXT, struct store_pod, ns),
	STORE_COL(COL_TEXT, struct store_pod, name),
	STORE_COL_BLOB(struct store_pod, doc, doc_len),
	STORE_COL(COL_TEXT, struct store_pod, format),
	STORE_COL(COL_INT64, struct store_pod, updated_wall_ms),
};
static const struct store_read store_pod_read = {
	"SELECT uid, source, ns, name, doc, format, updated_wall_ms FROM pods ORDER BY uid", NULL,
	store_pod_cols, nitems(store_pod_cols)
};

int
store_foreach_pod(struct store *st, int (*cb)(const struct store_pod *, void *), void *arg)
{
	struct store_cursor cu;
	struct store_pod    row;

	if (store_cursor_open(&cu, st, &store_pod_read, NULL) == 0)
		while (store_cursor_next(&cu, &row) && cb(&row, arg) == 0)
			;
	return store_cursor_close(&cu);
}

static const struct store_col store_worker_cols[] = {
	STORE_COL(COL_TEXT, struct store_worker, uid),
	STORE_COL(COL_TEXT, struct store_worker, state),
	STORE_COL(COL_INT64, struct store_worker, grace_seconds),
	STORE_COL(COL_INT64, struct store_worker, grace_deadline_wall_ms),
	STORE_COL(COL_TEXT, struct store_worker, step),
	STORE_COL(COL_TEXT, struct store_worker, last_error),
	STORE_COL(COL_INT, struct store_worker, failures),
	STORE_COL(COL_INT64, struct store_worker, next_retry_wall_ms),
	STORE_COL(COL_INT, struct store_worker, removed),
};
static const struct store_read store_worker_read = {
	"SELECT uid, state, grace_seconds, grace_deadline_wall_ms, step, last_error, failures,"
	" next_retry_wall_ms, removed FROM workers ORDER BY uid",
	NULL, store_worker_cols, nitems(store_worker_cols)
};

int
store_foreach_worker(struct store *st, int (*cb)(const struct store_worker *, void *), void *arg)
{
	struct store_cursor cu;
	struct store_worker row;

	if (store_cursor_open(&cu, st, &store_worker_read, NULL) == 0)
		while (store_cursor_next(&cu, &row) && cb(&row, arg) == 0)
			;
	return store_cursor_close(&cu);
}

static const struct store_col store_status_cols[] = {
	STORE_COL(COL_TEXT, struct store_status, uid),
	STORE_COL(COL_INT64, struct store_status, version),
	STORE_COL(COL_TEXT, struct store_status, json),
	STORE_COL(COL_INT64, struct store_status, acked_version),
};
static const struct store_read store_status_read = {
	"SELECT uid, version, json, acked_version FROM statuses ORDER BY uid", NULL,
	store_status_cols, nitems(store_status_cols)
};

int
store_foreach_status(struct store *st, int (*cb)(const struct store_status *, void *), void *arg)
{
	struct store_cursor cu;
	struct store_status row;

	if (store_cursor_open(&cu, st, &store_status_read, NULL) == 0)
		while (store_cursor_next(&cu, &row) && cb(&row, arg) == 0)
			;
	return store_cursor_close(&cu);
}

static const struct store_col store_exit_cols[] = {
	STORE_COL(COL_TEXT, struct store_exit, container_id),
	STORE_COL(COL_TEXT, struct store_exit, uid),
	STORE_COL(COL_TEXT, struct store_exit, name),
	STORE_COL(COL_INT, struct store_exit, restart_count),
	STORE_COL(COL_INT, struct store_exit, exit_code),
	STORE_COL(COL_TEXT, struct store_exit, reason),
	STORE_COL(COL_TEXT, struct store_exit, message),
	STORE_COL(COL_INT64, struct store_exit, started_ns),
	STORE_COL(COL_INT64, struct store_exit, finished_ns),
};
#define STORE_EXIT_SELECT                                                                          \
	"SELECT container_id, uid, name, restart_count, exit_code, reason, message,"               \
	" started_ns, finished_ns FROM container_exits"
static const struct store_read store_exit_read = { STORE_EXIT_SELECT
	" ORDER BY uid, name, restart_count, container_id",
	STORE_EXIT_SELECT " WHERE uid = ? ORDER BY uid, name, restart_count, container_id",
	store_exit_cols, nitems(store_exit_cols) };

int
store_foreach_exit(
    struct store *st, const char *uid, int (*cb)(const struct store_exit *, void *), void *arg)
{
	struct store_cursor cu;
	struct store_exit   row;

	if (store_cursor_open(&cu, st, &store_exit_read, uid) == 0)
		while (store_cursor_next(&cu, &row) && cb(&row, arg) == 0)
			;
	return store_cursor_close(&cu);
}

static const struct store_col store_intent_cols[] = {
	STORE_COL(COL_TEXT, struct store_intent, uid),
	STORE_COL(COL_TEXT, struct store_intent, kind),
	STORE_COL(COL_TEXT, struct store_intent, name),
	STORE_COL(COL_INT64, struct store_intent, attempt),
	STORE_COL(COL_INT64, struct store_intent, created_wall_ms),
};
#define STORE_INTENT_SELECT "SELECT uid, kind, name, attempt, created_wall_ms FROM intents"
static const struct store_read store_intent_read = { STORE_INTENT_SELECT
	" ORDER BY uid, kind, name, attempt",
	STORE_INTENT_SELECT " WHERE uid = ? ORDER BY uid, kind, name, attempt", store_intent_cols,
	nitems(store_intent_cols) };

int
store_foreach_intent(
    struct store *st, const char *uid, int (*cb)(const struct store_intent *, void *), void *arg)
{
	struct store_cursor cu;
	struct store_intent row;

	if (store_cursor_open(&cu, st, &store_intent_read, uid) == 0)
		while (store_cursor_next(&cu, &row) && cb(&row, arg) == 0)
			;
	return store_cursor_close(&cu);
}

static const struct store_col store_event_cols[] = {
	STORE_COL(COL_INT64, struct store_event, id),
	STORE_COL(COL_TEXT, struct store_event, uid),
	STORE_COL(COL_TEXT, struct store_event, reason),
	STORE_COL(COL_TEXT, struct store_event, message),
	STORE_COL(COL_INT64, struct store_event, wall_ms),
};
#define STORE_EVENT_SELECT "SELECT id, uid, reason, message, wall_ms FROM events"
static const struct store_read store_event_read = { STORE_EVENT_SELECT " ORDER BY id",
	STORE_EVENT_SELECT " WHERE uid = ? ORDER BY id", store_event_cols,
	nitems(store_event_cols) };

int
store_foreach_event(
    struct store *st, const char *uid, int (*cb)(const struct store_event *, void *), void *arg)
{
	struct store_cursor cu;
	struct store_event  row;

	if (store_cursor_open(&cu, st, &store_event_read, uid) == 0)
		while (store_cursor_next(&cu, &row) && cb(&row, arg) == 0)
			;
	return store_cursor_close(&cu);
}

static const struct store_col store_rtobj_cols[] = {
	STORE_COL(COL_TEXT, struct store_rtobj, id),
	STORE_COL(COL_TEXT, struct store_rtobj, uid),
	STORE_COL(COL_INT, struct store_rtobj, sandbox),
	STORE_COL(COL_INT, struct store_rtobj, state),
	STORE_COL(COL_INT64, struct store_rtobj, started_ns),
	STORE_COL(COL_INT64, struct store_rtobj, finished_ns),
	STORE_COL(COL_INT, struct store_rtobj, exit_code),
	STORE_COL(COL_TEXT, struct store_rtobj, reason),
	STORE_COL(COL_TEXT, struct store_rtobj, message),
	STORE_COL(COL_TEXT, struct store_rtobj, image_ref),
	STORE_COL(COL_TEXT, struct store_rtobj, ip),
	STORE_COL(COL_TEXT, struct store_rtobj, extra_ips),
	STORE_COL(COL_INT, struct store_rtobj, network_mode),
};
static const struct store_read store_rtobj_read = {
	"SELECT id, uid, sandbox, state, started_ns, finished_ns, exit_code, reason, message,"
	" image_ref, ip, extra_ips, network_mode FROM runtime_objects ORDER BY id",
	NULL, store_rtobj_cols, nitems(store_rtobj_cols)
};

int
store_foreach_rtobj(struct store *st, int (*cb)(const struct store_rtobj *, void *), void *arg)
{
	struct store_cursor cu;
	struct store_rtobj  row;

	if (store_cursor_open(&cu, st, &store_rtobj_read, NULL) == 0)
		while (store_cursor_next(&cu, &row) && cb(&row, arg) == 0)
			;
	return store_cursor_close(&cu);
}

struct store_meta_row {
	const char *value;
};
static const struct store_col store_meta_cols[] = {
	STORE_COL(COL_TEXT, struct store_meta_row, value),
};
static const struct store_read store_meta_read = { "SELECT value FROM meta WHERE key = ?",
	"SELECT value FROM meta WHERE key = ?", store_meta_cols, nitems(store_meta_cols) };

char *
store_get_meta(struct store *st, const char *key)
{
	struct store_cursor   cu;
	struct store_meta_row row;
	char                 *v = NULL;

	if (store_cursor_open(&cu, st, &store_meta_read, key) == 0 &&
	    store_cursor_next(&cu, &row) && row.value != NULL)
		v = xstrdup(row.value);
	store_cursor_close(&cu);
	return v;
}

/* 1 when s is a hint's base or value: 1 to STORE_HINT_MAX bytes, no newline. */
static int
store_hint_ok(const char *s)
{
	size_t n = s != NULL ? strlen(s) : 0;

	return n > 0 && n <= STORE_HINT_MAX && memchr(s, '\n', n) == NULL;
}

static char *
store_hint_path(const struct store *st, const char *key)
{
	return st != NULL && st->st_path != NULL && path_component_ok(key)
	    ? xsprintf("%s-hint-%s", st->st_path, key)
	    : NULL;
}

int
store_put_hint(struct store *st, const char *key, const char *base, const char *value)
{
	char *path = store_hint_path(st, key), *text;
	int   rc;

	if (path == NULL || !store_hint_ok(base) || !store_hint_ok(value)) {
		free(path);
		errno = EINVAL;
		return -1;
	}
	text = xsprintf("%s\n%s\n", base, value);
	rc = write_file_replace(path, text, strlen(text), 0, 0600);
	free(text);
	free(path);
	return rc;
}

char *
store_get_hint(struct store *st, const char *key, const char *base)
{
	char       *path = store_hint_path(st, key), buf[2 * STORE_HINT_MAX + 3], *v;
	int         fd = -1;
	ssize_t     n = -1;
	size_t      blen;
	struct stat sb;

	/* Not a FIFO (an open that would wait for a writer) nor a link: a regular file or no
	 * hint. */
	if (path != NULL && store_hint_ok(base))
		fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK);
	free(path);
	if (fd == -1)
		return NULL;
	if (fstat(fd, &sb) == 0 && S_ISREG(sb.st_mode))
		n = read(fd, buf, sizeof(buf));
	close(fd);
	/* "base\nvalue\n", whole: a file cut short (a power cut) or grown is no hint. */
	blen = strlen(base);
	if (n < (ssize_t)blen + 3 || n == (ssize_t)sizeof(buf) || buf[n - 1] != '\n' ||
	    memcmp(buf, base, blen) != 0 || buf[blen] != '\n')
		return NULL;
	buf[n - 1] = '\0';
	v = buf + blen + 1; /* one line, no NUL inside, as a put makes it */
	return memchr(buf, '\0', (size_t)n - 1) == NULL && store_hint_ok(v) ? xstrdup(v) : NULL;
}
