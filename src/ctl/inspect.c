/* inspect.c — podctl inspect: the runtime's verbose ContainerStatus (see inspect.h). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/json.h"
#include "core/util.h"
#include "cri/cri.h"
#include "cri/crijson.h"
#include "ctl/ctl.h"
#include "ctl/inspect.h"
#include "ctl/proto.h"
#include "node/podcache.h"
#include "pod/runtime.h"

#define CTL_INSPECT_TIMEOUT_MS 30000

struct ctl_inspect {
	struct cri_call *i_call;
	char            *i_id;
	ctl_inspect_cb   i_cb;
	void            *i_arg;
};

struct ctl_inspect_find {
	const char *prefix;
	size_t      len;
	const char *match;
	int         n;
};

static void
ctl_inspect_find_cb(const struct rt_pod_status *st, void *arg)
{
	struct ctl_inspect_find *f = arg;
	size_t                   i;

	for (i = 0; i < st->ncontainers; i++) {
		const char *id = st->containers[i].id;

		if (id == NULL || strncmp(id, f->prefix, f->len) != 0)
			continue;
		if (f->match == NULL || strcmp(f->match, id) != 0)
			f->n++;
		f->match = id;
	}
}

static void
ctl_inspect_done(
    int code, const char *message, const Runtime__V1__ContainerStatusResponse *resp, void *arg)
{
	struct ctl_inspect *in = arg;
	yajl_gen            g = json_gen_new(0);
	ctl_inspect_cb      cb = in->i_cb;
	void               *cbarg = in->i_arg;
	char                err[640];

	if (code != 0) {
		if (code == 5) /* NOT_FOUND */
			snprintf(err, sizeof(err), "container \"%s\" not found", in->i_id);
		else
			snprintf(err, sizeof(err), "container \"%s\": ContainerStatus: %s",
			    in->i_id, message != NULL ? message : "failed");
		ctl_gen_error(g, err);
	} else {
		yajl_gen_map_open(g);
		json_gen_kv_int(g, "v", CTL_PROTO_VERSION);
		json_gen_kv_bool(g, "ok", 1);
		json_gen_kv_str(g, "cmd", "inspect");
		json_gen_key(g, "data");
		/* ContainerStatusResponse is {status, info}: the data as the runtime gave it. */
		crijson_message(g, resp != NULL ? &resp->base : NULL);
		yajl_gen_map_close(g);
	}
	free(in->i_id);
	free(in); /* over before the callback, which may start another */
	cb(g, cbarg);
	yajl_gen_free(g);
}

struct ctl_inspect *
ctl_inspect_start(
    const struct ctl_deps *d, const char *id, ctl_inspect_cb cb, void *arg, yajl_gen errg)
{
	Runtime__V1__ContainerStatusRequest req = RUNTIME__V1__CONTAINER_STATUS_REQUEST__INIT;
	struct ctl_inspect_find             f = { id, strlen(id), NULL, 0 };
	struct ctl_inspect                 *in;
	char                                err[640];

	if (d->cri == NULL || !cri_ready(d->cri)) {
		ctl_gen_error(errg, "the container runtime is not ready");
		return NULL;
	}
	if (d->cache != NULL)
		podcache_foreach(d->cache, ctl_inspect_find_cb, &f);
	if (f.n > 1) {
		snprintf(err, sizeof(err),
		    "container ID prefix \"%s\" is ambiguous (%d containers)", id, f.n);
		ctl_gen_error(errg, err);
		return NULL;
	}
	in = xcalloc(1, sizeof(*in));
	in->i_id = xstrdup(f.match != NULL ? f.match : id);
	in->i_cb = cb;
	in->i_arg = arg;
	req.container_id = in->i_id;
	req.verbose = 1;
	in->i_call =
	    cri_container_status(d->cri, &req, CTL_INSPECT_TIMEOUT_MS, ctl_inspect_done, in, in);
	return in;
}

void
ctl_inspect_cancel(struct ctl_inspect *in)
{
	if (in == NULL)
		return;
	cri_cancel(in->i_call);
	free(in->i_id);
	free(in);
}
