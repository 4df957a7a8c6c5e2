/* test_source_file.c — static pod manifests: defaults, deterministic UIDs, invalid files,
 * unchanged content, inotify on a real loop. */
#include <sys/stat.h>

#include <fcntl.h>

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

#include "node/events.h"
#include "core/log.h"
#include "core/loop.h"
#include "pod/pod.h"
#include "node/podconfig.h"
#include "node/source_file.h"
#include "core/util.h"

static const char *web_yaml =
    "apiVersion: v1\nkind: Pod\nmetadata:\n  name: web\n  labels:\n    app: web\n"
    "spec:\n  containers:\n  - name: httpd\n    image: klet.local/busybox:1.35\n"
    "    command: [httpd, -f]\n";
static const char *db_json =
    "{\"apiVersion\":\"v1\",\"kind\":\"Pod\",\"metadata\":{\"name\":\"db\",\"namespace\":\"data\","
    "\"annotations\":{\"a\":\"b\"}},\"spec\":{\"containers\":[{\"name\":\"c\","
    "\"image\":\"klet.local/busybox:1.35\"}]}}";

struct seen {
	char               ops[64][96];
	int                n;
	struct event_base *base;
	int                stop_at;
};

static void
on_update(enum pod_op op, const struct pod *pod, const char *source, void *arg)
{
	struct seen *s = arg;

	assert_true(s->n < 64);
	snprintf(s->ops[s->n++], sizeof(s->ops[0]), "%s %s/%s %s", pod_op_name(op), pod->ns,
	    pod->name, source);
	if (s->base != NULL && s->n >= s->stop_at)
		event_base_loopbreak(s->base);
}

/* The file source and podconfig share one pod per manifest: two references, no copy. */
static void
check_shared(const struct pod *pod, const char *source, int admitted, void *arg)
{
	(void)source;
	(void)admitted;
	(void)arg;
	assert_int_equal(pod->refs, 2);
}

static void
write_file(const char *dir, const char *name, const char *content)
{
	char *path = xsprintf("%s/%s", dir, name), *tmp = xsprintf("%s/.tmp-%s", dir, name);
	FILE *f = fopen(tmp, "w");

	assert_non_null(f);
	fputs(content, f);
	fclose(f);
	assert_int_equal(rename(tmp, path), 0);
	free(path);
	free(tmp);
}

static void
test_decode_defaults(void **state)
{
	struct pod *p, *p2;
	char       *doc, *doc2, err[256];
	size_t      len, len2;

	(void)state;
	assert_int_equal(source_file_decode(web_yaml, strlen(web_yaml), "/m/web.yaml", "node1", &p,
	                     &doc, &len, err, sizeof(err)),
	    0);
	assert_string_equal(p->name, "web-node1");
	assert_string_equal(p->ns, "default");
	assert_string_equal(p->node_name, "node1");
	assert_int_equal(strlen(p->uid), 32);
	assert_string_equal(kvlist_get(&p->annotations, "kubernetes.io/config.source"), "file");
	assert_string_equal(kvlist_get(&p->annotations, "kubernetes.io/config.hash"), p->uid);
	assert_string_equal(kvlist_get(&p->labels, "app"), "web");
	assert_int_equal(strlen(doc), len);
	/* Deterministic; depends on the node and the path. */
	assert_int_equal(source_file_decode(web_yaml, strlen(web_yaml), "/m/web.yaml", "node1", &p2,
	                     &doc2, &len2, err, sizeof(err)),
	    0);
	assert_string_equal(p->uid, p2->uid);
	assert_string_equal(doc, doc2);
	pod_unref(p2);
	free(doc2);
	assert_int_equal(source_file_decode(web_yaml, strlen(web_yaml), "/m/web.yaml", "node2", &p2,
	                     &doc2, &len2, err, sizeof(err)),
	    0);
	assert_string_not_equal(p->uid, p2->uid);
	pod_unref(p2);
	free(doc2);
	pod_unref(p);
	free(doc);
	assert_int_equal(source_file_decode(db_json, strlen(db_json), "/m/db.json", "n", &p, &doc,
	                     &len, err, sizeof(err)),
	    0);
	assert_string_equal(p->ns, "data");
	assert_string_equal(p->name, "db-n");
	assert_string_equal(kvlist_get(&p->annotations, "a"), "b");
	pod_unref(p);
	free(doc);
	assert_int_equal(source_file_decode("kind: Service\nmetadata: {name: x}\n", 33, "/x", "n",
	                     &p, &doc, &len, err, sizeof(err)),
	    -1);
	assert_int_equal(
	    source_file_decode("{nope", 5, "/x", "n", &p, &doc, &len, err, sizeof(err)), -1);
	assert_int_equal(
	    source_file_decode("metadata: {}\n", 13, "/x", "n", &p, &doc, &len, err, sizeof(err)),
	    -1);
	assert_non_null(strstr(err, "metadata.name"));
}

