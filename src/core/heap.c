/* heap.c — malloc thresholds and trimming (see heap.h). */
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#if defined(__GLIBC__)
#include <malloc.h>
#endif

#include "core/heap.h"
#include "core/log.h"
#include "core/util.h"

static uint64_t heap_trims;
static int64_t  heap_trimmed;
static int64_t  heap_last_free;    /* free bytes at the last trim (or the lowest since) */
static int64_t  heap_last_slack;   /* resident bytes not in use after the last trim (idem) */
static int64_t  heap_last_trim_ms; /* monotonic */

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

size_t
heap_transient(size_t n)
{
	return n >= HEAP_TRANSIENT_MIN && n < HEAP_MMAP_THRESHOLD ? HEAP_MMAP_THRESHOLD : n;
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

/* Anonymous resident bytes of the process (statm: resident less file-backed), 0 if
 * unknown: the heap, mapped blocks, the stack, the libraries' written data. */
static int64_t
heap_anon(void)
{
	FILE     *f = fopen("/proc/self/statm", "re");
	long long size = 0, res = 0, shared = 0;

	if (f == NULL)
		return 0;
	if (fscanf(f, "%lld %lld %lld", &size, &res, &shared) != 3)
		res = shared = 0;
	fclose(f);
	return (int64_t)(res - shared) * sysconf(_SC_PAGESIZE);
}

int
heap_trim(int64_t now_ms)
{
	int64_t in_use, free_bytes, mapped, anon, slack;
	int64_t t0;
	int     burst, regrown;

	heap_info(&in_use, &free_bytes, &mapped);
	anon = heap_anon();
	slack = anon - in_use; /* resident but not in use, plus what is not the heap's */
	/* Free memory stays free after a trim (only its pages go back): the lowest levels
	 * since the last trim are what "more" is measured from. */
	if (free_bytes < heap_last_free)
		heap_last_free = free_bytes;
	if (slack < heap_last_slack)
		heap_last_slack = slack;
	burst = free_bytes - heap_last_free >= HEAP_TRIM_MIN_FREE && free_bytes >= in_use / 8;
	regrown = anon > 0 && slack - heap_last_slack >= HEAP_TRIM_SLACK &&
	    now_ms - heap_last_trim_ms >= HEAP_TRIM_SLACK_MS;
	if (!burst && !regrown)
		return 0;
	t0 = now_mono_us();
#if defined(__GLIBC__)
	malloc_trim(0);
#endif
	heap_trims++;
	heap_last_trim_ms = now_ms;
	heap_last_free = free_bytes;
	heap_trimmed = anon - heap_anon();
	heap_last_slack = slack - heap_trimmed;
	log_v(3,
	    "heap: %lld KiB in use, %lld KiB free inside (%s): trimmed in %lldus, %lld KiB given "
	    "back",
	    (long long)in_use / 1024, (long long)free_bytes / 1024,
	    burst ? "after a burst" : "touched again", (long long)(now_mono_us() - t0),
	    (long long)heap_trimmed / 1024);
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
