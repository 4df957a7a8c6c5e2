/* heap.h — the malloc policy of the one-threaded daemon, and memory given back after a burst.
 *
 * glibc's defaults are made for threaded programs that allocate big blocks again and again:
 * one arena per thread, and a "dynamic" mmap threshold that rises (up to 32 MiB) each time a
 * large block is freed, and with it the amount of free memory kept at the top of the heap.
 * After one relist of a thousand pods (megabytes of decoded messages) that memory would stay
 * resident for ever. heap_tune fixes both thresholds so that large blocks are mapped and
 * unmapped, and heap_trim gives free pages back when enough of them lie inside the heap.
 * Other C libraries: both are no-ops and heap_stats reports zeros.
 */
#ifndef KLET_HEAP_H
#define KLET_HEAP_H

#include <stddef.h>
#include <stdint.h>

/* Blocks from this size on are mapped on their own (and unmapped when freed). */
#define HEAP_MMAP_THRESHOLD (128 * 1024)
/* Free memory at the top of the heap beyond this is given back at once by free(). */
#define HEAP_TRIM_THRESHOLD (256 * 1024)
/* heap_trim does its work after a burst: when this much more is free inside the heap than
 * at its last trim (and at least an eighth of what is in use)... */
#define HEAP_TRIM_MIN_FREE  (512 * 1024)
/* ...or when this much more is resident but not in use than right after the last trim (free
 * memory touched again), at most every HEAP_TRIM_SLACK_MS. */
#define HEAP_TRIM_SLACK     (256 * 1024)
#define HEAP_TRIM_SLACK_MS  10000

/* Transient buffers from this size on are rounded up to HEAP_MMAP_THRESHOLD (heap_transient). */
#define HEAP_TRANSIENT_MIN (32 * 1024)

struct heap_stats {
	int64_t  in_use;     /* bytes allocated (heap and mapped blocks) */
	int64_t  free_bytes; /* free inside the heap, not given back */
	int64_t  mapped;     /* of in_use, blocks mapped on their own */
	uint64_t trims;      /* heap_trim calls that gave memory back */
	int64_t  trimmed;    /* anonymous resident bytes the last of them gave back */
};

/* The size to allocate for a buffer of n bytes that lives only a short while (a response
 * and its decoded message): from HEAP_TRANSIENT_MIN on, at least HEAP_MMAP_THRESHOLD, so that
 * it is mapped on its own and unmapped when freed instead of leaving a hole in the heap that
 * stays resident (the untouched rest of the mapping costs no memory). */
size_t heap_transient(size_t n);
/* Sets the policy (one arena, fixed thresholds). Call first thing in main. */
void heap_tune(void);
/* Returns the whole free pages inside the heap to the kernel (malloc_trim) when a burst
 * freed memory or free memory is resident again (see the thresholds above). Otherwise costs
 * one mallinfo2 and a read of /proc/self/statm; meant for a periodic task (now_ms: the
 * monotonic clock). Returns 1 when it trimmed. */
int  heap_trim(int64_t now_ms);
void heap_stats(struct heap_stats *);

#endif
