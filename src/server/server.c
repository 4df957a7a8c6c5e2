/* server.c — the node's HTTP server (see server.h).
 *
 * Why libevent's evhttp and not an own parser: it already runs on the loop, bounds the
 * header size (evhttp_set_max_headers_size) and the body size, has per-connection read and
 * write timeouts, sends chunked replies with a completion callback (the back-pressure of a
 * log stream: the next chunk is read from the file only when the previous one left the
 * socket), and takes a bufferevent_openssl per connection for TLS. Its limits, met here:
 * no connection cap of its own (2.1) — the number of requests in service is capped
 * (--server-max-streams, 429 beyond) and idle connections time out; no Upgrade support
 * (exec/attach/portForward would need the connection taken over; not done).
 */
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>

#include <arpa/inet.h>
#include <netinet/in.h>

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <event2/buffer.h>
#include <event2/bufferevent.h>
#include <event2/event.h>
#include <event2/http.h>
#include <event2/keyvalq_struct.h>
#include <sys/queue.h>
#include <event2/listener.h>
#include <yajl/yajl_gen.h>

#include "client/api.h"
#include "client/kubeconfig.h"
#include "core/config.h"
#include "core/json.h"
#include "core/log.h"
#include "core/ossl.h"
#include "core/util.h"
#include "cri/cri.h"
#include "node/logrotate.h"
#include "node/pleg.h"
#include "node/podcache.h"
#include "node/podconfig.h"
#include "pod/pod.h"
#include "node/eviction.h"
#include "node/imagegc.h"
#include "server/auth.h"
#include "server/gcmetrics.h"
#include "server/metrics.h"
#include "server/request.h"
#include "server/resource.h"
#include "core/logreader.h"
#include "server/server.h"

#define SERVER_TIMEOUT_S      60 /* a connection idle (or stalled writing) this long closes */
#define SERVER_RETRY_MS       10000
#define SERVER_LOG_CHUNK      (64 * 1024) /* read per turn for a log stream */
#define SERVER_FOLLOW_POLL_MS 200
#define TOKEN_TTL_MS          (2 * 60 * 1000) /* the kubelet's webhook cacheTTL */
#define SAR_ALLOW_TTL_MS      (5 * 60 * 1000) /* cacheAuthorizedTTL */
#define SAR_DENY_TTL_MS       (30 * 1000)     /* cacheUnauthorizedTTL */
#define TUNNEL_HIGH           (256 * 1024)    /* buffered one way before reading pauses */

struct server;

struct listener {
	struct server              *s;
	const char                 *what; /* "HTTPS", "healthz", "read-only" */
	char                       *addr;
	int                         port;
	int                         tls;
	int                         healthz_only;
	struct evhttp              *http;
	struct evhttp_bound_socket *bound;
	struct event               *retry;
	struct event               *resume; /* EMFILE: accepting again after a second */
	int                         failed_logged;
};

struct server {
	struct server_deps d;
	SSL_CTX           *ssl;
	int                have_ca;
	uint64_t           tls_sig;      /* of the certificate files the context was made from */
	int64_t            tls_check_ms; /* when they were last looked at */
	struct listener    l[3];
	size_t             nl;
	struct api        *api;     /* webhooks: TokenReview, SubjectAccessReview */
	int                api_own; /* api is the server's own (else d.api's, borrowed) */
	struct auth_cache *tokens;
	struct auth_cache *sars;
	int                streams; /* requests in service (asynchronous ones) */
	int64_t            idle_ms; /* connections idle or stalled this long close */
	/* metrics */
	struct prom_hist relist_duration, relist_interval;
	int64_t          last_relist_mono_ms;
	int64_t          last_relist_wall_ms;
	uint64_t         started_containers, started_pods;
	uint64_t         requests, rejected_429;
};

/* One request in service past its first turn (webhook answers, log streams). */
struct sreq {
	struct server            *s;
	struct listener          *l;
	struct evhttp_request    *req;
	struct evhttp_connection *conn;
	char                     *path;
	char                     *user;
	struct strv               groups;
	struct auth_attrs         attrs;
	struct api_call          *call;
	char                     *token;
	/* log stream */
	struct logreader *lr;
	struct event     *tick;
	char             *uid, *cid;
	int               follow;
	/* exec / attach / portForward: the connection handed to the runtime's streaming
	 * server */
	struct cri_call    *ccall;
	struct bufferevent *up;
	struct bufferevent *down; /* the client's, taken from evhttp */
	int                 closing;
	int                 started; /* server_reply started */
	int                 waiting; /* a chunk is being written */
	int                 closed;  /* the client went away */
};

static const double def_buckets[] = { 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10 };

static void server_sreq_free(struct sreq *);
static void server_serve_metrics_resource(struct sreq *);

static void
server_groups_add(struct strv *v, const char *s)
{
	v->v = xreallocarray(v->v, v->n + 1, sizeof(*v->v));
	v->v[v->n++] = xstrdup(s);
}
static void server_serve(struct sreq *);

/* ---- replies ---- */

static void
server_reply(struct evhttp_request *req, int code, const char *ctype, const char *body, size_t len)
{
	struct evbuffer *b = evbuffer_new();

	evhttp_add_header(evhttp_request_get_output_headers(req), "Content-Type",
	    ctype != NULL ? ctype : "text/plain; charset=utf-8");
	evbuffer_add(b, body, len);
	evhttp_send_reply(req, code, NULL, b);
	evbuffer_free(b);
}

static void
server_reply_text(struct evhttp_request *req, int code, const char *text)
{
	server_reply(req, code, NULL, text, strlen(text));
}

/* Ends a request in service: replies (unless the server_reply was started or already sent) and
 * frees. */
static void
server_sreq_reply(struct sreq *r, int code, const char *text)
{
	server_reply_text(r->req, code, text);
	r->req = NULL;
	server_sreq_free(r);
}

/* The connection goes (the client left, a timeout, or the server stops): whatever the
 * request was waiting for (a webhook, the runtime, the log file) is cancelled now. */
static void
server_on_conn_close(struct evhttp_connection *c, void *arg)
{
	struct sreq *r = arg;

	(void)c;
	r->closed = 1;
	r->conn = NULL;
	r->down = NULL; /* a tunnel's client side is freed with the connection */
	log_v(2, "server: client of %s went away", r->path);
	if (r->req != NULL && evhttp_request_get_connection(r->req) != NULL)
		r->req = NULL; /* still attached: freed with its connection */
	else if (r->req != NULL && r->started) {
		evhttp_send_reply_end(r->req); /* detached: this frees it */
		r->req = NULL;
	}
	server_sreq_free(r); /* a detached request not yet answered is freed by its server_reply */
}

static void
server_sreq_free(struct sreq *r)
{
	if (r == NULL)
		return;
	if (r->conn != NULL)
		evhttp_connection_set_closecb(r->conn, NULL, NULL);
	if (r->req != NULL) /* not answered: tell the client */
		server_reply_text(r->req, 500, "Internal Server Error");
	api_call_cancel(r->call);
	cri_cancel(r->ccall);
	if (r->up != NULL)
		bufferevent_free(r->up);
	if (r->tick != NULL)
		event_free(r->tick);
	logreader_free(r->lr);
	free(r->path);
	free(r->user);
	free(r->token);
	free(r->uid);
	free(r->cid);
	strv_clear(&r->groups);
	r->s->streams--;
	free(r);
}

/* ---- TLS ---- */

static int
server_write_pem(const char *path, int mode, int (*fn)(FILE *, void *), void *obj)
{
	char *tmp = xsprintf("%s.tmp", path);
	int   fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, mode), ok = 0;
	FILE *fp;

	if (fd != -1 && (fp = fdopen(fd, "w")) != NULL) {
		ok = fn(fp, obj) == 1;
		ok = (fclose(fp) == 0) && ok;
	} else if (fd != -1)
		close(fd);
	if (ok && rename(tmp, path) == -1)
		ok = 0;
	if (!ok)
		unlink(tmp);
	free(tmp);
	return ok ? 0 : -1;
}

static int
server_pem_key(FILE *fp, void *k)
{
	return PEM_write_PrivateKey(fp, k, NULL, NULL, 0, NULL, NULL);
}

static int
server_pem_cert(FILE *fp, void *x)
{
	return PEM_write_X509(fp, x);
}

/* The kubelet without --tls-cert-file: a self-signed certificate for the node's name,
 * made once under ROOT-DIR/pki (kubelet.crt, kubelet.key mode 0600) and kept. */
