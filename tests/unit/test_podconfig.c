/* test_podconfig.c — source merge (ADD/UPDATE/REMOVE/DELETE/RECONCILE/REJECT) and admission. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "core/json.h"
#include "node/podconfig.h"
#include "core/util.h"

struct seen {
	char ops[64][48];
	int  n;
};

static void
on_update(enum pod_op op, const struct pod *pod, const char *source, void *arg)
{
	struct seen *s = arg;

	assert_true(s->n < 64);
	snprintf(s->ops[s->n++], sizeof(s->ops[0]), "%s %s %s", pod_op_name(op), pod->uid, source);
}

/* A pod and its document. spec/status/ann are JSON fragments. */
static struct podconfig_item
item(const char *uid, const char *name, const char *spec, const char *status, int64_t del,
    char **docp)
{
	struct podconfig_item it;
	struct pod           *p = xcalloc(1, sizeof(*p));

	memset(&it, 0, sizeof(it));
	p->refs = 1; /* as decoded: one reference */
	p->uid = xstrdup(uid);
	p->name = xstrdup(name);
	p->ns = xstrdup("default");
	p->deletion_ts = del;
	if (del) {
		p->deletion_grace.set = 1;
		p->deletion_grace.v = 5;
	}
	xasprintf(docp,
	    "{\"metadata\":{\"name\":\"%s\",\"uid\":\"%s\"%s},\"spec\":%s,"
	    "\"status\":%s}",
	    name, uid, del ? ",\"deletionTimestamp\":\"2026-01-01T00:00:00Z\"" : "", spec, status);
	it.pod = p;
	it.doc = *docp;
	it.doc_len = strlen(*docp);
	it.format = "json";
	return it;
}

static void
upsert(struct podconfig *c, const char *src, const char *uid, const char *spec, const char *status,
    int64_t del)
{
	char                 *doc;
	struct podconfig_item it = item(uid, uid, spec, status, del, &doc);

	podconfig_upsert(c, src, &it);
	free(doc);
}

static void
test_incremental_ops(void **state)
{
	struct seen              s = { 0 };
	struct podconfig_options o = { .node_name = "n1" };
	struct podconfig        *c = podconfig_new(&o, on_update, &s);
	const char              *fmt, *src;
	size_t                   len;

	(void)state;
	upsert(c, "api", "u1", "{\"a\":1}", "{}", 0);
	upsert(c, "api", "u1", "{\"a\":1}", "{}", 0);            /* unchanged: nothing */
	upsert(c, "api", "u1", "{\"a\":1}", "{\"phase\":1}", 0); /* status only */
	upsert(c, "api", "u1", "{\"a\":2}", "{\"phase\":1}", 0); /* spec */
	upsert(c, "api", "u1", "{\"a\":2}", "{\"phase\":1}", 1); /* deletion */
	upsert(c, "api", "u1", "{\"a\":2}", "{\"phase\":1}", 1); /* again: nothing */
	podconfig_remove(c, "api", "u1");
	podconfig_remove(c, "api", "u1");
	assert_int_equal(s.n, 5);
	assert_string_equal(s.ops[0], "ADD u1 api");
	assert_string_equal(s.ops[1], "RECONCILE u1 api");
	assert_string_equal(s.ops[2], "UPDATE u1 api");
	assert_string_equal(s.ops[3], "DELETE u1 api");
	assert_string_equal(s.ops[4], "REMOVE u1 api");
	assert_int_equal(podconfig_count(c), 0);
	upsert(c, "api", "u2", "{}", "{}", 0);
	assert_non_null(podconfig_doc(c, "u2", &len, &fmt, &src));
	assert_string_equal(fmt, "json");
	assert_string_equal(src, "api");
	assert_non_null(
	    kvlist_get(&podconfig_get(c, "u2")->annotations, "kubernetes.io/config.seen"));
	assert_string_equal(
	    kvlist_get(&podconfig_get(c, "u2")->annotations, "kubernetes.io/config.source"), "api");
	/* Another source cannot take over a UID. */
	upsert(c, "file", "u2", "{\"x\":1}", "{}", 0);
	assert_int_equal(s.n, 6);
	podconfig_free(c);
}

