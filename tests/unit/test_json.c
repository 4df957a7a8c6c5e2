/* test_json.c — the json DOM: JSON and YAML parsing and typing, limits, errors, look-ups,
 * writer helpers. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "core/json.h"

static int nfail;
#define CASE_FAIL(...)                                                                             \
	do {                                                                                       \
		print_error(__VA_ARGS__);                                                          \
		print_error("\n");                                                                 \
		nfail++;                                                                           \
	} while (0)

struct parse_case {
	const char *name;
	int         yaml;
	const char *in;
	const char *out;     /* compact JSON re-serialization, or NULL for an error */
	const char *err_has; /* substring of the error */
};

static const struct parse_case parse_cases[] = {
	{ "json object", 0, "{\"a\":1,\"b\":[true,false,null],\"c\":\"x\"}",
	    "{\"a\":1,\"b\":[true,false,null],\"c\":\"x\"}", NULL },
	{ "json nested empty", 0, "{\"a\":{},\"b\":[[]]}", "{\"a\":{},\"b\":[[]]}", NULL },
	{ "json scalar root", 0, "\"x\"", "\"x\"", NULL },
	{ "json number kept as written", 0, "[1.50,-0,1e3,99999999999999999999]",
	    "[1.50,0,1e3,99999999999999999999]", NULL },
	{ "json int64 extremes", 0, "[-9223372036854775808,9223372036854775807]",
	    "[-9223372036854775808,9223372036854775807]", NULL },
	{ "json escapes", 0, "[\"a\\nb\\u00e9\\\"\"]", "[\"a\\nb\xc3\xa9\\\"\"]", NULL },
	{ "json whitespace", 0, " \n {\n \"a\" : [ 1 , 2 ] } \n", "{\"a\":[1,2]}", NULL },
	{ "json truncated", 0, "{\"a\":", NULL, "line 1, offset 5: parse error: premature EOF" },
	{ "json trailing garbage", 0, "[1,2]x", NULL, "trailing garbage" },
	{ "json empty input", 0, "", NULL, "premature EOF" },
	{ "json missing colon", 0, "{\n\"a\" 1}", NULL, "line 2, offset" },
	{ "json bad utf8", 0, "[\"\xff\"]", NULL, "invalid bytes in UTF8 string" },
	{ "json comments refused", 0, "[1 /* c */]", NULL, "comments are not enabled" },
	{ "json single quotes refused", 0, "{'a':1}", NULL,
	    "line 1, offset 2: lexical error: invalid char" },
	{ "yaml block mapping", 1, "a: 1\nb: x\nc:\n  d: [1, 2]\n",
	    "{\"a\":1,\"b\":\"x\",\"c\":{\"d\":[1,2]}}", NULL },
	{ "yaml block sequence of maps", 1, "- a\n- b: 1\n  c: 2\n", "[\"a\",{\"b\":1,\"c\":2}]",
	    NULL },
	{ "yaml flow mapping", 1, "{a: 1, b: [x, z]}", "{\"a\":1,\"b\":[\"x\",\"z\"]}", NULL },
	{ "yaml quoted are strings", 1, "[\"1\", '2', \"true\", 'null', \"\"]",
	    "[\"1\",\"2\",\"true\",\"null\",\"\"]", NULL },
	{ "yaml nulls", 1, "[~, null, Null, NULL]", "[null,null,null,null]", NULL },
	{ "yaml empty value is null", 1, "a:\nb: 1\n", "{\"a\":null,\"b\":1}", NULL },
	{ "yaml 1.1 bools", 1, "[true, True, yes, Yes, on, ON, y, false, no, off, n, N]",
	    "[true,true,true,true,true,true,true,false,false,false,false,false]", NULL },
	{ "yaml ints", 1, "[0, 42, -7, +3, 1_000, 0x1f, 0o17, 0b101]", "[0,42,-7,3,1000,31,15,5]",
	    NULL },
	{ "yaml leading zero is octal", 1, "[0644, 0400, 0777]", "[420,256,511]", NULL },
	{ "yaml floats", 1, "[0.5, .5, 1e3, -2.5E-1, 1.]", "[0.5,0.5,1000.0,-0.25,1.0]", NULL },
	{ "yaml inf and nan", 1, "[.inf, -.Inf, .nan]", "[null,null,null]", NULL },
	{ "yaml other plain scalars are strings", 1, "[1.5Gi, 100m, 1.2.3, 0x, v1, 08a]",
	    "[\"1.5Gi\",\"100m\",\"1.2.3\",\"0x\",\"v1\",\"08a\"]", NULL },
	{ "yaml int overflow becomes float", 1, "[99999999999999999999]", "[1e+20]", NULL },
	{ "yaml str tag", 1, "[!!str 1, !!str true]", "[\"1\",\"true\"]", NULL },
	{ "yaml literal block", 1, "a: |\n  x\n  y\n", "{\"a\":\"x\\ny\\n\"}", NULL },
	{ "yaml folded block", 1, "a: >\n  x\n  y\n", "{\"a\":\"x y\\n\"}", NULL },
	{ "yaml first document only", 1, "a: 1\n---\nb: 2\n", "{\"a\":1}", NULL },
	{ "yaml explicit document", 1, "---\na: 1\n...\n", "{\"a\":1}", NULL },
	{ "yaml comments", 1, "# c\na: 1 # d\n", "{\"a\":1}", NULL },
	{ "yaml anchor without alias", 1, "a: &x 1\n", "{\"a\":1}", NULL },
	{ "yaml int keys are strings", 1, "{1: a, true: b}", "{\"1\":\"a\",\"true\":\"b\"}", NULL },
	{ "yaml empty document is null", 1, "---\n", "null", NULL },
	{ "yaml empty stream", 1, "", NULL, "no YAML document" },
	{ "yaml comment only", 1, "# nothing\n", NULL, "no YAML document" },
	{ "yaml alias refused", 1, "a: &x 1\nb: *x\n", NULL,
	    "line 2, column 4: YAML aliases are not supported" },
	{ "yaml complex key refused", 1, "? [a]\n: b\n", NULL, "as a mapping key" },
	{ "yaml unclosed flow", 1, "a: [1\n", NULL, "line 2, column 1: did not find expected" },
	{ "yaml bad indentation", 1, "a:\n  b: 1\n c: 2\n", NULL, "line 3" },
	{ "yaml tab indentation", 1, "a:\n\tb: 1\n", NULL, "line 2" },
};

