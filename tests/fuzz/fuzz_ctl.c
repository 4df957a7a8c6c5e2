/* fuzz_ctl.c — libFuzzer target: podctl request lines (src/ctl, ctl_parse_request), one per
 * line as the server reads them. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ctl/ctl.h"
#include "fuzz_common.h"

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const char        *p = (const char *)data, *end = p + size, *nl;
	struct ctl_request rq;
	char               err[256];

	fuzz_quiet();
	while (p < end) {
		nl = memchr(p, '\n', (size_t)(end - p));
		if (nl == NULL)
			nl = end;
		err[0] = '\0';
		memset(&rq, 0xa5, sizeof(rq));
		if (ctl_parse_request(p, (size_t)(nl - p), &rq, err, sizeof(err)) == 0) {
			if (memchr(rq.cmd, 0, sizeof(rq.cmd)) == NULL ||
			    memchr(rq.ns, 0, sizeof(rq.ns)) == NULL ||
			    memchr(rq.name, 0, sizeof(rq.name)) == NULL || rq.cmd[0] == '\0')
				abort();
		} else if (err[0] == '\0') {
			fprintf(stderr, "refused without a reason\n");
			abort();
		}
		p = nl + 1;
	}
	return 0;
}