static void
test_full_set(void **state)
{
	struct seen              s = { 0 };
	struct podconfig_options o = { .node_name = "n1" };
	struct podconfig        *c = podconfig_new(&o, on_update, &s);
	struct podconfig_item    it[3];
	char                    *docs[3];
	int                      i;

	(void)state;
	it[0] = item("a", "a", "{}", "{}", 0, &docs[0]);
	it[1] = item("b", "b", "{}", "{}", 0, &docs[1]);
	it[2] = item("b", "b", "{\"dup\":1}", "{}", 0, &docs[2]);
	assert_int_equal(podconfig_sources_ready(c), 1);
	podconfig_set_source(c, "file", it, 3);
	for (i = 0; i < 3; i++)
		free(docs[i]);
	assert_int_equal(s.n, 2);
	assert_int_equal(podconfig_count(c), 2);
	/* Same set again: nothing. Then b changed, a gone, c new. */
	it[0] = item("a", "a", "{}", "{}", 0, &docs[0]);
	it[1] = item("b", "b", "{}", "{}", 0, &docs[1]);
	podconfig_set_source(c, "file", it, 2);
	free(docs[0]);
	free(docs[1]);
	assert_int_equal(s.n, 2);
	it[0] = item("b", "b", "{\"image\":\"x\"}", "{}", 0, &docs[0]);
	it[1] = item("c", "c", "{}", "{}", 0, &docs[1]);
	podconfig_set_source(c, "file", it, 2);
	free(docs[0]);
	free(docs[1]);
	assert_int_equal(s.n, 5);
	assert_string_equal(s.ops[2], "REMOVE a file");
	assert_string_equal(s.ops[3], "UPDATE b file");
	assert_string_equal(s.ops[4], "ADD c file");
	/* An empty set removes everything of that source only. */
	upsert(c, "api", "z", "{}", "{}", 0);
	podconfig_set_source(c, "file", NULL, 0);
	assert_int_equal(podconfig_count(c), 1);
	assert_int_equal(podconfig_wanted(c, "z"), 1);
	assert_int_equal(podconfig_wanted(c, "b"), 0);
	podconfig_add_source(c, "other");
	assert_int_equal(podconfig_sources_ready(c), 0);
	podconfig_source_ready(c, "other");
	assert_int_equal(podconfig_sources_ready(c), 0); /* "api" has not said it is ready */
	podconfig_source_ready(c, "api");
	assert_int_equal(podconfig_sources_ready(c), 1);
	podconfig_free(c);
}

/* The set handed over in steps (a large manifest directory: source_file, a few a turn): the
 * removals at once, the first of a UID given twice kept, the others' pods dropped; the items
 * one by one; the source ready only when the caller says so. */
static void
test_set_in_steps(void **state)
{
	struct seen              s = { 0 };
	struct podconfig_options o = { .node_name = "n1" };
	struct podconfig        *c = podconfig_new(&o, on_update, &s);
	struct podconfig_item    it[3];
	char                    *docs[3];
	int                      i;

	(void)state;
	podconfig_add_source(c, "file");
	upsert(c, "file", "old", "{}", "{}", 0);
	upsert(c, "file", "a", "{}", "{}", 0);
	assert_int_equal(s.n, 2);
	it[0] = item("a", "a", "{}", "{}", 0, &docs[0]);
	it[1] = item("b", "b", "{}", "{}", 0, &docs[1]);
	it[2] = item("b", "b", "{\"dup\":1}", "{}", 0, &docs[2]);
	podconfig_set_source_begin(c, "file", it, 3);
	assert_int_equal(s.n, 3);
	assert_string_equal(s.ops[2], "REMOVE old file"); /* at once */
	assert_null(it[2].pod);                           /* given twice: dropped */
	assert_non_null(it[1].pod);
	assert_int_equal(podconfig_sources_ready(c), 0);
	podconfig_upsert(c, "file", &it[0]); /* unchanged: nothing */
	assert_int_equal(s.n, 3);
	podconfig_upsert(c, "file", &it[1]);
	assert_int_equal(s.n, 4);
	assert_string_equal(s.ops[3], "ADD b file");
	podconfig_upsert(c, "file", &it[2]); /* NULL pod: skipped */
	assert_int_equal(s.n, 4);
	assert_int_equal(podconfig_sources_ready(c), 0);
	podconfig_source_ready(c, "file");
	assert_int_equal(podconfig_sources_ready(c), 1);
	assert_int_equal(podconfig_count(c), 2);
	for (i = 0; i < 3; i++) {
		pod_unref(it[i].pod);
		free(docs[i]);
	}
	podconfig_free(c);
}

