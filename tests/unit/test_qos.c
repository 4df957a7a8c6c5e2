/* test_qos.c — table tests of the QoS classes, the pod cgroup configuration
 * (ResourceConfigForPod), the cgroup v1 / v2 files and values, and the cgroup names of both
 * drivers (logic/qos.c). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "core/util.h"
#include "logic/qos.h"

static struct pod *
mkpod(const char *spec)
{
	char       *json, *q, err[256];
	struct pod *p;

	xasprintf(&json,
	    "{'metadata': {'name': 'p', 'namespace': 'default', 'uid': "
	    "'0a1b-2c3d'}, 'spec': {%s}}",
	    spec);
	for (q = json; *q != '\0'; q++)
		if (*q == '\'')
			*q = '"';
	p = pod_from_json(json, strlen(json), err, sizeof(err));
	if (p == NULL)
		fail_msg("%s in %s", err, json);
	free(json);
	return p;
}

#define C(res) "{'name': 'c', 'image': 'i', 'resources': {" res "}}"

struct cfg_case {
	const char    *name;
	const char    *spec;
	enum qos_class qos;
	int64_t        shares, quota, period, memory;
	const char    *v1; /* "file=value ..." */
	const char    *v2;
};

static const struct cfg_case cfg_cases[] = {
	{ "besteffort", "'containers': [" C("") "]", QOS_BEST_EFFORT, 2, 0, 0, 0, "cpu.shares=2",
	    "cpu.weight=1" },
	{ "guaranteed", "'containers': [" C("'limits': {'cpu': '500m', 'memory': '128Mi'}") "]",
	    QOS_GUARANTEED, 512, 50000, 100000, 134217728,
	    "cpu.shares=512 cpu.cfs_period_us=100000 cpu.cfs_quota_us=50000 "
	    "memory.limit_in_bytes=134217728",
	    "cpu.weight=20 cpu.max=50000 100000 memory.max=134217728" },
	{ "burstable no limits", "'containers': [" C("'requests': {'cpu': '250m'}") "]",
	    QOS_BURSTABLE, 256, 0, 0, 0, "cpu.shares=256", "cpu.weight=10" },
	{ "burstable cpu limit only",
	    "'containers': [" C("'requests': {'cpu': '100m'}, 'limits': {'cpu': '200m'}") "]",
	    QOS_BURSTABLE, 102, 20000, 100000, 0,
	    "cpu.shares=102 cpu.cfs_period_us=100000 cpu.cfs_quota_us=20000",
	    "cpu.weight=4 cpu.max=20000 100000" },
	{ "burstable one container without limits",
	    "'containers': [" C("'limits': {'cpu': '1', 'memory': '64Mi'}") ", {'name': 'd', "
	                                                                    "'image': 'i'}]",
	    QOS_BURSTABLE, 1024, 0, 0, 0, "cpu.shares=1024", "cpu.weight=39" },
	{ "tiny cpu: min shares and min quota",
	    "'containers': [" C("'requests': {'cpu': '1m'}, 'limits': {'cpu': '1m', 'memory': "
	                        "'1Mi'}") "]",
	    QOS_GUARANTEED, 2, 1000, 100000, 1048576,
	    "cpu.shares=2 cpu.cfs_period_us=100000 cpu.cfs_quota_us=1000 "
	    "memory.limit_in_bytes=1048576",
	    "cpu.weight=1 cpu.max=1000 100000 memory.max=1048576" },
	{ "init container max rule and overhead",
	    "'overhead': {'cpu': '100m', 'memory': '10Mi'}, 'initContainers': [" C(
	        "'limits': {'cpu': '2', 'memory': '256Mi'}") "], 'containers': [" C("'limits': "
	                                                                            "{'cpu': "
	                                                                            "'500m', "
	                                                                            "'memory':"
	                                                                            " '128Mi'}"
	                                                                            "") "]",
	    QOS_GUARANTEED, 2150, 210000, 100000, 278921216,
	    "cpu.shares=2150 cpu.cfs_period_us=100000 cpu.cfs_quota_us=210000 "
	    "memory.limit_in_bytes=278921216",
	    "cpu.weight=82 cpu.max=210000 100000 memory.max=278921216" },
	{ "huge cpu: max shares", "'containers': [" C("'requests': {'cpu': '300'}") "]",
	    QOS_BURSTABLE, 262144, 0, 0, 0, "cpu.shares=262144", "cpu.weight=10000" },
};

static void
files_str(const struct qos_config *c, int v2, char *buf, size_t len)
{
	struct qos_file f[4];
	size_t          n = qos_files(c, v2, f), i, off = 0;

	buf[0] = '\0';
	for (i = 0; i < n; i++) {
		assert_string_equal(f[i].ctrl,
		    v2                                      ? ""
		        : strncmp(f[i].file, "cpu", 3) == 0 ? "cpu"
		                                            : "memory");
		off +=
		    snprintf(buf + off, len - off, "%s%s=%s", i ? " " : "", f[i].file, f[i].value);
	}
}

