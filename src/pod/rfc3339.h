/* rfc3339.h — RFC 3339 timestamps, as metav1.Time writes them (second precision, UTC). */
#ifndef KLET_RFC3339_H
#define KLET_RFC3339_H

#include <stddef.h>
#include <stdint.h>

/* RFC 3339 ("2024-01-02T03:04:05Z", fractional seconds and offsets allowed) to Unix seconds
 * and back (UTC, "Z"). Parse returns 0 or -1. Format writes into buf (at least 21 bytes). */
int  time_parse_rfc3339(const char *s, int64_t *out);
void time_format_rfc3339(int64_t t, char *buf, size_t len);

#endif
