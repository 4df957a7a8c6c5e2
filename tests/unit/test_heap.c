/* test_heap.c — clean file pages: what heap_drop_clean unmaps, what it must leave, and when
 * heap_drop_due runs it. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/mman.h>
#include <cmocka.h>

#include "core/heap.h"

#define PAGES 64

/* The Rss and Anonymous of the mapping that starts at p, in KiB (-1: not found). */
static void
smaps_of(const void *p, long long *rss, long long *anon)
{
	FILE     *f = fopen("/proc/self/smaps", "re");
	char      line[512];
	uintptr_t lo, hi;
	int       in = 0;

	*rss = *anon = -1;
	assert_non_null(f);
	while (fgets(line, sizeof(line), f) != NULL) {
		if (sscanf(line, "%lx-%lx ", &lo, &hi) == 2 &&
		    strchr(line, '-') < strchr(line, ' '))
			in = lo == (uintptr_t)p;
		else if (in && sscanf(line, "Rss: %lld kB", rss) == 1)
			continue;
		else if (in && sscanf(line, "Anonymous: %lld kB", anon) == 1)
			continue;
	}
	fclose(f);
}

/* A file of PAGES pages, page i filled with the byte 'a' + i % 26. */
static int
page_file(char *path, size_t len, size_t pg)
{
	char  *buf = malloc(pg);
	int    fd;
	size_t i;

	snprintf(path, len, "/tmp/klet-test-heap.XXXXXX");
	assert_true((fd = mkstemp(path)) >= 0);
	for (i = 0; i < PAGES; i++) {
		memset(buf, 'a' + (int)(i % 26), pg);
		assert_int_equal(write(fd, buf, pg), (ssize_t)pg);
	}
	free(buf);
	return fd;
}

static long
touch(const volatile char *p, size_t pg)
{
	long   sum = 0;
	size_t i;

	for (i = 0; i < PAGES; i++)
		sum += p[i * pg];
	return sum;
}

static void
test_drop_clean(void **state)
{
	size_t    pg = (size_t)sysconf(_SC_PAGESIZE), i;
	char      path[64];
	int       fd = page_file(path, sizeof(path), pg);
	char     *ro, *cow, *shared;
	long long rss, anon;
	int64_t   d;

	(void)state;
	/* Read-only and private: the file's pages, unmapped. */
	ro = mmap(NULL, PAGES * pg, PROT_READ, MAP_PRIVATE, fd, 0);
	/* Private and written once, then read-only (as a library's relocated data): one
	 * page is a copy that exists nowhere else; must stay. */
	cow = mmap(NULL, PAGES * pg, PROT_READ | PROT_WRITE, MAP_PRIVATE, fd, 0);
	/* Shared: not ours to judge (SQLite's -shm is such a mapping). */
	shared = mmap(NULL, PAGES * pg, PROT_READ, MAP_SHARED, fd, 0);
	assert_true(ro != MAP_FAILED && cow != MAP_FAILED && shared != MAP_FAILED);
	cow[3 * pg] = 'X';
	assert_int_equal(mprotect(cow, PAGES * pg, PROT_READ), 0);
	touch(ro, pg);
	touch(cow, pg);
	touch(shared, pg);
	smaps_of(ro, &rss, &anon);
	assert_true(rss >= (long long)(PAGES * pg / 1024) && anon == 0);
	smaps_of(cow, &rss, &anon);
	assert_true(rss > 0 && anon > 0);

	d = heap_drop_clean();
	assert_true(d >= (int64_t)(PAGES * pg));
	smaps_of(ro, &rss, &anon);
	assert_int_equal(rss, 0);
	smaps_of(cow, &rss, &anon);
	assert_true(rss > 0 && anon > 0);
	smaps_of(shared, &rss, &anon);
	assert_true(rss >= (long long)(PAGES * pg / 1024));
	/* The contents are the same: the dropped pages come back from the file, the copy
	 * keeps what was written. */
	for (i = 0; i < PAGES; i++) {
		assert_int_equal(ro[i * pg + 7], 'a' + (int)(i % 26));
		assert_int_equal(cow[i * pg], i == 3 ? 'X' : 'a' + (int)(i % 26));
	}
	smaps_of(ro, &rss, &anon);
	assert_true(rss > 0);
	munmap(ro, PAGES * pg);
	munmap(cow, PAGES * pg);
	munmap(shared, PAGES * pg);
	close(fd);
	unlink(path);
}

static void
test_drop_due(void **state)
{
	struct heap_stats s;
	int64_t           start = 1000000, t = start;

	(void)state;
	heap_stats(&s);
	assert_int_equal(s.drops, 0);
	assert_int_equal(heap_drop_due(t, start, 0), 0);
	assert_int_equal(heap_drop_due(t, start, 1), 0); /* the start's first drop waits anyway */
	assert_int_equal(heap_drop_due(t + HEAP_DROP_FIRST_MS - 1, start, 0), 0);
	assert_int_equal(heap_drop_due(t + HEAP_DROP_FIRST_MS, start, 0), 1);
	t += HEAP_DROP_FIRST_MS; /* the last drop */
	assert_int_equal(heap_drop_due(t + 1, start, 0), 0);
	assert_int_equal(heap_drop_due(t + HEAP_DROP_AFTER_WORK_MS - 1, start, 1), 0);
	assert_int_equal(heap_drop_due(t + HEAP_DROP_AFTER_WORK_MS, start, 0), 0);
	assert_int_equal(heap_drop_due(t + HEAP_DROP_AFTER_WORK_MS, start, 1), 1); /* work ended */
	t += HEAP_DROP_AFTER_WORK_MS;
	assert_int_equal(heap_drop_due(t + HEAP_DROP_EVERY_MS - 1, start, 0), 0);
	assert_int_equal(heap_drop_due(t + HEAP_DROP_EVERY_MS, start, 0), 1);
	heap_stats(&s);
	assert_int_equal(s.drops, 0); /* due is only the schedule */
	heap_drop();
	heap_stats(&s);
	assert_int_equal(s.drops, 1);
	assert_true(s.dropped > 0); /* this program's own code, at least */
}

#if defined(__GLIBC__)
#include <malloc.h>

/* Bytes that free() left in glibc's fast bins after 64 small blocks were freed (the first
 * seven of a size go to its tcache). */
static size_t
fast_bytes_after_frees(void)
{
	void  *p[64];
	size_t i, fast;

	for (i = 0; i < 64; i++)
		p[i] = malloc(40);
	for (i = 0; i < 64; i++)
		free(p[i]);
	fast = mallinfo2().fsmblks;
	malloc_trim(0); /* merges them again */
	return fast;
}
#endif

/* heap_tune: no fast bins (a larger request would walk and merge them). */
static void
test_no_fast_bins(void **state)
{
	(void)state;
#if defined(__GLIBC__)
	mallopt(M_MXFAST, 64 * sizeof(size_t) / 4); /* glibc's default */
	if (fast_bytes_after_frees() == 0)
		skip(); /* not glibc's allocator (a sanitizer's, valgrind's): nothing to see */
	heap_tune();
	assert_int_equal(fast_bytes_after_frees(), 0);
#else
	skip();
#endif
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_drop_clean),
		cmocka_unit_test(test_drop_due),
		cmocka_unit_test(test_no_fast_bins),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
