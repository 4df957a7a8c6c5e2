/* test_intern.c — core/intern.c: one copy per distinct string, counted references, the
 * table growing and shrinking, and deletions in the middle of probe runs (checked against a
 * model of what must be held). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "core/intern.h"

static void
test_one_copy(void **state)
{
	char  buf[16];
	char *a, *b, *c;

	(void)state;
	assert_null(intern(NULL));
	intern_drop(NULL);
	assert_null(intern_ref(NULL));
	a = intern("default");
	strcpy(buf, "default");
	b = intern(buf); /* another buffer, the same string */
	assert_ptr_equal(a, b);
	assert_string_equal(a, "default");
	c = intern_n("default-x", 7);
	assert_ptr_equal(a, c);
	assert_int_equal(intern_count(), 1);
	assert_ptr_equal(intern_ref(a), a);
	intern_drop(a);
	intern_drop(b);
	intern_drop(c);
	assert_int_equal(intern_count(), 1); /* one reference left */
	assert_string_equal(a, "default");
	intern_drop(a);
	assert_int_equal(intern_count(), 0);
	assert_int_equal(intern_bytes(), 0);
	/* "" and a string that is a prefix of another are distinct entries. */
	a = intern("");
	b = intern("ab");
	c = intern("a");
	assert_ptr_not_equal(b, c);
	assert_string_equal(c, "a");
	assert_int_equal(intern_count(), 3);
	intern_drop(a);
	intern_drop(b);
	intern_drop(c);
	assert_int_equal(intern_count(), 0);
}

/* Random interns and drops of 3000 names; after each step every held name must still be
 * found at its pointer, and the count must match the model. */
static void
test_random_against_model(void **state)
{
	enum { NAMES = 3000, STEPS = 60000 };
	static char *held[NAMES];
	static int   refs[NAMES];
	size_t       distinct = 0, i;
	unsigned     seed = 12345;
	char         name[32];
	int          step;

	(void)state;
	for (step = 0; step < STEPS; step++) {
		seed = seed * 1103515245u + 12345u;
		i = (seed >> 8) % NAMES;
		snprintf(name, sizeof(name), "ns-%zu", i);
		/* Grow first, then mostly shrink, so the table resizes both ways. */
		if (refs[i] == 0 || ((seed >> 4) & 3) < (step < STEPS / 2 ? 2 : 1)) {
			char *p = intern(name);

			if (refs[i] == 0) {
				held[i] = p;
				distinct++;
			} else
				assert_ptr_equal(p, held[i]);
			refs[i]++;
		} else {
			intern_drop(held[i]);
			if (--refs[i] == 0) {
				held[i] = NULL;
				distinct--;
			}
		}
		assert_int_equal(intern_count(), distinct);
		if (step % 5000 == 0) {
			size_t k;

			for (k = 0; k < NAMES; k++) {
				char *p;

				if (refs[k] == 0)
					continue;
				snprintf(name, sizeof(name), "ns-%zu", k);
				p = intern(name);
				assert_ptr_equal(p, held[k]);
				intern_drop(p);
			}
		}
	}
	for (i = 0; i < NAMES; i++)
		while (refs[i]-- > 0)
			intern_drop(held[i]);
	assert_int_equal(intern_count(), 0);
	assert_int_equal(intern_bytes(), 0);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_one_copy),
		cmocka_unit_test(test_random_against_model),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
