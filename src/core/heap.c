/* heap.c — malloc thresholds and trimming (see heap.h). */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/mman.h>

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
static uint64_t heap_drops;
static int64_t  heap_dropped;
static int64_t  heap_last_drop_ms; /* monotonic; 0: none yet */

void
heap_tune(void)
{
#if defined(__GLIBC__)
	/* Setting a threshold switches glibc's dynamic adjustment off. No fast bins (M_MXFAST
	 * 0): the per-size caches (tcache) in front of them keep small blocks quick, and a
	 * fast bin's free block is merged with its neighbours only when a larger request
	 * comes: each 4 KiB read of a socket's bufferevent walked and merged them all
	 * (malloc_consolidate), and what they held apart stayed fragments of the heap. */
	if (mallopt(M_ARENA_MAX, 1) != 1 || mallopt(M_MMAP_THRESHOLD, HEAP_MMAP_THRESHOLD) != 1 ||
	    mallopt(M_TRIM_THRESHOLD, HEAP_TRIM_THRESHOLD) != 1 || mallopt(M_MXFAST, 0) != 1)
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
	s->drops = heap_drops;
	s->dropped = heap_dropped;
}

/* One mapping of /proc/self/smaps as far as heap_drop_clean needs it. */
struct heap_map {
	uintptr_t lo, hi;
	int       clean; /* private, not writable, of a file */
	long long rss, anon, swap;
};

/* Unmaps m if every page of it is the file's, and adds its resident bytes to *dropped. */
static void
heap_drop_map(const struct heap_map *m, int64_t *dropped)
{
	if (!m->clean || m->rss <= 0 || m->anon != 0 || m->swap != 0)
		return;
	if (madvise((void *)m->lo, m->hi - m->lo, MADV_DONTNEED) == 0)
		*dropped += m->rss * 1024;
}

/* The kB of a field line that starts with name ("Rss:"), or -1. */
static long long
heap_field_kb(const char *line, const char *name, size_t len)
{
	char     *end;
	long long v;

	if (strncmp(line, name, len) != 0)
		return -1;
	v = strtoll(line + len, &end, 10);
	return end != line + len && strncmp(end, " kB", 3) == 0 ? v : -1;
}

/* A mapping's line: "lo-hi perms offset dev inode [path]". 0, or -1 when it is not one. */
static int
heap_map_line(const char *line, struct heap_map *m)
{
	char              *p;
	const char        *perms;
	unsigned long long inode;
	int                i;

	memset(m, 0, sizeof(*m));
	m->lo = (uintptr_t)strtoull(line, &p, 16);
	if (*p != '-')
		return -1;
	m->hi = (uintptr_t)strtoull(p + 1, &p, 16);
	if (*p != ' ' || m->hi <= m->lo)
		return -1;
	perms = p + 1;
	if (strlen(perms) < 5 || perms[4] != ' ')
		return -1;
	p = (char *)perms + 5;
	for (i = 0; i < 2; i++) { /* offset, device */
		p += strspn(p, " ");
		p += strcspn(p, " ");
	}
	inode = strtoull(p, &p, 10);
	p += strspn(p, " ");
	/* A private mapping of a file that cannot be written: its pages are the file's unless
	 * one was copied (Anonymous: the relocated part of a library, a debugger's
	 * breakpoint) or such a copy is swapped out (Swap). Until the fields say neither, it
	 * is only a candidate (anon and swap start unknown, -1). */
	m->clean = perms[1] == '-' && perms[3] == 'p' && inode != 0 && *p == '/';
	m->anon = m->swap = -1;
	return 0;
}

int64_t
heap_drop_clean(void)
{
	FILE           *f = fopen("/proc/self/smaps", "re");
	char            line[512];
	struct heap_map m;
	int64_t         dropped = 0;
	long long       v;

	if (f == NULL)
		return -1;
	memset(&m, 0, sizeof(m));
	while (fgets(line, sizeof(line), f) != NULL) {
		if (line[0] < 'A' || line[0] > 'Z') { /* a mapping (fields start with a capital) */
			if (heap_map_line(line, &m) == -1)
				m.clean = 0;
			continue;
		}
		if (!m.clean)
			continue;
		if ((v = heap_field_kb(line, "Rss:", 4)) >= 0)
			m.rss = v;
		else if ((v = heap_field_kb(line, "Anonymous:", 10)) >= 0)
			m.anon = v;
		else if ((v = heap_field_kb(line, "Swap:", 5)) >= 0)
			m.swap = v;
		else if (strncmp(line, "VmFlags:", 8) == 0) { /* the last field */
			heap_drop_map(&m, &dropped);
			m.clean = 0;
		}
	}
	fclose(f);
	return dropped;
}

int
heap_drop_due(int64_t now_ms, int64_t started_ms, int after_work)
{
	int64_t wait = after_work ? HEAP_DROP_AFTER_WORK_MS : HEAP_DROP_EVERY_MS;

	if (heap_last_drop_ms == 0 ? now_ms - started_ms < HEAP_DROP_FIRST_MS
	                           : now_ms - heap_last_drop_ms < wait)
		return 0;
	heap_last_drop_ms = now_ms;
	return 1;
}

void
heap_drop(void)
{
	int64_t t0 = now_mono_us(), before = heap_anon(), d;

#if defined(__GLIBC__)
	malloc_trim(0);
#endif
	if ((d = heap_drop_clean()) < 0) {
		log_v(3, "heap: /proc/self/smaps unreadable: clean file pages stay mapped");
		return;
	}
	heap_drops++;
	heap_dropped = d;
	log_v(3,
	    "heap: %lld KiB of clean file pages unmapped, %lld KiB of free heap given back, in "
	    "%lldus",
	    (long long)d / 1024, (long long)(before - heap_anon()) / 1024,
	    (long long)(now_mono_us() - t0));
}
