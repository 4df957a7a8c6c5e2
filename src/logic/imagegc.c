/* imagegc.c — see imagegc.h. */
#include <stdlib.h>
#include <string.h>

#include "core/util.h"
#include "logic/imagegc.h"

static int
igc_cmp_id(const void *a, const void *b)
{
	return strcmp(((const struct igc_record *)a)->id, ((const struct igc_record *)b)->id);
}

static struct igc_record *
igc_find(struct igc_record *recs, size_t n, const char *id)
{
	struct igc_record key = { .id = (char *)id };

	if (n == 0)
		return NULL;
	return bsearch(&key, recs, n, sizeof(*recs), igc_cmp_id);
}

void
igc_detect(struct igc_record **recs, size_t *n, const struct igc_image *imgs, size_t nimgs,
    int64_t now, int initial)
{
	struct igc_record *r = *recs;
	size_t             i, j, old = *n, cnt = *n;

	for (i = 0; i < old; i++)
		r[i].seen = 0;
	for (i = 0; i < nimgs; i++) {
		struct igc_record *x;

		if (imgs[i].id == NULL || imgs[i].id[0] == '\0')
			continue;
		x = igc_find(r, old, imgs[i].id);
		if (x == NULL) {
			/* Added after the old ones; sorted below. A duplicate id in one answer is
			 * looked for among the new ones too. */
			for (j = old; j < cnt; j++)
				if (strcmp(r[j].id, imgs[i].id) == 0)
					break;
			if (j == cnt) {
				r = xreallocarray(r, cnt + 1, sizeof(*r));
				memset(&r[cnt], 0, sizeof(*r));
				r[cnt].id = xstrdup(imgs[i].id);
				r[cnt].first_detected_ms = initial ? 0 : now;
				cnt++;
			}
			x = &r[j];
		}
		x->seen = 1;
		x->size = imgs[i].size;
		x->pinned = imgs[i].pinned;
		x->in_use = imgs[i].in_use;
		if (imgs[i].in_use)
			x->last_used_ms = now;
	}
	for (i = j = 0; i < cnt; i++) {
		if (!r[i].seen) {
			free(r[i].id);
			continue;
		}
		r[j++] = r[i];
	}
	if (j > 0)
		qsort(r, j, sizeof(*r), igc_cmp_id);
	if (j == 0) {
		free(r);
		r = NULL;
	}
	*recs = r;
	*n = j;
}

void
igc_records_free(struct igc_record *r, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		free(r[i].id);
	free(r);
}

int64_t
igc_amount_to_free(const struct igc_policy *p, int64_t capacity, int64_t available, int *usage_pct)
{
	int usage;

	if (capacity <= 0)
		return -1;
	if (available > capacity)
		available = capacity;
	if (available < 0)
		available = 0;
	/* The kubelet's integer arithmetic: 100 - available * 100 / capacity. */
	usage = 100 - (int)(available * 100 / capacity);
	if (usage_pct != NULL)
		*usage_pct = usage;
	if (p->high >= 100 || usage < p->high)
		return 0;
	return capacity * (100 - p->low) / 100 - available;
}

struct igc_order {
	const struct igc_record *r;
	size_t                   i;
};

static int
igc_cmp_lru(const void *a, const void *b)
{
	const struct igc_record *x = ((const struct igc_order *)a)->r,
	                        *y = ((const struct igc_order *)b)->r;

	if (x->last_used_ms != y->last_used_ms)
		return x->last_used_ms < y->last_used_ms ? -1 : 1;
	if (x->first_detected_ms != y->first_detected_ms)
		return x->first_detected_ms < y->first_detected_ms ? -1 : 1;
	return strcmp(x->id, y->id); /* a stable order for equal times */
}

size_t
igc_plan(const struct igc_policy *p, const struct igc_record *recs, size_t n, int64_t now,
    int64_t want, size_t *out, int64_t *freed)
{
	struct igc_order *o = n > 0 ? xcalloc(n, sizeof(*o)) : NULL;
	size_t            i, m = 0, k = 0;
	int64_t           sum = 0;

	for (i = 0; i < n; i++)
		if (!recs[i].pinned) {
			o[m].r = &recs[i];
			o[m++].i = i;
		}
	if (m > 0)
		qsort(o, m, sizeof(*o), igc_cmp_lru);
	for (i = 0; i < m && sum < want; i++) {
		const struct igc_record *r = o[i].r;

		/* Used at the last detection (the kubelet compares lastUsed with the time of
		 * its detection; a time in ms may be the same for a detection just before). */
		if (r->in_use)
			continue;
		if (now - r->first_detected_ms < p->min_age_ms)
			continue; /* maybe just pulled for a container about to start */
		out[k++] = o[i].i;
		sum += r->size;
	}
	free(o);
	if (freed != NULL)
		*freed = sum;
	return k;
}

size_t
igc_plan_age(const struct igc_policy *p, const struct igc_record *recs, size_t n, int64_t now,
    int64_t began, size_t *out)
{
	struct igc_order *o;
	size_t            i, m = 0, k = 0;

	if (p->max_age_ms <= 0 || now - began <= p->max_age_ms || n == 0)
		return 0; /* not before the manager has run that long: no record is that old */
	o = xcalloc(n, sizeof(*o));
	for (i = 0; i < n; i++)
		if (!recs[i].pinned && !recs[i].in_use) {
			o[m].r = &recs[i];
			o[m++].i = i;
		}
	if (m > 0)
		qsort(o, m, sizeof(*o), igc_cmp_lru);
	for (i = 0; i < m; i++) {
		const struct igc_record *r = o[i].r;
		int64_t ref = r->last_used_ms > 0 ? r->last_used_ms : r->first_detected_ms;

		if (now - ref > p->max_age_ms)
			out[k++] = o[i].i;
	}
	free(o);
	return k;
}

struct igc_by_size {
	const struct igc_listed *l;
	size_t                   i;
};

static int
igc_cmp_size(const void *a, const void *b)
{
	const struct igc_by_size *x = a, *y = b;

	if (x->l->size != y->l->size)
		return x->l->size > y->l->size ? -1 : 1;
	return x->i < y->i ? -1 : x->i > y->i;
}

size_t
igc_node_images(const struct igc_listed *imgs, size_t n, struct igc_node_image *out)
{
	struct igc_by_size *s = n > 0 ? xcalloc(n, sizeof(*s)) : NULL;
	size_t              i, j, k = 0;

	for (i = 0; i < n; i++) {
		s[i].l = &imgs[i];
		s[i].i = i;
	}
	if (n > 0)
		qsort(s, n, sizeof(*s), igc_cmp_size);
	for (i = 0; i < n && k < IGC_NODE_IMAGES_MAX; i++, k++) {
		const struct igc_listed *l = s[i].l;

		out[k].nnames = 0;
		out[k].size = l->size;
		for (j = 0; j < l->ndigests && out[k].nnames < IGC_NAMES_PER_IMAGE_MAX; j++)
			out[k].names[out[k].nnames++] = l->digests[j];
		for (j = 0; j < l->ntags && out[k].nnames < IGC_NAMES_PER_IMAGE_MAX; j++)
			out[k].names[out[k].nnames++] = l->tags[j];
	}
	free(s);
	return k;
}