static void
test_scan_and_inotify(void **state)
{
	char                     tmpl[] = "/tmp/klet-sf-XXXXXX", *dir;
	struct event_base       *base = event_base_new();
	struct podconfig_options o = { .node_name = "n1" };
	struct seen              s = { 0 };
	struct podconfig        *pc;
	struct events           *ev = events_new(0);
	struct source_file      *sf;
	struct timeval           limit = { 5, 0 };
	char                    *cmd;

	(void)state;
	event_base_priority_init(base, LOOP_NPRI);
	dir = mkdtemp(tmpl);
	assert_non_null(dir);
	write_file(dir, "web.yaml", web_yaml);
	write_file(dir, "db.json", db_json);
	write_file(dir, ".hidden.yaml", web_yaml);
	write_file(dir, "bad.yaml", "metadata:\n  name: [oops\n");
	pc = podconfig_new(&o, on_update, &s);
	sf = source_file_new(base, pc, ev, dir, "n1", 60000);
	s.base = base;
	s.stop_at = 2;
	event_base_loopexit(base, &limit);
	event_base_dispatch(base);
	assert_int_equal(s.n, 2);
	assert_string_equal(s.ops[0], "ADD data/db-n1 file");
	assert_string_equal(s.ops[1], "ADD default/web-n1 file");
	assert_int_equal(events_count(ev), 1); /* the bad file, reported once */
	podconfig_foreach(pc, check_shared, NULL);
	/* Unchanged content: nothing, and the error is not reported again. */
	assert_int_equal(source_file_scan(sf), 2);
	assert_int_equal(s.n, 2);
	assert_int_equal(events_count(ev), 1);
	podconfig_foreach(pc, check_shared, NULL);
	/* An edit (seen through inotify): the old UID goes, the new one comes. */
	write_file(dir, "web.yaml",
	    "metadata:\n  name: web\nspec:\n  containers:\n  - name: x\n"
	    "    image: klet.local/busybox:1.35\n");
	s.stop_at = 4;
	event_base_loopexit(base, &limit);
	event_base_dispatch(base);
	assert_int_equal(s.n, 4);
	assert_string_equal(s.ops[2], "REMOVE default/web-n1 file");
	assert_string_equal(s.ops[3], "ADD default/web-n1 file");
	podconfig_foreach(pc, check_shared, NULL);
	/* Removal, and fixing the bad file. */
	cmd = xsprintf("%s/db.json", dir);
	unlink(cmd);
	free(cmd);
	s.stop_at = 5;
	event_base_loopexit(base, &limit);
	event_base_dispatch(base);
	assert_int_equal(s.n, 5);
	assert_string_equal(s.ops[4], "REMOVE data/db-n1 file");
	write_file(dir, "bad.yaml",
	    "metadata:\n  name: good\nspec:\n  containers:\n  - name: x\n"
	    "    image: klet.local/busybox:1.35\n");
	s.stop_at = 6;
	event_base_loopexit(base, &limit);
	event_base_dispatch(base);
	assert_int_equal(s.n, 6);
	assert_string_equal(s.ops[5], "ADD default/good-n1 file");
	assert_true(source_file_scans(sf) >= 4);
	source_file_free(sf);
	podconfig_free(pc);
	events_free(ev);
	event_base_free(base);
	cmd = xsprintf("rm -rf %s", dir);
	assert_int_equal(system(cmd), 0);
	free(cmd);
}

