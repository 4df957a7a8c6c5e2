/* bootstrap.c — see bootstrap.h. */
#include <sys/stat.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <event2/event.h>

#include "client/api.h"
#include "api/bootstrap.h"
#include "client/kubeconfig.h"
#include "core/json.h"
#include "core/log.h"
#include "core/ossl.h"
#include "core/util.h"

#define BS_CSR_PATH     "/apis/certificates.k8s.io/v1/certificatesigningrequests"
#define BS_POLL_MIN_MS  1000
#define BS_POLL_MAX_MS  5000
#define BS_TIMEOUT_MS   (15 * 60 * 1000)
#define BS_MAX_RESPONSE (1024 * 1024)

struct bootstrap {
	struct event_base *bs_base;
	struct kubeconfig *bs_kc; /* the credentials the CSR is sent with */
	struct api        *bs_api;
	struct api_call   *bs_call;
	struct event      *bs_timer;
	EVP_PKEY          *bs_key;
	char              *bs_csr_name;
	char              *bs_kubeconfig;
	char              *bs_pki;
	char              *bs_node;
	int64_t            bs_deadline_ms;
	int64_t            bs_poll_ms;
	bootstrap_done_fn  bs_cb;
	void              *bs_arg;
	int                bs_done;
};

static int64_t
bs_asn1_time(const ASN1_TIME *t)
{
	struct tm tm;

	if (t == NULL || ASN1_TIME_to_tm(t, &tm) != 1)
		return 0;
	return (int64_t)timegm(&tm);
}

int
bootstrap_needed(const char *path, int64_t now_s, int64_t min_left_s, int64_t *not_before_s,
    int64_t *not_after_s, char *why, size_t whylen)
{
	struct kubeconfig *kc;
	char               err[512];
	BIO               *b = NULL;
	X509              *x = NULL;
	int64_t            nb, na;
	int                rc = 1;

	if (not_before_s != NULL)
		*not_before_s = 0;
	if (not_after_s != NULL)
		*not_after_s = 0;
	if (access(path, F_OK) == -1) {
		snprintf(why, whylen, "%s does not exist", path);
		return 1;
	}
	kc = kubeconfig_load(path, err, sizeof(err));
	if (kc == NULL || ossl_load(err, sizeof(err)) == -1) {
		snprintf(why, whylen, "%s", err);
		kubeconfig_free(kc);
		return 1;
	}
	if (kc->cert_pem != NULL)
		b = BIO_new_mem_buf(kc->cert_pem, (int)kc->cert_pem_len);
	else if (kc->cert_file != NULL)
		b = BIO_new_file(kc->cert_file, "r");
	if (b == NULL) {
		snprintf(why, whylen, "%s: no client certificate%s%s", path,
		    kc->cert_file != NULL ? " readable at " : "",
		    kc->cert_file != NULL ? kc->cert_file : "");
		goto out;
	}
	x = PEM_read_bio_X509(b, NULL, NULL, NULL);
	if (x == NULL) {
		snprintf(why, whylen, "%s: the client certificate cannot be read", path);
		goto out;
	}
	nb = bs_asn1_time(X509_get0_notBefore(x));
	na = bs_asn1_time(X509_get0_notAfter(x));
	if (not_before_s != NULL)
		*not_before_s = nb;
	if (not_after_s != NULL)
		*not_after_s = na;
	if (na <= now_s)
		snprintf(why, whylen, "%s: the client certificate expired", path);
	else if (na - now_s < min_left_s)
		snprintf(why, whylen, "%s: the client certificate expires in %llds", path,
		    (long long)(na - now_s));
	else
		rc = 0;
out:
	X509_free(x);
	BIO_free(b);
	kubeconfig_free(kc);
	return rc;
}

