/* config_file.c — the --config file: a KubeletConfiguration (kubelet.config.k8s.io/v1beta1)
 * in YAML or JSON, read into settings (config_int.h): each supported field as the flag it
 * stands for, which config.c applies with that flag's checks. */
#include <errno.h>
#include <stdarg.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/config_int.h"
#include "core/json.h"
#include "core/log.h"
#include "core/util.h"

/* ---- the --config file (KubeletConfiguration, kubelet.config.k8s.io/v1beta1) ---- */

#define CONFIG_FILE_MAX (1024 * 1024)

/* CF_MAP_EQ / CF_MAP_LT: an object of strings, as "k=v,..." / "k<v,..."; CF_TAINTS: a list of
 * {key, value, effect}, as "k=v:E,...". */
enum cf_type { CF_STR, CF_INT, CF_BOOL, CF_STRLIST, CF_MAP_EQ, CF_MAP_LT, CF_TAINTS };

/* A field of the file and the flag it sets (0: handled by its own case). */
static const struct cf_field {
	const char  *name;
	enum cf_type type;
	int          id;
} cf_fields[] = {
	{ "staticPodPath", CF_STR, O_MANIFEST_PATH },
	{ "containerRuntimeEndpoint", CF_STR, O_RUNTIME_ENDPOINT },
	{ "maxPods", CF_INT, O_MAX_PODS },
	{ "clusterDNS", CF_STRLIST, O_CLUSTER_DNS },
	{ "clusterDomain", CF_STR, O_CLUSTER_DOMAIN },
	{ "podLogsDir", CF_STR, O_POD_LOGS_DIR },
	{ "cgroupRoot", CF_STR, O_CGROUP_ROOT },
	{ "kubeReserved", CF_MAP_EQ, O_KUBE_RESERVED },
	{ "systemReserved", CF_MAP_EQ, O_SYSTEM_RESERVED },
	{ "evictionHard", CF_MAP_LT, O_EVICTION_HARD },
	{ "registerWithTaints", CF_TAINTS, O_REGISTER_TAINTS },
	{ "cgroupDriver", CF_STR, O_CGROUP_DRIVER },
	{ "cgroupsPerQOS", CF_BOOL, O_CGROUPS_PER_QOS },
	{ "evictionSoft", CF_MAP_LT, O_EVICTION_SOFT },
	{ "evictionSoftGracePeriod", CF_MAP_EQ, O_EVICTION_SOFT_GRACE },
	{ "evictionMinimumReclaim", CF_MAP_EQ, O_EVICTION_MIN_RECLAIM },
	{ "evictionPressureTransitionPeriod", CF_STR, O_EVICTION_TRANSITION },
	{ "evictionMaxPodGracePeriod", CF_INT, O_EVICTION_MAX_GRACE },
	{ "imageGCHighThresholdPercent", CF_INT, O_IMAGE_GC_HIGH },
	{ "imageGCLowThresholdPercent", CF_INT, O_IMAGE_GC_LOW },
	{ "imageMinimumGCAge", CF_STR, O_IMAGE_GC_AGE },
	{ "imageMaximumGCAge", CF_STR, O_IMAGE_GC_MAX_AGE },
	{ "registerNode", CF_BOOL, O_REGISTER_NODE },
	{ "rotateCertificates", CF_BOOL, O_ROTATE_CERTIFICATES },
	{ "resolvConf", CF_STR, O_RESOLV_CONF },
	{ "fileCheckFrequency", CF_STR, O_FILE_CHECK },
	{ "syncFrequency", CF_STR, O_SYNC_FREQ },
	{ "runtimeRequestTimeout", CF_STR, O_RUNTIME_TIMEOUT },
	{ "nodeStatusUpdateFrequency", CF_STR, O_NODE_STATUS_FREQ },
	{ "containerLogMaxSize", CF_STR, O_LOG_MAX_SIZE },
	{ "containerLogMaxFiles", CF_INT, O_LOG_MAX_FILES },
	{ "containerLogMonitorInterval", CF_STR, O_LOG_MONITOR },
	{ "nodeLeaseDurationSeconds", CF_INT, O_LEASE_DURATION },
	{ "logging", CF_STR, 0 }, /* an object: format, verbosity */
	{ "address", CF_STR, O_ADDRESS },
	{ "port", CF_INT, O_PORT },
	{ "healthzBindAddress", CF_STR, O_HEALTHZ_ADDRESS },
	{ "healthzPort", CF_INT, O_HEALTHZ_PORT },
	{ "readOnlyPort", CF_INT, O_READ_ONLY_PORT },
	{ "tlsCertFile", CF_STR, O_TLS_CERT },
	{ "streamingConnectionIdleTimeout", CF_STR, O_STREAMING_IDLE },
	{ "tlsPrivateKeyFile", CF_STR, O_TLS_KEY },
	{ "authentication", CF_STR, 0 }, /* x509.clientCAFile, anonymous/webhook.enabled */
	{ "authorization", CF_STR, 0 },  /* mode */
	{ "shutdownGracePeriod", CF_STR, O_SHUTDOWN_GRACE },
	{ "shutdownGracePeriodCriticalPods", CF_STR, O_SHUTDOWN_GRACE_CRITICAL },
	{ "kind", CF_STR, 0 },
	{ "apiVersion", CF_STR, 0 },
};

