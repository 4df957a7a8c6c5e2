/* bench_start.c — a static pod's start by kletd against the raw CRI sequence, on the same
 * runtime, interleaved in one run:
 *   bench_start SOCK MANIFEST_DIR KLETD_LOG NODE ROOT LOGS PAIRS [CGROUP_ROOT]
 * raw:   RunPodSandbox, ImageStatus, CreateContainer, StartContainer, one after the other,
 *        with the very requests kletd builds for the same pod (kr_sandbox_config,
 *        kr_container_config), through the project's CRI client; the time runs from the
 *        first request to StartContainer's answer. The pod is then stopped and removed.
 *        With CGROUP_ROOT (kletd's --cgroup-root beside its own: kletd removes pod cgroups
 *        it does not know), its pod cgroup is made first, by kletd's code (node/cgroups.c),
 *        outside the time, and the sandbox's CgroupParent names it, as kletd's does; it is
 *        removed with the pod.
 * kletd: the manifest is written aside and renamed into MANIFEST_DIR (what an installer
 *        does); the time runs from the rename to kletd's "Started container" event in its
 *        log (wall-clock microseconds); the part before its RunPodSandbox request
 *        left (kletd's own: inotify, scan, worker, pod cgroup, intent) is printed too. The
 *        manifest is then removed; the next run waits until kletd's worker finished and its
 *        housekeeping removed the pod's sandbox from the runtime, the state the raw run
 *        leaves (its own StopPodSandbox and RemovePodSandbox return before the next run), so
 *        that neither's teardown falls into the other's time.
 * The two runs of a pair are taken in turn (raw first in even pairs, kletd first in odd ones).
 * Prints one line per pair (with the raw run's four calls, ms each: RunPodSandbox,
 * ImageStatus, CreateContainer, StartContainer), then medians and p90 of both, the ratio
 * of the medians, the median of the pairs' own differences (kletd - raw) and the ratio it
 * gives, and kletd's own time:
 *   start raw_ms_p50=R raw_ms_p90=R kletd_ms_p50=K kletd_ms_p90=K ratio_p50=X pairs=N
 *         before_runtime_ms_p50=P diff_ms_p50=D ratio_paired=(R+D)/R
 *         own_ms_p50=O own_ms_p90=O ratio_own=(R+O)/R
 * own: kletd's own time in a start, apart from the runtime's: the part before RunPodSandbox
 * plus, from its "creating sandbox" log line to the Started event, what its four CRI
 * calls' times (kletd at -v=5 logs each) leave. The runtime's times move by tens of ms
 * between starts, which the medians of whole starts take in; own does not, and (R+O)/R is
 * what the ratio would be if the runtime took the same time for both. -1 without -v=5.
 * A call's time runs from its request to its answer read, so time kletd's loop spent on
 * other work while a call was out counts as the runtime's: own is a lower bound,
 * kletd_ms - raw_ms an upper.
 * Not part of `make check`: run by tests/bench/bench_start.sh (make bench). */
#include <sys/stat.h>

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <event2/event.h>

#include "core/log.h"
#include "core/util.h"
#include "cri/cri.h"
#include "kuberuntime/internal.h"
#include "node/cgroups.h"
#include "pod/pod.h"

#define IMAGE "klet.local/busybox:1.35"

static struct event_base *base;
static struct cri        *cri;
static char               raw_calls[128]; /* the last raw run's calls, ms each */
static struct cgroups    *raw_cg;         /* NULL: the raw pods have no CgroupParent */

static const char *
raw_cg_name(void *arg, const struct pod *pod, char *buf, size_t len)
{
	(void)arg;
	return cgroups_pod_name(raw_cg, pod, buf, len);
}

struct raw {
	struct pod                    *pod;
	struct kr_env                  env;
	Runtime__V1__PodSandboxConfig *sb;
	char                          *sandbox_id;
	char                          *container_id;
	char                          *image_ref;
	int64_t                        t0_us;
	int64_t                        t1_us;
	int64_t                        at_us[4]; /* each call's answer */
	int                            failed;
	int                            done;
};

