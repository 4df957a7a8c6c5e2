/* test_logreader.c — the CRI log reader: record parsing, partial lines joined, timestamps
 * kept or stripped, tail, since, limitBytes, streams, a truncated last line, a line cut by
 * a rotation while following. */
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

#include <event2/buffer.h>

#include "core/util.h"
#include "core/logreader.h"

static char dir[] = "/tmp/klet-logreader-XXXXXX";

/* The output into an evbuffer, as the node server takes it. */
static void
sink_write(void *arg, const void *buf, size_t len)
{
	evbuffer_add(arg, buf, len);
}

static char *
put(const char *name, const char *content)
{
	char *p = xsprintf("%s/%s", dir, name);
	FILE *fp = fopen(p, "w");

	assert_non_null(fp);
	fputs(content, fp);
	fclose(fp);
	return p;
}

/* Reads the whole file with opts, in steps of max bytes; returns the output (free it). */
static char *
read_all(const char *path, const struct logreader_opts *o, size_t max)
{
	struct logreader     *r;
	struct evbuffer      *b = evbuffer_new();
	struct logreader_sink sk = { sink_write, b };
	char                  err[256], *out;
	size_t                len;
	int                   rc, turns = 0;

	r = logreader_open(path, o, err, sizeof(err));
	assert_non_null(r);
	while ((rc = logreader_step(r, &sk, max)) == LOGREADER_MORE)
		assert_true(++turns < 100000);
	assert_int_equal(rc, LOGREADER_DONE);
	logreader_free(r);
	len = evbuffer_get_length(b);
	out = xmalloc(len + 1);
	evbuffer_remove(b, out, len);
	out[len] = '\0';
	evbuffer_free(b);
	return out;
}

#define TS1 "2024-01-02T03:04:05.000000001Z"
#define TS2 "2024-01-02T03:04:06.5+01:00"
#define TS3 "2024-01-02T03:04:07.123456789Z"

static const char *sample =
    TS1 " stdout F one\n" TS1 " stderr P tw\n" TS2 " stderr F o\n" TS3 " stdout F three\n";

static void
test_parse(void **state)
{
	struct cri_log_record r;
	int64_t               ns;

	(void)state;
	assert_int_equal(
	    logreader_parse(TS1 " stdout F hello", strlen(TS1 " stdout F hello"), &r), 0);
	assert_int_equal(r.stream, LOGREADER_STDOUT);
	assert_false(r.partial);
	assert_int_equal(r.msg_len, 5);
	assert_memory_equal(r.msg, "hello", 5);
	assert_int_equal(r.ts_ns, 1704164645000000001LL);
	assert_int_equal(logreader_parse(TS1 " stderr P ", strlen(TS1 " stderr P "), &r), 0);
	assert_true(r.partial);
	assert_int_equal(r.msg_len, 0);
	assert_int_equal(logreader_parse(TS1 " stdout F", strlen(TS1 " stdout F"), &r), 0);
	assert_int_equal(r.msg_len, 0);
	/* a tag with options after ':' */
	assert_int_equal(logreader_parse(TS1 " stdout F:x y", strlen(TS1 " stdout F:x y"), &r), 0);
	assert_int_equal(r.msg_len, 1);
	/* not records */
	assert_int_equal(logreader_parse("garbage", 7, &r), -1);
	assert_int_equal(logreader_parse(TS1 " stdin F x", strlen(TS1 " stdin F x"), &r), -1);
	assert_int_equal(logreader_parse(TS1 " stdout X x", strlen(TS1 " stdout X x"), &r), -1);
	assert_int_equal(logreader_parse("2024-13-02T03:04:05Z stdout F x", 31, &r), -1);
	/* an offset: 03:04:06.5+01:00 is 02:04:06.5 UTC */
	assert_int_equal(logreader_parse_time(TS2, strlen(TS2), &ns), 0);
	assert_int_equal(ns, 1704161046500000000LL);
	assert_int_equal(logreader_parse_time("2024-01-02T03:04:05", 19, &ns), -1);
	assert_int_equal(logreader_parse_time("2024-01-02T03:04:05.Z", 21, &ns), -1);
	/* Years out of int64 nanoseconds (before 1678, after 2262): clamped, order kept. */
	assert_int_equal(logreader_parse_time("0000-01-01T00:00:00Z", 20, &ns), 0);
	assert_true(ns == INT64_MIN);
	assert_int_equal(logreader_parse_time("1677-09-21T00:12:43.145224191Z", 30, &ns), 0);
	assert_true(ns == INT64_MIN);
	assert_int_equal(logreader_parse_time("1677-09-21T00:12:44Z", 20, &ns), 0);
	assert_true(ns > INT64_MIN && ns < 0);
	assert_int_equal(logreader_parse_time("2262-04-11T23:47:16.854775807Z", 30, &ns), 0);
	assert_true(ns == INT64_MAX);
	assert_int_equal(logreader_parse_time("2262-04-11T23:47:16.854775808Z", 30, &ns), 0);
	assert_true(ns == INT64_MAX);
	assert_int_equal(logreader_parse_time("2262-04-11T23:47:16Z", 20, &ns), 0);
	assert_true(ns == 9223372036000000000LL);
	assert_int_equal(logreader_parse_time("9999-12-31T23:59:59.999999999-23:59", 35, &ns), 0);
	assert_true(ns == INT64_MAX);
}

