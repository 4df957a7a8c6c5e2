/* container_config.c — the container config (the kubelet's generateContainerConfig):
 * env with the downward API and $(VAR) expansion, mounts for emptyDir and hostPath, the
 * termination-message file, the kubelet's labels and annotations, Linux resources and
 * security context, the log path NAME/RESTARTCOUNT.log. */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <unistd.h>

#include "kuberuntime/kuberuntime.h"
#include "kuberuntime/internal.h"
#include "core/log.h"
#include "core/util.h"
#include "volumes/volumes.h"
#include "pod/hash.h"

#define KR_MAP_SET(msg, field, desc, k, v)                                                         \
	kr_map_set((void ***)&(msg)->field, &(msg)->n_##field, &(desc), (k), (v))

/* Paths the runtime masks or makes read-only in unprivileged containers (the kubelet's). */
static const char *const kr_masked_paths[] = {
	"/proc/acpi",
	"/proc/kcore",
	"/proc/keys",
	"/proc/latency_stats",
	"/proc/timer_list",
	"/proc/timer_stats",
	"/proc/sched_debug",
	"/proc/scsi",
	"/sys/firmware",
	"/sys/devices/virtual/powercap",
};
static const char *const kr_readonly_paths[] = {
	"/proc/asound",
	"/proc/bus",
	"/proc/fs",
	"/proc/irq",
	"/proc/sys",
	"/proc/sysrq-trigger",
};

/* ---- $(VAR) expansion ---- */

char *
kr_expand(const char *s, char *const *keys, char *const *vals, size_t n)
{
	size_t      cap = strlen(s) + 1, len = 0, i, nl;
	char       *out = xmalloc(cap);
	const char *p = s, *close;
	const char *add;
	size_t      addlen;

	while (*p != '\0') {
		add = p;
		addlen = 1;
		if (p[0] == '$' && p[1] == '$') {
			addlen = 1;
			p += 2;
		} else if (p[0] == '$' && p[1] == '(' && (close = strchr(p + 2, ')')) != NULL) {
			nl = close - (p + 2);
			addlen = close + 1 - p;
			/* The last definition of a name wins. */
			for (i = n; i > 0; i--) {
				if (strlen(keys[i - 1]) == nl &&
				    strncmp(keys[i - 1], p + 2, nl) == 0) {
					add = vals[i - 1];
					addlen = strlen(vals[i - 1]);
					break;
				}
			}
			p = close + 1;
		} else {
			p++;
		}
		if (len + addlen + 1 > cap) {
			cap = (len + addlen + 1) * 2;
			out = xreallocarray(out, cap, 1);
		}
		memcpy(out + len, add, addlen);
		len += addlen;
	}
	out[len] = '\0';
	return out;
}

/* ---- downward API ---- */

static char *
kr_join(const struct strv *v, const char *fallback)
{
	size_t i, len = 1;
	char  *out;

	if (v == NULL || v->n == 0)
		return xstrdup(fallback != NULL ? fallback : "");
	for (i = 0; i < v->n; i++)
		len += strlen(v->v[i]) + 1;
	out = xcalloc(1, len);
	for (i = 0; i < v->n; i++) {
		if (i > 0)
			strcat(out, ",");
		strcat(out, v->v[i]);
	}
	return out;
}

static int
kr_field_ref(const struct kr_env *env, const struct pod *pod, const char *path,
    const struct kr_cinput *in, char **out, char *err, size_t errlen)
{
	*out = NULL;
	if (strcmp(path, "spec.nodeName") == 0)
		*out = xstrdup(pod->node_name != NULL ? pod->node_name
		                                      : (env->node_name ? env->node_name : ""));
	else if (strcmp(path, "spec.serviceAccountName") == 0)
		*out = xstrdup(pod->service_account ? pod->service_account : "");
	else if (strcmp(path, "status.podIP") == 0)
		*out = xstrdup(in->pod_ip ? in->pod_ip : "");
	else if (strcmp(path, "status.podIPs") == 0)
		*out = kr_join(in->pod_ips, in->pod_ip);
	else if (strcmp(path, "status.hostIP") == 0 || strcmp(path, "status.hostIPs") == 0)
		*out = xstrdup(env->host_ip ? env->host_ip : "");
	if (*out != NULL)
		return 0;
	/* The metadata fields, as a downwardAPI volume reads them; whole label and annotation
	 * maps are for volumes only. */
	if (strcmp(path, "metadata.labels") != 0 && strcmp(path, "metadata.annotations") != 0 &&
	    vol_field_value(pod, path, out, err, errlen) == 0)
		return 0;
	snprintf(err, errlen, "unsupported fieldRef fieldPath \"%s\"", path);
	return -1;
}

static int
kr_resource_ref(const struct kr_env *env, const struct pod *pod, const struct container *self,
    const struct env_var *e, char **out, char *err, size_t errlen)
{
	const struct container *c = self;
	const struct quantity  *q = NULL;
	const char             *res = e->ref_key;
	int64_t                 v = 0, div = e->ref_divisor_milli > 0 ? e->ref_divisor_milli : 1000;
	int                     is_limit, is_cpu;
	const char             *name;

	if (e->ref_container != NULL && e->ref_container[0] != '\0' &&
	    (c = pod_find_container(pod, e->ref_container)) == NULL) {
		snprintf(err, errlen, "resourceFieldRef: no container \"%s\"", e->ref_container);
		return -1;
	}
	if (res == NULL)
		goto bad;
	if (strncmp(res, "limits.", 7) == 0)
		is_limit = 1;
	else if (strncmp(res, "requests.", 9) == 0)
		is_limit = 0;
	else
		goto bad;
	name = strchr(res, '.') + 1;
	is_cpu = strcmp(name, "cpu") == 0;
	if (!is_cpu && strcmp(name, "memory") != 0 && strcmp(name, "ephemeral-storage") != 0)
		goto bad;
	if (is_limit) {
		q = resource_list_get(&c->c_resources.limits, name);
		if (q != NULL && q->milli != 0)
			v = q->milli;
		else if (is_cpu)
			v = env->node_cpu_milli; /* no limit: the node's allocatable */
		else if (strcmp(name, "memory") == 0)
			v = env->node_mem_milli;
	} else {
		q = resource_list_get(&c->c_resources.requests, name);
		if (q == NULL) /* requests default to limits */
			q = resource_list_get(&c->c_resources.limits, name);
		v = q != NULL ? q->milli : 0;
	}
	/* Rounded up to a whole number of divisors, as the kubelet. */
	v = (v + div - 1) / div;
	xasprintf(out, "%" PRId64, v);
	return 0;
bad:
	snprintf(
	    err, errlen, "unsupported resourceFieldRef resource \"%s\"", res != NULL ? res : "");
	return -1;
}

/* 1 for a static pod (any source but the API server): it may not use API objects. */
static int
kr_is_static(const struct pod *pod)
{
	const char *src = kvlist_get(&pod->annotations, "kubernetes.io/config.source");

	return src != NULL && strcmp(src, "api") != 0;
}

/* An object of the pod's namespace for env: 0 with *obj, 1 when it is missing and the
 * reference optional (skip), -1 with err. */
static int
kr_object(const struct kr_env *env, const struct pod *pod, enum vobj_kind kind, const char *name,
    int optional, const struct vobj **obj, char *err, size_t errlen)
{
	const char *what = kind == VOBJ_SECRET ? "secret" : "configmap";
	int         rc;

	*obj = NULL;
	if (kr_is_static(pod)) {
		snprintf(err, errlen, "a static pod may not use %s \"%s\"", what,
		    name != NULL ? name : "");
		return -1;
	}
	if (env->volumes == NULL && optional)
		return 1; /* no API server: an optional reference is left out */
	rc = volumes_get(env->volumes, kind, pod->ns != NULL ? pod->ns : "default", name, pod->uid,
	    obj, err, errlen);
	if (rc == VOLUMES_OK)
		return 0;
	if (rc == VOLUMES_NOT_FOUND && optional)
		return 1;
	return -1;
}

/* valueFrom configMapKeyRef / secretKeyRef (the kubelet's makeEnvironmentVariables). */
static int
kr_object_ref(const struct kr_env *env, const struct pod *pod, const struct env_var *e, char **out,
    char *err, size_t errlen)
{
	enum vobj_kind          kind = e->src == ENV_SECRET_KEY_REF ? VOBJ_SECRET : VOBJ_CONFIG_MAP;
	const struct vobj      *obj;
	const struct vobj_item *it;
	int                     rc;

	if ((rc = kr_object(env, pod, kind, e->ref_name, e->optional, &obj, err, errlen)) != 0)
		return rc == 1 ? 0 : -1;
	it = vobj_find(obj, e->ref_key);
	if (it != NULL && it->binary)
		it = NULL; /* binaryData is not for env */
	if (it == NULL) {
		if (e->optional)
			return 0;
		snprintf(err, errlen, "couldn't find key %s in %s %s/%s",
		    e->ref_key != NULL ? e->ref_key : "",
		    kind == VOBJ_SECRET ? "Secret" : "ConfigMap",
		    pod->ns != NULL ? pod->ns : "default", e->ref_name);
		return -1;
	}
	*out = xstrndup(it->val, it->len);
	return 0;
}

int
kr_env_value(const struct kr_env *env, const struct pod *pod, const struct container *c,
    const struct env_var *e, const struct kr_cinput *in, char **out, char *err, size_t errlen)
{
	*out = NULL;
	switch (e->src) {
	case ENV_VALUE:
		*out = xstrdup(e->value != NULL ? e->value : "");
		return 0;
	case ENV_FIELD_REF:
		return kr_field_ref(
		    env, pod, e->ref_key != NULL ? e->ref_key : "", in, out, err, errlen);
	case ENV_RESOURCE_FIELD_REF:
		return kr_resource_ref(env, pod, c, e, out, err, errlen);
	case ENV_CONFIG_MAP_KEY_REF:
	case ENV_SECRET_KEY_REF:
		return kr_object_ref(env, pod, e, out, err, errlen);
	}
	snprintf(err, errlen, "env %s: unknown source", e->name);
	return -1;
}

/* ---- mounts ---- */

static int
kr_host_path_check(const struct volume *v, char *err, size_t errlen)
{
	const char *t = v->v_host_path_type != NULL ? v->v_host_path_type : "";
	struct stat st;
	int         fd, have;

	have = stat(v->v_path, &st) == 0;
	if (t[0] == '\0')
		return 0;
	if (strcmp(t, "DirectoryOrCreate") == 0) {
		if (have && !S_ISDIR(st.st_mode))
			goto wrong;
		if (!have && mkdirs(v->v_path, 0755) == -1)
			goto syserr;
		return 0;
	}
	if (strcmp(t, "FileOrCreate") == 0) {
		if (have && S_ISDIR(st.st_mode))
			goto wrong;
		if (!have) {
			char *dir = xstrdup(v->v_path), *sl = strrchr(dir, '/');

			if (sl != NULL && sl != dir) {
				*sl = '\0';
				mkdirs(dir, 0755);
			}
			free(dir);
			if ((fd = open(v->v_path, O_CREAT | O_WRONLY | O_CLOEXEC, 0644)) == -1)
				goto syserr;
			close(fd);
		}
		return 0;
	}
	if (!have) {
		snprintf(err, errlen, "hostPath type check failed: %s does not exist", v->v_path);
		return -1;
	}
	if ((strcmp(t, "Directory") == 0 && S_ISDIR(st.st_mode)) ||
	    (strcmp(t, "File") == 0 && S_ISREG(st.st_mode)) ||
	    (strcmp(t, "Socket") == 0 && S_ISSOCK(st.st_mode)) ||
	    (strcmp(t, "CharDevice") == 0 && S_ISCHR(st.st_mode)) ||
	    (strcmp(t, "BlockDevice") == 0 && S_ISBLK(st.st_mode)))
		return 0;
	if (strcmp(t, "Directory") != 0 && strcmp(t, "File") != 0 && strcmp(t, "Socket") != 0 &&
	    strcmp(t, "CharDevice") != 0 && strcmp(t, "BlockDevice") != 0) {
		snprintf(err, errlen, "hostPath %s: unknown type \"%s\"", v->v_path, t);
		return -1;
	}
wrong:
	snprintf(err, errlen, "hostPath type check failed: %s is not a %s", v->v_path, t);
	return -1;
syserr:
	snprintf(err, errlen, "hostPath %s: %s", v->v_path, strerror(errno));
	return -1;
}

static const struct volume *
kr_find_volume(const struct pod *pod, const char *name)
{
	size_t i;

	for (i = 0; i < pod->nvolumes; i++)
		if (pod->volumes[i].v_name != NULL && strcmp(pod->volumes[i].v_name, name) == 0)
			return &pod->volumes[i];
	return NULL;
}

static void
kr_add_mount(Runtime__V1__ContainerConfig *cc, const char *host, const char *ctr, int ro,
    enum mount_propagation prop)
{
	Runtime__V1__Mount *m = kr_msg_new(&runtime__v1__mount__descriptor);

	m->host_path = xstrdup(host);
	m->container_path = xstrdup(ctr);
	m->readonly = ro;
	switch (prop) {
	case PROP_HOST_TO_CONTAINER:
		m->propagation = RUNTIME__V1__MOUNT_PROPAGATION__PROPAGATION_HOST_TO_CONTAINER;
		break;
	case PROP_BIDIRECTIONAL:
		m->propagation = RUNTIME__V1__MOUNT_PROPAGATION__PROPAGATION_BIDIRECTIONAL;
		break;
	default:
		m->propagation = RUNTIME__V1__MOUNT_PROPAGATION__PROPAGATION_PRIVATE;
		break;
	}
	cc->mounts = xreallocarray(cc->mounts, cc->n_mounts + 1, sizeof(*cc->mounts));
	cc->mounts[cc->n_mounts++] = m;
}

/* A downwardAPI volume item's resourceFieldRef (volumes.h vol_resource_fn). */
static int
kr_vol_resource(const struct pod *pod, const struct key_to_path *kp, char **out, char *err,
    size_t errlen, void *arg)
{
	const struct kr_env    *env = arg;
	const struct container *c;
	struct env_var          e;

	*out = NULL;
	if (kp->res_container == NULL || kp->res_container[0] == '\0' ||
	    (c = pod_find_container(pod, kp->res_container)) == NULL) {
		snprintf(err, errlen, "resourceFieldRef %s: no container \"%s\"", kp->resource,
		    kp->res_container != NULL ? kp->res_container : "");
		return -1;
	}
	memset(&e, 0, sizeof(e));
	e.name = kp->path;
	e.src = ENV_RESOURCE_FIELD_REF;
	e.ref_key = kp->resource;
	e.ref_container = kp->res_container;
	e.ref_divisor_milli = kp->res_divisor_milli;
	return kr_resource_ref(env, pod, c, &e, out, err, errlen);
}

static int
kr_mounts(const struct kr_env *env, const struct pod *pod, const struct container *c,
    Runtime__V1__ContainerConfig *cc, char *err, size_t errlen)
{
	const struct volume_mount *vm;
	const struct volume       *v;
	char                      *host, *full;
	size_t                     i;
	int                        ro;

	for (i = 0; i < c->c_nmounts; i++) {
		vm = &c->c_mounts[i];
		ro = 0;
		if ((v = kr_find_volume(pod, vm->name)) == NULL) {
			snprintf(
			    err, errlen, "volumeMount \"%s\": no volume of that name", vm->name);
			return -1;
		}
		switch (v->v_kind) {
		case VOL_EMPTY_DIR:
			host = path_join(env->root_dir, 5, "pods", pod->uid, "volumes",
			    "kubernetes.io~empty-dir", v->v_name);
			if (host == NULL || mkdirs(host, 0777) == -1) {
				snprintf(err, errlen, "emptyDir %s: %s: %s", v->v_name,
				    host != NULL ? host : "(invalid name)", strerror(errno));
				free(host);
				return -1;
			}
			break;
		case VOL_CONFIG_MAP:
		case VOL_SECRET:
		case VOL_PROJECTED:
		case VOL_DOWNWARD_API:
			/* volumes: files from API objects, tokens and the downward API. */
			if (kr_is_static(pod) &&
			    (v->v_kind == VOL_CONFIG_MAP || v->v_kind == VOL_SECRET)) {
				snprintf(err, errlen,
				    "volume \"%s\": a static pod may not use %s "
				    "\"%s\"",
				    v->v_name, v->v_kind == VOL_SECRET ? "secret" : "configmap",
				    v->v_source != NULL ? v->v_source : "");
				return -1;
			}
			if (env->volumes == NULL
			        ? volumes_setup_once(env->root_dir, pod, v, kr_vol_resource,
			              (void *)env, &host, err, errlen) == -1
			        : volumes_setup(env->volumes, pod, v, kr_vol_resource, (void *)env,
			              &host, err, errlen) == -1)
				return -1;
			ro = 1; /* always read-only, as the kubelet mounts them */
			break;
		case VOL_HOST_PATH:
			if (v->v_path == NULL || kr_host_path_check(v, err, errlen) == -1) {
				if (v->v_path == NULL)
					snprintf(err, errlen, "hostPath %s: no path", v->v_name);
				return -1;
			}
			host = xstrdup(v->v_path);
			break;
		default:
			snprintf(err, errlen, "volume \"%s\": %s volumes are not supported yet",
			    v->v_name, v->v_kind_name != NULL ? v->v_kind_name : "this kind of");
			return -1;
		}
		if (vm->sub_path != NULL && vm->sub_path[0] != '\0') {
			if (vm->sub_path[0] == '/' || strstr(vm->sub_path, "..") != NULL) {
				snprintf(err, errlen, "volumeMount \"%s\": invalid subPath \"%s\"",
				    vm->name, vm->sub_path);
				free(host);
				return -1;
			}
			full = xsprintf("%s/%s", host, vm->sub_path);
			free(host);
			host = full;
			if (v->v_kind == VOL_EMPTY_DIR || access(host, F_OK) != 0)
				mkdirs(host, 0777);
		}
		kr_add_mount(cc, host, vm->mount_path, ro || vm->read_only || v->v_read_only,
		    vm->propagation);
		free(host);
	}
	return 0;
}

/* The termination-message file: ROOT/pods/UID/containers/NAME/RANDOM, mounted at the
 * container's terminationMessagePath. */
static void
kr_term_file(const struct kr_env *env, const struct pod *pod, const struct container *c,
    Runtime__V1__ContainerConfig *cc)
{
	char *dir, *file;
	int   fd;

	if (c->c_term_msg_path == NULL || c->c_term_msg_path[0] == '\0')
		return;
	dir = path_join(env->root_dir, 4, "pods", pod->uid, "containers", c->c_name);
	if (dir == NULL || mkdirs(dir, 0755) == -1) {
		log_warn("%s: %s", __func__, dir != NULL ? dir : "(invalid name)");
		free(dir);
		return;
	}
	file = xsprintf("%s/%08x", dir, (unsigned)(now_mono_us() ^ (uint64_t)random()));
	if ((fd = open(file, O_CREAT | O_WRONLY | O_CLOEXEC, 0666)) == -1) {
		log_warn("%s: %s", __func__, file);
	} else {
		close(fd);
		chmod(file, 0666);
		kr_add_mount(cc, file, c->c_term_msg_path, 0, PROP_NONE);
	}
	free(file);
	free(dir);
}

/* ---- annotations that need JSON ---- */

static void
kr_json_str(FILE *f, const char *s)
{
	fputc('"', f);
	for (; s != NULL && *s != '\0'; s++) {
		unsigned char ch = (unsigned char)*s;

		if (ch == '"' || ch == '\\')
			fprintf(f, "\\%c", ch);
		else if (ch < 0x20)
			fprintf(f, "\\u%04x", ch);
		else
			fputc(ch, f);
	}
	fputc('"', f);
}

static char *
kr_handler_json(const struct handler *h)
{
	char  *buf = NULL;
	size_t len = 0, i;
	FILE  *f = open_memstream(&buf, &len);

	if (f == NULL)
		fatal("%s: open_memstream", __func__);
	switch (h->h_kind) {
	case HANDLER_EXEC:
		fputs("{\"exec\":{\"command\":[", f);
		for (i = 0; i < h->h_exec.n; i++) {
			if (i > 0)
				fputc(',', f);
			kr_json_str(f, h->h_exec.v[i]);
		}
		fputs("]}}", f);
		break;
	case HANDLER_HTTP_GET:
		fputs("{\"httpGet\":{\"path\":", f);
		kr_json_str(f, h->h_path ? h->h_path : "");
		fputs(",\"port\":", f);
		if (h->h_port.is_str)
			kr_json_str(f, h->h_port.str);
		else
			fprintf(f, "%d", h->h_port.num);
		if (h->h_host != NULL) {
			fputs(",\"host\":", f);
			kr_json_str(f, h->h_host);
		}
		fputs(",\"scheme\":", f);
		kr_json_str(f, h->h_scheme ? h->h_scheme : "HTTP");
		fputs("}}", f);
		break;
	case HANDLER_SLEEP:
		fprintf(f, "{\"sleep\":{\"seconds\":%" PRId64 "}}", h->h_sleep_seconds);
		break;
	default:
		fputs("{}", f);
		break;
	}
	fclose(f);
	return buf;
}

static char *
kr_ports_json(const struct container *c)
{
	static const char *const proto[] = { "TCP", "UDP", "SCTP" };
	char                    *buf = NULL;
	size_t                   len = 0, i;
	FILE                    *f = open_memstream(&buf, &len);

	if (f == NULL)
		fatal("%s: open_memstream", __func__);
	fputc('[', f);
	for (i = 0; i < c->c_nports; i++) {
		const struct container_port *p = &c->c_ports[i];

		if (i > 0)
			fputc(',', f);
		fputc('{', f);
		if (p->name != NULL) {
			fputs("\"name\":", f);
			kr_json_str(f, p->name);
			fputc(',', f);
		}
		if (p->host_port != 0)
			fprintf(f, "\"hostPort\":%d,", p->host_port);
		fprintf(f, "\"containerPort\":%d,\"protocol\":\"%s\"}", p->container_port,
		    proto[p->protocol <= PROTO_SCTP ? p->protocol : 0]);
	}
	fputc(']', f);
	fclose(f);
	return buf;
}

/* ---- resources and security ---- */

static Runtime__V1__LinuxContainerResources *
kr_resources(const struct kr_env *env, const struct pod *pod, const struct container *c)
{
	Runtime__V1__LinuxContainerResources *r =
	    kr_msg_new(&runtime__v1__linux_container_resources__descriptor);
	const struct quantity *creq, *clim, *mreq, *mlim;
	int64_t                cpu_req = 0, shares, quota, mem_req = 0;

	creq = resource_list_get(&c->c_resources.requests, "cpu");
	clim = resource_list_get(&c->c_resources.limits, "cpu");
	mreq = resource_list_get(&c->c_resources.requests, "memory");
	mlim = resource_list_get(&c->c_resources.limits, "memory");
	if (creq != NULL)
		cpu_req = creq->milli;
	else if (clim != NULL)
		cpu_req = clim->milli;
	/* milli-CPU to shares: 1 core = 1024, never below 2. */
	shares = cpu_req * 1024 / 1000;
	r->cpu_shares = shares < 2 ? 2 : shares;
	if (clim != NULL && clim->milli > 0) {
		quota = clim->milli * 100000 / 1000;
		r->cpu_period = 100000;
		r->cpu_quota = quota < 1000 ? 1000 : quota;
	}
	if (mlim != NULL && mlim->milli > 0)
		r->memory_limit_in_bytes = mlim->milli / 1000;
	if (mreq != NULL)
		mem_req = mreq->milli;
	else if (mlim != NULL)
		mem_req = mlim->milli;
	switch (kr_pod_qos(pod)) {
	case QOS_GUARANTEED:
		r->oom_score_adj = -997;
		break;
	case QOS_BEST_EFFORT:
		r->oom_score_adj = 1000;
		break;
	case QOS_BURSTABLE: {
		int64_t adj = 1000;

		if (env->node_mem_milli > 0)
			adj = 1000 - (1000 * (mem_req / 1000)) / (env->node_mem_milli / 1000);
		if (adj < 2)
			adj = 2;
		if (adj > 999)
			adj = 999;
		r->oom_score_adj = adj;
		break;
	}
	}
	return r;
}

static Runtime__V1__LinuxContainerSecurityContext *
kr_security(const struct pod *pod, const struct container *c)
{
	Runtime__V1__LinuxContainerSecurityContext *sc =
	    kr_msg_new(&runtime__v1__linux_container_security_context__descriptor);
	const struct security_context     *cs = c->c_security;
	const struct pod_security_context *ps = pod->security;
	Runtime__V1__Int64Value           *iv;
	size_t                             i;

	sc->namespace_options = kr_namespaces(pod);
	if (cs != NULL && cs->run_as_user.set) {
		iv = kr_msg_new(&runtime__v1__int64_value__descriptor);
		iv->value = cs->run_as_user.v;
		sc->run_as_user = iv;
	} else if (ps != NULL && ps->run_as_user.set) {
		iv = kr_msg_new(&runtime__v1__int64_value__descriptor);
		iv->value = ps->run_as_user.v;
		sc->run_as_user = iv;
	}
	if (cs != NULL && cs->run_as_group.set) {
		iv = kr_msg_new(&runtime__v1__int64_value__descriptor);
		iv->value = cs->run_as_group.v;
		sc->run_as_group = iv;
	} else if (ps != NULL && ps->run_as_group.set) {
		iv = kr_msg_new(&runtime__v1__int64_value__descriptor);
		iv->value = ps->run_as_group.v;
		sc->run_as_group = iv;
	}
	if (ps != NULL) {
		for (i = 0; i < ps->nsupplemental_groups; i++) {
			sc->supplemental_groups = xreallocarray(sc->supplemental_groups,
			    sc->n_supplemental_groups + 1, sizeof(int64_t));
			sc->supplemental_groups[sc->n_supplemental_groups++] =
			    ps->supplemental_groups[i];
		}
		if (ps->fs_group.set) {
			sc->supplemental_groups = xreallocarray(sc->supplemental_groups,
			    sc->n_supplemental_groups + 1, sizeof(int64_t));
			sc->supplemental_groups[sc->n_supplemental_groups++] = ps->fs_group.v;
		}
	}
	sc->seccomp =
	    kr_seccomp_profile(cs != NULL ? &cs->seccomp : NULL, ps != NULL ? &ps->seccomp : NULL);
	if (cs != NULL) {
		sc->privileged = cs->privileged.v;
		sc->readonly_rootfs = cs->read_only_root_fs.v;
		if (cs->allow_privilege_escalation.set)
			sc->no_new_privs = !cs->allow_privilege_escalation.v;
		if (cs->cap_add.n > 0 || cs->cap_drop.n > 0) {
			sc->capabilities = kr_msg_new(&runtime__v1__capability__descriptor);
			for (i = 0; i < cs->cap_add.n; i++)
				kr_strv_add(&sc->capabilities->add_capabilities,
				    &sc->capabilities->n_add_capabilities, cs->cap_add.v[i]);
			for (i = 0; i < cs->cap_drop.n; i++)
				kr_strv_add(&sc->capabilities->drop_capabilities,
				    &sc->capabilities->n_drop_capabilities, cs->cap_drop.v[i]);
		}
	}
	if (!sc->privileged &&
	    !(cs != NULL && cs->proc_mount != NULL && strcmp(cs->proc_mount, "Unmasked") == 0)) {
		for (i = 0; i < nitems(kr_masked_paths); i++)
			kr_strv_add(&sc->masked_paths, &sc->n_masked_paths, kr_masked_paths[i]);
		for (i = 0; i < nitems(kr_readonly_paths); i++)
			kr_strv_add(
			    &sc->readonly_paths, &sc->n_readonly_paths, kr_readonly_paths[i]);
	}
	return sc;
}

/* ---- the container config ---- */

/* Sets name to v (taken): a later definition replaces an earlier one in place. */
static void
kr_env_put(char ***keys, char ***vals, size_t *n, const char *name, char *v)
{
	size_t i;

	for (i = 0; i < *n; i++) {
		if (strcmp((*keys)[i], name) == 0) {
			free((*vals)[i]);
			(*vals)[i] = v;
			return;
		}
	}
	*keys = xreallocarray(*keys, *n + 1, sizeof(**keys));
	*vals = xreallocarray(*vals, *n + 1, sizeof(**vals));
	(*keys)[*n] = xstrdup(name);
	(*vals)[*n] = v;
	(*n)++;
}

static int
kr_envs(const struct kr_env *env, const struct pod *pod, const struct container *c,
    const struct kr_cinput *in, Runtime__V1__ContainerConfig *cc, char *err, size_t errlen)
{
	char                 **keys = NULL, **vals = NULL, *raw, *v;
	size_t                 n = 0, i;
	int                    rc = 0;
	Runtime__V1__KeyValue *kv;

	for (i = 0; rc == 0 && i < c->c_nenv_from; i++) {
		const struct env_from *ef = &c->c_env_from[i];
		const struct vobj     *obj;
		size_t                 j;
		int                    r;

		r = kr_object(env, pod, ef->is_secret ? VOBJ_SECRET : VOBJ_CONFIG_MAP, ef->name,
		    ef->optional, &obj, err, errlen);
		if (r == -1)
			rc = -1;
		for (j = 0; r == 0 && j < obj->nitems; j++) {
			const struct vobj_item *it = &obj->items[j];

			/* Only data keys that can be variable names (the kubelet skips the
			 * others with an event). */
			if (it->binary || it->key[0] == '\0' || strchr(it->key, '=') != NULL)
				continue;
			raw = xsprintf("%s%s", ef->prefix != NULL ? ef->prefix : "", it->key);
			kr_env_put(&keys, &vals, &n, raw, xstrndup(it->val, it->len));
			free(raw);
		}
	}
	for (i = 0; rc == 0 && i < c->c_nenv; i++) {
		if (kr_env_value(env, pod, c, &c->c_env[i], in, &raw, err, errlen) == -1) {
			rc = -1;
			break;
		}
		if (raw == NULL)
			continue;
		/* Only literal values are expanded, against the variables before them. */
		if (c->c_env[i].src == ENV_VALUE) {
			v = kr_expand(raw, keys, vals, n);
			free(raw);
		} else {
			v = raw;
		}
		kr_env_put(&keys, &vals, &n, c->c_env[i].name, v);
	}
	if (rc == 0) {
		for (i = 0; i < c->c_command.n; i++)
			cc->command = xreallocarray(cc->command, cc->n_command + 1, sizeof(char *)),
			cc->command[cc->n_command++] = kr_expand(c->c_command.v[i], keys, vals, n);
		for (i = 0; i < c->c_args.n; i++)
			cc->args = xreallocarray(cc->args, cc->n_args + 1, sizeof(char *)),
			cc->args[cc->n_args++] = kr_expand(c->c_args.v[i], keys, vals, n);
		for (i = 0; i < n; i++) {
			kv = kr_msg_new(&runtime__v1__key_value__descriptor);
			kv->key = keys[i];
			kv->value = vals[i];
			keys[i] = vals[i] = NULL;
			cc->envs = xreallocarray(cc->envs, cc->n_envs + 1, sizeof(*cc->envs));
			cc->envs[cc->n_envs++] = kv;
		}
	}
	for (i = 0; i < n; i++) {
		free(keys[i]);
		free(vals[i]);
	}
	free(keys);
	free(vals);
	return rc;
}

Runtime__V1__ContainerConfig *
kr_container_config(const struct kr_env *env, const struct pod *pod, const struct container *c,
    const struct kr_cinput *in, char *err, size_t errlen)
{
	Runtime__V1__ContainerConfig   *cc = kr_msg_new(&runtime__v1__container_config__descriptor);
	Runtime__V1__ContainerMetadata *md =
	    kr_msg_new(&runtime__v1__container_metadata__descriptor);
	Runtime__V1__ImageSpec            *img = kr_msg_new(&runtime__v1__image_spec__descriptor);
	Runtime__V1__LinuxContainerConfig *lx =
	    kr_msg_new(&runtime__v1__linux_container_config__descriptor);
	char num[32], *s, *logdir;

	md->name = xstrdup(c->c_name);
	md->attempt = (uint32_t)in->restart_count;
	cc->metadata = md;
	img->image =
	    xstrdup(in->image_ref != NULL && in->image_ref[0] != '\0' ? in->image_ref : c->c_image);
	img->user_specified_image = xstrdup(c->c_image);
	cc->image = img;
	cc->linux = lx;
	if (c->c_working_dir != NULL)
		cc->working_dir = xstrdup(c->c_working_dir);
	cc->stdin = c->c_stdin;
	cc->stdin_once = c->c_stdin_once;
	cc->tty = c->c_tty;
	cc->log_path = xsprintf("%s/%d.log", c->c_name, in->restart_count);

	volumes_prefetch_pod(env->volumes, pod); /* volumes: one round trip for all */
	if (kr_envs(env, pod, c, in, cc, err, errlen) == -1 ||
	    kr_mounts(env, pod, c, cc, err, errlen) == -1) {
		kr_msg_free(cc);
		return NULL;
	}
	logdir = kuberuntime_pod_log_dir(env->logs_dir, pod);
	s = logdir != NULL ? path_join(logdir, 1, c->c_name) : NULL;
	if (s == NULL || mkdirs(s, 0755) == -1) {
		snprintf(err, errlen, "create container log directory %s: %s",
		    s != NULL ? s : "(invalid name)", strerror(errno));
		free(s);
		free(logdir);
		kr_msg_free(cc);
		return NULL;
	}
	free(s);
	free(logdir);
	kr_term_file(env, pod, c, cc);

	KR_MAP_SET(cc, labels, runtime__v1__container_config__labels_entry__descriptor,
	    KR_LABEL_POD_NAME, pod->name);
	KR_MAP_SET(cc, labels, runtime__v1__container_config__labels_entry__descriptor,
	    KR_LABEL_POD_NAMESPACE, pod->ns ? pod->ns : "default");
	KR_MAP_SET(cc, labels, runtime__v1__container_config__labels_entry__descriptor,
	    KR_LABEL_POD_UID, pod->uid);
	KR_MAP_SET(cc, labels, runtime__v1__container_config__labels_entry__descriptor,
	    KR_LABEL_CONTAINER_NAME, c->c_name);

#define ANN(k, v)                                                                                  \
	KR_MAP_SET(cc, annotations, runtime__v1__container_config__annotations_entry__descriptor,  \
	    (k), (v))
	snprintf(num, sizeof(num), "%" PRIx64, container_hash(c));
	ANN(KR_ANN_HASH, num);
	snprintf(num, sizeof(num), "%d", in->restart_count);
	ANN(KR_ANN_RESTART_COUNT, num);
	ANN(KR_ANN_TERM_MSG_PATH, c->c_term_msg_path ? c->c_term_msg_path : "");
	ANN(KR_ANN_TERM_MSG_POLICY,
	    c->c_term_msg_policy == TERM_MSG_FALLBACK_TO_LOGS ? "FallbackToLogsOnError" : "File");
	if (pod->deletion_grace.set) {
		snprintf(num, sizeof(num), "%" PRId64, pod->deletion_grace.v);
		ANN(KR_ANN_POD_DELETION_GRACE, num);
	}
	if (pod->termination_grace.set) {
		snprintf(num, sizeof(num), "%" PRId64, pod->termination_grace.v);
		ANN(KR_ANN_POD_TERM_GRACE, num);
	}
	if (c->c_pre_stop != NULL && c->c_pre_stop->h_kind != HANDLER_NONE) {
		s = kr_handler_json(c->c_pre_stop);
		ANN(KR_ANN_PRESTOP, s);
		free(s);
	}
	if (c->c_nports > 0) {
		s = kr_ports_json(c);
		ANN(KR_ANN_PORTS, s);
		free(s);
	}
#undef ANN
	lx->resources = kr_resources(env, pod, c);
	lx->security_context = kr_security(pod, c);
	return cc;
}