static int64_t
wall_us(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (int64_t)ts.tv_sec * 1000000 + ts.tv_nsec / 1000;
}

static void
raw_end(struct raw *r, int failed, const char *what, const char *msg)
{
	if (failed) {
		fprintf(stderr, "bench_start: raw %s: %s\n", what, msg);
		r->failed = 1;
	}
	r->done = 1;
	event_base_loopbreak(base);
}

static void
raw_started(int code, const char *msg, const Runtime__V1__StartContainerResponse *resp, void *arg)
{
	struct raw *r = arg;

	(void)resp;
	r->t1_us = r->at_us[3] = wall_us();
	raw_end(r, code != GRPC_OK, "StartContainer", msg);
}

static void
raw_created(int code, const char *msg, const Runtime__V1__CreateContainerResponse *resp, void *arg)
{
	struct raw                        *r = arg;
	Runtime__V1__StartContainerRequest req = RUNTIME__V1__START_CONTAINER_REQUEST__INIT;

	r->at_us[2] = wall_us();
	if (code != GRPC_OK) {
		raw_end(r, 1, "CreateContainer", msg);
		return;
	}
	r->container_id = xstrdup(resp->container_id);
	req.container_id = r->container_id;
	cri_start_container(cri, &req, 0, raw_started, r, r);
}

static void
raw_image(int code, const char *msg, const Runtime__V1__ImageStatusResponse *resp, void *arg)
{
	struct raw                         *r = arg;
	Runtime__V1__CreateContainerRequest req = RUNTIME__V1__CREATE_CONTAINER_REQUEST__INIT;
	Runtime__V1__ContainerConfig       *cc;
	struct kr_cinput                    in = { 0 };
	char                                err[512];

	r->at_us[1] = wall_us();
	if (code != GRPC_OK || resp->image == NULL) {
		raw_end(r, 1, "ImageStatus", code != GRPC_OK ? msg : "image not present");
		return;
	}
	r->image_ref = xstrdup(resp->image->id);
	in.image_ref = r->image_ref;
	in.pod_ip = "";
	cc = kr_container_config(&r->env, r->pod, &r->pod->containers[0], &in, err, sizeof(err));
	if (cc == NULL) {
		raw_end(r, 1, "container config", err);
		return;
	}
	req.pod_sandbox_id = r->sandbox_id;
	req.config = cc;
	req.sandbox_config = r->sb;
	cri_create_container(cri, &req, 0, raw_created, r, r);
	kr_msg_free(cc);
}

static void
raw_sandbox(int code, const char *msg, const Runtime__V1__RunPodSandboxResponse *resp, void *arg)
{
	struct raw                     *r = arg;
	Runtime__V1__ImageStatusRequest req = RUNTIME__V1__IMAGE_STATUS_REQUEST__INIT;
	Runtime__V1__ImageSpec          spec = RUNTIME__V1__IMAGE_SPEC__INIT;

	r->at_us[0] = wall_us();
	if (code != GRPC_OK) {
		raw_end(r, 1, "RunPodSandbox", msg);
		return;
	}
	r->sandbox_id = xstrdup(resp->pod_sandbox_id);
	spec.image = IMAGE;
	req.image = &spec;
	cri_image_status(cri, &req, 0, raw_image, r, r);
}

static void
raw_cleanup_cb(int code, const char *msg, const void *resp, void *arg)
{
	int *pending = arg;

	(void)code;
	(void)msg;
	(void)resp;
	if (--*pending == 0)
		event_base_loopbreak(base);
}

static void
raw_stopped(int code, const char *msg, const Runtime__V1__StopPodSandboxResponse *resp, void *arg)
{
	raw_cleanup_cb(code, msg, resp, arg);
}

static void
raw_removed(int code, const char *msg, const Runtime__V1__RemovePodSandboxResponse *resp, void *arg)
{
	raw_cleanup_cb(code, msg, resp, arg);
}

