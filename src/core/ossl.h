/* ossl.h — OpenSSL (libcrypto, libssl) and libevent_openssl, loaded at the first use of TLS.
 *
 * A kletd that uses no TLS (no API server, nobody at its HTTPS port, no https probe) maps none
 * of the three: 1.6 MiB of RSS and 0.5 MiB of private dirty pages (libcrypto's relocated data
 * alone is 404 KiB) that an idle node paid for nothing (issue 19). kletd is not linked with
 * them; the code that uses TLS includes this header instead of OpenSSL's, and calls OpenSSL
 * as it always did: each function it uses is a macro that calls through a table filled by
 * dlsym when ossl_load first runs. Macros expanded from OpenSSL's own headers
 * (SSL_CTX_set_min_proto_version is SSL_CTX_ctrl, OPENSSL_free is CRYPTO_free) go through the
 * table too, since they are expanded where they are used. The table's types are OpenSSL's
 * prototypes (__typeof__), so a call is checked as before.
 *
 * Why a table and not the TLS code moved into a module of its own (klet-tls.so, dlopen'ed
 * with a narrow interface): TLS is woven into six modules (h2's connect with ALPN, the node
 * server's evhttp hook and client certificates, kubeconfig's PEM data, the bootstrap's CSR,
 * https probes, the API client's certificate rotation). A module would cut each of them in
 * two across an interface of some twenty entry points, and add a second build product:
 * objects built twice with -fPIC (there is no libtool here), an install directory and a
 * search path that the build tree, the tests, distcheck and the package must all agree on,
 * and a kletd and a module of different versions to guard against. The table keeps the code
 * where it is and as it reads, and the linker keeps it honest: a function used but missing
 * from OSSL_FUNCS is an undefined reference when kletd is linked, not a crash at run time.
 * The same was done for sd-bus (node/logind.c).
 *
 * Rules for the code that uses it:
 *  - include no OpenSSL header (nor event2/bufferevent_ssl.h) after this one: their
 *    prototypes would meet these macros. This header includes the ones the tree uses; add
 *    any other here, above the macros.
 *  - every path into TLS starts with ossl_load() and fails, with its message, when it
 *    returns -1 (no function of the table may be called then). Code that may run with or
 *    without TLS (a free, an error path, a plain connection) asks ossl_loaded() first, or
 *    holds an OpenSSL object, which proves it.
 *  - a new function: one X() line in OSSL_FUNCS and one #define below (kletd's link says
 *    which are missing).
 *
 * The libraries are loaded by the SONAMEs kletd was built against (configure finds them;
 * the package depends on them by name, dpkg-shlibdeps does not see them), once; they stay
 * loaded. OpenSSL's configuration file is read as before (an operator's system-wide settings
 * apply; skipping it saved under 0.1 MiB RSS), and its error strings are loaded (the logs
 * name TLS errors; without them 0.2 MiB RSS and 64 KiB of private dirty less).
 */
#ifndef KLET_CORE_OSSL_H
#define KLET_CORE_OSSL_H

#include <stddef.h>

#include <event2/bufferevent_ssl.h>
#include <openssl/bio.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/rand.h>
#include <openssl/ssl.h>
#include <openssl/x509.h>
#include <openssl/x509v3.h>

enum ossl_lib { OSSL_CRYPTO, OSSL_SSL, OSSL_EVSSL, OSSL_NLIBS };

