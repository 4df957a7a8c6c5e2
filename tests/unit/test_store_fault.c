/* test_store_fault.c — the store under injected faults: SQLite allocations failing from the
 * N-th on (failmalloc style), and I/O errors on write and fsync through a VFS shim. After
 * every fault: no crash, health degraded (or an error returned), and once the fault is gone
 * everything written is committed, with each after_commit callback run exactly once. */
#include <sys/types.h>

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>

#include <sqlite3.h>

#include "core/log.h"
#include "store/store.h"
#include "core/util.h"

/* ---- failing allocator for SQLite ---- */

static long malloc_countdown = -1; /* -1: never fail; 0: fail every allocation from now */
static long malloc_failed;

static int
malloc_should_fail(void)
{
	if (malloc_countdown < 0)
		return 0;
	if (malloc_countdown == 0) {
		malloc_failed++;
		return 1;
	}
	malloc_countdown--;
	return 0;
}

/* Blocks carry their size in a 16-byte prefix (keeps 16-byte alignment). */
static void *
fm_malloc(int n)
{
	uint64_t *p;

	if (malloc_should_fail())
		return NULL;
	if ((p = malloc((size_t)n + 16)) == NULL)
		return NULL;
	p[0] = (uint64_t)n;
	return p + 2;
}

static void
fm_free(void *q)
{
	if (q != NULL)
		free((uint64_t *)q - 2);
}

static void *
fm_realloc(void *q, int n)
{
	uint64_t *p;

	if (malloc_should_fail())
		return NULL;
	if ((p = realloc((uint64_t *)q - 2, (size_t)n + 16)) == NULL)
		return NULL;
	p[0] = (uint64_t)n;
	return p + 2;
}

static int
fm_size(void *q)
{
	return (int)((uint64_t *)q - 2)[0];
}

static int
fm_roundup(int n)
{
	return (n + 7) & ~7;
}

static int
fm_init(void *arg)
{
	(void)arg;
	return SQLITE_OK;
}

static void
fm_shutdown(void *arg)
{
	(void)arg;
}

static const sqlite3_mem_methods failmalloc = { fm_malloc, fm_free, fm_realloc, fm_size, fm_roundup,
	fm_init, fm_shutdown, NULL };

/* ---- VFS shim failing writes and syncs on demand ---- */

static int  fail_write;           /* xWrite returns SQLITE_IOERR_WRITE */
static int  fail_sync;            /* xSync returns SQLITE_IOERR_FSYNC */
static long write_countdown = -1; /* fail writes from the N-th on (-1: off) */
static long write_failed;

struct shim_file {
	sqlite3_file  base;
	sqlite3_file *real;
};

static sqlite3_vfs *real_vfs;
static sqlite3_vfs  shim_vfs;

#define REAL(f) (((struct shim_file *)(f))->real)

static int
shim_close(sqlite3_file *f)
{
	return REAL(f)->pMethods->xClose(REAL(f));
}

static int
shim_read(sqlite3_file *f, void *buf, int n, sqlite3_int64 off)
{
	return REAL(f)->pMethods->xRead(REAL(f), buf, n, off);
}

static int
shim_write(sqlite3_file *f, const void *buf, int n, sqlite3_int64 off)
{
	if (write_countdown == 0) {
		write_failed++;
		return SQLITE_IOERR_WRITE;
	}
	if (write_countdown > 0)
		write_countdown--;
	if (fail_write)
		return SQLITE_IOERR_WRITE;
	return REAL(f)->pMethods->xWrite(REAL(f), buf, n, off);
}

static int
shim_truncate(sqlite3_file *f, sqlite3_int64 size)
{
	return REAL(f)->pMethods->xTruncate(REAL(f), size);
}

static int
shim_sync(sqlite3_file *f, int flags)
{
	if (fail_sync)
		return SQLITE_IOERR_FSYNC;
	return REAL(f)->pMethods->xSync(REAL(f), flags);
}

static int
shim_file_size(sqlite3_file *f, sqlite3_int64 *size)
{
	return REAL(f)->pMethods->xFileSize(REAL(f), size);
}

static int
shim_lock(sqlite3_file *f, int l)
{
	return REAL(f)->pMethods->xLock(REAL(f), l);
}

