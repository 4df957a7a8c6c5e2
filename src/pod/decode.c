/* decode.c — v1.Pod from JSON or YAML: one DOM-to-struct decoder with API defaults.
 *
 * The document is parsed into a transient json DOM (json.h), decoded into the compact
 * struct pod, and the DOM is freed. Errors name the field path of the offending value.
 * Arrays are allocated and attached to the pod before their elements are filled, so on any
 * failure pod_unref() releases a half-decoded pod.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/json.h"
#include "pod/pod.h"
#include "core/quantity.h"
#include "pod/rfc3339.h"
#include "core/util.h"

struct dec {
	char   path[512];
	size_t plen;
	char  *err;
	size_t errlen;
};

typedef const struct json J;

static size_t dec_dpush(struct dec *d, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* Appends to the path; returns the previous length for dec_dpop(). */
static size_t
dec_dpush(struct dec *d, const char *fmt, ...)
{
	size_t  old = d->plen;
	va_list ap;
	int     n;

	if (d->plen < sizeof(d->path) - 1) {
		va_start(ap, fmt);
		n = vsnprintf(d->path + d->plen, sizeof(d->path) - d->plen, fmt, ap);
		va_end(ap);
		if (n > 0)
			d->plen += (size_t)n;
		if (d->plen >= sizeof(d->path))
			d->plen = sizeof(d->path) - 1;
	}
	return old;
}

static size_t
dec_dkey(struct dec *d, const char *key)
{
	return dec_dpush(d, d->plen > 0 ? ".%s" : "%s", key);
}

static size_t
dec_didx(struct dec *d, size_t i)
{
	return dec_dpush(d, "[%zu]", i);
}

static void
dec_dpop(struct dec *d, size_t old)
{
	d->plen = old;
	d->path[old] = '\0';
}

