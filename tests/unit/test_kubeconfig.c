/* test_kubeconfig.c — kubeconfig parsing: contexts, clusters, users, paths, data fields,
 * tokens, errors naming the field; the TLS context from real certificates. */
#include <sys/stat.h>

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>

#include <openssl/ssl.h>

#include "client/kubeconfig.h"
#include "core/log.h"
#include "core/util.h"

static char tmpdir[] = "/tmp/klet-kc-test.XXXXXX";

/* "-----BEGIN CERTIFICATE-----\nAA==\n-----END CERTIFICATE-----\n" in base64 */
#define PEM_B64 "LS0tLS1CRUdJTiBDRVJUSUZJQ0FURS0tLS0tCkFBPT0KLS0tLS1FTkQgQ0VSVElGSUNBVEUtLS0tLQo="

#define HEAD                   "apiVersion: v1\nkind: Config\n"
#define CLUSTER(server, extra) "clusters:\n- name: c1\n  cluster:\n    server: " server "\n" extra
#define CTX(user)              "contexts:\n- name: x\n  context:\n    cluster: c1\n" user "current-context: x\n"

struct kc_case {
	const char *name;
	const char *doc;
	const char *err_has; /* NULL: must parse */
	void (*check)(const struct kubeconfig *);
};

static void
check_basic(const struct kubeconfig *kc)
{
	assert_string_equal(kc->context, "x");
	assert_string_equal(kc->cluster, "c1");
	assert_string_equal(kc->host, "127.0.0.1");
	assert_string_equal(kc->port, "6443");
	assert_non_null(kc->ca_file);
	assert_string_equal(kc->ca_file + strlen(tmpdir), "/ca.crt");
	assert_string_equal(kc->cert_file + strlen(tmpdir), "/sub/node.crt");
	assert_string_equal(kc->key_file, "/etc/hostname");
	assert_int_equal(kc->insecure, 0);
	assert_null(kc->token);
}

static void
check_data(const struct kubeconfig *kc)
{
	assert_null(kc->ca_file);
	assert_non_null(kc->ca_pem);
	assert_true(strncmp(kc->ca_pem, "-----BEGIN CERTIFICATE-----", 27) == 0);
	assert_non_null(kc->cert_pem);
	assert_non_null(kc->key_pem);
	assert_string_equal(kc->token, "abc.def");
}

static void
check_token_file(const struct kubeconfig *kc)
{
	assert_string_equal(kc->token, "tok-from-file");
	assert_non_null(kc->token_file);
}

static void
check_insecure(const struct kubeconfig *kc)
{
	assert_int_equal(kc->insecure, 1);
	assert_null(kc->user);
	assert_string_equal(kc->port, "443");
	assert_string_equal(kc->host, "api.example.com");
}

static void
check_ipv6(const struct kubeconfig *kc)
{
	assert_string_equal(kc->host, "::1");
	assert_string_equal(kc->port, "8443");
	assert_string_equal(kc->tls_server_name, "kubernetes");
}

static void
check_multi(const struct kubeconfig *kc)
{
	assert_string_equal(kc->context, "second");
	assert_string_equal(kc->cluster, "c2");
	assert_string_equal(kc->host, "10.0.0.2");
	assert_string_equal(kc->token, "t2");
}