/* Runs a few loop turns without waiting: what is due now runs, a timer does not. */
static void
turns_now(struct event_base *base)
{
	int i;

	for (i = 0; i < 4; i++)
		event_base_loop(base, EVLOOP_NONBLOCK);
}

/* A manifest complete when its event arrives is acted on at once (no settle delay): an
 * atomic rename into the directory, a file closed after writing; one still open for
 * writing is not read half-written. */
static void
test_complete_at_once(void **state)
{
	char                     tmpl[] = "/tmp/klet-sf-XXXXXX", *dir, *path;
	struct event_base       *base = event_base_new();
	struct podconfig_options o = { .node_name = "n1" };
	struct seen              s = { 0 };
	struct podconfig        *pc;
	struct events           *ev = events_new(0);
	struct source_file      *sf;
	FILE                    *f;

	(void)state;
	event_base_priority_init(base, LOOP_NPRI);
	dir = mkdtemp(tmpl);
	assert_non_null(dir);
	pc = podconfig_new(&o, on_update, &s);
	sf = source_file_new(base, pc, ev, dir, "n1", 60000);
	turns_now(base); /* the first scan: nothing */
	assert_int_equal(s.n, 0);
	write_file(dir, "web.yaml", web_yaml); /* written aside, renamed in */
	turns_now(base);
	assert_int_equal(s.n, 1);
	assert_string_equal(s.ops[0], "ADD default/web-n1 file");
	/* Written in place: nothing while it is open, at once when it is closed. */
	path = xsprintf("%s/db.json", dir);
	f = fopen(path, "w");
	assert_non_null(f);
	fputs("{\"apiVersion\":\"v1\",", f);
	fflush(f);
	turns_now(base);
	assert_int_equal(s.n, 1);
	fputs(db_json + strlen("{\"apiVersion\":\"v1\","), f);
	fclose(f);
	turns_now(base);
	assert_int_equal(s.n, 2);
	assert_string_equal(s.ops[1], "ADD data/db-n1 file");
	/* Removed: at once too. */
	unlink(path);
	turns_now(base);
	assert_int_equal(s.n, 3);
	assert_string_equal(s.ops[2], "REMOVE data/db-n1 file");
	free(path);
	source_file_free(sf);
	podconfig_free(pc);
	events_free(ev);
	event_base_free(base);
	path = xsprintf("rm -rf %s", dir);
	assert_int_equal(system(path), 0);
	free(path);
}

static void
test_missing_dir(void **state)
{
	struct event_base       *base = event_base_new();
	struct podconfig_options o = { .node_name = "n1" };
	struct seen              s = { 0 };
	struct podconfig        *pc = podconfig_new(&o, on_update, &s);
	struct source_file      *sf = source_file_new(base, pc, NULL, "/nonexistent/klet", "n1", 0);

	(void)state;
	assert_int_equal(source_file_scan(sf), 0);
	assert_int_equal(s.n, 0);
	source_file_free(sf);
	podconfig_free(pc);
	event_base_free(base);
}

/* Lines of the log file holding needle. */
static int
log_count(const char *logpath, const char *needle)
{
	char  line[1024];
	FILE *f = fopen(logpath, "r");
	int   n = 0;

	assert_non_null(f);
	while (fgets(line, sizeof(line), f) != NULL)
		if (strstr(line, needle) != NULL)
			n++;
	fclose(f);
	return n;
}

/* A manifest directory of one test, with the log file and the podconfig it reports to. */
struct sf_fix {
	char                     tmpl[32];
	char                    *dir, *logpath;
	struct podconfig_options o;
	struct seen              s;
	struct podconfig        *pc;
	struct event_base       *base;
};

