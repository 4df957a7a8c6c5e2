/* ossl.c — OpenSSL and libevent_openssl loaded at run time (see ossl.h). */
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>

#include "core/log.h"
#include "core/ossl.h"

/* The SONAMEs configure found (the libraries of the headers used); OpenSSL 3's and libevent
 * 2.1's for a build without it (tests/fuzz/run.sh, which links them anyway). */
#ifndef KLET_SONAME_CRYPTO
#define KLET_SONAME_CRYPTO "libcrypto.so.3"
#endif
#ifndef KLET_SONAME_SSL
#define KLET_SONAME_SSL "libssl.so.3"
#endif
#ifndef KLET_SONAME_EVENT_OPENSSL
#define KLET_SONAME_EVENT_OPENSSL "libevent_openssl-2.1.so.7"
#endif

struct ossl_fns ossl_fn;

static int  ossl_state; /* 0 not tried, 1 loaded, -1 failed (ossl_why) */
static char ossl_why[512];

static const char *const ossl_sonames[OSSL_NLIBS] = {
	[OSSL_CRYPTO] = KLET_SONAME_CRYPTO,
	[OSSL_SSL] = KLET_SONAME_SSL,
	[OSSL_EVSSL] = KLET_SONAME_EVENT_OPENSSL,
};

/* The libraries in dependency order, then every function; 0 or -1 with ossl_why set. */
static int
ossl_open(void)
{
	void  *h[OSSL_NLIBS];
	size_t i;

	if (getenv("KLET_TEST_NO_TLS") != NULL) { /* tests: a node where the libraries are not */
		snprintf(ossl_why, sizeof(ossl_why), "TLS is unavailable: KLET_TEST_NO_TLS is set");
		return -1;
	}
	for (i = 0; i < OSSL_NLIBS; i++)
		if ((h[i] = dlopen(ossl_sonames[i], RTLD_NOW | RTLD_LOCAL)) == NULL) {
			snprintf(ossl_why, sizeof(ossl_why), "TLS is unavailable: %s", dlerror());
			return -1;
		}
#define OSSL_SYM(lib, f)                                                                           \
	if ((*(void **)&ossl_fn.p_##f = dlsym(h[lib], #f)) == NULL) {                              \
		snprintf(ossl_why, sizeof(ossl_why), "TLS is unavailable: %s lacks %s",            \
		    ossl_sonames[lib], #f);                                                        \
		return -1;                                                                         \
	}
	OSSL_FUNCS(OSSL_SYM)
#undef OSSL_SYM
	/* What SSL_CTX_new would do on its own, but here a failure has a message. */
	if (OPENSSL_init_ssl(
	        OPENSSL_INIT_LOAD_SSL_STRINGS | OPENSSL_INIT_LOAD_CRYPTO_STRINGS, NULL) != 1) {
		snprintf(ossl_why, sizeof(ossl_why),
		    "TLS is unavailable: OpenSSL's initialization failed");
		return -1;
	}
	return 0;
}

int
ossl_load(char *err, size_t errlen)
{
	if (ossl_state == 0) {
		ossl_state = ossl_open() == 0 ? 1 : -1;
		if (ossl_state == 1)
			log_v(1, "TLS: %s, %s and %s loaded", KLET_SONAME_CRYPTO, KLET_SONAME_SSL,
			    KLET_SONAME_EVENT_OPENSSL);
		else
			log_error("%s", ossl_why);
	}
	if (ossl_state == 1)
		return 0;
	snprintf(err, errlen, "%s", ossl_why);
	return -1;
}

int
ossl_loaded(void)
{
	return ossl_state == 1;
}
