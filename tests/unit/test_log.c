/* test_log.c — the rate limit of repeated log lines: a burst is written, the rest held back,
 * one summary line when the window ends; other lines pass meanwhile. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <cmocka.h>

#include "core/log.h"

static char path[] = "/tmp/klet-test-log.XXXXXX";

static int
count_lines(const char *needle)
{
	char  line[4096];
	FILE *f = fopen(path, "r");
	int   n = 0;

	assert_non_null(f);
	while (fgets(line, sizeof(line), f) != NULL)
		if (strstr(line, needle) != NULL)
			n++;
	fclose(f);
	return n;
}

static void
test_flood_is_limited(void **state)
{
	struct timespec ts = { 0, 300 * 1000 * 1000 };
	uint64_t        before = log_suppressed_total();
	int             i;

	(void)state;
	log_set_rate_limit(5, 200);
	for (i = 0; i < 1000; i++) {
		log_warnx("Error from accept() call: Too many open files");
		if (i % 100 == 0)
			log_info("other line %d", i);
	}
	assert_int_equal(count_lines("Error from accept() call"), 5);
	assert_int_equal(count_lines("other line"), 10);
	assert_int_equal(log_suppressed_total() - before, 995);
	assert_int_equal(count_lines("similar lines suppressed"), 0);
	nanosleep(&ts, NULL); /* the window (200 ms) ends */
	log_flush_suppressed();
	assert_int_equal(
	    count_lines("995 similar lines suppressed in 0.2s: Error from accept()"), 1);
	/* a new window: the message is written again */
	log_warnx("Error from accept() call: Too many open files");
	assert_int_equal(count_lines("Error from accept() call"), 7);
}

static void
test_no_limit(void **state)
{
	int i;

	(void)state;
	log_set_rate_limit(0, 200);
	for (i = 0; i < 50; i++)
		log_info("unlimited line");
	assert_int_equal(count_lines("unlimited line"), 50);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_flood_is_limited),
		cmocka_unit_test(test_no_limit),
	};
	int fd = mkstemp(path), rc;

	if (fd == -1)
		return 1;
	close(fd);
	log_init(0, 0);
	if (log_open_file(path) == -1)
		return 1;
	rc = cmocka_run_group_tests(tests, NULL, NULL);
	log_open_file(NULL);
	unlink(path);
	return rc;
}