static void
fix_open(struct sf_fix *x)
{
	memset(x, 0, sizeof(*x));
	snprintf(x->tmpl, sizeof(x->tmpl), "/tmp/klet-sf-XXXXXX");
	x->dir = mkdtemp(x->tmpl);
	assert_non_null(x->dir);
	x->logpath = xsprintf("%s/.log", x->dir);
	assert_int_equal(log_open_file(x->logpath), 0);
	x->o.node_name = "n1";
	x->pc = podconfig_new(&x->o, on_update, &x->s);
	x->base = event_base_new();
}

static void
fix_close(struct sf_fix *x)
{
	char *p;

	podconfig_free(x->pc);
	event_base_free(x->base);
	log_open_file(NULL);
	p = xsprintf("rm -rf %s", x->dir);
	assert_int_equal(system(p), 0);
	free(p);
	free(x->logpath);
}

/* Issue 20 case 7: two manifests with one namespace/name: the later is refused with an
 * error naming both files (once), the first keeps running; when the first goes, the other
 * takes over. */
static void
test_duplicate_names(void **state)
{
	struct sf_fix       x;
	struct events      *ev = events_new(0);
	struct source_file *sf;
	char               *p, *needle;

	(void)state;
	fix_open(&x);
	write_file(x.dir, "a.yaml", web_yaml);
	write_file(x.dir, "b.yaml",
	    "metadata:\n  name: web\nspec:\n  containers:\n  - name: other\n"
	    "    image: klet.local/busybox:1.35\n");
	sf = source_file_new(x.base, x.pc, ev, x.dir, "n1", 60000);
	assert_int_equal(source_file_scan(sf), 1);
	assert_int_equal(x.s.n, 1);
	assert_string_equal(x.s.ops[0], "ADD default/web-n1 file");
	assert_int_equal(events_count(ev), 1);
	needle = xsprintf("Failed to load manifest %s/b.yaml: duplicate pod name: default/web-n1 "
	                  "is already given by %s/a.yaml",
	    x.dir, x.dir);
	assert_int_equal(log_count(x.logpath, needle), 1);
	/* Rescans: nothing new, said once. */
	assert_int_equal(source_file_scan(sf), 1);
	assert_int_equal(source_file_scan(sf), 1);
	assert_int_equal(x.s.n, 1);
	assert_int_equal(events_count(ev), 1);
	assert_int_equal(log_count(x.logpath, needle), 1);
	/* A third one with the same name, added later and first by name: refused too. */
	write_file(x.dir, "0.yaml", web_yaml);
	assert_int_equal(source_file_scan(sf), 1);
	assert_int_equal(x.s.n, 1);
	assert_int_equal(events_count(ev), 2);
	/* The first goes: the next one (0.yaml: same content as a.yaml, another UID) runs. */
	p = xsprintf("%s/a.yaml", x.dir);
	unlink(p);
	free(p);
	assert_int_equal(source_file_scan(sf), 1);
	assert_int_equal(x.s.n, 3);
	assert_string_equal(x.s.ops[1], "REMOVE default/web-n1 file");
	assert_string_equal(x.s.ops[2], "ADD default/web-n1 file");
	assert_int_equal(log_count(x.logpath, "is no longer given by another file"), 1);
	assert_int_equal(source_file_scan(sf), 1);
	assert_int_equal(x.s.n, 3);
	source_file_free(sf);
	events_free(ev);
	free(needle);
	fix_close(&x);
}

/* Issue 20 case 10: a FIFO, a directory and a symbolic link loop named *.yaml are skipped
 * with one log line each (not one per rescan), and the FIFO never blocks the scan. */