char *
bootstrap_make_csr(const char *node, void **key_out)
{
	EVP_PKEY  *key = NULL;
	X509_REQ  *req = NULL;
	X509_NAME *nm;
	BIO       *b = NULL;
	char      *cn = NULL, *pem = NULL, *p, err[512];
	long       n;

	*key_out = NULL;
	if (ossl_load(err, sizeof(err)) == -1)
		return NULL;
	if ((key = EVP_EC_gen("P-256")) == NULL || (req = X509_REQ_new()) == NULL ||
	    (b = BIO_new(BIO_s_mem())) == NULL)
		goto out;
	cn = xsprintf("system:node:%s", node);
	nm = X509_REQ_get_subject_name(req);
	if (X509_REQ_set_version(req, 0) != 1 ||
	    X509_NAME_add_entry_by_txt(
	        nm, "O", MBSTRING_ASC, (const unsigned char *)"system:nodes", -1, -1, 0) != 1 ||
	    X509_NAME_add_entry_by_txt(nm, "CN", MBSTRING_ASC, (unsigned char *)cn, -1, -1, 0) !=
	        1 ||
	    X509_REQ_set_pubkey(req, key) != 1 || X509_REQ_sign(req, key, EVP_sha256()) <= 0 ||
	    PEM_write_bio_X509_REQ(b, req) != 1)
		goto out;
	n = BIO_get_mem_data(b, &p); /* not NUL-terminated */
	pem = xmalloc((size_t)n + 1);
	memcpy(pem, p, (size_t)n);
	pem[n] = '\0';
	*key_out = key;
	key = NULL;
out:
	free(cn);
	BIO_free(b);
	X509_REQ_free(req);
	EVP_PKEY_free(key);
	return pem;
}

int
bootstrap_csr_state(
    const char *json, size_t len, char **cert_pem, size_t *cert_len, char *why, size_t whylen)
{
	struct json_doc   *d = json_parse(json, len, NULL, why, whylen);
	const struct json *st, *conds, *c;
	const char        *type, *cert;
	size_t             i;
	int                rc = 0, approved = 0;

	*cert_pem = NULL;
	if (d == NULL)
		return -1;
	st = json_get(json_root(d), "status");
	conds = json_get(st, "conditions");
	for (i = 0; i < json_len(conds); i++) {
		c = json_index(conds, i);
		type = json_str(json_get(c, "type"));
		if (type == NULL)
			continue;
		if (strcmp(type, "Denied") == 0 || strcmp(type, "Failed") == 0) {
			snprintf(why, whylen, "certificate signing request %s: %s: %s", type,
			    json_str(json_get(c, "reason")) ? json_str(json_get(c, "reason")) : "",
			    json_str(json_get(c, "message")) ? json_str(json_get(c, "message"))
			                                     : "");
			rc = -1;
			goto out;
		}
		if (strcmp(type, "Approved") == 0)
			approved = 1;
	}
	cert = json_str(json_get(st, "certificate"));
	if (approved && cert != NULL && *cert != '\0') {
		*cert_pem = kubeconfig_base64_decode(cert, strlen(cert), cert_len);
		if (*cert_pem == NULL) {
			snprintf(why, whylen, "status.certificate: invalid base64");
			rc = -1;
			goto out;
		}
		rc = 1;
	}
out:
	json_free(d);
	return rc;
}

