/* test_store.c — the SQLite store: migrations, refusals, per-turn batching, typed rows,
 * faults (read-only, full disk) with retry and no loss, and a crash mid-transaction. */
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/wait.h>

#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>

#include <event2/event.h>
#include <sqlite3.h>

#include "core/log.h"
#include "core/loop.h"
#include "store/store.h"
#include "core/util.h"

/* ---- fixtures and helpers ---- */

struct fx {
	char  dir[64];
	char *path;
};

static int
fx_setup(void **state)
{
	struct fx *f = xcalloc(1, sizeof(*f));

	snprintf(f->dir, sizeof(f->dir), "/tmp/test_store.XXXXXX");
	if (mkdtemp(f->dir) == NULL)
		return -1;
	f->path = xsprintf("%s/klet.db", f->dir);
	*state = f;
	return 0;
}

static int
fx_teardown(void **state)
{
	struct fx *f = *state;
	char      *cmd = xsprintf("rm -rf '%s'", f->dir);

	if (system(cmd) != 0)
		fprintf(stderr, "cannot remove %s\n", f->dir);
	free(cmd);
	free(f->path);
	free(f);
	return 0;
}

/* A second, independent connection: what another process would see (committed rows). */
static int64_t
raw_int(const char *path, const char *sql)
{
	sqlite3      *db = NULL;
	sqlite3_stmt *s = NULL;
	int64_t       v = -1;

	assert_int_equal(sqlite3_open_v2(path, &db, SQLITE_OPEN_READWRITE, NULL), SQLITE_OK);
	sqlite3_busy_timeout(db, 1000);
	if (sqlite3_prepare_v2(db, sql, -1, &s, NULL) == SQLITE_OK && sqlite3_step(s) == SQLITE_ROW)
		v = sqlite3_column_int64(s, 0);
	sqlite3_finalize(s);
	sqlite3_close(db);
	return v;
}

static void
raw_exec(const char *path, const char *sql)
{
	sqlite3 *db = NULL;

	assert_int_equal(
	    sqlite3_open_v2(path, &db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE, NULL),
	    SQLITE_OK);
	assert_int_equal(sqlite3_exec(db, sql, NULL, NULL, NULL), SQLITE_OK);
	sqlite3_close(db);
}

static struct store *
open_ok(struct event_base *base, const char *path)
{
	char         *err = NULL;
	struct store *st = store_open(base, path, &err);

	if (st == NULL)
		fail_msg("store_open: %s", err);
	assert_null(err);
	return st;
}

static void
put_pod(struct store *st, const char *uid, const char *doc)
{
	struct store_pod p = {
		.uid = uid,
		.source = "file",
		.ns = "default",
		.name = uid,
		.doc = doc,
		.doc_len = strlen(doc),
		.format = "json",
		.updated_wall_ms = 42,
	};

	store_put_pod(st, &p);
}

static int
count_pod(const struct store_pod *p, void *arg)
{
	(void)p;
	(*(int *)arg)++;
	return 0;
}

static int
npods(struct store *st)
{
	int n = 0;

	assert_int_equal(store_foreach_pod(st, count_pod, &n), 0);
	return n;
}

struct file_snap {
	char           *bytes;
	size_t          n;
	struct timespec mtime;
};

static void
snap(const char *path, struct file_snap *s)
{
	struct stat sb;
	FILE       *fp;

	assert_int_equal(stat(path, &sb), 0);
	s->n = (size_t)sb.st_size;
	s->mtime = sb.st_mtim;
	s->bytes = xmalloc(s->n + 1);
	fp = fopen(path, "rb");
	assert_non_null(fp);
	assert_int_equal(fread(s->bytes, 1, s->n, fp), s->n);
	fclose(fp);
}

static void
assert_untouched(const char *path, struct file_snap *before)
{
	struct file_snap after;

	snap(path, &after);
	assert_int_equal(after.n, before->n);
	assert_memory_equal(after.bytes, before->bytes, before->n);
	assert_true(after.mtime.tv_sec == before->mtime.tv_sec &&
	    after.mtime.tv_nsec == before->mtime.tv_nsec);
	free(after.bytes);
	free(before->bytes);
}

/* ---- migrations and refusals ---- */

static void
test_fresh_db(void **state)
{
	struct fx               *f = *state;
	struct store_health_info h;
	struct file_snap         s;
	struct store            *st;
	struct stat              sb;
	mode_t                   old = umask(0);

	st = open_ok(NULL, f->path);
	umask(old);
	assert_int_equal(stat(f->path, &sb), 0);
	assert_int_equal(sb.st_mode & 0777, 0600);
	assert_true(store_schema_version() >= 1);
	assert_int_equal(raw_int(f->path, "PRAGMA user_version"), store_schema_version());
	assert_int_equal(
	    raw_int(f->path,
	        "SELECT count(*) FROM sqlite_master WHERE type = 'table'"
	        " AND name IN ('pods', 'workers', 'statuses', 'container_exits', 'intents', 'events',"
	        " 'meta')"),
	    7);
	assert_int_equal(store_health(st, &h), STORE_OK);
	assert_null(h.last_error);
	assert_true(store_file_size(st) > 0);
	store_close(st);
	snap(f->path, &s);
	assert_true(s.n > 100);
	assert_int_equal(s.bytes[18], 2); /* file format: WAL */
	free(s.bytes);
}

static void
test_reopen_keeps_data(void **state)
{
	struct fx    *f = *state;
	struct store *st;
	char         *v;

	st = open_ok(NULL, f->path);
	put_pod(st, "u1", "{}");
	store_set_meta(st, "pods.resourceVersion", "1234");
	assert_int_equal(store_flush(st), 0);
	store_close(st);

	st = open_ok(NULL, f->path);
	assert_int_equal(npods(st), 1);
	v = store_get_meta(st, "pods.resourceVersion");
	assert_string_equal(v, "1234");
	free(v);
	store_close(st);
	assert_int_equal(raw_int(f->path, "PRAGMA user_version"), store_schema_version());
}

/* The text of path (at most 4 KiB), or "" when it cannot be read. */
static char *
file_text(const char *path, char *buf, size_t len)
{
	FILE  *fp = fopen(path, "re");
	size_t n = 0;

	if (fp != NULL) {
		n = fread(buf, 1, len - 1, fp);
		fclose(fp);
	}
	buf[n] = '\0';
	return buf;
}

static void
put_file(const char *path, const void *data, size_t len)
{
	assert_int_equal(write_file_replace(path, data, len, 0, 0600), 0);
}

/* Hints: a value beside the database, on a base; put without a commit, given back only on
 * its base, replaced whole, kept across a reopen; bad arguments and files that are not a
 * whole hint give nothing. */
