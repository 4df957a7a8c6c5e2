/* metrics.c — the Prometheus text format (see metrics.h). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <event2/buffer.h>

#include "server/metrics.h"

void
prom_number(char *buf, size_t len, double v)
{
	int prec;

	if (isnan(v)) {
		snprintf(buf, len, "NaN");
		return;
	}
	if (isinf(v)) {
		snprintf(buf, len, v > 0 ? "+Inf" : "-Inf");
		return;
	}
	if (v == floor(v) && fabs(v) < 1e15) {
		snprintf(buf, len, "%.0f", v);
		return;
	}
	for (prec = 1; prec < 17; prec++) {
		snprintf(buf, len, "%.*g", prec, v);
		if (strtod(buf, NULL) == v)
			return;
	}
	snprintf(buf, len, "%.17g", v);
}

void
prom_family(struct evbuffer *out, const char *name, const char *help, const char *type)
{
	evbuffer_add_printf(out, "# HELP %s %s\n# TYPE %s %s\n", name, help, name, type);
}

void
prom_sample(struct evbuffer *out, const char *name, const char *labels, double v)
{
	char num[64];

	prom_number(num, sizeof(num), v);
	if (labels != NULL && *labels != '\0')
		evbuffer_add_printf(out, "%s{%s} %s\n", name, labels, num);
	else
		evbuffer_add_printf(out, "%s %s\n", name, num);
}

void
prom_label(char *buf, size_t len, const char *name, const char *value)
{
	size_t n = strlen(buf);
	int    w;

	w = snprintf(buf + n, len - n, "%s%s=\"", n > 0 ? "," : "", name);
	if (w < 0 || (size_t)w >= len - n)
		return;
	n += (size_t)w;
	for (; *value != '\0' && n + 3 < len; value++) {
		if (*value == '\\' || *value == '"') {
			buf[n++] = '\\';
			buf[n++] = *value;
		} else if (*value == '\n') {
			buf[n++] = '\\';
			buf[n++] = 'n';
		} else
			buf[n++] = *value;
	}
	if (n + 1 < len)
		buf[n++] = '"';
	buf[n] = '\0';
}

void
prom_hist_observe(struct prom_hist *h, double v)
{
	size_t i;

	for (i = 0; i < h->nbounds && i < PROM_MAX_BUCKETS; i++)
		if (v <= h->bounds[i]) {
			h->counts[i]++;
			break;
		}
	h->count++;
	h->sum += v;
}

void
prom_hist_write(struct evbuffer *out, const char *name, const char *help, const struct prom_hist *h)
{
	char     le[64], lab[96], bucket[160];
	uint64_t cum = 0;
	size_t   i;

	prom_family(out, name, help, "histogram");
	snprintf(bucket, sizeof(bucket), "%s_bucket", name);
	for (i = 0; i < h->nbounds && i < PROM_MAX_BUCKETS; i++) {
		cum += h->counts[i];
		prom_number(le, sizeof(le), h->bounds[i]);
		lab[0] = '\0';
		prom_label(lab, sizeof(lab), "le", le);
		prom_sample(out, bucket, lab, (double)cum);
	}
	prom_sample(out, bucket, "le=\"+Inf\"", (double)h->count);
	snprintf(bucket, sizeof(bucket), "%s_sum", name);
	prom_sample(out, bucket, NULL, h->sum);
	snprintf(bucket, sizeof(bucket), "%s_count", name);
	prom_sample(out, bucket, NULL, (double)h->count);
}