static void bs_finish(struct bootstrap *bs, int ok, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

static void
bs_finish(struct bootstrap *bs, int ok, const char *fmt, ...)
{
	char    why[1024] = "";
	va_list ap;

	if (bs->bs_done)
		return;
	bs->bs_done = 1;
	if (fmt != NULL) {
		va_start(ap, fmt);
		vsnprintf(why, sizeof(why), fmt, ap);
		va_end(ap);
	}
	evtimer_del(bs->bs_timer);
	bs->bs_cb(ok, why, bs->bs_arg);
}

/* A YAML double-quoted scalar. */
static void
bs_yaml_str(FILE *f, const char *s)
{
	fputc('"', f);
	for (; *s != '\0'; s++) {
		if (*s == '"' || *s == '\\')
			fputc('\\', f);
		fputc(*s, f);
	}
	fputc('"', f);
}

static char *
bs_base64(const char *in, size_t len)
{
	char *out = xmalloc(4 * ((len + 2) / 3) + 1);

	EVP_EncodeBlock((unsigned char *)out, (const unsigned char *)in, (int)len);
	return out;
}

/* The certificate and key in pki/kubelet-client-DATE.pem, kubelet-client-current.pem
 * pointing at it, and the kubeconfig. */
static int
bs_store(struct bootstrap *bs, const char *cert, size_t cert_len, char *why, size_t whylen)
{
	BIO      *kb = BIO_new(BIO_s_mem()), *cb = BIO_new_mem_buf(cert, (int)cert_len);
	X509     *x = cb != NULL ? PEM_read_bio_X509(cb, NULL, NULL, NULL) : NULL;
	char     *kp, *pem = NULL, *path = NULL, *cur = NULL, *tmp = NULL, *ca64 = NULL;
	char      stamp[32], *kcbuf = NULL;
	long      klen;
	size_t    kcbuflen = 0, n;
	time_t    now = time(NULL);
	struct tm tm;
	FILE     *f = NULL;
	int       rc = -1;

	if (x == NULL || X509_check_private_key(x, bs->bs_key) != 1) {
		snprintf(why, whylen, "the issued certificate does not match the request's key");
		goto out;
	}
	if (kb == NULL || PEM_write_bio_PrivateKey(kb, bs->bs_key, NULL, NULL, 0, NULL, NULL) != 1)
		goto out;
	klen = BIO_get_mem_data(kb, &kp); /* neither is NUL-terminated */
	pem = xmalloc(cert_len + 1 + (size_t)klen + 1);
	memcpy(pem, cert, cert_len);
	n = cert_len;
	if (cert_len > 0 && cert[cert_len - 1] != '\n')
		pem[n++] = '\n';
	memcpy(pem + n, kp, (size_t)klen);
	pem[n + (size_t)klen] = '\0';
	if (mkdirs(bs->bs_pki, 0700) == -1) {
		snprintf(why, whylen, "%s: %s", bs->bs_pki, strerror(errno));
		goto out;
	}
	gmtime_r(&now, &tm);
	strftime(stamp, sizeof(stamp), "%Y-%m-%d-%H-%M-%S", &tm);
	path = xsprintf("%s/kubelet-client-%s.pem", bs->bs_pki, stamp);
	cur = xsprintf("%s/kubelet-client-current.pem", bs->bs_pki);
	tmp = xsprintf("%s.tmp", cur);
	unlink(tmp);
	if (write_file_replace(path, pem, strlen(pem), 1, 0600) == -1 || symlink(path, tmp) == -1 ||
	    rename(tmp, cur) == -1) {
		snprintf(why, whylen, "%s: %s", path, strerror(errno));
		unlink(tmp);
		goto out;
	}
	f = open_memstream(&kcbuf, &kcbuflen);
	fprintf(f,
	    "apiVersion: v1\nkind: Config\nclusters:\n- name: default-cluster\n"
	    "  cluster:\n    server: ");
	bs_yaml_str(f, bs->bs_kc->server);
	if (bs->bs_kc->ca_pem != NULL) {
		ca64 = bs_base64(bs->bs_kc->ca_pem, bs->bs_kc->ca_pem_len);
		fprintf(f, "\n    certificate-authority-data: %s", ca64);
	} else if (bs->bs_kc->ca_file != NULL) {
		fprintf(f, "\n    certificate-authority: ");
		bs_yaml_str(f, bs->bs_kc->ca_file);
	}
	if (bs->bs_kc->tls_server_name != NULL) {
		fprintf(f, "\n    tls-server-name: ");
		bs_yaml_str(f, bs->bs_kc->tls_server_name);
	}
	fprintf(f,
	    "\ncontexts:\n- name: default-context\n  context:\n    cluster: default-cluster\n"
	    "    namespace: default\n    user: default-auth\n"
	    "current-context: default-context\nusers:\n- name: default-auth\n  user:\n"
	    "    client-certificate: ");
	bs_yaml_str(f, cur);
	fprintf(f, "\n    client-key: ");
	bs_yaml_str(f, cur);
	fputc('\n', f);
	fclose(f);
	f = NULL;
	if (write_file_replace(bs->bs_kubeconfig, kcbuf, kcbuflen, 1, 0600) == -1) {
		snprintf(why, whylen, "%s: %s", bs->bs_kubeconfig, strerror(errno));
		goto out;
	}
	log_info("bootstrap: client certificate for system:node:%s valid until %lld written "
	         "to %s; kubeconfig %s",
	    bs->bs_node, (long long)bs_asn1_time(X509_get0_notAfter(x)), path, bs->bs_kubeconfig);
	rc = 0;
out:
	if (rc == -1 && why[0] == '\0')
		snprintf(why, whylen, "cannot write the certificate and key");
	free(kcbuf);
	free(ca64);
	free(tmp);
	free(cur);
	free(path);
	free(pem);
	X509_free(x);
	BIO_free(cb);
	BIO_free(kb);
	return rc;
}

static void bs_poll(struct bootstrap *);

static void
bs_timer_cb(evutil_socket_t fd, short what, void *arg)
{
	(void)fd;
	(void)what;
	bs_poll(arg);
}

static void
bs_again(struct bootstrap *bs)
{
	struct timeval tv;

	if (now_mono_ms() >= bs->bs_deadline_ms) {
		bs_finish(bs, 0,
		    "certificate signing request %s was not issued within the timeout "
		    "(approve it with: kubectl certificate approve %s)",
		    bs->bs_csr_name != NULL ? bs->bs_csr_name : "?",
		    bs->bs_csr_name != NULL ? bs->bs_csr_name : "NAME");
		return;
	}
	tv = ms_to_tv(bs->bs_poll_ms);
	evtimer_add(bs->bs_timer, &tv);
	if (bs->bs_poll_ms < BS_POLL_MAX_MS)
		bs->bs_poll_ms =
		    bs->bs_poll_ms * 2 > BS_POLL_MAX_MS ? BS_POLL_MAX_MS : bs->bs_poll_ms * 2;
}

static void
bs_get_done(const struct api_response *r, void *arg)
{
	struct bootstrap *bs = arg;
	char              why[512] = "", *cert = NULL;
	size_t            cert_len = 0;
	int               st;

	bs->bs_call = NULL;
	if (r->status == 404) {
		bs_finish(bs, 0, "certificate signing request %s was deleted", bs->bs_csr_name);
		return;
	}
	if (r->status != 200) {
		log_warnx("bootstrap: reading certificate signing request %s: %d %s",
		    bs->bs_csr_name, r->status, r->message);
		bs_again(bs);
		return;
	}
	st = bootstrap_csr_state(r->body, r->len, &cert, &cert_len, why, sizeof(why));
	if (st < 0) {
		bs_finish(bs, 0, "%s", why);
	} else if (st == 0) {
		bs_again(bs);
	} else {
		why[0] = '\0';
		if (bs_store(bs, cert, cert_len, why, sizeof(why)) == 0)
			bs_finish(bs, 1, NULL);
		else
			bs_finish(bs, 0, "%s", why);
	}
	free(cert);
}

static void
bs_poll(struct bootstrap *bs)
{
	char *path = xsprintf(BS_CSR_PATH "/%s", bs->bs_csr_name);

	bs->bs_call =
	    api_request(bs->bs_api, "GET", path, NULL, NULL, 0, BS_MAX_RESPONSE, bs_get_done, bs);
	free(path);
}

static void
bs_create_done(const struct api_response *r, void *arg)
{
	struct bootstrap *bs = arg;
	struct json_doc  *d;
	const char       *name;
	char              err[256];

	bs->bs_call = NULL;
	if (r->status != 201 && r->status != 200) {
		bs_finish(bs, 0, "creating the certificate signing request: %d %s", r->status,
		    r->message[0] != '\0' ? r->message : "no answer");
		return;
	}
	d = json_parse(r->body, r->len, NULL, err, sizeof(err));
	name = json_str(json_get(json_get(json_root(d), "metadata"), "name"));
	if (name == NULL) {
		bs_finish(bs, 0, "the certificate signing request came back without a name");
		json_free(d);
		return;
	}
	bs->bs_csr_name = xstrdup(name);
	json_free(d);
	log_info("bootstrap: certificate signing request %s for system:node:%s created; waiting "
	         "for its approval",
	    bs->bs_csr_name, bs->bs_node);
	bs_again(bs);
}

struct bootstrap *
bootstrap_start(struct event_base *base, const struct bootstrap_opts *o, bootstrap_done_fn cb,
    void *arg, char *err, size_t errlen)
{
	struct bootstrap *bs;
	yajl_gen          g;
	char             *csr, *csr64, *body;
	void             *key;
	size_t            len;

	bs = xcalloc(1, sizeof(*bs));
	bs->bs_base = base;
	bs->bs_cb = cb;
	bs->bs_arg = arg;
	bs->bs_kubeconfig = xstrdup(o->kubeconfig);
	bs->bs_pki = xstrdup(o->pki_dir);
	bs->bs_node = xstrdup(o->node_name);
	bs->bs_poll_ms = BS_POLL_MIN_MS;
	bs->bs_deadline_ms = now_mono_ms() + (o->timeout_ms > 0 ? o->timeout_ms : BS_TIMEOUT_MS);
	bs->bs_timer = evtimer_new(base, bs_timer_cb, bs);
	bs->bs_kc = kubeconfig_load(o->credentials, err, errlen);
	if (bs->bs_kc == NULL || ossl_load(err, errlen) == -1)
		goto fail;
	bs->bs_api = api_new(base, bs->bs_kc, NULL, err, errlen);
	if (bs->bs_api == NULL)
		goto fail;
	csr = bootstrap_make_csr(o->node_name, &key);
	if (csr == NULL) {
		snprintf(err, errlen, "cannot make a key and certificate signing request");
		goto fail;
	}
	bs->bs_key = key;
	csr64 = bs_base64(csr, strlen(csr));
	g = json_gen_new(0);
	yajl_gen_map_open(g);
	json_gen_kv_str(g, "apiVersion", "certificates.k8s.io/v1");
	json_gen_kv_str(g, "kind", "CertificateSigningRequest");
	json_gen_key(g, "metadata");
	yajl_gen_map_open(g);
	json_gen_kv_str(g, "generateName", "csr-");
	yajl_gen_map_close(g);
	json_gen_key(g, "spec");
	yajl_gen_map_open(g);
	json_gen_kv_str(g, "request", csr64);
	json_gen_kv_str(g, "signerName", BOOTSTRAP_SIGNER);
	json_gen_key(g, "usages");
	yajl_gen_array_open(g);
	yajl_gen_string(g, (const unsigned char *)"digital signature", 17);
	yajl_gen_string(g, (const unsigned char *)"client auth", 11);
	yajl_gen_array_close(g);
	yajl_gen_map_close(g);
	yajl_gen_map_close(g);
	body = json_gen_take(g, &len);
	yajl_gen_free(g);
	bs->bs_call = api_request(bs->bs_api, "POST", BS_CSR_PATH, "application/json", body, len,
	    BS_MAX_RESPONSE, bs_create_done, bs);
	free(body);
	free(csr64);
	free(csr);
	return bs;
fail:
	bootstrap_free(bs);
	return NULL;
}

void
bootstrap_free(struct bootstrap *bs)
{
	if (bs == NULL)
		return;
	if (bs->bs_call != NULL)
		api_call_cancel(bs->bs_call);
	if (bs->bs_timer != NULL)
		event_free(bs->bs_timer);
	api_free(bs->bs_api);
	kubeconfig_free(bs->bs_kc);
	if (bs->bs_key != NULL) /* OpenSSL may not be loaded without it */
		EVP_PKEY_free(bs->bs_key);
	free(bs->bs_csr_name);
	free(bs->bs_kubeconfig);
	free(bs->bs_pki);
	free(bs->bs_node);
	free(bs);
}
