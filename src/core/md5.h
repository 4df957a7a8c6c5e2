/* md5.h — MD5 (RFC 1321) of a few buffers, for the static pods' UIDs (the kubelet hashes each
 * manifest with its host and file name). Not for security.
 *
 * Through libmd rather than OpenSSL: EVP's first digest loads OpenSSL's providers and
 * configuration (1.6 MiB of libcrypto code resident and 0.1 MiB of heap in an idle kletd,
 * issue 19), and a node without TLS must not pay for it; the low-level MD5_* calls are
 * deprecated in OpenSSL 3.
 */
#ifndef KLET_MD5_H
#define KLET_MD5_H

#include <stddef.h>
#include <stdint.h>

#define KLET_MD5_LEN 16

struct md5_part {
	const void *p;
	size_t      len;
};

/* Writes the MD5 digest of the n parts, concatenated, to out. */
void md5_digest(const struct md5_part *parts, size_t n, uint8_t out[KLET_MD5_LEN]);

#endif