static void
test_plain_and_partial(void **state)
{
	struct logreader_opts o = { .tail_lines = -1, .limit_bytes = -1 };
	char                 *p = put("plain.log", sample), *out;
	size_t                max;

	(void)state;
	/* the P record's content joins the next one; any chunk size gives the same output */
	for (max = 1; max <= 4096; max = max * 3 + 1) {
		out = read_all(p, &o, max);
		assert_string_equal(out, "one\ntwo\nthree\n");
		free(out);
	}
	o.timestamps = 1; /* each record keeps its own timestamp, as the kubelet writes it */
	out = read_all(p, &o, 4096);
	assert_string_equal(out, TS1 " one\n" TS1 " tw" TS2 " o\n" TS3 " three\n");
	free(out);
	o.timestamps = 0;
	o.streams = LOGREADER_STDERR;
	out = read_all(p, &o, 4096);
	assert_string_equal(out, "two\n");
	free(out);
	free(p);
}

static void
test_tail_since_limit(void **state)
{
	struct logreader_opts o = { .tail_lines = 1, .limit_bytes = -1 };
	char                 *p = put("tail.log", sample), *out;

	(void)state;
	out = read_all(p, &o, 4096);
	assert_string_equal(out, "three\n");
	free(out);
	o.tail_lines = 2; /* file lines: the F half of "two" and "three" */
	out = read_all(p, &o, 7);
	assert_string_equal(out, "o\nthree\n");
	free(out);
	o.tail_lines = 0;
	out = read_all(p, &o, 4096);
	assert_string_equal(out, "");
	free(out);
	o.tail_lines = 100;
	out = read_all(p, &o, 4096);
	assert_string_equal(out, "one\ntwo\nthree\n");
	free(out);
	o.tail_lines = -1;
	assert_int_equal(logreader_parse_time(TS3, strlen(TS3), &o.since_ns), 0);
	out = read_all(p, &o, 4096);
	assert_string_equal(out, "three\n");
	free(out);
	o.since_ns = 0;
	o.limit_bytes = 6;
	out = read_all(p, &o, 4096);
	assert_string_equal(out, "one\ntw");
	free(out);
	free(p);
}

static void
test_truncated_and_garbage(void **state)
{
	struct logreader_opts o = { .tail_lines = -1, .limit_bytes = -1 };
	char                 *p = put("trunc.log",
	                         TS1 " stdout F a\nnot a record\n" TS1 " stdout F b\n" TS1
	                             " stdout F last-without-newline"),
	     *out;

	(void)state;
	out = read_all(p, &o, 5);
	assert_string_equal(out, "a\nb\nlast-without-newline\n");
	free(out);
	free(p);
}

/* Following: a P record at the end of the file the rotator renamed, its F in the new one. */
/* A file line of LOGREADER_MAX_LINE bytes is read; one byte more and it is skipped, whatever
 * the read size (the fuzz target checks this with the limit scaled down). */
static void
test_long_lines(void **state)
{
	struct logreader_opts o = { .tail_lines = -1, .limit_bytes = -1 };
	static const char     pre[] = TS1 " stdout F ";
	size_t                n = LOGREADER_MAX_LINE, steps[] = { 65536, 1000, 1 << 20 }, i;
	char                 *content = xmalloc(2 * n + 64), *p, *out;

	(void)state;
	p = content;
	memcpy(p, pre, sizeof(pre) - 1); /* exactly the limit */
	memset(p + sizeof(pre) - 1, 'a', n - (sizeof(pre) - 1));
	p[n] = '\n';
	p += n + 1;
	memcpy(p, pre, sizeof(pre) - 1); /* one byte over */
	memset(p + sizeof(pre) - 1, 'b', n + 1 - (sizeof(pre) - 1));
	p[n + 1] = '\n';
	p += n + 2;
	strcpy(p, TS1 " stdout F end\n");
	p = put("long.log", content);
	for (i = 0; i < nitems(steps); i++) {
		out = read_all(p, &o, steps[i]);
		assert_int_equal(strlen(out), n - (sizeof(pre) - 1) + 1 + 4);
		assert_true(out[0] == 'a' && out[n - sizeof(pre)] == 'a');
		assert_string_equal(out + n - (sizeof(pre) - 1), "\nend\n");
		free(out);
	}
	free(p);
	free(content);
}

