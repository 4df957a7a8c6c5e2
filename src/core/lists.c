/* lists.c — string lists and key/value lists (see lists.h). */
#include <stdlib.h>
#include <string.h>

#include "core/lists.h"

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
