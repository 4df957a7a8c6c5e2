/* cri_client_test.c — drives the CRI client (src/cri.c) against a real gRPC server:
 *   cri_client_test fake SOCK LOGDIR        the Python fake CRI (tests/fakecri), faults via
 *                                           SOCK.ctl
 *   cri_client_test containerd SOCK LOGDIR  a real containerd (sandbox -> container -> exec ->
 *                                           remove)
 * LOGDIR is the pods' log directory (the test's own: the runtime writes the logs there).
 * Prints "ok - NAME" / "not ok - NAME" lines and "N passed, N failed"; exit 1 on a failure.
 * Waits are polls on the loop with a generous safety limit, never timing assertions. */
#include <sys/socket.h>
#include <sys/un.h>

#include <errno.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <event2/event.h>

#include "cri/cri.h"
#include "core/log.h"
#include "core/util.h"

static int                npass, nfail;
static int64_t            t_start;
static struct event_base *base;
static struct cri        *cri;
static const char        *ctl_path;
static int                state_ups, state_downs;

#define CHECK(name, cond)                                                                          \
	do {                                                                                       \
		if (cond) {                                                                        \
			npass++;                                                                   \
			printf("ok - %s [%lld ms]\n", name, (long long)(now_mono_ms() - t_start)); \
		} else {                                                                           \
			nfail++;                                                                   \
			printf("not ok - %s (line %d)\n", name, __LINE__);                         \
		}                                                                                  \
		fflush(stdout);                                                                    \
	} while (0)

/* ---- results ---- */

struct res {
	int               done;
	int               code;
	char              msg[1024];
	ProtobufCMessage *m;      /* a deep copy of the response */
	int               ncalls; /* how many times the callback ran */
};

static void
res_clear(struct res *r)
{
	if (r->m != NULL)
		protobuf_c_message_free_unpacked(r->m, NULL);
	memset(r, 0, sizeof(*r));
}

static void
res_store(struct res *r, int code, const char *msg, const ProtobufCMessage *m)
{
	r->ncalls++;
	r->done = 1;
	r->code = code;
	snprintf(r->msg, sizeof(r->msg), "%s", msg);
	if (r->m != NULL) {
		protobuf_c_message_free_unpacked(r->m, NULL);
		r->m = NULL;
	}
	if (m != NULL) {
		size_t   len = protobuf_c_message_get_packed_size(m);
		uint8_t *buf = xmalloc(len + 1);

		protobuf_c_message_pack(m, buf);
		r->m = protobuf_c_message_unpack(m->descriptor, NULL, len, buf);
		free(buf);
	}
}

#define RES_CB(fn, Resp)                                                                           \
	static void fn##_cb(int code, const char *msg, const Runtime__V1__##Resp *resp, void *arg) \
	{                                                                                          \
		res_store(arg, code, msg, resp ? &resp->base : NULL);                              \
	}
RES_CB(version, VersionResponse)
RES_CB(status, StatusResponse)
RES_CB(run_pod_sandbox, RunPodSandboxResponse)
RES_CB(stop_pod_sandbox, StopPodSandboxResponse)
RES_CB(remove_pod_sandbox, RemovePodSandboxResponse)
RES_CB(pod_sandbox_status, PodSandboxStatusResponse)
RES_CB(list_pod_sandbox, ListPodSandboxResponse)
RES_CB(create_container, CreateContainerResponse)
RES_CB(start_container, StartContainerResponse)
RES_CB(stop_container, StopContainerResponse)
RES_CB(remove_container, RemoveContainerResponse)
RES_CB(list_containers, ListContainersResponse)
RES_CB(container_status, ContainerStatusResponse)
RES_CB(exec_sync, ExecSyncResponse)
RES_CB(update_container_resources, UpdateContainerResourcesResponse)
RES_CB(pull_image, PullImageResponse)
RES_CB(image_status, ImageStatusResponse)
RES_CB(list_images, ListImagesResponse)
RES_CB(remove_image, RemoveImageResponse)
RES_CB(image_fs_info, ImageFsInfoResponse)

/* ---- loop helpers ---- */

/* Runs the loop until *flag is non-zero or max_ms passed (a safety limit). */
static int
run_until(const int *flag, int64_t max_ms)
{
	int64_t end = now_mono_ms() + max_ms;

	while (!*flag && now_mono_ms() < end) {
		struct timeval tv = { 0, 20000 };

		event_base_loopexit(base, &tv);
		event_base_loop(base, EVLOOP_ONCE);
	}
	return *flag;
}

static int
run_until_ready(int want, int64_t max_ms)
{
	int64_t end = now_mono_ms() + max_ms;

	while (cri_ready(cri) != want && now_mono_ms() < end) {
		struct timeval tv = { 0, 20000 };

		event_base_loopexit(base, &tv);
		event_base_loop(base, EVLOOP_ONCE);
	}
	return cri_ready(cri) == want;
}

static void
run_for(int64_t ms)
{
	int never = 0;

	run_until(&never, ms);
}

static void
on_state(struct cri *c, int ready, const char *reason, void *arg)
{
	(void)c;
	(void)arg;
	(void)reason;
	if (ready)
		state_ups++;
	else
		state_downs++;
}

/* ---- the fake's control socket ---- */

