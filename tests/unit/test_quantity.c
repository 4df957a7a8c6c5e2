/* test_quantity.c — Kubernetes quantities to milli-units, RFC 3339 times both ways. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "pod/pod.h"
#include "core/quantity.h"
#include "pod/rfc3339.h"

struct qcase {
	const char *in;
	int         rc;
	int64_t     milli;
};

static const struct qcase qcases[] = {
	/* the examples */
	{ "100m", 0, 100 },
	{ "1Gi", 0, 1073741824000LL },
	{ "1e3", 0, 1000000 },
	{ "0.5", 0, 500 },
	{ "500Mi", 0, 524288000000LL },
	{ "1.5Gi", 0, 1610612736000LL },
	{ "2k", 0, 2000000 },
	/* plain numbers and signs */
	{ "0", 0, 0 },
	{ "1", 0, 1000 },
	{ "+1", 0, 1000 },
	{ "-1", 0, -1000 },
	{ "-100m", 0, -100 },
	{ ".5", 0, 500 },
	{ "5.", 0, 5000 },
	{ "0.001", 0, 1 },
	{ "000000000000000000000000000000000000000000001", 0, 1000 },
	/* decimal SI suffixes */
	{ "1n", 0, 1 }, /* rounds up, as MilliValue() */
	{ "1u", 0, 1 },
	{ "1500u", 0, 2 },
	{ "1000u", 0, 1 },
	{ "1m", 0, 1 },
	{ "1k", 0, 1000000 },
	{ "1M", 0, 1000000000LL },
	{ "1G", 0, 1000000000000LL },
	{ "1T", 0, 1000000000000000LL },
	{ "1P", 0, 1000000000000000000LL },
	{ "0.0001", 0, 1 },
	{ "-0.0001", 0, 0 },
	/* binary SI suffixes */
	{ "1Ki", 0, 1024000 },
	{ "1Mi", 0, 1048576000LL },
	{ "1Ti", 0, 1099511627776000LL },
	{ "1Pi", 0, 1125899906842624000LL },
	{ "0.5Ki", 0, 512000 },
	{ "4Mi", 0, 4194304000LL },
	/* exponents */
	{ "1E3", 0, 1000000 },
	{ "1e-3", 0, 1 },
	{ "1.5e1", 0, 15000 },
	{ "12e+2", 0, 1200000 },
	{ "0e5", 0, 0 },
	{ "1e15", 0, 1000000000000000000LL },
	/* the edge of int64 */
	{ "9223372036854775807m", 0, INT64_MAX },
	{ "9223372036854775808m", -1, 0 },
	{ "-9223372036854775807m", 0, -INT64_MAX },
	/* overflow */
	{ "1E", -1, 0 }, /* 10^18 units is 10^21 milli */
	{ "8Ei", -1, 0 },
	{ "100000Pi", -1, 0 },
	{ "1e100", -1, 0 },
	{ "1e16", -1, 0 },
	{ "1e999", -1, 0 },
	{ "1e1000", -1, 0 },
	/* 36 significant digits (the most accepted) times a binary or decimal suffix: the
	 * product must be refused before it overflows 128 bits (a fuzzer's find) */
	{ "00000400000000004000000000001278146425Mi", -1, 0 },
	{ "999999999999999999999999999999999999Ei", -1, 0 },
	{ "999999999999999999999999999999999999E", -1, 0 },
	{ "999999999999999999999999999999999999e999", -1, 0 },
	{ "1234567890123456789012345678901234567890", -1, 0 },
	/* malformed */
	{ "", -1, 0 },
	{ "m", -1, 0 },
	{ ".", -1, 0 },
	{ "-", -1, 0 },
	{ "1.2.3", -1, 0 },
	{ "1K", -1, 0 },
	{ "1 Gi", -1, 0 },
	{ " 1", -1, 0 },
	{ "Gi", -1, 0 },
	{ "1Gib", -1, 0 },
	{ "1gi", -1, 0 },
	{ "abc", -1, 0 },
	{ "1e", -1, 0 },
	{ "1e+", -1, 0 },
	{ "0x10", -1, 0 },
	{ "--1", -1, 0 },
	{ "1mm", -1, 0 },
	{ "1e3m", -1, 0 },
	{ "1,5", -1, 0 },
};

static void
test_quantity_table(void **state)
{
	size_t i;
	int    nfail = 0;

	(void)state;
	for (i = 0; i < sizeof(qcases) / sizeof(qcases[0]); i++) {
		int64_t m = 12345;
		int     rc = quantity_parse(qcases[i].in, &m);

		if (rc != qcases[i].rc || (rc == 0 && m != qcases[i].milli)) {
			print_error("quantity \"%s\": rc %d milli %lld, want rc %d milli %lld\n",
			    qcases[i].in, rc, (long long)m, qcases[i].rc,
			    (long long)qcases[i].milli);
			nfail++;
		}
	}
	assert_int_equal(quantity_parse(NULL, NULL), -1);
	assert_int_equal(nfail, 0);
}