static int
server_self_signed(const struct klet_config *cfg, char **crt, char **key, char *err, size_t errlen)
{
	char           *dir = xsprintf("%s/pki", cfg->root_dir), *cn = NULL, *san = NULL;
	EVP_PKEY       *pk = NULL;
	X509           *x = NULL;
	X509_EXTENSION *ext;
	X509V3_CTX      v3;
	unsigned char   serial[8];
	int             rc = -1;

	*crt = xsprintf("%s/kubelet.crt", dir);
	*key = xsprintf("%s/kubelet.key", dir);
	if (access(*crt, R_OK) == 0 && access(*key, R_OK) == 0) {
		free(dir);
		return 0;
	}
	if (mkdirs(dir, 0700) == -1) {
		snprintf(err, errlen, "%s: %s", dir, strerror(errno));
		goto out;
	}
	pk = EVP_RSA_gen(2048);
	x = X509_new();
	if (pk == NULL || x == NULL || RAND_bytes(serial, sizeof(serial)) != 1) {
		snprintf(err, errlen, "cannot make a key for the serving certificate");
		goto out;
	}
	serial[0] &= 0x7f;
	X509_set_version(x, 2);
	ASN1_INTEGER_set_uint64(X509_get_serialNumber(x), *(uint64_t *)(void *)serial >> 1);
	X509_gmtime_adj(X509_getm_notBefore(x), -3600);
	X509_gmtime_adj(X509_getm_notAfter(x), 365L * 24 * 3600);
	cn = xsprintf("%s@%lld", cfg->node_name, (long long)(now_wall_ms() / 1000));
	X509_NAME_add_entry_by_txt(
	    X509_get_subject_name(x), "CN", MBSTRING_ASC, (unsigned char *)cn, -1, -1, 0);
	X509_set_issuer_name(x, X509_get_subject_name(x));
	X509_set_pubkey(x, pk);
	X509V3_set_ctx(&v3, x, x, NULL, NULL, 0);
	san = xsprintf("DNS:%s,DNS:localhost,IP:127.0.0.1", cfg->node_name);
	if ((ext = X509V3_EXT_conf_nid(NULL, &v3, NID_subject_alt_name, san)) != NULL) {
		X509_add_ext(x, ext, -1);
		X509_EXTENSION_free(ext);
	}
	if (X509_sign(x, pk, EVP_sha256()) == 0 ||
	    server_write_pem(*key, 0600, server_pem_key, pk) == -1 ||
	    server_write_pem(*crt, 0644, server_pem_cert, x) == -1) {
		snprintf(err, errlen, "cannot write the serving certificate under %s", dir);
		goto out;
	}
	log_info("server: made a self-signed serving certificate %s", *crt);
	rc = 0;
out:
	EVP_PKEY_free(pk);
	X509_free(x);
	free(cn);
	free(san);
	free(dir);
	return rc;
}

/* Any client certificate is taken during the handshake; its verification result is read
 * when a request authenticates (a bad one is then a 401, as the kubelet answers). */
static int
server_verify_any(int ok, X509_STORE_CTX *ctx)
{
	(void)ok;
	(void)ctx;
	return 1;
}

static int
server_tls_setup(struct server *s, char *err, size_t errlen)
{
	const struct klet_config *cfg = s->d.cfg;
	char                     *crt = NULL, *key = NULL;
	int                       rc = -1;

	if ((cfg->tls_cert_file == NULL) != (cfg->tls_key_file == NULL)) {
		snprintf(err, errlen, "--tls-cert-file and --tls-private-key-file go together");
		return -1;
	}
	if (cfg->tls_cert_file != NULL) {
		crt = xstrdup(cfg->tls_cert_file);
		key = xstrdup(cfg->tls_key_file);
	} else if (server_self_signed(cfg, &crt, &key, err, errlen) == -1)
		goto out;
	if ((s->ssl = SSL_CTX_new(TLS_server_method())) == NULL) {
		snprintf(err, errlen, "cannot make a TLS context");
		goto out;
	}
	SSL_CTX_set_min_proto_version(s->ssl, TLS1_2_VERSION);
	/* An idle keep-alive connection (the API server's, a metrics scraper's) holds no read and
	 * write buffers, as the API client's do not: 27 to 16 KiB of heap per connection. */
	SSL_CTX_set_mode(s->ssl, SSL_MODE_RELEASE_BUFFERS);
	if (SSL_CTX_use_certificate_chain_file(s->ssl, crt) != 1 ||
	    SSL_CTX_use_PrivateKey_file(s->ssl, key, SSL_FILETYPE_PEM) != 1 ||
	    SSL_CTX_check_private_key(s->ssl) != 1) {
		snprintf(err, errlen, "serving certificate %s / key %s: %s", crt, key,
		    ERR_reason_error_string(ERR_get_error()));
		goto out;
	}
	if (cfg->client_ca_file != NULL) {
		STACK_OF(X509_NAME) *names = SSL_load_client_CA_file(cfg->client_ca_file);

		if (names == NULL ||
		    SSL_CTX_load_verify_locations(s->ssl, cfg->client_ca_file, NULL) != 1) {
			snprintf(err, errlen, "--client-ca-file %s: cannot load it",
			    cfg->client_ca_file);
			sk_X509_NAME_pop_free(names, X509_NAME_free);
			goto out;
		}
		SSL_CTX_set_client_CA_list(s->ssl, names);
		SSL_CTX_set_verify(s->ssl, SSL_VERIFY_PEER, server_verify_any);
		s->have_ca = 1;
	}
	rc = 0;
out:
	ERR_clear_error();
	free(crt);
	free(key);
	return rc;
}

/* What can be checked without loading anything of OpenSSL (see server_new). */
static int
server_tls_check(const struct klet_config *cfg, char *err, size_t errlen)
{
	const char *files[] = { cfg->tls_cert_file, cfg->tls_key_file, cfg->client_ca_file };
	size_t      i;

	if ((cfg->tls_cert_file == NULL) != (cfg->tls_key_file == NULL)) {
		snprintf(err, errlen, "--tls-cert-file and --tls-private-key-file go together");
		return -1;
	}
	for (i = 0; i < nitems(files); i++)
		if (files[i] != NULL && access(files[i], R_OK) == -1) {
			snprintf(err, errlen, "%s: %s", files[i], strerror(errno));
			return -1;
		}
	return 0;
}

/* A signature of the given certificate, key and CA files (inode, size, mtime): a change
 * makes the context again (certificate rotation), as the kubelet's dynamic serving
 * certificate does. 0 without files. */
static uint64_t
server_tls_files_sig(const struct klet_config *cfg)
{
	const char *files[] = { cfg->tls_cert_file, cfg->tls_key_file, cfg->client_ca_file };
	uint64_t    h = 1469598103934665603ULL;
	struct stat st;
	size_t      i;

	for (i = 0; i < nitems(files); i++) {
		if (files[i] == NULL)
			continue;
		memset(&st, 0, sizeof(st));
		if (stat(files[i], &st) == 0) {
			h = fnv64(h, &st.st_ino, sizeof(st.st_ino));
			h = fnv64(h, &st.st_size, sizeof(st.st_size));
			h = fnv64(h, &st.st_mtim, sizeof(st.st_mtim));
		}
	}
	return h;
}

/* At most once a second, at a new connection: the files changed since the context was
 * made? Then a new context for the new connections (open ones keep theirs); one that
 * cannot be made is logged and the old one kept. */
static void
server_tls_maybe_reload(struct server *s)
{
	const struct klet_config *cfg = s->d.cfg;
	int64_t                   now = now_mono_ms();
	uint64_t                  sig;
	SSL_CTX                  *old = s->ssl;
	char                      err[512];

	if (cfg->tls_cert_file == NULL || old == NULL || now - s->tls_check_ms < 1000)
		return;
	s->tls_check_ms = now;
	if ((sig = server_tls_files_sig(cfg)) == s->tls_sig)
		return;
	s->ssl = NULL;
	if (server_tls_setup(s, err, sizeof(err)) == -1) {
		log_warnx("server: the serving certificate changed but cannot be used: %s; the "
		          "previous one stays",
		    err);
		SSL_CTX_free(s->ssl);
		s->ssl = old;
		s->tls_sig = sig; /* not again until it changes again */
		return;
	}
	s->tls_sig = sig;
	SSL_CTX_free(old); /* the connections made with it hold their references */
	log_info("server: serving certificate %s reloaded", cfg->tls_cert_file);
}

/* OpenSSL is loaded and the TLS context made at the first connection: an idle node that
 * nobody contacts maps no OpenSSL, and never makes its key (issues 15 and 19). A context that
 * cannot be made is logged once; handshakes then fail. NULL (OpenSSL cannot be loaded, or
 * no memory) makes evhttp take a plain bufferevent: server_on_request refuses what comes on it. */
static struct bufferevent *
server_tls_bev(struct event_base *base, void *arg)
{
	struct server *s = arg;
	SSL           *ssl;
	char           err[512];

	if (ossl_load(err, sizeof(err)) == -1)
		return NULL; /* logged once by ossl_load */
	server_tls_maybe_reload(s);
	if (s->ssl == NULL) {
		s->tls_sig = server_tls_files_sig(s->d.cfg);
		s->tls_check_ms = now_mono_ms();
		if (server_tls_setup(s, err, sizeof(err)) == -1) {
			log_error("server: %s; TLS handshakes fail until the files change", err);
			SSL_CTX_free(s->ssl);
			s->ssl = SSL_CTX_new(TLS_server_method());
		}
	}
	if ((ssl = SSL_new(s->ssl)) == NULL)
		return NULL;
	return bufferevent_openssl_socket_new(
	    base, -1, ssl, BUFFEREVENT_SSL_ACCEPTING, BEV_OPT_CLOSE_ON_FREE);
}

/* The TLS session a request came on; NULL when it came in plain (on the HTTPS listener:
 * server_tls_bev could not make one). */
static SSL *
server_tls_of(struct evhttp_request *req)
{
	struct bufferevent *bev =
	    evhttp_connection_get_bufferevent(evhttp_request_get_connection(req));

	return bev != NULL && ossl_loaded() ? bufferevent_openssl_get_ssl(bev) : NULL;
}

/* ---- authentication and authorization ---- */

static void
server_set_user_from_cert(struct sreq *r, X509 *x)
{
	X509_NAME *n = X509_get_subject_name(x);
	int        i = -1;
	char       buf[256];

	if (X509_NAME_get_text_by_NID(n, NID_commonName, buf, sizeof(buf)) > 0)
		r->user = xstrdup(buf);
	else
		r->user = xstrdup("");
	while ((i = X509_NAME_get_index_by_NID(n, NID_organizationName, i)) >= 0) {
		ASN1_STRING   *d = X509_NAME_ENTRY_get_data(X509_NAME_get_entry(n, i));
		unsigned char *u = NULL;

		if (ASN1_STRING_to_UTF8(&u, d) >= 0) {
			server_groups_add(&r->groups, (char *)u);
			OPENSSL_free(u);
		}
	}
}

static void server_authorize(struct sreq *);

