/* quantity.c — Kubernetes resource quantities ("100m", "1Gi", "1e3") to milli-units. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "core/util.h"
#include "core/quantity.h"

typedef __int128 i128;

#define I128_LIMIT ((i128)1 << 120)

/*
 * Grammar (apimachinery's resource.Quantity): [+-] digits [. digits] suffix, where suffix is
 * a binary SI one (Ki Mi Gi Ti Pi Ei), a decimal SI one (n u m "" k M G T P E) or an
 * exponent (e or E, an optional sign, digits). The milli value rounds up, as MilliValue().
 */
int
quantity_parse(const char *s, int64_t *milli)
{
	static const struct {
		const char *sfx;
		int         pow10;
		int         pow1024;
	} sfx[] = {
		{ "Ki", 0, 1 },
		{ "Mi", 0, 2 },
		{ "Gi", 0, 3 },
		{ "Ti", 0, 4 },
		{ "Pi", 0, 5 },
		{ "Ei", 0, 6 },
		{ "n", -9, 0 },
		{ "u", -6, 0 },
		{ "m", -3, 0 },
		{ "", 0, 0 },
		{ "k", 3, 0 },
		{ "M", 6, 0 },
		{ "G", 9, 0 },
		{ "T", 12, 0 },
		{ "P", 15, 0 },
		{ "E", 18, 0 },
	};
	const char *p = s;
	i128        mant = 0, v;
	int         neg = 0, ndigits = 0, sig = 0, frac = 0, pow10 = 0, pow1024 = -1;
	int         exp10, i;
	size_t      k;

	if (s == NULL || milli == NULL)
		return -1;
	if (*p == '+' || *p == '-')
		neg = *p++ == '-';
	for (; *p >= '0' && *p <= '9'; p++) {
		ndigits++;
		if (mant == 0 && *p == '0')
			continue;
		if (++sig > 36)
			return -1;
		mant = mant * 10 + (*p - '0');
	}
	if (*p == '.') {
		for (p++; *p >= '0' && *p <= '9'; p++) {
			ndigits++;
			frac++;
			if (mant == 0 && *p == '0')
				continue;
			if (++sig > 36)
				return -1;
			mant = mant * 10 + (*p - '0');
		}
	}
	if (ndigits == 0)
		return -1;
	for (k = 0; k < nitems(sfx); k++) {
		if (strcmp(p, sfx[k].sfx) == 0) {
			pow10 = sfx[k].pow10;
			pow1024 = sfx[k].pow1024;
			break;
		}
	}
	if (pow1024 < 0) {
		/* An exponent: e or E, optional sign, 1..3 digits. */
		int eneg = 0, e = 0, nd = 0;

		if (*p != 'e' && *p != 'E')
			return -1;
		p++;
		if (*p == '+' || *p == '-')
			eneg = *p++ == '-';
		for (; *p >= '0' && *p <= '9'; p++) {
			if (++nd > 3)
				return -1;
			e = e * 10 + (*p - '0');
		}
		if (nd == 0 || *p != '\0')
			return -1;
		pow10 = eneg ? -e : e;
		pow1024 = 0;
	}
	v = mant;
	for (i = 0; i < pow1024; i++) {
		if (v > I128_LIMIT / 1024)
			return -1;
		v *= 1024;
	}
	exp10 = pow10 + 3 - frac;
	if (v == 0) {
		*milli = 0;
		return 0;
	}
	if (exp10 >= 0) {
		for (i = 0; i < exp10; i++) {
			if (v > I128_LIMIT / 10)
				return -1;
			v *= 10;
		}
	} else {
		i128 div = 1;
		int  up = 0;

		for (i = 0; i < -exp10; i++) {
			if (div > v) {
				/* Below one milli-unit: rounds up to 1 (0 for negatives). */
				v = 0;
				up = 1;
				break;
			}
			div *= 10;
		}
		if (!up) {
			up = v % div != 0;
			v /= div;
		}
		if (up && !neg)
			v += 1;
	}
	if (v > INT64_MAX)
		return -1;
	*milli = neg ? -(int64_t)v : (int64_t)v;
	return 0;
}

const struct quantity *
resource_list_get(const struct resource_list *rl, const char *name)
{
	size_t i;

	if (rl == NULL || name == NULL)
		return NULL;
	for (i = 0; i < rl->n; i++)
		if (streq_null(rl->items[i].name, name))
			return &rl->items[i];
	return NULL;
}

void
resource_list_clear(struct resource_list *rl)
{
	size_t i;

	for (i = 0; i < rl->n; i++)
		free(rl->items[i].name);
	free(rl->items);
	rl->items = NULL;
	rl->n = 0;
}
