/* util.c — allocation helpers and clocks. */
#include <sys/stat.h>
#include <sys/types.h>

#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "core/log.h"
#include "core/util.h"

#define XXH_INLINE_ALL
#include <xxhash.h>

void *
xmalloc(size_t n)
{
	void *p;

	if (n == 0)
		n = 1;
	if ((p = malloc(n)) == NULL)
		fatalx("%s: out of memory (%zu bytes)", __func__, n);
	return p;
}

/* Small blocks are taken with malloc and zeroed here: glibc's calloc (2.36, Debian 12's) passes
 * by the per-thread cache of freed blocks that malloc takes from first, and goes to the
 * allocator's bins each time, sorting whatever lies in its unsorted list. Larger ones are
 * calloc's, which knows that fresh pages are zero already. */
#define XCALLOC_SMALL 1024

void *
xcalloc(size_t nmemb, size_t size)
{
	void *p;

	if (nmemb == 0 || size == 0)
		nmemb = size = 1;
	if (nmemb <= XCALLOC_SMALL / size) {
		if ((p = malloc(nmemb * size)) == NULL)
			fatalx("%s: out of memory (%zu x %zu)", __func__, nmemb, size);
		return memset(p, 0, nmemb * size);
	}
	if ((p = calloc(nmemb, size)) == NULL)
		fatalx("%s: out of memory (%zu x %zu)", __func__, nmemb, size);
	return p;
}

void *
xreallocarray(void *old, size_t nmemb, size_t size)
{
	void *p;

	if (size != 0 && nmemb > SIZE_MAX / size)
		fatalx("%s: size overflow (%zu x %zu)", __func__, nmemb, size);
	if (nmemb == 0 || size == 0)
		nmemb = size = 1;
	if ((p = realloc(old, nmemb * size)) == NULL)
		fatalx("%s: out of memory (%zu x %zu)", __func__, nmemb, size);
	return p;
}

char *
xstrdup(const char *s)
{
	char *p;

	if (s == NULL)
		return NULL;
	if ((p = strdup(s)) == NULL)
		fatalx("%s: out of memory", __func__);
	return p;
}

char *
xstrndup(const char *s, size_t n)
{
	char *p;

	if ((p = strndup(s, n)) == NULL)
		fatalx("%s: out of memory", __func__);
	return p;
}

int
xasprintf(char **ret, const char *fmt, ...)
{
	va_list ap;
	int     n;

	va_start(ap, fmt);
	n = vasprintf(ret, fmt, ap);
	va_end(ap);
	if (n < 0)
		fatalx("%s: out of memory", __func__);
	return n;
}

char *
xsprintf(const char *fmt, ...)
{
	va_list ap;
	char   *s;

	va_start(ap, fmt);
	if (vasprintf(&s, fmt, ap) < 0)
		fatalx("%s: out of memory", __func__);
	va_end(ap);
	return s;
}

void
xfree_str(char **p)
{
	free(*p);
	*p = NULL;
}

int
streq_null(const char *a, const char *b)
{
	if (a == NULL || b == NULL)
		return a == b;
	return strcmp(a, b) == 0;
}

int64_t
now_mono_us(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000000 + ts.tv_nsec / 1000;
}

int64_t
now_mono_ms(void)
{
	return now_mono_us() / 1000;
}

int64_t
now_wall_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

int64_t
now_wall_ms(void)
{
	return now_wall_ns() / 1000000;
}

struct timeval
ms_to_tv(int64_t ms)
{
	struct timeval tv;

	if (ms < 0)
		ms = 0;
	tv.tv_sec = ms / 1000;
	tv.tv_usec = (ms % 1000) * 1000;
	return tv;
}

static int rmtree_errno;

static int
rmtree_entry(const char *path, const struct stat *sb, int flag, struct FTW *ftw)
{
	int rc;

	(void)sb;
	(void)ftw;
	rc = flag == FTW_DP ? rmdir(path) : unlink(path);
	if (rc == -1 && errno != ENOENT && rmtree_errno == 0)
		rmtree_errno = errno;
	return 0;
}

