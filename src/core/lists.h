/* lists.h — the string list and key/value list that the pod model, the config and the
 * other layers share. Every string is owned by the list that holds it (NULL when absent). */
#ifndef KLET_LISTS_H
#define KLET_LISTS_H

#include <stddef.h>

struct strv {
	char **v;
	size_t n;
};

struct kv {
	char *k;
	char *v;
};

struct kvlist {
	struct kv *items;
	size_t     n;
};

/* Frees a list's members and leaves it empty; the struct itself is the caller's. */
void strv_clear(struct strv *);
void kvlist_clear(struct kvlist *);
/* The value of key ("" for a key without one), or NULL when absent (or l or key is NULL). */
const char *kvlist_get(const struct kvlist *, const char *key);
/* Appends copies of key and value (a key given twice is kept twice). */
void kvlist_add(struct kvlist *, const char *key, const char *val);
/* Replaces the value of key (its first entry), or appends key and value when absent. */
void kvlist_set(struct kvlist *, const char *key, const char *val);

#endif
