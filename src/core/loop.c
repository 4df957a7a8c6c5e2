/* loop.c — one event_base, named periodic tasks with duration and lag figures, signals. */
#include <sys/epoll.h>

#include <dlfcn.h>
#include <errno.h>
#include <signal.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <event2/event.h>

#include "core/log.h"
#include "core/loop.h"
#include "core/util.h"

struct loop_task {
	struct loop      *t_loop;
	const char       *t_name;
	unsigned          t_interval_ms;
	loop_task_fn      t_fn;
	void             *t_arg;
	struct event     *t_ev;
	int64_t           t_due_us; /* monotonic time the next run is due */
	int               t_paused;
	int               t_kicked;
	uint64_t          t_runs;
	int64_t           t_last_dur_us;
	int64_t           t_max_dur_us;
	int64_t           t_last_lag_us;
	int64_t           t_max_lag_us;
	struct loop_task *t_next;
};

struct loop_sig {
	struct event    *s_ev;
	loop_signal_fn   s_fn;
	void            *s_arg;
	struct loop_sig *s_next;
};

struct loop {
	struct event_base     *l_base;
	struct loop_task      *l_tasks;
	struct loop_task     **l_tail;
	struct loop_sig       *l_sigs;
	struct loop_turn_stats l_turns;
	/* The current turn's sections (loop_note, tasks): the longest one names the turn. */
	const char   *l_sec;       /* the section running, NULL: none named */
	int64_t       l_sec_start; /* its start (monotonic time) */
	const char   *l_turn_task; /* the longest section of the current turn */
	int64_t       l_turn_task_us;
	int           l_in_turn;   /* between a poll's return and the next poll */
	int64_t       l_turn_cpu;  /* CPU time when the current turn's poll began */
	int64_t       l_turn_wall; /* monotonic time when the poll returned */
	struct event *l_stop_ev;   /* loop_stop: breaks the loop once the turn's callbacks ran */
};

/* The loop in loop_run, for loop_note (one loop runs at a time). */
static struct loop *loop_running;
/* Periodic work runs at whole multiples of its period after this instant (monotonic;
 * loop_grid_delay_us): when the first loop was made, less a random part of a minute, so that
 * nodes started together (a fleet's upgrade, a power cut) do not call the API server in the
 * same instant every 10 s, as the kubelet's jittered periods avoid. */
#define LOOP_EPOCH_SPREAD_MS 60000
static int64_t loop_epoch_us;
static int     loop_epoch_set;

const int64_t loop_turn_bounds_us[LOOP_TURN_NBUCKETS] = { 100, 250, 500, 1000, 2500, 5000, 10000,
	20000, 50000, 100000, 250000, 1000000, INT64_MAX };

/* The thread's CPU time: what a turn costs, whatever else the machine runs. */
static int64_t
loop_cpu_us(void)
{
	struct timespec ts;

	if (clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts) == -1)
		return 0;
	return (int64_t)ts.tv_sec * 1000000 + ts.tv_nsec / 1000;
}

/* Ends the running section at now (monotonic time: the thread's CPU clock is a system call,
 * the monotonic one is not; inside a turn they differ by what the thread was preempted) and
 * starts what (NULL: an unnamed one). */
static void
loop_section(struct loop *l, const char *what, int64_t now)
{
	if (l->l_sec != NULL && now - l->l_sec_start >= l->l_turn_task_us) {
		l->l_turn_task = l->l_sec;
		l->l_turn_task_us = now - l->l_sec_start;
	}
	l->l_sec = what;
	l->l_sec_start = now;
}

void
loop_note(const char *what)
{
	if (loop_running != NULL)
		loop_section(loop_running, what, now_mono_us());
}

int64_t
loop_turn_used_us(void)
{
	struct loop *l = loop_running;

	return l != NULL && l->l_in_turn ? now_mono_us() - l->l_turn_wall : 0;
}

int
loop_yield_due(int64_t t0, int64_t budget_us)
{
	int64_t      now = now_mono_us();
	struct loop *l = loop_running;

	if (now - t0 >= budget_us)
		return 1;
	return l != NULL && l->l_in_turn && now - l->l_turn_wall >= LOOP_TURN_BUDGET_US;
}