static void
test_hints(void **state)
{
	static const struct {
		const char *text;
		size_t      len;
	} bad[] = { { "100\n", 4 }, { "100\n300", 7 }, { "100\n300\n9\n", 10 }, { "100\n\n", 5 },
		{ "100\n3\0000\n", 8 }, { "", 0 } };
	struct fx    *f = *state;
	struct store *st = open_ok(NULL, f->path);
	char         *hp = xsprintf("%s-hint-pods.resourceVersion", f->path), *tmp, *v;
	char          buf[4096], big[STORE_HINT_MAX + 2];
	uint64_t      commits;
	struct stat   sb;

	store_set_meta(st, "pods.resourceVersion", "100");
	assert_int_equal(store_flush(st), 0);
	commits = store_commits(st);
	assert_null(store_get_hint(st, "pods.resourceVersion", "100")); /* none yet */
	assert_int_equal(store_put_hint(st, "pods.resourceVersion", "100", "250"), 0);
	assert_int_equal(store_flush(st), 0);
	assert_int_equal(store_commits(st), commits); /* no SQLite write */
	assert_string_equal(file_text(hp, buf, sizeof(buf)), "100\n250\n");
	assert_int_equal(stat(hp, &sb), 0);
	assert_int_equal(sb.st_mode & 0777, 0600);
	tmp = xsprintf("%s.tmp", hp);
	assert_int_equal(access(tmp, F_OK), -1);
	v = store_get_hint(st, "pods.resourceVersion", "100");
	assert_string_equal(v, "250");
	free(v);
	/* Another base (a later write of the key, or a prefix of it): stale. */
	assert_null(store_get_hint(st, "pods.resourceVersion", "101"));
	assert_null(store_get_hint(st, "pods.resourceVersion", "10"));
	assert_null(store_get_hint(st, "other", "100"));
	/* Replaced whole. */
	assert_int_equal(store_put_hint(st, "pods.resourceVersion", "100", "300"), 0);
	/* Bad arguments: refused, the file unchanged. */
	memset(big, '7', sizeof(big) - 1);
	big[sizeof(big) - 1] = '\0';
	errno = 0;
	assert_int_equal(store_put_hint(st, "a/b", "100", "1"), -1);
	assert_int_equal(errno, EINVAL);
	assert_int_equal(store_put_hint(st, "..", "100", "1"), -1);
	assert_int_equal(store_put_hint(st, "pods.resourceVersion", "", "1"), -1);
	assert_int_equal(store_put_hint(st, "pods.resourceVersion", "100", ""), -1);
	assert_int_equal(store_put_hint(st, "pods.resourceVersion", "100", "3\n4"), -1);
	assert_int_equal(store_put_hint(st, "pods.resourceVersion", "100", big), -1);
	assert_int_equal(store_put_hint(st, "pods.resourceVersion", NULL, "1"), -1);
	assert_int_equal(store_put_hint(NULL, "pods.resourceVersion", "100", "1"), -1);
	assert_null(store_get_hint(NULL, "pods.resourceVersion", "100"));
	assert_null(store_get_hint(st, "pods.resourceVersion", ""));
	assert_string_equal(file_text(hp, buf, sizeof(buf)), "100\n300\n");
	/* Kept across a reopen. */
	store_close(st);
	st = open_ok(NULL, f->path);
	v = store_get_hint(st, "pods.resourceVersion", "100");
	assert_string_equal(v, "300");
	free(v);
	/* Files that are not a whole hint: cut (a power cut), grown, empty parts, a NUL. */
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		put_file(hp, bad[i].text, bad[i].len);
		assert_null(store_get_hint(st, "pods.resourceVersion", "100"));
	}
	memset(buf, '1', sizeof(buf));
	buf[3] = '\n';
	buf[sizeof(buf) - 1] = '\n';
	put_file(hp, buf, sizeof(buf));
	assert_null(store_get_hint(st, "pods.resourceVersion", "1"));
	assert_null(store_get_hint(st, "pods.resourceVersion", "111"));
	/* Not a regular file: a FIFO (no writer: an open would wait) or a link to a good hint
	 * gives nothing, at once; a FIFO where the new hint is written first (no reader) fails
	 * the put, at once. */
	assert_int_equal(unlink(hp), 0);
	assert_int_equal(mkfifo(hp, 0600), 0);
	assert_null(store_get_hint(st, "pods.resourceVersion", "100"));
	assert_int_equal(unlink(hp), 0);
	put_file(tmp, "100\n300\n", 8);
	assert_int_equal(symlink(tmp, hp), 0);
	assert_null(store_get_hint(st, "pods.resourceVersion", "100"));
	assert_int_equal(unlink(hp), 0);
	assert_int_equal(unlink(tmp), 0);
	assert_int_equal(mkfifo(tmp, 0600), 0);
	assert_int_equal(store_put_hint(st, "pods.resourceVersion", "100", "400"), -1);
	assert_int_equal(access(hp, F_OK), -1);
	assert_int_equal(store_put_hint(st, "pods.resourceVersion", "100", "400"), 0);
	/* The longest value there is: read back whole. */
	assert_int_equal(store_put_hint(st, "pods.resourceVersion", "100", big + 1), 0);
	v = store_get_hint(st, "pods.resourceVersion", "100");
	assert_string_equal(v, big + 1);
	free(v);
	store_close(st);
	free(tmp);
	free(hp);
}

/* store_release_memory between writes (an idle daemon's drop): the journal's slots go and
 * come back; more writes in one turn than the first slots hold; nothing is lost. */
static void
test_release_between_writes(void **state)
{
	struct fx    *f = *state;
	struct store *st;
	char          key[16], *v;
	int           i;

	st = open_ok(NULL, f->path);
	store_release_memory(st); /* before any write */
	store_set_meta(st, "a", "1");
	assert_int_equal(store_flush(st), 0);
	store_release_memory(st);
	for (i = 0; i < 100; i++) { /* one transaction: the slots grow past the first 8 */
		snprintf(key, sizeof(key), "k%d", i);
		store_set_meta(st, key, key);
	}
	store_release_memory(st); /* writes waiting: kept */
	assert_int_equal(store_flush(st), 0);
	store_release_memory(st);
	store_close(st);

	st = open_ok(NULL, f->path);
	v = store_get_meta(st, "a");
	assert_string_equal(v, "1");
	free(v);
	v = store_get_meta(st, "k99");
	assert_string_equal(v, "k99");
	free(v);
	store_close(st);
}

