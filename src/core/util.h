/* util.h — allocation helpers that abort on failure, and small string tools. */
#ifndef KLET_UTIL_H
#define KLET_UTIL_H

#include <stddef.h>
#include <stdint.h>
#include <sys/time.h>

#define nitems(a) (sizeof(a) / sizeof((a)[0]))

/* All x* helpers abort (fatalx) on allocation failure or size overflow; never NULL. */
void *xmalloc(size_t);
void *xcalloc(size_t, size_t);
void *xreallocarray(void *, size_t, size_t);
char *xstrdup(const char *); /* NULL in -> NULL out */
char *xstrndup(const char *, size_t);
/* mkdir -p: the missing parents with mode 0755, path itself with mode (set exactly, whatever
 * the umask, when this call creates it). An existing directory is left as it is. 0 or -1
 * (errno set). */
int mkdirs(const char *path, unsigned mode);
/* base/c1/.../cn for the n components that follow: each one must be a single name (not
 * NULL nor empty, no '/', not "." nor ".."), so that the path cannot leave base. The string
 * (caller frees), or NULL with errno EINVAL when a component is not such a name. */
char *path_join(const char *base, int n, ...);
/* 1 when s can be one component of path_join. */
int   path_component_ok(const char *s);
int   xasprintf(char **, const char *, ...) __attribute__((format(printf, 2, 3)));
char *xsprintf(const char *, ...) __attribute__((format(printf, 1, 2))); /* returns the string */

/* Frees *p and sets it to NULL. */
void xfree_str(char **p);

/* Returns 1 if a and b are both NULL or equal strings. */
int streq_null(const char *a, const char *b);

/* Monotonic and wall clocks. */
int64_t now_mono_ms(void);
int64_t now_mono_us(void);
int64_t now_wall_ns(void);
int64_t now_wall_ms(void);

/* A duration in milliseconds as a struct timeval for libevent; negative counts as 0. */
struct timeval ms_to_tv(int64_t ms);

/* stat of name (one name or a relative path) below the directory dir, looked up from dir's
 * descriptor held in *fd (O_PATH; opened here when *fd is -1): for a stat asked often, the
 * components of dir are not walked again each time. A lookup from the held descriptor that
 * fails is made again on the whole path dir/name, for dir may have been removed and made
 * again since it was opened; found that way, the held descriptor is closed, and the next call
 * opens dir again. With linked_ok, a name missing (ENOENT) from a held directory that is still
 * linked (st_nlink > 0) is taken as missing without that second lookup: for file systems
 * whose removed directories count no links (not cgroupfs). The caller closes *fd when it is
 * done. Returns stat's 0 or -1 (errno). */
struct stat;
int held_dir_stat(int *fd, const char *dir, const char *name, struct stat *sb, int linked_ok);

/* rm -rf path, deepest first, never following a symlink nor crossing into another file
 * system (a mount below path stays, with its mount point). 0 when path is gone (or was never
 * there), else -1 with errno of the first failure. */
int rmtree(const char *path);

/* Replaces path's content with data: written to path.tmp (mode for a new file), then renamed
 * over path, so that a reader sees the old content or the new one, never a part. sync: the
 * data is fsynced before the rename (it survives a power cut); without it a crash of the
 * process keeps it, a power cut may leave the old content, or none. 0, or -1 with errno
 * (path.tmp removed). */
int write_file_replace(const char *path, const void *data, size_t len, int sync, int mode);

/* 64-bit FNV-1a, for hashes that must be stable across runs and builds. */
#define FNV64_INIT 0xcbf29ce484222325ULL
uint64_t fnv64(uint64_t h, const void *buf, size_t len);
/* A fast 64-bit hash of buf (XXH3, from Debian's libxxhash-dev, inlined): for telling
 * whether bytes changed, not for anything an adversary controls. */
uint64_t hash_bytes(const void *buf, size_t len, uint64_t seed);

#endif