static void
loop_turn_done(struct loop *l, int64_t us, int64_t wall_us)
{
	struct loop_turn_stats *t = &l->l_turns;
	size_t                  i;

	for (i = 0; i < LOOP_TURN_NBUCKETS - 1 && us > loop_turn_bounds_us[i]; i++)
		;
	t->counts[i]++;
	t->turns++;
	t->total_us += us;
	if (wall_us > t->max_wall_us)
		t->max_wall_us = wall_us;
	if (us > t->max_us) {
		t->max_us = us;
		t->max_task = l->l_turn_task;
	}
	if (us >= 20000)
		log_v(2, "loop: a turn took %lldus of CPU (longest part: %s, %lldus)",
		    (long long)us, l->l_turn_task != NULL ? l->l_turn_task : "unnamed",
		    (long long)l->l_turn_task_us);
	l->l_sec = NULL;
	l->l_turn_task = NULL;
	l->l_turn_task_us = 0;
}

static void
loop_stop_fire(evutil_socket_t fd, short what, void *arg)
{
	struct loop *l = arg;

	(void)fd;
	(void)what;
	event_base_loopbreak(l->l_base);
}

struct loop *
loop_new(void)
{
	struct loop         *l = xcalloc(1, sizeof(*l));
	struct event_config *cfg;

	if ((cfg = event_config_new()) == NULL)
		fatalx("%s: event_config_new failed", __func__);
	/* Timers against CLOCK_MONOTONIC, not libevent's default CLOCK_MONOTONIC_COARSE. The
	 * coarse clock moves once a tick (4 ms at HZ=250): a timer due inside the current tick
	 * made libevent poll again with 1 ms timeouts until the clock moved past it, up to four
	 * empty wake-ups before every due timer. The precise clock is read through the vDSO,
	 * once a turn. */
	event_config_set_flag(cfg, EVENT_BASE_FLAG_PRECISE_TIMER);
	if (!loop_epoch_set) {
		loop_epoch_us =
		    now_mono_us() - (int64_t)arc4random_uniform(LOOP_EPOCH_SPREAD_MS) * 1000;
		loop_epoch_set = 1;
	}
	l->l_base = event_base_new_with_config(cfg);
	event_config_free(cfg);
	if (l->l_base == NULL)
		fatalx("%s: event_base_new failed", __func__);
	if (event_base_priority_init(l->l_base, LOOP_NPRI) == -1)
		fatalx("%s: event_base_priority_init failed", __func__);
	if ((l->l_stop_ev = event_new(l->l_base, -1, 0, loop_stop_fire, l)) == NULL)
		fatalx("%s: event_new failed", __func__);
	l->l_tail = &l->l_tasks;
	signal(SIGPIPE, SIG_IGN);
	return l;
}

struct event_base *
loop_base(struct loop *l)
{
	return l->l_base;
}

static void
loop_task_schedule(struct loop_task *t)
{
	struct timeval tv;
	int64_t        wait;

	if (t->t_paused)
		return;
	/* libevent adds the wait to the time it read when the turn began (loop_grid_add). */
	event_base_update_cache_time(t->t_loop->l_base);
	wait = t->t_kicked ? 0 : t->t_due_us - now_mono_us();
	if (wait < 0)
		wait = 0;
	tv.tv_sec = wait / 1000000;
	tv.tv_usec = wait % 1000000;
	evtimer_add(t->t_ev, &tv);
}

static void
loop_task_fire(evutil_socket_t fd, short what, void *arg)
{
	struct loop_task *t = arg;
	int64_t           start, end, lag, period = (int64_t)t->t_interval_ms * 1000;

	(void)fd;
	(void)what;
	loop_note(t->t_name);
	start = now_mono_us();
	if (t->t_kicked) {
		t->t_kicked = 0;
		lag = 0;
	} else {
		lag = start - t->t_due_us;
		if (lag < 0)
			lag = 0;
		t->t_last_lag_us = lag;
		if (lag > t->t_max_lag_us)
			t->t_max_lag_us = lag;
		/* Keep the phase; if we fell more than a period behind, skip the missed runs. */
		t->t_due_us += period;
		if (t->t_due_us <= start)
			t->t_due_us = start + loop_grid_delay_us(start, period);
	}
	t->t_fn(t->t_arg);
	end = now_mono_us();
	t->t_runs++;
	t->t_last_dur_us = end - start;
	if (t->t_last_dur_us > t->t_max_dur_us)
		t->t_max_dur_us = t->t_last_dur_us;
	loop_note(NULL);
	log_v(5, "task %s ran in %lldus lag=%lldus", t->t_name, (long long)t->t_last_dur_us,
	    (long long)lag);
	loop_task_schedule(t);
}

int64_t
loop_grid_delay_us(int64_t now_us, int64_t period_us)
{
	int64_t since, d, slack;

	if (period_us <= 0)
		return 0;
	if (!loop_epoch_set || now_us < loop_epoch_us)
		return period_us; /* no loop yet: one period from now */
	since = now_us - loop_epoch_us;
	d = period_us - since % period_us;
	/* A timer that fired a hair before its instant (libevent's microseconds) must not come
	 * back at once for the same instant: it goes to the next one. */
	slack = period_us / 4 < LOOP_GRID_SLACK_US ? period_us / 4 : LOOP_GRID_SLACK_US;
	return d < slack ? d + period_us : d;
}

