/* fuzz_http1.c — libFuzzer target: the HTTP/1 response parser of probes and hooks
 * (src/net/http1.c), the response arriving in pieces cut anywhere. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz_common.h"
#include "net/http1.h"

static int calls;

static void
done(const struct http1_result *r, void *arg)
{
	(void)arg;
	calls++;
	if (r->error == NULL) {
		if (r->status < 100 || r->status > 999 || r->reason == NULL || r->body == NULL)
			abort();
		if (r->body_len > 100)
			abort(); /* max_body below */
		if (r->body_len > 0)
			(void)memchr(r->body, 0, r->body_len); /* readable */
		if (r->location != NULL)
			(void)strlen(r->location);
		(void)strlen(r->reason);
	} else if (r->error[0] == '\0')
		abort();
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static size_t cuts[FUZZ_MAX_CUTS];
	size_t        n;

	fuzz_quiet();
	n = fuzz_cuts(&data, &size, cuts);
	calls = 0;
	http1_parse_response((const char *)data, size, cuts, n, 100, done, NULL);
	if (calls != 1) {
		fprintf(stderr, "callback ran %d times\n", calls);
		abort();
	}
	return 0;
}