static void
test_parse_table(void **state)
{
	size_t i;

	(void)state;
	nfail = 0;
	for (i = 0; i < sizeof(parse_cases) / sizeof(parse_cases[0]); i++) {
		const struct parse_case *c = &parse_cases[i];
		char                     err[256] = "";
		struct json_doc         *d;

		d = c->yaml ? json_parse_yaml(c->in, strlen(c->in), NULL, err, sizeof(err))
		            : json_parse(c->in, strlen(c->in), NULL, err, sizeof(err));
		if (c->out != NULL) {
			char *s;

			if (d == NULL) {
				CASE_FAIL("%s: unexpected error: %s", c->name, err);
				continue;
			}
			s = json_to_string(json_root(d));
			if (strcmp(s, c->out) != 0)
				CASE_FAIL("%s: got %s, want %s", c->name, s, c->out);
			free(s);
			json_free(d);
		} else {
			if (d != NULL) {
				CASE_FAIL("%s: parsed, want error", c->name);
				json_free(d);
				continue;
			}
			if (strstr(err, c->err_has) == NULL)
				CASE_FAIL(
				    "%s: error \"%s\" lacks \"%s\"", c->name, err, c->err_has);
		}
	}
	assert_int_equal(nfail, 0);
}

struct limit_case {
	const char        *name;
	int                yaml;
	struct json_limits lim;
	const char        *in;
	const char        *err_has; /* NULL: must parse */
};

