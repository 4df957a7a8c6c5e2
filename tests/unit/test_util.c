/* test_util.c — the file helpers of core/util: stat below a held directory. */
#include <sys/stat.h>

#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>
#include <cmocka.h>

#include "core/util.h"

static void
touch(const char *dir, const char *name)
{
	char *p = xsprintf("%s/%s", dir, name);
	int   fd = open(p, O_CREAT | O_WRONLY | O_CLOEXEC, 0644);

	assert_true(fd >= 0);
	close(fd);
	free(p);
}

/* Found from the held descriptor; a name that is not there leaves it held; a directory
 * made again (removed first, or with linked_ok 0 also renamed away) is found by its path,
 * and the next call holds the new one. */
static void
held_case(int linked)
{
	char        tmpl[] = "/tmp/klet-test-util.XXXXXX", *t = mkdtemp(tmpl), *d, *old;
	struct stat sb;
	int         fd = -1, held;

	assert_non_null(t);
	d = xsprintf("%s/d", t);
	old = xsprintf("%s/old", t);
	assert_int_equal(mkdir(d, 0755), 0);
	touch(d, "f");
	assert_int_equal(held_dir_stat(&fd, d, "f", &sb, linked), 0);
	assert_true(S_ISREG(sb.st_mode));
	assert_true(fd >= 0);
	held = fd;
	assert_int_equal(held_dir_stat(&fd, d, "f", &sb, linked), 0);
	assert_int_equal(fd, held);
	assert_int_equal(held_dir_stat(&fd, d, "missing", &sb, linked), -1);
	assert_int_equal(errno, ENOENT);
	assert_int_equal(fd, held);

	/* d made again: the held descriptor is the old one. */
	if (linked)
		assert_int_equal(rmtree(d), 0);
	else
		assert_int_equal(rename(d, old), 0);
	assert_int_equal(mkdir(d, 0755), 0);
	touch(d, "g");
	assert_int_equal(held_dir_stat(&fd, d, "g", &sb, linked), 0);
	assert_int_equal(fd, -1);
	/* Held again, the new d. */
	assert_int_equal(held_dir_stat(&fd, d, "g", &sb, linked), 0);
	assert_true(fd >= 0);
	if (!linked) { /* h is only in the old one */
		touch(old, "h");
		assert_int_equal(held_dir_stat(&fd, d, "h", &sb, linked), -1);
		assert_int_equal(errno, ENOENT);
	}

	/* d gone: not found, by either way. */
	assert_int_equal(rmtree(d), 0);
	assert_int_equal(held_dir_stat(&fd, d, "g", &sb, linked), -1);
	assert_int_equal(errno, ENOENT);
	if (fd >= 0)
		close(fd);
	fd = -1;
	assert_int_equal(held_dir_stat(&fd, d, "g", &sb, linked), -1);
	assert_int_equal(fd, -1);
	assert_int_equal(rmtree(t), 0);
	free(d);
	free(old);
}

static void
test_held_dir_stat(void **state)
{
	(void)state;
	held_case(0);
}

static void
test_held_dir_stat_linked_ok(void **state)
{
	(void)state;
	held_case(1);
}

/* With linked_ok, a held directory that is still linked is believed about a missing name:
 * renamed away and made again, the new one's names are not looked for until it is gone. */
static void
test_linked_ok_trusts_a_linked_directory(void **state)
{
	char        tmpl[] = "/tmp/klet-test-util.XXXXXX", *t = mkdtemp(tmpl), *d, *old;
	struct stat sb;
	int         fd = -1;

	(void)state;
	assert_non_null(t);
	d = xsprintf("%s/d", t);
	old = xsprintf("%s/old", t);
	assert_int_equal(mkdir(d, 0755), 0);
	touch(d, "f");
	assert_int_equal(held_dir_stat(&fd, d, "f", &sb, 1), 0);
	assert_int_equal(rename(d, old), 0);
	assert_int_equal(mkdir(d, 0755), 0);
	touch(d, "g");
	assert_int_equal(held_dir_stat(&fd, d, "g", &sb, 1), -1);
	assert_int_equal(errno, ENOENT);
	assert_int_equal(held_dir_stat(&fd, d, "g", &sb, 0), 0); /* looked for by path */
	assert_int_equal(fd, -1);
	assert_int_equal(rmtree(t), 0);
	free(d);
	free(old);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_held_dir_stat),
		cmocka_unit_test(test_held_dir_stat_linked_ok),
		cmocka_unit_test(test_linked_ok_trusts_a_linked_directory),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
