/* strindex.c — string keys to array positions: hashes and positions, open addressing. */
#include <stdlib.h>
#include <string.h>

#include "core/log.h"
#include "core/strindex.h"
#include "core/util.h"

struct strindex {
	uint64_t *si_hash;
	uint32_t *si_pos; /* position + 1; 0: an empty slot */
	size_t    si_mask;
	size_t    si_n;
};

static size_t
si_slot(uint64_t h, size_t mask)
{
	return (size_t)(h ^ (h >> 29)) & mask;
}

static void
si_put(struct strindex *x, uint64_t h, uint32_t pos1)
{
	size_t s = si_slot(h, x->si_mask);

	while (x->si_pos[s] != 0)
		s = (s + 1) & x->si_mask;
	x->si_hash[s] = h;
	x->si_pos[s] = pos1;
}

/* Doubles the table, re-placing what it holds from the stored hashes. */
static void
si_grow(struct strindex *x)
{
	struct strindex old = *x;
	size_t          i, size = old.si_pos != NULL ? 2 * (old.si_mask + 1) : 64;

	x->si_hash = xcalloc(size, sizeof(*x->si_hash));
	x->si_pos = xcalloc(size, sizeof(*x->si_pos));
	x->si_mask = size - 1;
	for (i = 0; old.si_pos != NULL && i <= old.si_mask; i++)
		if (old.si_pos[i] != 0)
			si_put(x, old.si_hash[i], old.si_pos[i]);
	free(old.si_hash);
	free(old.si_pos);
}

void
strindex_reset(struct strindex *x)
{
	if (x->si_pos != NULL)
		memset(x->si_pos, 0, (x->si_mask + 1) * sizeof(*x->si_pos));
	x->si_n = 0;
}

struct strindex *
strindex_new(void)
{
	return xcalloc(1, sizeof(struct strindex));
}

void
strindex_free(struct strindex *x)
{
	if (x == NULL)
		return;
	free(x->si_hash);
	free(x->si_pos);
	free(x);
}

void
strindex_add(struct strindex *x, const char *key, size_t pos)
{
	if (pos >= UINT32_MAX)
		fatalx("%s: position %zu out of range", __func__, pos);
	if (x->si_pos == NULL || 2 * (x->si_n + 1) > x->si_mask + 1)
		si_grow(x);
	si_put(x, hash_bytes(key, strlen(key), 0), (uint32_t)pos + 1);
	x->si_n++;
}

size_t
strindex_find(const struct strindex *x, const char                 *key,
    const char *(*key_at)(const void *arg, size_t pos), const void *arg)
{
	uint64_t h;
	size_t   s;

	if (x->si_n == 0 || key == NULL)
		return STRINDEX_NONE;
	h = hash_bytes(key, strlen(key), 0);
	for (s = si_slot(h, x->si_mask); x->si_pos[s] != 0; s = (s + 1) & x->si_mask) {
		size_t pos = x->si_pos[s] - 1;

		if (x->si_hash[s] == h && strcmp(key_at(arg, pos), key) == 0)
			return pos;
	}
	return STRINDEX_NONE;
}