static int ctl(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* Sends one JSON command; returns 0 when the reply says "ok": true. */
static int
ctl(const char *fmt, ...)
{
	struct sockaddr_un sun;
	char               cmd[4096], reply[65536];
	size_t             off = 0;
	ssize_t            n;
	va_list            ap;
	int                fd;

	va_start(ap, fmt);
	vsnprintf(cmd, sizeof(cmd) - 2, fmt, ap);
	va_end(ap);
	strcat(cmd, "\n");
	memset(&sun, 0, sizeof(sun));
	sun.sun_family = AF_UNIX;
	snprintf(sun.sun_path, sizeof(sun.sun_path), "%s", ctl_path);
	if ((fd = socket(AF_UNIX, SOCK_STREAM, 0)) == -1)
		return -1;
	if (connect(fd, (struct sockaddr *)&sun, sizeof(sun)) == -1 ||
	    write(fd, cmd, strlen(cmd)) != (ssize_t)strlen(cmd)) {
		fprintf(stderr, "ctl %s: %s\n", ctl_path, strerror(errno));
		close(fd);
		return -1;
	}
	while (
	    off < sizeof(reply) - 1 && (n = read(fd, reply + off, sizeof(reply) - 1 - off)) > 0) {
		off += (size_t)n;
		if (memchr(reply, '\n', off) != NULL)
			break;
	}
	reply[off] = '\0';
	close(fd);
	if (strstr(reply, "\"ok\": true") == NULL && strstr(reply, "\"ok\":true") == NULL) {
		fprintf(stderr, "ctl %s -> %s\n", cmd, reply);
		return -1;
	}
	return 0;
}

/* ---- request builders ---- */

/* Kubelet-style sandbox config. */
struct sbcfg {
	Runtime__V1__PodSandboxConfig               cfg;
	Runtime__V1__PodSandboxMetadata             md;
	Runtime__V1__LinuxPodSandboxConfig          lx;
	Runtime__V1__LinuxSandboxSecurityContext    sc;
	Runtime__V1__NamespaceOption                ns;
	Runtime__V1__PodSandboxConfig__LabelsEntry *lab[4];
};

static void
sb_init(struct sbcfg *s, const char *name, const char *uid, int hostnet, const char *logdir)
{
	static Runtime__V1__PodSandboxConfig__LabelsEntry       le[4];
	static Runtime__V1__PodSandboxConfig__AnnotationsEntry  ae[1];
	static Runtime__V1__PodSandboxConfig__AnnotationsEntry *aep[1];
	static const char *keys[4] = { "io.kubernetes.pod.name", "io.kubernetes.pod.namespace",
		"io.kubernetes.pod.uid", "io.kubernetes.pod.created-by" };
	const char        *vals[4] = { name, "default", uid, "klet" };
	int                i;

	memset(s, 0, sizeof(*s));
	runtime__v1__pod_sandbox_config__init(&s->cfg);
	runtime__v1__pod_sandbox_metadata__init(&s->md);
	runtime__v1__linux_pod_sandbox_config__init(&s->lx);
	runtime__v1__linux_sandbox_security_context__init(&s->sc);
	runtime__v1__namespace_option__init(&s->ns);
	s->md.name = (char *)name;
	s->md.namespace_ = "default";
	s->md.uid = (char *)uid;
	s->md.attempt = 0;
	s->cfg.metadata = &s->md;
	if (!hostnet)
		s->cfg.hostname = (char *)name;
	s->cfg.log_directory = (char *)logdir;
	for (i = 0; i < 4; i++) {
		runtime__v1__pod_sandbox_config__labels_entry__init(&le[i]);
		le[i].key = (char *)keys[i];
		le[i].value = (char *)vals[i];
		s->lab[i] = &le[i];
	}
	s->cfg.n_labels = 4;
	s->cfg.labels = s->lab;
	runtime__v1__pod_sandbox_config__annotations_entry__init(&ae[0]);
	ae[0].key = "kubernetes.io/config.source";
	ae[0].value = "file";
	aep[0] = &ae[0];
	s->cfg.n_annotations = 1;
	s->cfg.annotations = aep;
	s->ns.network =
	    hostnet ? RUNTIME__V1__NAMESPACE_MODE__NODE : RUNTIME__V1__NAMESPACE_MODE__POD;
	s->ns.pid = RUNTIME__V1__NAMESPACE_MODE__CONTAINER;
	s->ns.ipc = RUNTIME__V1__NAMESPACE_MODE__POD;
	s->sc.namespace_options = &s->ns;
	s->lx.security_context = &s->sc;
	s->lx.cgroup_parent = "";
	s->cfg.linux = &s->lx;
}

struct ctrcfg {
	Runtime__V1__ContainerConfig                    cfg;
	Runtime__V1__ContainerMetadata                  md;
	Runtime__V1__ImageSpec                          img;
	Runtime__V1__LinuxContainerConfig               lx;
	Runtime__V1__LinuxContainerSecurityContext      sc;
	Runtime__V1__NamespaceOption                    ns;
	Runtime__V1__ContainerConfig__LabelsEntry       le[4];
	Runtime__V1__ContainerConfig__LabelsEntry      *lep[4];
	Runtime__V1__ContainerConfig__AnnotationsEntry  ae[2];
	Runtime__V1__ContainerConfig__AnnotationsEntry *aep[2];
	char                                           *argv[4];
};

static void
ctr_init(struct ctrcfg *c, const char *name, const char *pod, const char *uid, const char *image,
    int hostnet, const char *cmd0, const char *cmd1, const char *cmd2)
{
	const char *keys[4] = { "io.kubernetes.container.name", "io.kubernetes.pod.name",
		"io.kubernetes.pod.namespace", "io.kubernetes.pod.uid" };
	const char *vals[4] = { name, pod, "default", uid };
	int         i;

	memset(c, 0, sizeof(*c));
	runtime__v1__container_config__init(&c->cfg);
	runtime__v1__container_metadata__init(&c->md);
	runtime__v1__image_spec__init(&c->img);
	runtime__v1__linux_container_config__init(&c->lx);
	runtime__v1__linux_container_security_context__init(&c->sc);
	runtime__v1__namespace_option__init(&c->ns);
	c->md.name = (char *)name;
	c->cfg.metadata = &c->md;
	c->img.image = (char *)image;
	c->cfg.image = &c->img;
	c->argv[0] = (char *)cmd0;
	c->argv[1] = (char *)cmd1;
	c->argv[2] = (char *)cmd2;
	c->cfg.n_command = cmd2 ? 3 : cmd1 ? 2 : 1;
	c->cfg.command = c->argv;
	c->cfg.log_path = (char *)name;
	for (i = 0; i < 4; i++) {
		runtime__v1__container_config__labels_entry__init(&c->le[i]);
		c->le[i].key = (char *)keys[i];
		c->le[i].value = (char *)vals[i];
		c->lep[i] = &c->le[i];
	}
	c->cfg.n_labels = 4;
	c->cfg.labels = c->lep;
	runtime__v1__container_config__annotations_entry__init(&c->ae[0]);
	c->ae[0].key = "io.kubernetes.container.hash";
	c->ae[0].value = "1a2b3c4d";
	runtime__v1__container_config__annotations_entry__init(&c->ae[1]);
	c->ae[1].key = "io.kubernetes.container.restartCount";
	c->ae[1].value = "0";
	c->aep[0] = &c->ae[0];
	c->aep[1] = &c->ae[1];
	c->cfg.n_annotations = 2;
	c->cfg.annotations = c->aep;
	c->ns.network =
	    hostnet ? RUNTIME__V1__NAMESPACE_MODE__NODE : RUNTIME__V1__NAMESPACE_MODE__POD;
	c->ns.pid = RUNTIME__V1__NAMESPACE_MODE__CONTAINER;
	c->ns.ipc = RUNTIME__V1__NAMESPACE_MODE__POD;
	c->sc.namespace_options = &c->ns;
	c->lx.security_context = &c->sc;
	c->cfg.linux = &c->lx;
}

/* ---- shared steps ---- */

#define WAIT(r) run_until(&(r)->done, 60000)

static void
t_version(const char *want_name)
{
	Runtime__V1__VersionRequest req = RUNTIME__V1__VERSION_REQUEST__INIT;
	struct res                  r = { 0 };
	struct cri_info             info;

	req.version = "0.1.0";
	cri_version(cri, &req, 0, version_cb, &r, NULL);
	WAIT(&r);
	CHECK("Version OK", r.code == GRPC_OK && r.m != NULL);
	if (r.m != NULL) {
		Runtime__V1__VersionResponse *v = (Runtime__V1__VersionResponse *)r.m;

		CHECK("Version runtime_api_version v1",
		    v->runtime_api_version && strcmp(v->runtime_api_version, "v1") == 0);
		CHECK("Version runtime_name",
		    v->runtime_name && strcmp(v->runtime_name, want_name) == 0);
	}
	cri_info(cri, &info);
	CHECK("cri_info runtime name",
	    info.ready && info.runtime_name && strcmp(info.runtime_name, want_name) == 0 &&
	        info.last_error == NULL);
	res_clear(&r);
}

static int
image_present(const char *image)
{
	Runtime__V1__ImageStatusRequest req = RUNTIME__V1__IMAGE_STATUS_REQUEST__INIT;
	Runtime__V1__ImageSpec          spec = RUNTIME__V1__IMAGE_SPEC__INIT;
	struct res                      r = { 0 };
	int                             ok;

	spec.image = (char *)image;
	req.image = &spec;
	cri_image_status(cri, &req, 0, image_status_cb, &r, NULL);
	WAIT(&r);
	ok = r.code == GRPC_OK && r.m != NULL &&
	    ((Runtime__V1__ImageStatusResponse *)r.m)->image != NULL;
	res_clear(&r);
	return ok;
}

/* The kubelet's pod flow on one runtime: sandbox, container, exec, stop, remove. */
static void
t_pod_flow(const char *image, const char *logdir, int hostnet, int fake)
{
	struct sbcfg  sb;
	struct ctrcfg cc;
	struct res    r = { 0 };
	char         *sbid = NULL, *cid = NULL;
	char          label[96];

	snprintf(label, sizeof(label), "%s", hostnet ? "host network" : "pod network");
	sb_init(&sb, hostnet ? "flow-host" : "flow-pod", hostnet ? "uid-flow-host" : "uid-flow-pod",
	    hostnet, logdir);
	{
		Runtime__V1__RunPodSandboxRequest req = RUNTIME__V1__RUN_POD_SANDBOX_REQUEST__INIT;

		req.config = &sb.cfg;
		cri_run_pod_sandbox(cri, &req, 0, run_pod_sandbox_cb, &r, NULL);
		WAIT(&r);
		CHECK(hostnet ? "RunPodSandbox (host network)" : "RunPodSandbox (pod network)",
		    r.code == GRPC_OK && r.m != NULL);
		if (r.code != GRPC_OK) {
			fprintf(stderr, "RunPodSandbox: %s %s\n", grpc_code_name(r.code), r.msg);
			res_clear(&r);
			return;
		}
		sbid = xstrdup(((Runtime__V1__RunPodSandboxResponse *)r.m)->pod_sandbox_id);
		res_clear(&r);
	}
	{
		Runtime__V1__PodSandboxStatusRequest req =
		    RUNTIME__V1__POD_SANDBOX_STATUS_REQUEST__INIT;

		req.pod_sandbox_id = sbid;
		cri_pod_sandbox_status(cri, &req, 0, pod_sandbox_status_cb, &r, NULL);
		WAIT(&r);
		CHECK("PodSandboxStatus READY",
		    r.code == GRPC_OK && r.m &&
		        ((Runtime__V1__PodSandboxStatusResponse *)r.m)->status &&
		        ((Runtime__V1__PodSandboxStatusResponse *)r.m)->status->state ==
		            RUNTIME__V1__POD_SANDBOX_STATE__SANDBOX_READY);
		if (r.m && !hostnet) {
			Runtime__V1__PodSandboxStatus *st =
			    ((Runtime__V1__PodSandboxStatusResponse *)r.m)->status;

			CHECK("PodSandboxStatus has a pod IP",
			    st && st->network && st->network->ip && st->network->ip[0] != '\0');
		}
		res_clear(&r);
	}
	{
		Runtime__V1__ListPodSandboxRequest req =
		    RUNTIME__V1__LIST_POD_SANDBOX_REQUEST__INIT;
		Runtime__V1__PodSandboxFilter f = RUNTIME__V1__POD_SANDBOX_FILTER__INIT;
		Runtime__V1__PodSandboxFilter__LabelSelectorEntry e =
		    RUNTIME__V1__POD_SANDBOX_FILTER__LABEL_SELECTOR_ENTRY__INIT;
		Runtime__V1__PodSandboxFilter__LabelSelectorEntry *ep[1] = { &e };

		e.key = "io.kubernetes.pod.uid";
		e.value = sb.md.uid;
		f.n_label_selector = 1;
		f.label_selector = ep;
		req.filter = &f;
		cri_list_pod_sandbox(cri, &req, 0, list_pod_sandbox_cb, &r, NULL);
		WAIT(&r);
		CHECK("ListPodSandbox by label finds it",
		    r.code == GRPC_OK && r.m &&
		        ((Runtime__V1__ListPodSandboxResponse *)r.m)->n_items == 1 &&
		        strcmp(((Runtime__V1__ListPodSandboxResponse *)r.m)->items[0]->id, sbid) ==
		            0);
		res_clear(&r);
	}
	ctr_init(&cc, "sleeper", sb.md.name, sb.md.uid, image, hostnet, "sleep", "3600", NULL);
	{
		Runtime__V1__CreateContainerRequest req =
		    RUNTIME__V1__CREATE_CONTAINER_REQUEST__INIT;

		req.pod_sandbox_id = sbid;
		req.config = &cc.cfg;
		req.sandbox_config = &sb.cfg;
		cri_create_container(cri, &req, 0, create_container_cb, &r, NULL);
		WAIT(&r);
		CHECK("CreateContainer", r.code == GRPC_OK && r.m);
		if (r.code != GRPC_OK)
			fprintf(stderr, "CreateContainer: %s %s\n", grpc_code_name(r.code), r.msg);
		else
			cid = xstrdup(((Runtime__V1__CreateContainerResponse *)r.m)->container_id);
		res_clear(&r);
	}
	if (cid != NULL) {
		Runtime__V1__StartContainerRequest req = RUNTIME__V1__START_CONTAINER_REQUEST__INIT;

		req.container_id = cid;
		cri_start_container(cri, &req, 0, start_container_cb, &r, NULL);
		WAIT(&r);
		CHECK("StartContainer", r.code == GRPC_OK);
		if (r.code != GRPC_OK)
			fprintf(stderr, "StartContainer: %s %s\n", grpc_code_name(r.code), r.msg);
		res_clear(&r);
	}
	if (cid != NULL) {
		Runtime__V1__ListContainersRequest req = RUNTIME__V1__LIST_CONTAINERS_REQUEST__INIT;
		Runtime__V1__ContainerFilter       f = RUNTIME__V1__CONTAINER_FILTER__INIT;
		Runtime__V1__ContainerStateValue   sv = RUNTIME__V1__CONTAINER_STATE_VALUE__INIT;

		sv.state = RUNTIME__V1__CONTAINER_STATE__CONTAINER_RUNNING;
		f.pod_sandbox_id = sbid;
		f.state = &sv;
		req.filter = &f;
		cri_list_containers(cri, &req, 0, list_containers_cb, &r, NULL);
		WAIT(&r);
		CHECK("ListContainers by sandbox and state RUNNING",
		    r.code == GRPC_OK && r.m &&
		        ((Runtime__V1__ListContainersResponse *)r.m)->n_containers == 1);
		res_clear(&r);
	}
	if (cid != NULL) {
		Runtime__V1__ContainerStatusRequest req =
		    RUNTIME__V1__CONTAINER_STATUS_REQUEST__INIT;
		Runtime__V1__ContainerStatus *st;

		req.container_id = cid;
		cri_container_status(cri, &req, 0, container_status_cb, &r, NULL);
		WAIT(&r);
		st = r.m ? ((Runtime__V1__ContainerStatusResponse *)r.m)->status : NULL;
		CHECK("ContainerStatus RUNNING with the kubelet labels",
		    r.code == GRPC_OK && st &&
		        st->state == RUNTIME__V1__CONTAINER_STATE__CONTAINER_RUNNING &&
		        st->n_labels >= 4 && st->n_annotations >= 2);
		res_clear(&r);
	}
	if (cid != NULL) {
		Runtime__V1__ExecSyncRequest   req = RUNTIME__V1__EXEC_SYNC_REQUEST__INIT;
		char                          *argv[3] = { "sh", "-c", "echo hello; exit 3" };
		Runtime__V1__ExecSyncResponse *e;

		req.container_id = cid;
		req.cmd = argv;
		req.n_cmd = 3;
		req.timeout = 10;
		cri_exec_sync(cri, &req, 20000, exec_sync_cb, &r, NULL);
		WAIT(&r);
		e = (Runtime__V1__ExecSyncResponse *)r.m;
		CHECK("ExecSync exit 3 and stdout",
		    r.code == GRPC_OK && e && e->exit_code == 3 && e->stdout.len == 6 &&
		        memcmp(e->stdout.data, "hello\n", 6) == 0);
		if (r.code != GRPC_OK)
			fprintf(stderr, "ExecSync: %s %s\n", grpc_code_name(r.code), r.msg);
		res_clear(&r);
	}
	if (cid != NULL) {
		Runtime__V1__UpdateContainerResourcesRequest req =
		    RUNTIME__V1__UPDATE_CONTAINER_RESOURCES_REQUEST__INIT;
		Runtime__V1__LinuxContainerResources lr =
		    RUNTIME__V1__LINUX_CONTAINER_RESOURCES__INIT;

		lr.cpu_shares = 512;
		lr.cpu_period = 100000;
		lr.cpu_quota = 50000;
		lr.memory_limit_in_bytes = fake ? 64 << 20 : 0;
		req.container_id = cid;
		req.linux = &lr;
		cri_update_container_resources(
		    cri, &req, 0, update_container_resources_cb, &r, NULL);
		WAIT(&r);
		CHECK("UpdateContainerResources", r.code == GRPC_OK);
		if (r.code != GRPC_OK)
			fprintf(stderr, "UpdateContainerResources: %s %s\n", grpc_code_name(r.code),
			    r.msg);
		res_clear(&r);
	}
	if (cid != NULL) {
		Runtime__V1__StopContainerRequest req = RUNTIME__V1__STOP_CONTAINER_REQUEST__INIT;

		req.container_id = cid;
		req.timeout = 2;
		cri_stop_container(cri, &req, 30000, stop_container_cb, &r, NULL);
		WAIT(&r);
		CHECK("StopContainer", r.code == GRPC_OK);
		res_clear(&r);
	}
	if (cid != NULL) {
		Runtime__V1__ContainerStatusRequest req =
		    RUNTIME__V1__CONTAINER_STATUS_REQUEST__INIT;
		Runtime__V1__ContainerStatus *st;

		req.container_id = cid;
		cri_container_status(cri, &req, 0, container_status_cb, &r, NULL);
		WAIT(&r);
		st = r.m ? ((Runtime__V1__ContainerStatusResponse *)r.m)->status : NULL;
		CHECK("ContainerStatus EXITED after stop",
		    r.code == GRPC_OK && st &&
		        st->state == RUNTIME__V1__CONTAINER_STATE__CONTAINER_EXITED &&
		        st->finished_at > 0);
		res_clear(&r);
	}
	if (cid != NULL) {
		Runtime__V1__RemoveContainerRequest req =
		    RUNTIME__V1__REMOVE_CONTAINER_REQUEST__INIT;

		req.container_id = cid;
		cri_remove_container(cri, &req, 0, remove_container_cb, &r, NULL);
		WAIT(&r);
		CHECK("RemoveContainer", r.code == GRPC_OK);
		res_clear(&r);
	}
	{
		Runtime__V1__StopPodSandboxRequest req =
		    RUNTIME__V1__STOP_POD_SANDBOX_REQUEST__INIT;

		req.pod_sandbox_id = sbid;
		cri_stop_pod_sandbox(cri, &req, 0, stop_pod_sandbox_cb, &r, NULL);
		WAIT(&r);
		CHECK("StopPodSandbox", r.code == GRPC_OK);
		res_clear(&r);
	}
	{
		Runtime__V1__RemovePodSandboxRequest req =
		    RUNTIME__V1__REMOVE_POD_SANDBOX_REQUEST__INIT;

		req.pod_sandbox_id = sbid;
		cri_remove_pod_sandbox(cri, &req, 0, remove_pod_sandbox_cb, &r, NULL);
		WAIT(&r);
		CHECK("RemovePodSandbox", r.code == GRPC_OK);
		res_clear(&r);
	}
	{
		Runtime__V1__PodSandboxStatusRequest req =
		    RUNTIME__V1__POD_SANDBOX_STATUS_REQUEST__INIT;

		req.pod_sandbox_id = sbid;
		cri_pod_sandbox_status(cri, &req, 0, pod_sandbox_status_cb, &r, NULL);
		WAIT(&r);
		CHECK("PodSandboxStatus of a removed sandbox: NOT_FOUND", r.code == GRPC_NOT_FOUND);
		res_clear(&r);
	}
	(void)label;
	free(sbid);
	free(cid);
}

/* ---- fake-only scenarios ---- */

static void
t_images(void)
{
	struct res r = { 0 };

	CHECK("ImageStatus busybox present", image_present("klet.local/busybox:1.35"));
	CHECK("ImageStatus missing image: empty", !image_present("klet.local/nope:1"));
	{
		Runtime__V1__ListImagesRequest req = RUNTIME__V1__LIST_IMAGES_REQUEST__INIT;

		cri_list_images(cri, &req, 0, list_images_cb, &r, NULL);
		WAIT(&r);
		CHECK("ListImages",
		    r.code == GRPC_OK && r.m &&
		        ((Runtime__V1__ListImagesResponse *)r.m)->n_images >= 2);
		res_clear(&r);
	}
	{
		Runtime__V1__ImageFsInfoRequest req = RUNTIME__V1__IMAGE_FS_INFO_REQUEST__INIT;

		cri_image_fs_info(cri, &req, 0, image_fs_info_cb, &r, NULL);
		WAIT(&r);
		CHECK("ImageFsInfo",
		    r.code == GRPC_OK && r.m &&
		        ((Runtime__V1__ImageFsInfoResponse *)r.m)->n_image_filesystems >= 1);
		res_clear(&r);
	}
	ctl("{\"cmd\":\"images\",\"pullable\":[\"reg.example/app:1\"]}");
	ctl("{\"cmd\":\"require_auth\",\"image\":\"reg.example/app:1\",\"username\":\"u\","
	    "\"password\":\"p\"}");
	{
		Runtime__V1__PullImageRequest req = RUNTIME__V1__PULL_IMAGE_REQUEST__INIT;
		Runtime__V1__ImageSpec        spec = RUNTIME__V1__IMAGE_SPEC__INIT;
		Runtime__V1__AuthConfig       auth = RUNTIME__V1__AUTH_CONFIG__INIT;

		spec.image = "reg.example/app:1";
		req.image = &spec;
		auth.username = "u";
		auth.password = "wrong";
		req.auth = &auth;
		cri_pull_image(cri, &req, 0, pull_image_cb, &r, NULL);
		WAIT(&r);
		CHECK("PullImage with bad credentials: UNKNOWN 401",
		    r.code == GRPC_UNKNOWN && strstr(r.msg, "401") != NULL);
		res_clear(&r);
		auth.password = "p";
		cri_pull_image(cri, &req, 0, pull_image_cb, &r, NULL);
		WAIT(&r);
		CHECK("PullImage with auth",
		    r.code == GRPC_OK && r.m &&
		        strncmp(((Runtime__V1__PullImageResponse *)r.m)->image_ref, "sha256:", 7) ==
		            0);
		res_clear(&r);
	}
	CHECK("ImageStatus pulled image present", image_present("reg.example/app:1"));
	{
		Runtime__V1__RemoveImageRequest req = RUNTIME__V1__REMOVE_IMAGE_REQUEST__INIT;
		Runtime__V1__ImageSpec          spec = RUNTIME__V1__IMAGE_SPEC__INIT;

		spec.image = "reg.example/app:1";
		req.image = &spec;
		cri_remove_image(cri, &req, 0, remove_image_cb, &r, NULL);
		WAIT(&r);
		CHECK("RemoveImage", r.code == GRPC_OK);
		res_clear(&r);
	}
	CHECK("ImageStatus removed image absent", !image_present("reg.example/app:1"));
}

static void
status_call(struct res *r, int64_t timeout_ms, const void *owner)
{
	Runtime__V1__StatusRequest req = RUNTIME__V1__STATUS_REQUEST__INIT;

	cri_status(cri, &req, timeout_ms, status_cb, r, owner);
}

static struct cri_call *
list_call(struct res *r, int64_t timeout_ms, const void *owner)
{
	Runtime__V1__ListContainersRequest req = RUNTIME__V1__LIST_CONTAINERS_REQUEST__INIT;

	return cri_list_containers(cri, &req, timeout_ms, list_containers_cb, r, owner);
}

static int
status_ok(void)
{
	struct res r = { 0 };
	int        ok;

	status_call(&r, 5000, NULL);
	WAIT(&r);
	ok = r.code == GRPC_OK && r.m != NULL;
	res_clear(&r);
	return ok;
}

static void
t_errors(void)
{
	struct res r = { 0 };

	{
		Runtime__V1__StopPodSandboxRequest req =
		    RUNTIME__V1__STOP_POD_SANDBOX_REQUEST__INIT;

		req.pod_sandbox_id =
		    "0000000000000000000000000000000000000000000000000000000000000000";
		cri_stop_pod_sandbox(cri, &req, 0, stop_pod_sandbox_cb, &r, NULL);
		WAIT(&r);
		CHECK("StopPodSandbox unknown id: NOT_FOUND (trailers-only)",
		    r.code == GRPC_NOT_FOUND && r.m == NULL && r.msg[0] != '\0');
		res_clear(&r);
	}
	ctl("{\"cmd\":\"fault\",\"method\":\"Status\",\"code\":\"FAILED_PRECONDITION\","
	    "\"message\":\"caf\\u00e9 100%% sure: a\\nb\",\"count\":1}");
	status_call(&r, 0, NULL);
	WAIT(&r);
	CHECK("fault FAILED_PRECONDITION: code", r.code == GRPC_FAILED_PRECONDITION);
	CHECK("fault message percent-decoded (UTF-8, %, newline)",
	    strcmp(r.msg, "caf\xc3\xa9 100% sure: a\nb") == 0);
	if (strcmp(r.msg, "caf\xc3\xa9 100% sure: a\nb") != 0)
		fprintf(stderr, "message was [%s]\n", r.msg);
	res_clear(&r);
	ctl("{\"cmd\":\"fault\",\"method\":\"Status\",\"code\":\"UNAVAILABLE\",\"count\":1}");
	status_call(&r, 0, NULL);
	WAIT(&r);
	CHECK("fault UNAVAILABLE from the server", r.code == GRPC_UNAVAILABLE);
	res_clear(&r);
	CHECK("session lives after errors", status_ok() && cri_ready(cri));
	ctl("{\"cmd\":\"fault\",\"method\":\"ListContainers\",\"garbage\":true,\"count\":1}");
	list_call(&r, 0, NULL);
	WAIT(&r);
	CHECK("malformed protobuf: INTERNAL", r.code == GRPC_INTERNAL && r.m == NULL);
	res_clear(&r);
	CHECK("session lives after malformed reply", status_ok());
}

static void
t_deadlines(void)
{
	struct res r = { 0 }, r2 = { 0 };

	ctl("{\"cmd\":\"fault\",\"method\":\"Status\",\"latency_ms\":300,\"count\":1}");
	status_call(&r, 10000, NULL);
	WAIT(&r);
	CHECK("latency 300 ms within a 10 s deadline: OK", r.code == GRPC_OK);
	res_clear(&r);
	ctl("{\"cmd\":\"fault\",\"method\":\"Status\",\"latency_ms\":2000,\"count\":1}");
	status_call(&r, 200, NULL);
	WAIT(&r);
	CHECK("latency 2 s with a 200 ms deadline: DEADLINE_EXCEEDED",
	    r.code == GRPC_DEADLINE_EXCEEDED);
	res_clear(&r);
	ctl("{\"cmd\":\"fault\",\"method\":\"Status\",\"hang\":true,\"count\":1}");
	status_call(&r, 300, NULL);
	list_call(&r2, 10000, NULL); /* another method meanwhile */
	WAIT(&r);
	WAIT(&r2);
	CHECK("never-answering call: DEADLINE_EXCEEDED",
	    r.code == GRPC_DEADLINE_EXCEEDED && r.ncalls == 1);
	if (r.code != GRPC_DEADLINE_EXCEEDED || r2.code != GRPC_OK)
		fprintf(stderr, "hang: %s %s / %s %s\n", grpc_code_name(r.code), r.msg,
		    grpc_code_name(r2.code), r2.msg);
	CHECK("other call during the hang: OK", r2.code == GRPC_OK);
	res_clear(&r);
	res_clear(&r2);
	CHECK("session lives after deadlines", status_ok());
}

static void
t_oversize(void)
{
	struct res r = { 0 }, r2 = { 0 };

	ctl("{\"cmd\":\"fault\",\"method\":\"ListContainers\",\"oversize\":true,\"count\":1}");
	list_call(&r, 0, NULL);
	status_call(&r2, 0, NULL);
	WAIT(&r);
	WAIT(&r2);
	CHECK("oversized reply (17 MiB): RESOURCE_EXHAUSTED", r.code == GRPC_RESOURCE_EXHAUSTED);
	CHECK("concurrent call lives on", r2.code == GRPC_OK);
	res_clear(&r);
	res_clear(&r2);
	ctl("{\"cmd\":\"fault\",\"method\":\"ListContainers\",\"oversize\":%d,\"count\":1}",
	    8 << 20);
	list_call(&r, 0, NULL);
	WAIT(&r);
	CHECK("8 MiB reply (flow control over 64 KiB windows): OK", r.code == GRPC_OK);
	res_clear(&r);
	list_call(&r, 0, NULL);
	WAIT(&r);
	CHECK("ListContainers after oversize: OK", r.code == GRPC_OK);
	res_clear(&r);
}

static void
t_big_request(void)
{
	Runtime__V1__ExecSyncRequest req = RUNTIME__V1__EXEC_SYNC_REQUEST__INIT;
	size_t                       big = 17u << 20;
	char                        *argv[1];
	struct res                   r = { 0 };

	argv[0] = xmalloc(big + 1);
	memset(argv[0], 'x', big);
	argv[0][big] = '\0';
	req.container_id = "x";
	req.cmd = argv;
	req.n_cmd = 1;
	cri_exec_sync(cri, &req, 0, exec_sync_cb, &r, NULL);
	free(argv[0]);
	WAIT(&r);
	CHECK("request over 16 MiB: RESOURCE_EXHAUSTED locally", r.code == GRPC_RESOURCE_EXHAUSTED);
	res_clear(&r);
	/* a 2 MiB request: flow control on the way out */
	big = 2u << 20;
	argv[0] = xmalloc(big + 1);
	memset(argv[0], 'y', big);
	argv[0][big] = '\0';
	cri_exec_sync(cri, &req, 0, exec_sync_cb, &r, NULL);
	free(argv[0]);
	WAIT(&r);
	CHECK("2 MiB request reaches the server (NOT_FOUND for id x)",
	    r.code == GRPC_NOT_FOUND || r.code == GRPC_UNKNOWN);
	if (r.code != GRPC_NOT_FOUND && r.code != GRPC_UNKNOWN)
		fprintf(stderr, "2 MiB request: %s %s\n", grpc_code_name(r.code), r.msg);
	res_clear(&r);
}

static void
t_cancel(void)
{
	struct res       ra[5], rb[2], rc = { 0 };
	struct cri_call *single;
	struct cri_stats st;
	int              ownerA, ownerB, i, n, ran = 0;

	memset(ra, 0, sizeof(ra));
	memset(rb, 0, sizeof(rb));
	ctl("{\"cmd\":\"fault\",\"method\":\"ListContainers\",\"latency_ms\":300,\"count\":8}");
	for (i = 0; i < 5; i++)
		list_call(&ra[i], 0, &ownerA);
	for (i = 0; i < 2; i++)
		list_call(&rb[i], 0, &ownerB);
	single = list_call(&rc, 0, &ownerB);
	run_for(50); /* let them reach the server */
	n = cri_cancel_owner(cri, &ownerA);
	CHECK("cri_cancel_owner cancelled 5 calls", n == 5);
	cri_cancel(single);
	WAIT(&rb[0]);
	WAIT(&rb[1]);
	run_for(500);
	for (i = 0; i < 5; i++)
		ran += ra[i].ncalls;
	CHECK("cancelled callbacks never ran", ran == 0 && rc.ncalls == 0);
	CHECK("other owner's calls completed", rb[0].code == GRPC_OK && rb[1].code == GRPC_OK);
	for (i = 0; i < 2; i++)
		res_clear(&rb[i]);
	cri_stats(cri, &st);
	CHECK(
	    "stats: nothing in flight, cancelled counted", st.in_flight == 0 && st.cancelled >= 6);
	/* cancel before the call is even sent */
	list_call(&ra[0], 0, &ownerA);
	cri_cancel_owner(cri, &ownerA);
	run_for(100);
	CHECK("call cancelled at once: no callback", ra[0].ncalls == 0);
	ctl("{\"cmd\":\"clear_faults\"}");
	CHECK("session lives after cancels", status_ok());
}

struct many {
	int done, ok, total;
};

static void
many_cb(int code, const char *msg, const Runtime__V1__ContainerStatusResponse *resp, void *arg)
{
	struct many *m = arg;

	(void)msg;
	if (code == GRPC_NOT_FOUND && resp == NULL)
		m->ok++;
	if (++m->done == m->total)
		m->done = -m->total; /* flag */
}

static void
many_list_cb(int code, const char *msg, const Runtime__V1__ListContainersResponse *resp, void *arg)
{
	struct many *m = arg;

	(void)msg;
	if (code == GRPC_OK && resp != NULL)
		m->ok++;
	if (++m->done == m->total)
		m->done = -m->total;
}

static void
t_many(void)
{
	struct many m = { 0, 0, 2000 };
	int         i, fin = 0;
	int64_t     t0 = now_mono_ms();

	for (i = 0; i < 1000; i++) {
		Runtime__V1__ContainerStatusRequest req =
		    RUNTIME__V1__CONTAINER_STATUS_REQUEST__INIT;
		Runtime__V1__ListContainersRequest lreq =
		    RUNTIME__V1__LIST_CONTAINERS_REQUEST__INIT;

		req.container_id = "deadbeef";
		cri_container_status(cri, &req, 0, many_cb, &m, NULL);
		cri_list_containers(cri, &lreq, 0, many_list_cb, &m, NULL);
	}
	while (!fin && now_mono_ms() - t0 < 120000) {
		run_for(20);
		fin = m.done < 0;
	}
	CHECK("2000 concurrent calls all answered correctly", fin && m.ok == 2000);
	if (m.ok != 2000)
		fprintf(stderr, "many: done %d ok %d\n", m.done, m.ok);
}

/* Back-pressure (issue 20, case 5): 5000 calls at once, over h2's queue of 4096, and
 * StopContainer calls among them: every call is answered by the runtime (none fails for want
 * of room), stops overtake the waiting reads, and waiting calls can be cancelled. */
static int bp_stops_done, bp_reads_at_last_stop;

static void
bp_stop_cb(int code, const char *msg, const Runtime__V1__StopContainerResponse *resp, void *arg)
{
	struct many *m = arg;

	(void)msg;
	(void)resp;
	if (code == GRPC_NOT_FOUND || code == GRPC_OK)
		m->ok++;
	bp_stops_done++;
	if (++m->done == m->total)
		m->done = -m->total;
}

static void
bp_read_cb(int code, const char *msg, const Runtime__V1__ContainerStatusResponse *resp, void *arg)
{
	struct many *m = arg;

	if (code == GRPC_NOT_FOUND && resp == NULL)
		m->ok++;
	else if (m->ok == m->done) /* the first failure */
		fprintf(stderr, "backpressure: code %d: %s\n", code, msg);
	if (bp_stops_done < 100)
		bp_reads_at_last_stop = m->done + 1;
	if (++m->done == m->total)
		m->done = -m->total;
}

static void
t_backpressure(void)
{
	struct many      m = { 0, 0, 5000 };
	struct cri_stats st;
	int              i, fin = 0, owner_x, cancelled;
	int64_t          t0 = now_mono_ms();

	for (i = 0; i < 5000; i++) {
		Runtime__V1__ContainerStatusRequest req =
		    RUNTIME__V1__CONTAINER_STATUS_REQUEST__INIT;
		Runtime__V1__StopContainerRequest sreq = RUNTIME__V1__STOP_CONTAINER_REQUEST__INIT;

		req.container_id = "deadbeef";
		sreq.container_id = "deadbeef";
		if (i >= 4000 && i < 4100) /* late, behind 4000 reads: must not wait for them */
			cri_stop_container(cri, &sreq, 0, bp_stop_cb, &m, NULL);
		else
			cri_container_status(cri, &req, 0, bp_read_cb, &m, NULL);
	}
	/* 50 more, cancelled while they wait: their callbacks never run. */
	for (i = 0; i < 50; i++) {
		Runtime__V1__ContainerStatusRequest req =
		    RUNTIME__V1__CONTAINER_STATUS_REQUEST__INIT;

		req.container_id = "deadbeef";
		cri_container_status(cri, &req, 0, bp_read_cb, &m, &owner_x);
	}
	cri_stats(cri, &st);
	CHECK("backpressure: calls past the bound wait", st.waiting >= 4000);
	cancelled = cri_cancel_owner(cri, &owner_x);
	CHECK("backpressure: waiting calls can be cancelled", cancelled == 50);
	while (!fin && now_mono_ms() - t0 < 120000) {
		run_for(20);
		fin = m.done < 0;
	}
	printf("# backpressure: 5000 calls in %lld ms, %d ok; the 100 stops done after %d "
	       "reads\n",
	    (long long)(now_mono_ms() - t0), m.ok, bp_reads_at_last_stop);
	CHECK("backpressure: 5000 calls at once all answered by the runtime", fin && m.ok == 5000);
	CHECK("backpressure: stops overtake waiting reads", bp_reads_at_last_stop < 1500);
	cri_stats(cri, &st);
	CHECK("backpressure: nothing left waiting", st.waiting == 0 && st.waiting_max >= 4000);
	CHECK("session lives after the burst", status_ok());
}

static void
t_drop_and_reconnect(void)
{
	struct res r = { 0 };
	int        downs = state_downs, ups = state_ups;

	ctl("{\"cmd\":\"fault\",\"method\":\"Status\",\"drop\":true,\"count\":1}");
	status_call(&r, 10000, NULL);
	WAIT(&r);
	CHECK("dropped connection: UNAVAILABLE", r.code == GRPC_UNAVAILABLE);
	res_clear(&r);
	run_until_ready(1, 30000);
	CHECK("reconnected after the drop", cri_ready(cri) && status_ok());
	CHECK("state callback: lost then ready", state_downs > downs && state_ups > ups);

	/* runtime down: fail fast, then back */
	ctl("{\"cmd\":\"down\",\"grace_ms\":0}");
	run_until_ready(0, 30000);
	CHECK("runtime down: not ready", !cri_ready(cri));
	status_call(&r, 10000, NULL);
	WAIT(&r);
	CHECK("runtime down: calls fail fast with UNAVAILABLE", r.code == GRPC_UNAVAILABLE);
	{
		struct cri_info info;

		cri_info(cri, &info);
		CHECK("cri_info says why", !info.ready && info.last_error != NULL);
	}
	res_clear(&r);
	ctl("{\"cmd\":\"up\"}");
	run_until_ready(1, 30000);
	CHECK("runtime up again: ready", cri_ready(cri) && status_ok());
}

static void
t_goaway(void)
{
	struct res r = { 0 }, r2 = { 0 };
	int        i, ok = 1;

	/* a slow call in flight while the server says GOAWAY and restarts */
	ctl("{\"cmd\":\"fault\",\"method\":\"ListContainers\",\"latency_ms\":300,\"count\":1}");
	list_call(&r, 20000, NULL);
	run_for(100);
	ctl("{\"cmd\":\"goaway\",\"grace_ms\":2000,\"restart\":true,\"down_ms\":0,"
	    "\"wait\":false}");
	WAIT(&r);
	CHECK("GOAWAY: the call in flight finishes within the grace", r.code == GRPC_OK);
	res_clear(&r);
	run_until_ready(1, 30000);
	for (i = 0; i < 20 && ok; i++) {
		status_call(&r2, 10000, NULL);
		WAIT(&r2);
		if (r2.code != GRPC_OK) {
			/* the restart may still be under way: a fail-fast UNAVAILABLE is fine */
			if (r2.code != GRPC_UNAVAILABLE)
				ok = 0;
			run_until_ready(1, 30000);
		}
		res_clear(&r2);
	}
	CHECK("GOAWAY: new calls go to a new connection", ok && status_ok());
	/* goaway as a fault while answering */
	ctl("{\"cmd\":\"fault\",\"method\":\"Status\",\"goaway\":{\"grace_ms\":500},\"count\":1}");
	status_call(&r, 20000, NULL);
	WAIT(&r);
	CHECK("GOAWAY fault: the call still answers", r.code == GRPC_OK);
	res_clear(&r);
	run_until_ready(1, 30000);
	for (i = 0; i < 50 && !status_ok(); i++)
		run_until_ready(1, 30000);
	CHECK("after GOAWAY fault: calls work", status_ok());
}

static void
t_unimplemented(const char *ep)
{
	struct cri     *saved = cri;
	struct cri_info info;
	int64_t         end;

	ctl("{\"cmd\":\"fault\",\"method\":\"Version\",\"code\":\"UNIMPLEMENTED\","
	    "\"message\":\"unknown service runtime.v1.RuntimeService\"}");
	cri = cri_new(base, ep, NULL, NULL, NULL);
	end = now_mono_ms() + 20000;
	for (;;) {
		cri_info(cri, &info);
		if ((info.last_error && strstr(info.last_error, "UNIMPLEMENTED")) ||
		    now_mono_ms() > end)
			break;
		run_for(20);
	}
	CHECK("runtime without runtime.v1: not ready, clear error",
	    !info.ready && info.last_error &&
	        strstr(info.last_error, "does not serve the CRI v1 API"));
	cri_free(cri);
	cri = saved;
	ctl("{\"cmd\":\"clear_faults\"}");
}

static void
t_bad_endpoint(void)
{
	char  err[256];
	char *p;

	p = cri_parse_endpoint("/run/x.sock", err, sizeof(err));
	CHECK("endpoint without unix:// rejected", p == NULL && strstr(err, "unix://"));
	p = cri_parse_endpoint("unix://run/x.sock", err, sizeof(err));
	CHECK("relative endpoint rejected", p == NULL);
	p = cri_parse_endpoint("tcp://1.2.3.4:5", err, sizeof(err));
	CHECK("tcp endpoint rejected", p == NULL);
	p = cri_parse_endpoint("unix:///run/containerd/containerd.sock", err, sizeof(err));
	CHECK("unix:///path accepted", p && strcmp(p, "/run/containerd/containerd.sock") == 0);
	free(p);
	CHECK(
	    "cri_new on a bad endpoint: NULL", cri_new(base, "http://x", NULL, NULL, NULL) == NULL);
}

static void
t_missing_socket(void)
{
	struct cri     *saved = cri;
	struct res      r = { 0 };
	struct cri_info info;

	cri = cri_new(base, "unix:///nonexistent/klet-cri-test.sock", NULL, NULL, NULL);
	status_call(&r, 10000, NULL);
	WAIT(&r);
	CHECK("missing socket: UNAVAILABLE, fast", r.code == GRPC_UNAVAILABLE);
	cri_info(cri, &info);
	CHECK("missing socket: not ready, error names the socket",
	    !info.ready && info.last_error && strstr(info.last_error, "klet-cri-test.sock"));
	res_clear(&r);
	status_call(&r, 10000, NULL);
	cri_free(cri); /* with a call pending: its callback never runs */
	run_for(50);
	CHECK("cri_free with a pending call: no callback", r.ncalls == 0);
	cri = saved;
}

static int
fake_main(const char *sock, const char *logdir)
{
	char ep[600], ctlp[600];

	snprintf(ep, sizeof(ep), "unix://%s", sock);
	snprintf(ctlp, sizeof(ctlp), "%s.ctl", sock);
	ctl_path = ctlp;
	t_bad_endpoint();
	t_missing_socket();
	cri = cri_new(base, ep, NULL, on_state, NULL);
	CHECK("cri_new", cri != NULL);
	CHECK("ready after Version", run_until_ready(1, 30000));
	t_version("fakecri");
	{
		Runtime__V1__StatusRequest req = RUNTIME__V1__STATUS_REQUEST__INIT;
		struct res                 r = { 0 };

		req.verbose = 1;
		cri_status(cri, &req, 0, status_cb, &r, NULL);
		WAIT(&r);
		CHECK("Status: RuntimeReady and NetworkReady",
		    r.code == GRPC_OK && r.m && ((Runtime__V1__StatusResponse *)r.m)->status &&
		        ((Runtime__V1__StatusResponse *)r.m)->status->n_conditions >= 2);
		res_clear(&r);
	}
	t_images();
	t_pod_flow("klet.local/busybox:1.35", logdir, 0, 1);
	t_pod_flow("klet.local/busybox:1.35", logdir, 1, 1);
	t_errors();
	t_deadlines();
	t_oversize();
	t_big_request();
	t_cancel();
	t_many();
	t_backpressure();
	t_drop_and_reconnect();
	t_goaway();
	t_unimplemented(ep);
	{
		struct cri_stats st;

		cri_stats(cri, &st);
		printf("# stats: calls %llu errors %llu cancelled %llu in_flight %llu "
		       "reconnects %llu\n",
		    (unsigned long long)st.calls, (unsigned long long)st.errors,
		    (unsigned long long)st.cancelled, (unsigned long long)st.in_flight,
		    (unsigned long long)st.reconnects);
		CHECK("stats counted",
		    st.calls > 2000 && st.errors > 0 && st.in_flight == 0 && st.reconnects >= 2);
	}
	cri_free(cri);
	return 0;
}

static int
containerd_main(const char *sock, const char *logdir)
{
	char ep[600];

	snprintf(ep, sizeof(ep), "unix://%s", sock);
	cri = cri_new(base, ep, NULL, on_state, NULL);
	CHECK("cri_new", cri != NULL);
	CHECK("ready after Version", run_until_ready(1, 60000));
	t_version("containerd");
	CHECK("ImageStatus klet.local/busybox:1.35", image_present("klet.local/busybox:1.35"));
	CHECK("ImageStatus klet.local/pause:3.9", image_present("klet.local/pause:3.9"));
	{
		Runtime__V1__StatusRequest req = RUNTIME__V1__STATUS_REQUEST__INIT;
		struct res                 r = { 0 };
		int                        netready = 0;
		size_t                     i;

		cri_status(cri, &req, 0, status_cb, &r, NULL);
		WAIT(&r);
		CHECK("Status", r.code == GRPC_OK && r.m);
		if (r.m && ((Runtime__V1__StatusResponse *)r.m)->status) {
			Runtime__V1__RuntimeStatus *st =
			    ((Runtime__V1__StatusResponse *)r.m)->status;

			for (i = 0; i < st->n_conditions; i++)
				if (strcmp(st->conditions[i]->type, "NetworkReady") == 0)
					netready = st->conditions[i]->status;
		}
		res_clear(&r);
		if (netready)
			t_pod_flow("klet.local/busybox:1.35", logdir, 0, 0);
		else
			printf(
			    "# NetworkReady false: pod network flow skipped, host network only\n");
	}
	t_pod_flow("klet.local/busybox:1.35", logdir, 1, 0);
	{
		Runtime__V1__ListContainersRequest req = RUNTIME__V1__LIST_CONTAINERS_REQUEST__INIT;
		struct res                         r = { 0 };

		cri_list_containers(cri, &req, 0, list_containers_cb, &r, NULL);
		WAIT(&r);
		CHECK("ListContainers", r.code == GRPC_OK);
		res_clear(&r);
	}
	cri_free(cri);
	return 0;
}

int
main(int argc, char **argv)
{
	int rc = 2;

	/* LOGDIR: the pods' log directory, the test's own (the runtime writes the containers'
	 * logs there). */
	if (argc < 4) {
		fprintf(stderr, "usage: %s fake|containerd SOCK LOGDIR\n", argv[0]);
		return 2;
	}
	signal(SIGPIPE, SIG_IGN); /* as kletd's loop does */
	log_init(getenv("KLET_TEST_V") ? atoi(getenv("KLET_TEST_V")) : 0, 0);
	base = event_base_new();
	t_start = now_mono_ms();
	if (strcmp(argv[1], "fake") == 0)
		rc = fake_main(argv[2], argv[3]);
	else if (strcmp(argv[1], "containerd") == 0)
		rc = containerd_main(argv[2], argv[3]);
	/* let deferred frees run */
	run_for(50);
	event_base_free(base);
	(void)rc;
	printf("%d passed, %d failed\n", npass, nfail);
	return nfail ? 1 : 0;
}