static void
test_newer_db_refused(void **state)
{
	struct fx       *f = *state;
	struct file_snap s;
	struct store    *st;
	char            *err = NULL;

	raw_exec(f->path, "CREATE TABLE t (x); PRAGMA user_version = 999;");
	snap(f->path, &s);
	st = store_open(NULL, f->path, &err);
	assert_null(st);
	assert_non_null(err);
	assert_non_null(strstr(err, "newer"));
	free(err);
	assert_untouched(f->path, &s);
	assert_int_equal(raw_int(f->path, "PRAGMA user_version"), 999);
}

/* Table: files that are not (sound) databases. */
static const struct bad_file {
	const char *name;
	const char *content; /* written as is (len bytes) */
	size_t      len;
	size_t      corrupt_at; /* else: a real db with garbage written at this offset */
	const char *want;       /* in the error */
} bad_files[] = {
	{ "text", "hello, this is not a database\n", 30, 0, "not a usable SQLite database" },
	{ "header-like", "SQLite format 3\0garbage garbage garbage garbage garbage", 56, 0, "" },
	{ "corrupt-page", NULL, 0, 4096, "corrupt" },
	{ "foreign-db", NULL, 0, 0, "without a klet schema version" },
};

static void
write_file(const char *path, const char *buf, size_t n, off_t at)
{
	int fd = open(path, O_WRONLY | O_CREAT, 0600);

	assert_true(fd >= 0);
	assert_int_equal(pwrite(fd, buf, n, at), (ssize_t)n);
	close(fd);
}

static void
test_bad_file_refused(void **state)
{
	struct fx *f = *state;
	size_t     i;

	for (i = 0; i < nitems(bad_files); i++) {
		const struct bad_file *b = &bad_files[i];
		struct file_snap       s;
		struct store          *st;
		char                  *err = NULL, junk[512];

		unlink(f->path);
		if (b->content != NULL)
			write_file(f->path, b->content, b->len, 0);
		else {
			raw_exec(f->path,
			    "CREATE TABLE a (x); CREATE TABLE b (y);"
			    " INSERT INTO a VALUES (randomblob(3000));"
			    " INSERT INTO b VALUES (randomblob(3000));");
			if (b->corrupt_at > 0) /* passes the version checks, fails quick_check */
				raw_exec(f->path, "PRAGMA user_version = 1");
			memset(junk, 0xa5, sizeof(junk));
			if (b->corrupt_at > 0)
				write_file(f->path, junk, sizeof(junk), (off_t)b->corrupt_at);
		}
		snap(f->path, &s);
		st = store_open(NULL, f->path, &err);
		if (st != NULL)
			fail_msg("case %s: opened", b->name);
		assert_non_null(err);
		if (strstr(err, b->want) == NULL || strstr(err, "refusing") == NULL)
			fail_msg("case %s: error %s", b->name, err);
		free(err);
		assert_untouched(f->path, &s);
	}
}

/* A file the daemon cannot write (mode 0400, not root): the store starts degraded from a
 * copy in memory (reads see the file's rows and new writes), the file is left untouched,
 * and once it is writable again the retry replays the writes into it. Run in a child that
 * is not root (root writes any mode). */
static void
test_readonly_file_runs_from_memory(void **state)
{
	struct fx       *f = *state;
	struct file_snap s;
	struct store    *st;
	int              status;
	pid_t            pid;

	st = open_ok(NULL, f->path);
	put_pod(st, "old", "{}");
	store_close(st);
	assert_int_equal(chmod(f->path, 0400), 0);
	snap(f->path, &s);
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		struct store_health_info h;
		char                    *err = NULL;
		int                      n = 0;

		if (geteuid() == 0 &&
		    (chown(f->dir, 65534, 65534) == -1 || chown(f->path, 65534, 65534) == -1 ||
		        setgid(65534) == -1 || setuid(65534) == -1))
			_exit(2);
		st = store_open(NULL, f->path, &err);
		if (st == NULL)
			_exit(3);
		if (store_health(st, &h) != STORE_DEGRADED || h.last_error == NULL ||
		    strstr(h.last_error, "copy in memory") == NULL)
			_exit(4);
		put_pod(st, "new", "{}");
		if (store_foreach_pod(st, count_pod, &n) != 0 || n != 2)
			_exit(5);
		if (store_flush(st) != -1) /* still read-only */
			_exit(6);
		store_close(st);
		_exit(0);
	}
	assert_int_equal(waitpid(pid, &status, 0), pid);
	assert_true(WIFEXITED(status));
	assert_int_equal(WEXITSTATUS(status), 0);
	assert_untouched(f->path, &s);

	/* Writable again while running: the retry replays into the file. */
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		struct store_health_info h;
		int                      rc;

		if (geteuid() == 0 && (setgid(65534) == -1 || setuid(65534) == -1))
			_exit(2);
		st = store_open(NULL, f->path, NULL);
		if (st == NULL)
			_exit(3);
		put_pod(st, "new", "{}");
		if (chmod(f->path, 0600) == -1)
			_exit(4);
		rc = store_flush(st);
		if (store_health(st, &h) != STORE_OK || rc != 0) {
			fprintf(stderr, "flush %d: %s\n", rc, h.last_error ? h.last_error : "?");
			_exit(5);
		}
		store_close(st);
		_exit(0);
	}
	assert_int_equal(waitpid(pid, &status, 0), pid);
	assert_true(WIFEXITED(status));
	assert_int_equal(WEXITSTATUS(status), 0);
	assert_int_equal(raw_int(f->path, "SELECT count(*) FROM pods"), 2);
}

/* No file and a file system that cannot take one (a missing directory stands in for a
 * read-only or full one here: the file cannot be created): refused only for errors that
 * will not pass; EROFS / ENOSPC start from memory (checked on a real read-only mount by
 * tests/crash/test_crash_store.sh). */

static void
test_not_regular_refused(void **state)
{
	struct fx *f = *state;
	char      *err = NULL;

	assert_int_equal(mkdir(f->path, 0700), 0);
	assert_null(store_open(NULL, f->path, &err));
	assert_non_null(strstr(err, "not a regular file"));
	free(err);
	rmdir(f->path);
}

/* ---- batching on the loop ---- */

struct turn {
	struct loop  *l;
	struct store *st;
	const char   *path;
	int           order[8];
	int           norder;
	int64_t       seen_by_other; /* pods another connection saw inside the callback */
	uint64_t      commits_before;
};

static void
cb_first(void *arg)
{
	struct turn *t = arg;

	t->order[t->norder++] = 1;
	/* Runs after COMMIT: another connection sees every write of the turn. */
	t->seen_by_other = raw_int(t->path, "SELECT count(*) FROM pods");
}

static void
cb_second(void *arg)
{
	struct turn *t = arg;

	t->order[t->norder++] = 2;
}

