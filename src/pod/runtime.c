/* runtime.c — helpers for the runtime status model (runtime.h). */
#include <stdint.h>
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

/* The copies and clears below take how a string is copied and given back: xstrdup / free
 * for plain copies, intern / intern_drop for the pod cache's. */
typedef char *(*rt_dup_fn)(const char *);
typedef void (*rt_drop_fn)(const char *);

static void
rt_free_str(const char *p)
{
	free((char *)(uintptr_t)p);
}

static void
rt_container_clear_with(struct rt_container *c, rt_drop_fn drop)
{
	drop(c->id);
	drop(c->name);
	drop(c->sandbox_id);
	drop(c->reason);
	drop(c->message);
	drop(c->image);
	drop(c->image_ref);
	memset(c, 0, sizeof(*c));
}

static void
rt_sandbox_clear_with(struct rt_sandbox *s, rt_drop_fn drop)
{
	size_t i;

	drop(s->id);
	drop(s->ip);
	for (i = 0; i < s->nextra_ips; i++)
		drop(s->extra_ips[i]);
	free(s->extra_ips);
	memset(s, 0, sizeof(*s));
}

static void
rt_pod_status_clear_with(struct rt_pod_status *st, rt_drop_fn drop)
{
	size_t i;

	if (st == NULL)
		return;
	for (i = 0; i < st->nsandboxes; i++)
		rt_sandbox_clear_with(&st->sandboxes[i], drop);
	free(st->sandboxes);
	for (i = 0; i < st->ncontainers; i++)
		rt_container_clear_with(&st->containers[i], drop);
	free(st->containers);
	drop(st->uid);
	drop(st->name);
	drop(st->ns);
	memset(st, 0, sizeof(*st));
}

void
rt_container_clear(struct rt_container *c)
{
	if (c != NULL)
		rt_container_clear_with(c, rt_free_str);
}

void
rt_sandbox_clear(struct rt_sandbox *s)
{
	if (s != NULL)
		rt_sandbox_clear_with(s, rt_free_str);
}

void
rt_pod_status_clear(struct rt_pod_status *st)
{
	rt_pod_status_clear_with(st, rt_free_str);
}

void
rt_pod_status_clear_interned(struct rt_pod_status *st)
{
	rt_pod_status_clear_with(st, intern_drop);
}

static void
rt_container_copy(struct rt_container *d, const struct rt_container *s, rt_dup_fn dup)
{
	*d = *s;
	d->id = dup(s->id);
	d->name = dup(s->name);
	d->sandbox_id = dup(s->sandbox_id);
	d->reason = dup(s->reason);
	d->message = dup(s->message);
	d->image = dup(s->image);
	d->image_ref = dup(s->image_ref);
}

static void
rt_sandbox_copy(struct rt_sandbox *d, const struct rt_sandbox *s, rt_dup_fn dup)
{
	size_t i;

	*d = *s;
	d->id = dup(s->id);
	d->ip = dup(s->ip);
	d->extra_ips = NULL;
	if (s->nextra_ips > 0) {
		d->extra_ips = xcalloc(s->nextra_ips, sizeof(*d->extra_ips));
		for (i = 0; i < s->nextra_ips; i++)
			d->extra_ips[i] = dup(s->extra_ips[i]);
	}
}

static void
rt_pod_status_copy_with(struct rt_pod_status *dst, const struct rt_pod_status *src, rt_dup_fn dup)
{
	size_t i;

	memset(dst, 0, sizeof(*dst));
	dst->uid = dup(src->uid);
	dst->name = dup(src->name);
	dst->ns = dup(src->ns);
	dst->timestamp = src->timestamp;
	if (src->nsandboxes > 0) {
		dst->sandboxes = xcalloc(src->nsandboxes, sizeof(*dst->sandboxes));
		for (i = 0; i < src->nsandboxes; i++)
			rt_sandbox_copy(&dst->sandboxes[i], &src->sandboxes[i], dup);
		dst->nsandboxes = src->nsandboxes;
	}
	if (src->ncontainers > 0) {
		dst->containers = xcalloc(src->ncontainers, sizeof(*dst->containers));
		for (i = 0; i < src->ncontainers; i++)
			rt_container_copy(&dst->containers[i], &src->containers[i], dup);
		dst->ncontainers = src->ncontainers;
	}
}

void
rt_pod_status_copy(struct rt_pod_status *dst, const struct rt_pod_status *src)
{
	rt_pod_status_copy_with(dst, src, xstrdup);
}

void
rt_pod_status_intern(struct rt_pod_status *dst, const struct rt_pod_status *src)
{
	rt_pod_status_copy_with(dst, src, intern);
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