static void
server_on_token_review(const struct api_response *resp, void *arg)
{
	struct sreq       *r = arg;
	struct json_doc   *doc = NULL;
	const struct json *st, *u, *g;
	int                ok = 0;
	size_t             i;
	char               text[1024];

	r->call = NULL;
	text[0] = '\0';
	if (resp->status == 201 || resp->status == 200)
		doc = json_parse(resp->body, resp->len, NULL, NULL, 0);
	st = doc != NULL ? json_get(json_root(doc), "status") : NULL;
	if (st != NULL && json_bool(json_get(st, "authenticated"), &ok) == 0 && ok &&
	    (u = json_get(st, "user")) != NULL &&
	    json_type(json_get(u, "username")) == JSON_STRING) {
		/* cached as "user\ngroup\ngroup..." */
		snprintf(text, sizeof(text), "%s", json_str(json_get(u, "username")));
		g = json_get(u, "groups");
		for (i = 0; g != NULL && json_type(g) == JSON_ARRAY && i < json_len(g); i++)
			if (json_type(json_index(g, i)) == JSON_STRING) {
				size_t n = strlen(text);

				snprintf(
				    text + n, sizeof(text) - n, "\n%s", json_str(json_index(g, i)));
			}
	} else
		ok = 0;
	json_free(doc);
	if (resp->status == 0 || resp->status >= 500) {
		log_warnx("server: TokenReview failed: %d %s", resp->status, resp->message);
		server_sreq_reply(r, 401, "Unauthorized");
		return;
	}
	auth_cache_put(r->s->tokens, r->token, ok, text, now_mono_ms() + TOKEN_TTL_MS);
	if (!ok) {
		server_sreq_reply(r, 401, "Unauthorized");
		return;
	}
	{
		char *save = xstrdup(text), *p = save, *line;

		r->user = xstrdup(strsep(&p, "\n"));
		while ((line = strsep(&p, "\n")) != NULL)
			server_groups_add(&r->groups, line);
		free(save);
	}
	server_authorize(r);
}

static void
server_token_review(struct sreq *r)
{
	yajl_gen    g = json_gen_new(0);
	char       *body;
	size_t      len;
	int         ok;
	const char *text;

	if (auth_cache_get(r->s->tokens, r->token, now_mono_ms(), &ok, &text)) {
		char *save, *p, *line;

		if (!ok) {
			server_sreq_reply(r, 401, "Unauthorized");
			yajl_gen_free(g);
			return;
		}
		save = p = xstrdup(text);
		r->user = xstrdup(strsep(&p, "\n"));
		while ((line = strsep(&p, "\n")) != NULL)
			server_groups_add(&r->groups, line);
		free(save);
		yajl_gen_free(g);
		server_authorize(r);
		return;
	}
	yajl_gen_map_open(g);
	json_gen_kv_str(g, "apiVersion", "authentication.k8s.io/v1");
	json_gen_kv_str(g, "kind", "TokenReview");
	json_gen_key(g, "spec");
	yajl_gen_map_open(g);
	json_gen_kv_str(g, "token", r->token);
	yajl_gen_map_close(g);
	yajl_gen_map_close(g);
	body = json_gen_take(g, &len);
	yajl_gen_free(g);
	r->call = api_request(r->s->api, "POST", "/apis/authentication.k8s.io/v1/tokenreviews",
	    "application/json", body, len, 0, server_on_token_review, r);
	free(body);
}

static char *
server_sar_key(const struct sreq *r)
{
	char  *k = xsprintf("%s\n%s\n%s", r->user, r->attrs.verb, r->attrs.subresource), *t;
	size_t i;

	for (i = 0; i < r->groups.n; i++) {
		t = xsprintf("%s\n%s", k, r->groups.v[i]);
		free(k);
		k = t;
	}
	return k;
}

static void
server_forbid(struct sreq *r, const char *reason)
{
	char *msg = xsprintf("Forbidden (user=%s, verb=%s, resource=nodes, subresource=%s)",
	    r->user, r->attrs.verb, r->attrs.subresource);

	log_v(2, "server: %s reason=%s", msg, reason != NULL ? reason : "");
	server_sreq_reply(r, 403, msg);
	free(msg);
}

static void
server_on_sar(const struct api_response *resp, void *arg)
{
	struct sreq       *r = arg;
	struct json_doc   *doc = NULL;
	const struct json *st, *reason;
	int                allowed = 0;
	char              *key;

	r->call = NULL;
	if (resp->status == 201 || resp->status == 200)
		doc = json_parse(resp->body, resp->len, NULL, NULL, 0);
	st = doc != NULL ? json_get(json_root(doc), "status") : NULL;
	if (st != NULL && json_bool(json_get(st, "allowed"), &allowed) == -1)
		allowed = 0;
	reason = st != NULL ? json_get(st, "reason") : NULL;
	if (doc == NULL) {
		log_warnx("server: SubjectAccessReview failed: %d %s", resp->status, resp->message);
		json_free(doc);
		server_forbid(r, "the authorization webhook failed");
		return;
	}
	key = server_sar_key(r);
	auth_cache_put(r->s->sars, key, allowed,
	    reason != NULL && json_type(reason) == JSON_STRING ? json_str(reason) : "",
	    now_mono_ms() + (allowed ? SAR_ALLOW_TTL_MS : SAR_DENY_TTL_MS));
	free(key);
	if (!allowed) {
		server_forbid(r,
		    reason != NULL && json_type(reason) == JSON_STRING ? json_str(reason) : NULL);
		json_free(doc);
		return;
	}
	json_free(doc);
	server_serve(r);
}

static void
server_authorize(struct sreq *r)
{
	yajl_gen    g;
	char       *body, *key;
	size_t      len, i;
	int         ok;
	const char *text;

	if (!r->s->d.cfg->authz_webhook) {
		server_serve(r);
		return;
	}
	key = server_sar_key(r);
	if (auth_cache_get(r->s->sars, key, now_mono_ms(), &ok, &text)) {
		free(key);
		if (ok)
			server_serve(r);
		else
			server_forbid(r, text);
		return;
	}
	free(key);
	g = json_gen_new(0);
	yajl_gen_map_open(g);
	json_gen_kv_str(g, "apiVersion", "authorization.k8s.io/v1");
	json_gen_kv_str(g, "kind", "SubjectAccessReview");
	json_gen_key(g, "spec");
	yajl_gen_map_open(g);
	json_gen_kv_str(g, "user", r->user);
	json_gen_key(g, "groups");
	yajl_gen_array_open(g);
	for (i = 0; i < r->groups.n; i++)
		json_gen_str(g, r->groups.v[i]);
	yajl_gen_array_close(g);
	json_gen_key(g, "resourceAttributes");
	yajl_gen_map_open(g);
	json_gen_kv_str(g, "verb", r->attrs.verb);
	json_gen_kv_str(g, "version", "v1");
	json_gen_kv_str(g, "resource", "nodes");
	json_gen_kv_str(g, "subresource", r->attrs.subresource);
	json_gen_kv_str(g, "name", r->s->d.cfg->node_name);
	yajl_gen_map_close(g);
	yajl_gen_map_close(g);
	yajl_gen_map_close(g);
	body = json_gen_take(g, &len);
	yajl_gen_free(g);
	r->call =
	    api_request(r->s->api, "POST", "/apis/authorization.k8s.io/v1/subjectaccessreviews",
	        "application/json", body, len, 0, server_on_sar, r);
	free(body);
}

/* x509, then a bearer token, then anonymous; none: 401. */
static void
server_authenticate(struct sreq *r, SSL *ssl)
{
	X509       *peer = SSL_get_peer_certificate(ssl);
	const char *authz;

	if (peer != NULL && r->s->have_ca && SSL_get_verify_result(ssl) == X509_V_OK) {
		server_set_user_from_cert(r, peer);
		X509_free(peer);
		server_authorize(r);
		return;
	}
	if (peer != NULL)
		log_v(2, "server: client certificate not verified: %s",
		    X509_verify_cert_error_string(SSL_get_verify_result(ssl)));
	X509_free(peer);
	authz = evhttp_find_header(evhttp_request_get_input_headers(r->req), "Authorization");
	if (authz != NULL && strncasecmp(authz, "Bearer ", 7) == 0 && authz[7] != '\0' &&
	    r->s->api != NULL && r->s->d.cfg->authn_webhook) {
		r->token = xstrdup(authz + 7);
		server_token_review(r);
		return;
	}
	if (r->s->d.cfg->anonymous_auth) {
		r->user = xstrdup("system:anonymous");
		server_groups_add(&r->groups, "system:unauthenticated");
		server_authorize(r);
		return;
	}
	server_sreq_reply(r, 401, "Unauthorized");
}

/* ---- endpoints ---- */

static int
server_healthy(struct server *s, const char *check, char *why, size_t len)
{
	if (strcmp(check, "syncloop") == 0 && s->d.pleg != NULL)
		return pleg_healthy(s->d.pleg, now_mono_ms(), why, len);
	return 1;
}