static void
cb_stop(void *arg)
{
	struct turn *t = arg;

	t->order[t->norder++] = 3;
	loop_stop(t->l);
}

static void
turn_writes(void *arg)
{
	struct turn             *t = arg;
	struct store_health_info h;
	char                     uid[16];
	int                      i;

	store_health(t->st, &h);
	t->commits_before = h.commits;
	for (i = 0; i < 20; i++) {
		snprintf(uid, sizeof(uid), "p%02d", i);
		put_pod(t->st, uid, "{\"a\":1}");
		if (i == 5)
			store_after_commit(t->st, cb_first, t);
	}
	store_after_commit(t->st, cb_second, t);
	/* Not yet visible outside, and callbacks never run inside the call. */
	assert_int_equal(raw_int(t->path, "SELECT count(*) FROM pods"), 0);
	assert_int_equal(t->norder, 0);
	/* The store's own reads see the turn's writes. */
	assert_int_equal(npods(t->st), 20);
	store_after_commit(t->st, cb_stop, t);
}

static void
test_batching_one_txn_per_turn(void **state)
{
	struct fx               *f = *state;
	struct store_health_info h;
	struct turn              t = { 0 };

	t.l = loop_new();
	t.st = open_ok(loop_base(t.l), f->path);
	t.path = f->path;
	loop_task_kick(loop_every(t.l, "writer", 60000, turn_writes, &t));
	assert_int_equal(loop_run(t.l), 0);
	assert_int_equal(t.norder, 3);
	assert_int_equal(t.order[0], 1);
	assert_int_equal(t.order[1], 2);
	assert_int_equal(t.order[2], 3);
	assert_int_equal(t.seen_by_other, 20);
	store_health(t.st, &h);
	assert_int_equal(h.commits, t.commits_before + 1);
	assert_int_equal(h.journal_ops, 0);
	store_close(t.st);
	loop_free(t.l);
}

static void
cb_count(void *arg)
{
	(*(int *)arg)++;
}

struct chain {
	struct store *st;
	int           runs;
};

/* An acknowledgement that writes again (e.g. the next status version). */
static void
cb_write_again(void *arg)
{
	struct chain *c = arg;

	if (++c->runs < 3) {
		store_put_status(c->st, "chain", c->runs, "{}");
		store_after_commit(c->st, cb_write_again, c);
	}
}

static void
test_close_commits_callback_writes(void **state)
{
	struct fx   *f = *state;
	struct chain c = { open_ok(NULL, f->path), 0 };

	store_put_status(c.st, "chain", 0, "{}");
	store_after_commit(c.st, cb_write_again, &c);
	store_close(c.st);
	assert_int_equal(c.runs, 3);
	assert_int_equal(raw_int(f->path, "SELECT version FROM statuses"), 2);
}

static void
test_after_commit_without_writes(void **state)
{
	struct fx    *f = *state;
	struct store *st = open_ok(NULL, f->path);
	int           n = 0;

	store_after_commit(st, cb_count, &n);
	assert_int_equal(n, 0);
	assert_int_equal(store_flush(st), 0);
	assert_int_equal(n, 1);
	store_close(st);
}

/* ---- typed rows ---- */

static int
collect_worker(const struct store_worker *w, void *arg)
{
	char  *buf = arg;
	size_t len = strlen(buf);

	snprintf(buf + len, 512 - len, "%s:%s:%lld:%lld:%s:%s:%d:%lld:%d;", w->uid, w->state,
	    (long long)w->grace_seconds, (long long)w->grace_deadline_wall_ms,
	    w->step ? w->step : "-", w->last_error ? w->last_error : "-", w->failures,
	    (long long)w->next_retry_wall_ms, w->removed);
	return 0;
}

static int
collect_status(const struct store_status *s, void *arg)
{
	char  *buf = arg;
	size_t len = strlen(buf);

	snprintf(buf + len, 512 - len, "%s:%lld:%s:%lld;", s->uid, (long long)s->version,
	    s->json ? s->json : "-", (long long)s->acked_version);
	return 0;
}

static int
collect_exit(const struct store_exit *x, void *arg)
{
	char  *buf = arg;
	size_t len = strlen(buf);

	snprintf(buf + len, 512 - len, "%s:%s:%s:%d:%d:%s:%s:%lld:%lld;", x->container_id, x->uid,
	    x->name, x->restart_count, x->exit_code, x->reason ? x->reason : "-",
	    x->message ? x->message : "-", (long long)x->started_ns, (long long)x->finished_ns);
	return 0;
}

static int
collect_intent(const struct store_intent *in, void *arg)
{
	char  *buf = arg;
	size_t len = strlen(buf);

	snprintf(buf + len, 512 - len, "%s:%s:%s:%lld:%lld;", in->uid, in->kind, in->name,
	    (long long)in->attempt, (long long)in->created_wall_ms);
	return 0;
}

static int
collect_pod(const struct store_pod *p, void *arg)
{
	char  *buf = arg;
	size_t len = strlen(buf);

	snprintf(buf + len, 512 - len, "%s:%s:%s:%s:%.*s:%s:%lld;", p->uid, p->source, p->ns,
	    p->name, (int)p->doc_len, (const char *)p->doc, p->format,
	    (long long)p->updated_wall_ms);
	return 0;
}

static int
stop_at_first(const struct store_pod *p, void *arg)
{
	(void)p;
	(*(int *)arg)++;
	return 1;
}

/* Each case writes through the typed API, then the listing must read back as want. */
struct row_case {
	const char *name;
	void (*write)(struct store *);
	int (*list)(struct store *, char *);
	const char *want;
};

static void
w_pods(struct store *st)
{
	struct store_pod y = { .uid = "b",
		.source = "api",
		.ns = "kube-system",
		.name = "dns",
		.doc = "a: 1\n",
		.doc_len = 5,
		.format = "yaml",
		.updated_wall_ms = 7 };

	put_pod(st, "a", "{}");
	store_put_pod(st, &y);
	put_pod(st, "c", "{}");
	put_pod(st, "a", "{\"v\":2}"); /* replaces */
	store_del_pod(st, "c");
}

static int
l_pods(struct store *st, char *buf)
{
	return store_foreach_pod(st, collect_pod, buf);
}

static void
w_workers(struct store *st)
{
	struct store_worker w = { .uid = "a", .state = "sync" };
	struct store_worker t = { .uid = "b",
		.state = "terminating",
		.grace_seconds = 30,
		.grace_deadline_wall_ms = 1700000030000,
		.step = "kill",
		.last_error = "boom",
		.failures = 2,
		.next_retry_wall_ms = 1700000010000,
		.removed = 1 };
	struct store_worker bad = { .uid = "c", .state = "bogus" };

	store_put_worker(st, &w);
	store_put_worker(st, &t);
	store_put_worker(st, &bad); /* refused: not a state */
	w.uid = "d";
	store_put_worker(st, &w);
	store_del_worker(st, "d");
}

