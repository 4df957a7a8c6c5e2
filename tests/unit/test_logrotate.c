/* test_logrotate.c — container log rotation: paths, rotated names, how many old files go,
 * and which live files a pass looks at (real files, real inotify). The rotation itself runs
 * against containerd in tests/e2e/test_logrotate_containerd.sh. */
#include <sys/stat.h>

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>

#include <event2/event.h>

#include "node/logrotate.h"
#include "node/podcache.h"
#include "core/util.h"
#include "pod/pod.h"
#include "pod/runtime.h"

static void
test_path_and_name(void **state)
{
	char *p, *r;

	(void)state;
	p = logrotate_path("/var/log/pods", "kube-system", "dns", "u-1", "coredns", 3);
	assert_string_equal(p, "/var/log/pods/kube-system_dns_u-1/coredns/3.log");
	r = logrotate_rotated_name(p, 1700000000); /* 2023-11-14 22:13:20 UTC */
	assert_string_equal(r, "/var/log/pods/kube-system_dns_u-1/coredns/3.log.20231114-221320");
	free(p);
	free(r);
	p = logrotate_path("/l", NULL, "n", "u", "c", 0);
	assert_string_equal(p, "/l/default_n_u/c/0.log");
	free(p);
	/* Names from the runtime never lead out of the logs dir. */
	assert_null(logrotate_path("/l", "ns", "n", "../../../etc", "c", 0));
	assert_null(logrotate_path("/l", "ns", "n", "u", "..", 0));
	assert_null(logrotate_path("/l", "ns", "n", "u", "a/b", 0));
	assert_null(logrotate_path("/l", "ns", "n", "u", NULL, 0));
}

static void
test_excess(void **state)
{
	static const struct {
		size_t nrotated;
		int    max_files;
		size_t want;
	} cases[] = {
		{ 0, 5, 0 },
		{ 3, 5, 0 },
		{ 4, 5, 1 },
		{ 9, 5, 6 },
		{ 0, 2, 0 },
		{ 1, 2, 1 },
		{ 5, 2, 5 },
		{ 1, 3, 0 },
		{ 2, 3, 1 },
	};
	size_t i;

	(void)state;
	for (i = 0; i < nitems(cases); i++)
		if (logrotate_excess(cases[i].nrotated, cases[i].max_files) != cases[i].want)
			fail_msg("excess(%zu, %d) = %zu, want %zu", cases[i].nrotated,
			    cases[i].max_files,
			    logrotate_excess(cases[i].nrotated, cases[i].max_files), cases[i].want);
}

/* The log a reader opens (node server, podctl logs): the newest instance, or the one before
 * with previous; the kubelet's messages otherwise. */
static void
test_container_log(void **state)
{
	static const char *json =
	    "{\"metadata\": {\"name\": \"web\", \"namespace\": \"ns\", \"uid\": \"u1\"}, "
	    "\"spec\": {\"containers\": [{\"name\": \"c\", \"image\": \"i\"}, "
	    "{\"name\": \"d\", \"image\": \"i\"}]}}";
	char                       err[256], *path;
	struct pod                *p = pod_from_json(json, strlen(json), err, sizeof(err));
	struct rt_container        cs[2];
	struct rt_pod_status       st;
	const struct rt_container *ct;

	(void)state;
	assert_non_null(p);
	memset(cs, 0, sizeof(cs));
	memset(&st, 0, sizeof(st));
	cs[0].id = "new";
	cs[0].name = "c";
	cs[0].restart_count = 2;
	cs[1].id = "old";
	cs[1].name = "c";
	cs[1].restart_count = 1;
	st.containers = cs;
	st.ncontainers = 2;
	assert_int_equal(
	    logrotate_container_log("/l", p, &st, "c", 0, &path, &ct, err, sizeof(err)), 0);
	assert_string_equal(path, "/l/ns_web_u1/c/2.log");
	assert_string_equal(ct->id, "new");
	free(path);
	assert_int_equal(
	    logrotate_container_log("/l", p, &st, "c", 1, &path, &ct, err, sizeof(err)), 0);
	assert_string_equal(path, "/l/ns_web_u1/c/1.log");
	assert_string_equal(ct->id, "old");
	free(path);
	assert_int_equal(
	    logrotate_container_log("/l", p, &st, "x", 0, &path, &ct, err, sizeof(err)), -1);
	assert_string_equal(err, "container x is not valid for pod web");
	assert_int_equal(
	    logrotate_container_log("/l", p, &st, "d", 0, &path, &ct, err, sizeof(err)), -1);
	assert_string_equal(err,
	    "container \"d\" in pod \"web\" is waiting to start: "
	    "ContainerCreating");
	st.ncontainers = 1;
	assert_int_equal(
	    logrotate_container_log("/l", p, &st, "c", 1, &path, &ct, err, sizeof(err)), -1);
	assert_string_equal(err, "previous terminated container \"c\" in pod \"web\" not found");
	assert_int_equal(
	    logrotate_container_log("/l", p, NULL, "c", 0, &path, &ct, err, sizeof(err)), -1);
	pod_unref(p);
}

struct lw {
	char               dir[64];
	char              *log[3]; /* containers a and b (running), z (exited) */
	struct event_base *base;
	struct podcache   *cache;
	struct logrotate  *lr;
};

static void
lw_append(const char *path, const char *text)
{
	FILE *f = fopen(path, "a");

	assert_non_null(f);
	assert_int_not_equal(fputs(text, f), EOF);
	assert_int_equal(fclose(f), 0);
}