static const struct limit_case limit_cases[] = {
	{ "depth at limit", 0, { 0, 3, 0 }, "[[[1]]]", NULL },
	{ "depth over limit", 0, { 0, 3, 0 }, "[[[[1]]]]", "nesting deeper than the limit of 3" },
	{ "yaml depth over limit", 1, { 0, 2, 0 }, "a:\n  b:\n    c: 1\n",
	    "nesting deeper than the limit of 2" },
	{ "objects count as depth", 0, { 0, 2, 0 }, "{\"a\":{\"b\":{}}}", "nesting deeper" },
	{ "string at limit", 0, { 0, 0, 4 }, "[\"abcd\"]", NULL },
	{ "string over limit", 0, { 0, 0, 4 }, "[\"abcde\"]",
	    "string of 5 bytes, over the limit of 4" },
	{ "key over limit", 0, { 0, 0, 4 }, "{\"abcde\":1}", "key of 5 bytes" },
	{ "yaml string over limit", 1, { 0, 0, 4 }, "[abcde]", "over the limit of 4" },
	{ "yaml key over limit", 1, { 0, 0, 4 }, "abcde: 1", "key of 5 bytes" },
	{ "bytes at limit", 0, { 5, 0, 0 }, "[1,2]", NULL },
	{ "bytes over limit", 0, { 5, 0, 0 }, "[1,23]",
	    "document is 6 bytes, over the limit of 5" },
	{ "yaml bytes over limit", 1, { 5, 0, 0 }, "a: 123", "document is 6 bytes" },
};

static void
test_limits_table(void **state)
{
	size_t i;

	(void)state;
	nfail = 0;
	for (i = 0; i < sizeof(limit_cases) / sizeof(limit_cases[0]); i++) {
		const struct limit_case *c = &limit_cases[i];
		char                     err[256] = "";
		struct json_doc         *d;

		d = c->yaml ? json_parse_yaml(c->in, strlen(c->in), &c->lim, err, sizeof(err))
		            : json_parse(c->in, strlen(c->in), &c->lim, err, sizeof(err));
		if (c->err_has == NULL) {
			if (d == NULL)
				CASE_FAIL("%s: unexpected error %s", c->name, err);
			json_free(d);
		} else {
			if (d != NULL) {
				CASE_FAIL("%s: parsed, want error", c->name);
				json_free(d);
				continue;
			}
			if (strstr(err, c->err_has) == NULL)
				CASE_FAIL(
				    "%s: error \"%s\" lacks \"%s\"", c->name, err, c->err_has);
		}
	}
	assert_int_equal(nfail, 0);
}

/* The default depth limit holds for a hostile document far deeper than it. */
static void
test_default_depth(void **state)
{
	size_t n = 100000, i;
	char  *buf = malloc(2 * n + 1), err[256];

	(void)state;
	for (i = 0; i < n; i++) {
		buf[i] = '[';
		buf[n + i] = ']';
	}
	buf[2 * n] = '\0';
	assert_null(json_parse(buf, 2 * n, NULL, err, sizeof(err)));
	assert_non_null(strstr(err, "nesting deeper than the limit of 64"));
	for (i = 0; i < n; i++)
		buf[i] = '[';
	buf[n] = '\0';
	assert_null(json_parse_yaml(buf, n, NULL, err, sizeof(err)));
	assert_non_null(strstr(err, "nesting deeper than the limit of 64"));
	free(buf);
}

