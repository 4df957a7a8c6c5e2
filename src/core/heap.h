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
	uint64_t drops;      /* heap_drop_due runs */
	int64_t  dropped;    /* resident bytes of clean file pages the last one unmapped */
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

/* Clean file pages. The resident set counts every page the process has mapped, and the
 * kernel maps a file's pages 16 at a time around each one touched: after the start (config,
 * store, recovery, the first relist) the daemon keeps mapped megabytes of library code it
 * will not run again (SQLite's, the YAML parser's, OpenSSL's handshake) next to the few pages
 * its loop runs. heap_drop_clean unmaps (MADV_DONTNEED) every private, read-only file mapping
 * none of whose pages was copied: such a page is the file's own, so nothing is lost; the next
 * touch maps it again from the page cache (a minor fault). Nothing leaves the page cache, but
 * pages no process maps any more are the first the kernel reclaims under pressure. Returns
 * the resident bytes unmapped, -1 when /proc/self/smaps cannot be read. */
int64_t heap_drop_clean(void);
/* 1 when memory the loop does not use should go back (heap_drop, after the caller's own
 * caches): HEAP_DROP_FIRST_MS after the start (started_ms, monotonic), then every
 * HEAP_DROP_EVERY_MS, so that what the start or a burst mapped goes after it; and sooner,
 * HEAP_DROP_AFTER_WORK_MS after the last drop, when the caller says that work the idle
 * loop does not do has ended (after_work: a store commit, whose code is about 1 MiB of
 * SQLite, once the store is quiet again). */
#define HEAP_DROP_FIRST_MS      (10 * 1000)
#define HEAP_DROP_EVERY_MS      (5 * 60 * 1000)
#define HEAP_DROP_AFTER_WORK_MS (30 * 1000)
int heap_drop_due(int64_t now_ms, int64_t started_ms, int after_work);
/* Gives back the heap's free pages (malloc_trim) and the clean file pages
 * (heap_drop_clean); counted in heap_stats. */
void heap_drop(void);

#endif