struct tcase {
	const char *in;
	int         rc;
	int64_t     t;
};

static const struct tcase tcases[] = {
	{ "2024-01-02T03:04:05Z", 0, 1704164645 },
	{ "2024-01-02T03:04:05.999999999Z", 0, 1704164645 },
	{ "2024-01-02T03:04:05.1Z", 0, 1704164645 },
	{ "2024-01-02T04:04:05+01:00", 0, 1704164645 },
	{ "2024-01-01T22:34:05-04:30", 0, 1704164645 },
	{ "2024-01-02t03:04:05z", 0, 1704164645 },
	{ "1970-01-01T00:00:00Z", 0, 0 },
	{ "1969-12-31T23:59:59Z", 0, -1 },
	{ "2000-02-29T00:00:00Z", 0, 951782400 },
	{ "2024-02-29T23:59:59Z", 0, 1709251199 },
	{ "1900-03-01T00:00:00Z", 0, -2203891200LL },
	{ "9999-12-31T23:59:59Z", 0, 253402300799LL },
	{ "0001-01-01T00:00:00Z", 0, -62135596800LL },
	{ "2001-02-29T00:00:00Z", -1, 0 },
	{ "1900-02-29T00:00:00Z", -1, 0 },
	{ "2024-13-01T00:00:00Z", -1, 0 },
	{ "2024-00-01T00:00:00Z", -1, 0 },
	{ "2024-04-31T00:00:00Z", -1, 0 },
	{ "2024-01-02T24:00:00Z", -1, 0 },
	{ "2024-01-02T23:60:00Z", -1, 0 },
	{ "2024-01-02T23:59:60Z", -1, 0 },
	{ "2024-01-02 03:04:05Z", -1, 0 },
	{ "2024-01-02T03:04:05", -1, 0 },
	{ "2024-01-02T03:04:05.Z", -1, 0 },
	{ "2024-01-02T03:04:05+0100", -1, 0 },
	{ "2024-01-02T03:04:05+24:00", -1, 0 },
	{ "2024-01-02T03:04:05ZZ", -1, 0 },
	{ "2024-1-02T03:04:05Z", -1, 0 },
	{ "2024-01-02", -1, 0 },
	{ "", -1, 0 },
	{ "yesterday", -1, 0 },
};

static void
test_time_parse_table(void **state)
{
	size_t i;
	int    nfail = 0;

	(void)state;
	for (i = 0; i < sizeof(tcases) / sizeof(tcases[0]); i++) {
		int64_t t = 7;
		int     rc = time_parse_rfc3339(tcases[i].in, &t);

		if (rc != tcases[i].rc || (rc == 0 && t != tcases[i].t)) {
			print_error("time \"%s\": rc %d t %lld, want rc %d t %lld\n", tcases[i].in,
			    rc, (long long)t, tcases[i].rc, (long long)tcases[i].t);
			nfail++;
		}
	}
	assert_int_equal(time_parse_rfc3339(NULL, NULL), -1);
	assert_int_equal(nfail, 0);
}

static const struct {
	int64_t     t;
	const char *out;
} fcases[] = {
	{ 0, "1970-01-01T00:00:00Z" }, { 1704164645, "2024-01-02T03:04:05Z" },
	{ -1, "1969-12-31T23:59:59Z" }, { 951782400, "2000-02-29T00:00:00Z" },
	{ 253402300799LL, "9999-12-31T23:59:59Z" }, { -62135596800LL, "0001-01-01T00:00:00Z" },
	{ 253402300800LL, "9999-12-31T23:59:59Z" }, /* clamped */
	{ INT64_MIN / 2, "0000-01-01T00:00:00Z" },  /* clamped */
};

static void
test_time_format(void **state)
{
	char    buf[32];
	size_t  i;
	int64_t t, back;

	(void)state;
	for (i = 0; i < sizeof(fcases) / sizeof(fcases[0]); i++) {
		time_format_rfc3339(fcases[i].t, buf, sizeof(buf));
		assert_string_equal(buf, fcases[i].out);
	}
	/* Round trip over 400 years in uneven steps. */
	for (t = -2208988800LL; t < 10413792000LL; t += 86400 * 37 + 3671) {
		time_format_rfc3339(t, buf, sizeof(buf));
		assert_int_equal(strlen(buf), 20);
		assert_int_equal(time_parse_rfc3339(buf, &back), 0);
		assert_true(back == t);
	}
	/* A short buffer is truncated, never overrun. */
	time_format_rfc3339(0, buf, 5);
	assert_string_equal(buf, "1970");
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_quantity_table),
		cmocka_unit_test(test_time_parse_table),
		cmocka_unit_test(test_time_format),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
