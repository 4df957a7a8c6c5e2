/* crijson.c — a CRI message as JSON from its protobuf-c descriptor (see crijson.h). */
#include <ctype.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/json.h"
#include "core/util.h"
#include "cri/crijson.h"

#define CRIJSON_MAX_DEPTH 32 /* the CRI nests a few levels; a loop in a descriptor cannot */
#define CRIJSON_INFO_MAX  (4 * 1024 * 1024)

static void crijson_msg(yajl_gen, const ProtobufCMessage *, int depth);

/* protobuf's JSON name: lowerCamelCase of the field name. */
static void
crijson_key(yajl_gen g, const char *name)
{
	char   buf[128];
	size_t i = 0;
	int    up = 0;

	for (; *name != '\0' && i + 1 < sizeof(buf); name++) {
		if (*name == '_') {
			up = 1;
			continue;
		}
		buf[i++] = up ? (char)toupper((unsigned char)*name) : *name;
		up = 0;
	}
	buf[i] = '\0';
	json_gen_key(g, buf);
}

static void
crijson_base64(yajl_gen g, const ProtobufCBinaryData *b)
{
	static const char tab[] =
	    "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
	char  *out = xmalloc(b->len / 3 * 4 + 5), *p = out;
	size_t i;

	for (i = 0; i + 2 < b->len; i += 3) {
		uint32_t v =
		    (uint32_t)b->data[i] << 16 | (uint32_t)b->data[i + 1] << 8 | b->data[i + 2];

		*p++ = tab[v >> 18 & 63];
		*p++ = tab[v >> 12 & 63];
		*p++ = tab[v >> 6 & 63];
		*p++ = tab[v & 63];
	}
	if (i < b->len) {
		uint32_t v = (uint32_t)b->data[i] << 16 |
		    (i + 1 < b->len ? (uint32_t)b->data[i + 1] << 8 : 0);

		*p++ = tab[v >> 18 & 63];
		*p++ = tab[v >> 12 & 63];
		*p++ = i + 1 < b->len ? tab[v >> 6 & 63] : '=';
		*p++ = '=';
	}
	*p = '\0';
	json_gen_str(g, out);
	free(out);
}

/* One value of type f->type at p. */
static void
crijson_value(yajl_gen g, const ProtobufCFieldDescriptor *f, const void *p, int depth)
{
	const ProtobufCEnumValue *ev;
	char                      num[64];

	switch (f->type) {
	case PROTOBUF_C_TYPE_INT32:
	case PROTOBUF_C_TYPE_SINT32:
	case PROTOBUF_C_TYPE_SFIXED32:
		yajl_gen_integer(g, *(const int32_t *)p);
		break;
	case PROTOBUF_C_TYPE_UINT32:
	case PROTOBUF_C_TYPE_FIXED32:
		yajl_gen_integer(g, *(const uint32_t *)p);
		break;
	case PROTOBUF_C_TYPE_INT64:
	case PROTOBUF_C_TYPE_SINT64:
	case PROTOBUF_C_TYPE_SFIXED64:
		yajl_gen_integer(g, (long long)*(const int64_t *)p);
		break;
	case PROTOBUF_C_TYPE_UINT64:
	case PROTOBUF_C_TYPE_FIXED64:
		snprintf(num, sizeof(num), "%llu", (unsigned long long)*(const uint64_t *)p);
		yajl_gen_number(g, num, strlen(num));
		break;
	case PROTOBUF_C_TYPE_FLOAT:
		yajl_gen_double(g, *(const float *)p);
		break;
	case PROTOBUF_C_TYPE_DOUBLE:
		yajl_gen_double(g, *(const double *)p);
		break;
	case PROTOBUF_C_TYPE_BOOL:
		yajl_gen_bool(g, *(const protobuf_c_boolean *)p);
		break;
	case PROTOBUF_C_TYPE_ENUM:
		ev = protobuf_c_enum_descriptor_get_value(f->descriptor, *(const int *)p);
		if (ev != NULL)
			json_gen_str(g, ev->name);
		else
			yajl_gen_integer(g, *(const int *)p);
		break;
	case PROTOBUF_C_TYPE_STRING:
		json_gen_str(g, *(char *const *)p != NULL ? *(char *const *)p : "");
		break;
	case PROTOBUF_C_TYPE_BYTES:
		crijson_base64(g, p);
		break;
	case PROTOBUF_C_TYPE_MESSAGE:
		crijson_msg(g, *(ProtobufCMessage *const *)p, depth + 1);
		break;
	}
}

