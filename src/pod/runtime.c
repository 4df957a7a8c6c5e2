/* runtime.c — helpers for the runtime status model (runtime.h). */
#include <stdlib.h>
#include <string.h>

#include "core/intern.h"
#include "pod/runtime.h"
#include "core/util.h"

const struct rt_container *
rt_find_container(const struct rt_pod_status *st, const char *name)
{
	const struct rt_container *best = NULL;
	size_t                     i;

	if (st == NULL || name == NULL)
		return NULL;
	/* Newest first when sorted; compare anyway so an unsorted status also works. */
	for (i = 0; i < st->ncontainers; i++) {
		const struct rt_container *c = &st->containers[i];

		if (c->name == NULL || strcmp(c->name, name) != 0)
			continue;
		if (best == NULL || c->created_at > best->created_at)
			best = c;
	}
	return best;
}

void
rt_container_clear(struct rt_container *c)
{
	if (c == NULL)
		return;
	free(c->id);
	free(c->name);
	free(c->sandbox_id);
	free(c->reason);
	free(c->message);
	free(c->image);
	free(c->image_ref);
	memset(c, 0, sizeof(*c));
}

void
rt_sandbox_clear(struct rt_sandbox *s)
{
	size_t i;

	if (s == NULL)
		return;
	free(s->id);
	free(s->ip);
	for (i = 0; i < s->nextra_ips; i++)
		free(s->extra_ips[i]);
	free(s->extra_ips);
	memset(s, 0, sizeof(*s));
}

void
rt_pod_status_clear(struct rt_pod_status *st)
{
	size_t i;

	if (st == NULL)
		return;
	for (i = 0; i < st->nsandboxes; i++)
		rt_sandbox_clear(&st->sandboxes[i]);
	free(st->sandboxes);
	for (i = 0; i < st->ncontainers; i++)
		rt_container_clear(&st->containers[i]);
	free(st->containers);
	free(st->uid);
	free(st->name);
	free(st->ns);
	memset(st, 0, sizeof(*st));
}

static void
rt_container_copy(struct rt_container *d, const struct rt_container *s)
{
	*d = *s;
	d->id = xstrdup(s->id);
	d->name = xstrdup(s->name);
	d->sandbox_id = xstrdup(s->sandbox_id);
	d->reason = xstrdup(s->reason);
	d->message = xstrdup(s->message);
	d->image = xstrdup(s->image);
	d->image_ref = xstrdup(s->image_ref);
}

static void
rt_sandbox_copy(struct rt_sandbox *d, const struct rt_sandbox *s)
{
	size_t i;

	*d = *s;
	d->id = xstrdup(s->id);
	d->ip = xstrdup(s->ip);
	d->extra_ips = NULL;
	if (s->nextra_ips > 0) {
		d->extra_ips = xcalloc(s->nextra_ips, sizeof(*d->extra_ips));
		for (i = 0; i < s->nextra_ips; i++)
			d->extra_ips[i] = xstrdup(s->extra_ips[i]);
	}
}

void
rt_pod_status_copy(struct rt_pod_status *dst, const struct rt_pod_status *src)
{
	size_t i;

	memset(dst, 0, sizeof(*dst));
	dst->uid = xstrdup(src->uid);
	dst->name = xstrdup(src->name);
	dst->ns = xstrdup(src->ns);
	dst->timestamp = src->timestamp;
	if (src->nsandboxes > 0) {
		dst->sandboxes = xcalloc(src->nsandboxes, sizeof(*dst->sandboxes));
		for (i = 0; i < src->nsandboxes; i++)
			rt_sandbox_copy(&dst->sandboxes[i], &src->sandboxes[i]);
		dst->nsandboxes = src->nsandboxes;
	}
	if (src->ncontainers > 0) {
		dst->containers = xcalloc(src->ncontainers, sizeof(*dst->containers));
		for (i = 0; i < src->ncontainers; i++)
			rt_container_copy(&dst->containers[i], &src->containers[i]);
		dst->ncontainers = src->ncontainers;
	}
}

