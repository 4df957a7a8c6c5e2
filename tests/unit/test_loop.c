/* test_loop.c — periodic tasks, kicks, pauses, figures and signals of the loop. */
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <cmocka.h>

#include <event2/event.h>

#include "core/log.h"
#include "core/loop.h"
#include "core/util.h"

struct counter {
	struct loop *l;
	int          runs;
	int          stop_at;
};

static void
count_and_stop(void *arg)
{
	struct counter *c = arg;

	if (++c->runs == c->stop_at)
		loop_stop(c->l);
}

static void
test_task_runs_periodically(void **state)
{
	struct loop_task_stats st;
	struct counter         c = { 0 };
	struct loop_task      *t;

	(void)state;
	c.l = loop_new();
	c.stop_at = 3;
	t = loop_every(c.l, "tick", 5, count_and_stop, &c);
	assert_int_equal(loop_run(c.l), 0);
	assert_int_equal(c.runs, 3);
	loop_task_stats(t, &st);
	assert_string_equal(st.name, "tick");
	assert_int_equal(st.interval_ms, 5);
	assert_int_equal(st.runs, 3);
	assert_true(st.max_duration_us >= st.last_duration_us);
	assert_true(st.max_lag_us >= st.last_lag_us);
	assert_true(st.last_lag_us >= 0);
	loop_free(c.l);
}

/* Burns about 30 ms of CPU on its second run, then stops the loop. */
static void
burn_and_stop(void *arg)
{
	struct counter *c = arg;
	struct timespec t0, t;
	volatile long   x = 0;

	if (++c->runs < 2)
		return;
	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t0);
	do {
		for (int i = 0; i < 10000; i++)
			x += i;
		clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
	} while ((t.tv_sec - t0.tv_sec) * 1000000000L + (t.tv_nsec - t0.tv_nsec) < 30000000L);
	loop_stop(c->l);
}

static void
test_turn_figures(void **state)
{
	struct loop_turn_stats ts;
	struct counter         c = { 0 };
	uint64_t               sum = 0;
	size_t                 i;

	(void)state;
	c.l = loop_new();
	loop_every(c.l, "burn", 5, burn_and_stop, &c);
	assert_int_equal(loop_run(c.l), 0);
	loop_turn_stats(c.l, &ts);
	assert_true(ts.turns >= 2);
	for (i = 0; i < LOOP_TURN_NBUCKETS; i++)
		sum += ts.counts[i];
	assert_int_equal(sum, ts.turns);
	/* The burning turn: 30 ms of CPU, in the (20 ms, 50 ms] bucket, named by its task. */
	assert_true(ts.max_us >= 30000);
	assert_non_null(ts.max_task);
	assert_string_equal(ts.max_task, "burn");
	assert_true(ts.counts[8] + ts.counts[9] + ts.counts[10] >= 1);
	assert_true(loop_turn_quantile_us(&ts, 1.0) >= 50000);
	assert_true(loop_turn_quantile_us(&ts, 1.0 / (double)ts.turns) <= 20000);
	loop_free(c.l);
}

/* A part of a turn gives the loop back once its own budget or the turn's is spent. */
static void
yield_check(void *arg)
{
	struct counter *c = arg;
	int64_t         t0 = now_mono_us();

	while (now_mono_us() - t0 < LOOP_TURN_BUDGET_US)
		;
	assert_true(loop_turn_used_us() >= LOOP_TURN_BUDGET_US);
	/* Its own budget is far, the turn's is spent: it yields. */
	assert_true(loop_yield_due(now_mono_us(), 1000000));
	c->runs++;
	loop_stop(c->l);
}

static void
test_yield_due(void **state)
{
	struct counter c = { 0 };
	int64_t        now = now_mono_us();

	(void)state;
	/* Outside loop_run: only the part's own budget counts. */
	assert_int_equal(loop_turn_used_us(), 0);
	assert_false(loop_yield_due(now, 1000000));
	assert_true(loop_yield_due(now - 6000, 5000));
	assert_true(loop_yield_due(now, 0));
	c.l = loop_new();
	loop_task_kick(loop_every(c.l, "yield", 3600 * 1000, yield_check, &c));
	assert_int_equal(loop_run(c.l), 0);
	assert_int_equal(c.runs, 1);
	loop_free(c.l);
}

static void
test_kick_runs_on_next_turn(void **state)
{
	struct counter    c = { 0 };
	struct loop_task *t;

	(void)state;
	c.l = loop_new();
	c.stop_at = 1;
	/* An hour-long period: only the kick can make it run during the test. */
	t = loop_every(c.l, "slow", 3600 * 1000, count_and_stop, &c);
	loop_task_kick(t);
	loop_task_kick(t); /* a second kick before the run is coalesced */
	assert_int_equal(loop_run(c.l), 0);
	assert_int_equal(c.runs, 1);
	loop_free(c.l);
}

static void
stop_loop(void *arg)
{
	loop_stop(arg);
}

