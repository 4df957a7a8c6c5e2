/* grpc.h — unary gRPC calls over an h2 session, generic on protobuf-c messages.
 * Used by the CRI client (unix socket) and the gRPC health prober (h2c over TCP). */
#ifndef KLET_GRPC_H
#define KLET_GRPC_H

#include <stddef.h>
#include <stdint.h>

#include <protobuf-c/protobuf-c.h>

#include "net/h2.h"

/* The gRPC status codes. */
enum grpc_code {
	GRPC_OK = 0,
	GRPC_CANCELLED = 1,
	GRPC_UNKNOWN = 2,
	GRPC_INVALID_ARGUMENT = 3,
	GRPC_DEADLINE_EXCEEDED = 4,
	GRPC_NOT_FOUND = 5,
	GRPC_ALREADY_EXISTS = 6,
	GRPC_PERMISSION_DENIED = 7,
	GRPC_RESOURCE_EXHAUSTED = 8,
	GRPC_FAILED_PRECONDITION = 9,
	GRPC_ABORTED = 10,
	GRPC_OUT_OF_RANGE = 11,
	GRPC_UNIMPLEMENTED = 12,
	GRPC_INTERNAL = 13,
	GRPC_UNAVAILABLE = 14,
	GRPC_DATA_LOSS = 15,
	GRPC_UNAUTHENTICATED = 16,
};

#define GRPC_DEFAULT_MAX_MSG (16u * 1024 * 1024)

struct grpc_call;

/* Completion of a unary call. code is an enum grpc_code; message is "" on success; resp is
 * the decoded response, non-NULL exactly when code == GRPC_OK. message and resp are owned by
 * the grpc layer and freed when the callback returns. */
typedef void (*grpc_done_fn)(void *arg, int code, const char *message, ProtobufCMessage *resp);

struct grpc_call_opts {
	const char *authority;  /* :authority (default "localhost") */
	int64_t     timeout_ms; /* local deadline and grpc-timeout; <= 0: none */
	size_t      max_send;   /* request message limit (default 16 MiB) */
	size_t      max_recv;   /* response message limit (default 16 MiB) */
};

/* Starts a unary call of path ("/runtime.v1.RuntimeService/Version") on the session. req is
 * serialized at once (the caller keeps it). done runs exactly once, on the loop and never
 * inside grpc_unary, unless the call is cancelled. Returns the call, owned by the grpc layer
 * until done has returned or grpc_call_cancel. Never NULL. */
struct grpc_call *grpc_unary(struct h2_session *, const char *path, const ProtobufCMessage *req,
    const ProtobufCMessageDescriptor *resp_desc, const struct grpc_call_opts *opts,
    grpc_done_fn done, void *arg);
/* The same call, answered with the serialized response message instead of a decoded one:
 * msg/len (len may be 0) are valid only during the callback; msg is NULL when code !=
 * GRPC_OK. For callers that decode only part of a large answer. */
typedef void (*grpc_raw_fn)(
    void *arg, int code, const char *message, const uint8_t *msg, size_t len);
struct grpc_call *grpc_unary_raw(struct h2_session *, const char *path, const ProtobufCMessage *req,
    const struct grpc_call_opts *opts, grpc_raw_fn done, void *arg);
/* Cancels the call (RST_STREAM CANCEL); done never runs. NULL is a no-op. Cancel every
 * pending call before freeing its h2 session. */
void grpc_call_cancel(struct grpc_call *);

/* Pure helpers (exported for tests). */

/* The canonical upper-case name of a code ("UNAVAILABLE"); codes outside the table give
 * "UNKNOWN". A static string. */
const char *grpc_code_name(int code);
/* Formats a grpc-timeout value ("250m", "120S", ...: at most 8 digits and a unit) into buf
 * (at least 16 bytes). ms <= 0 gives "0n". Returns buf. */
char *grpc_timeout_format(int64_t ms, char *buf, size_t len);
/* Percent-decodes a grpc-message value. Returns a malloc'd string; invalid escapes are kept
 * as they are. */
char *grpc_percent_decode(const char *s);
/* The code for an HTTP :status that came without grpc-status (as grpc-go maps it). */
int grpc_http_to_code(int http_status);
/* Parses grpc-status ("0".."16"); returns the code, or -1 when it is not a number. */
int grpc_parse_status(const char *s);
/* The code for a stream that ended with an h2 error (h2_error, RST_STREAM code). */
int grpc_h2_error_to_code(int h2_error, uint32_t rst_code);
/* Writes the 5-byte message prefix (flag 0, big-endian length) into hdr. */
void grpc_frame_header(uint8_t hdr[5], uint32_t len);
/* Checks a received body holding one length-prefixed message. On success returns GRPC_OK and
 * sets *msg and *msglen to the payload inside buf; else returns a code and sets *err to a static
 * message (RESOURCE_EXHAUSTED over max, INTERNAL when truncated, compressed or followed by
 * another message). */
int grpc_frame_parse(const uint8_t *buf, size_t len, size_t max, const uint8_t **msg,
    size_t *msglen, const char **err);

#endif