static int cf_errf(char *err, size_t errlen, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* Formats a one-line reason into err; returns -1. */
static int
cf_errf(char *err, size_t errlen, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(err, errlen, fmt, ap);
	va_end(ap);
	return -1;
}

/* The value of v as the text config_apply takes (caller frees), or NULL with err set. */
static char *
cf_text(const struct json *v, enum cf_type t, const char *what, char *err, size_t errlen)
{
	int64_t n;
	int     b;
	size_t  i;
	char   *out = NULL, *tmp;

	switch (t) {
	case CF_STR:
		if (json_type(v) == JSON_STRING)
			return xstrdup(json_str(v));
		cf_errf(err, errlen, "%s: expected a string, got %s", what,
		    json_type_name(json_type(v)));
		return NULL;
	case CF_INT:
		if (json_int(v, &n) == 0)
			return xsprintf("%lld", (long long)n);
		cf_errf(err, errlen, "%s: expected an integer, got %s", what,
		    json_type_name(json_type(v)));
		return NULL;
	case CF_BOOL:
		if (json_bool(v, &b) == 0)
			return xstrdup(b ? "true" : "false");
		cf_errf(err, errlen, "%s: expected true or false, got %s", what,
		    json_type_name(json_type(v)));
		return NULL;
	case CF_STRLIST:
		if (json_type(v) != JSON_ARRAY) {
			cf_errf(err, errlen, "%s: expected a list of strings, got %s", what,
			    json_type_name(json_type(v)));
			return NULL;
		}
		out = xstrdup("");
		for (i = 0; i < json_len(v); i++) {
			const struct json *e = json_index(v, i);

			if (json_type(e) != JSON_STRING) {
				cf_errf(err, errlen, "%s[%zu]: expected a string, got %s", what, i,
				    json_type_name(json_type(e)));
				free(out);
				return NULL;
			}
			tmp = xsprintf("%s%s%s", out, i > 0 ? "," : "", json_str(e));
			free(out);
			out = tmp;
		}
		return out;
	case CF_MAP_EQ:
	case CF_MAP_LT:
		if (json_type(v) != JSON_OBJECT) {
			cf_errf(err, errlen, "%s: expected a map of strings, got %s", what,
			    json_type_name(json_type(v)));
			return NULL;
		}
		out = xstrdup("");
		for (i = 0; i < json_len(v); i++) {
			const struct json *e = json_index(v, i);

			if (json_type(e) != JSON_STRING) {
				cf_errf(err, errlen, "%s.%s: expected a string, got %s", what,
				    json_key(v, i), json_type_name(json_type(e)));
				free(out);
				return NULL;
			}
			tmp = xsprintf("%s%s%s%c%s", out, i > 0 ? "," : "", json_key(v, i),
			    t == CF_MAP_EQ ? '=' : '<', json_str(e));
			free(out);
			out = tmp;
		}
		return out;
	case CF_TAINTS:
		if (json_type(v) != JSON_ARRAY) {
			cf_errf(err, errlen, "%s: expected a list of taints, got %s", what,
			    json_type_name(json_type(v)));
			return NULL;
		}
		out = xstrdup("");
		for (i = 0; i < json_len(v); i++) {
			const struct json *e = json_index(v, i), *k, *val, *eff;

			k = json_get(e, "key");
			val = json_get(e, "value");
			eff = json_get(e, "effect");
			if (json_type(e) != JSON_OBJECT || json_type(k) != JSON_STRING ||
			    json_type(eff) != JSON_STRING ||
			    (val != NULL && json_type(val) != JSON_STRING &&
			        json_type(val) != JSON_NULL)) {
				cf_errf(err, errlen,
				    "%s[%zu]: expected {key, value, effect} strings", what, i);
				free(out);
				return NULL;
			}
			tmp = xsprintf("%s%s%s%s%s:%s", out, i > 0 ? "," : "", json_str(k),
			    json_type(val) == JSON_STRING ? "=" : "",
			    json_type(val) == JSON_STRING ? json_str(val) : "", json_str(eff));
			free(out);
			out = tmp;
		}
		return out;
	}
	return NULL;
}

/* Adds one field as its flag's setting; -1 with err set. */
static int
cf_apply(struct config_settings *out, int id, const struct json *v, enum cf_type t,
    const char *what, char *err, size_t errlen)
{
	char *text = cf_text(v, t, what, err, errlen);

	if (text == NULL)
		return -1;
	out->v = xreallocarray(out->v, out->n + 1, sizeof(*out->v));
	out->v[out->n].id = id;
	out->v[out->n].val = text;
	out->v[out->n].what = xstrdup(what);
	out->n++;
	return 0;
}

/* authentication: {x509: {clientCAFile}, anonymous: {enabled}, webhook: {enabled}};
 * authorization: {mode}. Other members (cacheTTL...) are ignored with a warning. */
static int
config_file_auth(struct config_settings *out, const char *key, const struct json *v,
    const char *path, char *err, size_t errlen)
{
	static const struct {
		const char  *obj, *sub, *field;
		enum cf_type type;
		int          id;
	} map[] = {
		{ "authentication", "x509", "clientCAFile", CF_STR, O_CLIENT_CA },
		{ "authentication", "anonymous", "enabled", CF_BOOL, O_ANONYMOUS_AUTH },
		{ "authentication", "webhook", "enabled", CF_BOOL, O_AUTHN_WEBHOOK },
		{ "authorization", NULL, "mode", CF_STR, O_AUTHZ_MODE },
	};
	char   what[320];
	size_t i, j, m;

	if (json_type(v) != JSON_OBJECT)
		return cf_errf(err, errlen, "field %s in %s: expected an object", key, path);
	for (i = 0; i < json_len(v); i++) {
		const char        *k = json_key(v, i);
		const struct json *sv = json_index(v, i);
		int                known = 0;

		for (m = 0; m < nitems(map); m++) {
			if (strcmp(map[m].obj, key) != 0)
				continue;
			if (map[m].sub == NULL && strcmp(map[m].field, k) == 0) {
				snprintf(what, sizeof(what), "field %s.%s in %s", key, k, path);
				if (cf_apply(out, map[m].id, sv, map[m].type, what, err, errlen) ==
				    -1)
					return -1;
				known = 1;
			} else if (map[m].sub != NULL && strcmp(map[m].sub, k) == 0) {
				known = 1;
				if (json_type(sv) != JSON_OBJECT)
					return cf_errf(err, errlen,
					    "field %s.%s in %s: expected an object", key, k, path);
				for (j = 0; j < json_len(sv); j++) {
					if (strcmp(json_key(sv, j), map[m].field) != 0) {
						log_warnx(
						    "config %s: field %s.%s.%s is not supported; "
						    "ignored",
						    path, key, k, json_key(sv, j));
						continue;
					}
					snprintf(what, sizeof(what), "field %s.%s.%s in %s", key, k,
					    map[m].field, path);
					if (cf_apply(out, map[m].id, json_index(sv, j), map[m].type,
					        what, err, errlen) == -1)
						return -1;
				}
			}
		}
		if (!known)
			log_warnx("config %s: field %s.%s is not supported; ignored", path, key, k);
	}
	return 0;
}

static int
config_file_fields(struct config_settings *out, const struct json *root, const char *path,
    char *err, size_t errlen)
{
	char   what[320];
	size_t i, j;

	for (i = 0; i < json_len(root); i++) {
		const char            *key = json_key(root, i);
		const struct json     *v = json_index(root, i);
		const struct cf_field *f = NULL;

		for (j = 0; j < nitems(cf_fields); j++)
			if (strcmp(cf_fields[j].name, key) == 0)
				f = &cf_fields[j];
		snprintf(what, sizeof(what), "field %s in %s", key, path);
		if (f == NULL) {
			log_warnx("config %s: field %s is not supported; ignored", path, key);
			continue;
		}
		if (json_type(v) == JSON_NULL)
			continue;
		if (f->id != 0) {
			if (cf_apply(out, f->id, v, f->type, what, err, errlen) == -1)
				return -1;
		} else if (strcmp(key, "kind") == 0) {
			if (json_type(v) != JSON_STRING ||
			    strcmp(json_str(v), "KubeletConfiguration") != 0)
				return cf_errf(
				    err, errlen, "%s: expected KubeletConfiguration", what);
		} else if (strcmp(key, "apiVersion") == 0) {
			if (json_type(v) != JSON_STRING ||
			    strcmp(json_str(v), "kubelet.config.k8s.io/v1beta1") != 0)
				return cf_errf(err, errlen,
				    "%s: expected kubelet.config.k8s.io/v1beta1", what);
		} else if (strcmp(key, "authentication") == 0 ||
		    strcmp(key, "authorization") == 0) {
			if (config_file_auth(out, key, v, path, err, errlen) == -1)
				return -1;
		} else if (strcmp(key, "logging") == 0) {
			const struct json *fmt, *verb;

			if (json_type(v) != JSON_OBJECT)
				return cf_errf(err, errlen, "%s: expected an object", what);
			for (j = 0; j < json_len(v); j++) {
				const char *k = json_key(v, j);

				if (strcmp(k, "format") != 0 && strcmp(k, "verbosity") != 0)
					log_warnx("config %s: field logging.%s is not supported; "
					          "ignored",
					    path, k);
			}
			fmt = json_get(v, "format");
			verb = json_get(v, "verbosity");
			snprintf(what, sizeof(what), "field logging.format in %s", path);
			if (fmt != NULL && json_type(fmt) != JSON_NULL &&
			    cf_apply(out, O_LOGGING_FORMAT, fmt, CF_STR, what, err, errlen) == -1)
				return -1;
			snprintf(what, sizeof(what), "field logging.verbosity in %s", path);
			if (verb != NULL && json_type(verb) != JSON_NULL &&
			    cf_apply(out, O_V, verb, CF_INT, what, err, errlen) == -1)
				return -1;
		}
	}
	return 0;
}

void
config_settings_clear(struct config_settings *s)
{
	size_t i;

	for (i = 0; i < s->n; i++) {
		free(s->v[i].val);
		free(s->v[i].what);
	}
	free(s->v);
	s->v = NULL;
	s->n = 0;
}

int
config_file_read(const char *path, struct config_settings *out, char *err, size_t errlen)
{
	struct json_doc         *doc;
	const struct json_limits lim = { CONFIG_FILE_MAX, 32, 64 * 1024 };
	char                    *buf, jerr[256];
	size_t                   len = 0;
	ssize_t                  n;
	int                      fd, rc;

	if ((fd = open(path, O_RDONLY | O_CLOEXEC)) == -1)
		return cf_errf(err, errlen, "config file %s: %s", path, strerror(errno));
	buf = xmalloc(CONFIG_FILE_MAX + 1);
	while ((n = read(fd, buf + len, CONFIG_FILE_MAX + 1 - len)) > 0 &&
	    (len += (size_t)n) <= CONFIG_FILE_MAX)
		;
	close(fd);
	if (n == -1 || len > CONFIG_FILE_MAX) {
		rc = cf_errf(err, errlen, "config file %s: %s", path,
		    n == -1 ? strerror(errno) : "larger than 1 MiB");
		free(buf);
		return rc;
	}
	doc = json_parse_yaml(buf, len, &lim, jerr, sizeof(jerr));
	free(buf);
	if (doc == NULL)
		return cf_errf(err, errlen, "config file %s: %s", path, jerr);
	if (json_type(json_root(doc)) != JSON_OBJECT) {
		rc = cf_errf(
		    err, errlen, "config file %s: expected a KubeletConfiguration object", path);
	} else
		rc = config_file_fields(out, json_root(doc), path, err, errlen);
	json_free(doc);
	if (rc == -1)
		config_settings_clear(out);
	return rc;
}
