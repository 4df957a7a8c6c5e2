/* journal.c — the journal of the store's writes. Every write is kept as an op until its
 * transaction commits; the engine (store.c) replays the journal when a write or the COMMIT
 * failed, after a compaction that keeps a long outage bounded by the live rows. While the
 * store is degraded, reads see an overlay of the committed rows with the journal applied. */
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
	if (st->st_ops_cap > STORE_OPS_KEEP)
		store_journal_release(st);
}

void
store_journal_release(struct store *st)
{
	if (st->st_nops != 0)
		return;
	free(st->st_ops);
	st->st_ops = NULL;
	st->st_ops_cap = 0;
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
