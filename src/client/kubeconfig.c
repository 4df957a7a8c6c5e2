/* kubeconfig.c — kubeconfig parsing (through the json DOM's YAML reader) and its TLS context. */
#include <sys/stat.h>

#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/json.h"
#include "client/kubeconfig.h"
#include "core/log.h"
#include "core/ossl.h"
#include "core/util.h"

#define KC_MAX_FILE (4 * 1024 * 1024)

/* Reads a whole (small) file. Returns a NUL-terminated buffer (caller frees), or NULL with
 * errno set. */
static char *
kc_read_file(const char *path, size_t max, size_t *lenp)
{
	struct stat st;
	char       *buf;
	size_t      off = 0;
	int         fd;

	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd == -1)
		return NULL;
	if (fstat(fd, &st) == -1 || !S_ISREG(st.st_mode) || (size_t)st.st_size > max) {
		if (errno == 0 || S_ISREG(st.st_mode))
			errno = EFBIG;
		else
			errno = EINVAL;
		close(fd);
		return NULL;
	}
	buf = xmalloc((size_t)st.st_size + 1);
	while (off < (size_t)st.st_size) {
		ssize_t n = read(fd, buf + off, (size_t)st.st_size - off);

		if (n == -1 && errno == EINTR)
			continue;
		if (n <= 0)
			break;
		off += (size_t)n;
	}
	close(fd);
	buf[off] = '\0';
	if (lenp != NULL)
		*lenp = off;
	return buf;
}

char *
kubeconfig_base64_decode(const char *in, size_t inlen, size_t *outlen)
{
	static const char alpha[] =
	    "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
	char    *out = xmalloc(inlen / 4 * 3 + 4);
	uint32_t acc = 0;
	size_t   i, n = 0, bits = 0, pad = 0;

	for (i = 0; i < inlen; i++) {
		unsigned char c = (unsigned char)in[i];
		const char   *p;

		if (isspace(c))
			continue;
		if (c == '=') {
			pad++;
			continue;
		}
		if (pad > 0 || c == '\0' || (p = strchr(alpha, c)) == NULL)
			goto bad;
		acc = (acc << 6) | (uint32_t)(p - alpha);
		bits += 6;
		if (bits >= 8) {
			bits -= 8;
			out[n++] = (char)((acc >> bits) & 0xff);
		}
	}
	/* Leftover bits must be zero padding of a 2- or 3-char final group. */
	if (pad > 2 || bits >= 6 || (acc & ((1u << bits) - 1)) != 0)
		goto bad;
	out[n] = '\0';
	if (outlen != NULL)
		*outlen = n;
	return out;
bad:
	free(out);
	return NULL;
}

struct kc_parse {
	const char *name; /* for messages */
	const char *dir;
	char       *err;
	size_t      errlen;
};

