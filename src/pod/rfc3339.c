/* rfc3339.c — RFC 3339 timestamps (metav1.Time) to Unix seconds and back. */
#include <stdint.h>
#include <stdio.h>

#include "pod/rfc3339.h"

/* Days since 1970-01-01 of a proleptic Gregorian date (Hinnant's rfc3339_days_from_civil). */
static int64_t
rfc3339_days_from_civil(int64_t y, int m, int d)
{
	int64_t era, yoe, doy, doe;

	y -= m <= 2;
	era = (y >= 0 ? y : y - 399) / 400;
	yoe = y - era * 400;
	doy = (153 * (m + (m > 2 ? -3 : 9)) + 2) / 5 + d - 1;
	doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
	return era * 146097 + doe - 719468;
}

static void
rfc3339_civil_from_days(int64_t z, int64_t *y, int *m, int *d)
{
	int64_t era, doe, yoe, doy, mp;

	z += 719468;
	era = (z >= 0 ? z : z - 146096) / 146097;
	doe = z - era * 146097;
	yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
	doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
	mp = (5 * doy + 2) / 153;
	*d = (int)(doy - (153 * mp + 2) / 5 + 1);
	*m = (int)(mp < 10 ? mp + 3 : mp - 9);
	*y = yoe + era * 400 + (*m <= 2);
}

static int
rfc3339_digits(const char **pp, int n, int *out)
{
	const char *p = *pp;
	int         v = 0, i;

	for (i = 0; i < n; i++) {
		if (p[i] < '0' || p[i] > '9')
			return -1;
		v = v * 10 + (p[i] - '0');
	}
	*pp = p + n;
	*out = v;
	return 0;
}

int
time_parse_rfc3339(const char *s, int64_t *out)
{
	static const int mdays[] = { 31, 29, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31 };
	const char      *p = s;
	int              y, mo, d, h, mi, sec, oh = 0, om = 0, sign = 0, leap;

	if (s == NULL || out == NULL)
		return -1;
	if (rfc3339_digits(&p, 4, &y) < 0 || *p++ != '-' || rfc3339_digits(&p, 2, &mo) < 0 ||
	    *p++ != '-' || rfc3339_digits(&p, 2, &d) < 0 || (*p != 'T' && *p != 't') ||
	    (p++, rfc3339_digits(&p, 2, &h)) < 0 || *p++ != ':' || rfc3339_digits(&p, 2, &mi) < 0 ||
	    *p++ != ':' || rfc3339_digits(&p, 2, &sec) < 0)
		return -1;
	if (*p == '.') {
		p++;
		if (*p < '0' || *p > '9')
			return -1;
		while (*p >= '0' && *p <= '9')
			p++;
	}
	if (*p == 'Z' || *p == 'z')
		p++;
	else if (*p == '+' || *p == '-') {
		sign = *p++ == '-' ? -1 : 1;
		if (rfc3339_digits(&p, 2, &oh) < 0 || *p++ != ':' || rfc3339_digits(&p, 2, &om) < 0)
			return -1;
		if (oh > 23 || om > 59)
			return -1;
	} else
		return -1;
	if (*p != '\0')
		return -1;
	leap = (y % 4 == 0 && y % 100 != 0) || y % 400 == 0;
	if (mo < 1 || mo > 12 || d < 1 || d > mdays[mo - 1] || (mo == 2 && d == 29 && !leap) ||
	    h > 23 || mi > 59 || sec > 59)
		return -1;
	*out = rfc3339_days_from_civil(y, mo, d) * 86400 + h * 3600 + mi * 60 + sec -
	    sign * (oh * 3600 + om * 60);
	return 0;
}

void
time_format_rfc3339(int64_t t, char *buf, size_t len)
{
	int64_t days, rem, y;
	int     m, d;

	if (buf == NULL || len == 0)
		return;
	days = t / 86400;
	rem = t % 86400;
	if (rem < 0) {
		rem += 86400;
		days--;
	}
	rfc3339_civil_from_days(days, &y, &m, &d);
	if (y < 0 || y > 9999) {
		snprintf(buf, len, "%s", y < 0 ? "0000-01-01T00:00:00Z" : "9999-12-31T23:59:59Z");
		return;
	}
	snprintf(buf, len, "%04d-%02d-%02dT%02d:%02d:%02dZ", (int)y, m, d, (int)(rem / 3600),
	    (int)(rem / 60 % 60), (int)(rem % 60));
}
