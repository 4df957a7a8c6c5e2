/* fuzz_pod_yaml.c — libFuzzer target: pod_from_yaml and the YAML DOM. */
#include "fuzz_pod.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	fuzz_pod_one(data, size, 1);
	return 0;
}
