/* kletd.c — the node agent: flags, wiring, the loop's periodic tasks, signals, shutdown. */
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/types.h>

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "config.h"
#include "log.h"
#include "loop.h"
#include "store.h" /* store */
#include "util.h"

struct kletd {
	struct klet_config  k_cfg;
	struct loop        *k_loop;
	struct store       *k_store;   /* store: <root-dir>/klet.db */
	int                 k_lock_fd;
	int                 k_stopping;
	int64_t             k_started_ms;
};

/* Creates dir and its parents with mode; 0 or -1 (errno set). */
static int
mkdir_p(const char *dir, mode_t mode)
{
	char *p, *copy = xstrdup(dir);
	int rc = 0;

	for (p = copy + 1; rc == 0; p++) {
		if (*p != '/' && *p != '\0')
			continue;
		char c = *p;

		*p = '\0';
		if (mkdir(copy, mode) == -1 && errno != EEXIST)
			rc = -1;
		*p = c;
		if (c == '\0')
			break;
	}
	free(copy);
	return rc;
}

/* Prepares the root dir and takes its lock so that two daemons never share one state. */
static int
kletd_prepare_root(struct kletd *k)
{
	const char *root = k->k_cfg.root_dir;
	struct stat st;
	char *lock;

	if (mkdir_p(root, 0700) == -1) {
		log_error("--root-dir %s: cannot create: %s", root, strerror(errno));
		return -1;
	}
	if (stat(root, &st) == -1 || !S_ISDIR(st.st_mode)) {
		log_error("--root-dir %s: not a directory", root);
		return -1;
	}
	if (access(root, W_OK) == -1) {
		log_error("--root-dir %s: not writable: %s", root, strerror(errno));
		return -1;
	}
	lock = xsprintf("%s/kletd.lock", root);
	k->k_lock_fd = open(lock, O_RDWR | O_CREAT | O_CLOEXEC, 0600);
	if (k->k_lock_fd == -1) {
		log_error("%s: %s", lock, strerror(errno));
		free(lock);
		return -1;
	}
	if (flock(k->k_lock_fd, LOCK_EX | LOCK_NB) == -1) {
		log_error("--root-dir %s: another kletd is running with this root dir (%s is locked)",
		    root, lock);
		free(lock);
		return -1;
	}
	free(lock);
	return 0;
}

static void
kletd_relist(void *arg)
{
	(void)arg;
}

static void
kletd_sync(void *arg)
{
	(void)arg;
}

static void
kletd_log_task(const struct loop_task_stats *st, void *arg)
{
	(void)arg;
	log_v(4, "timer %s every=%ums runs=%llu last=%lldus max=%lldus lag=%lldus maxlag=%lldus",
	    st->name, st->interval_ms, (unsigned long long)st->runs,
	    (long long)st->last_duration_us, (long long)st->max_duration_us,
	    (long long)st->last_lag_us, (long long)st->max_lag_us);
}

static void
kletd_housekeeping(void *arg)
{
	struct kletd *k = arg;
	static unsigned n;

	/* store: the WAL checkpoint (the one fsync point); also retries a degraded store. */
	store_checkpoint(k->k_store);
	/* Every 30 s at -v=4: the timers' figures. */
	if (++n % 15 == 0)
		loop_foreach_task(k->k_loop, kletd_log_task, NULL);
}

static void
kletd_status_batch(void *arg)
{
	(void)arg;
}

static void
kletd_lease(void *arg)
{
	(void)arg;
}

static void
kletd_on_signal(int sig, void *arg)
{
	struct kletd *k = arg;

	switch (sig) {
	case SIGHUP:
		log_info("SIGHUP: reopening the log file");
		log_reopen();
		log_info("log file reopened");
		break;
	case SIGTERM:
	case SIGINT:
		if (k->k_stopping)
			break;
		k->k_stopping = 1;
		log_info("%s: shutting down; containers keep running", strsignal(sig));
		loop_stop(k->k_loop);
		break;
	default:
		break;
	}
}

int
main(int argc, char **argv)
{
	struct kletd k;
	char err[512];
	int rc = 0;

	memset(&k, 0, sizeof(k));
	k.k_lock_fd = -1;
	switch (config_load(&k.k_cfg, argc, argv, err, sizeof(err))) {
	case CONFIG_OK:
		break;
	case CONFIG_EXIT:
		config_clear(&k.k_cfg);
		return 0;
	case CONFIG_ERROR:
		fprintf(stderr, "kletd: %s\nRun 'kletd --help' for usage.\n", err);
		config_clear(&k.k_cfg);
		return 2;
	}
	log_init(k.k_cfg.verbosity, k.k_cfg.log_json);
	if (k.k_cfg.log_file != NULL && log_open_file(k.k_cfg.log_file) == -1) {
		fprintf(stderr, "kletd: --log-file %s: %s\n", k.k_cfg.log_file, strerror(errno));
		config_clear(&k.k_cfg);
		return 2;
	}
	log_info("kletd %s starting node=%s root-dir=%s runtime=%s", KLET_VERSION,
	    k.k_cfg.node_name, k.k_cfg.root_dir, k.k_cfg.runtime_endpoint);
	if (kletd_prepare_root(&k) == -1) {
		rc = 1;
		goto out;
	}
	k.k_started_ms = now_mono_ms();
	k.k_loop = loop_new();
	{ /* store: open after the root-dir lock; a refused database stops the daemon. */
		char *serr = NULL, *dbpath = xsprintf("%s/klet.db", k.k_cfg.root_dir);

		k.k_store = store_open(loop_base(k.k_loop), dbpath, &serr);
		free(dbpath);
		if (k.k_store == NULL) {
			log_error("store: %s", serr);
			free(serr);
			rc = 1;
			goto out;
		}
	}
	loop_every(k.k_loop, "relist", 1000, kletd_relist, &k);
	loop_every(k.k_loop, "sync", 1000, kletd_sync, &k);
	loop_every(k.k_loop, "housekeeping", 2000, kletd_housekeeping, &k);
	loop_every(k.k_loop, "status", 10000, kletd_status_batch, &k);
	loop_every(k.k_loop, "lease", 10000, kletd_lease, &k);
	loop_on_signal(k.k_loop, SIGTERM, kletd_on_signal, &k);
	loop_on_signal(k.k_loop, SIGINT, kletd_on_signal, &k);
	loop_on_signal(k.k_loop, SIGHUP, kletd_on_signal, &k);
	log_info("kletd ready");
	if (loop_run(k.k_loop) == -1)
		rc = 1;
	log_info("kletd stopped after %llds", (long long)((now_mono_ms() - k.k_started_ms) / 1000));
out:
	if (k.k_store != NULL) { /* store: commit the last turn, then close */
		store_flush(k.k_store);
		store_close(k.k_store);
	}
	loop_free(k.k_loop);
	if (k.k_lock_fd != -1)
		close(k.k_lock_fd);
	config_clear(&k.k_cfg);
	log_open_file(NULL);
	return rc;
}