static void
server_serve_healthz(struct sreq *r)
{
	static const char *checks[] = { "ping", "log", "syncloop" };
	const char        *sub = r->path + strlen("/healthz");
	char               why[256];
	size_t             i;
	int                ok = 1;
	struct evbuffer   *b;

	if (*sub == '/') {
		for (i = 0; i < nitems(checks); i++)
			if (strcmp(sub + 1, checks[i]) == 0)
				break;
		if (i == nitems(checks)) {
			server_sreq_reply(r, 404, "404 page not found\n");
			return;
		}
		if (!server_healthy(r->s, checks[i], why, sizeof(why))) {
			log_v(2, "server: healthz check %s failed: %s", checks[i], why);
			server_sreq_reply(r, 500, "internal server error: reason withheld\n");
		} else
			server_sreq_reply(r, 200, "ok");
		return;
	}
	b = evbuffer_new();
	for (i = 0; i < nitems(checks); i++) {
		if (server_healthy(r->s, checks[i], why, sizeof(why)))
			continue;
		ok = 0;
		log_v(2, "server: healthz check %s failed: %s", checks[i], why);
	}
	if (ok)
		evbuffer_add_printf(b, "ok");
	else {
		for (i = 0; i < nitems(checks); i++)
			evbuffer_add_printf(b, "[%c]%s %s\n",
			    server_healthy(r->s, checks[i], why, sizeof(why)) ? '+' : '-',
			    checks[i],
			    server_healthy(r->s, checks[i], why, sizeof(why))
			        ? "ok"
			        : "failed: reason withheld");
		evbuffer_add_printf(b, "healthz check failed\n");
	}
	evhttp_add_header(
	    evhttp_request_get_output_headers(r->req), "Content-Type", "text/plain; charset=utf-8");
	evhttp_send_reply(r->req, ok ? 200 : 500, NULL, b);
	evbuffer_free(b);
	r->req = NULL;
	server_sreq_free(r);
}

struct podlist_ctx {
	struct server *s;
	yajl_gen       g;
};

static void
server_podlist_one(const struct pod *pod, const char *source, int admitted, void *arg)
{
	struct podlist_ctx      *c = arg;
	const char              *fmt = NULL, *doc;
	size_t                   len = 0;
	struct json_doc         *jd;
	const struct json_limits lim = { 0, 0, 0 };

	(void)source;
	if (!admitted || (doc = podconfig_doc(c->s->d.config, pod->uid, &len, &fmt, NULL)) == NULL)
		return;
	if (fmt != NULL && strcmp(fmt, "yaml") == 0)
		jd = json_parse_yaml(doc, len, &lim, NULL, 0);
	else
		jd = json_parse(doc, len, &lim, NULL, 0);
	if (jd == NULL)
		return;
	json_gen_value(c->g, json_root(jd));
	json_free(jd);
}

static void
server_serve_json(struct sreq *r, yajl_gen g)
{
	size_t len;
	char  *body = json_gen_take(g, &len);

	yajl_gen_free(g);
	server_reply(r->req, 200, "application/json", body, len);
	free(body);
	r->req = NULL;
	server_sreq_free(r);
}

static void
server_serve_pods(struct sreq *r)
{
	struct podlist_ctx c = { r->s, json_gen_new(0) };

	yajl_gen_map_open(c.g);
	json_gen_kv_str(c.g, "kind", "PodList");
	json_gen_kv_str(c.g, "apiVersion", "v1");
	json_gen_key(c.g, "metadata");
	yajl_gen_map_open(c.g);
	yajl_gen_map_close(c.g);
	json_gen_key(c.g, "items");
	yajl_gen_array_open(c.g);
	if (r->s->d.config != NULL)
		podconfig_foreach(r->s->d.config, server_podlist_one, &c);
	yajl_gen_array_close(c.g);
	yajl_gen_map_close(c.g);
	server_serve_json(r, c.g);
}

static void
server_runningpod_one(const struct rt_pod_status *st, void *arg)
{
	yajl_gen g = arg;
	size_t   i;
	int      running = 0;

	for (i = 0; i < st->ncontainers; i++)
		running |= st->containers[i].state == RT_RUNNING;
	for (i = 0; i < st->nsandboxes; i++)
		running |= st->sandboxes[i].state == RT_SB_READY;
	if (!running)
		return;
	yajl_gen_map_open(g);
	json_gen_key(g, "metadata");
	yajl_gen_map_open(g);
	json_gen_kv_str(g, "name", st->name);
	json_gen_kv_str(g, "namespace", st->ns);
	json_gen_kv_str(g, "uid", st->uid);
	yajl_gen_map_close(g);
	json_gen_key(g, "spec");
	yajl_gen_map_open(g);
	json_gen_key(g, "containers");
	yajl_gen_array_open(g);
	for (i = 0; i < st->ncontainers; i++) {
		if (st->containers[i].state != RT_RUNNING)
			continue;
		yajl_gen_map_open(g);
		json_gen_kv_str(g, "name", st->containers[i].name);
		json_gen_kv_str(g, "image", st->containers[i].image);
		yajl_gen_map_close(g);
	}
	yajl_gen_array_close(g);
	yajl_gen_map_close(g);
	json_gen_key(g, "status");
	yajl_gen_map_open(g);
	yajl_gen_map_close(g);
	yajl_gen_map_close(g);
}

static void
server_serve_runningpods(struct sreq *r)
{
	yajl_gen g = json_gen_new(0);

	yajl_gen_map_open(g);
	json_gen_kv_str(g, "kind", "PodList");
	json_gen_kv_str(g, "apiVersion", "v1");
	json_gen_key(g, "metadata");
	yajl_gen_map_open(g);
	yajl_gen_map_close(g);
	json_gen_key(g, "items");
	yajl_gen_array_open(g);
	if (r->s->d.cache != NULL)
		podcache_foreach(r->s->d.cache, server_runningpod_one, g);
	yajl_gen_array_close(g);
	yajl_gen_map_close(g);
	server_serve_json(r, g);
}

struct count_ctx {
	size_t pods;
	size_t states[4];
};

static void
server_count_one(const struct rt_pod_status *st, void *arg)
{
	struct count_ctx *c = arg;
	size_t            i;
	int               running = 0;

	for (i = 0; i < st->nsandboxes; i++)
		running |= st->sandboxes[i].state == RT_SB_READY;
	c->pods += running;
	for (i = 0; i < st->ncontainers; i++)
		if ((unsigned)st->containers[i].state < 4)
			c->states[st->containers[i].state]++;
}

static void
server_process_metrics(struct evbuffer *b)
{
	struct rusage ru;
	long          pages = 0, rss = 0;
	FILE         *fp = fopen("/proc/self/statm", "re");

	if (fp != NULL) {
		if (fscanf(fp, "%ld %ld", &pages, &rss) != 2)
			rss = 0;
		fclose(fp);
	}
	prom_family(b, "process_resident_memory_bytes", "Resident memory size in bytes.", "gauge");
	prom_sample(b, "process_resident_memory_bytes", NULL, (double)rss * (double)getpagesize());
	getrusage(RUSAGE_SELF, &ru);
	prom_family(b, "process_cpu_seconds_total",
	    "Total user and system CPU time spent in seconds.", "counter");
	prom_sample(b, "process_cpu_seconds_total", NULL,
	    (double)(ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) +
	        (double)(ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) / 1e6);
}

static void
server_serve_metrics(struct sreq *r)
{
	static const char *states[4] = { "created", "running", "exited", "unknown" };
	struct server     *s = r->s;
	struct evbuffer   *b = evbuffer_new();
	struct count_ctx   c;
	struct cri_stats   cs;
	char               lab[256];
	size_t             i;

	if (strcmp(r->path, "/metrics/resource") == 0) {
		evbuffer_free(b);
		server_serve_metrics_resource(r);
		return;
	}
	if (strcmp(r->path, "/metrics") != 0) {
		evbuffer_free(b);
		server_sreq_reply(r, 404, "404 page not found\n");
		return;
	}
	memset(&c, 0, sizeof(c));
	if (s->d.cache != NULL)
		podcache_foreach(s->d.cache, server_count_one, &c);
	prom_family(
	    b, "kubelet_node_name", "[ALPHA] The node's name. The count is always 1.", "gauge");
	lab[0] = '\0';
	prom_label(lab, sizeof(lab), "node", s->d.cfg->node_name);
	prom_sample(b, "kubelet_node_name", lab, 1);
	prom_family(b, "kubelet_running_pods",
	    "[ALPHA] Number of pods that have a running pod sandbox", "gauge");
	prom_sample(b, "kubelet_running_pods", NULL, (double)c.pods);
	prom_family(b, "kubelet_running_containers",
	    "[ALPHA] Number of containers currently running", "gauge");
	for (i = 0; i < 4; i++) {
		lab[0] = '\0';
		prom_label(lab, sizeof(lab), "container_state", states[i]);
		prom_sample(b, "kubelet_running_containers", lab, (double)c.states[i]);
	}
	prom_hist_write(b, "kubelet_pleg_relist_duration_seconds",
	    "[ALPHA] Duration in seconds for relisting pods in PLEG.", &s->relist_duration);
	prom_hist_write(b, "kubelet_pleg_relist_interval_seconds",
	    "[ALPHA] Interval in seconds between relisting in PLEG.", &s->relist_interval);
	prom_family(b, "kubelet_pleg_last_seen_seconds",
	    "[ALPHA] Timestamp in seconds when PLEG was last seen active.", "gauge");
	prom_sample(
	    b, "kubelet_pleg_last_seen_seconds", NULL, (double)s->last_relist_wall_ms / 1000);
	prom_family(b, "kubelet_started_containers_total",
	    "[ALPHA] Cumulative number of containers started", "counter");
	prom_sample(b, "kubelet_started_containers_total", "container_type=\"container\"",
	    (double)s->started_containers);
	prom_family(b, "kubelet_started_pods_total", "[ALPHA] Cumulative number of pods started",
	    "counter");
	prom_sample(b, "kubelet_started_pods_total", NULL, (double)s->started_pods);
	if (s->d.cri != NULL) {
		cri_stats(s->d.cri, &cs);
		prom_family(b, "klet_cri_calls_total", "CRI calls started.", "counter");
		prom_sample(b, "klet_cri_calls_total", NULL, (double)cs.calls);
		prom_family(
		    b, "klet_cri_errors_total", "CRI calls that ended with an error.", "counter");
		prom_sample(b, "klet_cri_errors_total", NULL, (double)cs.errors);
		prom_family(b, "klet_cri_in_flight", "CRI calls in flight.", "gauge");
		prom_sample(b, "klet_cri_in_flight", NULL, (double)cs.in_flight);
	}
	prom_family(b, "klet_server_requests_total", "Requests to the node server.", "counter");
	prom_sample(b, "klet_server_requests_total", NULL, (double)s->requests);
	prom_family(b, "klet_server_rejected_total",
	    "Requests refused with 429 (too many in service).", "counter");
	prom_sample(b, "klet_server_rejected_total", NULL, (double)s->rejected_429);
	prom_family(b, "klet_uptime_seconds", "Seconds since kletd started.", "gauge");
	prom_sample(
	    b, "klet_uptime_seconds", NULL, (double)(now_mono_ms() - s->d.started_ms) / 1000);
	{ /* the eviction and image GC managers */
		struct eviction_view ev;
		struct imagegc_view  ig;

		if (s->d.eviction != NULL)
			eviction_view(s->d.eviction, &ev);
		if (s->d.imagegc != NULL)
			imagegc_view(s->d.imagegc, &ig);
		gcmetrics_write(
		    b, s->d.eviction != NULL ? &ev : NULL, s->d.imagegc != NULL ? &ig : NULL);
	}
	server_process_metrics(b);
	evhttp_add_header(evhttp_request_get_output_headers(r->req), "Content-Type",
	    "text/plain; version=0.0.4; charset=utf-8");
	evhttp_send_reply(r->req, 200, NULL, b);
	evbuffer_free(b);
	r->req = NULL;
	server_sreq_free(r);
}

