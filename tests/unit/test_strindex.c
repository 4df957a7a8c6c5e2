/* test_strindex.c — string keys to array positions: adds, growth, rebuilds, misses. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <cmocka.h>

#include "core/strindex.h"
#include "core/util.h"

static char keys[3000][16];

static const char *
key_at(const void *arg, size_t i)
{
	(void)arg;
	return keys[i];
}

static void
test_index(void **state)
{
	struct strindex *x = strindex_new();
	size_t           i, n = 3000;

	(void)state;
	assert_int_equal(strindex_find(x, "nothing", key_at, NULL), STRINDEX_NONE);
	for (i = 0; i < n; i++) {
		snprintf(keys[i], sizeof(keys[i]), "uid-%zu", i);
		strindex_add(x, keys[i], i);
	}
	for (i = 0; i < n; i++)
		assert_int_equal(strindex_find(x, keys[i], key_at, NULL), i);
	assert_int_equal(strindex_find(x, "uid-3000", key_at, NULL), STRINDEX_NONE);
	assert_int_equal(strindex_find(x, "", key_at, NULL), STRINDEX_NONE);
	assert_int_equal(strindex_find(x, NULL, key_at, NULL), STRINDEX_NONE);
	/* Positions moved (the last took the first's place): rebuilt. */
	memcpy(keys[0], keys[n - 1], sizeof(keys[0]));
	n--;
	strindex_reset(x);
	for (i = 0; i < n; i++)
		strindex_add(x, keys[i], i);
	assert_int_equal(strindex_find(x, "uid-2999", key_at, NULL), 0);
	assert_int_equal(strindex_find(x, "uid-0", key_at, NULL), STRINDEX_NONE);
	assert_int_equal(strindex_find(x, "uid-1500", key_at, NULL), 1500);
	strindex_free(x);
	strindex_free(NULL);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_index),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