/* A map entry message: "...Entry" with the fields key and value. */
static int
crijson_is_map(const ProtobufCFieldDescriptor *f)
{
	const ProtobufCMessageDescriptor *d = f->descriptor;
	size_t                            n;

	if (f->type != PROTOBUF_C_TYPE_MESSAGE || f->label != PROTOBUF_C_LABEL_REPEATED ||
	    d == NULL || d->n_fields != 2)
		return 0;
	n = strlen(d->short_name);
	return n > 5 && strcmp(d->short_name + n - 5, "Entry") == 0 &&
	    strcmp(d->fields[0].name, "key") == 0 && strcmp(d->fields[1].name, "value") == 0;
}

static size_t
crijson_size(const ProtobufCFieldDescriptor *f)
{
	switch (f->type) {
	case PROTOBUF_C_TYPE_INT64:
	case PROTOBUF_C_TYPE_SINT64:
	case PROTOBUF_C_TYPE_SFIXED64:
	case PROTOBUF_C_TYPE_UINT64:
	case PROTOBUF_C_TYPE_FIXED64:
	case PROTOBUF_C_TYPE_DOUBLE:
		return 8;
	case PROTOBUF_C_TYPE_BOOL:
		return sizeof(protobuf_c_boolean);
	case PROTOBUF_C_TYPE_ENUM:
		return sizeof(int);
	case PROTOBUF_C_TYPE_STRING:
	case PROTOBUF_C_TYPE_MESSAGE:
		return sizeof(void *);
	case PROTOBUF_C_TYPE_BYTES:
		return sizeof(ProtobufCBinaryData);
	default:
		return 4;
	}
}

/* A map: an object; the values of "info" as JSON documents when they parse. */
static void
crijson_map(
    yajl_gen g, const ProtobufCFieldDescriptor *f, size_t n, void *const *entries, int depth)
{
	const ProtobufCMessageDescriptor *d = f->descriptor;
	int                               info = strcmp(f->name, "info") == 0;
	size_t                            i;

	yajl_gen_map_open(g);
	for (i = 0; i < n; i++) {
		const char        *e = entries[i];
		char *const       *key = (char *const *)(e + d->fields[0].offset);
		const void        *val = e + d->fields[1].offset;
		struct json_doc   *doc;
		struct json_limits lim = { CRIJSON_INFO_MAX, 64, CRIJSON_INFO_MAX };

		json_gen_key(g, *key != NULL ? *key : "");
		if (info && d->fields[1].type == PROTOBUF_C_TYPE_STRING &&
		    *(char *const *)val != NULL &&
		    (doc = json_parse(*(char *const *)val, strlen(*(char *const *)val), &lim, NULL,
		         0)) != NULL) {
			json_gen_value(g, json_root(doc));
			json_free(doc);
		} else
			crijson_value(g, &d->fields[1], val, depth);
	}
	yajl_gen_map_close(g);
}

static void
crijson_msg(yajl_gen g, const ProtobufCMessage *m, int depth)
{
	const ProtobufCMessageDescriptor *d;
	size_t                            i, j;

	if (m == NULL || depth > CRIJSON_MAX_DEPTH) {
		yajl_gen_null(g);
		return;
	}
	d = m->descriptor;
	yajl_gen_map_open(g);
	for (i = 0; i < d->n_fields; i++) {
		const ProtobufCFieldDescriptor *f = &d->fields[i];
		const char                     *base = (const char *)m;
		const void                     *p = base + f->offset;

		if (f->flags & PROTOBUF_C_FIELD_FLAG_ONEOF) {
			if (*(const uint32_t *)(base + f->quantifier_offset) != f->id)
				continue;
		}
		crijson_key(g, f->name);
		if (f->label == PROTOBUF_C_LABEL_REPEATED) {
			size_t      n = *(const size_t *)(base + f->quantifier_offset);
			const char *arr = *(const char *const *)p;

			if (crijson_is_map(f)) {
				crijson_map(g, f, n, (void *const *)arr, depth);
				continue;
			}
			yajl_gen_array_open(g);
			for (j = 0; j < n && arr != NULL; j++)
				crijson_value(g, f, arr + j * crijson_size(f), depth);
			yajl_gen_array_close(g);
			continue;
		}
		crijson_value(g, f, p, depth);
	}
	yajl_gen_map_close(g);
}

void
crijson_message(yajl_gen g, const ProtobufCMessage *m)
{
	crijson_msg(g, m, 0);
}