static void
test_paused_task_does_not_run(void **state)
{
	struct counter    c = { 0 };
	struct loop_task *t;

	(void)state;
	c.l = loop_new();
	c.stop_at = 1000;
	t = loop_every(c.l, "paused", 1, count_and_stop, &c);
	loop_task_pause(t, 1);
	loop_task_kick(t); /* ignored while paused */
	loop_every(c.l, "stopper", 30, stop_loop, c.l);
	assert_int_equal(loop_run(c.l), 0);
	assert_int_equal(c.runs, 0);
	loop_free(c.l);
}

/* A task of a 5 ms period runs once a wake-up: timers are held against the precise
 * monotonic clock. Against libevent's default coarse one (it moves once a scheduler tick,
 * 4 ms at HZ=250), a timer due inside the current tick made the loop poll again, and return
 * empty, until the clock moved past it. */
static void
test_one_wakeup_per_run(void **state)
{
	struct loop_turn_stats ts;
	struct counter         c = { 0 };

	(void)state;
	c.l = loop_new();
	c.stop_at = 20;
	loop_every(c.l, "tick", 5, count_and_stop, &c);
	assert_int_equal(loop_run(c.l), 0);
	loop_turn_stats(c.l, &ts);
	assert_int_equal(c.runs, 20);
	assert_true(ts.turns <= 21);
	loop_free(c.l);
}

/* Which turn each periodic callback ran in (the count of turns done before it). */
struct phases {
	struct loop  *l;
	struct event *ev;
	uint64_t      a[16], b[16], c[16];
	int           na, nb, nc;
};

static uint64_t
turn_now(struct loop *l)
{
	struct loop_turn_stats ts;

	loop_turn_stats(l, &ts);
	return ts.turns;
}

static void
phase_a(void *arg)
{
	struct phases *p = arg;

	if (p->na < 16)
		p->a[p->na++] = turn_now(p->l);
}

static void
phase_b(void *arg)
{
	struct phases *p = arg;

	if (p->nb < 16)
		p->b[p->nb++] = turn_now(p->l);
	if (p->nb >= 4 && p->nc >= 4)
		loop_stop(p->l);
}

static void
phase_c(evutil_socket_t fd, short what, void *arg)
{
	struct phases *p = arg;

	(void)fd;
	(void)what;
	loop_grid_add(p->ev, 40);
	if (p->nc < 16)
		p->c[p->nc++] = turn_now(p->l);
	if (p->nb >= 4 && p->nc >= 4)
		loop_stop(p->l);
}

static int
ran_in(const uint64_t *turns, int n, uint64_t turn)
{
	for (int i = 0; i < n; i++)
		if (turns[i] == turn)
			return 1;
	return 0;
}

/* Periodic work registered at different times shares its wake-ups: a 40 ms task made 7 ms
 * after a 20 ms one, and a one-shot timer re-armed for 40 ms by loop_grid_add made 7 ms later
 * still, run in turns where the 20 ms task runs too. */
static void
test_periodic_work_shares_wakeups(void **state)
{
	struct phases   p = { 0 };
	struct timespec gap = { 0, 7 * 1000 * 1000 };

	(void)state;
	p.l = loop_new();
	loop_every(p.l, "a", 20, phase_a, &p);
	nanosleep(&gap, NULL);
	loop_every(p.l, "b", 40, phase_b, &p);
	nanosleep(&gap, NULL);
	p.ev = evtimer_new(loop_base(p.l), phase_c, &p);
	loop_grid_add(p.ev, 40);
	assert_int_equal(loop_run(p.l), 0);
	assert_true(p.nb >= 4 && p.nc >= 4);
	/* From the second run on: a timer armed before the loop runs is due a few microseconds
	 * after its instant (libevent reads the clock after us), and may miss that turn. */
	for (int i = 1; i < p.nb; i++)
		assert_true(ran_in(p.a, p.na, p.b[i]));
	for (int i = 1; i < p.nc; i++)
		assert_true(ran_in(p.a, p.na, p.c[i]));
	event_free(p.ev);
	loop_free(p.l);
}

/* loop_stop ends the loop after the turn: work due in the same turn as the callback that
 * stops it still runs (two kicked tasks are due at once, in the first turn). */
struct stopper {
	struct loop *l;
	int          runs;
};

static void
run_and_stop(void *arg)
{
	struct stopper *s = arg;

	s->runs++;
	loop_stop(s->l);
}

static void
test_stop_ends_after_the_turn(void **state)
{
	struct loop_turn_stats ts;
	struct loop           *l = loop_new();
	struct stopper         x = { l, 0 }, y = { l, 0 };

	(void)state;
	loop_task_kick(loop_every(l, "x", 3600 * 1000, run_and_stop, &x));
	loop_task_kick(loop_every(l, "y", 3600 * 1000, run_and_stop, &y));
	assert_int_equal(loop_run(l), 0);
	assert_int_equal(x.runs, 1);
	assert_int_equal(y.runs, 1);
	loop_turn_stats(l, &ts);
	assert_int_equal(ts.turns, 1);
	loop_free(l);
}

/* The grid's arithmetic: the next instant is a whole number of periods after the first
 * loop's making, never now, and one that is nearer than the slack is skipped. */