void
loop_grid_add(struct event *ev, unsigned period_ms)
{
	struct timeval tv;
	int64_t        d;

	/* libevent adds a timeout to the time it read when the turn began; by now that is
	 * stale by what this turn has run, and the timer would fire that much before its
	 * instant, in a wake-up of its own. */
	event_base_update_cache_time(event_get_base(ev));
	d = loop_grid_delay_us(now_mono_us(), (int64_t)period_ms * 1000);
	tv.tv_sec = d / 1000000;
	tv.tv_usec = d % 1000000;
	evtimer_add(ev, &tv);
}

struct loop_task *
loop_every(struct loop *l, const char *name, unsigned interval_ms, loop_task_fn fn, void *arg)
{
	struct loop_task *t = xcalloc(1, sizeof(*t));

	if (interval_ms == 0)
		fatalx("%s: task %s: zero interval", __func__, name);
	t->t_loop = l;
	t->t_name = name;
	t->t_interval_ms = interval_ms;
	t->t_fn = fn;
	t->t_arg = arg;
	if ((t->t_ev = evtimer_new(l->l_base, loop_task_fire, t)) == NULL)
		fatalx("%s: evtimer_new failed", __func__);
	event_priority_set(t->t_ev, LOOP_PRI_NORMAL);
	t->t_due_us = now_mono_us();
	t->t_due_us += loop_grid_delay_us(t->t_due_us, (int64_t)interval_ms * 1000);
	*l->l_tail = t;
	l->l_tail = &t->t_next;
	loop_task_schedule(t);
	log_v(4, "timer %s registered every %ums", name, interval_ms);
	return t;
}

void
loop_task_kick(struct loop_task *t)
{
	if (t->t_paused || t->t_kicked)
		return;
	t->t_kicked = 1;
	loop_task_schedule(t);
}

void
loop_task_pause(struct loop_task *t, int paused)
{
	if (paused == t->t_paused)
		return;
	t->t_paused = paused;
	if (paused) {
		evtimer_del(t->t_ev);
		t->t_kicked = 0;
	} else {
		t->t_due_us = now_mono_us();
		t->t_due_us += loop_grid_delay_us(t->t_due_us, (int64_t)t->t_interval_ms * 1000);
		loop_task_schedule(t);
	}
}

void
loop_task_stats(const struct loop_task *t, struct loop_task_stats *st)
{
	st->name = t->t_name;
	st->interval_ms = t->t_interval_ms;
	st->runs = t->t_runs;
	st->last_duration_us = t->t_last_dur_us;
	st->max_duration_us = t->t_max_dur_us;
	st->last_lag_us = t->t_last_lag_us;
	st->max_lag_us = t->t_max_lag_us;
}

void
loop_foreach_task(struct loop *l, void (*cb)(const struct loop_task_stats *, void *), void *arg)
{
	struct loop_task_stats st;
	struct loop_task      *t;

	for (t = l->l_tasks; t != NULL; t = t->t_next) {
		loop_task_stats(t, &st);
		cb(&st, arg);
	}
}

int64_t
loop_lag_us(struct loop *l)
{
	struct loop_task *t;
	int64_t           lag = 0;

	for (t = l->l_tasks; t != NULL; t = t->t_next)
		if (t->t_last_lag_us > lag)
			lag = t->t_last_lag_us;
	return lag;
}

static void
loop_sig_fire(evutil_socket_t sig, short what, void *arg)
{
	struct loop_sig *s = arg;

	(void)what;
	s->s_fn((int)sig, s->s_arg);
}

void
loop_on_signal(struct loop *l, int sig, loop_signal_fn fn, void *arg)
{
	struct loop_sig *s = xcalloc(1, sizeof(*s));

	s->s_fn = fn;
	s->s_arg = arg;
	if ((s->s_ev = evsignal_new(l->l_base, sig, loop_sig_fire, s)) == NULL)
		fatalx("%s: evsignal_new failed", __func__);
	event_priority_set(s->s_ev, LOOP_PRI_HIGH);
	if (evsignal_add(s->s_ev, NULL) == -1)
		fatalx("%s: evsignal_add failed", __func__);
	s->s_next = l->l_sigs;
	l->l_sigs = s;
}

void
loop_turn_stats(const struct loop *l, struct loop_turn_stats *st)
{
	*st = l->l_turns;
}