static void kc_err(struct kc_parse *p, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static void
kc_err(struct kc_parse *p, const char *fmt, ...)
{
	char    msg[400];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	if (p->name != NULL)
		snprintf(p->err, p->errlen, "%s: %s", p->name, msg);
	else
		snprintf(p->err, p->errlen, "%s", msg);
}

/* Finds the entry named name in a list of {name, KEY: {...}}; *idx gets its index.
 * Returns the inner object (KEY), or NULL. */
static const struct json *
kc_find_named(const struct json *list, const char *key, const char *name, size_t *idx)
{
	size_t i;

	for (i = 0; i < json_len(list); i++) {
		const struct json *e = json_index(list, i);
		const char        *n = json_str(json_get(e, "name"));

		if (n != NULL && strcmp(n, name) == 0) {
			*idx = i;
			return json_get(e, key);
		}
	}
	return NULL;
}

/* Fetches an optional string field; -1 (err set) when present but not a string. */
static int
kc_str(struct kc_parse *p, const struct json *obj, const char *field, const char *where,
    const char **out)
{
	const struct json *v = json_get(obj, field);

	*out = NULL;
	if (v == NULL || json_type(v) == JSON_NULL)
		return 0;
	if (json_type(v) != JSON_STRING && !json_is_yaml_plain(v)) {
		kc_err(p, "%s.%s: expected a string, got %s", where, field,
		    json_type_name(json_type(v)));
		return -1;
	}
	*out = json_text(v);
	if (*out != NULL && **out == '\0')
		*out = NULL;
	return 0;
}

static char *
kc_path(struct kc_parse *p, const char *f)
{
	if (f[0] == '/' || p->dir == NULL)
		return xstrdup(f);
	return xsprintf("%s/%s", p->dir, f);
}

/* Reads a path field and its -data twin into *file / *pem. */
static int
kc_pem_field(struct kc_parse *p, const struct json *obj, const char *where, const char *field,
    char **file, char **pem, size_t *pemlen)
{
	char        datafield[64];
	const char *f, *d;

	snprintf(datafield, sizeof(datafield), "%s-data", field);
	if (kc_str(p, obj, field, where, &f) == -1 || kc_str(p, obj, datafield, where, &d) == -1)
		return -1;
	if (d != NULL) {
		*pem = kubeconfig_base64_decode(d, strlen(d), pemlen);
		if (*pem == NULL) {
			kc_err(p, "%s.%s: invalid base64", where, datafield);
			return -1;
		}
		if (strstr(*pem, "-----BEGIN ") == NULL) {
			kc_err(p, "%s.%s: not PEM data", where, datafield);
			return -1;
		}
	} else if (f != NULL) {
		*file = kc_path(p, f);
		if (access(*file, R_OK) == -1) {
			kc_err(p, "%s.%s: %s: %s", where, field, *file, strerror(errno));
			return -1;
		}
	}
	return 0;
}

/* Splits https://host:port[/path] into host and port. */
static int
kc_parse_server(struct kc_parse *p, struct kubeconfig *kc, const char *where)
{
	const char *s = kc->server, *h, *end, *colon;

	if (strncmp(s, "https://", 8) != 0) {
		kc_err(p, "%s.server: \"%s\": only https:// servers are supported", where, s);
		return -1;
	}
	h = s + 8;
	end = h + strcspn(h, "/?#");
	if (*h == '[') {
		const char *rb = memchr(h, ']', (size_t)(end - h));

		if (rb == NULL) {
			kc_err(p, "%s.server: \"%s\": unbalanced [", where, s);
			return -1;
		}
		kc->host = xstrndup(h + 1, (size_t)(rb - h - 1));
		colon = rb + 1 < end && rb[1] == ':' ? rb + 1 : NULL;
	} else {
		colon = memchr(h, ':', (size_t)(end - h));
		kc->host = xstrndup(h, (size_t)((colon != NULL ? colon : end) - h));
	}
	if (*kc->host == '\0') {
		kc_err(p, "%s.server: \"%s\": no host", where, s);
		return -1;
	}
	if (colon != NULL) {
		const char *q;

		kc->port = xstrndup(colon + 1, (size_t)(end - colon - 1));
		for (q = kc->port; *q != '\0'; q++)
			if (!isdigit((unsigned char)*q))
				break;
		if (*kc->port == '\0' || *q != '\0' || atoi(kc->port) < 1 ||
		    atoi(kc->port) > 65535) {
			kc_err(p, "%s.server: \"%s\": bad port", where, s);
			return -1;
		}
	} else
		kc->port = xstrdup("443");
	if (*end != '\0' && strcmp(end, "/") != 0) {
		kc_err(p, "%s.server: \"%s\": a path prefix is not supported", where, s);
		return -1;
	}
	return 0;
}

struct kubeconfig *
kubeconfig_parse(
    const char *buf, size_t len, const char *dir, const char *name, char *err, size_t errlen)
{
	struct kc_parse    p = { name, dir, err, errlen };
	struct kubeconfig *kc = xcalloc(1, sizeof(*kc));
	const struct json *root, *clusters, *users, *contexts, *ctx, *cl, *us, *v;
	struct json_doc   *doc;
	const char        *cur, *s, *cname, *uname, *tok, *tokfile;
	char               where[128], perr[256];
	size_t             i;

	doc = json_parse_yaml(buf, len, NULL, perr, sizeof(perr));
	if (doc == NULL) {
		kc_err(&p, "%s", perr);
		goto fail;
	}
	root = json_root(doc);
	if (json_type(root) != JSON_OBJECT) {
		kc_err(&p, "not a kubeconfig (expected a mapping at the top)");
		goto fail;
	}
	clusters = json_get(root, "clusters");
	users = json_get(root, "users");
	contexts = json_get(root, "contexts");
	if (kc_str(&p, root, "current-context", "", &cur) == -1)
		goto fail;
	if (cur == NULL) {
		/* Without current-context, a single context is unambiguous. */
		if (json_len(contexts) == 1)
			cur = json_str(json_get(json_index(contexts, 0), "name"));
		if (cur == NULL) {
			kc_err(&p, "current-context: not set");
			goto fail;
		}
	}
	kc->context = xstrdup(cur);
	ctx = kc_find_named(contexts, "context", cur, &i);
	if (ctx == NULL) {
		kc_err(&p, "current-context: \"%s\": no such entry in contexts", cur);
		goto fail;
	}
	snprintf(where, sizeof(where), "contexts[%zu].context", i);
	if (kc_str(&p, ctx, "cluster", where, &cname) == -1 ||
	    kc_str(&p, ctx, "user", where, &uname) == -1)
		goto fail;
	if (cname == NULL) {
		kc_err(&p, "%s.cluster: required", where);
		goto fail;
	}
	kc->cluster = xstrdup(cname);
	cl = kc_find_named(clusters, "cluster", cname, &i);
	if (cl == NULL) {
		kc_err(&p, "%s.cluster: \"%s\": no such entry in clusters", where, cname);
		goto fail;
	}
	snprintf(where, sizeof(where), "clusters[%zu].cluster", i);
	if (kc_str(&p, cl, "server", where, &s) == -1)
		goto fail;
	if (s == NULL) {
		kc_err(&p, "%s.server: required", where);
		goto fail;
	}
	kc->server = xstrdup(s);
	if (kc_parse_server(&p, kc, where) == -1)
		goto fail;
	if (kc_str(&p, cl, "tls-server-name", where, &s) == -1)
		goto fail;
	kc->tls_server_name = xstrdup(s);
	v = json_get(cl, "insecure-skip-tls-verify");
	if (v != NULL && json_type(v) != JSON_NULL) {
		if (json_bool(v, &kc->insecure) == -1) {
			kc_err(&p, "%s.insecure-skip-tls-verify: expected true or false", where);
			goto fail;
		}
	}
	if (kc_pem_field(&p, cl, where, "certificate-authority", &kc->ca_file, &kc->ca_pem,
	        &kc->ca_pem_len) == -1)
		goto fail;
	if (kc->insecure && (kc->ca_file != NULL || kc->ca_pem != NULL)) {
		kc_err(&p,
		    "%s: insecure-skip-tls-verify and a certificate authority are mutually "
		    "exclusive",
		    where);
		goto fail;
	}

	if (uname != NULL) {
		kc->user = xstrdup(uname);
		us = kc_find_named(users, "user", uname, &i);
		if (us == NULL) {
			kc_err(
			    &p, "context \"%s\": user \"%s\": no such entry in users", cur, uname);
			goto fail;
		}
		snprintf(where, sizeof(where), "users[%zu].user", i);
		if (kc_pem_field(&p, us, where, "client-certificate", &kc->cert_file, &kc->cert_pem,
		        &kc->cert_pem_len) == -1 ||
		    kc_pem_field(&p, us, where, "client-key", &kc->key_file, &kc->key_pem,
		        &kc->key_pem_len) == -1)
			goto fail;
		if ((kc->cert_file != NULL || kc->cert_pem != NULL) !=
		    (kc->key_file != NULL || kc->key_pem != NULL)) {
			kc_err(&p, "%s: client-certificate and client-key must be given together",
			    where);
			goto fail;
		}
		if (kc_str(&p, us, "token", where, &tok) == -1 ||
		    kc_str(&p, us, "tokenFile", where, &tokfile) == -1)
			goto fail;
		if (tok != NULL)
			kc->token = xstrdup(tok);
		else if (tokfile != NULL) {
			size_t tl;
			char  *t;

			kc->token_file = kc_path(&p, tokfile);
			t = kc_read_file(kc->token_file, 64 * 1024, &tl);
			if (t == NULL) {
				kc_err(&p, "%s.tokenFile: %s: %s", where, kc->token_file,
				    strerror(errno));
				goto fail;
			}
			while (tl > 0 && isspace((unsigned char)t[tl - 1]))
				t[--tl] = '\0';
			if (tl == 0 || strpbrk(t, "\r\n") != NULL) {
				kc_err(&p, "%s.tokenFile: %s: %s", where, kc->token_file,
				    tl == 0 ? "empty" : "more than one line");
				free(t);
				goto fail;
			}
			kc->token = t;
		}
		if (json_get(us, "exec") != NULL || json_get(us, "auth-provider") != NULL) {
			kc_err(
			    &p, "%s: exec and auth-provider credentials are not supported", where);
			goto fail;
		}
	}
	json_free(doc);
	return kc;
fail:
	json_free(doc);
	kubeconfig_free(kc);
	return NULL;
}

struct kubeconfig *
kubeconfig_load(const char *path, char *err, size_t errlen)
{
	struct kubeconfig *kc;
	char              *buf, *dir, *slash;
	size_t             len;

	buf = kc_read_file(path, KC_MAX_FILE, &len);
	if (buf == NULL) {
		snprintf(err, errlen, "%s: %s", path, strerror(errno));
		return NULL;
	}
	dir = xstrdup(path);
	slash = strrchr(dir, '/');
	if (slash == NULL) {
		free(dir);
		dir = NULL;
	} else if (slash == dir)
		slash[1] = '\0';
	else
		*slash = '\0';
	kc = kubeconfig_parse(buf, len, dir, path, err, errlen);
	free(dir);
	free(buf);
	return kc;
}

void
kubeconfig_free(struct kubeconfig *kc)
{
	if (kc == NULL)
		return;
	free(kc->context);
	free(kc->cluster);
	free(kc->user);
	free(kc->server);
	free(kc->host);
	free(kc->port);
	free(kc->tls_server_name);
	free(kc->ca_file);
	free(kc->ca_pem);
	free(kc->cert_file);
	free(kc->cert_pem);
	free(kc->key_file);
	if (kc->key_pem != NULL)
		explicit_bzero(kc->key_pem, kc->key_pem_len);
	free(kc->key_pem);
	if (kc->token != NULL)
		explicit_bzero(kc->token, strlen(kc->token));
	free(kc->token);
	free(kc->token_file);
	free(kc);
}

static void
kc_ssl_err(char *err, size_t errlen, const char *what)
{
	char          buf[256];
	unsigned long e = ERR_get_error();

	ERR_error_string_n(e, buf, sizeof(buf));
	snprintf(err, errlen, "%s: %s", what, e != 0 ? buf : "failed");
	ERR_clear_error();
}

/* Adds every certificate of a PEM buffer to the context's trust store; the count, or -1. */
static int
kc_add_ca_pem(SSL_CTX *ctx, const char *pem, size_t len)
{
	X509_STORE *st = SSL_CTX_get_cert_store(ctx);
	BIO        *bio = BIO_new_mem_buf(pem, (int)len);
	X509       *x;
	int         n = 0;

	if (bio == NULL)
		return -1;
	while ((x = PEM_read_bio_X509(bio, NULL, NULL, NULL)) != NULL) {
		if (X509_STORE_add_cert(st, x) != 1) {
			X509_free(x);
			BIO_free(bio);
			return -1;
		}
		X509_free(x);
		n++;
	}
	ERR_clear_error(); /* the end of the PEM stream */
	BIO_free(bio);
	return n > 0 ? n : -1;
}

static int
kc_use_cert_pem(SSL_CTX *ctx, const char *pem, size_t len)
{
	BIO  *bio = BIO_new_mem_buf(pem, (int)len);
	X509 *x, *extra;
	int   rc = -1;

	if (bio == NULL)
		return -1;
	x = PEM_read_bio_X509(bio, NULL, NULL, NULL);
	if (x != NULL && SSL_CTX_use_certificate(ctx, x) == 1) {
		rc = 0;
		while ((extra = PEM_read_bio_X509(bio, NULL, NULL, NULL)) != NULL)
			if (SSL_CTX_add0_chain_cert(ctx, extra) != 1) {
				X509_free(extra);
				rc = -1;
				break;
			}
		if (rc == 0)
			ERR_clear_error();
	}
	X509_free(x);
	BIO_free(bio);
	return rc;
}

static int
kc_use_key_pem(SSL_CTX *ctx, const char *pem, size_t len)
{
	BIO      *bio = BIO_new_mem_buf(pem, (int)len);
	EVP_PKEY *k;
	int       rc = -1;

	if (bio == NULL)
		return -1;
	k = PEM_read_bio_PrivateKey(bio, NULL, NULL, NULL);
	if (k != NULL && SSL_CTX_use_PrivateKey(ctx, k) == 1)
		rc = 0;
	EVP_PKEY_free(k);
	BIO_free(bio);
	return rc;
}

struct ssl_ctx_st *
kubeconfig_ssl_ctx(const struct kubeconfig *kc, char *err, size_t errlen)
{
	static const unsigned char alpn[] = { 2, 'h', '2' };
	SSL_CTX                   *ctx;

	if (ossl_load(err, errlen) == -1)
		return NULL;
	ctx = SSL_CTX_new(TLS_client_method());
	if (ctx == NULL) {
		kc_ssl_err(err, errlen, "SSL_CTX_new");
		return NULL;
	}
	SSL_CTX_set_min_proto_version(ctx, TLS1_2_VERSION);
	SSL_CTX_set_mode(ctx, SSL_MODE_RELEASE_BUFFERS);
	if (SSL_CTX_set_alpn_protos(ctx, alpn, sizeof(alpn)) != 0) {
		kc_ssl_err(err, errlen, "ALPN");
		goto fail;
	}
	if (kc->insecure) {
		log_warnx("WARNING: kubeconfig cluster \"%s\" (%s) sets insecure-skip-tls-verify: "
		          "the API server's certificate is NOT verified; anyone on the path can "
		          "impersonate it",
		    kc->cluster ? kc->cluster : "?", kc->server);
		SSL_CTX_set_verify(ctx, SSL_VERIFY_NONE, NULL);
	} else {
		SSL_CTX_set_verify(ctx, SSL_VERIFY_PEER, NULL);
		if (kc->ca_pem != NULL) {
			if (kc_add_ca_pem(ctx, kc->ca_pem, kc->ca_pem_len) == -1) {
				kc_ssl_err(err, errlen, "certificate-authority-data");
				goto fail;
			}
		} else if (kc->ca_file != NULL) {
			if (SSL_CTX_load_verify_locations(ctx, kc->ca_file, NULL) != 1) {
				kc_ssl_err(err, errlen, kc->ca_file);
				goto fail;
			}
		} else if (SSL_CTX_set_default_verify_paths(ctx) != 1) {
			kc_ssl_err(err, errlen, "system certificate authorities");
			goto fail;
		}
	}
	if (kc->cert_pem != NULL) {
		if (kc_use_cert_pem(ctx, kc->cert_pem, kc->cert_pem_len) == -1) {
			kc_ssl_err(err, errlen, "client-certificate-data");
			goto fail;
		}
	} else if (kc->cert_file != NULL &&
	    SSL_CTX_use_certificate_chain_file(ctx, kc->cert_file) != 1) {
		kc_ssl_err(err, errlen, kc->cert_file);
		goto fail;
	}
	if (kc->key_pem != NULL) {
		if (kc_use_key_pem(ctx, kc->key_pem, kc->key_pem_len) == -1) {
			kc_ssl_err(err, errlen, "client-key-data");
			goto fail;
		}
	} else if (kc->key_file != NULL &&
	    SSL_CTX_use_PrivateKey_file(ctx, kc->key_file, SSL_FILETYPE_PEM) != 1) {
		kc_ssl_err(err, errlen, kc->key_file);
		goto fail;
	}
	if ((kc->cert_pem != NULL || kc->cert_file != NULL) &&
	    SSL_CTX_check_private_key(ctx) != 1) {
		kc_ssl_err(err, errlen, "client-key does not match client-certificate");
		goto fail;
	}
	return ctx;
fail:
	SSL_CTX_free(ctx);
	return NULL;
}
