/* scalecri.c — a small CRI server for fleet-scale tests: one process, one libevent loop,
 * one unix socket per simulated node (DIR/node-0001.sock ...), sandboxes and containers as
 * records in memory with containerd's semantics (states, labels, annotations, attempts,
 * NOT_FOUND), scripted exits (the fake CRI's: FAKE_EXIT_CODE / FAKE_EXIT_AFTER_MS, fake-exit
 * CODE MS, true, false, sleep N). gRPC over nghttp2's server API on bufferevents.
 *
 * Usage: scalecri --dir DIR --nodes N [--control PATH]
 * Prints "scalecri: ready N" once every socket listens. The control socket (default
 * DIR/control.sock) takes one command per line and answers one line:
 *   delay FIRST LAST MS   answers of nodes FIRST..LAST (1-based) wait MS first (0: none)
 *   stats [NODE]          {"Method":count,...} calls so far (all nodes, or one)
 *   counts                {"sandboxes":S,"containers":C,"running":R}
 */
#include <errno.h>
#include <stdarg.h>
#include <stddef.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/queue.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <event2/buffer.h>
#include <event2/bufferevent.h>
#include <event2/event.h>
#include <event2/listener.h>
#include <nghttp2/nghttp2.h>

#include "api.pb-c.h"
#include "core/util.h"
#include "net/grpc.h"

#define MAX_MSG (16u << 20)

enum m_id {
	M_VERSION,
	M_STATUS,
	M_RUN_SB,
	M_STOP_SB,
	M_REMOVE_SB,
	M_SB_STATUS,
	M_LIST_SB,
	M_CREATE,
	M_START,
	M_STOP,
	M_REMOVE,
	M_LIST,
	M_STATUS_C,
	M_UPDATE,
	M_REOPEN,
	M_EXEC,
	M_LIST_IMAGES,
	M_IMAGE_STATUS,
	M_PULL,
	M_REMOVE_IMAGE,
	M_IMAGE_FS,
	M_COUNT
};

struct sb {
	char                               id[65];
	Runtime__V1__RunPodSandboxRequest *req;
	int                                state;
	int64_t                            created;
	char                               ip[32];
	TAILQ_ENTRY(sb) entry;
};

struct ctr {
	char                                 id[65];
	struct sb                           *sb;
	Runtime__V1__CreateContainerRequest *req;
	int                                  state;
	int64_t                              created, started, finished, exit_at;
	int32_t                              exit_code, plan_code;
	int                                  plan_exits;
	char                                *reason;
	char                                *log_path;
	char                                *image_id;
	TAILQ_ENTRY(ctr) entry;
};

struct image {
	char *name;
	char *id;
	char *digest;
};

struct node {
	int                    idx;
	char                  *path;
	struct evconnlistener *lis;
	int64_t                delay_ms;
	uint64_t               seq;
	uint64_t               calls[M_COUNT];
	TAILQ_HEAD(, sb) sbs;
	TAILQ_HEAD(, ctr) ctrs;
	struct image *images;
	size_t        n_images;
};

struct conn {
	struct node        *node;
	struct bufferevent *bev;
	nghttp2_session    *ng;
	LIST_ENTRY(conn) entry;
	LIST_HEAD(, req) reqs;
};

struct req {
	struct conn  *c;
	int32_t       id;
	char          path[96];
	uint8_t      *in;
	size_t        in_len;
	uint8_t      *out;
	size_t        out_len, out_off;
	struct event *timer;
	LIST_ENTRY(req) entry;
};

/* What a handler produces: a packed response, or an error code and message. */
struct out {
	int      code;
	char     msg[512];
	uint8_t *buf;
	size_t   len;
};

static struct event_base *base;
static struct node       *nodes;
static int                n_nodes;
static LIST_HEAD(, conn) conns = LIST_HEAD_INITIALIZER(conns);
static const char *default_images[] = { "klet.local/busybox:1.35", "klet.local/pause:3.9" };

static void conn_flush(struct conn *);

/* ---- helpers ---- */

static void
pack(struct out *o, const ProtobufCMessage *m)
{
	o->len = protobuf_c_message_get_packed_size(m);
	o->buf = xmalloc(o->len + 1);
	protobuf_c_message_pack(m, o->buf);
	o->code = GRPC_OK;
}