/* ---- /metrics/resource and /stats/summary: from the cgroups ---- */

struct res_ctx {
	struct server   *s;
	struct evbuffer *b;
	yajl_gen         g;
	char            *kubepods; /* relative to the hierarchies' root */
	int64_t          now_ms;
};

static void
server_res_labels(char *lab, size_t len, const char *ctr, const char *ns, const char *pod)
{
	lab[0] = '\0';
	if (ctr != NULL)
		prom_label(lab, len, "container", ctr);
	prom_label(lab, len, "namespace", ns != NULL ? ns : "");
	prom_label(lab, len, "pod", pod != NULL ? pod : "");
}

static void
server_res_sample(struct evbuffer *b, const char *name, const char *lab, double v, int64_t ms)
{
	char num[64];

	prom_number(num, sizeof(num), v);
	evbuffer_add_printf(b, "%s{%s} %s %lld\n", name, lab, num, (long long)ms);
}

static void
server_serve_metrics_resource(struct sreq *r)
{
	static const struct {
		const char *name, *help;
	} fams[] = {
		{ "container_cpu_usage_seconds_total",
		    "[STABLE] Cumulative cpu time consumed by the container in core-seconds" },
		{ "container_memory_working_set_bytes",
		    "[STABLE] Current working set of the container in bytes" },
		{ "container_start_time_seconds",
		    "[STABLE] Start time of the container since unix epoch in seconds" },
		{ "pod_cpu_usage_seconds_total",
		    "[STABLE] Cumulative cpu time consumed by the pod in core-seconds" },
		{ "pod_memory_working_set_bytes",
		    "[STABLE] Current working set of the pod in bytes" },
	};
	struct res_ctx  c = { r->s, evbuffer_new(), NULL, cg_kubepods_rel(r->s->d.cfg->cgroup_root),
		 now_wall_ms() };
	struct cg_usage node;
	char            num[64];
	size_t          i, j;
	int             err = cg_read(CG_MOUNT, "", &node) == -1;
	struct cg_rows  rows = { NULL, 0 };

	prom_family(c.b, "node_cpu_usage_seconds_total",
	    "[STABLE] Cumulative cpu time consumed by the node in core-seconds", "counter");
	prom_number(num, sizeof(num), (double)node.cpu_ns / 1e9);
	evbuffer_add_printf(
	    c.b, "node_cpu_usage_seconds_total %s %lld\n", num, (long long)c.now_ms);
	prom_family(c.b, "node_memory_working_set_bytes",
	    "[STABLE] Current working set of the node in bytes", "gauge");
	prom_number(num, sizeof(num), (double)node.working_set_bytes);
	evbuffer_add_printf(
	    c.b, "node_memory_working_set_bytes %s %lld\n", num, (long long)c.now_ms);
	cg_rows_collect(r->s->d.cache, CG_MOUNT, c.kubepods, &rows);
	for (i = 0; i < nitems(fams); i++) {
		int pod_level = strncmp(fams[i].name, "pod_", 4) == 0;
		int cpu = strstr(fams[i].name, "cpu") != NULL;

		prom_family(c.b, fams[i].name, fams[i].help,
		    strstr(fams[i].name, "_total") != NULL ? "counter" : "gauge");
		for (j = 0; j < rows.n; j++) {
			const struct cg_row *w = &rows.v[j];
			char                 lab[512];
			double               v;

			if ((w->ct == NULL) != pod_level)
				continue;
			server_res_labels(lab, sizeof(lab), w->ct != NULL ? w->ct->name : NULL,
			    w->st->ns, w->st->name);
			if (i == 2)
				v = (double)(w->ct->started_at / 1000000000LL);
			else
				v = cpu ? (double)w->u.cpu_ns / 1e9
				        : (double)w->u.working_set_bytes;
			server_res_sample(c.b, fams[i].name, lab, v, c.now_ms);
		}
	}
	cg_rows_clear(&rows);
	prom_family(c.b, "scrape_error",
	    "[ALPHA] 1 if there was an error while getting container metrics, 0 otherwise",
	    "gauge");
	prom_sample(c.b, "scrape_error", NULL, err);
	evhttp_add_header(evhttp_request_get_output_headers(r->req), "Content-Type",
	    "text/plain; version=0.0.4; charset=utf-8");
	evhttp_send_reply(r->req, 200, NULL, c.b);
	evbuffer_free(c.b);
	free(c.kubepods);
	r->req = NULL;
	server_sreq_free(r);
}

static void
server_summary_usage(yajl_gen g, const struct cg_usage *u, const char *time)
{
	json_gen_key(g, "cpu");
	yajl_gen_map_open(g);
	json_gen_kv_str(g, "time", time);
	json_gen_kv_int(g, "usageCoreNanoSeconds", (int64_t)u->cpu_ns);
	yajl_gen_map_close(g);
	json_gen_key(g, "memory");
	yajl_gen_map_open(g);
	json_gen_kv_str(g, "time", time);
	json_gen_kv_int(g, "usageBytes", (int64_t)u->usage_bytes);
	json_gen_kv_int(g, "workingSetBytes", (int64_t)u->working_set_bytes);
	yajl_gen_map_close(g);
}

static void
server_rfc3339_ns(int64_t ns, char *buf, size_t len)
{
	time_t    t = (time_t)(ns / 1000000000LL);
	struct tm tm;

	gmtime_r(&t, &tm);
	strftime(buf, len, "%Y-%m-%dT%H:%M:%SZ", &tm);
}

static void
server_summary_pod(const struct rt_pod_status *st, void *arg)
{
	struct res_ctx *c = arg;
	char            rel[512], crel[640], now[64], ts[64];
	struct cg_usage pu, cu;
	size_t          i;

	if (!cg_pod_running(st) ||
	    cg_pod_read(CG_MOUNT, c->kubepods, st->uid, rel, sizeof(rel), &pu) == -1)
		return;
	server_rfc3339_ns(c->now_ms * 1000000LL, now, sizeof(now));
	yajl_gen_map_open(c->g);
	json_gen_key(c->g, "podRef");
	yajl_gen_map_open(c->g);
	json_gen_kv_str(c->g, "name", st->name);
	json_gen_kv_str(c->g, "namespace", st->ns);
	json_gen_kv_str(c->g, "uid", st->uid);
	yajl_gen_map_close(c->g);
	if (st->nsandboxes > 0) {
		server_rfc3339_ns(st->sandboxes[0].created_at, ts, sizeof(ts));
		json_gen_kv_str(c->g, "startTime", ts);
	}
	json_gen_key(c->g, "containers");
	yajl_gen_array_open(c->g);
	for (i = 0; i < st->ncontainers; i++) {
		const struct rt_container *ct = &st->containers[i];

		snprintf(crel, sizeof(crel), "%s/%s", rel, ct->id);
		if (ct->state != RT_RUNNING || cg_read(CG_MOUNT, crel, &cu) == -1)
			continue;
		yajl_gen_map_open(c->g);
		json_gen_kv_str(c->g, "name", ct->name);
		server_rfc3339_ns(ct->started_at, ts, sizeof(ts));
		json_gen_kv_str(c->g, "startTime", ts);
		server_summary_usage(c->g, &cu, now);
		yajl_gen_map_close(c->g);
	}
	yajl_gen_array_close(c->g);
	server_summary_usage(c->g, &pu, now);
	yajl_gen_map_close(c->g);
}

static void
server_serve_stats_summary(struct sreq *r)
{
	struct res_ctx c = { r->s, NULL, json_gen_new(0), cg_kubepods_rel(r->s->d.cfg->cgroup_root),
		now_wall_ms() };
	struct cg_usage node;
	char            now[64];

	if (strcmp(r->path, "/stats/summary") != 0) {
		yajl_gen_free(c.g);
		free(c.kubepods);
		server_sreq_reply(r, 404, "404 page not found\n");
		return;
	}
	cg_read(CG_MOUNT, "", &node);
	server_rfc3339_ns(c.now_ms * 1000000LL, now, sizeof(now));
	yajl_gen_map_open(c.g);
	json_gen_key(c.g, "node");
	yajl_gen_map_open(c.g);
	json_gen_kv_str(c.g, "nodeName", r->s->d.cfg->node_name);
	server_summary_usage(c.g, &node, now);
	yajl_gen_map_close(c.g);
	json_gen_key(c.g, "pods");
	yajl_gen_array_open(c.g);
	if (r->s->d.cache != NULL)
		podcache_foreach(r->s->d.cache, server_summary_pod, &c);
	yajl_gen_array_close(c.g);
	yajl_gen_map_close(c.g);
	free(c.kubepods);
	server_serve_json(r, c.g);
}