static void
test_lookups(void **state)
{
	const char *in =
	    "{\"a\":{\"b\":[10,\"s\",2.5,true]},\"dup\":1,\"dup\":2,\"nul\":\"x\\u0000y\"}";
	struct json_doc   *d;
	const struct json *r, *arr;
	char               err[128];
	int64_t            i;
	double             x;
	int                b;

	(void)state;
	d = json_parse(in, strlen(in), NULL, err, sizeof(err));
	assert_non_null(d);
	r = json_root(d);
	assert_int_equal(json_type(r), JSON_OBJECT);
	assert_int_equal(json_len(r), 4);
	assert_string_equal(json_key(r, 0), "a");
	assert_null(json_key(r, 9));
	arr = json_get(json_get(r, "a"), "b");
	assert_int_equal(json_type(arr), JSON_ARRAY);
	assert_int_equal(json_len(arr), 4);
	assert_int_equal(json_int(json_index(arr, 0), &i), 0);
	assert_int_equal(i, 10);
	assert_int_equal(json_int(json_index(arr, 1), &i), -1);
	assert_string_equal(json_str(json_index(arr, 1)), "s");
	assert_int_equal(json_double(json_index(arr, 2), &x), 0);
	assert_true(x == 2.5);
	assert_int_equal(json_double(json_index(arr, 0), &x), 0);
	assert_true(x == 10.0);
	assert_int_equal(json_bool(json_index(arr, 3), &b), 0);
	assert_int_equal(b, 1);
	assert_string_equal(json_text(json_index(arr, 3)), "true");
	assert_null(json_index(arr, 4));
	assert_null(json_key(arr, 0));
	/* A repeated key: the last one wins, as in Go. */
	assert_int_equal(json_int(json_get(r, "dup"), &i), 0);
	assert_int_equal(i, 2);
	/* Embedded NUL: the length tells. */
	assert_int_equal(json_str_len(json_get(r, "nul")), 3);
	/* NULL-safety */
	assert_null(json_get(NULL, "a"));
	assert_null(json_get(r, "missing"));
	assert_null(json_get(arr, "a"));
	assert_int_equal(json_len(NULL), 0);
	assert_int_equal(json_type(NULL), JSON_NULL);
	assert_null(json_str(NULL));
	assert_null(json_text(r));
	assert_int_equal(json_int(NULL, &i), -1);
	assert_int_equal(json_bool(NULL, &b), -1);
	assert_true(json_doc_bytes(d) > 0);
	assert_string_equal(json_type_name(JSON_DOUBLE), "number");
	json_free(d);
	json_free(NULL);
	assert_null(json_root(NULL));
}

static void
test_yaml_plain(void **state)
{
	const char        *in = "a: 0644\nb: \"0644\"\nc: yes\nd: 1.50\n";
	struct json_doc   *d;
	const struct json *r;
	char               err[128];

	(void)state;
	d = json_parse_yaml(in, strlen(in), NULL, err, sizeof(err));
	assert_non_null(d);
	r = json_root(d);
	assert_true(json_is_yaml_plain(json_get(r, "a")));
	assert_string_equal(json_text(json_get(r, "a")), "0644");
	assert_false(json_is_yaml_plain(json_get(r, "b")));
	assert_string_equal(json_text(json_get(r, "c")), "yes");
	assert_string_equal(json_text(json_get(r, "d")), "1.50");
	assert_int_equal(json_type(json_get(r, "d")), JSON_DOUBLE);
	json_free(d);
}

