/* intern.h — one shared, reference-counted copy of strings that many objects hold alike
 * (namespaces, image names and references, label and annotation keys, container names, the
 * runtime's reasons, and the IDs and UIDs that PLEG and the pod cache both keep).
 *
 * intern(s) returns the shared copy of s, taking one reference; intern_drop(p) gives one
 * back and frees the copy with the last one. Both are NULL-safe (intern(NULL) is NULL). An
 * interned string is never written and never passed to free(): the struct fields that hold
 * one say so in their header. One thread (the loop's).
 */
#ifndef KLET_INTERN_H
#define KLET_INTERN_H

#include <stddef.h>

/* Returns the shared copy of s (a new reference), or NULL for NULL. Never fails. */
char *intern(const char *s);
/* The same for the len bytes at s (no NUL needed). */
char *intern_n(const char *s, size_t len);
/* A new reference to p, which intern() returned (NULL: NULL). */
char *intern_ref(const char *p);
/* Gives back one reference to p (NULL: no-op); frees it with the last one. */
void intern_drop(const char *p);

/* Distinct strings held now, and the bytes they take (for podctl status and tests). */
size_t intern_count(void);
size_t intern_bytes(void);

#endif
