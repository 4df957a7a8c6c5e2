/* json.c — a compact read-only DOM built from yajl (JSON) or libyaml (YAML) events.
 *
 * All values, strings and child arrays of one document live in an arena of chunks owned by
 * the document; json_free() releases the chunks. A builder keeps a stack of open containers;
 * the children of the innermost one sit on a shared pending vector and are copied into the
 * arena, contiguous, when the container closes.
 */
#include <errno.h>
#include <stdarg.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <yajl/yajl_parse.h>
#include <yaml.h>

#include "core/json.h"
#include "core/log.h"
#include "core/util.h"

struct json_member {
	const char  *key;
	struct json *val;
};

struct json {
	uint8_t     type;
	uint8_t     yaml_plain;
	uint32_t    n;    /* string length, or number of elements / members */
	const char *text; /* scalars: the string, or the number / literal as written */
	union {
		int                 b;
		int64_t             i;
		double              d;
		struct json       **items;
		struct json_member *members;
	} u;
};

struct chunk {
	struct chunk *next;
	size_t        used;
	size_t        size;
	/* data follows, 16-aligned */
};

#define CHUNK_HDR ((sizeof(struct chunk) + 15) & ~(size_t)15)
#define CHUNK_MIN 4096
#define CHUNK_MAX 65536

struct json_doc {
	struct chunk *chunks;
	size_t        bytes;
	size_t        next_chunk;
	struct json  *root;
};

static void *
json_arena_alloc(struct json_doc *d, size_t n)
{
	struct chunk *c = d->chunks;
	size_t        sz;
	void         *p;

	n = (n + 7) & ~(size_t)7;
	if (c == NULL || c->size - c->used < n) {
		if (d->next_chunk < CHUNK_MIN)
			d->next_chunk = CHUNK_MIN;
		sz = n > d->next_chunk ? n : d->next_chunk;
		if (d->next_chunk < CHUNK_MAX)
			d->next_chunk *= 2;
		c = xmalloc(CHUNK_HDR + sz);
		c->used = 0;
		c->size = sz;
		c->next = d->chunks;
		d->chunks = c;
		d->bytes += CHUNK_HDR + sz;
	}
	p = (char *)c + CHUNK_HDR + c->used;
	c->used += n;
	return p;
}

static const char *
json_arena_strndup(struct json_doc *d, const char *s, size_t n)
{
	char *p = json_arena_alloc(d, n + 1);

	if (n > 0)
		memcpy(p, s, n);
	p[n] = '\0';
	return p;
}

void
json_free(struct json_doc *d)
{
	struct chunk *c, *next;

	if (d == NULL)
		return;
	for (c = d->chunks; c != NULL; c = next) {
		next = c->next;
		free(c);
	}
	free(d);
}

const struct json *
json_root(const struct json_doc *d)
{
	return d != NULL ? d->root : NULL;
}

size_t
json_doc_bytes(const struct json_doc *d)
{
	return d != NULL ? d->bytes : 0;
}

/* ---- the builder, shared by both parsers ---- */

struct frame {
	struct json *node;
	size_t       start;
	int          want_key; /* YAML mappings: the next scalar is a key */
};

struct builder {
	struct json_doc    *doc;
	struct json_limits  lim;
	struct json_member *pend;
	size_t              npend;
	size_t              cappend;
	struct frame       *frames;
	int                 depth;
	const char         *key; /* the key waiting for its value */
	int                 failed;
	char                err[256];
};

static void
json_builder_init(struct builder *b, const struct json_limits *lim)
{
	memset(b, 0, sizeof(*b));
	if (lim != NULL)
		b->lim = *lim;
	if (b->lim.max_bytes == 0)
		b->lim.max_bytes = JSON_DEFAULT_MAX_BYTES;
	if (b->lim.max_depth <= 0)
		b->lim.max_depth = JSON_DEFAULT_MAX_DEPTH;
	if (b->lim.max_string == 0)
		b->lim.max_string = JSON_DEFAULT_MAX_STRING;
	b->doc = xcalloc(1, sizeof(*b->doc));
	b->frames = xcalloc((size_t)b->lim.max_depth + 1, sizeof(*b->frames));
}

