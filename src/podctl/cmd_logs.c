/* cmd_logs.c — podctl logs and inspect: a container's log, read from its CRI log file with
 * the node server's reader (core/logreader.c), and the runtime's status of a container. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "core/json.h"
#include "core/logreader.h"
#include "core/util.h"
#include "podctl/common.h"

#define LOGS_CHUNK      (256 * 1024)
#define LOGS_POLL_MS    200  /* at the end of the file, following (the server's pace) */
#define LOGS_RECHECK_MS 1000 /* how often kletd is asked whether the container still runs */

static int logs_write_failed;

static void
logs_write(void *arg, const void *buf, size_t len)
{
	(void)arg;
	if (!logs_write_failed && fwrite(buf, 1, len, stdout) != len)
		logs_write_failed = errno != 0 ? errno : EIO;
}

static void
logs_sleep(int ms)
{
	struct timespec ts = { ms / 1000, (long)(ms % 1000) * 1000000L };

	nanosleep(&ts, NULL);
}

/* kletd's view of the log: its path, and whether the container still runs. */
struct logs_target {
	char *path;
	char *cid;
	int   running;
};

static int
logs_lookup(FILE *f, const struct podctl_opts *o, const char *ns, const char *name, int quiet,
    struct logs_target *t, char *err, size_t errlen)
{
	struct client_req  rq = { .cmd = "logs",
		 .ns = ns,
		 .name = name,
		 .container = o->container,
		 .previous = o->previous };
	struct json_doc   *doc;
	const struct json *d = client_call(f, o, &rq, &doc, 0, err, errlen), *c;
	size_t             i;

	if (d == NULL) {
		json_free(doc);
		return -1;
	}
	if (!quiet && jv_bool(d, "defaulted")) {
		/* kubectl's note when the pod has several containers and none was named */
		fprintf(stderr, "Defaulted container \"%s\" out of: ", jv_strd(d, "container", ""));
		c = json_get(d, "containers");
		for (i = 0; i < json_len(c); i++)
			fprintf(stderr, "%s%s", i > 0 ? ", " : "", json_str(json_index(c, i)));
		fprintf(stderr, "\n");
	}
	t->path = xstrdup(jv_strd(d, "path", ""));
	t->cid = xstrdup(jv_strd(d, "containerID", ""));
	t->running = jv_bool(d, "running");
	json_free(doc);
	return 0;
}

static void
logs_target_clear(struct logs_target *t)
{
	free(t->path);
	free(t->cid);
	memset(t, 0, sizeof(*t));
}

int
cmd_logs(FILE *f, const struct podctl_opts *o, const char *what)
{
	struct logreader_opts lo;
	struct logreader_sink sk = { logs_write, NULL };
	struct logs_target    t, now;
	struct logreader     *r;
	enum logreader_rc     rc;
	char                  ns[256], name[256], err[640];
	int                   waited = 0, ret = 0;

	opts_pod(o, what, ns, sizeof(ns), name, sizeof(name));
	memset(&t, 0, sizeof(t));
	if (logs_lookup(f, o, ns, name, 0, &t, err, sizeof(err)) == -1) {
		fprintf(stderr, "podctl: error from kletd: %s\n", err);
		return PODCTL_EXIT_ERROR;
	}
	memset(&lo, 0, sizeof(lo));
	lo.timestamps = o->timestamps;
	lo.tail_lines = o->tail;
	lo.limit_bytes = -1;
	lo.follow = o->follow && t.running;
	if ((r = logreader_open(t.path, &lo, err, sizeof(err))) == NULL) {
		fprintf(stderr, "podctl: %s%s\n", err,
		    strstr(err, strerror(EACCES)) != NULL
		        ? " (podctl reads the log file itself: run it as a user who "
		          "can read the pod logs directory)"
		        : "");
		logs_target_clear(&t);
		return PODCTL_EXIT_ERROR;
	}
	for (;;) {
		rc = logreader_step(r, &sk, LOGS_CHUNK);
		fflush(stdout);
		if (logs_write_failed || rc == LOGREADER_DONE || rc == LOGREADER_ERROR)
			break;
		if (rc == LOGREADER_MORE)
			continue;
		/* EOF, following: a rotated file, more to come, or the container's end. */
		if (logreader_check_rotation(r, &sk) == 1)
			continue;
		logs_sleep(LOGS_POLL_MS);
		if ((waited += LOGS_POLL_MS) < LOGS_RECHECK_MS)
			continue;
		waited = 0;
		memset(&now, 0, sizeof(now));
		if (logs_lookup(f, o, ns, name, 1, &now, err, sizeof(err)) == -1 || !now.running ||
		    strcmp(now.cid, t.cid) != 0) {
			/* Exited (or replaced): what it wrote last is read, then the end. */
			while (logreader_step(r, &sk, LOGS_CHUNK) == LOGREADER_MORE)
				;
			logs_target_clear(&now);
			break;
		}
		logs_target_clear(&now);
	}
	logreader_finish(r, &sk);
	fflush(stdout);
	if (rc == LOGREADER_ERROR) {
		fprintf(stderr, "podctl: reading %s: %s\n", t.path, strerror(errno));
		ret = PODCTL_EXIT_ERROR;
	} else if (logs_write_failed && logs_write_failed != EPIPE) {
		fprintf(stderr, "podctl: writing the log: %s\n", strerror(logs_write_failed));
		ret = PODCTL_EXIT_ERROR;
	}
	logreader_free(r);
	logs_target_clear(&t);
	return ret;
}

/* The runtime's ContainerStatus (verbose) as it gave it: JSON by default, as crictl
 * inspect. */
int
cmd_inspect(FILE *f, const struct podctl_opts *o, const char *id)
{
	struct client_req  rq = { .cmd = "inspect", .name = id };
	struct json_doc   *doc;
	char               err[640];
	const struct json *d = client_call(f, o, &rq, &doc, 0, err, sizeof(err));

	if (d == NULL) {
		fprintf(stderr, "podctl: error from kletd: %s\n", err);
		json_free(doc);
		return PODCTL_EXIT_ERROR;
	}
	if (o->fmt == FMT_YAML)
		out_yaml(d);
	else
		out_json(d);
	json_free(doc);
	return 0;
}