static void
test_grid_delay(void **state)
{
	struct loop *l = loop_new();
	int64_t      now = now_mono_us(), d1, d2;

	(void)state;
	d1 = loop_grid_delay_us(now, 1000000);
	assert_true(d1 > 0 && d1 <= 1000000 + LOOP_GRID_SLACK_US);
	/* From that instant, and from a hair before it: the next one is a period later. */
	d2 = loop_grid_delay_us(now + d1, 1000000);
	assert_int_equal(d2, 1000000);
	d2 = loop_grid_delay_us(now + d1 - 1, 1000000);
	assert_int_equal(d2, 1000000 + 1);
	/* A period that divides another meets it at each of the other's instants. */
	d2 = loop_grid_delay_us(now + d1 - 1, 500000);
	assert_int_equal(d2, 500000 + 1);
	assert_int_equal(loop_grid_delay_us(now, 0), 0);
	loop_free(l);
}

/* This program, for test_phase_differs_between_processes. */
static const char *self;

static int
cmp_i64(const void *a, const void *b)
{
	int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;

	return x < y ? -1 : x > y;
}

/* Nodes started together do not share their instants: four processes made one after the
 * other (milliseconds apart) place a minute's instant at phases that do not all fall within
 * one second of each other (each process's epoch is less a random part of a minute). */
static void
test_phase_differs_between_processes(void **state)
{
	int64_t phase[4], gap = 0;
	char   *cmd = xsprintf("%s --phase", self);
	int     i;

	(void)state;
	for (i = 0; i < 4; i++) {
		FILE     *f = popen(cmd, "r");
		long long v = -1;

		assert_non_null(f);
		assert_int_equal(fscanf(f, "%lld", &v), 1);
		assert_int_equal(pclose(f), 0);
		assert_true(v >= 0 && v < 60000000);
		phase[i] = v;
	}
	qsort(phase, 4, sizeof(phase[0]), cmp_i64);
	/* The phases lie on a circle of a minute: all within one second means a gap of 59 s. */
	for (i = 0; i < 4; i++) {
		int64_t g = i < 3 ? phase[i + 1] - phase[i] : phase[0] + 60000000 - phase[3];

		if (g > gap)
			gap = g;
	}
	assert_true(gap < 59000000);
	free(cmd);
}

struct names {
	int  n;
	char seen[4][16];
};

static void
collect(const struct loop_task_stats *st, void *arg)
{
	struct names *nm = arg;

	if (nm->n < 4)
		snprintf(nm->seen[nm->n++], sizeof(nm->seen[0]), "%s", st->name);
}

static void
noop(void *arg)
{
	(void)arg;
}

static void
test_foreach_in_registration_order(void **state)
{
	struct loop *l = loop_new();
	struct names nm = { 0 };

	(void)state;
	loop_every(l, "relist", 1000, noop, NULL);
	loop_every(l, "sync", 1000, noop, NULL);
	loop_every(l, "housekeeping", 2000, noop, NULL);
	loop_foreach_task(l, collect, &nm);
	assert_int_equal(nm.n, 3);
	assert_string_equal(nm.seen[0], "relist");
	assert_string_equal(nm.seen[1], "sync");
	assert_string_equal(nm.seen[2], "housekeeping");
	assert_int_equal(loop_lag_us(l), 0);
	loop_free(l);
}

static int sig_seen;

static void
on_sig(int sig, void *arg)
{
	sig_seen = sig;
	loop_stop(arg);
}

static void
raise_usr1(void *arg)
{
	(void)arg;
	raise(SIGUSR1);
}

static void
test_signal_delivered_on_loop(void **state)
{
	struct loop *l = loop_new();

	(void)state;
	loop_on_signal(l, SIGUSR1, on_sig, l);
	loop_every(l, "raise", 1, raise_usr1, NULL);
	assert_int_equal(loop_run(l), 0);
	assert_int_equal(sig_seen, SIGUSR1);
	loop_free(l);
}

int
main(int argc, char **argv)
{
	self = argv[0];
	if (argc > 1 && strcmp(argv[1], "--phase") == 0) {
		/* One process's phase of a minute's instants, in microseconds. */
		struct loop *l = loop_new();
		int64_t      now = now_mono_us();

		printf("%lld\n", (long long)((now + loop_grid_delay_us(now, 60000000)) % 60000000));
		loop_free(l);
		return 0;
	}
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_task_runs_periodically),
		cmocka_unit_test(test_one_wakeup_per_run),
		cmocka_unit_test(test_periodic_work_shares_wakeups),
		cmocka_unit_test(test_stop_ends_after_the_turn),
		cmocka_unit_test(test_grid_delay),
		cmocka_unit_test(test_phase_differs_between_processes),
		cmocka_unit_test(test_turn_figures),
		cmocka_unit_test(test_kick_runs_on_next_turn),
		cmocka_unit_test(test_yield_due),
		cmocka_unit_test(test_paused_task_does_not_run),
		cmocka_unit_test(test_foreach_in_registration_order),
		cmocka_unit_test(test_signal_delivered_on_loop),
	};

	log_init(0, 0);
	return cmocka_run_group_tests_name("loop", tests, NULL, NULL);
}
