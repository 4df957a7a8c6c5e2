/* fuzz_config.c — libFuzzer target: KubeletConfiguration files (src/core/config.c) through
 * config_load --config, as kletd reads them (the file is a memfd). */
#include <sys/mman.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/config.h"
#include "fuzz_common.h"

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static int         fd = -1;
	static char        path[64];
	struct klet_config cfg;
	char               err[512];
	char *argv[] = { "kletd", "--config", path, "--hostname-override", "fuzz-node", NULL };
	enum config_result rc;

	fuzz_quiet();
	if (fd == -1) {
		if ((fd = memfd_create("kletconfig", 0)) == -1)
			abort();
		snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
	}
	if (ftruncate(fd, 0) == -1 || pwrite(fd, data, size, 0) != (ssize_t)size)
		abort();
	err[0] = '\0';
	rc = config_load(&cfg, 5, argv, err, sizeof(err));
	if (rc == CONFIG_ERROR && err[0] == '\0') {
		fprintf(stderr, "refused without a reason\n");
		abort();
	}
	if (rc == CONFIG_OK && (cfg.node_name == NULL || cfg.root_dir == NULL))
		abort();
	config_clear(&cfg);
	return 0;
}
