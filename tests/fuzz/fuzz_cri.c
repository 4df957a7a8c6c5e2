/* fuzz_cri.c — libFuzzer target: CRI responses as they come off an HTTP/2 stream, through the
 * gRPC call's framing and trailers (src/net/grpc.c, included to reach its stream callbacks),
 * protobuf-c's unpacking into the call's arena, and klet's conversions of the list and status
 * answers into runtime.h data (kr_rt_from_sandbox, kr_rt_from_container, src/pod/runtime.c).
 *
 * Input: byte 0 picks the response type, byte 1 flags (bit 0: the input carries its own
 * gRPC framing, else it is framed here; bit 1: no grpc-status trailer; bit 2: HTTP status 500;
 * bit 3: a grpc-message trailer), then the cut header of fuzz_common.h, then the payload.
 * The payload also goes through the relist's raw path (src/node/pleg.c): its records (field 1
 * of both list answers) one by one (cri_wire_items), each keyed by cri_wire_hash. */
#include "net/grpc.c"

#include "cri/cri.h"
#include "fuzz_common.h"
#include "kuberuntime/kuberuntime.h"
#include "kuberuntime/internal.h"
#include "pod/runtime.h"

static const ProtobufCMessageDescriptor *const descs[] = {
	&runtime__v1__list_pod_sandbox_response__descriptor,
	&runtime__v1__list_containers_response__descriptor,
	&runtime__v1__pod_sandbox_status_response__descriptor,
	&runtime__v1__container_status_response__descriptor,
	&runtime__v1__version_response__descriptor,
	&runtime__v1__exec_sync_response__descriptor,
	&runtime__v1__image_status_response__descriptor,
};
#define NDESCS (sizeof(descs) / sizeof(descs[0]))

static int done_calls;

static int
wire_item(const uint8_t *item, size_t len, void *arg)
{
	const uint32_t *keys = arg;

	if (cri_wire_hash(item, len, 1, *keys) != cri_wire_hash(item, len, 1, *keys))
		abort(); /* pure */
	return 0;
}

static void
use_status(struct rt_pod_status *st)
{
	struct rt_pod_status cp;
	size_t               i;

	rt_pod_status_sort(st);
	rt_pod_status_copy(&cp, st);
	for (i = 0; i < cp.ncontainers; i++)
		(void)rt_find_container(&cp, cp.containers[i].name);
	(void)rt_find_container(&cp, "app");
	rt_pod_status_clear(&cp);
	rt_pod_status_clear(st);
}

