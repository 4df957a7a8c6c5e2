/* containergc.c — see containergc.h. */
#include <stdlib.h>
#include <string.h>

#include "core/util.h"
#include "logic/containergc.h"

struct cgc_unit {
	size_t start, len; /* in the sorted array; len: instances left */
	int    gone;       /* removed whole (its pod's content may go) */
};

/* By unit (UID, name), newest first inside one; equal times keep the input order. */
static int
cgc_cmp_unit(const void *a, const void *b)
{
	const struct cgc_container *x = *(struct cgc_container *const *)a,
	                           *y = *(struct cgc_container *const *)b;
	int c;

	if ((c = strcmp(x->uid, y->uid)) != 0 || (c = strcmp(x->name, y->name)) != 0)
		return c;
	if (x->created_ms != y->created_ms)
		return x->created_ms > y->created_ms ? -1 : 1;
	return x < y ? -1 : x > y;
}

/* Newest first (the kubelet's byCreated). */
static int
cgc_cmp_created(const void *a, const void *b)
{
	const struct cgc_container *x = *(struct cgc_container *const *)a,
	                           *y = *(struct cgc_container *const *)b;

	if (x->created_ms != y->created_ms)
		return x->created_ms > y->created_ms ? -1 : 1;
	return x < y ? -1 : x > y;
}

/* removeOldestN on v[from..to) (newest first): each is chosen unless kept. */
static size_t
cgc_drop(struct cgc_container **v, size_t from, size_t to)
{
	size_t i, k = 0;

	for (i = from; i < to; i++)
		if (!v[i]->keep && !v[i]->remove) {
			v[i]->remove = 1;
			k++;
		}
	return k;
}

/* enforceMaxContainersPerEvictUnit: every unit left cut to max instances. */
static size_t
cgc_per_unit(struct cgc_container **v, struct cgc_unit *u, size_t nu, size_t max)
{
	size_t i, k = 0;

	for (i = 0; i < nu; i++)
		if (!u[i].gone && u[i].len > max) {
			k += cgc_drop(v, u[i].start + max, u[i].start + u[i].len);
			u[i].len = max;
		}
	return k;
}

size_t
cgc_select(const struct cgc_policy *p, struct cgc_container *c, size_t n, int64_t now_ms)
{
	struct cgc_container **v = n > 0 ? xcalloc(n, sizeof(*v)) : NULL;
	struct cgc_unit       *u = n > 0 ? xcalloc(n, sizeof(*u)) : NULL;
	size_t                 i, j, m = 0, nu = 0, live = 0, total = 0, chosen = 0;
	int64_t                newest = now_ms - (p->min_age_ms > 0 ? p->min_age_ms : 0);

	for (i = 0; i < n; i++) {
		c[i].remove = 0;
		if (c[i].created_ms <= newest) /* evictableContainers: older than MinAge */
			v[m++] = &c[i];
	}
	if (m > 0)
		qsort(v, m, sizeof(*v), cgc_cmp_unit);
	for (i = 0; i < m; i = j) {
		int all = 0;

		for (j = i; j < m && strcmp(v[j]->uid, v[i]->uid) == 0 &&
		     strcmp(v[j]->name, v[i]->name) == 0;
		     j++)
			all |= v[j]->remove_all;
		u[nu].start = i;
		u[nu].len = j - i;
		if (all) { /* a deleted or evicted pod, or a reclaim: every instance goes */
			chosen += cgc_drop(v, i, j);
			u[nu].gone = 1;
		}
		nu++;
	}
	if (p->max_per_container >= 0)
		chosen += cgc_per_unit(v, u, nu, (size_t)p->max_per_container);
	for (i = 0; i < nu; i++)
		if (!u[i].gone) {
			live++;
			total += u[i].len;
		}
	if (p->max_total >= 0 && total > (size_t)p->max_total) {
		size_t per = (size_t)p->max_total / live, k = 0;

		/* Leave an equal number per unit (at least 1) first. */
		chosen += cgc_per_unit(v, u, nu, per < 1 ? 1 : per);
		for (i = 0, total = 0; i < nu; i++)
			if (!u[i].gone)
				total += u[i].len;
		if (total > (size_t)p->max_total) { /* then the oldest across units */
			struct cgc_container **w = xcalloc(total, sizeof(*w));

			for (i = 0; i < nu; i++)
				for (j = 0; !u[i].gone && j < u[i].len; j++)
					w[k++] = v[u[i].start + j];
			qsort(w, k, sizeof(*w), cgc_cmp_created);
			chosen += cgc_drop(w, (size_t)p->max_total, k);
			free(w);
		}
	}
	free(u);
	free(v);
	return chosen;
}
