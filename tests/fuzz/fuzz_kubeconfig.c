/* fuzz_kubeconfig.c — libFuzzer target: kubeconfig files (src/client/kubeconfig.c), YAML or
 * JSON, relative paths resolved against a directory that does not exist. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "client/kubeconfig.h"
#include "fuzz_common.h"

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct kubeconfig *kc;
	char               err[512];
	size_t             n;
	char              *b;

	fuzz_quiet();
	err[0] = '\0';
	kc = kubeconfig_parse(
	    (const char *)data, size, "/nonexistent/klet-fuzz", "fuzz", err, sizeof(err));
	if (kc == NULL) {
		if (err[0] == '\0') {
			fprintf(stderr, "refused without a reason\n");
			abort();
		}
	} else {
		if (kc->server == NULL || kc->host == NULL || kc->port == NULL)
			abort();
		kubeconfig_free(kc);
	}
	b = kubeconfig_base64_decode((const char *)data, size, &n);
	free(b);
	return 0;
}