static int fail(struct out *o, int code, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static int
fail(struct out *o, int code, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(o->msg, sizeof(o->msg), fmt, ap);
	va_end(ap);
	o->code = code;
	return code;
}

static void
new_id(struct node *n, char id[65])
{
	uint64_t h = fnv64(0, &n->idx, sizeof(n->idx));

	n->seq++;
	h = fnv64(h, &n->seq, sizeof(n->seq));
	snprintf(id, 65, "%016llx%016llx%016llx%016llx", (unsigned long long)h,
	    (unsigned long long)fnv64(h, "a", 1), (unsigned long long)fnv64(h, "b", 1),
	    (unsigned long long)fnv64(h, "c", 1));
}

/* docker.io/library/ and :latest, as containerd's reference normalisation does. */
static char *
normalize_image(const char *ref)
{
	const char *slash = strchr(ref, '/');
	const char *last = strrchr(ref, '/');
	int         domain = slash != NULL &&
	    (memchr(ref, '.', (size_t)(slash - ref)) != NULL ||
	        memchr(ref, ':', (size_t)(slash - ref)) != NULL ||
	        strncmp(ref, "localhost/", 10) == 0);
	const char *tail = last != NULL ? last : ref;
	int         tagged = strchr(tail, ':') != NULL || strchr(ref, '@') != NULL;

	return xsprintf("%s%s%s",
	    domain ? "" : (slash != NULL ? "docker.io/" : "docker.io/library/"), ref,
	    tagged ? "" : ":latest");
}

static struct image *
find_image(struct node *n, const char *ref)
{
	char  *norm;
	size_t i;

	if (ref == NULL || ref[0] == '\0')
		return NULL;
	norm = normalize_image(ref);
	for (i = 0; i < n->n_images; i++) {
		struct image *im = &n->images[i];

		if (strcmp(im->name, norm) == 0 || strcmp(im->id, ref) == 0 ||
		    strcmp(im->digest, ref) == 0 || strcmp(im->digest, norm) == 0) {
			free(norm);
			return im;
		}
	}
	free(norm);
	return NULL;
}

static struct image *
add_image(struct node *n, const char *ref)
{
	struct image *im;
	char         *norm = normalize_image(ref);
	uint64_t      h = fnv64(0, norm, strlen(norm));
	char          hex[65];

	snprintf(hex, sizeof(hex), "%016llx%016llx%016llx%016llx", (unsigned long long)h,
	    (unsigned long long)fnv64(h, "1", 1), (unsigned long long)fnv64(h, "2", 1),
	    (unsigned long long)fnv64(h, "3", 1));
	n->images = xreallocarray(n->images, n->n_images + 1, sizeof(*n->images));
	im = &n->images[n->n_images++];
	im->name = norm;
	im->id = xsprintf("sha256:%s", hex);
	im->digest = xsprintf("%.*s@sha256:%s",
	    (int)(strrchr(norm, ':') > strrchr(norm, '/') ? strrchr(norm, ':') - norm
	                                                  : (ptrdiff_t)strlen(norm)),
	    norm, hex);
	return im;
}

static void
image_pb(struct image *im, Runtime__V1__Image *pb, Runtime__V1__ImageSpec *spec)
{
	runtime__v1__image__init(pb);
	runtime__v1__image_spec__init(spec);
	pb->id = im->id;
	pb->n_repo_tags = 1;
	pb->repo_tags = &im->name;
	pb->n_repo_digests = 1;
	pb->repo_digests = &im->digest;
	pb->size = 1 << 20;
	spec->image = im->id;
	pb->spec = spec;
}

static struct sb *
find_sb(struct node *n, const char *id, struct out *o)
{
	struct sb *s, *hit = NULL;
	size_t     l = id != NULL ? strlen(id) : 0;
	int        hits = 0;

	if (l == 0) {
		fail(o, GRPC_INVALID_ARGUMENT, "sandbox id is empty");
		return NULL;
	}
	TAILQ_FOREACH(s, &n->sbs, entry)
	{
		if (strcmp(s->id, id) == 0)
			return s;
		if (strncmp(s->id, id, l) == 0) {
			hit = s;
			hits++;
		}
	}
	if (hits == 1)
		return hit;
	fail(o, GRPC_NOT_FOUND, "an error occurred when try to find sandbox \"%s\": not found", id);
	return NULL;
}

static struct ctr *
find_ctr(struct node *n, const char *id, struct out *o)
{
	struct ctr *c, *hit = NULL;
	size_t      l = id != NULL ? strlen(id) : 0;
	int         hits = 0;

	if (l == 0) {
		fail(o, GRPC_INVALID_ARGUMENT, "container id is empty");
		return NULL;
	}
	TAILQ_FOREACH(c, &n->ctrs, entry)
	{
		if (strcmp(c->id, id) == 0)
			return c;
		if (strncmp(c->id, id, l) == 0) {
			hit = c;
			hits++;
		}
	}
	if (hits == 1)
		return hit;
	fail(o, GRPC_NOT_FOUND, "an error occurred when try to find container \"%s\": not found",
	    id);
	return NULL;
}

static void
ctr_exit(struct ctr *c, int32_t code, const char *reason, int64_t when)
{
	c->state = RUNTIME__V1__CONTAINER_STATE__CONTAINER_EXITED;
	c->exit_code = code;
	c->finished = when != 0 ? when : now_wall_ns();
	free(c->reason);
	c->reason = xstrdup(reason != NULL ? reason : (code == 0 ? "Completed" : "Error"));
	c->exit_at = 0;
}

/* Containers whose scripted time has come exit now (lazily, on the calls that show them). */
static void
reap(struct node *n)
{
	struct ctr *c;
	int64_t     t = now_wall_ns();

	TAILQ_FOREACH(c, &n->ctrs, entry)
	if (c->state == RUNTIME__V1__CONTAINER_STATE__CONTAINER_RUNNING && c->exit_at != 0 &&
	    t >= c->exit_at)
		ctr_exit(c, c->plan_code, NULL, c->exit_at);
}

/* The fake CRI's scripts: what the container's process does. */
static void
plan(struct ctr *c)
{
	Runtime__V1__ContainerConfig *cfg = c->req->config;
	const char                   *argv[3] = { NULL, NULL, NULL };
	size_t                        na = 0, i;
	const char                   *prog;
	int64_t                       after_ms = -1;

	for (i = 0; i < cfg->n_envs; i++) {
		if (strcmp(cfg->envs[i]->key, "FAKE_EXIT_CODE") == 0) {
			c->plan_code = atoi(cfg->envs[i]->value);
			if (after_ms < 0)
				after_ms = 0;
		} else if (strcmp(cfg->envs[i]->key, "FAKE_EXIT_AFTER_MS") == 0)
			after_ms = atoll(cfg->envs[i]->value);
	}
	for (i = 0; i < cfg->n_command && na < 3; i++)
		argv[na++] = cfg->command[i];
	for (i = 0; i < cfg->n_args && na < 3; i++)
		argv[na++] = cfg->args[i];
	if (na > 0) {
		prog = strrchr(argv[0], '/') != NULL ? strrchr(argv[0], '/') + 1 : argv[0];
		if (strcmp(prog, "fake-exit") == 0) {
			c->plan_code = argv[1] != NULL ? atoi(argv[1]) : 0;
			after_ms = argv[1] != NULL && argv[2] != NULL ? atoll(argv[2]) : 0;
		} else if (strcmp(prog, "true") == 0 || strcmp(prog, "false") == 0) {
			c->plan_code = prog[0] == 'f';
			after_ms = 0;
		} else if (strcmp(prog, "sleep") == 0 && argv[1] != NULL &&
		    strcmp(argv[1], "inf") != 0 && strcmp(argv[1], "infinity") != 0) {
			c->plan_code = 0;
			after_ms = (int64_t)(atof(argv[1]) * 1000);
		}
	}
	c->plan_exits = after_ms >= 0;
	c->exit_at = after_ms >= 0 ? after_ms : 0; /* relative until started */
}

static int
labels_match(size_t n_have, Runtime__V1__PodSandbox__LabelsEntry **have, size_t n_sel,
    Runtime__V1__PodSandboxFilter__LabelSelectorEntry **sel)
{
	size_t i, j;

	for (i = 0; i < n_sel; i++) {
		for (j = 0; j < n_have; j++)
			if (strcmp(have[j]->key, sel[i]->key) == 0 &&
			    strcmp(have[j]->value, sel[i]->value) == 0)
				break;
		if (j == n_have)
			return 0;
	}
	return 1;
}

/* The map entry types of the messages are laid out alike (base, key, value) and packed by
 * their own descriptor: the config's entries serve every message's labels. */
#define ENTRIES(p) ((void *)(p))

/* ---- RuntimeService ---- */

static void
h_version(struct node *n, void *rq, struct out *o)
{
	Runtime__V1__VersionResponse r = RUNTIME__V1__VERSION_RESPONSE__INIT;

	(void)n;
	(void)rq;
	r.version = "0.1.0";
	r.runtime_name = "scalecri";
	r.runtime_version = "1.0.0";
	r.runtime_api_version = "v1";
	pack(o, &r.base);
}

static void
h_status(struct node *n, void *rq, struct out *o)
{
	Runtime__V1__StatusResponse    r = RUNTIME__V1__STATUS_RESPONSE__INIT;
	Runtime__V1__RuntimeStatus     st = RUNTIME__V1__RUNTIME_STATUS__INIT;
	Runtime__V1__RuntimeCondition  c1 = RUNTIME__V1__RUNTIME_CONDITION__INIT;
	Runtime__V1__RuntimeCondition  c2 = RUNTIME__V1__RUNTIME_CONDITION__INIT;
	Runtime__V1__RuntimeCondition *cs[2] = { &c1, &c2 };
	Runtime__V1__RuntimeHandler    h = RUNTIME__V1__RUNTIME_HANDLER__INIT;
	Runtime__V1__RuntimeHandler   *hs[1] = { &h };

	(void)n;
	(void)rq;
	c1.type = "RuntimeReady";
	c1.status = 1;
	c2.type = "NetworkReady";
	c2.status = 1;
	st.n_conditions = 2;
	st.conditions = cs;
	r.status = &st;
	r.n_runtime_handlers = 1;
	r.runtime_handlers = hs;
	pack(o, &r.base);
}

static void
h_run_sb(struct node *n, void *rq, struct out *o)
{
	Runtime__V1__RunPodSandboxRequest *q = rq;
	Runtime__V1__RunPodSandboxResponse r = RUNTIME__V1__RUN_POD_SANDBOX_RESPONSE__INIT;
	Runtime__V1__PodSandboxMetadata   *md = q->config != NULL ? q->config->metadata : NULL;
	struct sb                         *s;

	if (md == NULL || md->name[0] == '\0' || md->namespace_[0] == '\0' || md->uid[0] == '\0') {
		fail(o, GRPC_INVALID_ARGUMENT,
		    "sandbox config must include metadata name, uid and namespace");
		return;
	}
	if (q->runtime_handler[0] != '\0' && strcmp(q->runtime_handler, "runc") != 0) {
		fail(o, GRPC_UNKNOWN,
		    "failed to get sandbox runtime: no runtime for \"%s\" is configured",
		    q->runtime_handler);
		return;
	}
	TAILQ_FOREACH(s, &n->sbs, entry)
	{
		Runtime__V1__PodSandboxMetadata *m = s->req->config->metadata;

		if (strcmp(m->name, md->name) == 0 && strcmp(m->namespace_, md->namespace_) == 0 &&
		    strcmp(m->uid, md->uid) == 0 && m->attempt == md->attempt) {
			fail(o, GRPC_UNKNOWN,
			    "failed to reserve sandbox name \"%s_%s_%s_%u\": name is reserved for "
			    "\"%s\"",
			    md->name, md->namespace_, md->uid, md->attempt, s->id);
			return;
		}
	}
	s = xcalloc(1, sizeof(*s));
	new_id(n, s->id);
	s->req = q;
	s->state = RUNTIME__V1__POD_SANDBOX_STATE__SANDBOX_READY;
	s->created = now_wall_ns();
	if (q->config->linux != NULL && q->config->linux->security_context != NULL &&
	    q->config->linux->security_context->namespace_options != NULL &&
	    q->config->linux->security_context->namespace_options->network ==
	        RUNTIME__V1__NAMESPACE_MODE__NODE)
		s->ip[0] = '\0';
	else
		snprintf(s->ip, sizeof(s->ip), "10.%d.%d.%d", 100 + n->idx / 256, n->idx % 256,
		    (int)(n->seq % 250) + 2);
	TAILQ_INSERT_TAIL(&n->sbs, s, entry);
	r.pod_sandbox_id = s->id;
	pack(o, &r.base);
}

static void
sb_stop(struct node *n, struct sb *s)
{
	struct ctr *c;

	TAILQ_FOREACH(c, &n->ctrs, entry)
	if (c->sb == s && c->state == RUNTIME__V1__CONTAINER_STATE__CONTAINER_RUNNING)
		ctr_exit(c, 137, "Error", 0);
	s->state = RUNTIME__V1__POD_SANDBOX_STATE__SANDBOX_NOTREADY;
}

static void
h_stop_sb(struct node *n, void *rq, struct out *o)
{
	Runtime__V1__StopPodSandboxRequest *q = rq;
	Runtime__V1__StopPodSandboxResponse r = RUNTIME__V1__STOP_POD_SANDBOX_RESPONSE__INIT;
	struct sb                          *s = find_sb(n, q->pod_sandbox_id, o);

	if (s == NULL)
		return;
	sb_stop(n, s);
	pack(o, &r.base);
}

static void
ctr_free(struct node *n, struct ctr *c)
{
	TAILQ_REMOVE(&n->ctrs, c, entry);
	runtime__v1__create_container_request__free_unpacked(c->req, NULL);
	free(c->reason);
	free(c->log_path);
	free(c->image_id);
	free(c);
}

static void
h_remove_sb(struct node *n, void *rq, struct out *o)
{
	Runtime__V1__RemovePodSandboxRequest *q = rq;
	Runtime__V1__RemovePodSandboxResponse r = RUNTIME__V1__REMOVE_POD_SANDBOX_RESPONSE__INIT;
	struct sb                            *s = find_sb(n, q->pod_sandbox_id, o);
	struct ctr                           *c, *next;

	if (s == NULL) {
		if (o->code == GRPC_NOT_FOUND)
			pack(o, &r.base); /* removing what is gone succeeds */
		return;
	}
	for (c = TAILQ_FIRST(&n->ctrs); c != NULL; c = next) {
		next = TAILQ_NEXT(c, entry);
		if (c->sb == s)
			ctr_free(n, c);
	}
	TAILQ_REMOVE(&n->sbs, s, entry);
	runtime__v1__run_pod_sandbox_request__free_unpacked(s->req, NULL);
	free(s);
	pack(o, &r.base);
}

static void
h_sb_status(struct node *n, void *rq, struct out *o)
{
	Runtime__V1__PodSandboxStatusRequest *q = rq;
	Runtime__V1__PodSandboxStatusResponse r = RUNTIME__V1__POD_SANDBOX_STATUS_RESPONSE__INIT;
	Runtime__V1__PodSandboxStatus         st = RUNTIME__V1__POD_SANDBOX_STATUS__INIT;
	Runtime__V1__PodSandboxNetworkStatus  net = RUNTIME__V1__POD_SANDBOX_NETWORK_STATUS__INIT;
	Runtime__V1__LinuxPodSandboxStatus    lx = RUNTIME__V1__LINUX_POD_SANDBOX_STATUS__INIT;
	Runtime__V1__Namespace                ns = RUNTIME__V1__NAMESPACE__INIT;
	struct sb                            *s = find_sb(n, q->pod_sandbox_id, o);
	Runtime__V1__PodSandboxConfig        *cfg;

	if (s == NULL)
		return;
	cfg = s->req->config;
	st.id = s->id;
	st.metadata = cfg->metadata;
	st.state = s->state;
	st.created_at = s->created;
	net.ip = s->ip;
	st.network = &net;
	if (cfg->linux != NULL && cfg->linux->security_context != NULL)
		ns.options = cfg->linux->security_context->namespace_options;
	lx.namespaces = &ns;
	st.linux = &lx;
	st.n_labels = cfg->n_labels;
	st.labels = ENTRIES(cfg->labels);
	st.n_annotations = cfg->n_annotations;
	st.annotations = ENTRIES(cfg->annotations);
	st.runtime_handler = s->req->runtime_handler;
	r.status = &st;
	r.timestamp = now_wall_ns();
	pack(o, &r.base);
}

static void
h_list_sb(struct node *n, void *rq, struct out *o)
{
	Runtime__V1__ListPodSandboxRequest *q = rq;
	Runtime__V1__ListPodSandboxResponse r = RUNTIME__V1__LIST_POD_SANDBOX_RESPONSE__INIT;
	Runtime__V1__PodSandboxFilter      *f = q->filter;
	Runtime__V1__PodSandbox            *items, **ptrs;
	struct sb                          *s;
	size_t                              cnt = 0, k = 0;

	TAILQ_FOREACH(s, &n->sbs, entry)
	cnt++;
	items = xcalloc(cnt + 1, sizeof(*items));
	ptrs = xcalloc(cnt + 1, sizeof(*ptrs));
	TAILQ_FOREACH(s, &n->sbs, entry)
	{
		Runtime__V1__PodSandboxConfig *cfg = s->req->config;
		Runtime__V1__PodSandbox       *it = &items[k];

		if (f != NULL && f->id[0] != '\0' && strncmp(s->id, f->id, strlen(f->id)) != 0)
			continue;
		if (f != NULL && f->state != NULL && (int)f->state->state != s->state)
			continue;
		if (f != NULL &&
		    !labels_match(cfg->n_labels, ENTRIES(cfg->labels), f->n_label_selector,
		        f->label_selector))
			continue;
		runtime__v1__pod_sandbox__init(it);
		it->id = s->id;
		it->metadata = cfg->metadata;
		it->state = s->state;
		it->created_at = s->created;
		it->n_labels = cfg->n_labels;
		it->labels = ENTRIES(cfg->labels);
		it->n_annotations = cfg->n_annotations;
		it->annotations = ENTRIES(cfg->annotations);
		it->runtime_handler = s->req->runtime_handler;
		ptrs[k++] = it;
	}
	r.n_items = k;
	r.items = ptrs;
	pack(o, &r.base);
	free(items);
	free(ptrs);
}

static void
h_create(struct node *n, void *rq, struct out *o)
{
	Runtime__V1__CreateContainerRequest *q = rq;
	Runtime__V1__CreateContainerResponse r = RUNTIME__V1__CREATE_CONTAINER_RESPONSE__INIT;
	Runtime__V1__ContainerConfig        *cfg = q->config;
	struct sb                           *s = find_sb(n, q->pod_sandbox_id, o);
	struct image                        *im;
	struct ctr                          *c;

	if (s == NULL)
		return;
	if (s->state != RUNTIME__V1__POD_SANDBOX_STATE__SANDBOX_READY) {
		fail(o, GRPC_UNKNOWN,
		    "failed to create containerd container: sandbox \"%s\" is not running", s->id);
		return;
	}
	if (cfg == NULL || cfg->metadata == NULL || cfg->metadata->name[0] == '\0') {
		fail(o, GRPC_INVALID_ARGUMENT, "container config must include metadata");
		return;
	}
	im = find_image(n, cfg->image != NULL ? cfg->image->image : NULL);
	if (im == NULL) {
		fail(o, GRPC_NOT_FOUND,
		    "failed to create containerd container: failed to get image \"%s\": not found",
		    cfg->image != NULL ? cfg->image->image : "");
		return;
	}
	TAILQ_FOREACH(c, &n->ctrs, entry)
	{
		Runtime__V1__ContainerMetadata *m = c->req->config->metadata;

		if (c->sb == s && strcmp(m->name, cfg->metadata->name) == 0 &&
		    m->attempt == cfg->metadata->attempt) {
			fail(o, GRPC_UNKNOWN,
			    "failed to reserve container name \"%s_%u\": name is reserved for \"%s\"",
			    m->name, m->attempt, c->id);
			return;
		}
	}
	c = xcalloc(1, sizeof(*c));
	new_id(n, c->id);
	c->sb = s;
	c->req = q;
	c->state = RUNTIME__V1__CONTAINER_STATE__CONTAINER_CREATED;
	c->created = now_wall_ns();
	c->reason = xstrdup("");
	c->image_id = xstrdup(im->id);
	if (s->req->config->log_directory[0] != '\0' && cfg->log_path[0] != '\0')
		c->log_path = xsprintf("%s/%s", s->req->config->log_directory, cfg->log_path);
	else
		c->log_path = xstrdup("");
	plan(c);
	TAILQ_INSERT_TAIL(&n->ctrs, c, entry);
	r.container_id = c->id;
	pack(o, &r.base);
}

static void
h_start(struct node *n, void *rq, struct out *o)
{
	Runtime__V1__StartContainerRequest *q = rq;
	Runtime__V1__StartContainerResponse r = RUNTIME__V1__START_CONTAINER_RESPONSE__INIT;
	struct ctr                         *c = find_ctr(n, q->container_id, o);

	if (c == NULL)
		return;
	if (c->state != RUNTIME__V1__CONTAINER_STATE__CONTAINER_CREATED) {
		fail(o, GRPC_UNKNOWN, "container \"%s\" is not in created state", c->id);
		return;
	}
	if (c->sb->state != RUNTIME__V1__POD_SANDBOX_STATE__SANDBOX_READY) {
		fail(o, GRPC_UNKNOWN, "sandbox container \"%s\" is not running", c->sb->id);
		return;
	}
	c->state = RUNTIME__V1__CONTAINER_STATE__CONTAINER_RUNNING;
	c->started = now_wall_ns();
	if (c->plan_exits)
		c->exit_at = c->started + c->exit_at * 1000000;
	reap(n);
	pack(o, &r.base);
}

static void
h_stop(struct node *n, void *rq, struct out *o)
{
	Runtime__V1__StopContainerRequest *q = rq;
	Runtime__V1__StopContainerResponse r = RUNTIME__V1__STOP_CONTAINER_RESPONSE__INIT;
	struct ctr                        *c = find_ctr(n, q->container_id, o);

	if (c == NULL)
		return;
	reap(n);
	if (c->state == RUNTIME__V1__CONTAINER_STATE__CONTAINER_RUNNING)
		ctr_exit(c, 143, "Error", 0); /* SIGTERM honoured at once */
	pack(o, &r.base);
}

static void
h_remove(struct node *n, void *rq, struct out *o)
{
	Runtime__V1__RemoveContainerRequest *q = rq;
	Runtime__V1__RemoveContainerResponse r = RUNTIME__V1__REMOVE_CONTAINER_RESPONSE__INIT;
	struct ctr                          *c = find_ctr(n, q->container_id, o);

	if (c == NULL) {
		if (o->code == GRPC_NOT_FOUND)
			pack(o, &r.base);
		return;
	}
	ctr_free(n, c);
	pack(o, &r.base);
}

static void
h_list(struct node *n, void *rq, struct out *o)
{
	Runtime__V1__ListContainersRequest *q = rq;
	Runtime__V1__ListContainersResponse r = RUNTIME__V1__LIST_CONTAINERS_RESPONSE__INIT;
	Runtime__V1__ContainerFilter       *f = q->filter;
	Runtime__V1__Container             *items, **ptrs;
	Runtime__V1__ImageSpec             *specs;
	struct ctr                         *c;
	size_t                              cnt = 0, k = 0;

	reap(n);
	TAILQ_FOREACH(c, &n->ctrs, entry)
	cnt++;
	items = xcalloc(cnt + 1, sizeof(*items));
	ptrs = xcalloc(cnt + 1, sizeof(*ptrs));
	specs = xcalloc(cnt + 1, sizeof(*specs));
	TAILQ_FOREACH(c, &n->ctrs, entry)
	{
		Runtime__V1__ContainerConfig *cfg = c->req->config;
		Runtime__V1__Container       *it = &items[k];

		if (f != NULL && f->id[0] != '\0' && strncmp(c->id, f->id, strlen(f->id)) != 0)
			continue;
		if (f != NULL && f->pod_sandbox_id[0] != '\0' &&
		    strncmp(c->sb->id, f->pod_sandbox_id, strlen(f->pod_sandbox_id)) != 0)
			continue;
		if (f != NULL && f->state != NULL && (int)f->state->state != c->state)
			continue;
		if (f != NULL &&
		    !labels_match(cfg->n_labels, ENTRIES(cfg->labels), f->n_label_selector,
		        ENTRIES(f->label_selector)))
			continue;
		runtime__v1__container__init(it);
		runtime__v1__image_spec__init(&specs[k]);
		specs[k].image = cfg->image->image;
		it->id = c->id;
		it->pod_sandbox_id = c->sb->id;
		it->metadata = cfg->metadata;
		it->image = &specs[k];
		it->image_ref = c->image_id;
		it->image_id = c->image_id;
		it->state = c->state;
		it->created_at = c->created;
		it->n_labels = cfg->n_labels;
		it->labels = ENTRIES(cfg->labels);
		it->n_annotations = cfg->n_annotations;
		it->annotations = ENTRIES(cfg->annotations);
		ptrs[k++] = it;
	}
	r.n_containers = k;
	r.containers = ptrs;
	pack(o, &r.base);
	free(items);
	free(ptrs);
	free(specs);
}

static void
h_status_c(struct node *n, void *rq, struct out *o)
{
	Runtime__V1__ContainerStatusRequest *q = rq;
	Runtime__V1__ContainerStatusResponse r = RUNTIME__V1__CONTAINER_STATUS_RESPONSE__INIT;
	Runtime__V1__ContainerStatus         st = RUNTIME__V1__CONTAINER_STATUS__INIT;
	Runtime__V1__ImageSpec               spec = RUNTIME__V1__IMAGE_SPEC__INIT;
	struct ctr                          *c;
	Runtime__V1__ContainerConfig        *cfg;
	struct image                        *im;

	reap(n);
	if ((c = find_ctr(n, q->container_id, o)) == NULL)
		return;
	cfg = c->req->config;
	im = find_image(n, c->image_id);
	st.id = c->id;
	st.metadata = cfg->metadata;
	st.state = c->state;
	st.created_at = c->created;
	st.started_at = c->started;
	st.finished_at = c->finished;
	st.exit_code = c->exit_code;
	spec.image = im != NULL ? im->name : cfg->image->image;
	st.image = &spec;
	st.image_ref = im != NULL ? im->digest : c->image_id;
	st.image_id = c->image_id;
	st.reason = c->reason;
	st.message = "";
	st.n_labels = cfg->n_labels;
	st.labels = ENTRIES(cfg->labels);
	st.n_annotations = cfg->n_annotations;
	st.annotations = ENTRIES(cfg->annotations);
	st.n_mounts = cfg->n_mounts;
	st.mounts = cfg->mounts;
	st.log_path = c->log_path;
	r.status = &st;
	pack(o, &r.base);
}

static void
h_update(struct node *n, void *rq, struct out *o)
{
	Runtime__V1__UpdateContainerResourcesRequest *q = rq;
	Runtime__V1__UpdateContainerResourcesResponse r =
	    RUNTIME__V1__UPDATE_CONTAINER_RESOURCES_RESPONSE__INIT;
	struct ctr *c = find_ctr(n, q->container_id, o);

	if (c == NULL)
		return;
	if (c->state != RUNTIME__V1__CONTAINER_STATE__CONTAINER_CREATED &&
	    c->state != RUNTIME__V1__CONTAINER_STATE__CONTAINER_RUNNING) {
		fail(o, GRPC_UNKNOWN, "container \"%s\" is in CONTAINER_EXITED state", c->id);
		return;
	}
	pack(o, &r.base);
}

static void
h_reopen(struct node *n, void *rq, struct out *o)
{
	Runtime__V1__ReopenContainerLogRequest *q = rq;
	Runtime__V1__ReopenContainerLogResponse r =
	    RUNTIME__V1__REOPEN_CONTAINER_LOG_RESPONSE__INIT;
	struct ctr *c = find_ctr(n, q->container_id, o);

	if (c == NULL)
		return;
	reap(n);
	if (c->state != RUNTIME__V1__CONTAINER_STATE__CONTAINER_RUNNING) {
		fail(o, GRPC_UNKNOWN, "container is not running");
		return;
	}
	pack(o, &r.base);
}

static void
h_exec(struct node *n, void *rq, struct out *o)
{
	Runtime__V1__ExecSyncRequest *q = rq;
	Runtime__V1__ExecSyncResponse r = RUNTIME__V1__EXEC_SYNC_RESPONSE__INIT;
	struct ctr                   *c = find_ctr(n, q->container_id, o);
	const char                   *prog;

	if (c == NULL)
		return;
	reap(n);
	if (c->state != RUNTIME__V1__CONTAINER_STATE__CONTAINER_RUNNING) {
		fail(o, GRPC_UNKNOWN, "failed to exec in container: container is in %s state",
		    c->state == RUNTIME__V1__CONTAINER_STATE__CONTAINER_CREATED
		        ? "CONTAINER_CREATED"
		        : "CONTAINER_EXITED");
		return;
	}
	prog = q->n_cmd > 0 ? q->cmd[0] : "";
	if (strrchr(prog, '/') != NULL)
		prog = strrchr(prog, '/') + 1;
	if (strcmp(prog, "false") == 0)
		r.exit_code = 1;
	else if (strcmp(prog, "fake-exec") == 0 && q->n_cmd > 1)
		r.exit_code = atoi(q->cmd[1]);
	pack(o, &r.base);
}

/* ---- ImageService ---- */

static void
h_list_images(struct node *n, void *rq, struct out *o)
{
	Runtime__V1__ListImagesRequest *q = rq;
	Runtime__V1__ListImagesResponse r = RUNTIME__V1__LIST_IMAGES_RESPONSE__INIT;
	Runtime__V1__Image             *ims = xcalloc(n->n_images + 1, sizeof(*ims));
	Runtime__V1__ImageSpec         *specs = xcalloc(n->n_images + 1, sizeof(*specs));
	Runtime__V1__Image            **ptrs = xcalloc(n->n_images + 1, sizeof(*ptrs));
	struct image                   *want = NULL;
	size_t                          i, k = 0;

	if (q->filter != NULL && q->filter->image != NULL && q->filter->image->image[0] != '\0')
		want = find_image(n, q->filter->image->image);
	for (i = 0; i < n->n_images; i++) {
		if (q->filter != NULL && q->filter->image != NULL &&
		    q->filter->image->image[0] != '\0' && want != &n->images[i])
			continue;
		image_pb(&n->images[i], &ims[k], &specs[k]);
		ptrs[k] = &ims[k];
		k++;
	}
	r.n_images = k;
	r.images = ptrs;
	pack(o, &r.base);
	free(ims);
	free(specs);
	free(ptrs);
}

static void
h_image_status(struct node *n, void *rq, struct out *o)
{
	Runtime__V1__ImageStatusRequest *q = rq;
	Runtime__V1__ImageStatusResponse r = RUNTIME__V1__IMAGE_STATUS_RESPONSE__INIT;
	Runtime__V1__Image               im = RUNTIME__V1__IMAGE__INIT;
	Runtime__V1__ImageSpec           spec = RUNTIME__V1__IMAGE_SPEC__INIT;
	struct image *found = find_image(n, q->image != NULL ? q->image->image : NULL);

	if (found != NULL) {
		image_pb(found, &im, &spec);
		r.image = &im;
	}
	pack(o, &r.base);
}

static void
h_pull(struct node *n, void *rq, struct out *o)
{
	Runtime__V1__PullImageRequest *q = rq;
	Runtime__V1__PullImageResponse r = RUNTIME__V1__PULL_IMAGE_RESPONSE__INIT;
	const char                    *ref = q->image != NULL ? q->image->image : "";
	struct image                  *im;

	if (ref[0] == '\0') {
		fail(o, GRPC_INVALID_ARGUMENT, "image reference is empty");
		return;
	}
	if ((im = find_image(n, ref)) == NULL)
		im = add_image(n, ref); /* every name pulls */
	r.image_ref = im->id;
	pack(o, &r.base);
}

static void
h_remove_image(struct node *n, void *rq, struct out *o)
{
	Runtime__V1__RemoveImageRequest *q = rq;
	Runtime__V1__RemoveImageResponse r = RUNTIME__V1__REMOVE_IMAGE_RESPONSE__INIT;
	struct image *im = find_image(n, q->image != NULL ? q->image->image : NULL);

	if (im != NULL) {
		size_t i = (size_t)(im - n->images);

		free(im->name);
		free(im->id);
		free(im->digest);
		memmove(&n->images[i], &n->images[i + 1], (n->n_images - i - 1) * sizeof(*im));
		n->n_images--;
	}
	pack(o, &r.base);
}

static void
h_image_fs(struct node *n, void *rq, struct out *o)
{
	Runtime__V1__ImageFsInfoResponse  r = RUNTIME__V1__IMAGE_FS_INFO_RESPONSE__INIT;
	Runtime__V1__FilesystemUsage      fs = RUNTIME__V1__FILESYSTEM_USAGE__INIT;
	Runtime__V1__FilesystemUsage     *fss[1] = { &fs };
	Runtime__V1__FilesystemIdentifier id = RUNTIME__V1__FILESYSTEM_IDENTIFIER__INIT;
	Runtime__V1__UInt64Value          used = RUNTIME__V1__UINT64_VALUE__INIT;
	Runtime__V1__UInt64Value          inodes = RUNTIME__V1__UINT64_VALUE__INIT;

	(void)rq;
	id.mountpoint = "/var/lib/scalecri/overlayfs";
	fs.timestamp = now_wall_ns();
	fs.fs_id = &id;
	used.value = (uint64_t)n->n_images << 20;
	inodes.value = n->n_images * 100;
	fs.used_bytes = &used;
	fs.inodes_used = &inodes;
	r.n_image_filesystems = 1;
	r.image_filesystems = fss;
	pack(o, &r.base);
}

/* ---- dispatch ---- */

struct method {
	const char                       *path;
	const char                       *name;
	const ProtobufCMessageDescriptor *desc;
	void (*fn)(struct node *, void *, struct out *);
	int keep; /* the record keeps the request (RunPodSandbox, CreateContainer) */
};

#define RS "/runtime.v1.RuntimeService/"
#define IS "/runtime.v1.ImageService/"
static const struct method methods[M_COUNT] = {
	[M_VERSION] = { RS "Version", "Version", &runtime__v1__version_request__descriptor,
	    h_version, 0 },
	[M_STATUS] = { RS "Status", "Status", &runtime__v1__status_request__descriptor, h_status,
	    0 },
	[M_RUN_SB] = { RS "RunPodSandbox", "RunPodSandbox",
	    &runtime__v1__run_pod_sandbox_request__descriptor, h_run_sb, 1 },
	[M_STOP_SB] = { RS "StopPodSandbox", "StopPodSandbox",
	    &runtime__v1__stop_pod_sandbox_request__descriptor, h_stop_sb, 0 },
	[M_REMOVE_SB] = { RS "RemovePodSandbox", "RemovePodSandbox",
	    &runtime__v1__remove_pod_sandbox_request__descriptor, h_remove_sb, 0 },
	[M_SB_STATUS] = { RS "PodSandboxStatus", "PodSandboxStatus",
	    &runtime__v1__pod_sandbox_status_request__descriptor, h_sb_status, 0 },
	[M_LIST_SB] = { RS "ListPodSandbox", "ListPodSandbox",
	    &runtime__v1__list_pod_sandbox_request__descriptor, h_list_sb, 0 },
	[M_CREATE] = { RS "CreateContainer", "CreateContainer",
	    &runtime__v1__create_container_request__descriptor, h_create, 1 },
	[M_START] = { RS "StartContainer", "StartContainer",
	    &runtime__v1__start_container_request__descriptor, h_start, 0 },
	[M_STOP] = { RS "StopContainer", "StopContainer",
	    &runtime__v1__stop_container_request__descriptor, h_stop, 0 },
	[M_REMOVE] = { RS "RemoveContainer", "RemoveContainer",
	    &runtime__v1__remove_container_request__descriptor, h_remove, 0 },
	[M_LIST] = { RS "ListContainers", "ListContainers",
	    &runtime__v1__list_containers_request__descriptor, h_list, 0 },
	[M_STATUS_C] = { RS "ContainerStatus", "ContainerStatus",
	    &runtime__v1__container_status_request__descriptor, h_status_c, 0 },
	[M_UPDATE] = { RS "UpdateContainerResources", "UpdateContainerResources",
	    &runtime__v1__update_container_resources_request__descriptor, h_update, 0 },
	[M_REOPEN] = { RS "ReopenContainerLog", "ReopenContainerLog",
	    &runtime__v1__reopen_container_log_request__descriptor, h_reopen, 0 },
	[M_EXEC] = { RS "ExecSync", "ExecSync", &runtime__v1__exec_sync_request__descriptor, h_exec,
	    0 },
	[M_LIST_IMAGES] = { IS "ListImages", "ListImages",
	    &runtime__v1__list_images_request__descriptor, h_list_images, 0 },
	[M_IMAGE_STATUS] = { IS "ImageStatus", "ImageStatus",
	    &runtime__v1__image_status_request__descriptor, h_image_status, 0 },
	[M_PULL] = { IS "PullImage", "PullImage", &runtime__v1__pull_image_request__descriptor,
	    h_pull, 0 },
	[M_REMOVE_IMAGE] = { IS "RemoveImage", "RemoveImage",
	    &runtime__v1__remove_image_request__descriptor, h_remove_image, 0 },
	[M_IMAGE_FS] = { IS "ImageFsInfo", "ImageFsInfo",
	    &runtime__v1__image_fs_info_request__descriptor, h_image_fs, 0 },
};

/* ---- HTTP/2 ---- */

static void
req_free(struct req *rq)
{
	LIST_REMOVE(rq, entry);
	if (rq->timer != NULL)
		event_free(rq->timer);
	free(rq->in);
	free(rq->out);
	free(rq);
}

static void
conn_free(struct conn *c)
{
	while (!LIST_EMPTY(&c->reqs))
		req_free(LIST_FIRST(&c->reqs));
	LIST_REMOVE(c, entry);
	bufferevent_free(c->bev);
	nghttp2_session_del(c->ng);
	free(c);
}

static ssize_t
body_read(nghttp2_session *ng, int32_t id, uint8_t *buf, size_t length, uint32_t *flags,
    nghttp2_data_source *src, void *ud)
{
	struct req *rq = src->ptr;
	size_t      n = rq->out_len - rq->out_off;

	(void)ud;
	if (n > length)
		n = length;
	memcpy(buf, rq->out + rq->out_off, n);
	rq->out_off += n;
	if (rq->out_off == rq->out_len) {
		nghttp2_nv tr[1] = { { (uint8_t *)"grpc-status", (uint8_t *)"0", 11, 1,
		    NGHTTP2_NV_FLAG_NONE } };

		*flags |= NGHTTP2_DATA_FLAG_EOF | NGHTTP2_DATA_FLAG_NO_END_STREAM;
		nghttp2_submit_trailer(ng, id, tr, 1);
	}
	return (ssize_t)n;
}

#define NV(n, v, vl)                                                                               \
	{                                                                                          \
		(uint8_t *)(n), (uint8_t *)(v), sizeof(n) - 1, (vl), NGHTTP2_NV_FLAG_NONE          \
	}

static void
respond_error(struct req *rq, int code, const char *msg)
{
	char        st[8], enc[1600];
	size_t      i, k = 0;
	nghttp2_nv *h;

	snprintf(st, sizeof(st), "%d", code);
	for (i = 0; msg[i] != '\0' && k + 4 < sizeof(enc); i++) {
		unsigned char ch = (unsigned char)msg[i];

		if (ch < 0x20 || ch > 0x7e || ch == '%') {
			snprintf(enc + k, 4, "%%%02X", ch);
			k += 3;
		} else
			enc[k++] = (char)ch;
	}
	enc[k] = '\0';
	{
		nghttp2_nv hs[] = { NV(":status", "200", 3),
			NV("content-type", "application/grpc", 16),
			NV("grpc-status", st, strlen(st)), NV("grpc-message", enc, k) };

		h = hs;
		nghttp2_submit_response(rq->c->ng, rq->id, h, nitems(hs), NULL);
	}
}

static void
handle_now(struct req *rq)
{
	struct node          *n = rq->c->node;
	const struct method  *m = NULL;
	ProtobufCMessage     *msg = NULL;
	const uint8_t        *payload;
	size_t                plen;
	const char           *err;
	struct out            o;
	int                   code, i;
	nghttp2_data_provider prd;
	nghttp2_nv h[] = { NV(":status", "200", 3), NV("content-type", "application/grpc", 16) };

	for (i = 0; i < M_COUNT; i++)
		if (strcmp(rq->path, methods[i].path) == 0) {
			m = &methods[i];
			n->calls[i]++;
			break;
		}
	if (m == NULL) {
		respond_error(rq, GRPC_UNIMPLEMENTED, "unknown method");
		return;
	}
	code = grpc_frame_parse(rq->in != NULL ? rq->in : (const uint8_t *)"", rq->in_len, MAX_MSG,
	    &payload, &plen, &err);
	if (code != GRPC_OK) {
		respond_error(rq, code, err);
		return;
	}
	msg = protobuf_c_message_unpack(m->desc, NULL, plen, payload);
	if (msg == NULL) {
		respond_error(rq, GRPC_INTERNAL, "grpc: error unmarshalling request");
		return;
	}
	memset(&o, 0, sizeof(o));
	o.code = -1;
	m->fn(n, msg, &o);
	if (!m->keep || o.code != GRPC_OK)
		protobuf_c_message_free_unpacked(msg, NULL);
	if (o.code != GRPC_OK) {
		respond_error(rq, o.code < 0 ? GRPC_INTERNAL : o.code, o.msg);
		free(o.buf);
		return;
	}
	rq->out = xmalloc(o.len + 5);
	grpc_frame_header(rq->out, (uint32_t)o.len);
	memcpy(rq->out + 5, o.buf, o.len);
	rq->out_len = o.len + 5;
	free(o.buf);
	prd.source.ptr = rq;
	prd.read_callback = body_read;
	nghttp2_submit_response(rq->c->ng, rq->id, h, nitems(h), &prd);
}

static void
delayed_cb(evutil_socket_t fd, short what, void *arg)
{
	struct req *rq = arg;

	(void)fd;
	(void)what;
	handle_now(rq);
	conn_flush(rq->c);
}

static void
handle(struct req *rq)
{
	struct node *n = rq->c->node;

	if (n->delay_ms > 0) {
		struct timeval tv = ms_to_tv(n->delay_ms);

		rq->timer = evtimer_new(base, delayed_cb, rq);
		evtimer_add(rq->timer, &tv);
		return;
	}
	handle_now(rq);
}

static int
on_begin_headers(nghttp2_session *ng, const nghttp2_frame *f, void *ud)
{
	struct conn *c = ud;
	struct req  *rq;

	if (f->hd.type != NGHTTP2_HEADERS || f->headers.cat != NGHTTP2_HCAT_REQUEST)
		return 0;
	rq = xcalloc(1, sizeof(*rq));
	rq->c = c;
	rq->id = f->hd.stream_id;
	LIST_INSERT_HEAD(&c->reqs, rq, entry);
	nghttp2_session_set_stream_user_data(ng, rq->id, rq);
	return 0;
}

static int
on_header(nghttp2_session *ng, const nghttp2_frame *f, const uint8_t *name, size_t nl,
    const uint8_t *v, size_t vl, uint8_t flags, void *ud)
{
	struct req *rq = nghttp2_session_get_stream_user_data(ng, f->hd.stream_id);

	(void)flags;
	(void)ud;
	if (rq != NULL && nl == 5 && memcmp(name, ":path", 5) == 0)
		snprintf(rq->path, sizeof(rq->path), "%.*s", (int)vl, v);
	return 0;
}

static int
on_data(nghttp2_session *ng, uint8_t flags, int32_t id, const uint8_t *data, size_t len, void *ud)
{
	struct req *rq = nghttp2_session_get_stream_user_data(ng, id);

	(void)flags;
	(void)ud;
	if (rq == NULL)
		return 0;
	if (rq->in_len + len > MAX_MSG + 5)
		return nghttp2_submit_rst_stream(ng, NGHTTP2_FLAG_NONE, id, NGHTTP2_REFUSED_STREAM);
	rq->in = xreallocarray(rq->in, rq->in_len + len + 1, 1);
	memcpy(rq->in + rq->in_len, data, len);
	rq->in_len += len;
	return 0;
}

static int
on_frame(nghttp2_session *ng, const nghttp2_frame *f, void *ud)
{
	struct req *rq;

	(void)ud;
	if ((f->hd.type == NGHTTP2_HEADERS || f->hd.type == NGHTTP2_DATA) &&
	    (f->hd.flags & NGHTTP2_FLAG_END_STREAM) &&
	    (rq = nghttp2_session_get_stream_user_data(ng, f->hd.stream_id)) != NULL)
		handle(rq);
	return 0;
}

static int
on_close(nghttp2_session *ng, int32_t id, uint32_t code, void *ud)
{
	struct req *rq = nghttp2_session_get_stream_user_data(ng, id);

	(void)code;
	(void)ud;
	if (rq != NULL)
		req_free(rq);
	return 0;
}

static void
conn_flush(struct conn *c)
{
	const uint8_t *data;
	ssize_t        n;

	while ((n = nghttp2_session_mem_send(c->ng, &data)) > 0)
		bufferevent_write(c->bev, data, (size_t)n);
}

static void
conn_read(struct bufferevent *bev, void *arg)
{
	struct conn     *c = arg;
	struct evbuffer *in = bufferevent_get_input(bev);
	size_t           len = evbuffer_get_length(in);
	const uint8_t   *d = evbuffer_pullup(in, (ssize_t)len);

	if (nghttp2_session_mem_recv(c->ng, d, len) < 0) {
		conn_free(c);
		return;
	}
	evbuffer_drain(in, len);
	conn_flush(c);
}

static void
conn_write(struct bufferevent *bev, void *arg)
{
	(void)bev;
	conn_flush(arg);
}

static void
conn_event(struct bufferevent *bev, short what, void *arg)
{
	(void)bev;
	if (what & (BEV_EVENT_EOF | BEV_EVENT_ERROR))
		conn_free(arg);
}

static void
on_accept(struct evconnlistener *l, evutil_socket_t fd, struct sockaddr *sa, int salen, void *arg)
{
	struct conn               *c = xcalloc(1, sizeof(*c));
	nghttp2_session_callbacks *cbs;
	nghttp2_settings_entry     iv[1] = { { NGHTTP2_SETTINGS_MAX_CONCURRENT_STREAMS, 1000 } };

	(void)l;
	(void)sa;
	(void)salen;
	c->node = arg;
	LIST_INIT(&c->reqs);
	LIST_INSERT_HEAD(&conns, c, entry);
	c->bev = bufferevent_socket_new(base, fd, BEV_OPT_CLOSE_ON_FREE);
	nghttp2_session_callbacks_new(&cbs);
	nghttp2_session_callbacks_set_on_begin_headers_callback(cbs, on_begin_headers);
	nghttp2_session_callbacks_set_on_header_callback(cbs, on_header);
	nghttp2_session_callbacks_set_on_data_chunk_recv_callback(cbs, on_data);
	nghttp2_session_callbacks_set_on_frame_recv_callback(cbs, on_frame);
	nghttp2_session_callbacks_set_on_stream_close_callback(cbs, on_close);
	nghttp2_session_server_new(&c->ng, cbs, c);
	nghttp2_session_callbacks_del(cbs);
	nghttp2_submit_settings(c->ng, NGHTTP2_FLAG_NONE, iv, 1);
	bufferevent_setcb(c->bev, conn_read, conn_write, conn_event, c);
	bufferevent_enable(c->bev, EV_READ | EV_WRITE);
	conn_flush(c);
}

static struct evconnlistener *
listen_unix(const char *path, evconnlistener_cb cb, void *arg)
{
	struct sockaddr_un sun;

	if (strlen(path) >= sizeof(sun.sun_path)) {
		fprintf(stderr, "scalecri: socket path too long: %s\n", path);
		return NULL;
	}
	unlink(path);
	memset(&sun, 0, sizeof(sun));
	sun.sun_family = AF_UNIX;
	snprintf(sun.sun_path, sizeof(sun.sun_path), "%s", path);
	return evconnlistener_new_bind(base, cb, arg, LEV_OPT_CLOSE_ON_FREE | LEV_OPT_CLOSE_ON_EXEC,
	    128, (struct sockaddr *)&sun, sizeof(sun));
}

/* ---- control ---- */

static void
stats_line(struct evbuffer *out, struct node *only)
{
	int i, k;

	evbuffer_add_printf(out, "{");
	for (i = 0; i < M_COUNT; i++) {
		uint64_t sum = 0;

		for (k = 0; k < n_nodes; k++)
			if (only == NULL || only == &nodes[k])
				sum += nodes[k].calls[i];
		evbuffer_add_printf(
		    out, "%s\"%s\":%llu", i ? "," : "", methods[i].name, (unsigned long long)sum);
	}
	evbuffer_add_printf(out, "}\n");
}

static void
ctl_read(struct bufferevent *bev, void *arg)
{
	struct evbuffer *in = bufferevent_get_input(bev);
	struct evbuffer *out = bufferevent_get_output(bev);
	char            *line;

	(void)arg;
	while ((line = evbuffer_readln(in, NULL, EVBUFFER_EOL_ANY)) != NULL) {
		int       a, b, k;
		long long ms;

		if (sscanf(line, "delay %d %d %lld", &a, &b, &ms) == 3 && a >= 1 && b <= n_nodes &&
		    a <= b && ms >= 0) {
			for (k = a; k <= b; k++)
				nodes[k - 1].delay_ms = ms;
			evbuffer_add_printf(out, "{\"ok\":true}\n");
		} else if (sscanf(line, "stats %d", &a) == 1 && a >= 1 && a <= n_nodes)
			stats_line(out, &nodes[a - 1]);
		else if (strcmp(line, "stats") == 0)
			stats_line(out, NULL);
		else if (strcmp(line, "counts") == 0) {
			long sbs = 0, ctrs = 0, running = 0;

			for (k = 0; k < n_nodes; k++) {
				struct sb  *s;
				struct ctr *c;

				reap(&nodes[k]);
				TAILQ_FOREACH(s, &nodes[k].sbs, entry)
				sbs++;
				TAILQ_FOREACH(c, &nodes[k].ctrs, entry)
				{
					ctrs++;
					running += c->state ==
					    RUNTIME__V1__CONTAINER_STATE__CONTAINER_RUNNING;
				}
			}
			evbuffer_add_printf(out,
			    "{\"sandboxes\":%ld,\"containers\":%ld,\"running\":%ld}\n", sbs, ctrs,
			    running);
		} else
			evbuffer_add_printf(out, "{\"error\":\"bad command\"}\n");
		free(line);
	}
}

static void
ctl_event(struct bufferevent *bev, short what, void *arg)
{
	(void)arg;
	if (what & (BEV_EVENT_EOF | BEV_EVENT_ERROR))
		bufferevent_free(bev);
}

static void
ctl_accept(struct evconnlistener *l, evutil_socket_t fd, struct sockaddr *sa, int salen, void *arg)
{
	struct bufferevent *bev = bufferevent_socket_new(base, fd, BEV_OPT_CLOSE_ON_FREE);

	(void)l;
	(void)sa;
	(void)salen;
	(void)arg;
	bufferevent_setcb(bev, ctl_read, NULL, ctl_event, NULL);
	bufferevent_enable(bev, EV_READ | EV_WRITE);
}

static void
on_signal(evutil_socket_t sig, short what, void *arg)
{
	(void)sig;
	(void)what;
	(void)arg;
	event_base_loopbreak(base);
}

static void
usage(void)
{
	fprintf(stderr, "usage: scalecri --dir DIR --nodes N [--control PATH]\n");
	exit(2);
}

int
main(int argc, char **argv)
{
	const char            *dir = NULL, *ctl_path = NULL;
	char                  *ctl_own = NULL;
	struct evconnlistener *ctl;
	struct event          *sigs[2];
	int                    i, k;

	for (i = 1; i < argc; i++) {
		if (strcmp(argv[i], "--dir") == 0 && i + 1 < argc)
			dir = argv[++i];
		else if (strcmp(argv[i], "--nodes") == 0 && i + 1 < argc)
			n_nodes = atoi(argv[++i]);
		else if (strcmp(argv[i], "--control") == 0 && i + 1 < argc)
			ctl_path = argv[++i];
		else
			usage();
	}
	if (dir == NULL || n_nodes < 1 || n_nodes > 9999)
		usage();
	signal(SIGPIPE, SIG_IGN);
	if (mkdirs(dir, 0755) != 0) {
		fprintf(stderr, "scalecri: %s: %s\n", dir, strerror(errno));
		return 1;
	}
	base = event_base_new();
	nodes = xcalloc((size_t)n_nodes, sizeof(*nodes));
	for (k = 0; k < n_nodes; k++) {
		struct node *n = &nodes[k];
		size_t       j;

		n->idx = k + 1;
		TAILQ_INIT(&n->sbs);
		TAILQ_INIT(&n->ctrs);
		for (j = 0; j < nitems(default_images); j++)
			add_image(n, default_images[j]);
		n->path = xsprintf("%s/node-%04d.sock", dir, k + 1);
		if ((n->lis = listen_unix(n->path, on_accept, n)) == NULL) {
			fprintf(stderr, "scalecri: cannot listen on %s: %s\n", n->path,
			    strerror(errno));
			return 1;
		}
	}
	if (ctl_path == NULL)
		ctl_path = ctl_own = xsprintf("%s/control.sock", dir);
	if ((ctl = listen_unix(ctl_path, ctl_accept, NULL)) == NULL) {
		fprintf(stderr, "scalecri: cannot listen on %s: %s\n", ctl_path, strerror(errno));
		return 1;
	}
	sigs[0] = evsignal_new(base, SIGTERM, on_signal, NULL);
	sigs[1] = evsignal_new(base, SIGINT, on_signal, NULL);
	event_add(sigs[0], NULL);
	event_add(sigs[1], NULL);
	printf("scalecri: ready %d\n", n_nodes);
	fflush(stdout);
	event_base_dispatch(base);

	while (!LIST_EMPTY(&conns))
		conn_free(LIST_FIRST(&conns));
	for (k = 0; k < n_nodes; k++) {
		struct node *n = &nodes[k];
		size_t       j;

		while (!TAILQ_EMPTY(&n->ctrs))
			ctr_free(n, TAILQ_FIRST(&n->ctrs));
		while (!TAILQ_EMPTY(&n->sbs)) {
			struct sb *s = TAILQ_FIRST(&n->sbs);

			TAILQ_REMOVE(&n->sbs, s, entry);
			runtime__v1__run_pod_sandbox_request__free_unpacked(s->req, NULL);
			free(s);
		}
		for (j = 0; j < n->n_images; j++) {
			free(n->images[j].name);
			free(n->images[j].id);
			free(n->images[j].digest);
		}
		free(n->images);
		evconnlistener_free(n->lis);
		unlink(n->path);
		free(n->path);
	}
	free(nodes);
	evconnlistener_free(ctl);
	unlink(ctl_path);
	free(ctl_own);
	event_free(sigs[0]);
	event_free(sigs[1]);
	event_base_free(base);
	return 0;
}
