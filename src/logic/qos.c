/* qos.c — see qos.h. Follows the kubelet's v1qos.GetPodQOS, cm.ResourceConfigForPod,
 * MilliCPUToShares / MilliCPUToQuota, the QoS container manager's burstable shares and the
 * cgroupfs / systemd cgroup name conversions (cm.CgroupName ToCgroupfs / ToSystemd). */
#include <stdio.h>
#include <string.h>

#include "core/util.h"
#include "logic/qos.h"

static int
qos_is_sidecar(const struct container *c)
{
	return c->c_has_restart_policy && c->c_restart_policy == RESTART_ALWAYS;
}

/* Request of a container (defaulting to its limit, as the API's defaulting does). */
static int64_t
qos_req_of(const struct container *c, const char *resource)
{
	const struct quantity *q = resource_list_get(&c->c_resources.requests, resource);

	if (q == NULL)
		q = resource_list_get(&c->c_resources.limits, resource);
	return q != NULL ? q->milli : 0;
}

static int64_t
qos_lim_of(const struct container *c, const char *resource, int *declared)
{
	const struct quantity *q = resource_list_get(&c->c_resources.limits, resource);

	if ((q == NULL || q->milli == 0) && declared != NULL)
		*declared = 0;
	return q != NULL ? q->milli : 0;
}

/* PodRequests / PodLimits: app containers and sidecars summed, each init container with
 * the sidecars started before it, the larger of the two. */
static int64_t
qos_pod_sum(const struct pod *p, const char *resource, int limits, int *declared)
{
	int64_t reqs = 0, sidecars = 0, init_max = 0, v;
	size_t  i;

	for (i = 0; i < p->ncontainers; i++)
		reqs += limits ? qos_lim_of(&p->containers[i], resource, declared)
		               : qos_req_of(&p->containers[i], resource);
	for (i = 0; i < p->ninit_containers; i++) {
		const struct container *c = &p->init_containers[i];

		v = limits ? qos_lim_of(c, resource, declared) : qos_req_of(c, resource);
		if (qos_is_sidecar(c)) {
			reqs += v;
			sidecars += v;
			v = sidecars;
		} else
			v += sidecars;
		if (v > init_max)
			init_max = v;
	}
	return init_max > reqs ? init_max : reqs;
}

int64_t
qos_pod_request(const struct pod *p, const char *resource)
{
	const struct quantity *ov = resource_list_get(&p->overhead, resource);

	return qos_pod_sum(p, resource, 0, NULL) + (ov != NULL ? ov->milli : 0);
}

int64_t
qos_pod_limit(const struct pod *p, const char *resource, int *declared)
{
	const struct quantity *ov = resource_list_get(&p->overhead, resource);
	int64_t                v;

	if (declared != NULL)
		*declared = 1;
	v = qos_pod_sum(p, resource, 1, declared);
	if (v != 0 && ov != NULL)
		v += ov->milli;
	return v;
}

static void
qos_container_class(const struct container *c, int *has_any, int *all_guaranteed)
{
	static const char *const names[] = { "cpu", "memory" };
	size_t                   i;

	for (i = 0; i < nitems(names); i++) {
		const struct quantity *req = resource_list_get(&c->c_resources.requests, names[i]);
		const struct quantity *lim = resource_list_get(&c->c_resources.limits, names[i]);

		if ((req != NULL && req->milli != 0) || (lim != NULL && lim->milli != 0))
			*has_any = 1;
		if (lim == NULL || lim->milli == 0)
			*all_guaranteed = 0;
		else if (req != NULL && req->milli != lim->milli)
			*all_guaranteed = 0;
	}
}

enum qos_class
qos_pod_class(const struct pod *p)
{
	int    has_any = 0, all_guaranteed = 1;
	size_t i;

	for (i = 0; i < p->ncontainers; i++)
		qos_container_class(&p->containers[i], &has_any, &all_guaranteed);
	for (i = 0; i < p->ninit_containers; i++)
		qos_container_class(&p->init_containers[i], &has_any, &all_guaranteed);
	if (!has_any)
		return QOS_BEST_EFFORT;
	return all_guaranteed ? QOS_GUARANTEED : QOS_BURSTABLE;
}

int64_t
qos_milli_to_shares(int64_t milli)
{
	int64_t shares;

	if (milli <= 0)
		return QOS_MIN_SHARES;
	shares = milli * QOS_SHARES_PER_CPU / 1000;
	if (shares < QOS_MIN_SHARES)
		return QOS_MIN_SHARES;
	return shares > QOS_MAX_SHARES ? QOS_MAX_SHARES : shares;
}

