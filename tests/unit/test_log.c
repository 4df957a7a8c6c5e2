/* test_log.c — the rate limit of repeated log lines: a burst is written, the rest held back,
 * one summary line when the window ends; other lines pass meanwhile. --log-file-max-size:
 * the file is renamed FILE.1 at the limit and a new one started. journald's stream
 * ($JOURNAL_STREAM): "<N>" priorities, no time or pid. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
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

/* The summary of a long line: its first 159 bytes, then "...". */
static void
test_flood_long_line(void **state)
{
	struct timespec ts = { 0, 300 * 1000 * 1000 };
	char            want[256];
	int             i;

	(void)state;
	log_set_rate_limit(2, 200);
	for (i = 0; i < 10; i++)
		log_warnx("long %0200d", 7);
	nanosleep(&ts, NULL);
	log_flush_suppressed();
	snprintf(want, sizeof(want), "8 similar lines suppressed in 0.2s: long %0154d...", 0);
	assert_int_equal(count_lines(want), 1);
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

static off_t
file_size(const char *p)
{
	struct stat st;

	return stat(p, &st) == 0 ? st.st_size : -1;
}

/* 100 lines of ~100 bytes with a limit of 4000 bytes: the file never holds much more than
 * the limit, PATH.1 holds the generation before, and no line is lost across a rotation. */
static void
test_rotation(void **state)
{
	char  old[64], line[4096];
	FILE *f;
	int   i, seen = 0, last = -1;

	(void)state;
	snprintf(old, sizeof(old), "%s.1", path);
	log_set_rate_limit(0, 200);
	log_set_max_size(4000);
	for (i = 0; i < 100; i++) {
		log_info("rotation line %03d %s", i,
		    "..........................................................");
		assert_true(file_size(path) < 4000 + 200);
	}
	log_set_max_size(0);
	assert_true(file_size(old) >= 4000);
	assert_true(file_size(old) < 4000 + 200);
	/* PATH.1 ends where PATH begins. */
	f = fopen(old, "r");
	assert_non_null(f);
	while (fgets(line, sizeof(line), f) != NULL)
		if (strstr(line, "rotation line ") != NULL)
			last = atoi(strstr(line, "rotation line ") + 14);
	fclose(f);
	f = fopen(path, "r");
	assert_non_null(f);
	while (fgets(line, sizeof(line), f) != NULL)
		if (strstr(line, "rotation line ") != NULL && seen++ == 0)
			assert_int_equal(atoi(strstr(line, "rotation line ") + 14), last + 1);
	fclose(f);
	assert_int_equal(last + seen, 99);
	unlink(old);
}

/* stderr is a file whose device and inode $JOURNAL_STREAM names: journald's format. */
static void
test_journal_stream(void **state)
{
	char        jpath[] = "/tmp/klet-test-journal.XXXXXX", env[64], buf[512];
	int         fd = mkstemp(jpath), saved = dup(STDERR_FILENO);
	struct stat st;
	FILE       *f;
	size_t      n;

	(void)state;
	assert_true(fd >= 0 && saved >= 0);
	assert_int_equal(fstat(fd, &st), 0);
	log_open_file(NULL);
	dup2(fd, STDERR_FILENO);
	setenv("JOURNAL_STREAM", "1:2", 1); /* another stream: klog's lines */
	assert_int_equal(log_detect_journal(), 0);
	log_info("plain line");
	snprintf(env, sizeof(env), "%llu:%llu", (unsigned long long)st.st_dev,
	    (unsigned long long)st.st_ino);
	setenv("JOURNAL_STREAM", env, 1);
	assert_int_equal(log_detect_journal(), 1);
	log_info("journal info");
	log_warnx("journal warning");
	log_error("journal error");
	log_init(0, 1); /* json: detected again */
	log_info("journal json");
	log_init(0, 0);
	fflush(stderr);
	dup2(saved, STDERR_FILENO);
	close(saved);
	unsetenv("JOURNAL_STREAM");
	log_detect_journal();
	f = fopen(jpath, "r");
	assert_non_null(f);
	n = fread(buf, 1, sizeof(buf) - 1, f);
	buf[n] = '\0';
	fclose(f);
	close(fd);
	unlink(jpath);
	assert_non_null(strstr(buf, "] plain line\n"));
	assert_true(buf[0] == 'I'); /* klog: I, month, day, time, pid */
	assert_non_null(strstr(buf, "\n<6>test_log.c:"));
	assert_non_null(strstr(buf, "] journal info\n<4>test_log.c:"));
	assert_non_null(strstr(buf, "] journal warning\n<3>test_log.c:"));
	assert_non_null(strstr(buf, "] journal error\n<6>{\"level\":\"info\",\"v\":0,"));
	assert_non_null(strstr(buf, "\"msg\":\"journal json\"}\n"));
	assert_null(strstr(buf, "\"ts\""));
	assert_int_equal(log_open_file(path), 0);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_flood_is_limited),
		cmocka_unit_test(test_flood_long_line),
		cmocka_unit_test(test_no_limit),
		cmocka_unit_test(test_rotation),
		cmocka_unit_test(test_journal_stream),
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