static void
test_pod_config(void **state)
{
	size_t i;

	(void)state;
	for (i = 0; i < nitems(cfg_cases); i++) {
		const struct cfg_case *t = &cfg_cases[i];
		struct pod            *p = mkpod(t->spec);
		struct qos_config      c;
		char                   s[256];

		print_message("case %s\n", t->name);
		assert_int_equal(qos_pod_class(p), t->qos);
		qos_pod_config(p, &c);
		assert_int_equal(c.cpu_shares, t->shares);
		assert_int_equal(c.cpu_quota, t->quota);
		assert_int_equal(c.cpu_period, t->period);
		assert_int_equal(c.memory, t->memory);
		files_str(&c, 0, s, sizeof(s));
		assert_string_equal(s, t->v1);
		files_str(&c, 1, s, sizeof(s));
		assert_string_equal(s, t->v2);
		pod_unref(p);
	}
}

static void
test_conversions(void **state)
{
	struct qos_config c = { .cpu_quota = -1, .memory = -1 };
	char              s[128];

	(void)state;
	assert_int_equal(qos_milli_to_shares(0), 2);
	assert_int_equal(qos_milli_to_shares(1), 2);
	assert_int_equal(qos_milli_to_shares(1000), 1024);
	assert_int_equal(qos_milli_to_quota(0, 100000), 0);
	assert_int_equal(qos_milli_to_quota(5, 100000), 1000);
	assert_int_equal(qos_milli_to_quota(1500, 100000), 150000);
	assert_int_equal(qos_shares_to_weight(2), 1);
	assert_int_equal(qos_shares_to_weight(1024), 39);
	assert_int_equal(qos_shares_to_weight(262144), 10000);
	assert_int_equal(qos_burstable_shares(0), 2);
	assert_int_equal(qos_burstable_shares(350), 358);
	files_str(&c, 0, s, sizeof(s));
	assert_string_equal(s, "cpu.cfs_quota_us=-1 memory.limit_in_bytes=-1");
	files_str(&c, 1, s, sizeof(s));
	assert_string_equal(s, "cpu.max=max 100000 memory.max=max");
}

struct name_case {
	enum qos_driver d;
	const char     *root;
	enum qos_class  qos;
	const char     *want;
};

static void
test_names(void **state)
{
	static const struct name_case cases[] = {
		{ QOS_DRIVER_CGROUPFS, "/", QOS_BURSTABLE, "/kubepods/burstable/pod0a1b-2c3d" },
		{ QOS_DRIVER_CGROUPFS, "/", QOS_GUARANTEED, "/kubepods/pod0a1b-2c3d" },
		{ QOS_DRIVER_CGROUPFS, "/klet-t1/", QOS_BEST_EFFORT,
		    "/klet-t1/kubepods/besteffort/pod0a1b-2c3d" },
		{ QOS_DRIVER_SYSTEMD, "/", QOS_BURSTABLE,
		    "/kubepods.slice/kubepods-burstable.slice/"
		    "kubepods-burstable-pod0a1b_2c3d.slice" },
		{ QOS_DRIVER_SYSTEMD, "/", QOS_GUARANTEED,
		    "/kubepods.slice/kubepods-pod0a1b_2c3d.slice" },
		{ QOS_DRIVER_SYSTEMD, "/klet.slice", QOS_BEST_EFFORT,
		    "/klet.slice/klet-kubepods.slice/klet-kubepods-besteffort.slice/"
		    "klet-kubepods-besteffort-pod0a1b_2c3d.slice" },
	};
	size_t i;

	(void)state;
	for (i = 0; i < nitems(cases); i++) {
		const char *parts[3];
		char        pp[64], buf[QOS_CGROUP_NAME_MAX], uid[64];
		size_t      n = qos_pod_parts(cases[i].qos, "0a1b-2c3d", parts, pp, sizeof(pp));
		const char *last;

		qos_cgroup_name(cases[i].d, cases[i].root, parts, n, buf, sizeof(buf));
		assert_string_equal(buf, cases[i].want);
		last = strrchr(buf, '/') + 1;
		assert_int_equal(qos_pod_uid_of(cases[i].d, last, uid, sizeof(uid)), 0);
		assert_string_equal(uid, "0a1b-2c3d");
	}
	{
		const char *kp[] = { "kubepods" };
		char        buf[QOS_CGROUP_NAME_MAX], uid[64];

		qos_cgroup_name(QOS_DRIVER_SYSTEMD, "/", kp, 1, buf, sizeof(buf));
		assert_string_equal(buf, "/kubepods.slice");
		qos_cgroup_name(QOS_DRIVER_CGROUPFS, "/", NULL, 0, buf, sizeof(buf));
		assert_string_equal(buf, "/");
		qos_cgroup_name(QOS_DRIVER_CGROUPFS, "/", kp, 1, buf, 5);
		assert_string_equal(buf, "");
		assert_int_equal(qos_pod_uid_of(QOS_DRIVER_CGROUPFS, "burstable", uid, 64), -1);
		assert_int_equal(qos_pod_uid_of(QOS_DRIVER_CGROUPFS, "pod../x", uid, 64), -1);
		assert_int_equal(
		    qos_pod_uid_of(QOS_DRIVER_SYSTEMD, "kubepods-burstable.slice", uid, 64), -1);
		assert_int_equal(qos_pod_uid_of(QOS_DRIVER_CGROUPFS, "pod", uid, 64), -1);
	}
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_pod_config),
		cmocka_unit_test(test_conversions),
		cmocka_unit_test(test_names),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
