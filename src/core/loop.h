/* loop.h — the daemon's one event_base, its named periodic tasks and its signals. */
#ifndef KLET_LOOP_H
#define KLET_LOOP_H

#include <stdint.h>

struct event;
struct event_base;
struct loop;
struct loop_task;

/* Event priorities: callbacks of higher priority (lower number) run first in a turn. */
#define LOOP_PRI_HIGH   0
#define LOOP_PRI_NORMAL 1
#define LOOP_PRI_LOW    2 /* end of turn: store commits */
#define LOOP_NPRI       3

typedef void (*loop_task_fn)(void *arg);
typedef void (*loop_signal_fn)(int sig, void *arg);

struct loop_task_stats {
	const char *name;
	unsigned    interval_ms;
	uint64_t    runs;
	int64_t     last_duration_us; /* how long the last run took */
	int64_t     max_duration_us;
	int64_t     last_lag_us; /* how late the last run fired */
	int64_t     max_lag_us;
};

/* Loop turns: one turn is everything the loop does between two polls for events (from
 * epoll_wait's return to the next epoll_wait: loop.c sees both). Its length is the thread's
 * CPU time from its poll's start to the next poll's (one clock read a turn: the poll's own
 * system call is counted, time the thread was preempted or blocked in a system call inside a
 * callback is not; the longest turn in wall time is kept too). Buckets by upper bound:
 * counts[i] holds the turns of at most loop_turn_bounds_us[i] (the last: "more"). The named
 * parts of a turn (max_task) are timed by the monotonic clock. */
#define LOOP_TURN_NBUCKETS 13
extern const int64_t loop_turn_bounds_us[LOOP_TURN_NBUCKETS];
struct loop_turn_stats {
	uint64_t    turns;
	int64_t     total_us;
	int64_t     max_us;
	int64_t     max_wall_us; /* the longest turn in wall time (CPU plus waits inside it) */
	const char *max_task;    /* the longest named part of the longest turn (a task, a
	                          * loop_note section), NULL: none named */
	uint64_t counts[LOOP_TURN_NBUCKETS];
};

/* A new loop with LOOP_NPRI priorities. Never NULL (fatalx if libevent fails). */
struct loop *loop_new(void);
/* The loop's event_base; owned by the loop. */
struct event_base *loop_base(struct loop *);
/* Periodic work shares its wake-ups: every periodic timer fires at whole multiples of its
 * period after the loop's epoch (when the first loop was made, less a random part of a
 * minute: nodes started together keep apart), so that work of periods that divide each
 * other (1, 2, 10, 20, 30 s) runs in one loop turn instead of one wake-up each.
 * loop_grid_delay_us: the time from now_us to the next such instant (an instant closer than
 * LOOP_GRID_SLACK_US, or a quarter of the period if that is less, is skipped: a timer that
 * fired a hair early does not come back for the same instant). loop_grid_add: arms the
 * one-shot timer ev for the next instant (periodic work outside loop_every re-arms its timer
 * with it each time it runs). */
#define LOOP_GRID_SLACK_US 2000
int64_t loop_grid_delay_us(int64_t now_us, int64_t period_us);
void    loop_grid_add(struct event *, unsigned period_ms);
/* Registers fn to run every interval_ms, first at the next such instant (loop_grid_delay_us:
 * at most one interval and the slack away). The task is owned by the loop and lives until
 * loop_free. name must outlive the loop (a string literal). */
struct loop_task *loop_every(
    struct loop *, const char *name, unsigned interval_ms, loop_task_fn fn, void *arg);
/* Runs the task on the next loop turn (once), keeping its period. */
void loop_task_kick(struct loop_task *);
/* Stops (or restarts) a task's schedule. */
void loop_task_pause(struct loop_task *, int paused);
void loop_task_stats(const struct loop_task *, struct loop_task_stats *);
/* Calls cb for every task, in registration order. */
void loop_foreach_task(
    struct loop *, void (*cb)(const struct loop_task_stats *, void *), void *arg);
void loop_turn_stats(const struct loop *, struct loop_turn_stats *);
/* Names the part of the current turn that starts now (what: a string literal; NULL ends
 * the named part), so that a long turn says what it spent its time on: the longest part
 * becomes max_task, and a turn of 20 ms or more is logged at -v=2 with it. For the few
 * places whose work grows with the number of pods. No-op outside loop_run. */
void loop_note(const char *what);
/* Work that grows with the number of pods is done in slices, each part giving the loop back
 * (a timer of no delay: the next turn) once its own budget is spent or, shared by all,
 * once the turn has run for LOOP_TURN_BUDGET_US: several such parts in one turn then stop
 * after one item each instead of spending their budgets one after the other. */
#define LOOP_TURN_BUDGET_US 8000
/* Microseconds since the current turn began (its poll returned); 0 outside loop_run. */
int64_t loop_turn_used_us(void);
/* 1 when a part that started at t0 (now_mono_us) should give the loop back: its own
 * budget_us spent, or the turn's LOOP_TURN_BUDGET_US. */
int loop_yield_due(int64_t t0, int64_t budget_us);
/* The upper bound (microseconds) of the bucket holding the q-quantile (0 < q <= 1) of the
 * turns; INT64_MAX when it falls in the last, open bucket; 0 without turns. */
int64_t loop_turn_quantile_us(const struct loop_turn_stats *, double q);
/* The loop's current lag: the largest lateness of any task's last run (microseconds). */
int64_t loop_lag_us(struct loop *);
/* Calls fn on the loop when sig arrives (SIGPIPE is always ignored). */
void loop_on_signal(struct loop *, int sig, loop_signal_fn fn, void *arg);
/* Runs until loop_stop. Returns 0, or -1 if libevent failed. */
int loop_run(struct loop *);
/* Ends loop_run after the current turn: the callbacks already due in it (of the caller's
 * priority) still run, then loop_run returns without polling again. */
void loop_stop(struct loop *);
/* Frees the tasks, signal events and the event_base. NULL is a no-op. */
void loop_free(struct loop *);

#endif