static int
l_workers(struct store *st, char *buf)
{
	return store_foreach_worker(st, collect_worker, buf);
}

static void
w_statuses(struct store *st)
{
	store_put_status(st, "a", 1, "{\"phase\":\"Pending\"}");
	store_ack_status(st, "a", 1);
	store_put_status(st, "a", 2, "{\"phase\":\"Running\"}"); /* keeps acked 1 */
	store_ack_status(st, "b", 3);                            /* ack before put */
	store_put_status(st, "b", 4, "{}");
	store_ack_status(st, "b", 2); /* never goes back */
}

static int
l_statuses(struct store *st, char *buf)
{
	return store_foreach_status(st, collect_status, buf);
}

static void
w_exits(struct store *st)
{
	struct store_exit x = { .container_id = "c1",
		.uid = "a",
		.name = "app",
		.restart_count = 0,
		.exit_code = 1,
		.reason = "Error",
		.message = "bad",
		.started_ns = 10,
		.finished_ns = 20 };

	store_put_exit(st, &x);
	x.container_id = "c2";
	x.restart_count = 1;
	x.exit_code = 137;
	x.reason = "OOMKilled";
	x.message = NULL;
	store_put_exit(st, &x);
	x.container_id = "c3";
	x.uid = "b";
	store_put_exit(st, &x);
	x.container_id = "c4";
	x.uid = "z";
	store_put_exit(st, &x);
	store_del_exits_for(st, "z");
}

static int
l_exits(struct store *st, char *buf)
{
	return store_foreach_exit(st, NULL, collect_exit, buf);
}

static int
l_exits_of_b(struct store *st, char *buf)
{
	return store_foreach_exit(st, "b", collect_exit, buf);
}

static void
w_intents(struct store *st)
{
	struct store_intent s = {
		.uid = "a", .kind = "sandbox", .name = NULL, .attempt = 0, .created_wall_ms = 5
	};
	struct store_intent c = {
		.uid = "a", .kind = "container", .name = "app", .attempt = 3, .created_wall_ms = 6
	};

	store_put_intent(st, &s);
	store_put_intent(st, &c);
	s.attempt = 1;
	store_put_intent(st, &s);
	store_del_intent(st, "a", "sandbox", "", 0);
	c.kind = "volume"; /* refused */
	store_put_intent(st, &c);
}

static int
l_intents(struct store *st, char *buf)
{
	return store_foreach_intent(st, NULL, collect_intent, buf);
}

/* The intents above and one of another pod, read for pod "a" only. */
static void
w_intents_two(struct store *st)
{
	struct store_intent b = {
		.uid = "b", .kind = "sandbox", .name = "", .attempt = 0, .created_wall_ms = 7
	};

	w_intents(st);
	store_put_intent(st, &b);
}

static int
l_intents_of_a(struct store *st, char *buf)
{
	return store_foreach_intent(st, "a", collect_intent, buf);
}

static void
w_meta(struct store *st)
{
	store_set_meta(st, "k1", "v1");
	store_set_meta(st, "k2", "v2");
	store_set_meta(st, "k1", "v1b");
	store_set_meta(st, "k2", NULL);
}

static int
l_meta(struct store *st, char *buf)
{
	char *a = store_get_meta(st, "k1"), *b = store_get_meta(st, "k2");

	snprintf(buf, 512, "k1=%s k2=%s", a ? a : "(nil)", b ? b : "(nil)");
	free(a);
	free(b);
	return 0;
}

static int
collect_rtobj(const struct store_rtobj *o, void *arg)
{
	char  *buf = arg;
	size_t len = strlen(buf);

#define S_(x) ((x) != NULL ? (x) : "-")
	snprintf(buf + len, 512 - len, "%s:%s:%d:%d:%lld:%lld:%d:%s:%s:%s:%s:%s:%d;", o->id, o->uid,
	    o->sandbox, o->state, (long long)o->started_ns, (long long)o->finished_ns, o->exit_code,
	    S_(o->reason), S_(o->message), S_(o->image_ref), S_(o->ip), S_(o->extra_ips),
	    o->network_mode);
#undef S_
	return 0;
}

static void
w_rtobjs(struct store *st)
{
	struct store_rtobj c = {
		.id = "c1", .uid = "a", .state = 1, .started_ns = 10, .image_ref = "sha256:1"
	};
	struct store_rtobj sb = { .id = "s1",
		.uid = "a",
		.sandbox = 1,
		.state = 1,
		.ip = "10.0.0.1",
		.extra_ips = "fd00::1 10.0.0.2",
		.network_mode = 1 };
	struct store_rtobj gone = { .id = "c9", .uid = "b", .state = 1 };

	store_put_rtobj(st, &c);
	c.id = "c2";
	store_put_rtobj(st, &c);
	c.state = 2; /* c2 exited: replaced */
	c.finished_ns = 20;
	c.exit_code = 3;
	c.reason = "Error";
	c.message = "bad";
	store_put_rtobj(st, &c);
	store_put_rtobj(st, &sb);
	store_put_rtobj(st, &gone);
	store_del_rtobj(st, "c9");
	gone.id = NULL; /* refused: no id */
	store_put_rtobj(st, &gone);
	gone.id = "c8";
	store_put_rtobj(st, &gone);
	store_forget_pod(st, "b"); /* takes the runtime objects of pod b too */
}

static int
l_rtobjs(struct store *st, char *buf)
{
	return store_foreach_rtobj(st, collect_rtobj, buf);
}

static const struct row_case row_cases[] = {
	{ "pods", w_pods, l_pods,
	    "a:file:default:a:{\"v\":2}:json:42;b:api:kube-system:dns:a: 1\n:yaml:7;" },
	{ "workers", w_workers, l_workers,
	    "a:sync:0:0:-:-:0:0:0;b:terminating:30:1700000030000:kill:boom:2:1700000010000:1;" },
	{ "runtime objects", w_rtobjs, l_rtobjs,
	    "c1:a:0:1:10:0:0:-:-:sha256:1:-:-:0;c2:a:0:2:10:20:3:Error:bad:sha256:1:-:-:0;"
	    "s1:a:1:1:0:0:0:-:-:-:10.0.0.1:fd00::1 10.0.0.2:1;" },
	{ "statuses", w_statuses, l_statuses, "a:2:{\"phase\":\"Running\"}:1;b:4:{}:3;" },
	{ "exits", w_exits, l_exits,
	    "c1:a:app:0:1:Error:bad:10:20;c2:a:app:1:137:OOMKilled:-:10:20;"
	    "c3:b:app:1:137:OOMKilled:-:10:20;" },
	{ "exits-of-one-pod", w_exits, l_exits_of_b, "c3:b:app:1:137:OOMKilled:-:10:20;" },
	{ "intents", w_intents, l_intents, "a:container:app:3:6;a:sandbox::1:5;" },
	{ "intents-of-one-pod", w_intents_two, l_intents_of_a,
	    "a:container:app:3:6;a:sandbox::1:5;" },
	{ "meta", w_meta, l_meta, "k1=v1b k2=(nil)" },
};

