/* test_eviction.c — table tests of the eviction manager's pure decisions (logic/eviction.c):
 * thresholds from the flags, thresholds met with grace periods, minimum reclaim and the
 * pressure transition period, the ranking per signal, the message and the grace. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "core/util.h"
#include "logic/eviction.h"

#define MI (1024LL * 1024)

static void
kv(struct kvlist *l, const char *k, const char *v)
{
	l->items = xreallocarray(l->items, l->n + 1, sizeof(*l->items));
	l->items[l->n].k = xstrdup(k);
	l->items[l->n].v = xstrdup(v);
	l->n++;
}

static void
test_config(void **state)
{
	struct kvlist    hard = { 0 }, soft = { 0 }, grace = { 0 }, mr = { 0 };
	struct ev_config c;
	char             err[256];

	(void)state;
	kv(&hard, "memory.available", "100Mi");
	kv(&hard, "nodefs.available", "10%");
	kv(&soft, "memory.available", "300Mi");
	assert_int_equal(ev_config_build(&hard, &soft, &grace, &mr, &c, err, sizeof(err)), -1);
	assert_string_equal(
	    err, "grace period must be specified for the soft eviction threshold memory.available");
	kv(&grace, "memory.available", "1m30s");
	kv(&mr, "memory.available", "50Mi");
	kv(&mr, "nodefs.available", "1%");
	assert_int_equal(ev_config_build(&hard, &soft, &grace, &mr, &c, err, sizeof(err)), 0);
	assert_int_equal(c.n, 4); /* memory, allocatableMemory, nodefs, soft memory */
	assert_int_equal(c.t[0].sig, EV_MEMORY);
	assert_int_equal(c.t[1].sig, EV_ALLOC_MEMORY);
	assert_int_equal(c.t[0].quantity, 100 * MI);
	assert_int_equal(c.t[1].min_reclaim, 50 * MI);
	assert_int_equal(c.t[2].quantity, -1);
	assert_int_equal(ev_threshold_value(&c.t[2], 1000), 100);
	assert_true(c.t[2].min_reclaim_pct == 1.0);
	assert_false(c.t[3].hard);
	assert_int_equal(c.t[3].grace_ms, 90000);
	kvlist_clear(&hard);
	memset(&hard, 0, sizeof(hard));
	kv(&hard, "memory.available", "lots");
	assert_int_equal(ev_config_build(&hard, NULL, NULL, NULL, &c, err, sizeof(err)), -1);
	assert_string_equal(err, "memory.available: \"lots\" is not a quantity or a percentage");
	kvlist_clear(&hard);
	kvlist_clear(&soft);
	kvlist_clear(&grace);
	kvlist_clear(&mr);
}

/* A sequence of observations (memory available, nodefs available of 1000) at times. */
struct step {
	int64_t  t;
	int64_t  mem, fs;
	unsigned conds;
	int      act_sig; /* -1: none */
	int      act_hard;
};

static void
run_steps(struct ev_config *c, const struct step *s, size_t n)
{
	struct ev_state st;
	size_t          i;

	memset(&st, 0, sizeof(st));
	for (i = 0; i < n; i++) {
		struct ev_obs      o[EV_NSIGNALS];
		struct ev_decision d;

		memset(o, 0, sizeof(o));
		o[EV_MEMORY] = (struct ev_obs){ 1, s[i].mem * MI, 1000 * MI };
		o[EV_NODEFS] = (struct ev_obs){ 1, s[i].fs, 1000 };
		ev_synchronize(c, o, s[i].t, &st, &d);
		print_message("step %zu t=%lld: conds %u act %d\n", i, (long long)s[i].t,
		    d.conditions, d.act);
		assert_int_equal(d.conditions, s[i].conds);
		if (s[i].act_sig < 0)
			assert_int_equal(d.act, -1);
		else {
			assert_true(d.act >= 0);
			assert_int_equal(c->t[d.act].sig, s[i].act_sig);
			assert_int_equal(c->t[d.act].hard, s[i].act_hard);
		}
	}
}