static const struct kc_case cases[] = {
	{ "paths resolved against the kubeconfig dir",
	    HEAD CLUSTER("https://127.0.0.1:6443",
	        "    certificate-authority: ca.crt\n") "users:\n- name: u\n  user:\n    client-certificate: sub/node.crt\n"
	                                               "    client-key: /etc/hostname\n" CTX(
	                                                   "    user: u\n"),
	    NULL, check_basic },
	{ "data fields and token",
	    HEAD CLUSTER("https://127.0.0.1:6443",
	        "    certificate-authority-data: " PEM_B64
	        "\n") "users:\n- name: u\n  user:\n    client-certificate-data: " PEM_B64 "\n"
	              "    client-key-data: " PEM_B64 "\n    token: abc.def\n" CTX("    user: u\n"),
	    NULL, check_data },
	{ "tokenFile",
	    HEAD CLUSTER("https://127.0.0.1:6443",
	        "    certificate-authority: ca.crt\n") "users:\n- name: u\n  user:\n    tokenFile: token\n" CTX("    user: u\n"),
	    NULL, check_token_file },
	{ "insecure, no user, default port",
	    HEAD CLUSTER("https://api.example.com", "    insecure-skip-tls-verify: true\n") CTX(""),
	    NULL, check_insecure },
	{ "IPv6 server and tls-server-name",
	    HEAD CLUSTER("https://[::1]:8443/", "    tls-server-name: kubernetes\n") CTX(""), NULL,
	    check_ipv6 },
	{ "current-context picks among several (flow style)",
	    "{\"clusters\":[{\"name\":\"c1\",\"cluster\":{\"server\":\"https://10.0.0.1\"}},"
	    "{\"name\":\"c2\",\"cluster\":{\"server\":\"https://10.0.0.2\"}}],"
	    "\"users\":[{\"name\":\"u1\",\"user\":{\"token\":\"t1\"}},"
	    "{\"name\":\"u2\",\"user\":{\"token\":\"t2\"}}],"
	    "\"contexts\":[{\"name\":\"first\",\"context\":{\"cluster\":\"c1\",\"user\":\"u1\"}},"
	    "{\"name\":\"second\",\"context\":{\"cluster\":\"c2\",\"user\":\"u2\"}}],"
	    "\"current-context\":\"second\"}",
	    NULL, check_multi },
	{ "not YAML", "clusters: [\n", "", NULL },
	{ "not a mapping", "- a\n- b\n", "expected a mapping", NULL },
	{ "no current-context, two contexts",
	    HEAD CLUSTER("https://h:1",
	        "") "contexts:\n- name: a\n  context: {cluster: c1}\n- name: b\n  context: {cluster: c1}\n",
	    "current-context: not set", NULL },
	{ "current-context names a missing context",
	    HEAD CLUSTER("https://h:1", "") "contexts: []\ncurrent-context: nope\n",
	    "current-context: \"nope\": no such entry in contexts", NULL },
	{ "context names a missing cluster", HEAD "clusters: []\n" CTX(""),
	    "contexts[0].context.cluster: \"c1\": no such entry", NULL },
	{ "missing server", HEAD "clusters:\n- name: c1\n  cluster: {}\n" CTX(""),
	    "clusters[0].cluster.server: required", NULL },
	{ "http server refused", HEAD CLUSTER("http://127.0.0.1:8080", "") CTX(""),
	    "clusters[0].cluster.server: \"http://127.0.0.1:8080\": only https://", NULL },
	{ "bad port", HEAD CLUSTER("https://h:99999", "") CTX(""), "bad port", NULL },
	{ "path prefix refused", HEAD CLUSTER("https://h:1/prefix", "") CTX(""),
	    "path prefix is not supported", NULL },
	{ "missing CA file",
	    HEAD CLUSTER("https://h:1", "    certificate-authority: nosuch.crt\n") CTX(""),
	    "clusters[0].cluster.certificate-authority: ", NULL },
	{ "bad base64",
	    HEAD CLUSTER("https://h:1", "    certificate-authority-data: '!!notbase64'\n") CTX(""),
	    "clusters[0].cluster.certificate-authority-data: invalid base64", NULL },
	{ "base64 but not PEM",
	    HEAD CLUSTER("https://h:1", "    certificate-authority-data: aGVsbG8=\n") CTX(""),
	    "certificate-authority-data: not PEM data", NULL },
	{ "insecure as a string",
	    HEAD CLUSTER("https://h:1", "    insecure-skip-tls-verify: \"maybe\"\n") CTX(""),
	    "insecure-skip-tls-verify: expected true or false", NULL },
	{ "insecure with a CA",
	    HEAD CLUSTER("https://h:1",
	        "    insecure-skip-tls-verify: true\n"
	        "    certificate-authority-data: " PEM_B64 "\n") CTX(""),
	    "mutually exclusive", NULL },
	{ "missing user", HEAD CLUSTER("https://h:1", "") CTX("    user: ghost\n"),
	    "user \"ghost\": no such entry in users", NULL },
	{ "cert without key",
	    HEAD CLUSTER("https://h:1",
	        "") "users:\n- name: u\n  user:\n    client-certificate-data: " PEM_B64
	            "\n" CTX("    user: u\n"),
	    "users[0].user: client-certificate and client-key", NULL },
	{ "missing token file",
	    HEAD CLUSTER("https://h:1",
	        "") "users:\n- name: u\n  user:\n    tokenFile: /nonexistent/tok\n" CTX("    user: u\n"),
	    "users[0].user.tokenFile: /nonexistent/tok: No such file", NULL },
	{ "server not a string", HEAD CLUSTER("[1, 2]", "") CTX(""),
	    "clusters[0].cluster.server: expected a string", NULL },
	{ "exec credentials",
	    HEAD CLUSTER("https://h:1",
	        "") "users:\n- name: u\n  user:\n    exec: {command: foo}\n" CTX("    user: u\n"),
	    "exec and auth-provider credentials are not supported", NULL },
};

static void
write_file(const char *dir, const char *name, const char *text)
{
	char *p = xsprintf("%s/%s", dir, name);
	FILE *f = fopen(p, "w");

	assert_non_null(f);
	fputs(text, f);
	fclose(f);
	free(p);
}

static int
setup(void **state)
{
	char *sub;

	(void)state;
	log_init(0, 0);
	assert_non_null(mkdtemp(tmpdir));
	sub = xsprintf("%s/sub", tmpdir);
	mkdir(sub, 0700);
	free(sub);
	write_file(tmpdir, "ca.crt", "x");
	write_file(tmpdir, "sub/node.crt", "x");
	write_file(tmpdir, "token", "tok-from-file\n");
	return 0;
}

static int
teardown(void **state)
{
	char *cmd = xsprintf("rm -rf '%s'", tmpdir);

	(void)state;
	assert_int_equal(system(cmd), 0);
	free(cmd);
	return 0;
}