static void
test_typed_rows(void **state)
{
	struct fx *f = *state;
	size_t     i;
	int        pass;

	for (i = 0; i < nitems(row_cases); i++) {
		const struct row_case *c = &row_cases[i];

		unlink(f->path);
		struct store *st = open_ok(NULL, f->path);

		c->write(st);
		/* Before the commit (same connection), after it, and after a reopen. */
		for (pass = 0; pass < 3; pass++) {
			char buf[512] = "";

			if (pass == 1)
				assert_int_equal(store_flush(st), 0);
			if (pass == 2) {
				store_close(st);
				st = open_ok(NULL, f->path);
			}
			assert_int_equal(c->list(st, buf), 0);
			if (strcmp(buf, c->want) != 0)
				fail_msg("case %s pass %d:\n got  %s\n want %s", c->name, pass, buf,
				    c->want);
		}
		store_close(st);
	}
}

/* A database made by the first release (schema 001 only) is migrated in place: its rows
 * stay, workers get removed = 0, runtime_objects appears. */
static void
test_upgrade_from_001(void **state)
{
	static const struct {
		const char *name, *sql;
	} mig[] = {
#include "store-schema.h"
	};
	struct fx    *f = *state;
	struct store *st;
	char          buf[512] = "";

	assert_string_equal(mig[0].name, "001-init");
	raw_exec(f->path, mig[0].sql);
	raw_exec(f->path,
	    "INSERT INTO workers (uid, state, grace_seconds,"
	    " grace_deadline_wall_ms) VALUES ('old', 'terminating', 5, 1700000000000);"
	    " PRAGMA user_version = 1;");
	st = open_ok(NULL, f->path);
	assert_int_equal(raw_int(f->path, "PRAGMA user_version"), store_schema_version());
	assert_true(store_schema_version() >= 2);
	assert_int_equal(store_foreach_worker(st, collect_worker, buf), 0);
	assert_string_equal(buf, "old:terminating:5:1700000000000:-:-:0:0:0;");
	w_rtobjs(st);
	assert_int_equal(store_flush(st), 0);
	buf[0] = '\0';
	assert_int_equal(store_foreach_rtobj(st, collect_rtobj, buf), 0);
	assert_non_null(strstr(buf, "s1:a:1:1"));
	store_close(st);
}

static void
test_foreach_stops(void **state)
{
	struct fx    *f = *state;
	struct store *st = open_ok(NULL, f->path);
	int           n = 0;

	put_pod(st, "a", "{}");
	put_pod(st, "b", "{}");
	assert_int_equal(store_foreach_pod(st, stop_at_first, &n), 0);
	assert_int_equal(n, 1);
	store_close(st);
}

static void
test_null_store(void **state)
{
	struct store_health_info h;
	int                      n = 0;

	(void)state;
	put_pod(NULL, "a", "{}");
	store_put_status(NULL, "a", 1, "{}");
	store_forget_pod(NULL, "a");
	assert_int_equal(store_foreach_pod(NULL, count_pod, &n), 0);
	assert_int_equal(n, 0);
	assert_null(store_get_meta(NULL, "k"));
	assert_int_equal(store_checkpoint(NULL), 0);
	assert_int_equal(store_flush(NULL), 0);
	assert_int_equal(store_health(NULL, &h), STORE_OK);
	assert_int_equal(store_file_size(NULL), 0);
	store_close(NULL);
}

struct writer {
	struct store *st;
	int           n;
};

/* Writes from inside a read: each pod gets a worker row. */
static int
write_while_reading(const struct store_pod *p, void *arg)
{
	struct writer      *w = arg;
	struct store_worker sw = { .uid = p->uid, .state = "sync" };

	store_put_worker(w->st, &sw);
	w->n++;
	return 0;
}

static void
test_write_inside_foreach(void **state)
{
	struct fx    *f = *state;
	struct writer w = { open_ok(NULL, f->path), 0 };

	put_pod(w.st, "a", "{}");
	put_pod(w.st, "b", "{}");
	assert_int_equal(store_flush(w.st), 0);
	assert_int_equal(store_foreach_pod(w.st, write_while_reading, &w), 0);
	assert_int_equal(w.n, 2);
	assert_int_equal(store_flush(w.st), 0);
	assert_int_equal(raw_int(f->path, "SELECT count(*) FROM workers"), 2);
	store_close(w.st);
}

static void
test_forget_pod(void **state)
{
	struct fx          *f = *state;
	struct store       *st = open_ok(NULL, f->path);
	struct store_worker w = { .uid = "gone", .state = "finished" };
	struct store_exit   x = { .container_id = "c", .uid = "gone", .name = "app" };
	struct store_intent in = { .uid = "gone", .kind = "sandbox" };
	const char *tables[] = { "pods", "workers", "statuses", "container_exits", "intents",
		"events" };
	size_t      i;

	put_pod(st, "gone", "{}");
	put_pod(st, "kept", "{}");
	store_put_worker(st, &w);
	store_put_status(st, "gone", 1, "{}");
	store_put_exit(st, &x);
	store_put_intent(st, &in);
	store_put_event(st, "gone", "Started", "hi", 1);
	store_put_event(st, "kept", "Started", "hi", 1);
	assert_int_equal(store_flush(st), 0);
	store_forget_pod(st, "gone");
	assert_int_equal(store_flush(st), 0);
	for (i = 0; i < nitems(tables); i++) {
		char *sql = xsprintf("SELECT count(*) FROM %s WHERE uid = 'gone'", tables[i]);

		assert_int_equal(raw_int(f->path, sql), 0);
		free(sql);
	}
	assert_int_equal(raw_int(f->path, "SELECT count(*) FROM pods WHERE uid = 'kept'"), 1);
	assert_int_equal(raw_int(f->path, "SELECT count(*) FROM events WHERE uid = 'kept'"), 1);
	store_close(st);
}

