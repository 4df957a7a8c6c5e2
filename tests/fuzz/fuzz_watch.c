/* fuzz_watch.c — libFuzzer target: the pod watch stream (src/api/watch.c) as it comes off the
 * HTTP/2 stream, cut anywhere: the API client's line assembly and size limit (src/client/api.c)
 * and the watch's event handling (decode, podconfig upsert/remove, mirror pods, resource
 * versions, ERROR/410, relist decisions). Both files are included to reach their stream
 * callbacks; the API connection is replaced by calls that stay held (never sent), and the
 * stream's headers, data pieces and end are delivered to them as h2 would.
 *
 * Input: the cut header of fuzz_common.h, then the stream (newline-delimited JSON events).
 * First the watch LISTs (answered with a fixed list of one pod), then watches: that watch
 * call gets the input. */
#include "client/api.c"
#include "api/watch.c"

#include "fuzz_common.h"

static const char list_body[] =
    "{\"kind\":\"PodList\",\"apiVersion\":\"v1\",\"metadata\":{\"resourceVersion\":\"10\"},"
    "\"items\":[{\"metadata\":{\"name\":\"web\",\"namespace\":\"default\",\"uid\":\"u-1\","
    "\"resourceVersion\":\"9\"},\"spec\":{\"nodeName\":\"node1\",\"containers\":[{\"name\":"
    "\"c\",\"image\":\"busybox\"}]}}]}";

static int updates;

static void
pc_cb(enum pod_op op, const struct pod *pod, const char *source, void *arg)
{
	(void)op;
	(void)arg;
	if (pod == NULL || source == NULL)
		abort();
	updates++;
}

/* Answers a held call as an h2 stream would: headers, data, end. */
static void
respond(struct api_call *c, const char *status, const uint8_t *d, size_t len, const size_t *cuts,
    size_t ncuts)
{
	struct h2_header h = { ":status", status };
	size_t           i, off = 0, k;

	if (c == NULL || c->c_state == CALL_DEAD)
		return;
	c->c_state = CALL_SENT; /* as api_submit, without a session */
	if (c->c_api->a_stats.held > 0)
		c->c_api->a_stats.held--;
	(void)api_on_headers(c, &h, 1, 0, 0);
	for (i = 0; i <= ncuts && off < len; i++) {
		k = i < ncuts ? cuts[i] : len - off;
		if (k > len - off)
			k = len - off;
		if (c->c_state == CALL_DEAD)
			return; /* cancelled by the watch: h2 sends RST_STREAM, no on_close */
		if (api_on_data(c, d + off, k) == -1) {
			if (c->c_state != CALL_DEAD)
				api_on_close(c, H2_ERR_ABORTED, 8, "aborted by a callback");
			return;
		}
		off += k;
	}
	if (c->c_state != CALL_DEAD)
		api_on_close(c, H2_OK, 0, "");
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct event_base *base;
	static struct api         a;
	static size_t             cuts[FUZZ_MAX_CUTS];
	struct podconfig_options  po = { .node_name = "node1" };
	struct watch_options      wo = { .node = "node1" };
	struct podconfig         *pc;
	struct watch             *w;
	struct api_call          *c;
	size_t                    n;

	fuzz_quiet();
	if (base == NULL) {
		base = event_base_new();
		a.a_base = base;
		TAILQ_INIT(&a.a_calls);
		TAILQ_INIT(&a.a_dead);
		a.a_reaper = event_new(base, -1, 0, api_reap, &a);
		a.a_backing_off = 1; /* calls stay held: nothing is sent */
		a.a_opts.request_timeout_ms = 60000;
	}
	n = fuzz_cuts(&data, &size, cuts);
	updates = 0;
	pc = podconfig_new(&po, pc_cb, NULL);
	wo.pc = pc;
	w = watch_new(base, &a, &wo);
	respond(w->w_call, "200", (const uint8_t *)list_body, sizeof(list_body) - 1, NULL, 0);
	if (w->w_state != WATCH_WATCHING || w->w_call == NULL || updates != 1) {
		fprintf(stderr, "the list did not lead to a watch\n");
		abort();
	}
	respond(w->w_call, "200", data, size, cuts, n);
	watch_free(w);
	podconfig_free(pc);
	/* Calls the watch left held (a re-watch or relist it scheduled) are cancelled. */
	while ((c = TAILQ_FIRST(&a.a_calls)) != NULL)
		api_call_cancel(c);
	event_base_loop(base, EVLOOP_NONBLOCK); /* the reaper frees them */
	return 0;
}