int
write_file_replace(const char *path, const void *data, size_t len, int sync, int mode)
{
	char   *tmp = xsprintf("%s.tmp", path);
	ssize_t n = -1;
	int     fd, saved;

	/* Not through a link, and not into a FIFO (whose open would wait for a reader). */
	fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK, mode);
	if (fd != -1) {
		n = write(fd, data, len);
		if (sync && n == (ssize_t)len && fsync(fd) == -1)
			n = -1;
		if (close(fd) == -1)
			n = -1;
	}
	if (fd == -1 || n != (ssize_t)len || rename(tmp, path) == -1) {
		saved = n >= 0 && n != (ssize_t)len ? ENOSPC : errno;
		unlink(tmp);
		free(tmp);
		errno = saved;
		return -1;
	}
	free(tmp);
	return 0;
}

int
rmtree(const char *path)
{
	rmtree_errno = 0;
	if (nftw(path, rmtree_entry, 16, FTW_DEPTH | FTW_PHYS | FTW_MOUNT) == -1 && errno != ENOENT)
		return -1;
	if (rmtree_errno != 0) {
		errno = rmtree_errno;
		return -1;
	}
	return 0;
}

uint64_t
fnv64(uint64_t h, const void *buf, size_t len)
{
	const unsigned char *p = buf;

	while (len-- > 0) {
		h ^= *p++;
		h *= 0x100000001b3ULL;
	}
	return h;
}

int
held_dir_stat(int *fd, const char *dir, const char *name, struct stat *sb, int linked_ok)
{
	struct stat d;
	char       *path;
	int         rc, saved;

	if (*fd == -1)
		*fd = open(dir, O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (*fd >= 0 && fstatat(*fd, name, sb, 0) == 0)
		return 0;
	if (*fd >= 0 && linked_ok && errno == ENOENT && fstat(*fd, &d) == 0 && d.st_nlink > 0) {
		errno = ENOENT;
		return -1;
	}
	path = xsprintf("%s/%s", dir, name);
	rc = stat(path, sb);
	saved = errno;
	free(path);
	if (rc == 0 && *fd >= 0) { /* dir was made again since it was opened */
		close(*fd);
		*fd = -1;
	}
	errno = saved;
	return rc;
}

uint64_t
hash_bytes(const void *buf, size_t len, uint64_t seed)
{
	return XXH3_64bits_withSeed(buf, len, seed);
}

int
path_component_ok(const char *s)
{
	return s != NULL && *s != '\0' && strchr(s, '/') == NULL && strcmp(s, ".") != 0 &&
	    strcmp(s, "..") != 0;
}

char *
path_join(const char *base, int n, ...)
{
	va_list     ap;
	const char *c;
	char       *out = xstrdup(base), *next;
	int         i;

	va_start(ap, n);
	for (i = 0; i < n; i++) {
		c = va_arg(ap, const char *);
		if (!path_component_ok(c)) {
			va_end(ap);
			free(out);
			errno = EINVAL;
			return NULL;
		}
		xasprintf(&next, "%s/%s", out, c);
		free(out);
		out = next;
	}
	va_end(ap);
	return out;
}

int
mkdirs(const char *path, unsigned mode)
{
	char *p, *s;
	int   rc = 0;

	/* Most callers' parents are there already: one mkdir, and the components one by one
	 * only when a parent is missing (a pod's cgroups and log directory, on its way to its
	 * sandbox, cost a system call each instead of one per component). */
	if (mkdir(path, (mode_t)mode) == 0)
		return chmod(path, (mode_t)mode);
	if (errno == EEXIST)
		return 0;
	if (errno != ENOENT)
		return -1;
	p = xstrdup(path);

	for (s = p + 1; *s != '\0'; s++) {
		if (*s != '/')
			continue;
		*s = '\0';
		if (mkdir(p, 0755) == -1 && errno != EEXIST) {
			rc = -1;
			break;
		}
		*s = '/';
	}
	if (rc == 0) {
		if (mkdir(p, (mode_t)mode) == 0)
			rc = chmod(p, (mode_t)mode);
		else if (errno != EEXIST)
			rc = -1;
	}
	free(p);
	return rc;
}