/* Every function called through the table, with its library. */
#define OSSL_FUNCS(X)                                                                              \
	X(OSSL_CRYPTO, ASN1_INTEGER_set_uint64)                                                    \
	X(OSSL_CRYPTO, ASN1_STRING_to_UTF8)                                                        \
	X(OSSL_CRYPTO, ASN1_TIME_to_tm)                                                            \
	X(OSSL_CRYPTO, BIO_ctrl)                                                                   \
	X(OSSL_CRYPTO, BIO_free)                                                                   \
	X(OSSL_CRYPTO, BIO_new)                                                                    \
	X(OSSL_CRYPTO, BIO_new_file)                                                               \
	X(OSSL_CRYPTO, BIO_new_mem_buf)                                                            \
	X(OSSL_CRYPTO, BIO_s_mem)                                                                  \
	X(OSSL_CRYPTO, CRYPTO_free)                                                                \
	X(OSSL_CRYPTO, ERR_clear_error)                                                            \
	X(OSSL_CRYPTO, ERR_error_string_n)                                                         \
	X(OSSL_CRYPTO, ERR_get_error)                                                              \
	X(OSSL_CRYPTO, ERR_reason_error_string)                                                    \
	X(OSSL_CRYPTO, EVP_EncodeBlock)                                                            \
	X(OSSL_CRYPTO, EVP_PKEY_Q_keygen)                                                          \
	X(OSSL_CRYPTO, EVP_PKEY_free)                                                              \
	X(OSSL_CRYPTO, EVP_sha256)                                                                 \
	X(OSSL_CRYPTO, OPENSSL_sk_pop_free)                                                        \
	X(OSSL_CRYPTO, PEM_read_bio_PrivateKey)                                                    \
	X(OSSL_CRYPTO, PEM_read_bio_X509)                                                          \
	X(OSSL_CRYPTO, PEM_write_PrivateKey)                                                       \
	X(OSSL_CRYPTO, PEM_write_X509)                                                             \
	X(OSSL_CRYPTO, PEM_write_bio_PrivateKey)                                                   \
	X(OSSL_CRYPTO, PEM_write_bio_X509_REQ)                                                     \
	X(OSSL_CRYPTO, RAND_bytes)                                                                 \
	X(OSSL_CRYPTO, X509V3_EXT_conf_nid)                                                        \
	X(OSSL_CRYPTO, X509V3_set_ctx)                                                             \
	X(OSSL_CRYPTO, X509_EXTENSION_free)                                                        \
	X(OSSL_CRYPTO, X509_NAME_ENTRY_get_data)                                                   \
	X(OSSL_CRYPTO, X509_NAME_add_entry_by_txt)                                                 \
	X(OSSL_CRYPTO, X509_NAME_free)                                                             \
	X(OSSL_CRYPTO, X509_NAME_get_entry)                                                        \
	X(OSSL_CRYPTO, X509_NAME_get_index_by_NID)                                                 \
	X(OSSL_CRYPTO, X509_NAME_get_text_by_NID)                                                  \
	X(OSSL_CRYPTO, X509_REQ_free)                                                              \
	X(OSSL_CRYPTO, X509_REQ_get_subject_name)                                                  \
	X(OSSL_CRYPTO, X509_REQ_new)                                                               \
	X(OSSL_CRYPTO, X509_REQ_set_pubkey)                                                        \
	X(OSSL_CRYPTO, X509_REQ_set_version)                                                       \
	X(OSSL_CRYPTO, X509_REQ_sign)                                                              \
	X(OSSL_CRYPTO, X509_STORE_add_cert)                                                        \
	X(OSSL_CRYPTO, X509_VERIFY_PARAM_set1_host)                                                \
	X(OSSL_CRYPTO, X509_VERIFY_PARAM_set1_ip_asc)                                              \
	X(OSSL_CRYPTO, X509_add_ext)                                                               \
	X(OSSL_CRYPTO, X509_check_private_key)                                                     \
	X(OSSL_CRYPTO, X509_free)                                                                  \
	X(OSSL_CRYPTO, X509_get0_notAfter)                                                         \
	X(OSSL_CRYPTO, X509_get0_notBefore)                                                        \
	X(OSSL_CRYPTO, X509_get_serialNumber)                                                      \
	X(OSSL_CRYPTO, X509_get_subject_name)                                                      \
	X(OSSL_CRYPTO, X509_getm_notAfter)                                                         \
	X(OSSL_CRYPTO, X509_getm_notBefore)                                                        \
	X(OSSL_CRYPTO, X509_gmtime_adj)                                                            \
	X(OSSL_CRYPTO, X509_new)                                                                   \
	X(OSSL_CRYPTO, X509_set_issuer_name)                                                       \
	X(OSSL_CRYPTO, X509_set_pubkey)                                                            \
	X(OSSL_CRYPTO, X509_set_version)                                                           \
	X(OSSL_CRYPTO, X509_sign)                                                                  \
	X(OSSL_CRYPTO, X509_verify_cert_error_string)                                              \
	X(OSSL_SSL, OPENSSL_init_ssl)                                                              \
	X(OSSL_SSL, SSL_CTX_check_private_key)                                                     \
	X(OSSL_SSL, SSL_CTX_ctrl)                                                                  \
	X(OSSL_SSL, SSL_CTX_free)                                                                  \
	X(OSSL_SSL, SSL_CTX_get_cert_store)                                                        \
	X(OSSL_SSL, SSL_CTX_load_verify_locations)                                                 \
	X(OSSL_SSL, SSL_CTX_new)                                                                   \
	X(OSSL_SSL, SSL_CTX_set_alpn_protos)                                                       \
	X(OSSL_SSL, SSL_CTX_set_client_CA_list)                                                    \
	X(OSSL_SSL, SSL_CTX_set_default_verify_paths)                                              \
	X(OSSL_SSL, SSL_CTX_set_verify)                                                            \
	X(OSSL_SSL, SSL_CTX_up_ref)                                                                \
	X(OSSL_SSL, SSL_CTX_use_PrivateKey)                                                        \
	X(OSSL_SSL, SSL_CTX_use_PrivateKey_file)                                                   \
	X(OSSL_SSL, SSL_CTX_use_certificate)                                                       \
	X(OSSL_SSL, SSL_CTX_use_certificate_chain_file)                                            \
	X(OSSL_SSL, SSL_ctrl)                                                                      \
	X(OSSL_SSL, SSL_free)                                                                      \
	X(OSSL_SSL, SSL_get0_alpn_selected)                                                        \
	X(OSSL_SSL, SSL_get0_param)                                                                \
	X(OSSL_SSL, SSL_get1_peer_certificate)                                                     \
	X(OSSL_SSL, SSL_get_verify_result)                                                         \
	X(OSSL_SSL, SSL_load_client_CA_file)                                                       \
	X(OSSL_SSL, SSL_new)                                                                       \
	X(OSSL_SSL, SSL_set_alpn_protos)                                                           \
	X(OSSL_SSL, SSL_set_verify)                                                                \
	X(OSSL_SSL, TLS_client_method)                                                             \
	X(OSSL_SSL, TLS_server_method)                                                             \
	X(OSSL_EVSSL, bufferevent_get_openssl_error)                                               \
	X(OSSL_EVSSL, bufferevent_openssl_get_ssl)                                                 \
	X(OSSL_EVSSL, bufferevent_openssl_set_allow_dirty_shutdown)                                \
	X(OSSL_EVSSL, bufferevent_openssl_socket_new)