static void
done(void *arg, int code, const char *message, ProtobufCMessage *m)
{
	const ProtobufCMessageDescriptor *d = arg;
	struct rt_pod_status              st;
	size_t                            i;

	done_calls++;
	if (message == NULL)
		abort();
	(void)strlen(message);
	if (code != GRPC_OK) {
		if (m != NULL)
			abort();
		return;
	}
	if (m == NULL || m->descriptor != d)
		abort();
	memset(&st, 0, sizeof(st));
	if (d == &runtime__v1__list_pod_sandbox_response__descriptor) {
		const Runtime__V1__ListPodSandboxResponse *r = (const void *)m;

		for (i = 0; i < r->n_items; i++) {
			const Runtime__V1__PodSandbox *sb = r->items[i];

			(void)strlen(sb->id);
			(void)kr_map_get((void *const *)sb->labels, sb->n_labels, KR_LABEL_POD_UID);
			if (sb->metadata != NULL)
				(void)strlen(sb->metadata->uid);
		}
	} else if (d == &runtime__v1__list_containers_response__descriptor) {
		const Runtime__V1__ListContainersResponse *r = (const void *)m;

		for (i = 0; i < r->n_containers; i++) {
			const Runtime__V1__Container *c = r->containers[i];

			(void)strlen(c->pod_sandbox_id);
			(void)kr_map_get((void *const *)c->labels, c->n_labels, KR_LABEL_POD_UID);
			(void)kr_map_get(
			    (void *const *)c->annotations, c->n_annotations, KR_ANN_RESTART_COUNT);
			if (c->image != NULL)
				(void)strlen(c->image->image);
		}
	} else if (d == &runtime__v1__pod_sandbox_status_response__descriptor) {
		const Runtime__V1__PodSandboxStatusResponse *r = (const void *)m;

		if (r->status != NULL) {
			st.sandboxes = xcalloc(2, sizeof(*st.sandboxes));
			kr_rt_from_sandbox(&st.sandboxes[0], r->status);
			kr_rt_from_sandbox(&st.sandboxes[1], r->status);
			st.nsandboxes = 2;
		}
		use_status(&st);
	} else if (d == &runtime__v1__container_status_response__descriptor) {
		const Runtime__V1__ContainerStatusResponse *r = (const void *)m;

		if (r->status != NULL) {
			st.containers = xcalloc(2, sizeof(*st.containers));
			kr_rt_from_container(&st.containers[0], r->status, "sandbox-1");
			kr_rt_from_container(&st.containers[1], r->status, r->status->id);
			st.ncontainers = 2;
		}
		use_status(&st);
	} else if (d == &runtime__v1__version_response__descriptor) {
		const Runtime__V1__VersionResponse *r = (const void *)m;

		(void)strlen(r->runtime_name);
		(void)strlen(r->runtime_version);
	} else if (d == &runtime__v1__exec_sync_response__descriptor) {
		const Runtime__V1__ExecSyncResponse *r = (const void *)m;

		if (r->stdout.len > 0)
			(void)memchr(r->stdout.data, 0, r->stdout.len);
	}
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct event_base         *base;
	static size_t                     cuts[FUZZ_MAX_CUTS];
	static uint8_t                   *framed;
	static size_t                     framed_cap;
	const ProtobufCMessageDescriptor *d;
	struct grpc_call                 *g;
	const uint8_t                    *p;
	size_t                            n, i, off, len;
	uint8_t                           flags;
	struct h2_header                  h[2], t[2];
	size_t                            nt = 0;

	fuzz_quiet();
	if (base == NULL)
		base = event_base_new();
	if (size < 2)
		return 0;
	d = descs[data[0] % NDESCS];
	flags = data[1];
	data += 2;
	size -= 2;
	n = fuzz_cuts(&data, &size, cuts);
	if (flags & 1) {
		p = data;
		len = size;
	} else {
		if (framed_cap < size + 5) {
			framed_cap = size + 5;
			framed = xreallocarray(framed, 1, framed_cap);
		}
		grpc_frame_header(framed, (uint32_t)size);
		memcpy(framed + 5, data, size);
		p = framed;
		len = size + 5;
	}
	/* As grpc_unary sets a call up. */
	g = xcalloc(1, sizeof(*g));
	g->g_desc = d;
	g->g_done = done;
	g->g_arg = (void *)d;
	g->g_status = -1;
	g->g_local = -1;
	g->g_max_recv = 64 * 1024;
	g->g_timer = evtimer_new(base, grpc_call_timercb, g);
	done_calls = 0;
	h[0] = (struct h2_header){ ":status", (flags & 4) ? "500" : "200" };
	h[1] = (struct h2_header){ "content-type", "application/grpc" };
	(void)grpc_call_on_headers(g, h, 2, 0, 0);
	for (i = 0, off = 0; i <= n && off < len; i++) {
		size_t k = i < n ? cuts[i] : len - off;

		if (k > len - off)
			k = len - off;
		if (grpc_call_on_data(g, p + off, k) == -1)
			break; /* h2 resets the stream; on_close follows */
		off += k;
	}
	if (!(flags & 2))
		t[nt++] = (struct h2_header){ "grpc-status", (flags & 4) ? "13" : "0" };
	if (flags & 8)
		t[nt++] = (struct h2_header){ "grpc-message", "bad%20thing%zz%" };
	if (nt > 0)
		(void)grpc_call_on_headers(g, t, nt, 1, 1);
	grpc_call_on_close(g, H2_OK, 0, "");
	if (done_calls != 1)
		abort();
	{
		uint32_t keys = flags & 16 ? (1u << 1 | 1u << 3) : (1u << 1 | 1u << 6);

		(void)cri_wire_items(data, size, 1, wire_item, &keys);
	}
	/* The arena keeps a spare chunk between calls, as in kletd. */
	return 0;
}