/* One raw start; returns the milliseconds, or -1. */
static double
raw_run(int i, const char *root, const char *logs, const char *node)
{
	struct raw r;
	char       doc[1024], err[512];
	double     ms = -1;
	int        pending;

	memset(&r, 0, sizeof(r));
	snprintf(doc, sizeof(doc),
	    "{\"apiVersion\":\"v1\",\"kind\":\"Pod\",\"metadata\":{\"name\":\"raw%d-%s\","
	    "\"namespace\":\"default\",\"uid\":\"0000raw0-0000-0000-0000-%012d\"},"
	    "\"spec\":{\"nodeName\":\"%s\",\"terminationGracePeriodSeconds\":1,"
	    "\"containers\":[{\"name\":\"c\",\"image\":\"" IMAGE "\","
	    "\"command\":[\"sleep\",\"3600\"]}]}}",
	    i, node, i, node);
	if ((r.pod = pod_from_json(doc, strlen(doc), err, sizeof(err))) == NULL) {
		fprintf(stderr, "bench_start: pod: %s\n", err);
		return -1;
	}
	r.env.root_dir = root;
	r.env.logs_dir = logs;
	r.env.resolv_conf = "/etc/resolv.conf";
	r.env.cgroup_root = "";
	if (raw_cg != NULL) {
		r.env.pod_cgroup = raw_cg_name;
		if (cgroups_pod_ensure(raw_cg, r.pod) == -1) {
			pod_unref(r.pod);
			return -1;
		}
	}
	r.env.node_name = node;
	r.env.host_ip = "127.0.0.1";
	if ((r.sb = kr_sandbox_config(&r.env, r.pod, 0, err, sizeof(err))) == NULL) {
		fprintf(stderr, "bench_start: sandbox config: %s\n", err);
		pod_unref(r.pod);
		return -1;
	}
	(void)mkdirs(r.sb->log_directory, 0755);
	{
		Runtime__V1__RunPodSandboxRequest req = RUNTIME__V1__RUN_POD_SANDBOX_REQUEST__INIT;

		req.config = r.sb;
		r.t0_us = wall_us();
		cri_run_pod_sandbox(cri, &req, 0, raw_sandbox, &r, &r);
	}
	while (!r.done)
		event_base_dispatch(base);
	if (!r.failed) {
		ms = (double)(r.t1_us - r.t0_us) / 1000;
		snprintf(raw_calls, sizeof(raw_calls), "%.1f,%.1f,%.1f,%.1f",
		    (double)(r.at_us[0] - r.t0_us) / 1000, (double)(r.at_us[1] - r.at_us[0]) / 1000,
		    (double)(r.at_us[2] - r.at_us[1]) / 1000,
		    (double)(r.at_us[3] - r.at_us[2]) / 1000);
	} else
		snprintf(raw_calls, sizeof(raw_calls), "-");
	if (r.sandbox_id != NULL) {
		Runtime__V1__StopPodSandboxRequest sr = RUNTIME__V1__STOP_POD_SANDBOX_REQUEST__INIT;
		Runtime__V1__RemovePodSandboxRequest rr =
		    RUNTIME__V1__REMOVE_POD_SANDBOX_REQUEST__INIT;

		sr.pod_sandbox_id = r.sandbox_id;
		pending = 1;
		cri_stop_pod_sandbox(cri, &sr, 0, raw_stopped, &pending, &pending);
		while (pending > 0)
			event_base_dispatch(base);
		rr.pod_sandbox_id = r.sandbox_id;
		pending = 1;
		cri_remove_pod_sandbox(cri, &rr, 0, raw_removed, &pending, &pending);
		while (pending > 0)
			event_base_dispatch(base);
	}
	if (raw_cg != NULL) {
		cgroups_pod_forget(raw_cg, r.pod->uid);
		if (cgroups_pod_remove(raw_cg, r.pod->uid) == -1)
			fprintf(stderr, "bench_start: the pod cgroup of raw%d is busy\n", i);
	}
	kr_msg_free(r.sb);
	free(r.sandbox_id);
	free(r.container_id);
	free(r.image_ref);
	pod_unref(r.pod);
	return ms;
}

