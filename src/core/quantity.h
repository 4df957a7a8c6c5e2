/* quantity.h — Kubernetes resource quantities (apimachinery's resource.Quantity) and lists
 * of named quantities (v1.ResourceList). */
#ifndef KLET_QUANTITY_H
#define KLET_QUANTITY_H

#include <stddef.h>
#include <stdint.h>

struct quantity {
	char   *name; /* cpu, memory, ephemeral-storage, hugepages-2Mi, ... */
	int64_t milli;
};

struct resource_list {
	struct quantity *items;
	size_t           n;
};

/* Kubernetes quantity ("100m", "1Gi", "1e3", "0.5", "500Mi") to milli-units.
 * Returns 0, or -1 for a malformed or out-of-range value. */
int quantity_parse(const char *s, int64_t *milli);

/* The item named name, or NULL when absent (or rl or name is NULL). */
const struct quantity *resource_list_get(const struct resource_list *, const char *name);
/* Frees a list's items and leaves it empty; the struct itself is the caller's. */
void resource_list_clear(struct resource_list *);

#endif