static int
active_not_done(const char *uid, void *arg)
{
	(void)arg;
	return strcmp(uid, "done") != 0;
}

static void
test_admission(void **state)
{
	struct seen              s = { 0 };
	struct kvlist            labels = { 0 };
	struct kv                l = { "disk", "ssd" };
	struct podconfig_options o = { .node_name = "n1",
		.max_pods = 2,
		.node_labels = &labels,
		.is_active = active_not_done };
	struct podconfig        *c;
	const char              *reason, *msg;
	char                    *doc;
	struct podconfig_item    it;

	(void)state;
	labels.items = &l;
	labels.n = 1;
	c = podconfig_new(&o, on_update, &s);
	upsert(c, "api", "done", "{}", "{}", 0);
	upsert(c, "api", "p1", "{}", "{}", 0);
	upsert(c, "api", "p2", "{}", "{}", 0);
	upsert(c, "api", "p3", "{}", "{}", 0);
	assert_string_equal(s.ops[3], "REJECT p3 api");
	assert_int_equal(podconfig_wanted(c, "p3"), 0);
	assert_int_equal(podconfig_rejection(c, "p3", &reason, &msg), 0);
	assert_string_equal(reason, "OutOfpods");
	assert_non_null(strstr(msg, "capacity: 2"));
	assert_int_equal(podconfig_rejection(c, "p1", &reason, &msg), -1);
	/* A rejected pod stays rejected when updated. */
	upsert(c, "api", "p3", "{\"x\":2}", "{}", 0);
	assert_int_equal(s.n, 4);
	podconfig_remove(c, "api", "p1");
	/* Wrong node, then a node selector. */
	it = item("w", "w", "{}", "{}", 0, &doc);
	pod_exclusive(it.pod)->node_name = xstrdup("n2");
	podconfig_upsert(c, "api", &it);
	free(doc);
	assert_int_equal(podconfig_rejection(c, "w", &reason, &msg), 0);
	assert_string_equal(reason, "NodeName");
	it = item("sel", "sel", "{}", "{}", 0, &doc);
	pod_exclusive(it.pod)->node_selector.n = 1;
	pod_exclusive(it.pod)->node_selector.items = xcalloc(1, sizeof(struct kv));
	pod_exclusive(it.pod)->node_selector.items[0].k = xstrdup("disk");
	pod_exclusive(it.pod)->node_selector.items[0].v = xstrdup("hdd");
	podconfig_upsert(c, "api", &it);
	free(doc);
	assert_int_equal(podconfig_rejection(c, "sel", &reason, &msg), 0);
	assert_string_equal(reason, "NodeAffinity");
	it = item("ok", "ok", "{}", "{}", 0, &doc);
	pod_exclusive(it.pod)->node_name = xstrdup("n1");
	pod_exclusive(it.pod)->node_selector.n = 1;
	pod_exclusive(it.pod)->node_selector.items = xcalloc(1, sizeof(struct kv));
	pod_exclusive(it.pod)->node_selector.items[0].k = xstrdup("kubernetes.io/hostname");
	pod_exclusive(it.pod)->node_selector.items[0].v = xstrdup("n1");
	podconfig_upsert(c, "api", &it);
	free(doc);
	assert_int_equal(podconfig_wanted(c, "ok"), 1);
	/* Issue 20 case 8: a UID that is no file name is refused at admission (the API pod is
	 * then reported Failed), before any path is made from it. */
	it = item("../../../../tmp/X", "evil", "{}", "{}", 0, &doc);
	podconfig_upsert(c, "api", &it);
	free(doc);
	assert_int_equal(podconfig_wanted(c, "../../../../tmp/X"), 0);
	assert_int_equal(podconfig_rejection(c, "../../../../tmp/X", &reason, &msg), 0);
	assert_string_equal(reason, "FailedValidation");
	assert_non_null(strstr(msg, "Pod failed validation: metadata.uid: "));
	podconfig_free(c);
}