static void
test_synchronize(void **state)
{
	struct kvlist    hard = { 0 }, soft = { 0 }, grace = { 0 }, mr = { 0 };
	struct ev_config c;
	char             err[256];
	/* hard memory<100Mi (min reclaim 50Mi), soft memory<300Mi for 10 s, hard nodefs<10%;
	 * transition period 30 s. */
	static const struct step steps[] = {
		{ 1000, 500, 900, 0, -1, 0 },                      /* fine */
		{ 2000, 250, 900, EV_COND_MEMORY, -1, 0 },         /* soft met: condition only */
		{ 11000, 250, 900, EV_COND_MEMORY, -1, 0 },        /* 9 s: grace not over */
		{ 12000, 250, 900, EV_COND_MEMORY, EV_MEMORY, 0 }, /* 10 s: act on the soft */
		{ 13000, 90, 900, EV_COND_MEMORY, EV_MEMORY, 1 },  /* hard: at once */
		{ 14000, 120, 900, EV_COND_MEMORY, EV_MEMORY, 1 }, /* < 100+50: still met */
		{ 15000, 160, 900, EV_COND_MEMORY, EV_MEMORY, 0 }, /* hard reclaimed; soft on */
		{ 16000, 400, 900, EV_COND_MEMORY, -1, 0 },        /* nothing met: held */
		{ 44000, 400, 900, EV_COND_MEMORY, -1, 0 },        /* 29 s after the last: held */
		{ 45000, 400, 900, 0, -1, 0 },                     /* 30 s: gone */
		{ 47000, 400, 50, EV_COND_DISK, EV_NODEFS, 1 },    /* nodefs 5% < 10% */
		{ 48000, 90, 50, EV_COND_DISK | EV_COND_MEMORY, EV_MEMORY, 1 }, /* memory first */
	};

	(void)state;
	kv(&hard, "memory.available", "100Mi");
	kv(&hard, "nodefs.available", "10%");
	kv(&soft, "memory.available", "300Mi");
	kv(&grace, "memory.available", "10s");
	kv(&mr, "memory.available", "50Mi");
	assert_int_equal(ev_config_build(&hard, &soft, &grace, &mr, &c, err, sizeof(err)), 0);
	c.transition_ms = 30000;
	run_steps(&c, steps, nitems(steps));
	kvlist_clear(&hard);
	kvlist_clear(&soft);
	kvlist_clear(&grace);
	kvlist_clear(&mr);
}

struct rank_case {
	const char   *name;
	int           sig;
	struct ev_pod pods[4];
	size_t        n;
	const char   *want; /* indexes in order */
};

static void
test_rank(void **state)
{
	static const struct rank_case cases[] = {
		{ "memory: over requests first, then priority, then usage above requests",
		    EV_MEMORY,
		    { { .mem_usage = 100 * MI, .mem_request = 200 * MI, .index = 0 },
		        { .mem_usage = 10 * MI, .mem_request = 0, .index = 1 },
		        { .mem_usage = 300 * MI, .mem_request = 100 * MI, .index = 2 },
		        { .mem_usage = 500 * MI, .mem_request = 0, .priority = 1000, .index = 3 } },
		    4, "2130" },
		{ "memory: BestEffort hog before Burstable under its request, Guaranteed last",
		    EV_MEMORY,
		    { { .mem_usage = 64 * MI, .mem_request = 64 * MI, .index = 0 },
		        { .mem_usage = 20 * MI, .mem_request = 50 * MI, .index = 1 },
		        { .mem_usage = 300 * MI, .mem_request = 0, .index = 2 } },
		    3, "201" },
		{ "disk: over requests, priority, usage", EV_NODEFS,
		    { { .disk_usage = 5, .disk_request = 10, .index = 0 },
		        { .disk_usage = 50, .disk_request = 0, .index = 1 },
		        { .disk_usage = 60, .disk_request = 0, .priority = -5, .index = 2 } },
		    3, "210" },
		{ "pid: priority then processes", EV_PID,
		    { { .procs = 10, .priority = 5, .index = 0 }, { .procs = 3, .index = 1 },
		        { .procs = 30, .index = 2 } },
		    3, "210" },
		{ "ties keep order", EV_MEMORY,
		    { { .mem_usage = 1, .index = 0 }, { .mem_usage = 1, .index = 1 } }, 2, "01" },
	};
	size_t i, j;

	(void)state;
	for (i = 0; i < nitems(cases); i++) {
		struct ev_pod p[4];
		char          got[8];

		memcpy(p, cases[i].pods, sizeof(p));
		ev_rank((enum ev_signal)cases[i].sig, p, cases[i].n);
		for (j = 0; j < cases[i].n; j++)
			got[j] = (char)('0' + p[j].index);
		got[j] = '\0';
		print_message("case %s: %s\n", cases[i].name, got);
		assert_string_equal(got, cases[i].want);
	}
}