static struct lw *
lw_new(int no_watch)
{
	struct lw               *w = xcalloc(1, sizeof(*w));
	struct rt_pod_status     st;
	struct logrotate_options o = { 0 };
	static const char       *names[] = { "a", "b", "z" };
	char                    *d;
	int                      i;

	snprintf(w->dir, sizeof(w->dir), "/tmp/test_logrotate.XXXXXX");
	assert_non_null(mkdtemp(w->dir));
	memset(&st, 0, sizeof(st));
	st.uid = xstrdup("u1");
	st.name = xstrdup("web");
	st.ns = xstrdup("ns");
	st.ncontainers = 3;
	st.containers = xcalloc(3, sizeof(*st.containers));
	for (i = 0; i < 3; i++) {
		st.containers[i].id = xsprintf("id-%s", names[i]);
		st.containers[i].name = xstrdup(names[i]);
		st.containers[i].state = i < 2 ? RT_RUNNING : RT_EXITED;
		st.containers[i].created_at = 100 - i;
		w->log[i] = logrotate_path(w->dir, "ns", "web", "u1", names[i], 0);
		d = xsprintf("%s/ns_web_u1/%s", w->dir, names[i]);
		assert_int_equal(mkdirs(d, 0755), 0);
		free(d);
		lw_append(w->log[i], "one line\n");
	}
	w->base = event_base_new();
	w->cache = podcache_new(w->base);
	assert_int_equal(podcache_set(w->cache, &st, 1000), 1);
	rt_pod_status_clear(&st);
	o.logs_dir = w->dir;
	o.max_size = 1 << 20; /* never reached: no rotation (no runtime here) */
	o.max_files = 5;
	o.no_watch = no_watch;
	w->lr = logrotate_new(NULL, w->cache, &o);
	return w;
}

static void
lw_free(struct lw *w)
{
	char *cmd;
	int   i;

	logrotate_free(w->lr);
	podcache_free(w->cache);
	event_base_free(w->base);
	for (i = 0; i < 3; i++)
		free(w->log[i]);
	cmd = xsprintf("rm -rf '%s'", w->dir);
	assert_int_equal(system(cmd), 0);
	free(cmd);
	free(w);
}

/* Runs a pass; checks how many live files it stat'ed and how many it left alone. */
static void
lw_pass(struct lw *w, uint64_t checked, uint64_t unchanged)
{
	struct logrotate_stats a, b;

	logrotate_stats(w->lr, &a);
	assert_int_equal(logrotate_run(w->lr), 0);
	logrotate_stats(w->lr, &b);
	assert_int_equal(b.checked - a.checked, checked);
	assert_int_equal(b.unchanged - a.unchanged, unchanged);
}

/* A log found under the size is stat'ed again only once something happened to it. */
static void
test_unchanged_logs_not_looked_at(void **state)
{
	struct lw *w = lw_new(0);
	char      *other;

	(void)state;
	lw_pass(w, 2, 0); /* the first look: both running containers (z exited: never) */
	lw_pass(w, 0, 2);
	lw_pass(w, 0, 2);
	lw_append(w->log[0], "two\n"); /* a written */
	lw_pass(w, 1, 1);
	lw_pass(w, 0, 2);                            /* a's watch armed again */
	assert_int_equal(truncate(w->log[1], 0), 0); /* b cut */
	lw_pass(w, 1, 1);
	lw_pass(w, 0, 2);
	/* b replaced by another file (its own inode never written) */
	other = xsprintf("%s/other", w->dir);
	lw_append(other, "x\n");
	assert_int_equal(rename(other, w->log[1]), 0);
	lw_pass(w, 1, 1);
	lw_pass(w, 0, 2);
	lw_append(w->log[1], "y\n"); /* the new b is the one watched now */
	lw_pass(w, 1, 1);
	/* a unlinked: looked at in every pass while it is missing (no watch can be put) */
	assert_int_equal(unlink(w->log[0]), 0);
	lw_pass(w, 1, 1);
	lw_pass(w, 1, 1);
	lw_pass(w, 1, 1);
	lw_append(w->log[0], "back\n");
	lw_pass(w, 1, 1);
	lw_pass(w, 0, 2);
	/* renamed away and the name made again, neither written */
	assert_int_equal(rename(w->log[0], other), 0);
	lw_append(other, "z\n"); /* a write to the old inode, under its new name */
	lw_pass(w, 1, 1);
	lw_pass(w, 1, 1); /* missing still */
	assert_int_equal(rename(other, w->log[0]), 0);
	lw_pass(w, 1, 1);
	lw_pass(w, 0, 2);
	free(other);
	lw_free(w);
}

/* Without watches every running container's log is stat'ed in every pass. */
static void
test_without_watches_every_pass_looks(void **state)
{
	struct lw *w = lw_new(1);

	(void)state;
	lw_pass(w, 2, 0);
	lw_pass(w, 2, 0);
	lw_append(w->log[0], "two\n");
	lw_pass(w, 2, 0);
	lw_free(w);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_path_and_name),
		cmocka_unit_test(test_excess),
		cmocka_unit_test(test_container_log),
		cmocka_unit_test(test_unchanged_logs_not_looked_at),
		cmocka_unit_test(test_without_watches_every_pass_looks),
	};

	return cmocka_run_group_tests_name("logrotate", tests, NULL, NULL);
}
