/* fuzz_pod_json.c — libFuzzer target: pod_from_json and the JSON DOM. */
#include "fuzz_pod.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	fuzz_pod_one(data, size, 0);
	return 0;
}
