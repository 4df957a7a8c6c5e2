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

#include <stdint.h>

/* Blocks from this size on are mapped on their own (and unmapped when freed). */
#define HEAP_MMAP_THRESHOLD (128 * 1024)
/* Free memory at the top of the heap beyond this is given back at once by free(). */
#define HEAP_TRIM_THRESHOLD (256 * 1024)
/* heap_trim does its work when this much more is free inside the heap than at its last
 * trim (and at least an eighth of what is in use). */
#define HEAP_TRIM_MIN_FREE  (512 * 1024)

struct heap_stats {
	int64_t  in_use;     /* bytes allocated (heap and mapped blocks) */
	int64_t  free_bytes; /* free inside the heap, not given back */
	int64_t  mapped;     /* of in_use, blocks mapped on their own */
	uint64_t trims;      /* heap_trim calls that gave memory back */
	int64_t  trimmed;    /* resident bytes the last of them gave back */
};

/* Sets the policy (one arena, fixed thresholds). Call first thing in main. */
void heap_tune(void);
/* After a burst freed memory inside the heap (HEAP_TRIM_MIN_FREE more than at the last trim),
 * returns the whole free pages to the kernel (malloc_trim). Otherwise costs one mallinfo2;
 * meant for a periodic task. Returns 1 when it trimmed. */
int  heap_trim(void);
void heap_stats(struct heap_stats *);

#endif