/* ---- /containerLogs ---- */

static void server_log_pump(struct sreq *);

/* The log reader's sink: an evbuffer. */
static void
server_log_sink_write(void *arg, const void *buf, size_t len)
{
	evbuffer_add(arg, buf, len);
}

static void
server_log_end(struct sreq *r)
{
	struct evbuffer      *b = evbuffer_new();
	struct logreader_sink sk = { server_log_sink_write, b };

	logreader_finish(r->lr, &sk);
	if (evbuffer_get_length(b) > 0 && !r->closed)
		evhttp_send_reply_chunk(r->req, b);
	evbuffer_free(b);
	evhttp_send_reply_end(r->req);
	r->req = NULL;
	server_sreq_free(r);
}

static void
server_log_drained(struct evhttp_connection *c, void *arg)
{
	struct sreq *r = arg;

	(void)c;
	r->waiting = 0;
	server_log_pump(r);
}

static void
server_log_tick(evutil_socket_t fd, short ev, void *arg)
{
	(void)fd;
	(void)ev;
	server_log_pump(arg);
}

static int
server_container_running(struct server *s, const char *uid, const char *cid)
{
	const struct rt_pod_status *st = podcache_get(s->d.cache, uid, NULL);
	size_t                      i;

	for (i = 0; st != NULL && i < st->ncontainers; i++)
		if (strcmp(st->containers[i].id, cid) == 0)
			return st->containers[i].state == RT_RUNNING;
	return 0;
}

static void
server_log_pump(struct sreq *r)
{
	struct evbuffer      *b;
	struct logreader_sink sk;
	enum logreader_rc     rc;

	if (r->waiting || r->closed)
		return;
	b = evbuffer_new();
	sk.write = server_log_sink_write;
	sk.arg = b;
	rc = logreader_step(r->lr, &sk, SERVER_LOG_CHUNK);
	if (rc == LOGREADER_EOF) {
		int rot = logreader_check_rotation(r->lr, &sk);

		if (rot == 1)
			rc = LOGREADER_MORE;
		else if (!server_container_running(r->s, r->uid, r->cid)) {
			/* exited: what it wrote last is read before the end */
			rc = logreader_step(r->lr, &sk, SERVER_LOG_CHUNK);
			if (rc == LOGREADER_EOF)
				rc = LOGREADER_DONE;
		}
	}
	if (!r->started) {
		evhttp_add_header(
		    evhttp_request_get_output_headers(r->req), "Content-Type", "text/plain");
		evhttp_send_reply_start(r->req, 200, "OK");
		r->started = 1;
		if (r->follow) {
			/* A quiet container is no idle client: only a client that stops
			 * reading (a write stalled that long) is dropped. */
			struct timeval wt = ms_to_tv(r->s->idle_ms);

			bufferevent_set_timeouts(
			    evhttp_connection_get_bufferevent(r->conn), NULL, &wt);
		}
	}
	if (evbuffer_get_length(b) > 0) {
		r->waiting = 1;
		evhttp_send_reply_chunk_with_cb(r->req, b, server_log_drained, r);
	}
	evbuffer_free(b);
	if (rc == LOGREADER_DONE || rc == LOGREADER_ERROR) {
		if (rc == LOGREADER_ERROR)
			log_warnx(
			    "server: reading the log of container %s: %s", r->cid, strerror(errno));
		server_log_end(r);
		return;
	}
	if (r->waiting)
		return;
	if (rc == LOGREADER_MORE)
		event_active(r->tick, EV_TIMEOUT, 0); /* the next chunk on the next turn */
	else {
		struct timeval tv = ms_to_tv(SERVER_FOLLOW_POLL_MS);

		evtimer_add(r->tick, &tv);
	}
}

struct find_pod {
	const char       *ns, *name;
	const struct pod *pod; /* a reference */
};

static void
server_find_pod_one(const struct pod *pod, const char *source, int admitted, void *arg)
{
	struct find_pod *f = arg;

	(void)source;
	(void)admitted;
	if (f->pod != NULL || !streq_null(pod->ns, f->ns) || !streq_null(pod->name, f->name))
		return;
	f->pod = pod_ref(pod);
}

static void
server_serve_logs(struct sreq *r)
{
	const char         *query = evhttp_uri_get_query(evhttp_request_get_evhttp_uri(r->req));
	char               *path = NULL, *msg = NULL, err[512];
	struct request_logs rl;
	struct find_pod     f;
	const struct rt_pod_status *st;
	const struct rt_container  *c;
	int                         rc;

	if (request_parse_logs(r->path, query, now_wall_ns(), &rl, &msg) == -1) {
		server_sreq_reply(r, 400, msg);
		free(msg);
		return;
	}
	memset(&f, 0, sizeof(f));
	f.ns = rl.ns;
	f.name = rl.pod;
	if (r->s->d.config != NULL)
		podconfig_foreach(r->s->d.config, server_find_pod_one, &f);
	if (f.pod == NULL) {
		msg = xsprintf("pod \"%s/%s\" does not exist", rl.ns, rl.pod);
		request_logs_clear(&rl);
		server_sreq_reply(r, 404, msg);
		free(msg);
		return;
	}
	st = r->s->d.cache != NULL ? podcache_get(r->s->d.cache, f.pod->uid, NULL) : NULL;
	rc = logrotate_container_log(r->s->d.cfg->pod_logs_dir, f.pod, st, rl.container,
	    rl.previous, &path, &c, err, sizeof(err));
	if (rc == -1) {
		int code = pod_find_container(f.pod, rl.container) == NULL ? 404 : 400;

		pod_unref(f.pod);
		request_logs_clear(&rl);
		server_sreq_reply(r, code, err);
		return;
	}
	r->cid = xstrdup(c->id);
	if (c->state != RT_RUNNING)
		rl.opts.follow = 0;
	r->uid = xstrdup(f.pod->uid);
	pod_unref(f.pod);
	r->follow = rl.opts.follow;
	r->lr = logreader_open(path, &rl.opts, err, sizeof(err));
	free(path);
	request_logs_clear(&rl);
	if (r->lr == NULL) {
		log_warnx("server: %s", err);
		server_sreq_reply(r, 500, err);
		return;
	}
	r->tick = evtimer_new(r->s->d.base, server_log_tick, r);
	server_log_pump(r);
}

/* ---- /exec, /attach, /portForward: the runtime's streaming server, byte for byte ---- */

static void
server_tunnel_close(struct sreq *r)
{
	struct evhttp_connection *c = r->conn;

	if (r->up != NULL) {
		bufferevent_free(r->up);
		r->up = NULL;
	}
	r->req = NULL; /* freed with its connection */
	r->conn = NULL;
	if (c != NULL) {
		evhttp_connection_set_closecb(c, NULL, NULL);
		evhttp_connection_free(c);
	}
	server_sreq_free(r);
}

static struct bufferevent *
server_tunnel_other(struct sreq *r, struct bufferevent *b)
{
	return b == r->up ? r->down : r->up;
}

static void
server_tunnel_read(struct bufferevent *src, void *arg)
{
	struct sreq        *r = arg;
	struct bufferevent *dst = server_tunnel_other(r, src);

	if (r->closing) {
		evbuffer_drain(
		    bufferevent_get_input(src), evbuffer_get_length(bufferevent_get_input(src)));
		return;
	}
	evbuffer_add_buffer(bufferevent_get_output(dst), bufferevent_get_input(src));
	/* Back-pressure: a side that does not read stops the other from being read. */
	if (evbuffer_get_length(bufferevent_get_output(dst)) >= TUNNEL_HIGH)
		bufferevent_disable(src, EV_READ);
}

/* dst's output drained (the write low watermark is 0). */
static void
server_tunnel_write(struct bufferevent *dst, void *arg)
{
	struct sreq *r = arg;

	if (r->closing) {
		server_tunnel_close(r);
		return;
	}
	bufferevent_enable(server_tunnel_other(r, dst), EV_READ);
}

static void
server_tunnel_event(struct bufferevent *b, short what, void *arg)
{
	struct sreq        *r = arg;
	struct bufferevent *other = server_tunnel_other(r, b);

	if (what & BEV_EVENT_CONNECTED)
		return;
	if (what & BEV_EVENT_TIMEOUT)
		log_v(
		    2, "server: %s idle for --streaming-connection-idle-timeout; closed", r->path);
	else if (what & BEV_EVENT_ERROR)
		log_v(2, "server: %s: %s side failed", r->path, b == r->up ? "runtime" : "client");
	r->closing = 1;
	bufferevent_disable(b, EV_READ | EV_WRITE);
	if (!(what & BEV_EVENT_ERROR))
		evbuffer_add_buffer(bufferevent_get_output(other), bufferevent_get_input(b));
	bufferevent_disable(other, EV_READ);
	if (evbuffer_get_length(bufferevent_get_output(other)) == 0)
		server_tunnel_close(r);
	else
		bufferevent_enable(other, EV_WRITE); /* server_tunnel_write closes once drained */
}

/* The request goes to the runtime's URL as it came (upgrade headers and all), then the
 * connection is a pipe both ways, as the kubelet's UpgradeAwareHandler does. */