/* Forgotten pods give their pages back at a checkpoint: the file stays bounded. */
static void
test_forget_shrinks_file(void **state)
{
	struct fx    *f = *state;
	struct store *st = open_ok(NULL, f->path);
	char          uid[16], *doc = xmalloc(20001);
	int64_t       before, full, after;
	int           i;

	assert_int_equal(raw_int(f->path, "PRAGMA auto_vacuum"), 2);
	before = raw_int(f->path, "PRAGMA page_count");
	memset(doc, 'y', 20000);
	doc[20000] = '\0';
	for (i = 0; i < 50; i++) {
		snprintf(uid, sizeof(uid), "big%02d", i);
		put_pod(st, uid, doc);
	}
	assert_int_equal(store_flush(st), 0);
	full = raw_int(f->path, "PRAGMA page_count");
	for (i = 0; i < 50; i++) {
		snprintf(uid, sizeof(uid), "big%02d", i);
		store_forget_pod(st, uid);
	}
	assert_int_equal(store_flush(st), 0);
	assert_int_equal(store_checkpoint(st), 0);
	after = raw_int(f->path, "PRAGMA page_count");
	assert_true(full > before + 200);
	assert_true(after < before + 10);
	free(doc);
	store_close(st);
}

static void
test_events_bounded(void **state)
{
	struct fx    *f = *state;
	struct store *st = open_ok(NULL, f->path);
	int           i;

	for (i = 0; i < STORE_MAX_EVENTS + 150; i++)
		store_put_event(st, "u", "Reason", "message", i);
	assert_int_equal(store_flush(st), 0);
	assert_int_equal(raw_int(f->path, "SELECT count(*) FROM events"), STORE_MAX_EVENTS);
	assert_int_equal(raw_int(f->path, "SELECT min(wall_ms) FROM events"), 150);
	store_close(st);
}

/* ---- faults ---- */

/* Table: a way to make writes fail, and how to undo it. */
static const struct fault_case {
	const char *name;
	const char *inject;
	const char *heal;
	const char *want_error;
} fault_cases[] = {
	{ "read-only", "PRAGMA query_only = 1", "PRAGMA query_only = 0", "readonly" },
	{ "disk-full", "PRAGMA max_page_count = 1", "PRAGMA max_page_count = 1000000", "full" },
};

static void
inject(struct store *st, const struct fault_case *c)
{
	/* max_page_count cannot go below the current size: that is the "full" point. */
	assert_int_equal(store_test_exec(st, c->inject), 0);
}

static void
test_faults_degrade_and_recover(void **state)
{
	struct fx *f = *state;
	size_t     i;

	for (i = 0; i < nitems(fault_cases); i++) {
		const struct fault_case *c = &fault_cases[i];
		struct store_health_info h;
		struct store            *st;
		char                     big[8192], uid[16], *v;
		int                      n = 0, k;

		unlink(f->path);
		st = open_ok(NULL, f->path);
		put_pod(st, "before", "{}");
		assert_int_equal(store_flush(st), 0);
		inject(st, c);

		memset(big, 'x', sizeof(big) - 1);
		big[sizeof(big) - 1] = '\0';
		for (k = 0; k < 20; k++) {
			snprintf(uid, sizeof(uid), "p%02d", k);
			put_pod(st, uid, big);
		}
		store_set_meta(st, "rv", "99");
		store_after_commit(st, cb_count, &n);
		assert_int_equal(store_flush(st), -1);
		assert_int_equal(store_health(st, &h), STORE_DEGRADED);
		if (h.last_error == NULL || strcasestr(h.last_error, c->want_error) == NULL)
			fail_msg("case %s: last error %s", c->name, h.last_error);
		assert_int_equal(h.journal_ops, 21);
		assert_true(h.failed_since_wall_ms > 0);
		assert_int_equal(n, 0); /* not acknowledged: not durable */
		/* The journal answers meta reads. */
		v = store_get_meta(st, "rv");
		assert_string_equal(v, "99");
		free(v);
		/* More writes while degraded keep queueing; retries keep failing. */
		put_pod(st, "later", "{}");
		assert_int_equal(store_flush(st), -1);
		assert_int_equal(store_checkpoint(st), 0);
		assert_int_equal(n, 0);
		assert_int_equal(raw_int(f->path, "SELECT count(*) FROM pods"), 1);
		/* Reads see the journal: 1 committed + 20 + "later", then one forgotten. */
		assert_int_equal(npods(st), 22);
		store_forget_pod(st, "p00");
		assert_int_equal(npods(st), 21);
		assert_int_equal(store_health(st, &h), STORE_DEGRADED);

		assert_int_equal(store_test_exec(st, c->heal), 0);
		assert_int_equal(store_flush(st), 0);
		assert_int_equal(store_health(st, &h), STORE_OK);
		assert_int_equal(h.journal_ops, 0);
		assert_int_equal(n, 1);
		assert_int_equal(raw_int(f->path, "SELECT count(*) FROM pods"), 21);
		assert_int_equal(
		    raw_int(f->path, "SELECT count(*) FROM pods WHERE uid = 'p00'"), 0);
		store_close(st);
		st = open_ok(NULL, f->path);
		v = store_get_meta(st, "rv");
		assert_string_equal(v, "99");
		free(v);
		store_close(st);
	}
}

struct retry_turn {
	struct loop  *l;
	struct store *st;
	int           acked;
	int           healed;
	int           polls;
};

static void
retry_ack(void *arg)
{
	struct retry_turn *t = arg;

	t->acked = 1;
}

static void
retry_poll(void *arg)
{
	struct retry_turn       *t = arg;
	struct store_health_info h;

	t->polls++;
	if (t->polls == 1) {
		/* Turn 1: fail. */
		store_test_exec(t->st, "PRAGMA query_only = 1");
		put_pod(t->st, "x", "{}");
		store_after_commit(t->st, retry_ack, t);
		return;
	}
	if (t->polls == 3) {
		/* Degraded and not acknowledged until here; heal: the retry timer commits. */
		assert_int_equal(store_health(t->st, &h), STORE_DEGRADED);
		assert_int_equal(t->acked, 0);
		store_test_exec(t->st, "PRAGMA query_only = 0");
		t->healed = 1;
	}
	if (t->healed && t->acked && store_health(t->st, &h) == STORE_OK)
		loop_stop(t->l);
}

static void
test_retry_timer_recovers(void **state)
{
	struct fx        *f = *state;
	struct retry_turn t = { 0 };

	t.l = loop_new();
	t.st = open_ok(loop_base(t.l), f->path);
	loop_every(t.l, "poll", 20, retry_poll, &t);
	assert_int_equal(loop_run(t.l), 0);
	assert_int_equal(t.acked, 1);
	assert_int_equal(raw_int(f->path, "SELECT count(*) FROM pods WHERE uid = 'x'"), 1);
	store_close(t.st);
	loop_free(t.l);
}

