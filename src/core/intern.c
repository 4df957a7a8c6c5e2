/* intern.c — the string table (see intern.h): open addressing with linear probing, keyed
 * by the string's hash; each entry is one allocation: its count, hash and bytes. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "core/intern.h"
#include "core/log.h"
#include "core/util.h"

struct in_entry {
	uint32_t refs;
	uint32_t hash;
	char     s[];
};

static struct in_entry **in_slots; /* in_cap slots, a power of two; NULL: empty */
static size_t            in_cap, in_n, in_bytes;

static uint32_t
in_hash(const char *s, size_t len)
{
	uint64_t h = fnv64(1469598103934665603ULL, s, len);

	return (uint32_t)(h ^ (h >> 32));
}

static struct in_entry *
in_entry_of(const char *p)
{
	return (struct in_entry *)(void *)(p - offsetof(struct in_entry, s));
}

static void
in_place(struct in_entry **slots, size_t cap, struct in_entry *e)
{
	size_t i = e->hash & (cap - 1);

	while (slots[i] != NULL)
		i = (i + 1) & (cap - 1);
	slots[i] = e;
}

/* Keeps the load under 3/4 and over 1/8 (the table is freed when the last string goes). */
static void
in_resize(size_t cap)
{
	struct in_entry **slots = NULL;
	size_t            i;

	if (cap > 0) {
		slots = xcalloc(cap, sizeof(*slots));
		for (i = 0; i < in_cap; i++)
			if (in_slots[i] != NULL)
				in_place(slots, cap, in_slots[i]);
	}
	free(in_slots);
	in_slots = slots;
	in_cap = cap;
}

char *
intern_n(const char *s, size_t len)
{
	struct in_entry *e;
	uint32_t         h;
	size_t           i;

	if (s == NULL)
		return NULL;
	h = in_hash(s, len);
	if (in_cap > 0) {
		for (i = h & (in_cap - 1); (e = in_slots[i]) != NULL; i = (i + 1) & (in_cap - 1)) {
			if (e->hash == h && strncmp(e->s, s, len) == 0 && e->s[len] == '\0') {
				if (e->refs == UINT32_MAX)
					fatalx("%s: reference count overflow", __func__);
				e->refs++;
				return e->s;
			}
		}
	}
	if ((in_n + 1) * 4 > in_cap * 3)
		in_resize(in_cap == 0 ? 64 : in_cap * 2);
	e = xmalloc(sizeof(*e) + len + 1);
	e->refs = 1;
	e->hash = h;
	memcpy(e->s, s, len);
	e->s[len] = '\0';
	in_place(in_slots, in_cap, e);
	in_n++;
	in_bytes += sizeof(*e) + len + 1;
	return e->s;
}

char *
intern(const char *s)
{
	return s != NULL ? intern_n(s, strlen(s)) : NULL;
}

char *
intern_ref(const char *p)
{
	struct in_entry *e;

	if (p == NULL)
		return NULL;
	e = in_entry_of(p);
	if (e->refs == 0 || e->refs == UINT32_MAX)
		fatalx("%s: bad reference count %u", __func__, e->refs);
	e->refs++;
	return e->s;
}

void
intern_drop(const char *p)
{
	struct in_entry *e, *m;
	size_t           i, j, k;

	if (p == NULL)
		return;
	e = in_entry_of(p);
	if (e->refs == 0)
		fatalx("%s: string dropped once too often", __func__);
	if (--e->refs > 0)
		return;
	for (i = e->hash & (in_cap - 1); in_slots[i] != e; i = (i + 1) & (in_cap - 1))
		if (in_slots[i] == NULL)
			fatalx("%s: string not in the table", __func__);
	/* Backward shift: later entries of the probe run move into the hole when their home
	 * slot does not lie (cyclically) between the hole and them. */
	in_slots[i] = NULL;
	for (j = (i + 1) & (in_cap - 1); (m = in_slots[j]) != NULL; j = (j + 1) & (in_cap - 1)) {
		k = m->hash & (in_cap - 1);
		if (i <= j ? (i < k && k <= j) : (i < k || k <= j))
			continue;
		in_slots[i] = m;
		in_slots[j] = NULL;
		i = j;
	}
	in_n--;
	in_bytes -= sizeof(*e) + strlen(e->s) + 1;
	free(e);
	if (in_n == 0)
		in_resize(0);
	else if (in_cap > 64 && in_n * 8 < in_cap)
		in_resize(in_cap / 2);
}

size_t
intern_count(void)
{
	return in_n;
}

size_t
intern_bytes(void)
{
	return in_bytes + in_cap * sizeof(*in_slots);
}