/* is_active with active_version: a pod's answer is asked again only once the version moved,
 * and then counts at once; a version of 0 asks every time. */
struct active_fx {
	const char *inactive; /* the UID whose worker finished, or NULL */
	uint64_t    version;
	int         asked;
};

static int
active_fx_is(const char *uid, void *arg)
{
	struct active_fx *f = arg;

	f->asked++;
	return f->inactive == NULL || strcmp(uid, f->inactive) != 0;
}

static uint64_t
active_fx_version(void *arg)
{
	return ((struct active_fx *)arg)->version;
}

static void
test_admission_activity_cached(void **state)
{
	struct seen              s = { 0 };
	struct active_fx         f = { .version = 5 };
	struct podconfig_options o = { .node_name = "n1",
		.max_pods = 3,
		.is_active = active_fx_is,
		.is_active_arg = &f,
		.active_version = active_fx_version };
	struct podconfig        *c;
	const char              *reason, *msg;

	(void)state;
	c = podconfig_new(&o, on_update, &s);
	upsert(c, "api", "a", "{}", "{}", 0);
	upsert(c, "api", "b", "{}", "{}", 0);
	assert_int_equal(f.asked, 1); /* a, once, at b's admission */
	upsert(c, "api", "c", "{}", "{}", 0);
	assert_int_equal(f.asked, 2); /* b only: a's answer is still good */
	upsert(c, "api", "d", "{}", "{}", 0);
	assert_int_equal(f.asked, 3);
	assert_int_equal(podconfig_rejection(c, "d", &reason, &msg), 0);
	assert_string_equal(reason, "OutOfpods");
	/* a's worker finished, the version moved: every admitted pod is asked again, and a no
	 * longer counts. */
	f.inactive = "a";
	f.version = 6;
	upsert(c, "api", "e", "{}", "{}", 0);
	assert_int_equal(f.asked, 6);
	assert_int_equal(podconfig_wanted(c, "e"), 1);
	upsert(c, "api", "g", "{}", "{}", 0);
	assert_int_equal(f.asked, 7); /* e only */
	assert_int_equal(podconfig_rejection(c, "g", &reason, &msg), 0);
	/* The same answer kept over a version that does not move, even if the callback would
	 * say otherwise (it is the version that tells a change). */
	f.inactive = "b";
	upsert(c, "api", "h", "{}", "{}", 0);
	assert_int_equal(f.asked, 7);
	assert_int_equal(podconfig_rejection(c, "h", &reason, &msg), 0);
	/* 0: asked for each admitted pod at each admission (a, b, c, e; a is active again). */
	f.version = 0;
	upsert(c, "api", "i", "{}", "{}", 0);
	assert_int_equal(f.asked, 7 + 4);
	assert_int_equal(podconfig_rejection(c, "i", &reason, &msg), 0);
	assert_non_null(strstr(msg, "used: 3"));
	upsert(c, "api", "j", "{}", "{}", 0);
	assert_int_equal(f.asked, 11 + 4);
	podconfig_free(c);
}