static void
test_journal_compacts(void **state)
{
	struct fx               *f = *state;
	struct store_health_info h;
	struct store            *st = open_ok(NULL, f->path);
	char                     doc[32];
	int                      i;

	store_test_exec(st, "PRAGMA query_only = 1");
	for (i = 0; i < 2000; i++) {
		snprintf(doc, sizeof(doc), "{\"v\":%d}", i);
		put_pod(st, i % 2 ? "odd" : "even", doc);
		store_put_status(st, "odd", i, doc);
		store_ack_status(st, "odd", i / 2);
		store_put_event(st, "odd", "R", "m", i);
	}
	store_flush(st);
	assert_int_equal(store_health(st, &h), STORE_DEGRADED);
	assert_true(h.journal_ops < 4 * STORE_MAX_EVENTS);
	store_test_exec(st, "PRAGMA query_only = 0");
	assert_int_equal(store_flush(st), 0);
	assert_int_equal(raw_int(f->path, "SELECT count(*) FROM pods"), 2);
	assert_int_equal(
	    raw_int(f->path,
	        "SELECT count(*) FROM pods WHERE uid = 'odd' AND CAST(doc AS TEXT) = '{\"v\":1999}'"),
	    1);
	assert_int_equal(raw_int(f->path, "SELECT version FROM statuses"), 1999);
	assert_int_equal(raw_int(f->path, "SELECT acked_version FROM statuses"), 999);
	assert_int_equal(raw_int(f->path, "SELECT max(wall_ms) FROM events"), 1999);
	assert_int_equal(raw_int(f->path, "SELECT count(*) FROM events"), STORE_MAX_EVENTS);
	store_close(st);
}

/* ---- crash in the middle of transactions ---- */

static void
crash_child(const char *path, int ready_fd, int kill_self)
{
	struct store *st;
	char          uid[32];
	int           batch, i;

	st = store_open(NULL, path, NULL);
	if (st == NULL)
		_exit(3);
	for (batch = 0;; batch++) {
		for (i = 0; i < 100; i++) {
			snprintf(uid, sizeof(uid), "b%06d-%03d", batch, i);
			put_pod(
			    st, uid, "{\"padding\":\"xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx\"}");
		}
		if (kill_self && batch == 3)
			raise(SIGKILL); /* mid-transaction: 100 writes not committed */
		if (store_flush(st) != 0)
			_exit(4);
		if (batch % 2 == 1 && store_checkpoint(st) != 0) /* kills land in those too */
			_exit(6);
		if (batch == 2 && write(ready_fd, "r", 1) != 1)
			_exit(5);
	}
}

static void
test_crash_mid_transaction(void **state)
{
	struct fx *f = *state;
	int        round;

	for (round = 0; round < 5; round++) {
		struct store *st;
		int           p[2], status;
		char          c;
		pid_t         pid;
		int64_t       n;

		unlink(f->path);
		assert_int_equal(pipe(p), 0);
		pid = fork();
		assert_true(pid >= 0);
		if (pid == 0) {
			close(p[0]);
			crash_child(f->path, p[1], round == 0);
			_exit(0);
		}
		close(p[1]);
		if (round > 0) {
			/* Three batches committed; then kill at a varying moment. */
			assert_int_equal(read(p[0], &c, 1), 1);
			usleep((useconds_t)(round * 1500));
			kill(pid, SIGKILL);
		}
		assert_int_equal(waitpid(pid, &status, 0), pid);
		assert_true(WIFSIGNALED(status));
		close(p[0]);

		st = open_ok(NULL, f->path);
		n = raw_int(f->path, "SELECT count(*) FROM pods");
		if (round == 0)
			assert_int_equal(n, 300);
		assert_true(n >= 300);
		assert_int_equal(n % 100, 0); /* every batch all or nothing */
		assert_int_equal(raw_int(f->path,
		                     "SELECT count(*) FROM pragma_quick_check"
		                     " WHERE quick_check = 'ok'"),
		    1);
		store_close(st);
	}
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_fresh_db, fx_setup, fx_teardown),
		cmocka_unit_test_setup_teardown(test_reopen_keeps_data, fx_setup, fx_teardown),
		cmocka_unit_test_setup_teardown(test_hints, fx_setup, fx_teardown),
		cmocka_unit_test_setup_teardown(test_release_between_writes, fx_setup, fx_teardown),
		cmocka_unit_test_setup_teardown(test_newer_db_refused, fx_setup, fx_teardown),
		cmocka_unit_test_setup_teardown(test_bad_file_refused, fx_setup, fx_teardown),
		cmocka_unit_test_setup_teardown(test_not_regular_refused, fx_setup, fx_teardown),
		cmocka_unit_test_setup_teardown(
		    test_readonly_file_runs_from_memory, fx_setup, fx_teardown),
		cmocka_unit_test_setup_teardown(
		    test_batching_one_txn_per_turn, fx_setup, fx_teardown),
		cmocka_unit_test_setup_teardown(
		    test_after_commit_without_writes, fx_setup, fx_teardown),
		cmocka_unit_test_setup_teardown(
		    test_close_commits_callback_writes, fx_setup, fx_teardown),
		cmocka_unit_test_setup_teardown(test_typed_rows, fx_setup, fx_teardown),
		cmocka_unit_test_setup_teardown(test_foreach_stops, fx_setup, fx_teardown),
		cmocka_unit_test_setup_teardown(test_upgrade_from_001, fx_setup, fx_teardown),
		cmocka_unit_test_setup_teardown(test_write_inside_foreach, fx_setup, fx_teardown),
		cmocka_unit_test(test_null_store),
		cmocka_unit_test_setup_teardown(test_forget_pod, fx_setup, fx_teardown),
		cmocka_unit_test_setup_teardown(test_forget_shrinks_file, fx_setup, fx_teardown),
		cmocka_unit_test_setup_teardown(test_events_bounded, fx_setup, fx_teardown),
		cmocka_unit_test_setup_teardown(
		    test_faults_degrade_and_recover, fx_setup, fx_teardown),
		cmocka_unit_test_setup_teardown(test_retry_timer_recovers, fx_setup, fx_teardown),
		cmocka_unit_test_setup_teardown(test_journal_compacts, fx_setup, fx_teardown),
		cmocka_unit_test_setup_teardown(test_crash_mid_transaction, fx_setup, fx_teardown),
	};

	log_init(0, 0);
	return cmocka_run_group_tests(tests, NULL, NULL);
}