static int
shim_unlock(sqlite3_file *f, int l)
{
	return REAL(f)->pMethods->xUnlock(REAL(f), l);
}

static int
shim_check_reserved(sqlite3_file *f, int *out)
{
	return REAL(f)->pMethods->xCheckReservedLock(REAL(f), out);
}

static int
shim_file_control(sqlite3_file *f, int op, void *arg)
{
	return REAL(f)->pMethods->xFileControl(REAL(f), op, arg);
}

static int
shim_sector_size(sqlite3_file *f)
{
	return REAL(f)->pMethods->xSectorSize(REAL(f));
}

static int
shim_device(sqlite3_file *f)
{
	return REAL(f)->pMethods->xDeviceCharacteristics(REAL(f));
}

static int
shim_shm_map(sqlite3_file *f, int pg, int pgsz, int extend, void volatile **pp)
{
	return REAL(f)->pMethods->xShmMap(REAL(f), pg, pgsz, extend, pp);
}

static int
shim_shm_lock(sqlite3_file *f, int off, int n, int flags)
{
	return REAL(f)->pMethods->xShmLock(REAL(f), off, n, flags);
}

static void
shim_shm_barrier(sqlite3_file *f)
{
	REAL(f)->pMethods->xShmBarrier(REAL(f));
}

static int
shim_shm_unmap(sqlite3_file *f, int del)
{
	return REAL(f)->pMethods->xShmUnmap(REAL(f), del);
}

static const sqlite3_io_methods shim_io = {
	2,
	shim_close,
	shim_read,
	shim_write,
	shim_truncate,
	shim_sync,
	shim_file_size,
	shim_lock,
	shim_unlock,
	shim_check_reserved,
	shim_file_control,
	shim_sector_size,
	shim_device,
	shim_shm_map,
	shim_shm_lock,
	shim_shm_barrier,
	shim_shm_unmap,
	NULL,
	NULL,
};

static int
shim_open(sqlite3_vfs *vfs, const char *name, sqlite3_file *f, int flags, int *out)
{
	struct shim_file *p = (struct shim_file *)f;
	int               rc;

	(void)vfs;
	p->real = (sqlite3_file *)&p[1];
	rc = real_vfs->xOpen(real_vfs, name, p->real, flags, out);
	p->base.pMethods = p->real->pMethods != NULL ? &shim_io : NULL;
	return rc;
}

static void
shim_register(void)
{
	real_vfs = sqlite3_vfs_find(NULL);
	if (real_vfs == NULL)
		fatalx("no default VFS");
	shim_vfs = *real_vfs;
	shim_vfs.zName = "klet-fault-shim";
	shim_vfs.szOsFile = (int)sizeof(struct shim_file) + real_vfs->szOsFile;
	shim_vfs.xOpen = shim_open;
	shim_vfs.pNext = NULL;
	if (sqlite3_vfs_register(&shim_vfs, 1) != SQLITE_OK)
		fatalx("cannot register the VFS shim");
}

/* ---- helpers ---- */

struct fx {
	char  dir[64];
	char *path;
};

/* The faults here are injected, so a memory file system (when there is one) keeps the many
 * short cases fast. */
static const char *
scratch_dir(void)
{
	return access("/dev/shm", W_OK | X_OK) == 0 ? "/dev/shm" : "/tmp";
}

static int
fx_setup(void **state)
{
	struct fx *f = xcalloc(1, sizeof(*f));

	snprintf(f->dir, sizeof(f->dir), "%s/test_store_fault.XXXXXX", scratch_dir());
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

	malloc_countdown = -1;
	fail_write = fail_sync = 0;
	write_countdown = -1;
	if (system(cmd) != 0)
		fprintf(stderr, "cannot remove %s\n", f->dir);
	free(cmd);
	free(f->path);
	free(f);
	return 0;
}

static void
remove_db(const char *path)
{
	static const char *const sfx[] = { "", "-wal", "-shm", "-journal" };
	size_t                   i;

	for (i = 0; i < nitems(sfx); i++) {
		char *p = xsprintf("%s%s", path, sfx[i]);

		unlink(p);
		free(p);
	}
}

/* A migrated, closed database to start each case from (a copy is cheaper than migrating). */
static char  template_dir[64];
static char *template_path;