static void
server_tunnel_start(struct sreq *r, const char *url)
{
	struct evhttp_uri      *u = evhttp_uri_parse(url);
	struct evkeyvalq       *in = evhttp_request_get_input_headers(r->req);
	struct evkeyval        *h;
	struct sockaddr_storage ss;
	int                     sslen = sizeof(ss), port;
	const char             *host, *path, *query;
	char                   *hostport = NULL;
	struct evbuffer        *out;
	struct timeval          idle = ms_to_tv(r->s->d.cfg->streaming_idle_ms);
	const char             *scheme;

	scheme = u != NULL ? evhttp_uri_get_scheme(u) : NULL;
	host = u != NULL ? evhttp_uri_get_host(u) : NULL;
	port = u != NULL ? evhttp_uri_get_port(u) : -1;
	if (host == NULL || scheme == NULL || strcmp(scheme, "http") != 0) {
		log_warnx(
		    "server: the runtime's streaming URL %s is not http://HOST:PORT/...", url);
		if (u != NULL)
			evhttp_uri_free(u);
		server_sreq_reply(r, 500, "unsupported streaming URL from the runtime");
		return;
	}
	hostport =
	    xsprintf(strchr(host, ':') != NULL ? "[%s]:%d" : "%s:%d", host, port > 0 ? port : 80);
	memset(&ss, 0, sizeof(ss));
	if (evutil_parse_sockaddr_port(hostport, (struct sockaddr *)&ss, &sslen) == -1) {
		log_warnx("server: the runtime's streaming URL %s: not an IP address", url);
		free(hostport);
		evhttp_uri_free(u);
		server_sreq_reply(r, 500, "unsupported streaming URL from the runtime");
		return;
	}
	r->up = bufferevent_socket_new(r->s->d.base, -1, BEV_OPT_CLOSE_ON_FREE);
	out = bufferevent_get_output(r->up);
	path = evhttp_uri_get_path(u);
	query = evhttp_uri_get_query(u);
	evbuffer_add_printf(out, "%s %s%s%s HTTP/1.1\r\nHost: %s\r\n",
	    evhttp_request_get_command(r->req) == EVHTTP_REQ_POST ? "POST" : "GET",
	    path != NULL && *path != '\0' ? path : "/", query != NULL ? "?" : "",
	    query != NULL ? query : "", hostport);
	TAILQ_FOREACH(h, in, next)
	{
		if (strcasecmp(h->key, "Host") == 0 || strcasecmp(h->key, "Authorization") == 0)
			continue;
		evbuffer_add_printf(out, "%s: %s\r\n", h->key, h->value);
	}
	evbuffer_add(out, "\r\n", 2);
	evbuffer_add_buffer(out, evhttp_request_get_input_buffer(r->req));
	free(hostport);
	evhttp_uri_free(u);
	bufferevent_setcb(r->up, server_tunnel_read, server_tunnel_write, server_tunnel_event, r);
	bufferevent_set_timeouts(r->up, &idle, NULL);
	if (bufferevent_socket_connect(r->up, (struct sockaddr *)&ss, sslen) == -1) {
		log_warnx("server: connecting to the runtime's streaming server %s failed", url);
		server_sreq_reply(r, 502, "cannot reach the runtime's streaming server");
		return;
	}
	bufferevent_enable(r->up, EV_READ | EV_WRITE);
	/* Take the client's connection over from evhttp. */
	r->down = evhttp_connection_get_bufferevent(r->conn);
	bufferevent_setcb(r->down, server_tunnel_read, server_tunnel_write, server_tunnel_event, r);
	bufferevent_setwatermark(r->down, EV_WRITE, 0, 0);
	bufferevent_set_timeouts(r->down, &idle, NULL);
	bufferevent_enable(r->down, EV_READ | EV_WRITE);
	if (evbuffer_get_length(bufferevent_get_input(r->down)) > 0)
		server_tunnel_read(r->down, r);
	log_v(2, "server: %s streaming to the runtime", r->path);
}

static void
server_on_stream_url(int code, const char *msg, const char *url, struct sreq *r)
{
	r->ccall = NULL;
	if (r->closed) { /* the client went away meanwhile */
		server_sreq_reply(r, 500, "gone");
		return;
	}
	if (code != 0 || url == NULL || *url == '\0') {
		char *m = xsprintf("the runtime refused the session: %s", msg != NULL ? msg : "");

		log_v(2, "server: %s: %s", r->path, m);
		server_sreq_reply(r, 500, m);
		free(m);
		return;
	}
	server_tunnel_start(r, url);
}

static void
server_on_exec(int code, const char *msg, const Runtime__V1__ExecResponse *resp, void *arg)
{
	server_on_stream_url(code, msg, resp != NULL ? resp->url : NULL, arg);
}

static void
server_on_attach(int code, const char *msg, const Runtime__V1__AttachResponse *resp, void *arg)
{
	server_on_stream_url(code, msg, resp != NULL ? resp->url : NULL, arg);
}

static void
server_on_port_forward(
    int code, const char *msg, const Runtime__V1__PortForwardResponse *resp, void *arg)
{
	server_on_stream_url(code, msg, resp != NULL ? resp->url : NULL, arg);
}

static void
server_serve_stream(struct sreq *r, enum request_route route)
{
	const char           *query = evhttp_uri_get_query(evhttp_request_get_evhttp_uri(r->req));
	char                 *msg = NULL;
	size_t                i;
	struct request_stream rs;
	struct find_pod       f;
	const struct rt_pod_status *st;
	const char                 *target = NULL;

	if (request_parse_stream(route, r->path, query, &rs, &msg) == -1) {
		server_sreq_reply(r, 400, msg);
		free(msg);
		return;
	}
	memset(&f, 0, sizeof(f));
	f.ns = rs.ns;
	f.name = rs.pod;
	if (r->s->d.config != NULL)
		podconfig_foreach(r->s->d.config, server_find_pod_one, &f);
	if (f.pod == NULL || (rs.uid != NULL && !streq_null(f.pod->uid, rs.uid))) {
		msg = xsprintf("pod does not exist");
		goto notfound;
	}
	st = r->s->d.cache != NULL ? podcache_get(r->s->d.cache, f.pod->uid, NULL) : NULL;
	if (route == REQUEST_PORTFORWARD) {
		for (i = 0; st != NULL && i < st->nsandboxes && target == NULL; i++)
			if (st->sandboxes[i].state == RT_SB_READY)
				target = st->sandboxes[i].id;
		if (target == NULL) {
			msg = xsprintf("pod %s/%s has no running sandbox", rs.ns, rs.pod);
			goto notfound;
		}
	} else {
		for (i = 0; st != NULL && i < st->ncontainers && target == NULL; i++)
			if (streq_null(st->containers[i].name, rs.container) &&
			    st->containers[i].state == RT_RUNNING)
				target = st->containers[i].id;
		if (target == NULL) {
			msg = xsprintf("container not found (\"%s\")", rs.container);
			goto notfound;
		}
	}
	if (route == REQUEST_EXEC) {
		Runtime__V1__ExecRequest er = RUNTIME__V1__EXEC_REQUEST__INIT;

		er.container_id = (char *)target;
		er.cmd = rs.cmd;
		er.n_cmd = rs.ncmd;
		er.tty = rs.tty;
		er.stdin = rs.in;
		er.stdout = rs.out;
		er.stderr = rs.err;
		r->ccall = cri_exec(
		    r->s->d.cri, &er, r->s->d.cfg->runtime_timeout_ms, server_on_exec, r, r);
	} else if (route == REQUEST_ATTACH) {
		Runtime__V1__AttachRequest ar = RUNTIME__V1__ATTACH_REQUEST__INIT;

		ar.container_id = (char *)target;
		ar.tty = rs.tty;
		ar.stdin = rs.in;
		ar.stdout = rs.out;
		ar.stderr = rs.err;
		r->ccall = cri_attach(
		    r->s->d.cri, &ar, r->s->d.cfg->runtime_timeout_ms, server_on_attach, r, r);
	} else {
		Runtime__V1__PortForwardRequest pr = RUNTIME__V1__PORT_FORWARD_REQUEST__INIT;

		pr.pod_sandbox_id = (char *)target;
		pr.port = rs.ports;
		pr.n_port = rs.nports;
		r->ccall = cri_port_forward(r->s->d.cri, &pr, r->s->d.cfg->runtime_timeout_ms,
		    server_on_port_forward, r, r);
	}
	pod_unref(f.pod);
	request_stream_clear(&rs);
	return;
notfound:
	pod_unref(f.pod);
	request_stream_clear(&rs);
	server_sreq_reply(r, 404, msg);
	free(msg);
}

/* After authentication and authorization. */
static void
server_serve(struct sreq *r)
{
	enum request_route route;

	if (r->closed) { /* went away while its credentials were reviewed */
		server_sreq_reply(r, 500, "gone");
		return;
	}
	route = request_route(
	    r->path, evhttp_request_get_command(r->req), r->l->tls, r->l->healthz_only);
	switch (route) {
	case REQUEST_HEALTHZ:
		server_serve_healthz(r);
		break;
	case REQUEST_NOT_ALLOWED:
		server_sreq_reply(r, 405, "Method Not Allowed");
		break;
	case REQUEST_PODS:
		server_serve_pods(r);
		break;
	case REQUEST_RUNNINGPODS:
		server_serve_runningpods(r);
		break;
	case REQUEST_METRICS:
		server_serve_metrics(r);
		break;
	case REQUEST_STATS:
		server_serve_stats_summary(r);
		break;
	case REQUEST_LOGS:
		server_serve_logs(r);
		break;
	case REQUEST_EXEC:
	case REQUEST_ATTACH:
	case REQUEST_PORTFORWARD:
		server_serve_stream(r, route);
		break;
	case REQUEST_NOT_FOUND:
	default:
		server_sreq_reply(r, 404, "404 page not found\n");
		break;
	}
}

