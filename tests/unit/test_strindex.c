/* test_strindex.c — string keys to array positions: adds, growth, rebuilds, misses, removals. */
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

/* Swap-removal (the last element takes the place of the one that leaves) in constant time:
 * after any sequence of removals every remaining key is found at its position, the removed
 * ones are not (backward shift keeps the probe runs whole, also where they wrap). */
static void
test_remove_move(void **state)
{
	struct strindex *x = strindex_new();
	size_t           i, n = 2000, k;
	unsigned         seed = 7;

	(void)state;
	for (i = 0; i < n; i++) {
		snprintf(keys[i], sizeof(keys[i]), "k%zu", i);
		strindex_add(x, keys[i], i);
	}
	strindex_remove(x, "not-there", 3); /* nothing */
	strindex_remove(x, keys[3], 4);     /* the key, at another position: nothing */
	assert_int_equal(strindex_find(x, keys[3], key_at, NULL), 3);
	while (n > 0) {
		seed = seed * 1103515245 + 12345;
		k = (seed >> 8) % n;
		strindex_remove(x, keys[k], k);
		if (k != n - 1) {
			char tmp[16];

			strindex_move(x, keys[n - 1], n - 1, k);
			memcpy(tmp, keys[k], sizeof(tmp));
			memcpy(keys[k], keys[n - 1], sizeof(tmp));
			memcpy(keys[n - 1], tmp, sizeof(tmp));
		}
		n--;
		assert_int_equal(strindex_find(x, keys[n], key_at, NULL), STRINDEX_NONE);
		if (n % 97 == 0)
			for (i = 0; i < n; i++)
				assert_int_equal(strindex_find(x, keys[i], key_at, NULL), i);
	}
	assert_int_equal(strindex_find(x, "k1", key_at, NULL), STRINDEX_NONE);
	strindex_add(x, "k1", 0);
	memcpy(keys[0], "k1", 3);
	assert_int_equal(strindex_find(x, "k1", key_at, NULL), 0);
	strindex_free(x);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_index),
		cmocka_unit_test(test_remove_move),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