static void
copy_file(const char *from, const char *to)
{
	char   buf[65536];
	FILE  *in = fopen(from, "rb"), *out = fopen(to, "wb");
	size_t n;

	if (in == NULL || out == NULL)
		fatalx("copy %s to %s failed", from, to);
	while ((n = fread(buf, 1, sizeof(buf), in)) > 0)
		if (fwrite(buf, 1, n, out) != n)
			fatalx("copy %s: short write", to);
	fclose(in);
	fclose(out);
}

/* Opens a fresh copy of the template; fsync off: these cases are not about power loss. */
static struct store *
open_fresh(const char *path)
{
	struct store *st;
	char         *err = NULL;

	remove_db(path);
	copy_file(template_path, path);
	st = store_open(NULL, path, &err);
	if (st == NULL)
		fail_msg("open: %s", err);
	store_test_exec(st, "PRAGMA synchronous = OFF");
	return st;
}

static void
cb_count(void *arg)
{
	(*(int *)arg)++;
}

static int
count_pod(const struct store_pod *p, void *arg)
{
	(void)p;
	(*(int *)arg)++;
	return 0;
}

static int
get_status(const struct store_status *s, void *arg)
{
	int64_t *v = arg;

	v[0] = s->version;
	v[1] = s->acked_version;
	return 0;
}

/* One turn of mixed writes with an after_commit callback. */
static void
turn(struct store *st, int *acked)
{
	struct store_worker w = { .uid = "u0",
		.state = "terminating",
		.grace_seconds = 30,
		.grace_deadline_wall_ms = 1700000000000 };
	struct store_exit x = { .container_id = "c0", .uid = "u0", .name = "app", .exit_code = 3 };
	char              uid[8];
	int               i;

	for (i = 0; i < 5; i++) {
		struct store_pod p = { .uid = uid,
			.source = "file",
			.ns = "ns",
			.name = uid,
			.doc = "{\"big\":\"....................................\"}",
			.doc_len = 44,
			.format = "json" };

		snprintf(uid, sizeof(uid), "u%d", i);
		store_put_pod(st, &p);
	}
	store_put_worker(st, &w);
	store_put_status(st, "u0", 7, "{\"phase\":\"Running\"}");
	store_ack_status(st, "u0", 6);
	store_put_exit(st, &x);
	store_set_meta(st, "pods.resourceVersion", "777");
	store_after_commit(st, cb_count, acked);
}

/* After the fault is gone: everything of the turn is there, the callback ran once. */
static void
verify(const char *path, int acked)
{
	struct store *st;
	int64_t       sv[2] = { 0, 0 };
	char         *err = NULL, *rv;
	int           n = 0;

	assert_int_equal(acked, 1);
	st = store_open(NULL, path, &err);
	if (st == NULL)
		fail_msg("reopen: %s", err);
	store_test_exec(st, "PRAGMA synchronous = OFF");
	assert_int_equal(store_foreach_pod(st, count_pod, &n), 0);
	assert_int_equal(n, 5);
	assert_int_equal(store_foreach_status(st, get_status, sv), 0);
	assert_int_equal(sv[0], 7);
	assert_int_equal(sv[1], 6);
	rv = store_get_meta(st, "pods.resourceVersion");
	assert_non_null(rv);
	assert_string_equal(rv, "777");
	free(rv);
	store_close(st);
}

/* ---- tests ---- */

/* Allocation N of the turn (and all later ones) fails, for N from 0 until none is reached:
 * every N up to 64, then every 7th (KLET_STORE_FAULT_FULL=1: every N). */
static void
test_nomem_at_every_allocation(void **state)
{
	struct fx *f = *state;
	int        full = getenv("KLET_STORE_FAULT_FULL") != NULL;
	long       n;

	for (n = 0;; n += (full || n < 64) ? 1 : 7) {
		struct store_health_info h;
		struct store            *st = open_fresh(f->path);
		int                      acked = 0, rc;

		malloc_failed = 0;
		malloc_countdown = n;
		turn(st, &acked);
		rc = store_flush(st);
		malloc_countdown = -1;
		if (malloc_failed == 0) {
			/* The whole turn ran without reaching allocation n: done. */
			assert_int_equal(rc, 0);
			store_close(st);
			verify(f->path, acked);
			printf("# nomem: %ld allocation points tried\n", n);
			break;
		}
		if (rc == -1) {
			assert_int_equal(store_health(st, &h), STORE_DEGRADED);
			assert_int_equal(acked, 0);
		}
		/* Healed: the retry commits everything. */
		assert_int_equal(store_flush(st), 0);
		assert_int_equal(store_health(st, &h), STORE_OK);
		store_close(st);
		verify(f->path, acked);
	}
}

