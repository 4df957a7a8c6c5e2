/* metrics.h — the Prometheus text exposition format (version 0.0.4) for /metrics. */
#ifndef KLET_SERVER_METRICS_H
#define KLET_SERVER_METRICS_H

#include <stddef.h>
#include <stdint.h>

struct evbuffer;

#define PROM_MAX_BUCKETS 16

/* A histogram with fixed upper bounds (cumulative buckets are made when written). */
struct prom_hist {
	const double *bounds;
	size_t        nbounds;
	uint64_t      counts[PROM_MAX_BUCKETS]; /* per bucket, not cumulative */
	uint64_t      count;
	double        sum;
};

/* The shortest text that reads back as v ("1", "0.25", "+Inf", "NaN"), as Go prints it. */
void prom_number(char *buf, size_t len, double v);
/* # HELP and # TYPE lines. */
void prom_family(struct evbuffer *, const char *name, const char *help, const char *type);
/* One sample: name{labels} value; labels is NULL or an already formatted list
 * ("a=\"b\",c=\"d\"", see prom_label). */
void prom_sample(struct evbuffer *, const char *name, const char *labels, double v);
/* Appends name="escaped value" (with a leading comma when buf is not empty) to a label list
 * buffer of size len. */
void prom_label(char *buf, size_t len, const char *name, const char *value);
void prom_hist_observe(struct prom_hist *, double v);
/* The family, its _bucket{le=...} lines, _sum and _count. */
void prom_hist_write(
    struct evbuffer *, const char *name, const char *help, const struct prom_hist *);

#endif
