/* grpc_check.h — the grpc health check of the prober (internal). */
#ifndef KLET_PROBER_GRPC_H
#define KLET_PROBER_GRPC_H

#include <stddef.h>
#include <stdint.h>

struct event_base;
struct pr_grpc;

/* ok 1 when the service answered SERVING, else 0 with msg saying why. */
typedef void (*pr_grpc_done_fn)(int ok, const char *msg, void *arg);

/* Starts Health/Check(service) to host:port (an IP literal) over h2c. done runs once on a
 * later loop turn unless pr_grpc_cancel comes first. Never NULL. */
struct pr_grpc *pr_grpc_check(struct event_base *, const char *host, int port, const char *service,
    int64_t timeout_ms, pr_grpc_done_fn, void *arg);
/* Cancels (done never runs) and frees. NULL is a no-op. */
void pr_grpc_cancel(struct pr_grpc *);

/* Pure helpers (tests): the length-prefixed request into buf (0 when too small), and the
 * status field of a HealthCheckResponse (0 when absent, -1 when malformed). */
size_t pr_grpc_health_request(const char *service, uint8_t *buf, size_t len);
int    pr_grpc_health_status(const uint8_t *msg, size_t len);

#endif