void
rt_pod_status_intern(struct rt_pod_status *dst, const struct rt_pod_status *src)
{
	size_t i, j;

	memset(dst, 0, sizeof(*dst));
	dst->uid = intern(src->uid);
	dst->name = intern(src->name);
	dst->ns = intern(src->ns);
	dst->timestamp = src->timestamp;
	if (src->nsandboxes > 0) {
		dst->sandboxes = xcalloc(src->nsandboxes, sizeof(*dst->sandboxes));
		for (i = 0; i < src->nsandboxes; i++) {
			const struct rt_sandbox *s = &src->sandboxes[i];
			struct rt_sandbox       *d = &dst->sandboxes[i];

			*d = *s;
			d->id = intern(s->id);
			d->ip = intern(s->ip);
			d->extra_ips = NULL;
			if (s->nextra_ips > 0) {
				d->extra_ips = xcalloc(s->nextra_ips, sizeof(*d->extra_ips));
				for (j = 0; j < s->nextra_ips; j++)
					d->extra_ips[j] = intern(s->extra_ips[j]);
			}
		}
		dst->nsandboxes = src->nsandboxes;
	}
	if (src->ncontainers > 0) {
		dst->containers = xcalloc(src->ncontainers, sizeof(*dst->containers));
		for (i = 0; i < src->ncontainers; i++) {
			const struct rt_container *s = &src->containers[i];
			struct rt_container       *d = &dst->containers[i];

			*d = *s;
			d->id = intern(s->id);
			d->name = intern(s->name);
			d->sandbox_id = intern(s->sandbox_id);
			d->reason = intern(s->reason);
			d->message = intern(s->message);
			d->image = intern(s->image);
			d->image_ref = intern(s->image_ref);
		}
		dst->ncontainers = src->ncontainers;
	}
}

void
rt_pod_status_clear_interned(struct rt_pod_status *st)
{
	size_t i, j;

	if (st == NULL)
		return;
	for (i = 0; i < st->nsandboxes; i++) {
		struct rt_sandbox *s = &st->sandboxes[i];

		intern_drop(s->id);
		intern_drop(s->ip);
		for (j = 0; j < s->nextra_ips; j++)
			intern_drop(s->extra_ips[j]);
		free(s->extra_ips);
	}
	free(st->sandboxes);
	for (i = 0; i < st->ncontainers; i++) {
		struct rt_container *c = &st->containers[i];

		intern_drop(c->id);
		intern_drop(c->name);
		intern_drop(c->sandbox_id);
		intern_drop(c->reason);
		intern_drop(c->message);
		intern_drop(c->image);
		intern_drop(c->image_ref);
	}
	free(st->containers);
	intern_drop(st->uid);
	intern_drop(st->name);
	intern_drop(st->ns);
	memset(st, 0, sizeof(*st));
}

static int
rt_cmp_sandbox(const void *a, const void *b)
{
	const struct rt_sandbox *x = a, *y = b;

	if (x->created_at != y->created_at)
		return x->created_at > y->created_at ? -1 : 1;
	if (x->attempt != y->attempt)
		return x->attempt > y->attempt ? -1 : 1;
	return strcmp(x->id != NULL ? x->id : "", y->id != NULL ? y->id : "");
}

static int
rt_cmp_container(const void *a, const void *b)
{
	const struct rt_container *x = a, *y = b;

	if (x->created_at != y->created_at)
		return x->created_at > y->created_at ? -1 : 1;
	if (x->restart_count != y->restart_count)
		return x->restart_count > y->restart_count ? -1 : 1;
	return strcmp(x->id != NULL ? x->id : "", y->id != NULL ? y->id : "");
}

void
rt_pod_status_sort(struct rt_pod_status *st)
{
	if (st->nsandboxes > 1)
		qsort(st->sandboxes, st->nsandboxes, sizeof(*st->sandboxes), rt_cmp_sandbox);
	if (st->ncontainers > 1)
		qsort(st->containers, st->ncontainers, sizeof(*st->containers), rt_cmp_container);
}