/* The wall time of a klog line ("I1125 16:35:16.754314 ..."), in microseconds since the
 * epoch (local time, today's date: runs do not cross midnight). */
static int64_t
log_time_us(const char *line)
{
	int         mo, d, h, mi;
	double      s;
	struct tm   tm;
	time_t      now = time(NULL), t;
	const char *p = line + 1;

	if (sscanf(p, "%2d%2d %d:%d:%lf", &mo, &d, &h, &mi, &s) != 5)
		return -1;
	localtime_r(&now, &tm);
	tm.tm_mon = mo - 1;
	tm.tm_mday = d;
	tm.tm_hour = h;
	tm.tm_min = mi;
	tm.tm_sec = 0;
	tm.tm_isdst = -1;
	t = mktime(&tm);
	return (int64_t)t * 1000000 + (int64_t)(s * 1e6 + 0.5);
}

/* Waits (up to 60 s) for a line holding needle in the log after offset *off; returns its
 * time (or 0 when want_time is 0) and moves *off past it; -1 on timeout. */
static int64_t
log_wait(const char *path, long *off, const char *needle, int want_time)
{
	int64_t end = now_mono_ms() + 60000;
	char    line[4096];

	while (now_mono_ms() < end) {
		FILE *f = fopen(path, "r");

		if (f != NULL && fseek(f, *off, SEEK_SET) == 0) {
			long pos = *off;

			while (fgets(line, sizeof(line), f) != NULL) {
				size_t n = strlen(line);

				if (n == 0 || line[n - 1] != '\n')
					break; /* a partial line: read it again next time */
				pos += (long)n;
				if (strstr(line, needle) != NULL) {
					*off = pos;
					fclose(f);
					return want_time ? log_time_us(line) : 0;
				}
			}
			*off = pos;
		}
		if (f != NULL)
			fclose(f);
		usleep(500);
	}
	return -1;
}

struct gone {
	const char *name;
	int         found;
	int         done;
};

static void
gone_cb(int code, const char *msg, const Runtime__V1__ListPodSandboxResponse *resp, void *arg)
{
	struct gone *g = arg;
	size_t       i;

	(void)msg;
	g->found = code != GRPC_OK; /* a failed list proves nothing: ask again */
	for (i = 0; code == GRPC_OK && i < resp->n_items; i++)
		if (resp->items[i]->metadata != NULL &&
		    streq_null(resp->items[i]->metadata->name, g->name))
			g->found = 1;
	g->done = 1;
	event_base_loopbreak(base);
}

/* Waits (up to 30 s) until the runtime lists no sandbox of pod name; 0, or -1 on timeout. */
static int
sandbox_gone(const char *name)
{
	int64_t end = now_mono_ms() + 30000;

	while (now_mono_ms() < end) {
		Runtime__V1__ListPodSandboxRequest req =
		    RUNTIME__V1__LIST_POD_SANDBOX_REQUEST__INIT;
		struct gone g = { .name = name };

		cri_list_pod_sandbox(cri, &req, 0, gone_cb, &g, &g);
		while (!g.done)
			event_base_dispatch(base);
		if (!g.found)
			return 0;
		usleep(20000);
	}
	return -1;
}

/* The sum of the start's own CRI calls' times in kletd's log between offsets from and to
 * (kletd at -v=5 logs "cri NAME: OK in N us" for each call), in ms; -1 when not all four are
 * there (kletd at a lower verbosity). */
static double
calls_ms(const char *path, long from, long to)
{
	static const char *names[] = { "RunPodSandbox", "ImageStatus", "CreateContainer",
		"StartContainer" };
	char               line[4096], needle[64];
	FILE              *f = fopen(path, "r");
	double             sum = 0;
	int                seen = 0;
	size_t             i;

	if (f == NULL || fseek(f, from, SEEK_SET) != 0) {
		if (f != NULL)
			fclose(f);
		return -1;
	}
	while (ftell(f) < to && fgets(line, sizeof(line), f) != NULL) {
		for (i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
			const char *p;
			long long   us;

			snprintf(needle, sizeof(needle), " cri %s: OK in ", names[i]);
			if ((p = strstr(line, needle)) != NULL &&
			    sscanf(p + strlen(needle), "%lld", &us) == 1) {
				sum += (double)us / 1000;
				seen |= 1 << i;
			}
		}
	}
	fclose(f);
	return seen == 0xf ? sum : -1;
}