int64_t
loop_turn_quantile_us(const struct loop_turn_stats *st, double q)
{
	uint64_t want, seen = 0;
	size_t   i;

	if (st->turns == 0)
		return 0;
	want = (uint64_t)(q * (double)st->turns + 0.999999);
	if (want == 0)
		want = 1;
	for (i = 0; i < LOOP_TURN_NBUCKETS; i++) {
		seen += st->counts[i];
		if (seen >= want)
			return loop_turn_bounds_us[i];
	}
	return INT64_MAX;
}

/* One event_base_loop round per turn, its CPU time measured. */
/* A turn ends when libevent polls again (epoll_wait), and starts when the poll returns.
 * libevent's epoll backend calls epoll_wait through its PLT, so this definition comes
 * first (the C library's is reached through dlsym, past this one and any sanitizer's):
 * the only way to see a turn's edges with libevent 2.1, which has no prepare/check hooks.
 * Outside loop_run it only passes the call on. */
int
epoll_wait(int epfd, struct epoll_event *events, int maxevents, int timeout)
{
	static int (*real)(int, struct epoll_event *, int, int);
	struct loop *l = loop_running;
	int          rc, saved;

	if (real == NULL &&
	    (real = (int (*)(int, struct epoll_event *, int, int))dlsym(RTLD_NEXT, "epoll_wait")) ==
	        NULL)
		fatalx("%s: dlsym: %s", __func__, dlerror());
	if (l != NULL && l->l_in_turn) {
		/* One CPU clock read a turn: from this poll's start to the next one's, so a
		 * turn's figure includes its poll's system call (a few microseconds). */
		int64_t c1 = loop_cpu_us(), w1 = now_mono_us();

		loop_section(l, NULL, w1);
		loop_turn_done(l, c1 - l->l_turn_cpu, w1 - l->l_turn_wall);
		l->l_in_turn = 0;
		l->l_turn_cpu = c1;
	}
	rc = real(epfd, events, maxevents, timeout);
	saved = errno;
	if (l != NULL && l == loop_running) {
		l->l_in_turn = 1;
		l->l_sec = NULL;
		l->l_turn_wall = now_mono_us();
	}
	errno = saved;
	return rc;
}

int
loop_run(struct loop *l)
{
	int rc;

	loop_running = l;
	l->l_in_turn = 0;
	l->l_turn_cpu = loop_cpu_us();
	rc = event_base_dispatch(l->l_base);
	/* A stop still queued if the loop ended otherwise: not for the next loop_run. */
	event_del(l->l_stop_ev);
	if (l->l_in_turn) { /* the last turn, ended by loop_stop */
		int64_t c1 = loop_cpu_us(), w1 = now_mono_us();

		loop_section(l, NULL, w1);
		loop_turn_done(l, c1 - l->l_turn_cpu, w1 - l->l_turn_wall);
	}
	loop_running = NULL;
	l->l_in_turn = 0;
	if (rc == -1) {
		log_error("%s: event_base_dispatch failed", __func__);
		return -1;
	}
	return 0;
}

/* libevent runs a turn's due callbacks one after the other, those of one priority per
 * poll, and event_base_loopbreak ends the loop after the running one: the others, due at
 * the same instant (periodic work sharing the wake-up), would not run in this turn. The
 * stop event goes last into the queue being run (the caller's priority) and breaks the
 * loop from there, before the next poll. */
void
loop_stop(struct loop *l)
{
	struct event *running;
	int           pri = LOOP_PRI_NORMAL;

	if (l != loop_running || !l->l_in_turn) {
		/* Not inside one of this loop's callbacks: no turn to finish. */
		event_base_loopbreak(l->l_base);
		return;
	}
	/* Inside a callback (l_in_turn), so libevent has a running callback to look at;
	 * NULL: one that is not an event (a deferred callback), at the default priority. */
	if ((running = event_base_get_running_event(l->l_base)) != NULL)
		pri = event_get_priority(running);
	/* Fails, harmlessly, if a loop_stop of this turn already made it active. */
	(void)event_priority_set(l->l_stop_ev, pri);
	event_active(l->l_stop_ev, EV_TIMEOUT, 1);
}

void
loop_free(struct loop *l)
{
	struct loop_task *t, *tn;
	struct loop_sig  *s, *sn;

	if (l == NULL)
		return;
	for (t = l->l_tasks; t != NULL; t = tn) {
		tn = t->t_next;
		event_free(t->t_ev);
		free(t);
	}
	for (s = l->l_sigs; s != NULL; s = sn) {
		sn = s->s_next;
		event_free(s->s_ev);
		free(s);
	}
	event_free(l->l_stop_ev);
	event_base_free(l->l_base);
	free(l);
}
