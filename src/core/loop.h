/* loop.h — the daemon's one event_base, its named periodic tasks and its signals. */
#ifndef KLET_LOOP_H
#define KLET_LOOP_H

#include <stdint.h>

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

/* A new loop with LOOP_NPRI priorities. Never NULL (fatalx if libevent fails). */
struct loop *loop_new(void);
/* The loop's event_base; owned by the loop. */
struct event_base *loop_base(struct loop *);
/* Registers fn to run every interval_ms, first after one interval. The task is owned by the
 * loop and lives until loop_free. name must outlive the loop (a string literal). */
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
/* The loop's current lag: the largest lateness of any task's last run (microseconds). */
int64_t loop_lag_us(struct loop *);
/* Calls fn on the loop when sig arrives (SIGPIPE is always ignored). */
void loop_on_signal(struct loop *, int sig, loop_signal_fn fn, void *arg);
/* Runs until loop_stop. Returns 0, or -1 if libevent failed. */
int loop_run(struct loop *);
/* Ends loop_run after the current turn. */
void loop_stop(struct loop *);
/* Frees the tasks, signal events and the event_base. NULL is a no-op. */
void loop_free(struct loop *);

#endif