static void
test_doc_hashes(void **state)
{
	static const char *y1 =
	    "metadata:\n  name: a\n  annotations:\n    x: '1'\n"
	    "    kubernetes.io/config.seen: t1\nspec:\n  containers: []\nstatus:\n  phase: Running\n";
	static const char *y2 =
	    "metadata:\n  name: a\n  annotations:\n    x: '1'\n"
	    "    kubernetes.io/config.seen: t2\nspec:\n  containers: []\nstatus:\n  phase: Pending\n";
	uint64_t a, b, c, d;

	(void)state;
	assert_int_equal(podconfig_doc_hashes(y1, strlen(y1), "yaml", &a, &b), 0);
	assert_int_equal(podconfig_doc_hashes(y2, strlen(y2), "yaml", &c, &d), 0);
	assert_true(a == c);
	assert_true(b != d);
	assert_int_equal(podconfig_doc_hashes("{", 1, "json", &a, &b), -1);
	/* From a tree already parsed (the watch's event): the same hashes as the document's. */
	{
		static const char *j =
		    "{\"metadata\":{\"name\":\"a\",\"annotations\":{\"x\":\"1\"}},"
		    "\"spec\":{\"containers\":[]},\"status\":{\"phase\":\"Running\"}}";
		struct json_doc *doc;
		char             err[64];

		assert_int_equal(podconfig_doc_hashes(j, strlen(j), "json", &a, &b), 0);
		doc = json_parse(j, strlen(j), NULL, err, sizeof(err));
		assert_non_null(doc);
		podconfig_json_hashes(json_root(doc), &c, &d);
		json_free(doc);
		assert_true(a == c && b == d);
		assert_int_equal(podconfig_doc_hashes(y1, strlen(y1), "yaml", &c, &d), 0);
		assert_true(b == d); /* the same status either way */
	}
}

/* A pod its source keeps a reference to is never written: podconfig keeps its own, decoded
 * again from the document, with the local annotations (an update keeps the first
 * sighting's). A pod nobody else holds is kept as it is, annotated in place. */
static void
test_shared_pod_not_written(void **state)
{
	struct seen              s = { 0 };
	struct podconfig_options o = { .node_name = "n1" };
	struct podconfig        *c = podconfig_new(&o, on_update, &s);
	struct podconfig_item    it;
	const struct pod        *mine, *kept;
	char                    *doc, *seen;

	(void)state;
	it = item("s1", "s1", "{}", "{}", 0, &doc);
	mine = pod_ref(it.pod);
	podconfig_upsert(c, "file", &it);
	free(doc);
	kept = podconfig_get(c, "s1");
	assert_non_null(kept);
	assert_ptr_not_equal(kept, mine);
	assert_int_equal(mine->refs, 1);
	assert_null(kvlist_get(&mine->annotations, "kubernetes.io/config.seen"));
	assert_null(kvlist_get(&mine->annotations, "kubernetes.io/config.source"));
	assert_string_equal(kept->uid, "s1");
	assert_non_null(kvlist_get(&kept->annotations, "kubernetes.io/config.seen"));
	assert_string_equal(kvlist_get(&kept->annotations, "kubernetes.io/config.source"), "file");
	seen = xstrdup(kvlist_get(&kept->annotations, "kubernetes.io/config.seen"));
	pod_unref(mine);
	/* An update, shared again: the first sighting stays, the source's pod is untouched. */
	it = item("s1", "s1", "{\"hostname\":\"h\"}", "{}", 0, &doc);
	mine = pod_ref(it.pod);
	podconfig_upsert(c, "file", &it);
	free(doc);
	assert_int_equal(s.n, 2);
	assert_string_equal(s.ops[1], "UPDATE s1 file");
	kept = podconfig_get(c, "s1");
	assert_ptr_not_equal(kept, mine);
	assert_null(kvlist_get(&mine->annotations, "kubernetes.io/config.seen"));
	assert_string_equal(kvlist_get(&kept->annotations, "kubernetes.io/config.seen"), seen);
	assert_string_equal(kept->hostname, "h");
	pod_unref(mine);
	free(seen);
	/* Not shared: kept as given. */
	it = item("s2", "s2", "{}", "{}", 0, &doc);
	mine = it.pod;
	podconfig_upsert(c, "api", &it);
	free(doc);
	assert_ptr_equal(podconfig_get(c, "s2"), mine);
	assert_int_equal(mine->refs, 1);
	assert_string_equal(kvlist_get(&mine->annotations, "kubernetes.io/config.source"), "api");
	podconfig_free(c);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_incremental_ops),
		cmocka_unit_test(test_full_set),
		cmocka_unit_test(test_set_in_steps),
		cmocka_unit_test(test_admission),
		cmocka_unit_test(test_admission_activity_cached),
		cmocka_unit_test(test_shared_pod_not_written),
		cmocka_unit_test(test_doc_hashes),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
