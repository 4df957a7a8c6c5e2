/* kubeconfig.h — a kubeconfig file (clusters, users, contexts, current-context) reduced to
 * what a node agent needs to reach its API server, and the TLS context built from it.
 *
 * Relative file paths (certificate-authority, client-certificate, client-key, tokenFile) are
 * resolved against the kubeconfig's directory. *-data fields are base64 PEM. The token of
 * tokenFile is read at load time. insecure-skip-tls-verify is honoured only when set to true,
 * and then logged as a warning every time a TLS context is built.
 */
#ifndef KLET_KUBECONFIG_H
#define KLET_KUBECONFIG_H

#include <stddef.h>

struct ssl_ctx_st;

/* Plain data; every string owned (NULL when absent). */
struct kubeconfig {
	char  *context;         /* the context used (current-context) */
	char  *cluster;         /* its cluster's name */
	char  *user;            /* its user's name (NULL: no user) */
	char  *server;          /* https://host:port as written */
	char  *host;            /* from server: a name or an address (no brackets) */
	char  *port;            /* from server; "443" when absent */
	char  *tls_server_name; /* cluster.tls-server-name */
	char  *ca_file;         /* absolute path, or NULL */
	char  *ca_pem;          /* decoded certificate-authority-data, or NULL */
	size_t ca_pem_len;
	char  *cert_file;
	char  *cert_pem; /* decoded client-certificate-data */
	size_t cert_pem_len;
	char  *key_file;
	char  *key_pem; /* decoded client-key-data */
	size_t key_pem_len;
	char  *token;      /* token, or the contents of tokenFile (trimmed) */
	char  *token_file; /* absolute path, or NULL */
	int    insecure;   /* insecure-skip-tls-verify: true */
};

/* Reads and parses path. Returns the config (free with kubeconfig_free), or NULL with a
 * one-line reason in err naming the file and the field, e.g.
 * "/etc/kubeconfig: users[0].user.client-key-data: invalid base64". */
struct kubeconfig *kubeconfig_load(const char *path, char *err, size_t errlen);
/* The same from a buffer; dir resolves relative paths (NULL: the current directory).
 * Messages are prefixed with name (may be NULL). */
struct kubeconfig *kubeconfig_parse(
    const char *buf, size_t len, const char *dir, const char *name, char *err, size_t errlen);
/* NULL is a no-op. */
void kubeconfig_free(struct kubeconfig *);

/* A TLS client context: TLS 1.2 or later, the cluster's CA (or the system's when none is
 * given), peer verification unless insecure, the client certificate and key when given,
 * ALPN "h2". Host name / IP checks are done per connection by the caller (h2 with
 * tls_name). Returns a new SSL_CTX (caller frees with SSL_CTX_free), or NULL with the reason
 * in err. */
struct ssl_ctx_st *kubeconfig_ssl_ctx(const struct kubeconfig *, char *err, size_t errlen);

/* Decodes base64 (standard alphabet, padding optional, whitespace ignored). Returns a new
 * NUL-terminated buffer (caller frees) and sets *outlen, or NULL when the input is invalid. */
char *kubeconfig_base64_decode(const char *in, size_t inlen, size_t *outlen);

#endif