static void
test_odd_entries(void **state)
{
	struct sf_fix       x;
	struct source_file *sf;
	char               *p;
	int                 i;

	(void)state;
	fix_open(&x);
	write_file(x.dir, "web.yaml", web_yaml);
	p = xsprintf("%s/fifo.yaml", x.dir);
	assert_int_equal(mkfifo(p, 0600), 0);
	free(p);
	p = xsprintf("%s/dir.yaml", x.dir);
	assert_int_equal(mkdir(p, 0700), 0);
	free(p);
	p = xsprintf("%s/loop.yaml", x.dir);
	assert_int_equal(symlink("loop.yaml", p), 0);
	free(p);
	p = xsprintf("%s/dangling.yaml", x.dir);
	assert_int_equal(symlink("nowhere.yaml", p), 0);
	free(p);
	sf = source_file_new(x.base, x.pc, NULL, x.dir, "n1", 60000);
	alarm(10); /* a blocking open of the FIFO would hang here */
	for (i = 0; i < 3; i++)
		assert_int_equal(source_file_scan(sf), 1);
	alarm(0);
	assert_int_equal(x.s.n, 1);
	assert_int_equal(log_count(x.logpath, "is skipped"), 4);
	assert_int_equal(log_count(x.logpath, "fifo.yaml is skipped: a FIFO"), 1);
	assert_int_equal(log_count(x.logpath, "dir.yaml is skipped: a directory"), 1);
	assert_int_equal(log_count(x.logpath, "loop.yaml is skipped: Too many levels"), 1);
	assert_int_equal(log_count(x.logpath, "dangling.yaml is skipped: a dangling"), 1);
	source_file_free(sf);
	fix_close(&x);
}

/* The stat of a listed name, wrapped for this test (-Wl,--wrap=fstatat): while armed, a name
 * "vanish.yaml" is removed just before its stat, as if it went away between the scan's
 * listing and its look at the name. */
static int vanish_armed;
int        __real_fstatat(int dfd, const char *name, struct stat *st, int flags);
int        __wrap_fstatat(int dfd, const char *name, struct stat *st, int flags);

int
__wrap_fstatat(int dfd, const char *name, struct stat *st, int flags)
{
	const char *base = strrchr(name, '/') != NULL ? strrchr(name, '/') + 1 : name;

	if (vanish_armed && strcmp(base, "vanish.yaml") == 0) {
		vanish_armed = 0;
		(void)unlinkat(dfd, name, 0);
	}
	return __real_fstatat(dfd, name, st, flags);
}

/* A manifest gone between the listing and its stat is not there: no pod from it, no error
 * that it could not be read. */
static void
test_vanished_entry(void **state)
{
	struct sf_fix       x;
	struct source_file *sf;
	char               *p;

	(void)state;
	fix_open(&x);
	write_file(x.dir, "web.yaml", web_yaml);
	write_file(x.dir, "vanish.yaml", db_json);
	vanish_armed = 1;
	sf = source_file_new(x.base, x.pc, NULL, x.dir, "n1", 60000);
	assert_int_equal(source_file_scan(sf), 1);
	assert_int_equal(vanish_armed, 0); /* the scan looked at it */
	p = xsprintf("%s/vanish.yaml", x.dir);
	assert_int_equal(access(p, F_OK), -1);
	free(p);
	assert_int_equal(x.s.n, 1); /* web only */
	assert_int_equal(log_count(x.logpath, "vanish.yaml"), 0);
	source_file_free(sf);
	fix_close(&x);
}

/* Runs the loop for ms milliseconds. */
static void
run_for(struct event_base *base, long ms)
{
	struct timeval tv = { ms / 1000, (ms % 1000) * 1000 };

	event_base_loopexit(base, &tv);
	event_base_dispatch(base);
}

/* Runs the loop until the source has made want scans, handed want_sets sets over and
 * podconfig reported want_ops updates (0: any), 10 s at most. */
static void
run_until(struct event_base *base, const struct source_file *sf, const struct seen *s,
    uint64_t want, uint64_t want_sets, int want_ops)
{
	int i;

	for (i = 0; i < 1000; i++) {
		if (source_file_scans(sf) >= want && source_file_sets(sf) >= want_sets &&
		    s->n >= want_ops)
			return;
		run_for(base, 10);
	}
}