static void
test_message(void **state)
{
	struct kvlist             hard = { 0 };
	struct ev_config          c;
	char                      err[128], q[32], *m;
	struct ev_obs             o = { 1, 91244 * 1024LL, 4096 * MI };
	struct ev_container_usage cu[] = { { "batch", 1843 * MI, 256 * MI }, { "side", 1, 5 } };
	struct pod                p;

	(void)state;
	kv(&hard, "memory.available", "100Mi");
	kv(&hard, "nodefs.available", "10%");
	kv(&hard, "pid.available", "1000");
	assert_int_equal(ev_config_build(&hard, NULL, NULL, NULL, &c, err, sizeof(err)), 0);
	m = ev_message(&c.t[0], &o, cu, 2);
	assert_string_equal(m,
	    "The node was low on resource: memory. Threshold quantity: 100Mi, "
	    "available: 91244Ki. Container batch was using 1843Mi, request is "
	    "256Mi, has larger consumption of memory. ");
	free(m);
	o = (struct ev_obs){ 1, 4000, 100000 };
	cu[0] = (struct ev_container_usage){ "c", 2048, 0 };
	m = ev_message(&c.t[2], &o, cu, 1);
	assert_string_equal(m,
	    "The node was low on resource: ephemeral-storage. Threshold "
	    "quantity: 10000, available: 4000. Container c was using 2Ki, "
	    "request is 0, has larger consumption of ephemeral-storage. ");
	free(m);
	m = ev_message(&c.t[3], &o, cu, 1);
	assert_string_equal(m,
	    "The node was low on resource: pids. Threshold quantity: 1000, "
	    "available: 4000. ");
	free(m);
	m = ev_emptydir_message("scratch", MI);
	assert_string_equal(m, "Usage of EmptyDir volume \"scratch\" exceeds the limit \"1Mi\". ");
	free(m);
	m = ev_pod_storage_message(2 * MI);
	assert_string_equal(
	    m, "Pod ephemeral local storage usage exceeds the total limit of containers 2Mi. ");
	free(m);
	ev_quantity(0, q, sizeof(q));
	assert_string_equal(q, "0");
	ev_quantity(3 * MI * 1024, q, sizeof(q));
	assert_string_equal(q, "3Gi");
	ev_quantity(1000, q, sizeof(q));
	assert_string_equal(q, "1000");
	/* Grace: 1 s for hard; soft: min(max, pod's). */
	memset(&p, 0, sizeof(p));
	p.termination_grace.set = 1;
	p.termination_grace.v = 30;
	assert_int_equal(ev_grace(&c, &c.t[0], &p), 1);
	c.t[0].hard = 0;
	assert_int_equal(ev_grace(&c, &c.t[0], &p), 0);
	c.max_grace_s = 10;
	assert_int_equal(ev_grace(&c, &c.t[0], &p), 10);
	p.termination_grace.v = 4;
	assert_int_equal(ev_grace(&c, &c.t[0], &p), 4);
	kvlist_clear(&hard);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_config),
		cmocka_unit_test(test_synchronize),
		cmocka_unit_test(test_rank),
		cmocka_unit_test(test_message),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
