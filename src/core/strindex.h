/* strindex.h — finds an element of an array by its string key (a pod UID) in constant time.
 *
 * The index maps a key's hash to array positions (open addressing, at most half full); it
 * keeps no key, only hashes and positions, so the owner's array stays the one place that
 * holds the data and the index costs 12 bytes a slot. The owner adds each element it
 * appends (strindex_add) and rebuilds the index when positions move (strindex_reset, then
 * strindex_add for each), which owners do only when elements leave. A lookup confirms a
 * candidate through the owner's key function, so two keys of one hash never mix.
 */
#ifndef KLET_STRINDEX_H
#define KLET_STRINDEX_H

#include <stddef.h>
#include <stdint.h>

struct strindex;

#define STRINDEX_NONE ((size_t)-1)

/* A new, empty index. Never NULL. */
struct strindex *strindex_new(void);
/* NULL is a no-op. */
void strindex_free(struct strindex *);
/* Empties the index (its tables are kept for the adds that follow). */
void strindex_reset(struct strindex *);
/* Records that the element at pos has key. */
void strindex_add(struct strindex *, const char *key, size_t pos);
/* The position of the element whose key is key, or STRINDEX_NONE. key_at(arg, pos) gives
 * the key of the element at pos. */
size_t strindex_find(const struct strindex *, const char           *key,
    const char *(*key_at)(const void *arg, size_t pos), const void *arg);

#endif
