/* fuzz_pod.h — the body shared by the JSON and YAML decoder fuzz targets. */
#ifndef KLET_FUZZ_POD_H
#define KLET_FUZZ_POD_H

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/json.h"
#include "pod/pod.h"
#include "pod/hash.h"

/* Decode, validate, hash, copy and free a pod; parse the raw DOM too and check that its
 * JSON serialization parses again. Any crash, leak or sanitizer report is a finding. */
static void
fuzz_pod_one(const uint8_t *data, size_t size, int yaml)
{
	char              err[256];
	struct pod       *p;
	const struct pod *q;
	struct json_doc  *d, *d2;
	size_t            i;
	char             *s;

	p = yaml ? pod_from_yaml((const char *)data, size, err, sizeof(err))
	         : pod_from_json((const char *)data, size, err, sizeof(err));
	if (p != NULL) {
		(void)pod_validate(p, err, sizeof(err));
		for (i = 0; i < p->ncontainers; i++)
			(void)container_hash(&p->containers[i]);
		for (i = 0; i < p->ninit_containers; i++)
			(void)container_is_sidecar(&p->init_containers[i]);
		q = pod_ref(p); /* the pod outlives the first reference */
		pod_unref(p);
		for (i = 0; i < q->ncontainers; i++)
			(void)container_hash(&q->containers[i]);
		(void)pod_find_container(q, "web");
		pod_unref(q);
	} else if (strlen(err) == 0) {
		fprintf(stderr, "decode failed without a reason\n");
		abort();
	}
	d = yaml ? json_parse_yaml((const char *)data, size, NULL, err, sizeof(err))
	         : json_parse((const char *)data, size, NULL, err, sizeof(err));
	if (d == NULL)
		return;
	s = json_to_string(json_root(d));
	d2 = json_parse(s, strlen(s), NULL, err, sizeof(err));
	if (d2 == NULL) {
		fprintf(stderr, "re-serialized DOM does not parse: %s\n%s\n", err, s);
		abort();
	}
	json_free(d2);
	free(s);
	json_free(d);
}

#endif