#define OSSL_FIELD(lib, f) __typeof__(f) *p_##f;
struct ossl_fns {
	OSSL_FUNCS(OSSL_FIELD)
};
#undef OSSL_FIELD

/* Filled by ossl_load; read only through the macros below. */
extern struct ossl_fns ossl_fn;

/* Loads the three libraries and initializes OpenSSL, once per process. Returns 0 (then, and
 * ever after, every function of the table may be called), or -1 with the reason in err
 * (e.g. "TLS is unavailable: libssl.so.3: cannot open shared object file"); a failure is
 * final (the same reason every time) and logged once. */
int ossl_load(char *err, size_t errlen);
/* 1 once ossl_load has succeeded. */
int ossl_loaded(void);

#define OSSL_F(f) (*ossl_fn.p_##f)

#define ASN1_INTEGER_set_uint64            OSSL_F(ASN1_INTEGER_set_uint64)
#define ASN1_STRING_to_UTF8                OSSL_F(ASN1_STRING_to_UTF8)
#define ASN1_TIME_to_tm                    OSSL_F(ASN1_TIME_to_tm)
#define BIO_ctrl                           OSSL_F(BIO_ctrl)
#define BIO_free                           OSSL_F(BIO_free)
#define BIO_new                            OSSL_F(BIO_new)
#define BIO_new_file                       OSSL_F(BIO_new_file)
#define BIO_new_mem_buf                    OSSL_F(BIO_new_mem_buf)
#define BIO_s_mem                          OSSL_F(BIO_s_mem)
#define CRYPTO_free                        OSSL_F(CRYPTO_free)
#define ERR_clear_error                    OSSL_F(ERR_clear_error)
#define ERR_error_string_n                 OSSL_F(ERR_error_string_n)
#define ERR_get_error                      OSSL_F(ERR_get_error)
#define ERR_reason_error_string            OSSL_F(ERR_reason_error_string)
#define EVP_EncodeBlock                    OSSL_F(EVP_EncodeBlock)
#define EVP_PKEY_Q_keygen                  OSSL_F(EVP_PKEY_Q_keygen)
#define EVP_PKEY_free                      OSSL_F(EVP_PKEY_free)
#define EVP_sha256                         OSSL_F(EVP_sha256)
#define OPENSSL_sk_pop_free                OSSL_F(OPENSSL_sk_pop_free)
#define PEM_read_bio_PrivateKey            OSSL_F(PEM_read_bio_PrivateKey)
#define PEM_read_bio_X509                  OSSL_F(PEM_read_bio_X509)
#define PEM_write_PrivateKey               OSSL_F(PEM_write_PrivateKey)
#define PEM_write_X509                     OSSL_F(PEM_write_X509)
#define PEM_write_bio_PrivateKey           OSSL_F(PEM_write_bio_PrivateKey)
#define PEM_write_bio_X509_REQ             OSSL_F(PEM_write_bio_X509_REQ)
#define RAND_bytes                         OSSL_F(RAND_bytes)
#define X509V3_EXT_conf_nid                OSSL_F(X509V3_EXT_conf_nid)
#define X509V3_set_ctx                     OSSL_F(X509V3_set_ctx)
#define X509_EXTENSION_free                OSSL_F(X509_EXTENSION_free)
#define X509_NAME_ENTRY_get_data           OSSL_F(X509_NAME_ENTRY_get_data)
#define X509_NAME_add_entry_by_txt         OSSL_F(X509_NAME_add_entry_by_txt)
#define X509_NAME_free                     OSSL_F(X509_NAME_free)
#define X509_NAME_get_entry                OSSL_F(X509_NAME_get_entry)
#define X509_NAME_get_index_by_NID         OSSL_F(X509_NAME_get_index_by_NID)
#define X509_NAME_get_text_by_NID          OSSL_F(X509_NAME_get_text_by_NID)
#define X509_REQ_free                      OSSL_F(X509_REQ_free)
#define X509_REQ_get_subject_name          OSSL_F(X509_REQ_get_subject_name)
#define X509_REQ_new                       OSSL_F(X509_REQ_new)
#define X509_REQ_set_pubkey                OSSL_F(X509_REQ_set_pubkey)
#define X509_REQ_set_version               OSSL_F(X509_REQ_set_version)
#define X509_REQ_sign                      OSSL_F(X509_REQ_sign)
#define X509_STORE_add_cert                OSSL_F(X509_STORE_add_cert)
#define X509_VERIFY_PARAM_set1_host        OSSL_F(X509_VERIFY_PARAM_set1_host)
#define X509_VERIFY_PARAM_set1_ip_asc      OSSL_F(X509_VERIFY_PARAM_set1_ip_asc)
#define X509_add_ext                       OSSL_F(X509_add_ext)
#define X509_check_private_key             OSSL_F(X509_check_private_key)
#define X509_free                          OSSL_F(X509_free)
#define X509_get0_notAfter                 OSSL_F(X509_get0_notAfter)
#define X509_get0_notBefore                OSSL_F(X509_get0_notBefore)
#define X509_get_serialNumber              OSSL_F(X509_get_serialNumber)
#define X509_get_subject_name              OSSL_F(X509_get_subject_name)
#define X509_getm_notAfter                 OSSL_F(X509_getm_notAfter)
#define X509_getm_notBefore                OSSL_F(X509_getm_notBefore)
#define X509_gmtime_adj                    OSSL_F(X509_gmtime_adj)
#define X509_new                           OSSL_F(X509_new)
#define X509_set_issuer_name               OSSL_F(X509_set_issuer_name)
#define X509_set_pubkey                    OSSL_F(X509_set_pubkey)
#define X509_set_version                   OSSL_F(X509_set_version)
#define X509_sign                          OSSL_F(X509_sign)
#define X509_verify_cert_error_string      OSSL_F(X509_verify_cert_error_string)
#define OPENSSL_init_ssl                   OSSL_F(OPENSSL_init_ssl)
#define SSL_CTX_check_private_key          OSSL_F(SSL_CTX_check_private_key)
#define SSL_CTX_ctrl                       OSSL_F(SSL_CTX_ctrl)
#define SSL_CTX_free                       OSSL_F(SSL_CTX_free)
#define SSL_CTX_get_cert_store             OSSL_F(SSL_CTX_get_cert_store)
#define SSL_CTX_load_verify_locations      OSSL_F(SSL_CTX_load_verify_locations)
#define SSL_CTX_new                        OSSL_F(SSL_CTX_new)
#define SSL_CTX_set_alpn_protos            OSSL_F(SSL_CTX_set_alpn_protos)
#define SSL_CTX_set_client_CA_list         OSSL_F(SSL_CTX_set_client_CA_list)
#define SSL_CTX_set_default_verify_paths   OSSL_F(SSL_CTX_set_default_verify_paths)
#define SSL_CTX_set_verify                 OSSL_F(SSL_CTX_set_verify)
#define SSL_CTX_up_ref                     OSSL_F(SSL_CTX_up_ref)
#define SSL_CTX_use_PrivateKey             OSSL_F(SSL_CTX_use_PrivateKey)
#define SSL_CTX_use_PrivateKey_file        OSSL_F(SSL_CTX_use_PrivateKey_file)
#define SSL_CTX_use_certificate            OSSL_F(SSL_CTX_use_certificate)
#define SSL_CTX_use_certificate_chain_file OSSL_F(SSL_CTX_use_certificate_chain_file)
#define SSL_ctrl                           OSSL_F(SSL_ctrl)
#define SSL_free                           OSSL_F(SSL_free)
#define SSL_get0_alpn_selected             OSSL_F(SSL_get0_alpn_selected)
#define SSL_get0_param                     OSSL_F(SSL_get0_param)
#define SSL_get1_peer_certificate          OSSL_F(SSL_get1_peer_certificate)
#define SSL_get_verify_result              OSSL_F(SSL_get_verify_result)
#define SSL_load_client_CA_file            OSSL_F(SSL_load_client_CA_file)
#define SSL_new                            OSSL_F(SSL_new)
#define SSL_set_alpn_protos                OSSL_F(SSL_set_alpn_protos)
#define SSL_set_verify                     OSSL_F(SSL_set_verify)
#define TLS_client_method                  OSSL_F(TLS_client_method)
#define TLS_server_method                  OSSL_F(TLS_server_method)
#define bufferevent_get_openssl_error      OSSL_F(bufferevent_get_openssl_error)
#define bufferevent_openssl_get_ssl        OSSL_F(bufferevent_openssl_get_ssl)
#define bufferevent_openssl_set_allow_dirty_shutdown                                               \
	OSSL_F(bufferevent_openssl_set_allow_dirty_shutdown)
#define bufferevent_openssl_socket_new OSSL_F(bufferevent_openssl_socket_new)

#endif