static void
test_writer(void **state)
{
	yajl_gen         g = json_gen_new(0);
	const char      *in = "{\"x\":[1,2.50,\"s\",null,{\"y\":false}]}";
	struct json_doc *d;
	char             err[64], *s;
	size_t           len;

	(void)state;
	yajl_gen_map_open(g);
	json_gen_kv_str(g, "name", "web");
	json_gen_kv_str(g, "gone", NULL);
	json_gen_kv_int(g, "n", -42);
	json_gen_kv_bool(g, "ok", 1);
	json_gen_kv_str(g, "bad",
	    "a\xff"
	    "b\xc3");
	json_gen_key(g, "q\"");
	json_gen_str(g, "\n");
	json_gen_key(g, "dom");
	d = json_parse(in, strlen(in), NULL, err, sizeof(err));
	assert_non_null(d);
	json_gen_value(g, json_get(json_root(d), "x"));
	json_gen_key(g, "none");
	json_gen_value(g, NULL);
	yajl_gen_map_close(g);
	s = json_gen_take(g, &len);
	assert_string_equal(s,
	    "{\"name\":\"web\",\"gone\":null,\"n\":-42,\"ok\":true,"
	    "\"bad\":\"a\xef\xbf\xbd"
	    "b\xef\xbf\xbd\",\"q\\\"\":\"\\n\","
	    "\"dom\":[1,2.50,\"s\",null,{\"y\":false}],\"none\":null}");
	assert_int_equal(len, strlen(s));
	free(s);
	yajl_gen_free(g);
	json_free(d);

	g = json_gen_new(1);
	yajl_gen_map_open(g);
	json_gen_kv_int(g, "a", 1);
	yajl_gen_map_close(g);
	s = json_gen_take(g, NULL);
	assert_string_equal(s, "{\n  \"a\": 1\n}\n");
	free(s);
	yajl_gen_free(g);
}

/* json_member_span: the raw text of a member, the same value json_get finds. */
static void
test_member_span(void **state)
{
	static const struct {
		const char *in, *key, *want; /* want NULL: -1 */
	} cases[] = {
		{ "{\"type\":\"ADDED\",\"object\":{\"a\":\"x}\\\"y\",\"b\":[1,{\"c\":2}]}}",
		    "object", "{\"a\":\"x}\\\"y\",\"b\":[1,{\"c\":2}]}" },
		{ " { \"type\" : \"X\" ,\n \"object\" : 5 } ", "object", "5" },
		{ "{\"type\":\"X\",\"object\":-1.5e3}", "object", "-1.5e3" },
		{ "{\"object\":1,\"object\":[2, \"]\"]}", "object", "[2, \"]\"]" },
		{ "{\"object\":\"a\\\\\",\"z\":{}}", "object", "\"a\\\\\"" },
		{ "{\"object\":null}", "object", "null" },
		{ "{\"objects\":{},\"obj\":1}", "object", NULL },
		{ "{\"type\":\"X\"}", "object", NULL },
		{ "{\"obj\\u0065ct\":{}}", "object", NULL },
		{ "[{\"object\":1}]", "object", NULL },
		{ "{}", "object", NULL },
	};
	size_t i, off, n;
	char   err[128];

	(void)state;
	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		const char *in = cases[i].in;
		int         rc = json_member_span(in, strlen(in), cases[i].key, &off, &n);

		if (cases[i].want == NULL) {
			if (rc != -1)
				fail_msg("case %zu: found %.*s", i, (int)n, in + off);
			continue;
		}
		if (rc != 0)
			fail_msg("case %zu: not found", i);
		if (n != strlen(cases[i].want) || memcmp(in + off, cases[i].want, n) != 0)
			fail_msg("case %zu: got %.*s", i, (int)n, in + off);
		{
			struct json_doc *whole = json_parse(in, strlen(in), NULL, err, sizeof(err));
			struct json_doc *part = json_parse(in + off, n, NULL, err, sizeof(err));
			char            *a, *b;

			assert_non_null(whole);
			assert_non_null(part);
			a = json_to_string(json_get(json_root(whole), cases[i].key));
			b = json_to_string(json_root(part));
			assert_string_equal(a, b);
			free(a);
			free(b);
			json_free(whole);
			json_free(part);
		}
	}
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_parse_table),
		cmocka_unit_test(test_limits_table),
		cmocka_unit_test(test_default_depth),
		cmocka_unit_test(test_lookups),
		cmocka_unit_test(test_yaml_plain),
		cmocka_unit_test(test_writer),
		cmocka_unit_test(test_member_span),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
