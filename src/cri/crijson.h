/* crijson.h — a CRI message as JSON, field by field from its protobuf-c descriptor, as the
 * runtime gave it (podctl inspect): protobuf's JSON names (lowerCamelCase), enums by name,
 * maps as objects, unset messages as null, every scalar written even when zero; 64-bit
 * integers as JSON numbers (not protobuf's strings); bytes in base64. The values of a
 * verbose answer's "info" map are JSON documents: they are written as such (as crictl
 * inspect does), or as the strings given when they do not parse. */
#ifndef KLET_CRI_CRIJSON_H
#define KLET_CRI_CRIJSON_H

#include <protobuf-c/protobuf-c.h>
#include <yajl/yajl_gen.h>

/* Writes m (NULL: null) into g. */
void crijson_message(yajl_gen, const ProtobufCMessage *m);

#endif
