/* bootstrap.h — TLS bootstrap, as the kubelet's --bootstrap-kubeconfig: when --kubeconfig
 * has no usable client certificate (missing, unreadable or expired), a P-256 key is made, a
 * CertificateSigningRequest for it (signer kubernetes.io/kube-apiserver-client-kubelet,
 * subject O=system:nodes CN=system:node:NODE, usages digital signature and client auth) is
 * created with the bootstrap credentials, and once the CSR is approved and its certificate
 * issued, certificate and key go to ROOT-DIR/pki/kubelet-client-DATE.pem (0600) with the
 * symbolic link kubelet-client-current.pem, and a kubeconfig that uses them (the bootstrap
 * file's server and CA) is written to the --kubeconfig path (0600). The same request renews
 * the certificate later (--rotate-certificates), with the current credentials.
 *
 * Everything runs on the loop; the CSR is polled (1 s, then up to 5 s apart) until it is
 * issued, denied or failed, or the timeout passes. */
#ifndef KLET_BOOTSTRAP_H
#define KLET_BOOTSTRAP_H

#include <stddef.h>
#include <stdint.h>

struct event_base;
struct bootstrap;

#define BOOTSTRAP_SIGNER "kubernetes.io/kube-apiserver-client-kubelet"

struct bootstrap_opts {
	const char *credentials; /* the kubeconfig to send the CSR with (bootstrap or current) */
	const char *kubeconfig;  /* where the new kubeconfig goes */
	const char *pki_dir;     /* ROOT-DIR/pki */
	const char *node_name;
	int64_t     timeout_ms; /* 0: 15 minutes */
};

/* ok 1: the certificate and the kubeconfig are written; 0: why says what failed. */
typedef void (*bootstrap_done_fn)(int ok, const char *why, void *arg);

/* 1 when the kubeconfig at path cannot be used as it is (no file, no client certificate, or
 * one not valid at now_s, or that expires within min_left_s), with why; 0 when it can. Its
 * certificate's validity is returned in *not_before_s / *not_after_s when not NULL (0 when
 * unknown). */
int bootstrap_needed(const char *path, int64_t now_s, int64_t min_left_s, int64_t *not_before_s,
    int64_t *not_after_s, char *why, size_t whylen);
/* Starts the request. Returns NULL with the reason in err (unreadable credentials, no
 * server). cb runs once, on the loop, unless bootstrap_free comes first. */
struct bootstrap *bootstrap_start(struct event_base *, const struct bootstrap_opts *,
    bootstrap_done_fn cb, void *arg, char *err, size_t errlen);
/* Cancels what is in flight; cb does not run. NULL is a no-op. */
void bootstrap_free(struct bootstrap *);

/* Exposed for tests. A new P-256 key and a PEM CSR for node (caller frees both: the key with
 * EVP_PKEY_free). NULL on failure. */
char *bootstrap_make_csr(const char *node, void **key_out);
/* The state of a CSR object (JSON): 1 issued (*cert_pem set, caller frees), 0 pending,
 * -1 denied or failed (why set). */
int bootstrap_csr_state(
    const char *json, size_t len, char **cert_pem, size_t *cert_len, char *why, size_t whylen);

#endif