/* One kletd start; returns the milliseconds, or -1; *pre_ms gets the part before the
 * RunPodSandbox request left (kletd's own, before any runtime call). */
static double
kletd_run(int i, const char *dir, const char *log, const char *node, long *off, double *pre_ms,
    double *between_ms)
{
	char    tmp[4096], path[4096], needle[256], doc[1024];
	int64_t t0, t1, ts;
	long    from;
	double  calls;
	FILE   *f;

	snprintf(tmp, sizeof(tmp), "%s/.k%d.json.tmp", dir, i);
	snprintf(path, sizeof(path), "%s/k%d.json", dir, i);
	snprintf(doc, sizeof(doc),
	    "{\"apiVersion\":\"v1\",\"kind\":\"Pod\",\"metadata\":{\"name\":\"k%d\"},"
	    "\"spec\":{\"terminationGracePeriodSeconds\":1,"
	    "\"containers\":[{\"name\":\"c\",\"image\":\"" IMAGE "\","
	    "\"command\":[\"sleep\",\"3600\"]}]}}\n",
	    i);
	if ((f = fopen(tmp, "w")) == NULL || fputs(doc, f) == EOF || fclose(f) != 0) {
		fprintf(stderr, "bench_start: %s: %s\n", tmp, strerror(errno));
		return -1;
	}
	t0 = wall_us();
	if (rename(tmp, path) == -1) {
		fprintf(stderr, "bench_start: rename %s: %s\n", path, strerror(errno));
		return -1;
	}
	snprintf(needle, sizeof(needle), "pod default/k%d-%s: creating sandbox attempt 0", i, node);
	ts = log_wait(log, off, needle, 1);
	*pre_ms = ts > 0 ? (double)(ts - t0) / 1000 : -1;
	from = *off;
	snprintf(needle, sizeof(needle),
	    "event default/k%d-%s spec.containers{c} Normal Started:", i, node);
	t1 = log_wait(log, off, needle, 1);
	calls = ts > 0 && t1 > 0 ? calls_ms(log, from, *off) : -1;
	*between_ms = calls >= 0 ? (double)(t1 - ts) / 1000 - calls : -1;
	unlink(path);
	snprintf(needle, sizeof(needle), "-> finished pod=default/k%d-%s ", i, node);
	if (log_wait(log, off, needle, 0) == -1)
		fprintf(stderr, "bench_start: pod k%d did not finish\n", i);
	snprintf(needle, sizeof(needle), "k%d-%s", i, node);
	if (sandbox_gone(needle) == -1)
		fprintf(stderr, "bench_start: the sandbox of k%d was not removed\n", i);
	if (t1 < 0) {
		fprintf(stderr, "bench_start: kletd: no Started event for k%d\n", i);
		return -1;
	}
	return (double)(t1 - t0) / 1000;
}

static int
cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

static double
quantile(double *v, size_t n, double q)
{
	size_t i;

	if (n == 0)
		return -1;
	qsort(v, n, sizeof(*v), cmp_double);
	i = (size_t)(q * (double)(n - 1) + 0.5);
	return v[i];
}

static void
ready_cb(struct cri *c, int ready, const char *reason, void *arg)
{
	(void)c;
	(void)reason;
	(void)arg;
	if (ready)
		event_base_loopbreak(base);
}

