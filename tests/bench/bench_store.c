/* bench_store.c — the store's cost per loop turn with 110 pods (the kubelet's default
 * max-pods): one turn writing every pod's worker and status rows, and the database size.
 * Not part of make check: `make bench-store` (or run under valgrind --tool=callgrind
 * with KLET_BENCH_TURNS=1 for an instruction count). Prints figures, asserts nothing. */
#include <sys/stat.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/log.h"
#include "store/store.h"
#include "core/util.h"

#define NPODS 110

static char status[1500];

/* One turn: every pod's worker and status row rewritten, one commit. A separate function so
 * that callgrind --toggle-collect=bench_turn counts just this. */
__attribute__((noinline)) static void
bench_turn(struct store *st, int t)
{
	char uid[40];
	int  i;

	for (i = 0; i < NPODS; i++) {
		struct store_worker w = {
			.uid = uid, .state = "sync", .step = "running", .next_retry_wall_ms = t
		};

		snprintf(uid, sizeof(uid), "0b6c2f2e-4b1c-4c3a-9a53-%012d", i);
		store_put_worker(st, &w);
		store_put_status(st, uid, t + 1, status);
	}
	store_flush(st);
}

static void
fill(char *buf, size_t n, char c)
{
	memset(buf, c, n - 1);
	buf[n - 1] = '\0';
}

int
main(int argc, char **argv)
{
	char        dir[] = "/tmp/bench_store.XXXXXX", uid[40], doc[3000], *path, *cmd, *wal;
	struct stat sb;
	int64_t     dbsize = 0, walsize = 0;
	const char *env = getenv("KLET_BENCH_TURNS");
	int         turns = env ? atoi(env) : 200, t, i;
	int64_t     t0, t1, best = INT64_MAX, total = 0;
	struct store_health_info h;
	struct store            *st;
	char                    *err = NULL;

	(void)argc;
	(void)argv;
	log_init(0, 0);
	if (mkdtemp(dir) == NULL)
		return 1;
	path = xsprintf("%s/klet.db", dir);
	if ((st = store_open(NULL, path, &err)) == NULL) {
		fprintf(stderr, "%s\n", err);
		return 1;
	}
	/* Setup: 110 pods with a ~3 KB manifest, 2 containers each with one exit. */
	fill(doc, sizeof(doc), 'd');
	fill(status, sizeof(status), 's');
	for (i = 0; i < NPODS; i++) {
		struct store_pod  p = { .uid = uid,
			 .source = "api",
			 .ns = "default",
			 .name = uid,
			 .doc = doc,
			 .doc_len = sizeof(doc) - 1,
			 .format = "json" };
		struct store_exit x = { .container_id = uid,
			.uid = uid,
			.name = "app",
			.exit_code = 0,
			.reason = "Completed",
			.started_ns = 1,
			.finished_ns = 2 };

		snprintf(uid, sizeof(uid), "0b6c2f2e-4b1c-4c3a-9a53-%012d", i);
		store_put_pod(st, &p);
		store_put_exit(st, &x);
	}
	store_flush(st);

	/* The measured turn: every pod's worker and status row rewritten, one commit. */
	for (t = 0; t < turns; t++) {
		t0 = now_mono_us();
		bench_turn(st, t);
		t1 = now_mono_us();
		total += t1 - t0;
		if (t1 - t0 < best)
			best = t1 - t0;
		if (t % 2 == 1) /* housekeeping every 2 s, turns of 1 s */
			store_checkpoint(st);
	}
	store_checkpoint(st);
	store_health(st, &h);
	printf("bench_store: %d pods, %d turns of %d writes (worker+status) + 1 commit each\n",
	    NPODS, turns, 2 * NPODS);
	printf("  per turn: mean %.1f us, best %lld us\n", (double)total / turns, (long long)best);
	wal = xsprintf("%s-wal", path);
	if (stat(path, &sb) == 0)
		dbsize = sb.st_size;
	if (stat(wal, &sb) == 0)
		walsize = sb.st_size;
	free(wal);
	printf("  size: db %lld bytes + wal %lld bytes (%d pods: manifest %zu B, status %zu B, "
	       "worker, 1 exit each)\n",
	    (long long)dbsize, (long long)walsize, NPODS, sizeof(doc) - 1, sizeof(status) - 1);
	printf("  commits %llu, failures %llu\n", (unsigned long long)h.commits,
	    (unsigned long long)h.failures);
	store_close(st);
	cmd = xsprintf("rm -rf '%s'", dir);
	if (system(cmd) != 0)
		fprintf(stderr, "cannot remove %s\n", dir);
	free(cmd);
	free(path);
	free(err);
	return 0;
}