static void
test_cases(void **state)
{
	size_t i;

	(void)state;
	for (i = 0; i < nitems(cases); i++) {
		const struct kc_case *c = &cases[i];
		char                  err[512] = "";
		struct kubeconfig    *kc;

		kc = kubeconfig_parse(c->doc, strlen(c->doc), tmpdir, "kc.yaml", err, sizeof(err));
		if (c->err_has == NULL) {
			if (kc == NULL)
				fail_msg("case \"%s\": unexpected error: %s", c->name, err);
			if (c->check != NULL)
				c->check(kc);
			kubeconfig_free(kc);
		} else {
			if (kc != NULL)
				fail_msg("case \"%s\": parsed, expected an error", c->name);
			if (strstr(err, c->err_has) == NULL || strncmp(err, "kc.yaml: ", 9) != 0)
				fail_msg("case \"%s\": error \"%s\" lacks \"%s\"", c->name, err,
				    c->err_has);
		}
	}
}

static void
test_base64(void **state)
{
	static const struct {
		const char *in, *out;
	} ok[] = {
		{ "", "" },
		{ "YQ==", "a" },
		{ "YQ", "a" },
		{ "YWI=", "ab" },
		{ "YWJj", "abc" },
		{ "YW Jj\nZA==", "abcd" },
	};
	static const char *bad[] = { "Y", "YQ=x", "Y===", "YR==", "a*b=" };
	size_t             i, n;

	(void)state;
	for (i = 0; i < nitems(ok); i++) {
		char *s = kubeconfig_base64_decode(ok[i].in, strlen(ok[i].in), &n);

		assert_non_null(s);
		assert_string_equal(s, ok[i].out);
		assert_int_equal(n, strlen(ok[i].out));
		free(s);
	}
	for (i = 0; i < nitems(bad); i++)
		if (kubeconfig_base64_decode(bad[i], strlen(bad[i]), &n) != NULL)
			fail_msg("\"%s\" decoded", bad[i]);
}

static void
test_load_missing(void **state)
{
	char err[256];

	(void)state;
	assert_null(kubeconfig_load("/nonexistent/kubeconfig", err, sizeof(err)));
	assert_non_null(strstr(err, "/nonexistent/kubeconfig: No such file"));
}

/* With real certificates (tests/apiserver/mkcerts.sh): files, data fields, a wrong key. */
static void
test_ssl_ctx(void **state)
{
	const char        *top = getenv("top_srcdir");
	char              *cmd, *dir, *doc, err[512];
	struct kubeconfig *kc;
	SSL_CTX           *ctx;

	(void)state;
	if (top == NULL || system("command -v openssl >/dev/null 2>&1") != 0)
		skip();
	dir = xsprintf("%s/certs", tmpdir);
	cmd = xsprintf("sh '%s/tests/apiserver/mkcerts.sh' '%s' n1", top, dir);
	assert_int_equal(system(cmd), 0);
	free(cmd);
	doc = xsprintf(HEAD CLUSTER("https://127.0.0.1:1",
	    "    certificate-authority: ca.crt\n") "users:\n- name: u\n  user:\n    client-certificate: node.crt\n"
	                                           "    client-key: node.key\n" CTX(
	                                               "    user: u\n"));
	kc = kubeconfig_parse(doc, strlen(doc), dir, NULL, err, sizeof(err));
	assert_non_null(kc);
	ctx = kubeconfig_ssl_ctx(kc, err, sizeof(err));
	if (ctx == NULL)
		fail_msg("ssl ctx: %s", err);
	assert_int_equal(SSL_CTX_get_verify_mode(ctx), SSL_VERIFY_PEER);
	assert_true(SSL_CTX_get_min_proto_version(ctx) == TLS1_2_VERSION);
	SSL_CTX_free(ctx);
	kubeconfig_free(kc);
	free(doc);

	/* A key that does not match the certificate. */
	doc = xsprintf(HEAD CLUSTER("https://127.0.0.1:1",
	    "    certificate-authority: ca.crt\n") "users:\n- name: u\n  user:\n    client-certificate: node.crt\n"
	                                           "    client-key: admin.key\n" CTX(
	                                               "    user: u\n"));
	kc = kubeconfig_parse(doc, strlen(doc), dir, NULL, err, sizeof(err));
	assert_non_null(kc);
	assert_null(kubeconfig_ssl_ctx(kc, err, sizeof(err)));
	/* OpenSSL refuses the key on load or on the match check: either names the key. */
	assert_true(strstr(err, "admin.key") != NULL || strstr(err, "does not match") != NULL);
	kubeconfig_free(kc);
	free(doc);

	/* A CA file that is not a certificate. */
	doc = xsprintf(
	    HEAD CLUSTER("https://127.0.0.1:1", "    certificate-authority: node.key\n") CTX(""));
	kc = kubeconfig_parse(doc, strlen(doc), dir, NULL, err, sizeof(err));
	assert_non_null(kc);
	assert_null(kubeconfig_ssl_ctx(kc, err, sizeof(err)));
	kubeconfig_free(kc);
	free(doc);
	free(dir);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_cases),
		cmocka_unit_test(test_base64),
		cmocka_unit_test(test_load_missing),
		cmocka_unit_test(test_ssl_ctx),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
