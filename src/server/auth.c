/* auth.c — authorization attributes and the webhook answer cache (see auth.h). */
#include <stdlib.h>
#include <string.h>

#include "core/util.h"
#include "server/auth.h"

int
auth_is_subpath(const char *path, const char *base)
{
	size_t n = strlen(base);

	while (n > 0 && base[n - 1] == '/')
		n--;
	return strncmp(path, base, n) == 0 && (path[n] == '\0' || path[n] == '/');
}

void
auth_attributes(const char *method, const char *path, struct auth_attrs *out)
{
	static const struct {
		const char *method, *verb;
	} verbs[] = { { "POST", "create" }, { "GET", "get" }, { "PUT", "update" },
		{ "PATCH", "patch" }, { "DELETE", "delete" } };
	size_t i;

	out->verb = "";
	for (i = 0; i < nitems(verbs); i++)
		if (strcmp(method, verbs[i].method) == 0)
			out->verb = verbs[i].verb;
	if (auth_is_subpath(path, "/stats"))
		out->subresource = "stats";
	else if (auth_is_subpath(path, "/metrics"))
		out->subresource = "metrics";
	else if (auth_is_subpath(path, "/logs/"))
		out->subresource = "log";
	else
		out->subresource = "proxy";
}

struct auth_entry {
	char   *key;
	char   *text;
	int     ok;
	int64_t expires_ms;
	int64_t added;
};

struct auth_cache {
	struct auth_entry *v;
	size_t             n, alloc, max; /* v grows as entries come, up to max */
	int64_t            seq;
};

struct auth_cache *
auth_cache_new(size_t max)
{
	struct auth_cache *c = xcalloc(1, sizeof(*c));

	c->max = max > 0 ? max : 1;
	return c;
}

void
auth_cache_free(struct auth_cache *c)
{
	size_t i;

	if (c == NULL)
		return;
	for (i = 0; i < c->n; i++) {
		free(c->v[i].key);
		free(c->v[i].text);
	}
	free(c->v);
	free(c);
}

int
auth_cache_get(struct auth_cache *c, const char *key, int64_t now_ms, int *ok, const char **text)
{
	size_t i;

	for (i = 0; i < c->n; i++) {
		if (strcmp(c->v[i].key, key) != 0)
			continue;
		if (c->v[i].expires_ms <= now_ms)
			return 0;
		*ok = c->v[i].ok;
		*text = c->v[i].text;
		return 1;
	}
	return 0;
}

void
auth_cache_put(struct auth_cache *c, const char *key, int ok, const char *text, int64_t expires_ms)
{
	struct auth_entry *e = NULL;
	size_t             i, old = 0;

	for (i = 0; i < c->n; i++)
		if (strcmp(c->v[i].key, key) == 0)
			e = &c->v[i];
	if (e == NULL && c->n < c->max) {
		if (c->n == c->alloc) {
			c->alloc = c->alloc == 0 ? 4 : c->alloc * 2;
			if (c->alloc > c->max)
				c->alloc = c->max;
			c->v = xreallocarray(c->v, c->alloc, sizeof(*c->v));
		}
		e = &c->v[c->n++];
		memset(e, 0, sizeof(*e));
	}
	if (e == NULL) { /* full: replace the oldest */
		for (i = 1; i < c->n; i++)
			if (c->v[i].added < c->v[old].added)
				old = i;
		e = &c->v[old];
	}
	if (e->key == NULL || strcmp(e->key, key) != 0) {
		free(e->key);
		e->key = xstrdup(key);
	}
	free(e->text);
	e->text = xstrdup(text != NULL ? text : "");
	e->ok = ok;
	e->expires_ms = expires_ms;
	e->added = ++c->seq;
}
