/* fuzz_common.h — helpers shared by the fuzz targets: quiet logging and fuzzer-chosen cut
 * points, so that a stream parser sees its input in pieces split anywhere. */
#ifndef KLET_FUZZ_COMMON_H
#define KLET_FUZZ_COMMON_H

#include <stddef.h>
#include <stdint.h>

#include "core/log.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* kletd's log goes to /dev/null (every message is still formatted). */
static inline void
fuzz_quiet(void)
{
	static int done;

	if (done)
		return;
	done = 1;
	log_init(0, 0);
	(void)log_open_file("/dev/null");
}

#define FUZZ_MAX_CUTS 4096

/* Takes a 4-byte header from *data: byte 0 picks the piece sizes (whole, 1 byte, 1..16,
 * 1..512, 1..65536), the 4 bytes seed the sizes. Fills cuts[] (piece lengths summing to at
 * most the rest) and returns their number; *data and *size then describe the payload. */
static inline size_t
fuzz_cuts(const uint8_t **data, size_t *size, size_t *cuts)
{
	static const uint32_t maxes[] = { 0, 1, 16, 512, 65536 };
	uint32_t              seed, max;
	size_t                n = 0, left;

	if (*size < 4)
		return 0;
	seed = (uint32_t)(*data)[0] | (uint32_t)(*data)[1] << 8 | (uint32_t)(*data)[2] << 16 |
	    (uint32_t)(*data)[3] << 24;
	max = maxes[(*data)[0] % 5];
	*data += 4;
	*size -= 4;
	if (max == 0)
		return 0;
	seed |= 1;
	for (left = *size; left > 0 && n < FUZZ_MAX_CUTS; n++) {
		seed ^= seed << 13;
		seed ^= seed >> 17;
		seed ^= seed << 5;
		cuts[n] = 1 + seed % max;
		if (cuts[n] > left)
			cuts[n] = left;
		left -= cuts[n];
	}
	return n;
}

#endif
