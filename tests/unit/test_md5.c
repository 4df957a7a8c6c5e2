/* test_md5.c — core/md5.c: RFC 1321's test suite, and the same digest as OpenSSL's for every
 * length around the block and padding boundaries, whole or split in parts. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <cmocka.h>

#include <openssl/evp.h>

#include "core/md5.h"

static void
hex(const uint8_t *d, char out[KLET_MD5_LEN * 2 + 1])
{
	size_t i;

	for (i = 0; i < KLET_MD5_LEN; i++)
		snprintf(out + i * 2, 3, "%02x", d[i]);
}

static void
test_rfc1321_suite(void **state)
{
	static const struct {
		const char *in, *want;
	} cases[] = {
		{ "", "d41d8cd98f00b204e9800998ecf8427e" },
		{ "a", "0cc175b9c0f1b6a831c399e269772661" },
		{ "abc", "900150983cd24fb0d6963f7d28e17f72" },
		{ "message digest", "f96b697d7cb7938d525a2f31aaf161d0" },
		{ "abcdefghijklmnopqrstuvwxyz", "c3fcd3d76192e4007dfb496cca67e13b" },
		{ "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789",
		    "d174ab98d277d9f5a5611c2c9f419d9f" },
		{ "1234567890123456789012345678901234567890123456789012345678901234567890123456789"
		  "0",
		    "57edf4a22be3c955ac49da2e2107b67a" },
	};
	uint8_t d[KLET_MD5_LEN];
	char    h[KLET_MD5_LEN * 2 + 1];
	size_t  i;

	(void)state;
	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct md5_part p = { cases[i].in, strlen(cases[i].in) };

		md5_digest(&p, 1, d);
		hex(d, h);
		assert_string_equal(h, cases[i].want);
	}
}

static void
test_same_as_openssl(void **state)
{
	uint8_t      buf[300], d[KLET_MD5_LEN], want[KLET_MD5_LEN];
	unsigned int wlen;
	size_t       len, cut, i;

	(void)state;
	for (i = 0; i < sizeof(buf); i++)
		buf[i] = (uint8_t)(i * 131 + 7);
	for (len = 0; len <= sizeof(buf); len++) {
		struct md5_part whole = { buf, len };

		assert_int_equal(EVP_Digest(buf, len, want, &wlen, EVP_md5(), NULL), 1);
		assert_int_equal(wlen, KLET_MD5_LEN);
		md5_digest(&whole, 1, d);
		assert_memory_equal(d, want, KLET_MD5_LEN);
		/* The same bytes in three parts, cut anywhere. */
		for (cut = 0; cut <= len; cut += 7) {
			struct md5_part parts[3] = { { buf, cut / 2 },
				{ buf + cut / 2, cut - cut / 2 }, { buf + cut, len - cut } };

			md5_digest(parts, 3, d);
			assert_memory_equal(d, want, KLET_MD5_LEN);
		}
	}
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_rfc1321_suite),
		cmocka_unit_test(test_same_as_openssl),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