int
main(int argc, char **argv)
{
	char               endpoint[512];
	struct cri_options o = { 0 };
	double            *raw, *kl, *pre, *dif, *own;
	size_t             nr = 0, nk = 0, np = 0, nd = 0, no = 0;
	long               off = 0;
	int                pairs, i;
	struct stat        st;

	if (argc != 8 && argc != 9) {
		fprintf(stderr,
		    "usage: bench_start SOCK MANIFEST_DIR KLETD_LOG NODE ROOT LOGS PAIRS "
		    "[CGROUP_ROOT]\n");
		return 2;
	}
	if (argc == 9) {
		struct cgroups_options co = {
			.driver = QOS_DRIVER_CGROUPFS, .root = argv[8], .v2 = -1
		};
		char err[256];

		if ((raw_cg = cgroups_new(&co, err, sizeof(err))) == NULL) {
			fprintf(stderr, "bench_start: cgroups: %s\n", err);
			return 1;
		}
	}
	pairs = atoi(argv[7]);
	if (pairs <= 0)
		return 2;
	log_init(0, 0);
	base = event_base_new();
	snprintf(endpoint, sizeof(endpoint), "unix://%s", argv[1]);
	o.timeout_ms = 60000;
	cri = cri_new(base, endpoint, &o, ready_cb, NULL);
	if (cri == NULL)
		return 1;
	event_base_dispatch(base);
	if (!cri_ready(cri)) {
		fprintf(stderr, "bench_start: runtime not ready\n");
		return 1;
	}
	if (stat(argv[3], &st) == 0)
		off = (long)st.st_size;
	raw = xcalloc((size_t)pairs, sizeof(*raw));
	kl = xcalloc((size_t)pairs, sizeof(*kl));
	pre = xcalloc((size_t)pairs, sizeof(*pre));
	dif = xcalloc((size_t)pairs, sizeof(*dif));
	own = xcalloc((size_t)pairs, sizeof(*own));
	for (i = 0; i < pairs; i++) {
		double r, k, p, b;

		/* In turn, raw first then kletd first: what the runtime still does after the
		 * previous start's teardown falls on each alike. */
		if (i % 2 == 0) {
			r = raw_run(i, argv[5], argv[6], argv[4]);
			k = kletd_run(i, argv[2], argv[3], argv[4], &off, &p, &b);
		} else {
			k = kletd_run(i, argv[2], argv[3], argv[4], &off, &p, &b);
			r = raw_run(i, argv[5], argv[6], argv[4]);
		}

		printf("pair %d raw_ms=%.1f kletd_ms=%.1f kletd_before_runtime_ms=%.2f "
		       "kletd_between_calls_ms=%.2f raw_calls_ms=%s\n",
		    i, r, k, p, b, raw_calls);
		fflush(stdout);
		if (r > 0)
			raw[nr++] = r;
		if (k > 0)
			kl[nk++] = k;
		if (p > 0)
			pre[np++] = p;
		if (r > 0 && k > 0)
			dif[nd++] = k - r;
		if (p > 0 && b >= 0)
			own[no++] = p + b;
	}
	{
		double r50 = quantile(raw, nr, 0.5), r90 = quantile(raw, nr, 0.9);
		double k50 = quantile(kl, nk, 0.5), k90 = quantile(kl, nk, 0.9);

		double d50 = quantile(dif, nd, 0.5), o50 = quantile(own, no, 0.5);

		/* The pairs' own differences too: the runtime's times move by tens of ms from one
		 * start to the next, and the ratio of the two medians takes that spread in. */
		printf("start raw_ms_p50=%.1f raw_ms_p90=%.1f kletd_ms_p50=%.1f kletd_ms_p90=%.1f "
		       "ratio_p50=%.3f pairs=%zu before_runtime_ms_p50=%.2f diff_ms_p50=%.1f "
		       "ratio_paired=%.3f own_ms_p50=%.2f own_ms_p90=%.2f ratio_own=%.3f\n",
		    r50, r90, k50, k90, r50 > 0 ? k50 / r50 : -1, nr < nk ? nr : nk,
		    quantile(pre, np, 0.5), d50, r50 > 0 ? (r50 + d50) / r50 : -1, o50,
		    quantile(own, no, 0.9), r50 > 0 && o50 >= 0 ? (r50 + o50) / r50 : -1);
	}
	free(dif);
	free(own);
	free(raw);
	free(kl);
	free(pre);
	cri_free(cri);
	event_base_free(base);
	cgroups_free(raw_cg);
	return 0;
}
