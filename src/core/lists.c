/* lists.c — string lists and key/value lists (see lists.h). */
#include <stdlib.h>
#include <string.h>

#include "core/lists.h"
#include "core/util.h"

void
strv_clear(struct strv *sv)
{
	size_t i;

	for (i = 0; i < sv->n; i++)
		free(sv->v[i]);
	free(sv->v);
	sv->v = NULL;
	sv->n = 0;
}

void
kvlist_clear(struct kvlist *l)
{
	size_t i;

	for (i = 0; i < l->n; i++) {
		free(l->items[i].k);
		free(l->items[i].v);
	}
	free(l->items);
	l->items = NULL;
	l->n = 0;
}

const char *
kvlist_get(const struct kvlist *l, const char *key)
{
	size_t i;

	if (l == NULL || key == NULL)
		return NULL;
	for (i = 0; i < l->n; i++)
		if (l->items[i].k != NULL && strcmp(l->items[i].k, key) == 0)
			return l->items[i].v != NULL ? l->items[i].v : "";
	return NULL;
}

void
kvlist_add(struct kvlist *l, const char *key, const char *val)
{
	l->items = xreallocarray(l->items, l->n + 1, sizeof(*l->items));
	l->items[l->n].k = xstrdup(key);
	l->items[l->n].v = xstrdup(val);
	l->n++;
}

void
kvlist_set(struct kvlist *l, const char *key, const char *val)
{
	size_t i;

	for (i = 0; i < l->n; i++) {
		if (l->items[i].k != NULL && strcmp(l->items[i].k, key) == 0) {
			free(l->items[i].v);
			l->items[i].v = xstrdup(val);
			return;
		}
	}
	kvlist_add(l, key, val);
}