int64_t
qos_milli_to_quota(int64_t milli, int64_t period)
{
	int64_t quota;

	if (milli <= 0)
		return 0;
	quota = milli * period / 1000;
	return quota < QOS_MIN_QUOTA ? QOS_MIN_QUOTA : quota;
}

int64_t
qos_shares_to_weight(int64_t shares)
{
	if (shares < QOS_MIN_SHARES)
		shares = QOS_MIN_SHARES;
	if (shares > QOS_MAX_SHARES)
		shares = QOS_MAX_SHARES;
	return (shares - 2) * 9999 / 262142 + 1;
}

void
qos_pod_config(const struct pod *p, struct qos_config *cfg)
{
	int     cpu_declared, mem_declared;
	int64_t cpu_req = qos_pod_request(p, "cpu");
	int64_t cpu_lim = qos_pod_limit(p, "cpu", &cpu_declared);
	int64_t mem_lim = qos_pod_limit(p, "memory", &mem_declared) / 1000;

	memset(cfg, 0, sizeof(*cfg));
	switch (qos_pod_class(p)) {
	case QOS_GUARANTEED:
		cfg->cpu_shares = qos_milli_to_shares(cpu_req);
		cfg->cpu_quota = qos_milli_to_quota(cpu_lim, QOS_DEFAULT_PERIOD);
		cfg->cpu_period = QOS_DEFAULT_PERIOD;
		cfg->memory = mem_lim;
		break;
	case QOS_BURSTABLE:
		cfg->cpu_shares = qos_milli_to_shares(cpu_req);
		if (cpu_declared) {
			cfg->cpu_quota = qos_milli_to_quota(cpu_lim, QOS_DEFAULT_PERIOD);
			cfg->cpu_period = QOS_DEFAULT_PERIOD;
		}
		if (mem_declared)
			cfg->memory = mem_lim;
		break;
	case QOS_BEST_EFFORT:
		cfg->cpu_shares = QOS_MIN_SHARES;
		break;
	}
}

int64_t
qos_burstable_shares(int64_t milli)
{
	return qos_milli_to_shares(milli);
}

/* Appends s to buf at *off; -1 when it does not fit. */
static int
qos_put(char *buf, size_t len, size_t *off, const char *s, size_t n)
{
	if (*off + n + 1 > len)
		return -1;
	memcpy(buf + *off, s, n);
	*off += n;
	buf[*off] = '\0';
	return 0;
}

/* systemd: a component with '-' escaped as '_'. */
static int
qos_put_escaped(char *buf, size_t len, size_t *off, const char *s)
{
	size_t start = *off;

	if (qos_put(buf, len, off, s, strlen(s)) < 0)
		return -1;
	for (; start < *off; start++)
		if (buf[start] == '-')
			buf[start] = '_';
	return 0;
}

static const char *
qos_systemd_name(const char *root, const char *const *parts, size_t n, char *buf, size_t len)
{
	char        unit[QOS_CGROUP_NAME_MAX];
	size_t      uoff = 0, off = 0, i;
	const char *base = strrchr(root, '/'), *end;

	/* The root slice's own components: "/a.slice/a-b.slice" -> "a-b". */
	base = base != NULL ? base + 1 : root;
	end = strstr(base, ".slice");
	unit[0] = '\0';
	if (end != NULL && end > base && qos_put(unit, sizeof(unit), &uoff, base, end - base) < 0)
		goto toolong;
	for (i = 0; i < n; i++)
		if ((uoff > 0 && qos_put(unit, sizeof(unit), &uoff, "-", 1) < 0) ||
		    qos_put_escaped(unit, sizeof(unit), &uoff, parts[i]) < 0)
			goto toolong;
	if (uoff == 0)
		return qos_put(buf, len, &off, "/", 1) < 0 ? "" : buf;
	/* ExpandSlice: every prefix ending at a '-' is a parent slice. */
	for (i = 0; i <= uoff; i++) {
		if (i < uoff && unit[i] != '-')
			continue;
		if (qos_put(buf, len, &off, "/", 1) < 0 || qos_put(buf, len, &off, unit, i) < 0 ||
		    qos_put(buf, len, &off, ".slice", 6) < 0)
			goto toolong;
	}
	return buf;
toolong:
	if (len > 0)
		buf[0] = '\0';
	return buf;
}

const char *
qos_cgroup_name(
    enum qos_driver d, const char *root, const char *const *parts, size_t n, char *buf, size_t len)
{
	size_t off = 0, i;