/* Write N of the turn's commit (and all later ones) fails with an I/O error. */
static void
test_ioerr_at_every_write(void **state)
{
	struct fx *f = *state;
	long       n;

	for (n = 0; n < 64; n++) {
		struct store_health_info h;
		struct store            *st = open_fresh(f->path);
		int                      acked = 0, rc;

		write_failed = 0;
		write_countdown = n;
		turn(st, &acked);
		rc = store_flush(st);
		if (write_failed == 0) {
			write_countdown = -1;
			assert_int_equal(rc, 0);
			store_close(st);
			verify(f->path, acked);
			printf("# ioerr: %ld write points tried\n", n);
			return;
		}
		assert_int_equal(rc, -1);
		assert_int_equal(store_health(st, &h), STORE_DEGRADED);
		assert_non_null(h.last_error);
		assert_int_equal(acked, 0);
		write_countdown = -1;
		assert_int_equal(store_flush(st), 0);
		assert_int_equal(store_health(st, &h), STORE_OK);
		store_close(st);
		verify(f->path, acked);
	}
	fail_msg("a turn needs more than 64 writes?");
}

static void
test_ioerr_while_degraded_then_recover(void **state)
{
	struct fx               *f = *state;
	struct store_health_info h;
	struct store            *st = open_fresh(f->path);
	int                      acked = 0, i;

	fail_write = 1;
	turn(st, &acked);
	for (i = 0; i < 5; i++) {
		assert_int_equal(store_flush(st), -1);
		store_checkpoint(st); /* may fail too (it writes): no crash, nothing lost */
	}
	assert_int_equal(store_health(st, &h), STORE_DEGRADED);
	assert_true(h.failures >= 5);
	assert_non_null(strstr(h.last_error, "I/O"));
	fail_write = 0;
	assert_int_equal(store_checkpoint(st), 0); /* housekeeping retries too */
	assert_int_equal(store_health(st, &h), STORE_OK);
	store_close(st);
	verify(f->path, acked);
}

static void
test_fsync_error_at_checkpoint(void **state)
{
	struct fx               *f = *state;
	struct store_health_info h;
	struct store            *st = open_fresh(f->path);
	int                      acked = 0;

	store_test_exec(st, "PRAGMA synchronous = NORMAL"); /* checkpoints fsync */
	turn(st, &acked);
	assert_int_equal(store_flush(st), 0);
	fail_sync = 1;
	assert_int_equal(store_checkpoint(st), -1);
	store_health(st, &h);
	assert_non_null(h.last_error);
	fail_sync = 0;
	assert_int_equal(store_checkpoint(st), 0);
	store_close(st);
	verify(f->path, acked);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(
		    test_nomem_at_every_allocation, fx_setup, fx_teardown),
		cmocka_unit_test_setup_teardown(test_ioerr_at_every_write, fx_setup, fx_teardown),
		cmocka_unit_test_setup_teardown(
		    test_ioerr_while_degraded_then_recover, fx_setup, fx_teardown),
		cmocka_unit_test_setup_teardown(
		    test_fsync_error_at_checkpoint, fx_setup, fx_teardown),
	};
	int rc;

	log_init(0, 0);
	if (sqlite3_config(SQLITE_CONFIG_MALLOC, &failmalloc) != SQLITE_OK)
		fatalx("sqlite3_config: cannot install the failing allocator");
	if (sqlite3_initialize() != SQLITE_OK)
		fatalx("sqlite3_initialize failed");
	shim_register();
	snprintf(
	    template_dir, sizeof(template_dir), "%s/test_store_fault_tpl.XXXXXX", scratch_dir());
	if (mkdtemp(template_dir) == NULL)
		fatal("mkdtemp");
	template_path = xsprintf("%s/klet.db", template_dir);
	store_close(store_open(NULL, template_path, NULL));
	rc = cmocka_run_group_tests(tests, NULL, NULL);
	remove_db(template_path);
	rmdir(template_dir);
	free(template_path);
	return rc;
}
