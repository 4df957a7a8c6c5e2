/* test_crijson.c — a CRI message as JSON (cri/crijson.c): names in lowerCamelCase, enums by
 * name, maps as objects, repeated fields as arrays, 64-bit integers as numbers, an unset
 * message as null, the "info" map's JSON documents as JSON, other values as given. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "core/json.h"
#include "core/util.h"
#include "cri/cri.h"
#include "cri/crijson.h"

static char *
to_json(const ProtobufCMessage *m)
{
	yajl_gen g = json_gen_new(0);
	char    *s;

	crijson_message(g, m);
	s = json_gen_take(g, NULL);
	yajl_gen_free(g);
	return s;
}

static void
test_container_status(void **state)
{
	Runtime__V1__ContainerStatusResponse resp = RUNTIME__V1__CONTAINER_STATUS_RESPONSE__INIT;
	Runtime__V1__ContainerStatus         st = RUNTIME__V1__CONTAINER_STATUS__INIT;
	Runtime__V1__ContainerMetadata       md = RUNTIME__V1__CONTAINER_METADATA__INIT;
	Runtime__V1__ContainerStatus__LabelsEntry l1 =
	    RUNTIME__V1__CONTAINER_STATUS__LABELS_ENTRY__INIT;
	Runtime__V1__ContainerStatus__LabelsEntry      *labels[1] = { &l1 };
	Runtime__V1__ContainerStatusResponse__InfoEntry i1 =
	    RUNTIME__V1__CONTAINER_STATUS_RESPONSE__INFO_ENTRY__INIT;
	Runtime__V1__ContainerStatusResponse__InfoEntry i2 =
	    RUNTIME__V1__CONTAINER_STATUS_RESPONSE__INFO_ENTRY__INIT;
	Runtime__V1__ContainerStatusResponse__InfoEntry *info[2] = { &i1, &i2 };
	struct json_doc                                 *doc;
	const struct json                               *d, *s;
	char                                            *j;
	int64_t                                          n;

	(void)state;
	md.name = "app";
	md.attempt = 3;
	st.id = "abc";
	st.metadata = &md;
	st.state = RUNTIME__V1__CONTAINER_STATE__CONTAINER_EXITED;
	st.created_at = 1700000000123456789LL;
	st.exit_code = 137;
	st.reason = "OOMKilled";
	st.n_labels = 1;
	st.labels = labels;
	l1.key = "io.kubernetes.pod.name";
	l1.value = "web";
	resp.status = &st;
	resp.n_info = 2;
	resp.info = info;
	i1.key = "info";
	i1.value = "{\"pid\": 42, \"runtimeSpec\": {\"ociVersion\": \"1.0.2\"}}";
	i2.key = "note";
	i2.value = "not { json";
	j = to_json(&resp.base);
	doc = json_parse(j, strlen(j), NULL, NULL, 0);
	assert_non_null(doc);
	d = json_root(doc);
	s = json_get(d, "status");
	assert_string_equal(json_str(json_get(s, "id")), "abc");
	assert_string_equal(json_str(json_get(json_get(s, "metadata"), "name")), "app");
	assert_string_equal(json_str(json_get(s, "state")), "CONTAINER_EXITED");
	assert_int_equal(json_int(json_get(s, "createdAt"), &n), 0);
	assert_true(n == 1700000000123456789LL);
	assert_int_equal(json_int(json_get(s, "exitCode"), &n), 0);
	assert_int_equal(n, 137);
	assert_int_equal(json_int(json_get(s, "finishedAt"), &n), 0); /* zero, still written */
	assert_int_equal(n, 0);
	assert_string_equal(json_str(json_get(s, "message")), "");
	assert_int_equal(json_type(json_get(s, "image")), JSON_NULL); /* unset message */
	assert_int_equal(json_type(json_get(s, "mounts")), JSON_ARRAY);
	assert_string_equal(
	    json_str(json_get(json_get(s, "labels"), "io.kubernetes.pod.name")), "web");
	assert_int_equal(json_int(json_get(json_get(json_get(d, "info"), "info"), "pid"), &n), 0);
	assert_int_equal(n, 42);
	assert_string_equal(json_str(json_get(json_get(d, "info"), "note")), "not { json");
	json_free(doc);
	free(j);
}

static void
test_null(void **state)
{
	char *j;

	(void)state;
	j = to_json(NULL);
	assert_string_equal(j, "null");
	free(j);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_container_status),
		cmocka_unit_test(test_null),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
