/* quantity.h — Kubernetes resource quantities (apimachinery's resource.Quantity). */
#ifndef KLET_QUANTITY_H
#define KLET_QUANTITY_H

#include <stdint.h>

/* Kubernetes quantity ("100m", "1Gi", "1e3", "0.5", "500Mi") to milli-units.
 * Returns 0, or -1 for a malformed or out-of-range value. */
int quantity_parse(const char *s, int64_t *milli);

#endif