/* The periodic rescan that finds every file as it was (the kubelet's listing every 20 s)
 * hands podconfig nothing: not the set, not one upsert. One that finds a file read again
 * (touched), new or gone hands the whole set over, as before. Entries that are skipped (a
 * directory, a file that does not parse) stay skipped without making a rescan "changed". */
static void
test_rescan_unchanged(void **state)
{
	struct sf_fix       x;
	struct events      *ev = events_new(0);
	struct source_file *sf;
	char               *p;
	uint64_t            scans, sets;

	(void)state;
	fix_open(&x);
	event_base_priority_init(x.base, LOOP_NPRI);
	write_file(x.dir, "web.yaml", web_yaml);
	write_file(x.dir, "db.json", db_json);
	write_file(x.dir, "bad.yaml", "metadata:\n  name: [oops\n");
	p = xsprintf("%s/sub", x.dir);
	assert_int_equal(mkdir(p, 0755), 0);
	free(p);
	/* Files written within a second of a scan are read again at the next one (their
	 * times cannot tell a later change apart): let them age first. */
	sleep(2);
	sf = source_file_new(x.base, x.pc, ev, x.dir, "n1", 100);
	run_until(x.base, sf, &x.s, 1, 1, 2);
	assert_int_equal(x.s.n, 2);
	assert_int_equal(source_file_sets(sf), 1);
	scans = source_file_scans(sf);
	run_until(x.base, sf, &x.s, scans + 3, 0, 0);
	assert_true(source_file_scans(sf) >= scans + 3);
	assert_int_equal(source_file_sets(sf), 1); /* nothing changed: nothing handed over */
	assert_int_equal(x.s.n, 2);
	assert_int_equal(events_count(ev), 1); /* the bad file, reported once */
	podconfig_foreach(x.pc, check_shared, NULL);
	/* Touched: new times, same content. Read again and handed over; no pod changes. */
	p = xsprintf("%s/web.yaml", x.dir);
	assert_int_equal(utimensat(AT_FDCWD, p, NULL, 0), 0);
	free(p);
	run_until(x.base, sf, &x.s, 0, 2, 0);
	assert_true(source_file_sets(sf) >= 2);
	assert_int_equal(x.s.n, 2);
	/* Once its times are a second old (time has to pass), the rescans are quiet again. */
	run_for(x.base, 1300);
	sets = source_file_sets(sf);
	scans = source_file_scans(sf);
	run_until(x.base, sf, &x.s, scans + 3, 0, 0);
	assert_true(source_file_scans(sf) >= scans + 3);
	assert_int_equal(source_file_sets(sf), sets);
	/* A new file and a removed one: handed over, and podconfig told. */
	write_file(x.dir, "api.json",
	    "{\"metadata\":{\"name\":\"api\"},\"spec\":{\"containers\":[{\"name\":\"c\","
	    "\"image\":\"klet.local/busybox:1.35\"}]}}");
	run_until(x.base, sf, &x.s, 0, 0, 3);
	assert_int_equal(x.s.n, 3);
	assert_string_equal(x.s.ops[2], "ADD default/api-n1 file");
	assert_true(source_file_sets(sf) > sets);
	p = xsprintf("%s/db.json", x.dir);
	assert_int_equal(unlink(p), 0);
	free(p);
	run_until(x.base, sf, &x.s, 0, 0, 4);
	assert_int_equal(x.s.n, 4);
	assert_string_equal(x.s.ops[3], "REMOVE data/db-n1 file");
	podconfig_foreach(x.pc, check_shared, NULL);
	source_file_free(sf);
	events_free(ev);
	fix_close(&x);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_decode_defaults),
		cmocka_unit_test(test_scan_and_inotify),
		cmocka_unit_test(test_complete_at_once),
		cmocka_unit_test(test_missing_dir),
		cmocka_unit_test(test_duplicate_names),
		cmocka_unit_test(test_odd_entries),
		cmocka_unit_test(test_vanished_entry),
		cmocka_unit_test(test_rescan_unchanged),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