	if (len == 0)
		return buf;
	buf[0] = '\0';
	if (root == NULL || *root == '\0')
		root = "/";
	if (d == QOS_DRIVER_SYSTEMD)
		return qos_systemd_name(root, parts, n, buf, len);
	if (strcmp(root, "/") != 0 &&
	    qos_put(buf, len, &off, root, strlen(root) - (root[strlen(root) - 1] == '/')) < 0)
		goto toolong;
	for (i = 0; i < n; i++)
		if (qos_put(buf, len, &off, "/", 1) < 0 ||
		    qos_put(buf, len, &off, parts[i], strlen(parts[i])) < 0)
			goto toolong;
	if (off == 0)
		qos_put(buf, len, &off, "/", 1);
	return buf;
toolong:
	buf[0] = '\0';
	return buf;
}

size_t
qos_pod_parts(enum qos_class c, const char *uid, const char *parts[3], char *pod_part, size_t len)
{
	size_t n = 0;

	snprintf(pod_part, len, "pod%s", uid);
	parts[n++] = "kubepods";
	if (c == QOS_BURSTABLE)
		parts[n++] = "burstable";
	else if (c == QOS_BEST_EFFORT)
		parts[n++] = "besteffort";
	parts[n++] = pod_part;
	return n;
}

int
qos_pod_uid_of(enum qos_driver d, const char *name, char *uid, size_t len)
{
	const char *p = name;
	size_t      n, i;

	if (d == QOS_DRIVER_SYSTEMD) {
		const char *s = NULL, *q;

		for (q = name; (q = strstr(q, "-pod")) != NULL; q++)
			s = q; /* the last: the escaped UID has no '-' */
		if (s == NULL)
			return -1;
		p = s + 4;
		n = strlen(p);
		if (n <= 6 || strcmp(p + n - 6, ".slice") != 0)
			return -1;
		n -= 6;
	} else {
		if (strncmp(name, "pod", 3) != 0)
			return -1;
		p = name + 3;
		n = strlen(p);
	}
	if (n == 0 || n >= len)
		return -1;
	for (i = 0; i < n; i++) {
		char ch = p[i];

		if (d == QOS_DRIVER_SYSTEMD && ch == '_')
			ch = '-';
		if (!((ch >= '0' && ch <= '9') || (ch >= 'a' && ch <= 'z') || ch == '-'))
			return -1;
		uid[i] = ch;
	}
	uid[n] = '\0';
	return 0;
}

static void
qos_add(struct qos_file *f, size_t *n, const char *ctrl, const char *file, const char *fmt,
    int64_t a, int64_t b)
{
	f[*n].ctrl = ctrl;
	f[*n].file = file;
	snprintf(f[*n].value, sizeof(f[*n].value), fmt, (long long)a, (long long)b);
	(*n)++;
}

size_t
qos_files(const struct qos_config *c, int v2, struct qos_file out[4])
{
	size_t n = 0;

	if (!v2) {
		if (c->cpu_shares > 0)
			qos_add(out, &n, "cpu", "cpu.shares", "%lld", c->cpu_shares, 0);
		if (c->cpu_period > 0)
			qos_add(out, &n, "cpu", "cpu.cfs_period_us", "%lld", c->cpu_period, 0);
		if (c->cpu_quota != 0)
			qos_add(out, &n, "cpu", "cpu.cfs_quota_us", "%lld",
			    c->cpu_quota < 0 ? -1 : c->cpu_quota, 0);
		if (c->memory != 0)
			qos_add(out, &n, "memory", "memory.limit_in_bytes", "%lld",
			    c->memory < 0 ? -1 : c->memory, 0);
		return n;
	}
	if (c->cpu_shares > 0)
		qos_add(out, &n, "", "cpu.weight", "%lld", qos_shares_to_weight(c->cpu_shares), 0);
	if (c->cpu_quota > 0)
		qos_add(out, &n, "", "cpu.max", "%lld %lld", c->cpu_quota,
		    c->cpu_period > 0 ? c->cpu_period : QOS_DEFAULT_PERIOD);
	else if (c->cpu_quota < 0 || c->cpu_period > 0)
		qos_add(out, &n, "", "cpu.max", "max %lld",
		    c->cpu_period > 0 ? c->cpu_period : QOS_DEFAULT_PERIOD, 0);
	if (c->memory > 0)
		qos_add(out, &n, "", "memory.max", "%lld", c->memory, 0);
	else if (c->memory < 0)
		qos_add(out, &n, "", "memory.max", "max", 0, 0);
	return n;
}
