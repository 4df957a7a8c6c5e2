/* auth.h — the kubelet API's authorization attributes and the webhook caches (the kubelet's
 * pkg/kubelet/server/auth.go and the apiserver's cached webhook authenticator/authorizer).
 */
#ifndef KLET_SERVER_AUTH_H
#define KLET_SERVER_AUTH_H

#include <stddef.h>
#include <stdint.h>

/* What a request asks for: verb from the method (GET get, POST create, PUT update, PATCH
 * patch, DELETE delete, else ""), resource nodes, subresource stats for /stats and below,
 * metrics for /metrics..., log for /logs..., proxy for everything else (exec, attach,
 * portForward, run, containerLogs, pods, healthz...). Static strings. */
struct auth_attrs {
	const char *verb;
	const char *subresource;
};
void auth_attributes(const char *method, const char *path, struct auth_attrs *out);
/* 1 when path is base or below it (the kubelet's isSubpath). */
int auth_is_subpath(const char *path, const char *base);

/* A small cache of answers: key -> (ok, text), each with its own expiry; at most max
 * entries (the oldest go first). */
struct auth_cache;
struct auth_cache *auth_cache_new(size_t max);
void               auth_cache_free(struct auth_cache *);
/* 1 and *ok / *text (owned by the cache, valid until the next put) on a live hit, else 0. */
int auth_cache_get(
    struct auth_cache *, const char *key, int64_t now_ms, int *ok, const char **text);
void auth_cache_put(
    struct auth_cache *, const char *key, int ok, const char *text, int64_t expires_ms);

#endif