static void
test_follow_rotation(void **state)
{
	struct logreader_opts o = { .tail_lines = -1, .limit_bytes = -1, .follow = 1 };
	char                 *p = put("0.log", TS1 " stdout F before\n" TS1 " stdout P cut-"), *rot;
	struct logreader     *r;
	struct evbuffer      *b = evbuffer_new();
	struct logreader_sink sk = { sink_write, b };
	char                  err[256], out[256];
	FILE                 *fp;
	size_t                n;

	(void)state;
	r = logreader_open(p, &o, err, sizeof(err));
	assert_non_null(r);
	while (logreader_step(r, &sk, 4096) == LOGREADER_MORE)
		;
	/* the incomplete line waits while following */
	assert_int_equal(logreader_step(r, &sk, 4096), LOGREADER_EOF);
	assert_int_equal(logreader_check_rotation(r, &sk), 0);
	fp = fopen(p, "a");
	fputs("by-rotation\n", fp);
	fclose(fp);
	while (logreader_step(r, &sk, 4096) == LOGREADER_MORE)
		;
	rot = xsprintf("%s.20240102-030405", p);
	assert_int_equal(rename(p, rot), 0);
	assert_int_equal(logreader_check_rotation(r, &sk), 0); /* not reopened yet */
	free(put("0.log", TS1 " stdout F joined\n" TS1 " stdout F after\n"));
	assert_int_equal(logreader_check_rotation(r, &sk), 1);
	while (logreader_step(r, &sk, 4096) == LOGREADER_MORE)
		;
	logreader_finish(r, &sk);
	n = evbuffer_remove(b, out, sizeof(out) - 1);
	out[n] = '\0';
	assert_string_equal(out, "before\ncut-by-rotationjoined\nafter\n");
	assert_int_equal(logreader_written(r), (int64_t)n);
	logreader_free(r);
	evbuffer_free(b);
	unlink(rot);
	free(rot);
	free(p);
}

/* Following: the runtime wrote to the renamed file before it reopened; nothing is lost. */
static void
test_follow_rotation_late_write(void **state)
{
	struct logreader_opts o = { .tail_lines = -1, .limit_bytes = -1, .follow = 1 };
	char                 *p = put("1.log", TS1 " stdout F a\n"), *rot;
	struct logreader     *r;
	struct evbuffer      *b = evbuffer_new();
	struct logreader_sink sk = { sink_write, b };
	char                  err[256], out[256];
	FILE                 *fp;
	size_t                n;

	(void)state;
	r = logreader_open(p, &o, err, sizeof(err));
	assert_non_null(r);
	while (logreader_step(r, &sk, 4096) == LOGREADER_MORE)
		;
	rot = xsprintf("%s.20240102-030405", p);
	assert_int_equal(rename(p, rot), 0);
	fp = fopen(rot, "a");
	fputs(TS1 " stdout F late\n", fp);
	fclose(fp);
	free(put("1.log", TS1 " stdout F new\n"));
	assert_int_equal(logreader_check_rotation(r, &sk), 1);
	while (logreader_step(r, &sk, 4096) == LOGREADER_MORE)
		;
	n = evbuffer_remove(b, out, sizeof(out) - 1);
	out[n] = '\0';
	assert_string_equal(out, "a\nlate\nnew\n");
	logreader_free(r);
	evbuffer_free(b);
	unlink(rot);
	free(rot);
	free(p);
}

static void
test_missing(void **state)
{
	struct logreader_opts o = { .tail_lines = -1, .limit_bytes = -1 };
	char                  err[256];

	(void)state;
	assert_null(logreader_open("/nonexistent/0.log", &o, err, sizeof(err)));
	assert_non_null(strstr(err, "/nonexistent/0.log"));
}

static int
teardown(void **state)
{
	(void)state;
	return rmtree(dir);
}

int
main(void)
{
	const struct CMUnitTest t[] = {
		cmocka_unit_test(test_parse),
		cmocka_unit_test(test_plain_and_partial),
		cmocka_unit_test(test_tail_since_limit),
		cmocka_unit_test(test_truncated_and_garbage),
		cmocka_unit_test(test_long_lines),
		cmocka_unit_test(test_follow_rotation),
		cmocka_unit_test(test_follow_rotation_late_write),
		cmocka_unit_test(test_missing),
	};

	if (mkdtemp(dir) == NULL)
		return 1;
	return cmocka_run_group_tests_name("logreader", t, NULL, teardown);
}