static int dec_dfail(struct dec *d, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static int
dec_dfail(struct dec *d, const char *fmt, ...)
{
	char    msg[256];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	if (d->err != NULL && d->errlen > 0)
		snprintf(d->err, d->errlen, "%s%s%s", d->path, d->plen > 0 ? ": " : "", msg);
	return -1;
}

static int
dec_absent(J *v)
{
	return v == NULL || json_type(v) == JSON_NULL;
}

/* ---- scalars (v is the value, the path already names it) ---- */

static int
dec_v_str(struct dec *d, J *v, char **out)
{
	const char *s;
	size_t      len;

	if (dec_absent(v))
		return 0;
	if (json_type(v) == JSON_STRING) {
		s = json_str(v);
		len = json_str_len(v);
		if (strlen(s) != len)
			return dec_dfail(d, "contains a NUL byte");
	} else if (json_is_yaml_plain(v) && json_type(v) != JSON_ARRAY &&
	    json_type(v) != JSON_OBJECT) {
		s = json_text(v); /* sigs.k8s.io/yaml: a plain scalar fits a string field */
	} else
		return dec_dfail(d, "expected a string, got %s", json_type_name(json_type(v)));
	free(*out);
	*out = xstrdup(s);
	return 0;
}

static int
dec_v_int(struct dec *d, J *v, int64_t *out, int64_t min, int64_t max)
{
	int64_t i;
	double  x;

	if (json_int(v, &i) < 0) {
		/* Range first: converting an out-of-range double is undefined. */
		if (json_is_yaml_plain(v) && json_double(v, &x) == 0 && x >= -9.2e18 &&
		    x <= 9.2e18 && x == (double)(int64_t)x)
			i = (int64_t)x;
		else
			return dec_dfail(
			    d, "expected an integer, got %s", json_type_name(json_type(v)));
	}
	if (i < min || i > max)
		return dec_dfail(d, "%lld is out of range", (long long)i);
	*out = i;
	return 0;
}

static int
dec_v_bool(struct dec *d, J *v, int *out)
{
	if (dec_absent(v))
		return 0;
	if (json_bool(v, out) < 0)
		return dec_dfail(d, "expected a boolean, got %s", json_type_name(json_type(v)));
	return 0;
}

/* ---- fields of an object ---- */

static int
dec_f_str(struct dec *d, J *obj, const char *key, char **out)
{
	size_t o = dec_dkey(d, key);
	int    rc = dec_v_str(d, json_get(obj, key), out);

	dec_dpop(d, o);
	return rc;
}

static int
dec_f_i64(struct dec *d, J *obj, const char *key, int64_t *out)
{
	J     *v = json_get(obj, key);
	size_t o;
	int    rc;

	if (dec_absent(v))
		return 0;
	o = dec_dkey(d, key);
	rc = dec_v_int(d, v, out, INT64_MIN, INT64_MAX);
	dec_dpop(d, o);
	return rc;
}

static int
dec_f_i32(struct dec *d, J *obj, const char *key, int32_t *out)
{
	J      *v = json_get(obj, key);
	int64_t i;
	size_t  o;
	int     rc;

	if (dec_absent(v))
		return 0;
	o = dec_dkey(d, key);
	rc = dec_v_int(d, v, &i, INT32_MIN, INT32_MAX);
	dec_dpop(d, o);
	if (rc == 0)
		*out = (int32_t)i;
	return rc;
}

static int
dec_f_opt_i64(struct dec *d, J *obj, const char *key, struct opt_i64 *out)
{
	if (dec_absent(json_get(obj, key)))
		return 0;
	if (dec_f_i64(d, obj, key, &out->v) < 0)
		return -1;
	out->set = 1;
	return 0;
}

static int
dec_f_bool(struct dec *d, J *obj, const char *key, int *out)
{
	size_t o = dec_dkey(d, key);
	int    rc = dec_v_bool(d, json_get(obj, key), out);

	dec_dpop(d, o);
	return rc;
}

static int
dec_f_opt_bool(struct dec *d, J *obj, const char *key, struct opt_bool *out)
{
	if (dec_absent(json_get(obj, key)))
		return 0;
	if (dec_f_bool(d, obj, key, &out->v) < 0)
		return -1;
	out->set = 1;
	return 0;
}

static int
dec_f_time(struct dec *d, J *obj, const char *key, int64_t *out)
{
	char  *s = NULL;
	size_t o = dec_dkey(d, key);
	int    rc;

	rc = dec_v_str(d, json_get(obj, key), &s);
	if (rc == 0 && s != NULL && time_parse_rfc3339(s, out) < 0)
		rc = dec_dfail(d, "invalid time \"%.64s\"", s);
	free(s);
	dec_dpop(d, o);
	return rc;
}

/* An object member (dec_absent or null: *out NULL, returns 0). */
static int
dec_f_obj(struct dec *d, J *obj, const char *key, J **out)
{
	J     *v = json_get(obj, key);
	size_t o;

	*out = NULL;
	if (dec_absent(v))
		return 0;
	if (json_type(v) != JSON_OBJECT) {
		o = dec_dkey(d, key);
		dec_dfail(d, "expected an object, got %s", json_type_name(json_type(v)));
		dec_dpop(d, o);
		return -1;
	}
	*out = v;
	return 0;
}

static int
dec_f_arr(struct dec *d, J *obj, const char *key, J **out)
{
	J     *v = json_get(obj, key);
	size_t o;

	*out = NULL;
	if (dec_absent(v))
		return 0;
	if (json_type(v) != JSON_ARRAY) {
		o = dec_dkey(d, key);
		dec_dfail(d, "expected an array, got %s", json_type_name(json_type(v)));
		dec_dpop(d, o);
		return -1;
	}
	*out = v;
	return 0;
}

static int
dec_f_strv(struct dec *d, J *obj, const char *key, struct strv *sv)
{
	J     *a;
	size_t i, o, oi;

	if (dec_f_arr(d, obj, key, &a) < 0)
		return -1;
	if (a == NULL || json_len(a) == 0)
		return 0;
	sv->n = json_len(a);
	sv->v = xcalloc(sv->n, sizeof(char *));
	o = dec_dkey(d, key);
	for (i = 0; i < sv->n; i++) {
		J *e = json_index(a, i);

		oi = dec_didx(d, i);
		if (dec_absent(e))
			sv->v[i] = xstrdup("");
		else if (dec_v_str(d, e, &sv->v[i]) < 0)
			return -1;
		dec_dpop(d, oi);
	}
	dec_dpop(d, o);
	return 0;
}

/* A map of strings (labels, annotations, nodeSelector). */
static int
dec_f_map(struct dec *d, J *obj, const char *key, struct kvlist *kl)
{
	J     *m;
	size_t i, o, ok;

	if (dec_f_obj(d, obj, key, &m) < 0)
		return -1;
	if (m == NULL || json_len(m) == 0)
		return 0;
	kl->n = json_len(m);
	kl->items = xcalloc(kl->n, sizeof(struct kv));
	o = dec_dkey(d, key);
	for (i = 0; i < kl->n; i++) {
		kl->items[i].k = xstrdup(json_key(m, i));
		ok = dec_dpush(d, "[%s]", json_key(m, i));
		if (dec_absent(json_index(m, i)))
			kl->items[i].v = xstrdup("");
		else if (dec_v_str(d, json_index(m, i), &kl->items[i].v) < 0)
			return -1;
		dec_dpop(d, ok);
	}
	dec_dpop(d, o);
	return 0;
}

/* Iterates an array of objects: allocates *arr (n elements of size sz, zeroed) and calls fn
 * for each element with the path set. */
typedef int (*elem_fn)(struct dec *, J *, void *);

static int
dec_f_list(struct dec *d, J *obj, const char *key, size_t sz, void **arr, size_t *n, elem_fn fn)
{
	J     *a;
	size_t i, o, oi;

	if (dec_f_arr(d, obj, key, &a) < 0)
		return -1;
	if (a == NULL || json_len(a) == 0)
		return 0;
	*n = json_len(a);
	*arr = xcalloc(*n, sz);
	o = dec_dkey(d, key);
	for (i = 0; i < *n; i++) {
		J *e = json_index(a, i);

		oi = dec_didx(d, i);
		if (json_type(e) != JSON_OBJECT)
			return dec_dfail(
			    d, "expected an object, got %s", json_type_name(json_type(e)));
		if (fn(d, e, (char *)*arr + i * sz) < 0)
			return -1;
		dec_dpop(d, oi);
	}
	dec_dpop(d, o);
	return 0;
}

#define F_LIST(d, obj, key, arr, n, fn)                                                            \
	dec_f_list((d), (obj), (key), sizeof(*(arr)), (void **)&(arr), &(n), (elem_fn)(fn))

/* An enum from its API spelling; dec_absent keeps *out (the default). */
static int
dec_f_enum(struct dec *d, J *obj, const char *key, const char *const *names, int *out)
{
	char  *s = NULL;
	size_t o = dec_dkey(d, key);
	int    i, rc = 0;

	if (dec_v_str(d, json_get(obj, key), &s) < 0) {
		dec_dpop(d, o);
		return -1;
	}
	if (s != NULL && *s != '\0') {
		for (i = 0; names[i] != NULL; i++)
			if (strcmp(s, names[i]) == 0)
				break;
		if (names[i] == NULL)
			rc = dec_dfail(d, "unsupported value \"%.64s\"", s);
		else
			*out = i;
	}
	free(s);
	dec_dpop(d, o);
	return rc;
}

static int
dec_v_quantity(struct dec *d, J *v, int64_t *milli)
{
	const char *s;

	switch (json_type(v)) {
	case JSON_STRING:
		s = json_str(v);
		break;
	case JSON_INT:
	case JSON_DOUBLE:
		s = json_text(v);
		break;
	default:
		return dec_dfail(d, "expected a quantity, got %s", json_type_name(json_type(v)));
	}
	if (quantity_parse(s, milli) < 0)
		return dec_dfail(d, "invalid quantity \"%.64s\"", s);
	return 0;
}

static int
dec_f_quantity(struct dec *d, J *obj, const char *key, int64_t *milli)
{
	J     *v = json_get(obj, key);
	size_t o;
	int    rc;

	if (dec_absent(v))
		return 0;
	o = dec_dkey(d, key);
	rc = dec_v_quantity(d, v, milli);
	dec_dpop(d, o);
	return rc;
}

static int
dec_f_resource_list(struct dec *d, J *obj, const char *key, struct resource_list *rl)
{
	J     *m;
	size_t i, o, ok;

	if (dec_f_obj(d, obj, key, &m) < 0)
		return -1;
	if (m == NULL || json_len(m) == 0)
		return 0;
	rl->n = json_len(m);
	rl->items = xcalloc(rl->n, sizeof(struct quantity));
	o = dec_dkey(d, key);
	for (i = 0; i < rl->n; i++) {
		rl->items[i].name = xstrdup(json_key(m, i));
		ok = dec_dpush(d, ".%s", json_key(m, i));
		if (dec_v_quantity(d, json_index(m, i), &rl->items[i].milli) < 0)
			return -1;
		dec_dpop(d, ok);
	}
	dec_dpop(d, o);
	return 0;
}

static int
dec_f_int_or_str(struct dec *d, J *obj, const char *key, struct int_or_str *ios)
{
	J      *v = json_get(obj, key);
	size_t  o;
	int64_t i;
	int     rc = 0;

	if (dec_absent(v))
		return 0;
	o = dec_dkey(d, key);
	if (json_type(v) == JSON_STRING) {
		ios->is_str = 1;
		free(ios->str);
		ios->str = xstrdup(json_str(v));
	} else if (json_type(v) == JSON_INT) {
		if ((rc = dec_v_int(d, v, &i, INT32_MIN, INT32_MAX)) == 0)
			ios->num = (int32_t)i;
	} else
		rc = dec_dfail(
		    d, "expected an integer or a string, got %s", json_type_name(json_type(v)));
	dec_dpop(d, o);
	return rc;
}

/* ---- handlers, probes ---- */

static int
dec_header(struct dec *d, J *o, struct http_header *h)
{
	if (dec_f_str(d, o, "name", &h->name) < 0 || dec_f_str(d, o, "value", &h->value) < 0)
		return -1;
	return 0;
}

/* A probe's or a hook's action: exactly one of exec, httpGet, tcpSocket, grpc, sleep. The
 * number present is kept for validation. */
static int
dec_handler(struct dec *d, J *o, struct handler *h)
{
	J *x;

	h->h_kind = HANDLER_NONE;
	if (dec_f_obj(d, o, "exec", &x) < 0)
		return -1;
	if (x != NULL) {
		size_t p = dec_dkey(d, "exec");

		h->h_nkinds++;
		h->h_kind = HANDLER_EXEC;
		if (dec_f_strv(d, x, "command", &h->h_exec) < 0)
			return -1;
		dec_dpop(d, p);
	}
	if (dec_f_obj(d, o, "httpGet", &x) < 0)
		return -1;
	if (x != NULL) {
		size_t p = dec_dkey(d, "httpGet");

		if (h->h_nkinds++ == 0)
			h->h_kind = HANDLER_HTTP_GET;
		if (dec_f_str(d, x, "host", &h->h_host) < 0 ||
		    dec_f_str(d, x, "path", &h->h_path) < 0 ||
		    dec_f_str(d, x, "scheme", &h->h_scheme) < 0 ||
		    dec_f_int_or_str(d, x, "port", &h->h_port) < 0 ||
		    F_LIST(d, x, "httpHeaders", h->h_headers, h->h_nheaders, dec_header) < 0)
			return -1;
		if (h->h_scheme == NULL || *h->h_scheme == '\0') {
			free(h->h_scheme);
			h->h_scheme = xstrdup("HTTP");
		}
		if (h->h_path == NULL || *h->h_path == '\0') {
			free(h->h_path);
			h->h_path = xstrdup("/");
		}
		dec_dpop(d, p);
	}
	if (dec_f_obj(d, o, "tcpSocket", &x) < 0)
		return -1;
	if (x != NULL) {
		size_t p = dec_dkey(d, "tcpSocket");

		if (h->h_nkinds++ == 0)
			h->h_kind = HANDLER_TCP_SOCKET;
		if (h->h_kind == HANDLER_TCP_SOCKET &&
		    (dec_f_str(d, x, "host", &h->h_host) < 0 ||
		        dec_f_int_or_str(d, x, "port", &h->h_port) < 0))
			return -1;
		dec_dpop(d, p);
	}
	if (dec_f_obj(d, o, "grpc", &x) < 0)
		return -1;
	if (x != NULL) {
		size_t p = dec_dkey(d, "grpc");

		if (h->h_nkinds++ == 0)
			h->h_kind = HANDLER_GRPC;
		if (dec_f_i32(d, x, "port", &h->h_grpc_port) < 0 ||
		    dec_f_str(d, x, "service", &h->h_grpc_service) < 0)
			return -1;
		dec_dpop(d, p);
	}
	if (dec_f_obj(d, o, "sleep", &x) < 0)
		return -1;
	if (x != NULL) {
		size_t p = dec_dkey(d, "sleep");

		if (h->h_nkinds++ == 0)
			h->h_kind = HANDLER_SLEEP;
		if (dec_f_i64(d, x, "seconds", &h->h_sleep_seconds) < 0)
			return -1;
		dec_dpop(d, p);
	}
	return 0;
}

static int
dec_probe(struct dec *d, J *c, const char *key, struct probe **out)
{
	struct probe *p;
	J            *o;
	size_t        old;

	if (dec_f_obj(d, c, key, &o) < 0)
		return -1;
	if (o == NULL)
		return 0;
	p = *out = xcalloc(1, sizeof(*p));
	old = dec_dkey(d, key);
	if (dec_handler(d, o, &p->pr_handler) < 0 ||
	    dec_f_i32(d, o, "initialDelaySeconds", &p->pr_initial_delay) < 0 ||
	    dec_f_i32(d, o, "timeoutSeconds", &p->pr_timeout) < 0 ||
	    dec_f_i32(d, o, "periodSeconds", &p->pr_period) < 0 ||
	    dec_f_i32(d, o, "successThreshold", &p->pr_success_threshold) < 0 ||
	    dec_f_i32(d, o, "failureThreshold", &p->pr_failure_threshold) < 0 ||
	    dec_f_opt_i64(d, o, "terminationGracePeriodSeconds", &p->pr_termination_grace) < 0)
		return -1;
	/* API defaults (SetDefaults_Probe): zero means unset. */
	if (p->pr_timeout == 0)
		p->pr_timeout = 1;
	if (p->pr_period == 0)
		p->pr_period = 10;
	if (p->pr_success_threshold == 0)
		p->pr_success_threshold = 1;
	if (p->pr_failure_threshold == 0)
		p->pr_failure_threshold = 3;
	dec_dpop(d, old);
	return 0;
}

static int
dec_hook(struct dec *d, J *lc, const char *key, struct handler **out)
{
	J     *o;
	size_t old;

	if (dec_f_obj(d, lc, key, &o) < 0)
		return -1;
	if (o == NULL)
		return 0;
	*out = xcalloc(1, sizeof(**out));
	old = dec_dkey(d, key);
	if (dec_handler(d, o, *out) < 0)
		return -1;
	dec_dpop(d, old);
	return 0;
}

/* ---- containers ---- */

static int
dec_ref_optional(struct dec *d, J *o, int *optional)
{
	return dec_f_bool(d, o, "optional", optional);
}

static int
dec_env(struct dec *d, J *o, struct env_var *e)
{
	J     *vf, *x;
	size_t old;
	int    nsrc = 0;

	if (dec_f_str(d, o, "name", &e->name) < 0 || dec_f_str(d, o, "value", &e->value) < 0)
		return -1;
	e->src = ENV_VALUE;
	if (dec_f_obj(d, o, "valueFrom", &vf) < 0)
		return -1;
	if (vf == NULL)
		return 0;
	old = dec_dkey(d, "valueFrom");
	if (dec_f_obj(d, vf, "fieldRef", &x) < 0)
		return -1;
	if (x != NULL) {
		size_t p = dec_dkey(d, "fieldRef");

		nsrc++;
		e->src = ENV_FIELD_REF;
		if (dec_f_str(d, x, "fieldPath", &e->ref_key) < 0 ||
		    dec_f_str(d, x, "apiVersion", &e->ref_api_version) < 0)
			return -1;
		if (e->ref_api_version == NULL)
			e->ref_api_version = xstrdup("v1");
		dec_dpop(d, p);
	}
	if (dec_f_obj(d, vf, "resourceFieldRef", &x) < 0)
		return -1;
	if (x != NULL) {
		size_t p = dec_dkey(d, "resourceFieldRef");

		nsrc++;
		e->src = ENV_RESOURCE_FIELD_REF;
		if (dec_f_str(d, x, "resource", &e->ref_key) < 0 ||
		    dec_f_str(d, x, "containerName", &e->ref_container) < 0 ||
		    dec_f_quantity(d, x, "divisor", &e->ref_divisor_milli) < 0)
			return -1;
		dec_dpop(d, p);
	}
	if (dec_f_obj(d, vf, "configMapKeyRef", &x) < 0)
		return -1;
	if (x != NULL) {
		size_t p = dec_dkey(d, "configMapKeyRef");

		nsrc++;
		e->src = ENV_CONFIG_MAP_KEY_REF;
		if (dec_f_str(d, x, "name", &e->ref_name) < 0 ||
		    dec_f_str(d, x, "key", &e->ref_key) < 0 ||
		    dec_ref_optional(d, x, &e->optional) < 0)
			return -1;
		dec_dpop(d, p);
	}
	if (dec_f_obj(d, vf, "secretKeyRef", &x) < 0)
		return -1;
	if (x != NULL) {
		size_t p = dec_dkey(d, "secretKeyRef");

		nsrc++;
		e->src = ENV_SECRET_KEY_REF;
		if (dec_f_str(d, x, "name", &e->ref_name) < 0 ||
		    dec_f_str(d, x, "key", &e->ref_key) < 0 ||
		    dec_ref_optional(d, x, &e->optional) < 0)
			return -1;
		dec_dpop(d, p);
	}
	if (nsrc != 1)
		return dec_dfail(d, "must have exactly one source, got %d", nsrc);
	dec_dpop(d, old);
	if (e->value != NULL && *e->value != '\0') {
		old = dec_dkey(d, "valueFrom");
		dec_dfail(d, "may not be specified when value is not empty");
		dec_dpop(d, old);
		return -1;
	}
	return 0;
}

static int
dec_env_from(struct dec *d, J *o, struct env_from *ef)
{
	J     *cm, *sec, *x;
	size_t old;

	if (dec_f_str(d, o, "prefix", &ef->prefix) < 0 ||
	    dec_f_obj(d, o, "configMapRef", &cm) < 0 || dec_f_obj(d, o, "secretRef", &sec) < 0)
		return -1;
	if ((cm == NULL) == (sec == NULL))
		return dec_dfail(d, "must have exactly one of configMapRef and secretRef");
	x = cm != NULL ? cm : sec;
	ef->is_secret = sec != NULL;
	old = dec_dkey(d, cm != NULL ? "configMapRef" : "secretRef");
	if (dec_f_str(d, x, "name", &ef->name) < 0 || dec_ref_optional(d, x, &ef->optional) < 0)
		return -1;
	dec_dpop(d, old);
	return 0;
}

static int
dec_port(struct dec *d, J *o, struct container_port *p)
{
	static const char *const protos[] = { "TCP", "UDP", "SCTP", NULL };
	int                      proto = PROTO_TCP;

	if (dec_f_str(d, o, "name", &p->name) < 0 ||
	    dec_f_i32(d, o, "containerPort", &p->container_port) < 0 ||
	    dec_f_i32(d, o, "hostPort", &p->host_port) < 0 ||
	    dec_f_enum(d, o, "protocol", protos, &proto) < 0 ||
	    dec_f_str(d, o, "hostIP", &p->host_ip) < 0)
		return -1;
	p->protocol = (enum protocol)proto;
	return 0;
}

static int
dec_mount(struct dec *d, J *o, struct volume_mount *m)
{
	static const char *const props[] = { "None", "HostToContainer", "Bidirectional", NULL };
	int                      prop = PROP_NONE;

	if (dec_f_str(d, o, "name", &m->name) < 0 ||
	    dec_f_str(d, o, "mountPath", &m->mount_path) < 0 ||
	    dec_f_str(d, o, "subPath", &m->sub_path) < 0 ||
	    dec_f_bool(d, o, "readOnly", &m->read_only) < 0 ||
	    dec_f_enum(d, o, "mountPropagation", props, &prop) < 0)
		return -1;
	m->propagation = (enum mount_propagation)prop;
	return 0;
}

static int
dec_seccomp(struct dec *d, J *o, struct seccomp_profile *sp)
{
	J     *x;
	size_t old;

	if (dec_f_obj(d, o, "seccompProfile", &x) < 0)
		return -1;
	if (x == NULL)
		return 0;
	old = dec_dkey(d, "seccompProfile");
	if (dec_f_str(d, x, "type", &sp->type) < 0 ||
	    dec_f_str(d, x, "localhostProfile", &sp->localhost) < 0)
		return -1;
	dec_dpop(d, old);
	return 0;
}

static int
dec_security(struct dec *d, J *c, struct security_context **out)
{
	struct security_context *sc;
	J                       *o, *caps;
	size_t                   old, oc;

	if (dec_f_obj(d, c, "securityContext", &o) < 0)
		return -1;
	if (o == NULL)
		return 0;
	sc = *out = xcalloc(1, sizeof(*sc));
	old = dec_dkey(d, "securityContext");
	if (dec_f_opt_bool(d, o, "privileged", &sc->privileged) < 0 ||
	    dec_f_opt_i64(d, o, "runAsUser", &sc->run_as_user) < 0 ||
	    dec_f_opt_i64(d, o, "runAsGroup", &sc->run_as_group) < 0 ||
	    dec_f_opt_bool(d, o, "runAsNonRoot", &sc->run_as_non_root) < 0 ||
	    dec_f_opt_bool(d, o, "readOnlyRootFilesystem", &sc->read_only_root_fs) < 0 ||
	    dec_f_opt_bool(d, o, "allowPrivilegeEscalation", &sc->allow_privilege_escalation) < 0 ||
	    dec_f_str(d, o, "procMount", &sc->proc_mount) < 0 ||
	    dec_seccomp(d, o, &sc->seccomp) < 0 || dec_f_obj(d, o, "capabilities", &caps) < 0)
		return -1;
	if (caps != NULL) {
		oc = dec_dkey(d, "capabilities");
		if (dec_f_strv(d, caps, "add", &sc->cap_add) < 0 ||
		    dec_f_strv(d, caps, "drop", &sc->cap_drop) < 0)
			return -1;
		dec_dpop(d, oc);
	}
	dec_dpop(d, old);
	return 0;
}

/* The API's rule (SetDefaults_Container): Always when the tag is "latest", or when there is
 * neither a tag nor a digest; else IfNotPresent. */
static enum pull_policy
dec_default_pull_policy(const char *image)
{
	const char *at, *slash, *colon;
	size_t      n;

	if (image == NULL)
		return PULL_IF_NOT_PRESENT;
	at = strchr(image, '@');
	n = at != NULL ? (size_t)(at - image) : strlen(image);
	slash = memrchr(image, '/', n);
	colon = memrchr(
	    slash != NULL ? slash : image, ':', n - (size_t)(slash != NULL ? slash - image : 0));
	if (colon == NULL)
		return at != NULL ? PULL_IF_NOT_PRESENT : PULL_ALWAYS;
	if ((size_t)(image + n - colon - 1) == 6 && strncmp(colon + 1, "latest", 6) == 0)
		return PULL_ALWAYS;
	return PULL_IF_NOT_PRESENT;
}

/* SetDefaults_Pod: a container's limits stand for its missing requests. */
static void
dec_default_requests(struct container *c)
{
	struct resource_list       *rq = &c->c_resources.requests;
	const struct resource_list *lim = &c->c_resources.limits;
	size_t                      i, n = 0;

	for (i = 0; i < lim->n; i++)
		if (resource_list_get(rq, lim->items[i].name) == NULL)
			n++;
	if (n == 0)
		return;
	rq->items = xreallocarray(rq->items, rq->n + n, sizeof(*rq->items));
	for (i = 0; i < lim->n; i++) {
		if (resource_list_get(rq, lim->items[i].name) != NULL)
			continue;
		rq->items[rq->n].name = xstrdup(lim->items[i].name);
		rq->items[rq->n].milli = lim->items[i].milli;
		rq->n++;
	}
}

/* SetDefaults_Pod: with host networking a port's hostPort defaults to its containerPort. */
static void
dec_default_host_ports(struct container *cs, size_t n)
{
	size_t i, j;

	for (i = 0; i < n; i++)
		for (j = 0; j < cs[i].c_nports; j++)
			if (cs[i].c_ports[j].host_port == 0)
				cs[i].c_ports[j].host_port = cs[i].c_ports[j].container_port;
}

static int
dec_container(struct dec *d, J *o, struct container *c)
{
	static const char *const pulls[] = { "Always", "IfNotPresent", "Never", NULL };
	static const char *const rps[] = { "Always", "OnFailure", "Never", NULL };
	static const char *const tmps[] = { "File", "FallbackToLogsOnError", NULL };
	J                       *res, *lc;
	size_t                   old;
	int                      pull = -1, rp = -1, tmp = TERM_MSG_FILE;

	if (dec_f_str(d, o, "name", &c->c_name) < 0 || dec_f_str(d, o, "image", &c->c_image) < 0 ||
	    dec_f_strv(d, o, "command", &c->c_command) < 0 ||
	    dec_f_strv(d, o, "args", &c->c_args) < 0 ||
	    dec_f_str(d, o, "workingDir", &c->c_working_dir) < 0 ||
	    F_LIST(d, o, "env", c->c_env, c->c_nenv, dec_env) < 0 ||
	    F_LIST(d, o, "envFrom", c->c_env_from, c->c_nenv_from, dec_env_from) < 0 ||
	    F_LIST(d, o, "ports", c->c_ports, c->c_nports, dec_port) < 0 ||
	    F_LIST(d, o, "volumeMounts", c->c_mounts, c->c_nmounts, dec_mount) < 0 ||
	    dec_f_obj(d, o, "resources", &res) < 0)
		return -1;
	if (res != NULL) {
		old = dec_dkey(d, "resources");
		if (dec_f_resource_list(d, res, "requests", &c->c_resources.requests) < 0 ||
		    dec_f_resource_list(d, res, "limits", &c->c_resources.limits) < 0)
			return -1;
		dec_dpop(d, old);
	}
	if (dec_probe(d, o, "livenessProbe", &c->c_liveness) < 0 ||
	    dec_probe(d, o, "readinessProbe", &c->c_readiness) < 0 ||
	    dec_probe(d, o, "startupProbe", &c->c_startup) < 0 ||
	    dec_f_obj(d, o, "lifecycle", &lc) < 0)
		return -1;
	if (lc != NULL) {
		old = dec_dkey(d, "lifecycle");
		if (dec_hook(d, lc, "postStart", &c->c_post_start) < 0 ||
		    dec_hook(d, lc, "preStop", &c->c_pre_stop) < 0)
			return -1;
		dec_dpop(d, old);
	}
	if (dec_f_str(d, o, "terminationMessagePath", &c->c_term_msg_path) < 0 ||
	    dec_f_enum(d, o, "terminationMessagePolicy", tmps, &tmp) < 0 ||
	    dec_f_enum(d, o, "imagePullPolicy", pulls, &pull) < 0 ||
	    dec_security(d, o, &c->c_security) < 0 || dec_f_bool(d, o, "stdin", &c->c_stdin) < 0 ||
	    dec_f_bool(d, o, "stdinOnce", &c->c_stdin_once) < 0 ||
	    dec_f_bool(d, o, "tty", &c->c_tty) < 0 ||
	    dec_f_enum(d, o, "restartPolicy", rps, &rp) < 0 ||
	    dec_f_str(d, o, "targetContainerName", &c->c_target_container) < 0)
		return -1;
	if (c->c_term_msg_path == NULL || *c->c_term_msg_path == '\0') {
		free(c->c_term_msg_path);
		c->c_term_msg_path = xstrdup("/dev/termination-log");
	}
	c->c_term_msg_policy = (enum term_msg_policy)tmp;
	c->c_pull_policy = pull >= 0 ? (enum pull_policy)pull : dec_default_pull_policy(c->c_image);
	if (rp >= 0) {
		c->c_has_restart_policy = 1;
		c->c_restart_policy = (enum restart_policy)rp;
	}
	return 0;
}

static int
dec_app(struct dec *d, J *o, struct container *c)
{
	c->c_kind = CK_APP;
	return dec_container(d, o, c);
}

static int
dec_init(struct dec *d, J *o, struct container *c)
{
	c->c_kind = CK_INIT;
	return dec_container(d, o, c);
}

static int
dec_ephemeral(struct dec *d, J *o, struct container *c)
{
	c->c_kind = CK_EPHEMERAL;
	return dec_container(d, o, c);
}

/* ---- volumes ---- */

static int
dec_key_to_path(struct dec *d, J *o, struct key_to_path *kp)
{
	J     *fr;
	size_t old;

	kp->mode = -1;
	if (dec_f_str(d, o, "key", &kp->key) < 0 || dec_f_str(d, o, "path", &kp->path) < 0 ||
	    dec_f_i32(d, o, "mode", &kp->mode) < 0 || dec_f_obj(d, o, "fieldRef", &fr) < 0)
		return -1;
	if (fr != NULL) { /* downwardAPI items name a field instead of a key */
		old = dec_dkey(d, "fieldRef");
		if (dec_f_str(d, fr, "fieldPath", &kp->key) < 0)
			return -1;
		dec_dpop(d, old);
	}
	if (dec_f_obj(d, o, "resourceFieldRef", &fr) < 0)
		return -1;
	if (fr != NULL) { /* or a container's resource */
		old = dec_dkey(d, "resourceFieldRef");
		if (dec_f_str(d, fr, "containerName", &kp->res_container) < 0 ||
		    dec_f_str(d, fr, "resource", &kp->resource) < 0 ||
		    dec_f_quantity(d, fr, "divisor", &kp->res_divisor_milli) < 0)
			return -1;
		dec_dpop(d, old);
	}
	return 0;
}

/* One source of a projected volume. */
static int
dec_projection(struct dec *d, J *o, struct volume_projection *p)
{
	static const struct {
		const char          *key;
		enum projection_kind kind;
	} kinds[] = {
		{ "configMap", PROJ_CONFIG_MAP },
		{ "secret", PROJ_SECRET },
		{ "downwardAPI", PROJ_DOWNWARD_API },
		{ "serviceAccountToken", PROJ_SA_TOKEN },
		{ "clusterTrustBundle", PROJ_OTHER },
	};
	J     *src = NULL, *x;
	size_t i, old = 0;

	for (i = 0; i < nitems(kinds) && src == NULL; i++) {
		if (dec_f_obj(d, o, kinds[i].key, &x) < 0)
			return -1;
		if (x != NULL) {
			src = x;
			p->p_kind = kinds[i].kind;
			old = dec_dkey(d, kinds[i].key);
		}
	}
	if (src == NULL)
		return 0;
	switch (p->p_kind) {
	case PROJ_CONFIG_MAP:
	case PROJ_SECRET:
		if (dec_f_str(d, src, "name", &p->p_name) < 0 ||
		    F_LIST(d, src, "items", p->p_items, p->p_nitems, dec_key_to_path) < 0 ||
		    dec_f_bool(d, src, "optional", &p->p_optional) < 0)
			return -1;
		break;
	case PROJ_DOWNWARD_API:
		if (F_LIST(d, src, "items", p->p_items, p->p_nitems, dec_key_to_path) < 0)
			return -1;
		break;
	case PROJ_SA_TOKEN:
		p->p_expiration = 3600; /* SetDefaults_ServiceAccountTokenProjection */
		if (dec_f_str(d, src, "audience", &p->p_audience) < 0 ||
		    dec_f_i64(d, src, "expirationSeconds", &p->p_expiration) < 0 ||
		    dec_f_str(d, src, "path", &p->p_path) < 0)
			return -1;
		break;
	case PROJ_OTHER:
		p->p_name = xstrdup(kinds[i - 1].key);
		break;
	}
	dec_dpop(d, old);
	return 0;
}

static const struct {
	const char      *key;
	enum volume_kind kind;
} volume_kinds[] = {
	{ "emptyDir", VOL_EMPTY_DIR },
	{ "hostPath", VOL_HOST_PATH },
	{ "configMap", VOL_CONFIG_MAP },
	{ "secret", VOL_SECRET },
	{ "projected", VOL_PROJECTED },
	{ "downwardAPI", VOL_DOWNWARD_API },
	{ "persistentVolumeClaim", VOL_PVC },
	{ "csi", VOL_CSI },
	{ "nfs", VOL_NFS },
	{ "ephemeral", VOL_EPHEMERAL },
	/* Other in-tree kinds: kept as VOL_OTHER with their name. */
	{ "gitRepo", VOL_OTHER },
	{ "iscsi", VOL_OTHER },
	{ "glusterfs", VOL_OTHER },
	{ "rbd", VOL_OTHER },
	{ "flexVolume", VOL_OTHER },
	{ "cinder", VOL_OTHER },
	{ "cephfs", VOL_OTHER },
	{ "flocker", VOL_OTHER },
	{ "fc", VOL_OTHER },
	{ "azureFile", VOL_OTHER },
	{ "azureDisk", VOL_OTHER },
	{ "vsphereVolume", VOL_OTHER },
	{ "quobyte", VOL_OTHER },
	{ "photonPersistentDisk", VOL_OTHER },
	{ "portworxVolume", VOL_OTHER },
	{ "scaleIO", VOL_OTHER },
	{ "storageos", VOL_OTHER },
	{ "gcePersistentDisk", VOL_OTHER },
	{ "awsElasticBlockStore", VOL_OTHER },
	{ "image", VOL_OTHER },
};

static int
dec_volume(struct dec *d, J *o, struct volume *v)
{
	J     *src = NULL, *x;
	size_t i, old;

	v->v_default_mode = -1;
	if (dec_f_str(d, o, "name", &v->v_name) < 0)
		return -1;
	for (i = 0; i < nitems(volume_kinds); i++) {
		if (dec_f_obj(d, o, volume_kinds[i].key, &x) < 0)
			return -1;
		if (x == NULL)
			continue;
		if (v->v_nsources++ == 0) {
			src = x;
			v->v_kind = volume_kinds[i].kind;
			v->v_kind_name = xstrdup(volume_kinds[i].key);
		}
	}
	if (src == NULL) {
		/* SetDefaults_Volume: no source at all means an emptyDir. */
		v->v_kind = VOL_EMPTY_DIR;
		v->v_kind_name = xstrdup("emptyDir");
		return 0;
	}
	old = dec_dkey(d, v->v_kind_name);
	switch (v->v_kind) {
	case VOL_EMPTY_DIR:
		if (dec_f_str(d, src, "medium", &v->v_medium) < 0 ||
		    dec_f_quantity(d, src, "sizeLimit", &v->v_size_limit_milli) < 0)
			return -1;
		break;
	case VOL_HOST_PATH:
		if (dec_f_str(d, src, "path", &v->v_path) < 0 ||
		    dec_f_str(d, src, "type", &v->v_host_path_type) < 0)
			return -1;
		break;
	case VOL_CONFIG_MAP:
	case VOL_SECRET:
		if (dec_f_str(d, src, v->v_kind == VOL_SECRET ? "secretName" : "name",
		        &v->v_source) < 0 ||
		    F_LIST(d, src, "items", v->v_items, v->v_nitems, dec_key_to_path) < 0 ||
		    dec_f_i32(d, src, "defaultMode", &v->v_default_mode) < 0 ||
		    dec_f_bool(d, src, "optional", &v->v_optional) < 0)
			return -1;
		break;
	case VOL_DOWNWARD_API:
		if (F_LIST(d, src, "items", v->v_items, v->v_nitems, dec_key_to_path) < 0 ||
		    dec_f_i32(d, src, "defaultMode", &v->v_default_mode) < 0)
			return -1;
		break;
	case VOL_PROJECTED:
		if (dec_f_i32(d, src, "defaultMode", &v->v_default_mode) < 0 ||
		    F_LIST(d, src, "sources", v->v_projections, v->v_nprojections, dec_projection) <
		        0)
			return -1;
		break;
	case VOL_PVC:
		if (dec_f_str(d, src, "claimName", &v->v_source) < 0 ||
		    dec_f_bool(d, src, "readOnly", &v->v_read_only) < 0)
			return -1;
		break;
	case VOL_CSI:
		if (dec_f_str(d, src, "driver", &v->v_source) < 0 ||
		    dec_f_bool(d, src, "readOnly", &v->v_read_only) < 0)
			return -1;
		break;
	case VOL_NFS: {
		char *server = NULL;

		if (dec_f_str(d, src, "server", &server) < 0 ||
		    dec_f_str(d, src, "path", &v->v_path) < 0 ||
		    dec_f_bool(d, src, "readOnly", &v->v_read_only) < 0) {
			free(server);
			return -1;
		}
		v->v_source = server;
		break;
	}
	case VOL_EPHEMERAL:
	case VOL_OTHER:
		break;
	}
	/* SetDefaults_*VolumeSource: defaultMode 0644. */
	if (v->v_default_mode == -1 &&
	    (v->v_kind == VOL_CONFIG_MAP || v->v_kind == VOL_SECRET || v->v_kind == VOL_PROJECTED ||
	        v->v_kind == VOL_DOWNWARD_API))
		v->v_default_mode = 0644;
	dec_dpop(d, old);
	return 0;
}

/* ---- pod-level pieces ---- */

static int
dec_owner(struct dec *d, J *o, struct owner_ref *r)
{
	if (dec_f_str(d, o, "apiVersion", &r->api_version) < 0 ||
	    dec_f_str(d, o, "kind", &r->kind) < 0 || dec_f_str(d, o, "name", &r->name) < 0 ||
	    dec_f_str(d, o, "uid", &r->uid) < 0 ||
	    dec_f_bool(d, o, "controller", &r->controller) < 0)
		return -1;
	return 0;
}

static int
dec_toleration(struct dec *d, J *o, struct toleration *t)
{
	if (dec_f_str(d, o, "key", &t->key) < 0 || dec_f_str(d, o, "operator", &t->op) < 0 ||
	    dec_f_str(d, o, "value", &t->value) < 0 || dec_f_str(d, o, "effect", &t->effect) < 0 ||
	    dec_f_opt_i64(d, o, "tolerationSeconds", &t->toleration_seconds) < 0)
		return -1;
	return 0;
}

static int
dec_ns_requirement(struct dec *d, J *o, struct ns_requirement *r)
{
	static const char *const ops[] = { "In", "NotIn", "Exists", "DoesNotExist", "Gt", "Lt",
		NULL };
	int                      op = -1;

	if (dec_f_str(d, o, "key", &r->key) < 0 || dec_f_enum(d, o, "operator", ops, &op) < 0 ||
	    dec_f_strv(d, o, "values", &r->values) < 0)
		return -1;
	if (op < 0) {
		size_t old = dec_dkey(d, "operator");
		int    rc = dec_dfail(d, "required");

		dec_dpop(d, old);
		return rc;
	}
	r->op = (enum ns_op)op;
	return 0;
}

static int
dec_ns_term(struct dec *d, J *o, struct ns_term *t)
{
	if (F_LIST(d, o, "matchExpressions", t->exprs, t->nexprs, dec_ns_requirement) < 0 ||
	    F_LIST(d, o, "matchFields", t->fields, t->nfields, dec_ns_requirement) < 0)
		return -1;
	return 0;
}

/* spec.affinity: only the required node affinity matters to a node (admission). */
static int
dec_affinity(struct dec *d, J *spec, struct pod *p)
{
	J     *a, *na, *req;
	size_t old = dec_dkey(d, "affinity");
	int    rc = -1;

	if (dec_f_obj(d, spec, "affinity", &a) < 0)
		goto out;
	rc = 0;
	if (a == NULL || dec_f_obj(d, a, "nodeAffinity", &na) < 0 || na == NULL)
		goto out;
	rc = -1;
	if (dec_f_obj(d, na, "requiredDuringSchedulingIgnoredDuringExecution", &req) < 0)
		goto out;
	rc = 0;
	if (req == NULL)
		goto out;
	p->node_affinity = xcalloc(1, sizeof(*p->node_affinity));
	rc = F_LIST(d, req, "nodeSelectorTerms", p->node_affinity->terms, p->node_affinity->nterms,
	    dec_ns_term);
out:
	dec_dpop(d, old);
	return rc;
}

static int
dec_pod_os(struct dec *d, J *spec, struct pod *p)
{
	J *os;

	if (dec_f_obj(d, spec, "os", &os) < 0)
		return -1;
	return os == NULL ? 0 : dec_f_str(d, os, "name", &p->os_name);
}

static int
dec_name_value(struct dec *d, J *o, struct kv *kv)
{
	if (dec_f_str(d, o, "name", &kv->k) < 0 || dec_f_str(d, o, "value", &kv->v) < 0)
		return -1;
	return 0;
}

static int
dec_name_only(struct dec *d, J *o, char **name)
{
	return dec_f_str(d, o, "name", name);
}

static int
dec_dns_config(struct dec *d, J *spec, struct pod *p)
{
	J     *o;
	size_t old;

	if (dec_f_obj(d, spec, "dnsConfig", &o) < 0)
		return -1;
	if (o == NULL)
		return 0;
	p->dns_config = xcalloc(1, sizeof(*p->dns_config));
	old = dec_dkey(d, "dnsConfig");
	if (dec_f_strv(d, o, "nameservers", &p->dns_config->nameservers) < 0 ||
	    dec_f_strv(d, o, "searches", &p->dns_config->searches) < 0 ||
	    F_LIST(d, o, "options", p->dns_config->options.items, p->dns_config->options.n,
	        dec_name_value) < 0)
		return -1;
	dec_dpop(d, old);
	return 0;
}

static int
dec_pod_security(struct dec *d, J *spec, struct pod *p)
{
	struct pod_security_context *sc;
	J                           *o, *a;
	size_t                       old, i, oi;

	if (dec_f_obj(d, spec, "securityContext", &o) < 0)
		return -1;
	if (o == NULL)
		return 0;
	sc = p->security = xcalloc(1, sizeof(*sc));
	old = dec_dkey(d, "securityContext");
	if (dec_f_opt_i64(d, o, "runAsUser", &sc->run_as_user) < 0 ||
	    dec_f_opt_i64(d, o, "runAsGroup", &sc->run_as_group) < 0 ||
	    dec_f_opt_bool(d, o, "runAsNonRoot", &sc->run_as_non_root) < 0 ||
	    dec_f_opt_i64(d, o, "fsGroup", &sc->fs_group) < 0 ||
	    F_LIST(d, o, "sysctls", sc->sysctls.items, sc->sysctls.n, dec_name_value) < 0 ||
	    dec_seccomp(d, o, &sc->seccomp) < 0 || dec_f_arr(d, o, "supplementalGroups", &a) < 0)
		return -1;
	if (a != NULL && json_len(a) > 0) {
		size_t os = dec_dkey(d, "supplementalGroups");

		sc->nsupplemental_groups = json_len(a);
		sc->supplemental_groups = xcalloc(sc->nsupplemental_groups, sizeof(int64_t));
		for (i = 0; i < sc->nsupplemental_groups; i++) {
			oi = dec_didx(d, i);
			if (dec_v_int(d, json_index(a, i), &sc->supplemental_groups[i], INT64_MIN,
			        INT64_MAX) < 0)
				return -1;
			dec_dpop(d, oi);
		}
		dec_dpop(d, os);
	}
	dec_dpop(d, old);
	return 0;
}

/* hostAliases: ip -> comma-separated hostnames. */
static int
dec_host_aliases(struct dec *d, J *spec, struct pod *p)
{
	J     *a;
	size_t i, j, old, oi;

	if (dec_f_arr(d, spec, "hostAliases", &a) < 0)
		return -1;
	if (a == NULL || json_len(a) == 0)
		return 0;
	p->host_aliases.n = json_len(a);
	p->host_aliases.items = xcalloc(p->host_aliases.n, sizeof(struct kv));
	old = dec_dkey(d, "hostAliases");
	for (i = 0; i < p->host_aliases.n; i++) {
		J          *e = json_index(a, i);
		struct strv names = { NULL, 0 };
		struct kv  *kv = &p->host_aliases.items[i];
		size_t      len = 1;

		oi = dec_didx(d, i);
		if (json_type(e) != JSON_OBJECT)
			return dec_dfail(
			    d, "expected an object, got %s", json_type_name(json_type(e)));
		if (dec_f_str(d, e, "ip", &kv->k) < 0 ||
		    dec_f_strv(d, e, "hostnames", &names) < 0) {
			for (j = 0; j < names.n; j++)
				free(names.v[j]);
			free(names.v);
			return -1;
		}
		for (j = 0; j < names.n; j++)
			len += strlen(names.v[j]) + 1;
		kv->v = xcalloc(1, len);
		for (j = 0; j < names.n; j++) {
			if (j > 0)
				strcat(kv->v, ",");
			strcat(kv->v, names.v[j]);
			free(names.v[j]);
		}
		free(names.v);
		dec_dpop(d, oi);
	}
	dec_dpop(d, old);
	return 0;
}

/* ---- status ---- */

static int
dec_cstate(struct dec *d, J *o, const char *key, struct container_state *st)
{
	J     *s, *x;
	size_t old, ok;

	if (dec_f_obj(d, o, key, &s) < 0)
		return -1;
	if (s == NULL)
		return 0;
	old = dec_dkey(d, key);
	if (dec_f_obj(d, s, "waiting", &x) < 0)
		return -1;
	if (x != NULL) {
		ok = dec_dkey(d, "waiting");
		st->kind = CSTATE_WAITING;
		if (dec_f_str(d, x, "reason", &st->reason) < 0 ||
		    dec_f_str(d, x, "message", &st->message) < 0)
			return -1;
		dec_dpop(d, ok);
	}
	if (dec_f_obj(d, s, "running", &x) < 0)
		return -1;
	if (x != NULL) {
		ok = dec_dkey(d, "running");
		st->kind = CSTATE_RUNNING;
		if (dec_f_time(d, x, "startedAt", &st->started_at) < 0)
			return -1;
		dec_dpop(d, ok);
	}
	if (dec_f_obj(d, s, "terminated", &x) < 0)
		return -1;
	if (x != NULL) {
		ok = dec_dkey(d, "terminated");
		st->kind = CSTATE_TERMINATED;
		if (dec_f_i32(d, x, "exitCode", &st->exit_code) < 0 ||
		    dec_f_i32(d, x, "signal", &st->signal) < 0 ||
		    dec_f_str(d, x, "reason", &st->reason) < 0 ||
		    dec_f_str(d, x, "message", &st->message) < 0 ||
		    dec_f_time(d, x, "startedAt", &st->started_at) < 0 ||
		    dec_f_time(d, x, "finishedAt", &st->finished_at) < 0 ||
		    dec_f_str(d, x, "containerID", &st->container_id) < 0)
			return -1;
		dec_dpop(d, ok);
	}
	dec_dpop(d, old);
	return 0;
}

static int
dec_cstatus(struct dec *d, J *o, struct container_status *cs)
{
	if (dec_f_str(d, o, "name", &cs->name) < 0 || dec_cstate(d, o, "state", &cs->state) < 0 ||
	    dec_cstate(d, o, "lastState", &cs->last_state) < 0 ||
	    dec_f_bool(d, o, "ready", &cs->ready) < 0 ||
	    dec_f_opt_bool(d, o, "started", &cs->started) < 0 ||
	    dec_f_i32(d, o, "restartCount", &cs->restart_count) < 0 ||
	    dec_f_str(d, o, "image", &cs->image) < 0 ||
	    dec_f_str(d, o, "imageID", &cs->image_id) < 0 ||
	    dec_f_str(d, o, "containerID", &cs->container_id) < 0)
		return -1;
	return 0;
}

static int
dec_condition(struct dec *d, J *o, struct pod_condition *c)
{
	static const char *const sts[] = { "True", "False", "Unknown", NULL };
	int                      st = COND_UNKNOWN;

	if (dec_f_str(d, o, "type", &c->type) < 0 || dec_f_enum(d, o, "status", sts, &st) < 0 ||
	    dec_f_time(d, o, "lastProbeTime", &c->last_probe_time) < 0 ||
	    dec_f_time(d, o, "lastTransitionTime", &c->last_transition_time) < 0 ||
	    dec_f_str(d, o, "reason", &c->reason) < 0 ||
	    dec_f_str(d, o, "message", &c->message) < 0)
		return -1;
	c->status = (enum cond_status)st;
	return 0;
}

static int
dec_pod_ip(struct dec *d, J *o, char **ip)
{
	return dec_f_str(d, o, "ip", ip);
}

static int
dec_status(struct dec *d, J *root, struct pod_status *st)
{
	static const char *const phases[] = { "Pending", "Running", "Succeeded", "Failed",
		"Unknown", NULL };
	static const char *const qos[] = { "BestEffort", "Burstable", "Guaranteed", NULL };
	J                       *o;
	size_t                   old;
	int                      phase = PHASE_PENDING, q = -1;

	if (dec_f_obj(d, root, "status", &o) < 0)
		return -1;
	if (o == NULL)
		return 0;
	old = dec_dkey(d, "status");
	if (dec_f_enum(d, o, "phase", phases, &phase) < 0 ||
	    F_LIST(d, o, "conditions", st->conditions, st->nconditions, dec_condition) < 0 ||
	    dec_f_str(d, o, "message", &st->message) < 0 ||
	    dec_f_str(d, o, "reason", &st->reason) < 0 ||
	    dec_f_str(d, o, "hostIP", &st->host_ip) < 0 ||
	    dec_f_str(d, o, "podIP", &st->pod_ip) < 0 ||
	    F_LIST(d, o, "podIPs", st->pod_ips.v, st->pod_ips.n, dec_pod_ip) < 0 ||
	    dec_f_time(d, o, "startTime", &st->start_time) < 0 ||
	    F_LIST(d, o, "initContainerStatuses", st->init_statuses, st->ninit_statuses,
	        dec_cstatus) < 0 ||
	    F_LIST(d, o, "containerStatuses", st->statuses, st->nstatuses, dec_cstatus) < 0 ||
	    F_LIST(d, o, "ephemeralContainerStatuses", st->ephemeral_statuses,
	        st->nephemeral_statuses, dec_cstatus) < 0 ||
	    dec_f_enum(d, o, "qosClass", qos, &q) < 0)
		return -1;
	st->phase = (enum pod_phase)phase;
	if (q >= 0) {
		st->qos_class = (enum qos_class)q;
		st->has_qos_class = 1;
	}
	dec_dpop(d, old);
	return 0;
}

/* ---- the pod ---- */

static int
dec_metadata(struct dec *d, J *root, struct pod *p)
{
	J     *m;
	size_t old;

	if (dec_f_obj(d, root, "metadata", &m) < 0)
		return -1;
	if (m == NULL)
		return 0;
	old = dec_dkey(d, "metadata");
	if (dec_f_str(d, m, "name", &p->name) < 0 || dec_f_str(d, m, "namespace", &p->ns) < 0 ||
	    dec_f_str(d, m, "uid", &p->uid) < 0 ||
	    dec_f_str(d, m, "resourceVersion", &p->resource_version) < 0 ||
	    dec_f_i64(d, m, "generation", &p->generation) < 0 ||
	    dec_f_map(d, m, "labels", &p->labels) < 0 ||
	    dec_f_map(d, m, "annotations", &p->annotations) < 0 ||
	    dec_f_time(d, m, "creationTimestamp", &p->creation_ts) < 0 ||
	    dec_f_time(d, m, "deletionTimestamp", &p->deletion_ts) < 0 ||
	    dec_f_opt_i64(d, m, "deletionGracePeriodSeconds", &p->deletion_grace) < 0 ||
	    F_LIST(d, m, "ownerReferences", p->owners, p->nowners, dec_owner) < 0)
		return -1;
	dec_dpop(d, old);
	return 0;
}

static int
dec_spec(struct dec *d, J *root, struct pod *p)
{
	static const char *const rps[] = { "Always", "OnFailure", "Never", NULL };
	static const char *const dnss[] = { "ClusterFirst", "ClusterFirstWithHostNet", "Default",
		"None", NULL };
	J                       *s;
	size_t                   old, i;
	int                      rp = RESTART_ALWAYS, dns = DNS_CLUSTER_FIRST;

	p->termination_grace.set = 1; /* the API's default */
	p->termination_grace.v = 30;
	if (dec_f_obj(d, root, "spec", &s) < 0)
		return -1;
	if (s == NULL)
		return 0;
	old = dec_dkey(d, "spec");
	if (F_LIST(d, s, "containers", p->containers, p->ncontainers, dec_app) < 0 ||
	    F_LIST(d, s, "initContainers", p->init_containers, p->ninit_containers, dec_init) < 0 ||
	    F_LIST(d, s, "ephemeralContainers", p->ephemeral_containers, p->nephemeral_containers,
	        dec_ephemeral) < 0 ||
	    F_LIST(d, s, "volumes", p->volumes, p->nvolumes, dec_volume) < 0 ||
	    dec_f_enum(d, s, "restartPolicy", rps, &rp) < 0 ||
	    dec_f_opt_i64(d, s, "terminationGracePeriodSeconds", &p->termination_grace) < 0 ||
	    dec_f_opt_i64(d, s, "activeDeadlineSeconds", &p->active_deadline) < 0 ||
	    dec_f_bool(d, s, "hostNetwork", &p->host_network) < 0 ||
	    dec_f_bool(d, s, "hostPID", &p->host_pid) < 0 ||
	    dec_f_bool(d, s, "hostIPC", &p->host_ipc) < 0 ||
	    dec_f_bool(d, s, "shareProcessNamespace", &p->share_process_ns) < 0 ||
	    dec_f_str(d, s, "hostname", &p->hostname) < 0 ||
	    dec_f_str(d, s, "subdomain", &p->subdomain) < 0 ||
	    dec_f_enum(d, s, "dnsPolicy", dnss, &dns) < 0 || dec_dns_config(d, s, p) < 0 ||
	    dec_f_str(d, s, "nodeName", &p->node_name) < 0 ||
	    dec_f_map(d, s, "nodeSelector", &p->node_selector) < 0 ||
	    F_LIST(d, s, "tolerations", p->tolerations, p->ntolerations, dec_toleration) < 0 ||
	    dec_affinity(d, s, p) < 0 || dec_f_resource_list(d, s, "overhead", &p->overhead) < 0 ||
	    dec_pod_os(d, s, p) < 0 || dec_f_str(d, s, "runtimeClassName", &p->runtime_class) < 0 ||
	    dec_f_str(d, s, "serviceAccount", &p->service_account) < 0 ||
	    dec_f_str(d, s, "serviceAccountName", &p->service_account) < 0 ||
	    dec_f_str(d, s, "schedulerName", &p->scheduler_name) < 0 ||
	    dec_f_str(d, s, "priorityClassName", &p->priority_class) < 0 ||
	    dec_f_i32(d, s, "priority", &p->priority) < 0 || dec_pod_security(d, s, p) < 0 ||
	    F_LIST(d, s, "imagePullSecrets", p->image_pull_secrets.v, p->image_pull_secrets.n,
	        dec_name_only) < 0 ||
	    dec_host_aliases(d, s, p) < 0)
		return -1;
	p->restart_policy = (enum restart_policy)rp;
	p->dns_policy = (enum dns_policy)dns;
	for (i = 0; i < p->ncontainers; i++)
		dec_default_requests(&p->containers[i]);
	for (i = 0; i < p->ninit_containers; i++)
		dec_default_requests(&p->init_containers[i]);
	if (p->host_network) {
		dec_default_host_ports(p->containers, p->ncontainers);
		dec_default_host_ports(p->init_containers, p->ninit_containers);
	}
	if (p->scheduler_name == NULL)
		p->scheduler_name = xstrdup("default-scheduler");
	dec_dpop(d, old);
	return 0;
}

struct pod *
pod_from_value(const struct json *root, char *err, size_t errlen)
{
	struct dec  d;
	struct pod *p;
	char       *kind = NULL;
	int         rc;

	memset(&d, 0, sizeof(d));
	d.err = err;
	d.errlen = errlen;
	if (json_type(root) != JSON_OBJECT) {
		dec_dfail(&d, "expected an object, got %s", json_type_name(json_type(root)));
		return NULL;
	}
	if (dec_f_str(&d, root, "kind", &kind) < 0 || (kind != NULL && strcmp(kind, "Pod") != 0)) {
		if (kind != NULL) {
			size_t o = dec_dkey(&d, "kind");

			dec_dfail(&d, "expected Pod, got \"%.64s\"", kind);
			dec_dpop(&d, o);
		}
		free(kind);
		return NULL;
	}
	free(kind);
	p = xcalloc(1, sizeof(*p));
	p->refs = 1;
	rc = dec_metadata(&d, root, p);
	if (rc == 0)
		rc = dec_spec(&d, root, p);
	if (rc == 0)
		rc = dec_status(&d, root, &p->status);
	if (rc < 0) {
		pod_unref(p);
		return NULL;
	}
	return p;
}

static struct pod *
pod_from_doc(struct json_doc *doc, char *err, size_t errlen)
{
	struct pod *p = pod_from_value(json_root(doc), err, errlen);

	json_free(doc);
	return p;
}

static const struct json_limits pod_limits = {
	POD_MAX_DOC_BYTES,
	POD_MAX_DEPTH,
	POD_MAX_DOC_BYTES,
};

struct pod *
pod_from_json(const char *buf, size_t len, char *err, size_t errlen)
{
	struct json_doc *doc;

	if ((doc = json_parse(buf, len, &pod_limits, err, errlen)) == NULL)
		return NULL;
	return pod_from_doc(doc, err, errlen);
}

int
pod_status_from_json(const char *buf, size_t len, struct pod_status *out, char *err, size_t errlen)
{
	struct json_doc *doc;
	struct dec       d;
	char            *wrapped;
	int              rc;

	memset(out, 0, sizeof(*out));
	/* The decoder reads "status" of a pod object: give it one. */
	wrapped = xsprintf("{\"status\":%.*s}", (int)len, buf);
	doc = json_parse(wrapped, strlen(wrapped), &pod_limits, err, errlen);
	free(wrapped);
	if (doc == NULL)
		return -1;
	memset(&d, 0, sizeof(d));
	d.err = err;
	d.errlen = errlen;
	rc = dec_status(&d, json_root(doc), out);
	json_free(doc);
	if (rc < 0) {
		pod_status_clear(out);
		memset(out, 0, sizeof(*out));
		return -1;
	}
	return 0;
}

struct pod *
pod_from_yaml(const char *buf, size_t len, char *err, size_t errlen)
{
	struct json_doc *doc;

	if ((doc = json_parse_yaml(buf, len, &pod_limits, err, errlen)) == NULL)
		return NULL;
	return pod_from_doc(doc, err, errlen);
}