/* Returns the document (or NULL when the build failed) and frees the builder. */
static struct json_doc *
json_builder_finish(struct builder *b)
{
	struct json_doc *d = b->doc;

	free(b->pend);
	free(b->frames);
	if (b->failed || d->root == NULL) {
		json_free(d);
		return NULL;
	}
	return d;
}

static int json_bfail(struct builder *b, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

static int
json_bfail(struct builder *b, const char *fmt, ...)
{
	va_list ap;

	if (!b->failed) {
		va_start(ap, fmt);
		vsnprintf(b->err, sizeof(b->err), fmt, ap);
		va_end(ap);
		b->failed = 1;
	}
	return -1;
}

static struct json *
json_bnode(struct builder *b, enum json_type t)
{
	struct json *v = json_arena_alloc(b->doc, sizeof(*v));

	memset(v, 0, sizeof(*v));
	v->type = (uint8_t)t;
	return v;
}

/* Attaches v to the open container (or makes it the root). */
static int
json_badd(struct builder *b, struct json *v)
{
	struct frame *f;

	if (b->depth == 0) {
		if (b->doc->root != NULL)
			return json_bfail(b, "more than one top-level value");
		b->doc->root = v;
		return 0;
	}
	f = &b->frames[b->depth - 1];
	if (f->node->type == JSON_OBJECT && b->key == NULL)
		return json_bfail(b, "object member without a key");
	if (b->npend == b->cappend) {
		b->cappend = b->cappend ? b->cappend * 2 : 64;
		b->pend = xreallocarray(b->pend, b->cappend, sizeof(*b->pend));
	}
	b->pend[b->npend].key = b->key;
	b->pend[b->npend].val = v;
	b->npend++;
	b->key = NULL;
	f->want_key = 1;
	return 0;
}

static int
json_bopen(struct builder *b, enum json_type t)
{
	struct json *v;

	if (b->depth >= b->lim.max_depth)
		return json_bfail(b, "nesting deeper than the limit of %d", b->lim.max_depth);
	v = json_bnode(b, t);
	if (json_badd(b, v) < 0)
		return -1;
	b->frames[b->depth].node = v;
	b->frames[b->depth].start = b->npend;
	b->frames[b->depth].want_key = 1;
	b->depth++;
	return 0;
}

static int
json_bclose(struct builder *b)
{
	struct frame *f;
	size_t        n, i;

	if (b->depth == 0)
		return json_bfail(b, "unbalanced end of container");
	f = &b->frames[--b->depth];
	n = b->npend - f->start;
	if (n > UINT32_MAX)
		return json_bfail(b, "too many elements");
	f->node->n = (uint32_t)n;
	if (f->node->type == JSON_ARRAY) {
		f->node->u.items = n ? json_arena_alloc(b->doc, n * sizeof(struct json *)) : NULL;
		for (i = 0; i < n; i++)
			f->node->u.items[i] = b->pend[f->start + i].val;
	} else {
		f->node->u.members =
		    n ? json_arena_alloc(b->doc, n * sizeof(struct json_member)) : NULL;
		if (n)
			memcpy(
			    f->node->u.members, b->pend + f->start, n * sizeof(struct json_member));
	}
	b->npend = f->start;
	return 0;
}

static int
json_bstring(struct builder *b, const char *s, size_t len, struct json **out)
{
	struct json *v;

	if (len > b->lim.max_string)
		return json_bfail(
		    b, "string of %zu bytes, over the limit of %zu", len, b->lim.max_string);
	v = json_bnode(b, JSON_STRING);
	v->text = json_arena_strndup(b->doc, s, len);
	v->n = (uint32_t)len;
	if (out != NULL)
		*out = v;
	return json_badd(b, v);
}

static int
json_bkey(struct builder *b, const char *s, size_t len)
{
	if (len > b->lim.max_string)
		return json_bfail(
		    b, "key of %zu bytes, over the limit of %zu", len, b->lim.max_string);
	b->key = json_arena_strndup(b->doc, s, len);
	b->frames[b->depth - 1].want_key = 0;
	return 0;
}

/* A JSON number: an int64 when it is written as an integer and fits, else a double. */
static int
json_bnumber(struct builder *b, const char *s, size_t len)
{
	struct json *v;
	const char  *t;
	char        *end;
	size_t       i;
	int          isint = 1;

	if (len > 400)
		return json_bfail(b, "number of %zu characters", len);
	t = json_arena_strndup(b->doc, s, len);
	for (i = 0; i < len; i++)
		if (t[i] == '.' || t[i] == 'e' || t[i] == 'E')
			isint = 0;
	v = json_bnode(b, JSON_INT);
	v->text = t;
	if (isint) {
		errno = 0;
		v->u.i = strtoll(t, &end, 10);
		if (errno != 0 || *end != '\0')
			isint = 0;
	}
	if (!isint) {
		v->type = JSON_DOUBLE;
		v->u.d = strtod(t, &end);
		if (*end != '\0')
			return json_bfail(b, "malformed number %s", t);
	}
	return json_badd(b, v);
}

/* ---- JSON via yajl ---- */

static int
json_y_null(void *ctx)
{
	struct builder *b = ctx;
	struct json    *v = json_bnode(b, JSON_NULL);

	v->text = "null";
	return json_badd(b, v) == 0;
}

static int
json_y_boolean(void *ctx, int val)
{
	struct builder *b = ctx;
	struct json    *v = json_bnode(b, JSON_BOOL);

	v->u.b = val != 0;
	v->text = val ? "true" : "false";
	return json_badd(b, v) == 0;
}

static int
json_y_number(void *ctx, const char *s, size_t len)
{
	return json_bnumber(ctx, s, len) == 0;
}

static int
json_y_string(void *ctx, const unsigned char *s, size_t len)
{
	return json_bstring(ctx, (const char *)s, len, NULL) == 0;
}

static int
json_y_start_map(void *ctx)
{
	return json_bopen(ctx, JSON_OBJECT) == 0;
}

static int
json_y_map_key(void *ctx, const unsigned char *s, size_t len)
{
	return json_bkey(ctx, (const char *)s, len) == 0;
}

static int
json_y_end(void *ctx)
{
	return json_bclose(ctx) == 0;
}

static int
json_y_start_array(void *ctx)
{
	return json_bopen(ctx, JSON_ARRAY) == 0;
}

static const yajl_callbacks json_callbacks = {
	json_y_null,
	json_y_boolean,
	NULL,
	NULL,
	json_y_number,
	json_y_string,
	json_y_start_map,
	json_y_map_key,
	json_y_end,
	json_y_start_array,
	json_y_end,
};

/* "line L, offset O" of byte off in buf. */
static void
json_where(const char *buf, size_t len, size_t off, char *out, size_t outlen)
{
	size_t i, line = 1;

	if (off > len)
		off = len;
	for (i = 0; i < off; i++)
		if (buf[i] == '\n')
			line++;
	snprintf(out, outlen, "line %zu, offset %zu", line, off);
}

static void json_seterr(char *err, size_t errlen, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

static void
json_seterr(char *err, size_t errlen, const char *fmt, ...)
{
	va_list ap;

	if (err == NULL || errlen == 0)
		return;
	va_start(ap, fmt);
	vsnprintf(err, errlen, fmt, ap);
	va_end(ap);
}

struct json_doc *
json_parse(const char *buf, size_t len, const struct json_limits *lim, char *err, size_t errlen)
{
	struct builder b;
	yajl_handle    h;
	yajl_status    st;
	size_t         off;
	char           loc[64];

	json_builder_init(&b, lim);
	if (buf == NULL)
		len = 0;
	if (len > b.lim.max_bytes) {
		json_seterr(err, errlen, "document is %zu bytes, over the limit of %zu", len,
		    b.lim.max_bytes);
		b.failed = 1;
		return json_builder_finish(&b);
	}
	h = yajl_alloc(&json_callbacks, NULL, &b);
	if (h == NULL) {
		json_seterr(err, errlen, "out of memory");
		b.failed = 1;
		return json_builder_finish(&b);
	}
	st = yajl_parse(h, (const unsigned char *)(buf != NULL ? buf : ""), len);
	off = yajl_get_bytes_consumed(h);
	if (st == yajl_status_ok) {
		st = yajl_complete_parse(h);
		off = len;
	}
	if (st != yajl_status_ok) {
		json_where(buf, len, off, loc, sizeof(loc));
		if (b.failed)
			json_seterr(err, errlen, "%s: %s", loc, b.err);
		else {
			unsigned char *msg = yajl_get_error(h, 0, NULL, 0);

			char  *m = msg != NULL ? (char *)msg : "parse error";
			size_t ml = strlen(m);

			while (ml > 0 && (m[ml - 1] == '\n' || m[ml - 1] == ' '))
				ml--;
			json_seterr(err, errlen, "%s: %.*s", loc, (int)ml, m);
			if (msg != NULL)
				yajl_free_error(h, msg);
			b.failed = 1;
		}
	} else if (b.doc->root == NULL) {
		json_seterr(err, errlen, "empty document");
		b.failed = 1;
	}
	yajl_free(h);
	return json_builder_finish(&b);
}

/* ---- YAML via libyaml ---- */

static int
json_match_any(const char *s, const char *const *list)
{
	for (; *list != NULL; list++)
		if (strcmp(s, *list) == 0)
			return 1;
	return 0;
}

/* Integer forms of YAML 1.1 (with '_' separators). Returns 0 and *out, or -1. */
static int
json_yaml_int(const char *s, int64_t *out)
{
	char        digs[80];
	const char *p = s;
	size_t      n = 0;
	int         neg = 0, base = 10;
	uint64_t    v = 0, lim;

	if (*p == '+' || *p == '-')
		neg = *p++ == '-';
	if (p[0] == '0' && (p[1] == 'b' || p[1] == 'B')) {
		base = 2;
		p += 2;
	} else if (p[0] == '0' && (p[1] == 'x' || p[1] == 'X')) {
		base = 16;
		p += 2;
	} else if (p[0] == '0' && (p[1] == 'o' || p[1] == 'O')) {
		base = 8;
		p += 2;
	} else if (p[0] == '0' && p[1] != '\0')
		base = 8;
	else if (p[0] == '_')
		return -1;
	for (; *p != '\0'; p++) {
		int dv;

		if (*p == '_')
			continue;
		if (*p >= '0' && *p <= '9')
			dv = *p - '0';
		else if (*p >= 'a' && *p <= 'f')
			dv = *p - 'a' + 10;
		else if (*p >= 'A' && *p <= 'F')
			dv = *p - 'A' + 10;
		else
			return -1;
		if (dv >= base || n + 1 >= sizeof(digs))
			return -1;
		digs[n++] = (char)*p;
	}
	if (n == 0)
		return -1;
	lim = neg ? (uint64_t)INT64_MAX + 1 : (uint64_t)INT64_MAX;
	for (size_t i = 0; i < n; i++) {
		int dv = digs[i] <= '9' ? digs[i] - '0' : (digs[i] | 0x20) - 'a' + 10;

		if (v > (lim - (uint64_t)dv) / (uint64_t)base)
			return -1;
		v = v * (uint64_t)base + (uint64_t)dv;
	}
	*out = neg ? (int64_t)(0 - v) : (int64_t)v;
	return 0;
}

/* go-yaml v2's float form: [-+]?(\.[0-9]+|[0-9]+(\.[0-9]*)?)([eE][-+]?[0-9]+)? */
static int
json_yaml_float(const char *s, double *out)
{
	static const char *const inf[] = { ".inf", ".Inf", ".INF", "+.inf", "+.Inf", "+.INF",
		NULL };
	static const char *const ninf[] = { "-.inf", "-.Inf", "-.INF", NULL };
	static const char *const nan_[] = { ".nan", ".NaN", ".NAN", NULL };
	const char              *p = s;
	char                     buf[128];
	size_t                   n = 0;
	int                      d1 = 0, d2 = 0;

	if (json_match_any(s, inf)) {
		*out = INFINITY;
		return 0;
	}
	if (json_match_any(s, ninf)) {
		*out = -INFINITY;
		return 0;
	}
	if (json_match_any(s, nan_)) {
		*out = NAN;
		return 0;
	}
	if (*p == '+' || *p == '-')
		p++;
	while ((*p >= '0' && *p <= '9') || (*p == '_' && d1 > 0)) {
		if (*p != '_')
			d1++;
		p++;
	}
	if (*p == '.') {
		p++;
		while ((*p >= '0' && *p <= '9') || *p == '_') {
			if (*p != '_')
				d2++;
			p++;
		}
	}
	if (d1 == 0 && d2 == 0)
		return -1;
	if (*p == 'e' || *p == 'E') {
		int de = 0;

		p++;
		if (*p == '+' || *p == '-')
			p++;
		while (*p >= '0' && *p <= '9') {
			de++;
			p++;
		}
		if (de == 0)
			return -1;
	}
	if (*p != '\0')
		return -1;
	for (p = s; *p != '\0'; p++) {
		if (*p == '_')
			continue;
		if (n + 1 >= sizeof(buf))
			return -1;
		buf[n++] = *p;
	}
	buf[n] = '\0';
	*out = strtod(buf, NULL);
	return 0;
}

static int
json_yaml_scalar(struct builder *b, const yaml_event_t *ev)
{
	static const char *const nulls[] = { "", "~", "null", "Null", "NULL", NULL };
	static const char *const trues[] = { "true", "True", "TRUE", "yes", "Yes", "YES", "on",
		"On", "ON", "y", "Y", NULL };
	static const char *const falses[] = { "false", "False", "FALSE", "no", "No", "NO", "off",
		"Off", "OFF", "n", "N", NULL };
	const char              *s = (const char *)ev->data.scalar.value;
	size_t                   len = ev->data.scalar.length;
	const char              *tag = (const char *)ev->data.scalar.tag;
	struct json             *v;
	int64_t                  iv;
	double                   dv;

	if (b->depth > 0 && b->frames[b->depth - 1].node->type == JSON_OBJECT &&
	    b->frames[b->depth - 1].want_key)
		return json_bkey(b, s, len);
	if (ev->data.scalar.style != YAML_PLAIN_SCALAR_STYLE ||
	    (tag != NULL && (strcmp(tag, "!") == 0 || strcmp(tag, YAML_STR_TAG) == 0)))
		return json_bstring(b, s, len, NULL);
	if (len > b->lim.max_string)
		return json_bfail(
		    b, "string of %zu bytes, over the limit of %zu", len, b->lim.max_string);
	if (strlen(s) != len)
		return json_bstring(b, s, len, NULL);
	v = json_bnode(b, JSON_STRING);
	v->text = json_arena_strndup(b->doc, s, len);
	v->n = (uint32_t)len;
	v->yaml_plain = 1;
	if (json_match_any(s, nulls)) {
		v->type = JSON_NULL;
	} else if (json_match_any(s, trues)) {
		v->type = JSON_BOOL;
		v->u.b = 1;
	} else if (json_match_any(s, falses)) {
		v->type = JSON_BOOL;
		v->u.b = 0;
	} else if (json_yaml_int(s, &iv) == 0) {
		v->type = JSON_INT;
		v->u.i = iv;
	} else if (json_yaml_float(s, &dv) == 0) {
		v->type = JSON_DOUBLE;
		v->u.d = dv;
	}
	if (v->type != JSON_STRING)
		v->n = 0;
	return json_badd(b, v);
}

struct json_doc *
json_parse_yaml(
    const char *buf, size_t len, const struct json_limits *lim, char *err, size_t errlen)
{
	struct builder b;
	yaml_parser_t  parser;
	yaml_event_t   ev;
	int            done = 0, indoc = 0, rc;

	json_builder_init(&b, lim);
	if (buf == NULL)
		len = 0;
	if (len > b.lim.max_bytes) {
		json_seterr(err, errlen, "document is %zu bytes, over the limit of %zu", len,
		    b.lim.max_bytes);
		b.failed = 1;
		return json_builder_finish(&b);
	}
	if (!yaml_parser_initialize(&parser)) {
		json_seterr(err, errlen, "out of memory");
		b.failed = 1;
		return json_builder_finish(&b);
	}
	yaml_parser_set_input_string(&parser, (const unsigned char *)(buf != NULL ? buf : ""), len);
	while (!done) {
		if (!yaml_parser_parse(&parser, &ev)) {
			json_seterr(err, errlen, "line %zu, column %zu: %s%s%s",
			    (size_t)parser.problem_mark.line + 1,
			    (size_t)parser.problem_mark.column + 1,
			    parser.problem != NULL ? parser.problem : "parse error",
			    parser.context != NULL ? " " : "",
			    parser.context != NULL ? parser.context : "");
			b.failed = 1;
			break;
		}
		rc = 0;
		switch (ev.type) {
		case YAML_STREAM_END_EVENT:
			if (!indoc)
				rc = json_bfail(&b, "no YAML document");
			done = 1;
			break;
		case YAML_DOCUMENT_START_EVENT:
			indoc = 1;
			break;
		case YAML_DOCUMENT_END_EVENT:
			done = 1; /* only the first document */
			break;
		case YAML_ALIAS_EVENT:
			rc = json_bfail(&b, "YAML aliases are not supported");
			break;
		case YAML_SCALAR_EVENT:
			rc = json_yaml_scalar(&b, &ev);
			break;
		case YAML_SEQUENCE_START_EVENT:
			if (b.depth > 0 && b.frames[b.depth - 1].node->type == JSON_OBJECT &&
			    b.frames[b.depth - 1].want_key)
				rc = json_bfail(&b, "a sequence as a mapping key is not supported");
			else
				rc = json_bopen(&b, JSON_ARRAY);
			break;
		case YAML_MAPPING_START_EVENT:
			if (b.depth > 0 && b.frames[b.depth - 1].node->type == JSON_OBJECT &&
			    b.frames[b.depth - 1].want_key)
				rc = json_bfail(&b, "a mapping as a mapping key is not supported");
			else
				rc = json_bopen(&b, JSON_OBJECT);
			break;
		case YAML_SEQUENCE_END_EVENT:
		case YAML_MAPPING_END_EVENT:
			rc = json_bclose(&b);
			break;
		default:
			break;
		}
		if (rc < 0 && !done) {
			json_seterr(err, errlen, "line %zu, column %zu: %s",
			    (size_t)ev.start_mark.line + 1, (size_t)ev.start_mark.column + 1,
			    b.err);
			done = 1;
		} else if (rc < 0)
			json_seterr(err, errlen, "%s", b.err);
		yaml_event_delete(&ev);
		if (rc < 0)
			break;
	}
	yaml_parser_delete(&parser);
	if (!b.failed && b.doc->root == NULL) {
		json_seterr(err, errlen, "empty document");
		b.failed = 1;
	}
	return json_builder_finish(&b);
}

/* ---- accessors ---- */

enum json_type
json_type(const struct json *v)
{
	return v != NULL ? (enum json_type)v->type : JSON_NULL;
}

const char *
json_type_name(enum json_type t)
{
	switch (t) {
	case JSON_NULL:
		return "null";
	case JSON_BOOL:
		return "boolean";
	case JSON_INT:
		return "integer";
	case JSON_DOUBLE:
		return "number";
	case JSON_STRING:
		return "string";
	case JSON_ARRAY:
		return "array";
	case JSON_OBJECT:
		return "object";
	}
	return "unknown";
}

const struct json *
json_get(const struct json *v, const char *key)
{
	size_t i;

	if (v == NULL || v->type != JSON_OBJECT || key == NULL)
		return NULL;
	for (i = v->n; i > 0; i--)
		if (strcmp(v->u.members[i - 1].key, key) == 0)
			return v->u.members[i - 1].val;
	return NULL;
}

size_t
json_len(const struct json *v)
{
	if (v == NULL || (v->type != JSON_ARRAY && v->type != JSON_OBJECT))
		return 0;
	return v->n;
}

const struct json *
json_index(const struct json *v, size_t i)
{
	if (v == NULL || i >= json_len(v))
		return NULL;
	if (v->type == JSON_ARRAY)
		return v->u.items[i];
	return v->u.members[i].val;
}

const char *
json_key(const struct json *v, size_t i)
{
	if (v == NULL || v->type != JSON_OBJECT || i >= v->n)
		return NULL;
	return v->u.members[i].key;
}

const char *
json_str(const struct json *v)
{
	return v != NULL && v->type == JSON_STRING ? v->text : NULL;
}

size_t
json_str_len(const struct json *v)
{
	return v != NULL && v->type == JSON_STRING ? v->n : 0;
}

const char *
json_text(const struct json *v)
{
	if (v == NULL || v->type == JSON_ARRAY || v->type == JSON_OBJECT)
		return NULL;
	return v->text;
}

int
json_is_yaml_plain(const struct json *v)
{
	return v != NULL && v->yaml_plain;
}

int
json_bool(const struct json *v, int *out)
{
	if (v == NULL || v->type != JSON_BOOL)
		return -1;
	*out = v->u.b;
	return 0;
}

int
json_int(const struct json *v, int64_t *out)
{
	if (v == NULL || v->type != JSON_INT)
		return -1;
	*out = v->u.i;
	return 0;
}

int
json_double(const struct json *v, double *out)
{
	if (v == NULL)
		return -1;
	if (v->type == JSON_INT)
		*out = (double)v->u.i;
	else if (v->type == JSON_DOUBLE)
		*out = v->u.d;
	else
		return -1;
	return 0;
}

/* ---- writing ---- */

yajl_gen
json_gen_new(int beautify)
{
	yajl_gen g = yajl_gen_alloc(NULL);

	if (g == NULL)
		fatalx("%s: out of memory", __func__);
	if (beautify) {
		yajl_gen_config(g, yajl_gen_beautify, 1);
		yajl_gen_config(g, yajl_gen_indent_string, "  ");
	}
	return g;
}

static size_t
json_skip_ws(const char *b, size_t len, size_t i)
{
	while (i < len && (b[i] == ' ' || b[i] == '\t' || b[i] == '\n' || b[i] == '\r'))
		i++;
	return i;
}

/* The index after the string that starts at b[i] (a quote); len when it does not end. */
static size_t
json_skip_string(const char *b, size_t len, size_t i)
{
	for (i++; i < len; i++) {
		if (b[i] == '\\')
			i++;
		else if (b[i] == '"')
			return i + 1;
	}
	return len;
}

/* The index after the value that starts at b[i]. */
static size_t
json_skip_value(const char *b, size_t len, size_t i)
{
	size_t depth = 0;

	if (i >= len)
		return len;
	if (b[i] == '"')
		return json_skip_string(b, len, i);
	if (b[i] != '{' && b[i] != '[') {
		while (i < len && b[i] != ',' && b[i] != '}' && b[i] != ']' && b[i] != ' ' &&
		    b[i] != '\t' && b[i] != '\n' && b[i] != '\r')
			i++;
		return i;
	}
	while (i < len) {
		if (b[i] == '"') {
			i = json_skip_string(b, len, i);
			continue;
		}
		if (b[i] == '{' || b[i] == '[')
			depth++;
		else if ((b[i] == '}' || b[i] == ']') && --depth == 0)
			return i + 1;
		i++;
	}
	return len;
}

int
json_member_span(const char *buf, size_t len, const char *key, size_t *off, size_t *n)
{
	size_t i = json_skip_ws(buf, len, 0), k, e, klen = strlen(key);
	int    found = 0;

	if (i >= len || buf[i] != '{')
		return -1;
	for (i = json_skip_ws(buf, len, i + 1); i < len && buf[i] == '"';) {
		k = i + 1;
		i = json_skip_string(buf, len, i);
		if (i >= len || memchr(buf + k, '\\', i - 1 - k) != NULL)
			return -1; /* an escaped key: not compared here */
		e = i - 1;
		i = json_skip_ws(buf, len, i);
		if (i >= len || buf[i] != ':')
			return -1;
		i = json_skip_ws(buf, len, i + 1);
		if (e - k == klen && memcmp(buf + k, key, klen) == 0) {
			*off = i;
			*n = json_skip_value(buf, len, i) - i;
			found = 1;
		}
		i = json_skip_ws(buf, len, json_skip_value(buf, len, i));
		if (i < len && buf[i] == ',')
			i = json_skip_ws(buf, len, i + 1);
		else
			break;
	}
	return found && *off + *n <= len ? 0 : -1;
}

/* Length of the valid UTF-8 sequence at p (n bytes left), or 0 when invalid. */
static size_t
json_utf8_seq(const unsigned char *p, size_t n)
{
	size_t   len, i;
	uint32_t cp;

	if (p[0] < 0x80)
		return 1;
	if ((p[0] & 0xe0) == 0xc0) {
		len = 2;
		cp = p[0] & 0x1f;
	} else if ((p[0] & 0xf0) == 0xe0) {
		len = 3;
		cp = p[0] & 0x0f;
	} else if ((p[0] & 0xf8) == 0xf0) {
		len = 4;
		cp = p[0] & 0x07;
	} else
		return 0;
	if (len > n)
		return 0;
	for (i = 1; i < len; i++) {
		if ((p[i] & 0xc0) != 0x80)
			return 0;
		cp = cp << 6 | (p[i] & 0x3f);
	}
	if ((len == 2 && cp < 0x80) || (len == 3 && cp < 0x800) || (len == 4 && cp < 0x10000) ||
	    cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff))
		return 0;
	return len;
}

/* Writes s as a JSON string; invalid UTF-8 bytes become U+FFFD, so output stays valid. */
static void
json_gen_bytes(yajl_gen g, const char *s, size_t n)
{
	const unsigned char *p = (const unsigned char *)s;
	unsigned char       *fixed, *q;
	size_t               i, k;

	for (i = 0; i < n; i += k)
		if ((k = json_utf8_seq(p + i, n - i)) == 0)
			break;
	if (i >= n) {
		yajl_gen_string(g, p, n);
		return;
	}
	q = fixed = xreallocarray(NULL, n + 1, 3);
	for (i = 0; i < n; i += k) {
		if ((k = json_utf8_seq(p + i, n - i)) == 0) {
			*q++ = 0xef;
			*q++ = 0xbf;
			*q++ = 0xbd;
			k = 1;
		} else {
			memcpy(q, p + i, k);
			q += k;
		}
	}
	yajl_gen_string(g, fixed, (size_t)(q - fixed));
	free(fixed);
}

void
json_gen_str(yajl_gen g, const char *s)
{
	if (s == NULL)
		yajl_gen_null(g);
	else
		json_gen_bytes(g, s, strlen(s));
}

void
json_gen_key(yajl_gen g, const char *key)
{
	json_gen_bytes(g, key != NULL ? key : "", key != NULL ? strlen(key) : 0);
}

void
json_gen_kv_str(yajl_gen g, const char *key, const char *val)
{
	json_gen_key(g, key);
	json_gen_str(g, val);
}

void
json_gen_kv_int(yajl_gen g, const char *key, int64_t val)
{
	json_gen_key(g, key);
	yajl_gen_integer(g, (long long)val);
}

void
json_gen_kv_bool(yajl_gen g, const char *key, int val)
{
	json_gen_key(g, key);
	yajl_gen_bool(g, val != 0);
}

void
json_gen_value(yajl_gen g, const struct json *v)
{
	size_t i;

	if (v == NULL) {
		yajl_gen_null(g);
		return;
	}
	switch ((enum json_type)v->type) {
	case JSON_NULL:
		yajl_gen_null(g);
		break;
	case JSON_BOOL:
		yajl_gen_bool(g, v->u.b);
		break;
	case JSON_INT:
		yajl_gen_integer(g, (long long)v->u.i);
		break;
	case JSON_DOUBLE:
		if (!v->yaml_plain)
			yajl_gen_number(g, v->text, strlen(v->text));
		else if (isfinite(v->u.d))
			yajl_gen_double(g, v->u.d);
		else
			yajl_gen_null(g);
		break;
	case JSON_STRING:
		json_gen_bytes(g, v->text, v->n);
		break;
	case JSON_ARRAY:
		yajl_gen_array_open(g);
		for (i = 0; i < v->n; i++)
			json_gen_value(g, v->u.items[i]);
		yajl_gen_array_close(g);
		break;
	case JSON_OBJECT:
		yajl_gen_map_open(g);
		for (i = 0; i < v->n; i++) {
			json_gen_key(g, v->u.members[i].key);
			json_gen_value(g, v->u.members[i].val);
		}
		yajl_gen_map_close(g);
		break;
	}
}

char *
json_gen_take(yajl_gen g, size_t *len)
{
	const unsigned char *buf = NULL;
	size_t               n = 0;
	char                *s;

	if (yajl_gen_get_buf(g, &buf, &n) != yajl_gen_status_ok)
		n = 0;
	s = xmalloc(n + 1);
	if (n > 0)
		memcpy(s, buf, n);
	s[n] = '\0';
	if (len != NULL)
		*len = n;
	return s;
}

char *
json_to_string(const struct json *v)
{
	yajl_gen g = json_gen_new(0);
	char    *s;

	json_gen_value(g, v);
	s = json_gen_take(g, NULL);
	yajl_gen_free(g);
	return s;
}
