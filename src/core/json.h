/* json.h — a small read-only DOM for JSON (yajl) and YAML (libyaml) documents, with hard
 * limits, and writer helpers around yajl_gen.
 *
 * A parsed document (struct json_doc) owns every value in it: one json_free() releases them
 * all; values are never freed one by one. Every accessor is NULL-safe: asking for a missing
 * key returns NULL, and the accessors of a NULL value return "absent" answers, so look-ups
 * chain: json_str(json_get(json_get(root, "metadata"), "name")).
 *
 * YAML is typed the way Kubernetes' sigs.k8s.io/yaml (go-yaml v2, YAML 1.1) does: quoted
 * scalars are strings; plain null/~/empty are null, true/false/yes/no/on/off/y/n bools,
 * decimal, 0x, 0o, 0b and leading-0 octal integers (0644 is 420) ints, decimals and
 * exponents doubles, everything else a string. Only the first document of a stream is read.
 * Aliases (*name) are refused.
 */
#ifndef KLET_JSON_H
#define KLET_JSON_H

#include <stddef.h>
#include <stdint.h>

#include <yajl/yajl_gen.h>

enum json_type {
	JSON_NULL = 0,
	JSON_BOOL,
	JSON_INT,
	JSON_DOUBLE,
	JSON_STRING,
	JSON_ARRAY,
	JSON_OBJECT,
};

struct json;     /* one value inside a document (opaque, read-only) */
struct json_doc; /* a parsed document: owns all its values */

struct json_limits {
	size_t max_bytes;  /* whole input; 0: JSON_DEFAULT_MAX_BYTES */
	int    max_depth;  /* nesting of arrays/objects; 0: JSON_DEFAULT_MAX_DEPTH */
	size_t max_string; /* one string or key, in bytes; 0: JSON_DEFAULT_MAX_STRING */
};

#define JSON_DEFAULT_MAX_BYTES  (1536 * 1024)
#define JSON_DEFAULT_MAX_DEPTH  64
#define JSON_DEFAULT_MAX_STRING (1024 * 1024)

/* Parse a whole JSON document (lim NULL: defaults). Returns the document, or NULL with a
 * one-line reason in err (errlen bytes), e.g. "line 3, offset 41: invalid object key", or
 * "document is 2000000 bytes, over the limit of 1572864". Free with json_free(). */
struct json_doc *json_parse(
    const char *buf, size_t len, const struct json_limits *lim, char *err, size_t errlen);
/* The same for YAML (first document of the stream; an empty stream is an error). */
struct json_doc *json_parse_yaml(
    const char *buf, size_t len, const struct json_limits *lim, char *err, size_t errlen);
/* Frees the document and every value in it. NULL is a no-op. */
void json_free(struct json_doc *);
/* The top-level value (never NULL for a parsed document). */
const struct json *json_root(const struct json_doc *);
/* Bytes the document holds (values, strings, arrays), for footprint checks. */
size_t json_doc_bytes(const struct json_doc *);

/* Type of a value; JSON_NULL for NULL. */
enum json_type json_type(const struct json *);
/* Name of a type, for messages: "null", "boolean", "integer", "number", "string", ... */
const char *json_type_name(enum json_type);

/* The member named key of an object (the last one if repeated); NULL if v is not an object
 * or has no such key. */
const struct json *json_get(const struct json *v, const char *key);
/* Number of elements of an array or members of an object; 0 otherwise. */
size_t json_len(const struct json *);
/* Element i of an array, or value of member i of an object; NULL when out of range. */
const struct json *json_index(const struct json *v, size_t i);
/* Key of member i of an object; NULL when v is not an object or i is out of range. */
const char *json_key(const struct json *v, size_t i);

/* A string's bytes (NUL-terminated; may contain NULs, see len), or NULL if not a string. */
const char *json_str(const struct json *);
/* Length in bytes of a string (0 for non-strings). */
size_t json_str_len(const struct json *);
/* The text of a scalar: a string's bytes, a number's digits as written, "true"/"false",
 * "null" (YAML: a plain scalar's original text). NULL for arrays, objects and NULL. */
const char *json_text(const struct json *);
/* 1 if the value came from a plain (unquoted) YAML scalar: typed, but a string field may
 * still take its text, as sigs.k8s.io/yaml does. */
int json_is_yaml_plain(const struct json *);
/* Booleans and numbers: 0 and *out set, or -1 on a type mismatch (json_double accepts an
 * integer too). */
int json_bool(const struct json *, int *out);
int json_int(const struct json *, int64_t *out);
int json_double(const struct json *, double *out);

/* The text of member key of the JSON object in buf (the last one if repeated, as
 * json_get): 0 with *off and *n set, or -1 when buf is not an object, has no such member or
 * writes its key with an escape. For text json_parse accepted: the value's bytes as they came,
 * without serializing its tree again. */
int json_member_span(const char *buf, size_t len, const char *key, size_t *off, size_t *n);

/* ---- writing (yajl_gen helpers) ---- */

/* A generator (beautify: indented output). Never NULL; free with yajl_gen_free(). */
yajl_gen json_gen_new(int beautify);
/* A string, or null for NULL. */
void json_gen_str(yajl_gen, const char *s);
void json_gen_key(yajl_gen, const char *key);
void json_gen_kv_str(yajl_gen, const char *key, const char *val); /* val NULL: null */
void json_gen_kv_int(yajl_gen, const char *key, int64_t val);
void json_gen_kv_bool(yajl_gen, const char *key, int val);
/* Writes v (a DOM value, with its subtree) at the current place; NULL writes null. */
void json_gen_value(yajl_gen, const struct json *v);
/* A copy of what the generator produced (NUL-terminated, *len set when len is not NULL);
 * the caller frees it. The generator is left as it was. */
char *json_gen_take(yajl_gen, size_t *len);
/* Serializes v compactly. Caller frees. */
char *json_to_string(const struct json *v);

#endif
