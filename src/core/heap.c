/* heap.c — malloc thresholds and trimming (see heap.h). */
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#if defined(__GLIBC__)
#include <malloc.h>
#endif

#include "core/heap.h"
#include "core/log.h"

static uint64_t heap_trims;
static int64_t  heap_trimmed;
static int64_t  heap_last_free = -1; /* free bytes at the last trim (or lowest since) */

void
heap_tune(void)
{
#if defined(__GLIBC__)
	/* Setting a threshold switches glibc's dynamic adjustment off. */
	if (mallopt(M_ARENA_MAX, 1) != 1 || mallopt(M_MMAP_THRESHOLD, HEAP_MMAP_THRESHOLD) != 1 ||
	    mallopt(M_TRIM_THRESHOLD, HEAP_TRIM_THRESHOLD) != 1)
		log_warnx("%s: mallopt refused a setting", __func__);
#endif
}

#if defined(__GLIBC__) && (__GLIBC__ > 2 || (__GLIBC__ == 2 && __GLIBC_MINOR__ >= 33))
static void
heap_info(int64_t *in_use, int64_t *free_bytes, int64_t *mapped)
{
	struct mallinfo2 mi = mallinfo2();

	*in_use = (int64_t)(mi.uordblks + mi.hblkhd);
	*free_bytes = (int64_t)mi.fordblks;
	*mapped = (int64_t)mi.hblkhd;
}
#else
static void
heap_info(int64_t *in_use, int64_t *free_bytes, int64_t *mapped)
{
	*in_use = *free_bytes = *mapped = 0;
}
#endif

/* Resident bytes of the process (0 if unknown). */
static int64_t
heap_rss(void)
{
	FILE     *f = fopen("/proc/self/statm", "re");
	long long size = 0, res = 0;

	if (f == NULL)
		return 0;
	if (fscanf(f, "%lld %lld", &size, &res) != 2)
		res = 0;
	fclose(f);
	return (int64_t)res * sysconf(_SC_PAGESIZE);
}

int
heap_trim(void)
{
	int64_t in_use, free_bytes, mapped, rss;

	heap_info(&in_use, &free_bytes, &mapped);
	/* Free memory inside the heap stays free (malloc_trim only gives its pages back), so
	 * trim again only when more has been freed since: a burst ended. */
	if (heap_last_free < 0 || free_bytes < heap_last_free)
		heap_last_free = free_bytes;
	if (free_bytes - heap_last_free < HEAP_TRIM_MIN_FREE || free_bytes < in_use / 8)
		return 0;
	rss = heap_rss();
#if defined(__GLIBC__)
	malloc_trim(0);
#endif
	heap_trims++;
	heap_trimmed = rss - heap_rss();
	heap_last_free = free_bytes;
	log_v(3,
	    "heap: %lld KiB free inside the heap (%lld KiB in use): trimmed, %lld KiB given "
	    "back",
	    (long long)free_bytes / 1024, (long long)in_use / 1024, (long long)heap_trimmed / 1024);
	return 1;
}

void
heap_stats(struct heap_stats *s)
{
	memset(s, 0, sizeof(*s));
	heap_info(&s->in_use, &s->free_bytes, &s->mapped);
	s->trims = heap_trims;
	s->trimmed = heap_trimmed;
}