static void
server_on_request(struct evhttp_request *req, void *arg)
{
	struct listener *l = arg;
	struct server   *s = l->s;
	struct sreq     *r;
	const char      *raw = evhttp_uri_get_path(evhttp_request_get_evhttp_uri(req));
	char            *path;
	SSL             *ssl = NULL;

	s->requests++;
	if (l->tls && (ssl = server_tls_of(req)) == NULL) {
		/* Never served in plain on the HTTPS port. */
		log_v(2, "server: a request without TLS on the %s listener refused", l->what);
		evhttp_add_header(evhttp_request_get_output_headers(req), "Connection", "close");
		server_reply_text(req, 503, "Service Unavailable: TLS is unavailable");
		return;
	}
	if ((path = request_clean_path(raw)) == NULL) {
		log_v(2, "server: bad path %s", raw != NULL ? raw : "(none)");
		server_reply_text(req, 400, "Bad Request: invalid path");
		return;
	}
	if (s->streams >= s->d.cfg->server_max_streams) {
		s->rejected_429++;
		log_v(2, "server: %d requests in service: %s refused with 429", s->streams, path);
		evhttp_add_header(evhttp_request_get_output_headers(req), "Retry-After", "1");
		server_reply_text(req, 429, "Too Many Requests");
		free(path);
		return;
	}
	r = xcalloc(1, sizeof(*r));
	s->streams++;
	r->s = s;
	r->l = l;
	r->req = req;
	r->path = path;
	r->conn = evhttp_request_get_connection(req);
	evhttp_connection_set_closecb(r->conn, server_on_conn_close, r);
	auth_attributes(request_method_name(evhttp_request_get_command(req)), path, &r->attrs);
	log_v(4, "server: %s %s on %s", request_method_name(evhttp_request_get_command(req)), path,
	    l->what);
	if (ssl != NULL)
		server_authenticate(r, ssl);
	else
		server_serve(r);
}

/* ---- listeners ---- */

static void server_listener_try(struct listener *);

static void
server_on_retry(evutil_socket_t fd, short ev, void *arg)
{
	(void)fd;
	(void)ev;
	server_listener_try(arg);
}

static void
server_on_resume(evutil_socket_t fd, short ev, void *arg)
{
	struct listener *l = arg;

	(void)fd;
	(void)ev;
	if (l->bound != NULL)
		evconnlistener_enable(evhttp_bound_socket_get_listener(l->bound));
}

/* As tmux's server_accept: out of descriptors, stop accepting for a second. */
static void
server_on_accept_error(struct evconnlistener *lev, void *arg)
{
	struct listener *l = arg;
	struct timeval   tv = ms_to_tv(1000);
	int              e = EVUTIL_SOCKET_ERROR();

	if (e == EMFILE || e == ENFILE || e == ENOBUFS || e == ENOMEM) {
		log_warnx(
		    "server: %s accept: %s; not accepting for a second", l->what, strerror(e));
		evconnlistener_disable(lev);
		evtimer_add(l->resume, &tv);
	} else
		log_v(2, "server: %s accept: %s", l->what, strerror(e));
}

static void
server_listener_try(struct listener *l)
{
	struct sockaddr_storage ss;
	socklen_t               len = sizeof(ss);
	struct evconnlistener  *lev;
	struct timeval          tv = ms_to_tv(SERVER_RETRY_MS);
	char                    host[64];
	int                     fd;

	memset(&ss, 0, sizeof(ss));
	if (evutil_parse_sockaddr_port(l->addr, (struct sockaddr *)&ss, (int *)&len) == -1) {
		log_error("server: %s address %s is not an IP address", l->what, l->addr);
		return;
	}
	if (ss.ss_family == AF_INET)
		((struct sockaddr_in *)&ss)->sin_port = htons((uint16_t)l->port);
	else
		((struct sockaddr_in6 *)&ss)->sin6_port = htons((uint16_t)l->port);
	lev = evconnlistener_new_bind(l->s->d.base, NULL, NULL,
	    LEV_OPT_CLOSE_ON_FREE | LEV_OPT_REUSEABLE | LEV_OPT_CLOSE_ON_EXEC, 128,
	    (struct sockaddr *)&ss, (int)len);
	if (lev == NULL) {
		if (!l->failed_logged)
			log_error("server: %s listener on %s port %d: %s; retrying every %ds",
			    l->what, l->addr, l->port, strerror(errno), SERVER_RETRY_MS / 1000);
		l->failed_logged = 1;
		evtimer_add(l->retry, &tv);
		return;
	}
	l->bound = evhttp_bind_listener(l->http, lev);
	evconnlistener_set_error_cb(lev, server_on_accept_error);
	fd = evconnlistener_get_fd(lev);
	len = sizeof(ss);
	getsockname(fd, (struct sockaddr *)&ss, &len);
	if (ss.ss_family == AF_INET) {
		inet_ntop(AF_INET, &((struct sockaddr_in *)&ss)->sin_addr, host, sizeof(host));
		l->port = ntohs(((struct sockaddr_in *)&ss)->sin_port);
	} else {
		inet_ntop(AF_INET6, &((struct sockaddr_in6 *)&ss)->sin6_addr, host, sizeof(host));
		l->port = ntohs(((struct sockaddr_in6 *)&ss)->sin6_port);
	}
	log_info("server: serving %s on %s port %d", l->what, host, l->port);
}

static void
server_listener_add(
    struct server *s, const char *what, const char *addr, int port, int tls, int healthz_only)
{
	struct listener *l = &s->l[s->nl++];

	l->s = s;
	l->what = what;
	l->addr = xstrdup(addr);
	l->port = port;
	l->tls = tls;
	l->healthz_only = healthz_only;
	l->http = evhttp_new(s->d.base);
	evhttp_set_max_headers_size(l->http, REQUEST_MAX_HEADERS);
	evhttp_set_max_body_size(l->http, REQUEST_MAX_BODY);
	evhttp_set_timeout(l->http, (int)((s->idle_ms + 999) / 1000));
	evhttp_set_allowed_methods(l->http, REQUEST_METHODS);
	evhttp_set_default_content_type(l->http, "text/plain; charset=utf-8");
	evhttp_set_gencb(l->http, server_on_request, l);
	if (tls)
		evhttp_set_bevcb(l->http, server_tls_bev, s);
	/* A handler for its own accept error: the listener must not spin on EMFILE. */
	l->retry = evtimer_new(s->d.base, server_on_retry, l);
	l->resume = evtimer_new(s->d.base, server_on_resume, l);
	server_listener_try(l);
}

struct server *
server_new(const struct server_deps *d, char *err, size_t errlen)
{
	struct server            *s = xcalloc(1, sizeof(*s));
	const struct klet_config *cfg = d->cfg;

	s->d = *d;
	s->relist_duration.bounds = def_buckets;
	s->relist_duration.nbounds = nitems(def_buckets);
	s->relist_interval.bounds = def_buckets;
	s->relist_interval.nbounds = nitems(def_buckets);
	s->tokens = auth_cache_new(256);
	s->idle_ms = SERVER_TIMEOUT_S * 1000;
	{ /* tests: a short idle timeout (seconds) */
		const char *e = getenv("KLET_SERVER_IDLE_TIMEOUT_S");

		if (e != NULL && atoi(e) > 0)
			s->idle_ms = (int64_t)atoi(e) * 1000;
	}
	s->sars = auth_cache_new(256);
	if ((cfg->authn_webhook || cfg->authz_webhook) &&
	    (cfg->kubeconfig == NULL || *cfg->kubeconfig == '\0')) {
		snprintf(err, errlen,
		    "--authentication-token-webhook and --authorization-mode Webhook need "
		    "--kubeconfig");
		server_free(s);
		return NULL;
	}
	if ((cfg->authn_webhook || cfg->authz_webhook) && d->api != NULL)
		s->api = d->api;
	else if (cfg->authn_webhook || cfg->authz_webhook) {
		char               kerr[512];
		struct kubeconfig *kc = kubeconfig_load(cfg->kubeconfig, kerr, sizeof(kerr));

		if (kc != NULL)
			s->api = api_new(d->base, kc, NULL, kerr, sizeof(kerr));
		s->api_own = 1;
		kubeconfig_free(kc);
		if (s->api == NULL) {
			snprintf(err, errlen, "server webhooks: %s", kerr);
			server_free(s);
			return NULL;
		}
	}
	if (server_tls_check(cfg, err, errlen) == -1) {
		server_free(s);
		return NULL;
	}
	server_listener_add(s, "HTTPS", cfg->address, cfg->port, 1, 0);
	if (cfg->healthz_port > 0)
		server_listener_add(
		    s, "healthz", cfg->healthz_bind_address, cfg->healthz_port, 0, 1);
	if (cfg->read_only_port > 0)
		server_listener_add(s, "read-only", cfg->address, cfg->read_only_port, 0, 0);
	return s;
}

void
server_free(struct server *s)
{
	size_t i;

	if (s == NULL)
		return;
	for (i = 0; i < s->nl; i++) {
		evhttp_free(s->l[i].http); /* closes its connections; detached requests stay */
		event_free(s->l[i].retry);
		event_free(s->l[i].resume);
		free(s->l[i].addr);
	}
	if (s->api_own) /* a borrowed one: the connections' close freed its calls above */
		api_free(s->api);
	auth_cache_free(s->tokens);
	auth_cache_free(s->sars);
	if (s->ssl != NULL) /* OpenSSL may not be loaded without it */
		SSL_CTX_free(s->ssl);
	free(s);
}

int
server_port(const struct server *s)
{
	return s->nl > 0 ? s->l[0].port : 0;
}

void
server_relisted(struct server *s)
{
	struct pleg_stats st;
	int64_t           now = now_mono_ms();

	if (s == NULL || s->d.pleg == NULL)
		return;
	pleg_stats(s->d.pleg, &st);
	prom_hist_observe(&s->relist_duration, (double)st.last_duration_us / 1e6);
	if (s->last_relist_mono_ms > 0)
		prom_hist_observe(
		    &s->relist_interval, (double)(now - s->last_relist_mono_ms) / 1000);
	s->last_relist_mono_ms = now;
	s->last_relist_wall_ms = now_wall_ms();
}

void
server_started(struct server *s, int sandbox)
{
	if (s == NULL)
		return;
	if (sandbox)
		s->started_pods++;
	else
		s->started_containers++;
}
